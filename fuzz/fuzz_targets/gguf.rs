//! The GGUF preamble decoded alone, its metadata mapped to KV values, and re-encoded.
//! The body is `hrry::testing::targets::gguf`, shared with `tests/fuzz_regressions.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hrry::testing::targets::gguf(data));

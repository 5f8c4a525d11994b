//! The GGUF preamble decoded alone, its metadata mapped to KV values, and re-encoded.
//! The body is `hrry_testkit::targets::gguf`, shared with `tests/fuzz_regressions.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hrry_testkit::targets::gguf(data));

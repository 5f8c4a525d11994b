//! Structure-aware: an arbitrary model (every element type and layout,
//! quantization schemes, composites, KV types) written by `HrryWriter` validates
//! strictly, reads back equal, and every reader gives the same bytes.
//! The body is `hrry_testkit::targets::writer`, shared with
//! `tests/fuzz_regressions.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hrry_testkit::targets::writer(data));

//! Structure-aware: an arbitrary valid model is written, validates clean, reads back
//! equal through every reader and re-encodes to the same bytes.
//! The body is `hrry_testkit::targets::roundtrip`, shared with
//! `tests/fuzz_regressions.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hrry_testkit::targets::roundtrip(data));

//! The sequential (no-seek) reader over a stream of short reads, both region-end
//! modes; the first byte picks the mode and read size.
//! The body is `hrry_testkit::targets::sequential`, shared with
//! `tests/fuzz_regressions.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hrry_testkit::targets::sequential(data));

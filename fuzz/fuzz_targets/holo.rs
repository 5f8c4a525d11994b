//! `.holo` load with every section decoded, strict and permissive validation and the
//! inspect JSON; run as given and again with the footer hash recomputed so that
//! mutations reach the section decoders.
//! The body is `hrry_testkit::targets::holo`, shared with
//! `tests/fuzz_regressions.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hrry_testkit::targets::holo(data));

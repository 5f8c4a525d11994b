//! Structure-aware: a dense tensor in any dense layout exports (logical
//! row-major) to exactly what element-by-element reading gives.
//! The body is `hrry_testkit::targets::export_layouts`, shared with
//! `tests/fuzz_regressions.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hrry_testkit::targets::export_layouts(data));

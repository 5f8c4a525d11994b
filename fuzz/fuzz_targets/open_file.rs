//! Whole-file open: strict and permissive validation, `HrryFile` with every tensor
//! read, the inspect JSON, and the sequential reader, cross-checked on every file
//! strict validation accepts.
//! The body is `hrry_testkit::targets::open_file`, shared with
//! `tests/fuzz_regressions.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hrry_testkit::targets::open_file(data));

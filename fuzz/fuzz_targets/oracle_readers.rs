//! Whole files: the validator accepts exactly what the full-check reader reads
//! whole, every refusal names a rule the validator reports, and random access,
//! the sequential reader and `stream pack` then the stream reader give the same
//! bytes.
//! The body is `hrry_testkit::targets::oracle_readers`, shared with
//! `tests/fuzz_regressions.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hrry_testkit::targets::oracle_readers(data));

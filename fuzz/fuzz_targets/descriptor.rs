//! A tensor descriptor decoded alone, checked by the descriptor rules, rendered as
//! JSON and re-encoded to the same bytes.
//! The body is `hrry_testkit::targets::descriptor`, shared with
//! `tests/fuzz_regressions.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hrry_testkit::targets::descriptor(data));

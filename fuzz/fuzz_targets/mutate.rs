//! Structure-aware: a valid file written from an arbitrary model, with one
//! targeted mutation (a field, a count, an offset, a flag), through every reader
//! and the reader oracles.
//! The body is `hrry_testkit::targets::mutate`, shared with
//! `tests/fuzz_regressions.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hrry_testkit::targets::mutate(data));

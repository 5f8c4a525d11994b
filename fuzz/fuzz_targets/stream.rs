//! The bare stream reader over short reads (pieces, a caller's slice or skipping,
//! picked by the first byte) and the stream validator; a valid stream must unpack
//! and pack back to the same bytes.
//! The body is `hrry_testkit::targets::stream`, shared with
//! `tests/fuzz_regressions.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hrry_testkit::targets::stream(data));

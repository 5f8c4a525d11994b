//! The server's per-connection state machine fed arbitrary client bytes: every
//! message answered without panicking, replies within the client's maximum message
//! size, push memory within its bound.
//! The body is `hrry_testkit::targets::serve`, shared with
//! `tests/fuzz_regressions.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hrry_testkit::targets::serve(data));

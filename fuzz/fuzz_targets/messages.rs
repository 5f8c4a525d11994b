//! Captured transport conversations: the message decoder and the conversation
//! validator, whole and one message at a time (which must agree); decoded payloads
//! re-encode to the same bytes.
//! The body is `hrry_testkit::targets::messages`, shared with
//! `tests/fuzz_regressions.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hrry_testkit::targets::messages(data));

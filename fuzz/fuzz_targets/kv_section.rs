//! The KV section decoded alone, rendered as JSON and re-encoded to the same bytes.
//! The body is `hrry_testkit::targets::kv_section`, shared with
//! `tests/fuzz_regressions.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hrry_testkit::targets::kv_section(data));

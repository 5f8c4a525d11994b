//! Structure-aware: a sparse or quantized tensor alone, its descriptor and
//! buffers changed, straight into the densifier, the dequantizer and the export;
//! none panics, and on a tensor that validates they succeed and agree.
//! The body is `hrry_testkit::targets::tensor_buffers`, shared with
//! `tests/fuzz_regressions.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hrry_testkit::targets::tensor_buffers(data));

//! Structure-aware: an arbitrary block-quantized tensor (per-block affine, NF4,
//! MXFP) dequantized by the SIMD kernels, the scalar block kernels and the
//! per-element reference, which must agree bit for bit.
//! The body is `hrry_testkit::targets::simd_dequant`, shared with
//! `tests/fuzz_regressions.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hrry_testkit::targets::simd_dequant(data));

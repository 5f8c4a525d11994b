//! Dequantization: the reference against the spec's formulas, every kernel and
//! every thread split against the reference, damaged quantized tensors.
//!
//! One test binary per area, so that the library is linked once for it; one
//! module per concern.

mod common;
mod kernels;
mod reference;
mod robustness;
mod threads;

//! Tensor layouts: dense addressing, sparse layouts, and properties over arbitrary
//! layout fields.
//!
//! One test binary per area, so that the library is linked once for it; one
//! module per concern.

mod dense;
mod properties;
mod sparse;

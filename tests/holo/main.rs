//! `.holo` archives: the loader, the writer, the `HOLO-…` rules, the limits, the CLI on
//! archives and κ-labels (feature `kappa`).
//!
//! One test binary per area, so that the library is linked once for it; one
//! module per concern.

mod api;
mod cli;
mod kappa;
mod limits;
mod robustness;
mod roundtrip;
mod rules;

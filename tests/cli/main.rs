//! The `hrry` binary as a user runs it: one module per group of commands, and the
//! command line at its edges.
//!
//! One test binary per area, so that the library is linked once for it; one
//! module per concern.

mod changing;
mod commands;
mod conformance;
mod dequant;
mod diff;
mod edges;
mod explore;
mod export_bounds;
mod first_use;
mod inspect_schema;
mod report;
mod sarif;
mod serve;
mod stream;

//! The repository agrees with itself: the docs with the code (the feature table
//! with Cargo.toml, the module map with the tree), the module graph with
//! the layers `src/lib.rs` states, `docs/conformance.md` with the rule table.
//!
//! One test binary per area, so that the library is linked once for it; one
//! module per concern.

mod conformance_doc;
mod docs;
mod features;
mod module_graph;
mod module_map;
mod rule_audit;

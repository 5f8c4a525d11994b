//! The repository agrees with itself: the docs with the code, the module graph with
//! the layers `src/lib.rs` states, `docs/conformance.md` with the rule table.
//!
//! One test binary per area, so that the library is linked once for it; one
//! module per concern.

mod conformance_doc;
mod docs;
mod module_graph;
mod rule_audit;

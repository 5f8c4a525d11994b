//! The HRRYFILE library as a program uses it: reading, writing, validating,
//! converting and exporting files, the conformance corpus and the upstream vectors.
//!
//! One test binary per area, so that the library is linked once for it; one
//! module per concern.

mod api;
mod convert;
mod corpus;
mod export;
mod field_requirements;
mod limits;
mod reader_agrees;
mod reader_index;
mod robustness;
mod roundtrip;
mod validate_source;
mod vectors;

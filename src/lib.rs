//! `hrry`: read, write, validate and dequantize Hurray tensor files (`HRRYFILE`) and
//! `.holo` compiled-model archives.
//!
//! Layers, each calling only the ones before it: [`schema`] (the wire), [`validate`]
//! (the rules), [`model`] (typed values), [`file`] (reading and writing containers),
//! [`quant`] (dequantization), [`holo`] (the archive).

pub mod corpus;
pub mod model;
pub mod quant;
pub mod schema;
pub mod validate;

//! `hrry`: read, write, validate and dequantize Hurray tensor files (`HRRYFILE`) and
//! `.holo` compiled-model archives.
//!
//! Layers, each calling only the ones before it: [`schema`] (the wire), [`validate`]
//! (the rules), [`model`] (typed values), [`file`] (reading and writing containers),
//! [`quant`] (dequantization), [`holo`] (the archive).

pub mod convert;
pub mod corpus;
pub mod diagnose;
pub mod file;
pub mod limits;
pub mod model;
pub mod report;
pub mod schema;
pub mod validate;

/// Validates bytes of any supported format, recognised by their magic; returns the
/// format name (`hrryfile`, `holo`) and the report.
pub fn validate_any(bytes: &[u8], mode: validate::Mode) -> (&'static str, validate::Report) {
    validate_any_with(
        bytes,
        &validate::Options {
            mode,
            ..Default::default()
        },
    )
}

/// [`validate_any`] with explicit options (limits).
pub fn validate_any_with(
    bytes: &[u8],
    options: &validate::Options,
) -> (&'static str, validate::Report) {
    ("hrryfile", validate::validate_file(bytes, options))
}

/// The README's examples, compiled and run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

//! The `.holo` compiled-model archive: [`HoloLoader`] (verify, then look up
//! sections, ports, extensions, weights and constants without copying),
//! [`HoloWriter`] (deterministic builder), [`crate::Format::validate_bytes`] with [`crate::Format::Holo`] (every `HOLO-…` rule) and,
//! with the `json` feature, `inspect_json` (the summary `hrry inspect` prints).
//!
//! The wire structures are in [`crate::schema::holo`]; the rules in
//! [`crate::validate::rules::holo`]. `docs/holo.md` describes the layout; its API
//! example is compiled and run as a doc test here.
#![cfg_attr(doctest, doc = include_str!("../../docs/holo.md"))]

#[cfg(feature = "json")]
mod inspect;
mod loader;
mod map;
mod types;
mod walk;
mod writer;

#[cfg(feature = "kappa")]
pub mod kappa;

use std::path::PathBuf;

pub use crate::schema::holo::HOLO_MAGIC;
#[cfg(feature = "json")]
pub use inspect::{describe, inspect_json};
pub use loader::HoloLoader;
pub use map::{map_source, ArchiveMap};
pub use types::{
    hex, Constant, ConstantView, Fingerprint, PortDescriptor, SectionKind, SectionRef,
    ShapeDescriptor, WeightStore, INLINE_CONSTANT_LIMIT,
};
pub use writer::{assemble, HoloWriter};

use crate::source::ReadAt;
use crate::validate::{Judging, Report, Rule};

/// Errors of the `.holo` layer.
#[derive(Debug, thiserror::Error)]
pub enum HoloError {
    /// The archive breaks a rule; the first violation found is named.
    #[error("{} at offset {offset}: {message} ({violations} {} in all)", rule.id, if *.violations == 1 { "violation" } else { "violations" })]
    Invalid {
        /// The rule broken (`HOLO-…`).
        rule: &'static Rule,
        /// Absolute byte offset of the offending field.
        offset: u64,
        /// What was expected and what was found.
        message: String,
        /// How many violations strict validation found.
        violations: usize,
    },
    /// A value given to the writer does not fit its wire field.
    #[error("{field}: {message}")]
    Limit {
        /// The field.
        field: String,
        /// Why it does not fit.
        message: String,
    },
    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// Whether `bytes` starts with the `.holo` magic.
pub fn is_holo(bytes: &[u8]) -> bool {
    bytes.starts_with(&HOLO_MAGIC)
}

/// Checks an archive held in memory against every `HOLO-…` rule `judging`
/// counts.
pub(crate) fn validate(bytes: &[u8], judging: Judging) -> Report {
    match walk::walk_source(&bytes, judging) {
        Ok((report, _)) => report,
        // Reads inside a slice do not fail.
        Err(e) => crate::decode::input::unread(judging, &e),
    }
}

/// [`validate`] for an archive read through `source` (a file, say): the section
/// table and structured sections are read, weight bodies and the footer's BLAKE3
/// are streamed in fixed chunks, so memory does not grow with the archive. A
/// failed read is returned instead.
pub(crate) fn validate_source(source: &dyn ReadAt, judging: Judging) -> std::io::Result<Report> {
    Ok(walk::walk_source(source, judging)?.0)
}

//! The `.holo` compiled-model archive: [`HoloLoader`] (verify, then look up
//! sections, ports, extensions, weights and constants without copying),
//! [`HoloWriter`] (deterministic builder), [`crate::Format::validate_bytes`] with [`crate::Format::Holo`] (every `HOLO-…` rule) and,
//! with the `json` feature, `inspect_json` (the summary `hrry inspect` prints).
//!
//! The wire structures are in [`crate::schema::holo`]; the rules in
//! [`crate::validate::rules::holo`]; the one decoder of archives, which the loader,
//! the validator and [`map_source`] call, is the decode layer's (`src/decode/holo/`).
//! Errors are [`crate::Error`]: a broken rule is [`crate::Error::Invalid`] (a limit
//! exceeded `HF-LIM-001`, naming it), a value the writer cannot encode
//! [`crate::Error::Write`]. `docs/holo.md` describes the layout; its API
//! example is compiled and run as a doc test here.
#![cfg_attr(doctest, doc = include_str!("../../docs/holo.md"))]

#[cfg(feature = "json")]
mod inspect;
mod loader;
mod map;
mod types;
mod writer;

#[cfg(feature = "kappa")]
pub mod kappa;

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

use crate::decode::holo::decode_archive;
use crate::source::ReadAt;
use crate::validate::{Options, Report};

/// Whether `bytes` starts with the `.holo` magic.
pub fn is_holo(bytes: &[u8]) -> bool {
    bytes.starts_with(&HOLO_MAGIC)
}

/// Checks the archive `source` holds against every `HOLO-…` rule (strict mode:
/// spec and hardening rules; permissive: spec rules only), within
/// `options.limits`, reading it in pieces (a file, say): the section
/// table and structured sections are read, weight bodies and the footer's BLAKE3
/// are streamed in fixed chunks, so memory does not grow with the archive. A
/// failed read is returned instead.
pub(crate) fn validate_source(source: &dyn ReadAt, options: &Options) -> std::io::Result<Report> {
    let mut report = options.report();
    decode_archive(source, &options.limits, &mut report)?;
    Ok(report)
}

//! Read, write, validate and dequantize [Hurray] tensor files (`HRRYFILE`) and
//! `.holo` compiled-model archives.
//!
//! `hrry` is written for three jobs:
//!
//! - **Taking in untrusted files.** Opening, validating or dequantizing any bytes
//!   never panics, never reads out of bounds and never allocates more than the input
//!   justifies; every count read from a file is checked against the bytes that
//!   remain, and [`limits::Limits`] caps what a file may ask for. Errors are values
//!   that name the field, the byte offset and the rule broken.
//! - **Checking conformance.** [`validate`] enforces every MUST of the [Hurray
//!   specification] as a rule with a stable ID (`HF-HDR-003`, `TD-BUF-002`,
//!   `QB-SCALE-001`, …) and reports each violation at the absolute offset of the
//!   offending field; [`validate::all_rules`] is the rule table.
//! - **Loading models.** [`HrryFile`] maps a file, finds tensors by name
//!   without touching the rest, and lends their bytes (or typed slices) without
//!   copying; [`quant::Dequantizer`] turns quantized weights into `f32` with SIMD
//!   kernels where the CPU has them.
//!
//! # Reading
//!
//! The readers and the validator share one decode pass: [`HrryFile::open`] refuses a
//! file at the first rule it breaks, naming the rule `hrry validate` reports — by
//! default every `spec` rule decided from metadata, at a cost that does not grow
//! with the tensors' size; [`OpenOptions`] chooses the [`Judging`] (which rules
//! count; how far to read: adding the rules on padding and data bytes, or, for
//! files validated earlier, only the index) and the [`Limits`].
//!
//! ```
//! use hrry::HrryFile;
//! # let bytes = {
//! #     let mut w = hrry::file::HrryWriter::new(Vec::new(), Default::default())?;
//! #     w.add_kv("producer", "example")?;
//! #     w.write_row_major::<f32>("weights", &[2, 2], &[1.0, 2.0, 3.0, 4.0])?;
//! #     w.finish()?
//! # };
//! // HrryFile::open(path) maps a file instead of reading bytes held in memory.
//! let file = HrryFile::from_bytes(&bytes)?;
//! assert_eq!(file.kv_value("producer").and_then(|v| v.as_str()), Some("example"));
//! let weights = file.tensor("weights")?.expect("the file has a tensor `weights`");
//! assert_eq!(weights.descriptor.shape, [2, 2]);
//! // A typed view of a row-major float32 tensor, borrowed from the file.
//! let values: &[f32] = weights.as_slice()?;
//! assert_eq!(values, [1.0, 2.0, 3.0, 4.0]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Writing
//!
//! [`file::HrryWriter`] writes in one forward pass over any [`std::io::Write`]; to a
//! path ([`file::HrryWriter::create`]) it writes a temporary file renamed into place
//! on success.
//!
//! ```
//! use hrry::file::{HrryWriter, WriterOptions};
//!
//! let mut w = HrryWriter::new(Vec::new(), WriterOptions::default())?;
//! w.add_kv("architecture", "mlp")?; // KV values from Rust values
//! w.add_kv("layers", 2)?;
//! w.write_row_major::<f32>("layer0.weight", &[2, 3], &[0.5; 6])?;
//! w.write_row_major::<i64>("positions", &[4], &[0, 1, 2, 3])?;
//! let bytes: Vec<u8> = w.finish()?;
//! assert_eq!(&bytes[..8], b"HRRYFILE");
//! # Ok::<(), hrry::file::Error>(())
//! ```
//!
//! # Validating
//!
//! One entry per kind of input, each recognising the format by its magic:
//! [`validate_bytes`], [`validate_path`] and [`validate_source`] (any
//! [`source::ReadAt`]); the same methods on a [`Format`] validate as that format,
//! and [`Format::validate_reader`] reads a bare stream or a captured conversation
//! from any [`std::io::Read`].
//!
//! ```
//! # let mut bytes = {
//! #     let mut w = hrry::file::HrryWriter::new(Vec::new(), Default::default())?;
//! #     w.write_row_major::<u8>("t", &[1], &[7])?;
//! #     w.finish()?
//! # };
//! let options = hrry::validate::Options::default(); // strict, default limits
//! let (format, report) = hrry::validate_bytes(&bytes, &options);
//! assert_eq!(format, hrry::Format::HrryFile);
//! assert!(report.is_valid());
//!
//! bytes[10] = 0xFF; // a reserved header byte
//! let (_, report) = hrry::validate_bytes(&bytes, &options);
//! let v = &report.violations[0];
//! assert_eq!((v.rule.id, v.offset), ("HF-HDR-003", 10));
//! println!("{v}"); // HF-HDR-003 at offset 10: …
//! # Ok::<(), hrry::file::Error>(())
//! ```
//!
//! # Dequantizing
//!
//! ```
//! use hrry::file::{HrryFile, HrryWriter, WriterOptions};
//! use hrry::quant::{quantize_per_block, Dequantizer, PerBlockOptions};
//!
//! // Quantize 4 × 64 values to int4 in blocks of 32 with float16 scales, and store them.
//! let values: Vec<f32> = (0..256).map(|i| (i as f32 - 128.0) / 64.0).collect();
//! let q = quantize_per_block(&values, &[4, 64], &PerBlockOptions::default())?;
//! let mut w = HrryWriter::new(Vec::new(), WriterOptions::default())?;
//! w.write_tensor("w", &q.descriptor, &q.buffer_slices())?;
//! let bytes = w.finish()?;
//!
//! let file = HrryFile::from_bytes(&bytes)?;
//! let t = file.tensor("w")?.unwrap();
//! let restored = Dequantizer::new(&t.descriptor, &t.buffers)?.to_vec()?;
//! assert_eq!(restored.len(), 256);
//! assert!(values.iter().zip(&restored).all(|(a, b)| (a - b).abs() < 0.2));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Layers
//!
//! Each module calls only the ones listed before it (`tests/repository/module_graph.rs` checks
//! this order, unit-test fixtures aside, and that the library has no import cycle):
//!
//! 1. [`schema`] — the wire: one `binrw` declaration per on-disk structure, which
//!    reads and writes bytes but decides nothing.
//! 2. [`model`] — typed values: [`model::ElementType`], the quantization model
//!    ([`model::quant`]), Rust numbers for element
//!    types ([`model::Element`]), KV values from Rust values, descriptor builders.
//! 3. [`layout`] — where each element of each layout lives; row-major copies of
//!    dense and sparse tensors.
//! 4. [`validate`] — the rule table ([`Rule`], one stable ID each), [`Violation`],
//!    [`Report`] and its [`validate::Verdict`], and what a validation judges
//!    ([`validate::Options`]).
//! 5. [`decode`] — one function per wire structure: bytes to decoded structures,
//!    every broken rule reported into a [`Report`]; the readers and the validator
//!    all decode through it.
//! 6. [`mod@file`] — [`file::HrryFile`] (random access), [`file::SequentialReader`]
//!    (no seeking), [`file::HrryWriter`] (single pass).
//! 7. [`quant`] — dequantization (scalar reference and SIMD kernels) and a per-block
//!    quantizer.
//! 8. [`holo`] — `.holo` archives: [`holo::HoloLoader`], [`holo::HoloWriter`].
//! 9. [`stream`] — Hurray streams (interchange.md): bare streams
//!    ([`stream::StreamReader`], [`stream::StreamWriter`], `pack` / `unpack`) and the
//!    transport messages ([`stream::message`], [`stream::Conversation`]).
//!
//! Beside them: [`limits`] (caps on what a file may ask for), [`source`]
//! (positioned reads of a file in bounded pieces), [`diagnose`] (what bytes that
//! are not a HRRYFILE most likely are), [`export`] and [`npy`] (a tensor as a NumPy
//! array), and, each behind the feature of the same name unless another is said,
//! `convert` (safetensors and GGUF), `remote` (files read over HTTP(S) range
//! requests and from S3), `content` (any model file's tensors and metadata
//! compared and summarised: `hrry diff`, statistics; behind `convert`), `serve`
//! (the tensor server and its client) and `conformance` (the expected reading of a
//! file that `hrry conformance` scores a testee against). The test support (the
//! conformance corpus generator, random models, the fuzz target bodies) is not
//! here: it is the unpublished `hrry-testkit` crate (`testkit/`).
//!
//! # Features
//!
//! | feature   | default | what it adds |
//! |-----------|---------|--------------|
//! | `cli`     | yes     | the `hrry` binary (clap, indicatif, signal-hook); implies `conformance`, `convert`, `json`, `remote` and `serve` |
//! | `conformance` | yes (via `cli`) | `hrry::conformance`: each tensor's expected reading (name, type, shape, SHA-256 of its content) under the conformance protocol (serde_json, sha2) |
//! | `convert` | yes     | `hrry::convert`: safetensors ↔ HRRYFILE, GGUF ↔ HRRYFILE, whole checkpoints in (safetensors, serde_json) |
//! | `json`    | yes (via `cli`) | the JSON summary of a `.holo` archive (`holo::inspect_json`, with its κ-label under `kappa`) (serde_json) |
//! | `kappa`   | no      | `holo::kappa`: κ-labels of archives (uor-addr) |
//! | `remote`  | yes (via `cli`) | `hrry::remote`: a [`source::ReadAt`] over HTTP(S) range requests and S3 (ureq, rustls, rusty-s3) |
//! | `serve`   | yes (via `cli`) | `hrry::serve`: the tensor server of the network transport and its blocking client (tokio) |
//!
//! A library that only reads, validates, dequantizes or writes files depends on
//! `hrry` with `default-features = false`, which builds the core alone: binrw,
//! modular-bitfield, crc32c, foldhash, half, bytemuck, memmap2, blake3, tempfile and
//! thiserror.
//!
//! [Hurray]: https://github.com/pgillet/hurray
//! [Hurray specification]: https://github.com/pgillet/hurray/tree/main/docs/spec

#![warn(missing_docs)]

#[cfg(feature = "conformance")]
pub mod conformance;
#[cfg(feature = "convert")]
pub mod content;
#[cfg(feature = "convert")]
pub mod convert;
pub mod decode;
pub mod diagnose;
mod error;
pub mod export;
pub mod file;
pub mod holo;
pub mod layout;
pub mod limits;
pub mod model;
pub mod npy;
pub mod quant;
#[cfg(feature = "remote")]
pub mod remote;
pub mod schema;
#[cfg(feature = "serve")]
pub mod serve;
pub mod source;
pub mod stream;
pub mod validate;
mod workers;

// `crate::declare_rules!`, for the rule table modules.
pub(crate) use validate::declare_rules;

pub use error::Error;

// What a program that reads, writes or validates files programs against.
pub use file::{HrryFile, HrryWriter, OpenOptions, Tensor};
pub use limits::{Limit, Limits};
pub use validate::{Depth, Judging, Report, Rule, Rules, Violation};

/// The container formats `hrry` understands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// A Hurray tensor file (`HRRYFILE`).
    HrryFile,
    /// A `.holo` compiled-model archive.
    Holo,
    /// A bare Hurray stream: descriptors and data back to back (interchange.md).
    Stream,
    /// A captured transport conversation: framed messages back to back.
    Messages,
}

impl Format {
    /// The name used in JSON output (`hrryfile`, `holo`).
    pub fn name(self) -> &'static str {
        match self {
            Format::HrryFile => "hrryfile",
            Format::Holo => "holo",
            Format::Stream => "stream",
            Format::Messages => "messages",
        }
    }

    /// Recognises a format by its magic, else by the file name's extension, else
    /// says it is a HRRYFILE (whose validator then explains what the bytes look
    /// like): [`Format::recognise`], with a HRRYFILE for `None`. The one detector
    /// of `hrry` (the CLI, Python and C ask it).
    pub fn detect(bytes: &[u8], path: Option<&std::path::Path>) -> Format {
        Self::recognise(bytes, path).unwrap_or(Format::HrryFile)
    }

    /// [`Format::detect`] for a source, reading its first bytes.
    pub fn detect_source(
        source: &dyn source::ReadAt,
        path: Option<&std::path::Path>,
    ) -> std::io::Result<Format> {
        Ok(Self::recognise_source(source, path)?.unwrap_or(Format::HrryFile))
    }

    /// The format `head` (the first bytes of an input, 8 are enough) and `path`'s
    /// name say, or `None` when neither says one:
    ///
    /// 1. by magic: `HRRYFILE` a HRRYFILE; `HOLO` a `.holo` archive; a tensor
    ///    descriptor's magic `HRRY` followed by `version_major` 1 a bare stream
    ///    (which starts with a descriptor). The three cannot be confused: a
    ///    HRRYFILE has `F` where a stream's descriptor has its version, so even a
    ///    HRRYFILE whose magic is damaged past its fourth byte is not a stream.
    /// 2. by extension (any case): `.hrry` and `.hrryfile` a HRRYFILE, `.holo` an
    ///    archive, `.hrrys` a bare stream (an empty stream has no bytes at all),
    ///    `.hrrymsg` a captured conversation (messages carry no magic).
    pub fn recognise(head: &[u8], path: Option<&std::path::Path>) -> Option<Format> {
        if head.starts_with(&schema::FILE_MAGIC) {
            return Some(Format::HrryFile);
        }
        if holo::is_holo(head) {
            return Some(Format::Holo);
        }
        if head.starts_with(&schema::DESCRIPTOR_MAGIC) && head.get(4) == Some(&1) {
            return Some(Format::Stream);
        }
        let extension = path?.extension()?.to_str()?.to_ascii_lowercase();
        match extension.as_str() {
            "hrry" | "hrryfile" => Some(Format::HrryFile),
            "holo" => Some(Format::Holo),
            "hrrys" => Some(Format::Stream),
            "hrrymsg" => Some(Format::Messages),
            _ => None,
        }
    }

    /// [`Format::recognise`] for a source, reading its first bytes.
    pub fn recognise_source(
        source: &dyn source::ReadAt,
        path: Option<&std::path::Path>,
    ) -> std::io::Result<Option<Format>> {
        let mut head = [0u8; 8];
        let n = head
            .len()
            .min(usize::try_from(source.len()).unwrap_or(usize::MAX));
        source.read_at(0, &mut head[..n])?;
        Ok(Self::recognise(&head[..n], path))
    }
}

impl Format {
    /// Validates `bytes` as this format (see [`validate_bytes`], which recognises
    /// the format itself).
    pub fn validate_bytes(self, bytes: &[u8], options: &validate::Options) -> Report {
        // Reading a slice cannot fail; the error arm is for completeness.
        self.validate_source(&bytes, options)
            .unwrap_or_else(|e| decode::unread(options.judging, &e))
    }

    /// Validates `source` as this format, reading only what the rules need: a
    /// HRRYFILE's metadata, descriptors and the few data bytes rules inspect (never
    /// whole dense buffers); a `.holo` archive's sections, its weight bodies and
    /// footer hash streamed in fixed chunks; a bare stream or a conversation front
    /// to back, one tensor or message at a time. The report is the one
    /// [`Format::validate_bytes`] gives for the same bytes; a failed read is
    /// returned instead.
    pub fn validate_source(
        self,
        source: &dyn source::ReadAt,
        options: &validate::Options,
    ) -> std::io::Result<Report> {
        match self {
            Format::HrryFile => decode::file::validate_source(source, options),
            Format::Holo => holo::validate_source(source, options),
            Format::Stream | Format::Messages => self.validate_reader(
                std::io::BufReader::new(source::Sequential::new(source)),
                options,
            ),
        }
    }

    /// Validates a bare stream ([`Format::Stream`]) or a captured conversation
    /// ([`Format::Messages`]) read front to back from `reader`, holding one tensor
    /// or message at a time. A HRRYFILE or `.holo` archive needs random access
    /// ([`Format::validate_source`]): asking for one here is an
    /// [`std::io::ErrorKind::InvalidInput`] error, as is any failed read.
    pub fn validate_reader<R: std::io::Read>(
        self,
        reader: R,
        options: &validate::Options,
    ) -> std::io::Result<Report> {
        match self {
            Format::Stream => stream::validate_stream(reader, options),
            Format::Messages => stream::validate_messages(reader, options),
            Format::HrryFile | Format::Holo => Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "a {} is validated with random access (validate_source), not from a reader",
                    self.name()
                ),
            )),
        }
    }
}

/// Validates `bytes` of any format `hrry` reads, recognised by their magic (a
/// HRRYFILE when nothing matches, so that its validator explains what the bytes
/// look like); returns the format and the report. [`Format::validate_bytes`]
/// validates as a given format.
pub fn validate_bytes(bytes: &[u8], options: &validate::Options) -> (Format, Report) {
    let format = Format::detect(bytes, None);
    (format, format.validate_bytes(bytes, options))
}

/// Validates a source of any format, recognised by its magic, reading only what
/// the rules need ([`Format::validate_source`]); returns the format and the
/// report, or the error of a failed read.
pub fn validate_source(
    source: &dyn source::ReadAt,
    options: &validate::Options,
) -> std::io::Result<(Format, Report)> {
    let format = Format::detect_source(source, None)?;
    Ok((format, format.validate_source(source, options)?))
}

/// Validates the file at `path`, recognised by its magic, else by its extension
/// ([`Format::detect`]), with positioned reads of what the rules need, so memory
/// stays bounded whatever the file's size. Only regular files are read: a
/// directory, pipe or device is an error ([`source::NotRegularFile`]), as is a
/// failed open or read, or a file that changed while it was read
/// ([`source::Changed`]).
pub fn validate_path(
    path: &std::path::Path,
    options: &validate::Options,
) -> std::io::Result<(Format, Report)> {
    let source = source::FileSource::open(path)?;
    let format = Format::detect_source(&source, Some(path))?;
    Ok((format, format.validate_source(&source, options)?))
}

/// The README's examples, compiled and run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

//! `hrry`: read, write, validate and dequantize Hurray tensor files (`HRRYFILE`) and
//! `.holo` compiled-model archives.
//!
//! Layers, each calling only the ones before it: [`schema`] (the wire), [`validate`]
//! (the rules), [`model`] (typed values), [`file`] (reading and writing containers),
//! [`quant`] (dequantization), [`holo`] (the archive).

#[cfg(feature = "convert")]
pub mod convert;
#[cfg(feature = "corpus")]
pub mod corpus;
pub mod diagnose;
pub mod export;
pub mod file;
pub mod holo;
pub mod layout;
pub mod limits;
pub mod model;
pub mod npy;
pub mod quant;
#[cfg(feature = "json")]
pub mod report;
pub mod schema;
#[cfg(feature = "serve")]
pub mod serve;
pub mod stream;
#[cfg(feature = "arbitrary-model")]
pub mod testing;
pub mod validate;

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

    /// Recognises a container by its magic, else by the file name's extension
    /// (`.holo`; `.hrrys` a bare stream, `.hrrymsg` a captured conversation, as in
    /// `corpus/`), else assumes a HRRYFILE (whose validator then explains what the
    /// bytes look like). Streams and conversations are never guessed from their
    /// bytes: a bare descriptor without its extension is diagnosed as not being a
    /// HRRYFILE (`hrry stream validate` reads it as a stream).
    pub fn detect(bytes: &[u8], path: Option<&std::path::Path>) -> Format {
        let extension = |ext: &str| path.is_some_and(|p| p.extension().is_some_and(|e| e == ext));
        if bytes.starts_with(&schema::FILE_MAGIC) {
            Format::HrryFile
        } else if holo::is_holo(bytes) || extension("holo") {
            Format::Holo
        } else if extension("hrrys") {
            Format::Stream
        } else if extension("hrrymsg") {
            Format::Messages
        } else {
            Format::HrryFile
        }
    }
}

/// Validates `bytes` as `format`.
pub fn validate_as(bytes: &[u8], format: Format, options: &validate::Options) -> validate::Report {
    match format {
        Format::HrryFile => validate::validate_file(bytes, options),
        Format::Holo => holo::validate(bytes, options.mode),
        Format::Stream => stream::validate_stream_bytes(bytes, options),
        Format::Messages => stream::validate_messages(
            bytes,
            &stream::ConversationOptions {
                mode: options.mode,
                limits: options.limits,
                ..Default::default()
            },
        ),
    }
}

/// Validates bytes of any supported format, recognised by their magic; returns the
/// format and the report.
pub fn validate_any(bytes: &[u8], mode: validate::Mode) -> (Format, validate::Report) {
    let format = Format::detect(bytes, None);
    let options = validate::Options {
        mode,
        ..Default::default()
    };
    (format, validate_as(bytes, format, &options))
}

/// The README's examples, compiled and run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

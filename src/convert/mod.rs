//! Conversion between HRRYFILE and other model formats: safetensors and GGUF in
//! both directions, whole checkpoints (sharded safetensors, GGUF split files) in.
//!
//! Conversions stream in constant memory: tensor data goes through buffers of a
//! fixed size (or is copied by the kernel, `copy_file_range`), never a whole tensor
//! at a time, so the resident set does not grow with the largest tensor. The output
//! appears under its name only once complete (a temporary file beside it is renamed
//! into place).

pub mod checkpoint;
mod dispatch;
pub(crate) mod ggml;
pub mod gguf;
pub mod gguf_schema;
mod hrry_source;
pub mod listing;
mod output;
mod qblocks;
pub mod safetensors;
mod source;
mod to_gguf;

use std::path::Path;

use crate::file::WriterOptions;
use crate::model::ElementType;

pub use dispatch::{convert, convert_to_output, detect, list};
pub(crate) use source::{FileSource, CHUNK};

/// A file format `convert` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelFormat {
    /// A Hurray tensor file.
    Hrry,
    /// A safetensors file.
    Safetensors,
    /// A GGUF file.
    Gguf,
}

impl ModelFormat {
    /// Lower-case name (`hrryfile`, `safetensors`, `gguf`).
    pub fn name(self) -> &'static str {
        match self {
            ModelFormat::Hrry => "hrryfile",
            ModelFormat::Safetensors => "safetensors",
            ModelFormat::Gguf => "gguf",
        }
    }

    /// The format whose magic starts `prefix` (at least 9 bytes of the file, whose
    /// total length is `file_len`). A safetensors file is recognised by its 8-byte
    /// header length, which must fit the file, followed by `{`.
    pub fn sniff(prefix: &[u8], file_len: u64) -> Option<ModelFormat> {
        if prefix.starts_with(&crate::schema::FILE_MAGIC) {
            return Some(ModelFormat::Hrry);
        }
        if prefix.starts_with(&gguf_schema::GGUF_MAGIC) {
            return Some(ModelFormat::Gguf);
        }
        let n = u64::from_le_bytes(prefix.get(..8)?.try_into().ok()?);
        let fits = n.checked_add(8).is_some_and(|end| end <= file_len);
        (fits && prefix.get(8) == Some(&b'{')).then_some(ModelFormat::Safetensors)
    }

    /// The format a file name's extension names (`.hrry`, `.safetensors`, `.gguf`).
    pub fn from_extension(path: &Path) -> Option<ModelFormat> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "hrry" | "hrryfile" => Some(ModelFormat::Hrry),
            "safetensors" => Some(ModelFormat::Safetensors),
            "gguf" => Some(ModelFormat::Gguf),
            _ => None,
        }
    }

    /// The format `name` names (as [`ModelFormat::name`], or `hrry`).
    pub fn from_name(name: &str) -> Option<ModelFormat> {
        match name.to_ascii_lowercase().as_str() {
            "hrry" | "hrryfile" => Some(ModelFormat::Hrry),
            "safetensors" => Some(ModelFormat::Safetensors),
            "gguf" => Some(ModelFormat::Gguf),
            _ => None,
        }
    }
}

/// The floating-point type that dequantized values are written as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FloatType {
    /// IEEE binary32 (exact).
    #[default]
    F32,
    /// IEEE binary16, rounded to nearest even.
    F16,
    /// bfloat16, rounded to nearest even.
    Bf16,
}

impl FloatType {
    /// The Hurray element type.
    pub fn element_type(self) -> ElementType {
        match self {
            FloatType::F32 => ElementType::Float32,
            FloatType::F16 => ElementType::Float16,
            FloatType::Bf16 => ElementType::Bfloat16,
        }
    }

    /// The type named `name` (`f32`, `f16`, `bf16`, or the spec names).
    pub fn from_name(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "f32" | "float32" => Some(FloatType::F32),
            "f16" | "float16" => Some(FloatType::F16),
            "bf16" | "bfloat16" => Some(FloatType::Bf16),
            _ => None,
        }
    }

    /// Bytes per value.
    pub fn size(self) -> usize {
        match self {
            FloatType::F32 => 4,
            FloatType::F16 | FloatType::Bf16 => 2,
        }
    }

    /// Appends `values` encoded as this type (little-endian) to `out`.
    pub fn encode(self, values: &[f32], out: &mut Vec<u8>) {
        out.reserve(values.len() * self.size());
        match self {
            FloatType::F32 => values
                .iter()
                .for_each(|v| out.extend_from_slice(&v.to_le_bytes())),
            FloatType::F16 => values.iter().for_each(|&v| {
                out.extend_from_slice(&half::f16::from_f32(v).to_bits().to_le_bytes())
            }),
            FloatType::Bf16 => values.iter().for_each(|&v| {
                out.extend_from_slice(&half::bf16::from_f32(v).to_bits().to_le_bytes())
            }),
        }
    }
}

/// Choices for [`convert`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// The output format; `None` takes it from the output's extension.
    pub to: Option<ModelFormat>,
    /// Convert GGUF tensors of quantization types without a Hurray equivalent by
    /// dequantizing them (to `dtype`) instead of refusing.
    pub dequantize_unsupported: bool,
    /// Type of dequantized values: quantized tensors written to safetensors, and GGUF
    /// tensors dequantized under `dequantize_unsupported`.
    pub dtype: FloatType,
    /// Options of the HRRYFILE writer.
    pub writer: WriterOptions,
    /// Convert HRRYFILE tensors that break the hardening rule `TD-BUF-014` (a
    /// dense buffer larger than its elements need, such as bools stored one byte
    /// per element) as readers read them, with a note, instead of refusing them.
    pub permissive: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            to: None,
            dequantize_unsupported: false,
            dtype: FloatType::F32,
            writer: WriterOptions::default(),
            permissive: false,
        }
    }
}

/// Receives progress reports from a conversion (the CLI draws a bar with them).
pub trait Progress {
    /// The conversion will process `total_bytes` bytes of tensor data.
    fn begin(&mut self, _total_bytes: u64) {}
    /// `bytes` more bytes were processed.
    fn advance(&mut self, _bytes: u64) {}
    /// Tensor `name` is next.
    fn tensor(&mut self, _name: &str) {}
}

/// A [`Progress`] that ignores everything.
pub struct NoProgress;

impl Progress for NoProgress {}

/// What a conversion did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// The input format.
    pub from: ModelFormat,
    /// The output format.
    pub to: ModelFormat,
    /// Tensors written.
    pub tensors: usize,
    /// Metadata entries written.
    pub metadata: usize,
    /// Tensors whose values were written as [`Options::dtype`] (dequantized, or
    /// converted under `dequantize_unsupported`): 0 means the option changed
    /// nothing.
    pub as_dtype: usize,
    /// Things the user should know (values dropped or changed on the way).
    pub notes: Vec<String>,
}

pub use crate::error::Error;

// A conversion's failures, as the crate's one [`Error`] (the output file is then
// left untouched): I/O names the file; a malformed safetensors, GGUF or sharded
// checkpoint input, or an input of none of these formats, is [`Error::Format`];
// one tensor that cannot be converted is [`Error::Unsupported`] naming it; a
// directory holding no checkpoint or several, and formats or options that cannot
// be used together, are [`Error::Usage`].

pub(crate) use crate::error::io_at;

/// A malformed safetensors input.
pub(crate) fn safetensors_error(message: impl std::fmt::Display) -> Error {
    Error::Format(format!("safetensors: {message}"))
}

/// A malformed GGUF input, at the absolute offset of the offending field.
pub(crate) fn gguf_error(offset: u64, message: impl std::fmt::Display) -> Error {
    Error::Format(format!("GGUF at offset {offset}: {message}"))
}

/// A sharded checkpoint's index or split files, malformed or inconsistent: `path`
/// is the index, split file or directory at fault.
pub(crate) fn checkpoint_at(
    path: impl AsRef<std::path::Path>,
    message: impl std::fmt::Display,
) -> Error {
    Error::Format(format!("{}: {message}", path.as_ref().display()))
}

/// A directory given as the input holding no checkpoint, or several: the user
/// must name the file.
pub(crate) fn no_checkpoint(
    path: impl AsRef<std::path::Path>,
    message: impl std::fmt::Display,
) -> Error {
    Error::Usage(format!("{}: {message}", path.as_ref().display()))
}

impl Error {
    /// One tensor that cannot be converted: why, and what to do about it.
    pub(crate) fn tensor(name: &str, message: impl std::fmt::Display) -> Self {
        Error::Unsupported(format!("tensor {name:?}: {message}"))
    }
}

/// Packs one byte per boolean (non-zero = true) into Hurray's LSB-first bits.
pub(crate) fn pack_bools(bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; bytes.len().div_ceil(8)];
    for (i, &b) in bytes.iter().enumerate() {
        if b != 0 {
            out[i / 8] |= 1 << (i % 8);
        }
    }
    out
}

/// Unpacks `n` LSB-first booleans into one byte each (0 or 1).
pub(crate) fn unpack_bools(bits: &[u8], n: usize) -> Vec<u8> {
    (0..n)
        .map(|i| bits.get(i / 8).map_or(0, |b| (b >> (i % 8)) & 1))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffing() {
        assert_eq!(
            ModelFormat::sniff(b"HRRYFILE\x01\x00", 100),
            Some(ModelFormat::Hrry)
        );
        assert_eq!(
            ModelFormat::sniff(b"GGUF\x03\x00\x00\x00", 100),
            Some(ModelFormat::Gguf)
        );
        let mut st = 2u64.to_le_bytes().to_vec();
        st.extend_from_slice(b"{}");
        assert_eq!(ModelFormat::sniff(&st, 10), Some(ModelFormat::Safetensors));
        assert_eq!(ModelFormat::sniff(&st, 9), None);
        assert_eq!(ModelFormat::sniff(b"PK\x03\x04 junk", 100), None);
        assert_eq!(ModelFormat::sniff(b"", 0), None);
        assert_eq!(
            ModelFormat::from_extension(Path::new("a/b.SafeTensors")),
            Some(ModelFormat::Safetensors)
        );
        assert_eq!(ModelFormat::from_extension(Path::new("x.bin")), None);
    }

    #[test]
    fn bools_pack_lsb_first() {
        let packed = pack_bools(&[1, 0, 1, 1, 0, 0, 0, 0, 7]);
        assert_eq!(packed, vec![0x0D, 0x01]);
        assert_eq!(unpack_bools(&packed, 9), vec![1, 0, 1, 1, 0, 0, 0, 0, 1]);
    }

    #[test]
    fn float_encoding_rounds_to_nearest() {
        let mut out = Vec::new();
        FloatType::F16.encode(&[1.0, -2.5], &mut out);
        assert_eq!(out, vec![0x00, 0x3C, 0x00, 0xC1]);
        out.clear();
        FloatType::Bf16.encode(&[1.0], &mut out);
        assert_eq!(out, vec![0x80, 0x3F]);
        out.clear();
        FloatType::F32.encode(&[1.0], &mut out);
        assert_eq!(out, 1.0f32.to_le_bytes());
    }
}

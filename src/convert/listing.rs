//! What a safetensors or GGUF file holds, read as `convert` reads it (header,
//! metadata, tensor table), without converting: what `hrry inspect` shows of a model
//! before it is converted. [`super::list`] reads one.

use super::ModelFormat;
use crate::schema::KvValue;

/// The header, metadata and tensors of a safetensors or GGUF file.
#[derive(Clone, Debug, PartialEq)]
pub struct Listing {
    /// The file's format (safetensors or GGUF).
    pub format: ModelFormat,
    /// The file's size in bytes.
    pub file_len: u64,
    /// The GGUF version (2 or 3); `None` for safetensors.
    pub version: Option<u32>,
    /// Where tensor data starts: after safetensors' JSON header, or GGUF's aligned
    /// data section.
    pub data_start: u64,
    /// GGUF's data alignment (`general.alignment`, 32 when absent).
    pub alignment: Option<u64>,
    /// The metadata in file order, each value as `convert` stores it in a HRRYFILE.
    pub metadata: Vec<ListedKv>,
    /// The tensors in file order.
    pub tensors: Vec<ListedTensor>,
}

/// One metadata entry of a [`Listing`].
#[derive(Clone, Debug, PartialEq)]
pub struct ListedKv {
    /// The key.
    pub key: String,
    /// The value, as `convert` stores it (GGUF integers widened to 64 bits).
    pub value: KvValue,
    /// The type the source file gives it (`string` for safetensors; GGUF's
    /// `uint32`, `array<string>`, …).
    pub source_type: String,
}

/// One tensor of a [`Listing`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedTensor {
    /// The name (invalid UTF-8 replaced).
    pub name: String,
    /// The source's type name (`F32`, `BF16`, `Q4_K`, …; `code N` for a GGUF type
    /// code hrry does not know).
    pub dtype: String,
    /// The shape, row-major, slowest axis first (GGUF's `ne` reversed): the
    /// HRRYFILE shape the tensor converts to.
    pub shape: Vec<u64>,
    /// Absolute offset of the tensor's data in the file.
    pub offset: u64,
    /// Bytes of data; `None` when the type and shape do not give a size.
    pub bytes: Option<u64>,
    /// What `hrry convert` makes of it: a Hurray element type, a quantization, or
    /// why it is refused.
    pub converts_to: String,
}

//! The expected reading of a file: each tensor's name, element type, shape and the
//! SHA-256 of its content, as the conformance testee protocol defines them
//! (`docs/conformance-protocol.md`). The bundled manifest carries these for every
//! valid HRRYFILE, and `hrry conformance` compares a testee's `read` answers with them.
//!
//! The content of a tensor is its elements in logical row-major order, each in its
//! stored encoding: the bytes of the one data buffer a dense row-major tensor of that
//! element type and shape holds (sub-byte types packed LSB-first, unused bits zero,
//! little-endian). For a quantized tensor that is its stored codes; its dequantized
//! float32 values, row-major and little-endian, have a hash of their own. A composite
//! head (whose values are its members') and a block-paged tensor (whose token order
//! is not stored) have no content hash.

pub mod explore;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::file::{Error, HrryFile};
use crate::layout::logical_row_major;
use crate::model::ElementType;
use crate::schema::{TensorDescriptor, LAYOUT_BLOCK_PAGED, LAYOUT_COMPOSITE};

/// Largest tensor content hashed, in bytes (the corpus files are small; a larger
/// tensor gets no hash rather than an allocation out of proportion).
pub const MAX_CONTENT_BYTES: u64 = 256 << 20;

/// What reading one tensor must give.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorReading {
    /// The tensor's name.
    pub name: String,
    /// Its element type's name, as `hrry inspect --json` prints it (`unknown` for a
    /// tag this reader does not know).
    pub dtype: String,
    /// Its shape.
    pub shape: Vec<u64>,
    /// SHA-256 of its content (lowercase hex), when it has one.
    pub sha256: Option<String>,
    /// SHA-256 of its dequantized float32 values, for a quantized tensor.
    pub dequantized_sha256: Option<String>,
}

impl TensorReading {
    /// The reading as the protocol's JSON object (`name`, `dtype`, `shape`, and the
    /// hashes it has).
    pub fn to_json(&self) -> Value {
        let mut v = json!({"name": self.name, "dtype": self.dtype, "shape": self.shape});
        if let Some(h) = &self.sha256 {
            v["sha256"] = json!(h);
        }
        if let Some(h) = &self.dequantized_sha256 {
            v["dequantized_sha256"] = json!(h);
        }
        v
    }
}

/// The reading of every tensor of `file`, in index order.
pub fn read_tensors(file: &HrryFile<'_>) -> Result<Vec<TensorReading>, Error> {
    file.entries()
        .map(|entry| {
            let t = file.tensor_at(entry)?;
            Ok(reading_of(entry.name(), t.descriptor, &t.buffers))
        })
        .collect()
}

/// The reading of one tensor given as its descriptor and buffers.
pub fn reading_of(name: &str, desc: &TensorDescriptor, buffers: &[&[u8]]) -> TensorReading {
    let hashed = desc.layout_tag != LAYOUT_COMPOSITE && desc.layout_tag != LAYOUT_BLOCK_PAGED;
    let sha256 = if hashed {
        content(desc, buffers).map(|bytes| sha256_hex(&bytes))
    } else {
        None
    };
    let dequantized_sha256 = if hashed && desc.quantization.is_some() {
        dequantized(desc, buffers).map(|bytes| sha256_hex(&bytes))
    } else {
        None
    };
    TensorReading {
        name: name.to_string(),
        dtype: ElementType::from_tag(desc.type_tag)
            .map_or("unknown", |t| t.name())
            .to_string(),
        shape: desc.shape.clone(),
        sha256,
        dequantized_sha256,
    }
}

/// The content of a tensor (see the module documentation), or `None` when this
/// reader cannot lay it out in row-major order.
pub fn content(desc: &TensorDescriptor, buffers: &[&[u8]]) -> Option<Vec<u8>> {
    logical_row_major(desc, buffers, MAX_CONTENT_BYTES).ok()
}

fn dequantized(desc: &TensorDescriptor, buffers: &[&[u8]]) -> Option<Vec<u8>> {
    let count = crate::layout::checked_count(&desc.shape).ok()?;
    if count.checked_mul(4)? > MAX_CONTENT_BYTES {
        return None;
    }
    let values = crate::quant::dequantize(desc, buffers).ok()?;
    Some(values.iter().flat_map(|v| v.to_le_bytes()).collect())
}

/// SHA-256 of `bytes` as 64 lowercase hex digits.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

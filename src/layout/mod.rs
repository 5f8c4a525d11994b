//! Addressing and logical order for every layout (memory-layout.md, layouts/*.md).
//!
//! Pure functions over a descriptor and its borrowed buffers: where a logical index
//! lives in buffer 0 of a dense layout ([`addressing`], [`dense`]), how a sparse
//! tensor expands to its dense row-major form ([`sparse`]), and how a partition
//! composite assembles into its parent ([`composite`]). Every result is packed
//! row-major bytes of the tensor's element type, with sub-byte elements packed
//! LSB-first as element-types.md prescribes.
//!
//! Nothing here trusts the descriptor: every offset is computed with checked
//! arithmetic and every read is bounded by the buffer it reads from, so invalid
//! fields give a [`LayoutError`], never a panic or an out-of-bounds read.
//!
//! `docs/layouts.md` describes the addressing, the rules and the export; its example
//! is compiled and run as a doc test here.
#![cfg_attr(doctest, doc = include_str!("../../docs/layouts.md"))]

pub mod addressing;
pub mod bits;
pub mod composite;
pub mod dense;
pub mod sparse;

pub use addressing::{hilbert_index, morton_code, DenseMap};
pub use dense::{from_row_major, required_buffer_size, to_row_major, write_row_major, DenseView};
pub use sparse::densify;

use crate::schema::TensorDescriptor;

/// Why a layout operation could not be carried out.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum LayoutError {
    /// The layout tag is not one this operation handles.
    #[error("layout tag {tag:#04x} is not supported by this operation")]
    Unsupported {
        /// The descriptor's `layout_tag`.
        tag: u8,
    },
    /// The element type has no known bit width (unassigned tag, or an extension
    /// type without a usable extension section).
    #[error("element type tag {tag:#04x} has no known bit width")]
    ElementWidth {
        /// The descriptor's `type_tag`.
        tag: u8,
    },
    /// A layout field makes the mapping undefined.
    #[error("invalid layout field {field}: {detail}")]
    Field {
        /// The field's spec name.
        field: &'static str,
        /// Expected and found value.
        detail: String,
    },
    /// A size or offset does not fit the integer types used for addressing.
    #[error("{what} overflows")]
    Overflow {
        /// What was being computed.
        what: &'static str,
    },
    /// A buffer the layout needs is missing from the buffer table or the slice list.
    #[error("buffer {index} is missing")]
    MissingBuffer {
        /// Buffer table index.
        index: usize,
    },
    /// An element or entry lies outside its buffer.
    #[error("buffer {buffer}: bit {bit} (width {width}) lies outside its {len} bytes")]
    OutOfBounds {
        /// Buffer table index.
        buffer: usize,
        /// Bit address of the element (may be negative for reversed strides).
        bit: i128,
        /// Element width in bits.
        width: u32,
        /// Buffer length in bytes.
        len: usize,
    },
    /// Stored sparse structure is inconsistent (pointer, coordinate, count).
    #[error("buffer {buffer} entry {entry}: {detail}")]
    Structure {
        /// Buffer table index holding the offending entry.
        buffer: usize,
        /// Entry index in that buffer.
        entry: u64,
        /// What is wrong.
        detail: String,
    },
    /// The result would exceed the caller's size limit.
    #[error("output of {needed} bytes exceeds the limit of {limit} bytes")]
    TooLarge {
        /// Bytes the output needs.
        needed: u128,
        /// The caller's limit.
        limit: u64,
    },
    /// Writing the output failed.
    #[error("write failed: {0}")]
    Io(String),
}

impl From<std::io::Error> for LayoutError {
    fn from(e: std::io::Error) -> Self {
        LayoutError::Io(e.to_string())
    }
}

/// Bits per stored element of `desc`: the built-in width of `type_tag`, or for an
/// extension type the `bit_width` of its extension section when it packs like a
/// built-in type (1, 2, 4 bits, or a whole number of bytes up to 128 bits).
pub fn element_bits(desc: &TensorDescriptor) -> Result<u32, LayoutError> {
    let width = crate::validate::descriptor::element_bits(desc)
        .ok_or(LayoutError::ElementWidth { tag: desc.type_tag })?;
    match width {
        1 | 2 | 4 | 6 => Ok(width),
        w if w % 8 == 0 && (8..=128).contains(&w) => Ok(w),
        _ => Err(LayoutError::ElementWidth { tag: desc.type_tag }),
    }
}

/// How many buffers the layout of `desc` itself uses, before any quantization
/// parameter buffers: 1 for dense layouts, 2 for COO, 3 for CSR, CSC and
/// block-paged, `2 * rank + 1` for CSF, 0 for a composite head. `None` for an
/// extension layout, whose buffers this reader does not know.
pub fn own_buffer_count(desc: &TensorDescriptor) -> Option<u64> {
    use crate::schema::{
        LAYOUT_BLOCK_PAGED, LAYOUT_COMPOSITE, LAYOUT_COO, LAYOUT_CSC, LAYOUT_CSF, LAYOUT_CSR,
    };
    match desc.layout_tag {
        t if dense::is_dense(t) => Some(1),
        LAYOUT_COO => Some(2),
        LAYOUT_CSR | LAYOUT_CSC | LAYOUT_BLOCK_PAGED => Some(3),
        LAYOUT_CSF => Some(2 * desc.shape.len() as u64 + 1),
        LAYOUT_COMPOSITE => Some(0),
        _ => None,
    }
}

/// Product of `shape` as `u64`, or an overflow error.
pub(crate) fn checked_count(shape: &[u64]) -> Result<u64, LayoutError> {
    crate::model::element_count(shape).ok_or(LayoutError::Overflow {
        what: "element count",
    })
}

/// A dense or sparse tensor as packed row-major bytes of its element type (at most
/// `limit` bytes): dense layouts are read through their addressing, sparse ones
/// densified.
pub fn logical_row_major(
    desc: &TensorDescriptor,
    buffers: &[&[u8]],
    limit: u64,
) -> Result<Vec<u8>, LayoutError> {
    if sparse::is_sparse(desc.layout_tag) {
        densify(desc, buffers, limit)
    } else {
        to_row_major(desc, buffers, limit)
    }
}

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
//! fields give an [`Error`], never a panic or an out-of-bounds read.
//!
//! `docs/layouts.md` describes the addressing, the rules and the export; its example
//! is compiled and run as a doc test here.
#![cfg_attr(doctest, doc = include_str!("../../docs/layouts.md"))]

pub mod addressing;
#[doc(hidden)]
pub mod bits;
pub mod composite;
pub mod dense;
mod element;
pub(crate) mod error;
pub mod sparse;

pub use addressing::{hilbert_index, morton_code, DenseMap};
pub use dense::{from_row_major, required_buffer_size, stream_row_major, to_row_major, DenseView};
pub(crate) use element::checked_count;
pub use element::element_bits;

pub use sparse::densify;

use crate::error::Error;
use crate::schema::TensorDescriptor;

/// A dense or sparse tensor as packed row-major bytes of its element type (at most
/// `limit` bytes): dense layouts are read through their addressing, sparse ones
/// densified.
pub fn logical_row_major(
    desc: &TensorDescriptor,
    buffers: &[&[u8]],
    limit: u64,
) -> Result<Vec<u8>, Error> {
    if sparse::is_sparse(desc.layout_tag) {
        densify(desc, buffers, limit)
    } else {
        to_row_major(desc, buffers, limit)
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

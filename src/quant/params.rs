//! What the dequantization paths share: the validated codes and parameters of a
//! tensor ([`StoredTensor`], read by the reference) and the block-row view the
//! block kernels run on ([`BlockRows`]).

use crate::decode::quant::Addressing;
use crate::model::element_type::ElementType;
use crate::model::quant::BlockGeometry;

/// What a block kernel computes for each element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BlockKind {
    /// Per-block affine `s * (q - z)` on integer storage.
    Affine {
        /// Storage type (int8, uint8, int4, uint4, int2, uint2).
        storage: ElementType,
        /// `scale_type_tag`.
        scale_type: u8,
    },
    /// NF4 `s * nf4[q]`.
    Nf4,
    /// MXFP `2^(e - 127) * value(q)`.
    Mxfp {
        /// Storage type.
        storage: ElementType,
    },
}

/// Scale and zero-point parameters, borrowed from the tensor's buffers.
#[derive(Clone, Debug)]
pub(crate) enum Params<'a> {
    /// Inline scale and zero point.
    PerTensor { scale: f32, zero_point: i64 },
    /// One float32 scale (and int32 zero point) per index along `axis`.
    PerChannel {
        axis: usize,
        scales: &'a [u8],
        zero_points: Option<&'a [u8]>,
    },
    /// Per-block affine on a block-paged tensor: one scale (and zero point) per
    /// page slot, the slot being the pool's index along axis 0.
    PerSlot {
        /// `scale_type_tag`.
        scale_type: u8,
        scales: &'a [u8],
        /// Empty when symmetric.
        zero_points: &'a [u8],
    },
    /// One scale (and zero point) per block.
    Blocks {
        kind: BlockKind,
        geometry: BlockGeometry,
        scales: &'a [u8],
        /// Empty when symmetric.
        zero_points: &'a [u8],
    },
}

/// A run of whole rows for a block kernel: blocks along the last axis of a row-major
/// tensor, each starting on a byte boundary, so block `b` is bytes
/// `[b * block_bytes, (b + 1) * block_bytes)` of `data`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BlockRows<'a> {
    pub kind: BlockKind,
    pub block_size: usize,
    pub row_len: usize,
    pub blocks_per_row: usize,
    pub block_bytes: usize,
    /// Storage bytes from the first row's first block.
    pub data: &'a [u8],
    /// Scale bytes from the first row's first block.
    pub scales: &'a [u8],
    /// Zero-point bytes from the first row's first block; empty when symmetric.
    pub zero_points: &'a [u8],
}

/// The stored codes and parameters of a validated quantized tensor: what the
/// per-element reference reads.
#[derive(Clone, Debug)]
pub(crate) struct StoredTensor<'a> {
    /// The logical shape.
    pub shape: Vec<u64>,
    /// The storage element type.
    pub storage: ElementType,
    /// Where each logical element's code lies in `data`.
    pub addressing: Addressing,
    /// Buffer 0.
    pub data: &'a [u8],
    /// Scales and zero points.
    pub params: Params<'a>,
}

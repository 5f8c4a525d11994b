//! The quantization model: which storage types each scheme accepts, the integer
//! range of a storage type, the geometry of per-block scales, and how stored
//! elements and scales are read. The validator, the dequantizer, export and
//! conversion share it.

use crate::model::element_type::ElementType;

/// Storage types per-tensor and per-channel affine accept.
pub const AFFINE_STORAGE: &[ElementType] = &[
    ElementType::Int8,
    ElementType::Uint8,
    ElementType::Int16,
    ElementType::Uint16,
    ElementType::Int32,
    ElementType::Uint32,
    ElementType::Int4,
    ElementType::Uint4,
    ElementType::Int2,
    ElementType::Uint2,
];
/// Storage types per-block affine accepts.
pub const PER_BLOCK_STORAGE: &[ElementType] = &[
    ElementType::Int8,
    ElementType::Uint8,
    ElementType::Int4,
    ElementType::Uint4,
    ElementType::Int2,
    ElementType::Uint2,
];
/// Storage types NF4 accepts.
pub const NF4_STORAGE: &[ElementType] = &[ElementType::Uint4];
/// Storage types MXFP accepts.
pub const MXFP_STORAGE: &[ElementType] = &[
    ElementType::Float8E4m3,
    ElementType::Float8E5m2,
    ElementType::Float4E2m1,
    ElementType::Float6E2m3,
    ElementType::Float6E3m2,
    ElementType::Int8,
    ElementType::Int4,
];

/// The representable range of an integer storage type, `None` for other types.
#[doc(hidden)]
pub fn int_range(ty: ElementType) -> Option<(i64, i64)> {
    Some(match ty {
        ElementType::Int2 => (-2, 1),
        ElementType::Uint2 => (0, 3),
        ElementType::Int4 => (-8, 7),
        ElementType::Uint4 => (0, 15),
        ElementType::Int8 => (-128, 127),
        ElementType::Uint8 => (0, 255),
        ElementType::Int16 => (-32768, 32767),
        ElementType::Uint16 => (0, 65535),
        ElementType::Int32 => (i32::MIN.into(), i32::MAX.into()),
        ElementType::Uint32 => (0, u32::MAX.into()),
        _ => return None,
    })
}

/// Bytes of one scale of per-block affine `scale_type_tag`, `None` for other tags.
pub fn block_scale_size(scale_type_tag: u8) -> Option<u64> {
    match scale_type_tag {
        0x01 | 0x02 => Some(2),
        0x03 => Some(4),
        _ => None,
    }
}

/// Blocks along one axis (quantization/per-block-affine.md § Block Layout).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockGeometry {
    /// The quantized axis.
    pub axis: usize,
    /// `S = shape[axis]`.
    pub axis_len: u64,
    /// `K = block_size`.
    pub block_size: u64,
    /// `ceil(S / K)`.
    pub blocks_per_axis: u64,
    /// Product of the other dimensions.
    pub outer: u64,
    /// `blocks_per_axis * outer`.
    pub num_blocks: u64,
    /// `blocks_per_axis * K`: the axis length the data buffer is laid out for.
    pub padded_axis_len: u64,
}

impl BlockGeometry {
    /// The geometry of `shape` cut into blocks of `block_size` along `axis`; `None`
    /// when `axis` is out of range, `block_size` is 0, a dimension is the dynamic
    /// sentinel, or a count overflows.
    pub fn new(shape: &[u64], axis: usize, block_size: u64) -> Option<Self> {
        let axis_len = *shape.get(axis)?;
        if block_size == 0 || axis_len == u64::MAX {
            return None;
        }
        let mut outer = 1u64;
        for (d, &n) in shape.iter().enumerate() {
            if d != axis {
                if n == u64::MAX {
                    return None;
                }
                outer = outer.checked_mul(n)?;
            }
        }
        let blocks_per_axis = axis_len.div_ceil(block_size);
        Some(BlockGeometry {
            axis,
            axis_len,
            block_size,
            blocks_per_axis,
            outer,
            num_blocks: blocks_per_axis.checked_mul(outer)?,
            padded_axis_len: blocks_per_axis.checked_mul(block_size)?,
        })
    }

    /// The shape the data buffer is laid out for (`shape[axis]` padded).
    pub fn storage_shape(&self, shape: &[u64]) -> Vec<u64> {
        let mut s = shape.to_vec();
        if let Some(d) = s.get_mut(self.axis) {
            *d = self.padded_axis_len;
        }
        s
    }
}

/// The `bit_width` bits (1–32, LSB-first) starting at `bit_addr` of `data`, or `None`
/// when they are not all inside `data`.
pub fn element_bits(data: &[u8], bit_addr: u64, bit_width: u32) -> Option<u32> {
    let first = usize::try_from(bit_addr / 8).ok()?;
    let shift = (bit_addr % 8) as u32;
    let span = (shift + bit_width).div_ceil(8) as usize;
    let bytes = data.get(first..first.checked_add(span)?)?;
    let mut acc = 0u64;
    for (i, &b) in bytes.iter().enumerate() {
        acc |= u64::from(b) << (8 * i);
    }
    Some(((acc >> shift) & ((1u64 << bit_width) - 1)) as u32)
}

/// A per-block affine scale of `scale_type_tag` (1 float16, 2 bfloat16, 3 float32)
/// from its little-endian bytes, widened losslessly to float32.
#[inline]
pub fn widen_scale(scale_type_tag: u8, bytes: &[u8]) -> f32 {
    match (scale_type_tag, bytes) {
        (0x01, [a, b, ..]) => half::f16::from_bits(u16::from_le_bytes([*a, *b])).to_f32(),
        (0x02, [a, b, ..]) => f32::from_bits(u32::from(u16::from_le_bytes([*a, *b])) << 16),
        (0x03, [a, b, c, d, ..]) => f32::from_le_bytes([*a, *b, *c, *d]),
        _ => f32::NAN,
    }
}

//! Portable dequantization: the per-element reference that follows the spec
//! formulas literally for every scheme, layout and axis, and the scalar block-row
//! kernel used where no SIMD kernel applies (and as the SIMD kernels' tail code).

use super::element::{
    float_value, int_value, FLOAT4_E2M1_LEVELS, FLOAT8_E4M3_TABLE, FLOAT8_E5M2_TABLE, NF4_LEVELS,
};
use super::params::{BlockKind, BlockRows, Params, StoredTensor};
use crate::model::element_type::ElementType;
use crate::model::quant::{block_scale_size, element_bits, widen_scale};

/// `s * (q - z)`: the difference exact in 64 bits, one conversion to float32, one
/// float32 multiplication (docs/interpretations.md § Quantization).
#[inline(always)]
pub(crate) fn affine(q: i64, z: i64, s: f32) -> f32 {
    (q - z) as f32 * s
}

/// The float32 at index `i` of a little-endian float32 array.
#[inline(always)]
pub(crate) fn f32_at(bytes: &[u8], i: usize) -> f32 {
    let c = &bytes[4 * i..4 * i + 4];
    f32::from_le_bytes([c[0], c[1], c[2], c[3]])
}

/// The int32 at index `i` of a little-endian int32 array, widened.
#[inline(always)]
pub(crate) fn i32_at(bytes: &[u8], i: usize) -> i64 {
    let c = &bytes[4 * i..4 * i + 4];
    i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
}

/// The scale of block `b` of a block-row job, widened to float32.
#[inline(always)]
pub(crate) fn block_scale(kind: BlockKind, scales: &[u8], b: usize) -> f32 {
    match kind {
        BlockKind::Affine { scale_type, .. } => {
            let size = if scale_type == 0x03 { 4 } else { 2 };
            widen_scale(scale_type, &scales[size * b..size * b + size])
        }
        BlockKind::Nf4 => f32_at(scales, b),
        BlockKind::Mxfp { .. } => super::element::float8_e8m0(scales[b]),
    }
}

/// The value of element `i` of one block (starting at a byte boundary) before
/// scaling: `q - z` for affine blocks, the level or element value otherwise.
#[inline(always)]
pub(crate) fn block_element(kind: BlockKind, block: &[u8], i: usize, z: i64, s: f32) -> f32 {
    match kind {
        BlockKind::Affine { storage, .. } => affine(int_code(storage, block, i), z, s),
        BlockKind::Nf4 => s * NF4_LEVELS[nibble(block, i) as usize],
        BlockKind::Mxfp { storage } => {
            let width = storage.bit_width().unwrap_or(8);
            let code = element_bits(block, (i * width as usize) as u64, width).unwrap_or(0);
            match float_value(storage, code) {
                Some(v) => s * v,
                None => s * int_value(storage, code).unwrap_or(0) as f32,
            }
        }
    }
}

/// The 4-bit code at index `i` (LSB-first packing).
#[inline(always)]
fn nibble(block: &[u8], i: usize) -> u32 {
    u32::from(block[i / 2] >> (4 * (i % 2)) & 0x0F)
}

/// The integer at index `i` of a block of `storage` codes.
#[inline(always)]
fn int_code(storage: ElementType, block: &[u8], i: usize) -> i64 {
    match storage {
        ElementType::Int8 => i64::from(block[i] as i8),
        ElementType::Uint8 => i64::from(block[i]),
        ElementType::Int4 => i64::from(((block[i / 2] >> (4 * (i % 2))) << 4) as i8 >> 4),
        ElementType::Uint4 => i64::from(nibble(block, i)),
        ElementType::Int2 => i64::from(((block[i / 4] >> (2 * (i % 4))) << 6) as i8 >> 6),
        ElementType::Uint2 => i64::from(block[i / 4] >> (2 * (i % 4)) & 0x03),
        _ => 0,
    }
}

/// Dequantizes whole rows of a block-row job: `out.len() / job.row_len` rows.
pub(crate) fn block_rows(job: &BlockRows<'_>, out: &mut [f32]) {
    if job.row_len == 0 {
        return;
    }
    for (r, row) in out.chunks_exact_mut(job.row_len).enumerate() {
        for j in 0..job.blocks_per_row {
            let b = r * job.blocks_per_row + j;
            let start = j * job.block_size;
            let valid = job.block_size.min(job.row_len - start);
            block(job, b, &mut row[start..start + valid]);
        }
    }
}

/// Dequantizes the first `out.len()` elements of block `b` of a block-row job.
#[inline(always)]
pub(crate) fn block(job: &BlockRows<'_>, b: usize, out: &mut [f32]) {
    let kind = job.kind;
    let s = block_scale(kind, job.scales, b);
    let z = if job.zero_points.is_empty() {
        0
    } else {
        i32_at(job.zero_points, b)
    };
    let data = &job.data[b * job.block_bytes..(b + 1) * job.block_bytes];
    // One loop per storage type so each compiles to a tight loop.
    match kind {
        BlockKind::Affine { storage, .. } => match storage {
            ElementType::Int8 => fill(out, |i| affine(i64::from(data[i] as i8), z, s)),
            ElementType::Uint8 => fill(out, |i| affine(i64::from(data[i]), z, s)),
            ElementType::Int4 => fill(out, |i| affine(int_code(ElementType::Int4, data, i), z, s)),
            ElementType::Uint4 => fill(out, |i| affine(i64::from(nibble(data, i)), z, s)),
            _ => fill(out, |i| affine(int_code(storage, data, i), z, s)),
        },
        BlockKind::Nf4 => fill(out, |i| s * NF4_LEVELS[nibble(data, i) as usize]),
        BlockKind::Mxfp { storage } => match storage {
            ElementType::Float4E2m1 => {
                fill(out, |i| s * FLOAT4_E2M1_LEVELS[nibble(data, i) as usize])
            }
            ElementType::Float8E4m3 => fill(out, |i| s * FLOAT8_E4M3_TABLE[data[i] as usize]),
            ElementType::Float8E5m2 => fill(out, |i| s * FLOAT8_E5M2_TABLE[data[i] as usize]),
            ElementType::Int8 => fill(out, |i| s * f32::from(data[i] as i8)),
            ElementType::Int4 => fill(out, |i| s * int_code(storage, data, i) as f32),
            _ => fill(out, |i| block_element(kind, data, i, z, s)),
        },
    }
}

#[inline(always)]
fn fill(out: &mut [f32], f: impl Fn(usize) -> f32) {
    for (i, o) in out.iter_mut().enumerate() {
        *o = f(i);
    }
}

/// The reference: dequantizes the logical elements `[first, first + out.len())` in
/// row-major order, each by the spec formula of its scheme.
pub(crate) fn reference(dq: &StoredTensor<'_>, first: u64, out: &mut [f32]) {
    let shape = &dq.shape;
    let rank = shape.len();
    // The multi-index of element `first`, last dimension fastest.
    let mut index = vec![0u64; rank];
    let mut rest = first;
    for d in (0..rank).rev() {
        if shape[d] > 0 {
            index[d] = rest % shape[d];
            rest /= shape[d];
        }
    }
    for o in out.iter_mut() {
        *o = reference_value(dq, &index);
        for d in (0..rank).rev() {
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
}

/// The value of the logical element at `index`.
fn reference_value(dq: &StoredTensor<'_>, index: &[u64]) -> f32 {
    let a = &dq.addressing;
    // In range: the constructor checked every element's bits lie in the buffer.
    let code = a
        .bit(index)
        .and_then(|b| u64::try_from(b).ok())
        .and_then(|b| element_bits(dq.data, b, a.bit_width))
        .unwrap_or(0);
    let q = || int_value(dq.storage, code).unwrap_or(0);
    match &dq.params {
        Params::PerTensor { scale, zero_point } => affine(q(), *zero_point, *scale),
        Params::PerChannel {
            axis,
            scales,
            zero_points,
        } => {
            let c = index[*axis] as usize;
            let z = zero_points.map_or(0, |zp| i32_at(zp, c));
            affine(q(), z, f32_at(scales, c))
        }
        Params::PerSlot {
            scale_type,
            scales,
            zero_points,
        } => {
            // The slot is the pool index along axis 0 (one scale per page slot).
            let slot = index[0] as usize;
            let size = block_scale_size(*scale_type).unwrap_or(4) as usize;
            let s = widen_scale(*scale_type, &scales[size * slot..size * slot + size]);
            let z = if zero_points.is_empty() {
                0
            } else {
                i32_at(zero_points, slot)
            };
            affine(q(), z, s)
        }
        Params::Blocks {
            kind,
            geometry,
            scales,
            zero_points,
        } => {
            // b = outer * blocks_per_axis + floor(i_axis / K), outer row-major over
            // the other dimensions.
            let mut outer = 0u64;
            for (d, &i) in index.iter().enumerate() {
                if d != geometry.axis {
                    outer = outer * dq.shape[d] + i;
                }
            }
            let b = (outer * geometry.blocks_per_axis + index[geometry.axis] / geometry.block_size)
                as usize;
            let s = block_scale(*kind, scales, b);
            match kind {
                BlockKind::Affine { .. } => {
                    let z = if zero_points.is_empty() {
                        0
                    } else {
                        i32_at(zero_points, b)
                    };
                    affine(q(), z, s)
                }
                BlockKind::Nf4 => s * NF4_LEVELS[(code & 0x0F) as usize],
                BlockKind::Mxfp { storage } => match float_value(*storage, code) {
                    Some(v) => s * v,
                    None => s * q() as f32,
                },
            }
        }
    }
}

//! AVX2 + F16C block kernels for x86-64, chosen at run time.
//!
//! Each kernel decodes eight codes into eight float32 lanes and multiplies them by
//! the block's widened scale with one `vmulps` — the same single float32
//! multiplication as the scalar reference, never fused into an FMA — so results are
//! bit-identical to [`super::scalar`]. Codes that do not fill a group of eight (the
//! valid part of a partial final block) go through the scalar code.

use std::arch::x86_64::*;

use super::element::{FLOAT4_E2M1_LEVELS, FLOAT8_E4M3_TABLE, FLOAT8_E5M2_TABLE, NF4_LEVELS};
use super::scalar;
use super::{BlockKind, BlockRows};
use crate::model::element_type::ElementType;

/// Outputs at least this large are written with non-temporal stores (they do not
/// fit in cache, so reading the destination lines first only costs bandwidth).
const STREAM_BYTES: usize = 8 << 20;

/// True when this CPU runs the kernels (AVX2 and F16C).
pub(crate) fn available() -> bool {
    is_x86_feature_detected!("avx2") && is_x86_feature_detected!("f16c")
}

/// Dequantizes `out.len() / job.row_len` whole rows; `stream` allows non-temporal
/// stores when the output is large. Call only when [`available`].
pub(crate) fn block_rows(job: &BlockRows<'_>, out: &mut [f32], stream: bool) {
    if !available() || job.block_size < 8 || job.row_len == 0 {
        return scalar::block_rows(job, out);
    }
    let stream = stream
        && out.len() * 4 >= STREAM_BYTES
        && (out.as_ptr() as usize) % 16 == 0
        && job.row_len % 8 == 0;
    macro_rules! go {
        ($d:ty) => {
            // SAFETY: `available()` confirmed AVX2 and F16C; `job` was built by the
            // dequantizer, whose constructor checked that the data and parameter
            // slices hold every block of every row, and `out` holds whole rows.
            unsafe {
                if stream {
                    rows::<$d, true>(job, out)
                } else {
                    rows::<$d, false>(job, out)
                }
            }
        };
    }
    match job.kind {
        BlockKind::Affine { storage, .. } => match storage {
            ElementType::Int8 => go!(Int8),
            ElementType::Uint8 => go!(Uint8),
            ElementType::Int4 => go!(Int4),
            ElementType::Uint4 => go!(Uint4),
            ElementType::Int2 => go!(Int2),
            ElementType::Uint2 => go!(Uint2),
            _ => scalar::block_rows(job, out),
        },
        BlockKind::Nf4 => go!(Nf4),
        BlockKind::Mxfp { storage } => match storage {
            ElementType::Int8 => go!(Int8),
            ElementType::Int4 => go!(Int4),
            ElementType::Float4E2m1 => go!(Fp4),
            ElementType::Float8E4m3 => go!(Fp8E4m3),
            ElementType::Float8E5m2 => go!(Fp8E5m2),
            _ => scalar::block_rows(job, out),
        },
    }
}

/// Eight codes at a time to eight float32 values before scaling.
trait Decode {
    /// Bits per code.
    const BITS: usize;
    /// The values of the eight codes starting at byte `p` (`z` is subtracted from
    /// integer codes first; it is zero for symmetric and non-affine blocks).
    ///
    /// # Safety
    /// `p` points at `BITS` readable bytes; AVX2 is available.
    unsafe fn values8(p: *const u8, z: __m256i) -> __m256;
}

/// Lane `i` gets bits `[w*i, w*i + w)` of the 32-bit `word` (LSB-first packing).
#[inline(always)]
unsafe fn spread(word: i32, width: i32) -> __m256i {
    let shifts = _mm256_mullo_epi32(
        _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
        _mm256_set1_epi32(width),
    );
    _mm256_srlv_epi32(_mm256_set1_epi32(word), shifts)
}

/// `(codes - z)` converted to float32; exact, as `z` is kept within 2^31 - 256 of 0.
#[inline(always)]
unsafe fn int_values(codes: __m256i, z: __m256i) -> __m256 {
    _mm256_cvtepi32_ps(_mm256_sub_epi32(codes, z))
}

struct Int8;
struct Uint8;
struct Int4;
struct Uint4;
struct Int2;
struct Uint2;
struct Nf4;
struct Fp4;
struct Fp8E4m3;
struct Fp8E5m2;

impl Decode for Int8 {
    const BITS: usize = 8;
    #[inline(always)]
    unsafe fn values8(p: *const u8, z: __m256i) -> __m256 {
        int_values(_mm256_cvtepi8_epi32(_mm_loadl_epi64(p.cast())), z)
    }
}

impl Decode for Uint8 {
    const BITS: usize = 8;
    #[inline(always)]
    unsafe fn values8(p: *const u8, z: __m256i) -> __m256 {
        int_values(_mm256_cvtepu8_epi32(_mm_loadl_epi64(p.cast())), z)
    }
}

impl Decode for Int4 {
    const BITS: usize = 4;
    #[inline(always)]
    unsafe fn values8(p: *const u8, z: __m256i) -> __m256 {
        let lanes = spread(p.cast::<i32>().read_unaligned(), 4);
        int_values(_mm256_srai_epi32(_mm256_slli_epi32(lanes, 28), 28), z)
    }
}

impl Decode for Uint4 {
    const BITS: usize = 4;
    #[inline(always)]
    unsafe fn values8(p: *const u8, z: __m256i) -> __m256 {
        let lanes = spread(p.cast::<i32>().read_unaligned(), 4);
        int_values(_mm256_and_si256(lanes, _mm256_set1_epi32(0x0F)), z)
    }
}

impl Decode for Int2 {
    const BITS: usize = 2;
    #[inline(always)]
    unsafe fn values8(p: *const u8, z: __m256i) -> __m256 {
        let lanes = spread(i32::from(p.cast::<u16>().read_unaligned()), 2);
        int_values(_mm256_srai_epi32(_mm256_slli_epi32(lanes, 30), 30), z)
    }
}

impl Decode for Uint2 {
    const BITS: usize = 2;
    #[inline(always)]
    unsafe fn values8(p: *const u8, z: __m256i) -> __m256 {
        let lanes = spread(i32::from(p.cast::<u16>().read_unaligned()), 2);
        int_values(_mm256_and_si256(lanes, _mm256_set1_epi32(0x03)), z)
    }
}

/// A 16-entry table lookup of 4-bit codes: two 8-entry permutes, chosen by bit 3.
#[inline(always)]
unsafe fn lookup16(p: *const u8, table: &[f32; 16]) -> __m256 {
    let codes = spread(p.cast::<i32>().read_unaligned(), 4);
    let low = _mm256_permutevar8x32_ps(_mm256_loadu_ps(table.as_ptr()), codes);
    let high = _mm256_permutevar8x32_ps(_mm256_loadu_ps(table.as_ptr().add(8)), codes);
    // Bit 3 of each code moved to the lane's sign bit selects the upper half.
    let select = _mm256_castsi256_ps(_mm256_slli_epi32(codes, 28));
    _mm256_blendv_ps(low, high, select)
}

impl Decode for Nf4 {
    const BITS: usize = 4;
    #[inline(always)]
    unsafe fn values8(p: *const u8, _z: __m256i) -> __m256 {
        lookup16(p, &NF4_LEVELS)
    }
}

impl Decode for Fp4 {
    const BITS: usize = 4;
    #[inline(always)]
    unsafe fn values8(p: *const u8, _z: __m256i) -> __m256 {
        lookup16(p, &FLOAT4_E2M1_LEVELS)
    }
}

impl Decode for Fp8E4m3 {
    const BITS: usize = 8;
    #[inline(always)]
    unsafe fn values8(p: *const u8, _z: __m256i) -> __m256 {
        let codes = _mm256_cvtepu8_epi32(_mm_loadl_epi64(p.cast()));
        _mm256_i32gather_ps::<4>(FLOAT8_E4M3_TABLE.as_ptr(), codes)
    }
}

impl Decode for Fp8E5m2 {
    const BITS: usize = 8;
    #[inline(always)]
    unsafe fn values8(p: *const u8, _z: __m256i) -> __m256 {
        let codes = _mm256_cvtepu8_epi32(_mm_loadl_epi64(p.cast()));
        _mm256_i32gather_ps::<4>(FLOAT8_E5M2_TABLE.as_ptr(), codes)
    }
}

/// The scale of block `b`, widened to float32 (float16 through F16C: exact, like
/// the scalar widening).
#[inline(always)]
unsafe fn scale_at(kind: BlockKind, scales: &[u8], b: usize) -> f32 {
    if let BlockKind::Affine {
        scale_type: 0x01, ..
    } = kind
    {
        let bits = scales.as_ptr().add(2 * b).cast::<u16>().read_unaligned();
        return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(i32::from(bits))));
    }
    scalar::block_scale(kind, scales, b)
}

/// Zero points this close to the int32 limits could overflow `q - z` in 32-bit
/// lanes; blocks with them take the scalar path (which subtracts in 64 bits).
const ZERO_POINT_LIMIT: i64 = (1 << 31) - 256;

/// The block-row loop for decoder `D`; `STREAM` uses non-temporal stores (then every
/// group of eight is 16-byte aligned and there are no tails).
///
/// # Safety
/// AVX2 and F16C are available; `job` describes `out.len() / job.row_len` rows whose
/// blocks and parameters lie inside its slices; with `STREAM`, `out` is 16-byte
/// aligned and `job.row_len % 8 == 0`.
#[target_feature(enable = "avx2,f16c")]
unsafe fn rows<D: Decode, const STREAM: bool>(job: &BlockRows<'_>, out: &mut [f32]) {
    let (k, row_len, per_row) = (job.block_size, job.row_len, job.blocks_per_row);
    let nrows = out.len() / row_len;
    let data = job.data.as_ptr();
    let out_ptr = out.as_mut_ptr();
    let asymmetric = !job.zero_points.is_empty();
    for r in 0..nrows {
        for j in 0..per_row {
            let b = r * per_row + j;
            let start = j * k;
            let valid = k.min(row_len - start);
            let o = r * row_len + start;
            let z = if asymmetric {
                scalar::i32_at(job.zero_points, b)
            } else {
                0
            };
            if z.abs() > ZERO_POINT_LIMIT {
                scalar::block(job, b, &mut out[o..o + valid]);
                continue;
            }
            let s = scale_at(job.kind, job.scales, b);
            let sv = _mm256_set1_ps(s);
            let zv = _mm256_set1_epi32(z as i32);
            let block = data.add(b * job.block_bytes);
            let mut g = 0;
            while g + 8 <= valid {
                let v = _mm256_mul_ps(D::values8(block.add(g * D::BITS / 8), zv), sv);
                let dst = out_ptr.add(o + g);
                if STREAM {
                    // Two 16-byte non-temporal stores: large allocations are only
                    // 16-byte aligned (the allocator's header precedes the data).
                    _mm_stream_ps(dst, _mm256_castps256_ps128(v));
                    _mm_stream_ps(dst.add(4), _mm256_extractf128_ps::<1>(v));
                } else {
                    _mm256_storeu_ps(dst, v);
                }
                g += 8;
            }
            if g < valid {
                let bytes = std::slice::from_raw_parts(block, job.block_bytes);
                for i in g..valid {
                    *out_ptr.add(o + i) = scalar::block_element(job.kind, bytes, i, z, s);
                }
            }
        }
    }
    if STREAM {
        _mm_sfence();
    }
}

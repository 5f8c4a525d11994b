//! AVX2 + F16C block kernels for x86-64, chosen at run time.
//!
//! Each kernel decodes eight codes into eight float32 lanes and multiplies them by
//! the block's widened scale with one `vmulps` — the same single float32
//! multiplication as the scalar reference, never fused into an FMA — so results are
//! bit-identical to [`super::scalar`]. Codes that do not fill a group of eight (the
//! valid part of a partial final block) go through the scalar code.

use std::arch::x86_64::*;

use super::element::{FLOAT4_E2M1_LEVELS, FLOAT8_E4M3_TABLE, FLOAT8_E5M2_TABLE, NF4_LEVELS};
use super::params::{BlockKind, BlockRows};
use super::scalar;
use crate::model::element_type::ElementType;

/// True when this CPU runs the kernels (AVX2 and F16C).
pub(crate) fn available() -> bool {
    is_x86_feature_detected!("avx2") && is_x86_feature_detected!("f16c")
}

thread_local! {
    /// Calls on this thread that ran an AVX2 kernel (read by
    /// [`super::simd_kernel_runs`]).
    pub(crate) static SIMD_RUNS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Counts one call that runs an AVX2 kernel.
#[inline]
fn count_simd_run() {
    SIMD_RUNS.with(|n| n.set(n.get() + 1));
}

/// Dequantizes `out.len() / job.row_len` whole rows; `stream` asks for
/// non-temporal stores (where alignment allows). Call only when [`available`].
pub(crate) fn block_rows(job: &BlockRows<'_>, out: &mut [f32], stream: bool) {
    if !available() || job.block_size < 8 || job.row_len == 0 {
        return scalar::block_rows(job, out);
    }
    let stream =
        stream && (out.as_ptr() as usize).is_multiple_of(16) && job.row_len.is_multiple_of(8);
    // Rows of whole blocks of whole 32-code units: block `b` fills
    // `out[b * k..(b + 1) * k]`, with no partial block and no tail.
    let whole = job.block_size.is_multiple_of(32) && job.row_len.is_multiple_of(job.block_size);
    macro_rules! go {
        ($d:ty) => {{
            count_simd_run();
            // SAFETY: `available()` confirmed AVX2 and F16C; `job` was built by the
            // dequantizer, whose constructor checked that the data and parameter
            // slices hold every block of every row, and `out` holds whole rows;
            // `whole` and `stream` are the conditions the two loops require.
            unsafe {
                match (whole, stream) {
                    (true, true) => blocks::<$d, true>(job, out),
                    (true, false) => blocks::<$d, false>(job, out),
                    (false, true) => rows::<$d, true>(job, out),
                    (false, false) => rows::<$d, false>(job, out),
                }
            }
        }};
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

    /// The values of the 32 codes starting at byte `p`, eight per vector.
    ///
    /// # Safety
    /// `p` points at `4 * BITS` readable bytes; AVX2 is available.
    #[inline(always)]
    unsafe fn values32(p: *const u8, z: __m256i) -> [__m256; 4] {
        let bytes = Self::BITS;
        [
            Self::values8(p, z),
            Self::values8(p.add(bytes), z),
            Self::values8(p.add(2 * bytes), z),
            Self::values8(p.add(3 * bytes), z),
        ]
    }
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

/// The 32 bytes `[lo, hi]` (16 each, in code order) as four vectors of eight int32
/// lanes, sign-extended when `SIGNED`.
#[inline(always)]
unsafe fn widen32<const SIGNED: bool>(lo: __m128i, hi: __m128i) -> [__m256i; 4] {
    #[inline(always)]
    unsafe fn widen<const SIGNED: bool>(x: __m128i) -> __m256i {
        if SIGNED {
            _mm256_cvtepi8_epi32(x)
        } else {
            _mm256_cvtepu8_epi32(x)
        }
    }
    [
        widen::<SIGNED>(lo),
        widen::<SIGNED>(_mm_srli_si128::<8>(lo)),
        widen::<SIGNED>(hi),
        widen::<SIGNED>(_mm_srli_si128::<8>(hi)),
    ]
}

/// The 32 4-bit codes in the 16 bytes at `p` (LSB-first packing), one byte each in
/// code order: codes 0..16 and 16..32. With `SIGNED`, each byte holds the code
/// sign-extended from 4 bits.
#[inline(always)]
unsafe fn nibbles32<const SIGNED: bool>(p: *const u8) -> (__m128i, __m128i) {
    let packed = _mm_loadu_si128(p.cast());
    let mask = _mm_set1_epi8(0x0F);
    let mut even = _mm_and_si128(packed, mask);
    let mut odd = _mm_and_si128(_mm_srli_epi16::<4>(packed), mask);
    if SIGNED {
        // Codes 8..15 stand for -8..-1.
        let table = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, -8, -7, -6, -5, -4, -3, -2, -1);
        even = _mm_shuffle_epi8(table, even);
        odd = _mm_shuffle_epi8(table, odd);
    }
    (_mm_unpacklo_epi8(even, odd), _mm_unpackhi_epi8(even, odd))
}

/// The 32 2-bit codes in the 8 bytes at `p` (LSB-first packing), one byte each in
/// code order: codes 0..16 and 16..32. With `SIGNED`, each byte holds the code
/// sign-extended from 2 bits.
#[inline(always)]
unsafe fn crumbs32<const SIGNED: bool>(p: *const u8) -> (__m128i, __m128i) {
    let packed = _mm_loadl_epi64(p.cast());
    let mask = _mm_set1_epi8(0x03);
    // Code 4j + k of byte j is its bits [2k, 2k + 2).
    let q0 = _mm_and_si128(packed, mask);
    let q1 = _mm_and_si128(_mm_srli_epi16::<2>(packed), mask);
    let q2 = _mm_and_si128(_mm_srli_epi16::<4>(packed), mask);
    let q3 = _mm_and_si128(_mm_srli_epi16::<6>(packed), mask);
    let (q01, q23) = (_mm_unpacklo_epi8(q0, q1), _mm_unpacklo_epi8(q2, q3));
    let (mut lo, mut hi) = (_mm_unpacklo_epi16(q01, q23), _mm_unpackhi_epi16(q01, q23));
    if SIGNED {
        // Codes 2 and 3 stand for -2 and -1.
        let table = _mm_setr_epi8(0, 1, -2, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
        lo = _mm_shuffle_epi8(table, lo);
        hi = _mm_shuffle_epi8(table, hi);
    }
    (lo, hi)
}

/// `(codes - z)` to float32 for four vectors of codes.
#[inline(always)]
unsafe fn int_values32(codes: [__m256i; 4], z: __m256i) -> [__m256; 4] {
    let [a, b, c, d] = codes;
    [
        int_values(a, z),
        int_values(b, z),
        int_values(c, z),
        int_values(d, z),
    ]
}

impl Decode for Int8 {
    const BITS: usize = 8;
    #[inline(always)]
    unsafe fn values8(p: *const u8, z: __m256i) -> __m256 {
        int_values(_mm256_cvtepi8_epi32(_mm_loadl_epi64(p.cast())), z)
    }
    #[inline(always)]
    unsafe fn values32(p: *const u8, z: __m256i) -> [__m256; 4] {
        let (lo, hi) = (_mm_loadu_si128(p.cast()), _mm_loadu_si128(p.add(16).cast()));
        int_values32(widen32::<true>(lo, hi), z)
    }
}

impl Decode for Uint8 {
    const BITS: usize = 8;
    #[inline(always)]
    unsafe fn values8(p: *const u8, z: __m256i) -> __m256 {
        int_values(_mm256_cvtepu8_epi32(_mm_loadl_epi64(p.cast())), z)
    }
    #[inline(always)]
    unsafe fn values32(p: *const u8, z: __m256i) -> [__m256; 4] {
        let (lo, hi) = (_mm_loadu_si128(p.cast()), _mm_loadu_si128(p.add(16).cast()));
        int_values32(widen32::<false>(lo, hi), z)
    }
}

impl Decode for Int4 {
    const BITS: usize = 4;
    #[inline(always)]
    unsafe fn values8(p: *const u8, z: __m256i) -> __m256 {
        let lanes = spread(p.cast::<i32>().read_unaligned(), 4);
        int_values(_mm256_srai_epi32(_mm256_slli_epi32(lanes, 28), 28), z)
    }
    #[inline(always)]
    unsafe fn values32(p: *const u8, z: __m256i) -> [__m256; 4] {
        let (lo, hi) = nibbles32::<true>(p);
        int_values32(widen32::<true>(lo, hi), z)
    }
}

impl Decode for Uint4 {
    const BITS: usize = 4;
    #[inline(always)]
    unsafe fn values8(p: *const u8, z: __m256i) -> __m256 {
        let lanes = spread(p.cast::<i32>().read_unaligned(), 4);
        int_values(_mm256_and_si256(lanes, _mm256_set1_epi32(0x0F)), z)
    }
    #[inline(always)]
    unsafe fn values32(p: *const u8, z: __m256i) -> [__m256; 4] {
        let (lo, hi) = nibbles32::<false>(p);
        int_values32(widen32::<false>(lo, hi), z)
    }
}

impl Decode for Int2 {
    const BITS: usize = 2;
    #[inline(always)]
    unsafe fn values8(p: *const u8, z: __m256i) -> __m256 {
        let lanes = spread(i32::from(p.cast::<u16>().read_unaligned()), 2);
        int_values(_mm256_srai_epi32(_mm256_slli_epi32(lanes, 30), 30), z)
    }
    #[inline(always)]
    unsafe fn values32(p: *const u8, z: __m256i) -> [__m256; 4] {
        let (lo, hi) = crumbs32::<true>(p);
        int_values32(widen32::<true>(lo, hi), z)
    }
}

impl Decode for Uint2 {
    const BITS: usize = 2;
    #[inline(always)]
    unsafe fn values8(p: *const u8, z: __m256i) -> __m256 {
        let lanes = spread(i32::from(p.cast::<u16>().read_unaligned()), 2);
        int_values(_mm256_and_si256(lanes, _mm256_set1_epi32(0x03)), z)
    }
    #[inline(always)]
    unsafe fn values32(p: *const u8, z: __m256i) -> [__m256; 4] {
        let (lo, hi) = crumbs32::<false>(p);
        int_values32(widen32::<false>(lo, hi), z)
    }
}

/// A 16-entry table lookup of the eight 4-bit codes at `p`.
#[inline(always)]
unsafe fn lookup16(p: *const u8, table: &[f32; 16]) -> __m256 {
    lookup16_lanes(spread(p.cast::<i32>().read_unaligned(), 4), table)
}

/// Byte `k` (little-endian) of each float32 of a 16-entry table: the tables
/// `vpshufb` looks 4-bit codes up in.
const fn byte_planes(table: &[f32; 16]) -> [[u8; 16]; 4] {
    let mut planes = [[0u8; 16]; 4];
    let mut i = 0;
    while i < 16 {
        let bytes = table[i].to_bits().to_le_bytes();
        let mut k = 0;
        while k < 4 {
            planes[k][i] = bytes[k];
            k += 1;
        }
        i += 1;
    }
    planes
}

const NF4_PLANES: [[u8; 16]; 4] = byte_planes(&NF4_LEVELS);
const FLOAT4_E2M1_PLANES: [[u8; 16]; 4] = byte_planes(&FLOAT4_E2M1_LEVELS);

/// The 32 4-bit codes at `p` looked up in a 16-entry float32 table given as byte
/// planes: four byte lookups (`vpshufb`) and two rounds of interleaving rebuild the
/// float32 bits, with no lane-crossing permute.
#[inline(always)]
unsafe fn lookup16x32(p: *const u8, planes: &[[u8; 16]; 4]) -> [__m256; 4] {
    // Lane 0 gets codes 0-3, 8-11, 16-19, 24-27 and lane 1 codes 4-7, 12-15, ...,
    // so that the interleaving below leaves eight consecutive codes per vector.
    // Each packed byte is placed twice: the low copy keeps its low nibble (the
    // even code), the high copy its high nibble (the odd code).
    let packed = _mm256_broadcastsi128_si256(_mm_loadu_si128(p.cast()));
    let order = _mm256_setr_epi8(
        0, 0, 1, 1, 4, 4, 5, 5, 8, 8, 9, 9, 12, 12, 13, 13, //
        2, 2, 3, 3, 6, 6, 7, 7, 10, 10, 11, 11, 14, 14, 15, 15,
    );
    let pairs = _mm256_shuffle_epi8(packed, order);
    let codes = _mm256_or_si256(
        _mm256_and_si256(pairs, _mm256_set1_epi16(0x000F)),
        _mm256_and_si256(_mm256_srli_epi16::<4>(pairs), _mm256_set1_epi16(0x0F00)),
    );
    #[inline(always)]
    unsafe fn plane(table: &[u8; 16], codes: __m256i) -> __m256i {
        let table = _mm256_broadcastsi128_si256(_mm_loadu_si128(table.as_ptr().cast()));
        _mm256_shuffle_epi8(table, codes)
    }
    let (b0, b1) = (plane(&planes[0], codes), plane(&planes[1], codes));
    let (b2, b3) = (plane(&planes[2], codes), plane(&planes[3], codes));
    let (low01, high01) = (_mm256_unpacklo_epi8(b0, b1), _mm256_unpackhi_epi8(b0, b1));
    let (low23, high23) = (_mm256_unpacklo_epi8(b2, b3), _mm256_unpackhi_epi8(b2, b3));
    [
        _mm256_castsi256_ps(_mm256_unpacklo_epi16(low01, low23)),
        _mm256_castsi256_ps(_mm256_unpackhi_epi16(low01, low23)),
        _mm256_castsi256_ps(_mm256_unpacklo_epi16(high01, high23)),
        _mm256_castsi256_ps(_mm256_unpackhi_epi16(high01, high23)),
    ]
}

/// A 16-entry table lookup of the low four bits of each lane: two 8-entry permutes,
/// chosen by bit 3.
#[inline(always)]
unsafe fn lookup16_lanes(codes: __m256i, table: &[f32; 16]) -> __m256 {
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
    #[inline(always)]
    unsafe fn values32(p: *const u8, _z: __m256i) -> [__m256; 4] {
        lookup16x32(p, &NF4_PLANES)
    }
}

impl Decode for Fp4 {
    const BITS: usize = 4;
    #[inline(always)]
    unsafe fn values8(p: *const u8, _z: __m256i) -> __m256 {
        lookup16(p, &FLOAT4_E2M1_LEVELS)
    }
    #[inline(always)]
    unsafe fn values32(p: *const u8, _z: __m256i) -> [__m256; 4] {
        lookup16x32(p, &FLOAT4_E2M1_PLANES)
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

/// Writes eight values at `dst`: with `STREAM`, as two 16-byte non-temporal stores
/// (large allocations are only 16-byte aligned: the allocator's header precedes
/// the data).
///
/// # Safety
/// `dst` points at eight writable floats, 16-byte aligned with `STREAM`.
#[inline(always)]
unsafe fn store8<const STREAM: bool>(dst: *mut f32, v: __m256) {
    if STREAM {
        _mm_stream_ps(dst, _mm256_castps256_ps128(v));
        _mm_stream_ps(dst.add(4), _mm256_extractf128_ps::<1>(v));
    } else {
        _mm256_storeu_ps(dst, v);
    }
}

/// The scales of blocks `[b, b + n)` (`n <= 8`), widened to float32 into
/// `out[..n]`; float16 and bfloat16 eight at a time (both exact, like the scalar
/// widening).
///
/// # Safety
/// AVX2 and F16C are available; the scale slice holds those blocks.
#[inline(always)]
unsafe fn widen_scales(kind: BlockKind, scales: &[u8], b: usize, n: usize, out: &mut [f32; 8]) {
    if let (BlockKind::Affine { scale_type, .. }, 8) = (kind, n) {
        let halves = scales[2 * b..2 * b + 16].as_ptr().cast();
        match scale_type {
            0x01 => {
                let widened = _mm256_cvtph_ps(_mm_loadu_si128(halves));
                return _mm256_storeu_ps(out.as_mut_ptr(), widened);
            }
            0x02 => {
                let bits = _mm256_slli_epi32::<16>(_mm256_cvtepu16_epi32(_mm_loadu_si128(halves)));
                return _mm256_storeu_si256(out.as_mut_ptr().cast(), bits);
            }
            _ => {}
        }
    }
    for (i, s) in out.iter_mut().enumerate().take(n) {
        *s = scalar::block_scale(kind, scales, b + i);
    }
}

/// The loop over rows made of whole blocks of whole 32-code units, eight blocks'
/// parameters at a time; `STREAM` uses non-temporal stores.
///
/// # Safety
/// AVX2 and F16C are available; `job.block_size % 32 == 0` and
/// `job.row_len % job.block_size == 0`; `job` describes `out.len() / job.row_len`
/// rows whose blocks and parameters lie inside its slices; with `STREAM`, `out` is
/// 16-byte aligned.
#[target_feature(enable = "avx2,f16c")]
unsafe fn blocks<D: Decode, const STREAM: bool>(job: &BlockRows<'_>, out: &mut [f32]) {
    let k = job.block_size;
    let count = out.len() / k;
    let data = job.data.as_ptr();
    let out_ptr = out.as_mut_ptr();
    let asymmetric = !job.zero_points.is_empty();
    let (mut scales, mut zeros) = ([0f32; 8], [0i32; 8]);
    let mut b0 = 0;
    while b0 < count {
        let n = (count - b0).min(8);
        widen_scales(job.kind, job.scales, b0, n, &mut scales);
        if asymmetric {
            for (i, z) in zeros.iter_mut().enumerate().take(n) {
                *z = scalar::i32_at(job.zero_points, b0 + i) as i32;
            }
        }
        for i in 0..n {
            let b = b0 + i;
            if i64::from(zeros[i]).abs() > ZERO_POINT_LIMIT {
                // Through `out_ptr`, which the vector stores keep using.
                scalar::block(
                    job,
                    b,
                    std::slice::from_raw_parts_mut(out_ptr.add(b * k), k),
                );
                continue;
            }
            let (sv, zv) = (_mm256_set1_ps(scales[i]), _mm256_set1_epi32(zeros[i]));
            let (src, dst) = (data.add(b * job.block_bytes), out_ptr.add(b * k));
            for unit in 0..k / 32 {
                let values = D::values32(src.add(unit * 4 * D::BITS), zv);
                for (g, v) in values.into_iter().enumerate() {
                    store8::<STREAM>(dst.add(unit * 32 + g * 8), _mm256_mul_ps(v, sv));
                }
            }
        }
        b0 += n;
    }
    if STREAM {
        _mm_sfence();
    }
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
                // Through `out_ptr`, which the vector stores keep using.
                let part = std::slice::from_raw_parts_mut(out_ptr.add(o), valid);
                scalar::block(job, b, part);
                continue;
            }
            let s = scale_at(job.kind, job.scales, b);
            let sv = _mm256_set1_ps(s);
            let zv = _mm256_set1_epi32(z as i32);
            let block = data.add(b * job.block_bytes);
            let mut g = 0;
            while g + 8 <= valid {
                let v = _mm256_mul_ps(D::values8(block.add(g * D::BITS / 8), zv), sv);
                store8::<STREAM>(out_ptr.add(o + g), v);
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

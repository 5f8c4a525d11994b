//! Layout checks: the fields of every layout, the buffer composition of sparse and
//! indirect layouts, their stored index structures, and composite close-time rules
//! (the rules of [`crate::validate::rules::layout`]).
//!
//! Field checks need only the descriptor. Checks of stored structure (pointers,
//! coordinates, Morton padding) run when the buffers are given; they read at most
//! the bytes each buffer handle declares and the slice holds, and report the first
//! offending entry of each rule. Work is linear in the bytes read, apart from
//! sorting COO coordinates to find duplicates.

use std::borrow::Cow;

use crate::layout::addressing::{morton_decode, DenseMap, TiledMap};
use crate::layout::dense::{
    is_dense, lowest_bit_address, packed_run, required_buffer_size, DenseView,
};
use crate::layout::element_bits;
use crate::layout::sparse::IndexArray;
use crate::model::packed_size;
use crate::model::ElementType;
use crate::schema::{
    descriptor_offsets, BlockPagedFields, BufferHandle, CompressedFields, CooFields, CsfFields,
    HilbertFields, LayoutFields, Statistics, TensorDescriptor, TiledFields, LAYOUT_CSC,
    LAYOUT_TILED,
};

use crate::limits::Limits;

use super::input::{Buffers, DataReads, Window};
use crate::validate::rules::container::{TD_BUF_TAIL, TD_TYP_E8M0};
use crate::validate::rules::layout::*;
use crate::validate::{Report, Rule};

/// The tensor being checked: where its fields are and which buffers it has.
struct Ctx<'a> {
    desc: &'a TensorDescriptor,
    /// Deepest tiled nesting accepted.
    max_tiled_depth: u32,
    /// Absolute offset of the descriptor.
    base: u64,
    buffers: Option<Buffers<'a>>,
    /// Absolute offsets of the buffers in the file, when known.
    buffer_offsets: Option<&'a [u64]>,
}

impl<'a> Ctx<'a> {
    fn layout(&self, rel: u64) -> u64 {
        self.base + self.desc.layout_pos() + rel
    }

    fn handle(&self, i: usize) -> u64 {
        self.base + self.desc.buffer_pos(i)
    }

    /// Absolute offset of byte `byte` of buffer `i`, or of its handle when the
    /// buffer's place in the file is not known.
    fn at(&self, i: usize, byte: u64) -> u64 {
        match self.buffer_offsets.and_then(|o| o.get(i)) {
            Some(&start) => start.saturating_add(byte),
            None => self.handle(i),
        }
    }

    fn byte_offset_pos(&self) -> u64 {
        self.base + self.desc.byte_offset_pos()
    }

    fn shape_pos(&self, k: usize) -> u64 {
        self.base + descriptor_offsets::SHAPE + 8 * k as u64
    }

    fn rank(&self) -> usize {
        self.desc.shape.len()
    }

    /// Declared size of buffer `i`, 0 when the table has no such entry.
    fn declared(&self, i: usize) -> u64 {
        self.desc.buffers.get(i).map_or(0, |b| b.byte_size)
    }

    /// The data buffer's bytes (buffer 0), cut to its declared size, for reading
    /// here and there: only with the judging's consent.
    fn data(&self, consent: DataReads) -> Option<Window<'a>> {
        self.buffers?.data(consent, self.declared(0))
    }

    /// Buffer `i` (cut to its declared size) as little-endian entries of
    /// `entry_size` bytes: a stored index structure, read whole.
    fn entries(&self, i: usize, entry_size: usize) -> Option<Entries<'a>> {
        Some(Entries {
            bytes: self.buffers?.whole(i, self.declared(i))?,
            entry_size,
            buffer: i,
        })
    }
}

/// The bytes of an index structure, borrowed or read, viewed as [`IndexArray`].
struct Entries<'a> {
    bytes: Cow<'a, [u8]>,
    entry_size: usize,
    buffer: usize,
}

impl Entries<'_> {
    fn array(&self) -> IndexArray<'_> {
        IndexArray {
            bytes: &self.bytes,
            entry_size: self.entry_size,
            buffer: self.buffer,
        }
    }
}

/// Checks the layout-specific fields of `desc` (at absolute offset `desc_offset`)
/// and, when `buffers` are given, the stored structure they describe, with the
/// default [`Limits`].
pub fn check(
    desc: &TensorDescriptor,
    desc_offset: u64,
    buffers: Option<&[&[u8]]>,
    report: &mut Report,
) {
    check_with_limits(desc, desc_offset, buffers, None, &Limits::default(), report);
}

/// [`check`] with explicit limits (`max_tiled_depth`) and, when known, the absolute
/// file offsets of the buffers (`buffer_offsets[i]` for `buffers[i]`), which locate
/// violations in stored data precisely; without them they point at the buffer
/// handle.
pub(crate) fn check_with_limits(
    desc: &TensorDescriptor,
    desc_offset: u64,
    buffers: Option<&[&[u8]]>,
    buffer_offsets: Option<&[u64]>,
    limits: &Limits,
    report: &mut Report,
) {
    let buffers = buffers.map(Buffers::Slices);
    check_buffers(desc, desc_offset, buffers, buffer_offsets, limits, report);
}

/// [`check_with_limits`] over buffers in memory or in the input being validated.
pub(crate) fn check_buffers(
    desc: &TensorDescriptor,
    desc_offset: u64,
    buffers: Option<Buffers<'_>>,
    buffer_offsets: Option<&[u64]>,
    limits: &Limits,
    report: &mut Report,
) {
    let ctx = Ctx {
        desc,
        max_tiled_depth: limits.max_tiled_depth,
        base: desc_offset,
        buffers,
        buffer_offsets,
    };
    match &desc.layout {
        LayoutFields::Strided { .. } => check_low_side(&ctx, &LY_STR_LOW, report),
        LayoutFields::Tiled(t) => check_tiled(&ctx, t, report),
        LayoutFields::Morton { morton_bits } => check_morton(&ctx, morton_bits, report),
        LayoutFields::Hilbert(h) => check_hilbert(&ctx, h, report),
        LayoutFields::Coo(c) => check_coo(&ctx, c, report),
        LayoutFields::Csr(c) | LayoutFields::Csc(c) => check_compressed(&ctx, c, report),
        LayoutFields::Csf(c) => check_csf(&ctx, c, report),
        LayoutFields::BlockPaged(b) => check_block_paged(&ctx, b, report),
        LayoutFields::Implicit => check_packing_tail(&ctx, report),
        // Composite heads and extension layouts are judged by the container rules.
        LayoutFields::Composite(_) | LayoutFields::Extension(_) => {}
    }
    if desc.type_tag == ElementType::Float8E8m0.tag() && desc.quantization.is_none() {
        if let Some(consent) = DataReads::for_rule(report, &TD_TYP_E8M0) {
            check_e8m0_values(&ctx, consent, report);
        }
    }
}

/// `TD-TYP-002`: no stored `float8_e8m0` element is a reserved code (0x00, 0xFF).
/// Dense layouts are read through their addressing (tile and curve padding is not
/// an element); sparse layouts' `values` hold `nnz` elements. Block-paged pools are
/// not judged: slots past a sequence's token count are undefined, and the token
/// counts are not stored.
fn check_e8m0_values(ctx: &Ctx, consent: DataReads, report: &mut Report) {
    let Some(mut data) = ctx.data(consent) else {
        return;
    };
    let reserved = |b: u8| ElementType::Float8E8m0.is_reserved_code(b.into());
    let first_bad = match &ctx.desc.layout {
        LayoutFields::Coo(CooFields { nnz, .. })
        | LayoutFields::Csr(CompressedFields { nnz, .. })
        | LayoutFields::Csc(CompressedFields { nnz, .. })
        | LayoutFields::Csf(CsfFields { nnz, .. }) => data.position(0, *nnz, reserved),
        _ if is_dense(ctx.desc.layout_tag) => {
            let Some(view) = usize::try_from(data.len())
                .ok()
                .and_then(|len| DenseView::addresses_only(ctx.desc, len).ok())
            else {
                return;
            };
            // Broadcasting strides can name far more elements than the buffer holds.
            if u128::from(view.element_count()) > u128::from(data.len()) * 8 + 4096 {
                report.note(format!(
                    "float8_e8m0 values of the tensor at {} not checked: {} elements over a {}-byte buffer",
                    ctx.base,
                    view.element_count(),
                    data.len()
                ));
                return;
            }
            // One pass over the buffer finds the reserved codes; the walk in logical
            // order (which may jump anywhere) then only looks them up.
            let bad = BytePositions::scan(&mut data, reserved);
            let mut first = None;
            if !bad.is_empty() {
                // Out-of-bounds elements are the buffer size rules' to report.
                let _ = view.for_each_address(|bit| {
                    let byte = bit / 8;
                    if first.is_none() && bad.contains(byte) {
                        first = Some(byte);
                    }
                    Ok(())
                });
            }
            first
        }
        _ => None,
    };
    if let Some(byte) = first_bad {
        report.violation(
            &TD_TYP_E8M0,
            ctx.at(0, byte),
            format!(
                "byte {byte} of buffer 0 is float8_e8m0 code {:#04x}, a reserved code no element may hold",
                data.byte(byte).unwrap_or_default()
            ),
        );
    }
}

/// The positions of a buffer's bytes that match a predicate: a sorted list while
/// there are few, a bitmap of the buffer beyond that.
enum BytePositions {
    List(Vec<u64>),
    Bitmap(Vec<u64>),
}

impl BytePositions {
    /// Entries kept as a list before switching to a bitmap.
    const LIST_MAX: usize = 1 << 16;

    /// Scans the whole of `data` in order.
    fn scan(data: &mut Window<'_>, pred: impl Fn(u8) -> bool) -> Self {
        let len = data.len();
        let mut found = BytePositions::List(Vec::new());
        let mut at = 0u64;
        while at < len {
            let piece = data.get(at, super::input::CHUNK as usize);
            if piece.is_empty() {
                break;
            }
            for (i, _) in piece.iter().enumerate().filter(|(_, &b)| pred(b)) {
                found.insert(at + i as u64, len);
            }
            at += piece.len() as u64;
        }
        found
    }

    /// Adds `p` (positions arrive in increasing order) in a buffer of `len` bytes.
    fn insert(&mut self, p: u64, len: u64) {
        match self {
            BytePositions::List(list) if list.len() < Self::LIST_MAX => list.push(p),
            BytePositions::List(list) => {
                let mut bits = vec![0u64; len.div_ceil(64) as usize];
                for &q in list.iter().chain([&p]) {
                    bits[(q / 64) as usize] |= 1 << (q % 64);
                }
                *self = BytePositions::Bitmap(bits);
            }
            BytePositions::Bitmap(bits) => bits[(p / 64) as usize] |= 1 << (p % 64),
        }
    }

    fn is_empty(&self) -> bool {
        matches!(self, BytePositions::List(list) if list.is_empty())
    }

    fn contains(&self, p: u64) -> bool {
        match self {
            BytePositions::List(list) => list.binary_search(&p).is_ok(),
            BytePositions::Bitmap(bits) => usize::try_from(p / 64)
                .ok()
                .and_then(|w| bits.get(w))
                .is_some_and(|w| w & (1 << (p % 64)) != 0),
        }
    }
}

/// Row-major and column-major tensors (no fields): the bits after the last packed
/// sub-byte element are zero (`TD-BUF-006`). Quantized tensors are checked by the
/// quantization validator, which knows their storage shape.
fn check_packing_tail(ctx: &Ctx, report: &mut Report) {
    let Some(consent) = DataReads::for_rule(report, &TD_BUF_TAIL) else {
        return;
    };
    let (Some(mut data), Some((count, width, start))) = (ctx.data(consent), packed_run(ctx.desc))
    else {
        return;
    };
    if let Some(tail) = data.packing_tail(count, width, start as u64) {
        report.violation(&TD_BUF_TAIL, ctx.at(0, tail.byte_index), tail.to_string());
    }
}

/// Every addressed element lies at or after the start of buffer 0.
fn check_low_side(ctx: &Ctx, rule: &'static Rule, report: &mut Report) {
    if let Some(low) = lowest_bit_address(ctx.desc) {
        if low < 0 {
            report.violation(
                rule,
                ctx.byte_offset_pos(),
                format!(
                    "byte_offset {} puts the lowest addressed element {} bits before the start of buffer 0",
                    ctx.desc.byte_offset, -low
                ),
            );
        }
    }
}

// --- tiled -------------------------------------------------------------------

fn check_tiled(ctx: &Ctx, top: &TiledFields, report: &mut Report) {
    let rank = ctx.rank() as u64;
    let mut level = Some(top);
    let mut pos = 0u64;
    let mut depth = 0u32;
    while let Some(t) = level {
        depth += 1;
        if depth > ctx.max_tiled_depth {
            report.violation(
                &LY_TIL_DEPTH,
                ctx.layout(pos),
                format!(
                    "tiled nesting is {} levels deep; at most {} are accepted",
                    top.depth(),
                    ctx.max_tiled_depth
                ),
            );
            break;
        }
        if let Some(k) = t.tile_shape.iter().position(|&s| s == 0) {
            report.violation(
                &LY_TIL_TILE_SHAPE,
                ctx.layout(pos + 8 * k as u64),
                format!("tile_shape[{k}] at level {depth} is 0; expected > 0"),
            );
        }
        let tags = pos + 8 * rank;
        report.check(
            matches!(t.outer_layout, 0x01..=0x03),
            &LY_TIL_OUTER,
            ctx.layout(tags),
            || {
                format!(
                    "outer_layout at level {depth} is {:#04x}; expected 0x01, 0x02 or 0x03",
                    t.outer_layout
                )
            },
        );
        report.check(
            matches!(t.inner_layout, 0x01..=0x04),
            &LY_TIL_INNER,
            ctx.layout(tags + 1),
            || {
                format!(
                    "inner_layout at level {depth} is {:#04x}; expected 0x01-0x04",
                    t.inner_layout
                )
            },
        );
        report.check(
            t.reserved == [0; 2],
            &LY_TIL_RESERVED,
            ctx.layout(tags + 2),
            || {
                format!(
                    "reserved bytes at level {depth} are {:02x?}; expected zero",
                    t.reserved
                )
            },
        );
        let strides = |v: &Option<Vec<i64>>| v.as_ref().map_or(0, |s| 8 * s.len() as u64);
        pos = tags + 4 + strides(&t.outer_strides) + strides(&t.inner_strides);
        level = t.inner_tiled.as_deref();
    }
    let Ok(map) = TiledMap::new(top, &ctx.desc.shape) else {
        return;
    };
    check_low_side(ctx, &LY_TIL_LOW, report);
    // Each level's inner layout stays inside its tile.
    let mut level = Some((&map, top, 0u64, 1u32));
    while let Some((m, fields, pos, depth)) = level {
        let inner_tag = ctx.layout(pos + 8 * rank + 1);
        if let Some((lo, hi)) = m.inner.range(&m.tile_shape) {
            report.check(lo >= 0 && hi < m.tile_elements, &LY_TIL_INSIDE, inner_tag, || {
                format!(
                    "the inner layout at level {depth} addresses offsets {lo}..={hi} within tiles of {} elements",
                    m.tile_elements
                )
            });
        }
        let strides = |v: &Option<Vec<i64>>| v.as_ref().map_or(0, |s| 8 * s.len() as u64);
        let next =
            pos + 8 * rank + 4 + strides(&fields.outer_strides) + strides(&fields.inner_strides);
        level = match (&m.inner, fields.inner_tiled.as_deref()) {
            (DenseMap::Tiled(nm), Some(nf)) if fields.inner_layout == LAYOUT_TILED => {
                Some((nm, nf, next, depth + 1))
            }
            _ => None,
        };
    }
}

// --- Morton ------------------------------------------------------------------

fn check_morton(ctx: &Ctx, bits: &[u32], report: &mut Report) {
    if let Some(k) = bits.iter().position(|&b| b == 0) {
        report.violation(
            &LY_MOR_BITS,
            ctx.layout(4 * k as u64),
            format!("morton_bits[{k}] is 0; expected > 0"),
        );
    }
    for (k, (&b, &n)) in bits.iter().zip(&ctx.desc.shape).enumerate() {
        if b > 0 && b < 64 && n > 1u64 << b {
            report.violation(
                &LY_MOR_SHAPE,
                ctx.layout(4 * k as u64),
                format!("shape[{k}] = {n} exceeds 2^morton_bits[{k}] = 2^{b}"),
            );
            break;
        }
    }
    check_morton_padding(ctx, bits, report);
}

/// Positions of the Morton curve that hold no logical element must be zero.
fn check_morton_padding(ctx: &Ctx, bits: &[u32], report: &mut Report) {
    let desc = ctx.desc;
    let Some(consent) = DataReads::for_rule(report, &LY_MOR_PADDING) else {
        return;
    };
    let (Some(mut buf), Ok(width), Some(size)) = (
        ctx.data(consent),
        element_bits(desc),
        required_buffer_size(desc),
    ) else {
        return;
    };
    if DenseMap::new(desc.layout_tag, &desc.layout, &desc.shape).is_err() || size > buf.len() {
        return;
    }
    // Positions from byte_offset to the end of the required size; a partial 6-bit
    // group's unused positions count as padding too.
    let Some(span) = (size - desc.byte_offset)
        .checked_mul(8)
        .map(|b| b / u64::from(width))
    else {
        return;
    };
    let base = desc.byte_offset * 8;
    for code in 0..span {
        let logical = morton_decode(u128::from(code), bits)
            .is_some_and(|idx| idx.iter().zip(&desc.shape).all(|(i, n)| i < n));
        if logical {
            continue;
        }
        let value = buf.bits(base + code * u64::from(width), width).unwrap_or(0);
        if value != 0 {
            report.violation(
                &LY_MOR_PADDING,
                ctx.at(0, (base + code * u64::from(width)) / 8),
                format!("Morton position {code} holds no element but is {value:#x}; expected 0"),
            );
            return;
        }
    }
}

// --- Hilbert -----------------------------------------------------------------

fn check_hilbert(ctx: &Ctx, h: &HilbertFields, report: &mut Report) {
    let rank = ctx.rank();
    report.check(h.hilbert_order > 0, &LY_HIL_ORDER, ctx.layout(0), || {
        "hilbert_order is 0; expected > 0".into()
    });
    if rank == 0 {
        // A rank-0 tensor is rejected by TD-LAY-002 whatever its fields.
        return;
    }
    report.check(
        h.hilbert_rank as usize == rank,
        &LY_HIL_RANK,
        ctx.layout(4),
        || {
            format!(
                "hilbert_rank is {}; expected the tensor's rank {rank}",
                h.hilbert_rank
            )
        },
    );
    report.check(h.hilbert_rank >= 2, &LY_HIL_MIN_RANK, ctx.layout(4), || {
        format!("hilbert_rank is {}; expected at least 2", h.hilbert_rank)
    });
    if h.hilbert_order == 0 || h.hilbert_rank as usize != rank || h.hilbert_rank < 2 {
        return;
    }
    let side = (h.hilbert_order < 64).then(|| 1u64 << h.hilbert_order);
    if let Some(k) = ctx.desc.shape.iter().position(|&n| Some(n) != side) {
        report.violation(
            &LY_HIL_SHAPE,
            ctx.shape_pos(k),
            format!(
                "shape[{k}] is {}; expected 2^hilbert_order = 2^{}",
                ctx.desc.shape[k], h.hilbert_order
            ),
        );
        return;
    }
    // Exact, not a minimum (docs/interpretations.md § Layouts): with every dimension
    // 2^order the curve spans exactly the 2^(rank * order) elements. Quantized data
    // is sized by the quantization rules.
    if ctx.desc.quantization.is_some() {
        return;
    }
    let (Some(need), Some(b0)) = (required_buffer_size(ctx.desc), ctx.desc.buffers.first()) else {
        return;
    };
    if ctx.desc.byte_offset > b0.byte_size {
        // TD-BUF-004's fault.
        return;
    }
    report.check(b0.byte_size == need, &LY_HIL_SIZE, ctx.handle(0), || {
        format!(
            "buffer 0 holds {} bytes; byte_offset {} plus exactly 2^({} * {}) elements make {need}",
            b0.byte_size, ctx.desc.byte_offset, h.hilbert_rank, h.hilbert_order
        )
    });
}

// --- shared sparse / indirect checks -------------------------------------------

/// byte_offset 0, buffer count, statistics nnz. Returns whether the buffer table
/// has at least the `base` buffers the layout names.
fn check_common(
    ctx: &Ctx,
    base: u64,
    count_rule: &'static Rule,
    nnz: Option<u64>,
    report: &mut Report,
) -> bool {
    let desc = ctx.desc;
    report.check(
        desc.byte_offset == 0,
        &LY_SPR_BYTE_OFFSET,
        ctx.byte_offset_pos(),
        || {
            format!(
                "byte_offset is {}; expected 0 for a sparse or indirect layout",
                desc.byte_offset
            )
        },
    );
    let count = desc.buffers.len() as u64;
    let quantized = desc.flags.has_quantization();
    report.check(
        count == base || (quantized && count > base),
        count_rule,
        ctx.base + desc.buffer_table_pos(),
        || {
            if quantized {
                format!("buffer_count is {count}; expected at least {base}")
            } else {
                format!("buffer_count is {count}; expected {base}")
            }
        },
    );
    if let (Some(nnz), Some(stats)) = (nnz, &desc.statistics) {
        if stats.computed_mask & Statistics::NNZ_VALID != 0 {
            report.check(
                stats.nnz == nnz,
                &LY_SPR_STATS_NNZ,
                ctx.base + desc.statistics_pos() + 8,
                || format!("statistics nnz is {}; the layout's nnz is {nnz}", stats.nnz),
            );
        }
    }
    count >= base
}

/// Packed bytes of `n` stored values of the tensor's element type.
fn values_size(desc: &TensorDescriptor, n: u64) -> Option<u64> {
    packed_size(element_bits(desc).ok()?, n)
}

/// Checks that buffer `i` declares at least `need` bytes (`None`: more than 2^64).
fn check_size(
    ctx: &Ctx,
    rule: &'static Rule,
    i: usize,
    name: &str,
    need: Option<u64>,
    report: &mut Report,
) -> bool {
    let have = ctx.declared(i);
    report.check(
        need.is_some_and(|n| have >= n),
        rule,
        ctx.handle(i),
        || match need {
            Some(n) => format!("buffer {i} ({name}) holds {have} bytes; expected at least {n}"),
            None => format!("buffer {i} ({name}) would need more than 2^64 bytes"),
        },
    )
}

/// Lexicographic comparison of COO tuples `a` and `b`.
fn tuple_cmp(ix: &IndexArray, rank: u64, a: u64, b: u64) -> std::cmp::Ordering {
    for d in 0..rank {
        let (x, y) = (
            ix.get(a * rank + d).unwrap_or(0),
            ix.get(b * rank + d).unwrap_or(0),
        );
        if x != y {
            return x.cmp(&y);
        }
    }
    std::cmp::Ordering::Equal
}

// --- COO -----------------------------------------------------------------------

fn check_coo(ctx: &Ctx, c: &CooFields, report: &mut Report) {
    let has_buffers = check_common(ctx, 2, &LY_COO_BUFFERS, Some(c.nnz), report);
    report.check(c.is_sorted <= 1, &LY_COO_SORTED_FLAG, ctx.layout(8), || {
        format!("is_sorted is {:#04x}; expected 0x00 or 0x01", c.is_sorted)
    });
    report.check(
        c.reserved == [0; 7],
        &LY_COO_RESERVED,
        ctx.layout(9),
        || format!("reserved bytes are {:02x?}; expected zero", c.reserved),
    );
    let rank = ctx.rank() as u64;
    if !has_buffers {
        return;
    }
    let ok_values = check_size(
        ctx,
        &LY_COO_SIZES,
        0,
        "values",
        values_size(ctx.desc, c.nnz),
        report,
    );
    let index_bytes = c.nnz.checked_mul(rank).and_then(|n| n.checked_mul(8));
    let ok_indices = ok_values && check_size(ctx, &LY_COO_SIZES, 1, "indices", index_bytes, report);
    if !ok_indices || rank == 0 {
        return;
    }
    let Some(ix) = ctx.entries(1, 8) else { return };
    let ix = ix.array();
    if ix.len() < c.nnz * rank {
        return;
    }
    // Coordinates in range.
    'range: for i in 0..c.nnz {
        for d in 0..rank {
            let v = ix.get(i * rank + d).unwrap_or(0);
            if v >= ctx.desc.shape[d as usize] {
                report.violation(
                    &LY_COO_RANGE,
                    ctx.at(1, (i * rank + d) * 8),
                    format!(
                        "entry {i}: coordinate {v} along dimension {d} is not below shape {}",
                        ctx.desc.shape[d as usize]
                    ),
                );
                break 'range;
            }
        }
    }
    // Order, when promised: ties are duplicates, reported below.
    if c.is_sorted == 1 {
        if let Some(i) = (1..c.nnz).find(|&i| tuple_cmp(&ix, rank, i - 1, i).is_gt()) {
            report.violation(
                &LY_COO_ORDER,
                ctx.at(1, i * rank * 8),
                format!(
                    "is_sorted is 0x01 but entry {i} sorts before entry {}",
                    i - 1
                ),
            );
        }
    }
    // Duplicates: sort positions by tuple (nnz * rank * 8 bytes were present, so
    // the permutation is smaller than the input).
    let mut order: Vec<u64> = (0..c.nnz).collect();
    order.sort_by(|&a, &b| tuple_cmp(&ix, rank, a, b));
    if let Some(w) = order
        .windows(2)
        .find(|w| tuple_cmp(&ix, rank, w[0], w[1]).is_eq())
    {
        let (a, b) = (w[0].min(w[1]), w[0].max(w[1]));
        report.violation(
            &LY_COO_DUPLICATE,
            ctx.at(1, b * rank * 8),
            format!("entries {a} and {b} have the same index tuple"),
        );
    }
}

// --- CSR / CSC -----------------------------------------------------------------

struct CompressedRules {
    rank: &'static Rule,
    buffers: &'static Rule,
    reserved: &'static Rule,
    sizes: &'static Rule,
    ends: &'static Rule,
    monotone: &'static Rule,
    sorted: &'static Rule,
    range: &'static Rule,
    /// Name of the pointer array and the index array.
    names: (&'static str, &'static str),
    /// Dimension the pointers run over and dimension the indices address.
    dims: (usize, usize),
}

const CSR: CompressedRules = CompressedRules {
    rank: &LY_CSR_RANK,
    buffers: &LY_CSR_BUFFERS,
    reserved: &LY_CSR_RESERVED,
    sizes: &LY_CSR_SIZES,
    ends: &LY_CSR_ENDS,
    monotone: &LY_CSR_MONOTONE,
    sorted: &LY_CSR_SORTED,
    range: &LY_CSR_RANGE,
    names: ("row_ptr", "col_indices"),
    dims: (0, 1),
};

const CSC: CompressedRules = CompressedRules {
    rank: &LY_CSC_RANK,
    buffers: &LY_CSC_BUFFERS,
    reserved: &LY_CSC_RESERVED,
    sizes: &LY_CSC_SIZES,
    ends: &LY_CSC_ENDS,
    monotone: &LY_CSC_MONOTONE,
    sorted: &LY_CSC_SORTED,
    range: &LY_CSC_RANGE,
    names: ("col_ptr", "row_indices"),
    dims: (1, 0),
};

fn check_compressed(ctx: &Ctx, c: &CompressedFields, report: &mut Report) {
    let r = if ctx.desc.layout_tag == LAYOUT_CSC {
        &CSC
    } else {
        &CSR
    };
    let rank = ctx.rank();
    if rank != 0 {
        report.check(
            rank == 2,
            r.rank,
            ctx.base + descriptor_offsets::RANK,
            || format!("rank is {rank}; expected 2"),
        );
    }
    let has_buffers = check_common(ctx, 3, r.buffers, Some(c.nnz), report);
    report.check(c.reserved == [0; 8], r.reserved, ctx.layout(8), || {
        format!("reserved bytes are {:02x?}; expected zero", c.reserved)
    });
    if rank != 2 || !has_buffers {
        return;
    }
    let (ptr_name, idx_name) = r.names;
    let majors = ctx.desc.shape[r.dims.0];
    let minor_bound = ctx.desc.shape[r.dims.1];
    let nnz = c.nnz;
    let sizes_ok = check_size(
        ctx,
        r.sizes,
        0,
        "values",
        values_size(ctx.desc, nnz),
        report,
    ) && check_size(ctx, r.sizes, 1, idx_name, nnz.checked_mul(8), report)
        && check_size(
            ctx,
            r.sizes,
            2,
            ptr_name,
            majors.checked_add(1).and_then(|n| n.checked_mul(8)),
            report,
        );
    if !sizes_ok {
        return;
    }
    let (Some(idx), Some(ptr)) = (ctx.entries(1, 8), ctx.entries(2, 8)) else {
        return;
    };
    let (idx, ptr) = (idx.array(), ptr.array());
    if ptr.len() <= majors || idx.len() < nnz {
        return;
    }
    let get = |a: &IndexArray, i: u64| a.get(i).unwrap_or(0);
    let (first, last) = (get(&ptr, 0), get(&ptr, majors));
    let ends_at = ctx.at(2, if first == 0 { majors * 8 } else { 0 });
    report.check(first == 0 && last == nnz, r.ends, ends_at, || {
        format!("{ptr_name}[0] is {first} and {ptr_name}[{majors}] is {last}; expected 0 and nnz = {nnz}")
    });
    let decreasing = (0..majors).find(|&k| get(&ptr, k) > get(&ptr, k + 1));
    if let Some(k) = decreasing {
        report.violation(
            r.monotone,
            ctx.at(2, (k + 1) * 8),
            format!(
                "{ptr_name}[{k}] = {} exceeds {ptr_name}[{}] = {}",
                get(&ptr, k),
                k + 1,
                get(&ptr, k + 1)
            ),
        );
    }
    if let Some(j) = (0..nnz).find(|&j| get(&idx, j) >= minor_bound) {
        report.violation(
            r.range,
            ctx.at(1, j * 8),
            format!(
                "{idx_name}[{j}] = {} is not below {minor_bound}",
                get(&idx, j)
            ),
        );
    }
    if decreasing.is_some() {
        return;
    }
    // Non-decreasing pointers: the slices are disjoint, so this reads each index once.
    'slices: for k in 0..majors {
        let (start, end) = (get(&ptr, k), get(&ptr, k + 1).min(nnz));
        for j in start.saturating_add(1)..end {
            if get(&idx, j - 1) >= get(&idx, j) {
                report.violation(
                    r.sorted,
                    ctx.at(1, j * 8),
                    format!(
                        "{idx_name}[{}] = {} is not below {idx_name}[{j}] = {} in slice {k}",
                        j - 1,
                        get(&idx, j - 1),
                        get(&idx, j)
                    ),
                );
                break 'slices;
            }
        }
    }
}

// --- CSF -----------------------------------------------------------------------

fn check_csf(ctx: &Ctx, c: &CsfFields, report: &mut Report) {
    let desc = ctx.desc;
    let rank = ctx.rank();
    if rank != 0 {
        report.check(
            rank >= 3,
            &LY_CSF_RANK,
            ctx.base + descriptor_offsets::RANK,
            || format!("rank is {rank}; expected at least 3"),
        );
    }
    let base = 2 * rank as u64 + 1;
    let has_buffers = check_common(ctx, base, &LY_CSF_BUFFERS, Some(c.nnz), report);
    report.check(
        c.reserved == [0; 8],
        &LY_CSF_RESERVED,
        ctx.layout(8 + 4 * rank as u64),
        || format!("reserved bytes are {:02x?}; expected zero", c.reserved),
    );
    let mut seen = vec![false; rank];
    let permutation = c.mode_order.len() == rank
        && c.mode_order
            .iter()
            .all(|&m| (m as usize) < rank && !std::mem::replace(&mut seen[m as usize], true));
    report.check(permutation, &LY_CSF_MODE_ORDER, ctx.layout(8), || {
        format!(
            "mode_order {:?} is not a permutation of 0..{rank}",
            c.mode_order
        )
    });
    report.check(
        desc.shard.is_none(),
        &LY_CSF_SHARD,
        ctx.base + descriptor_offsets::FLAGS,
        || "a CSF tensor carries a shard section".into(),
    );
    if rank == 0 || !has_buffers {
        return;
    }
    if !check_size(
        ctx,
        &LY_CSF_SIZES,
        0,
        "values",
        values_size(desc, c.nnz),
        report,
    ) {
        return;
    }
    let get = |a: &IndexArray, i: u64| a.get(i).unwrap_or(0);
    let mut parents = 1u64; // n_(L-1): one virtual root above level 0
    for level in 0..rank {
        let (pi, ci) = (2 * level + 1, 2 * level + 2);
        let pos_need = parents.checked_add(1).and_then(|n| n.checked_mul(8));
        if !check_size(
            ctx,
            &LY_CSF_SIZES,
            pi,
            &format!("pos_{level}"),
            pos_need,
            report,
        ) {
            return;
        }
        let Some(pos) = ctx.entries(pi, 8) else {
            return;
        };
        let pos = pos.array();
        if pos.len() <= parents {
            return;
        }
        report.check(get(&pos, 0) == 0, &LY_CSF_ENDS, ctx.at(pi, 0), || {
            format!("pos_{level}[0] is {}; expected 0", get(&pos, 0))
        });
        let decreasing = (0..parents).find(|&k| get(&pos, k) > get(&pos, k + 1));
        if let Some(k) = decreasing {
            report.violation(
                &LY_CSF_MONOTONE,
                ctx.at(pi, (k + 1) * 8),
                format!(
                    "pos_{level}[{k}] = {} exceeds pos_{level}[{}] = {}",
                    get(&pos, k),
                    k + 1,
                    get(&pos, k + 1)
                ),
            );
        }
        let nodes = get(&pos, parents);
        if level + 1 == rank {
            report.check(
                nodes == c.nnz,
                &LY_CSF_ENDS,
                ctx.at(pi, parents * 8),
                || {
                    format!(
                    "pos_{level}[{parents}] is {nodes}; the leaf level must hold nnz = {} entries",
                    c.nnz
                )
                },
            );
        }
        if !check_size(
            ctx,
            &LY_CSF_SIZES,
            ci,
            &format!("crd_{level}"),
            nodes.checked_mul(8),
            report,
        ) {
            return;
        }
        let Some(crd) = ctx.entries(ci, 8) else {
            return;
        };
        let crd = crd.array();
        if crd.len() < nodes {
            return;
        }
        if permutation {
            let dim = c.mode_order[level] as usize;
            let bound = desc.shape[dim];
            if let Some(i) = (0..nodes).find(|&i| get(&crd, i) >= bound) {
                report.violation(
                    &LY_CSF_RANGE,
                    ctx.at(ci, i * 8),
                    format!(
                        "crd_{level}[{i}] = {} is not below shape[{dim}] = {bound}",
                        get(&crd, i)
                    ),
                );
            }
        }
        if decreasing.is_none() {
            'slices: for k in 0..parents {
                let (start, end) = (get(&pos, k), get(&pos, k + 1).min(nodes));
                for i in start.saturating_add(1)..end {
                    if get(&crd, i - 1) >= get(&crd, i) {
                        report.violation(
                            &LY_CSF_SORTED,
                            ctx.at(ci, i * 8),
                            format!("crd_{level}[{}] = {} is not below crd_{level}[{i}] = {} under parent {k}", i - 1, get(&crd, i - 1), get(&crd, i)),
                        );
                        break 'slices;
                    }
                }
            }
        }
        parents = nodes;
    }
}

// --- block-paged ---------------------------------------------------------------

fn check_block_paged(ctx: &Ctx, b: &BlockPagedFields, report: &mut Report) {
    let desc = ctx.desc;
    let rank = ctx.rank();
    if rank != 0 {
        report.check(
            rank == 3,
            &LY_BP_RANK,
            ctx.base + descriptor_offsets::RANK,
            || format!("rank is {rank}; expected 3"),
        );
    }
    let has_buffers = check_common(ctx, 3, &LY_BP_BUFFERS, None, report);
    report.check(b.page_size >= 1, &LY_BP_PAGE_SIZE, ctx.layout(0), || {
        "page_size is 0; expected >= 1".into()
    });
    report.check(b.paged_axis == 0, &LY_BP_AXIS, ctx.layout(12), || {
        format!("paged_axis is {}; expected 0", b.paged_axis)
    });
    report.check(b.kv_role <= 2, &LY_BP_ROLE, ctx.layout(20), || {
        format!("kv_role is {:#04x}; expected 0x00, 0x01 or 0x02", b.kv_role)
    });
    report.check(
        b.block_table_index_type <= 1,
        &LY_BP_INDEX_TYPE,
        ctx.layout(25),
        || {
            format!(
                "block_table_index_type is {:#04x}; expected 0x00 or 0x01",
                b.block_table_index_type
            )
        },
    );
    // The sentence sits in a non-normative note of block-paged.md, hence hardening:
    // uint32 entries cannot name the pages past 0xFFFFFFFF.
    report.check(
        b.block_table_index_type != 0 || b.num_pages <= u64::from(u32::MAX),
        &LY_BP_INDEX_WIDTH,
        ctx.layout(25),
        || {
            format!(
                "num_pages is {}; a pool of more than 0xFFFFFFFF pages needs block_table_index_type 0x01 (uint64)",
                b.num_pages
            )
        },
    );
    report.check(
        b.reserved == [0; 6],
        &LY_BP_RESERVED,
        ctx.layout(26),
        || format!("reserved bytes are {:02x?}; expected zero", b.reserved),
    );
    report.check(
        desc.shard.is_none(),
        &LY_BP_SHARD,
        ctx.base + descriptor_offsets::FLAGS,
        || "a block-paged tensor carries a shard section".into(),
    );
    if let Some(first) = desc.buffers.first() {
        let differs = desc.buffers.iter().enumerate().find_map(|(i, h)| {
            if h.device_tag != first.device_tag {
                Some((
                    i,
                    BufferHandle::DEVICE_TAG,
                    "device_tag",
                    h.device_tag,
                    first.device_tag,
                ))
            } else if h.memory_class != first.memory_class {
                Some((
                    i,
                    BufferHandle::MEMORY_CLASS,
                    "memory_class",
                    h.memory_class,
                    first.memory_class,
                ))
            } else {
                None
            }
        });
        if let Some((i, field, name, found, want)) = differs {
            report.violation(
                &LY_BP_DEVICE,
                ctx.handle(i) + field,
                format!("buffer {i} has {name} {found:#04x}; buffer 0 has {want:#04x}"),
            );
        }
    }
    if !has_buffers || b.block_table_index_type > 1 {
        return;
    }
    let entry = if b.block_table_index_type == 0 {
        4usize
    } else {
        8
    };
    if rank == 3 {
        let slots = b
            .num_pages
            .checked_mul(u64::from(b.page_size))
            .and_then(|n| n.checked_mul(desc.shape[1]))
            .and_then(|n| n.checked_mul(desc.shape[2]));
        check_size(
            ctx,
            &LY_BP_SIZES,
            0,
            "page_pool",
            slots.and_then(|n| values_size(desc, n)),
            report,
        );
    }
    let seq_need = u64::from(b.num_seqs)
        .checked_add(1)
        .map(|n| n * entry as u64);
    if !check_size(ctx, &LY_BP_SIZES, 2, "seq_ptr", seq_need, report) {
        return;
    }
    let Some(seq) = ctx.entries(2, entry) else {
        return;
    };
    let seq = seq.array();
    // Without a block_table to read (a caller's short buffer list) nothing more is
    // judged; it is read once its size is known to be right.
    if ctx.buffers.and_then(|b| b.len(1)).is_none() {
        return;
    }
    let seqs = u64::from(b.num_seqs);
    if seq.len() <= seqs {
        return;
    }
    let get = |a: &IndexArray, i: u64| a.get(i).unwrap_or(0);
    report.check(get(&seq, 0) == 0, &LY_BP_SEQ_START, ctx.at(2, 0), || {
        format!("seq_ptr[0] is {}; expected 0", get(&seq, 0))
    });
    if let Some(s) = (0..seqs).find(|&s| get(&seq, s) > get(&seq, s + 1)) {
        report.violation(
            &LY_BP_MONOTONE,
            ctx.at(2, (s + 1) * entry as u64),
            format!(
                "seq_ptr[{s}] = {} exceeds seq_ptr[{}] = {}",
                get(&seq, s),
                s + 1,
                get(&seq, s + 1)
            ),
        );
    }
    let pages = get(&seq, seqs);
    if !check_size(
        ctx,
        &LY_BP_SIZES,
        1,
        "block_table",
        pages.checked_mul(entry as u64),
        report,
    ) {
        return;
    }
    let Some(table) = ctx.entries(1, entry) else {
        return;
    };
    let table = table.array();
    if table.len() < pages {
        return;
    }
    if let Some(k) = (0..pages).find(|&k| get(&table, k) >= b.num_pages) {
        report.violation(
            &LY_BP_PAGE_RANGE,
            ctx.at(1, k * entry as u64),
            format!(
                "block_table[{k}] = {} is not below num_pages = {}",
                get(&table, k),
                b.num_pages
            ),
        );
    }
    if rank == 3 {
        let capacity = u128::from(pages) * u128::from(b.page_size);
        report.check(
            u128::from(desc.shape[0]) <= capacity,
            &LY_BP_TOKENS,
            ctx.shape_pos(0),
            || {
                format!(
                    "shape[0] = {} tokens exceed the {capacity} slots of {pages} logical pages",
                    desc.shape[0]
                )
            },
        );
    }
}

// --- composite close-time checks -------------------------------------------------

/// True for the element types a dequantized member can decode to.
fn is_float_type(tag: u8) -> bool {
    matches!(tag, 0x01..=0x04)
}

/// Close-time validation of a composite (layouts/composite.md § Validation): `head`
/// at absolute offset `head_offset`, and its `member_count` members in emission
/// order with their absolute descriptor offsets. Head fields, nesting depth, torn
/// composites and member-section presence are container rules; this checks the
/// members against the head and, for a partition, exact cover without overlap.
pub fn check_composite(
    head: &TensorDescriptor,
    head_offset: u64,
    members: &[(&TensorDescriptor, u64)],
    report: &mut Report,
) {
    let LayoutFields::Composite(fields) = &head.layout else {
        return;
    };
    const PARTITION: u8 = 0x01;
    const OVERLAY: u8 = 0x02;
    let rule = fields.composition_rule;
    if rule != PARTITION && rule != OVERLAY {
        return;
    }
    let head_pos = head_offset + head.layout_pos();
    if rule == OVERLAY && fields.member_count == 0 {
        report.violation(
            &LY_CMP_EMPTY_OVERLAY,
            head_pos + 4,
            "an overlay head has member_count 0; an overlay needs a base member",
        );
    }
    let rank = head.shape.len();
    // Boxes of members whose shard section places them inside the head.
    let mut boxes: Vec<(usize, &[u64], &[u64])> = Vec::new();
    let mut all_placed = true;
    for (m, &(member, offset)) in members.iter().enumerate() {
        let Some(shard) = &member.shard else {
            report.violation(
                &LY_CMP_SHARD,
                offset + descriptor_offsets::FLAGS,
                format!("member {m} has no shard section (HAS_SHARD clear)"),
            );
            all_placed = false;
            continue;
        };
        let shard_pos = offset + member.shard_pos();
        if shard.parent_shape != head.shape {
            report.violation(
                &LY_CMP_PARENT,
                shard_pos,
                format!(
                    "member {m} parent_shape {:?} differs from the head's shape {:?}",
                    shard.parent_shape, head.shape
                ),
            );
            all_placed = false;
        } else if member.shape.len() == rank
            && (0..rank).all(|k| {
                shard.shard_offset[k]
                    .checked_add(member.shape[k])
                    .is_some_and(|end| end <= head.shape[k])
            })
        {
            boxes.push((m, &shard.shard_offset, &member.shape));
        } else {
            // Out of bounds: TD-SHD-001 reports it.
            all_placed = false;
        }
        let decodes = if member.flags.has_quantization() {
            is_float_type(head.type_tag)
        } else {
            member.type_tag == head.type_tag
        };
        report.check(
            decodes,
            &LY_CMP_TYPE,
            offset + descriptor_offsets::TYPE_TAG,
            || {
                format!(
                "member {m} {} type {:#04x}, which does not decode to the head's type_tag {:#04x}",
                if member.flags.has_quantization() { "is quantized from" } else { "has" },
                member.type_tag,
                head.type_tag
            )
            },
        );
        if rule == OVERLAY {
            let role_pos = offset + member.composite_member_pos();
            let role = member.composite_member.map(|c| c.member_role);
            if m == 0 {
                let spans =
                    shard.shard_offset.iter().all(|&o| o == 0) && member.shape == head.shape;
                if role == Some(0) || !spans {
                    report.violation(
                        &LY_CMP_BASE,
                        if spans { role_pos } else { shard_pos },
                        format!("the first overlay member must be the base spanning {:?}; found role {role:?}, offset {:?}, shape {:?}", head.shape, shard.shard_offset, member.shape),
                    );
                }
            } else if role == Some(1) {
                report.violation(&LY_CMP_CORRECTION, role_pos, format!("overlay member {m} has member_role 0x01 (base); only the first member is the base"));
            }
        }
    }
    if rule != PARTITION {
        return;
    }
    check_partition(head, head_pos, members, &boxes, all_placed, report);
}

/// Exact cover without overlap of a partition's member boxes.
fn check_partition(
    head: &TensorDescriptor,
    head_pos: u64,
    members: &[(&TensorDescriptor, u64)],
    boxes: &[(usize, &[u64], &[u64])],
    all_placed: bool,
    report: &mut Report,
) {
    use crate::layout::composite::{partition_fault, PartitionFault};
    match partition_fault(&head.shape, boxes, all_placed) {
        Some(PartitionFault::Overlap { first, second }) => report.violation(
            &LY_CMP_OVERLAP,
            members[second].1 + members[second].0.shard_pos(),
            format!("member {second}'s box overlaps member {first}'s box"),
        ),
        Some(PartitionFault::Cover { covered, total }) => report.violation(
            &LY_CMP_COVER,
            head_pos,
            format!(
                "the {} member boxes cover {covered} of the head's {total} indices",
                members.len()
            ),
        ),
        None => {}
    }
}

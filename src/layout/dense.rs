//! Dense layouts: element positions in buffer 0, the buffer size a layout needs,
//! and copies between a layout and logical row-major order.

use std::io::Write;

use crate::model::packed_size;
use crate::schema::{
    LayoutFields, TensorDescriptor, LAYOUT_COLUMN_MAJOR, LAYOUT_HILBERT, LAYOUT_MORTON,
    LAYOUT_ROW_MAJOR, LAYOUT_STRIDED, LAYOUT_TILED,
};

use super::addressing::{row_major_strides, DenseMap};
use super::bits::{
    clear_packing_tail, nonzero_packing_tail, nonzero_packing_tail_from, packing_tail_range,
    read_bits, write_bits, PackedWriter,
};
use super::element::{checked_count, element_bits};
use super::error;
use crate::error::Error;

/// Output bytes gathered at a time by [`DenseView::stream_row_major`].
const SLAB_BYTES: u64 = 4 << 20;
/// Columns gathered together per row within a slab.
#[doc(hidden)]
pub const BLOCK: u64 = 64;

/// True for the dense layout tags (row-major, column-major, strided, tiled, Morton,
/// Hilbert).
pub fn is_dense(layout_tag: u8) -> bool {
    matches!(
        layout_tag,
        LAYOUT_ROW_MAJOR
            | LAYOUT_COLUMN_MAJOR
            | LAYOUT_STRIDED
            | LAYOUT_TILED
            | LAYOUT_MORTON
            | LAYOUT_HILBERT
    )
}

/// True for the layouts whose elements are one contiguous packed run from
/// `byte_offset`: row-major and column-major.
pub(crate) fn is_contiguous(layout_tag: u8) -> bool {
    matches!(layout_tag, LAYOUT_ROW_MAJOR | LAYOUT_COLUMN_MAJOR)
}

/// The packed run of an unquantized row- or column-major tensor: element count,
/// bits per element and the byte where it starts in buffer 0.
pub(crate) fn packed_run(desc: &TensorDescriptor) -> Option<(u64, u32, usize)> {
    if !is_contiguous(desc.layout_tag) || desc.quantization.is_some() {
        return None;
    }
    let width = element_bits(desc).ok()?;
    let count = checked_count(&desc.shape).ok()?;
    Some((count, width, usize::try_from(desc.byte_offset).ok()?))
}

/// A byte with set bits after the last packed sub-byte element of a run, which
/// element-types.md requires to be zero (`TD-BUF-006`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnusedTail {
    /// Index of the byte in buffer 0.
    pub byte_index: u64,
    /// Its value.
    pub byte: u8,
    /// Elements in the run.
    pub count: u64,
    /// Bits per element.
    pub width: u32,
}

impl std::fmt::Display for UnusedTail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} packed {}-bit elements leave set bits in the final byte: 0x{:02X}, expected the bits after the last element to be 0",
            self.count, self.width, self.byte
        )
    }
}

/// The unused tail of `count` `width`-bit elements packed from byte `start` of
/// `buffer0`, when it has a set bit.
pub(crate) fn nonzero_tail_of_run(
    buffer0: &[u8],
    count: u64,
    width: u32,
    start: u64,
) -> Option<UnusedTail> {
    let run = buffer0.get(usize::try_from(start).ok()?..)?;
    let (i, byte) = nonzero_packing_tail(run, count, width)?;
    Some(UnusedTail {
        byte_index: start + i,
        byte,
        count,
        width,
    })
}

/// Where in buffer 0 [`nonzero_tail_of_run`] looks: `(first byte, byte count)`, at
/// most three bytes; `None` when that lies past 2^64.
pub(crate) fn tail_of_run_window(count: u64, width: u32, start: u64) -> Option<(u64, u64)> {
    let (first, end) = packing_tail_range(count, width);
    Some((start.checked_add(first)?, end - first))
}

/// [`nonzero_tail_of_run`] judged on `window` alone: buffer 0's bytes from the first
/// byte of [`tail_of_run_window`] (fewer when the buffer ends first).
pub(crate) fn nonzero_tail_in_window(
    window: &[u8],
    count: u64,
    width: u32,
    start: u64,
) -> Option<UnusedTail> {
    let (first, _) = packing_tail_range(count, width);
    let (i, byte) = nonzero_packing_tail_from(window, first, count, width)?;
    Some(UnusedTail {
        byte_index: start.checked_add(i)?,
        byte,
        count,
        width,
    })
}

/// For an unquantized row- or column-major sub-byte tensor, its unused tail when
/// it has a set bit. Quantized tensors are judged on their storage shape by the
/// quantization checks, through [`nonzero_tail_of_run`]. Validation reads only the
/// window ([`tail_of_run_window`]); this whole-buffer form is the tests' reference.
#[cfg(test)]
fn nonzero_unused_tail(desc: &TensorDescriptor, buffer0: &[u8]) -> Option<UnusedTail> {
    let (count, width, start) = packed_run(desc)?;
    nonzero_tail_of_run(buffer0, count, width, start as u64)
}

/// The few bytes of buffer 0 that `nonzero_unused_tail` looks at: the packing unit
/// (one byte, or three for 6-bit types) the last element of the run ends in. A writer
/// that streams buffer 0 in pieces keeps a copy of these bytes as they pass and
/// judges them at the end with [`TailWindow::check`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TailWindow {
    /// Index in buffer 0 of the window's first byte.
    pub start: u64,
    /// Bytes in the window.
    pub len: u64,
    /// Elements of the run that end inside the window.
    count_in_window: u64,
    /// Elements in the whole run.
    count: u64,
    /// Bits per element.
    width: u32,
}

impl TailWindow {
    /// The window of an unquantized row- or column-major sub-byte tensor whose last
    /// packing unit is partly unused; `None` when there are no unused bits.
    pub fn of(desc: &TensorDescriptor) -> Option<Self> {
        let (count, width, run_start) = packed_run(desc)?;
        let (unit_elements, unit_bytes) = match width {
            6 => (4u64, 3u64),
            1 | 2 | 4 => (u64::from(8 / width), 1),
            _ => return None,
        };
        let count_in_window = count % unit_elements;
        if count_in_window == 0 {
            return None;
        }
        let start = (count / unit_elements)
            .checked_mul(unit_bytes)?
            .checked_add(run_start as u64)?;
        Some(TailWindow {
            start,
            len: unit_bytes,
            count_in_window,
            count,
            width,
        })
    }

    /// The part of `buffer0` the window covers (shorter, or empty, where the
    /// buffer ends early).
    pub fn bytes_of<'b>(&self, buffer0: &'b [u8]) -> &'b [u8] {
        let clamp = |at: u64| usize::try_from(at).map_or(buffer0.len(), |at| at.min(buffer0.len()));
        &buffer0[clamp(self.start)..clamp(self.end())]
    }

    /// Index in buffer 0 just past the window (saturating: a descriptor's
    /// `byte_offset` may put the window near 2^64).
    pub fn end(&self) -> u64 {
        self.start.saturating_add(self.len)
    }

    /// The unused tail when it has a set bit, judged on `window`: the bytes of
    /// buffer 0 from [`TailWindow::start`] (fewer than [`TailWindow::len`] when the
    /// buffer ends early; missing bytes are not looked at, as in
    /// `nonzero_unused_tail`).
    pub fn check(&self, window: &[u8]) -> Option<UnusedTail> {
        let tail = nonzero_tail_of_run(window, self.count_in_window, self.width, 0)?;
        Some(UnusedTail {
            byte_index: self.start.saturating_add(tail.byte_index),
            count: self.count,
            ..tail
        })
    }
}

/// Clears the bits `nonzero_unused_tail` looks at: makes arbitrary bytes (a fill
/// pattern, random data) a valid packing.
#[doc(hidden)]
pub fn clear_unused_tail(desc: &TensorDescriptor, buffer0: &mut [u8]) {
    if let Some((count, width, start)) = packed_run(desc) {
        if let Some(run) = buffer0.get_mut(start..) {
            clear_packing_tail(run, count, width);
        }
    }
}

/// Elements a dense layout's buffer 0 must span from `byte_offset`: every element
/// it addresses plus the padding the layout prescribes (whole tiles, the whole
/// Morton or Hilbert curve). An `HF-LIM-001` error when the count exceeds 128 bits.
fn span_elements(desc: &TensorDescriptor, map: &DenseMap) -> Result<u128, Error> {
    let too_big = || error::overflow("buffer span");
    let count = u128::from(checked_count(&desc.shape)?);
    let range_top = |map: &DenseMap| -> Result<u128, Error> {
        let (_, hi) = map.range(&desc.shape).ok_or_else(too_big)?;
        u128::try_from(hi)
            .ok()
            .and_then(|h| h.checked_add(1))
            .ok_or_else(too_big)
    };
    match (&desc.layout, map) {
        (LayoutFields::Implicit, _) => Ok(count),
        (LayoutFields::Strided { .. }, _) => {
            if count == 0 {
                Ok(0)
            } else {
                range_top(map)
            }
        }
        (LayoutFields::Tiled(_), DenseMap::Tiled(t)) => {
            if count == 0 {
                return Ok(0);
            }
            // tiled.md: total_tiles * total_tile_elements, or more when strided
            // tile grids or tiles reach further.
            let tiles = t
                .grid
                .iter()
                .try_fold(1u128, |acc, &g| acc.checked_mul(u128::from(g)))
                .ok_or_else(too_big)?;
            let formula = tiles
                .checked_mul(u128::try_from(t.tile_elements).map_err(|_| too_big())?)
                .ok_or_else(too_big)?;
            Ok(formula.max(range_top(map)?))
        }
        (LayoutFields::Morton { morton_bits }, _) => {
            let total: u64 = morton_bits.iter().map(|&b| u64::from(b)).sum();
            let curve = if total < 128 {
                1u128 << total
            } else {
                return Err(too_big());
            };
            if count == 0 {
                Ok(curve)
            } else {
                Ok(curve.max(range_top(map)?))
            }
        }
        (LayoutFields::Hilbert(_), _) => range_top(map),
        _ => Err(error::unsupported_layout(desc.layout_tag)),
    }
}

/// Minimum `byte_size` of buffer 0 for a dense layout: `byte_offset` plus the
/// packed size of every element position the layout spans from there (row-major
/// and column-major: the element count; strided: up to the highest addressed
/// element; tiled, Morton, Hilbert: the padded extents).
///
/// `None` when the layout is not dense, the element width is unknown, or the layout
/// fields do not define an addressing (the layout rules report why). A size beyond
/// 64 bits saturates to `u64::MAX`, which no buffer can satisfy.
pub fn required_buffer_size(desc: &TensorDescriptor) -> Option<u64> {
    if !is_dense(desc.layout_tag) {
        return None;
    }
    let width = element_bits(desc).ok()?;
    let map = match DenseMap::new(desc.layout_tag, &desc.layout, &desc.shape) {
        Ok(m) => m,
        Err(e) if e.exceeded_limit().is_some() => return Some(u64::MAX),
        Err(_) => return None,
    };
    let span = match span_elements(desc, &map) {
        Ok(s) => s,
        Err(e) if e.exceeded_limit().is_some() => return Some(u64::MAX),
        Err(_) => return None,
    };
    let bytes = u64::try_from(span)
        .ok()
        .and_then(|s| packed_size(width, s))
        .and_then(|b| b.checked_add(desc.byte_offset));
    Some(bytes.unwrap_or(u64::MAX))
}

/// Lowest bit address (relative to the start of buffer 0, possibly negative) of any
/// element a dense layout addresses: `byte_offset * 8 + min_offset * bit_width`.
/// `None` for an empty tensor or when the addressing is undefined.
#[doc(hidden)]
pub fn lowest_bit_address(desc: &TensorDescriptor) -> Option<i128> {
    let width = element_bits(desc).ok()?;
    let map = DenseMap::new(desc.layout_tag, &desc.layout, &desc.shape).ok()?;
    let (lo, _) = map.range(&desc.shape)?;
    i128::from(desc.byte_offset)
        .checked_mul(8)?
        .checked_add(lo.checked_mul(i128::from(width))?)
}

/// A dense tensor over its borrowed buffer 0: element positions and values by
/// logical index, and iteration in logical row-major order.
#[derive(Clone, Debug)]
pub struct DenseView<'a> {
    buffer: &'a [u8],
    /// Length of buffer 0 (of `buffer`, except for an addressing-only view).
    len: usize,
    shape: Vec<u64>,
    width: u32,
    byte_offset: u64,
    map: DenseMap,
    count: u64,
}

impl<'a> DenseView<'a> {
    /// The view of `desc` over `buffers[0]`.
    pub fn new(desc: &TensorDescriptor, buffers: &[&'a [u8]]) -> Result<Self, Error> {
        if !is_dense(desc.layout_tag) {
            return Err(error::unsupported_layout(desc.layout_tag));
        }
        let width = element_bits(desc)?;
        let buffer = *buffers.first().ok_or_else(|| error::missing_buffer(0))?;
        let count = checked_count(&desc.shape)?;
        let map = DenseMap::new(desc.layout_tag, &desc.layout, &desc.shape)?;
        Ok(DenseView {
            buffer,
            len: buffer.len(),
            shape: desc.shape.clone(),
            width,
            byte_offset: desc.byte_offset,
            map,
            count,
        })
    }

    /// The positions of `desc`'s elements in a buffer 0 of `len` bytes that is not
    /// at hand (a validator reading a file piecemeal): for
    /// [`DenseView::for_each_address`] and [`DenseView::bit_address`] only, since
    /// there are no bytes to read values from.
    pub(crate) fn addresses_only(
        desc: &TensorDescriptor,
        len: usize,
    ) -> Result<DenseView<'static>, Error> {
        let mut view = DenseView::new(desc, &[&[]])?;
        view.len = len;
        Ok(view)
    }

    /// Bits per element.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Number of logical elements.
    pub fn element_count(&self) -> u64 {
        self.count
    }

    /// The addressing function.
    pub fn map(&self) -> &DenseMap {
        &self.map
    }

    fn bit_of(&self, offset: i128) -> Result<u64, Error> {
        let w = i128::from(self.width);
        let bit = i128::from(self.byte_offset)
            .checked_mul(8)
            .and_then(|b| b.checked_add(offset.checked_mul(w)?))
            .ok_or_else(|| error::overflow("bit address"))?;
        let limit = (self.len as i128) * 8;
        if bit < 0 || bit.checked_add(w).is_none_or(|end| end > limit) {
            return Err(error::out_of_bounds(0, bit, self.width, self.len));
        }
        Ok(bit as u64)
    }

    /// Bit address in buffer 0 of the element at `index`: `byte_offset * 8 +
    /// offset * bit_width`, for sub-byte types too (docs/interpretations.md § Layouts).
    pub fn bit_address(&self, index: &[u64]) -> Result<u64, Error> {
        if index.len() != self.shape.len() || index.iter().zip(&self.shape).any(|(i, n)| i >= n) {
            return Err(Error::Usage(format!(
                "index {index:?} outside shape {:?}",
                self.shape
            )));
        }
        let offset = self
            .map
            .offset(index)
            .ok_or_else(|| error::overflow("element offset"))?;
        self.bit_of(offset)
    }

    /// Raw bits of the element at `index`.
    pub fn get(&self, index: &[u64]) -> Result<u128, Error> {
        let bit = self.bit_address(index)?;
        // bit_address checked the element lies inside the buffer.
        read_bits(self.buffer, bit, self.width).ok_or_else(|| error::overflow("bit address"))
    }

    /// The packed row-major bytes when buffer 0 already holds the tensor that way
    /// (whole-byte types with row-major strides).
    pub fn contiguous(&self) -> Option<&'a [u8]> {
        if !self.width.is_multiple_of(8) {
            return None;
        }
        let row_major = match &self.map {
            DenseMap::Affine(s) => self.count <= 1 || row_major_strides(&self.shape).ok()? == *s,
            _ => self.count <= 1 && self.map.offset(&vec![0; self.shape.len()]) == Some(0),
        };
        if !row_major {
            return None;
        }
        let start = usize::try_from(self.byte_offset).ok()?;
        let len = usize::try_from(self.count.checked_mul(u64::from(self.width / 8))?).ok()?;
        self.buffer.get(start..start.checked_add(len)?)
    }

    /// Calls `f` with the bit address of every element, in logical row-major order.
    pub fn for_each_address(
        &self,
        mut f: impl FnMut(u64) -> Result<(), Error>,
    ) -> Result<(), Error> {
        if self.count == 0 {
            return Ok(());
        }
        let rank = self.shape.len();
        // Check the extremes once; afterwards every offset lies between them.
        let (lo, hi) = self
            .map
            .range(&self.shape)
            .ok_or_else(|| error::overflow("offset range"))?;
        if let DenseMap::Affine(strides) = &self.map {
            self.bit_of(lo)?;
            self.bit_of(hi)?;
            let mut index = vec![0u64; rank];
            let mut offset = 0i128;
            loop {
                f(self.bit_of(offset)?)?;
                let mut k = rank;
                loop {
                    if k == 0 {
                        return Ok(());
                    }
                    k -= 1;
                    index[k] += 1;
                    if index[k] < self.shape[k] {
                        offset = offset
                            .checked_add(strides[k])
                            .ok_or_else(|| error::overflow("element offset"))?;
                        break;
                    }
                    // Back to index 0 along k: undo (shape[k] - 1) steps.
                    let back = strides[k]
                        .checked_mul(i128::from(self.shape[k] - 1))
                        .and_then(|b| offset.checked_sub(b))
                        .ok_or_else(|| error::overflow("element offset"))?;
                    offset = back;
                    index[k] = 0;
                }
            }
        }
        let mut index = vec![0u64; rank];
        loop {
            let offset = self
                .map
                .offset(&index)
                .ok_or_else(|| error::overflow("element offset"))?;
            f(self.bit_of(offset)?)?;
            let mut k = rank;
            loop {
                if k == 0 {
                    return Ok(());
                }
                k -= 1;
                index[k] += 1;
                if index[k] < self.shape[k] {
                    break;
                }
                index[k] = 0;
            }
        }
    }

    /// Calls `f` with the raw bits of every element, in logical row-major order.
    pub fn for_each(&self, mut f: impl FnMut(u128) -> Result<(), Error>) -> Result<(), Error> {
        let (buffer, width) = (self.buffer, self.width);
        self.for_each_address(|bit| {
            f(read_bits(buffer, bit, width).ok_or_else(|| error::overflow("bit address"))?)
        })
    }

    /// Writes the tensor as packed row-major bytes to `sink`; returns the sink.
    ///
    /// Tensors of rank 2 or more are gathered a slab of rows at a time, each slab
    /// filled in blocks of [`BLOCK`] columns, so that layouts whose neighbours along
    /// the last dimension lie far apart (column-major, tiles, curves) are read with
    /// locality; the output is the same as element-by-element order.
    pub fn stream_row_major<W: Write>(&self, sink: W) -> Result<W, Error> {
        let mut out = PackedWriter::new(sink, self.width);
        if let Some(run) = self.contiguous() {
            out.push_bytes(run)?;
            return Ok(out.finish()?);
        }
        let rank = self.shape.len();
        let cols = self.shape.last().copied().unwrap_or(1);
        let row_bits = cols.saturating_mul(u64::from(self.width));
        if rank < 2 || self.count == 0 || row_bits.saturating_mul(8) > SLAB_BYTES * 8 {
            self.for_each(|v| out.push(v).map_err(Error::from))?;
            return Ok(out.finish()?);
        }
        let mut sink = out.finish()?; // nothing written yet
        self.write_slabs(&mut sink, cols)?;
        Ok(sink)
    }

    /// The slab-and-block gathering of [`DenseView::stream_row_major`].
    fn write_slabs<W: Write>(&self, sink: &mut W, cols: u64) -> Result<(), Error> {
        let rank = self.shape.len();
        let rows = self.count / cols;
        let w = u64::from(self.width);
        // A multiple of 8 rows, so every slab but the last ends on a byte (and a
        // 6-bit group) boundary and the slabs concatenate to the packed tensor.
        let slab_rows =
            ((SLAB_BYTES * 8 / (cols * w)).max(8) / 8 * 8).min(rows.next_multiple_of(8));
        let mut index = vec![0u64; rank];
        let overflow = || error::overflow("element offset");
        // When the extreme offsets lie inside the buffer every element does, and the
        // bit address needs no further checks; otherwise check each element.
        let trusted = self
            .map
            .range(&self.shape)
            .is_some_and(|(lo, hi)| self.bit_of(lo).is_ok() && self.bit_of(hi).is_ok());
        let origin = i128::from(self.byte_offset) * 8;
        let wide = i128::from(self.width);
        let whole_bytes = if self.width.is_multiple_of(8) {
            (self.width / 8) as usize
        } else {
            0
        };
        let mut slab_start = 0;
        while slab_start < rows {
            let n = slab_rows.min(rows - slab_start);
            let len = packed_size(self.width, n * cols).ok_or_else(overflow)?;
            let mut slab = vec![0u8; len as usize];
            for block in (0..cols).step_by(BLOCK as usize) {
                let block_end = (block + BLOCK).min(cols);
                for row in slab_start..slab_start + n {
                    // The row's index prefix, dimension rank-2 fastest.
                    let mut rest = row;
                    for k in (0..rank - 1).rev() {
                        index[k] = rest % self.shape[k];
                        rest /= self.shape[k];
                    }
                    index[rank - 1] = 0;
                    // Trusted rows use the row form; others check every offset.
                    let row_map = if trusted { self.map.row(&index) } else { None };
                    let out_row = (row - slab_start) * cols;
                    for c in block..block_end {
                        let offset = match &row_map {
                            Some(r) => r.offset(c),
                            None => {
                                index[rank - 1] = c;
                                self.map.offset(&index).ok_or_else(overflow)?
                            }
                        };
                        if trusted && whole_bytes > 0 {
                            // Byte-aligned whole-byte element, inside both buffers.
                            let from = ((origin + offset * wide) as u64 >> 3) as usize;
                            let to = ((out_row + c) * w / 8) as usize;
                            copy_element(&mut slab, to, self.buffer, from, whole_bytes);
                            continue;
                        }
                        let bit = if trusted {
                            (origin + offset * wide) as u64
                        } else {
                            self.bit_of(offset)?
                        };
                        let value = read_bits(self.buffer, bit, self.width).ok_or_else(overflow)?;
                        write_bits(&mut slab, (out_row + c) * w, self.width, value)
                            .ok_or_else(overflow)?;
                    }
                }
            }
            sink.write_all(&slab)?;
            slab_start += n;
        }
        sink.flush()?;
        Ok(())
    }
}

/// Copies one `n`-byte element; fixed-size copies for the common widths.
#[inline]
fn copy_element(dst: &mut [u8], to: usize, src: &[u8], from: usize, n: usize) {
    fn fixed<const N: usize>(dst: &mut [u8], to: usize, src: &[u8], from: usize) {
        if let (Some(d), Some(s)) = (dst.get_mut(to..to + N), src.get(from..from + N)) {
            let v: [u8; N] = s.try_into().unwrap_or([0; N]);
            d.copy_from_slice(&v);
        }
    }
    match n {
        1 => fixed::<1>(dst, to, src, from),
        2 => fixed::<2>(dst, to, src, from),
        4 => fixed::<4>(dst, to, src, from),
        8 => fixed::<8>(dst, to, src, from),
        16 => fixed::<16>(dst, to, src, from),
        _ => {
            if let (Some(d), Some(s)) = (dst.get_mut(to..to + n), src.get(from..from + n)) {
                d.copy_from_slice(s);
            }
        }
    }
}

/// Packed row-major size of `desc` in bytes, checked against `limit`.
pub(crate) fn row_major_len(
    desc: &TensorDescriptor,
    width: u32,
    limit: u64,
) -> Result<usize, Error> {
    let count = checked_count(&desc.shape)?;
    let bytes = packed_size(width, count).ok_or_else(|| error::overflow("output size"))?;
    if bytes > limit {
        return Err(error::too_large(u128::from(bytes), limit));
    }
    usize::try_from(bytes).map_err(|_| error::overflow("output size"))
}

/// The dense tensor `desc` as packed row-major bytes (at most `limit` bytes).
pub fn to_row_major(
    desc: &TensorDescriptor,
    buffers: &[&[u8]],
    limit: u64,
) -> Result<Vec<u8>, Error> {
    let view = DenseView::new(desc, buffers)?;
    let len = row_major_len(desc, view.width, limit)?;
    view.stream_row_major(Vec::with_capacity(len))
}

/// Streams the dense tensor `desc` to `sink` as packed row-major bytes.
pub fn stream_row_major<W: Write>(
    desc: &TensorDescriptor,
    buffers: &[&[u8]],
    sink: W,
) -> Result<W, Error> {
    DenseView::new(desc, buffers)?.stream_row_major(sink)
}

/// Lays out the packed row-major tensor `source` in the dense layout of `desc`:
/// returns buffer 0 of [`required_buffer_size`] bytes (at most `limit`), padding and
/// unaddressed positions zero. `source` must hold the tensor's packed row-major
/// bytes.
pub fn from_row_major(
    desc: &TensorDescriptor,
    source: &[u8],
    limit: u64,
) -> Result<Vec<u8>, Error> {
    let width = element_bits(desc)?;
    let size =
        required_buffer_size(desc).ok_or_else(|| error::unsupported_layout(desc.layout_tag))?;
    if size > limit {
        return Err(error::too_large(u128::from(size), limit));
    }
    let need = row_major_len(desc, width, u64::MAX)?;
    if source.len() < need {
        return Err(error::out_of_bounds(
            0,
            need as i128 * 8,
            width,
            source.len(),
        ));
    }
    let mut out = vec![0u8; usize::try_from(size).map_err(|_| error::overflow("buffer size"))?];
    let addresses = {
        let view = DenseView::new(desc, &[&out])?;
        let mut v = Vec::new();
        view.for_each_address(|bit| {
            v.push(bit);
            Ok(())
        })?;
        v
    };
    for (i, bit) in addresses.into_iter().enumerate() {
        let value = read_bits(source, i as u64 * u64::from(width), width)
            .ok_or_else(|| error::overflow("source index"))?;
        write_bits(&mut out, bit, width, value).ok_or_else(|| error::overflow("bit address"))?;
    }
    Ok(out)
}

#[cfg(test)]
mod tail_window_tests {
    use super::*;
    use crate::model::build::dense;
    use crate::model::ElementType;

    #[test]
    fn window_check_agrees_with_the_whole_buffer_check() {
        let types = [
            ElementType::Bool,
            ElementType::Int2,
            ElementType::Uint4,
            ElementType::Float6E2m3,
            ElementType::Int8,
        ];
        for ty in types {
            for n in 0..13u64 {
                let desc = dense(ty, &[n]).unwrap();
                let size = desc.buffers[0].byte_size as usize;
                for fill in [0x00u8, 0xFF, 0x80, 0x01] {
                    let mut buf = vec![fill; size + 2];
                    let whole = nonzero_unused_tail(&desc, &buf);
                    let got = TailWindow::of(&desc).and_then(|w| w.check(w.bytes_of(&buf)));
                    assert_eq!(got, whole, "{ty:?} [{n}] filled with {fill:#x}");
                    clear_unused_tail(&desc, &mut buf);
                    assert_eq!(nonzero_unused_tail(&desc, &buf), None);
                }
            }
        }
    }
}

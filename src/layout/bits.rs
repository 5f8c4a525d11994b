//! Reading and writing packed elements at bit addresses.
//!
//! Every element type packs LSB-first (element-types.md): element `i` of a
//! contiguous run of `B`-bit elements occupies bits `[i * B, (i + 1) * B)` counting
//! from bit 0 of byte 0, where bit `k` is bit `k % 8` of byte `k / 8`. This covers
//! the 1-, 2- and 4-bit packings and the 6-bit four-in-three-bytes groups alike, and
//! for whole-byte types it is plain little-endian storage.

/// Reads the `width`-bit element (1–128 bits) starting at bit `bit` of `buf`.
/// Returns `None` when any of its bits lies outside `buf`.
pub fn read_bits(buf: &[u8], bit: u64, width: u32) -> Option<u128> {
    if width == 0 || width > 128 {
        return None;
    }
    let end = bit.checked_add(u64::from(width))?;
    if end > (buf.len() as u64).checked_mul(8)? {
        return None;
    }
    let start = usize::try_from(bit / 8).ok()?;
    let shift = (bit % 8) as u32;
    if shift == 0 && width.is_multiple_of(8) {
        let bytes = buf.get(start..start + (width / 8) as usize)?;
        let mut le = [0u8; 16];
        le[..bytes.len()].copy_from_slice(bytes);
        return Some(u128::from_le_bytes(le));
    }
    // An unaligned element is narrower than a byte (whole-byte types are always
    // byte-aligned), so it spans at most two bytes.
    if width > 8 {
        return None;
    }
    let lo = u16::from(*buf.get(start)?);
    let hi = if shift + width > 8 {
        u16::from(*buf.get(start + 1)?)
    } else {
        0
    };
    let word = (lo | (hi << 8)) >> shift;
    Some(u128::from(word & ((1u16 << width) - 1)))
}

/// Writes the low `width` bits of `value` at bit `bit` of `buf`, leaving the other
/// bits untouched. Returns `None` (writing nothing) when the element does not fit.
pub fn write_bits(buf: &mut [u8], bit: u64, width: u32, value: u128) -> Option<()> {
    if width == 0 || width > 128 {
        return None;
    }
    let end = bit.checked_add(u64::from(width))?;
    if end > (buf.len() as u64).checked_mul(8)? {
        return None;
    }
    let start = usize::try_from(bit / 8).ok()?;
    let shift = (bit % 8) as u32;
    if shift == 0 && width.is_multiple_of(8) {
        let n = (width / 8) as usize;
        buf.get_mut(start..start + n)?
            .copy_from_slice(&value.to_le_bytes()[..n]);
        return Some(());
    }
    if width > 8 {
        return None;
    }
    let mask = ((1u16 << width) - 1) << shift;
    let bits = ((value as u16) << shift) & mask;
    let b0 = buf.get_mut(start)?;
    *b0 = (*b0 & !(mask as u8)) | bits as u8;
    if shift + width > 8 {
        let b1 = buf.get_mut(start + 1)?;
        *b1 = (*b1 & !((mask >> 8) as u8)) | (bits >> 8) as u8;
    }
    Some(())
}

/// Streams elements into packed bytes, LSB-first, in chunks, leaving the unused high
/// bits of the last byte (and the rest of a 6-bit group) zero as element-types.md
/// requires.
#[derive(Debug)]
pub struct PackedWriter<W: std::io::Write> {
    sink: W,
    chunk: Vec<u8>,
    width: u32,
    acc: u32,
    acc_bits: u32,
    len: u64,
}

const CHUNK: usize = 1 << 16;

impl<W: std::io::Write> PackedWriter<W> {
    /// A writer of `width`-bit elements (1, 2, 4, 6, or a multiple of 8 up to 128).
    pub fn new(sink: W, width: u32) -> Self {
        PackedWriter {
            sink,
            chunk: Vec::with_capacity(CHUNK.min(4096)),
            width,
            acc: 0,
            acc_bits: 0,
            len: 0,
        }
    }

    /// Appends one element (its low `width` bits).
    pub fn push(&mut self, value: u128) -> std::io::Result<()> {
        if self.width.is_multiple_of(8) {
            let n = (self.width / 8) as usize;
            self.chunk
                .extend_from_slice(&value.to_le_bytes()[..n.min(16)]);
        } else {
            let mask = (1u32 << self.width) - 1;
            self.acc |= (value as u32 & mask) << self.acc_bits;
            self.acc_bits += self.width;
            while self.acc_bits >= 8 {
                self.chunk.push(self.acc as u8);
                self.acc >>= 8;
                self.acc_bits -= 8;
            }
        }
        self.len += 1;
        if self.chunk.len() >= CHUNK {
            self.sink.write_all(&self.chunk)?;
            self.chunk.clear();
        }
        Ok(())
    }

    /// Appends a run of whole-byte elements given as their packed bytes.
    pub fn push_bytes(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        debug_assert!(self.width.is_multiple_of(8) && self.width > 0);
        self.sink.write_all(&self.chunk)?;
        self.chunk.clear();
        self.sink.write_all(bytes)?;
        self.len += bytes.len() as u64 / u64::from(self.width / 8).max(1);
        Ok(())
    }

    /// Number of elements written.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Flushes the partial last byte and the padding up to the element type's buffer
    /// size ([`crate::model::packed_size`]) and returns the sink.
    pub fn finish(mut self) -> std::io::Result<W> {
        let mut written = (self.len * u64::from(self.width)) / 8;
        if self.acc_bits > 0 {
            self.chunk.push(self.acc as u8);
            written += 1;
        }
        let size = crate::model::packed_size(self.width, self.len).unwrap_or(written);
        for _ in written..size {
            self.chunk.push(0);
        }
        self.sink.write_all(&self.chunk)?;
        self.sink.flush()?;
        Ok(self.sink)
    }
}

/// Packs `values` of `width` bits into a new byte vector.
pub fn pack(width: u32, values: impl IntoIterator<Item = u128>) -> Vec<u8> {
    let mut w = PackedWriter::new(Vec::new(), width);
    for v in values {
        // Writing to a Vec cannot fail.
        let _ = w.push(v);
    }
    w.finish().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_packing_examples() {
        // element-types.md: uint4 [5, 12, 3] is C5 03; uint2 [3, 1, 2] is 0x27;
        // bool [t, f, t, t, f] is 0x0D; 6-bit 1, 2, 4, 8 is 81 40 20.
        let cases: [(u32, &[u128], &[u8]); 4] = [
            (4, &[5, 12, 3], &[0xC5, 0x03]),
            (2, &[3, 1, 2], &[0x27]),
            (1, &[1, 0, 1, 1, 0], &[0x0D]),
            (6, &[1, 2, 4, 8], &[0x81, 0x40, 0x20]),
        ];
        for (width, values, bytes) in cases {
            assert_eq!(pack(width, values.iter().copied()), bytes, "width {width}");
            for (i, &v) in values.iter().enumerate() {
                assert_eq!(
                    read_bits(bytes, i as u64 * u64::from(width), width),
                    Some(v)
                );
            }
        }
        // A single 6-bit element still takes a whole 3-byte group.
        assert_eq!(pack(6, [0x3F]), [0x3F, 0, 0]);
        assert_eq!(pack(6, [0x3F, 1, 2, 3, 4]), [0x7F, 0x20, 0x0C, 0x04, 0, 0]);
        assert_eq!(pack(32, [7, 8]), [7, 0, 0, 0, 8, 0, 0, 0]);
    }

    #[test]
    fn whole_bytes_are_little_endian() {
        let buf = [0x01, 0x02, 0x03, 0x04, 0xFF];
        assert_eq!(read_bits(&buf, 0, 32), Some(0x0403_0201));
        assert_eq!(read_bits(&buf, 8, 32), Some(0xFF04_0302));
        assert_eq!(read_bits(&buf, 16, 32), None);
        let mut out = [0u8; 4];
        write_bits(&mut out, 0, 32, 0xA1B2_C3D4).unwrap();
        assert_eq!(out, [0xD4, 0xC3, 0xB2, 0xA1]);
    }

    #[test]
    fn bounds_are_enforced() {
        let buf = [0xFFu8; 2];
        assert_eq!(read_bits(&buf, 12, 4), Some(0xF));
        assert_eq!(read_bits(&buf, 13, 4), None);
        assert_eq!(read_bits(&buf, u64::MAX, 4), None);
        assert_eq!(read_bits(&buf, 0, 0), None);
        assert_eq!(read_bits(&buf, 0, 129), None);
        let mut m = [0u8; 2];
        assert_eq!(write_bits(&mut m, 14, 4, 0xF), None);
        assert_eq!(m, [0, 0]);
        write_bits(&mut m, 6, 6, 0b101101).unwrap();
        assert_eq!(m, [0b0100_0000, 0b0000_1011]);
    }
}

/// The bits `[end, unit_end)` after the last of `count` contiguous `width`-bit
/// elements packed from bit 0, up to the end of the packing unit that last element
/// ends in: its byte, or for 6-bit types its group of three bytes (four elements).
/// element-types.md requires them to be zero. `None` for whole-byte types or on
/// overflow.
fn packing_tail_bits(count: u64, width: u32) -> Option<(u64, u64)> {
    if width == 0 || width >= 8 {
        return None;
    }
    let unit_bits: u64 = if width == 6 { 24 } else { 8 };
    let end = count.checked_mul(u64::from(width))?;
    Some((end, end.div_ceil(unit_bits).checked_mul(unit_bits)?))
}

/// The bytes the packing tail touches, each with the first tail bit inside it:
/// `(byte index, first bit within the byte)`.
fn packing_tail_bytes(count: u64, width: u32) -> impl Iterator<Item = (u64, u32)> {
    let (end, unit_end) = packing_tail_bits(count, width).unwrap_or((0, 0));
    let first_byte = end / 8;
    (first_byte..unit_end.div_ceil(8))
        .map(move |b| (b, if b == first_byte { (end % 8) as u32 } else { 0 }))
}

/// The first byte holding a set tail bit (see `packing_tail_bits`) of `count`
/// `width`-bit elements packed from bit 0 of `buf`. Bytes past the end of `buf` are
/// not looked at. Returns `(byte index, byte)`; `None` when every such bit is zero,
/// the type is not sub-byte, or nothing is left over.
pub fn nonzero_packing_tail(buf: &[u8], count: u64, width: u32) -> Option<(u64, u8)> {
    nonzero_packing_tail_from(buf, 0, count, width)
}

/// The bytes [`nonzero_packing_tail`] looks at: `first..end` (at most three; empty
/// when there is no tail).
pub(crate) fn packing_tail_range(count: u64, width: u32) -> (u64, u64) {
    let (end, unit_end) = packing_tail_bits(count, width).unwrap_or((0, 0));
    (end / 8, unit_end.div_ceil(8))
}

/// [`nonzero_packing_tail`] given only the bytes from index `first` on (`bytes[0]`
/// is byte `first`), for a reader that fetched just [`packing_tail_range`].
pub(crate) fn nonzero_packing_tail_from(
    bytes: &[u8],
    first: u64,
    count: u64,
    width: u32,
) -> Option<(u64, u8)> {
    for (index, from) in packing_tail_bytes(count, width) {
        let byte = *bytes.get(usize::try_from(index.checked_sub(first)?).ok()?)?;
        if byte >> from != 0 {
            return Some((index, byte));
        }
    }
    None
}

/// Clears the bits [`nonzero_packing_tail`] looks at (those inside `buf`).
pub fn clear_packing_tail(buf: &mut [u8], count: u64, width: u32) {
    for (index, from) in packing_tail_bytes(count, width) {
        let Some(byte) = usize::try_from(index).ok().and_then(|i| buf.get_mut(i)) else {
            return;
        };
        *byte &= (1u8 << from).wrapping_sub(1);
    }
}

#[cfg(test)]
mod tail_tests {
    use super::{clear_packing_tail, nonzero_packing_tail};

    #[test]
    fn finds_set_bits_after_the_last_element() {
        // Spec examples: bool [5] = 0x0D, uint4 [3] = C5 03, uint2 [3] = 0x27.
        assert_eq!(nonzero_packing_tail(&[0x0D], 5, 1), None);
        assert_eq!(nonzero_packing_tail(&[0x2D], 5, 1), Some((0, 0x2D)));
        assert_eq!(nonzero_packing_tail(&[0xC5, 0x03], 3, 4), None);
        assert_eq!(nonzero_packing_tail(&[0xC5, 0x13], 3, 4), Some((1, 0x13)));
        assert_eq!(nonzero_packing_tail(&[0x27], 3, 2), None);
        assert_eq!(nonzero_packing_tail(&[0x67], 3, 2), Some((0, 0x67)));
        // Whole bytes and whole-byte types leave nothing over.
        assert_eq!(nonzero_packing_tail(&[0xFF, 0xFF], 4, 4), None);
        assert_eq!(nonzero_packing_tail(&[0xFF], 1, 8), None);
        // 6-bit: one element (bits 0-5) leaves bits 6-23 of its three-byte group.
        assert_eq!(nonzero_packing_tail(&[0x3F, 0, 0], 1, 6), None);
        assert_eq!(
            nonzero_packing_tail(&[0x3F, 0, 0x80], 1, 6),
            Some((2, 0x80))
        );
        assert_eq!(nonzero_packing_tail(&[0x7F, 0, 0], 1, 6), Some((0, 0x7F)));
        // A buffer cut short is only judged on the bytes it has.
        assert_eq!(nonzero_packing_tail(&[0x3F], 1, 6), None);
        assert_eq!(nonzero_packing_tail(&[], 0, 4), None);
    }

    #[test]
    fn clearing_keeps_the_elements() {
        for (count, width, len) in [
            (5u64, 1u32, 1usize),
            (3, 4, 2),
            (3, 2, 1),
            (1, 6, 3),
            (5, 6, 4),
        ] {
            let mut buf = vec![0xFF; len];
            clear_packing_tail(&mut buf, count, width);
            assert_eq!(
                nonzero_packing_tail(&buf, count, width),
                None,
                "{count} x {width}"
            );
            let ones = buf.iter().map(|b| b.count_ones() as u64).sum::<u64>();
            assert_eq!(ones, count * u64::from(width), "{count} x {width}");
        }
    }
}

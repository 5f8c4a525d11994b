//! GGUF `Q8_0` / `Q4_0` blocks and Hurray per-block affine tensors (int8 / int4
//! codes, blocks of 32 along the last axis, float16 scales, symmetric), both ways.
//!
//! A block is a float16 scale `d` followed by its codes: 32 `int8` for `Q8_0`; for
//! `Q4_0`, 16 bytes holding element `j` in the low nibble of byte `j` and element
//! `j + 16` in its high nibble, as unsigned codes offset by 8. Hurray keeps codes
//! and scales in two buffers, int4 elements packed LSB first (element `2k` in the
//! low nibble of byte `k`), two's complement. Everything here works on whole
//! blocks, a piece of a tensor at a time.

use crate::convert::gguf_schema::GgmlType;

/// Elements per block.
pub(crate) const BLOCK: usize = 32;

/// The two block types Hurray holds exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `Q8_0`: int8 codes.
    Q8_0,
    /// `Q4_0`: int4 codes.
    Q4_0,
}

impl Kind {
    /// The kind of a ggml type, if it is one of the two.
    pub fn of(ty: GgmlType) -> Option<Kind> {
        match ty {
            GgmlType::Q8_0 => Some(Kind::Q8_0),
            GgmlType::Q4_0 => Some(Kind::Q4_0),
            _ => None,
        }
    }

    /// The ggml type.
    pub fn ggml(self) -> GgmlType {
        match self {
            Kind::Q8_0 => GgmlType::Q8_0,
            Kind::Q4_0 => GgmlType::Q4_0,
        }
    }

    /// Code bytes per block.
    pub fn code_bytes(self) -> usize {
        match self {
            Kind::Q8_0 => 32,
            Kind::Q4_0 => 16,
        }
    }

    /// Bytes per GGUF block (scale and codes).
    pub fn block_bytes(self) -> usize {
        self.code_bytes() + 2
    }
}

/// The int4 two's complement of GGUF `Q4_0` code `c` (value `c - 8`) is `c ^ 8`,
/// and back.
const Q4_FLIP: u8 = 0x08;

/// Makes a float16 scale acceptable to Hurray: a zero becomes the smallest subnormal
/// of the same sign (returns `Ok(true)`: the block's codes must be zeroed, so every
/// value is still a zero of the same sign); NaN and infinities are refused.
fn fix_scale(d: &mut [u8; 2]) -> Result<bool, ()> {
    let bits = u16::from_le_bytes(*d);
    if bits & 0x7C00 == 0x7C00 {
        return Err(());
    }
    if bits & 0x7FFF == 0 {
        // Keep the zero's sign: a block quantized from zeros with a -0.0 scale
        // dequantizes to -0.0 in GGUF, and 0 * -min_subnormal is -0.0 too.
        *d = ((bits & 0x8000) | 1).to_le_bytes();
        return Ok(true);
    }
    Ok(false)
}

/// Hurray int4 bytes (element `2k` low, `2k + 1` high, two's complement) of one
/// `Q4_0` block's 16 code bytes (element `j` low, `j + 16` high, offset by 8).
#[inline(always)]
fn q4_to_int4(qs: &[u8], out: &mut [u8]) {
    let flip = Q4_FLIP | (Q4_FLIP << 4);
    for k in 0..8 {
        // Elements 2k and 2k + 1: low nibbles of bytes 2k and 2k + 1.
        out[k] = ((qs[2 * k] & 0x0F) | (qs[2 * k + 1] << 4)) ^ flip;
        // Elements 16 + 2k and 17 + 2k: high nibbles of the same bytes.
        out[k + 8] = ((qs[2 * k] >> 4) | (qs[2 * k + 1] & 0xF0)) ^ flip;
    }
}

/// The inverse of [`q4_to_int4`].
#[inline(always)]
fn int4_to_q4(codes: &[u8], out: &mut [u8]) {
    let flip = Q4_FLIP | (Q4_FLIP << 4);
    for k in 0..8 {
        let (low, high) = (codes[k], codes[k + 8]);
        out[2 * k] = ((low & 0x0F) | (high << 4)) ^ flip;
        out[2 * k + 1] = ((low >> 4) | (high & 0xF0)) ^ flip;
    }
}

/// Splits whole GGUF blocks of `kind` into Hurray codes, written to `codes` (which
/// holds exactly the blocks' codes), and, when given, their float16 scales (made
/// acceptable by `fix_scale`) appended to `scales`. `Err(b)`: block `b` of
/// `blocks` has a NaN or infinite scale.
pub(crate) fn split(
    kind: Kind,
    blocks: &[u8],
    codes: &mut [u8],
    mut scales: Option<&mut Vec<u8>>,
) -> Result<(), usize> {
    let code_bytes = kind.code_bytes();
    if let Some(s) = scales.as_deref_mut() {
        s.reserve(blocks.len() / kind.block_bytes() * 2);
    }
    let pairs = blocks
        .chunks_exact(kind.block_bytes())
        .zip(codes.chunks_exact_mut(code_bytes));
    for (b, (block, out)) in pairs.enumerate() {
        let mut d = [block[0], block[1]];
        let zero = fix_scale(&mut d).map_err(|()| b)?;
        if let Some(s) = scales.as_deref_mut() {
            s.extend_from_slice(&d);
        }
        let qs = &block[2..];
        match (zero, kind) {
            (true, _) => out.fill(0),
            (false, Kind::Q8_0) => out.copy_from_slice(qs),
            (false, Kind::Q4_0) => q4_to_int4(qs, out),
        }
    }
    Ok(())
}

/// Writes GGUF blocks of `kind` built from Hurray `codes` (whole blocks) and their
/// float16 `scales` (two bytes per block) to `out`, which holds exactly those
/// blocks. A block whose codes are all zero and whose scale is the smallest float16
/// subnormal gets a zero scale of the same sign: the values are the same zeros, and
/// a GGUF block that [`split`] turned into such a block comes back byte for byte.
pub(crate) fn join(kind: Kind, codes: &[u8], scales: &[u8], out: &mut [u8]) {
    let blocks = codes
        .chunks_exact(kind.code_bytes())
        .zip(scales.chunks_exact(2))
        .zip(out.chunks_exact_mut(kind.block_bytes()));
    for ((qs, d), block) in blocks {
        let bits = u16::from_le_bytes([d[0], d[1]]);
        let bits = if bits & 0x7FFF == 1 && qs.iter().all(|&q| q == 0) {
            bits & 0x8000
        } else {
            bits
        };
        block[..2].copy_from_slice(&bits.to_le_bytes());
        match kind {
            Kind::Q8_0 => block[2..].copy_from_slice(qs),
            Kind::Q4_0 => int4_to_q4(qs, &mut block[2..]),
        }
    }
}

/// Sets `buf` to exactly `n` bytes, zeroing only bytes it never held (a buffer
/// reused piece after piece is then neither cleared nor refilled).
pub(crate) fn size_to(buf: &mut Vec<u8>, n: usize) {
    if buf.len() >= n {
        buf.truncate(n);
    } else {
        buf.resize(n, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q8_block(d: u16, first: i8) -> Vec<u8> {
        let mut b = d.to_le_bytes().to_vec();
        b.extend((0..32).map(|i| (first.wrapping_add(i)) as u8));
        b
    }

    #[test]
    fn q8_0_splits_and_joins() {
        let mut data = q8_block(0x3C00, -5);
        data.extend(q8_block(0x8000, 3)); // -0.0 scale
        data.extend(q8_block(0x4000, 100));
        let (mut codes, mut s) = (vec![0xAA; 96], Vec::new());
        split(Kind::Q8_0, &data, &mut codes, Some(&mut s)).unwrap();
        assert_eq!(s, vec![0x00, 0x3C, 0x01, 0x80, 0x00, 0x40]);
        assert_eq!(codes.len(), 96);
        assert_eq!(codes[0] as i8, -5);
        assert_eq!(codes[31] as i8, 26);
        assert!(codes[32..64].iter().all(|&q| q == 0));
        assert_eq!(codes[64] as i8, 100);
        // Back: the zero-scale block comes back with a -0.0 scale and zero codes
        // (its codes were not zero in the input); the others byte for byte.
        let mut back = vec![0; 102];
        join(Kind::Q8_0, &codes, &s, &mut back);
        assert_eq!(&back[..34], &data[..34]);
        assert_eq!(&back[34..36], &[0x00, 0x80]);
        assert!(back[36..68].iter().all(|&q| q == 0));
        assert_eq!(&back[68..], &data[68..]);
        let nan = q8_block(0x7E00, 0);
        assert_eq!(split(Kind::Q8_0, &nan, &mut codes, None), Err(0));
        let mut inf = q8_block(0x3C00, 0);
        inf.extend(q8_block(0xFC00, 0));
        assert_eq!(split(Kind::Q8_0, &inf, &mut codes, None), Err(1));
    }

    #[test]
    fn q4_0_repacks_nibbles_both_ways() {
        let mut data = 0x3C00u16.to_le_bytes().to_vec();
        data.extend((0..16u8).map(|j| j | ((15 - j) << 4)));
        let mut want = [0i8; 32];
        for j in 0..16 {
            want[j] = j as i8 - 8;
            want[j + 16] = (15 - j) as i8 - 8;
        }
        let (mut codes, mut s) = (vec![0; 16], Vec::new());
        split(Kind::Q4_0, &data, &mut codes, Some(&mut s)).unwrap();
        assert_eq!(s, vec![0x00, 0x3C]);
        assert_eq!(codes.len(), 16);
        for (e, &w) in want.iter().enumerate() {
            let nibble = (codes[e / 2] >> (4 * (e % 2))) & 0x0F;
            assert_eq!(((nibble << 4) as i8) >> 4, w, "element {e}");
        }
        let mut back = vec![0; 18];
        join(Kind::Q4_0, &codes, &s, &mut back);
        assert_eq!(back, data);
        // A zero block quantized by GGUF (scale 0, codes 8 = value 0) round-trips.
        let mut zero = vec![0u8, 0];
        zero.extend([0x88u8; 16]);
        let (mut codes, mut s) = (vec![0xFF; 16], Vec::new());
        split(Kind::Q4_0, &zero, &mut codes, Some(&mut s)).unwrap();
        assert_eq!(s, vec![0x01, 0x00]);
        assert_eq!(codes, vec![0; 16]);
        let mut back = vec![0; 18];
        join(Kind::Q4_0, &codes, &s, &mut back);
        assert_eq!(back, zero);
    }
}

//! NumPy `.npy` output (format version 1.0): the header, the dtype each Hurray
//! element type exports to, and the conversion of raw elements to it.
//!
//! Types NumPy has natively keep their bits (`float16` as `<f2`, `complex64` as
//! `<c8`, …; `bool` as `|b1`). `bfloat16`, the 8-, 6- and 4-bit floats widen to
//! float32, sub-byte integers to int8 / uint8, and `float128` (IEEE binary128, which
//! NumPy cannot hold portably) narrows to float64 with round-to-nearest-even.

use std::io::{self, Write};

use crate::model::ElementType;

/// The `.npy` magic string.
pub const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// The NumPy dtype an element type exports to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dtype {
    /// The array-protocol type string written as `descr` (`<f4`, `|b1`, …).
    pub descr: &'static str,
    /// Bytes per exported element.
    pub item_size: usize,
}

/// float32, the dtype of dequantized and widened float data.
pub const FLOAT32: Dtype = Dtype {
    descr: "<f4",
    item_size: 4,
};

/// The dtype `ty` exports to; `None` for extension types, whose meaning is private.
pub fn dtype(ty: ElementType) -> Option<Dtype> {
    use ElementType::*;
    let (descr, item_size) = match ty {
        Float16 => ("<f2", 2),
        Bfloat16 | Float8E4m3 | Float8E5m2 | Float8E8m0 | Float4E2m1 | Float6E2m3 | Float6E3m2
        | Float32 => ("<f4", 4),
        Float64 | Float128 => ("<f8", 8),
        Int8 | Int4 | Int2 => ("|i1", 1),
        Uint8 | Uint4 | Uint2 => ("|u1", 1),
        Int16 => ("<i2", 2),
        Uint16 => ("<u2", 2),
        Int32 => ("<i4", 4),
        Uint32 => ("<u4", 4),
        Int64 => ("<i8", 8),
        Uint64 => ("<u8", 8),
        Bool => ("|b1", 1),
        Complex64 => ("<c8", 8),
        Complex128 => ("<c16", 16),
        Extension(_) => return None,
    };
    Some(Dtype { descr, item_size })
}

/// The element type that stores the values of NumPy dtype `descr` exactly: the
/// inverse of [`dtype`] for the types NumPy has natively (see [`is_native`]) and
/// `|b1` (bool). `None` for every other dtype (big-endian ones included: convert
/// them to little-endian first).
pub fn import_type(descr: &str) -> Option<ElementType> {
    use ElementType::*;
    let ty = match descr {
        "|b1" => Bool,
        "|i1" => Int8,
        "|u1" => Uint8,
        "<i2" => Int16,
        "<u2" => Uint16,
        "<i4" => Int32,
        "<u4" => Uint32,
        "<i8" => Int64,
        "<u8" => Uint64,
        "<f2" => Float16,
        "<f4" => Float32,
        "<f8" => Float64,
        "<c8" => Complex64,
        "<c16" => Complex128,
        _ => return None,
    };
    Some(ty)
}

/// The stored bytes of elements of `ty` given as C-order NumPy data of
/// [`dtype`]`(ty)`: the same bytes for native types, booleans (one byte each,
/// non-zero = true) packed eight per byte LSB-first. `None` for types
/// [`import_type`] does not return.
pub fn stored_bytes(ty: ElementType, data: &[u8]) -> Option<std::borrow::Cow<'_, [u8]>> {
    if is_native(ty) {
        return Some(std::borrow::Cow::Borrowed(data));
    }
    (ty == ElementType::Bool).then(|| {
        let bits = data.iter().map(|&b| u128::from(b != 0));
        std::borrow::Cow::Owned(crate::layout::bits::pack(1, bits))
    })
}

/// True when `ty`'s stored bytes already are its exported bytes, so whole runs can
/// be copied.
pub fn is_native(ty: ElementType) -> bool {
    use ElementType::*;
    matches!(
        ty,
        Float16
            | Float32
            | Float64
            | Int8
            | Uint8
            | Int16
            | Uint16
            | Int32
            | Uint32
            | Int64
            | Uint64
            | Complex64
            | Complex128
    )
}

/// The version 1.0 header for a C-order array of `descr` and `shape`, padded with
/// spaces and a newline so the data starts at a multiple of 64 bytes.
pub fn header(descr: &str, shape: &[u64]) -> Vec<u8> {
    let dims = match shape {
        [] => "()".to_string(),
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {dims}, }}");
    // magic (6) + version (2) + length (2) + dict + '\n'
    let unpadded = 10 + dict.len() + 1;
    dict.extend(std::iter::repeat_n(
        ' ',
        unpadded.next_multiple_of(64) - unpadded,
    ));
    dict.push('\n');
    let mut out = Vec::with_capacity(10 + dict.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    // A rank-64 shape of 20-digit dimensions still fits a u16 length.
    out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out
}

/// Decodes a sub-32-bit float code of type `ty` to float32; `None` for other types.
pub(crate) type FloatDecoder = fn(ElementType, u32) -> Option<f32>;

/// IEEE binary128 bits to the nearest float64 (ties to even; overflow to infinity,
/// NaN kept NaN with its sign and the top of its payload).
pub(crate) fn f128_to_f64(bits: u128) -> f64 {
    let sign = ((bits >> 127) as u64) << 63;
    let exp = ((bits >> 112) & 0x7FFF) as i32;
    let man = bits & ((1u128 << 112) - 1);
    if exp == 0x7FFF {
        if man == 0 {
            return f64::from_bits(sign | 0x7FF0_0000_0000_0000);
        }
        let payload = (man >> 60) as u64 | (1 << 51);
        return f64::from_bits(sign | 0x7FF0_0000_0000_0000 | payload);
    }
    if exp == 0 {
        // binary128 subnormals are far below the smallest float64 subnormal.
        return f64::from_bits(sign);
    }
    let e = exp - 16383;
    if e > 1023 {
        return f64::from_bits(sign | 0x7FF0_0000_0000_0000);
    }
    let significand = man | (1u128 << 112); // 113 bits: 1.m
                                            // Shift that leaves the float64 significand: 53 bits for normals, fewer below.
    let shift: u32 = if e >= -1022 {
        60
    } else {
        let s = 60 + (-1022 - e) as u32;
        if s > 114 {
            return f64::from_bits(sign);
        }
        s
    };
    let kept = significand >> shift;
    let rest = significand & ((1u128 << shift) - 1);
    let half = 1u128 << (shift - 1);
    let rounded = if rest > half || (rest == half && kept & 1 == 1) {
        kept + 1
    } else {
        kept
    };
    let magnitude = if e >= -1022 {
        // rounded is in [2^52, 2^53]; a carry to 2^53 bumps the exponent.
        let biased = (e + 1023) as u64;
        ((biased << 52) + (rounded as u64 - (1 << 52))).min(0x7FF0_0000_0000_0000)
    } else {
        // Subnormal field; a carry to 2^52 lands on the smallest normal.
        rounded as u64
    };
    f64::from_bits(sign | magnitude)
}

/// Appends the exported bytes of one element of `ty` with raw bits `raw`;
/// `decode` supplies the narrow float formats. Returns `false` (appending nothing)
/// when the type cannot be exported.
pub(crate) fn push_element(
    ty: ElementType,
    raw: u128,
    decode: FloatDecoder,
    out: &mut Vec<u8>,
) -> bool {
    use ElementType::*;
    match ty {
        Bfloat16 => out.extend_from_slice(&((raw as u32) << 16).to_le_bytes()),
        Float8E4m3 | Float8E5m2 | Float8E8m0 | Float4E2m1 | Float6E2m3 | Float6E3m2 => {
            match decode(ty, raw as u32) {
                Some(v) => out.extend_from_slice(&v.to_le_bytes()),
                None => return false,
            }
        }
        Float128 => out.extend_from_slice(&f128_to_f64(raw).to_le_bytes()),
        Int4 => out.push((((raw as u8) << 4) as i8 >> 4) as u8),
        Int2 => out.push((((raw as u8) << 6) as i8 >> 6) as u8),
        Uint4 | Uint2 | Bool => out.push(raw as u8),
        Extension(_) => return false,
        native => {
            let n = native.bit_width().unwrap_or(0) as usize / 8;
            out.extend_from_slice(&raw.to_le_bytes()[..n.min(16)]);
        }
    }
    true
}

/// Streams a `.npy` file: header first, then elements in logical row-major order.
pub struct NpyWriter<W: Write> {
    sink: W,
    ty: ElementType,
    decode: FloatDecoder,
    chunk: Vec<u8>,
}

impl<W: Write> NpyWriter<W> {
    /// Writes the header for the export dtype of `ty` and `shape`.
    pub fn new(
        mut sink: W,
        ty: ElementType,
        shape: &[u64],
        decode: FloatDecoder,
    ) -> io::Result<Self> {
        let d = dtype(ty).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("element type {} has no NumPy export", ty.name()),
            )
        })?;
        sink.write_all(&header(d.descr, shape))?;
        Ok(NpyWriter {
            sink,
            ty,
            decode,
            chunk: Vec::with_capacity(1 << 16),
        })
    }

    /// Appends one element given by its raw bits.
    pub fn push(&mut self, raw: u128) -> io::Result<()> {
        if !push_element(self.ty, raw, self.decode, &mut self.chunk) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("cannot export a {} element", self.ty.name()),
            ));
        }
        if self.chunk.len() >= 1 << 16 {
            self.sink.write_all(&self.chunk)?;
            self.chunk.clear();
        }
        Ok(())
    }

    /// Appends stored bytes of a native type (see [`is_native`]) unchanged.
    pub fn push_native(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.sink.write_all(&self.chunk)?;
        self.chunk.clear();
        self.sink.write_all(bytes)
    }

    /// Flushes and returns the sink.
    pub fn finish(mut self) -> io::Result<W> {
        self.sink.write_all(&self.chunk)?;
        self.sink.flush()?;
        Ok(self.sink)
    }
}

/// Writes a float32 array (e.g. dequantized values) as a `.npy` file.
pub fn write_f32<W: Write>(mut sink: W, shape: &[u64], values: &[f32]) -> io::Result<W> {
    sink.write_all(&header(FLOAT32.descr, shape))?;
    write_f32_data(&mut sink, values)?;
    sink.flush()?;
    Ok(sink)
}

/// Writes `values` as little-endian float32: the data part of a float32 `.npy`,
/// callable repeatedly to stream an array in pieces after [`header`].
pub fn write_f32_data<W: Write>(sink: &mut W, values: &[f32]) -> io::Result<()> {
    let mut chunk = Vec::with_capacity(values.len().min(1 << 14) * 4);
    for part in values.chunks(1 << 14) {
        chunk.clear();
        for v in part {
            chunk.extend_from_slice(&v.to_le_bytes());
        }
        sink.write_all(&chunk)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_padded_to_64() {
        for shape in [&[][..], &[5], &[3, 4], &[u64::MAX; 64]] {
            let h = header("<f4", shape);
            assert_eq!(h.len() % 64, 0);
            assert_eq!(&h[..8], b"\x93NUMPY\x01\x00");
            let len = u16::from_le_bytes([h[8], h[9]]) as usize;
            assert_eq!(10 + len, h.len());
            assert_eq!(h.last(), Some(&b'\n'));
        }
        let h = header("|b1", &[7]);
        let text = std::str::from_utf8(&h[10..]).unwrap();
        assert!(text.starts_with("{'descr': '|b1', 'fortran_order': False, 'shape': (7,), }"));
        let h = header("<f2", &[]);
        assert!(std::str::from_utf8(&h[10..])
            .unwrap()
            .contains("'shape': ()"));
    }

    fn f128(v: f64) -> u128 {
        // Exact widening of a float64 normal to binary128.
        let b = v.to_bits();
        let sign = u128::from(b >> 63) << 127;
        let exp = ((b >> 52) & 0x7FF) as u128;
        let man = u128::from(b & ((1 << 52) - 1));
        sign | ((exp + 16383 - 1023) << 112) | (man << 60)
    }

    #[test]
    fn binary128_narrows_to_float64() {
        for v in [
            1.0,
            -2.5,
            1e300,
            -1e-300,
            f64::MAX,
            f64::MIN_POSITIVE,
            0.1,
            3.0e-310,
        ] {
            if v.abs() >= f64::MIN_POSITIVE {
                assert_eq!(f128_to_f64(f128(v)), v);
            }
        }
        assert_eq!(f128_to_f64(0), 0.0);
        assert_eq!(f128_to_f64(1u128 << 127).to_bits(), (-0.0f64).to_bits());
        let inf = 0x7FFFu128 << 112;
        assert_eq!(f128_to_f64(inf), f64::INFINITY);
        assert!(f128_to_f64(inf | 1 << 100).is_nan());
        // 1 + 2^-53 is a tie: rounds to even (1.0); 1 + 2^-53 + 2^-100 rounds up.
        let one = 16383u128 << 112;
        assert_eq!(f128_to_f64(one | 1 << 59), 1.0);
        assert_eq!(f128_to_f64(one | 1 << 59 | 1 << 12), 1.0 + f64::EPSILON);
        // Largest binary128 below 2^1024 rounds to infinity.
        assert_eq!(
            f128_to_f64(((1023 + 16383) << 112) | ((1u128 << 112) - 1)),
            f64::INFINITY
        );
        // 2^-1074 (the smallest float64 subnormal) and 2^-1075 (a tie with 0).
        assert_eq!(f128_to_f64((16383 - 1074) << 112), f64::from_bits(1));
        assert_eq!(f128_to_f64((16383 - 1075) << 112), 0.0);
        assert_eq!(f128_to_f64(((16383 - 1075) << 112) | 1), f64::from_bits(1));
        // 1.5 * 2^-1073 = 3 * 2^-1074 exactly.
        assert_eq!(
            f128_to_f64(((16383 - 1073) << 112) | 1 << 111),
            f64::from_bits(3)
        );
    }

    #[test]
    fn import_inverts_export() {
        for ty in crate::model::BUILTIN_TYPES.iter().copied() {
            let d = dtype(ty).map(|d| d.descr);
            match import_type(d.unwrap_or("")) {
                Some(back) if back == ty => assert!(is_native(ty) || ty == ElementType::Bool),
                _ => assert!(!is_native(ty) && ty != ElementType::Bool, "{ty:?}"),
            }
        }
        assert_eq!(import_type(">f4"), None);
        let data = [1u8, 0, 2, 1, 0, 0, 0, 0, 1];
        assert_eq!(
            stored_bytes(ElementType::Bool, &data).as_deref(),
            Some(&[0b1101u8, 1][..])
        );
        assert_eq!(
            stored_bytes(ElementType::Int8, &data).as_deref(),
            Some(&data[..])
        );
        assert_eq!(stored_bytes(ElementType::Bfloat16, &data), None);
    }

    #[test]
    fn elements_widen() {
        let none: FloatDecoder = |_, _| None;
        let mut out = Vec::new();
        assert!(push_element(ElementType::Int4, 0xF, none, &mut out));
        assert!(push_element(ElementType::Int4, 0x7, none, &mut out));
        assert!(push_element(ElementType::Int2, 0b10, none, &mut out));
        assert!(push_element(ElementType::Uint2, 0b11, none, &mut out));
        assert!(push_element(ElementType::Bool, 1, none, &mut out));
        assert_eq!(out, [0xFF, 7, 0xFE, 3, 1]);
        out.clear();
        assert!(push_element(ElementType::Bfloat16, 0x3FC0, none, &mut out));
        assert_eq!(f32::from_le_bytes(out[..4].try_into().unwrap()), 1.5);
        assert!(!push_element(ElementType::Float8E4m3, 0x38, none, &mut out));
        assert!(!push_element(
            ElementType::Extension(0xF0),
            0,
            none,
            &mut out
        ));
    }
}

//! Element values in logical row-major order, as numbers: the kinds of element a
//! tensor's values arrive as, and their decoding to `f64`.

use half::{bf16, f16};

use crate::model::ElementType;

/// How the bytes of a run of values encode each value (little-endian).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    /// IEEE binary16.
    Float16,
    /// bfloat16.
    Bfloat16,
    /// IEEE binary32.
    Float32,
    /// IEEE binary64.
    Float64,
    /// A one-byte code of a narrow float type (float8 variants), decoded by the
    /// element-type decoders.
    Narrow(ElementType),
    /// Signed integers of 1, 2, 4 or 8 bytes.
    Int(u8),
    /// Unsigned integers of 1, 2, 4 or 8 bytes.
    Uint(u8),
    /// One byte per element, zero false, anything else true.
    Bool,
    /// Complex numbers of two float32 (`8`) or two float64 (`16`) parts: each part
    /// counts as one value.
    Complex(u8),
    /// Bytes compared as they are, with no numeric meaning (an extension type).
    Raw(u8),
}

impl ValueKind {
    /// Bytes per value.
    pub fn size(self) -> usize {
        match self {
            ValueKind::Float16 | ValueKind::Bfloat16 => 2,
            ValueKind::Float32 => 4,
            ValueKind::Float64 => 8,
            ValueKind::Narrow(_) | ValueKind::Bool => 1,
            ValueKind::Int(n) | ValueKind::Uint(n) | ValueKind::Raw(n) => usize::from(n),
            ValueKind::Complex(n) => usize::from(n / 2),
        }
    }

    /// Whether the values are numbers (statistics and differences apply).
    pub fn is_numeric(self) -> bool {
        !matches!(self, ValueKind::Raw(_))
    }

    /// The kind of a NumPy dtype string of [`crate::npy::dtype`] (what the export of
    /// a HRRYFILE tensor writes).
    pub fn from_descr(descr: &str) -> Option<ValueKind> {
        Some(match descr {
            "<f2" => ValueKind::Float16,
            "<f4" => ValueKind::Float32,
            "<f8" => ValueKind::Float64,
            "|i1" => ValueKind::Int(1),
            "|u1" => ValueKind::Uint(1),
            "<i2" => ValueKind::Int(2),
            "<u2" => ValueKind::Uint(2),
            "<i4" => ValueKind::Int(4),
            "<u4" => ValueKind::Uint(4),
            "<i8" => ValueKind::Int(8),
            "<u8" => ValueKind::Uint(8),
            "|b1" => ValueKind::Bool,
            "<c8" => ValueKind::Complex(8),
            "<c16" => ValueKind::Complex(16),
            _ => return None,
        })
    }

    /// The kind that holds element type `ty` as stored, one element per whole
    /// number of bytes; `None` for sub-byte and other packed types.
    pub fn stored(ty: ElementType) -> Option<ValueKind> {
        use ElementType::*;
        Some(match ty {
            Float16 => ValueKind::Float16,
            Bfloat16 => ValueKind::Bfloat16,
            Float32 => ValueKind::Float32,
            Float64 => ValueKind::Float64,
            Float8E4m3 | Float8E5m2 | Float8E8m0 => ValueKind::Narrow(ty),
            Int8 => ValueKind::Int(1),
            Int16 => ValueKind::Int(2),
            Int32 => ValueKind::Int(4),
            Int64 => ValueKind::Int(8),
            Uint8 => ValueKind::Uint(1),
            Uint16 => ValueKind::Uint(2),
            Uint32 => ValueKind::Uint(4),
            Uint64 => ValueKind::Uint(8),
            Complex64 => ValueKind::Complex(8),
            Complex128 => ValueKind::Complex(16),
            _ => return None,
        })
    }

    /// Whether the values are integers (exact as `i128`).
    fn is_integer(self) -> bool {
        matches!(
            self,
            ValueKind::Int(_) | ValueKind::Uint(_) | ValueKind::Bool
        )
    }
}

/// A run of whole values of one kind, in logical row-major order.
#[derive(Clone, Copy, Debug)]
pub struct Values<'a> {
    /// How each value is encoded.
    pub kind: ValueKind,
    /// The encoded values (a whole number of [`ValueKind::size`]).
    pub bytes: &'a [u8],
}

impl Values<'_> {
    /// Number of values.
    pub fn len(&self) -> usize {
        self.bytes.len() / self.kind.size().max(1)
    }

    /// True when there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Replaces the contents of `out` with the values as `f64` (exact for every
    /// float kind and for integers up to 2^53; a raw byte is its unsigned value).
    pub fn decode_into(&self, out: &mut Vec<f64>) {
        out.clear();
        let b = self.bytes;
        macro_rules! each {
            ($n:expr, $f:expr) => {
                out.extend(b.chunks_exact($n).map(|c| $f(c.try_into().unwrap())))
            };
        }
        match self.kind {
            ValueKind::Float16 => {
                each!(2, |c: [u8; 2]| f64::from(f16::from_le_bytes(c).to_f32()))
            }
            ValueKind::Bfloat16 => {
                each!(2, |c: [u8; 2]| f64::from(bf16::from_le_bytes(c).to_f32()))
            }
            ValueKind::Float32 | ValueKind::Complex(8) => {
                each!(4, |c: [u8; 4]| f64::from(f32::from_le_bytes(c)))
            }
            ValueKind::Float64 | ValueKind::Complex(_) => each!(8, f64::from_le_bytes),
            ValueKind::Narrow(ty) => out.extend(b.iter().map(|&c| {
                crate::quant::element::float_value(ty, u32::from(c)).map_or(f64::NAN, f64::from)
            })),
            ValueKind::Bool => out.extend(b.iter().map(|&c| f64::from(u8::from(c != 0)))),
            ValueKind::Int(1) => out.extend(b.iter().map(|&c| f64::from(c as i8))),
            ValueKind::Int(2) => each!(2, |c| f64::from(i16::from_le_bytes(c))),
            ValueKind::Int(4) => each!(4, |c| f64::from(i32::from_le_bytes(c))),
            ValueKind::Int(_) => each!(8, |c| i64::from_le_bytes(c) as f64),
            ValueKind::Uint(1) | ValueKind::Raw(_) => out.extend(b.iter().map(|&c| f64::from(c))),
            ValueKind::Uint(2) => each!(2, |c| f64::from(u16::from_le_bytes(c))),
            ValueKind::Uint(4) => each!(4, |c| f64::from(u32::from_le_bytes(c))),
            ValueKind::Uint(_) => each!(8, |c| u64::from_le_bytes(c) as f64),
        }
    }

    /// Value `i` as an exact integer, for integer kinds.
    fn integer(&self, i: usize) -> Option<i128> {
        let size = self.kind.size();
        let c = self.bytes.get(i * size..(i + 1) * size)?;
        let mut wide = [0u8; 16];
        wide[..size].copy_from_slice(c);
        let unsigned = i128::from_le_bytes(wide);
        Some(match self.kind {
            ValueKind::Bool => i128::from(c[0] != 0),
            ValueKind::Int(_) => {
                let shift = 128 - 8 * size as u32;
                (unsigned << shift) >> shift
            }
            _ => unsigned,
        })
    }
}

/// Whether two values are equal within `tolerance` (both NaN counts as equal),
/// and their absolute difference (infinite when only one is NaN, or for infinities
/// of different sign).
pub(crate) fn difference(a: f64, b: f64) -> f64 {
    if a == b || (a.is_nan() && b.is_nan()) {
        0.0
    } else if a.is_nan() || b.is_nan() {
        f64::INFINITY
    } else {
        (a - b).abs()
    }
}

/// Whether value `i` of `a` and value `j` of `b` (decoded as `x` and `y`) differ by
/// more than `tolerance`. Integers of integer kinds are compared exactly when
/// `tolerance` is zero (past 2^53, `f64` would merge neighbours).
pub(crate) fn differs(
    a: &Values<'_>,
    i: usize,
    x: f64,
    b: &Values<'_>,
    j: usize,
    y: f64,
    tolerance: f64,
) -> bool {
    if tolerance == 0.0 && a.kind.is_integer() && b.kind.is_integer() {
        return a.integer(i) != b.integer(j);
    }
    difference(x, y) > tolerance
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_every_kind() {
        let mut out = Vec::new();
        let f = 1.5f32.to_le_bytes();
        Values {
            kind: ValueKind::Float32,
            bytes: &f,
        }
        .decode_into(&mut out);
        assert_eq!(out, [1.5]);
        let h = f16::from_f32(-2.0).to_le_bytes();
        Values {
            kind: ValueKind::Float16,
            bytes: &h,
        }
        .decode_into(&mut out);
        assert_eq!(out, [-2.0]);
        let b = bf16::from_f32(3.0).to_le_bytes();
        Values {
            kind: ValueKind::Bfloat16,
            bytes: &b,
        }
        .decode_into(&mut out);
        assert_eq!(out, [3.0]);
        Values {
            kind: ValueKind::Int(1),
            bytes: &[0xFF, 1],
        }
        .decode_into(&mut out);
        assert_eq!(out, [-1.0, 1.0]);
        let i = (-5i64).to_le_bytes();
        let v = Values {
            kind: ValueKind::Int(8),
            bytes: &i,
        };
        v.decode_into(&mut out);
        assert_eq!(out, [-5.0]);
        assert_eq!(v.integer(0), Some(-5));
        let u = u64::MAX.to_le_bytes();
        let v = Values {
            kind: ValueKind::Uint(8),
            bytes: &u,
        };
        assert_eq!(v.integer(0), Some(i128::from(u64::MAX)));
        Values {
            kind: ValueKind::Bool,
            bytes: &[0, 7],
        }
        .decode_into(&mut out);
        assert_eq!(out, [0.0, 1.0]);
    }

    #[test]
    fn large_integers_differ_exactly() {
        let a = (1u64 << 60).to_le_bytes();
        let b = ((1u64 << 60) + 1).to_le_bytes();
        let (va, vb) = (
            Values {
                kind: ValueKind::Uint(8),
                bytes: &a,
            },
            Values {
                kind: ValueKind::Uint(8),
                bytes: &b,
            },
        );
        let (x, y) = ((1u64 << 60) as f64, ((1u64 << 60) + 1) as f64);
        assert_eq!(x, y);
        assert!(differs(&va, 0, x, &vb, 0, y, 0.0));
        assert!(!differs(&va, 0, x, &va, 0, x, 0.0));
        assert_eq!(difference(f64::NAN, f64::NAN), 0.0);
        assert_eq!(difference(1.0, f64::NAN), f64::INFINITY);
    }
}

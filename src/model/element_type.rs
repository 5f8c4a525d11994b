//! Element types (element-types.md): tags, names, widths and buffer sizes.

use crate::schema::TensorDescriptor;

/// Every built-in element type of element-types.md, plus private extension tags.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElementType {
    /// `0x01` IEEE binary16.
    Float16,
    /// `0x02` bfloat16.
    Bfloat16,
    /// `0x03` IEEE binary32.
    Float32,
    /// `0x04` IEEE binary64.
    Float64,
    /// `0x10`.
    Int8,
    /// `0x11`.
    Uint8,
    /// `0x12`.
    Int16,
    /// `0x13`.
    Uint16,
    /// `0x14`.
    Int32,
    /// `0x15`.
    Uint32,
    /// `0x16`.
    Int64,
    /// `0x17`.
    Uint64,
    /// `0x20` packed 8 per byte.
    Bool,
    /// `0x40` OCP FP8 E4M3.
    Float8E4m3,
    /// `0x41` FP8 E5M2.
    Float8E5m2,
    /// `0x42` exponent-only E8M0.
    Float8E8m0,
    /// `0x43` FP4 E2M1, two per byte.
    Float4E2m1,
    /// `0x44` FP6 E2M3, four per three bytes.
    Float6E2m3,
    /// `0x45` FP6 E3M2, four per three bytes.
    Float6E3m2,
    /// `0x46` IEEE binary128.
    Float128,
    /// `0x48` signed 4-bit, two per byte.
    Int4,
    /// `0x49` unsigned 4-bit.
    Uint4,
    /// `0x4A` signed 2-bit, four per byte.
    Int2,
    /// `0x4B` unsigned 2-bit.
    Uint2,
    /// `0x50` two float32.
    Complex64,
    /// `0x51` two float64.
    Complex128,
    /// `0xF0`–`0xFE` implementation-private; widths come from the extension section.
    Extension(u8),
}

use ElementType::*;

/// All built-in types in tag order.
pub const BUILTIN_TYPES: [ElementType; 26] = [
    Float16, Bfloat16, Float32, Float64, Int8, Uint8, Int16, Uint16, Int32, Uint32, Int64, Uint64,
    Bool, Float8E4m3, Float8E5m2, Float8E8m0, Float4E2m1, Float6E2m3, Float6E3m2, Float128, Int4,
    Uint4, Int2, Uint2, Complex64, Complex128,
];

impl ElementType {
    /// The type for `tag`, or `None` for reserved and unassigned tags.
    pub fn from_tag(tag: u8) -> Option<Self> {
        Some(match tag {
            0x01 => Float16,
            0x02 => Bfloat16,
            0x03 => Float32,
            0x04 => Float64,
            0x10 => Int8,
            0x11 => Uint8,
            0x12 => Int16,
            0x13 => Uint16,
            0x14 => Int32,
            0x15 => Uint32,
            0x16 => Int64,
            0x17 => Uint64,
            0x20 => Bool,
            0x40 => Float8E4m3,
            0x41 => Float8E5m2,
            0x42 => Float8E8m0,
            0x43 => Float4E2m1,
            0x44 => Float6E2m3,
            0x45 => Float6E3m2,
            0x46 => Float128,
            0x48 => Int4,
            0x49 => Uint4,
            0x4A => Int2,
            0x4B => Uint2,
            0x50 => Complex64,
            0x51 => Complex128,
            0xF0..=0xFE => Extension(tag),
            _ => return None,
        })
    }

    /// The wire tag.
    pub fn tag(self) -> u8 {
        match self {
            Float16 => 0x01,
            Bfloat16 => 0x02,
            Float32 => 0x03,
            Float64 => 0x04,
            Int8 => 0x10,
            Uint8 => 0x11,
            Int16 => 0x12,
            Uint16 => 0x13,
            Int32 => 0x14,
            Uint32 => 0x15,
            Int64 => 0x16,
            Uint64 => 0x17,
            Bool => 0x20,
            Float8E4m3 => 0x40,
            Float8E5m2 => 0x41,
            Float8E8m0 => 0x42,
            Float4E2m1 => 0x43,
            Float6E2m3 => 0x44,
            Float6E3m2 => 0x45,
            Float128 => 0x46,
            Int4 => 0x48,
            Uint4 => 0x49,
            Int2 => 0x4A,
            Uint2 => 0x4B,
            Complex64 => 0x50,
            Complex128 => 0x51,
            Extension(t) => t,
        }
    }

    /// The spec's name (`float32`, `int4`, …); `extension` for private tags.
    pub fn name(self) -> &'static str {
        match self {
            Float16 => "float16",
            Bfloat16 => "bfloat16",
            Float32 => "float32",
            Float64 => "float64",
            Int8 => "int8",
            Uint8 => "uint8",
            Int16 => "int16",
            Uint16 => "uint16",
            Int32 => "int32",
            Uint32 => "uint32",
            Int64 => "int64",
            Uint64 => "uint64",
            Bool => "bool",
            Float8E4m3 => "float8_e4m3",
            Float8E5m2 => "float8_e5m2",
            Float8E8m0 => "float8_e8m0",
            Float4E2m1 => "float4_e2m1",
            Float6E2m3 => "float6_e2m3",
            Float6E3m2 => "float6_e3m2",
            Float128 => "float128",
            Int4 => "int4",
            Uint4 => "uint4",
            Int2 => "int2",
            Uint2 => "uint2",
            Complex64 => "complex64",
            Complex128 => "complex128",
            Extension(_) => "extension",
        }
    }

    /// The type named `name` (built-in types only).
    pub fn from_name(name: &str) -> Option<Self> {
        BUILTIN_TYPES.iter().copied().find(|t| t.name() == name)
    }

    /// Bits per element; `None` for extension tags (see the extension section).
    pub fn bit_width(self) -> Option<u32> {
        Some(match self {
            Bool => 1,
            Int2 | Uint2 => 2,
            Int4 | Uint4 | Float4E2m1 => 4,
            Float6E2m3 | Float6E3m2 => 6,
            Int8 | Uint8 | Float8E4m3 | Float8E5m2 | Float8E8m0 => 8,
            Float16 | Bfloat16 | Int16 | Uint16 => 16,
            Float32 | Int32 | Uint32 => 32,
            Float64 | Int64 | Uint64 | Complex64 => 64,
            Float128 | Complex128 => 128,
            Extension(_) => return None,
        })
    }

    /// True when `bits` is a code no element of this type may hold: `float8_e8m0`'s
    /// 0x00 and 0xFF (element-types.md § Float8 Variants). Other types have none.
    pub fn is_reserved_code(self, bits: u128) -> bool {
        self == Float8E8m0 && (bits == 0x00 || bits == 0xFF)
    }

    /// True for types narrower than a byte.
    pub fn is_sub_byte(self) -> bool {
        self.bit_width().is_some_and(|w| w < 8)
    }

    /// True for signed integer storage (int2/4/8/16/32/64).
    pub fn is_signed_int(self) -> bool {
        matches!(self, Int2 | Int4 | Int8 | Int16 | Int32 | Int64)
    }

    /// Minimum bytes for `n` contiguous elements (element-types.md "Buffer Size
    /// Calculation"); `None` on overflow or for extension tags.
    pub fn buffer_size(self, n: u64) -> Option<u64> {
        packed_size(self.bit_width()?, n)
    }
}

/// Bytes for `n` elements of `bit_width` bits: whole bytes multiply, 1/2/4-bit
/// types pack `8 / width` per byte, 6-bit types pack four into three bytes.
pub fn packed_size(bit_width: u32, n: u64) -> Option<u64> {
    match bit_width {
        6 => n.div_ceil(4).checked_mul(3),
        1 | 2 | 4 => Some(n.div_ceil(u64::from(8 / bit_width))),
        w if w % 8 == 0 && w > 0 => n.checked_mul(u64::from(w / 8)),
        _ => None,
    }
}

/// The element type of a descriptor, without going through tags.
impl TensorDescriptor {
    /// The element type its `type_tag` names; `None` for an unassigned tag.
    pub fn element_type(&self) -> Option<ElementType> {
        ElementType::from_tag(self.type_tag)
    }

    /// Bits per stored element: the built-in width of its type, or for an
    /// extension type the `bit_width` of its extension-type section. `None` for
    /// an unassigned tag or an extension type without that section.
    pub fn element_bits(&self) -> Option<u32> {
        match self.element_type()? {
            Extension(_) => self.extension_type.map(|e| e.bit_width),
            t => t.bit_width(),
        }
    }
}

/// Product of `shape`, `None` on overflow or when a dimension is the dynamic
/// sentinel `u64::MAX`.
pub fn element_count(shape: &[u64]) -> Option<u64> {
    shape.iter().try_fold(1u64, |acc, &d| {
        if d == u64::MAX {
            None
        } else {
            acc.checked_mul(d)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_round_trip() {
        for t in BUILTIN_TYPES {
            assert_eq!(ElementType::from_tag(t.tag()), Some(t));
            assert_eq!(ElementType::from_name(t.name()), Some(t));
        }
        assert_eq!(ElementType::from_tag(0x47), None);
        assert_eq!(ElementType::from_tag(0x00), None);
        assert_eq!(ElementType::from_tag(0xFF), None);
    }

    #[test]
    fn buffer_sizes_follow_packing_rules() {
        assert_eq!(Bool.buffer_size(10), Some(2));
        assert_eq!(Int4.buffer_size(3), Some(2));
        assert_eq!(Uint2.buffer_size(5), Some(2));
        assert_eq!(Float6E2m3.buffer_size(5), Some(6));
        assert_eq!(Float6E3m2.buffer_size(4), Some(3));
        assert_eq!(Float32.buffer_size(12), Some(48));
        assert_eq!(Complex128.buffer_size(2), Some(32));
        assert_eq!(Float64.buffer_size(u64::MAX), None);
        assert_eq!(element_count(&[]), Some(1));
        assert_eq!(element_count(&[3, 0]), Some(0));
        assert_eq!(element_count(&[u64::MAX]), None);
    }
}

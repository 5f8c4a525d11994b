//! Real values of storage codes (element-types.md): sign extension of packed
//! integers, the OCP narrow float formats, `float8_e8m0`, and the NF4 levels.
//!
//! The float decoders are `const fn` so the SIMD kernels can use lookup tables built
//! at compile time from the very same functions the scalar reference calls.

use crate::model::element_type::ElementType;

/// The NF4 levels (quantization/nf4.md § Lookup Table), indexed by the 4-bit code,
/// written exactly as the spec prints them (each rounds to the intended float32).
#[allow(clippy::excessive_precision, clippy::unreadable_literal)]
pub const NF4_LEVELS: [f32; 16] = [
    -1.0,
    -0.6961928009986877,
    -0.5250730514526367,
    -0.39491748809814453,
    -0.28444138169288635,
    -0.18477343022823334,
    -0.09105003625154495,
    0.0,
    0.07958029955625534,
    0.16093020141124725,
    0.24611230194568634,
    0.33791524171829224,
    0.44070982933044434,
    0.5626170039176941,
    0.7229568362236023,
    1.0,
];

/// The quiet NaN (sign bit from `negative`) that NaN codes decode to.
const fn nan(negative: bool) -> f32 {
    f32::from_bits(if negative { 0xFFC0_0000 } else { 0x7FC0_0000 })
}

/// `2^e` for `e` in the normal float32 range.
const fn pow2(e: i32) -> f32 {
    f32::from_bits(((e + 127) as u32) << 23)
}

/// A sign-magnitude minifloat with `exp_bits` exponent and `man_bits` mantissa bits
/// (no special values): subnormal when the exponent field is 0.
const fn minifloat(code: u32, exp_bits: u32, man_bits: u32, bias: i32) -> f32 {
    let negative = (code >> (exp_bits + man_bits)) & 1 == 1;
    let exp = ((code >> man_bits) & ((1 << exp_bits) - 1)) as i32;
    let man = code & ((1 << man_bits) - 1);
    let magnitude = if exp == 0 {
        man as f32 * pow2(1 - bias - man_bits as i32)
    } else {
        (man + (1 << man_bits)) as f32 * pow2(exp - bias - man_bits as i32)
    };
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

/// `float8_e4m3` (OCP OFP8, bias 7): `0x7F` and `0xFF` are NaN, no infinities.
pub const fn float8_e4m3(code: u8) -> f32 {
    if code & 0x7F == 0x7F {
        nan(code & 0x80 != 0)
    } else {
        minifloat(code as u32, 4, 3, 7)
    }
}

/// `float8_e5m2` (bias 15): exponent all ones is infinity (mantissa 0) or NaN.
pub const fn float8_e5m2(code: u8) -> f32 {
    let negative = code & 0x80 != 0;
    if code & 0x7C == 0x7C {
        if code & 0x03 == 0 {
            if negative {
                f32::NEG_INFINITY
            } else {
                f32::INFINITY
            }
        } else {
            nan(negative)
        }
    } else {
        minifloat(code as u32, 5, 2, 15)
    }
}

/// `float8_e8m0`: `2^(code - 127)`; the reserved codes `0x00` and `0xFF` give NaN.
pub const fn float8_e8m0(code: u8) -> f32 {
    if code == 0x00 || code == 0xFF {
        nan(false)
    } else {
        pow2(code as i32 - 127)
    }
}

/// `float4_e2m1` (bias 1): no special values.
pub const fn float4_e2m1(code: u8) -> f32 {
    minifloat((code & 0x0F) as u32, 2, 1, 1)
}

/// `float6_e2m3` (bias 1, largest finite 7.5): no special values.
pub const fn float6_e2m3(code: u8) -> f32 {
    minifloat((code & 0x3F) as u32, 2, 3, 1)
}

/// `float6_e3m2` (bias 3, largest finite 28): no special values.
pub const fn float6_e3m2(code: u8) -> f32 {
    minifloat((code & 0x3F) as u32, 3, 2, 3)
}

/// The value of `code` (the element's raw bits) for a float storage type, `None`
/// for other types.
pub fn float_value(ty: ElementType, code: u32) -> Option<f32> {
    let c = code as u8;
    Some(match ty {
        ElementType::Float8E4m3 => float8_e4m3(c),
        ElementType::Float8E5m2 => float8_e5m2(c),
        ElementType::Float8E8m0 => float8_e8m0(c),
        ElementType::Float4E2m1 => float4_e2m1(c),
        ElementType::Float6E2m3 => float6_e2m3(c),
        ElementType::Float6E3m2 => float6_e3m2(c),
        _ => return None,
    })
}

/// The integer value of `code` (the element's raw bits) for an integer storage type
/// of at most 32 bits, sign-extended for signed types; `None` for other types.
pub fn int_value(ty: ElementType, code: u32) -> Option<i64> {
    let width = match ty {
        ElementType::Int2 | ElementType::Uint2 => 2,
        ElementType::Int4 | ElementType::Uint4 => 4,
        ElementType::Int8 | ElementType::Uint8 => 8,
        ElementType::Int16 | ElementType::Uint16 => 16,
        ElementType::Int32 | ElementType::Uint32 => 32,
        _ => return None,
    };
    let raw = i64::from(code);
    Some(if ty.is_signed_int() && raw >> (width - 1) & 1 == 1 {
        raw - (1i64 << width)
    } else {
        raw
    })
}

/// A lookup table of `N` entries built from a `const fn(u8) -> f32` decoder.
macro_rules! code_table {
    ($decode:ident, $n:expr) => {{
        let mut t = [0.0f32; $n];
        let mut i = 0;
        while i < $n {
            t[i] = $decode(i as u8);
            i += 1;
        }
        t
    }};
}

/// `float8_e4m3` values by code, for the SIMD kernels.
pub(crate) static FLOAT8_E4M3_TABLE: [f32; 256] = code_table!(float8_e4m3, 256);
/// `float8_e5m2` values by code, for the SIMD kernels.
pub(crate) static FLOAT8_E5M2_TABLE: [f32; 256] = code_table!(float8_e5m2, 256);
/// `float4_e2m1` values by code, for the SIMD kernels.
pub(crate) const FLOAT4_E2M1_LEVELS: [f32; 16] = code_table!(float4_e2m1, 16);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float4_e2m1_value_map() {
        // element-types.md § float4_e2m1 value map.
        let want = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];
        for (c, &w) in want.iter().enumerate() {
            assert_eq!(float4_e2m1(c as u8), w);
            assert_eq!(float4_e2m1(c as u8 | 8), -w);
        }
        assert_eq!(float4_e2m1(8).to_bits(), 0x8000_0000);
    }

    #[test]
    fn float8_specials_and_extremes() {
        assert_eq!(float8_e4m3(0x7E), 448.0);
        assert_eq!(float8_e4m3(0x01), 2f32.powi(-9));
        assert_eq!(float8_e4m3(0x38), 1.0);
        assert!(float8_e4m3(0x7F).is_nan() && float8_e4m3(0xFF).is_nan());
        assert_eq!(float8_e5m2(0x7B), 57344.0);
        assert_eq!(float8_e5m2(0x7C), f32::INFINITY);
        assert_eq!(float8_e5m2(0xFC), f32::NEG_INFINITY);
        assert!(float8_e5m2(0x7D).is_nan());
        assert_eq!(float8_e5m2(0x01), 2f32.powi(-16));
        assert_eq!(float8_e5m2(0x3C), 1.0);
        assert_eq!(float8_e8m0(127), 1.0);
        assert_eq!(float8_e8m0(1), 2f32.powi(-126));
        assert_eq!(float8_e8m0(254), 2f32.powi(127));
        assert!(float8_e8m0(0).is_nan() && float8_e8m0(0xFF).is_nan());
    }

    #[test]
    fn float6_extremes() {
        // docs/interpretations.md § Descriptor: float6_e2m3 has bias 1, largest finite 7.5.
        assert_eq!(float6_e2m3(0x1F), 7.5);
        assert_eq!(float6_e2m3(0x3F), -7.5);
        assert_eq!(float6_e2m3(0x01), 0.125);
        assert_eq!(float6_e2m3(0x08), 1.0);
        assert_eq!(float6_e3m2(0x1F), 28.0);
        assert_eq!(float6_e3m2(0x01), 0.0625);
        assert_eq!(float6_e3m2(0x0C), 1.0);
    }

    #[test]
    fn integers_sign_extend() {
        assert_eq!(int_value(ElementType::Int4, 0x8), Some(-8));
        assert_eq!(int_value(ElementType::Int4, 0x7), Some(7));
        assert_eq!(int_value(ElementType::Uint4, 0xF), Some(15));
        assert_eq!(int_value(ElementType::Int2, 0b10), Some(-2));
        assert_eq!(int_value(ElementType::Int2, 0b11), Some(-1));
        assert_eq!(int_value(ElementType::Int8, 0x80), Some(-128));
        assert_eq!(
            int_value(ElementType::Uint32, 0xFFFF_FFFF),
            Some(4_294_967_295)
        );
        assert_eq!(int_value(ElementType::Int32, 0xFFFF_FFFF), Some(-1));
        assert_eq!(int_value(ElementType::Float32, 0), None);
    }

    #[test]
    fn nf4_table_is_the_spec_bits() {
        // The float32 nearest the spec's decimal expansions.
        assert_eq!(
            NF4_LEVELS[1].to_bits(),
            (-0.6961928009986877f64 as f32).to_bits()
        );
        assert_eq!(
            NF4_LEVELS[13].to_bits(),
            (0.5626170039176941f64 as f32).to_bits()
        );
        assert_eq!(NF4_LEVELS[1].to_bits(), 0xBF32_39B1);
        assert_eq!(NF4_LEVELS[7].to_bits(), 0);
    }
}

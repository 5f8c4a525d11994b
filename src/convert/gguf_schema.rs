//! GGUF, the ggml project's model container, as far as conversion reads it: the
//! header, the metadata key/value pairs and the tensor infos (GGUF versions 2 and 3,
//! little-endian). Tensor data follows at the next multiple of the alignment
//! (`general.alignment`, default 32) and is addressed by each info's `offset`.
//!
//! Every count is checked against the bytes that remain before anything is allocated
//! (see `counted`); nested arrays are refused past [`MAX_ARRAY_DEPTH`], so a hostile
//! file can neither exhaust memory nor the stack.

use binrw::binrw;

use crate::schema::counted;

/// `GGUF`, the first four bytes of a GGUF file.
pub const GGUF_MAGIC: [u8; 4] = *b"GGUF";
/// Alignment of the tensor data when `general.alignment` is absent.
pub const GGUF_DEFAULT_ALIGNMENT: u32 = 32;
/// Key of the metadata value that overrides the data alignment.
pub const GGUF_ALIGNMENT_KEY: &str = "general.alignment";
/// Prefix of the keys describing a split set (`gguf-split`); the first file holds the
/// model's metadata, every file these keys.
pub const GGUF_SPLIT_PREFIX: &str = "split.";
/// Index of this file in its split set, from 0 (`uint16`).
pub const GGUF_SPLIT_NO_KEY: &str = "split.no";
/// Number of files in the split set (`uint16`).
pub const GGUF_SPLIT_COUNT_KEY: &str = "split.count";
/// Number of tensors in the whole split set (`int32`).
pub const GGUF_SPLIT_TENSORS_COUNT_KEY: &str = "split.tensors.count";
/// Deepest nesting of arrays inside arrays the parser follows.
pub const MAX_ARRAY_DEPTH: u32 = 8;
/// Most dimensions a tensor info may declare (ggml uses at most 4; Hurray caps
/// rank at 64).
pub const MAX_GGUF_DIMENSIONS: u32 = 64;
/// Smallest encoded metadata pair: empty key, value type, one-byte value.
pub const MIN_GGUF_KV_LEN: u64 = 8 + 4 + 1;
/// Smallest encoded tensor info: empty name, zero dimensions, type, offset.
pub const MIN_GGUF_TENSOR_INFO_LEN: u64 = 8 + 4 + 4 + 8;
/// Smallest encoded array: element type and count, no elements.
pub const MIN_GGUF_ARRAY_LEN: u64 = 4 + 8;

/// The fixed part at the start of every GGUF file: magic, version, counts.
#[binrw]
#[brw(little, magic = b"GGUF")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GgufHeader {
    /// Format version (2 and 3 share this layout; version 1 used 32-bit counts).
    pub version: u32,
    /// Number of tensor infos.
    pub tensor_count: u64,
    /// Number of metadata pairs.
    pub metadata_kv_count: u64,
}

impl GgufHeader {
    /// Encoded size in bytes, magic included.
    pub const LEN: u64 = 4 + 4 + 8 + 8;
}

/// Everything before the tensor data: header, metadata, tensor infos.
#[binrw]
#[brw(little, magic = b"GGUF")]
#[derive(Clone, Debug, PartialEq)]
pub struct GgufPreamble {
    /// Format version.
    #[br(assert(version == 2 || version == 3, "GGUF version {} is not 2 or 3", version))]
    pub version: u32,
    /// `tensor_count`.
    #[br(temp)]
    #[bw(calc = tensors.len() as u64)]
    tensor_count: u64,
    /// `metadata_kv_count`.
    #[br(temp)]
    #[bw(calc = metadata.len() as u64)]
    metadata_kv_count: u64,
    /// The metadata pairs, in file order.
    #[br(parse_with = counted(metadata_kv_count, MIN_GGUF_KV_LEN))]
    pub metadata: Vec<GgufKv>,
    /// The tensor infos, in file order.
    #[br(parse_with = counted(tensor_count, MIN_GGUF_TENSOR_INFO_LEN))]
    pub tensors: Vec<GgufTensorInfo>,
}

impl GgufPreamble {
    /// The metadata value of `key`, if present.
    pub fn value(&self, key: &str) -> Option<&GgufValue> {
        self.metadata
            .iter()
            .find(|kv| kv.key.bytes == key.as_bytes())
            .map(|kv| &kv.value)
    }
}

/// A GGUF string: `uint64` byte length then the bytes (meant to be UTF-8).
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct GgufString {
    /// Byte length.
    #[br(temp)]
    #[bw(calc = bytes.len() as u64)]
    len: u64,
    /// The bytes.
    #[br(parse_with = counted(len, 1))]
    pub bytes: Vec<u8>,
}

impl GgufString {
    /// The text, with invalid UTF-8 replaced.
    pub fn lossy(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.bytes)
    }
}

impl From<&str> for GgufString {
    fn from(s: &str) -> Self {
        GgufString {
            bytes: s.as_bytes().to_vec(),
        }
    }
}

/// One metadata pair: key, value type, value.
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq)]
pub struct GgufKv {
    /// The key (`general.architecture`, …).
    pub key: GgufString,
    /// The typed value.
    #[br(args(0))]
    pub value: GgufValue,
}

/// GGUF metadata value type codes.
pub mod gguf_value_type {
    /// `uint8`.
    pub const UINT8: u32 = 0;
    /// `int8`.
    pub const INT8: u32 = 1;
    /// `uint16`.
    pub const UINT16: u32 = 2;
    /// `int16`.
    pub const INT16: u32 = 3;
    /// `uint32`.
    pub const UINT32: u32 = 4;
    /// `int32`.
    pub const INT32: u32 = 5;
    /// `float32`.
    pub const FLOAT32: u32 = 6;
    /// `bool` (one byte).
    pub const BOOL: u32 = 7;
    /// `string`.
    pub const STRING: u32 = 8;
    /// `array`.
    pub const ARRAY: u32 = 9;
    /// `uint64`.
    pub const UINT64: u32 = 10;
    /// `int64`.
    pub const INT64: u32 = 11;
    /// `float64`.
    pub const FLOAT64: u32 = 12;
}

/// The name of metadata value type `code` (`uint8` … `float64`), or `unknown`.
pub fn gguf_type_name(code: u32) -> &'static str {
    use gguf_value_type::*;
    match code {
        UINT8 => "uint8",
        INT8 => "int8",
        UINT16 => "uint16",
        INT16 => "int16",
        UINT32 => "uint32",
        INT32 => "int32",
        FLOAT32 => "float32",
        BOOL => "bool",
        STRING => "string",
        ARRAY => "array",
        UINT64 => "uint64",
        INT64 => "int64",
        FLOAT64 => "float64",
        _ => "unknown",
    }
}

/// The metadata value type code named `name` (as [`gguf_type_name`] gives it).
pub fn gguf_type_code(name: &str) -> Option<u32> {
    (0..=gguf_value_type::FLOAT64).find(|&c| gguf_type_name(c) == name)
}

/// A metadata value with its `uint32` type code. `depth` is the array nesting level
/// of this value (0 for a top-level value).
#[binrw]
#[brw(little)]
#[br(import(depth: u32))]
#[derive(Clone, Debug, PartialEq)]
pub enum GgufValue {
    /// Type 0.
    #[brw(magic = 0u32)]
    Uint8(u8),
    /// Type 1.
    #[brw(magic = 1u32)]
    Int8(i8),
    /// Type 2.
    #[brw(magic = 2u32)]
    Uint16(u16),
    /// Type 3.
    #[brw(magic = 3u32)]
    Int16(i16),
    /// Type 4.
    #[brw(magic = 4u32)]
    Uint32(u32),
    /// Type 5.
    #[brw(magic = 5u32)]
    Int32(i32),
    /// Type 6.
    #[brw(magic = 6u32)]
    Float32(f32),
    /// Type 7, the raw byte (0 false, 1 true).
    #[brw(magic = 7u32)]
    Bool(u8),
    /// Type 8.
    #[brw(magic = 8u32)]
    String(GgufString),
    /// Type 9.
    #[brw(magic = 9u32)]
    Array(#[br(args(depth))] GgufArray),
    /// Type 10.
    #[brw(magic = 10u32)]
    Uint64(u64),
    /// Type 11.
    #[brw(magic = 11u32)]
    Int64(i64),
    /// Type 12.
    #[brw(magic = 12u32)]
    Float64(f64),
}

impl GgufValue {
    /// The value's type code.
    pub fn value_type(&self) -> u32 {
        use gguf_value_type::*;
        match self {
            GgufValue::Uint8(_) => UINT8,
            GgufValue::Int8(_) => INT8,
            GgufValue::Uint16(_) => UINT16,
            GgufValue::Int16(_) => INT16,
            GgufValue::Uint32(_) => UINT32,
            GgufValue::Int32(_) => INT32,
            GgufValue::Float32(_) => FLOAT32,
            GgufValue::Bool(_) => BOOL,
            GgufValue::String(_) => STRING,
            GgufValue::Array(_) => ARRAY,
            GgufValue::Uint64(_) => UINT64,
            GgufValue::Int64(_) => INT64,
            GgufValue::Float64(_) => FLOAT64,
        }
    }

    /// The value as an unsigned integer, when it is a non-negative integer.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            GgufValue::Uint8(v) => Some(v.into()),
            GgufValue::Uint16(v) => Some(v.into()),
            GgufValue::Uint32(v) => Some(v.into()),
            GgufValue::Uint64(v) => Some(v),
            GgufValue::Int8(v) => u64::try_from(v).ok(),
            GgufValue::Int16(v) => u64::try_from(v).ok(),
            GgufValue::Int32(v) => u64::try_from(v).ok(),
            GgufValue::Int64(v) => u64::try_from(v).ok(),
            _ => None,
        }
    }
}

/// An array value: element type code, `uint64` count, elements. Elements are kept
/// in one vector of their own type, so memory stays proportional to the input.
#[binrw]
#[brw(little)]
#[br(import(depth: u32))]
#[derive(Clone, Debug, PartialEq)]
pub struct GgufArray {
    /// Element type code.
    #[br(temp, assert(
        element_type != gguf_value_type::ARRAY || depth < MAX_ARRAY_DEPTH,
        "arrays nested deeper than {}", MAX_ARRAY_DEPTH
    ))]
    #[bw(calc = values.value_type())]
    element_type: u32,
    /// Element count.
    #[br(temp)]
    #[bw(calc = values.len() as u64)]
    count: u64,
    /// The elements.
    #[br(args(element_type, count, depth))]
    pub values: GgufArrayValues,
}

/// The elements of a [`GgufArray`], by element type.
#[binrw]
#[brw(little)]
#[br(import(element_type: u32, count: u64, depth: u32))]
#[derive(Clone, Debug, PartialEq)]
pub enum GgufArrayValues {
    /// `uint8` elements.
    #[br(pre_assert(element_type == gguf_value_type::UINT8))]
    Uint8(#[br(parse_with = counted(count, 1))] Vec<u8>),
    /// `int8` elements.
    #[br(pre_assert(element_type == gguf_value_type::INT8))]
    Int8(#[br(parse_with = counted(count, 1))] Vec<i8>),
    /// `uint16` elements.
    #[br(pre_assert(element_type == gguf_value_type::UINT16))]
    Uint16(#[br(parse_with = counted(count, 2))] Vec<u16>),
    /// `int16` elements.
    #[br(pre_assert(element_type == gguf_value_type::INT16))]
    Int16(#[br(parse_with = counted(count, 2))] Vec<i16>),
    /// `uint32` elements.
    #[br(pre_assert(element_type == gguf_value_type::UINT32))]
    Uint32(#[br(parse_with = counted(count, 4))] Vec<u32>),
    /// `int32` elements.
    #[br(pre_assert(element_type == gguf_value_type::INT32))]
    Int32(#[br(parse_with = counted(count, 4))] Vec<i32>),
    /// `float32` elements.
    #[br(pre_assert(element_type == gguf_value_type::FLOAT32))]
    Float32(#[br(parse_with = counted(count, 4))] Vec<f32>),
    /// `bool` elements (raw bytes).
    #[br(pre_assert(element_type == gguf_value_type::BOOL))]
    Bool(#[br(parse_with = counted(count, 1))] Vec<u8>),
    /// `string` elements.
    #[br(pre_assert(element_type == gguf_value_type::STRING))]
    String(#[br(parse_with = counted(count, 8))] Vec<GgufString>),
    /// Nested arrays.
    #[br(pre_assert(element_type == gguf_value_type::ARRAY))]
    Array(#[br(parse_with = counted(count, MIN_GGUF_ARRAY_LEN), args(depth + 1))] Vec<GgufArray>),
    /// `uint64` elements.
    #[br(pre_assert(element_type == gguf_value_type::UINT64))]
    Uint64(#[br(parse_with = counted(count, 8))] Vec<u64>),
    /// `int64` elements.
    #[br(pre_assert(element_type == gguf_value_type::INT64))]
    Int64(#[br(parse_with = counted(count, 8))] Vec<i64>),
    /// `float64` elements.
    #[br(pre_assert(element_type == gguf_value_type::FLOAT64))]
    Float64(#[br(parse_with = counted(count, 8))] Vec<f64>),
}

impl GgufArrayValues {
    /// The element type code.
    pub fn value_type(&self) -> u32 {
        use gguf_value_type::*;
        match self {
            GgufArrayValues::Uint8(_) => UINT8,
            GgufArrayValues::Int8(_) => INT8,
            GgufArrayValues::Uint16(_) => UINT16,
            GgufArrayValues::Int16(_) => INT16,
            GgufArrayValues::Uint32(_) => UINT32,
            GgufArrayValues::Int32(_) => INT32,
            GgufArrayValues::Float32(_) => FLOAT32,
            GgufArrayValues::Bool(_) => BOOL,
            GgufArrayValues::String(_) => STRING,
            GgufArrayValues::Array(_) => ARRAY,
            GgufArrayValues::Uint64(_) => UINT64,
            GgufArrayValues::Int64(_) => INT64,
            GgufArrayValues::Float64(_) => FLOAT64,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            GgufArrayValues::Uint8(v) | GgufArrayValues::Bool(v) => v.len(),
            GgufArrayValues::Int8(v) => v.len(),
            GgufArrayValues::Uint16(v) => v.len(),
            GgufArrayValues::Int16(v) => v.len(),
            GgufArrayValues::Uint32(v) => v.len(),
            GgufArrayValues::Int32(v) => v.len(),
            GgufArrayValues::Float32(v) => v.len(),
            GgufArrayValues::String(v) => v.len(),
            GgufArrayValues::Array(v) => v.len(),
            GgufArrayValues::Uint64(v) => v.len(),
            GgufArrayValues::Int64(v) => v.len(),
            GgufArrayValues::Float64(v) => v.len(),
        }
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One tensor info: name, dimensions (fastest-varying first), ggml type, and the
/// offset of its data from the start of the data section.
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GgufTensorInfo {
    /// Tensor name.
    pub name: GgufString,
    /// `n_dimensions`.
    #[br(temp, assert(
        n_dimensions <= MAX_GGUF_DIMENSIONS,
        "{} dimensions exceed {}", n_dimensions, MAX_GGUF_DIMENSIONS
    ))]
    #[bw(calc = dimensions.len() as u32)]
    n_dimensions: u32,
    /// `ne[0]`, `ne[1]`, …: `ne[0]` is the contiguous (fastest-varying) one.
    #[br(parse_with = counted(n_dimensions.into(), 8))]
    pub dimensions: Vec<u64>,
    /// The ggml type code (see [`GgmlType`]).
    pub ggml_type: u32,
    /// Offset of the data from the start of the data section.
    pub offset: u64,
}

/// The ggml tensor types GGUF files carry, with their block geometry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GgmlType {
    /// 0.
    F32,
    /// 1.
    F16,
    /// 2.
    Q4_0,
    /// 3.
    Q4_1,
    /// 6.
    Q5_0,
    /// 7.
    Q5_1,
    /// 8.
    Q8_0,
    /// 9.
    Q8_1,
    /// 10.
    Q2K,
    /// 11.
    Q3K,
    /// 12.
    Q4K,
    /// 13.
    Q5K,
    /// 14.
    Q6K,
    /// 15.
    Q8K,
    /// 16.
    Iq2Xxs,
    /// 17.
    Iq2Xs,
    /// 18.
    Iq3Xxs,
    /// 19.
    Iq1S,
    /// 20.
    Iq4Nl,
    /// 21.
    Iq3S,
    /// 22.
    Iq2S,
    /// 23.
    Iq4Xs,
    /// 24.
    I8,
    /// 25.
    I16,
    /// 26.
    I32,
    /// 27.
    I64,
    /// 28.
    F64,
    /// 29.
    Iq1M,
    /// 30.
    Bf16,
    /// 34.
    Tq1_0,
    /// 35.
    Tq2_0,
    /// 39.
    Mxfp4,
}

impl GgmlType {
    /// The type of code `code`, or `None` for codes never assigned or withdrawn.
    pub fn from_code(code: u32) -> Option<Self> {
        use GgmlType::*;
        Some(match code {
            0 => F32,
            1 => F16,
            2 => Q4_0,
            3 => Q4_1,
            6 => Q5_0,
            7 => Q5_1,
            8 => Q8_0,
            9 => Q8_1,
            10 => Q2K,
            11 => Q3K,
            12 => Q4K,
            13 => Q5K,
            14 => Q6K,
            15 => Q8K,
            16 => Iq2Xxs,
            17 => Iq2Xs,
            18 => Iq3Xxs,
            19 => Iq1S,
            20 => Iq4Nl,
            21 => Iq3S,
            22 => Iq2S,
            23 => Iq4Xs,
            24 => I8,
            25 => I16,
            26 => I32,
            27 => I64,
            28 => F64,
            29 => Iq1M,
            30 => Bf16,
            34 => Tq1_0,
            35 => Tq2_0,
            39 => Mxfp4,
            _ => return None,
        })
    }

    /// The ggml name (`Q4_0`, `Q6_K`, `IQ2_XXS`, …).
    pub fn name(self) -> &'static str {
        use GgmlType::*;
        match self {
            F32 => "F32",
            F16 => "F16",
            Q4_0 => "Q4_0",
            Q4_1 => "Q4_1",
            Q5_0 => "Q5_0",
            Q5_1 => "Q5_1",
            Q8_0 => "Q8_0",
            Q8_1 => "Q8_1",
            Q2K => "Q2_K",
            Q3K => "Q3_K",
            Q4K => "Q4_K",
            Q5K => "Q5_K",
            Q6K => "Q6_K",
            Q8K => "Q8_K",
            Iq2Xxs => "IQ2_XXS",
            Iq2Xs => "IQ2_XS",
            Iq3Xxs => "IQ3_XXS",
            Iq1S => "IQ1_S",
            Iq4Nl => "IQ4_NL",
            Iq3S => "IQ3_S",
            Iq2S => "IQ2_S",
            Iq4Xs => "IQ4_XS",
            I8 => "I8",
            I16 => "I16",
            I32 => "I32",
            I64 => "I64",
            F64 => "F64",
            Iq1M => "IQ1_M",
            Bf16 => "BF16",
            Tq1_0 => "TQ1_0",
            Tq2_0 => "TQ2_0",
            Mxfp4 => "MXFP4",
        }
    }

    /// Elements per block and bytes per block (1 and the element size for plain
    /// types).
    pub fn block_geometry(self) -> (u64, u64) {
        use GgmlType::*;
        match self {
            F32 | I32 => (1, 4),
            F16 | Bf16 | I16 => (1, 2),
            F64 | I64 => (1, 8),
            I8 => (1, 1),
            Q4_0 => (32, 18),
            Q4_1 => (32, 20),
            Q5_0 => (32, 22),
            Q5_1 => (32, 24),
            Q8_0 => (32, 34),
            Q8_1 => (32, 36),
            Q2K => (256, 84),
            Q3K => (256, 110),
            Q4K => (256, 144),
            Q5K => (256, 176),
            Q6K => (256, 210),
            Q8K => (256, 292),
            Iq2Xxs => (256, 66),
            Iq2Xs => (256, 74),
            Iq3Xxs => (256, 98),
            Iq1S => (256, 50),
            Iq4Nl => (32, 18),
            Iq3S => (256, 110),
            Iq2S => (256, 82),
            Iq4Xs => (256, 136),
            Iq1M => (256, 56),
            Tq1_0 => (256, 54),
            Tq2_0 => (256, 66),
            Mxfp4 => (32, 17),
        }
    }

    /// Bytes of a tensor of `ne0` contiguous elements times `rows` rows, or `None`
    /// when `ne0` is not a whole number of blocks or the size overflows.
    pub fn tensor_bytes(self, ne0: u64, rows: u64) -> Option<u64> {
        let (block, bytes) = self.block_geometry();
        if !ne0.is_multiple_of(block) {
            return None;
        }
        (ne0 / block).checked_mul(bytes)?.checked_mul(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{read_from, to_bytes};

    fn sample() -> GgufPreamble {
        GgufPreamble {
            version: 3,
            metadata: vec![
                GgufKv {
                    key: "general.architecture".into(),
                    value: GgufValue::String("llama".into()),
                },
                GgufKv {
                    key: "general.alignment".into(),
                    value: GgufValue::Uint32(64),
                },
                GgufKv {
                    key: "nested".into(),
                    value: GgufValue::Array(GgufArray {
                        values: GgufArrayValues::Array(vec![
                            GgufArray {
                                values: GgufArrayValues::Int16(vec![-1, 2]),
                            },
                            GgufArray {
                                values: GgufArrayValues::String(vec!["a".into()]),
                            },
                        ]),
                    }),
                },
            ],
            tensors: vec![GgufTensorInfo {
                name: "w".into(),
                dimensions: vec![32, 2],
                ggml_type: 8,
                offset: 0,
            }],
        }
    }

    #[test]
    fn preamble_round_trips() {
        let p = sample();
        let bytes = to_bytes(&p);
        assert_eq!(&bytes[..4], b"GGUF");
        let (back, used) = read_from::<GgufPreamble>(&bytes).unwrap();
        assert_eq!(back, p);
        assert_eq!(used, bytes.len() as u64);
        assert_eq!(to_bytes(&back), bytes);
        assert_eq!(back.value("general.alignment").unwrap().as_u64(), Some(64));
    }

    #[test]
    fn huge_counts_are_refused_before_allocating() {
        let mut bytes = to_bytes(&sample());
        // metadata_kv_count = u64::MAX
        bytes[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(read_from::<GgufPreamble>(&bytes).is_err());
        // An array of 2^40 uint8 elements in a few bytes.
        let mut v = to_bytes(&GgufValue::Array(GgufArray {
            values: GgufArrayValues::Uint8(vec![1, 2]),
        }));
        v[8..16].copy_from_slice(&(1u64 << 40).to_le_bytes());
        let mut c = binrw::io::Cursor::new(&v);
        assert!(<GgufValue as binrw::BinRead>::read_le_args(&mut c, (0,)).is_err());
    }

    #[test]
    fn deep_nesting_is_refused() {
        // array<array<array<…>>> one level deeper than allowed, each with one element.
        let mut bytes = Vec::new();
        bytes.extend(9u32.to_le_bytes());
        for _ in 0..=MAX_ARRAY_DEPTH {
            bytes.extend(9u32.to_le_bytes());
            bytes.extend(1u64.to_le_bytes());
        }
        bytes.extend(0u32.to_le_bytes());
        bytes.extend(0u64.to_le_bytes());
        let mut c = binrw::io::Cursor::new(&bytes);
        assert!(<GgufValue as binrw::BinRead>::read_le_args(&mut c, (0,)).is_err());
        // One level fewer parses.
        let shallow = &bytes[16..];
        let mut with_tag = 9u32.to_le_bytes().to_vec();
        with_tag.extend_from_slice(shallow);
        let mut c = binrw::io::Cursor::new(&with_tag);
        assert!(<GgufValue as binrw::BinRead>::read_le_args(&mut c, (0,)).is_ok());
    }

    #[test]
    fn block_geometry_sizes() {
        assert_eq!(GgmlType::Q8_0.tensor_bytes(64, 3), Some(2 * 34 * 3));
        assert_eq!(GgmlType::Q4_0.tensor_bytes(33, 1), None);
        assert_eq!(GgmlType::F16.tensor_bytes(5, 2), Some(20));
        assert_eq!(GgmlType::F32.tensor_bytes(u64::MAX, 2), None);
        for code in 0..64 {
            if let Some(t) = GgmlType::from_code(code) {
                assert!(!t.name().is_empty());
            }
        }
        assert_eq!(GgmlType::from_code(4), None);
        assert_eq!(GgmlType::from_code(39), Some(GgmlType::Mxfp4));
    }
}

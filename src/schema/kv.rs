//! The KV metadata section (file-format.md, "KV Section Encoding", "KV Value Types").

use binrw::binrw;

use super::counted;

/// Smallest encodable KV entry: an empty key (which validation rejects), a tag and
/// a one-byte (bool) value.
pub const MIN_KV_ENTRY_LEN: u64 = 2 + 1 + 1;

/// The KV section: `kv_count` then the entries.
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq, Default)]
pub struct KvSection {
    /// `kv_count`.
    #[br(temp)]
    #[bw(calc = entries.len() as u32)]
    kv_count: u32,
    /// The entries, in file order.
    #[br(parse_with = counted(kv_count as u64, MIN_KV_ENTRY_LEN))]
    pub entries: Vec<KvEntry>,
}

/// One KV entry: key, tag and value.
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq)]
pub struct KvEntry {
    /// `key_length`.
    #[br(temp)]
    #[bw(calc = key.len() as u16)]
    key_length: u16,
    /// UTF-8 key bytes.
    #[br(count = key_length)]
    pub key: Vec<u8>,
    /// The tagged value.
    pub value: KvValue,
}

/// Length-prefixed bytes (`uint32` length then the bytes), used by strings and byte
/// sequences.
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct LenBytes {
    /// `uint32` byte length.
    #[br(temp)]
    #[bw(calc = bytes.len() as u32)]
    length: u32,
    /// The payload.
    #[br(parse_with = counted(length as u64, 1))]
    pub bytes: Vec<u8>,
}

/// A KV value with its tag (`value_tag` then the payload).
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq)]
pub enum KvValue {
    /// `0x01`: UTF-8 string.
    #[brw(magic = 0x01u8)]
    String(LenBytes),
    /// `0x02`: int64.
    #[brw(magic = 0x02u8)]
    Int64(i64),
    /// `0x03`: uint64.
    #[brw(magic = 0x03u8)]
    Uint64(u64),
    /// `0x04`: float64.
    #[brw(magic = 0x04u8)]
    Float64(f64),
    /// `0x05`: bool, kept as the raw byte (only 0 and 1 are valid).
    #[brw(magic = 0x05u8)]
    Bool(u8),
    /// `0x06`: byte sequence.
    #[brw(magic = 0x06u8)]
    Bytes(LenBytes),
    /// `0x07`: typed array.
    #[brw(magic = 0x07u8)]
    Array(KvArray),
}

/// A typed array value: element tag, count, elements.
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq)]
pub struct KvArray {
    /// Element type tag (`0x01`–`0x06`).
    pub element_tag: u8,
    /// `uint32` element count.
    #[br(temp)]
    #[bw(calc = elements.len() as u32)]
    count: u32,
    /// The elements, all of `element_tag`'s type.
    #[br(parse_with = counted(count as u64, KvScalar::min_len(element_tag)), args(element_tag))]
    pub elements: Vec<KvScalar>,
}

/// One array element: a value payload without its tag.
#[binrw]
#[brw(little)]
#[br(import(tag: u8))]
#[derive(Clone, Debug, PartialEq)]
pub enum KvScalar {
    /// UTF-8 string.
    #[br(pre_assert(tag == 0x01))]
    String(LenBytes),
    /// int64.
    #[br(pre_assert(tag == 0x02))]
    Int64(i64),
    /// uint64.
    #[br(pre_assert(tag == 0x03))]
    Uint64(u64),
    /// float64.
    #[br(pre_assert(tag == 0x04))]
    Float64(f64),
    /// bool (raw byte).
    #[br(pre_assert(tag == 0x05))]
    Bool(u8),
    /// Byte sequence.
    #[br(pre_assert(tag == 0x06))]
    Bytes(LenBytes),
}

impl KvScalar {
    /// Smallest encoding of one element of `tag`'s type (at least 1 so counts stay
    /// bounded even for an unknown tag).
    pub fn min_len(tag: u8) -> u64 {
        match tag {
            0x02..=0x04 => 8,
            0x01 | 0x06 => 4,
            _ => 1,
        }
    }

    /// The value tag of this element's type.
    pub fn tag(&self) -> u8 {
        match self {
            KvScalar::String(_) => 0x01,
            KvScalar::Int64(_) => 0x02,
            KvScalar::Uint64(_) => 0x03,
            KvScalar::Float64(_) => 0x04,
            KvScalar::Bool(_) => 0x05,
            KvScalar::Bytes(_) => 0x06,
        }
    }
}

impl KvValue {
    /// The value tag.
    pub fn tag(&self) -> u8 {
        match self {
            KvValue::String(_) => 0x01,
            KvValue::Int64(_) => 0x02,
            KvValue::Uint64(_) => 0x03,
            KvValue::Float64(_) => 0x04,
            KvValue::Bool(_) => 0x05,
            KvValue::Bytes(_) => 0x06,
            KvValue::Array(_) => 0x07,
        }
    }
}

//! The KV metadata section (file-format.md, "KV Section Encoding", "KV Value Types").

use binrw::io::{Read, Seek};
use binrw::{binrw, binwrite, BinRead, BinResult, Endian};

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

/// One array element: a value payload without its tag (the array's
/// `element_tag`, passed as the read argument, says which).
#[binwrite]
#[bw(little)]
#[derive(Clone, Debug, PartialEq)]
pub enum KvScalar {
    /// UTF-8 string.
    String(LenBytes),
    /// int64.
    Int64(i64),
    /// uint64.
    Uint64(u64),
    /// float64.
    Float64(f64),
    /// bool (raw byte).
    Bool(u8),
    /// Byte sequence.
    Bytes(LenBytes),
}

/// Reading picks the variant from the tag in one `match`: a derived enum would try
/// the variants in turn, building and dropping an error for each that does not
/// apply, which made decoding a tokenizer's 100k-element arrays several times slower.
impl BinRead for KvScalar {
    type Args<'a> = (u8,);

    fn read_options<R: Read + Seek>(
        reader: &mut R,
        _: Endian,
        (tag,): Self::Args<'_>,
    ) -> BinResult<Self> {
        let le = Endian::Little;
        Ok(match tag {
            0x01 => KvScalar::String(LenBytes::read_options(reader, le, ())?),
            0x02 => KvScalar::Int64(i64::read_options(reader, le, ())?),
            0x03 => KvScalar::Uint64(u64::read_options(reader, le, ())?),
            0x04 => KvScalar::Float64(f64::read_options(reader, le, ())?),
            0x05 => KvScalar::Bool(u8::read_options(reader, le, ())?),
            0x06 => KvScalar::Bytes(LenBytes::read_options(reader, le, ())?),
            _ => {
                return Err(binrw::Error::NoVariantMatch {
                    pos: reader.stream_position()?,
                })
            }
        })
    }
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

    /// How many bytes this element takes in an array.
    pub fn encoded_len(&self) -> u64 {
        match self {
            KvScalar::String(s) | KvScalar::Bytes(s) => 4 + s.bytes.len() as u64,
            KvScalar::Int64(_) | KvScalar::Uint64(_) | KvScalar::Float64(_) => 8,
            KvScalar::Bool(_) => 1,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{read_from, to_bytes};

    fn run(s: &str) -> LenBytes {
        LenBytes {
            bytes: s.as_bytes().to_vec(),
        }
    }

    fn entries() -> Vec<KvEntry> {
        let entry = |key: &str, value| KvEntry {
            key: key.as_bytes().to_vec(),
            value,
        };
        let array = |element_tag, elements| {
            KvValue::Array(KvArray {
                element_tag,
                elements,
            })
        };
        vec![
            entry("s", KvValue::String(run("héllo"))),
            entry("", KvValue::Int64(-3)),
            entry("u", KvValue::Uint64(7)),
            entry("f", KvValue::Float64(0.5)),
            entry("b", KvValue::Bool(2)),
            entry("y", KvValue::Bytes(run("\u{0}\u{1}"))),
            entry(
                "tokens",
                array(
                    0x01,
                    vec![KvScalar::String(run("a")), KvScalar::String(run(""))],
                ),
            ),
            entry(
                "i",
                array(0x02, vec![KvScalar::Int64(1), KvScalar::Int64(2)]),
            ),
            entry("n", array(0x03, vec![KvScalar::Uint64(9)])),
            entry("d", array(0x04, vec![KvScalar::Float64(1.5)])),
            entry("t", array(0x05, vec![KvScalar::Bool(1), KvScalar::Bool(3)])),
            entry("r", array(0x06, vec![KvScalar::Bytes(run("xyz"))])),
            entry("e", array(0x09, vec![])),
        ]
    }

    #[test]
    fn every_kind_of_value_round_trips_and_encoded_len_is_its_size() {
        for e in entries() {
            let bytes = to_bytes(&e);
            let (back, used) = read_from::<KvEntry>(&bytes).expect("decodes");
            assert_eq!(back, e);
            assert_eq!(used, bytes.len() as u64);
            if let KvValue::Array(a) = &e.value {
                // key length, key, tag, element tag, count
                let head = 2 + e.key.len() as u64 + 1 + 1 + 4;
                let elements: u64 = a.elements.iter().map(KvScalar::encoded_len).sum();
                assert_eq!(head + elements, used, "{e:?}");
            }
            // Truncated anywhere, it does not decode.
            for n in 0..bytes.len() {
                assert!(
                    read_from::<KvEntry>(&bytes[..n]).is_err(),
                    "{e:?} cut at {n}"
                );
            }
        }
    }
}

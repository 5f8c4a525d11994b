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

/// KV entries read in place: where each part of a [`KvEntry`] lies, without copying
/// its key or any string. The validator judges a tokenizer's hundreds of thousands
/// of strings where they are instead of allocating each one.
///
/// It accepts exactly the bytes [`KvEntry`]'s declaration decodes, with the same
/// length (the tests hold the two together on every kind of value and on truncated
/// and corrupted entries); ranges are relative to the entry's first byte.
pub mod in_place {
    use std::ops::Range;

    use super::KvScalar;

    /// A KV entry located.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct EntryAt {
        /// The key bytes.
        pub key: Range<usize>,
        /// The value (after its tag).
        pub value: ValueAt,
        /// Bytes the whole entry takes.
        pub len: usize,
    }

    /// A value located: what a validator looks at of each kind.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub enum ValueAt {
        /// A string (`0x01`) or byte sequence (`0x06`): its bytes.
        Run {
            /// The value tag.
            tag: u8,
            /// The payload after its `uint32` length.
            bytes: Range<usize>,
        },
        /// An int64, uint64 or float64 (`0x02`-`0x04`).
        Number {
            /// The value tag.
            tag: u8,
        },
        /// A bool (`0x05`), as the raw byte.
        Bool(u8),
        /// A typed array (`0x07`).
        Array(ArrayAt),
    }

    /// An array located; [`ArrayAt::elements`] walks its elements.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct ArrayAt {
        /// The element tag.
        pub element_tag: u8,
        /// The element count.
        pub count: u32,
        /// The elements' bytes.
        pub elements: Range<usize>,
    }

    /// An array element located.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub enum ScalarAt {
        /// A string or byte sequence: its payload.
        Run(Range<usize>),
        /// A number.
        Number,
        /// A bool, as the raw byte.
        Bool(u8),
    }

    fn u16_at(b: &[u8], at: usize) -> Option<u16> {
        Some(u16::from_le_bytes(
            b.get(at..at.checked_add(2)?)?.try_into().ok()?,
        ))
    }

    fn u32_at(b: &[u8], at: usize) -> Option<u32> {
        Some(u32::from_le_bytes(
            b.get(at..at.checked_add(4)?)?.try_into().ok()?,
        ))
    }

    /// The payload of the `uint32`-length-prefixed run at `at`.
    fn run_at(b: &[u8], at: usize) -> Option<Range<usize>> {
        let len = usize::try_from(u32_at(b, at)?).ok()?;
        let start = at + 4;
        let end = start.checked_add(len).filter(|&e| e <= b.len())?;
        Some(start..end)
    }

    /// The array element of type `tag` at `at` and where the next one starts.
    fn scalar_at(b: &[u8], at: usize, tag: u8) -> Option<(ScalarAt, usize)> {
        match tag {
            0x01 | 0x06 => {
                let run = run_at(b, at)?;
                let end = run.end;
                Some((ScalarAt::Run(run), end))
            }
            0x02..=0x04 => {
                let end = at.checked_add(8).filter(|&e| e <= b.len())?;
                Some((ScalarAt::Number, end))
            }
            0x05 => Some((ScalarAt::Bool(*b.get(at)?), at + 1)),
            _ => None,
        }
    }

    /// The entry at the start of `bytes`, or `None` where [`KvEntry`] would not
    /// decode.
    ///
    /// [`KvEntry`]: super::KvEntry
    pub fn entry_at(b: &[u8]) -> Option<EntryAt> {
        let key_len = usize::from(u16_at(b, 0)?);
        let key = 2..2 + key_len;
        let tag_at = key.end;
        let tag = *b.get(tag_at)?;
        let at = tag_at + 1;
        let (value, end) = match tag {
            0x01 | 0x06 => {
                let bytes = run_at(b, at)?;
                let end = bytes.end;
                (ValueAt::Run { tag, bytes }, end)
            }
            0x02..=0x04 => {
                let end = at.checked_add(8).filter(|&e| e <= b.len())?;
                (ValueAt::Number { tag }, end)
            }
            0x05 => (ValueAt::Bool(*b.get(at)?), at + 1),
            0x07 => {
                let element_tag = *b.get(at)?;
                let count = u32_at(b, at + 1)?;
                let first = at + 5;
                // As the declaration's `counted`: the count must fit before any
                // element is read.
                let left = (b.len() - first.min(b.len())) as u64;
                if u64::from(count) * KvScalar::min_len(element_tag) > left {
                    return None;
                }
                let mut pos = first;
                for _ in 0..count {
                    pos = scalar_at(b, pos, element_tag)?.1;
                }
                let array = ArrayAt {
                    element_tag,
                    count,
                    elements: first..pos,
                };
                (ValueAt::Array(array), pos)
            }
            _ => return None,
        };
        Some(EntryAt {
            key,
            value,
            len: end,
        })
    }

    impl ArrayAt {
        /// The elements with the offset (in the entry) where each starts; `entry`
        /// is the entry's bytes this array was located in.
        pub fn elements<'a>(
            &self,
            entry: &'a [u8],
        ) -> impl Iterator<Item = (usize, ScalarAt)> + 'a {
            let tag = self.element_tag;
            let mut pos = self.elements.start;
            let mut left = self.count;
            std::iter::from_fn(move || {
                if left == 0 {
                    return None;
                }
                left -= 1;
                let (element, next) = scalar_at(entry, pos, tag)?;
                let start = std::mem::replace(&mut pos, next);
                Some((start, element))
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::in_place::{entry_at, ScalarAt, ValueAt};
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

    /// Checks that `entry_at` accepts `b` exactly when `KvEntry` decodes it, with
    /// the same length and parts.
    fn agrees(b: &[u8]) {
        let located = entry_at(b);
        let decoded = read_from::<KvEntry>(b).ok();
        assert_eq!(
            located.as_ref().map(|e| e.len as u64),
            decoded.as_ref().map(|(_, used)| *used),
            "{b:02x?}"
        );
        let (Some(e), Some((d, _))) = (located, decoded) else {
            return;
        };
        assert_eq!(&b[e.key.clone()], &d.key[..]);
        match (&e.value, &d.value) {
            (ValueAt::Run { tag, bytes }, KvValue::String(s) | KvValue::Bytes(s)) => {
                assert_eq!(*tag, d.value.tag());
                assert_eq!(&b[bytes.clone()], &s.bytes[..]);
            }
            (ValueAt::Number { tag }, _) => assert_eq!(*tag, d.value.tag()),
            (ValueAt::Bool(x), KvValue::Bool(y)) => assert_eq!(x, y),
            (ValueAt::Array(a), KvValue::Array(v)) => {
                assert_eq!(a.element_tag, v.element_tag);
                assert_eq!(a.count as usize, v.elements.len());
                let located: Vec<_> = a.elements(b).collect();
                assert_eq!(located.len(), v.elements.len());
                for ((_, l), d) in located.iter().zip(&v.elements) {
                    match (l, d) {
                        (ScalarAt::Run(r), KvScalar::String(s) | KvScalar::Bytes(s)) => {
                            assert_eq!(&b[r.clone()], &s.bytes[..])
                        }
                        (ScalarAt::Bool(x), KvScalar::Bool(y)) => assert_eq!(x, y),
                        (ScalarAt::Number, KvScalar::Int64(_) | KvScalar::Uint64(_))
                        | (ScalarAt::Number, KvScalar::Float64(_)) => {}
                        other => panic!("{other:?}"),
                    }
                }
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn reading_in_place_agrees_with_the_declaration() {
        for e in entries() {
            let bytes = to_bytes(&e);
            agrees(&bytes);
            // Truncated anywhere, with trailing bytes, and with each byte changed.
            for n in 0..bytes.len() {
                agrees(&bytes[..n]);
            }
            let mut longer = bytes.clone();
            longer.extend_from_slice(&[0xAB; 9]);
            agrees(&longer);
            for i in 0..bytes.len() {
                for v in [0x00, 0x01, 0x05, 0x07, 0x09, 0x7F, 0xFF] {
                    let mut m = bytes.clone();
                    m[i] = v;
                    agrees(&m);
                }
            }
        }
        // An array whose count cannot fit, and one of an unknown type with elements.
        agrees(&[
            1, 0, b'a', 0x07, 0x02, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0,
        ]);
        agrees(&[1, 0, b'a', 0x07, 0x08, 1, 0, 0, 0, 0, 0]);
    }
}

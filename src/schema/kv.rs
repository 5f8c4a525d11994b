//! The KV metadata section (file-format.md, "KV Section Encoding", "KV Value Types").

use binrw::io::{Read, Seek, SeekFrom, Write};
use binrw::{binrw, binwrite, BinRead, BinResult, BinWrite, Endian};

use std::sync::Arc;

use super::{counted, remaining};

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

/// A typed array value: element tag, count, and the elements read in place.
///
/// The elements are kept as the bytes the file stores them in (one byte per bool,
/// eight per number, a length and the bytes per string), not as one enum value
/// each: an array costs what it occupies in the file, whatever its element type.
/// [`KvArray::iter`] and [`KvArray::get`] read elements out of those bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct KvArray {
    /// Element type tag (`0x01`–`0x06`).
    pub element_tag: u8,
    /// `uint32` element count.
    count: u32,
    /// The elements as stored: `count` encodings of `element_tag`'s type.
    encoded: Encoded,
}

/// The bytes of an array's elements: its own, or a range of a KV section that
/// every array decoded from it shares (so that decoding copies nothing).
#[derive(Clone)]
struct Encoded {
    bytes: Arc<Vec<u8>>,
    start: usize,
    end: usize,
}

impl Encoded {
    fn owned(bytes: Vec<u8>) -> Self {
        let end = bytes.len();
        Encoded {
            bytes: Arc::new(bytes),
            start: 0,
            end,
        }
    }

    fn as_slice(&self) -> &[u8] {
        &self.bytes[self.start..self.end]
    }
}

/// The elements' bytes alone: an array shows the same whether it owns them or
/// shares a KV section.
impl std::fmt::Debug for Encoded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl PartialEq for Encoded {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

/// One array element read in place: numbers by value, strings and bytes borrowed
/// from the array.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KvElement<'a> {
    /// UTF-8 string (its bytes, not yet checked).
    String(&'a [u8]),
    /// int64.
    Int64(i64),
    /// uint64.
    Uint64(u64),
    /// float64.
    Float64(f64),
    /// bool (raw byte).
    Bool(u8),
    /// Byte sequence.
    Bytes(&'a [u8]),
}

impl KvElement<'_> {
    /// The element as an owned [`KvScalar`].
    pub fn to_scalar(self) -> KvScalar {
        let run = |b: &[u8]| LenBytes { bytes: b.to_vec() };
        match self {
            KvElement::String(b) => KvScalar::String(run(b)),
            KvElement::Int64(v) => KvScalar::Int64(v),
            KvElement::Uint64(v) => KvScalar::Uint64(v),
            KvElement::Float64(v) => KvScalar::Float64(v),
            KvElement::Bool(v) => KvScalar::Bool(v),
            KvElement::Bytes(b) => KvScalar::Bytes(run(b)),
        }
    }

    /// How many bytes this element takes in an array.
    pub fn encoded_len(&self) -> u64 {
        match self {
            KvElement::String(b) | KvElement::Bytes(b) => 4 + b.len() as u64,
            KvElement::Int64(_) | KvElement::Uint64(_) | KvElement::Float64(_) => 8,
            KvElement::Bool(_) => 1,
        }
    }
}

/// Width of a fixed-size element of `tag`'s type (`None`: length-prefixed).
fn fixed_width(tag: u8) -> Option<usize> {
    match tag {
        0x02..=0x04 => Some(8),
        0x05 => Some(1),
        _ => None,
    }
}

impl KvArray {
    /// An array of `elements`, all of type `element_tag` (elements of another type
    /// are stored as `element_tag`'s encoding would read them back: callers keep
    /// them of one type). At most `u32::MAX` elements are kept.
    pub fn new(element_tag: u8, elements: impl IntoIterator<Item = KvScalar>) -> Self {
        let mut encoded = Vec::new();
        let mut count = 0u32;
        for e in elements {
            if count == u32::MAX {
                break;
            }
            match e {
                KvScalar::String(b) | KvScalar::Bytes(b) => {
                    encoded.extend_from_slice(&(b.bytes.len() as u32).to_le_bytes());
                    encoded.extend_from_slice(&b.bytes);
                }
                KvScalar::Int64(v) => encoded.extend_from_slice(&v.to_le_bytes()),
                KvScalar::Uint64(v) => encoded.extend_from_slice(&v.to_le_bytes()),
                KvScalar::Float64(v) => encoded.extend_from_slice(&v.to_le_bytes()),
                KvScalar::Bool(v) => encoded.push(v),
            }
            count += 1;
        }
        KvArray {
            element_tag,
            count,
            encoded: Encoded::owned(encoded),
        }
    }

    /// An array of `count` zero elements of `element_tag`'s type (0, false, empty
    /// strings or byte sequences), encoded without building them one by one.
    pub fn zeroed(element_tag: u8, count: u32) -> Self {
        let width = fixed_width(element_tag).unwrap_or(4);
        KvArray {
            element_tag,
            count,
            encoded: Encoded::owned(vec![0; count as usize * width]),
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The elements' bytes as stored (after the element tag and count).
    pub fn encoded(&self) -> &[u8] {
        self.encoded.as_slice()
    }

    /// The elements in order, read in place.
    pub fn iter(&self) -> KvElements<'_> {
        KvElements {
            tag: self.element_tag,
            rest: self.encoded(),
            left: self.count,
        }
    }

    /// Element `i`: found at once in an array of numbers or bools, by walking the
    /// lengths before it in an array of strings or bytes.
    pub fn get(&self, i: usize) -> Option<KvElement<'_>> {
        if i >= self.len() {
            return None;
        }
        match fixed_width(self.element_tag) {
            Some(w) => {
                let mut it = KvElements {
                    tag: self.element_tag,
                    rest: self.encoded().get(i * w..)?,
                    left: 1,
                };
                it.next()
            }
            None => self.iter().nth(i),
        }
    }

    /// The elements as owned [`KvScalar`]s (a copy: for callers building values).
    pub fn to_scalars(&self) -> Vec<KvScalar> {
        self.iter().map(KvElement::to_scalar).collect()
    }
}

/// The elements of a [`KvArray`], read in place ([`KvArray::iter`]).
#[derive(Clone, Debug)]
pub struct KvElements<'a> {
    tag: u8,
    rest: &'a [u8],
    left: u32,
}

impl<'a> Iterator for KvElements<'a> {
    type Item = KvElement<'a>;

    fn next(&mut self) -> Option<KvElement<'a>> {
        if self.left == 0 {
            return None;
        }
        let word = |b: &[u8]| -> Option<[u8; 8]> { b.get(..8)?.try_into().ok() };
        let (element, used) = match self.tag {
            0x02 => (KvElement::Int64(i64::from_le_bytes(word(self.rest)?)), 8),
            0x03 => (KvElement::Uint64(u64::from_le_bytes(word(self.rest)?)), 8),
            0x04 => (KvElement::Float64(f64::from_le_bytes(word(self.rest)?)), 8),
            0x05 => (KvElement::Bool(*self.rest.first()?), 1),
            tag => {
                let n = u32::from_le_bytes(self.rest.get(..4)?.try_into().ok()?) as usize;
                let bytes = self.rest.get(4..4usize.checked_add(n)?)?;
                let e = if tag == 0x01 {
                    KvElement::String(bytes)
                } else {
                    KvElement::Bytes(bytes)
                };
                (e, 4 + n)
            }
        };
        self.rest = &self.rest[used..];
        self.left -= 1;
        Some(element)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left as usize))
    }
}

impl<'a> IntoIterator for &'a KvArray {
    type Item = KvElement<'a>;
    type IntoIter = KvElements<'a>;

    fn into_iter(self) -> KvElements<'a> {
        self.iter()
    }
}

/// Why an array's elements cannot be located.
enum ExtentError {
    /// The element tag is not 0x01-0x06 (and there are elements).
    Tag,
    /// The elements run past the bytes that remain.
    Short(String),
    /// Reading a length failed.
    Read(binrw::Error),
}

impl ExtentError {
    fn at(self, pos: u64) -> binrw::Error {
        match self {
            ExtentError::Tag => binrw::Error::NoVariantMatch { pos },
            ExtentError::Short(message) => binrw::Error::AssertFail { pos, message },
            ExtentError::Read(e) => e,
        }
    }
}

/// How many bytes the `count` elements of `tag` take, `left` bytes remaining
/// after the count; `length_at(rel)` reads the length prefix `rel` bytes into the
/// elements (strings and bytes, whose lengths are walked without copying them).
fn array_extent(
    tag: u8,
    count: u32,
    left: u64,
    length_at: &mut dyn FnMut(u64) -> BinResult<u32>,
) -> Result<u64, ExtentError> {
    if count == 0 {
        return Ok(0);
    }
    let min = u64::from(count) * KvScalar::min_len(tag);
    if !(0x01..=0x06).contains(&tag) {
        return Err(ExtentError::Tag);
    }
    if min > left {
        return Err(ExtentError::Short(format!(
            "count {count} needs at least {min} bytes but only {left} remain"
        )));
    }
    if fixed_width(tag).is_some() {
        return Ok(min);
    }
    let mut at = 0u64;
    for _ in 0..count {
        let n = length_at(at).map_err(ExtentError::Read)?;
        at += 4 + u64::from(n);
        if at > left {
            return Err(ExtentError::Short(format!(
                "array elements run past the {left} bytes that remain"
            )));
        }
    }
    Ok(at)
}

impl KvEntry {
    /// Decodes the entry at `pos` of a whole KV `section`: as reading a
    /// [`KvEntry`] does, except that an array's elements stay in `section` (shared,
    /// not copied). `None` when it does not decode (the caller then reads it the
    /// usual way for the reason).
    pub fn decode_shared(section: &Arc<Vec<u8>>, pos: usize) -> Option<(KvEntry, u64)> {
        let rest = section.get(pos..)?;
        let key_len = usize::from(u16::from_le_bytes(rest.get(..2)?.try_into().ok()?));
        let tag_at = 2 + key_len;
        if rest.get(tag_at) != Some(&0x07) {
            return super::read_from::<KvEntry>(rest).ok();
        }
        let element_tag = *rest.get(tag_at + 1)?;
        let count = u32::from_le_bytes(rest.get(tag_at + 2..tag_at + 6)?.try_into().ok()?);
        let first = tag_at + 6;
        let elements = rest.get(first..)?;
        let mut length_at = |rel: u64| -> BinResult<u32> {
            let at = usize::try_from(rel).unwrap_or(usize::MAX);
            elements
                .get(at..at.saturating_add(4))
                .and_then(|b| b.try_into().ok())
                .map(u32::from_le_bytes)
                .ok_or(binrw::Error::AssertFail {
                    pos: rel,
                    message: "length past the end".into(),
                })
        };
        let extent =
            array_extent(element_tag, count, elements.len() as u64, &mut length_at).ok()? as usize;
        let start = pos + first;
        let entry = KvEntry {
            key: rest[2..tag_at].to_vec(),
            value: KvValue::Array(KvArray {
                element_tag,
                count,
                encoded: Encoded {
                    bytes: Arc::clone(section),
                    start,
                    end: start + extent,
                },
            }),
        };
        Some((entry, (first + extent) as u64))
    }
}

/// Reading finds where the elements end without decoding them (a walk over the
/// lengths of strings and bytes), then takes their bytes in one read.
impl BinRead for KvArray {
    type Args<'a> = ();

    fn read_options<R: Read + Seek>(reader: &mut R, _: Endian, _: ()) -> BinResult<Self> {
        let le = Endian::Little;
        let element_tag = u8::read_options(reader, le, ())?;
        let count = u32::read_options(reader, le, ())?;
        let start = reader.stream_position()?;
        let left = remaining(reader)?;
        let mut length_at = |rel: u64| -> BinResult<u32> {
            reader.seek(SeekFrom::Start(start + rel))?;
            u32::read_options(reader, le, ())
        };
        let extent =
            array_extent(element_tag, count, left, &mut length_at).map_err(|e| e.at(start))?;
        reader.seek(SeekFrom::Start(start))?;
        let mut encoded = vec![0u8; extent as usize];
        reader.read_exact(&mut encoded)?;
        Ok(KvArray {
            element_tag,
            count,
            encoded: Encoded::owned(encoded),
        })
    }
}

impl BinWrite for KvArray {
    type Args<'a> = ();

    fn write_options<W: Write + Seek>(&self, writer: &mut W, _: Endian, _: ()) -> BinResult<()> {
        writer.write_all(&[self.element_tag])?;
        writer.write_all(&self.count.to_le_bytes())?;
        writer.write_all(self.encoded())?;
        Ok(())
    }
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

impl KvEntry {
    /// Bytes this entry holds on the heap (its key and its value's bytes), for
    /// the memory budget of whoever decodes it.
    pub fn held_bytes(&self) -> u64 {
        let value = match &self.value {
            KvValue::String(b) | KvValue::Bytes(b) => b.bytes.capacity(),
            // Bytes shared with the KV section they were decoded from are that
            // section's, held once.
            KvValue::Array(a) if Arc::strong_count(&a.encoded.bytes) > 1 => 0,
            KvValue::Array(a) => a.encoded.bytes.capacity(),
            _ => 0,
        };
        (self.key.capacity() + value) as u64
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
        let array = |element_tag, elements: Vec<KvScalar>| {
            KvValue::Array(KvArray::new(element_tag, elements))
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
                let elements: u64 = a.iter().map(|e| e.encoded_len()).sum();
                assert_eq!(a.iter().count(), a.len());
                for (i, x) in a.iter().enumerate() {
                    assert_eq!(a.get(i), Some(x));
                }
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

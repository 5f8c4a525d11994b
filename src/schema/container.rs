//! The HRRYFILE container: file header, trailer and index (file-format.md).

use binrw::io::{Read, Seek, SeekFrom, Write};
use binrw::{binrw, BinResult, Endian};
use modular_bitfield::prelude::*;

use super::{counted, remaining};

/// `HRRYFILE`, the first eight bytes of every file.
pub const FILE_MAGIC: [u8; 8] = *b"HRRYFILE";
/// `HRRY`, the last four bytes of every file (and the first four of a descriptor).
pub const TRAILER_MAGIC: [u8; 4] = *b"HRRY";
/// Size of the file header in bytes.
pub const FILE_HEADER_LEN: u64 = 64;
/// Size of the trailer in bytes.
pub const TRAILER_LEN: u64 = 40;
/// Smallest encodable index entry (an empty name, which validation rejects).
pub const MIN_INDEX_ENTRY_LEN: u64 = 2 + 8 + 4 + 8 + 8 + 4;

/// File-level flags (file-format.md, "File Flags").
#[bitfield(bits = 32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct FileFlags {
    /// Bit 0: a KV metadata section is present.
    pub has_kv_metadata: bool,
    /// Bit 1: index entries are sorted by name bytes.
    pub sorted_index: bool,
    /// Bit 2: the trailer's `index_crc32c` is valid.
    pub has_index_crc32c: bool,
    /// Bits 3–31: reserved, must be zero.
    pub reserved: B29,
}

/// The 64-byte file header (file-format.md, "File Header").
#[binrw]
#[brw(little, magic = b"HRRYFILE")]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileHeader {
    /// Offset 8: container major version (1).
    pub container_version_major: u8,
    /// Offset 9: container minor version (0).
    pub container_version_minor: u8,
    /// Offset 10: must be zero.
    pub reserved: [u8; 2],
    /// Offset 12: [`FileFlags`].
    #[br(map = FileFlags::from_bytes)]
    #[bw(map = |f: &FileFlags| f.into_bytes())]
    pub file_flags: FileFlags,
    /// Offset 16: alignment of every data buffer (power of two, 4096..=2 MiB).
    pub data_buffer_alignment: u32,
    /// Offset 20: absolute offset of the first descriptor.
    pub first_descriptor_offset: u64,
    /// Offset 28: number of tensors if known, else `u64::MAX`; advisory.
    pub tensor_count_hint: u64,
    /// Offset 36: must be zero.
    pub reserved_header: [u8; 28],
}

/// Byte offsets of [`FileHeader`] fields, for violation reports.
pub mod header_offsets {
    /// `container_version_major`.
    pub const VERSION_MAJOR: u64 = 8;
    /// `container_version_minor`.
    pub const VERSION_MINOR: u64 = 9;
    /// `_reserved`.
    pub const RESERVED: u64 = 10;
    /// `file_flags`.
    pub const FILE_FLAGS: u64 = 12;
    /// `data_buffer_alignment`.
    pub const DATA_BUFFER_ALIGNMENT: u64 = 16;
    /// `first_descriptor_offset`.
    pub const FIRST_DESCRIPTOR_OFFSET: u64 = 20;
    /// `tensor_count_hint`.
    pub const TENSOR_COUNT_HINT: u64 = 28;
    /// `_reserved_header`.
    pub const RESERVED_HEADER: u64 = 36;
}

/// The 40-byte trailer at `file_size - 40` (file-format.md, "Trailer").
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Trailer {
    /// Offset 0: absolute offset of the index section.
    pub index_offset: u64,
    /// Offset 8: length of the index section.
    pub index_length: u64,
    /// Offset 16: absolute offset of the KV section, 0 when absent.
    pub kv_offset: u64,
    /// Offset 24: length of the KV section, 0 when absent.
    pub kv_length: u32,
    /// Offset 28: CRC-32C of the index bytes when `HAS_INDEX_CRC32C`, else 0.
    pub index_crc32c: u32,
    /// Offset 32: must be zero.
    pub reserved: [u8; 4],
    /// Offset 36: `HRRY`.
    pub trailer_magic: [u8; 4],
}

/// Byte offsets of [`Trailer`] fields relative to the trailer start.
pub mod trailer_offsets {
    /// `index_offset`.
    pub const INDEX_OFFSET: u64 = 0;
    /// `index_length`.
    pub const INDEX_LENGTH: u64 = 8;
    /// `kv_offset`.
    pub const KV_OFFSET: u64 = 16;
    /// `kv_length`.
    pub const KV_LENGTH: u64 = 24;
    /// `index_crc32c`.
    pub const INDEX_CRC32C: u64 = 28;
    /// `_reserved`.
    pub const RESERVED: u64 = 32;
    /// `trailer_magic`.
    pub const TRAILER_MAGIC: u64 = 36;
}

/// The index section with its names held as the bytes themselves.
pub type IndexSection = IndexSectionOf<Vec<u8>>;

/// One index entry with its name held as the bytes themselves.
pub type IndexEntry = IndexEntryOf<Vec<u8>>;

/// The index section (file-format.md, "Index Encoding").
///
/// `N` is how each entry holds its name (see [`IndexName`]): the bytes themselves
/// ([`IndexSection`]), or a [`NameSpan`] into the section for a reader that keeps the
/// section's bytes at hand.
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct IndexSectionOf<N: IndexName> {
    /// Number of entries (`index_entry_count`).
    #[br(temp)]
    #[bw(calc = entries.len() as u64)]
    index_entry_count: u64,
    /// The entries, in file order.
    #[br(parse_with = counted(index_entry_count, MIN_INDEX_ENTRY_LEN))]
    pub entries: Vec<IndexEntryOf<N>>,
}

/// One index entry (file-format.md, "Index Encoding").
///
/// `N` is how the entry holds its name (see [`IndexName`]; [`IndexEntry`] holds the
/// bytes); the wire layout is the same for every `N`.
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct IndexEntryOf<N: IndexName> {
    /// `name_length`.
    #[br(temp)]
    #[bw(calc = name.name_len() as u16)]
    name_length: u16,
    /// The UTF-8 name bytes, or where they are.
    #[br(parse_with = N::read_name, args(name_length))]
    #[bw(write_with = N::write_name)]
    pub name: N,
    /// Absolute offset of the tensor descriptor.
    pub descriptor_offset: u64,
    /// Must equal the descriptor's own `descriptor_length`.
    pub descriptor_length: u32,
    /// Absolute offset of the first data buffer.
    pub data_offset: u64,
    /// Bytes of all buffers plus inter-buffer padding.
    pub data_length: u64,
    /// Reserved, must be zero.
    pub flags: u32,
}

impl<N: IndexName> IndexEntryOf<N> {
    /// Encoded size of this entry in bytes.
    pub fn encoded_len(&self) -> u64 {
        MIN_INDEX_ENTRY_LEN + self.name.name_len() as u64
    }
}

impl IndexEntryOf<NameSpan> {
    /// Decodes the entry that starts `bytes`, its name a span counted from the start
    /// of `bytes`: exactly what reading the declaration above gives (a test holds
    /// the two to agreement), without the reader machinery, for indexes of millions
    /// of entries. Returns the entry and its encoded length, or `None` when the
    /// entry runs past the end of `bytes`.
    pub fn decode_span(bytes: &[u8]) -> Option<(Self, u64)> {
        let le64 = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or_default());
        let le32 = |b: &[u8]| u32::from_le_bytes(b.try_into().unwrap_or_default());
        let len = u16::from_le_bytes(bytes.get(..2)?.try_into().ok()?);
        let used = MIN_INDEX_ENTRY_LEN as usize + usize::from(len);
        let tail = bytes.get(2 + usize::from(len)..used)?;
        let entry = IndexEntryOf {
            name: NameSpan { offset: 2, len },
            descriptor_offset: le64(&tail[0..8]),
            descriptor_length: le32(&tail[8..12]),
            data_offset: le64(&tail[12..20]),
            data_length: le64(&tail[20..28]),
            flags: le32(&tail[28..32]),
        };
        Some((entry, used as u64))
    }
}

/// How an [`IndexEntryOf`] holds the `name_length` bytes of its name.
pub trait IndexName: Sized + 'static {
    /// Reads a name of `name_length` bytes at the reader's position, refusing before
    /// any allocation when fewer bytes remain.
    fn read_name<R: Read + Seek>(reader: &mut R, endian: Endian, args: (u16,)) -> BinResult<Self>;
    /// Writes the name bytes.
    fn write_name<W: Write + Seek>(
        &self,
        writer: &mut W,
        endian: Endian,
        args: (),
    ) -> BinResult<()>;
    /// Length of the name in bytes.
    fn name_len(&self) -> usize;
}

impl IndexName for Vec<u8> {
    fn read_name<R: Read + Seek>(
        reader: &mut R,
        endian: Endian,
        (name_length,): (u16,),
    ) -> BinResult<Self> {
        counted(name_length.into(), 1)(reader, endian, ())
    }

    fn write_name<W: Write + Seek>(
        &self,
        writer: &mut W,
        _endian: Endian,
        _args: (),
    ) -> BinResult<()> {
        writer.write_all(self)?;
        Ok(())
    }

    fn name_len(&self) -> usize {
        self.len()
    }
}

/// Where a name sits instead of the name itself: `len` bytes at `offset`. As read,
/// `offset` counts from the start of the input the entry was read from (the index
/// section, for an [`IndexSectionOf`]); a holder that moves the names elsewhere moves
/// the spans with them and says where ([`crate::file::HrryFile::name_text`]).
/// Reading a span copies and allocates nothing, which keeps opening an index of
/// millions of entries fast; it holds no bytes, so writing it is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct NameSpan {
    /// Offset of the first name byte.
    pub offset: u64,
    /// `name_length`.
    pub len: u16,
}

impl NameSpan {
    /// The name's bytes within `input` (what `offset` counts from), if they are there.
    pub fn bytes_in<'a>(&self, input: &'a [u8]) -> Option<&'a [u8]> {
        let start = usize::try_from(self.offset).ok()?;
        input.get(start..start.checked_add(usize::from(self.len))?)
    }
}

impl IndexName for NameSpan {
    fn read_name<R: Read + Seek>(
        reader: &mut R,
        _endian: Endian,
        (name_length,): (u16,),
    ) -> BinResult<Self> {
        let offset = reader.stream_position()?;
        if remaining(reader)? < u64::from(name_length) {
            return Err(binrw::Error::AssertFail {
                pos: offset,
                message: format!("name of {name_length} bytes runs past the end"),
            });
        }
        reader.seek(SeekFrom::Current(name_length.into()))?;
        Ok(NameSpan {
            offset,
            len: name_length,
        })
    }

    fn write_name<W: Write + Seek>(
        &self,
        writer: &mut W,
        _endian: Endian,
        _args: (),
    ) -> BinResult<()> {
        Err(binrw::Error::AssertFail {
            pos: writer.stream_position()?,
            message: "a NameSpan holds no name bytes; write an IndexEntry".into(),
        })
    }

    fn name_len(&self) -> usize {
        usize::from(self.len)
    }
}

/// Byte offsets of [`IndexEntry`] fields after the name.
pub mod index_entry_offsets {
    /// `descriptor_offset`, counted from the end of the name.
    pub const DESCRIPTOR_OFFSET: u64 = 0;
    /// `descriptor_length`.
    pub const DESCRIPTOR_LENGTH: u64 = 8;
    /// `data_offset`.
    pub const DATA_OFFSET: u64 = 12;
    /// `data_length`.
    pub const DATA_LENGTH: u64 = 20;
    /// `flags`.
    pub const FLAGS: u64 = 28;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hand-written decoding of an index entry agrees with the declaration's,
    /// for well-formed entries and for every cut of them.
    #[test]
    fn decode_span_agrees_with_the_declaration() {
        let mut inputs: Vec<Vec<u8>> = Vec::new();
        for name in [&b""[..], b"a", b"model.layers.0.weight", &[0xFF; 300]] {
            let e = IndexEntry {
                name: name.to_vec(),
                descriptor_offset: 0x0102_0304_0506_0708,
                descriptor_length: 0x1112_1314,
                data_offset: 0x2122_2324_2526_2728,
                data_length: 0x3132_3334_3536_3738,
                flags: 0x4142_4344,
            };
            let mut bytes = crate::schema::to_bytes(&e);
            bytes.extend_from_slice(b"next entry");
            for cut in 0..=bytes.len() {
                inputs.push(bytes[..cut].to_vec());
            }
        }
        // A length that claims more than there is.
        inputs.push(vec![0xFF, 0xFF, 0, 0]);
        for bytes in &inputs {
            let by_hand = IndexEntryOf::<NameSpan>::decode_span(bytes);
            let declared = crate::schema::read_from::<IndexEntryOf<NameSpan>>(bytes).ok();
            assert_eq!(by_hand, declared, "{bytes:02x?}");
        }
        assert!(inputs
            .iter()
            .any(|b| IndexEntryOf::<NameSpan>::decode_span(b).is_some()));
    }
}

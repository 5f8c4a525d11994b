//! The tensor descriptor (metadata.md "Overall Descriptor Structure").

use binrw::binrw;
use modular_bitfield::prelude::*;

use super::{
    counted, BufferHandle, CompositeMember, ExtensionType, LayoutFields, QuantizationSection,
    ShardSection, Statistics,
};

/// `HRRY`, the first four bytes of a descriptor.
pub const DESCRIPTOR_MAGIC: [u8; 4] = *b"HRRY";
/// Size of the fixed descriptor header.
pub const DESCRIPTOR_HEADER_LEN: u64 = 20;
/// Hard ceiling on the rank the parser reads (the spec's cap is 64; larger ranks
/// are reported by validation before the body is parsed).
pub const MAX_RANK: u32 = 64;

/// Descriptor flags (metadata.md "Flags").
#[bitfield(bits = 32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct DescriptorFlags {
    /// Bit 0: a quantization section is present.
    pub has_quantization: bool,
    /// Bit 1: a shard section is present.
    pub has_shard: bool,
    /// Bit 2: an extension type section is present.
    pub has_extension_type: bool,
    /// Bit 3: a statistics section is present.
    pub has_statistics: bool,
    /// Bit 4: a composite member section is present.
    pub has_composite_member: bool,
    /// Bits 5–31: reserved, must be zero.
    pub reserved: B27,
}

/// The fixed 20-byte descriptor header alone, readable before the rest is trusted.
#[binrw]
#[brw(little)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DescriptorHeader {
    /// Offset 0: `HRRY`.
    pub magic: [u8; 4],
    /// Offset 4.
    pub version_major: u8,
    /// Offset 5.
    pub version_minor: u8,
    /// Offset 6: total descriptor length, header included.
    pub descriptor_length: u32,
    /// Offset 10.
    #[br(map = DescriptorFlags::from_bytes)]
    #[bw(map = |f: &DescriptorFlags| f.into_bytes())]
    pub flags: DescriptorFlags,
    /// Offset 14: element type tag.
    pub type_tag: u8,
    /// Offset 15: layout tag.
    pub layout_tag: u8,
    /// Offset 16: number of dimensions.
    pub rank: u32,
}

/// Byte offsets of descriptor header fields.
pub mod descriptor_offsets {
    /// `version_major`.
    pub const VERSION_MAJOR: u64 = 4;
    /// `version_minor`.
    pub const VERSION_MINOR: u64 = 5;
    /// `descriptor_length`.
    pub const DESCRIPTOR_LENGTH: u64 = 6;
    /// `flags`.
    pub const FLAGS: u64 = 10;
    /// `type_tag`.
    pub const TYPE_TAG: u64 = 14;
    /// `layout_tag`.
    pub const LAYOUT_TAG: u64 = 15;
    /// `rank`.
    pub const RANK: u64 = 16;
    /// `shape[0]`.
    pub const SHAPE: u64 = 20;
}

/// A whole tensor descriptor. Read it from a slice of exactly `descriptor_length`
/// bytes: the parser then never reads past the descriptor, and bytes after the last
/// known field (minor-version growth) are kept in `trailing`.
#[binrw]
#[brw(little, magic = b"HRRY")]
#[derive(Clone, Debug, PartialEq)]
pub struct TensorDescriptor {
    /// Major format version (1).
    pub version_major: u8,
    /// Minor format version (0).
    pub version_minor: u8,
    /// Total length in bytes, header included.
    pub descriptor_length: u32,
    /// Which optional sections follow.
    #[br(map = DescriptorFlags::from_bytes)]
    #[bw(map = |f: &DescriptorFlags| f.into_bytes())]
    pub flags: DescriptorFlags,
    /// Element type tag (element-types.md).
    pub type_tag: u8,
    /// Layout tag (memory-layout.md).
    pub layout_tag: u8,
    /// `rank`.
    #[br(temp, assert(rank <= MAX_RANK, "rank {} exceeds {}", rank, MAX_RANK))]
    #[bw(calc = shape.len() as u32)]
    rank: u32,
    /// Dimension sizes, dimension 0 first.
    #[br(parse_with = counted(rank as u64, 8))]
    pub shape: Vec<u64>,
    /// Offset of element `[0, …, 0]` from the start of buffer 0.
    pub byte_offset: u64,
    /// Fields of the layout named by `layout_tag`.
    #[br(args(layout_tag, rank))]
    pub layout: LayoutFields,
    /// `buffer_count`.
    #[br(temp)]
    #[bw(calc = buffers.len() as u8)]
    buffer_count: u8,
    /// The buffer table.
    #[br(parse_with = counted(buffer_count as u64, BufferHandle::LEN))]
    pub buffers: Vec<BufferHandle>,
    /// Present when `HAS_QUANTIZATION`.
    #[br(if(flags.has_quantization()))]
    pub quantization: Option<QuantizationSection>,
    /// Present when `HAS_SHARD`.
    #[br(if(flags.has_shard()), args(rank))]
    pub shard: Option<ShardSection>,
    /// Present when `HAS_STATISTICS`.
    #[br(if(flags.has_statistics()))]
    pub statistics: Option<Statistics>,
    /// Present when `HAS_EXTENSION_TYPE`.
    #[br(if(flags.has_extension_type()))]
    pub extension_type: Option<ExtensionType>,
    /// Present when `HAS_COMPOSITE_MEMBER`.
    #[br(if(flags.has_composite_member()))]
    pub composite_member: Option<CompositeMember>,
    /// Bytes inside `descriptor_length` after the last known field.
    #[br(parse_with = binrw::helpers::until_eof)]
    pub trailing: Vec<u8>,
}

impl TensorDescriptor {
    /// Offset of `byte_offset` from the descriptor start.
    pub fn byte_offset_pos(&self) -> u64 {
        DESCRIPTOR_HEADER_LEN + 8 * self.shape.len() as u64
    }

    /// Offset of the layout fields from the descriptor start.
    pub fn layout_pos(&self) -> u64 {
        self.byte_offset_pos() + 8
    }

    /// Offset of `buffer_count` from the descriptor start.
    pub fn buffer_table_pos(&self) -> u64 {
        self.layout_pos() + self.layout.encoded_len()
    }

    /// Offset of buffer handle `i` from the descriptor start.
    pub fn buffer_pos(&self, i: usize) -> u64 {
        self.buffer_table_pos() + 1 + BufferHandle::LEN * i as u64
    }

    /// Offset of the first optional section from the descriptor start.
    pub fn sections_pos(&self) -> u64 {
        self.buffer_pos(self.buffers.len())
    }

    /// Offset of the quantization section (its length field).
    pub fn quantization_pos(&self) -> u64 {
        self.sections_pos()
    }

    /// Offset of the shard section.
    pub fn shard_pos(&self) -> u64 {
        self.quantization_pos()
            + self
                .quantization
                .as_ref()
                .map_or(0, |q| 4 + q.bytes().len() as u64)
    }

    /// Offset of the statistics section.
    pub fn statistics_pos(&self) -> u64 {
        self.shard_pos()
            + self
                .shard
                .as_ref()
                .map_or(0, |s| 16 * s.parent_shape.len() as u64)
    }

    /// Offset of the extension type section.
    pub fn extension_type_pos(&self) -> u64 {
        self.statistics_pos() + self.statistics.as_ref().map_or(0, |_| Statistics::LEN)
    }

    /// Offset of the composite member section.
    pub fn composite_member_pos(&self) -> u64 {
        self.extension_type_pos() + self.extension_type.map_or(0, |_| ExtensionType::LEN)
    }

    /// Encoded size of the known fields (without `trailing`).
    pub fn known_len(&self) -> u64 {
        self.composite_member_pos() + self.composite_member.map_or(0, |_| CompositeMember::LEN)
    }

    /// Sets `descriptor_length` to the encoded size, `trailing` included.
    pub fn fix_length(&mut self) {
        self.descriptor_length = (self.known_len() + self.trailing.len() as u64) as u32;
    }
}

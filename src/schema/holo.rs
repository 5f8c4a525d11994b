//! The `.holo` compiled-model archive on the wire: header, section table, footer and
//! the payload codecs of the decoded section kinds.
//!
//! Layout (all integers little-endian):
//!
//! | offset            | size      | structure                                   |
//! |-------------------|-----------|---------------------------------------------|
//! | 0                 | 10        | [`HoloHeader`]                              |
//! | 10                | 24 × n    | n × [`SectionEntry`] (`n = section_count`)  |
//! | 10 + 24n          | …         | section payloads                            |
//! | len − 32          | 32        | [`HoloFooter`]: BLAKE3 of bytes `0..len−32` |
//!
//! Variable-length parts whose bytes an archive may hold in bulk (weight bodies,
//! inline constant bodies, extension values) are not part of these declarations:
//! the structures below stop at the length field, and readers take the body as a
//! borrowed slice of the input so nothing large is copied.

use binrw::binrw;

use super::counted;

/// `HOLO`, the first four bytes of every archive.
pub const HOLO_MAGIC: [u8; 4] = *b"HOLO";
/// Size of [`HoloHeader`] in bytes.
pub const HOLO_HEADER_LEN: u64 = 10;
/// Size of one [`SectionEntry`] in bytes.
pub const SECTION_ENTRY_LEN: u64 = 24;
/// Size of [`HoloFooter`] in bytes.
pub const HOLO_FOOTER_LEN: u64 = 32;
/// The `format_version` this crate writes (the archive format docs/holo.md describes).
pub const HOLO_WRITE_VERSION: u16 = 2;
/// The lowest `format_version` this crate reads.
pub const HOLO_MIN_READ_VERSION: u16 = 2;
/// The highest `format_version` this crate reads (adds kinds 15 and 16).
pub const HOLO_MAX_READ_VERSION: u16 = 3;
/// Smallest encoded port descriptor: empty name, rank 0.
pub const MIN_PORT_LEN: u64 = 2 + 4 + 8 + 1 + 1;
/// Encoded size of [`WeightEntryHead`].
pub const WEIGHT_ENTRY_HEAD_LEN: u64 = 32 + 8;
/// Smallest encoded constant entry (an inline entry with an empty body).
pub const MIN_CONSTANT_ENTRY_LEN: u64 = 1 + 4 + 1 + 4;
/// Smallest encoded shape-registry entry (no overflow dimensions).
pub const MIN_SHAPE_ENTRY_LEN: u64 = 1 + 8 * 8 + 4;
/// Constant tag of an inline body.
pub const CONSTANT_TAG_INLINE: u8 = 0;
/// Constant tag of a reference into the Weights section.
pub const CONSTANT_TAG_REFERENCE: u8 = 1;

/// The 10-byte archive header: magic, `format_version`, `flags`, `section_count`.
#[binrw]
#[brw(little, magic = b"HOLO")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct HoloHeader {
    /// Offset 4: archive format version (2 or 3).
    pub format_version: u16,
    /// Offset 6: header flags; no bit has a defined meaning.
    pub flags: u16,
    /// Offset 8: number of [`SectionEntry`] records that follow the header.
    pub section_count: u16,
}

/// Byte offsets of [`HoloHeader`] fields.
pub mod holo_header_offsets {
    /// `format_version`.
    pub const FORMAT_VERSION: u64 = 4;
    /// `flags`.
    pub const FLAGS: u64 = 6;
    /// `section_count`.
    pub const SECTION_COUNT: u64 = 8;
}

/// One 24-byte section-table entry.
#[binrw]
#[brw(little)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SectionEntry {
    /// Offset 0: the section kind number (see [`SectionKind`]).
    pub kind: u8,
    /// Offset 1: padding, written as zero.
    pub padding: [u8; 7],
    /// Offset 8: absolute offset of the payload.
    pub offset: u64,
    /// Offset 16: payload length in bytes.
    pub length: u64,
}

/// Byte offsets of [`SectionEntry`] fields relative to the entry start.
pub mod section_entry_offsets {
    /// `kind`.
    pub const KIND: u64 = 0;
    /// `padding`.
    pub const PADDING: u64 = 1;
    /// `offset`.
    pub const OFFSET: u64 = 8;
    /// `length`.
    pub const LENGTH: u64 = 16;
}

/// The 32-byte footer: the BLAKE3 hash of every byte before it.
#[binrw]
#[brw(little)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct HoloFooter {
    /// The archive's content fingerprint.
    pub fingerprint: [u8; 32],
}

/// The kind of a section, by its table number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum SectionKind {
    /// 1: the kernel-call stream (carried opaque).
    KernelCalls = 1,
    /// 2: topological schedule, levels of node ids.
    Schedule = 2,
    /// 3: deduplicated weight bodies keyed by their BLAKE3 hash.
    Weights = 3,
    /// 4: interned shape descriptors.
    ShapeRegistry = 4,
    /// 5: element-type registry (carried opaque).
    DTypeRegistry = 5,
    /// 6: per-node certificates (carried opaque).
    Certificates = 6,
    /// 7: trace bytes (carried opaque).
    Trace = 7,
    /// 8: metadata bytes (carried opaque).
    Metadata = 8,
    /// 9: input port descriptors.
    Inputs = 9,
    /// 10: output port descriptors.
    Outputs = 10,
    /// 11: constants, inline or by reference into Weights.
    Constants = 11,
    /// 12: execution plan, levels of kernel-call indices.
    ExecPlan = 12,
    /// 13: warm-start data (carried opaque).
    WarmStart = 13,
    /// 14: producer-defined data under a string key; repeatable.
    Extension = 14,
    /// 15: application manifest (version 3 only; carried opaque).
    AppManifest = 15,
    /// 16: embedded content blob (version 3 only; repeatable; carried opaque).
    ContentBlob = 16,
}

impl SectionKind {
    /// Every kind, in number order.
    pub const ALL: [SectionKind; 16] = [
        SectionKind::KernelCalls,
        SectionKind::Schedule,
        SectionKind::Weights,
        SectionKind::ShapeRegistry,
        SectionKind::DTypeRegistry,
        SectionKind::Certificates,
        SectionKind::Trace,
        SectionKind::Metadata,
        SectionKind::Inputs,
        SectionKind::Outputs,
        SectionKind::Constants,
        SectionKind::ExecPlan,
        SectionKind::WarmStart,
        SectionKind::Extension,
        SectionKind::AppManifest,
        SectionKind::ContentBlob,
    ];

    /// The kind with table number `number`, if defined.
    pub fn from_number(number: u8) -> Option<SectionKind> {
        let index = usize::from(number).checked_sub(1)?;
        Self::ALL.get(index).copied()
    }

    /// The table number.
    pub fn number(self) -> u8 {
        self as u8
    }

    /// The name used in JSON output and on the command line (`KernelCalls`, …).
    pub fn name(self) -> &'static str {
        match self {
            SectionKind::KernelCalls => "KernelCalls",
            SectionKind::Schedule => "Schedule",
            SectionKind::Weights => "Weights",
            SectionKind::ShapeRegistry => "ShapeRegistry",
            SectionKind::DTypeRegistry => "DTypeRegistry",
            SectionKind::Certificates => "Certificates",
            SectionKind::Trace => "Trace",
            SectionKind::Metadata => "Metadata",
            SectionKind::Inputs => "Inputs",
            SectionKind::Outputs => "Outputs",
            SectionKind::Constants => "Constants",
            SectionKind::ExecPlan => "ExecPlan",
            SectionKind::WarmStart => "WarmStart",
            SectionKind::Extension => "Extension",
            SectionKind::AppManifest => "AppManifest",
            SectionKind::ContentBlob => "ContentBlob",
        }
    }

    /// The kind named `name` (case-insensitive) or numbered `name`.
    pub fn parse(name: &str) -> Option<SectionKind> {
        if let Ok(n) = name.parse::<u8>() {
            return Self::from_number(n);
        }
        Self::ALL
            .iter()
            .copied()
            .find(|k| k.name().eq_ignore_ascii_case(name))
    }

    /// Whether an archive may hold more than one section of this kind.
    pub fn is_repeatable(self) -> bool {
        matches!(self, SectionKind::Extension | SectionKind::ContentBlob)
    }

    /// The lowest `format_version` in which this kind exists.
    pub fn min_version(self) -> u16 {
        match self {
            SectionKind::AppManifest | SectionKind::ContentBlob => 3,
            _ => 2,
        }
    }
}

/// The payload of an Inputs or Outputs section: `port_count: u32` then the ports.
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct PortList {
    /// `port_count`.
    #[br(temp)]
    #[bw(calc = ports.len() as u32)]
    port_count: u32,
    /// The port descriptors, in slot-table order.
    #[br(parse_with = counted(u64::from(port_count), MIN_PORT_LEN))]
    pub ports: Vec<PortEntry>,
}

/// One port descriptor: `name_length: u16`, name, `slot: u32`, `element_count: u64`,
/// `dtype: u8`, `rank: u8`, `rank` × `u64` dimensions.
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct PortEntry {
    /// `name_length`.
    #[br(temp)]
    #[bw(calc = name.len() as u16)]
    name_length: u16,
    /// UTF-8 name bytes (may be empty: an unnamed port).
    #[br(count = name_length)]
    pub name: Vec<u8>,
    /// Workspace slot the port maps to.
    pub slot: u32,
    /// Total number of elements.
    pub element_count: u64,
    /// Element type code.
    pub dtype: u8,
    /// `rank`.
    #[br(temp)]
    #[bw(calc = shape.len() as u8)]
    rank: u8,
    /// Row-major dimensions; empty when the rank is unknown.
    #[br(count = rank)]
    pub shape: Vec<u64>,
}

/// The start of an Extension payload: `key_length: u16` and the UTF-8 key; the
/// value is every byte after it.
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ExtensionHead {
    /// `key_length`.
    #[br(temp)]
    #[bw(calc = key.len() as u16)]
    key_length: u16,
    /// UTF-8 key bytes.
    #[br(count = key_length)]
    pub key: Vec<u8>,
}

/// The count that starts a Weights payload (`weight_count: u32`) or a Constants
/// payload (`constant_count: u32`).
#[binrw]
#[brw(little)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct EntryCount {
    /// Number of entries that follow.
    pub count: u32,
}

/// The head of one Weights entry; `body_length` bytes of body follow it.
#[binrw]
#[brw(little)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct WeightEntryHead {
    /// BLAKE3 hash of the body.
    pub fingerprint: [u8; 32],
    /// Body length in bytes.
    pub body_length: u64,
}

/// The head of one Constants entry, by its tag byte. An inline head is followed by
/// `body_length` body bytes.
#[binrw]
#[brw(little)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConstantEntryHead {
    /// Tag 0: the body is stored in the entry.
    #[brw(magic = 0u8)]
    Inline {
        /// Workspace slot the constant fills.
        slot: u32,
        /// Element type code.
        dtype: u8,
        /// Body length in bytes.
        body_length: u32,
    },
    /// Tag 1: the body is the Weights entry with this fingerprint.
    #[brw(magic = 1u8)]
    Reference {
        /// Workspace slot the constant fills.
        slot: u32,
        /// Element type code.
        dtype: u8,
        /// BLAKE3 hash of the body, a key of the Weights section.
        fingerprint: [u8; 32],
    },
}

/// The payload of a Schedule (node ids) or ExecPlan (kernel-call indices) section:
/// `level_count: u32` then the levels.
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct LevelList {
    /// `level_count`.
    #[br(temp)]
    #[bw(calc = levels.len() as u32)]
    level_count: u32,
    /// The levels, in execution order.
    #[br(parse_with = counted(u64::from(level_count), 4))]
    pub levels: Vec<IndexLevel>,
}

/// One level: `index_count: u32` then that many `u32` indices.
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct IndexLevel {
    /// `index_count`.
    #[br(temp)]
    #[bw(calc = indices.len() as u32)]
    index_count: u32,
    /// Node ids (Schedule) or kernel-call indices (ExecPlan).
    #[br(parse_with = counted(u64::from(index_count), 4))]
    pub indices: Vec<u32>,
}

/// The payload of a ShapeRegistry section: `shape_count: u32` then the shapes.
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ShapeRegistryList {
    /// `shape_count`.
    #[br(temp)]
    #[bw(calc = shapes.len() as u32)]
    shape_count: u32,
    /// The shapes, by shape id.
    #[br(parse_with = counted(u64::from(shape_count), MIN_SHAPE_ENTRY_LEN))]
    pub shapes: Vec<ShapeEntry>,
}

/// One interned shape: `rank: u8`, eight inline `u64` dimensions,
/// `overflow_count: u32` and that many further `u64` dimensions.
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ShapeEntry {
    /// Number of dimensions.
    pub rank: u8,
    /// The first eight dimensions (unused ones are written as zero).
    pub dims: [u64; 8],
    /// `overflow_count`.
    #[br(temp)]
    #[bw(calc = overflow.len() as u32)]
    overflow_count: u32,
    /// Dimensions beyond the eighth.
    #[br(parse_with = counted(u64::from(overflow_count), 8))]
    pub overflow: Vec<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{read_from, to_bytes};

    #[test]
    fn header_layout() {
        let h = HoloHeader {
            format_version: 2,
            flags: 0x0102,
            section_count: 3,
        };
        let bytes = to_bytes(&h);
        assert_eq!(bytes, b"HOLO\x02\x00\x02\x01\x03\x00");
        assert_eq!(read_from::<HoloHeader>(&bytes).unwrap(), (h, 10));
    }

    #[test]
    fn section_entry_layout() {
        let e = SectionEntry {
            kind: 14,
            padding: [0; 7],
            offset: 0x1122,
            length: 5,
        };
        let bytes = to_bytes(&e);
        assert_eq!(bytes.len() as u64, SECTION_ENTRY_LEN);
        assert_eq!(bytes[0], 14);
        assert_eq!(&bytes[8..10], &[0x22, 0x11]);
        assert_eq!(bytes[16], 5);
    }

    #[test]
    fn port_round_trip() {
        let list = PortList {
            ports: vec![PortEntry {
                name: b"x".to_vec(),
                slot: 7,
                element_count: 6,
                dtype: 1,
                shape: vec![2, 3],
            }],
        };
        let bytes = to_bytes(&list);
        assert_eq!(bytes.len(), 4 + 2 + 1 + 4 + 8 + 1 + 1 + 16);
        assert_eq!(read_from::<PortList>(&bytes).unwrap().0, list);
    }

    #[test]
    fn constant_heads() {
        let inline = ConstantEntryHead::Inline {
            slot: 1,
            dtype: 2,
            body_length: 3,
        };
        assert_eq!(to_bytes(&inline), [0, 1, 0, 0, 0, 2, 3, 0, 0, 0]);
        let reference = ConstantEntryHead::Reference {
            slot: 1,
            dtype: 2,
            fingerprint: [9; 32],
        };
        let bytes = to_bytes(&reference);
        assert_eq!(bytes.len(), 38);
        assert_eq!(read_from::<ConstantEntryHead>(&bytes).unwrap().0, reference);
    }

    #[test]
    fn huge_counts_refused_before_allocation() {
        let bytes = [0xFF, 0xFF, 0xFF, 0xFF, 0, 0];
        assert!(read_from::<LevelList>(&bytes).is_err());
        assert!(read_from::<PortList>(&bytes).is_err());
        assert!(read_from::<ShapeRegistryList>(&bytes).is_err());
    }

    #[test]
    fn kind_numbers_and_names() {
        for (i, k) in SectionKind::ALL.iter().enumerate() {
            assert_eq!(usize::from(k.number()), i + 1);
            assert_eq!(SectionKind::from_number(k.number()), Some(*k));
            assert_eq!(SectionKind::parse(k.name()), Some(*k));
        }
        assert_eq!(SectionKind::from_number(0), None);
        assert_eq!(SectionKind::from_number(17), None);
        assert_eq!(
            SectionKind::parse("extension"),
            Some(SectionKind::Extension)
        );
    }
}

//! The quantization section and the quantization descriptors it holds
//! (metadata.md "Quantization Section", quantization.md and quantization/*.md).
//!
//! [`QuantizationSection`] keeps the descriptor both as stored and decoded: the
//! bytes round-trip exactly (validation judges them, however broken), and the
//! scheme is decoded once, when the section is read or built.
//! Each scheme struct mirrors the "Binary Encoding" table of its scheme file, header
//! included, so offsets in the table are offsets in the struct.

use binrw::binrw;

use super::counted;

/// The quantization section (metadata.md "Quantization Section"): a length and the
/// quantization descriptor, whose first four bytes are [`QuantizationHeader`].
///
/// The fields are private so that the two forms always agree: the descriptor bytes
/// as stored (header, scheme fields, writer padding; validation judges them, and an
/// invalid file is written back byte for byte) and the [`QuantScheme`] they decode
/// to, decoded once when the section is read (the binrw read below) or built
/// ([`QuantizationSection::new`], [`QuantizationSection::from_bytes`]). Its users
/// take the scheme from [`QuantizationSection::scheme`] and never decode again.
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, Default)]
pub struct QuantizationSection {
    /// `quantization_length`.
    #[br(temp)]
    #[bw(calc = bytes.len() as u32)]
    quantization_length: u32,
    /// The quantization descriptor bytes (header + scheme fields + writer padding).
    #[br(parse_with = counted(quantization_length as u64, 1))]
    bytes: Vec<u8>,
    /// `bytes` decoded; not on the wire.
    #[br(calc = decode_scheme(&bytes))]
    #[bw(ignore)]
    scheme: Option<QuantScheme>,
}

impl QuantizationSection {
    /// The section holding `scheme`'s descriptor (its fixed fields, no padding): what
    /// a writer stores.
    pub fn new(scheme: QuantScheme) -> Self {
        QuantizationSection {
            bytes: scheme.encode(),
            scheme: Some(scheme),
        }
    }

    /// The section holding exactly `bytes` as its descriptor, decoded as a read
    /// would: for descriptors with writer padding, and for deliberately broken ones
    /// (too short, an unassigned scheme, bad field values) in tests and the corpus.
    pub fn from_bytes(bytes: Vec<u8>) -> Self {
        let scheme = decode_scheme(&bytes);
        QuantizationSection { bytes, scheme }
    }

    /// The quantization descriptor bytes as stored (`quantization_length` of them).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The decoded scheme fields: `None` when the scheme tag is not assigned or the
    /// descriptor is shorter than the scheme's fixed fields. Every reader of scheme
    /// fields (validation, dequantization, export, conversion) takes them from here.
    pub fn scheme(&self) -> Option<&QuantScheme> {
        self.scheme.as_ref()
    }

    /// The scheme header, when the descriptor holds at least four bytes (also for an
    /// unassigned scheme or a descriptor too short for its scheme's fields).
    pub fn header(&self) -> Option<QuantizationHeader> {
        match &self.scheme {
            Some(scheme) => Some(scheme.header()),
            None => super::read_from::<QuantizationHeader>(&self.bytes)
                .ok()
                .map(|(h, _)| h),
        }
    }
}

impl From<QuantScheme> for QuantizationSection {
    fn from(scheme: QuantScheme) -> Self {
        QuantizationSection::new(scheme)
    }
}

/// Two sections are equal when they hold the same bytes (the scheme is decoded
/// from them).
impl PartialEq for QuantizationSection {
    fn eq(&self, other: &Self) -> bool {
        self.bytes == other.bytes
    }
}

impl Eq for QuantizationSection {}

/// The 4-byte header every quantization descriptor starts with (quantization.md).
#[binrw]
#[brw(little)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct QuantizationHeader {
    /// Scheme identifier.
    pub scheme_tag: u8,
    /// Scheme encoding version.
    pub scheme_version: u8,
    /// Scheme-specific flags.
    pub flags: u16,
}

impl QuantizationHeader {
    /// The header of a version-1 descriptor of scheme `scheme_tag`.
    pub const fn version1(scheme_tag: u8, flags: u16) -> Self {
        QuantizationHeader {
            scheme_tag,
            scheme_version: 1,
            flags,
        }
    }
}

/// `scheme_tag` of per-tensor affine.
pub const SCHEME_PER_TENSOR_AFFINE: u8 = 0x01;
/// `scheme_tag` of per-channel affine.
pub const SCHEME_PER_CHANNEL_AFFINE: u8 = 0x02;
/// `scheme_tag` of per-block affine.
pub const SCHEME_PER_BLOCK_AFFINE: u8 = 0x03;
/// `scheme_tag` of NF4.
pub const SCHEME_NF4: u8 = 0x04;
/// `scheme_tag` of MXFP.
pub const SCHEME_MXFP: u8 = 0x05;

/// The highest `scheme_version` defined for every assigned scheme.
pub const SCHEME_VERSION_MAX: u8 = 0x01;

/// Flags bit 0 of per-channel and per-block affine: the zero points are all zero.
pub const FLAG_SYMMETRIC: u16 = 0x0001;

/// `zero_point_buffer_index` of a symmetric descriptor.
pub const NO_ZERO_POINT_BUFFER: u32 = 0xFFFF_FFFF;

/// Per-tensor affine (scheme `0x01`, 16 bytes): one inline scale and zero point.
#[binrw]
#[brw(little)]
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct PerTensorAffine {
    /// Offset 0: the common header.
    pub header: QuantizationHeader,
    /// Offset 4.
    pub scale: f32,
    /// Offset 8.
    pub zero_point: i32,
    /// Offset 12: must be zero.
    pub reserved: [u8; 4],
}

impl PerTensorAffine {
    /// Encoded size in bytes.
    pub const LEN: u64 = 16;
    /// Offset of `scale`.
    pub const SCALE: u64 = 4;
    /// Offset of `zero_point`.
    pub const ZERO_POINT: u64 = 8;
    /// Offset of `_reserved`.
    pub const RESERVED: u64 = 12;
}

/// Per-channel affine (scheme `0x02`, 20 bytes): scale and zero-point arrays in
/// other buffers, one entry per index along `axis`.
#[binrw]
#[brw(little)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct PerChannelAffine {
    /// Offset 0: the common header.
    pub header: QuantizationHeader,
    /// Offset 4.
    pub axis: u32,
    /// Offset 8.
    pub scale_buffer_index: u32,
    /// Offset 12.
    pub zero_point_buffer_index: u32,
    /// Offset 16: `0x03` (float32) in version 1.
    pub scale_type_tag: u8,
    /// Offset 17: must be zero.
    pub reserved: [u8; 3],
}

impl PerChannelAffine {
    /// Encoded size in bytes.
    pub const LEN: u64 = 20;
    /// Offset of `axis`.
    pub const AXIS: u64 = 4;
    /// Offset of `scale_buffer_index`.
    pub const SCALE_BUFFER_INDEX: u64 = 8;
    /// Offset of `zero_point_buffer_index`.
    pub const ZERO_POINT_BUFFER_INDEX: u64 = 12;
    /// Offset of `scale_type_tag`.
    pub const SCALE_TYPE_TAG: u64 = 16;
    /// Offset of `_reserved`.
    pub const RESERVED: u64 = 17;
}

/// Per-block affine (scheme `0x03`, 24 bytes): blocks of `block_size` elements along
/// `axis`, one scale (and zero point) per block.
#[binrw]
#[brw(little)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct PerBlockAffine {
    /// Offset 0: the common header.
    pub header: QuantizationHeader,
    /// Offset 4.
    pub axis: u32,
    /// Offset 8: logical elements per block.
    pub block_size: u32,
    /// Offset 12.
    pub scale_buffer_index: u32,
    /// Offset 16.
    pub zero_point_buffer_index: u32,
    /// Offset 20: `0x01` float16, `0x02` bfloat16 or `0x03` float32.
    pub scale_type_tag: u8,
    /// Offset 21: must be zero.
    pub reserved: [u8; 3],
}

impl PerBlockAffine {
    /// A version-1 descriptor with the scales (of element type `scale_type_tag`) in
    /// buffer 1 and, unless `symmetric` (flag `SYMMETRIC`, no zero points), the zero
    /// points in buffer 2: the layout every writer uses.
    pub fn version1(axis: u32, block_size: u32, scale_type_tag: u8, symmetric: bool) -> Self {
        PerBlockAffine {
            header: QuantizationHeader::version1(
                SCHEME_PER_BLOCK_AFFINE,
                if symmetric { FLAG_SYMMETRIC } else { 0 },
            ),
            axis,
            block_size,
            scale_buffer_index: 1,
            zero_point_buffer_index: if symmetric { NO_ZERO_POINT_BUFFER } else { 2 },
            scale_type_tag,
            reserved: [0; 3],
        }
    }

    /// Encoded size in bytes.
    pub const LEN: u64 = 24;
    /// Offset of `axis`.
    pub const AXIS: u64 = 4;
    /// Offset of `block_size`.
    pub const BLOCK_SIZE: u64 = 8;
    /// Offset of `scale_buffer_index`.
    pub const SCALE_BUFFER_INDEX: u64 = 12;
    /// Offset of `zero_point_buffer_index`.
    pub const ZERO_POINT_BUFFER_INDEX: u64 = 16;
    /// Offset of `scale_type_tag`.
    pub const SCALE_TYPE_TAG: u64 = 20;
    /// Offset of `_reserved`.
    pub const RESERVED: u64 = 21;
}

/// The 16-byte block descriptor shared by NF4 (scheme `0x04`, float32 `absmax` scales)
/// and MXFP (scheme `0x05`, `float8_e8m0` scales): the two tables are identical.
#[binrw]
#[brw(little)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct BlockScaled {
    /// Offset 0: the common header.
    pub header: QuantizationHeader,
    /// Offset 4.
    pub axis: u32,
    /// Offset 8: logical elements per block.
    pub block_size: u32,
    /// Offset 12.
    pub scale_buffer_index: u32,
}

impl BlockScaled {
    /// A version-1 descriptor of scheme `scheme_tag` (NF4 or MXFP) with no flags and
    /// the scales in buffer 1 (the layout every writer uses).
    pub fn version1(scheme_tag: u8, axis: u32, block_size: u32) -> Self {
        BlockScaled {
            header: QuantizationHeader::version1(scheme_tag, 0),
            axis,
            block_size,
            scale_buffer_index: 1,
        }
    }

    /// Encoded size in bytes.
    pub const LEN: u64 = 16;
    /// Offset of `axis`.
    pub const AXIS: u64 = 4;
    /// Offset of `block_size`.
    pub const BLOCK_SIZE: u64 = 8;
    /// Offset of `scale_buffer_index`.
    pub const SCALE_BUFFER_INDEX: u64 = 12;
}

/// A decoded quantization descriptor of an assigned scheme.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QuantScheme {
    /// `0x01`.
    PerTensorAffine(PerTensorAffine),
    /// `0x02`.
    PerChannelAffine(PerChannelAffine),
    /// `0x03`.
    PerBlockAffine(PerBlockAffine),
    /// `0x04`.
    Nf4(BlockScaled),
    /// `0x05`.
    Mxfp(BlockScaled),
}

/// The fixed encoded length of the assigned scheme `tag`, `None` for other tags.
pub fn scheme_fixed_len(tag: u8) -> Option<u64> {
    match tag {
        SCHEME_PER_TENSOR_AFFINE => Some(PerTensorAffine::LEN),
        SCHEME_PER_CHANNEL_AFFINE => Some(PerChannelAffine::LEN),
        SCHEME_PER_BLOCK_AFFINE => Some(PerBlockAffine::LEN),
        SCHEME_NF4 | SCHEME_MXFP => Some(BlockScaled::LEN),
        _ => None,
    }
}

/// The spec name of the assigned scheme `tag`.
pub fn scheme_name(tag: u8) -> &'static str {
    match tag {
        SCHEME_PER_TENSOR_AFFINE => "per-tensor affine",
        SCHEME_PER_CHANNEL_AFFINE => "per-channel affine",
        SCHEME_PER_BLOCK_AFFINE => "per-block affine",
        SCHEME_NF4 => "NF4",
        SCHEME_MXFP => "MXFP",
        _ => "unassigned",
    }
}

/// The element type name of a `scale_type_tag` (`0x01` float16, `0x02` bfloat16,
/// `0x03` float32), `None` for other tags.
pub fn scale_type_name(tag: u8) -> Option<&'static str> {
    match tag {
        0x01 => Some("float16"),
        0x02 => Some("bfloat16"),
        0x03 => Some("float32"),
        _ => None,
    }
}

/// Decodes `bytes` (a whole quantization descriptor): `None` when the scheme tag is
/// not assigned or the bytes are shorter than the scheme's fixed fields; trailing
/// writer padding is ignored. The one decoder of scheme fields, run only when a
/// [`QuantizationSection`] is read or built.
fn decode_scheme(bytes: &[u8]) -> Option<QuantScheme> {
    let tag = *bytes.first()?;
    let len = usize::try_from(scheme_fixed_len(tag)?).ok()?;
    let fixed = bytes.get(..len)?;
    let scheme = match tag {
        SCHEME_PER_TENSOR_AFFINE => QuantScheme::PerTensorAffine(super::read_from(fixed).ok()?.0),
        SCHEME_PER_CHANNEL_AFFINE => QuantScheme::PerChannelAffine(super::read_from(fixed).ok()?.0),
        SCHEME_PER_BLOCK_AFFINE => QuantScheme::PerBlockAffine(super::read_from(fixed).ok()?.0),
        SCHEME_NF4 => QuantScheme::Nf4(super::read_from(fixed).ok()?.0),
        _ => QuantScheme::Mxfp(super::read_from(fixed).ok()?.0),
    };
    Some(scheme)
}

impl QuantScheme {
    /// The quantization axis; `None` for per-tensor affine, which has none.
    pub fn axis(&self) -> Option<u32> {
        match self {
            QuantScheme::PerTensorAffine(_) => None,
            QuantScheme::PerChannelAffine(d) => Some(d.axis),
            QuantScheme::PerBlockAffine(d) => Some(d.axis),
            QuantScheme::Nf4(d) | QuantScheme::Mxfp(d) => Some(d.axis),
        }
    }

    /// Encodes the descriptor (its fixed fields, no padding).
    pub fn encode(&self) -> Vec<u8> {
        match self {
            QuantScheme::PerTensorAffine(d) => super::to_bytes(d),
            QuantScheme::PerChannelAffine(d) => super::to_bytes(d),
            QuantScheme::PerBlockAffine(d) => super::to_bytes(d),
            QuantScheme::Nf4(d) | QuantScheme::Mxfp(d) => super::to_bytes(d),
        }
    }

    /// The buffer table indices the descriptor names for its parameters: the scale
    /// buffer, then the zero-point buffer when the scheme has one (not SYMMETRIC).
    /// Per-tensor affine names none. Indices are as stored, unchecked.
    pub fn parameter_buffers(&self) -> Vec<u32> {
        let affine = |flags: u16, scale: u32, zero_point: u32| {
            if flags & FLAG_SYMMETRIC == 0 {
                vec![scale, zero_point]
            } else {
                vec![scale]
            }
        };
        match self {
            QuantScheme::PerTensorAffine(_) => Vec::new(),
            QuantScheme::PerChannelAffine(d) => affine(
                d.header.flags,
                d.scale_buffer_index,
                d.zero_point_buffer_index,
            ),
            QuantScheme::PerBlockAffine(d) => affine(
                d.header.flags,
                d.scale_buffer_index,
                d.zero_point_buffer_index,
            ),
            QuantScheme::Nf4(d) | QuantScheme::Mxfp(d) => vec![d.scale_buffer_index],
        }
    }

    /// The common header.
    pub fn header(&self) -> QuantizationHeader {
        match self {
            QuantScheme::PerTensorAffine(d) => d.header,
            QuantScheme::PerChannelAffine(d) => d.header,
            QuantScheme::PerBlockAffine(d) => d.header,
            QuantScheme::Nf4(d) | QuantScheme::Mxfp(d) => d.header,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{read_from, to_bytes};

    #[test]
    fn per_channel_worked_example_round_trips() {
        // quantization/per-channel-affine.md "Worked Example", after its
        // quantization_length.
        let descriptor = [
            0x02, 0x01, 0x00, 0x00, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0x03, 0, 0, 0,
        ];
        let mut wire = 20u32.to_le_bytes().to_vec();
        wire.extend_from_slice(&descriptor);
        let (section, used) = read_from::<QuantizationSection>(&wire).unwrap();
        assert_eq!(used, wire.len() as u64);
        let Some(&QuantScheme::PerChannelAffine(d)) = section.scheme() else {
            panic!("not per-channel");
        };
        assert_eq!(d.axis, 0);
        assert_eq!(d.scale_buffer_index, 1);
        assert_eq!(d.zero_point_buffer_index, 2);
        assert_eq!(d.scale_type_tag, 3);
        assert_eq!(section.bytes(), descriptor);
        assert_eq!(to_bytes(&section), wire);
        assert_eq!(QuantScheme::PerChannelAffine(d).encode(), descriptor);
        assert_eq!(
            QuantizationSection::new(QuantScheme::PerChannelAffine(d)),
            section
        );
    }

    #[test]
    fn decode_needs_fixed_fields_and_ignores_padding() {
        let d = PerBlockAffine::version1(1, 32, 1, true);
        let mut bytes = crate::schema::to_bytes(&d);
        assert_eq!(bytes.len() as u64, PerBlockAffine::LEN);
        let short = QuantizationSection::from_bytes(bytes[..23].to_vec());
        assert_eq!(short.scheme(), None);
        assert_eq!(short.header(), Some(d.header));
        bytes.extend_from_slice(&[0xAA; 8]);
        let padded = QuantizationSection::from_bytes(bytes.clone());
        assert_eq!(padded.scheme(), Some(&QuantScheme::PerBlockAffine(d)));
        assert_eq!(padded.bytes(), bytes);
        let unassigned = QuantizationSection::from_bytes(vec![0x06, 1, 0, 0]);
        assert_eq!(unassigned.scheme(), None);
        assert_eq!(unassigned.header().map(|h| h.scheme_tag), Some(0x06));
        let empty = QuantizationSection::from_bytes(Vec::new());
        assert_eq!((empty.scheme(), empty.header()), (None, None));
        assert_eq!(empty, QuantizationSection::default());
    }

    #[test]
    fn a_read_decodes_what_from_bytes_decodes() {
        // A descriptor too short for its scheme reads (the bytes are kept) but has
        // no scheme; the same bytes built by hand give the same section.
        let wire = [3u8, 0, 0, 0, 0x01, 0x01, 0x00];
        let (section, _) = read_from::<QuantizationSection>(&wire).unwrap();
        assert_eq!(section.bytes(), &wire[4..]);
        assert_eq!(section.scheme(), None);
        assert_eq!(section, QuantizationSection::from_bytes(wire[4..].to_vec()));
        assert_eq!(to_bytes(&section), wire);
    }
}

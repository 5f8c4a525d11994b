//! Quantization descriptor payloads (quantization.md and quantization/*.md).
//!
//! The tensor descriptor keeps the raw descriptor bytes in
//! [`QuantizationSection`]; the structs here decode them.
//! Each struct mirrors the "Binary Encoding" table of its scheme file, header
//! included, so offsets in the table are offsets in the struct.

use binrw::binrw;

use super::{QuantizationHeader, QuantizationSection};

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

impl QuantizationSection {
    /// The decoded scheme fields: `None` when the scheme tag is not assigned or the
    /// descriptor is shorter than the scheme's fixed fields. Every reader of scheme
    /// fields (validation, dequantization, export, conversion) takes them from here.
    pub fn scheme(&self) -> Option<QuantScheme> {
        QuantScheme::decode(&self.quantization_descriptor)
    }
}

impl QuantScheme {
    /// Decodes `bytes` (a whole quantization descriptor). `None` when the scheme tag is
    /// not assigned or the bytes are shorter than the scheme's fixed fields; trailing
    /// writer padding is ignored.
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        let tag = *bytes.first()?;
        let len = usize::try_from(scheme_fixed_len(tag)?).ok()?;
        let fixed = bytes.get(..len)?;
        let scheme = match tag {
            SCHEME_PER_TENSOR_AFFINE => {
                QuantScheme::PerTensorAffine(super::read_from(fixed).ok()?.0)
            }
            SCHEME_PER_CHANNEL_AFFINE => {
                QuantScheme::PerChannelAffine(super::read_from(fixed).ok()?.0)
            }
            SCHEME_PER_BLOCK_AFFINE => QuantScheme::PerBlockAffine(super::read_from(fixed).ok()?.0),
            SCHEME_NF4 => QuantScheme::Nf4(super::read_from(fixed).ok()?.0),
            _ => QuantScheme::Mxfp(super::read_from(fixed).ok()?.0),
        };
        Some(scheme)
    }

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

    #[test]
    fn per_channel_worked_example_round_trips() {
        // quantization/per-channel-affine.md "Worked Example".
        let bytes = [
            0x02, 0x01, 0x00, 0x00, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0x03, 0, 0, 0,
        ];
        let Some(QuantScheme::PerChannelAffine(d)) = QuantScheme::decode(&bytes) else {
            panic!("not per-channel");
        };
        assert_eq!(d.axis, 0);
        assert_eq!(d.scale_buffer_index, 1);
        assert_eq!(d.zero_point_buffer_index, 2);
        assert_eq!(d.scale_type_tag, 3);
        assert_eq!(QuantScheme::PerChannelAffine(d).encode(), bytes);
    }

    #[test]
    fn decode_needs_fixed_fields_and_ignores_padding() {
        let d = PerBlockAffine::version1(1, 32, 1, true);
        let mut bytes = crate::schema::to_bytes(&d);
        assert_eq!(bytes.len() as u64, PerBlockAffine::LEN);
        assert_eq!(QuantScheme::decode(&bytes[..23]), None);
        bytes.extend_from_slice(&[0xAA; 8]);
        assert_eq!(
            QuantScheme::decode(&bytes),
            Some(QuantScheme::PerBlockAffine(d))
        );
        assert_eq!(QuantScheme::decode(&[0x06, 1, 0, 0]), None);
        assert_eq!(QuantScheme::decode(&[]), None);
    }
}

//! Descriptor sections after the layout fields (metadata.md): buffer table,
//! quantization framing, shard, statistics, extension type, composite member.

use binrw::binrw;

use super::counted;

/// One 16-byte buffer handle (metadata.md "Buffer Table").
#[binrw]
#[brw(little)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct BufferHandle {
    /// Size of the buffer in bytes.
    pub byte_size: u64,
    /// Minimum alignment (power of two, >= 64).
    pub alignment: u32,
    /// Device holding the buffer (0 = CPU).
    pub device_tag: u8,
    /// Must be zero.
    pub reserved: [u8; 3],
}

impl BufferHandle {
    /// Encoded size in bytes.
    pub const LEN: u64 = 16;
}

/// The quantization section framing (metadata.md "Quantization Section"): a length
/// and the raw quantization descriptor, whose first four bytes are
/// [`QuantizationHeader`]. Scheme payloads are decoded by [`crate::quant`].
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct QuantizationSection {
    /// `quantization_length`.
    #[br(temp)]
    #[bw(calc = quantization_descriptor.len() as u32)]
    quantization_length: u32,
    /// The quantization descriptor bytes (header + scheme fields + writer padding).
    #[br(parse_with = counted(quantization_length as u64, 1))]
    pub quantization_descriptor: Vec<u8>,
}

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

impl QuantizationSection {
    /// The scheme header, when the descriptor holds at least four bytes.
    pub fn header(&self) -> Option<QuantizationHeader> {
        super::read_from::<QuantizationHeader>(&self.quantization_descriptor)
            .ok()
            .map(|(h, _)| h)
    }
}

/// The shard section (metadata.md "Shard Section").
#[binrw]
#[brw(little)]
#[br(import(rank: u32))]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ShardSection {
    /// Shape of the logical parent tensor.
    #[br(parse_with = counted(rank as u64, 8))]
    pub parent_shape: Vec<u64>,
    /// Start index of this shard in the parent, per dimension.
    #[br(parse_with = counted(rank as u64, 8))]
    pub shard_offset: Vec<u64>,
}

/// The 72-byte statistics section (metadata.md "Statistics Section").
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Statistics {
    /// Validity bitmask; bits 6–31 reserved.
    pub computed_mask: u32,
    /// Must be zero.
    pub reserved: u32,
    /// Non-zero count.
    pub nnz: u64,
    /// Fraction of zeros, in [0, 1].
    pub sparsity_ratio: f64,
    /// Minimum value.
    pub value_min: f64,
    /// Maximum value.
    pub value_max: f64,
    /// Maximum absolute value.
    pub value_abs_max: f64,
    /// Mean.
    pub value_mean: f64,
    /// Population standard deviation (>= 0).
    pub value_stddev: f64,
    /// N of N:M sparsity.
    pub nm_n: u8,
    /// M of N:M sparsity.
    pub nm_m: u8,
    /// 1 when a NaN is present.
    pub has_nan: u8,
    /// 1 when an infinity is present.
    pub has_inf: u8,
    /// Must be zero.
    pub reserved2: [u8; 4],
}

impl Statistics {
    /// Encoded size in bytes.
    pub const LEN: u64 = 72;
    /// `NNZ_VALID`.
    pub const NNZ_VALID: u32 = 1 << 0;
    /// `SPARSITY_VALID`.
    pub const SPARSITY_VALID: u32 = 1 << 1;
    /// `VALUE_RANGE_VALID`.
    pub const VALUE_RANGE_VALID: u32 = 1 << 2;
    /// `VALUE_STATS_VALID`.
    pub const VALUE_STATS_VALID: u32 = 1 << 3;
    /// `NM_SPARSITY_VALID`.
    pub const NM_SPARSITY_VALID: u32 = 1 << 4;
    /// `NAN_INF_VALID`.
    pub const NAN_INF_VALID: u32 = 1 << 5;
    /// Bits of `computed_mask` that are defined.
    pub const DEFINED_MASK: u32 = 0x3F;
}

/// The 20-byte extension type section (metadata.md "Extension Type Section").
#[binrw]
#[brw(little)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ExtensionType {
    /// Bits per element (> 0).
    pub bit_width: u32,
    /// Elements per byte (1 for whole-byte widths, 8/bit_width below).
    pub packing_factor: u8,
    /// 1 for floating point.
    pub is_float: u8,
    /// 1 for signed integers (0 for floats).
    pub is_signed: u8,
    /// Sign bits of a float (0 or 1).
    pub sign_bits: u8,
    /// Exponent bits of a float.
    pub exponent_bits: u8,
    /// Mantissa bits of a float.
    pub mantissa_bits: u8,
    /// Must be zero.
    pub reserved: [u8; 2],
    /// Exponent bias of a float.
    pub exponent_bias: u32,
    /// 1 when NaN is representable.
    pub has_nan: u8,
    /// 1 when infinity is representable.
    pub has_inf: u8,
    /// Must be zero.
    pub reserved2: [u8; 2],
}

impl ExtensionType {
    /// Encoded size in bytes.
    pub const LEN: u64 = 20;
}

/// The 16-byte composite member section (metadata.md "Composite Member Section").
#[binrw]
#[brw(little)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct CompositeMember {
    /// 0 correction, 1 base.
    pub member_role: u8,
    /// Must be zero.
    pub reserved: [u8; 15],
}

impl CompositeMember {
    /// Encoded size in bytes.
    pub const LEN: u64 = 16;
}

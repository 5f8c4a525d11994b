//! Descriptor sections after the layout fields (metadata.md): buffer table,
//! shard, statistics, extension type, composite member. The quantization section
//! is in [`super::quant`], with the descriptors it holds.

use binrw::binrw;

use super::counted;

/// One 16-byte buffer handle (buffer-protocol.md "Buffer Handle", the normative
/// table; metadata.md "Buffer Table" shows an older one with three reserved bytes).
#[binrw]
#[brw(little)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct BufferHandle {
    /// Offset 0: size of the buffer in bytes (0 = an empty buffer).
    pub byte_size: u64,
    /// Offset 8: alignment the writer guarantees (a power of two; at least 64 for a
    /// non-empty buffer).
    pub alignment: u32,
    /// Offset 12: device holding the buffer ([`DEVICE_CPU`] = host memory).
    pub device_tag: u8,
    /// Offset 13: how the producer synchronised its writes ([`SYNC_PRODUCER_SYNCED`]
    /// for CPU buffers).
    pub sync_mode: u8,
    /// Offset 14: how the buffer is accessible ([`MEMORY_STANDARD`] by default).
    pub memory_class: u8,
    /// Offset 15: must be zero.
    pub reserved: u8,
}

impl BufferHandle {
    /// Encoded size in bytes.
    pub const LEN: u64 = 16;
    /// Offset of `alignment` inside the handle.
    pub const ALIGNMENT: u64 = 8;
    /// Offset of `device_tag` inside the handle.
    pub const DEVICE_TAG: u64 = 12;
    /// Offset of `sync_mode` inside the handle.
    pub const SYNC_MODE: u64 = 13;
    /// Offset of `memory_class` inside the handle.
    pub const MEMORY_CLASS: u64 = 14;
    /// Offset of `_reserved` inside the handle.
    pub const RESERVED: u64 = 15;
}

/// `device_tag` of CPU host memory (buffer-protocol.md "Device Tags").
pub const DEVICE_CPU: u8 = 0x00;
/// Highest `device_tag` the spec assigns (`0x08`, OpenCL).
pub const DEVICE_LAST_ASSIGNED: u8 = 0x08;
/// `sync_mode` `SYNC_PRODUCER_SYNCED` (buffer-protocol.md "sync_mode Values").
pub const SYNC_PRODUCER_SYNCED: u8 = 0x00;
/// Highest defined `sync_mode` (`SYNC_CONSUMER_STREAM`).
pub const SYNC_LAST_DEFINED: u8 = 0x02;
/// `memory_class` `STANDARD` (buffer-protocol.md "Memory Class Values").
pub const MEMORY_STANDARD: u8 = 0x00;
/// `memory_class` `HOST_PINNED`.
pub const MEMORY_HOST_PINNED: u8 = 0x01;
/// `memory_class` `UNIFIED`.
pub const MEMORY_UNIFIED: u8 = 0x02;
/// `memory_class` `PEER`.
pub const MEMORY_PEER: u8 = 0x03;

/// True for the implementation-private range `0xF0`–`0xFE`, shared by device tags
/// and memory classes.
pub const fn is_private_tag(tag: u8) -> bool {
    matches!(tag, 0xF0..=0xFE)
}

/// Whether buffer-protocol.md's "Per-Device Validity" table lists the pair
/// `(device_tag, memory_class)` as valid. Private device tags pair with `STANDARD`
/// or a private class; a reserved device tag or class pairs with nothing.
pub const fn device_memory_pair_valid(device_tag: u8, memory_class: u8) -> bool {
    match (device_tag, memory_class) {
        (0xF0..=0xFE, c) => c == MEMORY_STANDARD || is_private_tag(c),
        // STANDARD, HOST_PINNED and UNIFIED: every named device but WebGPU.
        (0x00..=0x08, MEMORY_STANDARD) => true,
        (0x05, _) => false,
        (0x00..=0x08, MEMORY_HOST_PINNED | MEMORY_UNIFIED) => true,
        // PEER: CUDA, ROCm, Vulkan, Level Zero.
        (0x01 | 0x02 | 0x04 | 0x07, MEMORY_PEER) => true,
        _ => false,
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

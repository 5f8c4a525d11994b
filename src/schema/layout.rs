//! Layout-specific descriptor fields (metadata.md "Layout-Specific Fields",
//! memory-layout.md and layouts/*.md).

use binrw::binrw;

use super::counted;

/// Row-major (C order).
pub const LAYOUT_ROW_MAJOR: u8 = 0x01;
/// Column-major (Fortran order).
pub const LAYOUT_COLUMN_MAJOR: u8 = 0x02;
/// Strided.
pub const LAYOUT_STRIDED: u8 = 0x03;
/// Tiled / blocked.
pub const LAYOUT_TILED: u8 = 0x04;
/// Morton (Z-order).
pub const LAYOUT_MORTON: u8 = 0x05;
/// COO sparse.
pub const LAYOUT_COO: u8 = 0x06;
/// CSR sparse.
pub const LAYOUT_CSR: u8 = 0x07;
/// CSC sparse.
pub const LAYOUT_CSC: u8 = 0x08;
/// CSF sparse.
pub const LAYOUT_CSF: u8 = 0x09;
/// Block-paged.
pub const LAYOUT_BLOCK_PAGED: u8 = 0x0A;
/// Composite / virtual head.
pub const LAYOUT_COMPOSITE: u8 = 0x0B;
/// Hilbert curve.
pub const LAYOUT_HILBERT: u8 = 0x40;

/// Hard ceiling on nested tiled descriptors the parser follows, whatever the
/// configured limit (the recursion is bounded so no input can exhaust the stack).
pub const MAX_TILED_NESTING: u32 = 64;

/// The spec name of layout `tag` (`row-major`, `csr`, …; `extension` for private
/// tags `0xF0`-`0xFE`, `unknown` otherwise).
pub fn layout_name(tag: u8) -> &'static str {
    match tag {
        LAYOUT_ROW_MAJOR => "row-major",
        LAYOUT_COLUMN_MAJOR => "column-major",
        LAYOUT_STRIDED => "strided",
        LAYOUT_TILED => "tiled",
        LAYOUT_MORTON => "morton",
        LAYOUT_COO => "coo",
        LAYOUT_CSR => "csr",
        LAYOUT_CSC => "csc",
        LAYOUT_CSF => "csf",
        LAYOUT_BLOCK_PAGED => "block-paged",
        LAYOUT_COMPOSITE => "composite",
        LAYOUT_HILBERT => "hilbert",
        0xF0..=0xFE => "extension",
        _ => "unknown",
    }
}

/// True for tags whose fields this schema knows how to read.
pub fn layout_tag_known(tag: u8) -> bool {
    matches!(tag, 0x01..=0x0B | 0x40 | 0xF0..=0xFE)
}

/// The layout-specific fields, chosen by `layout_tag`.
#[binrw]
#[brw(little)]
#[br(import(layout_tag: u8, rank: u32))]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LayoutFields {
    /// Row-major and column-major: no fields.
    #[br(pre_assert(layout_tag == LAYOUT_ROW_MAJOR || layout_tag == LAYOUT_COLUMN_MAJOR))]
    Implicit,
    /// Strided: `int64[rank]` strides in elements.
    #[br(pre_assert(layout_tag == LAYOUT_STRIDED))]
    Strided {
        /// Stride of each dimension, in logical elements.
        #[br(parse_with = counted(rank as u64, 8))]
        strides: Vec<i64>,
    },
    /// Tiled / blocked.
    #[br(pre_assert(layout_tag == LAYOUT_TILED))]
    Tiled(#[br(args(rank, 1))] TiledFields),
    /// Morton: `uint32[rank]` bits per dimension.
    #[br(pre_assert(layout_tag == LAYOUT_MORTON))]
    Morton {
        /// Bits per dimension in the Morton code.
        #[br(parse_with = counted(rank as u64, 4))]
        morton_bits: Vec<u32>,
    },
    /// COO.
    #[br(pre_assert(layout_tag == LAYOUT_COO))]
    Coo(CooFields),
    /// CSR.
    #[br(pre_assert(layout_tag == LAYOUT_CSR))]
    Csr(CompressedFields),
    /// CSC.
    #[br(pre_assert(layout_tag == LAYOUT_CSC))]
    Csc(CompressedFields),
    /// CSF.
    #[br(pre_assert(layout_tag == LAYOUT_CSF))]
    Csf(#[br(args(rank))] CsfFields),
    /// Block-paged.
    #[br(pre_assert(layout_tag == LAYOUT_BLOCK_PAGED))]
    BlockPaged(BlockPagedFields),
    /// Composite head.
    #[br(pre_assert(layout_tag == LAYOUT_COMPOSITE))]
    Composite(CompositeFields),
    /// Hilbert curve.
    #[br(pre_assert(layout_tag == LAYOUT_HILBERT))]
    Hilbert(HilbertFields),
    /// Extension layouts `0xF0`–`0xFE`.
    #[br(pre_assert((0xF0..=0xFE).contains(&layout_tag)))]
    Extension(ExtensionLayoutFields),
}

impl LayoutFields {
    /// Encoded size in bytes.
    pub fn encoded_len(&self) -> u64 {
        match self {
            LayoutFields::Implicit => 0,
            LayoutFields::Strided { strides } => 8 * strides.len() as u64,
            LayoutFields::Tiled(t) => t.encoded_len(),
            LayoutFields::Morton { morton_bits } => 4 * morton_bits.len() as u64,
            LayoutFields::Coo(_) => 16,
            LayoutFields::Csr(_) | LayoutFields::Csc(_) => 16,
            LayoutFields::Csf(c) => 8 + 4 * c.mode_order.len() as u64 + 8,
            LayoutFields::BlockPaged(_) => BlockPagedFields::LEN,
            LayoutFields::Composite(_) => 8,
            LayoutFields::Hilbert(_) => 8,
            LayoutFields::Extension(e) => 12 + e.extension_data.len() as u64,
        }
    }
}

/// Tiled layout fields, possibly nested (layouts/tiled.md).
///
/// Per docs/interpretations.md § Layouts, the nested tiled fields follow where `inner_strides` would be.
#[binrw]
#[brw(little)]
#[br(import(rank: u32, depth: u32))]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TiledFields {
    /// Tile size along each dimension.
    #[br(assert(depth <= MAX_TILED_NESTING, "tiled nesting deeper than {}", MAX_TILED_NESTING))]
    #[br(parse_with = counted(rank as u64, 8))]
    pub tile_shape: Vec<u64>,
    /// Tag ordering the tile grid (`0x01`, `0x02` or `0x03`).
    pub outer_layout: u8,
    /// Tag ordering elements within a tile (`0x01`–`0x04`).
    pub inner_layout: u8,
    /// Must be zero.
    pub reserved: [u8; 2],
    /// Present when `outer_layout` is strided: strides in tiles.
    #[br(if(outer_layout == LAYOUT_STRIDED), parse_with = counted(rank as u64, 8), map = Some)]
    pub outer_strides: Option<Vec<i64>>,
    /// Present when `inner_layout` is strided: strides in elements.
    #[br(if(inner_layout == LAYOUT_STRIDED), parse_with = counted(rank as u64, 8), map = Some)]
    pub inner_strides: Option<Vec<i64>>,
    /// Present when `inner_layout` is tiled: the next level.
    #[br(if(inner_layout == LAYOUT_TILED), args(rank, depth + 1))]
    pub inner_tiled: Option<Box<TiledFields>>,
}

impl TiledFields {
    /// Encoded size in bytes, nested levels included.
    pub fn encoded_len(&self) -> u64 {
        let vec = |v: &Option<Vec<i64>>| v.as_ref().map_or(0, |s| 8 * s.len() as u64);
        8 * self.tile_shape.len() as u64
            + 4
            + vec(&self.outer_strides)
            + vec(&self.inner_strides)
            + self.inner_tiled.as_ref().map_or(0, |t| t.encoded_len())
    }

    /// Number of tiled levels, this one included.
    pub fn depth(&self) -> u32 {
        1 + self.inner_tiled.as_ref().map_or(0, |t| t.depth())
    }
}

/// COO fields (layouts/coo.md).
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct CooFields {
    /// Number of stored elements.
    pub nnz: u64,
    /// 1 when sorted in lexicographic index order.
    pub is_sorted: u8,
    /// Must be zero.
    pub reserved: [u8; 7],
}

/// CSR / CSC fields (layouts/csr.md, layouts/csc.md).
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct CompressedFields {
    /// Number of stored elements.
    pub nnz: u64,
    /// Must be zero.
    pub reserved: [u8; 8],
}

/// CSF fields (layouts/csf.md).
#[binrw]
#[brw(little)]
#[br(import(rank: u32))]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct CsfFields {
    /// Number of stored elements.
    pub nnz: u64,
    /// `mode_order[L]` is the logical dimension stored at level `L`.
    #[br(parse_with = counted(rank as u64, 4))]
    pub mode_order: Vec<u32>,
    /// Must be zero.
    pub reserved: [u8; 8],
}

/// Block-paged fields (layouts/block-paged.md).
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct BlockPagedFields {
    /// Tokens per page.
    pub page_size: u32,
    /// Physical pages in the pool.
    pub num_pages: u64,
    /// The paged axis (0 in this version).
    pub paged_axis: u32,
    /// Sequences in the batch.
    pub num_seqs: u32,
    /// 0 key, 1 value, 2 fused / generic.
    pub kv_role: u8,
    /// Transformer layer, `u32::MAX` when not layer-scoped.
    pub layer_index: u32,
    /// 0 `uint32` block table, 1 `uint64`.
    pub block_table_index_type: u8,
    /// Must be zero.
    pub reserved: [u8; 6],
}

impl BlockPagedFields {
    /// Encoded size in bytes.
    pub const LEN: u64 = 32;
}

/// Composite head fields (metadata.md "Composite / Virtual", layouts/composite.md).
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct CompositeFields {
    /// 1 partition, 2 overlay, 3 group.
    pub composition_rule: u8,
    /// Overlay only: 1 replace, 2 add; else 0.
    pub combine_op: u8,
    /// Must be zero.
    pub reserved: [u8; 2],
    /// Members that follow the head; `u32::MAX` (open) is reserved.
    pub member_count: u32,
}

/// Hilbert curve fields (layouts/hilbert.md).
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct HilbertFields {
    /// Curve order (> 0).
    pub hilbert_order: u32,
    /// Curve dimensions (= rank, >= 2).
    pub hilbert_rank: u32,
}

/// Extension layout fields (`0xF0`–`0xFE`).
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ExtensionLayoutFields {
    /// Implementation-defined layout identifier.
    pub extension_layout_id: u64,
    /// `extension_data_length`.
    #[br(temp)]
    #[bw(calc = extension_data.len() as u32)]
    extension_data_length: u32,
    /// Opaque layout metadata.
    #[br(parse_with = counted(extension_data_length as u64, 1))]
    pub extension_data: Vec<u8>,
}

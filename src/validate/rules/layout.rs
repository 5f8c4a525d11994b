//! Rules of the layouts (memory-layout.md, layouts/*.md) beyond the descriptor-level
//! layout rules in [`super::container`]: layout fields, buffer composition of sparse
//! and indirect layouts, the stored index structures, and composite close-time
//! checks.

crate::declare_rules! {
    LY_STR_LOW: "LY-STR-001", Spec,
        "every element a strided layout addresses lies at or after the start of buffer 0 (byte_offset covers negative strides)",
        "layouts/strided.md § Element Address";
    LY_TIL_TILE_SHAPE: "LY-TIL-001", Spec,
        "every tile_shape entry, at every tiling level, is greater than 0",
        "layouts/tiled.md § Additional Descriptor Fields";
    LY_TIL_OUTER: "LY-TIL-002", Spec,
        "outer_layout is 0x01, 0x02 or 0x03",
        "layouts/tiled.md § Additional Descriptor Fields";
    LY_TIL_INNER: "LY-TIL-003", Spec,
        "inner_layout is 0x01, 0x02, 0x03 or 0x04",
        "layouts/tiled.md § Additional Descriptor Fields";
    LY_TIL_RESERVED: "LY-TIL-004", Spec,
        "tiled reserved bytes are zero at every level",
        "layouts/tiled.md § Additional Descriptor Fields";
    LY_TIL_DEPTH: "LY-TIL-005", Limit,
        "nested tiled descriptors are within the reader's recursion limit (8 levels, the spec's RECOMMENDED value)",
        "metadata.md § Tiled / Blocked; layouts/tiled.md § Additional Descriptor Fields (a reader MUST reject beyond its configured limit, RECOMMENDED 8)";
    LY_TIL_LOW: "LY-TIL-006", Spec,
        "every element a tiled layout addresses lies at or after the start of buffer 0 (negative outer or inner strides)",
        "layouts/tiled.md § Element Address, § Boundary Padding (the buffer MUST contain storage for full tiles); layouts/strided.md § Element Address (every valid element MUST lie within the buffer)";
    LY_TIL_INSIDE: "LY-TIL-007", Hardening,
        "within a tile the inner layout addresses only the tile's product(tile_shape) positions, so tiles do not overlap",
        "layouts/tiled.md § Description";
    LY_MOR_BITS: "LY-MOR-001", Spec,
        "every morton_bits entry is greater than 0",
        "layouts/morton.md § Additional Descriptor Fields";
    LY_MOR_SHAPE: "LY-MOR-002", Spec,
        "shape[k] <= 2^morton_bits[k] for every dimension",
        "layouts/morton.md § Dimension Size Constraints";
    LY_MOR_PADDING: "LY-MOR-003", Hardening + Data,
        "Morton positions that hold no logical element are zero",
        "docs/interpretations.md § Rules and levels";
    LY_HIL_ORDER: "LY-HIL-001", Spec,
        "hilbert_order is greater than 0",
        "layouts/hilbert.md § Validity Constraints";
    LY_HIL_RANK: "LY-HIL-002", Spec,
        "hilbert_rank equals the tensor's rank",
        "layouts/hilbert.md § Validity Constraints";
    LY_HIL_MIN_RANK: "LY-HIL-003", Spec,
        "hilbert_rank is at least 2",
        "layouts/hilbert.md § Validity Constraints";
    LY_HIL_SHAPE: "LY-HIL-004", Spec,
        "every dimension equals 2^hilbert_order",
        "layouts/hilbert.md § Validity Constraints";
    LY_HIL_SIZE: "LY-HIL-005", Spec,
        "buffer 0 holds exactly 2^(hilbert_rank * hilbert_order) elements after byte_offset",
        "layouts/hilbert.md § Buffer Size";
    LY_SPR_BYTE_OFFSET: "LY-SPR-001", Spec,
        "sparse and indirect tensors have byte_offset 0",
        "memory-layout.md § byte_offset";
    LY_SPR_STATS_NNZ: "LY-SPR-002", Spec,
        "a valid statistics nnz equals the sparse layout's nnz",
        "layouts/coo.md, csr.md, csc.md, csf.md § Interaction with Statistics Section (MUST match the descriptor's nnz)";
    LY_COO_BUFFERS: "LY-COO-001", Spec,
        "a COO tensor has 2 buffers (more only for quantization parameters)",
        "layouts/coo.md § Buffer Table";
    LY_COO_SORTED_FLAG: "LY-COO-002", Spec,
        "is_sorted is 0x00 or 0x01",
        "layouts/coo.md § Additional Descriptor Fields";
    LY_COO_RESERVED: "LY-COO-003", Spec,
        "COO reserved bytes are zero",
        "layouts/coo.md § Additional Descriptor Fields";
    LY_COO_SIZES: "LY-COO-004", Spec,
        "values hold nnz elements and indices nnz * rank uint64 entries",
        "layouts/coo.md § Buffer Size";
    LY_COO_RANGE: "LY-COO-005", Spec,
        "every stored coordinate is below its dimension's size",
        "layouts/coo.md § Validity Constraints";
    LY_COO_DUPLICATE: "LY-COO-006", Spec,
        "no two stored entries share an index tuple",
        "layouts/coo.md § Validity Constraints";
    LY_COO_ORDER: "LY-COO-007", Spec,
        "with is_sorted = 0x01 entries are in strictly increasing lexicographic order",
        "layouts/coo.md § Storage Order";
    LY_CSR_RANK: "LY-CSR-001", Spec,
        "a CSR tensor has rank 2",
        "layouts/csr.md § Description";
    LY_CSR_BUFFERS: "LY-CSR-002", Spec,
        "a CSR tensor has 3 buffers (more only for quantization parameters)",
        "layouts/csr.md § Buffer Table";
    LY_CSR_RESERVED: "LY-CSR-003", Spec,
        "CSR reserved bytes are zero",
        "layouts/csr.md § Additional Descriptor Fields";
    LY_CSR_SIZES: "LY-CSR-004", Spec,
        "values and col_indices hold nnz entries and row_ptr shape[0] + 1",
        "layouts/csr.md § Buffer Size";
    LY_CSR_ENDS: "LY-CSR-005", Spec,
        "row_ptr[0] = 0 and row_ptr[nrows] = nnz",
        "layouts/csr.md § Storage Invariants";
    LY_CSR_MONOTONE: "LY-CSR-006", Spec,
        "row_ptr is non-decreasing",
        "layouts/csr.md § Storage Invariants";
    LY_CSR_SORTED: "LY-CSR-007", Spec,
        "column indices strictly increase within each row",
        "layouts/csr.md § Storage Invariants";
    LY_CSR_RANGE: "LY-CSR-008", Spec,
        "every column index is below shape[1]",
        "layouts/csr.md § Storage Invariants";
    LY_CSC_RANK: "LY-CSC-001", Spec,
        "a CSC tensor has rank 2",
        "layouts/csc.md § Description";
    LY_CSC_BUFFERS: "LY-CSC-002", Spec,
        "a CSC tensor has 3 buffers (more only for quantization parameters)",
        "layouts/csc.md § Buffer Table";
    LY_CSC_RESERVED: "LY-CSC-003", Spec,
        "CSC reserved bytes are zero",
        "layouts/csc.md § Additional Descriptor Fields";
    LY_CSC_SIZES: "LY-CSC-004", Spec,
        "values and row_indices hold nnz entries and col_ptr shape[1] + 1",
        "layouts/csc.md § Buffer Size";
    LY_CSC_ENDS: "LY-CSC-005", Spec,
        "col_ptr[0] = 0 and col_ptr[ncols] = nnz",
        "layouts/csc.md § Storage Invariants";
    LY_CSC_MONOTONE: "LY-CSC-006", Spec,
        "col_ptr is non-decreasing",
        "layouts/csc.md § Storage Invariants";
    LY_CSC_SORTED: "LY-CSC-007", Spec,
        "row indices strictly increase within each column",
        "layouts/csc.md § Storage Invariants";
    LY_CSC_RANGE: "LY-CSC-008", Spec,
        "every row index is below shape[0]",
        "layouts/csc.md § Storage Invariants";
    LY_CSF_RANK: "LY-CSF-001", Spec,
        "a CSF tensor has rank 3 or more",
        "layouts/csf.md § Description";
    LY_CSF_BUFFERS: "LY-CSF-002", Spec,
        "a CSF tensor has 2 * rank + 1 buffers (more only for quantization parameters)",
        "layouts/csf.md § Buffer Table";
    LY_CSF_RESERVED: "LY-CSF-003", Spec,
        "CSF reserved bytes are zero",
        "layouts/csf.md § Additional Descriptor Fields";
    LY_CSF_MODE_ORDER: "LY-CSF-004", Spec,
        "mode_order is a permutation of 0..rank-1",
        "layouts/csf.md § Mode Ordering";
    LY_CSF_SIZES: "LY-CSF-005", Spec,
        "values hold nnz elements, pos_L n_(L-1) + 1 entries and crd_L n_L entries",
        "layouts/csf.md § Buffer Size";
    LY_CSF_ENDS: "LY-CSF-006", Spec,
        "every pos_L starts at 0 and the leaf level holds exactly nnz entries",
        "layouts/csf.md § Storage Invariants";
    LY_CSF_MONOTONE: "LY-CSF-007", Spec,
        "every pos_L is non-decreasing",
        "layouts/csf.md § Storage Invariants";
    LY_CSF_SORTED: "LY-CSF-008", Spec,
        "sibling coordinates strictly increase within each parent slice",
        "layouts/csf.md § Storage Invariants";
    LY_CSF_RANGE: "LY-CSF-009", Spec,
        "every crd_L entry is below shape[mode_order[L]]",
        "layouts/csf.md § Storage Invariants";
    LY_CSF_SHARD: "LY-CSF-010", Spec,
        "a CSF tensor carries no shard section",
        "layouts/csf.md § Sharding";
    LY_BP_RANK: "LY-BP-001", Spec,
        "a block-paged tensor has rank 3",
        "layouts/block-paged.md § Description";
    LY_BP_BUFFERS: "LY-BP-002", Spec,
        "a block-paged tensor has 3 buffers (more only for quantization parameters)",
        "layouts/block-paged.md § Buffer Table";
    LY_BP_PAGE_SIZE: "LY-BP-003", Spec,
        "page_size is at least 1",
        "layouts/block-paged.md § Additional Descriptor Fields";
    LY_BP_AXIS: "LY-BP-004", Spec,
        "paged_axis is 0",
        "layouts/block-paged.md § Storage Invariants";
    LY_BP_ROLE: "LY-BP-005", Spec,
        "kv_role is 0x00, 0x01 or 0x02",
        "layouts/block-paged.md § Additional Descriptor Fields";
    LY_BP_INDEX_TYPE: "LY-BP-006", Spec,
        "block_table_index_type is 0x00 or 0x01",
        "layouts/block-paged.md § Additional Descriptor Fields";
    LY_BP_RESERVED: "LY-BP-007", Spec,
        "block-paged reserved bytes are zero",
        "layouts/block-paged.md § Additional Descriptor Fields";
    LY_BP_SIZES: "LY-BP-008", Spec,
        "page_pool holds num_pages * page_size * shape[1] * shape[2] elements, seq_ptr num_seqs + 1 entries, block_table seq_ptr[num_seqs] entries",
        "layouts/block-paged.md § Buffer Table";
    LY_BP_SEQ_START: "LY-BP-009", Spec,
        "seq_ptr[0] = 0",
        "layouts/block-paged.md § Storage Invariants";
    LY_BP_MONOTONE: "LY-BP-010", Spec,
        "seq_ptr is non-decreasing",
        "layouts/block-paged.md § Storage Invariants";
    LY_BP_PAGE_RANGE: "LY-BP-011", Spec,
        "every block_table entry is below num_pages",
        "layouts/block-paged.md § Storage Invariants";
    LY_BP_SHARD: "LY-BP-012", Spec,
        "a block-paged tensor carries no shard section",
        "layouts/block-paged.md § Sharding";
    LY_BP_DEVICE: "LY-BP-013", Spec,
        "all buffers of a block-paged tensor share one device_tag and one memory_class",
        "layouts/block-paged.md § Alignment";
    LY_BP_TOKENS: "LY-BP-014", Hardening,
        "the tokens of shape[0] fit in the logical pages (shape[0] <= seq_ptr[num_seqs] * page_size)",
        "layouts/block-paged.md § Logical Shape";
    LY_BP_INDEX_WIDTH: "LY-BP-018", Hardening,
        "a pool of more than 0xFFFFFFFF pages uses a uint64 block table (block_table_index_type 0x01)",
        "layouts/block-paged.md § Additional Descriptor Fields";
    LY_BP_QUANT_SCHEME: "LY-BP-015", Spec,
        "the paged axis (0) of a block-paged tensor is quantized only with per-block affine (not NF4 or MXFP)",
        "layouts/block-paged.md § Per-scheme composition (paged-axis quantization MUST use per-block-affine)";
    LY_BP_QUANT_BLOCK: "LY-BP-016", Spec,
        "per-block affine on a block-paged tensor has axis 0 and block_size = page_size",
        "layouts/block-paged.md § Per-scheme composition";
    LY_BP_QUANT_CHANNEL: "LY-BP-017", Spec,
        "per-channel affine on a block-paged tensor does not quantize axis 0",
        "layouts/block-paged.md § Per-scheme composition";
    LY_BP_QUANT_UNDEFINED: "LY-BP-019", Hardening,
        "a block-paged tensor is not NF4- or MXFP-quantized along axis 1 or 2, a composition the spec does not define (its per-page-slot parameters are per-block affine's)",
        "layouts/block-paged.md § Per-scheme composition, § Scale-buffer size; docs/interpretations.md § Layouts";
    LY_CMP_SHARD: "LY-CMP-001", Spec,
        "every partition and overlay member carries a shard section",
        "layouts/composite.md § Members";
    LY_CMP_PARENT: "LY-CMP-002", Spec,
        "a partition or overlay member's parent_shape equals the head's shape",
        "layouts/composite.md § Per-member checks";
    LY_CMP_TYPE: "LY-CMP-003", Spec,
        "a partition or overlay member decodes to the head's type_tag",
        "layouts/composite.md § Element type across members";
    LY_CMP_BASE: "LY-CMP-004", Spec,
        "an overlay's first member is the base (member_role 0x01) spanning the whole index space",
        "layouts/composite.md § Per-member checks";
    LY_CMP_CORRECTION: "LY-CMP-005", Spec,
        "every overlay member after the first is a correction (member_role 0x00)",
        "layouts/composite.md § Per-member checks";
    LY_CMP_EMPTY_OVERLAY: "LY-CMP-006", Spec,
        "an overlay head has at least one member",
        "layouts/composite.md § Close-time checks";
    LY_CMP_OVERLAP: "LY-CMP-007", Spec,
        "partition member boxes do not overlap",
        "layouts/composite.md § Partition";
    LY_CMP_COVER: "LY-CMP-008", Spec,
        "partition member boxes cover every index of the head",
        "layouts/composite.md § Partition";
}

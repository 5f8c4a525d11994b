//! Rules of quantization descriptors (quantization.md and quantization/*.md).
//!
//! `QZ-` rules come from quantization.md (all schemes), `QT-` per-tensor affine,
//! `QC-` per-channel affine, `QB-` per-block affine, `QN-` NF4, `QM-` MXFP.
//! The checks are in `crate::validate::quant`.

crate::declare_rules! {
    QZ_TAG_INVALID: "QZ-TAG-001", Spec,
        "scheme_tag is not 0x00 or 0xFF",
        "quantization.md § Scheme Tag Space";
    QZ_TAG_RESERVED: "QZ-TAG-002", Spec,
        "scheme_tag is not in the reserved ranges 0x60-0x7F and 0x80-0xEF",
        "quantization.md § Scheme Tag Space";
    QZ_TAG_UNKNOWN: "QZ-TAG-003", Spec,
        "scheme_tag is an assigned scheme (0x01-0x05); permissive mode skips others without reading the data",
        "quantization.md § Descriptor Header";
    QZ_VERSION_NEWER: "QZ-VER-001", Spec,
        "scheme_version is not above the highest defined version (1)",
        "quantization.md § Version Compatibility";
    QZ_VERSION_ZERO: "QZ-VER-002", Spec,
        "scheme_version is not 0 (every scheme table says it MUST be 1)",
        "quantization/*.md § Binary Encoding";
    QZ_FLAGS_RESERVED: "QZ-FLG-001", Spec,
        "reserved scheme flag bits are zero (all bits for per-tensor, NF4 and MXFP; bits 1-15 for per-channel and per-block)",
        "quantization.md § Descriptor Header";
    QZ_LENGTH: "QZ-LEN-001", Spec,
        "quantization_length covers the scheme's fixed fields (16, 20 or 24 bytes)",
        "quantization.md § Descriptor Header";
    QZ_BUF_DATA: "QZ-BUF-001", Spec,
        "a quantization-parameter buffer is not the tensor data buffer",
        "quantization.md § Buffer Table Placement Rules";
    QZ_BUF_SHARED: "QZ-BUF-002", Spec,
        "a buffer shared by the scale and zero-point arrays holds both end to end ([scales | zero_points])",
        "quantization.md § Buffer Table Placement Rules";
    QZ_BUF_COUNT: "QZ-BUF-003", Spec,
        "a quantized tensor has buffer_count = the layout's own buffers (1 for dense layouts) + the number of distinct parameter buffers",
        "metadata.md § Buffer Table; quantization.md § Buffer Table Placement Rules";
    QZ_BUF_LAYOUT: "QZ-BUF-004", Spec,
        "a quantization-parameter buffer index names none of the layout's own buffers (sparse indices and pointers, block table, seq_ptr)",
        "quantization.md § Buffer Table Placement Rules";
    QZ_DEVICE: "QZ-DEV-001", Spec,
        "a quantization-parameter buffer has the data buffer's device_tag",
        "quantization.md § Buffer Table Placement Rules";
    QZ_DATA_SIZE: "QZ-DAT-001", Spec,
        "the data buffer holds every storage element (for per-block affine and NF4, shape[axis] rounded up to whole blocks)",
        "quantization.md § Partial Block Policy; element-types.md § Buffer Size Calculation";

    QT_STORAGE: "QT-TYP-001", Spec,
        "per-tensor affine storage is int8/16/32, uint8/16/32, int4, uint4, int2 or uint2",
        "quantization/per-tensor-affine.md § Valid Storage Types";
    QT_SCALE: "QT-SCL-001", Spec,
        "per-tensor scale is finite and non-zero",
        "quantization/per-tensor-affine.md § Validity Constraints";
    QT_ZERO_POINT: "QT-ZPT-001", Spec,
        "per-tensor zero_point lies in the storage type's range",
        "quantization/per-tensor-affine.md § Validity Constraints";
    QT_RESERVED: "QT-RSV-001", Spec,
        "per-tensor _reserved bytes are zero",
        "quantization/per-tensor-affine.md § Validity Constraints";
    QT_BUFFERS: "QT-BUF-001", Spec,
        "a per-tensor affine tensor has no parameter buffer (exactly one buffer when dense, the layout's own buffers otherwise)",
        "quantization/per-tensor-affine.md § Description (no additional buffer table entries); metadata.md § Buffer Table (buffer_count MUST be 1 plus the scheme's parameter buffers)";

    QC_STORAGE: "QC-TYP-001", Spec,
        "per-channel affine storage is int8/16/32, uint8/16/32, int4, uint4, int2 or uint2",
        "quantization/per-channel-affine.md § Valid Storage Types";
    QC_AXIS: "QC-AXS-001", Spec,
        "per-channel axis < rank",
        "quantization/per-channel-affine.md § Validity Constraints";
    QC_AXIS_DYNAMIC: "QC-AXS-002", Spec,
        "per-channel shape[axis] is not the dynamic dimension sentinel",
        "quantization/per-channel-affine.md § Validity Constraints";
    QC_SCALE_TYPE: "QC-STY-001", Spec,
        "per-channel scale_type_tag is 0x03 (float32) in version 1",
        "quantization/per-channel-affine.md § Validity Constraints";
    QC_RESERVED: "QC-RSV-001", Spec,
        "per-channel _reserved bytes are zero in version 1",
        "quantization/per-channel-affine.md § Validity Constraints";
    QC_SYMMETRIC: "QC-SYM-001", Spec,
        "a SYMMETRIC per-channel descriptor has zero_point_buffer_index 0xFFFFFFFF",
        "quantization/per-channel-affine.md § Binary Encoding";
    QC_INDEX: "QC-IDX-001", Spec,
        "per-channel scale (and zero-point) buffer index < buffer_count",
        "quantization/per-channel-affine.md § Referenced Buffers";
    QC_SIZE: "QC-SIZ-001", Spec,
        "an unshared per-channel scale or zero-point buffer is exactly shape[axis] * 4 bytes",
        "quantization/per-channel-affine.md § Referenced Buffers";
    QC_SCALE: "QC-SCL-001", Spec,
        "every per-channel scale is finite and non-zero",
        "quantization/per-channel-affine.md § Validity Constraints";
    QC_ZERO_POINT: "QC-ZPT-001", Spec,
        "every per-channel zero point lies in the storage type's range",
        "quantization/per-channel-affine.md § Validity Constraints";

    QB_STORAGE: "QB-TYP-001", Spec,
        "per-block affine storage is int8, uint8, int4, uint4, int2 or uint2",
        "quantization/per-block-affine.md § Valid Storage Types";
    QB_AXIS: "QB-AXS-001", Spec,
        "per-block axis < rank",
        "quantization/per-block-affine.md § Validity Constraints";
    QB_AXIS_DYNAMIC: "QB-AXS-002", Spec,
        "per-block shape[axis] is not the dynamic dimension sentinel",
        "quantization/per-block-affine.md § Block Layout";
    QB_BLOCK_SIZE: "QB-BSZ-001", Spec,
        "per-block block_size is a power of two >= 2",
        "quantization/per-block-affine.md § Validity Constraints";
    QB_BLOCK_FITS: "QB-BSZ-002", Spec,
        "per-block block_size <= shape[axis] when shape[axis] > 0",
        "quantization/per-block-affine.md § Validity Constraints";
    QB_SCALE_TYPE: "QB-STY-001", Spec,
        "per-block scale_type_tag is 0x01 (float16), 0x02 (bfloat16) or 0x03 (float32)",
        "quantization/per-block-affine.md § Validity Constraints";
    QB_RESERVED: "QB-RSV-001", Spec,
        "per-block _reserved bytes are zero",
        "quantization/per-block-affine.md § Binary Encoding";
    QB_SYMMETRIC: "QB-SYM-001", Spec,
        "a SYMMETRIC per-block descriptor has zero_point_buffer_index 0xFFFFFFFF",
        "quantization/per-block-affine.md § Binary Encoding";
    QB_INDEX: "QB-IDX-001", Spec,
        "per-block scale (and zero-point) buffer index < buffer_count",
        "quantization/per-block-affine.md § Referenced Buffers";
    QB_SIZE: "QB-SIZ-001", Spec,
        "an unshared per-block scale buffer is num_blocks * sizeof(scale type) bytes, a zero-point buffer num_blocks * 4 (block-paged: num_pages * page_size entries)",
        "quantization/per-block-affine.md § Referenced Buffers; layouts/block-paged.md § Scale-buffer size";
    QB_PADDING: "QB-PAD-001", Spec + Data,
        "padding elements of a partial final block are zero",
        "quantization/per-block-affine.md § Padding";
    QB_SCALE: "QB-SCL-001", Spec,
        "every per-block scale is finite and non-zero (0, -0, NaN and infinities rejected)",
        "quantization/per-block-affine.md § Validity Constraints";

    QN_STORAGE: "QN-TYP-001", Spec,
        "NF4 storage is uint4",
        "quantization/nf4.md § Valid Storage Types";
    QN_AXIS: "QN-AXS-001", Spec,
        "NF4 axis < rank",
        "quantization/nf4.md § Validity Constraints";
    QN_AXIS_DYNAMIC: "QN-AXS-002", Spec,
        "NF4 shape[axis] is not the dynamic dimension sentinel (blocks need its size)",
        "quantization/nf4.md § Validity Constraints; data-model.md § Dynamic Dimensions";
    QN_BLOCK_SIZE: "QN-BSZ-001", Spec,
        "NF4 block_size is a power of two >= 8",
        "quantization/nf4.md § Validity Constraints";
    QN_BLOCK_FITS: "QN-BSZ-002", Spec,
        "NF4 block_size <= shape[axis] when shape[axis] > 0",
        "quantization/nf4.md § Validity Constraints";
    QN_INDEX: "QN-IDX-001", Spec,
        "NF4 scale_buffer_index < buffer_count",
        "quantization/nf4.md § Validity Constraints";
    QN_SIZE: "QN-SIZ-001", Spec,
        "the NF4 absmax buffer is num_blocks * 4 bytes",
        "quantization/nf4.md § Referenced Buffer";
    QN_PADDING: "QN-PAD-001", Spec + Data,
        "padding elements of a partial final NF4 block are zero",
        "quantization.md § Partial Block Policy";
    QN_SCALE: "QN-SCL-001", Spec,
        "every NF4 absmax is finite and non-negative (zero allowed)",
        "quantization/nf4.md § Validity Constraints";

    QM_STORAGE: "QM-TYP-001", Spec,
        "MXFP storage is float8_e4m3, float8_e5m2, float4_e2m1, float6_e2m3, float6_e3m2, int8 or int4",
        "quantization/mxfp.md § Valid Storage Types";
    QM_AXIS: "QM-AXS-001", Spec,
        "MXFP axis < rank",
        "quantization/mxfp.md § Validity Constraints";
    QM_AXIS_DYNAMIC: "QM-AXS-002", Spec,
        "MXFP shape[axis] is not the dynamic dimension sentinel (blocks need its size)",
        "quantization/mxfp.md § Validity Constraints; data-model.md § Dynamic Dimensions";
    QM_BLOCK_SIZE: "QM-BSZ-001", Spec,
        "MXFP block_size is a power of two in [16, 2048]",
        "quantization/mxfp.md § Validity Constraints";
    QM_MULTIPLE: "QM-MUL-001", Spec,
        "MXFP shape[axis] is a positive multiple of block_size (no partial or empty blocks)",
        "quantization/mxfp.md § Validity Constraints";
    QM_INDEX: "QM-IDX-001", Spec,
        "MXFP scale_buffer_index < buffer_count",
        "quantization/mxfp.md § Validity Constraints";
    QM_SIZE: "QM-SIZ-001", Spec,
        "the MXFP scale buffer is num_blocks bytes",
        "quantization/mxfp.md § Referenced Buffer";
    QM_SCALE: "QM-SCL-001", Spec,
        "no MXFP float8_e8m0 scale is 0x00 or 0xFF",
        "quantization/mxfp.md § Referenced Buffer";
}

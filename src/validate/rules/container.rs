//! Rules of the HRRYFILE container (file-format.md) and the tensor descriptor
//! (metadata.md, element-types.md, data-model.md).

crate::declare_rules! {
    HF_FILE_SIZE: "HF-FIL-001", Spec,
        "the file holds at least a 64-byte header and a 40-byte trailer",
        "file-format.md § File Layout";
    HF_HDR_MAGIC: "HF-HDR-001", Spec,
        "the file starts with the magic HRRYFILE",
        "file-format.md § File Header";
    HF_HDR_VERSION: "HF-HDR-002", Spec,
        "container_version_major is 1 (0 is undefined, above 1 unsupported)",
        "file-format.md § File Header (a reader MUST reject a major version above its own); versioning.md § Compatibility Matrix (an older major MUST be rejected too: no migration path)";
    HF_HDR_RESERVED: "HF-HDR-003", Spec,
        "reserved header bytes 10-11 are zero",
        "file-format.md § File Header";
    HF_HDR_RESERVED_TAIL: "HF-HDR-004", Spec,
        "reserved header bytes 36-63 are zero",
        "file-format.md § File Header";
    HF_HDR_FLAGS: "HF-HDR-005", Spec,
        "reserved file flag bits 3-31 are zero (at every minor version)",
        "file-format.md § File Flags (MUST be 0, a reader MUST reject); versioning.md § Compatibility Matrix (an unknown file flag bit: MUST reject)";
    HF_HDR_ALIGN_POW2: "HF-HDR-006", Spec,
        "data_buffer_alignment is a power of two",
        "file-format.md § File Header";
    HF_HDR_ALIGN_MIN: "HF-HDR-007", Spec,
        "data_buffer_alignment is at least 4096",
        "file-format.md § File Header";
    HF_HDR_ALIGN_MAX: "HF-HDR-008", Spec,
        "data_buffer_alignment is at most 2 MiB",
        "file-format.md § File Header";
    HF_HDR_FIRST_MIN: "HF-HDR-009", Spec,
        "first_descriptor_offset is at least 64",
        "file-format.md § File Header";
    HF_HDR_FIRST_ALIGN: "HF-HDR-010", Spec,
        "first_descriptor_offset is a multiple of 8",
        "file-format.md § Descriptor Placement";
    HF_TRL_MAGIC: "HF-TRL-001", Spec,
        "the last four bytes are the trailer magic HRRY",
        "file-format.md § Trailer";
    HF_TRL_RESERVED: "HF-TRL-002", Spec,
        "reserved trailer bytes are zero",
        "file-format.md § Trailer";
    HF_TRL_INDEX_BOUNDS: "HF-TRL-003", Spec,
        "the index section lies inside the file and ends before the trailer",
        "file-format.md § Trailer";
    HF_TRL_INDEX_ALIGN: "HF-TRL-004", Spec,
        "the index section starts on an 8-byte boundary",
        "file-format.md § Index Section";
    HF_TRL_KV_ALIGN: "HF-TRL-005", Spec,
        "the KV section starts on an 8-byte boundary",
        "file-format.md § KV Metadata Section";
    HF_TRL_KV_BOUNDS: "HF-TRL-006", Spec,
        "the KV section lies between the tensor region and the index",
        "file-format.md § File Layout";
    HF_TRL_KV_FLAG: "HF-TRL-007", Spec,
        "HAS_KV_METADATA implies non-zero kv_offset and kv_length",
        "file-format.md § File Flags";
    HF_TRL_KV_PAIR: "HF-TRL-008", Spec,
        "kv_offset and kv_length are both zero or both non-zero",
        "file-format.md § Trailer";
    HF_CRC_MATCH: "HF-CRC-001", Spec,
        "with HAS_INDEX_CRC32C the CRC-32C of the index matches index_crc32c",
        "file-format.md § File Flags";
    HF_CRC_ZERO: "HF-CRC-002", Spec,
        "without HAS_INDEX_CRC32C index_crc32c is zero",
        "file-format.md § Trailer";
    HF_IDX_DECODE: "HF-IDX-001", Spec,
        "index entries decode within index_length",
        "file-format.md § Index Encoding";
    HF_IDX_NAME_EMPTY: "HF-IDX-002", Spec,
        "index names are at least one byte",
        "file-format.md § Index Encoding";
    HF_IDX_NAME_UTF8: "HF-IDX-003", Spec,
        "index names are valid UTF-8",
        "file-format.md § Index Encoding";
    HF_IDX_NAME_UNIQUE: "HF-IDX-004", Spec,
        "index names are unique (byte-exact)",
        "file-format.md § Index Encoding (names MUST be unique)";
    HF_IDX_FLAGS: "HF-IDX-005", Spec,
        "index entry flags are zero (at every minor version)",
        "file-format.md § Index Encoding (flags MUST be 0); versioning.md § Compatibility Direction (CD2: a flag bit not defined at the reader's minor MUST be rejected)";
    HF_IDX_SORTED: "HF-IDX-006", Spec,
        "with SORTED_INDEX entries are in strictly ascending name byte order",
        "file-format.md § File Flags";
    HF_IDX_COUNT: "HF-IDX-007", Spec,
        "index_entry_count equals the number of tensors in the tensor region",
        "file-format.md § Index Encoding";
    HF_IDX_TRAILING: "HF-IDX-008", Hardening,
        "no bytes follow the last index entry inside index_length",
        "docs/interpretations.md § Rules and levels";
    HF_IDX_DESC_LENGTH: "HF-IDX-009", Spec,
        "an entry's descriptor_length equals the descriptor's own",
        "file-format.md § Index Encoding";
    HF_IDX_DATA_OFFSET: "HF-IDX-010", Spec,
        "an entry's data_offset is where the tensor's first buffer starts",
        "file-format.md § Index Encoding";
    HF_IDX_DATA_LENGTH: "HF-IDX-011", Spec,
        "an entry's data_length is the buffers plus inter-buffer padding",
        "file-format.md § Index Encoding";
    HF_IDX_DESC_OFFSET: "HF-IDX-012", Spec,
        "an entry's descriptor_offset is the start of a tensor in the tensor region, named once",
        "file-format.md § Index Encoding";
    HF_KV_DECODE: "HF-KV-001", Spec,
        "KV entries decode within kv_length",
        "file-format.md § KV Section Encoding";
    HF_KV_KEY_EMPTY: "HF-KV-002", Spec,
        "KV keys are at least one byte",
        "file-format.md § KV Section Encoding";
    HF_KV_KEY_UTF8: "HF-KV-003", Spec,
        "KV keys are valid UTF-8",
        "file-format.md § KV Section Encoding";
    HF_KV_KEY_UNIQUE: "HF-KV-004", Spec,
        "KV keys are unique (byte-exact)",
        "file-format.md § KV Section Encoding";
    HF_KV_BOOL: "HF-KV-005", Spec,
        "bool values are 0x00 or 0x01",
        "file-format.md § KV Value Types";
    HF_KV_TAG_RESERVED: "HF-KV-006", Spec,
        "value tags are defined (0x00 has no encoding; 0x08-0xEF are reserved, 0xFF invalid)",
        "file-format.md § KV Value Types";
    HF_KV_ARRAY_TAG: "HF-KV-007", Spec,
        "array element tags are 0x01-0x06, an empty array's included",
        "file-format.md § KV Value Types";
    HF_KV_STRING_UTF8: "HF-KV-008", Spec,
        "string values are valid UTF-8",
        "file-format.md § KV Value Types";
    HF_KV_TAG_PRIVATE: "HF-KV-009", Spec,
        "private value tags 0xF0-0xFE do not appear in exchanged files (strict mode: a private tag is an unknown tag)",
        "file-format.md § KV Value Types; versioning.md § Compatibility Matrix (an unknown KV value tag: MUST reject), § Out of Scope (a private value from an unknown source MUST be treated as an unknown tag)";
    HF_KV_TRAILING: "HF-KV-010", Hardening,
        "no bytes follow the last KV entry inside kv_length",
        "docs/interpretations.md § Rules and levels";
    HF_TXT_CONTROL: "HF-TXT-001", Hardening,
        "tensor names and KV keys hold no control characters (U+0000-U+001F, U+007F-U+009F)",
        "docs/interpretations.md § Container";
    HF_PLC_BUFFER_ALIGN: "HF-PLC-002", Spec,
        "every data buffer starts on a data_buffer_alignment boundary",
        "file-format.md § Data Buffer Placement";
    HF_PLC_PADDING_ZERO: "HF-PLC-003", Spec + Data,
        "padding bytes are 0x00",
        "file-format.md § Alignment and Padding Summary";
    HF_PLC_HEAD_PADDING: "HF-PLC-004", Spec,
        "no data_buffer_alignment padding follows a composite head (some writers pad there; the spec forbids it)",
        "file-format.md § Composite Tensors";
    HF_PLC_REGION_END: "HF-PLC-005", Hardening,
        "the tensor region ends exactly where the KV section (or the index) begins",
        "docs/interpretations.md § Container";
    HF_PLC_INDEX_END: "HF-PLC-006", Hardening,
        "the index ends exactly where the trailer begins",
        "docs/interpretations.md § Container";
    HF_PLC_FIRST: "HF-PLC-007", Spec,
        "the first descriptor starts at first_descriptor_offset",
        "file-format.md § Descriptor Placement";
    HF_PLC_DATA_BOUNDS: "HF-PLC-008", Spec,
        "a tensor's descriptor and data lie inside the tensor region",
        "file-format.md § File Layout";
    HF_PLC_TAIL_PADDING: "HF-PLC-009", Spec,
        "after a tensor's last buffer the next item follows at the next 8-byte (or data_buffer_alignment) boundary",
        "file-format.md § Descriptor Placement (each descriptor MUST begin at a multiple of 8, at the next one after the previous tensor), § Sequential Reader (No Seek)";
    HF_PLC_KV_GAP: "HF-PLC-010", Hardening,
        "only padding to the next 8-byte boundary lies between the KV section and the index",
        "docs/interpretations.md § Container";
    HF_PLC_BUFFER_OWN_ALIGN: "HF-PLC-011", Hardening,
        "a non-empty buffer's file offset is a multiple of its handle's alignment (the alignment the writer declares it guarantees)",
        "buffer-protocol.md § Minimum Alignment";
    HF_CMP_TORN: "HF-CMP-001", Spec,
        "a composite head is followed by member_count members (no torn composite)",
        "file-format.md § Composite Tensors";
    HF_CMP_DEPTH: "HF-CMP-002", Spec,
        "composites nest at most 8 levels deep",
        "layouts/composite.md § Binding";
    HF_CMP_HEAD_INDEX: "HF-CMP-003", Spec,
        "a composite head's index entry has data_length 0 and data_offset at the end of its descriptor",
        "file-format.md § Composite Tensors (data_length 0; a writer MUST NOT pad after a head), § Writer Protocol (data_offset is the offset reached after the descriptor and its padding)";
    HF_CMP_MEMBER_SECTION: "HF-CMP-004", Spec,
        "only overlay members carry a composite member section; the head never does",
        "layouts/composite.md § Members";
    HF_LIM: "HF-LIM-001", Limit,
        "the file is within the reader's configured limits (tensors, name length, rank, KV entries, section sizes)",
        "README.md § Limits";
    TD_HDR_MAGIC: "TD-HDR-001", Spec,
        "a descriptor starts with the magic HRRY",
        "metadata.md § Fixed Header";
    TD_HDR_VERSION: "TD-HDR-002", Spec,
        "descriptor version_major is 1 (0 is undefined, above 1 unsupported)",
        "metadata.md § Fixed Header (a reader MUST reject a major version above its own); versioning.md § Compatibility Matrix (an older major MUST be rejected too: no migration path)";
    TD_HDR_LENGTH: "TD-HDR-003", Spec,
        "descriptor_length is at least 20",
        "metadata.md § Fixed Header";
    TD_HDR_FIT: "TD-HDR-004", Spec,
        "every field lies within descriptor_length",
        "metadata.md § Fixed Header";
    TD_HDR_FLAGS: "TD-HDR-005", Spec,
        "reserved descriptor flag bits 5-31 are zero (at every minor version)",
        "metadata.md § Flags (MUST be 0, a reader MUST reject); versioning.md § Compatibility Matrix (an unknown descriptor flag bit: MUST reject, at 1.x > 0 too)";
    TD_SHP_RANK: "TD-SHP-001", Spec,
        "rank is at most 64",
        "data-model.md § Rank";
    TD_SHP_DYNAMIC: "TD-SHP-002", Hardening,
        "a stored tensor has no dynamic dimension sentinel (0xFFFFFFFFFFFFFFFF)",
        "metadata.md § shape";
    TD_TYP_TAG: "TD-TYP-001", Spec,
        "type_tag is an assigned element type (not 0x00, 0x47, unassigned or 0xFF)",
        "element-types.md § Type Identifier Encoding";
    TD_TYP_E8M0: "TD-TYP-002", Spec + Data,
        "no element of a float8_e8m0 tensor is 0x00 or 0xFF (reserved codes make the descriptor invalid)",
        "element-types.md § Float8 Variants";
    TD_LAY_TAG: "TD-LAY-001", Spec,
        "layout_tag is an assigned layout",
        "memory-layout.md § Layout Taxonomy (a reader MUST reject a tag it does not recognise, unless permissive)";
    TD_LAY_SCALAR: "TD-LAY-002", Spec,
        "a rank-0 tensor is row-major",
        "data-model.md § Scalar Tensors";
    TD_LAY_EXT_ID: "TD-LAY-003", Spec,
        "an extension layout id is recognised (strict mode)",
        "metadata.md § Extension Layouts";
    TD_BUF_COUNT: "TD-BUF-001", Spec,
        "buffer_count fits the layout: 0 for a composite head, 1 for unquantized dense, at least 1 otherwise",
        "metadata.md § Buffer Table";
    TD_BUF_ALIGN: "TD-BUF-002", Spec,
        "buffer alignment is a power of two, at least 64 for a non-empty buffer (any power of two for an empty one)",
        "buffer-protocol.md § Buffer Handle, § Empty Buffers";
    TD_BUF_RESERVED: "TD-BUF-003", Spec,
        "the buffer handle's reserved byte 15 is zero",
        "buffer-protocol.md § Buffer Handle";
    TD_BUF_BYTE_OFFSET: "TD-BUF-004", Spec,
        "byte_offset is at most the size of buffer 0",
        "metadata.md § byte_offset";
    TD_BUF_SIZE: "TD-BUF-005", Spec,
        "a dense buffer holds at least what shape, type and layout need",
        "element-types.md § Buffer Size Calculation";
    TD_BUF_TAIL: "TD-BUF-006", Spec + Data,
        "the bits after the last packed sub-byte element of a contiguous tensor, to the end of its byte (of its 3-byte group for 6-bit types), are zero",
        "element-types.md § Sub-Byte Integer Types, § 6-bit packing, § Boolean Type";
    TD_BUF_SYNC: "TD-BUF-007", Spec,
        "sync_mode is 0x00, 0x01 or 0x02",
        "buffer-protocol.md § sync_mode Values";
    TD_BUF_SYNC_CPU: "TD-BUF-008", Spec,
        "a CPU buffer (device_tag 0x00) has sync_mode 0x00 (SYNC_PRODUCER_SYNCED)",
        "buffer-protocol.md § Producer Requirement";
    TD_BUF_MEMORY_CLASS: "TD-BUF-009", Spec,
        "memory_class is not reserved (0x04-0xEF, 0xFF)",
        "buffer-protocol.md § Memory Class Values";
    TD_BUF_PAIR: "TD-BUF-010", Spec,
        "(device_tag, memory_class) is a pair the per-device validity table lists",
        "buffer-protocol.md § Per-Device Validity";
    TD_BUF_DEVICE: "TD-BUF-011", Spec,
        "device_tag is not reserved (0x09-0xEF, 0xFF)",
        "buffer-protocol.md § Device Tags";
    TD_BUF_DEVICE_PRIVATE: "TD-BUF-012", Hardening,
        "no buffer uses a private device_tag (0xF0-0xFE), which is not exchanged without agreement",
        "buffer-protocol.md § Device Tags";
    TD_BUF_COLOCATION: "TD-BUF-013", Spec,
        "all buffers of a descriptor share device_tag and memory_class",
        "buffer-protocol.md § Device Colocation";
    TD_BUF_OVERSIZED: "TD-BUF-014", Hardening,
        "an unquantized dense buffer holds no more than shape, type and layout need (byte_offset plus the packed elements; strided: up to the highest element the strides reach)",
        "element-types.md § Buffer Size Calculation";
    TD_QNT_HEADER: "TD-QNT-001", Spec,
        "a quantization section holds at least its 4-byte scheme header",
        "quantization.md § Descriptor Header";
    TD_SHD_BOUNDS: "TD-SHD-001", Spec,
        "shard_offset[k] + shape[k] <= parent_shape[k] for every dimension",
        "metadata.md § Shard Section";
    TD_SHD_DYNAMIC: "TD-SHD-002", Spec,
        "no parent_shape or shard_offset entry is the dynamic dimension sentinel 2^64-1",
        "data-model.md § Dynamic Dimensions";
    TD_STA_MASK: "TD-STA-001", Spec,
        "statistics computed_mask reserved bits 6-31 are zero",
        "metadata.md § computed_mask";
    TD_STA_RESERVED: "TD-STA-002", Spec,
        "statistics reserved fields are zero",
        "metadata.md § Field Encoding";
    TD_STA_SPARSITY: "TD-STA-003", Spec,
        "a valid sparsity_ratio lies in [0, 1]",
        "metadata.md § Field Encoding";
    TD_STA_STDDEV: "TD-STA-004", Spec,
        "a valid value_stddev is at least 0",
        "metadata.md § Field Encoding";
    TD_STA_NM: "TD-STA-005", Spec,
        "a valid N:M pattern has nm_n <= nm_m",
        "metadata.md § Field Encoding";
    TD_STA_BOOL: "TD-STA-006", Spec,
        "valid has_nan and has_inf are 0 or 1",
        "metadata.md § Field Encoding";
    TD_EXT_FLAG: "TD-EXT-001", Spec,
        "HAS_EXTENSION_TYPE is set if and only if type_tag is 0xF0-0xFE",
        "metadata.md § Flags";
    TD_EXT_WIDTH: "TD-EXT-002", Spec,
        "an extension type's bit_width is greater than 0",
        "metadata.md § Extension Type Section";
    TD_EXT_PACKING: "TD-EXT-003", Spec,
        "an extension type is whole-byte with packing 1, or 1/2/4 bits with packing 8/bit_width",
        "metadata.md § Extension Type Section";
    TD_EXT_KIND: "TD-EXT-004", Spec,
        "an extension type's float/integer fields are consistent (integers carry no float fields, floats are not signed, sign_bits 0 or 1)",
        "metadata.md § Extension Type Section";
    TD_EXT_RESERVED: "TD-EXT-005", Spec,
        "extension type reserved bytes are zero",
        "metadata.md § Extension Type Section";
    TD_MEM_ROLE: "TD-MEM-001", Spec,
        "member_role is 0x00 (correction) or 0x01 (base)",
        "metadata.md § Composite Member Section";
    TD_MEM_RESERVED: "TD-MEM-002", Spec,
        "composite member reserved bytes are zero",
        "metadata.md § Composite Member Section";
    TD_CMP_RULE: "TD-CMP-001", Spec,
        "composition_rule is 1, 2 or 3 (private 0xF0-0xFE only in permissive mode)",
        "layouts/composite.md § Head Layout-Specific Fields";
    TD_CMP_COMBINE: "TD-CMP-002", Spec,
        "combine_op is 1 or 2 for overlay and 0 otherwise",
        "layouts/composite.md § Head Layout-Specific Fields";
    TD_CMP_RESERVED: "TD-CMP-003", Spec,
        "composite head reserved bytes are zero",
        "layouts/composite.md § Head Layout-Specific Fields";
    TD_CMP_OPEN: "TD-CMP-004", Spec,
        "member_count is not 0xFFFFFFFF (open composite)",
        "layouts/composite.md § Head Layout-Specific Fields";
    TD_CMP_BYTE_OFFSET: "TD-CMP-005", Spec,
        "a composite head's byte_offset is 0",
        "metadata.md § Composite / Virtual";
    TD_CMP_QUANTIZATION: "TD-CMP-006", Spec,
        "a composite head does not set HAS_QUANTIZATION",
        "layouts/composite.md § Head Descriptor";
}

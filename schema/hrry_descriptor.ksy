meta:
  id: hrry_descriptor
  title: Hurray tensor descriptor
  license: MIT OR Apache-2.0
  ks-version: '0.10'
  endian: le
doc: |
  One Hurray tensor descriptor (metadata.md "Overall Descriptor Structure"): the
  20-byte fixed header, then the body (shape, byte_offset, layout-specific fields,
  buffer table and the optional sections chosen by `flags`), then any bytes inside
  `descriptor_length` that this version does not define.

  The body is read from a substream of exactly `descriptor_length - 20` bytes, so
  a parser never reads past the descriptor (metadata.md "Fixed Header": "A reader
  MUST NOT read beyond descriptor_length bytes") and bytes after the last known
  field (minor-version growth) land in `body.trailing` instead of failing.

  The same encoding is used inside HRRYFILE tensor regions (hrryfile.ksy) and in
  the streaming interchange format. This description says where the bytes are; it
  does not decide whether their values are allowed (`hrry validate` does).
doc-ref: metadata.md "Overall Descriptor Structure"
seq:
  - id: magic
    contents: HRRY
    doc: metadata.md "Fixed Header", offset 0 (`magic`, ASCII "HRRY").
  - id: version_major
    type: u1
    doc: metadata.md "Fixed Header", offset 4 (`version_major`; 1 in this version).
  - id: version_minor
    type: u1
    doc: metadata.md "Fixed Header", offset 5 (`version_minor`; 0 in this version).
  - id: descriptor_length
    type: u4
    doc: |
      metadata.md "Fixed Header", offset 6 (`descriptor_length`): total length of
      the descriptor in bytes, this 20-byte header included.
  - id: flags
    type: u4
    doc: |
      metadata.md "Fixed Header", offset 10 (`flags`); bits in metadata.md "Flags"
      (see the `has_*` instances).
  - id: type_tag
    type: u1
    doc: |
      metadata.md "Fixed Header", offset 14 (`type_tag`): element type tag
      (element-types.md). Named by the `element_type` instance.
  - id: layout_tag
    type: u1
    valid:
      expr: (_ >= 0x01 and _ <= 0x0b) or _ == 0x40 or (_ >= 0xf0 and _ <= 0xfe)
    doc: |
      metadata.md "Fixed Header", offset 15 (`layout_tag`): memory layout tag
      (memory-layout.md "Named Layout Tags"). Named by the `layout` instance. The
      fields of an unassigned tag are unknown, so the parse stops there.
  - id: rank
    type: u4
    doc: metadata.md "Fixed Header", offset 16 (`rank`); 0 for a scalar.
  - id: body
    size: descriptor_length - 20
    type: descriptor_body(rank, layout_tag, flags)
    doc: |
      Everything after the fixed header, bounded by `descriptor_length`
      (metadata.md "Overall Descriptor Structure").
instances:
  has_quantization:
    value: (flags & 0x01) != 0
    doc: metadata.md "Flags", bit 0 `HAS_QUANTIZATION`.
  has_shard:
    value: (flags & 0x02) != 0
    doc: metadata.md "Flags", bit 1 `HAS_SHARD`.
  has_extension_type:
    value: (flags & 0x04) != 0
    doc: metadata.md "Flags", bit 2 `HAS_EXTENSION_TYPE`.
  has_statistics:
    value: (flags & 0x08) != 0
    doc: metadata.md "Flags", bit 3 `HAS_STATISTICS`.
  has_composite_member:
    value: (flags & 0x10) != 0
    doc: metadata.md "Flags", bit 4 `HAS_COMPOSITE_MEMBER`.
  reserved_flags:
    value: flags & 0xffffffe0
    doc: metadata.md "Flags", bits 5-31 (reserved, must be 0).
  element_type:
    value: type_tag
    enum: element_type
    doc: |
      `type_tag` by name (element-types.md "Type Identifier Encoding" and "Type Properties Summary"). Tags 0xF0-0xFE
      are implementation-private extension types (see `is_extension_type`).
  is_extension_type:
    value: type_tag >= 0xf0 and type_tag <= 0xfe
    doc: element-types.md, tags 0xF0-0xFE (described by the extension type section).
  layout:
    value: layout_tag
    enum: layout
    doc: |
      `layout_tag` by name (memory-layout.md "Named Layout Tags"). Tags
      0xF0-0xFE are implementation-private extension layouts.
types:
  descriptor_body:
    doc: |
      metadata.md "Overall Descriptor Structure": shape, byte_offset,
      layout-specific fields, buffer table, then the optional sections in the
      order Quantization, Shard, Statistics, Extension Type, Composite Member.
    params:
      - id: rank
        type: u4
      - id: layout_tag
        type: u1
      - id: flags
        type: u4
    seq:
      - id: shape
        type: u8
        repeat: expr
        repeat-expr: rank
        doc: |
          metadata.md "Core Variable Fields" § shape: `uint64[rank]`, dimension 0
          first; 0xFFFFFFFFFFFFFFFF is the dynamic dimension sentinel.
      - id: byte_offset
        type: u8
        doc: |
          metadata.md "Core Variable Fields" § byte_offset: offset of element
          [0, ..., 0] from the start of buffer 0.
      - id: layout_fields
        doc: |
          metadata.md "Layout-Specific Fields": chosen by `layout_tag`. Row-major
          (0x01) and column-major (0x02) have no fields. An unassigned tag has no
          known fields: the field is then absent, and what follows cannot be
          located (a reader rejects the descriptor).
        type:
          switch-on: layout_tag
          cases:
            0x01: implicit_layout_fields
            0x02: implicit_layout_fields
            0x03: strided_fields(rank)
            0x04: tiled_fields(rank)
            0x05: morton_fields(rank)
            0x06: coo_fields
            0x07: compressed_fields
            0x08: compressed_fields
            0x09: csf_fields(rank)
            0x0a: block_paged_fields
            0x0b: composite_fields
            0x40: hilbert_fields
            0xf0: extension_layout_fields
            0xf1: extension_layout_fields
            0xf2: extension_layout_fields
            0xf3: extension_layout_fields
            0xf4: extension_layout_fields
            0xf5: extension_layout_fields
            0xf6: extension_layout_fields
            0xf7: extension_layout_fields
            0xf8: extension_layout_fields
            0xf9: extension_layout_fields
            0xfa: extension_layout_fields
            0xfb: extension_layout_fields
            0xfc: extension_layout_fields
            0xfd: extension_layout_fields
            0xfe: extension_layout_fields
      - id: buffer_count
        type: u1
        doc: metadata.md "Buffer Table" (`buffer_count`).
      - id: buffers
        type: buffer_handle
        repeat: expr
        repeat-expr: buffer_count
        doc: 'metadata.md "Buffer Table": `buffer_count` 16-byte buffer handles.'
      - id: quantization
        type: quantization_section
        if: (flags & 0x01) != 0
        doc: metadata.md "Quantization Section"; present when `HAS_QUANTIZATION`.
      - id: shard
        type: shard_section(rank)
        if: (flags & 0x02) != 0
        doc: metadata.md "Shard Section"; present when `HAS_SHARD`.
      - id: statistics
        type: statistics_section
        if: (flags & 0x08) != 0
        doc: metadata.md "Statistics Section"; present when `HAS_STATISTICS`.
      - id: extension_type
        type: extension_type_section
        if: (flags & 0x04) != 0
        doc: metadata.md "Extension Type Section"; present when `HAS_EXTENSION_TYPE`.
      - id: composite_member
        type: composite_member_section
        if: (flags & 0x10) != 0
        doc: |
          metadata.md "Composite Member Section"; present when
          `HAS_COMPOSITE_MEMBER`. It comes after the Extension Type section.
      - id: trailing
        size-eos: true
        doc: |
          Bytes inside `descriptor_length` after the last field this version
          defines: skipped, not an error (metadata.md "Version Compatibility";
          docs/interpretations.md § Descriptor).

  implicit_layout_fields:
    doc: |
      metadata.md "Layout-Specific Fields" § Row-Major (0x01) and Column-Major
      (0x02): no fields; strides are implicit (memory-layout.md).
    seq: []

  strided_fields:
    doc: metadata.md "Layout-Specific Fields" § Strided (0x03); layouts/strided.md.
    params:
      - id: rank
        type: u4
    seq:
      - id: strides
        type: s8
        repeat: expr
        repeat-expr: rank
        doc: metadata.md § Strided (`strides`, `int64[rank]`), in logical elements.

  tiled_fields:
    doc: |
      metadata.md "Layout-Specific Fields" § Tiled / Blocked (0x04);
      layouts/tiled.md "Additional Descriptor Fields". When `inner_layout` is 0x04
      the next tiled level follows where `inner_strides` would be
      (docs/interpretations.md § Layouts). Readers must bound the nesting
      depth (the spec recommends 8 levels; hrry's parser stops at 64).
    params:
      - id: rank
        type: u4
    seq:
      - id: tile_shape
        type: u8
        repeat: expr
        repeat-expr: rank
        doc: layouts/tiled.md (`tile_shape`, `uint64[rank]`), every value > 0.
      - id: outer_layout
        type: u1
        doc: 'layouts/tiled.md (`outer_layout`): tile-grid order, 0x01, 0x02 or 0x03.'
      - id: inner_layout
        type: u1
        doc: |
          layouts/tiled.md (`inner_layout`): order within a tile, 0x01-0x03, or
          0x04 for recursive tiling.
      - id: reserved
        size: 2
        doc: layouts/tiled.md (`_reserved`, `uint8[2]`), must be 0.
      - id: outer_strides
        type: s8
        repeat: expr
        repeat-expr: rank
        if: outer_layout == 0x03
        doc: layouts/tiled.md (`outer_strides`, `int64[rank]`), in tiles; when `outer_layout` is 0x03.
      - id: inner_strides
        type: s8
        repeat: expr
        repeat-expr: rank
        if: inner_layout == 0x03
        doc: layouts/tiled.md (`inner_strides`, `int64[rank]`), in elements; when `inner_layout` is 0x03.
      - id: inner_tiled
        type: tiled_fields(rank)
        if: inner_layout == 0x04
        doc: 'layouts/tiled.md "Recursive Tiling": the nested level, when `inner_layout` is 0x04.'

  morton_fields:
    doc: metadata.md "Layout-Specific Fields" § Morton (0x05); layouts/morton.md.
    params:
      - id: rank
        type: u4
    seq:
      - id: morton_bits
        type: u4
        repeat: expr
        repeat-expr: rank
        doc: metadata.md § Morton (`morton_bits`, `uint32[rank]`), bits per dimension.

  coo_fields:
    doc: metadata.md "Layout-Specific Fields" § COO (0x06); layouts/coo.md "Additional Descriptor Fields".
    seq:
      - id: nnz
        type: u8
        doc: metadata.md § COO (`nnz`), stored elements.
      - id: is_sorted
        type: u1
        doc: metadata.md § COO (`is_sorted`), 1 when in lexicographic index order.
      - id: reserved
        size: 7
        doc: metadata.md § COO (`_reserved`, `uint8[7]`), must be 0.

  compressed_fields:
    doc: |
      metadata.md "Layout-Specific Fields" § CSR (0x07) and § CSC (0x08);
      layouts/csr.md and layouts/csc.md "Additional Descriptor Fields".
    seq:
      - id: nnz
        type: u8
        doc: metadata.md § CSR / § CSC (`nnz`), stored elements.
      - id: reserved
        size: 8
        doc: metadata.md § CSR / § CSC (`_reserved`, `uint8[8]`), must be 0.

  csf_fields:
    doc: layouts/csf.md "Additional Descriptor Fields" (CSF, 0x09).
    params:
      - id: rank
        type: u4
    seq:
      - id: nnz
        type: u8
        doc: layouts/csf.md (`nnz`), stored elements.
      - id: mode_order
        type: u4
        repeat: expr
        repeat-expr: rank
        doc: layouts/csf.md (`mode_order`, `uint32[rank]`), logical dimension of each level.
      - id: reserved
        size: 8
        doc: layouts/csf.md (`_reserved`, `uint8[8]`), must be 0.

  block_paged_fields:
    doc: layouts/block-paged.md "Additional Descriptor Fields" (Block-Paged, 0x0A); 32 bytes.
    seq:
      - id: page_size
        type: u4
        doc: layouts/block-paged.md (`page_size`), tokens per page.
      - id: num_pages
        type: u8
        doc: layouts/block-paged.md (`num_pages`), physical pages in the pool.
      - id: paged_axis
        type: u4
        doc: layouts/block-paged.md (`paged_axis`), 0 in this version.
      - id: num_seqs
        type: u4
        doc: layouts/block-paged.md (`num_seqs`), sequences in the batch.
      - id: kv_role
        type: u1
        doc: layouts/block-paged.md (`kv_role`), 0 key, 1 value, 2 fused / generic.
      - id: layer_index
        type: u4
        doc: layouts/block-paged.md (`layer_index`), 0xFFFFFFFF when not layer-scoped.
      - id: block_table_index_type
        type: u1
        doc: layouts/block-paged.md (`block_table_index_type`), 0 uint32, 1 uint64.
      - id: reserved
        size: 6
        doc: layouts/block-paged.md (`_reserved`, `uint8[6]`), must be 0.

  composite_fields:
    doc: metadata.md "Layout-Specific Fields" § Composite / Virtual (0x0B); layouts/composite.md.
    seq:
      - id: composition_rule
        type: u1
        doc: metadata.md § Composite (`composition_rule`), 1 partition, 2 overlay, 3 group.
      - id: combine_op
        type: u1
        doc: metadata.md § Composite (`combine_op`), overlay only; 1 replace, 2 add.
      - id: reserved
        size: 2
        doc: metadata.md § Composite (`_reserved`, `uint8[2]`), must be 0.
      - id: member_count
        type: u4
        doc: metadata.md § Composite (`member_count`), members that follow the head.

  hilbert_fields:
    doc: metadata.md "Layout-Specific Fields" § Hilbert Curve (0x40); layouts/hilbert.md.
    seq:
      - id: hilbert_order
        type: u4
        doc: metadata.md § Hilbert Curve (`hilbert_order`), > 0.
      - id: hilbert_rank
        type: u4
        doc: metadata.md § Hilbert Curve (`hilbert_rank`), equal to `rank`, >= 2.

  extension_layout_fields:
    doc: metadata.md "Layout-Specific Fields" § Extension Layouts (0xF0-0xFE).
    seq:
      - id: extension_layout_id
        type: u8
        doc: metadata.md § Extension Layouts (`extension_layout_id`).
      - id: extension_data_length
        type: u4
        doc: metadata.md § Extension Layouts (`extension_data_length`).
      - id: extension_data
        size: extension_data_length
        doc: metadata.md § Extension Layouts (`extension_data`), opaque.

  buffer_handle:
    doc: 'buffer-protocol.md "Buffer Handle" (normative; metadata.md "Buffer Table" shows an older table): one 16-byte buffer handle.'
    seq:
      - id: byte_size
        type: u8
        doc: buffer-protocol.md "Buffer Handle", offset 0 (`byte_size`), 0 = an empty buffer.
      - id: alignment
        type: u4
        doc: buffer-protocol.md "Buffer Handle", offset 8 (`alignment`), a power of two, >= 64 unless the buffer is empty.
      - id: device_tag
        type: u1
        doc: buffer-protocol.md "Buffer Handle", offset 12 (`device_tag`), 0 = CPU; see "Device Tags".
      - id: sync_mode
        type: u1
        doc: buffer-protocol.md "Buffer Handle", offset 13 (`sync_mode`), 0 producer-synced, 1 event, 2 consumer stream.
      - id: memory_class
        type: u1
        doc: buffer-protocol.md "Buffer Handle", offset 14 (`memory_class`), 0 standard, 1 host-pinned, 2 unified, 3 peer.
      - id: reserved
        size: 1
        doc: buffer-protocol.md "Buffer Handle", offset 15 (`_reserved`), must be 0.

  quantization_section:
    doc: 'metadata.md "Quantization Section": a length, then the quantization descriptor.'
    seq:
      - id: quantization_length
        type: u4
        doc: metadata.md "Quantization Section" (`quantization_length`).
      - id: quantization_descriptor
        size: quantization_length
        type: quantization_descriptor
        doc: metadata.md "Quantization Section" (`quantization_descriptor`), quantization.md.

  quantization_descriptor:
    doc: |
      quantization.md "Descriptor Header" (4 bytes), then the fields of the scheme
      named by `scheme_tag` (quantization/*.md "Binary Encoding"), then any writer
      padding up to `quantization_length`. Private schemes (0xF0-0xFE) and unknown
      tags have no decoded fields; their bytes are in `padding`.
    seq:
      - id: scheme_tag
        type: u1
        enum: quantization_scheme
        doc: quantization.md "Descriptor Header", offset 0 (`scheme_tag`).
      - id: scheme_version
        type: u1
        doc: quantization.md "Descriptor Header", offset 1 (`scheme_version`), 1 for every assigned scheme.
      - id: flags
        type: u2
        doc: quantization.md "Descriptor Header", offset 2 (`flags`), scheme-specific.
      - id: scheme_fields
        doc: The scheme-specific fields after the header (quantization.md "Assigned Scheme Tags").
        type:
          switch-on: scheme_tag
          cases:
            quantization_scheme::per_tensor_affine: per_tensor_affine
            quantization_scheme::per_channel_affine: per_channel_affine
            quantization_scheme::per_block_affine: per_block_affine
            quantization_scheme::nf4: nf4
            quantization_scheme::mxfp: mxfp
      - id: padding
        size-eos: true
        doc: |
          Bytes after the scheme's fixed fields inside `quantization_length`
          (writer padding, quantization.md "Descriptor Header"; docs/interpretations.md
          § Quantization).
    instances:
      descriptor_bytes:
        pos: 0
        size-eos: true
        doc: The whole quantization descriptor as raw bytes (what `hrry inspect --json` prints as hex).
      is_symmetric:
        value: (flags & 0x0001) != 0
        doc: |
          Flags bit 0 `SYMMETRIC` of per-channel and per-block affine
          (quantization/per-channel-affine.md and per-block-affine.md "Flags bits").

  per_tensor_affine:
    doc: quantization/per-tensor-affine.md "Binary Encoding" (scheme 0x01, 16 bytes); offsets from the descriptor start.
    seq:
      - id: scale
        type: f4
        doc: per-tensor-affine.md, offset 4 (`scale`, float32).
      - id: zero_point
        type: s4
        doc: per-tensor-affine.md, offset 8 (`zero_point`, int32).
      - id: reserved
        size: 4
        doc: per-tensor-affine.md, offset 12 (`_reserved`, `uint8[4]`), must be 0.

  per_channel_affine:
    doc: quantization/per-channel-affine.md "Binary Encoding" (scheme 0x02, 20 bytes); offsets from the descriptor start.
    seq:
      - id: axis
        type: u4
        doc: per-channel-affine.md, offset 4 (`axis`).
      - id: scale_buffer_index
        type: u4
        doc: per-channel-affine.md, offset 8 (`scale_buffer_index`).
      - id: zero_point_buffer_index
        type: u4
        doc: per-channel-affine.md, offset 12 (`zero_point_buffer_index`), 0xFFFFFFFF when symmetric.
      - id: scale_type_tag
        type: u1
        doc: per-channel-affine.md, offset 16 (`scale_type_tag`), 0x03 (float32) in version 1.
      - id: reserved
        size: 3
        doc: per-channel-affine.md, offset 17 (`_reserved`, `uint8[3]`), must be 0.

  per_block_affine:
    doc: quantization/per-block-affine.md "Binary Encoding" (scheme 0x03, 24 bytes); offsets from the descriptor start.
    seq:
      - id: axis
        type: u4
        doc: per-block-affine.md, offset 4 (`axis`).
      - id: block_size
        type: u4
        doc: per-block-affine.md, offset 8 (`block_size`), logical elements per block.
      - id: scale_buffer_index
        type: u4
        doc: per-block-affine.md, offset 12 (`scale_buffer_index`).
      - id: zero_point_buffer_index
        type: u4
        doc: per-block-affine.md, offset 16 (`zero_point_buffer_index`), 0xFFFFFFFF when symmetric.
      - id: scale_type_tag
        type: u1
        doc: per-block-affine.md, offset 20 (`scale_type_tag`), 0x01 float16, 0x02 bfloat16, 0x03 float32.
      - id: reserved
        size: 3
        doc: per-block-affine.md, offset 21 (`_reserved`, `uint8[3]`), must be 0.

  nf4:
    doc: quantization/nf4.md "Binary Encoding" (scheme 0x04, 16 bytes); offsets from the descriptor start.
    seq:
      - id: axis
        type: u4
        doc: nf4.md, offset 4 (`axis`).
      - id: block_size
        type: u4
        doc: nf4.md, offset 8 (`block_size`).
      - id: scale_buffer_index
        type: u4
        doc: nf4.md, offset 12 (`scale_buffer_index`), the float32 `absmax` scales.

  mxfp:
    doc: quantization/mxfp.md "Binary Encoding" (scheme 0x05, 16 bytes); offsets from the descriptor start.
    seq:
      - id: axis
        type: u4
        doc: mxfp.md, offset 4 (`axis`).
      - id: block_size
        type: u4
        doc: mxfp.md, offset 8 (`block_size`), a power of two in [16, 2048].
      - id: scale_buffer_index
        type: u4
        doc: mxfp.md, offset 12 (`scale_buffer_index`), the float8_e8m0 scales.

  shard_section:
    doc: metadata.md "Shard Section".
    params:
      - id: rank
        type: u4
    seq:
      - id: parent_shape
        type: u8
        repeat: expr
        repeat-expr: rank
        doc: metadata.md "Shard Section" (`parent_shape`, `uint64[rank]`).
      - id: shard_offset
        type: u8
        repeat: expr
        repeat-expr: rank
        doc: metadata.md "Shard Section" (`shard_offset`, `uint64[rank]`).

  statistics_section:
    doc: metadata.md "Statistics Section" § Field Encoding (72 bytes).
    seq:
      - id: computed_mask
        type: u4
        doc: metadata.md "Statistics Section" § computed_mask, offset 0; bits 6-31 reserved.
      - id: reserved
        type: u4
        doc: metadata.md § Field Encoding, offset 4 (`_reserved`), must be 0.
      - id: nnz
        type: u8
        doc: metadata.md § Field Encoding, offset 8 (`nnz`).
      - id: sparsity_ratio
        type: f8
        doc: metadata.md § Field Encoding, offset 16 (`sparsity_ratio`).
      - id: value_min
        type: f8
        doc: metadata.md § Field Encoding, offset 24 (`value_min`).
      - id: value_max
        type: f8
        doc: metadata.md § Field Encoding, offset 32 (`value_max`).
      - id: value_abs_max
        type: f8
        doc: metadata.md § Field Encoding, offset 40 (`value_abs_max`).
      - id: value_mean
        type: f8
        doc: metadata.md § Field Encoding, offset 48 (`value_mean`).
      - id: value_stddev
        type: f8
        doc: metadata.md § Field Encoding, offset 56 (`value_stddev`).
      - id: nm_n
        type: u1
        doc: metadata.md § Field Encoding, offset 64 (`nm_n`).
      - id: nm_m
        type: u1
        doc: metadata.md § Field Encoding, offset 65 (`nm_m`).
      - id: has_nan
        type: u1
        doc: metadata.md § Field Encoding, offset 66 (`has_nan`).
      - id: has_inf
        type: u1
        doc: metadata.md § Field Encoding, offset 67 (`has_inf`).
      - id: reserved2
        size: 4
        doc: metadata.md § Field Encoding, offset 68 (`_reserved2`, `uint8[4]`), must be 0.

  extension_type_section:
    doc: metadata.md "Extension Type Section" (20 bytes).
    seq:
      - id: bit_width
        type: u4
        doc: metadata.md "Extension Type Section", offset 0 (`bit_width`).
      - id: packing_factor
        type: u1
        doc: metadata.md "Extension Type Section", offset 4 (`packing_factor`).
      - id: is_float
        type: u1
        doc: metadata.md "Extension Type Section", offset 5 (`is_float`).
      - id: is_signed
        type: u1
        doc: metadata.md "Extension Type Section", offset 6 (`is_signed`).
      - id: sign_bits
        type: u1
        doc: metadata.md "Extension Type Section", offset 7 (`sign_bits`).
      - id: exponent_bits
        type: u1
        doc: metadata.md "Extension Type Section", offset 8 (`exponent_bits`).
      - id: mantissa_bits
        type: u1
        doc: metadata.md "Extension Type Section", offset 9 (`mantissa_bits`).
      - id: reserved
        size: 2
        doc: metadata.md "Extension Type Section", offset 10 (`_reserved`, `uint8[2]`), must be 0.
      - id: exponent_bias
        type: u4
        doc: metadata.md "Extension Type Section", offset 12 (`exponent_bias`).
      - id: has_nan
        type: u1
        doc: metadata.md "Extension Type Section", offset 16 (`has_nan`).
      - id: has_inf
        type: u1
        doc: metadata.md "Extension Type Section", offset 17 (`has_inf`).
      - id: reserved2
        size: 2
        doc: metadata.md "Extension Type Section", offset 18 (`_reserved2`, `uint8[2]`), must be 0.

  composite_member_section:
    doc: metadata.md "Composite Member Section" (16 bytes).
    seq:
      - id: member_role
        type: u1
        doc: metadata.md "Composite Member Section", offset 0 (`member_role`), 0 correction, 1 base.
      - id: reserved
        size: 15
        doc: metadata.md "Composite Member Section", offset 1 (`_reserved`, `uint8[15]`), must be 0.

enums:
  element_type:
    0x01: float16
    0x02: bfloat16
    0x03: float32
    0x04: float64
    0x10: int8
    0x11: uint8
    0x12: int16
    0x13: uint16
    0x14: int32
    0x15: uint32
    0x16: int64
    0x17: uint64
    0x20: bool
    0x40: float8_e4m3
    0x41: float8_e5m2
    0x42: float8_e8m0
    0x43: float4_e2m1
    0x44: float6_e2m3
    0x45: float6_e3m2
    0x46: float128
    0x48: int4
    0x49: uint4
    0x4a: int2
    0x4b: uint2
    0x50: complex64
    0x51: complex128
  layout:
    0x01: row_major
    0x02: column_major
    0x03: strided
    0x04: tiled
    0x05: morton
    0x06: coo
    0x07: csr
    0x08: csc
    0x09: csf
    0x0a: block_paged
    0x0b: composite
    0x40: hilbert
  quantization_scheme:
    0x01: per_tensor_affine
    0x02: per_channel_affine
    0x03: per_block_affine
    0x04: nf4
    0x05: mxfp

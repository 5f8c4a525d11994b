meta:
  id: holo
  title: hologram compiled-model archive (.holo)
  file-extension: holo
  license: MIT OR Apache-2.0
  ks-version: '0.10'
  endian: le
doc: |
  A `.holo` compiled-model archive: a 10-byte header, a table of 24-byte section
  entries, the section payloads, and a 32-byte footer holding the BLAKE3 hash of
  every byte before it. Facts from docs/holo.md ("Archive Format (.holo)", "Binary
  layout", "Sections - SectionKind") and docs/holo.md; the
  payload encodings are those of the public hologram-archive crate's writer
  (`writer.rs`, `constant_codec.rs`), as declared in hrry's `src/schema/holo.rs`.

  Sections are found through the table, in any order and with gaps; a payload is
  decoded by its `kind`. Kinds without a defined payload here (KernelCalls,
  DTypeRegistry, Certificates, Trace, Metadata, WarmStart, and the version-3
  AppManifest and ContentBlob) are opaque bytes. The footer's hash cannot be
  checked by a declarative parser: a reader computes BLAKE3 over
  `[0, file_size - 32)` and compares it with `footer.fingerprint`.
doc-ref: docs/holo.md "Binary layout"; docs/holo.md
seq:
  - id: header
    type: header
    doc: docs/holo.md "Binary layout" - Header (10 bytes at offset 0).
  - id: sections
    type: section_entry
    repeat: expr
    repeat-expr: header.section_count
    doc: docs/holo.md "Binary layout" - Section table, `section_count` SectionRef entries.
instances:
  footer:
    pos: _io.size - 32
    type: footer
    doc: docs/holo.md "Binary layout" - Footer (the last 32 bytes).
types:
  header:
    doc: 'docs/holo.md "Binary layout": magic, format_version, flags, section_count (10 bytes).'
    seq:
      - id: magic
        contents: HOLO
        doc: Header offset 0 (`magic`, ASCII "HOLO").
      - id: format_version
        type: u2
        doc: Header offset 4 (`format_version`), 2 (the archive description); 3 adds kinds 15-16 (docs/interpretations.md § .holo).
      - id: flags
        type: u2
        doc: Header offset 6 (`flags`); no bit has a defined meaning (docs/interpretations.md § .holo).
      - id: section_count
        type: u2
        doc: Header offset 8 (`section_count`), entries in the section table.

  section_entry:
    doc: 'docs/holo.md "Binary layout" - one SectionRef (24 bytes): kind, padding, offset, length.'
    seq:
      - id: kind
        type: u1
        enum: section_kind
        doc: Entry offset 0 (`kind`), docs/holo.md "Sections - SectionKind".
      - id: padding
        size: 7
        doc: Entry offset 1, 7 padding bytes, written as zero.
      - id: offset
        type: u8
        doc: Entry offset 8 (`offset`), absolute offset of the payload.
      - id: length
        type: u8
        doc: Entry offset 16 (`length`), payload length in bytes.
    instances:
      payload:
        io: _root._io
        pos: offset
        size: length
        doc: The section payload, decoded by `kind` where its encoding is defined.
        type:
          switch-on: kind
          cases:
            section_kind::schedule: level_list
            section_kind::weights: weights
            section_kind::shape_registry: shape_registry
            section_kind::inputs: port_list
            section_kind::outputs: port_list
            section_kind::constants: constants
            section_kind::exec_plan: level_list
            section_kind::extension: extension

  footer:
    doc: 'docs/holo.md "Binary layout" - Footer: BLAKE3 fingerprint over all preceding bytes.'
    seq:
      - id: fingerprint
        size: 32
        doc: BLAKE3 hash of bytes `[0, file_size - 32)`.

  port_list:
    doc: Inputs (9) and Outputs (10) payload - `port_count` then the PortDescriptors (docs/holo.md "PortDescriptor").
    seq:
      - id: port_count
        doc: 'Number of ports (u32; hologram-archive writer.rs port encoding).'
        type: u4
      - id: ports
        doc: 'The PortDescriptors, in slot-table order.'
        type: port
        repeat: expr
        repeat-expr: port_count

  port:
    doc: 'One PortDescriptor { name, slot, element_count, dtype, shape } (docs/holo.md "Sections - SectionKind").'
    seq:
      - id: name_length
        type: u2
        doc: Byte length of `name`.
      - id: name
        type: str
        size: name_length
        encoding: UTF-8
        doc: Semantic port name (e.g. "input_ids"); empty for an unnamed port.
      - id: slot
        type: u4
        doc: Workspace slot the port maps to.
      - id: element_count
        type: u8
        doc: Total element count.
      - id: dtype
        type: u1
        doc: Element type code.
      - id: rank
        type: u1
        doc: Number of dimensions in `shape`; 0 when the rank is unknown.
      - id: shape
        type: u8
        repeat: expr
        repeat-expr: rank
        doc: Row-major dimensions.

  extension:
    doc: Extension (14) payload - a length-prefixed string key, then the value bytes (docs/holo.md "Sections - SectionKind").
    seq:
      - id: key_length
        doc: 'Byte length of `key` (u16; hologram-archive writer.rs extension encoding).'
        type: u2
      - id: key
        doc: 'UTF-8 key naming the extension (tokenizer, generation config, ...).'
        type: str
        size: key_length
        encoding: UTF-8
      - id: value
        size-eos: true
        doc: The producer-defined bytes, every byte after the key.

  weights:
    doc: Weights (3) payload - deduplicated weight bodies keyed by their BLAKE3 hash.
    seq:
      - id: weight_count
        doc: 'Number of weight entries (u32; hologram-archive writer.rs weights encoding).'
        type: u4
      - id: entries
        doc: 'The weight entries, in first-insertion order.'
        type: weight_entry
        repeat: expr
        repeat-expr: weight_count

  weight_entry:
    doc: One Weights entry - fingerprint, body length, body.
    seq:
      - id: fingerprint
        size: 32
        doc: BLAKE3 hash of `body`.
      - id: body_length
        doc: 'Byte length of `body` (u64).'
        type: u8
      - id: body
        doc: 'The weight bytes.'
        size: body_length

  constants:
    doc: Constants (11) payload - inline bodies or references into Weights (docs/holo.md, "Constants over a 4 KiB inline threshold become references").
    seq:
      - id: constant_count
        doc: 'Number of constant entries (u32; hologram-archive writer.rs / constant_codec.rs).'
        type: u4
      - id: entries
        doc: 'The constants.'
        type: constant_entry
        repeat: expr
        repeat-expr: constant_count

  constant_entry:
    doc: One Constants entry, by its tag byte - 0 inline, 1 reference.
    seq:
      - id: tag
        doc: 'Entry kind (constant_codec.rs) - 0 inline body, 1 reference into Weights.'
        type: u1
        enum: constant_tag
      - id: slot
        type: u4
        doc: Workspace slot the constant fills.
      - id: dtype
        type: u1
        doc: Element type code.
      - id: body_length
        type: u4
        if: tag == constant_tag::inline
        doc: Inline only - body length in bytes.
      - id: body
        size: body_length
        if: tag == constant_tag::inline
        doc: Inline only - the constant's bytes.
      - id: fingerprint
        size: 32
        if: tag == constant_tag::reference
        doc: Reference only - BLAKE3 hash of the body, a key of the Weights section.

  level_list:
    doc: Schedule (2) and ExecPlan (12) payload - `level_count` levels of `u32` indices (node ids, or kernel-call indices).
    seq:
      - id: level_count
        doc: 'Number of levels (u32; hologram-archive writer.rs schedule / exec-plan encoding).'
        type: u4
      - id: levels
        doc: 'The levels, in execution order.'
        type: level
        repeat: expr
        repeat-expr: level_count

  level:
    doc: One level - `index_count` then the indices.
    seq:
      - id: index_count
        doc: 'Number of indices in this level (u32).'
        type: u4
      - id: indices
        doc: 'Node ids (Schedule) or kernel-call indices (ExecPlan), u32 each.'
        type: u4
        repeat: expr
        repeat-expr: index_count

  shape_registry:
    doc: ShapeRegistry (4) payload - `shape_count` interned shapes, by shape id.
    seq:
      - id: shape_count
        doc: 'Number of shapes (u32; hologram-archive writer.rs shape-registry encoding).'
        type: u4
      - id: shapes
        doc: 'The shapes; a shape id is its position here.'
        type: shape_entry
        repeat: expr
        repeat-expr: shape_count

  shape_entry:
    doc: One interned shape - rank, eight inline dimensions, then the dimensions beyond the eighth.
    seq:
      - id: rank
        doc: 'Number of dimensions (u8).'
        type: u1
      - id: dims
        type: u8
        repeat: expr
        repeat-expr: 8
        doc: The first eight dimensions; unused ones are zero.
      - id: overflow_count
        doc: 'Number of dimensions beyond the eighth (u32).'
        type: u4
      - id: overflow
        type: u8
        repeat: expr
        repeat-expr: overflow_count
        doc: Dimensions beyond the eighth.

enums:
  section_kind:
    1: kernel_calls
    2: schedule
    3: weights
    4: shape_registry
    5: dtype_registry
    6: certificates
    7: trace
    8: metadata
    9: inputs
    10: outputs
    11: constants
    12: exec_plan
    13: warm_start
    14: extension
    15: app_manifest
    16: content_blob
  constant_tag:
    0: inline
    1: reference

meta:
  id: hrryfile
  title: Hurray tensor file (HRRYFILE container)
  file-extension: hrry
  license: MIT OR Apache-2.0
  ks-version: '0.10'
  endian: le
  imports:
    - hrry_descriptor
doc: |
  A Hurray tensor file (file-format.md "File Layout"): a 64-byte header, the
  tensor region (descriptor, padding, data buffers, padding, repeated), an optional
  KV metadata section, the index section and a 40-byte trailer at the end.

  Random access, as a reader does it (file-format.md "Reader Protocol"): `trailer`
  is read at `file_size - 40`; `index` and `kv` are found through it; each index
  entry's `descriptor` is parsed at its `descriptor_offset`.

  The tensor region is also walked in file order (`tensor_region`), from
  `first_descriptor_offset` to where the KV section (or, without KV, the index)
  begins, with the placement rules of file-format.md "Tensor Region": each tensor's
  first buffer starts at the next `data_buffer_alignment` boundary after its
  descriptor, every later buffer at the next boundary after its predecessor, and the
  next descriptor at the next 8-byte boundary after the last buffer. Following
  docs/interpretations.md § Container, a reader also accepts the next descriptor at the
  next `data_buffer_alignment` boundary: the walk takes that one when no descriptor
  (`HRRY`) starts at the 8-byte boundary.

  This description says where the bytes are; whether their values are allowed is
  for `hrry validate`.
doc-ref: file-format.md "File Layout"
seq:
  - id: header
    type: file_header
    doc: file-format.md "File Header" (64 bytes at offset 0).
instances:
  trailer:
    pos: _io.size - 40
    type: trailer
    doc: file-format.md "Trailer" (the last 40 bytes of the file).
  has_kv:
    value: trailer.kv_length != 0
    doc: |
      Whether a KV section is present. It is found through the trailer, whatever
      `HAS_KV_METADATA` says (docs/interpretations.md § Container).
  kv:
    pos: trailer.kv_offset
    size: trailer.kv_length
    type: kv_section
    if: has_kv
    doc: file-format.md "KV Metadata Section", located by `kv_offset` and `kv_length`.
  index:
    pos: trailer.index_offset
    size: trailer.index_length
    type: index_section
    doc: file-format.md "Index Section", located by `index_offset` and `index_length`.
  tensor_region_end:
    value: 'has_kv ? trailer.kv_offset : trailer.index_offset'
    doc: |
      Where the tensor region ends: the KV section when there is one, else the
      index (docs/interpretations.md § Container).
  tensor_region:
    pos: header.first_descriptor_offset
    type: tensor_region(tensor_region_end, header.data_buffer_alignment)
    if: header.first_descriptor_offset < tensor_region_end
    doc: file-format.md "Tensor Region", walked in file order (absent when the region is empty).
types:
  file_header:
    doc: file-format.md "File Header" (64 bytes).
    seq:
      - id: magic
        contents: HRRYFILE
        doc: file-format.md "File Header", offset 0 (`magic`, ASCII "HRRYFILE").
      - id: container_version_major
        type: u1
        doc: file-format.md "File Header", offset 8 (`container_version_major`; 1).
      - id: container_version_minor
        type: u1
        doc: file-format.md "File Header", offset 9 (`container_version_minor`; 0).
      - id: reserved
        size: 2
        doc: file-format.md "File Header", offset 10 (`_reserved`, `uint8[2]`), must be 0.
      - id: file_flags
        type: u4
        doc: file-format.md "File Header", offset 12 (`file_flags`); bits in "File Flags".
      - id: data_buffer_alignment
        type: u4
        doc: file-format.md "File Header", offset 16 (`data_buffer_alignment`), a power of two from 4096 to 2 MiB.
      - id: first_descriptor_offset
        type: u8
        doc: file-format.md "File Header", offset 20 (`first_descriptor_offset`), >= 64 and 8-byte aligned.
      - id: tensor_count_hint
        type: u8
        doc: file-format.md "File Header", offset 28 (`tensor_count_hint`), 0xFFFFFFFFFFFFFFFF when unknown; advisory.
      - id: reserved_header
        size: 28
        doc: file-format.md "File Header", offset 36 (`_reserved_header`, `uint8[28]`), must be 0.
    instances:
      has_kv_metadata:
        value: (file_flags & 0x1) != 0
        doc: file-format.md "File Flags", bit 0 `HAS_KV_METADATA`.
      sorted_index:
        value: (file_flags & 0x2) != 0
        doc: file-format.md "File Flags", bit 1 `SORTED_INDEX`.
      has_index_crc32c:
        value: (file_flags & 0x4) != 0
        doc: file-format.md "File Flags", bit 2 `HAS_INDEX_CRC32C`.
      reserved_flags:
        value: file_flags & 0xfffffff8
        doc: file-format.md "File Flags", bits 3-31 (reserved, must be 0).

  trailer:
    doc: file-format.md "Trailer" (40 bytes at `file_size - 40`).
    seq:
      - id: index_offset
        type: u8
        doc: file-format.md "Trailer", offset 0 (`index_offset`).
      - id: index_length
        type: u8
        doc: file-format.md "Trailer", offset 8 (`index_length`).
      - id: kv_offset
        type: u8
        doc: file-format.md "Trailer", offset 16 (`kv_offset`), 0 without KV.
      - id: kv_length
        type: u4
        doc: file-format.md "Trailer", offset 24 (`kv_length`), 0 without KV.
      - id: index_crc32c
        type: u4
        doc: file-format.md "Trailer", offset 28 (`index_crc32c`), CRC-32C of the index bytes when `HAS_INDEX_CRC32C`, else 0.
      - id: reserved
        size: 4
        doc: file-format.md "Trailer", offset 32 (`_reserved`, `uint8[4]`), must be 0.
      - id: trailer_magic
        contents: HRRY
        doc: file-format.md "Trailer", offset 36 (`trailer_magic`, ASCII "HRRY").

  kv_section:
    doc: file-format.md "KV Section Encoding".
    seq:
      - id: kv_count
        type: u4
        doc: file-format.md "KV Section Encoding" (`kv_count`).
      - id: entries
        type: kv_entry
        repeat: expr
        repeat-expr: kv_count
        doc: file-format.md "KV Section Encoding" (`kv_entries[kv_count]`).

  kv_entry:
    doc: file-format.md "KV Section Encoding", one entry.
    seq:
      - id: key_length
        type: u2
        doc: file-format.md "KV Section Encoding" (`key_length`), >= 1.
      - id: key
        type: str
        size: key_length
        encoding: UTF-8
        doc: file-format.md "KV Section Encoding" (`key`), UTF-8, unique.
      - id: value_tag
        type: u1
        enum: kv_type
        valid:
          any-of:
            - kv_type::string
            - kv_type::int64
            - kv_type::uint64
            - kv_type::float64
            - kv_type::bool
            - kv_type::bytes
            - kv_type::array
        doc: |
          file-format.md "KV Value Types" (`value_tag`). Another tag leaves the
          payload's length unknown, so the parse stops there.
      - id: value
        doc: file-format.md "KV Value Types", the payload encoded per `value_tag`.
        type:
          switch-on: value_tag
          cases:
            kv_type::string: kv_string
            kv_type::int64: kv_int64
            kv_type::uint64: kv_uint64
            kv_type::float64: kv_float64
            kv_type::bool: kv_bool
            kv_type::bytes: kv_bytes
            kv_type::array: kv_array

  kv_array:
    doc: 'file-format.md "KV Value Types", tag 0x07 (array): element tag, count, elements.'
    seq:
      - id: element_tag
        type: u1
        enum: kv_type
        valid:
          any-of:
            - kv_type::string
            - kv_type::int64
            - kv_type::uint64
            - kv_type::float64
            - kv_type::bool
            - kv_type::bytes
        doc: |
          file-format.md "KV Value Types", 0x07 (`uint8` element type tag,
          0x01-0x06). Another tag leaves the elements' length unknown, so the parse
          stops there.
      - id: count
        type: u4
        doc: file-format.md "KV Value Types", 0x07 (`uint32` element count).
      - id: elements
        repeat: expr
        repeat-expr: count
        doc: file-format.md "KV Value Types", 0x07 (element payloads concatenated, without tags).
        type:
          switch-on: element_tag
          cases:
            kv_type::string: kv_string
            kv_type::int64: kv_int64
            kv_type::uint64: kv_uint64
            kv_type::float64: kv_float64
            kv_type::bool: kv_bool
            kv_type::bytes: kv_bytes

  kv_string:
    doc: file-format.md "KV Value Types", 0x01 (`uint32` byte length, then UTF-8 bytes).
    seq:
      - id: length
        doc: 'file-format.md "KV Value Types", 0x01 - `uint32` byte length.'
        type: u4
      - id: value
        doc: 'file-format.md "KV Value Types", 0x01 - the UTF-8 bytes.'
        type: str
        size: length
        encoding: UTF-8
  kv_int64:
    doc: file-format.md "KV Value Types", 0x02 (8 bytes, little-endian).
    seq:
      - id: value
        doc: 'file-format.md "KV Value Types", 0x02 - int64.'
        type: s8
  kv_uint64:
    doc: file-format.md "KV Value Types", 0x03 (8 bytes, little-endian).
    seq:
      - id: value
        doc: 'file-format.md "KV Value Types", 0x03 - uint64.'
        type: u8
  kv_float64:
    doc: file-format.md "KV Value Types", 0x04 (IEEE 754 binary64, little-endian).
    seq:
      - id: value
        doc: 'file-format.md "KV Value Types", 0x04 - float64.'
        type: f8
  kv_bool:
    doc: file-format.md "KV Value Types", 0x05 (1 byte, 0 false, 1 true).
    seq:
      - id: raw
        doc: 'file-format.md "KV Value Types", 0x05 - the byte (0x00 false, 0x01 true; others invalid).'
        type: u1
    instances:
      value:
        doc: 'The byte as a boolean (non-zero is true).'
        value: raw != 0
  kv_bytes:
    doc: file-format.md "KV Value Types", 0x06 (`uint32` byte length, then opaque bytes).
    seq:
      - id: length
        doc: 'file-format.md "KV Value Types", 0x06 - `uint32` byte length.'
        type: u4
      - id: value
        doc: 'file-format.md "KV Value Types", 0x06 - the opaque bytes.'
        size: length

  index_section:
    doc: file-format.md "Index Encoding".
    seq:
      - id: index_entry_count
        type: u8
        doc: file-format.md "Index Encoding" (`index_entry_count`).
      - id: entries
        type: index_entry
        repeat: expr
        repeat-expr: index_entry_count
        doc: file-format.md "Index Encoding" (`index_entries[index_entry_count]`), in file order.

  index_entry:
    doc: file-format.md "Index Encoding", one entry.
    seq:
      - id: name_length
        type: u2
        doc: file-format.md "Index Encoding" (`name_length`), >= 1.
      - id: name
        type: str
        size: name_length
        encoding: UTF-8
        doc: file-format.md "Index Encoding" (`name`), UTF-8, unique.
      - id: descriptor_offset
        type: u8
        doc: file-format.md "Index Encoding" (`descriptor_offset`), absolute.
      - id: descriptor_length
        type: u4
        doc: file-format.md "Index Encoding" (`descriptor_length`), equal to the descriptor's own.
      - id: data_offset
        type: u8
        doc: file-format.md "Index Encoding" (`data_offset`), absolute offset of the first buffer.
      - id: data_length
        type: u8
        doc: file-format.md "Index Encoding" (`data_length`), buffers plus inter-buffer padding.
      - id: flags
        type: u4
        doc: file-format.md "Index Encoding" (`flags`), must be 0.
    instances:
      descriptor:
        io: _root._io
        pos: descriptor_offset
        size: descriptor_length
        type: hrry_descriptor
        doc: The tensor descriptor this entry points at (metadata.md; hrry_descriptor.ksy).

  tensor_region:
    doc: |
      file-format.md "Tensor Region": tensors one after another up to
      `region_end`. Every position below is absolute: the region is read from the
      file's own stream, not a substream.
    params:
      - id: region_end
        type: u8
      - id: data_buffer_alignment
        type: u4
    seq:
      - id: tensors
        type: region_tensor(_io.pos, region_end, data_buffer_alignment)
        repeat: until
        repeat-until: _io.pos >= region_end
        doc: The tensors in file (write) order.

  region_tensor:
    doc: |
      One tensor of the region (file-format.md "Tensor Region", "Descriptor
      Placement", "Data Buffer Placement"): descriptor, buffers each at the next
      `data_buffer_alignment` boundary, then padding to where the next descriptor
      (or the region end) is.
    params:
      - id: descriptor_offset
        type: u8
        doc: Absolute offset of this descriptor (the stream position when it is read).
      - id: region_end
        type: u8
      - id: data_buffer_alignment
        type: u4
    seq:
      - id: descriptor
        type: hrry_descriptor
        doc: metadata.md; hrry_descriptor.ksy.
      - id: buffers
        type: region_buffer(_io.pos, descriptor.body.buffers[_index].byte_size, data_buffer_alignment)
        repeat: expr
        repeat-expr: descriptor.body.buffer_count
        doc: file-format.md "Data Buffer Placement", one per buffer handle.
      - id: tail
        type: tensor_tail(_io.pos, region_end, data_buffer_alignment)
        doc: file-format.md "Descriptor Placement", padding before the next descriptor.
    instances:
      descriptor_end:
        doc: 'Absolute offset just past the descriptor (`descriptor_offset + descriptor_length`).'
        value: descriptor_offset + descriptor.descriptor_length
      data_offset:
        value: 'descriptor.body.buffer_count > 0 ? buffers[0].data_offset : descriptor_end'
        doc: |
          Where the tensor's data starts (the index entry's `data_offset`); for a
          tensor with no buffers (a composite head), the end of its descriptor.
      data_end:
        doc: 'Absolute offset just past the last buffer (the descriptor end when there is none).'
        value: 'descriptor.body.buffer_count > 0 ? buffers.last.data_offset + buffers.last.byte_size : descriptor_end'
      data_length:
        value: data_end - data_offset
        doc: Bytes of all buffers and the padding between them (the index entry's `data_length`).

  region_buffer:
    doc: file-format.md "Data Buffer Placement" - zero padding to the next `data_buffer_alignment` boundary, then the buffer.
    params:
      - id: start
        type: u8
      - id: byte_size
        type: u8
      - id: alignment
        type: u4
    seq:
      - id: padding
        size: (alignment - start % alignment) % alignment
        doc: 0x00 bytes up to the alignment boundary.
      - id: data
        size: byte_size
        doc: The buffer's `byte_size` bytes.
    instances:
      data_offset:
        value: start + (alignment - start % alignment) % alignment
        doc: Absolute offset of the buffer.

  tensor_tail:
    doc: |
      Padding after a tensor's last buffer (or after its descriptor when it has
      none): to the next 8-byte boundary, or, when no descriptor starts there and
      the region does not end there, to the next `data_buffer_alignment` boundary
      (docs/interpretations.md § Container).
    params:
      - id: start
        type: u8
      - id: region_end
        type: u8
      - id: alignment
        type: u4
    seq:
      - id: padding
        size: 'next8 == region_end or (next8 < region_end and magic_at_next8 == [0x48, 0x52, 0x52, 0x59]) ? next8 - start : (alignment - start % alignment) % alignment'
        doc: 0x00 bytes up to the next descriptor.
    instances:
      next8:
        doc: 'The next 8-byte boundary at or after `start` (file-format.md "Descriptor Placement").'
        value: start + (8 - start % 8) % 8
      magic_at_next8:
        pos: next8
        size: 4
        doc: Peeked only when `next8` lies inside the region (the condition above short-circuits).

enums:
  kv_type:
    0x01: string
    0x02: int64
    0x03: uint64
    0x04: float64
    0x05: bool
    0x06: bytes
    0x07: array

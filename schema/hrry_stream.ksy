meta:
  id: hrry_stream
  title: Bare Hurray stream
  license: MIT OR Apache-2.0
  ks-version: '0.10'
  endian: le
  imports:
    - hrry_descriptor
doc: |
  A bare Hurray stream (interchange.md "Scope"; ADR-010, the back-to-back
  multi-tensor encoding): zero or more tensors, each its tensor descriptor
  (hrry_descriptor.ksy) immediately followed by its buffers' bytes, back to back in
  buffer-table order. There is no header, no padding, no index and no names; zero
  bytes is a valid empty stream.

  A composite head (layout_tag 0x0B, no buffers) binds the next `member_count`
  tensors as its members, nested composites in pre-order (interchange.md
  "Composite Tensor Streaming"). Binding is positional and is not expressed here:
  a reader counts members itself.

  This description says where the bytes are; whether their values are allowed is
  `hrry stream validate`'s business (rules ST-*, plus every descriptor rule).
doc-ref: interchange.md "Scope"
seq:
  - id: tensors
    type: stream_tensor(_io.pos)
    repeat: eos
    doc: The tensors in stream order.
types:
  stream_tensor:
    doc: One tensor - its descriptor, then its buffers' bytes with nothing between.
    params:
      - id: descriptor_offset
        type: u8
        doc: Absolute offset of the descriptor (the stream position when it is read).
    seq:
      - id: descriptor
        type: hrry_descriptor
        doc: metadata.md "Overall Descriptor Structure"; hrry_descriptor.ksy.
      - id: buffers
        type: stream_buffer(descriptor.body.buffers[_index].byte_size)
        repeat: expr
        repeat-expr: descriptor.body.buffer_count
        doc: |
          One per buffer handle, in buffer-table order, each exactly its handle's
          `byte_size` bytes (docs/interpretations.md § Streams and the transport: back to
          back, no alignment padding).
    instances:
      data_offset:
        value: descriptor_offset + descriptor.descriptor_length
        doc: Absolute offset of the first data byte (the descriptor's end).

  stream_buffer:
    doc: One buffer's bytes.
    params:
      - id: byte_size
        type: u8
    seq:
      - id: data
        size: byte_size
        doc: The buffer's `byte_size` bytes.

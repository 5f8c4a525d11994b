meta:
  id: hrry_messages
  title: Hurray transport messages (a captured conversation)
  license: MIT OR Apache-2.0
  ks-version: '0.10'
  endian: le
  imports:
    - hrry_descriptor
doc: |
  Hurray network transport messages (interchange.md "Network Transport Protocol"):
  each a 12-byte header and `payload_length` bytes of payload. A captured
  conversation is the messages back to back, both directions, in the order they
  crossed the connection (the layout of corpus/messages/).

  Payloads of the defined types are decoded; PING, PONG, private types
  (0xF0-0xFE) and unknown types are kept as bytes, as are TENSOR_DATA_END,
  TENSOR_PUT_ACK and RDMA_READY (whose payload must be empty). Every payload is
  read from a substream of exactly `payload_length` bytes, so a parser never reads
  into the next message. Values are not judged here (`hrry stream validate
  --messages`, rules TR-*).
doc-ref: interchange.md "Message Framing"
seq:
  - id: messages
    type: message
    repeat: eos
    doc: The messages in the order they crossed the connection.
types:
  message:
    doc: interchange.md "Message Framing" - header, then payload.
    seq:
      - id: message_type
        type: u4
        enum: message_type
        doc: interchange.md "Message Framing", offset 0 (`message_type`; "Message Types").
      - id: stream_id
        type: u4
        doc: interchange.md "Message Framing", offset 4 (`stream_id`; 0 is reserved).
      - id: payload_length
        type: u4
        doc: interchange.md "Message Framing", offset 8 (`payload_length`, header not included).
      - id: payload
        size: payload_length
        type:
          switch-on: message_type
          cases:
            'message_type::client_hello': hello
            'message_type::server_hello': hello
            'message_type::tensor_request': tensor_request
            'message_type::tensor_descriptor': tensor_descriptor
            'message_type::tensor_data': tensor_data
            'message_type::tensor_put': tensor_put
            'message_type::error': error
            'message_type::rdma_register': rdma_register
        doc: The payload, decoded for the types that have fields, else raw bytes.

  hello:
    doc: interchange.md "CLIENT_HELLO Payload" and "SERVER_HELLO Payload" (same fields).
    seq:
      - id: protocol_version
        type: u4
        doc: '`protocol_version` (1).'
      - id: max_message_size
        type: u4
        doc: '`max_message_size`: the largest payload the sender accepts.'
      - id: capability_flags
        type: u8
        doc: '`capability_flags` (interchange.md "Capability Flags"; see the instances).'
      - id: supported_layouts
        type: layout_list
        doc: '`supported_layouts`, preceded by a `uint16` count.'
      - id: supported_devices
        type: short_bytes
        doc: '`supported_devices`: device tags behind a `uint16` count.'
      - id: supported_memory_classes
        type: short_bytes
        if: not _io.eof
        doc: '`supported_memory_classes` behind a `uint16` count; may be absent (STANDARD only).'
    instances:
      transcoding:
        value: (capability_flags & 0x1) != 0
        doc: Bit 0 `TRANSCODING`.
      parallel_streams:
        value: (capability_flags & 0x2) != 0
        doc: Bit 1 `PARALLEL_STREAMS`.
      rdma_data_plane:
        value: (capability_flags & 0x4) != 0
        doc: Bit 2 `RDMA_DATA_PLANE`.
      rdma_gpudirect:
        value: (capability_flags & 0x8) != 0
        doc: Bit 3 `RDMA_GPUDIRECT` (implies bit 2).

  layout_list:
    doc: interchange.md "Layout Entry Encoding" - a `uint16` count, then the entries.
    seq:
      - id: count
        type: u2
        doc: '`layout_count`.'
      - id: entries
        type: layout_entry
        repeat: expr
        repeat-expr: count
        doc: Entries in preference order.

  layout_entry:
    doc: |
      interchange.md "Layout Entry Encoding": a layout tag; an extension tag
      (0xF0-0xFE) is followed by `ext_metadata_length` and that many bytes of
      metadata, which a reader skips by length when it does not understand them.
    seq:
      - id: layout_tag
        type: u1
        doc: The layout tag (memory-layout.md).
      - id: ext_metadata_length
        type: u2
        if: is_extension
        doc: '`ext_metadata_length`, extension entries only.'
      - id: ext_metadata
        size: ext_metadata_length
        if: is_extension
        doc: '`ext_metadata`, opaque.'
    instances:
      is_extension:
        value: layout_tag >= 0xf0 and layout_tag <= 0xfe
        doc: True for the extension range 0xF0-0xFE.

  short_bytes:
    doc: Bytes behind a `uint16` count (device tags, memory classes).
    seq:
      - id: count
        type: u2
        doc: The count.
      - id: items
        size: count
        doc: One byte each.

  len_bytes:
    doc: A `uint32` byte length, then that many bytes (UTF-8 strings, rkeys).
    seq:
      - id: length
        type: u4
        doc: The length in bytes.
      - id: value
        size: length
        doc: The bytes.

  tensor_request:
    doc: interchange.md "TENSOR_REQUEST Payload".
    seq:
      - id: tensor_key
        type: len_bytes
        doc: '`tensor_key`, UTF-8.'
      - id: preferred_layouts
        type: layout_list
        doc: '`preferred_layouts` (count 0: no preference).'
      - id: preferred_device
        type: u1
        doc: '`preferred_device`, a device tag.'
      - id: min_alignment
        type: u4
        doc: '`min_alignment`, a power of two.'
      - id: request_flags
        type: u4
        doc: '`request_flags`: bit 0 `ALLOW_TRANSCODE`, bit 1 `PARALLEL_OK`.'

  tensor_descriptor:
    doc: interchange.md "TENSOR_DESCRIPTOR Payload" - a descriptor, then the transport fields.
    seq:
      - id: descriptor
        type: hrry_descriptor
        doc: metadata.md; hrry_descriptor.ksy (self-delimiting by `descriptor_length`).
      - id: total_data_bytes
        type: u8
        doc: '`total_data_bytes`: the buffers'' sizes added up (bytes of the data frames).'
      - id: shard_index
        type: u4
        doc: '`shard_index` (0 outside a parallel transfer).'
      - id: total_shards
        type: u4
        doc: '`total_shards` (1 outside a parallel transfer).'

  tensor_data:
    doc: interchange.md "TENSOR_DATA Payload".
    seq:
      - id: byte_offset_in_buffer
        type: u8
        doc: '`byte_offset_in_buffer`, within the buffers concatenated in buffer-table order.'
      - id: data
        size-eos: true
        doc: '`data`: the rest of the payload.'

  tensor_put:
    doc: interchange.md "TENSOR_PUT Payload".
    seq:
      - id: tensor_key
        type: len_bytes
        doc: '`tensor_key`, UTF-8.'
      - id: descriptor_length
        type: u4
        doc: Byte length of the descriptor field.
      - id: descriptor
        size: descriptor_length
        type: hrry_descriptor
        doc: The serialized descriptor (metadata.md; hrry_descriptor.ksy).
      - id: total_data_bytes
        type: u8
        doc: '`total_data_bytes`.'

  error:
    doc: interchange.md "ERROR Payload".
    seq:
      - id: error_code
        type: u4
        enum: error_code
        doc: '`error_code`.'
      - id: message
        type: len_bytes
        doc: '`message`, UTF-8.'

  rdma_register:
    doc: interchange.md "RDMA_REGISTER Payload".
    seq:
      - id: remote_addr
        type: u8
        doc: '`remote_addr`.'
      - id: length
        type: u8
        doc: '`length` (equal to `total_data_bytes`).'
      - id: rkey
        type: len_bytes
        doc: '`rkey`, opaque.'

enums:
  message_type:
    0x01: client_hello
    0x02: server_hello
    0x03: tensor_request
    0x04: tensor_descriptor
    0x05: tensor_data
    0x06: tensor_data_end
    0x07: tensor_put
    0x08: tensor_put_ack
    0x09: error
    0x0a: ping
    0x0b: pong
    0x0c: rdma_register
    0x0d: rdma_ready
  error_code:
    0x01: protocol_version_mismatch
    0x02: unknown_tensor
    0x03: layout_unavailable
    0x04: transcode_limit_exceeded
    0x05: device_unavailable
    0x06: invalid_message
    0x07: message_too_large
    0x08: shard_mismatch

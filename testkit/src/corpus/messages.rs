//! Corpus cases for captured transport conversations (rules `TR-…`): framed
//! messages back to back, both directions, in the order they crossed.

use hrry::model::build::{composite_head, dense};
use hrry::model::ElementType;
use hrry::schema::transport::{
    error_code, message_type as mt, CapabilityFlags, ErrorPayload, Hello, LayoutEntry, LayoutList,
    RdmaRegister, RequestFlags, ShortBytes, TensorData, TensorDescriptorPayload, TensorPut,
    TensorRequest,
};
use hrry::schema::{to_bytes, LenBytes, ShardSection, TensorDescriptor};
use hrry::stream::message::{Frame, Payload};

use super::{Case, Format};

const M: Format = Format::Messages;

/// Bytes of a conversation being built.
#[derive(Clone, Default)]
struct Capture {
    bytes: Vec<u8>,
}

impl Capture {
    /// A message carrying `payload` on `stream`.
    fn msg(mut self, stream: u32, payload: Payload) -> Self {
        let frame = Frame::new(stream, &payload).expect("corpus payloads are small");
        self.bytes.extend_from_slice(&frame.to_bytes());
        self
    }

    /// A message with a raw header and payload.
    fn raw(mut self, message_type: u32, stream: u32, payload: &[u8]) -> Self {
        self.bytes.extend_from_slice(&message_type.to_le_bytes());
        self.bytes.extend_from_slice(&stream.to_le_bytes());
        self.bytes
            .extend_from_slice(&(payload.len() as u32).to_le_bytes());
        self.bytes.extend_from_slice(payload);
        self
    }

    /// The default handshake.
    fn hellos(self) -> Self {
        self.hellos_with(CapabilityFlags::new(), CapabilityFlags::new())
    }

    /// A handshake with these capabilities.
    fn hellos_with(self, client: CapabilityFlags, server: CapabilityFlags) -> Self {
        self.msg(1, Payload::ClientHello(hello(client)))
            .msg(1, Payload::ServerHello(hello(server)))
    }

    /// A request for `key` on `stream`.
    fn request(self, stream: u32, key: &str, flags: RequestFlags) -> Self {
        self.msg(
            stream,
            Payload::TensorRequest(request(key.as_bytes(), flags)),
        )
    }

    /// A TENSOR_DESCRIPTOR for `d` announcing its buffers' sizes.
    fn descriptor(self, stream: u32, d: &TensorDescriptor) -> Self {
        let total = d.buffers.iter().map(|b| b.byte_size).sum();
        self.msg(stream, Payload::TensorDescriptor(described(d, total, 0, 1)))
    }

    /// A data frame.
    fn data(self, stream: u32, offset: u64, bytes: &[u8]) -> Self {
        self.msg(
            stream,
            Payload::TensorData(TensorData {
                byte_offset_in_buffer: offset,
                data: bytes.to_vec(),
            }),
        )
    }

    fn end(self, stream: u32) -> Self {
        self.msg(stream, Payload::TensorDataEnd)
    }

    /// A whole tensor: descriptor, its data in frames of at most `frame` bytes, end.
    fn tensor(mut self, stream: u32, d: &TensorDescriptor, frame: usize) -> Self {
        self = self.descriptor(stream, d);
        let data = pattern(d);
        for (i, chunk) in data.chunks(frame.max(1)).enumerate() {
            self = self.data(stream, (i * frame) as u64, chunk);
        }
        self.end(stream)
    }

    fn error(self, stream: u32, code: u32, text: &str) -> Self {
        self.msg(
            stream,
            Payload::Error(ErrorPayload {
                error_code: code,
                message: LenBytes {
                    bytes: text.as_bytes().to_vec(),
                },
            }),
        )
    }
}

fn hello(flags: CapabilityFlags) -> Hello {
    Hello {
        protocol_version: 1,
        max_message_size: 1 << 20,
        capability_flags: flags,
        supported_layouts: layouts(&[0x01, 0x02]),
        supported_devices: ShortBytes { bytes: vec![0x00] },
        supported_memory_classes: Some(ShortBytes { bytes: vec![0x00] }),
    }
}

fn layouts(tags: &[u8]) -> LayoutList {
    LayoutList {
        entries: tags
            .iter()
            .map(|&t| LayoutEntry {
                layout_tag: t,
                ext_metadata: None,
            })
            .collect(),
    }
}

fn request(key: &[u8], flags: RequestFlags) -> TensorRequest {
    TensorRequest {
        tensor_key: LenBytes {
            bytes: key.to_vec(),
        },
        preferred_layouts: layouts(&[0x01]),
        preferred_device: 0x00,
        min_alignment: 64,
        request_flags: flags,
    }
}

fn described(d: &TensorDescriptor, total: u64, index: u32, shards: u32) -> TensorDescriptorPayload {
    TensorDescriptorPayload {
        descriptor: to_bytes(d),
        total_data_bytes: total,
        shard_index: index,
        total_shards: shards,
    }
}

/// A tensor's buffers, back to back, in a deterministic pattern.
fn pattern(d: &TensorDescriptor) -> Vec<u8> {
    let n: u64 = d.buffers.iter().map(|b| b.byte_size).sum();
    (0..n)
        .map(|i| (i as u8).wrapping_mul(37).wrapping_add(5))
        .collect()
}

fn f32d(shape: &[u64]) -> TensorDescriptor {
    dense(ElementType::Float32, shape).expect("dense float32")
}

/// A float32 [`shape`] shard at `offset` of `parent`.
fn shard(shape: &[u64], offset: &[u64], parent: &[u64]) -> TensorDescriptor {
    let mut d = f32d(shape);
    d.shard = Some(ShardSection {
        parent_shape: parent.to_vec(),
        shard_offset: offset.to_vec(),
    });
    d.sync_sections();
    d
}

fn flags() -> RequestFlags {
    RequestFlags::new()
}

fn parallel_ok() -> RequestFlags {
    RequestFlags::new().with_parallel_ok(true)
}

fn with_parallel() -> CapabilityFlags {
    CapabilityFlags::new().with_parallel_streams(true)
}

fn with_rdma() -> CapabilityFlags {
    CapabilityFlags::new().with_rdma_data_plane(true)
}

/// The request / response every simple case starts from: a float32 [2, 3] tensor
/// in two frames on stream 1.
fn simple() -> Capture {
    Capture::default()
        .hellos()
        .request(1, "weights", flags())
        .tensor(1, &f32d(&[2, 3]), 16)
}

/// Two shards of a float32 [2, 3] tensor, on streams 5 and 6, with `second`
/// giving the second shard's descriptor.
fn parallel_with(second: TensorDescriptorPayload) -> Capture {
    let first = shard(&[1, 3], &[0, 0], &[2, 3]);
    let c = Capture::default()
        .hellos_with(CapabilityFlags::new(), with_parallel())
        .request(5, "big", parallel_ok())
        .msg(5, Payload::TensorDescriptor(described(&first, 12, 0, 2)))
        .msg(6, Payload::TensorDescriptor(second.clone()))
        .data(5, 0, &[1; 12]);
    let total = second.total_data_bytes as usize;
    let c = if total > 0 {
        c.data(6, 0, &vec![2; total])
    } else {
        c
    };
    c.end(6).end(5)
}

/// An RDMA transfer of a float32 [2, 3] tensor with these REGISTER messages.
fn rdma_with(registers: &[RdmaRegister], flags: CapabilityFlags) -> Capture {
    let mut c = Capture::default()
        .hellos_with(flags, flags)
        .request(1, "weights", self::flags())
        .descriptor(1, &f32d(&[2, 3]));
    for r in registers {
        c = c.msg(1, Payload::RdmaRegister(r.clone()));
    }
    c.msg(1, Payload::RdmaReady).end(1)
}

fn register(length: u64) -> RdmaRegister {
    RdmaRegister {
        remote_addr: 0x7f00_0000_1000,
        length,
        rkey: LenBytes {
            bytes: vec![0xA5, 0x5A, 0x01, 0x02],
        },
    }
}

/// A group composite of `sent` of `members` float32 [2] members on stream 1.
fn composite(members: u32, sent: u32) -> Capture {
    let mut c = Capture::default()
        .hellos()
        .request(1, "outputs", flags())
        .descriptor(
            1,
            &composite_head(ElementType::Float32, &[2], 3, 0, members),
        )
        .end(1);
    for _ in 0..sent {
        c = c.tensor(1, &f32d(&[2]), 8);
    }
    c
}

pub fn cases() -> Vec<Case> {
    let mut out = valid_cases();
    out.extend(invalid_cases());
    out
}

fn valid_cases() -> Vec<Case> {
    let ok = |name: &str, description: &str, c: Capture| Case::valid(M, name, description, c.bytes);
    let empty = f32d(&[0]);
    let ext_hello = Hello {
        supported_layouts: LayoutList {
            entries: vec![
                LayoutEntry {
                    layout_tag: 0xF3,
                    ext_metadata: Some(ShortBytes {
                        bytes: b"panel:8x4".to_vec(),
                    }),
                },
                LayoutEntry {
                    layout_tag: 0xF0,
                    ext_metadata: Some(ShortBytes::default()),
                },
                LayoutEntry {
                    layout_tag: 0x01,
                    ext_metadata: None,
                },
            ],
        },
        supported_memory_classes: None,
        ..hello(CapabilityFlags::new().with_transcoding(true))
    };
    vec![
        ok("empty.hrrymsg", "no message at all", Capture::default()),
        ok(
            "request.hrrymsg",
            "handshake, a request, and a float32 [2, 3] tensor in two data frames",
            simple(),
        ),
        ok(
            "composite.hrrymsg",
            "a group of two members, one of them empty (no data frames), with a PING answered",
            Capture::default()
                .hellos()
                .request(1, "outputs", flags())
                .descriptor(1, &composite_head(ElementType::Float32, &[2], 3, 0, 2))
                .end(1)
                .tensor(1, &f32d(&[2]), 8)
                .msg(1, Payload::Ping(b"keepalive".to_vec()))
                .msg(1, Payload::Pong(b"keepalive".to_vec()))
                .descriptor(1, &empty)
                .end(1),
        ),
        ok(
            "put_and_errors.hrrymsg",
            "a TENSOR_PUT acknowledged, a request refused with ERROR, and the stream reused",
            Capture::default()
                .hellos()
                .msg(
                    3,
                    Payload::TensorPut(TensorPut {
                        tensor_key: LenBytes {
                            bytes: b"activations".to_vec(),
                        },
                        descriptor: LenBytes {
                            bytes: to_bytes(&f32d(&[4])),
                        },
                        total_data_bytes: 16,
                    }),
                )
                .data(3, 0, &[7; 16])
                .end(3)
                .msg(3, Payload::TensorPutAck)
                .request(3, "missing", flags())
                .error(3, error_code::UNKNOWN_TENSOR, "no tensor named \"missing\"")
                .request(3, "activations", flags())
                .tensor(3, &f32d(&[4]), 64),
        ),
        ok(
            "parallel.hrrymsg",
            "a request with PARALLEL_OK answered by two shards on streams 5 and 6",
            parallel_with(described(&shard(&[1, 3], &[1, 0], &[2, 3]), 12, 1, 2)),
        ),
        ok(
            "rdma.hrrymsg",
            "an RDMA transfer: RDMA_REGISTER, RDMA_READY, TENSOR_DATA_END without frames",
            rdma_with(&[register(24)], with_rdma()),
        ),
        ok(
            "refused.hrrymsg",
            "a client of protocol version 2 refused with ERROR instead of SERVER_HELLO",
            Capture::default()
                .msg(
                    1,
                    Payload::ClientHello(Hello {
                        protocol_version: 2,
                        ..hello(CapabilityFlags::new())
                    }),
                )
                .error(
                    1,
                    error_code::PROTOCOL_VERSION_MISMATCH,
                    "this server speaks version 1",
                ),
        ),
        ok(
            "extension_layouts.hrrymsg",
            "HELLOs with extension layout entries (metadata skipped by length) and no memory class list",
            Capture::default()
                .msg(1, Payload::ClientHello(ext_hello.clone()))
                .msg(1, Payload::ServerHello(ext_hello))
                .request(2, "weights", RequestFlags::new().with_allow_transcode(true))
                .tensor(2, &f32d(&[3]), 4),
        ),
    ]
}

fn invalid_cases() -> Vec<Case> {
    let bad = |rule: &'static str, description: &str, c: Capture| {
        Case::invalid(M, rule, "", description, c.bytes)
    };
    let weights = f32d(&[2, 3]);
    let data = pattern(&weights);
    let response = |c: Capture| c.request(1, "weights", flags()).descriptor(1, &weights);
    let shaken = Capture::default().hellos();
    let mut cut = simple();
    cut.bytes.truncate(cut.bytes.len() - 3);
    vec![
        bad(
            "TR-FRM-001",
            "the last message's header cut 3 bytes short",
            cut,
        ),
        bad(
            "TR-FRM-002",
            "a TENSOR_DESCRIPTOR larger than the 64 bytes the client accepts",
            Capture::default()
                .msg(
                    1,
                    Payload::ClientHello(Hello {
                        max_message_size: 64,
                        ..hello(CapabilityFlags::new())
                    }),
                )
                .msg(1, Payload::ServerHello(hello(CapabilityFlags::new())))
                .request(1, "weights", flags())
                .tensor(1, &weights, 16),
        ),
        bad(
            "TR-LIM-001",
            "a PING header announcing a 1.75 GiB payload (refused before reading it)",
            shaken
                .clone()
                .raw(mt::PING, 1, &[])
                .bytes_patched(8, &0x7000_0000u32.to_le_bytes()),
        ),
        bad(
            "TR-MSG-001",
            "a message of the undefined type 0x0E",
            shaken.clone().raw(0x0E, 1, &[]),
        ),
        bad(
            "TR-MSG-002",
            "a message of the private type 0xF0",
            shaken.clone().raw(0xF0, 1, b"private"),
        ),
        bad(
            "TR-MSG-003",
            "a PING and its PONG on the reserved stream 0",
            shaken
                .clone()
                .msg(0, Payload::Ping(vec![1]))
                .msg(0, Payload::Pong(vec![1])),
        ),
        bad(
            "TR-MSG-004",
            "an ERROR whose payload is 2 bytes, too short for error_code",
            shaken.clone().raw(mt::ERROR, 1, &[2, 0]),
        ),
        bad("TR-MSG-005", "an ERROR with 3 bytes after its message", {
            let mut e = to_bytes(&ErrorPayload {
                error_code: error_code::UNKNOWN_TENSOR,
                message: LenBytes {
                    bytes: b"no such tensor".to_vec(),
                },
            });
            e.extend_from_slice(&[0, 0, 0]);
            shaken
                .clone()
                .request(1, "w", flags())
                .raw(mt::ERROR, 1, &e)
        }),
        bad(
            "TR-MSG-006",
            "a TENSOR_DATA_END carrying one byte",
            response(shaken.clone())
                .data(1, 0, &data)
                .raw(mt::TENSOR_DATA_END, 1, &[0]),
        ),
        bad(
            "TR-MSG-007",
            "a request whose tensor_key is not UTF-8, refused",
            shaken
                .clone()
                .msg(
                    1,
                    Payload::TensorRequest(request(&[0x77, 0xFF, 0xFE], flags())),
                )
                .error(1, error_code::UNKNOWN_TENSOR, "unknown key"),
        ),
        bad(
            "TR-HEL-001",
            "the conversation starts with PING",
            Capture::default()
                .msg(1, Payload::Ping(vec![]))
                .msg(1, Payload::Pong(vec![])),
        ),
        bad(
            "TR-HEL-002",
            "the server answers a request before its SERVER_HELLO",
            Capture::default()
                .msg(1, Payload::ClientHello(hello(CapabilityFlags::new())))
                .request(1, "empty", flags())
                .descriptor(1, &f32d(&[0]))
                .end(1)
                .msg(1, Payload::ServerHello(hello(CapabilityFlags::new()))),
        ),
        bad(
            "TR-HEL-003",
            "SERVER_HELLO protocol_version 2 for a client of version 1",
            Capture::default()
                .msg(1, Payload::ClientHello(hello(CapabilityFlags::new())))
                .msg(
                    1,
                    Payload::ServerHello(Hello {
                        protocol_version: 2,
                        ..hello(CapabilityFlags::new())
                    }),
                ),
        ),
        bad(
            "TR-HEL-004",
            "the client sets reserved capability bit 10",
            Capture::default().hellos_with(
                CapabilityFlags::from_bytes((1u64 << 10).to_le_bytes()),
                CapabilityFlags::new(),
            ),
        ),
        bad(
            "TR-HEL-005",
            "the server advertises RDMA_GPUDIRECT without RDMA_DATA_PLANE",
            Capture::default().hellos_with(
                CapabilityFlags::new(),
                CapabilityFlags::new().with_rdma_gpudirect(true),
            ),
        ),
        bad(
            "TR-HEL-006",
            "two SERVER_HELLOs",
            shaken
                .clone()
                .msg(1, Payload::ServerHello(hello(CapabilityFlags::new()))),
        ),
        bad(
            "TR-DEV-001",
            "the client lists the reserved device tag 0x20",
            Capture::default()
                .msg(
                    1,
                    Payload::ClientHello(Hello {
                        supported_devices: ShortBytes {
                            bytes: vec![0x00, 0x20],
                        },
                        ..hello(CapabilityFlags::new())
                    }),
                )
                .msg(1, Payload::ServerHello(hello(CapabilityFlags::new()))),
        ),
        bad(
            "TR-LAY-001",
            "the client lists the unassigned layout tag 0x30",
            Capture::default()
                .msg(
                    1,
                    Payload::ClientHello(Hello {
                        supported_layouts: layouts(&[0x01, 0x30]),
                        ..hello(CapabilityFlags::new())
                    }),
                )
                .msg(1, Payload::ServerHello(hello(CapabilityFlags::new()))),
        ),
        bad(
            "TR-REQ-001",
            "a request with min_alignment 48",
            shaken
                .clone()
                .msg(
                    1,
                    Payload::TensorRequest(TensorRequest {
                        min_alignment: 48,
                        ..request(b"weights", flags())
                    }),
                )
                .tensor(1, &weights, 16),
        ),
        bad(
            "TR-REQ-002",
            "a request setting reserved request flag bit 5",
            shaken
                .clone()
                .request(1, "weights", RequestFlags::from_bytes(32u32.to_le_bytes()))
                .tensor(1, &weights, 16),
        ),
        bad(
            "TR-REQ-003",
            "a second request on stream 1 before the first is answered",
            shaken
                .clone()
                .request(1, "weights", flags())
                .request(1, "weights", flags())
                .tensor(1, &weights, 16),
        ),
        bad(
            "TR-ORD-001",
            "a TENSOR_DESCRIPTOR on stream 2, where nothing was requested",
            shaken.clone().descriptor(2, &f32d(&[0])).end(2),
        ),
        bad(
            "TR-ORD-002",
            "a TENSOR_DATA frame after the tensor's TENSOR_DATA_END",
            simple().data(1, 24, &[0; 4]),
        ),
        bad(
            "TR-ORD-003",
            "a gap: frames at 0 (16 bytes) and 20 (8 bytes)",
            response(shaken.clone())
                .data(1, 0, &data[..16])
                .data(1, 20, &data[16..])
                .end(1),
        ),
        bad(
            "TR-ORD-004",
            "16 of 24 bytes sent before TENSOR_DATA_END",
            response(shaken.clone()).data(1, 0, &data[..16]).end(1),
        ),
        bad("TR-ORD-005", "a second TENSOR_DATA_END", simple().end(1)),
        bad(
            "TR-ORD-006",
            "an empty tensor sent with one empty data frame",
            shaken
                .clone()
                .request(1, "empty", flags())
                .descriptor(1, &f32d(&[0]))
                .data(1, 0, &[])
                .end(1),
        ),
        bad(
            "TR-ORD-007",
            "the conversation ends before the tensor's TENSOR_DATA_END",
            response(shaken.clone()).data(1, 0, &data),
        ),
        bad(
            "TR-DSC-001",
            "total_data_bytes 32 for buffers of 24 bytes (and 32 bytes sent)",
            shaken
                .clone()
                .request(1, "weights", flags())
                .msg(1, Payload::TensorDescriptor(described(&weights, 32, 0, 1)))
                .data(1, 0, &[3; 32])
                .end(1),
        ),
        bad(
            "TR-DSC-002",
            "a TENSOR_PUT whose descriptor field is 4 bytes longer than the descriptor",
            shaken
                .clone()
                .msg(
                    3,
                    Payload::TensorPut(TensorPut {
                        tensor_key: LenBytes {
                            bytes: b"x".to_vec(),
                        },
                        descriptor: LenBytes {
                            bytes: [to_bytes(&f32d(&[4])), vec![0; 4]].concat(),
                        },
                        total_data_bytes: 16,
                    }),
                )
                .data(3, 0, &[1; 16])
                .end(3)
                .msg(3, Payload::TensorPutAck),
        ),
        bad(
            "TR-PUT-001",
            "a TENSOR_PUT_ACK after a request's response",
            simple().msg(1, Payload::TensorPutAck),
        ),
        bad(
            "TR-CMP-001",
            "a group of 2 members torn after 1 by a new request on its stream",
            composite(2, 1)
                .request(1, "weights", flags())
                .tensor(1, &weights, 24),
        ),
        bad(
            "TR-SHD-001",
            "shard_index 1 with total_shards 1",
            shaken
                .clone()
                .request(1, "weights", flags())
                .msg(1, Payload::TensorDescriptor(described(&weights, 24, 1, 1)))
                .data(1, 0, &data)
                .end(1),
        ),
        bad(
            "TR-SHD-002",
            "a shard (0 of 2) answering a request without PARALLEL_OK",
            Capture::default()
                .hellos_with(CapabilityFlags::new(), with_parallel())
                .request(1, "big", flags())
                .msg(
                    1,
                    Payload::TensorDescriptor(described(
                        &shard(&[1, 3], &[0, 0], &[2, 3]),
                        12,
                        0,
                        2,
                    )),
                )
                .data(1, 0, &[1; 12])
                .end(1),
        ),
        bad(
            "TR-SHD-003",
            "the second shard of a parallel transfer without a shard section",
            parallel_with(described(&f32d(&[1, 3]), 12, 1, 2)),
        ),
        bad(
            "TR-SHD-004",
            "the second shard names parent_shape [3, 3], the first [2, 3]",
            parallel_with(described(&shard(&[1, 3], &[1, 0], &[3, 3]), 12, 1, 2)),
        ),
        bad(
            "TR-SHD-005",
            "both shards at offset [0, 0]: they overlap and leave row 1 uncovered",
            parallel_with(described(&shard(&[1, 3], &[0, 0], &[2, 3]), 12, 1, 2)),
        ),
        bad(
            "TR-RDM-001",
            "RDMA_REGISTER although no peer advertised RDMA_DATA_PLANE (data then sent in frames)",
            response(shaken.clone())
                .msg(1, Payload::RdmaRegister(register(24)))
                .data(1, 0, &data)
                .end(1),
        ),
        bad(
            "TR-RDM-002",
            "RDMA_REGISTER length 4096 for total_data_bytes 24",
            rdma_with(&[register(4096)], with_rdma()),
        ),
        bad(
            "TR-RDM-003",
            "a destination RDMA_REGISTER without RDMA_GPUDIRECT",
            rdma_with(&[register(24), register(24)], with_rdma()),
        ),
        bad(
            "TR-ERR-001",
            "a TENSOR_DATA_END on a stream an ERROR closed",
            response(shaken.clone())
                .error(1, error_code::DEVICE_UNAVAILABLE, "device lost")
                .end(1),
        ),
        bad(
            "TR-ERR-002",
            "an ERROR with the undefined error_code 0x20",
            shaken.clone().request(1, "w", flags()).error(1, 0x20, "?"),
        ),
        bad(
            "TR-PNG-001",
            "a PONG without a PING",
            shaken.clone().msg(1, Payload::Pong(vec![])),
        ),
        bad(
            "TD-HDR-001",
            "a TENSOR_DESCRIPTOR whose descriptor starts with HRRX",
            {
                let mut bytes = to_bytes(&weights);
                bytes[3] = b'X';
                let p = TensorDescriptorPayload {
                    descriptor: bytes,
                    total_data_bytes: 24,
                    shard_index: 0,
                    total_shards: 1,
                };
                shaken
                    .clone()
                    .request(1, "weights", flags())
                    .msg(1, Payload::TensorDescriptor(p))
                    .data(1, 0, &data)
                    .end(1)
            },
        ),
        bad(
            "TR-DSC-003",
            "a CUDA buffer handle with sync_mode 1 (SYNC_EVENT), forbidden across machines",
            {
                let mut d = weights.clone();
                d.buffers[0].device_tag = 0x01; // CUDA
                d.buffers[0].sync_mode = 1;
                shaken
                    .clone()
                    .request(1, "weights", flags())
                    .tensor(1, &d, 24)
            },
        ),
    ]
}

impl Capture {
    /// Overwrites bytes at `offset` from the end of the last message's start:
    /// used to give the last header a payload_length its payload does not have.
    fn bytes_patched(mut self, from_last_header: usize, data: &[u8]) -> Self {
        let at = self.bytes.len() - 12 + from_last_header;
        self.bytes[at..at + data.len()].copy_from_slice(data);
        self
    }
}

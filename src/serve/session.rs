//! One connection's protocol state, without I/O: frames in, messages to send out.
//!
//! A [`Session`] takes each message the client sends ([`Session::receive`]), checks
//! it with the conversation rules ([`Conversation`]) before acting on it, and
//! returns a [`Reply`]: the messages to send and whether to close the connection.
//! The caller writes them ([`Reply::outputs`] splits tensors into TENSOR_DATA
//! frames within the client's maximum message size) and reports each one sent
//! ([`Session::sent`]), so that the conversation follows both directions. The
//! network server ([`super::Server`]) and the fuzz target drive the same code.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::limits::Limits;
use crate::schema::transport::{
    error_code, message_type, CapabilityFlags, ErrorPayload, Hello, LayoutEntry, LayoutList,
    MessageHeader, ShortBytes, TensorDescriptorPayload, TensorPut, PROTOCOL_VERSION,
};
use crate::schema::{LenBytes, DEVICE_CPU, LAYOUT_COMPOSITE};
use crate::stream::message::{error_code_for, Frame, MessageType, Payload};
use crate::stream::Conversation;
use crate::validate::rules::transport::TR_ERR_CLOSED;
use crate::validate::Violation;

use super::catalog::{Catalog, Chunk, Reservation, StoredTensor};
use super::respond::{respond, Context, Outgoing, Refusal, ERROR_REFUSED, SERVED_LAYOUTS};
use super::ServeOptions;

/// Smallest `max_message_size` a client may advertise: below it, descriptors and
/// error messages may not fit, and data frames would be absurdly many.
pub const MIN_CLIENT_MESSAGE_SIZE: u32 = 4096;

/// Longest ERROR message text sent.
const MAX_ERROR_TEXT: usize = 1024;

/// Something to send.
pub enum Action {
    /// One message.
    Message {
        /// Its stream.
        stream_id: u32,
        /// Its payload.
        payload: Payload,
    },
    /// One tensor: TENSOR_DESCRIPTOR, TENSOR_DATA frames, TENSOR_DATA_END.
    Tensor {
        /// Its stream.
        stream_id: u32,
        /// The tensor.
        tensor: Outgoing,
    },
}

/// One message on the wire, as [`Reply::outputs`] yields them.
pub enum Output<'a> {
    /// A message built in full.
    Frame(Frame),
    /// A TENSOR_DATA frame whose data is borrowed (written without copying).
    Data {
        /// Its stream.
        stream_id: u32,
        /// `byte_offset_in_buffer`.
        byte_offset_in_buffer: u64,
        /// The data.
        data: &'a [u8],
    },
}

/// What to do after a received message.
#[derive(Default)]
pub struct Reply {
    /// Messages to send, in order.
    pub sends: Vec<Action>,
    /// Close the connection once they are sent.
    pub close: bool,
}

impl Reply {
    /// The messages to write, in order, TENSOR_DATA frames carrying at most
    /// `max_payload - 8` bytes each.
    pub fn outputs(&self, max_payload: u32) -> impl Iterator<Item = Output<'_>> + Send + '_ {
        let frame_data = (max_payload as usize).saturating_sub(8).max(1);
        self.sends.iter().flat_map(
            move |s| -> Box<dyn Iterator<Item = Output<'_>> + Send + '_> {
                match s {
                    Action::Message { stream_id, payload } => Box::new(
                        Frame::new(*stream_id, payload)
                            .ok()
                            .map(Output::Frame)
                            .into_iter(),
                    ),
                    Action::Tensor { stream_id, tensor } => {
                        let id = *stream_id;
                        let head = TensorDescriptorPayload {
                            descriptor: tensor.descriptor.clone(),
                            total_data_bytes: tensor.total_data_bytes,
                            shard_index: 0,
                            total_shards: 1,
                        };
                        let descriptor = Frame::new(id, &Payload::TensorDescriptor(head))
                            .ok()
                            .map(Output::Frame);
                        let mut offset = 0u64;
                        let data = tensor
                            .data
                            .iter()
                            .flat_map(move |c: &Chunk| c.bytes().chunks(frame_data))
                            .map(move |piece| {
                                let o = offset;
                                offset += piece.len() as u64;
                                Output::Data {
                                    stream_id: id,
                                    byte_offset_in_buffer: o,
                                    data: piece,
                                }
                            });
                        let end = Frame::new(id, &Payload::TensorDataEnd)
                            .ok()
                            .map(Output::Frame);
                        Box::new(descriptor.into_iter().chain(data).chain(end))
                    }
                }
            },
        )
    }
}

/// A push in progress on a stream.
struct Put {
    key: String,
    descriptor: crate::schema::TensorDescriptor,
    data: Vec<u8>,
    reservation: Reservation,
}

/// Where the handshake is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    AwaitHello,
    Open,
    Closed,
}

/// One connection's protocol state (see the module documentation).
pub struct Session {
    catalog: Arc<Catalog>,
    options: ServeOptions,
    conversation: Conversation,
    phase: Phase,
    client: Option<Hello>,
    puts: BTreeMap<u32, Put>,
    /// Data bytes held by pushes in progress.
    put_bytes: u64,
}

impl Session {
    /// A session for a new connection.
    pub fn new(catalog: Arc<Catalog>, options: ServeOptions) -> Self {
        let conversation = Conversation::new(crate::validate::Options {
            judging: crate::validate::Judging::default(),
            limits: Limits {
                max_message_size: options.max_message_size,
                ..Limits::default()
            },
        });
        Session {
            catalog,
            options,
            conversation,
            phase: Phase::AwaitHello,
            client: None,
            puts: BTreeMap::new(),
            put_bytes: 0,
        }
    }

    /// The largest payload the client accepts (its CLIENT_HELLO's
    /// `max_message_size`; before it, this server's own maximum).
    pub fn client_max_message_size(&self) -> u32 {
        self.client
            .as_ref()
            .map_or(self.options.max_message_size, |h| h.max_message_size)
    }

    /// True once the session refused the client or ended.
    pub fn is_closed(&self) -> bool {
        self.phase == Phase::Closed
    }

    /// Data bytes this connection holds for pushes in progress.
    pub fn held_bytes(&self) -> u64 {
        self.put_bytes
    }

    /// Records a message written to the client (an ERROR closes its stream in the
    /// conversation; data frames advance its transfer).
    pub fn sent(&mut self, output: &Output<'_>) {
        // The server's own messages are right by construction; the conversation
        // follows them only to know each stream's state.
        match output {
            Output::Frame(f) => {
                let _ = self.conversation.accept(f);
            }
            Output::Data {
                stream_id,
                byte_offset_in_buffer,
                data,
            } => {
                let _ = self.conversation.accept_data_frame(
                    *stream_id,
                    *byte_offset_in_buffer,
                    data.len() as u64,
                );
            }
        }
    }

    /// Answer to a message whose `payload_length` is over this server's maximum
    /// (its payload not read): MESSAGE_TOO_LARGE on its stream. The caller skips
    /// the payload, or closes the connection.
    pub fn oversize(&mut self, header: &MessageHeader) -> Reply {
        let message = format!(
            "payload_length {} exceeds this server's max_message_size {}",
            header.payload_length, self.options.max_message_size
        );
        let mut reply = self.error(header.stream_id, error_code::MESSAGE_TOO_LARGE, message);
        if self.phase == Phase::AwaitHello {
            reply.close = true;
            self.phase = Phase::Closed;
        }
        reply
    }

    /// Whether the session still waits for the client's CLIENT_HELLO.
    pub fn awaits_hello(&self) -> bool {
        self.phase == Phase::AwaitHello
    }

    /// Screens a message by its header, before its payload is read: before the
    /// handshake only a CLIENT_HELLO of at most `max_hello_size` bytes is taken;
    /// anything else is refused (the connection closes, the payload unread).
    /// Over `max_message_size` at any time, see [`Session::oversize`]. `None`:
    /// read the payload and [`Session::receive`] it.
    pub fn screen(&mut self, header: &MessageHeader) -> Option<Reply> {
        if header.payload_length > self.options.max_message_size {
            return Some(self.oversize(header));
        }
        if self.phase != Phase::AwaitHello {
            return None;
        }
        if header.message_type != message_type::CLIENT_HELLO {
            let name = MessageType::from_tag(header.message_type)
                .map_or("an undefined message type", |t| t.name());
            let reply = self.error(
                header.stream_id,
                error_code::INVALID_MESSAGE,
                format!("expected CLIENT_HELLO before anything else, received {name}"),
            );
            return Some(self.close_if_unopened(reply));
        }
        if header.payload_length > self.options.max_hello_size {
            let message = format!(
                "a CLIENT_HELLO of {} bytes exceeds this server's limit of {} before the handshake",
                header.payload_length, self.options.max_hello_size
            );
            let reply = self.error(header.stream_id, error_code::MESSAGE_TOO_LARGE, message);
            return Some(self.close_if_unopened(reply));
        }
        None
    }

    /// Acts on the next message from the client.
    pub fn receive(&mut self, frame: &Frame) -> Reply {
        if self.phase == Phase::Closed {
            return Reply {
                close: true,
                ..Reply::default()
            };
        }
        let h = frame.header;
        let ty = MessageType::from_tag(h.message_type);
        if let Some(
            t @ (MessageType::ServerHello
            | MessageType::TensorDescriptor
            | MessageType::TensorPutAck),
        ) = ty
        {
            // Only a server sends these: the conversation would take them for ours.
            let reply = self.error(
                h.stream_id,
                error_code::INVALID_MESSAGE,
                format!("{} is sent by servers, not clients", t.name()),
            );
            return self.close_if_unopened(reply);
        }
        let violations = self.conversation.accept(frame);
        if h.stream_id == 0 {
            // The reserved stream cannot be answered on another: end the connection.
            let mut reply = self.error(0, error_code::INVALID_MESSAGE, "stream_id 0 is reserved");
            reply.close = true;
            self.phase = Phase::Closed;
            return reply;
        }
        if self.phase == Phase::AwaitHello {
            return self.hello(frame, &violations);
        }
        let in_flight = matches!(
            ty,
            Some(MessageType::TensorData | MessageType::TensorDataEnd)
        ) && !violations.is_empty()
            && violations.iter().all(|v| v.rule.id == TR_ERR_CLOSED.id);
        if in_flight {
            // Data of a push this server refused, sent before the client read the
            // ERROR: the stream is closed already, nothing to answer.
            return Reply::default();
        }
        if let Some(v) = violations.first() {
            let code = error_code_for(v.rule);
            let text = format!("{}: {}", v.rule.id, v.message);
            return self.error(h.stream_id, code, text);
        }
        if self.conversation.stream_count() > self.options.max_open_streams {
            let mut reply = self.error(
                h.stream_id,
                ERROR_REFUSED,
                format!(
                    "more than {} streams open on one connection",
                    self.options.max_open_streams
                ),
            );
            reply.close = true;
            self.phase = Phase::Closed;
            return reply;
        }
        let payload = match frame.decode(0) {
            Ok((p, _)) => p,
            // The conversation reported any payload that does not decode.
            Err(e) => return self.error(h.stream_id, error_code::INVALID_MESSAGE, e.to_string()),
        };
        let stream = h.stream_id;
        match payload {
            Payload::TensorRequest(r) => self.request(stream, &r),
            Payload::TensorPut(p) => self.put(stream, p),
            Payload::TensorData(_) => self.put_data(stream, &frame.payload[8..]),
            Payload::TensorDataEnd => self.put_end(stream),
            Payload::Error(_) => {
                self.drop_put(stream);
                Reply::default()
            }
            Payload::Ping(bytes) => Reply {
                sends: vec![Action::Message {
                    stream_id: stream,
                    payload: Payload::Pong(bytes),
                }],
                close: false,
            },
            Payload::Pong(_) => Reply::default(),
            // RDMA is not offered and private types are not agreed: the
            // conversation rules refuse them above. Anything else is a server's.
            _ => self.error(stream, error_code::INVALID_MESSAGE, "unexpected message"),
        }
    }

    /// The end of the connection: pushes in progress are dropped.
    pub fn finish(&mut self) {
        self.puts.clear();
        self.put_bytes = 0;
        self.phase = Phase::Closed;
    }

    fn close_if_unopened(&mut self, mut reply: Reply) -> Reply {
        if self.phase == Phase::AwaitHello {
            reply.close = true;
            self.phase = Phase::Closed;
        }
        reply
    }

    /// An ERROR on `stream` (which ends any push on it).
    fn error(&mut self, stream: u32, code: u32, message: impl Into<String>) -> Reply {
        self.drop_put(stream);
        let mut text: String = message.into();
        if text.len() > MAX_ERROR_TEXT {
            let mut cut = MAX_ERROR_TEXT;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
        }
        Reply {
            sends: vec![Action::Message {
                stream_id: stream,
                payload: Payload::Error(ErrorPayload {
                    error_code: code,
                    message: LenBytes {
                        bytes: text.into_bytes(),
                    },
                }),
            }],
            close: false,
        }
    }

    fn hello(&mut self, frame: &Frame, violations: &[Violation]) -> Reply {
        let stream = frame.header.stream_id;
        let refuse = |s: &mut Self, code, text: String| {
            let mut reply = s.error(stream, code, text);
            reply.close = true;
            s.phase = Phase::Closed;
            reply
        };
        if let Some(v) = violations.first() {
            let text = format!("{}: {}", v.rule.id, v.message);
            return refuse(self, error_code_for(v.rule), text);
        }
        let Some(client) = self.conversation.client_hello().cloned() else {
            return refuse(
                self,
                error_code::INVALID_MESSAGE,
                "expected CLIENT_HELLO".into(),
            );
        };
        if client.protocol_version < PROTOCOL_VERSION {
            return refuse(
                self,
                error_code::PROTOCOL_VERSION_MISMATCH,
                format!(
                    "protocol_version {} is older than this server's {PROTOCOL_VERSION}",
                    client.protocol_version
                ),
            );
        }
        if client.max_message_size < MIN_CLIENT_MESSAGE_SIZE {
            return refuse(
                self,
                ERROR_REFUSED,
                format!(
                    "max_message_size {} is below this server's minimum {MIN_CLIENT_MESSAGE_SIZE}",
                    client.max_message_size
                ),
            );
        }
        self.client = Some(client);
        self.phase = Phase::Open;
        let hello = Hello {
            protocol_version: PROTOCOL_VERSION,
            max_message_size: self.options.max_message_size,
            capability_flags: CapabilityFlags::new().with_transcoding(true),
            supported_layouts: LayoutList {
                entries: SERVED_LAYOUTS
                    .iter()
                    .map(|&layout_tag| LayoutEntry {
                        layout_tag,
                        ext_metadata: None,
                    })
                    .collect(),
            },
            supported_devices: ShortBytes {
                bytes: vec![DEVICE_CPU],
            },
            supported_memory_classes: Some(ShortBytes { bytes: vec![0] }),
        };
        Reply {
            sends: vec![Action::Message {
                stream_id: stream,
                payload: Payload::ServerHello(hello),
            }],
            close: false,
        }
    }

    fn request(&mut self, stream: u32, r: &crate::schema::transport::TensorRequest) -> Reply {
        // The conversation rules checked the key is UTF-8.
        let key = String::from_utf8_lossy(&r.tensor_key.bytes).into_owned();
        if r.preferred_device != DEVICE_CPU {
            return self.error(
                stream,
                error_code::DEVICE_UNAVAILABLE,
                format!(
                    "device {:#04x} is not available; this server has the CPU (0x00)",
                    r.preferred_device
                ),
            );
        }
        let Some(source) = self.catalog.lookup(&key) else {
            return self.error(
                stream,
                error_code::UNKNOWN_TENSOR,
                format!("no tensor {}", quoted_key(&key)),
            );
        };
        let context = Context {
            transcode_limit: self.options.transcode_limit,
            transcoding: self.catalog.transcoding(),
        };
        match respond(&source, r, &context) {
            Ok(tensors) => {
                let max = u64::from(self.client_max_message_size());
                if let Some(t) = tensors
                    .iter()
                    .find(|t| t.descriptor.len() as u64 + 16 > max)
                {
                    let text = format!(
                        "a TENSOR_DESCRIPTOR of {} bytes does not fit the client's max_message_size {max}",
                        t.descriptor.len() + 16
                    );
                    return self.error(stream, ERROR_REFUSED, text);
                }
                Reply {
                    sends: tensors
                        .into_iter()
                        .map(|tensor| Action::Tensor {
                            stream_id: stream,
                            tensor,
                        })
                        .collect(),
                    close: false,
                }
            }
            Err(Refusal { code, message }) => self.error(stream, code, message),
        }
    }

    fn put(&mut self, stream: u32, p: TensorPut) -> Reply {
        let key = String::from_utf8_lossy(&p.tensor_key.bytes).into_owned();
        // The conversation rules decoded and checked the descriptor.
        let Some(descriptor) = self.conversation.take_descriptor() else {
            return self.error(
                stream,
                error_code::INVALID_MESSAGE,
                "the descriptor does not decode",
            );
        };
        if descriptor.layout_tag == LAYOUT_COMPOSITE {
            return self.error(
                stream,
                ERROR_REFUSED,
                "a composite head cannot be pushed: TENSOR_PUT carries one tensor",
            );
        }
        if let Some(b) = descriptor
            .buffers
            .iter()
            .find(|b| b.device_tag != DEVICE_CPU)
        {
            return self.error(
                stream,
                error_code::DEVICE_UNAVAILABLE,
                format!(
                    "device {:#04x} is not available; this server stores on the CPU (0x00)",
                    b.device_tag
                ),
            );
        }
        if self.catalog.is_file_key(&key) {
            return self.error(
                stream,
                ERROR_REFUSED,
                format!(
                    "{} is served from a file and cannot be replaced",
                    quoted_key(&key)
                ),
            );
        }
        let total = p.total_data_bytes;
        let held = self.put_bytes.saturating_add(total);
        if held > self.options.connection_memory {
            return self.error(
                stream,
                ERROR_REFUSED,
                format!(
                    "pushes of {held} bytes in progress exceed the per-connection limit {}",
                    self.options.connection_memory
                ),
            );
        }
        let Some(reservation) = self.catalog.store().reserve(total) else {
            return self.error(
                stream,
                ERROR_REFUSED,
                format!(
                    "the store cannot take {total} more bytes (capacity {})",
                    self.catalog.store().limit()
                ),
            );
        };
        self.put_bytes = held;
        self.puts.insert(
            stream,
            Put {
                key,
                descriptor,
                data: Vec::new(),
                reservation,
            },
        );
        Reply::default()
    }

    fn put_data(&mut self, stream: u32, data: &[u8]) -> Reply {
        match self.puts.get_mut(&stream) {
            // The conversation checked the offsets follow on and stay within
            // total_data_bytes, which the reservation covers.
            Some(put) => {
                put.data.extend_from_slice(data);
                Reply::default()
            }
            None => self.error(
                stream,
                error_code::INVALID_MESSAGE,
                "TENSOR_DATA without a TENSOR_PUT",
            ),
        }
    }

    fn put_end(&mut self, stream: u32) -> Reply {
        let Some(put) = self.take_put(stream) else {
            return self.error(
                stream,
                error_code::INVALID_MESSAGE,
                "TENSOR_DATA_END without a TENSOR_PUT",
            );
        };
        put.reservation.commit(
            put.key,
            StoredTensor {
                descriptor: put.descriptor,
                data: Arc::new(put.data),
            },
        );
        Reply {
            sends: vec![Action::Message {
                stream_id: stream,
                payload: Payload::TensorPutAck,
            }],
            close: false,
        }
    }

    fn take_put(&mut self, stream: u32) -> Option<Put> {
        let put = self.puts.remove(&stream)?;
        self.put_bytes = self.put_bytes.saturating_sub(put.reservation_bytes());
        Some(put)
    }

    fn drop_put(&mut self, stream: u32) {
        self.take_put(stream);
    }
}

/// `key` quoted for an ERROR message, cut to its first 256 characters (a key may
/// be as long as a message: its text is never built whole).
fn quoted_key(key: &str) -> String {
    const SHOWN: usize = 256;
    match key.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("{:?}…", &key[..cut]),
        None => format!("{key:?}"),
    }
}

impl Put {
    fn reservation_bytes(&self) -> u64 {
        self.reservation.bytes()
    }
}

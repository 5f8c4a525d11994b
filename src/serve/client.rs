//! A blocking client of the tensor server: `fetch` a tensor (with its composite
//! members), `put` one, `ping`.
//!
//! Every message from the server is checked by the conversation rules before it is
//! used; a frame's data is read straight into the tensor's buffer.

use std::io::Read;
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use crate::layout::composite::Binder;
use crate::limits::Limits;
use crate::schema::transport::{
    error_code, CapabilityFlags, Hello, LayoutEntry, LayoutList, MessageHeader, RequestFlags,
    ShortBytes, TensorPut, TensorRequest, MESSAGE_HEADER_LEN, PROTOCOL_VERSION,
    TENSOR_DATA_HEADER_LEN,
};
use crate::schema::{read_from, LenBytes, TensorDescriptor, DEVICE_CPU};
use crate::stream::message::{write_data_frame, write_message, Frame, Payload};
use crate::stream::Conversation;

/// Why a client call failed.
///
/// A type of its own, not [`crate::Error`], because a caller of a network client
/// acts on cases a file has no counterpart for: the server's ERROR answer with its
/// code (a missing tensor, a layout it cannot serve: ask again otherwise), a
/// timeout or a closed connection (retry or reconnect), a server breaking the
/// protocol (give up on it). It converts both ways: a [`crate::Error`] of the
/// decoding and framing layer below is [`ClientError::Io`] when it is I/O and
/// [`ClientError::Protocol`] otherwise; a `ClientError` becomes a
/// [`crate::Error::Io`] (of kind `TimedOut`, `UnexpectedEof` or `InvalidData`
/// where they fit) for a caller that handles every failure of a source alike.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The connection failed.
    #[error("connection: {0}")]
    Io(#[from] std::io::Error),
    /// The server answered with ERROR.
    #[error("server error {code:#04x} ({}): {message}", error_name(*code))]
    Server {
        /// `error_code`.
        code: u32,
        /// The server's text.
        message: String,
    },
    /// The server broke the protocol.
    #[error("protocol: {0}")]
    Protocol(String),
    /// A limit of this client was reached.
    #[error("{0}")]
    Limit(String),
    /// No connection, or no answer, within the client's timeout; the text says
    /// what was awaited, in words.
    #[error("{0}")]
    TimedOut(String),
    /// The server closed the connection before answering; the text says what was
    /// awaited.
    #[error("{0}")]
    Closed(String),
}

impl From<crate::Error> for ClientError {
    fn from(e: crate::Error) -> Self {
        match e {
            crate::Error::Io(e) => ClientError::Io(e),
            e => ClientError::Protocol(e.to_string()),
        }
    }
}

impl From<ClientError> for crate::Error {
    fn from(e: ClientError) -> Self {
        use std::io::{Error as IoError, ErrorKind};
        let kind = match &e {
            ClientError::Io(_) => None,
            ClientError::TimedOut(_) => Some(ErrorKind::TimedOut),
            ClientError::Closed(_) => Some(ErrorKind::UnexpectedEof),
            ClientError::Protocol(_) | ClientError::Limit(_) => Some(ErrorKind::InvalidData),
            ClientError::Server { .. } => Some(ErrorKind::Other),
        };
        match (e, kind) {
            (ClientError::Io(e), _) => crate::Error::Io(e),
            (e, kind) => crate::Error::Io(IoError::new(
                kind.unwrap_or(ErrorKind::Other),
                e.to_string(),
            )),
        }
    }
}

/// The spec's name of an ERROR code.
pub fn error_name(code: u32) -> &'static str {
    match code {
        error_code::PROTOCOL_VERSION_MISMATCH => "PROTOCOL_VERSION_MISMATCH",
        error_code::UNKNOWN_TENSOR => "UNKNOWN_TENSOR",
        error_code::LAYOUT_UNAVAILABLE => "LAYOUT_UNAVAILABLE",
        error_code::TRANSCODE_LIMIT_EXCEEDED => "TRANSCODE_LIMIT_EXCEEDED",
        error_code::DEVICE_UNAVAILABLE => "DEVICE_UNAVAILABLE",
        error_code::INVALID_MESSAGE => "INVALID_MESSAGE",
        error_code::MESSAGE_TOO_LARGE => "MESSAGE_TOO_LARGE",
        error_code::SHARD_MISMATCH => "SHARD_MISMATCH",
        c if c == super::ERROR_REFUSED => "REFUSED (implementation-defined)",
        0xF0..=0xFE => "implementation-defined",
        _ => "undefined",
    }
}

/// Client settings.
#[derive(Clone, Debug)]
pub struct ClientOptions {
    /// Largest payload this client accepts (CLIENT_HELLO `max_message_size`).
    pub max_message_size: u32,
    /// Layouts this client consumes (CLIENT_HELLO `supported_layouts`; empty: any).
    pub supported_layouts: Vec<u8>,
    /// Largest tensor data (all tensors of one response together) accepted.
    pub max_tensor_bytes: u64,
    /// Time allowed to connect, and for each read and write of the socket
    /// (`None`: wait forever). A server at capacity leaves a new connection
    /// waiting for a slot: a client that times out then says so.
    pub timeout: Option<Duration>,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            max_message_size: crate::stream::message::DEFAULT_MAX_MESSAGE_SIZE,
            supported_layouts: Vec::new(),
            max_tensor_bytes: 64 << 30,
            timeout: Some(Duration::from_secs(60)),
        }
    }
}

/// Writes `tensors` (one fetch's answer: the tensor, then any composite members) as
/// a HRRYFILE to `sink`: the first under `key`, member `i` as `key.i`. This is the
/// file `hrry fetch -o OUT.hrry` writes.
pub fn write_received<W: std::io::Write>(
    key: &str,
    tensors: &[Received],
    sink: W,
) -> Result<W, crate::file::Error> {
    let mut w = crate::file::HrryWriter::new(sink, crate::file::WriterOptions::default())?;
    for (i, t) in tensors.iter().enumerate() {
        let name = if i == 0 {
            key.to_string()
        } else {
            format!("{key}.{}", i - 1)
        };
        w.begin_tensor(&name, &t.descriptor)?;
        w.write_data(&t.data)?;
        w.end_tensor()?;
    }
    w.finish()
}

/// One tensor received: its descriptor and its buffers' bytes back to back in
/// buffer-table order.
#[derive(Clone, Debug)]
pub struct Received {
    /// The descriptor.
    pub descriptor: TensorDescriptor,
    /// The data.
    pub data: Vec<u8>,
}

impl Received {
    /// Buffer `i` of the buffer table, as slices of the data.
    pub fn buffers(&self) -> Vec<&[u8]> {
        let mut at = 0usize;
        self.descriptor
            .buffers
            .iter()
            .map(|b| {
                let end = at.saturating_add(b.byte_size as usize).min(self.data.len());
                let s = &self.data[at.min(end)..end];
                at = end;
                s
            })
            .collect()
    }
}

/// What to ask for in a TENSOR_REQUEST.
#[derive(Clone, Debug, Default)]
pub struct FetchOptions {
    /// Preferred layouts, most preferred first (empty: no preference).
    pub layouts: Vec<u8>,
    /// Let the server transcode (ALLOW_TRANSCODE).
    pub allow_transcode: bool,
    /// Preferred device (0: CPU).
    pub device: u8,
    /// Minimum buffer alignment (a power of two; 0 asks for 64).
    pub min_alignment: u32,
}

/// A connection to a tensor server.
pub struct Client {
    socket: TcpStream,
    /// What the client waits for now, for the messages of [`ClientError::TimedOut`]
    /// and [`ClientError::Closed`].
    expecting: &'static str,
    options: ClientOptions,
    server: Hello,
    conversation: Conversation,
    next_stream: u32,
}

impl Client {
    /// Connects with default options and exchanges HELLOs.
    pub fn connect(addr: impl ToSocketAddrs) -> Result<Client, ClientError> {
        Client::connect_with(addr, ClientOptions::default())
    }

    /// Connects and exchanges HELLOs.
    pub fn connect_with(
        addr: impl ToSocketAddrs,
        options: ClientOptions,
    ) -> Result<Client, ClientError> {
        let socket = connect(addr, options.timeout)?;
        socket.set_nodelay(true)?;
        socket.set_read_timeout(options.timeout)?;
        socket.set_write_timeout(options.timeout)?;
        let conversation = Conversation::new(crate::validate::Options {
            judging: crate::validate::Judging::default(),
            limits: Limits {
                max_message_size: options.max_message_size,
                ..Limits::default()
            },
        });
        let mut client = Client {
            socket,
            expecting: SERVER_HELLO,
            options,
            server: Hello::default(),
            conversation,
            next_stream: 1,
        };
        let hello = Hello {
            protocol_version: PROTOCOL_VERSION,
            max_message_size: client.options.max_message_size,
            capability_flags: CapabilityFlags::new(),
            supported_layouts: layout_list(&client.options.supported_layouts),
            supported_devices: ShortBytes {
                bytes: vec![DEVICE_CPU],
            },
            supported_memory_classes: Some(ShortBytes { bytes: vec![0] }),
        };
        let stream = client.stream_id();
        client.send(stream, &Payload::ClientHello(hello))?;
        match client.receive()? {
            Payload::ServerHello(h) => client.server = h,
            other => return Err(unexpected("SERVER_HELLO", &other)),
        }
        Ok(client)
    }

    /// The server's HELLO.
    pub fn server_hello(&self) -> &Hello {
        &self.server
    }

    /// Fetches `key`: the tensor, or a composite head followed by its members.
    pub fn fetch(&mut self, key: &str, how: &FetchOptions) -> Result<Vec<Received>, ClientError> {
        let stream = self.stream_id();
        let request = TensorRequest {
            tensor_key: LenBytes {
                bytes: key.as_bytes().to_vec(),
            },
            preferred_layouts: layout_list(&how.layouts),
            preferred_device: how.device,
            min_alignment: if how.min_alignment == 0 {
                64
            } else {
                how.min_alignment
            },
            request_flags: RequestFlags::new().with_allow_transcode(how.allow_transcode),
        };
        self.send(stream, &Payload::TensorRequest(request))?;
        self.expecting = "the server's answer to TENSOR_REQUEST";
        let mut out = Vec::new();
        let mut binder = Binder::new();
        let mut budget = self.options.max_tensor_bytes;
        loop {
            let tensor = self.receive_tensor(stream, &mut budget)?;
            // The binder knows when the composite's members are all here.
            binder.bind((), &tensor.descriptor, 0);
            out.push(tensor);
            if binder.is_idle() {
                return Ok(out);
            }
        }
    }

    /// Pushes a tensor under `key`: its descriptor and buffer `i` of its buffer
    /// table in `buffers[i]`.
    pub fn put(
        &mut self,
        key: &str,
        descriptor: &TensorDescriptor,
        buffers: &[&[u8]],
    ) -> Result<(), ClientError> {
        let total: u64 = buffers.iter().map(|b| b.len() as u64).sum();
        let stream = self.stream_id();
        let put = TensorPut {
            tensor_key: LenBytes {
                bytes: key.as_bytes().to_vec(),
            },
            descriptor: LenBytes {
                bytes: crate::schema::to_bytes(descriptor),
            },
            total_data_bytes: total,
        };
        self.send(stream, &Payload::TensorPut(put))?;
        let max = self.server.max_message_size;
        let frame = (max as usize)
            .saturating_sub(TENSOR_DATA_HEADER_LEN as usize)
            .max(1);
        let mut offset = 0u64;
        for piece in buffers.iter().flat_map(|b| b.chunks(frame)) {
            write_data_frame(&mut self.socket, stream, offset, piece, max)
                .map_err(|e| ClientError::Protocol(e.to_string()))?;
            let _ = self
                .conversation
                .accept_data_frame(stream, offset, piece.len() as u64);
            offset += piece.len() as u64;
        }
        self.send(stream, &Payload::TensorDataEnd)?;
        self.expecting = "the server's TENSOR_PUT_ACK";
        match self.receive()? {
            Payload::TensorPutAck => Ok(()),
            other => Err(unexpected("TENSOR_PUT_ACK", &other)),
        }
    }

    /// Sends PING with `bytes` and waits for the PONG echoing them.
    pub fn ping(&mut self, bytes: &[u8]) -> Result<(), ClientError> {
        let stream = self.stream_id();
        self.send(stream, &Payload::Ping(bytes.to_vec()))?;
        self.expecting = "the server's PONG";
        match self.receive()? {
            Payload::Pong(b) if b == bytes => Ok(()),
            other => Err(unexpected("PONG", &other)),
        }
    }

    /// A fresh stream ID for the next exchange (never 0).
    fn stream_id(&mut self) -> u32 {
        let id = self.next_stream;
        self.next_stream = self.next_stream.checked_add(1).unwrap_or(1);
        id
    }

    fn send(&mut self, stream: u32, payload: &Payload) -> Result<(), ClientError> {
        let max = if matches!(payload, Payload::ClientHello(_)) {
            u32::MAX
        } else {
            self.server.max_message_size
        };
        let frame = Frame::new(stream, payload).map_err(|e| ClientError::Limit(e.to_string()))?;
        if frame.header.payload_length > max {
            return Err(ClientError::Limit(format!(
                "a payload of {} bytes exceeds the server's max_message_size {max}",
                frame.header.payload_length
            )));
        }
        write_message(&mut self.socket, stream, payload, max).map_err(|e| match e {
            crate::error::Error::Io(e) => self.lost(e),
            e => ClientError::Protocol(e.to_string()),
        })?;
        let _ = self.conversation.accept(&frame);
        Ok(())
    }

    fn header(&mut self) -> Result<MessageHeader, ClientError> {
        let mut head = [0u8; MESSAGE_HEADER_LEN as usize];
        self.socket
            .read_exact(&mut head)
            .map_err(|e| self.lost(e))?;
        let header = read_from::<MessageHeader>(&head)
            .map_err(|e| ClientError::Protocol(e.to_string()))?
            .0;
        if header.payload_length > self.options.max_message_size {
            return Err(ClientError::Protocol(format!(
                "payload_length {} exceeds this client's max_message_size {}",
                header.payload_length, self.options.max_message_size
            )));
        }
        Ok(header)
    }

    /// The next message, checked by the conversation rules (an ERROR becomes
    /// [`ClientError::Server`]).
    fn receive(&mut self) -> Result<Payload, ClientError> {
        let header = self.header()?;
        self.receive_payload(header)
    }

    fn receive_payload(&mut self, header: MessageHeader) -> Result<Payload, ClientError> {
        let mut payload = Vec::new();
        let want = u64::from(header.payload_length);
        let got = (&mut self.socket)
            .take(want)
            .read_to_end(&mut payload)
            .map_err(|e| self.lost(e))? as u64;
        if got < want {
            return Err(ClientError::Protocol(
                "the server closed mid-message".into(),
            ));
        }
        let frame = Frame { header, payload };
        let violations = self.conversation.accept(&frame);
        let (payload, _) = frame
            .decode(0)
            .map_err(|e| ClientError::Protocol(e.to_string()))?;
        if let Payload::Error(e) = payload {
            return Err(ClientError::Server {
                code: e.error_code,
                message: String::from_utf8_lossy(&e.message.bytes).into_owned(),
            });
        }
        if let Some(v) = violations.first() {
            return Err(ClientError::Protocol(format!(
                "{}: {}",
                v.rule.id, v.message
            )));
        }
        Ok(payload)
    }

    /// One tensor of a response: descriptor, data frames read into place, end.
    fn receive_tensor(&mut self, stream: u32, budget: &mut u64) -> Result<Received, ClientError> {
        let descriptor = match self.receive()? {
            Payload::TensorDescriptor(p) => p,
            other => return Err(unexpected("TENSOR_DESCRIPTOR", &other)),
        };
        let total = descriptor.total_data_bytes;
        if total > *budget {
            return Err(ClientError::Limit(format!(
                "the response needs {total} more bytes than max_tensor_bytes allows"
            )));
        }
        *budget -= total;
        // The conversation rules decoded and checked the descriptor.
        let d = self
            .conversation
            .take_descriptor()
            .ok_or_else(|| ClientError::Protocol("the descriptor does not decode".into()))?;
        let mut data: Vec<u8> = Vec::new();
        data.try_reserve_exact(total as usize)
            .map_err(|_| ClientError::Limit(format!("cannot allocate {total} bytes")))?;
        loop {
            let header = self.header()?;
            if header.message_type != crate::schema::transport::message_type::TENSOR_DATA
                || header.stream_id != stream
            {
                match self.receive_payload(header)? {
                    Payload::TensorDataEnd if data.len() as u64 == total => {
                        return Ok(Received {
                            descriptor: d,
                            data,
                        })
                    }
                    other => return Err(unexpected("TENSOR_DATA or TENSOR_DATA_END", &other)),
                }
            }
            let length = u64::from(header.payload_length);
            if length < TENSOR_DATA_HEADER_LEN {
                return Err(ClientError::Protocol(
                    "a TENSOR_DATA frame without its offset".into(),
                ));
            }
            let mut offset = [0u8; 8];
            self.socket
                .read_exact(&mut offset)
                .map_err(|e| self.lost(e))?;
            let offset = u64::from_le_bytes(offset);
            let len = length - TENSOR_DATA_HEADER_LEN;
            if let Some(v) = self
                .conversation
                .accept_data_frame(stream, offset, len)
                .first()
            {
                return Err(ClientError::Protocol(format!(
                    "{}: {}",
                    v.rule.id, v.message
                )));
            }
            // The conversation checked the frame follows on and stays within total.
            let got = (&mut self.socket)
                .take(len)
                .read_to_end(&mut data)
                .map_err(|e| self.lost(e))? as u64;
            if got < len {
                return Err(ClientError::Protocol("the server closed mid-frame".into()));
            }
        }
    }
}

/// What a client waits for first.
const SERVER_HELLO: &str = "the server's SERVER_HELLO";

/// Why a server may not answer a new connection, for the messages saying it did not.
const AT_CAPACITY: &str = "the server may be at capacity, every connection slot taken";

/// Whether `e` is a socket timeout (a read or write timeout shows as `WouldBlock`
/// on Linux, `TimedOut` elsewhere).
fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

/// Seconds of `timeout`, for messages.
fn seconds(timeout: Option<Duration>) -> f64 {
    timeout.map_or(0.0, |t| t.as_secs_f64())
}

/// Connects to the first address of `addr` that answers, each try within
/// `timeout`.
fn connect(addr: impl ToSocketAddrs, timeout: Option<Duration>) -> Result<TcpStream, ClientError> {
    let mut last = None;
    for a in addr.to_socket_addrs()? {
        let tried = match timeout {
            Some(t) => TcpStream::connect_timeout(&a, t),
            None => TcpStream::connect(a),
        };
        match tried {
            Ok(s) => return Ok(s),
            Err(e) if is_timeout(&e) => {
                last = Some(ClientError::TimedOut(format!(
                    "timed out after {} s connecting to {a} ({AT_CAPACITY}, or unreachable)",
                    seconds(timeout)
                )))
            }
            Err(e) => last = Some(ClientError::Io(e)),
        }
    }
    Err(last.unwrap_or_else(|| {
        ClientError::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "the address names no host",
        ))
    }))
}

impl Client {
    /// The error for a failed read or write of the socket, in words when the
    /// server did not answer in time or closed the connection.
    fn lost(&self, e: std::io::Error) -> ClientError {
        let hello = self.expecting == SERVER_HELLO;
        if is_timeout(&e) {
            let why = if hello {
                format!(" ({AT_CAPACITY})")
            } else {
                String::new()
            };
            return ClientError::TimedOut(format!(
                "timed out after {} s waiting for {}{why}",
                seconds(self.options.timeout),
                self.expecting
            ));
        }
        if matches!(
            e.kind(),
            std::io::ErrorKind::UnexpectedEof
                | std::io::ErrorKind::ConnectionReset
                | std::io::ErrorKind::ConnectionAborted
                | std::io::ErrorKind::BrokenPipe
        ) {
            let why = if hello {
                " (a server at capacity, or one that refused this client)"
            } else {
                ""
            };
            return ClientError::Closed(format!(
                "the server closed the connection while this client waited for {}{why}",
                self.expecting
            ));
        }
        ClientError::Io(e)
    }
}

fn layout_list(tags: &[u8]) -> LayoutList {
    LayoutList {
        entries: tags
            .iter()
            .map(|&layout_tag| LayoutEntry {
                layout_tag,
                ext_metadata: None,
            })
            .collect(),
    }
}

fn unexpected(wanted: &str, got: &Payload) -> ClientError {
    let name = crate::stream::message::MessageType::from_tag(got.message_type())
        .map_or("a private message", |t| t.name());
    ClientError::Protocol(format!("expected {wanted}, received {name}"))
}

#[cfg(test)]
mod tests {
    use super::ClientError;
    use std::io::ErrorKind;

    #[test]
    fn client_errors_convert_both_ways_keeping_what_a_caller_acts_on() {
        let timed_out: crate::Error = ClientError::TimedOut("no HELLO within 5 s".into()).into();
        match timed_out {
            crate::Error::Io(e) => {
                assert_eq!(e.kind(), ErrorKind::TimedOut);
                assert_eq!(e.to_string(), "no HELLO within 5 s");
            }
            other => panic!("{other:?}"),
        }
        let closed: crate::Error = ClientError::Closed("the server closed".into()).into();
        assert!(matches!(closed, crate::Error::Io(e) if e.kind() == ErrorKind::UnexpectedEof));
        let back: ClientError = crate::Error::Io(std::io::Error::other("reset")).into();
        assert!(matches!(back, ClientError::Io(_)));
        let refused: ClientError = crate::Error::Usage("frame too long".into()).into();
        assert!(
            matches!(&refused, ClientError::Protocol(m) if m == "invalid use: frame too long"),
            "{refused:?}"
        );
    }
}

//! The conversation validator: transport messages checked one at a time against
//! the session, per-stream ordering, composite and parallel-transfer rules of
//! interchange.md.
//!
//! A [`Conversation`] is a state machine: [`Conversation::accept`] takes the next
//! message seen on a connection (either direction, in the order they crossed) and
//! returns the violations it causes; [`Conversation::finish`] reports what the end
//! of the connection leaves unfinished. A server drives it live; a captured
//! conversation (messages back to back, as on the wire) goes through
//! [`crate::Format::validate_reader`] with [`crate::Format::Messages`].
//!
//! Directions are inferred from the message types and each stream's state: a
//! TENSOR_DATA frame on a stream that received a TENSOR_PUT comes from the client,
//! one after a TENSOR_DESCRIPTOR from the server.

use std::collections::BTreeMap;
use std::io::Read;

use crate::layout::composite::{partition_fault, Binder, PartitionFault};

use crate::decode::header::{descriptor, fixed_header, stated_length};
use crate::decode::tensor::{bind_composite, check_tensor, Owned};
use crate::schema::transport::{
    descriptor_payload_offsets as dpo, error_code, is_extension_layout, CapabilityFlags, Hello,
    LayoutList, ShortBytes, TensorDescriptorPayload, MESSAGE_HEADER_LEN, TENSOR_DATA_HEADER_LEN,
};
use crate::schema::{
    descriptor_offsets as doff, layout_tag_known, LenBytes, TensorDescriptor, DESCRIPTOR_HEADER_LEN,
};
use crate::validate::rules::transport::*;
use crate::validate::{Options, Report, Rule, Violation};

use super::message::{is_private_type, read_frame, Frame, MessageType, Payload};
use super::Error;

/// Validates a captured conversation read from `source` — messages back to back
/// (header and payload), in the order they crossed the connection, both
/// directions — one message in memory at a time (a payload over
/// [`crate::Limits::max_message_size`] is refused before it is read). Only an I/O error
/// of the source is an `Err`.
pub(crate) fn validate_messages<R: Read>(
    mut source: R,
    options: &Options,
) -> std::io::Result<Report> {
    let mut report = options.report();
    let mut conversation = Conversation::new(*options);
    loop {
        let at = conversation.position();
        // A payload over the maximum is refused before it is read, as a receiver
        // would (`TR-LIM-001`).
        match read_frame(&mut source, at, options.limits.max_message_size) {
            Ok(Some(frame)) => {
                for v in conversation.accept(&frame) {
                    report.violation(v.rule, v.offset, v.message);
                }
            }
            Ok(None) => break,
            Err(Error::Invalid(v)) => {
                report.violation(v.rule, v.offset, v.message);
                // A cut capture leaves exchanges open: that is the same fault, so
                // the end-of-conversation checks are not run.
                report.fatal = true;
                return Ok(report);
            }
            Err(Error::Io(e)) => return Err(e),
            Err(e) => return Err(std::io::Error::other(e.to_string())),
        }
    }
    for v in conversation.finish() {
        report.violation(v.rule, v.offset, v.message);
    }
    Ok(report)
}

/// Where the session is (interchange.md § Session Establishment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Session {
    /// Nothing seen yet.
    Start,
    /// CLIENT_HELLO seen, SERVER_HELLO not yet.
    AwaitServerHello,
    /// Both HELLOs exchanged (or the first message was not a HELLO: reported once,
    /// then judged as if the session were open).
    Open,
    /// The server answered the client's HELLO with ERROR: the connection ends.
    Refused,
}

/// One tensor's transfer on a stream: after its TENSOR_DESCRIPTOR (or TENSOR_PUT),
/// until its TENSOR_DATA_END.
#[derive(Clone, Debug)]
struct Transfer {
    /// Offset of the message that began it.
    since: u64,
    /// `total_data_bytes`, when the message decoded.
    total: Option<u64>,
    /// Bytes of data frames so far, and how many frames.
    received: u64,
    frames: u64,
    /// A frame was already reported for going past `total` (report once).
    overrun: bool,
    /// RDMA_REGISTER messages seen, and whether RDMA_READY came.
    registers: u8,
    ready: bool,
}

impl Transfer {
    fn new(since: u64, total: Option<u64>) -> Self {
        Transfer {
            since,
            total,
            received: 0,
            frames: 0,
            overrun: false,
            registers: 0,
            ready: false,
        }
    }
}

/// Where one stream's exchange is.
#[derive(Clone, Debug)]
enum Phase {
    /// No exchange open (never used, or the last one ended).
    Idle,
    /// An ERROR closed the stream; only a new request or put may follow.
    Closed,
    /// A TENSOR_REQUEST awaits its response.
    Requested { since: u64 },
    /// A tensor of the response is being sent (server to client).
    Sending(Transfer),
    /// Between members of a composite in the response.
    BetweenMembers,
    /// A pushed tensor is being sent (client to server).
    Putting(Transfer),
    /// The put's data ended; TENSOR_PUT_ACK (or ERROR) is due.
    AwaitAck { since: u64 },
}

/// One stream's state.
#[derive(Clone, Debug)]
struct StreamState {
    phase: Phase,
    /// Composites of the current response, with their descriptors for the
    /// close-time checks.
    binder: Binder<(u64, TensorDescriptor)>,
    /// PINGs not yet answered.
    pings: u64,
}

impl StreamState {
    /// True when nothing distinguishes the stream from one never used.
    fn is_fresh(&self) -> bool {
        matches!(self.phase, Phase::Idle) && self.binder.is_idle() && self.pings == 0
    }
}

impl Default for StreamState {
    fn default() -> Self {
        StreamState {
            phase: Phase::Idle,
            binder: Binder::new(),
            pings: 0,
        }
    }
}

/// A parallel transfer: shards answering one TENSOR_REQUEST with PARALLEL_OK.
#[derive(Clone, Debug)]
struct ParallelTransfer {
    /// The stream of the request.
    request_stream: u32,
    /// `total_shards` of the first shard, once one arrived.
    total_shards: Option<u32>,
    /// The shards so far: descriptor offset, shard_index, descriptor.
    shards: Vec<(u64, u32, TensorDescriptor)>,
    /// Offset of the request.
    since: u64,
}

/// The conversation state machine (see the module documentation).
#[derive(Clone, Debug)]
pub struct Conversation {
    options: Options,
    position: u64,
    messages: u64,
    session: Session,
    client_hello: Option<Hello>,
    server_hello: Option<Hello>,
    streams: BTreeMap<u32, StreamState>,
    /// Open parallel transfers, oldest first.
    parallel: Vec<ParallelTransfer>,
    /// The descriptor the last message accepted carried, as decoded and checked.
    descriptor: Option<TensorDescriptor>,
}

/// The violations of one message, filtered by mode.
struct Found<'r> {
    report: &'r mut Report,
}

impl Found<'_> {
    fn add(&mut self, rule: &'static Rule, offset: u64, message: impl Into<String>) {
        self.report.violation(rule, offset, message);
    }
}

impl Conversation {
    /// A conversation before its first message.
    pub fn new(options: Options) -> Self {
        Conversation {
            options,
            position: 0,
            messages: 0,
            session: Session::Start,
            client_hello: None,
            server_hello: None,
            streams: BTreeMap::new(),
            parallel: Vec::new(),
            descriptor: None,
        }
    }

    /// Takes the descriptor the last message accepted carried (a TENSOR_DESCRIPTOR
    /// or a TENSOR_PUT), as the conversation rules decoded it: `None` when that
    /// message carried none or it did not decode. A side that acts on the message
    /// uses it instead of decoding the descriptor again.
    pub fn take_descriptor(&mut self) -> Option<TensorDescriptor> {
        self.descriptor.take()
    }

    /// Offset of the next message: the encoded size of every message accepted.
    pub fn position(&self) -> u64 {
        self.position
    }

    /// Messages accepted so far.
    pub fn messages(&self) -> u64 {
        self.messages
    }

    /// The CLIENT_HELLO, once seen (and decoded).
    pub fn client_hello(&self) -> Option<&Hello> {
        self.client_hello.as_ref()
    }

    /// The SERVER_HELLO, once seen (and decoded).
    pub fn server_hello(&self) -> Option<&Hello> {
        self.server_hello.as_ref()
    }

    /// Takes the next message and returns the violations it causes (those of
    /// rules the mode enforces), located at absolute offsets counted from the
    /// first message.
    pub fn accept(&mut self, frame: &Frame) -> Vec<Violation> {
        self.descriptor = None;
        let mut report = self.options.report();
        let at = self.position;
        self.position += frame.encoded_len();
        self.accept_at(
            frame,
            at,
            &mut Found {
                report: &mut report,
            },
        );
        self.messages += 1;
        // A stream back where it started needs no memory: a long connection cycling
        // through stream IDs holds only the streams with something open.
        let id = frame.header.stream_id;
        if self.streams.get(&id).is_some_and(StreamState::is_fresh) {
            self.streams.remove(&id);
        }
        report.violations
    }

    /// [`Conversation::accept`] for a TENSOR_DATA frame known by its header fields
    /// only: `data_len` bytes at `byte_offset_in_buffer` on `stream_id`. For a side
    /// that sends (or receives) data straight from (into) its own buffers and never
    /// holds the frame's payload as a [`Frame`].
    pub fn accept_data_frame(
        &mut self,
        stream_id: u32,
        byte_offset_in_buffer: u64,
        data_len: u64,
    ) -> Vec<Violation> {
        let mut report = self.options.report();
        let at = self.position;
        let payload_length = TENSOR_DATA_HEADER_LEN.saturating_add(data_len);
        self.position = self
            .position
            .saturating_add(MESSAGE_HEADER_LEN + payload_length);
        let mut found = Found {
            report: &mut report,
        };
        if stream_id == 0 {
            found.add(&TR_MSG_STREAM_ID, at + 4, "stream_id 0 is reserved");
        }
        let length = u32::try_from(payload_length).unwrap_or(u32::MAX);
        self.check_advertised_size(MessageType::TensorData, stream_id, length, at, &mut found);
        self.on_data(
            stream_id,
            Some((byte_offset_in_buffer, data_len)),
            at,
            &mut found,
        );
        self.messages += 1;
        report.violations
    }

    /// How many streams the conversation remembers (see [`Conversation::stream_ids`]):
    /// what its memory grows with.
    pub fn stream_count(&self) -> usize {
        self.streams.len()
    }

    /// Reports what the end of the connection leaves unfinished: unanswered
    /// requests, tensors without TENSOR_DATA_END, torn composites, missing shards,
    /// a HELLO without an answer.
    pub fn finish(&self) -> Vec<Violation> {
        let mut report = self.options.report();
        let mut found = Found {
            report: &mut report,
        };
        if self.session == Session::AwaitServerHello {
            found.add(
                &TR_HEL_SERVER,
                0,
                "the conversation ends before the server answers CLIENT_HELLO",
            );
        }
        for (id, s) in &self.streams {
            let unfinished = |what: &str, since: u64| {
                format!("stream {id}: the conversation ends {what} (begun at offset {since})")
            };
            match &s.phase {
                Phase::Idle | Phase::Closed => {}
                Phase::Requested { since } => found.add(
                    &TR_ORD_UNFINISHED,
                    *since,
                    unfinished("before the TENSOR_REQUEST is answered", *since),
                ),
                Phase::Sending(t) | Phase::Putting(t) => found.add(
                    &TR_ORD_UNFINISHED,
                    t.since,
                    unfinished("before the tensor's TENSOR_DATA_END", t.since),
                ),
                Phase::AwaitAck { since } => found.add(
                    &TR_ORD_UNFINISHED,
                    *since,
                    unfinished("before TENSOR_PUT_ACK", *since),
                ),
                Phase::BetweenMembers => torn(&mut found, *id, s, "the conversation ends"),
            }
        }
        for p in &self.parallel {
            if let Some(total) = p.total_shards {
                found.add(
                    &TR_SHD_CONSISTENT,
                    p.since,
                    format!(
                        "the parallel transfer requested on stream {} ends with {} of its {total} shards",
                        p.request_stream,
                        p.shards.len()
                    ),
                );
            }
        }
        report.violations
    }

    fn accept_at(&mut self, frame: &Frame, at: u64, found: &mut Found<'_>) {
        let h = frame.header;
        let payload_at = at + MESSAGE_HEADER_LEN;
        let Some(ty) = MessageType::from_tag(h.message_type) else {
            if is_private_type(h.message_type) {
                found.add(
                    &TR_MSG_PRIVATE,
                    at,
                    format!(
                        "private message type {:#04x} needs an agreement this conversation does not show",
                        h.message_type
                    ),
                );
            } else {
                found.add(
                    &TR_MSG_TYPE,
                    at,
                    format!(
                        "message_type {:#010x} is not defined (0x01-0x0D, private 0xF0-0xFE)",
                        h.message_type
                    ),
                );
            }
            self.check_first(ty_name(h.message_type), at, false, found);
            return;
        };
        if h.stream_id == 0 {
            found.add(&TR_MSG_STREAM_ID, at + 4, "stream_id 0 is reserved");
        }
        if h.payload_length > self.options.limits.max_message_size {
            found.add(
                &TR_LIM,
                at + 8,
                format!(
                    "payload_length {} exceeds the maximum message size {}",
                    h.payload_length, self.options.limits.max_message_size
                ),
            );
        }
        self.check_advertised_size(ty, h.stream_id, h.payload_length, at, found);
        if self.session == Session::Refused {
            found.add(
                &TR_HEL_SERVER,
                at,
                format!(
                    "{} after the server refused the session with ERROR",
                    ty.name()
                ),
            );
        }
        self.check_first(ty.name(), at, ty == MessageType::ClientHello, found);

        let decoded = match frame.decode(at) {
            Ok((payload, used)) => {
                if used < frame.payload.len() as u64 {
                    found.add(
                        &TR_MSG_TRAILING,
                        payload_at + used,
                        format!(
                            "{} bytes follow the last field of the {} payload",
                            frame.payload.len() as u64 - used,
                            ty.name()
                        ),
                    );
                }
                Some(payload)
            }
            Err(Error::Invalid(v)) => {
                // A descriptor whose own header is broken names the fault better
                // than "the payload does not decode".
                if ty != MessageType::TensorDescriptor
                    || self.descriptor_header_ok(&frame.payload, payload_at, found)
                {
                    found.add(v.rule, v.offset, v.message);
                }
                None
            }
            Err(_) => None,
        };
        let stream = h.stream_id;
        match ty {
            MessageType::ClientHello => self.on_client_hello(decoded, at, found),
            MessageType::ServerHello => self.on_server_hello(decoded, at, found),
            MessageType::TensorRequest => self.on_request(stream, decoded, at, found),
            MessageType::TensorDescriptor => self.on_descriptor(stream, decoded, at, found),
            MessageType::TensorData => {
                let span = match decoded {
                    Some(Payload::TensorData(d)) => {
                        Some((d.byte_offset_in_buffer, d.data.len() as u64))
                    }
                    _ => None,
                };
                self.on_data(stream, span, at, found)
            }
            MessageType::TensorDataEnd => self.on_data_end(stream, at, found),
            MessageType::TensorPut => self.on_put(stream, decoded, at, found),
            MessageType::TensorPutAck => self.on_put_ack(stream, at, found),
            MessageType::Error => self.on_error(stream, decoded, at, found),
            MessageType::Ping => self.stream(stream).pings += 1,
            MessageType::Pong => {
                let s = self.stream(stream);
                if s.pings == 0 {
                    found.add(
                        &TR_PNG_ANSWER,
                        at,
                        format!("stream {stream}: PONG without an unanswered PING"),
                    );
                } else {
                    s.pings -= 1;
                }
            }
            MessageType::RdmaRegister => self.on_rdma_register(stream, decoded, at, found),
            MessageType::RdmaReady => self.on_rdma_ready(stream, at, found),
        }
    }

    fn stream(&mut self, id: u32) -> &mut StreamState {
        self.streams.entry(id).or_default()
    }

    /// `TR-HEL-001`: the first message is CLIENT_HELLO.
    fn check_first(&mut self, name: &str, at: u64, is_client_hello: bool, found: &mut Found<'_>) {
        if self.session == Session::Start && !is_client_hello {
            found.add(
                &TR_HEL_FIRST,
                at,
                format!("the conversation starts with {name}, not CLIENT_HELLO"),
            );
            // Judge the rest as if the handshake had happened.
            self.session = Session::Open;
        }
    }

    /// `TR-FRM-002`: a message fits the receiving side's advertised maximum.
    fn check_advertised_size(
        &self,
        ty: MessageType,
        stream: u32,
        payload_length: u32,
        at: u64,
        found: &mut Found<'_>,
    ) {
        let putting = matches!(self.phase(stream), Some(Phase::Putting(_)));
        let client_max = self.client_hello.as_ref().map(|h| h.max_message_size);
        let server_max = self.server_hello.as_ref().map(|h| h.max_message_size);
        use MessageType as T;
        let (limit, receiver) = match ty {
            T::ClientHello | T::TensorRequest | T::TensorPut => (server_max, "server"),
            T::TensorData | T::TensorDataEnd if putting => (server_max, "server"),
            T::ServerHello
            | T::TensorDescriptor
            | T::TensorPutAck
            | T::TensorData
            | T::TensorDataEnd => (client_max, "client"),
            // Either side may send these: the larger limit is the one surely broken.
            _ => (client_max.max(server_max), "receiver"),
        };
        if let Some(limit) = limit.filter(|&l| payload_length > l) {
            found.add(
                &TR_FRM_MAX_SIZE,
                at + 8,
                format!(
                    "{} payload_length {payload_length} exceeds the {receiver}'s max_message_size {limit}",
                    ty.name()
                ),
            );
        }
    }

    /// The phase of `stream`, if it carried a message.
    fn phase(&self, stream: u32) -> Option<&Phase> {
        self.streams.get(&stream).map(|s| &s.phase)
    }

    /// Data frames and ends on a stream receiving a response come from the server:
    /// they wait for SERVER_HELLO too.
    fn check_response_data(&self, stream: u32, name: &str, at: u64, found: &mut Found<'_>) {
        if matches!(self.phase(stream), Some(Phase::Sending(_))) {
            self.check_server_may_speak(name, at, found);
        }
    }

    /// Messages only a server sends must wait for SERVER_HELLO (`TR-HEL-002`).
    fn check_server_may_speak(&self, name: &str, at: u64, found: &mut Found<'_>) {
        if self.session == Session::AwaitServerHello {
            found.add(&TR_HEL_SERVER, at, format!("{name} before SERVER_HELLO"));
        }
    }

    fn on_client_hello(&mut self, hello: Option<Payload>, at: u64, found: &mut Found<'_>) {
        if self.client_hello.is_some() || self.messages > 0 {
            found.add(&TR_HEL_ONCE, at, "a second CLIENT_HELLO on the connection");
            return;
        }
        self.session = Session::AwaitServerHello;
        if let Some(Payload::ClientHello(h)) = hello {
            check_hello(&h, at + MESSAGE_HEADER_LEN, "CLIENT_HELLO", found);
            self.client_hello = Some(h);
        }
    }

    fn on_server_hello(&mut self, hello: Option<Payload>, at: u64, found: &mut Found<'_>) {
        if self.server_hello.is_some() {
            found.add(&TR_HEL_ONCE, at, "a second SERVER_HELLO on the connection");
            return;
        }
        if self.session == Session::AwaitServerHello {
            self.session = Session::Open;
        }
        let Some(Payload::ServerHello(h)) = hello else {
            return;
        };
        let base = at + MESSAGE_HEADER_LEN;
        check_hello(&h, base, "SERVER_HELLO", found);
        if let Some(client) = &self.client_hello {
            if h.protocol_version > client.protocol_version {
                found.add(
                    &TR_HEL_VERSION,
                    base,
                    format!(
                        "SERVER_HELLO protocol_version {} exceeds the client's {}",
                        h.protocol_version, client.protocol_version
                    ),
                );
            }
        }
        self.server_hello = Some(h);
    }

    /// Opens a new exchange on `stream` for `what` at `at`: the previous one must
    /// have ended (`TR-REQ-003`, or `TR-CMP-001` when members were still due).
    fn open_exchange(&mut self, stream: u32, what: &str, at: u64, found: &mut Found<'_>) {
        let s = self.stream(stream);
        match &s.phase {
            Phase::Idle | Phase::Closed => {}
            Phase::BetweenMembers => {
                let s = s.clone();
                torn(found, stream, &s, &format!("a {what} arrives"));
            }
            _ => found.add(
                &TR_REQ_BUSY,
                at,
                format!("stream {stream}: a {what} while the previous exchange is still open"),
            ),
        }
        let s = self.stream(stream);
        s.binder = Binder::new();
        self.parallel.retain(|p| p.request_stream != stream);
    }

    fn on_request(
        &mut self,
        stream: u32,
        payload: Option<Payload>,
        at: u64,
        found: &mut Found<'_>,
    ) {
        self.open_exchange(stream, "TENSOR_REQUEST", at, found);
        self.stream(stream).phase = Phase::Requested { since: at };
        let Some(Payload::TensorRequest(r)) = payload else {
            return;
        };
        let base = at + MESSAGE_HEADER_LEN;
        check_utf8(&r.tensor_key, base, "tensor_key", found);
        let layouts_at = base + 4 + r.tensor_key.bytes.len() as u64;
        check_layouts(&r.preferred_layouts, layouts_at, found);
        let device_at = layouts_at + encoded_len(&r.preferred_layouts);
        check_device(r.preferred_device, device_at, "preferred_device", found);
        if !r.min_alignment.is_power_of_two() {
            found.add(
                &TR_REQ_ALIGN,
                device_at + 1,
                format!("min_alignment {} is not a power of two", r.min_alignment),
            );
        }
        let reserved = r.request_flags.reserved();
        if reserved != 0 {
            found.add(
                &TR_REQ_FLAGS,
                device_at + 5,
                format!(
                    "reserved request flag bits are {:#x}, expected 0",
                    reserved << 2
                ),
            );
        }
        if r.request_flags.parallel_ok() {
            self.parallel.push(ParallelTransfer {
                request_stream: stream,
                total_shards: None,
                shards: Vec::new(),
                since: at,
            });
        }
    }

    /// Checks the fixed header of the descriptor at the start of a TENSOR_DESCRIPTOR
    /// payload; false (and the violation reported) when it cannot be followed.
    fn descriptor_header_ok(&self, payload: &[u8], at: u64, found: &mut Found<'_>) -> bool {
        if (payload.len() as u64) < DESCRIPTOR_HEADER_LEN {
            return true; // Too short: the payload decode reports it.
        }
        match fixed_header(payload, at, &self.options.limits) {
            Ok(_) => true,
            Err(v) => {
                found.add(v.rule, v.offset, v.message);
                false
            }
        }
    }

    fn on_descriptor(
        &mut self,
        stream: u32,
        payload: Option<Payload>,
        at: u64,
        found: &mut Found<'_>,
    ) {
        self.check_server_may_speak("TENSOR_DESCRIPTOR", at, found);
        let base = at + MESSAGE_HEADER_LEN;
        let decoded = match payload {
            Some(Payload::TensorDescriptor(p)) => Some(p),
            _ => None,
        };
        let descriptor = decoded
            .as_ref()
            .and_then(|p| self.descriptor(&p.descriptor, base, found));
        let total = decoded.as_ref().map(|p| p.total_data_bytes);
        if let (Some(p), Some(d)) = (&decoded, &descriptor) {
            check_total(
                d,
                p.total_data_bytes,
                base + p.descriptor.len() as u64,
                found,
            );
        }
        let shards = decoded
            .as_ref()
            .map_or(1, |p| self.check_shard_fields(p, base, found));

        // Where the descriptor stands on its stream.
        let s = self.stream(stream);
        let phase = std::mem::replace(&mut s.phase, Phase::Idle);
        let mut joins_parallel = false;
        match phase {
            Phase::Requested { .. } | Phase::BetweenMembers => {}
            Phase::Idle if shards > 1 && self.open_parallel().is_some() => joins_parallel = true,
            Phase::Closed => found.add(
                &TR_ERR_CLOSED,
                at,
                format!("stream {stream}: TENSOR_DESCRIPTOR after an ERROR closed the stream"),
            ),
            Phase::Idle => found.add(
                &TR_ORD_DESCRIPTOR,
                at,
                format!("stream {stream}: TENSOR_DESCRIPTOR without a TENSOR_REQUEST to answer"),
            ),
            Phase::Sending(t) | Phase::Putting(t) => found.add(
                &TR_ORD_DESCRIPTOR,
                at,
                format!(
                    "stream {stream}: TENSOR_DESCRIPTOR before the TENSOR_DATA_END of the tensor begun at {}",
                    t.since
                ),
            ),
            Phase::AwaitAck { .. } => found.add(
                &TR_ORD_DESCRIPTOR,
                at,
                format!("stream {stream}: TENSOR_DESCRIPTOR while a TENSOR_PUT awaits its ACK"),
            ),
        }
        self.stream(stream).phase = Phase::Sending(Transfer::new(at, total));
        if let (Some(d), Some(p)) = (&descriptor, &decoded) {
            let desc_at = base;
            let limits = self.options.limits;
            let s = self.stream(stream);
            bind_composite(
                &mut s.binder,
                (desc_at, d.clone()),
                d,
                desc_at,
                &Owned,
                &limits,
                found.report,
            );
            self.place_shard(stream, joins_parallel, p, d, desc_at, found);
        } else if shards == 1 {
            self.parallel
                .retain(|g| g.request_stream != stream || !g.shards.is_empty());
        }
        self.descriptor = descriptor;
    }

    /// Decodes and checks a descriptor carried in a message (`bytes` at `at`):
    /// header, fields and every descriptor-level rule.
    fn descriptor(&self, bytes: &[u8], at: u64, found: &mut Found<'_>) -> Option<TensorDescriptor> {
        let d = match descriptor(bytes, at, &self.options.limits) {
            Ok(d) => d,
            Err(v) => {
                found.add(v.rule, v.offset, v.message);
                return None;
            }
        };
        check_tensor(&d, at, None, &self.options.limits, found.report);
        for (i, b) in d.buffers.iter().enumerate() {
            if b.sync_mode != crate::schema::SYNC_PRODUCER_SYNCED {
                found.add(
                    &TR_DSC_SYNC,
                    at + d.buffer_pos(i) + crate::schema::BufferHandle::SYNC_MODE,
                    format!(
                        "buffer {i} declares sync_mode {:#04x}; across machines only 0x00 (producer-synced) is allowed",
                        b.sync_mode
                    ),
                );
            }
        }
        Some(d)
    }

    /// `TR-SHD-001`; returns `total_shards` (1 when the fields are inconsistent).
    fn check_shard_fields(
        &self,
        p: &TensorDescriptorPayload,
        base: u64,
        found: &mut Found<'_>,
    ) -> u32 {
        let fields_at = base + p.descriptor.len() as u64;
        if p.total_shards == 0 || p.shard_index >= p.total_shards {
            found.add(
                &TR_SHD_INDEX,
                fields_at + dpo::SHARD_INDEX,
                format!(
                    "shard_index {} with total_shards {}: expected total_shards >= 1 and shard_index below it",
                    p.shard_index, p.total_shards
                ),
            );
            return 1;
        }
        p.total_shards
    }

    /// The newest parallel transfer still waiting for shards.
    fn open_parallel(&self) -> Option<usize> {
        self.parallel
            .iter()
            .rposition(|g| g.total_shards.is_none_or(|n| (g.shards.len() as u32) < n))
    }

    /// Files a descriptor with `total_shards > 1` into its parallel transfer and
    /// checks the shard consistency rules; a descriptor with `total_shards` 1
    /// ends the parallel offer of its own request.
    fn place_shard(
        &mut self,
        stream: u32,
        joins_parallel: bool,
        p: &TensorDescriptorPayload,
        d: &TensorDescriptor,
        desc_at: u64,
        found: &mut Found<'_>,
    ) {
        let fields_at = desc_at + p.descriptor.len() as u64;
        if p.total_shards <= 1 || p.shard_index >= p.total_shards {
            // Not sharded: the server chose not to split this request's tensor.
            self.parallel
                .retain(|g| g.request_stream != stream || !g.shards.is_empty());
            return;
        }
        let own = self
            .parallel
            .iter()
            .rposition(|g| g.request_stream == stream);
        let group = match (own, joins_parallel) {
            (Some(i), _) => Some(i),
            (None, true) => self.open_parallel(),
            (None, false) => None,
        };
        let server_offers = self
            .server_hello
            .as_ref()
            .is_some_and(|h| h.capability_flags.parallel_streams());
        let Some(i) = group.filter(|_| server_offers) else {
            found.add(
                &TR_SHD_ALLOWED,
                fields_at + dpo::TOTAL_SHARDS,
                if group.is_none() {
                    format!(
                        "total_shards {} answers no request with PARALLEL_OK",
                        p.total_shards
                    )
                } else {
                    "a parallel transfer from a server that did not advertise PARALLEL_STREAMS"
                        .to_string()
                },
            );
            return;
        };
        if d.shard.is_none() {
            found.add(
                &TR_SHD_SECTION,
                desc_at + doff::FLAGS,
                format!(
                    "shard {} of a parallel transfer has no shard section",
                    p.shard_index
                ),
            );
        }
        let g = &mut self.parallel[i];
        let request_stream = g.request_stream;
        let expected = *g.total_shards.get_or_insert(p.total_shards);
        let first = g.shards.first().map(|(_, _, f)| f);
        let mismatch = if expected != p.total_shards {
            Some((
                dpo::TOTAL_SHARDS,
                format!(
                    "total_shards {} differs from the transfer's {expected}",
                    p.total_shards
                ),
            ))
        } else if g.shards.iter().any(|(_, i, _)| *i == p.shard_index) {
            Some((
                dpo::SHARD_INDEX,
                format!("shard_index {} arrives twice", p.shard_index),
            ))
        } else {
            first.and_then(|f| match (&f.shard, &d.shard) {
                (Some(a), Some(b)) if a.parent_shape != b.parent_shape => Some((
                    0,
                    format!(
                        "parent_shape {:?} differs from the first shard's {:?}",
                        b.parent_shape, a.parent_shape
                    ),
                )),
                _ if f.type_tag != d.type_tag || f.layout_tag != d.layout_tag => Some((
                    0,
                    format!(
                        "type {:#04x} / layout {:#04x} differ from the first shard's {:#04x} / {:#04x}",
                        d.type_tag, d.layout_tag, f.type_tag, f.layout_tag
                    ),
                )),
                _ => None,
            })
        };
        if let Some((rel, message)) = mismatch {
            let offset = if rel == 0 { desc_at } else { fields_at + rel };
            found.add(&TR_SHD_CONSISTENT, offset, message);
            return;
        }
        g.shards.push((desc_at, p.shard_index, d.clone()));
        if g.shards.len() as u32 == expected {
            let g = self.parallel.remove(i);
            check_cover(&g, found);
        }
        // The request is answered once its shards flow, whichever streams carry them.
        if request_stream != stream {
            if let Some(s) = self.streams.get_mut(&request_stream) {
                if matches!(s.phase, Phase::Requested { .. }) {
                    s.phase = Phase::Idle;
                }
            }
        }
    }

    /// A TENSOR_DATA frame; `span` is its `byte_offset_in_buffer` and data length
    /// when the payload decoded.
    fn on_data(&mut self, stream: u32, span: Option<(u64, u64)>, at: u64, found: &mut Found<'_>) {
        self.check_response_data(stream, "TENSOR_DATA", at, found);
        let s = self.stream(stream);
        let t = match &mut s.phase {
            Phase::Sending(t) | Phase::Putting(t) => t,
            Phase::Closed => {
                found.add(
                    &TR_ERR_CLOSED,
                    at,
                    format!("stream {stream}: TENSOR_DATA after an ERROR closed the stream"),
                );
                return;
            }
            _ => {
                found.add(
                    &TR_ORD_DATA,
                    at,
                    format!("stream {stream}: TENSOR_DATA outside a tensor (no descriptor or put before it)"),
                );
                return;
            }
        };
        t.frames += 1;
        if t.registers > 0 {
            found.add(
                &TR_RDM_ORDER,
                at,
                format!("stream {stream}: TENSOR_DATA in a transfer that went the RDMA way"),
            );
        }
        let Some((byte_offset_in_buffer, len)) = span else {
            return;
        };
        let base = at + MESSAGE_HEADER_LEN;
        if t.total == Some(0) {
            if t.frames == 1 {
                found.add(
                    &TR_ORD_NO_FRAMES,
                    at,
                    format!(
                        "stream {stream}: a TENSOR_DATA frame for a tensor with total_data_bytes 0"
                    ),
                );
            }
        } else if byte_offset_in_buffer != t.received {
            let what = if byte_offset_in_buffer > t.received {
                "a gap"
            } else {
                "an overlap"
            };
            found.add(
                &TR_ORD_OFFSET,
                base,
                format!(
                    "stream {stream}: byte_offset_in_buffer {} where the frames so far end at {}: {what}",
                    byte_offset_in_buffer, t.received
                ),
            );
        }
        t.received = t.received.saturating_add(len);
        if let Some(total) = t.total.filter(|&n| n > 0) {
            if t.received > total && !t.overrun {
                t.overrun = true;
                found.add(
                    &TR_ORD_TOTAL,
                    base + TENSOR_DATA_HEADER_LEN,
                    format!(
                        "stream {stream}: the data frames reach {} bytes, past total_data_bytes {total}",
                        t.received
                    ),
                );
            }
        }
    }

    fn on_data_end(&mut self, stream: u32, at: u64, found: &mut Found<'_>) {
        self.check_response_data(stream, "TENSOR_DATA_END", at, found);
        let s = self.stream(stream);
        let phase = std::mem::replace(&mut s.phase, Phase::Idle);
        let (t, putting) = match phase {
            Phase::Sending(t) => (t, false),
            Phase::Putting(t) => (t, true),
            Phase::Closed => {
                s.phase = Phase::Closed;
                found.add(
                    &TR_ERR_CLOSED,
                    at,
                    format!("stream {stream}: TENSOR_DATA_END after an ERROR closed the stream"),
                );
                return;
            }
            other => {
                s.phase = other;
                found.add(
                    &TR_ORD_END,
                    at,
                    format!("stream {stream}: TENSOR_DATA_END with no tensor begun"),
                );
                return;
            }
        };
        if t.registers > 0 {
            if !t.ready {
                found.add(
                    &TR_RDM_ORDER,
                    at,
                    format!(
                        "stream {stream}: TENSOR_DATA_END of an RDMA transfer before RDMA_READY"
                    ),
                );
            }
        } else if let Some(total) = t.total.filter(|&n| !t.overrun && t.received != n) {
            found.add(
                &TR_ORD_TOTAL,
                at,
                format!(
                    "stream {stream}: the data frames carry {} bytes, total_data_bytes is {total}",
                    t.received
                ),
            );
        }
        s.phase = if putting {
            Phase::AwaitAck { since: t.since }
        } else if s.binder.is_idle() {
            Phase::Idle
        } else {
            Phase::BetweenMembers
        };
    }

    fn on_put(&mut self, stream: u32, payload: Option<Payload>, at: u64, found: &mut Found<'_>) {
        self.open_exchange(stream, "TENSOR_PUT", at, found);
        let base = at + MESSAGE_HEADER_LEN;
        let put = match payload {
            Some(Payload::TensorPut(p)) => Some(p),
            _ => None,
        };
        self.stream(stream).phase =
            Phase::Putting(Transfer::new(at, put.as_ref().map(|p| p.total_data_bytes)));
        let Some(p) = put else {
            return;
        };
        check_utf8(&p.tensor_key, base, "tensor_key", found);
        let length_at = base + 4 + p.tensor_key.bytes.len() as u64;
        let desc_at = length_at + 4;
        let bytes = &p.descriptor.bytes;
        if let Some(stated) = stated_length(bytes) {
            if u64::from(stated) != bytes.len() as u64 {
                found.add(
                    &TR_DSC_LENGTH,
                    length_at,
                    format!(
                        "the descriptor field holds {} bytes, its descriptor_length says {}",
                        bytes.len(),
                        stated
                    ),
                );
                return;
            }
        }
        if let Some(d) = self.descriptor(bytes, desc_at, found) {
            check_total(&d, p.total_data_bytes, desc_at + bytes.len() as u64, found);
            self.descriptor = Some(d);
        }
    }

    fn on_put_ack(&mut self, stream: u32, at: u64, found: &mut Found<'_>) {
        self.check_server_may_speak("TENSOR_PUT_ACK", at, found);
        let s = self.stream(stream);
        match s.phase {
            Phase::AwaitAck { .. } => s.phase = Phase::Idle,
            Phase::Closed => found.add(
                &TR_ERR_CLOSED,
                at,
                format!("stream {stream}: TENSOR_PUT_ACK after an ERROR closed the stream"),
            ),
            _ => found.add(
                &TR_PUT_ACK,
                at,
                format!(
                    "stream {stream}: TENSOR_PUT_ACK with no finished TENSOR_PUT to acknowledge"
                ),
            ),
        }
    }

    fn on_error(&mut self, stream: u32, payload: Option<Payload>, at: u64, found: &mut Found<'_>) {
        if self.session == Session::AwaitServerHello {
            self.session = Session::Refused;
        }
        if let Some(Payload::Error(e)) = payload {
            let base = at + MESSAGE_HEADER_LEN;
            let defined = (error_code::PROTOCOL_VERSION_MISMATCH..=error_code::SHARD_MISMATCH)
                .contains(&e.error_code)
                || (0xF0..=0xFE).contains(&e.error_code);
            if !defined {
                found.add(
                    &TR_ERR_CODE,
                    base,
                    format!("error_code {:#010x} is not defined", e.error_code),
                );
            }
            check_utf8(&e.message, base + 4, "message", found);
        }
        let s = self.stream(stream);
        s.phase = Phase::Closed;
        s.binder = Binder::new();
        self.parallel.retain(|p| p.request_stream != stream);
    }

    fn rdma_offered(&self) -> (bool, bool) {
        let both = |f: fn(&CapabilityFlags) -> bool| {
            [&self.client_hello, &self.server_hello]
                .iter()
                .all(|h| h.as_ref().is_some_and(|h| f(&h.capability_flags)))
        };
        (both(|c| c.rdma_data_plane()), both(|c| c.rdma_gpudirect()))
    }

    fn on_rdma_register(
        &mut self,
        stream: u32,
        payload: Option<Payload>,
        at: u64,
        found: &mut Found<'_>,
    ) {
        let (rdma, gpudirect) = self.rdma_offered();
        let s = self.stream(stream);
        let t = match &mut s.phase {
            Phase::Sending(t) | Phase::Putting(t) if rdma && t.frames == 0 && !t.ready => t,
            _ => {
                found.add(
                    &TR_RDM_ORDER,
                    at,
                    format!(
                        "stream {stream}: RDMA_REGISTER {}",
                        if rdma {
                            "outside a tensor's descriptor-to-end span, after data frames or after RDMA_READY"
                        } else {
                            "although the peers did not both advertise RDMA_DATA_PLANE"
                        }
                    ),
                );
                return;
            }
        };
        t.registers = t.registers.saturating_add(1);
        if t.registers == 2 && !gpudirect {
            found.add(
                &TR_RDM_GPUDIRECT,
                at,
                format!("stream {stream}: a destination RDMA_REGISTER without RDMA_GPUDIRECT on both sides"),
            );
        } else if t.registers > 2 {
            found.add(
                &TR_RDM_ORDER,
                at,
                format!("stream {stream}: a third RDMA_REGISTER in one transfer"),
            );
        }
        if let (Some(Payload::RdmaRegister(r)), Some(total)) = (payload, t.total) {
            if r.length != total {
                found.add(
                    &TR_RDM_LENGTH,
                    at + MESSAGE_HEADER_LEN + 8,
                    format!(
                        "RDMA_REGISTER length {} differs from total_data_bytes {total}",
                        r.length
                    ),
                );
            }
        }
    }

    fn on_rdma_ready(&mut self, stream: u32, at: u64, found: &mut Found<'_>) {
        let s = self.stream(stream);
        match &mut s.phase {
            Phase::Sending(t) | Phase::Putting(t) if t.registers > 0 && !t.ready => t.ready = true,
            _ => found.add(
                &TR_RDM_ORDER,
                at,
                format!("stream {stream}: RDMA_READY without an RDMA_REGISTER to acknowledge"),
            ),
        }
    }
}

fn ty_name(tag: u32) -> &'static str {
    if is_private_type(tag) {
        "a private message type"
    } else {
        "an undefined message type"
    }
}

/// `TR-CMP-001` for the composite `s` still waits for on `stream`.
fn torn(found: &mut Found<'_>, stream: u32, s: &StreamState, when: &str) {
    let (head, left) = s
        .binder
        .outermost_open()
        .map_or((0, 0), |o| (o.head_offset, o.remaining));
    found.add(
        &TR_CMP_TORN,
        head,
        format!(
            "stream {stream}: {when} while the composite head at {head} waits for {left} more member(s)"
        ),
    );
}

/// Encoded size of a layout list.
fn encoded_len(list: &LayoutList) -> u64 {
    2 + list
        .entries
        .iter()
        .map(|e| {
            1 + e
                .ext_metadata
                .as_ref()
                .map_or(0, |m| 2 + m.bytes.len() as u64)
        })
        .sum::<u64>()
}

/// The HELLO rules of one side (`at` is the payload's offset).
fn check_hello(h: &Hello, at: u64, name: &str, found: &mut Found<'_>) {
    if h.protocol_version == 0 {
        found.add(&TR_HEL_VERSION, at, format!("{name} protocol_version is 0"));
    }
    let flags = h.capability_flags;
    if flags.reserved() != 0 {
        found.add(
            &TR_HEL_FLAGS,
            at + 8,
            format!(
                "{name} reserved capability bits are {:#x}, expected 0",
                flags.reserved() << 4
            ),
        );
    }
    if flags.rdma_gpudirect() && !flags.rdma_data_plane() {
        found.add(
            &TR_HEL_GPUDIRECT,
            at + 8,
            format!("{name} advertises RDMA_GPUDIRECT without RDMA_DATA_PLANE"),
        );
    }
    let layouts_at = at + 16;
    check_layouts(&h.supported_layouts, layouts_at, found);
    let devices_at = layouts_at + encoded_len(&h.supported_layouts);
    check_list(
        &h.supported_devices,
        devices_at,
        "supported_devices",
        is_device_reserved,
        found,
    );
    if let Some(classes) = &h.supported_memory_classes {
        let classes_at = devices_at + 2 + h.supported_devices.bytes.len() as u64;
        check_list(
            classes,
            classes_at,
            "supported_memory_classes",
            is_class_reserved,
            found,
        );
    }
}

fn is_device_reserved(tag: u8) -> bool {
    (0x09..=0xEF).contains(&tag) || tag == 0xFF
}

fn is_class_reserved(class: u8) -> bool {
    (0x04..=0xEF).contains(&class) || class == 0xFF
}

fn check_list(
    list: &ShortBytes,
    at: u64,
    name: &str,
    reserved: fn(u8) -> bool,
    found: &mut Found<'_>,
) {
    if let Some(i) = list.bytes.iter().position(|&b| reserved(b)) {
        found.add(
            &TR_DEV_RESERVED,
            at + 2 + i as u64,
            format!("{name}[{i}] is the reserved value {:#04x}", list.bytes[i]),
        );
    }
}

fn check_device(tag: u8, at: u64, name: &str, found: &mut Found<'_>) {
    if is_device_reserved(tag) {
        found.add(
            &TR_DEV_RESERVED,
            at,
            format!("{name} is the reserved device tag {tag:#04x}"),
        );
    }
}

/// `TR-LAY-001` over a layout list at `at` (extension entries are skipped by
/// length, as the spec requires).
fn check_layouts(list: &LayoutList, at: u64, found: &mut Found<'_>) {
    let mut pos = at + 2;
    for (i, e) in list.entries.iter().enumerate() {
        if !is_extension_layout(e.layout_tag) && !layout_tag_known(e.layout_tag) {
            found.add(
                &TR_LAY_TAG,
                pos,
                format!(
                    "layout entry {i} names the unassigned layout tag {:#04x}",
                    e.layout_tag
                ),
            );
        }
        pos += 1 + e
            .ext_metadata
            .as_ref()
            .map_or(0, |m| 2 + m.bytes.len() as u64);
    }
}

/// `TR-MSG-007` for a length-prefixed string at `at`.
fn check_utf8(s: &LenBytes, at: u64, name: &str, found: &mut Found<'_>) {
    if std::str::from_utf8(&s.bytes).is_err() {
        found.add(&TR_MSG_UTF8, at + 4, format!("{name} is not valid UTF-8"));
    }
}

/// `TR-DSC-001`: `total_data_bytes` (at `at`) is the buffers' sizes added up.
fn check_total(d: &TensorDescriptor, total: u64, at: u64, found: &mut Found<'_>) {
    let sum = d
        .buffers
        .iter()
        .try_fold(0u64, |s, b| s.checked_add(b.byte_size));
    if sum != Some(total) {
        found.add(
            &TR_DSC_TOTAL,
            at,
            format!(
                "total_data_bytes is {total}; the buffers hold {}",
                sum.map_or_else(|| "more than 2^64".to_string(), |s| s.to_string())
            ),
        );
    }
}

/// `TR-SHD-005` once every shard of a transfer arrived.
fn check_cover(g: &ParallelTransfer, found: &mut Found<'_>) {
    let Some(parent) = g.shards.first().and_then(|(_, _, d)| d.shard.as_ref()) else {
        return;
    };
    let parent_shape = &parent.parent_shape;
    let rank = parent_shape.len();
    let placed: Vec<(usize, &[u64], &[u64])> = g
        .shards
        .iter()
        .enumerate()
        .filter_map(|(i, (_, _, d))| {
            let s = d.shard.as_ref()?;
            let inside = d.shape.len() == rank
                && (0..rank).all(|k| {
                    s.shard_offset[k]
                        .checked_add(d.shape[k])
                        .is_some_and(|end| end <= parent_shape[k])
                });
            inside.then_some((i, s.shard_offset.as_slice(), d.shape.as_slice()))
        })
        .collect();
    // Shards outside parent_shape break TD-SHD-001; cover is judged without them.
    let all_placed = placed.len() == g.shards.len();
    match partition_fault(parent_shape, &placed, all_placed) {
        Some(PartitionFault::Overlap { first, second }) => {
            let (at, index, _) = &g.shards[second];
            found.add(
                &TR_SHD_COVER,
                *at,
                format!("shard {index} overlaps shard {}", g.shards[first].1),
            );
        }
        Some(PartitionFault::Cover { covered, total }) => found.add(
            &TR_SHD_COVER,
            g.since,
            format!(
                "the {} shards cover {covered} of parent_shape's {total} indices",
                g.shards.len()
            ),
        ),
        None => {}
    }
}

impl Conversation {
    /// The stream IDs with something open (an exchange, unanswered PINGs) or closed
    /// by an ERROR, ascending; a stream whose exchange ended cleanly is forgotten.
    pub fn stream_ids(&self) -> Vec<u32> {
        self.streams.keys().copied().collect()
    }

    /// True when no exchange is open on any stream and every parallel transfer is
    /// complete: the connection could close cleanly now.
    pub fn is_quiet(&self) -> bool {
        self.streams
            .values()
            .all(|s| matches!(s.phase, Phase::Idle | Phase::Closed))
            && self.parallel.iter().all(|p| p.total_shards.is_none())
    }
}

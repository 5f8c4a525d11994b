//! Transport messages on the wire: framing (header + payload, with a maximum
//! payload size), and decoding / encoding every payload of interchange.md.
//!
//! Reading is two steps, so that a receiver can refuse before it allocates:
//! [`read_frame`] takes the 12-byte header, checks `payload_length` against the
//! receiver's maximum and only then reads the payload into a [`Frame`];
//! [`Frame::decode`] turns the payload into a [`Payload`]. Writing is
//! [`write_message`] (any payload) or [`write_data_frame`] (TENSOR_DATA from a
//! borrowed slice, without building a payload).

use std::io::{Read, Write};

use crate::schema::transport::{
    message_type as mt, ErrorPayload, Hello, MessageHeader, RdmaRegister, TensorData,
    TensorDescriptorPayload, TensorPut, TensorRequest, MESSAGE_HEADER_LEN, TENSOR_DATA_HEADER_LEN,
};
use crate::schema::{read_from, to_bytes};
use crate::validate::rules::transport::*;
use crate::validate::Rule;

use super::Error;

pub use crate::limits::DEFAULT_MAX_MESSAGE_SIZE;

/// The defined message types (interchange.md "Message Types").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MessageType {
    /// `0x01`, client to server.
    ClientHello,
    /// `0x02`, server to client.
    ServerHello,
    /// `0x03`, client to server.
    TensorRequest,
    /// `0x04`, server to client.
    TensorDescriptor,
    /// `0x05`, from the side sending the tensor.
    TensorData,
    /// `0x06`, from the side sending the tensor.
    TensorDataEnd,
    /// `0x07`, client to server.
    TensorPut,
    /// `0x08`, server to client.
    TensorPutAck,
    /// `0x09`, either side.
    Error,
    /// `0x0A`, either side.
    Ping,
    /// `0x0B`, either side.
    Pong,
    /// `0x0C`, either side.
    RdmaRegister,
    /// `0x0D`, either side.
    RdmaReady,
}

impl MessageType {
    /// The type of a `message_type` tag; `None` for private and undefined tags.
    pub fn from_tag(tag: u32) -> Option<Self> {
        use MessageType::*;
        Some(match tag {
            mt::CLIENT_HELLO => ClientHello,
            mt::SERVER_HELLO => ServerHello,
            mt::TENSOR_REQUEST => TensorRequest,
            mt::TENSOR_DESCRIPTOR => TensorDescriptor,
            mt::TENSOR_DATA => TensorData,
            mt::TENSOR_DATA_END => TensorDataEnd,
            mt::TENSOR_PUT => TensorPut,
            mt::TENSOR_PUT_ACK => TensorPutAck,
            mt::ERROR => Error,
            mt::PING => Ping,
            mt::PONG => Pong,
            mt::RDMA_REGISTER => RdmaRegister,
            mt::RDMA_READY => RdmaReady,
            _ => return None,
        })
    }

    /// The `message_type` tag.
    pub fn tag(self) -> u32 {
        use MessageType::*;
        match self {
            ClientHello => mt::CLIENT_HELLO,
            ServerHello => mt::SERVER_HELLO,
            TensorRequest => mt::TENSOR_REQUEST,
            TensorDescriptor => mt::TENSOR_DESCRIPTOR,
            TensorData => mt::TENSOR_DATA,
            TensorDataEnd => mt::TENSOR_DATA_END,
            TensorPut => mt::TENSOR_PUT,
            TensorPutAck => mt::TENSOR_PUT_ACK,
            Error => mt::ERROR,
            Ping => mt::PING,
            Pong => mt::PONG,
            RdmaRegister => mt::RDMA_REGISTER,
            RdmaReady => mt::RDMA_READY,
        }
    }

    /// The spec's name (`TENSOR_DATA_END`).
    pub fn name(self) -> &'static str {
        use MessageType::*;
        match self {
            ClientHello => "CLIENT_HELLO",
            ServerHello => "SERVER_HELLO",
            TensorRequest => "TENSOR_REQUEST",
            TensorDescriptor => "TENSOR_DESCRIPTOR",
            TensorData => "TENSOR_DATA",
            TensorDataEnd => "TENSOR_DATA_END",
            TensorPut => "TENSOR_PUT",
            TensorPutAck => "TENSOR_PUT_ACK",
            Error => "ERROR",
            Ping => "PING",
            Pong => "PONG",
            RdmaRegister => "RDMA_REGISTER",
            RdmaReady => "RDMA_READY",
        }
    }
}

/// True for the implementation-private message types `0xF0`-`0xFE`.
pub fn is_private_type(tag: u32) -> bool {
    (mt::PRIVATE_FIRST..=mt::PRIVATE_LAST).contains(&tag)
}

/// A message's payload, decoded.
#[derive(Clone, Debug, PartialEq)]
pub enum Payload {
    /// CLIENT_HELLO.
    ClientHello(Hello),
    /// SERVER_HELLO.
    ServerHello(Hello),
    /// TENSOR_REQUEST.
    TensorRequest(TensorRequest),
    /// TENSOR_DESCRIPTOR (the descriptor as bytes, with the transport fields).
    TensorDescriptor(TensorDescriptorPayload),
    /// TENSOR_DATA.
    TensorData(TensorData),
    /// TENSOR_DATA_END (no fields).
    TensorDataEnd,
    /// TENSOR_PUT.
    TensorPut(TensorPut),
    /// TENSOR_PUT_ACK (no fields).
    TensorPutAck,
    /// ERROR.
    Error(ErrorPayload),
    /// PING: any bytes, echoed by PONG.
    Ping(Vec<u8>),
    /// PONG: the PING's bytes.
    Pong(Vec<u8>),
    /// RDMA_REGISTER.
    RdmaRegister(RdmaRegister),
    /// RDMA_READY (no fields).
    RdmaReady,
    /// An implementation-private type (`0xF0`-`0xFE`), carried as bytes.
    Private {
        /// The `message_type` tag.
        message_type: u32,
        /// The payload.
        bytes: Vec<u8>,
    },
}

impl Payload {
    /// The `message_type` tag announcing this payload.
    pub fn message_type(&self) -> u32 {
        use MessageType as T;
        match self {
            Payload::ClientHello(_) => T::ClientHello.tag(),
            Payload::ServerHello(_) => T::ServerHello.tag(),
            Payload::TensorRequest(_) => T::TensorRequest.tag(),
            Payload::TensorDescriptor(_) => T::TensorDescriptor.tag(),
            Payload::TensorData(_) => T::TensorData.tag(),
            Payload::TensorDataEnd => T::TensorDataEnd.tag(),
            Payload::TensorPut(_) => T::TensorPut.tag(),
            Payload::TensorPutAck => T::TensorPutAck.tag(),
            Payload::Error(_) => T::Error.tag(),
            Payload::Ping(_) => T::Ping.tag(),
            Payload::Pong(_) => T::Pong.tag(),
            Payload::RdmaRegister(_) => T::RdmaRegister.tag(),
            Payload::RdmaReady => T::RdmaReady.tag(),
            Payload::Private { message_type, .. } => *message_type,
        }
    }

    /// The payload's bytes.
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Payload::ClientHello(h) | Payload::ServerHello(h) => to_bytes(h),
            Payload::TensorRequest(r) => to_bytes(r),
            Payload::TensorDescriptor(d) => to_bytes(d),
            Payload::TensorData(d) => to_bytes(d),
            Payload::TensorPut(p) => to_bytes(p),
            Payload::Error(e) => to_bytes(e),
            Payload::RdmaRegister(r) => to_bytes(r),
            Payload::Ping(b) | Payload::Pong(b) | Payload::Private { bytes: b, .. } => b.clone(),
            Payload::TensorDataEnd | Payload::TensorPutAck | Payload::RdmaReady => Vec::new(),
        }
    }

    /// Decodes the payload of a `message_type` message. Returns the payload and
    /// how many bytes its fields took (less than `bytes.len()` when bytes follow
    /// the last field; the conversation rules report that, `TR-MSG-005`). Fails
    /// with the rule a receiver answers with ERROR: an undefined type
    /// (`TR-MSG-001`), fields that do not fit (`TR-MSG-004`) or a payload where
    /// none belongs (`TR-MSG-006`); `at` is the payload's absolute offset.
    pub fn decode(message_type: u32, bytes: &[u8], at: u64) -> Result<(Payload, u64), Error> {
        fn field<T>(bytes: &[u8], at: u64, name: &str) -> Result<(T, u64), Error>
        where
            T: for<'a> binrw::BinRead<Args<'a> = ()>,
        {
            read_from::<T>(bytes).map_err(|e| {
                Error::invalid(
                    &TR_MSG_DECODE,
                    at,
                    format!(
                        "{name} payload of {} bytes does not decode: {}",
                        bytes.len(),
                        crate::schema::error_text(&e)
                    ),
                )
            })
        }
        let empty = |p: Payload, name: &str| {
            if bytes.is_empty() {
                Ok((p, 0))
            } else {
                Err(Error::invalid(
                    &TR_MSG_EMPTY,
                    at - 4,
                    format!("{name} has payload_length {}, expected 0", bytes.len()),
                ))
            }
        };
        let whole = bytes.len() as u64;
        let Some(ty) = MessageType::from_tag(message_type) else {
            if is_private_type(message_type) {
                let p = Payload::Private {
                    message_type,
                    bytes: bytes.to_vec(),
                };
                return Ok((p, whole));
            }
            return Err(Error::invalid(
                &TR_MSG_TYPE,
                at - MESSAGE_HEADER_LEN,
                format!("message_type {message_type:#010x} is not defined"),
            ));
        };
        let name = ty.name();
        use MessageType as T;
        Ok(match ty {
            T::ClientHello => field(bytes, at, name).map(|(h, n)| (Payload::ClientHello(h), n))?,
            T::ServerHello => field(bytes, at, name).map(|(h, n)| (Payload::ServerHello(h), n))?,
            T::TensorRequest => {
                field(bytes, at, name).map(|(r, n)| (Payload::TensorRequest(r), n))?
            }
            T::TensorDescriptor => {
                field(bytes, at, name).map(|(d, n)| (Payload::TensorDescriptor(d), n))?
            }
            T::TensorData => field(bytes, at, name).map(|(d, n)| (Payload::TensorData(d), n))?,
            T::TensorPut => field(bytes, at, name).map(|(p, n)| (Payload::TensorPut(p), n))?,
            T::Error => field(bytes, at, name).map(|(e, n)| (Payload::Error(e), n))?,
            T::RdmaRegister => {
                field(bytes, at, name).map(|(r, n)| (Payload::RdmaRegister(r), n))?
            }
            T::Ping => (Payload::Ping(bytes.to_vec()), whole),
            T::Pong => (Payload::Pong(bytes.to_vec()), whole),
            T::TensorDataEnd => empty(Payload::TensorDataEnd, name)?,
            T::TensorPutAck => empty(Payload::TensorPutAck, name)?,
            T::RdmaReady => empty(Payload::RdmaReady, name)?,
        })
    }
}

/// One message as framed on the wire: its header and raw payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The header.
    pub header: MessageHeader,
    /// Exactly `payload_length` bytes.
    pub payload: Vec<u8>,
}

impl Frame {
    /// A frame carrying `payload` on `stream_id`; fails when the payload does not
    /// fit `payload_length` (4 GiB).
    pub fn new(stream_id: u32, payload: &Payload) -> Result<Frame, Error> {
        let bytes = payload.encode();
        let payload_length = u32::try_from(bytes.len()).map_err(|_| {
            Error::Write(format!(
                "a payload of {} bytes does not fit payload_length",
                bytes.len()
            ))
        })?;
        Ok(Frame {
            header: MessageHeader {
                message_type: payload.message_type(),
                stream_id,
                payload_length,
            },
            payload: bytes,
        })
    }

    /// Bytes on the wire: header and payload.
    pub fn encoded_len(&self) -> u64 {
        MESSAGE_HEADER_LEN + self.payload.len() as u64
    }

    /// Header then payload.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = to_bytes(&self.header);
        out.extend_from_slice(&self.payload);
        out
    }

    /// Decodes the payload; `at` is the frame's absolute offset (for errors). See
    /// [`Payload::decode`].
    pub fn decode(&self, at: u64) -> Result<(Payload, u64), Error> {
        Payload::decode(
            self.header.message_type,
            &self.payload,
            at + MESSAGE_HEADER_LEN,
        )
    }
}

/// Reads the next frame from `source`, which is at absolute offset `at`: the
/// header, then — only when `payload_length` is at most `max_payload` — the
/// payload. `Ok(None)` at a clean end (no byte of a next header). A payload over
/// the maximum fails with `TR-LIM-001` before anything is allocated (the receiver
/// answers MESSAGE_TOO_LARGE); a source ending inside a message with `TR-FRM-001`.
pub fn read_frame<R: Read>(
    source: &mut R,
    at: u64,
    max_payload: u32,
) -> Result<Option<Frame>, Error> {
    let mut head = [0u8; MESSAGE_HEADER_LEN as usize];
    let got = super::io::read_up_to(source, &mut head)?;
    if got == 0 {
        return Ok(None);
    }
    if got < head.len() {
        return Err(Error::invalid(
            &TR_FRM_TRUNCATED,
            at,
            format!("the input ends {got} bytes into a 12-byte message header"),
        ));
    }
    let header = read_from::<MessageHeader>(&head)
        .map_err(|e| Error::invalid(&TR_FRM_TRUNCATED, at, crate::schema::error_text(&e)))?
        .0;
    if header.payload_length > max_payload {
        return Err(Error::invalid(
            &TR_LIM,
            at + 8,
            format!(
                "payload_length {} exceeds the maximum message size {max_payload}",
                header.payload_length
            ),
        ));
    }
    let want = u64::from(header.payload_length);
    let mut payload = Vec::new();
    // Grows as bytes arrive: a payload_length the input does not back costs no
    // more than the input delivers.
    let read = source.take(want).read_to_end(&mut payload)? as u64;
    if read != want {
        return Err(Error::invalid(
            &TR_FRM_TRUNCATED,
            at + 8,
            format!(
                "payload_length is {want} but the input ends after {read} payload bytes, at offset {}",
                at + MESSAGE_HEADER_LEN + read
            ),
        ));
    }
    Ok(Some(Frame { header, payload }))
}

/// Writes `payload` on `stream_id` to `sink`; fails (writing nothing) when the
/// payload exceeds `max_payload`, the peer's advertised `max_message_size`.
/// Returns the bytes written.
pub fn write_message<W: Write>(
    sink: &mut W,
    stream_id: u32,
    payload: &Payload,
    max_payload: u32,
) -> Result<u64, Error> {
    let frame = Frame::new(stream_id, payload)?;
    if frame.header.payload_length > max_payload {
        return Err(Error::Write(format!(
            "a {} payload of {} bytes exceeds the peer's max_message_size {max_payload}",
            MessageType::from_tag(frame.header.message_type).map_or("private", |t| t.name()),
            frame.header.payload_length
        )));
    }
    sink.write_all(&frame.to_bytes())?;
    Ok(frame.encoded_len())
}

/// Writes a TENSOR_DATA frame carrying `data` at `byte_offset_in_buffer`, straight
/// from the borrowed slice; fails (writing nothing) when `8 + data.len()` exceeds
/// `max_payload`. Returns the bytes written.
pub fn write_data_frame<W: Write>(
    sink: &mut W,
    stream_id: u32,
    byte_offset_in_buffer: u64,
    data: &[u8],
    max_payload: u32,
) -> Result<u64, Error> {
    let length = TENSOR_DATA_HEADER_LEN + data.len() as u64;
    let payload_length = u32::try_from(length)
        .ok()
        .filter(|&n| n <= max_payload)
        .ok_or_else(|| {
            Error::Write(format!(
                "a TENSOR_DATA payload of {length} bytes exceeds the peer's max_message_size {max_payload}"
            ))
        })?;
    let header = MessageHeader {
        message_type: mt::TENSOR_DATA,
        stream_id,
        payload_length,
    };
    let mut head = to_bytes(&header);
    head.extend_from_slice(&byte_offset_in_buffer.to_le_bytes());
    sink.write_all(&head)?;
    sink.write_all(data)?;
    Ok(MESSAGE_HEADER_LEN + length)
}

/// The ERROR `error_code` a receiver sends for a violation of `rule`
/// (interchange.md "ERROR Payload"): MESSAGE_TOO_LARGE for a payload over the
/// limit, SHARD_MISMATCH for inconsistent shards, INVALID_MESSAGE otherwise.
pub fn error_code_for(rule: &Rule) -> u32 {
    use crate::schema::transport::error_code as ec;
    if std::ptr::eq(rule, &TR_LIM) || std::ptr::eq(rule, &TR_FRM_MAX_SIZE) {
        ec::MESSAGE_TOO_LARGE
    } else if rule.id.starts_with("TR-SHD-") {
        ec::SHARD_MISMATCH
    } else if std::ptr::eq(rule, &TR_HEL_VERSION) {
        ec::PROTOCOL_VERSION_MISMATCH
    } else {
        ec::INVALID_MESSAGE
    }
}

//! The transport messages of interchange.md: the 12-byte message header
//! ("Message Framing") and every payload table ("Session Establishment",
//! "Layout Entry Encoding", "TENSOR_REQUEST Payload", "TENSOR_DESCRIPTOR Payload",
//! "TENSOR_DATA Payload", "TENSOR_PUT Payload", "ERROR Payload", "RDMA_REGISTER
//! Payload").
//!
//! Payloads with no fields (`TENSOR_DATA_END`, `TENSOR_PUT_ACK`, `RDMA_READY`) and
//! opaque ones (`PING`, `PONG`, private types) have no declaration here; which
//! payload a header announces is decided by [`crate::stream::message`].

use binrw::io::{Read, Seek};
use binrw::{binrw, BinRead, BinResult, Endian};
use modular_bitfield::prelude::*;

use super::{counted, remaining, LenBytes};

/// Size of the message header.
pub const MESSAGE_HEADER_LEN: u64 = 12;

/// `message_type` tags (interchange.md "Message Types").
pub mod message_type {
    /// `CLIENT_HELLO`.
    pub const CLIENT_HELLO: u32 = 0x01;
    /// `SERVER_HELLO`.
    pub const SERVER_HELLO: u32 = 0x02;
    /// `TENSOR_REQUEST`.
    pub const TENSOR_REQUEST: u32 = 0x03;
    /// `TENSOR_DESCRIPTOR`.
    pub const TENSOR_DESCRIPTOR: u32 = 0x04;
    /// `TENSOR_DATA`.
    pub const TENSOR_DATA: u32 = 0x05;
    /// `TENSOR_DATA_END`.
    pub const TENSOR_DATA_END: u32 = 0x06;
    /// `TENSOR_PUT`.
    pub const TENSOR_PUT: u32 = 0x07;
    /// `TENSOR_PUT_ACK`.
    pub const TENSOR_PUT_ACK: u32 = 0x08;
    /// `ERROR`.
    pub const ERROR: u32 = 0x09;
    /// `PING`.
    pub const PING: u32 = 0x0A;
    /// `PONG`.
    pub const PONG: u32 = 0x0B;
    /// `RDMA_REGISTER`.
    pub const RDMA_REGISTER: u32 = 0x0C;
    /// `RDMA_READY`.
    pub const RDMA_READY: u32 = 0x0D;
    /// First implementation-private type.
    pub const PRIVATE_FIRST: u32 = 0xF0;
    /// Last implementation-private type.
    pub const PRIVATE_LAST: u32 = 0xFE;
}

/// `error_code` values of the ERROR payload (interchange.md "ERROR Payload").
pub mod error_code {
    /// Incompatible protocol versions.
    pub const PROTOCOL_VERSION_MISMATCH: u32 = 0x01;
    /// Requested tensor key not found.
    pub const UNKNOWN_TENSOR: u32 = 0x02;
    /// No acceptable layout could be served.
    pub const LAYOUT_UNAVAILABLE: u32 = 0x03;
    /// Transcoding refused: buffer too large.
    pub const TRANSCODE_LIMIT_EXCEEDED: u32 = 0x04;
    /// Requested device not available.
    pub const DEVICE_UNAVAILABLE: u32 = 0x05;
    /// Malformed message received.
    pub const INVALID_MESSAGE: u32 = 0x06;
    /// `payload_length` exceeds the receiver's limit.
    pub const MESSAGE_TOO_LARGE: u32 = 0x07;
    /// Parallel shard descriptors are inconsistent.
    pub const SHARD_MISMATCH: u32 = 0x08;
}

/// The current `protocol_version`.
pub const PROTOCOL_VERSION: u32 = 1;

/// The 12-byte header in front of every message (interchange.md "Message Framing").
#[binrw]
#[brw(little)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct MessageHeader {
    /// Offset 0: which payload follows.
    pub message_type: u32,
    /// Offset 4: the stream the message belongs to (`0` is reserved).
    pub stream_id: u32,
    /// Offset 8: payload bytes after the header.
    pub payload_length: u32,
}

/// `capability_flags` of CLIENT_HELLO and SERVER_HELLO (interchange.md "Capability
/// Flags").
#[bitfield(bits = 64)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct CapabilityFlags {
    /// Bit 0: transcodes to a requested layout on the fly.
    pub transcoding: bool,
    /// Bit 1: multi-stream parallel shard transfer.
    pub parallel_streams: bool,
    /// Bit 2: RDMA for the data plane.
    pub rdma_data_plane: bool,
    /// Bit 3: GPUDirect writes into a receiver-registered region (implies bit 2).
    pub rdma_gpudirect: bool,
    /// Bits 4-63: reserved, must be zero.
    pub reserved: B60,
}

/// `request_flags` of TENSOR_REQUEST (interchange.md "TENSOR_REQUEST Payload").
#[bitfield(bits = 32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct RequestFlags {
    /// Bit 0: the server may transcode to a preferred layout.
    pub allow_transcode: bool,
    /// Bit 1: the client accepts the tensor as parallel shards.
    pub parallel_ok: bool,
    /// Bits 2-31: reserved, must be zero.
    pub reserved: B30,
}

/// Bytes behind a `uint16` count: device tag lists, memory class lists and an
/// extension layout entry's `ext_metadata`.
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ShortBytes {
    /// `uint16` count.
    #[br(temp)]
    #[bw(calc = bytes.len() as u16)]
    length: u16,
    /// The bytes.
    #[br(parse_with = counted(length as u64, 1))]
    pub bytes: Vec<u8>,
}

/// True for the extension layout tags `0xF0`-`0xFE`, whose layout entries carry
/// metadata (interchange.md "Layout Entry Encoding").
pub fn is_extension_layout(tag: u8) -> bool {
    (0xF0..=0xFE).contains(&tag)
}

/// One layout entry: a layout tag, with `ext_metadata_length` and the metadata when
/// the tag is in the extension range.
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct LayoutEntry {
    /// The layout tag (memory-layout.md).
    pub layout_tag: u8,
    /// Present exactly when `layout_tag` is an extension tag.
    #[br(if(is_extension_layout(layout_tag)))]
    pub ext_metadata: Option<ShortBytes>,
}

/// A layout list: a `uint16` count, then that many entries.
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct LayoutList {
    /// `layout_count`.
    #[br(temp)]
    #[bw(calc = entries.len() as u16)]
    count: u16,
    /// Entries in preference order.
    #[br(parse_with = counted(count as u64, 1))]
    pub entries: Vec<LayoutEntry>,
}

/// Reads a `T` only when bytes remain: a trailing optional field.
fn if_more<R: Read + Seek, T>(reader: &mut R, endian: Endian, args: ()) -> BinResult<Option<T>>
where
    T: for<'a> BinRead<Args<'a> = ()>,
{
    if remaining(reader)? == 0 {
        Ok(None)
    } else {
        T::read_options(reader, endian, args).map(Some)
    }
}

/// The CLIENT_HELLO and SERVER_HELLO payload (interchange.md "CLIENT_HELLO
/// Payload", "SERVER_HELLO Payload"; both have the same fields).
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Hello {
    /// Protocol version (1).
    pub protocol_version: u32,
    /// Largest payload the sender accepts.
    pub max_message_size: u32,
    /// Sender capabilities.
    #[br(map = CapabilityFlags::from_bytes)]
    #[bw(map = |f: &CapabilityFlags| f.into_bytes())]
    pub capability_flags: CapabilityFlags,
    /// Layouts the sender can consume (client) or produce (server).
    pub supported_layouts: LayoutList,
    /// Device tags the sender supports.
    pub supported_devices: ShortBytes,
    /// Memory classes; absent (`None`) means STANDARD only, as does an empty list.
    #[br(parse_with = if_more)]
    pub supported_memory_classes: Option<ShortBytes>,
}

/// The TENSOR_REQUEST payload.
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct TensorRequest {
    /// The tensor's key, UTF-8.
    pub tensor_key: LenBytes,
    /// Layout preferences, most preferred first (empty: no preference).
    pub preferred_layouts: LayoutList,
    /// Preferred device tag of the response buffer.
    pub preferred_device: u8,
    /// Minimum buffer alignment (a power of two).
    pub min_alignment: u32,
    /// Request flags.
    #[br(map = RequestFlags::from_bytes)]
    #[bw(map = |f: &RequestFlags| f.into_bytes())]
    pub request_flags: RequestFlags,
}

/// Reads a self-delimiting tensor descriptor as raw bytes: `descriptor_length`
/// (descriptor bytes 6-9) says how many.
fn self_delimited<R: Read + Seek>(reader: &mut R, endian: Endian, _: ()) -> BinResult<Vec<u8>> {
    let pos = reader.stream_position()?;
    let mut head = [0u8; 10];
    reader.read_exact(&mut head)?;
    let length = u32::from_le_bytes([head[6], head[7], head[8], head[9]]);
    if length < 10 {
        return Err(binrw::Error::AssertFail {
            pos,
            message: format!("descriptor_length {length} is shorter than the fields it follows"),
        });
    }
    let rest = counted::<u8, R, ()>(u64::from(length) - 10, 1)(reader, endian, ())?;
    let mut bytes = head.to_vec();
    bytes.extend_from_slice(&rest);
    Ok(bytes)
}

/// The TENSOR_DESCRIPTOR payload: a tensor descriptor (metadata.md), then the
/// transport fields.
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct TensorDescriptorPayload {
    /// The descriptor's bytes, exactly `descriptor_length` of them (decode with
    /// [`crate::schema::read_from`]`::<TensorDescriptor>`).
    #[br(parse_with = self_delimited)]
    pub descriptor: Vec<u8>,
    /// Bytes the TENSOR_DATA frames of this tensor (or shard) will carry.
    pub total_data_bytes: u64,
    /// Index of this shard in a parallel transfer (0 otherwise).
    pub shard_index: u32,
    /// Shards in a parallel transfer (1 otherwise).
    pub total_shards: u32,
}

/// Offsets of the transport fields after the descriptor in a TENSOR_DESCRIPTOR
/// payload, relative to the descriptor's end.
pub mod descriptor_payload_offsets {
    /// `total_data_bytes`.
    pub const TOTAL_DATA_BYTES: u64 = 0;
    /// `shard_index`.
    pub const SHARD_INDEX: u64 = 8;
    /// `total_shards`.
    pub const TOTAL_SHARDS: u64 = 12;
    /// Length of the transport fields.
    pub const LEN: u64 = 16;
}

/// The TENSOR_DATA payload: where the bytes go, then the bytes (the rest of the
/// payload).
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct TensorData {
    /// Offset of `data` within the tensor's buffers, concatenated in buffer-table
    /// order (docs/interpretations.md § Streams and the transport).
    pub byte_offset_in_buffer: u64,
    /// The bytes.
    #[br(parse_with = binrw::helpers::until_eof)]
    pub data: Vec<u8>,
}

/// Size of `byte_offset_in_buffer`, the fixed part of a TENSOR_DATA payload.
pub const TENSOR_DATA_HEADER_LEN: u64 = 8;

/// The TENSOR_PUT payload.
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct TensorPut {
    /// Key of the pushed tensor, UTF-8.
    pub tensor_key: LenBytes,
    /// The serialized descriptor, behind a `uint32` length.
    pub descriptor: LenBytes,
    /// Bytes the TENSOR_DATA frames will carry.
    pub total_data_bytes: u64,
}

/// The ERROR payload.
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ErrorPayload {
    /// One of [`error_code`] (or `0xF0`-`0xFE`, implementation-defined).
    pub error_code: u32,
    /// Human-readable description, UTF-8.
    pub message: LenBytes,
}

/// The RDMA_REGISTER payload.
#[binrw]
#[brw(little)]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct RdmaRegister {
    /// Virtual address of the registered region on the sender's side.
    pub remote_addr: u64,
    /// Size of the region (equal to `total_data_bytes`).
    pub length: u64,
    /// Opaque RDMA memory key.
    pub rkey: LenBytes,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{read_from, to_bytes};

    #[test]
    fn layout_entries_carry_metadata_only_in_the_extension_range() {
        let list = LayoutList {
            entries: vec![
                LayoutEntry {
                    layout_tag: 0x01,
                    ext_metadata: None,
                },
                LayoutEntry {
                    layout_tag: 0xF3,
                    ext_metadata: Some(ShortBytes {
                        bytes: vec![9, 8, 7],
                    }),
                },
                LayoutEntry {
                    layout_tag: 0xF0,
                    ext_metadata: Some(ShortBytes::default()),
                },
            ],
        };
        let bytes = to_bytes(&list);
        assert_eq!(
            bytes,
            [3, 0, 0x01, 0xF3, 3, 0, 9, 8, 7, 0xF0, 0, 0],
            "count, a one-byte entry, two extension entries"
        );
        assert_eq!(read_from::<LayoutList>(&bytes).unwrap(), (list, 12));
    }

    #[test]
    fn hello_memory_classes_are_optional() {
        let mut hello = Hello {
            protocol_version: 1,
            max_message_size: 1 << 20,
            capability_flags: CapabilityFlags::new().with_transcoding(true),
            supported_layouts: LayoutList::default(),
            supported_devices: ShortBytes { bytes: vec![0] },
            supported_memory_classes: None,
        };
        let without = to_bytes(&hello);
        assert_eq!(without.len(), 4 + 4 + 8 + 2 + 3);
        assert_eq!(read_from::<Hello>(&without).unwrap().0, hello);
        hello.supported_memory_classes = Some(ShortBytes { bytes: vec![0, 2] });
        let with = to_bytes(&hello);
        assert_eq!(&with[without.len()..], [2, 0, 0, 2]);
        assert_eq!(read_from::<Hello>(&with).unwrap().0, hello);
    }

    #[test]
    fn descriptor_payload_takes_descriptor_length_bytes() {
        let d = crate::model::build::dense(crate::model::ElementType::Float32, &[2]).unwrap();
        let payload = TensorDescriptorPayload {
            descriptor: to_bytes(&d),
            total_data_bytes: 8,
            shard_index: 0,
            total_shards: 1,
        };
        let bytes = to_bytes(&payload);
        assert_eq!(bytes.len() as u64, u64::from(d.descriptor_length) + 16);
        assert_eq!(
            read_from::<TensorDescriptorPayload>(&bytes).unwrap(),
            (payload, bytes.len() as u64)
        );
        // A descriptor_length past the payload does not decode.
        let mut short = bytes.clone();
        short.truncate(bytes.len() - 17);
        assert!(read_from::<TensorDescriptorPayload>(&short).is_err());
    }
}

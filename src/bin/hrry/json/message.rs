//! Bare streams' tensors and transport messages as JSON (`hrry inspect --json` of a
//! stream or a captured conversation).

use hrry::schema::TensorDescriptor;
use serde_json::{json, Value};

use super::{descriptor_json, hex, text};

/// One tensor of a bare stream for `hrry inspect --json`: its descriptor fields
/// ([`descriptor_json`]), the name `hrry stream unpack` gives it and where it sits.
pub fn stream_tensor_json(t: &hrry::stream::StreamTensor, name: &str) -> Value {
    let mut v = descriptor_json(&t.descriptor);
    let m = v.as_object_mut().expect("object");
    m.insert("name".into(), json!(name));
    m.insert("index".into(), json!(t.index));
    m.insert("descriptor_offset".into(), json!(t.descriptor_offset));
    m.insert(
        "descriptor_length".into(),
        json!(t.descriptor.descriptor_length),
    );
    m.insert("data_offset".into(), json!(t.data_offset));
    m.insert("data_length".into(), json!(t.data_length));
    m.insert("depth".into(), json!(t.depth));
    v
}

fn layouts_json(list: &hrry::schema::transport::LayoutList) -> Value {
    list.entries
        .iter()
        .map(|e| match &e.ext_metadata {
            Some(m) => json!({"layout_tag": e.layout_tag, "ext_metadata": hex(&m.bytes)}),
            None => json!({"layout_tag": e.layout_tag}),
        })
        .collect()
}

fn hello_json(h: &hrry::schema::transport::Hello) -> Value {
    json!({
        "protocol_version": h.protocol_version,
        "max_message_size": h.max_message_size,
        "capability_flags": u64::from_le_bytes(h.capability_flags.into_bytes()),
        "supported_layouts": layouts_json(&h.supported_layouts),
        "supported_devices": h.supported_devices.bytes,
        "supported_memory_classes": h.supported_memory_classes.as_ref().map(|c| &c.bytes),
    })
}

/// A descriptor carried in a message, or why it does not decode.
fn carried_descriptor_json(bytes: &[u8]) -> Value {
    match hrry::schema::read_from::<TensorDescriptor>(bytes) {
        Ok((d, _)) => descriptor_json(&d),
        Err(e) => json!({"error": hrry::schema::error_text(&e)}),
    }
}

/// A transport message's decoded fields for `hrry stream inspect --messages
/// --json` (data frames show their length, not their bytes).
pub fn payload_json(p: &hrry::stream::message::Payload) -> Value {
    use hrry::stream::message::Payload as P;
    match p {
        P::ClientHello(h) | P::ServerHello(h) => hello_json(h),
        P::TensorRequest(r) => json!({
            "tensor_key": text(&r.tensor_key.bytes),
            "preferred_layouts": layouts_json(&r.preferred_layouts),
            "preferred_device": r.preferred_device,
            "min_alignment": r.min_alignment,
            "request_flags": u32::from_le_bytes(r.request_flags.into_bytes()),
        }),
        P::TensorDescriptor(d) => json!({
            "descriptor": carried_descriptor_json(&d.descriptor),
            "total_data_bytes": d.total_data_bytes,
            "shard_index": d.shard_index,
            "total_shards": d.total_shards,
        }),
        P::TensorData(d) => json!({
            "byte_offset_in_buffer": d.byte_offset_in_buffer,
            "data_length": d.data.len(),
        }),
        P::TensorPut(t) => json!({
            "tensor_key": text(&t.tensor_key.bytes),
            "descriptor": carried_descriptor_json(&t.descriptor.bytes),
            "total_data_bytes": t.total_data_bytes,
        }),
        P::Error(e) => json!({"error_code": e.error_code, "message": text(&e.message.bytes)}),
        P::RdmaRegister(r) => json!({
            "remote_addr": r.remote_addr,
            "length": r.length,
            "rkey": hex(&r.rkey.bytes),
        }),
        P::Ping(b) | P::Pong(b) | P::Private { bytes: b, .. } => json!({"bytes": hex(b)}),
        P::TensorDataEnd | P::TensorPutAck | P::RdmaReady => json!({}),
    }
}

/// A framed message's decoded payload, or why it does not decode, for `hrry
/// stream inspect --messages` (`at`: the frame's offset).
pub fn frame_payload_json(frame: &hrry::stream::message::Frame, at: u64) -> Value {
    match frame.decode(at) {
        Ok((p, _)) => payload_json(&p),
        Err(e) => json!({"error": e.to_string()}),
    }
}

/// One framed message for `hrry stream inspect --messages --json`, at offset `at`:
/// header fields, the type's name and the payload ([`frame_payload_json`]).
pub fn message_json(h: &hrry::schema::transport::MessageHeader, at: u64, payload: Value) -> Value {
    let name = hrry::stream::message::MessageType::from_tag(h.message_type).map(|t| t.name());
    json!({
        "offset": at,
        "message_type": h.message_type,
        "type_name": name,
        "stream_id": h.stream_id,
        "payload_length": h.payload_length,
        "payload": payload,
    })
}

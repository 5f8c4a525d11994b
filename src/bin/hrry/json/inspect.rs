//! The `hrry inspect --json` document of a HRRYFILE: its head and its tensors (the
//! summary is [`crate::listed::Totals::json`]).

use hrry::file::{HrryFile, TensorEntry};
use hrry::schema::TensorDescriptor;
use serde_json::{json, Map, Value};

use super::descriptor_json;

/// The version of the `hrry inspect --json` document (`format_version`), raised when
/// a field changes meaning or goes away; new fields may appear without a change.
/// The document is described by `schema/inspect.schema.json`.
pub const INSPECT_FORMAT_VERSION: u64 = 1;

/// One tensor of an inspect document: its descriptor's fields, or why it cannot be
/// parsed (`"error"`), then its name and placement.
pub fn tensor_json(
    entry: &TensorEntry<'_>,
    descriptor: &Result<&TensorDescriptor, hrry::file::Error>,
) -> Value {
    let e = entry.index_entry();
    let mut v = match descriptor {
        Ok(d) => descriptor_json(d),
        Err(err) => json!({"error": err.to_string()}),
    };
    let m = v.as_object_mut().expect("object");
    m.insert("name".into(), json!(entry.name()));
    m.insert("descriptor_offset".into(), json!(e.descriptor_offset));
    m.insert("descriptor_length".into(), json!(e.descriptor_length));
    m.insert("data_offset".into(), json!(e.data_offset));
    m.insert("data_length".into(), json!(e.data_length));
    v
}

/// The fields of an inspect document that come before its KV and tensors:
/// `format_version`, `format`, `file_size`, `header`, `trailer`.
pub fn inspect_head_json(file: &HrryFile<'_>) -> Map<String, Value> {
    let h = file.header();
    let t = file.trailer();
    let v = json!({
        "format_version": INSPECT_FORMAT_VERSION,
        "format": "hrryfile",
        "file_size": file.size(),
        "header": {
            "container_version_major": h.container_version_major,
            "container_version_minor": h.container_version_minor,
            "file_flags": u32::from_le_bytes(h.file_flags.into_bytes()),
            "has_kv_metadata": h.file_flags.has_kv_metadata(),
            "sorted_index": h.file_flags.sorted_index(),
            "has_index_crc32c": h.file_flags.has_index_crc32c(),
            "data_buffer_alignment": h.data_buffer_alignment,
            "first_descriptor_offset": h.first_descriptor_offset,
            "tensor_count_hint": h.tensor_count_hint,
        },
        "trailer": {
            "index_offset": t.index_offset,
            "index_length": t.index_length,
            "kv_offset": t.kv_offset,
            "kv_length": t.kv_length,
            "index_crc32c": t.index_crc32c,
        },
    });
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

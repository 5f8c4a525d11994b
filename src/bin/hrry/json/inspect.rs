//! The `hrry inspect --json` document of a HRRYFILE: head, tensors, summary.

use hrry::file::HrryFile;
use hrry::schema::LAYOUT_COMPOSITE;
use serde_json::{json, Map, Value};

use super::descriptor_json;

/// The version of the `hrry inspect --json` document (`format_version`), raised when
/// a field changes meaning or goes away; new fields may appear without a change.
/// The document is described by `schema/inspect.schema.json`.
pub const INSPECT_FORMAT_VERSION: u64 = 1;

/// The tensors of an inspect document, in index order, each built when the
/// iterator reaches it. Descriptors that cannot be parsed are reported in place
/// (`"error"`).
pub fn tensors_json<'f>(file: &'f HrryFile<'_>) -> impl Iterator<Item = Value> + 'f {
    // `descriptors()` fetches them together (a remote file: in few requests).
    file.descriptors().map(|(entry, descriptor)| {
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
    })
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

/// The `summary` of an inspect document, added up one tensor at a time (see
/// [`summary_json`]).
#[derive(Clone, Debug)]
pub struct Summary {
    tensors: u64,
    parameters: Option<u64>,
    data_bytes: u64,
    by_type: Map<String, Value>,
}

impl Default for Summary {
    fn default() -> Self {
        Summary {
            tensors: 0,
            parameters: Some(0),
            data_bytes: 0,
            by_type: Map::new(),
        }
    }
}

impl Summary {
    /// Counts the tensor `t` (an element of an inspect document's `tensors`).
    pub fn add(&mut self, t: &Value) {
        self.tensors += 1;
        self.data_bytes = self
            .data_bytes
            .saturating_add(t["data_length"].as_u64().unwrap_or(0));
        let Some(ty) = t["element_type"].as_str() else {
            return;
        };
        let key = match t["quantization"]["scheme"].as_str() {
            Some(scheme) => format!("{ty} {scheme}"),
            None => ty.to_string(),
        };
        let n = self.by_type.get(&key).and_then(Value::as_u64).unwrap_or(0);
        self.by_type.insert(key, json!(n + 1));
        if t["layout_tag"].as_u64() != Some(u64::from(LAYOUT_COMPOSITE)) {
            self.parameters = match (self.parameters, t["element_count"].as_u64()) {
                (Some(p), Some(n)) => p.checked_add(n),
                _ => None,
            };
        }
    }

    /// The `summary` object.
    pub fn json(&self) -> Value {
        json!({
            "tensors": self.tensors,
            "parameters": self.parameters,
            "data_bytes": self.data_bytes,
            "by_type": self.by_type,
        })
    }
}

/// Totals over the tensors of an inspect document: tensors, parameters (elements of
/// every tensor but composite heads, whose members hold the data), data bytes, and a
/// count per element type (`"int4 per-block affine"` for a quantized one).
pub fn summary_json(tensors: &[Value]) -> Value {
    let mut summary = Summary::default();
    for t in tensors {
        summary.add(t);
    }
    summary.json()
}

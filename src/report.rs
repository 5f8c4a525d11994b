//! JSON renderings shared by the CLI and the tests: `hrry inspect --json`,
//! `hrry validate --json` and `hrry rules --json`.

use serde_json::{json, Map, Value};

use crate::file::HrryFile;
use crate::model::element_type::element_count;
use crate::model::ElementType;
use crate::schema::{
    layout_name, scale_type_name, scheme_name, KvElement, KvValue, LayoutFields, QuantScheme,
    QuantizationSection, TensorDescriptor, FLAG_SYMMETRIC, LAYOUT_COMPOSITE, NO_ZERO_POINT_BUFFER,
};
use crate::validate::{Report, Rule};

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `{"type", "value"}` for a KV value (arrays add `"element_type"` and `"count"`).
pub fn kv_json(v: &KvValue) -> Value {
    kv_json_limited(v, None)
}

/// [`kv_json`] keeping at most `max_array` elements of an array (then
/// `"truncated": true`; `"count"` is always the full length).
pub fn kv_json_limited(v: &KvValue, max_array: Option<usize>) -> Value {
    match v {
        KvValue::String(s) => json!({"type": "string", "value": text(&s.bytes)}),
        KvValue::Int64(i) => json!({"type": "int64", "value": i}),
        KvValue::Uint64(u) => json!({"type": "uint64", "value": u}),
        KvValue::Float64(f) => json!({"type": "float64", "value": float_json(*f)}),
        KvValue::Bool(b) => json!({"type": "bool", "value": *b != 0}),
        KvValue::Bytes(b) => json!({"type": "bytes", "value": hex(&b.bytes)}),
        KvValue::Array(a) => {
            let keep = max_array.unwrap_or(usize::MAX).min(a.len());
            let mut v = json!({
                "type": "array",
                "element_type": kv_type_name(a.element_tag),
                "count": a.len(),
                "value": a.iter().take(keep).map(element_json).collect::<Vec<_>>(),
            });
            if keep < a.len() {
                v["truncated"] = json!(true);
            }
            v
        }
    }
}

/// JSON has no NaN or infinities: those become strings.
fn float_json(f: f64) -> Value {
    if f.is_finite() {
        json!(f)
    } else {
        json!(f.to_string())
    }
}

/// One array element as JSON.
pub fn element_json(e: KvElement<'_>) -> Value {
    match e {
        KvElement::String(b) => json!(text(b)),
        KvElement::Int64(i) => json!(i),
        KvElement::Uint64(u) => json!(u),
        KvElement::Float64(f) => float_json(f),
        KvElement::Bool(b) => json!(b != 0),
        KvElement::Bytes(b) => json!(hex(b)),
    }
}

/// The KV type name of a value tag.
pub fn kv_type_name(tag: u8) -> &'static str {
    match tag {
        0x01 => "string",
        0x02 => "int64",
        0x03 => "uint64",
        0x04 => "float64",
        0x05 => "bool",
        0x06 => "bytes",
        0x07 => "array",
        _ => "unknown",
    }
}

/// The layout-specific fields of `d` as JSON (empty object when there are none).
pub fn layout_json(d: &TensorDescriptor) -> Value {
    match &d.layout {
        LayoutFields::Implicit => json!({}),
        LayoutFields::Strided { strides } => json!({"strides": strides}),
        LayoutFields::Tiled(t) => tiled_json(t),
        LayoutFields::Morton { morton_bits } => json!({"morton_bits": morton_bits}),
        LayoutFields::Coo(c) => json!({"nnz": c.nnz, "is_sorted": c.is_sorted}),
        LayoutFields::Csr(c) | LayoutFields::Csc(c) => json!({"nnz": c.nnz}),
        LayoutFields::Csf(c) => json!({"nnz": c.nnz, "mode_order": c.mode_order}),
        LayoutFields::BlockPaged(b) => json!({
            "page_size": b.page_size, "num_pages": b.num_pages, "paged_axis": b.paged_axis,
            "num_seqs": b.num_seqs, "kv_role": b.kv_role, "layer_index": b.layer_index,
            "block_table_index_type": b.block_table_index_type,
        }),
        LayoutFields::Composite(c) => json!({
            "composition_rule": c.composition_rule, "combine_op": c.combine_op,
            "member_count": c.member_count,
        }),
        LayoutFields::Hilbert(h) => {
            json!({"hilbert_order": h.hilbert_order, "hilbert_rank": h.hilbert_rank})
        }
        LayoutFields::Extension(e) => json!({
            "extension_layout_id": e.extension_layout_id,
            "extension_data": hex(&e.extension_data),
        }),
    }
}

fn tiled_json(t: &crate::schema::TiledFields) -> Value {
    let mut m = Map::new();
    m.insert("tile_shape".into(), json!(t.tile_shape));
    m.insert("outer_layout".into(), json!(t.outer_layout));
    m.insert("inner_layout".into(), json!(t.inner_layout));
    if let Some(s) = &t.outer_strides {
        m.insert("outer_strides".into(), json!(s));
    }
    if let Some(s) = &t.inner_strides {
        m.insert("inner_strides".into(), json!(s));
    }
    if let Some(inner) = &t.inner_tiled {
        m.insert("inner_tiled".into(), tiled_json(inner));
    }
    Value::Object(m)
}

/// A quantization section, raw (`descriptor`, hex) and decoded: scheme, storage
/// type, axis and block size, scale type, symmetric or zero points, parameter
/// buffers, and bits per weight (every buffer's bytes, codes and parameters, over the
/// element count). Fields a scheme does not have are absent; a descriptor too short
/// for its scheme (or of an unassigned scheme) has only the raw form, the tag and the
/// scheme name.
pub fn quantization_json(d: &TensorDescriptor, section: &QuantizationSection) -> Value {
    let raw = &section.quantization_descriptor[..];
    let tag = raw.first().copied().unwrap_or(0);
    let mut m = Map::new();
    m.insert("descriptor".into(), json!(hex(raw)));
    m.insert("scheme_tag".into(), json!(tag));
    m.insert("scheme".into(), json!(scheme_name(tag)));
    m.insert(
        "storage_type".into(),
        json!(ElementType::from_tag(d.type_tag).map_or("unknown", |t| t.name())),
    );
    let bytes: Option<u64> = d
        .buffers
        .iter()
        .try_fold(0u64, |acc, b| acc.checked_add(b.byte_size));
    let bits = match (bytes, element_count(&d.shape)) {
        (Some(b), Some(n)) if n > 0 => json!(b as f64 * 8.0 / n as f64),
        _ => Value::Null,
    };
    m.insert("bits_per_weight".into(), bits);
    let Some(scheme) = section.scheme() else {
        return Value::Object(m);
    };
    let header = scheme.header();
    m.insert("scheme_version".into(), json!(header.scheme_version));
    m.insert("flags".into(), json!(header.flags));
    let zero_points = |index: u32| {
        if index == NO_ZERO_POINT_BUFFER {
            Value::Null
        } else {
            json!(index)
        }
    };
    let symmetric = header.flags & FLAG_SYMMETRIC != 0;
    let fields = match scheme {
        QuantScheme::PerTensorAffine(p) => json!({
            "scale": float_json(f64::from(p.scale)),
            "zero_point": p.zero_point,
            "symmetric": p.zero_point == 0,
        }),
        QuantScheme::PerChannelAffine(p) => json!({
            "axis": p.axis,
            "scale_type": scale_type_name(p.scale_type_tag),
            "scale_buffer_index": p.scale_buffer_index,
            "zero_point_buffer_index": zero_points(p.zero_point_buffer_index),
            "symmetric": symmetric,
        }),
        QuantScheme::PerBlockAffine(p) => json!({
            "axis": p.axis,
            "block_size": p.block_size,
            "scale_type": scale_type_name(p.scale_type_tag),
            "scale_buffer_index": p.scale_buffer_index,
            "zero_point_buffer_index": zero_points(p.zero_point_buffer_index),
            "symmetric": symmetric,
        }),
        // NF4 scales are float32 absmax values and MXFP scales E8M0 exponents; neither
        // has zero points.
        QuantScheme::Nf4(b) => json!({
            "axis": b.axis,
            "block_size": b.block_size,
            "scale_type": "float32",
            "scale_buffer_index": b.scale_buffer_index,
            "symmetric": true,
        }),
        QuantScheme::Mxfp(b) => json!({
            "axis": b.axis,
            "block_size": b.block_size,
            "scale_type": "float8_e8m0",
            "scale_buffer_index": b.scale_buffer_index,
            "symmetric": true,
        }),
    };
    if let Value::Object(fields) = fields {
        m.extend(fields);
    }
    Value::Object(m)
}

/// The descriptor fields of one tensor (without its index placement).
pub fn descriptor_json(d: &TensorDescriptor) -> Value {
    let mut v = json!({
        "type_tag": d.type_tag,
        "element_type": ElementType::from_tag(d.type_tag).map_or("unknown", |t| t.name()),
        "layout_tag": d.layout_tag,
        "version_major": d.version_major,
        "version_minor": d.version_minor,
        "shape": d.shape,
        "byte_offset": d.byte_offset,
        "layout": layout_json(d),
        "buffers": d.buffers.iter().map(|b| json!({
            "byte_size": b.byte_size, "alignment": b.alignment, "device_tag": b.device_tag,
            "sync_mode": b.sync_mode, "memory_class": b.memory_class,
        })).collect::<Vec<_>>(),
        "flags": u32::from_le_bytes(d.flags.into_bytes()),
    });
    let m = v.as_object_mut().expect("object");
    if let Some(q) = &d.quantization {
        m.insert("quantization".into(), quantization_json(d, q));
    }
    m.insert("layout_name".into(), json!(layout_name(d.layout_tag)));
    m.insert("element_count".into(), json!(element_count(&d.shape)));
    if let Some(o) = crate::decode::descriptor::oversized_buffer(d) {
        m.insert(
            "oversized_buffer".into(),
            json!({
                "byte_size": o.byte_size, "needed": o.needed,
                "one_byte_per_element": o.one_byte_per_element,
            }),
        );
    }
    if let Some(s) = &d.shard {
        m.insert(
            "shard".into(),
            json!({"parent_shape": s.parent_shape, "shard_offset": s.shard_offset}),
        );
    }
    if let Some(s) = &d.statistics {
        m.insert("statistics".into(), json!({
            "computed_mask": s.computed_mask, "nnz": s.nnz,
            "sparsity_ratio": float_json(s.sparsity_ratio), "value_min": float_json(s.value_min),
            "value_max": float_json(s.value_max), "value_abs_max": float_json(s.value_abs_max),
            "value_mean": float_json(s.value_mean), "value_stddev": float_json(s.value_stddev),
            "nm_n": s.nm_n, "nm_m": s.nm_m, "has_nan": s.has_nan, "has_inf": s.has_inf,
        }));
    }
    if let Some(e) = &d.extension_type {
        m.insert("extension_type".into(), json!({
            "bit_width": e.bit_width, "packing_factor": e.packing_factor, "is_float": e.is_float,
            "is_signed": e.is_signed, "sign_bits": e.sign_bits, "exponent_bits": e.exponent_bits,
            "mantissa_bits": e.mantissa_bits, "exponent_bias": e.exponent_bias,
            "has_nan": e.has_nan, "has_inf": e.has_inf,
        }));
    }
    if let Some(c) = &d.composite_member {
        m.insert(
            "composite_member".into(),
            json!({"member_role": c.member_role}),
        );
    }
    v
}

/// The version of the `hrry inspect --json` document (`format_version`), raised when
/// a field changes meaning or goes away; new fields may appear without a change.
/// The document is described by `schema/inspect.schema.json`.
pub const INSPECT_FORMAT_VERSION: u64 = 1;

/// Choices for [`inspect_json_with`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InspectOptions {
    /// Keep at most this many elements of each KV array (`None`: all).
    pub max_array: Option<usize>,
}

/// `hrry inspect --json` for an opened file, every value in full. Descriptors that
/// cannot be parsed are reported in place (`"error"`), so one bad tensor does not hide
/// the rest.
pub fn inspect_json(file: &HrryFile<'_>) -> Value {
    inspect_json_with(file, &InspectOptions::default())
}

/// [`inspect_json`] with `options`. The whole document is built in memory: a
/// renderer that writes it out as it walks the file uses its parts instead
/// ([`inspect_head_json`], [`kv_json_limited`] per entry, [`tensors_json`],
/// [`Summary`]), so that a file of many tensors or large KV values costs little.
pub fn inspect_json_with(file: &HrryFile<'_>, options: &InspectOptions) -> Value {
    let kv: Map<String, Value> = file
        .kv()
        .iter()
        .map(|e| (text(&e.key), kv_json_limited(&e.value, options.max_array)))
        .collect();
    let tensors: Vec<Value> = tensors_json(file).collect();
    let summary = summary_json(&tensors);
    let mut v = Value::Object(inspect_head_json(file));
    v["kv"] = Value::Object(kv);
    v["tensors"] = Value::Array(tensors);
    v["summary"] = summary;
    v
}

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

/// `hrry validate --json` for one file.
pub fn validate_json(file: &str, format: &str, report: &Report) -> Value {
    json!({
        "file": file,
        "valid": report.is_valid(),
        "verdict": report.verdict().name(),
        "format": format,
        // The spec's reader mode and the hardening policy, as the flags named them.
        "mode": if report.judging.rules.is_strict() { "strict" } else { "permissive" },
        "policy": if report.judging.rules.hardening() { "hardened" } else { "spec" },
        "violations": report.violations.iter().map(|v| json!({
            "rule": v.rule.id,
            "level": v.rule.level.name(),
            "offset": v.offset,
            "message": v.message,
        })).collect::<Vec<_>>(),
        "notes": report.notes,
    })
}

/// One rule as JSON.
pub fn rule_json(r: &Rule) -> Value {
    json!({
        "id": r.id,
        "level": r.level.name(),
        "reads": r.reads.name(),
        "summary": r.summary,
        "spec": r.spec
    })
}

/// One tensor of a bare stream for `hrry inspect --json`: its descriptor fields
/// ([`descriptor_json`]), the name `hrry stream unpack` gives it and where it sits.
pub fn stream_tensor_json(t: &crate::stream::StreamTensor, name: &str) -> Value {
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

fn layouts_json(list: &crate::schema::transport::LayoutList) -> Value {
    list.entries
        .iter()
        .map(|e| match &e.ext_metadata {
            Some(m) => json!({"layout_tag": e.layout_tag, "ext_metadata": hex(&m.bytes)}),
            None => json!({"layout_tag": e.layout_tag}),
        })
        .collect()
}

fn hello_json(h: &crate::schema::transport::Hello) -> Value {
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
    match crate::schema::read_from::<TensorDescriptor>(bytes) {
        Ok((d, _)) => descriptor_json(&d),
        Err(e) => json!({"error": crate::schema::error_text(&e)}),
    }
}

/// A transport message's decoded fields for `hrry stream inspect --messages
/// --json` (data frames show their length, not their bytes).
pub fn payload_json(p: &crate::stream::message::Payload) -> Value {
    use crate::stream::message::Payload as P;
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

/// One framed message for `hrry stream inspect --messages --json`, at offset `at`:
/// header fields, the type's name and the decoded payload (or why it does not
/// decode).
pub fn message_json(frame: &crate::stream::message::Frame, at: u64) -> Value {
    let h = frame.header;
    let name = crate::stream::message::MessageType::from_tag(h.message_type).map(|t| t.name());
    let payload = match frame.decode(at) {
        Ok((p, _)) => payload_json(&p),
        Err(e) => json!({"error": e.to_string()}),
    };
    json!({
        "offset": at,
        "message_type": h.message_type,
        "type_name": name,
        "stream_id": h.stream_id,
        "payload_length": h.payload_length,
        "payload": payload,
    })
}

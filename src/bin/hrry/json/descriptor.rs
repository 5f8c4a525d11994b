//! A tensor descriptor as JSON: its fields, layout fields and quantization section.

use hrry::model::element_type::element_count;
use hrry::model::ElementType;
use hrry::schema::{
    layout_name, scale_type_name, scheme_name, LayoutFields, QuantScheme, QuantizationSection,
    TensorDescriptor, FLAG_SYMMETRIC, NO_ZERO_POINT_BUFFER,
};
use serde_json::{json, Map, Value};

use super::{float_json, hex};

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

fn tiled_json(t: &hrry::schema::TiledFields) -> Value {
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
    let raw = section.bytes();
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
    if let Some(o) = hrry::decode::descriptor::oversized_buffer(d) {
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

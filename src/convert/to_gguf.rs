//! HRRYFILE → GGUF (version 3), for tensors GGUF holds exactly.
//!
//! Tensors: the Hurray shape reversed gives the GGUF dimensions (at most 4; a
//! scalar becomes `[1]`). Row-major tensors of the types GGUF shares (float32,
//! float16, bfloat16, float64, int8 to int64) are copied. Per-block affine
//! symmetric int8 / int4 tensors with blocks of 32 along the last axis and float16
//! scales become `Q8_0` / `Q4_0` blocks (codes and scales interleaved, int4 nibbles
//! repacked). Everything else is refused by name, unless
//! [`Options::dequantize_unsupported`] asks for it to be stored as `--dtype`
//! floats: other quantized tensors dequantized, dense types GGUF lacks converted.
//!
//! Metadata: every KV entry GGUF can hold is carried over. When the file came from
//! GGUF, the original value types recorded under [`GGUF_VALUE_TYPES_KEY`] are
//! restored (llama.cpp checks them); otherwise KV types map to their widest GGUF
//! counterparts. Byte sequences become `uint8` arrays.

use std::io::Write;
use std::path::Path;

use super::gguf::GGUF_VALUE_TYPES_KEY;
use super::hrry_source::{self, converts_to_float, render, HrryInput, Render, RenderScratch};
use super::output::Target;
use super::qblocks::{self, Kind};
use super::{output, Error, FloatType, ModelFormat, Options, Progress, Summary};
use crate::convert::gguf_schema::{
    gguf_type_code, gguf_value_type as vt, GgmlType, GgufArray, GgufArrayValues, GgufKv,
    GgufPreamble, GgufString, GgufTensorInfo, GgufValue, GGUF_ALIGNMENT_KEY,
    GGUF_DEFAULT_ALIGNMENT,
};
use crate::model::{element_count, ElementType};
use crate::schema::{
    to_bytes, KvScalar, KvValue, QuantScheme, TensorDescriptor, FLAG_SYMMETRIC, LAYOUT_ROW_MAJOR,
    NO_ZERO_POINT_BUFFER,
};

/// Most dimensions a GGUF tensor has (ggml's `GGML_MAX_DIMS`).
const MAX_DIMS: usize = 4;
/// Largest `general.alignment` honoured.
const MAX_ALIGNMENT: u64 = 1 << 30;

/// The ggml type of a dense element type GGUF shares.
fn ggml_type(ty: ElementType) -> Option<GgmlType> {
    Some(match ty {
        ElementType::Float32 => GgmlType::F32,
        ElementType::Float16 => GgmlType::F16,
        ElementType::Bfloat16 => GgmlType::Bf16,
        ElementType::Float64 => GgmlType::F64,
        ElementType::Int8 => GgmlType::I8,
        ElementType::Int16 => GgmlType::I16,
        ElementType::Int32 => GgmlType::I32,
        ElementType::Int64 => GgmlType::I64,
        _ => return None,
    })
}

fn float_ggml(t: FloatType) -> GgmlType {
    match t {
        FloatType::F32 => GgmlType::F32,
        FloatType::F16 => GgmlType::F16,
        FloatType::Bf16 => GgmlType::Bf16,
    }
}

fn ggml_code(ty: GgmlType) -> u32 {
    (0..64)
        .find(|&c| GgmlType::from_code(c) == Some(ty))
        .unwrap_or(0)
}

/// One output tensor: its info (offset filled in later), size and how it is made.
struct Planned {
    name: String,
    dimensions: Vec<u64>,
    ty: GgmlType,
    size: u64,
    render: Render,
}

/// What a tensor GGUF cannot hold exactly is, for the refusal message.
enum Plan {
    Ok(Planned),
    /// Convertible with `--dequantize-unsupported`; the reason it is not exact.
    NeedsFlag(String),
}

/// Decides how tensor `index` becomes GGUF; `Err` for what no flag helps.
fn plan(input: &HrryInput, index: usize, options: &Options) -> Result<Plan, Error> {
    let t = &input.tensors[index];
    let d = &t.descriptor;
    let name = t.name.as_str();
    let bad = |m: String| Error::tensor(name, m);
    let ty = ElementType::from_tag(d.type_tag)
        .ok_or_else(|| bad(format!("unknown type tag {:#04x}", d.type_tag)))?;
    if d.layout_tag != LAYOUT_ROW_MAJOR {
        return Err(bad(format!(
            "layout {:#04x} is not row-major; GGUF holds row-major tensors only",
            d.layout_tag
        )));
    }
    if d.shape.len() > MAX_DIMS {
        return Err(bad(format!(
            "{} dimensions; GGUF tensors have at most {MAX_DIMS}",
            d.shape.len()
        )));
    }
    let n =
        element_count(&d.shape).ok_or_else(|| bad("the shape is dynamic or overflows".into()))?;
    let mut dimensions: Vec<u64> = d.shape.iter().rev().copied().collect();
    if dimensions.is_empty() {
        dimensions.push(1);
    }
    let dequantized = |render: Render| {
        let dtype = options.dtype;
        let size = n
            .checked_mul(dtype.size() as u64)
            .ok_or_else(|| bad("the output size overflows".into()))?;
        Ok(Plan::Ok(Planned {
            name: name.to_string(),
            dimensions: dimensions.clone(),
            ty: float_ggml(dtype),
            size,
            render,
        }))
    };
    if let Some(section) = &d.quantization {
        let scheme = section
            .scheme()
            .ok_or_else(|| bad("unknown or truncated quantization descriptor".into()))?;
        if let Some(kind) = exact_blocks(d, scheme, ty) {
            return blocks_plan(t, kind, n, dimensions);
        }
        if !options.dequantize_unsupported {
            return Ok(Plan::NeedsFlag(describe(scheme, ty, &d.shape)));
        }
        return dequantized(Render::Dequantize {
            tensor: index,
            dtype: options.dtype,
        });
    }
    let data = t
        .offsets
        .first()
        .and_then(|&o| o.checked_add(d.byte_offset))
        .ok_or_else(|| bad("a row-major tensor without a data buffer".into()))?;
    let stored = ty
        .buffer_size(n)
        .filter(|&s| {
            d.byte_offset
                .checked_add(s)
                .is_some_and(|end| end <= d.buffers[0].byte_size)
        })
        .ok_or_else(|| bad("its data does not fit its buffer".into()))?;
    if let Some(g) = ggml_type(ty) {
        return Ok(Plan::Ok(Planned {
            name: name.to_string(),
            dimensions,
            ty: g,
            size: stored,
            render: Render::Copy {
                offset: data,
                len: stored,
            },
        }));
    }
    if !converts_to_float(ty) {
        return Err(bad(format!(
            "GGUF has no type for {} and hrry cannot convert it to floats",
            ty.name()
        )));
    }
    if !options.dequantize_unsupported {
        return Ok(Plan::NeedsFlag(format!("GGUF has no {} type", ty.name())));
    }
    dequantized(Render::ToFloat {
        offset: data,
        len: stored,
        n,
        ty,
        dtype: options.dtype,
    })
}

/// `Q8_0` or `Q4_0` when the tensor is exactly one: per-block affine, symmetric,
/// int8 / int4, blocks of 32 along the last axis, float16 scales in their own
/// buffer, a last axis of whole blocks.
fn exact_blocks(d: &TensorDescriptor, scheme: &QuantScheme, ty: ElementType) -> Option<Kind> {
    let QuantScheme::PerBlockAffine(p) = scheme else {
        return None;
    };
    let kind = match ty {
        ElementType::Int8 => Kind::Q8_0,
        ElementType::Int4 => Kind::Q4_0,
        _ => return None,
    };
    let last = d.shape.len().checked_sub(1)?;
    let exact = p.header.flags & FLAG_SYMMETRIC != 0
        && p.zero_point_buffer_index == NO_ZERO_POINT_BUFFER
        && p.block_size as usize == qblocks::BLOCK
        && p.scale_type_tag == ElementType::Float16.tag()
        && p.axis as usize == last
        && p.scale_buffer_index != 0
        && (p.scale_buffer_index as usize) < d.buffers.len()
        && d.shape[last].is_multiple_of(qblocks::BLOCK as u64);
    exact.then_some(kind)
}

/// The plan of an exact `Q8_0` / `Q4_0` tensor, its ranges checked.
fn blocks_plan(
    t: &hrry_source::InputTensor,
    kind: Kind,
    n: u64,
    dimensions: Vec<u64>,
) -> Result<Plan, Error> {
    let d = &t.descriptor;
    let bad = |m: &str| Error::tensor(&t.name, m.to_string());
    let QuantScheme::PerBlockAffine(p) = d
        .quantization
        .as_ref()
        .and_then(|q| q.scheme())
        .ok_or_else(|| bad("unreadable quantization descriptor"))?
    else {
        return Err(bad("not per-block affine"));
    };
    let blocks = n / qblocks::BLOCK as u64;
    let code_len = blocks * kind.code_bytes() as u64;
    let scale_len = blocks * 2;
    let scale_index = p.scale_buffer_index as usize;
    let fits = d
        .byte_offset
        .checked_add(code_len)
        .is_some_and(|end| end <= d.buffers[0].byte_size)
        && scale_len <= d.buffers[scale_index].byte_size;
    if !fits {
        return Err(bad("its codes or scales do not fit their buffers"));
    }
    Ok(Plan::Ok(Planned {
        name: t.name.clone(),
        dimensions,
        ty: kind.ggml(),
        size: blocks * kind.block_bytes() as u64,
        render: Render::Blocks {
            kind,
            codes: (t.offsets[0] + d.byte_offset, code_len),
            scales: (t.offsets[scale_index], scale_len),
        },
    }))
}

/// A short description of a quantized tensor GGUF cannot hold exactly.
fn describe(scheme: &QuantScheme, ty: ElementType, shape: &[u64]) -> String {
    let what = match scheme {
        QuantScheme::PerTensorAffine(_) => "per-tensor affine".to_string(),
        QuantScheme::PerChannelAffine(p) => format!("per-channel affine on axis {}", p.axis),
        QuantScheme::PerBlockAffine(p) => format!(
            "per-block affine ({}, blocks of {} on axis {} of length {}, {} scales)",
            if p.header.flags & FLAG_SYMMETRIC != 0 {
                "symmetric"
            } else {
                "asymmetric"
            },
            p.block_size,
            p.axis,
            shape
                .get(p.axis as usize)
                .map_or("?".to_string(), |l| l.to_string()),
            ElementType::from_tag(p.scale_type_tag).map_or("unknown", |t| t.name())
        ),
        QuantScheme::Nf4(p) => format!("NF4 (blocks of {})", p.block_size),
        QuantScheme::Mxfp(p) => format!("MXFP (blocks of {})", p.block_size),
    };
    format!(
        "{} {what} has no exact GGUF type (Q8_0 / Q4_0 need symmetric int8 / int4, blocks of 32 on the last axis, a multiple of 32 long, float16 scales)",
        ty.name()
    )
}

/// The recorded GGUF types of a file converted from GGUF: key to type name.
fn recorded_types(input: &HrryInput) -> serde_json::Map<String, serde_json::Value> {
    input
        .kv
        .iter()
        .find(|kv| kv.key == GGUF_VALUE_TYPES_KEY.as_bytes())
        .and_then(|kv| match &kv.value {
            KvValue::String(s) => serde_json::from_slice(&s.bytes).ok(),
            _ => None,
        })
        .unwrap_or_default()
}

/// A scalar of GGUF type `code` holding `v`, when `v` fits it exactly.
fn narrow(v: &KvScalar, code: u32) -> Option<GgufValue> {
    use GgufValue as G;
    Some(match (v, code) {
        (KvScalar::Uint64(x), vt::UINT8) => G::Uint8(u8::try_from(*x).ok()?),
        (KvScalar::Uint64(x), vt::UINT16) => G::Uint16(u16::try_from(*x).ok()?),
        (KvScalar::Uint64(x), vt::UINT32) => G::Uint32(u32::try_from(*x).ok()?),
        (KvScalar::Uint64(x), vt::UINT64) => G::Uint64(*x),
        (KvScalar::Int64(x), vt::INT8) => G::Int8(i8::try_from(*x).ok()?),
        (KvScalar::Int64(x), vt::INT16) => G::Int16(i16::try_from(*x).ok()?),
        (KvScalar::Int64(x), vt::INT32) => G::Int32(i32::try_from(*x).ok()?),
        (KvScalar::Int64(x), vt::INT64) => G::Int64(*x),
        (KvScalar::Float64(x), vt::FLOAT32) => {
            let f = *x as f32;
            (f64::from(f) == *x || x.is_nan()).then_some(G::Float32(f))?
        }
        (KvScalar::Float64(x), vt::FLOAT64) => G::Float64(*x),
        (KvScalar::Bool(b), vt::BOOL) => G::Bool(*b),
        (KvScalar::String(s) | KvScalar::Bytes(s), vt::STRING) => G::String(GgufString {
            bytes: s.bytes.clone(),
        }),
        _ => return None,
    })
}

/// The widest GGUF scalar for a KV scalar (`None` for byte sequences).
fn widest(v: &KvScalar) -> Option<GgufValue> {
    Some(match v {
        KvScalar::Uint64(x) => GgufValue::Uint64(*x),
        KvScalar::Int64(x) => GgufValue::Int64(*x),
        KvScalar::Float64(x) => GgufValue::Float64(*x),
        KvScalar::Bool(b) => GgufValue::Bool(*b),
        KvScalar::String(s) => GgufValue::String(GgufString {
            bytes: s.bytes.clone(),
        }),
        KvScalar::Bytes(_) => return None,
    })
}

/// The scalar KV value of a non-array `KvValue`.
fn scalar_of(v: &KvValue) -> Option<KvScalar> {
    Some(match v {
        KvValue::String(s) => KvScalar::String(s.clone()),
        KvValue::Int64(x) => KvScalar::Int64(*x),
        KvValue::Uint64(x) => KvScalar::Uint64(*x),
        KvValue::Float64(x) => KvScalar::Float64(*x),
        KvValue::Bool(b) => KvScalar::Bool(*b),
        KvValue::Bytes(b) => KvScalar::Bytes(b.clone()),
        KvValue::Array(_) => return None,
    })
}

/// Builds a GGUF array from scalar values all of one GGUF type.
fn gguf_array(values: Vec<GgufValue>, element: u32) -> Option<GgufValue> {
    macro_rules! collect {
        ($variant:ident) => {
            GgufArrayValues::$variant(
                values
                    .into_iter()
                    .map(|v| match v {
                        GgufValue::$variant(x) => Some(x),
                        _ => None,
                    })
                    .collect::<Option<Vec<_>>>()?,
            )
        };
    }
    let values = match element {
        vt::UINT8 => collect!(Uint8),
        vt::INT8 => collect!(Int8),
        vt::UINT16 => collect!(Uint16),
        vt::INT16 => collect!(Int16),
        vt::UINT32 => collect!(Uint32),
        vt::INT32 => collect!(Int32),
        vt::FLOAT32 => collect!(Float32),
        vt::BOOL => collect!(Bool),
        vt::STRING => collect!(String),
        vt::UINT64 => collect!(Uint64),
        vt::INT64 => collect!(Int64),
        vt::FLOAT64 => collect!(Float64),
        _ => return None,
    };
    Some(GgufValue::Array(GgufArray { values }))
}

/// The GGUF value of a KV value: of the `recorded` type when given and the value
/// fits it, else the widest match. Byte sequences become `uint8` arrays.
fn gguf_value(v: &KvValue, recorded: Option<&str>) -> Option<GgufValue> {
    let bytes_array = |b: &[u8]| {
        GgufValue::Array(GgufArray {
            values: GgufArrayValues::Uint8(b.to_vec()),
        })
    };
    match v {
        KvValue::Array(a) => {
            let element = recorded
                .and_then(|r| r.strip_prefix("array<")?.strip_suffix('>'))
                .and_then(gguf_type_code);
            let narrowed = element.and_then(|code| {
                let values = a
                    .iter()
                    .map(|e| narrow(&e.to_scalar(), code))
                    .collect::<Option<_>>()?;
                gguf_array(values, code)
            });
            narrowed.or_else(|| {
                let values: Vec<GgufValue> = a
                    .iter()
                    .map(|e| widest(&e.to_scalar()))
                    .collect::<Option<_>>()?;
                let code = values.first().map_or(vt::UINT64, GgufValue::value_type);
                gguf_array(values, code)
            })
        }
        KvValue::Bytes(b) if recorded != Some("string") => Some(bytes_array(&b.bytes)),
        other => {
            let s = scalar_of(other)?;
            recorded
                .and_then(gguf_type_code)
                .and_then(|code| narrow(&s, code))
                .or_else(|| widest(&s))
        }
    }
}

/// Converts the HRRYFILE `input` into the GGUF file `target`.
pub(crate) fn from_hrry_into(
    input_path: &Path,
    target: Target<'_>,
    options: &Options,
    progress: &mut dyn Progress,
) -> Result<Summary, Error> {
    let name = target.name();
    let output = name.as_path();
    let mut input = hrry_source::open(input_path, options.permissive)?;
    let mut notes = std::mem::take(&mut input.notes);
    let mut planned = Vec::with_capacity(input.tensors.len());
    let mut refused: Vec<(String, String)> = Vec::new();
    for i in 0..input.tensors.len() {
        match plan(&input, i, options)? {
            Plan::Ok(p) => planned.push(p),
            Plan::NeedsFlag(why) => refused.push((input.tensors[i].name.clone(), why)),
        }
    }
    if let Some((name, why)) = refused.first() {
        let more = match refused.len() {
            1 => String::new(),
            n => format!(
                " ({} more: {})",
                n - 1,
                refused[1..]
                    .iter()
                    .take(5)
                    .map(|(n, _)| format!("{n:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        return Err(Error::tensor(
            name,
            format!(
                "{why}; rerun with --dequantize-unsupported to store it as --dtype floats{more}"
            ),
        ));
    }

    // Metadata.
    let types = recorded_types(&input);
    let mut alignment = u64::from(GGUF_DEFAULT_ALIGNMENT);
    let mut metadata = Vec::new();
    let mut dropped = Vec::new();
    let mut bytes_arrays = 0usize;
    for kv in &input.kv {
        let Ok(key) = std::str::from_utf8(&kv.key) else {
            dropped.push(String::from_utf8_lossy(&kv.key).into_owned());
            continue;
        };
        if key == GGUF_VALUE_TYPES_KEY {
            continue;
        }
        let recorded = types.get(key).and_then(|t| t.as_str());
        let Some(value) = gguf_value(&kv.value, recorded) else {
            dropped.push(key.to_string());
            continue;
        };
        if matches!(kv.value, KvValue::Bytes(_)) && recorded != Some("string") {
            bytes_arrays += 1;
        }
        if key == GGUF_ALIGNMENT_KEY {
            match value
                .as_u64()
                .filter(|a| a.is_power_of_two() && *a <= MAX_ALIGNMENT)
            {
                Some(a) => alignment = a,
                None => {
                    dropped.push(key.to_string());
                    continue;
                }
            }
        }
        metadata.push(GgufKv {
            key: GgufString::from(key),
            value,
        });
    }
    if bytes_arrays > 0 {
        notes.push(format!(
            "{bytes_arrays} byte-sequence metadata entr{} stored as uint8 arrays (GGUF has no byte type)",
            if bytes_arrays == 1 { "y" } else { "ies" }
        ));
    }
    if !dropped.is_empty() {
        notes.push(format!(
            "{} metadata entr{} GGUF cannot hold dropped: {}",
            dropped.len(),
            if dropped.len() == 1 { "y" } else { "ies" },
            dropped
                .iter()
                .take(5)
                .map(|k| format!("{k:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let long = planned.iter().filter(|p| p.name.len() >= 64).count();
    if long > 0 {
        notes.push(format!(
            "{long} tensor {} of 64 bytes or more, which llama.cpp refuses",
            if long == 1 { "name" } else { "names" }
        ));
    }
    let dequantized = planned
        .iter()
        .filter(|p| matches!(p.render, Render::Dequantize { .. } | Render::ToFloat { .. }))
        .count();
    if dequantized > 0 {
        notes.push(format!(
            "{dequantized} {} stored as {} (--dequantize-unsupported)",
            if dequantized == 1 {
                "tensor"
            } else {
                "tensors"
            },
            options.dtype.element_type().name()
        ));
    }

    // Tensor infos: each tensor's data at the next multiple of the alignment.
    let mut infos = Vec::with_capacity(planned.len());
    let mut offset = 0u64;
    for p in &planned {
        infos.push(GgufTensorInfo {
            name: GgufString::from(p.name.as_str()),
            dimensions: p.dimensions.clone(),
            ggml_type: ggml_code(p.ty),
            offset,
        });
        offset = offset
            .checked_add(p.size)
            .and_then(|e| e.checked_next_multiple_of(alignment))
            .ok_or_else(|| Error::Unsupported("the GGUF data section overflows".into()))?;
    }
    let kv_count = metadata.len();
    let preamble = to_bytes(&GgufPreamble {
        version: 3,
        metadata,
        tensors: infos,
    });

    let mut out = target.create(&[input_path])?;
    let io = |e| super::io_at(output, e);
    let mut position = preamble.len() as u64;
    out.write_all(&preamble).map_err(io)?;
    drop(preamble);
    progress.begin(planned.iter().map(|p| p.render.input_len(&input)).sum());
    let mut scratch = RenderScratch::default();
    for p in &planned {
        progress.tensor(&p.name);
        let start = position
            .checked_next_multiple_of(alignment)
            .ok_or_else(|| Error::Unsupported("the GGUF file overflows".into()))?;
        pad(&mut out, start - position).map_err(io)?;
        let written = render(
            &p.render,
            &mut input,
            &mut out,
            output,
            &mut scratch,
            progress,
        )?;
        if written != p.size {
            return Err(Error::tensor(
                &p.name,
                format!("produced {written} bytes, {} planned", p.size),
            ));
        }
        position = start + written;
    }
    output::commit(out)?;
    Ok(Summary {
        from: ModelFormat::Hrry,
        to: ModelFormat::Gguf,
        tensors: planned.len(),
        metadata: kv_count,
        as_dtype: dequantized,
        notes,
    })
}

/// Writes `n` zero bytes.
fn pad(out: &mut impl Write, n: u64) -> std::io::Result<()> {
    const ZEROS: [u8; 64] = [0; 64];
    let mut left = n;
    while left > 0 {
        let k = left.min(ZEROS.len() as u64) as usize;
        out.write_all(&ZEROS[..k])?;
        left -= k as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{KvArray, LenBytes};

    #[test]
    fn recorded_types_are_restored_when_the_value_fits() {
        let u = KvValue::Uint64(7);
        assert_eq!(gguf_value(&u, Some("uint32")), Some(GgufValue::Uint32(7)));
        assert_eq!(gguf_value(&u, None), Some(GgufValue::Uint64(7)));
        let big = KvValue::Uint64(1 << 40);
        assert_eq!(
            gguf_value(&big, Some("uint32")),
            Some(GgufValue::Uint64(1 << 40))
        );
        let f = KvValue::Float64(f64::from(0.1f32));
        assert_eq!(
            gguf_value(&f, Some("float32")),
            Some(GgufValue::Float32(0.1))
        );
        let inexact = KvValue::Float64(0.1);
        assert_eq!(
            gguf_value(&inexact, Some("float32")),
            Some(GgufValue::Float64(0.1))
        );
        let arr = KvValue::Array(KvArray::new(
            0x02,
            vec![KvScalar::Int64(1), KvScalar::Int64(-3)],
        ));
        assert_eq!(
            gguf_value(&arr, Some("array<int32>")),
            Some(GgufValue::Array(GgufArray {
                values: GgufArrayValues::Int32(vec![1, -3])
            }))
        );
        assert_eq!(
            gguf_value(&arr, None),
            Some(GgufValue::Array(GgufArray {
                values: GgufArrayValues::Int64(vec![1, -3])
            }))
        );
        let bytes = KvValue::Bytes(LenBytes { bytes: vec![0xFF] });
        assert_eq!(
            gguf_value(&bytes, Some("string")),
            Some(GgufValue::String(GgufString { bytes: vec![0xFF] }))
        );
        assert_eq!(
            gguf_value(&bytes, None),
            Some(GgufValue::Array(GgufArray {
                values: GgufArrayValues::Uint8(vec![0xFF])
            }))
        );
        assert_eq!(ggml_code(GgmlType::Q4_0), 2);
        assert_eq!(ggml_code(GgmlType::Bf16), 30);
    }
}

//! How `hrry inspect` shows what an input holds, shared by the listing of every
//! format (HRRYFILE, bare stream, `.holo`, safetensors and GGUF): the summary line,
//! the KV and tensor tables (aligned, long values cut, untrusted text escaped) and
//! the `--json` document of an input that cannot be read.

use hrry::model::element_type::element_count;
use hrry::schema::{
    layout_name, scale_type_name, QuantScheme, QuantizationSection, TensorDescriptor,
    FLAG_SYMMETRIC,
};
use serde_json::{json, Map, Value};

use crate::json::INSPECT_FORMAT_VERSION;
use crate::listed::{element_type_name, scheme_of, Listed, Totals};
use crate::text::{self, cut, plural, safe, width};

/// Characters of a string value shown by default in human output.
const SHOWN_STRING_CHARS: usize = 80;

/// Widest name column; longer names go on a line of their own.
const NAME_COLUMN_MAX: usize = 48;

/// The `--json` document for a file that cannot be opened (exit 1) or read (exit
/// 2): why, the format recognised, the rule it breaks and where, when known.
pub fn error_json(
    name: &str,
    format: Option<&str>,
    error: &str,
    rule: Option<&str>,
    offset: Option<u64>,
) -> Value {
    json!({
        "format_version": INSPECT_FORMAT_VERSION,
        "file": name,
        "format": format,
        "error": error,
        "rule": rule,
        "offset": offset,
    })
}

/// "3 tensors, 1234 parameters, 4.5 KiB of data: float32 ×2, int4 per-block affine ×1"
pub fn summary_line(s: &Totals) -> String {
    let types: Vec<String> = s
        .by_type
        .iter()
        .map(|(k, n)| format!("{} ×{n}", safe(k)))
        .collect();
    format!(
        "{}, {} parameters, {} of data{}{}",
        plural(s.tensors, "tensor", "tensors"),
        s.parameters.map_or("?".to_string(), |p| p.to_string()),
        human_bytes(s.data_bytes),
        if types.is_empty() { "" } else { ": " },
        types.join(", ")
    )
}

/// Bytes with a binary unit (`4.5 KiB`), exact below 1 KiB.
fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if n < 1024 {
        return format!("{n} bytes");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// KV entries shown as JSON values (a safetensors or GGUF file's metadata), each
/// key's type taken from `source_types` when given instead of the stored type.
pub fn print_kv_typed(
    kv: &Map<String, Value>,
    full: bool,
    heading: bool,
    source_types: Option<&Map<String, Value>>,
) {
    let type_of = |key: &str, e: &Value| {
        source_types
            .and_then(|t| t.get(key))
            .and_then(Value::as_str)
            .map_or_else(
                || e["type"].as_str().unwrap_or("?").to_string(),
                |ty| safe(ty).into_owned(),
            )
    };
    print_kv_entries(
        |_| kv.iter().map(|(k, v)| (k.clone(), v.clone())),
        None,
        full,
        heading,
        type_of,
    );
}

/// Prints the KV entries `entries(limit)` yields (arrays kept to `limit`
/// elements), under a `metadata (N entries):` heading when `heading`, in aligned
/// columns: a first pass measures them, a second prints them.
pub fn print_kv_entries<I: Iterator<Item = (String, Value)>>(
    entries: impl Fn(Option<usize>) -> I,
    max_array: Option<usize>,
    full: bool,
    heading: bool,
    type_of: impl Fn(&str, &Value) -> String,
) {
    let count = entries(Some(0)).count();
    if count == 0 {
        outln!("metadata: none");
        return;
    }
    if heading {
        outln!("metadata ({}):", plural(count as u64, "entry", "entries"));
    }
    let (mut type_width, mut key_width) = (0, 0);
    for (k, e) in entries(Some(0)) {
        type_width = type_width.max(type_of(&k, &e).chars().count());
        let w = width(&k);
        if w <= NAME_COLUMN_MAX {
            key_width = key_width.max(w);
        }
    }
    for (key, e) in entries(max_array) {
        let ty = type_of(&key, &e);
        let value = kv_value(&e, full);
        let key = safe(&key);
        if width(&key) > NAME_COLUMN_MAX {
            outln!("  {key}");
            outln!("  {:key_width$}  {ty:<type_width$}  {value}", "");
        } else {
            outln!("  {key:key_width$}  {ty:<type_width$}  {value}");
        }
    }
}

/// One KV value for people: strings quoted and cut, arrays as `N × type [a, b, …]`.
fn kv_value(e: &Value, full: bool) -> String {
    let limit = if full { usize::MAX } else { SHOWN_STRING_CHARS };
    let scalar = |x: &Value, limit: usize| match x {
        Value::String(s) => text::quoted(s, limit),
        other => safe(&other.to_string()).into_owned(),
    };
    match e["type"].as_str() {
        Some("array") => {
            let shown = e["value"].as_array().map(Vec::as_slice).unwrap_or_default();
            let count = e["count"].as_u64().unwrap_or(shown.len() as u64);
            let element_limit = if full { usize::MAX } else { 40 };
            let mut items: Vec<String> = shown.iter().map(|x| scalar(x, element_limit)).collect();
            if (shown.len() as u64) < count {
                items.push(format!("… {} more", count - shown.len() as u64));
            }
            format!(
                "{count} × {} [{}]",
                e["element_type"].as_str().unwrap_or("?"),
                items.join(", ")
            )
        }
        // Bytes are hex text: cut like a string, unquoted.
        Some("bytes") => cut(e["value"].as_str().unwrap_or_default(), limit),
        _ => scalar(&e["value"], limit),
    }
}

/// The tensor table of the tensors `tensors()` yields (out of `total`; `globs`
/// the `-n` filter they passed), one tensor at a time.
pub fn print_tensor_table<'d, I: Iterator<Item = Listed<'d>>>(
    tensors: impl Fn() -> I,
    total: u64,
    globs: Option<&str>,
) {
    let shown = tensors().count() as u64;
    match globs {
        Some(globs) if shown < total => outln!(
            "tensors ({shown} of {total} match -n {globs}){}",
            if shown == 0 { "" } else { ":" }
        ),
        _ if shown == total => outln!("tensors ({total}):"),
        _ => outln!("tensors ({shown} of {total} shown):"),
    }
    print_table_with(
        &[
            "NAME", "TYPE", "SHAPE", "ELEMENTS", "LAYOUT", "BYTES", "OFFSET",
        ],
        &[3, 5, 6],
        || tensors().map(|t| (tensor_row(&t).to_vec(), tensor_details(&t))),
    );
}

/// Prints an aligned table: `header`, then `rows` (cells already escaped), the
/// columns numbered in `right` aligned right (numbers), the others left.
pub fn print_table(header: &[&str], rows: &[Vec<String>], right: &[usize]) {
    print_table_with(header, right, || {
        rows.iter().map(|r| (r.clone(), Vec::new()))
    });
}

/// [`print_table`] over the rows `rows()` yields, each with the detail lines to
/// print under it: a first pass measures the columns, a second prints the rows,
/// one at a time. A first cell wider than [`NAME_COLUMN_MAX`] goes on a line of
/// its own.
fn print_table_with<I: Iterator<Item = (Vec<String>, Vec<String>)>>(
    header: &[&str],
    right: &[usize],
    rows: impl Fn() -> I,
) {
    let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    let mut widths = vec![0usize; header.len()];
    let mut measure = |row: &[String]| {
        for (i, cell) in row.iter().enumerate().take(widths.len()) {
            let cw = width(cell);
            // A very long name does not widen the column; it gets its own line.
            if i > 0 || cw <= NAME_COLUMN_MAX {
                widths[i] = widths[i].max(cw);
            }
        }
    };
    measure(&header);
    let mut any = false;
    for (row, _) in rows() {
        measure(&row);
        any = true;
    }
    if !any {
        return;
    }
    let line = |row: &[String]| {
        let mut s = String::from(" ");
        for (i, (cell, &w)) in row.iter().zip(&widths).enumerate() {
            if right.contains(&i) {
                s.push_str(&format!(" {cell:>w$}"));
            } else {
                s.push_str(&format!(" {cell:<w$}"));
            }
        }
        s.trim_end().to_string()
    };
    outln!("{}", line(&header));
    for (mut row, details) in rows() {
        if row
            .first()
            .is_some_and(|name| width(name) > NAME_COLUMN_MAX)
        {
            outln!("  {}", row[0]);
            row[0] = String::new();
        }
        outln!("{}", line(&row));
        for detail in details {
            outln!("      {detail}");
        }
    }
}

/// The table cells of one tensor (already escaped).
fn tensor_row(t: &Listed<'_>) -> [String; 7] {
    let name = safe(t.name).into_owned();
    let Ok(d) = t.descriptor else {
        return [
            name,
            "?".into(),
            String::new(),
            String::new(),
            String::new(),
            t.data_length.to_string(),
            t.data_offset.to_string(),
        ];
    };
    let dims: Vec<String> = d.shape.iter().map(u64::to_string).collect();
    [
        name,
        element_type_name(d).to_string(),
        format!("[{}]", dims.join(", ")),
        element_count(&d.shape).map_or("?".into(), |n| n.to_string()),
        layout_name(d.layout_tag).to_string(),
        t.data_length.to_string(),
        t.data_offset.to_string(),
    ]
}

/// Lines under a tensor's row: a read error, its quantization, layout fields.
fn tensor_details(t: &Listed<'_>) -> Vec<String> {
    let d = match &t.descriptor {
        Ok(d) => *d,
        Err(e) => return vec![format!("unreadable descriptor: {}", safe(e))],
    };
    let mut out = Vec::new();
    if let Some(q) = &d.quantization {
        out.push(quantization_line(d, q));
    }
    // The layout's own fields, shown as their JSON object.
    if let Value::Object(fields) = crate::json::layout_json(d) {
        if !fields.is_empty() {
            out.push(format!(
                "layout {}",
                safe(&Value::Object(fields).to_string())
            ));
        }
    }
    if let Some(o) = hrry::decode::descriptor::oversized_buffer(d) {
        let mut line = format!(
            "! oversized buffer (TD-BUF-014): {} bytes where {} are needed",
            o.byte_size, o.needed
        );
        if o.one_byte_per_element {
            line.push_str(
                "; looks stored one byte per element, but readers unpack it as packed bits",
            );
        }
        out.push(line);
    }
    out
}

/// "per-block affine v1: int4, axis 1, block 32, float16 scales, symmetric; 4.5
/// bits/weight"
fn quantization_line(d: &TensorDescriptor, section: &QuantizationSection) -> String {
    let mut parts = vec![element_type_name(d).to_string()];
    let mut version = String::new();
    if let Some(scheme) = section.scheme() {
        let header = scheme.header();
        version = format!(" v{}", header.scheme_version);
        let symmetric = header.flags & FLAG_SYMMETRIC != 0;
        let symmetry = |symmetric: bool| match symmetric {
            true => "symmetric".to_string(),
            false => "zero points".to_string(),
        };
        match scheme {
            QuantScheme::PerTensorAffine(p) => {
                let scale = f64::from(p.scale);
                if scale.is_finite() {
                    parts.push(format!("scale {scale}"));
                }
                parts.push(match p.zero_point {
                    0 => "symmetric".to_string(),
                    z => format!("zero point {z}"),
                });
            }
            QuantScheme::PerChannelAffine(p) => {
                parts.push(format!("axis {}", p.axis));
                if let Some(t) = scale_type_name(p.scale_type_tag) {
                    parts.push(format!("{t} scales"));
                }
                parts.push(symmetry(symmetric));
            }
            QuantScheme::PerBlockAffine(p) => {
                parts.push(format!("axis {}", p.axis));
                parts.push(format!("block {}", p.block_size));
                if let Some(t) = scale_type_name(p.scale_type_tag) {
                    parts.push(format!("{t} scales"));
                }
                parts.push(symmetry(symmetric));
            }
            QuantScheme::Nf4(b) => {
                parts.push(format!("axis {}", b.axis));
                parts.push(format!("block {}", b.block_size));
                parts.push("float32 scales".into());
                parts.push(symmetry(true));
            }
            QuantScheme::Mxfp(b) => {
                parts.push(format!("axis {}", b.axis));
                parts.push(format!("block {}", b.block_size));
                parts.push("float8_e8m0 scales".into());
                parts.push(symmetry(true));
            }
        }
    }
    let bytes: Option<u64> = d
        .buffers
        .iter()
        .try_fold(0u64, |acc, b| acc.checked_add(b.byte_size));
    let bits = match (bytes, element_count(&d.shape)) {
        (Some(b), Some(n)) if n > 0 => {
            let b = format!("{:.3}", b as f64 * 8.0 / n as f64);
            format!(
                "; {} bits/weight",
                b.trim_end_matches('0').trim_end_matches('.')
            )
        }
        _ => String::new(),
    };
    format!(
        "{}{version}: {}{bits}",
        scheme_of(d).unwrap_or("?"),
        parts.join(", ")
    )
}

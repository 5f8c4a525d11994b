//! How `hrry inspect` shows what an input holds, shared by the listing of every
//! format (HRRYFILE, bare stream, `.holo`, safetensors and GGUF): the summary line,
//! the KV and tensor tables (aligned, long values cut, untrusted text escaped) and
//! the `--json` document of an input that cannot be read.

use serde_json::{json, Map, Value};

use crate::json::INSPECT_FORMAT_VERSION;

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
pub fn summary_line(s: &Value) -> String {
    let types: Vec<String> = s["by_type"]
        .as_object()
        .map(|m| m.iter().map(|(k, n)| format!("{} ×{n}", safe(k))).collect())
        .unwrap_or_default();
    format!(
        "{}, {} parameters, {} of data{}{}",
        plural(s["tensors"].as_u64().unwrap_or(0), "tensor", "tensors"),
        s["parameters"]
            .as_u64()
            .map_or("?".to_string(), |p| p.to_string()),
        human_bytes(s["data_bytes"].as_u64().unwrap_or(0)),
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

/// The tensor table of an inspect document (files and bare streams alike).
pub fn print_tensors(tensors: &[Value], total: u64) {
    print_tensor_table(|| tensors.iter().cloned(), total, None);
}

/// The tensor table of the tensors `tensors()` yields (out of `total`; `globs`
/// the `-n` filter they passed), one tensor at a time.
pub fn print_tensor_table<I: Iterator<Item = Value>>(
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
fn tensor_row(t: &Value) -> [String; 7] {
    let name = safe(t["name"].as_str().unwrap_or("?")).into_owned();
    if t.get("error").is_some() {
        return [
            name,
            "?".into(),
            String::new(),
            String::new(),
            String::new(),
            t["data_length"].to_string(),
            t["data_offset"].to_string(),
        ];
    }
    let shape = t["shape"]
        .as_array()
        .map(|d| {
            let dims: Vec<String> = d.iter().map(Value::to_string).collect();
            format!("[{}]", dims.join(", "))
        })
        .unwrap_or_default();
    [
        name,
        t["element_type"].as_str().unwrap_or("?").to_string(),
        shape,
        t["element_count"]
            .as_u64()
            .map_or("?".into(), |n| n.to_string()),
        t["layout_name"].as_str().unwrap_or("?").to_string(),
        t["data_length"].to_string(),
        t["data_offset"].to_string(),
    ]
}

/// Lines under a tensor's row: a read error, its quantization, layout fields.
fn tensor_details(t: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(e) = t["error"].as_str() {
        out.push(format!("unreadable descriptor: {}", safe(e)));
        return out;
    }
    let q = &t["quantization"];
    if q.is_object() {
        out.push(quantization_line(q));
    }
    if let Some(fields) = t["layout"].as_object().filter(|m| !m.is_empty()) {
        out.push(format!(
            "layout {}",
            safe(&Value::Object(fields.clone()).to_string())
        ));
    }
    let o = &t["oversized_buffer"];
    if o.is_object() {
        let mut line = format!(
            "! oversized buffer (TD-BUF-014): {} bytes where {} are needed",
            o["byte_size"], o["needed"]
        );
        if o["one_byte_per_element"].as_bool() == Some(true) {
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
fn quantization_line(q: &Value) -> String {
    let mut parts = vec![q["storage_type"].as_str().unwrap_or("?").to_string()];
    if let Some(axis) = q["axis"].as_u64() {
        parts.push(format!("axis {axis}"));
    }
    if let Some(block) = q["block_size"].as_u64() {
        parts.push(format!("block {block}"));
    }
    if let Some(scale) = q["scale"].as_f64() {
        parts.push(format!("scale {scale}"));
    }
    if let Some(scale_type) = q["scale_type"].as_str() {
        parts.push(format!("{scale_type} scales"));
    }
    match (q["symmetric"].as_bool(), &q["zero_point"]) {
        (Some(true), _) => parts.push("symmetric".into()),
        (Some(false), Value::Number(z)) => parts.push(format!("zero point {z}")),
        (Some(false), _) => parts.push("zero points".into()),
        (None, _) => {}
    }
    let version = q["scheme_version"]
        .as_u64()
        .map_or(String::new(), |v| format!(" v{v}"));
    let bits = q["bits_per_weight"].as_f64().map_or(String::new(), |b| {
        let b = format!("{b:.3}");
        format!(
            "; {} bits/weight",
            b.trim_end_matches('0').trim_end_matches('.')
        )
    });
    format!(
        "{}{version}: {}{bits}",
        q["scheme"].as_str().unwrap_or("?"),
        parts.join(", ")
    )
}

//! The CLI's JSON renderings: `hrry inspect --json` (HRRYFILEs, bare streams,
//! captured conversations), `hrry validate --json` and `hrry rules --json`. Their
//! format is the CLI's (docs/cli.md, `schema/inspect.schema.json`).

mod descriptor;
mod inspect;
mod message;

use hrry::schema::{KvElement, KvValue};
use hrry::validate::{Report, Rule};
use serde_json::{json, Value};

pub use descriptor::*;
pub use inspect::*;
pub use message::*;

/// Bytes as lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Bytes as text, invalid UTF-8 replaced.
pub fn text(bytes: &[u8]) -> String {
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

/// `hrry validate --json` for one file.
pub fn validate_json(file: &str, format: &str, report: &Report) -> Value {
    json!({
        "file": file,
        "valid": report.is_valid(),
        "verdict": report.verdict().name(),
        "format": format,
        // The spec's reader mode and the hardening policy, as the flags named them.
        "mode": report.judging.rules.mode_name(),
        "policy": report.judging.rules.policy_name(),
        "violations": violations_json(report),
        "notes": report.notes,
    })
}

/// The violations of `report`, as `hrry validate --json` lists them.
pub fn violations_json(report: &Report) -> Value {
    report
        .violations
        .iter()
        .map(|v| {
            json!({
                "rule": v.rule.id,
                "level": v.rule.level.name(),
                "offset": v.offset,
                "message": v.message,
            })
        })
        .collect()
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

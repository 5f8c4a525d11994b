//! hrry as a testee: its answers to the protocol's requests. `hrry conformance
//! --self` calls [`answer`] in process; `hrry conformance-testee` serves the same
//! answers over standard input and output (the reference a harness test runs as a
//! separate program, and a model for implementers).

use std::io::{BufRead, Write};
use std::path::Path;

use base64::Engine as _;
use hrry::conformance;
use hrry::file::{HrryFile, HrryWriter, WriterOptions};
use hrry::model::ElementType;
use hrry::schema::{KvArray, KvScalar, KvValue, LenBytes, QuantizationSection};
use hrry::validate::{Judging, Options, Rules};
use serde_json::{json, Map, Value};

use super::protocol::{FORMATS, OPS, PROTOCOL};

/// hrry's answer to `hello`.
pub fn hello() -> Value {
    json!({
        "protocol": PROTOCOL,
        "name": "hrry",
        "version": env!("CARGO_PKG_VERSION"),
        "ops": OPS,
        "formats": FORMATS,
        "rule_ids": true,
    })
}

/// hrry's answer to one request (`bye` included, answered with `{}`).
pub fn answer(request: &Value) -> Value {
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let result = match request["op"].as_str() {
        Some("hello") => return hello(),
        Some("bye") => return json!({}),
        Some("validate") => validate(request),
        Some("read") => read(request),
        Some("write") => write(request),
        Some(op) => Err(format!("unknown op {op:?}")),
        None => Err("the request has no \"op\"".into()),
    };
    let mut v = match result {
        Ok(v) => v,
        Err(e) => json!({ "error": e }),
    };
    v["id"] = id;
    v
}

fn path_of<'a>(request: &'a Value, key: &str) -> Result<&'a Path, String> {
    request[key]
        .as_str()
        .map(Path::new)
        .ok_or_else(|| format!("the request has no \"{key}\""))
}

fn validate(request: &Value) -> Result<Value, String> {
    validate_under(request, Rules::Hardened)
}

/// The answer to `validate` under `strict` (the rules of the request's strict
/// mode; its permissive mode has rules of its own), with the testee's message
/// (the first violation) when the file is rejected.
fn validate_under(request: &Value, strict: Rules) -> Result<Value, String> {
    let path = path_of(request, "path")?;
    let format = match request["format"].as_str().unwrap_or("hrryfile") {
        "hrryfile" => hrry::Format::HrryFile,
        "holo" => hrry::Format::Holo,
        "stream" => hrry::Format::Stream,
        "messages" => hrry::Format::Messages,
        other => return Ok(json!({ "skipped": format!("format {other:?} is not known") })),
    };
    let rules = match request["mode"].as_str().unwrap_or("strict") {
        "strict" => strict,
        "permissive" => Rules::Permissive,
        other => return Ok(json!({ "skipped": format!("mode {other:?} is not known") })),
    };
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let options = Options {
        judging: Judging {
            rules,
            ..Judging::default()
        },
        ..Default::default()
    };
    let report = format.validate_bytes(&bytes, &options);
    let mut v = json!({ "valid": report.is_valid(), "rules": report.rule_ids() });
    if let Some(first) = report.violations.first() {
        v["message"] = json!(first.to_string());
    }
    Ok(v)
}

fn read(request: &Value) -> Result<Value, String> {
    let path = path_of(request, "path")?;
    let file = HrryFile::open(path).map_err(|e| e.to_string())?;
    let tensors = conformance::read_tensors(&file).map_err(|e| e.to_string())?;
    Ok(json!({
        "tensors": tensors.iter().map(conformance::TensorReading::to_json).collect::<Vec<_>>(),
        "metadata": metadata_json(&file),
    }))
}

/// The KV metadata of `file` as the protocol carries it: each key mapped to
/// `{"type", "value"}` as `hrry inspect --json` prints it.
pub fn metadata_json(file: &HrryFile<'_>) -> Value {
    let map: Map<String, Value> = file
        .kv()
        .iter()
        .map(|e| {
            (
                String::from_utf8_lossy(&e.key).into_owned(),
                crate::json::kv_json(&e.value),
            )
        })
        .collect();
    Value::Object(map)
}

fn write(request: &Value) -> Result<Value, String> {
    let out = path_of(request, "out")?;
    let spec = &request["spec"];
    let mut writer =
        HrryWriter::create(out, WriterOptions::default()).map_err(|e| e.to_string())?;
    if let Some(metadata) = spec["metadata"].as_object() {
        for (key, value) in metadata {
            let value =
                kv_from_json(value).ok_or_else(|| format!("metadata {key:?}: bad value"))?;
            writer.add_kv(key, value).map_err(|e| e.to_string())?;
        }
    }
    for t in spec["tensors"].as_array().into_iter().flatten() {
        let name = t["name"].as_str().ok_or("a tensor without a name")?;
        let dtype = t["dtype"].as_str().unwrap_or_default();
        let ty = ElementType::from_name(dtype).ok_or_else(|| format!("unknown dtype {dtype:?}"))?;
        let shape: Vec<u64> = t["shape"]
            .as_array()
            .ok_or_else(|| format!("{name:?}: no shape"))?
            .iter()
            .map(|d| d.as_u64().ok_or_else(|| format!("{name:?}: bad shape")))
            .collect::<Result<_, _>>()?;
        let data = base64::engine::general_purpose::STANDARD
            .decode(t["data"].as_str().unwrap_or_default())
            .map_err(|e| format!("{name:?}: data is not base64: {e}"))?;
        let desc = hrry::model::build::dense(ty, &shape)
            .ok_or_else(|| format!("{name:?}: no dense layout for {dtype} {shape:?}"))?;
        writer
            .write_tensor(name, &desc, &[&data])
            .map_err(|e| e.to_string())?;
    }
    writer.finish_file().map_err(|e| e.to_string())?;
    Ok(json!({ "ok": true }))
}

/// A KV value from its `{"type", "value"}` JSON form (the inverse of
/// `crate::json::kv_json` for every value it prints in full).
pub fn kv_from_json(v: &Value) -> Option<KvValue> {
    let ty = v["type"].as_str()?;
    if ty == "array" {
        let tag = kv_tag(v["element_type"].as_str()?)?;
        let elements = v["value"]
            .as_array()?
            .iter()
            .map(|e| scalar_from_json(tag, e))
            .collect::<Option<Vec<_>>>()?;
        return Some(KvValue::Array(KvArray::new(tag, elements)));
    }
    Some(match scalar_from_json(kv_tag(ty)?, &v["value"])? {
        KvScalar::String(b) => KvValue::String(b),
        KvScalar::Int64(i) => KvValue::Int64(i),
        KvScalar::Uint64(u) => KvValue::Uint64(u),
        KvScalar::Float64(f) => KvValue::Float64(f),
        KvScalar::Bool(b) => KvValue::Bool(b),
        KvScalar::Bytes(b) => KvValue::Bytes(b),
    })
}

fn kv_tag(name: &str) -> Option<u8> {
    (0x01..=0x06).find(|&t| crate::json::kv_type_name(t) == name)
}

fn scalar_from_json(tag: u8, v: &Value) -> Option<KvScalar> {
    Some(match tag {
        0x01 => KvScalar::String(LenBytes {
            bytes: v.as_str()?.as_bytes().to_vec(),
        }),
        0x02 => KvScalar::Int64(v.as_i64()?),
        0x03 => KvScalar::Uint64(v.as_u64()?),
        // Non-finite values are printed as strings ("NaN", "inf", "-inf").
        0x04 => KvScalar::Float64(match v {
            Value::String(s) => s.parse().ok()?,
            _ => v.as_f64()?,
        }),
        0x05 => KvScalar::Bool(u8::from(v.as_bool()?)),
        0x06 => KvScalar::Bytes(LenBytes {
            bytes: from_hex(v.as_str()?)?,
        }),
        _ => return None,
    })
}

fn from_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// A deliberate misbehaviour of `hrry conformance-testee`, for testing the harness
/// against a wrong testee.
#[derive(Clone, Debug)]
pub enum Fault {
    /// Every file is valid.
    AcceptAll,
    /// Every file is invalid (with no rule named).
    RejectAll,
    /// Every content hash read has its lowest bit flipped.
    FlipHash,
    /// Abort on a request whose path ends with the text.
    CrashOn(String),
    /// Never answer a request whose path ends with the text.
    HangOn(String),
    /// Answer a line that is not JSON to a request whose path ends with the text.
    GarbageOn(String),
    /// Answer with the wrong id to a request whose path ends with the text.
    WrongIdOn(String),
    /// Validate by the exact spec verdict, none of hrry's hardening rules: an
    /// implementation that follows the spec and nothing more.
    SpecOnly,
    /// Do not check these rules (comma-separated IDs): a file whose only broken
    /// rules are among them is valid, and they are never named. A reader that
    /// skips a check, as a reserved flag bit accepted (`TD-HDR-005`) or the index
    /// CRC not compared (`HF-CRC-001`).
    IgnoreRules(Vec<String>),
    /// Abort on a HRRYFILE whose index declares more than 2^32 entries, as a
    /// reader that reserves room for them before checking anything.
    CrashOnHugeIndex,
    /// Dequantize per-tensor affine tensors (scheme `0x01`) as if their zero
    /// point were 0.
    IgnoreZeroPoint,
    /// Read each descriptor's 32-bit flags as 16 bits, so that reserved flag bits
    /// 16-31 go unseen (the corpus sets bit 7).
    FlagsAsU16,
    /// Abort on a HRRYFILE holding a rank-0 tensor with a statistics section, as a
    /// reader that sizes its statistics by the tensor's last dimension.
    CrashOnRank0Statistics,
    /// Never answer about a HRRYFILE holding a rank-0 tensor with a statistics
    /// section, as a reader whose loop over the tensor's last dimension never ends.
    HangOnRank0Statistics,
}

impl std::str::FromStr for Fault {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (kind, arg) = s.split_once('=').unwrap_or((s, ""));
        let arg = arg.to_string();
        Ok(match kind {
            "accept-all" => Fault::AcceptAll,
            "reject-all" => Fault::RejectAll,
            "flip-hash" => Fault::FlipHash,
            "crash-on" => Fault::CrashOn(arg),
            "hang-on" => Fault::HangOn(arg),
            "garbage-on" => Fault::GarbageOn(arg),
            "wrong-id-on" => Fault::WrongIdOn(arg),
            "spec-only" => Fault::SpecOnly,
            "ignore-rule" if !arg.is_empty() => {
                Fault::IgnoreRules(arg.split(',').map(str::to_string).collect())
            }
            "crash-on-huge-index" => Fault::CrashOnHugeIndex,
            "ignore-zero-point" => Fault::IgnoreZeroPoint,
            "flags-as-u16" => Fault::FlagsAsU16,
            "crash-on-rank0-statistics" => Fault::CrashOnRank0Statistics,
            "hang-on-rank0-statistics" => Fault::HangOnRank0Statistics,
            _ => return Err(format!("unknown fault {kind:?}")),
        })
    }
}

/// Serves requests from `input`, one JSON object a line, answering on `output`,
/// until `bye` or the end of `input`. A line that is not JSON gets an error answer.
pub fn serve(
    input: impl BufRead,
    mut output: impl Write,
    fault: Option<&Fault>,
) -> std::io::Result<()> {
    for line in input.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let request: Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(e) => json!({"op": null, "error": format!("not JSON: {e}")}),
        };
        if request["op"] == "bye" {
            break;
        }
        let line = match fault {
            Some(f) => faulty_answer(&request, f),
            None => answer(&request).to_string(),
        };
        writeln!(output, "{line}")?;
        output.flush()?;
    }
    Ok(())
}

/// The answer line to `request` under `fault`.
fn faulty_answer(request: &Value, fault: &Fault) -> String {
    let target = request["path"]
        .as_str()
        .or(request["out"].as_str())
        .unwrap_or("");
    let hit = |text: &String| !text.is_empty() && target.ends_with(text.as_str());
    let mut v = answer(request);
    match fault {
        Fault::AcceptAll if request["op"] == "validate" => {
            v["valid"] = json!(true);
            v["rules"] = json!([]);
        }
        Fault::RejectAll if request["op"] == "validate" => {
            v["valid"] = json!(false);
            v["rules"] = json!([]);
        }
        Fault::SpecOnly if request["op"] == "validate" => {
            v = validate_under(request, Rules::Spec).unwrap_or_else(|e| json!({ "error": e }));
            v["id"] = request.get("id").cloned().unwrap_or(Value::Null);
        }
        Fault::FlipHash => {
            for t in v["tensors"].as_array_mut().into_iter().flatten() {
                if let Some(h) = t["sha256"].as_str() {
                    t["sha256"] = json!(flip_last_bit(h));
                }
            }
        }
        Fault::CrashOn(text) if hit(text) => std::process::abort(),
        Fault::HangOn(text) if hit(text) => loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        },
        Fault::GarbageOn(text) if hit(text) => return "this is not JSON".into(),
        Fault::WrongIdOn(text) if hit(text) => {
            v["id"] = json!(request["id"].as_u64().unwrap_or(0).wrapping_add(1000));
        }
        Fault::IgnoreRules(ignored) if request["op"] == "validate" => {
            if let Some(rules) = v["rules"].as_array_mut() {
                rules.retain(|r| !ignored.iter().any(|i| r == i.as_str()));
                if rules.is_empty() {
                    v["valid"] = json!(true);
                }
            }
        }
        Fault::FlagsAsU16
            if request["op"] == "validate"
                && request["format"].as_str().unwrap_or("hrryfile") == "hrryfile" =>
        {
            if let Some(report) = validate_with_short_flags(Path::new(target)) {
                v["valid"] = json!(report.is_valid());
                v["rules"] = json!(report.rule_ids());
            }
        }
        Fault::IgnoreZeroPoint if request["op"] == "read" => {
            if let Some(tensors) = without_zero_points(Path::new(target)) {
                v["tensors"] = json!(tensors);
            }
        }
        Fault::CrashOnHugeIndex
            if request["format"].as_str().unwrap_or("hrryfile") == "hrryfile"
                && declared_index_entries(target) > 1 << 32 =>
        {
            std::process::abort()
        }
        Fault::HangOnRank0Statistics
            if request["format"].as_str().unwrap_or("hrryfile") == "hrryfile"
                && holds_rank0_statistics(Path::new(target)) =>
        {
            loop {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            }
        }
        Fault::CrashOnRank0Statistics
            if request["format"].as_str().unwrap_or("hrryfile") == "hrryfile"
                && holds_rank0_statistics(Path::new(target)) =>
        {
            std::process::abort()
        }
        _ => {}
    }
    v.to_string()
}

/// The strict report on the HRRYFILE at `path` with the upper 16 bits of every
/// descriptor's flags cleared (`None` when it cannot be read).
fn validate_with_short_flags(path: &Path) -> Option<hrry::validate::Report> {
    /// Where the upper half of a descriptor's flags lies (flags at 10..14).
    const UPPER_FLAGS: usize = 12;
    let mut bytes = std::fs::read(path).ok()?;
    for d in descriptor_offsets(&bytes) {
        if bytes.get(d..d.saturating_add(4)) != Some(b"HRRY".as_slice()) {
            continue; // Not a descriptor.
        }
        let start = d.saturating_add(UPPER_FLAGS);
        if let Some(upper) = bytes.get_mut(start..start.saturating_add(2)) {
            upper.fill(0);
        }
    }
    Some(hrry::Format::HrryFile.validate_bytes(&bytes, &Options::default()))
}

/// The descriptor offsets a HRRYFILE's index names, read as a reader that trusts
/// the index would (no check but bounds).
fn descriptor_offsets(bytes: &[u8]) -> Vec<usize> {
    let word = |at: usize, n: usize| -> Option<u64> {
        let mut le = [0u8; 8];
        le[..n].copy_from_slice(bytes.get(at..at.checked_add(n)?)?);
        Some(u64::from_le_bytes(le))
    };
    let mut out = Vec::new();
    let Some(trailer) = bytes.len().checked_sub(hrry::schema::TRAILER_LEN as usize) else {
        return out;
    };
    let Some(index) = word(trailer, 8).and_then(|i| usize::try_from(i).ok()) else {
        return out;
    };
    let count = word(index, 8).unwrap_or(0);
    let mut at = index.saturating_add(8);
    for _ in 0..count.min(bytes.len() as u64 / 34) {
        let Some(name) = word(at, 2) else { break };
        let fields = at.saturating_add(2 + name as usize);
        match word(fields, 8).and_then(|d| usize::try_from(d).ok()) {
            Some(d) => out.push(d),
            None => break,
        }
        at = fields.saturating_add(32);
    }
    out
}

/// The readings of the file at `path` with every per-tensor affine zero point
/// taken as 0 (`None` when it does not read).
fn without_zero_points(path: &Path) -> Option<Vec<Value>> {
    /// Scheme tag of per-tensor affine quantization, and where its zero point lies.
    const PER_TENSOR_AFFINE: u8 = 0x01;
    const ZERO_POINT: std::ops::Range<usize> = 8..12;
    let file = HrryFile::open(path).ok()?;
    file.entries()
        .map(|entry| {
            let t = file.tensor_at(entry).ok()?;
            let mut desc = t.descriptor.clone();
            if let Some(q) = desc.quantization.as_mut() {
                if q.bytes().first() == Some(&PER_TENSOR_AFFINE) {
                    let mut bytes = q.bytes().to_vec();
                    if let Some(zp) = bytes.get_mut(ZERO_POINT) {
                        zp.fill(0);
                    }
                    *q = QuantizationSection::from_bytes(bytes);
                }
            }
            Some(conformance::reading_of(entry.name(), &desc, &t.buffers).to_json())
        })
        .collect()
}

/// Whether the HRRYFILE at `path` opens and holds a rank-0 tensor whose
/// descriptor has a statistics section.
fn holds_rank0_statistics(path: &Path) -> bool {
    let Ok(bytes) = std::fs::read(path) else {
        return false;
    };
    let Ok(file) = HrryFile::from_bytes(&bytes) else {
        return false;
    };
    let found = file.entries().any(|e| {
        file.tensor_at(e)
            .is_ok_and(|t| t.descriptor.shape.is_empty() && t.descriptor.statistics.is_some())
    });
    found
}

/// The entry count the index of the HRRYFILE at `path` declares (the first eight
/// bytes at the trailer's `index_offset`), or 0 when there is none to read.
fn declared_index_entries(path: &str) -> u64 {
    let Ok(bytes) = std::fs::read(path) else {
        return 0;
    };
    let word = |at: usize| -> Option<u64> {
        Some(u64::from_le_bytes(
            bytes.get(at..at.checked_add(8)?)?.try_into().ok()?,
        ))
    };
    bytes
        .len()
        .checked_sub(hrry::schema::TRAILER_LEN as usize)
        .and_then(word)
        .and_then(|offset| word(usize::try_from(offset).ok()?))
        .unwrap_or(0)
}

/// A hex digest with its last bit flipped.
fn flip_last_bit(hex: &str) -> String {
    let mut s = hex.to_string();
    if let Some(last) = s.pop() {
        let d = last.to_digit(16).unwrap_or(0) ^ 1;
        s.push(char::from_digit(d, 16).unwrap_or('0'));
    }
    s
}

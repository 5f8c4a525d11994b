//! `hrry inspect --stats`: parameter counts per element type (logical elements
//! and stored bytes, quantization-aware) and per-tensor statistics of the values,
//! each tensor read once a piece at a time; a HRRYFILE tensor's own statistics
//! section is checked against them (a disagreement is a finding).

use std::path::Path;

use hrry::content::{self, ModelFile, StatisticsMismatch, TensorStats};
use serde_json::{json, Value};

use crate::text::{self, plural, safe};
use crate::{Failure, Outcome};

/// Statistics of every tensor of a file (those that could not be read with the
/// reason), and the findings: statistics sections that disagree.
pub struct FileStats {
    /// Per tensor, in file order.
    pub tensors: Vec<Result<TensorStats, String>>,
    /// Statistics sections that disagree with the values.
    pub findings: Vec<StatisticsMismatch>,
}

/// Computes the statistics of every tensor of `file`, tensors on as many threads
/// as the machine has cores. A tensor that cannot be read for a reason of its own
/// is noted; a failed read of the file is an error.
pub fn compute(file: &ModelFile) -> Result<FileStats, Failure> {
    let extra = std::thread::available_parallelism().map_or(0, |n| n.get() - 1);
    let mut tensors = Vec::with_capacity(file.tensors().len());
    let mut findings = Vec::new();
    for (info, s) in file.tensors().iter().zip(content::file_stats(file, extra)) {
        match s {
            Ok(s) => {
                findings.extend(content::check_statistics(info, &s));
                tensors.push(Ok(s));
            }
            Err(hrry::Error::Unsupported(message)) => tensors.push(Err(message)),
            Err(e) => return Err(Failure(e.to_string())),
        }
    }
    Ok(FileStats { tensors, findings })
}

/// A float for JSON: `null` for NaN, a string for infinities.
pub fn number(x: f64) -> Value {
    if x.is_nan() {
        Value::Null
    } else if x.is_infinite() {
        json!(if x > 0.0 { "inf" } else { "-inf" })
    } else {
        json!(x)
    }
}

/// The JSON of one tensor's statistics.
pub fn tensor_stats_json(s: &TensorStats) -> Value {
    json!({
        "count": s.count,
        "min": number(s.min),
        "max": number(s.max),
        "mean": number(s.mean),
        "std": number(s.std),
        "nan": s.nan,
        "inf": s.inf,
        "zeros": s.zeros,
        "histogram": {
            "low": number(s.histogram.low),
            "high": number(s.histogram.high),
            "counts": s.histogram.counts,
        },
    })
}

/// The parameter counts per element type, as JSON rows and a total.
pub fn parameters_json(file: &ModelFile) -> (Vec<Value>, Value) {
    let counts = content::parameter_counts(file);
    let rows = counts
        .iter()
        .map(|c| {
            json!({
                "dtype": c.dtype,
                "tensors": c.tensors,
                "elements": c.elements,
                "stored_bytes": c.stored_bytes,
                "bits_per_element": bits(c.stored_bytes, c.elements).map_or(Value::Null, |b| json!(b)),
            })
        })
        .collect();
    let elements: u64 = counts
        .iter()
        .map(|c| c.elements)
        .fold(0, u64::saturating_add);
    let stored: u64 = counts
        .iter()
        .map(|c| c.stored_bytes)
        .fold(0, u64::saturating_add);
    let total = json!({
        "tensors": file.tensors().len(),
        "elements": elements,
        "stored_bytes": stored,
        "bits_per_element": bits(stored, elements).map_or(Value::Null, |b| json!(b)),
    });
    (rows, total)
}

/// Stored bits per logical element.
fn bits(bytes: u64, elements: u64) -> Option<f64> {
    (elements > 0).then(|| bytes as f64 * 8.0 / elements as f64)
}

/// The JSON of a finding.
pub fn finding_json(m: &StatisticsMismatch) -> Value {
    json!({
        "tensor": m.tensor,
        "field": m.field,
        "stored": number(m.stored),
        "computed": number(m.computed),
        "message": m.to_string(),
    })
}

/// `hrry inspect --stats FILE`.
pub fn run(path: &Path, as_json: bool) -> Result<Outcome, Failure> {
    let file = crate::diff::open_model(path)?;
    let stats = compute(&file)?;
    let (rows, total) = parameters_json(&file);
    if as_json {
        let tensors: Vec<Value> = file
            .tensors()
            .iter()
            .zip(&stats.tensors)
            .map(|(t, s)| {
                let mut v = json!({
                    "name": t.name,
                    "dtype": t.dtype,
                    "shape": t.shape,
                    "quantization": t.quantization,
                    "elements": t.elements,
                    "stored_bytes": t.stored_bytes,
                });
                match s {
                    Ok(s) => v["stats"] = tensor_stats_json(s),
                    Err(why) => v["error"] = json!(why),
                }
                v
            })
            .collect();
        let findings: Vec<Value> = stats.findings.iter().map(finding_json).collect();
        let doc = json!({
            "file": crate::remote::shown(path),
            "format": file.format_name(),
            "parameters": rows,
            "total": total,
            "tensors": tensors,
            "findings": findings,
        });
        outln!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(Outcome::Ok);
    }
    outln!(
        "{}: {}, {}",
        text::path(path),
        file.format_name(),
        plural(file.tensors().len() as u64, "tensor", "tensors")
    );
    outln!("parameters by type:");
    outln!(
        "  {:<32} {:>7} {:>15} {:>15} {:>9}",
        "TYPE",
        "TENSORS",
        "ELEMENTS",
        "STORED BYTES",
        "BITS/ELEM"
    );
    for r in rows.iter().chain(std::iter::once(&total)) {
        let label = r["dtype"].as_str().unwrap_or("total");
        outln!(
            "  {:<32} {:>7} {:>15} {:>15} {:>9}",
            safe(label),
            r["tensors"].to_string(),
            r["elements"].to_string(),
            r["stored_bytes"].to_string(),
            r["bits_per_element"]
                .as_f64()
                .map_or("-".into(), |b| format!("{b:.2}"))
        );
    }
    outln!("tensors:");
    outln!(
        "  {:<40} {:>12} {:>12} {:>12} {:>12} {:>12} {:>6} {:>6} {:>10}",
        "NAME",
        "COUNT",
        "MIN",
        "MAX",
        "MEAN",
        "STD",
        "NAN",
        "INF",
        "ZEROS"
    );
    let g = |x: f64| {
        if x.is_nan() {
            "-".to_string()
        } else if x != 0.0 && !(1e-4..1e6).contains(&x.abs()) {
            format!("{x:.4e}")
        } else {
            format!("{x:.6}")
        }
    };
    for (t, s) in file.tensors().iter().zip(&stats.tensors) {
        let name = text::cut(&t.name, 40);
        match s {
            Ok(s) => outln!(
                "  {:<40} {:>12} {:>12} {:>12} {:>12} {:>12} {:>6} {:>6} {:>10}",
                name,
                s.count,
                g(s.min),
                g(s.max),
                g(s.mean),
                g(s.std),
                s.nan,
                s.inf,
                s.zeros
            ),
            Err(why) => outln!("  {:<40} (not read: {})", name, safe(why)),
        }
    }
    if stats.findings.is_empty() {
        outln!("findings: none");
    } else {
        outln!("findings:");
        for f in &stats.findings {
            outln!("  {}", safe(&f.to_string()));
        }
    }
    Ok(Outcome::Ok)
}

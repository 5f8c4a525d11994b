//! `hrry diff`: compares two model files (HRRYFILE, safetensors, GGUF; local or
//! remote): tensors only in one, changed descriptions, metadata, and values
//! compared in logical order. Exits 0 when equal, 1 when different, 2 on errors.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hrry::content::{self, ContentDiff, Diff, DiffOptions, MetadataDiff, ModelFile};
use hrry::source::ReadAt;
use serde_json::{json, Value};

use crate::text::{self, cut, plural};
use crate::{Failure, Outcome};

/// Characters of a metadata value shown in text output.
const SHOWN_VALUE_CHARS: usize = 80;

/// Arguments of `hrry diff`.
#[derive(clap::Args)]
#[command(after_long_help = concat!("\
Compares the tensors and metadata of two files of any format hrry reads (HRRYFILE,
safetensors, GGUF; the HRRYFILEs inside a .holo archive; a bare stream's tensors),
local or by URL. Tensors are matched by name (an archive's as LABEL/NAME,
Weights[0]/w; a stream's as `stream unpack` names them, t0, t1.0) and their
values compared in logical row-major order, so a tensor stored in another layout,
format or element type compares equal when its values are equal; a quantized
tensor is compared on its dequantized values (use --tolerance). Each file is
read once, a few megabytes at a time.

Exit codes: 0 the files hold the same tensors (values within the tolerance, same
shapes) and metadata; 1 they differ; 2 an error (a file that cannot be read).
Changes of dtype, layout or quantization whose values are equal are reported
but do not make the files different (with --metadata-only they do)."))]
pub struct Args {
    /// The first file (a path or an http(s):// or s3:// URL).
    a: PathBuf,
    /// The second file.
    b: PathBuf,
    /// Compare metadata and tensor descriptions only (no tensor data is read).
    #[arg(long)]
    metadata_only: bool,
    /// Largest absolute difference for two values to count as equal.
    #[arg(long, value_name = "X", default_value_t = 0.0)]
    tolerance: f64,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// Detail at most N changed tensors in text output (JSON lists all).
    #[arg(long, value_name = "N", default_value_t = 20)]
    max_shown: usize,
    #[command(flatten)]
    pub net: crate::remote::NetArgs,
}

/// The name an input's format is recognised by: its path, or a URL's path
/// without query or fragment.
fn input_name(path: &Path, url: Option<&str>) -> PathBuf {
    url.map_or_else(
        || path.to_path_buf(),
        |u| PathBuf::from(u.split(['?', '#']).next().unwrap_or(u)),
    )
}

/// Opens the input named by a path or URL for positioned reads (a regular file,
/// or a remote object read with range requests) and recognises its format as
/// `hrry validate` does (by its magic, else its name's extension).
pub fn open_input(path: &Path) -> Result<(Arc<dyn ReadAt + Send>, hrry::Format), Failure> {
    let shown = text::path(path);
    let url = crate::remote::url(path);
    let source: Arc<dyn ReadAt + Send> = match url {
        Some(url) => crate::remote::open_shared(url)?,
        None => Arc::new(
            hrry::source::FileSource::open(path)
                .map_err(|e| Failure(format!("cannot read {shown}: {e}")))?,
        ),
    };
    let format = hrry::Format::detect_source(&*source, Some(&input_name(path, url)))
        .map_err(|e| Failure(format!("cannot read {shown}: {e}")))?;
    Ok((source, format))
}

/// Opens a model file named by a path or URL: a HRRYFILE, safetensors or GGUF
/// file, or the tensors of a container — the HRRYFILEs inside a `.holo` archive,
/// a bare stream's tensors (recognised as `hrry validate` recognises them).
pub fn open_model(path: &Path) -> Result<ModelFile<'static>, Failure> {
    let shown = text::path(path);
    let named = |message: String| {
        if message.contains(&shown) {
            Failure(message)
        } else {
            Failure(format!("{shown}: {message}"))
        }
    };
    let (source, format) = open_input(path)?;
    // A local HRRYFILE is mapped; anything else is read through its source.
    let result = match (format, crate::remote::url(path)) {
        (hrry::Format::HrryFile, None) => ModelFile::open(path),
        (_, url) => ModelFile::open_any(source, Some(&input_name(path, url))),
    };
    result.map_err(|e| named(e.to_string()))
}

pub fn run(args: Args) -> Result<Outcome, Failure> {
    if args.tolerance.is_nan() || args.tolerance < 0.0 {
        return Err(Failure("--tolerance must be a number >= 0".into()));
    }
    let a = open_model(&args.a)?;
    let b = open_model(&args.b)?;
    let options = DiffOptions {
        metadata_only: args.metadata_only,
        tolerance: args.tolerance,
    };
    let d = content::diff(&a, &b, &options).map_err(|e| Failure(e.to_string()))?;
    if args.json {
        let v = diff_json(&args, &a, &b, &d);
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print_text(&args, &a, &b, &d);
    }
    Ok(if d.is_equal() {
        Outcome::Ok
    } else {
        Outcome::Invalid
    })
}

fn describe(path: &Path, f: &ModelFile) -> String {
    format!(
        "{} ({}, {}, {})",
        text::path(path),
        f.format_name(),
        plural(f.tensors().len() as u64, "tensor", "tensors"),
        plural(
            f.metadata().len() as u64,
            "metadata entry",
            "metadata entries"
        )
    )
}

fn kv_text(v: &hrry::schema::KvValue) -> String {
    let j = crate::json::kv_json_limited(v, Some(8));
    cut(&j.to_string(), SHOWN_VALUE_CHARS)
}

fn tensor_line(f: &ModelFile, name: &str) -> String {
    match f.tensors().iter().find(|t| t.name == name) {
        Some(t) => format!("{} {} {:?}", text::quoted(name, 200), t.dtype, t.shape),
        None => text::quoted(name, 200),
    }
}

fn print_text(args: &Args, a: &ModelFile, b: &ModelFile, d: &Diff) {
    outln!("--- {}", describe(&args.a, a));
    outln!("+++ {}", describe(&args.b, b));
    for name in &d.only_in_a {
        outln!("- tensor {}", tensor_line(a, name));
    }
    for name in &d.only_in_b {
        outln!("+ tensor {}", tensor_line(b, name));
    }
    for t in d.tensors.iter().take(args.max_shown) {
        outln!("~ tensor {}", text::quoted(&t.name, 200));
        for c in &t.changes {
            outln!(
                "    {}: {} -> {}",
                c.field,
                text::safe(&c.a),
                text::safe(&c.b)
            );
        }
        match &t.content {
            None => {}
            Some(ContentDiff::Equal) => outln!("    values: equal"),
            Some(ContentDiff::NotCompared(why)) => {
                outln!("    values: not compared ({})", text::safe(why))
            }
            Some(ContentDiff::Different {
                differing,
                first_index,
                first_position,
                a,
                b,
                max_abs_diff,
            }) => outln!(
                "    values: {differing} differ; first at index {first_index} {first_position:?}: {a} vs {b}; max abs difference {max_abs_diff}"
            ),
        }
    }
    if d.tensors.len() > args.max_shown {
        outln!(
            "  … {} more changed tensors (--max-shown, or --json for all)",
            d.tensors.len() - args.max_shown
        );
    }
    for m in &d.metadata {
        match m {
            MetadataDiff::Removed { key, value } => {
                outln!("- metadata {} = {}", text::quoted(key, 200), kv_text(value))
            }
            MetadataDiff::Added { key, value } => {
                outln!("+ metadata {} = {}", text::quoted(key, 200), kv_text(value))
            }
            MetadataDiff::Changed { key, a, b } => outln!(
                "~ metadata {}: {} -> {}",
                text::quoted(key, 200),
                kv_text(a),
                kv_text(b)
            ),
        }
    }
    let compared = if d.content_compared {
        "values compared"
    } else {
        "metadata only"
    };
    outln!(
        "{}: {} equal, {} changed, {} only in the first, {} only in the second, {} metadata {} ({compared})",
        if d.is_equal() { "equal" } else { "different" },
        plural(d.equal_tensors as u64, "tensor", "tensors"),
        d.tensors.len(),
        d.only_in_a.len(),
        d.only_in_b.len(),
        d.metadata.len(),
        if d.metadata.len() == 1 { "difference" } else { "differences" },
    );
}

/// A float for JSON: `null` for NaN, a string for infinities.
fn number(x: f64) -> Value {
    if x.is_nan() {
        Value::Null
    } else if x.is_infinite() {
        json!(if x > 0.0 { "inf" } else { "-inf" })
    } else {
        json!(x)
    }
}

fn diff_json(args: &Args, a: &ModelFile, b: &ModelFile, d: &Diff) -> Value {
    let file = |p: &Path, f: &ModelFile| {
        json!({
            "file": crate::remote::shown(p),
            "format": f.format_name(),
            "tensors": f.tensors().len(),
            "metadata": f.metadata().len(),
        })
    };
    let tensors: Vec<Value> = d
        .tensors
        .iter()
        .map(|t| {
            let changes: Vec<Value> = t
                .changes
                .iter()
                .map(|c| json!({"field": c.field, "a": c.a, "b": c.b}))
                .collect();
            let content = match &t.content {
                None => Value::Null,
                Some(ContentDiff::Equal) => json!({"equal": true}),
                Some(ContentDiff::NotCompared(why)) => {
                    json!({"equal": Value::Null, "not_compared": why})
                }
                Some(ContentDiff::Different {
                    differing,
                    first_index,
                    first_position,
                    a,
                    b,
                    max_abs_diff,
                }) => json!({
                    "equal": false,
                    "differing": differing,
                    "first_index": first_index,
                    "first_position": first_position,
                    "a": number(*a),
                    "b": number(*b),
                    "max_abs_diff": number(*max_abs_diff),
                }),
            };
            json!({"name": t.name, "changes": changes, "values": content, "different": t.is_difference()})
        })
        .collect();
    let metadata: Vec<Value> = d
        .metadata
        .iter()
        .map(|m| match m {
            MetadataDiff::Removed { key, value } => {
                json!({"key": key, "change": "removed", "a": crate::json::kv_json(value)})
            }
            MetadataDiff::Added { key, value } => {
                json!({"key": key, "change": "added", "b": crate::json::kv_json(value)})
            }
            MetadataDiff::Changed { key, a, b } => json!({
                "key": key, "change": "changed",
                "a": crate::json::kv_json(a), "b": crate::json::kv_json(b),
            }),
        })
        .collect();
    json!({
        "a": file(&args.a, a),
        "b": file(&args.b, b),
        "equal": d.is_equal(),
        "values_compared": d.content_compared,
        "tolerance": args.tolerance,
        "equal_tensors": d.equal_tensors,
        "only_in_a": d.only_in_a,
        "only_in_b": d.only_in_b,
        "tensors": tensors,
        "metadata": metadata,
    })
}

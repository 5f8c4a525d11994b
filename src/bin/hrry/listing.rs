//! `hrry inspect` of a safetensors or GGUF file: its metadata and tensor table as
//! `hrry convert` reads them, with what each tensor converts to, so that a model
//! can be looked at before it is converted.

use std::path::Path;

use crate::json::INSPECT_FORMAT_VERSION;
use hrry::convert::listing::Listing;
use hrry::convert::{list, ModelFormat};
use serde_json::{json, Map, Value};

use crate::text::{self, safe};
use crate::{Failure, Outcome};

/// The format of the file at `path` when it is a safetensors or GGUF file (by its
/// first bytes), else `None`.
pub fn model_format(path: &Path) -> Option<ModelFormat> {
    use std::io::Read;
    let mut head = [0u8; 16];
    let mut file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok().filter(|m| m.is_file())?.len();
    let n = file.read(&mut head).ok()?;
    match ModelFormat::sniff(&head[..n], len)? {
        ModelFormat::Hrry => None,
        other => Some(other),
    }
}

/// Shows the safetensors or GGUF file `path`: exit 0, or 1 when it cannot be read
/// as one (the reason on standard error, and as an error document with `--json`).
pub fn show(
    path: &Path,
    json_output: bool,
    max_array: Option<usize>,
    full: bool,
) -> Result<Outcome, Failure> {
    let listing = match list(path) {
        Ok(listing) => listing,
        // The message of an I/O error names the file.
        Err(hrry::Error::Io(e)) => return Err(Failure(format!("cannot read {e}"))),
        Err(e) => {
            let message = e.to_string();
            eprintln!("{}: {}", text::path(path), safe(&message));
            if json_output {
                let v = crate::render::error_json(
                    &crate::remote::shown(path),
                    None,
                    &message,
                    None,
                    None,
                );
                outln!("{}", serde_json::to_string_pretty(&v)?);
            }
            return Ok(Outcome::Invalid);
        }
    };
    let v = document(path, &listing, max_array);
    if json_output {
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print_human(path, &listing, &v, full);
    }
    Ok(Outcome::Ok)
}

/// The `--json` document (`model` in schema/inspect.schema.json).
fn document(path: &Path, listing: &Listing, max_array: Option<usize>) -> Value {
    let mut kv = Map::new();
    let mut source_types = Map::new();
    for e in &listing.metadata {
        kv.insert(
            e.key.clone(),
            crate::json::kv_json_limited(&e.value, max_array),
        );
        source_types.insert(e.key.clone(), json!(e.source_type));
    }
    let tensors: Vec<Value> = listing
        .tensors
        .iter()
        .map(|t| {
            json!({
                "name": t.name,
                "dtype": t.dtype,
                "shape": t.shape,
                "element_count": hrry::model::element_count(&t.shape),
                "offset": t.offset,
                "bytes": t.bytes,
                "converts_to": t.converts_to,
            })
        })
        .collect();
    json!({
        "format_version": INSPECT_FORMAT_VERSION,
        "format": listing.format.name(),
        "file": crate::remote::shown(path),
        "file_size": listing.file_len,
        "version": listing.version,
        "data_start": listing.data_start,
        "alignment": listing.alignment,
        "kv": kv,
        "kv_source_types": source_types,
        "tensors": tensors,
    })
}

fn print_human(path: &Path, listing: &Listing, v: &Value, full: bool) {
    let what = match listing.version {
        Some(version) => format!("GGUF v{version}"),
        None => "safetensors".to_string(),
    };
    outln!(
        "{}: {what}, {} bytes (not a HRRYFILE: shown as `hrry convert` reads it)",
        text::path(path),
        listing.file_len
    );
    let alignment = listing
        .alignment
        .map_or(String::new(), |a| format!(", alignment {a}"));
    outln!(
        "  tensor data from offset {}{alignment}",
        listing.data_start
    );
    let mut totals = crate::listed::Totals {
        tensors: listing.tensors.len() as u64,
        parameters: listing.tensors.iter().try_fold(0u64, |acc, t| {
            acc.checked_add(hrry::model::element_count(&t.shape)?)
        }),
        data_bytes: listing
            .tensors
            .iter()
            .map(|t| t.bytes.unwrap_or(0))
            .fold(0, u64::saturating_add),
        by_type: Vec::new(),
    };
    for t in &listing.tensors {
        totals.count_type(t.dtype.clone());
    }
    outln!("  {}", crate::render::summary_line(&totals));
    if let Some(kv) = v["kv"].as_object() {
        let types = v["kv_source_types"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        crate::render::print_kv_typed(kv, full, true, Some(&types));
    }
    let rows: Vec<Vec<String>> = listing
        .tensors
        .iter()
        .map(|t| {
            let dims: Vec<String> = t.shape.iter().map(u64::to_string).collect();
            vec![
                safe(&t.name).into_owned(),
                safe(&t.dtype).into_owned(),
                format!("[{}]", dims.join(", ")),
                hrry::model::element_count(&t.shape).map_or("?".into(), |n| n.to_string()),
                t.bytes.map_or("?".into(), |n| n.to_string()),
                t.offset.to_string(),
                safe(&t.converts_to).into_owned(),
            ]
        })
        .collect();
    outln!("tensors ({}):", listing.tensors.len());
    crate::render::print_table(
        &[
            "NAME",
            "TYPE",
            "SHAPE",
            "ELEMENTS",
            "BYTES",
            "OFFSET",
            "CONVERTS TO",
        ],
        &rows,
        &[3, 4, 5],
    );
}

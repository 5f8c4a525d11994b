//! `hrry inspect`.

use std::path::PathBuf;

use hrry::model::ElementType;
use serde_json::Value;

use crate::{Failure, Outcome};

/// Arguments of `hrry inspect`.
#[derive(clap::Args)]
pub struct Args {
    /// The file to show.
    file: PathBuf,
    /// Print JSON (the structure `hrry` tests and other readers compare against).
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<Outcome, Failure> {
    if crate::holo::is_holo_file(&args.file)? {
        return crate::holo::inspect(&args.file, args.json);
    }
    if crate::stream::is_stream_file(&args.file)? {
        return crate::stream::inspect(&args.file, args.json);
    }
    let Some(file) = crate::open_hrry(&args.file)? else {
        return Ok(Outcome::Invalid);
    };
    let v = hrry::report::inspect_json(&file);
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print_human(&args.file.display().to_string(), &v);
    }
    Ok(Outcome::Ok)
}

fn print_human(name: &str, v: &Value) {
    let h = &v["header"];
    outln!(
        "{name}: HRRYFILE {}.{}, {} bytes",
        h["container_version_major"],
        h["container_version_minor"],
        v["file_size"]
    );
    outln!(
        "  data_buffer_alignment {}  sorted_index {}  index_crc32c {}  kv_flag {}",
        h["data_buffer_alignment"],
        h["sorted_index"],
        h["has_index_crc32c"],
        h["has_kv_metadata"]
    );
    if let Some(kv) = v["kv"].as_object() {
        if !kv.is_empty() {
            outln!("  metadata:");
            for (k, e) in kv {
                outln!(
                    "    {k} ({}) = {}",
                    e["type"].as_str().unwrap_or("?"),
                    e["value"]
                );
            }
        }
    }
    let tensors = v["tensors"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    outln!("  {} tensor(s):", tensors.len());
    for t in tensors {
        if let Some(err) = t["error"].as_str() {
            outln!(
                "    {}  <unreadable: {err}>",
                t["name"].as_str().unwrap_or("?")
            );
            continue;
        }
        let ty = t["type_tag"]
            .as_u64()
            .and_then(|x| ElementType::from_tag(x as u8))
            .map_or("?", |e| e.name());
        let layout = t["layout"]
            .as_object()
            .filter(|m| !m.is_empty())
            .map(|m| format!(" {}", Value::Object(m.clone())))
            .unwrap_or_default();
        outln!(
            "    {:<32} {:<12} {:<20} layout {:#04x}{layout}  {} bytes at {}",
            t["name"].as_str().unwrap_or("?"),
            ty,
            t["shape"].to_string(),
            t["layout_tag"].as_u64().unwrap_or(0),
            t["data_length"],
            t["data_offset"],
        );
    }
}

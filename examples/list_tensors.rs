//! Opens a model and lists its metadata and tensors: name, element type, shape,
//! layout and whether it is quantized.
//!
//! `cargo run --example list_tensors [FILE.hrry]` (default: a bundled example).

use std::path::PathBuf;
use std::process::ExitCode;

use hrry::schema::layout_name;
use hrry::HrryFile;

fn main() -> ExitCode {
    let path = std::env::args_os()
        .nth(1)
        .map_or_else(|| PathBuf::from("corpus/valid/basic.hrry"), PathBuf::from);
    // `open` maps the file and checks its metadata against every rule decided from
    // metadata; a broken file is refused with the rule it breaks.
    let file = match HrryFile::open(&path) {
        Ok(file) => file,
        Err(e) => {
            eprintln!("{}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    };
    println!("{}: {} tensors", path.display(), file.len());
    for entry in file.kv() {
        let key = String::from_utf8_lossy(&entry.key);
        let value = &entry.value;
        // KV values are typed; `as_str`, `as_u64`, `as_f64`, … read the common ones.
        if let Some(s) = value.as_str() {
            println!("  {key} = {s:?}");
        } else if let Some(n) = value.as_i64() {
            println!("  {key} = {n}");
        } else if let Some(n) = value.as_u64() {
            println!("  {key} = {n}");
        } else if let Some(x) = value.as_f64() {
            println!("  {key} = {x}");
        } else {
            println!("  {key} = {value:?}");
        }
    }
    for entry in file.entries() {
        // Looking a tensor up decodes its descriptor only; the data stays mapped.
        let tensor = match file.tensor_at(entry) {
            Ok(tensor) => tensor,
            Err(e) => {
                eprintln!("{}: {e}", entry.name());
                return ExitCode::FAILURE;
            }
        };
        let element_type = tensor
            .element_type()
            .map_or("(extension type)", |t| t.name());
        println!(
            "  {:<24} {:<10} {:?} {}{}",
            tensor.name(),
            element_type,
            tensor.shape(),
            layout_name(tensor.descriptor.layout_tag),
            if tensor.is_quantized() {
                ", quantized"
            } else {
                ""
            },
        );
    }
    ExitCode::SUCCESS
}

//! Validates files from an untrusted source and prints every violation: its rule
//! ID, the byte offset of the offending field and what is wrong. Exits 1 when any
//! file is invalid, 2 when one cannot be read.
//!
//! `cargo run --example validate_untrusted [FILE...]` (default: one valid and one
//! invalid bundled file).
//!
//! Validation reads only what the rules look at, with positioned reads, so memory
//! stays small whatever the file's size, and no input can make it panic or
//! allocate more than the input justifies.

use std::path::PathBuf;
use std::process::ExitCode;

use hrry::validate::{Options, Rules};

fn main() -> ExitCode {
    let mut paths: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    if paths.is_empty() {
        paths = vec![
            "corpus/valid/basic.hrry".into(),
            "corpus/invalid/HF-CRC-001.hrry".into(),
        ];
    }
    // Strict mode also reports the hardening rules (things the spec allows but a
    // careful reader should not accept from strangers); Permissive reports spec
    // rules only.
    let options = Options {
        judging: Rules::Hardened.into(),
        ..Default::default()
    };
    let mut code = ExitCode::SUCCESS;
    for path in &paths {
        match hrry::validate_path(path, &options) {
            Ok((format, report)) if report.is_valid() => {
                println!("{}: valid {}", path.display(), format.name());
            }
            Ok((format, report)) => {
                println!(
                    "{}: invalid {}, {} violation{}",
                    path.display(),
                    format.name(),
                    report.violations.len(),
                    if report.violations.len() == 1 {
                        ""
                    } else {
                        "s"
                    }
                );
                for v in &report.violations {
                    // e.g. "HF-CRC-001 at offset 1432: index CRC-32C mismatch …"
                    println!("  {v}");
                }
                code = ExitCode::from(1);
            }
            Err(e) => {
                eprintln!("{}: cannot read: {e}", path.display());
                return ExitCode::from(2);
            }
        }
    }
    code
}

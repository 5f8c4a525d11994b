//! `hrry validate`.

use std::path::PathBuf;

use hrry::limits::Limits;
use hrry::validate::{Mode, Options, Report};

use crate::{read_input, Failure, Outcome};

/// Arguments of `hrry validate`.
#[derive(clap::Args)]
pub struct Args {
    /// Files to check (HRRYFILE or .holo, recognised by their magic).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Print one JSON object per file (an array when several files are given).
    #[arg(long)]
    json: bool,
    /// Apply only the spec's rules, with its permissive allowances (hardening rules
    /// such as unaccounted bytes are not reported).
    #[arg(long)]
    permissive: bool,
    /// Refuse files declaring more tensors than this.
    #[arg(long, value_name = "N")]
    max_tensors: Option<u64>,
}

pub fn run(args: Args) -> Result<Outcome, Failure> {
    let mut limits = Limits::default();
    if let Some(n) = args.max_tensors {
        limits.max_tensors = n;
    }
    let options = Options {
        mode: if args.permissive {
            Mode::Permissive
        } else {
            Mode::Strict
        },
        limits,
    };
    let mut all_valid = true;
    let mut results = Vec::new();
    for path in &args.files {
        let bytes = read_input(path)?;
        let format = hrry::Format::detect(&bytes, Some(path));
        let report = hrry::validate_as(&bytes, format, &options);
        all_valid &= report.is_valid();
        let name = path.display().to_string();
        if args.json {
            results.push(hrry::report::validate_json(&name, format.name(), &report));
        } else {
            print_report(&name, &report);
        }
    }
    if args.json {
        let out = if results.len() == 1 {
            results.pop().unwrap_or_default()
        } else {
            serde_json::Value::Array(results)
        };
        outln!("{}", serde_json::to_string_pretty(&out)?);
    }
    Ok(if all_valid {
        Outcome::Ok
    } else {
        Outcome::Invalid
    })
}

/// Prints a report as `hrry validate` does (also used by `hrry stream validate`).
pub fn print_report(name: &str, report: &Report) {
    if report.is_valid() {
        outln!("{name}: valid");
    } else {
        outln!("{name}: INVALID ({} violation(s))", report.violations.len());
        for v in &report.violations {
            outln!(
                "  {} [{}] at offset {}: {}",
                v.rule.id,
                v.rule.level.name(),
                v.offset,
                v.message
            );
        }
    }
    for n in &report.notes {
        outln!("  note: {n}");
    }
}

//! The conformance corpus generator.
//!
//! Every file under `corpus/` is produced here, deterministically: valid files that
//! must validate clean in strict mode, and invalid files that each break exactly one
//! rule. `corpus/manifest.json` lists them. Regenerate with
//! `cargo run -p hrry-tools --bin gen_corpus` (a test fails when the tree is stale).

mod case;
mod container;
pub mod holo;
mod layout;
mod messages;
pub mod patch;
mod quant;
pub mod quant_layouts;
mod stream;

use std::io;
use std::path::Path;

use hrry::conformance;

pub use case::{Case, Expect};
pub use hrry::Format;

/// The folders holding cases, relative to the corpus root.
pub const FOLDERS: &[&str] = &[
    "valid",
    "invalid",
    "stream/valid",
    "stream/invalid",
    "messages/valid",
    "messages/invalid",
];

/// Every corpus case of every area, in manifest order.
pub fn all_cases() -> Vec<Case> {
    let mut cases = container::cases();
    cases.extend(layout::cases());
    cases.extend(holo::cases());
    cases.extend(quant::cases());
    cases.extend(quant_layouts::cases());
    let streams = stream::cases(&cases);
    cases.extend(streams);
    cases.extend(messages::cases());
    cases.sort_by(|a, b| a.path.cmp(&b.path));
    cases
}

/// The manifest describing `cases` (see `corpus/README.md` for its fields).
pub fn manifest(cases: &[Case]) -> serde_json::Value {
    let files: Vec<serde_json::Value> = cases
        .iter()
        .map(|c| {
            let (valid, rule) = match c.expect {
                Expect::Valid => (true, serde_json::Value::Null),
                Expect::Invalid(r) => (false, r.into()),
            };
            let mut entry = serde_json::json!({
                "path": c.path,
                "format": c.format.name(),
                "valid": valid,
                "rule": rule,
                "description": c.description,
                "size": c.bytes.len(),
                "blake3": blake3::hash(&c.bytes).to_hex().to_string(),
            });
            if let Some(tensors) = expected_tensors(c) {
                entry["tensors"] = tensors;
            }
            entry
        })
        .collect();
    serde_json::json!({ "version": 1, "files": files })
}

/// What reading a valid HRRYFILE case must give ([`conformance::read_tensors`]), as the
/// manifest's `tensors` array; `None` for other cases.
fn expected_tensors(case: &Case) -> Option<serde_json::Value> {
    if case.expect != Expect::Valid || case.format != Format::HrryFile {
        return None;
    }
    let file = hrry::file::HrryFile::from_bytes(&case.bytes).ok()?;
    let tensors = conformance::read_tensors(&file).ok()?;
    Some(
        tensors
            .iter()
            .map(conformance::TensorReading::to_json)
            .collect(),
    )
}

/// Writes every case and `manifest.json` under `dir`, removing stale files from its
/// case folders ([`FOLDERS`]).
pub fn write_corpus(dir: &Path, cases: &[Case]) -> io::Result<()> {
    for sub in FOLDERS {
        let d = dir.join(sub);
        if d.exists() {
            std::fs::remove_dir_all(&d)?;
        }
        std::fs::create_dir_all(&d)?;
    }
    for c in cases {
        std::fs::write(dir.join(&c.path), &c.bytes)?;
    }
    let text = serde_json::to_string_pretty(&manifest(cases))? + "\n";
    std::fs::write(dir.join("manifest.json"), text)
}

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
pub mod spec_examples;
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
    cases.extend(spec_examples::cases());
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
            let (valid, rule, level) = match c.expect {
                Expect::Valid => (true, serde_json::Value::Null, serde_json::Value::Null),
                Expect::Invalid(r) => (false, r.into(), level_of(r).into()),
            };
            let mut entry = serde_json::json!({
                "path": c.path,
                "format": c.format.name(),
                "valid": valid,
                "rule": rule,
                "level": level,
                "rules": reported_rules(c),
                "description": c.description,
                "size": c.bytes.len(),
                "blake3": blake3::hash(&c.bytes).to_hex().to_string(),
            });
            if let Some((_, alternatives)) = ALTERNATIVES.iter().find(|(p, _)| *p == c.path) {
                entry["rule_alternatives"] = serde_json::json!(alternatives);
            }
            if let Some(source) = c.spec_example {
                entry["spec_example"] = serde_json::json!(source);
            }
            if let Some(tensors) = expected_tensors(c) {
                entry["tensors"] = tensors;
            }
            entry
        })
        .collect();
    serde_json::json!({ "version": 1, "files": files })
}

/// Cases that break further rules than the one hrry reports first, where the order
/// of checks decides which a reader names: (path, the other rules).
const ALTERNATIVES: &[(&str, &[&str])] = &[
    // 24 zero bytes: no descriptor magic (TD-HDR-001), and too short for the
    // descriptor length a reader would take from them (TD-HDR-003).
    ("stream/invalid/TD-HDR-001.hrrys", &["TD-HDR-003"]),
];

/// The level name (`spec`, `hardening`, `limit`) of the rule with `id`.
fn level_of(id: &str) -> &'static str {
    hrry::validate::rule_by_id(id).map_or("spec", |r| r.level.name())
}

/// Every rule strict validation under the hardened policy reports for `case`, in
/// the order found: what a harness accepts as the reason to reject it.
fn reported_rules(case: &Case) -> Vec<&'static str> {
    case.format
        .validate_bytes(&case.bytes, &hrry::validate::Options::default())
        .rule_ids()
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

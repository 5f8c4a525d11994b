//! The conformance corpus generator.
//!
//! Every file under `corpus/` is produced here, deterministically: valid files that
//! must validate clean in strict mode, and invalid files that each break exactly one
//! rule. `corpus/manifest.json` lists them. Regenerate with
//! `cargo run --example gen_corpus` (a test fails when the tree is stale).

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

pub use crate::Format;

/// What validating a corpus file must give.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Valid in strict mode.
    Valid,
    /// Strict validation reports exactly this rule ID and no other.
    Invalid(&'static str),
}

/// One corpus file.
#[derive(Clone, Debug)]
pub struct Case {
    /// Path relative to `corpus/`, e.g. `invalid/HF-HDR-003.hrry`.
    pub path: String,
    /// Container format.
    pub format: Format,
    /// The required verdict.
    pub expect: Expect,
    /// One line saying what the file is.
    pub description: String,
    /// The file's bytes.
    pub bytes: Vec<u8>,
}

impl Case {
    /// A valid case at `valid/<name>` (under `stream/` or `messages/` for those
    /// formats).
    pub fn valid(format: Format, name: &str, description: &str, bytes: Vec<u8>) -> Self {
        Case {
            path: format!("{}valid/{name}", folder(format)),
            format,
            expect: Expect::Valid,
            description: description.to_string(),
            bytes,
        }
    }

    /// An invalid case breaking `rule`, at `invalid/<rule>[-suffix].<ext>`.
    pub fn invalid(
        format: Format,
        rule: &'static str,
        suffix: &str,
        description: &str,
        bytes: Vec<u8>,
    ) -> Self {
        let ext = match format {
            Format::HrryFile => "hrry",
            Format::Holo => "holo",
            Format::Stream => "hrrys",
            Format::Messages => "hrrymsg",
        };
        let stem = if suffix.is_empty() {
            rule.to_string()
        } else {
            format!("{rule}-{suffix}")
        };
        Case {
            path: format!("{}invalid/{stem}.{ext}", folder(format)),
            format,
            expect: Expect::Invalid(rule),
            description: description.to_string(),
            bytes,
        }
    }
}

/// The folder a format's cases live in: files and archives at the top, bare
/// streams under `stream/`, captured conversations under `messages/`.
fn folder(format: Format) -> &'static str {
    match format {
        Format::HrryFile | Format::Holo => "",
        Format::Stream => "stream/",
        Format::Messages => "messages/",
    }
}

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
            serde_json::json!({
                "path": c.path,
                "format": c.format.name(),
                "valid": valid,
                "rule": rule,
                "description": c.description,
                "size": c.bytes.len(),
                "blake3": blake3::hash(&c.bytes).to_hex().to_string(),
            })
        })
        .collect();
    serde_json::json!({ "version": 1, "files": files })
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

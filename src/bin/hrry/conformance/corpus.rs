//! The corpus a run scores against: the one built into the binary (written to a
//! temporary folder, since testees are given paths) or any folder holding a
//! `manifest.json` in the corpus format (`corpus/README.md`).

use std::path::{Path, PathBuf};

use hrry::conformance::TensorReading;
use serde_json::{json, Value};

use crate::Failure;

/// Every file of the bundled corpus, as (path relative to `corpus/`, bytes).
const BUILT_IN: &[(&str, &[u8])] = include!(concat!(env!("OUT_DIR"), "/corpus_files.rs"));

/// One manifest entry.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Path relative to the corpus root, with `/`: the case's stable ID.
    pub path: String,
    /// `hrryfile`, `holo`, `stream` or `messages`.
    pub format: String,
    /// Whether strict validation must accept it.
    pub valid: bool,
    /// The level of its rule (`spec`, `hardening`, `limit`; `None` for a valid
    /// file or a manifest without levels, read as `spec`).
    pub level: Option<String>,
    /// The rules any of which is the right reason to reject it (empty: not known,
    /// the rule tier is `skip`).
    pub rules: Vec<String>,
    /// The manifest's description.
    pub description: String,
    /// Expected tensors, when the manifest lists them.
    pub tensors: Option<Vec<TensorReading>>,
    /// Why the file cannot be used (missing, or not the bytes the manifest names).
    pub unusable: Option<String>,
}

impl Entry {
    /// Whether the case is about hrry's policy (a `hardening` or `limit` rule), not
    /// the spec: the file is valid per the spec, or its spec verdict is incomplete.
    pub fn is_policy(&self) -> bool {
        matches!(self.level.as_deref(), Some("hardening" | "limit"))
    }

    /// The rule family the case is counted under: `HF-HDR` for an invalid file of
    /// rule `HF-HDR-003`, `valid` for a valid file.
    pub fn family(&self) -> String {
        if self.valid {
            return "valid".into();
        }
        family_of(self.rules.first().map(String::as_str))
    }
}

/// The rule family of an invalid file whose first rule is `rule`: `HF-HDR` for
/// `HF-HDR-003`, `unknown` when there is none.
pub fn family_of(rule: Option<&str>) -> String {
    match rule {
        Some(rule) => rule.splitn(3, '-').take(2).collect::<Vec<_>>().join("-"),
        None => "unknown".into(),
    }
}

/// A loaded corpus.
pub struct Corpus {
    /// The folder the files are in.
    pub root: PathBuf,
    /// Keeps the built-in corpus's temporary folder alive.
    _temp: Option<tempfile::TempDir>,
    /// The entries, in manifest order.
    pub entries: Vec<Entry>,
    /// The manifest, as read.
    manifest: Value,
    /// BLAKE3 of `manifest.json`.
    manifest_blake3: String,
    /// `built-in` or the folder given.
    source: String,
}

impl Corpus {
    /// The corpus built into this binary, written out to a temporary folder.
    pub fn built_in() -> Result<Corpus, Failure> {
        let temp = tempfile::Builder::new()
            .prefix("hrry-conformance-")
            .tempdir()?;
        extract(temp.path())?;
        let mut corpus = Corpus::load(temp.path(), "built-in".into())?;
        corpus._temp = Some(temp);
        Ok(corpus)
    }

    /// The corpus in `dir`.
    pub fn from_dir(dir: &Path) -> Result<Corpus, Failure> {
        let root = std::path::absolute(dir)?;
        Corpus::load(&root, root.display().to_string())
    }

    fn load(root: &Path, source: String) -> Result<Corpus, Failure> {
        let manifest_path = root.join("manifest.json");
        let text = std::fs::read(&manifest_path)
            .map_err(|e| Failure(format!("cannot read {}: {e}", manifest_path.display())))?;
        let manifest: Value = serde_json::from_slice(&text)
            .map_err(|e| Failure(format!("{}: not JSON: {e}", manifest_path.display())))?;
        if manifest["version"] != 1 {
            return Err(Failure(format!(
                "{}: manifest version {} is not 1",
                manifest_path.display(),
                manifest["version"]
            )));
        }
        let files = manifest["files"]
            .as_array()
            .ok_or_else(|| Failure("the manifest has no \"files\" array".into()))?;
        let entries = files
            .iter()
            .map(|f| entry(root, f))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Corpus {
            root: root.to_path_buf(),
            _temp: None,
            entries,
            manifest_blake3: blake3::hash(&text).to_hex().to_string(),
            manifest,
            source,
        })
    }

    /// The `corpus` object of the results: where it came from, its manifest's
    /// version and BLAKE3, the hrry release that bundled it, the file count.
    pub fn describe(&self) -> Value {
        json!({
            "source": self.source,
            "manifest_version": self.manifest["version"],
            "manifest_blake3": self.manifest_blake3,
            "bundled_with": format!("hrry {}", env!("CARGO_PKG_VERSION")),
            "files": self.entries.len(),
        })
    }

    /// The absolute path of an entry's file.
    pub fn path_of(&self, entry: &Entry) -> PathBuf {
        self.root.join(&entry.path)
    }
}

/// Writes the built-in corpus (its files and `manifest.json`) under `dir`, creating
/// folders as needed; returns the number of files written. A folder already
/// holding a `manifest.json` is refused rather than mixed with.
pub fn extract(dir: &Path) -> Result<usize, Failure> {
    if dir.join("manifest.json").exists() {
        return Err(Failure(format!(
            "{} already holds a manifest.json: extract into an empty folder",
            dir.display()
        )));
    }
    for (rel, bytes) in BUILT_IN {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| Failure(format!("cannot create {}: {e}", parent.display())))?;
        }
        std::fs::write(&path, bytes)
            .map_err(|e| Failure(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(BUILT_IN.len())
}

fn entry(root: &Path, f: &Value) -> Result<Entry, Failure> {
    let field = |key: &str| {
        f[key]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| Failure(format!("a manifest entry without \"{key}\": {f}")))
    };
    let path = field("path")?;
    if path.split('/').any(|c| c == ".." || c.is_empty()) || path.starts_with('/') {
        return Err(Failure(format!("manifest path {path:?} leaves the corpus")));
    }
    let mut rules: Vec<String> = f["rule"].as_str().map(str::to_string).into_iter().collect();
    for alt in f["rules"]
        .as_array()
        .into_iter()
        .chain(f["rule_alternatives"].as_array())
        .flatten()
    {
        if let Some(rule) = alt.as_str() {
            if !rules.iter().any(|r| r == rule) {
                rules.push(rule.to_string());
            }
        }
    }
    let tensors = f["tensors"].as_array().map(|list| {
        list.iter()
            .map(|t| TensorReading {
                name: t["name"].as_str().unwrap_or_default().to_string(),
                dtype: t["dtype"].as_str().unwrap_or_default().to_string(),
                shape: t["shape"]
                    .as_array()
                    .map(|s| s.iter().filter_map(Value::as_u64).collect())
                    .unwrap_or_default(),
                sha256: t["sha256"].as_str().map(str::to_string),
                dequantized_sha256: t["dequantized_sha256"].as_str().map(str::to_string),
            })
            .collect()
    });
    let unusable = check_file(&root.join(&path), f);
    Ok(Entry {
        format: field("format")?,
        valid: f["valid"]
            .as_bool()
            .ok_or_else(|| Failure(format!("{path}: no boolean \"valid\"")))?,
        rules,
        level: f["level"].as_str().map(str::to_string),
        description: f["description"].as_str().unwrap_or_default().to_string(),
        tensors,
        unusable,
        path,
    })
}

/// Why the file at `path` is not the one the manifest entry `f` describes, if it
/// is not: missing, another size, another BLAKE3.
fn check_file(path: &Path, f: &Value) -> Option<String> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => return Some(format!("cannot read the file: {e}")),
    };
    if let Some(size) = f["size"].as_u64() {
        if size != bytes.len() as u64 {
            return Some(format!(
                "the file has {} bytes, the manifest says {size}",
                bytes.len()
            ));
        }
    }
    let Some(want) = f["blake3"].as_str() else {
        return Some("the manifest gives no blake3 for it".into());
    };
    let got = blake3::hash(&bytes).to_hex();
    (got.as_str() != want).then(|| format!("the file's BLAKE3 is {got}, the manifest says {want}"))
}

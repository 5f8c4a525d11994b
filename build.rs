//! Builds the list of the conformance corpus files that the `hrry` binary carries
//! (`hrry conformance` runs without a checkout). With the `cli` feature it writes
//! `$OUT_DIR/corpus_files.rs`: a slice of (path relative to `corpus/`, bytes), every
//! file under `corpus/` in path order, each brought in by `include_bytes!`.
//! Without the feature the slice is empty and nothing is embedded.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("manifest dir"));
    let corpus = root.join("corpus");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=corpus");
    let mut files = Vec::new();
    if std::env::var_os("CARGO_FEATURE_CLI").is_some() {
        list(&corpus, &corpus, &mut files);
    }
    files.sort();
    let mut out = String::from("&[\n");
    for (rel, abs) in &files {
        let _ = writeln!(out, "    ({rel:?}, include_bytes!({abs:?})),");
    }
    out.push_str("]\n");
    let dest = PathBuf::from(std::env::var_os("OUT_DIR").expect("out dir")).join("corpus_files.rs");
    std::fs::write(dest, out).expect("write corpus_files.rs");
}

/// Every regular file under `dir`, as (path relative to `base` with `/`, absolute path).
fn list(base: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            list(base, &path, out);
        } else if path.is_file() {
            let rel = path.strip_prefix(base).expect("under base");
            let rel: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            out.push((rel.join("/"), path.to_string_lossy().into_owned()));
        }
    }
}

//! `hrry conformance explain PATH`: what a corpus case is about — its rule's text
//! and spec section, what hrry reports for it, the valid file it was most likely
//! made from, and the bytes that differ, with the part of the file each lies in.

use std::fmt::Write as _;
use std::ops::Range;

use hrry::file::HrryFile;
use hrry::schema::TRAILER_LEN;

use super::corpus::{Corpus, Entry};
use crate::Failure;

/// Most differing byte runs listed.
const MAX_RUNS: usize = 24;

/// The explanation of the case at `path` (relative to the corpus root).
pub fn explain(corpus: &Corpus, path: &str) -> Result<String, Failure> {
    let wanted = path.trim_start_matches("./").trim_start_matches("corpus/");
    let entry = corpus
        .entries
        .iter()
        .find(|e| e.path == wanted)
        .ok_or_else(|| Failure(format!("the corpus has no case {wanted:?}")))?;
    let bytes = std::fs::read(corpus.path_of(entry))?;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} ({}): {}",
        entry.path, entry.format, entry.description
    );
    if let Some(why) = &entry.unusable {
        let _ = writeln!(s, "warning: {why}");
    }
    if entry.valid {
        let _ = writeln!(s, "valid: strict validation must accept it");
    }
    for id in &entry.rules {
        match hrry::validate::rule_by_id(id) {
            Some(r) => {
                let _ = writeln!(
                    s,
                    "rule {} ({}): {}\n  spec: {}",
                    r.id,
                    r.level.name(),
                    r.summary,
                    r.spec
                );
            }
            None => {
                let _ = writeln!(s, "rule {id}: not in hrry's rule table");
            }
        }
    }
    let format = match entry.format.as_str() {
        "holo" => hrry::Format::Holo,
        "stream" => hrry::Format::Stream,
        "messages" => hrry::Format::Messages,
        _ => hrry::Format::HrryFile,
    };
    let report = format.validate_bytes(&bytes, &Default::default());
    if report.violations.is_empty() {
        let _ = writeln!(s, "hrry reports no violation");
    }
    for v in &report.violations {
        let _ = writeln!(s, "hrry reports: {v}");
    }
    if entry.valid {
        return Ok(s);
    }
    let Some((base, base_bytes)) = nearest_valid(corpus, entry, &bytes) else {
        let _ = writeln!(s, "no valid file of the same format to compare with");
        return Ok(s);
    };
    let _ = writeln!(
        s,
        "nearest valid file: {} ({})",
        base.path, base.description
    );
    if base_bytes.len() != bytes.len() {
        let _ = writeln!(
            s,
            "length: {} bytes, {} in the valid file",
            bytes.len(),
            base_bytes.len()
        );
    }
    let parts = parts_of(format, &base_bytes);
    let runs = differing_runs(&base_bytes, &bytes);
    for run in runs.iter().take(MAX_RUNS) {
        let was = hex(base_bytes.get(run.clone()).unwrap_or(&[]));
        let now = hex(bytes.get(run.clone()).unwrap_or(&[]));
        let part = parts
            .iter()
            .find(|(r, _)| r.contains(&(run.start as u64)))
            .map_or("outside every part of the valid file", |(_, name)| {
                name.as_str()
            });
        let _ = writeln!(
            s,
            "  offset {:#x}..{:#x}: {was} -> {now}  [{part}]",
            run.start, run.end
        );
    }
    if runs.len() > MAX_RUNS {
        let _ = writeln!(
            s,
            "  … and {} more runs of differing bytes",
            runs.len() - MAX_RUNS
        );
    }
    Ok(s)
}

/// The valid file of the same format closest to `bytes` (fewest differing bytes,
/// a length difference counting as that many).
fn nearest_valid<'c>(
    corpus: &'c Corpus,
    entry: &Entry,
    bytes: &[u8],
) -> Option<(&'c Entry, Vec<u8>)> {
    corpus
        .entries
        .iter()
        .filter(|e| e.valid && e.format == entry.format)
        .filter_map(|e| Some((e, std::fs::read(corpus.path_of(e)).ok()?)))
        .min_by_key(|(_, b)| {
            let common = b.iter().zip(bytes).filter(|(x, y)| x != y).count();
            common + b.len().abs_diff(bytes.len())
        })
}

/// The runs of offsets where `a` and `b` differ (the longer one's tail included).
fn differing_runs(a: &[u8], b: &[u8]) -> Vec<Range<usize>> {
    let len = a.len().max(b.len());
    let mut runs: Vec<Range<usize>> = Vec::new();
    for i in 0..len {
        if a.get(i) == b.get(i) {
            continue;
        }
        match runs.last_mut() {
            Some(r) if r.end == i => r.end = i + 1,
            _ => runs.push(i..i + 1),
        }
    }
    runs
}

fn hex(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "(none)".into();
    }
    let shown: String = bytes.iter().take(16).map(|b| format!("{b:02x}")).collect();
    if bytes.len() > 16 {
        format!("{shown}… ({} bytes)", bytes.len())
    } else {
        shown
    }
}

/// The header fields of a HRRYFILE (file-format.md § File Header), by offset.
const HEADER_FIELDS: &[(u64, u64, &str)] = &[
    (0, 8, "header: magic"),
    (8, 9, "header: container_version_major"),
    (9, 10, "header: container_version_minor"),
    (10, 12, "header: reserved"),
    (12, 16, "header: file_flags"),
    (16, 20, "header: data_buffer_alignment"),
    (20, 28, "header: first_descriptor_offset"),
    (28, 36, "header: tensor_count_hint"),
    (36, 64, "header: reserved_header"),
];

/// The trailer fields, by offset from the trailer's start.
const TRAILER_FIELDS: &[(u64, u64, &str)] = &[
    (0, 8, "trailer: index_offset"),
    (8, 16, "trailer: index_length"),
    (16, 24, "trailer: kv_offset"),
    (24, 28, "trailer: kv_length"),
    (28, 32, "trailer: index_crc32c"),
    (32, 36, "trailer: reserved"),
    (36, 40, "trailer: trailer_magic"),
];

/// The named parts of a valid file: for a HRRYFILE its header and trailer fields,
/// index, KV metadata, and each tensor's descriptor and data; nothing for other
/// formats.
fn parts_of(format: hrry::Format, bytes: &[u8]) -> Vec<(Range<u64>, String)> {
    let mut parts = Vec::new();
    if format != hrry::Format::HrryFile {
        return parts;
    }
    let Ok(file) = HrryFile::from_bytes(bytes) else {
        return parts;
    };
    for (start, end, name) in HEADER_FIELDS {
        parts.push((*start..*end, (*name).to_string()));
    }
    let trailer = (bytes.len() as u64).saturating_sub(TRAILER_LEN);
    for (start, end, name) in TRAILER_FIELDS {
        parts.push((trailer + start..trailer + end, (*name).to_string()));
    }
    let t = file.trailer();
    parts.push((
        t.index_offset..t.index_offset.saturating_add(t.index_length),
        "the tensor index".into(),
    ));
    parts.push((
        t.kv_offset..t.kv_offset.saturating_add(u64::from(t.kv_length)),
        "the KV metadata".into(),
    ));
    for entry in file.entries() {
        let e = entry.index_entry();
        parts.push((
            e.descriptor_offset
                ..e.descriptor_offset
                    .saturating_add(e.descriptor_length.into()),
            format!("the descriptor of tensor {:?}", entry.name()),
        ));
        parts.push((
            e.data_offset..e.data_offset.saturating_add(e.data_length),
            format!("the data of tensor {:?}", entry.name()),
        ));
    }
    parts
}

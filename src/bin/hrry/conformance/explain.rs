//! `hrry conformance explain CASE|RULE|FILE`: what a corpus case is about — its
//! rule's text and spec section, what hrry reports for it, the valid file it was
//! most likely made from, and the bytes changed from it (aligned, so that bytes
//! inserted or removed are one change), with the part of the file each lies in. A
//! rule ID explains the cases that break it; a file outside the corpus is explained
//! by its violations and its changes from the nearest valid corpus file.

use std::fmt::Write as _;
use std::ops::Range;
use std::path::Path;

use hrry::file::HrryFile;
use hrry::schema::TRAILER_LEN;

use super::byte_diff::{changed_bytes, hunks, Hunk};
use super::corpus::{Corpus, Entry};
use crate::Failure;

/// Most changes listed.
const MAX_RUNS: usize = 24;

/// The explanation of `target`: a case's path relative to the corpus root, a rule
/// ID, or the path of a file outside the corpus.
pub fn explain(corpus: &Corpus, target: &str) -> Result<String, Failure> {
    let wanted = target
        .trim_start_matches("./")
        .trim_start_matches("corpus/");
    if let Some(entry) = corpus.entries.iter().find(|e| e.path == wanted) {
        return explain_case(corpus, entry);
    }
    if let Some(rule) = hrry::validate::rule_by_id(&target.to_ascii_uppercase()) {
        return explain_rule(corpus, rule);
    }
    let path = Path::new(target);
    if path.is_file() {
        return explain_file(corpus, path);
    }
    Err(Failure(format!(
        "{target:?} is neither a corpus case (e.g. invalid/HF-HDR-003.hrry), a rule ID \
         (e.g. HF-HDR-003, see `hrry rules`) nor a file"
    )))
}

/// Every corpus case that breaks `rule`, each explained.
fn explain_rule(corpus: &Corpus, rule: &hrry::validate::Rule) -> Result<String, Failure> {
    let cases: Vec<&Entry> = corpus
        .entries
        .iter()
        .filter(|e| !e.valid && e.rules.iter().any(|r| r == rule.id))
        .collect();
    let mut s = String::new();
    if cases.is_empty() {
        let _ = writeln!(
            s,
            "rule {} ({}): {}\n  spec: {}\nno corpus case breaks it",
            rule.id,
            rule.level.name(),
            rule.summary,
            rule.spec
        );
        return Ok(s);
    }
    let _ = writeln!(s, "{} {}:", plural_cases(cases.len()), rule.id);
    for (i, entry) in cases.iter().enumerate() {
        if i > 0 {
            s.push('\n');
        }
        s.push_str(&explain_case(corpus, entry)?);
    }
    Ok(s)
}

fn plural_cases(n: usize) -> String {
    if n == 1 {
        "1 corpus case breaks".into()
    } else {
        format!("{n} corpus cases break")
    }
}

/// A file outside the corpus: the rules it breaks and its changes from the nearest
/// valid corpus file of its format.
fn explain_file(corpus: &Corpus, path: &Path) -> Result<String, Failure> {
    let bytes = std::fs::read(path)
        .map_err(|e| Failure(format!("cannot read {}: {e}", crate::text::path(path))))?;
    let format = hrry::Format::detect(&bytes, Some(path));
    let report = format.validate_bytes(&bytes, &Default::default());
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} ({}): not a corpus case",
        crate::text::path(path),
        format.name()
    );
    let mut ids: Vec<&str> = report.violations.iter().map(|v| v.rule.id).collect();
    ids.dedup();
    for id in &ids {
        rule_lines(&mut s, id);
    }
    report_lines(&mut s, &report);
    changes_from_nearest(&mut s, corpus, format, format.name(), &bytes);
    Ok(s)
}

/// The explanation of the corpus case `entry`.
fn explain_case(corpus: &Corpus, entry: &Entry) -> Result<String, Failure> {
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
        rule_lines(&mut s, id);
    }
    let format = match entry.format.as_str() {
        "holo" => hrry::Format::Holo,
        "stream" => hrry::Format::Stream,
        "messages" => hrry::Format::Messages,
        _ => hrry::Format::HrryFile,
    };
    let report = format.validate_bytes(&bytes, &Default::default());
    report_lines(&mut s, &report);
    if entry.valid {
        return Ok(s);
    }
    changes_from_nearest(&mut s, corpus, format, &entry.format, &bytes);
    Ok(s)
}

/// A rule's text and spec section.
fn rule_lines(s: &mut String, id: &str) {
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

/// What hrry reports.
fn report_lines(s: &mut String, report: &hrry::validate::Report) {
    if report.violations.is_empty() {
        let _ = writeln!(s, "hrry reports no violation");
    }
    for v in &report.violations {
        let _ = writeln!(s, "hrry reports: {v}");
    }
}

/// The nearest valid corpus file of `format_name` and the changes from it to
/// `bytes`, each with the part of the valid file it lies in.
fn changes_from_nearest(
    s: &mut String,
    corpus: &Corpus,
    format: hrry::Format,
    format_name: &str,
    bytes: &[u8],
) {
    let Some((base, base_bytes)) = nearest_valid(corpus, format_name, bytes) else {
        let _ = writeln!(s, "no valid file of the same format to compare with");
        return;
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
    let part_of = |offset: usize| {
        parts
            .iter()
            .find(|(r, _)| r.contains(&(offset as u64)))
            .map_or("outside every part of the valid file", |(_, name)| {
                name.as_str()
            })
    };
    let changes = match hunks(&base_bytes, bytes) {
        Some(changes) => changes,
        None => {
            let _ = writeln!(
                s,
                "  (too different to align: the bytes that differ, position by position)"
            );
            differing_runs(&base_bytes, bytes)
                .into_iter()
                .map(|r| Hunk {
                    old: r.start.min(base_bytes.len())..r.end.min(base_bytes.len()),
                    new: r.start.min(bytes.len())..r.end.min(bytes.len()),
                })
                .collect()
        }
    };
    for h in changes.iter().take(MAX_RUNS) {
        let was = hex(&base_bytes[h.old.clone()]);
        let now = hex(&bytes[h.new.clone()]);
        let what = if h.old.is_empty() {
            format!("inserted at {:#x}: {now}", h.old.start)
        } else if h.new.is_empty() {
            format!("offset {:#x}..{:#x} removed: {was}", h.old.start, h.old.end)
        } else if h.old.start == h.new.start && h.old.len() == h.new.len() {
            format!(
                "offset {:#x}..{:#x}: {was} -> {now}",
                h.old.start, h.old.end
            )
        } else {
            format!(
                "offset {:#x}..{:#x} (now at {:#x}..{:#x}): {was} -> {now}",
                h.old.start, h.old.end, h.new.start, h.new.end
            )
        };
        let _ = writeln!(s, "  {what}  [{}]", part_of(h.old.start));
    }
    if changes.len() > MAX_RUNS {
        let _ = writeln!(s, "  … and {} more changes", changes.len() - MAX_RUNS);
    }
}

/// The valid file of format `format_name` closest to `bytes`: of the few closest
/// by a cheap measure (differing positions plus the length difference; the bytes
/// outside their common start and end; the longest common start and end), the
/// one fewest aligned changes away
/// (then fewest bytes changed).
fn nearest_valid<'c>(
    corpus: &'c Corpus,
    format_name: &str,
    bytes: &[u8],
) -> Option<(&'c Entry, Vec<u8>)> {
    const SHORTLIST: usize = 3;
    let candidates: Vec<(&Entry, Vec<u8>)> = corpus
        .entries
        .iter()
        .filter(|e| e.valid && e.format == format_name)
        .filter_map(|e| Some((e, std::fs::read(corpus.path_of(e)).ok()?)))
        .collect();
    let positional = |b: &[u8]| {
        b.iter().zip(bytes).filter(|(x, y)| x != y).count() + b.len().abs_diff(bytes.len())
    };
    let common_ends = |b: &[u8]| {
        let prefix = b.iter().zip(bytes).take_while(|(x, y)| x == y).count();
        let suffix = b[prefix..]
            .iter()
            .rev()
            .zip(bytes[prefix..].iter().rev())
            .take_while(|(x, y)| x == y)
            .count();
        prefix + suffix
    };
    let outside_common_ends = |b: &[u8]| b.len() + bytes.len() - 2 * common_ends(b);
    // Longest common start and end first (a file cut short).
    let most_in_common = |b: &[u8]| usize::MAX - common_ends(b);
    let mut shortlist: Vec<usize> = Vec::new();
    for measure in [
        &positional as &dyn Fn(&[u8]) -> usize,
        &outside_common_ends,
        &most_in_common,
    ] {
        let mut order: Vec<usize> = (0..candidates.len()).collect();
        order.sort_by_key(|&i| measure(&candidates[i].1));
        shortlist.extend(order.into_iter().take(SHORTLIST));
    }
    shortlist.sort_unstable();
    shortlist.dedup();
    let best = shortlist.into_iter().min_by_key(|&i| {
        let b = &candidates[i].1;
        // Fewest separate changes first (a cut file is one change from the file
        // it was cut from, however long the cut), then fewest bytes changed.
        let aligned =
            hunks(b, bytes).map_or((usize::MAX, usize::MAX), |h| (h.len(), changed_bytes(&h)));
        (aligned, positional(b))
    })?;
    candidates.into_iter().nth(best)
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

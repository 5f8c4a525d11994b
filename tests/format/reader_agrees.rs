//! The readers and the validator are one decoder, so they never disagree about a
//! file: over every HRRYFILE of the corpus and every fuzz finding,
//!
//! - a file the default open refuses is refused for a rule the validator reports;
//! - a file the validator accepts opens, with every tensor readable and found by name;
//! - a file the validator rejects for a `spec` rule decided from metadata is refused
//!   by the default open, and to [`Depth::Data`](hrry::Depth::Data) every `spec` rejection is (both
//!   judge with the spec's permissive allowances, as `hrry validate --permissive`);
//! - opened to [`Depth::Data`](hrry::Depth::Data) and judged as strict validation, a file is refused
//!   exactly when strict validation rejects it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use hrry::file::{HrryFile, HrryWriter, OpenOptions, WriterOptions};
use hrry::schema::container::header_offsets;
use hrry::validate::{Depth, Level, Options, Reads, Report, Rules};

/// Every HRRYFILE of `corpus/` and `tests/fuzz_findings/`.
fn inputs() -> Vec<(PathBuf, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["corpus/valid", "corpus/invalid", "tests/fuzz_findings"] {
        collect(&root.join(dir), &mut files);
    }
    files.sort();
    files
        .into_iter()
        .filter_map(|p| {
            let bytes = std::fs::read(&p).expect("readable");
            (hrry::Format::detect(&bytes, Some(&p)) == hrry::Format::HrryFile).then_some((p, bytes))
        })
        .collect()
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries {
        let p = e.expect("a directory entry").path();
        if p.is_dir() {
            collect(&p, out);
        } else if p
            .file_name()
            .is_some_and(|n| n != ".gitkeep" && n != "README.md")
        {
            out.push(p);
        }
    }
}

fn strict(bytes: &[u8]) -> Report {
    hrry::Format::HrryFile.validate_bytes(bytes, &Options::default())
}

fn permissive(bytes: &[u8]) -> Report {
    hrry::Format::HrryFile.validate_bytes(
        bytes,
        &Options {
            judging: Rules::Permissive.into(),
            ..Options::default()
        },
    )
}

fn ids(report: &Report) -> BTreeSet<&'static str> {
    report.violations.iter().map(|v| v.rule.id).collect()
}

/// Every entry of `file` reads, and a lookup of its name finds it.
fn all_readable(file: &HrryFile<'_>) -> Result<(), String> {
    for entry in file.entries() {
        file.tensor_at(entry)
            .map_err(|e| format!("{}: {e}", entry.name()))?;
        let found = file.find(entry.name()).map(|e| e.position());
        // Names are unique in a valid file, so the lookup lands on this entry.
        if found != Some(entry.position()) {
            return Err(format!("{:?} looked up as {found:?}", entry.name()));
        }
    }
    Ok(())
}

#[test]
fn the_permissive_open_and_the_validator_agree_on_every_corpus_file() {
    let inputs = inputs();
    assert!(
        inputs.len() > 300,
        "the corpus holds {} HRRYFILEs",
        inputs.len()
    );
    let (mut refused, mut opened) = (0, 0);
    for (path, bytes) in &inputs {
        let report = permissive(bytes);
        let reported = ids(&report);
        let spec_metadata = report
            .violations
            .iter()
            .any(|v| v.rule.level != Level::Hardening && v.rule.reads == Reads::Metadata);
        // The default open (hardened policy) refuses for a rule strict validation
        // reports too, and says so when the rule is the policy's.
        if let Err(e) = HrryFile::from_bytes(bytes) {
            let rule = e
                .rule()
                .unwrap_or_else(|| panic!("{}: {e}", path.display()));
            assert!(
                ids(&strict(bytes)).contains(rule.id),
                "{}: the default open refuses with {}",
                path.display(),
                rule.id
            );
            if rule.level == Level::Hardening {
                assert!(e.to_string().contains("hardening policy"), "{e}");
            }
        }
        match OpenOptions::new()
            .rules(Rules::Permissive)
            .open_bytes(bytes)
        {
            Err(e) => {
                refused += 1;
                let rule = e
                    .rule()
                    .unwrap_or_else(|| panic!("{}: {e}", path.display()));
                assert!(
                    reported.contains(rule.id),
                    "{}: the open refuses with {} but the validator reports {reported:?}",
                    path.display(),
                    rule.id
                );
            }
            Ok(file) => {
                opened += 1;
                assert!(
                    !spec_metadata,
                    "{}: opened, but the validator reports {reported:?}",
                    path.display()
                );
                if strict(bytes).is_valid() {
                    all_readable(&file).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                }
            }
        }
    }
    assert!(
        refused > 200 && opened > 50,
        "{refused} refused, {opened} opened"
    );
}

#[test]
fn a_full_check_refuses_every_spec_rejection_and_strict_judging_matches_validation() {
    for (path, bytes) in inputs() {
        let report = permissive(&bytes);
        let spec = report
            .violations
            .iter()
            .any(|v| v.rule.level != Level::Hardening);
        let full = OpenOptions::new()
            .depth(hrry::validate::Depth::Data)
            .rules(Rules::Permissive)
            .open_bytes(&bytes);
        assert_eq!(
            full.is_err(),
            spec,
            "{}: {:?}",
            path.display(),
            ids(&report)
        );
        let judged = OpenOptions::new()
            .depth(hrry::validate::Depth::Data)
            .rules(Rules::Hardened)
            .open_bytes(&bytes);
        let strict = strict(&bytes);
        match judged {
            Ok(_) => assert!(strict.is_valid(), "{}: {:?}", path.display(), ids(&strict)),
            Err(e) => {
                let rule = e.rule().expect("a rule");
                assert!(ids(&strict).contains(rule.id), "{}: {e}", path.display());
            }
        }
        let judged = OpenOptions::new()
            .depth(hrry::validate::Depth::Data)
            .rules(Rules::Permissive)
            .open_bytes(&bytes);
        assert_eq!(judged.is_ok(), report.is_valid(), "{}", path.display());
        // The exact spec verdict: the spec's rules read strictly, no hardening.
        let spec_only = hrry::Format::HrryFile.validate_bytes(
            &bytes,
            &Options {
                judging: Rules::Spec.into(),
                ..Options::default()
            },
        );
        let judged = OpenOptions::new()
            .depth(hrry::validate::Depth::Data)
            .rules(Rules::Spec)
            .open_bytes(&bytes);
        assert_eq!(judged.is_ok(), spec_only.is_valid(), "{}", path.display());
    }
}

#[test]
fn a_trusted_open_of_a_valid_file_reads_what_the_checked_open_reads() {
    for (path, bytes) in inputs() {
        if !strict(&bytes).is_valid() {
            continue;
        }
        let checked = HrryFile::from_bytes(&bytes).expect("opens");
        let trusted = OpenOptions::new()
            .depth(hrry::validate::Depth::Index)
            .open_bytes(&bytes)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        all_readable(&trusted).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for (a, b) in checked.entries().zip(trusted.entries()) {
            let (a, b) = (checked.tensor_at(a).unwrap(), trusted.tensor_at(b).unwrap());
            assert_eq!(a.descriptor, b.descriptor, "{}", path.display());
            assert_eq!(a.buffers, b.buffers, "{}", path.display());
        }
    }
}

/// Five tensors written in the order `m c x a q`, then the header's `SORTED_INDEX`
/// flag set although the index is not sorted.
fn falsely_sorted() -> Vec<u8> {
    let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    for name in ["m", "c", "x", "a", "q"] {
        w.write_row_major::<f32>(name, &[1], &[1.0]).unwrap();
    }
    let mut bytes = w.finish().unwrap();
    let at = header_offsets::FILE_FLAGS as usize;
    bytes[at] |= 0b10; // bit 1: SORTED_INDEX
    bytes
}

#[test]
fn a_false_sorted_index_flag_is_refused_by_every_check() {
    let bytes = falsely_sorted();
    let report = strict(&bytes);
    assert!(ids(&report).contains("HF-IDX-006"), "{:?}", ids(&report));
    for check in [Depth::Metadata, Depth::Data, Depth::Index] {
        let e = OpenOptions::new()
            .depth(check)
            .open_bytes(&bytes)
            .err()
            .unwrap_or_else(|| panic!("{check:?}: opened"));
        assert_eq!(e.rule().map(|r| r.id), Some("HF-IDX-006"), "{check:?}: {e}");
    }
}

#[test]
fn a_false_sorted_index_flag_let_pass_still_finds_every_tensor() {
    let bytes = falsely_sorted();
    let rule = &hrry::validate::rules::container::HF_IDX_SORTED;
    for options in [
        OpenOptions::new().allow(rule),
        OpenOptions::new().allow_all(),
    ] {
        let file = options.open_bytes(&bytes).expect("opens");
        for name in ["m", "c", "x", "a", "q"] {
            let t = file.tensor(name).unwrap();
            assert_eq!(t.map(|t| t.name().to_string()).as_deref(), Some(name));
        }
    }
}

//! The conformance corpus: every case validates as its manifest says, every rule has
//! a case, and the files under `corpus/` are what the generator makes.

use std::collections::BTreeSet;
use std::path::PathBuf;

use hrry::validate::{all_rules, Rules};
use hrry_testkit::corpus::{all_cases, manifest, Expect};

fn validate(case: &hrry_testkit::corpus::Case, mode: Rules) -> hrry::validate::Report {
    let options = hrry::validate::Options {
        judging: mode.into(),
        ..Default::default()
    };
    case.format.validate_bytes(&case.bytes, &options)
}

/// metadata.md § Worked Example, byte for byte: float32 [3, 4], row-major, one CPU
/// buffer of 192 bytes aligned to 64.
const WORKED_EXAMPLE: [u8; 61] = [
    0x48, 0x52, 0x52, 0x59, 0x01, 0x00, 0x3D, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x01,
    0x02, 0x00, 0x00, 0x00, 0x03, 0, 0, 0, 0, 0, 0, 0, 0x04, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0x01, 0xC0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0x00, 0x00, 0x00, 0x00,
];

#[test]
fn the_spec_worked_example_is_valid_per_spec_and_refused_by_hardening_only() {
    use hrry::file::OpenOptions;
    use hrry::validate::{Options, Rules, Verdict};
    let path = "invalid/TD-BUF-014-metadata-worked-example.hrry";
    let case = all_cases()
        .into_iter()
        .find(|c| c.path == path)
        .expect("the worked example is a corpus case");
    assert!(
        case.bytes.windows(61).any(|w| w == WORKED_EXAMPLE),
        "the file holds the spec's 61 descriptor bytes"
    );
    let judge = |rules: Rules| {
        let options = Options {
            judging: rules.into(),
            ..Options::default()
        };
        case.format.validate_bytes(&case.bytes, &options)
    };
    let spec = judge(Rules::Spec);
    assert_eq!(spec.verdict(), Verdict::Valid, "{:?}", spec.rule_ids());
    assert_eq!(spec.judging.rules, Rules::Spec);
    let hardened = judge(Rules::Hardened);
    assert_eq!(hardened.verdict(), Verdict::Refused);
    assert_eq!(hardened.rule_ids(), ["TD-BUF-014"]);
    assert_eq!(hardened.spec_violations(), 0);
    // The readers: the same switch.
    let refused = OpenOptions::new()
        .open_bytes(&case.bytes)
        .err()
        .expect("refused");
    assert_eq!(refused.rule().map(|r| r.id), Some("TD-BUF-014"));
    let text = refused.to_string();
    assert!(
        text.contains("hardening policy") && text.contains("not a spec violation"),
        "{text}"
    );
    let file = OpenOptions::new()
        .rules(Rules::Spec)
        .open_bytes(&case.bytes)
        .expect("opens under the spec policy");
    let t = file.tensor("worked_example").unwrap().unwrap();
    assert_eq!(t.shape(), [3, 4]);
    // A spec violation stays invalid under both policies.
    let mut broken = case.bytes.clone();
    broken[10] = 0xFF; // a reserved header byte
    for policy in [Rules::Spec, Rules::Hardened] {
        let options = Options {
            judging: policy.into(),
            ..Options::default()
        };
        let report = case.format.validate_bytes(&broken, &options);
        assert_eq!(report.verdict(), Verdict::Invalid, "{policy:?}");
    }
}

#[test]
fn a_newer_minor_version_may_use_what_1_0_reserves() {
    use hrry::validate::{Options, Rules, Verdict};
    let spec = Options {
        judging: Rules::Spec.into(),
        ..Options::default()
    };
    let bytes = |path: &str| {
        all_cases()
            .into_iter()
            .find(|c| c.path == path)
            .expect("case")
            .bytes
    };
    // The container: header and trailer fields of 1.1, valid, with a note.
    let report =
        hrry::Format::HrryFile.validate_bytes(&bytes("valid/container_minor_1.hrry"), &spec);
    assert_eq!(report.verdict(), Verdict::Valid, "{:?}", report.rule_ids());
    assert!(
        report.notes.iter().any(|n| n.contains("1.1 is newer")),
        "{:?}",
        report.notes
    );
    // The same bytes at minor 0 are rejected.
    let mut at_1_0 = bytes("valid/container_minor_1.hrry");
    at_1_0[9] = 0;
    let report = hrry::Format::HrryFile.validate_bytes(&at_1_0, &spec);
    assert_eq!(report.verdict(), Verdict::Invalid);
    for rule in ["HF-HDR-003", "HF-HDR-004", "HF-TRL-002"] {
        assert!(
            report.rule_ids().contains(&rule),
            "{rule}: {:?}",
            report.rule_ids()
        );
    }
    // Flag bits are not fields: versioning.md § Compatibility Matrix rejects an
    // unknown file or descriptor flag bit at every minor version.
    let mut flagged = bytes("valid/container_minor_1.hrry");
    flagged[12] |= 0x08; // file flag bit 3
    let report = hrry::Format::HrryFile.validate_bytes(&flagged, &spec);
    assert_eq!(report.rule_ids(), ["HF-HDR-005"]);
    let grown = bytes("valid/minor_version_growth.hrry");
    let at = hrry_testkit::corpus::patch::descriptor_offset(&grown, "grown") as usize;
    let mut flagged = grown.clone();
    flagged[at + 10] |= 0x80; // flags bit 7, in a 1.1 descriptor
    for minor in [1, 0] {
        flagged[at + 5] = minor;
        let report = hrry::Format::HrryFile.validate_bytes(&flagged, &spec);
        assert_eq!(report.rule_ids(), ["TD-HDR-005"], "version 1.{minor}");
    }
}

#[test]
fn every_case_gives_its_verdict() {
    let mut failures = Vec::new();
    for case in all_cases() {
        let report = validate(&case, Rules::Hardened);
        let got = report.rule_ids();
        let ok = match case.expect {
            Expect::Valid => got.is_empty(),
            Expect::Invalid(rule) => got == [rule],
        };
        if !ok {
            failures.push(format!(
                "{}: expected {:?}, got {:?}",
                case.path,
                case.expect,
                report
                    .violations
                    .iter()
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn valid_cases_are_valid_in_permissive_mode_too() {
    for case in all_cases()
        .into_iter()
        .filter(|c| c.expect == Expect::Valid)
    {
        let report = validate(&case, Rules::Permissive);
        assert!(report.is_valid(), "{}: {:?}", case.path, report.violations);
    }
}

#[test]
fn every_rule_has_an_invalid_case() {
    let covered: BTreeSet<&str> = all_cases()
        .iter()
        .filter_map(|c| match c.expect {
            Expect::Invalid(r) => Some(r),
            Expect::Valid => None,
        })
        .collect();
    let missing: Vec<&str> = all_rules()
        .map(|r| r.id)
        .filter(|id| !covered.contains(id))
        .collect();
    assert!(
        missing.is_empty(),
        "rules without a corpus case: {missing:?}"
    );
    for id in covered {
        assert!(
            hrry::validate::rule_by_id(id).is_some(),
            "corpus names unknown rule {id}"
        );
    }
}

#[test]
fn corpus_on_disk_is_current() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let cases = all_cases();
    for case in &cases {
        let on_disk = std::fs::read(dir.join(&case.path)).unwrap_or_else(|e| {
            panic!(
                "{}: {e}; run `cargo run -p hrry-tools --bin gen_corpus`",
                case.path
            )
        });
        assert!(
            on_disk == case.bytes,
            "{} is stale; run `cargo run -p hrry-tools --bin gen_corpus`",
            case.path
        );
    }
    let text = std::fs::read_to_string(dir.join("manifest.json")).expect("manifest");
    let on_disk: serde_json::Value = serde_json::from_str(&text).expect("manifest JSON");
    assert_eq!(on_disk, manifest(&cases), "manifest.json is stale");
    let mut listed = 0;
    for sub in hrry_testkit::corpus::FOLDERS {
        listed += std::fs::read_dir(dir.join(sub))
            .expect("corpus folder")
            .count();
    }
    assert_eq!(
        listed,
        cases.len(),
        "corpus/ holds files the generator no longer makes"
    );
}

/// Rule IDs are unique. (How many rules there are is pinned exactly by
/// tests/repository/docs.rs: the README states the count and it must equal the table's.)
#[test]
fn rule_ids_are_unique() {
    let ids: Vec<&str> = all_rules().map(|r| r.id).collect();
    let unique: BTreeSet<&str> = ids.iter().copied().collect();
    assert_eq!(ids.len(), unique.len(), "duplicate rule IDs");
}

/// Rules whose corpus file shows a permissive allowance of the spec: an unknown
/// scheme tag, an unrecognised extension layout, a private composition rule.
const PERMISSIVE_ALLOWANCES: &[&str] = &["QZ-TAG-003", "TD-LAY-003", "TD-CMP-001"];

#[test]
fn invalid_cases_in_permissive_mode_report_spec_rules_only() {
    let mut failures = Vec::new();
    for case in all_cases() {
        let Expect::Invalid(rule) = case.expect else {
            continue;
        };
        let level = hrry::validate::rule_by_id(rule).expect("known rule").level;
        let got = validate(&case, Rules::Permissive).rule_ids();
        let expected: &[&str] = if level == hrry::validate::Level::Hardening {
            &[]
        } else {
            &[rule]
        };
        let allowed = PERMISSIVE_ALLOWANCES.contains(&rule) && got.is_empty();
        if got != expected && !allowed {
            failures.push(format!("{}: expected {expected:?}, got {got:?}", case.path));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn case_paths_are_unique() {
    let cases = all_cases();
    let paths: BTreeSet<&str> = cases.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(paths.len(), cases.len(), "two corpus cases share a path");
}

/// The manifest's expected `sha256` of a row-major, unquantized tensor whose buffer
/// holds exactly its packed elements is the hash of that stored buffer: the bytes
/// the conformance protocol defines (docs/conformance-protocol.md), taken here
/// straight from the file rather than through the layout code.
#[test]
fn expected_hashes_of_row_major_tensors_are_their_stored_bytes() {
    use hrry::model::{element_count, ElementType};
    // FIPS 180-4's example digest, and the empty message's.
    assert_eq!(
        hrry::conformance::sha256_hex(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(
        hrry::conformance::sha256_hex(b""),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    let cases = all_cases();
    let m = manifest(&cases);
    let mut checked = 0;
    for (case, entry) in cases.iter().zip(m["files"].as_array().unwrap()) {
        let Some(expected) = entry["tensors"].as_array() else {
            continue;
        };
        let file = hrry::file::HrryFile::from_bytes(&case.bytes).expect("a valid file opens");
        for (t, want) in file.entries().zip(expected) {
            let t = file.tensor_at(t).unwrap();
            let d = &t.descriptor;
            let size = ElementType::from_tag(d.type_tag)
                .and_then(|ty| ty.buffer_size(element_count(&d.shape)?));
            let plain = d.layout_tag == hrry::schema::LAYOUT_ROW_MAJOR
                && d.quantization.is_none()
                && d.byte_offset == 0
                && size == Some(t.buffers[0].len() as u64);
            if plain {
                let got = hrry::conformance::sha256_hex(t.buffers[0]);
                assert_eq!(
                    want["sha256"],
                    got.as_str(),
                    "{} {}",
                    case.path,
                    want["name"]
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 40, "only {checked} tensors checked");
}

#[test]
fn the_spec_examples_are_valid_under_the_spec_policy() {
    use hrry::validate::{Options, Rules, Verdict};
    let examples: Vec<_> = all_cases()
        .into_iter()
        .chain(hrry_testkit::corpus::spec_examples::large_cases())
        .filter(|c| c.spec_example.is_some())
        .collect();
    let sources: BTreeSet<&str> = examples.iter().filter_map(|c| c.spec_example).collect();
    // metadata.md's worked example, the layout files' examples (row-major to
    // block-paged, composite) and per-channel-affine.md's worked example.
    assert!(sources.len() >= 14, "spec examples: {sources:?}");
    for case in &examples {
        let options = Options {
            judging: Rules::Spec.into(),
            ..Options::default()
        };
        let report = case.format.validate_bytes(&case.bytes, &options);
        assert_eq!(
            report.verdict(),
            Verdict::Valid,
            "{} ({}): {:?}",
            case.path,
            case.spec_example.unwrap_or_default(),
            report.rule_ids()
        );
        // The rules hrry's hardened policy adds are the only thing that may
        // refuse a spec example; the manifest records any (`level`, `rules`).
        let options = Options::default();
        let hardened = case.format.validate_bytes(&case.bytes, &options);
        assert_eq!(hardened.spec_violations(), 0, "{}", case.path);
    }
}

//! Every `HOLO-…` rule fires, alone, on its corpus file; every valid corpus file
//! validates clean and loads.

use hrry::holo::HoloLoader;
use hrry::validate::{rules::holo::RULES, Rules};
use hrry_testkit::corpus::{holo::cases, Expect};

/// A `.holo` archive held in memory, judged in `mode`.
fn validate(bytes: &[u8], mode: Rules) -> hrry::Report {
    let options = hrry::validate::Options {
        judging: mode.into(),
        ..Default::default()
    };
    hrry::Format::Holo.validate_bytes(bytes, &options)
}

#[test]
fn each_invalid_case_breaks_exactly_its_rule() {
    for case in cases() {
        let report = validate(&case.bytes, Rules::Hardened);
        match case.expect {
            Expect::Valid => {
                assert!(
                    report.is_valid(),
                    "{}: expected valid, got {:?}",
                    case.path,
                    report.violations
                );
                assert!(HoloLoader::from_bytes(&case.bytes).is_ok(), "{}", case.path);
            }
            Expect::Invalid(rule) => {
                assert_eq!(
                    report.rule_ids(),
                    vec![rule],
                    "{}: {:?}",
                    case.path,
                    report.violations
                );
                let err = HoloLoader::from_bytes(&case.bytes).expect_err(&case.path);
                assert_eq!(err.rule().map(|r| r.id), Some(rule), "{}: {err}", case.path);
            }
        }
    }
}

#[test]
fn every_holo_rule_has_a_corpus_case() {
    let all = cases();
    for rule in RULES {
        assert!(
            all.iter().any(|c| c.expect == Expect::Invalid(rule.id)),
            "no corpus case for {}",
            rule.id
        );
    }
}

#[test]
fn permissive_mode_drops_hardening_rules_only() {
    for case in cases() {
        let Expect::Invalid(rule) = case.expect else {
            continue;
        };
        let level = hrry::validate::rule_by_id(rule).unwrap().level;
        let report = validate(&case.bytes, Rules::Permissive);
        let expected: Vec<&str> = if level == hrry::validate::Level::Hardening {
            vec![]
        } else {
            vec![rule]
        };
        assert_eq!(report.rule_ids(), expected, "{}", case.path);
    }
}

#[test]
fn violation_offsets_point_at_the_field() {
    let find = |rule: &'static str| {
        cases()
            .into_iter()
            .find(|c| c.expect == Expect::Invalid(rule))
            .unwrap()
    };
    let v = |rule: &'static str| validate(&find(rule).bytes, Rules::Hardened).violations[0].offset;
    assert_eq!(v("HOLO-HDR-003"), 4);
    assert_eq!(v("HOLO-TBL-001"), 8);
    assert_eq!(v("HOLO-TBL-002"), 11);
    assert_eq!(v("HOLO-TBL-003"), 10);
    let ftr = find("HOLO-FTR-001");
    assert_eq!(v("HOLO-FTR-001"), ftr.bytes.len() as u64 - 32);
}

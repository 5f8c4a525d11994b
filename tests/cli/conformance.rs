//! `hrry conformance` end to end: hrry scores 100% as a testee (in process and as a
//! program speaking the protocol), and testees built to be wrong
//! (`hrry conformance-testee --fault ...`) are scored exactly: each wrong case gets
//! its status, every other case still passes, and the run finishes. Expected-failure
//! lists, the built-in corpus from a folder outside the repository, a tampered
//! corpus, the reports and `explain` are checked too.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const HRRY: &str = env!("CARGO_BIN_EXE_hrry");

/// A case whose file every fault test picks on (an invalid HRRYFILE).
const TARGET: &str = "invalid/HF-HDR-003.hrry";
/// A valid HRRYFILE with tensors, for the read and write faults.
const VALID_TARGET: &str = "valid/basic.hrry";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `hrry conformance --json ARGS` in `dir`; returns the exit code and document.
fn conformance_in(dir: &Path, args: &[&str]) -> (i32, Value) {
    let out = Command::new(HRRY)
        .arg("conformance")
        .arg("--json")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run hrry");
    let code = out.status.code().expect("exit code");
    let doc = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: exit {code}, stdout not JSON ({e}); stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (code, doc)
}

fn conformance(args: &[&str]) -> (i32, Value) {
    conformance_in(&repo(), args)
}

/// `-- hrry conformance-testee [--fault FAULT]`, with a short timeout.
fn faulty(fault: &str, extra: &[&str]) -> (i32, Value) {
    let mut args: Vec<&str> = vec!["--timeout", "2"];
    args.extend(extra);
    args.extend(["--", HRRY, "conformance-testee"]);
    if !fault.is_empty() {
        args.extend(["--fault", fault]);
    }
    conformance(&args)
}

/// The status of every case, by (path, tier).
fn statuses(doc: &Value) -> BTreeMap<(String, String), String> {
    doc["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|c| {
            (
                (
                    c["path"].as_str().unwrap().to_string(),
                    c["tier"].as_str().unwrap().to_string(),
                ),
                c["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn manifest() -> Value {
    let text = std::fs::read_to_string(repo().join("corpus/manifest.json")).expect("manifest");
    serde_json::from_str(&text).expect("manifest JSON")
}

/// Checks that every case has the status `expected` gives it (from its path, tier
/// and manifest entry), and that the reference run's cases are all there.
fn assert_scored(doc: &Value, expected: impl Fn(&str, &str, &Value) -> &'static str) {
    let m = manifest();
    let entries: BTreeMap<&str, &Value> = m["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap(), f))
        .collect();
    let (_, reference) = conformance(&["--self"]);
    let got = statuses(doc);
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        statuses(&reference).keys().collect::<Vec<_>>(),
        "the same cases as the reference run"
    );
    let mut wrong = Vec::new();
    for ((path, tier), status) in &got {
        let want = expected(path, tier, entries[path.as_str()]);
        if status != want {
            wrong.push(format!("{path} {tier}: {status}, expected {want}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} cases scored wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

fn schema_validator() -> jsonschema::Validator {
    let text = std::fs::read_to_string(repo().join("schema/conformance.schema.json")).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    jsonschema::draft202012::new(&schema).expect("a valid JSON Schema")
}

#[test]
fn hrry_in_process_passes_every_case_of_every_tier() {
    let (code, doc) = conformance(&["--self"]);
    assert_eq!(code, 0);
    let total = &doc["summary"]["total"];
    assert_eq!(total["pass"], total["cases"], "{total}");
    for tier in ["verdict", "rule", "read", "write"] {
        let n = doc["summary"]["tiers"][tier]["pass"].as_u64().unwrap();
        assert!(n > 0, "no {tier} case");
    }
    // Every manifest entry of the spec has a verdict case; every invalid one a rule
    // case; hrry's policy cases (hardening, limit) are not run by default.
    let m = manifest();
    let files = m["files"].as_array().unwrap();
    let policy = |f: &&Value| f["level"] == "hardening" || f["level"] == "limit";
    let spec = files.iter().filter(|f| !policy(f)).count();
    assert_eq!(doc["summary"]["tiers"]["verdict"]["cases"], spec);
    let invalid = files.iter().filter(|f| f["level"] == "spec").count();
    assert_eq!(doc["summary"]["tiers"]["rule"]["cases"], invalid);
    assert_eq!(doc["summary"]["tiers"]["policy"]["cases"], 0);
    let (code, doc) = conformance(&["--self", "--policy-tier"]);
    assert_eq!(code, 0);
    let n = files.iter().filter(policy).count();
    assert!(n > 25, "{n} policy cases");
    assert_eq!(doc["summary"]["tiers"]["policy"]["cases"], n);
    assert_eq!(doc["summary"]["tiers"]["policy"]["pass"], n);
    let errors: Vec<String> = schema_validator()
        .iter_errors(&doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let blake3 = blake3::hash(&std::fs::read(repo().join("corpus/manifest.json")).unwrap());
    assert_eq!(doc["corpus"]["manifest_blake3"], blake3.to_hex().as_str());
    assert_eq!(doc["corpus"]["source"], "built-in");
}

#[test]
fn the_schema_rejects_what_the_document_must_not_hold() {
    let (_, mut doc) = conformance(&["--self"]);
    doc["cases"][0]["status"] = "passed".into();
    assert!(!schema_validator().is_valid(&doc));
}

#[test]
fn hrry_as_a_testee_program_scores_as_in_process() {
    let (code, doc) = faulty("", &[]);
    assert_eq!(code, 0, "{}", doc["summary"]);
    assert_scored(&doc, |_, _, _| "pass");
    assert_eq!(doc["testee"]["name"], "hrry");
}

#[test]
fn a_testee_accepting_everything_fails_every_invalid_case() {
    let (code, doc) = faulty("accept-all", &[]);
    assert_eq!(code, 1);
    assert_scored(&doc, |_, tier, e| match tier {
        "verdict" | "rule" if e["valid"] == false => "fail",
        _ => "pass",
    });
}

#[test]
fn a_testee_rejecting_everything_fails_the_valid_files_and_every_rule() {
    let (code, doc) = faulty("reject-all", &[]);
    assert_eq!(code, 1);
    assert_scored(&doc, |_, tier, e| match tier {
        "verdict" if e["valid"] == true => "fail",
        // Rejected, but naming no rule: not a pass, and not a wrong rule either.
        "rule" => "skip",
        _ => "pass",
    });
    // The testee's own reason is kept in the case's detail.
    let case = doc["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["path"] == TARGET && c["tier"] == "rule")
        .unwrap();
    let detail = case["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("no rule given") && detail.contains("the testee said: HF-HDR-003"),
        "{detail}"
    );
}

#[test]
fn a_testee_following_the_spec_alone_passes_every_default_tier() {
    // The exact spec verdict, none of hrry's hardening rules: 100 % of the
    // default tiers, which score conformance.
    let (code, doc) = faulty("spec-only", &[]);
    assert_eq!(code, 0, "{}", doc["summary"]);
    assert_scored(&doc, |_, _, _| "pass");
    // The policy tier shows where it parts from hrry's policy: every hardening
    // case is accepted (a fail there); the limits bind under either policy.
    let (code, doc) = faulty("spec-only", &["--policy-tier"]);
    assert_eq!(code, 1);
    let mut hardening = 0;
    for ((path, tier), status) in statuses(&doc) {
        if tier != "policy" {
            assert_eq!(status, "pass", "{path} {tier}");
            continue;
        }
        let entry = manifest()["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == path.as_str())
            .cloned()
            .unwrap();
        let want = if entry["level"] == "hardening" {
            hardening += 1;
            "fail"
        } else {
            "pass"
        };
        assert_eq!(status, want, "{path}");
    }
    assert!(hardening >= 20, "{hardening} hardening cases");
}

#[test]
fn the_extracted_corpus_scores_as_the_built_in_one() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("corpus");
    let out = Command::new(HRRY)
        .args(["conformance", "extract"])
        .arg(&root)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(root.join("manifest.json")).unwrap(),
        std::fs::read(repo().join("corpus/manifest.json")).unwrap()
    );
    let (code, built_in) = conformance(&["--self", "--policy-tier"]);
    assert_eq!(code, 0);
    let (code, extracted) = conformance(&[
        "--self",
        "--policy-tier",
        "--corpus",
        root.to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    assert_eq!(built_in["summary"], extracted["summary"]);
    assert_eq!(statuses(&built_in), statuses(&extracted));
    // A second extract into the same folder is refused, not mixed in.
    let again = Command::new(HRRY)
        .args(["conformance", "extract"])
        .arg(&root)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2));
}

#[test]
fn formats_limit_a_oneshot_validator_to_the_files_it_reads() {
    let template = format!("{HRRY} validate {{path}}");
    let (code, doc) = conformance(&["--oneshot", &template, "--formats", "hrryfile"]);
    assert_eq!(code, 0, "{}", doc["summary"]);
    for c in doc["cases"].as_array().unwrap() {
        let fed = c["format"] == "hrryfile" && c["tier"] == "verdict";
        let want = if fed { "pass" } else { "skip" };
        assert_eq!(c["status"], want, "{c}");
        if c["format"] != "hrryfile" {
            assert!(c["detail"].as_str().unwrap().contains("--formats"), "{c}");
        }
    }
}

#[test]
fn a_rule_the_file_also_breaks_passes_the_rule_tier() {
    // A manifest naming another rule first, with hrry's as an alternative.
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&repo().join("corpus"), dir.path());
    let path = dir.path().join("manifest.json");
    let mut m: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    for f in m["files"].as_array_mut().unwrap() {
        if f["path"] == TARGET {
            f["rule"] = "HF-HDR-999".into();
            f["rules"] = serde_json::json!([]);
            f["rule_alternatives"] = serde_json::json!(["HF-HDR-003"]);
        }
    }
    std::fs::write(&path, serde_json::to_vec(&m).unwrap()).unwrap();
    let corpus = dir.path().to_str().unwrap();
    let (code, doc) = conformance(&["--self", "--corpus", corpus]);
    assert_eq!(code, 0, "{}", doc["summary"]);
    assert_eq!(
        statuses(&doc)[&(TARGET.to_string(), "rule".to_string())],
        "pass"
    );
    // Without the alternative, the same answer is a wrong rule.
    for f in m["files"].as_array_mut().unwrap() {
        if f["path"] == TARGET {
            f["rule_alternatives"] = serde_json::json!([]);
        }
    }
    std::fs::write(&path, serde_json::to_vec(&m).unwrap()).unwrap();
    let (code, doc) = conformance(&["--self", "--corpus", corpus]);
    assert_eq!(code, 1);
    assert_eq!(
        statuses(&doc)[&(TARGET.to_string(), "rule".to_string())],
        "fail"
    );
}

#[test]
fn read_hashes_off_by_one_bit_fail_exactly_the_hashed_files() {
    let (code, doc) = faulty("flip-hash", &[]);
    assert_eq!(code, 1);
    assert_scored(&doc, |_, tier, e| {
        let hashed = e["tensors"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t.get("sha256").is_some()));
        if tier == "read" && hashed {
            "fail"
        } else {
            "pass"
        }
    });
}

/// Statuses for a fault hitting the one validate request of [`TARGET`].
fn only_target(status: &'static str) -> impl Fn(&str, &str, &Value) -> &'static str {
    move |path, _, _| if path == TARGET { status } else { "pass" }
}

#[test]
fn a_testee_crashing_on_one_file_is_restarted() {
    let (code, doc) = faulty(&format!("crash-on={TARGET}"), &[]);
    assert_eq!(code, 1);
    assert_scored(&doc, only_target("crash"));
}

#[test]
fn a_testee_hanging_on_one_file_times_out_and_the_run_goes_on() {
    let (code, doc) = faulty(&format!("hang-on={TARGET}"), &[]);
    assert_eq!(code, 1);
    assert_scored(&doc, only_target("timeout"));
}

#[test]
fn a_testee_printing_garbage_is_an_error() {
    let (code, doc) = faulty(&format!("garbage-on={TARGET}"), &[]);
    assert_eq!(code, 1);
    assert_scored(&doc, only_target("error"));
    let detail = doc["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["path"] == TARGET)
        .unwrap()["detail"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(detail.contains("not JSON"), "{detail}");
}

#[test]
fn a_testee_answering_with_the_wrong_id_is_an_error() {
    let (code, doc) = faulty(&format!("wrong-id-on={VALID_TARGET}"), &[]);
    assert_eq!(code, 1);
    // The file's validate and read requests get the wrong id (its write request
    // names only the output path).
    assert_scored(&doc, |path, tier, _| match (path == VALID_TARGET, tier) {
        (true, "verdict" | "read") => "error",
        _ => "pass",
    });
}

#[test]
fn a_listed_failure_is_expected_and_a_listed_pass_is_unexpected() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("known.txt");
    std::fs::write(&list, format!("# known\n{TARGET}\n")).unwrap();
    let list_arg = list.to_str().unwrap();
    // Listed and failing: expected, and the run passes.
    let (code, doc) = faulty(
        &format!("crash-on={TARGET}"),
        &["--expected-failures", list_arg],
    );
    assert_eq!(code, 0, "{}", doc["summary"]);
    assert_scored(&doc, only_target("expected-failure"));
    // Listed and passing now: unexpected, and the run fails.
    let (code, doc) = faulty("", &["--expected-failures", list_arg]);
    assert_eq!(code, 1);
    assert_scored(&doc, only_target("unexpected-pass"));
    // One tier listed: only that case is affected; a line naming no case is stale.
    std::fs::write(&list, format!("{TARGET} rule\ninvalid/NO-SUCH-001.hrry\n")).unwrap();
    let (code, doc) = faulty(
        &format!("crash-on={TARGET}"),
        &["--expected-failures", list_arg],
    );
    assert_eq!(code, 1);
    assert_scored(&doc, |path, tier, _| match (path == TARGET, tier) {
        (true, "rule") => "expected-failure",
        (true, _) => "crash",
        _ => "pass",
    });
    assert_eq!(
        doc["summary"]["stale_expected_failures"],
        serde_json::json!(["invalid/NO-SUCH-001.hrry"])
    );
}

#[test]
fn update_rewrites_the_list_to_the_failures_of_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("known.txt");
    let list_arg = list.to_str().unwrap();
    let (code, _) = faulty(
        &format!("crash-on={TARGET}"),
        &[
            "--expected-failures",
            list_arg,
            "--update-expected-failures",
        ],
    );
    assert_eq!(code, 0);
    let text = std::fs::read_to_string(&list).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(
        lines,
        [format!("{TARGET} verdict"), format!("{TARGET} rule")]
    );
    // The rewritten list makes the same failures expected.
    let (code, doc) = faulty(
        &format!("crash-on={TARGET}"),
        &["--expected-failures", list_arg],
    );
    assert_eq!(code, 0);
    assert_scored(&doc, only_target("expected-failure"));
}

#[test]
fn a_malformed_list_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("known.txt");
    std::fs::write(&list, "invalid/HF-HDR-003.hrry verdicts\n").unwrap();
    let out = Command::new(HRRY)
        .args(["conformance", "--self", "--expected-failures"])
        .arg(&list)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(":1: unknown tier"));
}

#[test]
fn a_oneshot_validator_is_scored_on_verdicts_only() {
    let template = format!("{HRRY} validate {{path}}");
    let (code, doc) = conformance(&["--oneshot", &template]);
    // hrry validate knows every format by its file name, so every verdict passes;
    // it names no rules, and offers no read or write.
    assert_eq!(code, 0, "{}", doc["summary"]);
    assert_scored(
        &doc,
        |_, tier, _| if tier == "verdict" { "pass" } else { "skip" },
    );
    // A validator that ends otherwise than 0 or 1 crashed (hrry exits 2 on a usage
    // error).
    let (code, doc) = conformance(&[
        "--oneshot",
        &format!("{HRRY} validate --no-such-flag {{path}}"),
    ]);
    assert_eq!(code, 1);
    assert_scored(
        &doc,
        |_, tier, _| if tier == "verdict" { "crash" } else { "skip" },
    );
}

#[test]
fn the_built_in_corpus_runs_from_a_folder_outside_the_repository() {
    let dir = tempfile::tempdir().unwrap();
    let (code, doc) = conformance_in(dir.path(), &["--", HRRY, "conformance-testee"]);
    assert_eq!(code, 0);
    assert_eq!(
        doc["summary"]["total"]["pass"],
        doc["summary"]["total"]["cases"]
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing left behind"
    );
}

#[test]
fn a_corpus_folder_is_checked_file_by_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("corpus");
    copy_tree(&repo().join("corpus"), &root);
    // A file altered after the manifest was made (as by a line-ending filter).
    let altered = root.join(TARGET);
    let mut bytes = std::fs::read(&altered).unwrap();
    bytes[10] ^= 0x80;
    std::fs::write(&altered, bytes).unwrap();
    let (code, doc) = conformance(&["--self", "--corpus", root.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_scored(&doc, only_target("error"));
    let case = doc["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["path"] == TARGET)
        .unwrap();
    assert!(
        case["detail"].as_str().unwrap().contains("BLAKE3"),
        "{case}"
    );
    // A manifest entry without expected tensors gets hrry's own reading; a null rule
    // makes the rule tier skip; an alternative rule is as right as the rule; a rule
    // hrry does not report fails.
    const WRONG_RULE: &str = "invalid/HF-HDR-001.hrry";
    let mut m = manifest();
    for f in m["files"].as_array_mut().unwrap() {
        f.as_object_mut().unwrap().remove("tensors");
        f.as_object_mut().unwrap().remove("rules");
        f.as_object_mut().unwrap().remove("rule_alternatives");
        f["rule"] = match f["path"].as_str().unwrap() {
            TARGET => "HF-HDR-001".into(),
            WRONG_RULE => "HF-HDR-002".into(),
            _ => Value::Null,
        };
        if f["path"] == TARGET {
            f["rule_alternatives"] = serde_json::json!(["HF-HDR-003"]);
        }
    }
    std::fs::write(root.join("manifest.json"), m.to_string()).unwrap();
    std::fs::copy(repo().join("corpus").join(TARGET), root.join(TARGET)).unwrap();
    let (code, doc) = conformance(&["--self", "--corpus", root.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_scored(&doc, |path, tier, _| match (path, tier) {
        (TARGET, _) => "pass",
        (WRONG_RULE, "rule") => "fail",
        (_, "rule") => "skip",
        _ => "pass",
    });
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn markdown_and_junit_reports_list_the_failures() {
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("summary.md");
    let junit = dir.path().join("junit.xml");
    let (code, doc) = faulty(
        &format!("crash-on={TARGET}"),
        &[
            "--markdown",
            md.to_str().unwrap(),
            "--junit",
            junit.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 1);
    let md = std::fs::read_to_string(md).unwrap();
    assert!(md.contains("Result: **fail**"), "{md}");
    assert!(
        md.contains(&format!("| `{TARGET}` | verdict | crash |")),
        "{md}"
    );
    let xml = std::fs::read_to_string(junit).unwrap();
    let cases = doc["cases"].as_array().unwrap().len();
    assert_eq!(xml.matches("<testcase ").count(), cases);
    assert_eq!(
        xml.matches("<error message=\"crash").count(),
        2,
        "verdict and rule"
    );
    assert!(xml.contains("errors=\"2\""), "{xml}");
}

#[test]
fn a_testee_that_cannot_start_or_no_testee_is_a_usage_error() {
    for args in [
        vec!["conformance"],
        vec!["conformance", "--", "/nonexistent/testee"],
        vec!["conformance", "--timeout", "0", "--self"],
    ] {
        let out = Command::new(HRRY).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn explain_names_the_rule_the_base_file_and_the_field_changed() {
    let out = Command::new(HRRY)
        .args(["conformance", "explain", TARGET])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let rule = hrry::validate::rule_by_id("HF-HDR-003").unwrap();
    assert!(
        text.contains(rule.summary) && text.contains(rule.spec),
        "{text}"
    );
    assert!(text.contains("nearest valid file: valid/"), "{text}");
    assert!(text.contains("offset 0xa..0xb: 00 -> "), "{text}");
    assert!(text.contains("[header: reserved]"), "{text}");
}

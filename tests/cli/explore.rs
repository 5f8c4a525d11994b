//! `hrry conformance explore` end to end: against `hrry conformance-testee` with a
//! planted fault a fixed seed and a bounded number of cases find the fault, shrink
//! it to a file near the size of the smallest valid corpus file, and keep it as a
//! corpus folder `hrry conformance --corpus` runs again; the testee without faults
//! yields no disagreement in the same budget; the same seed gives the same run.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const HRRY: &str = env!("CARGO_BIN_EXE_hrry");

/// The seed and the cases each run explores: enough to reach each planted fault
/// over the corpus as it is (the descriptor-flag faults first show at case 765).
/// A corpus with more valid files spreads the edits thinner, and may need another
/// seed or more cases.
const SEED: &str = "4";
const CASES: &str = "3000";

/// How much larger than the smallest valid HRRYFILE holding a tensor a shrunk case
/// may be.
const SLACK: u64 = 300;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `hrry conformance explore --json --seed SEED --cases CASES --formats hrryfile
/// EXTRA -- hrry conformance-testee [--fault FAULT]`; returns the exit code and the
/// document.
fn explore(fault: &str, extra: &[&str]) -> (i32, Value) {
    let mut cmd = Command::new(HRRY);
    cmd.args([
        "conformance",
        "explore",
        "--json",
        "--seed",
        SEED,
        "--cases",
        CASES,
    ])
    .args(["--formats", "hrryfile"])
    .args(extra);
    if !extra.contains(&"--timeout") {
        cmd.args(["--timeout", "5"]);
    }
    cmd.args(["--", HRRY, "conformance-testee"]);
    if !fault.is_empty() {
        cmd.args(["--fault", fault]);
    }
    let out = cmd.output().expect("run hrry");
    let code = out.status.code().expect("exit code");
    let doc = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{fault}: exit {code}, stdout not JSON ({e}); stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (code, doc)
}

/// The size of the smallest valid HRRYFILE of the corpus that holds a tensor.
fn smallest_valid_with_a_tensor() -> u64 {
    let text = std::fs::read(repo().join("corpus/manifest.json")).expect("the manifest");
    let manifest: Value = serde_json::from_slice(&text).expect("JSON");
    manifest["files"]
        .as_array()
        .expect("files")
        .iter()
        .filter(|f| f["valid"] == true && f["format"] == "hrryfile")
        .filter(|f| f["tensors"].as_array().is_some_and(|t| !t.is_empty()))
        .filter_map(|f| f["size"].as_u64())
        .min()
        .expect("a valid HRRYFILE with a tensor")
}

/// Explores against `fault`; checks that a disagreement of `kind` breaking
/// `rules` is found, shrunk small, and kept in a folder that
/// `hrry conformance --corpus` fails with the faulty testee and passes with the
/// right one. Returns the disagreement.
fn finds(fault: &str, kind: &str, rules: &[&str]) -> Value {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("found");
    let out_arg = out.to_str().expect("UTF-8 path");
    let (code, doc) = explore(fault, &["--out", out_arg]);
    assert_eq!(code, 1, "{fault}: {doc:#}");
    let found = doc["disagreements"].as_array().expect("disagreements");
    let d = found
        .iter()
        .find(|d| d["kind"] == kind && d["rules"] == serde_json::json!(rules))
        .unwrap_or_else(|| panic!("{fault}: no {kind} {rules:?} in {doc:#}"));
    let size = d["size"].as_u64().expect("size");
    let bound = smallest_valid_with_a_tensor() + SLACK;
    assert!(
        size <= bound,
        "{fault}: shrunk to {size} bytes, over {bound}"
    );
    assert!(size <= d["original_size"].as_u64().expect("original size"));
    let file = out.join(d["path"].as_str().expect("path"));
    assert_eq!(std::fs::metadata(&file).expect("the kept file").len(), size);
    kept_as_in_the_corpus(&out, d);
    rerun(&out, fault, 1);
    if kind != "crash" {
        // The reference agrees with its own verdict on the kept case.
        rerun(&out, "", 0);
    }
    d.clone()
}

/// The manifest entry of the kept disagreement `d` in `dir` carries, as the
/// bundled corpus's entries do, the verdict's `level` and `rules`, and the account
/// `hrry conformance explain` gives of the kept file.
fn kept_as_in_the_corpus(dir: &Path, d: &Value) {
    let text = std::fs::read(dir.join("manifest.json")).expect("the manifest");
    let manifest: Value = serde_json::from_slice(&text).expect("JSON");
    let entry = manifest["files"]
        .as_array()
        .expect("files")
        .iter()
        .find(|f| f["path"] == d["path"])
        .unwrap_or_else(|| panic!("no entry for {} in {manifest:#}", d["path"]));
    let mut rules: Vec<&str> = d["reference"]["violations"]
        .as_array()
        .expect("violations")
        .iter()
        .map(|v| v["rule"].as_str().expect("rule"))
        .collect();
    rules.sort_unstable();
    rules.dedup();
    assert_eq!(entry["rules"], serde_json::json!(rules), "{entry:#}");
    let valid = d["reference"]["valid"] == true;
    assert_eq!(entry["valid"], valid);
    let level = if valid { Value::Null } else { "spec".into() };
    assert_eq!(entry["level"], level, "{entry:#}");
    let file = dir.join(d["path"].as_str().expect("path"));
    let out = Command::new(HRRY)
        .args(["conformance", "explain"])
        .arg(&file)
        .output()
        .expect("run hrry");
    assert_eq!(out.status.code(), Some(0));
    let explained = String::from_utf8(out.stdout).expect("UTF-8");
    assert_eq!(entry["explain"].as_str(), Some(explained.as_str()));
    for rule in rules {
        assert!(explained.contains(rule), "{explained}");
    }
}

/// `hrry conformance --corpus DIR -- hrry conformance-testee [--fault FAULT]`
/// exits `want`.
fn rerun(dir: &Path, fault: &str, want: i32) {
    let mut cmd = Command::new(HRRY);
    cmd.args(["conformance", "--timeout", "5", "--corpus"])
        .arg(dir)
        .args(["--", HRRY, "conformance-testee"]);
    if !fault.is_empty() {
        cmd.args(["--fault", fault]);
    }
    let out = cmd.output().expect("run hrry");
    assert_eq!(
        out.status.code(),
        Some(want),
        "rerun with {fault:?}: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn finds_an_index_crc_not_checked() {
    finds("ignore-rule=HF-CRC-001", "accepts-invalid", &["HF-CRC-001"]);
}

#[test]
fn finds_a_reserved_descriptor_flag_bit_accepted() {
    finds("ignore-rule=TD-HDR-005", "accepts-invalid", &["TD-HDR-005"]);
}

#[test]
fn finds_a_crash_on_a_huge_index_count() {
    let dir = tempfile::tempdir().expect("temp dir");
    let junit = dir.path().join("explore.xml");
    let markdown = dir.path().join("explore.md");
    let (code, _) = explore(
        "crash-on-huge-index",
        &[
            "--junit",
            junit.to_str().expect("UTF-8"),
            "--markdown",
            markdown.to_str().expect("UTF-8"),
        ],
    );
    assert_eq!(code, 1);
    let xml = std::fs::read_to_string(&junit).expect("JUnit written");
    assert!(xml.contains("crash"), "{xml}");
    let md = std::fs::read_to_string(&markdown).expect("Markdown written");
    assert!(md.contains("hrryfile/001-crash.hrry"), "{md}");
    let d = finds("crash-on-huge-index", "crash", &[]);
    assert!(
        d["testee"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("exited")),
        "{d:#}"
    );
}

#[test]
fn finds_descriptor_flags_read_as_16_bits() {
    // The corpus's TD-HDR-005 case sets bit 7, which this testee sees.
    let d = finds("flags-as-u16", "accepts-invalid", &["TD-HDR-005"]);
    let (code, _) = corpus_run("flags-as-u16");
    assert_eq!(code, Some(0), "the static corpus misses it: {d:#}");
}

/// `hrry conformance` (the built-in corpus) against `hrry conformance-testee
/// --fault FAULT`: its exit code.
fn corpus_run(fault: &str) -> (Option<i32>, String) {
    let out = Command::new(HRRY)
        .args([
            "conformance",
            "--timeout",
            "5",
            "--",
            HRRY,
            "conformance-testee",
        ])
        .args(["--fault", fault])
        .output()
        .expect("run hrry");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn finds_a_crash_on_a_rank0_tensor_with_statistics_in_a_model_the_writer_made() {
    // No valid corpus file holds such a tensor: the random models do.
    let (code, _) = corpus_run("crash-on-rank0-statistics");
    assert_eq!(code, Some(0), "the static corpus misses it");
    let d = finds("crash-on-rank0-statistics", "crash", &[]);
    assert!(
        d["base"].as_str().is_some_and(|b| b.starts_with("model-")),
        "{d:#}"
    );
    // Shrunk by re-writing the model: tensors or KV entries dropped.
    assert!(
        d["rewrites"].as_array().is_some_and(|r| !r.is_empty()),
        "{d:#}"
    );
    let (code, doc) = explore("crash-on-rank0-statistics", &["--models", "0"]);
    assert_eq!(code, 0, "without models: {doc:#}");
}

#[test]
fn a_hanging_testee_is_reported_as_a_hang_and_the_run_goes_on() {
    let (code, doc) = explore("hang-on-rank0-statistics", &["--timeout", "1"]);
    assert_eq!(code, 1, "{doc:#}");
    assert_eq!(doc["cases"].to_string(), CASES, "every case was asked");
    let hangs: Vec<&Value> = doc["disagreements"]
        .as_array()
        .expect("disagreements")
        .iter()
        .filter(|d| d["kind"] == "hang")
        .collect();
    assert_eq!(hangs.len(), 1, "{doc:#}");
    // The testee was restarted after each hang and hung again on later cases.
    assert!(hangs[0]["cases_seen"].as_u64() > Some(1), "{doc:#}");
    assert!(hangs[0]["testee"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("timeout")));
}

#[test]
fn jobs_find_the_same_disagreements_in_the_same_order() {
    let fault = "crash-on-rank0-statistics";
    let (_, one) = explore(fault, &[]);
    let (_, three) = explore(fault, &["--jobs", "3"]);
    assert_eq!(strip_ids(&one), strip_ids(&three));
    assert_eq!(one["counts"], three["counts"]);
    assert!(!strip_ids(&one).as_array().expect("list").is_empty());
}

#[test]
fn finds_a_zero_point_ignored() {
    finds("ignore-zero-point", "reads-differently", &[]);
}

#[test]
fn finds_content_read_wrong() {
    finds("flip-hash", "reads-differently", &[]);
}

#[test]
fn a_right_testee_shows_no_disagreement_and_the_same_seed_the_same_run() {
    let (code, first) = explore("", &[]);
    assert_eq!(code, 0, "{first:#}");
    assert_eq!(first["disagreements"], serde_json::json!([]));
    assert_eq!(first["cases"].to_string(), CASES);
    let counts = &first["counts"];
    for key in ["valid", "invalid"] {
        assert!(counts[key].as_u64().unwrap_or(0) > 50, "{key}: {counts}");
    }
    let (_, second) = explore("", &[]);
    assert_eq!(first["counts"], second["counts"]);
}

#[test]
fn the_same_seed_finds_the_same_case() {
    let fault = "ignore-rule=HF-CRC-001";
    let (_, a) = explore(fault, &[]);
    let (_, b) = explore(fault, &[]);
    assert_eq!(strip_ids(&a), strip_ids(&b));
    assert!(!strip_ids(&a).as_array().expect("list").is_empty());
}

/// The disagreements of a run, without the request ids of the testee's answers
/// (they depend on nothing but the run; kept out of the comparison anyway).
fn strip_ids(doc: &Value) -> Value {
    let mut d = doc["disagreements"].clone();
    for x in d.as_array_mut().into_iter().flatten() {
        x["testee"]["answer"]["id"] = Value::Null;
    }
    d
}

#[test]
fn explore_needs_a_testee_and_known_formats() {
    let out = Command::new(HRRY)
        .args(["conformance", "explore", "--cases", "1"])
        .output()
        .expect("run hrry");
    assert_eq!(out.status.code(), Some(2));
    let out = Command::new(HRRY)
        .args(["conformance", "explore", "--cases", "1", "--formats", "tar"])
        .args(["--", HRRY, "conformance-testee"])
        .output()
        .expect("run hrry");
    assert_eq!(out.status.code(), Some(2));
}

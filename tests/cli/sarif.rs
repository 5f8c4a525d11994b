//! `hrry validate --sarif`: one SARIF 2.1.0 run over a batch, whose findings are
//! exactly those of `--json` (rule, level, byte offset, message, file). The log is
//! checked against the official SARIF schema by tests/sarif/run.sh.

use std::process::Command;

use serde_json::Value;

/// Runs `hrry` from the repository root; its exit code and standard output as JSON.
fn hrry_json(args: &[&str]) -> (i32, Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_hrry"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("hrry runs");
    let text = String::from_utf8(out.stdout).expect("utf-8 stdout");
    let doc = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    (out.status.code().expect("exit code"), doc)
}

/// One finding: file, rule, level name, byte offset, message.
type Finding = (String, String, String, u64, String);

/// The findings of a `--json` document, in file order.
fn json_findings(doc: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    for file in doc["files"].as_array().expect("files") {
        for v in file["violations"].as_array().into_iter().flatten() {
            out.push((
                file["file"].as_str().unwrap().to_string(),
                v["rule"].as_str().unwrap().to_string(),
                v["level"].as_str().unwrap().to_string(),
                v["offset"].as_u64().unwrap(),
                v["message"].as_str().unwrap().to_string(),
            ));
        }
    }
    out
}

/// The findings of a SARIF log's single run, naming files by their artifact URI.
fn sarif_findings(log: &Value) -> Vec<Finding> {
    let runs = log["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 1, "one run for the whole batch");
    let run = &runs[0];
    let rules = run["tool"]["driver"]["rules"].as_array().expect("rules");
    let artifacts = run["artifacts"].as_array().expect("artifacts");
    let mut out = Vec::new();
    for r in run["results"].as_array().expect("results") {
        let rule = r["ruleId"].as_str().unwrap();
        let index = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index]["id"], rule, "ruleIndex points at the rule");
        let level = r["properties"]["level"].as_str().unwrap();
        let expected = if level == "spec" { "error" } else { "warning" };
        assert_eq!(r["level"], expected, "{rule}: SARIF level of {level}");
        let location = &r["locations"][0]["physicalLocation"];
        let artifact = location["artifactLocation"]["index"].as_u64().unwrap() as usize;
        assert_eq!(
            artifacts[artifact]["location"]["uri"],
            location["artifactLocation"]["uri"]
        );
        out.push((
            location["artifactLocation"]["uri"]
                .as_str()
                .unwrap()
                .to_string(),
            rule.to_string(),
            level.to_string(),
            location["region"]["byteOffset"].as_u64().unwrap(),
            r["message"]["text"].as_str().unwrap().to_string(),
        ));
    }
    out
}

#[test]
fn a_batch_s_sarif_findings_are_its_json_findings() {
    // Every format of the corpus (HRRYFILEs, .holo archives, streams, messages),
    // checked in parallel, in one run.
    let (json_code, doc) = hrry_json(&["validate", "--json", "-r", "corpus/"]);
    let (sarif_code, log) = hrry_json(&["validate", "--sarif", "-r", "--jobs", "4", "corpus/"]);
    assert_eq!(json_code, sarif_code, "the same exit code");
    assert_eq!(log["version"], "2.1.0");
    let expected = json_findings(&doc);
    assert!(expected.len() > 300, "only {} findings", expected.len());
    assert_eq!(sarif_findings(&log), expected);
    let files: Vec<&Value> = doc["files"].as_array().unwrap().iter().collect();
    let artifacts = log["runs"][0]["artifacts"].as_array().unwrap();
    assert_eq!(artifacts.len(), files.len(), "one artifact per file");
    for format in ["hrry", "holo", "hrrys", "hrrymsg"] {
        assert!(
            artifacts
                .iter()
                .any(|a| a["location"]["uri"].as_str().unwrap().ends_with(format)),
            "no .{format} artifact"
        );
    }
}

#[test]
fn every_rule_is_described_with_a_link_to_its_entry() {
    let (code, log) = hrry_json(&["validate", "--sarif", "corpus/valid/basic.hrry"]);
    assert_eq!(code, 0);
    let run = &log["runs"][0];
    assert_eq!(run["results"], serde_json::json!([]));
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/conformance.md"))
        .unwrap();
    assert_eq!(rules.len(), hrry::validate::all_rules().count());
    for r in rules {
        let id = r["id"].as_str().unwrap();
        let uri = r["helpUri"].as_str().unwrap();
        let (page, anchor) = uri.split_once('#').expect("an anchor");
        assert!(page.ends_with("docs/conformance.md"), "{uri}");
        assert_eq!(anchor, id.to_ascii_lowercase());
        assert!(doc.contains(&format!("\n### {id}\n")), "no entry for {id}");
        assert!(!r["shortDescription"]["text"].as_str().unwrap().is_empty());
        let level = hrry::validate::rule_by_id(id).unwrap().level;
        let expected = match level {
            hrry::validate::Level::Spec => "error",
            _ => "warning",
        };
        assert_eq!(r["defaultConfiguration"]["level"], expected, "{id}");
    }
}

#[test]
fn an_unreadable_input_fails_the_invocation_not_a_result() {
    let (code, log) = hrry_json(&[
        "validate",
        "--sarif",
        "corpus/invalid/HF-CRC-001.hrry",
        "missing.hrry",
    ]);
    assert_eq!(code, 2);
    let run = &log["runs"][0];
    assert_eq!(run["results"][0]["ruleId"], "HF-CRC-001");
    let invocation = &run["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false);
    let note = &invocation["toolExecutionNotifications"][0];
    assert_eq!(
        note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "missing.hrry"
    );
    assert!(note["message"]["text"]
        .as_str()
        .unwrap()
        .contains("missing.hrry"));
}

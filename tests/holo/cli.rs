//! `hrry inspect`, `hrry validate` and `hrry holo extract` on `.holo` archives.

use std::process::Command;

fn hrry(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_hrry"))
        .args(args)
        .output()
        .expect("run hrry");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn sample_file(dir: &std::path::Path) -> String {
    let path = dir.join("sample.holo");
    hrry_testkit::corpus::holo::sample_writer()
        .write_to_path(&path)
        .unwrap();
    path.display().to_string()
}

#[test]
fn inspect_json_is_the_library_summary() {
    let dir = tempfile::tempdir().unwrap();
    let file = sample_file(dir.path());
    let (code, out, _) = hrry(&["inspect", "--json", &file]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let bytes = std::fs::read(&file).unwrap();
    assert_eq!(v, hrry::holo::inspect_json(&bytes).unwrap());
    assert_eq!(v["format"], "holo");
    let (code, out, _) = hrry(&["inspect", &file]);
    assert_eq!(code, 0);
    assert!(
        out.contains("Extension") && out.contains("input_ids"),
        "{out}"
    );
}

#[test]
fn validate_reports_holo_rules() {
    let dir = tempfile::tempdir().unwrap();
    let file = sample_file(dir.path());
    let (code, out, _) = hrry(&["validate", "--json", &file]);
    assert_eq!(code, 0, "{out}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let v = &doc["files"][0];
    assert_eq!(v["format"], "holo");
    assert_eq!(v["valid"], true);

    let mut bytes = std::fs::read(&file).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    let bad = dir.path().join("bad.holo");
    std::fs::write(&bad, &bytes).unwrap();
    let (code, out, _) = hrry(&["validate", "--json", bad.to_str().unwrap()]);
    assert_eq!(code, 1);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["files"][0]["violations"][0]["rule"], "HOLO-FTR-001");
    let (code, _, err) = hrry(&["inspect", bad.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(err.contains("HOLO-FTR-001"), "{err}");
}

#[test]
fn extract_writes_an_extension_or_a_section() {
    let dir = tempfile::tempdir().unwrap();
    let file = sample_file(dir.path());
    let out = dir.path().join("tok.json");
    let out_s = out.to_str().unwrap();
    let (code, _, err) = hrry(&[
        "holo",
        "extract",
        &file,
        "--extension",
        "tokenizer",
        "-o",
        out_s,
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(&out).unwrap(), b"{\"vocab\":[]}");
    let (code, _, _) = hrry(&[
        "holo",
        "extract",
        &file,
        "--section",
        "Metadata",
        "-o",
        out_s,
    ]);
    assert_eq!(code, 0);
    assert_eq!(std::fs::read(&out).unwrap(), b"{\"producer\":\"hrry\"}");
    let (code, stdout, _) = hrry(&[
        "holo",
        "extract",
        &file,
        "--section",
        "14",
        "--index",
        "1",
        "-o",
        "-",
    ]);
    assert_eq!(code, 0);
    assert_eq!(stdout, "\u{11}\0generation_config{}");
    let (code, _, err) = hrry(&["holo", "extract", &file, "--extension", "nope", "-o", out_s]);
    assert_eq!(code, 2);
    assert!(err.contains("tokenizer"), "{err}");
    let (code, _, _) = hrry(&["holo", "extract", &file, "--section", "Bogus", "-o", out_s]);
    assert_eq!(code, 2);
}

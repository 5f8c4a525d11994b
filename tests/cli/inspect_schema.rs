//! `hrry inspect --json` matches `schema/inspect.schema.json` for every corpus file
//! (valid and invalid, HRRYFILE and .holo), with and without --permissive, and the
//! schema is strict enough to reject what the output must not contain.

use std::path::Path;
use std::process::Command;

fn inspect(args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_hrry"))
        .arg("inspect")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("hrry runs");
    let code = out.status.code().expect("exit code");
    assert!((0..=2).contains(&code), "{args:?}: exit {code}");
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: stdout is not JSON ({e})"))
}

fn validator() -> jsonschema::Validator {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/inspect.schema.json"),
    )
    .expect("schema file");
    let schema: serde_json::Value = serde_json::from_str(&text).expect("schema is JSON");
    jsonschema::draft202012::new(&schema).expect("a valid JSON Schema")
}

fn corpus_files() -> Vec<String> {
    let mut files = Vec::new();
    for dir in ["corpus/valid", "corpus/invalid"] {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
        for entry in std::fs::read_dir(root).expect("corpus") {
            let name = entry.expect("entry").file_name();
            files.push(format!("{dir}/{}", name.to_string_lossy()));
        }
    }
    files.sort();
    files
}

#[test]
fn every_corpus_file_matches_the_schema() {
    let schema = validator();
    let files = corpus_files();
    assert!(files.len() > 200, "corpus not found");
    let (mut opened, mut errors) = (0, 0);
    for file in &files {
        for permissive in [false, true] {
            let mut args = vec!["--json", file.as_str()];
            if permissive {
                args.insert(0, "--permissive");
            }
            let v = inspect(&args);
            let problems: Vec<String> = schema
                .iter_errors(&v)
                .map(|e| format!("{} at {}", e, e.instance_path()))
                .take(5)
                .collect();
            assert!(problems.is_empty(), "{args:?}: {problems:#?}");
            if v.get("error").is_some() {
                errors += 1;
            } else {
                opened += 1;
            }
        }
    }
    // Both branches of the schema were exercised.
    assert!(
        opened > 100 && errors > 10,
        "{opened} opened, {errors} errors"
    );
}

#[test]
fn unreadable_and_unrecognised_files_give_documents_the_schema_accepts() {
    let schema = validator();
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "hello\n").unwrap();
    let missing = dir.path().join("missing.hrry");
    for path in [&text, &missing, &dir.path().to_path_buf()] {
        let v = inspect(&["--json", path.to_str().unwrap()]);
        assert!(v["format"].is_null(), "{path:?}: {v}");
        let problems: Vec<String> = schema.iter_errors(&v).map(|e| e.to_string()).collect();
        assert!(problems.is_empty(), "{path:?}: {problems:#?}");
    }
}

#[test]
fn safetensors_and_gguf_documents_match_the_schema() {
    let schema = validator();
    let dir = tempfile::tempdir().unwrap();
    for name in ["m.safetensors", "m.gguf"] {
        let path = dir.path().join(name);
        let done = Command::new(env!("CARGO_BIN_EXE_hrry"))
            .args(["convert", "corpus/valid/kv_all_types.hrry"])
            .arg(&path)
            .arg("--dequantize-unsupported")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("hrry runs");
        assert!(
            done.status.success(),
            "{}",
            String::from_utf8_lossy(&done.stderr)
        );
        let v = inspect(&["--json", path.to_str().unwrap()]);
        assert!(v["format"] == "safetensors" || v["format"] == "gguf", "{v}");
        let problems: Vec<String> = schema.iter_errors(&v).map(|e| e.to_string()).collect();
        assert!(problems.is_empty(), "{name}: {problems:#?}");
        // The schema tells the model document from the others.
        let mut bad = v.clone();
        bad["tensors"][0]["extra"] = serde_json::json!(1);
        assert!(!schema.is_valid(&bad) || v["tensors"].as_array().unwrap().is_empty());
    }
}

#[test]
fn the_schema_rejects_what_the_output_must_not_hold() {
    let schema = validator();
    let good = inspect(&["--json", "corpus/valid/quant-per-block-int4-f16.hrry"]);
    assert!(schema.is_valid(&good));
    let broken = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut v = good.clone();
        edit(&mut v);
        v
    };
    // A field the schema does not know, a wrong type, a missing field, a bad version.
    for bad in [
        broken(&|v| v["surprise"] = serde_json::json!(1)),
        broken(&|v| v["tensors"][0]["shape"] = serde_json::json!("[4, 40]")),
        broken(&|v| {
            v["tensors"][0]
                .as_object_mut()
                .unwrap()
                .remove("element_count");
        }),
        broken(&|v| v["format_version"] = serde_json::json!(2)),
        broken(&|v| v["tensors"][0]["quantization"]["scheme"] = serde_json::json!("Q4_0")),
    ] {
        assert!(!schema.is_valid(&bad), "accepted: {bad}");
    }
}

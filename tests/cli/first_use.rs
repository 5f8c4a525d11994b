//! What a new user meets in a first hour: one exit code per kind of bad input
//! across commands, safetensors and GGUF files shown by `inspect`, notes where an
//! option changes nothing, totals, explained corpus cases, and outputs whose
//! folders do not exist yet.

use std::path::Path;
use std::process::{Command, Stdio};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn hrry(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_hrry"))
        .args(args)
        .current_dir(ROOT)
        .stdin(Stdio::null())
        .output()
        .expect("hrry runs");
    Run {
        code: out.status.code().expect("exit code"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

fn corpus(name: &str) -> String {
    format!("{ROOT}/corpus/{name}")
}

/// basic.hrry converted to `name` (`.gguf` or `.safetensors`) in `dir`.
fn converted(dir: &Path, name: &str) -> std::path::PathBuf {
    let out = dir.join(name);
    let r = hrry(&["convert", &corpus("valid/basic.hrry"), s(&out)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    out
}

#[test]
fn the_same_bad_input_gets_the_same_exit_code_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.hrry");
    std::fs::write(&text, "meeting notes\nsecond line\n").unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = dir.path().join("out.safetensors");
    let npy = dir.path().join("x.npy");
    // Bytes that are not a model: an invalid input, 1.
    for args in [
        vec!["validate", s(&text)],
        vec!["inspect", s(&text)],
        vec!["convert", s(&text), s(&out)],
        vec!["export", s(&text), "w", "-o", s(&npy)],
        vec!["dequant", s(&text), "w", "--stats"],
    ] {
        let r = hrry(&args);
        assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("text file") || r.stdout.contains("text file"),
            "{args:?}: {}{}",
            r.stdout,
            r.stderr
        );
        // No hint that cannot help.
        assert!(!r.stderr.contains("--permissive"), "{args:?}: {}", r.stderr);
    }
    // A directory holding nothing to read: a usage error, 2.
    for args in [
        vec!["validate", s(&empty)],
        vec!["inspect", s(&empty)],
        vec!["convert", s(&empty), s(&out)],
        vec!["export", s(&empty), "w", "-o", s(&npy)],
    ] {
        let r = hrry(&args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
    }
    assert!(!out.exists() && !npy.exists());
}

#[test]
fn a_truncated_file_gets_a_hint_that_helps() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(corpus("valid/basic.hrry")).unwrap();
    for cut in [50, 300] {
        let path = dir.path().join(format!("cut{cut}.hrry"));
        std::fs::write(&path, &bytes[..cut]).unwrap();
        let r = hrry(&["inspect", s(&path)]);
        assert_eq!(r.code, 1);
        assert!(r.stderr.contains("cut short"), "{}", r.stderr);
        assert!(!r.stderr.contains("--permissive"), "{}", r.stderr);
    }
}

#[test]
fn inspect_shows_safetensors_and_gguf_files_as_convert_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    for (name, kind) in [("m.safetensors", "safetensors"), ("m.gguf", "GGUF v3")] {
        let path = converted(dir.path(), name);
        let r = hrry(&["inspect", s(&path)]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(r.stdout.contains(kind), "{}", r.stdout);
        assert!(r.stdout.contains("CONVERTS TO"), "{}", r.stdout);
        let weights = r
            .stdout
            .lines()
            .find(|l| l.trim_start().starts_with("weights"))
            .unwrap_or_else(|| panic!("{}", r.stdout));
        assert!(
            weights.contains("F32") && weights.contains("[2, 3]") && weights.contains("float32"),
            "{weights}"
        );
        assert!(r.stdout.contains("\"hrry corpus\""), "{}", r.stdout);
        let r = hrry(&["inspect", "--json", s(&path)]);
        assert_eq!(r.code, 0);
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(v["tensors"][1]["name"], "bias");
        assert_eq!(v["tensors"][1]["converts_to"], "int8");
        assert_eq!(v["kv"]["producer"]["value"], "hrry corpus");
    }
    // GGUF metadata keep their GGUF type.
    let gguf = converted(dir.path(), "n.gguf");
    let r = hrry(&["inspect", "--json", s(&gguf)]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["format"], "gguf");
    assert_eq!(v["kv_source_types"]["producer"], "string");
    assert_eq!(v["alignment"], 32);
    // A safetensors file cut short is named so, with no --permissive hint.
    let st = converted(dir.path(), "c.safetensors");
    let whole = std::fs::read(&st).unwrap();
    std::fs::write(&st, &whole[..whole.len() - 5]).unwrap();
    let r = hrry(&["inspect", s(&st)]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("truncated safetensors"), "{}", r.stderr);
    assert!(!r.stderr.contains("--permissive"), "{}", r.stderr);
}

#[test]
fn dtype_that_changes_nothing_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.safetensors");
    let r = hrry(&[
        "convert",
        &corpus("valid/basic.hrry"),
        s(&out),
        "--dtype",
        "bf16",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("--dtype bfloat16 changed nothing"),
        "{}",
        r.stderr
    );
    // Without --dtype, or when it is used, no such note.
    let r = hrry(&["convert", &corpus("valid/basic.hrry"), s(&out)]);
    assert!(!r.stderr.contains("changed nothing"), "{}", r.stderr);
    let r = hrry(&[
        "convert",
        &corpus("valid/quant-nf4.hrry"),
        s(&out),
        "--dtype",
        "bf16",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stderr.contains("changed nothing"), "{}", r.stderr);
}

#[test]
fn validating_several_files_ends_with_totals() {
    let r = hrry(&[
        "validate",
        &corpus("valid/basic.hrry"),
        &corpus("valid/empty.hrry"),
        &corpus("invalid/HF-CRC-001.hrry"),
        "missing.hrry",
    ]);
    assert_eq!(r.code, 2);
    let last = r.stdout.lines().last().unwrap_or_default();
    assert_eq!(
        last, "4 files: 2 valid, 1 invalid, 0 refused, 1 unreadable",
        "{}",
        r.stdout
    );
    // One file: no totals line.
    let r = hrry(&["validate", &corpus("valid/basic.hrry")]);
    assert_eq!(r.stdout.lines().count(), 1, "{}", r.stdout);
}

#[test]
fn rules_have_a_header_row() {
    let r = hrry(&["rules"]);
    let header = r.stdout.lines().next().unwrap_or_default();
    for column in ["ID", "LEVEL", "READS", "SUMMARY"] {
        assert!(header.contains(column), "{header}");
    }
    assert!(r.stdout.contains("READS: metadata"), "{}", r.stdout);
}

#[test]
fn inspect_by_name_says_what_matched() {
    let r = hrry(&["inspect", &corpus("valid/basic.hrry"), "-n", "weights"]);
    assert_eq!(r.code, 0);
    // The metadata the file has is not reported as none.
    assert!(!r.stdout.contains("metadata: none"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("metadata (0 of 2 entries match -n weights)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("tensors (1 of 2 match -n weights):"),
        "{}",
        r.stdout
    );
    let r = hrry(&["inspect", &corpus("valid/basic.hrry"), "-n", "prod*"]);
    assert!(r.stdout.contains("producer"), "{}", r.stdout);
    let help = hrry(&["inspect", "--help"]).stdout;
    assert!(help.contains("matches exactly that name"), "{help}");
}

#[test]
fn explain_aligns_a_case_that_changes_the_length() {
    let r = hrry(&["conformance", "explain", "invalid/LY-CSR-004.hrry"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let changes: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("  offset") || l.starts_with("  inserted"))
        .collect();
    // The shortened pointer buffer is one removal; the rest are the fields that
    // say so (its byte size, the index, the trailer), not every shifted byte.
    assert!(changes.len() <= 6, "{}", r.stdout);
    assert!(
        changes
            .iter()
            .any(|l| l.contains("removed") && l.contains("the data of tensor")),
        "{}",
        r.stdout
    );
    // By rule ID: the same case.
    let by_rule = hrry(&["conformance", "explain", "LY-CSR-004"]);
    assert_eq!(by_rule.code, 0, "{}", by_rule.stderr);
    assert!(
        by_rule.stdout.contains("corpus case breaks LY-CSR-004")
            && by_rule.stdout.contains("invalid/LY-CSR-004.hrry"),
        "{}",
        by_rule.stdout
    );
    // A file outside the corpus: its violations and the file it was cut from.
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.hrry");
    let bytes = std::fs::read(corpus("valid/basic.hrry")).unwrap();
    std::fs::write(&cut, &bytes[..300]).unwrap();
    let r = hrry(&["conformance", "explain", s(&cut)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("not a corpus case"), "{}", r.stdout);
    assert!(r.stdout.contains("HF-TRL-001"), "{}", r.stdout);
    assert!(
        r.stdout.contains("nearest valid file: valid/basic.hrry"),
        "{}",
        r.stdout
    );
    let r = hrry(&["conformance", "explain", "NOPE-123"]);
    assert_eq!(r.code, 2);
}

#[test]
fn a_group_composite_read_as_one_tensor_names_its_members() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("head.npy");
    let r = hrry(&[
        "export",
        &corpus("valid/composite_nested_group.hrry"),
        "head",
        "-o",
        s(&out),
    ]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("group composite: a group binds separate tensors")
            && r.stderr.contains(r#"read one by one: "inner", "last""#),
        "{}",
        r.stderr
    );
    // Its members are read as any tensor.
    let r = hrry(&[
        "export",
        &corpus("valid/composite_nested_group.hrry"),
        "last",
        "-o",
        s(&out),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn dequant_stats_of_a_float_tensor_are_of_its_values() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.hrry");
    let mut w = hrry::HrryWriter::create(&path, Default::default()).unwrap();
    w.write_row_major::<f32>("w", &[2, 2], &[1.0, -3.0, 2.0, 4.0])
        .unwrap();
    w.write_row_major::<half::f16>("h", &[3], &[half::f16::from_f32(0.5); 3])
        .unwrap();
    w.finish_file().unwrap();
    let r = hrry(&["dequant", s(&path), "w", "--stats", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["count"], 4);
    assert_eq!(v["min"], -3.0);
    assert_eq!(v["max"], 4.0);
    assert_eq!(v["mean"], 1.0);
    assert_eq!(v["quantized"], false);
    let r = hrry(&["dequant", s(&path), "h", "--stats"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("not quantized") && r.stdout.contains("mean  0.5"));
    // -o still needs a quantized tensor: export writes values.
    let r = hrry(&["dequant", s(&path), "w", "-o", s(&dir.path().join("w.npy"))]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("hrry export"), "{}", r.stderr);
}

#[test]
fn outputs_in_missing_folders_are_written_and_errors_name_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("nodir/x.npy");
    let r = hrry(&[
        "export",
        &corpus("valid/basic.hrry"),
        "weights",
        "-o",
        s(&npy),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(npy.is_file());
    let out = dir.path().join("nodir/sub/out.hrry");
    let st = converted(dir.path(), "m.safetensors");
    let r = hrry(&["convert", s(&st), s(&out)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(out.is_file());
    // A folder that cannot be made (a file is in the way): the output is named,
    // not the input.
    for blocked in ["m.safetensors/out.gguf", "m.safetensors/sub/out.gguf"] {
        let blocked = dir.path().join(blocked);
        let r = hrry(&["convert", &corpus("valid/basic.hrry"), s(&blocked)]);
        assert_eq!(r.code, 2);
        assert!(
            r.stderr.contains(&format!("cannot write {}", s(&blocked)))
                && !r.stderr.contains("basic.hrry"),
            "{}",
            r.stderr
        );
    }
}

#[test]
fn stream_help_lists_every_subcommand() {
    let help = hrry(&["--help"]).stdout;
    let line = help
        .lines()
        .find(|l| l.trim_start().starts_with("stream"))
        .unwrap_or_default();
    assert!(line.contains("inspect"), "{line}");
}

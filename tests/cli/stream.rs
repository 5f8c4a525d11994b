//! `hrry stream` and `hrry inspect` of a stream as a user runs them: a real pipe
//! between `pack` and `unpack`, the JSON contract and exit codes of
//! `hrry stream validate`.

use std::io::Write;
use std::process::{Command, Stdio};

fn hrry() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hrry"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = hrry().args(args).output().expect("hrry runs");
    (
        out.status.code().expect("exit code"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn pack_into_a_pipe_into_unpack() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "composite_nested_group",
        "quant-per-block-int4-f16",
        "layout-csr",
    ] {
        let input = format!("corpus/valid/{name}.hrry");
        let out = dir.path().join(format!("{name}.hrry"));
        let mut pack = hrry()
            .args(["stream", "pack", &input, "-o", "-"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let unpack = hrry()
            .args(["stream", "unpack", "-", "-o"])
            .arg(&out)
            .stdin(pack.stdout.take().unwrap())
            .status()
            .unwrap();
        assert!(pack.wait().unwrap().success() && unpack.success(), "{name}");
        let (code, text, _) = run(&["validate", out.to_str().unwrap()]);
        assert_eq!(code, 0, "{name}: {text}");
        // Packing the result again gives the stream of the original.
        let again = packed(&out);
        let first = hrry()
            .args(["stream", "pack", &input, "-o", "-"])
            .output()
            .unwrap();
        assert_eq!(again, first.stdout, "{name}: byte-identical");
        assert_eq!(
            first.stdout,
            std::fs::read(format!("corpus/stream/valid/{name}.hrrys")).unwrap(),
            "{name}: the CLI packs what the corpus holds"
        );
    }
}

/// The `.hrrys` files of `corpus/stream/{folder}`, sorted.
fn corpus_streams(folder: &str) -> Vec<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus/stream")
        .join(folder);
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "hrrys"))
        .collect();
    paths.sort();
    paths
}

/// `hrry stream pack FILE -o -`: the stream it prints.
fn packed(file: &std::path::Path) -> Vec<u8> {
    let out = hrry()
        .args(["stream", "pack"])
        .arg(file)
        .args(["-o", "-"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", file.display());
    out.stdout
}

/// `hrry stream unpack INPUT -o OUT`: exit code, standard output and error.
fn unpack(input: &std::path::Path, out: &std::path::Path) -> (i32, String, String) {
    run(&[
        "stream",
        "unpack",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ])
}

#[test]
fn unpack_refuses_every_invalid_stream_and_leaves_no_file() {
    let invalid = corpus_streams("invalid");
    assert!(invalid.len() >= 16, "{invalid:?}");
    for path in invalid {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("x.hrry");
        let rule = path.file_stem().unwrap().to_str().unwrap()[..10].to_string();
        let (code, _, err) = unpack(&path, &out);
        assert_eq!(code, 1, "{}: {err}", path.display());
        assert!(err.contains(&rule), "{}: {err}", path.display());
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "{}: no output left",
            path.display()
        );
    }
}

#[test]
fn unpack_lets_through_what_permissive_names() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.hrry");
    let out = out.to_str().unwrap();
    let input = "corpus/stream/invalid/TD-BUF-003.hrrys";
    let (code, _, err) = run(&[
        "stream",
        "unpack",
        "--permissive=TD-BUF-002,TD-BUF-003",
        input,
        "-o",
        out,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("warning: TD-BUF-003"), "{err}");
    let (code, text, _) = run(&["validate", out]);
    assert_eq!(code, 1);
    assert!(text.contains("TD-BUF-003"), "{text}");
    // Bare --permissive lets only hardening rules pass; TD-BUF-003 is the spec's.
    std::fs::remove_file(out).unwrap();
    let (code, _, err) = run(&["stream", "unpack", "--permissive", input, "-o", out]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("TD-BUF-003"), "{err}");
    // A rule that does not exist is a usage error.
    let (code, _, err) = run(&["stream", "unpack", "--permissive=XX-000", input, "-o", out]);
    assert_eq!(code, 2, "{err}");
    assert!(!std::path::Path::new(out).exists());
}

#[test]
fn every_valid_stream_unpacks_and_packs_back_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let valid = corpus_streams("valid");
    assert!(valid.len() >= 10, "{valid:?}");
    for path in valid {
        let out = dir.path().join("back.hrry");
        let (code, _, err) = unpack(&path, &out);
        assert_eq!(code, 0, "{}: {err}", path.display());
        assert!(
            packed(&out) == std::fs::read(&path).unwrap(),
            "{}: packs back to the same bytes",
            path.display()
        );
    }
}

#[test]
fn validate_has_the_shape_and_exit_codes_of_hrry_validate() {
    let (code, out, _) = run(&[
        "stream",
        "validate",
        "--json",
        "corpus/stream/valid/basic.hrrys",
    ]);
    assert_eq!(code, 0, "{out}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["format_version"], 1);
    assert_eq!(doc["valid"], true);
    let v = &doc["files"][0];
    assert_eq!(v["valid"], true);
    assert_eq!(v["format"], "stream");
    assert_eq!(v["mode"], "strict");
    assert!(v["violations"].as_array().unwrap().is_empty());
    // `hrry validate` gives the same object for a file named .hrrys.
    let (_, same, _) = run(&["validate", "--json", "corpus/stream/valid/basic.hrrys"]);
    let same: serde_json::Value = serde_json::from_str(&same).unwrap();
    assert_eq!(same["files"][0], *v);

    let (code, out, _) = run(&[
        "stream",
        "validate",
        "--json",
        "--messages",
        "corpus/messages/invalid/TR-ORD-003.hrrymsg",
        "corpus/messages/valid/request.hrrymsg",
    ]);
    assert_eq!(code, 1);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["valid"], false);
    let list = doc["files"].as_array().expect("one object per input");
    assert_eq!(list[0]["format"], "messages");
    assert_eq!(list[0]["violations"][0]["rule"], "TR-ORD-003");
    assert_eq!(list[0]["violations"][0]["level"], "spec");
    assert!(list[0]["violations"][0]["offset"].as_u64().is_some());
    assert_eq!(list[1]["valid"], true);
    let (code, out, _) = run(&[
        "stream",
        "validate",
        "--jsonl",
        "corpus/stream/valid/basic.hrrys",
        "no/such/file.hrrys",
    ]);
    assert_eq!(code, 2, "an unreadable input");
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1]["valid"], false);
    assert!(lines[1]["error"].as_str().unwrap().contains("no/such/file"));

    // Hardening rules are not reported in permissive mode.
    let file = "corpus/messages/invalid/TR-PNG-001.hrrymsg";
    assert_eq!(run(&["stream", "validate", "--messages", file]).0, 3);
    assert_eq!(
        run(&["stream", "validate", "--messages", "--permissive", file]).0,
        0
    );

    // Standard input, and a missing file (exit 2).
    let mut child = hrry()
        .args(["stream", "validate", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&std::fs::read("corpus/stream/invalid/ST-CMP-001.hrrys").unwrap())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("ST-CMP-001"));
    assert_eq!(run(&["stream", "validate", "no/such/file"]).0, 2);
}

#[test]
fn inspect_lists_a_streams_tensors() {
    let (code, out, _) = run(&[
        "inspect",
        "--json",
        "corpus/stream/valid/composite_nested_group.hrrys",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["format"], "stream");
    let names: Vec<&str> = v["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["t0", "t0.0", "t0.0.0", "t0.1"]);
    let (code, out, _) = run(&["inspect", "corpus/stream/valid/basic.hrrys"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("bare Hurray stream") && out.contains("float32"),
        "{out}"
    );
    // The same table as `hrry inspect` of a file: layout names, element counts.
    let (_, table, _) = run(&[
        "inspect",
        "corpus/stream/valid/composite_nested_group.hrrys",
    ]);
    assert!(
        table.contains("ELEMENTS") && table.contains("composite") && table.contains("t0.0.0"),
        "{table}"
    );
    // A broken stream lists what it could read, then names the rule (exit 1).
    let (code, _, err) = run(&["inspect", "corpus/stream/invalid/ST-TRN-002.hrrys"]);
    assert_eq!(code, 1);
    assert!(err.contains("ST-TRN-002"), "{err}");
}

//! The `hrry` binary as a user runs it: exit codes, JSON contracts, messages.

use crate::hrry;
use std::path::PathBuf;
use std::process::Command;

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[test]
fn validate_exit_codes_and_json() {
    let (code, out, _) = hrry(&["validate", "corpus/valid/basic.hrry"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("valid"));

    let (code, out, _) = hrry(&["validate", "--json", "corpus/invalid/HF-CRC-001.hrry"]);
    assert_eq!(code, 1);
    // One shape whatever the number of files: {format_version, valid, files}.
    let doc = json(&out);
    assert_eq!(doc["format_version"], 1);
    assert_eq!(doc["valid"], false);
    let v = &doc["files"][0];
    assert_eq!(v["valid"], false);
    assert_eq!(v["format"], "hrryfile");
    assert_eq!(v["file"], "corpus/invalid/HF-CRC-001.hrry");
    let violation = &v["violations"][0];
    assert_eq!(violation["rule"], "HF-CRC-001");
    assert!(violation["offset"].as_u64().is_some());
    assert!(violation["message"].as_str().unwrap().contains("CRC-32C"));

    let (code, out, _) = hrry(&[
        "validate",
        "--json",
        "corpus/valid/basic.hrry",
        "corpus/valid/empty.hrry",
    ]);
    assert_eq!(code, 0);
    let doc = json(&out);
    assert_eq!(doc["valid"], true);
    let files = doc["files"].as_array().expect("files");
    assert_eq!(files[0]["file"], "corpus/valid/basic.hrry");
    assert_eq!(files[1]["file"], "corpus/valid/empty.hrry");
}

#[test]
fn permissive_mode_skips_hardening_rules() {
    let file = "corpus/invalid/HF-PLC-006.hrry";
    // Valid per the spec, refused by the hardening policy: exit 3, not 1.
    let (code, out, _) = hrry(&["validate", file]);
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains("REFUSED by hardening policy: valid per the spec; rules HF-PLC-006"),
        "{out}"
    );
    assert!(!out.contains("INVALID"), "{out}");
    let (code, out, _) = hrry(&["validate", "--policy", "spec", "--json", file]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(json(&out)["files"][0]["verdict"], "valid");
    assert_eq!(json(&out)["files"][0]["policy"], "spec");
    assert_eq!(json(&out)["files"][0]["mode"], "strict");
    let (code, out, _) = hrry(&["validate", "--permissive", "--json", file]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(json(&out)["files"][0]["mode"], "permissive");
}

#[test]
fn usage_and_io_errors_exit_2() {
    assert_eq!(hrry(&["validate"]).0, 2);
    assert_eq!(hrry(&["frobnicate"]).0, 2);
    let (code, _, err) = hrry(&["validate", "no/such/file.hrry"]);
    assert_eq!(code, 2);
    assert!(err.contains("no/such/file.hrry"), "{err}");
}

#[test]
fn wrong_inputs_are_diagnosed() {
    let dir = tempfile::tempdir().unwrap();
    let lfs = dir.path().join("model.hrry");
    std::fs::write(
        &lfs,
        "version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 12\n",
    )
    .unwrap();
    let lfs = lfs.to_str().unwrap();
    let (code, out, _) = hrry(&["validate", lfs]);
    assert_eq!(code, 1);
    assert!(out.contains("Git LFS pointer"), "{out}");
    let (code, _, err) = hrry(&["inspect", lfs]);
    assert_eq!(code, 1);
    assert!(err.contains("Git LFS pointer"), "{err}");

    let truncated = dir.path().join("cut.hrry");
    let bytes =
        std::fs::read(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus/valid/basic.hrry"))
            .unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() - 100]).unwrap();
    let (code, out, _) = hrry(&["validate", truncated.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(out.contains("truncated"), "{out}");
}

#[test]
fn inspect_json_contract() {
    let (code, out, _) = hrry(&["inspect", "--json", "corpus/valid/basic.hrry"]);
    assert_eq!(code, 0);
    let v = json(&out);
    assert_eq!(v["format"], "hrryfile");
    assert_eq!(v["header"]["data_buffer_alignment"], 4096);
    assert_eq!(v["kv"]["producer"]["type"], "string");
    assert_eq!(v["kv"]["producer"]["value"], "hrry corpus");
    assert_eq!(v["kv"]["layers"]["type"], "int64");
    let t = &v["tensors"][0];
    assert_eq!(t["name"], "weights");
    assert_eq!(t["type_tag"], 3);
    assert_eq!(t["layout_tag"], 1);
    assert_eq!(t["shape"], serde_json::json!([2, 3]));
    assert_eq!(t["buffers"][0]["byte_size"], 24);
    assert_eq!(t["buffers"][0]["alignment"], 64);
    assert_eq!(t["buffers"][0]["device_tag"], 0);
    for key in [
        "byte_offset",
        "descriptor_offset",
        "descriptor_length",
        "data_offset",
        "data_length",
        "flags",
    ] {
        assert!(t[key].is_u64(), "{key} missing");
    }
    let (_, out, _) = hrry(&["inspect", "--json", "corpus/valid/kv_all_types.hrry"]);
    let kv = &json(&out)["kv"];
    assert_eq!(kv["bytes"]["value"], "0001ff");
    assert_eq!(kv["array"]["element_type"], "int64");
    assert_eq!(kv["array"]["value"], serde_json::json!([1, -2]));
    assert_eq!(kv["bool"]["value"], true);
}

#[test]
fn rules_lists_the_table() {
    let (code, out, _) = hrry(&["rules", "--json"]);
    assert_eq!(code, 0);
    let rules = json(&out)["rules"].as_array().unwrap().clone();
    assert!(rules.len() >= 80);
    assert!(rules
        .iter()
        .any(|r| r["id"] == "HF-HDR-003" && r["level"] == "spec"));
    let (_, help, _) = hrry(&["--help"]);
    assert!(help.contains("validate") && help.contains("Exit codes"));
}

#[test]
fn closed_stdout_ends_quietly_with_141() {
    // A reader that has gone away (`hrry rules | head -0`): writes fail with EPIPE.
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    for args in [
        &["rules"][..],
        &["inspect", "corpus/valid/all_element_types.hrry"][..],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_hrry"))
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdout(writer.try_clone().expect("clone"))
            .output()
            .expect("hrry runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(141), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn a_bool_tensor_stored_one_byte_per_element_is_flagged_marked_and_not_converted() {
    let file = "corpus/invalid/TD-BUF-014.hrry";
    // validate: the hardening rule, with the hint; permissive mode accepts it.
    let (code, out, _) = hrry(&["validate", "--json", file]);
    assert_eq!(code, 3, "{out}");
    let doc = json(&out);
    assert_eq!(doc["verdict"], "refused");
    assert_eq!(doc["files"][0]["verdict"], "refused");
    let violations = doc["files"][0]["violations"].as_array().unwrap();
    assert_eq!(violations.len(), 1, "{out}");
    assert_eq!(violations[0]["rule"], "TD-BUF-014");
    assert_eq!(violations[0]["level"], "hardening");
    let message = violations[0]["message"].as_str().unwrap();
    assert!(
        message.contains("holds 24 bytes")
            && message.contains("needs exactly 3")
            && message.contains("one byte per element"),
        "{message}"
    );
    assert_eq!(hrry(&["validate", "--permissive", file]).0, 0);

    // inspect marks the tensor, in text and JSON.
    let (code, out, _) = hrry(&["inspect", file]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("oversized buffer (TD-BUF-014): 24 bytes where 3 are needed")
            && out.contains("one byte per element"),
        "{out}"
    );
    let (_, out, _) = hrry(&["inspect", "--json", file]);
    let mark = &json(&out)["tensors"][0]["oversized_buffer"];
    assert_eq!(
        *mark,
        serde_json::json!({"byte_size": 24, "needed": 3, "one_byte_per_element": true})
    );
    let (_, out, _) = hrry(&["inspect", "--json", "corpus/valid/basic.hrry"]);
    let doc = json(&out);
    assert!(doc["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t.get("oversized_buffer").is_none()));

    // convert refuses it, leaving nothing; --permissive converts what readers see.
    let dir = tempfile::tempdir().unwrap();
    let st = dir.path().join("mask.safetensors");
    let st = st.to_str().unwrap();
    let (code, _, err) = hrry(&["convert", file, st]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("TD-BUF-014") && err.contains("--permissive"),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    let (code, _, err) = hrry(&["convert", "--permissive", file, st]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("converted as readers read it"), "{err}");
    let bytes = std::fs::read(st).unwrap();
    let tensors = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let mask = tensors.tensor("mask").unwrap();
    assert_eq!(mask.dtype(), safetensors::Dtype::BOOL);
    // The first 3 stored bytes (0, 1, 1) read as packed bits: 1 at elements 8 and
    // 16 only, not the writer's 0 1 1 1 1 1 1 0 ...
    let expected: Vec<u8> = (0..24).map(|i| u8::from(i == 8 || i == 16)).collect();
    assert_eq!(mask.data(), &expected[..]);
}

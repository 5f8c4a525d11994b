//! The command line at its edges: output paths that are devices, FIFOs,
//! symlinks, stdout or an input; signals mid-write; batches with missing and broken
//! files; hostile names; very large metadata; the exit-code table.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use hrry::file::{HrryWriter, WriterOptions};
use hrry::model::build::dense;
use hrry::model::ElementType;
use hrry::schema::{KvArray, KvScalar, KvValue, LenBytes};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

struct Run {
    code: i32,
    stdout: Vec<u8>,
    stderr: String,
}

impl Run {
    fn out(&self) -> String {
        String::from_utf8(self.stdout.clone()).expect("utf-8 stdout")
    }

    fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", self.out(), self.stderr))
    }
}

fn hrry(args: &[&str]) -> Run {
    hrry_with_stdin(args, None)
}

fn hrry_with_stdin(args: &[&str], stdin: Option<&[u8]>) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hrry"))
        .args(args)
        .current_dir(ROOT)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hrry runs");
    if let Some(bytes) = stdin {
        let mut pipe = child.stdin.take().expect("stdin");
        pipe.write_all(bytes).expect("write stdin");
    }
    let out = child.wait_with_output().expect("hrry ends");
    Run {
        code: out.status.code().expect("exit code"),
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

fn corpus(name: &str) -> String {
    format!("{ROOT}/corpus/{name}")
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// What `hrry export basic.hrry weights` writes to a regular file.
fn exported_weights(dir: &Path) -> Vec<u8> {
    let reference = dir.join("reference.npy");
    let r = hrry(&[
        "export",
        &corpus("valid/basic.hrry"),
        "weights",
        "-o",
        s(&reference),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let bytes = std::fs::read(&reference).unwrap();
    std::fs::remove_file(&reference).unwrap();
    assert!(bytes.starts_with(b"\x93NUMPY"));
    bytes
}

#[cfg(unix)]
fn file_type(path: &Path) -> std::fs::FileType {
    std::fs::symlink_metadata(path).unwrap().file_type()
}

#[cfg(unix)]
#[test]
fn a_character_device_stays_a_device() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let device = dir.path().join("null");
    // The same device numbers as /dev/null (1, 3), so writes are swallowed.
    let made = Command::new("mknod")
        .args([s(&device), "c", "1", "3"])
        .output();
    match made {
        Ok(out) if out.status.success() => {}
        Ok(out) => {
            println!(
                "skipped: mknod is not permitted here: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
            return;
        }
        Err(e) => {
            println!("skipped: mknod cannot run: {e}");
            return;
        }
    }
    let input = corpus("valid/basic.hrry");
    for args in [
        vec!["export", &input, "weights", "-o", s(&device)],
        vec!["convert", &input, s(&device), "--to", "safetensors"],
        vec![
            "dequant",
            &corpus("valid/quant-nf4.hrry"),
            "q",
            "-o",
            s(&device),
        ],
    ] {
        let r = hrry(&args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        assert!(
            file_type(&device).is_char_device(),
            "{args:?} replaced the device"
        );
    }
    assert_eq!(names(dir.path()), ["null"], "no temporary file is left");

    // A device that refuses the bytes: the error names it, exit 2.
    if Path::new("/dev/full").exists() {
        let r = hrry(&["export", &input, "weights", "-o", "/dev/full"]);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(r.stderr.contains("/dev/full"), "{}", r.stderr);
        assert!(file_type(Path::new("/dev/full")).is_char_device());
    }
}

#[cfg(unix)]
#[test]
fn a_fifo_is_written_through() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let expected = exported_weights(dir.path());
    let fifo = dir.path().join("pipe");
    let made = Command::new("mkfifo").arg(s(&fifo)).output();
    if !made.is_ok_and(|o| o.status.success()) {
        println!("skipped: mkfifo is not available");
        return;
    }
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let r = hrry(&[
        "export",
        &corpus("valid/basic.hrry"),
        "weights",
        "-o",
        s(&fifo),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(reader.join().unwrap(), expected);
    assert!(file_type(&fifo).is_fifo());
}

#[cfg(unix)]
#[test]
fn a_symlinks_target_receives_the_data_and_modes_are_kept() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let expected = exported_weights(dir.path());
    let target = dir.path().join("target.npy");
    std::fs::write(&target, b"old").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
    let link = dir.path().join("link.npy");
    std::os::unix::fs::symlink("target.npy", &link).unwrap();

    let r = hrry(&[
        "export",
        &corpus("valid/basic.hrry"),
        "weights",
        "-o",
        s(&link),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        file_type(&link).is_symlink(),
        "the link itself was replaced"
    );
    assert_eq!(std::fs::read(&target).unwrap(), expected);
    let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o600, "mode {mode:o}");

    // The same through convert, onto an existing 0600 file.
    let out = dir.path().join("private.safetensors");
    std::fs::write(&out, b"old").unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o600)).unwrap();
    let r = hrry(&["convert", &corpus("valid/basic.hrry"), s(&out)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o600, "mode {mode:o}");
    assert_ne!(std::fs::read(&out).unwrap(), b"old");
    assert_eq!(
        names(dir.path()),
        ["link.npy", "private.safetensors", "target.npy"]
    );
}

#[test]
fn dash_is_standard_output_and_creates_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let expected = exported_weights(dir.path());
    let mut child = Command::new(env!("CARGO_BIN_EXE_hrry"))
        .args(["export", &corpus("valid/basic.hrry"), "weights", "-o", "-"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(child.status.code(), Some(0));
    assert_eq!(std::mem::take(&mut child.stdout), expected);
    assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));

    // convert to standard output: the file on stdout, the summary on stderr.
    let r = hrry(&[
        "convert",
        &corpus("valid/basic.hrry"),
        "-",
        "--to",
        "safetensors",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let header_len = u64::from_le_bytes(r.stdout[..8].try_into().unwrap()) as usize;
    assert_eq!(r.stdout[8], b'{');
    assert!(r.stdout.len() > 8 + header_len);
    assert!(r.stderr.contains("2 tensors"), "{}", r.stderr);
}

#[test]
fn writing_onto_an_input_is_refused_and_leaves_it_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let st = dir.path().join("model.safetensors");
    let r = hrry(&["convert", &corpus("valid/basic.hrry"), s(&st)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let before = std::fs::read(&st).unwrap();
    let hard = dir.path().join("hard.safetensors");
    std::fs::hard_link(&st, &hard).unwrap();

    for out in [&st, &hard] {
        let r = hrry(&["convert", s(&st), s(out), "--to", "hrry"]);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(r.stderr.contains("refusing to write"), "{}", r.stderr);
        assert!(r.stderr.contains(s(out)), "{}", r.stderr);
        assert_eq!(std::fs::read(&st).unwrap(), before);
    }
    // Export and dequant refuse too.
    let hrry_copy = dir.path().join("copy.hrry");
    std::fs::copy(corpus("valid/quant-nf4.hrry"), &hrry_copy).unwrap();
    let original = std::fs::read(&hrry_copy).unwrap();
    for args in [
        vec!["export", s(&hrry_copy), "q", "-o", s(&hrry_copy)],
        vec!["dequant", s(&hrry_copy), "q", "-o", s(&hrry_copy)],
    ] {
        let r = hrry(&args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert_eq!(std::fs::read(&hrry_copy).unwrap(), original);
    }
    assert_eq!(
        names(dir.path()),
        ["copy.hrry", "hard.safetensors", "model.safetensors"]
    );
}

#[test]
fn errors_name_the_users_path_not_a_temporary_file() {
    let r = hrry(&[
        "export",
        &corpus("valid/basic.hrry"),
        "weights",
        "-o",
        "README.md/dir/out.npy",
    ]);
    // A missing folder is created; one under a file cannot be.
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("README.md/dir/out.npy"), "{}", r.stderr);
    assert!(!r.stderr.contains("hrry-tmp"), "{}", r.stderr);
}

/// A safetensors file of one float32 tensor of `bytes` bytes, mostly a hole (reads as
/// zeros without taking disk space).
fn large_safetensors(path: &Path, bytes: u64) {
    let header = format!(
        "{{\"w\":{{\"dtype\":\"F32\",\"shape\":[{}],\"data_offsets\":[0,{bytes}]}}}}",
        bytes / 4
    );
    let mut header = header.into_bytes();
    header.resize(header.len().next_multiple_of(8), b' ');
    let mut f = std::fs::File::create(path).unwrap();
    f.write_all(&(header.len() as u64).to_le_bytes()).unwrap();
    f.write_all(&header).unwrap();
    f.set_len(8 + header.len() as u64 + bytes).unwrap();
}

#[cfg(unix)]
#[test]
fn a_signal_mid_conversion_removes_the_temporary_file() {
    let input_dir = tempfile::tempdir().unwrap();
    let input = input_dir.path().join("big.safetensors");
    large_safetensors(&input, 512 << 20);
    for (signal, code) in [("HUP", 129), ("INT", 130), ("TERM", 143)] {
        let dir = tempfile::tempdir().unwrap();
        let output = dir.path().join("big.hrry");
        let mut child = Command::new(env!("CARGO_BIN_EXE_hrry"))
            .args(["convert", "--quiet", s(&input), s(&output)])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Wait for the temporary file, so the signal lands mid-write.
        let started = std::time::Instant::now();
        let seen = loop {
            if names(dir.path())
                .iter()
                .any(|n| n.starts_with(".hrry-tmp-"))
            {
                break true;
            }
            if child.try_wait().unwrap().is_some()
                || started.elapsed() > std::time::Duration::from_secs(60)
            {
                break false;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        };
        assert!(
            seen,
            "the conversion ended before a temporary file was seen"
        );
        let pid = child.id().to_string();
        let sent = Command::new("kill")
            .args([&format!("-{signal}"), &pid])
            .status();
        assert!(sent.unwrap().success());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(code), "SIG{signal}");
        assert!(
            names(dir.path()).is_empty(),
            "left: {:?}",
            names(dir.path())
        );
    }
}

#[test]
fn validate_reports_every_file_in_one_shape() {
    let ok = corpus("valid/basic.hrry");
    let bad = corpus("invalid/HF-CRC-001.hrry");
    let r = hrry(&["validate", "--json", &ok, "missing.hrry", &bad]);
    assert_eq!(r.code, 2, "an unreadable file outranks an invalid one");
    let doc = r.json();
    assert_eq!(doc["format_version"], 1);
    assert_eq!(doc["valid"], false);
    let files = doc["files"].as_array().unwrap();
    assert_eq!(files.len(), 3);
    assert_eq!(files[0]["file"], ok.as_str());
    assert_eq!(files[0]["valid"], true);
    assert_eq!(files[1]["file"], "missing.hrry");
    assert_eq!(files[1]["valid"], false);
    assert!(files[1]["error"].as_str().unwrap().contains("missing.hrry"));
    assert_eq!(files[2]["violations"][0]["rule"], "HF-CRC-001");

    // One file: the same shape.
    let one = hrry(&["validate", "--json", &ok]).json();
    assert_eq!(one["files"].as_array().unwrap().len(), 1);

    // Not a file: a directory named without -r is walked (one level), a device
    // is refused rather than read forever.
    let r = hrry(&["validate", "--jsonl", "/dev/zero", &ok]);
    assert_eq!(r.code, 2);
    let lines: Vec<serde_json::Value> = r
        .out()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 2);
    assert!(lines[0]["error"]
        .as_str()
        .unwrap()
        .contains("not a regular file"));
    assert_eq!(lines[1]["valid"], true);

    // A directory with nothing to check is said so (the corpus holds only folders
    // and its manifest at the top).
    let r = hrry(&["validate", "corpus"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("-r descends"), "{}", r.stderr);

    // Human output goes on after an unreadable file too.
    let r = hrry(&["validate", "missing.hrry", &ok]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("missing.hrry"), "{}", r.stderr);
    assert!(r.out().contains("basic.hrry: VALID"), "{}", r.out());
}

#[test]
fn standard_input_is_read_by_validate_and_inspect() {
    let bytes = std::fs::read(corpus("valid/basic.hrry")).unwrap();
    let r = hrry_with_stdin(&["validate", "--json", "-"], Some(&bytes));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["files"][0]["file"], "-");
    let r = hrry_with_stdin(&["inspect", "--json", "-"], Some(&bytes));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let from_stdin = r.json();
    let from_file = hrry(&["inspect", "--json", &corpus("valid/basic.hrry")]).json();
    assert_eq!(from_stdin["tensors"], from_file["tensors"]);
    assert_eq!(from_stdin["file"], "-");

    let bad = std::fs::read(corpus("invalid/HF-HDR-003.hrry")).unwrap();
    let r = hrry_with_stdin(&["validate", "-"], Some(&bad));
    assert_eq!(r.code, 1);
    assert!(r.out().contains("HF-HDR-003"), "{}", r.out());
    let holo = std::fs::read(corpus("valid/full.holo")).unwrap();
    let r = hrry_with_stdin(&["inspect", "--json", "-"], Some(&holo));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["format"], "holo");
}

#[test]
fn parallel_validation_gives_the_verdicts_of_one_file_at_a_time() {
    let r = hrry(&["validate", "--jsonl", "--jobs", "2", "-r", "corpus"]);
    assert_eq!(r.code, 1, "the corpus holds invalid files");
    let verdict = |v: &serde_json::Value| {
        let mut rules: Vec<String> = v["violations"]
            .as_array()
            .expect("violations")
            .iter()
            .map(|x| x["rule"].as_str().unwrap().to_string())
            .collect();
        rules.sort();
        (v["valid"].as_bool().unwrap(), v["format"].clone(), rules)
    };
    let parallel: std::collections::BTreeMap<String, _> = r
        .out()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
            (v["file"].as_str().unwrap().to_string(), verdict(&v))
        })
        .collect();
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(corpus("manifest.json")).unwrap()).unwrap();
    let listed = manifest["files"].as_array().map_or(0, Vec::len);
    assert!(parallel.len() >= 200, "{} files", parallel.len());
    assert!(
        listed == 0 || parallel.len() >= listed,
        "{} < {listed}",
        parallel.len()
    );
    assert!(!parallel
        .keys()
        .any(|f| f.ends_with(".json") || f.ends_with(".md")));
    for (file, expected) in &parallel {
        let alone = hrry(&["validate", "--json", file]).json();
        assert_eq!(&verdict(&alone["files"][0]), expected, "{file}");
    }
}

#[test]
fn hostile_names_are_escaped_and_flagged() {
    let file = corpus("invalid/HF-TXT-001.hrry");
    for args in [
        vec!["inspect", "--policy", "spec", file.as_str()],
        vec!["validate", file.as_str()],
    ] {
        let r = hrry(&args);
        assert!(!r.stdout.contains(&0x1b), "{args:?} printed a raw ESC");
        assert!(!r.stderr.contains('\u{1b}'), "{args:?} printed a raw ESC");
        // inspect shows the name escaped; validate's message quotes it escaped.
        let shown = r.out().contains("\\x1b[2J") || r.out().contains("\\u{1b}[2J");
        assert!(shown, "{args:?}: {}", r.out());
    }
    assert!(hrry(&["inspect", "--policy", "spec", &file])
        .out()
        .contains("w\\x1b[2J float32"));
    let r = hrry(&["validate", "--json", &file]);
    assert_eq!(r.code, 3);
    assert_eq!(r.json()["files"][0]["violations"][0]["rule"], "HF-TXT-001");
    assert_eq!(r.json()["files"][0]["violations"][0]["level"], "hardening");
    let r = hrry(&["validate", "--permissive", &file]);
    assert_eq!(r.code, 0, "a hardening rule: permissive accepts it");
    // JSON keeps the name exact (escaped by JSON itself).
    let v = hrry(&["inspect", "--policy", "spec", "--json", &file]).json();
    assert_eq!(v["tensors"][0]["name"], "w\u{1b}[2J");
    // A file name is made safe too.
    let dir = tempfile::tempdir().unwrap();
    let r = hrry(&["export", "--policy", "spec", &file, "--all", s(dir.path())]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(names(dir.path()), ["index.json", "w_[2J.npy"]);
}

/// A model-like file: a 128k-token vocabulary (strings, scores, token types), a
/// long chat template, and a few tensors, one with a very long name.
fn big_vocabulary_file(path: &Path) {
    let n = 128 * 1024;
    let tokens: Vec<KvScalar> = (0..n)
        .map(|i| {
            KvScalar::String(LenBytes {
                bytes: format!("token_{i}").into_bytes(),
            })
        })
        .collect();
    let scores: Vec<KvScalar> = (0..n).map(|i| KvScalar::Float64(-(i as f64))).collect();
    let types = (0..n).map(|i| KvScalar::Int64(i % 3)).collect();
    let mut w = HrryWriter::create(path, WriterOptions::default()).unwrap();
    let array = |element_tag, elements| KvValue::Array(KvArray::new(element_tag, elements));
    w.add_kv("tokenizer.ggml.tokens", array(0x01, tokens))
        .unwrap();
    w.add_kv("tokenizer.ggml.scores", array(0x04, scores))
        .unwrap();
    w.add_kv("tokenizer.ggml.token_type", array(0x02, types))
        .unwrap();
    let template = "{% for message in messages %}".repeat(2000);
    w.add_kv(
        "tokenizer.chat_template",
        KvValue::String(LenBytes {
            bytes: template.into_bytes(),
        }),
    )
    .unwrap();
    let d = dense(ElementType::Float32, &[4, 4]).unwrap();
    let data = vec![0u8; 64];
    for name in ["token_embd.weight", "output_norm.weight"] {
        w.write_tensor(name, &d, &[&data]).unwrap();
    }
    let long = format!("blk.0.{}.weight", "very_long_component_".repeat(8));
    w.write_tensor(&long, &d, &[&data]).unwrap();
    w.finish_file().unwrap();
}

#[test]
fn inspect_of_a_128k_vocabulary_stays_small() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vocab.hrry");
    big_vocabulary_file(&path);
    let r = hrry(&["inspect", s(&path)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    println!(
        "hrry inspect printed {} bytes for a 128k-entry KV array",
        r.stdout.len()
    );
    assert!(r.stdout.len() < 20 * 1024, "{} bytes", r.stdout.len());
    let out = r.out();
    assert!(out.contains("131072 × string [\"token_0\""), "{out}");
    assert!(out.contains("131064 more"), "{out}");
    // Columns stay aligned: the long name has a line of its own.
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("float32 [4, 4]"))
        .collect();
    assert_eq!(rows.len(), 3);
    let column = |l: &str| l.find("float32").unwrap();
    assert!(
        rows.iter().all(|r| column(r) == column(rows[0])),
        "{rows:#?}"
    );

    // --full shows everything; --json keeps every value unless asked otherwise.
    let full = hrry(&["inspect", "--full", s(&path)]);
    assert!(full.stdout.len() > 1 << 20, "{}", full.stdout.len());
    let v = hrry(&["inspect", "--json", s(&path)]).json();
    let tokens = &v["kv"]["tokenizer.ggml.tokens"];
    assert_eq!(tokens["count"], 131072);
    assert_eq!(tokens["value"].as_array().unwrap().len(), 131072);
    let v = hrry(&["inspect", "--json", "--max-array", "3", s(&path)]).json();
    let tokens = &v["kv"]["tokenizer.ggml.tokens"];
    assert_eq!(tokens["value"].as_array().unwrap().len(), 3);
    assert_eq!(tokens["truncated"], true);
}

#[test]
fn inspect_filters_and_summary() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vocab.hrry");
    big_vocabulary_file(&path);
    let v = hrry(&["inspect", "--json", "--tensors-only", s(&path)]).json();
    assert!(v.get("kv").is_none());
    assert_eq!(v["tensors"].as_array().unwrap().len(), 3);
    assert_eq!(v["summary"]["parameters"], 48);
    assert_eq!(v["summary"]["by_type"]["float32"], 3);
    let v = hrry(&[
        "inspect",
        "--json",
        "--metadata-only",
        "-n",
        "tokenizer.ggml.*",
        s(&path),
    ])
    .json();
    assert!(v.get("tensors").is_none());
    let keys: Vec<&String> = v["kv"].as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "tokenizer.ggml.tokens",
            "tokenizer.ggml.scores",
            "tokenizer.ggml.token_type"
        ]
    );
    let r = hrry(&["inspect", "--name", "*norm*", s(&path)]);
    assert!(
        r.out().contains("tensors (1 of 3 match -n *norm*):"),
        "{}",
        r.out()
    );
    assert!(r.out().contains("output_norm.weight"));
    assert!(!r.out().contains("token_embd.weight"));
    assert!(r.out().contains("3 tensors, 48 parameters"), "{}", r.out());
}

#[test]
fn inspect_decodes_quantization() {
    let r = hrry(&["inspect", &corpus("valid/quant-per-block-int4-f16.hrry")]);
    assert_eq!(r.code, 0);
    let out = r.out();
    for part in [
        "int4 per-block affine ×1",
        "per-block affine v1: int4, axis 1, block 32, float16 scales, symmetric",
        "bits/weight",
        "row-major",
        "160",
    ] {
        assert!(out.contains(part), "{part:?} missing:\n{out}");
    }
    let q = &hrry(&[
        "inspect",
        "--json",
        &corpus("valid/quant-per-block-uint8-bf16-asym.hrry"),
    ])
    .json()["tensors"][0]["quantization"];
    assert_eq!(q["scheme"], "per-block affine");
    assert_eq!(q["storage_type"], "uint8");
    assert_eq!(q["scale_type"], "bfloat16");
    assert_eq!(q["block_size"], 4);
    assert_eq!(q["symmetric"], false);
    assert!(q["zero_point_buffer_index"].is_u64());
    assert!(q["descriptor"].as_str().unwrap().starts_with("03"));
}

#[test]
fn inspect_of_a_broken_file_says_what_is_wrong() {
    let file = corpus("invalid/HF-CRC-001.hrry");
    let r = hrry(&["inspect", "--json", &file]);
    assert_eq!(r.code, 1);
    let v = r.json();
    assert_eq!(v["rule"], "HF-CRC-001");
    assert!(v["offset"].is_u64());
    assert!(r.stderr.contains("--permissive"), "{}", r.stderr);
    let r = hrry(&["inspect", "--permissive", &file]);
    assert_eq!(r.code, 1, "still an invalid file");
    assert!(r.out().contains("HF-CRC-001"), "{}", r.out());
    assert!(
        r.out().contains("weights"),
        "the tensors are shown: {}",
        r.out()
    );
    let v = hrry(&["inspect", "--json", "--force", &file]).json();
    assert_eq!(v["violations"][0]["rule"], "HF-CRC-001");
    assert_eq!(v["tensors"][0]["name"], "weights");
}

#[test]
fn malformed_gguf_errors_are_plain() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.gguf");
    // GGUF v3, 0 tensors, 1 KV: key "abc", type 8 (string) claiming 10^12 bytes.
    let mut bytes = b"GGUF".to_vec();
    bytes.extend_from_slice(&3u32.to_le_bytes());
    bytes.extend_from_slice(&0u64.to_le_bytes());
    bytes.extend_from_slice(&1u64.to_le_bytes());
    bytes.extend_from_slice(&3u64.to_le_bytes());
    bytes.extend_from_slice(b"abc");
    bytes.extend_from_slice(&8u32.to_le_bytes());
    bytes.extend_from_slice(&1_000_000_000_000u64.to_le_bytes());
    std::fs::write(&path, &bytes).unwrap();
    let r = hrry(&["convert", s(&path), s(&dir.path().join("out.hrry"))]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(!r.stderr.contains('\u{1b}'), "{}", r.stderr);
    assert!(!r.stderr.contains(".rs:"), "{}", r.stderr);
    assert!(!r.stderr.contains("Backtrace"), "{}", r.stderr);
    assert!(r.stderr.contains("offset 47"), "{}", r.stderr);
}

/// A `.npy` file's header text and data.
fn npy(bytes: &[u8]) -> (String, Vec<u8>) {
    assert_eq!(&bytes[..6], b"\x93NUMPY");
    let len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    (
        String::from_utf8(bytes[10..10 + len].to_vec()).unwrap(),
        bytes[10 + len..].to_vec(),
    )
}

#[test]
fn export_all_writes_every_tensor_and_an_index() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("all");
    let r = hrry(&["export", &corpus("valid/basic.hrry"), "--all", s(&out)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(names(&out), ["bias.npy", "index.json", "weights.npy"]);
    let weights = std::fs::read(out.join("weights.npy")).unwrap();
    assert_eq!(weights, exported_weights(dir.path()));
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("index.json")).unwrap()).unwrap();
    let tensors = index["tensors"].as_array().unwrap();
    assert_eq!(tensors[0]["name"], "weights");
    assert_eq!(tensors[0]["file"], "weights.npy");
    assert_eq!(tensors[0]["shape"], serde_json::json!([2, 3]));
    assert_eq!(tensors[1]["file"], "bias.npy");
}

fn f32s(data: &[u8]) -> Vec<f32> {
    data.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn export_raw_gives_codes_and_parameters_that_rebuild_the_values() {
    let file = corpus("valid/quant-per-block-uint8-bf16-asym.hrry");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("q.npy");
    let r = hrry(&["export", &file, "q", "--raw", "-o", s(&out)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        names(dir.path()),
        ["q.codes.npy", "q.scales.npy", "q.zero_points.npy"]
    );
    let read = |name: &str| npy(&std::fs::read(dir.path().join(name)).unwrap());
    let (codes_header, codes) = read("q.codes.npy");
    let (scales_header, scales) = read("q.scales.npy");
    let (zp_header, zero_points) = read("q.zero_points.npy");
    // [3, 10] in blocks of 4 along axis 1: stored as [3, 12], 9 blocks.
    assert!(
        codes_header.contains("'|u1'") && codes_header.contains("(3, 12)"),
        "{codes_header}"
    );
    assert!(
        scales_header.contains("'<f4'") && scales_header.contains("(9,)"),
        "{scales_header}"
    );
    assert!(
        zp_header.contains("'<i4'") && zp_header.contains("(9,)"),
        "{zp_header}"
    );
    let scales = f32s(&scales);
    let zero_points: Vec<i32> = zero_points
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();

    // The dequantized export, rebuilt from the raw parts: (q - z) * scale.
    let deq = dir.path().join("values.npy");
    assert_eq!(hrry(&["export", &file, "q", "-o", s(&deq)]).code, 0);
    let (_, values) = npy(&std::fs::read(&deq).unwrap());
    let values = f32s(&values);
    assert_eq!(values.len(), 30);
    for r in 0..3 {
        for c in 0..10 {
            let block = r * 3 + c / 4;
            let q = i64::from(codes[r * 12 + c]);
            let expected = (q - i64::from(zero_points[block])) as f32 * scales[block];
            assert_eq!(values[r * 10 + c], expected, "element ({r}, {c})");
        }
    }

    // Not quantized: --raw writes the values (with a note); no tensor: exit 2.
    let r = hrry(&[
        "export",
        &corpus("valid/basic.hrry"),
        "weights",
        "--raw",
        "-o",
        s(&out),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("not quantized"));
    let r = hrry(&["export", &file, "nope", "--raw", "-o", s(&out)]);
    assert_eq!(r.code, 2);
}

#[test]
fn the_same_failure_has_the_same_exit_code_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.npy");
    let basic = corpus("valid/basic.hrry");
    // A tensor that is not there: a usage error.
    assert_eq!(hrry(&["export", &basic, "nope", "-o", s(&out)]).code, 2);
    assert_eq!(hrry(&["dequant", &basic, "nope", "-o", s(&out)]).code, 2);
    // A tensor the command cannot process: exit 1.
    assert_eq!(hrry(&["dequant", &basic, "weights", "-o", s(&out)]).code, 1);
    // An invalid input file: exit 1 everywhere.
    let bad = corpus("invalid/HF-CRC-001.hrry");
    for args in [
        vec!["export", bad.as_str(), "weights", "-o", s(&out)],
        vec!["dequant", bad.as_str(), "weights", "--stats"],
        vec!["inspect", bad.as_str()],
        vec!["validate", bad.as_str()],
    ] {
        assert_eq!(hrry(&args).code, 1, "{args:?}");
    }
    // An unreadable input: exit 2 everywhere.
    for args in [
        vec!["export", "missing.hrry", "w", "-o", s(&out)],
        vec!["dequant", "missing.hrry", "w", "--stats"],
        vec!["inspect", "missing.hrry"],
        vec!["validate", "missing.hrry"],
        vec!["convert", "missing.hrry", "x.safetensors"],
    ] {
        let r = hrry(&args);
        assert_eq!(r.code, 2, "{args:?}");
        assert!(r.stderr.contains("missing.hrry"), "{args:?}: {}", r.stderr);
    }
    assert!(!out.exists());
}

#[test]
fn the_exit_code_table_is_in_top_level_help_and_the_cli_reference_once() {
    let help = hrry(&["--help"]).out();
    let table: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Exit codes"))
        .collect();
    assert!(table.len() >= 7, "{help}");
    let reference = std::fs::read_to_string(Path::new(ROOT).join("docs/cli.md")).unwrap();
    for line in &table {
        assert!(
            reference.contains(line.trim_end()),
            "docs/cli.md lacks {line:?}"
        );
    }
    for code in ["0 ", "1 ", "2 ", "130", "141", "143"] {
        assert!(
            table.iter().any(|l| l.trim_start().starts_with(code)),
            "{code}"
        );
    }
    // The table says what success means for the server, and no longer claims that
    // every command checks files.
    assert!(
        help.contains("serve: stopped by SIGINT or SIGTERM"),
        "{help}"
    );
    assert!(!help.contains("(every command)"), "{help}");
    // Subcommands point at it in one line instead of repeating it, in -h and --help.
    // Every page, nested ones included.
    for sub in [
        "inspect",
        "validate",
        "export",
        "dequant",
        "convert",
        "rules",
        "serve",
        "fetch",
        "put",
        "holo",
        "holo extract",
        "stream",
        "stream pack",
        "stream unpack",
        "stream validate",
        "stream inspect",
        "conformance",
        "conformance explain",
    ] {
        for flag in ["-h", "--help"] {
            let mut args: Vec<&str> = sub.split(' ').collect();
            args.push(flag);
            let help = hrry(&args).out();
            assert!(!help.contains(table[1]), "{sub} {flag} repeats the table");
            assert_eq!(
                help.matches("Exit codes:").count(),
                1,
                "{sub} {flag}: {help}"
            );
        }
    }
}

#[test]
fn a_directory_where_a_file_is_expected_is_named_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let d = s(dir.path());
    let out = dir.path().join("x.npy");
    for args in [
        vec!["export", d, "w", "-o", s(&out)],
        vec!["export", d, "--all", s(&out)],
        vec!["dequant", d, "w", "--stats"],
        vec!["serve", d],
        vec!["inspect", d],
        vec!["put", "127.0.0.1:1", d, "w"],
    ] {
        let r = hrry(&args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("is a directory") || r.stderr.contains("Is a directory"),
            "{args:?}: {}",
            r.stderr
        );
        assert!(
            !r.stderr.contains("No such device"),
            "{args:?}: {}",
            r.stderr
        );
    }
}

#[test]
fn every_input_has_a_json_entry_and_unrecognised_bytes_no_format() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    // An empty directory is an entry of its own, not a missing one.
    let r = hrry(&["validate", "--json", s(&empty), &corpus("valid/basic.hrry")]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let doc = r.json();
    let files = doc["files"].as_array().unwrap();
    assert_eq!(files.len(), 2, "{doc}");
    assert_eq!(files[0]["file"], s(&empty));
    assert_eq!(files[0]["valid"], false);
    assert!(files[0]["error"].as_str().unwrap().contains("no HRRYFILE"));
    assert_eq!(files[1]["valid"], true);

    // A file that cannot be read still gives inspect's error document.
    let missing = dir.path().join("missing.hrry");
    let r = hrry(&["inspect", "--json", s(&missing)]);
    assert_eq!(r.code, 2);
    let doc = r.json();
    assert_eq!(doc["file"], s(&missing));
    assert!(doc["error"].as_str().unwrap().contains("missing.hrry"));
    assert!(doc["format"].is_null(), "{doc}");
    assert!(doc["rule"].is_null() && doc["offset"].is_null(), "{doc}");

    // A text file is not reported as a HRRYFILE by either command.
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "hello\n").unwrap();
    let r = hrry(&["validate", "--json", s(&text)]);
    assert_eq!(r.code, 1);
    assert!(r.json()["files"][0]["format"].is_null(), "{}", r.out());
    let r = hrry(&["inspect", "--json", s(&text)]);
    assert_eq!(r.code, 1);
    let doc = r.json();
    assert!(doc["format"].is_null(), "{doc}");
    assert_eq!(doc["rule"], "HF-HDR-001");
    // A real HRRYFILE keeps its format.
    let r = hrry(&["validate", "--json", &corpus("invalid/HF-CRC-001.hrry")]);
    assert_eq!(r.json()["files"][0]["format"], "hrryfile");
}

#[test]
fn convert_goes_between_gguf_and_safetensors_in_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let gguf = dir.path().join("m.gguf");
    let st = dir.path().join("m.safetensors");
    let back = dir.path().join("back.gguf");
    let help = hrry(&["--help"]).out();
    assert!(!help.contains("either way"), "{help}");
    assert_eq!(
        hrry(&["convert", &corpus("valid/basic.hrry"), s(&gguf)]).code,
        0
    );
    let r = hrry(&["convert", s(&gguf), s(&st)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.out().contains("(gguf) ->") && r.out().contains("(safetensors)"));
    let bytes = std::fs::read(&st).unwrap();
    let loaded = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let weights = loaded.tensor("weights").unwrap();
    assert_eq!(weights.shape(), [2, 3]);
    assert_eq!(weights.data(), &basic_weights_bytes()[..]);
    let r = hrry(&["convert", s(&st), s(&back)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Nothing staged is left beside the outputs.
    assert_eq!(names(dir.path()), ["back.gguf", "m.gguf", "m.safetensors"]);
}

/// The float32 bytes of `weights` in corpus/valid/basic.hrry.
fn basic_weights_bytes() -> Vec<u8> {
    let bytes = std::fs::read(corpus("valid/basic.hrry")).unwrap();
    let file = hrry::HrryFile::from_bytes(&bytes).unwrap();
    let t = file.tensor("weights").unwrap().unwrap();
    t.buffers[0].to_vec()
}

#[test]
fn messages_name_the_file_and_point_at_the_way_out() {
    let dir = tempfile::tempdir().unwrap();
    // convert names the input it refuses.
    let bad = corpus("invalid/HF-CRC-001.hrry");
    let r = hrry(&["convert", &bad, s(&dir.path().join("x.safetensors"))]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("HF-CRC-001.hrry: HF-CRC-001"),
        "{}",
        r.stderr
    );
    // dequant of a dense integer tensor says to export it.
    let r = hrry(&["dequant", &corpus("valid/basic.hrry"), "bias", "--stats"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("hrry export"), "{}", r.stderr);
    // A safetensors download cut short is called truncated, header or data.
    let header = br#"{"w":{"dtype":"F32","shape":[64],"data_offsets":[0,256]}}"#;
    let mut whole = (header.len() as u64).to_le_bytes().to_vec();
    whole.extend_from_slice(header);
    whole.extend_from_slice(&[0; 256]);
    for cut in [20, whole.len() - 10] {
        let path = dir.path().join(format!("cut{cut}.safetensors"));
        std::fs::write(&path, &whole[..cut]).unwrap();
        let r = hrry(&["validate", s(&path)]);
        assert_eq!(r.code, 1);
        assert!(
            r.out().contains("truncated safetensors"),
            "{cut}: {}",
            r.out()
        );
    }
}

#[test]
fn human_output_escapes_quotes_and_counts_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.hrry");
    let mut w = HrryWriter::create(&path, WriterOptions::default()).unwrap();
    w.add_kv("motto", r#"say "hi" \ bye"#).unwrap();
    w.write_row_major::<f32>("only", &[1], &[1.0]).unwrap();
    w.finish_file().unwrap();
    let out = hrry(&["inspect", s(&path)]).out();
    assert!(out.contains(r#""say \"hi\" \\ bye""#), "{out}");
    assert!(
        out.contains("1 tensor,") && !out.contains("1 tensors"),
        "{out}"
    );
    assert!(out.contains("metadata (1 entry)"), "{out}");
    // One violation, said so.
    let out = hrry(&["validate", &corpus("invalid/HF-CRC-001.hrry")]).out();
    assert!(out.contains("INVALID (1 spec violation)"), "{out}");
    for text in [out, hrry(&["inspect", s(&path)]).out()] {
        assert!(!text.contains("(s)"), "{text}");
    }
}

#[test]
fn gguf_metadata_shows_its_gguf_type() {
    let dir = tempfile::tempdir().unwrap();
    // A GGUF version 3 file with no tensors and one uint32 key.
    let key = b"general.alignment";
    let mut gguf = b"GGUF".to_vec();
    gguf.extend_from_slice(&3u32.to_le_bytes());
    gguf.extend_from_slice(&0u64.to_le_bytes());
    gguf.extend_from_slice(&1u64.to_le_bytes());
    gguf.extend_from_slice(&(key.len() as u64).to_le_bytes());
    gguf.extend_from_slice(key);
    gguf.extend_from_slice(&4u32.to_le_bytes()); // UINT32
    gguf.extend_from_slice(&32u32.to_le_bytes());
    let src = dir.path().join("u.gguf");
    let out = dir.path().join("u.hrry");
    std::fs::write(&src, &gguf).unwrap();
    assert_eq!(hrry(&["convert", s(&src), s(&out)]).code, 0);
    let text = hrry(&["inspect", s(&out)]).out();
    let line = text
        .lines()
        .find(|l| l.contains("general.alignment"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("uint32"), "{line}");
}

#[test]
fn help_explains_sizes_and_widening() {
    let inspect = hrry(&["inspect", "--help"]).out();
    assert!(
        inspect.contains("BYTES") && inspect.contains("hrry fetch"),
        "{inspect}"
    );
    let fetch = hrry(&["fetch", "--help"]).out();
    assert!(fetch.contains("BYTES"), "{fetch}");
    let export = hrry(&["export", "--help"]).out();
    assert!(
        export.contains("bfloat16") && export.contains("float32"),
        "{export}"
    );
}

//! Files that change underneath a command, and paths that are not regular files.
//!
//! A file truncated and rewritten while `validate`, `inspect`, `export` and
//! `convert` read it: no run ends by a signal (the CLI reads with positioned reads,
//! never a mapping), no temporary output stays, and a run that exits 0 wrote what
//! one version of the file gives, entirely. Devices, FIFOs, `/proc` files and
//! directories get one message and exit code 2 from every command.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use hrry::file::{HrryWriter, WriterOptions};

struct Run {
    code: Option<i32>,
    signal: Option<i32>,
    stdout: Vec<u8>,
    stderr: String,
}

fn hrry(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_hrry"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("hrry runs");
    #[cfg(unix)]
    let signal = std::os::unix::process::ExitStatusExt::signal(&out.status);
    #[cfg(not(unix))]
    let signal = None;
    Run {
        code: out.status.code(),
        signal,
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// Tensors of each version, and their element count: large enough that reading
/// one takes a while, so that rewrites land mid-read.
const TENSORS: usize = 4;
const ELEMENTS: usize = 1 << 19;

/// One version of the file: the same names, shapes and size as the other, with
/// other values and another KV value (so that `inspect` shows which it read).
fn version(tag: u8) -> Vec<u8> {
    let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    w.add_kv("version", if tag == 0 { "first" } else { "other" })
        .unwrap();
    for t in 0..TENSORS {
        let values: Vec<f32> = (0..ELEMENTS)
            .map(|i| (i + t) as f32 + f32::from(tag) * 0.5)
            .collect();
        w.write_row_major::<f32>(&format!("t{t}"), &[ELEMENTS as u64], &values)
            .unwrap();
    }
    w.finish().unwrap()
}

/// What each command under test writes to `out` for the file at `input`, and
/// the command line.
fn command(name: &str, input: &Path, out: &Path) -> Vec<String> {
    let (i, o) = (s(input).to_string(), s(out).to_string());
    let v: Vec<&str> = match name {
        "validate" => vec!["validate", &i],
        "inspect" => vec!["inspect", "--json", &i],
        "export" => vec!["export", &i, "t3", "-o", &o],
        "export --all" => vec!["export", &i, "--all", &o],
        "convert" => vec!["convert", "--quiet", &i, &o, "--to", "safetensors"],
        other => panic!("{other}"),
    };
    v.into_iter().map(String::from).collect()
}

/// What a run's output is: its standard output, the file it wrote, or every file
/// of the folder it wrote (by name).
fn output_of(name: &str, run: &Run, out: &Path) -> Vec<(String, Vec<u8>)> {
    match name {
        "validate" => vec![],
        "inspect" => vec![("stdout".into(), run.stdout.clone())],
        "export --all" => {
            let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(out)
                .unwrap()
                .map(|e| {
                    let e = e.unwrap();
                    let name = e.file_name().to_string_lossy().into_owned();
                    (name, std::fs::read(e.path()).unwrap())
                })
                .collect();
            files.sort();
            files
        }
        _ => vec![("file".into(), std::fs::read(out).unwrap())],
    }
}

/// The names in `dir` that are temporary outputs.
fn temporaries(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for e in walk(dir) {
        let n = e.file_name().unwrap().to_string_lossy().into_owned();
        if n.starts_with(".hrry-tmp-") {
            found.push(n);
        }
    }
    found
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            }
            out.push(p);
        }
    }
    out
}

/// Rewrites `path` in place over and over, alternating the versions: truncate,
/// then write in pieces (so that readers also meet a file part written), then
/// leave it whole for a moment.
fn rewrite_until(stop: &AtomicBool, path: &Path, versions: &[Vec<u8>; 2]) {
    let mut turn = 0;
    while !stop.load(Ordering::Relaxed) {
        let bytes = &versions[turn % 2];
        let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
        f.set_len(0).unwrap();
        for piece in bytes.chunks(256 << 10) {
            f.write_all(piece).unwrap();
        }
        drop(f);
        std::thread::sleep(std::time::Duration::from_millis(3 + (turn % 7) as u64));
        turn += 1;
    }
}

#[test]
fn a_file_rewritten_while_read_is_an_error_never_a_signal_nor_two_versions() {
    let dir = tempfile::tempdir().unwrap();
    let versions = [version(0), version(1)];
    assert_eq!(versions[0].len(), versions[1].len());
    let names = ["validate", "inspect", "export", "export --all", "convert"];

    // What each command gives for each version, read from files nobody changes.
    let mut expected = Vec::new();
    for (v, bytes) in versions.iter().enumerate() {
        let input = dir.path().join(format!("stable{v}.hrry"));
        std::fs::write(&input, bytes).unwrap();
        let mut per_command = Vec::new();
        for name in names {
            let out = dir
                .path()
                .join(format!("expected-{v}-{}", name.replace(' ', "")));
            let args = command(name, &input, &out);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let r = hrry(&args);
            assert_eq!(r.code, Some(0), "{name} of version {v}: {}", r.stderr);
            // The file name is part of what inspect prints: the same for both.
            let mut got = output_of(name, &r, &out);
            for (_, bytes) in &mut got {
                *bytes = normalise(bytes, &input);
            }
            per_command.push(got);
        }
        expected.push(per_command);
    }
    assert_ne!(expected[0][2], expected[1][2], "the versions differ");

    let input = dir.path().join("changing.hrry");
    std::fs::write(&input, &versions[0]).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (stop, input, versions) = (Arc::clone(&stop), input.clone(), versions.clone());
        std::thread::spawn(move || rewrite_until(&stop, &input, &versions))
    };
    const RUNS: usize = 20;
    let mut failures = Vec::new();
    let mut codes = std::collections::BTreeMap::<(&str, Option<i32>), usize>::new();
    for run in 0..RUNS {
        for (c, name) in names.iter().enumerate() {
            let outputs = dir.path().join(format!("run{run}-{c}"));
            std::fs::create_dir(&outputs).unwrap();
            let out = outputs.join(if *name == "export --all" {
                "all"
            } else {
                "out"
            });
            let args = command(name, &input, &out);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let r = hrry(&args);
            *codes.entry((name, r.code)).or_default() += 1;
            if let Some(signal) = r.signal {
                failures.push(format!("{name}: ended by signal {signal}: {}", r.stderr));
            }
            let left = temporaries(&outputs);
            if !left.is_empty() {
                failures.push(format!("{name}: left {left:?}"));
            }
            match r.code {
                Some(0) => {
                    let mut got = output_of(name, &r, &out);
                    for (_, bytes) in &mut got {
                        *bytes = normalise(bytes, &input);
                    }
                    if got != expected[0][c] && got != expected[1][c] {
                        failures.push(format!("{name}: exit 0 with bytes of neither version"));
                    }
                }
                Some(1) => {}
                Some(2) => {
                    // An error names the file; a change is said to be one.
                    if !r.stderr.contains(s(&input)) {
                        failures.push(format!("{name}: exit 2 not naming the input: {}", r.stderr));
                    }
                }
                other => failures.push(format!("{name}: exit {other:?}: {}", r.stderr)),
            }
            std::fs::remove_dir_all(&outputs).unwrap();
        }
    }
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    println!("exit codes by command: {codes:?}");
    assert!(failures.is_empty(), "{failures:#?}");
}

/// `bytes` with the path of the input replaced by a fixed word (inspect prints it).
fn normalise(bytes: &[u8], input: &Path) -> Vec<u8> {
    let text = String::from_utf8_lossy(bytes);
    if !text.contains(s(input)) {
        return bytes.to_vec();
    }
    text.replace(s(input), "INPUT").into_bytes()
}

#[test]
fn a_change_between_reads_is_named_as_one() {
    // Deterministic: a file that grows after the export's open is refused at the
    // next read, naming it. The library's reader sees it at once.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.hrry");
    std::fs::write(&path, version(0)).unwrap();
    let file = hrry::file::OpenOptions::new().open_read(&path).unwrap();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(b"more").unwrap();
    drop(f);
    let e = file
        .tensor("t0")
        .err()
        .expect("the change is seen")
        .to_string();
    assert!(e.contains("changed while being read"), "{e}");
    // Rewritten in place with the other version (same length): refused too.
    std::fs::write(&path, version(0)).unwrap();
    let file = hrry::file::OpenOptions::new().open_read(&path).unwrap();
    std::fs::write(&path, version(1)).unwrap();
    let e = file
        .tensor("t0")
        .err()
        .expect("the change is seen")
        .to_string();
    assert!(e.contains("changed while being read"), "{e}");
}

/// Paths that are not regular files, each with what it is.
#[cfg(unix)]
fn special_files(dir: &Path) -> Vec<(String, &'static str)> {
    let mut v = vec![
        ("/dev/zero".to_string(), "a character device"),
        ("/dev/null".to_string(), "a character device"),
        (s(dir).to_string(), "a directory"),
    ];
    if Path::new("/proc/self/status").exists() {
        v.push(("/proc/self/status".into(), "as under /proc"));
    }
    let fifo = dir.join("pipe");
    let made = Command::new("mkfifo").arg(s(&fifo)).output();
    if made.is_ok_and(|o| o.status.success()) {
        v.push((s(&fifo).to_string(), "a FIFO"));
    }
    v
}

#[cfg(unix)]
#[test]
fn what_is_not_a_regular_file_gets_one_message_from_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let special = special_files(dir.path());
    for (path, what) in &special {
        let o = s(&out);
        let mut commands = vec![
            vec!["inspect", path.as_str()],
            vec!["inspect", "--json", path.as_str()],
            vec!["export", path.as_str(), "w", "-o", o],
            vec!["export", path.as_str(), "--all", o],
            vec!["dequant", path.as_str(), "w", "--stats"],
            vec!["stream", "pack", path.as_str(), "-o", o],
            vec![
                "holo",
                "extract",
                path.as_str(),
                "--section",
                "weights",
                "-o",
                o,
            ],
        ];
        // validate reads a FIFO whole, as it reads `-` (`hrry validate <(...)`),
        // and checks the files of a directory; convert reads a directory as a
        // sharded checkpoint.
        if *what != "a FIFO" && *what != "a directory" {
            commands.push(vec!["validate", path.as_str()]);
        }
        if *what != "a directory" {
            commands.push(vec!["convert", path.as_str(), o, "--to", "safetensors"]);
        }
        for args in commands {
            let r = hrry(&args);
            assert_eq!(r.code, Some(2), "{args:?}: {}", r.stderr);
            assert!(
                r.stderr.contains("not a regular file") && r.stderr.contains(what),
                "{args:?}: {}",
                r.stderr
            );
            assert!(r.stderr.contains(path.as_str()), "{args:?}: {}", r.stderr);
            assert!(!r.stderr.contains("os error"), "{args:?}: {}", r.stderr);
        }
    }
    assert!(!out.exists());
}

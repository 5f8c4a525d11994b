//! The memory budget held by construction: `hrry validate`, `hrry inspect` and
//! `hrry inspect --json` on every file of the hostile set (`hrry_testkit::hostile`:
//! KV arrays of each element type, sparse and dense; many tiny tensors; broadcast
//! tensors; nested composites; many KV entries; long names) each peak at most
//! 64 MiB plus twice the bytes the file has on disk, and end with an exit code,
//! never a signal. A test binary of its own: a child's peak resident memory as
//! `wait4` reports it can include what its parent held when it spawned it, so the
//! parent stays small while the children run.

#![cfg(target_os = "linux")]

use std::path::Path;
use std::process::{Command, Stdio};

use hrry_testkit::hostile::{bytes_on_disk, write_set, write_sparse_kv, HostileFile};

const MIB: u64 = 1 << 20;

/// How `hrry` ended: its exit code (`None` when a signal ended it), peak resident
/// memory in bytes, and what it wrote to standard error.
struct Ran {
    code: Option<i32>,
    signal: Option<i32>,
    peak: u64,
}

/// Runs `hrry args…` with its output discarded, measured by `wait4`.
fn run(args: &[&str]) -> Ran {
    // Reaped by wait4 below, which also gives its resource usage.
    #[allow(clippy::zombie_processes)]
    let child = Command::new(env!("CARGO_BIN_EXE_hrry"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("hrry runs");
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it and the status for our child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    // SAFETY: `pid` is our child, not waited for yet.
    assert_eq!(unsafe { libc::wait4(pid, &mut status, 0, &mut usage) }, pid);
    Ran {
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        signal: libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status)),
        peak: usage.ru_maxrss as u64 * 1024,
    }
}

/// Runs `validate`, `inspect` and `inspect --json` on `f`, adding to `failures`
/// each run that ends by a signal or an error, or peaks over 64 MiB plus twice
/// the bytes `f` has on disk.
fn check(f: &HostileFile, failures: &mut Vec<String>) {
    let disk = bytes_on_disk(&f.path).unwrap();
    let apparent = std::fs::metadata(&f.path).unwrap().len();
    let bound = 64 * MIB + 2 * disk;
    let path = f.path.to_str().unwrap();
    for command in [
        &["validate", path][..],
        &["inspect", path],
        &["inspect", "--json", path],
    ] {
        let ran = run(command);
        let shown = format!("hrry {} {}", command[..command.len() - 1].join(" "), f.name);
        eprintln!(
            "{shown}: {apparent} bytes ({disk} on disk), peak {:.1} MiB (bound {:.1}), exit {:?}",
            ran.peak as f64 / MIB as f64,
            bound as f64 / MIB as f64,
            ran.code
        );
        if ran.signal.is_some() || ran.code.is_none() {
            failures.push(format!("{shown}: ended by signal {:?}", ran.signal));
        } else if ran.code == Some(2) {
            failures.push(format!("{shown}: exit 2 (an error, not a verdict)"));
        }
        if ran.peak > bound {
            failures.push(format!(
                "{shown}: peak {} bytes, over 64 MiB + 2 x {disk} bytes on disk",
                ran.peak
            ));
        }
    }
}

#[test]
fn hostile_files_stay_within_the_memory_bound() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_set(dir.path(), 1).expect("the hostile set is written");
    let mut failures = Vec::new();
    for f in &files {
        check(f, &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A file nearly all holes (a 32 MiB KV array in 12 KiB on disk) is held once:
/// read into the decode pass's memory, never also mapped. Opening it through a
/// mapping, or through a mirror read back from its mapping, held its KV section
/// twice, 64 MiB and more, over the bound.
#[test]
fn a_file_of_holes_is_held_once() {
    let dir = tempfile::tempdir().unwrap();
    let f = write_sparse_kv(dir.path(), 32 << 20).expect("the sparse file is written");
    let mut failures = Vec::new();
    check(&f, &mut failures);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The budget's cap refuses a file whose metadata needs more, as a limit
/// violation naming `max_memory`, in both commands.
#[test]
fn a_file_past_the_cap_is_refused_naming_max_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kv.hrry");
    let mut w = hrry::file::HrryWriter::new(
        std::fs::File::create(&path).unwrap(),
        hrry::file::WriterOptions::default(),
    )
    .unwrap();
    w.add_kv("tokens", vec![1u64; 1 << 17]).unwrap();
    w.finish().unwrap();
    let out = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_hrry"))
            .args(args)
            .arg(&path)
            .output()
            .unwrap();
        let text =
            String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
        (o.status.code(), text)
    };
    for command in [&["validate"][..], &["inspect"], &["inspect", "--json"]] {
        let (code, text) = out(command);
        assert_eq!(code, Some(0), "{command:?} within the default cap: {text}");
        let mut capped = command.to_vec();
        capped.extend(["--max-memory", "512K"]);
        let (code, text) = out(&capped);
        assert!(matches!(code, Some(1 | 3)), "{capped:?}: {code:?} {text}");
        assert!(
            text.contains("HF-LIM-001") && text.contains("max_memory") && text.contains("KV"),
            "{capped:?}: {text}"
        );
    }
    assert!(Path::new(&path).exists());
}

/// Writes a `.holo` archive of `n` empty inline constants to `path`, streamed: the
/// children's peak counts what this process held when it spawned them, so it
/// holds no archive.
fn write_constants_archive(path: &Path, n: u32) {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut hasher = blake3::Hasher::new();
    let mut put = |bytes: &[u8]| {
        hasher.update(bytes);
        out.write_all(bytes).unwrap();
    };
    put(b"HOLO");
    put(&2u16.to_le_bytes()); // format_version
    put(&0u16.to_le_bytes()); // flags
    put(&1u16.to_le_bytes()); // section_count
    put(&[11, 0, 0, 0, 0, 0, 0, 0]); // Constants, padding
    put(&34u64.to_le_bytes()); // offset: after the header and the table
    put(&(4 + 10 * u64::from(n)).to_le_bytes());
    put(&n.to_le_bytes());
    for slot in 0..n {
        put(&[0]); // inline
        put(&slot.to_le_bytes());
        put(&[1]); // dtype
        put(&0u32.to_le_bytes()); // body_length
    }
    let footer = hasher.finalize();
    out.write_all(footer.as_bytes()).unwrap();
    out.flush().unwrap();
}

/// A `.holo` archive of 2 000 000 empty inline constants (20 MB, about 110 MB
/// decoded): `hrry validate` and `hrry inspect` read it within the default
/// budget, and with `--max-memory` refuse it as a limit violation naming
/// `max_memory`, within the bound of the hostile set.
#[test]
fn a_holo_archive_is_held_to_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("constants.holo");
    write_constants_archive(&path, 2_000_000);
    let disk = bytes_on_disk(&path).unwrap();
    let apparent = std::fs::metadata(&path).unwrap().len();
    let file = path.to_str().unwrap();
    for command in [&["validate", file][..], &["inspect", file]] {
        // Within the default budget: 16 MiB + 16 x the archive's bytes.
        let ran = run(command);
        assert_eq!(ran.code, Some(0), "{command:?}");
        let budget = 16 * MIB + 16 * apparent;
        assert!(
            ran.peak <= 64 * MIB + 2 * disk + budget,
            "{command:?}: peak {} bytes",
            ran.peak
        );
        let mut capped = command.to_vec();
        capped.extend(["--max-memory", "4M"]);
        let ran = run(&capped);
        assert!(
            matches!(ran.code, Some(1 | 3)),
            "{capped:?}: {:?}",
            ran.code
        );
        let bound = 64 * MIB + 2 * disk;
        assert!(
            ran.peak <= bound,
            "{capped:?}: peak {} bytes, bound {bound}",
            ran.peak
        );
        let o = Command::new(env!("CARGO_BIN_EXE_hrry"))
            .args(&capped)
            .output()
            .unwrap();
        let text =
            String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
        assert!(
            text.contains("HF-LIM-001")
                && text.contains("max_memory")
                && text.contains("Constants"),
            "{capped:?}: {text}"
        );
    }
}

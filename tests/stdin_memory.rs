//! Standard input that is large: `validate -` and `inspect -` need a HRRYFILE's bytes
//! at offsets, yet must not hold them in resident memory (they spool a pipe to a
//! temporary file and map it). A test binary of its own: a child's peak resident
//! memory as `wait4` reports it includes what its parent had when it spawned it,
//! so the parent must stay small.

#![cfg(target_os = "linux")]

use std::path::Path;
use std::process::{Command, Stdio};

use hrry::file::{HrryWriter, WriterOptions};
use hrry::model::build::dense;
use hrry::model::ElementType;

/// Runs hrry with `stdin` and returns its exit code and peak resident memory (KiB).
fn exit_and_peak_kib(args: &[&str], stdin: Stdio, feed: Option<&Path>) -> (i32, i64) {
    // Reaped by wait4 below, which also gives its resource usage.
    #[allow(clippy::zombie_processes)]
    let mut child = Command::new(env!("CARGO_BIN_EXE_hrry"))
        .args(args)
        .stdin(stdin)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("hrry runs");
    let feeder = feed.map(|path| {
        let mut pipe = child.stdin.take().expect("stdin");
        let mut file = std::fs::File::open(path).unwrap();
        std::thread::spawn(move || std::io::copy(&mut file, &mut pipe).map(drop))
    });
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it and the status for our child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    // SAFETY: `pid` is our child, not waited for yet.
    assert_eq!(unsafe { libc::wait4(pid, &mut status, 0, &mut usage) }, pid);
    if let Some(f) = feeder {
        f.join().unwrap().unwrap();
    }
    (libc::WEXITSTATUS(status), usage.ru_maxrss)
}

#[test]
fn large_standard_input_is_not_held_in_memory() {
    // 96 MiB of tensor data, piped and redirected: validate and inspect need the
    // bytes at offsets, yet must not keep them in resident memory.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.hrry");
    let mut w = HrryWriter::new(
        std::fs::File::create(&path).unwrap(),
        WriterOptions::default(),
    )
    .unwrap();
    let desc = dense(ElementType::Float32, &[6144, 4096]).unwrap();
    w.begin_tensor("big", &desc).unwrap();
    let row = vec![0u8; 4096 * 4];
    for _ in 0..6144 {
        w.write_data(&row).unwrap();
    }
    w.end_tensor().unwrap();
    w.finish().unwrap();
    assert!(std::fs::metadata(&path).unwrap().len() > 96 << 20);
    let limit_kib = 48 << 10;
    for args in [["validate", "-"], ["inspect", "-"]] {
        let (code, kib) = exit_and_peak_kib(&args, Stdio::piped(), Some(&path));
        assert_eq!(code, 0, "{args:?} from a pipe");
        assert!(kib < limit_kib, "{args:?} from a pipe: {kib} KiB resident");
        let redirected = Stdio::from(std::fs::File::open(&path).unwrap());
        let (code, kib) = exit_and_peak_kib(&args, redirected, None);
        assert_eq!(code, 0, "{args:?} from a file");
        assert!(kib < limit_kib, "{args:?} from a file: {kib} KiB resident");
    }
    // Nothing at all on standard input is an invalid file, not a crash.
    let (code, _) = exit_and_peak_kib(&["validate", "-"], Stdio::null(), None);
    assert_eq!(code, 1);
}

/// Writes a safetensors file of one float32 tensor of `rows` × 4096 (a pattern),
/// a row at a time; `bump` changes its last value.
fn large_safetensors(path: &Path, rows: usize, bump: bool) {
    use std::io::Write;
    let len = rows * 4096 * 4;
    let header =
        format!(r#"{{"w":{{"dtype":"F32","shape":[{rows},4096],"data_offsets":[0,{len}]}}}}"#);
    let mut h = header.into_bytes();
    while !h.len().is_multiple_of(8) {
        h.push(b' ');
    }
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    f.write_all(&(h.len() as u64).to_le_bytes()).unwrap();
    f.write_all(&h).unwrap();
    let row: Vec<u8> = (0..4096)
        .flat_map(|i| (i as f32 / 7.0).to_le_bytes())
        .collect();
    for r in 0..rows {
        if bump && r + 1 == rows {
            let mut last = row.clone();
            last[len / rows - 4..].copy_from_slice(&1e6f32.to_le_bytes());
            f.write_all(&last).unwrap();
        } else {
            f.write_all(&row).unwrap();
        }
    }
    f.flush().unwrap();
}

#[test]
fn diff_and_statistics_stream_in_bounded_memory() {
    // Two 96 MiB files compared value by value, and the statistics of one: the
    // values pass through pieces of a few MiB, never a whole tensor.
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (
        dir.path().join("a.safetensors"),
        dir.path().join("b.safetensors"),
    );
    large_safetensors(&a, 6144, false);
    large_safetensors(&b, 6144, true);
    let limit_kib = 48 << 10;
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let (code, kib) = exit_and_peak_kib(&["diff", a, b], Stdio::null(), None);
    assert_eq!(code, 1, "the last value differs");
    assert!(kib < limit_kib, "diff: {kib} KiB resident");
    let (code, kib) = exit_and_peak_kib(&["diff", a, a], Stdio::null(), None);
    assert_eq!(code, 0);
    assert!(kib < limit_kib, "diff: {kib} KiB resident");
    let (code, kib) = exit_and_peak_kib(&["inspect", "--stats", a], Stdio::null(), None);
    assert_eq!(code, 0);
    assert!(kib < limit_kib, "inspect --stats: {kib} KiB resident");
}

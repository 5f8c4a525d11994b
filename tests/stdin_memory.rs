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

//! Opening and validating a huge invalid file reads what the rules look at, never
//! the whole file: a 3 GiB sparse file with a valid header and a broken trailer is
//! refused by `hrry_open` and reported by `hrry_validate_path` in a child process
//! whose peak resident memory stays under 64 MiB.

use std::ffi::CString;
use std::io::{Seek, SeekFrom, Write};
use std::process::Command;
use std::ptr::null_mut;

use crate::*;

/// The environment variable that makes the test the child that does the work.
const CHILD: &str = "HRRY_CAPI_MEMORY_CHILD";
const TEST: &str = "tests::memory::a_3_gib_invalid_file_is_refused_in_bounded_memory";

#[test]
fn a_3_gib_invalid_file_is_refused_in_bounded_memory() {
    if let Ok(path) = std::env::var(CHILD) {
        return child(&path);
    }
    let dir = std::env::temp_dir().join(format!("hrry-capi-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("huge.hrry");
    let header = {
        let w = hrry::file::HrryWriter::new(Vec::new(), Default::default()).unwrap();
        w.finish().unwrap()[..64].to_vec()
    };
    let mut f = std::fs::File::create(&path).unwrap();
    f.write_all(&header).unwrap();
    let len = 3u64 << 30;
    f.set_len(len).unwrap();
    // The last 40 bytes: a trailer whose magic is not "HRRY".
    f.seek(SeekFrom::Start(len - 40)).unwrap();
    f.write_all(&[0xAB; 40]).unwrap();
    drop(f);
    let out = Command::new(std::env::current_exe().unwrap())
        .args([TEST, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, &path)
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let peak: u64 = stdout
        .split("peak resident KiB: ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no peak reported: {stdout}"));
    assert!(peak < 64 * 1024, "peak resident memory {peak} KiB");
}

/// Opens and validates `path`, checks the verdicts, prints the peak resident size.
fn child(path: &str) {
    let c = CString::new(path).unwrap();
    let mut f = null_mut();
    // SAFETY: a valid C string and output pointer.
    let status = unsafe { hrry_open(c.as_ptr(), &mut f) };
    assert_eq!(status, HRRY_INVALID);
    assert!(f.is_null());
    let message = unsafe { std::ffi::CStr::from_ptr(hrry_last_error()) }
        .to_string_lossy()
        .into_owned();
    assert!(message.contains("HF-TRL-001"), "{message}");
    let mut r = null_mut();
    // SAFETY: as above.
    let status = unsafe { hrry_validate_path(c.as_ptr(), 0, &mut r) };
    assert_eq!(status, HRRY_OK);
    // SAFETY: `r` is the report just produced.
    unsafe {
        assert_eq!(hrry_report_valid(r), 0);
        hrry_report_free(r);
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let peak = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .expect("VmHWM in /proc/self/status");
    println!("peak resident KiB: {peak}");
}

//! What `hrry export` may write: bounded by its input unless `--max-bytes` says
//! otherwise (tensors whose strides repeat their bytes), and a full disk reported
//! as the output's failure, stopping `--all` at once.

use std::path::Path;
use std::process::{Command, Stdio};

use hrry::file::{HrryWriter, WriterOptions};
use hrry::model::build::descriptor;
use hrry::schema::{LayoutFields, LAYOUT_STRIDED};

struct Run {
    code: Option<i32>,
    stderr: String,
}

fn hrry(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_hrry"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .expect("hrry runs");
    Run {
        code: out.status.code(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// A float32 tensor of `shape` whose strides are all 0: one stored element.
fn write_broadcast(w: &mut HrryWriter<Vec<u8>>, name: &str, shape: &[u64]) {
    let mut d = descriptor(
        hrry::model::ElementType::Float32.tag(),
        LAYOUT_STRIDED,
        shape,
        LayoutFields::Strided {
            strides: vec![0; shape.len()],
        },
        &[4],
    );
    d.fix_length();
    w.write_tensor(name, &d, &[&1.5f32.to_le_bytes()]).unwrap();
}

#[test]
fn a_small_file_of_broadcast_tensors_exports_within_its_bound() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("bomb.hrry");
    let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    // 64 MiB of values, then 4 MiB more, then 1 GiB, from one stored element each.
    write_broadcast(&mut w, "fits", &[4096, 4096]);
    write_broadcast(&mut w, "over_the_total", &[1024, 1024]);
    write_broadcast(&mut w, "huge", &[16384, 16384]);
    let bytes = w.finish().unwrap();
    assert!(bytes.len() < 16 << 10, "{} bytes", bytes.len());
    std::fs::write(&input, &bytes).unwrap();

    let one = dir.path().join("huge.npy");
    let r = hrry(&["export", s(&input), "huge", "-o", s(&one)]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("exceeds the limit"), "{}", r.stderr);
    assert!(r.stderr.contains("--max-bytes"), "{}", r.stderr);
    assert!(!one.exists());

    // The bound is for the whole export: the first tensor takes it.
    let all = dir.path().join("all");
    let r = hrry(&["export", s(&input), "--all", s(&all)]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(all.join("index.json")).unwrap()).unwrap();
    let tensors = index["tensors"].as_array().unwrap();
    assert_eq!(tensors[0]["file"], "fits.npy");
    for t in &tensors[1..] {
        assert!(
            t["error"].as_str().unwrap().contains("exceeds the limit"),
            "{t}"
        );
    }
    let written: u64 = std::fs::read_dir(&all)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    assert!(written < (64 << 20) + (1 << 20), "{written} bytes written");

    // --max-bytes lifts the total: each tensor under it is written.
    let small = dir.path().join("small.npy");
    let r = hrry(&[
        "export",
        s(&input),
        "over_the_total",
        "-o",
        s(&small),
        "--max-bytes",
        "5000000",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(std::fs::metadata(&small).unwrap().len(), 128 + (4 << 20));
}

/// A 1 MiB tmpfs mounted on a new folder (root only; `None` where mounting is not
/// allowed), unmounted when dropped.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount() -> Option<SmallDisk> {
        let dir = tempfile::tempdir().ok()?;
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1M", "tmpfs", s(dir.path())])
            .stderr(Stdio::piped())
            .output()
            .ok()?;
        if !out.status.success() {
            println!(
                "skipped: cannot mount a small tmpfs: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
            return None;
        }
        Some(SmallDisk { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(s(self.dir.path())).status();
    }
}

#[test]
fn a_full_disk_is_the_outputs_failure_and_stops_export_all() {
    let Some(disk) = SmallDisk::mount() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("m.hrry");
    let mut w = HrryWriter::create(&input, WriterOptions::default()).unwrap();
    let values = vec![0.5f32; 512 << 10];
    for name in ["first", "second"] {
        w.write_row_major::<f32>(name, &[values.len() as u64], &values)
            .unwrap();
    }
    w.finish_file().unwrap();

    let out = disk.path().join("first.npy");
    let r = hrry(&["export", s(&input), "first", "-o", s(&out)]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains(s(&out)), "names the output: {}", r.stderr);
    assert!(!r.stderr.contains(s(&input)), "not the input: {}", r.stderr);
    assert_eq!(
        std::fs::read_dir(disk.path()).unwrap().count(),
        0,
        "nothing is left"
    );

    let all = disk.path().join("all");
    let r = hrry(&["export", s(&input), "--all", s(&all)]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("first.npy"), "{}", r.stderr);
    assert!(
        !r.stderr.contains("second"),
        "stopped at once: {}",
        r.stderr
    );
    let left: Vec<_> = std::fs::read_dir(&all)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

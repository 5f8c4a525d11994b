//! `hrry dequant`: the `.npy` output holds the dequantized values in logical
//! row-major order, `--stats` prints min / max / mean / count, invalid tensors exit 1.

use std::process::Command;

use hrry::file::{HrryWriter, WriterOptions};
use hrry::quant::{quantize_per_block, PerBlockOptions};

fn hrry() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hrry"))
}

/// A file with a quantized tensor `w` ([3, 70] int4, blocks of 32: partial blocks)
/// and its dequantized values.
fn fixture(dir: &std::path::Path) -> (std::path::PathBuf, Vec<f32>) {
    let values: Vec<f32> = (0..210)
        .map(|i| ((i * 13 % 29) as f32 - 14.0) / 3.0)
        .collect();
    let q = quantize_per_block(&values, &[3, 70], &PerBlockOptions::default()).unwrap();
    let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    w.write_tensor("w", &q.descriptor, &q.buffer_slices())
        .unwrap();
    let bytes = w.finish().unwrap();
    let path = dir.join("q.hrry");
    std::fs::write(&path, bytes).unwrap();
    let want = hrry::quant::dequantize(&q.descriptor, &q.buffer_slices()).unwrap();
    (path, want)
}

#[test]
fn dequant_writes_npy_in_row_major_order() {
    let dir = tempfile::tempdir().unwrap();
    let (path, want) = fixture(dir.path());
    let out = dir.path().join("w.npy");
    let status = hrry()
        .args([
            "dequant",
            path.to_str().unwrap(),
            "w",
            "-o",
            out.to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(status.success());
    let npy = std::fs::read(&out).unwrap();
    assert_eq!(&npy[..6], b"\x93NUMPY");
    let header_len = u16::from_le_bytes([npy[8], npy[9]]) as usize;
    let header = std::str::from_utf8(&npy[10..10 + header_len]).unwrap();
    assert!(header.contains("'descr': '<f4'"), "{header}");
    assert!(header.contains("'shape': (3, 70)"), "{header}");
    let data: Vec<f32> = npy[10 + header_len..]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(data.len(), 210);
    for (a, b) in data.iter().zip(&want) {
        assert_eq!(a.to_bits(), b.to_bits());
    }
}

#[test]
fn dequant_stats_print_min_max_mean_count() {
    let dir = tempfile::tempdir().unwrap();
    let (path, want) = fixture(dir.path());
    let out = hrry()
        .args(["dequant", path.to_str().unwrap(), "w", "--stats", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let min = want.iter().copied().fold(f32::INFINITY, f32::min);
    let max = want.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mean = want.iter().map(|&x| f64::from(x)).sum::<f64>() / 210.0;
    assert_eq!(v["count"], 210);
    assert_eq!(v["min"].as_f64().unwrap(), f64::from(min));
    assert_eq!(v["max"].as_f64().unwrap(), f64::from(max));
    assert!((v["mean"].as_f64().unwrap() - mean).abs() < 1e-9);
    let text = hrry()
        .args(["dequant", path.to_str().unwrap(), "w", "--stats"])
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("count 210"), "{text}");
}

#[test]
fn dequant_of_an_invalid_tensor_exits_1_and_a_missing_one_2() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/corpus/invalid/QB-SCL-001.hrry"
    );
    let out = hrry()
        .args(["dequant", corpus, "q", "--stats"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("QB-SCL-001"));
    let (path, _) = fixture(dir.path());
    let out = hrry()
        .args(["dequant", path.to_str().unwrap(), "nope", "--stats"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

//! Writes a small model: KV metadata, a float32 tensor and a per-block int4
//! quantized tensor, then opens it again and checks what was written.
//!
//! `cargo run --example write_model [OUT.hrry]` (default: a file in the system's
//! temporary folder).

use std::path::PathBuf;

use hrry::file::{HrryWriter, WriterOptions};
use hrry::quant::{quantize_per_block, Dequantizer, PerBlockOptions};
use hrry::HrryFile;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args_os().nth(1).map_or_else(
        || std::env::temp_dir().join("hrry-write-model.hrry"),
        PathBuf::from,
    );

    // `create` writes a temporary file beside OUT and `finish_file` renames it into
    // place: a failure never leaves a partial file under OUT's name.
    let mut w = HrryWriter::create(&out, WriterOptions::default())?;
    w.add_kv("general.architecture", "mlp")?;
    w.add_kv("mlp.layers", 1u64)?;
    w.add_kv("mlp.learning_rate", 0.001)?;

    // A dense float32 tensor, written from a slice in row-major order.
    let bias: Vec<f32> = (0..8).map(|i| i as f32 * 0.5).collect();
    w.write_row_major::<f32>("layer0.bias", &[8], &bias)?;

    // A [8, 64] weight quantized to int4 in blocks of 32 along the last axis, with
    // float16 scales (symmetric); `quantize_per_block` builds the descriptor and
    // the buffers (codes, scales).
    let weight: Vec<f32> = (0..8 * 64)
        .map(|i| ((i % 64) as f32 - 32.0) / 16.0)
        .collect();
    let q = quantize_per_block(&weight, &[8, 64], &PerBlockOptions::default())?;
    w.write_tensor("layer0.weight", &q.descriptor, &q.buffer_slices())?;
    w.finish_file()?;

    // Read it back: the KV, the dense tensor as a borrowed slice, the quantized one
    // dequantized to float32 (within the quantization error of int4).
    let file = HrryFile::open(&out)?;
    let arch = file
        .kv_value("general.architecture")
        .and_then(|v| v.as_str());
    assert_eq!(arch, Some("mlp"));
    let t = file.tensor("layer0.bias")?.ok_or("no layer0.bias")?;
    assert_eq!(t.as_slice::<f32>()?, &bias[..]);
    let t = file.tensor("layer0.weight")?.ok_or("no layer0.weight")?;
    let restored = Dequantizer::new(t.descriptor, &t.buffers)?.to_vec()?;
    let worst = weight
        .iter()
        .zip(&restored)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    println!(
        "wrote {} ({} tensors, {} bytes); int4 weight: largest error {worst}",
        out.display(),
        file.len(),
        file.size()
    );
    assert!(worst < 0.2);
    Ok(())
}

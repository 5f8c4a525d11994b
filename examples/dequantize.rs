//! Dequantizes every quantized tensor of a file to float32 and prints a few
//! statistics of each (the values `hrry dequant` writes).
//!
//! `cargo run --example dequantize [FILE.hrry]` (default: a bundled per-block int4
//! model).

use std::path::PathBuf;

use hrry::quant::Dequantizer;
use hrry::HrryFile;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args_os().nth(1).map_or_else(
        || PathBuf::from("corpus/valid/quant-per-block-int4-f16.hrry"),
        PathBuf::from,
    );
    let file = HrryFile::open(&path)?;
    let mut quantized = 0;
    for entry in file.entries() {
        let t = file.tensor_at(entry)?;
        if !t.is_quantized() {
            continue; // a dense tensor: read it with `as_slice` or `hrry export`
        }
        quantized += 1;
        // The dequantizer reads the codes and the scale / zero-point buffers the
        // open already checked, with SIMD kernels where the CPU has them.
        let values = Dequantizer::new(t.descriptor, &t.buffers)?.to_vec()?;
        let (min, max) = values
            .iter()
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &v| {
                (lo.min(v), hi.max(v))
            });
        let mean = values.iter().map(|&v| f64::from(v)).sum::<f64>() / values.len().max(1) as f64;
        println!(
            "{}: {:?}, {} values, min {min}, max {max}, mean {mean:.4}",
            t.name(),
            t.shape(),
            values.len()
        );
    }
    let plural = if quantized == 1 { "" } else { "s" };
    println!("{}: {quantized} quantized tensor{plural}", path.display());
    Ok(())
}

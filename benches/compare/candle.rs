//! hrry against candle on the same values: GGUF `Q4_0` (int4 codes, one float16
//! scale per 32) and `Q8_0` (int8 codes, one float16 scale per 32) blocks, written
//! as a GGUF file for candle and as a per-block affine int4 / int8 tensor (float16
//! scales, blocks of 32, symmetric) for hrry. Both outputs are checked bit for bit.
//!
//! Run with `cargo bench` in this folder. It first prints the figures of
//! `cargo bench --bench dequant` (memcpy and scalar baselines, from the same file),
//! then the ratios candle time / hrry time (above 1: hrry is faster), each the best
//! of several interleaved runs.

#[path = "../dequant.rs"]
mod dequant;

use std::hint::black_box;
use std::io::Cursor;
use std::time::Duration;

use dequant::best;

use candle_core::quantized::gguf_file::Content;
use candle_core::quantized::k_quants::{BlockQ4_0, BlockQ8_0};
use candle_core::quantized::GgmlType;
use candle_core::Device;
use hrry::model::ElementType;
use hrry::quant::quantize::quantized_descriptor;
use hrry::quant::Dequantizer;
use hrry::schema::{
    PerBlockAffine, QuantScheme, QuantizationHeader, FLAG_SYMMETRIC, NO_ZERO_POINT_BUFFER,
    SCHEME_PER_BLOCK_AFFINE,
};

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Q4_0,
    Q8_0,
}

/// The same random blocks in both encodings.
struct Pair {
    gguf: Vec<u8>,
    desc: hrry::schema::TensorDescriptor,
    buffers: Vec<Vec<u8>>,
}

fn gguf_string(out: &mut Vec<u8>, s: &str) {
    out.extend((s.len() as u64).to_le_bytes());
    out.extend(s.as_bytes());
}

fn pair(kind: Kind, rows: usize, cols: usize) -> Pair {
    let mut rng = dequant::Rng(0x1234_5678_9ABC_DEF1);
    let blocks = rows * cols / 32;
    let (block_bytes, ggml_type, storage) = match kind {
        Kind::Q4_0 => (18, 2u32, ElementType::Int4),
        Kind::Q8_0 => (34, 8u32, ElementType::Int8),
    };
    let mut raw = Vec::with_capacity(blocks * block_bytes);
    let mut data = Vec::with_capacity(blocks * (block_bytes - 2));
    let mut scales = Vec::with_capacity(blocks * 2);
    for b in 0..blocks {
        let d = half::f16::from_f32(0.001 + (b % 101) as f32 * 1e-4).to_le_bytes();
        raw.extend(d);
        scales.extend(d);
        match kind {
            Kind::Q4_0 => {
                // GGUF: byte j holds element j (low nibble) and j + 16 (high), biased
                // by 8. hrry int4: two's complement, elements 2k / 2k + 1 per byte.
                // Code 0 (value -8 d) first: candle's Q4_0 quantizer then finds the
                // same d and codes again (see `kernel_pair`).
                let codes: Vec<u8> = (0..32)
                    .map(|i| if i == 0 { 0 } else { (rng.next_u64() & 0x0F) as u8 })
                    .collect();
                raw.extend((0..16).map(|j| codes[j] | (codes[j + 16] << 4)));
                let signed: Vec<u8> = codes.iter().map(|c| c ^ 0x08).collect();
                data.extend((0..16).map(|k| signed[2 * k] | (signed[2 * k + 1] << 4)));
            }
            Kind::Q8_0 => {
                // Codes in [-127, 127] with 127 first, for the same reason.
                let codes: Vec<u8> = (0..32)
                    .map(|i| {
                        if i == 0 {
                            127
                        } else {
                            (rng.next_u64() as i8).max(-127) as u8
                        }
                    })
                    .collect();
                raw.extend(&codes);
                data.extend(&codes);
            }
        }
    }

    // A one-tensor GGUF v3 file, no metadata, data aligned to 32.
    let mut gguf = b"GGUF".to_vec();
    gguf.extend(3u32.to_le_bytes());
    gguf.extend(1u64.to_le_bytes());
    gguf.extend(0u64.to_le_bytes());
    gguf_string(&mut gguf, "w");
    gguf.extend(2u32.to_le_bytes());
    gguf.extend((cols as u64).to_le_bytes());
    gguf.extend((rows as u64).to_le_bytes());
    gguf.extend(ggml_type.to_le_bytes());
    gguf.extend(0u64.to_le_bytes());
    while gguf.len() % 32 != 0 {
        gguf.push(0);
    }
    gguf.extend(raw);

    let scheme = QuantScheme::PerBlockAffine(PerBlockAffine::version1(1, 32, 0x01, true));
    let sizes = [data.len() as u64, scales.len() as u64];
    let desc = quantized_descriptor(
        storage.tag(),
        &[rows as u64, cols as u64],
        &sizes,
        scheme,
    );
    Pair {
        gguf,
        desc,
        buffers: vec![data, scales],
    }
}

/// candle blocks holding `values` (from candle's own quantizer, which reproduces the
/// codes and scales `pair` chose), and the time of its `to_float` into a buffer.
fn candle_kernel<T: GgmlType>(values: &[f32], out: &mut [f32], reps: usize) -> Duration {
    let mut blocks = vec![T::zeros(); values.len() / T::BLCK_SIZE];
    T::from_float(values, &mut blocks);
    T::to_float(&blocks, out);
    let same = out
        .iter()
        .zip(values)
        .all(|(a, b)| a.to_bits() == b.to_bits());
    assert!(same, "candle blocks do not hold the same values");
    best(reps, || {
        T::to_float(black_box(&blocks), out);
        black_box(&mut *out);
    })
}

fn main() -> candle_core::Result<()> {
    dequant::run();
    println!("\nhrry vs candle-core dequantization (same values), ratio = candle time / hrry time");
    for (label, rows, cols, reps) in [
        ("256 MiB output", 16384usize, 4096usize, 5usize),
        ("256 KiB output", 16, 4096, 200),
    ] {
        for kind in [Kind::Q4_0, Kind::Q8_0] {
            let p = pair(kind, rows, cols);
            let mut reader = Cursor::new(&p.gguf);
            let content = Content::read(&mut reader)?;
            let qt = content.tensor(&mut reader, "w", &Device::Cpu)?;
            let slices: Vec<&[u8]> = p.buffers.iter().map(Vec::as_slice).collect();
            let dq = Dequantizer::new(&p.desc, &slices).expect("valid tensor");

            let theirs = qt
                .dequantize(&Device::Cpu)?
                .flatten_all()?
                .to_vec1::<f32>()?;
            let ours = dq.to_vec().expect("dequantize");
            let same = theirs.len() == ours.len()
                && theirs
                    .iter()
                    .zip(&ours)
                    .all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(same, "candle and hrry disagree");

            // Allocating: candle's QTensor::dequantize (GGUF path) and hrry's to_vec.
            // Into a buffer: candle's block kernel (GgmlType::to_float) and hrry's
            // dequantize_into, both writing a pre-faulted buffer.
            let (mut t_candle, mut t_alloc) = (Duration::MAX, Duration::MAX);
            let (mut t_kernel, mut t_into) = (Duration::MAX, Duration::MAX);
            let mut out = vec![0.0f32; rows * cols];
            let per = (reps / 7).max(1);
            for _ in 0..reps.min(7) {
                t_candle = t_candle.min(best(per, || {
                    black_box(qt.dequantize(&Device::Cpu).unwrap());
                }));
                t_alloc = t_alloc.min(best(per, || {
                    black_box(dq.to_vec().unwrap());
                }));
                t_kernel = t_kernel.min(match kind {
                    Kind::Q4_0 => candle_kernel::<BlockQ4_0>(&ours, &mut out, per),
                    Kind::Q8_0 => candle_kernel::<BlockQ8_0>(&ours, &mut out, per),
                });
                t_into = t_into.min(best(per, || {
                    dq.dequantize_into(&mut out).unwrap();
                    black_box(&mut out);
                }));
            }
            let name = if kind == Kind::Q4_0 { "Q4_0" } else { "Q8_0" };
            let us = |t: Duration| t.as_secs_f64() * 1e6;
            println!(
                "  {label} {name}: allocating: candle {:>9.1} us, hrry {:>9.1} us, ratio {:.2} | into a buffer: candle {:>9.1} us, hrry {:>9.1} us, ratio {:.2}",
                us(t_candle),
                us(t_alloc),
                t_candle.as_secs_f64() / t_alloc.as_secs_f64(),
                us(t_kernel),
                us(t_into),
                t_kernel.as_secs_f64() / t_into.as_secs_f64(),
            );
        }
    }
    Ok(())
}

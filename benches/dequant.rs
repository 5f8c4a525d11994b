//! Dequantization throughput, as ratios against baselines measured in the same run.
//!
//! `cargo bench --bench dequant` prints:
//! - out of cache: dequantizing a tensor with 256 MiB of float32 output (int4 /
//!   float16 scales / blocks of 32, symmetric; the same with int8 and int2; the same
//!   int4 with zero points; NF4; MXFP4) against `memcpy` of 256 MiB (ratio = memcpy time / dequant time,
//!   so 1.0 means "as fast as copying the output");
//! - in cache (256 KiB of output): the SIMD kernels against the scalar kernels.
//!
//! Each figure is the best of several repetitions. `benches/compare` runs the same
//! measurements (this file is its module `dequant`) before comparing with candle.

use std::hint::black_box;
use std::time::{Duration, Instant};

use hrry::model::ElementType;
use hrry::quant::quantize::quantized_descriptor;
use hrry::quant::{Dequantizer, Kernel};
use hrry::schema::{BlockScaled, PerBlockAffine, QuantScheme, SCHEME_MXFP, SCHEME_NF4};

/// xorshift64*.
pub struct Rng(pub u64);
impl Rng {
    /// The next random word.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut v = Vec::with_capacity(n + 8);
        while v.len() < n {
            v.extend_from_slice(&self.next_u64().to_le_bytes());
        }
        v.truncate(n);
        v
    }
}

#[derive(Clone, Copy)]
enum Scheme {
    Affine { symmetric: bool },
    Nf4,
    Mxfp,
}

struct Tensor {
    desc: hrry::schema::TensorDescriptor,
    buffers: Vec<Vec<u8>>,
}

/// A row-major [rows, cols] tensor with random codes and parameters, blocks of 32
/// along the last axis.
fn tensor(scheme: Scheme, storage: ElementType, rows: u64, cols: u64) -> Tensor {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let k = 32u64;
    let blocks = (rows * cols / k) as usize;
    let n = (rows * cols) as usize;
    let data = rng.bytes(storage.buffer_size(n as u64).unwrap() as usize);
    let (q, params) = match scheme {
        Scheme::Affine { symmetric } => {
            let scales: Vec<u8> = (0..blocks)
                .flat_map(|i| half::f16::from_f32(0.01 + (i % 97) as f32 * 1e-3).to_le_bytes())
                .collect();
            let mut params = vec![scales];
            if !symmetric {
                params.push(
                    (0..blocks)
                        .flat_map(|i| ((i % 11) as i32 - 5).to_le_bytes())
                        .collect(),
                );
            }
            let d = PerBlockAffine::version1(1, k as u32, 0x01, symmetric);
            (QuantScheme::PerBlockAffine(d), params)
        }
        Scheme::Nf4 => {
            let scales = (0..blocks)
                .flat_map(|i| (0.5 + (i % 13) as f32).to_le_bytes())
                .collect();
            let d = BlockScaled::version1(SCHEME_NF4, 1, k as u32);
            (QuantScheme::Nf4(d), vec![scales])
        }
        Scheme::Mxfp => {
            let scales = (0..blocks).map(|i| 120 + (i % 15) as u8).collect();
            let d = BlockScaled::version1(SCHEME_MXFP, 1, k as u32);
            (QuantScheme::Mxfp(d), vec![scales])
        }
    };
    let mut buffers = vec![data];
    buffers.extend(params);
    let sizes: Vec<u64> = buffers.iter().map(|b| b.len() as u64).collect();
    Tensor {
        desc: quantized_descriptor(storage.tag(), &[rows, cols], &sizes, q),
        buffers,
    }
}

/// Best time of `reps` runs of `f`.
pub fn best(reps: usize, mut f: impl FnMut()) -> Duration {
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap()
}

fn gbs(bytes: usize, t: Duration) -> f64 {
    bytes as f64 / t.as_secs_f64() / 1e9
}

#[allow(dead_code)] // unused where `benches/compare` compiles this file as a module
fn main() {
    run();
}

/// Prints every figure described in the module comment.
pub fn run() {
    // `cargo bench` passes `--bench`; a filter argument is accepted and ignored.
    const OUT_BYTES: usize = 256 << 20;
    const COLS: u64 = 4096;
    let n = OUT_BYTES / 4;
    let rows = n as u64 / COLS;
    println!(
        "dequant benchmark: SIMD kernels {}",
        if is_x86_feature_detected_all() {
            "available (AVX2+F16C)"
        } else {
            "NOT available: scalar fallback"
        }
    );

    // Baseline: memcpy of 256 MiB between two pre-faulted buffers, timed in turns
    // with each dequantization (the machine is shared: interleaving keeps both
    // figures under the same load).
    let src: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let mut dst = vec![1.0f32; n];
    let cases = [
        (
            "int4 / float16 scales / block 32 / symmetric",
            Scheme::Affine { symmetric: true },
            ElementType::Int4,
        ),
        (
            "int8 / float16 scales / block 32 / symmetric",
            Scheme::Affine { symmetric: true },
            ElementType::Int8,
        ),
        (
            "int4 / float16 scales / block 32 / zero points",
            Scheme::Affine { symmetric: false },
            ElementType::Int4,
        ),
        (
            "int2 / float16 scales / block 32 / symmetric",
            Scheme::Affine { symmetric: true },
            ElementType::Int2,
        ),
        ("NF4 / block 32", Scheme::Nf4, ElementType::Uint4),
        (
            "MXFP4 float4_e2m1 / block 32",
            Scheme::Mxfp,
            ElementType::Float4E2m1,
        ),
    ];
    println!("\nout of cache: 256 MiB of float32 output, ratio = memcpy time / dequant time (target >= 0.9)");
    for (name, scheme, storage) in cases {
        let t = tensor(scheme, storage, rows, COLS);
        let slices: Vec<&[u8]> = t.buffers.iter().map(Vec::as_slice).collect();
        let dq = Dequantizer::new(&t.desc, &slices).expect("valid tensor");
        let (mut copy, mut time) = (Duration::MAX, Duration::MAX);
        for _ in 0..7 {
            copy = copy.min(best(1, || {
                dst.copy_from_slice(black_box(&src));
                black_box(&mut dst);
            }));
            time = time.min(best(1, || {
                dq.dequantize_into(&mut dst).unwrap();
                black_box(&mut dst);
            }));
        }
        println!(
            "  {name:<48} {:>7.2} ms {:>5.2} GB/s | memcpy {:>7.2} ms {:>5.2} GB/s | ratio {:.2}",
            time.as_secs_f64() * 1e3,
            gbs(OUT_BYTES, time),
            copy.as_secs_f64() * 1e3,
            gbs(OUT_BYTES, copy),
            copy.as_secs_f64() / time.as_secs_f64()
        );
    }
    drop(src);
    drop(dst);

    // In cache: 256 KiB of output, SIMD against scalar kernels.
    const SMALL: usize = 256 << 10;
    let small_rows = (SMALL / 4) as u64 / COLS;
    let mut out = vec![0.0f32; SMALL / 4];
    println!("\nin cache: 256 KiB of float32 output, SIMD speed-up over the scalar kernels (target >= 6)");
    for (name, scheme, storage) in cases {
        let t = tensor(scheme, storage, small_rows, COLS);
        let slices: Vec<&[u8]> = t.buffers.iter().map(Vec::as_slice).collect();
        let mut dq = Dequantizer::new(&t.desc, &slices).expect("valid tensor");
        let mut time = |kernel| {
            dq.set_kernel(kernel);
            best(1, || {
                for _ in 0..50 {
                    dq.dequantize_into(&mut out).unwrap();
                    black_box(&mut out);
                }
            }) / 50
        };
        // Interleaved, best of 11 each: both kernels see the same load.
        let (mut simd, mut scalar) = (Duration::MAX, Duration::MAX);
        for _ in 0..11 {
            simd = simd.min(time(Kernel::Auto));
            scalar = scalar.min(time(Kernel::Scalar));
        }
        println!(
            "  {name:<48} SIMD {:>7.1} us ({:>6.2} GB/s)  scalar {:>7.1} us ({:>6.2} GB/s)  speed-up {:.1}x",
            simd.as_secs_f64() * 1e6,
            gbs(SMALL, simd),
            scalar.as_secs_f64() * 1e6,
            gbs(SMALL, scalar),
            scalar.as_secs_f64() / simd.as_secs_f64()
        );
    }
}

#[cfg(target_arch = "x86_64")]
fn is_x86_feature_detected_all() -> bool {
    is_x86_feature_detected!("avx2") && is_x86_feature_detected!("f16c")
}

#[cfg(not(target_arch = "x86_64"))]
fn is_x86_feature_detected_all() -> bool {
    false
}

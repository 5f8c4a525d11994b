//! Opening and verifying a 512 MiB `.holo` archive, against hashing the same bytes
//! with the `blake3` crate in the same run.
//!
//! Run with `cargo bench --bench holo_verify`. Set `HOLO_BENCH_MIB` to change the
//! archive size. Both sides read the same file through an mmap, from the page
//! cache (the file is read once before timing); each figure is the best of
//! several rounds.
//!
//! Verification hashes more than the baseline: the footer covers every byte and
//! each weight body is hashed again to check its fingerprint. The loader runs the
//! footer hash on a second thread while it walks the sections, and the baseline is
//! the plain single-call `blake3::hash` a user would run (no rayon on either side),
//! so the sequential cost is printed too.

use std::time::{Duration, Instant};

use hrry::holo::{HoloLoader, HoloWriter, WeightStore};
use memmap2::Mmap;

const ROUNDS: usize = 5;
const BODIES: usize = 8;

fn best<T>(mut f: impl FnMut() -> T) -> Duration {
    let mut best = Duration::MAX;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        std::hint::black_box(f());
        best = best.min(start.elapsed());
    }
    best
}

fn body(seed: u64, len: usize) -> Vec<u8> {
    // xorshift64*: incompressible-looking, cheap to make.
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        let v = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.truncate(len);
    out
}

fn gib_per_s(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / d.as_secs_f64() / (1u64 << 30) as f64
}

fn main() {
    let mib: usize = std::env::var("HOLO_BENCH_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(512);
    let per_body = mib * (1 << 20) / BODIES;

    let mut weights = WeightStore::new();
    for i in 0..BODIES {
        weights.insert(body(i as u64 + 1, per_body));
    }
    let mut writer = HoloWriter::new();
    writer
        .set_weights(weights)
        .set_metadata(b"bench".to_vec())
        .add_extension("tokenizer", vec![7; 4096]);
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("bench.holo");
    writer.write_to_path(&path).expect("write archive");
    drop(writer);

    let file = std::fs::File::open(&path).expect("open archive");
    // SAFETY: read-only mapping of a file this process just wrote and nobody else
    // changes while the benchmark runs.
    let map = unsafe { Mmap::map(&file) }.expect("map archive");
    let len = map.len();
    // Fault the pages in once so both sides read from the page cache.
    let mut touch = 0u8;
    for chunk in map.chunks(4096) {
        touch ^= chunk[0];
    }
    std::hint::black_box(touch);

    let hash_all = best(|| blake3::hash(&map));
    let open_verify = best(|| {
        HoloLoader::open(&path)
            .expect("valid archive")
            .fingerprint()
    });
    let verify_mapped = best(|| {
        HoloLoader::from_bytes(&map)
            .expect("valid archive")
            .fingerprint()
    });
    let archive = HoloLoader::from_bytes(&map).expect("valid archive");
    let weight_bytes: usize = archive.weights().map(|(_, b)| b.len()).sum();
    let hash_bodies = best(|| archive.weights().map(|(_, b)| blake3::hash(b)).last());

    println!(
        "holo_verify: archive {} bytes ({} MiB), {} weight bodies, {} weight bytes",
        len,
        len >> 20,
        archive.weight_count(),
        weight_bytes
    );
    println!(
        "  baseline blake3::hash(all bytes):        {:>9.3} ms  {:>6.2} GiB/s",
        hash_all.as_secs_f64() * 1e3,
        gib_per_s(len, hash_all)
    );
    println!(
        "  HoloLoader::open(path) (mmap + verify):  {:>9.3} ms  {:>6.2} GiB/s",
        open_verify.as_secs_f64() * 1e3,
        gib_per_s(len, open_verify)
    );
    println!(
        "  HoloLoader::from_bytes(mapped bytes):    {:>9.3} ms  {:>6.2} GiB/s",
        verify_mapped.as_secs_f64() * 1e3,
        gib_per_s(len, verify_mapped)
    );
    println!(
        "  blake3 of the weight bodies alone:       {:>9.3} ms",
        hash_bodies.as_secs_f64() * 1e3
    );
    let ratio = hash_all.as_secs_f64() / open_verify.as_secs_f64();
    let ratio_mapped = hash_all.as_secs_f64() / verify_mapped.as_secs_f64();
    let sequential = hash_all + hash_bodies;
    println!("  ratio (baseline time / open+verify time): {ratio:.3}  (target >= 0.9)");
    println!("  ratio (baseline time / from_bytes time):  {ratio_mapped:.3}");
    println!(
        "  for reference, one-thread verification would cost about baseline + bodies = {:.3} ms, ratio {:.3}",
        sequential.as_secs_f64() * 1e3,
        hash_all.as_secs_f64() / sequential.as_secs_f64()
    );
}

//! Opening and indexing a file of many small tensors, against `safetensors` reading
//! an equivalent file in the same run.
//!
//! Run with `cargo bench --bench open_index`. `HRRY_BENCH_RUNS` sets the number of
//! timed runs per measurement (default 9; the median is reported, and the minimum
//! beside it). `HRRY_BENCH_TENSORS` overrides the large tensor count (100 000).
//!
//! What each side does, every run, from a closed file already in the page cache:
//!
//! - hrry: `HrryFile::open` (open + mmap; header, trailer, CRC-32C of the index, index
//!   decode, name checks), then walks `entries()` reading every name; for (b) it also
//!   parses every descriptor with `HrryFile::descriptor` (each one on its own page,
//!   since every tensor has a 4096-aligned data buffer) and reads type tag and shape.
//! - safetensors (mmap): `File::open` + `memmap2::Mmap::map` + `SafeTensors::deserialize`
//!   (reads the JSON header into its metadata), then `names()`; for (b) `iter()` reading
//!   dtype and shape. This is the same file access as hrry's.
//! - safetensors (read): the same with `std::fs::read` of the whole file instead of a
//!   map (the file is 20x smaller than the hrry one, whose data is never touched).
//!
//! Ratios are safetensors time / hrry time (above 1: hrry is faster).

use std::fs::File;
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use hrry::file::{HrryFile, HrryWriter, WriterOptions};
use hrry::schema::{BufferHandle, DescriptorFlags, LayoutFields, TensorDescriptor};
use safetensors::tensor::{serialize_to_file, Dtype, SafeTensors, TensorView};

/// One kind of tensor the files cycle through: name part, hrry type tag, safetensors
/// dtype, element size in bytes, shape. Several dtypes and ranks 1 to 4.
struct Kind {
    part: &'static str,
    type_tag: u8,
    dtype: Dtype,
    element_bytes: u64,
    shape: &'static [u64],
}

const KINDS: [Kind; 8] = [
    Kind {
        part: "self_attn.q_proj.weight",
        type_tag: 0x03,
        dtype: Dtype::F32,
        element_bytes: 4,
        shape: &[4, 8],
    },
    Kind {
        part: "self_attn.k_proj.weight",
        type_tag: 0x01,
        dtype: Dtype::F16,
        element_bytes: 2,
        shape: &[16, 4],
    },
    Kind {
        part: "self_attn.v_proj.bias",
        type_tag: 0x02,
        dtype: Dtype::BF16,
        element_bytes: 2,
        shape: &[64],
    },
    Kind {
        part: "self_attn.o_proj.qweight",
        type_tag: 0x10,
        dtype: Dtype::I8,
        element_bytes: 1,
        shape: &[2, 4, 8],
    },
    Kind {
        part: "mlp.gate_proj.g_idx",
        type_tag: 0x14,
        dtype: Dtype::I32,
        element_bytes: 4,
        shape: &[8, 2, 2],
    },
    Kind {
        part: "mlp.up_proj.weight",
        type_tag: 0x04,
        dtype: Dtype::F64,
        element_bytes: 8,
        shape: &[2, 2, 2, 2],
    },
    Kind {
        part: "mlp.down_proj.mask",
        type_tag: 0x11,
        dtype: Dtype::U8,
        element_bytes: 1,
        shape: &[128],
    },
    Kind {
        part: "input_layernorm.position",
        type_tag: 0x16,
        dtype: Dtype::I64,
        element_bytes: 8,
        shape: &[3, 5],
    },
];

fn kind(i: usize) -> &'static Kind {
    &KINDS[i % KINDS.len()]
}

fn name(i: usize) -> String {
    format!("model.layers.{}.{}", i / KINDS.len(), kind(i).part)
}

fn byte_size(k: &Kind) -> u64 {
    k.shape.iter().product::<u64>() * k.element_bytes
}

fn descriptor(k: &Kind) -> TensorDescriptor {
    let mut d = TensorDescriptor {
        version_major: 1,
        version_minor: 0,
        descriptor_length: 0,
        flags: DescriptorFlags::new(),
        type_tag: k.type_tag,
        layout_tag: hrry::schema::LAYOUT_ROW_MAJOR,
        shape: k.shape.to_vec(),
        byte_offset: 0,
        layout: LayoutFields::Implicit,
        buffers: vec![BufferHandle {
            byte_size: byte_size(k),
            alignment: 64,
            device_tag: 0,
            reserved: [0; 3],
        }],
        quantization: None,
        shard: None,
        statistics: None,
        extension_type: None,
        composite_member: None,
        trailing: Vec::new(),
    };
    d.fix_length();
    d
}

fn write_hrry(path: &Path, n: usize, sorted_index: bool) {
    let options = WriterOptions {
        sorted_index,
        tensor_count_hint: Some(n as u64),
        ..WriterOptions::default()
    };
    let descriptors: Vec<TensorDescriptor> = KINDS.iter().map(descriptor).collect();
    let data = vec![0u8; 256];
    let mut w = HrryWriter::create(path, options).expect("create hrry file");
    for i in 0..n {
        let k = kind(i);
        let bytes = &data[..byte_size(k) as usize];
        w.write_tensor(&name(i), &descriptors[i % KINDS.len()], &[bytes])
            .expect("write tensor");
    }
    w.finish_file().expect("finish hrry file");
}

fn write_safetensors(path: &Path, n: usize) {
    let data = vec![0u8; 256];
    let views: Vec<(String, TensorView<'_>)> = (0..n)
        .map(|i| {
            let k = kind(i);
            let shape = k.shape.iter().map(|&d| d as usize).collect();
            let view = TensorView::new(k.dtype, shape, &data[..byte_size(k) as usize])
                .expect("tensor view");
            (name(i), view)
        })
        .collect();
    serialize_to_file(views, None, path).expect("write safetensors file");
}

// ---- the measured operations; each returns a checksum so nothing is optimised out.

fn hrry_names(path: &Path) -> usize {
    let f = HrryFile::open(path).expect("open hrry");
    f.entries().map(|e| e.name().len()).sum()
}

fn hrry_descriptors(path: &Path) -> usize {
    let f = HrryFile::open(path).expect("open hrry");
    let mut sum = 0usize;
    for e in f.entries() {
        let d = f.descriptor(e).expect("descriptor");
        sum += e.name().len() + usize::from(d.type_tag) + d.shape.iter().sum::<u64>() as usize;
    }
    sum
}

fn st_names(st: &SafeTensors<'_>) -> usize {
    st.names().iter().map(|n| n.len()).sum()
}

fn st_descriptors(st: &SafeTensors<'_>) -> usize {
    st.iter()
        .map(|(name, view)| {
            name.len() + view.dtype().bitsize() + view.shape().iter().sum::<usize>()
        })
        .sum()
}

fn st_mmap(path: &Path, f: fn(&SafeTensors<'_>) -> usize) -> usize {
    let file = File::open(path).expect("open safetensors");
    // SAFETY: read-only private map of a file this benchmark created and does not
    // modify while mapped.
    let map = unsafe { memmap2::Mmap::map(&file) }.expect("map safetensors");
    let st = SafeTensors::deserialize(&map).expect("deserialize");
    f(&st)
}

fn st_read(path: &Path, f: fn(&SafeTensors<'_>) -> usize) -> usize {
    let bytes = std::fs::read(path).expect("read safetensors");
    let st = SafeTensors::deserialize(&bytes).expect("deserialize");
    f(&st)
}

// ---- timing

struct Timing {
    median: Duration,
    min: Duration,
}

fn time(runs: usize, mut f: impl FnMut() -> usize) -> Timing {
    black_box(f()); // warm-up: page cache, allocator
    let mut samples: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            black_box(f());
            t.elapsed()
        })
        .collect();
    samples.sort();
    Timing {
        median: samples[samples.len() / 2],
        min: samples[0],
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn row(label: &str, t: &Timing) {
    println!(
        "  {label:<44} {:>10.3} ms  (min {:>9.3} ms)",
        ms(t.median),
        ms(t.min)
    );
}

fn ratio(label: &str, baseline: &Timing, ours: &Timing, target: &str) {
    println!(
        "  {label:<44} {:>9.1}x   {target}",
        baseline.median.as_secs_f64() / ours.median.as_secs_f64()
    );
}

/// A deterministic shuffle of the names 0..n (xorshift Fisher–Yates).
fn shuffled_names(n: usize) -> Vec<String> {
    let mut names: Vec<String> = (0..n).map(name).collect();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    for i in (1..n).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        names.swap(i, (state % (i as u64 + 1)) as usize);
    }
    names
}

/// Per-lookup time of `find` for every name, and the time of the first lookup after
/// opening (which builds the name order for an unsorted index).
fn lookups(path: &Path, n: usize, runs: usize) -> (Timing, Timing) {
    let names = shuffled_names(n);
    let first = time(runs, || {
        let f = HrryFile::open(path).expect("open hrry");
        f.find(&names[0]).map_or(0, |e| e.position())
    });
    let f = HrryFile::open(path).expect("open hrry");
    let all = time(runs, || {
        names
            .iter()
            .map(|name| f.find(name).expect("every name is found").position())
            .sum()
    });
    let per = |t: Duration| t / n as u32;
    (
        Timing {
            median: per(all.median),
            min: per(all.min),
        },
        first,
    )
}

fn main() {
    let runs: usize = std::env::var("HRRY_BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(9)
        .max(1);
    let big: usize = std::env::var("HRRY_BENCH_TENSORS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000)
        .max(2);
    let small = (big / 10).max(1);

    // HRRY_BENCH_DIR keeps the generated files in that directory (for profiling).
    let kept = std::env::var_os("HRRY_BENCH_DIR").map(std::path::PathBuf::from);
    let temp = tempfile::tempdir().expect("temp dir");
    let dir = kept.unwrap_or_else(|| temp.path().to_path_buf());
    let path = |s: &str| dir.join(s);
    let t = Instant::now();
    write_hrry(&path("big.hrry"), big, false);
    write_hrry(&path("big-sorted.hrry"), big, true);
    write_hrry(&path("small.hrry"), small, false);
    write_hrry(&path("small-sorted.hrry"), small, true);
    write_safetensors(&path("big.safetensors"), big);
    let size = |s: &str| std::fs::metadata(path(s)).map_or(0, |m| m.len());
    println!(
        "open_index: {big} tensors ({} kinds, ranks 1-4, one 4096-aligned buffer each); \
         hrry file {:.1} MB, safetensors file {:.1} MB; written in {:.1} s; median of {runs} runs, warm page cache",
        KINDS.len(),
        size("big.hrry") as f64 / 1e6,
        size("big.safetensors") as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );
    assert_eq!(
        hrry_names(&path("big.hrry")),
        st_read(&path("big.safetensors"), st_names),
        "both files hold the same names"
    );
    assert_eq!(
        hrry_descriptors(&path("big.hrry")),
        (0..big)
            .map(|i| {
                let k = kind(i);
                name(i).len() + usize::from(k.type_tag) + k.shape.iter().sum::<u64>() as usize
            })
            .sum::<usize>(),
        "hrry descriptors read back as written"
    );

    let hb = path("big.hrry");
    let sb = path("big.safetensors");

    println!("\n(a) open + list all names");
    let a_st_map = time(runs, || st_mmap(&sb, st_names));
    let a_st_read = time(runs, || st_read(&sb, st_names));
    let a_hrry = time(runs, || hrry_names(&hb));
    row("safetensors (mmap + deserialize + names)", &a_st_map);
    row("safetensors (fs::read + deserialize + names)", &a_st_read);
    row("hrry (HrryFile::open + entries)", &a_hrry);

    println!("\n(b) open + list names, dtypes and shapes");
    let b_st_map = time(runs, || st_mmap(&sb, st_descriptors));
    let b_st_read = time(runs, || st_read(&sb, st_descriptors));
    let b_hrry = time(runs, || hrry_descriptors(&hb));
    row("safetensors (mmap + deserialize + iter)", &b_st_map);
    row("safetensors (fs::read + deserialize + iter)", &b_st_read);
    row("hrry (open + entries + descriptor each)", &b_hrry);

    println!("\nratios (safetensors / hrry, median)");
    ratio(
        "(a) names vs safetensors mmap",
        &a_st_map,
        &a_hrry,
        "target >= 20x",
    );
    ratio(
        "(a) names vs safetensors fs::read",
        &a_st_read,
        &a_hrry,
        "target >= 20x",
    );
    ratio(
        "(b) descriptors vs safetensors mmap",
        &b_st_map,
        &b_hrry,
        "target > 1x",
    );
    ratio(
        "(b) descriptors vs safetensors fs::read",
        &b_st_read,
        &b_hrry,
        "target > 1x",
    );

    println!("\n(c) HrryFile::find for every name, shuffled order (time per lookup)");
    let mut per_lookup = Vec::new();
    for (label, file, n) in [
        ("sorted index", "small-sorted.hrry", small),
        ("sorted index", "big-sorted.hrry", big),
        ("unsorted index", "small.hrry", small),
        ("unsorted index", "big.hrry", big),
    ] {
        let (per, first) = lookups(&path(file), n, runs);
        println!(
            "  {label:<15} {n:>7} tensors  {:>8.1} ns/lookup  (min {:>7.1})   open + first lookup {:>8.3} ms",
            per.median.as_secs_f64() * 1e9,
            per.min.as_secs_f64() * 1e9,
            ms(first.median)
        );
        per_lookup.push(per.median.as_secs_f64());
    }
    let growth = |small: f64, big: f64| big / small;
    println!(
        "  per-lookup growth {small} -> {big}: sorted {:.2}x, unsorted {:.2}x \
         (log2 ratio {:.2}x; linear would be {:.0}x)",
        growth(per_lookup[0], per_lookup[1]),
        growth(per_lookup[2], per_lookup[3]),
        (big as f64).log2() / (small as f64).log2(),
        big as f64 / small as f64
    );
}

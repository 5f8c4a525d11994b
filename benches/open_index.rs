//! Opening and indexing a file of many small tensors, against `safetensors` 0.8
//! reading an equivalent file in the same run.
//!
//! Run with `cargo bench --bench open_index`. `HRRY_BENCH_RUNS` sets the timed runs
//! per measurement (default 9; median reported, minimum beside it; the operations of
//! one table are taken in turn within each run so machine load weighs on all alike).
//! `HRRY_BENCH_TENSORS` overrides the large tensor count (100 000; the small files
//! hold a tenth). `HRRY_BENCH_DIR` writes the files there and keeps them.
//!
//! The files: N tensors cycling through 8 kinds (float32 [4, 8], float16 [16, 4],
//! bfloat16 [64], int8 [2, 4, 8], int32 [8, 2, 2], float64 [2, 2, 2, 2], uint8 [128],
//! int64 [3, 5]), names `model.layers.{i/8}.<part>` (~40 bytes). hrry: written with
//! `HrryWriter` (4096-byte `data_buffer_alignment`, so each descriptor sits on its own
//! page, index CRC-32C on). safetensors: the same names, dtypes, shapes and bytes,
//! written with `serialize_to_file`.
//!
//! What each side does in every timed run, starting from a closed file that is in
//! the page cache (both files were just written):
//!
//! - hrry (a): the checked open (`Depth::Metadata`, the default of `HrryFile::open`) —
//!   open + mmap, header, trailer, CRC-32C of the whole index, the index and KV
//!   decoded and checked, then every descriptor of the region decoded and checked
//!   with its buffers' placement and the index cross-checked — then `entries()`
//!   reading every name; and the trusted open (`Depth::Index`: header, trailer,
//!   index and KV only, without the index CRC-32C and the uniqueness of names).
//!   Drop (munmap) included.
//! - hrry (b): the same opens, then `descriptors()` (type tag and shape read; the
//!   trusted open decodes and checks each descriptor now). Also shown: `descriptor(e)`
//!   per entry of the trusted open.
//! - safetensors "mmap": `File::open` + `memmap2::Mmap::map` + `SafeTensors::deserialize`
//!   (its `read_metadata`: JSON header parsed and validated) then `names()` (a) or
//!   `iter()` reading dtype and shape (b). The same file access as hrry's.
//! - safetensors "fs::read": the same with `std::fs::read` of the whole file (22 MB)
//!   instead of a map.
//!
//! Ratios are safetensors time / hrry time: above 1, hrry is faster.
//!
//! (c) `HrryFile::find` for every name in a shuffled order, on 10 000 and 100 000
//! tensors, sorted and unsorted index (the unsorted name order is built on the first
//! lookup, shown as "open + 1st find"), against a linear scan of `entries()` as the
//! O(n) reference.

use std::fs::File;
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use hrry::file::{HrryFile, HrryWriter, OpenOptions, WriterOptions};
use hrry::schema::{LayoutFields, TensorDescriptor};
use hrry::validate::Depth;
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
    hrry::model::build::descriptor(
        k.type_tag,
        hrry::schema::LAYOUT_ROW_MAJOR,
        k.shape,
        LayoutFields::Implicit,
        &[byte_size(k)],
    )
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

fn open(path: &Path, check: Depth) -> HrryFile<'static> {
    OpenOptions::new()
        .depth(check)
        .open(path)
        .expect("open hrry")
}

fn hrry_names(path: &Path, check: Depth) -> usize {
    open(path, check).entries().map(|e| e.name().len()).sum()
}

fn descriptor_sum(name: &str, d: &TensorDescriptor) -> usize {
    name.len() + usize::from(d.type_tag) + d.shape.iter().sum::<u64>() as usize
}

/// Names, types and shapes through `HrryFile::descriptors` (batched).
fn hrry_descriptors(path: &Path, check: Depth) -> usize {
    open(path, check)
        .descriptors()
        .map(|(e, d)| descriptor_sum(e.name(), d.expect("descriptor")))
        .sum()
}

/// The same through `HrryFile::descriptor` on each entry, one at a time.
fn hrry_descriptor_each(path: &Path, check: Depth) -> usize {
    let f = open(path, check);
    f.entries()
        .map(|e| descriptor_sum(e.name(), f.descriptor(e).expect("descriptor")))
        .sum()
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

#[derive(Clone, Copy)]
struct Timing {
    median: Duration,
    min: Duration,
}

impl Timing {
    fn per(self, n: usize) -> Timing {
        Timing {
            median: self.median / n as u32,
            min: self.min / n as u32,
        }
    }
}

type Op<'a> = Box<dyn FnMut() -> usize + 'a>;

/// Times every operation `runs` times, taking them in turn within each run so that
/// the machine's load (shared, noisy) weighs on all of them alike. One warm-up run.
fn time_interleaved(runs: usize, mut ops: Vec<Op<'_>>) -> Vec<Timing> {
    for op in ops.iter_mut() {
        black_box(op());
    }
    let mut samples = vec![Vec::with_capacity(runs); ops.len()];
    for _ in 0..runs {
        for (op, s) in ops.iter_mut().zip(&mut samples) {
            let t = Instant::now();
            black_box(op());
            s.push(t.elapsed());
        }
    }
    samples
        .into_iter()
        .map(|mut s| {
            s.sort();
            Timing {
                median: s[s.len() / 2],
                min: s[0],
            }
        })
        .collect()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn row(label: &str, t: &Timing) {
    println!(
        "  {label:<50} {:>9.2} ms  (min {:>8.2} ms)",
        ms(t.median),
        ms(t.min)
    );
}

fn ratio(label: &str, baseline: &Timing, ours: &Timing, target: &str) {
    println!(
        "  {label:<50} {:>8.1}x   (min/min {:>5.1}x)   {target}",
        baseline.median.as_secs_f64() / ours.median.as_secs_f64(),
        baseline.min.as_secs_f64() / ours.min.as_secs_f64()
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

/// Tensors looked up by the linear-scan reference (a scan costs n, so a sample).
const SCAN_SAMPLE: usize = 200;

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
        .max(SCAN_SAMPLE * 100);
    let small = big / 10;
    let tiny = big / 100;

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
    write_hrry(&path("tiny.hrry"), tiny, false);
    write_hrry(&path("tiny-sorted.hrry"), tiny, true);
    write_safetensors(&path("big.safetensors"), big);
    let size = |s: &str| std::fs::metadata(path(s)).map_or(0, |m| m.len());
    println!(
        "open_index: {big} tensors ({} kinds: 8 dtypes, ranks 1-4, one 4096-aligned buffer each)\n\
         hrry file {:.1} MB, safetensors file {:.1} MB, written in {:.1} s; \
         median of {runs} interleaved runs, files in the page cache",
        KINDS.len(),
        size("big.hrry") as f64 / 1e6,
        size("big.safetensors") as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );

    let hb = path("big.hrry");
    let sb = path("big.safetensors");
    let expected: usize = (0..big)
        .map(|i| {
            let k = kind(i);
            name(i).len() + usize::from(k.type_tag) + k.shape.iter().sum::<u64>() as usize
        })
        .sum();
    for check in [Depth::Metadata, Depth::Index] {
        assert_eq!(hrry_names(&hb, check), st_read(&sb, st_names), "same names");
        assert_eq!(
            hrry_descriptors(&hb, check),
            expected,
            "descriptors read back"
        );
        assert_eq!(
            hrry_descriptor_each(&hb, check),
            expected,
            "descriptors read back"
        );
    }

    let t = time_interleaved(
        runs,
        vec![
            Box::new(|| st_mmap(&sb, st_names)),
            Box::new(|| st_read(&sb, st_names)),
            Box::new(|| hrry_names(&hb, Depth::Metadata)),
            Box::new(|| hrry_names(&hb, Depth::Index)),
        ],
    );
    let (a_st_map, a_st_read, a_hrry, a_trusted) = (t[0], t[1], t[2], t[3]);
    println!("\n(a) open + list all names");
    row("safetensors: mmap + deserialize + names()", &a_st_map);
    row("safetensors: fs::read + deserialize + names()", &a_st_read);
    row("hrry: open (checked: Depth::Metadata) + names", &a_hrry);
    row("hrry: open (Depth::Index) + names", &a_trusted);

    let t = time_interleaved(
        runs,
        vec![
            Box::new(|| st_mmap(&sb, st_descriptors)),
            Box::new(|| st_read(&sb, st_descriptors)),
            Box::new(|| hrry_descriptors(&hb, Depth::Metadata)),
            Box::new(|| hrry_descriptors(&hb, Depth::Index)),
            Box::new(|| hrry_descriptor_each(&hb, Depth::Index)),
        ],
    );
    let (b_st_map, b_st_read, b_hrry, b_trusted, b_each) = (t[0], t[1], t[2], t[3], t[4]);
    println!("\n(b) open + list names, dtypes and shapes");
    row("safetensors: mmap + deserialize + iter()", &b_st_map);
    row("safetensors: fs::read + deserialize + iter()", &b_st_read);
    row("hrry: open (checked) + descriptors()", &b_hrry);
    row("hrry: open (trusted) + descriptors()", &b_trusted);
    row("hrry: open (trusted) + descriptor(e) per entry", &b_each);

    println!("\nratios: safetensors time / hrry time (median; above 1 = hrry faster)");
    ratio(
        "(a) checked open + names vs safetensors mmap",
        &a_st_map,
        &a_hrry,
        "target > 1x",
    );
    ratio(
        "(a) trusted open + names vs safetensors mmap",
        &a_st_map,
        &a_trusted,
        "target >= 20x",
    );
    ratio(
        "(a) trusted open + names vs safetensors fs::read",
        &a_st_read,
        &a_trusted,
        "target >= 20x",
    );
    ratio(
        "(b) checked open + descriptors() vs safetensors mmap",
        &b_st_map,
        &b_hrry,
        "target > 1x",
    );
    ratio(
        "(b) checked open + descriptors() vs safetensors fs::read",
        &b_st_read,
        &b_hrry,
        "target > 1x",
    );
    ratio(
        "(b) trusted open + descriptors() vs safetensors mmap",
        &b_st_map,
        &b_trusted,
        "target > 1x",
    );
    ratio(
        "(b) trusted open + descriptor(e) each vs safetensors mmap",
        &b_st_map,
        &b_each,
        "target > 1x",
    );

    println!(
        "\n(c) lookup by name: HrryFile::find (binary search) for every tensor, in name order\n    \
         and in a shuffled order; reference: linear scan of entries() ({SCAN_SAMPLE} shuffled names).\n    \
         Time per lookup in ns, best of the runs (the least disturbed by other processes\n    \
         evicting the caches); the unsorted index builds its name order on the first find."
    );
    println!(
        "  {:<9} {:>8}  {:>11}  {:>11}  {:>11}  {:>20}",
        "index", "tensors", "find/order", "find/shuf", "scan/shuf", "open + 1st find ms"
    );
    let mut growth = Vec::new();
    for (label, prefix) in [("sorted", "-sorted"), ("unsorted", "")] {
        let mut per = Vec::new();
        for (size, n) in [("tiny", tiny), ("small", small), ("big", big)] {
            let p = path(&format!("{size}{prefix}.hrry"));
            let shuffled = shuffled_names(n);
            let mut in_order = shuffled.clone();
            in_order.sort();
            let f = HrryFile::open(&p).expect("open hrry");
            let find_all = |names: &[String]| -> usize {
                names
                    .iter()
                    .map(|name| f.find(name).expect("every name is found").position())
                    .sum()
            };
            let t = time_interleaved(
                runs,
                vec![
                    Box::new(|| {
                        let f = HrryFile::open(&p).expect("open hrry");
                        f.find(&shuffled[0]).map_or(0, |e| e.position())
                    }),
                    Box::new(|| find_all(&in_order)),
                    Box::new(|| find_all(&shuffled)),
                    Box::new(|| {
                        shuffled[..SCAN_SAMPLE]
                            .iter()
                            .map(|name| {
                                f.entries()
                                    .find(|e| e.name() == name)
                                    .expect("every name is found")
                                    .position()
                            })
                            .sum()
                    }),
                ],
            );
            let ns = |t: Timing| t.min.as_secs_f64() * 1e9;
            let (order, shuf, scan) = (ns(t[1].per(n)), ns(t[2].per(n)), ns(t[3].per(SCAN_SAMPLE)));
            println!(
                "  {label:<9} {n:>8}  {order:>11.0}  {shuf:>11.0}  {scan:>11.0}  {:>20.2}",
                ms(t[0].min)
            );
            per.push((n, order, shuf, scan));
        }
        growth.push((label, per));
    }
    println!("  growth of the time per lookup for 10x more tensors (log2 n grows x1.33 then x1.25; n x10):");
    for (label, per) in growth {
        for w in per.windows(2) {
            let ((n0, o0, s0, c0), (n1, o1, s1, c1)) = (w[0], w[1]);
            println!(
                "    {label:<9} {n0:>6} -> {n1:>6}: find in order x{:.2}, shuffled x{:.2}; linear scan x{:.2}",
                o1 / o0,
                s1 / s0,
                c1 / c0
            );
        }
    }
}

//! Validation at scale: validating a file reads its metadata, not its tensor data.
//!
//! Run with `cargo bench --bench validate_scale` (it builds the `hrry` binary first;
//! set `VALIDATE_BENCH_MIB` for another size than 1024 MiB, `VALIDATE_BENCH_SPARSE_GIB`
//! for another sparse size than 16 GiB). Files go under `target/validate-scale-bench/`
//! and are deleted at the end (kept with `VALIDATE_BENCH_KEEP=1`, for profiling).
//!
//! Printed, all measured in this run:
//!
//! 1. A realistic file of at least 1 GiB (a few hundred dense float16, float32 and
//!    int4 tensors, a few per-block int4 tensors with float16 scales, KV with a
//!    128k-entry tokenizer array): the best time of `hrry validate FILE` against
//!    `cat FILE > /dev/null`, both as child processes, and of in-process validation
//!    through `FileSource` against `std::io::copy` of the file into `io::sink()`.
//!    Warm: the file is in the page cache (it was just written), so the baseline is
//!    memory bandwidth and the ratio the least favourable to validation. Cold-ish:
//!    before every run the file's pages are dropped from the page cache with
//!    `posix_fadvise(DONTNEED)` (no root needed), so both sides read from the disk;
//!    reading then costs disk bandwidth while validation costs a few thousand small
//!    reads. Also printed: how many bytes validation read (a counting source).
//! 2. Peak resident memory (`ru_maxrss` of the child, from `wait4`) of
//!    `hrry validate` on a sparse 16 GiB file whose tensors are dense data (holes:
//!    only the metadata is written), and on the 1 GiB file.
//!
//! Targets: validation at least 10x faster than reading the file; peak
//! RSS of `hrry validate` on the 16 GiB file at most 64 MiB.

fn main() {
    #[cfg(unix)]
    unix::main();
    #[cfg(not(unix))]
    eprintln!("validate_scale measures with Unix calls (wait4, posix_fadvise); skipped");
}

#[cfg(unix)]
mod unix {
    use std::fs::File;
    use std::io::{self, BufWriter, Seek, SeekFrom, Write};
    use std::path::{Path, PathBuf};
    use std::process::Command;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::{Duration, Instant};

    use hrry::file::{HrryWriter, WriterOptions};
    use hrry::model::{build::dense, ElementType};
    use hrry::quant::{quantize::quantized_descriptor, quantize_per_block, PerBlockOptions};
    use hrry::schema::{KvArray, KvScalar, KvValue, LenBytes, TensorDescriptor};
    use hrry::source::{FileSource, ReadAt};
    use hrry::validate::{Options, Rules};
    use hrry_testkit::tokenizer_tokens;

    const ROUNDS: usize = 3;
    const MIB: u64 = 1 << 20;

    /// Deletes the bench directory however the run ends.
    struct Scratch(PathBuf);

    impl Drop for Scratch {
        fn drop(&mut self) {
            if std::env::var_os("VALIDATE_BENCH_KEEP").is_none() {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }

    /// A writer that turns all-zero writes into holes (it seeks over them), so a file
    /// of any size costs only its non-zero bytes on disk.
    struct Sparse {
        file: File,
        zeros: Vec<u8>,
    }

    impl Write for Sparse {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            // Block by block, so zeros next to metadata still become holes.
            for block in buf.chunks(self.zeros.len()) {
                if block == &self.zeros[..block.len()] {
                    self.file.seek(SeekFrom::Current(block.len() as i64))?;
                } else {
                    self.file.write_all(block)?;
                }
            }
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            self.file.flush()
        }
    }

    /// Cheap incompressible-looking bytes (xorshift64*).
    struct Noise(u64);

    impl Noise {
        fn fill(&mut self, buf: &mut [u8]) {
            for chunk in buf.chunks_mut(8) {
                let x = &mut self.0;
                *x ^= *x >> 12;
                *x ^= *x << 25;
                *x ^= *x >> 27;
                let v = x.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes();
                chunk.copy_from_slice(&v[..chunk.len()]);
            }
        }
    }

    /// A per-block affine int4 descriptor (blocks of 32 along the last axis, float16
    /// scales, symmetric) for `shape`.
    fn q4(shape: &[u64]) -> TensorDescriptor {
        let template = quantize_per_block(
            &[1.0; 64],
            &[2, 32],
            &PerBlockOptions::default(), // int4, blocks of 32, float16 scales
        )
        .expect("template");
        let quantization = template.descriptor.quantization.expect("quantized");
        let count: u64 = shape.iter().product();
        quantized_descriptor(
            ElementType::Int4.tag(),
            shape,
            &[count / 2, count / 32 * 2],
            quantization,
        )
    }

    /// The tensors of a model of about `target` bytes: `(name, descriptor, bytes)`.
    fn layout_of(target: u64) -> Vec<(String, TensorDescriptor)> {
        let mut out = Vec::new();
        let mut total = 0u64;
        let mut layer = 0;
        let push = |out: &mut Vec<(String, TensorDescriptor)>,
                    total: &mut u64,
                    name,
                    d: TensorDescriptor| {
            *total += d.buffers.iter().map(|b| b.byte_size).sum::<u64>();
            out.push((name, d));
        };
        push(
            &mut out,
            &mut total,
            "token_embd".to_string(),
            dense(ElementType::Float16, &[8192, 1024]).expect("embedding"),
        );
        while total < target {
            let l = |part: &str| format!("blk.{layer}.{part}");
            let f16 = |shape: &[u64]| dense(ElementType::Float16, shape).expect("f16");
            let f32 = |shape: &[u64]| dense(ElementType::Float32, shape).expect("f32");
            let i4 = |shape: &[u64]| dense(ElementType::Int4, shape).expect("int4");
            push(&mut out, &mut total, l("attn_norm"), f32(&[1024]));
            push(&mut out, &mut total, l("attn_q"), f16(&[1024, 1024]));
            push(&mut out, &mut total, l("attn_k"), f16(&[256, 1024]));
            push(&mut out, &mut total, l("attn_v"), f16(&[256, 1024]));
            push(&mut out, &mut total, l("attn_out"), f32(&[1024, 1024]));
            push(&mut out, &mut total, l("ffn_norm"), f32(&[1024]));
            push(&mut out, &mut total, l("ffn_up"), i4(&[4096, 1024]));
            if layer % 4 == 0 {
                push(&mut out, &mut total, l("ffn_gate"), q4(&[4096, 1024]));
            } else {
                push(&mut out, &mut total, l("ffn_gate"), i4(&[4096, 1024]));
            }
            push(&mut out, &mut total, l("ffn_down"), f16(&[1024, 4096]));
            layer += 1;
        }
        out
    }

    /// KV like a converted LLM's: a 128k-entry tokenizer array and a few scalars.
    fn add_kv<W: Write>(w: &mut HrryWriter<W>) {
        w.add_kv("tokenizer.ggml.tokens", tokenizer_tokens(128_000))
            .expect("kv");
        let scores: Vec<KvScalar> = (0..128_000)
            .map(|i| KvScalar::Float64(-(i as f64)))
            .collect();
        w.add_kv(
            "tokenizer.ggml.scores",
            KvValue::Array(KvArray::new(0x03, scores)),
        )
        .expect("kv");
        w.add_kv(
            "general.architecture",
            KvValue::String(LenBytes {
                bytes: b"llama".to_vec(),
            }),
        )
        .expect("kv");
    }

    /// Writes the model of `tensors` to `sink`, data from `fill` in 1 MiB pieces; a
    /// per-block tensor's scale buffer holds float16 1.0.
    fn write_model<W: Write>(
        sink: W,
        tensors: &[(String, TensorDescriptor)],
        mut fill: impl FnMut(&mut [u8]),
    ) -> W {
        let mut w = HrryWriter::new(sink, WriterOptions::default()).expect("writer");
        add_kv(&mut w);
        let mut piece = vec![0u8; MIB as usize];
        let one = half::f16::from_f32(1.0).to_le_bytes();
        for (name, d) in tensors {
            w.begin_tensor(name, d).expect("begin");
            for (i, b) in d.buffers.iter().enumerate() {
                let mut left = b.byte_size;
                while left > 0 {
                    let n = left.min(MIB) as usize;
                    if i == 0 {
                        fill(&mut piece[..n]);
                    } else {
                        for pair in piece[..n].chunks_mut(2) {
                            pair.copy_from_slice(&one);
                        }
                    }
                    w.write_data(&piece[..n]).expect("data");
                    left -= n as u64;
                }
            }
            w.end_tensor().expect("end");
        }
        w.finish().expect("finish")
    }

    /// Drops `path`'s pages from the page cache (clean pages only, so after an fsync).
    fn drop_cache(path: &Path) {
        let file = File::open(path).expect("open");
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            // SAFETY: FFI call on a file descriptor this function owns for the whole
            // call; posix_fadvise only advises the kernel and touches no memory of ours.
            let rc =
                unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
            assert_eq!(rc, 0, "posix_fadvise");
        }
        drop(file);
    }

    /// What a child process cost.
    struct Child {
        wall: Duration,
        /// User plus system CPU time.
        cpu: Duration,
        ok: bool,
        /// Peak resident memory in KiB.
        max_rss: u64,
    }

    /// Runs `cmd` to completion and measures it (`wait4`: this child alone).
    // The child is reaped by `wait4`, which `Child::wait` cannot replace (it gives no
    // resource usage).
    #[allow(clippy::zombie_processes)]
    fn run_child(cmd: &mut Command) -> Child {
        let start = Instant::now();
        let child = cmd.spawn().expect("spawn");
        let mut status = 0;
        // SAFETY: FFI call with a pid this process spawned and has not waited for, and
        // pointers to locals that outlive the call.
        let (pid, usage) = unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            let pid = libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage);
            (pid, usage)
        };
        let wall = start.elapsed();
        assert_eq!(pid, child.id() as libc::pid_t, "wait4");
        let time = |t: libc::timeval| {
            Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
        };
        Child {
            wall,
            cpu: time(usage.ru_utime) + time(usage.ru_stime),
            ok: libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            max_rss: usage.ru_maxrss as u64,
        }
    }

    fn best(mut f: impl FnMut() -> Duration) -> Duration {
        (0..ROUNDS).map(|_| f()).min().unwrap_or_default()
    }

    /// Counts the bytes read through it.
    struct Counting<'a> {
        inner: &'a FileSource,
        bytes: AtomicU64,
        reads: AtomicU64,
    }

    impl ReadAt for Counting<'_> {
        fn len(&self) -> u64 {
            self.inner.len()
        }

        fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
            self.bytes.fetch_add(buf.len() as u64, Ordering::Relaxed);
            self.reads.fetch_add(1, Ordering::Relaxed);
            self.inner.read_at(offset, buf)
        }
    }

    fn ms(d: Duration) -> f64 {
        d.as_secs_f64() * 1e3
    }

    pub fn main() {
        let mib: u64 = std::env::var("VALIDATE_BENCH_MIB")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1024);
        let sparse_gib: u64 = std::env::var("VALIDATE_BENCH_SPARSE_GIB")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(16);
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let status = Command::new(env!("CARGO"))
            .args(["build", "--release", "--bin", "hrry"])
            .current_dir(&root)
            .status()
            .expect("cargo build");
        assert!(status.success(), "building hrry failed");
        let hrry = root.join("target/release/hrry");
        let scratch = Scratch(root.join("target/validate-scale-bench"));
        std::fs::create_dir_all(&scratch.0).expect("bench directory");

        // --- the sparse file, measured first -------------------------------------
        let sparse = scratch.0.join("sparse.hrry");
        let tensors = layout_of(sparse_gib << 30);
        let file = File::create(&sparse).expect("create sparse file");
        let out = write_model(
            BufWriter::with_capacity(
                MIB as usize,
                Sparse {
                    file,
                    zeros: vec![0; 4096],
                },
            ),
            &tensors,
            |piece| piece.fill(0),
        );
        let mut file = out
            .into_inner()
            .map_err(|e| e.into_error())
            .expect("flush")
            .file;
        let len = file.stream_position().expect("position");
        file.set_len(len).expect("length");
        drop(file);
        let on_disk = {
            use std::os::unix::fs::MetadataExt;
            std::fs::metadata(&sparse).expect("metadata").blocks() * 512
        };
        let run = run_child(Command::new(&hrry).arg("validate").arg(&sparse));
        assert!(run.ok, "hrry validate rejected the sparse file");
        println!(
            "sparse file: {:.1} GiB, {} tensors, {:.1} MiB on disk",
            len as f64 / (1u64 << 30) as f64,
            tensors.len(),
            on_disk as f64 / MIB as f64
        );
        println!(
            "  hrry validate: {:.0} ms, peak RSS {:.1} MiB (target <= 64 MiB)",
            ms(run.wall),
            run.max_rss as f64 / 1024.0
        );
        if std::env::var_os("VALIDATE_BENCH_KEEP").is_none() {
            std::fs::remove_file(&sparse).expect("remove sparse file");
        }

        // --- the realistic file -------------------------------------------------
        let path = scratch.0.join("model.hrry");
        let tensors = layout_of(mib * MIB);
        let mut noise = Noise(0x9E37_79B9_7F4A_7C15);
        let file = File::create(&path).expect("create model");
        let out = write_model(
            BufWriter::with_capacity(MIB as usize, file),
            &tensors,
            |p| noise.fill(p),
        );
        let file = out.into_inner().map_err(|e| e.into_error()).expect("flush");
        file.sync_all().expect("sync");
        drop(file);
        let len = std::fs::metadata(&path).expect("metadata").len();
        let quantized = tensors
            .iter()
            .filter(|(_, d)| d.quantization.is_some())
            .count();
        println!(
            "model: {:.2} GiB, {} tensors ({quantized} per-block int4), 128k-entry tokenizer KV",
            len as f64 / (1u64 << 30) as f64,
            tensors.len()
        );

        let source = FileSource::open(&path).expect("open model");
        let counting = Counting {
            inner: &source,
            bytes: AtomicU64::new(0),
            reads: AtomicU64::new(0),
        };
        let report = hrry::Format::HrryFile
            .validate_source(&counting, &Options::default())
            .expect("readable");
        assert!(report.is_valid(), "{:?}", report.violations);
        println!(
            "  validation reads {:.2} MiB of the file ({:.3}%) in {} reads",
            counting.bytes.load(Ordering::Relaxed) as f64 / MIB as f64,
            100.0 * counting.bytes.load(Ordering::Relaxed) as f64 / len as f64,
            counting.reads.load(Ordering::Relaxed)
        );

        let in_process_validate = || {
            let start = Instant::now();
            let source = FileSource::open(&path).expect("open");
            let options = Options {
                judging: Rules::Hardened.into(),
                ..Default::default()
            };
            let report = hrry::Format::HrryFile
                .validate_source(&source, &options)
                .expect("readable");
            assert!(report.is_valid());
            start.elapsed()
        };
        let in_process_read = || {
            let start = Instant::now();
            let mut file = File::open(&path).expect("open");
            let n = io::copy(&mut file, &mut io::sink()).expect("read");
            assert_eq!(n, len);
            start.elapsed()
        };
        let cli_validate = || {
            let run = run_child(
                Command::new(&hrry)
                    .arg("validate")
                    .arg(&path)
                    .stdout(std::process::Stdio::null()),
            );
            assert!(run.ok, "hrry validate failed");
            run
        };
        let cat = || {
            let run = run_child(
                Command::new("cat")
                    .arg(&path)
                    .stdout(std::process::Stdio::null()),
            );
            assert!(run.ok, "cat failed");
            run
        };
        let cli_rss = cli_validate().max_rss;

        for (label, cold) in [
            ("warm (page cache)", false),
            ("cold-ish (pages dropped before each run)", true),
        ] {
            let prepare = || {
                if cold {
                    drop_cache(&path);
                }
            };
            let timed = |f: &dyn Fn() -> Duration| {
                best(|| {
                    prepare();
                    f()
                })
            };
            // Best wall and best CPU time (user + system) over the rounds: on a busy
            // machine the CPU time is the steadier figure.
            let processes = |f: &dyn Fn() -> Child| {
                let runs: Vec<Child> = (0..ROUNDS)
                    .map(|_| {
                        prepare();
                        f()
                    })
                    .collect();
                let wall = runs.iter().map(|r| r.wall).min().unwrap_or_default();
                let cpu = runs.iter().map(|r| r.cpu).min().unwrap_or_default();
                (wall, cpu)
            };
            let (v, r) = (timed(&in_process_validate), timed(&in_process_read));
            let ((hv, hv_cpu), (c, c_cpu)) = (processes(&cli_validate), processes(&cat));
            let ratio = |base: Duration, ours: Duration| base.as_secs_f64() / ours.as_secs_f64();
            println!("  {label}:");
            println!(
                "    in process: validate {:.1} ms, io::copy to sink {:.1} ms: validation {:.1}x faster",
                ms(v),
                ms(r),
                ratio(r, v)
            );
            println!(
                "    processes:  hrry validate {:.1} ms, cat > /dev/null {:.1} ms: validation {:.1}x faster (target >= 10x)",
                ms(hv),
                ms(c),
                ratio(c, hv)
            );
            println!(
                "    CPU time:   hrry validate {:.1} ms, cat {:.1} ms: {:.1}x",
                ms(hv_cpu),
                ms(c_cpu),
                ratio(c_cpu, hv_cpu)
            );
        }
        println!(
            "  hrry validate peak RSS: {:.1} MiB",
            cli_rss as f64 / 1024.0
        );
        drop(scratch);
    }
}

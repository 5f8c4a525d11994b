//! Validation through a random-access source (`hrry::source::ReadAt`): the same
//! report as from the bytes in memory, for every corpus file and mode, read from
//! the file itself; and what it reads: metadata, parameters and the few data bytes
//! a rule inspects, never dense tensor data.

use std::io;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Mutex;

use hrry::file::{HrryFile, HrryWriter, WriterOptions};
use hrry::holo::{HoloWriter, WeightStore};
use hrry::model::{build::dense, ElementType};
use hrry::quant::{quantize_per_block, PerBlockOptions};
use hrry::schema::KvValue;
use hrry::source::{FileSource, ReadAt};
use hrry::validate::{Options, Rules};
use hrry::Format;
use hrry_testkit::corpus::all_cases;
use hrry_testkit::{assert_same_report, tokenizer_tokens};

/// A source that hides that it is in memory and records every read.
struct Recording<'a> {
    bytes: &'a [u8],
    reads: Mutex<Vec<Range<u64>>>,
}

impl<'a> Recording<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Recording {
            bytes,
            reads: Mutex::new(Vec::new()),
        }
    }

    fn reads(&self) -> Vec<Range<u64>> {
        self.reads.lock().expect("not poisoned").clone()
    }
}

impl ReadAt for Recording<'_> {
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.reads
            .lock()
            .expect("not poisoned")
            .push(offset..offset + buf.len() as u64);
        self.bytes.read_at(offset, buf)
    }
}

fn options(mode: Rules) -> Options {
    Options {
        judging: mode.into(),
        ..Default::default()
    }
}

#[test]
fn every_corpus_file_gives_the_same_report_from_its_file() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let cases = all_cases();
    assert!(cases.len() > 300, "the corpus has {} cases", cases.len());
    for case in cases {
        let file = FileSource::open(root.join(&case.path)).expect("corpus file");
        assert_eq!(
            Format::detect_source(&file, None).expect("readable"),
            Format::detect(&case.bytes, None),
            "{}",
            case.path
        );
        for mode in [Rules::Hardened, Rules::Permissive] {
            for format in [
                Format::HrryFile,
                Format::Holo,
                Format::Stream,
                Format::Messages,
            ] {
                let memory = format.validate_bytes(&case.bytes, &options(mode));
                let from_file = format
                    .validate_source(&file, &options(mode))
                    .expect("readable");
                let what = format!("{} as {format:?} in {mode:?} mode", case.path);
                assert_same_report(&from_file, &memory, &what);
                let recording = Recording::new(&case.bytes);
                let read = format
                    .validate_source(&recording, &options(mode))
                    .expect("readable");
                assert_same_report(&read, &memory, &what);
            }
        }
    }
}

/// The byte ranges of every buffer of every tensor of `bytes`, by tensor name.
fn buffer_ranges(bytes: &[u8]) -> Vec<(String, Vec<Range<u64>>)> {
    let file = HrryFile::from_bytes(bytes).expect("opens");
    let base = bytes.as_ptr() as u64;
    file.entries()
        .map(|e| {
            let t = file.tensor_at(e).expect("tensor");
            let ranges = t
                .buffers
                .iter()
                .map(|b| {
                    let at = b.as_ptr() as u64 - base;
                    at..at + <[u8]>::len(b) as u64
                })
                .collect();
            (e.name().to_string(), ranges)
        })
        .collect()
}

/// Bytes of `range` that `reads` touched.
fn touched(reads: &[Range<u64>], range: &Range<u64>) -> u64 {
    reads
        .iter()
        .map(|r| {
            r.end
                .min(range.end)
                .saturating_sub(r.start.max(range.start))
        })
        .sum()
}

fn le_bytes<const N: usize>(n: usize, f: impl Fn(usize) -> [u8; N]) -> Vec<u8> {
    (0..n).flat_map(f).collect()
}

/// A small model shaped like a real one: dense float16, float32 and int4 weights
/// (one with an odd element count, so its packing tail counts), a per-block int4
/// tensor with float16 scales, and KV holding a tokenizer-like string array.
fn model() -> Vec<u8> {
    let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).expect("writer");
    w.add_kv("tokenizer.tokens", tokenizer_tokens(5000))
        .expect("kv");
    w.add_kv("model.layers", KvValue::Int64(2)).expect("kv");
    for layer in 0..2 {
        let d = dense(ElementType::Float16, &[256, 128]).expect("f16");
        let data = le_bytes(256 * 128, |i| {
            half::f16::from_f32(i as f32 / 7.0).to_le_bytes()
        });
        w.write_tensor(&format!("l{layer}.attn"), &d, &[&data])
            .expect("f16 tensor");
        let d = dense(ElementType::Float32, &[300, 70]).expect("f32");
        let data = le_bytes(300 * 70, |i| (i as f32).to_le_bytes());
        w.write_tensor(&format!("l{layer}.mlp"), &d, &[&data])
            .expect("f32 tensor");
        // 33 * 17 int4 codes: an odd count, so the last byte has an unused half.
        let d = dense(ElementType::Int4, &[33, 17]).expect("int4");
        let mut data = le_bytes(33 * 17 / 2 + 1, |i| [(i % 7) as u8 * 0x11]);
        *data.last_mut().expect("bytes") &= 0x0F;
        w.write_tensor(&format!("l{layer}.gate"), &d, &[&data])
            .expect("int4 tensor");
        let values: Vec<f32> = (0..64 * 256).map(|i| (i % 13) as f32 - 6.0).collect();
        let q = quantize_per_block(
            &values,
            &[64, 256],
            &PerBlockOptions::default(), // int4, blocks of 32, float16 scales
        )
        .expect("quantizes");
        w.write_tensor(&format!("l{layer}.q"), &q.descriptor, &q.buffer_slices())
            .expect("quantized tensor");
    }
    w.finish().expect("finish")
}

#[test]
fn dense_tensor_data_is_not_read() {
    let bytes = model();
    let recording = Recording::new(&bytes);
    let report = hrry::Format::HrryFile
        .validate_source(&recording, &options(Rules::Hardened))
        .expect("readable");
    assert!(report.is_valid(), "{:?}", report.violations);
    let memory = hrry::Format::HrryFile.validate_bytes(&bytes, &options(Rules::Hardened));
    assert_same_report(&report, &memory, "model");
    let reads = recording.reads();
    let mut data_bytes = 0;
    for (name, ranges) in buffer_ranges(&bytes) {
        let data = &ranges[0];
        data_bytes += data.end - data.start;
        let read = touched(&reads, data);
        if name.ends_with(".gate") {
            // TD-BUF-006 looks at the byte holding the unused half.
            assert_eq!(read, 1, "{name}: {read} data bytes read");
        } else if name.ends_with(".q") {
            // Whole blocks: no padding to look at; the codes are not read, the
            // scales are (QB-SCALE-001), all of them.
            assert_eq!(read, 0, "{name}: {read} data bytes read");
            let scales = &ranges[1];
            assert_eq!(touched(&reads, scales), scales.end - scales.start, "{name}");
        } else {
            assert_eq!(read, 0, "{name}: {read} data bytes read");
        }
    }
    let total: u64 = reads.iter().map(|r| r.end - r.start).sum();
    assert!(
        total + data_bytes / 2 < bytes.len() as u64,
        "{total} of {} bytes read",
        bytes.len()
    );
}

#[test]
fn a_holo_archive_is_hashed_in_fixed_chunks() {
    let mut weights = WeightStore::new();
    weights.insert((0..3_000_000u32).map(|i| (i % 251) as u8).collect());
    weights.insert(vec![7u8; 5000]);
    let mut writer = HoloWriter::new();
    writer.set_weights(weights);
    let bytes = writer.finish().expect("archive");
    let mut broken = bytes.clone();
    let middle = broken.len() / 2;
    broken[middle] ^= 1;
    for archive in [bytes, broken] {
        let recording = Recording::new(&archive);
        let from_source = hrry::Format::Holo
            .validate_source(
                &recording,
                &hrry::validate::Options {
                    judging: Rules::Hardened.into(),
                    ..Default::default()
                },
            )
            .expect("readable");
        let memory = hrry::Format::Holo.validate_bytes(
            &archive,
            &hrry::validate::Options {
                judging: Rules::Hardened.into(),
                ..Default::default()
            },
        );
        assert_same_report(&from_source, &memory, "archive");
        let largest = recording
            .reads()
            .iter()
            .map(|r| r.end - r.start)
            .max()
            .unwrap_or(0);
        assert!(largest <= 1 << 20, "a read of {largest} bytes");
    }
}

#[test]
fn a_failed_read_is_an_error_not_a_report() {
    /// Reads fail past `from`.
    struct Failing<'a> {
        bytes: &'a [u8],
        from: u64,
    }
    impl ReadAt for Failing<'_> {
        fn len(&self) -> u64 {
            self.bytes.len() as u64
        }
        fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
            if offset + buf.len() as u64 > self.from {
                return Err(io::Error::other("bad sector"));
            }
            self.bytes.read_at(offset, buf)
        }
    }
    let bytes = model();
    let source = Failing {
        bytes: &bytes,
        from: bytes.len() as u64 / 2,
    };
    let e = hrry::Format::HrryFile
        .validate_source(&source, &options(Rules::Hardened))
        .expect_err("a read failed");
    assert_eq!(e.to_string(), "bad sector");
    let mut writer = HoloWriter::new();
    writer.set_kernel_calls(vec![1; 4000]);
    let archive = writer.finish().expect("archive");
    let source = Failing {
        bytes: &archive,
        from: archive.len() as u64 - 10,
    };
    assert!(hrry::Format::Holo
        .validate_source(
            &source,
            &hrry::validate::Options {
                judging: Rules::Hardened.into(),
                ..Default::default()
            }
        )
        .is_err());
}

#[test]
fn validate_path_reads_regular_files_and_refuses_others() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus");
    for name in [
        "valid/basic.hrry",
        "valid/full.holo",
        "invalid/HF-HDR-003.hrry",
    ] {
        let path = root.join(name);
        let bytes = std::fs::read(&path).expect("corpus file");
        for mode in [Rules::Hardened, Rules::Permissive] {
            let (format, report) = hrry::validate_path(&path, &options(mode)).expect("readable");
            assert_eq!(format, Format::detect(&bytes, Some(&path)), "{name}");
            let memory = format.validate_bytes(&bytes, &options(mode));
            assert_same_report(&report, &memory, name);
        }
    }
    let e = hrry::validate_path(&root, &options(Rules::Hardened)).expect_err("a directory");
    assert_eq!(e.kind(), io::ErrorKind::IsADirectory);
    let e = hrry::validate_path(&root.join("no such file"), &options(Rules::Hardened))
        .expect_err("missing");
    assert_eq!(e.kind(), io::ErrorKind::NotFound);
    #[cfg(unix)]
    {
        // A character device is refused, not read (reading /dev/zero would not end).
        let e = hrry::validate_path(std::path::Path::new("/dev/zero"), &options(Rules::Hardened))
            .expect_err("a device");
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }
}

/// Bytes of the data buffers (buffer 0 of each tensor: its elements) that
/// `reads` touched, by tensor name.
fn data_bytes_read(bytes: &[u8], reads: &[Range<u64>]) -> Vec<(String, u64)> {
    buffer_ranges(bytes)
        .into_iter()
        .map(|(name, ranges)| (name, touched(reads, &ranges[0])))
        .collect()
}

#[test]
fn no_data_buffer_byte_is_read_below_depth_data() {
    use hrry::file::OpenOptions;
    use hrry::validate::{Depth, Judging};
    let bytes = model();
    let path = std::env::temp_dir().join(format!("hrry-depth-{}.hrry", std::process::id()));
    std::fs::write(&path, &bytes).expect("written");
    for depth in [Depth::Index, Depth::Frame, Depth::Metadata, Depth::Data] {
        let judging = Judging::new(Rules::Hardened, depth);
        // The validator.
        let recording = Recording::new(&bytes);
        let options = Options {
            judging,
            ..Default::default()
        };
        let report = Format::HrryFile
            .validate_source(&recording, &options)
            .expect("readable");
        assert!(report.is_valid(), "{depth:?}: {:?}", report.violations);
        assert_eq!(report.judging, judging);
        let validated = data_bytes_read(&bytes, &recording.reads());
        // A reader, decoding with positioned reads of the file it maps.
        let recording = Recording::new(&bytes);
        let map = hrry::file::map_file(&path).expect("mapped");
        let file = OpenOptions::new()
            .judging(judging)
            .open_mmap_read(map, &recording)
            .expect("opens");
        assert_eq!(file.len(), 2 * 4);
        let opened = data_bytes_read(&bytes, &recording.reads());
        for (what, read) in [("validator", validated), ("reader", opened)] {
            for (name, n) in read {
                if depth == Depth::Data && name.ends_with(".gate") {
                    // TD-BUF-006 reads the byte holding the unused half.
                    assert_eq!(n, 1, "{what} to {depth:?}: {name}: {n} data bytes read");
                } else {
                    assert_eq!(n, 0, "{what} to {depth:?}: {name}: {n} data bytes read");
                }
            }
        }
    }
    std::fs::remove_file(&path).expect("removed");
}

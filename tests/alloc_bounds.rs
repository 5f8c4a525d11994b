//! Resource bounds on untrusted input, measured with a counting global allocator
//! (its own test binary: a `#[global_allocator]` is per binary).
//!
//! Opening and fully validating any input — the conformance corpus, the committed
//! fuzz corpora, the minimised fuzz findings, and files built to be as dense as the
//! format allows — never holds
//! more than `ALLOC_FACTOR` × the input size + `ALLOC_CONSTANT` bytes at once. A file
//! claiming a huge count (2^64 tensors, 2^32 KV entries, rank 2^32; a `.holo` with
//! 65 535 sections, the most its uint16 can claim, or payloads claiming 2^31 items)
//! is rejected before anything of that size is allocated, even with every limit
//! raised to the wire maximum, because counts are checked against the bytes that
//! remain.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use hrry::file::{SequentialReader, TensorRegionEnd};
use hrry::limits::Limits;
use hrry::schema::{
    to_bytes, FileFlags, FileHeader, IndexEntry, IndexSection, KvArray, KvEntry, KvScalar,
    KvSection, KvValue, Trailer, TRAILER_MAGIC,
};
use hrry::stream::StreamReader;
use hrry::validate::{Options, Rules};
use hrry_testkit::corpus::all_cases;
use hrry_testkit::Piecemeal;

/// Most bytes held at once, per input byte.
const ALLOC_FACTOR: usize = 48;
/// Plus this much whatever the input.
const ALLOC_CONSTANT: usize = 1 << 20;
/// What rejecting a file that claims a huge count may allocate: messages and the
/// like, nothing proportional to the claim.
const REJECT_CONSTANT: usize = 256 << 10;

/// Counts live bytes per thread, so tests running in parallel do not mix.
struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn track(delta: isize) {
    // `try_with`: allocations during thread teardown are simply not counted.
    let _ = LIVE.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

// SAFETY: every call forwards to the system allocator unchanged; the bookkeeping
// only touches const-initialised thread-local cells, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            track(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            track(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) };
        track(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            track(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The most bytes `f` held at once on this thread, above what was live before.
fn peak_of(f: impl FnOnce()) -> usize {
    let base = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(base));
    f();
    (PEAK.with(Cell::get) - base).max(0) as usize
}

/// Opening and fully validating: strict and permissive validation as a HRRYFILE and
/// as a `.holo` archive, from memory and through a source read piecemeal, the
/// `.holo` loader (which decodes every section), `HrryFile` with every tensor read,
/// and the sequential reader in both modes.
fn open_and_validate(bytes: &[u8], limits: Limits) {
    for mode in [Rules::Hardened, Rules::Permissive] {
        let _ = hrry::Format::HrryFile.validate_bytes(
            bytes,
            &Options {
                judging: mode.into(),
                limits,
            },
        );
        let _ = hrry::Format::Holo.validate_bytes(
            bytes,
            &Options {
                judging: mode.into(),
                limits,
            },
        );
        let _ = hrry::Format::HrryFile.validate_source(
            &Piecemeal(bytes),
            &Options {
                judging: mode.into(),
                limits,
            },
        );
        let _ = hrry::Format::Holo.validate_source(
            &Piecemeal(bytes),
            &Options {
                judging: mode.into(),
                limits,
            },
        );
    }
    let _ = hrry::holo::HoloLoader::with_limits(bytes, &limits);
    if let Ok(file) = hrry::file::OpenOptions::new()
        .limits(limits)
        .open_bytes(bytes)
    {
        for e in file.entries() {
            let _ = file.tensor_at(e);
        }
    }
    for end in [TensorRegionEnd::BufferToEof, TensorRegionEnd::CountHint] {
        if let Ok(mut r) = SequentialReader::new(bytes, end, limits) {
            while let Ok(Some(_)) = r.next_tensor() {}
        }
    }
    read_as_stream_and_messages(bytes, limits);
}

/// The same bytes as a bare stream (reader and validator) and as a captured
/// conversation (validator), in both modes.
fn read_as_stream_and_messages(bytes: &[u8], limits: Limits) {
    for mode in [Rules::Hardened, Rules::Permissive] {
        let _ = hrry::Format::Stream.validate_bytes(
            bytes,
            &Options {
                judging: mode.into(),
                limits,
            },
        );
        let _ = hrry::Format::Messages.validate_bytes(
            bytes,
            &Options {
                judging: mode.into(),
                limits,
            },
        );
    }
    let mut r = StreamReader::with_limits(bytes, limits);
    while let Ok(Some(_)) = r.next_tensor() {}
}

/// Every limit at the most the wire format can express.
fn wire_maximum() -> Limits {
    Limits {
        max_tensors: u64::MAX,
        max_name_length: u16::MAX,
        max_rank: u32::MAX,
        max_kv_entries: u32::MAX,
        max_index_bytes: u64::MAX,
        max_kv_bytes: u64::MAX,
        max_descriptor_bytes: u32::MAX,
        max_tiled_depth: u32::MAX,
        max_composite_depth: u32::MAX,
        max_message_size: u32::MAX,
        max_memory: u64::MAX,
    }
}

fn assert_bounded(name: &str, bytes: &[u8]) {
    for limits in [Limits::default(), wire_maximum()] {
        let peak = peak_of(|| open_and_validate(bytes, limits));
        let bound = ALLOC_FACTOR * bytes.len() + ALLOC_CONSTANT;
        eprintln!(
            "{name}: {} bytes in, {peak} held at once ({:.1} x input)",
            bytes.len(),
            peak as f64 / bytes.len() as f64
        );
        assert!(
            peak <= bound,
            "{name}: {} input bytes, {peak} bytes held at once (bound {bound})",
            bytes.len()
        );
    }
}

/// A file laid out by hand: header, `region` at 64, then KV and index at the next
/// 8-byte boundaries, then the trailer. `tensor_count_hint` is set to `hint`.
fn craft(region: &[u8], kv: Option<&[u8]>, index: &[u8], hint: u64) -> Vec<u8> {
    let pad8 = |v: &mut Vec<u8>| v.resize(v.len().div_ceil(8) * 8, 0);
    let mut flags = FileFlags::new();
    flags.set_has_kv_metadata(kv.is_some());
    let header = FileHeader {
        container_version_major: 1,
        container_version_minor: 0,
        reserved: [0; 2],
        file_flags: flags,
        data_buffer_alignment: 4096,
        first_descriptor_offset: 64,
        tensor_count_hint: hint,
        reserved_header: [0; 28],
    };
    let mut out = to_bytes(&header);
    out.extend_from_slice(region);
    pad8(&mut out);
    let (mut kv_offset, mut kv_length) = (0, 0);
    if let Some(kv) = kv {
        kv_offset = out.len() as u64;
        kv_length = kv.len() as u32;
        out.extend_from_slice(kv);
        pad8(&mut out);
    }
    let index_offset = out.len() as u64;
    out.extend_from_slice(index);
    out.extend_from_slice(&to_bytes(&Trailer {
        index_offset,
        index_length: index.len() as u64,
        kv_offset,
        kv_length,
        index_crc32c: 0,
        reserved: [0; 4],
        trailer_magic: TRAILER_MAGIC,
    }));
    out
}

fn empty_index() -> Vec<u8> {
    to_bytes(&IndexSection::default())
}

/// A descriptor header claiming `rank`, with nothing after it.
fn descriptor_claiming_rank(rank: u32) -> Vec<u8> {
    let mut d = b"HRRY\x01\x00".to_vec();
    d.extend_from_slice(&28u32.to_le_bytes()); // descriptor_length
    d.extend_from_slice(&0u32.to_le_bytes()); // flags
    d.extend_from_slice(&[0x03, 0x01]); // float32, row-major
    d.extend_from_slice(&rank.to_le_bytes());
    d.extend_from_slice(&[0; 8]);
    d
}

/// The smallest well-formed descriptor: rank 0, row-major, no buffers (29 bytes).
fn minimal_descriptor() -> Vec<u8> {
    let mut d = b"HRRY\x01\x00".to_vec();
    d.extend_from_slice(&29u32.to_le_bytes());
    d.extend_from_slice(&0u32.to_le_bytes());
    d.extend_from_slice(&[0x03, 0x01]);
    d.extend_from_slice(&0u32.to_le_bytes()); // rank
    d.extend_from_slice(&0u64.to_le_bytes()); // byte_offset
    d.push(0); // buffer_count
    d
}

#[test]
fn every_corpus_file_is_bounded() {
    for case in all_cases() {
        assert_bounded(&case.path, &case.bytes);
    }
}

/// The files under `tests/DIR/TARGET/` (or `fuzz/corpus/TARGET/`), by target:
/// `(target, path)`, sorted.
fn inputs_under(root: &str) -> Vec<(String, std::path::PathBuf)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(root);
    let mut all = Vec::new();
    for dir in std::fs::read_dir(&root).unwrap_or_else(|e| panic!("{}: {e}", root.display())) {
        let dir = dir.expect("readable").path();
        let Ok(files) = std::fs::read_dir(&dir) else {
            continue;
        };
        let target = dir.file_name().unwrap().to_string_lossy().into_owned();
        for f in files {
            all.push((target.clone(), f.expect("readable").path()));
        }
    }
    all.sort();
    all
}

/// Asserts every input a target's bytes stand for (`hrry_testkit::targets::inputs_of`:
/// the file, stream or capture itself, or the file a structure-aware target
/// writes) stays within the bound through every entry point; returns how many.
fn assert_inputs_bounded(target: &str, path: &std::path::Path) -> usize {
    let bytes = std::fs::read(path).expect("readable input");
    let inputs = hrry_testkit::targets::inputs_of(target, &bytes);
    for input in &inputs {
        assert_bounded(&path.display().to_string(), input);
    }
    inputs.len()
}

#[test]
fn every_fuzz_finding_is_bounded() {
    // Every minimised finding (tests/fuzz_findings/TARGET/NAME), whatever target
    // found it, is also a possible input file.
    let findings = inputs_under("tests/fuzz_findings");
    assert!(
        !findings.is_empty(),
        "tests/fuzz_findings holds no finding (the kept ones are listed in tests/fuzz_regressions.rs)"
    );
    let mut count = 0;
    for (target, path) in &findings {
        let bytes = std::fs::read(path).expect("readable finding");
        assert_bounded(&path.display().to_string(), &bytes);
        count += assert_inputs_bounded(target, path);
    }
    eprintln!(
        "{} fuzz findings checked, {count} inputs they stand for",
        findings.len()
    );
}

/// Every committed fuzz corpus (`fuzz/corpus/TARGET/`, what the fuzzers kept as
/// reaching new code): each input as the entry points see it. Fails when a
/// target's corpus is missing or empty.
#[test]
fn every_committed_fuzz_corpus_input_is_bounded() {
    let all = inputs_under("fuzz/corpus");
    let mut per_target = std::collections::BTreeMap::new();
    for (target, path) in &all {
        *per_target.entry(target.as_str()).or_insert(0usize) += assert_inputs_bounded(target, path);
    }
    for (target, _) in hrry_testkit::targets::TARGETS {
        assert!(
            all.iter().any(|(t, _)| t == target),
            "fuzz/corpus/{target} is missing or empty"
        );
    }
    assert!(
        per_target.values().sum::<usize>() > 0,
        "no committed corpus input checked"
    );
    eprintln!("{per_target:?} committed corpus inputs checked");
}

/// Inputs as dense in small structures as the format allows: each encoded byte
/// becomes as much memory as any input can make it.
#[test]
fn densest_inputs_are_bounded() {
    const N: usize = 20_000;
    // An index of entries with empty names (30 bytes each).
    let index = to_bytes(&IndexSection {
        entries: vec![IndexEntry::default(); N],
    });
    assert_bounded("dense index", &craft(&[], None, &index, 0));

    // KV entries of 4 bytes each (empty, hence duplicate, key; bool 2): three
    // violations per entry. And one array of 1-byte bools.
    let bools = KvSection {
        entries: vec![
            KvEntry {
                key: Vec::new(),
                value: KvValue::Bool(2),
            };
            N
        ],
    };
    let kv = to_bytes(&bools);
    assert_bounded("dense KV", &craft(&[], Some(&kv), &empty_index(), 0));
    let array = KvSection {
        entries: vec![KvEntry {
            key: b"a".to_vec(),
            value: KvValue::Array(KvArray::new(5, vec![KvScalar::Bool(0); N * 4])),
        }],
    };
    let kv = to_bytes(&array);
    assert_bounded("dense KV array", &craft(&[], Some(&kv), &empty_index(), 0));

    // A tensor region of minimal descriptors (32 bytes each with padding) that the
    // index does not list.
    let mut region = Vec::new();
    for _ in 0..N {
        region.extend_from_slice(&minimal_descriptor());
        region.resize(region.len().div_ceil(8) * 8, 0);
    }
    assert_bounded(
        "dense region",
        &craft(&region, None, &empty_index(), N as u64),
    );
}

/// Asserts `bytes` is refused by every reader while holding at most
/// `REJECT_CONSTANT` bytes, with each limit at its default and at the wire maximum.
fn assert_rejected_small(name: &str, bytes: &[u8], rule: &str) {
    for limits in [Limits::default(), wire_maximum()] {
        let options = Options {
            judging: Rules::Hardened.into(),
            limits,
        };
        let in_memory = || hrry::Format::HrryFile.validate_bytes(bytes, &options);
        let piecemeal = || {
            hrry::Format::HrryFile
                .validate_source(&Piecemeal(bytes), &options)
                .expect("readable")
        };
        let mut found = Vec::new();
        for (what, validate) in [
            (
                "validation",
                &in_memory as &dyn Fn() -> hrry::validate::Report,
            ),
            ("validation from a source", &piecemeal),
        ] {
            let mut rules = None;
            let peak = peak_of(|| {
                rules = Some(
                    validate()
                        .violations
                        .iter()
                        .map(|v| v.rule.id)
                        .collect::<Vec<_>>(),
                );
            });
            assert!(peak <= REJECT_CONSTANT, "{name}: {what} held {peak} bytes");
            let rules = rules.expect("validated");
            assert!(
                rules.contains(&rule)
                    || (limits == Limits::default() && rules.contains(&"HF-LIM-001")),
                "{name}: {what} expected {rule}, got {rules:?}"
            );
            found.push(rules);
        }
        assert_eq!(found[0], found[1], "{name}");
        let peak = peak_of(|| {
            let opened = hrry::file::OpenOptions::new()
                .limits(limits)
                .open_bytes(bytes)
                .map(|f| {
                    f.entries()
                        .map(|e| f.tensor_at(e).is_ok())
                        .collect::<Vec<_>>()
                });
            assert!(
                opened
                    .as_ref()
                    .map_or(true, |reads| reads.iter().any(|ok| !ok)),
                "{name}: opened and read cleanly"
            );
        });
        assert!(
            peak <= REJECT_CONSTANT,
            "{name}: HrryFile held {peak} bytes"
        );
        for end in [TensorRegionEnd::BufferToEof, TensorRegionEnd::CountHint] {
            let peak = peak_of(|| {
                if let Ok(mut r) = SequentialReader::new(bytes, end, limits) {
                    while let Ok(Some(_)) = r.next_tensor() {}
                }
            });
            assert!(
                peak <= REJECT_CONSTANT + 2 * bytes.len(),
                "{name}: sequential reader held {peak} bytes"
            );
        }
    }
}

#[test]
fn index_claiming_2_pow_64_tensors_is_rejected_before_allocating() {
    let mut index = u64::MAX.to_le_bytes().to_vec();
    index.extend_from_slice(&[0u8; 30]);
    let file = craft(&[], None, &index, 0);
    assert_rejected_small("2^64 tensors", &file, "HF-IDX-001");
}

#[test]
fn kv_claiming_2_pow_32_entries_is_rejected_before_allocating() {
    // kv_count is a uint32: 2^32 - 1 is the most it can claim.
    let mut kv = u32::MAX.to_le_bytes().to_vec();
    kv.extend_from_slice(&[1, 0, b'k', 5, 1]);
    let file = craft(&[], Some(&kv), &empty_index(), 0);
    assert_rejected_small("2^32 KV entries", &file, "HF-KV-001");

    // The same inside an array value: 2^32 - 1 elements of 8 bytes.
    let mut kv = 1u32.to_le_bytes().to_vec();
    kv.extend_from_slice(&[1, 0, b'k', 7, 2]);
    kv.extend_from_slice(&u32::MAX.to_le_bytes());
    kv.extend_from_slice(&[0; 16]);
    let file = craft(&[], Some(&kv), &empty_index(), 0);
    assert_rejected_small("2^32 array elements", &file, "HF-KV-001");

    // A string claiming 4 GiB.
    let mut kv = 1u32.to_le_bytes().to_vec();
    kv.extend_from_slice(&[1, 0, b'k', 1]);
    kv.extend_from_slice(&u32::MAX.to_le_bytes());
    kv.extend_from_slice(b"abc");
    let file = craft(&[], Some(&kv), &empty_index(), 0);
    assert_rejected_small("4 GiB string", &file, "HF-KV-001");
}

#[test]
fn descriptor_claiming_rank_2_pow_32_is_rejected_before_allocating() {
    for rank in [u32::MAX, 1 << 31, 65] {
        let descriptor = descriptor_claiming_rank(rank);
        let index = to_bytes(&IndexSection {
            entries: vec![IndexEntry {
                name: b"t".to_vec(),
                descriptor_offset: 64,
                descriptor_length: descriptor.len() as u32,
                data_offset: 64 + descriptor.len() as u64,
                data_length: 0,
                flags: 0,
            }],
        });
        let file = craft(&descriptor, None, &index, 1);
        assert_rejected_small(&format!("rank {rank}"), &file, "TD-SHP-001");
    }
}

/// A `.holo` archive laid out by hand: header claiming `section_count`, the given
/// table entries `(kind, payload)` with payloads placed after the table, and a
/// correct BLAKE3 footer.
fn holo_archive(section_count: u16, sections: &[(u8, Vec<u8>)]) -> Vec<u8> {
    let mut out = b"HOLO".to_vec();
    out.extend_from_slice(&2u16.to_le_bytes()); // format_version
    out.extend_from_slice(&0u16.to_le_bytes()); // flags
    out.extend_from_slice(&section_count.to_le_bytes());
    let mut offset = 10 + 24 * sections.len() as u64;
    for (kind, payload) in sections {
        out.push(*kind);
        out.extend_from_slice(&[0; 7]);
        out.extend_from_slice(&offset.to_le_bytes());
        out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        offset += payload.len() as u64;
    }
    for (_, payload) in sections {
        out.extend_from_slice(payload);
    }
    let hash = blake3::hash(&out);
    out.extend_from_slice(hash.as_bytes());
    out
}

/// Asserts `.holo` bytes are refused by the validator and the loader while holding
/// at most `REJECT_CONSTANT` bytes.
fn assert_holo_rejected_small(name: &str, bytes: &[u8]) {
    for mode in [Rules::Hardened, Rules::Permissive] {
        let mut valid = true;
        let peak = peak_of(|| {
            valid = hrry::Format::Holo
                .validate_bytes(
                    bytes,
                    &hrry::validate::Options {
                        judging: mode.into(),
                        ..Default::default()
                    },
                )
                .is_valid()
        });
        assert!(!valid, "{name}: validates");
        assert!(
            peak <= REJECT_CONSTANT,
            "{name}: validation held {peak} bytes"
        );
        let peak = peak_of(|| {
            valid = hrry::Format::Holo
                .validate_source(
                    &Piecemeal(bytes),
                    &hrry::validate::Options {
                        judging: mode.into(),
                        ..Default::default()
                    },
                )
                .expect("readable")
                .is_valid()
        });
        assert!(!valid, "{name}: validates from a source");
        assert!(
            peak <= REJECT_CONSTANT,
            "{name}: validation from a source held {peak} bytes"
        );
    }
    let mut loaded = true;
    let peak = peak_of(|| loaded = hrry::holo::HoloLoader::from_bytes(bytes).is_ok());
    assert!(!loaded, "{name}: loads");
    assert!(peak <= REJECT_CONSTANT, "{name}: loader held {peak} bytes");
}

#[test]
fn holo_claiming_huge_counts_is_rejected_before_allocating() {
    // section_count is a uint16: 65 535 table entries claimed by a 42-byte file.
    assert_holo_rejected_small("65535 sections", &holo_archive(u16::MAX, &[]));
    // Counts inside payloads are uint32: 2^31 ports, schedule levels, shapes,
    // weights and constants, each claimed by a payload of a few bytes.
    let claim = |n: u32| {
        let mut p = n.to_le_bytes().to_vec();
        p.extend_from_slice(&[0; 12]);
        p
    };
    for kind in [9u8, 10, 2, 12, 4, 3, 11] {
        let archive = holo_archive(1, &[(kind, claim(1 << 31))]);
        assert_holo_rejected_small(&format!("section kind {kind} claiming 2^31"), &archive);
    }
}

/// An archive whose sections decode to more than `max_memory` is refused by the
/// validator (from memory and from a source) and the loader with `HF-LIM-001`
/// naming `max_memory`, having held no more than the cap: every list is charged
/// before it grows.
#[test]
fn holo_past_max_memory_is_refused_within_the_cap() {
    // 400 000 empty inline constants: 4 MB on the wire, about 22 MB decoded; and
    // 400 000 empty Schedule levels: 1.6 MB read whole, about 10 MB decoded.
    let mut constants = 400_000u32.to_le_bytes().to_vec();
    for slot in 0..400_000u32 {
        constants.push(0); // inline
        constants.extend_from_slice(&slot.to_le_bytes());
        constants.push(1); // dtype
        constants.extend_from_slice(&0u32.to_le_bytes()); // body_length
    }
    let mut levels = 400_000u32.to_le_bytes().to_vec();
    levels.extend_from_slice(&[0; 4 * 400_000]);
    let cap: u64 = 1 << 20;
    let limits = Limits {
        max_memory: cap,
        ..Limits::default()
    };
    for (name, kind, payload) in [("Constants", 11u8, constants), ("Schedule", 2, levels)] {
        let archive = holo_archive(1, &[(kind, payload)]);
        let options = Options {
            limits,
            ..Default::default()
        };
        let mut ids = Vec::new();
        let peak = peak_of(|| {
            ids = hrry::Format::Holo
                .validate_bytes(&archive, &options)
                .rule_ids()
        });
        assert_eq!(ids, ["HF-LIM-001"], "{name}");
        assert!(
            peak as u64 <= cap + REJECT_CONSTANT as u64,
            "{name}: validation held {peak} bytes"
        );
        let peak = peak_of(|| {
            ids = hrry::Format::Holo
                .validate_source(&Piecemeal(&archive), &options)
                .expect("readable")
                .rule_ids()
        });
        assert_eq!(ids, ["HF-LIM-001"], "{name} from a source");
        assert!(
            peak as u64 <= cap + REJECT_CONSTANT as u64,
            "{name}: validation from a source held {peak} bytes"
        );
        let mut refused = None;
        let peak = peak_of(|| {
            refused = hrry::holo::HoloLoader::with_limits(&archive[..], &limits)
                .err()
                .and_then(|e| e.exceeded_limit())
        });
        assert_eq!(refused, Some(hrry::limits::Limit::Memory), "{name}");
        assert!(
            peak as u64 <= cap + REJECT_CONSTANT as u64,
            "{name}: loader held {peak} bytes"
        );
        // Within the default budget the same archive loads.
        assert!(
            hrry::holo::HoloLoader::from_bytes(&archive).is_ok(),
            "{name}"
        );
    }
}

/// Asserts a stream or capture is refused while holding at most `REJECT_CONSTANT`
/// bytes, with each limit at its default and at the wire maximum.
fn assert_stream_rejected_small(name: &str, bytes: &[u8], rules: &[&str]) {
    for limits in [Limits::default(), wire_maximum()] {
        let mut got = Vec::new();
        let peak = peak_of(|| {
            got = if rules[0].starts_with("TR-") {
                let options = Options {
                    judging: Rules::Hardened.into(),
                    limits: Limits {
                        max_message_size: u32::MAX,
                        ..limits
                    },
                };
                hrry::Format::Messages
                    .validate_bytes(bytes, &options)
                    .rule_ids()
            } else {
                let options = Options {
                    judging: Rules::Hardened.into(),
                    limits,
                };
                hrry::Format::Stream
                    .validate_bytes(bytes, &options)
                    .rule_ids()
            };
        });
        assert!(peak <= REJECT_CONSTANT, "{name}: held {peak} bytes");
        assert!(
            got.iter().any(|id| rules.contains(id)),
            "{name}: expected one of {rules:?}, got {got:?}"
        );
    }
}

#[test]
fn streams_claiming_huge_sizes_are_rejected_before_allocating() {
    // A descriptor claiming 4 GiB (the most descriptor_length can say).
    let mut d = minimal_descriptor();
    d[6..10].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_stream_rejected_small("4 GiB descriptor", &d, &["ST-TRN-002", "HF-LIM-001"]);
    // A descriptor claiming rank 2^32 - 1.
    assert_stream_rejected_small(
        "rank 2^32",
        &descriptor_claiming_rank(u32::MAX),
        &["TD-SHP-001"],
    );
    // A buffer of 2^63 bytes behind a 45-byte descriptor.
    let mut big = minimal_descriptor();
    big[6..10].copy_from_slice(&45u32.to_le_bytes());
    big[28] = 1; // buffer_count
    big.extend_from_slice(&(1u64 << 63).to_le_bytes());
    big.extend_from_slice(&[64, 0, 0, 0, 0, 0, 0, 0]);
    big.extend_from_slice(&[7; 100]);
    assert_stream_rejected_small("2^63-byte buffer", &big, &["ST-TRN-003"]);
}

#[test]
fn messages_claiming_huge_sizes_are_rejected_before_allocating() {
    let frame = |ty: u32, payload: &[u8], claimed: u32| {
        let mut f = ty.to_le_bytes().to_vec();
        f.extend_from_slice(&1u32.to_le_bytes());
        f.extend_from_slice(&claimed.to_le_bytes());
        f.extend_from_slice(payload);
        f
    };
    // A PING announcing a 4 GiB payload, with 16 bytes of it present.
    assert_stream_rejected_small(
        "4 GiB payload",
        &frame(0x0A, &[0; 16], u32::MAX),
        &["TR-FRM-001"],
    );
    // A HELLO whose layout list claims 65 535 entries, in a payload of 20 bytes.
    let mut hello = vec![1, 0, 0, 0, 0, 16, 0, 0];
    hello.extend_from_slice(&[0; 8]);
    hello.extend_from_slice(&u16::MAX.to_le_bytes());
    hello.extend_from_slice(&[1, 2]);
    assert_stream_rejected_small(
        "65535 layout entries",
        &frame(0x01, &hello, hello.len() as u32),
        &["TR-MSG-004"],
    );
    // A TENSOR_PUT whose key and descriptor claim 4 GiB each.
    let mut put = u32::MAX.to_le_bytes().to_vec();
    put.extend_from_slice(b"key");
    assert_stream_rejected_small(
        "4 GiB tensor_key",
        &frame(0x07, &put, put.len() as u32),
        &["TR-MSG-004"],
    );
    // A TENSOR_DESCRIPTOR whose descriptor claims 4 GiB.
    let mut d = minimal_descriptor();
    d[6..10].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_stream_rejected_small(
        "4 GiB descriptor in a message",
        &frame(0x04, &d, d.len() as u32),
        &["TR-MSG-004", "HF-LIM-001"],
    );
}

/// Truncating a valid stream at every offset and flipping every bit of its
/// descriptors: each variant is read and validated as a stream within the bound.
#[test]
fn truncated_and_bit_flipped_streams_are_bounded() {
    let streams = all_cases().into_iter().filter(|c| {
        c.format == hrry::Format::Stream && c.expect == hrry_testkit::corpus::Expect::Valid
    });
    let mut variants = 0;
    for case in streams {
        let bytes = &case.bytes;
        let check = |variant: &[u8], what: &str| {
            let peak = peak_of(|| read_as_stream_and_messages(variant, Limits::default()));
            let bound = ALLOC_FACTOR * variant.len() + ALLOC_CONSTANT;
            assert!(peak <= bound, "{} {what}: held {peak} bytes", case.path);
        };
        for n in 0..bytes.len() {
            check(&bytes[..n], &format!("cut at {n}"));
            variants += 1;
        }
        let mut r = StreamReader::new(&bytes[..]);
        let mut descriptors = Vec::new();
        while let Some(t) = r.next_tensor().expect("valid stream") {
            descriptors.push(t.descriptor_offset as usize..t.data_offset as usize);
        }
        for i in descriptors.into_iter().flatten() {
            for bit in 0..8 {
                let mut flipped = bytes.clone();
                flipped[i] ^= 1 << bit;
                check(&flipped, &format!("byte {i} bit {bit} flipped"));
                variants += 1;
            }
        }
    }
    eprintln!("{variants} truncated or flipped streams checked");
}

//! Builds the fuzz targets' seed corpora from the conformance corpus:
//! `cargo run --release -p hrry-tools --bin fuzz_seeds -- corpus fuzz/corpus` (what
//! `fuzz/run.sh` does).
//!
//! Whole HRRYFILEs seed `open_file` (and `sequential`, behind its control byte);
//! the descriptors, index sections and KV sections cut out of them seed
//! `descriptor`, `index_section` and `kv_section`; `.holo` archives seed `holo`;
//! bare streams (`corpus/stream/`) seed `stream`, behind its control byte, and
//! captured conversations (`corpus/messages/`) seed `messages`, and their
//! client-side messages `serve`.
//! `oracle_readers` gets the HRRYFILEs too. `gguf` gets a small hand-built GGUF
//! preamble. The structure-aware targets (`roundtrip`, `simd_dequant`, `writer`,
//! `mutate`, `export_layouts`, `tensor_buffers`), whose bytes drive a generator rather than being a
//! file, get a few fixed pseudo-random inputs of various lengths to start from.
//! The seeds themselves are not committed: `fuzz/run.sh` runs this before fuzzing,
//! so they always match `corpus/`; what the fuzzers grew from them, minimised, is
//! (`fuzz/corpus/`).

use std::fs;
use std::path::{Path, PathBuf};

use hrry::file::HrryFile;
use hrry::schema::{read_from, Trailer, TRAILER_LEN};

fn slice(bytes: &[u8], offset: u64, len: u64) -> Option<&[u8]> {
    let start = usize::try_from(offset).ok()?;
    bytes.get(start..start.checked_add(usize::try_from(len).ok()?)?)
}

fn put(out: &Path, target: &str, name: &str, bytes: &[u8]) {
    let dir = out.join(target);
    fs::create_dir_all(&dir).expect("create seed folder");
    fs::write(dir.join(name), bytes).expect("write seed");
}

fn files(corpus: &Path) -> Vec<PathBuf> {
    let mut all = Vec::new();
    for sub in hrry_testkit::corpus::FOLDERS {
        let Ok(dir) = fs::read_dir(corpus.join(sub)) else {
            continue;
        };
        all.extend(dir.filter_map(|e| Some(e.ok()?.path())));
    }
    all.sort();
    all
}

/// `len` bytes of a fixed pseudo-random sequence (a linear congruential generator
/// started at `seed`).
fn pseudo_random(seed: u64, len: usize) -> Vec<u8> {
    let mut state = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 56) as u8
        })
        .collect()
}

/// A GGUF version 3 preamble: three metadata pairs (a uint32, a string, an array of
/// uint32) and one float32 tensor info of shape [4, 8].
fn gguf_seed() -> Vec<u8> {
    let string = |out: &mut Vec<u8>, s: &str| {
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    };
    let mut g = b"GGUF".to_vec();
    g.extend_from_slice(&3u32.to_le_bytes()); // version
    g.extend_from_slice(&1u64.to_le_bytes()); // tensor_count
    g.extend_from_slice(&3u64.to_le_bytes()); // metadata_kv_count
    string(&mut g, "general.alignment");
    g.extend_from_slice(&4u32.to_le_bytes()); // uint32
    g.extend_from_slice(&32u32.to_le_bytes());
    string(&mut g, "general.architecture");
    g.extend_from_slice(&8u32.to_le_bytes()); // string
    string(&mut g, "llama");
    string(&mut g, "tokenizer.ids");
    g.extend_from_slice(&9u32.to_le_bytes()); // array
    g.extend_from_slice(&4u32.to_le_bytes()); // of uint32
    g.extend_from_slice(&2u64.to_le_bytes());
    g.extend_from_slice(&7u32.to_le_bytes());
    g.extend_from_slice(&9u32.to_le_bytes());
    string(&mut g, "w");
    g.extend_from_slice(&2u32.to_le_bytes()); // n_dimensions
    g.extend_from_slice(&8u64.to_le_bytes());
    g.extend_from_slice(&4u64.to_le_bytes());
    g.extend_from_slice(&0u32.to_le_bytes()); // F32
    g.extend_from_slice(&0u64.to_le_bytes()); // offset
    g
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, corpus, out] = args.as_slice() else {
        eprintln!("usage: fuzz_seeds CORPUS_DIR OUT_DIR");
        std::process::exit(2);
    };
    let (corpus, out) = (Path::new(corpus), Path::new(out));
    put(out, "gguf", "preamble-v3", &gguf_seed());
    for target in [
        "roundtrip",
        "simd_dequant",
        "writer",
        "mutate",
        "export_layouts",
        "tensor_buffers",
    ] {
        for (i, len) in [64usize, 256, 1024, 4096, 16384].into_iter().enumerate() {
            put(
                out,
                target,
                &format!("random-{i}"),
                &pseudo_random(i as u64, len),
            );
        }
    }
    let mut count = 0;
    for path in files(corpus) {
        let bytes = fs::read(&path).expect("read corpus file");
        let stem = format!(
            "{}-{}",
            path.parent()
                .and_then(|p| p.file_name())
                .map_or("x".into(), |n| n.to_string_lossy()),
            path.file_stem().map_or("x".into(), |n| n.to_string_lossy())
        );
        if bytes.starts_with(b"HOLO") {
            put(out, "holo", &stem, &bytes);
        }
        let in_folder = |name: &str| path.components().any(|c| c.as_os_str() == name);
        if in_folder("stream") {
            for control in [0u8, 1, 2] {
                let mut framed = vec![control];
                framed.extend_from_slice(&bytes);
                put(out, "stream", &format!("stream-{stem}-{control}"), &framed);
            }
        }
        if in_folder("messages") {
            put(out, "messages", &format!("messages-{stem}"), &bytes);
            put(out, "serve", &format!("serve-{stem}"), &client_side(&bytes));
        }
        let is_hrry = bytes.starts_with(b"HRRYFILE");
        if is_hrry {
            put(out, "open_file", &stem, &bytes);
            put(out, "oracle_readers", &stem, &bytes);
            for control in [0u8, 1] {
                let mut framed = vec![control];
                framed.extend_from_slice(&bytes);
                put(out, "sequential", &format!("{stem}-{control}"), &framed);
            }
        }
        count += 1;
        if !is_hrry || bytes.len() < TRAILER_LEN as usize {
            continue;
        }
        let at = bytes.len() - TRAILER_LEN as usize;
        if let Ok((t, _)) = read_from::<Trailer>(&bytes[at..]) {
            if let Some(index) = slice(&bytes, t.index_offset, t.index_length) {
                put(out, "index_section", &stem, index);
            }
            if let Some(kv) = slice(&bytes, t.kv_offset, t.kv_length.into()) {
                if !kv.is_empty() {
                    put(out, "kv_section", &stem, kv);
                }
            }
        }
        if let Ok(file) = HrryFile::from_bytes(&bytes) {
            for (i, e) in file.entries().enumerate() {
                let e = e.index_entry();
                if let Some(d) = slice(&bytes, e.descriptor_offset, e.descriptor_length.into()) {
                    put(out, "descriptor", &format!("{stem}-{i}"), d);
                }
            }
        }
    }
    println!("seeded from {count} corpus files into {}", out.display());
}

/// The messages of a captured conversation a client sends (HELLO, requests,
/// pushes and their data, ERROR, PING, PONG), back to back.
fn client_side(capture: &[u8]) -> Vec<u8> {
    use hrry::schema::transport::message_type as mt;
    use hrry::stream::message::read_frame;
    let mut out = Vec::new();
    let mut source = capture;
    while let Ok(Some(frame)) = read_frame(&mut source, 0, u32::MAX) {
        let t = frame.header.message_type;
        if ![mt::SERVER_HELLO, mt::TENSOR_DESCRIPTOR, mt::TENSOR_PUT_ACK].contains(&t) {
            out.extend_from_slice(&frame.to_bytes());
        }
    }
    out
}

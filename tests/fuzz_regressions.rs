//! Every fuzz finding, minimised (`cargo fuzz tmin`) and kept under
//! `tests/fuzz_findings/TARGET/NAME`, replayed through the very code of the target
//! that found it (`hrry_testkit::targets`). Each has its own named test below; a
//! finding without one fails `every_finding_has_a_test`.
//!
//! And every target's committed corpus (`fuzz/corpus/TARGET/`, what the fuzzers
//! reached so far, minimised) replayed through that target's body, so that every
//! property the targets check holds on every input they ever kept: one test per
//! target, which fails when its corpus is missing or empty.
//! (`tests/alloc_bounds.rs` runs the same corpora through every entry point under
//! its memory bound.)

use std::path::Path;

use hrry_testkit::targets::TARGETS;

/// Declares one named test per finding (`test_name: target / "file";`) and the list
/// `LISTED` of `target/file` that `every_finding_has_a_test` checks against the folder.
macro_rules! findings {
    ($($name:ident : $target:ident / $file:literal;)*) => {
        $(
            #[test]
            fn $name() {
                hrry_testkit::targets::$target(include_bytes!(concat!(
                    "fuzz_findings/",
                    stringify!($target),
                    "/",
                    $file
                )));
            }
        )*
        const LISTED: &[&str] = &[$(concat!(stringify!($target), "/", $file)),*];
    };
}

findings! {
    // The index lists no tensor; the region holds one, followed by zero bytes up to
    // the KV section: the region walk stopped there as incomplete, so the index
    // count (HF-IDX-007) went unchecked and permissive validation and the reader
    // accepted a file whose sequential reading has a tensor random access lacks.
    unindexed_tensor_before_zero_tail: oracle_readers / "unindexed-tensor-before-zero-tail";
    // A descriptor whose byte_offset is near 2^64, handed to `HrryWriter::write_tensor`:
    // the end of the window the writer checks for a packing tail (start + length)
    // overflowed, a panic instead of a refusal.
    byte_offset_near_u64_max: tensor_buffers / "byte-offset-near-u64-max";
    // A composite head with a per-channel quantization section (axis far past its
    // rank), handed straight to the dequantizer: the quantization checks leave a
    // head's section to TD-CMP-006, which the dequantizer did not check, and it
    // indexed the shape with the axis (a panic instead of a refusal).
    composite_head_quantized_per_channel: tensor_buffers / "composite-head-quantized-per-channel";
    // A quantized tensor large enough to be dequantized on several threads:
    // LeakSanitizer saw the workers' thread-local storage not yet freed, since
    // `std::thread::scope` returns when the work is done, not when the threads
    // have exited. The workers are now joined. A race: the replay passes either
    // way; it is kept as an input of the target that found it.
    threads_exiting_after_the_call: simd_dequant / "threads-exiting-after-the-call";
    // Not a HRRYFILE but the start of a safetensors file whose header length is
    // near 2^64: the diagnosis of what the file is added 8 to it (an overflow panic
    // where overflow is checked, a wrapped length elsewhere).
    safetensors_header_length_near_u64_max: open_file / "safetensors-header-length-near-u64-max";
    // A strided tensor of shape [1, 7e13] with a stride of 0: the row-major export
    // wrote every repeated element (libFuzzer's timeout), ExportOptions::max_bytes
    // bounding only what sparse, composite and quantized tensors assemble.
    zero_stride_export_of_7e13_elements: tensor_buffers / "zero-stride-export-of-7e13-elements";
    // A written file with one mutation whose strides put an element's bit address
    // near 2^127, exported in trusted mode: the dense view's bounds check added the
    // element width to that address unchecked (an overflow panic).
    element_bit_address_near_i128_max: mutate / "bit-address-near-i128-max";
}

/// The files of `fuzz/corpus/TARGET/` (or of `$HRRY_FUZZ_CORPUS/TARGET/`, to
/// measure a copy while a campaign changes the committed one), sorted; panics when
/// the folder is missing or empty.
fn committed_corpus(target: &str) -> Vec<std::path::PathBuf> {
    let root = std::env::var_os("HRRY_FUZZ_CORPUS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus"),
        std::path::PathBuf::from,
    );
    let dir = root.join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| {
            panic!("fuzz/corpus/{target}: {e} (every target has a committed corpus)")
        })
        .map(|f| f.expect("readable").path())
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "fuzz/corpus/{target} is empty (every target has a committed corpus)"
    );
    files
}

/// Declares one test per target replaying its committed corpus through its body,
/// and the list `REPLAYED` that `every_target_replays_its_corpus` checks.
macro_rules! corpora {
    ($($target:ident),* $(,)?) => {
        $(
            #[test]
            fn $target() {
                let files = committed_corpus(stringify!($target));
                for path in &files {
                    let bytes = std::fs::read(path).expect("readable corpus file");
                    hrry_testkit::targets::$target(&bytes);
                }
                eprintln!("{}: {} corpus inputs replayed", stringify!($target), files.len());
            }
        )*
        const REPLAYED: &[&str] = &[$(stringify!($target)),*];
    };
}

/// Each target's corpus, replayed (a module of its own: the tests are named after
/// the targets).
mod corpus {
    use super::committed_corpus;
    corpora! {
        open_file, descriptor, kv_section, index_section, sequential, roundtrip, holo,
        simd_dequant, gguf, stream, messages, serve, oracle_readers, writer, mutate,
        export_layouts, tensor_buffers,
    }

    #[test]
    fn every_target_replays_its_corpus() {
        for (name, _) in hrry_testkit::targets::TARGETS {
            assert!(
                REPLAYED.contains(name),
                "target {name} has no corpus replay"
            );
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
        for dir in std::fs::read_dir(root).expect("fuzz/corpus exists") {
            let name = dir.expect("readable").file_name();
            let name = name.to_string_lossy();
            assert!(
                REPLAYED.contains(&name.as_ref()),
                "fuzz/corpus/{name} is not a fuzz target's corpus"
            );
        }
    }
}

#[test]
fn every_finding_has_a_test() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_findings");
    let mut found = Vec::new();
    for dir in std::fs::read_dir(&root).expect("tests/fuzz_findings exists") {
        let dir = dir.expect("readable").path();
        if !dir.is_dir() {
            continue;
        }
        let target = dir.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            TARGETS.iter().any(|(name, _)| *name == target),
            "tests/fuzz_findings/{target} is not a fuzz target"
        );
        for f in std::fs::read_dir(&dir).expect("readable") {
            let name = f
                .expect("readable")
                .file_name()
                .to_string_lossy()
                .into_owned();
            found.push(format!("{target}/{name}"));
        }
    }
    for f in &found {
        assert!(
            LISTED.contains(&f.as_str()),
            "finding {f} has no finding! test"
        );
    }
}

#[test]
fn every_target_runs_on_empty_and_tiny_inputs() {
    for (_, body) in TARGETS {
        for input in [
            &b""[..],
            b"\0",
            b"HRRYFILE",
            b"HRRY\x01\x00\x14\x00\x00\x00",
        ] {
            body(input);
        }
    }
}

#[test]
fn every_target_survives_random_inputs() {
    for (name, body) in TARGETS {
        arbtest::arbtest(|u| {
            let data: Vec<u8> = u.arbitrary()?;
            body(&data);
            Ok(())
        })
        .budget_ms(500);
        eprintln!("{name}: ok");
    }
}

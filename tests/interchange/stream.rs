//! Bare streams: pack / unpack round trips over the corpus, the reader's pieces and
//! limits, the writer's refusals, truncation at every offset and bit flips of every
//! descriptor byte.

use std::io::Read;

use hrry::file::{HrryFile, HrryWriter, WriterOptions};
use hrry::model::build::{composite_head, dense};
use hrry::model::ElementType;
use hrry::stream::{pack, unpack, StreamReader, StreamWriter, TensorNames, UnpackOptions};
use hrry::validate::Options;
use hrry_testkit::corpus::{all_cases, Expect};
use hrry_testkit::targets::Trickle;

/// The valid corpus cases of one format: path and bytes.
fn valid_cases(format: hrry::Format) -> Vec<(String, Vec<u8>)> {
    all_cases()
        .into_iter()
        .filter(|c| c.format == format && c.expect == Expect::Valid)
        .map(|c| (c.path, c.bytes))
        .collect()
}

fn valid_files() -> Vec<(String, Vec<u8>)> {
    valid_cases(hrry::Format::HrryFile)
}

fn valid_streams() -> Vec<(String, Vec<u8>)> {
    valid_cases(hrry::Format::Stream)
}

fn pack_bytes(file: &[u8]) -> Vec<u8> {
    let f = HrryFile::from_bytes(file).expect("opens");
    let mut w = StreamWriter::new(Vec::new());
    pack(&f, &mut w).expect("packs");
    w.finish().expect("finishes")
}

fn unpack_bytes(stream: impl Read) -> Vec<u8> {
    let mut r = StreamReader::new(stream);
    let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    unpack(&mut r, &mut w, &UnpackOptions::default()).expect("unpacks");
    w.finish().expect("finishes")
}

/// Every tensor of a file in file order: descriptor and buffers.
fn tensors_in_file_order(file: &[u8]) -> Vec<(hrry::schema::TensorDescriptor, Vec<Vec<u8>>)> {
    let f = HrryFile::from_bytes(file).expect("opens");
    let mut entries: Vec<_> = f.entries().collect();
    entries.sort_by_key(|e| e.index_entry().descriptor_offset);
    entries
        .into_iter()
        .map(|e| {
            let t = f.tensor_at(e).expect("tensor");
            (
                t.descriptor.clone(),
                t.buffers.iter().map(|b| b.to_vec()).collect(),
            )
        })
        .collect()
}

#[test]
fn every_valid_file_round_trips_through_a_stream() {
    let files = valid_files();
    assert!(files.len() > 30, "the corpus has its valid files");
    for (path, bytes) in files {
        let stream = pack_bytes(&bytes);
        let report = hrry::Format::Stream.validate_bytes(&stream, &Options::default());
        assert!(
            report.is_valid(),
            "{path}: packed stream {:?}",
            report.violations
        );
        for chunk in [usize::MAX, 7, 1] {
            let back = unpack_bytes(Trickle {
                data: &stream,
                chunk,
            });
            assert!(
                hrry::Format::HrryFile
                    .validate_bytes(&back, &Options::default())
                    .is_valid(),
                "{path}: the unpacked file is valid"
            );
            assert_eq!(
                tensors_in_file_order(&back),
                tensors_in_file_order(&bytes),
                "{path}: descriptors and bytes survive (read {chunk} bytes at a time)"
            );
            assert_eq!(
                pack_bytes(&back),
                stream,
                "{path}: re-packing is byte-identical"
            );
        }
    }
}

/// The same round trip through an operating-system pipe: `pack` writes into it
/// from one thread while `unpack` reads from the other end, as
/// `hrry stream pack F -o - | hrry stream unpack - -o G` does.
#[test]
fn every_valid_file_round_trips_through_a_pipe() {
    for (path, bytes) in valid_files() {
        let (reader, writer) = std::io::pipe().expect("a pipe");
        let file = bytes.clone();
        let packer = std::thread::spawn(move || {
            let f = HrryFile::from_bytes(&file).expect("opens");
            let mut w = StreamWriter::new(writer);
            pack(&f, &mut w).expect("packs");
            // `finish` hands back the write end; dropping it closes the pipe, so
            // the reader sees the end of the stream.
            w.finish().expect("finishes");
        });
        let back = unpack_bytes(reader);
        packer.join().expect("the packing thread");
        assert_eq!(
            tensors_in_file_order(&back),
            tensors_in_file_order(&bytes),
            "{path}: descriptors and bytes survive a pipe"
        );
        assert_eq!(
            pack_bytes(&back),
            pack_bytes(&bytes),
            "{path}: re-packing is byte-identical"
        );
    }
}

#[test]
fn pack_path_writes_what_pack_writes() {
    let dir = tempfile::tempdir().unwrap();
    for (path, bytes) in valid_files().into_iter().take(12) {
        let on_disk = dir.path().join("f.hrry");
        std::fs::write(&on_disk, &bytes).unwrap();
        let mut w = StreamWriter::new(Vec::new());
        hrry::stream::pack_path(&on_disk, &mut w).unwrap();
        assert_eq!(w.finish().unwrap(), pack_bytes(&bytes), "{path}");
    }
}

#[test]
fn pieces_stay_inside_buffers_and_cover_the_data() {
    for (path, stream) in valid_streams() {
        for chunk in [usize::MAX, 5] {
            let mut r = StreamReader::new(Trickle {
                data: &stream,
                chunk,
            });
            let mut whole = Vec::new();
            while let Some(t) = r.next_tensor().unwrap() {
                assert_eq!(whole.len() as u64, t.descriptor_offset, "{path}");
                whole.extend_from_slice(&stream[whole.len()..t.data_offset as usize]);
                let sizes: Vec<u64> = t.descriptor.buffers.iter().map(|b| b.byte_size).collect();
                let mut seen = vec![0u64; sizes.len()];
                while let Some(p) = r.next_piece().unwrap() {
                    assert!(!p.bytes.is_empty());
                    assert_eq!(p.offset, seen[p.buffer], "{path}: pieces in order");
                    seen[p.buffer] += p.bytes.len() as u64;
                    assert!(
                        seen[p.buffer] <= sizes[p.buffer],
                        "{path}: inside the buffer"
                    );
                    whole.extend_from_slice(p.bytes);
                }
                assert_eq!(seen, sizes, "{path}: every byte handed out");
                assert_eq!(r.data_remaining(), 0);
            }
            assert_eq!(whole, stream, "{path}: the pieces rebuild the stream");
            assert_eq!(r.position(), stream.len() as u64);
        }
    }
}

#[test]
fn read_data_fills_a_callers_slice_across_buffers() {
    let stream = valid_streams()
        .into_iter()
        .find(|(p, _)| p.ends_with("quant-per-block-int4-f16.hrrys"))
        .unwrap()
        .1;
    let mut r = StreamReader::new(&stream[..]);
    let t = r.next_tensor().unwrap().unwrap();
    assert!(t.descriptor.buffers.len() > 1, "a multi-buffer tensor");
    let mut got = Vec::new();
    let mut buf = [0u8; 3];
    loop {
        let n = r.read_data(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    let start = t.data_offset as usize;
    assert_eq!(got, stream[start..start + t.data_length as usize]);
    // Skipping works mid-tensor too: the next tensor (if any) is found.
    let mut r = StreamReader::new(&stream[..]);
    r.next_tensor().unwrap();
    r.read_data(&mut buf).unwrap();
    let next = r.next_tensor().unwrap();
    assert_eq!(next.is_some(), r.tensors_read() == 2);
}

#[test]
fn the_writer_refuses_what_would_break_the_stream() {
    let d = dense(ElementType::Float32, &[2]).unwrap();
    let mut w = StreamWriter::new(Vec::new());
    assert!(w.write_tensor(&d, &[&[0u8; 4]]).is_err(), "a short buffer");
    let mut bad = d.clone();
    bad.descriptor_length += 1;
    assert!(w.begin_tensor(&bad).is_err(), "a wrong descriptor_length");
    w.begin_tensor(&d).unwrap();
    w.write_data(&[1; 5]).unwrap();
    assert!(
        w.write_data(&[1; 4]).is_err(),
        "more data than the buffers hold"
    );
    assert!(
        w.begin_tensor(&d).is_err(),
        "the previous tensor is unfinished"
    );
    w.write_data(&[1; 3]).unwrap();
    let head = composite_head(ElementType::Float32, &[2], 3, 0, 2);
    w.write_tensor(&head, &[]).unwrap();
    w.write_tensor(&d, &[&[0u8; 8]]).unwrap();
    assert!(w.finish().is_err(), "a composite still waits for a member");

    let mut w = StreamWriter::new(Vec::new());
    w.begin_tensor(&d).unwrap();
    w.copy_data_from(&[9u8; 8][..], 8).unwrap();
    let s = w.finish().unwrap();
    assert_eq!(&s[s.len() - 8..], &[9; 8]);
    let mut w = StreamWriter::new(Vec::new());
    w.begin_tensor(&d).unwrap();
    assert!(
        w.copy_data_from(&[9u8; 3][..], 8).is_err(),
        "the source ran dry"
    );
}

#[test]
fn the_file_writer_takes_data_in_pieces() {
    let d = dense(ElementType::Uint4, &[5]).unwrap();
    let data = [0x21u8, 0x43, 0x05];
    let whole = {
        let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).unwrap();
        w.write_tensor("t", &d, &[&data]).unwrap();
        w.finish().unwrap()
    };
    let pieces = {
        let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).unwrap();
        w.begin_tensor("t", &d).unwrap();
        for b in data.chunks(1) {
            w.write_data(b).unwrap();
        }
        w.end_tensor().unwrap();
        w.finish().unwrap()
    };
    assert_eq!(whole, pieces);
    // The bits after the fifth element are checked from the pieces too.
    let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    w.begin_tensor("t", &d).unwrap();
    w.write_data(&data[..2]).unwrap();
    w.write_data(&[0x35]).unwrap();
    let e = w.end_tensor().unwrap_err().to_string();
    assert!(e.contains("TD-BUF-006"), "{e}");
    // Missing bytes are refused, and so is a file with a tensor left open.
    let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    w.begin_tensor("t", &d).unwrap();
    w.write_data(&data[..2]).unwrap();
    assert!(w.end_tensor().is_err());
    let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    w.begin_tensor("t", &d).unwrap();
    assert!(w.finish().is_err());
}

#[test]
fn names_follow_the_composite_structure() {
    let leaf = dense(ElementType::Float32, &[2]).unwrap();
    let group = |n| composite_head(ElementType::Float32, &[2], 3, 0, n);
    let mut names = TensorNames::new();
    let got: Vec<String> = [&leaf, &group(2), &leaf, &group(1), &leaf, &leaf]
        .iter()
        .map(|d| names.next(d))
        .collect();
    assert_eq!(got, ["t0", "t1", "t1.0", "t1.1", "t1.1.0", "t2"]);
}

/// Offsets where a prefix of `stream` is itself a valid stream: tensor ends
/// outside any composite.
fn clean_cuts(stream: &[u8]) -> Vec<usize> {
    let mut r = StreamReader::new(stream);
    let mut binder = hrry::layout::composite::Binder::new();
    let mut cuts = vec![0];
    while let Some(t) = r.next_tensor().unwrap() {
        r.skip_data().unwrap();
        binder.bind((), &t.descriptor, t.descriptor_offset);
        if binder.is_idle() {
            cuts.push(r.position() as usize);
        }
    }
    cuts
}

#[test]
fn truncation_at_every_offset_is_a_clean_violation() {
    let truncation = ["ST-TRN-001", "ST-TRN-002", "ST-TRN-003", "ST-CMP-001"];
    for (path, stream) in valid_streams() {
        let ends = clean_cuts(&stream);
        for n in 0..stream.len() {
            let prefix = &stream[..n];
            let report = hrry::Format::Stream.validate_bytes(prefix, &Options::default());
            if report.is_valid() {
                // Only a prefix ending where a tensor ends, no composite open.
                assert!(ends.contains(&n), "{path}: cut at {n} passes");
                continue;
            }
            let ids = report.rule_ids();
            assert!(
                ids.iter().all(|id| truncation.contains(id)),
                "{path}: cut at {n} gives {ids:?}"
            );
            // The reader fails the same way, through short reads too.
            let mut r = StreamReader::new(Trickle {
                data: prefix,
                chunk: 3,
            });
            let err = loop {
                match r.next_tensor() {
                    Ok(Some(_)) => {}
                    Ok(None) => break None,
                    Err(e) => break Some(e),
                }
            };
            let rule = err.as_ref().and_then(|e| e.violation()).map(|v| v.rule.id);
            assert_eq!(rule, Some(ids[0]), "{path}: reader at cut {n}");
        }
    }
}

#[test]
fn bit_flips_in_descriptors_never_panic_and_are_mostly_caught() {
    let (mut flips, mut caught) = (0u64, 0u64);
    for (path, stream) in valid_streams() {
        let mut r = StreamReader::new(&stream[..]);
        let mut ranges = Vec::new();
        while let Some(t) = r.next_tensor().unwrap() {
            ranges.push(t.descriptor_offset as usize..t.data_offset as usize);
        }
        for range in ranges {
            for i in range {
                for bit in 0..8 {
                    let mut b = stream.clone();
                    b[i] ^= 1 << bit;
                    flips += 1;
                    let report = hrry::Format::Stream.validate_bytes(&b, &Options::default());
                    if !report.is_valid() {
                        caught += 1;
                        continue;
                    }
                    // An undetected flip still yields a stream every reader agrees
                    // on: it unpacks, and packs back to the same bytes.
                    let back = unpack_bytes(&b[..]);
                    assert_eq!(pack_bytes(&back), b, "{path}: byte {i} bit {bit}");
                }
            }
        }
    }
    eprintln!("{caught} of {flips} single-bit descriptor flips reported");
    assert!(caught * 10 >= flips * 8, "{caught} of {flips} flips caught");
}

#[test]
fn the_reader_names_what_stops_it() {
    let d = dense(ElementType::Float32, &[2]).unwrap();
    let mut w = StreamWriter::new(Vec::new());
    w.write_tensor(&d, &[&[0u8; 8]]).unwrap();
    let good = w.finish().unwrap();
    let first_rule = |bytes: &[u8]| {
        let mut r = StreamReader::new(bytes);
        loop {
            match r.next_tensor() {
                Ok(Some(_)) => {}
                Ok(None) => return None,
                Err(e) => return e.violation().map(|v| v.rule.id),
            }
        }
    };
    assert_eq!(first_rule(&good), None);
    assert_eq!(first_rule(&[]), None, "zero bytes is the empty stream");
    let mut two = good.clone();
    two.extend_from_slice(b"HRR");
    assert_eq!(first_rule(&two), Some("ST-TRN-001"));
    let mut junk = good.clone();
    junk.extend_from_slice(b"\x7fELF");
    assert_eq!(first_rule(&junk), Some("TD-HDR-001"));
    let mut huge = good.clone();
    huge[6..10].copy_from_slice(&(64u32 << 20).to_le_bytes());
    assert_eq!(
        first_rule(&huge),
        Some("HF-LIM-001"),
        "past max_descriptor_bytes"
    );
    // A float32 [2^58] tensor's buffer claiming its 2^60 bytes on a short stream:
    // a truncation, found without holding more than the stream delivers.
    let mut claims = good.clone();
    let size_at = d.buffer_pos(0) as usize;
    claims[size_at..size_at + 8].copy_from_slice(&(1u64 << 60).to_le_bytes());
    let shape_at = hrry::schema::descriptor_offsets::SHAPE as usize;
    claims[shape_at..shape_at + 8].copy_from_slice(&(1u64 << 58).to_le_bytes());
    assert_eq!(first_rule(&claims), Some("ST-TRN-003"));
    let report = hrry::Format::Stream
        .validate_reader(&claims[..], &Options::default())
        .unwrap();
    assert_eq!(report.rule_ids(), ["ST-TRN-003"]);
}

#[test]
fn unpack_refuses_every_invalid_corpus_stream_naming_its_rule() {
    let invalid: Vec<_> = all_cases()
        .into_iter()
        .filter(|c| c.format == hrry::Format::Stream)
        .filter_map(|c| match c.expect {
            Expect::Invalid(rule) => Some((c.path, rule, c.bytes)),
            Expect::Valid => None,
        })
        .collect();
    assert!(invalid.len() >= 16, "{} invalid streams", invalid.len());
    for (path, rule, bytes) in invalid {
        let mut r = StreamReader::new(&bytes[..]);
        let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).unwrap();
        let err = unpack(&mut r, &mut w, &UnpackOptions::default())
            .expect_err(&format!("{path}: refused"));
        assert_eq!(
            err.violation().map(|v| v.rule.id),
            Some(rule),
            "{path}: {err}"
        );
    }
}

#[test]
fn unpack_lets_named_rules_pass_and_returns_them() {
    // The reserved byte of a buffer handle: the writer keeps the descriptor as is.
    let case = all_cases()
        .into_iter()
        .find(|c| c.path == "stream/invalid/TD-BUF-003.hrrys")
        .expect("the corpus stream");
    let rule = hrry::validate::rule_by_id("TD-BUF-003").unwrap();
    let options = UnpackOptions {
        allowed: vec![rule],
        ..UnpackOptions::default()
    };
    let mut r = StreamReader::new(&case.bytes[..]);
    let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    let done = unpack(&mut r, &mut w, &options).expect("let through");
    assert!(done.tensors > 0);
    assert!(!done.allowed.is_empty());
    assert!(done.allowed.iter().all(|v| v.rule.id == "TD-BUF-003"));
    let file = w.finish().unwrap();
    let report = hrry::Format::HrryFile.validate_bytes(&file, &Options::default());
    assert_eq!(
        report.rule_ids(),
        ["TD-BUF-003"],
        "the file has what passed"
    );
}

#[test]
fn the_stream_fuzz_target_holds_on_every_corpus_stream() {
    // Among its properties: unpack refuses exactly what validation rejects.
    let streams: Vec<_> = all_cases()
        .into_iter()
        .filter(|c| c.format == hrry::Format::Stream)
        .collect();
    for case in streams {
        for control in [0u8, 1, 2, 3, 4] {
            let mut data = vec![control];
            data.extend_from_slice(&case.bytes);
            hrry_testkit::targets::stream(&data);
        }
    }
}

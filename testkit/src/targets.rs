//! The body of every fuzz target, shared with `tests/fuzz_regressions.rs` so that
//! a minimised finding is replayed through exactly the code that found it.
//!
//! Each function takes the fuzzer's bytes and panics only when a property breaks;
//! errors on malformed input are the expected outcome, not a failure.

use std::io::Read;

use arbitrary::{Arbitrary, Unstructured};

use hrry::decode::descriptor::check_descriptor;
use hrry::file::{SequentialReader, TensorRegionEnd};
use hrry::limits::Limits;
use hrry::model::ElementType;
use hrry::schema::{read_from, to_bytes, IndexSection, KvSection, TensorDescriptor};
use hrry::schema::{BlockScaled, PerBlockAffine, QuantScheme, SCHEME_MXFP, SCHEME_NF4};
use hrry::validate::{Report, Rules};

use crate::mutation::RichModel;
use crate::ArbitraryModel;

/// A fuzz target's body.
pub type Body = fn(&[u8]);

/// Names of the targets, as in `fuzz/Cargo.toml`, with their bodies.
pub const TARGETS: &[(&str, Body)] = &[
    ("open_file", open_file),
    ("descriptor", descriptor),
    ("kv_section", kv_section),
    ("index_section", index_section),
    ("sequential", sequential),
    ("roundtrip", roundtrip),
    ("holo", holo),
    ("simd_dequant", simd_dequant),
    ("gguf", gguf),
    ("stream", stream),
    ("messages", messages),
    ("serve", serve),
    ("oracle_readers", oracle_readers),
    ("writer", writer),
    ("mutate", mutate),
    ("export_layouts", export_layouts),
    ("tensor_buffers", tensor_buffers),
];

/// Whole files, judged by the readers' agreement
/// ([`crate::oracles::assert_readers_agree_with_validator`]: the validator accepts
/// exactly what the full-check reader reads whole, every refusal names a rule the
/// validator reports), also under limits the input picks
/// ([`crate::oracles::limits_for`]: past a limit, both refuse), by the readers'
/// answers ([`crate::oracles::assert_readers_give_same_bytes`]: random access,
/// sequential, and `stream pack` then the stream reader give the same bytes), and
/// on disk ([`crate::oracles::assert_file_on_disk_agrees`]: positioned reads and a
/// memory map read what the bytes in memory hold).
pub fn oracle_readers(data: &[u8]) {
    readers_agree_in_memory(data);
    crate::oracles::assert_file_on_disk_agrees(data);
}

/// The properties of [`oracle_readers`] that hold the file in memory.
fn readers_agree_in_memory(data: &[u8]) {
    use crate::oracles;
    let (_, strict) = oracles::assert_readers_agree_with_validator(data);
    oracles::assert_readers_agree_under(data, oracles::limits_for(data));
    oracles::assert_trusted_refusals_name_rules(data);
    oracles::assert_readers_give_same_bytes(data, strict);
}

/// Structure-aware: an arbitrary [`RichModel`] (every element type and layout,
/// quantization schemes, composites, KV types) is written by `HrryWriter`; the file
/// validates strictly, reads back equal, and every reader gives the same bytes.
/// The on-disk comparison of [`oracle_readers`] is left to that target and to
/// [`mutate`], whose files are these with one change: it doubled this target's
/// time per input.
pub fn writer(data: &[u8]) {
    let mut u = Unstructured::new(data);
    if let Ok(model) = RichModel::arbitrary(&mut u) {
        let bytes = model.assert_written_faithfully();
        readers_agree_in_memory(&bytes);
    }
}

/// Structure-aware: the file of an arbitrary [`RichModel`] with one targeted
/// mutation ([`crate::mutation::mutate`]: a field, a count, an offset or a flag),
/// run through every reader ([`crate::exercise_file`]) and the reader oracles.
pub fn mutate(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Ok(model) = RichModel::arbitrary(&mut u) else {
        return;
    };
    let Some(bytes) = model.write() else {
        return;
    };
    let Ok(mutated) = crate::mutation::mutate(&mut u, &bytes) else {
        return;
    };
    crate::exercise_file(&mutated);
    oracle_readers(&mutated);
}

/// Structure-aware: a dense tensor of any element type in any dense layout, its
/// buffer sometimes a little short or long; its logical row-major export equals
/// reading it element by element
/// ([`crate::oracles::assert_export_matches_elements`]).
pub fn export_layouts(data: &[u8]) {
    let mut u = Unstructured::new(data);
    if let Ok((desc, buffers)) = crate::mutation::arbitrary_dense(&mut u, false) {
        let slices: Vec<&[u8]> = buffers.iter().map(Vec::as_slice).collect();
        crate::oracles::assert_export_matches_elements(&desc, &slices, 1 << 20);
        crate::oracles::assert_curve_codes_invert(&desc, 1 << 12);
    }
}

/// Structure-aware: a sparse or quantized tensor alone
/// ([`crate::mutation::arbitrary_packed`]: the conformance files' and encoded
/// arbitrary ones, with up to four changes to descriptor and buffers), handed
/// straight to the code behind the readers: the densifier, the dequantizer (with
/// its checks and prevalidated, every kernel) and the row-major export. They must
/// refuse whatever does not fit, without panicking; and when a file holding only
/// that tensor validates strictly, each succeeds and they agree (the export is the
/// densified bytes where the element type needs no widening, or the dequantized
/// values).
pub fn tensor_buffers(data: &[u8]) {
    /// Outputs larger than this are not asked for (a changed shape can claim
    /// far more values than the buffers hold; the readers' limits stop those).
    const MAX_BYTES: u64 = 1 << 20;
    let mut u = Unstructured::new(data);
    let Ok(item) = crate::mutation::arbitrary_packed(&mut u) else {
        return;
    };
    let valid = crate::mutation::stands_alone(std::slice::from_ref(&item));
    let (desc, buffers) = item;
    let slices: Vec<&[u8]> = buffers.iter().map(Vec::as_slice).collect();
    let options = hrry::export::ExportOptions {
        max_bytes: MAX_BYTES,
        ..Default::default()
    };
    let export = hrry::export::row_major_bytes_of(&desc, &slices, &options);
    let quantized = desc.quantization.is_some();
    if hrry::layout::sparse::is_sparse(desc.layout_tag) {
        let dense = hrry::layout::sparse::densify(&desc, &slices, MAX_BYTES);
        // A valid tensor may claim more values than the bound asks for, or than
        // a dense array can count.
        // (The export's bound counts the elements as exported, which for a
        // sub-byte type are wider than packed.)
        // Over the bound: unsupported, "exceeds the limit"; past what the
        // addressing can count: HF-LIM-001.
        let over = |e: &hrry::Error| match e {
            hrry::Error::Unsupported(m) => m.contains("exceeds the limit"),
            e => e.exceeded_limit().is_some(),
        };
        let too_large = matches!(&dense, Err(e) if over(e))
            || matches!(&export, Err(hrry::Error::Unsupported(m)) if m.contains("exceeds the limit"));
        if valid && !too_large {
            let dense = dense.expect("a valid sparse tensor densifies");
            // A quantized one exports its dequantized values (below).
            if !quantized {
                let export = export.as_ref().expect("a valid sparse tensor exports");
                let widened = hrry::export::export_dtype(&desc)
                    .ok()
                    .zip(ElementType::from_tag(desc.type_tag).and_then(|t| t.bit_width()))
                    .is_some_and(|(dtype, bits)| dtype.item_size as u32 * 8 != bits);
                assert!(
                    widened || dense == *export,
                    "the export is not the densified bytes"
                );
            }
        }
    }
    if quantized {
        let checked = hrry::quant::Dequantizer::new(&desc, &slices);
        if valid {
            // Valid, and refused only as a combination the dequantizer does not
            // implement (a sparse quantized tensor, say), never as invalid.
            assert!(
                matches!(checked, Ok(_) | Err(hrry::Error::Unsupported(_))),
                "a valid quantized tensor is refused: {:?}",
                checked.err()
            );
        }
        let fits = |dq: &hrry::quant::Dequantizer<'_>| dq.len().saturating_mul(4) <= MAX_BYTES;
        if let Ok(dq) = hrry::quant::Dequantizer::prevalidated(&desc, &slices) {
            if fits(&dq) {
                let _ = dq.to_vec();
            }
        }
        if checked.as_ref().is_ok_and(fits) {
            let values = crate::dequantize_with_every_kernel(&desc, &slices);
            if valid {
                let values = values.expect("a valid quantized tensor dequantizes");
                if desc.layout_tag == hrry::schema::LAYOUT_BLOCK_PAGED {
                    // A page pool dequantizes in pool order: no logical order.
                    assert!(
                        matches!(export, Err(hrry::Error::Unsupported(_))),
                        "a block-paged tensor exports"
                    );
                } else {
                    let le: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
                    let export = export.as_ref().expect("a valid quantized tensor exports");
                    assert!(*export == le, "the export is not the dequantized values");
                }
            }
        }
    }
}

/// The inputs a target's bytes stand for, as whole files or streams an entry point
/// reads: the bytes themselves for the targets fed whole files, streams or
/// captures; the bytes after the control byte for `sequential` and `stream`; the
/// file a structure-aware target writes (and, for `mutate`, then mutates); nothing
/// for the targets fed a section, a descriptor or a tensor alone. What
/// `tests/alloc_bounds.rs` runs through every entry point under its memory bound.
pub fn inputs_of(target: &str, data: &[u8]) -> Vec<Vec<u8>> {
    let mut u = Unstructured::new(data);
    match target {
        "open_file" | "holo" | "messages" | "serve" | "oracle_readers" => vec![data.to_vec()],
        "sequential" | "stream" => vec![data.get(1..).unwrap_or_default().to_vec()],
        "roundtrip" => ArbitraryModel::arbitrary(&mut u)
            .map(|m| vec![m.write()])
            .unwrap_or_default(),
        "writer" => RichModel::arbitrary(&mut u)
            .ok()
            .and_then(|m| m.write())
            .into_iter()
            .collect(),
        "mutate" => RichModel::arbitrary(&mut u)
            .ok()
            .and_then(|m| m.write())
            .and_then(|bytes| crate::mutation::mutate(&mut u, &bytes).ok())
            .into_iter()
            .collect(),
        _ => Vec::new(),
    }
}

/// Whole-file open: every reader, cross-checked ([`crate::exercise_file`]).
pub fn open_file(data: &[u8]) {
    crate::exercise_file(data);
}

/// A descriptor decoded alone from exactly its bytes, checked by the descriptor
/// rules, and re-encoded to the same bytes.
pub fn descriptor(data: &[u8]) {
    let Ok((d, used)) = read_from::<TensorDescriptor>(data) else {
        return;
    };
    let mut report = Report::default();
    check_descriptor(&d, 0, &mut report);
    // Reading then writing any schema value gives the same bytes back.
    assert_eq!(
        to_bytes(&d),
        &data[..used as usize],
        "descriptor re-encodes"
    );
}

/// The KV section decoded alone and re-encoded to the same bytes.
pub fn kv_section(data: &[u8]) {
    let Ok((kv, used)) = read_from::<KvSection>(data) else {
        return;
    };
    for e in &kv.entries {
        // A value's tag is the byte it is encoded with; an array's elements are of
        // its element type, each as long as it says.
        assert_eq!(to_bytes(&e.value)[0], e.value.tag(), "KvValue::tag");
        if let hrry::schema::KvValue::Array(a) = &e.value {
            for x in a.to_scalars() {
                assert_eq!(x.tag(), a.element_tag, "KvScalar::tag");
                assert_eq!(x.encoded_len(), to_bytes(&x).len() as u64, "encoded_len");
            }
        }
    }
    assert_eq!(
        to_bytes(&kv),
        &data[..used as usize],
        "KV section re-encodes"
    );
}

/// The index section decoded alone; its size accounting and re-encoding agree with
/// the bytes it was read from.
pub fn index_section(data: &[u8]) {
    let Ok((index, used)) = read_from::<IndexSection>(data) else {
        return;
    };
    let encoded: u64 = 8 + index.entries.iter().map(|e| e.encoded_len()).sum::<u64>();
    assert_eq!(encoded, used, "encoded_len accounts for every byte");
    assert_eq!(to_bytes(&index), &data[..used as usize], "index re-encodes");
}

/// A reader returning at most `chunk` bytes per call, like a socket or a pipe.
pub struct Trickle<'a> {
    /// What is left to read.
    pub data: &'a [u8],
    /// Most bytes one `read` returns.
    pub chunk: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.chunk).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// The sequential reader over a stream delivering short reads. The first byte
/// picks the region-end mode (bit 0) and the read size; the rest is the file.
/// Read again under limits the file picks ([`crate::oracles::limits_for`]), the
/// reader gives a prefix of the same tensors.
pub fn sequential(data: &[u8]) {
    let Some((&control, file)) = data.split_first() else {
        return;
    };
    let end = if control & 1 == 0 {
        TensorRegionEnd::BufferToEof
    } else {
        TensorRegionEnd::CountHint
    };
    let chunk = 1 + usize::from(control >> 1) * 37;
    let read = |limits: Limits| -> Vec<(u64, Vec<u8>, Vec<Vec<u8>>)> {
        let stream = Trickle { data: file, chunk };
        let Ok(mut reader) = SequentialReader::new(stream, end, limits) else {
            return Vec::new();
        };
        let _ = reader.header();
        let mut last = reader.position();
        let mut tensors = Vec::new();
        loop {
            match reader.next_tensor() {
                Ok(Some(t)) => {
                    // Every tensor moves the stream forward: no input makes the
                    // reader spin.
                    assert!(
                        reader.position() > last && t.descriptor_offset >= last,
                        "the sequential reader advances"
                    );
                    last = reader.position();
                    tensors.push((t.descriptor_offset, to_bytes(&t.descriptor), t.buffers));
                }
                Ok(None) => {
                    // The end stays the end.
                    assert!(
                        matches!(reader.next_tensor(), Ok(None)),
                        "read past the end"
                    );
                    break;
                }
                Err(_) => break,
            }
        }
        tensors
    };
    let all = read(Limits::default());
    let limited = read(crate::oracles::limits_for(file));
    assert!(
        all.starts_with(&limited),
        "under tighter limits the sequential reader reads other tensors"
    );
}

/// Structure-aware: the bytes drive [`ArbitraryModel`], whose round trip must hold.
pub fn roundtrip(data: &[u8]) {
    let mut u = Unstructured::new(data);
    if let Ok(model) = ArbitraryModel::arbitrary(&mut u) {
        model.assert_round_trip();
    }
}

/// A `.holo` archive, loaded as is and again with its footer hash recomputed over
/// the fuzzer's bytes, so that mutations reach the section decoders instead of
/// stopping at the BLAKE3 check ([`crate::exercise_holo`]).
pub fn holo(data: &[u8]) {
    crate::exercise_holo(data);
    crate::assert_holo_on_disk_agrees(data);
    if data.len() >= 32 {
        let mut sealed = data.to_vec();
        let body = sealed.len() - 32;
        let hash = blake3::hash(&sealed[..body]);
        sealed[body..].copy_from_slice(hash.as_bytes());
        crate::exercise_holo(&sealed);
    }
}

/// Structure-aware: a block-quantized tensor (per-block affine, NF4 or MXFP) of
/// fuzzer-chosen shape, axis, block size, storage and scale types, with arbitrary
/// codes and parameters, dequantized by every kernel: SIMD, scalar blocks and the
/// per-element reference must give the same bits
/// ([`crate::dequantize_with_every_kernel`]).
///
/// A tensor past [`hrry::quant::MIN_VALUES_PER_THREAD`] twice over (rare: see
/// [`arbitrary_block_tensor`]) is checked more cheaply: split over threads, it
/// dequantizes to the same bits as on one.
pub fn simd_dequant(data: &[u8]) {
    let mut u = Unstructured::new(data);
    if let Ok((desc, buffers)) = arbitrary_block_tensor(&mut u) {
        let slices: Vec<&[u8]> = buffers.iter().map(Vec::as_slice).collect();
        crate::dequantize_with_every_kernel(&desc, &slices);
        // Now and then (never once the bytes ran out), split over threads in parts
        // as small as the input says, so that small tensors take the split path.
        if u.len() >= 2 && u.ratio(1u8, 4).unwrap_or(false) {
            if let Ok(min_values) = u.int_in_range(1..=256u16) {
                assert_threads_agree(&desc, &slices, usize::from(min_values));
            }
        }
    }
}

/// One thread, four, and one per available core (into a caller's buffer) give
/// the same bits, splitting into parts of at least `min_values` values.
fn assert_threads_agree(desc: &TensorDescriptor, buffers: &[&[u8]], min_values: usize) {
    let Ok(mut dq) = hrry::quant::Dequantizer::new(desc, buffers) else {
        return;
    };
    dq.set_min_values_per_thread(min_values);
    let Ok(one) = dq.to_vec() else { return };
    dq.set_threads(4);
    let four = dq.to_vec().expect("as on one thread");
    dq.set_threads(0);
    let mut each = vec![f32::NAN; one.len()];
    dq.dequantize_into(&mut each).expect("a buffer of len()");
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
    assert!(bits(&four) == bits(&one), "four threads differ from one");
    assert!(bits(&each) == bits(&one), "every core differs from one");
}

/// A row-major block-quantized tensor; the buffer sizes follow the scheme, the
/// bytes are the fuzzer's (so scales may be invalid, which the dequantizer refuses).
fn arbitrary_block_tensor(
    u: &mut Unstructured<'_>,
) -> arbitrary::Result<(TensorDescriptor, Vec<Vec<u8>>)> {
    use ElementType::*;
    let rank = u.int_in_range(1..=3)?;
    let shape: Vec<u64> = (0..rank)
        .map(|i| {
            // The last axis is the one the block kernels run along: let it be long.
            if i + 1 == rank {
                u.int_in_range(0..=300)
            } else {
                u.int_in_range(0..=4)
            }
        })
        .collect::<arbitrary::Result<_>>()?;
    let axis = if u.ratio(3, 4)? {
        rank - 1
    } else {
        u.int_in_range(0..=rank - 1)?
    };
    let scheme = u.int_in_range(0..=2)?;
    let block_size: u32 = *u.choose(&[1, 2, 4, 8, 16, 32, 64, 3, 5, 7, 24, 33])?;
    let storage = match scheme {
        0 => *u.choose(&[Int8, Uint8, Int4, Uint4, Int2, Uint2])?,
        1 => Uint4,
        _ => *u.choose(&[Float8E4m3, Float8E5m2, Float6E2m3, Float6E3m2, Float4E2m1])?,
    };
    let k = u64::from(block_size);
    let s = shape[axis];
    let padded = s.div_ceil(k) * k;
    let others: u64 = shape
        .iter()
        .enumerate()
        .filter(|&(d, _)| d != axis)
        .map(|(_, &n)| n)
        .product();
    let blocks = s.div_ceil(k) * others;
    let data_len = storage
        .buffer_size(others * padded)
        .ok_or(arbitrary::Error::IncorrectFormat)?;
    let (quant, param_sizes) = match scheme {
        0 => {
            let scale_type_tag = u.int_in_range(1..=3)?;
            let symmetric: bool = u.arbitrary()?;
            let scale_len = if scale_type_tag == 3 { 4 } else { 2 };
            let mut sizes = vec![blocks * scale_len];
            if !symmetric {
                sizes.push(blocks * 4);
            }
            let d = PerBlockAffine::version1(axis as u32, block_size, scale_type_tag, symmetric);
            (QuantScheme::PerBlockAffine(d), sizes)
        }
        1 => {
            let d = BlockScaled::version1(SCHEME_NF4, axis as u32, block_size);
            (QuantScheme::Nf4(d), vec![blocks * 4])
        }
        _ => {
            let d = BlockScaled::version1(SCHEME_MXFP, axis as u32, block_size);
            (QuantScheme::Mxfp(d), vec![blocks])
        }
    };
    let mut sizes = vec![data_len];
    sizes.extend(param_sizes);
    let mut buffers = Vec::new();
    for &n in &sizes {
        let mut b = vec![0u8; usize::try_from(n).map_err(|_| arbitrary::Error::IncorrectFormat)?];
        u.fill_buffer(&mut b)?;
        buffers.push(b);
    }
    let desc = hrry::quant::quantize::quantized_descriptor(storage.tag(), &shape, &sizes, quant);
    Ok((desc, buffers))
}

/// The GGUF preamble (header, metadata, tensor infos) decoded alone, its metadata
/// mapped to KV values, and re-encoded to the same bytes.
pub fn gguf(data: &[u8]) {
    let Ok((preamble, used)) = read_from::<hrry::convert::gguf_schema::GgufPreamble>(data) else {
        return;
    };
    use hrry::convert::gguf_schema::{gguf_type_code, gguf_type_name, GgmlType, GgufValue};
    for kv in &preamble.metadata {
        let _ = hrry::convert::gguf::kv_value(&kv.value);
        let _ = hrry::convert::gguf::value_type_name(&kv.value);
        let code = kv.value.value_type();
        assert_eq!(gguf_type_code(gguf_type_name(code)).unwrap_or(code), code);
        let _ = kv.value.as_u64();
        if let GgufValue::Array(a) = &kv.value {
            let _ = (a.values.len(), a.values.is_empty(), a.values.value_type());
        }
    }
    for t in &preamble.tensors {
        if let Some(ty) = GgmlType::from_code(t.ggml_type) {
            let _ = ty.block_geometry();
            let ne0 = t.dimensions.first().copied().unwrap_or(1);
            let rows = t
                .dimensions
                .iter()
                .skip(1)
                .try_fold(1u64, |a, &n| a.checked_mul(n));
            if let Some(rows) = rows {
                let _ = ty.tensor_bytes(ne0, rows);
            }
        }
    }
    assert_eq!(
        to_bytes(&preamble),
        &data[..used as usize],
        "GGUF preamble re-encodes"
    );
}

/// A bare stream read through short reads (the first byte picks the read size and
/// how the data is consumed: pieces, a caller's slice, or skipped), then
/// validated. Every tensor moves the reader forward; `unpack` refuses exactly the
/// streams the validator rejects, and a stream it passes unpacks to a HRRYFILE
/// that packs back to the same bytes.
pub fn stream(data: &[u8]) {
    use hrry::stream::StreamReader;
    let Some((&control, bytes)) = data.split_first() else {
        return;
    };
    let chunk = 1 + usize::from(control >> 2) * 61;
    let mut reader = StreamReader::new(Trickle { data: bytes, chunk });
    let mut last = 0;
    let mut buf = [0u8; 97];
    let mut count = 0;
    let ended = loop {
        let t = match reader.next_tensor() {
            Ok(Some(t)) => t,
            Ok(None) => break true,
            Err(_) => break false,
        };
        count += 1;
        assert!(
            t.descriptor_offset >= last && reader.position() > t.descriptor_offset,
            "the stream reader advances"
        );
        assert_eq!(reader.tensors_read(), count, "tensors_read");
        assert_eq!(reader.data_remaining(), t.data_length, "data_remaining");
        let mut taken = 0u64;
        let consumed = match control & 3 {
            0 => loop {
                match reader.next_piece() {
                    Ok(Some(p)) => taken += p.bytes.len() as u64,
                    Ok(None) => break true,
                    Err(_) => break false,
                }
            },
            1 => loop {
                match reader.read_data(&mut buf) {
                    Ok(0) => break true,
                    Ok(n) => taken += n as u64,
                    Err(_) => break false,
                }
            },
            _ => {
                taken = t.data_length;
                reader.skip_data().is_ok()
            }
        };
        if consumed {
            assert_eq!(
                taken, t.data_length,
                "the data handed out is the data declared"
            );
            assert_eq!(reader.data_remaining(), 0, "data_remaining after the data");
        }
        last = reader.position();
    };
    if ended {
        assert!(
            reader.into_inner().data.is_empty(),
            "the end of the stream is the end of its bytes"
        );
    }
    // Under limits the stream picks, the reader gives a prefix of the same tensors
    // and the validator accepts only what it accepts under the defaults.
    let limits = crate::oracles::limits_for(bytes);
    let descriptors = |limits| {
        let mut reader = StreamReader::with_limits(bytes, limits);
        let mut found = Vec::new();
        while let Ok(Some(t)) = reader.next_tensor() {
            found.push((t.descriptor_offset, to_bytes(&t.descriptor)));
            if reader.skip_data().is_err() {
                break;
            }
        }
        found
    };
    assert!(
        descriptors(Limits::default()).starts_with(&descriptors(limits)),
        "under tighter limits the stream reader reads other tensors"
    );
    let options = hrry::validate::Options::default();
    let valid = hrry::Format::Stream
        .validate_bytes(bytes, &options)
        .is_valid();
    let limited = hrry::validate::Options { limits, ..options };
    assert!(
        valid
            || !hrry::Format::Stream
                .validate_bytes(bytes, &limited)
                .is_valid(),
        "a stream valid under tighter limits is invalid under the defaults"
    );
    let unpacked = unpack_to_file(bytes);
    assert_eq!(
        unpacked.is_ok(),
        valid,
        "unpack refuses exactly the streams validation rejects: {:?}",
        unpacked.as_ref().err()
    );
    if let Ok(file) = unpacked {
        // By the spec's rules: unpacking keeps each buffer handle's declared
        // alignment but packs buffers to the file's data_buffer_alignment, which
        // the hardening rule HF-PLC-011 may refuse.
        let back = hrry::file::OpenOptions::new()
            .rules(hrry::validate::Rules::Spec)
            .open_bytes(&file)
            .expect("an unpacked file opens");
        let mut w = hrry::stream::StreamWriter::new(Vec::new());
        hrry::stream::pack(&back, &mut w).expect("an unpacked file packs");
        assert_eq!(
            w.finish().expect("finishes"),
            bytes,
            "unpack then pack is the identity"
        );
    }
}

/// A bare stream written as a HRRYFILE by `unpack`, which checks every rule.
fn unpack_to_file(stream: &[u8]) -> Result<Vec<u8>, hrry::stream::Error> {
    let mut reader = hrry::stream::StreamReader::new(stream);
    let mut w = hrry::file::HrryWriter::new(Vec::new(), hrry::file::WriterOptions::default())
        .expect("default options");
    hrry::stream::unpack(&mut reader, &mut w, &hrry::stream::UnpackOptions::default())?;
    Ok(w.finish().expect("finishes"))
}

/// A captured transport conversation: validated whole (strict and permissive) and
/// message by message, which must agree; every payload that decodes re-encodes to
/// the same bytes. Judged again under limits the capture picks
/// ([`crate::oracles::limits_for`]: a small maximum message size, say).
pub fn messages(data: &[u8]) {
    let options = hrry::validate::Options::default();
    messages_under(data, options);
    messages_under(
        data,
        hrry::validate::Options {
            limits: crate::oracles::limits_for(data),
            ..options
        },
    );
}

/// [`messages`] under `options`.
fn messages_under(data: &[u8], options: hrry::validate::Options) {
    use hrry::stream::message::{read_frame, Frame};
    use hrry::stream::Conversation;
    let whole = hrry::Format::Messages.validate_bytes(data, &options);
    let _ = hrry::Format::Messages.validate_bytes(
        data,
        &hrry::validate::Options {
            judging: Rules::Permissive.into(),
            ..options
        },
    );
    let mut conversation = Conversation::new(options);
    let mut found = Vec::new();
    let mut source = data;
    let mut fatal = false;
    let mut frames = 0u64;
    loop {
        let at = conversation.position();
        match read_frame(&mut source, at, options.limits.max_message_size) {
            Ok(Some(frame)) => {
                frames += 1;
                if let Ok((payload, used)) = frame.decode(at) {
                    if used == frame.payload.len() as u64 {
                        let again = Frame::new(frame.header.stream_id, &payload)
                            .expect("a decoded payload fits");
                        assert_eq!(again, frame, "a decoded message re-encodes");
                        // The writers write that frame, within a maximum size
                        // of exactly its payload, and refuse one byte less.
                        assert_message_writers_agree(&frame, &payload);
                    }
                }
                found.extend(conversation.accept(&frame));
            }
            Ok(None) => break,
            Err(e) => {
                found.extend(e.violation().cloned());
                fatal = true;
                break;
            }
        }
    }
    assert_eq!(conversation.messages(), frames, "messages accepted");
    if !fatal {
        found.extend(conversation.finish());
    }
    let listed: Vec<_> = whole
        .violations
        .iter()
        .map(|v| (v.rule.id, v.offset))
        .collect();
    let fed: Vec<_> = found.iter().map(|v| (v.rule.id, v.offset)).collect();
    if whole.suppressed == 0 {
        assert_eq!(
            listed, fed,
            "one message at a time agrees with the whole capture"
        );
    } else {
        // The whole-capture report lists at most MAX_VIOLATIONS_PER_RULE per rule.
        assert_eq!(listed.len() as u64 + whole.suppressed, fed.len() as u64);
    }
}

/// `write_message` (and, for TENSOR_DATA, `write_data_frame`) write exactly
/// `frame`'s bytes for its decoded `payload` when the maximum message size is its
/// payload length, and write nothing when it is one byte less.
fn assert_message_writers_agree(
    frame: &hrry::stream::message::Frame,
    payload: &hrry::stream::message::Payload,
) {
    use hrry::stream::message::{write_data_frame, write_message, Payload};
    let (id, len) = (frame.header.stream_id, frame.header.payload_length);
    let mut out = Vec::new();
    write_message(&mut out, id, payload, len).expect("fits its own length");
    assert_eq!(out, frame.to_bytes(), "write_message");
    if let Some(less) = len.checked_sub(1) {
        let mut none = Vec::new();
        assert!(write_message(&mut none, id, payload, less).is_err() && none.is_empty());
    }
    if let Payload::TensorData(d) = payload {
        let mut out = Vec::new();
        write_data_frame(&mut out, id, d.byte_offset_in_buffer, &d.data, len)
            .expect("fits its own length");
        assert_eq!(out, frame.to_bytes(), "write_data_frame");
        if let Some(less) = len.checked_sub(1) {
            let mut none = Vec::new();
            let refused = write_data_frame(&mut none, id, d.byte_offset_in_buffer, &d.data, less);
            assert!(refused.is_err() && none.is_empty());
        }
    }
}

/// The tensors the `serve` target's server holds: row-major and column-major
/// tensors (so requests can be answered natively or transcoded).
fn serve_catalog_bytes() -> &'static [u8] {
    use hrry::file::{HrryWriter, WriterOptions};
    use hrry::model::build;
    use hrry::schema::{LayoutFields, LAYOUT_COLUMN_MAJOR};
    static BYTES: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    BYTES.get_or_init(|| {
        let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).expect("writer");
        let dense = build::dense(ElementType::Float32, &[8, 8]).expect("descriptor");
        let column = build::descriptor(
            ElementType::Int8.tag(),
            LAYOUT_COLUMN_MAJOR,
            &[3, 5],
            LayoutFields::Implicit,
            &[15],
        );
        let data: Vec<u8> = (0..=255u8).collect();
        for (name, d) in [("dense", &dense), ("column", &column)] {
            w.begin_tensor(name, d).expect("begin");
            let size = d.buffers[0].byte_size as usize;
            w.write_data(&data.repeat(2)[..size]).expect("data");
            w.end_tensor().expect("end");
        }
        w.finish().expect("finish")
    })
}

/// The server's per-connection state machine ([`hrry::serve::Session`]) fed the
/// fuzzer's bytes as the messages a client sends, framed as on the wire: every
/// message is answered without panicking, every message the server writes fits
/// the client's advertised maximum, and a connection never holds more push data
/// than its bound.
pub fn serve(data: &[u8]) {
    use hrry::schema::transport::{MessageHeader, MESSAGE_HEADER_LEN};
    use hrry::serve::session::Output;
    use hrry::serve::{Catalog, ServeOptions, Session};
    use hrry::stream::message::Frame;
    let file = hrry::file::HrryFile::from_bytes(serve_catalog_bytes()).expect("catalog file");
    let options = ServeOptions {
        max_message_size: 1 << 16,
        store_limit: 1 << 20,
        connection_memory: 1 << 18,
        transcode_limit: 1 << 12,
        max_open_streams: 32,
        ..ServeOptions::default()
    };
    let catalog = Catalog::from_files(vec![("fuzz".into(), file)], &options).expect("catalog");
    let mut session = Session::new(std::sync::Arc::new(catalog), options);
    let mut source = data;
    let head = MESSAGE_HEADER_LEN as usize;
    while source.len() >= head {
        let header = read_from::<MessageHeader>(&source[..head])
            .expect("12 bytes")
            .0;
        source = &source[head..];
        let length = header.payload_length as usize;
        let reply = if let Some(reply) = session.screen(&header) {
            // Refused from its header (too long, or not a HELLO before the
            // handshake): the payload is skipped unread, as the server does.
            source = &source[length.min(source.len())..];
            reply
        } else if length > source.len() {
            break; // The client went away mid-message.
        } else {
            let frame = Frame {
                header,
                payload: source[..length].to_vec(),
            };
            source = &source[length..];
            session.receive(&frame)
        };
        let max = u64::from(session.client_max_message_size());
        for output in reply.outputs(session.client_max_message_size()) {
            let length = match &output {
                Output::Frame(f) => f.payload.len() as u64,
                Output::Data { data, .. } => 8 + data.len() as u64,
            };
            assert!(
                length <= max,
                "a {length}-byte payload over the client's {max}"
            );
            session.sent(&output);
        }
        assert!(session.held_bytes() <= options.connection_memory);
        if reply.close {
            assert!(session.is_closed(), "a closing reply ends the session");
            break;
        }
    }
    session.finish();
}

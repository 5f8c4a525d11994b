//! Test support for `hrry`, never published: the generator of the conformance
//! corpus ([`corpus`]), a generator of random *valid* models ([`ArbitraryModel`])
//! and the round-trip oracle they must pass, the cross-reader oracles
//! ([`oracles`]), structure-aware mutation ([`mutation`]) and the bodies of the
//! fuzz targets ([`targets`]).
//!
//! The integration tests, benches and examples of `hrry`, its fuzz targets and the
//! generators in `tools/` use it. The same code drives `tests/format/roundtrip.rs` (with
//! `arbtest`) and the `roundtrip` fuzz target (with libFuzzer), so both check one
//! property: a model written by [`HrryWriter`] validates clean, reads back equal
//! through every reader, and re-encodes to identical bytes.

pub mod corpus;
pub mod hostile;
pub mod mutation;
pub mod oracles;
pub mod targets;

use arbitrary::{Arbitrary, Result, Unstructured};

use hrry::file::{HrryFile, HrryWriter, SequentialReader, TensorRegionEnd, WriterOptions};
use hrry::limits::Limits;
use hrry::model::{build::dense, ElementType, BUILTIN_TYPES};
use hrry::schema::{KvArray, KvScalar, KvValue, LenBytes, TensorDescriptor};
use hrry::validate::Rules;

/// A random valid model: writer options, KV entries and dense tensors with data.
#[derive(Clone, Debug)]
pub struct ArbitraryModel {
    /// How the file is written.
    pub options: WriterOptions,
    /// KV entries, in write order (keys unique).
    pub kv: Vec<(String, KvValue)>,
    /// Tensors in write order (names unique): name, descriptor, the one data buffer.
    pub tensors: Vec<(String, TensorDescriptor, Vec<u8>)>,
}

fn text(u: &mut Unstructured<'_>) -> Result<String> {
    let n = u.int_in_range(1..=12)?;
    (0..n)
        .map(|_| Ok(char::from(u.int_in_range(b'a'..=b'z')?)))
        .collect()
}

fn scalar(u: &mut Unstructured<'_>, tag: u8) -> Result<KvScalar> {
    Ok(match tag {
        1 => KvScalar::String(LenBytes {
            bytes: text(u)?.into_bytes(),
        }),
        2 => KvScalar::Int64(u.arbitrary()?),
        3 => KvScalar::Uint64(u.arbitrary()?),
        4 => KvScalar::Float64(f64::from(u.arbitrary::<i32>()?) / 8.0),
        5 => KvScalar::Bool(u.int_in_range(0..=1)?),
        _ => KvScalar::Bytes(LenBytes {
            bytes: u.arbitrary()?,
        }),
    })
}

fn value(u: &mut Unstructured<'_>) -> Result<KvValue> {
    let tag = u.int_in_range(1..=7)?;
    if tag == 7 {
        let element_tag = u.int_in_range(1..=6)?;
        let n = u.int_in_range(0..=4)?;
        let elements = (0..n)
            .map(|_| scalar(u, element_tag))
            .collect::<Result<Vec<_>>>()?;
        return Ok(KvValue::Array(KvArray::new(element_tag, elements)));
    }
    Ok(match scalar(u, tag)? {
        KvScalar::String(s) => KvValue::String(s),
        KvScalar::Int64(v) => KvValue::Int64(v),
        KvScalar::Uint64(v) => KvValue::Uint64(v),
        KvScalar::Float64(v) => KvValue::Float64(v),
        KvScalar::Bool(v) => KvValue::Bool(v),
        KvScalar::Bytes(v) => KvValue::Bytes(v),
    })
}

impl<'a> Arbitrary<'a> for ArbitraryModel {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let options = WriterOptions {
            data_buffer_alignment: 4096 << u.int_in_range(0..=2)?,
            sorted_index: u.arbitrary()?,
            index_crc32c: u.arbitrary()?,
            tensor_count_hint: None,
            first_descriptor_offset: 64 + 8 * u64::from(u.int_in_range(0u8..=4)?),
            pad_last_buffer_to_alignment: u.arbitrary()?,
            ..WriterOptions::default()
        };
        let mut kv = Vec::new();
        for i in 0..u.int_in_range(0..=5)? {
            kv.push((format!("{}{i}", text(u)?), value(u)?));
        }
        let mut tensors = Vec::new();
        for i in 0..u.int_in_range(0..=6)? {
            let ty: ElementType = *u.choose(&BUILTIN_TYPES)?;
            let rank = u.int_in_range(0..=3)?;
            let shape: Vec<u64> = (0..rank)
                .map(|_| u.int_in_range(0..=5))
                .collect::<Result<_>>()?;
            let d = dense(ty, &shape).expect("small shapes of built-in types fit");
            let mut data = vec![0u8; d.buffers[0].byte_size as usize];
            u.fill_buffer(&mut data)?;
            // element-types.md: the bits after the last packed sub-byte element are 0.
            hrry::layout::dense::clear_unused_tail(&d, &mut data);
            // Reserved codes (float8_e8m0 0x00 / 0xFF) make a tensor invalid.
            if ty == ElementType::Float8E8m0 {
                for b in &mut data {
                    if ty.is_reserved_code((*b).into()) {
                        *b = 0x7F;
                    }
                }
            }
            tensors.push((format!("{}{i}", text(u)?), d, data));
        }
        let mut m = ArbitraryModel {
            options,
            kv,
            tensors,
        };
        if u.arbitrary()? {
            m.options.tensor_count_hint = Some(m.tensors.len() as u64);
        }
        Ok(m)
    }
}

impl ArbitraryModel {
    /// Writes the model with [`HrryWriter`] into memory.
    ///
    /// # Panics
    /// If the writer refuses the model, which the generator never produces.
    pub fn write(&self) -> Vec<u8> {
        let mut w = HrryWriter::new(Vec::new(), self.options).expect("options");
        for (k, v) in &self.kv {
            w.add_kv(k, v.clone()).expect("kv");
        }
        for (name, d, data) in &self.tensors {
            w.write_tensor(name, d, &[data]).expect("tensor");
        }
        w.finish().expect("finish")
    }

    /// Writes the model and checks, panicking on the first difference, that the file
    /// validates clean in strict mode, that [`HrryFile`] reads back every KV entry,
    /// descriptor and buffer, that re-encoding what was read gives identical bytes,
    /// and that [`SequentialReader`] sees the same tensors in write order. Returns
    /// the written bytes.
    pub fn assert_round_trip(&self) -> Vec<u8> {
        let bytes = self.write();
        let (_, report) = hrry::validate_bytes(&bytes, &Default::default());
        assert!(report.is_valid(), "{:?}", report.violations);

        let file = HrryFile::from_bytes(&bytes).expect("opens");
        assert_eq!(file.len(), self.tensors.len());
        assert_eq!(
            file.header().file_flags.has_kv_metadata(),
            !self.kv.is_empty()
        );
        let kv: Vec<(String, KvValue)> = file
            .kv()
            .iter()
            .map(|e| {
                let key = String::from_utf8(e.key.clone()).expect("keys are UTF-8");
                (key, e.value.clone())
            })
            .collect();
        assert_eq!(kv, self.kv);
        for (name, d, data) in &self.tensors {
            let t = file.tensor(name).expect("reads").expect("present");
            assert_eq!(t.descriptor, d);
            assert_eq!(t.buffers, vec![data.as_slice()]);
        }

        // Re-encode what was read, in file (descriptor) order: identical bytes.
        let mut order: Vec<_> = file.entries().collect();
        order.sort_by_key(|e| e.index_entry().descriptor_offset);
        let again = ArbitraryModel {
            options: self.options,
            kv,
            tensors: order
                .iter()
                .map(|e| {
                    let t = file.tensor_at(*e).expect("reads");
                    (
                        e.name().to_string(),
                        t.descriptor.clone(),
                        t.buffers[0].to_vec(),
                    )
                })
                .collect(),
        };
        assert_eq!(again.write(), bytes);

        // The sequential reader sees the same tensors in write order.
        let mut ends = vec![TensorRegionEnd::BufferToEof];
        if self.options.tensor_count_hint.is_some() {
            ends.push(TensorRegionEnd::CountHint);
        }
        for end in ends {
            let mut r =
                SequentialReader::new(bytes.as_slice(), end, Limits::default()).expect("header");
            for (_, d, data) in &self.tensors {
                let t = r.next_tensor().expect("reads").expect("tensor");
                assert_eq!(&t.descriptor, d);
                assert_eq!(t.buffers, vec![data.clone()]);
            }
            assert!(r.next_tensor().expect("region end").is_none());
        }
        bytes
    }
}

/// Runs every reader over untrusted `bytes` — strict and permissive validation,
/// [`HrryFile`] with every tensor read (every quantized tensor dequantized by every
/// kernel, every other one exported in logical row-major order) and the inspect JSON, and the sequential reader in both region-end
/// modes — and returns whether strict validation passed.
///
/// Besides "no panic", it checks that the readers agree: a file strict validation
/// accepts is accepted by permissive validation, opens, reads every tensor, finds
/// every tensor by name, and streams (trailer-probe mode) to the same descriptors
/// and buffers in file order.
///
/// # Panics
/// When the readers disagree on a file that strict validation accepts.
pub fn exercise_file(bytes: &[u8]) -> bool {
    let validate = |mode: Rules| {
        hrry::Format::HrryFile.validate_bytes(
            bytes,
            &hrry::validate::Options {
                judging: mode.into(),
                ..Default::default()
            },
        )
    };
    let (strict, permissive) = (validate(Rules::Hardened), validate(Rules::Permissive));
    for (mode, report) in [(Rules::Hardened, &strict), (Rules::Permissive, &permissive)] {
        let options = hrry::validate::Options {
            judging: mode.into(),
            ..Default::default()
        };
        let piecemeal = hrry::Format::HrryFile.validate_source(&Piecemeal(bytes), &options);
        let piecemeal = piecemeal.expect("reads inside the input succeed");
        assert_same_report(report, &piecemeal, &format!("read piecemeal, {mode:?}"));
        let failing = hrry::Format::HrryFile.validate_source(&Failing::new(bytes), &options);
        if let Ok(failing) = failing {
            assert_same_report(report, &failing, &format!("reads failing past, {mode:?}"));
        }
    }
    let valid = strict.is_valid();
    assert!(
        !valid || permissive.is_valid(),
        "strict accepts but permissive rejects: {:?}",
        permissive.violations
    );
    // (descriptor offset, descriptor, buffers) of every tensor, in file order.
    type Read = (u64, TensorDescriptor, Vec<Vec<u8>>);
    let mut random_access: Vec<Read> = Vec::new();
    match HrryFile::from_bytes(bytes) {
        Ok(file) => {
            for e in file.entries() {
                match file.tensor_at(e) {
                    Ok(t) => {
                        if t.descriptor.quantization.is_some() {
                            dequantize_with_every_kernel(t.descriptor, &t.buffers);
                        } else {
                            // Logical-order export (dense addressing or sparse
                            // densification), bounded like the CLI's.
                            let limit = 16 * bytes.len() as u64 + (1 << 20);
                            if !oracles::assert_export_matches_elements(
                                t.descriptor,
                                &t.buffers,
                                limit,
                            ) {
                                let _ = hrry::layout::logical_row_major(
                                    t.descriptor,
                                    &t.buffers,
                                    limit,
                                );
                            }
                        }
                        random_access.push((
                            e.index_entry().descriptor_offset,
                            t.descriptor.clone(),
                            t.buffers.iter().map(|b| b.to_vec()).collect(),
                        ));
                    }
                    Err(err) => assert!(!valid, "valid file, tensor {:?}: {err}", e.name()),
                }
                if valid {
                    let found = file.find(e.name()).map(|f| f.position());
                    assert_eq!(found, Some(e.position()), "lookup of {:?}", e.name());
                }
            }
            assert_eq!(file.is_empty(), file.entries().next().is_none());
            for e in file.kv() {
                if let Ok(key) = std::str::from_utf8(&e.key) {
                    assert!(file.kv_value(key).is_some(), "kv_value({key:?})");
                }
            }
        }
        Err(err) => assert!(!valid, "valid file does not open: {err}"),
    }
    random_access.sort_by_key(|t| t.0);
    assemble_composites(&random_access, 16 * bytes.len() as u64 + (1 << 20));
    for end in [TensorRegionEnd::BufferToEof, TensorRegionEnd::CountHint] {
        // The count hint is advisory: a valid file may carry a wrong one.
        let must_agree = valid && end == TensorRegionEnd::BufferToEof;
        let mut r = match SequentialReader::new(bytes, end, Limits::default()) {
            Ok(r) => r,
            Err(err) => {
                assert!(!must_agree, "valid file, sequential reader: {err}");
                continue;
            }
        };
        let mut streamed: Vec<Read> = Vec::new();
        loop {
            match r.next_tensor() {
                Ok(Some(t)) => streamed.push((t.descriptor_offset, t.descriptor, t.buffers)),
                Ok(None) => break,
                Err(err) => {
                    assert!(!must_agree, "valid file, sequential reader: {err}");
                    break;
                }
            }
        }
        if must_agree {
            // Compared as encoded bytes: a NaN statistic is never equal to itself.
            let encode = |v: &[Read]| -> Vec<(u64, Vec<u8>, Vec<Vec<u8>>)> {
                v.iter()
                    .map(|(at, d, b)| (*at, hrry::schema::to_bytes(d), b.clone()))
                    .collect()
            };
            assert!(
                encode(&streamed) == encode(&random_access),
                "sequential and random-access readers disagree"
            );
        }
    }
    valid
}

/// Dequantizes a tensor with every kernel (SIMD where the CPU has it, scalar block
/// kernels, per-element reference) and through the row API, when the dequantizer
/// accepts it; returns the reference output.
///
/// # Panics
/// When two kernels or the row API give different bits.
pub fn dequantize_with_every_kernel(
    desc: &TensorDescriptor,
    buffers: &[&[u8]],
) -> Option<Vec<f32>> {
    use hrry::quant::{Dequantizer, Kernel};
    let mut dq = Dequantizer::new(desc, buffers).ok()?;
    dq.set_kernel(Kernel::Reference);
    let reference = dq.to_vec().ok()?;
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
    for kernel in [Kernel::Scalar, Kernel::Auto] {
        dq.set_kernel(kernel);
        let out = dq
            .to_vec()
            .expect("a kernel fails where the reference succeeds");
        assert!(
            bits(&out) == bits(&reference),
            "{kernel:?} differs from the reference"
        );
    }
    // The other ways in: a caller's buffer (streaming stores or not), the free
    // functions, the constructor that skips the data checks, several threads.
    assert_eq!(dq.len(), reference.len() as u64, "len");
    assert_eq!(dq.is_empty(), reference.is_empty(), "is_empty");
    let _ = dq.shape();
    // Into a caller's buffer on every available core (a large tensor is split).
    dq.set_threads(0);
    let mut out = vec![f32::NAN; reference.len()];
    dq.dequantize_into(&mut out)
        .expect("into a buffer of len()");
    assert!(bits(&out) == bits(&reference), "dequantize_into differs");
    out.fill(f32::NAN);
    dq.dequantize_into_fresh(&mut out)
        .expect("into a buffer of len()");
    assert!(
        bits(&out) == bits(&reference),
        "dequantize_into_fresh differs"
    );
    assert!(
        dq.dequantize_into(&mut [0.0]).is_err() || reference.len() == 1,
        "a buffer of the wrong length is refused"
    );
    let free = hrry::quant::dequantize(desc, buffers).expect("dequantize");
    assert!(bits(&free) == bits(&reference), "quant::dequantize differs");
    out.fill(f32::NAN);
    hrry::quant::dequantize_into(desc, buffers, &mut out).expect("quant::dequantize_into");
    assert!(
        bits(&out) == bits(&reference),
        "quant::dequantize_into differs"
    );
    let mut pre = Dequantizer::prevalidated(desc, buffers).expect("prevalidated");
    pre.set_threads(2);
    let threaded = pre.to_vec().expect("prevalidated, two threads");
    assert!(bits(&threaded) == bits(&reference), "prevalidated differs");
    assert!(
        dq.dequantize_rows(dq.rows().saturating_add(1), &mut [])
            .is_err()
            || dq.rows() == u64::MAX,
        "rows past the end are refused"
    );
    let row_len = usize::try_from(dq.row_len()).ok()?;
    if row_len > 1 && dq.rows() > 0 {
        // Part of a row is refused.
        let mut part = vec![0f32; row_len - 1];
        assert!(dq.dequantize_rows(0, &mut part).is_err(), "part of a row");
    }
    if row_len > 0 && dq.rows() > 1 {
        let mut rest = vec![0f32; reference.len() - row_len];
        dq.dequantize_rows(1, &mut rest)
            .expect("rows after the first dequantize");
        assert!(
            bits(&rest) == bits(&reference[row_len..]),
            "rows from 1 differ from the whole"
        );
        let chunks = dq.row_chunks(row_len * 2).ok()?;
        let joined: Vec<f32> = chunks.flat_map(|(_, v)| v).collect();
        assert!(
            bits(&joined) == bits(&reference),
            "row chunks differ from the whole"
        );
    }
    Some(reference)
}

/// Loads `.holo` bytes every way there is — strict and permissive validation, the
/// loader with every accessor, the inspect JSON — and returns whether strict
/// validation passed.
///
/// # Panics
/// When strict validation accepts an archive that permissive validation or the
/// loader rejects.
pub fn exercise_holo(bytes: &[u8]) -> bool {
    let options = |mode: Rules| hrry::validate::Options {
        judging: mode.into(),
        ..Default::default()
    };
    let strict = hrry::Format::Holo.validate_bytes(bytes, &options(Rules::Hardened));
    let permissive = hrry::Format::Holo.validate_bytes(bytes, &options(Rules::Permissive));
    for (mode, report) in [(Rules::Hardened, &strict), (Rules::Permissive, &permissive)] {
        let piecemeal = hrry::Format::Holo.validate_source(&Piecemeal(bytes), &options(mode));
        let piecemeal = piecemeal.expect("reads inside the input succeed");
        assert_same_report(report, &piecemeal, &format!("read piecemeal, {mode:?}"));
        if let Ok(failing) =
            hrry::Format::Holo.validate_source(&Failing::new(bytes), &options(mode))
        {
            assert_same_report(report, &failing, &format!("reads failing past, {mode:?}"));
        }
    }
    let valid = strict.is_valid();
    assert!(
        !valid || permissive.is_valid(),
        "strict accepts but permissive rejects: {:?}",
        permissive.violations
    );
    match hrry::holo::HoloLoader::from_bytes(bytes) {
        Ok(archive) => {
            for s in archive.sections() {
                let payload = archive.section_payload(s);
                // The section lookups agree with the table.
                assert!(archive.has_section(s.kind), "has_section");
                let first = archive.sections().iter().find(|t| t.kind == s.kind);
                let same_kind = archive.sections().iter().filter(|t| t.kind == s.kind);
                assert_eq!(
                    archive.section_bytes(s.kind),
                    first.map(|t| archive.section_payload(t)),
                    "section_bytes"
                );
                assert_eq!(
                    archive.sections_of(s.kind).count(),
                    same_kind.count(),
                    "sections_of"
                );
                let _ = payload;
            }
            let _ = (archive.inputs(), archive.outputs(), archive.kernel_calls());
            for p in archive.inputs() {
                let found = archive.input_port_by_name(&p.name).map(|q| &q.name);
                assert_eq!(found, Some(&p.name), "input_port_by_name");
            }
            for p in archive.outputs() {
                let found = archive.output_port_by_name(&p.name).map(|q| &q.name);
                assert_eq!(found, Some(&p.name), "output_port_by_name");
            }
            assert_eq!(archive.header().format_version, archive.format_version());
            let keys: Vec<String> = archive.extension_keys().map(str::to_string).collect();
            for k in &keys {
                assert!(
                    archive.extension(k).is_some(),
                    "extension {k:?} listed but absent"
                );
            }
            let weights: Vec<_> = archive.weights().map(|(f, _)| *f).collect();
            assert_eq!(weights.len(), archive.weight_count(), "weight_count");
            for f in &weights {
                assert!(archive.weight(f).is_some(), "weight listed but absent");
            }
            for c in archive.constants() {
                let _ = archive.constant_for_slot(c.slot);
            }
            let _ = (
                archive.schedule(),
                archive.exec_plan(),
                archive.shape_registry(),
            );
        }
        Err(err) => assert!(!valid, "valid archive does not load: {err}"),
    }
    let _ = hrry::holo::inspect_json(bytes);
    valid
}

/// A `.holo` archive on disk loads ([`hrry::holo::HoloLoader::open`], a memory
/// map) exactly when the same bytes in memory do, with the same sections.
pub fn assert_holo_on_disk_agrees(bytes: &[u8]) {
    let Ok(mut tmp) = tempfile::NamedTempFile::new() else {
        return; // No temporary folder: nothing to compare.
    };
    if std::io::Write::write_all(&mut tmp, bytes).is_err() {
        return;
    }
    let in_memory = hrry::holo::HoloLoader::from_bytes(bytes);
    let on_disk = hrry::holo::HoloLoader::open(tmp.path());
    match (in_memory, on_disk) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a.sections(), b.sections(), "mapped archive sections");
            assert_eq!(a.into_storage(), b.bytes(), "mapped archive bytes");
        }
        (Err(_), Err(_)) => {}
        (a, b) => panic!(
            "from_bytes: {:?}, open(path): {:?}",
            a.err().map(|e| e.to_string()),
            b.err().map(|e| e.to_string())
        ),
    }
}

/// Assembles every composite head with the tensors that follow it in file order
/// (the logical-order export of composites), bounded by `limit` output bytes.
fn assemble_composites(tensors: &[(u64, TensorDescriptor, Vec<Vec<u8>>)], limit: u64) {
    use hrry::layout::composite::{assemble, Member};
    use hrry::schema::LayoutFields;
    for (i, (_, head, _)) in tensors.iter().enumerate() {
        let LayoutFields::Composite(fields) = &head.layout else {
            continue;
        };
        let rest = &tensors[i + 1..];
        let n = rest.len().min(fields.member_count as usize);
        let slices: Vec<Vec<&[u8]>> = rest[..n]
            .iter()
            .map(|(_, _, b)| b.iter().map(Vec::as_slice).collect())
            .collect();
        let members: Vec<Member<'_>> = rest[..n]
            .iter()
            .zip(&slices)
            .map(|((_, desc, _), buffers)| Member { desc, buffers })
            .collect();
        let _ = assemble(head, &members, limit);
    }
}

/// Bytes in memory read as a file is: through [`hrry::source::ReadAt::read_at`]
/// only (it does not offer the slice), so validators take their piecemeal path.
pub struct Piecemeal<'a>(pub &'a [u8]);

impl hrry::source::ReadAt for Piecemeal<'_> {
    fn len(&self) -> u64 {
        self.0.len() as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        hrry::source::ReadAt::read_at(self.0, offset, buf)
    }
}

/// Bytes in memory whose reads fail (an I/O error, as from a disk or a network)
/// from an offset the bytes pick (their CRC-32C, within their length): a validator
/// reading through it either returns the error or, when it never read there,
/// the report the bytes get; never a verdict made from a failed read.
pub struct Failing<'a> {
    bytes: &'a [u8],
    from: u64,
}

impl<'a> Failing<'a> {
    /// Reads of `bytes` failing from an offset they pick.
    pub fn new(bytes: &'a [u8]) -> Self {
        let from = u64::from(crc32c::crc32c(bytes)) % (bytes.len() as u64 + 1);
        Failing { bytes, from }
    }
}

impl hrry::source::ReadAt for Failing<'_> {
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        if offset.saturating_add(buf.len() as u64) > self.from && !buf.is_empty() {
            return Err(std::io::Error::other("injected read failure"));
        }
        hrry::source::ReadAt::read_at(self.bytes, offset, buf)
    }
}

/// Panics unless the two reports say the same: violations (rule, offset, message)
/// in order, notes, whether validation stopped early, and the suppressed count.
/// `what` names the input in the panic message.
pub fn assert_same_report(a: &hrry::validate::Report, b: &hrry::validate::Report, what: &str) {
    assert_eq!(a.violations, b.violations, "{what}");
    assert_eq!(a.notes, b.notes, "{what}");
    assert_eq!((a.fatal, a.suppressed), (b.fatal, b.suppressed), "{what}");
}

/// A string array like a tokenizer's vocabulary: `n` short tokens (`▁tok0`, …), the
/// largest KV value real checkpoints carry.
pub fn tokenizer_tokens(n: usize) -> KvValue {
    KvValue::Array(KvArray::new(
        0x01,
        (0..n)
            .map(|i| {
                KvScalar::String(LenBytes {
                    bytes: format!("▁tok{i}").into_bytes(),
                })
            })
            .collect::<Vec<_>>(),
    ))
}

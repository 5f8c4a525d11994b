//! Properties that must hold for every input, whatever its bytes: the answers of
//! the readers agree with the validator and with each other, and exports agree
//! with element-by-element reading. Each function panics when its property breaks;
//! a refusal of malformed input is an expected outcome, not a failure.

use hrry::file::{HrryFile, OpenOptions, SequentialReader, TensorRegionEnd};
use hrry::limits::Limits;
use hrry::schema::{to_bytes, TensorDescriptor};
use hrry::validate::{Options, Report, Rules};

/// One tensor as read: descriptor offset, encoded descriptor, buffers. Descriptors
/// are compared encoded, since a NaN statistic is never equal to itself.
type Read = (u64, Vec<u8>, Vec<Vec<u8>>);

/// Panics unless `report` lists `rule` among its violations. `what` names the
/// refusal in the panic message.
fn assert_reports(report: &Report, rule: Option<&str>, what: &str) {
    let ids = report.rule_ids();
    match rule {
        Some(id) => assert!(
            ids.contains(&id),
            "{what} names {id}, which the validator does not report ({ids:?})"
        ),
        None => panic!("{what} names no rule (validator: {ids:?})"),
    }
}

/// The validator and the opening readers agree on `bytes`:
///
/// - in each mode, the validator accepts exactly when [`OpenOptions`] with
///   a [`Depth::Data`](hrry::Depth::Data) judging in that mode opens the file and reads every tensor,
///   and every refusal of that reader (at open or per tensor) names a rule the
///   validator reports;
/// - the default reader (the hardened policy) opens and reads every tensor of a
///   file the strict validator accepts, and its refusals name a rule the strict
///   validator reports.
///
/// Returns the permissive and strict verdicts.
pub fn assert_readers_agree_with_validator(bytes: &[u8]) -> (bool, bool) {
    assert_readers_agree_under(bytes, Limits::default())
}

/// [`assert_readers_agree_with_validator`] with the validator and every reader
/// held to `limits`: a file past one is refused by both, naming `HF-LIM-001`.
pub fn assert_readers_agree_under(bytes: &[u8], limits: Limits) -> (bool, bool) {
    let report = |mode: Rules| {
        hrry::Format::HrryFile.validate_bytes(
            bytes,
            &Options {
                judging: mode.into(),
                limits,
            },
        )
    };
    let (permissive, strict) = (report(Rules::Permissive), report(Rules::Hardened));
    for (mode, report) in [(Rules::Permissive, &permissive), (Rules::Hardened, &strict)] {
        let options = OpenOptions::new()
            .depth(hrry::validate::Depth::Data)
            .rules(mode)
            .limits(limits);
        let read_all = read_every_tensor(&options, bytes, report, &format!("{mode:?} reader"));
        assert_eq!(
            read_all,
            report.is_valid(),
            "{mode:?}: the validator says valid = {} ({:?}), the full-check reader read every tensor = {read_all}",
            report.is_valid(),
            report.rule_ids()
        );
    }
    let default = OpenOptions::new().limits(limits);
    let read_all = read_every_tensor(&default, bytes, &strict, "default reader");
    assert!(
        read_all || !strict.is_valid(),
        "the strict validator accepts a file the default reader cannot read"
    );
    (permissive.is_valid(), strict.is_valid())
}

/// Opens `bytes` with `options` and reads every tensor; true when all of that
/// succeeded. Every refusal must name a rule `report` lists.
fn read_every_tensor(options: &OpenOptions, bytes: &[u8], report: &Report, what: &str) -> bool {
    let file = match options.open_bytes(bytes) {
        Ok(file) => file,
        Err(e) => {
            assert_reports(report, e.rule().map(|r| r.id), &format!("{what}: {e}"));
            return false;
        }
    };
    let mut all = true;
    for entry in file.entries() {
        if let Err(e) = file.tensor_at(entry) {
            let name = entry.name();
            assert_reports(
                report,
                e.rule().map(|r| r.id),
                &format!("{what}, {name:?}: {e}"),
            );
            all = false;
        }
    }
    all
}

/// Every tensor of `file`, in descriptor order, or `None` when one does not read.
fn random_access(file: &HrryFile<'_>) -> Option<Vec<Read>> {
    let mut entries: Vec<_> = file.entries().collect();
    entries.sort_by_key(|e| e.index_entry().descriptor_offset);
    entries
        .into_iter()
        .map(|e| {
            let t = file.tensor_at(e).ok()?;
            Some((
                e.index_entry().descriptor_offset,
                to_bytes(t.descriptor),
                t.buffers.iter().map(|b| b.to_vec()).collect(),
            ))
        })
        .collect()
}

/// The random-access reader, the sequential reader and the stream reader (over the
/// file packed by `stream pack`) give the same descriptors and bytes for every
/// tensor of a file the default reader opens and reads whole:
///
/// - the sequential reader (buffer-to-EOF mode) must agree on every file the strict
///   validator accepts; on any other file, what it reads before stopping must be
///   what the random-access reader reads;
/// - `stream pack` succeeds on every file the strict validator accepts, and the
///   stream it writes passes the stream validator and reads back, through the
///   stream reader, to the same descriptors and buffers in the same order.
pub fn assert_readers_give_same_bytes(bytes: &[u8], strictly_valid: bool) {
    let Ok(file) = HrryFile::from_bytes(bytes) else {
        assert!(!strictly_valid, "a strictly valid file does not open");
        return;
    };
    let Some(tensors) = random_access(&file) else {
        assert!(
            !strictly_valid,
            "a tensor of a strictly valid file does not read"
        );
        return;
    };

    assert_typed_views_match_export(&file);
    assert_trusted_open_agrees(bytes, &tensors, strictly_valid);

    // Sequential reader: a prefix of the same tensors, all of them when valid.
    if let Ok(mut r) = SequentialReader::new(bytes, TensorRegionEnd::BufferToEof, Limits::default())
    {
        let mut i = 0;
        loop {
            match r.next_tensor() {
                Ok(Some(t)) => {
                    // Its typed view reads what the random-access one reads.
                    if let Some(e) = file
                        .entries()
                        .find(|e| e.index_entry().descriptor_offset == t.descriptor_offset)
                    {
                        if let Ok(r) = file.tensor_at(e) {
                            let ours = t
                                .to_vec::<f32>()
                                .ok()
                                .map(|v| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
                            let theirs = r
                                .to_vec::<f32>()
                                .ok()
                                .map(|v| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
                            if to_bytes(&t.descriptor) == to_bytes(r.descriptor) {
                                assert_eq!(ours, theirs, "sequential typed view differs");
                            }
                            let _ = t.as_slice::<u8>();
                        }
                    }
                    let got = (t.descriptor_offset, to_bytes(&t.descriptor), t.buffers);
                    assert!(
                        tensors.get(i) == Some(&got),
                        "sequential reader, tensor {i}: differs from random access"
                    );
                    i += 1;
                }
                Ok(None) => {
                    assert!(
                        !strictly_valid || i == tensors.len(),
                        "sequential reader: {i} of {} tensors",
                        tensors.len()
                    );
                    break;
                }
                Err(e) => {
                    assert!(!strictly_valid, "sequential reader: {e}");
                    break;
                }
            }
        }
    } else {
        assert!(
            !strictly_valid,
            "the sequential reader refuses a valid file"
        );
    }

    // stream pack, then the stream reader.
    let mut w = hrry::stream::StreamWriter::new(Vec::new());
    let packed = hrry::stream::pack(&file, &mut w).and_then(|_| w.finish());
    let stream = match packed {
        Ok(s) => s,
        Err(e) => {
            assert!(!strictly_valid, "stream pack of a valid file: {e}");
            return;
        }
    };
    let report = hrry::Format::Stream.validate_bytes(&stream, &Options::default());
    assert!(
        !strictly_valid || report.is_valid(),
        "a packed valid file is not a valid stream: {:?}",
        report.rule_ids()
    );
    let mut r = hrry::stream::StreamReader::new(stream.as_slice());
    let mut i = 0;
    loop {
        let t = match r.next_tensor() {
            Ok(Some(t)) => t,
            Ok(None) => break,
            Err(e) => {
                assert!(!report.is_valid(), "stream reader on a valid stream: {e}");
                return;
            }
        };
        let buffers = match r.read_buffers() {
            Ok(b) => b,
            Err(e) => {
                assert!(!report.is_valid(), "stream reader data: {e}");
                return;
            }
        };
        let (_, descriptor, data) = tensors.get(i).expect("no more tensors packed than read");
        assert!(
            &to_bytes(&t.descriptor) == descriptor,
            "stream reader, tensor {i}: descriptor differs"
        );
        assert!(&buffers == data, "stream reader, tensor {i}: data differs");
        i += 1;
    }
    assert_eq!(i, tensors.len(), "the stream holds every tensor");
}

/// The logical row-major export of a dense tensor (every dense layout: row- and
/// column-major, strided, tiled, Morton, Hilbert) equals reading it element by
/// element through its addressing, packed row-major at the element's width. The
/// export may only fail where some element cannot be read, or past `limit` bytes.
/// Returns whether the comparison ran (a dense layout whose view builds).
pub fn assert_export_matches_elements(
    desc: &TensorDescriptor,
    buffers: &[&[u8]],
    limit: u64,
) -> bool {
    use hrry::layout::{bits, dense::is_dense, DenseView};
    if !is_dense(desc.layout_tag) || desc.quantization.is_some() {
        return false;
    }
    let Ok(view) = DenseView::new(desc, buffers) else {
        return false;
    };
    let width = view.width();
    let count = view.element_count();
    // Element-by-element reading costs a call per element: bound it like the export.
    if u128::from(count) * u128::from(width) > u128::from(limit) * 8 {
        return false;
    }
    let mut values = Vec::with_capacity(count as usize);
    let mut index = vec![0u64; desc.shape.len()];
    let mut readable = true;
    for _ in 0..count {
        match view.get(&index) {
            Ok(v) => values.push(v),
            Err(_) => {
                readable = false;
                break;
            }
        }
        // Next index in row-major order.
        for (i, n) in index.iter_mut().zip(&desc.shape).rev() {
            *i += 1;
            if *i < *n {
                break;
            }
            *i = 0;
        }
    }
    let exported = hrry::layout::logical_row_major(desc, buffers, limit);
    match (readable, exported) {
        (true, Ok(bytes)) => assert!(
            bytes == bits::pack(width, values),
            "layout 0x{:02X}: export differs from element-by-element reading",
            desc.layout_tag
        ),
        (true, Err(e)) => panic!(
            "layout 0x{:02X}: every element reads but the export fails: {e}",
            desc.layout_tag
        ),
        (false, Ok(_)) => panic!(
            "layout 0x{:02X}: the export succeeds where an element does not read",
            desc.layout_tag
        ),
        (false, Err(_)) => {}
    }
    true
}

/// The typed views of every tensor (`Tensor::to_vec` for each Rust element type
/// the view supports) hold exactly the bytes of its logical row-major export,
/// whenever the view accepts the tensor; and the lazy `descriptors` iterator gives
/// each tensor's descriptor.
fn assert_typed_views_match_export(file: &HrryFile<'_>) {
    assert_eq!(file.descriptors().len(), file.len(), "descriptors().len()");
    for (entry, d) in file.descriptors() {
        let Ok(t) = file.tensor_at(entry) else {
            continue;
        };
        if let Ok(d) = d {
            assert!(
                to_bytes(d) == to_bytes(t.descriptor),
                "descriptors() differs"
            );
        }
        let _ = (
            t.name(),
            t.shape(),
            t.layout(),
            t.element_type(),
            t.is_quantized(),
        );
        let exported = || hrry::layout::logical_row_major(t.descriptor, &t.buffers, 1 << 24);
        macro_rules! view {
            ($($ty:ty),*) => {$(
                if let Ok(values) = t.to_vec::<$ty>() {
                    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
                    let exported = exported().expect("a tensor with a typed view exports");
                    assert!(bytes == exported, "to_vec::<{}> differs from the export", stringify!($ty));
                    let _ = t.as_slice::<$ty>();
                }
            )*};
        }
        view!(f32, f64, i8, u8, i16, u16, i32, u32, i64, u64);
    }
}

/// The trusted open (`Depth::Index`, for files validated earlier) never panics;
/// on a strictly valid file it opens, finds every tensor by name and reads the same
/// descriptors and bytes as the default reader (`tensors`, in descriptor order).
fn assert_trusted_open_agrees(bytes: &[u8], tensors: &[Read], strictly_valid: bool) {
    let trusted = match OpenOptions::new()
        .depth(hrry::validate::Depth::Index)
        .open_bytes(bytes)
    {
        Ok(f) => f,
        Err(e) => {
            assert!(
                !strictly_valid,
                "the trusted open refuses a valid file: {e}"
            );
            return;
        }
    };
    let mut read = Vec::new();
    for e in trusted.entries() {
        let found = trusted.find(e.name()).map(|f| f.position());
        if strictly_valid {
            assert_eq!(
                found,
                Some(e.position()),
                "trusted lookup of {:?}",
                e.name()
            );
        }
        match trusted.tensor_at(e) {
            Ok(t) => read.push((
                e.index_entry().descriptor_offset,
                to_bytes(t.descriptor),
                t.buffers.iter().map(|b| b.to_vec()).collect::<Vec<_>>(),
            )),
            Err(err) => assert!(!strictly_valid, "trusted read of {:?}: {err}", e.name()),
        }
    }
    for d in trusted.descriptors() {
        let _ = d;
    }
    if strictly_valid {
        read.sort_by_key(|t| t.0);
        assert!(read == tensors, "the trusted open reads differently");
    }
}

/// A trusted open over a source decodes descriptors on demand, fetching them in
/// batches: it opens exactly when the trusted open of the bytes in memory does, and
/// [`HrryFile::descriptors`] gives the same descriptors and refusals.
fn assert_trusted_source_open_agrees(bytes: &[u8], path: &std::path::Path) {
    let Ok(source) = hrry::source::FileSource::open(path) else {
        return;
    };
    let trusted = OpenOptions::new().depth(hrry::validate::Depth::Index);
    type Decoded = Vec<Result<Vec<u8>, Option<&'static str>>>;
    let decoded = |file: &HrryFile<'_>| -> Decoded {
        file.descriptors()
            .map(|(_, d)| d.map(to_bytes).map_err(|e| e.rule().map(|r| r.id)))
            .collect()
    };
    let opens = (trusted.open_bytes(bytes), trusted.open_source(source));
    if let Some((memory, remote)) = agree(opens, "trusted open in memory / over a source") {
        assert!(
            decoded(&memory) == decoded(&remote),
            "trusted descriptors over a source differ"
        );
    }
}

/// Two ways of doing one thing agree: both succeed (their values returned), or both
/// fail naming the same rule (`None`). One failing alone panics, saying `what`.
fn agree<A, B>(
    results: (Result<A, hrry::Error>, Result<B, hrry::Error>),
    what: &str,
) -> Option<(A, B)> {
    match results {
        (Ok(a), Ok(b)) => Some((a, b)),
        (Err(a), Err(b)) => {
            assert_eq!(
                a.rule().map(|r| r.id),
                b.rule().map(|r| r.id),
                "{what}, refusals: {a} / {b}"
            );
            None
        }
        (a, b) => panic!(
            "{what}: {:?} / {:?}",
            a.err().map(|e| e.to_string()),
            b.err().map(|e| e.to_string())
        ),
    }
}

/// Limits chosen by `seed`, each either the default or far below it (a couple of
/// tensors, KV entries and dimensions, short names, sections of a few dozen
/// bytes, no nesting), so that ordinary inputs reach every limit check.
pub fn limits_from(seed: u32) -> Limits {
    let d = Limits::default();
    let tight = |bit: u32| seed >> bit & 1 == 1;
    Limits {
        max_tensors: if tight(0) { 2 } else { d.max_tensors },
        max_name_length: if tight(1) { 6 } else { d.max_name_length },
        max_rank: if tight(2) { 2 } else { d.max_rank },
        max_kv_entries: if tight(3) { 2 } else { d.max_kv_entries },
        max_index_bytes: if tight(4) { 96 } else { d.max_index_bytes },
        max_kv_bytes: if tight(5) { 48 } else { d.max_kv_bytes },
        max_descriptor_bytes: if tight(6) { 72 } else { d.max_descriptor_bytes },
        max_tiled_depth: if tight(7) { 1 } else { d.max_tiled_depth },
        max_composite_depth: if tight(8) { 1 } else { d.max_composite_depth },
        max_message_size: if tight(9) { 64 } else { d.max_message_size },
        max_memory: if tight(10) { 4096 } else { d.max_memory },
    }
}

/// [`limits_from`] seeded by the input's own bytes (their CRC-32C), so that each
/// input is judged under one fixed choice of limits and a fuzzer's mutations
/// vary it.
pub fn limits_for(bytes: &[u8]) -> Limits {
    limits_from(crc32c::crc32c(bytes))
}

/// The file on disk reads as the same bytes in memory: validated through
/// positioned reads ([`hrry::source::FileSource`]) it gets the report the bytes
/// get, and [`HrryFile::open`] (a memory map) opens exactly when
/// [`HrryFile::from_bytes`] does, with the same tensors, read the same way.
pub fn assert_file_on_disk_agrees(bytes: &[u8]) {
    let Ok(mut tmp) = tempfile::NamedTempFile::new() else {
        return; // No temporary folder: nothing to compare.
    };
    if std::io::Write::write_all(&mut tmp, bytes).is_err() {
        return;
    }
    for mode in [Rules::Hardened, Rules::Permissive] {
        let options = Options {
            judging: mode.into(),
            ..Options::default()
        };
        let in_memory = hrry::Format::HrryFile.validate_bytes(bytes, &options);
        let source = hrry::source::FileSource::open(tmp.path()).expect("a file just written");
        let on_disk = hrry::Format::HrryFile
            .validate_source(&source, &options)
            .expect("reads inside the file succeed");
        crate::assert_same_report(&in_memory, &on_disk, &format!("on disk, {mode:?}"));
    }
    type Reading = Result<(Vec<u8>, Vec<Vec<u8>>), String>;
    let read = |file: &HrryFile<'_>| -> Vec<Reading> {
        file.entries()
            .map(|e| {
                file.tensor_at(e)
                    .map(|t| {
                        let buffers = t.buffers.iter().map(|b| b.to_vec()).collect();
                        (to_bytes(t.descriptor), buffers)
                    })
                    .map_err(|e| e.to_string())
            })
            .collect()
    };
    let opens = (HrryFile::from_bytes(bytes), HrryFile::open(tmp.path()));
    if let Some((a, b)) = agree(opens, "from_bytes / open(path)") {
        assert!(read(&a) == read(&b), "the mapped file reads differently");
        // `stream pack` of the path copies the data from the file itself.
        let mut w = hrry::stream::StreamWriter::new(Vec::new());
        let from_memory = hrry::stream::pack(&a, &mut w).and_then(|_| w.finish());
        let mut w = hrry::stream::StreamWriter::new(Vec::new());
        let from_path = hrry::stream::pack_path(tmp.path(), &mut w).and_then(|_| w.finish());
        assert_eq!(
            from_memory.ok(),
            from_path.ok(),
            "stream pack of the path packs differently"
        );
    }
    assert_source_open_agrees(bytes, tmp.path());
}

/// The file at `path` (holding `bytes`) opened over a source
/// ([`OpenOptions::open_source`] on a [`hrry::source::FileSource`]: the path a
/// remote file takes, through a mirror filled as ranges are asked for) opens
/// exactly when the bytes in memory do, reads the same tensors, and hands out
/// buffers at the offsets the in-memory file does; its ranges read the file's
/// bytes, and a range past the end is an error.
fn assert_source_open_agrees(bytes: &[u8], path: &std::path::Path) {
    let Ok(source) = hrry::source::FileSource::open(path) else {
        return; // Removed under us: nothing to compare.
    };
    let opens = (
        HrryFile::from_bytes(bytes),
        OpenOptions::new().open_source(source),
    );
    let Some((memory, remote)) = agree(opens, "from_bytes / open_source") else {
        return;
    };
    assert!(
        remote.bytes().is_none(),
        "a source-backed file claims all its bytes"
    );
    assert!(
        remote.source().is_some(),
        "a source-backed file has no source"
    );
    assert_eq!(remote.size(), bytes.len() as u64, "size over a source");
    assert_eq!(remote.len(), memory.len(), "tensor count over a source");
    for (m, r) in memory.entries().zip(remote.entries()) {
        let what = format!("{:?} in memory / over a source", m.name());
        if let Some((a, b)) = agree((memory.tensor_at(m), remote.tensor_at(r)), &what) {
            assert!(
                to_bytes(a.descriptor) == to_bytes(b.descriptor),
                "{:?}: descriptor over a source",
                m.name()
            );
            for (x, y) in a.buffers.iter().zip(&b.buffers) {
                assert!(
                    x == y,
                    "{:?}: a buffer reads differently over a source",
                    m.name()
                );
                assert_eq!(
                    memory.offset_of(x),
                    remote.offset_of(y),
                    "{:?}: buffer offset over a source",
                    m.name()
                );
            }
        }
    }
    assert_trusted_source_open_agrees(bytes, path);
    let head = bytes.len().min(64);
    assert_eq!(remote.read_range(0, head as u64).ok(), Some(&bytes[..head]));
    assert!(remote.read_range(bytes.len() as u64, 1).is_err());
    let fetched = remote
        .fetched_len()
        .expect("a source-backed file counts its fetches");
    assert!(
        fetched <= remote.size(),
        "fetched {fetched} of {} bytes",
        remote.size()
    );
}

/// The curve codes of a Morton or Hilbert tensor invert: every index of its shape
/// (at most `max` of them) decodes back from its code
/// ([`hrry::layout::addressing::morton_decode`],
/// [`hrry::layout::addressing::hilbert_coords`]). Other layouts pass.
pub fn assert_curve_codes_invert(desc: &TensorDescriptor, max: u64) {
    use hrry::layout::addressing::{hilbert_coords, hilbert_index, morton_code, morton_decode};
    use hrry::schema::LayoutFields;
    let count = hrry::model::element_count(&desc.shape).unwrap_or(u64::MAX);
    if count > max {
        return;
    }
    let mut index = vec![0u64; desc.shape.len()];
    for _ in 0..count {
        match &desc.layout {
            LayoutFields::Morton { morton_bits } => {
                if let Some(code) = morton_code(&index, morton_bits) {
                    assert_eq!(
                        morton_decode(code, morton_bits).as_ref(),
                        Some(&index),
                        "morton_decode(morton_code({index:?}))"
                    );
                }
            }
            LayoutFields::Hilbert(h) => {
                if let Some(code) = hilbert_index(&index, h.hilbert_order) {
                    assert_eq!(
                        hilbert_coords(code, index.len(), h.hilbert_order).as_ref(),
                        Some(&index),
                        "hilbert_coords(hilbert_index({index:?}))"
                    );
                }
            }
            _ => return,
        }
        for (i, n) in index.iter_mut().zip(&desc.shape).rev() {
            *i += 1;
            if *i < *n {
                break;
            }
            *i = 0;
        }
    }
}

/// The trusted open (`Depth::Index`: only the index is decoded, for files
/// validated earlier) of any bytes: every refusal, at open or of a tensor, names a
/// rule (a trusted reader still refuses to read out of bounds, and says why).
/// What it reads, unchecked, is exported in logical order or dequantized (so the
/// densifiers, the dense addressing and the dequantizer meet indices, fields and
/// scales no check has passed), and where the default reader also reads the
/// tensor, the two answers agree.
pub fn assert_trusted_refusals_name_rules(bytes: &[u8]) {
    let file = match OpenOptions::new()
        .depth(hrry::validate::Depth::Index)
        .open_bytes(bytes)
    {
        Ok(file) => file,
        Err(e) => {
            assert!(e.rule().is_some(), "trusted open: {e} names no rule");
            return;
        }
    };
    let checked = HrryFile::from_bytes(bytes).ok();
    let limit = 16 * bytes.len() as u64 + (1 << 20);
    for e in file.entries() {
        let t = match file.tensor_at(e) {
            Ok(t) => t,
            Err(err) => {
                assert!(err.rule().is_some(), "trusted read: {err} names no rule");
                continue;
            }
        };
        // Quantized tensors are dequantized (as f32 bits), the rest exported.
        let read = |d: &TensorDescriptor, b: &[&[u8]]| -> Result<Vec<u8>, String> {
            if d.quantization.is_some() {
                let dq = hrry::quant::Dequantizer::new(d, b).map_err(|e| e.to_string())?;
                let v = dq.to_vec().map_err(|e| e.to_string())?;
                Ok(v.iter().flat_map(|x| x.to_bits().to_le_bytes()).collect())
            } else {
                hrry::layout::logical_row_major(d, b, limit).map_err(|e| e.to_string())
            }
        };
        let unchecked = read(t.descriptor, &t.buffers);
        let default = checked.as_ref().and_then(|f| {
            let c = f.tensor_at(f.entry(e.position())?).ok()?;
            read(c.descriptor, &c.buffers).ok()
        });
        if let (Ok(a), Some(b)) = (&unchecked, &default) {
            assert!(a == b, "trusted and default exports differ");
        }
    }
}

//! One pass over an archive that checks every `HOLO-…` rule and, on the way, builds
//! the index the loader serves lookups from.
//!
//! The index stores byte ranges, not slices, so a loader can own its storage (an
//! mmap) and lend slices out of it. The footer hash runs on a second thread while
//! this thread walks the structure (and hashes weight bodies), since on a large
//! archive those are the two costs that matter. The archive is read through a
//! [`ReadAt`] source: in memory it is borrowed, from a file it is read in pieces
//! (the structure's small reads, weight bodies and the footer's hash streamed in
//! fixed chunks), so validating a file holds no more than its metadata.

use std::collections::HashMap;
use std::io;
use std::ops::Range;

use crate::decode::input::{Input, Window, CHUNK};
use crate::schema::holo::{
    holo_header_offsets, section_entry_offsets, ConstantEntryHead, EntryCount, ExtensionHead,
    HoloHeader, LevelList, PortList, SectionEntry, ShapeRegistryList, WeightEntryHead,
    CONSTANT_TAG_INLINE, CONSTANT_TAG_REFERENCE, HOLO_FOOTER_LEN, HOLO_HEADER_LEN,
    HOLO_MAX_READ_VERSION, HOLO_MIN_READ_VERSION, MIN_CONSTANT_ENTRY_LEN, SECTION_ENTRY_LEN,
    WEIGHT_ENTRY_HEAD_LEN,
};
use crate::schema::read_from;
use crate::source::ReadAt;
use crate::validate::rules::holo as r;
use crate::validate::{Judging, Report, Rule};

use super::types::{Fingerprint, PortDescriptor, SectionKind, SectionRef, ShapeDescriptor};

/// Inputs at least this long get their footer hashed on a second thread.
const PARALLEL_FOOTER_MIN: u64 = 1 << 20;

/// Longest constant entry head: tag, slot, dtype and a fingerprint.
const MAX_CONSTANT_HEAD_LEN: u64 = 1 + 4 + 1 + 32;

/// Longest Extension head: `key_length` and a key of 65 535 bytes.
const MAX_EXTENSION_HEAD_LEN: u64 = 2 + u16::MAX as u64;

/// Where a constant's bytes are.
#[derive(Clone, Debug)]
pub(crate) enum ConstantBody {
    /// Inline, at this range of the archive.
    Inline(Range<usize>),
    /// In Weights, entry `weight` (an index into [`ArchiveIndex::weights`]); `None`
    /// until resolved, and when Weights does not hold the fingerprint.
    Reference {
        fingerprint: Fingerprint,
        weight: Option<usize>,
    },
}

/// A decoded constant entry.
#[derive(Clone, Debug)]
pub(crate) struct ConstantEntry {
    pub slot: u32,
    pub dtype: u8,
    pub body: ConstantBody,
}

/// Everything the loader needs, as ranges into the archive bytes.
#[derive(Clone, Debug, Default)]
pub(crate) struct ArchiveIndex {
    pub header: HoloHeader,
    pub fingerprint: Fingerprint,
    pub sections: Vec<SectionRef>,
    pub inputs: Vec<PortDescriptor>,
    pub outputs: Vec<PortDescriptor>,
    pub extensions: Vec<(String, Range<usize>)>,
    pub weights: Vec<(Fingerprint, Range<usize>)>,
    pub weight_index: HashMap<Fingerprint, usize>,
    pub constants: Vec<ConstantEntry>,
    pub schedule: Option<Vec<Vec<u32>>>,
    pub exec_plan: Option<Vec<Vec<u32>>>,
    pub shape_registry: Option<Vec<ShapeDescriptor>>,
}

/// A constant reference waiting for Weights to be decoded.
struct PendingReference {
    /// Index into [`ArchiveIndex::constants`].
    constant: usize,
    slot: u32,
    fingerprint: Fingerprint,
    /// Absolute offset of the fingerprint field.
    at: u64,
}

/// Checks `bytes` against every rule, returning the report and, unless the
/// structure could not be followed, the index.
pub(crate) fn walk(bytes: &[u8], judging: Judging) -> (Report, Option<ArchiveIndex>) {
    match walk_source(&bytes, judging) {
        Ok(done) => done,
        // Reads inside a slice do not fail.
        Err(e) => (crate::decode::input::unread(judging, &e), None),
    }
}

/// [`walk`] over any source; a failed read is returned instead of a report.
pub(crate) fn walk_source(
    source: &dyn ReadAt,
    judging: Judging,
) -> io::Result<(Report, Option<ArchiveIndex>)> {
    let input = Input::new(source);
    let mut report = Report::new(judging);
    let index = walk_into(&input, &mut report);
    if index.is_none() {
        report.fatal = true;
    }
    match input.into_error() {
        Some(e) => Err(e),
        None => Ok((report, index)),
    }
}

/// BLAKE3 of the first `n` bytes of `source`: at once in memory, else streamed in
/// [`CHUNK`]s. Touches only the source, so it can run on another thread.
fn hash_prefix(source: &dyn ReadAt, n: u64) -> io::Result<blake3::Hash> {
    if let Some(s) = source.as_bytes() {
        return Ok(blake3::hash(s.get(..n as usize).unwrap_or_default()));
    }
    let mut hasher = blake3::Hasher::new();
    let mut buf = vec![0u8; CHUNK.min(n) as usize];
    let mut at = 0;
    while at < n {
        let piece = &mut buf[..(n - at).min(CHUNK) as usize];
        source.read_at(at, piece)?;
        hasher.update(piece);
        at += piece.len() as u64;
    }
    Ok(hasher.finalize())
}

fn walk_into(input: &Input<'_>, report: &mut Report) -> Option<ArchiveIndex> {
    let len = input.len();
    let minimum = HOLO_HEADER_LEN + HOLO_FOOTER_LEN;
    if !report.check(len >= minimum, &r::HOLO_SIZE, 0, || {
        format!("archive length: expected at least {minimum} bytes, found {len}")
    }) {
        return None;
    }
    let head = input.bytes_clamped(0, HOLO_HEADER_LEN);
    if !report.check(head.starts_with(b"HOLO"), &r::HOLO_MAGIC, 0, || {
        format!(
            "magic: expected \"HOLO\", found {:?}",
            String::from_utf8_lossy(head.get(..4).unwrap_or_default())
        )
    }) {
        return None;
    }
    let header = match read_from::<HoloHeader>(&head) {
        Ok((h, _)) => h,
        Err(e) => {
            report.violation(&r::HOLO_SIZE, 0, format!("header: {e}"));
            return None;
        }
    };
    let version = header.format_version;
    if !report.check(
        (HOLO_MIN_READ_VERSION..=HOLO_MAX_READ_VERSION).contains(&version),
        &r::HOLO_VERSION,
        holo_header_offsets::FORMAT_VERSION,
        || format!("format_version: expected 2 or 3, found {version}"),
    ) {
        return None;
    }
    // len >= minimum, so this cannot underflow.
    let footer_start = len - HOLO_FOOTER_LEN;
    let stored_fingerprint: [u8; 32] = input
        .bytes(footer_start, HOLO_FOOTER_LEN)?
        .as_ref()
        .try_into()
        .ok()?;

    let source = input.source();
    let (index, computed) = std::thread::scope(|scope| {
        let footer_job = if footer_start >= PARALLEL_FOOTER_MIN {
            std::thread::Builder::new()
                .name("holo-footer".into())
                .spawn_scoped(scope, move || hash_prefix(source, footer_start))
                .ok()
        } else {
            None
        };
        let index = walk_structure(input, header, footer_start, report);
        let computed = footer_job
            .and_then(|job| job.join().ok())
            .unwrap_or_else(|| hash_prefix(source, footer_start));
        (index, computed)
    });
    let computed = match computed {
        Ok(hash) => hash,
        Err(e) => {
            input.fail(e);
            return None;
        }
    };
    report.check(
        computed.as_bytes() == &stored_fingerprint,
        &r::HOLO_FOOTER,
        footer_start,
        || {
            format!(
                "footer: expected BLAKE3 {}, found {}",
                computed.to_hex(),
                super::types::hex(&stored_fingerprint)
            )
        },
    );
    let mut index = index?;
    index.fingerprint = stored_fingerprint;
    Some(index)
}

/// The table and the payloads; `None` when the table cannot be read.
fn walk_structure(
    input: &Input<'_>,
    header: HoloHeader,
    footer_start: u64,
    report: &mut Report,
) -> Option<ArchiveIndex> {
    let count = u64::from(header.section_count);
    let table_end = HOLO_HEADER_LEN + count * SECTION_ENTRY_LEN;
    if !report.check(
        table_end <= footer_start,
        &r::HOLO_TABLE_SIZE,
        holo_header_offsets::SECTION_COUNT,
        || {
            format!(
                "section_count {count}: the table needs bytes {HOLO_HEADER_LEN}..{table_end} \
                 but the footer starts at {footer_start}"
            )
        },
    ) {
        return None;
    }

    let mut index = ArchiveIndex {
        header,
        ..ArchiveIndex::default()
    };
    // (table entry offset, section) for every entry that passed the table checks.
    let mut accepted: Vec<(u64, SectionRef)> =
        Vec::with_capacity(usize::from(header.section_count));
    let mut seen = [false; 17];
    // The table lies before the footer, so it is read whole.
    let table = input.bytes(HOLO_HEADER_LEN, table_end - HOLO_HEADER_LEN)?;
    for i in 0..count {
        let at = HOLO_HEADER_LEN + i * SECTION_ENTRY_LEN;
        let entry = match table
            .get((i * SECTION_ENTRY_LEN) as usize..)
            .map(read_from::<SectionEntry>)
        {
            Some(Ok((e, _))) => e,
            _ => {
                report.violation(&r::HOLO_TABLE_SIZE, at, "section entry is truncated");
                return None;
            }
        };
        report.check(
            entry.padding == [0; 7],
            &r::HOLO_TABLE_PADDING,
            at + section_entry_offsets::PADDING,
            || {
                format!(
                    "section {i} padding: expected zeros, found {:?}",
                    entry.padding
                )
            },
        );
        let Some(kind) = SectionKind::from_number(entry.kind) else {
            report.violation(
                &r::HOLO_KIND,
                at + section_entry_offsets::KIND,
                format!("section {i} kind: expected 1-16, found {}", entry.kind),
            );
            continue;
        };
        if !report.check(
            kind.min_version() <= header.format_version,
            &r::HOLO_KIND_VERSION,
            at + section_entry_offsets::KIND,
            || {
                format!(
                    "section {i} kind {} ({}) needs format_version 3, found {}",
                    entry.kind,
                    kind.name(),
                    header.format_version
                )
            },
        ) {
            continue;
        }
        let end = entry.offset.checked_add(entry.length);
        if !report.check(
            entry.offset >= table_end && end.is_some_and(|e| e <= footer_start),
            &r::HOLO_SECTION_BOUNDS,
            at + section_entry_offsets::OFFSET,
            || {
                format!(
                    "section {i} ({}) offset {} length {}: expected inside {table_end}..{footer_start}",
                    kind.name(),
                    entry.offset,
                    entry.length
                )
            },
        ) {
            continue;
        }
        let slot = &mut seen[usize::from(entry.kind)];
        if !report.check(
            !*slot || kind.is_repeatable(),
            &r::HOLO_SECTION_REPEAT,
            at + section_entry_offsets::KIND,
            || format!("section {i}: a second {} section", kind.name()),
        ) {
            continue;
        }
        *slot = true;
        accepted.push((
            at,
            SectionRef {
                kind,
                offset: entry.offset,
                length: entry.length,
            },
        ));
    }
    check_overlap(&accepted, report);

    let mut pending = Vec::new();
    for (_, section) in &accepted {
        index.sections.push(*section);
        decode_section(input, section, &mut index, &mut pending, report);
    }
    resolve_references(pending, &mut index, report);
    Some(index)
}

/// Reports every non-empty section that starts before an earlier one ends.
fn check_overlap(accepted: &[(u64, SectionRef)], report: &mut Report) {
    let mut by_offset: Vec<&(u64, SectionRef)> =
        accepted.iter().filter(|(_, s)| s.length > 0).collect();
    by_offset.sort_by_key(|(at, s)| (s.offset, *at));
    let mut furthest: Option<(u64, SectionKind)> = None;
    for (at, s) in by_offset {
        if let Some((end, kind)) = furthest {
            report.check(
                s.offset >= end,
                &r::HOLO_SECTION_OVERLAP,
                at + section_entry_offsets::OFFSET,
                || {
                    format!(
                        "{} section at {}: expected to start at or after {end}, where the {} section ends",
                        s.kind.name(),
                        s.offset,
                        kind.name()
                    )
                },
            );
        }
        // Bounds were checked, so offset + length does not overflow.
        let end = s.offset + s.length;
        if furthest.is_none_or(|(e, _)| end > e) {
            furthest = Some((end, s.kind));
        }
    }
}

/// The position a binrw error names, if any.
fn error_position(e: &binrw::Error) -> Option<u64> {
    match e {
        binrw::Error::BadMagic { pos, .. }
        | binrw::Error::AssertFail { pos, .. }
        | binrw::Error::Custom { pos, .. }
        | binrw::Error::NoVariantMatch { pos }
        | binrw::Error::EnumErrors { pos, .. } => Some(*pos),
        binrw::Error::Backtrace(b) => error_position(&b.error),
        _ => None,
    }
}

/// A short reason for a decode error (binrw's own text for counts, "truncated"
/// when the input simply ended).
fn error_reason(e: &binrw::Error) -> String {
    match e {
        binrw::Error::AssertFail { message, .. } => message.clone(),
        binrw::Error::Backtrace(b) => error_reason(&b.error),
        binrw::Error::Io(_) => "the section ends inside a field".to_string(),
        other => other.to_string(),
    }
}

fn decode_section(
    input: &Input<'_>,
    section: &SectionRef,
    index: &mut ArchiveIndex,
    pending: &mut Vec<PendingReference>,
    report: &mut Report,
) {
    // Bounds were checked against the footer start, so the range is in the input.
    let base = section.offset;
    let start = base as usize;
    let range = start..start + section.length as usize;
    // The structured sections are metadata, read whole; Weights and Constants hold
    // bodies and are read entry by entry; the others are not interpreted.
    let whole = || input.bytes(base, section.length);
    match section.kind {
        SectionKind::Inputs | SectionKind::Outputs => {
            let Some(payload) = whole() else { return };
            let ports = decode_ports(&payload, base, report);
            if section.kind == SectionKind::Inputs {
                index.inputs = ports;
            } else {
                index.outputs = ports;
            }
        }
        SectionKind::Schedule => {
            let Some(payload) = whole() else { return };
            index.schedule = decode_levels(&payload, base, &r::HOLO_SCHEDULE_DECODE, report);
        }
        SectionKind::ExecPlan => {
            let Some(payload) = whole() else { return };
            index.exec_plan = decode_levels(&payload, base, &r::HOLO_EXEC_PLAN_DECODE, report);
        }
        SectionKind::ShapeRegistry => {
            let Some(payload) = whole() else { return };
            index.shape_registry = decode_whole::<ShapeRegistryList>(
                &payload,
                base,
                &r::HOLO_SHAPES_DECODE,
                "ShapeRegistry",
                report,
            )
            .map(|l| l.shapes);
        }
        SectionKind::Extension => {
            let head = input.bytes_clamped(base, section.length.min(MAX_EXTENSION_HEAD_LEN));
            decode_extension(&head, section.length, range, base, index, report);
        }
        SectionKind::Weights => {
            let mut payload = input.window(base, section.length);
            decode_weights(input, &mut payload, base, index, report);
        }
        SectionKind::Constants => {
            let mut payload = input.window(base, section.length);
            decode_constants(&mut payload, base, index, pending, report);
        }
        SectionKind::KernelCalls
        | SectionKind::DTypeRegistry
        | SectionKind::Certificates
        | SectionKind::Trace
        | SectionKind::Metadata
        | SectionKind::WarmStart
        | SectionKind::AppManifest
        | SectionKind::ContentBlob => {}
    }
}

/// Decodes a whole payload as `T`, reporting decode failures under `rule` and
/// unconsumed bytes under HOLO-SEC-001.
fn decode_whole<T>(
    payload: &[u8],
    base: u64,
    rule: &'static Rule,
    what: &str,
    report: &mut Report,
) -> Option<T>
where
    T: for<'a> binrw::BinRead<Args<'a> = ()>,
{
    match read_from::<T>(payload) {
        Ok((value, used)) => {
            check_consumed(payload.len() as u64, used, base, what, report);
            Some(value)
        }
        Err(e) => {
            let at = base + error_position(&e).unwrap_or(0);
            report.violation(rule, at, format!("{what}: {}", error_reason(&e)));
            None
        }
    }
}

fn check_consumed(len: u64, used: u64, base: u64, what: &str, report: &mut Report) {
    report.check(used == len, &r::HOLO_SECTION_TRAILING, base + used, || {
        format!(
            "{what}: payload is {len} bytes but its entries end after {used} ({} trailing)",
            len - used
        )
    });
}

fn decode_levels(
    payload: &[u8],
    base: u64,
    rule: &'static Rule,
    report: &mut Report,
) -> Option<Vec<Vec<u32>>> {
    let what = if std::ptr::eq(rule, &r::HOLO_SCHEDULE_DECODE) {
        "Schedule"
    } else {
        "ExecPlan"
    };
    decode_whole::<LevelList>(payload, base, rule, what, report)
        .map(|l| l.levels.into_iter().map(|level| level.indices).collect())
}

fn decode_ports(payload: &[u8], base: u64, report: &mut Report) -> Vec<PortDescriptor> {
    let Some(list) = decode_whole::<PortList>(payload, base, &r::HOLO_PORT_DECODE, "ports", report)
    else {
        return Vec::new();
    };
    let mut ports = Vec::with_capacity(list.ports.len());
    let mut at = base + 4;
    for (i, p) in list.ports.into_iter().enumerate() {
        let name_len = p.name.len() as u64;
        let element_count_at = at + 2 + name_len + 4;
        let name = match String::from_utf8(p.name) {
            Ok(name) => name,
            Err(e) => {
                report.violation(
                    &r::HOLO_PORT_NAME,
                    at + 2,
                    format!("port {i} name: invalid UTF-8 ({})", e.utf8_error()),
                );
                String::from_utf8_lossy(e.as_bytes()).into_owned()
            }
        };
        if !p.shape.is_empty() {
            let product = p.shape.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d));
            report.check(
                product == Some(p.element_count),
                &r::HOLO_PORT_COUNT,
                element_count_at,
                || {
                    format!(
                        "port {i} ({name:?}) element_count: expected the product of shape {:?} ({}), found {}",
                        p.shape,
                        product.map_or_else(|| "more than 2^64".to_string(), |v| v.to_string()),
                        p.element_count
                    )
                },
            );
        }
        at = element_count_at + 8 + 1 + 1 + 8 * p.shape.len() as u64;
        ports.push(PortDescriptor {
            name,
            slot: p.slot,
            element_count: p.element_count,
            dtype: p.dtype,
            shape: p.shape,
        });
    }
    ports
}

/// `head`: the payload's first bytes, enough for the longest head; `len`: the
/// payload's length.
fn decode_extension(
    head: &[u8],
    len: u64,
    range: Range<usize>,
    base: u64,
    index: &mut ArchiveIndex,
    report: &mut Report,
) {
    let (head, used) = match read_from::<ExtensionHead>(head) {
        Ok(v) => v,
        Err(_) => {
            report.violation(
                &r::HOLO_EXT_DECODE,
                base,
                format!("Extension: a {len}-byte payload cannot hold key_length and its key"),
            );
            return;
        }
    };
    let key = match String::from_utf8(head.key) {
        Ok(k) => k,
        Err(e) => {
            report.violation(
                &r::HOLO_EXT_KEY_UTF8,
                base + 2,
                format!("Extension key: invalid UTF-8 ({})", e.utf8_error()),
            );
            return;
        }
    };
    if !report.check(
        !index.extensions.iter().any(|(k, _)| *k == key),
        &r::HOLO_EXT_KEY_UNIQUE,
        base + 2,
        || format!("Extension key {key:?}: already used by an earlier section"),
    ) {
        return;
    }
    index
        .extensions
        .push((key, range.start + used as usize..range.end));
}

/// Reads the leading `u32` count and checks that `count × min_entry` bytes remain.
fn entry_count(
    payload: &mut Window<'_>,
    base: u64,
    min_entry: u64,
    rule: &'static Rule,
    what: &str,
    report: &mut Report,
) -> Option<u32> {
    let len = payload.len();
    let Ok((EntryCount { count }, _)) = read_from::<EntryCount>(payload.get(0, 4)) else {
        report.violation(
            rule,
            base,
            format!("{what}: a {len}-byte payload cannot hold the 4-byte count"),
        );
        return None;
    };
    let left = len - 4;
    let need = u64::from(count) * min_entry;
    if !report.check(need <= left, rule, base, || {
        format!("{what}: count {count} needs at least {need} bytes but only {left} remain")
    }) {
        return None;
    }
    Some(count)
}

/// The Weights section whose payload (at absolute offset `base`) is `payload`:
/// entry heads are read through the window, bodies hashed from `input`.
fn decode_weights(
    input: &Input<'_>,
    payload: &mut Window<'_>,
    base: u64,
    index: &mut ArchiveIndex,
    report: &mut Report,
) {
    let what = "Weights";
    let Some(count) = entry_count(
        payload,
        base,
        WEIGHT_ENTRY_HEAD_LEN,
        &r::HOLO_WEIGHT_DECODE,
        what,
        report,
    ) else {
        return;
    };
    index.weights.reserve(count as usize);
    let len = payload.len();
    let mut cur = 4u64;
    for i in 0..count {
        let head_at = base + cur;
        let Ok((head, used)) =
            read_from::<WeightEntryHead>(payload.get(cur, WEIGHT_ENTRY_HEAD_LEN as usize))
        else {
            report.violation(
                &r::HOLO_WEIGHT_DECODE,
                head_at,
                format!("weight {i}: entry head runs past the end of the section"),
            );
            return;
        };
        cur += used;
        let left = len - cur;
        let Some(body_len) = Some(head.body_length).filter(|&l| l <= left) else {
            report.violation(
                &r::HOLO_WEIGHT_DECODE,
                head_at + 32,
                format!(
                    "weight {i} body_length: {} exceeds the {left} bytes left in the section",
                    head.body_length
                ),
            );
            return;
        };
        let actual = input.blake3(base + cur, body_len);
        report.check(
            actual.as_bytes() == &head.fingerprint,
            &r::HOLO_WEIGHT_HASH,
            head_at,
            || {
                format!(
                    "weight {i} fingerprint: expected BLAKE3 of the body {}, found {}",
                    actual.to_hex(),
                    super::types::hex(&head.fingerprint)
                )
            },
        );
        let duplicate = index.weight_index.contains_key(&head.fingerprint);
        report.check(!duplicate, &r::HOLO_WEIGHT_UNIQUE, head_at, || {
            format!(
                "weight {i} fingerprint {}: already present earlier in the section",
                super::types::hex(&head.fingerprint)
            )
        });
        if !duplicate {
            index
                .weight_index
                .insert(head.fingerprint, index.weights.len());
        }
        let body = (base + cur) as usize;
        index
            .weights
            .push((head.fingerprint, body..body + body_len as usize));
        cur += body_len;
    }
    check_consumed(len, cur, base, what, report);
}

fn decode_constants(
    payload: &mut Window<'_>,
    base: u64,
    index: &mut ArchiveIndex,
    pending: &mut Vec<PendingReference>,
    report: &mut Report,
) {
    let what = "Constants";
    let Some(count) = entry_count(
        payload,
        base,
        MIN_CONSTANT_ENTRY_LEN,
        &r::HOLO_CONST_DECODE,
        what,
        report,
    ) else {
        return;
    };
    let len = payload.len();
    let mut cur = 4u64;
    for i in 0..count {
        let at = base + cur;
        let rest = payload.get(cur, MAX_CONSTANT_HEAD_LEN as usize);
        let tag = rest.first().copied();
        if let Some(tag) = tag.filter(|t| *t != CONSTANT_TAG_INLINE && *t != CONSTANT_TAG_REFERENCE)
        {
            report.violation(
                &r::HOLO_CONST_TAG,
                at,
                format!("constant {i} tag: expected 0 (inline) or 1 (reference), found {tag}"),
            );
            return;
        }
        let Ok((head, used)) = read_from::<ConstantEntryHead>(rest) else {
            report.violation(
                &r::HOLO_CONST_DECODE,
                at,
                format!("constant {i}: entry head runs past the end of the section"),
            );
            return;
        };
        cur += used;
        match head {
            ConstantEntryHead::Inline {
                slot,
                dtype,
                body_length,
            } => {
                let left = len - cur;
                let Some(body_len) = Some(u64::from(body_length)).filter(|&l| l <= left) else {
                    report.violation(
                        &r::HOLO_CONST_DECODE,
                        at + 6,
                        format!(
                            "constant {i} body_length: {body_length} exceeds the {left} bytes left in the section"
                        ),
                    );
                    return;
                };
                let body = (base + cur) as usize;
                index.constants.push(ConstantEntry {
                    slot,
                    dtype,
                    body: ConstantBody::Inline(body..body + body_len as usize),
                });
                cur += body_len;
            }
            ConstantEntryHead::Reference {
                slot,
                dtype,
                fingerprint,
            } => {
                pending.push(PendingReference {
                    constant: index.constants.len(),
                    slot,
                    fingerprint,
                    at: at + 6,
                });
                index.constants.push(ConstantEntry {
                    slot,
                    dtype,
                    body: ConstantBody::Reference {
                        fingerprint,
                        weight: None,
                    },
                });
            }
        }
    }
    check_consumed(len, cur, base, what, report);
}

/// Resolves constant references against the decoded Weights entries (Weights may
/// come after Constants in the table).
fn resolve_references(
    pending: Vec<PendingReference>,
    index: &mut ArchiveIndex,
    report: &mut Report,
) {
    for p in pending {
        let found = index.weight_index.get(&p.fingerprint).copied();
        if let Some(ConstantEntry {
            body: ConstantBody::Reference { weight, .. },
            ..
        }) = index.constants.get_mut(p.constant)
        {
            *weight = found;
        }
        report.check(found.is_some(), &r::HOLO_CONST_REFERENCE, p.at, || {
            format!(
                "constant for slot {} references fingerprint {}, which Weights does not hold",
                p.slot,
                super::types::hex(&p.fingerprint)
            )
        });
    }
}

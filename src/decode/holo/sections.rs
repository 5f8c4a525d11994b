//! The payloads of the section kinds an archive's loader interprets: ports,
//! Schedule and ExecPlan levels, the shape registry, Extension keys, Weights and
//! Constants entries. The other kinds are carried as opaque bytes.

use std::mem::size_of;
use std::ops::Range;

use crate::limits::{Limit, Limits};
use crate::schema::holo::{
    ConstantEntryHead, EntryCount, ExtensionHead, IndexLevel, LevelList, PortEntry, PortList,
    ShapeRegistryList, WeightEntryHead, CONSTANT_TAG_INLINE, CONSTANT_TAG_REFERENCE,
    MIN_CONSTANT_ENTRY_LEN, MIN_PORT_LEN, MIN_SHAPE_ENTRY_LEN, WEIGHT_ENTRY_HEAD_LEN,
};
use crate::schema::holo::{SectionKind, ShapeEntry as ShapeDescriptor};
use crate::schema::read_from;
use crate::validate::rules::holo as r;
use crate::validate::{Report, Rule};

use super::super::input::{Input, Window};
use super::archive::{
    grow, hex, ConstantBody, ConstantEntry, DecodedArchive, Fingerprint, PortDescriptor, SectionRef,
};

/// Longest constant entry head: tag, slot, dtype and a fingerprint.
const MAX_CONSTANT_HEAD_LEN: u64 = 1 + 4 + 1 + 32;

/// Longest Extension head: `key_length` and a key of 65 535 bytes.
const MAX_EXTENSION_HEAD_LEN: u64 = 2 + u16::MAX as u64;

/// What one Weights fingerprint costs in the map from fingerprints to entries: its
/// slot and control byte, at the map's 7/8 load.
const WEIGHT_INDEX_SLOT: u64 = ((size_of::<(Fingerprint, usize)>() + 1) * 8 / 7) as u64;

/// A constant reference waiting for Weights to be decoded.
struct PendingReference {
    /// Index into [`DecodedArchive::constants`].
    constant: usize,
    slot: u32,
    fingerprint: Fingerprint,
    /// Absolute offset of the fingerprint field.
    at: u64,
}

/// The payload decoders of one pass: its input and limits, and the constant
/// references waiting for Weights (which may come later in the table).
pub(super) struct Payloads<'i, 'a> {
    input: &'i Input<'a>,
    limits: &'i Limits,
    pending: Vec<PendingReference>,
}

impl<'i, 'a> Payloads<'i, 'a> {
    /// The decoders of a pass over `input` within `limits`.
    pub fn new(input: &'i Input<'a>, limits: &'i Limits) -> Self {
        Payloads {
            input,
            limits,
            pending: Vec::new(),
        }
    }

    /// The payload of an entry list `section` (Weights, Constants) and its leading
    /// count, once the count is checked against the bytes left for entries of at
    /// least `min_entry` bytes; `None`, with `rule` reported, when it cannot be.
    fn entries(
        &self,
        section: &SectionRef,
        min_entry: u64,
        rule: &'static Rule,
        what: &str,
        report: &mut Report,
    ) -> Option<(Window<'i>, u32)> {
        let input: &'i Input<'a> = self.input;
        let mut payload = input.window(section.offset, section.length);
        let count = entry_count(&mut payload, section.offset, min_entry, rule, what, report)?;
        Some((payload, count))
    }

    /// Decodes the payload of `section` (whose bounds the table checked) into
    /// `decoded`.
    pub fn decode(
        &mut self,
        section: &SectionRef,
        decoded: &mut DecodedArchive,
        report: &mut Report,
    ) {
        let base = section.offset;
        let start = base as usize;
        let range = start..start + section.length as usize;
        match section.kind {
            SectionKind::Inputs | SectionKind::Outputs => {
                let Some(ports) = self.ports(section, report) else {
                    return;
                };
                if section.kind == SectionKind::Inputs {
                    decoded.inputs = ports;
                } else {
                    decoded.outputs = ports;
                }
            }
            SectionKind::Schedule => {
                decoded.schedule =
                    self.levels(section, &r::HOLO_SCHEDULE_DECODE, "Schedule", report);
            }
            SectionKind::ExecPlan => {
                decoded.exec_plan =
                    self.levels(section, &r::HOLO_EXEC_PLAN_DECODE, "ExecPlan", report);
            }
            SectionKind::ShapeRegistry => {
                decoded.shape_registry = self.shapes(section, report);
            }
            SectionKind::Extension => self.extension(section, range, decoded, report),
            SectionKind::Weights => self.weights(section, decoded, report),
            SectionKind::Constants => self.constants(section, decoded, report),
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

    /// The payload of a structured section (metadata, read whole) with what
    /// decoding it into lists of `item` bytes each may hold charged first: its
    /// bytes, a list of its leading `u32` count (at most what fits in the payload
    /// at `min_item` bytes an item) and their variable parts, which the payload's
    /// bytes bound. `None` when the budget refuses (the pass stops) or a read
    /// fails.
    fn structured(
        &self,
        section: &SectionRef,
        min_item: u64,
        item: usize,
        what: &str,
        report: &mut Report,
    ) -> Option<std::borrow::Cow<'a, [u8]>> {
        let (base, len) = (section.offset, section.length);
        let held = || format!("the {what} section ({len} bytes)");
        if !self.input.charge_read_to(len, held, base, report) {
            return None;
        }
        let payload = self.input.bytes(base, len)?;
        let count = payload
            .get(..4)
            .map_or(0, |b| u32::from_le_bytes(b.try_into().unwrap_or_default()));
        let fits = len.saturating_sub(4) / min_item;
        let items = u64::from(count).min(fits);
        let lists = items.saturating_mul(item as u64).saturating_add(len);
        let decoded = || format!("the {items} entries of the {what} section");
        self.input
            .charge(lists, decoded, base, report)
            .then_some(payload)
    }

    fn ports(&self, section: &SectionRef, report: &mut Report) -> Option<Vec<PortDescriptor>> {
        let base = section.offset;
        // Each port is decoded, then moved into the loader's type.
        let item = size_of::<PortEntry>() + size_of::<PortDescriptor>();
        let payload = self.structured(section, MIN_PORT_LEN, item, "ports", report)?;
        let list = decode_whole::<PortList>(&payload, base, &r::HOLO_PORT_DECODE, "ports", report)?;
        let mut ports = Vec::with_capacity(list.ports.len());
        let mut at = base + 4;
        for (i, p) in list.ports.into_iter().enumerate() {
            let name_len = p.name.len() as u64;
            if name_len > u64::from(self.limits.max_name_length) {
                report.limit(
                    Limit::NameLength,
                    at,
                    format!(
                        "port {i} name length {name_len} exceeds max_name_length {}",
                        self.limits.max_name_length
                    ),
                );
            }
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
        Some(ports)
    }

    fn levels(
        &self,
        section: &SectionRef,
        rule: &'static Rule,
        what: &str,
        report: &mut Report,
    ) -> Option<Vec<Vec<u32>>> {
        let payload = self.structured(section, 4, size_of::<IndexLevel>(), what, report)?;
        decode_whole::<LevelList>(&payload, section.offset, rule, what, report)
            .map(|l| l.levels.into_iter().map(|level| level.indices).collect())
    }

    fn shapes(&self, section: &SectionRef, report: &mut Report) -> Option<Vec<ShapeDescriptor>> {
        let what = "ShapeRegistry";
        let item = size_of::<ShapeDescriptor>();
        let payload = self.structured(section, MIN_SHAPE_ENTRY_LEN, item, what, report)?;
        let rule = &r::HOLO_SHAPES_DECODE;
        decode_whole::<ShapeRegistryList>(&payload, section.offset, rule, what, report)
            .map(|l| l.shapes)
    }

    /// An Extension: its key (judged, kept) and the range of its value.
    fn extension(
        &self,
        section: &SectionRef,
        range: Range<usize>,
        decoded: &mut DecodedArchive,
        report: &mut Report,
    ) {
        let (base, len) = (section.offset, section.length);
        let head = self
            .input
            .bytes_clamped(base, len.min(MAX_EXTENSION_HEAD_LEN));
        let (head, used) = match read_from::<ExtensionHead>(&head) {
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
        let key_len = head.key.len();
        if key_len > usize::from(self.limits.max_name_length) {
            report.limit(
                Limit::NameLength,
                base,
                format!(
                    "Extension key length {key_len} exceeds max_name_length {}",
                    self.limits.max_name_length
                ),
            );
        }
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
            !decoded.extensions.iter().any(|(k, _)| *k == key),
            &r::HOLO_EXT_KEY_UNIQUE,
            base + 2,
            || format!("Extension key {key:?}: already used by an earlier section"),
        ) {
            return;
        }
        let what = || format!("the Extension key at {}", base + 2);
        if !grow(self.input, &mut decoded.extensions, 1, what, base, report)
            || !self.input.charge(key_len as u64, what, base, report)
        {
            return;
        }
        decoded
            .extensions
            .push((key, range.start + used as usize..range.end));
    }

    /// The Weights section: entry heads are read through a window, bodies hashed
    /// from the input.
    fn weights(&self, section: &SectionRef, decoded: &mut DecodedArchive, report: &mut Report) {
        let what = "Weights";
        let base = section.offset;
        let rule = &r::HOLO_WEIGHT_DECODE;
        let Some((mut payload, count)) =
            self.entries(section, WEIGHT_ENTRY_HEAD_LEN, rule, what, report)
        else {
            return;
        };
        let len = payload.len();
        let mut cur = 4u64;
        for i in 0..count {
            let head_at = base + cur;
            let Ok((head, used)) =
                read_from::<WeightEntryHead>(payload.get(cur, WEIGHT_ENTRY_HEAD_LEN as usize))
            else {
                report.violation(
                    rule,
                    head_at,
                    format!("weight {i}: entry head runs past the end of the section"),
                );
                return;
            };
            cur += used;
            let left = len - cur;
            let Some(body_len) = Some(head.body_length).filter(|&l| l <= left) else {
                report.violation(
                    rule,
                    head_at + 32,
                    format!(
                        "weight {i} body_length: {} exceeds the {left} bytes left in the section",
                        head.body_length
                    ),
                );
                return;
            };
            let actual = self.input.blake3(base + cur, body_len);
            report.check(
                actual.as_bytes() == &head.fingerprint,
                &r::HOLO_WEIGHT_HASH,
                head_at,
                || {
                    format!(
                        "weight {i} fingerprint: expected BLAKE3 of the body {}, found {}",
                        actual.to_hex(),
                        hex(&head.fingerprint)
                    )
                },
            );
            let duplicate = decoded.weight_index.contains_key(&head.fingerprint);
            report.check(!duplicate, &r::HOLO_WEIGHT_UNIQUE, head_at, || {
                format!(
                    "weight {i} fingerprint {}: already present earlier in the section",
                    hex(&head.fingerprint)
                )
            });
            let entry = || format!("Weights entry {i}");
            if !grow(self.input, &mut decoded.weights, 1, entry, head_at, report)
                || !self.input.charge(WEIGHT_INDEX_SLOT, entry, head_at, report)
            {
                return;
            }
            if !duplicate {
                decoded
                    .weight_index
                    .insert(head.fingerprint, decoded.weights.len());
            }
            let body = (base + cur) as usize;
            decoded
                .weights
                .push((head.fingerprint, body..body + body_len as usize));
            cur += body_len;
        }
        check_consumed(len, cur, base, what, report);
    }

    fn constants(
        &mut self,
        section: &SectionRef,
        decoded: &mut DecodedArchive,
        report: &mut Report,
    ) {
        let what = "Constants";
        let base = section.offset;
        let rule = &r::HOLO_CONST_DECODE;
        let Some((mut payload, count)) =
            self.entries(section, MIN_CONSTANT_ENTRY_LEN, rule, what, report)
        else {
            return;
        };
        let len = payload.len();
        let mut cur = 4u64;
        for i in 0..count {
            let at = base + cur;
            let rest = payload.get(cur, MAX_CONSTANT_HEAD_LEN as usize);
            let tag = rest.first().copied();
            if let Some(tag) =
                tag.filter(|t| *t != CONSTANT_TAG_INLINE && *t != CONSTANT_TAG_REFERENCE)
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
                    rule,
                    at,
                    format!("constant {i}: entry head runs past the end of the section"),
                );
                return;
            };
            cur += used;
            let entry = || format!("Constants entry {i}");
            if !grow(self.input, &mut decoded.constants, 1, entry, at, report) {
                return;
            }
            match head {
                ConstantEntryHead::Inline {
                    slot,
                    dtype,
                    body_length,
                } => {
                    let left = len - cur;
                    let Some(body_len) = Some(u64::from(body_length)).filter(|&l| l <= left) else {
                        report.violation(
                            rule,
                            at + 6,
                            format!(
                                "constant {i} body_length: {body_length} exceeds the {left} bytes left in the section"
                            ),
                        );
                        return;
                    };
                    let body = (base + cur) as usize;
                    decoded.constants.push(ConstantEntry {
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
                    if !grow(self.input, &mut self.pending, 1, entry, at, report) {
                        return;
                    }
                    self.pending.push(PendingReference {
                        constant: decoded.constants.len(),
                        slot,
                        fingerprint,
                        at: at + 6,
                    });
                    decoded.constants.push(ConstantEntry {
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

    /// Resolves the constant references against the decoded Weights entries
    /// (Weights may come after Constants in the table).
    pub fn resolve_references(self, decoded: &mut DecodedArchive, report: &mut Report) {
        for p in self.pending {
            let found = decoded.weight_index.get(&p.fingerprint).copied();
            if let Some(ConstantEntry {
                body: ConstantBody::Reference { weight, .. },
                ..
            }) = decoded.constants.get_mut(p.constant)
            {
                *weight = found;
            }
            report.check(found.is_some(), &r::HOLO_CONST_REFERENCE, p.at, || {
                format!(
                    "constant for slot {} references fingerprint {}, which Weights does not hold",
                    p.slot,
                    hex(&p.fingerprint)
                )
            });
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
    T: for<'x> binrw::BinRead<Args<'x> = ()>,
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

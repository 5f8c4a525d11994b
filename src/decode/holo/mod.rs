//! `.holo` archives: the header, the section table ([`table`]) and the payload of
//! each decoded section kind ([`sections`]), judged by the `HOLO-…` rules, in one
//! pass that also keeps what the loader serves lookups from.
//!
//! [`decode_archive`] is the one decoder of archives: [`crate::holo::HoloLoader`],
//! the validator ([`crate::Format::validate_source`]) and the archive map behind
//! `hrry report` and `hrry diff` all call it. What it keeps are byte ranges, not
//! slices, so that a loader can own its storage (a mapping) and lend slices out
//! of it. The footer hash runs on a second thread while this thread walks the
//! structure (and hashes weight bodies), since on a large archive those are the
//! two costs that matter. The archive is read through a [`ReadAt`] source: in
//! memory it is borrowed, from a file it is read in pieces (the structure's small
//! reads, weight bodies and the footer's hash streamed in fixed chunks).
//!
//! Every list the archive makes the pass hold (the section table, ports, levels,
//! shapes, Extension keys, Weights and Constants entries) is charged to the
//! operation's memory budget ([`super::budget`]) before it is allocated, and the
//! structured sections read whole are charged with their bytes; past the budget
//! the pass stops with `HF-LIM-001` naming `max_memory`. Port names and
//! Extension keys longer than `max_name_length` are `HF-LIM-001` too.

mod archive;
mod sections;
mod table;

pub use archive::{hex, Fingerprint, PortDescriptor, SectionRef};
pub(crate) use archive::{ConstantBody, DecodedArchive};

use std::io;

use crate::limits::Limits;
use crate::schema::holo::{
    holo_header_offsets, HoloHeader, HOLO_FOOTER_LEN, HOLO_HEADER_LEN, HOLO_MAX_READ_VERSION,
    HOLO_MIN_READ_VERSION,
};
use crate::schema::read_from;
use crate::source::ReadAt;
use crate::validate::rules::holo as r;
use crate::validate::Report;

use super::input::{Input, CHUNK};

/// Inputs at least this long get their footer hashed on a second thread.
const PARALLEL_FOOTER_MIN: u64 = 1 << 20;

/// Decodes the archive `source` holds within `limits`, recording every broken
/// `HOLO-…` rule (and `HF-LIM-001`) into `report`, whose policy says which are
/// recorded. Returns what decoded, `None` when the header or the section table
/// cannot be followed (`report.fatal` is then set); a failed read is returned
/// instead.
pub(crate) fn decode_archive(
    source: &dyn ReadAt,
    limits: &Limits,
    report: &mut Report,
) -> io::Result<Option<DecodedArchive>> {
    let input = Input::with_budget(source, limits.max_memory);
    // The footer covers every byte before it and is always verified, so the pass
    // reads the whole archive: the budget is a multiple of its length.
    input.budget().read(input.len());
    let decoded = decode_into(&input, limits, report);
    if decoded.is_none() {
        report.fatal = true;
    }
    match input.into_error() {
        Some(e) => Err(e),
        None => Ok(decoded),
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

/// The header, then the table and payloads beside the footer's hash.
fn decode_into(input: &Input<'_>, limits: &Limits, report: &mut Report) -> Option<DecodedArchive> {
    let header = decode_header(input, report)?;
    // decode_header checked that the input holds a header and a footer.
    let footer_start = input.len() - HOLO_FOOTER_LEN;
    let stored_fingerprint: Fingerprint = input
        .bytes(footer_start, HOLO_FOOTER_LEN)?
        .as_ref()
        .try_into()
        .ok()?;

    let source = input.source();
    let (decoded, computed) = std::thread::scope(|scope| {
        let footer_job = if footer_start >= PARALLEL_FOOTER_MIN {
            std::thread::Builder::new()
                .name("holo-footer".into())
                .spawn_scoped(scope, move || hash_prefix(source, footer_start))
                .ok()
        } else {
            None
        };
        let decoded = decode_structure(input, header, footer_start, limits, report);
        let computed = footer_job
            .and_then(|job| job.join().ok())
            .unwrap_or_else(|| hash_prefix(source, footer_start));
        (decoded, computed)
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
                hex(&stored_fingerprint)
            )
        },
    );
    let mut decoded = decoded?;
    decoded.fingerprint = stored_fingerprint;
    Some(decoded)
}

/// The 10-byte header: length, magic and `format_version`; `None` when the
/// archive cannot be followed past it.
fn decode_header(input: &Input<'_>, report: &mut Report) -> Option<HoloHeader> {
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
    report
        .check(
            (HOLO_MIN_READ_VERSION..=HOLO_MAX_READ_VERSION).contains(&version),
            &r::HOLO_VERSION,
            holo_header_offsets::FORMAT_VERSION,
            || format!("format_version: expected 2 or 3, found {version}"),
        )
        .then_some(header)
}

/// The table and the payloads; `None` when the table cannot be read.
fn decode_structure(
    input: &Input<'_>,
    header: HoloHeader,
    footer_start: u64,
    limits: &Limits,
    report: &mut Report,
) -> Option<DecodedArchive> {
    let mut decoded = DecodedArchive {
        header,
        sections: table::decode_table(input, header, footer_start, report)?,
        ..DecodedArchive::default()
    };
    let mut payloads = sections::Payloads::new(input, limits);
    for i in 0..decoded.sections.len() {
        // A refusal by the budget ends the pass (report.fatal is set then).
        if report.fatal {
            break;
        }
        let section = decoded.sections[i];
        payloads.decode(&section, &mut decoded, report);
    }
    payloads.resolve_references(&mut decoded, report);
    Some(decoded)
}

//! The section table of an archive: `section_count` entries of 24 bytes after the
//! header, each judged on its own (padding, kind, kind against the version,
//! bounds, repeats) and then against the others (overlap).

use crate::schema::holo::{
    holo_header_offsets, section_entry_offsets, HoloHeader, SectionEntry, SectionKind,
    HOLO_HEADER_LEN, SECTION_ENTRY_LEN,
};
use crate::schema::read_from;
use crate::validate::rules::holo as r;
use crate::validate::Report;

use super::super::input::Input;
use super::archive::{grow, SectionRef};

/// Decodes the table of an archive with `header` whose footer starts at
/// `footer_start`: the sections whose entries passed the table checks, in table
/// order; `None` when the table does not fit before the footer (or the budget
/// refuses it).
pub(super) fn decode_table(
    input: &Input<'_>,
    header: HoloHeader,
    footer_start: u64,
    report: &mut Report,
) -> Option<Vec<SectionRef>> {
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
    // (table entry offset, section) for every entry that passed the table checks.
    let mut accepted: Vec<(u64, SectionRef)> = Vec::new();
    if !grow(
        input,
        &mut accepted,
        usize::from(header.section_count),
        || format!("the table of {count} sections"),
        holo_header_offsets::SECTION_COUNT,
        report,
    ) {
        return None;
    }
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
    check_overlap(&mut accepted, report);
    Some(accepted.into_iter().map(|(_, s)| s).collect())
}

/// Reports every non-empty section that starts before an earlier one ends;
/// `accepted` is left in table order.
fn check_overlap(accepted: &mut [(u64, SectionRef)], report: &mut Report) {
    // Sorted in place (no second list), then put back in table order.
    accepted.sort_by_key(|(at, s)| (s.offset, *at));
    let mut furthest: Option<(u64, SectionKind)> = None;
    for (at, s) in accepted.iter().filter(|(_, s)| s.length > 0) {
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
    accepted.sort_by_key(|(at, _)| *at);
}

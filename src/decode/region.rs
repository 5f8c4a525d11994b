//! The tensor region: walking descriptors and buffers in file order, then checking
//! the index against what was found and recovering composites.

use crate::schema::{
    descriptor_offsets as off,
    placement::{align_up, place_buffers},
    IndexEntryOf, NameSpan, TensorDescriptor, DESCRIPTOR_HEADER_LEN, DESCRIPTOR_MAGIC,
    LAYOUT_COMPOSITE,
};

use super::container::{check_padding, Frame};
use super::descriptor::check_descriptor;
use super::input::{Buffers, Input};
use super::tensor::{bind_composite, check_stored, Data, Members};
use crate::validate::rules::container::*;
use crate::validate::{Report, Violation};

/// A tensor found by the walk.
pub(crate) struct Walked {
    pub descriptor_offset: u64,
    pub descriptor: TensorDescriptor,
    pub data_offset: u64,
    pub data_length: u64,
    /// Absolute offset of each buffer of the descriptor's buffer table.
    pub buffer_offsets: Vec<u64>,
}

impl Walked {
    /// The tensor `descriptor` at `descriptor_offset`, its buffers placed as `p` says.
    pub(crate) fn new(
        descriptor_offset: u64,
        descriptor: TensorDescriptor,
        p: crate::schema::placement::DataPlacement,
    ) -> Self {
        Walked {
            descriptor_offset,
            data_offset: p.data_offset,
            data_length: p.data_length(),
            descriptor,
            buffer_offsets: p.buffer_offsets,
        }
    }
}

/// What the walk of the tensor region found.
pub(crate) struct Region {
    /// The tensors in file order.
    pub walked: Vec<Walked>,
    /// For each index entry (in index order), the walked tensor it names.
    pub by_entry: Vec<Option<usize>>,
}

/// Walks the region, then cross-checks the index and composites.
pub(crate) fn check_region(frame: &Frame<'_>, report: &mut Report) -> Region {
    let (walked, complete) = walk(frame, report);
    let by_entry = check_index_agreement(frame, &walked, complete, report);
    if !report.stopped() {
        check_composites(frame, &walked, complete, report);
    }
    Region { walked, by_entry }
}

fn starts_descriptor(input: &Input<'_>, at: u64) -> bool {
    input.bytes(at, 4).is_some_and(|m| *m == DESCRIPTOR_MAGIC)
}

/// Most bytes read ahead at a descriptor.
const DESCRIPTOR_READ_AHEAD: u64 = 64 << 10;

/// Follows descriptors from `first_descriptor_offset` to the region end; returns the
/// tensors and whether the walk reached the end cleanly.
fn walk(frame: &Frame<'_>, report: &mut Report) -> (Vec<Walked>, bool) {
    let input = frame.input;
    let end = frame.region_end;
    let dba = u64::from(frame.header.data_buffer_alignment);
    let first = frame.header.first_descriptor_offset;
    // Each index entry should name one tensor: reserving for them all spares the
    // moves of growing (the index was bounded by the limits and the file's size).
    let mut out = Vec::new();
    let reserved = input.budget().grow(
        &mut out,
        frame.index.len(),
        || format!("the list of {} tensors", frame.index.len()),
        frame.trailer.index_offset,
    );
    if let Err(v) = reserved {
        report.record(v);
        report.fatal = true;
        return (out, false);
    }
    if first > end {
        report.violation(
            &HF_PLC_FIRST,
            crate::schema::container::header_offsets::FIRST_DESCRIPTOR_OFFSET,
            format!(
                "first_descriptor_offset {first} lies past the end of the tensor region at {end}"
            ),
        );
        return (out, false);
    }
    check_padding(
        input,
        crate::schema::container::FILE_HEADER_LEN,
        first,
        report,
    );
    announce_descriptors(frame);
    let mut ahead = TouchAhead::new(frame);
    let mut pos = first;
    if frame.index.is_empty() && end - first < 8 {
        // An empty region may still hold the padding that aligns the next section.
        check_padding(input, first, end, report);
        return (out, true);
    }
    while pos < end {
        if report.stopped() {
            return (out, false);
        }
        if out.len() as u64 >= frame.limits.max_tensors {
            report.limit(
                crate::limits::Limit::Tensors,
                pos,
                format!(
                    "the tensor region holds more than max_tensors {}",
                    frame.limits.max_tensors
                ),
            );
            return (out, false);
        }
        // The bytes up to the next data_buffer_alignment boundary past `pos` hold
        // the descriptor and padding, never its buffers (the first starts at or
        // after that boundary): one read serves them all.
        let block = align_up(pos + 1, dba).unwrap_or(end).min(end) - pos;
        input.prefetch(pos, block.min(DESCRIPTOR_READ_AHEAD));
        ahead.past(input, pos);
        let Some(d) = read_descriptor(frame, pos, end, report) else {
            return (out, false);
        };
        let desc_end = pos + u64::from(d.descriptor_length);
        check_descriptor(&d, pos, report);
        let Some(p) = place_buffers(desc_end, &d.buffers, dba).filter(|p| p.data_end <= end) else {
            report.violation(
                &HF_PLC_DATA_BOUNDS,
                pos + d.buffer_table_pos(),
                format!(
                    "the buffers of the tensor at {pos} run past the tensor region end at {end}"
                ),
            );
            return (out, false);
        };
        // The placement lies inside the region, so every buffer is in the input.
        let buffers = Buffers::Input {
            input,
            offsets: &p.buffer_offsets,
            handles: &d.buffers,
        };
        let data = Data {
            buffers,
            offsets: Some(&p.buffer_offsets),
        };
        check_stored(&d, pos, Some(data), &frame.limits, report);
        super::buffer::check_file_alignment(&d, pos, &p.buffer_offsets, report);
        let mut from = desc_end;
        for (&b, h) in p.buffer_offsets.iter().zip(&d.buffers) {
            check_padding(input, from, b, report);
            from = b + h.byte_size;
        }
        if !charge_walked(input, &mut out, &d, pos, report) {
            return (out, false);
        }
        let next = match next_descriptor(frame, &d, p.data_end, report) {
            Some(n) => n,
            None => {
                out.push(Walked::new(pos, d, p));
                return (out, false);
            }
        };
        out.push(Walked::new(pos, d, p));
        pos = next;
    }
    (out, true)
}

/// Charges what keeping the tensor `d` (at `pos`) costs: its place in `out`, and
/// its decoded fields (at most twice its encoded bytes) and buffer offsets.
fn charge_walked(
    input: &Input<'_>,
    out: &mut Vec<Walked>,
    d: &TensorDescriptor,
    pos: u64,
    report: &mut Report,
) -> bool {
    let what = || format!("the tensor at {pos}");
    if let Err(v) = input.budget().grow(out, 1, what, pos) {
        report.record(v);
        report.fatal = true;
        return false;
    }
    let held = 2 * u64::from(d.descriptor_length) + 8 * d.buffers.len() as u64;
    input.charge(held, what, pos, report)
}

/// The descriptors the index locates, in file order, touched a batch at a time a
/// little ahead of the walk ([`Input::touch`]): in a mapped file whose descriptors
/// lie pages apart, their misses then overlap.
struct TouchAhead {
    offsets: Vec<u64>,
    /// The first offset past the walk's position.
    next: usize,
    /// The offsets before this one have been touched.
    touched: usize,
}

impl TouchAhead {
    /// Descriptors touched together.
    const BATCH: usize = super::input::TOUCH_BATCH;

    fn new(frame: &Frame<'_>) -> Self {
        let mut offsets: Vec<u64> = frame
            .index
            .iter()
            .map(|e| e.descriptor_offset)
            .filter(|&at| at < frame.region_end)
            .collect();
        // An index in file order (as writers usually leave it) needs no sort.
        if !offsets.is_sorted() {
            offsets.sort_unstable();
        }
        TouchAhead {
            offsets,
            next: 0,
            touched: 0,
        }
    }

    /// The walk is at `pos`: touches the next batch when it has almost reached the
    /// end of the last one.
    fn past(&mut self, input: &Input<'_>, pos: u64) {
        while self.offsets.get(self.next).is_some_and(|&at| at <= pos) {
            self.next += 1;
        }
        if self.next + Self::BATCH / 2 >= self.touched {
            let from = self.touched.max(self.next);
            let to = (self.next + Self::BATCH).min(self.offsets.len());
            if from < to {
                input.touch(&self.offsets[from..to]);
                self.touched = to;
            }
        }
    }
}

/// Tells the source which descriptors the walk is about to read (as the index
/// locates them, each with the padding up to its first buffer), so that a remote
/// source fetches them in few requests. Only a hint: the walk reads what it reads.
fn announce_descriptors(frame: &Frame<'_>) {
    let dba = u64::from(frame.header.data_buffer_alignment);
    let ranges: Vec<(u64, u64)> = frame
        .index
        .iter()
        .filter(|e| e.descriptor_offset < frame.region_end)
        .map(|e| {
            let at = e.descriptor_offset;
            let end = align_up(at + 1, dba)
                .unwrap_or(frame.region_end)
                .min(frame.region_end)
                .min(at.saturating_add(DESCRIPTOR_READ_AHEAD));
            (at, end - at)
        })
        .collect();
    if !ranges.is_empty() {
        frame.input.source().prefetch(&ranges);
    }
}

/// Reads the descriptor at `pos`, reporting why it cannot be followed if it cannot.
fn read_descriptor(
    frame: &Frame<'_>,
    pos: u64,
    end: u64,
    report: &mut Report,
) -> Option<TensorDescriptor> {
    let input = frame.input;
    if end - pos < DESCRIPTOR_HEADER_LEN {
        report.violation(
            &HF_PLC_DATA_BOUNDS,
            pos,
            format!(
                "{} bytes remain in the tensor region at {pos}, too few for a descriptor",
                end - pos
            ),
        );
        return None;
    }
    let header = match super::header::fixed_header(
        &input.bytes(pos, DESCRIPTOR_HEADER_LEN)?,
        pos,
        &frame.limits,
    ) {
        Ok(h) => h,
        Err(v) => {
            report.record(v);
            return None;
        }
    };
    let length = header.length();
    if pos + length > end {
        report.violation(
            &HF_PLC_DATA_BOUNDS,
            pos + off::DESCRIPTOR_LENGTH,
            format!("descriptor [{pos}, +{length}) runs past the tensor region end at {end}"),
        );
        return None;
    }
    match header.decode(&input.bytes(pos, length)?) {
        Ok(d) => Some(d),
        Err(v) => {
            report.record(v);
            None
        }
    }
}

/// Where the next descriptor (or the region end) is after a tensor whose data ends at
/// `data_end`; `None` when the walk cannot continue.
fn next_descriptor(
    frame: &Frame<'_>,
    d: &TensorDescriptor,
    data_end: u64,
    report: &mut Report,
) -> Option<u64> {
    let input = frame.input;
    let end = frame.region_end;
    let dba = u64::from(frame.header.data_buffer_alignment);
    let c8 = align_up(data_end, 8)?;
    let is_head = d.layout_tag == LAYOUT_COMPOSITE;
    if c8 == end || (c8 < end && starts_descriptor(input, c8)) {
        check_padding(input, data_end, c8, report);
        return Some(c8);
    }
    if c8 > end {
        report.violation(
            &HF_PLC_TAIL_PADDING,
            data_end,
            format!("the tensor ends at {data_end}, leaving no room to pad to 8 before {end}"),
        );
        return None;
    }
    let ca = align_up(data_end, dba)?;
    if ca <= end && (ca == end || starts_descriptor(input, ca)) {
        check_padding(input, data_end, ca, report);
        if is_head {
            report.violation(
                &HF_PLC_HEAD_PADDING,
                data_end,
                format!(
                    "{} bytes of data_buffer_alignment padding follow the composite head; some writers pad there, but file-format.md forbids it (the first member follows at the next 8-byte boundary)",
                    ca - data_end
                ),
            );
        }
        return Some(ca);
    }
    if input.first_nonzero(data_end, end).is_none() {
        report.violation(
            &HF_PLC_REGION_END,
            data_end,
            format!(
                "{} unaccounted zero bytes lie between the last tensor and offset {end}",
                end - data_end
            ),
        );
        // Only zeros remain: the walk has seen every tensor of the region, so the
        // index is still checked against it (HF-IDX-007 and the rest), in every
        // mode, whatever the hardening rule above decides.
        return Some(end);
    } else {
        report.violation(
            &HF_PLC_TAIL_PADDING,
            c8,
            format!("no descriptor at {c8} (next 8-byte boundary) or {ca} (next data_buffer_alignment boundary)"),
        );
    }
    None
}

/// What the index is checked against, of one walked tensor: a compact copy, so
/// that entries in name order (not file order) look tensors up in a small table.
struct Placed {
    descriptor_offset: u64,
    data_offset: u64,
    data_length: u64,
    descriptor_length: u32,
    /// A composite head without buffers (its index entry locates no data).
    bufferless_head: bool,
}

/// `HF-IDX-004`: the index entry `e` (at absolute offset `entry_at`) gives the
/// `descriptor_length` its descriptor states (`stated`).
pub(crate) fn check_entry_descriptor_length(
    e: &IndexEntryOf<NameSpan>,
    entry_at: u64,
    stated: u32,
) -> Result<(), Violation> {
    if e.descriptor_length == stated {
        return Ok(());
    }
    Err(Violation::new(
        &HF_IDX_DESC_LENGTH,
        entry_at + 2 + u64::from(e.name.len) + 8,
        format!(
            "index descriptor_length {} but the descriptor says {stated}",
            e.descriptor_length
        ),
    ))
}

/// `HF-PLC-002` and `HF-IDX-005`: the `data_offset` of the index entry `e` (at
/// absolute offset `entry_at`) is aligned to `data_buffer_alignment` and is where
/// the tensor's first buffer starts (`data_offset`).
pub(crate) fn check_entry_data_offset(
    e: &IndexEntryOf<NameSpan>,
    entry_at: u64,
    data_offset: u64,
    data_buffer_alignment: u64,
) -> Result<(), Violation> {
    let at = entry_at + 2 + u64::from(e.name.len) + 12;
    if !e.data_offset.is_multiple_of(data_buffer_alignment) {
        return Err(Violation::new(
            &HF_PLC_BUFFER_ALIGN,
            at,
            format!(
                "data_offset {} is not a multiple of data_buffer_alignment {data_buffer_alignment}",
                e.data_offset
            ),
        ));
    }
    if e.data_offset != data_offset {
        return Err(Violation::new(
            &HF_IDX_DATA_OFFSET,
            at,
            format!(
                "index data_offset {} but the first buffer starts at {data_offset}",
                e.data_offset
            ),
        ));
    }
    Ok(())
}

/// Each index entry names one walked tensor and agrees with it; returns, for each
/// entry, the tensor it names.
fn check_index_agreement(
    frame: &Frame<'_>,
    walked: &[Walked],
    complete: bool,
    report: &mut Report,
) -> Vec<Option<usize>> {
    let placed: Vec<Placed> = walked
        .iter()
        .map(|w| Placed {
            descriptor_offset: w.descriptor_offset,
            data_offset: w.data_offset,
            data_length: w.data_length,
            descriptor_length: w.descriptor.descriptor_length,
            bufferless_head: w.descriptor.layout_tag == LAYOUT_COMPOSITE
                && w.descriptor.buffers.is_empty(),
        })
        .collect();
    // The walk goes forward, so `placed` is sorted by strictly increasing
    // descriptor offset: a lookup is a binary search. An index written in file
    // order is found in O(1) by trying the entry after the previous one first.
    let find = |offset: u64, hint: usize| match placed.get(hint) {
        Some(w) if w.descriptor_offset == offset => Some(hint),
        _ => placed
            .binary_search_by_key(&offset, |w| w.descriptor_offset)
            .ok(),
    };
    let mut hint = 0;
    let mut named = vec![false; walked.len()];
    let mut by_entry = Vec::with_capacity(frame.index.len());
    for (e, at) in frame.index.iter().zip(&frame.index_offsets) {
        let after_name = at + 2 + u64::from(e.name.len);
        let found = find(e.descriptor_offset, hint);
        hint = found.map_or(hint, |i| i + 1);
        by_entry.push(found);
        let Some(i) = found else {
            if complete {
                report.violation(
                    &HF_IDX_DESC_OFFSET,
                    after_name,
                    format!(
                        "{:?}: no tensor of the region starts at descriptor_offset {}",
                        String::from_utf8_lossy(frame.name(e)),
                        e.descriptor_offset
                    ),
                );
            }
            continue;
        };
        let w = &placed[i];
        if std::mem::replace(&mut named[i], true) {
            report.violation(
                &HF_IDX_DESC_OFFSET,
                after_name,
                format!(
                    "the tensor at {} is named by more than one index entry",
                    e.descriptor_offset
                ),
            );
        }
        if let Err(v) = check_entry_descriptor_length(e, *at, w.descriptor_length) {
            report.record(v);
        }
        if w.bufferless_head {
            let desc_end = w.descriptor_offset + u64::from(w.descriptor_length);
            report.check(e.data_length == 0 && e.data_offset == desc_end, &HF_CMP_HEAD_INDEX, after_name + 12, || {
                format!(
                    "composite head entry has data_offset {} / data_length {}, expected {desc_end} / 0",
                    e.data_offset, e.data_length
                )
            });
            continue;
        }
        let dba = u64::from(frame.header.data_buffer_alignment);
        if let Err(v) = check_entry_data_offset(e, *at, w.data_offset, dba) {
            report.record(v);
        }
        report.check(
            e.data_length == w.data_length,
            &HF_IDX_DATA_LENGTH,
            after_name + 20,
            || {
                format!(
                    "index data_length {} but buffers and padding span {}",
                    e.data_length, w.data_length
                )
            },
        );
    }
    if complete && frame.index_complete {
        let count = frame.index.len();
        report.check(
            count == walked.len(),
            &HF_IDX_COUNT,
            frame.trailer.index_offset,
            || {
                format!(
                    "index_entry_count is {count} but the tensor region holds {} tensors",
                    walked.len()
                )
            },
        );
    }
    by_entry
}

/// The walked tensors, which composites name by their place in the walk.
struct InWalk<'w>(&'w [Walked]);

impl Members<usize> for InWalk<'_> {
    fn member<'a>(&'a self, item: &'a usize) -> (&'a TensorDescriptor, u64) {
        let w = &self.0[*item];
        (&w.descriptor, w.descriptor_offset)
    }
}

/// Recovers composites by descriptor order: a head's members are the next
/// `member_count` tensors (pre-order for nested heads).
fn check_composites(frame: &Frame<'_>, walked: &[Walked], complete: bool, report: &mut Report) {
    let mut binder = crate::layout::composite::Binder::new();
    for (index, w) in walked.iter().enumerate() {
        bind_composite(
            &mut binder,
            index,
            &w.descriptor,
            w.descriptor_offset,
            &InWalk(walked),
            &frame.limits,
            report,
        );
    }
    if complete {
        if let Some(open) = binder.outermost_open() {
            report.violation(
                &HF_CMP_TORN,
                open.head_offset,
                format!(
                    "the composite head at {} is followed by too few members ({} missing)",
                    open.head_offset, open.remaining
                ),
            );
        }
    }
}

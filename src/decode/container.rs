//! Validation of a whole HRRYFILE: header, trailer, index, KV, then the tensor
//! region (see [`super::region`]).

use std::borrow::Cow;
use std::collections::HashSet;

use crate::limits::{Limit, Limits};
use crate::schema::{
    container::{
        header_offsets as ho, trailer_offsets as to, FILE_HEADER_LEN, MIN_INDEX_ENTRY_LEN,
    },
    kv::MIN_KV_ENTRY_LEN,
    read_from, FileHeader, IndexEntryOf, KvElement, KvEntry, KvValue, NameSpan, Trailer,
    FILE_MAGIC, TRAILER_LEN, TRAILER_MAGIC,
};

use super::input::{DataReads, Input};
use crate::validate::rules::container::*;
use crate::validate::Report;

/// What the container checks learned, for the later passes and the readers.
pub(crate) struct Frame<'a> {
    pub input: &'a Input<'a>,
    pub header: FileHeader,
    pub trailer: Trailer,
    /// The index entries that decoded, in index order; each name is a span into
    /// `names`.
    pub index: Vec<IndexEntryOf<NameSpan>>,
    /// Absolute offset of each entry of `index`.
    pub index_offsets: Vec<u64>,
    /// The name of every entry of `index`, concatenated in index order.
    pub names: Names,
    /// Whether the whole index decoded (so its count can be compared).
    pub index_complete: bool,
    /// The KV entries that decoded, in file order.
    pub kv: Vec<KvEntry>,
    /// Where the tensor region ends (start of KV, else of the index).
    pub region_end: u64,
    pub limits: Limits,
}

impl Frame<'_> {
    /// The name bytes of `entry` (an entry of `index`).
    pub fn name(&self, entry: &IndexEntryOf<NameSpan>) -> &[u8] {
        entry
            .name
            .bytes_in(self.names.as_bytes())
            .unwrap_or_default()
    }
}

/// The names of every index entry, concatenated in index order: text when each
/// is UTF-8 (`HF-IDX-003`), else their bytes.
#[derive(Debug)]
pub(crate) enum Names {
    /// Every name is UTF-8.
    Text(String),
    /// Some name is not: the bytes, with the first place they are not UTF-8.
    Bytes(std::string::FromUtf8Error),
}

impl Names {
    /// The concatenated name bytes.
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Names::Text(s) => s.as_bytes(),
            Names::Bytes(e) => e.as_bytes(),
        }
    }
}

/// `HF-IDX-003` over the concatenated `names` of `index`: checked as one text (a
/// concatenation of UTF-8 names is UTF-8, and one pass over it is fast); only when
/// that fails is each name checked, to report the entries that are not.
fn text_of_names(names: Vec<u8>, index: &DecodedIndex, report: &mut Report) -> Names {
    let error = match String::from_utf8(names) {
        Ok(text) => return Names::Text(text),
        Err(e) => e,
    };
    let bytes = error.as_bytes();
    for (i, (e, &at)) in index.entries.iter().zip(&index.offsets).enumerate() {
        let name = e.name.bytes_in(bytes).unwrap_or_default();
        report.check(
            std::str::from_utf8(name).is_ok(),
            &HF_IDX_NAME_UTF8,
            at + 2,
            || format!("index entry {i} name {name:02x?} is not valid UTF-8"),
        );
    }
    Names::Bytes(error)
}

/// Header, trailer, index and KV; `None` when the tensor region cannot be found.
pub(crate) fn check_frame<'a>(
    input: &'a Input<'a>,
    limits: Limits,
    report: &mut Report,
) -> Option<Frame<'a>> {
    let len = input.len();
    let head = input.bytes_clamped(0, crate::diagnose::HEAD_LEN as u64);
    if !check_magic(&head, len, report) {
        report.fatal = true;
        return None;
    }
    if len < FILE_HEADER_LEN + TRAILER_LEN {
        report.violation(
            &HF_FILE_SIZE,
            0,
            format!("file is {len} bytes, shorter than a 64-byte header and 40-byte trailer"),
        );
        report.fatal = true;
        return None;
    }
    let header = read_from::<FileHeader>(&head).ok()?.0;
    if !check_header(&header, report) {
        report.fatal = true;
        return None;
    }
    let trailer_at = len - TRAILER_LEN;
    let trailer = read_from::<Trailer>(&input.bytes(trailer_at, TRAILER_LEN)?)
        .ok()?
        .0;
    let mut index_bytes = None;
    if !check_trailer(input, &header, &trailer, &limits, &mut index_bytes, report) {
        report.fatal = true;
        return None;
    }
    let mut index = check_index(input, index_bytes, &header, &trailer, &limits, report);
    let names = text_of_names(std::mem::take(&mut index.names), &index, report);
    let kv_present = trailer.kv_length != 0 && trailer.kv_offset != 0;
    let kv_in_bounds = kv_present
        && trailer.kv_offset >= FILE_HEADER_LEN
        && trailer
            .kv_offset
            .checked_add(trailer.kv_length.into())
            .is_some_and(|end| end <= trailer.index_offset);
    let kv = if kv_in_bounds {
        check_kv(input, &trailer, &limits, report)
    } else {
        Vec::new()
    };
    // A KV section that overruns the index still marks where the tensor region ends.
    let kv_starts_region_end = kv_present
        && trailer.kv_offset >= header.first_descriptor_offset
        && trailer.kv_offset <= trailer.index_offset;
    let region_end = if kv_starts_region_end {
        trailer.kv_offset
    } else {
        trailer.index_offset
    };
    Some(Frame {
        input,
        header,
        trailer,
        index: index.entries,
        index_offsets: index.offsets,
        names,
        index_complete: index.complete,
        kv,
        region_end,
        limits,
    })
}

/// `HF-HDR-001` on the first bytes of an input of `len` bytes, saying what they
/// look like when they are not a HRRYFILE; false then.
pub(crate) fn check_magic(head: &[u8], len: u64, report: &mut Report) -> bool {
    let ok = head.len() >= 8 && head[..8] == FILE_MAGIC;
    if !ok {
        report.violation(
            &HF_HDR_MAGIC,
            0,
            format!(
                "not a HRRYFILE: {}",
                crate::diagnose::describe_head(head, len)
            ),
        );
    }
    ok
}

/// Header checks; false when the file cannot be interpreted further.
pub(crate) fn check_header(h: &FileHeader, report: &mut Report) -> bool {
    if h.container_version_major != 1 {
        report.violation(
            &HF_HDR_VERSION,
            ho::VERSION_MAJOR,
            format!(
                "container_version_major is {}, this reader supports 1",
                h.container_version_major
            ),
        );
        return false;
    }
    // versioning.md: a newer minor version may put optional fields where 1.0
    // reserves bytes; a reader does not interpret (nor judge) them. Unknown flag
    // bits are rejected at every minor (§ Compatibility Matrix).
    let reserved_flags = h.file_flags.reserved();
    report.check(reserved_flags == 0, &HF_HDR_FLAGS, ho::FILE_FLAGS, || {
        format!(
            "reserved file flag bits are {:#x}, expected 0",
            reserved_flags << 3
        )
    });
    if newer_minor(h) {
        report.note(format!(
            "container version 1.{} is newer than 1.0, the newest this reader knows: the \
             bytes 1.0 reserves (header, trailer, after the index entries) are not judged",
            h.container_version_minor
        ));
        return check_header_fields(h, report);
    }
    report.check(h.reserved == [0; 2], &HF_HDR_RESERVED, ho::RESERVED, || {
        format!(
            "reserved bytes 10-11 are {:02x?}, expected zero",
            h.reserved
        )
    });
    if let Some(i) = h.reserved_header.iter().position(|&b| b != 0) {
        report.violation(
            &HF_HDR_RESERVED_TAIL,
            ho::RESERVED_HEADER + i as u64,
            format!(
                "reserved header byte {} is {:#04x}, expected 0",
                36 + i,
                h.reserved_header[i]
            ),
        );
    }
    check_header_fields(h, report)
}

/// The container minor version this reader supports (1.0).
const SUPPORTED_MINOR: u8 = 0;

/// Whether the file is of a newer minor container version than this reader's.
pub(crate) fn newer_minor(h: &FileHeader) -> bool {
    h.container_version_minor > SUPPORTED_MINOR
}

/// The checks of the header's defined fields (every minor version).
fn check_header_fields(h: &FileHeader, report: &mut Report) -> bool {
    let a = h.data_buffer_alignment;
    let pow2 = report.check(
        a.is_power_of_two(),
        &HF_HDR_ALIGN_POW2,
        ho::DATA_BUFFER_ALIGNMENT,
        || format!("data_buffer_alignment {a} is not a power of two"),
    );
    report.check(
        a >= 4096,
        &HF_HDR_ALIGN_MIN,
        ho::DATA_BUFFER_ALIGNMENT,
        || format!("data_buffer_alignment {a} is below 4096"),
    );
    report.check(
        a <= 2 << 20,
        &HF_HDR_ALIGN_MAX,
        ho::DATA_BUFFER_ALIGNMENT,
        || format!("data_buffer_alignment {a} exceeds 2097152"),
    );
    let first = h.first_descriptor_offset;
    report.check(
        first >= FILE_HEADER_LEN,
        &HF_HDR_FIRST_MIN,
        ho::FIRST_DESCRIPTOR_OFFSET,
        || format!("first_descriptor_offset {first} is below 64"),
    );
    report.check(
        first.is_multiple_of(8),
        &HF_HDR_FIRST_ALIGN,
        ho::FIRST_DESCRIPTOR_OFFSET,
        || format!("first_descriptor_offset {first} is not a multiple of 8"),
    );
    pow2 && first >= FILE_HEADER_LEN
}

/// Judges the trailer `t` of a file of `len` bytes with header `h` on its own
/// fields (magic, reserved bytes, where it puts the index and the KV section); false
/// when the file's sections cannot be located from it.
pub(crate) fn judge_trailer(h: &FileHeader, t: &Trailer, len: u64, report: &mut Report) -> bool {
    let at = len - TRAILER_LEN;
    if t.trailer_magic != TRAILER_MAGIC {
        report.violation(
            &HF_TRL_MAGIC,
            at + to::TRAILER_MAGIC,
            format!(
                "the last four bytes are {:02x?}, not \"HRRY\": the file ({len} bytes) is truncated or not finished",
                t.trailer_magic
            ),
        );
        return false;
    }
    report.check(
        t.reserved == [0; 4] || newer_minor(h),
        &HF_TRL_RESERVED,
        at + to::RESERVED,
        || {
            format!(
                "trailer reserved bytes are {:02x?}, expected zero",
                t.reserved
            )
        },
    );
    let index_end = t.index_offset.checked_add(t.index_length);
    if t.index_offset < FILE_HEADER_LEN || index_end.is_none_or(|e| e > at) {
        report.violation(
            &HF_TRL_INDEX_BOUNDS,
            at + to::INDEX_OFFSET,
            match index_end {
                Some(e) if e > at => format!(
                    "file is {len} bytes; the trailer says the index ends at {e}, past the trailer at {at} (truncated?)"
                ),
                _ => format!(
                    "index_offset {} + index_length {} is not inside the file",
                    t.index_offset, t.index_length
                ),
            },
        );
        return false;
    }
    report.check(
        t.index_offset.is_multiple_of(8),
        &HF_TRL_INDEX_ALIGN,
        at + to::INDEX_OFFSET,
        || format!("index_offset {} is not a multiple of 8", t.index_offset),
    );
    report.check(
        index_end == Some(at),
        &HF_PLC_INDEX_END,
        at + to::INDEX_LENGTH,
        || {
            format!(
                "the index ends at {}, but the trailer starts at {at}: {} unaccounted bytes",
                index_end.unwrap_or(0),
                at - index_end.unwrap_or(0)
            )
        },
    );
    let flag = h.file_flags.has_kv_metadata();
    let pair_ok = (t.kv_offset == 0) == (t.kv_length == 0);
    report.check(pair_ok, &HF_TRL_KV_PAIR, at + to::KV_OFFSET, || {
        format!(
            "kv_offset {} and kv_length {} must both be zero or both non-zero",
            t.kv_offset, t.kv_length
        )
    });
    if flag {
        report.check(
            t.kv_offset != 0 && t.kv_length != 0,
            &HF_TRL_KV_FLAG,
            at + to::KV_OFFSET,
            || "HAS_KV_METADATA is set but kv_offset or kv_length is zero".into(),
        );
    } else if t.kv_length != 0 {
        report.note("a KV section is present although HAS_KV_METADATA is clear (accepted)");
    }
    if t.kv_length != 0 && t.kv_offset != 0 {
        report.check(
            t.kv_offset.is_multiple_of(8),
            &HF_TRL_KV_ALIGN,
            at + to::KV_OFFSET,
            || format!("kv_offset {} is not a multiple of 8", t.kv_offset),
        );
        report.check(
            kv_in_bounds(h, t).is_some(),
            &HF_TRL_KV_BOUNDS,
            at + to::KV_OFFSET,
            || {
                format!(
                    "KV section [{}, +{}) is not between the tensor region and the index at {}",
                    t.kv_offset, t.kv_length, t.index_offset
                )
            },
        );
    }
    true
}

/// Where the KV section the trailer `t` announces ends, when it lies between the
/// tensor region and the index.
fn kv_in_bounds(h: &FileHeader, t: &Trailer) -> Option<u64> {
    if t.kv_length == 0 || t.kv_offset == 0 {
        return None;
    }
    let kv_end = t.kv_offset.checked_add(t.kv_length.into())?;
    (t.kv_offset >= h.first_descriptor_offset.max(FILE_HEADER_LEN) && kv_end <= t.index_offset)
        .then_some(kv_end)
}

/// Trailer checks; false when the index cannot be located. Reading the index for its
/// CRC leaves it in `index_bytes` for [`check_index`] when it is within the limits.
fn check_trailer<'a>(
    input: &Input<'a>,
    h: &FileHeader,
    t: &Trailer,
    limits: &Limits,
    index_bytes: &mut Option<Cow<'a, [u8]>>,
    report: &mut Report,
) -> bool {
    let len = input.len();
    if !judge_trailer(h, t, len, report) {
        return false;
    }
    if let Some(end) = kv_in_bounds(h, t) {
        check_gap(input, end, t.index_offset, &HF_PLC_KV_GAP, report);
    }
    let at = len - TRAILER_LEN;
    if h.file_flags.has_index_crc32c() && !report.wants(&HF_CRC_MATCH) {
        // A pass that lets the CRC go (a trusted open) does not compute it.
    } else if h.file_flags.has_index_crc32c() {
        // An index past max_index_bytes is refused by check_index without being
        // held; its CRC is still judged, streamed.
        let crc = if t.index_length <= limits.max_index_bytes {
            *index_bytes = input.bytes(t.index_offset, t.index_length);
            crc32c::crc32c(index_bytes.as_deref().unwrap_or_default())
        } else {
            input.crc32c(t.index_offset, t.index_length)
        };
        report.check(
            crc == t.index_crc32c,
            &HF_CRC_MATCH,
            at + to::INDEX_CRC32C,
            || {
                format!(
                    "CRC-32C of the index is {crc:#010x}, the trailer says {:#010x}",
                    t.index_crc32c
                )
            },
        );
    } else {
        report.check(
            t.index_crc32c == 0,
            &HF_CRC_ZERO,
            at + to::INDEX_CRC32C,
            || {
                format!(
                    "HAS_INDEX_CRC32C is clear but index_crc32c is {:#010x}",
                    t.index_crc32c
                )
            },
        );
    }
    true
}

/// Bytes between `from` and `to` may only be zero padding to the next 8-byte
/// boundary: more is unaccounted (`gap_rule`), non-zero is bad padding.
pub(crate) fn check_gap(
    input: &Input<'_>,
    from: u64,
    to: u64,
    gap_rule: &'static crate::validate::Rule,
    report: &mut Report,
) {
    let padded = crate::schema::placement::align_up(from, 8).unwrap_or(u64::MAX);
    report.check(to <= padded, gap_rule, from, || {
        format!(
            "{} unaccounted bytes between offsets {from} and {to}",
            to - from
        )
    });
    check_padding(input, from, to.min(padded), report);
}

/// `HF-PLC-003` on `[from, to)` when the judging reads padding (to
/// [`Depth::Data`](crate::validate::Depth::Data)): [`check_zero`] with its consent.
pub(crate) fn check_padding(input: &Input<'_>, from: u64, to: u64, report: &mut Report) -> bool {
    match DataReads::for_rule(report, &HF_PLC_PADDING_ZERO) {
        Some(consent) => check_zero(consent, input, from, to, report),
        None => true,
    }
}

/// Reports the first non-zero byte in `[from, to)` as bad padding (nothing when the
/// range is not inside the input). Reads the padding: only with the judging's
/// consent.
fn check_zero(
    _consent: DataReads,
    input: &Input<'_>,
    from: u64,
    to: u64,
    report: &mut Report,
) -> bool {
    if from > to || to > input.len() {
        return true;
    }
    match input.first_nonzero(from, to) {
        Some((at, byte)) => {
            report.violation(
                &HF_PLC_PADDING_ZERO,
                at,
                format!("padding byte is {byte:#04x}, expected 0x00"),
            );
            false
        }
        None => true,
    }
}

/// The index as [`check_index`] decoded it.
#[derive(Default)]
struct DecodedIndex {
    entries: Vec<IndexEntryOf<NameSpan>>,
    offsets: Vec<u64>,
    names: Vec<u8>,
    complete: bool,
}

/// Decodes and checks every index entry; returns those that decoded, and whether
/// the whole index did.
fn check_index(
    input: &Input<'_>,
    index_bytes: Option<Cow<'_, [u8]>>,
    h: &FileHeader,
    t: &Trailer,
    limits: &Limits,
    report: &mut Report,
) -> DecodedIndex {
    let base = t.index_offset;
    if t.index_length > limits.max_index_bytes {
        report.limit(
            Limit::IndexBytes,
            base,
            format!(
                "index_length {} exceeds max_index_bytes {}",
                t.index_length, limits.max_index_bytes
            ),
        );
        report.fatal = true;
        return DecodedIndex::default();
    }
    if index_bytes.is_none()
        && !input.charge_read_to(t.index_length, || "the index section".into(), base, report)
    {
        return DecodedIndex::default();
    }
    let Some(index) = index_bytes.or_else(|| input.bytes(base, t.index_length)) else {
        return DecodedIndex::default();
    };
    let index = &index[..];
    let Some(count) = index
        .get(..8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
    else {
        report.violation(
            &HF_IDX_DECODE,
            base,
            format!(
                "index_length {} is too short for index_entry_count",
                t.index_length
            ),
        );
        return DecodedIndex::default();
    };
    if count > limits.max_tensors {
        report.limit(
            Limit::Tensors,
            base,
            format!(
                "index_entry_count {count} exceeds max_tensors {}",
                limits.max_tensors
            ),
        );
        report.fatal = true;
        return DecodedIndex::default();
    }
    let room = (t.index_length - 8) / MIN_INDEX_ENTRY_LEN;
    if count > room {
        report.violation(
            &HF_IDX_DECODE,
            base,
            format!(
                "index_entry_count {count} cannot fit in {} bytes (room for {room})",
                t.index_length
            ),
        );
    }
    let n = count.min(room) as usize;
    let names_len = index
        .len()
        .saturating_sub(8 + n * MIN_INDEX_ENTRY_LEN as usize);
    let per_entry = std::mem::size_of::<IndexEntryOf<NameSpan>>() + std::mem::size_of::<u64>();
    let table = (n as u64)
        .saturating_mul(per_entry as u64)
        .saturating_add(names_len as u64);
    if !input.charge(
        table,
        || format!("the table of {n} index entries"),
        base,
        report,
    ) {
        return DecodedIndex::default();
    }
    let mut out = DecodedIndex {
        entries: Vec::with_capacity(n),
        offsets: Vec::with_capacity(n),
        names: Vec::with_capacity(names_len),
        complete: true,
    };
    // Names in strictly ascending order are distinct: the set of names seen is
    // built only once the order breaks (an index written sorted never needs it).
    let mut seen: Option<HashSet<&[u8], foldhash::fast::RandomState>> = None;
    let controls = report.wants(&HF_TXT_CONTROL);
    // A pass that lets duplicate names go (a trusted open) keeps no set of them.
    let uniqueness = report.wants(&HF_IDX_NAME_UNIQUE);
    let mut pos = 8u64;
    let sorted = h.file_flags.sorted_index();
    let mut previous: Option<&[u8]> = None;
    for i in 0..n as u64 {
        let at = base + pos;
        let Some((mut e, used)) = IndexEntryOf::<NameSpan>::decode_span(&index[pos as usize..])
        else {
            report.violation(
                &HF_IDX_DECODE,
                at,
                format!("index entry {i} of {count} runs past index_length"),
            );
            out.complete = false;
            break;
        };
        let name_start = pos as usize + 2;
        let name = &index[name_start..name_start + usize::from(e.name.len)];
        if e.name.len > limits.max_name_length {
            report.limit(
                Limit::NameLength,
                at,
                format!(
                    "name length {} exceeds max_name_length {}",
                    e.name.len, limits.max_name_length
                ),
            );
        }
        report.check(!name.is_empty(), &HF_IDX_NAME_EMPTY, at, || {
            format!("index entry {i} has an empty name")
        });
        if controls {
            check_control_characters(name, "tensor name", at + 2, report);
        }
        // Order matters only to the set of names seen and the SORTED_INDEX check.
        let ascending = !(uniqueness || sorted) || previous.is_none_or(|prev| prev < name);
        if !ascending && seen.is_none() && uniqueness {
            let earlier = out.offsets.iter().zip(&out.entries).map(|(&at, e)| {
                let start = (at - base) as usize + 2;
                &index[start..start + usize::from(e.name.len)]
            });
            // A slot per name and its control byte, at the table's 7/8 load.
            let slots = (n as u64).saturating_mul(8) / 7 + 1;
            let size = (std::mem::size_of::<&[u8]>() + 1) as u64;
            if !input.charge(
                slots.saturating_mul(size),
                || format!("the set of {n} index names"),
                at,
                report,
            ) {
                out.complete = false;
                return out;
            }
            let mut set = HashSet::with_capacity_and_hasher(n, Default::default());
            set.extend(earlier);
            seen = Some(set);
        }
        let unique = seen.as_mut().is_none_or(|set| set.insert(name));
        report.check(unique, &HF_IDX_NAME_UNIQUE, at + 2, || {
            format!(
                "index name {:?} appears more than once",
                String::from_utf8_lossy(name)
            )
        });
        let after_name = at + 2 + u64::from(e.name.len);
        report.check(e.flags == 0, &HF_IDX_FLAGS, after_name + 28, || {
            format!("index entry {i} flags are {:#x}, expected 0", e.flags)
        });
        if let (true, Some(prev)) = (sorted, previous) {
            report.check(prev < name, &HF_IDX_SORTED, at + 2, || {
                format!(
                    "SORTED_INDEX is set but {:?} follows {:?}",
                    String::from_utf8_lossy(name),
                    String::from_utf8_lossy(prev)
                )
            });
        }
        previous = Some(name);
        e.name.offset = out.names.len() as u64;
        out.names.extend_from_slice(name);
        out.entries.push(e);
        out.offsets.push(at);
        pos += used;
        if report.stopped() {
            out.complete = false;
            return out;
        }
    }
    if out.complete && count <= room {
        report.check(
            pos == t.index_length || newer_minor(h),
            &HF_IDX_TRAILING,
            base + pos,
            || format!("{} bytes follow the last index entry", t.index_length - pos),
        );
    } else {
        out.complete = false;
    }
    out
}

/// What a key costs in the set of keys seen: a slot (a slice of the section) and
/// its control byte, at the table's load factor.
const KEY_SET_SLOT: u64 = 2 * std::mem::size_of::<&[u8]>() as u64;

/// Decodes and checks every KV entry; returns those that decoded.
fn check_kv(input: &Input<'_>, t: &Trailer, limits: &Limits, report: &mut Report) -> Vec<KvEntry> {
    let base = t.kv_offset;
    let mut entries = Vec::new();
    if u64::from(t.kv_length) > limits.max_kv_bytes {
        report.limit(
            Limit::KvBytes,
            base,
            format!(
                "kv_length {} exceeds max_kv_bytes {}",
                t.kv_length, limits.max_kv_bytes
            ),
        );
        return entries;
    }
    if !input.charge_read_to(t.kv_length.into(), || "the KV section".into(), base, report) {
        return entries;
    }
    let Some(kv) = input.bytes(base, t.kv_length.into()) else {
        return entries;
    };
    // One copy of the section (none when it was read, not borrowed), which the
    // arrays decoded from it share.
    let section = std::sync::Arc::new(kv.into_owned());
    let kv = &section[..];
    let Some(count) = kv
        .get(..4)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap_or_default()))
    else {
        report.violation(
            &HF_KV_DECODE,
            base,
            "kv_length is too short for kv_count".to_string(),
        );
        return entries;
    };
    if count > limits.max_kv_entries {
        report.limit(
            Limit::KvEntries,
            base,
            format!(
                "kv_count {count} exceeds max_kv_entries {}",
                limits.max_kv_entries
            ),
        );
        return entries;
    }
    let room = (kv.len() as u64 - 4) / MIN_KV_ENTRY_LEN;
    let controls = report.wants(&HF_TXT_CONTROL);
    let mut keys: HashSet<&[u8]> = HashSet::new();
    let mut pos = 4usize;
    for i in 0..u64::from(count) {
        let at = base + pos as u64;
        if i >= room {
            report.violation(
                &HF_KV_DECODE,
                at,
                format!("kv_count {count} entries cannot fit in kv_length"),
            );
            return entries;
        }
        let Some((e, used)) = KvEntry::decode_shared(&section, pos) else {
            report_kv_decode_failure(&kv[pos..], at, i, report);
            return entries;
        };
        // The entry's own bytes, and its slot in the set of keys seen.
        let held = e.held_bytes() + KEY_SET_SLOT;
        let what = || format!("KV entry {i} ({} bytes of key and value)", used);
        let grown = input.budget().grow(
            &mut entries,
            1,
            || format!("the list of KV entries (entry {i})"),
            at,
        );
        if let Err(v) = grown {
            report.record(v);
            report.fatal = true;
            return entries;
        }
        if !input.charge(held, what, at, report) {
            return entries;
        }
        let key = &e.key[..];
        if key.len() > usize::from(limits.max_name_length) {
            report.limit(
                Limit::NameLength,
                at,
                format!(
                    "KV key length {} exceeds max_name_length {}",
                    key.len(),
                    limits.max_name_length
                ),
            );
        }
        report.check(!key.is_empty(), &HF_KV_KEY_EMPTY, at, || {
            format!("KV entry {i} has an empty key")
        });
        report.check(
            std::str::from_utf8(key).is_ok(),
            &HF_KV_KEY_UTF8,
            at + 2,
            || format!("KV key {key:02x?} is not valid UTF-8"),
        );
        if controls {
            check_control_characters(key, "KV key", at + 2, report);
        }
        if !keys.insert(&kv[pos + 2..pos + 2 + key.len()]) {
            report.violation(
                &HF_KV_KEY_UNIQUE,
                at + 2,
                format!(
                    "KV key {:?} appears more than once",
                    String::from_utf8_lossy(key)
                ),
            );
        }
        check_kv_value(&e.value, at + 2 + key.len() as u64, report);
        entries.push(e);
        pos += used as usize;
        if report.stopped() {
            return entries;
        }
    }
    report.check(pos == kv.len(), &HF_KV_TRAILING, base + pos as u64, || {
        format!("{} bytes follow the last KV entry", kv.len() - pos)
    });
    entries
}

/// `HF-TXT-001`: a name or key (at `at`) holding a control character, which a
/// terminal would act on when the name is printed (ESC starts a sequence that can
/// clear the screen or recolour it, CR overwrites the line). Names that are not
/// UTF-8 are left to their own rule.
fn check_control_characters(text: &[u8], what: &str, at: u64, report: &mut Report) {
    let Ok(text) = std::str::from_utf8(text) else {
        return;
    };
    if let Some((i, c)) = text.char_indices().find(|(_, c)| c.is_control()) {
        report.violation(
            &HF_TXT_CONTROL,
            at + i as u64,
            format!("{what} {text:?} holds the control character {c:?} at byte {i}"),
        );
    }
}

/// The checks of a decoded KV `value` whose tag is at absolute offset `at`.
fn check_kv_value(value: &KvValue, at: u64, report: &mut Report) {
    match value {
        KvValue::Bool(b) => {
            report.check(*b <= 1, &HF_KV_BOOL, at + 1, || {
                format!("bool value is {b:#04x}, expected 0 or 1")
            });
        }
        KvValue::String(s) => {
            report.check(
                std::str::from_utf8(&s.bytes).is_ok(),
                &HF_KV_STRING_UTF8,
                at + 5,
                || "string value is not valid UTF-8".into(),
            );
        }
        KvValue::Array(a) => {
            // Decoding fails on a bad tag when elements follow; an empty array decodes
            // whatever its tag, so the tag is judged here too.
            report.check(
                (0x01..=0x06).contains(&a.element_tag),
                &HF_KV_ARRAY_TAG,
                at + 1,
                || {
                    format!(
                        "array element tag {:#04x} is not 0x01-0x06 (the array holds {} elements)",
                        a.element_tag,
                        a.len()
                    )
                },
            );
            // Elements follow the tag, element tag and count.
            let mut pos = at + 6;
            for (i, element) in a.iter().enumerate() {
                match element {
                    KvElement::Bool(b) => {
                        report.check(b <= 1, &HF_KV_BOOL, pos, || {
                            format!("array element {i} bool is {b:#04x}, expected 0 or 1")
                        });
                    }
                    KvElement::String(s) => {
                        report.check(
                            std::str::from_utf8(s).is_ok(),
                            &HF_KV_STRING_UTF8,
                            pos + 4,
                            || format!("array element {i} string is not valid UTF-8"),
                        );
                    }
                    _ => {}
                }
                pos += element.encoded_len();
            }
        }
        _ => {}
    }
}

/// Names the reason a KV entry failed to decode: a reserved or private tag, a bad
/// array element tag, or plain truncation.
fn report_kv_decode_failure(entry: &[u8], at: u64, i: u64, report: &mut Report) {
    let key_len = entry
        .get(..2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize)
        .unwrap_or(0);
    let tag_pos = 2 + key_len;
    match entry.get(tag_pos) {
        Some(&tag) if tag == 0x00 || (0x08..=0xEF).contains(&tag) || tag == 0xFF => report
            .violation(
                &HF_KV_TAG_RESERVED,
                at + tag_pos as u64,
                format!("KV entry {i} value tag {tag:#04x} is reserved"),
            ),
        Some(&tag) if (0xF0..=0xFE).contains(&tag) => report.violation(
            &HF_KV_TAG_PRIVATE,
            at + tag_pos as u64,
            format!(
                "KV entry {i} uses private value tag {tag:#04x}, which this reader cannot decode"
            ),
        ),
        Some(0x07)
            if entry
                .get(tag_pos + 1)
                .is_some_and(|t| !(0x01..=0x06).contains(t)) =>
        {
            report.violation(
                &HF_KV_ARRAY_TAG,
                at + tag_pos as u64 + 1,
                format!(
                    "KV entry {i} array element tag {:#04x} is not 0x01-0x06",
                    entry[tag_pos + 1]
                ),
            )
        }
        _ => report.violation(
            &HF_KV_DECODE,
            at,
            format!("KV entry {i} runs past kv_length"),
        ),
    }
}

//! Structure-aware mutation of a file: where its fields lie ([`sites`],
//! [`data_sites`]), what new value a field gets ([`ValueChange`]), and the concrete
//! edits a case is made of ([`Mutation`]), applied in order by [`apply`]. The fuzz
//! target `mutate` (through the test-support crate) and `hrry conformance explore`
//! both draw their mutations from here.

use crate::file::HrryFile;
use crate::schema::container::FILE_HEADER_LEN;
use crate::schema::TRAILER_LEN;

/// Where a field of a file lies: its offset and width in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Site {
    /// Absolute offset.
    pub at: usize,
    /// Width in bytes: 1, 2, 4 or 8.
    pub width: usize,
}

/// The fields of a HRRYFILE: header, trailer, index entries, KV count, every
/// descriptor's fixed fields and shape, and a few places inside descriptors, data
/// and padding. Sites past the end of `bytes` are left out; a file that does not
/// open gives the header and trailer sites only.
pub fn sites(bytes: &[u8]) -> Vec<Site> {
    let mut s = Vec::new();
    let mut put = |at: usize, width: usize| {
        if at + width <= bytes.len() {
            s.push(Site { at, width });
        }
    };
    // Header: version, reserved, flags, alignment, first descriptor, count hint,
    // reserved tail.
    for (at, width) in [
        (8, 1),
        (9, 1),
        (10, 2),
        (12, 4),
        (16, 4),
        (20, 8),
        (28, 8),
        (36, 8),
    ] {
        put(at, width);
    }
    let Some(trailer) = bytes.len().checked_sub(TRAILER_LEN as usize) else {
        return s;
    };
    for (at, width) in [(0, 8), (8, 8), (16, 8), (24, 4), (28, 4), (32, 4), (36, 4)] {
        put(trailer + at, width);
    }
    let Ok(file) = HrryFile::from_bytes(bytes) else {
        return s;
    };
    let t = file.trailer();
    let index = t.index_offset as usize;
    put(index, 8);
    let mut at = index + 8;
    for e in file.entries() {
        let e = e.index_entry();
        let name = usize::from(e.name.len);
        put(at, 2);
        put(at + 2, 1);
        for (rel, width) in [(0, 8), (8, 4), (12, 8), (20, 8), (28, 4)] {
            put(at + 2 + name + rel, width);
        }
        at += 34 + name;
        let d = e.descriptor_offset as usize;
        for (rel, width) in [
            (0, 4),
            (4, 1),
            (5, 1),
            (6, 4),
            (10, 4),
            (14, 1),
            (15, 1),
            (16, 4),
        ] {
            put(d + rel, width);
        }
        let len = e.descriptor_length as usize;
        // The shape, byte_offset and whatever follows (layout fields, buffer
        // table, optional sections), at every 4-byte step and as bytes.
        for rel in (20..len).step_by(4) {
            put(d + rel, if rel + 8 <= len { 8 } else { 4 });
            put(d + rel, 1);
        }
        // The first bytes of the data and the last one.
        let data = e.data_offset as usize;
        if e.data_length > 0 {
            put(data, 1);
            put(data, 8);
            put(data + e.data_length as usize - 1, 1);
        }
    }
    if t.kv_length > 0 {
        put(t.kv_offset as usize, 4);
        put(t.kv_offset as usize + 4, 2);
    }
    s
}

/// A part of a HRRYFILE: its kind (`header`, `trailer`, `index`, `descriptor`,
/// `data`, `kv`), which one of its kind (in index order), and where it lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    /// The kind of part.
    pub kind: &'static str,
    /// Which one of its kind (tensor number for descriptors and data).
    pub ordinal: usize,
    /// Absolute offset.
    pub start: usize,
    /// Length in bytes.
    pub len: usize,
}

/// The parts of a HRRYFILE that opens: header, trailer, index, each tensor's
/// descriptor and data, the KV section (empty when it does not open).
pub fn regions(bytes: &[u8]) -> Vec<Region> {
    let Ok(file) = HrryFile::from_bytes(bytes) else {
        return Vec::new();
    };
    let region = |kind, ordinal, start: u64, len: u64| Region {
        kind,
        ordinal,
        start: start as usize,
        len: len as usize,
    };
    let t = file.trailer();
    let mut r = vec![
        region("header", 0, 0, FILE_HEADER_LEN),
        region("trailer", 0, bytes.len() as u64 - TRAILER_LEN, TRAILER_LEN),
        region("index", 0, t.index_offset, t.index_length),
        region("kv", 0, t.kv_offset, u64::from(t.kv_length)),
    ];
    for (k, e) in file.entries().enumerate() {
        let e = e.index_entry();
        r.push(region(
            "descriptor",
            k,
            e.descriptor_offset,
            u64::from(e.descriptor_length),
        ));
        r.push(region("data", k, e.data_offset, e.data_length));
    }
    r
}

/// Where `at` (and `width` bytes after it) falls among `from`'s regions, moved to
/// the same place of the region of the same kind and ordinal in `to` (the last
/// one of that kind when `to` has fewer); `None` when there is no such place.
pub fn move_offset(from: &[Region], to: &[Region], at: usize, width: usize) -> Option<usize> {
    let r = from
        .iter()
        .filter(|r| r.start <= at && at < r.start + r.len)
        .min_by_key(|r| r.len)?;
    let rel = at - r.start;
    let target = to
        .iter()
        .filter(|t| t.kind == r.kind && t.ordinal <= r.ordinal)
        .max_by_key(|t| t.ordinal)?;
    (rel + width <= target.len).then_some(target.start + rel)
}

/// The names of a HRRYFILE's tensors in index order (the ordinals of its
/// descriptor and data [`regions`]); empty when it does not open.
pub fn tensor_names(bytes: &[u8]) -> Vec<String> {
    HrryFile::from_bytes(bytes)
        .map(|f| f.entries().map(|e| e.name().to_string()).collect())
        .unwrap_or_default()
}

/// `edits` of the HRRYFILE `from` moved onto the HRRYFILE `to`, written from the
/// same model with something left out or changed (as structural shrinking does):
/// each edit goes to the same place of the same part, a tensor's descriptor and
/// data found by the tensor's name; edits whose part `to` lacks, or that no longer
/// fit in it, are dropped.
pub fn move_edits(from: &[u8], to: &[u8], edits: &[Mutation]) -> Vec<Mutation> {
    let (from_parts, to_parts) = (regions(from), regions(to));
    let (from_names, to_names) = (tensor_names(from), tensor_names(to));
    let moved = |at: usize, width: usize| -> Option<usize> {
        let r = from_parts
            .iter()
            .filter(|r| r.start <= at && at + width <= r.start + r.len)
            .min_by_key(|r| r.len)?;
        let ordinal = if matches!(r.kind, "descriptor" | "data") {
            let name = from_names.get(r.ordinal)?;
            to_names.iter().position(|n| n == name)?
        } else {
            r.ordinal
        };
        let t = to_parts
            .iter()
            .find(|t| t.kind == r.kind && t.ordinal == ordinal)?;
        let rel = at - r.start;
        (rel + width <= t.len).then_some(t.start + rel)
    };
    edits
        .iter()
        .filter_map(|m| match m {
            Mutation::Write { at, bytes, what } => Some(Mutation::Write {
                at: moved(*at, bytes.len())?,
                bytes: bytes.clone(),
                what,
            }),
            Mutation::Truncate { len } => Some(Mutation::Truncate {
                len: if *len >= from.len() {
                    to.len()
                } else {
                    moved(*len, 0)?
                },
            }),
            Mutation::ResealIndex => Some(Mutation::ResealIndex),
        })
        .collect()
}

/// Places inside every buffer of every tensor a HRRYFILE holds (its first bytes,
/// its middle, its last bytes) and the padding byte after it: the sparse indices,
/// quantization scales and zero points, codes and padding the data rules and the
/// exports read; and every third byte of the first entries of the KV section (key
/// lengths, tags, lengths and values).
pub fn data_sites(bytes: &[u8]) -> Vec<Site> {
    let Ok(file) = HrryFile::from_bytes(bytes) else {
        return Vec::new();
    };
    let base = bytes.as_ptr() as usize;
    let mut s = Vec::new();
    for e in file.entries() {
        let Ok(t) = file.tensor_at(e) else { continue };
        for b in &t.buffers {
            let len = b.len();
            let Some(at) = (b.as_ptr() as usize)
                .checked_sub(base)
                .filter(|at| at + len <= bytes.len())
            else {
                continue; // Not a view of `bytes`.
            };
            for (rel, width) in [
                (0, 1),
                (0, 4),
                (0, 8),
                (len / 2, 1),
                ((len / 2) & !3, 4),
                (len.saturating_sub(1), 1),
                (len.saturating_sub(4), 4),
                (len, 1),
            ] {
                if rel + width <= len || rel == len && at + len < bytes.len() {
                    s.push(Site {
                        at: at + rel,
                        width,
                    });
                }
            }
        }
    }
    let t = file.trailer();
    let (kv, kv_len) = (t.kv_offset as usize, t.kv_length as usize);
    for rel in (4..kv_len.min(4 + 3 * 64)).step_by(3) {
        if kv + rel < bytes.len() {
            s.push(Site {
                at: kv + rel,
                width: 1,
            });
        }
    }
    s
}

/// A new value for a field of `width` bytes holding `old`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueChange {
    /// One bit flipped (taken modulo the field's width).
    FlipBit(u32),
    /// A small step up.
    Add(u64),
    /// A small step down.
    Sub(u64),
    /// A boundary value: 0, 1, the maximum, the maximum less one, the largest and
    /// the smallest signed value (index modulo 6).
    Boundary(usize),
    /// The file's length, minus 32, plus this (an offset near the end).
    NearEnd(u64),
    /// The old value doubled.
    Double,
    /// This value.
    Set(u64),
}

impl ValueChange {
    /// The number of kinds of change; [`ValueChange::of_kind`] takes a kind below it.
    pub const KINDS: u32 = 7;

    /// A change of kind `kind` (0 to [`ValueChange::KINDS`] - 1) with parameter
    /// `param` (a bit number, a step, a boundary index, a distance or a value).
    pub fn of_kind(kind: u32, param: u64) -> ValueChange {
        match kind % Self::KINDS {
            0 => ValueChange::FlipBit(param as u32),
            1 => ValueChange::Add(1 + param % 16),
            2 => ValueChange::Sub(1 + param % 16),
            3 => ValueChange::Boundary(param as usize),
            4 => ValueChange::NearEnd(param % 65),
            5 => ValueChange::Double,
            _ => ValueChange::Set(param),
        }
    }

    /// The new value of a field of `width` bytes (1 to 8) holding `old`, in a file
    /// of `file_len` bytes.
    pub fn apply(self, old: u64, width: usize, file_len: u64) -> u64 {
        let bits = 8 * width.clamp(1, 8) as u32;
        let max = if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let v = match self {
            ValueChange::FlipBit(b) => old ^ (1 << (b % bits)),
            ValueChange::Add(n) => old.wrapping_add(n),
            ValueChange::Sub(n) => old.wrapping_sub(n),
            ValueChange::Boundary(i) => [0, 1, max, max - 1, max >> 1, (max >> 1) + 1][i % 6],
            ValueChange::NearEnd(n) => file_len.wrapping_add(n).wrapping_sub(32),
            ValueChange::Double => old.wrapping_mul(2),
            ValueChange::Set(v) => v,
        };
        v & max
    }
}

/// Reads the little-endian field at `site` of `bytes` (zero when out of range).
pub fn read_field(bytes: &[u8], site: Site) -> u64 {
    let mut le = [0u8; 8];
    if let Some(field) = bytes.get(site.at..site.at.saturating_add(site.width)) {
        le[..field.len().min(8)].copy_from_slice(&field[..field.len().min(8)]);
    }
    u64::from_le_bytes(le)
}

/// Writes `value` little-endian into the field at `site` of `bytes` (nothing when
/// out of range).
pub fn write_field(bytes: &mut [u8], site: Site, value: u64) {
    let width = site.width.min(8);
    if let Some(field) = bytes.get_mut(site.at..site.at.saturating_add(width)) {
        field.copy_from_slice(&value.to_le_bytes()[..width]);
    }
}

/// Recomputes a HRRYFILE trailer's `index_crc32c` over the index the trailer
/// points at, when that index lies inside the file.
pub fn reseal_index(bytes: &mut [u8]) {
    let Some(trailer) = bytes.len().checked_sub(TRAILER_LEN as usize) else {
        return;
    };
    let word = |at: usize| read_field(bytes, Site { at, width: 8 });
    let (offset, len) = (word(trailer), word(trailer + 8));
    let Some(end) = offset.checked_add(len).filter(|&e| e <= trailer as u64) else {
        return;
    };
    let crc = crc32c::crc32c(&bytes[offset as usize..end as usize]);
    bytes[trailer + 28..trailer + 32].copy_from_slice(&crc.to_le_bytes());
}

/// One concrete edit of a file. Edits are applied in order; one that no longer
/// fits the file (after a cut) is skipped, so that any sub-list of a case's
/// mutations can be applied, as shrinking does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mutation {
    /// `bytes` written at `at`: a field's new value, changed data bytes, or bytes
    /// spliced in from another file.
    Write {
        /// Absolute offset.
        at: usize,
        /// The bytes written.
        bytes: Vec<u8>,
        /// What was changed, e.g. `field`, `data`, `splice`.
        what: &'static str,
    },
    /// The file cut to `len` bytes.
    Truncate {
        /// The length kept.
        len: usize,
    },
    /// The index CRC-32C recomputed (HRRYFILE).
    ResealIndex,
}

impl Mutation {
    /// The edit as JSON-friendly text, e.g. `field@0x1c=0a000000`.
    pub fn describe(&self) -> String {
        match self {
            Mutation::Write { at, bytes, what } => {
                let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
                format!("{what}@{at:#x}={hex}")
            }
            Mutation::Truncate { len } => format!("truncate@{len:#x}"),
            Mutation::ResealIndex => "reseal-index-crc".into(),
        }
    }
}

/// `base` with `mutations` applied in order.
pub fn apply(base: &[u8], mutations: &[Mutation]) -> Vec<u8> {
    let mut out = base.to_vec();
    for m in mutations {
        match m {
            Mutation::Write { at, bytes, .. } => {
                if let Some(field) = at
                    .checked_add(bytes.len())
                    .and_then(|end| out.get_mut(*at..end))
                {
                    field.copy_from_slice(bytes);
                }
            }
            Mutation::Truncate { len } => out.truncate(*len),
            Mutation::ResealIndex => reseal_index(&mut out),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_changes_stay_within_the_field() {
        for kind in 0..ValueChange::KINDS {
            for width in [1, 2, 4, 8] {
                let v = ValueChange::of_kind(kind, u64::MAX).apply(0xAB, width, 1000);
                assert!(width == 8 || v < 1 << (8 * width), "{kind} {width} {v}");
            }
        }
        assert_eq!(ValueChange::FlipBit(9).apply(0, 1, 0), 2);
        assert_eq!(ValueChange::Boundary(2).apply(0, 2, 0), 0xFFFF);
    }

    #[test]
    fn edits_that_no_longer_fit_are_skipped() {
        let base = [1u8, 2, 3, 4];
        let edits = [
            Mutation::Truncate { len: 2 },
            Mutation::Write {
                at: 1,
                bytes: vec![9, 9],
                what: "field",
            },
            Mutation::Write {
                at: 0,
                bytes: vec![7],
                what: "data",
            },
        ];
        assert_eq!(apply(&base, &edits), vec![7, 2]);
        assert_eq!(apply(&base, &edits[1..]), vec![7, 9, 9, 4]);
    }
}

//! The validators' view of their input: a [`ReadAt`] source read in bounded pieces.
//!
//! [`Input`] reads the regions the rules need (header, trailer, index, KV,
//! descriptors, padding) and borrows them when the source is a slice in memory.
//! [`Window`] gives the scattered or sequential access of the checks that look at a
//! buffer's bytes (packing tails, padding elements, parameter arrays) through a
//! small cache, so no buffer is read whole unless a rule needs all of it.
//!
//! A read that fails is remembered (the first error is kept) and looks like missing
//! bytes to the checks; the validator then returns that error instead of a report.

use std::borrow::Cow;
use std::cell::RefCell;
use std::io;

use crate::layout::bits::read_bits;
use crate::layout::dense::{nonzero_tail_in_window, tail_of_run_window, UnusedTail};
use crate::schema::BufferHandle;
use crate::source::ReadAt;

use super::budget::Budget;
use crate::validate::{Depth, Judging, Report, Rule};

/// Smallest read a [`Window`] makes on a miss (a page: a scattered probe costs the
/// same I/O either way).
const MIN_WINDOW: usize = 4 << 10;
/// Largest read a [`Window`] makes: sequential scans grow their reads to this.
const MAX_WINDOW: usize = 1 << 20;
/// Chunk size of streamed scans (zero padding, checksums, hashes).
pub(crate) const CHUNK: u64 = 1 << 20;

/// The report for bytes in memory that could not be read (never happens: reads
/// inside a slice do not fail), so that the slice entry points need no `Result`.
pub(crate) fn unread(judging: Judging, e: &io::Error) -> Report {
    let mut report = Report::new(judging);
    report.note(format!("the input could not be read: {e}"));
    report.fatal = true;
    report
}

/// Offsets whose bytes are touched together ([`touch_first_bytes`]): enough misses
/// in flight to cover the memory latency, few enough to stay in the L1 cache and TLB.
pub(crate) const TOUCH_BATCH: usize = 16;

/// Index of the first non-zero byte of `bytes`. Whole 64-byte blocks are tested
/// as eight OR-ed words (which compilers vectorise); only the first block that is
/// not all zero, and the tail, are scanned byte by byte. Padding and reserved
/// ranges are mostly zero, so this is the common case of every zero check.
pub(crate) fn first_nonzero_byte(bytes: &[u8]) -> Option<usize> {
    const BLOCK: usize = 64;
    let mut start = 0;
    for block in bytes.chunks_exact(BLOCK) {
        let any = block.chunks_exact(8).fold(0u64, |acc, w| {
            acc | u64::from_ne_bytes(w.try_into().expect("8 bytes"))
        });
        if any != 0 {
            break;
        }
        start += BLOCK;
    }
    bytes[start..]
        .iter()
        .position(|&b| b != 0)
        .map(|i| start + i)
}

/// Reads the byte of `bytes` at each of `offsets` (those inside it), so that the
/// cache and TLB misses of bytes scattered over a large mapping are taken together.
pub(crate) fn touch_first_bytes(bytes: &[u8], offsets: impl IntoIterator<Item = u64>) {
    let first_bytes = offsets.into_iter().map(|at| {
        usize::try_from(at)
            .ok()
            .and_then(|at| bytes.get(at))
            .copied()
    });
    std::hint::black_box(first_bytes.fold(0u8, |acc, b| acc ^ b.unwrap_or(0)));
}

/// A source being validated, with the first read error seen.
pub(crate) struct Input<'a> {
    source: &'a dyn ReadAt,
    /// The whole source, when it is in memory.
    slice: Option<&'a [u8]>,
    len: u64,
    error: RefCell<Option<io::Error>>,
    /// One block read ahead (sources not in memory), served to later small reads.
    block: RefCell<Option<(u64, Vec<u8>)>>,
    /// The operation's memory budget, grown by every byte read here.
    budget: Budget,
}

impl<'a> Input<'a> {
    /// The input over `source`, with a budget of the default cap.
    #[cfg(test)]
    pub fn new(source: &'a dyn ReadAt) -> Self {
        Self::with_budget(source, crate::limits::DEFAULT_MAX_MEMORY)
    }

    /// The input over `source`, its operation's budget capped at `max_memory`.
    pub fn with_budget(source: &'a dyn ReadAt, max_memory: u64) -> Self {
        Input {
            source,
            slice: source.as_bytes(),
            len: source.len(),
            error: RefCell::new(None),
            block: RefCell::new(None),
            budget: Budget::new(max_memory),
        }
    }

    /// The operation's memory budget.
    pub fn budget(&self) -> &Budget {
        &self.budget
    }

    /// Charges `bytes` about to be read whole and held ([`Budget::charge_read`]);
    /// when they do not fit, records the violation, stops the pass there and
    /// returns false.
    pub fn charge_read_to(
        &self,
        bytes: u64,
        what: impl FnOnce() -> String,
        at: u64,
        report: &mut Report,
    ) -> bool {
        stops_on_refusal(self.budget.charge_read(bytes, what, at), report)
    }

    /// Charges `bytes` for `what` at `at` to the budget; when they do not fit,
    /// records the violation in `report`, stops the pass there and returns false.
    pub fn charge(
        &self,
        bytes: u64,
        what: impl FnOnce() -> String,
        at: u64,
        report: &mut Report,
    ) -> bool {
        stops_on_refusal(self.budget.charge(bytes, what, at), report)
    }

    /// Length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// The source itself.
    pub fn source(&self) -> &'a dyn ReadAt {
        self.source
    }

    /// Remembers `e` when it is the first error.
    pub fn fail(&self, e: io::Error) {
        let mut slot = self.error.borrow_mut();
        if slot.is_none() {
            *slot = Some(e);
        }
    }

    /// The first read error, if any read failed.
    pub fn into_error(self) -> Option<io::Error> {
        self.error.into_inner()
    }

    /// Bytes `offset..offset + n`; `None` when the range is not inside the input or
    /// the read failed. Borrowed from a slice source, read otherwise.
    pub fn bytes(&self, offset: u64, n: u64) -> Option<Cow<'a, [u8]>> {
        let end = offset.checked_add(n).filter(|&e| e <= self.len)?;
        if let Some(s) = self.slice {
            self.budget.read(n);
            return s.get(offset as usize..end as usize).map(Cow::Borrowed);
        }
        if self.error.borrow().is_some() {
            return None;
        }
        if let Some((at, block)) = &*self.block.borrow() {
            if offset >= *at && end <= at + block.len() as u64 {
                let from = (offset - at) as usize;
                return Some(Cow::Owned(block[from..from + n as usize].to_vec()));
            }
        }
        let mut buf = vec![0u8; usize::try_from(n).ok()?];
        self.budget.read(n);
        match self.source.read_at(offset, &mut buf) {
            Ok(()) => Some(Cow::Owned(buf)),
            Err(e) => {
                self.fail(e);
                None
            }
        }
    }

    /// Up to `n` bytes from `offset`, fewer where the input ends first (none from
    /// past the end or after a failed read).
    pub fn bytes_clamped(&self, offset: u64, n: u64) -> Cow<'a, [u8]> {
        let n = n.min(self.len.saturating_sub(offset));
        self.bytes(offset, n).unwrap_or_default()
    }

    /// Reads the first byte at each of `offsets` when the input is in memory (a
    /// mapping), so that the cache and TLB misses of bytes scattered over a large
    /// file are taken together instead of one after the other. Does nothing for
    /// other sources (they are told with [`ReadAt::prefetch`]).
    pub fn touch(&self, offsets: &[u64]) {
        if let Some(s) = self.slice {
            touch_first_bytes(s, offsets.iter().copied());
        }
    }

    /// Reads `offset..offset + n` (clamped to the input) ahead, so that the small
    /// reads that follow inside it cost no further I/O. Only for bytes the caller
    /// is sure are metadata or padding.
    pub fn prefetch(&self, offset: u64, n: u64) {
        if self.slice.is_some() {
            return;
        }
        let n = n.min(self.len.saturating_sub(offset));
        self.block.replace(None);
        if let Some(Cow::Owned(block)) = self.bytes(offset, n) {
            self.block.replace(Some((offset, block)));
        }
    }

    /// Calls `f` with consecutive pieces of `from..to` (clamped to the input), each
    /// at most [`CHUNK`] bytes, with the offset of its first byte; stops when `f`
    /// returns `false` or a read fails.
    pub fn chunks(&self, from: u64, to: u64, mut f: impl FnMut(u64, &[u8]) -> bool) {
        let to = to.min(self.len);
        let mut at = from;
        while at < to {
            let n = (to - at).min(CHUNK);
            let Some(piece) = self.bytes(at, n) else {
                return;
            };
            if !f(at, &piece) {
                return;
            }
            at += n;
        }
    }

    /// The first non-zero byte in `from..to` (clamped to the input), with its offset.
    pub fn first_nonzero(&self, from: u64, to: u64) -> Option<(u64, u8)> {
        let mut found = None;
        self.chunks(from, to, |at, piece| {
            found = first_nonzero_byte(piece).map(|i| (at + i as u64, piece[i]));
            found.is_none()
        });
        found
    }

    /// CRC-32C of `from..from + n` (inside the input).
    pub fn crc32c(&self, from: u64, n: u64) -> u32 {
        let mut crc = 0;
        self.chunks(from, from.saturating_add(n), |_, piece| {
            crc = crc32c::crc32c_append(crc, piece);
            true
        });
        crc
    }

    /// BLAKE3 of `from..from + n` (inside the input): at once for a slice (all of
    /// blake3's SIMD lanes), else streamed in chunks.
    pub fn blake3(&self, from: u64, n: u64) -> blake3::Hash {
        if let Some(s) = self.slice {
            let range = from as usize..from.saturating_add(n) as usize;
            return blake3::hash(s.get(range).unwrap_or_default());
        }
        let mut hasher = blake3::Hasher::new();
        self.chunks(from, from.saturating_add(n), |_, piece| {
            hasher.update(piece);
            true
        });
        hasher.finalize()
    }

    /// A window over `start..start + len` of the input (clamped to it).
    pub fn window(&self, start: u64, len: u64) -> Window<'_> {
        let start = start.min(self.len);
        let len = len.min(self.len - start);
        match self.slice {
            Some(s) => Window::over_slice(&s[start as usize..(start + len) as usize]),
            None => Window {
                input: Some(self),
                slice: None,
                start,
                len,
                cache: Vec::new(),
                cache_at: 0,
                next_read: MIN_WINDOW,
            },
        }
    }
}

/// Random access to one region (a buffer, a section payload) through a small cache:
/// a miss reads at least [`MIN_WINDOW`] bytes, and reads that continue where the
/// last one ended double in size up to [`MAX_WINDOW`], so sequential scans make few
/// large reads and scattered probes few small ones.
pub(crate) struct Window<'a> {
    input: Option<&'a Input<'a>>,
    /// The region itself, when it is in memory.
    slice: Option<&'a [u8]>,
    /// Absolute offset of the region in the input.
    start: u64,
    len: u64,
    cache: Vec<u8>,
    /// Region offset of the cache's first byte.
    cache_at: u64,
    /// Size of the next read on a miss.
    next_read: usize,
}

impl<'a> Window<'a> {
    /// A window over bytes in memory.
    pub fn over_slice(bytes: &'a [u8]) -> Self {
        Window {
            input: None,
            slice: Some(bytes),
            start: 0,
            len: bytes.len() as u64,
            cache: Vec::new(),
            cache_at: 0,
            next_read: MIN_WINDOW,
        }
    }

    /// Length of the region.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Bytes `at..at + n` of the region, fewer where it ends first (none past its
    /// end or after a failed read).
    pub fn get(&mut self, at: u64, n: usize) -> &[u8] {
        let end = at.saturating_add(n as u64).min(self.len);
        if at >= end {
            return &[];
        }
        if let Some(s) = self.slice {
            return &s[at as usize..end as usize];
        }
        let cached_end = self.cache_at + self.cache.len() as u64;
        if at < self.cache_at || end > cached_end {
            let Some(input) = self.input else {
                return &[];
            };
            // Continuing a scan: read more at a time; jumping: start small again.
            self.next_read = if at >= cached_end && at < cached_end + self.next_read as u64 {
                (self.next_read * 2).min(MAX_WINDOW)
            } else {
                MIN_WINDOW
            };
            let want = (self.next_read.max(n) as u64).min(self.len - at);
            match input.bytes(self.start + at, want) {
                Some(bytes) => {
                    self.cache = bytes.into_owned();
                    self.cache_at = at;
                }
                None => {
                    self.cache.clear();
                    return &[];
                }
            }
        }
        let from = (at - self.cache_at) as usize;
        &self.cache[from..from + (end - at) as usize]
    }

    /// The bytes holding the `width` bits from bit `bit` of the region, with the
    /// position of that bit in the first of them; `None` unless all are inside.
    pub fn span(&mut self, bit: u64, width: u32) -> Option<(&[u8], u64)> {
        let shift = bit % 8;
        let n = usize::try_from((shift + u64::from(width)).div_ceil(8)).ok()?;
        let bytes = self.get(bit / 8, n);
        (bytes.len() == n).then_some((bytes, shift))
    }

    /// The `width`-bit element at bit `bit` of the region ([`read_bits`]'s rules:
    /// `None` when any of its bits lies outside).
    pub fn bits(&mut self, bit: u64, width: u32) -> Option<u128> {
        let (bytes, shift) = self.span(bit, width)?;
        read_bits(bytes, shift, width)
    }

    /// [`crate::layout::dense::nonzero_tail_of_run`] of `count` `width`-bit elements
    /// packed from byte `start` of the region, reading only the bytes it looks at.
    pub fn packing_tail(&mut self, count: u64, width: u32, start: u64) -> Option<UnusedTail> {
        let (first, n) = tail_of_run_window(count, width, start)?;
        let n = usize::try_from(n).ok()?;
        nonzero_tail_in_window(self.get(first, n), count, width, start)
    }

    /// Byte `at`, when inside the region.
    pub fn byte(&mut self, at: u64) -> Option<u8> {
        self.get(at, 1).first().copied()
    }

    /// The index of the first of the items `0..n` of `size` bytes laid end to end
    /// from `from` for which `bad` holds, looking only at items wholly inside the
    /// region, read in pieces of many items.
    pub fn find_item(
        &mut self,
        from: u64,
        size: usize,
        n: u64,
        mut bad: impl FnMut(&[u8]) -> bool,
    ) -> Option<u64> {
        if size == 0 {
            return None;
        }
        let per_piece = (MAX_WINDOW / size).max(1) as u64;
        let mut i = 0u64;
        while i < n {
            let at = from.checked_add(i.checked_mul(size as u64)?)?;
            let want = (n - i).min(per_piece) as usize * size;
            let piece = self.get(at, want);
            let whole = piece.len() / size;
            if let Some(k) = piece.chunks_exact(size).position(&mut bad) {
                return Some(i + k as u64);
            }
            if whole * size < want {
                return None;
            }
            i += whole as u64;
        }
        None
    }

    /// The first byte in `from..to` (clamped to the region) for which `pred` holds,
    /// scanning in pieces.
    pub fn position(&mut self, from: u64, to: u64, pred: impl Fn(u8) -> bool) -> Option<u64> {
        let to = to.min(self.len);
        let mut at = from;
        while at < to {
            let n = (to - at).min(MAX_WINDOW as u64) as usize;
            let piece = self.get(at, n);
            if piece.is_empty() {
                return None;
            }
            if let Some(i) = piece.iter().position(|&b| pred(b)) {
                return Some(at + i as u64);
            }
            at += piece.len() as u64;
        }
        None
    }
}

/// Consent to read the contents of padding and of a tensor's data buffer (buffer
/// 0, which holds its elements): what the rules of [`Reads::Data`](crate::validate::Reads::Data)
/// are decided from. Only a report judging to [`Depth::Data`] gives one, and every
/// function that reads those bytes takes one ([`Buffers::data`],
/// `container::check_zero`), so that a pass to a lesser depth cannot read them.
#[derive(Clone, Copy)]
pub(crate) struct DataReads {
    /// Private: only [`DataReads::given`] makes one.
    _consent: (),
}

impl DataReads {
    /// The consent of `report`'s judging: `Some` when it reads to [`Depth::Data`].
    pub fn given(report: &Report) -> Option<Self> {
        (report.judging.depth == Depth::Data).then_some(DataReads { _consent: () })
    }

    /// The consent to check `rule` (a rule decided from data bytes): `Some` when
    /// `report` reads to [`Depth::Data`] and would record a violation of `rule`.
    pub fn for_rule(report: &Report, rule: &Rule) -> Option<Self> {
        Self::given(report).filter(|_| report.wants(rule))
    }
}

/// A tensor's buffers as the layout and quantization checks read them: buffer 0
/// (the elements) only with [`DataReads`], the others (parameter arrays, sparse
/// index structures: metadata) freely.
#[derive(Clone, Copy)]
pub(crate) enum Buffers<'a> {
    /// Buffer `i` is `slices[i]` (a caller's bytes in memory).
    Slices(&'a [&'a [u8]]),
    /// Buffer `i` is `handles[i].byte_size` bytes of the input at `offsets[i]`.
    Input {
        input: &'a Input<'a>,
        offsets: &'a [u64],
        handles: &'a [BufferHandle],
    },
}

impl<'a> Buffers<'a> {
    /// Bytes of buffer `i`, `None` when there is no such buffer.
    pub fn len(&self, i: usize) -> Option<u64> {
        match *self {
            Buffers::Slices(s) => s.get(i).map(|b| <[u8]>::len(b) as u64),
            Buffers::Input {
                offsets, handles, ..
            } => offsets.get(i).and(handles.get(i)).map(|h| h.byte_size),
        }
    }

    /// The first `max` bytes of metadata buffer `i` (all of them when shorter), for
    /// the checks that need a whole array (sparse index structures); `None` for
    /// buffer 0, the data buffer ([`Buffers::data`]).
    pub fn whole(&self, i: usize, max: u64) -> Option<Cow<'a, [u8]>> {
        if i == 0 {
            return None;
        }
        let n = self.len(i)?.min(max);
        match *self {
            Buffers::Slices(s) => Some(Cow::Borrowed(&s[i][..n as usize])),
            Buffers::Input { input, offsets, .. } => input.bytes(offsets[i], n),
        }
    }

    /// A window over the first `max` bytes of metadata buffer `i` (all of them
    /// when shorter); `None` for buffer 0, the data buffer ([`Buffers::data`]).
    pub fn window(&self, i: usize, max: u64) -> Option<Window<'a>> {
        if i == 0 {
            return None;
        }
        self.any_window(i, max)
    }

    /// A window over the first `max` bytes of buffer 0, the data buffer, read
    /// with the judging's consent.
    pub fn data(&self, _consent: DataReads, max: u64) -> Option<Window<'a>> {
        self.any_window(0, max)
    }

    /// A window over the first `max` bytes of buffer `i`, whichever it is.
    fn any_window(&self, i: usize, max: u64) -> Option<Window<'a>> {
        let n = self.len(i)?.min(max);
        Some(match *self {
            Buffers::Slices(s) => Window::over_slice(&s[i][..n as usize]),
            Buffers::Input { input, offsets, .. } => input.window(offsets[i], n),
        })
    }
}

/// A charge's outcome for a pass: true when it fit; otherwise the refusal is
/// recorded in `report`, the pass stops there, and false.
fn stops_on_refusal(charged: Result<(), crate::validate::Violation>, report: &mut Report) -> bool {
    match charged {
        Ok(()) => true,
        Err(v) => {
            report.record(v);
            report.fatal = true;
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn first_nonzero_byte_finds_the_first_at_every_position() {
        for len in [0usize, 1, 7, 63, 64, 65, 127, 128, 200] {
            assert_eq!(first_nonzero_byte(&vec![0; len]), None, "{len} zeros");
            for at in 0..len {
                let mut bytes = vec![0u8; len];
                bytes[at] = 0x80;
                // A second non-zero byte later must not be the one found.
                if let Some(later) = bytes.get_mut(at + 70) {
                    *later = 1;
                }
                assert_eq!(
                    first_nonzero_byte(&bytes),
                    Some(at),
                    "length {len}, at {at}"
                );
            }
        }
    }

    /// A source in memory that does not say so, counting its reads.
    struct Opaque {
        bytes: Vec<u8>,
        reads: AtomicU64,
    }

    impl ReadAt for Opaque {
        fn len(&self) -> u64 {
            self.bytes.len() as u64
        }
        fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
            self.reads.fetch_add(1, Ordering::Relaxed);
            self.bytes.as_slice().read_at(offset, buf)
        }
    }

    fn opaque(n: usize) -> Opaque {
        Opaque {
            bytes: (0..n).map(|i| (i * 7 % 251) as u8).collect(),
            reads: AtomicU64::new(0),
        }
    }

    #[test]
    fn windows_give_the_bytes_of_the_region_wherever_they_are_read() {
        let src = opaque(3 << 20);
        let input = Input::new(&src);
        let memory = Input::new(&src.bytes);
        let (start, len) = (1000u64, (2 << 20) + 17);
        let mut w = input.window(start, len);
        let mut m = memory.window(start, len);
        let expect = |at: u64, n: usize| {
            let from = (start + at) as usize;
            let to = (start + (at + n as u64).min(len)) as usize;
            src.bytes[from.min(to)..to].to_vec()
        };
        for (at, n) in [
            (0u64, 1usize),
            (5000, 9000),
            (4, 3),
            (len - 2, 8),
            (len, 1),
            (len + 10, 1),
            (1 << 20, 1 << 20),
            (17, 0),
        ] {
            assert_eq!(w.get(at, n), &expect(at, n)[..], "window at {at} +{n}");
            assert_eq!(m.get(at, n), &expect(at, n)[..], "slice at {at} +{n}");
        }
        assert_eq!(w.bits(8 * 5 + 4, 8), m.bits(8 * 5 + 4, 8));
        assert_eq!(w.bits(8 * (len - 1) + 4, 8), None);
        let pred = |b: u8| b == 250;
        assert_eq!(w.position(0, len, pred), m.position(0, len, pred));
        assert!(input.into_error().is_none());
    }

    #[test]
    fn sequential_scans_make_few_reads_and_scattered_probes_small_ones() {
        let src = opaque(8 << 20);
        let input = Input::new(&src);
        let mut w = input.window(0, 8 << 20);
        for at in 0..(8u64 << 20) {
            w.byte(at);
        }
        // 4 KiB doubling to 1 MiB: 9 growing reads, then about 7 of 1 MiB.
        assert!(src.reads.load(Ordering::Relaxed) < 20, "{:?}", src.reads);
        let before = src.reads.load(Ordering::Relaxed);
        let mut w = input.window(0, 8 << 20);
        for at in (0..(8u64 << 20)).step_by(1 << 20) {
            assert_eq!(w.get(at, 4).len(), 4);
        }
        assert_eq!(src.reads.load(Ordering::Relaxed) - before, 8);
    }

    #[test]
    fn a_failed_read_is_kept_and_later_reads_give_nothing() {
        struct Failing;
        impl ReadAt for Failing {
            fn len(&self) -> u64 {
                100
            }
            fn read_at(&self, _: u64, _: &mut [u8]) -> io::Result<()> {
                Err(io::Error::other("disk on fire"))
            }
        }
        let input = Input::new(&Failing);
        assert!(input.bytes(0, 10).is_none());
        assert!(input.first_nonzero(0, 100).is_none());
        assert_eq!(input.window(0, 100).get(0, 4), &[] as &[u8]);
        let e = input.into_error().expect("kept");
        assert_eq!(e.to_string(), "disk on fire");
    }
}

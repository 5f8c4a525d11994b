//! A source mirrored on local disk as it is read: what lets a [`super::HrryFile`]
//! opened over any [`ReadAt`] (a remote object, a Python file object) borrow its
//! tensors as `&[u8]` like a mapped file.
//!
//! The mirror is a sparse temporary file of the source's length, mapped read-only.
//! [`Mirror::fetched`] is the one way to its bytes: it first reads the parts of the
//! range not yet present from the source and writes them to the file (only those
//! gaps: bytes once present are never written again, so a slice handed out never
//! changes), records them in a set of present ranges, and only then borrows the
//! range from the mapping. Bytes never fetched are never handed out. Memory does
//! not grow with what is read: fetched bytes live in the page cache of the
//! temporary file, which the OS can write out (keep `TMPDIR` on a disk, not a
//! RAM-backed `tmpfs`, for large files).

use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use crate::source::ReadAt;

/// Bytes of a gap read from the source at once (each piece needs a buffer of
/// this size while it is written to the mirror).
const PIECE: u64 = 8 << 20;

/// Pieces of one fetch read from the source at once.
const PARALLEL_PIECES: usize = 4;

/// Disjoint, non-adjacent half-open ranges, sorted.
#[derive(Default, Debug)]
pub(crate) struct RangeSet {
    ranges: Vec<(u64, u64)>,
}

impl RangeSet {
    /// Whether every byte of `start..end` is in the set.
    pub fn covers(&self, start: u64, end: u64) -> bool {
        if start >= end {
            return true;
        }
        // The last range starting at or before `start`.
        let i = self.ranges.partition_point(|&(s, _)| s <= start);
        i > 0 && self.ranges[i - 1].1 >= end
    }

    /// The parts of `start..end` not in the set, in order.
    pub fn gaps(&self, start: u64, end: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let mut at = start;
        let first = self.ranges.partition_point(|&(_, e)| e <= start);
        for &(s, e) in &self.ranges[first..] {
            if s >= end || at >= end {
                break;
            }
            if s > at {
                out.push((at, s));
            }
            at = at.max(e);
        }
        if at < end {
            out.push((at, end));
        }
        out
    }

    /// Adds `start..end`, merging it with the ranges it overlaps or touches.
    pub fn insert(&mut self, start: u64, end: u64) {
        if start >= end {
            return;
        }
        let from = self.ranges.partition_point(|&(_, e)| e < start);
        let to = self.ranges.partition_point(|&(s, _)| s <= end);
        let (mut s, mut e) = (start, end);
        if from < to {
            s = s.min(self.ranges[from].0);
            e = e.max(self.ranges[to - 1].1);
        }
        self.ranges.splice(from..to, [(s, e)]);
    }

    /// Bytes in the set.
    pub fn total(&self) -> u64 {
        self.ranges.iter().map(|&(s, e)| e - s).sum()
    }
}

/// A [`ReadAt`] source with a disk-backed mirror of what was read from it (see the
/// module docs).
pub(crate) struct Mirror {
    source: Box<dyn ReadAt + Send>,
    /// The sparse temporary file (unnamed: removed by the OS when closed).
    file: File,
    /// The file mapped read-only; `None` for an empty source.
    map: Option<memmap2::MmapRaw>,
    len: u64,
    present: Mutex<RangeSet>,
    /// Held while gaps are fetched, so that no two fetches write the same bytes.
    fetching: Mutex<()>,
}

impl std::fmt::Debug for Mirror {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mirror")
            .field("len", &self.len)
            .field("present", &self.lock().total())
            .finish()
    }
}

impl Mirror {
    /// A mirror of `source` in a new temporary file in `dir` (the system's
    /// temporary folder when `None`); nothing is read from the source yet.
    pub fn new(source: Box<dyn ReadAt + Send>, dir: Option<&Path>) -> io::Result<Mirror> {
        let len = source.len();
        usize::try_from(len).map_err(|_| {
            io::Error::new(
                io::ErrorKind::OutOfMemory,
                format!("a {len}-byte source cannot be mapped on this platform"),
            )
        })?;
        let file = match dir {
            Some(d) => tempfile::tempfile_in(d)?,
            None => tempfile::tempfile()?,
        };
        file.set_len(len)?;
        let map = if len == 0 {
            None
        } else {
            Some(memmap2::MmapOptions::new().map_raw_read_only(&file)?)
        };
        Ok(Mirror {
            source,
            file,
            map,
            len,
            present: Mutex::new(RangeSet::default()),
            fetching: Mutex::new(()),
        })
    }

    /// The source mirrored.
    pub fn source(&self) -> &(dyn ReadAt + Send) {
        &*self.source
    }

    fn lock(&self) -> MutexGuard<'_, RangeSet> {
        self.present.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Bytes fetched from the source so far.
    pub fn fetched_len(&self) -> u64 {
        self.lock().total()
    }

    /// `offset..offset + len` as a half-open range inside the source.
    fn bounds(&self, offset: u64, len: u64) -> Option<(u64, u64)> {
        let end = offset.checked_add(len).filter(|&e| e <= self.len)?;
        Some((offset, end))
    }

    /// The bytes `offset..offset + len`, when every one of them is present already.
    #[cfg(test)]
    pub fn present(&self, offset: u64, len: u64) -> Option<&[u8]> {
        let (start, end) = self.bounds(offset, len)?;
        self.lock()
            .covers(start, end)
            .then(|| self.borrow(start, end))
    }

    /// The bytes `offset..offset + len`, the missing ones fetched from the source
    /// first; `None` when the range is not inside the source.
    pub fn fetched(&self, offset: u64, len: u64) -> io::Result<Option<&[u8]>> {
        let Some((start, end)) = self.bounds(offset, len) else {
            return Ok(None);
        };
        if !self.lock().covers(start, end) {
            self.fetch(start, end)?;
        }
        Ok(Some(self.borrow(start, end)))
    }

    /// Borrows `start..end` from the mapping. Only for ranges the present set
    /// covers: those bytes are written once, before they are recorded, and never
    /// again.
    fn borrow(&self, start: u64, end: u64) -> &[u8] {
        match &self.map {
            Some(map) => {
                // SAFETY: `start..end` lies inside the mapping (checked against
                // `len`, the mapping's length, by `bounds`; empty at its end at
                // most), and it is present:
                // its bytes were written to the file before being recorded and
                // are never written again (fetches write only gaps, under
                // `fetching`), so nothing changes them while this borrow lives.
                // The mapping lives as long as `self`.
                unsafe {
                    std::slice::from_raw_parts(
                        map.as_ptr().add(start as usize),
                        (end - start) as usize,
                    )
                }
            }
            None => &[],
        }
    }

    /// Where `part` starts in the source, when it is a slice this mirror handed out.
    pub fn offset_of(&self, part: &[u8]) -> Option<u64> {
        let base = self.map.as_ref()?.as_ptr() as usize;
        let at = (part.as_ptr() as usize).checked_sub(base)?;
        let end = at.checked_add(part.len())?;
        (end as u64 <= self.len).then_some(at as u64)
    }

    /// Fetches the gaps of `start..end` from the source into the file.
    fn fetch(&self, start: u64, end: u64) -> io::Result<()> {
        let _fetching = self.fetching.lock().unwrap_or_else(|e| e.into_inner());
        let gaps = self.lock().gaps(start, end);
        let pieces: Vec<(u64, u64)> = gaps
            .iter()
            .flat_map(|&(s, e)| {
                (s..e)
                    .step_by(PIECE as usize)
                    .map(move |p| (p, (p + PIECE).min(e)))
            })
            .collect();
        if pieces.len() <= 1 {
            return pieces.iter().try_for_each(|&(s, e)| self.fetch_piece(s, e));
        }
        let next = std::sync::atomic::AtomicUsize::new(0);
        let first_error = Mutex::new(None);
        let extra = PARALLEL_PIECES.min(pieces.len()).saturating_sub(1);
        crate::workers::run_on_threads("hrry-mirror", extra, || loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(&(s, e)) = pieces.get(i) else { break };
            if let Err(err) = self.fetch_piece(s, e) {
                let mut slot = first_error.lock().unwrap_or_else(|e| e.into_inner());
                slot.get_or_insert(err);
                // The others stop at their next piece.
                next.store(pieces.len(), std::sync::atomic::Ordering::Relaxed);
                break;
            }
        });
        match first_error.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Reads `start..end` (a gap, at most [`PIECE`] bytes) from the source, writes
    /// it to the file, then records it present.
    fn fetch_piece(&self, start: u64, end: u64) -> io::Result<()> {
        let mut buf = vec![0u8; (end - start) as usize];
        self.source.read_at(start, &mut buf)?;
        write_all_at(&self.file, start, &buf)?;
        self.lock().insert(start, end);
        Ok(())
    }
}

impl ReadAt for Mirror {
    fn len(&self) -> u64 {
        self.len
    }

    /// Reads into `buf` without touching the mapping, so that what the caller
    /// copies out (a decode pass reading an index or a KV section into memory of
    /// its own) is not resident twice: the parts not present yet are read from
    /// the source straight into `buf` and written to the file, the parts present
    /// are read back from the file. Both stay in the page cache, outside the
    /// process's resident memory; only [`Mirror::fetched`] borrows from the
    /// mapping.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let Some((start, end)) = self.bounds(offset, buf.len() as u64) else {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "read of {} bytes at offset {offset} runs past the end of the {}-byte source",
                    buf.len(),
                    self.len
                ),
            ));
        };
        let _fetching = self.fetching.lock().unwrap_or_else(|e| e.into_inner());
        let gaps = self.lock().gaps(start, end);
        // Offsets into `buf` fit a usize: `buf` is that long.
        let at = |offset: u64| (offset - start) as usize;
        let mut done = start;
        for (s, e) in gaps {
            if done < s {
                crate::source::read_exact_at(&self.file, done, &mut buf[at(done)..at(s)])?;
            }
            let part = &mut buf[at(s)..at(e)];
            self.source.read_at(s, part)?;
            write_all_at(&self.file, s, part)?;
            self.lock().insert(s, e);
            done = e;
        }
        if done < end {
            crate::source::read_exact_at(&self.file, done, &mut buf[at(done)..])?;
        }
        Ok(())
    }

    /// Passes on to the source the parts of `ranges` not present yet.
    fn prefetch(&self, ranges: &[(u64, u64)]) {
        let wanted: Vec<(u64, u64)> = {
            let present = self.lock();
            ranges
                .iter()
                .filter_map(|&(s, n)| self.bounds(s, n.min(self.len.saturating_sub(s))))
                .flat_map(|(s, e)| present.gaps(s, e))
                .map(|(s, e)| (s, e - s))
                .collect()
        };
        if !wanted.is_empty() {
            self.source.prefetch(&wanted);
        }
    }
}

#[cfg(unix)]
fn write_all_at(file: &File, offset: u64, buf: &[u8]) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, buf, offset)
}

#[cfg(windows)]
fn write_all_at(file: &File, mut offset: u64, mut buf: &[u8]) -> io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match file.seek_write(buf, offset) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                buf = &buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(not(any(unix, windows)))]
fn write_all_at(_file: &File, _offset: u64, _buf: &[u8]) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "positioned writes are not available on this platform",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn mirrors_can_be_shared_between_threads() {
        fn shared<T: Send + Sync>() {}
        shared::<Mirror>();
    }

    #[test]
    fn range_sets_merge_and_report_gaps() {
        let mut set = RangeSet::default();
        set.insert(10, 20);
        set.insert(30, 40);
        assert!(set.covers(12, 18) && set.covers(10, 20) && set.covers(5, 5));
        assert!(!set.covers(15, 25) && !set.covers(0, 1));
        assert_eq!(set.gaps(0, 50), [(0, 10), (20, 30), (40, 50)]);
        assert_eq!(set.gaps(12, 35), [(20, 30)]);
        assert_eq!(set.gaps(12, 18), []);
        set.insert(20, 30); // touches both: one range
        assert_eq!(set.ranges, [(10, 40)]);
        set.insert(0, 5);
        set.insert(45, 50);
        set.insert(3, 47);
        assert_eq!(set.ranges, [(0, 50)]);
        assert_eq!(set.total(), 50);
    }

    /// A source that records every range read from it.
    struct Recording {
        bytes: Vec<u8>,
        reads: Arc<Mutex<Vec<(u64, u64)>>>,
    }

    impl ReadAt for Recording {
        fn len(&self) -> u64 {
            self.bytes.len() as u64
        }
        fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
            self.reads
                .lock()
                .unwrap()
                .push((offset, offset + buf.len() as u64));
            self.bytes.as_slice().read_at(offset, buf)
        }
    }

    #[test]
    fn only_gaps_are_fetched_and_bytes_match_the_source() {
        let bytes: Vec<u8> = (0..(3 * PIECE + 100))
            .map(|i| (i % 251) as u8 + 1)
            .collect();
        let reads = Arc::new(Mutex::new(Vec::new()));
        let source = Recording {
            bytes: bytes.clone(),
            reads: reads.clone(),
        };
        let mirror = Mirror::new(Box::new(source), None).expect("mirror");
        assert!(mirror.present(0, 1).is_none(), "nothing present yet");
        assert_eq!(mirror.fetched(100, 50).unwrap().unwrap(), &bytes[100..150]);
        assert_eq!(mirror.fetched(120, 100).unwrap().unwrap(), &bytes[120..220]);
        assert_eq!(*reads.lock().unwrap(), [(100, 150), (150, 220)]);
        // A large range: the gaps around what is present, in pieces.
        let len = bytes.len() as u64;
        let all = mirror.fetched(0, len).unwrap().unwrap();
        assert_eq!(all, &bytes[..]);
        let mut got = reads.lock().unwrap().clone();
        got.sort_unstable();
        let fetched: u64 = got.iter().map(|&(s, e)| e - s).sum();
        assert_eq!(fetched, len, "every byte read once: {got:?}");
        assert_eq!(mirror.fetched_len(), len);
        assert!(mirror.fetched(len, 1).unwrap().is_none());
        assert_eq!(mirror.fetched(len, 0).unwrap().unwrap(), &[] as &[u8]);
        assert_eq!(mirror.offset_of(&all[7..9]), Some(7));
    }

    /// `read_at` (what a decode pass reads through) reads only the gaps from the
    /// source, gives the bytes of the source around what is present, and makes
    /// what it read present for later borrows.
    #[test]
    fn reads_fill_gaps_and_read_present_bytes_back() {
        let bytes: Vec<u8> = (0..10_000u32).map(|i| (i % 253) as u8 + 1).collect();
        let reads = Arc::new(Mutex::new(Vec::new()));
        let source = Recording {
            bytes: bytes.clone(),
            reads: reads.clone(),
        };
        let mirror = Mirror::new(Box::new(source), None).expect("mirror");
        assert_eq!(mirror.fetched(100, 50).unwrap().unwrap(), &bytes[100..150]);
        assert_eq!(mirror.fetched(300, 10).unwrap().unwrap(), &bytes[300..310]);
        let mut buf = vec![0u8; 400];
        mirror.read_at(0, &mut buf).unwrap();
        assert_eq!(buf, &bytes[..400]);
        assert_eq!(
            *reads.lock().unwrap(),
            [(100, 150), (300, 310), (0, 100), (150, 300), (310, 400)]
        );
        assert_eq!(mirror.present(0, 400).unwrap(), &bytes[..400]);
        mirror.read_at(50, &mut buf[..100]).unwrap();
        assert_eq!(buf[..100], bytes[50..150]);
        assert_eq!(
            reads.lock().unwrap().len(),
            5,
            "present bytes are not read again"
        );
        assert!(mirror.read_at(9_990, &mut buf[..11]).is_err());
    }

    #[test]
    fn a_failed_fetch_leaves_nothing_present() {
        struct Failing;
        impl ReadAt for Failing {
            fn len(&self) -> u64 {
                1000
            }
            fn read_at(&self, _: u64, _: &mut [u8]) -> io::Result<()> {
                Err(io::Error::other("gone"))
            }
        }
        let mirror = Mirror::new(Box::new(Failing), None).expect("mirror");
        assert!(mirror.fetched(0, 10).is_err());
        assert!(mirror.present(0, 10).is_none());
        assert_eq!(mirror.fetched_len(), 0);
        let mut buf = [0u8; 4];
        assert!(mirror.read_at(0, &mut buf).is_err());
    }
}

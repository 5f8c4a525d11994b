//! An input file read through a small buffer, with cheap seeks.
//!
//! The schema parsers ask for the bytes that remain (a seek to the end and back) before
//! every counted allocation; `std::io::BufReader` drops its buffer on every seek,
//! which would re-read the file once per string of a GGUF vocabulary. This reader
//! knows the file length and only touches the file when the position leaves its
//! buffer. Bulk tensor reads bypass the buffer.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use super::{Error, Progress};
use crate::source::FileStamp;

const BUFFER: usize = 64 << 10;
/// Tensor data is read (and copied) in pieces of at most this size, reporting
/// progress after each: the bound on the memory a conversion holds for tensor data.
pub(crate) const CHUNK: usize = 4 << 20;

/// A read-only input file: buffered `Read + Seek` for headers, and whole-range reads
/// for tensor data. Like [`crate::source::FileSource`], every read checks that the
/// file is still as it was opened (its [`FileStamp`]): a file changed while it is
/// converted is an error, never a mix of two versions.
pub(crate) struct FileSource {
    file: File,
    path: PathBuf,
    len: u64,
    stamp: FileStamp,
    pos: u64,
    buf: Vec<u8>,
    buf_start: u64,
}

impl FileSource {
    /// Opens the regular file at `path`.
    pub fn open(path: &Path) -> Result<Self, Error> {
        let io = |source| super::io_at(path, source);
        let file = crate::source::open_regular(path).map_err(io)?;
        Self::from_file(file, path)
    }

    /// Reads `file`, named `path` in errors, taking its length and stamp now.
    pub fn from_file(file: File, path: &Path) -> Result<Self, Error> {
        let stamp = FileStamp::of(&file).map_err(|source| super::io_at(path, source))?;
        Ok(FileSource {
            file,
            path: path.to_path_buf(),
            len: stamp.len(),
            stamp,
            pos: 0,
            buf: Vec::new(),
            buf_start: 0,
        })
    }

    /// The file length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// The file, for copies the kernel makes (its cursor is not relied on here).
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Fails when the file is no longer as it was opened (after bytes were copied
    /// from it by other means than this reader: the kernel's copies).
    pub fn check_unchanged(&self) -> Result<(), Error> {
        self.stamp.check(&self.file).map_err(|e| self.io_error(e))
    }

    /// A second reader of the same open file (same stamp), with its own buffer.
    pub fn try_clone(&self) -> Result<Self, Error> {
        let file = self.file.try_clone().map_err(|e| self.io_error(e))?;
        Ok(FileSource {
            file,
            path: self.path.clone(),
            len: self.len,
            stamp: self.stamp,
            pos: 0,
            buf: Vec::new(),
            buf_start: 0,
        })
    }

    /// Reads the `len` bytes at `offset` a piece at a time into `buf` (reused) and
    /// hands each piece to `f`. Pieces hold a whole number of `unit` bytes (the last
    /// one excepted when `len` is not a multiple) and at most `max` bytes, or one
    /// `unit` when that is larger. With more than one piece, a second thread reads
    /// the next piece while `f` works on the current one (two buffers in all).
    #[allow(clippy::too_many_arguments)]
    pub fn for_each_piece(
        &mut self,
        offset: u64,
        len: u64,
        unit: usize,
        max: usize,
        buf: &mut Vec<u8>,
        progress: &mut dyn Progress,
        mut f: impl FnMut(&[u8]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let unit = unit.max(1) as u64;
        let piece = (max as u64 / unit).max(1) * unit;
        let pieces = (0..len.div_ceil(piece)).map(move |i| {
            let at = i * piece;
            (offset + at, piece.min(len - at))
        });
        if len <= piece {
            for (at, n) in pieces {
                self.read_range_into(at, n, Some(&mut *progress), buf)?;
                f(buf)?;
            }
            return Ok(());
        }
        let (file, path, file_len, stamp) =
            (&self.file, self.path.as_path(), self.len, &self.stamp);
        std::thread::scope(|scope| {
            // Empty buffers go to the reader, full ones come back; dropping either
            // end (an error on this side) ends the reader.
            let (to_reader, empties) = mpsc::sync_channel::<Vec<u8>>(2);
            let (from_reader, fulls) = mpsc::sync_channel::<Result<Vec<u8>, Error>>(1);
            let _ = to_reader.send(std::mem::take(buf));
            let _ = to_reader.send(Vec::new());
            let ranges = pieces.clone();
            scope.spawn(move || {
                for (at, n) in ranges {
                    let Ok(mut b) = empties.recv() else { return };
                    let read = fill(file, path, file_len, stamp, at, n, &mut b).map(|()| b);
                    let failed = read.is_err();
                    if from_reader.send(read).is_err() || failed {
                        return;
                    }
                }
            });
            let count = len.div_ceil(piece) as usize;
            for (i, (_, n)) in pieces.enumerate() {
                let full = fulls
                    .recv()
                    .map_err(|_| Error::Unsupported("the reading thread stopped".into()))??;
                progress.advance(n);
                f(&full)?;
                if i + 1 == count {
                    // The last buffer stays with the caller, for the next tensor.
                    *buf = full;
                } else {
                    let _ = to_reader.send(full);
                }
            }
            Ok(())
        })
    }

    /// Wraps an I/O error with the file name.
    pub fn io_error(&self, source: io::Error) -> Error {
        super::io_at(&self.path, source)
    }

    /// Up to `n` bytes from the start of the file.
    pub fn read_prefix(&mut self, n: usize) -> Result<Vec<u8>, Error> {
        let n = n.min(usize::try_from(self.len).unwrap_or(usize::MAX));
        self.read_range(0, n as u64, None)
    }

    /// The `len` bytes at `offset`, which must lie inside the file (checked before
    /// allocating). Reports each piece read to `progress`.
    pub fn read_range(
        &mut self,
        offset: u64,
        len: u64,
        progress: Option<&mut dyn Progress>,
    ) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        self.read_range_into(offset, len, progress, &mut out)?;
        Ok(out)
    }

    /// Replaces the contents of `out` with the `len` bytes at `offset`, reusing its
    /// allocation (a conversion reads every tensor through one buffer, so it never
    /// holds more than the largest). The range must lie inside the file (checked
    /// before allocating). Reports each piece read to `progress`.
    pub fn read_range_into(
        &mut self,
        offset: u64,
        len: u64,
        progress: Option<&mut dyn Progress>,
        out: &mut Vec<u8>,
    ) -> Result<(), Error> {
        fill(
            &self.file,
            &self.path,
            self.len,
            &self.stamp,
            offset,
            len,
            out,
        )?;
        if let Some(p) = progress {
            p.advance(len);
        }
        Ok(())
    }
}

/// Replaces the contents of `out` with the `len` bytes at `offset` of `file` (of
/// `file_len` bytes, named `path` in errors), reusing its allocation. The range
/// must lie inside the file (checked before allocating); the file must still be
/// as `stamp` says once the bytes are in.
fn fill(
    file: &File,
    path: &Path,
    file_len: u64,
    stamp: &FileStamp,
    offset: u64,
    len: u64,
    out: &mut Vec<u8>,
) -> Result<(), Error> {
    let io_error = |source| super::io_at(path, source);
    let end = offset.checked_add(len).filter(|&e| e <= file_len);
    if end.is_none() {
        return Err(io_error(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!(
                "{len} bytes at offset {offset} run past the end of the file ({file_len} bytes)"
            ),
        )));
    }
    let too_large = || Error::Unsupported(format!("{len} bytes do not fit in memory"));
    let n = usize::try_from(len).map_err(|_| too_large())?;
    // Only bytes beyond the current length are zeroed (once, as the buffer grows);
    // every byte kept is then overwritten by the read.
    if out.len() >= n {
        out.truncate(n);
    } else {
        out.try_reserve_exact(n - out.len())
            .map_err(|_| too_large())?;
        out.resize(n, 0);
    }
    let read = read_exact_at(file, offset, out);
    stamp.check(file).map_err(io_error)?;
    read.map_err(|e| {
        io_error(match e.kind() {
            io::ErrorKind::UnexpectedEof => io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("the file ended inside the {len} bytes at offset {offset}"),
            ),
            _ => e,
        })
    })
}

/// Fills `buf` from `offset` of `file` (a positioned read where the platform has
/// one: no shared cursor between the reading thread and the rest).
fn read_exact_at(file: &File, offset: u64, buf: &mut [u8]) -> io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
    }
    #[cfg(not(unix))]
    {
        let mut reader = file;
        reader.seek(SeekFrom::Start(offset))?;
        reader.read_exact(buf)
    }
}

impl Read for FileSource {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let buf_end = self.buf_start + self.buf.len() as u64;
        if self.pos < self.buf_start || self.pos >= buf_end {
            if self.pos >= self.len {
                return Ok(0);
            }
            let want = (self.len - self.pos).min(BUFFER as u64) as usize;
            self.buf.resize(want, 0);
            let read = read_exact_at(&self.file, self.pos, &mut self.buf);
            self.stamp.check(&self.file)?;
            read?;
            self.buf_start = self.pos;
        }
        let at = (self.pos - self.buf_start) as usize;
        let available = &self.buf[at..];
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for FileSource {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => self.len.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = target.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "seek before the start or past 2^64",
            )
        })?;
        Ok(self.pos)
    }

    fn stream_position(&mut self) -> io::Result<u64> {
        Ok(self.pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn reads_and_seeks_like_a_file() {
        let mut tmp = tempfile::NamedTempFile::new().unwrap();
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        tmp.write_all(&data).unwrap();
        let mut s = FileSource::open(tmp.path()).unwrap();
        assert_eq!(s.len(), data.len() as u64);
        let mut got = Vec::new();
        s.read_to_end(&mut got).unwrap();
        assert_eq!(got, data);
        s.seek(SeekFrom::Start(100_000)).unwrap();
        let mut b = [0u8; 4];
        s.read_exact(&mut b).unwrap();
        assert_eq!(b, data[100_000..100_004]);
        assert_eq!(s.seek(SeekFrom::End(-1)).unwrap(), 199_999);
        assert!(s.seek(SeekFrom::Current(-300_000)).is_err());
        assert_eq!(s.read_range(5, 10, None).unwrap(), data[5..15]);
        assert!(s.read_range(199_990, 11, None).is_err());
        assert!(s.read_range(u64::MAX, 2, None).is_err());
        // One buffer reused: contents replaced, allocation kept.
        let mut buf = Vec::new();
        s.read_range_into(0, 150_000, None, &mut buf).unwrap();
        let capacity = buf.capacity();
        s.read_range_into(10, 1000, None, &mut buf).unwrap();
        assert_eq!(buf, data[10..1010]);
        assert_eq!(buf.capacity(), capacity);
        s.read_range_into(0, 0, None, &mut buf).unwrap();
        assert!(buf.is_empty());
    }

    #[derive(Default)]
    struct Count(u64);
    impl Progress for Count {
        fn advance(&mut self, bytes: u64) {
            self.0 += bytes;
        }
    }

    #[test]
    fn pieces_come_in_order_whole_units_and_stop_on_errors() {
        let mut tmp = tempfile::NamedTempFile::new().unwrap();
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        tmp.write_all(&data).unwrap();
        let mut s = FileSource::open(tmp.path()).unwrap();
        for (max, unit) in [(1000usize, 7usize), (1 << 20, 7), (5, 7), (4096, 1)] {
            let mut buf = Vec::new();
            let mut got = Vec::new();
            let mut progress = Count::default();
            s.for_each_piece(3, 199_990, unit, max, &mut buf, &mut progress, |p| {
                let last = got.len() as u64 + p.len() as u64 == 199_990;
                assert!(p.len() % unit == 0 || last, "{} bytes", p.len());
                assert!(p.len() <= max.max(unit));
                got.extend_from_slice(p);
                Ok(())
            })
            .unwrap();
            assert_eq!(got, data[3..199_993], "max {max} unit {unit}");
            assert_eq!(progress.0, 199_990);
        }
        // An error from the callback ends the reading (no hang), and is returned.
        let mut calls = 0;
        let e = s.for_each_piece(
            0,
            200_000,
            1,
            100,
            &mut Vec::new(),
            &mut Count::default(),
            |_| {
                calls += 1;
                match calls {
                    3 => Err(Error::Unsupported("stop".into())),
                    _ => Ok(()),
                }
            },
        );
        assert!(matches!(e, Err(Error::Unsupported(m)) if m == "stop"));
        assert_eq!(calls, 3);
        // A range past the end fails when its piece is read, after the earlier ones.
        let mut seen = 0;
        let e = s.for_each_piece(
            150_000,
            60_000,
            1,
            1000,
            &mut Vec::new(),
            &mut Count::default(),
            |p| {
                seen += p.len();
                Ok(())
            },
        );
        assert!(e.is_err());
        assert!(seen <= 50_000);
    }
}

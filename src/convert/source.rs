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

use super::{Error, Progress};

const BUFFER: usize = 64 << 10;
/// Tensor data is read (and copied) in pieces of at most this size, reporting
/// progress after each: the bound on the memory a conversion holds for tensor data.
pub(crate) const CHUNK: usize = 8 << 20;

/// A read-only input file: buffered `Read + Seek` for headers, and whole-range reads
/// for tensor data.
pub(crate) struct FileSource {
    file: File,
    path: PathBuf,
    len: u64,
    pos: u64,
    buf: Vec<u8>,
    buf_start: u64,
}

impl FileSource {
    /// Opens `path`.
    pub fn open(path: &Path) -> Result<Self, Error> {
        let io = |source| Error::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        Ok(FileSource {
            file,
            path: path.to_path_buf(),
            len,
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

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the `len` bytes at `offset` a piece at a time into `buf` (reused) and
    /// hands each piece to `f`. Pieces hold a whole number of `unit` bytes (the last
    /// one excepted when `len` is not a multiple) and at most `max` bytes, or one
    /// `unit` when that is larger.
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
        let mut done = 0u64;
        while done < len {
            let n = piece.min(len - done);
            self.read_range_into(offset + done, n, Some(&mut *progress), buf)?;
            f(buf)?;
            done += n;
        }
        Ok(())
    }

    /// Wraps an I/O error with the file name.
    pub fn io_error(&self, source: io::Error) -> Error {
        Error::Io {
            path: self.path.clone(),
            source,
        }
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
        mut progress: Option<&mut dyn Progress>,
        out: &mut Vec<u8>,
    ) -> Result<(), Error> {
        let end = offset.checked_add(len).filter(|&e| e <= self.len);
        let Some(_) = end else {
            return Err(self.io_error(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "{len} bytes at offset {offset} run past the end of the file ({} bytes)",
                    self.len
                ),
            )));
        };
        let too_large = || Error::Unsupported(format!("{len} bytes do not fit in memory"));
        let n = usize::try_from(len).map_err(|_| too_large())?;
        // Only bytes beyond the current length are zeroed (once, as the buffer
        // grows); every byte kept is then overwritten by the reads.
        if out.len() >= n {
            out.truncate(n);
        } else {
            out.try_reserve_exact(n - out.len())
                .map_err(|_| too_large())?;
            out.resize(n, 0);
        }
        self.file
            .seek(SeekFrom::Start(offset))
            .map_err(|e| self.io_error(e))?;
        for piece in out.chunks_mut(CHUNK) {
            self.file.read_exact(piece).map_err(|e| {
                self.io_error(match e.kind() {
                    io::ErrorKind::UnexpectedEof => io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!("the file ended inside the {len} bytes at offset {offset}"),
                    ),
                    _ => e,
                })
            })?;
            if let Some(p) = progress.as_deref_mut() {
                p.advance(piece.len() as u64);
            }
        }
        Ok(())
    }
}

impl Read for FileSource {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let buf_end = self.buf_start + self.buf.len() as u64;
        if self.pos < self.buf_start || self.pos >= buf_end {
            if self.pos >= self.len {
                return Ok(0);
            }
            self.file.seek(SeekFrom::Start(self.pos))?;
            let want = (self.len - self.pos).min(BUFFER as u64) as usize;
            self.buf.resize(want, 0);
            self.file.read_exact(&mut self.buf)?;
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
}

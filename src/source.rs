//! Random-access byte sources: what the validators read a file through.
//!
//! [`ReadAt`] is a `pread`: read these bytes at that offset, with no cursor, so that
//! a validator can fetch the header, the trailer, the index and each descriptor
//! without reading the tensor data between them. A byte slice (or anything that
//! derefs to one, like a memory map) is one source; [`FileSource`] reads an open
//! file with positioned reads, so validating a file of any size holds only what the
//! rules look at.

use std::fs::File;
use std::io;
use std::path::Path;

/// Bytes that can be read at any offset, from any thread (`pread`-style: no shared
/// cursor).
pub trait ReadAt: Sync {
    /// Length of the source in bytes.
    fn len(&self) -> u64;

    /// Fills `buf` with the bytes at `offset..offset + buf.len()`. A range that runs
    /// past [`ReadAt::len`] is an error ([`io::ErrorKind::UnexpectedEof`]).
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()>;

    /// True when the source holds no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The whole source as one slice, when it is in memory (readers then borrow
    /// instead of copying).
    fn as_bytes(&self) -> Option<&[u8]> {
        None
    }

    /// A hint that the byte ranges `(offset, length)` will be read soon, so a source
    /// with costly round trips (a remote object) can fetch them together. Sources in
    /// memory or on disk ignore it; a source may fetch more or less than asked, and
    /// reads stay correct either way.
    fn prefetch(&self, ranges: &[(u64, u64)]) {
        let _ = ranges;
    }
}

/// The error for a read past the end of a source.
fn past_end(offset: u64, len: usize, source_len: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!("read of {len} bytes at offset {offset} runs past the end of the {source_len}-byte source"),
    )
}

impl ReadAt for [u8] {
    fn len(&self) -> u64 {
        <[u8]>::len(self) as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let range = usize::try_from(offset)
            .ok()
            .and_then(|start| Some(start..start.checked_add(buf.len())?));
        match range.and_then(|r| self.get(r)) {
            Some(bytes) => {
                buf.copy_from_slice(bytes);
                Ok(())
            }
            None => Err(past_end(offset, buf.len(), ReadAt::len(self))),
        }
    }

    fn as_bytes(&self) -> Option<&[u8]> {
        Some(self)
    }
}

/// `ReadAt` for a pointer to a source: every method forwarded to the source.
macro_rules! forward_read_at {
    ($($pointer:ty where $($bound:path),+;)+) => {$(
        impl<T: ?Sized $(+ $bound)+> ReadAt for $pointer {
            fn len(&self) -> u64 {
                (**self).len()
            }

            fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
                (**self).read_at(offset, buf)
            }

            fn as_bytes(&self) -> Option<&[u8]> {
                (**self).as_bytes()
            }

            fn prefetch(&self, ranges: &[(u64, u64)]) {
                (**self).prefetch(ranges)
            }
        }
    )+};
}

forward_read_at! {
    &T where ReadAt;
    std::sync::Arc<T> where ReadAt, Send;
}

impl ReadAt for Vec<u8> {
    fn len(&self) -> u64 {
        Vec::len(self) as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        ReadAt::read_at(&self[..], offset, buf)
    }

    fn as_bytes(&self) -> Option<&[u8]> {
        Some(self)
    }
}

/// A source read front to back as an [`io::Read`], for readers that take one (a bare
/// stream, a conversation).
pub struct Sequential<'a> {
    source: &'a dyn ReadAt,
    position: u64,
}

impl<'a> Sequential<'a> {
    /// Reads `source` from its first byte.
    pub fn new(source: &'a dyn ReadAt) -> Self {
        Sequential {
            source,
            position: 0,
        }
    }
}

impl io::Read for Sequential<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.source.len().saturating_sub(self.position);
        let n = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        self.source.read_at(self.position, &mut buf[..n])?;
        self.position += n as u64;
        Ok(n)
    }
}

/// A file read with positioned reads (`pread` on Unix, `ReadFile` at an offset on
/// Windows). Its length is taken when it is opened: like a memory map, the file
/// must not be truncated or rewritten while it is read (a read past the new end
/// then fails with an I/O error rather than returning other bytes).
#[derive(Debug)]
pub struct FileSource {
    file: File,
    len: u64,
}

impl FileSource {
    /// Opens the file at `path` for reading.
    pub fn open(path: impl AsRef<Path>) -> io::Result<Self> {
        Self::new(File::open(path)?)
    }

    /// Wraps an open file, taking its current length.
    pub fn new(file: File) -> io::Result<Self> {
        let len = file.metadata()?.len();
        Ok(FileSource { file, len })
    }

    /// The file.
    pub fn file(&self) -> &File {
        &self.file
    }
}

impl ReadAt for FileSource {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let fits = offset
            .checked_add(buf.len() as u64)
            .is_some_and(|end| end <= self.len);
        if !fits {
            return Err(past_end(offset, buf.len(), self.len));
        }
        read_exact_at(&self.file, offset, buf)
    }
}

#[cfg(unix)]
fn read_exact_at(file: &File, offset: u64, buf: &mut [u8]) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(windows)]
fn read_exact_at(file: &File, mut offset: u64, mut buf: &mut [u8]) -> io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match file.seek_read(buf, offset) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(not(any(unix, windows)))]
fn read_exact_at(_file: &File, _offset: u64, _buf: &mut [u8]) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "positioned reads are not available on this platform; validate the bytes in memory",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_reads_the_whole_source_in_order() {
        let bytes: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
        let mut out = Vec::new();
        let mut reader = Sequential::new(&bytes);
        let mut piece = [0u8; 333];
        loop {
            let n = io::Read::read(&mut reader, &mut piece).expect("read");
            if n == 0 {
                break;
            }
            out.extend_from_slice(&piece[..n]);
        }
        assert_eq!(out, bytes);
    }

    #[test]
    fn slices_and_files_read_the_same_bytes() {
        let bytes: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
        let mut tmp = tempfile::NamedTempFile::new().expect("temp file");
        std::io::Write::write_all(&mut tmp, &bytes).expect("write");
        let file = FileSource::open(tmp.path()).expect("open");
        assert_eq!(file.len(), bytes.len() as u64);
        for (offset, n) in [(0u64, 0usize), (0, 10), (4090, 20), (9_990, 10)] {
            let (mut a, mut b) = (vec![0; n], vec![0; n]);
            bytes
                .as_slice()
                .read_at(offset, &mut a)
                .expect("slice read");
            file.read_at(offset, &mut b).expect("file read");
            assert_eq!(a, b);
            assert_eq!(&a[..], &bytes[offset as usize..offset as usize + n]);
        }
        for (offset, n) in [(9_991u64, 10usize), (u64::MAX, 1), (20_000, 0)] {
            let mut buf = vec![0; n];
            for err in [
                bytes.as_slice().read_at(offset, &mut buf),
                file.read_at(offset, &mut buf),
            ] {
                assert_eq!(
                    err.expect_err("past the end").kind(),
                    io::ErrorKind::UnexpectedEof
                );
            }
        }
        assert!(file.as_bytes().is_none());
        assert_eq!(ReadAt::as_bytes(&bytes), Some(&bytes[..]));
    }
}

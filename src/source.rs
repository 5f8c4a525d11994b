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
/// Windows), never mapped: a file truncated while it is read gives an I/O error,
/// not a `SIGBUS`.
///
/// Its length and [`FileStamp`] are taken when it is opened, and every read checks
/// the stamp again once its bytes are in: a file rewritten, truncated or grown
/// since it was opened makes the read fail with a [`Changed`] error ("the file
/// changed while being read"), so that what a reader got before and after the
/// change is never mixed into one answer. (A file replaced by a rename is another
/// file: the open one stays readable, unchanged.)
#[derive(Debug)]
pub struct FileSource {
    file: File,
    len: u64,
    stamp: FileStamp,
}

impl FileSource {
    /// Opens the regular file at `path` for reading ([`open_regular`]: anything
    /// else is refused as [`NotRegularFile`]).
    pub fn open(path: impl AsRef<Path>) -> io::Result<Self> {
        Self::new(open_regular(path.as_ref())?)
    }

    /// Wraps an open file, taking its current length and stamp.
    pub fn new(file: File) -> io::Result<Self> {
        let stamp = FileStamp::of(&file)?;
        Ok(FileSource {
            file,
            len: stamp.len,
            stamp,
        })
    }

    /// The file.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Fails with a [`Changed`] error when the file is no longer as it was opened.
    pub fn check_unchanged(&self) -> io::Result<()> {
        self.stamp.check(&self.file)
    }

    /// Maps the file read-only, with the hazard of every mapping
    /// ([`map_file`](crate::file::map_file)): what another process writes shows,
    /// and a page past a truncation is `SIGBUS`. With
    /// [`OpenOptions::open_mmap_read`](crate::file::OpenOptions::open_mmap_read),
    /// a file opened whose decode pass reads this source, not the mapping.
    pub fn map(&self) -> io::Result<crate::file::Mapping> {
        crate::file::Mapping::map(&self.file)
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
        // A failed read of a file that changed (a short read after a truncation)
        // is reported as the change it is.
        let read = read_exact_at(&self.file, offset, buf);
        self.check_unchanged()?;
        read
    }
}

/// What the file system says about a file's contents: its identity (device and
/// inode), length, and modification and status-change times. Writing, truncating
/// or extending the file changes it (on file systems that keep fine-grained
/// times; Linux since 6.13 makes a change after a look at the times always show).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileStamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    /// Device, inode, status change (seconds, nanoseconds).
    #[cfg(unix)]
    identity: (u64, u64, i64, i64),
}

impl FileStamp {
    /// The stamp of `file` now.
    pub fn of(file: &File) -> io::Result<Self> {
        let meta = file.metadata()?;
        Ok(Self::from_metadata(&meta))
    }

    fn from_metadata(meta: &std::fs::Metadata) -> Self {
        #[cfg(unix)]
        use std::os::unix::fs::MetadataExt;
        FileStamp {
            len: meta.len(),
            modified: meta.modified().ok(),
            #[cfg(unix)]
            identity: (meta.dev(), meta.ino(), meta.ctime(), meta.ctime_nsec()),
        }
    }

    /// The length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when the file was empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Fails with a [`Changed`] error when `file`'s stamp is no longer this one.
    pub fn check(&self, file: &File) -> io::Result<()> {
        let now = FileStamp::of(file)?;
        if now == *self {
            return Ok(());
        }
        Err(io::Error::other(Changed {
            len_before: self.len,
            len_after: now.len,
        }))
    }
}

/// The error of a read from a file that changed since it was opened (see
/// [`FileSource`]): the file's bytes are no longer the ones read before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changed {
    /// The length when the file was opened.
    pub len_before: u64,
    /// The length at the read that saw the change.
    pub len_after: u64,
}

impl std::fmt::Display for Changed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the file changed while being read")?;
        if self.len_before != self.len_after {
            write!(
                f,
                " (its length went from {} to {} bytes)",
                self.len_before, self.len_after
            )?;
        } else {
            write!(f, " (it was written to)")?;
        }
        Ok(())
    }
}

impl std::error::Error for Changed {}

/// The error for a path that is not a regular file: a directory, a device
/// (`/dev/zero`), a FIFO, a socket, or a file whose size the system does not
/// give (`/proc/self/status`). One message for all, saying which it is; its
/// [`io::ErrorKind`] is [`io::ErrorKind::IsADirectory`] for a directory,
/// [`io::ErrorKind::InvalidInput`] otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotRegularFile {
    /// What the path is instead ("a directory", "a character device", …).
    pub what: &'static str,
}

impl std::fmt::Display for NotRegularFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "not a regular file (it is {})", self.what)
    }
}

impl std::error::Error for NotRegularFile {}

impl NotRegularFile {
    /// What `meta` describes, when it is not a regular file.
    fn of(meta: &std::fs::Metadata) -> Option<NotRegularFile> {
        let file_type = meta.file_type();
        let what = if file_type.is_file() {
            return None;
        } else if file_type.is_dir() {
            "a directory"
        } else {
            special_kind(&file_type)
        };
        Some(NotRegularFile { what })
    }

    /// As an I/O error.
    pub fn into_io(self) -> io::Error {
        let kind = if self.what == "a directory" {
            io::ErrorKind::IsADirectory
        } else {
            io::ErrorKind::InvalidInput
        };
        io::Error::new(kind, self)
    }
}

#[cfg(unix)]
fn special_kind(file_type: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_block_device() {
        "a block device"
    } else if file_type.is_fifo() {
        "a FIFO"
    } else if file_type.is_socket() {
        "a socket"
    } else {
        "a special file"
    }
}

#[cfg(not(unix))]
fn special_kind(_: &std::fs::FileType) -> &'static str {
    "a special file"
}

/// The [`NotRegularFile`] inside `e`, if that is what it is.
pub fn not_regular_file(e: &io::Error) -> Option<&NotRegularFile> {
    e.get_ref().and_then(|inner| inner.downcast_ref())
}

/// Opens `path` for reading when it is a regular file: what every reader that
/// maps or reads a path at offsets opens it with, so that a directory, a device,
/// a FIFO or a file of unknown size (`/proc`) is refused with one error,
/// [`NotRegularFile`], before anything is read (opening a FIFO without a writer
/// would wait; it is checked first, without opening it).
pub fn open_regular(path: &Path) -> io::Result<File> {
    // A FIFO's open blocks until a writer comes: look before opening. The open
    // file is checked again (the path may have changed in between).
    if let Some(not) = std::fs::metadata(path)
        .ok()
        .as_ref()
        .and_then(NotRegularFile::of)
    {
        return Err(not.into_io());
    }
    let file = File::open(path)?;
    let meta = file.metadata()?;
    if let Some(not) = NotRegularFile::of(&meta) {
        return Err(not.into_io());
    }
    // Files under /proc and /sys say they are empty and yet have bytes.
    if meta.len() == 0 {
        let mut probe = [0u8; 1];
        if matches!(read_some_at(&file, &mut probe), Ok(1)) {
            return Err(NotRegularFile {
                what: "a file whose size the system does not give (as under /proc)",
            }
            .into_io());
        }
    }
    Ok(file)
}

#[cfg(unix)]
fn read_some_at(file: &File, buf: &mut [u8]) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, 0)
}

#[cfg(windows)]
fn read_some_at(file: &File, buf: &mut [u8]) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, 0)
}

#[cfg(not(any(unix, windows)))]
fn read_some_at(_file: &File, _buf: &mut [u8]) -> io::Result<usize> {
    Ok(0)
}

/// Fills `buf` from `file` at `offset` with positioned reads (no seek, so one
/// file may be read from many threads); a read past the end is `UnexpectedEof`.
#[cfg(unix)]
pub(crate) fn read_exact_at(file: &File, offset: u64, buf: &mut [u8]) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(windows)]
pub(crate) fn read_exact_at(file: &File, mut offset: u64, mut buf: &mut [u8]) -> io::Result<()> {
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
pub(crate) fn read_exact_at(_file: &File, _offset: u64, _buf: &mut [u8]) -> io::Result<()> {
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

//! Whole inputs read before use: standard input (`-`), pipes, and the files that
//! are handled whole (a `.holo` archive, a bare stream).
//!
//! Such an input is copied to an unnamed temporary file (in `$TMPDIR`, removed by
//! the OS when closed) that is then mapped: a large input costs page cache, which
//! the OS can write out, not resident memory. The input itself is never mapped: a
//! regular file (named, or redirected to standard input) is copied with
//! positioned reads that check it does not change meanwhile
//! ([`hrry::source::FileSource`]), so that another process truncating or
//! rewriting it gives an error, never a `SIGBUS` or bytes of two versions; the
//! temporary copy is this process's alone.

use std::fs::File;
use std::io::{self, Seek, Write};
use std::ops::Deref;
use std::path::Path;

use hrry::source::{FileSource, ReadAt};

/// The bytes of a whole input.
pub enum Input {
    /// A mapped file: the input itself, or its copy in a temporary file.
    Mapped(memmap2::Mmap),
    /// An empty input (nothing to map).
    Empty,
}

impl Deref for Input {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Input::Mapped(map) => map,
            Input::Empty => &[],
        }
    }
}

impl AsRef<[u8]> for Input {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl Input {
    /// Reads `path` whole, `-` being standard input. A path must name a regular
    /// file, or a pipe (a FIFO, `<(…)`) when `pipes` says so; anything else is
    /// refused ([`hrry::source::NotRegularFile`]).
    pub fn read(path: &Path, pipes: bool) -> io::Result<Input> {
        let mut file = if is_dash(path) {
            stdin_file()?
        } else if pipes && is_pipe(path) {
            File::open(path)?
        } else {
            hrry::source::open_regular(path)?
        };
        let mut spool = tempfile::tempfile()?;
        // A regular file read from its start is copied at offsets, checked
        // unchanged; anything else (a pipe, a terminal, a file read part way) is
        // copied as a stream.
        if file.metadata()?.is_file() && file.stream_position()? == 0 {
            copy_unchanged(FileSource::new(file)?, &mut spool)?;
        } else {
            io::copy(&mut file, &mut spool)?;
        }
        Input::map(&spool)
    }

    /// Maps `file` whole: a temporary file of this process's, which nobody else
    /// writes.
    pub fn map(file: &File) -> io::Result<Input> {
        if file.metadata()?.len() == 0 {
            return Ok(Input::Empty);
        }
        // SAFETY: the map is read-only, of a temporary file this process created
        // and no other process knows of (unnamed, or in a private folder).
        let map = unsafe { memmap2::Mmap::map(file)? };
        Ok(Input::Mapped(map))
    }
}

/// Bytes copied at once by [`copy_unchanged`].
const PIECE: usize = 4 << 20;

/// Copies every byte of `source` to `out`; each read checks the file unchanged.
fn copy_unchanged(source: FileSource, out: &mut File) -> io::Result<()> {
    let mut buf = vec![0u8; PIECE];
    let mut at = 0u64;
    while at < source.len() {
        let n = usize::try_from(source.len() - at).map_or(PIECE, |left| left.min(PIECE));
        source.read_at(at, &mut buf[..n])?;
        out.write_all(&buf[..n])?;
        at += n as u64;
    }
    Ok(())
}

/// Opens `path` to be read front to back: a regular file, read through
/// [`CheckedRead`], or a pipe (a FIFO) as it is; anything else is refused
/// ([`hrry::source::NotRegularFile`]).
pub fn read_stream(path: &Path) -> io::Result<Box<dyn io::Read>> {
    if is_pipe(path) {
        return Ok(Box::new(File::open(path)?));
    }
    let file = hrry::source::open_regular(path)?;
    let stamp = hrry::source::FileStamp::of(&file)?;
    Ok(Box::new(CheckedRead { file, stamp }))
}

/// A regular file read front to back, checked unchanged after every read (a
/// [`hrry::source::Changed`] error otherwise), so that a file rewritten while it
/// is read is an error rather than a mix of two versions.
struct CheckedRead {
    file: File,
    stamp: hrry::source::FileStamp,
}

impl io::Read for CheckedRead {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = io::Read::read(&mut self.file, buf);
        self.stamp.check(&self.file)?;
        n
    }
}

/// Whether `path` names a FIFO (read whole, as a stream).
#[cfg(unix)]
fn is_pipe(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

#[cfg(not(unix))]
fn is_pipe(_: &Path) -> bool {
    false
}

/// Standard input as a `File` of its own (a duplicate of descriptor 0).
#[cfg(unix)]
fn stdin_file() -> io::Result<File> {
    use std::os::fd::AsFd;
    Ok(File::from(io::stdin().as_fd().try_clone_to_owned()?))
}

/// Standard input copied to a temporary file, where descriptors cannot be shared.
#[cfg(not(unix))]
fn stdin_file() -> io::Result<File> {
    let mut spool = tempfile::tempfile()?;
    io::copy(&mut io::stdin().lock(), &mut spool)?;
    spool.rewind()?;
    Ok(spool)
}

/// Whether a path argument means standard input or output.
pub fn is_dash(path: &Path) -> bool {
    path.as_os_str() == "-"
}

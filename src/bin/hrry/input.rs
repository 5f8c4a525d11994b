//! Whole inputs that cannot be read at an offset: standard input (`-`) and pipes.
//!
//! The readers need a HRRYFILE's bytes at random offsets (its index is at the end),
//! so such an input is kept whole. Rather than in the process's memory, it goes to
//! an unnamed temporary file (in `$TMPDIR`, removed by the OS when closed) that is
//! then mapped: a large input costs page cache, which the OS can write out, not
//! resident memory. Standard input redirected from a regular file is mapped as it
//! is, without a copy.

use std::fs::File;
use std::io::{self, Seek};
use std::ops::Deref;
use std::path::Path;

use crate::is_dash;

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
    /// Reads `path` whole, `-` being standard input.
    pub fn read(path: &Path) -> io::Result<Input> {
        let mut file = if is_dash(path) {
            stdin_file()?
        } else {
            File::open(path)?
        };
        // A regular file read from its start is mapped as it is; anything else
        // (a pipe, a FIFO, a terminal, a file read part way) is copied first.
        let whole_file = file.metadata()?.is_file() && file.stream_position()? == 0;
        if !whole_file {
            let mut spool = tempfile::tempfile()?;
            io::copy(&mut file, &mut spool)?;
            file = spool;
        }
        Input::map(&file)
    }

    /// Maps `file` whole: a temporary file of this process's, or a regular file.
    pub fn map(file: &File) -> io::Result<Input> {
        if file.metadata()?.len() == 0 {
            return Ok(Input::Empty);
        }
        // SAFETY: the map is read-only. A temporary file is this process's alone;
        // a regular file given as standard input is mapped as `HrryFile::open`
        // maps files, whose bytes another process could still change (the same
        // caveat as for every mapped input).
        let map = unsafe { memmap2::Mmap::map(file)? };
        Ok(Input::Mapped(map))
    }
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

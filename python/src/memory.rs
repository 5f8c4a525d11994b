//! How the bindings map what they read: a file read-only, a file privately
//! (copy-on-write), or bytes copied into private anonymous memory.
//!
//! A private mapping gives arrays that may be written without copying the file
//! first: a page is copied when first written, in this process only, and the file
//! never changes. The core reads every mapping through `&[u8]`; the bindings hand
//! out writeable arrays only over the data of dense row-major tensors (see
//! `File.get_tensor`), never over the header, index, KV or descriptors, so what the
//! core decoded when opening stays as it decoded it. Data bytes are only ever read
//! as element values (bounds come from the descriptors), so a written array changes
//! values later reads of that tensor give, and nothing else.

use std::io;
use std::path::Path;

use memmap2::{Mmap, MmapMut, MmapOptions};

/// Whether arrays over a mapping may be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    /// Read-only pages: arrays over them are read-only.
    ReadOnly,
    /// Private pages, copied on first write: arrays over them are writeable, and
    /// writes never reach the file.
    CopyOnWrite,
}

/// Maps the file at `path` with `access`. Anything but a regular file is refused
/// with the core's one error for it ([`hrry::source::NotRegularFile`]).
pub(crate) fn map_path(path: &Path, access: Access) -> io::Result<Mmap> {
    map_open(&hrry::source::open_regular(path)?, access)
}

/// Maps the open regular file `file` with `access`.
pub(crate) fn map_open(file: &std::fs::File, access: Access) -> io::Result<Mmap> {
    match access {
        // SAFETY: as for every mmap-based reader, another process truncating or
        // rewriting the file while it is mapped is outside what we can guard
        // against (the README says so).
        Access::ReadOnly => unsafe { Mmap::map(file) },
        Access::CopyOnWrite => {
            // SAFETY: as above; the pages are private to this process.
            let map = unsafe { MmapOptions::new().map_copy_read_only(file)? };
            allow_writes(map)
        }
    }
}

/// A private anonymous mapping holding a copy of `bytes` (at least one byte long),
/// with `access`.
pub(crate) fn map_copy(bytes: &[u8], access: Access) -> io::Result<Mmap> {
    let mut map = MmapMut::map_anon(bytes.len().max(1))?;
    map[..bytes.len()].copy_from_slice(bytes);
    let map = map.make_read_only()?;
    match access {
        Access::ReadOnly => Ok(map),
        Access::CopyOnWrite => allow_writes(map),
    }
}

/// A private anonymous mapping holding every byte of `source` (at least one byte
/// long) with `access`, read in pieces of at most [`WHOLE_PIECE`] bytes: what
/// `load_file` reads a file into, so that its arrays own their bytes.
pub(crate) fn map_source_with(
    source: &dyn hrry::source::ReadAt,
    access: Access,
) -> io::Result<Mmap> {
    let map = map_source(source)?;
    match access {
        Access::ReadOnly => Ok(map),
        Access::CopyOnWrite => allow_writes(map),
    }
}

/// A private anonymous mapping holding every byte of `source` (at least one byte
/// long, read-only), read in pieces of at most [`WHOLE_PIECE`] bytes.
pub(crate) fn map_source(source: &dyn hrry::source::ReadAt) -> io::Result<Mmap> {
    let len = usize::try_from(source.len())
        .map_err(|_| io::Error::new(io::ErrorKind::OutOfMemory, "too large for memory"))?;
    let mut map = MmapMut::map_anon(len.max(1))?;
    // Huge pages where the system gives them on request: a whole model read into
    // 4 KiB pages costs a page fault per page, which dominates the read.
    #[cfg(target_os = "linux")]
    let _ = map.advise(memmap2::Advice::HugePage);
    let mut offset = 0;
    while offset < len {
        let end = len.min(offset + WHOLE_PIECE);
        source.read_at(offset as u64, &mut map[offset..end])?;
        offset = end;
    }
    map.make_read_only()
}

/// Most bytes [`map_source`] asks of its source at once.
const WHOLE_PIECE: usize = 64 << 20;

/// Makes the pages of the private mapping `map` writeable again. Its type stays
/// `Mmap` because the core holds it as one; nothing in Rust writes through it.
#[cfg(unix)]
fn allow_writes(map: Mmap) -> io::Result<Mmap> {
    if map.is_empty() {
        return Ok(map);
    }
    // SAFETY: `map` is a live private mapping of `map.len()` bytes starting at a
    // page boundary (memmap2 maps whole files from offset 0); mprotect changes the
    // protection of those pages only. Writes to private pages are copied on write.
    let status = unsafe {
        libc::mprotect(
            map.as_ptr().cast_mut().cast(),
            map.len(),
            libc::PROT_READ | libc::PROT_WRITE,
        )
    };
    if status != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(map)
}

/// Without `mprotect` the pages stay read-only (arrays over them are read-only).
#[cfg(not(unix))]
fn allow_writes(map: Mmap) -> io::Result<Mmap> {
    Ok(map)
}

/// True when arrays over a mapping of `access` may be written on this platform.
pub(crate) fn writeable(access: Access) -> bool {
    cfg!(unix) && access == Access::CopyOnWrite
}

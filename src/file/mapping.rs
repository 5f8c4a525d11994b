//! Bytes an opened file owns: a read-only mapping of a file, or any owner of bytes
//! that stay put (a mapping made by the caller, a `Vec<u8>`).

use std::fmt;
use std::ops::Deref;

/// The bytes a [`HrryFile`](super::HrryFile) opened with
/// [`OpenOptions::open_mmap`](super::OpenOptions::open_mmap) reads and lends
/// tensors from: a read-only mapping of a file ([`map_file`](super::map_file),
/// [`FileSource::map`](crate::source::FileSource::map)), or any owner of bytes
/// wrapped with [`Mapping::new`]. Derefs to the bytes.
pub struct Mapping(Box<dyn AsRef<[u8]> + Send + Sync>);

impl Mapping {
    /// Takes `owner`, whose bytes must not move nor change while it is held (a
    /// memory map of the caller's own, a `Vec<u8>`, a `Box<[u8]>`).
    ///
    /// ```
    /// use hrry::file::{HrryWriter, Mapping, OpenOptions, WriterOptions};
    ///
    /// let mut w = HrryWriter::new(Vec::new(), WriterOptions::default())?;
    /// w.write_row_major::<f32>("w", &[2], &[1.0, 2.0])?;
    /// let bytes: Vec<u8> = w.finish()?;
    /// let file = OpenOptions::new().open_mmap(Mapping::new(bytes))?;
    /// assert_eq!(file.tensor("w")?.unwrap().as_slice::<f32>()?, [1.0, 2.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new<B: AsRef<[u8]> + Send + Sync + 'static>(owner: B) -> Self {
        Mapping(Box::new(owner))
    }

    /// Maps `file` read-only. A mapping shows the file as it is now: see
    /// [`map_file`](super::map_file) for the hazard.
    pub(crate) fn map(file: &std::fs::File) -> std::io::Result<Self> {
        // SAFETY: the map is read-only; another process truncating or rewriting
        // the file while it is mapped is the documented hazard of `map_file`
        // (docs/security.md).
        let map = unsafe { memmap2::Mmap::map(file)? };
        Ok(Self::new(map))
    }
}

impl Deref for Mapping {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        (*self.0).as_ref()
    }
}

impl AsRef<[u8]> for Mapping {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl fmt::Debug for Mapping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mapping").field("len", &self.len()).finish()
    }
}

//! Writing a file so that a failure never leaves a partial file under its name.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// A buffered temporary file beside `target` that becomes `target` on
/// [`AtomicFile::commit`]; dropped uncommitted, it is removed.
pub struct AtomicFile {
    target: PathBuf,
    temp: BufWriter<tempfile::NamedTempFile>,
}

impl AtomicFile {
    /// Creates the temporary file in `target`'s directory.
    pub fn create(target: &Path) -> io::Result<Self> {
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let temp = tempfile::Builder::new()
            .prefix(".hrry-tmp-")
            .tempfile_in(dir)?;
        Ok(AtomicFile {
            target: target.to_path_buf(),
            temp: BufWriter::with_capacity(1 << 20, temp),
        })
    }

    /// Flushes, syncs and renames the temporary file onto the target.
    pub fn commit(self) -> io::Result<()> {
        let temp = self.temp.into_inner().map_err(|e| e.into_error())?;
        temp.as_file().sync_all()?;
        temp.persist(&self.target).map_err(|e| e.error)?;
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.temp.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.temp.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.temp.flush()
    }
}

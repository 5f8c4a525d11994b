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
        let mut builder = tempfile::Builder::new();
        builder.prefix(".hrry-tmp-");
        // A temporary file is private (0600) by default; the finished file gets the
        // mode of any new file (0666 less the umask), like one `cp` would create.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o666));
        }
        let temp = builder.tempfile_in(dir)?;
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

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn committed_file_has_the_mode_of_a_new_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.bin");
        let mut f = AtomicFile::create(&target).unwrap();
        f.write_all(b"abc").unwrap();
        f.commit().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"abc");
        // Readable by others unless the umask says otherwise (the usual 022/002 keep
        // it); never the temporary file's private 0600 whatever the umask.
        let plain = std::fs::File::create(dir.path().join("plain")).unwrap();
        let want = plain.metadata().unwrap().permissions().mode() & 0o777;
        let got = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
        assert_eq!(got, want);
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

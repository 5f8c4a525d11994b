//! Writing a file so that a failure never leaves a partial file under its name.

use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use tempfile::TempPath;

use super::copy::CopyFrom;

/// A buffered temporary file beside `target` that becomes `target` on
/// [`AtomicFile::commit`]; dropped uncommitted, it is removed.
pub struct AtomicFile {
    target: PathBuf,
    /// A plain `BufWriter<File>`, so that `std::io::copy` into it can use
    /// `copy_file_range` (see [`CopyFrom`]).
    temp: BufWriter<File>,
    /// Removes the temporary file when dropped.
    path: TempPath,
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
        let (file, path) = builder.tempfile_in(dir)?.into_parts();
        Ok(AtomicFile {
            target: target.to_path_buf(),
            temp: BufWriter::with_capacity(1 << 20, file),
            path,
        })
    }

    /// Flushes, syncs and renames the temporary file onto the target.
    pub fn commit(self) -> io::Result<()> {
        let file = self.temp.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        self.path.persist(&self.target).map_err(|e| e.error)?;
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

impl CopyFrom for AtomicFile {
    /// Lets the kernel copy (`std::io::copy` between a file and a `BufWriter<File>`
    /// flushes the buffer and uses `copy_file_range`, falling back to read/write
    /// where the kernel or file systems refuse).
    fn copy_from(&mut self, file: &File, offset: u64, len: u64) -> io::Result<()> {
        let mut reader = file;
        reader.seek(SeekFrom::Start(offset))?;
        let copied = io::copy(&mut reader.take(len), &mut self.temp)?;
        if copied != len {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("the file ended {} bytes into a {len}-byte copy", copied),
            ));
        }
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

    #[test]
    fn kernel_copies_interleave_with_buffered_writes() {
        let dir = tempfile::tempdir().unwrap();
        let src_path = dir.path().join("src.bin");
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 241) as u8).collect();
        std::fs::write(&src_path, &data).unwrap();
        let src = File::open(&src_path).unwrap();
        let target = dir.path().join("out.bin");
        let mut f = AtomicFile::create(&target).unwrap();
        f.write_all(b"head").unwrap();
        f.copy_from(&src, 7, 50_000).unwrap();
        f.write_all(b"mid").unwrap();
        f.copy_from(&src, 0, 3).unwrap();
        assert!(f.copy_from(&src, 99_999, 2).is_err());
        f.commit().unwrap();
        let mut want = b"head".to_vec();
        want.extend_from_slice(&data[7..50_007]);
        want.extend_from_slice(b"mid");
        want.extend_from_slice(&data[..3]);
        // The failed copy appended its one available byte; a writer that sees the
        // error abandons the file, so only what came before matters here.
        let got = std::fs::read(&target).unwrap();
        assert_eq!(&got[..want.len()], &want[..]);
    }

    #[test]
    fn dropped_uncommitted_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.bin");
        let mut f = AtomicFile::create(&target).unwrap();
        f.write_all(b"abc").unwrap();
        drop(f);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}

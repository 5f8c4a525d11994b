//! Writing a file so that a failure never leaves a partial file under its name.
//!
//! A program that exits on a signal can be told of every temporary file made here
//! ([`Temporaries`]), to remove the ones left.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use tempfile::TempPath;

use super::copy::CopyFrom;

/// Told of the temporary file of every [`AtomicFile`] the process makes, and of its
/// end, so that a program can remove the ones still there when it exits on a signal
/// (`process::exit` runs no destructors: without this, an interrupted conversion
/// would leave its hidden temporary file behind). Install one with
/// [`watch_temporaries`]; the `hrry` CLI's Ctrl-C handling does.
pub trait Temporaries: Send + Sync {
    /// Makes a temporary file by calling `make`, which creates it and returns its
    /// path, and keeps the path; or refuses with an error (such as when the process
    /// is exiting) without calling `make`. Calling `make` and keeping its path in one
    /// step (under one lock) lets no file be made unseen.
    fn create(&self, make: &mut dyn FnMut() -> io::Result<PathBuf>) -> io::Result<()>;

    /// Forgets `path`: its file was renamed into place or removed.
    fn forget(&self, path: &Path);
}

static WATCH: OnceLock<&'static dyn Temporaries> = OnceLock::new();

/// Installs `watch` for every [`AtomicFile`] the process makes from now on. One
/// only: returns `false` (and changes nothing) when one is installed already.
pub fn watch_temporaries(watch: &'static dyn Temporaries) -> bool {
    WATCH.set(watch).is_ok()
}

/// `e` without the temporary file's name, which `tempfile` appends (" at path …"):
/// messages name the user's path, and the temporary name means nothing to them.
fn without_temporary_name(e: io::Error) -> io::Error {
    let text = e.to_string();
    match text.split_once(" at path ") {
        Some((cause, _)) => io::Error::new(e.kind(), cause.to_string()),
        None => e,
    }
}

/// Bytes written between two requests that the kernel start writing them to disk.
const WRITEBACK_STEP: u64 = 32 << 20;

/// A buffered temporary file beside `target` that becomes `target` on
/// [`AtomicFile::commit`]; dropped uncommitted, it is removed.
///
/// As it grows, it asks the kernel (on Linux) to start writing what it holds to
/// disk, without waiting: the disk works while the writer computes, the sync before
/// the rename finds little left to do, and a large output does not pile up as dirty
/// memory.
///
/// Prefer [`super::Output`], which adds what a command-line user expects of an
/// output path (devices, symlinks, kept modes, refusing to overwrite inputs).
pub struct AtomicFile {
    target: PathBuf,
    /// A plain `BufWriter<File>`, so that `std::io::copy` into it can use
    /// `copy_file_range` (see [`CopyFrom`]).
    temp: BufWriter<File>,
    /// Removes the temporary file when dropped; `None` once committed.
    path: Option<TempPath>,
    /// Bytes given to this file so far (some may still sit in `temp`'s buffer).
    written: u64,
    /// Bytes from the start already handed to the kernel for writing back.
    written_back: u64,
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
        let mut made = None;
        let mut make = || {
            let (file, path) = builder
                .tempfile_in(dir)
                .map_err(without_temporary_name)?
                .into_parts();
            let shown = path.to_path_buf();
            made = Some((file, path));
            Ok(shown)
        };
        match WATCH.get() {
            Some(watch) => watch.create(&mut make)?,
            None => {
                make()?;
            }
        }
        let Some((file, path)) = made else {
            return Err(io::Error::other("no temporary file was made"));
        };
        Ok(AtomicFile {
            target: target.to_path_buf(),
            temp: BufWriter::with_capacity(1 << 20, file),
            path: Some(path),
            written: 0,
            written_back: 0,
        })
    }

    /// Counts `n` more bytes, and starts writing back every [`WRITEBACK_STEP`].
    fn wrote(&mut self, n: u64) {
        self.written += n;
        if self.written - self.written_back >= WRITEBACK_STEP {
            self.start_writeback();
        }
    }

    /// Asks the kernel to start writing to disk the bytes that reached the file since
    /// the last request, and returns at once. A hint: where it is unavailable or
    /// fails, the final sync does all the work, and reports any error.
    fn start_writeback(&mut self) {
        let in_file = self.written - self.temp.buffer().len() as u64;
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let fd = self.temp.get_ref().as_raw_fd();
            if let (Ok(from), Ok(len)) = (
                i64::try_from(self.written_back),
                i64::try_from(in_file - self.written_back),
            ) {
                // SAFETY: `fd` is the descriptor of the open file `self.temp` owns, for
                // the duration of the call; sync_file_range reads no memory of ours.
                unsafe { libc::sync_file_range(fd, from, len, libc::SYNC_FILE_RANGE_WRITE) };
            }
        }
        self.written_back = in_file;
    }

    /// The temporary file (to set its permissions or owner before the commit).
    pub fn temp_file(&self) -> &File {
        self.temp.get_ref()
    }

    /// Flushes, syncs and renames the temporary file onto the target.
    pub fn commit(mut self) -> io::Result<()> {
        self.temp.flush()?;
        self.temp.get_ref().sync_all()?;
        let Some(path) = self.path.take() else {
            return Ok(());
        };
        let temp_path = path.to_path_buf();
        // A signal's cleanup removing the file first makes the rename fail (the
        // process is exiting anyway); removing it after finds nothing.
        let result = path.persist(&self.target).map_err(|e| e.error);
        forget(&temp_path);
        result
    }
}

/// Tells the installed [`Temporaries`] that `path` is gone.
fn forget(path: &Path) {
    if let Some(watch) = WATCH.get() {
        watch.forget(path);
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if let Some(path) = self.path.take() {
            let temp_path = path.to_path_buf();
            // Dropping the `TempPath` removes the file.
            drop(path);
            forget(&temp_path);
        }
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.temp.write(buf)?;
        self.wrote(n as u64);
        Ok(n)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.temp.write_all(buf)?;
        self.wrote(buf.len() as u64);
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.temp.flush()
    }
}

impl CopyFrom for AtomicFile {
    /// Lets the kernel copy (see `copy::copy_into_file`).
    fn copy_from(&mut self, file: &File, offset: u64, len: u64) -> io::Result<()> {
        super::copy::copy_into_file(file, offset, len, &mut self.temp)?;
        self.wrote(len);
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

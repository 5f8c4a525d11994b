//! Where an output goes: the one place that decides how a path is written.
//!
//! [`Output::create`] looks at the path once and picks a way to write it:
//!
//! - a path that exists and is not a regular file (a character device such as
//!   `/dev/null`, a FIFO, `/dev/stdout`) is opened and written through: replacing a
//!   device node with a regular file would break the system, and a FIFO's reader
//!   waits for data, not a rename;
//! - anything else (a new name or a regular file) is written to a temporary file
//!   beside it and renamed over it on [`Output::commit`], so a failure or an
//!   interruption never leaves a half-written file under the name. A symlink is
//!   followed, so its target is replaced and the link stays; an existing file keeps
//!   its permission bits (and, where allowed, its owner and group).
//!
//! Writing onto one of the command's own inputs (the same device and inode, which
//! catches hard links and symlinks too) is refused before anything is written.
//!
//! [`Output::through`] writes through any writer instead (standard output, say).

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::{AtomicFile, CopyFrom};

/// Why an output could not be created or completed. Messages name the user's path,
/// never the temporary file's.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The output is one of the inputs.
    #[error("refusing to write {}: it is the input {}", output.display(), input.display())]
    SameAsInput {
        /// The output path as given.
        output: PathBuf,
        /// The input path it names.
        input: PathBuf,
    },
    /// The output path is a directory.
    #[error("cannot write {}: it is a directory", path.display())]
    IsDirectory {
        /// The output path as given.
        path: PathBuf,
    },
    /// Creating, writing or renaming failed.
    #[error("cannot write {}: {source}", path.display())]
    Io {
        /// The output path as given.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
}

impl OutputError {
    /// The kind of I/O error behind this one (`InvalidInput` for a refused path).
    pub fn kind(&self) -> io::ErrorKind {
        match self {
            OutputError::Io { source, .. } => source.kind(),
            OutputError::IsDirectory { .. } => io::ErrorKind::IsADirectory,
            OutputError::SameAsInput { .. } => io::ErrorKind::InvalidInput,
        }
    }
}

impl From<OutputError> for io::Error {
    fn from(e: OutputError) -> Self {
        io::Error::new(e.kind(), e)
    }
}

/// How the bytes reach the path.
enum Sink {
    /// A temporary file renamed over the target; `keep` holds the metadata of the
    /// file it replaces.
    Atomic {
        file: AtomicFile,
        keep: Option<Box<Metadata>>,
    },
    /// An existing device, FIFO or other non-regular file, opened for writing.
    Through(BufWriter<File>),
    /// A writer given by the caller ([`Output::through`]).
    Writer(Box<dyn Write + Send>),
}

/// An output file being written (see the module documentation). Write to it, then
/// call [`Output::commit`]; dropped uncommitted, a temporary file is removed and the
/// path is untouched (written-through outputs keep what was written).
pub struct Output {
    path: PathBuf,
    sink: Sink,
}

/// How many symlinks are followed before giving up, as the kernel does (`ELOOP`).
const MAX_SYMLINKS: usize = 40;

impl Output {
    /// Opens `path` for writing; `inputs` are the command's input files, which the
    /// output must not be.
    pub fn create(path: &Path, inputs: &[&Path]) -> Result<Output, OutputError> {
        let io_err = |source| OutputError::Io {
            path: path.to_path_buf(),
            source,
        };
        let existing = match std::fs::metadata(path) {
            Ok(m) => Some(m),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(io_err(e)),
        };
        if let Some(meta) = &existing {
            for input in inputs {
                if same_file(meta, path, input) {
                    return Err(OutputError::SameAsInput {
                        output: path.to_path_buf(),
                        input: input.to_path_buf(),
                    });
                }
            }
            if meta.is_dir() {
                return Err(OutputError::IsDirectory {
                    path: path.to_path_buf(),
                });
            }
        }
        let target = match (&existing, resolve_symlinks(path).map_err(io_err)?) {
            (Some(meta), Resolved::Path(target)) if meta.is_file() => target,
            (None, Resolved::Path(target)) => target,
            // Not a regular file, or reached through /proc (as `/dev/stdout` is):
            // write to what is there.
            _ => {
                let file = OpenOptions::new()
                    .write(true)
                    .truncate(true)
                    .open(path)
                    .map_err(io_err)?;
                return Ok(Output {
                    path: path.to_path_buf(),
                    sink: Sink::Through(BufWriter::with_capacity(1 << 20, file)),
                });
            }
        };
        let file = AtomicFile::create(&target).map_err(io_err)?;
        Ok(Output {
            path: path.to_path_buf(),
            sink: Sink::Atomic {
                file,
                keep: existing.map(Box::new),
            },
        })
    }

    /// An output written through `writer` as the bytes come (standard output,
    /// say): nothing to rename, and [`Output::commit`] flushes it. `name` is what
    /// messages call it (as a path given to [`Output::create`]).
    pub fn through(name: impl Into<PathBuf>, writer: impl Write + Send + 'static) -> Output {
        Output {
            path: name.into(),
            sink: Sink::Writer(Box::new(writer)),
        }
    }

    /// The path given to [`Output::create`] (the name given to [`Output::through`]).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Finishes the output: flushes, and for a regular file syncs it, gives it the
    /// replaced file's mode and renames it into place.
    pub fn commit(self) -> Result<(), OutputError> {
        let path = self.path;
        let io_err = |source| OutputError::Io {
            path: path.clone(),
            source,
        };
        match self.sink {
            Sink::Atomic { file, keep } => {
                if let Some(meta) = &keep {
                    keep_attributes(file.temp_file(), meta).map_err(io_err)?;
                }
                file.commit().map_err(io_err)
            }
            Sink::Through(w) => {
                let file = w.into_inner().map_err(|e| io_err(e.into_error()))?;
                // Devices and FIFOs cannot be synced (EINVAL); only a regular file
                // reached through /dev/stdout can, and it is worth it there.
                if file.metadata().is_ok_and(|m| m.is_file()) {
                    file.sync_all().map_err(io_err)?;
                }
                Ok(())
            }
            Sink::Writer(mut w) => w.flush().map_err(io_err),
        }
    }

    fn sink(&mut self) -> &mut dyn Write {
        match &mut self.sink {
            Sink::Atomic { file, .. } => file,
            Sink::Through(w) => w,
            Sink::Writer(w) => w,
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.sink().write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.sink().write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.sink().flush()
    }
}

impl CopyFrom for Output {
    /// Lets the kernel copy into files and devices; a writer's bytes go through a
    /// buffer.
    fn copy_from(&mut self, file: &File, offset: u64, len: u64) -> io::Result<()> {
        match &mut self.sink {
            Sink::Atomic { file: out, .. } => out.copy_from(file, offset, len),
            Sink::Through(w) => super::copy::copy_into_file(file, offset, len, w),
            Sink::Writer(w) => super::copy::copy_through_buffer(file, offset, len, w),
        }
    }
}

/// Where a path leads once symlinks are followed.
enum Resolved {
    /// The final path (which may not exist yet: a dangling link's target is created).
    Path(PathBuf),
    /// A link into `/proc` (such as `/dev/stdout` → `/proc/self/fd/1`): its "target"
    /// is a description, not a path to rename over.
    Proc,
}

/// Follows `path` while it is a symlink.
fn resolve_symlinks(path: &Path) -> io::Result<Resolved> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_SYMLINKS {
        match std::fs::symlink_metadata(&current) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = std::fs::read_link(&current)?;
                if link.starts_with("/proc") {
                    return Ok(Resolved::Proc);
                }
                current = match current.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            _ => return Ok(Resolved::Path(current)),
        }
    }
    Err(io::Error::other(format!(
        "more than {MAX_SYMLINKS} levels of symbolic links"
    )))
}

/// Whether the file `meta` describes is `input`. Character devices are exempt:
/// reading `/dev/zero` while writing `/dev/null` names no file twice.
#[cfg(unix)]
fn same_file(meta: &Metadata, _output: &Path, input: &Path) -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    if meta.file_type().is_char_device() {
        return false;
    }
    std::fs::metadata(input).is_ok_and(|m| m.dev() == meta.dev() && m.ino() == meta.ino())
}

#[cfg(not(unix))]
fn same_file(_meta: &Metadata, output: &Path, input: &Path) -> bool {
    // No inode numbers here: compare the canonical paths.
    let canonical = |p: &Path| std::fs::canonicalize(p).ok();
    canonical(input).is_some() && canonical(input) == canonical(output)
}

/// Gives the temporary file the permission bits (and owner and group, when the
/// process may) of the file it replaces.
#[cfg(unix)]
fn keep_attributes(temp: &File, meta: &Metadata) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    // Owner first: changing it may clear set-id bits, which the mode then restores.
    // Only root may give a file away, so a failure here is expected and ignored.
    let _ = std::os::unix::fs::fchown(temp, Some(meta.uid()), Some(meta.gid()));
    temp.set_permissions(meta.permissions())
}

#[cfg(not(unix))]
fn keep_attributes(temp: &File, meta: &Metadata) -> io::Result<()> {
    temp.set_permissions(meta.permissions())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn write(path: &Path, inputs: &[&Path], bytes: &[u8]) -> Result<(), OutputError> {
        let mut out = Output::create(path, inputs)?;
        out.write_all(bytes).map_err(|source| OutputError::Io {
            path: path.into(),
            source,
        })?;
        out.commit()
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn new_and_existing_regular_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        write(&path, &[], b"one").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"one");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        write(&path, &[], b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o600);
        assert_eq!(names(dir.path()), ["out"]);
    }

    #[test]
    fn uncommitted_output_leaves_the_path_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        std::fs::write(&path, b"old").unwrap();
        let mut out = Output::create(&path, &[]).unwrap();
        out.write_all(b"new").unwrap();
        drop(out);
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(names(dir.path()), ["out"]);
    }

    #[test]
    fn symlinks_are_followed_to_their_target() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        std::fs::write(&target, b"old").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink("target", &link).unwrap();
        let link2 = dir.path().join("link2");
        std::os::unix::fs::symlink(&link, &link2).unwrap();
        write(&link2, &[], b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link2)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        // A dangling link: its target is created.
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink("made", &dangling).unwrap();
        write(&dangling, &[], b"x").unwrap();
        assert_eq!(std::fs::read(dir.path().join("made")).unwrap(), b"x");
        // A loop is an error naming the path, not a hang.
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        std::os::unix::fs::symlink(&b, &a).unwrap();
        std::os::unix::fs::symlink(&a, &b).unwrap();
        let e = write(&a, &[], b"x").unwrap_err();
        assert!(e.to_string().contains(&*a.to_string_lossy()), "{e}");
    }

    #[test]
    fn inputs_are_refused_by_inode() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in");
        std::fs::write(&input, b"data").unwrap();
        let hard = dir.path().join("hard");
        std::fs::hard_link(&input, &hard).unwrap();
        let soft = dir.path().join("soft");
        std::os::unix::fs::symlink(&input, &soft).unwrap();
        for out in [&input, &hard, &soft] {
            let e = write(out, &[Path::new("x"), &input], b"new").unwrap_err();
            assert!(matches!(e, OutputError::SameAsInput { .. }), "{e}");
        }
        assert_eq!(std::fs::read(&input).unwrap(), b"data");
        // A different file with equal content is fine.
        let other = dir.path().join("other");
        std::fs::write(&other, b"data").unwrap();
        write(&other, &[&input], b"new").unwrap();
    }

    #[test]
    fn file_ranges_are_copied_into_files_and_devices() {
        let dir = tempfile::tempdir().unwrap();
        let src_path = dir.path().join("src");
        let data: Vec<u8> = (0..70_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&src_path, &data).unwrap();
        let src = File::open(&src_path).unwrap();
        let path = dir.path().join("out");
        let mut out = Output::create(&path, &[]).unwrap();
        out.write_all(b"head").unwrap();
        out.copy_from(&src, 5, 60_000).unwrap();
        out.commit().unwrap();
        let got = std::fs::read(&path).unwrap();
        assert_eq!(&got[..4], b"head");
        assert_eq!(&got[4..], &data[5..60_005]);
        let mut null = Output::create(Path::new("/dev/null"), &[]).unwrap();
        null.copy_from(&src, 0, 70_000).unwrap();
        null.commit().unwrap();
    }

    #[test]
    fn a_writer_is_written_through() {
        #[derive(Clone, Default)]
        struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
        impl Write for Shared {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(buf);
                Ok(buf.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let src_path = dir.path().join("src");
        std::fs::write(&src_path, b"0123456789").unwrap();
        let seen = Shared::default();
        let mut out = Output::through("-", seen.clone());
        assert_eq!(out.path(), Path::new("-"));
        out.write_all(b"head").unwrap();
        out.copy_from(&File::open(&src_path).unwrap(), 2, 3)
            .unwrap();
        out.commit().unwrap();
        assert_eq!(&*seen.0.lock().unwrap(), b"head234");
    }

    #[test]
    fn devices_fifos_and_directories() {
        // /dev/null stays a device and swallows the bytes.
        write(Path::new("/dev/null"), &[], b"gone").unwrap();
        assert!(!std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_file());
        // /dev/full fails at the flush, naming the path.
        if Path::new("/dev/full").exists() {
            let e = write(Path::new("/dev/full"), &[], &[0; 4096]).unwrap_err();
            assert!(e.to_string().contains("/dev/full"), "{e}");
        }
        let dir = tempfile::tempdir().unwrap();
        let e = write(dir.path(), &[], b"x").unwrap_err();
        assert!(matches!(e, OutputError::IsDirectory { .. }), "{e}");
    }
}

//! The temporary files of the outputs being written, removed when a signal ends the
//! process (`process::exit` runs no destructors): a registry the library tells of
//! every temporary file it makes ([`hrry::file::Temporaries`]).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// The temporary files of uncommitted outputs, and whether the process is exiting
/// (then no new temporary file is made).
struct Registry {
    paths: Vec<PathBuf>,
    closing: bool,
}

/// The process's registry, told of the library's temporary files once
/// [`install`]ed.
struct Watch(Mutex<Registry>);

static WATCH: Watch = Watch(Mutex::new(Registry {
    paths: Vec::new(),
    closing: false,
}));

impl Watch {
    fn lock(&self) -> MutexGuard<'_, Registry> {
        // A panic while holding the lock leaves the list intact; keep using it.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl hrry::file::Temporaries for Watch {
    fn create(&self, make: &mut dyn FnMut() -> io::Result<PathBuf>) -> io::Result<()> {
        // Made under the lock, so a concurrent `remove_all` either sees this file or
        // makes us refuse to create it.
        let mut r = self.lock();
        if r.closing {
            return Err(io::Error::new(
                io::ErrorKind::Interrupted,
                "the process is exiting",
            ));
        }
        let path = make()?;
        r.paths.push(path);
        Ok(())
    }

    fn forget(&self, path: &Path) {
        self.lock().paths.retain(|p| p != path);
    }
}

/// Has the library tell the registry of every temporary file it makes.
pub fn install() {
    hrry::file::watch_temporaries(&WATCH);
}

/// Removes the temporary file of every uncommitted output of this process and
/// refuses to make new ones, for a process about to exit on a signal. Returns how
/// many files were removed. Call it from an ordinary thread (such as the
/// signal-handling thread), not from inside a signal handler: it takes a lock.
pub fn remove_all() -> usize {
    let mut r = WATCH.lock();
    r.closing = true;
    let mut removed = 0;
    for path in r.paths.drain(..) {
        if std::fs::remove_file(&path).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrry::file::AtomicFile;

    #[test]
    fn the_registry_lists_uncommitted_files_only() {
        install();
        let dir = tempfile::tempdir().unwrap();
        let listed = |p: &Path| WATCH.lock().paths.iter().any(|q| q.starts_with(p));
        let a = AtomicFile::create(&dir.path().join("a")).unwrap();
        assert!(listed(dir.path()));
        a.commit().unwrap();
        assert!(!listed(dir.path()));
        let b = AtomicFile::create(&dir.path().join("b")).unwrap();
        assert!(listed(dir.path()));
        drop(b);
        assert!(!listed(dir.path()));
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("a")]);
    }
}

//! Opening a command's inputs: whole inputs (standard input, pipes) and HRRYFILEs
//! (local or remote), with the errors every command words the same way.

use std::path::Path;

use crate::args::PolicyArg;
use crate::outcome::Failure;
use crate::{input, remote, text};

/// Reads a whole input: `-` (standard input) or a regular file; the error names
/// the path. See [`input::Input`].
pub fn read_input(path: &Path) -> Result<input::Input, String> {
    input::Input::read(path, false).map_err(|e| format!("cannot read {}: {e}", text::path(path)))
}

/// [`read_input`] that also reads a named pipe (a FIFO, `<(…)`) whole.
pub fn read_input_or_pipe(path: &Path) -> Result<input::Input, String> {
    input::Input::read(path, true).map_err(|e| format!("cannot read {}: {e}", text::path(path)))
}

/// Reports on standard error that `path` is not a readable HRRYFILE (exit 1 follows).
pub fn report_invalid(path: &Path, e: &hrry::file::Error) {
    eprintln!("{}: {}", text::path(path), text::safe(&e.to_string()));
}

/// Opens a HRRYFILE for a command under `policy`. An I/O error is a failure (exit
/// 2); a file that cannot be read as a HRRYFILE is reported on stderr and gives
/// `None` (exit 1).
pub fn open_hrry(
    path: &Path,
    policy: PolicyArg,
) -> Result<Option<hrry::file::HrryFile<'static>>, Failure> {
    let open = hrry::file::OpenOptions::new().rules(policy.into());
    if let Some(url) = remote::url(path) {
        return match remote::open_file(url, &open) {
            Ok(f) => Ok(Some(f)),
            Err(remote::OpenFailure::Read(message)) => Err(Failure(message)),
            Err(remote::OpenFailure::Invalid(e)) => {
                report_invalid(path, &e);
                Ok(None)
            }
        };
    }
    // Read, not mapped: a file changed meanwhile is an error, not a SIGBUS.
    match open.open_read(path) {
        Ok(f) => Ok(Some(f)),
        Err(hrry::file::Error::Io(e)) => {
            Err(Failure(format!("cannot read {}: {e}", text::path(path))))
        }
        Err(e) => {
            report_invalid(path, &e);
            Ok(None)
        }
    }
}

/// The format of the file at `path` (a regular file), recognised by its first
/// bytes or its name ([`hrry::Format::recognise`]); `None` when neither says.
pub fn recognise(path: &Path) -> Result<Option<hrry::Format>, Failure> {
    let cannot_read = |e: std::io::Error| Failure(format!("cannot read {}: {e}", text::path(path)));
    let source = hrry::source::FileSource::open(path).map_err(cannot_read)?;
    hrry::Format::recognise_source(&source, Some(path)).map_err(cannot_read)
}

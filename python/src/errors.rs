//! The exception hierarchy and the translation of the core's errors into it.
//!
//! `HrryError` (a `ValueError`) is the base of everything a file or an argument can
//! cause; `InvalidFileError` carries the validator's violations; `InternalError`
//! reports a Rust panic caught at the boundary (a bug in `hrry`, never the
//! interpreter's end). I/O problems are `OSError`s with the path.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::violation::Violation;

pyo3::create_exception!(
    hrry,
    HrryError,
    PyValueError,
    "Base class of the errors hrry raises for a file or an argument it cannot accept."
);
pyo3::create_exception!(
    hrry,
    InvalidFileError,
    HrryError,
    "The file breaks rules of the format. `.violations` lists each one (a `Violation` \
     with `.rule`, `.level`, `.offset` and `.message`)."
);
pyo3::create_exception!(
    hrry,
    InternalError,
    HrryError,
    "A bug in hrry (a Rust panic caught at the boundary). Please report it with the input."
);

/// Most violations named in an `InvalidFileError`'s message (all are in
/// `.violations`).
const MESSAGE_VIOLATIONS: usize = 3;

/// An `InvalidFileError` for `path` listing `violations`.
pub(crate) fn invalid_file(
    py: Python<'_>,
    what: &str,
    violations: Vec<Violation>,
    suppressed: u64,
) -> PyErr {
    // A refusal by hrry's own rules only is the policy's, not the spec's verdict.
    let policy = !violations.is_empty() && violations.iter().all(|v| v.level != "spec");
    let mut message = format!(
        "{what}: {}{} violation(s)",
        if policy {
            "refused by the hardening policy (not a spec violation): "
        } else {
            ""
        },
        violations.len() as u64 + suppressed
    );
    for v in violations.iter().take(MESSAGE_VIOLATIONS) {
        message.push_str(&format!(
            "\n  {} at offset {}: {}",
            v.rule, v.offset, v.message
        ));
    }
    if violations.len() > MESSAGE_VIOLATIONS {
        message.push_str("\n  … (see .violations)");
    }
    let err = InvalidFileError::new_err(message);
    let attach = || -> PyResult<()> {
        let list = PyList::new(py, violations)?;
        err.value(py).setattr("violations", list)
    };
    match attach() {
        Ok(()) => err,
        Err(e) => e,
    }
}

/// The Python error for an error of the file layer: a broken rule becomes an
/// `InvalidFileError` with that one violation.
pub(crate) fn file_error(py: Python<'_>, what: &str, e: hrry::file::Error) -> PyErr {
    use hrry::file::Error;
    match e {
        Error::Io(e) => PyOSError::new_err(format!("{what}: {e}")),
        Error::Invalid(v) => {
            let v = Violation {
                rule: v.rule.id.to_string(),
                level: v.rule.level.name().to_string(),
                offset: v.offset,
                message: v.message,
            };
            invalid_file(py, what, vec![v], 0)
        }
        other => HrryError::new_err(format!("{what}: {other}")),
    }
}

/// An `OSError` naming `path`, of the subclass the OS error number selects
/// (`FileNotFoundError`, `PermissionError`, …).
pub(crate) fn io_error(path: &Path, e: std::io::Error) -> PyErr {
    os_error(path.display().to_string(), e)
}

/// An `OSError` whose `filename` is `file` (a path, or a network address), of the
/// subclass the OS error number selects. A path that is not a regular file gets
/// the core's one message for it (`not a regular file (it is …)`), as `OSError`
/// with `errno` `EISDIR` for a directory (so `IsADirectoryError`) and `EINVAL`
/// otherwise.
pub(crate) fn os_error(file: String, e: std::io::Error) -> PyErr {
    if let Some(not) = hrry::source::not_regular_file(&e) {
        // EISDIR and EINVAL are 21 and 22 on every platform the bindings build for.
        let code = if e.kind() == std::io::ErrorKind::IsADirectory {
            21
        } else {
            22
        };
        return PyOSError::new_err((code, not.to_string(), file));
    }
    match e.raw_os_error() {
        Some(code) => {
            let text = e.to_string();
            // std appends " (os error N)"; Python's strerror has no such suffix.
            let text = text
                .rsplit_once(" (os error")
                .map_or(text.as_str(), |(t, _)| t)
                .to_string();
            PyOSError::new_err((code, text, file))
        }
        None => PyOSError::new_err(format!("{file}: {e}")),
    }
}

/// Runs `f`, turning a panic into an `InternalError`.
pub(crate) fn guard<T>(f: impl FnOnce() -> T) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| internal(&*payload))
}

/// Runs `f` with the interpreter released (other Python threads run meanwhile),
/// turning a panic into an `InternalError`.
pub(crate) fn detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    py.detach(|| catch_unwind(AssertUnwindSafe(f)).map_err(|p| panic_text(&*p)))
        .map_err(|text| InternalError::new_err(internal_message(&text)))
}

fn internal(payload: &(dyn std::any::Any + Send)) -> PyErr {
    InternalError::new_err(internal_message(&panic_text(payload)))
}

fn internal_message(text: &str) -> String {
    format!("internal error in hrry (please report it with the input): {text}")
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".to_string()
    }
}

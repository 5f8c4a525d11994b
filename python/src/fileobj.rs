//! A [`ReadAt`] over a Python binary file object (anything with `seek` and `read`:
//! an open file, `io.BytesIO`, an fsspec file of s3fs, gcsfs or `hf://`), so the
//! core reads only the bytes it needs from it.
//!
//! The core reads with the interpreter released; each read takes a lock of its own
//! (the object has one cursor), then attaches to the interpreter for `seek` and
//! `read`. The lock is always taken before the interpreter, never while holding
//! it, so a file object that releases the interpreter inside `read` (as real files
//! and network files do) cannot deadlock another reader. The first Python
//! exception a call raises, or the first misbehaviour of the object (a short read,
//! a read past what was asked, a `str` where bytes were due), is kept: callers
//! raise it ([`FileObject::take_error`]) instead of any verdict. The object's
//! position is left where the last read ended.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use hrry::source::ReadAt;
use pyo3::exceptions::{PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyMemoryView, PyString};

/// Most bytes asked of the object by one `read` call: a larger read is split, so
/// no single answer is larger than this.
const MAX_READ: usize = 16 << 20;

/// A seekable binary file object read at offsets.
pub(crate) struct FileObject {
    object: Py<PyAny>,
    /// How messages name the object (its `name` or `path`, else its type).
    shown: String,
    len: u64,
    /// Held across each `seek` + `read` pair: the object has one cursor.
    cursor: Mutex<()>,
    /// The first failure, raised by the caller instead of a result.
    error: Mutex<Option<PyErr>>,
    reads: AtomicU64,
    bytes: AtomicU64,
}

/// True when `object` looks like a binary file object (has `read` and `seek`).
pub(crate) fn is_file_object(object: &Bound<'_, PyAny>) -> bool {
    object.hasattr("read").unwrap_or(false) && object.hasattr("seek").unwrap_or(false)
}

/// How messages name `object`: its `path` (fsspec) or `name` (open files) when
/// that is a `str`, else `<TYPE object>`.
fn shown(object: &Bound<'_, PyAny>) -> String {
    for attribute in ["path", "name"] {
        if let Ok(name) = object.getattr(attribute) {
            if let Ok(name) = name.extract::<String>() {
                return hrry::remote::redact(&name);
            }
        }
    }
    format!("<{} object>", type_name(object))
}

/// The name of `object`'s type.
pub(crate) fn type_name(object: &Bound<'_, PyAny>) -> String {
    object
        .get_type()
        .name()
        .map_or_else(|_| "?".to_string(), |n| n.to_string())
}

/// Reads up to `buf.len()` bytes with `object.read(n)` (`bytes`, `bytearray` or
/// `memoryview` answers); returns how many came (0 at the end). `what` names the
/// object in errors: for an answer that is not bytes (`None` from a
/// non-blocking source, `str` from a text file) or longer than asked.
pub(crate) fn read_into(object: &Bound<'_, PyAny>, buf: &mut [u8], what: &str) -> PyResult<usize> {
    let py = object.py();
    let got = object.call_method1("read", (buf.len(),))?;
    if got.is_none() {
        return Err(PyValueError::new_err(format!(
            "{what}: read() returned None (a non-blocking source with no data); \
             give a blocking file object"
        )));
    }
    let bytes = if let Ok(b) = got.cast::<PyBytes>() {
        b.clone()
    } else if got.is_instance_of::<PyByteArray>() || got.is_instance_of::<PyMemoryView>() {
        py.get_type::<PyBytes>()
            .call1((&got,))?
            .cast_into::<PyBytes>()?
    } else {
        let hint = if got.is_instance_of::<PyString>() {
            " (open the file in binary mode, 'rb')"
        } else {
            ""
        };
        return Err(PyTypeError::new_err(format!(
            "{what}: read() must return bytes, not {}{hint}",
            type_name(&got)
        )));
    };
    let data = bytes.as_bytes();
    if data.len() > buf.len() {
        return Err(PyValueError::new_err(format!(
            "{what}: read({}) returned {} bytes",
            buf.len(),
            data.len()
        )));
    }
    buf[..data.len()].copy_from_slice(data);
    Ok(data.len())
}

impl FileObject {
    /// Wraps `object`, taking its length by seeking to its end. `TypeError` when
    /// it is not seekable (`seekable()` false).
    pub(crate) fn new(object: &Bound<'_, PyAny>) -> PyResult<FileObject> {
        let shown = shown(object);
        if object.hasattr("seekable")? && !object.call_method0("seekable")?.is_truthy()? {
            return Err(PyTypeError::new_err(format!(
                "{shown}: the file object is not seekable (hrry reads at offsets; \
                 read it into bytes first)"
            )));
        }
        object.call_method1("seek", (0, 2))?;
        let len: u64 = object
            .call_method0("tell")?
            .extract()
            .map_err(|_| PyTypeError::new_err(format!("{shown}: tell() did not return an int")))?;
        Ok(FileObject {
            object: object.clone().unbind(),
            shown,
            len,
            cursor: Mutex::new(()),
            error: Mutex::new(None),
            reads: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
        })
    }

    /// How messages name the object.
    pub(crate) fn shown(&self) -> &str {
        &self.shown
    }

    /// `read` calls made and bytes they returned so far.
    pub(crate) fn stats(&self) -> (u64, u64) {
        (
            self.reads.load(Ordering::Relaxed),
            self.bytes.load(Ordering::Relaxed),
        )
    }

    /// The first failure of a read, if any (then no result of the core may be
    /// trusted: raise this instead).
    pub(crate) fn take_error(&self) -> Option<PyErr> {
        self.error.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// Keeps `err` if it is the first failure; returns the I/O error the core sees.
    fn fail(&self, err: PyErr) -> io::Error {
        let text = err.to_string();
        let mut slot = self.error.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some(err);
        }
        io::Error::other(format!("{}: {text}", self.shown))
    }

    /// Seeks to `offset` and fills `buf` with `read` calls, with the interpreter.
    fn fill(&self, py: Python<'_>, offset: u64, buf: &mut [u8]) -> PyResult<()> {
        let object = self.object.bind(py);
        object.call_method1("seek", (offset,))?;
        let mut done = 0;
        while done < buf.len() {
            let want = (buf.len() - done).min(MAX_READ);
            let got = read_into(object, &mut buf[done..done + want], &self.shown)?;
            self.reads.fetch_add(1, Ordering::Relaxed);
            if got == 0 {
                return Err(PyOSError::new_err(format!(
                    "{}: the file ended at offset {} while reading {} bytes at offset {offset} \
                     (it was {} bytes when opened: it changed, or its seek/read disagree)",
                    self.shown,
                    offset + done as u64,
                    buf.len(),
                    self.len
                )));
            }
            self.bytes.fetch_add(got as u64, Ordering::Relaxed);
            done += got;
        }
        Ok(())
    }
}

impl ReadAt for FileObject {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let fits = offset
            .checked_add(buf.len() as u64)
            .is_some_and(|end| end <= self.len);
        if !fits {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "{}: read of {} bytes at offset {offset} runs past the end of the {}-byte file",
                    self.shown,
                    buf.len(),
                    self.len
                ),
            ));
        }
        if buf.is_empty() {
            return Ok(());
        }
        // The cursor lock first, then the interpreter (see the module docs).
        let _cursor = self.cursor.lock().unwrap_or_else(|e| e.into_inner());
        Python::attach(|py| self.fill(py, offset, buf)).map_err(|e| self.fail(e))
    }
}

//! What a Python argument naming a file stands for: a local path, a URL
//! (`http://`, `https://`, `s3://`), a binary file object, or the bytes themselves;
//! and the sources the core reads URLs and file objects through.

use std::path::PathBuf;

use hrry::remote::{RemoteOptions, RemoteSource};
use hrry::source::ReadAt;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyMemoryView, PyString};

use crate::errors::detached;
use crate::fileobj::{is_file_object, type_name, FileObject};

/// A file argument, classified.
pub(crate) enum Input<'py> {
    /// A local file (`str` that is not a URL, or `os.PathLike`).
    Path(PathBuf),
    /// An `http://`, `https://` or `s3://` URL (a `str`).
    Url(String),
    /// A binary file object with `seek` and `read`.
    Object(Bound<'py, PyAny>),
    /// The bytes themselves (`bytes`, or a copy of a `bytearray` or `memoryview`),
    /// when the caller takes them.
    Bytes(Bound<'py, PyBytes>),
}

impl<'py> Input<'py> {
    /// Classifies `object`. `bytes_too` says whether bytes-like objects are
    /// accepted; `TypeError` names what is, for anything else.
    pub(crate) fn of(object: &Bound<'py, PyAny>, bytes_too: bool) -> PyResult<Input<'py>> {
        let py = object.py();
        if bytes_too {
            if let Ok(bytes) = object.cast::<PyBytes>() {
                return Ok(Input::Bytes(bytes.clone()));
            }
            if object.is_instance_of::<PyByteArray>() || object.is_instance_of::<PyMemoryView>() {
                let owned = py.get_type::<PyBytes>().call1((object,))?;
                return Ok(Input::Bytes(owned.cast_into::<PyBytes>()?));
            }
        }
        if let Ok(text) = object.cast::<PyString>() {
            // A str that is not UTF-8 (surrogate escapes) is a path, never a URL.
            if let Ok(text) = text.to_cow() {
                if hrry::remote::is_url(&text) {
                    return Ok(Input::Url(text.into_owned()));
                }
            }
        }
        if let Ok(path) = object.extract::<PathBuf>() {
            return Ok(Input::Path(path));
        }
        if is_file_object(object) {
            return Ok(Input::Object(object.clone()));
        }
        Err(PyTypeError::new_err(format!(
            "expected a path (str or os.PathLike), an http://, https:// or s3:// URL, \
             a binary file object with seek() and read(){}, not {}",
            if bytes_too { " or bytes" } else { "" },
            type_name(object)
        )))
    }
}

/// The network options of a function that opens URLs: its ``timeout``,
/// ``stall_timeout`` (seconds) and ``retries`` keyword arguments, each `None` for
/// the default of `hrry::remote::RemoteOptions`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Net {
    timeout: Option<f64>,
    stall_timeout: Option<f64>,
    retries: Option<u32>,
}

impl Net {
    /// The options, checked: `ValueError` for a number of seconds that is not
    /// above 0 (and at most a day).
    pub(crate) fn new(
        timeout: Option<f64>,
        stall_timeout: Option<f64>,
        retries: Option<u32>,
    ) -> PyResult<Net> {
        for (name, value) in [("timeout", timeout), ("stall_timeout", stall_timeout)] {
            if let Some(v) = value {
                if !(v.is_finite() && v > 0.0 && v <= 86_400.0) {
                    return Err(PyValueError::new_err(format!(
                        "{name} must be a number of seconds above 0 and at most 86400, not {v}"
                    )));
                }
            }
        }
        Ok(Net {
            timeout,
            stall_timeout,
            retries,
        })
    }

    /// The remote options these set.
    fn options(&self) -> RemoteOptions {
        let mut options = RemoteOptions::default();
        if let Some(t) = self.timeout {
            options.timeout = std::time::Duration::from_secs_f64(t);
        }
        if let Some(t) = self.stall_timeout {
            options.stall_timeout = std::time::Duration::from_secs_f64(t);
        }
        if let Some(n) = self.retries {
            options.retries = n;
        }
        options
    }
}

/// A source read through the network or through Python: a URL or a file object.
pub(crate) enum Remote {
    /// A file behind a URL.
    Url(Box<RemoteSource>),
    /// A Python file object.
    Object(FileObject),
}

impl Remote {
    /// Opens the URL `url` (one suffix request, with the interpreter released);
    /// `OSError` (`FileNotFoundError`, `PermissionError`, `TimeoutError`, …) with a
    /// message naming the URL, without its credentials.
    /// `net` sets the request and stall timeouts and the retries.
    pub(crate) fn url(py: Python<'_>, url: &str, net: &Net) -> PyResult<Remote> {
        let options = net.options();
        let source = detached(py, || RemoteSource::open(url, &options))??;
        Ok(Remote::Url(Box::new(source)))
    }

    /// Wraps the file object `object`.
    pub(crate) fn object(object: &Bound<'_, PyAny>) -> PyResult<Remote> {
        Ok(Remote::Object(FileObject::new(object)?))
    }

    /// The source, for the core.
    pub(crate) fn source(&self) -> &(dyn ReadAt + Send) {
        match self {
            Remote::Url(s) => &**s,
            Remote::Object(o) => o,
        }
    }

    /// How messages and reports name it (a URL without its credentials).
    pub(crate) fn shown(&self) -> &str {
        match self {
            Remote::Url(s) => s.url(),
            Remote::Object(o) => o.shown(),
        }
    }

    /// A path whose extension helps recognise the format (the URL's path, the
    /// object's name).
    pub(crate) fn name_hint(&self) -> PathBuf {
        let shown = self.shown();
        PathBuf::from(shown.split(['?', '#']).next().unwrap_or(shown))
    }

    /// What reading has cost so far: `{"requests", "bytes", "retries"}` (for a file
    /// object, its `read` calls and the bytes they returned).
    pub(crate) fn fetched(&self) -> Fetched {
        match self {
            Remote::Url(s) => {
                let s = s.stats();
                Fetched {
                    requests: s.requests,
                    bytes: s.bytes,
                    retries: s.retries,
                }
            }
            Remote::Object(o) => {
                let (reads, bytes) = o.stats();
                Fetched {
                    requests: reads,
                    bytes,
                    retries: 0,
                }
            }
        }
    }

    /// The Python exception a file object raised (or its misbehaviour), if any:
    /// raised instead of whatever the core made of the failed read.
    pub(crate) fn take_error(&self) -> Option<PyErr> {
        match self {
            Remote::Url(_) => None,
            Remote::Object(o) => o.take_error(),
        }
    }

    /// The error to raise for the failure `e` of the core reading this source:
    /// the file object's own exception when it raised one, else an `OSError`
    /// (subclass by kind) naming the source.
    pub(crate) fn error(&self, e: std::io::Error) -> PyErr {
        self.take_error().unwrap_or_else(|| {
            let text = e.to_string();
            let named = if text.contains(self.shown()) {
                text
            } else {
                format!("{}: {text}", self.shown())
            };
            std::io::Error::new(e.kind(), named).into()
        })
    }
}

/// The source itself (a `HrryFile` reads it through an `Arc`).
impl ReadAt for Remote {
    fn len(&self) -> u64 {
        self.source().len()
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        self.source().read_at(offset, buf)
    }

    fn prefetch(&self, ranges: &[(u64, u64)]) {
        self.source().prefetch(ranges)
    }
}

/// What reading a remote source cost: requests (or `read` calls), body bytes and
/// retries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Fetched {
    pub requests: u64,
    pub bytes: u64,
    pub retries: u64,
}

impl Fetched {
    /// As a ``dict`` `{"requests", "bytes", "retries"}`.
    pub(crate) fn to_dict<'py>(self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("requests", self.requests)?;
        d.set_item("bytes", self.bytes)?;
        d.set_item("retries", self.retries)?;
        Ok(d)
    }

    /// From such a ``dict``.
    pub(crate) fn from_dict(d: &Bound<'_, PyAny>) -> PyResult<Fetched> {
        let field = |k: &str| -> PyResult<u64> { d.get_item(k)?.extract() };
        Ok(Fetched {
            requests: field("requests")?,
            bytes: field("bytes")?,
            retries: field("retries")?,
        })
    }
}

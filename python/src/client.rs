//! `hrry.Client`: a blocking client of a tensor server (`hrry serve`), wrapping the
//! core's [`hrry::serve::client::Client`]. Every network call runs with the
//! interpreter released; a fetched tensor comes out as the array `hrry fetch -o
//! X.npy` writes.

use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use hrry::export::{self, ExportOptions};
use hrry::file::HrryFile;
use hrry::schema::{layout_name, LAYOUT_ROW_MAJOR};
use hrry::serve::client::{
    error_name, write_received, Client as Core, ClientError, ClientOptions, FetchOptions, Received,
};
use pyo3::exceptions::{PyTimeoutError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

use crate::array::owned_array;
use crate::errors::{detached, os_error, HrryError};
use crate::file::{descriptor_info, File};
use crate::mapping::tensor_error;

pyo3::create_exception!(
    hrry,
    ServerError,
    HrryError,
    "The server answered with ERROR. `.code` is the spec's error_code (an int), \
     `.name` its name (\"UNKNOWN_TENSOR\", …) and `.server_message` the server's text. \
     The connection stays usable."
);
pyo3::create_exception!(
    hrry,
    ProtocolError,
    HrryError,
    "The server broke the protocol, or sent more than this client accepts. The \
     connection is closed."
);

/// A connection to a tensor server: ``hrry.Client("HOST:PORT", timeout=None)``.
/// A context manager; ``close()`` ends the connection. Methods may be called from
/// several threads (calls on one client run one after another).
#[pyclass(module = "hrry", frozen)]
pub struct Client {
    address: String,
    core: Mutex<Option<Core>>,
}

/// The Python exception for a client error on `address`.
fn client_error(py: Python<'_>, address: &str, e: ClientError) -> PyErr {
    match e {
        ClientError::Io(e) => net_error(address, e),
        ClientError::Server { code, message } => {
            let err = ServerError::new_err(format!(
                "{address}: server error {code:#04x} ({}): {message}",
                error_name(code)
            ));
            let attach = || -> PyResult<()> {
                let v = err.value(py);
                v.setattr("code", code)?;
                v.setattr("name", error_name(code))?;
                v.setattr("server_message", message)
            };
            match attach() {
                Ok(()) => err,
                Err(e) => e,
            }
        }
        ClientError::Protocol(m) | ClientError::Limit(m) => {
            ProtocolError::new_err(format!("{address}: {m}"))
        }
        ClientError::TimedOut(m) => PyTimeoutError::new_err(format!("{address}: {m}")),
        ClientError::Closed(m) => {
            pyo3::exceptions::PyConnectionError::new_err(format!("{address}: {m}"))
        }
    }
}

/// `TimeoutError` for a socket timeout, else an `OSError` (of the subclass its
/// error number selects: `ConnectionRefusedError`, …) naming `address`.
fn net_error(address: &str, e: std::io::Error) -> PyErr {
    use std::io::ErrorKind;
    if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) {
        return PyTimeoutError::new_err(format!("{address}: timed out"));
    }
    os_error(address.to_string(), e)
}

/// `"HOST:PORT"` or a ``(host, port)`` tuple, as `HOST:PORT`.
fn address_arg(address: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(s) = address.extract::<String>() {
        if s.is_empty() {
            return Err(PyValueError::new_err("the address is empty (HOST:PORT)"));
        }
        return Ok(s);
    }
    if let Ok(t) = address.cast::<PyTuple>() {
        if let Ok((host, port)) = t.extract::<(String, u16)>() {
            return Ok(if host.contains(':') {
                format!("[{host}]:{port}")
            } else {
                format!("{host}:{port}")
            });
        }
    }
    Err(PyTypeError::new_err(
        "the address is a str \"HOST:PORT\" or a (host, port) tuple",
    ))
}

/// Seconds as a socket timeout (`None`: wait forever).
fn timeout_arg(timeout: Option<f64>) -> PyResult<Option<Duration>> {
    match timeout {
        None => Ok(None),
        Some(t) if t.is_finite() && t > 0.0 && t < 1e9 => Ok(Some(Duration::from_secs_f64(t))),
        Some(t) => Err(PyValueError::new_err(format!(
            "timeout must be a positive number of seconds or None, not {t}"
        ))),
    }
}

/// The layout tag named `name` (a spec name such as ``"row-major"`` or ``"csr"``),
/// or given as an int.
fn layout_arg(layout: &Bound<'_, PyAny>) -> PyResult<u8> {
    if let Ok(tag) = layout.extract::<i64>() {
        return u8::try_from(tag)
            .map_err(|_| PyValueError::new_err(format!("layout tag {tag} is not in 0..=255")));
    }
    let name: String = layout.extract().map_err(|_| {
        PyTypeError::new_err("layout is a name (\"row-major\", \"csr\", …), an int tag or None")
    })?;
    (0..=u8::MAX)
        .find(|&t| layout_name(t) == name && !matches!(name.as_str(), "extension" | "unknown"))
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "unknown layout {name:?} (try \"row-major\", \"csr\", …)"
            ))
        })
}

/// The request for `layout`: row-major with transcoding when none is named (or
/// row-major is), else the named layout as stored.
fn fetch_options(layout: Option<&Bound<'_, PyAny>>) -> PyResult<FetchOptions> {
    let tag = match layout {
        Some(l) if !l.is_none() => layout_arg(l)?,
        _ => LAYOUT_ROW_MAJOR,
    };
    Ok(FetchOptions {
        layouts: vec![tag],
        allow_transcode: tag == LAYOUT_ROW_MAJOR,
        ..FetchOptions::default()
    })
}

impl Client {
    fn lock(&self) -> MutexGuard<'_, Option<Core>> {
        self.core.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on the connection with the interpreter released. A failure other
    /// than a server's ERROR leaves the connection in an unknown state: it is closed.
    fn call<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Core) -> Result<T, ClientError> + Send,
    ) -> PyResult<T> {
        let result = detached(py, || {
            let mut guard = self.lock();
            let core = guard.as_mut()?;
            let result = f(core);
            if matches!(&result, Err(e) if !matches!(e, ClientError::Server { .. })) {
                *guard = None;
            }
            Some(result)
        })?;
        match result {
            None => Err(PyValueError::new_err(format!(
                "{}: operation on a closed client",
                self.address
            ))),
            Some(r) => r.map_err(|e| client_error(py, &self.address, e)),
        }
    }

    fn fetch_tensors(
        &self,
        py: Python<'_>,
        key: &str,
        layout: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<Received>> {
        let how = fetch_options(layout)?;
        self.call(py, |c| c.fetch(key, &how))
    }
}

#[pymethods]
impl Client {
    /// Connects to the server at ``address`` (``"HOST:PORT"`` or ``(host, port)``)
    /// and exchanges HELLOs. ``timeout`` (seconds) bounds each read and write on the
    /// socket (``None``: wait forever); when it passes, the call raises
    /// ``TimeoutError`` and the connection is closed. ``OSError`` (such as
    /// ``ConnectionRefusedError``) if the server cannot be reached.
    #[new]
    #[pyo3(signature = (address, *, timeout = None))]
    fn new(py: Python<'_>, address: &Bound<'_, PyAny>, timeout: Option<f64>) -> PyResult<Self> {
        let address = address_arg(address)?;
        let options = ClientOptions {
            timeout: timeout_arg(timeout)?,
            ..ClientOptions::default()
        };
        let core = detached(py, || Core::connect_with(address.as_str(), options))?
            .map_err(|e| client_error(py, &address, e))?;
        Ok(Client {
            address,
            core: Mutex::new(Some(core)),
        })
    }

    /// Fetches tensor ``key`` as a NumPy array: exactly the array ``hrry fetch -o
    /// X.npy`` writes and ``File.get_tensor`` gives for the stored tensor (same dtype
    /// rules, logical row-major order). By default the server is asked for row-major
    /// and transcodes; ``layout`` (a name such as ``"csr"``, or a tag) asks for that
    /// layout instead, which is converted here. ``ServerError`` (``.name ==
    /// "UNKNOWN_TENSOR"``) if the server has no such tensor.
    #[pyo3(signature = (key, *, layout = None))]
    fn fetch<'py>(
        &self,
        py: Python<'py>,
        key: &str,
        layout: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let tensors = self.fetch_tensors(py, key, layout)?;
        let what = format!("{}: {key}", self.address);
        let Some(desc) = tensors.first().map(|t| &t.descriptor) else {
            return Err(ProtocolError::new_err(format!(
                "{what}: no tensor received"
            )));
        };
        let dtype = export::export_dtype(desc).map_err(|e| tensor_error(py, &what, key, e))?;
        // Converted as `hrry fetch` does: the response as a file, exported.
        let data = detached(py, || {
            let bytes = write_received(key, &tensors, Vec::new())?;
            let file = HrryFile::from_bytes(&bytes)?;
            export::row_major_bytes(&file, key, &ExportOptions::default())
        })?
        .map_err(|e| tensor_error(py, &what, key, e))?;
        owned_array(py, data, dtype.descr, &desc.shape)
    }

    /// Fetches tensor ``key`` as received, without conversion: a list of
    /// ``(info, buffers)`` pairs, one per tensor of the response (a composite's head
    /// then its members), where ``info`` is the dict ``File.info`` gives and
    /// ``buffers`` a list of ``bytes``, one per buffer of its buffer table.
    /// ``layout`` as in `fetch`, except that by default the stored layout is asked
    /// for (no transcoding).
    #[pyo3(signature = (key, *, layout = None))]
    fn fetch_raw<'py>(
        &self,
        py: Python<'py>,
        key: &str,
        layout: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let how = match layout {
            Some(l) if !l.is_none() => fetch_options(Some(l))?,
            _ => FetchOptions::default(),
        };
        let tensors = self.call(py, |c| c.fetch(key, &how))?;
        let out = PyList::empty(py);
        for t in &tensors {
            let info = descriptor_info(py, &t.descriptor)?;
            let buffers: Vec<Bound<'py, PyBytes>> = t
                .buffers()
                .into_iter()
                .map(|b| PyBytes::new(py, b))
                .collect();
            out.append((info, buffers))?;
        }
        Ok(out)
    }

    /// Pushes tensor ``key`` of ``file`` (an open `File`, or what ``hrry.open``
    /// takes: a path, URL or file object, opened and validated strictly) to the server, which stores it under ``key`` or
    /// ``as_key`` — what ``hrry put`` does. ``KeyError`` if the file has no such
    /// tensor; ``ServerError`` if the server refuses it.
    #[pyo3(signature = (file, key, *, as_key = None))]
    fn put(
        &self,
        py: Python<'_>,
        file: &Bound<'_, PyAny>,
        key: &str,
        as_key: Option<&str>,
    ) -> PyResult<()> {
        let opened;
        let file = match file.cast::<File>() {
            Ok(f) => f.clone(),
            Err(_) => {
                opened = Bound::new(
                    py,
                    crate::file::open(
                        py, file, false, "metadata", false, None, None, None, None, None,
                    )?,
                )?;
                opened.clone()
            }
        };
        let target = as_key.unwrap_or(key);
        if target.is_empty() {
            return Err(PyValueError::new_err("the key is empty"));
        }
        file.get().with_tensor(py, key, |tensor| {
            self.call(py, |c| c.put(target, tensor.descriptor, &tensor.buffers))
        })
    }

    /// Sends PING with ``data`` (bytes) and waits for the server's PONG echoing it;
    /// returns the round trip in seconds.
    #[pyo3(signature = (data = None))]
    fn ping(&self, py: Python<'_>, data: Option<Vec<u8>>) -> PyResult<f64> {
        let data = data.unwrap_or_default();
        let start = Instant::now();
        self.call(py, |c| c.ping(&data))?;
        Ok(start.elapsed().as_secs_f64())
    }

    /// The server's address as given.
    #[getter]
    fn address(&self) -> String {
        self.address.clone()
    }

    /// True once closed (by `close()`, or after a failure other than a server's
    /// ERROR).
    #[getter]
    fn closed(&self) -> bool {
        self.lock().is_none()
    }

    /// Ends the connection. Idempotent.
    fn close(&self) {
        let taken = self.lock().take();
        drop(taken);
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, _args: &Bound<'_, PyTuple>) -> bool {
        self.close();
        false
    }

    fn __repr__(&self) -> String {
        let state = if self.closed() { "closed" } else { "open" };
        format!("<hrry.Client {} ({state})>", self.address)
    }
}

/// Adds `Client` and its exceptions to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<Client>()?;
    m.add("ServerError", py.get_type::<ServerError>())?;
    m.add("ProtocolError", py.get_type::<ProtocolError>())?;
    Ok(())
}

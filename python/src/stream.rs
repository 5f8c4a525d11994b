//! `hrry.stream`: bare Hurray streams (descriptors and data back to back, no
//! names) read tensor by tensor into NumPy, written from NumPy arrays, packed from
//! and unpacked to HRRYFILEs, and validated.
//!
//! Sources and sinks are paths, `bytes` (sources) or Python file objects. The core
//! runs with the interpreter released; a Python file object is called back with it
//! held, in chunks of at most the core's read buffer, so a pipe or a socket streams
//! through in bounded memory.

use std::io::{Cursor, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, TryLockError};

use hrry::export::{self, ExportOptions};
use hrry::file::{HrryWriter, Output, WriterOptions};
use hrry::limits::Limits;
use hrry::model::build::dense;
use hrry::schema::TensorDescriptor;
use hrry::stream::{tensor_too_large, CheckedStreamReader, Refusal, TensorNames};
use hrry::validate::Options;
use hrry::Format;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyMemoryView};

use crate::errors::{detached, invalid_file, io_error, HrryError};
use crate::file::{descriptor_info, File};
use crate::fileobj::{read_into, type_name};
use crate::report::{judged_rules, Report, Violation};
use crate::write::{stored_array, Quantized};

/// Largest tensor a `StreamReader` holds by default (its stored bytes, and the
/// array made of them): the core's export bound.
const DEFAULT_MAX_TENSOR_BYTES: u64 = 16 << 30;

/// Bytes the writer gathers before calling a Python sink's `write`.
const SINK_BUFFER: usize = 1 << 20;

/// A Python file object, called with the interpreter re-acquired. A Python
/// exception its methods raise (or a bad return value) is kept here and re-raised
/// once the core gives up with the I/O error that stands for it.
struct PyFileObject {
    object: Py<PyAny>,
    error: Option<PyErr>,
}

impl PyFileObject {
    fn new(object: &Bound<'_, PyAny>) -> Self {
        PyFileObject {
            object: object.clone().unbind(),
            error: None,
        }
    }

    /// Runs `f` on the object with the interpreter held; a Python error becomes an
    /// I/O error and is kept (after one, every call fails).
    fn call<T>(&mut self, f: impl FnOnce(&Bound<'_, PyAny>) -> PyResult<T>) -> std::io::Result<T> {
        if self.error.is_none() {
            match Python::attach(|py| f(self.object.bind(py))) {
                Ok(v) => return Ok(v),
                Err(e) => self.error = Some(e),
            }
        }
        Err(std::io::Error::other(
            "the Python file object raised an exception",
        ))
    }
}

impl Read for PyFileObject {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.call(|object| read_into(object, buf, "the stream source"))
    }
}

impl Write for PyFileObject {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.call(|object| write_from(object, buf))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.call(|object| {
            if object.hasattr("flush")? {
                object.call_method0("flush")?;
            }
            Ok(())
        })
    }
}

/// Where a stream is read from.
enum Source {
    File(std::fs::File),
    Bytes(Cursor<Vec<u8>>),
    Python(PyFileObject),
}

impl Read for Source {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Source::File(f) => f.read(buf),
            Source::Bytes(c) => c.read(buf),
            Source::Python(p) => p.read(buf),
        }
    }
}

impl Source {
    /// The source `object` stands for, and how errors name it.
    fn open(object: &Bound<'_, PyAny>) -> PyResult<(Source, String)> {
        let py = object.py();
        if let Ok(b) = object.cast::<PyBytes>() {
            return Ok((
                Source::Bytes(Cursor::new(b.as_bytes().to_vec())),
                "<bytes>".into(),
            ));
        }
        if object.is_instance_of::<PyByteArray>() || object.is_instance_of::<PyMemoryView>() {
            let owned = py.get_type::<PyBytes>().call1((object,))?;
            let data = owned.cast::<PyBytes>()?.as_bytes().to_vec();
            return Ok((Source::Bytes(Cursor::new(data)), "<bytes>".into()));
        }
        if object.hasattr("read")? {
            let what = object
                .getattr("name")
                .ok()
                .and_then(|n| n.str().ok().map(|s| s.to_string()))
                .unwrap_or_else(|| format!("<{}>", type_name(object)));
            return Ok((Source::Python(PyFileObject::new(object)), what));
        }
        let path: PathBuf = object.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "a stream source is a path (str or os.PathLike), bytes or a binary file \
                 object with read(n), not {}",
                type_name(object)
            ))
        })?;
        let file = std::fs::File::open(&path).map_err(|e| io_error(&path, e))?;
        Ok((Source::File(file), path.display().to_string()))
    }

    /// The Python exception a Python source raised, if any.
    fn take_error(&mut self) -> Option<PyErr> {
        match self {
            Source::Python(p) => p.error.take(),
            _ => None,
        }
    }
}

/// Writes `buf` (or its start) with `object.write(b)`; returns how much was
/// written.
fn write_from(object: &Bound<'_, PyAny>, buf: &[u8]) -> PyResult<usize> {
    let written = object.call_method1("write", (PyBytes::new(object.py(), buf),))?;
    // Buffered file objects return the length or None; raw ones may write less.
    if written.is_none() {
        return Ok(buf.len());
    }
    let n: usize = written.extract().map_err(|_| {
        PyTypeError::new_err(format!(
            "the sink's write() must return an int or None, not {}",
            type_name(&written)
        ))
    })?;
    if n == 0 || n > buf.len() {
        return Err(PyOSError::new_err(format!(
            "the sink's write() of {} bytes returned {n}",
            buf.len()
        )));
    }
    Ok(n)
}

/// Where a stream is written: a new file (committed into place by `finish`) or a
/// Python file object (left open).
enum Sink {
    File(Output),
    Python(std::io::BufWriter<PyFileObject>),
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Sink::File(f) => f.write(buf),
            Sink::Python(p) => p.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Sink::File(f) => f.flush(),
            Sink::Python(p) => p.flush(),
        }
    }
}

impl Sink {
    /// The sink `object` stands for (a path must not be one of `inputs`), and how
    /// errors name it.
    fn open(object: &Bound<'_, PyAny>, inputs: &[&Path]) -> PyResult<(Sink, String)> {
        if object.hasattr("write")? {
            let what = format!("<{}>", type_name(object));
            let sink = PyFileObject::new(object);
            let buffered = std::io::BufWriter::with_capacity(SINK_BUFFER, sink);
            return Ok((Sink::Python(buffered), what));
        }
        let path: PathBuf = object.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "a stream sink is a path (str or os.PathLike) or a binary file object with \
                 write(b), not {}",
                type_name(object)
            ))
        })?;
        let out = Output::create(&path, inputs).map_err(|e| match e {
            hrry::file::OutputError::Io { source, .. } => io_error(&path, source),
            other => PyValueError::new_err(other.to_string()),
        })?;
        Ok((Sink::File(out), path.display().to_string()))
    }

    fn take_error(&mut self) -> Option<PyErr> {
        match self {
            Sink::Python(p) => p.get_mut().error.take(),
            Sink::File(_) => None,
        }
    }

    /// Puts a file into place; a Python sink is already flushed.
    fn commit(self) -> std::io::Result<()> {
        match self {
            Sink::File(f) => f.commit().map_err(Into::into),
            Sink::Python(_) => Ok(()),
        }
    }
}

/// The Python error for a stream error: a broken rule is an `InvalidFileError`
/// with its violation; an I/O error is the Python exception the source or sink
/// raised, if it did, else an `OSError`.
fn stream_error(
    py: Python<'_>,
    what: &str,
    e: hrry::stream::Error,
    raised: Option<PyErr>,
) -> PyErr {
    use hrry::stream::Error;
    match e {
        Error::Invalid(v) => invalid_file(
            py,
            &format!("{what}: not a valid stream"),
            vec![Violation::from(&v)],
            0,
        ),
        Error::Io(e) => raised.unwrap_or_else(|| PyOSError::new_err(format!("{what}: {e}"))),
        Error::Usage(m) | Error::Write(m) | Error::Unsupported(m) | Error::Format(m) => {
            raised.unwrap_or_else(|| HrryError::new_err(format!("{what}: {m}")))
        }
    }
}

/// One tensor of a stream, as `StreamReader` yields it.
#[pyclass(module = "hrry.stream", frozen, name = "Tensor")]
pub struct StreamItem {
    /// The generated name (`t0`, `t1`, `t1.0`, …: the names ``hrry stream unpack``
    /// gives).
    #[pyo3(get)]
    name: String,
    /// Position in the stream, from 0.
    #[pyo3(get)]
    index: u64,
    /// Absolute offset of the tensor's descriptor in the stream.
    #[pyo3(get)]
    offset: u64,
    /// How many composites enclose the tensor (0 outside any).
    #[pyo3(get)]
    depth: usize,
    info: Py<PyDict>,
    array: Option<Py<PyAny>>,
    buffers: Py<PyList>,
}

#[pymethods]
impl StreamItem {
    /// What the descriptor says: the ``dict`` `File.info` gives (``"dtype"``,
    /// ``"shape"``, ``"layout"``, ``"quantization"``, ``"buffers"``).
    #[getter]
    fn info(&self, py: Python<'_>) -> Py<PyDict> {
        self.info.clone_ref(py)
    }

    /// The tensor as a NumPy array: the array `File.get_tensor` gives for it in a
    /// file (same dtype rules), read-only when it shares the stored bytes. ``None``
    /// when there is no such array: a composite head (its members follow as their
    /// own tensors), a paged layout, or an element type NumPy cannot hold; the
    /// stored bytes are in `buffers`.
    #[getter]
    fn array(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.array.as_ref().map(|a| a.clone_ref(py))
    }

    /// The stored buffers as they came in the stream (a list of ``bytes``, one per
    /// entry of the buffer table).
    #[getter]
    fn buffers(&self, py: Python<'_>) -> Py<PyList> {
        self.buffers.clone_ref(py)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let info = self.info.bind(py);
        let field = |k: &str| {
            info.get_item(k)
                .ok()
                .flatten()
                .and_then(|v| v.repr().ok().map(|r| r.to_string()))
                .unwrap_or_default()
        };
        format!(
            "<hrry.stream.Tensor {:?} dtype={} shape={} layout={}>",
            self.name,
            field("dtype"),
            field("shape"),
            field("layout")
        )
    }
}

/// What a reader holds between tensors.
struct ReaderState {
    reader: CheckedStreamReader<Source>,
    names: TensorNames,
    /// The end was reached or an error raised: no more tensors.
    done: bool,
}

/// Reads a bare Hurray stream tensor by tensor: iterate it for `hrry.stream.Tensor`
/// items (name, info, array, buffers).
///
/// ``source`` is a path (``str`` or ``os.PathLike``), the stream's bytes (``bytes``,
/// ``bytearray``, ``memoryview``) or a binary file object with ``read(n)`` (a file,
/// a pipe, a socket's ``makefile("rb")``), read in chunks. Each tensor is checked
/// against every rule before it is handed out (strict by default,
/// ``permissive=True`` for the spec's rules only): a broken stream raises
/// ``InvalidFileError`` whose ``.violations`` name the rules (``ST-…`` for the
/// stream's framing), and reading ends there. The reader holds one tensor at a
/// time; one larger than ``max_tensor_bytes`` (stored, or as an array) raises
/// ``InvalidFileError`` for the limit (``HF-LIM-001``), before its data is read
/// when its stored bytes are too many.
#[pyclass(module = "hrry.stream", frozen, name = "StreamReader")]
pub struct PyStreamReader {
    what: String,
    max_tensor_bytes: u64,
    state: Mutex<ReaderState>,
}

#[pymethods]
impl PyStreamReader {
    #[new]
    #[pyo3(signature = (source, *, permissive = false, max_tensor_bytes = DEFAULT_MAX_TENSOR_BYTES))]
    fn new(source: &Bound<'_, PyAny>, permissive: bool, max_tensor_bytes: u64) -> PyResult<Self> {
        let (source, what) = Source::open(source)?;
        let options = Options {
            judging: judged_rules(permissive).into(),
            limits: Limits::default(),
        };
        Ok(PyStreamReader {
            what,
            max_tensor_bytes,
            state: Mutex::new(ReaderState {
                reader: CheckedStreamReader::new(source, &options, max_tensor_bytes),
                names: TensorNames::new(),
                done: false,
            }),
        })
    }

    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<StreamItem>> {
        let mut state = lock(&self.state)?;
        if state.done {
            return Ok(None);
        }
        let result = self.next_item(py, &mut state);
        // After the end or an error the reader is done.
        state.done = !matches!(result, Ok(Some(_)));
        result
    }

    /// Bytes of the stream consumed so far.
    #[getter]
    fn position(&self) -> u64 {
        // 0 while another thread is reading (the position is moving).
        self.state.try_lock().map_or(0, |s| s.reader.position())
    }

    fn __repr__(&self) -> String {
        format!("<hrry.stream.StreamReader {:?}>", self.what)
    }
}

/// A tensor's data as read: its buffers, whole.
type Buffers = Vec<Vec<u8>>;

impl PyStreamReader {
    fn next_item(&self, py: Python<'_>, state: &mut ReaderState) -> PyResult<Option<StreamItem>> {
        let what = self.what.as_str();
        let max = self.max_tensor_bytes;
        let ReaderState { reader, names, .. } = state;
        // Core work (and the source's reads, which re-acquire the interpreter)
        // with the interpreter released.
        let step = detached(py, || reader.next_tensor())?;
        let (tensor, buffers) = match step {
            Ok(None) => return Ok(None),
            Ok(Some(read)) => (read.tensor, read.buffers),
            Err(Refusal::Stream(e)) => {
                let raised = reader.get_mut().take_error();
                return Err(stream_error(py, what, e, raised));
            }
            Err(Refusal::Rules(report)) => {
                let report = Report::new(Format::Stream, &report);
                return Err(report.into_error(py, what));
            }
        };
        let array_len = export::row_major_len(&tensor.descriptor).unwrap_or(0);
        if array_len > max {
            let v = tensor_too_large(&tensor, "bytes as an array", array_len, max);
            return Err(stream_error(
                py,
                what,
                hrry::stream::Error::Invalid(v),
                None,
            ));
        }
        let name = names.next(&tensor.descriptor);
        let array = tensor_array(py, what, &name, &tensor.descriptor, &buffers, max)?;
        let list = PyList::empty(py);
        for b in &buffers {
            list.append(PyBytes::new(py, b))?;
        }
        // A native row-major tensor's array views its buffer's bytes object.
        let array = match array {
            Array::Stored { descr, start, len } => {
                let data = list.get_item(0)?;
                Some(view_of(
                    py,
                    &data,
                    descr,
                    &tensor.descriptor.shape,
                    start,
                    len,
                )?)
            }
            Array::Owned(a) => Some(a),
            Array::None => None,
        };
        Ok(Some(StreamItem {
            name,
            index: tensor.index,
            offset: tensor.descriptor_offset,
            depth: tensor.depth,
            info: descriptor_info(py, &tensor.descriptor)?.unbind(),
            array: array.map(Bound::unbind),
            buffers: list.unbind(),
        }))
    }
}

/// Ends the stream of `writer`: flushes (so that an exception of a Python sink is
/// the one raised), checks it is complete, and puts a file into place.
fn finish_writer(
    mut writer: hrry::stream::StreamWriter<Sink>,
) -> Result<(), (hrry::stream::Error, Option<PyErr>)> {
    if let Err(e) = writer.sink_mut().flush() {
        let raised = writer.sink_mut().take_error();
        return Err((e.into(), raised));
    }
    let mut sink = writer.finish().map_err(|e| (e, None))?;
    let raised = sink.take_error();
    sink.commit().map_err(|e| (e.into(), raised))
}

/// How a tensor's array is made.
enum Array<'py> {
    /// A read-only view of `len` bytes at `start` of buffer 0.
    Stored {
        descr: &'static str,
        start: usize,
        len: usize,
    },
    /// A new array.
    Owned(Bound<'py, PyAny>),
    /// No NumPy array holds the tensor.
    None,
}

/// The array of a tensor checked valid: a view of its stored bytes when they are
/// the array, else the exported array (`File.get_tensor`'s rules).
fn tensor_array<'py>(
    py: Python<'py>,
    what: &str,
    name: &str,
    desc: &TensorDescriptor,
    buffers: &Buffers,
    max: u64,
) -> PyResult<Array<'py>> {
    let slices: Vec<&[u8]> = buffers.iter().map(Vec::as_slice).collect();
    if let Some((dtype, bytes)) = export::stored_row_major_of(desc, &slices) {
        if let Some(first) = buffers.first() {
            let start = (bytes.as_ptr() as usize).wrapping_sub(first.as_ptr() as usize);
            if start <= first.len() && bytes.len() <= first.len() - start {
                return Ok(Array::Stored {
                    descr: dtype.descr,
                    start,
                    len: bytes.len(),
                });
            }
        }
    }
    let options = ExportOptions {
        max_bytes: max,
        ..ExportOptions::default()
    };
    match export::export_dtype(desc) {
        Ok(dtype) => match detached(py, || export::row_major_bytes_of(desc, &slices, &options))? {
            Ok(data) => Ok(Array::Owned(crate::array::owned_array(
                py,
                data,
                dtype.descr,
                &desc.shape,
            )?)),
            // No logical order, no NumPy type: no array. Over the size bound: an
            // error, as for a file.
            Err(hrry::Error::Unsupported(m)) if !m.contains("exceeds the limit") => Ok(Array::None),
            Err(e) => Err(HrryError::new_err(format!("{what}: tensor {name:?}: {e}"))),
        },
        Err(_) => Ok(Array::None),
    }
}

/// A read-only array of dtype `descr` and `shape` over `len` bytes at `start` of
/// the ``bytes`` object `data` (``numpy.frombuffer``: no copy, `data` its base).
fn view_of<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    descr: &str,
    shape: &[u64],
    start: usize,
    len: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let np = py.import("numpy")?;
    let dtype = np.call_method1("dtype", (descr,))?;
    let item: usize = dtype.getattr("itemsize")?.extract()?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("dtype", &dtype)?;
    kwargs.set_item("count", len / item.max(1))?;
    kwargs.set_item("offset", start)?;
    np.call_method("frombuffer", (data,), Some(&kwargs))?
        .call_method1("reshape", (crate::array::shape_tuple(py, shape)?,))
}

/// Writes a bare Hurray stream to ``sink``: a path (the stream goes to a temporary
/// file renamed into place by `finish`) or a binary file object with ``write(b)``
/// (a file, a pipe, a socket's ``makefile("wb")``; flushed, left open).
///
/// A context manager: leaving the ``with`` block normally calls `finish`; leaving
/// it by an exception abandons the stream (a path is not created).
#[pyclass(module = "hrry.stream", frozen, name = "StreamWriter")]
pub struct PyStreamWriter {
    what: String,
    state: Mutex<Option<hrry::stream::StreamWriter<Sink>>>,
}

impl PyStreamWriter {
    /// Runs `f` on the open writer (with the interpreter released), translating
    /// its error.
    fn with_writer(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut hrry::stream::StreamWriter<Sink>) -> Result<(), hrry::stream::Error> + Send,
    ) -> PyResult<()> {
        let mut guard = lock(&self.state)?;
        let Some(writer) = guard.as_mut() else {
            return Err(PyValueError::new_err(format!(
                "{}: the stream writer is finished",
                self.what
            )));
        };
        match detached(py, || f(writer))? {
            Ok(()) => Ok(()),
            Err(e) => {
                let raised = writer.sink_mut().take_error();
                if matches!(e, hrry::stream::Error::Io(_)) {
                    // The stream is broken past repair: drop it (a path is not
                    // created).
                    *guard = None;
                }
                Err(stream_error(py, &self.what, e, raised))
            }
        }
    }
}

/// Locks `state`, refusing (instead of waiting, which could deadlock with a
/// thread that released the interpreter) when another thread uses it.
fn lock<T>(state: &Mutex<T>) -> PyResult<std::sync::MutexGuard<'_, T>> {
    match state.try_lock() {
        Ok(g) => Ok(g),
        Err(TryLockError::Poisoned(p)) => Ok(p.into_inner()),
        Err(TryLockError::WouldBlock) => Err(PyRuntimeError::new_err(
            "the stream is in use by another thread",
        )),
    }
}

#[pymethods]
impl PyStreamWriter {
    #[new]
    fn new(sink: &Bound<'_, PyAny>) -> PyResult<Self> {
        let (sink, what) = Sink::open(sink, &[])?;
        Ok(PyStreamWriter {
            what,
            state: Mutex::new(Some(hrry::stream::StreamWriter::new(sink))),
        })
    }

    /// Writes ``array`` as the next tensor: a NumPy array (or anything
    /// ``numpy.asarray`` takes) stored row-major under its element type — the dtypes
    /// `hrry.save_file` takes (big-endian converted, non-contiguous made
    /// contiguous) — or an `hrry.Quantized` tensor. ``TypeError`` for a dtype the
    /// format cannot hold.
    fn write(&self, py: Python<'_>, array: &Bound<'_, PyAny>) -> PyResult<()> {
        if let Ok(q) = array.cast::<Quantized>() {
            let q = q.get();
            let buffers = q.inner.buffer_slices();
            let desc = &q.inner.descriptor;
            return self.with_writer(py, |w| w.write_tensor(desc, &buffers));
        }
        let np = py.import("numpy")?;
        let (ty, shape, bytes) = stored_array(&np, "array", array)?;
        let data = bytes
            .as_slice()
            .map_err(|_| PyValueError::new_err("array is not contiguous"))?;
        let too_large = || HrryError::new_err(format!("shape {shape:?} is too large"));
        let desc = dense(ty, &shape).ok_or_else(too_large)?;
        let stored = hrry::npy::stored_bytes(ty, data).ok_or_else(too_large)?;
        self.with_writer(py, |w| w.write_tensor(&desc, &[&stored]))
    }

    /// Writes tensor ``name`` of the open `hrry.File` ``file`` as the next tensor,
    /// exactly as stored (descriptor and buffers; any layout or quantization).
    /// ``KeyError`` if there is no such tensor. A composite head's members are
    /// tensors of their own: write them next.
    fn write_tensor(&self, py: Python<'_>, file: &Bound<'_, File>, name: &str) -> PyResult<()> {
        file.get().with_tensor(py, name, |t| {
            let buffers: Vec<&[u8]> = t.buffers.clone();
            let desc = &t.descriptor;
            self.with_writer(py, |w| w.write_tensor(desc, &buffers))
        })
    }

    /// Ends the stream: refuses an incomplete composite (``HrryError``), flushes a
    /// file object, puts a path's file into place. Idempotent.
    fn finish(&self, py: Python<'_>) -> PyResult<()> {
        let mut guard = lock(&self.state)?;
        let Some(writer) = guard.take() else {
            return Ok(());
        };
        let result = detached(py, || finish_writer(writer))?;
        result.map_err(|(e, raised)| stream_error(py, &self.what, e, raised))
    }

    /// Bytes written so far.
    #[getter]
    fn position(&self) -> PyResult<u64> {
        Ok(lock(&self.state)?.as_ref().map_or(0, |w| w.position()))
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (exc_type, _exc_value, _traceback))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: &Bound<'_, PyAny>,
        _exc_value: &Bound<'_, PyAny>,
        _traceback: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        if exc_type.is_none() {
            self.finish(py)?;
        } else {
            lock(&self.state)?.take();
        }
        Ok(false)
    }

    fn __repr__(&self) -> String {
        format!("<hrry.stream.StreamWriter {:?}>", self.what)
    }
}

/// Writes every tensor of the HRRYFILE at ``path`` to ``sink`` (a path or a binary
/// file object, as for `StreamWriter`) as a bare stream, in file order, names
/// dropped: the bytes ``hrry stream pack`` writes. The file's data is read in
/// chunks, never mapped. Returns the number of tensors. ``InvalidFileError`` when
/// the file is broken.
#[pyfunction]
pub fn pack(py: Python<'_>, path: PathBuf, sink: &Bound<'_, PyAny>) -> PyResult<u64> {
    let (sink, what) = Sink::open(sink, &[&path])?;
    let source = path.display().to_string();
    let mut writer = hrry::stream::StreamWriter::new(sink);
    let result = detached(py, || hrry::stream::pack_path(&path, &mut writer))?;
    let count = match result {
        Ok(n) => n,
        Err(e) => {
            let raised = writer.sink_mut().take_error();
            return Err(pack_error(py, &path, &source, e, raised));
        }
    };
    let done = detached(py, || finish_writer(writer))?;
    done.map_err(|(e, raised)| stream_error(py, &what, e, raised))?;
    Ok(count)
}

/// A pack error names the file when the file is at fault.
fn pack_error(
    py: Python<'_>,
    path: &Path,
    source: &str,
    e: hrry::stream::Error,
    raised: Option<PyErr>,
) -> PyErr {
    match e {
        hrry::stream::Error::Io(io) if raised.is_none() => io_error(path, io),
        hrry::stream::Error::Invalid(v) => invalid_file(
            py,
            &format!("{source}: not a valid HRRYFILE"),
            vec![Violation::from(&v)],
            0,
        ),
        other => stream_error(py, source, other, raised),
    }
}

/// Reads the bare stream ``source`` (a path, bytes or a binary file object, as for
/// `StreamReader`) and writes its tensors to a new HRRYFILE at ``path`` under the
/// names `StreamReader` gives (``t0``, ``t1``, ``t1.0``, …): what ``hrry stream
/// unpack`` writes, holding one tensor at a time. The
/// file is written to a temporary file renamed into place; on any error nothing
/// is created. Every tensor is checked against every rule first (the spec's only
/// with ``permissive=True``): a broken stream raises ``InvalidFileError``.
/// Returns the number of tensors.
#[pyfunction]
#[pyo3(signature = (source, path, *, data_buffer_alignment = 4096, permissive = false))]
pub fn unpack(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    path: PathBuf,
    data_buffer_alignment: u32,
    permissive: bool,
) -> PyResult<u64> {
    let (source, what) = Source::open(source)?;
    let options = WriterOptions {
        data_buffer_alignment,
        ..WriterOptions::default()
    };
    let mut reader = hrry::stream::StreamReader::new(source);
    let result = detached(py, || -> Result<u64, hrry::stream::Error> {
        let checks = hrry::stream::UnpackOptions {
            validation: Options {
                judging: judged_rules(permissive).into(),
                limits: Limits::default(),
            },
            allowed: Vec::new(),
        };
        let mut w = HrryWriter::create(&path, options)?;
        let done = hrry::stream::unpack(&mut reader, &mut w, &checks)?;
        w.finish_file()?;
        Ok(done.tensors)
    })?;
    result.map_err(|e| {
        let raised = reader.get_mut().take_error();
        match e {
            hrry::stream::Error::Usage(m) | hrry::stream::Error::Write(m) if raised.is_none() => {
                PyValueError::new_err(format!("{}: {m}", path.display()))
            }
            other => stream_error(py, &what, other, raised),
        }
    })
}

/// Checks the bare stream ``source`` (a path, bytes or a binary file object, as
/// for `StreamReader`) against every rule and returns an `hrry.Report`
/// (``format`` ``"stream"``); never raises for a bad stream. Holds one tensor at a
/// time. ``permissive=True`` applies the spec's rules only.
#[pyfunction]
#[pyo3(signature = (source, *, permissive = false))]
pub fn validate(py: Python<'_>, source: &Bound<'_, PyAny>, permissive: bool) -> PyResult<Report> {
    let (mut source, what) = Source::open(source)?;
    let options = Options {
        judging: judged_rules(permissive).into(),
        limits: Limits::default(),
    };
    let result = detached(py, || {
        hrry::Format::Stream.validate_reader(&mut source, &options)
    })?;
    match result {
        Ok(report) => Ok(Report::new(Format::Stream, &report)),
        Err(e) => Err(source
            .take_error()
            .unwrap_or_else(|| PyOSError::new_err(format!("{what}: {e}")))),
    }
}

/// Registers the `hrry.stream` names on the extension module (re-exported by
/// `hrry/stream.py`).
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyStreamReader>()?;
    m.add_class::<PyStreamWriter>()?;
    m.add_class::<StreamItem>()?;
    m.add("stream_pack", wrap_pyfunction!(pack, m)?)?;
    m.add("stream_unpack", wrap_pyfunction!(unpack, m)?)?;
    m.add("stream_validate", wrap_pyfunction!(validate, m)?)?;
    Ok(())
}

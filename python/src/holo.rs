//! `hrry.holo.open`: a verified `.holo` archive whose sections, weights and
//! extensions come out as read-only `memoryview`s of the mapping.

use std::path::PathBuf;
use std::sync::Arc;

use hrry::holo::{hex, HoloLoader, PortDescriptor};
use hrry::limits::Limits;
use hrry::Format;
use memmap2::Mmap;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyMemoryView};

use crate::array::{borrowed_array, shape_tuple};
use crate::errors::{detached, io_error, HrryError};
use crate::input::{Input, Net, Remote};
use crate::report::check;
use crate::slot::Slot;

/// A shared read-only mapping, so the bytes stay at hand when verification fails.
/// The length is the archive's: a mapping is never empty, an archive may be.
#[derive(Clone)]
struct Shared(Arc<Mmap>, usize);

impl AsRef<[u8]> for Shared {
    fn as_ref(&self) -> &[u8] {
        &self.0[..self.1]
    }
}

/// The verified archive; views of it hold a reference to this object, so the
/// mapping outlives `Archive.close()` while any of them is alive.
#[pyclass(module = "hrry.holo", frozen)]
pub struct HoloMapping {
    loader: HoloLoader<Shared>,
}

/// One section of the archive: its kind, where its payload is, and the payload.
#[pyclass(module = "hrry.holo", name = "Section", frozen)]
pub struct Section {
    /// The kind's name (``"Weights"``, ``"Extension"``, …).
    #[pyo3(get)]
    kind: &'static str,
    /// The kind's number in the section table (1–16).
    #[pyo3(get)]
    number: u8,
    /// Absolute offset of the payload.
    #[pyo3(get)]
    offset: u64,
    /// Payload length in bytes.
    #[pyo3(get)]
    length: u64,
    data: Py<PyAny>,
}

#[pymethods]
impl Section {
    /// The payload, a read-only ``memoryview`` of the mapping (no copy).
    #[getter]
    fn data(&self, py: Python<'_>) -> Py<PyAny> {
        self.data.clone_ref(py)
    }

    fn __repr__(&self) -> String {
        format!(
            "<hrry.holo.Section {} ({} bytes at {})>",
            self.kind, self.length, self.offset
        )
    }
}

/// A read-only `memoryview` of `bytes`, which lie in `owner`'s mapping.
fn view<'py>(owner: &Bound<'py, HoloMapping>, bytes: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: `bytes` lies in the read-only mapping `owner` holds, alive and
    // unchanged as long as `owner`, which the array (and the memoryview over it)
    // keeps as its base.
    let array = unsafe {
        borrowed_array(
            owner.clone().into_any(),
            "|u1",
            &[bytes.len() as u64],
            bytes,
        )?
    };
    Ok(PyMemoryView::from(&array)?.into_any())
}

/// Model inputs or outputs as a list of ``dict``.
fn ports<'py>(py: Python<'py>, ports: &[PortDescriptor]) -> PyResult<Bound<'py, PyList>> {
    let dicts = ports
        .iter()
        .map(|p| {
            let d = PyDict::new(py);
            d.set_item("name", &p.name)?;
            d.set_item("slot", p.slot)?;
            d.set_item("element_count", p.element_count)?;
            d.set_item("dtype", p.dtype)?;
            d.set_item("shape", shape_tuple(py, &p.shape)?)?;
            Ok(d)
        })
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, dicts)
}

/// An opened `.holo` archive (from `hrry.holo.open`). A context manager; views
/// returned stay valid after `close()`.
#[pyclass(module = "hrry.holo", name = "Archive", frozen)]
pub struct Archive {
    path: PathBuf,
    mapping: Slot<HoloMapping>,
}

impl Archive {
    fn mapping<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, HoloMapping>> {
        self.mapping.get(py, &self.path.display().to_string())
    }
}

#[pymethods]
impl Archive {
    /// ``format_version`` (2 or 3).
    #[getter]
    fn format_version(&self, py: Python<'_>) -> PyResult<u16> {
        Ok(self.mapping(py)?.get().loader.format_version())
    }

    /// The header ``flags``.
    #[getter]
    fn flags(&self, py: Python<'_>) -> PyResult<u16> {
        Ok(self.mapping(py)?.get().loader.flags())
    }

    /// The BLAKE3 hash closing the archive (32 ``bytes``).
    #[getter]
    fn fingerprint<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(
            py,
            &self.mapping(py)?.get().loader.fingerprint(),
        ))
    }

    /// Every section in table order (a list of `Section`).
    #[getter]
    fn sections(&self, py: Python<'_>) -> PyResult<Vec<Section>> {
        let m = self.mapping(py)?;
        let loader = &m.get().loader;
        loader
            .sections()
            .iter()
            .map(|s| {
                Ok(Section {
                    kind: s.kind.name(),
                    number: s.kind.number(),
                    offset: s.offset,
                    length: s.length,
                    data: view(&m, loader.section_payload(s))?.unbind(),
                })
            })
            .collect()
    }

    /// The weight bodies: a ``dict`` from the hexadecimal BLAKE3 fingerprint to a
    /// read-only ``memoryview``, in archive order.
    #[getter]
    fn weights<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let m = self.mapping(py)?;
        let d = PyDict::new(py);
        for (fingerprint, body) in m.get().loader.weights() {
            d.set_item(hex(fingerprint), view(&m, body)?)?;
        }
        Ok(d)
    }

    /// The Extension sections: a ``dict`` from key to a read-only ``memoryview``.
    #[getter]
    fn extensions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let m = self.mapping(py)?;
        let loader = &m.get().loader;
        let d = PyDict::new(py);
        for key in loader.extension_keys() {
            if let Some(body) = loader.extension(key) {
                d.set_item(key, view(&m, body)?)?;
            }
        }
        Ok(d)
    }

    /// The model inputs (a list of ``dict`` with ``name``, ``slot``,
    /// ``element_count``, ``dtype`` and ``shape``).
    #[getter]
    fn inputs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        ports(py, self.mapping(py)?.get().loader.inputs())
    }

    /// The model outputs (like `inputs`).
    #[getter]
    fn outputs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        ports(py, self.mapping(py)?.get().loader.outputs())
    }

    /// The path the archive was opened from.
    #[getter]
    fn path(&self) -> String {
        self.path.display().to_string()
    }

    /// Closes the archive; views already returned stay valid.
    fn close(&self) {
        self.mapping.close();
    }

    /// True once `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.mapping.is_closed()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, _args: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.close();
        false
    }

    fn __repr__(&self) -> String {
        format!("<hrry.holo.Archive {:?}>", self.path.display().to_string())
    }
}

/// Opens the `.holo` archive ``source``: a path (mapped), an ``http://``,
/// ``https://`` or ``s3://`` URL or a binary file object with ``seek`` and
/// ``read`` (read whole into private memory: verification hashes every byte), or
/// the bytes themselves (copied),
/// and verifies every rule (strict), the closing BLAKE3 hash included. Raises
/// ``InvalidFileError`` (with ``.violations``) for an invalid archive and
/// ``OSError`` when it cannot be read (a file object's own exception when it
/// raises). ``max_memory`` (bytes, 2 GiB by default) caps the memory budget of
/// what the archive's sections make the loader hold (not the mapping); past it,
/// ``InvalidFileError`` with ``HF-LIM-001`` naming ``max_memory``.
#[pyfunction]
#[pyo3(name = "open", signature = (source, *, timeout = None, stall_timeout = None, retries = None, max_memory = None))]
pub fn open_holo(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    timeout: Option<f64>,
    stall_timeout: Option<f64>,
    retries: Option<u32>,
    max_memory: Option<u64>,
) -> PyResult<Archive> {
    let net = Net::new(timeout, stall_timeout, retries)?;
    let mut limits = Limits::default();
    if let Some(cap) = max_memory {
        limits.max_memory = cap;
    }
    let (what, map, len) = match Input::of(source, true)? {
        Input::Path(path) => {
            let map = crate::memory::map_path(&path, crate::memory::Access::ReadOnly)
                .map_err(|e| io_error(&path, e))?;
            let len = map.len();
            (path.display().to_string(), map, len)
        }
        Input::Url(url) => read_whole(py, &Remote::url(py, &url, &net)?)?,
        Input::Object(object) => read_whole(py, &Remote::object(&object)?)?,
        Input::Bytes(bytes) => {
            let what = "<bytes>";
            let map = crate::memory::map_copy(bytes.as_bytes(), crate::memory::Access::ReadOnly)
                .map_err(|e| io_error(std::path::Path::new(what), e))?;
            (what.to_string(), map, bytes.as_bytes().len())
        }
    };
    let storage = Shared(Arc::new(map), len);
    let bytes = storage.clone();
    match detached(py, || HoloLoader::with_limits(storage, &limits))? {
        Ok(loader) => Ok(Archive {
            path: PathBuf::from(&what),
            mapping: Slot::new(Py::new(py, HoloMapping { loader })?),
        }),
        Err(hrry::Error::Invalid(_)) => {
            let judge = crate::report::Judge::new(false, None)?.max_memory(max_memory);
            let report = check(py, bytes.as_ref(), Format::Holo, judge)?;
            Err(report.into_error(py, &what))
        }
        Err(e) => Err(HrryError::new_err(format!("{what}: {e}"))),
    }
}

/// Every byte of `remote` in private memory, how it is named, and its length.
fn read_whole(py: Python<'_>, remote: &Remote) -> PyResult<(String, Mmap, usize)> {
    let source = remote.source();
    let map = detached(py, || crate::memory::map_source(source))?;
    if let Some(raised) = remote.take_error() {
        return Err(raised);
    }
    let map = map.map_err(|e| remote.error(e))?;
    // `map_source` read exactly the source's length (it fits in memory).
    let len = source.len() as usize;
    Ok((remote.shown().to_string(), map, len))
}

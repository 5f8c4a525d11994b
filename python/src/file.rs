//! `hrry.open`, `hrry.File` and `hrry.load_file`: a validated, mapped HRRYFILE whose
//! tensors come out as NumPy arrays (views into the mapping when the stored bytes
//! already are the array: read-only, or writeable over a private copy-on-write
//! mapping).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hrry::file::{OpenOptions, Tensor};
use hrry::quant::Dequantizer;
use hrry::schema::{
    layout_name, scheme_name, QuantScheme, TensorDescriptor, FLAG_SYMMETRIC, NO_ZERO_POINT_BUFFER,
};
use hrry::validate::Depth;
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::array::shape_tuple;
use crate::dequant::{dequantize_to, quant_error, threads_arg};
use crate::errors::{detached, file_error, io_error, HrryError};
use crate::input::{Input, Net, Remote};
use crate::kv;
use crate::mapping::{tensor_array, Mapping};
use crate::memory::{self, Access};
use crate::report::Judge;
use crate::slot::Slot;
use crate::stored::{stored_array, unwidened};

/// An open HRRYFILE (from `hrry.open`): tensor names, metadata, descriptors, and
/// tensors as NumPy arrays. A context manager; closing it while arrays still view it
/// is safe (they keep the mapping alive).
#[pyclass(module = "hrry", frozen)]
pub struct File {
    /// The path, the URL (without credentials) or the file object's name.
    path: PathBuf,
    mapping: Slot<Mapping>,
}

/// What `check=` of `hrry.open` names.
fn check_arg(check: &str) -> PyResult<Depth> {
    match check {
        "metadata" => Ok(Depth::Metadata),
        "full" => Ok(Depth::Data),
        "trusted" => Ok(Depth::Index),
        other => Err(PyValueError::new_err(format!(
            "check must be \"metadata\", \"full\" or \"trusted\", not {other:?}"
        ))),
    }
}

/// Maps `path` with `access` and opens it in one decode pass, judging what `check`
/// says in the mode `permissive` selects; `InvalidFileError` names the first broken
/// rule. A pass that reads every byte (`check="full"`) reads the file with positioned
/// reads in large pieces, so that opening makes none of the mapping's pages
/// resident (and runs ~4x faster than page faults through the mapping); a pass that
/// reads the metadata only reads it through the mapping, ~4x faster on a file of many
/// small tensors than a checked positioned read per descriptor (100,000 tensors:
/// ~0.11 s against ~0.46 s), its pages clean and reclaimable. The work runs with
/// the interpreter released.
fn open_mapping(
    py: Python<'_>,
    path: &Path,
    judge: Judge,
    check: Depth,
    access: Access,
) -> PyResult<Mapping> {
    let what = path.display().to_string();
    if check == Depth::Data {
        let source = hrry::source::FileSource::open(path).map_err(|e| io_error(path, e))?;
        let map = memory::map_open(source.file(), access).map_err(|e| io_error(path, e))?;
        return decode(py, &what, map, Some(&source), judge, check, access);
    }
    let map = memory::map_path(path, access).map_err(|e| io_error(path, e))?;
    decode(py, &what, map, None, judge, check, access)
}

/// Reads the regular file at `path` whole into private, writeable memory (one
/// pass of positioned reads, the file checked unchanged) and opens it as
/// [`open_mapping`] does: what `load_file` hands out views of.
fn read_private(py: Python<'_>, path: &Path, judge: Judge) -> PyResult<Mapping> {
    let read = detached(py, || -> std::io::Result<Option<memmap2::Mmap>> {
        let source = hrry::source::FileSource::open(path)?;
        if hrry::source::ReadAt::is_empty(&source) {
            return Ok(None);
        }
        memory::map_source_with(&source, Access::CopyOnWrite).map(Some)
    })?;
    match read.map_err(|e| io_error(path, e))? {
        Some(map) => decode(
            py,
            &path.display().to_string(),
            map,
            None,
            judge,
            Depth::Metadata,
            Access::CopyOnWrite,
        ),
        // No mapping is empty: the core names what an empty file breaks.
        None => match OpenOptions::new()
            .rules(hrry::validate::Rules::Hardened)
            .open_bytes(&[])
        {
            Err(e) => Err(file_error(py, &path.display().to_string(), e)),
            Ok(_) => Err(HrryError::new_err(format!("{}: empty", path.display()))),
        },
    }
}

/// Opens the HRRYFILE mapped by `map` (of `access`) as [`open_mapping`] does: its
/// decode pass reads `read_through` (the mapped file) with positioned reads when
/// given, else the mapping.
fn decode(
    py: Python<'_>,
    what: &str,
    map: memmap2::Mmap,
    read_through: Option<&dyn hrry::source::ReadAt>,
    judge: Judge,
    check: Depth,
    access: Access,
) -> PyResult<Mapping> {
    let options = judge.open_options(check);
    let file = detached(py, || match read_through {
        Some(source) => options.open_mmap_read(hrry::file::Mapping::new(map), source),
        None => options.open_mmap(hrry::file::Mapping::new(map)),
    })?
    .map_err(|e| file_error(py, what, e))?;
    Ok(Mapping::new(file, access, None))
}

/// Opens the HRRYFILE `remote` (a URL or a file object) as [`open_mapping`] does:
/// its metadata is read now, each tensor's bytes when the tensor is first asked
/// for (into a mapped mirror, read-only).
fn open_remote(py: Python<'_>, remote: Remote, judge: Judge, check: Depth) -> PyResult<Mapping> {
    let remote = Arc::new(remote);
    let options = judge.open_options(check);
    let source = Arc::clone(&remote);
    let opened = detached(py, || options.open_source(source))?;
    if let Some(raised) = remote.take_error() {
        return Err(raised);
    }
    let file = opened.map_err(|e| file_error(py, remote.shown(), e))?;
    Ok(Mapping::new(file, Access::ReadOnly, Some(remote)))
}

/// Opens the file `source` names (a path, a URL or a file object).
/// `access` is for a local file or bytes; a URL or file object is read-only, and
/// refused with `Access::CopyOnWrite` unless `writeable_copies` says the caller
/// copies what it hands out.
fn open_input(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    judge: Judge,
    check: Depth,
    access: Access,
    writeable_copies: bool,
    net: &Net,
) -> PyResult<(String, Mapping)> {
    let remote = match Input::of(source, true)? {
        Input::Path(path) => {
            let mapping = open_mapping(py, &path, judge, check, access)?;
            return Ok((path.display().to_string(), mapping));
        }
        Input::Url(_) | Input::Object(_) if access == Access::CopyOnWrite && !writeable_copies => {
            return Err(PyValueError::new_err(
                "copy_on_write=True needs a local file: a URL or file object is read into a \
                 read-only mirror (copy the arrays, or use load_file)",
            ))
        }
        Input::Url(url) => Remote::url(py, &url, net)?,
        Input::Object(object) => Remote::object(&object)?,
        Input::Bytes(bytes) => {
            return Ok((
                BYTES_NAME.to_string(),
                open_bytes(py, bytes.as_bytes(), access, judge, check)?,
            ))
        }
    };
    let shown = remote.shown().to_string();
    Ok((shown, open_remote(py, remote, judge, check)?))
}

/// A `zero_point_buffer_index` as `File.info` gives it: `None` for the "no zero
/// points" value (what `hrry inspect --json` prints as `null`).
fn zero_points(index: u32) -> Option<u32> {
    (index != NO_ZERO_POINT_BUFFER).then_some(index)
}

/// The `"quantization"` entry of `File.info`: `None`, or the scheme's name and
/// fields.
fn quantization_info<'py>(
    py: Python<'py>,
    desc: &TensorDescriptor,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    let Some(section) = &desc.quantization else {
        return Ok(None);
    };
    let bytes = section.bytes();
    let d = PyDict::new(py);
    let tag = bytes.first().copied().unwrap_or(0);
    d.set_item("scheme", scheme_name(tag))?;
    let Some(scheme) = section.scheme() else {
        d.set_item("scheme_tag", tag)?;
        return Ok(Some(d));
    };
    let header = scheme.header();
    d.set_item("scheme_version", header.scheme_version)?;
    // As `hrry inspect --json` reports them.
    let flagged_symmetric = header.flags & FLAG_SYMMETRIC != 0;
    let type_name =
        |tag: u8| hrry::model::ElementType::from_tag(tag).map_or("unknown", |t| t.name());
    match scheme {
        QuantScheme::PerTensorAffine(s) => {
            d.set_item("symmetric", s.zero_point == 0)?;
            d.set_item("scale", s.scale)?;
            d.set_item("zero_point", s.zero_point)?;
        }
        QuantScheme::PerChannelAffine(s) => {
            d.set_item("symmetric", flagged_symmetric)?;
            d.set_item("axis", s.axis)?;
            d.set_item("scale_buffer_index", s.scale_buffer_index)?;
            d.set_item(
                "zero_point_buffer_index",
                zero_points(s.zero_point_buffer_index),
            )?;
            d.set_item("scale_type", type_name(s.scale_type_tag))?;
        }
        QuantScheme::PerBlockAffine(s) => {
            d.set_item("symmetric", flagged_symmetric)?;
            d.set_item("axis", s.axis)?;
            d.set_item("block_size", s.block_size)?;
            d.set_item("scale_buffer_index", s.scale_buffer_index)?;
            d.set_item(
                "zero_point_buffer_index",
                zero_points(s.zero_point_buffer_index),
            )?;
            d.set_item("scale_type", type_name(s.scale_type_tag))?;
        }
        // NF4 scales are float32 absmax values, MXFP scales E8M0 exponents; neither
        // has zero points.
        QuantScheme::Nf4(s) => {
            d.set_item("symmetric", true)?;
            d.set_item("axis", s.axis)?;
            d.set_item("block_size", s.block_size)?;
            d.set_item("scale_buffer_index", s.scale_buffer_index)?;
            d.set_item("scale_type", "float32")?;
        }
        QuantScheme::Mxfp(s) => {
            d.set_item("symmetric", true)?;
            d.set_item("axis", s.axis)?;
            d.set_item("block_size", s.block_size)?;
            d.set_item("scale_buffer_index", s.scale_buffer_index)?;
            d.set_item("scale_type", "float8_e8m0")?;
        }
    }
    Ok(Some(d))
}

/// What `desc` says, as the ``dict`` `File.info` returns.
pub(crate) fn descriptor_info<'py>(
    py: Python<'py>,
    desc: &TensorDescriptor,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let ty = hrry::model::ElementType::from_tag(desc.type_tag);
    d.set_item("dtype", ty.map_or("unknown", |t| t.name()))?;
    d.set_item("shape", shape_tuple(py, &desc.shape)?)?;
    d.set_item("layout", layout_name(desc.layout_tag))?;
    d.set_item("quantization", quantization_info(py, desc)?)?;
    let sizes: Vec<u64> = desc.buffers.iter().map(|b| b.byte_size).collect();
    d.set_item("buffers", sizes)?;
    Ok(d)
}

impl File {
    /// Runs `f` on tensor `name`'s descriptor and stored buffers (`KeyError` if
    /// there is no such tensor, `ValueError` once closed).
    pub(crate) fn with_tensor<T>(
        &self,
        py: Python<'_>,
        name: &str,
        f: impl FnOnce(&Tensor<'_>) -> PyResult<T>,
    ) -> PyResult<T> {
        let m = self.mapping(py)?;
        let tensor = m.get().tensor(py, &self.what(), name)?;
        f(&tensor)
    }

    /// The mapping, or `ValueError` once closed.
    fn mapping<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, Mapping>> {
        self.mapping.get(py, &self.what())
    }

    fn what(&self) -> String {
        self.path.display().to_string()
    }
}

#[pymethods]
impl File {
    /// Tensor names in index order (a list of ``str``).
    fn keys(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let m = self.mapping(py)?;
        Ok(m.get()
            .file()
            .entries()
            .map(|e| e.name().to_string())
            .collect())
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.mapping(py)?.get().file().len())
    }

    fn __contains__(&self, py: Python<'_>, name: &Bound<'_, PyAny>) -> PyResult<bool> {
        let m = self.mapping(py)?;
        Ok(match name.extract::<String>() {
            Ok(n) => m.get().file().find(&n).is_some(),
            Err(_) => false,
        })
    }

    fn __iter__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let names = PyList::new(py, self.keys(py)?)?;
        Ok(names.try_iter()?.into_any().unbind())
    }

    fn __getitem__<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        self.get_tensor(py, name, true)
    }

    /// The KV metadata as a ``dict``: ``str`` (``bytes`` when not UTF-8), ``int``,
    /// ``float``, ``bool``, ``bytes`` and ``list`` values, in file order.
    #[getter]
    fn metadata<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let m = self.mapping(py)?;
        let d = PyDict::new(py);
        for e in m.get().file().kv() {
            d.set_item(
                String::from_utf8_lossy(&e.key).as_ref(),
                kv::to_python(py, &e.value)?,
            )?;
        }
        Ok(d)
    }

    /// The path the file was opened from (for a URL: the URL without its
    /// credentials; for a file object: its name).
    #[getter]
    fn path(&self) -> String {
        self.what()
    }

    /// For a file read from a URL or a file object: what reading it has cost so
    /// far, ``{"requests", "bytes", "retries"}`` (tensors are fetched when first
    /// asked for); ``None`` for a local file.
    #[getter]
    fn remote<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.mapping(py)?
            .get()
            .fetched()
            .map(|f| f.to_dict(py))
            .transpose()
    }

    /// True once `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.mapping.is_closed()
    }

    /// What the descriptor of tensor `name` says, as a ``dict``: ``"dtype"`` (the
    /// element type's name, as ``hrry inspect --json`` prints it), ``"shape"`` (a
    /// tuple), ``"layout"`` (``"row-major"``, ``"csr"``, …), ``"quantization"``
    /// (``None`` or a dict with ``"scheme"`` and the scheme's fields) and
    /// ``"buffers"`` (the byte size of each buffer). ``KeyError`` if there is no such
    /// tensor.
    fn info<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyDict>> {
        let m = self.mapping(py)?;
        let file = m.get().file();
        let entry = file
            .find(name)
            .ok_or_else(|| PyKeyError::new_err(name.to_string()))?;
        let desc = detached(py, || file.descriptor(entry))?.map_err(|e| {
            m.get()
                .raised()
                .unwrap_or_else(|| file_error(py, &self.what(), e))
        })?;
        descriptor_info(py, desc)
    }

    /// Tensor `name` as a NumPy array: exactly the array ``hrry export`` writes (same
    /// dtype rules: bfloat16 and narrow floats widen to float32, sub-byte integers to
    /// int8/uint8, quantized tensors dequantize to float32, any layout comes out in
    /// logical row-major order). When the stored bytes already are that array (a
    /// row-major tensor of a type NumPy has), the result is a view into the mapping,
    /// no copy (read-only, or writeable when opened with ``copy_on_write=True``);
    /// otherwise a new array. ``KeyError`` if there is no such tensor.
    ///
    /// ``widen=False`` keeps bfloat16, float8 (e4m3, e5m2, e8m0), float6 and float4
    /// as ``ml_dtypes`` arrays of the stored codes (views into the mapping for a
    /// row-major bfloat16 or float8 tensor); ``ImportError`` naming ml_dtypes when
    /// such a tensor is asked for and it is not installed, ``HrryError`` for
    /// float128.
    #[pyo3(signature = (name, *, widen = true))]
    fn get_tensor<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        widen: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let m = self.mapping(py)?;
        if widen {
            return tensor_array(&m, &self.what(), name);
        }
        let (kind, array) = stored_array(&m, &self.what(), name)?;
        unwidened(py, name, kind, array)
    }

    /// Tensor `name` in its stored element type, for ``hrry.torch``: the element
    /// type's name (``"quantized"``, ``"extension"`` for those) and an array —
    /// the stored codes as an integer array of the same width for the
    /// types NumPy lacks, else what ``get_tensor`` gives.
    fn _stored<'py>(
        &self,
        py: Python<'py>,
        name: &str,
    ) -> PyResult<(&'static str, Bound<'py, PyAny>)> {
        let m = self.mapping(py)?;
        stored_array(&m, &self.what(), name)
    }

    /// True when arrays viewing the mapping are writeable (``copy_on_write=True``).
    #[getter]
    fn copy_on_write(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.mapping(py)?.get().writeable())
    }

    /// Dequantizes tensor `name` to float32 in logical row-major order: the values
    /// ``hrry dequant -o`` writes. The SIMD kernels run with the interpreter released,
    /// so threads dequantize in parallel. With ``out`` (a writeable C-contiguous
    /// float32 array of the tensor's shape) the values are written there and ``out``
    /// is returned; otherwise a new writeable array. A new array of at least 1 MiB
    /// reuses the memory of an earlier output of the same size that was freed (see
    /// ``set_buffer_cache``): fresh memory's page faults can cost more than the
    /// dequantization itself. ``threads`` caps the threads one call uses on a large
    /// tensor (default: one per available core; 1 keeps the work on the calling
    /// thread); the values do not depend on it. ``HrryError`` if the tensor is not
    /// quantized.
    #[pyo3(signature = (name, *, out = None, threads = None))]
    fn dequantize<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        out: Option<Bound<'py, PyAny>>,
        threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let what = self.what();
        let threads = threads_arg(threads)?;
        let m = self.mapping(py)?;
        let tensor = m.get().tensor(py, &what, name)?;
        // `open` validated the whole file (every quantization rule binds in both
        // modes): only the descriptor is checked again, not every scale.
        let mut dq = detached(py, || {
            Dequantizer::prevalidated(tensor.descriptor, &tensor.buffers)
        })?
        .map_err(|e| quant_error(py, &what, name, e))?;
        dq.set_threads(threads);
        dequantize_to(py, &dq, out, &what, name)
    }

    /// Statistics of every tensor's values (dequantized; read a piece at a time) and
    /// parameter counts per element type, as plain data: see ``hrry.stats``.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let m = self.mapping(py)?;
        let file = hrry::content::ModelFile::of_hrry(m.get().file());
        crate::content::stats_of(py, &file)
    }

    /// Closes the file. Arrays already returned stay valid (they keep the mapping
    /// alive); any further call on the file raises ``ValueError``.
    fn close(&self) {
        self.mapping.close();
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, _args: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.close();
        false
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        match self.mapping(py) {
            Ok(m) => format!(
                "<hrry.File {:?}, {} tensor(s)>",
                self.what(),
                m.get().file().len()
            ),
            Err(_) => format!("<hrry.File {:?}, closed>", self.what()),
        }
    }
}

/// Opens the HRRYFILE ``source``, checks it in one pass and returns a `File`.
///
/// ``source`` is a path (mapped), an ``http://``, ``https://`` or ``s3://`` URL
/// or a binary file object with ``seek`` and ``read`` (an fsspec file), or the
/// bytes themselves (copied into private memory). A URL or file object is read as
/// needed: the metadata now (for a URL, a suffix request and the descriptors), a
/// tensor's bytes when it is first asked for, kept in a mapped temporary mirror
/// (in ``TMPDIR``) so that asking again costs nothing and arrays view it, read-only.
///
/// ``check="metadata"`` (the default) judges every rule decided from the header,
/// trailer, index, KV, descriptors and parameter buffers (strictly, or with
/// ``permissive=True`` the spec's rules only, with its permissive allowances;
/// ``policy="spec"`` leaves out hrry's hardening rules, whose refusals otherwise
/// say they are the policy's):
/// what an untrusted file needs, at a cost independent of the tensors' size.
/// ``check="full"`` adds the rules on padding and data bytes, refusing exactly what
/// ``hrry.validate`` rejects; ``check="trusted"``, for files validated earlier,
/// checks the index (not its CRC-32C, nor that names are unique) and decodes each
/// descriptor when first read.
///
/// ``copy_on_write=True`` maps the file privately: arrays viewing it are writeable,
/// a page is copied when first written (in this process only) and the file never
/// changes; writes are seen by later reads of that tensor from the same `File`
/// (`Client.put` of it included). By default the mapping and its arrays are
/// read-only. A URL or file object cannot be opened copy-on-write (``ValueError``;
/// copy the arrays, or use `load_file`).
///
/// ``max_memory`` (bytes) caps the memory budget opening draws from for what the
/// file's metadata describes (16 MiB + 16 x the bytes read, at most 2 GiB by
/// default, as ``hrry validate --max-memory``): a file that needs more is refused
/// with ``InvalidFileError`` naming ``HF-LIM-001`` and ``max_memory``. The mapped
/// pages opening reads (the metadata's; with ``check="full"`` every page) count
/// in the process's resident memory until the system reclaims them
/// (docs/security.md).
///
/// Raises ``InvalidFileError`` (``.violations`` holds the first broken rule) and
/// ``OSError`` when the file cannot be read (``IsADirectoryError`` for a
/// directory, ``FileNotFoundError`` naming a missing URL; a file object's own
/// exception when its ``seek`` or ``read`` raises, then or when a tensor is read).
/// The work runs with the interpreter released.
#[pyfunction]
#[pyo3(signature = (source, *, permissive = false, check = "metadata", copy_on_write = false,
    timeout = None, stall_timeout = None, retries = None, policy = None, max_memory = None))]
#[allow(clippy::too_many_arguments)]
pub fn open(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    permissive: bool,
    check: &str,
    copy_on_write: bool,
    timeout: Option<f64>,
    stall_timeout: Option<f64>,
    retries: Option<u32>,
    policy: Option<&str>,
    max_memory: Option<u64>,
) -> PyResult<File> {
    let check = check_arg(check)?;
    let net = Net::new(timeout, stall_timeout, retries)?;
    let judge = Judge::new(permissive, policy)?.max_memory(max_memory);
    let (what, mapping) = open_input(py, source, judge, check, access(copy_on_write), false, &net)?;
    Ok(File {
        path: PathBuf::from(what),
        mapping: Slot::new(Py::new(py, mapping)?),
    })
}

fn access(copy_on_write: bool) -> Access {
    if copy_on_write {
        Access::CopyOnWrite
    } else {
        Access::ReadOnly
    }
}

/// How a file opened from bytes is named.
const BYTES_NAME: &str = "<bytes>";

/// Opens the HRRYFILE `data`, copied into private memory of `access`, as
/// [`open_mapping`] does.
fn open_bytes(
    py: Python<'_>,
    data: &[u8],
    access: Access,
    judge: Judge,
    check: Depth,
) -> PyResult<Mapping> {
    if data.is_empty() {
        // No mapping is empty: the core names what an empty file breaks.
        return match OpenOptions::new()
            .rules(hrry::validate::Rules::Hardened)
            .open_bytes(data)
        {
            Err(e) => Err(file_error(py, BYTES_NAME, e)),
            Ok(_) => Err(HrryError::new_err("<bytes>: empty")),
        };
    }
    let map = memory::map_copy(data, access).map_err(|e| io_error(Path::new(BYTES_NAME), e))?;
    decode(py, BYTES_NAME, map, None, judge, check, access)
}

/// Opens a HRRYFILE held in ``data`` (bytes-like), copied into private memory, as
/// `open` opens a file (``hrry.torch.load``); its path reads ``"<bytes>"``.
#[pyfunction]
#[pyo3(signature = (data, *, copy_on_write = false))]
pub fn _open_bytes(py: Python<'_>, data: &[u8], copy_on_write: bool) -> PyResult<File> {
    let judge = Judge::new(false, None)?;
    let mapping = open_bytes(py, data, access(copy_on_write), judge, Depth::Metadata)?;
    Ok(File {
        path: PathBuf::from(BYTES_NAME),
        mapping: Slot::new(Py::new(py, mapping)?),
    })
}

/// Loads every tensor of the HRRYFILE ``source`` into a ``dict`` of NumPy arrays,
/// in index order — like ``safetensors.numpy.load_file``, so switching is one import.
/// ``source`` is what `open` takes. The file is checked as ``hrry.open`` checks it
/// (``InvalidFileError``).
///
/// A local file is read once, whole, into private memory (positioned reads,
/// checked unchanged: a file rewritten meanwhile raises ``OSError`` "changed
/// while being read"): the arrays are the file's contents at load time, writeable,
/// views of that memory where the stored bytes allow (see `File.get_tensor`), and
/// independent of the file afterwards, which may be replaced, truncated or
/// deleted. ``mmap=True`` maps the file privately instead (copy-on-write): no read
/// up front, but the arrays then follow the file (a rewrite changes their values,
/// a truncation kills the process with ``SIGBUS`` when they are touched; see
/// docs/security.md). Arrays of a URL or file object are writeable arrays of their
/// own. ``widen=False`` as for `File.get_tensor`; ``max_memory`` as for `open`
/// (the budget covers the metadata, not the copy of the file itself).
#[pyfunction]
#[pyo3(signature = (source, *, widen = true, timeout = None, stall_timeout = None, retries = None,
    mmap = false, max_memory = None))]
#[allow(clippy::too_many_arguments)]
pub fn load_file<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    widen: bool,
    timeout: Option<f64>,
    stall_timeout: Option<f64>,
    retries: Option<u32>,
    mmap: bool,
    max_memory: Option<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    let net = Net::new(timeout, stall_timeout, retries)?;
    let judge = Judge::new(false, None)?.max_memory(max_memory);
    let (what, mapping) = match Input::of(source, true)? {
        Input::Path(path) if !mmap => {
            let mapping = read_private(py, &path, judge)?;
            (path.display().to_string(), mapping)
        }
        _ => open_input(
            py,
            source,
            judge,
            Depth::Metadata,
            Access::CopyOnWrite,
            true,
            &net,
        )?,
    };
    let mapping = Bound::new(py, mapping)?;
    let writeable = mapping.get().writeable();
    let out = PyDict::new(py);
    for entry in mapping.get().file().entries() {
        let name = entry.name();
        let mut array = if widen {
            tensor_array(&mapping, &what, name)?
        } else {
            let (kind, array) = stored_array(&mapping, &what, name)?;
            unwidened(py, name, kind, array)?
        };
        // A view of a read-only mirror becomes an array of its own, unless it is
        // a view of repeated bytes (larger than the file: see
        // `export::repeated_bytes`), which stays a read-only view.
        let repeated = array.getattr("nbytes")?.extract::<u64>()? > mapping.get().file().size();
        if !writeable && !repeated && !array.getattr("flags")?.getattr("writeable")?.is_truthy()? {
            array = array.call_method0("copy")?;
        }
        out.set_item(name, array)?;
    }
    Ok(out)
}

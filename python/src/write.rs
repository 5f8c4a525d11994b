//! `hrry.save_file` and `hrry.quantize`: NumPy arrays (and per-block quantized
//! tensors) written as a HRRYFILE by the core's writer; `_save_stored`, the same for
//! tensors given as their element type and stored codes (`hrry.torch`).

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use hrry::file::{HrryWriter, WriterOptions};
use hrry::model::{build::dense, ElementType};
use hrry::quant::{quantize_per_block, Dequantizer, PerBlockOptions};
use hrry::schema::KvValue;
use numpy::{PyArray1, PyArrayDyn, PyArrayMethods, PyReadonlyArray1, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use crate::array::shape_tuple;
use crate::dequant::{dequantize_to, threads_arg};
use crate::errors::{detached, file_error, guard, io_error, HrryError};
use crate::kv;

/// A tensor quantized with per-block affine quantization (from `hrry.quantize`),
/// ready for `hrry.save_file`; `dequantize()` gives back its float32 values.
#[pyclass(module = "hrry", frozen)]
pub struct Quantized {
    pub(crate) inner: hrry::quant::Quantized,
    options: PerBlockOptions,
}

#[pymethods]
impl Quantized {
    /// The tensor's shape.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        shape_tuple(py, &self.inner.descriptor.shape)
    }

    /// The storage element type (``"int4"``, ``"int8"``, …).
    #[getter]
    fn scheme(&self) -> &'static str {
        self.options.storage.name()
    }

    /// Elements per block.
    #[getter]
    fn block_size(&self) -> u32 {
        self.options.block_size
    }

    /// The blocked axis.
    #[getter]
    fn axis(&self) -> usize {
        self.options.axis
    }

    /// True for symmetric (absmax) quantization without zero points.
    #[getter]
    fn symmetric(&self) -> bool {
        self.options.symmetric
    }

    /// The scale type (``"float16"``, ``"bfloat16"`` or ``"float32"``).
    #[getter]
    fn scale_dtype(&self) -> &'static str {
        self.options.scale_type.name()
    }

    /// Bytes of the data, scale and zero-point buffers together.
    #[getter]
    fn nbytes(&self) -> usize {
        self.inner.buffers.iter().map(Vec::len).sum()
    }

    /// The dequantized float32 values (what `File.dequantize` returns once saved);
    /// ``out`` and ``threads`` as for `File.dequantize`.
    #[pyo3(signature = (*, out = None, threads = None))]
    fn dequantize<'py>(
        &self,
        py: Python<'py>,
        out: Option<Bound<'py, PyAny>>,
        threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let threads = threads_arg(threads)?;
        let buffers = self.inner.buffer_slices();
        let mut dq = guard(|| Dequantizer::new(&self.inner.descriptor, &buffers))?
            .map_err(|e| HrryError::new_err(e.to_string()))?;
        dq.set_threads(threads);
        dequantize_to(py, &dq, out, "quantized tensor", "")
    }

    fn __repr__(&self) -> String {
        format!(
            "<hrry.Quantized {} shape={:?} block_size={} axis={} symmetric={} scale_dtype={}>",
            self.scheme(),
            self.inner.descriptor.shape,
            self.options.block_size,
            self.options.axis,
            self.options.symmetric,
            self.scale_dtype()
        )
    }
}

/// Quantizes ``array`` (converted to float32) with per-block affine quantization,
/// for `save_file`: ``scheme`` is the storage type (``"int4"``, ``"int8"``,
/// ``"uint4"``, ``"uint8"``, ``"int2"``, ``"uint2"``), ``block_size`` the elements
/// per block (a power of two, at most the axis length) along ``axis`` (the last by
/// default). Symmetric (absmax, no zero points) by default — ``"int4"`` and
/// ``"int8"`` with blocks of 32 and float16 scales are GGUF ``Q4_0``/``Q8_0``'s
/// equivalents; ``symmetric=False`` stores min/max zero points. ``scale_dtype`` is
/// ``"float16"``, ``"bfloat16"`` or ``"float32"``.
#[pyfunction]
#[pyo3(signature = (array, scheme = "int4", block_size = 32, *, axis = -1, symmetric = true, scale_dtype = "float16"))]
pub fn quantize(
    py: Python<'_>,
    array: &Bound<'_, PyAny>,
    scheme: &str,
    block_size: u32,
    axis: isize,
    symmetric: bool,
    scale_dtype: &str,
) -> PyResult<Quantized> {
    let np = py.import("numpy")?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("dtype", np.getattr("float32")?)?;
    kwargs.set_item("order", "C")?;
    let values = np.call_method("asarray", (array,), Some(&kwargs))?;
    let values = values.cast::<PyArrayDyn<f32>>()?.readonly();
    let shape: Vec<u64> = values.shape().iter().map(|&d| d as u64).collect();
    let rank = shape.len() as isize;
    if rank == 0 {
        return Err(PyValueError::new_err("cannot quantize a scalar (rank 0)"));
    }
    let axis = if axis < 0 { axis + rank } else { axis };
    if !(0..rank).contains(&axis) {
        return Err(PyValueError::new_err(format!(
            "axis out of range for a rank-{rank} array"
        )));
    }
    let type_named = |name: &str, what: &str| {
        ElementType::from_name(name)
            .ok_or_else(|| PyValueError::new_err(format!("unknown {what} {name:?}")))
    };
    let options = PerBlockOptions {
        storage: type_named(scheme, "scheme")?,
        scale_type: type_named(scale_dtype, "scale_dtype")?,
        block_size,
        axis: axis as usize,
        symmetric,
    };
    let slice = values
        .as_slice()
        .map_err(|_| PyValueError::new_err("array is not contiguous"))?;
    let inner = detached(py, || quantize_per_block(slice, &shape, &options))?
        .map_err(|e| HrryError::new_err(e.to_string()))?;
    Ok(Quantized { inner, options })
}

/// A tensor given to `save_file`, held while it is written.
enum Pending<'py> {
    Array(String, ElementType, Vec<u64>, PyReadonlyArray1<'py, u8>),
    Quantized(String, Bound<'py, Quantized>),
}

/// One tensor to write, its bytes borrowed from a NumPy array or a `Quantized`.
enum Item<'a> {
    Array {
        name: &'a str,
        ty: ElementType,
        shape: &'a [u64],
        data: &'a [u8],
    },
    Quantized {
        name: &'a str,
        quantized: &'a hrry::quant::Quantized,
    },
}

/// `value` as a C-contiguous little-endian NumPy array with its element type, or
/// `TypeError` for dtypes the format cannot hold.
fn normalized<'py>(
    np: &Bound<'py, PyModule>,
    name: &str,
    value: &Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyAny>, ElementType)> {
    let py = np.py();
    let kwargs = PyDict::new(py);
    kwargs.set_item("order", "C")?;
    let mut array = np.call_method("asarray", (value,), Some(&kwargs))?;
    let mut dtype = array.getattr("dtype")?;
    if dtype.getattr("byteorder")?.extract::<String>()? == ">" {
        let little = dtype.call_method1("newbyteorder", ("<",))?;
        array = array.call_method1("astype", (little,))?;
        dtype = array.getattr("dtype")?;
    }
    let descr: String = dtype.getattr("str")?.extract()?;
    let dtype_name: String = dtype.getattr("name")?.extract()?;
    let ml_dtypes = match hrry::npy::import_type(&descr) {
        Some(_) => None,
        None => ml_dtypes_type(&dtype, &dtype_name)?,
    };
    let ty = hrry::npy::import_type(&descr)
        .or(ml_dtypes)
        .ok_or_else(|| {
            PyTypeError::new_err(format!(
                "tensor {name:?}: cannot store dtype {dtype_name} (supported: bool, int8-64, uint8-64, float16/32/64, complex64/128, ml_dtypes' bfloat16 and float8_e4m3fn/e5m2/e8m0fnu, or hrry.quantize output)"
            ))
        })?;
    Ok((array, ty))
}

/// The element type storing the `ml_dtypes` dtype `dtype` (named `name`) bit for
/// bit, if it is one: a dtype of that package, of that name and width.
fn ml_dtypes_type(dtype: &Bound<'_, PyAny>, name: &str) -> PyResult<Option<ElementType>> {
    use ElementType::*;
    let (ty, width) = match name {
        "bfloat16" => (Bfloat16, 2),
        "float8_e4m3fn" => (Float8E4m3, 1),
        "float8_e5m2" => (Float8E5m2, 1),
        "float8_e8m0fnu" => (Float8E8m0, 1),
        _ => return Ok(None),
    };
    let module: String = dtype.getattr("type")?.getattr("__module__")?.extract()?;
    let itemsize: usize = dtype.getattr("itemsize")?.extract()?;
    Ok((module.split('.').next() == Some("ml_dtypes") && itemsize == width).then_some(ty))
}

/// The stored bytes of elements of `ty` given as C-order data of one element per
/// NumPy item: [`hrry::npy::stored_bytes`], and for bfloat16 and the float8 types
/// (which NumPy carries as ml_dtypes or raw codes) the codes as they are.
fn stored_form(ty: ElementType, data: &[u8]) -> Option<Cow<'_, [u8]>> {
    use ElementType::*;
    match ty {
        Bfloat16 | Float8E4m3 | Float8E5m2 | Float8E8m0 => Some(Cow::Borrowed(data)),
        _ => hrry::npy::stored_bytes(ty, data),
    }
}

/// `value` as [`normalized`] makes it: its element type, its shape, and a flat
/// uint8 view of its memory (no copy: the normalized array is C-contiguous).
pub(crate) fn stored_array<'py>(
    np: &Bound<'py, PyModule>,
    name: &str,
    value: &Bound<'py, PyAny>,
) -> PyResult<(ElementType, Vec<u64>, PyReadonlyArray1<'py, u8>)> {
    let (array, ty) = normalized(np, name, value)?;
    let shape: Vec<u64> = array
        .getattr("shape")?
        .extract::<Vec<usize>>()?
        .into_iter()
        .map(|d| d as u64)
        .collect();
    let bytes = array
        .call_method1("reshape", (-1,))?
        .call_method1("view", (np.getattr("uint8")?,))?
        .cast_into::<PyArray1<u8>>()?
        .readonly();
    Ok((ty, shape, bytes))
}

/// Writes ``tensors`` (a ``dict`` of names to NumPy arrays or `Quantized` tensors)
/// to ``path`` as a HRRYFILE, with optional ``metadata`` (a ``dict`` of ``str`` keys
/// to ``str``, ``int`` — beyond 2^63 as uint64 —, ``float``, ``bool``, ``bytes`` or
/// lists of one of them) — like ``safetensors.numpy.save_file``.
///
/// The file is written to a temporary file renamed into place (atomic). Every NumPy
/// dtype the format has maps to its element type (complex included, bool packed to
/// bits); big-endian arrays are converted to little-endian and non-contiguous ones
/// made contiguous. ``TypeError`` for what cannot be stored (object arrays, ``None``
/// metadata, non-``str`` names).
#[pyfunction]
#[pyo3(signature = (tensors, path, metadata = None))]
pub fn save_file(
    py: Python<'_>,
    tensors: &Bound<'_, PyDict>,
    path: PathBuf,
    metadata: Option<&Bound<'_, PyDict>>,
) -> PyResult<()> {
    let kv = kv_pairs(metadata)?;
    let np = py.import("numpy")?;
    // The arrays and their borrows stay alive here while the bytes are written.
    let mut pending = Vec::new();
    for (name, value) in tensors.iter() {
        let name = tensor_name(&name)?;
        if let Ok(q) = value.cast::<Quantized>() {
            pending.push(Pending::Quantized(name, q.clone()));
            continue;
        }
        let (ty, shape, bytes) = stored_array(&np, &name, &value)?;
        pending.push(Pending::Array(name, ty, shape, bytes));
    }
    write_pending(py, &pending, &kv, Some(&path)).map(drop)
}

/// Writes ``tensors`` (a list of ``(name, element_type, shape, codes)``: an
/// element type's name as ``File.info`` gives it, a shape, and a C-contiguous uint8
/// array of one stored element per item — booleans one byte each, bfloat16 and
/// float8 their codes) as a HRRYFILE, with ``metadata`` as for `save_file`: to
/// ``path``, or, when ``path`` is ``None``, into the returned ``bytes``. The
/// writer under ``hrry.torch.save_file`` and ``hrry.torch.save``.
#[pyfunction]
#[pyo3(signature = (tensors, path = None, metadata = None))]
pub fn _save_stored<'py>(
    py: Python<'py>,
    tensors: &Bound<'py, PyList>,
    path: Option<PathBuf>,
    metadata: Option<&Bound<'py, PyDict>>,
) -> PyResult<Option<Bound<'py, PyBytes>>> {
    let kv = kv_pairs(metadata)?;
    let mut pending = Vec::new();
    for item in tensors.iter() {
        let (name, type_name, shape, codes): (
            Bound<'py, PyAny>,
            String,
            Vec<u64>,
            Bound<'py, PyAny>,
        ) = item.extract()?;
        let name = tensor_name(&name)?;
        let ty = ElementType::from_name(&type_name)
            .filter(|&t| stored_form(t, &[]).is_some())
            .ok_or_else(|| {
                PyTypeError::new_err(format!(
                    "tensor {name:?}: cannot store element type {type_name:?}"
                ))
            })?;
        let codes = codes
            .cast_into::<PyArray1<u8>>()
            .map_err(|_| {
                PyTypeError::new_err(format!("tensor {name:?}: codes must be a 1-D uint8 array"))
            })?
            .readonly();
        pending.push(Pending::Array(name, ty, shape, codes));
    }
    let bytes = write_pending(py, &pending, &kv, path.as_deref())?;
    Ok(bytes.map(|b| PyBytes::new(py, &b)))
}

/// A tensor name given to a writer, which must be a ``str``.
fn tensor_name(name: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(name
        .cast::<PyString>()
        .map_err(|_| PyTypeError::new_err("tensor names must be str"))?
        .to_cow()?
        .to_string())
}

/// The ``metadata`` argument of the writers as KV pairs in order.
fn kv_pairs(metadata: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<(String, KvValue)>> {
    let mut kv: Vec<(String, KvValue)> = Vec::new();
    if let Some(metadata) = metadata {
        for (key, value) in metadata.iter() {
            let key: String = key
                .cast::<PyString>()
                .map_err(|_| PyTypeError::new_err("metadata keys must be str"))?
                .to_cow()?
                .to_string();
            let value = kv::from_python(&key, &value)?;
            kv.push((key, value));
        }
    }
    Ok(kv)
}

/// Writes `pending` with `kv` to `path` (atomically), or into the returned bytes
/// when `path` is `None`; the work runs with the interpreter released.
fn write_pending(
    py: Python<'_>,
    pending: &[Pending<'_>],
    kv: &[(String, KvValue)],
    path: Option<&Path>,
) -> PyResult<Option<Vec<u8>>> {
    let what = path.map_or_else(|| "<bytes>".to_string(), |p| p.display().to_string());
    let items = pending
        .iter()
        .map(|p| match p {
            Pending::Array(name, ty, shape, bytes) => Ok(Item::Array {
                name,
                ty: *ty,
                shape,
                data: bytes
                    .as_slice()
                    .map_err(|_| PyValueError::new_err("array is not contiguous"))?,
            }),
            Pending::Quantized(name, q) => Ok(Item::Quantized {
                name,
                quantized: &q.get().inner,
            }),
        })
        .collect::<PyResult<Vec<_>>>()?;

    let result = detached(py, || match path {
        Some(path) => HrryWriter::create(path, WriterOptions::default())
            .map_err(WriteError::File)
            .and_then(|w| write_items(w, kv, &items))
            .and_then(|w| w.finish_file().map_err(WriteError::File))
            .map(|()| None),
        None => HrryWriter::new(Vec::new(), WriterOptions::default())
            .map_err(WriteError::File)
            .and_then(|w| write_items(w, kv, &items))
            .and_then(|w| w.finish().map_err(WriteError::File))
            .map(Some),
    })?;
    result.map_err(|e| match e {
        WriteError::File(hrry::file::Error::Io(io)) => io_error(Path::new(&what), io),
        WriteError::File(e) => file_error(py, &what, e),
        WriteError::Shape(name) => HrryError::new_err(format!("tensor {name:?}: shape too large")),
        WriteError::Size(name) => HrryError::new_err(format!(
            "tensor {name:?}: the data does not hold one element per item of its shape"
        )),
    })
}

enum WriteError {
    File(hrry::file::Error),
    Shape(String),
    Size(String),
}

/// Adds `kv` and `items` to `w` and returns it, to be finished.
fn write_items<W: std::io::Write>(
    mut w: HrryWriter<W>,
    kv: &[(String, KvValue)],
    items: &[Item<'_>],
) -> Result<HrryWriter<W>, WriteError> {
    for (key, value) in kv {
        w.add_kv(key, value.clone()).map_err(WriteError::File)?;
    }
    for item in items {
        match item {
            Item::Array {
                name,
                ty,
                shape,
                data,
            } => {
                let desc = dense(*ty, shape).ok_or_else(|| WriteError::Shape(name.to_string()))?;
                let count = shape.iter().try_fold(1u64, |n, &d| n.checked_mul(d));
                let per_item = match ty {
                    ElementType::Bool => Some(1),
                    t => t.bit_width().map(|b| u64::from(b) / 8),
                };
                if count.zip(per_item).map(|(n, b)| n * b) != Some(data.len() as u64) {
                    return Err(WriteError::Size(name.to_string()));
                }
                let stored =
                    stored_form(*ty, data).ok_or_else(|| WriteError::Shape(name.to_string()))?;
                w.write_tensor(name, &desc, &[&stored])
                    .map_err(WriteError::File)?;
            }
            Item::Quantized { name, quantized } => {
                w.write_tensor(name, &quantized.descriptor, &quantized.buffer_slices())
                    .map_err(WriteError::File)?;
            }
        }
    }
    Ok(w)
}

//! NumPy arrays over the core's bytes: read-only views into a mapping (zero copy),
//! arrays over pooled dequantization outputs, and arrays owning exported data.

use std::os::raw::{c_int, c_void};

use numpy::npyffi::{self, npy_intp, NpyTypes, PY_ARRAY_API};
use numpy::{PyArray1, PyArrayDescr, PyArrayDescrMethods};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::errors::{HrryError, InternalError};
use crate::pool::{Buffer, BufferOwner};

/// `shape` as a Python tuple.
pub(crate) fn shape_tuple<'py>(py: Python<'py>, shape: &[u64]) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(py, shape)
}

/// `shape` as NumPy dimensions, refusing sizes NumPy cannot index.
fn dims(shape: &[u64]) -> PyResult<Vec<npy_intp>> {
    shape
        .iter()
        .map(|&d| npy_intp::try_from(d))
        .collect::<Result<_, _>>()
        .map_err(|_| HrryError::new_err(format!("shape {shape:?} is too large for NumPy")))
}

/// A read-only C-order array of dtype `descr` and `shape` over `data`, whose base
/// object is `owner`.
///
/// # Safety
///
/// `data` must stay valid and unchanged for as long as `owner` lives (it points into
/// memory `owner` keeps alive, such as a file mapping it holds).
pub(crate) unsafe fn borrowed_array<'py>(
    owner: Bound<'py, PyAny>,
    descr: &str,
    shape: &[u64],
    data: &[u8],
) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: as the caller guarantees; the array is read-only.
    unsafe { array_over(owner, descr, shape, data.as_ptr().cast_mut(), data.len(), 0) }
}

/// [`borrowed_array`], writeable when `writeable` is true.
///
/// # Safety
///
/// As for [`borrowed_array`]; when `writeable`, the pages of `data` must be
/// writeable and private to this process (a copy-on-write mapping `owner` holds),
/// and nothing may rely on them staying unchanged but the tensor's own later reads.
pub(crate) unsafe fn mapped_array<'py>(
    owner: Bound<'py, PyAny>,
    descr: &str,
    shape: &[u64],
    data: &[u8],
    writeable: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let flags = if writeable {
        npyffi::NPY_ARRAY_WRITEABLE
    } else {
        0
    };
    // SAFETY: as the caller guarantees.
    unsafe {
        array_over(
            owner,
            descr,
            shape,
            data.as_ptr().cast_mut(),
            data.len(),
            flags,
        )
    }
}

/// A read-only array of dtype `descr` and `shape` whose element `[0, …]` is at
/// `origin` and whose steps are `byte_strides` (possibly zero or negative): a
/// view of a tensor whose stored bytes repeat (see
/// `hrry::export::repeated_bytes`), whose base object is `owner`.
///
/// # Safety
///
/// Every element the shape and strides address must lie inside memory that
/// `owner` keeps alive and unchanged as long as it lives.
pub(crate) unsafe fn strided_array<'py>(
    owner: Bound<'py, PyAny>,
    descr: &str,
    shape: &[u64],
    byte_strides: &[isize],
    origin: *const u8,
) -> PyResult<Bound<'py, PyAny>> {
    let py = owner.py();
    let dtype = PyArrayDescr::new(py, descr)?;
    let mut dims = dims(shape)?;
    if byte_strides.len() != dims.len() {
        return Err(InternalError::new_err("one stride per dimension"));
    }
    let mut strides: Vec<npyffi::npy_intp> = byte_strides.iter().map(|&s| s as _).collect();
    let rank =
        c_int::try_from(dims.len()).map_err(|_| HrryError::new_err("rank too large for NumPy"))?;
    // SAFETY: FFI into NumPy. The descriptor reference is stolen by the call; `dims`
    // and `strides` outlive it; flags 0 make the array read-only; the addressed
    // memory is kept alive by `owner`, as the caller guarantees.
    let array = unsafe {
        let ptr = PY_ARRAY_API.PyArray_NewFromDescr(
            py,
            npyffi::get_type_object(py, NpyTypes::PyArray_Type),
            dtype.into_dtype_ptr(),
            rank,
            dims.as_mut_ptr(),
            strides.as_mut_ptr(),
            origin.cast_mut().cast::<c_void>(),
            0,
            std::ptr::null_mut(),
        );
        Bound::from_owned_ptr_or_err(py, ptr)?
    };
    // SAFETY: as in `array_over`.
    let status =
        unsafe { PY_ARRAY_API.PyArray_SetBaseObject(py, array.as_ptr().cast(), owner.into_ptr()) };
    if status < 0 {
        return Err(PyErr::fetch(py));
    }
    Ok(array)
}

/// A writeable C-order float32 array of `shape` over `buffer` (exactly its size),
/// which goes back to the output pool when the array and its views are gone.
pub(crate) fn pooled_array<'py>(
    py: Python<'py>,
    buffer: Buffer,
    shape: &[u64],
) -> PyResult<Bound<'py, PyAny>> {
    let (data, len) = (buffer.as_ptr(), buffer.bytes());
    let owner = Bound::new(py, BufferOwner::new(buffer))?.into_any();
    // SAFETY: `owner` owns the `len` bytes at `data` and frees nothing while it
    // lives; nothing else refers to them, so the array may write them.
    unsafe { array_over(owner, "<f4", shape, data, len, npyffi::NPY_ARRAY_WRITEABLE) }
}

/// A C-order array of dtype `descr` and `shape` over the `len` bytes at `data`,
/// whose base object is `owner`, with NumPy array `flags` (0: read-only).
///
/// # Safety
///
/// The bytes must stay valid for as long as `owner` lives, unchanged unless `flags`
/// makes the array writeable, in which case only the array may change them.
unsafe fn array_over<'py>(
    owner: Bound<'py, PyAny>,
    descr: &str,
    shape: &[u64],
    data: *mut u8,
    len: usize,
    flags: c_int,
) -> PyResult<Bound<'py, PyAny>> {
    let py = owner.py();
    let dtype = PyArrayDescr::new(py, descr)?;
    let mut dims = dims(shape)?;
    let needed = shape
        .iter()
        .try_fold(dtype.itemsize() as u64, |n, &d| n.checked_mul(d));
    if needed != Some(len as u64) {
        return Err(InternalError::new_err(format!(
            "{len} bytes for an array of {descr} and shape {shape:?}"
        )));
    }
    let rank =
        c_int::try_from(dims.len()).map_err(|_| HrryError::new_err("rank too large for NumPy"))?;
    // SAFETY: FFI into NumPy. The descriptor reference is stolen by the call; `dims`
    // outlives it; null strides ask for a C-order array over `data` with `flags`,
    // memory the caller guarantees `owner` keeps alive.
    let array = unsafe {
        let ptr = PY_ARRAY_API.PyArray_NewFromDescr(
            py,
            npyffi::get_type_object(py, NpyTypes::PyArray_Type),
            dtype.into_dtype_ptr(),
            rank,
            dims.as_mut_ptr(),
            std::ptr::null_mut(),
            data.cast::<c_void>(),
            flags,
            std::ptr::null_mut(),
        );
        Bound::from_owned_ptr_or_err(py, ptr)?
    };
    // SAFETY: `array` is the array just created; SetBaseObject steals the reference
    // to `owner` (also on failure), which keeps the bytes alive as long as the array.
    let status =
        unsafe { PY_ARRAY_API.PyArray_SetBaseObject(py, array.as_ptr().cast(), owner.into_ptr()) };
    if status < 0 {
        return Err(PyErr::fetch(py));
    }
    Ok(array)
}

/// A writeable array of dtype `descr` and `shape` owning `bytes` (no copy).
pub(crate) fn owned_array<'py>(
    py: Python<'py>,
    bytes: Vec<u8>,
    descr: &str,
    shape: &[u64],
) -> PyResult<Bound<'py, PyAny>> {
    PyArray1::from_vec(py, bytes)
        .call_method1("view", (descr,))?
        .call_method1("reshape", (shape_tuple(py, shape)?,))
}

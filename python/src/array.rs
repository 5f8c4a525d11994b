//! NumPy arrays over the core's bytes: read-only views into a mapping (zero copy),
//! and arrays owning exported or dequantized data.

use std::os::raw::{c_int, c_void};

use numpy::npyffi::{self, npy_intp, NpyTypes, PY_ARRAY_API};
use numpy::{PyArray1, PyArrayDescr, PyArrayDescrMethods};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::errors::{HrryError, InternalError};

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
    let py = owner.py();
    let dtype = PyArrayDescr::new(py, descr)?;
    let mut dims = dims(shape)?;
    let needed = shape
        .iter()
        .try_fold(dtype.itemsize() as u64, |n, &d| n.checked_mul(d));
    if needed != Some(data.len() as u64) {
        return Err(InternalError::new_err(format!(
            "{} bytes for an array of {descr} and shape {shape:?}",
            data.len()
        )));
    }
    let rank =
        c_int::try_from(dims.len()).map_err(|_| HrryError::new_err("rank too large for NumPy"))?;
    // SAFETY: FFI into NumPy. The descriptor reference is stolen by the call; `dims`
    // outlives it; null strides with flags 0 ask for a C-order array that is not
    // writeable over `data`, which the caller guarantees `owner` keeps alive and
    // unchanged. NumPy reads the memory only, since the array is read-only.
    let array = unsafe {
        let ptr = PY_ARRAY_API.PyArray_NewFromDescr(
            py,
            npyffi::get_type_object(py, NpyTypes::PyArray_Type),
            dtype.into_dtype_ptr(),
            rank,
            dims.as_mut_ptr(),
            std::ptr::null_mut(),
            data.as_ptr() as *mut c_void,
            0,
            std::ptr::null_mut(),
        );
        Bound::from_owned_ptr_or_err(py, ptr)?
    };
    // SAFETY: `array` is the array just created; SetBaseObject steals the reference
    // to `owner` (also on failure), which keeps `data` alive as long as the array.
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

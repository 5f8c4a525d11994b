//! The dequantize methods' common part: their `threads` argument, and the output
//! (a caller's `out=` array, checked, or a new array, large ones over pooled memory).

use hrry::quant::Dequantizer;
use numpy::{PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::{PyMemoryError, PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::array::pooled_array;
use crate::errors::{detached, invalid_file, HrryError, InternalError};
use crate::pool;
use crate::violation::Violation;

/// A dequantization error of tensor `name` of `what` as a Python exception:
/// `InvalidFileError` for a broken rule, `HrryError` otherwise.
pub(crate) fn quant_error(py: Python<'_>, what: &str, name: &str, e: hrry::Error) -> PyErr {
    match e {
        hrry::Error::Invalid(v) => invalid_file(
            py,
            &format!("{what}: tensor {name:?}"),
            vec![Violation::from(&v)],
            0,
        ),
        other => HrryError::new_err(format!("{what}: tensor {name:?}: {other}")),
    }
}

/// The `threads` argument of the dequantize methods as
/// [`Dequantizer::set_threads`] takes it (0: one per core).
pub(crate) fn threads_arg(threads: Option<usize>) -> PyResult<usize> {
    match threads {
        None => Ok(0),
        Some(0) => Err(PyValueError::new_err(
            "threads must be at least 1 (or None: one per available core)",
        )),
        Some(n) => Ok(n),
    }
}

/// Dequantizes `dq` into `out` (checked to be a writeable C-contiguous float32
/// array of its shape) or into a new array.
pub(crate) fn dequantize_to<'py>(
    py: Python<'py>,
    dq: &Dequantizer<'_>,
    out: Option<Bound<'py, PyAny>>,
    what: &str,
    name: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let Some(out) = out else {
        return dequantize_new(py, dq, what, name);
    };
    let array = out.cast::<PyArrayDyn<f32>>().map_err(|_| {
        PyTypeError::new_err("out must be a numpy.ndarray of dtype float32 (native byte order)")
    })?;
    let shape: Vec<u64> = array.shape().iter().map(|&d| d as u64).collect();
    if shape != dq.shape() {
        return Err(PyValueError::new_err(format!(
            "out has shape {shape:?}, the tensor {:?}",
            dq.shape()
        )));
    }
    // as_slice_mut also accepts Fortran order, whose memory order is not the
    // logical row-major order the values come in.
    if !array.is_c_contiguous() {
        return Err(PyValueError::new_err("out must be C-contiguous"));
    }
    let mut guard = array
        .try_readwrite()
        .map_err(|e| PyValueError::new_err(format!("out is not writeable: {e}")))?;
    let slice = guard
        .as_slice_mut()
        .map_err(|_| PyValueError::new_err("out must be C-contiguous"))?;
    detached(py, || dq.dequantize_into(slice))?.map_err(|e| quant_error(py, what, name, e))?;
    drop(guard);
    Ok(out)
}

/// Dequantizes `dq` into a new array: memory from the output pool for large
/// outputs (see [`crate::pool`]), NumPy's otherwise. The bound on its size is the
/// core's ([`Dequantizer::checked_len`]).
fn dequantize_new<'py>(
    py: Python<'py>,
    dq: &Dequantizer<'_>,
    what: &str,
    name: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let len = dq
        .checked_len()
        .map_err(|e| quant_error(py, what, name, e))?;
    let bytes = len
        .checked_mul(4)
        .ok_or_else(|| HrryError::new_err("output too large"))?;
    if bytes < pool::MIN_POOLED {
        let dims: Vec<usize> = dq
            .shape()
            .iter()
            .map(|&d| usize::try_from(d))
            .collect::<Result<_, _>>()
            .map_err(|_| HrryError::new_err("shape too large"))?;
        // SAFETY: an uninitialised array, every element of which
        // `dequantize_into_fresh` writes below before it is returned.
        let array = unsafe { PyArrayDyn::<f32>::new(py, dims, false) };
        let mut guard = array.readwrite();
        let slice = guard
            .as_slice_mut()
            .map_err(|e| InternalError::new_err(format!("new array: {e}")))?;
        detached(py, || dq.dequantize_into_fresh(slice))?
            .map_err(|e| quant_error(py, what, name, e))?;
        drop(guard);
        return Ok(array.into_any());
    }
    let mut buffer = pool::take(bytes).ok_or_else(|| {
        PyMemoryError::new_err(format!("cannot allocate {bytes} bytes for the output"))
    })?;
    // A buffer that was never written faults its pages in, zeroed, as it is
    // written: ordinary stores suit it. A reused one gets non-temporal stores.
    let fresh = buffer.is_fresh();
    let slice = buffer.floats_mut(len);
    let done = detached(py, || match fresh {
        true => dq.dequantize_into_fresh(slice),
        false => dq.dequantize_into(slice),
    });
    match done {
        Ok(Ok(())) => pooled_array(py, buffer, dq.shape()),
        Ok(Err(e)) => {
            pool::give_back(buffer);
            Err(quant_error(py, what, name, e))
        }
        Err(panic) => {
            pool::give_back(buffer);
            Err(panic)
        }
    }
}

//! KV metadata values to and from Python values.

use hrry::schema::{KvArray, KvScalar, KvValue, LenBytes};
use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyFloat, PyInt, PyList, PyString, PyTuple};
use pyo3::IntoPyObjectExt;

/// A string's bytes as `str` when they are UTF-8, else as `bytes` (nothing lost).
fn text<'py>(py: Python<'py>, bytes: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.into_bound_py_any(py),
        Err(_) => PyBytes::new(py, bytes).into_bound_py_any(py),
    }
}

fn scalar<'py>(py: Python<'py>, s: &KvScalar) -> PyResult<Bound<'py, PyAny>> {
    match s {
        KvScalar::String(b) => text(py, &b.bytes),
        KvScalar::Int64(i) => i.into_bound_py_any(py),
        KvScalar::Uint64(u) => u.into_bound_py_any(py),
        KvScalar::Float64(f) => f.into_bound_py_any(py),
        KvScalar::Bool(b) => (*b != 0).into_bound_py_any(py),
        KvScalar::Bytes(b) => PyBytes::new(py, &b.bytes).into_bound_py_any(py),
    }
}

/// The Python value of a KV value: `str` (`bytes` if not UTF-8), `int`, `float`,
/// `bool`, `bytes`, or a `list` of those.
pub(crate) fn to_python<'py>(py: Python<'py>, v: &KvValue) -> PyResult<Bound<'py, PyAny>> {
    match v {
        KvValue::String(b) => text(py, &b.bytes),
        KvValue::Int64(i) => i.into_bound_py_any(py),
        KvValue::Uint64(u) => u.into_bound_py_any(py),
        KvValue::Float64(f) => f.into_bound_py_any(py),
        KvValue::Bool(b) => (*b != 0).into_bound_py_any(py),
        KvValue::Bytes(b) => PyBytes::new(py, &b.bytes).into_bound_py_any(py),
        KvValue::Array(a) => {
            let items = a
                .iter()
                .map(|e| scalar(py, &e.to_scalar()))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_bound_py_any(py)
        }
    }
}

/// One Python scalar as a KV scalar. Integers become int64, or uint64 from 2^63
/// up; `None` and other types are refused with `TypeError`.
fn from_scalar(key: &str, value: &Bound<'_, PyAny>) -> PyResult<KvScalar> {
    let bytes = |b: &[u8]| LenBytes { bytes: b.to_vec() };
    if value.is_instance_of::<PyBool>() {
        return Ok(KvScalar::Bool(u8::from(value.extract::<bool>()?)));
    }
    if value.is_instance_of::<PyInt>() {
        if let Ok(i) = value.extract::<i64>() {
            return Ok(KvScalar::Int64(i));
        }
        return value.extract::<u64>().map(KvScalar::Uint64).map_err(|_| {
            PyOverflowError::new_err(format!(
                "metadata {key:?}: the integer {value} does not fit int64 or uint64"
            ))
        });
    }
    if value.is_instance_of::<PyFloat>() {
        return Ok(KvScalar::Float64(value.extract()?));
    }
    if let Ok(s) = value.cast::<PyString>() {
        return Ok(KvScalar::String(bytes(s.to_cow()?.as_bytes())));
    }
    if let Ok(b) = value.cast::<PyBytes>() {
        return Ok(KvScalar::Bytes(bytes(b.as_bytes())));
    }
    if let Ok(b) = value.cast::<PyByteArray>() {
        return Ok(KvScalar::Bytes(bytes(&b.to_vec())));
    }
    Err(PyTypeError::new_err(format!(
        "metadata {key:?}: cannot store a value of type {} (str, int, float, bool, bytes or a list of one of them)",
        value.get_type().name().map_or("?".into(), |n| n.to_string())
    )))
}

/// A Python metadata value as a KV value: `str`, `int` (beyond 2^63 as uint64),
/// `float`, `bool`, `bytes`, or a `list`/`tuple` whose elements share one of those
/// types (integers of a list are uint64 when one needs it and none is negative).
pub(crate) fn from_python(key: &str, value: &Bound<'_, PyAny>) -> PyResult<KvValue> {
    let items: Vec<Bound<'_, PyAny>> = if let Ok(l) = value.cast::<PyList>() {
        l.iter().collect()
    } else if let Ok(t) = value.cast::<PyTuple>() {
        t.iter().collect()
    } else {
        return Ok(match from_scalar(key, value)? {
            KvScalar::String(b) => KvValue::String(b),
            KvScalar::Int64(i) => KvValue::Int64(i),
            KvScalar::Uint64(u) => KvValue::Uint64(u),
            KvScalar::Float64(f) => KvValue::Float64(f),
            KvScalar::Bool(b) => KvValue::Bool(b),
            KvScalar::Bytes(b) => KvValue::Bytes(b),
        });
    };
    let mut elements = items
        .iter()
        .map(|item| from_scalar(key, item))
        .collect::<PyResult<Vec<_>>>()?;
    // A list mixing int64 and uint64 values is stored as uint64 when it can be.
    let has_uint = elements.iter().any(|e| matches!(e, KvScalar::Uint64(_)));
    if has_uint {
        for e in &mut elements {
            if let KvScalar::Int64(i) = *e {
                let u = u64::try_from(i).map_err(|_| {
                    PyOverflowError::new_err(format!(
                        "metadata {key:?}: a list mixing negative integers and integers of 2^63 or more fits neither int64 nor uint64"
                    ))
                })?;
                *e = KvScalar::Uint64(u);
            }
        }
    }
    // An empty list has no element type; it is stored as an empty list of strings.
    let element_tag = elements.first().map_or(0x01, KvScalar::tag);
    if let Some(other) = elements.iter().find(|e| e.tag() != element_tag) {
        return Err(PyTypeError::new_err(format!(
            "metadata {key:?}: list elements must share one type ({} and {} found)",
            hrry_kv_name(element_tag),
            hrry_kv_name(other.tag())
        )));
    }
    Ok(KvValue::Array(KvArray::new(element_tag, elements)))
}

/// The Python name of the values of KV tag `tag`.
fn hrry_kv_name(tag: u8) -> &'static str {
    match tag {
        0x01 => "str",
        0x02 | 0x03 => "int",
        0x04 => "float",
        0x05 => "bool",
        _ => "bytes",
    }
}

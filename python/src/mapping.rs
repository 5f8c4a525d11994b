//! The mapped, validated file that `hrry.File` reads and every array viewing it
//! keeps alive, and a tensor of it as a NumPy array.

use std::sync::Arc;

use hrry::export::{self, ExportOptions};
use hrry::file::{HrryFile, Tensor};
use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;

use crate::array::{mapped_array, owned_array, strided_array};
use crate::errors::{detached, file_error, guard, HrryError};
use crate::input::{Fetched, Remote};
use crate::memory::{self, Access};

/// The mapped, validated file. Arrays viewing the mapping hold a reference to this
/// object as their NumPy base, so the mapping outlives `File.close()` while any of
/// them is alive.
#[pyclass(module = "hrry", frozen)]
pub struct Mapping {
    file: HrryFile<'static>,
    access: Access,
    /// The URL or file object the file is read from (its bytes fetched into a
    /// mapped mirror as they are asked for), or `None` for a local file or bytes.
    remote: Option<Arc<Remote>>,
}

impl Mapping {
    /// The file `file`, opened over a mapping of `access`, or read from `remote`.
    pub(crate) fn new(
        file: HrryFile<'static>,
        access: Access,
        remote: Option<Arc<Remote>>,
    ) -> Self {
        Mapping {
            file,
            access,
            remote,
        }
    }

    /// The opened file.
    pub(crate) fn file(&self) -> &HrryFile<'static> {
        &self.file
    }

    /// True when arrays over this mapping may be written (a private mapping).
    pub(crate) fn writeable(&self) -> bool {
        memory::writeable(self.access)
    }

    /// The tensor `name`, or `KeyError`. Its bytes are fetched first when the file
    /// is read from a URL or a file object, with the interpreter released (always
    /// released: a file object's reads take their lock before the interpreter).
    pub(crate) fn tensor(&self, py: Python<'_>, what: &str, name: &str) -> PyResult<Tensor<'_>> {
        match detached(py, || self.file.tensor(name))? {
            Ok(Some(t)) => Ok(t),
            Ok(None) => Err(PyKeyError::new_err(name.to_string())),
            Err(e) => Err(self.raised().unwrap_or_else(|| file_error(py, what, e))),
        }
    }

    /// The exception a file object raised while being read (or its misbehaviour),
    /// which a failure of the core stands for.
    pub(crate) fn raised(&self) -> Option<PyErr> {
        self.remote.as_ref().and_then(|r| r.take_error())
    }

    /// What reading the URL or file object has cost so far (`None` for local
    /// files and bytes).
    pub(crate) fn fetched(&self) -> Option<Fetched> {
        self.remote.as_ref().map(|r| r.fetched())
    }
}

/// The error for a tensor that cannot be exported or dequantized: a broken rule is
/// an `InvalidFileError`, I/O an `OSError`, a name the file does not hold a
/// `KeyError`, anything else a `HrryError`.
pub(crate) fn tensor_error(py: Python<'_>, what: &str, name: &str, e: hrry::Error) -> PyErr {
    match e {
        e @ (hrry::Error::Io(_) | hrry::Error::Invalid(_)) => file_error(py, what, e),
        hrry::Error::Usage(m) if m == format!("no tensor named {name:?}") => {
            PyKeyError::new_err(name.to_string())
        }
        other => HrryError::new_err(format!("{what}: tensor {name:?}: {other}")),
    }
}

/// `get_tensor` on the mapping `this`: a view when the stored bytes are the array,
/// else the exported array.
pub(crate) fn tensor_array<'py>(
    this: &Bound<'py, Mapping>,
    what: &str,
    name: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let py = this.py();
    let mapping = this.get();
    let tensor = mapping.tensor(py, what, name)?;
    if let Some((dtype, bytes)) = guard(|| export::stored_row_major(&tensor))? {
        // SAFETY: `bytes` is the data of a dense row-major tensor inside the mapping
        // `this` owns, which lives as long as `this`, the array's base object; it is
        // writeable only when private (see `crate::memory`).
        return unsafe {
            mapped_array(
                this.clone().into_any(),
                dtype.descr,
                &tensor.descriptor.shape,
                bytes,
                mapping.writeable(),
            )
        };
    }
    if let Some(r) = guard(|| export::repeated_bytes(&tensor))? {
        // SAFETY: `repeated_bytes` checked that every element the strides address
        // lies inside `r.buffer`, which the mapping `this` owns (the array's base
        // object); the array is read-only.
        return unsafe {
            strided_array(
                this.clone().into_any(),
                r.dtype.descr,
                &tensor.descriptor.shape,
                &r.byte_strides,
                r.buffer.as_ptr().add(r.origin),
            )
        };
    }
    let file = &mapping.file;
    let desc = &tensor.descriptor;
    let dtype = export::export_dtype(desc).map_err(|e| tensor_error(py, what, name, e))?;
    let options = ExportOptions {
        max_bytes: copy_budget(file.size()),
        ..ExportOptions::default()
    };
    let data = detached(py, || export::row_major_bytes(file, name, &options))?.map_err(|e| {
        mapping
            .raised()
            .unwrap_or_else(|| tensor_error(py, what, name, e))
    })?;
    owned_array(py, data, dtype.descr, &desc.shape)
}

/// The most one tensor's array may take when it must be assembled (a layout
/// other than row-major, a sparse or composite tensor): 64 MiB plus 8 times the
/// file's size (the widest conversion, 4-bit codes to float32, is 8 times its
/// bytes), at most the export default. A tensor that would take more raises
/// `HrryError` ("exceeds the limit") instead of allocating it.
pub(crate) fn copy_budget(file_size: u64) -> u64 {
    const ALLOWANCE: u64 = 64 << 20;
    ALLOWANCE
        .saturating_add(file_size.saturating_mul(8))
        .min(ExportOptions::default().max_bytes)
}

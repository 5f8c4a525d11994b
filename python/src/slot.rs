//! The open-or-closed state shared by `File` and `holo.Archive`.

use std::sync::Mutex;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::PyClass;

/// Holds the mapping object of an open file until `close()`. Arrays and views keep
/// their own reference to the mapping, so closing never invalidates them; the lock
/// is held only to clone or take the reference, never while the core works.
pub(crate) struct Slot<T: PyClass>(Mutex<Option<Py<T>>>);

impl<T: PyClass> Slot<T> {
    /// An open slot holding `mapping`.
    pub(crate) fn new(mapping: Py<T>) -> Self {
        Slot(Mutex::new(Some(mapping)))
    }

    /// The mapping, or `ValueError` naming `what` once closed.
    pub(crate) fn get<'py>(&self, py: Python<'py>, what: &str) -> PyResult<Bound<'py, T>> {
        let guard = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match guard.as_ref() {
            Some(m) => Ok(m.bind(py).clone()),
            None => Err(PyValueError::new_err(format!(
                "{what}: operation on a closed file"
            ))),
        }
    }

    /// Drops the reference to the mapping; later `get`s fail. Idempotent.
    pub(crate) fn close(&self) {
        let taken = self.0.lock().unwrap_or_else(|e| e.into_inner()).take();
        drop(taken);
    }

    /// True once closed.
    pub(crate) fn is_closed(&self) -> bool {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).is_none()
    }
}

//! `hrry._hrry`, the extension module of the Python package `hrry`.
//!
//! The bindings translate types and errors and call the core (`hrry`): opening and
//! validating files, exporting tensors as NumPy arrays, dequantizing, writing,
//! `.holo` archives, bare streams and the tensor server's client. Every call into the core runs inside a panic
//! guard (a panic becomes `hrry.InternalError`); the long ones release the
//! interpreter.

mod array;
mod client;
mod content;
mod dequant;
mod errors;
mod file;
mod fileobj;
mod holo;
mod input;
mod kv;
mod mapping;
mod memory;
mod pool;
mod report;
mod slot;
mod stored;
mod stream;
mod violation;
mod write;

use pyo3::prelude::*;

/// Strict, zero-copy loading of Hurray tensor files (HRRYFILE) and `.holo`
/// archives into NumPy.
#[pymodule]
fn _hrry(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("HrryError", py.get_type::<errors::HrryError>())?;
    m.add(
        "InvalidFileError",
        py.get_type::<errors::InvalidFileError>(),
    )?;
    m.add("InternalError", py.get_type::<errors::InternalError>())?;
    m.add_class::<file::File>()?;
    m.add_class::<report::Report>()?;
    m.add_class::<violation::Violation>()?;
    m.add_class::<report::Rule>()?;
    m.add_class::<write::Quantized>()?;
    m.add_class::<holo::Archive>()?;
    m.add_class::<holo::Section>()?;
    m.add_function(wrap_pyfunction!(file::open, m)?)?;
    m.add_function(wrap_pyfunction!(file::load_file, m)?)?;
    m.add_function(wrap_pyfunction!(file::_open_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(write::save_file, m)?)?;
    m.add_function(wrap_pyfunction!(write::_save_stored, m)?)?;
    m.add_function(wrap_pyfunction!(write::quantize, m)?)?;
    m.add_function(wrap_pyfunction!(report::validate, m)?)?;
    m.add_function(wrap_pyfunction!(content::diff, m)?)?;
    m.add_function(wrap_pyfunction!(content::stats, m)?)?;
    m.add_function(wrap_pyfunction!(report::rules, m)?)?;
    m.add_function(wrap_pyfunction!(pool::set_buffer_cache, m)?)?;
    m.add_function(wrap_pyfunction!(pool::buffer_cache, m)?)?;
    m.add("holo_open", wrap_pyfunction!(holo::open_holo, m)?)?;
    stream::register(m)?;
    client::register(m)?;
    Ok(())
}

//! `hrry.diff` and statistics (`File.stats()`, `hrry.stats`): the core's
//! `hrry::content` results as plain Python data (dicts, lists, numbers).

use std::path::PathBuf;
use std::sync::Arc;

use hrry::content::{self, ContentDiff, Diff, DiffOptions, MetadataDiff, ModelFile, TensorStats};
use hrry::source::ReadAt;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::detached;
use crate::kv;

/// Opens a path or URL (`str` or `os.PathLike`) of any format hrry reads tensors
/// from: a HRRYFILE, safetensors or GGUF file, the HRRYFILEs inside a `.holo`
/// archive or a bare stream's tensors ([`ModelFile::open_any`]); a local HRRYFILE
/// is mapped ([`ModelFile::open`]).
fn open_model(py: Python<'_>, source: &Bound<'_, PyAny>) -> PyResult<ModelFile<'static>> {
    let text: String = match source.extract::<String>() {
        Ok(s) => s,
        Err(_) => source.extract::<PathBuf>()?.to_string_lossy().into_owned(),
    };
    let opened = detached(py, || {
        let io = hrry::Error::Io;
        let path = std::path::Path::new(&text);
        let source: Arc<dyn ReadAt + Send> = if hrry::remote::is_url(&text) {
            Arc::new(hrry::remote::RemoteSource::open(&text, &Default::default()).map_err(io)?)
        } else {
            Arc::new(hrry::source::FileSource::open(path).map_err(io)?)
        };
        match hrry::Format::detect_source(&*source, Some(path)).map_err(io)? {
            hrry::Format::HrryFile if !hrry::remote::is_url(&text) => ModelFile::open(path),
            _ => ModelFile::open_any(source, Some(path)),
        }
    })?;
    opened.map_err(|e| match e {
        hrry::Error::Io(m) => PyOSError::new_err(format!("{text}: {m}")),
        e => PyValueError::new_err(format!("{text}: {e}")),
    })
}

fn content_error(e: hrry::Error) -> PyErr {
    match e {
        hrry::Error::Io(m) => PyOSError::new_err(m.to_string()),
        e => PyValueError::new_err(e.to_string()),
    }
}

fn diff_dict<'py>(py: Python<'py>, d: &Diff) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("equal", d.is_equal())?;
    out.set_item("values_compared", d.content_compared)?;
    out.set_item("equal_tensors", d.equal_tensors)?;
    out.set_item("only_in_a", &d.only_in_a)?;
    out.set_item("only_in_b", &d.only_in_b)?;
    let tensors = PyList::empty(py);
    for t in &d.tensors {
        let td = PyDict::new(py);
        td.set_item("name", &t.name)?;
        let changes = PyList::empty(py);
        for c in &t.changes {
            let cd = PyDict::new(py);
            cd.set_item("field", c.field)?;
            cd.set_item("a", &c.a)?;
            cd.set_item("b", &c.b)?;
            changes.append(cd)?;
        }
        td.set_item("changes", changes)?;
        let values = PyDict::new(py);
        match &t.content {
            None => {}
            Some(ContentDiff::Equal) => values.set_item("equal", true)?,
            Some(ContentDiff::NotCompared(why)) => {
                values.set_item("equal", py.None())?;
                values.set_item("not_compared", why)?;
            }
            Some(ContentDiff::Different {
                differing,
                first_index,
                first_position,
                a,
                b,
                max_abs_diff,
            }) => {
                values.set_item("equal", false)?;
                values.set_item("differing", differing)?;
                values.set_item("first_index", first_index)?;
                values.set_item("first_position", first_position.clone())?;
                values.set_item("a", a)?;
                values.set_item("b", b)?;
                values.set_item("max_abs_diff", max_abs_diff)?;
            }
        }
        td.set_item(
            "values",
            if t.content.is_some() {
                values.into_any()
            } else {
                py.None().into_bound(py)
            },
        )?;
        td.set_item("different", t.is_difference())?;
        tensors.append(td)?;
    }
    out.set_item("tensors", tensors)?;
    let metadata = PyList::empty(py);
    for m in &d.metadata {
        let md = PyDict::new(py);
        match m {
            MetadataDiff::Added { key, value } => {
                md.set_item("key", key)?;
                md.set_item("change", "added")?;
                md.set_item("b", kv::to_python(py, value)?)?;
            }
            MetadataDiff::Removed { key, value } => {
                md.set_item("key", key)?;
                md.set_item("change", "removed")?;
                md.set_item("a", kv::to_python(py, value)?)?;
            }
            MetadataDiff::Changed { key, a, b } => {
                md.set_item("key", key)?;
                md.set_item("change", "changed")?;
                md.set_item("a", kv::to_python(py, a)?)?;
                md.set_item("b", kv::to_python(py, b)?)?;
            }
        }
        metadata.append(md)?;
    }
    out.set_item("metadata", metadata)?;
    Ok(out)
}

/// Compares two model files (paths or URLs; HRRYFILE, safetensors or GGUF): the
/// tensors only in one, the tensors whose description (``dtype``, ``shape``,
/// ``layout``, ``quantization``) or values differ, and the metadata added,
/// removed or changed, as ``hrry diff --json`` reports them (a ``dict``; ``"equal"``
/// is the verdict). Values are compared in logical order, dequantized, equal
/// within ``tolerance``; ``metadata_only=True`` reads no tensor data.
#[pyfunction]
#[pyo3(signature = (a, b, *, metadata_only = false, tolerance = 0.0))]
pub fn diff<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    metadata_only: bool,
    tolerance: f64,
) -> PyResult<Bound<'py, PyDict>> {
    if tolerance.is_nan() || tolerance < 0.0 {
        return Err(PyValueError::new_err("tolerance must be a number >= 0"));
    }
    let (a, b) = (open_model(py, a)?, open_model(py, b)?);
    let options = DiffOptions {
        metadata_only,
        tolerance,
    };
    let d = detached(py, || content::diff(&a, &b, &options))?.map_err(content_error)?;
    diff_dict(py, &d)
}

fn stats_entry<'py>(py: Python<'py>, s: &TensorStats) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("count", s.count)?;
    d.set_item("min", s.min)?;
    d.set_item("max", s.max)?;
    d.set_item("mean", s.mean)?;
    d.set_item("std", s.std)?;
    d.set_item("nan", s.nan)?;
    d.set_item("inf", s.inf)?;
    d.set_item("zeros", s.zeros)?;
    let h = PyDict::new(py);
    h.set_item("low", s.histogram.low)?;
    h.set_item("high", s.histogram.high)?;
    h.set_item("counts", s.histogram.counts.clone())?;
    d.set_item("histogram", h)?;
    Ok(d)
}

/// The statistics of a model file as a `dict`: ``"parameters"`` (per element type:
/// tensors, logical elements, stored bytes), ``"tensors"`` (name to ``count``,
/// ``min``, ``max``, ``mean``, ``std`` of the finite values, ``nan``, ``inf``,
/// ``zeros``, ``histogram``; or ``{"error": reason}``) and ``"findings"``
/// (statistics sections that disagree with the values).
pub(crate) fn stats_of<'py>(py: Python<'py>, file: &ModelFile<'_>) -> PyResult<Bound<'py, PyDict>> {
    // Computed with the interpreter released, converted after.
    let results: Vec<Result<TensorStats, hrry::Error>> = detached(py, || {
        (0..file.tensors().len())
            .map(|i| content::tensor_stats(file, i))
            .collect()
    })?;
    let d = PyDict::new(py);
    let params = PyList::empty(py);
    for c in content::parameter_counts(file) {
        let p = PyDict::new(py);
        p.set_item("dtype", &c.dtype)?;
        p.set_item("tensors", c.tensors)?;
        p.set_item("elements", c.elements)?;
        p.set_item("stored_bytes", c.stored_bytes)?;
        params.append(p)?;
    }
    d.set_item("parameters", params)?;
    let tensors = PyDict::new(py);
    let findings = PyList::empty(py);
    for (info, r) in file.tensors().iter().zip(results) {
        match r {
            Ok(s) => {
                for m in content::check_statistics(info, &s) {
                    findings.append(m.to_string())?;
                }
                tensors.set_item(&info.name, stats_entry(py, &s)?)?;
            }
            Err(hrry::Error::Unsupported(message)) => {
                let e = PyDict::new(py);
                e.set_item("error", message)?;
                tensors.set_item(&info.name, e)?;
            }
            Err(e) => return Err(content_error(e)),
        }
    }
    d.set_item("tensors", tensors)?;
    d.set_item("findings", findings)?;
    Ok(d)
}

/// The statistics of the model file at a path or URL (HRRYFILE, safetensors or
/// GGUF), as ``File.stats()`` gives them.
#[pyfunction]
pub fn stats<'py>(py: Python<'py>, source: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
    let file = open_model(py, source)?;
    stats_of(py, &file)
}

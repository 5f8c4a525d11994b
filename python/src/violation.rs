//! `hrry.Violation`: one broken rule, as every report and `InvalidFileError` lists
//! it.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// One broken rule: its ID, its level (`"spec"`, `"hardening"` or `"limit"`), the
/// absolute byte offset of the offending field and what was expected vs found.
#[pyclass(module = "hrry", frozen, eq)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The rule ID, e.g. ``"HF-HDR-003"`` (see `hrry.rules()`).
    #[pyo3(get)]
    pub rule: String,
    /// ``"spec"`` (a MUST of the spec), ``"hardening"`` (a stricter check of
    /// hrry's, strict mode only) or ``"limit"`` (a configured resource limit).
    #[pyo3(get)]
    pub level: String,
    /// Absolute byte offset of the offending field in the input.
    #[pyo3(get)]
    pub offset: u64,
    /// What was expected and what was found.
    #[pyo3(get)]
    pub message: String,
}

#[pymethods]
impl Violation {
    fn __repr__(&self) -> String {
        format!(
            "Violation(rule={:?}, level={:?}, offset={}, message={:?})",
            self.rule, self.level, self.offset, self.message
        )
    }

    fn __str__(&self) -> String {
        format!("{} at offset {}: {}", self.rule, self.offset, self.message)
    }

    /// The violation as a plain ``dict`` (``rule``, ``level``, ``offset``,
    /// ``message``): an entry of ``violations`` in ``hrry validate --json``.
    pub(crate) fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("rule", &self.rule)?;
        d.set_item("level", &self.level)?;
        d.set_item("offset", self.offset)?;
        d.set_item("message", &self.message)?;
        Ok(d)
    }

    /// The violation a ``dict`` of `to_dict` describes (``ValueError`` or
    /// ``KeyError`` for one that does not).
    #[staticmethod]
    pub(crate) fn from_dict(d: &Bound<'_, PyAny>) -> PyResult<Violation> {
        let level: String = d.get_item("level")?.extract()?;
        if !LEVELS.contains(&level.as_str()) {
            return Err(PyValueError::new_err(format!(
                "a violation's level is one of {LEVELS:?}, not {level:?}"
            )));
        }
        Ok(Violation {
            rule: d.get_item("rule")?.extract()?,
            level,
            offset: d.get_item("offset")?.extract()?,
            message: d.get_item("message")?.extract()?,
        })
    }

    /// Pickles as its `to_dict`.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        reduce(py, "Violation", self.to_dict(py)?)
    }
}

/// The levels of rules.
const LEVELS: [&str; 3] = ["spec", "hardening", "limit"];

/// `(cls.from_dict, (d,))`: what `__reduce__` of the class `name` of `hrry` gives,
/// so pickles hold plain data and rebuild through the checks of `from_dict`.
pub(crate) fn reduce<'py>(
    py: Python<'py>,
    name: &str,
    d: Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyAny>> {
    let class = py.import("hrry._hrry")?.getattr(name)?;
    (class.getattr("from_dict")?, (d,))
        .into_pyobject(py)
        .map(Bound::into_any)
}

impl From<&hrry::validate::Violation> for Violation {
    fn from(v: &hrry::validate::Violation) -> Self {
        Violation {
            rule: v.rule.id.to_string(),
            level: v.rule.level.name().to_string(),
            offset: v.offset,
            message: v.message.clone(),
        }
    }
}

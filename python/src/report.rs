//! `hrry.validate`, `hrry.rules` and the objects they return.

use std::path::PathBuf;

use hrry::validate::{Mode, Options};
use hrry::Format;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyMemoryView};

use crate::errors::{detached, invalid_file, io_error};

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

/// One rule of the rule table (`hrry rules`).
#[pyclass(module = "hrry", frozen)]
#[derive(Clone, Debug)]
pub struct Rule {
    /// Stable identifier, e.g. ``"HF-HDR-003"``.
    #[pyo3(get)]
    pub id: &'static str,
    /// ``"spec"``, ``"hardening"`` or ``"limit"``.
    #[pyo3(get)]
    pub level: &'static str,
    /// One line saying what must hold.
    #[pyo3(get)]
    pub summary: &'static str,
    /// The spec file and section the rule comes from.
    #[pyo3(get)]
    pub spec: &'static str,
    /// ``"metadata"`` or ``"data"``: what the rule is decided from. ``hrry.open``
    /// judges metadata rules by default, data rules with ``check="full"``.
    #[pyo3(get)]
    pub reads: &'static str,
}

#[pymethods]
impl Rule {
    fn __repr__(&self) -> String {
        format!(
            "Rule(id={:?}, level={:?}, summary={:?}, spec={:?})",
            self.id, self.level, self.summary, self.spec
        )
    }
}

/// The result of `hrry.validate`: whether the input is valid, what format it was
/// judged as, and every violation found.
#[pyclass(module = "hrry", frozen)]
#[derive(Clone, Debug)]
pub struct Report {
    /// True when no violation was found.
    #[pyo3(get)]
    pub valid: bool,
    /// ``"hrryfile"``, ``"holo"`` or ``"stream"``.
    #[pyo3(get)]
    pub format: &'static str,
    /// ``"strict"`` or ``"permissive"``.
    #[pyo3(get)]
    pub mode: &'static str,
    violations: Vec<Violation>,
    /// Remarks that are not violations (e.g. KV present with the flag clear).
    #[pyo3(get)]
    pub notes: Vec<String>,
    /// Violations found but not listed (more than 1000 of one rule).
    #[pyo3(get)]
    pub suppressed: u64,
}

#[pymethods]
impl Report {
    /// The violations, in the order found (a list of `Violation`).
    #[getter]
    fn violations(&self) -> Vec<Violation> {
        self.violations.clone()
    }

    /// The IDs of the rules broken, in order, without repeats.
    fn rule_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = Vec::new();
        for v in &self.violations {
            if !ids.contains(&v.rule) {
                ids.push(v.rule.clone());
            }
        }
        ids
    }

    fn __bool__(&self) -> bool {
        self.valid
    }

    fn __repr__(&self) -> String {
        format!(
            "Report(valid={}, format={:?}, mode={:?}, violations={})",
            if self.valid { "True" } else { "False" },
            self.format,
            self.mode,
            self.violations.len()
        )
    }
}

impl Report {
    /// The Python report of a core report.
    pub(crate) fn new(format: Format, report: &hrry::validate::Report) -> Self {
        Report {
            valid: report.is_valid(),
            format: format.name(),
            mode: match report.mode {
                Mode::Strict => "strict",
                Mode::Permissive => "permissive",
            },
            violations: report.violations.iter().map(Violation::from).collect(),
            notes: report.notes.clone(),
            suppressed: report.suppressed,
        }
    }

    /// An `InvalidFileError` for `what` carrying this report's violations.
    pub(crate) fn into_error(self, py: Python<'_>, what: &str) -> PyErr {
        let kind = match self.format {
            "holo" => ".holo archive",
            "stream" => "stream",
            _ => "HRRYFILE",
        };
        invalid_file(
            py,
            &format!("{what}: not a valid {kind} ({} mode)", self.mode),
            self.violations,
            self.suppressed,
        )
    }
}

/// The validation mode for the `permissive` flag.
pub(crate) fn mode(permissive: bool) -> Mode {
    if permissive {
        Mode::Permissive
    } else {
        Mode::Strict
    }
}

/// Validates `bytes` as `format` with the interpreter released.
pub(crate) fn check(
    py: Python<'_>,
    bytes: &[u8],
    format: Format,
    permissive: bool,
) -> PyResult<Report> {
    let options = Options {
        mode: mode(permissive),
        ..Options::default()
    };
    let report = detached(py, || format.validate_bytes(bytes, &options))?;
    Ok(Report::new(format, &report))
}

/// Checks a HRRYFILE or a `.holo` archive against every rule and reports each
/// violation; never raises for a bad file.
///
/// `source` is a path (``str`` or ``os.PathLike``, mapped, not read) or the bytes
/// themselves (``bytes``, ``bytearray``, ``memoryview``). The format is recognised by
/// the magic (else a ``.holo`` extension). Strict mode (the default) reports spec and
/// hardening rules; ``permissive=True`` reports spec rules only, with the spec's
/// permissive allowances. Raises ``OSError`` when a path cannot be read.
#[pyfunction]
#[pyo3(signature = (source, *, permissive = false))]
pub fn validate(py: Python<'_>, source: &Bound<'_, PyAny>, permissive: bool) -> PyResult<Report> {
    if let Ok(bytes) = source.cast::<PyBytes>() {
        let data = bytes.as_bytes();
        return check(py, data, Format::detect(data, None), permissive);
    }
    if source.is_instance_of::<PyByteArray>() || source.is_instance_of::<PyMemoryView>() {
        let owned = py.get_type::<PyBytes>().call1((source,))?;
        let data = owned.cast::<PyBytes>()?.as_bytes();
        return check(py, data, Format::detect(data, None), permissive);
    }
    let path: PathBuf = source.extract().map_err(|_| {
        PyTypeError::new_err(format!(
            "validate() takes a path (str or os.PathLike) or bytes, not {}",
            source
                .get_type()
                .name()
                .map_or("?".into(), |n| n.to_string())
        ))
    })?;
    let map = crate::memory::map_path(&path, crate::memory::Access::ReadOnly)
        .map_err(|e| io_error(&path, e))?;
    check(py, &map, Format::detect(&map, Some(&path)), permissive)
}

/// The rule table: every rule hrry checks, with its stable ID, level, one-line
/// summary and the spec section it comes from (a list of `Rule`).
#[pyfunction]
pub fn rules() -> Vec<Rule> {
    hrry::validate::all_rules()
        .map(|r| Rule {
            id: r.id,
            level: r.level.name(),
            reads: r.reads.name(),
            summary: r.summary,
            spec: r.spec,
        })
        .collect()
}

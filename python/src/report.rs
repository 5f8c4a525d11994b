//! `hrry.validate`, `hrry.rules` and the objects they return.

use hrry::file::OpenOptions;
use hrry::limits::Limits;
use hrry::validate::{Depth, Judging, Options, Rules};
use hrry::Format;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{detached, invalid_file, io_error};
use crate::input::{Fetched, Input, Net, Remote};
use crate::violation::reduce;
// Named here too by the stream reader, which reports violations like validate.
pub use crate::violation::Violation;

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
#[pyclass(module = "hrry", frozen, eq)]
#[derive(Clone, Debug, PartialEq, Eq)]
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
    /// ``"valid"``, ``"invalid"`` (a ``spec`` rule is broken) or ``"refused"``
    /// (valid per the spec, refused by the policy: a ``hardening`` or ``limit``
    /// rule).
    #[pyo3(get)]
    pub verdict: &'static str,
    /// ``"spec"`` or ``"hardened"``: whether hrry's hardening rules counted.
    #[pyo3(get)]
    pub policy: &'static str,
    violations: Vec<Violation>,
    /// Remarks that are not violations (e.g. KV present with the flag clear).
    #[pyo3(get)]
    pub notes: Vec<String>,
    /// Violations found but not listed (more than 1000 of one rule).
    #[pyo3(get)]
    pub suppressed: u64,
    /// What was validated: the path, the URL (without credentials) or the file
    /// object's name; ``None`` for bytes.
    #[pyo3(get)]
    pub file: Option<String>,
    remote: Option<Fetched>,
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

    /// For a URL or a file object: what reading it cost, ``{"requests", "bytes",
    /// "retries"}`` (for a file object, its ``read`` calls and the bytes they
    /// returned); ``None`` otherwise.
    #[getter]
    fn remote<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.remote.map(|f| f.to_dict(py)).transpose()
    }

    /// The report as a plain ``dict`` of JSON types, with the field names of
    /// ``hrry validate --json``'s file objects (``file``, ``valid``, ``format``,
    /// ``mode``, ``violations``, ``notes``, and ``remote`` — ``None`` for a local
    /// file, where the CLI leaves it out) and also ``suppressed``.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("file", &self.file)?;
        d.set_item("valid", self.valid)?;
        d.set_item("format", self.format)?;
        d.set_item("mode", self.mode)?;
        d.set_item("verdict", self.verdict)?;
        d.set_item("policy", self.policy)?;
        let violations = self
            .violations
            .iter()
            .map(|v| v.to_dict(py))
            .collect::<PyResult<Vec<_>>>()?;
        d.set_item("violations", violations)?;
        d.set_item("notes", &self.notes)?;
        d.set_item("suppressed", self.suppressed)?;
        d.set_item("remote", self.remote(py)?)?;
        Ok(d)
    }

    /// The report a ``dict`` of `to_dict` describes (``ValueError``,
    /// ``KeyError`` or ``TypeError`` for one that does not). ``valid`` must agree
    /// with the violations (none of them for a valid report).
    #[staticmethod]
    fn from_dict(d: &Bound<'_, PyAny>) -> PyResult<Report> {
        let one_of = |key: &str, names: &[&'static str]| -> PyResult<&'static str> {
            let value: String = d.get_item(key)?.extract()?;
            names.iter().find(|n| **n == value).copied().ok_or_else(|| {
                PyValueError::new_err(format!(
                    "a report's {key} is one of {names:?}, not {value:?}"
                ))
            })
        };
        let violations = d
            .get_item("violations")?
            .try_iter()?
            .map(|v| Violation::from_dict(&v?))
            .collect::<PyResult<Vec<_>>>()?;
        let valid: bool = d.get_item("valid")?.extract()?;
        let suppressed: u64 = d.get_item("suppressed")?.extract()?;
        if valid != (violations.is_empty() && suppressed == 0) {
            return Err(PyValueError::new_err(
                "a report is valid exactly when it has no violations",
            ));
        }
        let remote = d.get_item("remote")?;
        Ok(Report {
            valid,
            format: one_of("format", &FORMATS)?,
            mode: one_of("mode", &["strict", "permissive"])?,
            verdict: one_of("verdict", &["valid", "invalid", "refused"])?,
            policy: one_of("policy", &["spec", "hardened"])?,
            violations,
            notes: d.get_item("notes")?.extract()?,
            suppressed,
            file: d.get_item("file")?.extract()?,
            remote: if remote.is_none() {
                None
            } else {
                Some(Fetched::from_dict(&remote)?)
            },
        })
    }

    /// Pickles as its `to_dict`.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        reduce(py, "Report", self.to_dict(py)?)
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
            verdict: report.verdict().name(),
            policy: report.judging.rules.policy_name(),
            format: format.name(),
            mode: report.judging.rules.mode_name(),
            violations: report.violations.iter().map(Violation::from).collect(),
            notes: report.notes.clone(),
            suppressed: report.suppressed,
            file: None,
            remote: None,
        }
    }

    /// This report, naming the file it is of.
    pub(crate) fn of_file(mut self, file: impl Into<String>) -> Self {
        self.file = Some(file.into());
        self
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

/// The rules the `permissive` flag selects (under the default policy).
pub(crate) fn judged_rules(permissive: bool) -> Rules {
    Rules::from_switches(permissive, Rules::Hardened)
}

/// The two switches a file is judged by, as one [`Rules`]: the spec's strict or
/// permissive mode (``permissive=``) and hrry's policy (``policy="spec"`` or
/// ``"hardened"``, the default; ``permissive=True`` judges no hardening rule
/// whatever it says); and the limits it is read within (``max_memory=``).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Judge {
    rules: Rules,
    limits: Limits,
}

impl Judge {
    /// The switches of `permissive=` and `policy=`; `ValueError` for an unknown
    /// policy name.
    pub(crate) fn new(permissive: bool, policy: Option<&str>) -> PyResult<Self> {
        let policy = match policy {
            None => Rules::Hardened,
            Some(name @ ("spec" | "hardened")) => Rules::from_name(name).unwrap_or(Rules::Hardened),
            Some(name) => {
                return Err(PyValueError::new_err(format!(
                    "policy must be \"spec\" or \"hardened\", not {name:?}"
                )))
            }
        };
        Ok(Judge {
            rules: Rules::from_switches(permissive, policy),
            limits: Limits::default(),
        })
    }

    /// These switches with the operation's memory budget capped at `max_memory`
    /// bytes (``max_memory=``; `None` keeps the default, 2 GiB): past it, the
    /// file is refused with `HF-LIM-001` naming ``max_memory``.
    pub(crate) fn max_memory(mut self, max_memory: Option<u64>) -> Self {
        if let Some(cap) = max_memory {
            self.limits.max_memory = cap;
        }
        self
    }

    /// The validator's options.
    pub(crate) fn options(self) -> Options {
        Options {
            judging: self.rules.into(),
            limits: self.limits,
        }
    }

    /// A reader's options reading to `depth` (what `check=` names).
    pub(crate) fn open_options(self, depth: Depth) -> OpenOptions {
        OpenOptions::new()
            .judging(Judging::new(self.rules, depth))
            .limits(self.limits)
    }
}

/// The names of the formats a report may be of.
const FORMATS: [&str; 4] = ["hrryfile", "holo", "stream", "messages"];

/// Validates `bytes` as `format` with the interpreter released.
pub(crate) fn check(
    py: Python<'_>,
    bytes: &[u8],
    format: Format,
    judge: Judge,
) -> PyResult<Report> {
    let options = judge.options();
    let report = detached(py, || format.validate_bytes(bytes, &options))?;
    Ok(Report::new(format, &report))
}

/// Validates the remote source `remote` (recognised by its magic, else its name),
/// reading what the rules need, with the interpreter released. A failed read is
/// raised (the file object's own exception when it raised one), never reported.
pub(crate) fn check_remote(py: Python<'_>, remote: &Remote, judge: Judge) -> PyResult<Report> {
    let options = judge.options();
    let source = remote.source();
    let hint = remote.name_hint();
    let result = detached(py, || {
        let format = Format::detect_source(source, Some(&hint))?;
        Ok::<_, std::io::Error>((format, format.validate_source(source, &options)?))
    })?;
    // A read that failed fails the validation, whatever the core made of it.
    if let Some(raised) = remote.take_error() {
        return Err(raised);
    }
    let (format, report) = result.map_err(|e| remote.error(e))?;
    let mut report = Report::new(format, &report).of_file(remote.shown());
    report.remote = Some(remote.fetched());
    Ok(report)
}

/// Checks a HRRYFILE or a `.holo` archive against every rule and reports each
/// violation; never raises for a bad file.
///
/// `source` is a path (``str`` or ``os.PathLike``; read with positioned reads
/// where the rules look, never mapped nor read whole), an
/// ``http://``, ``https://`` or ``s3://`` URL (read with range requests: the
/// metadata, descriptors and the few data bytes rules inspect, never whole tensor
/// data; S3 signed with the standard ``AWS_*`` environment variables,
/// ``AWS_ENDPOINT_URL`` for S3-compatible stores), a binary file object with
/// ``seek`` and ``read`` (an open file, ``io.BytesIO``, an fsspec file; read at
/// the offsets the rules need) or the bytes themselves (``bytes``, ``bytearray``,
/// ``memoryview``). The format is recognised by the magic (else a ``.holo``
/// extension). Strict mode (the default) reports spec and hardening rules;
/// ``permissive=True`` reports spec rules only, with the spec's permissive
/// allowances. ``policy="spec"`` gives the exact spec verdict (no hardening rule);
/// ``policy="hardened"`` (the default without ``permissive``) adds hrry's own.
/// ``Report.verdict`` says ``"valid"``, ``"invalid"`` (a spec rule is broken) or
/// ``"refused"`` (valid per the spec, refused by the policy).
/// ``max_memory`` (bytes) caps the memory budget the validation draws from for
/// what the file describes (16 MiB + 16 x the bytes read, at most 2 GiB by
/// default): past it, the verdict is ``"refused"`` with ``HF-LIM-001`` naming
/// ``max_memory`` (docs/security.md). Raises ``OSError`` when the file cannot be
/// read (a missing URL: ``FileNotFoundError`` naming it; a local file that
/// changed while it was read), and a file object's own exception when its
/// ``seek`` or ``read`` raises; a read that comes back short raises ``OSError``.
#[pyfunction]
#[pyo3(signature = (source, *, permissive = false, timeout = None, stall_timeout = None,
    retries = None, policy = None, max_memory = None))]
#[allow(clippy::too_many_arguments)]
pub fn validate(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    permissive: bool,
    timeout: Option<f64>,
    stall_timeout: Option<f64>,
    retries: Option<u32>,
    policy: Option<&str>,
    max_memory: Option<u64>,
) -> PyResult<Report> {
    let net = Net::new(timeout, stall_timeout, retries)?;
    let permissive = Judge::new(permissive, policy)?.max_memory(max_memory);
    match Input::of(source, true)? {
        Input::Bytes(bytes) => {
            let data = bytes.as_bytes();
            check(py, data, Format::detect(data, None), permissive)
        }
        // Read with positioned reads where the rules look, never mapped: memory
        // stays what the budget holds, and a file changed meanwhile is an error.
        Input::Path(path) => {
            let options = permissive.options();
            let (format, report) = detached(py, || hrry::validate_path(&path, &options))?
                .map_err(|e| io_error(&path, e))?;
            Ok(Report::new(format, &report).of_file(path.display().to_string()))
        }
        Input::Url(url) => check_remote(py, &Remote::url(py, &url, &net)?, permissive),
        Input::Object(object) => check_remote(py, &Remote::object(&object)?, permissive),
    }
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

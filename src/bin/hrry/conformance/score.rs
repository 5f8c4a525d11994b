//! Scoring: the cases of a corpus, in tiers, and the status of each against a
//! testee.

use std::collections::BTreeMap;
use std::path::Path;

use base64::Engine as _;
use hrry::conformance::{self, TensorReading};
use hrry::model::ElementType;
use hrry::schema::{LAYOUT_BLOCK_PAGED, LAYOUT_COMPOSITE};
use serde_json::{json, Map, Value};

use super::corpus::{Corpus, Entry};
use super::protocol::Reply;
use super::reference::metadata_json;
use super::testee::Testee;

/// What a case checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    /// Valid files accepted, invalid ones rejected.
    Verdict,
    /// Invalid files rejected for their rule.
    Rule,
    /// Every tensor of a valid file decoded.
    Read,
    /// A file written from tensor specs, validated and read back.
    Write,
    /// Files valid per the spec (or past a resource bound) that hrry's hardening
    /// policy refuses, rejected for their rule: agreement with hrry's policy, not
    /// conformance, scored only when asked (`--policy-tier`).
    Policy,
}

impl Tier {
    /// Every tier, in report order.
    pub const ALL: [Tier; 5] = [
        Tier::Verdict,
        Tier::Rule,
        Tier::Read,
        Tier::Write,
        Tier::Policy,
    ];

    /// Its name in reports and expected-failure files.
    pub fn name(self) -> &'static str {
        match self {
            Tier::Verdict => "verdict",
            Tier::Rule => "rule",
            Tier::Read => "read",
            Tier::Write => "write",
            Tier::Policy => "policy",
        }
    }

    /// The tier named `name`.
    pub fn from_name(name: &str) -> Option<Tier> {
        Tier::ALL.into_iter().find(|t| t.name() == name)
    }
}

/// How a case ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// The testee did what the case asks.
    Pass,
    /// It did not.
    Fail,
    /// Not run: the testee does not offer it, or the case has nothing to check.
    Skip,
    /// The testee answered `error`, or out of protocol.
    Error,
    /// No answer in time.
    Timeout,
    /// The testee died.
    Crash,
    /// A failure the expected-failures list names.
    ExpectedFailure,
    /// A pass the expected-failures list names as a failure.
    UnexpectedPass,
}

impl Status {
    /// Every status, in report order.
    pub const ALL: [Status; 8] = [
        Status::Pass,
        Status::Fail,
        Status::Skip,
        Status::Error,
        Status::Timeout,
        Status::Crash,
        Status::ExpectedFailure,
        Status::UnexpectedPass,
    ];

    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Skip => "skip",
            Status::Error => "error",
            Status::Timeout => "timeout",
            Status::Crash => "crash",
            Status::ExpectedFailure => "expected-failure",
            Status::UnexpectedPass => "unexpected-pass",
        }
    }

    /// Whether the case did not pass for a reason of the testee's (what an
    /// expected-failures list may name).
    pub fn is_failure(self) -> bool {
        matches!(
            self,
            Status::Fail | Status::Error | Status::Timeout | Status::Crash
        )
    }

    /// Whether the case makes the run fail (exit 1).
    pub fn fails_run(self) -> bool {
        self.is_failure() || self == Status::UnexpectedPass
    }
}

/// The result of one case: one corpus file in one tier.
#[derive(Clone, Debug)]
pub struct CaseResult {
    /// The file's path in the corpus (the stable case ID, with the tier).
    pub path: String,
    /// Its format.
    pub format: String,
    /// Its rule family (`HF-HDR`, or `valid`).
    pub family: String,
    /// The tier.
    pub tier: Tier,
    /// How it ended.
    pub status: Status,
    /// Why, for anything but a plain pass.
    pub detail: String,
}

/// Which cases a run holds beyond the default ones, and which formats it feeds.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    /// Run the cases of hrry's policy (`hardening` and `limit` files) in the
    /// policy tier.
    pub policy_tier: bool,
    /// Feed the testee only files of these formats (`--formats`); the cases of
    /// others are `skip`. `None`: the formats its `hello` names.
    pub formats: Option<Vec<String>>,
}

/// Runs every case of `corpus` against `testee`; written files go to `scratch`.
pub fn run(
    corpus: &Corpus,
    testee: &mut dyn Testee,
    scratch: &Path,
    scope: &Scope,
) -> Vec<CaseResult> {
    let policy_tier = scope.policy_tier;
    let mut run = Run {
        testee,
        next_id: 1,
        results: Vec::new(),
        formats: scope.formats.clone(),
    };
    for (n, entry) in corpus.entries.iter().enumerate() {
        let path = corpus.path_of(entry);
        let tiers = tiers_of(entry, policy_tier);
        if tiers.is_empty() {
            continue;
        }
        if let Some(why) = &entry.unusable {
            for tier in tiers {
                run.record(entry, tier, Status::Error, why.clone());
            }
            continue;
        }
        if entry.is_policy() {
            run.policy(entry, &path);
            continue;
        }
        run.validate(entry, &path);
        if tiers.contains(&Tier::Read) {
            run.read(entry, &path);
        }
        if tiers.contains(&Tier::Write) {
            run.write(entry, &path, &scratch.join(format!("written-{n}.hrry")));
        }
    }
    run.results
}

/// The tiers a manifest entry has cases in.
fn tiers_of(entry: &Entry, policy_tier: bool) -> Vec<Tier> {
    if entry.is_policy() {
        return if policy_tier {
            vec![Tier::Policy]
        } else {
            Vec::new()
        };
    }
    let mut tiers = vec![Tier::Verdict];
    if !entry.valid {
        tiers.push(Tier::Rule);
    } else if entry.format == "hrryfile" {
        tiers.extend([Tier::Read, Tier::Write]);
    }
    tiers
}

struct Run<'t> {
    testee: &'t mut dyn Testee,
    next_id: u64,
    results: Vec<CaseResult>,
    formats: Option<Vec<String>>,
}

impl Run<'_> {
    fn record(&mut self, entry: &Entry, tier: Tier, status: Status, detail: String) {
        self.results.push(CaseResult {
            path: entry.path.clone(),
            format: entry.format.clone(),
            family: entry.family(),
            tier,
            status,
            detail,
        });
    }

    /// Sends `request`; an answer goes to `judge`, anything else is the status
    /// it stands for.
    fn ask(
        &mut self,
        request: Value,
        judge: impl FnOnce(&Map<String, Value>) -> (Status, String),
    ) -> (Status, String) {
        let id = self.next_id;
        self.next_id += 1;
        match self.testee.call(id, request) {
            Reply::Answer(a) => judge(&a),
            Reply::Skipped(why) => (Status::Skip, format!("skipped: {why}")),
            Reply::Error(why) => (Status::Error, format!("the testee answered error: {why}")),
            Reply::Crash(why) => (Status::Crash, why),
            Reply::Timeout => (Status::Timeout, "no answer within the timeout".into()),
            Reply::OutOfProtocol(why) => (Status::Error, format!("out of protocol: {why}")),
        }
    }

    /// Whether the testee offers `op` on `format`; if not, the reason to skip.
    fn unsupported(&self, op: &str, format: &str) -> Option<String> {
        let hello = self.testee.hello();
        if let Some(formats) = &self.formats {
            if !formats.iter().any(|f| f == format) {
                return Some(format!("{format} is not among --formats"));
            }
        }
        if !hello.offers(op) {
            Some(format!("the testee does not offer {op}"))
        } else if !hello.reads(format) {
            Some(format!("the testee does not read {format}"))
        } else {
            None
        }
    }

    /// Why an invalid file's rule case is `skip` whatever the testee answers: it
    /// reports no rule IDs, or the manifest names no rule.
    fn no_rule_case(&self, entry: &Entry) -> Option<String> {
        if !self.testee.hello().rule_ids {
            Some("the testee does not report rule IDs".into())
        } else if entry.rules.is_empty() {
            Some("the manifest names no rule".into())
        } else {
            None
        }
    }

    /// The verdict case, and the rule case of an invalid file, from one `validate`.
    fn validate(&mut self, entry: &Entry, path: &Path) {
        if let Some(why) = self.unsupported("validate", &entry.format) {
            self.record(entry, Tier::Verdict, Status::Skip, why.clone());
            if !entry.valid {
                self.record(entry, Tier::Rule, Status::Skip, why);
            }
            return;
        }
        let request = json!({
            "op": "validate",
            "path": path.to_string_lossy(),
            "format": entry.format,
            "mode": "strict",
        });
        let mut answer = None;
        let (status, detail) = self.ask(request, |a| {
            answer = Some(a.clone());
            judge_verdict(entry, a)
        });
        self.record(entry, Tier::Verdict, status, detail.clone());
        if entry.valid {
            return;
        }
        let (status, detail) = if let Some(why) = self.no_rule_case(entry) {
            (Status::Skip, why)
        } else {
            match answer {
                Some(a) if status != Status::Error => judge_rule(entry, &a),
                _ => (status, detail),
            }
        };
        self.record(entry, Tier::Rule, status, detail);
    }

    /// The policy case: the file rejected, for its rule when the testee names
    /// rules.
    fn policy(&mut self, entry: &Entry, path: &Path) {
        if let Some(why) = self.unsupported("validate", &entry.format) {
            return self.record(entry, Tier::Policy, Status::Skip, why);
        }
        let request = json!({
            "op": "validate",
            "path": path.to_string_lossy(),
            "format": entry.format,
            "mode": "strict",
        });
        let rule_ids = self.testee.hello().rule_ids && !entry.rules.is_empty();
        let (status, detail) = self.ask(request, |a| {
            if rule_ids {
                judge_rule(entry, a)
            } else {
                judge_verdict(entry, a)
            }
        });
        self.record(entry, Tier::Policy, status, detail);
    }

    fn read(&mut self, entry: &Entry, path: &Path) {
        if let Some(why) = self.unsupported("read", &entry.format) {
            return self.record(entry, Tier::Read, Status::Skip, why);
        }
        let (own, metadata) = match own_reading(path) {
            Ok(r) => r,
            Err(e) => return self.record(entry, Tier::Read, Status::Error, e),
        };
        let expected = entry.tensors.clone().unwrap_or(own);
        let request = json!({"op": "read", "path": path.to_string_lossy()});
        let (status, detail) = self.ask(request, |a| compare_reading(&expected, &metadata, a));
        self.record(entry, Tier::Read, status, detail);
    }

    fn write(&mut self, entry: &Entry, source: &Path, out: &Path) {
        let spec = match write_spec(source) {
            Ok(Some(s)) => s,
            // Nothing in the file has a form a write spec carries: no case.
            Ok(None) => return,
            Err(e) => return self.record(entry, Tier::Write, Status::Error, e),
        };
        if let Some(why) = self.unsupported("write", "hrryfile") {
            return self.record(entry, Tier::Write, Status::Skip, why);
        }
        let _ = std::fs::remove_file(out);
        let request = json!({"op": "write", "spec": spec.spec, "out": out.to_string_lossy()});
        let (status, detail) = self.ask(request, |a| {
            if a.get("ok") != Some(&json!(true)) {
                return (Status::Fail, "the answer has no \"ok\": true".into());
            }
            check_written(out, &spec)
        });
        self.record(entry, Tier::Write, status, detail);
    }
}

fn judge_verdict(entry: &Entry, answer: &Map<String, Value>) -> (Status, String) {
    let Some(valid) = answer.get("valid").and_then(Value::as_bool) else {
        return (Status::Error, "the answer has no boolean \"valid\"".into());
    };
    let (status, detail) = match (entry.valid, valid) {
        (true, true) | (false, false) => (Status::Pass, String::new()),
        (true, false) => (
            Status::Fail,
            format!("rejected a valid file{}", rules_said(answer)),
        ),
        (false, true) => (
            Status::Fail,
            format!("accepted a file breaking {}", entry.rules.join(" or ")),
        ),
    };
    (status, with_message(detail, answer))
}

/// `detail` followed by the testee's own `message`, when it gave one.
fn with_message(detail: String, answer: &Map<String, Value>) -> String {
    match answer.get("message").and_then(Value::as_str) {
        Some(m) if !m.is_empty() && detail.is_empty() => format!("the testee said: {m}"),
        Some(m) if !m.is_empty() => format!("{detail}; the testee said: {m}"),
        _ => detail,
    }
}

/// The rules an answer names.
pub(super) fn rules_of(answer: &Map<String, Value>) -> Vec<String> {
    answer
        .get("rules")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn rules_said(answer: &Map<String, Value>) -> String {
    let rules = rules_of(answer);
    if rules.is_empty() {
        String::new()
    } else {
        format!(" (for {})", rules.join(", "))
    }
}

/// The rule case: rejected, naming rules, every one of them an expected rule.
fn judge_rule(entry: &Entry, answer: &Map<String, Value>) -> (Status, String) {
    let expected = entry.rules.join(" or ");
    if answer.get("valid").and_then(Value::as_bool) != Some(false) {
        return (Status::Fail, format!("not rejected; expected {expected}"));
    }
    let got = rules_of(answer);
    if got.is_empty() {
        // Not a wrong rule: the testee named none for this file.
        return (
            Status::Skip,
            with_message(format!("no rule given; expected {expected}"), answer),
        );
    }
    // Every rule named is one the file breaks (any of them is a right reason).
    if got.iter().all(|r| entry.rules.contains(r)) {
        (Status::Pass, with_message(String::new(), answer))
    } else {
        (
            Status::Fail,
            with_message(
                format!("rejected for {}; expected {expected}", got.join(", ")),
                answer,
            ),
        )
    }
}

/// hrry's own reading of a file: its tensors and metadata.
pub(super) fn own_reading(path: &Path) -> Result<(Vec<TensorReading>, Value), String> {
    let file = spec_reader()
        .open(path)
        .map_err(|e| format!("hrry cannot read the file: {e}"))?;
    let tensors =
        conformance::read_tensors(&file).map_err(|e| format!("hrry cannot read it: {e}"))?;
    Ok((tensors, metadata_json(&file)))
}

/// Compares a `read` answer (or hrry's reading of a written file) with the expected
/// tensors and metadata. Missing hashes make the case `skip` when nothing differs.
pub(super) fn compare_reading(
    expected: &[TensorReading],
    metadata: &Value,
    answer: &Map<String, Value>,
) -> (Status, String) {
    let Some(got) = answer.get("tensors").and_then(Value::as_array) else {
        return (Status::Fail, "the answer has no \"tensors\" array".into());
    };
    let by_name: BTreeMap<&str, &Value> = got
        .iter()
        .filter_map(|t| Some((t["name"].as_str()?, t)))
        .collect();
    let mut problems = Vec::new();
    let (mut hashed, mut unhashed) = (0, 0);
    if got.len() != expected.len() {
        problems.push(format!(
            "{} tensors, expected {}",
            got.len(),
            expected.len()
        ));
    }
    for e in expected {
        let Some(g) = by_name.get(e.name.as_str()) else {
            problems.push(format!("no tensor {:?}", e.name));
            continue;
        };
        if g["dtype"].as_str() != Some(e.dtype.as_str()) {
            problems.push(format!(
                "{:?}: dtype {}, expected {}",
                e.name, g["dtype"], e.dtype
            ));
        }
        if g["shape"] != json!(e.shape) {
            problems.push(format!(
                "{:?}: shape {}, expected {:?}",
                e.name, g["shape"], e.shape
            ));
        }
        for (key, want) in [
            ("sha256", &e.sha256),
            ("dequantized_sha256", &e.dequantized_sha256),
        ] {
            let Some(want) = want else { continue };
            match g[key].as_str() {
                None => unhashed += 1,
                Some(h) if h == want => hashed += 1,
                Some(h) => problems.push(format!("{:?}: {key} {h}, expected {want}", e.name)),
            }
        }
    }
    for name in by_name.keys() {
        if !expected.iter().any(|e| e.name == *name) {
            problems.push(format!("unexpected tensor {name:?}"));
        }
    }
    if let Some(got) = answer.get("metadata") {
        if got != metadata {
            problems.push(format!("metadata {}, expected {metadata}", excerpt(got)));
        }
    }
    if !problems.is_empty() {
        let more = problems.len().saturating_sub(4);
        problems.truncate(4);
        let mut detail = problems.join("; ");
        if more > 0 {
            detail += &format!("; and {more} more");
        }
        (Status::Fail, detail)
    } else if unhashed > 0 && hashed == 0 {
        // Nothing hashed: the contents were not checked at all.
        (Status::Skip, format!("{unhashed} hashes not given"))
    } else if unhashed > 0 {
        // Each hash given matched: scored on those (codes matched, say, with the
        // dequantized values' hash left out).
        (
            Status::Pass,
            format!("{hashed} hashes matched, {unhashed} not given"),
        )
    } else {
        (Status::Pass, String::new())
    }
}

fn excerpt(v: &Value) -> String {
    super::protocol::excerpt(&v.to_string())
}

/// A write request's spec and what reading the written file must give.
struct WriteSpec {
    spec: Value,
    expected: Vec<TensorReading>,
    metadata: Value,
}

/// The write spec made from a valid file: every tensor with a dense row-major form
/// of a built-in type (unquantized, not a composite head, not block-paged), and its
/// KV metadata. `None` when the file has tensors, none of them of that kind, and no
/// metadata.
fn write_spec(source: &Path) -> Result<Option<WriteSpec>, String> {
    let file = spec_reader()
        .open(source)
        .map_err(|e| format!("hrry cannot read the file: {e}"))?;
    let mut tensors = Vec::new();
    let mut expected = Vec::new();
    for entry in file.entries() {
        let t = file
            .tensor_at(entry)
            .map_err(|e| format!("hrry cannot read {:?}: {e}", entry.name()))?;
        let d = &t.descriptor;
        let plain = d.quantization.is_none()
            && d.layout_tag != LAYOUT_COMPOSITE
            && d.layout_tag != LAYOUT_BLOCK_PAGED
            && ElementType::from_tag(d.type_tag)
                .and_then(|ty| hrry::model::build::dense(ty, &d.shape))
                .is_some();
        let Some(content) = plain.then(|| conformance::content(d, &t.buffers)).flatten() else {
            continue;
        };
        let reading = conformance::reading_of(entry.name(), d, &t.buffers);
        tensors.push(json!({
            "name": reading.name,
            "dtype": reading.dtype,
            "shape": reading.shape,
            "data": base64::engine::general_purpose::STANDARD.encode(&content),
        }));
        expected.push(reading);
    }
    let metadata = metadata_json(&file);
    // A file without tensors is written as such; one whose tensors a spec cannot
    // carry has a case only for its metadata.
    if tensors.is_empty() && !file.is_empty() && metadata.as_object().is_none_or(Map::is_empty) {
        return Ok(None);
    }
    Ok(Some(WriteSpec {
        spec: json!({"tensors": tensors, "metadata": metadata}),
        expected,
        metadata,
    }))
}

/// hrry's reader as the harness reads with: the spec's verdict, not hrry's
/// hardening policy (a writer copying the spec's worked example is conforming).
fn spec_reader() -> hrry::file::OpenOptions {
    hrry::file::OpenOptions::new().rules(hrry::validate::Rules::Permissive)
}

/// Validates the written file strictly under the spec policy and compares hrry's
/// reading of it with the spec.
fn check_written(out: &Path, spec: &WriteSpec) -> (Status, String) {
    let bytes = match std::fs::read(out) {
        Ok(b) => b,
        Err(e) => return (Status::Fail, format!("cannot read the file written: {e}")),
    };
    let options = hrry::validate::Options {
        judging: hrry::validate::Judging {
            rules: hrry::validate::Rules::Spec,
            ..Default::default()
        },
        ..Default::default()
    };
    let report = hrry::Format::HrryFile.validate_bytes(&bytes, &options);
    if let Some(v) = report.violations.first() {
        return (
            Status::Fail,
            format!(
                "the file written is invalid: {v} ({} violations)",
                report.violations.len()
            ),
        );
    }
    let file = match spec_reader().open_bytes(&bytes) {
        Ok(f) => f,
        Err(e) => {
            return (
                Status::Fail,
                format!("hrry cannot read the file written: {e}"),
            )
        }
    };
    let tensors = match conformance::read_tensors(&file) {
        Ok(t) => t,
        Err(e) => {
            return (
                Status::Fail,
                format!("hrry cannot read the file written: {e}"),
            )
        }
    };
    let reading = json!({
        "tensors": tensors.iter().map(TensorReading::to_json).collect::<Vec<_>>(),
        "metadata": metadata_json(&file),
    });
    let reading = reading.as_object().expect("object");
    compare_reading(&spec.expected, &spec.metadata, reading)
}

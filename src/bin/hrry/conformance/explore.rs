//! `hrry conformance explore`: cases generated from the corpus's valid files by
//! structure-aware mutation (`hrry::conformance::explore`), judged by hrry and
//! compared with a testee; each disagreement shrunk while it keeps its signature
//! and kept once, as a corpus folder `hrry conformance --corpus DIR` runs again.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hrry::conformance::explore::judge::Judgement;
use hrry::conformance::explore::{shrink, Base, Case, Explorer};
use hrry::Format;
use serde_json::{json, Value};

use super::corpus::Corpus;
use super::protocol::{Reply, FORMATS};
use super::score;
use super::testee::{self, Testee};
use crate::{Failure, Outcome};

/// Arguments of `hrry conformance explore`.
#[derive(clap::Args)]
#[command(after_long_help = "\
Generates cases from the valid files of the built-in corpus and from random
models the writer makes (--models) by structure-aware mutation (fields, counts, offsets, flags and lengths, with and without the index
CRC recomputed; data bytes; cuts; splices from other files), judges each with
hrry (the spec verdict and its rules; for a valid HRRYFILE the read tier's
readings) and compares the testee's answers: accepts-invalid, rejects-valid,
wrong-rule (testees that name rules), reads-differently, crash, hang, protocol,
error. Files only hrry's hardening or limits refuse are counted apart, never
compared. Each disagreement is shrunk while its signature (kind, spec rules,
answer) holds: onto a smaller valid file, with fewer edits, by re-writing its
file smaller (tensors and KV entries dropped, shapes shrunk), with its tail cut
and byte ranges zeroed. Each is kept once; --out DIR writes them as a corpus
folder that `hrry conformance --corpus DIR -- CMD` runs again, each manifest
entry with the verdict's level and rules and `explain`'s account.

The same --seed, bases, --models and testee give the same cases and findings,
whatever --jobs is. Without --cases or --time the run lasts 60 seconds.

Exit codes: 0 no disagreement, 1 a disagreement was found, 2 usage or I/O
error.")]
pub struct Args {
    /// The seed of the case sequence.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Stop after this many seconds.
    #[arg(long, value_name = "SECONDS")]
    time: Option<f64>,
    /// Stop after this many cases.
    #[arg(long, value_name = "N")]
    cases: Option<u64>,
    /// Formats to generate (hrryfile, holo, stream, messages; comma-separated;
    /// default: every format the testee reads).
    #[arg(long, value_delimiter = ',', value_name = "FORMAT,...")]
    formats: Vec<String>,
    /// Write each distinct disagreement, shrunk, into this corpus folder.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Print the summary as one JSON document.
    #[arg(long)]
    json: bool,
    /// Also write the disagreements as Markdown (for a CI job summary).
    #[arg(long, value_name = "FILE")]
    markdown: Option<PathBuf>,
    /// Also write the disagreements as JUnit XML.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Run hrry itself as the testee, in process.
    #[arg(long = "self", conflicts_with_all = ["oneshot", "testee"])]
    self_testee: bool,
    /// A validator command run once per file; `{path}` is replaced by the file's
    /// path (words split on white space, no shell).
    #[arg(long, value_name = "'CMD {path}'", conflicts_with = "testee")]
    oneshot: Option<String>,
    /// Seconds to wait for each answer.
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0)]
    timeout: f64,
    /// Most testee calls spent shrinking one disagreement.
    #[arg(long, value_name = "N", default_value_t = 400)]
    shrink_budget: usize,
    /// Random models the writer makes from the seed, used as starting files
    /// beside the corpus's valid files (HRRYFILE; 0: the corpus's files only).
    #[arg(long, value_name = "N", default_value_t = 32)]
    models: usize,
    /// Testee instances asking about cases side by side (the findings and their
    /// order do not depend on it).
    #[arg(long, value_name = "N", default_value_t = 1)]
    jobs: usize,
    /// Append the testee's standard error to this file (default: hrry's own).
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// The testee program and its arguments, after `--`.
    #[arg(last = true, value_name = "CMD")]
    testee: Vec<String>,
}

/// Most distinct disagreements kept (and shrunk) in one run; more are counted.
const MAX_KEPT: usize = 100;

/// What makes two disagreements the same: their kind, the spec rules the file
/// breaks, and the class of the testee's answer.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Signature {
    kind: &'static str,
    rules: Vec<&'static str>,
    class: String,
}

/// What the testee did with one case, when it disagrees.
struct Observed {
    signature: Signature,
    /// The testee's answer (or what happened instead).
    answer: Value,
    /// What differs, in words.
    message: String,
}

/// A kept disagreement.
struct Found {
    signature: Signature,
    case: Case,
    /// How the base file was re-written smaller (empty: the base as it is).
    rewrites: Vec<String>,
    original_size: usize,
    bytes: Vec<u8>,
    judgement: Judgement,
    answer: Value,
    message: String,
    shrink_attempts: usize,
    /// Cases that showed the same signature.
    seen: u64,
}

fn format_of(name: &str) -> Option<Format> {
    Some(match name {
        "hrryfile" => Format::HrryFile,
        "holo" => Format::Holo,
        "stream" => Format::Stream,
        "messages" => Format::Messages,
        _ => return None,
    })
}

fn format_name(f: Format) -> &'static str {
    match f {
        Format::HrryFile => "hrryfile",
        Format::Holo => "holo",
        Format::Stream => "stream",
        Format::Messages => "messages",
    }
}

fn extension(f: Format) -> &'static str {
    match f {
        Format::HrryFile => "hrry",
        Format::Holo => "holo",
        Format::Stream => "hrrys",
        Format::Messages => "hrrymsg",
    }
}

fn start_testee(args: &Args, timeout: Duration) -> Result<Box<dyn Testee>, Failure> {
    testee::start(
        args.self_testee,
        args.oneshot.as_deref(),
        &args.testee,
        timeout,
        args.log.clone(),
    )
}

/// The valid files of `corpus` in `formats`, as bases.
fn bases(corpus: &Corpus, formats: &[Format]) -> Result<Vec<Base>, Failure> {
    let mut out = Vec::new();
    for e in &corpus.entries {
        let Some(format) = format_of(&e.format) else {
            continue;
        };
        if !e.valid || e.unusable.is_some() || !formats.contains(&format) {
            continue;
        }
        let bytes = std::fs::read(corpus.path_of(e))?;
        out.push(Base::new(e.path.clone(), format, bytes));
    }
    Ok(out)
}

/// Runs `hrry conformance explore`.
pub fn run(args: Args) -> Result<Outcome, Failure> {
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        return Err(Failure(
            "--timeout must be a positive number of seconds".into(),
        ));
    }
    let time = match (args.time, args.cases) {
        (Some(t), _) if !(t.is_finite() && t >= 0.0) => {
            return Err(Failure("--time must be a number of seconds".into()))
        }
        (Some(t), _) => Some(Duration::from_secs_f64(t.min(1e9))),
        (None, None) => Some(Duration::from_secs(60)),
        (None, Some(_)) => None,
    };
    let timeout = Duration::from_secs_f64(args.timeout.min(86_400.0));
    let mut testee = start_testee(&args, timeout)?;
    let hello = testee.hello().clone();
    let wanted: Vec<String> = if args.formats.is_empty() {
        FORMATS.iter().map(|f| f.to_string()).collect()
    } else {
        args.formats.clone()
    };
    let mut formats = Vec::new();
    for name in &wanted {
        let f = format_of(name).ok_or_else(|| {
            Failure(format!(
                "--formats: unknown format {name:?} (hrryfile, holo, stream, messages)"
            ))
        })?;
        if hello.reads(name) && hello.offers("validate") {
            formats.push(f);
        }
    }
    if args.jobs == 0 {
        return Err(Failure("--jobs must be at least 1".into()));
    }
    let corpus = Corpus::built_in()?;
    let models = if formats.contains(&Format::HrryFile) {
        args.models
    } else {
        0
    };
    let explorer = Explorer::with_models(args.seed, bases(&corpus, &formats)?, models);
    if explorer.bases().is_empty() {
        testee.finish();
        return Err(Failure(
            "no valid corpus file in a format the testee validates".into(),
        ));
    }
    let scratch = tempfile::Builder::new().prefix("hrry-explore-").tempdir()?;
    let mut probe = Probe::new(testee.as_mut(), scratch.path().join("main"))?;
    let started = Instant::now();
    let mut counts = Counts::default();
    let mut found: Vec<Found> = Vec::new();
    let mut index = 0u64;
    let limit = args.cases.unwrap_or(u64::MAX);
    let workers = Workers::start(&args, timeout, &explorer, scratch.path())?;
    // Cases are asked about in batches (side by side with --jobs), then taken in
    // the order of their numbers: what is found, and in which order, depends on
    // the seed alone.
    let batch = if args.jobs == 1 {
        1
    } else {
        8 * args.jobs as u64
    };
    'run: loop {
        if index >= limit || time.is_some_and(|t| started.elapsed() >= t) {
            break;
        }
        let end = index.saturating_add(batch).min(limit);
        let asked = match &workers {
            Some(w) => w.ask(index..end)?,
            None => (index..end)
                .map(|i| asked_about(&explorer, &mut probe, i))
                .collect(),
        };
        for a in asked {
            let Some(a) = a else {
                break 'run; // No bases.
            };
            index = a.index + 1;
            let seen = match a.outcome {
                Answered::Policy => {
                    counts.policy += 1;
                    continue;
                }
                Answered::Judged { valid, observed } => {
                    if valid {
                        counts.valid += 1;
                    } else {
                        counts.invalid += 1;
                    }
                    match observed {
                        Some(o) => o,
                        None => continue,
                    }
                }
            };
            counts.disagreeing += 1;
            if let Some(f) = found.iter_mut().find(|f| f.signature == seen.signature) {
                f.seen += 1;
                continue;
            }
            if found.len() >= MAX_KEPT {
                counts.not_kept += 1;
                continue;
            }
            let Some(case) = explorer.case(a.index) else {
                break 'run;
            };
            found.push(shrunk(
                &explorer,
                &mut probe,
                &case,
                seen,
                args.shrink_budget,
            ));
        }
    }
    if let Some(w) = workers {
        w.finish();
    }
    let elapsed = started.elapsed();
    testee.finish();
    counts.cases = index;
    let summary = Summary {
        seed: args.seed,
        hello: &hello.raw,
        counts: &counts,
        elapsed,
        found: &found,
        explorer: &explorer,
        out: args.out.as_deref(),
        corpus: &corpus,
    };
    if let Some(dir) = &args.out {
        summary.write_corpus(dir)?;
    }
    if args.markdown.is_some() || args.junit.is_some() {
        let cases = summary.case_results();
        let results = super::output::Results {
            testee: &hello.raw,
            corpus: json!({"source": format!("conformance explore --seed {}", args.seed), "files": counts.cases}),
            cases: &cases,
            stale: &[],
        };
        for (path, text) in [
            (&args.markdown, results.markdown()),
            (&args.junit, results.junit()),
        ] {
            if let Some(p) = path {
                std::fs::write(p, text)
                    .map_err(|e| Failure(format!("cannot write {}: {e}", crate::text::path(p))))?;
            }
        }
    }
    if args.json {
        let text = serde_json::to_string_pretty(&summary.json())? + "\n";
        crate::write_stdout(text.as_bytes());
    } else {
        crate::write_stdout(summary.text().as_bytes());
    }
    Ok(if found.is_empty() {
        Outcome::Ok
    } else {
        Outcome::Invalid
    })
}

/// What the testee made of one case.
enum Answered {
    /// Only hrry's hardening or limits refuse the file: not compared.
    Policy,
    /// The spec decides: the verdict, and the disagreement if there is one.
    Judged {
        valid: bool,
        observed: Option<Observed>,
    },
}

/// Case `index`, judged and asked about (`None` when there are no bases).
struct Asked {
    index: u64,
    outcome: Answered,
}

fn asked_about(explorer: &Explorer, probe: &mut Probe<'_>, index: u64) -> Option<Asked> {
    let case = explorer.case(index)?;
    let format = explorer.format(&case);
    let bytes = explorer.bytes(&case);
    let judgement = Judgement::of(format, &bytes);
    let outcome = if judgement.decided() {
        Answered::Judged {
            valid: judgement.valid(),
            observed: probe.observe(format, &bytes, &judgement),
        }
    } else {
        Answered::Policy
    };
    Some(Asked { index, outcome })
}

/// `case`, which showed `seen`, shrunk while it keeps its signature.
fn shrunk(
    explorer: &Explorer,
    probe: &mut Probe<'_>,
    case: &Case,
    seen: Observed,
    shrink_budget: usize,
) -> Found {
    let format = explorer.format(case);
    let signature = seen.signature.clone();
    let budget = if matches!(signature.kind, "hang") {
        shrink_budget.min(8)
    } else {
        shrink_budget
    };
    let mut last: Option<Observed> = None;
    let shrunk = shrink::shrink(explorer, case, budget, &mut |b: &[u8]| {
        let j = Judgement::of(format, b);
        if !j.decided() {
            return false;
        }
        match probe.observe(format, b, &j) {
            Some(o) if o.signature == signature => {
                last = Some(o);
                true
            }
            _ => false,
        }
    });
    // The bytes kept are the last that showed the signature (or the case itself
    // when no attempt did); the observation is that of those bytes.
    let original = explorer.bytes(case);
    let (observed, bytes, kept) = match last {
        Some(o) if probe_keeps(probe, format, &shrunk.bytes, &signature) => {
            (o, shrunk.bytes, (shrunk.case, shrunk.rewrites))
        }
        _ => (seen, original.clone(), (case.clone(), Vec::new())),
    };
    Found {
        signature,
        case: kept.0,
        rewrites: kept.1,
        original_size: original.len(),
        judgement: Judgement::of(format, &bytes),
        bytes,
        answer: observed.answer,
        message: observed.message,
        shrink_attempts: shrunk.attempts,
        seen: 1,
    }
}

/// The testees that ask about cases side by side (`--jobs` above 1): one thread
/// each, with its own testee, taking case numbers from a shared queue.
struct Workers {
    queue: std::sync::mpsc::Sender<u64>,
    answers: std::sync::mpsc::Receiver<Result<Option<Asked>, String>>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Workers {
    /// `args.jobs` testees on threads of their own; `None` for one job (the run
    /// asks on its own thread).
    fn start(
        args: &Args,
        timeout: Duration,
        explorer: &Explorer,
        scratch: &Path,
    ) -> Result<Option<Workers>, Failure> {
        if args.jobs <= 1 {
            return Ok(None);
        }
        let explorer = std::sync::Arc::new(explorer.clone());
        let (queue, jobs) = std::sync::mpsc::channel::<u64>();
        let jobs = std::sync::Arc::new(std::sync::Mutex::new(jobs));
        let (answer, answers) = std::sync::mpsc::channel();
        let mut threads = Vec::new();
        for n in 0..args.jobs {
            let (explorer, jobs, answer) = (explorer.clone(), jobs.clone(), answer.clone());
            let dir = scratch.join(format!("job-{n}"));
            let (own, oneshot, command, log) = (
                args.self_testee,
                args.oneshot.clone(),
                args.testee.clone(),
                args.log.clone(),
            );
            threads.push(std::thread::spawn(move || {
                let started = testee::start(own, oneshot.as_deref(), &command, timeout, log);
                let mut testee = match started {
                    Ok(t) => t,
                    Err(e) => {
                        let _ = answer.send(Err(e.0));
                        return;
                    }
                };
                let mut probe = match Probe::new(testee.as_mut(), dir) {
                    Ok(p) => p,
                    Err(e) => {
                        let _ = answer.send(Err(e.0));
                        return;
                    }
                };
                loop {
                    let next = jobs
                        .lock()
                        .map_err(|_| ())
                        .and_then(|q| q.recv().map_err(|_| ()));
                    let Ok(index) = next else { break };
                    if answer
                        .send(Ok(asked_about(&explorer, &mut probe, index)))
                        .is_err()
                    {
                        break;
                    }
                }
                testee.finish();
            }));
        }
        Ok(Some(Workers {
            queue,
            answers,
            threads,
        }))
    }

    /// Cases `range`, asked about side by side, in the order of their numbers.
    fn ask(&self, range: std::ops::Range<u64>) -> Result<Vec<Option<Asked>>, Failure> {
        let n = range.end - range.start;
        for i in range {
            self.queue
                .send(i)
                .map_err(|_| Failure("the explore workers stopped".into()))?;
        }
        let mut out = Vec::new();
        for _ in 0..n {
            match self.answers.recv() {
                Ok(Ok(a)) => out.push(a),
                Ok(Err(e)) => return Err(Failure(e)),
                Err(_) => return Err(Failure("the explore workers stopped".into())),
            }
        }
        out.sort_by_key(|a| a.as_ref().map_or(u64::MAX, |a| a.index));
        Ok(out)
    }

    fn finish(self) {
        drop(self.queue);
        for t in self.threads {
            let _ = t.join();
        }
    }
}

/// Whether `bytes` still show `signature` (asked once more of the final bytes).
fn probe_keeps(probe: &mut Probe<'_>, format: Format, bytes: &[u8], signature: &Signature) -> bool {
    let j = Judgement::of(format, bytes);
    j.decided()
        && probe
            .observe(format, bytes, &j)
            .is_some_and(|o| o.signature == *signature)
}

#[derive(Default)]
struct Counts {
    cases: u64,
    valid: u64,
    invalid: u64,
    policy: u64,
    disagreeing: u64,
    /// Disagreements of a new signature seen after MAX_KEPT were kept.
    not_kept: u64,
}

/// Asks the testee about cases.
struct Probe<'a> {
    testee: &'a mut dyn Testee,
    scratch: PathBuf,
    next_id: u64,
}

impl<'a> Probe<'a> {
    /// A probe writing its cases into `scratch` (created).
    fn new(testee: &'a mut dyn Testee, scratch: PathBuf) -> Result<Probe<'a>, Failure> {
        std::fs::create_dir_all(&scratch)?;
        Ok(Probe {
            testee,
            scratch,
            next_id: 1,
        })
    }

    fn call(&mut self, request: Value) -> Reply {
        let id = self.next_id;
        self.next_id += 1;
        self.testee.call(id, request)
    }

    /// What the testee makes of `bytes`, when it disagrees with `judgement`.
    fn observe(&mut self, format: Format, bytes: &[u8], judgement: &Judgement) -> Option<Observed> {
        let path = self.scratch.join(format!("case.{}", extension(format)));
        if let Err(e) = std::fs::write(&path, bytes) {
            return Some(observed(
                "error",
                judgement,
                "io".into(),
                json!(null),
                e.to_string(),
            ));
        }
        let request = json!({
            "op": "validate",
            "path": path.to_string_lossy(),
            "format": format_name(format),
            "mode": "strict",
        });
        let answer = match self.call(request) {
            Reply::Answer(a) => a,
            other => return failed(other, judgement),
        };
        let raw = Value::Object(answer.clone());
        let Some(valid) = answer.get("valid").and_then(Value::as_bool) else {
            let why = "the answer has no boolean \"valid\"".into();
            return Some(observed(
                "protocol",
                judgement,
                "no-verdict".into(),
                raw,
                why,
            ));
        };
        let named = super::score::rules_of(&answer);
        match (judgement.valid(), valid) {
            (false, true) => {
                let why = format!(
                    "accepted a file breaking {}",
                    judgement.spec_rules().join(", ")
                );
                Some(observed(
                    "accepts-invalid",
                    judgement,
                    "accept".into(),
                    raw,
                    why,
                ))
            }
            (true, false) => {
                let why = format!("rejected a valid file (for {})", named.join(", "));
                Some(observed(
                    "rejects-valid",
                    judgement,
                    "reject".into(),
                    raw,
                    why,
                ))
            }
            (false, false) => {
                if !self.testee.hello().rule_ids {
                    return None;
                }
                let broken = judgement.broken_rules();
                if named.iter().any(|r| broken.contains(&r.as_str())) {
                    return None;
                }
                let why = format!(
                    "rejected for {}; the file breaks {}",
                    if named.is_empty() {
                        "no rule".into()
                    } else {
                        named.join(", ")
                    },
                    judgement.spec_rules().join(", ")
                );
                Some(observed("wrong-rule", judgement, named.join(","), raw, why))
            }
            (true, true) => self.read(&path, judgement),
        }
    }

    /// The read tier on a file the spec accepts.
    fn read(&mut self, path: &Path, judgement: &Judgement) -> Option<Observed> {
        let expected = judgement.readings.as_ref()?;
        if !self.testee.hello().offers("read") {
            return None;
        }
        let (_, metadata) = score::own_reading(path).ok()?;
        let request = json!({"op": "read", "path": path.to_string_lossy()});
        let answer = match self.call(request) {
            Reply::Answer(a) => a,
            other => return failed(other, judgement),
        };
        let (status, detail) = score::compare_reading(expected, &metadata, &answer);
        (status == score::Status::Fail).then(|| {
            observed(
                "reads-differently",
                judgement,
                read_class(&detail),
                Value::Object(answer),
                detail,
            )
        })
    }
}

/// The class of a reading that differs: what differs (`read:dtype+sha256`), so
/// that a wrong type and a wrong hash are two disagreements.
fn read_class(detail: &str) -> String {
    const WHAT: [(&str, &str); 9] = [
        ("no \"tensors\"", "no-tensors"),
        (" tensors, expected ", "tensor-count"),
        ("no tensor ", "missing-tensor"),
        ("unexpected tensor ", "unexpected-tensor"),
        (": dtype ", "dtype"),
        (": shape ", "shape"),
        (": sha256 ", "sha256"),
        (": dequantized_sha256 ", "dequantized-sha256"),
        ("metadata ", "metadata"),
    ];
    let what: Vec<&str> = WHAT
        .iter()
        .filter(|(needle, _)| detail.contains(needle))
        .map(|(_, label)| *label)
        .collect();
    format!("read:{}", what.join("+"))
}

/// An observation; a testee that gave no verdict (crash, hang, protocol, error)
/// is one disagreement whatever rules the file breaks.
fn observed(
    kind: &'static str,
    j: &Judgement,
    class: String,
    answer: Value,
    message: String,
) -> Observed {
    let verdict = matches!(
        kind,
        "accepts-invalid" | "rejects-valid" | "wrong-rule" | "reads-differently"
    );
    Observed {
        signature: Signature {
            kind,
            rules: if verdict { j.spec_rules() } else { Vec::new() },
            class,
        },
        answer,
        message,
    }
}

/// A reply that is no answer, as a disagreement (a skip is none).
fn failed(reply: Reply, j: &Judgement) -> Option<Observed> {
    let (kind, why) = match reply {
        Reply::Answer(_) | Reply::Skipped(_) => return None,
        Reply::Crash(why) => ("crash", why),
        Reply::Timeout => ("hang", "no answer within the timeout".into()),
        Reply::OutOfProtocol(why) => ("protocol", why),
        Reply::Error(why) => ("error", why),
    };
    let class = match kind {
        "crash" => crash_class(&why),
        _ => kind.into(),
    };
    Some(observed(kind, j, class, json!({ kind: why }), why))
}

/// The class of a crash: how the testee ended (`crash:signal: 6`, `crash:exit
/// status: 134`), so that an abort and a panic's exit are two disagreements.
fn crash_class(why: &str) -> String {
    let how = why
        .split_once("exited (")
        .map_or("", |(_, rest)| rest.split([')', '(']).next().unwrap_or(""));
    match how.trim() {
        "" => "crash".into(),
        how => format!("crash:{how}"),
    }
}

/// The results of a run.
struct Summary<'a> {
    seed: u64,
    hello: &'a Value,
    counts: &'a Counts,
    elapsed: Duration,
    found: &'a [Found],
    explorer: &'a Explorer,
    out: Option<&'a Path>,
    /// The built-in corpus (`explain` compares a kept file with its valid files).
    corpus: &'a Corpus,
}

impl Summary<'_> {
    fn rate(&self) -> f64 {
        let s = self.elapsed.as_secs_f64();
        if s > 0.0 {
            self.counts.cases as f64 / s
        } else {
            0.0
        }
    }

    /// The path of a found case inside the output folder.
    fn case_path(&self, i: usize, f: &Found) -> String {
        let format = self.explorer.format(&f.case);
        format!(
            "{}/{:03}-{}.{}",
            format_name(format),
            i + 1,
            f.signature.kind,
            extension(format)
        )
    }

    fn found_json(&self, i: usize, f: &Found) -> Value {
        let base = &self.explorer.bases()[f.case.base];
        let findings = |list: &[hrry::conformance::explore::judge::Finding]| -> Vec<Value> {
            list.iter()
                .map(|v| json!({"rule": v.rule, "level": v.level.name(), "offset": v.offset, "message": v.message}))
                .collect()
        };
        json!({
            "kind": f.signature.kind,
            "rules": f.signature.rules,
            "answer_class": f.signature.class,
            "path": self.case_path(i, f),
            "size": f.bytes.len(),
            "original_size": f.original_size,
            "base": base.name,
            "case": f.case.index,
            "rewrites": f.rewrites,
            "mutations": f.case.mutations.iter().map(|m| m.describe()).collect::<Vec<_>>(),
            "shrink_attempts": f.shrink_attempts,
            "cases_seen": f.seen,
            "reference": {
                "valid": f.judgement.valid(),
                "violations": findings(&f.judgement.spec),
                "policy": findings(&f.judgement.policy),
            },
            "testee": {"answer": f.answer, "message": f.message},
        })
    }

    fn json(&self) -> Value {
        let c = self.counts;
        json!({
            "version": 1,
            "seed": self.seed,
            "testee": self.hello,
            "cases": c.cases,
            "seconds": self.elapsed.as_secs_f64(),
            "cases_per_second": self.rate(),
            "counts": {
                "valid": c.valid,
                "invalid": c.invalid,
                "policy_only": c.policy,
                "disagreeing": c.disagreeing,
                "not_kept": c.not_kept,
            },
            "out": self.out.map(|p| p.display().to_string()),
            "disagreements": self.found.iter().enumerate().map(|(i, f)| self.found_json(i, f)).collect::<Vec<_>>(),
        })
    }

    fn text(&self) -> String {
        let c = self.counts;
        let mut s = String::new();
        let name = self.hello["name"].as_str().unwrap_or("the testee");
        let _ = writeln!(
            s,
            "explored {} cases in {:.1} s ({:.0} cases/second), seed {}, against {name}",
            c.cases,
            self.elapsed.as_secs_f64(),
            self.rate(),
            self.seed
        );
        let _ = writeln!(
            s,
            "  {} valid and {} invalid per the spec; {} refused by hrry's hardening or limits only (not compared)",
            c.valid, c.invalid, c.policy
        );
        if self.found.is_empty() {
            let _ = writeln!(s, "no disagreement");
            return s;
        }
        let _ = writeln!(
            s,
            "{} distinct disagreements ({} cases showed one):",
            self.found.len(),
            c.disagreeing
        );
        if c.not_kept > 0 {
            let _ = writeln!(
                s,
                "  (only the first {MAX_KEPT} distinct ones are kept; {} more cases were not)",
                c.not_kept
            );
        }
        for (i, f) in self.found.iter().enumerate() {
            let rules = match f.judgement.spec_rules() {
                r if r.is_empty() => "a valid file".to_string(),
                r => r.join(", "),
            };
            let _ = writeln!(
                s,
                "  {:<18} {rules}: {} ({} bytes, shrunk from {}; made from {})",
                f.signature.kind,
                f.message,
                f.bytes.len(),
                f.original_size,
                self.explorer.bases()[f.case.base].name
            );
            if let Some(dir) = self.out {
                let _ = writeln!(s, "    {}", dir.join(self.case_path(i, f)).display());
            }
        }
        s
    }

    /// The disagreements as the conformance run's case results (for its Markdown
    /// and JUnit renderers): one failing case each.
    fn case_results(&self) -> Vec<score::CaseResult> {
        self.found
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let (tier, status) = match f.signature.kind {
                    "crash" => (score::Tier::Verdict, score::Status::Crash),
                    "hang" => (score::Tier::Verdict, score::Status::Timeout),
                    "protocol" | "error" => (score::Tier::Verdict, score::Status::Error),
                    "wrong-rule" => (score::Tier::Rule, score::Status::Fail),
                    "reads-differently" => (score::Tier::Read, score::Status::Fail),
                    _ => (score::Tier::Verdict, score::Status::Fail),
                };
                let family = if f.judgement.valid() {
                    "valid".into()
                } else {
                    super::corpus::family_of(f.judgement.spec_rules().first().copied())
                };
                score::CaseResult {
                    path: self.case_path(i, f),
                    format: format_name(self.explorer.format(&f.case)).into(),
                    family,
                    tier,
                    status,
                    detail: f.message.clone(),
                }
            })
            .collect()
    }

    /// Writes the found cases and a `manifest.json` into `dir`.
    fn write_corpus(&self, dir: &Path) -> Result<(), Failure> {
        let mut files = Vec::new();
        let mut paths = BTreeSet::new();
        for (i, f) in self.found.iter().enumerate() {
            let rel = self.case_path(i, f);
            let path = dir.join(&rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&path, &f.bytes)
                .map_err(|e| Failure(format!("cannot write {}: {e}", path.display())))?;
            paths.insert(rel.clone());
            let valid = f.judgement.valid();
            let rules = f.judgement.spec_rules();
            let mut entry = json!({
                "path": rel,
                "format": format_name(self.explorer.format(&f.case)),
                "valid": valid,
                "description": format!("found by hrry conformance explore (seed {}, case {}): {}", self.seed, f.case.index, f.message),
                "size": f.bytes.len(),
                "blake3": blake3::hash(&f.bytes).to_hex().to_string(),
                "explore": self.found_json(i, f),
            });
            // As the bundled corpus's manifest: the first rule, its level (`spec`:
            // only spec violations are compared) and every spec rule broken.
            entry["rule"] = json!(rules.first());
            entry["level"] = json!((!valid).then_some("spec"));
            entry["rules"] = json!(rules);
            // What `hrry conformance explain DIR/PATH` says of the kept file.
            let shown = path.to_string_lossy();
            entry["explain"] = json!(super::explain::explain(self.corpus, &shown)?);
            if let Some(readings) = f.judgement.readings.as_ref().filter(|_| valid) {
                entry["tensors"] = json!(readings.iter().map(|t| t.to_json()).collect::<Vec<_>>());
            }
            files.push(entry);
        }
        let manifest = json!({
            "version": 1,
            "generated_by": format!("hrry {} conformance explore --seed {}", env!("CARGO_PKG_VERSION"), self.seed),
            "files": files,
        });
        let path = dir.join("manifest.json");
        std::fs::create_dir_all(dir)?;
        std::fs::write(&path, serde_json::to_string_pretty(&manifest)? + "\n")
            .map_err(|e| Failure(format!("cannot write {}: {e}", path.display())))?;
        Ok(())
    }
}

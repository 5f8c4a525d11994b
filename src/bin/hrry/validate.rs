//! `hrry validate`: check files (or directory trees of them), one at a time or in
//! parallel, and report every violation.
//!
//! Output shapes (documented in `--help` and the README):
//! - human: one block per file, in the order given;
//! - `--json`: one document whatever the number of files,
//!   `{"format_version", "valid", "files": [...]}`, files in the order given;
//! - `--jsonl`: one line per file, printed as each finishes;
//! - `--sarif`: one SARIF 2.1.0 log for all files (`sarif`), printed at the end.
//!
//! Each file's object is `{"file", "valid", "verdict", "format", "mode", "policy",
//! "violations", "notes"}`,
//! or `{"file", "valid": false, "error"}` when the file could not be read.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use hrry::limits::Limits;
use hrry::validate::{Judging, Level, Options, Report, Verdict as ReportVerdict};
use serde_json::{json, Value};

use crate::{is_dash, text, Failure, Outcome};

/// Arguments of `hrry validate`.
#[derive(clap::Args)]
#[command(after_long_help = concat!("\
JSON output:
  --json prints one document whatever the number of files:
    {\"format_version\": 1, \"valid\": <all valid>, \"verdict\": <worst verdict>,
     \"files\": [<file>, ...]}
  --jsonl prints one <file> object per line, as each file finishes.
  <file> is {\"file\", \"valid\", \"verdict\", \"format\", \"mode\", \"policy\",
  \"violations\": [{\"rule\", \"level\", \"offset\", \"message\"}], \"notes\"}, or
  {\"file\", \"valid\": false, \"verdict\": \"error\", \"error\"} for a file that could
  not be read (missing, unreadable, not a file). \"verdict\" is \"valid\", \"invalid\"
  (a `spec` rule is broken) or \"refused\" (valid per the spec, refused by the
  policy: a `hardening` rule, or a resource `limit`).
  For a URL, \"file\" is the URL without credentials, and a checked file's object
  also has \"remote\": {\"requests\", \"bytes\", \"retries\"}: what reading it cost.

SARIF output:
  --sarif prints one SARIF 2.1.0 log (for code scanning): one run, the rule table
  as its rules (each linked to its entry in docs/conformance.md), one artifact per
  file, one result per violation located by byteOffset; spec -> error, hardening
  and limit -> warning (properties.level keeps the name). A file that could not be
  read is a toolExecutionNotification.

Many URLs: hrry validate --jobs 16 --jsonl --from urls.txt (one per line; `-`
reads the list from standard input).

", see_exit_codes!()))]
pub struct Args {
    /// Files, directories or http://, https:// or s3:// URLs to check; `-` reads
    /// standard input. A directory contributes the files in it (its whole tree with
    /// -r) named *.hrry, *.hrryfile, *.holo, *.hrrys or *.hrrymsg, or starting with
    /// the magic of a HRRYFILE, a .holo archive or a bare stream.
    /// Every file named is checked, whatever its name or content.
    #[arg(required_unless_present = "from", value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Also check the paths or URLs listed in FILE, one per line (`-`: standard
    /// input); empty lines and lines starting with `#` are skipped.
    #[arg(long, value_name = "FILE")]
    from: Option<PathBuf>,
    /// Also say, for each URL, how many requests and bytes reading it took.
    #[arg(short, long)]
    verbose: bool,
    /// Descend into subdirectories of directories given.
    #[arg(short, long)]
    recursive: bool,
    /// Check this many files at once (0: one per CPU).
    #[arg(short, long, value_name = "N", default_value_t = 1)]
    jobs: usize,
    /// Print one JSON document for all files (see below).
    #[arg(long, conflicts_with = "jsonl")]
    json: bool,
    /// Print one JSON object per line, as each file finishes.
    #[arg(long)]
    jsonl: bool,
    /// Print one SARIF 2.1.0 log for all files (see below).
    #[arg(long, conflicts_with_all = ["json", "jsonl"])]
    sarif: bool,
    /// Judge with the spec's permissive allowances (unknown extensions accepted
    /// where the spec allows it); hardening rules are then not judged.
    #[arg(long)]
    permissive: bool,
    /// `spec`: the exact spec verdict, only the spec's rules (and resource limits)
    /// count; `hardened` (the default; `spec` with --permissive): hrry's hardening
    /// rules too, a file breaking only those is REFUSED (exit 3), not invalid.
    #[arg(long, value_enum, value_name = "POLICY")]
    policy: Option<crate::PolicyArg>,
    /// Refuse files declaring more tensors than this.
    #[arg(long, value_name = "N")]
    max_tensors: Option<u64>,
    #[command(flatten)]
    pub net: crate::remote::NetArgs,
    /// Cap of the memory budget of checking one file (bytes, or with a K, M or G
    /// suffix for KiB, MiB, GiB; default 2G): what the file's metadata makes hrry
    /// hold, at most 16 MiB + 16 x the bytes read. Past it, HF-LIM-001 (max_memory).
    #[arg(long, value_name = "SIZE", value_parser = crate::parse_size)]
    max_memory: Option<u64>,
}

/// The version of the `--json` document and of each file's object.
const FORMAT_VERSION: u64 = 1;

/// What checking one file gave.
enum Verdict {
    /// The file was read and validated.
    Checked {
        format: hrry::Format,
        report: Report,
        /// What reading it cost, for a URL.
        remote: Option<hrry::remote::Stats>,
    },
    /// The file could not be read; the message says why and names the path.
    Error(String),
}

/// One file's result, with its position among the inputs.
struct Checked {
    position: usize,
    name: String,
    verdict: Verdict,
}

/// An input to check: a path, or a directory that could not be listed or held
/// nothing to check (with the message saying which).
enum Input {
    Path(PathBuf),
    Unlisted(PathBuf, String),
}

pub fn run(args: Args) -> Result<Outcome, Failure> {
    let mut limits = Limits::default();
    if let Some(n) = args.max_tensors {
        limits.max_tensors = n;
    }
    if let Some(n) = args.max_memory {
        limits.max_memory = n;
    }
    let options = Options {
        judging: Judging {
            rules: crate::args::judged_rules(args.permissive, args.policy),
            ..Judging::default()
        },
        limits,
    };
    let mut paths = args.paths.clone();
    if let Some(list) = &args.from {
        paths.extend(read_list(list)?);
    }
    let mut inputs = Vec::new();
    for path in &paths {
        collect(path, args.recursive, true, &mut inputs);
    }
    let jobs = match args.jobs {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };

    let mut worst = Worst::default();
    let mut files = Vec::new();
    let mut in_order = Vec::new();
    // Human and --json output keep the order given: results arriving early wait here
    // until those before them are out.
    let mut pending: BTreeMap<usize, Checked> = BTreeMap::new();
    let mut next = 0;
    check_all(&inputs, jobs, &options, |done| {
        match &done.verdict {
            Verdict::Checked { report, .. } => worst.add(report),
            Verdict::Error(_) => worst.add_unreadable(),
        }
        if args.jsonl {
            outln!("{}", file_json(&done));
            return;
        }
        pending.insert(done.position, done);
        while let Some(done) = pending.remove(&next) {
            next += 1;
            if args.sarif {
                in_order.push(done);
            } else if args.json {
                files.push(file_json(&done));
            } else {
                print_human(&done, args.verbose);
            }
        }
    });
    if args.sarif {
        outln!("{}", serde_json::to_string_pretty(&sarif_log(&in_order))?);
    }
    // Several inputs: a last line counts them (JSON output has every file's
    // verdict already).
    if inputs.len() > 1 && !args.json && !args.jsonl && !args.sarif {
        outln!("{}", worst.line());
    }
    conclude(args.json.then_some(files), worst)
}

/// How many inputs of a run ended each way, which gives the run's worst result.
#[derive(Default)]
pub struct Worst {
    valid: u64,
    invalid: u64,
    refused: u64,
    unreadable: u64,
}

impl Worst {
    /// Counts one input's report.
    pub fn add(&mut self, report: &Report) {
        match report.verdict() {
            ReportVerdict::Valid => self.valid += 1,
            ReportVerdict::Invalid => self.invalid += 1,
            ReportVerdict::Refused => self.refused += 1,
        }
    }

    /// Counts an input that could not be read.
    pub fn add_unreadable(&mut self) {
        self.unreadable += 1;
    }

    /// The verdict name of the whole run (`error` when an input could not be read).
    fn name(&self) -> &'static str {
        if self.unreadable > 0 {
            "error"
        } else if self.invalid > 0 {
            "invalid"
        } else if self.refused > 0 {
            "refused"
        } else {
            "valid"
        }
    }

    /// `798 files: 301 valid, 470 invalid, 27 refused, 0 unreadable`.
    fn line(&self) -> String {
        format!(
            "{}: {} valid, {} invalid, {} refused, {} unreadable",
            text::plural(
                self.valid + self.invalid + self.refused + self.unreadable,
                "file",
                "files"
            ),
            self.valid,
            self.invalid,
            self.refused,
            self.unreadable
        )
    }
}

/// Ends a run over several inputs: prints the `--json` document when `files` holds
/// the inputs' objects, and gives the outcome (an unreadable input beats an
/// invalid one, which beats a refused one). Also used by `hrry stream validate`.
pub fn conclude(files: Option<Vec<Value>>, worst: Worst) -> Result<Outcome, Failure> {
    let valid = worst.name() == "valid";
    if let Some(files) = files {
        let doc = json!({
            "format_version": FORMAT_VERSION,
            "valid": valid,
            "verdict": worst.name(),
            "files": files,
        });
        outln!("{}", serde_json::to_string_pretty(&doc)?);
    }
    Ok(if worst.unreadable > 0 {
        Outcome::Error
    } else if worst.invalid > 0 {
        Outcome::Invalid
    } else if worst.refused > 0 {
        Outcome::Refused
    } else {
        Outcome::Ok
    })
}

/// The paths listed in `list` (`-`: standard input), one per line.
fn read_list(list: &Path) -> Result<Vec<PathBuf>, Failure> {
    let text = if is_dash(list) {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text).map(|_| text)
    } else {
        std::fs::read_to_string(list)
    }
    .map_err(|e| Failure(format!("cannot read the list {}: {e}", text::path(list))))?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(PathBuf::from)
        .collect())
}

/// Adds `path` to `inputs`: a directory's candidate files, or the path itself.
/// `named` is true for a path the user gave, which is always checked (a missing one
/// is then reported as unreadable); files found in directories are kept only when
/// they look like something `hrry` validates.
fn collect(path: &Path, recursive: bool, named: bool, inputs: &mut Vec<Input>) {
    if named {
        if crate::remote::url(path).is_some() {
            inputs.push(Input::Path(path.to_path_buf()));
            return;
        }
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() && !is_dash(path) => {
                let before = inputs.len();
                walk(path, recursive, inputs);
                // A directory given with nothing to check is reported like an
                // unreadable file, so that every path given has its entry.
                if inputs.len() == before {
                    let message = format!(
                        "no HRRYFILE, .holo, stream or capture found in {}{}",
                        text::path(path),
                        if recursive {
                            ""
                        } else {
                            " (-r descends into subdirectories)"
                        }
                    );
                    inputs.push(Input::Unlisted(path.to_path_buf(), message));
                }
            }
            _ => inputs.push(Input::Path(path.to_path_buf())),
        }
        return;
    }
    // Inside a walk, symlinks to directories are not followed (no cycles); symlinks
    // to files are taken like files.
    let Ok(m) = std::fs::symlink_metadata(path) else {
        return;
    };
    if m.is_dir() {
        if recursive {
            walk(path, recursive, inputs);
        }
    } else if (m.is_file() || std::fs::metadata(path).is_ok_and(|t| t.is_file()))
        && looks_checkable(path)
    {
        inputs.push(Input::Path(path.to_path_buf()));
    }
}

/// Adds the candidate files of directory `dir` (sorted by name) to `inputs`.
fn walk(dir: &Path, recursive: bool, inputs: &mut Vec<Input>) {
    let mut children: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries.filter_map(|e| e.ok().map(|e| e.path())).collect(),
        Err(e) => {
            let message = format!("cannot list directory {}: {e}", text::path(dir));
            inputs.push(Input::Unlisted(dir.to_path_buf(), message));
            return;
        }
    };
    children.sort();
    for child in children {
        collect(&child, recursive, false, inputs);
    }
}

/// Whether a file found in a directory is one to check: one whose first bytes or
/// name say a format `hrry` validates ([`hrry::Format::recognise`]).
fn looks_checkable(path: &Path) -> bool {
    let mut head = Vec::with_capacity(8);
    // A file that cannot be read is left to its name.
    let _ = std::fs::File::open(path).and_then(|f| f.take(8).read_to_end(&mut head));
    hrry::Format::recognise(&head, Some(path)).is_some()
}

/// Checks every input, `jobs` at a time, handing each result to `done` (on this
/// thread) as it finishes.
fn check_all(inputs: &[Input], jobs: usize, options: &Options, mut done: impl FnMut(Checked)) {
    if jobs <= 1 || inputs.len() <= 1 {
        for (position, input) in inputs.iter().enumerate() {
            done(check(position, input, options));
        }
        return;
    }
    let next = AtomicUsize::new(0);
    let (sender, receiver) = mpsc::channel();
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(inputs.len()) {
            let sender = sender.clone();
            let next = &next;
            scope.spawn(move || loop {
                let position = next.fetch_add(1, Ordering::Relaxed);
                let Some(input) = inputs.get(position) else {
                    break;
                };
                if sender.send(check(position, input, options)).is_err() {
                    break;
                }
            });
        }
        drop(sender);
        for result in receiver {
            done(result);
        }
    });
}

/// Checks one input.
fn check(position: usize, input: &Input, options: &Options) -> Checked {
    let (path, verdict) = match input {
        Input::Unlisted(path, message) => (path, Verdict::Error(message.clone())),
        Input::Path(path) => (
            path,
            match load(path, options) {
                Ok((format, report, remote)) => Verdict::Checked {
                    format,
                    report,
                    remote,
                },
                Err(message) => Verdict::Error(message),
            },
        ),
    };
    Checked {
        position,
        name: crate::remote::shown(path),
        verdict,
    }
}

/// Reads and validates one input: the only place `validate` reads a file. A regular
/// file is read through positioned reads of what the rules need (never its tensor
/// data), so memory stays bounded whatever its size; standard input (`-`) and pipes
/// cannot be read at an offset and are read whole, into a mapped temporary file
/// (`input::Input`). Other kinds of file (devices,
/// sockets, directories) are refused rather than read forever.
fn load(
    path: &Path,
    options: &Options,
) -> Result<(hrry::Format, Report, Option<hrry::remote::Stats>), String> {
    if let Some(url) = crate::remote::url(path) {
        let (format, report, stats) = crate::remote::validate(url, options)?;
        return Ok((format, report, Some(stats)));
    }
    let cannot_read = |e: std::io::Error| format!("cannot read {}: {e}", text::path(path));
    let mut regular = false;
    if !is_dash(path) {
        let meta = std::fs::metadata(path)
            .map_err(|e| format!("cannot read {}: {e}", text::path(path)))?;
        #[cfg(unix)]
        let readable = {
            use std::os::unix::fs::FileTypeExt;
            meta.is_file() || meta.file_type().is_fifo()
        };
        #[cfg(not(unix))]
        let readable = meta.is_file();
        if !readable {
            // The one message for what is not a regular file (hrry::source).
            let why = hrry::source::open_regular(path)
                .err()
                .map_or_else(|| "not a regular file".to_string(), |e| e.to_string());
            let hint = if meta.is_dir() {
                "; give -r to check the files in it"
            } else {
                ""
            };
            return Err(format!("cannot read {}: {why}{hint}", text::path(path)));
        }
        regular = meta.is_file();
    }
    let bytes;
    let whole: &[u8];
    let file;
    let source: &dyn hrry::source::ReadAt = if regular {
        file = hrry::source::FileSource::open(path).map_err(cannot_read)?;
        &file
    } else {
        bytes = crate::read_input_or_pipe(path)?;
        whole = &bytes;
        &whole
    };
    let format = hrry::Format::detect_source(source, Some(path)).map_err(cannot_read)?;
    let report = format
        .validate_source(source, options)
        .map_err(cannot_read)?;
    Ok((format, report, None))
}

/// The SARIF log of the files checked (`--sarif`), in the order given.
fn sarif_log(files: &[Checked]) -> Value {
    crate::sarif::log(files.iter().map(|done| {
        let checked = match &done.verdict {
            Verdict::Checked { report, .. } => crate::sarif::Checked::Report(report),
            Verdict::Error(message) => crate::sarif::Checked::Unreadable(message),
        };
        (done.name.as_str(), checked)
    }))
}

/// A file's result as JSON.
fn file_json(done: &Checked) -> Value {
    match &done.verdict {
        Verdict::Checked {
            format,
            report,
            remote,
        } => {
            let mut v = crate::json::validate_json(&done.name, format.name(), report);
            if let Some(s) = remote {
                v["remote"] = json!({
                    "requests": s.requests,
                    "bytes": s.bytes,
                    "retries": s.retries,
                });
            }
            // Bytes without a HRRYFILE's magic (a text file, another format) were
            // validated as a HRRYFILE, as the rules say, but are not one.
            let no_magic = report.violations.iter().any(|v| v.rule.id == "HF-HDR-001");
            if *format == hrry::Format::HrryFile && no_magic {
                v["format"] = Value::Null;
            }
            v
        }
        Verdict::Error(message) => json!({
            "file": done.name,
            "valid": false,
            "verdict": "error",
            "error": message,
        }),
    }
}

fn print_human(done: &Checked, verbose: bool) {
    let name = text::safe(&done.name);
    let (report, remote) = match &done.verdict {
        Verdict::Error(message) => {
            eprintln!("hrry: {}", text::safe(message));
            return;
        }
        Verdict::Checked { report, remote, .. } => (report, remote),
    };
    print_report(&name, report);
    if let (true, Some(s)) = (verbose, remote) {
        outln!(
            "  remote: {}, {} fetched{}",
            text::plural(s.requests, "request", "requests"),
            text::plural(s.bytes, "byte", "bytes"),
            if s.retries > 0 {
                format!(" ({} retried)", s.retries)
            } else {
                String::new()
            }
        );
    }
}

/// Prints one report for people (also used by `hrry stream validate`).
pub fn print_report(name: &str, report: &Report) {
    match report.verdict() {
        ReportVerdict::Valid => outln!("{name}: VALID"),
        ReportVerdict::Invalid => {
            let spec = report.spec_violations() as u64;
            let others = report.violations.len() as u64 - spec;
            outln!(
                "{name}: INVALID ({}{})",
                text::plural(spec, "spec violation", "spec violations"),
                if others > 0 {
                    format!(", {others} more of the policy")
                } else {
                    String::new()
                }
            );
        }
        ReportVerdict::Refused => {
            let rules = report.rule_ids().join(", ");
            if report
                .violations
                .iter()
                .any(|v| v.rule.level == Level::Limit)
            {
                outln!(
                    "{name}: REFUSED by a resource limit: no spec violation found before it, the spec verdict is incomplete; rules {rules}"
                );
            } else {
                outln!("{name}: REFUSED by hardening policy: valid per the spec; rules {rules}");
            }
        }
    }
    if !report.is_valid() {
        for v in &report.violations {
            outln!(
                "  {} [{}] at offset {}: {}",
                v.rule.id,
                v.rule.level.name(),
                v.offset,
                text::safe(&v.message)
            );
        }
    }
    for n in &report.notes {
        outln!("  note: {}", text::safe(n));
    }
}

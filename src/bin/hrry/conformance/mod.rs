//! `hrry conformance`: scores another implementation (a testee program speaking the
//! JSON Lines protocol of `docs/conformance-protocol.md`, a one-shot validator, or
//! hrry itself) against the conformance corpus, in tiers: verdict, rule, read,
//! write. `hrry conformance explain PATH` tells what a case is about;
//! `hrry conformance-testee` is hrry speaking the protocol.

mod byte_diff;
mod corpus;
mod explain;
mod explore;
mod known;
mod output;
mod protocol;
mod reference;
mod score;
mod testee;

use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use crate::{Failure, Outcome};
use corpus::Corpus;

/// Arguments of `hrry conformance`.
#[derive(clap::Args)]
#[command(
    args_conflicts_with_subcommands = true,
    after_help = "Exit codes: 0 nothing failed unexpectedly, 1 something did, 2 usage or I/O error \
(--help says more).",
    after_long_help = "\
Testees:
  hrry conformance [OPTIONS] -- CMD ARGS...
      starts CMD once; it reads one JSON request a line on standard input and
      answers one JSON line each on standard output (protocol version 1,
      docs/conformance-protocol.md). A testee that dies, hangs past --timeout or
      answers out of protocol is restarted and the run goes on.
  hrry conformance --oneshot 'my-validator --strict {path}'
      runs a plain validator once per file: exit 0 accepts, 1 rejects, anything
      else is a crash (verdict tier only).
  hrry conformance --self
      hrry itself, in process.

Tiers: verdict (valid files accepted, files breaking a `spec` rule rejected), rule
(rejected for a rule the file breaks; only for testees that report rule IDs; a
rejection naming no rule is a skip, \"no rule given\"), read (every tensor of a
valid file: name, dtype, shape, SHA-256 of its content), write (the testee writes a
file from tensor specs; hrry validates it strictly, spec policy, and reads it back).
These score conformance to the spec. policy (with --policy-tier): the files of
hrry's `hardening` and `limit` rules, valid per the spec, rejected as hrry's
hardened policy does.

Statuses: pass, fail, skip, error, timeout, crash, expected-failure,
unexpected-pass. The run fails (exit 1) on fail, error, timeout, crash and
unexpected-pass.

Expected failures (--expected-failures FILE): lines `PATH TIER` or `PATH` (every
tier), `#` comments. --update-expected-failures rewrites FILE to list exactly the
cases failing now, and the run then exits 0 unless it could not run.

Exit codes: 0 nothing failed unexpectedly, 1 something did, 2 usage or I/O error,
130 / 143 interrupted (`hrry --help` explains)."
)]
pub struct Args {
    #[command(subcommand)]
    command: Option<Sub>,
    /// Run hrry itself as the testee, in process.
    #[arg(long = "self", conflicts_with_all = ["oneshot", "testee"])]
    self_testee: bool,
    /// A validator command run once per file; `{path}` is replaced by the file's
    /// path (words split on white space, no shell).
    #[arg(long, value_name = "'CMD {path}'", conflicts_with = "testee")]
    oneshot: Option<String>,
    /// A corpus folder holding manifest.json (default: the corpus built into hrry).
    #[arg(long, value_name = "DIR")]
    corpus: Option<PathBuf>,
    /// Seconds to wait for each answer.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    timeout: f64,
    /// Print the results as one JSON document (schema/conformance.schema.json).
    #[arg(long)]
    json: bool,
    /// Also write the results as Markdown (for a CI job summary).
    #[arg(long, value_name = "FILE")]
    markdown: Option<PathBuf>,
    /// Also write the scoreboard as one self-contained HTML page (`hrry report`'s style).
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Also write the results as JUnit XML.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Cases known to fail: lines `PATH TIER` or `PATH`.
    #[arg(long, value_name = "FILE")]
    expected_failures: Option<PathBuf>,
    /// Rewrite the --expected-failures file to list the cases failing now.
    #[arg(long, requires = "expected_failures")]
    update_expected_failures: bool,
    /// Also score agreement with hrry's policy: the corpus files of `hardening` and
    /// `limit` rules (valid per the spec, or past a resource bound), each to be
    /// rejected for its rule, in the `policy` tier. Without it they are not run.
    #[arg(long)]
    policy_tier: bool,
    /// Feed the testee only files of these formats (comma-separated: hrryfile,
    /// holo, stream, messages), in every mode (--oneshot included); the other
    /// cases are `skip`.
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = ["hrryfile", "holo", "stream", "messages"])]
    formats: Option<Vec<String>>,
    /// Append the testee's standard error to this file (default: hrry's own).
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// The testee program and its arguments, after `--`.
    #[arg(last = true, value_name = "CMD")]
    testee: Vec<String>,
}

#[derive(clap::Subcommand)]
enum Sub {
    /// Write the corpus built into hrry (every file and manifest.json) into DIR, to
    /// open a failing file or to feed it back with --corpus DIR.
    Extract {
        /// The folder to write into (created if missing; must not hold a manifest).
        dir: PathBuf,
    },
    /// Explain a corpus case: its rule and spec section, what hrry reports, the nearest
    /// valid file (most likely the one it was made from) and the bytes changed from it
    /// (aligned: bytes inserted or removed are one change). A rule ID explains every
    /// case breaking it; another file, its violations and changes from the nearest
    /// valid corpus file.
    Explain {
        /// A case's path in the corpus (invalid/HF-HDR-003.hrry), a rule ID
        /// (HF-HDR-003) or the path of a file outside the corpus.
        #[arg(value_name = "CASE|RULE|FILE")]
        path: String,
        /// A corpus folder holding manifest.json (default: the built-in corpus).
        #[arg(long, value_name = "DIR")]
        corpus: Option<PathBuf>,
    },
    /// Generate cases from the corpus's valid files by structure-aware mutation,
    /// compare the testee's answers with hrry's, and shrink and keep each
    /// disagreement.
    Explore(explore::Args),
}

/// Arguments of `hrry conformance-testee`.
#[derive(clap::Args)]
pub struct TesteeArgs {
    /// Misbehave on purpose, to test a harness: accept-all, reject-all, flip-hash,
    /// crash-on=TEXT, hang-on=TEXT, garbage-on=TEXT, wrong-id-on=TEXT (TEXT: the end of
    /// the request's path or output path); spec-only validates by the exact spec
    /// verdict, ignoring hrry's hardening rules; ignore-rule=ID,... (those rules not
    /// checked), crash-on-huge-index (abort on an index declaring over 2^32 entries),
    /// ignore-zero-point (per-tensor affine dequantized with a zero point of 0),
    /// flags-as-u16 (descriptor flag bits 16-31 unseen).
    #[arg(long, value_name = "FAULT")]
    fault: Option<reference::Fault>,
}

fn load(dir: Option<&PathBuf>) -> Result<Corpus, Failure> {
    match dir {
        Some(d) => Corpus::from_dir(d),
        None => Corpus::built_in(),
    }
}

pub fn run(args: Args) -> Result<Outcome, Failure> {
    if let Some(Sub::Extract { dir }) = &args.command {
        let n = corpus::extract(dir)?;
        eprintln!(
            "hrry: wrote {n} files of the built-in corpus to {}",
            dir.display()
        );
        return Ok(Outcome::Ok);
    }
    if let Some(Sub::Explain { path, corpus }) = &args.command {
        let corpus = load(corpus.as_ref())?;
        crate::write_stdout(explain::explain(&corpus, path)?.as_bytes());
        return Ok(Outcome::Ok);
    }
    if let Some(Sub::Explore(explore)) = args.command {
        return explore::run(explore);
    }
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        return Err(Failure(
            "--timeout must be a positive number of seconds".into(),
        ));
    }
    let timeout = Duration::from_secs_f64(args.timeout.min(86_400.0));
    let known = match &args.expected_failures {
        Some(p) if p.exists() || !args.update_expected_failures => {
            Some(known::ExpectedFailures::read(p)?)
        }
        _ => None,
    };
    let corpus = load(args.corpus.as_ref())?;
    let mut testee = testee::start(
        args.self_testee,
        args.oneshot.as_deref(),
        &args.testee,
        timeout,
        args.log.clone(),
    )?;
    let scratch = tempfile::Builder::new()
        .prefix("hrry-conformance-out-")
        .tempdir()?;
    let scope = score::Scope {
        policy_tier: args.policy_tier,
        formats: args.formats.clone(),
    };
    let mut cases = score::run(&corpus, testee.as_mut(), scratch.path(), &scope);
    testee.finish();
    let stale = known
        .as_ref()
        .map(|k| k.apply(&mut cases))
        .unwrap_or_default();
    let results = output::Results {
        testee: &testee.hello().raw,
        corpus: corpus.describe(),
        cases: &cases,
        stale: &stale,
    };
    if args.json {
        let text = serde_json::to_string_pretty(&results.json())? + "\n";
        crate::write_stdout(text.as_bytes());
    } else {
        crate::write_stdout(results.text().as_bytes());
    }
    if let Some(p) = &args.markdown {
        write_file(p, &results.markdown())?;
    }
    if let Some(p) = &args.html {
        write_file(p, &crate::report::scoreboard(&results.json()))?;
    }
    if let Some(p) = &args.junit {
        write_file(p, &results.junit())?;
    }
    if args.update_expected_failures {
        if let Some(p) = &args.expected_failures {
            write_file(p, &known::render(&cases))?;
            eprintln!("hrry: rewrote {}", crate::text::path(p));
            return Ok(Outcome::Ok);
        }
    }
    Ok(if results.ok() {
        Outcome::Ok
    } else {
        Outcome::Invalid
    })
}

fn write_file(path: &std::path::Path, text: &str) -> Result<(), Failure> {
    std::fs::write(path, text)
        .map_err(|e| Failure(format!("cannot write {}: {e}", crate::text::path(path))))
}

/// `hrry conformance-testee`: hrry answering the protocol on standard input and
/// output.
pub fn serve(args: TesteeArgs) -> Result<Outcome, Failure> {
    let stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    reference::serve(stdin, &mut stdout, args.fault.as_ref())?;
    stdout.flush()?;
    Ok(Outcome::Ok)
}

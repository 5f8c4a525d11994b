//! `hrry`: inspect, validate and convert Hurray tensor files and `.holo` archives.
//!
//! Every command ends with a code of [`EXIT_CODES`].

/// `println!` for the command output: when standard output is closed early (a pipe
/// into `head`), ends the process quietly with [`EXIT_BROKEN_PIPE`] instead of
/// panicking.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::write_line(format_args!($($arg)*))
    };
}

/// The exit codes of every command, shown once by `hrry --help` and in docs/cli.md
/// (a macro, so that it can be `concat!`ed).
macro_rules! exit_codes {
    () => {
        "\
Exit codes:
  0    success: the command did its job (validate: every file checked is valid;
       serve: stopped by SIGINT or SIGTERM)
  1    an input is invalid or cannot be processed: it breaks a rule, is malformed,
       or holds what the command does not support (a tensor type, a layout)
       (validate: invalid per the spec, a `spec` rule is broken)
  2    usage or I/O error: bad arguments, a tensor or section not in the file, a
       file that cannot be read or written (or is not a regular file, or changed
       while being read), an output that is one of the inputs, a server that
       cannot be reached or answers with an ERROR
  3    validate: valid per the spec but refused by the policy (a `hardening` rule
       under --policy hardened, or a resource `limit`)
       (checking several files: 2 if any could not be read, else 1 if any is
       invalid, else 3 if any is refused)
  129  ended by SIGHUP (its terminal closed); temporary files are removed first
  130  interrupted by SIGINT (Ctrl-C); temporary files are removed first
  141  standard output closed before the output ended (as by `| head`)
  143  terminated by SIGTERM; temporary files are removed first"
    };
}

/// What every subcommand's `--help` ends with instead of the whole table.
macro_rules! see_exit_codes {
    () => {
        "Exit codes: 0 success, 1 invalid input, 2 usage or I/O error, 3 refused by policy (`hrry --help` explains)."
    };
}

mod conformance;
mod conformance_map;
mod convert;
mod dequant;
mod diff;
mod export;
mod holo;
mod input;
mod inspect;
mod json_stream;
mod listing;
mod net;
mod remote;
mod report;
mod sarif;
mod stats;
mod stream;
mod text;
mod validate;

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

/// The table of [`exit_codes!`].
const EXIT_CODES: &str = exit_codes!();

/// The line of [`see_exit_codes!`].
const SEE_EXIT_CODES: &str = see_exit_codes!();

/// Read, validate and inspect Hurray tensor files (HRRYFILE) and .holo archives.
#[derive(Parser)]
#[command(name = "hrry", version, about, long_about = None, after_help = EXIT_CODES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Parsed once per process: the size of the largest command's arguments costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Dequantize a quantized tensor to a float32 .npy file, or print its statistics.
    #[command(after_help = SEE_EXIT_CODES)]
    Dequant(dequant::Args),
    /// Show a file's header, metadata and tensors (a .holo's sections; a safetensors or
    /// GGUF file as convert reads it).
    #[command(after_help = SEE_EXIT_CODES)]
    Inspect(inspect::Args),
    /// Write tensors as NumPy .npy arrays (one, all of them, or the raw stored codes).
    #[command(after_help = SEE_EXIT_CODES)]
    Export(export::Args),
    /// Check files against every rule of the spec and report each violation.
    #[command(after_help = SEE_EXIT_CODES)]
    Validate(validate::Args),
    /// Convert between HRRYFILE, safetensors and GGUF (any direction), whole checkpoints included.
    #[command(after_help = SEE_EXIT_CODES)]
    Convert(convert::Args),
    /// Compare two model files (HRRYFILE, safetensors, GGUF): tensors, metadata, values.
    Diff(diff::Args),
    /// Write a self-contained HTML report: byte map with violations, tensors, statistics, findings.
    Report(report::Args),
    /// Work with .holo archives (extract an extension or a section).
    #[command(subcommand)]
    Holo(holo::Command),
    /// Bare Hurray streams and transport conversations: pack, unpack, validate, inspect.
    #[command(subcommand)]
    Stream(stream::Command),
    /// Serve the tensors of HRRYFILEs over the Hurray network transport.
    #[command(after_help = SEE_EXIT_CODES)]
    Serve(net::ServeArgs),
    /// Fetch a tensor from a server into a .npy or .hrry file.
    #[command(after_help = SEE_EXIT_CODES)]
    Fetch(net::FetchArgs),
    /// Push a tensor of a HRRYFILE to a server.
    #[command(after_help = SEE_EXIT_CODES)]
    Put(net::PutArgs),
    /// Score another implementation against the conformance corpus (verdict, rule,
    /// read and write tiers), or explain a corpus case.
    Conformance(conformance::Args),
    /// Answer the conformance testee protocol on standard input and output (hrry as a
    /// testee; see docs/conformance-protocol.md).
    #[command(hide = true)]
    ConformanceTestee(conformance::TesteeArgs),
    /// List the rule table: stable IDs, levels, summaries and spec sections.
    #[command(after_help = SEE_EXIT_CODES)]
    Rules {
        /// Print JSON instead of a table.
        #[arg(long, conflicts_with = "markdown")]
        json: bool,
        /// Print the conformance map (docs/conformance.md): the rules by spec file and
        /// section, and the requirements no rule checks, with the reason.
        #[arg(long)]
        markdown: bool,
    },
}

impl Command {
    /// The network options of a command that reads URLs.
    fn net(&self) -> Option<&remote::NetArgs> {
        match self {
            Command::Dequant(a) => Some(&a.net),
            Command::Inspect(a) => Some(&a.net),
            Command::Export(a) => Some(&a.net),
            Command::Validate(a) => Some(&a.net),
            Command::Convert(a) => Some(&a.net),
            Command::Holo(holo::Command::Extract(a)) => Some(&a.net),
            Command::Stream(stream::Command::Pack(a)) => Some(&a.net),
            Command::Serve(a) => Some(&a.net),
            Command::Put(a) => Some(&a.net),
            Command::Diff(a) => Some(&a.net),
            Command::Report(a) => Some(&a.net),
            _ => None,
        }
    }
}

/// The exit code when standard output is closed before the output ends: 128 + 13,
/// what a shell reports for a program killed by SIGPIPE.
const EXIT_BROKEN_PIPE: i32 = 141;

/// Writes one line of command output (see `outln!`).
fn write_line(args: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    let result = out.write_fmt(args).and_then(|()| out.write_all(b"\n"));
    end_on_write_error(result);
}

/// A size given on the command line: bytes, or a number with a `K`, `M` or `G`
/// suffix (KiB, MiB, GiB).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let (digits, shift) = match s.as_bytes().last().map(u8::to_ascii_uppercase) {
        Some(b'K') => (&s[..s.len() - 1], 10),
        Some(b'M') => (&s[..s.len() - 1], 20),
        Some(b'G') => (&s[..s.len() - 1], 30),
        _ => (s, 0),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{s:?} is not a size (bytes, or a number with K, M or G)"))?;
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("{s} is too large"))
}

/// Writes raw command output, with the error handling of `outln!`.
pub fn write_stdout(bytes: &[u8]) {
    let mut out = std::io::stdout().lock();
    end_on_write_error(out.write_all(bytes).and_then(|()| out.flush()));
}

/// Ends the process when writing standard output failed: quietly with
/// [`EXIT_BROKEN_PIPE`] when the reader went away, with a message and code 2
/// otherwise.
fn end_on_write_error(result: std::io::Result<()>) {
    match result {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            std::process::exit(EXIT_BROKEN_PIPE)
        }
        Err(e) => {
            eprintln!("hrry: cannot write to standard output: {e}");
            std::process::exit(2)
        }
    }
}

/// How a command ended.
pub enum Outcome {
    /// Success, or every file valid (exit 0).
    Ok,
    /// Some input was invalid (exit 1).
    Invalid,
    /// No input was invalid per the spec, but some was refused by the policy
    /// (exit 3).
    Refused,
    /// Some input could not be read; each was reported already (exit 2).
    Error,
}

/// A usage or I/O failure, printed as `hrry: <message>` with exit code 2.
pub struct Failure(pub String);

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure(e.to_string())
    }
}

/// A failure writing an output: when it was standard output and its reader went
/// away, the process ends quietly as for any closed standard output.
pub fn output_failure(e: impl Into<std::io::Error> + std::fmt::Display) -> Failure {
    let message = e.to_string();
    if e.into().kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(EXIT_BROKEN_PIPE);
    }
    Failure(message)
}

/// On SIGHUP (a closing terminal), SIGINT or SIGTERM, removes every temporary
/// output file and exits with 128 + the signal number (129, 130, 143). The
/// handling runs on its own thread, so it works whatever the main thread is
/// blocked in (a large write, a FIFO's open).
fn handle_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGHUP, SIGINT, SIGTERM]) else {
        // Without the handler the default action still ends the process; only the
        // temporary-file cleanup is lost.
        return;
    };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            hrry::file::remove_temporaries();
            std::process::exit(128 + signal);
        }
    });
}

/// Gives every subcommand, at every depth, the exit-code line of
/// [`SEE_EXIT_CODES`] unless its help already ends with one.
fn with_exit_code_lines(command: clap::Command) -> clap::Command {
    let names: Vec<String> = command
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    names.into_iter().fold(command, |command, name| {
        command.mut_subcommand(name, |sub| {
            let sub = if sub.get_after_help().is_none() && sub.get_after_long_help().is_none() {
                sub.after_help(SEE_EXIT_CODES)
            } else {
                sub
            };
            with_exit_code_lines(sub)
        })
    })
}

fn main() -> ExitCode {
    let matches = with_exit_code_lines(Cli::command()).get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    if let Some(net) = cli.command.net() {
        remote::configure(net);
    }
    // The server handles SIGINT and SIGTERM itself, to shut down gracefully.
    if !matches!(cli.command, Command::Serve(_)) {
        handle_signals();
    }
    let result = match cli.command {
        Command::Dequant(args) => dequant::run(args),
        Command::Inspect(args) => inspect::run(args),
        Command::Export(args) => export::run(args),
        Command::Diff(args) => diff::run(args),
        Command::Report(args) => report::run(args),
        Command::Validate(args) => validate::run(args),
        Command::Holo(command) => holo::run(command),
        Command::Stream(command) => stream::run(command),
        Command::Rules { json, markdown } => rules(json, markdown),
        Command::Convert(args) => convert::run(args),
        Command::Serve(args) => net::serve(args),
        Command::Fetch(args) => net::fetch(args),
        Command::Put(args) => net::put(args),
        Command::Conformance(args) => conformance::run(args),
        Command::ConformanceTestee(args) => conformance::serve(args),
    };
    remote::print_opened_stats();
    match result {
        Ok(Outcome::Ok) => ExitCode::SUCCESS,
        Ok(Outcome::Invalid) => ExitCode::from(1),
        Ok(Outcome::Refused) => ExitCode::from(3),
        Ok(Outcome::Error) => ExitCode::from(2),
        Err(Failure(message)) => {
            eprintln!("hrry: {}", text::safe(&message));
            ExitCode::from(2)
        }
    }
}

fn rules(json: bool, markdown: bool) -> Result<Outcome, Failure> {
    let rules: Vec<_> = hrry::validate::all_rules().collect();
    if markdown {
        write_stdout(conformance_map::markdown().as_bytes());
    } else if json {
        let list: Vec<_> = rules.iter().map(|r| hrry::report::rule_json(r)).collect();
        outln!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "rules": list }))?
        );
    } else {
        // READS: what deciding the rule reads, `metadata` (what opening a file
        // reads) or `data` (padding and data bytes, only a full check reads them).
        outln!(
            "{:<14} {:<9} {:<8} SUMMARY  [SPEC SECTION]",
            "ID",
            "LEVEL",
            "READS"
        );
        for r in &rules {
            outln!(
                "{:<14} {:<9} {:<8} {}  [{}]",
                r.id,
                r.level.name(),
                r.reads.name(),
                r.summary,
                r.spec
            );
        }
        outln!(
            "{} rules (READS: metadata = checked on every open, data = checked by \
             validate and full opens only)",
            rules.len()
        );
    }
    Ok(Outcome::Ok)
}

/// `--policy`: whether hrry's `hardening` rules refuse a file, for `validate` and
/// the commands that read files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PolicyArg {
    /// The exact spec verdict: only the spec's rules (and resource limits) refuse.
    Spec,
    /// The spec plus hrry's hardening rules (the default).
    Hardened,
}

impl From<PolicyArg> for hrry::validate::Policy {
    fn from(p: PolicyArg) -> Self {
        match p {
            PolicyArg::Spec => hrry::validate::Policy::Spec,
            PolicyArg::Hardened => hrry::validate::Policy::Hardened,
        }
    }
}

/// Creates the missing folders of an output file's path (`-o out/x.npy` with no
/// `out/` yet), as `export --all DIR` creates DIR: every command that writes a file
/// does this before writing it. The error names the output.
pub fn output_folder(output: &Path) -> Result<(), Failure> {
    if is_dash(output) {
        return Ok(());
    }
    match output.parent() {
        Some(folder) if !folder.as_os_str().is_empty() && !folder.exists() => {
            std::fs::create_dir_all(folder).map_err(|e| {
                Failure(format!(
                    "cannot write {}: cannot create its folder {}: {e}",
                    text::path(output),
                    text::path(folder)
                ))
            })
        }
        _ => Ok(()),
    }
}

/// Whether a path argument means standard input or output.
pub fn is_dash(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Reads a whole input: `-` (standard input) or a regular file; the error names
/// the path. See [`input::Input`].
pub fn read_input(path: &Path) -> Result<input::Input, String> {
    input::Input::read(path, false).map_err(|e| format!("cannot read {}: {e}", text::path(path)))
}

/// [`read_input`] that also reads a named pipe (a FIFO, `<(…)`) whole.
pub fn read_input_or_pipe(path: &Path) -> Result<input::Input, String> {
    input::Input::read(path, true).map_err(|e| format!("cannot read {}: {e}", text::path(path)))
}

/// Reports on standard error that `path` is not a readable HRRYFILE (exit 1 follows).
pub fn report_invalid(path: &Path, e: &hrry::file::Error) {
    eprintln!("{}: {}", text::path(path), text::safe(&e.to_string()));
}

/// Opens a HRRYFILE for a command under `policy`. An I/O error is a failure (exit
/// 2); a file that cannot be read as a HRRYFILE is reported on stderr and gives
/// `None` (exit 1).
pub fn open_hrry(
    path: &Path,
    policy: PolicyArg,
) -> Result<Option<hrry::file::HrryFile<'static>>, Failure> {
    let open = hrry::file::OpenOptions::new().policy(policy.into());
    if let Some(url) = remote::url(path) {
        return match remote::open_file(url, &open) {
            Ok(f) => Ok(Some(f)),
            Err(remote::OpenFailure::Read(message)) => Err(Failure(message)),
            Err(remote::OpenFailure::Invalid(e)) => {
                report_invalid(path, &e);
                Ok(None)
            }
        };
    }
    // Read, not mapped: a file changed meanwhile is an error, not a SIGBUS.
    match open.open_read(path) {
        Ok(f) => Ok(Some(f)),
        Err(hrry::file::Error::Io(e)) => {
            Err(Failure(format!("cannot read {}: {e}", text::path(path))))
        }
        Err(e) => {
            report_invalid(path, &e);
            Ok(None)
        }
    }
}

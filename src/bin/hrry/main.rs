//! `hrry`: inspect, validate and convert Hurray tensor files and `.holo` archives.
//!
//! Every command ends with a code of [`EXIT_CODES`].

/// `println!` for the command output: when standard output is closed early (a pipe
/// into `head`), ends the process quietly with [`EXIT_BROKEN_PIPE`] instead of
/// panicking.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::stdout::write_line(format_args!($($arg)*))
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

mod args;
mod conformance;
mod conformance_map;
mod convert;
mod dequant;
mod diff;
mod export;
mod holo;
mod input;
mod inspect;
mod json;
mod json_stream;
mod listed;
mod listing;
mod net;
mod open;
mod outcome;
mod output;
mod remote;
mod render;
mod report;
mod sarif;
mod stats;
mod stdout;
mod stream;
mod temporaries;
mod text;
mod validate;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

// The vocabulary every command shares, named from the crate root (`crate::Failure`).
pub use args::{parse_size, PolicyArg};
pub use input::is_dash;
pub use open::{open_hrry, read_input, read_input_or_pipe, report_invalid};
pub use outcome::{Failure, Outcome};
pub use output::output_folder;
pub use stdout::{output_failure, write_stdout, EXIT_BROKEN_PIPE};

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
    temporaries::install();
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            temporaries::remove_all();
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
        let list: Vec<_> = rules.iter().map(|r| crate::json::rule_json(r)).collect();
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

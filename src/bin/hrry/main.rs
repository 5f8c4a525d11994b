//! `hrry`: inspect, validate and convert Hurray tensor files and `.holo` archives.
//!
//! Exit codes: 0 valid / success, 1 invalid input, 2 usage or I/O error; 141 when
//! standard output is closed early (as by `| head`).

/// `println!` for the command output: when standard output is closed early (a pipe
/// into `head`), ends the process quietly with [`EXIT_BROKEN_PIPE`] instead of
/// panicking.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::write_line(format_args!($($arg)*))
    };
}

mod convert;
mod dequant;
mod export;
mod holo;
mod inspect;
mod stream;
mod validate;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Read, validate and inspect Hurray tensor files (HRRYFILE) and .holo archives.
#[derive(Parser)]
#[command(name = "hrry", version, about, long_about = None)]
#[command(
    after_help = "Exit codes: 0 valid or success, 1 invalid input, 2 usage or I/O error, 141 standard output closed early."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Dequantize a quantized tensor to a float32 .npy file, or print its statistics.
    Dequant(dequant::Args),
    /// Show a file's header, metadata and tensors (or a .holo's sections).
    Inspect(inspect::Args),
    /// Write a tensor in logical row-major order as a NumPy .npy array.
    Export(export::Args),
    /// Check files against every rule of the spec and report each violation.
    Validate(validate::Args),
    /// Convert between HRRYFILE and safetensors, or GGUF to HRRYFILE.
    Convert(convert::Args),
    /// Work with .holo archives (extract an extension or a section).
    #[command(subcommand)]
    Holo(holo::Command),
    /// Bare Hurray streams and transport conversations: pack, unpack, validate.
    #[command(subcommand)]
    Stream(stream::Command),
    /// List the rule table: stable IDs, levels, summaries and spec sections.
    Rules {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
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

/// Writes raw command output (`-o -`), with the error handling of `outln!`.
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
    /// Success, or every file valid.
    Ok,
    /// Some input was invalid.
    Invalid,
}

/// A usage or I/O failure, printed as `hrry: <message>` with exit code 2.
pub struct Failure(pub String);

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure(e.to_string())
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Dequant(args) => dequant::run(args),
        Command::Inspect(args) => inspect::run(args),
        Command::Export(args) => export::run(args),
        Command::Validate(args) => validate::run(args),
        Command::Holo(command) => holo::run(command),
        Command::Stream(command) => stream::run(command),
        Command::Rules { json } => rules(json),
        Command::Convert(args) => convert::run(args),
    };
    match result {
        Ok(Outcome::Ok) => ExitCode::SUCCESS,
        Ok(Outcome::Invalid) => ExitCode::from(1),
        Err(Failure(message)) => {
            eprintln!("hrry: {message}");
            ExitCode::from(2)
        }
    }
}

fn rules(json: bool) -> Result<Outcome, Failure> {
    let rules: Vec<_> = hrry::validate::all_rules().collect();
    if json {
        let list: Vec<_> = rules.iter().map(|r| hrry::report::rule_json(r)).collect();
        outln!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "rules": list }))?
        );
    } else {
        for r in &rules {
            outln!(
                "{:<14} {:<9} {}  [{}]",
                r.id,
                r.level.name(),
                r.summary,
                r.spec
            );
        }
        outln!("{} rules", rules.len());
    }
    Ok(Outcome::Ok)
}

/// Reads a whole input file, naming it in the error.
pub fn read_input(path: &std::path::Path) -> Result<Vec<u8>, Failure> {
    std::fs::read(path).map_err(|e| Failure(format!("cannot read {}: {e}", path.display())))
}

/// Opens a HRRYFILE for a command. An I/O error is a failure (exit 2); a file that
/// cannot be read as a HRRYFILE is reported on stderr and gives `None` (exit 1).
pub fn open_hrry(path: &std::path::Path) -> Result<Option<hrry::file::HrryFile<'static>>, Failure> {
    match hrry::file::HrryFile::open(path) {
        Ok(f) => Ok(Some(f)),
        Err(hrry::file::Error::Io(e)) => {
            Err(Failure(format!("cannot read {}: {e}", path.display())))
        }
        Err(e) => {
            eprintln!("{}: {e}", path.display());
            Ok(None)
        }
    }
}

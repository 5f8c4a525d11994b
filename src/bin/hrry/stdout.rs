//! Command output on standard output: a reader that goes away (`| head`) ends
//! the process quietly with [`EXIT_BROKEN_PIPE`], any other write error with a
//! message and exit 2.

use std::io::Write;

use crate::outcome::Failure;

/// The exit code when standard output is closed before the output ends: 128 + 13,
/// what a shell reports for a program killed by SIGPIPE.
pub const EXIT_BROKEN_PIPE: i32 = 141;

/// Writes one line of command output (see `outln!`).
pub fn write_line(args: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    let result = out.write_fmt(args).and_then(|()| out.write_all(b"\n"));
    end_on_write_error(result);
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

/// A failure writing an output: when it was standard output and its reader went
/// away, the process ends quietly as for any closed standard output.
pub fn output_failure(e: impl Into<std::io::Error> + std::fmt::Display) -> Failure {
    let message = e.to_string();
    if e.into().kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(EXIT_BROKEN_PIPE);
    }
    Failure(message)
}

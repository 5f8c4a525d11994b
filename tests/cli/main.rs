//! The `hrry` binary as a user runs it: one module per group of commands, and the
//! command line at its edges.
//!
//! One test binary per area, so that the library is linked once for it; one
//! module per concern.

mod changing;
mod commands;
mod conformance;
mod dequant;
mod diff;
mod edges;
mod explore;
mod export_bounds;
mod first_use;
mod inspect_schema;
mod report;
mod sarif;
mod serve;
mod stream;

/// Runs the `hrry` binary with `args` in the repository's folder: its exit code,
/// standard output and standard error.
fn hrry<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hrry"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("hrry runs");
    (
        out.status.code().expect("exit code"),
        String::from_utf8(out.stdout).expect("utf-8 stdout"),
        String::from_utf8(out.stderr).expect("utf-8 stderr"),
    )
}

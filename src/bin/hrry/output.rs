//! Where commands write: output paths, `-` meaning standard output.

use std::io::BufWriter;
use std::path::Path;

use hrry::file::{Output, OutputError};

use crate::input::is_dash;
use crate::outcome::Failure;
use crate::text;

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

/// Opens the output `path` of a command reading `inputs` (which it must not be):
/// `-` is standard output, any other path is written as [`Output::create`] does.
pub fn create(path: &Path, inputs: &[&Path]) -> Result<Output, OutputError> {
    if is_dash(path) {
        return Ok(stdout(path));
    }
    Output::create(path, inputs)
}

/// Standard output as an [`Output`] called `name`.
pub fn stdout(name: &Path) -> Output {
    Output::through(name, BufWriter::with_capacity(1 << 16, std::io::stdout()))
}

//! `hrry export`.

use std::path::PathBuf;

use hrry::export::{export_npy, ExportError, ExportOptions};
use hrry::file::{AtomicFile, HrryFile};

use crate::{Failure, Outcome};

/// Arguments of `hrry export`.
#[derive(clap::Args)]
pub struct Args {
    /// The HRRYFILE holding the tensor.
    file: PathBuf,
    /// The tensor's name.
    tensor: String,
    /// Where to write the NumPy array (.npy).
    #[arg(short = 'o', long = "output", value_name = "OUT.npy")]
    output: PathBuf,
    /// Largest tensor assembled in memory (sparse, composite), in bytes.
    #[arg(long, value_name = "BYTES")]
    max_bytes: Option<u64>,
}

pub fn run(args: Args) -> Result<Outcome, Failure> {
    let file = match HrryFile::open(&args.file) {
        Ok(f) => f,
        Err(hrry::file::Error::Io(e)) => {
            return Err(Failure(format!("cannot read {}: {e}", args.file.display())))
        }
        Err(e) => {
            eprintln!("{}: {e}", args.file.display());
            return Ok(Outcome::Invalid);
        }
    };
    let mut options = ExportOptions::default();
    if let Some(n) = args.max_bytes {
        options.max_bytes = n;
    }
    let out = AtomicFile::create(&args.output)
        .map_err(|e| Failure(format!("cannot create {}: {e}", args.output.display())))?;
    match export_npy(&file, &args.tensor, out, &options) {
        Ok(out) => {
            out.commit()
                .map_err(|e| Failure(format!("cannot write {}: {e}", args.output.display())))?;
            Ok(Outcome::Ok)
        }
        Err(ExportError::Io(e)) => Err(Failure(format!(
            "cannot write {}: {e}",
            args.output.display()
        ))),
        Err(ExportError::NotFound(name)) => Err(Failure(format!(
            "{}: no tensor named {name:?}",
            args.file.display()
        ))),
        Err(e) => {
            eprintln!("{}: {}: {e}", args.file.display(), args.tensor);
            Ok(Outcome::Invalid)
        }
    }
}

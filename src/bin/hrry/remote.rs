//! Inputs named by URL (`http://`, `https://`): opened as remote sources read with
//! range requests (`hrry::remote`). Setting `HRRY_REMOTE_STATS=1` prints the
//! requests and bytes each one cost on standard error; `HRRY_REMOTE_SUFFIX_BYTES`
//! and `HRRY_REMOTE_BLOCK_BYTES` set the first request's length (256 KiB) and the
//! block fetched around a read that misses the cache (64 KiB).

use std::path::Path;

use hrry::remote::{RemoteOptions, RemoteSource};
use hrry::validate::{Options, Report};

/// The URL `path` is, if it is one.
pub fn url(path: &Path) -> Option<&str> {
    path.to_str().filter(|s| hrry::remote::is_url(s))
}

/// How an input is named in output: a URL without its credentials, else the path.
pub fn shown(path: &Path) -> String {
    match url(path) {
        Some(u) => hrry::remote::redact(u),
        None => path.to_string_lossy().into_owned(),
    }
}

/// Opens the file at `url` (the error names the URL, without credentials).
pub fn open(url: &str) -> Result<RemoteSource, String> {
    let mut options = RemoteOptions::default();
    for (var, field) in [
        ("HRRY_REMOTE_SUFFIX_BYTES", &mut options.suffix_len),
        ("HRRY_REMOTE_BLOCK_BYTES", &mut options.block_size),
    ] {
        if let Some(v) = std::env::var_os(var) {
            *field = v
                .to_str()
                .and_then(|v| v.parse().ok())
                .filter(|&n: &u64| n > 0)
                .ok_or_else(|| format!("{var} must be a positive number of bytes"))?;
        }
    }
    RemoteSource::open(url, &options).map_err(|e| format!("cannot read {e}"))
}

/// Prints what reading `source` cost, when `HRRY_REMOTE_STATS` is set.
pub fn print_stats(source: &RemoteSource) {
    if std::env::var_os("HRRY_REMOTE_STATS").is_some_and(|v| !v.is_empty() && v != "0") {
        let s = source.stats();
        eprintln!(
            "{}: {} requests ({} retries), {} bytes fetched of {}",
            source.url(),
            s.requests,
            s.retries,
            s.bytes,
            hrry::source::ReadAt::len(source)
        );
    }
}

/// Validates the file at `url`, recognised by its magic (else its name's extension).
pub fn validate(url: &str, options: &Options) -> Result<(hrry::Format, Report), String> {
    let source = open(url)?;
    let name = url.split(['?', '#']).next().unwrap_or(url);
    let result = hrry::Format::detect_source(&source, Some(Path::new(name)))
        .and_then(|format| Ok((format, format.validate_source(&source, options)?)))
        .map_err(|e| format!("cannot read {e}"));
    print_stats(&source);
    result
}

/// The failure for a command that does not read URLs yet, when `path` is one.
pub fn refuse(path: &Path, command: &str) -> Result<(), crate::Failure> {
    match url(path) {
        Some(u) => Err(crate::Failure(format!(
            "cannot read {}: `hrry {command}` does not read URLs yet (`hrry validate` does)",
            hrry::remote::redact(u)
        ))),
        None => Ok(()),
    }
}

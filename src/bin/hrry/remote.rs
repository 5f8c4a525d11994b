//! Inputs named by URL (`http://`, `https://`, `s3://`): opened as remote sources
//! read with range requests (`hrry::remote`). A HRRYFILE is opened over its source
//! (`OpenOptions::open_source`: only the metadata and the tensors asked for are
//! fetched); a `.holo` archive, a bare stream or a `convert` input is fetched
//! whole first, into a temporary file.
//!
//! `--timeout`, `--stall-timeout` and `--retries` ([`NetArgs`]) set how long a
//! request may take, how long a transfer may stall, and how often a failure that
//! may pass is tried again. Setting `HRRY_REMOTE_STATS=1` prints the requests and bytes each one cost on
//! standard error; `HRRY_REMOTE_SUFFIX_BYTES` and `HRRY_REMOTE_BLOCK_BYTES` set the
//! first request's length (256 KiB) and the block fetched around a read that
//! misses the cache (64 KiB).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use hrry::file::{HrryFile, OpenOptions};
use hrry::remote::{RemoteOptions, RemoteSource};
use hrry::source::ReadAt;
use hrry::validate::{Options, Report};

/// Bytes read from a remote source at once when it is fetched whole.
const DOWNLOAD_PIECE: usize = 8 << 20;

/// The remote sources the command opened (other than `validate`'s, which reports
/// each as it finishes), for [`print_opened_stats`].
static OPENED: Mutex<Vec<Arc<RemoteSource>>> = Mutex::new(Vec::new());

/// The network options of every command that reads URLs (`hrry validate`,
/// `inspect`, `export`, `dequant`, `convert`, `holo extract`, `stream pack`,
/// `serve`, `put`).
#[derive(clap::Args, Clone, Debug, Default)]
#[command(next_help_heading = "Reading URLs")]
pub struct NetArgs {
    /// Seconds each request to a URL may take, body and same-origin redirects
    /// included (default 120).
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    pub timeout: Option<Duration>,
    /// Seconds a transfer may go with less than 1 KiB arriving (no answer, or a
    /// trickle) before it fails as stalled (default 15).
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    pub stall_timeout: Option<Duration>,
    /// Tries after the first for a request that failed in a way that may pass: a
    /// 5xx or 429 answer, a broken connection, a timeout or stall, a short body
    /// (default 4).
    #[arg(long, value_name = "N")]
    pub retries: Option<u32>,
}

/// A positive number of seconds (fractions allowed, at most a day).
pub fn parse_seconds(text: &str) -> Result<Duration, String> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 && s <= 86_400.0 => Ok(Duration::from_secs_f64(s)),
        _ => Err(format!(
            "`{text}` is not a number of seconds above 0 and at most 86400"
        )),
    }
}

/// The command's [`NetArgs`], set once before it runs.
static NET: OnceLock<NetArgs> = OnceLock::new();

/// Sets the network options every remote read of this command uses.
pub fn configure(net: &NetArgs) {
    let _ = NET.set(net.clone());
}

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

/// The remote options, with the environment's settings.
fn options() -> Result<RemoteOptions, String> {
    let mut options = RemoteOptions::default();
    if let Some(net) = NET.get() {
        if let Some(t) = net.timeout {
            options.timeout = t;
        }
        if let Some(t) = net.stall_timeout {
            options.stall_timeout = t;
        }
        if let Some(n) = net.retries {
            options.retries = n;
        }
    }
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
    Ok(options)
}

/// Opens the file at `url` (the error names the URL, without credentials).
pub fn open(url: &str) -> Result<RemoteSource, String> {
    RemoteSource::open(url, &options()?).map_err(|e| format!("cannot read {e}"))
}

/// Opens the file at `url` for a command that reads it through a mirror (a
/// HRRYFILE) or whole: the cache holds the small reads of metadata only, larger
/// reads go straight to the mirror. Its statistics are printed at exit
/// ([`print_opened_stats`]).
pub fn open_shared(url: &str) -> Result<Arc<RemoteSource>, String> {
    let options = RemoteOptions {
        cache_bytes: 16 << 20,
        ..options()?
    };
    let source =
        Arc::new(RemoteSource::open(url, &options).map_err(|e| format!("cannot read {e}"))?);
    OPENED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(source.clone());
    Ok(source)
}

/// Opens the HRRYFILE at `url` over its remote source, with `open`'s checks.
pub fn open_file(url: &str, open: &OpenOptions) -> Result<HrryFile<'static>, OpenFailure> {
    let source = open_shared(url).map_err(OpenFailure::Read)?;
    open.open_source(source).map_err(|e| match e {
        hrry::file::Error::Io(e) => OpenFailure::Read(cannot_read(url, &e)),
        e => OpenFailure::Invalid(e),
    })
}

/// Why a remote HRRYFILE did not open.
pub enum OpenFailure {
    /// It could not be read (exit 2): the message names the URL.
    Read(String),
    /// It is not a readable HRRYFILE (exit 1).
    Invalid(hrry::file::Error),
}

/// "cannot read URL: error", naming the URL once (remote errors name it already).
pub fn cannot_read(url: &str, e: &dyn std::fmt::Display) -> String {
    let shown = hrry::remote::redact(url);
    let message = e.to_string();
    if message.contains(&shown) {
        format!("cannot read {message}")
    } else {
        format!("cannot read {shown}: {message}")
    }
}

/// Whether the remote-statistics lines are asked for.
fn stats_wanted() -> bool {
    std::env::var_os("HRRY_REMOTE_STATS").is_some_and(|v| !v.is_empty() && v != "0")
}

/// Prints what reading `source` cost, when `HRRY_REMOTE_STATS` is set.
pub fn print_stats(source: &RemoteSource) {
    if stats_wanted() {
        let s = source.stats();
        eprintln!(
            "{}: {} requests ({} retries), {} bytes fetched of {}",
            source.url(),
            s.requests,
            s.retries,
            s.bytes,
            ReadAt::len(source)
        );
    }
}

/// Prints what reading each source of [`open_shared`] cost, when
/// `HRRY_REMOTE_STATS` is set.
pub fn print_opened_stats() {
    for source in OPENED.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        print_stats(source);
    }
}

/// The first bytes of `source` (up to `n`).
pub fn head(source: &dyn ReadAt, n: u64) -> Result<Vec<u8>, String> {
    let mut head = vec![0; n.min(source.len()) as usize];
    source
        .read_at(0, &mut head)
        .map_err(|e| format!("cannot read {e}"))?;
    Ok(head)
}

/// Copies all of `source` into `out`, a piece at a time.
fn copy_whole(source: &RemoteSource, out: &mut std::fs::File) -> Result<(), String> {
    let mut buf = vec![0u8; DOWNLOAD_PIECE.min(ReadAt::len(source) as usize)];
    let mut at = 0u64;
    while at < ReadAt::len(source) {
        let n = (ReadAt::len(source) - at).min(buf.len() as u64) as usize;
        source
            .read_at(at, &mut buf[..n])
            .map_err(|e| format!("cannot read {e}"))?;
        out.write_all(&buf[..n])
            .map_err(|e| format!("cannot keep {}: {e}", source.url()))?;
        at += n as u64;
    }
    Ok(())
}

/// All of `source`, fetched into an unnamed temporary file that is then mapped.
pub fn download(source: &RemoteSource) -> Result<crate::input::Input, String> {
    let mut file =
        tempfile::tempfile().map_err(|e| format!("cannot keep {}: {e}", source.url()))?;
    copy_whole(source, &mut file)?;
    crate::input::Input::map(&file).map_err(|e| format!("cannot keep {}: {e}", source.url()))
}

/// All of the file at `url`, fetched into a temporary folder under the URL's
/// file name (for readers that take a path): the folder, removed when dropped,
/// and the path.
pub fn download_named(url: &str) -> Result<(tempfile::TempDir, PathBuf), String> {
    let source = open_shared(url)?;
    let dir = tempfile::Builder::new()
        .prefix("hrry-remote-")
        .tempdir()
        .map_err(|e| format!("cannot keep {}: {e}", source.url()))?;
    let name = url
        .split(['?', '#'])
        .next()
        .and_then(|u| u.rsplit('/').next())
        .filter(|n| !n.is_empty() && !n.starts_with('.'))
        .unwrap_or("input");
    let path = dir.path().join(name);
    let mut file =
        std::fs::File::create(&path).map_err(|e| format!("cannot keep {}: {e}", source.url()))?;
    copy_whole(&source, &mut file)?;
    Ok((dir, path))
}

/// Validates the file at `url`, recognised by its magic (else its name's extension),
/// with what reading it cost.
pub fn validate(
    url: &str,
    options: &Options,
) -> Result<(hrry::Format, Report, hrry::remote::Stats), String> {
    let source = open(url)?;
    let name = url.split(['?', '#']).next().unwrap_or(url);
    let result = hrry::Format::detect_source(&source, Some(Path::new(name)))
        .and_then(|format| Ok((format, format.validate_source(&source, options)?)))
        .map_err(|e| format!("cannot read {e}"));
    print_stats(&source);
    result.map(|(format, report)| (format, report, source.stats()))
}

//! `.holo` archives on the command line: `hrry inspect` of an archive, and
//! `hrry holo extract`.

use std::io::Write;
use std::path::{Path, PathBuf};

use hrry::file::OutputError;
use hrry::holo::{describe, hex, HoloLoader, SectionKind};

use crate::{text, Failure, Outcome};

/// Subcommands of `hrry holo`.
#[derive(clap::Subcommand)]
pub enum Command {
    /// Write one extension's value or one section's payload to a file.
    Extract(ExtractArgs),
}

/// Arguments of `hrry holo extract`.
#[derive(clap::Args)]
pub struct ExtractArgs {
    /// The archive.
    file: PathBuf,
    /// The key of the Extension whose value to write.
    #[arg(long, conflicts_with = "section", required_unless_present = "section")]
    extension: Option<String>,
    /// The kind (name such as `Weights`, or number) of the section whose payload to
    /// write.
    #[arg(long, value_name = "KIND")]
    section: Option<String>,
    /// Which section of that kind, counting from 0, when the kind repeats.
    #[arg(long, default_value_t = 0, requires = "section")]
    index: usize,
    /// Output file (`-` for standard output).
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
    #[command(flatten)]
    pub net: crate::remote::NetArgs,
}

/// Maps and verifies an archive. An invalid archive is reported on standard error
/// and gives `Ok(None)`; an unreadable file is a [`Failure`]. A URL is fetched
/// whole first, into an unnamed temporary file.
fn open(path: &Path) -> Result<Option<HoloLoader<crate::input::Input>>, Failure> {
    let storage = match crate::remote::url(path) {
        Some(url) => {
            let source = crate::remote::open_shared(url).map_err(Failure)?;
            crate::remote::download(&source).map_err(Failure)?
        }
        None => crate::read_input(path).map_err(Failure)?,
    };
    match HoloLoader::from_storage(storage) {
        Ok(a) => Ok(Some(a)),
        Err(hrry::Error::Io(source)) => Err(Failure(format!(
            "cannot read {}: {source}",
            text::path(path)
        ))),
        Err(e) => {
            eprintln!("{}: {}", text::path(path), text::safe(&e.to_string()));
            Ok(None)
        }
    }
}

/// `hrry inspect` of a `.holo` archive, mapped from `path` or, for standard input,
/// held in `bytes`. An archive that does not load is reported on standard error
/// (and, with `json`, as an error document on standard output). `max_memory`
/// caps the memory budget of loading it (`--max-memory`).
pub fn inspect(
    path: &Path,
    bytes: Option<&[u8]>,
    json: bool,
    max_memory: Option<u64>,
) -> Result<Outcome, Failure> {
    let mut limits = hrry::limits::Limits::default();
    if let Some(n) = max_memory {
        limits.max_memory = n;
    }
    let loaded = match bytes {
        Some(bytes) => HoloLoader::with_limits(bytes, &limits).map(|a| show(path, &a, json)),
        None => HoloLoader::open_with_limits(path, &limits).map(|a| show(path, &a, json)),
    };
    let v = match loaded {
        Ok(v) => v,
        Err(hrry::Error::Io(source)) => {
            return Err(Failure(format!(
                "cannot read {}: {source}",
                text::path(path)
            )))
        }
        Err(e) => {
            eprintln!("{}: {}", text::path(path), text::safe(&e.to_string()));
            if json {
                let (rule, offset) = match e.violation() {
                    Some(v) => (Some(v.rule.id), Some(v.offset)),
                    None => (None, None),
                };
                let name = path.to_string_lossy();
                let v =
                    crate::render::error_json(&name, Some("holo"), &e.to_string(), rule, offset);
                outln!("{}", serde_json::to_string_pretty(&v)?);
            }
            return Ok(Outcome::Invalid);
        }
    };
    if let Some(v) = v {
        outln!("{}", serde_json::to_string_pretty(&v)?);
    }
    Ok(Outcome::Ok)
}

/// With `json`, the library's summary, to print as is (its `format_version` is
/// the archive's); else prints the archive for people and gives `None`.
fn show<B: AsRef<[u8]>>(
    path: &Path,
    archive: &HoloLoader<B>,
    json: bool,
) -> Option<serde_json::Value> {
    if json {
        return Some(describe(archive));
    }
    print_human(&text::path(path), archive);
    None
}

/// An archive for people. (The numbers after the section kind, the offset, the
/// slot and the dtype are printed unpadded, as they always were.)
fn print_human<B: AsRef<[u8]>>(name: &str, archive: &HoloLoader<B>) {
    outln!(
        "{name}: .holo format_version {}, flags {:#06x}, {} bytes",
        archive.format_version(),
        archive.flags(),
        archive.bytes().len()
    );
    outln!("  fingerprint {}", hex(&archive.fingerprint()));
    let sections = archive.sections();
    outln!(
        "  {}:",
        text::plural(sections.len() as u64, "section", "sections")
    );
    for s in sections {
        outln!(
            "    {} {:<14} offset {} length {}",
            s.kind.number(),
            s.kind.name(),
            s.offset,
            s.length
        );
    }
    for (key, ports) in [("inputs", archive.inputs()), ("outputs", archive.outputs())] {
        outln!("  {key}:");
        for p in ports {
            let dims: Vec<String> = p.shape.iter().map(u64::to_string).collect();
            outln!(
                "    {:<24} slot {} dtype {} shape [{}] ({} elements)",
                text::safe(&p.name),
                p.slot,
                p.dtype,
                dims.join(","),
                p.element_count
            );
        }
    }
    let keys: Vec<String> = archive
        .extension_keys()
        .map(|k| text::safe(k).into_owned())
        .collect();
    outln!("  extensions: {}", keys.join(", "));
    let weight_bytes: u64 = archive.weights().map(|(_, b)| b.len() as u64).sum();
    let constants = archive.constants().count();
    let by_reference = archive
        .constants()
        .filter(|c| c.fingerprint.is_some())
        .count();
    outln!(
        "  weights: {} bodies, {} bytes; constants: {} ({} inline, {} by reference)",
        archive.weight_count(),
        weight_bytes,
        constants,
        constants - by_reference,
        by_reference
    );
    #[cfg(feature = "kappa")]
    {
        let k = hrry::holo::kappa::archive_labels_json(archive);
        outln!(
            "  kappa: model {}  content {}",
            k["model"].as_str().unwrap_or("?"),
            k["content"].as_str().unwrap_or("?")
        );
    }
}

/// Runs a `hrry holo` subcommand.
pub fn run(command: Command) -> Result<Outcome, Failure> {
    match command {
        Command::Extract(args) => extract(args),
    }
}

fn extract(args: ExtractArgs) -> Result<Outcome, Failure> {
    let Some(archive) = open(&args.file)? else {
        return Ok(Outcome::Invalid);
    };
    let bytes: &[u8] = match (&args.extension, &args.section) {
        (Some(key), _) => archive.extension(key).ok_or_else(|| {
            let keys: Vec<&str> = archive.extension_keys().collect();
            Failure(format!(
                "{}: no extension {key:?} (keys: {})",
                args.file.display(),
                keys.join(", ")
            ))
        })?,
        (None, Some(kind)) => {
            let kind = SectionKind::parse(kind).ok_or_else(|| {
                Failure(format!(
                    "unknown section kind {kind:?}; use a name such as Weights or a number 1-16"
                ))
            })?;
            let found = archive.sections_of(kind).count();
            archive.sections_of(kind).nth(args.index).ok_or_else(|| {
                Failure(format!(
                    "{}: {found} {} {}, so no index {}",
                    args.file.display(),
                    kind.name(),
                    if found == 1 { "section" } else { "sections" },
                    args.index
                ))
            })?
        }
        (None, None) => return Err(Failure("give --extension KEY or --section KIND".into())),
    };
    crate::output_folder(&args.output)?;
    let mut out =
        crate::output::create(&args.output, &[&args.file]).map_err(crate::output_failure)?;
    out.write_all(bytes).map_err(|e| {
        crate::output_failure(OutputError::Io {
            path: args.output.clone(),
            source: e,
        })
    })?;
    out.commit().map_err(crate::output_failure)?;
    Ok(Outcome::Ok)
}

//! `hrry inspect`: what a file holds, for people (aligned tables, long values cut,
//! untrusted text escaped) or for tools (`--json`, described by
//! `schema/inspect.schema.json`).

use std::path::PathBuf;

use crate::json::{
    element_json, inspect_head_json, kv_json_limited, kv_type_name, tensor_json, violations_json,
};
use crate::listed::{Listed, Totals};
use hrry::file::{HrryFile, OpenOptions, TensorEntry};
use hrry::schema::{KvValue, TensorDescriptor};
use hrry::{Format, Report};
use serde_json::{json, Map, Value};

use crate::json_stream::PrettyWriter;
use crate::render::{error_json, print_kv_entries, print_tensor_table, summary_line};
use crate::text::{self, plural, safe};
use crate::{is_dash, Failure, Outcome};

/// KV array elements shown by default in human output.
const SHOWN_ARRAY_ELEMENTS: usize = 8;
/// KV array elements shown by default in JSON output (then `"truncated": true`;
/// `--full` shows them all).
const JSON_ARRAY_ELEMENTS: usize = 1 << 20;
/// Arguments of `hrry inspect`.
#[derive(clap::Args)]
#[command(after_long_help = concat!("\
The tensor table: ELEMENTS is the element count; BYTES the tensor's data_length in
the index, its buffers as stored (codes, scales and zero points of a quantized
tensor) with the alignment padding between them, which is why it can exceed the
buffer bytes `hrry fetch` reports receiving and differ from the size of a .npy
export (values widened, dequantized to float32); OFFSET where its data
starts. KV values keep the type the file stores; a key converted from GGUF shows
its GGUF type too (`uint32 (stored as uint64)`).

", see_exit_codes!()))]
pub struct Args {
    /// The file to show (`-` reads standard input): a HRRYFILE, a .holo archive, a
    /// bare stream, or a safetensors or GGUF file (its metadata and tensors as
    /// `hrry convert` reads them, with what each tensor converts to).
    file: PathBuf,
    /// Print JSON (described by schema/inspect.schema.json), written as the file is
    /// read. KV arrays of more than 1048576 elements show their first 1048576
    /// (`"truncated": true`, `"count"` the full length) unless --full is given.
    #[arg(long)]
    json: bool,
    /// Show every KV array element and whole strings (human output cuts them; JSON
    /// cuts arrays past 1048576 elements).
    #[arg(long, alias = "all-values", conflicts_with = "max_array")]
    full: bool,
    /// Show at most N elements of each KV array (human default: 8; JSON: 1048576).
    #[arg(long, value_name = "N")]
    max_array: Option<usize>,
    /// Show tensors only, no metadata.
    #[arg(long, conflicts_with = "metadata_only")]
    tensors_only: bool,
    /// Show metadata only, no tensors.
    #[arg(long)]
    metadata_only: bool,
    /// Show only tensors and metadata keys matching this glob: `*` matches any run
    /// of characters, `?` one character, anything else itself, so a name without
    /// `*` or `?` matches exactly that name (`-n 'blk.0.*'` for a prefix). May be
    /// repeated; the output says how many of all matched.
    #[arg(long = "name", short = 'n', value_name = "GLOB")]
    names: Vec<String>,
    /// Cap of the memory budget of reading the file (bytes, or with a K, M or G
    /// suffix; default 2G). Past it, the file is refused (HF-LIM-001, max_memory).
    #[arg(long, value_name = "SIZE", value_parser = crate::parse_size)]
    max_memory: Option<u64>,
    /// Show what can be read of a file that breaks rules (a bad index CRC, say),
    /// with every violation strict validation finds.
    #[arg(long, alias = "force")]
    permissive: bool,
    #[command(flatten)]
    pub net: crate::remote::NetArgs,
    /// Whether hrry's hardening rules refuse the file too (`hardened`), or only the
    /// spec's rules and resource limits (`spec`).
    #[arg(long, value_enum, value_name = "POLICY", default_value = "hardened")]
    policy: crate::PolicyArg,
    /// Show statistics instead: parameter counts per type (elements and stored
    /// bytes) and each tensor's min, max, mean, std, NaN, Inf and zero counts,
    /// read a piece at a time (HRRYFILE, safetensors, GGUF).
    #[arg(long)]
    stats: bool,
}

pub fn run(args: Args) -> Result<Outcome, Failure> {
    if args.stats {
        return crate::stats::run(&args.file, args.json);
    }
    let json = args.json;
    let name = crate::remote::shown(&args.file);
    match show(args) {
        // With --json a file that cannot be read still gives a document, with no
        // format (nothing was recognised), besides the message on standard error.
        Err(Failure(message)) if json => {
            eprintln!("hrry: {}", text::safe(&message));
            let v = error_json(&name, None, &message, None, None);
            outln!("{}", serde_json::to_string_pretty(&v)?);
            Ok(Outcome::Error)
        }
        other => other,
    }
}

/// Shows one file: a `.holo` archive, a bare stream or a HRRYFILE.
fn show(args: Args) -> Result<Outcome, Failure> {
    // A URL: a HRRYFILE is read over its source (only the metadata is fetched); a
    // .holo archive or a bare stream is fetched whole first.
    let remote = match crate::remote::url(&args.file) {
        Some(url) => Some(crate::remote::open_shared(url).map_err(Failure)?),
        None => None,
    };
    // The format, recognised as everywhere else (hrry::Format::recognise).
    let (whole, format) = if is_dash(&args.file) {
        let bytes = crate::read_input(&args.file).map_err(Failure)?;
        let format = Format::recognise(&bytes, None);
        (Some(bytes), format)
    } else if let Some(source) = &remote {
        let head = crate::remote::head(&**source, 8).map_err(Failure)?;
        match Format::recognise(&head, Some(&args.file)) {
            Some(format @ (Format::Holo | Format::Stream)) => (
                Some(crate::remote::download(source).map_err(Failure)?),
                Some(format),
            ),
            _ => (None, None),
        }
    } else {
        (None, crate::open::recognise(&args.file)?)
    };
    match format {
        Some(Format::Holo) => {
            return crate::holo::inspect(&args.file, whole.as_deref(), args.json, args.max_memory)
        }
        Some(Format::Stream) => {
            return crate::stream::inspect(&args.file, whole.as_deref(), args.json)
        }
        Some(Format::Messages) if whole.is_none() => {
            return crate::stream::inspect_messages(&args.file, args.json)
        }
        _ => {}
    }
    // A safetensors or GGUF file: shown as `hrry convert` reads it.
    if whole.is_none() && remote.is_none() && crate::listing::model_format(&args.file).is_some() {
        let max_array = match (args.max_array, args.full || args.json) {
            (Some(n), _) => Some(n),
            (None, true) => None,
            (None, false) => Some(SHOWN_ARRAY_ELEMENTS),
        };
        return crate::listing::show(&args.file, args.json, max_array, args.full);
    }
    // Inspecting shows structure; judging it is `hrry validate`'s job. The frame
    // open checks the header, trailer, index and KV, and each descriptor as it is
    // read, which is what printing them needs.
    let mut limits = hrry::limits::Limits::default();
    if let Some(n) = args.max_memory {
        limits.max_memory = n;
    }
    let open = if args.permissive {
        OpenOptions::new().allow_all()
    } else {
        OpenOptions::new()
            .depth(hrry::validate::Depth::Frame)
            .rules(args.policy.into())
    }
    .limits(limits);
    // A local file is read at offsets (never mapped), checked unchanged after
    // every read; a read that failed on a change is shown as a tensor's error
    // while rendering, so the file is checked once more once all is read.
    let local = match (&whole, &remote) {
        (None, None) => Some(std::sync::Arc::new(
            hrry::source::FileSource::open(&args.file)
                .map_err(|e| Failure(format!("cannot read {}: {e}", text::path(&args.file))))?,
        )),
        _ => None,
    };
    let opened = match (&whole, &remote) {
        (Some(bytes), _) => open.open_bytes(bytes),
        (None, Some(source)) => open.open_source(source.clone()),
        (None, None) => match &local {
            Some(source) => open.open_source(std::sync::Arc::clone(source)),
            None => open.open_read(&args.file),
        },
    };
    let name = crate::remote::shown(&args.file);
    // With --permissive, say what is wrong: every violation of strict validation.
    let checked = if args.permissive {
        // The mapped file (or the file itself, read where the rules look), not a
        // copy of it.
        let options = hrry::validate::Options {
            limits,
            ..Default::default()
        };
        let cannot_read =
            |e: std::io::Error| Failure(format!("cannot read {}: {e}", text::path(&args.file)));
        let report = match (&whole, &remote, &opened) {
            (Some(bytes), _, _) => hrry::Format::HrryFile.validate_bytes(bytes, &options),
            (None, Some(source), _) => hrry::Format::HrryFile
                .validate_source(&**source, &options)
                .map_err(|e| Failure(crate::remote::cannot_read(source.url(), &e)))?,
            (None, None, _) => hrry::source::FileSource::open(&args.file)
                .and_then(|f| hrry::Format::HrryFile.validate_source(&f, &options))
                .map_err(cannot_read)?,
        };
        Some(report)
    } else {
        None
    };
    let file = match opened {
        Ok(file) => file,
        Err(hrry::file::Error::Io(e)) => {
            return Err(Failure(format!(
                "cannot read {}: {e}",
                text::path(&args.file)
            )))
        }
        Err(e) => return unreadable(&args, &name, &e, checked.as_ref()),
    };
    let max_array = match (args.max_array, args.full) {
        (Some(n), _) => Some(n),
        (None, true) => None,
        (None, false) if args.json => Some(JSON_ARRAY_ELEMENTS),
        (None, false) => Some(SHOWN_ARRAY_ELEMENTS),
    };
    // With --permissive, a file that breaks rules is still an invalid input.
    let broken = checked.as_ref().is_some_and(|r| !r.violations.is_empty());
    // Both renderings write as they walk the file: one tensor, one KV value at a
    // time, never the whole document.
    if args.json {
        write_json(&file, &args, &name, max_array, checked.as_ref());
    } else {
        print_human(&file, &args, max_array, checked.as_ref());
    }
    if let Some(source) = &local {
        source
            .check_unchanged()
            .map_err(|e| Failure(format!("cannot read {}: {e}", text::path(&args.file))))?;
    }
    Ok(if broken {
        Outcome::Invalid
    } else {
        Outcome::Ok
    })
}

/// Whether `--name` lets `name` (a tensor name or KV key) be shown.
fn shown_name(args: &Args, name: &str) -> bool {
    args.names.is_empty() || args.names.iter().any(|g| glob_match(g, name))
}

/// The KV entries `--name` lets through, each as its inspect JSON (arrays kept to
/// `max_array` elements), built one at a time.
fn kv_shown<'f>(
    file: &'f HrryFile<'_>,
    args: &'f Args,
    max_array: Option<usize>,
) -> impl Iterator<Item = (String, Value)> + 'f {
    file.kv().iter().filter_map(move |e| {
        let key = String::from_utf8_lossy(&e.key).into_owned();
        shown_name(args, &key).then(|| (key, kv_json_limited(&e.value, max_array)))
    })
}

/// `--json`: the inspect document (schema/inspect.schema.json) written as the file
/// is walked. Arrays are written element by element.
fn write_json(
    file: &HrryFile<'_>,
    args: &Args,
    name: &str,
    max_array: Option<usize>,
    checked: Option<&Report>,
) {
    let mut w = PrettyWriter::stdout();
    w.open(None, '{');
    for (k, v) in inspect_head_json(file) {
        w.field(&k, &v);
    }
    if !args.tensors_only {
        w.open(Some("kv"), '{');
        for e in file.kv() {
            let key = String::from_utf8_lossy(&e.key);
            if shown_name(args, &key) {
                write_kv_json(&mut w, &key, &e.value, max_array);
            }
        }
        w.close();
    }
    // The totals cover the whole file, whatever is shown.
    let mut totals = Totals::default();
    if !args.metadata_only {
        w.open(Some("tensors"), '[');
    }
    for (entry, descriptor) in file.descriptors() {
        totals.add(&listed(&entry, &descriptor));
        if !args.metadata_only && shown_name(args, entry.name()) {
            w.item(&tensor_json(&entry, &descriptor));
        }
    }
    if !args.metadata_only {
        w.close();
    }
    w.field("summary", &totals.json());
    w.field("file", &json!(name));
    if let Some(report) = checked {
        w.field("violations", &violations_json(report));
    }
    w.close();
}

/// One KV entry of the `--json` document: as [`kv_json_limited`] renders it, an
/// array's elements written one at a time.
fn write_kv_json(w: &mut PrettyWriter, key: &str, value: &KvValue, max_array: Option<usize>) {
    let KvValue::Array(a) = value else {
        w.field(key, &kv_json_limited(value, max_array));
        return;
    };
    let keep = max_array.unwrap_or(usize::MAX).min(a.len());
    w.open(Some(key), '{');
    w.field("type", &json!("array"));
    w.field("element_type", &json!(kv_type_name(a.element_tag)));
    w.field("count", &json!(a.len()));
    w.open(Some("value"), '[');
    for e in a.iter().take(keep) {
        w.item(&element_json(e));
    }
    w.close();
    if keep < a.len() {
        w.field("truncated", &json!(true));
    }
    w.close();
}

/// A file that cannot be opened: the reason on standard error (and as JSON on
/// standard output with `--json`), exit 1.
fn unreadable(
    args: &Args,
    name: &str,
    e: &hrry::file::Error,
    checked: Option<&Report>,
) -> Result<Outcome, Failure> {
    let offset = e.violation().map(|v| v.offset);
    crate::report_invalid(&args.file, e);
    if args.json {
        // Bytes that do not start with the magic (a text file, another format) are
        // not reported as a HRRYFILE.
        let format = match e.rule() {
            Some(rule) if rule.id == "HF-HDR-001" => None,
            _ => Some("hrryfile"),
        };
        let mut v = error_json(name, format, &e.to_string(), e.rule().map(|r| r.id), offset);
        if let Some(report) = checked {
            v["violations"] = violations_json(report);
        }
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else if let Some(report) = checked {
        print_violations(report);
    }
    // A hint where one helps: bytes that are not a HRRYFILE were described
    // already, and what a truncated file lacks no option can show.
    let not_hrryfile = e.rule().is_some_and(|r| r.id == "HF-HDR-001");
    let truncated =
        e.to_string().contains("truncated") || e.rule().is_some_and(|r| r.id == "HF-FIL-001");
    if checked.is_none() && truncated && !not_hrryfile {
        eprintln!(
            "hrry: {} looks cut short (an interrupted download or copy?): fetch or copy it \
             again; `hrry validate` lists every rule it breaks",
            text::path(&args.file)
        );
    } else if checked.is_none() && e.rule().is_some() && !not_hrryfile {
        eprintln!(
            "hrry: --permissive shows what can be read of {} and every rule it breaks",
            text::path(&args.file)
        );
    }
    Ok(Outcome::Invalid)
}

/// Whether `name` matches `glob`: `*` matches any run of characters (none
/// included), `?` any one character, everything else itself.
fn glob_match(glob: &str, name: &str) -> bool {
    let g: Vec<char> = glob.chars().collect();
    let n: Vec<char> = name.chars().collect();
    let (mut gi, mut ni) = (0, 0);
    // Where the last `*` was and where in `name` it is assumed to end: on a
    // mismatch it absorbs one more character (linear in practice, no recursion).
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match g.get(gi) {
            Some('*') => {
                star = Some((gi, ni));
                gi += 1;
            }
            Some(&c) if c == '?' || c == n[ni] => {
                gi += 1;
                ni += 1;
            }
            _ => match star {
                Some((sg, sn)) => {
                    gi = sg + 1;
                    ni = sn + 1;
                    star = Some((sg, sn + 1));
                }
                None => return false,
            },
        }
    }
    g[gi..].iter().all(|&c| c == '*')
}

fn print_human(
    file: &HrryFile<'_>,
    args: &Args,
    max_array: Option<usize>,
    checked: Option<&Report>,
) {
    let h = file.header();
    outln!(
        "{}: HRRYFILE {}.{}, {} bytes",
        text::path(&args.file),
        h.container_version_major,
        h.container_version_minor,
        file.size()
    );
    let flags: Vec<&str> = [
        (h.file_flags.sorted_index(), "sorted index"),
        (h.file_flags.has_index_crc32c(), "index CRC-32C"),
        (h.file_flags.has_kv_metadata(), "KV flag"),
    ]
    .iter()
    .filter(|(set, _)| *set)
    .map(|(_, s)| *s)
    .collect();
    outln!(
        "  data_buffer_alignment {}{}{}",
        h.data_buffer_alignment,
        if flags.is_empty() { "" } else { ", " },
        flags.join(", ")
    );
    // The totals come first: one pass over the tensors, each dropped once counted.
    let mut totals = Totals::default();
    for (entry, descriptor) in file.descriptors() {
        totals.add(&listed(&entry, &descriptor));
    }
    outln!("  {}", summary_line(&totals));
    if let Some(report) = checked {
        print_violations(report);
    }
    if !args.tensors_only {
        print_kv(file, args, max_array);
    }
    if !args.metadata_only {
        let shown = || {
            file.descriptors()
                .filter(|(entry, _)| shown_name(args, entry.name()))
                .map(|(entry, descriptor)| listed(&entry, &descriptor))
        };
        print_tensor_table(shown, totals.tensors, globs(args).as_deref());
    }
}

/// One tensor of a HRRYFILE as the tensor table and the totals take it.
fn listed<'f>(
    entry: &TensorEntry<'f>,
    descriptor: &Result<&'f TensorDescriptor, hrry::file::Error>,
) -> Listed<'f> {
    let e = entry.index_entry();
    Listed {
        name: entry.name(),
        data_offset: e.data_offset,
        data_length: e.data_length,
        descriptor: descriptor.as_ref().map(|d| *d).map_err(|e| e.to_string()),
    }
}

/// The violations `--permissive` found, for people.
fn print_violations(report: &Report) {
    if report.violations.is_empty() {
        outln!("  no rule is broken");
        return;
    }
    outln!(
        "  {}:",
        plural(
            report.violations.len() as u64,
            "rule violation",
            "rule violations"
        )
    );
    for v in &report.violations {
        outln!(
            "    {} at offset {}: {}",
            v.rule.id,
            v.offset,
            safe(&v.message)
        );
    }
}

/// The `-n` globs as shown in headings, `None` without `-n`.
fn globs(args: &Args) -> Option<String> {
    (!args.names.is_empty()).then(|| safe(&args.names.join(", ")).into_owned())
}

/// The KV entries `--name` lets through, aligned in columns: a first pass
/// measures them, a second prints them, one entry at a time.
fn print_kv(file: &HrryFile<'_>, args: &Args, max_array: Option<usize>) {
    let total = file.kv().len();
    let count = kv_shown(file, args, Some(0)).count();
    let heading = match globs(args) {
        Some(globs) if count < total => {
            outln!(
                "metadata ({count} of {total} entries match -n {globs}){}",
                if count == 0 { "" } else { ":" }
            );
            if count == 0 {
                return;
            }
            false
        }
        _ => true,
    };
    let gguf_types = gguf_value_types(file);
    let type_of = |key: &str, e: &Value| {
        let stored = e["type"].as_str().unwrap_or("?");
        match gguf_types.get(key).and_then(Value::as_str) {
            Some(gguf) if gguf != stored => format!("{} (stored as {stored})", safe(gguf)),
            _ => stored.to_string(),
        }
    };
    print_kv_entries(
        |limit| kv_shown(file, args, limit),
        max_array,
        args.full,
        heading,
        type_of,
    );
}

/// The GGUF type of each key of a file converted from GGUF, from the JSON object
/// `hrry convert` records under `hrry.gguf.value_types` (a HRRYFILE stores every
/// GGUF integer as int64 or uint64): empty for other files or a malformed entry.
fn gguf_value_types(file: &HrryFile<'_>) -> Map<String, Value> {
    file.kv_value(hrry::convert::gguf::GGUF_VALUE_TYPES_KEY)
        .and_then(KvValue::as_str)
        .and_then(|s| serde_json::from_str::<Value>(s).ok())
        .and_then(|v| match v {
            Value::Object(m) => Some(m),
            _ => None,
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn globs() {
        assert!(glob_match("*", ""));
        assert!(glob_match("blk.*.weight", "blk.0.attn.weight"));
        assert!(!glob_match("blk.*.weight", "blk.0.attn.bias"));
        assert!(glob_match("a?c", "abc"));
        assert!(!glob_match("a?c", "ac"));
        assert!(glob_match("*a*b*", "xxaxxbxx"));
        assert!(!glob_match("*a*b", "xxbxxa"));
        assert!(glob_match("tokenizer.*", "tokenizer.ggml.tokens"));
        assert!(!glob_match("token", "tokenizer"));
    }
}

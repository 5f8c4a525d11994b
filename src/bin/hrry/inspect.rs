//! `hrry inspect`: what a file holds, for people (aligned tables, long values cut,
//! untrusted text escaped) or for tools (`--json`, described by
//! `schema/inspect.schema.json`).

use std::path::PathBuf;

use hrry::file::{Check, HrryFile, OpenOptions};
use hrry::report::{
    element_json, inspect_head_json, kv_json_limited, kv_type_name, tensors_json, Summary,
    INSPECT_FORMAT_VERSION,
};
use hrry::schema::KvValue;
use serde_json::{json, Map, Value};

use crate::json_stream::PrettyWriter;
use crate::text::{self, cut, plural, safe, width};
use crate::{is_dash, Failure, Outcome};

/// KV array elements shown by default in human output.
const SHOWN_ARRAY_ELEMENTS: usize = 8;
/// KV array elements shown by default in JSON output (then `"truncated": true`;
/// `--full` shows them all).
const JSON_ARRAY_ELEMENTS: usize = 1 << 20;
/// Characters of a string value shown by default in human output.
const SHOWN_STRING_CHARS: usize = 80;
/// Widest name column; longer names go on a line of their own.
const NAME_COLUMN_MAX: usize = 48;

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
    let whole = if is_dash(&args.file) {
        Some(crate::read_input(&args.file).map_err(Failure)?)
    } else if let Some(source) = &remote {
        let head = crate::remote::head(&**source, 8).map_err(Failure)?;
        if hrry::holo::is_holo(&head) || crate::stream::is_stream(&head) {
            Some(crate::remote::download(source).map_err(Failure)?)
        } else {
            None
        }
    } else {
        None
    };
    let holo = match (&whole, &remote) {
        (Some(bytes), _) => hrry::holo::is_holo(bytes),
        (None, Some(_)) => false,
        (None, None) => crate::holo::is_holo_file(&args.file)?,
    };
    if holo {
        return crate::holo::inspect(&args.file, whole.as_deref(), args.json);
    }
    let stream = match (&whole, &remote) {
        (Some(bytes), _) => crate::stream::is_stream(bytes),
        (None, Some(_)) => false,
        (None, None) => crate::stream::is_stream_file(&args.file)?,
    };
    if stream {
        return crate::stream::inspect(&args.file, whole.as_deref(), args.json);
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
            .check(Check::Frame)
            .policy(args.policy.into())
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
    let violations = if args.permissive {
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
        Some(hrry::report::validate_json(&name, "hrryfile", &report)["violations"].clone())
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
        Err(e) => return unreadable(&args, &name, &e, violations),
    };
    let max_array = match (args.max_array, args.full) {
        (Some(n), _) => Some(n),
        (None, true) => None,
        (None, false) if args.json => Some(JSON_ARRAY_ELEMENTS),
        (None, false) => Some(SHOWN_ARRAY_ELEMENTS),
    };
    // With --permissive, a file that breaks rules is still an invalid input.
    let broken = violations
        .as_ref()
        .and_then(Value::as_array)
        .is_some_and(|list| !list.is_empty());
    // Both renderings write as they walk the file: one tensor, one KV value at a
    // time, never the whole document.
    if args.json {
        write_json(&file, &args, &name, max_array, violations.as_ref());
    } else {
        print_human(&file, &args, max_array, violations.as_ref());
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
    violations: Option<&Value>,
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
    // The summary covers the whole file, whatever is shown.
    let mut summary = Summary::default();
    if !args.metadata_only {
        w.open(Some("tensors"), '[');
    }
    for t in tensors_json(file) {
        summary.add(&t);
        if !args.metadata_only && shown_name(args, t["name"].as_str().unwrap_or_default()) {
            w.item(&t);
        }
    }
    if !args.metadata_only {
        w.close();
    }
    w.field("summary", &summary.json());
    w.field("file", &json!(name));
    if let Some(violations) = violations {
        w.field("violations", violations);
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
    violations: Option<Value>,
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
        if let Some(violations) = &violations {
            v["violations"] = violations.clone();
        }
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else if let Some(violations) = &violations {
        print_violations(violations);
    }
    // A hint where one helps: bytes that are not a HRRYFILE were described
    // already, and what a truncated file lacks no option can show.
    let not_hrryfile = e.rule().is_some_and(|r| r.id == "HF-HDR-001");
    let truncated =
        e.to_string().contains("truncated") || e.rule().is_some_and(|r| r.id == "HF-FIL-001");
    if violations.is_none() && truncated && !not_hrryfile {
        eprintln!(
            "hrry: {} looks cut short (an interrupted download or copy?): fetch or copy it \
             again; `hrry validate` lists every rule it breaks",
            text::path(&args.file)
        );
    } else if violations.is_none() && e.rule().is_some() && !not_hrryfile {
        eprintln!(
            "hrry: --permissive shows what can be read of {} and every rule it breaks",
            text::path(&args.file)
        );
    }
    Ok(Outcome::Invalid)
}

/// The `--json` document for a file that cannot be opened (exit 1) or read (exit
/// 2): why, the format recognised, the rule it breaks and where, when known.
pub fn error_json(
    name: &str,
    format: Option<&str>,
    error: &str,
    rule: Option<&str>,
    offset: Option<u64>,
) -> Value {
    json!({
        "format_version": INSPECT_FORMAT_VERSION,
        "file": name,
        "format": format,
        "error": error,
        "rule": rule,
        "offset": offset,
    })
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
    violations: Option<&Value>,
) {
    let head = inspect_head_json(file);
    let h = &head["header"];
    outln!(
        "{}: HRRYFILE {}.{}, {} bytes",
        text::path(&args.file),
        h["container_version_major"],
        h["container_version_minor"],
        head["file_size"]
    );
    let flags: Vec<&str> = [
        ("sorted_index", "sorted index"),
        ("has_index_crc32c", "index CRC-32C"),
        ("has_kv_metadata", "KV flag"),
    ]
    .iter()
    .filter(|(k, _)| h[*k] == true)
    .map(|(_, s)| *s)
    .collect();
    outln!(
        "  data_buffer_alignment {}{}{}",
        h["data_buffer_alignment"],
        if flags.is_empty() { "" } else { ", " },
        flags.join(", ")
    );
    // The summary comes first: one pass over the tensors, each dropped once counted.
    let mut summary = Summary::default();
    for t in tensors_json(file) {
        summary.add(&t);
    }
    let summary = summary.json();
    outln!("  {}", summary_line(&summary));
    if let Some(violations) = violations {
        print_violations(violations);
    }
    if !args.tensors_only {
        print_kv(file, args, max_array);
    }
    if !args.metadata_only {
        let total = summary["tensors"].as_u64().unwrap_or(0);
        let shown = || {
            tensors_json(file).filter(|t| shown_name(args, t["name"].as_str().unwrap_or_default()))
        };
        print_tensor_table(shown, total, globs(args).as_deref());
    }
}

fn print_violations(violations: &Value) {
    let list = violations.as_array().map(Vec::as_slice).unwrap_or_default();
    if list.is_empty() {
        outln!("  no rule is broken");
        return;
    }
    outln!(
        "  {}:",
        plural(list.len() as u64, "rule violation", "rule violations")
    );
    for x in list {
        outln!(
            "    {} at offset {}: {}",
            x["rule"].as_str().unwrap_or("?"),
            x["offset"],
            safe(x["message"].as_str().unwrap_or_default())
        );
    }
}

/// "3 tensors, 1234 parameters, 4.5 KiB of data: float32 ×2, int4 per-block affine ×1"
pub fn summary_line(s: &Value) -> String {
    let types: Vec<String> = s["by_type"]
        .as_object()
        .map(|m| m.iter().map(|(k, n)| format!("{} ×{n}", safe(k))).collect())
        .unwrap_or_default();
    format!(
        "{}, {} parameters, {} of data{}{}",
        plural(s["tensors"].as_u64().unwrap_or(0), "tensor", "tensors"),
        s["parameters"]
            .as_u64()
            .map_or("?".to_string(), |p| p.to_string()),
        human_bytes(s["data_bytes"].as_u64().unwrap_or(0)),
        if types.is_empty() { "" } else { ": " },
        types.join(", ")
    )
}

/// Bytes with a binary unit (`4.5 KiB`), exact below 1 KiB.
fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if n < 1024 {
        return format!("{n} bytes");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
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

/// KV entries shown as JSON values (a safetensors or GGUF file's metadata), each
/// key's type taken from `source_types` when given instead of the stored type.
pub fn print_kv_typed(
    kv: &Map<String, Value>,
    full: bool,
    heading: bool,
    source_types: Option<&Map<String, Value>>,
) {
    let type_of = |key: &str, e: &Value| {
        source_types
            .and_then(|t| t.get(key))
            .and_then(Value::as_str)
            .map_or_else(
                || e["type"].as_str().unwrap_or("?").to_string(),
                |ty| safe(ty).into_owned(),
            )
    };
    print_kv_entries(
        |_| kv.iter().map(|(k, v)| (k.clone(), v.clone())),
        None,
        full,
        heading,
        type_of,
    );
}

/// Prints the KV entries `entries(limit)` yields (arrays kept to `limit`
/// elements), under a `metadata (N entries):` heading when `heading`, in aligned
/// columns: a first pass measures them, a second prints them.
fn print_kv_entries<I: Iterator<Item = (String, Value)>>(
    entries: impl Fn(Option<usize>) -> I,
    max_array: Option<usize>,
    full: bool,
    heading: bool,
    type_of: impl Fn(&str, &Value) -> String,
) {
    let count = entries(Some(0)).count();
    if count == 0 {
        outln!("metadata: none");
        return;
    }
    if heading {
        outln!("metadata ({}):", plural(count as u64, "entry", "entries"));
    }
    let (mut type_width, mut key_width) = (0, 0);
    for (k, e) in entries(Some(0)) {
        type_width = type_width.max(type_of(&k, &e).chars().count());
        let w = width(&k);
        if w <= NAME_COLUMN_MAX {
            key_width = key_width.max(w);
        }
    }
    for (key, e) in entries(max_array) {
        let ty = type_of(&key, &e);
        let value = kv_value(&e, full);
        let key = safe(&key);
        if width(&key) > NAME_COLUMN_MAX {
            outln!("  {key}");
            outln!("  {:key_width$}  {ty:<type_width$}  {value}", "");
        } else {
            outln!("  {key:key_width$}  {ty:<type_width$}  {value}");
        }
    }
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

/// One KV value for people: strings quoted and cut, arrays as `N × type [a, b, …]`.
fn kv_value(e: &Value, full: bool) -> String {
    let limit = if full { usize::MAX } else { SHOWN_STRING_CHARS };
    let scalar = |x: &Value, limit: usize| match x {
        Value::String(s) => text::quoted(s, limit),
        other => safe(&other.to_string()).into_owned(),
    };
    match e["type"].as_str() {
        Some("array") => {
            let shown = e["value"].as_array().map(Vec::as_slice).unwrap_or_default();
            let count = e["count"].as_u64().unwrap_or(shown.len() as u64);
            let element_limit = if full { usize::MAX } else { 40 };
            let mut items: Vec<String> = shown.iter().map(|x| scalar(x, element_limit)).collect();
            if (shown.len() as u64) < count {
                items.push(format!("… {} more", count - shown.len() as u64));
            }
            format!(
                "{count} × {} [{}]",
                e["element_type"].as_str().unwrap_or("?"),
                items.join(", ")
            )
        }
        // Bytes are hex text: cut like a string, unquoted.
        Some("bytes") => cut(e["value"].as_str().unwrap_or_default(), limit),
        _ => scalar(&e["value"], limit),
    }
}

/// The tensor table of an inspect document (files and bare streams alike).
pub fn print_tensors(tensors: &[Value], total: u64) {
    print_tensor_table(|| tensors.iter().cloned(), total, None);
}

/// The tensor table of the tensors `tensors()` yields (out of `total`; `globs`
/// the `-n` filter they passed), one tensor at a time.
fn print_tensor_table<I: Iterator<Item = Value>>(
    tensors: impl Fn() -> I,
    total: u64,
    globs: Option<&str>,
) {
    let shown = tensors().count() as u64;
    match globs {
        Some(globs) if shown < total => outln!(
            "tensors ({shown} of {total} match -n {globs}){}",
            if shown == 0 { "" } else { ":" }
        ),
        _ if shown == total => outln!("tensors ({total}):"),
        _ => outln!("tensors ({shown} of {total} shown):"),
    }
    print_table_with(
        &[
            "NAME", "TYPE", "SHAPE", "ELEMENTS", "LAYOUT", "BYTES", "OFFSET",
        ],
        &[3, 5, 6],
        || tensors().map(|t| (tensor_row(&t).to_vec(), tensor_details(&t))),
    );
}

/// Prints an aligned table: `header`, then `rows` (cells already escaped), the
/// columns numbered in `right` aligned right (numbers), the others left.
pub fn print_table(header: &[&str], rows: &[Vec<String>], right: &[usize]) {
    print_table_with(header, right, || {
        rows.iter().map(|r| (r.clone(), Vec::new()))
    });
}

/// [`print_table`] over the rows `rows()` yields, each with the detail lines to
/// print under it: a first pass measures the columns, a second prints the rows,
/// one at a time. A first cell wider than [`NAME_COLUMN_MAX`] goes on a line of
/// its own.
fn print_table_with<I: Iterator<Item = (Vec<String>, Vec<String>)>>(
    header: &[&str],
    right: &[usize],
    rows: impl Fn() -> I,
) {
    let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    let mut widths = vec![0usize; header.len()];
    let mut measure = |row: &[String]| {
        for (i, cell) in row.iter().enumerate().take(widths.len()) {
            let cw = width(cell);
            // A very long name does not widen the column; it gets its own line.
            if i > 0 || cw <= NAME_COLUMN_MAX {
                widths[i] = widths[i].max(cw);
            }
        }
    };
    measure(&header);
    let mut any = false;
    for (row, _) in rows() {
        measure(&row);
        any = true;
    }
    if !any {
        return;
    }
    let line = |row: &[String]| {
        let mut s = String::from(" ");
        for (i, (cell, &w)) in row.iter().zip(&widths).enumerate() {
            if right.contains(&i) {
                s.push_str(&format!(" {cell:>w$}"));
            } else {
                s.push_str(&format!(" {cell:<w$}"));
            }
        }
        s.trim_end().to_string()
    };
    outln!("{}", line(&header));
    for (mut row, details) in rows() {
        if row
            .first()
            .is_some_and(|name| width(name) > NAME_COLUMN_MAX)
        {
            outln!("  {}", row[0]);
            row[0] = String::new();
        }
        outln!("{}", line(&row));
        for detail in details {
            outln!("      {detail}");
        }
    }
}

/// The table cells of one tensor (already escaped).
fn tensor_row(t: &Value) -> [String; 7] {
    let name = safe(t["name"].as_str().unwrap_or("?")).into_owned();
    if t.get("error").is_some() {
        return [
            name,
            "?".into(),
            String::new(),
            String::new(),
            String::new(),
            t["data_length"].to_string(),
            t["data_offset"].to_string(),
        ];
    }
    let shape = t["shape"]
        .as_array()
        .map(|d| {
            let dims: Vec<String> = d.iter().map(Value::to_string).collect();
            format!("[{}]", dims.join(", "))
        })
        .unwrap_or_default();
    [
        name,
        t["element_type"].as_str().unwrap_or("?").to_string(),
        shape,
        t["element_count"]
            .as_u64()
            .map_or("?".into(), |n| n.to_string()),
        t["layout_name"].as_str().unwrap_or("?").to_string(),
        t["data_length"].to_string(),
        t["data_offset"].to_string(),
    ]
}

/// Lines under a tensor's row: a read error, its quantization, layout fields.
fn tensor_details(t: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(e) = t["error"].as_str() {
        out.push(format!("unreadable descriptor: {}", safe(e)));
        return out;
    }
    let q = &t["quantization"];
    if q.is_object() {
        out.push(quantization_line(q));
    }
    if let Some(fields) = t["layout"].as_object().filter(|m| !m.is_empty()) {
        out.push(format!(
            "layout {}",
            safe(&Value::Object(fields.clone()).to_string())
        ));
    }
    let o = &t["oversized_buffer"];
    if o.is_object() {
        let mut line = format!(
            "! oversized buffer (TD-BUF-014): {} bytes where {} are needed",
            o["byte_size"], o["needed"]
        );
        if o["one_byte_per_element"].as_bool() == Some(true) {
            line.push_str(
                "; looks stored one byte per element, but readers unpack it as packed bits",
            );
        }
        out.push(line);
    }
    out
}

/// "per-block affine v1: int4, axis 1, block 32, float16 scales, symmetric; 4.5
/// bits/weight"
fn quantization_line(q: &Value) -> String {
    let mut parts = vec![q["storage_type"].as_str().unwrap_or("?").to_string()];
    if let Some(axis) = q["axis"].as_u64() {
        parts.push(format!("axis {axis}"));
    }
    if let Some(block) = q["block_size"].as_u64() {
        parts.push(format!("block {block}"));
    }
    if let Some(scale) = q["scale"].as_f64() {
        parts.push(format!("scale {scale}"));
    }
    if let Some(scale_type) = q["scale_type"].as_str() {
        parts.push(format!("{scale_type} scales"));
    }
    match (q["symmetric"].as_bool(), &q["zero_point"]) {
        (Some(true), _) => parts.push("symmetric".into()),
        (Some(false), Value::Number(z)) => parts.push(format!("zero point {z}")),
        (Some(false), _) => parts.push("zero points".into()),
        (None, _) => {}
    }
    let version = q["scheme_version"]
        .as_u64()
        .map_or(String::new(), |v| format!(" v{v}"));
    let bits = q["bits_per_weight"].as_f64().map_or(String::new(), |b| {
        let b = format!("{b:.3}");
        format!(
            "; {} bits/weight",
            b.trim_end_matches('0').trim_end_matches('.')
        )
    });
    format!(
        "{}{version}: {}{bits}",
        q["scheme"].as_str().unwrap_or("?"),
        parts.join(", ")
    )
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

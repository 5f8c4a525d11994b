//! `hrry inspect`: what a file holds, for people (aligned tables, long values cut,
//! untrusted text escaped) or for tools (`--json`, described by
//! `schema/inspect.schema.json`).

use std::path::PathBuf;

use hrry::file::{Check, OpenOptions};
use hrry::report::{InspectOptions, INSPECT_FORMAT_VERSION};
use serde_json::{json, Map, Value};

use crate::text::{self, cut, plural, safe, width};
use crate::{is_dash, Failure, Outcome};

/// KV array elements shown by default in human output.
const SHOWN_ARRAY_ELEMENTS: usize = 8;
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
    /// Print JSON (described by schema/inspect.schema.json). KV values are complete
    /// unless --max-array is given.
    #[arg(long)]
    json: bool,
    /// Show every KV array element and whole strings (human output cuts them).
    #[arg(long, conflicts_with = "max_array")]
    full: bool,
    /// Show at most N elements of each KV array (human default: 8; JSON: all).
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
    /// Show what can be read of a file that breaks rules (a bad index CRC, say),
    /// with every violation strict validation finds.
    #[arg(long, alias = "force")]
    permissive: bool,
}

pub fn run(args: Args) -> Result<Outcome, Failure> {
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
    let open = if args.permissive {
        OpenOptions::new().allow_all()
    } else {
        OpenOptions::new().check(Check::Frame)
    };
    let opened = match (&whole, &remote) {
        (Some(bytes), _) => open.open_bytes(bytes),
        (None, Some(source)) => open.open_source(source.clone()),
        (None, None) => open.open(&args.file),
    };
    let name = crate::remote::shown(&args.file);
    // With --permissive, say what is wrong: every violation of strict validation.
    let violations = if args.permissive {
        // The mapped file (or the file itself, read where the rules look), not a
        // copy of it.
        let options = hrry::validate::Options::default();
        let cannot_read =
            |e: std::io::Error| Failure(format!("cannot read {}: {e}", text::path(&args.file)));
        let report = match (&whole, &remote, &opened) {
            (Some(bytes), _, _) => hrry::Format::HrryFile.validate_bytes(bytes, &options),
            (None, Some(source), _) => hrry::Format::HrryFile
                .validate_source(&**source, &options)
                .map_err(|e| Failure(crate::remote::cannot_read(source.url(), &e)))?,
            (None, None, Ok(file)) => {
                hrry::Format::HrryFile.validate_bytes(file.bytes().unwrap_or_default(), &options)
            }
            (None, None, Err(_)) => hrry::source::FileSource::open(&args.file)
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
    let options = InspectOptions {
        max_array: match (args.max_array, args.full || args.json) {
            (Some(n), _) => Some(n),
            (None, true) => None,
            (None, false) => Some(SHOWN_ARRAY_ELEMENTS),
        },
    };
    let mut v = hrry::report::inspect_json_with(&file, &options);
    let kv_total = v["kv"].as_object().map_or(0, Map::len);
    filter(&mut v, &args);
    let m = v.as_object_mut().expect("an object");
    m.insert("file".into(), json!(name));
    if let Some(violations) = violations {
        m.insert("violations".into(), violations);
    }
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print_human(&args, &v, kv_total);
    }
    // With --permissive, a file that breaks rules is still an invalid input.
    let broken = v
        .get("violations")
        .and_then(Value::as_array)
        .is_some_and(|list| !list.is_empty());
    Ok(if broken {
        Outcome::Invalid
    } else {
        Outcome::Ok
    })
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

/// Applies `--tensors-only`, `--metadata-only` and `--name` to an inspect document.
/// The summary still covers the whole file.
fn filter(v: &mut Value, args: &Args) {
    let m = v.as_object_mut().expect("an object");
    if args.tensors_only {
        m.remove("kv");
    }
    if args.metadata_only {
        m.remove("tensors");
    }
    if args.names.is_empty() {
        return;
    }
    let keep = |name: &str| args.names.iter().any(|g| glob_match(g, name));
    if let Some(Value::Object(kv)) = m.get_mut("kv") {
        kv.retain(|k, _| keep(k));
    }
    if let Some(Value::Array(tensors)) = m.get_mut("tensors") {
        tensors.retain(|t| keep(t["name"].as_str().unwrap_or_default()));
    }
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

/// Prints an inspect document for people; `kv_total` is the number of KV entries
/// before `--name` filtered them.
fn print_human(args: &Args, v: &Value, kv_total: usize) {
    let h = &v["header"];
    outln!(
        "{}: HRRYFILE {}.{}, {} bytes",
        text::path(&args.file),
        h["container_version_major"],
        h["container_version_minor"],
        v["file_size"]
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
    outln!("  {}", summary_line(&v["summary"]));
    if let Some(violations) = v.get("violations") {
        print_violations(violations);
    }
    let matching = if args.names.is_empty() {
        None
    } else {
        Some(args.names.join(", "))
    };
    if let Some(kv) = v["kv"].as_object() {
        match &matching {
            Some(globs) if kv.len() < kv_total => outln!(
                "metadata ({} of {kv_total} entries match -n {}){}",
                kv.len(),
                safe(globs),
                if kv.is_empty() { "" } else { ":" }
            ),
            _ => {}
        }
        if !kv.is_empty() || kv_total == 0 || matching.is_none() {
            print_kv(kv, args.full, matching.is_none() || kv.len() == kv_total);
        }
    }
    if let Some(tensors) = v["tensors"].as_array() {
        let total = v["summary"]["tensors"].as_u64().unwrap_or(0);
        if let (Some(globs), true) = (&matching, (tensors.len() as u64) < total) {
            outln!(
                "tensors ({} of {total} match -n {}){}",
                tensors.len(),
                safe(globs),
                if tensors.is_empty() { "" } else { ":" }
            );
            print_tensor_table(tensors);
        } else {
            print_tensors(tensors, total);
        }
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

/// Prints KV entries, under a `metadata (N entries):` heading when `heading`
/// (a filtered list has its own).
fn print_kv(kv: &Map<String, Value>, full: bool, heading: bool) {
    print_kv_typed(kv, full, heading, None);
}

/// [`print_kv`], with each key's type taken from `source_types` when given (a
/// safetensors or GGUF file's own types) instead of the stored KV type.
pub fn print_kv_typed(
    kv: &Map<String, Value>,
    full: bool,
    heading: bool,
    source_types: Option<&Map<String, Value>>,
) {
    if kv.is_empty() {
        outln!("metadata: none");
        return;
    }
    if heading {
        outln!(
            "metadata ({}):",
            plural(kv.len() as u64, "entry", "entries")
        );
    }
    let gguf_types = gguf_value_types(kv);
    let type_of = |key: &str, e: &Value| {
        let stored = e["type"].as_str().unwrap_or("?");
        if let Some(ty) = source_types
            .and_then(|t| t.get(key))
            .and_then(Value::as_str)
        {
            return safe(ty).into_owned();
        }
        match gguf_types.get(key).and_then(Value::as_str) {
            Some(gguf) if gguf != stored => format!("{} (stored as {stored})", safe(gguf)),
            _ => stored.to_string(),
        }
    };
    let type_width = kv
        .iter()
        .map(|(k, e)| type_of(k, e).chars().count())
        .max()
        .unwrap_or(0);
    let key_width = kv
        .keys()
        .map(|k| width(k))
        .filter(|&w| w <= NAME_COLUMN_MAX)
        .max()
        .unwrap_or(0);
    for (key, e) in kv {
        let ty = type_of(key, e);
        let value = kv_value(e, full);
        let key = safe(key);
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
fn gguf_value_types(kv: &Map<String, Value>) -> Map<String, Value> {
    kv.get(hrry::convert::gguf::GGUF_VALUE_TYPES_KEY)
        .and_then(|e| e["value"].as_str())
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
    if tensors.len() as u64 == total {
        outln!("tensors ({total}):");
    } else {
        outln!("tensors ({} of {total} shown):", tensors.len());
    }
    print_tensor_table(tensors);
}

/// The rows of [`print_tensors`], without its heading.
fn print_tensor_table(tensors: &[Value]) {
    let rows: Vec<Vec<String>> = tensors.iter().map(|t| tensor_row(t).to_vec()).collect();
    print_table_with(
        &[
            "NAME", "TYPE", "SHAPE", "ELEMENTS", "LAYOUT", "BYTES", "OFFSET",
        ],
        &rows,
        &[3, 5, 6],
        |i| tensor_details(&tensors[i]),
    );
}

/// Prints an aligned table: `header`, then `rows` (cells already escaped), the
/// columns numbered in `right` aligned right (numbers), the others left. A first
/// cell wider than [`NAME_COLUMN_MAX`] goes on a line of its own.
pub fn print_table(header: &[&str], rows: &[Vec<String>], right: &[usize]) {
    print_table_with(header, rows, right, |_| Vec::new());
}

/// [`print_table`] with `details(i)`'s lines printed under row `i`.
fn print_table_with(
    header: &[&str],
    rows: &[Vec<String>],
    right: &[usize],
    details: impl Fn(usize) -> Vec<String>,
) {
    if rows.is_empty() {
        return;
    }
    let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    let mut widths = vec![0usize; header.len()];
    for row in std::iter::once(&header).chain(rows) {
        for (i, cell) in row.iter().enumerate().take(widths.len()) {
            let cw = width(cell);
            // A very long name does not widen the column; it gets its own line.
            if i > 0 || cw <= NAME_COLUMN_MAX {
                widths[i] = widths[i].max(cw);
            }
        }
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
    for (i, row) in rows.iter().enumerate() {
        let mut row = row.clone();
        if row
            .first()
            .is_some_and(|name| width(name) > NAME_COLUMN_MAX)
        {
            outln!("  {}", row[0]);
            row[0] = String::new();
        }
        outln!("{}", line(&row));
        for detail in details(i) {
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

//! `hrry export`: tensors as NumPy `.npy` arrays — one tensor, every tensor of a
//! file (`--all DIR`, with an index), or a quantized tensor's stored codes and
//! parameters (`--raw`).

use std::path::{Path, PathBuf};

use std::cell::Cell;

use hrry::export::{export_npy, export_raw, ExportOptions, RawPart};
use hrry::file::{HrryFile, OutputError};
use serde_json::{json, Value};

use crate::{text, Failure, Outcome};

/// Arguments of `hrry export`.
#[derive(clap::Args)]
#[command(after_long_help = concat!("\
Types NumPy holds keep their bits (float16 as <f2, bool as |b1, ...). bfloat16 and
the 8-, 6- and 4-bit floats, which NumPy has no dtype for, are widened exactly to
float32; sub-byte integers to int8 / uint8; float128 narrows to float64 (round to
nearest even); quantized tensors are dequantized to float32 (--raw keeps the codes).

Examples:
  hrry export model.hrry tok_embd.weight -o emb.npy
  hrry export model.hrry tok_embd.weight --raw -o emb.npy
      writes emb.codes.npy, emb.scales.npy (and emb.zero_points.npy)
  hrry export model.hrry --all out/
      writes one .npy per tensor into out/ and out/index.json, which maps each
      tensor name to its file(s), shape and type (file names are the tensor names
      made safe: no '/', control or reserved characters, at most 200 bytes)

", see_exit_codes!()))]
pub struct Args {
    /// The HRRYFILE holding the tensor(s).
    file: PathBuf,
    /// The tensor's name (not with --all).
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    tensor: Option<String>,
    /// Where to write the array (`-` for standard output). With --raw, the parts go
    /// to OUT with `.codes`, `.scales`, `.zero_points` before its extension.
    #[arg(
        short = 'o',
        long = "output",
        value_name = "OUT.npy",
        required_unless_present = "all",
        conflicts_with = "all"
    )]
    output: Option<PathBuf>,
    /// Export every tensor into this directory (created if missing), plus index.json.
    #[arg(long, value_name = "DIR")]
    all: Option<PathBuf>,
    /// For quantized tensors, write the stored codes and each parameter buffer
    /// (scales, zero points) as separate arrays instead of dequantized values.
    #[arg(long)]
    raw: bool,
    /// Largest tensor exported, in bytes of its elements as written: also the most
    /// a sparse, composite or quantized tensor assembles in memory. By default the
    /// whole export (every tensor of --all together) may write 64 MiB plus 8 times
    /// the input's size, at most 16 GiB a tensor: a small file whose tensors repeat
    /// their bytes (zero strides) cannot fill the disk. Giving BYTES lifts that
    /// bound, each tensor then being capped at BYTES.
    #[arg(long, value_name = "BYTES")]
    max_bytes: Option<u64>,
    #[command(flatten)]
    pub net: crate::remote::NetArgs,
    /// Whether hrry's hardening rules refuse the file too (`hardened`), or only the
    /// spec's rules and resource limits (`spec`).
    #[arg(long, value_enum, value_name = "POLICY", default_value = "hardened")]
    policy: crate::PolicyArg,
}

/// What the default export may write: a fixed allowance plus a multiple of the
/// input's size (the widest export, 4-bit codes to float32, is 8 times its input).
fn default_budget(input_size: u64) -> u64 {
    const ALLOWANCE: u64 = 64 << 20;
    const PER_INPUT_BYTE: u64 = 8;
    ALLOWANCE.saturating_add(input_size.saturating_mul(PER_INPUT_BYTE))
}

/// What is left to write: `None` when the user set --max-bytes (no total).
struct Budget {
    left: Option<u64>,
    per_tensor: u64,
}

impl Budget {
    fn new(args: &Args, file: &HrryFile<'_>) -> Budget {
        match args.max_bytes {
            Some(n) => Budget {
                left: None,
                per_tensor: n,
            },
            None => Budget {
                left: Some(default_budget(file.size())),
                per_tensor: ExportOptions::default().max_bytes,
            },
        }
    }

    /// The options for the next tensor.
    fn options(&self, options: &ExportOptions) -> ExportOptions {
        ExportOptions {
            max_bytes: self
                .left
                .map_or(self.per_tensor, |l| l.min(self.per_tensor)),
            ..*options
        }
    }

    /// Counts what exporting tensor `name` wrote.
    fn charge(&mut self, file: &HrryFile<'_>, name: &str) {
        let written = file
            .find(name)
            .and_then(|e| file.descriptor(e).ok())
            .and_then(|d| hrry::export::row_major_len(d).ok())
            .unwrap_or(0);
        if let Some(left) = &mut self.left {
            *left = left.saturating_sub(written);
        }
    }

    /// What to say after a tensor was refused for its size.
    fn hint(&self) -> &'static str {
        match self.left {
            Some(_) => " (the default bound is 64 MiB plus 8 times the input's size; --max-bytes BYTES raises it)",
            None => " (--max-bytes)",
        }
    }
}

/// The message for a tensor that could not be exported, with the --max-bytes hint
/// when it was too large.
fn tensor_message(e: &hrry::Error, budget: &Budget) -> String {
    let hint = match e {
        hrry::Error::Unsupported(m) if m.contains("exceeds the limit") => budget.hint(),
        _ => "",
    };
    format!("{e}{hint}")
}

pub fn run(args: Args) -> Result<Outcome, Failure> {
    let Some(file) = crate::open_hrry(&args.file, args.policy)? else {
        return Ok(Outcome::Invalid);
    };
    let mut budget = Budget::new(&args, &file);
    let options = ExportOptions::default();
    if let Some(dir) = &args.all {
        return export_all(&args, &file, dir, &options, &mut budget);
    }
    let options = budget.options(&options);
    let (Some(tensor), Some(output)) = (&args.tensor, &args.output) else {
        return Err(Failure(
            "give a tensor name and -o OUT.npy, or --all DIR".into(),
        ));
    };
    let quantized = args.raw && is_quantized(&file, tensor);
    if args.raw && !quantized && file.find(tensor).is_some() {
        eprintln!(
            "hrry: note: {:?} is not quantized; writing its values",
            text::safe(tensor)
        );
    }
    if quantized && crate::is_dash(output) {
        return Err(Failure(
            "--raw writes several files, so -o - cannot be used".into(),
        ));
    }
    let result = if quantized {
        write_raw(&args, &file, tensor, output, &options).map(|_| ())
    } else {
        write_values(&args, &file, tensor, output, &options)
    };
    match result {
        Ok(()) => Ok(Outcome::Ok),
        Err(Failed::Output(e)) => Err(crate::output_failure(e)),
        Err(Failed::Folder(failure)) => Err(failure),
        Err(Failed::Tensor(hrry::Error::Usage(m))) => {
            Err(Failure(format!("{}: {m}", text::path(&args.file))))
        }
        // The tensor could not be read (a remote file's fetch failed): exit 2.
        Err(Failed::Tensor(hrry::Error::Io(e))) => Err(Failure(format!(
            "cannot read {}: {tensor}: {e}",
            text::path(&args.file)
        ))),
        Err(Failed::Tensor(e)) => {
            eprintln!(
                "{}: {}: {}",
                text::path(&args.file),
                text::safe(tensor),
                text::safe(&tensor_message(&e, &budget))
            );
            Ok(Outcome::Invalid)
        }
    }
}

/// Why one export failed: the output or its folder (exit 2), or the tensor (exit 1).
enum Failed {
    Output(OutputError),
    Folder(Failure),
    Tensor(hrry::Error),
}

/// A sink that notes whether a write to it failed, so that an I/O error of an
/// export is told apart: the output's (exit 2, naming the output) or the input's.
struct NoteFailure<'a, W> {
    inner: W,
    failed: &'a Cell<bool>,
}

impl<W: std::io::Write> std::io::Write for NoteFailure<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let r = self.inner.write(buf);
        self.failed.set(self.failed.get() || r.is_err());
        r
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let r = self.inner.flush();
        self.failed.set(self.failed.get() || r.is_err());
        r
    }
}

impl From<OutputError> for Failed {
    fn from(e: OutputError) -> Self {
        Failed::Output(e)
    }
}

fn is_quantized(file: &HrryFile<'_>, name: &str) -> bool {
    file.find(name)
        .and_then(|e| file.descriptor(e).ok())
        .is_some_and(|d| d.quantization.is_some())
}

/// An export error, with a write failure (`wrote_badly`: a write to the output
/// failed) named after `path`.
fn failed(path: &Path, e: hrry::Error, wrote_badly: bool) -> Failed {
    match e {
        hrry::Error::Io(source) if wrote_badly => Failed::Output(OutputError::Io {
            path: path.to_path_buf(),
            source,
        }),
        e => Failed::Tensor(e),
    }
}

/// Writes tensor `name` (dequantized when quantized) to `output`.
fn write_values(
    args: &Args,
    file: &HrryFile<'_>,
    name: &str,
    output: &Path,
    options: &ExportOptions,
) -> Result<(), Failed> {
    crate::output_folder(output).map_err(Failed::Folder)?;
    let out = crate::output::create(output, &[&args.file])?;
    let failed_write = Cell::new(false);
    let sink = NoteFailure {
        inner: out,
        failed: &failed_write,
    };
    let sink =
        export_npy(file, name, sink, options).map_err(|e| failed(output, e, failed_write.get()))?;
    Ok(sink.inner.commit()?)
}

/// Writes the stored parts of quantized tensor `name` next to `output`; returns the
/// files written, by part.
fn write_raw(
    args: &Args,
    file: &HrryFile<'_>,
    name: &str,
    output: &Path,
    options: &ExportOptions,
) -> Result<Vec<(RawPart, PathBuf)>, Failed> {
    crate::output_folder(output).map_err(Failed::Folder)?;
    let mut paths = Vec::new();
    let mut open_error = None;
    let failed_write = Cell::new(false);
    let parts = export_raw(
        file,
        name,
        |part| {
            let path = part_path(output, part);
            match crate::output::create(&path, &[&args.file]) {
                Ok(out) => {
                    paths.push((part, path));
                    Ok(NoteFailure {
                        inner: out,
                        failed: &failed_write,
                    })
                }
                Err(e) => {
                    open_error = Some(e);
                    Err(hrry::Error::Unsupported("output".into()))
                }
            }
        },
        options,
    );
    if let Some(e) = open_error {
        return Err(Failed::Output(e));
    }
    let parts = parts.map_err(|e| failed(output, e, failed_write.get()))?;
    // Only once every part is complete does any appear under its name.
    for (_, out) in parts {
        out.inner.commit()?;
    }
    Ok(paths)
}

/// `out.npy` → `out.codes.npy` (the part's name before the extension).
fn part_path(output: &Path, part: RawPart) -> PathBuf {
    let stem = output.file_stem().unwrap_or_default().to_string_lossy();
    let name = match output.extension() {
        Some(ext) => format!("{stem}.{}.{}", part.name(), ext.to_string_lossy()),
        None => format!("{stem}.{}.npy", part.name()),
    };
    output.with_file_name(name)
}

/// `--all DIR`: every tensor into `dir`, and `dir/index.json`. A tensor that cannot
/// be exported is recorded in the index with its error and the export goes on;
/// the exit code is then 1.
fn export_all(
    args: &Args,
    file: &HrryFile<'_>,
    dir: &Path,
    options: &ExportOptions,
    budget: &mut Budget,
) -> Result<Outcome, Failure> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure(format!("cannot create {}: {e}", text::path(dir))))?;
    let mut used = Stems::default();
    let mut entries = Vec::new();
    let mut all_ok = true;
    for entry in file.entries() {
        let name = entry.name();
        let stem = unique_stem(&safe_file_stem(name), &mut used);
        let mut record = json!({ "name": name });
        if let Ok(d) = file.descriptor(entry) {
            record["shape"] = json!(d.shape);
            record["element_type"] = json!(
                hrry::model::ElementType::from_tag(d.type_tag).map_or("unknown", |t| t.name())
            );
        }
        let path = dir.join(format!("{stem}.npy"));
        let options = &budget.options(options);
        let result = if args.raw && is_quantized(file, name) {
            write_raw(args, file, name, &path, options).map(|parts| {
                let files: serde_json::Map<String, Value> = parts
                    .iter()
                    .map(|(part, p)| (part.name().to_string(), json!(file_name(p))))
                    .collect();
                record["files"] = Value::Object(files);
            })
        } else {
            write_values(args, file, name, &path, options).map(|()| {
                budget.charge(file, name);
                record["file"] = json!(file_name(&path))
            })
        };
        match result {
            Ok(()) => {}
            Err(Failed::Output(e)) => return Err(crate::output_failure(e)),
            Err(Failed::Folder(failure)) => return Err(failure),
            Err(Failed::Tensor(hrry::Error::Io(e))) => {
                return Err(Failure(format!(
                    "cannot read {}: {name}: {e}",
                    text::path(&args.file)
                )))
            }
            Err(Failed::Tensor(e)) => {
                all_ok = false;
                let message = tensor_message(&e, budget);
                eprintln!(
                    "{}: {}: {}",
                    text::path(&args.file),
                    text::safe(name),
                    text::safe(&message)
                );
                record["error"] = json!(message);
            }
        }
        entries.push(record);
    }
    let index = json!({
        "format_version": 1,
        "source": crate::remote::shown(&args.file),
        "raw": args.raw,
        "tensors": entries,
    });
    let path = dir.join("index.json");
    let mut out = crate::output::create(&path, &[&args.file]).map_err(crate::output_failure)?;
    serde_json::to_writer_pretty(&mut out, &index).map_err(|e| {
        crate::output_failure(OutputError::Io {
            path: path.clone(),
            source: e.into(),
        })
    })?;
    out.commit().map_err(crate::output_failure)?;
    Ok(if all_ok {
        Outcome::Ok
    } else {
        Outcome::Invalid
    })
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

/// Longest file stem made from a tensor name, in bytes (room is left for the part
/// and extension suffixes within the usual 255-byte limit).
const MAX_STEM_BYTES: usize = 200;

/// A tensor name made safe as a file name on every common file system: path
/// separators, control characters and characters Windows reserves become `_`; a
/// leading `.` (hidden files, `.`/`..`) is escaped; an empty name becomes `_`;
/// long names are cut on a character boundary.
fn safe_file_stem(name: &str) -> String {
    let mut stem: String = name
        .chars()
        .map(|c| match c {
            '/' | '\\' | ':' | '*' | '?' | '"' | '<' | '>' | '|' => '_',
            c if c.is_control() => '_',
            c => c,
        })
        .collect();
    if stem.starts_with('.') || stem.is_empty() {
        stem.insert(0, '_');
    }
    if stem.len() > MAX_STEM_BYTES {
        let mut end = MAX_STEM_BYTES;
        while !stem.is_char_boundary(end) {
            end -= 1;
        }
        stem.truncate(end);
    }
    stem
}

/// The file stems taken so far (lowercased: names that differ only in case
/// collide on case-insensitive file systems), and for each stem the next suffix
/// to try, so that many tensors with one stem cost one probe each, not one per
/// earlier tensor.
#[derive(Default)]
struct Stems {
    taken: std::collections::HashSet<String>,
    next_suffix: std::collections::HashMap<String, u64>,
}

impl Stems {
    fn is_taken(&self, s: &str) -> bool {
        s.eq_ignore_ascii_case("index") || self.taken.contains(&s.to_lowercase())
    }
}

/// `stem`, or `stem~2`, `stem~3`, … when an earlier tensor took it (names that
/// differ only in unsafe characters, or only in case on case-insensitive file
/// systems). `index` is reserved for the index file.
fn unique_stem(stem: &str, used: &mut Stems) -> String {
    let mut candidate = stem.to_string();
    if used.is_taken(&candidate) {
        let key = stem.to_lowercase();
        let mut n = used.next_suffix.get(&key).copied().unwrap_or(2);
        loop {
            candidate = format!("{stem}~{n}");
            n += 1;
            if !used.is_taken(&candidate) {
                break;
            }
        }
        used.next_suffix.insert(key, n);
    }
    used.taken.insert(candidate.to_lowercase());
    candidate
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_stems_are_safe_and_unique() {
        assert_eq!(safe_file_stem("blk.0.attn_q.weight"), "blk.0.attn_q.weight");
        assert_eq!(safe_file_stem("a/b\\c:d"), "a_b_c_d");
        assert_eq!(safe_file_stem("../etc/passwd"), "_.._etc_passwd");
        assert_eq!(safe_file_stem("w\x1b[2J"), "w_[2J");
        assert_eq!(safe_file_stem(""), "_");
        assert!(safe_file_stem(&"é".repeat(300)).len() <= MAX_STEM_BYTES);
        let mut used = Stems::default();
        assert_eq!(unique_stem("a_b", &mut used), "a_b");
        assert_eq!(unique_stem("a_b", &mut used), "a_b~2");
        assert_eq!(unique_stem("A_B", &mut used), "A_B~3");
        assert_eq!(unique_stem("index", &mut used), "index~2");
        // A stem that another tensor's suffixed stem took is skipped.
        assert_eq!(unique_stem("x~2", &mut used), "x~2");
        assert_eq!(unique_stem("x", &mut used), "x");
        assert_eq!(unique_stem("x", &mut used), "x~3");
        // Many tensors with one stem: one probe each (this took minutes when each
        // tried every earlier suffix).
        let long = "p".repeat(MAX_STEM_BYTES);
        for i in 0..20_000u64 {
            let got = unique_stem(&long, &mut used);
            let expected = match i {
                0 => long.clone(),
                i => format!("{long}~{}", i + 1),
            };
            assert_eq!(got, expected);
        }
    }

    #[test]
    fn raw_part_paths() {
        assert_eq!(
            part_path(Path::new("d/emb.npy"), RawPart::Codes),
            PathBuf::from("d/emb.codes.npy")
        );
        assert_eq!(
            part_path(Path::new("emb"), RawPart::ZeroPoints),
            PathBuf::from("emb.zero_points.npy")
        );
    }
}

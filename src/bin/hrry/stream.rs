//! `hrry stream`: bare Hurray streams and captured transport conversations
//! (pack, unpack, validate), and `hrry inspect` of a bare stream.

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

use hrry::file::{HrryWriter, WriterOptions};
use hrry::limits::Limits;
use hrry::stream::message::{read_frame, MessageType};
use hrry::stream::{StreamReader, StreamTensor, StreamWriter, TensorNames, UnpackOptions};
use hrry::validate::{Judging, Options, Rules};
use serde_json::{json, Value};

use crate::listed::{Listed, Totals};
use crate::{is_dash, text, Failure, Outcome};

/// Subcommands of `hrry stream`.
#[derive(clap::Subcommand)]
pub enum Command {
    /// Write every tensor of a HRRYFILE as a bare stream: each descriptor followed by
    /// its buffers back to back, in file order (by descriptor offset, so composite
    /// members follow their head), without names, KV metadata or index.
    Pack(PackArgs),
    /// Write the tensors of a bare stream as a HRRYFILE, in stream order. Streams
    /// carry no names, so tensors are named t0, t1, … in order, and the members of a
    /// composite named H are H.0, H.1, … (nested composites recursively).
    Unpack(UnpackArgs),
    /// Check bare streams (or, with --messages, captured transport conversations)
    /// against every rule and report each violation, as `hrry validate` does.
    Validate(ValidateArgs),
    /// List a bare stream's tensors (as `hrry inspect` does) or, with --messages,
    /// a captured conversation's messages and their decoded fields.
    Inspect(InspectArgs),
}

/// Arguments of `hrry stream inspect`.
#[derive(clap::Args)]
pub struct InspectArgs {
    /// The stream or capture (`-` for standard input).
    input: PathBuf,
    /// The input is a captured transport conversation.
    #[arg(long)]
    messages: bool,
    /// Print JSON (what the Kaitai cross-check compares against).
    #[arg(long)]
    json: bool,
}

/// Arguments of `hrry stream pack`.
#[derive(clap::Args)]
pub struct PackArgs {
    /// The HRRYFILE to pack (`-` for standard input, read whole first since a
    /// file's index is at its end).
    file: PathBuf,
    /// Output stream (`-` for standard output, which must not be a terminal). A
    /// file is written under a temporary name and renamed when complete.
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
    #[command(flatten)]
    pub net: crate::remote::NetArgs,
}

/// Arguments of `hrry stream unpack`.
#[derive(clap::Args)]
pub struct UnpackArgs {
    /// The stream to read (`-` for standard input).
    input: PathBuf,
    /// Output HRRYFILE (`-` for standard output, which must not be a terminal).
    /// A file is written under a temporary name and renamed when complete.
    #[arg(short, long, value_name = "OUT.hrry")]
    output: PathBuf,
    /// Alignment of every data buffer in the file: a power of two from 4096 to
    /// 2097152.
    #[arg(long, value_name = "BYTES", default_value_t = 4096)]
    data_buffer_alignment: u32,
    /// Every tensor is checked against every rule before it is written, and a
    /// violation refuses the stream (exit 1, no output file). `--permissive`
    /// lets the hardening rules pass (the rules `hrry validate --permissive`
    /// skips); `--permissive=ID,ID…` lets exactly the named rules pass, each
    /// violation printed as a warning. The stream's own structure (`ST-…`, the
    /// descriptor header) always has to hold.
    #[arg(long, value_name = "RULES", num_args = 0..=1, require_equals = true,
          value_delimiter = ',', default_missing_value = "")]
    permissive: Option<Vec<String>>,
}

/// Arguments of `hrry stream validate`.
#[derive(clap::Args)]
pub struct ValidateArgs {
    /// Streams (or captures) to check; `-` reads standard input.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Print one JSON document for all inputs, as `hrry validate --json` does:
    /// {"format_version": 1, "valid", "files": [{"file", "valid", "format", "mode",
    /// "violations": [{"rule", "level", "offset", "message"}], "notes"}, ...]} (an
    /// input that cannot be read is {"file", "valid": false, "error"}).
    #[arg(long, conflicts_with = "jsonl")]
    json: bool,
    /// Print one JSON object per input per line, as each is checked.
    #[arg(long)]
    jsonl: bool,
    /// The inputs are captured transport conversations: framed messages (12-byte
    /// header, then payload) back to back, both directions, in the order they
    /// crossed the connection.
    #[arg(long)]
    messages: bool,
    /// Apply only the spec's rules (hardening rules are not reported).
    #[arg(long)]
    permissive: bool,
    /// `spec`: only the spec's rules (and limits) count; `hardened` (the default;
    /// `spec` with --permissive): hrry's hardening rules too (exit 3 when only
    /// those are broken).
    #[arg(long, value_enum, value_name = "POLICY")]
    policy: Option<crate::PolicyArg>,
    /// With --messages: the largest payload read (bigger ones are a TR-LIM-001
    /// violation).
    #[arg(long, value_name = "BYTES", default_value_t = hrry::stream::message::DEFAULT_MAX_MESSAGE_SIZE)]
    max_message_size: u32,
}

/// Runs `hrry stream …`.
pub fn run(command: Command) -> Result<Outcome, Failure> {
    match command {
        Command::Pack(args) => pack(args),
        Command::Unpack(args) => unpack(args),
        Command::Validate(args) => validate(args),
        Command::Inspect(args) if args.messages => inspect_messages(&args.input, args.json),
        Command::Inspect(args) => inspect(&args.input, None, args.json),
    }
}

/// Bytes gathered before a write to standard output: small descriptors and
/// padding go out together; large data passes straight through.
const OUT_BUFFER: usize = 1 << 20;

/// Standard output for binary data, refused when it is a terminal. A file handle
/// on the same descriptor, not the line-buffered `Stdout`: no scanning for
/// newlines, and `std::io::copy` from a file can hand the copy to the kernel
/// (`sendfile` / `splice` into a pipe).
fn stdout_for_binary() -> Result<std::fs::File, Failure> {
    use std::os::fd::AsFd;
    let out = std::io::stdout();
    if out.is_terminal() {
        return Err(Failure(
            "standard output is a terminal; redirect it or give -o FILE".into(),
        ));
    }
    let fd = out
        .as_fd()
        .try_clone_to_owned()
        .map_err(|e| Failure(format!("cannot use standard output: {e}")))?;
    Ok(std::fs::File::from(fd))
}

/// A stream error: a rule violation is the input's fault (exit 1, reported on
/// standard error with its rule); anything else is a failure (exit 2).
fn stream_error(what: &Path, e: hrry::stream::Error) -> Result<Outcome, Failure> {
    match e {
        hrry::stream::Error::Invalid(v) => {
            eprintln!(
                "{}: {} [{}] at offset {}: {}",
                text::path(what),
                v.rule.id,
                v.rule.level.name(),
                v.offset,
                text::safe(&v.message)
            );
            Ok(Outcome::Invalid)
        }
        hrry::stream::Error::Io(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            std::process::exit(crate::EXIT_BROKEN_PIPE)
        }
        other => Err(Failure(format!("{}: {other}", text::path(what)))),
    }
}

fn pack(args: PackArgs) -> Result<Outcome, Failure> {
    // A HRRYFILE's index is at its end: standard input is read whole first.
    let piped = if is_dash(&args.file) {
        Some(crate::read_input(&args.file).map_err(Failure)?)
    } else {
        None
    };
    let result = if is_dash(&args.output) {
        let out = std::io::BufWriter::with_capacity(OUT_BUFFER, stdout_for_binary()?);
        let mut w = StreamWriter::new(out);
        pack_into(&args.file, piped.as_deref(), &mut w).and_then(|_| w.finish().map(drop))
    } else {
        let inputs: &[&Path] = if piped.is_some() || crate::remote::url(&args.file).is_some() {
            &[]
        } else {
            &[&args.file]
        };
        crate::output_folder(&args.output)?;
        let out = crate::output::create(&args.output, inputs).map_err(crate::output_failure)?;
        let mut w = StreamWriter::new(out);
        pack_into(&args.file, piped.as_deref(), &mut w)
            .and_then(|_| w.finish())
            .and_then(|out| out.commit().map_err(|e| hrry::stream::Error::Io(e.into())))
    };
    match result {
        Ok(()) => Ok(Outcome::Ok),
        Err(hrry::stream::Error::Io(e)) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(
            Failure(format!("cannot pack {}: {e}", text::path(&args.file))),
        ),
        Err(e) => stream_error(&args.file, e),
    }
}

/// Packs the file at `path`, or the bytes `piped` in from standard input.
fn pack_into<W: std::io::Write>(
    path: &Path,
    piped: Option<&[u8]>,
    w: &mut StreamWriter<W>,
) -> Result<u64, hrry::stream::Error> {
    if let Some(url) = crate::remote::url(path) {
        // Only what packing reads is fetched: the metadata, then each tensor.
        let file = match crate::remote::open_file(url, &hrry::file::OpenOptions::new()) {
            Ok(file) => file,
            Err(crate::remote::OpenFailure::Read(message)) => {
                return Err(hrry::stream::Error::Io(std::io::Error::other(message)))
            }
            Err(crate::remote::OpenFailure::Invalid(e)) => return Err(e),
        };
        return hrry::stream::pack(&file, w);
    }
    match piped {
        Some(bytes) => hrry::stream::pack(&hrry::file::HrryFile::from_bytes(bytes)?, w),
        None => hrry::stream::pack_path(path, w),
    }
}

/// Opens an input path, `-` meaning standard input (read through a file handle on
/// its descriptor: the readers buffer themselves).
fn open_input(path: &Path) -> Result<Box<dyn Read>, Failure> {
    if is_dash(path) {
        use std::os::fd::AsFd;
        let fd = std::io::stdin()
            .as_fd()
            .try_clone_to_owned()
            .map_err(|e| Failure(format!("cannot use standard input: {e}")))?;
        return Ok(Box::new(std::fs::File::from(fd)));
    }
    crate::input::read_stream(path)
        .map_err(|e| Failure(format!("cannot read {}: {e}", text::path(path))))
}

/// The checks `--permissive[=RULES]` asks `unpack` for.
fn unpack_options(permissive: Option<&[String]>) -> Result<UnpackOptions, Failure> {
    let mut options = UnpackOptions::default();
    match permissive {
        None => {}
        Some(ids) if ids.iter().all(|id| id.is_empty()) => {
            options.validation.judging.rules = Rules::Permissive;
        }
        Some(ids) => {
            for id in ids.iter().filter(|id| !id.is_empty()) {
                let rule = hrry::validate::rule_by_id(id).ok_or_else(|| {
                    Failure(format!(
                        "--permissive: no rule {} (`hrry rules` lists them)",
                        text::safe(id)
                    ))
                })?;
                options.allowed.push(rule);
            }
        }
    }
    Ok(options)
}

fn unpack(args: UnpackArgs) -> Result<Outcome, Failure> {
    let checks = unpack_options(args.permissive.as_deref())?;
    let options = WriterOptions {
        data_buffer_alignment: args.data_buffer_alignment,
        ..WriterOptions::default()
    };
    let mut reader = StreamReader::new(open_input(&args.input)?);
    let result = if is_dash(&args.output) {
        let out = std::io::BufWriter::with_capacity(OUT_BUFFER, stdout_for_binary()?);
        let mut w = HrryWriter::new(out, options)?;
        hrry::stream::unpack(&mut reader, &mut w, &checks).and_then(|done| w.finish().map(|_| done))
    } else {
        let inputs: &[&Path] = if is_dash(&args.input) {
            &[]
        } else {
            &[&args.input]
        };
        crate::output_folder(&args.output)?;
        let mut w = HrryWriter::new(
            crate::output::create(&args.output, inputs).map_err(crate::output_failure)?,
            options,
        )?;
        hrry::stream::unpack(&mut reader, &mut w, &checks)
            .and_then(|done| w.finish_file().map(|()| done))
    };
    match result {
        Ok(done) => {
            for v in &done.allowed {
                eprintln!(
                    "{}: warning: {} [{}] at offset {}: {} (let through by --permissive)",
                    text::path(&args.input),
                    v.rule.id,
                    v.rule.level.name(),
                    v.offset,
                    text::safe(&v.message)
                );
            }
            Ok(Outcome::Ok)
        }
        Err(e) => stream_error(&args.input, e),
    }
}

fn validate(args: ValidateArgs) -> Result<Outcome, Failure> {
    let rules = crate::args::judged_rules(args.permissive, args.policy);
    let format = if args.messages {
        hrry::Format::Messages
    } else {
        hrry::Format::Stream
    };
    let check = |path: &Path| -> Result<hrry::validate::Report, Failure> {
        let source = open_input(path)?;
        let options = Options {
            judging: Judging {
                rules,
                ..Judging::default()
            },
            limits: Limits {
                max_message_size: args.max_message_size,
                ..Limits::default()
            },
        };
        let report = format.validate_reader(source, &options);
        report.map_err(|e| Failure(format!("cannot read {}: {e}", text::path(path))))
    };
    let mut worst = crate::validate::Worst::default();
    let mut files = Vec::new();
    for path in &args.inputs {
        let name = path.to_string_lossy().into_owned();
        let object = match check(path) {
            Ok(report) => {
                worst.add(&report);
                if !args.json && !args.jsonl {
                    crate::validate::print_report(&text::safe(&name), &report);
                }
                crate::json::validate_json(&name, format.name(), &report)
            }
            Err(Failure(message)) => {
                worst.add_unreadable();
                if !args.json && !args.jsonl {
                    eprintln!("hrry: {}", text::safe(&message));
                }
                json!({"file": name, "valid": false, "verdict": "error", "error": message})
            }
        };
        if args.jsonl {
            outln!("{object}");
        } else if args.json {
            files.push(object);
        }
    }
    crate::validate::conclude(args.json.then_some(files), worst)
}

/// `hrry inspect` of a bare stream: every tensor with the name `unpack` would give
/// it, its placement in the stream and its descriptor. Reads the stream once,
/// skipping the data.
pub fn inspect(path: &Path, bytes: Option<&[u8]>, as_json: bool) -> Result<Outcome, Failure> {
    let source: Box<dyn Read + '_> = match bytes {
        Some(b) => Box::new(b),
        None => open_input(path)?,
    };
    let mut reader = StreamReader::new(source);
    let mut names = TensorNames::new();
    let mut tensors = Vec::new();
    let mut error = None;
    loop {
        match reader.next_tensor() {
            Ok(Some(t)) => {
                let name = names.next(&t.descriptor);
                tensors.push((name, t));
            }
            Ok(None) => break,
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    let size = reader.position();
    if as_json {
        let v = json!({
            "format": "stream",
            "stream_size": size,
            "tensors": tensors
                .iter()
                .map(|(name, t)| crate::json::stream_tensor_json(t, name))
                .collect::<Vec<_>>(),
        });
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print_human(&text::path(path), size, &tensors);
    }
    match error {
        None => Ok(Outcome::Ok),
        Some(e) => stream_error(path, e),
    }
}

/// The human listing of a stream: its size and totals, then the same tensor table
/// as `hrry inspect` of a file (names as `hrry stream unpack` gives them).
fn print_human(name: &str, size: u64, tensors: &[(String, StreamTensor)]) {
    let listed = || {
        tensors.iter().map(|(name, t)| Listed {
            name,
            data_offset: t.data_offset,
            data_length: t.data_length,
            descriptor: Ok(&t.descriptor),
        })
    };
    outln!("{name}: bare Hurray stream, {size} bytes");
    let mut totals = Totals::default();
    for t in listed() {
        totals.add(&t);
    }
    outln!("  {}", crate::render::summary_line(&totals));
    crate::render::print_tensor_table(listed, totals.tensors, None);
}

/// `hrry stream inspect --messages`: every message of a capture, its header and
/// decoded payload; a capture cut short lists what it holds, then names the rule.
pub fn inspect_messages(path: &Path, as_json: bool) -> Result<Outcome, Failure> {
    let mut source = open_input(path)?;
    let mut messages = Vec::new();
    let mut at = 0u64;
    let error = loop {
        match read_frame(&mut source, at, u32::MAX) {
            Ok(Some(frame)) => {
                let payload = crate::json::frame_payload_json(&frame, at);
                messages.push((at, frame.header, payload));
                at += frame.encoded_len();
            }
            Ok(None) => break None,
            Err(e) => break Some(e),
        }
    };
    if as_json {
        let messages: Vec<Value> = messages
            .into_iter()
            .map(|(at, header, payload)| crate::json::message_json(&header, at, payload))
            .collect();
        let v = json!({"format": "messages", "size": at, "messages": messages});
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        outln!(
            "{}: transport conversation, {}, {}",
            text::path(path),
            text::plural(at, "byte", "bytes"),
            text::plural(messages.len() as u64, "message", "messages")
        );
        for (at, h, payload) in &messages {
            let name = MessageType::from_tag(h.message_type).map_or_else(
                || format!("type {:#x}", h.message_type),
                |t| t.name().to_string(),
            );
            outln!(
                "  {:>8}  stream {:<6} {:<18} {:>8} bytes  {}",
                at,
                h.stream_id,
                name,
                h.payload_length,
                payload
            );
        }
    }
    match error {
        None => Ok(Outcome::Ok),
        Some(e) => stream_error(path, e),
    }
}

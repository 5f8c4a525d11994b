//! `hrry convert IN OUT`: safetensors (a file or a sharded checkpoint) or GGUF (a file
//! or a split set) to HRRYFILE, HRRYFILE to safetensors or GGUF.

use std::io::IsTerminal;
use std::path::PathBuf;

use hrry::convert::{self, Error, FloatType, ModelFormat, Options, Progress};
use indicatif::{ProgressBar, ProgressStyle};

use crate::{text, Failure, Outcome};

/// Arguments of `hrry convert`.
#[derive(clap::Args)]
pub struct Args {
    /// Input: a file whose format (HRRYFILE, safetensors, GGUF) is recognised by its
    /// magic; a sharded safetensors checkpoint's *.index.json; any file of a GGUF
    /// split set (NAME-0000N-of-0000M.gguf); or a directory holding one of these.
    /// A checkpoint becomes one HRRYFILE whose KV records each tensor's source file.
    input: PathBuf,
    /// Output file; its format comes from the extension (.hrry, .safetensors, .gguf)
    /// or --to.
    output: PathBuf,
    /// Output format: hrry, safetensors or gguf.
    #[arg(long, value_parser = parse_format)]
    to: Option<ModelFormat>,
    /// Convert what the output format cannot hold exactly instead of refusing it:
    /// GGUF input tensors of block types Hurray lacks (Q4_1, Q5_0, Q5_1, Q8_1,
    /// K-quants, IQ4_NL, IQ4_XS, TQ1_0, TQ2_0, MXFP4) are dequantized; for GGUF
    /// output, quantized tensors other than Q8_0/Q4_0-shaped ones are dequantized and
    /// dense types GGUF lacks (bool, unsigned, float8/6/4, int4/int2) converted. All
    /// to --dtype.
    #[arg(long)]
    dequantize_unsupported: bool,
    /// Float type of dequantized or converted values (quantized tensors written to
    /// safetensors, and tensors under --dequantize-unsupported): f32 (the default),
    /// f16 or bf16. It never casts float tensors, which keep their type: when no
    /// tensor was dequantized or converted, a note says it changed nothing.
    #[arg(long, value_parser = parse_dtype)]
    dtype: Option<FloatType>,
    /// Convert a HRRYFILE tensor whose dense buffer holds more than its elements
    /// need (rule TD-BUF-014, such as bools stored one byte per element) as
    /// readers read it, with a note, instead of refusing the conversion.
    #[arg(long)]
    permissive: bool,
    /// Never draw a progress bar (none is drawn when stderr is not a terminal).
    #[arg(long, short)]
    quiet: bool,
    #[command(flatten)]
    pub net: crate::remote::NetArgs,
}

fn parse_format(s: &str) -> Result<ModelFormat, String> {
    ModelFormat::from_name(s)
        .ok_or_else(|| format!("unknown format {s:?} (hrry, safetensors, gguf)"))
}

fn parse_dtype(s: &str) -> Result<FloatType, String> {
    FloatType::from_name(s).ok_or_else(|| format!("unknown float type {s:?} (f32, f16, bf16)"))
}

/// A progress bar on stderr.
struct Bar(ProgressBar);

impl Progress for Bar {
    fn begin(&mut self, total_bytes: u64) {
        self.0.set_length(total_bytes);
    }
    fn advance(&mut self, bytes: u64) {
        self.0.inc(bytes);
    }
    fn tensor(&mut self, name: &str) {
        self.0.set_message(name.to_string());
    }
}

/// Runs the command.
pub fn run(args: Args) -> Result<Outcome, Failure> {
    let bar = if !args.quiet && std::io::stderr().is_terminal() {
        let bar = ProgressBar::new(0);
        if let Ok(style) = ProgressStyle::with_template(
            "{bar:30} {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta} {wide_msg}",
        ) {
            bar.set_style(style);
        }
        bar
    } else {
        ProgressBar::hidden()
    };
    let options = Options {
        to: args.to,
        dequantize_unsupported: args.dequantize_unsupported,
        dtype: args.dtype.unwrap_or_default(),
        permissive: args.permissive,
        ..Options::default()
    };
    let mut progress = Bar(bar);
    // A URL is fetched whole first (converting reads all of it anyway), into a
    // temporary folder removed at the end; messages name the URL, not the copy.
    let fetched = match crate::remote::url(&args.input) {
        Some(url) => Some(crate::remote::download_named(url).map_err(Failure)?),
        None => None,
    };
    let input = fetched
        .as_ref()
        .map_or(args.input.as_path(), |(_, p)| p.as_path());
    // The output's missing folders, once the input is known to exist.
    if input.exists() {
        crate::output_folder(&args.output)?;
    }
    let result = if crate::is_dash(&args.output) {
        let out = crate::output::stdout(&args.output);
        convert::convert_to_output(input, out, &options, &mut progress)
    } else {
        convert::convert(input, &args.output, &options, &mut progress)
    };
    progress.0.finish_and_clear();
    let naming = |message: String| {
        let message = match &fetched {
            Some((_, copy)) => {
                message.replace(&copy.display().to_string(), &text::path(&args.input))
            }
            None => message,
        };
        naming(&args.input, &args.output, message)
    };
    match result {
        Ok(summary) => {
            for note in &summary.notes {
                eprintln!("hrry: note: {}", text::safe(note));
            }
            if let (Some(dtype), 0) = (args.dtype, summary.as_dtype) {
                eprintln!(
                    "hrry: note: --dtype {} changed nothing: no tensor was dequantized or \
                     converted (--dtype applies only to those; float tensors keep their type)",
                    dtype.element_type().name()
                );
            }
            let line = format!(
                "{} ({}) -> {} ({}): {}, {}",
                text::path(&args.input),
                summary.from.name(),
                text::path(&args.output),
                summary.to.name(),
                text::plural(summary.tensors as u64, "tensor", "tensors"),
                text::plural(
                    summary.metadata as u64,
                    "metadata entry",
                    "metadata entries"
                )
            );
            // Standard output may be the converted file itself.
            if crate::is_dash(&args.output) {
                eprintln!("{line}");
            } else {
                outln!("{line}");
            }
            Ok(Outcome::Ok)
        }
        // The input cannot be converted: exit 1, like an invalid file (a text
        // file or another format included, as in `validate`).
        Err(e @ (Error::Format(_) | Error::Unsupported(_) | Error::Invalid(_))) => {
            eprintln!("hrry: {}", text::safe(&naming(e.to_string())));
            Ok(Outcome::Invalid)
        }
        Err(e) => Err(Failure(naming(e.to_string()))),
    }
}

/// `message` with the input's path in front, unless it names the input or the
/// output already (a failure writing the output names the output alone).
fn naming(input: &std::path::Path, output: &std::path::Path, message: String) -> String {
    let shown = crate::remote::shown(input);
    if message.contains(&shown) || message.contains(&output.display().to_string()) {
        message
    } else {
        format!("{}: {message}", text::path(input))
    }
}

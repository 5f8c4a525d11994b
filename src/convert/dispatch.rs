//! Recognising the input and choosing the conversion.

use std::path::Path;

use crate::file::Output;

use super::listing::Listing;
use super::output::Target;
use super::source::FileSource;
use super::{
    checkpoint, gguf, safetensors, to_gguf, Error, ModelFormat, Options, Progress, Summary,
};

/// Reads the first bytes of `path` and tells its format by magic (a sharded
/// safetensors checkpoint's `*.index.json` counts as safetensors).
pub fn detect(path: &Path) -> Result<ModelFormat, Error> {
    let mut source = FileSource::open(path)?;
    let prefix = source.read_prefix(16)?;
    if let Some(format) = ModelFormat::sniff(&prefix, source.len()) {
        return Ok(format);
    }
    if checkpoint::looks_like_index(path, &prefix) {
        return Ok(ModelFormat::Safetensors);
    }
    let head = source.read_prefix(crate::diagnose::HEAD_LEN)?;
    Err(Error::Format(format!(
        "{}: not a HRRYFILE, safetensors, safetensors index or GGUF file: {}",
        path.display(),
        crate::diagnose::describe_head(&head, source.len())
    )))
}

/// Reads the listing of the safetensors or GGUF file `path` (see
/// [`super::listing`]). A HRRYFILE, a checkpoint index or anything else is refused
/// with [`Error::Format`] (HRRYFILEs have their own reader).
pub fn list(path: &Path) -> Result<Listing, Error> {
    match detect(path)? {
        ModelFormat::Gguf => gguf::listing(path),
        ModelFormat::Safetensors if !checkpoint::is_index(path)? => safetensors::listing(path),
        _ => Err(Error::Format(format!(
            "{}: not a safetensors or GGUF file",
            path.display()
        ))),
    }
}

/// Converts `input` into `output`. The input is a file, recognised by its magic,
/// or a whole checkpoint: a sharded safetensors checkpoint's `*.index.json`, the
/// first (or any) file of a GGUF split set, or a directory holding either. The
/// output format is `options.to`, else the output's extension.
pub fn convert(
    input: &Path,
    output: &Path,
    options: &Options,
    progress: &mut dyn Progress,
) -> Result<Summary, Error> {
    convert_into(input, Target::Path(output), options, progress)
}

/// [`convert`] into an output the caller opened, such as standard output
/// ([`Output::through`]); the output format is `options.to`, else the extension of
/// the output's name.
pub fn convert_to_output(
    input: &Path,
    output: Output,
    options: &Options,
    progress: &mut dyn Progress,
) -> Result<Summary, Error> {
    convert_into(input, Target::Open(output), options, progress)
}

fn convert_into(
    input: &Path,
    target: Target<'_>,
    options: &Options,
    progress: &mut dyn Progress,
) -> Result<Summary, Error> {
    let name = target.name();
    let output = name.as_path();
    let resolved;
    let input = if input.is_dir() {
        resolved = checkpoint::resolve_directory(input)?;
        resolved.as_path()
    } else {
        input
    };
    let from = detect(input)?;
    let to = match options.to.or_else(|| ModelFormat::from_extension(output)) {
        Some(f) => f,
        None => {
            return Err(Error::Usage(format!(
                "cannot tell the output format from {:?}: use a .hrry, .safetensors or .gguf extension or --to",
                output.display().to_string()
            )))
        }
    };
    match (from, to) {
        (ModelFormat::Safetensors, ModelFormat::Hrry) => {
            safetensors::to_hrry_into(input, target, options, progress)
        }
        (ModelFormat::Gguf, ModelFormat::Hrry) => gguf::to_hrry_into(input, target, options, progress),
        (ModelFormat::Hrry, ModelFormat::Safetensors) => {
            safetensors::from_hrry_into(input, target, options, progress)
        }
        (ModelFormat::Hrry, ModelFormat::Gguf) => to_gguf::from_hrry_into(input, target, options, progress),
        (ModelFormat::Safetensors, ModelFormat::Gguf) | (ModelFormat::Gguf, ModelFormat::Safetensors) => {
            through_hrry(input, from, target, to, options, progress)
        }
        (from, to) => Err(Error::Usage(format!(
            "conversion from {} to {} is not supported (supported: safetensors, gguf and hrryfile to one another)",
            from.name(),
            to.name()
        ))),
    }
}

/// safetensors to GGUF or GGUF to safetensors in one run: the input becomes a
/// temporary HRRYFILE beside the output (the disk that will hold the output anyway,
/// not a possibly small temporary folder), which is then converted and removed.
/// The notes of both passes are kept.
fn through_hrry(
    input: &Path,
    from: ModelFormat,
    target: Target<'_>,
    to: ModelFormat,
    options: &Options,
    progress: &mut dyn Progress,
) -> Result<Summary, Error> {
    let folder = target.folder().to_path_buf();
    let folder = folder.as_path();
    let staged = tempfile::Builder::new()
        .prefix(".hrry-convert-")
        .suffix(".hrry")
        .tempfile_in(folder)
        .map_err(|source| super::io_at(folder, source))?;
    let first_pass = Options {
        to: Some(ModelFormat::Hrry),
        ..*options
    };
    let first = match from {
        ModelFormat::Gguf => gguf::to_hrry(input, staged.path(), &first_pass, progress)?,
        _ => safetensors::to_hrry(input, staged.path(), &first_pass, progress)?,
    };
    let second = match to {
        ModelFormat::Gguf => to_gguf::from_hrry_into(staged.path(), target, options, progress)?,
        _ => safetensors::from_hrry_into(staged.path(), target, options, progress)?,
    };
    let mut notes = first.notes;
    notes.extend(second.notes);
    Ok(Summary {
        from,
        to,
        notes,
        as_dtype: first.as_dtype + second.as_dtype,
        ..second
    })
}

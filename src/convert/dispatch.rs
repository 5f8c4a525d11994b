//! Recognising the input and choosing the conversion.

use std::path::Path;

use super::source::FileSource;
use super::{gguf, safetensors, Error, Format, Options, Progress, Summary};

/// Reads the first bytes of `path` and tells its format by magic.
pub fn detect(path: &Path) -> Result<Format, Error> {
    let mut source = FileSource::open(path)?;
    let prefix = source.read_prefix(16)?;
    Format::sniff(&prefix, source.len()).ok_or_else(|| {
        Error::Unsupported(format!(
            "{}: not a HRRYFILE, safetensors or GGUF file (first bytes {:02x?})",
            path.display(),
            &prefix[..prefix.len().min(8)]
        ))
    })
}

/// Converts `input` into `output`. The input format is recognised by its magic; the
/// output format is `options.to`, else the output's extension.
pub fn convert(
    input: &Path,
    output: &Path,
    options: &Options,
    progress: &mut dyn Progress,
) -> Result<Summary, Error> {
    let from = detect(input)?;
    let to = match options.to.or_else(|| Format::from_extension(output)) {
        Some(f) => f,
        None => {
            return Err(Error::Unsupported(format!(
                "cannot tell the output format from {:?}: use a .hrry or .safetensors extension or --to",
                output.display().to_string()
            )))
        }
    };
    match (from, to) {
        (Format::Safetensors, Format::Hrry) => {
            safetensors::to_hrry(input, output, options, progress)
        }
        (Format::Gguf, Format::Hrry) => gguf::to_hrry(input, output, options, progress),
        (Format::Hrry, Format::Safetensors) => {
            safetensors::from_hrry(input, output, options, progress)
        }
        (from, to) => Err(Error::Unsupported(format!(
            "conversion from {} to {} is not supported (supported: safetensors -> hrryfile, gguf -> hrryfile, hrryfile -> safetensors)",
            from.name(),
            to.name()
        ))),
    }
}

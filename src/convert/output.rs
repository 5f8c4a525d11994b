//! Where a conversion writes: every output is created, fed and committed through
//! this module, on top of [`crate::file::Output`] (a temporary file renamed into
//! place for a regular file, written through for a device or FIFO, never one of the
//! inputs; or an output the caller opened, such as standard output).

use std::path::{Path, PathBuf};

use super::{Error, FileSource, Progress, CHUNK};
use crate::file::{CopyFrom, HrryWriter, WriterOptions};

/// An output being written.
pub(crate) type Output = crate::file::Output;

/// Bytes the kernel copies per call, between two progress reports.
const COPY_PIECE: u64 = 8 * CHUNK as u64;

fn io_error(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| super::io_at(path, source)
}

/// Where a conversion writes: a path, opened as [`Output::create`] does, or an
/// output the caller opened ([`Output::through`]).
pub(crate) enum Target<'a> {
    /// A path.
    Path(&'a Path),
    /// An output already open.
    Open(Output),
}

impl Target<'_> {
    /// The path, or what messages call the open output.
    pub(crate) fn name(&self) -> PathBuf {
        match self {
            Target::Path(p) => p.to_path_buf(),
            Target::Open(o) => o.path().to_path_buf(),
        }
    }

    /// The folder beside the output, for files a conversion stages on the disk
    /// that will hold the output anyway; `.` for an open output.
    pub(crate) fn folder(&self) -> &Path {
        match self {
            Target::Path(p) => super::checkpoint::parent_dir(p),
            Target::Open(_) => Path::new("."),
        }
    }

    /// Opens the output of a conversion reading `inputs` (which a path must not
    /// be); a regular file appears under its name only on [`commit`].
    pub(crate) fn create(self, inputs: &[&Path]) -> Result<Output, Error> {
        match self {
            Target::Path(path) => Output::create(path, inputs).map_err(Error::from),
            Target::Open(out) => Ok(out),
        }
    }
}

/// Finishes the output.
pub(crate) fn commit(out: Output) -> Result<(), Error> {
    out.commit().map_err(Error::from)
}

/// A HRRYFILE writer over a new output (see [`Target::create`]).
pub(crate) fn hrry_writer(
    target: Target<'_>,
    inputs: &[&Path],
    options: WriterOptions,
) -> Result<HrryWriter<Output>, Error> {
    HrryWriter::new(target.create(inputs)?, options)
}

/// Finishes a HRRYFILE and its output.
pub(crate) fn finish_hrry(writer: HrryWriter<Output>) -> Result<(), Error> {
    commit(writer.finish()?)
}

/// Appends the `len` bytes of `src` at `offset` to `out` (by the kernel where it
/// can), reporting progress.
pub(crate) fn copy_range(
    out: &mut impl CopyFrom,
    path: &Path,
    src: &FileSource,
    offset: u64,
    len: u64,
    progress: &mut dyn Progress,
) -> Result<(), Error> {
    in_pieces(offset, len, progress, |at, n| {
        let copied = out.copy_from(src.file(), at, n);
        // The kernel copied without looking: a file changed meanwhile is an
        // error, whatever the copy gave.
        src.check_unchanged()?;
        copied.map_err(|e| {
            // A short copy is the input's fault; blame the output for anything else.
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                src.io_error(e)
            } else {
                io_error(path)(e)
            }
        })
    })
}

/// Like [`copy_range`] into the open tensor of a HRRYFILE writer.
pub(crate) fn copy_into_tensor<W: CopyFrom>(
    writer: &mut HrryWriter<W>,
    src: &FileSource,
    offset: u64,
    len: u64,
    progress: &mut dyn Progress,
) -> Result<(), Error> {
    in_pieces(offset, len, progress, |at, n| {
        let copied = writer.copy_data(src.file(), at, n);
        src.check_unchanged()?;
        copied
    })
}

/// Calls `copy(at, n)` for `[offset, offset + len)` in pieces of [`COPY_PIECE`],
/// reporting progress after each.
fn in_pieces(
    offset: u64,
    len: u64,
    progress: &mut dyn Progress,
    mut copy: impl FnMut(u64, u64) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut done = 0u64;
    while done < len {
        let n = COPY_PIECE.min(len - done);
        copy(offset + done, n)?;
        progress.advance(n);
        done += n;
    }
    Ok(())
}

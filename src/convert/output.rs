//! Where a conversion writes. Every output file is created, fed and committed
//! through this module, so that how outputs are opened (a temporary file beside
//! the target, renamed into place once complete) is decided in one spot.

use std::path::Path;

use super::{Error, FileSource, Progress, CHUNK};
use crate::file::{AtomicFile, CopyFrom, HrryWriter, WriterOptions};

/// An output being written.
pub(crate) type Output = AtomicFile;

/// Bytes the kernel copies per call, between two progress reports.
const COPY_PIECE: u64 = 8 * CHUNK as u64;

fn io_error(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Opens the output `path`; nothing appears under that name before [`commit`].
pub(crate) fn create(path: &Path) -> Result<Output, Error> {
    AtomicFile::create(path).map_err(io_error(path))
}

/// Makes the finished output appear under its name.
pub(crate) fn commit(out: Output, path: &Path) -> Result<(), Error> {
    out.commit().map_err(io_error(path))
}

/// A HRRYFILE writer over a new output `path`.
pub(crate) fn hrry_writer(
    path: &Path,
    options: WriterOptions,
) -> Result<HrryWriter<Output>, Error> {
    Ok(HrryWriter::new(create(path)?, options)?)
}

/// Finishes a HRRYFILE and makes it appear under `path`.
pub(crate) fn finish_hrry(writer: HrryWriter<Output>, path: &Path) -> Result<(), Error> {
    commit(writer.finish()?, path)
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
        out.copy_from(src.file(), at, n).map_err(|e| {
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
        Ok(writer.copy_data(src.file(), at, n)?)
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

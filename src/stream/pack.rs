//! Converting between HRRYFILEs and bare streams: `hrry stream pack` and
//! `hrry stream unpack`.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use crate::file::{HrryFile, HrryWriter};
use crate::layout::composite::Binder;
use crate::schema::TensorDescriptor;
use crate::source::FileSource;

use crate::validate::{Options, Rule, Violation};

use super::{Error, StreamReader, StreamWriter, TensorChecker};

/// Writes every tensor of `file` to `out` as a bare stream, in file order (by
/// descriptor offset, so composite members follow their heads whatever order the
/// index lists them in); names are dropped. Data is written from the file's
/// bytes. Returns the number of tensors.
pub fn pack<W: Write>(file: &HrryFile<'_>, out: &mut StreamWriter<W>) -> Result<u64, Error> {
    pack_with(file, out, |out, offset, len| {
        out.write_data(file.read_range(offset, len)?)
    })
}

/// [`pack`] for a file on disk, reading the data with plain reads at its offsets
/// (on Linux, copied by the kernel when `out` wraps a file or a pipe): the data
/// is never mapped into memory, so the process holds only the index and one
/// descriptor whatever the file's size. The metadata is read with positioned
/// reads too, and the file is checked unchanged after each buffer
/// ([`crate::source::Changed`] otherwise): a file truncated or rewritten while it
/// is packed is an error, not a `SIGBUS` or a stream of two versions.
pub fn pack_path<W: Write>(path: &Path, out: &mut StreamWriter<W>) -> Result<u64, Error> {
    let source = std::sync::Arc::new(FileSource::open(path)?);
    let file = crate::file::OpenOptions::new().open_source(std::sync::Arc::clone(&source))?;
    let mut data = source.file().try_clone()?;
    pack_with(&file, out, |out, offset, len| {
        data.seek(SeekFrom::Start(offset))?;
        out.copy_data_from(&mut data, len)?;
        Ok(source.check_unchanged()?)
    })
}

/// Walks `file` in descriptor order, writing each descriptor and handing each
/// non-empty buffer (absolute offset and length) to `write_buffer`.
fn pack_with<W: Write>(
    file: &HrryFile<'_>,
    out: &mut StreamWriter<W>,
    mut write_buffer: impl FnMut(&mut StreamWriter<W>, u64, u64) -> Result<(), Error>,
) -> Result<u64, Error> {
    let mut entries: Vec<_> = file.entries().collect();
    entries.sort_by_key(|e| e.index_entry().descriptor_offset);
    for &entry in &entries {
        let (d, offsets) = file.placement(entry)?;
        out.begin_tensor(d)?;
        for (&offset, handle) in offsets.iter().zip(&d.buffers) {
            if handle.byte_size != 0 {
                write_buffer(out, offset, handle.byte_size)?;
            }
        }
    }
    Ok(entries.len() as u64)
}

/// What [`unpack`] lets into the file it writes.
#[derive(Clone, Debug, Default)]
pub struct UnpackOptions {
    /// The rules every tensor is checked against: all of them (strict) or the
    /// spec's (permissive), within these limits.
    pub validation: Options,
    /// Rules whose violations are let through (and returned) instead of refusing
    /// the stream. The rules the reader needs to follow the stream (`ST-…`, the
    /// descriptor header) always refuse it.
    pub allowed: Vec<&'static Rule>,
}

/// What [`unpack`] wrote.
#[derive(Debug, Default)]
pub struct Unpacked {
    /// The number of tensors.
    pub tensors: u64,
    /// The violations of [`UnpackOptions::allowed`] rules let through, in stream
    /// order.
    pub allowed: Vec<Violation>,
}

/// Reads every tensor of a bare stream, checks it against the rules (as
/// [`crate::Format::validate_reader`] does) and writes it to `out`, in stream order,
/// under the names [`TensorNames`] generates. A violation of a rule not in
/// `options.allowed` stops before the tensor is written, as
/// [`Error::Invalid`]; a composite is checked as a whole when its last member
/// arrives, so its head and earlier members are already written by then (give
/// `out` a sink that is discarded on error, as [`HrryWriter::create_from`]
/// does). Holds one tensor's data at a time.
pub fn unpack<R: Read, W: Write>(
    reader: &mut StreamReader<R>,
    out: &mut HrryWriter<W>,
    options: &UnpackOptions,
) -> Result<Unpacked, Error> {
    let mut names = TensorNames::new();
    let mut checker = TensorChecker::new(&options.validation);
    let mut done = Unpacked::default();
    while let Some(t) = reader.next_tensor()? {
        let buffers = reader.read_buffers()?;
        let slices: Vec<&[u8]> = buffers.iter().map(Vec::as_slice).collect();
        let mut report = options.validation.report();
        checker.check(&t, &slices, &mut report);
        for v in report.violations {
            if !options.allowed.iter().any(|r| r.id == v.rule.id) {
                return Err(Error::Invalid(v));
            }
            done.allowed.push(v);
        }
        let name = names.next(&t.descriptor);
        out.begin_tensor(&name, &t.descriptor)?;
        for b in &buffers {
            out.write_data(b)?;
        }
        out.end_tensor()?;
        done.tensors += 1;
    }
    Ok(done)
}

/// The names `unpack` gives a stream's tensors, which have none: the `k`-th
/// tensor outside any composite (from 0) is `t{k}`; member `j` of a composite
/// whose head is named `H` is `H.{j}`, recursively for nested composites. A stream
/// of a tensor, a head with two members, the second a head with one member, and a
/// tensor is named `t0`, `t1`, `t1.0`, `t1.1`, `t1.1.0`, `t2`.
#[derive(Debug, Default)]
pub struct TensorNames {
    binder: Binder<String>,
    top_level: u64,
}

impl TensorNames {
    /// A generator for a new stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// The name of the next tensor, whose descriptor is `d`.
    pub fn next(&mut self, d: &TensorDescriptor) -> String {
        let name = match self.binder.innermost_open() {
            Some(open) => format!("{}.{}", open.head, open.members.len()),
            None => {
                self.top_level += 1;
                format!("t{}", self.top_level - 1)
            }
        };
        self.binder.bind(name.clone(), d, 0);
        name
    }
}

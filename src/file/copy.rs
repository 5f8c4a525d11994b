//! Appending a range of one file to a sink without passing it through user memory
//! when the kernel can (`copy_file_range`), through a small buffer otherwise.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};

/// Bytes moved per read/write round when the kernel cannot copy.
const FALLBACK_BUFFER: usize = 256 << 10;

/// A sink that can append a range of a file. The default copies through a small
/// buffer; sinks backed by a file override it to let the kernel copy.
pub trait CopyFrom: Write {
    /// Appends the `len` bytes of `file` at `offset`. Fails with `UnexpectedEof` when
    /// the file ends first. May move `file`'s cursor.
    fn copy_from(&mut self, file: &File, offset: u64, len: u64) -> io::Result<()> {
        copy_through_buffer(file, offset, len, self)
    }
}

/// Appends the `len` bytes of `file` at `offset` to `sink` through a buffer of
/// `FALLBACK_BUFFER` bytes. Moves `file`'s cursor.
pub fn copy_through_buffer<W: Write + ?Sized>(
    file: &File,
    offset: u64,
    len: u64,
    sink: &mut W,
) -> io::Result<()> {
    if len == 0 {
        return Ok(());
    }
    let mut buf = vec![0u8; FALLBACK_BUFFER.min(usize::try_from(len).unwrap_or(usize::MAX))];
    let mut reader = file;
    reader.seek(SeekFrom::Start(offset))?;
    let mut left = len;
    while left > 0 {
        let n = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        reader.read_exact(&mut buf[..n])?;
        sink.write_all(&buf[..n])?;
        left -= n as u64;
    }
    Ok(())
}

/// Appends the `len` bytes of `file` at `offset` to a buffered file writer, letting
/// the kernel copy: `std::io::copy` between a file and a `BufWriter<File>` flushes the
/// buffer and uses `copy_file_range`, falling back to read/write where the kernel or
/// the file systems refuse. Moves `file`'s cursor.
pub(crate) fn copy_into_file(
    file: &File,
    offset: u64,
    len: u64,
    sink: &mut io::BufWriter<File>,
) -> io::Result<()> {
    let mut reader = file;
    reader.seek(SeekFrom::Start(offset))?;
    let copied = io::copy(&mut reader.take(len), sink)?;
    if copied != len {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("the file ended {copied} bytes into a {len}-byte copy"),
        ));
    }
    Ok(())
}

impl CopyFrom for Vec<u8> {}

impl<W: CopyFrom + ?Sized> CopyFrom for &mut W {
    fn copy_from(&mut self, file: &File, offset: u64, len: u64) -> io::Result<()> {
        (**self).copy_from(file, offset, len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_a_range_or_reports_the_end() {
        let mut tmp = tempfile::tempfile().unwrap();
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 253) as u8).collect();
        tmp.write_all(&data).unwrap();
        let mut out = b"head".to_vec();
        out.copy_from(&tmp, 10, 290_000).unwrap();
        assert_eq!(&out[..4], b"head");
        assert_eq!(&out[4..], &data[10..290_010]);
        let e = Vec::new().copy_from(&tmp, 299_990, 11).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        let mut empty = Vec::new();
        empty.copy_from(&tmp, u64::MAX, 0).unwrap();
        assert!(empty.is_empty());
    }
}

//! The sequential reader (file-format.md "Sequential Reader (No Seek)"): consumes any
//! [`Read`] in order, tracking the running offset, and never inspects data bytes to
//! find section boundaries.

use std::io::Read;

use crate::decode::file::{decode_file_header, judge_descriptor, judge_trailer};
use crate::decode::header::fixed_header;
use crate::decode::input::first_nonzero_byte;
use crate::limits::Limits;
use crate::model::view::{typed_slice, typed_vec, Element};
use crate::schema::{
    container::{FILE_HEADER_LEN, TRAILER_LEN},
    placement::{align_up, place_buffers},
    read_from, FileHeader, TensorDescriptor, Trailer, DESCRIPTOR_HEADER_LEN,
};
use crate::validate::rules::container as rules;
use crate::validate::{Depth, Judging, Pass, Rules};

use super::Error;

/// How the reader learns where the tensor region ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TensorRegionEnd {
    /// Read exactly the header's `tensor_count_hint` tensors, then check the running
    /// offset is where the trailer says the KV or index section starts. Fails if the
    /// hint is `u64::MAX` (unknown).
    CountHint,
    /// Buffer everything after the header up to end of file, take the last 40 bytes as
    /// the trailer and stop at the section it points to (the trailer probe).
    BufferToEof,
}

/// One tensor read sequentially, with its data copied out of the stream.
#[derive(Clone, Debug)]
pub struct SequentialTensor {
    /// Absolute offset of the descriptor.
    pub descriptor_offset: u64,
    /// The descriptor.
    pub descriptor: TensorDescriptor,
    /// The buffers' bytes, in buffer-table order.
    pub buffers: Vec<Vec<u8>>,
}

impl SequentialTensor {
    /// The values of a row-major, unquantized tensor as a `&[T]`, like
    /// [`super::Tensor::as_slice`]. The buffers are plain heap vectors, whose
    /// alignment the allocator chooses; [`SequentialTensor::to_vec`] never depends
    /// on it.
    pub fn as_slice<T: Element>(&self) -> Result<&[T], crate::Error> {
        typed_slice(
            &self.descriptor,
            self.buffers.first().map_or(&[], Vec::as_slice),
        )
    }

    /// The values of a row-major, unquantized tensor copied into a vector.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>, crate::Error> {
        typed_vec(
            &self.descriptor,
            self.buffers.first().map_or(&[], Vec::as_slice),
        )
    }
}

/// Reads tensors in file order from a stream that cannot seek.
///
/// # Examples
///
/// ```
/// use hrry::file::{HrryWriter, SequentialReader, TensorRegionEnd, WriterOptions};
/// use hrry::limits::Limits;
///
/// // Told the tensor count up front, the writer records it in the header.
/// let options = WriterOptions { tensor_count_hint: Some(2), ..WriterOptions::default() };
/// let mut w = HrryWriter::new(Vec::new(), options)?;
/// w.write_row_major::<i32>("a", &[2], &[1, 2])?;
/// w.write_row_major::<i32>("b", &[3], &[3, 4, 5])?;
/// let bytes = w.finish()?;
///
/// // Any `Read` will do: a socket, a pipe, a decompressor. With the count known,
/// // the reader holds one tensor at a time (`BufferToEof` works without it, holding
/// // the rest of the stream).
/// let mut r = SequentialReader::new(&bytes[..], TensorRegionEnd::CountHint, Limits::default())?;
/// let mut total = 0;
/// while let Some(t) = r.next_tensor()? {
///     total += t.to_vec::<i32>()?.iter().sum::<i32>();
/// }
/// assert_eq!(total, 15);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct SequentialReader<R: Read> {
    source: Source<R>,
    header: FileHeader,
    position: u64,
    region_end: Option<u64>,
    remaining: Option<u64>,
    trailer: Option<Trailer>,
    limits: Limits,
    /// How each header and descriptor is judged.
    judging: Judging,
    done: bool,
}

enum Source<R> {
    Stream(R),
    Buffered { bytes: Vec<u8>, at: usize },
}

impl<R: Read> SequentialReader<R> {
    /// Reads and checks the header and skips to `first_descriptor_offset`.
    pub fn new(mut reader: R, end: TensorRegionEnd, limits: Limits) -> Result<Self, Error> {
        let mut head = [0u8; FILE_HEADER_LEN as usize];
        read_exact_or(&mut reader, &mut head, 0)?;
        // The spec's rules, read strictly, on the metadata (the data streams by).
        let judging = Judging::new(Rules::Spec, Depth::Metadata);
        let header = decode_file_header(&head, judging)?;
        let mut this = SequentialReader {
            source: Source::Stream(reader),
            header,
            position: FILE_HEADER_LEN,
            region_end: None,
            remaining: None,
            trailer: None,
            limits,
            judging,
            done: false,
        };
        match end {
            TensorRegionEnd::CountHint => {
                if this.header.tensor_count_hint == u64::MAX {
                    return Err(Error::Usage(
                        "tensor_count_hint is unknown (0xFFFFFFFFFFFFFFFF); use BufferToEof".into(),
                    ));
                }
                this.remaining = Some(this.header.tensor_count_hint);
            }
            TensorRegionEnd::BufferToEof => this.buffer_rest()?,
        }
        this.skip_to(this.header.first_descriptor_offset)?;
        Ok(this)
    }

    /// The file header.
    pub fn header(&self) -> &FileHeader {
        &self.header
    }

    /// The running offset from the start of the file.
    pub fn position(&self) -> u64 {
        self.position
    }

    /// The next tensor, or `None` at the end of the tensor region.
    pub fn next_tensor(&mut self) -> Result<Option<SequentialTensor>, Error> {
        if self.done {
            return Ok(None);
        }
        let at_end = match (self.region_end, self.remaining) {
            (Some(end), _) => self.position >= end,
            (None, Some(n)) => n == 0,
            (None, None) => true,
        };
        if at_end {
            self.done = true;
            self.finish_region()?;
            return Ok(None);
        }
        let mut fixed = [0u8; 10];
        self.read_exact(&mut fixed[..8])?;
        let alignment = u64::from(self.header.data_buffer_alignment);
        if fixed[..8] == [0; 8] && self.position % alignment != 8 % alignment {
            // Eight zero bytes where a descriptor (which starts "HRRY") should be: the
            // previous tensor was padded to data_buffer_alignment, which readers accept.
            let boundary = align_up(self.position, alignment).unwrap_or(u64::MAX);
            self.skip_to(boundary)?;
            if self.region_end.is_some_and(|end| self.position >= end) {
                self.done = true;
                self.finish_region()?;
                return Ok(None);
            }
            self.read_exact(&mut fixed[..8])?;
        }
        let descriptor_offset = self.position - 8;
        self.read_exact(&mut fixed[8..])?;
        let mut bytes = fixed.to_vec();
        // The fixed header is judged before its length is trusted.
        self.read_into(&mut bytes, DESCRIPTOR_HEADER_LEN - 10)?;
        let header = fixed_header(&bytes, descriptor_offset, &self.limits)?;
        self.read_into(&mut bytes, header.length() - DESCRIPTOR_HEADER_LEN)?;
        let descriptor = header.decode(&bytes)?;
        judge_descriptor(
            &descriptor,
            descriptor_offset,
            self.judging,
            &Pass::reader(Vec::new()),
        )?;
        let alignment = u64::from(self.header.data_buffer_alignment);
        let placement =
            place_buffers(self.position, &descriptor.buffers, alignment).ok_or_else(|| {
                Error::invalid(
                    &rules::HF_PLC_DATA_BOUNDS,
                    descriptor_offset,
                    "buffer offsets overflow",
                )
            })?;
        let mut buffers = Vec::with_capacity(descriptor.buffers.len());
        for (h, &offset) in descriptor.buffers.iter().zip(&placement.buffer_offsets) {
            self.skip_to(offset)?;
            let mut data = Vec::new();
            self.read_into(&mut data, h.byte_size)?;
            buffers.push(data);
        }
        let next = align_up(self.position, 8).unwrap_or(u64::MAX);
        self.skip_to(next)?;
        if let Some(n) = self.remaining.as_mut() {
            *n -= 1;
        }
        Ok(Some(SequentialTensor {
            descriptor_offset,
            descriptor,
            buffers,
        }))
    }

    /// After the last tensor: with the trailer known, the running offset must be the
    /// start of the KV or index section (padding to the data alignment is accepted).
    fn finish_region(&mut self) -> Result<(), Error> {
        if self.trailer.is_none() {
            self.buffer_rest()?;
        }
        let Some(end) = self.region_end else {
            return Ok(());
        };
        if self.position != end {
            let padded = align_up(self.position, self.header.data_buffer_alignment.into());
            if padded != Some(end) {
                return Err(Error::invalid(
                    &rules::HF_PLC_REGION_END,
                    self.position,
                    format!(
                        "the tensor region ends at {} but the trailer places the next section at {end}",
                        self.position
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Reads the rest of the stream into memory and locates the trailer.
    fn buffer_rest(&mut self) -> Result<(), Error> {
        let mut rest = Vec::new();
        match &mut self.source {
            Source::Stream(r) => {
                r.read_to_end(&mut rest)?;
            }
            Source::Buffered { .. } => return Ok(()),
        }
        let total = self.position + rest.len() as u64;
        if (rest.len() as u64) < TRAILER_LEN {
            return Err(Error::invalid(
                &rules::HF_FILE_SIZE,
                total,
                format!("stream ended at {total} bytes, with no room for the trailer"),
            ));
        }
        let (trailer, _) = read_from::<Trailer>(&rest[rest.len() - TRAILER_LEN as usize..])
            .map_err(|e| {
                Error::invalid(&rules::HF_TRL_MAGIC, total - TRAILER_LEN, e.to_string())
            })?;
        judge_trailer(&self.header, &trailer, total, self.judging)?;
        let end = if trailer.kv_length > 0 {
            trailer.kv_offset
        } else {
            trailer.index_offset
        };
        if end > total - TRAILER_LEN || end < self.position {
            return Err(Error::invalid(
                &rules::HF_TRL_INDEX_BOUNDS,
                total - TRAILER_LEN,
                format!(
                    "stream is {total} bytes; the trailer places the tensor region end at {end}"
                ),
            ));
        }
        self.region_end = Some(end);
        self.trailer = Some(trailer);
        self.source = Source::Buffered { bytes: rest, at: 0 };
        Ok(())
    }

    fn read_exact(&mut self, buf: &mut [u8]) -> Result<(), Error> {
        let at = self.position;
        match &mut self.source {
            Source::Stream(r) => read_exact_or(r, buf, at)?,
            Source::Buffered { bytes, at: i } => {
                let src = bytes.get(*i..*i + buf.len()).ok_or_else(|| truncated(at))?;
                buf.copy_from_slice(src);
                *i += buf.len();
            }
        }
        self.position += buf.len() as u64;
        Ok(())
    }

    /// Appends `n` bytes to `out`, growing it only as data actually arrives.
    fn read_into(&mut self, out: &mut Vec<u8>, n: u64) -> Result<(), Error> {
        let at = self.position;
        match &mut self.source {
            Source::Stream(r) => {
                let got = r.take(n).read_to_end(out)? as u64;
                if got != n {
                    return Err(truncated(at + got));
                }
            }
            Source::Buffered { bytes, at: i } => {
                let n = usize::try_from(n).map_err(|_| truncated(at))?;
                let src = i
                    .checked_add(n)
                    .and_then(|end| bytes.get(*i..end))
                    .ok_or_else(|| truncated(at))?;
                out.extend_from_slice(src);
                *i += n;
            }
        }
        self.position += n;
        Ok(())
    }

    /// Consumes zero padding up to `target`.
    fn skip_to(&mut self, target: u64) -> Result<(), Error> {
        let mut pad = [0u8; 512];
        while self.position < target {
            let n = (target - self.position).min(pad.len() as u64) as usize;
            let at = self.position;
            self.read_exact(&mut pad[..n])?;
            if let Some(i) = first_nonzero_byte(&pad[..n]) {
                return Err(Error::invalid(
                    &rules::HF_PLC_PADDING_ZERO,
                    at + i as u64,
                    format!("padding byte is {:#04x}, expected 0x00", pad[i]),
                ));
            }
        }
        Ok(())
    }
}

fn truncated(at: u64) -> Error {
    Error::invalid(
        &rules::HF_FILE_SIZE,
        at,
        format!("the stream ended at offset {at} inside a structure"),
    )
}

fn read_exact_or<R: Read>(r: &mut R, buf: &mut [u8], at: u64) -> Result<(), Error> {
    r.read_exact(buf).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => truncated(at),
        _ => Error::Io(e),
    })
}

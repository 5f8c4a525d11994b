//! The bare stream reader: tensors one at a time from any [`Read`], never seeking,
//! holding one descriptor and a fixed-size read buffer whatever the data size.

use std::io::{BufRead, BufReader, Read};

use crate::decode::header::fixed_header;
use crate::layout::composite::Binder;
use crate::limits::Limits;
use crate::schema::{TensorDescriptor, DESCRIPTOR_HEADER_LEN, DESCRIPTOR_MAGIC};
use crate::validate::rules::container::{HF_CMP_DEPTH, TD_HDR_MAGIC};
use crate::validate::rules::stream::*;

use super::Error;

/// Bytes read from the source at a time (and the largest [`Piece`]).
const READ_BUFFER: usize = 128 << 10;

/// One tensor of a stream: where it is, its descriptor and where it sits among
/// composites. Its data follows; read it with [`StreamReader::read_data`] or
/// [`StreamReader::next_piece`], or let [`StreamReader::next_tensor`] skip it.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamTensor {
    /// Position in the stream, from 0.
    pub index: u64,
    /// Absolute offset of the descriptor.
    pub descriptor_offset: u64,
    /// The descriptor.
    pub descriptor: TensorDescriptor,
    /// Absolute offset of the data (the descriptor's end).
    pub data_offset: u64,
    /// The buffers' sizes added up: the data bytes that follow.
    pub data_length: u64,
    /// How many composites enclose the tensor (0 outside any).
    pub depth: usize,
    /// `composition_rule` of the composite the tensor is a direct member of.
    pub member_of: Option<u8>,
}

/// A piece of a tensor's data, borrowed from the reader's buffer until the next
/// call on the reader.
#[derive(Debug, PartialEq, Eq)]
pub struct Piece<'a> {
    /// Which buffer of the buffer table the bytes belong to.
    pub buffer: usize,
    /// Offset of `bytes` within that buffer.
    pub offset: u64,
    /// The bytes; never empty, never spanning two buffers.
    pub bytes: &'a [u8],
}

/// Where the reader is inside the current tensor's data.
#[derive(Default)]
struct DataCursor {
    /// Buffer sizes, in buffer-table order.
    sizes: Vec<u64>,
    /// The buffer the next byte belongs to, and bytes of it already read.
    buffer: usize,
    in_buffer: u64,
    /// Data bytes of the tensor not yet read.
    remaining: u64,
    /// Absolute offset of buffer handle 0, to name the buffer a truncation cut.
    first_handle_at: u64,
}

impl DataCursor {
    /// Moves past `n` bytes (at most what is left in the current buffer).
    fn advance(&mut self, n: u64) {
        self.in_buffer += n;
        self.remaining -= n;
        self.settle();
    }

    /// Steps over finished (and empty) buffers.
    fn settle(&mut self) {
        while self.buffer < self.sizes.len() && self.in_buffer == self.sizes[self.buffer] {
            self.buffer += 1;
            self.in_buffer = 0;
        }
    }

    fn left_in_buffer(&self) -> u64 {
        self.sizes
            .get(self.buffer)
            .map_or(0, |&s| s - self.in_buffer)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Reading,
    Ended,
    Failed,
}

/// Reads a bare Hurray stream (interchange.md, ADR-010): each tensor is its
/// descriptor followed by its buffers' bytes, back to back in buffer-table order,
/// with nothing between tensors; a composite head binds the next `member_count`
/// tensors. Zero bytes is a valid empty stream.
///
/// The reader checks what following the stream needs (descriptor headers, that
/// descriptors decode, limits, truncation, composite completeness) and fails with
/// the rule that broke; full conformance is [`crate::Format::validate_reader`]'s job. After
/// an error, or the end, [`StreamReader::next_tensor`] returns `Ok(None)`.
pub struct StreamReader<R: Read> {
    source: BufReader<R>,
    limits: Limits,
    position: u64,
    binder: Binder<()>,
    tensors: u64,
    data: DataCursor,
    /// Bytes of the read buffer handed out by the last [`Piece`], consumed on the
    /// next call.
    handed_out: usize,
    state: State,
}

impl<R: Read> StreamReader<R> {
    /// A reader with the default [`Limits`].
    pub fn new(source: R) -> Self {
        Self::with_limits(source, Limits::default())
    }

    /// A reader enforcing `limits` (`max_descriptor_bytes`, `max_rank`,
    /// `max_tensors`, `max_composite_depth`).
    pub fn with_limits(source: R, limits: Limits) -> Self {
        StreamReader {
            source: BufReader::with_capacity(READ_BUFFER, source),
            limits,
            position: 0,
            binder: Binder::new(),
            tensors: 0,
            data: DataCursor::default(),
            handed_out: 0,
            state: State::Reading,
        }
    }

    /// Bytes consumed from the source so far.
    pub fn position(&self) -> u64 {
        self.position
    }

    /// Tensors read so far.
    pub fn tensors_read(&self) -> u64 {
        self.tensors
    }

    /// Data bytes of the current tensor not yet read.
    pub fn data_remaining(&self) -> u64 {
        self.data.remaining
    }

    /// The next tensor, skipping what is left of the previous one's data; `None` at
    /// the end of the stream (or after an error).
    pub fn next_tensor(&mut self) -> Result<Option<StreamTensor>, Error> {
        if self.state != State::Reading {
            return Ok(None);
        }
        let result = self.read_tensor();
        if result.is_err() {
            self.state = State::Failed;
        }
        result
    }

    fn read_tensor(&mut self) -> Result<Option<StreamTensor>, Error> {
        self.skip_data()?;
        let at = self.position;
        let mut head = [0u8; DESCRIPTOR_HEADER_LEN as usize];
        let got = self.read_up_to(&mut head)?;
        if got == 0 {
            self.state = State::Ended;
            return match self.binder.outermost_open() {
                Some(open) => Err(Error::invalid(
                    &ST_CMP_TORN,
                    open.head_offset,
                    format!(
                        "the stream ends at {at} while the composite head at {} waits for {} more member(s)",
                        open.head_offset, open.remaining
                    ),
                )),
                None => Ok(None),
            };
        }
        if got < head.len() {
            let n = got.min(4);
            return Err(if head[..n] == DESCRIPTOR_MAGIC[..n] {
                Error::invalid(
                    &ST_TRN_HEADER,
                    at,
                    format!("the stream ends {got} bytes into a descriptor's 20-byte header"),
                )
            } else {
                Error::invalid(
                    &TD_HDR_MAGIC,
                    at,
                    format!(
                        "{got} trailing bytes {:02x?} do not start a descriptor",
                        &head[..got]
                    ),
                )
            });
        }
        let header = fixed_header(&head, at, &self.limits).map_err(Error::Invalid)?;
        if self.tensors >= self.limits.max_tensors {
            return Err(Error::limit(
                crate::limits::Limit::Tensors,
                at,
                format!(
                    "the stream holds more than max_tensors {}",
                    self.limits.max_tensors
                ),
            ));
        }
        let length = header.length();
        let mut bytes = head.to_vec();
        let rest = length - DESCRIPTOR_HEADER_LEN;
        // Grows only as bytes arrive: a descriptor_length the stream does not back
        // costs no more than the stream delivers.
        let read = Read::by_ref(&mut self.source)
            .take(rest)
            .read_to_end(&mut bytes)? as u64;
        self.position += read;
        if read != rest {
            return Err(Error::invalid(
                &ST_TRN_DESCRIPTOR,
                at + crate::schema::descriptor_offsets::DESCRIPTOR_LENGTH,
                format!(
                    "descriptor_length is {length} but the stream ends {} bytes into the descriptor, at offset {}",
                    DESCRIPTOR_HEADER_LEN + read,
                    self.position
                ),
            ));
        }
        let descriptor = header.decode(&bytes).map_err(Error::Invalid)?;
        let first_handle_at = at + descriptor.buffer_pos(0);
        let data_length = descriptor
            .buffers
            .iter()
            .try_fold(0u64, |sum, b| sum.checked_add(b.byte_size))
            .ok_or_else(|| {
                Error::invalid(
                    &ST_TRN_DATA,
                    first_handle_at,
                    "the buffer sizes add up past 2^64 bytes, more than any stream holds",
                )
            })?;
        let depth = self.binder.depth();
        let bound = self.binder.bind((), &descriptor, at);
        if bound.opened && bound.depth as u64 > u64::from(self.limits.max_composite_depth) {
            return Err(Error::invalid(
                &HF_CMP_DEPTH,
                at,
                format!(
                    "composite nesting depth {} exceeds {}",
                    bound.depth, self.limits.max_composite_depth
                ),
            ));
        }
        self.data = DataCursor {
            sizes: descriptor.buffers.iter().map(|b| b.byte_size).collect(),
            buffer: 0,
            in_buffer: 0,
            remaining: data_length,
            first_handle_at,
        };
        self.data.settle();
        let index = self.tensors;
        self.tensors += 1;
        Ok(Some(StreamTensor {
            index,
            descriptor_offset: at,
            data_offset: self.position,
            data_length,
            depth,
            member_of: bound.member_of,
            descriptor,
        }))
    }

    /// Reads up to `buf.len()` bytes of the current tensor's data (possibly
    /// spanning buffers); `0` once all of it is read.
    pub fn read_data(&mut self, buf: &mut [u8]) -> Result<usize, Error> {
        self.release_piece();
        let want = (buf.len() as u64).min(self.data.remaining) as usize;
        if want == 0 {
            return Ok(0);
        }
        let n = loop {
            match self.source.read(&mut buf[..want]) {
                Ok(0) => return Err(self.truncated_data()),
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        };
        self.consumed_data(n as u64);
        Ok(n)
    }

    /// The next piece of the current tensor's data, borrowed from the read buffer
    /// (no copy); `None` once all of it is read.
    pub fn next_piece(&mut self) -> Result<Option<Piece<'_>>, Error> {
        self.release_piece();
        if self.data.remaining == 0 {
            return Ok(None);
        }
        let available = loop {
            match self.source.fill_buf() {
                Ok(b) => break b.len(),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            }
        };
        if available == 0 {
            return Err(self.truncated_data());
        }
        let n = (available as u64).min(self.data.left_in_buffer()) as usize;
        let (buffer, offset) = (self.data.buffer, self.data.in_buffer);
        self.consumed_data(n as u64);
        self.handed_out = n;
        Ok(Some(Piece {
            buffer,
            offset,
            bytes: &self.source.buffer()[..n],
        }))
    }

    /// The rest of the current tensor's data as one vector per buffer (those
    /// already read, in part or whole, come back shorter). Vectors grow as bytes
    /// arrive.
    pub fn read_buffers(&mut self) -> Result<Vec<Vec<u8>>, Error> {
        let mut out: Vec<Vec<u8>> = self.data.sizes.iter().map(|_| Vec::new()).collect();
        while let Some(p) = self.next_piece()? {
            out[p.buffer].extend_from_slice(p.bytes);
        }
        Ok(out)
    }

    /// Skips the rest of the current tensor's data.
    pub fn skip_data(&mut self) -> Result<(), Error> {
        while self.next_piece()?.is_some() {}
        self.release_piece();
        Ok(())
    }

    /// The source, to reach state of its own (such as an error it kept). Reading
    /// from it directly would desynchronise the reader.
    pub fn get_mut(&mut self) -> &mut R {
        self.source.get_mut()
    }

    /// Returns the source. Bytes the reader buffered but did not hand out are lost.
    pub fn into_inner(self) -> R {
        self.source.into_inner()
    }

    /// Consumes the bytes of the last [`Piece`] from the read buffer.
    fn release_piece(&mut self) {
        self.source.consume(std::mem::take(&mut self.handed_out));
    }

    /// Bookkeeping for `n` data bytes taken from the source.
    fn consumed_data(&mut self, mut n: u64) {
        self.position += n;
        while n > 0 {
            let step = n.min(self.data.left_in_buffer());
            self.data.advance(step);
            n -= step;
        }
    }

    fn truncated_data(&self) -> Error {
        let d = &self.data;
        Error::invalid(
            &ST_TRN_DATA,
            d.first_handle_at + 16 * d.buffer as u64,
            format!(
                "buffer {} declares {} bytes but the stream ends after {} of them, at offset {}",
                d.buffer,
                d.sizes.get(d.buffer).copied().unwrap_or(0),
                d.in_buffer,
                self.position
            ),
        )
    }

    /// Fills `buf` as far as the source allows; returns how many bytes it got.
    fn read_up_to(&mut self, buf: &mut [u8]) -> Result<usize, Error> {
        let got = super::io::read_up_to(&mut self.source, buf)?;
        self.position += got as u64;
        Ok(got)
    }
}

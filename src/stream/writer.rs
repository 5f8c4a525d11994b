//! The bare stream writer: descriptors and data back to back over any [`Write`],
//! in one forward pass, holding nothing of the data.

use std::io::{Read, Write};

use crate::layout::composite::Binder;
use crate::schema::{to_bytes, TensorDescriptor};

use super::Error;

/// Writes a bare Hurray stream: each tensor's descriptor, then its buffers' bytes
/// back to back in buffer-table order; nothing between tensors, no names.
///
/// The writer guarantees the stream can be followed: `descriptor_length` matches
/// the encoding, each tensor gets exactly its buffers' bytes, and
/// [`StreamWriter::finish`] refuses an unfinished tensor or a composite still
/// waiting for members. Whether descriptors are otherwise valid is the
/// validator's business.
pub struct StreamWriter<W: Write> {
    sink: W,
    position: u64,
    binder: Binder<()>,
    /// Data bytes the current tensor still needs.
    remaining: u64,
    tensors: u64,
}

impl<W: Write> StreamWriter<W> {
    /// A writer over `sink`. Nothing is written until the first tensor: an empty
    /// stream is zero bytes.
    pub fn new(sink: W) -> Self {
        StreamWriter {
            sink,
            position: 0,
            binder: Binder::new(),
            remaining: 0,
            tensors: 0,
        }
    }

    /// The sink, to reach state of its own (such as an error it kept). Writing to
    /// it directly would corrupt the stream.
    pub fn sink_mut(&mut self) -> &mut W {
        &mut self.sink
    }

    /// Bytes written so far.
    pub fn position(&self) -> u64 {
        self.position
    }

    /// Tensors begun so far.
    pub fn tensors_written(&self) -> u64 {
        self.tensors
    }

    /// Data bytes the current tensor still needs.
    pub fn data_remaining(&self) -> u64 {
        self.remaining
    }

    /// Writes one whole tensor: `buffers[i]` must hold exactly
    /// `descriptor.buffers[i].byte_size` bytes.
    pub fn write_tensor(
        &mut self,
        descriptor: &TensorDescriptor,
        buffers: &[&[u8]],
    ) -> Result<(), Error> {
        let sizes_match = descriptor.buffers.len() == buffers.len()
            && descriptor
                .buffers
                .iter()
                .zip(buffers)
                .all(|(h, b)| h.byte_size == b.len() as u64);
        if !sizes_match {
            return Err(Error::Write(format!(
                "the descriptor declares buffers of {:?} bytes, {:?} given",
                descriptor
                    .buffers
                    .iter()
                    .map(|b| b.byte_size)
                    .collect::<Vec<_>>(),
                buffers.iter().map(|b| b.len()).collect::<Vec<_>>()
            )));
        }
        self.begin_tensor(descriptor)?;
        for b in buffers {
            self.write_data(b)?;
        }
        Ok(())
    }

    /// Writes a tensor's descriptor; its data follows with
    /// [`StreamWriter::write_data`] or [`StreamWriter::copy_data_from`] (all
    /// buffers back to back). The previous tensor must be complete.
    pub fn begin_tensor(&mut self, descriptor: &TensorDescriptor) -> Result<(), Error> {
        self.check_tensor_complete()?;
        if descriptor.buffers.len() > usize::from(u8::MAX) {
            return Err(Error::Write(format!(
                "{} buffers; at most 255 fit the buffer table",
                descriptor.buffers.len()
            )));
        }
        let encoded = to_bytes(descriptor);
        if encoded.len() as u64 != u64::from(descriptor.descriptor_length) {
            return Err(Error::Write(format!(
                "descriptor_length is {} but the descriptor encodes to {} bytes",
                descriptor.descriptor_length,
                encoded.len()
            )));
        }
        let total = descriptor
            .buffers
            .iter()
            .try_fold(0u64, |sum, b| sum.checked_add(b.byte_size))
            .ok_or_else(|| Error::Write("the buffer sizes add up past 2^64 bytes".into()))?;
        let at = self.position;
        self.emit(&encoded)?;
        self.binder.bind((), descriptor, at);
        self.remaining = total;
        self.tensors += 1;
        Ok(())
    }

    /// Writes the next bytes of the current tensor's data.
    pub fn write_data(&mut self, bytes: &[u8]) -> Result<(), Error> {
        if bytes.len() as u64 > self.remaining {
            return Err(Error::Write(format!(
                "{} data bytes given, the tensor needs {} more",
                bytes.len(),
                self.remaining
            )));
        }
        self.emit(bytes)?;
        self.remaining -= bytes.len() as u64;
        Ok(())
    }

    /// Copies `len` bytes of the current tensor's data from `source` with
    /// [`std::io::copy`], which the kernel does without a user-space copy when both
    /// ends are files, pipes or sockets (on Linux).
    pub fn copy_data_from<S: Read>(&mut self, source: S, len: u64) -> Result<(), Error> {
        if len > self.remaining {
            return Err(Error::Write(format!(
                "{len} data bytes to copy, the tensor needs {} more",
                self.remaining
            )));
        }
        let copied = std::io::copy(&mut source.take(len), &mut self.sink)?;
        self.position += copied;
        self.remaining -= copied;
        if copied != len {
            return Err(Error::Io(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("the source ended after {copied} of {len} bytes"),
            )));
        }
        Ok(())
    }

    /// Ends the stream and returns the sink, flushed. Fails when the last tensor
    /// lacks data or a composite waits for members (a torn composite).
    pub fn finish(mut self) -> Result<W, Error> {
        self.check_tensor_complete()?;
        if let Some(open) = self.binder.outermost_open() {
            return Err(Error::Write(format!(
                "the composite head at offset {} still waits for {} member(s)",
                open.head_offset, open.remaining
            )));
        }
        self.sink.flush()?;
        Ok(self.sink)
    }

    fn check_tensor_complete(&self) -> Result<(), Error> {
        if self.remaining != 0 {
            return Err(Error::Write(format!(
                "the current tensor still needs {} data bytes",
                self.remaining
            )));
        }
        Ok(())
    }

    fn emit(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.sink.write_all(bytes)?;
        self.position += bytes.len() as u64;
        Ok(())
    }
}

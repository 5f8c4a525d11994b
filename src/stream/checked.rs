//! A bare stream read tensor by tensor, each tensor checked before it is handed
//! out: what a program that uses the tensors of an untrusted stream reads with.

use std::io::Read;

use crate::validate::rules::container::HF_LIM;
use crate::validate::{Options, Report, Violation};

use super::{Error, StreamReader, StreamTensor, TensorChecker};

/// A tensor of a stream that passed every rule: its place in the stream and its
/// buffers, whole, in buffer-table order.
#[derive(Debug)]
pub struct CheckedTensor {
    /// Where the tensor is and its descriptor.
    pub tensor: StreamTensor,
    /// The tensor's buffers.
    pub buffers: Vec<Vec<u8>>,
}

/// Why a [`CheckedStreamReader`] handed out no tensor.
#[derive(Debug)]
pub enum Refusal {
    /// The reader stopped: the stream's framing breaks a rule, the tensor's stored
    /// bytes exceed the reader's bound (`HF-LIM-001`), or the source failed.
    Stream(Error),
    /// The tensor breaks the rules this report lists.
    Rules(Box<Report>),
}

/// Reads a bare stream tensor by tensor, holding one at a time, and checks each
/// against every rule a stream's tensors answer to — the framing rules of
/// [`StreamReader`], then the per-tensor rules and composite binding of
/// [`TensorChecker`], as [`crate::Format::validate_reader`] applies them — before
/// handing it out. A tensor whose stored bytes exceed `max_tensor_bytes` is refused
/// before its data is read.
pub struct CheckedStreamReader<R: Read> {
    reader: StreamReader<R>,
    checker: TensorChecker,
    options: Options,
    max_tensor_bytes: u64,
}

impl<R: Read> CheckedStreamReader<R> {
    /// A reader of `source` judging as `options` ask (mode, policy, limits),
    /// holding at most `max_tensor_bytes` of stored bytes at a time.
    pub fn new(source: R, options: &Options, max_tensor_bytes: u64) -> Self {
        CheckedStreamReader {
            reader: StreamReader::with_limits(source, options.limits),
            checker: TensorChecker::new(options),
            options: *options,
            max_tensor_bytes,
        }
    }

    /// The next tensor, checked; `None` at the end of the stream. After a
    /// [`Refusal`] the stream cannot be followed further.
    pub fn next_tensor(&mut self) -> Result<Option<CheckedTensor>, Refusal> {
        let Some(tensor) = self.reader.next_tensor().map_err(Refusal::Stream)? else {
            return Ok(None);
        };
        let max = self.max_tensor_bytes;
        if tensor.data_length > max {
            let v = tensor_too_large(&tensor, "stored bytes", tensor.data_length, max);
            return Err(Refusal::Stream(Error::Invalid(v)));
        }
        let buffers = self.reader.read_buffers().map_err(Refusal::Stream)?;
        let slices: Vec<&[u8]> = buffers.iter().map(Vec::as_slice).collect();
        let mut report = self.options.report();
        self.checker.check(&tensor, &slices, &mut report);
        if !report.is_valid() {
            return Err(Refusal::Rules(Box::new(report)));
        }
        Ok(Some(CheckedTensor { tensor, buffers }))
    }

    /// Bytes of the stream consumed so far.
    pub fn position(&self) -> u64 {
        self.reader.position()
    }

    /// The source.
    pub fn get_mut(&mut self) -> &mut R {
        self.reader.get_mut()
    }
}

/// The limit violation (`HF-LIM-001`) of `tensor` needing `needed` bytes (of
/// `what`: its stored bytes, or an array made of them) where a reader holds at
/// most `max`.
pub fn tensor_too_large(tensor: &StreamTensor, what: &str, needed: u64, max: u64) -> Violation {
    Violation::new(
        &HF_LIM,
        tensor.descriptor_offset,
        format!(
            "tensor {} needs {needed} {what}, more than max_tensor_bytes {max}",
            tensor.index
        ),
    )
}

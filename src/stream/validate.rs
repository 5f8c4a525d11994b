//! Validation of a bare stream: the reader's structure rules (`ST-…`, and the
//! descriptor header rules it needs to follow the stream), then every descriptor,
//! layout, quantization and composite rule a file's tensors answer to.

use std::io::Read;

use crate::decode::descriptor::check_descriptor;
use crate::decode::input::Buffers;
use crate::decode::tensor::{bind_composite, check_tensor, Data, Owned};
use crate::layout::composite::Binder;
use crate::schema::{placement::place_buffers, TensorDescriptor};
use crate::validate::{Options, Report};

use super::{Error, StreamReader, StreamTensor};

/// Validates a bare stream read from `source`, reporting every violation found.
/// Holds one tensor (descriptor and data, for the rules that look at stored values)
/// at a time, plus the descriptors of composites still waiting for members.
/// Only an I/O error of the source is an `Err`.
pub(crate) fn validate_stream<R: Read>(source: R, options: &Options) -> std::io::Result<Report> {
    let mut report = options.report();
    let mut reader = StreamReader::with_limits(source, options.limits);
    let mut checker = TensorChecker::new(options);
    loop {
        let tensor = match reader.next_tensor() {
            Ok(Some(t)) => t,
            Ok(None) => break,
            Err(e) => {
                stop(e, &mut report)?;
                break;
            }
        };
        let buffers = match reader.read_buffers() {
            Ok(b) => b,
            Err(e) => {
                // The descriptor's own rules still count for a truncated tensor.
                check_descriptor(&tensor.descriptor, tensor.descriptor_offset, &mut report);
                stop(e, &mut report)?;
                break;
            }
        };
        let slices: Vec<&[u8]> = buffers.iter().map(Vec::as_slice).collect();
        checker.check(&tensor, &slices, &mut report);
    }
    Ok(report)
}

/// The rules one tensor of a stream answers to beyond what [`StreamReader`]
/// checks (descriptor, layout, quantization, composite binding and assembly),
/// applied tensor by tensor in stream order: the stream validator's walk, for
/// readers that check each tensor before using it.
pub struct TensorChecker {
    options: Options,
    binder: Binder<(u64, TensorDescriptor)>,
}

impl TensorChecker {
    /// A checker for a new stream.
    pub fn new(options: &Options) -> Self {
        TensorChecker {
            options: *options,
            binder: Binder::new(),
        }
    }

    /// Checks `tensor`, whose buffers (all of its data) are `buffers`, adding what
    /// it breaks to `report`. Call it for every tensor, in stream order: a
    /// composite is checked as a whole when its last member arrives.
    pub fn check(&mut self, tensor: &StreamTensor, buffers: &[&[u8]], report: &mut Report) {
        let (d, at) = (&tensor.descriptor, tensor.descriptor_offset);
        let limits = &self.options.limits;
        // Back to back: each buffer starts where the previous one ends.
        let offsets = place_buffers(tensor.data_offset, &d.buffers, 1)
            .map(|p| p.buffer_offsets)
            .unwrap_or_default();
        let data = Data {
            buffers: Buffers::Slices(buffers),
            offsets: Some(&offsets),
        };
        check_tensor(d, at, Some(data), limits, report);
        bind_composite(
            &mut self.binder,
            (at, d.clone()),
            d,
            at,
            &Owned,
            limits,
            report,
        );
    }
}

/// Records the error that stopped the reader: a violation ends the walk; an I/O
/// error is passed up.
fn stop(e: Error, report: &mut Report) -> std::io::Result<()> {
    match e {
        Error::Invalid(v) => {
            report.violation(v.rule, v.offset, v.message);
            report.fatal = true;
            Ok(())
        }
        Error::Io(e) => Err(e),
        e => Err(std::io::Error::other(e.to_string())),
    }
}

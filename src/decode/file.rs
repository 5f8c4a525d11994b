//! The validator's decode pass as the readers use it: the same checks, with a
//! reader's policy, keeping what they decoded.

use std::io;

use crate::limits::Limits;
use crate::schema::{
    error_text, read_from, FileHeader, IndexEntryOf, KvEntry, NameSpan, TensorDescriptor, Trailer,
};
use crate::source::ReadAt;

pub(crate) use super::container::Names;
pub(crate) use super::region::{
    check_entry_data_offset, check_entry_descriptor_length, Region, Walked,
};
use super::{container, input, region};
use crate::validate::rules::container::{
    HF_CRC_MATCH, HF_FILE_SIZE, HF_HDR_MAGIC, HF_IDX_NAME_UNIQUE,
};
use crate::validate::{Depth, Judging, Options, Pass, Report, Rule, Violation};

/// What one decode pass over a HRRYFILE found.
pub(crate) struct DecodedFile {
    pub header: FileHeader,
    pub trailer: Trailer,
    /// The index entries in index order; each name is a span into `names`.
    pub index: Vec<IndexEntryOf<NameSpan>>,
    /// Absolute offset of each entry of `index`.
    pub index_offsets: Vec<u64>,
    /// The name of every entry, concatenated in index order.
    pub names: Names,
    /// The KV entries in file order.
    pub kv: Vec<KvEntry>,
    /// When the tensor region was walked: the tensors in file order, and which
    /// one each index entry names.
    pub region: Option<Region>,
}

/// The frame rules a pass to [`Depth::Index`] does not judge, as neither memory
/// safety nor right lookups rest on them: the index CRC (not computed) and the
/// uniqueness of names (no set of them is kept).
const INDEX_DEPTH_SKIPS: [&Rule; 2] = [&HF_CRC_MATCH, &HF_IDX_NAME_UNIQUE];

/// Decodes `source` as `judging` says (the tensor region walked from
/// [`Depth::Metadata`] on), treating violations as `pass` says: the report of
/// every violation recorded, and what decoded (`None` when the tensor region could
/// not be located). A failed read is returned instead.
pub(crate) fn decode_file(
    source: &dyn ReadAt,
    limits: Limits,
    judging: Judging,
    mut pass: Pass,
) -> io::Result<(Report, Option<DecodedFile>)> {
    if judging.depth == Depth::Index {
        pass.allowed.extend(INDEX_DEPTH_SKIPS.iter().map(|r| r.id));
    }
    let input = input::Input::with_budget(source, limits.max_memory);
    let mut report = Report::for_pass(judging, pass);
    let decoded = container::check_frame(&input, limits, &mut report).map(|mut frame| {
        let region = (judging.depth >= Depth::Metadata && !report.stopped())
            .then(|| region::check_region(&frame, &mut report));
        DecodedFile {
            header: frame.header,
            trailer: frame.trailer,
            index: std::mem::take(&mut frame.index),
            index_offsets: std::mem::take(&mut frame.index_offsets),
            names: std::mem::replace(&mut frame.names, Names::Text(String::new())),
            kv: std::mem::take(&mut frame.kv),
            region,
        }
    });
    match input.into_error() {
        Some(e) => Err(e),
        None => Ok((report, decoded)),
    }
}

/// Validates the HRRYFILE `source` and reports every violation found, reading only
/// what the rules look at: the header, trailer, index, KV, every descriptor and the
/// padding around it, quantization parameters, sparse index structures and the few
/// data bytes a rule inspects (packing tails, padding elements, `float8_e8m0`
/// codes), never whole dense data buffers; a failed read is returned instead.
pub(crate) fn validate_source(source: &dyn ReadAt, options: &Options) -> io::Result<Report> {
    let (report, _) = decode_file(source, options.limits, options.judging, Pass::default())?;
    Ok(report)
}

/// The first violation `report` recorded, as an error.
fn first_violation(report: Report) -> Result<(), Violation> {
    match report.violations.into_iter().next() {
        Some(v) => Err(v),
        None => Ok(()),
    }
}

/// Decodes and judges a file header from its 64 bytes, as the decode pass of a
/// whole file does (for readers that see the header alone, such as the sequential
/// reader); the first violation `judging` records is the error.
pub(crate) fn decode_file_header(head: &[u8], judging: Judging) -> Result<FileHeader, Violation> {
    let mut report = Report::for_pass(judging, Pass::reader(Vec::new()));
    if container::check_magic(head, head.len() as u64, &mut report) {
        match read_from::<FileHeader>(head) {
            Ok((h, _)) => {
                container::check_header(&h, &mut report);
                first_violation(report)?;
                return Ok(h);
            }
            Err(e) => report.violation(
                &HF_FILE_SIZE,
                0,
                format!("the file header does not decode: {}", error_text(&e)),
            ),
        }
    }
    first_violation(report)?;
    Err(Violation::new(&HF_HDR_MAGIC, 0, "not a HRRYFILE header"))
}

/// Judges the trailer `t` of a file of `len` bytes with header `h` on its own
/// fields, as the decode pass of a whole file does (for readers that see the
/// trailer alone, such as the sequential reader); the first violation `judging`
/// records is the error.
pub(crate) fn judge_trailer(
    h: &FileHeader,
    t: &Trailer,
    len: u64,
    judging: Judging,
) -> Result<(), Violation> {
    let mut report = Report::for_pass(judging, Pass::reader(Vec::new()));
    container::judge_trailer(h, t, len, &mut report);
    first_violation(report)
}

/// Decodes and judges one descriptor from exactly its bytes (starting at absolute
/// offset `at`): the fixed header, then the fields, then the descriptor's own
/// rules, as the walk of a file's region does; the first violation `judging`
/// records (and `pass` does not let pass) is the error.
pub(crate) fn decode_descriptor(
    bytes: &[u8],
    at: u64,
    limits: &Limits,
    judging: Judging,
    pass: &Pass,
) -> Result<TensorDescriptor, Violation> {
    let d = super::header::descriptor(bytes, at, limits)?;
    judge_descriptor(&d, at, judging, pass)?;
    Ok(d)
}

/// Judges a decoded descriptor (at absolute offset `at`) by its own rules, as the
/// walk of a file's region does; the first violation `judging` records (and
/// `pass` does not let pass) is the error.
pub(crate) fn judge_descriptor(
    d: &TensorDescriptor,
    at: u64,
    judging: Judging,
    pass: &Pass,
) -> Result<(), Violation> {
    let mut report = Report::for_pass(judging, pass.clone());
    super::descriptor::check_descriptor(d, at, &mut report);
    first_violation(report)
}

impl Pass {
    /// A reader's pass: stopping at the first violation, letting `allowed` pass.
    pub(crate) fn reader(allowed: Vec<&'static str>) -> Self {
        Pass {
            allowed,
            allow_all: false,
            first_only: true,
        }
    }
}

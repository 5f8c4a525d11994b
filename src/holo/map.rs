//! Where the parts of an archive lie, as far as its structure can be followed,
//! violations or not: what a byte map (`hrry report`) draws and what comparing two
//! archives (`hrry diff`) looks inside.

use std::ops::Range;

use crate::source::ReadAt;
use crate::validate::{Options, Report};

use super::types::{Fingerprint, SectionRef};
use super::walk::walk_source;

/// The parts of a `.holo` archive found by one validating pass
/// ([`map_source`]): the sections the table check accepted, and inside them the
/// Extension values and Weights bodies that decoded. Ranges are absolute byte
/// offsets into the archive.
#[derive(Clone, Debug, Default)]
pub struct ArchiveMap {
    /// The sections, in table order (entries the table checks refused are left
    /// out: their violations say why).
    pub sections: Vec<SectionRef>,
    /// Each Extension's key and the range of its value.
    pub extensions: Vec<(String, Range<u64>)>,
    /// Each Weights entry's fingerprint and the range of its body, in entry order.
    pub weights: Vec<(Fingerprint, Range<u64>)>,
}

/// Validates the archive `source` holds (as [`crate::Format::validate_source`]
/// does, one pass) and returns the report with the archive's map, `None` when
/// its header or section table cannot be followed. A failed read is returned
/// instead.
pub fn map_source(
    source: &dyn ReadAt,
    options: &Options,
) -> std::io::Result<(Report, Option<ArchiveMap>)> {
    let (report, index) = walk_source(source, options.judging)?;
    let wide = |r: &Range<usize>| r.start as u64..r.end as u64;
    let map = index.map(|index| ArchiveMap {
        sections: index.sections.clone(),
        extensions: index
            .extensions
            .iter()
            .map(|(k, r)| (k.clone(), wide(r)))
            .collect(),
        weights: index.weights.iter().map(|(f, r)| (*f, wide(r))).collect(),
    });
    Ok((report, map))
}

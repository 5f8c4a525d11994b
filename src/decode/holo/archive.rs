//! What one decode pass over an archive found, and the value types it is made of.

use std::collections::HashMap;
use std::ops::Range;

use crate::schema::holo::{HoloHeader, SectionKind, ShapeEntry as ShapeDescriptor};
use crate::validate::Report;

use super::super::input::Input;

/// A 32-byte BLAKE3 content fingerprint.
pub type Fingerprint = [u8; 32];

/// One entry of the section table, with a known kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SectionRef {
    /// The section kind.
    pub kind: SectionKind,
    /// Absolute offset of the payload.
    pub offset: u64,
    /// Payload length in bytes.
    pub length: u64,
}

/// A model input or output: which workspace slot it maps to, its name, element
/// type and shape.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct PortDescriptor {
    /// Semantic name (`input_ids`, `logits`, …); empty for an unnamed port.
    pub name: String,
    /// Workspace slot.
    pub slot: u32,
    /// Total element count (the product of `shape` when the shape is known).
    pub element_count: u64,
    /// Element type code.
    pub dtype: u8,
    /// Row-major dimensions; empty when the rank is unknown.
    pub shape: Vec<u64>,
}

/// Lowercase hexadecimal of `bytes`.
#[doc(hidden)]
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0xF)]));
    }
    s
}

/// Where a constant's bytes are.
#[derive(Clone, Debug)]
pub(crate) enum ConstantBody {
    /// Inline, at this range of the archive.
    Inline(Range<usize>),
    /// In Weights, entry `weight` (an index into [`DecodedArchive::weights`]);
    /// `None` until resolved, and when Weights does not hold the fingerprint.
    Reference {
        fingerprint: Fingerprint,
        weight: Option<usize>,
    },
}

/// A decoded constant entry.
#[derive(Clone, Debug)]
pub(crate) struct ConstantEntry {
    pub slot: u32,
    pub dtype: u8,
    pub body: ConstantBody,
}

/// What one decode pass over an archive found, as ranges into its bytes.
#[derive(Clone, Debug, Default)]
pub(crate) struct DecodedArchive {
    pub header: HoloHeader,
    pub fingerprint: Fingerprint,
    /// The sections the table checks accepted, in table order.
    pub sections: Vec<SectionRef>,
    pub inputs: Vec<PortDescriptor>,
    pub outputs: Vec<PortDescriptor>,
    pub extensions: Vec<(String, Range<usize>)>,
    pub weights: Vec<(Fingerprint, Range<usize>)>,
    pub weight_index: HashMap<Fingerprint, usize>,
    pub constants: Vec<ConstantEntry>,
    pub schedule: Option<Vec<Vec<u32>>>,
    pub exec_plan: Option<Vec<Vec<u32>>>,
    pub shape_registry: Option<Vec<ShapeDescriptor>>,
}

/// Charges the growth of `v` by `additional` items to the budget of `input`;
/// when it does not fit, records the refusal, stops the pass and returns false.
pub(super) fn grow<T>(
    input: &Input<'_>,
    v: &mut Vec<T>,
    additional: usize,
    what: impl FnOnce() -> String,
    at: u64,
    report: &mut Report,
) -> bool {
    match input.budget().grow(v, additional, what, at) {
        Ok(()) => true,
        Err(refusal) => {
            report.record(refusal);
            report.fatal = true;
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_digits() {
        assert_eq!(hex(&[0x00, 0xAB, 0x7F]), "00ab7f");
    }
}

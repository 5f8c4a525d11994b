//! Shrinking a case that shows a disagreement, while it keeps showing it (the
//! caller's `keeps` says whether bytes still have the case's signature): first on
//! a smaller base file, then with fewer edits, then by re-writing the base file
//! smaller (a HRRYFILE: tensors and KV entries dropped, shapes shrunk, the writer's
//! default options; the edits moved to the same places of the re-written file),
//! then with the tail cut and byte ranges zeroed, so that what is handed back is
//! small and reads easily in a hex dump.

use super::model::Model;
use super::mutation;
use super::{Case, Explorer};
use crate::Format;

/// How many random attempts each smaller base file gets (after the case's own
/// edits moved onto it).
const TRIES_PER_BASE: u64 = 48;

/// How many smaller base files are tried.
const SMALLER_BASES: usize = 6;

/// Smallest range zeroed in one attempt.
const MIN_ZERO_RANGE: usize = 8;

/// What shrinking gave.
#[derive(Clone, Debug)]
pub struct Shrunk {
    /// The case after the smaller-base and fewer-edits steps (its edits are those
    /// of `base` when the base was re-written).
    pub case: Case,
    /// The base file the edits apply to: the case's base, or that base re-written.
    pub base: Vec<u8>,
    /// The re-writing steps taken, in order (e.g. `tensor "t2" dropped`).
    pub rewrites: Vec<String>,
    /// The final bytes (the edited base, cut and with ranges zeroed).
    pub bytes: Vec<u8>,
    /// How many times `keeps` was asked.
    pub attempts: usize,
}

/// Shrinks `case` of `explorer`, asking `keeps` at most `budget` times.
pub fn shrink(
    explorer: &Explorer,
    case: &Case,
    budget: usize,
    keeps: &mut dyn FnMut(&[u8]) -> bool,
) -> Shrunk {
    let mut attempts = 0;
    let mut ask = |bytes: &[u8], attempts: &mut usize| -> bool {
        if *attempts >= budget {
            return false;
        }
        *attempts += 1;
        keeps(bytes)
    };
    let mut case = case.clone();
    // 1. The same disagreement on a smaller base of the same format.
    let bases = explorer.bases();
    let here = &bases[case.base];
    let mut smaller: Vec<usize> = (0..bases.len())
        .filter(|&i| bases[i].format == here.format && bases[i].bytes.len() < here.bytes.len())
        .collect();
    smaller.sort_by_key(|&i| (bases[i].bytes.len(), i));
    'bases: for &b in smaller.iter().take(SMALLER_BASES) {
        let moved = [
            explorer.transplant_parts(&case, b),
            Some(explorer.transplant(&case, b, false)),
            Some(explorer.transplant(&case, b, true)),
        ];
        let tries = explorer.cases_on(b, case.index, TRIES_PER_BASE);
        for candidate in moved.into_iter().flatten().chain(tries) {
            if attempts >= budget {
                break 'bases;
            }
            if ask(&explorer.bytes(&candidate), &mut attempts) {
                case = candidate;
                break 'bases;
            }
        }
    }
    // 2. Fewer edits: drop each in turn while the signature holds.
    let mut changed = true;
    while changed && case.mutations.len() > 1 {
        changed = false;
        for i in (0..case.mutations.len()).rev() {
            let mut fewer = case.clone();
            fewer.mutations.remove(i);
            if ask(&explorer.bytes(&fewer), &mut attempts) {
                case = fewer;
                changed = true;
            }
        }
    }
    // 3. The base re-written smaller, the edits moved along.
    let mut base = explorer.bases()[case.base].bytes.clone();
    let mut rewrites = Vec::new();
    if explorer.bases()[case.base].format == Format::HrryFile {
        let mut model = Model::of_file(&base);
        'rewrite: while let Some(m) = model.take() {
            for (what, smaller) in m.smaller() {
                if attempts >= budget {
                    break 'rewrite;
                }
                let Some(new_base) = smaller.write_valid() else {
                    continue;
                };
                let edits = mutation::move_edits(&base, &new_base, &case.mutations);
                if ask(&mutation::apply(&new_base, &edits), &mut attempts) {
                    base = new_base;
                    case.mutations = edits;
                    rewrites.push(what);
                    model = Some(smaller);
                    continue 'rewrite;
                }
            }
        }
    }
    let mut bytes = mutation::apply(&base, &case.mutations);
    // 4. The tail cut: halving the cut down to one byte.
    let mut cut = bytes.len() / 2;
    while cut > 0 && attempts < budget {
        let shorter = &bytes[..bytes.len() - cut];
        if ask(shorter, &mut attempts) {
            bytes.truncate(bytes.len() - cut);
            cut = cut.min(bytes.len() / 2);
        } else {
            cut /= 2;
        }
    }
    // 5. Byte ranges zeroed, halving the range down to MIN_ZERO_RANGE.
    let mut range = (bytes.len() / 2).max(MIN_ZERO_RANGE);
    while range >= MIN_ZERO_RANGE && attempts < budget {
        let mut at = 0;
        while at < bytes.len() && attempts < budget {
            let end = (at + range).min(bytes.len());
            if bytes[at..end].iter().any(|&b| b != 0) {
                let mut zeroed = bytes.clone();
                zeroed[at..end].fill(0);
                if ask(&zeroed, &mut attempts) {
                    bytes = zeroed;
                }
            }
            at = end;
        }
        range /= 2;
    }
    Shrunk {
        case,
        base,
        rewrites,
        bytes,
        attempts,
    }
}

#[cfg(test)]
mod tests {
    use super::super::Base;
    use super::*;
    use crate::Format;

    #[test]
    fn shrinks_to_a_smaller_base_and_fewer_edits() {
        let bases = vec![
            Base::new("big", Format::Stream, vec![1u8; 400]),
            Base::new("small", Format::Stream, vec![1u8; 40]),
        ];
        let x = Explorer::new(3, bases);
        // The "disagreement": a byte is not 1.
        let mut keeps = |b: &[u8]| b.iter().any(|&b| b != 1);
        let case = (0..1000)
            .filter_map(|i| x.case(i))
            .find(|c| c.base == 0 && keeps(&x.bytes(c)))
            .expect("a case changing a byte");
        let s = shrink(&x, &case, 500, &mut keeps);
        assert_eq!(s.case.base, 1, "moved to the smaller base");
        assert!(keeps(&s.bytes));
        assert!(s.bytes.len() <= 40);
        assert!(s.attempts <= 500);
        assert_eq!(s.case.mutations.len(), 1, "{:?}", s.case);
        assert!(s.bytes.iter().all(|&b| b == 0), "zeroed: {:?}", s.bytes);
    }
}

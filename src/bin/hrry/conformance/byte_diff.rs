//! The changes between two small files as aligned byte hunks (Myers' shortest edit
//! script over bytes), so that bytes inserted or removed show as one change rather
//! than as every byte after them differing.

use std::ops::Range;

/// One change: the bytes `old` of the first file became the bytes `new` of the
/// second (either may be empty: an insertion or a removal).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hunk {
    /// The range in the first file.
    pub old: Range<usize>,
    /// The range in the second file.
    pub new: Range<usize>,
}

/// Most edits searched for before giving up on alignment (the search costs time
/// proportional to the files' length times this, and memory to its square).
pub const MAX_EDITS: usize = 2048;

/// Hunks separated by fewer equal bytes than this are shown as one: a byte that
/// happens to match inside a rewritten field is not a separate change.
const MERGE_GAP: usize = 4;

/// The hunks turning `a` into `b`, in order; `None` when they differ by more than
/// [`MAX_EDITS`] inserted and removed bytes.
pub fn hunks(a: &[u8], b: &[u8]) -> Option<Vec<Hunk>> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (ma, mb) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    // One side's middle empty: a single insertion or removal (a truncated file),
    // whatever its length.
    if ma.is_empty() || mb.is_empty() {
        let hunk = Hunk {
            old: prefix..prefix + ma.len(),
            new: prefix..prefix + mb.len(),
        };
        return Some(if hunk.old.is_empty() && hunk.new.is_empty() {
            Vec::new()
        } else {
            vec![hunk]
        });
    }
    // Walk the edit script, turning each run of removals and insertions into a
    // hunk (offsets of the whole files).
    let script = edit_script(ma, mb)?;
    let mut raw: Vec<Hunk> = Vec::new();
    let (mut i, mut j) = (prefix, prefix);
    let mut open: Option<(usize, usize)> = None;
    for step in script.into_iter().chain(std::iter::once(Step::Same)) {
        match step {
            Step::Same => {
                if let Some((i0, j0)) = open.take() {
                    raw.push(Hunk {
                        old: i0..i,
                        new: j0..j,
                    });
                }
                i += 1;
                j += 1;
            }
            Step::Remove => {
                open.get_or_insert((i, j));
                i += 1;
            }
            Step::Insert => {
                open.get_or_insert((i, j));
                j += 1;
            }
        }
    }
    let mut hunks: Vec<Hunk> = Vec::new();
    for h in raw {
        match hunks.last_mut() {
            Some(last)
                if h.old.start - last.old.end < MERGE_GAP
                    && h.new.start - last.new.end < MERGE_GAP =>
            {
                last.old.end = h.old.end;
                last.new.end = h.new.end;
            }
            _ => hunks.push(h),
        }
    }
    Some(hunks)
}

/// The bytes removed and inserted by `hunks`: how far apart two files are.
pub fn changed_bytes(hunks: &[Hunk]) -> usize {
    hunks.iter().map(|h| h.old.len() + h.new.len()).sum()
}

/// One step of an edit script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// The next byte is the same in both.
    Same,
    /// The next byte of the first is removed.
    Remove,
    /// The next byte of the second is inserted.
    Insert,
}

/// A shortest edit script from `a` to `b` (Myers' greedy algorithm, keeping each
/// round's furthest reaches for the walk back), or `None` past [`MAX_EDITS`].
fn edit_script(a: &[u8], b: &[u8]) -> Option<Vec<Step>> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    let max = (a.len() + b.len()).min(MAX_EDITS) as isize;
    // v[k + max]: the furthest x reached on diagonal k = x - y.
    let width = 2 * max as usize + 2;
    let mut v = vec![0isize; width];
    // rounds[d]: v's diagonals -d..=d after round d.
    let mut rounds: Vec<Vec<isize>> = Vec::new();
    let at = |k: isize| (k + max) as usize;
    let mut end = None;
    'search: for d in 0..=max {
        for k in (-d..=d).step_by(2) {
            let down = k == -d || (k != d && v[at(k - 1)] < v[at(k + 1)]);
            let mut x = if down { v[at(k + 1)] } else { v[at(k - 1)] + 1 };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[at(k)] = x;
            if x >= n && y >= m {
                rounds.push(v[at(-d)..=at(d)].to_vec());
                end = Some(d);
                break 'search;
            }
        }
        rounds.push(v[at(-d)..=at(d)].to_vec());
    }
    let d_end = end?;
    // Walk back from (n, m) through the rounds.
    let mut steps = Vec::new();
    let (mut x, mut y) = (n, m);
    for d in (1..=d_end).rev() {
        let k = x - y;
        let prev = &rounds[d as usize - 1];
        let reach = |k: isize| prev[(k + d - 1) as usize];
        let down = k == -d || (k != d && reach(k - 1) < reach(k + 1));
        let prev_k = if down { k + 1 } else { k - 1 };
        let prev_x = reach(prev_k);
        let prev_y = prev_x - prev_k;
        // The diagonal run that followed the edit.
        while x > prev_x && y > prev_y {
            steps.push(Step::Same);
            x -= 1;
            y -= 1;
        }
        steps.push(if down { Step::Insert } else { Step::Remove });
        x = prev_x;
        y = prev_y;
    }
    while x > 0 && y > 0 {
        steps.push(Step::Same);
        x -= 1;
        y -= 1;
    }
    steps.reverse();
    Some(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Applies `hunks` to `a`, taking the new bytes from `b`.
    fn apply(a: &[u8], b: &[u8], hunks: &[Hunk]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut at = 0;
        for h in hunks {
            out.extend_from_slice(&a[at..h.old.start]);
            out.extend_from_slice(&b[h.new.clone()]);
            at = h.old.end;
        }
        out.extend_from_slice(&a[at..]);
        out
    }

    #[test]
    fn an_insertion_is_one_hunk() {
        let a = b"0123456789abcdefghij";
        let b = b"01234XYZ56789abcdefghij";
        let h = hunks(a, b).unwrap();
        assert_eq!(
            h,
            vec![Hunk {
                old: 5..5,
                new: 5..8
            }]
        );
        assert_eq!(apply(a, b, &h), b);
    }

    #[test]
    fn a_removal_and_a_change_are_two_hunks() {
        let a = b"header-AAAA-middle-part-BBBBBBBB-tail";
        let b = b"header-AXAA-middle-part-tail";
        let h = hunks(a, b).unwrap();
        assert_eq!(h.len(), 2, "{h:?}");
        assert_eq!(apply(a, b, &h), b);
    }

    #[test]
    fn hunks_rebuild_the_second_file_from_the_first() {
        let mut seed = 7u32;
        let mut next = || {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (seed >> 16) as usize
        };
        for _ in 0..200 {
            let a: Vec<u8> = (0..next() % 64).map(|_| (next() % 4) as u8).collect();
            let mut b = a.clone();
            for _ in 0..next() % 4 {
                let at = next() % (b.len() + 1);
                match next() % 3 {
                    0 => b.insert(at, (next() % 4) as u8),
                    1 if at < b.len() => {
                        b.remove(at);
                    }
                    _ if at < b.len() => b[at] ^= 1,
                    _ => {}
                }
            }
            let h = hunks(&a, &b).unwrap();
            assert_eq!(apply(&a, &b, &h), b, "{a:?} -> {b:?}: {h:?}");
        }
        assert_eq!(hunks(b"same", b"same").unwrap(), vec![]);
        assert_eq!(
            hunks(b"", b"ab").unwrap(),
            vec![Hunk {
                old: 0..0,
                new: 0..2
            }]
        );
    }

    #[test]
    fn a_long_cut_is_one_removal() {
        let a: Vec<u8> = (0..MAX_EDITS * 3).map(|i| i as u8).collect();
        let h = hunks(&a, &a[..100]).unwrap();
        assert_eq!(
            h,
            vec![Hunk {
                old: 100..a.len(),
                new: 100..100
            }]
        );
    }

    /// Bytes `old` became `new`: how many bytes the hunks remove and insert.
    #[test]
    fn changed_bytes_count_both_sides() {
        let h = hunks(b"abcdef", b"abXdef").unwrap();
        assert_eq!(changed_bytes(&h), 2);
    }

    #[test]
    fn files_too_different_are_not_aligned() {
        let a = vec![0u8; MAX_EDITS + 10];
        let b = vec![1u8; MAX_EDITS + 10];
        assert!(hunks(&a, &b).is_none());
    }
}

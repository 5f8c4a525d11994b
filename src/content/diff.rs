//! Comparing two model files: tensors only in one, tensors whose description
//! changed, metadata added, removed or changed, and the tensors' values compared in
//! logical order (so a tensor stored in another layout or format compares equal
//! when its values are equal).

use std::collections::HashMap;
use std::sync::mpsc;

use super::error::Error;
use super::open::ModelFile;
use super::values::{difference, differs, ValueKind, Values};
use crate::schema::KvValue;

/// What to compare.
#[derive(Clone, Copy, Debug, Default)]
pub struct DiffOptions {
    /// Compare the metadata and tensor descriptions only, reading no tensor data.
    pub metadata_only: bool,
    /// Largest absolute difference for two values to count as equal (0: exactly
    /// equal; NaN equals NaN).
    pub tolerance: f64,
}

/// One changed field of a tensor's description.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldChange {
    /// `dtype`, `shape`, `layout` or `quantization`.
    pub field: &'static str,
    /// In the first file.
    pub a: String,
    /// In the second file.
    pub b: String,
}

/// How the values of a tensor in both files compare.
#[derive(Clone, Debug, PartialEq)]
pub enum ContentDiff {
    /// Every value is equal (within the tolerance).
    Equal,
    /// Some values differ.
    Different {
        /// How many values differ.
        differing: u64,
        /// Row-major index of the first differing value.
        first_index: u64,
        /// The same as one index per dimension.
        first_position: Vec<u64>,
        /// The first differing value in the first file.
        a: f64,
        /// And in the second.
        b: f64,
        /// The largest absolute difference over all values (infinite when a NaN
        /// meets a number).
        max_abs_diff: f64,
    },
    /// The values were not compared, for this reason (different shapes, a type
    /// hrry cannot read).
    NotCompared(String),
}

/// A tensor in both files whose description or values differ.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorDiff {
    /// The tensor's name.
    pub name: String,
    /// Fields of the description that differ (storage: a different dtype, layout
    /// or quantization can still hold equal values).
    pub changes: Vec<FieldChange>,
    /// The values compared (`None` with [`DiffOptions::metadata_only`]).
    pub content: Option<ContentDiff>,
}

impl TensorDiff {
    /// Whether this makes the files different: different values, values that
    /// could not be compared, a different shape, or (values not compared) any
    /// change of description.
    pub fn is_difference(&self) -> bool {
        match &self.content {
            Some(ContentDiff::Equal) => self.changes.iter().any(|c| c.field == "shape"),
            Some(_) => true,
            None => !self.changes.is_empty(),
        }
    }
}

/// A metadata entry that differs.
#[derive(Clone, Debug, PartialEq)]
pub enum MetadataDiff {
    /// Only in the second file.
    Added {
        /// The key.
        key: String,
        /// Its value.
        value: KvValue,
    },
    /// Only in the first file.
    Removed {
        /// The key.
        key: String,
        /// Its value.
        value: KvValue,
    },
    /// In both, with different values.
    Changed {
        /// The key.
        key: String,
        /// The first file's value.
        a: KvValue,
        /// The second file's value.
        b: KvValue,
    },
}

/// The comparison of two model files.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Diff {
    /// Tensors only in the first file, in its order.
    pub only_in_a: Vec<String>,
    /// Tensors only in the second file, in its order.
    pub only_in_b: Vec<String>,
    /// Tensors in both with a changed description or values, in the first
    /// file's order.
    pub tensors: Vec<TensorDiff>,
    /// Tensors in both with nothing to report.
    pub equal_tensors: usize,
    /// Metadata entries that differ.
    pub metadata: Vec<MetadataDiff>,
    /// Whether the values were compared.
    pub content_compared: bool,
}

impl Diff {
    /// Whether the files hold the same tensors (values within the tolerance, and
    /// the same shapes) and metadata. Storage changes (dtype, layout, quantization)
    /// with equal values do not count; without a content comparison they do.
    pub fn is_equal(&self) -> bool {
        self.only_in_a.is_empty()
            && self.only_in_b.is_empty()
            && self.metadata.is_empty()
            && !self.tensors.iter().any(TensorDiff::is_difference)
    }
}

/// Compares `a` with `b`. Each file's tensor data is read once, in the first
/// file's tensor order, a piece at a time ([`super::PIECE`]), both files at once.
/// Failed reads are errors; a tensor whose values cannot be read is reported as
/// not compared.
pub fn diff(a: &ModelFile<'_>, b: &ModelFile<'_>, options: &DiffOptions) -> Result<Diff, Error> {
    let mut out = Diff {
        content_compared: !options.metadata_only,
        ..Diff::default()
    };
    let b_index: HashMap<&str, usize> = b
        .tensors()
        .iter()
        .enumerate()
        .rev()
        .map(|(i, t)| (t.name.as_str(), i))
        .collect();
    let a_names: HashMap<&str, usize> = a
        .tensors()
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.as_str(), i))
        .collect();
    for (ia, ta) in a.tensors().iter().enumerate() {
        let Some(&ib) = b_index.get(ta.name.as_str()) else {
            out.only_in_a.push(ta.name.clone());
            continue;
        };
        let tb = &b.tensors()[ib];
        let mut changes = Vec::new();
        let mut field = |field, x: String, y: String| {
            if x != y {
                changes.push(FieldChange { field, a: x, b: y });
            }
        };
        field("dtype", ta.dtype.clone(), tb.dtype.clone());
        field(
            "shape",
            format!("{:?}", ta.shape),
            format!("{:?}", tb.shape),
        );
        field("layout", ta.layout.clone(), tb.layout.clone());
        let quant = |q: &Option<String>| q.clone().unwrap_or_else(|| "none".into());
        field(
            "quantization",
            quant(&ta.quantization),
            quant(&tb.quantization),
        );
        let content = if options.metadata_only {
            None
        } else if ta.shape != tb.shape {
            Some(ContentDiff::NotCompared("the shapes differ".into()))
        } else {
            Some(compare_values(a, ia, b, ib, options.tolerance)?)
        };
        let t = TensorDiff {
            name: ta.name.clone(),
            changes,
            content,
        };
        if t.changes.is_empty() && matches!(t.content, None | Some(ContentDiff::Equal)) {
            out.equal_tensors += 1;
        } else {
            out.tensors.push(t);
        }
    }
    out.only_in_b = b
        .tensors()
        .iter()
        .filter(|t| !a_names.contains_key(t.name.as_str()))
        .map(|t| t.name.clone())
        .collect();
    out.metadata = metadata_diff(a.metadata(), b.metadata());
    Ok(out)
}

/// The metadata entries that differ, the first file's keys in order, then the
/// keys only in the second.
fn metadata_diff(a: &[(String, KvValue)], b: &[(String, KvValue)]) -> Vec<MetadataDiff> {
    let first = |m: &[(String, KvValue)]| {
        let mut map: HashMap<String, KvValue> = HashMap::new();
        for (k, v) in m.iter().rev() {
            map.insert(k.clone(), v.clone());
        }
        map
    };
    let (ma, mb) = (first(a), first(b));
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (key, va) in a {
        if !seen.insert(key.as_str()) {
            continue;
        }
        match mb.get(key) {
            None => out.push(MetadataDiff::Removed {
                key: key.clone(),
                value: va.clone(),
            }),
            Some(vb) if vb != va => out.push(MetadataDiff::Changed {
                key: key.clone(),
                a: va.clone(),
                b: vb.clone(),
            }),
            Some(_) => {}
        }
    }
    let mut seen_b = std::collections::HashSet::new();
    for (key, vb) in b {
        if !ma.contains_key(key) && seen_b.insert(key.as_str()) {
            out.push(MetadataDiff::Added {
                key: key.clone(),
                value: vb.clone(),
            });
        }
    }
    out
}

/// What comparing runs of values has found so far.
struct Tally {
    tolerance: f64,
    index: u64,
    differing: u64,
    first: Option<(u64, f64, f64)>,
    max_abs_diff: f64,
    xa: Vec<f64>,
    xb: Vec<f64>,
}

impl Tally {
    /// Compares two runs of the same number of values.
    fn run(&mut self, a: Values<'_>, b: Values<'_>) {
        let n = a.len();
        if a.kind == b.kind && a.bytes == b.bytes {
            self.index += n as u64;
            return;
        }
        a.decode_into(&mut self.xa);
        b.decode_into(&mut self.xb);
        for (k, (&x, &y)) in self.xa.iter().zip(&self.xb).enumerate() {
            let d = difference(x, y);
            if d > self.max_abs_diff {
                self.max_abs_diff = d;
            }
            if differs(&a, k, x, &b, k, y, self.tolerance) {
                self.differing += 1;
                if self.first.is_none() {
                    self.first = Some((self.index + k as u64, x, y));
                }
            }
        }
        self.index += n as u64;
    }
}

/// Values of `kind` from `bytes`, starting at value `from`, `n` of them.
fn sub(kind: ValueKind, bytes: &[u8], from: usize, n: usize) -> Values<'_> {
    let size = kind.size();
    Values {
        kind,
        bytes: &bytes[from * size..(from + n) * size],
    }
}

/// Compares the values of tensor `ia` of `a` with those of tensor `ib` of `b`:
/// `b`'s are read on a second thread, a few pieces ahead.
fn compare_values(
    a: &ModelFile<'_>,
    ia: usize,
    b: &ModelFile<'_>,
    ib: usize,
    tolerance: f64,
) -> Result<ContentDiff, Error> {
    let mut tally = Tally {
        tolerance,
        index: 0,
        differing: 0,
        first: None,
        max_abs_diff: 0.0,
        xa: Vec::new(),
        xb: Vec::new(),
    };
    let outcome = std::thread::scope(|scope| {
        let (tx, rx) = mpsc::sync_channel::<(ValueKind, Vec<u8>)>(2);
        let reader = scope.spawn(move || {
            b.read_values(ib, &mut |v| {
                tx.send((v.kind, v.bytes.to_vec()))
                    .map_err(|_| super::error::stopped())
            })
        });
        // The current piece of b's values and how many of them were used.
        let mut pending: Option<(ValueKind, Vec<u8>)> = None;
        let mut used = 0usize;
        let mut short = false;
        let a_result = a.read_values(ia, &mut |va| {
            let mut done = 0;
            let total = va.len();
            while done < total {
                let have = pending
                    .as_ref()
                    .map_or(0, |(k, bytes)| bytes.len() / k.size() - used);
                if have == 0 {
                    match rx.recv() {
                        Ok(p) => {
                            pending = Some(p);
                            used = 0;
                            continue;
                        }
                        Err(_) => {
                            short = true;
                            return Err(super::error::stopped());
                        }
                    }
                }
                let Some((kb, bytes)) = pending.as_ref() else {
                    continue;
                };
                if va.kind.is_numeric() != kb.is_numeric() {
                    return Err(Error::Unsupported(
                        "values of an extension type meet numbers".into(),
                    ));
                }
                let n = have.min(total - done);
                tally.run(sub(va.kind, va.bytes, done, n), sub(*kb, bytes, used, n));
                done += n;
                used += n;
            }
            Ok(())
        });
        // Values of b left over mean b holds more values than a.
        let left = pending
            .as_ref()
            .is_some_and(|(k, bytes)| bytes.len() / k.size() > used);
        let more = a_result.is_ok() && (left || rx.recv().is_ok());
        drop(rx);
        let b_result = reader
            .join()
            .unwrap_or_else(|_| Err(Error::Format("the reading thread failed".into())));
        (a_result, b_result, short || more)
    });
    let (a_result, b_result, count_mismatch) = outcome;
    for r in [a_result, b_result] {
        match r {
            Ok(()) => {}
            Err(e) if super::error::is_stopped(&e) => {}
            Err(Error::Unsupported(message)) => return Ok(ContentDiff::NotCompared(message)),
            Err(e) => return Err(e),
        }
    }
    if count_mismatch {
        return Ok(ContentDiff::NotCompared(
            "the tensors hold different numbers of values".into(),
        ));
    }
    Ok(match tally.first {
        None => ContentDiff::Equal,
        Some((first_index, x, y)) => ContentDiff::Different {
            differing: tally.differing,
            first_index,
            first_position: unravel(first_index, &a.tensors()[ia].shape),
            a: x,
            b: y,
            max_abs_diff: tally.max_abs_diff,
        },
    })
}

/// The position of row-major index `i` in `shape` (one index per dimension).
fn unravel(mut i: u64, shape: &[u64]) -> Vec<u64> {
    let mut out = vec![0; shape.len()];
    for (d, &n) in shape.iter().enumerate().rev() {
        if n > 0 {
            out[d] = i % n;
            i /= n;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unravels_row_major() {
        assert_eq!(unravel(5, &[2, 3]), [1, 2]);
        assert_eq!(unravel(0, &[]), Vec::<u64>::new());
        assert_eq!(unravel(23, &[2, 3, 4]), [1, 2, 3]);
    }
}

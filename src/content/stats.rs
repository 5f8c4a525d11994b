//! Statistics of a model file: parameter counts per element type (logical
//! elements and stored bytes, quantization-aware), and per tensor the minimum,
//! maximum, mean, standard deviation, NaN, infinity and zero counts and a small
//! histogram, computed a piece at a time; and how they compare with a HRRYFILE
//! tensor's own statistics section.

use super::error::Error;
use super::open::{ModelFile, TensorInfo};
use super::values::Values;
use crate::schema::Statistics;

/// Bins of [`TensorStats::histogram`].
pub const HISTOGRAM_BINS: usize = 24;
/// Values kept for the histogram: every k-th finite value, k doubling whenever
/// twice this many are held (a fixed bound, whatever the tensor's size).
const SAMPLE: usize = 4096;

/// The tensors, elements and bytes of one element type.
#[derive(Clone, Debug, PartialEq)]
pub struct DtypeCount {
    /// The element type, with the quantization scheme of a quantized one
    /// (`int4 (per-block affine)`).
    pub dtype: String,
    /// Tensors of this type.
    pub tensors: u64,
    /// Their logical elements (parameters).
    pub elements: u64,
    /// Bytes their data takes in the file.
    pub stored_bytes: u64,
}

/// Parameter counts per element type, most elements first.
pub fn parameter_counts(file: &ModelFile<'_>) -> Vec<DtypeCount> {
    let mut out: Vec<DtypeCount> = Vec::new();
    for t in file.tensors() {
        let dtype = match &t.quantization {
            Some(q) if !q.starts_with("ggml") => format!("{} ({q})", t.dtype),
            _ => t.dtype.clone(),
        };
        let i = match out.iter().position(|c| c.dtype == dtype) {
            Some(i) => i,
            None => {
                out.push(DtypeCount {
                    dtype,
                    tensors: 0,
                    elements: 0,
                    stored_bytes: 0,
                });
                out.len() - 1
            }
        };
        let c = &mut out[i];
        c.tensors += 1;
        c.elements = c.elements.saturating_add(t.elements.unwrap_or(0));
        c.stored_bytes = c.stored_bytes.saturating_add(t.stored_bytes);
    }
    out.sort_by(|a, b| b.elements.cmp(&a.elements).then(a.dtype.cmp(&b.dtype)));
    out
}

/// A histogram of a tensor's finite values over `[low, high]` in equal bins,
/// counted over a systematic sample of at most `2 × 4096` values.
#[derive(Clone, Debug, PartialEq)]
pub struct Histogram {
    /// Lower edge of the first bin (the minimum).
    pub low: f64,
    /// Upper edge of the last bin (the maximum).
    pub high: f64,
    /// Sampled values per bin.
    pub counts: Vec<u64>,
}

/// Statistics of one tensor's values (a quantized tensor's dequantized values; a
/// complex tensor's real and imaginary parts as values of their own).
#[derive(Clone, Debug, PartialEq)]
pub struct TensorStats {
    /// Values read.
    pub count: u64,
    /// NaN values.
    pub nan: u64,
    /// Infinite values.
    pub inf: u64,
    /// Values equal to zero (either sign).
    pub zeros: u64,
    /// Smallest finite value (NaN when there is none).
    pub min: f64,
    /// Largest finite value (NaN when there is none).
    pub max: f64,
    /// Mean of the finite values (NaN when there is none).
    pub mean: f64,
    /// Population standard deviation of the finite values (NaN when there is none).
    pub std: f64,
    /// Distribution of the finite values.
    pub histogram: Histogram,
}

/// Running statistics, fed runs of values.
#[derive(Clone, Debug)]
pub struct StatsAccumulator {
    count: u64,
    nan: u64,
    inf: u64,
    zeros: u64,
    finite: u64,
    min: f64,
    max: f64,
    mean: f64,
    m2: f64,
    sample: Vec<f64>,
    stride: u64,
    seen: u64,
    decoded: Vec<f64>,
}

impl Default for StatsAccumulator {
    fn default() -> Self {
        StatsAccumulator {
            count: 0,
            nan: 0,
            inf: 0,
            zeros: 0,
            finite: 0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            mean: 0.0,
            m2: 0.0,
            sample: Vec::new(),
            stride: 1,
            seen: 0,
            decoded: Vec::new(),
        }
    }
}

impl StatsAccumulator {
    /// Adds a run of values.
    pub fn add(&mut self, values: Values<'_>) {
        // Decoded a few thousand at a time, so that the two passes of `add_f64`
        // find them in cache.
        let mut decoded = std::mem::take(&mut self.decoded);
        let size = values.kind.size().max(1);
        for run in values.bytes.chunks(4096 * size) {
            Values {
                kind: values.kind,
                bytes: run,
            }
            .decode_into(&mut decoded);
            self.add_f64(&decoded);
        }
        self.decoded = decoded;
    }

    /// Adds values given as `f64`.
    pub fn add_f64(&mut self, values: &[f64]) {
        self.count += values.len() as u64;
        // One pass for the counts, extremes and sum; a second, over the same
        // values still in cache, for the squared deviations from this run's mean
        // (merged with the running ones: stable where sum-of-squares is not).
        let (mut n, mut sum) = (0u64, 0.0f64);
        let (mut lo, mut hi) = (self.min, self.max);
        for &v in values {
            if v.is_finite() {
                n += 1;
                sum += v;
                lo = lo.min(v);
                hi = hi.max(v);
                if v == 0.0 {
                    self.zeros += 1;
                }
            } else if v.is_nan() {
                self.nan += 1;
            } else {
                self.inf += 1;
            }
        }
        self.min = lo;
        self.max = hi;
        if n == 0 {
            return;
        }
        let run_mean = sum / n as f64;
        let run_m2: f64 = values
            .iter()
            .filter(|v| v.is_finite())
            .map(|&v| (v - run_mean) * (v - run_mean))
            .sum();
        let total = self.finite + n;
        let delta = run_mean - self.mean;
        self.mean += delta * n as f64 / total as f64;
        self.m2 += run_m2 + delta * delta * (self.finite as f64) * (n as f64) / total as f64;
        self.finite = total;
        for &v in values.iter().filter(|v| v.is_finite()) {
            if self.seen.is_multiple_of(self.stride) {
                self.sample.push(v);
                if self.sample.len() >= 2 * SAMPLE {
                    let mut i = 0;
                    self.sample.retain(|_| {
                        i += 1;
                        i % 2 == 1
                    });
                    self.stride *= 2;
                }
            }
            self.seen += 1;
        }
    }

    /// The statistics of every value added.
    pub fn finish(&self) -> TensorStats {
        let none = self.finite == 0;
        let pick = |v: f64| if none { f64::NAN } else { v };
        let mut counts = vec![0u64; HISTOGRAM_BINS];
        if !none {
            let width = self.max - self.min;
            for &v in &self.sample {
                let bin = if width > 0.0 {
                    (((v - self.min) / width) * HISTOGRAM_BINS as f64) as usize
                } else {
                    0
                };
                counts[bin.min(HISTOGRAM_BINS - 1)] += 1;
            }
        }
        TensorStats {
            count: self.count,
            nan: self.nan,
            inf: self.inf,
            zeros: self.zeros,
            min: pick(self.min),
            max: pick(self.max),
            mean: pick(self.mean),
            std: pick((self.m2 / self.finite.max(1) as f64).max(0.0).sqrt()),
            histogram: Histogram {
                low: pick(self.min),
                high: pick(self.max),
                counts,
            },
        }
    }
}

/// The statistics of tensor `index` of `file`, its values read once, a piece at
/// a time. A tensor whose values cannot be read, or are not numbers, is an
/// [`Error::Unsupported`].
pub fn tensor_stats(file: &ModelFile<'_>, index: usize) -> Result<TensorStats, Error> {
    let mut acc = StatsAccumulator::default();
    file.read_values(index, &mut |v| {
        if !v.kind.is_numeric() {
            return Err(Error::Unsupported(
                "the values of an extension type are not numbers".into(),
            ));
        }
        acc.add(v);
        Ok(())
    })?;
    Ok(acc.finish())
}

/// The statistics of every tensor of `file` ([`tensor_stats`]), in file order,
/// computed on this thread and up to `extra_threads` more, each taking the next
/// tensor not yet taken: memory is what reading one tensor holds, once per thread.
/// After a failed read of the file (an error other than [`Error::Unsupported`]) no
/// further tensor is started; the tensors not computed are an [`Error::Io`] of kind
/// `Interrupted`, after the failure in file order.
pub fn file_stats(file: &ModelFile<'_>, extra_threads: usize) -> Vec<Result<TensorStats, Error>> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Mutex;

    let count = file.tensors().len();
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let results: Mutex<Vec<Option<Result<TensorStats, Error>>>> =
        Mutex::new((0..count).map(|_| None).collect());
    let extra = extra_threads.min(count.saturating_sub(1));
    crate::workers::run_on_threads("hrry-stats", extra, || loop {
        if failed.load(Ordering::Relaxed) {
            break;
        }
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= count {
            break;
        }
        let r = tensor_stats(file, i);
        if matches!(r, Err(ref e) if !matches!(e, Error::Unsupported(_))) {
            failed.store(true, Ordering::Relaxed);
        }
        let mut all = results.lock().unwrap_or_else(|e| e.into_inner());
        all[i] = Some(r);
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(super::error::stopped())))
        .collect()
}

/// A field of a tensor's statistics section that disagrees with its values.
#[derive(Clone, Debug, PartialEq)]
pub struct StatisticsMismatch {
    /// The tensor's name.
    pub tensor: String,
    /// The field (`nnz`, `value_min`, …).
    pub field: &'static str,
    /// What the section says.
    pub stored: f64,
    /// What the values give.
    pub computed: f64,
}

impl std::fmt::Display for StatisticsMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "tensor {:?}: the statistics section's {} is {}, the values give {}",
            self.tensor, self.field, self.stored, self.computed
        )
    }
}

/// Compares the statistics section of `info` (if any) with `stats`: every field
/// its `computed_mask` marks valid, floats within a relative 1e-5 (the writer may
/// have summed in another order or precision). A section that disagrees is a
/// finding to report, nothing more: the spec makes statistics advisory.
pub fn check_statistics(info: &TensorInfo, stats: &TensorStats) -> Vec<StatisticsMismatch> {
    let Some(s) = &info.statistics else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut check = |mask: u32, field: &'static str, stored: f64, computed: f64, exact: bool| {
        if s.computed_mask & mask == 0 {
            return;
        }
        let scale = stored.abs().max(computed.abs()).max(1.0);
        let agree = if exact {
            stored == computed
        } else {
            (stored.is_nan() && computed.is_nan()) || (stored - computed).abs() <= 1e-5 * scale
        };
        if !agree {
            out.push(StatisticsMismatch {
                tensor: info.name.clone(),
                field,
                stored,
                computed,
            });
        }
    };
    let nnz = stats.count - stats.zeros;
    check(Statistics::NNZ_VALID, "nnz", s.nnz as f64, nnz as f64, true);
    let ratio = if stats.count == 0 {
        0.0
    } else {
        stats.zeros as f64 / stats.count as f64
    };
    check(
        Statistics::SPARSITY_VALID,
        "sparsity_ratio",
        s.sparsity_ratio,
        ratio,
        false,
    );
    check(
        Statistics::VALUE_RANGE_VALID,
        "value_min",
        s.value_min,
        stats.min,
        false,
    );
    check(
        Statistics::VALUE_RANGE_VALID,
        "value_max",
        s.value_max,
        stats.max,
        false,
    );
    let abs_max = stats.min.abs().max(stats.max.abs());
    check(
        Statistics::VALUE_RANGE_VALID,
        "value_abs_max",
        s.value_abs_max,
        abs_max,
        false,
    );
    check(
        Statistics::VALUE_STATS_VALID,
        "value_mean",
        s.value_mean,
        stats.mean,
        false,
    );
    check(
        Statistics::VALUE_STATS_VALID,
        "value_stddev",
        s.value_stddev,
        stats.std,
        false,
    );
    let flag = |b: bool| f64::from(u8::from(b));
    check(
        Statistics::NAN_INF_VALID,
        "has_nan",
        f64::from(s.has_nan),
        flag(stats.nan > 0),
        true,
    );
    check(
        Statistics::NAN_INF_VALID,
        "has_inf",
        f64::from(s.has_inf),
        flag(stats.inf > 0),
        true,
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_statistics_match_a_direct_computation() {
        let values: Vec<f64> = (0..50_000)
            .map(|i| ((i * 7919) % 1000) as f64 / 10.0 - 20.0)
            .collect();
        let mut acc = StatsAccumulator::default();
        for run in values.chunks(777) {
            acc.add_f64(run);
        }
        acc.add_f64(&[f64::NAN, f64::INFINITY, 0.0]);
        let s = acc.finish();
        let n = values.len() as f64 + 1.0;
        let mean = values.iter().sum::<f64>() / n;
        let var = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() + mean * mean) / n;
        assert_eq!(s.count, 50_003);
        assert_eq!((s.nan, s.inf), (1, 1));
        assert!((s.mean - mean).abs() < 1e-9, "{} {mean}", s.mean);
        assert!((s.std - var.sqrt()).abs() < 1e-9);
        assert_eq!((s.min, s.max), (-20.0, 79.9));
        assert!(s.histogram.counts.iter().sum::<u64>() <= 2 * SAMPLE as u64);
        assert!(s.histogram.counts.iter().all(|&c| c > 0));
        let empty = StatsAccumulator::default().finish();
        assert!(empty.min.is_nan() && empty.std.is_nan());
    }

    #[test]
    fn statistics_on_several_threads_are_those_of_one_tensor_at_a_time() {
        let mut w = crate::file::HrryWriter::new(Vec::new(), Default::default()).unwrap();
        for t in 0..9u16 {
            let values: Vec<f32> = (0..1000u16)
                .map(|i| f32::from(i * (t + 1)) - 500.0)
                .collect();
            w.write_row_major::<f32>(&format!("t{t}"), &[1000], &values)
                .unwrap();
        }
        w.write_row_major::<u8>("bytes", &[3], &[0, 1, 2]).unwrap();
        let file = ModelFile::open_source(w.finish().unwrap()).unwrap();
        let one: Vec<TensorStats> = (0..file.tensors().len())
            .map(|i| tensor_stats(&file, i).unwrap())
            .collect();
        for extra in [0, 1, 3, 20] {
            let all: Vec<TensorStats> = file_stats(&file, extra)
                .into_iter()
                .map(Result::unwrap)
                .collect();
            assert_eq!(all, one, "{extra} extra threads");
        }
    }
}

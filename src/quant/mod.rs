//! Dequantization of quantized tensors to float32 in logical row-major order.
//!
//! [`Dequantizer::new`] validates a tensor's quantization descriptor and parameter
//! buffers (every `QZ-`/`QT-`/`QC-`/`QB-`/`QN-`/`QM-` rule), checks that every element
//! lies inside the data buffer, and then dequantizes into a caller's slice
//! ([`Dequantizer::dequantize_into`]), a new vector ([`Dequantizer::to_vec`]) or row
//! by row ([`Dequantizer::dequantize_rows`], [`Dequantizer::row_chunks`]) for tensors
//! larger than memory. A "row" is one line along the last dimension.
//!
//! Dense layouts dequantize in logical row-major order. A block-paged tensor has no
//! stored logical order (its per-sequence token counts are not stored), so it
//! dequantizes its page pool: `num_pages * page_size` slots of `[num_heads,
//! head_dim]` in pool order, each scale (and zero point) of a per-block scheme
//! belonging to one page slot (layouts/block-paged.md § Element Lookup).
//!
//! The hot cases — per-block affine, NF4 and MXFP blocks along the last axis of a
//! row-major tensor — run block kernels: AVX2 on x86-64 when the CPU has AVX2 and
//! F16C (detected at run time), portable scalar code elsewhere. Everything else runs
//! the per-element reference (`scalar`). Every path gives bit-identical results.

pub mod element;
mod params;
pub mod quantize;
pub(crate) mod scalar;
#[cfg(target_arch = "x86_64")]
pub(crate) mod x86;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

use crate::decode::quant::Addressing;
use crate::error::Error;
use crate::model::element_type::{element_count, ElementType};
use crate::model::quant::{block_scale_size, BlockGeometry};
use crate::schema::{
    BlockPagedFields, LayoutFields, PerBlockAffine, QuantScheme, TensorDescriptor, FLAG_SYMMETRIC,
    LAYOUT_ROW_MAJOR,
};
use crate::validate::rules::quant::{QB_SIZE, QZ_DATA_SIZE};
use crate::validate::{Report, Rule};

use params::{BlockKind, BlockRows, Params, StoredTensor};
pub use quantize::{quantize_per_block, PerBlockOptions, Quantized};

/// The dequantizer's error for a tensor without a quantization section.
fn not_quantized() -> Error {
    Error::Unsupported("the tensor is not quantized (HAS_QUANTIZATION is clear)".into())
}

/// A buffer slice shorter than the descriptor requires: a violation of `rule` at
/// offset 0 (the dequantizer has no file position; its violations are located
/// relative to the descriptor, as the quantization checks report them).
fn buffer_too_short(rule: &'static Rule, index: usize, needed: u128, found: usize) -> Error {
    Error::invalid(
        rule,
        0,
        format!("buffer {index} holds {found} bytes, {needed} needed"),
    )
}

/// An output slice of the wrong length: the caller's mistake.
fn output_length(expected: u64, found: usize) -> Error {
    Error::Usage(format!("output holds {found} values, {expected} expected"))
}

/// A whole output much larger than the input (broadcasting strides).
fn too_large(bytes: u128, limit: u128) -> Error {
    Error::Unsupported(format!(
        "the output ({bytes} bytes) is over {limit} bytes; dequantize it in row chunks"
    ))
}

/// Which implementation dequantizes (all give identical bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Kernel {
    /// The fastest available: SIMD block kernels, else scalar block kernels, else
    /// the reference.
    #[default]
    Auto,
    /// Scalar block kernels where they apply, else the reference.
    Scalar,
    /// The per-element reference for every element.
    Reference,
}

/// Whether this CPU runs the SIMD block kernels [`Kernel::Auto`] prefers (x86-64
/// with AVX2 and F16C, detected at run time); elsewhere it runs the scalar ones.
pub fn simd_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        x86::available()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// How many dequantization calls on this thread have run a SIMD block kernel so far
/// (0 where [`simd_available`] is false). Compared before and after a call, it
/// shows which path a tensor took; single-threaded dequantization runs on the
/// calling thread.
pub fn simd_kernel_runs() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        x86::SIMD_RUNS.with(std::cell::Cell::get)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

/// A validated quantized tensor, ready to dequantize.
///
/// # Examples
///
/// ```
/// use hrry::model::ElementType;
/// use hrry::quant::{quantize_per_block, Dequantizer, PerBlockOptions};
///
/// // 2 rows of 64 values as int8 in blocks of 32, asymmetric, float32 scales.
/// let values: Vec<f32> = (0..128).map(|i| (i % 64) as f32 * 0.25).collect();
/// let options = PerBlockOptions {
///     storage: ElementType::Int8,
///     scale_type: ElementType::Float32,
///     symmetric: false,
///     ..PerBlockOptions::default()
/// };
/// let q = quantize_per_block(&values, &[2, 64], &options)?;
///
/// // In a real program the descriptor and buffers come from `HrryFile::tensor`.
/// let dq = Dequantizer::new(&q.descriptor, &q.buffer_slices())?;
/// assert_eq!((dq.rows(), dq.row_len()), (2, 64));
/// let all = dq.to_vec()?;
/// // Each block spans 0 to 7.75 in 255 steps: values come back within a step.
/// let step = 7.75 / 255.0;
/// assert!(values.iter().zip(&all).all(|(a, b)| (a - b).abs() <= step));
///
/// // Row by row, for tensors too large to expand at once.
/// let mut row = vec![0.0f32; 64];
/// dq.dequantize_rows(1, &mut row)?;
/// assert_eq!(row, all[64..]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Dequantizer<'a> {
    stored: StoredTensor<'a>,
    /// Set when the block kernels apply.
    fast: Option<BlockRows<'a>>,
    kernel: Kernel,
    /// Threads a call may use (0: one per available core).
    threads: usize,
    /// The fewest values a part of a split call is given.
    min_values_per_thread: usize,
    len: u64,
    row_len: u64,
}

/// Dequantizes the tensor `desc` with `buffers` (index = buffer table index) into
/// `out`, which must hold exactly one value per element.
pub fn dequantize_into(
    desc: &TensorDescriptor,
    buffers: &[&[u8]],
    out: &mut [f32],
) -> Result<(), Error> {
    Dequantizer::new(desc, buffers)?.dequantize_into(out)
}

/// Dequantizes the tensor `desc` with `buffers` into a new vector.
pub fn dequantize(desc: &TensorDescriptor, buffers: &[&[u8]]) -> Result<Vec<f32>, Error> {
    Dequantizer::new(desc, buffers)?.to_vec()
}

/// The slice `bytes[start..start + len]` of buffer `index`, or `BufferTooShort`.
fn param_slice<'a>(
    buffers: &[&'a [u8]],
    index: u32,
    start: u64,
    len: u64,
) -> Result<&'a [u8], Error> {
    let index = index as usize;
    let buf = buffers.get(index).copied().unwrap_or(&[]);
    let end = start.checked_add(len);
    let range = end
        .and_then(|e| Some(usize::try_from(start).ok()?..usize::try_from(e).ok()?))
        .and_then(|r| buf.get(r));
    range.ok_or_else(|| {
        buffer_too_short(
            &QB_SIZE,
            index,
            u128::from(start) + u128::from(len),
            buf.len(),
        )
    })
}

/// The scales and (empty when `symmetric`) zero points of a per-block affine
/// descriptor with `count` blocks; a shared buffer holds `[scales | zero_points]`.
fn block_params<'a>(
    buffers: &[&'a [u8]],
    d: &PerBlockAffine,
    count: u64,
    symmetric: bool,
) -> Result<(&'a [u8], &'a [u8]), Error> {
    let size = block_scale_size(d.scale_type_tag).unwrap_or(4);
    let overflow = || Error::Unsupported("scale count".to_string());
    let scale_bytes = count.checked_mul(size).ok_or_else(overflow)?;
    let scales = param_slice(buffers, d.scale_buffer_index, 0, scale_bytes)?;
    if symmetric {
        return Ok((scales, &[]));
    }
    let skip = if d.zero_point_buffer_index == d.scale_buffer_index {
        scale_bytes
    } else {
        0
    };
    let zp_bytes = count.checked_mul(4).ok_or_else(overflow)?;
    let zero_points = param_slice(buffers, d.zero_point_buffer_index, skip, zp_bytes)?;
    Ok((scales, zero_points))
}

impl<'a> Dequantizer<'a> {
    /// Validates `desc` and its `buffers` and prepares dequantization. A
    /// block-paged tensor is also checked against the block-paged layout rules, since
    /// its page pool is read through them.
    pub fn new(desc: &TensorDescriptor, buffers: &[&'a [u8]]) -> Result<Self, Error> {
        Self::build(desc, buffers, true)
    }

    /// [`Dequantizer::new`] for a tensor of a file that already passed validation
    /// ([`crate::validate_bytes`], strict or permissive: every quantization rule is a
    /// spec rule, binding in both modes). It skips the scans of parameter values
    /// (scales finite and non-zero, zero points in range, padding codes zero), whose
    /// cost grows with the tensor and can match the dequantization's own, and keeps
    /// every descriptor rule and every bounds check: on a file that did not pass, the
    /// worst outcome is wrong values (a NaN scale gives NaNs), never a panic or a
    /// read outside the buffers.
    pub fn prevalidated(desc: &TensorDescriptor, buffers: &[&'a [u8]]) -> Result<Self, Error> {
        Self::build(desc, buffers, false)
    }

    /// [`Dequantizer::new`]; `scan_values` runs the rules on parameter values.
    fn build(
        desc: &TensorDescriptor,
        buffers: &[&'a [u8]],
        scan_values: bool,
    ) -> Result<Self, Error> {
        let section = desc.quantization.as_ref().ok_or(not_quantized())?;
        let mut report = Report::default();
        // Without buffers, the quantization checks read the descriptor only.
        let values = scan_values.then_some(buffers);
        crate::decode::quant::check(desc, 0, values, &mut report);
        let paged = match &desc.layout {
            LayoutFields::BlockPaged(b) => {
                crate::decode::layout::check(desc, 0, Some(buffers), &mut report);
                Some(b)
            }
            LayoutFields::Composite(_) => {
                // A composite head has no data: the quantization checks leave its
                // section to the composite head's rules (TD-CMP-006).
                crate::decode::descriptor::check_composite_head(desc, 0, &mut report);
                if report.violations.is_empty() {
                    return Err(Error::Unsupported(
                        "a composite head has no data to dequantize".into(),
                    ));
                }
                None
            }
            _ => None,
        };
        if let Some(v) = report.violations.into_iter().next() {
            return Err(Error::Invalid(v));
        }
        let scheme = section
            .scheme()
            .ok_or_else(|| Error::Unsupported("the quantization descriptor is too short".into()))?;
        let unsupported = |what: &str| Error::Unsupported(what.to_string());
        let storage =
            ElementType::from_tag(desc.type_tag).ok_or_else(|| unsupported("type tag"))?;
        let width = storage
            .bit_width()
            .ok_or_else(|| unsupported("storage width"))?;
        let shape = match paged {
            Some(b) => pool_shape(b, &desc.shape).ok_or_else(|| unsupported("page pool shape"))?,
            None => desc.shape.clone(),
        };
        let len = element_count(&shape).ok_or_else(|| unsupported("dynamic or huge shape"))?;
        let symmetric = scheme.header().flags & FLAG_SYMMETRIC != 0;

        let (params, geometry) = match scheme {
            QuantScheme::PerTensorAffine(d) => (
                Params::PerTensor {
                    scale: d.scale,
                    zero_point: d.zero_point.into(),
                },
                None,
            ),
            QuantScheme::PerChannelAffine(d) => {
                let n = shape[d.axis as usize];
                let bytes = n
                    .checked_mul(4)
                    .ok_or_else(|| unsupported("channel count"))?;
                let scales = param_slice(buffers, d.scale_buffer_index, 0, bytes)?;
                let zero_points = if symmetric {
                    None
                } else {
                    let skip = if d.zero_point_buffer_index == d.scale_buffer_index {
                        bytes
                    } else {
                        0
                    };
                    Some(param_slice(
                        buffers,
                        d.zero_point_buffer_index,
                        skip,
                        bytes,
                    )?)
                };
                let axis = d.axis as usize;
                (
                    Params::PerChannel {
                        axis,
                        scales,
                        zero_points,
                    },
                    None,
                )
            }
            QuantScheme::PerBlockAffine(d) if paged.is_some() => {
                // Validation held axis 0 and block_size = page_size: a block is a slot.
                let (scales, zero_points) = block_params(buffers, d, shape[0], symmetric)?;
                let params = Params::PerSlot {
                    scale_type: d.scale_type_tag,
                    scales,
                    zero_points,
                };
                (params, None)
            }
            QuantScheme::PerBlockAffine(d) => {
                let g = BlockGeometry::new(&shape, d.axis as usize, d.block_size.into())
                    .ok_or_else(|| unsupported("block geometry"))?;
                let (scales, zero_points) = block_params(buffers, d, g.num_blocks, symmetric)?;
                let kind = BlockKind::Affine {
                    storage,
                    scale_type: d.scale_type_tag,
                };
                (
                    Params::Blocks {
                        kind,
                        geometry: g,
                        scales,
                        zero_points,
                    },
                    Some(g),
                )
            }
            QuantScheme::Nf4(d) | QuantScheme::Mxfp(d) => {
                let g = BlockGeometry::new(&shape, d.axis as usize, d.block_size.into())
                    .ok_or_else(|| unsupported("block geometry"))?;
                let (kind, size) = if matches!(scheme, QuantScheme::Nf4(_)) {
                    (BlockKind::Nf4, 4)
                } else {
                    (BlockKind::Mxfp { storage }, 1)
                };
                let scales = param_slice(buffers, d.scale_buffer_index, 0, g.num_blocks * size)?;
                (
                    Params::Blocks {
                        kind,
                        geometry: g,
                        scales,
                        zero_points: &[],
                    },
                    Some(g),
                )
            }
        };

        let storage_shape = geometry.map_or_else(|| shape.clone(), |g| g.storage_shape(&shape));
        let addressing = match paged {
            Some(_) => Addressing::row_major(&storage_shape, width),
            None => Addressing::new(desc, &storage_shape, width),
        };
        let addressing = addressing.ok_or_else(|| {
            Error::Unsupported(format!(
                "layout 0x{:02X}: dequantization handles the dense layouts (row-major, column-major, strided, tiled, Morton, Hilbert) and block-paged with well-formed fields",
                desc.layout_tag
            ))
        })?;
        let data = buffers.first().copied().unwrap_or(&[]);
        let needed = addressing
            .required_bytes(&storage_shape)
            .ok_or_else(|| unsupported("elements placed before the buffer start"))?;
        if (data.len() as u128) < needed {
            return Err(buffer_too_short(&QZ_DATA_SIZE, 0, needed, data.len()));
        }
        let row_len = shape.last().copied().unwrap_or(1);
        let mut dq = Dequantizer {
            stored: StoredTensor {
                shape,
                storage,
                addressing,
                data,
                params,
            },
            fast: None,
            kernel: Kernel::Auto,
            threads: 1,
            min_values_per_thread: MIN_VALUES_PER_THREAD,
            len,
            row_len,
        };
        dq.fast = dq.block_rows(desc);
        Ok(dq)
    }

    /// The block-kernel view, when the tensor is row-major, blocked along its last
    /// axis, and every block starts on a byte boundary.
    fn block_rows(&self, desc: &TensorDescriptor) -> Option<BlockRows<'a>> {
        let Params::Blocks {
            kind,
            geometry: g,
            scales,
            zero_points,
        } = self.stored.params
        else {
            return None;
        };
        let rank = self.stored.shape.len();
        if desc.layout_tag != LAYOUT_ROW_MAJOR || g.axis + 1 != rank {
            return None;
        }
        let width = u64::from(self.stored.addressing.bit_width);
        let block_bits = g.block_size.checked_mul(width)?;
        if block_bits % 8 != 0 {
            return None;
        }
        let start = usize::try_from(desc.byte_offset).ok()?;
        Some(BlockRows {
            kind,
            block_size: usize::try_from(g.block_size).ok()?,
            row_len: usize::try_from(g.axis_len).ok()?,
            blocks_per_row: usize::try_from(g.blocks_per_axis).ok()?,
            block_bytes: usize::try_from(block_bits / 8).ok()?,
            data: self.stored.data.get(start..)?,
            scales,
            zero_points,
        })
    }

    /// Chooses the implementation (for tests and benchmarks; all give the same bits).
    pub fn set_kernel(&mut self, kernel: Kernel) {
        self.kernel = kernel;
    }

    /// Lets each call use up to `threads` threads (0: one per available core;
    /// the default is 1, the calling thread only). Large outputs are split into runs
    /// of whole rows, one per thread, each at least [`MIN_VALUES_PER_THREAD`] values
    /// (see [`Dequantizer::set_min_values_per_thread`]);
    /// the values do not depend on the split.
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads;
    }

    /// Sets the fewest values one part of a split call is given (default
    /// [`MIN_VALUES_PER_THREAD`]; 0 counts as 1). Smaller parts start threads for
    /// smaller tensors, which pays only where dequantizing costs more than starting
    /// a thread; the values never depend on it.
    pub fn set_min_values_per_thread(&mut self, values: usize) {
        self.min_values_per_thread = values.max(1);
    }

    /// Number of elements.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when the tensor has no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The logical shape.
    pub fn shape(&self) -> &[u64] {
        &self.stored.shape
    }

    /// Elements per row (the last dimension; 1 for a rank-0 tensor).
    pub fn row_len(&self) -> u64 {
        self.row_len
    }

    /// Number of rows (the product of all but the last dimension).
    pub fn rows(&self) -> u64 {
        match self.len.checked_div(self.row_len) {
            Some(rows) => rows,
            None => self.stored.shape[..self.stored.shape.len() - 1]
                .iter()
                .product(),
        }
    }

    /// Dequantizes the whole tensor into `out` (exactly one value per element).
    pub fn dequantize_into(&self, out: &mut [f32]) -> Result<(), Error> {
        self.whole(out, true)
    }

    /// [`Dequantizer::dequantize_into`] for an output that was just allocated and
    /// never written, such as a new array: each page's first write faults it in,
    /// zeroed into the cache by the OS, where ordinary stores beat the non-temporal
    /// ones `dequantize_into` uses for large outputs (those would evict the zeroed
    /// lines to memory before overwriting them). The values are the same.
    pub fn dequantize_into_fresh(&self, out: &mut [f32]) -> Result<(), Error> {
        self.whole(out, false)
    }

    /// The whole tensor into `out`, once its length is checked.
    fn whole(&self, out: &mut [f32], stream: bool) -> Result<(), Error> {
        if out.len() as u64 != self.len {
            return Err(output_length(self.len, out.len()));
        }
        self.run(0, out, stream);
        Ok(())
    }

    /// The most output bytes [`Dequantizer::to_vec`] allocates per input byte
    /// (a 2-bit element becomes 4 bytes: 16 per byte), plus 1 MiB.
    const EXPANSION: u128 = 16;

    /// The number of values of the whole output, refused (with
    /// [`Error::Unsupported`]) as [`Dequantizer::to_vec`] refuses it: a caller
    /// allocating its own output for [`Dequantizer::dequantize_into`] keeps the
    /// same bound.
    pub fn checked_len(&self) -> Result<usize, Error> {
        let bytes = u128::from(self.len) * 4;
        let limit = self.stored.data.len() as u128 * Self::EXPANSION + (1 << 20);
        let n = usize::try_from(self.len).ok().filter(|_| bytes <= limit);
        n.ok_or_else(|| too_large(bytes, limit))
    }

    /// Dequantizes the whole tensor into a new vector. Refuses (with
    /// [`Error::Unsupported`]) outputs more than 16 times the data buffer plus 1 MiB,
    /// which only broadcasting strides produce; use the row API for those.
    pub fn to_vec(&self) -> Result<Vec<f32>, Error> {
        let mut out = vec![0.0f32; self.checked_len()?];
        // Fresh pages are zeroed into the cache as they fault in: ordinary stores
        // then beat non-temporal ones.
        self.run(0, &mut out, false);
        Ok(out)
    }

    /// Dequantizes rows `[first_row, first_row + out.len() / row_len)` into `out`,
    /// whose length must be a whole number of rows.
    pub fn dequantize_rows(&self, first_row: u64, out: &mut [f32]) -> Result<(), Error> {
        let rows = self.rows();
        let n = out.len() as u64;
        let count = n.checked_div(self.row_len).unwrap_or(0);
        if self.row_len == 0 && n != 0 || self.row_len != 0 && !n.is_multiple_of(self.row_len) {
            return Err(output_length(count * self.row_len, out.len()));
        }
        let end = first_row.saturating_add(count);
        if end > rows {
            return Err(Error::Usage(format!(
                "rows {first_row}..{end} requested, the tensor has {rows}"
            )));
        }
        self.run(first_row, out, true);
        Ok(())
    }

    /// An iterator over the tensor in chunks of whole rows, each at most
    /// `max_values` values (at least one row), as `(first_row, values)`. Refuses
    /// (with [`Error::Unsupported`]) a single row over `max_values` that is also
    /// over the [`Dequantizer::to_vec`] limit, which only broadcasting strides make.
    pub fn row_chunks(&self, max_values: usize) -> Result<RowChunks<'_, 'a>, Error> {
        let row_bytes = u128::from(self.row_len) * 4;
        let limit = self.stored.data.len() as u128 * Self::EXPANSION + (1 << 20);
        if self.row_len > max_values as u64 && row_bytes > limit {
            return Err(too_large(row_bytes, limit));
        }
        let per = (max_values as u64 / self.row_len.max(1)).max(1);
        Ok(RowChunks {
            dq: self,
            next: 0,
            rows_per_chunk: per,
        })
    }

    /// Dequantizes from row `first_row` until `out` is full (whole rows, in range),
    /// over several threads when allowed and worth it. `stream` allows
    /// non-temporal stores, which large outputs get.
    fn run(&self, first_row: u64, out: &mut [f32], stream: bool) {
        let stream = stream && out.len().saturating_mul(4) >= STREAM_BYTES;
        let row_len = usize::try_from(self.row_len).unwrap_or(0);
        let threads = match self.threads {
            0 => available_threads(),
            n => n,
        };
        let rows = out.len().checked_div(row_len).unwrap_or(0);
        // Several parts per thread, so that a thread the scheduler delays (the
        // machine is shared) leaves its remaining parts to the others.
        let parts = (out.len() / self.min_values_per_thread)
            .min(threads.saturating_mul(PARTS_PER_THREAD))
            .min(rows);
        if threads <= 1 || parts <= 1 {
            return self.run_rows(first_row, out, stream);
        }
        let rows_per_part = rows.div_ceil(parts);
        let slots: Vec<Mutex<Option<&mut [f32]>>> = out
            .chunks_mut(rows_per_part * row_len)
            .map(|c| Mutex::new(Some(c)))
            .collect();
        let next = AtomicUsize::new(0);
        let work = || loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(slot) = slots.get(i) else { break };
            let part = slot.lock().unwrap_or_else(PoisonError::into_inner).take();
            if let Some(part) = part {
                self.run_rows(first_row + (i * rows_per_part) as u64, part, stream);
            }
        };
        let extra = threads.min(slots.len()).saturating_sub(1);
        crate::workers::run_on_threads("hrry-dequant", extra, work);
    }

    /// Dequantizes from row `first_row` until `out` is full, on this thread.
    fn run_rows(&self, first_row: u64, out: &mut [f32], stream: bool) {
        if out.is_empty() {
            return;
        }
        if let (Some(job), false) = (self.fast, self.kernel == Kernel::Reference) {
            let first = first_row as usize;
            let b0 = first * job.blocks_per_row;
            let scale_size = match job.kind {
                BlockKind::Affine { scale_type, .. } => {
                    block_scale_size(scale_type).unwrap_or(4) as usize
                }
                BlockKind::Nf4 => 4,
                BlockKind::Mxfp { .. } => 1,
            };
            let job = BlockRows {
                data: &job.data[b0 * job.block_bytes..],
                scales: &job.scales[b0 * scale_size..],
                zero_points: job.zero_points.get(b0 * 4..).unwrap_or(&[]),
                ..job
            };
            #[cfg(target_arch = "x86_64")]
            if self.kernel == Kernel::Auto && x86::available() {
                x86::block_rows(&job, out, stream);
                return;
            }
            scalar::block_rows(&job, out);
            return;
        }
        scalar::reference(&self.stored, first_row * self.row_len, out);
    }
}

/// Outputs at least this large (bytes) are written with non-temporal stores where
/// the kernel has them: they do not fit in cache, so reading the destination lines
/// first would only cost bandwidth.
const STREAM_BYTES: usize = 8 << 20;

/// The fewest values a thread of [`Dequantizer::set_threads`] is given (1 MiB of
/// output): starting a thread costs about as much as dequantizing a few thousand
/// values.
pub const MIN_VALUES_PER_THREAD: usize = 1 << 18;

/// Parts of the output per thread (when it is large enough).
const PARTS_PER_THREAD: usize = 4;

/// The cores this process may use ([`std::thread::available_parallelism`], which
/// reads cgroup limits: asked once).
fn available_threads() -> usize {
    static THREADS: OnceLock<usize> = OnceLock::new();
    *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// The shape of a block-paged tensor's page pool: `[num_pages * page_size,
/// num_heads, head_dim]`; `None` unless the logical shape has rank 3, or on
/// overflow.
fn pool_shape(fields: &BlockPagedFields, shape: &[u64]) -> Option<Vec<u64>> {
    let [_, heads, dim] = shape else {
        return None;
    };
    let slots = fields.num_pages.checked_mul(u64::from(fields.page_size))?;
    Some(vec![slots, *heads, *dim])
}

/// Chunks of whole rows; see [`Dequantizer::row_chunks`].
#[derive(Debug)]
pub struct RowChunks<'d, 'a> {
    dq: &'d Dequantizer<'a>,
    next: u64,
    rows_per_chunk: u64,
}

impl RowChunks<'_, '_> {
    /// Like [`Iterator::next`], but fills `out` (resized to the chunk) instead of
    /// allocating a vector per chunk; returns the chunk's first row.
    pub fn next_into(&mut self, out: &mut Vec<f32>) -> Option<u64> {
        let rows = self.dq.rows();
        if self.next >= rows || self.dq.row_len == 0 {
            return None;
        }
        let first = self.next;
        let count = self.rows_per_chunk.min(rows - first);
        self.next += count;
        out.clear();
        out.resize((count * self.dq.row_len) as usize, 0.0);
        self.dq.run(first, out, false);
        Some(first)
    }
}

impl Iterator for RowChunks<'_, '_> {
    type Item = (u64, Vec<f32>);

    fn next(&mut self) -> Option<Self::Item> {
        let mut out = Vec::new();
        self.next_into(&mut out).map(|first| (first, out))
    }
}

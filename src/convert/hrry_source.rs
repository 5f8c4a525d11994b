//! Reading a HRRYFILE for conversion: the tensors' descriptors and where their
//! buffers lie (from the mapped index and descriptors, unmapped again before any
//! data is read), then their data through a [`FileSource`] a piece at a time.
//!
//! Quantized tensors are dequantized a slab at a time. A row-major tensor is seen as
//! `[L, A, T]`: `A` the quantization axis (per-channel or blocked), `L` and `T` the
//! products of the dimensions before and after it (per-tensor: one flat run). A slab
//! is a run of whole `L` slices, or, when one slice alone is too large, a run of
//! `A` (whole blocks) inside one slice; either is a contiguous range of the data
//! buffer and of the parameter buffers, and of the values in logical order. Each
//! slab is dequantized as a small tensor of its own, by the same [`Dequantizer`]
//! (which also validates its parameters). Other layouts, and slabs that would not
//! start on a byte, fall back to reading the tensor's buffers whole.

use std::path::Path;

use super::{Error, FileSource, Progress};
use crate::decode::descriptor::oversized_buffer;
use crate::model::quant::block_scale_size;
use crate::model::{element_count, packed_size, ElementType};
use crate::quant::element::{float_value, int_value};
use crate::quant::quantize::quantized_descriptor;
use crate::quant::Dequantizer;
use crate::schema::{
    KvEntry, QuantScheme, TensorDescriptor, LAYOUT_ROW_MAJOR, NO_ZERO_POINT_BUFFER,
};

/// Values dequantized per piece: the float32 output held at once.
pub(crate) const DEQUANTIZE_CHUNK: usize = 1 << 18;

/// One tensor of a HRRYFILE input.
pub(crate) struct InputTensor {
    /// Its name.
    pub name: String,
    /// Its descriptor.
    pub descriptor: TensorDescriptor,
    /// Absolute file offset of each of its buffers (bounds-checked on opening).
    pub offsets: Vec<u64>,
}

/// A HRRYFILE opened for conversion.
pub(crate) struct HrryInput {
    /// The file, for data.
    pub src: FileSource,
    /// Its tensors, in index order.
    pub tensors: Vec<InputTensor>,
    /// Its KV entries.
    pub kv: Vec<KvEntry>,
    /// Remarks for the conversion summary (tensors let through by `permissive`).
    pub notes: Vec<String>,
}

/// Opens `path`: index, descriptors and KV are read with positioned reads (through
/// a private mirror that is dropped before returning, so that only what planning
/// touched was ever read), from the same open file as the data later, so that a
/// file changed in between is an error. A dense
/// tensor whose buffer holds more than it needs (`TD-BUF-014`, such as bools stored
/// one byte per element) is refused, unless `permissive`: then it is converted as
/// readers read it, with a note.
pub(crate) fn open(path: &Path, permissive: bool) -> Result<HrryInput, Error> {
    let src = FileSource::open(path)?;
    let io = |e| super::io_at(path, e);
    let metadata =
        crate::source::FileSource::new(src.file().try_clone().map_err(io)?).map_err(io)?;
    // The spec's rules with its permissive allowances: the oversized buffers of
    // TD-BUF-014 are judged below, with the converter's own way out.
    let file = crate::file::OpenOptions::new()
        .rules(crate::validate::Rules::Permissive)
        .open_source(metadata)
        .map_err(|e| match e {
            crate::file::Error::Io(e) => io(e),
            e => e,
        })?;
    let mut tensors = Vec::with_capacity(file.len());
    let mut notes = Vec::new();
    for entry in file.entries() {
        let (descriptor, offsets) = file.placement(entry)?;
        if let Some(o) = oversized_buffer(descriptor) {
            let rule = &crate::validate::rules::container::TD_BUF_OVERSIZED;
            let why = format!("{} ({}): {}", rule.id, rule.summary, o.message(descriptor));
            if !permissive {
                return Err(Error::tensor(
                    entry.name(),
                    format!("{why}; --permissive converts it as readers read it"),
                ));
            }
            notes.push(format!(
                "tensor {:?} converted as readers read it: {why}",
                entry.name()
            ));
        }
        tensors.push(InputTensor {
            name: entry.name().to_string(),
            descriptor: descriptor.clone(),
            offsets: offsets.to_vec(),
        });
    }
    let kv = file.kv().to_vec();
    drop(file);
    Ok(HrryInput {
        src,
        tensors,
        kv,
        notes,
    })
}

/// Buffers reused from slab to slab.
#[derive(Default)]
pub(crate) struct DequantScratch {
    buffers: Vec<Vec<u8>>,
    values: Vec<f32>,
}

/// Dequantizes tensor `t` and hands its values to `f` in logical row-major order,
/// at most [`DEQUANTIZE_CHUNK`] at a time (a whole row when a row is longer).
pub(crate) fn dequantize(
    src: &mut FileSource,
    t: &InputTensor,
    scratch: &mut DequantScratch,
    progress: &mut dyn Progress,
    f: impl FnMut(&[f32]) -> Result<(), Error>,
) -> Result<(), Error> {
    dequantize_with(src, t, scratch, progress, DEQUANTIZE_CHUNK, f)
}

/// [`dequantize`] with slabs of about `max_values` values.
fn dequantize_with(
    src: &mut FileSource,
    t: &InputTensor,
    scratch: &mut DequantScratch,
    progress: &mut dyn Progress,
    max_values: usize,
    mut f: impl FnMut(&[f32]) -> Result<(), Error>,
) -> Result<(), Error> {
    let bad = |e: crate::Error| Error::tensor(&t.name, format!("cannot dequantize: {e}"));
    let mut run = |desc: &TensorDescriptor, buffers: &[Vec<u8>], values: &mut Vec<f32>| {
        let slices: Vec<&[u8]> = buffers.iter().map(Vec::as_slice).collect();
        let dq = Dequantizer::new(desc, &slices).map_err(bad)?;
        let mut chunks = dq.row_chunks(max_values).map_err(bad)?;
        while chunks.next_into(values).is_some() {
            f(values)?;
        }
        Ok::<(), Error>(())
    };
    let DequantScratch { buffers, values } = scratch;
    let Some(plan) = SlabPlan::of(t) else {
        // Whole buffers: only for layouts and shapes slabs cannot cut.
        buffers.resize_with(t.offsets.len(), Vec::new);
        for (i, (&at, h)) in t.offsets.iter().zip(&t.descriptor.buffers).enumerate() {
            src.read_range_into(at, h.byte_size, Some(&mut *progress), &mut buffers[i])?;
        }
        let result = run(&t.descriptor, &buffers[..t.offsets.len()], values);
        buffers.clear();
        return result;
    };
    for slab in plan.slabs(max_values as u64) {
        let (desc, ranges) = plan
            .slab(&slab)
            .ok_or_else(|| Error::tensor(&t.name, "a slab of the tensor overflows 64-bit sizes"))?;
        buffers.resize_with(ranges.len(), Vec::new);
        for (i, &(at, len)) in ranges.iter().enumerate() {
            src.read_range_into(at, len, Some(&mut *progress), &mut buffers[i])?;
        }
        run(&desc, &buffers[..ranges.len()], values)?;
    }
    Ok(())
}

/// How a quantized tensor's parameters are found.
#[derive(Clone, Copy, Debug)]
enum Params {
    /// Inline (per-tensor affine).
    Inline,
    /// One float32 scale (and int32 zero point) per index along the axis.
    PerChannel {
        scales: u64,
        zero_points: Option<u64>,
    },
    /// One scale (of `scale_size` bytes, and int32 zero point) per block of
    /// `block` along the axis; block `b = (l * T + t) * blocks + a / block`.
    Blocks {
        block: u64,
        blocks: u64,
        scale_size: u64,
        scales: u64,
        zero_points: Option<u64>,
    },
}

/// A row-major quantized tensor seen as `[L, A, T]` (see the module comment).
struct SlabPlan {
    scheme: QuantScheme,
    storage_tag: u8,
    width: u64,
    /// `L`, `A` and `T`.
    outer: u64,
    axis_len: u64,
    inner: u64,
    /// `A` as stored (padded to whole blocks).
    stored_axis: u64,
    /// Absolute offset of the first data byte.
    data: u64,
    params: Params,
}

/// A slab: `l_count` slices from `l`, and within them `a_count` from `a`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Slab {
    l: u64,
    l_count: u64,
    a: u64,
    a_count: u64,
}

/// Smallest `k >= 1` for which `k * bits` is a whole number of bytes.
fn byte_granule(bits: u64) -> u64 {
    (1..=8).find(|k| (k * bits).is_multiple_of(8)).unwrap_or(8)
}

impl SlabPlan {
    /// The plan of `t`, when its layout and sizes let slabs cut it.
    fn of(t: &InputTensor) -> Option<Self> {
        let d = &t.descriptor;
        if d.layout_tag != LAYOUT_ROW_MAJOR || t.offsets.is_empty() {
            return None;
        }
        let scheme = *d.quantization.as_ref()?.scheme()?;
        let width = u64::from(ElementType::from_tag(d.type_tag)?.bit_width()?);
        let n = element_count(&d.shape)?;
        let axis = match scheme.axis() {
            Some(a) => usize::try_from(a).ok().filter(|&a| a < d.shape.len())?,
            None => 0,
        };
        let (outer, axis_len, inner) = match scheme {
            QuantScheme::PerTensorAffine(_) => (1, n, 1),
            _ => (
                d.shape[..axis].iter().product(),
                d.shape[axis],
                d.shape[axis + 1..].iter().product(),
            ),
        };
        let symmetric = scheme.header().flags & crate::schema::FLAG_SYMMETRIC != 0;
        let at = |index: u32| t.offsets.get(usize::try_from(index).ok()?).copied();
        let (params, stored_axis, param_bytes) = match scheme {
            QuantScheme::PerTensorAffine(_) => (Params::Inline, axis_len, Vec::new()),
            QuantScheme::PerChannelAffine(p) => {
                let bytes = axis_len.checked_mul(4)?;
                let zp = (!symmetric).then_some((p.zero_point_buffer_index, bytes));
                let (zero_points, need) = params_at(&at, (p.scale_buffer_index, bytes), zp)?;
                let params = Params::PerChannel {
                    scales: at(p.scale_buffer_index)?,
                    zero_points,
                };
                (params, axis_len, need)
            }
            QuantScheme::PerBlockAffine(p) => {
                let g = blocks_of(&d.shape, axis, p.block_size)?;
                let scale_size = block_scale_size(p.scale_type_tag)?;
                let scale_bytes = g.num_blocks.checked_mul(scale_size)?;
                let zp = match symmetric {
                    true => None,
                    false => Some((p.zero_point_buffer_index, g.num_blocks.checked_mul(4)?)),
                };
                let (zero_points, need) = params_at(&at, (p.scale_buffer_index, scale_bytes), zp)?;
                let params = Params::Blocks {
                    block: g.block_size,
                    blocks: g.blocks_per_axis,
                    scale_size,
                    scales: at(p.scale_buffer_index)?,
                    zero_points,
                };
                (params, g.padded_axis_len, need)
            }
            QuantScheme::Nf4(p) | QuantScheme::Mxfp(p) => {
                let g = blocks_of(&d.shape, axis, p.block_size)?;
                let scale_size = if matches!(scheme, QuantScheme::Nf4(_)) {
                    4
                } else {
                    1
                };
                let params = Params::Blocks {
                    block: g.block_size,
                    blocks: g.blocks_per_axis,
                    scale_size,
                    scales: at(p.scale_buffer_index)?,
                    zero_points: None,
                };
                let need = vec![(p.scale_buffer_index, g.num_blocks.checked_mul(scale_size)?)];
                (params, g.padded_axis_len, need)
            }
        };
        // Every range a slab reads must lie inside its buffer; otherwise the whole
        // path reports the problem (as a validation error) instead.
        let stored = outer.checked_mul(stored_axis)?.checked_mul(inner)?;
        let data_bytes = packed_size(u32::try_from(width).ok()?, stored)?;
        let buffer0 = d.buffers.first()?.byte_size;
        if d.byte_offset.checked_add(data_bytes)? > buffer0 {
            return None;
        }
        for (index, bytes) in param_bytes {
            let size = d.buffers.get(usize::try_from(index).ok()?)?.byte_size;
            if bytes > size || index == 0 {
                return None;
            }
        }
        Some(SlabPlan {
            scheme,
            storage_tag: d.type_tag,
            width,
            outer,
            axis_len,
            inner,
            stored_axis,
            data: t.offsets[0].checked_add(d.byte_offset)?,
            params,
        })
    }

    /// The slabs, each about `max_values` values: whole `L` slices when one fits
    /// (in runs that start on a byte), else runs of `A` inside each slice (whole
    /// blocks; only when a slice starts on a byte and, for blocks, `T` is 1).
    /// Empty tensors have none.
    fn slabs(&self, max_values: u64) -> Vec<Slab> {
        let (l_len, a_len) = (self.outer, self.axis_len);
        if l_len == 0 || a_len == 0 || self.inner == 0 {
            return Vec::new();
        }
        let slice = a_len.saturating_mul(self.inner);
        let slice_bits = self
            .stored_axis
            .saturating_mul(self.inner)
            .saturating_mul(self.width);
        let g = byte_granule(slice_bits % 8);
        let per = (max_values / slice.max(1) / g).max(1) * g;
        let block = match self.params {
            Params::Blocks { block, .. } => Some(block),
            _ => None,
        };
        let cut_axis = slice > max_values
            && (slice_bits.is_multiple_of(8) || l_len == 1)
            && (block.is_none() || self.inner == 1);
        let mut out = Vec::new();
        if !cut_axis {
            let mut l = 0;
            while l < l_len {
                let l_count = per.min(l_len - l);
                out.push(Slab {
                    l,
                    l_count,
                    a: 0,
                    a_count: a_len,
                });
                l += l_count;
            }
            return out;
        }
        // Runs along A start on a byte and, for blocks, on a block.
        let step_bits = self.inner.saturating_mul(self.width) % 8;
        let mut granule = byte_granule(step_bits);
        if let Some(k) = block {
            granule = granule.saturating_mul(k / gcd(granule, k).max(1));
        }
        let run = (max_values / self.inner.max(1) / granule).max(1) * granule;
        for l in 0..l_len {
            let mut a = 0;
            while a < a_len {
                let mut a_count = run.min(a_len - a);
                // A last run shorter than a block would break block_size <= shape[axis].
                if block.is_some_and(|k| a_len - a - a_count < k) {
                    a_count = a_len - a;
                }
                out.push(Slab {
                    l,
                    l_count: 1,
                    a,
                    a_count,
                });
                a += a_count;
            }
        }
        out
    }

    /// The descriptor of slab `s` as a tensor of its own, and the file ranges of its
    /// buffers (data, then scales, then zero points when there are any).
    fn slab(&self, s: &Slab) -> Option<(TensorDescriptor, Vec<(u64, u64)>)> {
        let whole = s.a_count == self.axis_len;
        let stored_a = match self.params {
            Params::Blocks { block, .. } if !whole => {
                s.a_count.div_ceil(block).checked_mul(block)?
            }
            _ if whole => self.stored_axis,
            _ => s.a_count,
        };
        let first =
            s.l.checked_mul(self.stored_axis)?
                .checked_add(s.a)?
                .checked_mul(self.inner)?;
        let first_bit = first.checked_mul(self.width)?;
        let count = s.l_count.checked_mul(stored_a)?.checked_mul(self.inner)?;
        let data_len = packed_size(u32::try_from(self.width).ok()?, count)?;
        let mut ranges = vec![(self.data.checked_add(first_bit / 8)?, data_len)];
        let shape = [s.l_count, s.a_count, self.inner];
        let (shape, scheme): (&[u64], QuantScheme) = match (self.scheme, self.params) {
            (QuantScheme::PerTensorAffine(_), _) => (&shape[1..2], self.scheme),
            (
                QuantScheme::PerChannelAffine(mut p),
                Params::PerChannel {
                    scales,
                    zero_points,
                },
            ) => {
                ranges.push((
                    scales.checked_add(s.a.checked_mul(4)?)?,
                    s.a_count.checked_mul(4)?,
                ));
                if let Some(z) = zero_points {
                    ranges.push((
                        z.checked_add(s.a.checked_mul(4)?)?,
                        s.a_count.checked_mul(4)?,
                    ));
                }
                p.axis = 1;
                (p.scale_buffer_index, p.zero_point_buffer_index) = indices(zero_points);
                (&shape, QuantScheme::PerChannelAffine(p))
            }
            (
                scheme,
                Params::Blocks {
                    block,
                    blocks,
                    scale_size,
                    scales,
                    zero_points,
                },
            ) => {
                let (first_block, n) = if whole {
                    let per_l = self.inner.checked_mul(blocks)?;
                    (s.l.checked_mul(per_l)?, s.l_count.checked_mul(per_l)?)
                } else {
                    (
                        s.l.checked_mul(blocks)?.checked_add(s.a / block)?,
                        s.a_count.div_ceil(block),
                    )
                };
                ranges.push((
                    scales.checked_add(first_block.checked_mul(scale_size)?)?,
                    n.checked_mul(scale_size)?,
                ));
                if let Some(z) = zero_points {
                    ranges.push((
                        z.checked_add(first_block.checked_mul(4)?)?,
                        n.checked_mul(4)?,
                    ));
                }
                let scheme = match scheme {
                    QuantScheme::PerBlockAffine(mut p) => {
                        p.axis = 1;
                        (p.scale_buffer_index, p.zero_point_buffer_index) = indices(zero_points);
                        QuantScheme::PerBlockAffine(p)
                    }
                    QuantScheme::Nf4(mut p) => {
                        (p.axis, p.scale_buffer_index) = (1, 1);
                        QuantScheme::Nf4(p)
                    }
                    QuantScheme::Mxfp(mut p) => {
                        (p.axis, p.scale_buffer_index) = (1, 1);
                        QuantScheme::Mxfp(p)
                    }
                    _ => return None,
                };
                (&shape, scheme)
            }
            _ => return None,
        };
        let sizes: Vec<u64> = ranges.iter().map(|r| r.1).collect();
        let desc = quantized_descriptor(self.storage_tag, shape, &sizes, scheme);
        Some((desc, ranges))
    }
}

/// Scale and zero-point buffer indices of a slab's own descriptor.
fn indices(zero_points: Option<u64>) -> (u32, u32) {
    (
        1,
        if zero_points.is_some() {
            2
        } else {
            NO_ZERO_POINT_BUFFER
        },
    )
}

/// `(buffer index, bytes it must hold)` for each parameter buffer.
type BufferNeeds = Vec<(u32, u64)>;

/// Where the zero points start (absolute offset; buffer offsets from `at`), and the
/// bytes each parameter buffer must hold, given `(buffer index, bytes)` of the
/// scales and of the zero points: a shared buffer holds `[scales | zero points]`.
fn params_at(
    at: &impl Fn(u32) -> Option<u64>,
    scales: (u32, u64),
    zero_points: Option<(u32, u64)>,
) -> Option<(Option<u64>, BufferNeeds)> {
    Some(match zero_points {
        None => (None, vec![scales]),
        Some(z) if z.0 == scales.0 => (
            Some(at(scales.0)?.checked_add(scales.1)?),
            vec![(scales.0, scales.1.checked_add(z.1)?)],
        ),
        Some(z) => (Some(at(z.0)?), vec![scales, z]),
    })
}

fn blocks_of(
    shape: &[u64],
    axis: usize,
    block_size: u32,
) -> Option<crate::model::quant::BlockGeometry> {
    crate::model::quant::BlockGeometry::new(shape, axis, block_size.into())
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// How one tensor of a HRRYFILE input becomes the bytes of another format.
#[derive(Clone, Debug)]
pub(crate) enum Render {
    /// The `len` bytes at file offset `offset`, as they are.
    Copy { offset: u64, len: u64 },
    /// `n` packed booleans at `offset` (`len` bytes), one byte each.
    Bools { offset: u64, len: u64, n: u64 },
    /// `n` packed sub-byte integers of `ty` at `offset`, sign- or zero-extended to
    /// one byte each.
    Widen {
        offset: u64,
        len: u64,
        n: u64,
        ty: ElementType,
    },
    /// GGUF blocks of `kind` from Hurray codes (`codes`: offset, length) and float16
    /// scales (`scales`: offset, length).
    Blocks {
        kind: super::qblocks::Kind,
        codes: (u64, u64),
        scales: (u64, u64),
    },
    /// Tensor `tensor` of the input, dequantized to `dtype`.
    Dequantize {
        tensor: usize,
        dtype: super::FloatType,
    },
    /// `n` packed elements of `ty` at `offset` (`len` bytes) converted to `dtype`
    /// (a dense type the output format lacks, under `--dequantize-unsupported`).
    ToFloat {
        offset: u64,
        len: u64,
        n: u64,
        ty: ElementType,
        dtype: super::FloatType,
    },
}

impl Render {
    /// Input bytes read to produce the output (for progress).
    pub fn input_len(&self, input: &HrryInput) -> u64 {
        match self {
            Render::Copy { len, .. }
            | Render::Bools { len, .. }
            | Render::Widen { len, .. }
            | Render::ToFloat { len, .. } => *len,
            Render::Blocks { codes, scales, .. } => codes.1 + scales.1,
            Render::Dequantize { tensor, .. } => input.tensors[*tensor]
                .descriptor
                .buffers
                .iter()
                .map(|b| b.byte_size)
                .sum(),
        }
    }
}

/// Buffers reused from tensor to tensor by [`render`].
#[derive(Default)]
pub(crate) struct RenderScratch {
    input: Vec<u8>,
    scales: Vec<u8>,
    out: Vec<u8>,
    dequant: DequantScratch,
}

/// Writes the bytes of `r` to `out` (named `path`, for errors) a piece at a time;
/// returns how many were written.
pub(crate) fn render(
    r: &Render,
    input: &mut HrryInput,
    out: &mut super::output::Output,
    path: &Path,
    scratch: &mut RenderScratch,
    progress: &mut dyn Progress,
) -> Result<u64, Error> {
    use std::io::Write;
    let io = |source| super::io_at(path, source);
    let RenderScratch {
        input: buf,
        scales,
        out: bytes,
        dequant,
    } = scratch;
    let src = &mut input.src;
    let mut written = 0u64;
    let mut emit = |b: &[u8]| {
        written += b.len() as u64;
        out.write_all(b).map_err(io)
    };
    match *r {
        Render::Copy { offset, len } => {
            super::output::copy_range(out, path, src, offset, len, progress)?;
            return Ok(len);
        }
        Render::Bools { offset, len, n } => {
            let mut left = n;
            src.for_each_piece(offset, len, 1, super::CHUNK / 8, buf, progress, |piece| {
                let k = left.min(piece.len() as u64 * 8);
                left -= k;
                emit(&super::unpack_bools(piece, k as usize))
            })?;
        }
        Render::Widen { offset, len, n, ty } => {
            let per_byte = 8 / u64::from(ty.bit_width().unwrap_or(8).max(1));
            let mut left = n;
            let max = super::CHUNK / per_byte as usize;
            src.for_each_piece(offset, len, 1, max, buf, progress, |piece| {
                let k = left.min(piece.len() as u64 * per_byte);
                left -= k;
                emit(&widen(piece, k as usize, ty))
            })?;
        }
        Render::Blocks {
            kind,
            codes,
            scales: (scale_at, _),
        } => {
            // Codes and scales are read in step: a piece of codes, then the scales
            // of the same blocks.
            let code_bytes = kind.code_bytes();
            let max = super::CHUNK / kind.block_bytes() * code_bytes;
            let mut block = 0u64;
            let mut blocks_src = src.try_clone()?;
            src.for_each_piece(codes.0, codes.1, code_bytes, max, buf, progress, |piece| {
                let n = (piece.len() / code_bytes) as u64;
                blocks_src.read_range_into(scale_at + block * 2, n * 2, None, scales)?;
                super::qblocks::size_to(bytes, n as usize * kind.block_bytes());
                super::qblocks::join(kind, piece, scales, bytes);
                block += n;
                emit(bytes)
            })?;
        }
        Render::ToFloat {
            offset,
            len,
            n,
            ty,
            dtype,
        } => {
            let width = u64::from(ty.bit_width().unwrap_or(8));
            // Pieces of whole bytes holding whole elements.
            let unit = (byte_granule(width % 8) * width / 8) as usize;
            let max = DEQUANTIZE_CHUNK * width as usize / 8;
            let mut left = n;
            let values = &mut dequant.values;
            src.for_each_piece(offset, len, unit, max, buf, progress, |piece| {
                let k = left.min(piece.len() as u64 * 8 / width);
                left -= k;
                values.clear();
                values.extend((0..k).map(|i| element_as_f32(piece, i * width, ty)));
                bytes.clear();
                dtype.encode(values, bytes);
                emit(bytes)
            })?;
        }
        Render::Dequantize { tensor, dtype } => {
            let t = &input.tensors[tensor];
            dequantize(src, t, dequant, progress, |values| {
                bytes.clear();
                dtype.encode(values, bytes);
                emit(bytes)
            })?;
        }
    }
    Ok(written)
}

/// True for the dense element types [`element_as_f32`] converts.
pub(crate) fn converts_to_float(ty: ElementType) -> bool {
    ty == ElementType::Bool || float_value(ty, 0).is_some() || int_value(ty, 0).is_some()
}

/// The element of type `ty` at bit `bit` of `bytes` as a float32 (`0.0` past the
/// end, which the callers' sizes rule out).
fn element_as_f32(bytes: &[u8], bit: u64, ty: ElementType) -> f32 {
    let width = ty.bit_width().unwrap_or(8);
    let code = crate::layout::bits::read_bits(bytes, bit, width).unwrap_or(0) as u32;
    if ty == ElementType::Bool {
        return code as f32;
    }
    float_value(ty, code)
        .or_else(|| int_value(ty, code).map(|v| v as f32))
        .unwrap_or(0.0)
}

/// Sign-extends (signed types) or zero-extends `n` packed `ty` integers to one
/// byte each.
pub(crate) fn widen(bits: &[u8], n: usize, ty: ElementType) -> Vec<u8> {
    let width = ty.bit_width().unwrap_or(8) as usize;
    let mask = ((1u16 << width) - 1) as u8;
    let signed = ty.is_signed_int();
    (0..n)
        .map(|i| {
            let bit = i * width;
            let code = bits.get(bit / 8).map_or(0, |b| (b >> (bit % 8)) & mask);
            if signed && code >> (width - 1) == 1 {
                code | !mask
            } else {
                code
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widening_sign_extends() {
        // int4 [-8, 7, -1] packed LSB-first: 0x78, 0x0F
        assert_eq!(
            widen(&[0x78, 0x0F], 3, ElementType::Int4),
            vec![0xF8, 7, 0xFF]
        );
        assert_eq!(widen(&[0x78, 0x0F], 3, ElementType::Uint4), vec![8, 7, 15]);
        // int2 [1, -2, -1, 0]: 0b00_11_10_01
        assert_eq!(
            widen(&[0b0011_1001], 4, ElementType::Int2),
            vec![1, 0xFE, 0xFF, 0]
        );
    }

    use crate::quant::quantize::{quantize_per_block, PerBlockOptions};
    use crate::schema::{PerChannelAffine, QuantizationHeader, SCHEME_PER_CHANNEL_AFFINE};

    /// Every tensor of `path` dequantized whole, and streamed in slabs of at most
    /// `max` values, gives the same bits; returns how many tensors slabs can cut,
    /// plus how many runs cut one in more than one slab.
    fn agree(path: &Path) -> usize {
        let bytes = std::fs::read(path).unwrap();
        let mut input = open(path, false).unwrap();
        let mut sliced = 0;
        for t in &input.tensors {
            if t.descriptor.quantization.is_none() {
                continue;
            }
            let buffers: Vec<&[u8]> = t
                .offsets
                .iter()
                .zip(&t.descriptor.buffers)
                .map(|(&o, h)| &bytes[o as usize..(o + h.byte_size) as usize])
                .collect();
            let Ok(whole) = crate::quant::dequantize(&t.descriptor, &buffers) else {
                // What the dequantizer refuses (sparse layouts) is refused here too.
                let mut scratch = DequantScratch::default();
                let streamed = dequantize_with(
                    &mut input.src,
                    t,
                    &mut scratch,
                    &mut super::super::NoProgress,
                    64,
                    |_| Ok(()),
                );
                assert!(streamed.is_err(), "{} {:?}", t.name, path);
                continue;
            };
            let plan = SlabPlan::of(t);
            sliced += usize::from(plan.is_some());
            for max in [1usize, 3, 5, 64, 1 << 18] {
                let mut got = Vec::new();
                let mut scratch = DequantScratch::default();
                dequantize_with(
                    &mut input.src,
                    t,
                    &mut scratch,
                    &mut super::super::NoProgress,
                    max,
                    |v| {
                        got.extend_from_slice(v);
                        Ok(())
                    },
                )
                .unwrap();
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&got), bits(&whole), "{} {:?} max {max}", t.name, path);
                if let (Some(p), true) = (&plan, max < whole.len()) {
                    sliced += usize::from(p.slabs(max as u64).len() > 1);
                }
            }
        }
        sliced
    }

    #[test]
    fn slabs_dequantize_like_the_whole_tensor() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/valid");
        let mut sliced = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with("quant-") && name.ends_with(".hrry") {
                sliced += agree(&path);
            }
        }
        assert!(
            sliced >= 30,
            "only {sliced} corpus tensors and runs were cut in slabs"
        );

        // Blocks and channels on a middle axis of a rank-3 tensor, partial blocks,
        // zero points sharing the scale buffer.
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("q.hrry");
        let mut w =
            crate::file::HrryWriter::create(&path, crate::file::WriterOptions::default()).unwrap();
        let values: Vec<f32> = (0..3 * 40 * 2).map(|i| (i as f32 * 0.37).sin()).collect();
        for (name, axis, storage) in [
            ("mid", 1usize, ElementType::Uint8),
            ("first", 0, ElementType::Int4),
            ("last", 2, ElementType::Int2),
        ] {
            let shape = [3u64, 40, 2];
            let q = quantize_per_block(
                &values,
                &shape,
                &PerBlockOptions {
                    storage,
                    scale_type: ElementType::Float32,
                    block_size: 2,
                    axis,
                    symmetric: storage == ElementType::Int2,
                },
            )
            .unwrap();
            w.write_tensor(name, &q.descriptor, &q.buffer_slices())
                .unwrap();
        }
        let mut params: Vec<u8> = (0..40)
            .flat_map(|i| (0.5 + i as f32).to_le_bytes())
            .collect();
        params.extend((0..40).flat_map(|i| (i * 6i32).to_le_bytes()));
        let scheme = QuantScheme::PerChannelAffine(PerChannelAffine {
            header: QuantizationHeader::version1(SCHEME_PER_CHANNEL_AFFINE, 0),
            axis: 1,
            scale_buffer_index: 1,
            zero_point_buffer_index: 1,
            scale_type_tag: 0x03,
            reserved: [0; 3],
        });
        let data: Vec<u8> = (0..240u32).map(|i| (i * 7) as u8).collect();
        let desc = quantized_descriptor(
            ElementType::Uint8.tag(),
            &[3, 40, 2],
            &[240, params.len() as u64],
            scheme,
        );
        w.write_tensor("channels", &desc, &[&data, &params])
            .unwrap();
        w.finish_file().unwrap();
        // Four tensors; all but "first" (blocks on axis 0 of [3, 40, 2]: the blocks
        // of a run along the axis are not contiguous) cut in several slabs by each
        // of the four small maxima.
        assert_eq!(agree(&path), 4 + 3 * 4);
    }
}

//! Writing quantized tensors: a per-block affine quantizer (symmetric absmax or
//! asymmetric min/max) producing a row-major descriptor and its buffers.

use crate::error::Error;
use crate::model::build;
use crate::model::element_type::{element_count, ElementType};
use crate::model::quant::{int_range, widen_scale, BlockGeometry, PER_BLOCK_STORAGE};
use crate::schema::{
    LayoutFields, PerBlockAffine, QuantScheme, QuantizationSection, TensorDescriptor,
    LAYOUT_ROW_MAJOR,
};

/// How to quantize with [`quantize_per_block`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PerBlockOptions {
    /// Storage type: int8, uint8, int4, uint4, int2 or uint2.
    pub storage: ElementType,
    /// Scale type: float16, bfloat16 or float32.
    pub scale_type: ElementType,
    /// Elements per block along `axis` (a power of two >= 2, at most `shape[axis]`).
    pub block_size: u32,
    /// The blocked axis.
    pub axis: usize,
    /// Symmetric (absmax, no zero points) or asymmetric (min/max with zero points).
    pub symmetric: bool,
}

impl Default for PerBlockOptions {
    /// int4, float16 scales, blocks of 32 along the last axis of a rank-2 tensor,
    /// symmetric (GGUF `Q4_0`-like).
    fn default() -> Self {
        PerBlockOptions {
            storage: ElementType::Int4,
            scale_type: ElementType::Float16,
            block_size: 32,
            axis: 1,
            symmetric: true,
        }
    }
}

/// A quantized tensor: its descriptor and buffers (data, scales, then zero points
/// when asymmetric), ready for a writer or for [`super::Dequantizer`].
#[derive(Clone, Debug, PartialEq)]
pub struct Quantized {
    /// The row-major tensor descriptor with its quantization section.
    pub descriptor: TensorDescriptor,
    /// The buffers, in buffer-table order.
    pub buffers: Vec<Vec<u8>>,
}

impl Quantized {
    /// The buffers as borrowed slices.
    pub fn buffer_slices(&self) -> Vec<&[u8]> {
        self.buffers.iter().map(Vec::as_slice).collect()
    }
}

/// A row-major descriptor of `type_tag` and `shape` with buffers of `buffer_sizes`
/// bytes (64-byte aligned, CPU) and the quantization section `quantization` (a
/// [`QuantScheme`], or a [`QuantizationSection`] built from bytes); flags and
/// `descriptor_length` are set.
pub fn quantized_descriptor(
    type_tag: u8,
    shape: &[u64],
    buffer_sizes: &[u64],
    quantization: impl Into<QuantizationSection>,
) -> TensorDescriptor {
    let mut desc = build::descriptor(
        type_tag,
        LAYOUT_ROW_MAJOR,
        shape,
        LayoutFields::Implicit,
        buffer_sizes,
    );
    desc.quantization = Some(quantization.into());
    desc.sync_sections();
    desc
}

/// Stores the low `width` bits of `code` at element `index` (LSB-first packing).
fn put_code(buf: &mut [u8], index: usize, width: usize, code: u32) {
    let bit = index * width;
    for k in 0..width {
        if code >> k & 1 == 1 {
            let b = bit + k;
            buf[b / 8] |= 1 << (b % 8);
        }
    }
}

/// Encodes a float32 scale as `scale_type`, nudged so that it widens back to a
/// finite non-zero value; returns the bytes and the widened value.
fn encode_scale(scale_type: ElementType, s: f32) -> (Vec<u8>, f32) {
    let s = if s.is_finite() && s > 0.0 { s } else { 1.0 };
    let bytes = match scale_type {
        ElementType::Float16 => {
            let h = half::f16::from_f32(s).clamp(half::f16::from_bits(1), half::f16::MAX);
            h.to_bits().to_le_bytes().to_vec()
        }
        ElementType::Bfloat16 => {
            let h = half::bf16::from_f32(s).clamp(half::bf16::from_bits(1), half::bf16::MAX);
            h.to_bits().to_le_bytes().to_vec()
        }
        _ => s.to_le_bytes().to_vec(),
    };
    let widened = widen_scale(scale_type.tag(), &bytes);
    (bytes, widened)
}

/// Quantizes `values` (logical row-major order, shape `shape`) with per-block affine
/// quantization. Symmetric: `s = absmax / qmax`, `q = round(x / s)`. Asymmetric:
/// `s = (max - min) / (qmax - qmin)`, `z = round(qmin - min / s)`,
/// `q = round(x / s) + z`. Codes are clamped to the storage range; `s` is rounded to
/// the scale type first and the codes computed with the rounded scale. A partial
/// final block is padded with zero codes.
pub fn quantize_per_block(
    values: &[f32],
    shape: &[u64],
    opts: &PerBlockOptions,
) -> Result<Quantized, Error> {
    let bad = |m: &str| Err(Error::Usage(format!("per-block options: {m}")));
    if !PER_BLOCK_STORAGE.contains(&opts.storage) {
        return bad("storage must be int8, uint8, int4, uint4, int2 or uint2");
    }
    let scale_size = match opts.scale_type {
        ElementType::Float16 | ElementType::Bfloat16 => 2u64,
        ElementType::Float32 => 4,
        _ => return bad("scale type must be float16, bfloat16 or float32"),
    };
    if !opts.block_size.is_power_of_two() || opts.block_size < 2 {
        return bad("block_size must be a power of two >= 2");
    }
    let n = element_count(shape)
        .ok_or_else(|| Error::Usage("per-block options: shape overflows".into()))?;
    if n != values.len() as u64 {
        return Err(Error::Usage(format!(
            "{} values given for a shape of {n} elements",
            values.len()
        )));
    }
    let Some(g) = BlockGeometry::new(shape, opts.axis, opts.block_size.into()) else {
        return bad("axis out of range");
    };
    if g.axis_len > 0 && g.block_size > g.axis_len {
        return bad("block_size exceeds shape[axis]");
    }
    let width = opts.storage.bit_width().unwrap_or(8) as usize;
    let (qmin, qmax) = int_range(opts.storage).unwrap_or((0, 0));
    let storage_shape = g.storage_shape(shape);
    let storage_elems = element_count(&storage_shape).unwrap_or(0);
    let data_len = opts.storage.buffer_size(storage_elems).unwrap_or(0);

    let to_usize = |v: u64| {
        usize::try_from(v).map_err(|_| Error::Usage("per-block options: tensor too large".into()))
    };
    let mut data = vec![0u8; to_usize(data_len)?];
    let mut scales = Vec::with_capacity(to_usize(g.num_blocks * scale_size)?);
    let mut zero_points = Vec::new();
    let (s_len, k) = (to_usize(g.axis_len)?, to_usize(g.block_size)?);
    let padded = to_usize(g.padded_axis_len)?;
    let pre = to_usize(shape[..opts.axis].iter().product())?;
    let post = to_usize(shape[opts.axis + 1..].iter().product())?;
    let mut block = Vec::with_capacity(k);
    for p in 0..pre {
        for t in 0..post {
            for j in 0..to_usize(g.blocks_per_axis)? {
                let first = j * k;
                let last = (first + k).min(s_len);
                block.clear();
                block.extend((first..last).map(|i| values[(p * s_len + i) * post + t]));
                let finite = block.iter().copied().filter(|x| x.is_finite());
                let (lo, hi) = finite.fold((0.0f32, 0.0f32), |(a, b), x| (a.min(x), b.max(x)));
                let (raw_scale, _) = if opts.symmetric {
                    (lo.abs().max(hi.abs()) / qmax.max(1) as f32, 0)
                } else {
                    ((hi - lo) / (qmax - qmin) as f32, 0)
                };
                let (bytes, s) = encode_scale(opts.scale_type, raw_scale);
                scales.extend_from_slice(&bytes);
                let z = if opts.symmetric {
                    0
                } else {
                    let z = (qmin as f32 - lo / s).round() as i64;
                    let z = z.clamp(i64::from(i32::MIN), i64::from(i32::MAX));
                    zero_points.extend_from_slice(&(z as i32).to_le_bytes());
                    z
                };
                for (i, &x) in (first..last).zip(block.iter()) {
                    let q = ((x / s).round() as i64).saturating_add(z).clamp(qmin, qmax);
                    let mask = (1u64 << width) - 1;
                    let at = (p * padded + i) * post + t;
                    put_code(&mut data, at, width, (q as u64 & mask) as u32);
                }
            }
        }
    }

    let scheme = QuantScheme::PerBlockAffine(PerBlockAffine::version1(
        opts.axis as u32,
        opts.block_size,
        opts.scale_type.tag(),
        opts.symmetric,
    ));
    let mut buffers = vec![data, scales];
    if !opts.symmetric {
        buffers.push(zero_points);
    }
    let sizes: Vec<u64> = buffers.iter().map(|b| b.len() as u64).collect();
    let descriptor = quantized_descriptor(opts.storage.tag(), shape, &sizes, scheme);
    Ok(Quantized {
        descriptor,
        buffers,
    })
}

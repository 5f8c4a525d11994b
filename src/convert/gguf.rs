//! GGUF → HRRYFILE.
//!
//! Metadata: every pair becomes a KV entry under the same key. Integers widen to
//! int64 (signed types) or uint64 (unsigned), floats to float64 (exactly), bools to
//! bool, strings to strings (byte sequences when not UTF-8); arrays to typed KV
//! arrays of the widened type. KV arrays cannot nest, so an array of arrays is
//! stored as a string holding its JSON text.
//!
//! Tensors: GGUF lists dimensions fastest-varying first; the Hurray shape is the
//! reverse, row-major. Plain types (F32, F16, BF16, F64, I8–I64) are copied. `Q8_0`
//! and `Q4_0` become per-block affine int8 / int4 tensors (blocks of 32 along the
//! last axis, float16 scales, symmetric). Other block types are refused unless
//! [`Options::dequantize_unsupported`] asks to store them dequantized.

use std::io::{Seek, SeekFrom};
use std::path::Path;

use binrw::BinRead;

use super::{ggml, Error, FileSource, Format, Options, Progress, Summary};
use crate::file::{HrryWriter, WriterOptions};
use crate::model::build::dense;
use crate::model::ElementType;
use crate::quant::quantize::quantized_descriptor;
use crate::schema::gguf::{
    GgmlType, GgufArray, GgufArrayValues, GgufHeader, GgufPreamble, GgufValue, GGUF_ALIGNMENT_KEY,
    GGUF_DEFAULT_ALIGNMENT,
};
use crate::schema::{
    KvArray, KvScalar, KvValue, LenBytes, PerBlockAffine, QuantScheme, QuantizationHeader,
    TensorDescriptor, FLAG_SYMMETRIC, NO_ZERO_POINT_BUFFER, SCHEME_PER_BLOCK_AFFINE,
};

/// Largest `general.alignment` accepted.
const MAX_ALIGNMENT: u64 = 1 << 30;

fn gguf_error(offset: u64, message: impl Into<String>) -> Error {
    Error::Gguf {
        offset,
        message: message.into(),
    }
}

/// Turns a binrw failure into an error at the offending offset.
fn parse_error(e: binrw::Error) -> Error {
    let message = match e.root_cause() {
        binrw::Error::Io(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
            "the file ends inside the header, metadata or tensor infos".to_string()
        }
        _ => crate::schema::plain_error(&e).1,
    };
    gguf_error(crate::schema::plain_error(&e).0.unwrap_or(0), message)
}

/// The GGUF header, read first so that unsupported variants get a clear message.
fn read_header(src: &mut FileSource) -> Result<GgufHeader, Error> {
    let prefix = src.read_prefix(GgufHeader::LEN as usize)?;
    let header = crate::schema::read_from::<GgufHeader>(&prefix)
        .map_err(parse_error)?
        .0;
    match header.version {
        2 | 3 => Ok(header),
        1 => Err(gguf_error(
            4,
            "GGUF version 1 (32-bit counts) is not supported; re-save the file with a current gguf writer",
        )),
        v if v.swap_bytes() <= 3 => Err(gguf_error(
            4,
            "big-endian GGUF files are not supported",
        )),
        v => Err(gguf_error(4, format!("GGUF version {v} is not 2 or 3"))),
    }
}

fn utf8_or_bytes(bytes: &[u8]) -> KvScalar {
    match std::str::from_utf8(bytes) {
        Ok(_) => KvScalar::String(LenBytes {
            bytes: bytes.to_vec(),
        }),
        Err(_) => KvScalar::Bytes(LenBytes {
            bytes: bytes.to_vec(),
        }),
    }
}

/// The KV value of a GGUF metadata value.
pub fn kv_value(value: &GgufValue) -> KvValue {
    match value {
        GgufValue::Uint8(v) => KvValue::Uint64((*v).into()),
        GgufValue::Uint16(v) => KvValue::Uint64((*v).into()),
        GgufValue::Uint32(v) => KvValue::Uint64((*v).into()),
        GgufValue::Uint64(v) => KvValue::Uint64(*v),
        GgufValue::Int8(v) => KvValue::Int64((*v).into()),
        GgufValue::Int16(v) => KvValue::Int64((*v).into()),
        GgufValue::Int32(v) => KvValue::Int64((*v).into()),
        GgufValue::Int64(v) => KvValue::Int64(*v),
        GgufValue::Float32(v) => KvValue::Float64((*v).into()),
        GgufValue::Float64(v) => KvValue::Float64(*v),
        GgufValue::Bool(v) => KvValue::Bool(u8::from(*v != 0)),
        GgufValue::String(s) => match utf8_or_bytes(&s.bytes) {
            KvScalar::String(b) => KvValue::String(b),
            other => KvValue::Bytes(match other {
                KvScalar::Bytes(b) => b,
                _ => LenBytes::default(),
            }),
        },
        GgufValue::Array(a) => array_value(a),
    }
}

fn array_value(a: &GgufArray) -> KvValue {
    fn typed<T: Copy>(tag: u8, v: &[T], f: impl Fn(T) -> KvScalar) -> KvValue {
        KvValue::Array(KvArray {
            element_tag: tag,
            elements: v.iter().map(|&x| f(x)).collect(),
        })
    }
    use KvScalar as S;
    match &a.values {
        GgufArrayValues::Uint8(v) => typed(0x03, v, |x| S::Uint64(x.into())),
        GgufArrayValues::Uint16(v) => typed(0x03, v, |x| S::Uint64(x.into())),
        GgufArrayValues::Uint32(v) => typed(0x03, v, |x| S::Uint64(x.into())),
        GgufArrayValues::Uint64(v) => typed(0x03, v, S::Uint64),
        GgufArrayValues::Int8(v) => typed(0x02, v, |x| S::Int64(x.into())),
        GgufArrayValues::Int16(v) => typed(0x02, v, |x| S::Int64(x.into())),
        GgufArrayValues::Int32(v) => typed(0x02, v, |x| S::Int64(x.into())),
        GgufArrayValues::Int64(v) => typed(0x02, v, S::Int64),
        GgufArrayValues::Float32(v) => typed(0x04, v, |x| S::Float64(x.into())),
        GgufArrayValues::Float64(v) => typed(0x04, v, S::Float64),
        GgufArrayValues::Bool(v) => typed(0x05, v, |x| S::Bool(u8::from(x != 0))),
        GgufArrayValues::String(v) => {
            let all_utf8 = v.iter().all(|s| std::str::from_utf8(&s.bytes).is_ok());
            let elements: Vec<KvScalar> = v
                .iter()
                .map(|s| {
                    let bytes = LenBytes {
                        bytes: s.bytes.clone(),
                    };
                    if all_utf8 {
                        S::String(bytes)
                    } else {
                        S::Bytes(bytes)
                    }
                })
                .collect();
            KvValue::Array(KvArray {
                element_tag: if all_utf8 { 0x01 } else { 0x06 },
                elements,
            })
        }
        GgufArrayValues::Array(_) => KvValue::String(LenBytes {
            bytes: array_json(a).to_string().into_bytes(),
        }),
    }
}

/// A GGUF array as JSON (strings lossily decoded; non-finite floats become null).
fn array_json(a: &GgufArray) -> serde_json::Value {
    use serde_json::Value as J;
    fn list<T: Copy>(v: &[T], f: impl Fn(T) -> J) -> J {
        J::Array(v.iter().map(|&x| f(x)).collect())
    }
    let float = |x: f64| serde_json::Number::from_f64(x).map_or(J::Null, J::Number);
    match &a.values {
        GgufArrayValues::Uint8(v) => list(v, J::from),
        GgufArrayValues::Uint16(v) => list(v, J::from),
        GgufArrayValues::Uint32(v) => list(v, J::from),
        GgufArrayValues::Uint64(v) => list(v, J::from),
        GgufArrayValues::Int8(v) => list(v, J::from),
        GgufArrayValues::Int16(v) => list(v, J::from),
        GgufArrayValues::Int32(v) => list(v, J::from),
        GgufArrayValues::Int64(v) => list(v, J::from),
        GgufArrayValues::Float32(v) => list(v, |x| float(x.into())),
        GgufArrayValues::Float64(v) => list(v, float),
        GgufArrayValues::Bool(v) => list(v, |x| J::Bool(x != 0)),
        GgufArrayValues::String(v) => J::Array(
            v.iter()
                .map(|s| J::String(s.lossy().into_owned()))
                .collect(),
        ),
        GgufArrayValues::Array(v) => J::Array(v.iter().map(array_json).collect()),
    }
}

/// The Hurray element type of a plain (unblocked) ggml type.
fn plain_type(ty: GgmlType) -> Option<ElementType> {
    Some(match ty {
        GgmlType::F32 => ElementType::Float32,
        GgmlType::F16 => ElementType::Float16,
        GgmlType::Bf16 => ElementType::Bfloat16,
        GgmlType::F64 => ElementType::Float64,
        GgmlType::I8 => ElementType::Int8,
        GgmlType::I16 => ElementType::Int16,
        GgmlType::I32 => ElementType::Int32,
        GgmlType::I64 => ElementType::Int64,
        _ => return None,
    })
}

/// One tensor ready to read: name, type, Hurray shape, absolute offset and size.
struct TensorPlan {
    name: String,
    ty: GgmlType,
    shape: Vec<u64>,
    offset: u64,
    size: u64,
}

/// Checks every tensor info against the file before anything is written.
fn plan_tensors(
    preamble: &GgufPreamble,
    data_start: u64,
    file_len: u64,
    options: &Options,
) -> Result<Vec<TensorPlan>, Error> {
    let mut plans = Vec::with_capacity(preamble.tensors.len());
    for info in &preamble.tensors {
        let name = std::str::from_utf8(&info.name.bytes)
            .map_err(|_| Error::tensor(&info.name.lossy(), "the tensor name is not valid UTF-8"))?
            .to_string();
        let ty = GgmlType::from_code(info.ggml_type).ok_or_else(|| {
            Error::tensor(&name, format!("unknown ggml type code {}", info.ggml_type))
        })?;
        if plain_type(ty).is_none()
            && !matches!(ty, GgmlType::Q8_0 | GgmlType::Q4_0)
            && !options.dequantize_unsupported
        {
            let hint = if ggml::supported(ty) {
                "; rerun with --dequantize-unsupported to store it dequantized (float32, or --dtype f16/bf16)"
            } else {
                " and hrry has no dequantizer for it"
            };
            return Err(Error::tensor(
                &name,
                format!("GGUF type {} has no Hurray equivalent{hint}", ty.name()),
            ));
        }
        if plain_type(ty).is_none() && !ggml::supported(ty) {
            return Err(Error::tensor(
                &name,
                format!(
                    "GGUF type {} cannot be converted: hrry has no dequantizer for it",
                    ty.name()
                ),
            ));
        }
        let ne0 = info.dimensions.first().copied().unwrap_or(1);
        let rows = info
            .dimensions
            .iter()
            .skip(1)
            .try_fold(1u64, |acc, &d| acc.checked_mul(d));
        let (block, _) = ty.block_geometry();
        let size = rows
            .and_then(|rows| ty.tensor_bytes(ne0, rows))
            .ok_or_else(|| {
                Error::tensor(
                    &name,
                    format!(
                        "dimensions {:?} of type {} are not whole blocks of {block} or overflow",
                        info.dimensions,
                        ty.name()
                    ),
                )
            })?;
        let offset = data_start
            .checked_add(info.offset)
            .filter(|&o| o.checked_add(size).is_some_and(|end| end <= file_len))
            .ok_or_else(|| {
                Error::tensor(
                    &name,
                    format!(
                        "{size} bytes at data offset {} run past the end of the file ({file_len} bytes)",
                        info.offset
                    ),
                )
            })?;
        plans.push(TensorPlan {
            name,
            ty,
            shape: info.dimensions.iter().rev().copied().collect(),
            offset,
            size,
        });
    }
    Ok(plans)
}

/// Converts the GGUF file `input` into the HRRYFILE `output`.
pub fn to_hrry(
    input: &Path,
    output: &Path,
    options: &Options,
    progress: &mut dyn Progress,
) -> Result<Summary, Error> {
    let mut src = FileSource::open(input)?;
    read_header(&mut src)?;
    src.seek(SeekFrom::Start(0)).map_err(|e| src.io_error(e))?;
    let preamble = GgufPreamble::read_le(&mut src).map_err(parse_error)?;
    let end_of_infos = src.stream_position().map_err(|e| src.io_error(e))?;

    let alignment = match preamble.value(GGUF_ALIGNMENT_KEY) {
        None => u64::from(GGUF_DEFAULT_ALIGNMENT),
        Some(v) => v
            .as_u64()
            .filter(|a| a.is_power_of_two() && *a <= MAX_ALIGNMENT)
            .ok_or_else(|| {
                gguf_error(
                    0,
                    format!("{GGUF_ALIGNMENT_KEY} is {v:?}, not a power of two up to 2^30"),
                )
            })?,
    };
    let data_start = end_of_infos
        .checked_next_multiple_of(alignment)
        .ok_or_else(|| gguf_error(end_of_infos, "the data section offset overflows"))?;
    let plans = plan_tensors(&preamble, data_start, src.len(), options)?;

    let mut writer = HrryWriter::create_from(
        output,
        &[input],
        WriterOptions {
            tensor_count_hint: Some(plans.len() as u64),
            ..options.writer
        },
    )?;
    let mut notes = Vec::new();
    let mut nested = 0usize;
    for kv in &preamble.metadata {
        let key = std::str::from_utf8(&kv.key.bytes).map_err(|_| {
            gguf_error(
                0,
                format!("metadata key {:?} is not valid UTF-8", kv.key.lossy()),
            )
        })?;
        if matches!(&kv.value, GgufValue::Array(a) if matches!(a.values, GgufArrayValues::Array(_)))
        {
            nested += 1;
        }
        writer.add_kv(key, kv_value(&kv.value))?;
    }
    if nested > 0 {
        notes.push(format!(
            "{nested} nested metadata array(s) stored as JSON strings (KV arrays cannot nest)"
        ));
    }
    let metadata = preamble.metadata.len();
    drop(preamble);

    progress.begin(plans.iter().map(|p| p.size).sum());
    let mut dequantized = 0usize;
    // Every tensor is read into the same buffer: memory stays at the largest tensor
    // whatever the order of the tensors. Block scales (1/17 or 1/9 of a block
    // tensor) get a buffer of their own, freed after each tensor.
    let mut bytes = Vec::new();
    for plan in &plans {
        progress.tensor(&plan.name);
        src.read_range_into(plan.offset, plan.size, Some(&mut *progress), &mut bytes)?;
        if let Some(ty) = plain_type(plan.ty) {
            let desc = dense(ty, &plan.shape)
                .ok_or_else(|| Error::tensor(&plan.name, "the shape overflows"))?;
            writer.write_tensor(&plan.name, &desc, &[&bytes])?;
            continue;
        }
        if let GgmlType::Q8_0 | GgmlType::Q4_0 = plan.ty {
            let mut scales = Vec::new();
            let desc = per_block(plan.ty, &plan.name, &plan.shape, &mut bytes, &mut scales)?;
            writer.write_tensor(&plan.name, &desc, &[&bytes, &scales])?;
            continue;
        }
        dequantized += 1;
        let (desc, values) = dequantized_tensor(plan, &bytes, options)?;
        writer.write_tensor(&plan.name, &desc, &[&values])?;
    }
    writer.finish_file()?;
    if dequantized > 0 {
        notes.push(format!(
            "{dequantized} tensor(s) dequantized to {}",
            options.dtype.element_type().name()
        ));
    }
    Ok(Summary {
        from: Format::Gguf,
        to: Format::Hrry,
        tensors: plans.len(),
        metadata,
        notes,
    })
}

/// Float32 values produced per piece by [`dequantized_tensor`].
const DEQUANTIZE_PIECE: usize = 1 << 18;

/// A tensor of a block type without Hurray equivalent, dequantized to the
/// requested float type a piece of blocks at a time (no whole float32 copy).
fn dequantized_tensor(
    plan: &TensorPlan,
    bytes: &[u8],
    options: &Options,
) -> Result<(TensorDescriptor, Vec<u8>), Error> {
    let unsupported = || {
        Error::tensor(
            &plan.name,
            format!("hrry has no dequantizer for GGUF type {}", plan.ty.name()),
        )
    };
    let (block_len, block_bytes) = plan.ty.block_geometry();
    let (block_len, block_bytes) = (block_len as usize, block_bytes as usize);
    if block_len == 0 || block_bytes == 0 {
        return Err(unsupported());
    }
    let dtype = options.dtype;
    let mut out = Vec::new();
    out.try_reserve_exact(bytes.len() / block_bytes * block_len * dtype.size())
        .map_err(|_| Error::tensor(&plan.name, "the dequantized tensor does not fit in memory"))?;
    let mut values = Vec::new();
    let piece = (DEQUANTIZE_PIECE / block_len).max(1) * block_bytes;
    for blocks in bytes.chunks(piece) {
        values.clear();
        if !ggml::dequantize(plan.ty, blocks, &mut values) {
            return Err(unsupported());
        }
        dtype.encode(&values, &mut out);
    }
    let desc = dense(dtype.element_type(), &plan.shape)
        .ok_or_else(|| Error::tensor(&plan.name, "the shape overflows"))?;
    Ok((desc, out))
}

/// Q8_0 / Q4_0 as per-block affine: `data` becomes the codes (int8, or int4
/// repacked: buffer 0) and `scales` the float16 block scales (buffer 1), blocks of
/// 32 along the last axis.
fn per_block(
    ty: GgmlType,
    name: &str,
    shape: &[u64],
    data: &mut Vec<u8>,
    scales: &mut Vec<u8>,
) -> Result<TensorDescriptor, Error> {
    let (split, storage) = match ty {
        GgmlType::Q8_0 => (split_q8_0(data, scales), ElementType::Int8),
        _ => (split_q4_0(data, scales), ElementType::Int4),
    };
    split.map_err(|block| {
        Error::tensor(
            name,
            format!(
                "{} block {block} has a NaN or infinite scale, which Hurray cannot store",
                ty.name()
            ),
        )
    })?;
    let scheme = QuantScheme::PerBlockAffine(PerBlockAffine {
        header: QuantizationHeader::version1(SCHEME_PER_BLOCK_AFFINE, FLAG_SYMMETRIC),
        axis: shape.len().saturating_sub(1) as u32,
        block_size: 32,
        scale_buffer_index: 1,
        zero_point_buffer_index: NO_ZERO_POINT_BUFFER,
        scale_type_tag: ElementType::Float16.tag(),
        reserved: [0; 3],
    });
    Ok(quantized_descriptor(
        storage.tag(),
        shape,
        &[data.len() as u64, scales.len() as u64],
        scheme.encode(),
    ))
}

/// Splits Q8_0 blocks (`d: f16`, `qs: [i8; 32]`) in place into the int8 codes
/// (compacted at the front of `data`) and puts the float16 scales in `scales`. A
/// zero scale (which Hurray forbids) is replaced by the smallest float16 subnormal
/// of the same sign and its block's codes by zeros: every value of the block is
/// still a zero. `Err(b)`: block `b` has a NaN or infinite scale.
pub(crate) fn split_q8_0(data: &mut Vec<u8>, scales: &mut Vec<u8>) -> Result<(), usize> {
    split_blocks(data, scales, 32, |qs, codes| codes.copy_from_slice(qs))
}

/// Splits Q4_0 blocks (`d: f16`, `qs: [u8; 16]` holding elements `j` in the low
/// nibble of byte `j` and `j + 16` in its high nibble, as unsigned codes offset by 8)
/// in place into Hurray int4 codes (element `2k` in the low nibble of byte `k`,
/// two's complement) and puts the float16 scales in `scales`. Zero scales as in
/// [`split_q8_0`].
pub(crate) fn split_q4_0(data: &mut Vec<u8>, scales: &mut Vec<u8>) -> Result<(), usize> {
    split_blocks(data, scales, 16, |qs, codes| {
        // Element e: GGUF code c (value c - 8); int4 two's complement of c - 8 is c ^ 8.
        let code = |e: usize| ((qs[e % 16] >> (4 * (e / 16))) & 0x0F) ^ 0x08;
        for (k, byte) in codes.iter_mut().enumerate() {
            *byte = code(2 * k) | (code(2 * k + 1) << 4);
        }
    })
}

/// The shared loop of the GGUF block splits: blocks of a float16 scale followed by
/// `code_bytes` bytes, rewritten in place as `code_bytes` bytes of Hurray codes per
/// block (by `repack`, or zeros for a zero scale) with the scales moved to `scales`.
/// Block `b`'s output `[b·code_bytes, (b+1)·code_bytes)` ends before block `b + 1`
/// starts, so no unread input is overwritten.
fn split_blocks(
    data: &mut Vec<u8>,
    scales: &mut Vec<u8>,
    code_bytes: usize,
    repack: impl Fn(&[u8], &mut [u8]),
) -> Result<(), usize> {
    let block = code_bytes + 2;
    let blocks = data.len() / block;
    scales.clear();
    scales.reserve(blocks * 2);
    let mut qs = [0u8; 32];
    let qs = &mut qs[..code_bytes];
    for b in 0..blocks {
        let at = b * block;
        let mut d = [data[at], data[at + 1]];
        let zero = fix_scale(&mut d).map_err(|()| b)?;
        scales.extend_from_slice(&d);
        qs.copy_from_slice(&data[at + 2..at + block]);
        let codes = &mut data[b * code_bytes..(b + 1) * code_bytes];
        if zero {
            codes.fill(0);
        } else {
            repack(qs, codes);
        }
    }
    data.truncate(blocks * code_bytes);
    Ok(())
}

/// Makes a float16 scale acceptable to Hurray: a zero becomes the smallest subnormal
/// of the same sign (returns `Ok(true)`: the block's codes must be zeroed); NaN and
/// infinities are refused.
fn fix_scale(d: &mut [u8; 2]) -> Result<bool, ()> {
    let bits = u16::from_le_bytes(*d);
    if bits & 0x7C00 == 0x7C00 {
        return Err(());
    }
    if bits & 0x7FFF == 0 {
        // Keep the zero's sign: a block quantized from zeros with a -0.0 scale
        // dequantizes to -0.0 in GGUF, and 0 * -min_subnormal is -0.0 too.
        *d = ((bits & 0x8000) | 1).to_le_bytes();
        return Ok(true);
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q8_block(d: u16, first: i8) -> Vec<u8> {
        let mut b = d.to_le_bytes().to_vec();
        b.extend((0..32).map(|i| (first.wrapping_add(i)) as u8));
        b
    }

    #[test]
    fn q8_0_splits_in_place() {
        let mut data = q8_block(0x3C00, -5);
        data.extend(q8_block(0x8000, 3)); // -0.0 scale
        data.extend(q8_block(0x4000, 100));
        let mut scales = vec![0xAA; 3]; // replaced, not appended to
        split_q8_0(&mut data, &mut scales).unwrap();
        assert_eq!(scales, vec![0x00, 0x3C, 0x01, 0x80, 0x00, 0x40]);
        assert_eq!(data.len(), 96);
        assert_eq!(data[0] as i8, -5);
        assert_eq!(data[31] as i8, 26);
        assert!(data[32..64].iter().all(|&q| q == 0));
        assert_eq!(data[64] as i8, 100);
        assert_eq!(data[95] as i8, 100i8.wrapping_add(31));
        let mut nan = q8_block(0x7E00, 0);
        assert_eq!(split_q8_0(&mut nan, &mut scales), Err(0));
    }

    #[test]
    fn q4_0_repacks_nibbles() {
        // Byte j: low nibble = code of element j, high = code of element j + 16.
        let mut data = 0x3C00u16.to_le_bytes().to_vec();
        data.extend((0..16u8).map(|j| j | ((15 - j) << 4)));
        let mut expected_values = [0i8; 32];
        for j in 0..16 {
            expected_values[j] = j as i8 - 8;
            expected_values[j + 16] = (15 - j) as i8 - 8;
        }
        let mut scales = Vec::new();
        split_q4_0(&mut data, &mut scales).unwrap();
        assert_eq!(scales, vec![0x00, 0x3C]);
        assert_eq!(data.len(), 16);
        for (e, &want) in expected_values.iter().enumerate() {
            let nibble = (data[e / 2] >> (4 * (e % 2))) & 0x0F;
            let value = ((nibble << 4) as i8) >> 4;
            assert_eq!(value, want, "element {e}");
        }
    }

    #[test]
    fn metadata_values_widen() {
        assert_eq!(kv_value(&GgufValue::Uint8(7)), KvValue::Uint64(7));
        assert_eq!(kv_value(&GgufValue::Int16(-7)), KvValue::Int64(-7));
        assert_eq!(
            kv_value(&GgufValue::Float32(0.1)),
            KvValue::Float64(0.1f32 as f64)
        );
        assert_eq!(kv_value(&GgufValue::Bool(2)), KvValue::Bool(1));
        assert_eq!(
            kv_value(&GgufValue::String(crate::schema::gguf::GgufString {
                bytes: vec![0xFF]
            })),
            KvValue::Bytes(LenBytes { bytes: vec![0xFF] })
        );
        let nested = GgufValue::Array(GgufArray {
            values: GgufArrayValues::Array(vec![GgufArray {
                values: GgufArrayValues::Int32(vec![1, -2]),
            }]),
        });
        assert_eq!(
            kv_value(&nested),
            KvValue::String(LenBytes {
                bytes: b"[[1,-2]]".to_vec()
            })
        );
        match kv_value(&GgufValue::Array(GgufArray {
            values: GgufArrayValues::Uint16(vec![1, 65535]),
        })) {
            KvValue::Array(a) => {
                assert_eq!(a.element_tag, 0x03);
                assert_eq!(
                    a.elements,
                    vec![KvScalar::Uint64(1), KvScalar::Uint64(65535)]
                );
            }
            other => panic!("{other:?}"),
        }
    }
}

//! safetensors ⇄ HRRYFILE.
//!
//! Every safetensors dtype has a Hurray home: the built-in types one to one, `BOOL`
//! (a byte per element) repacked into Hurray's LSB-first bits, and the two FNUZ
//! float8 variants, which Hurray lacks, as private extension types (`0xF0`, `0xF1`)
//! whose extension section spells out their bit layout. `__metadata__` becomes KV
//! strings and back. Going back, quantized tensors are dequantized to float32 (or
//! the requested float type) and sub-byte integers widen to `I8`/`U8`.
//!
//! The header is parsed and checked by the `safetensors` crate's own `Metadata`
//! (offsets contiguous, sizes matching dtype and shape); tensor data is then read one
//! tensor at a time.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use safetensors::tensor::{Metadata, TensorInfo};
use safetensors::Dtype;

use super::Summary;
use super::{pack_bools, unpack_bools, Error, FileSource, FloatType, Format, Options, Progress};
use crate::file::{HrryFile, HrryWriter, Output, WriterOptions};
use crate::model::build::{dense, descriptor};
use crate::model::{element_count, ElementType};
use crate::quant::Dequantizer;
use crate::schema::{
    ExtensionType, KvValue, LayoutFields, LenBytes, TensorDescriptor, LAYOUT_ROW_MAJOR,
};

/// Largest header the reader accepts (the `safetensors` crate's own limit).
pub const MAX_HEADER_SIZE: u64 = 100_000_000;

/// How a safetensors dtype is stored in a Hurray file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mapping {
    /// The same bits under a built-in element type.
    Builtin(ElementType),
    /// `BOOL`: one byte per element in safetensors, one bit in Hurray.
    Bool,
    /// A private extension tag with its extension section.
    Extension(u8, ExtensionType),
}

const fn fp8_fnuz(exponent_bits: u8, mantissa_bits: u8, exponent_bias: u32) -> ExtensionType {
    ExtensionType {
        bit_width: 8,
        packing_factor: 1,
        is_float: 1,
        is_signed: 0,
        sign_bits: 1,
        exponent_bits,
        mantissa_bits,
        reserved: [0; 2],
        exponent_bias,
        has_nan: 1,
        has_inf: 0,
        reserved2: [0; 2],
    }
}

/// Extension tag used for `F8_E4M3FNUZ`.
pub const TAG_F8_E4M3FNUZ: u8 = 0xF0;
/// Extension tag used for `F8_E5M2FNUZ`.
pub const TAG_F8_E5M2FNUZ: u8 = 0xF1;

/// Every safetensors dtype and its Hurray storage.
const DTYPES: [(Dtype, Mapping); 22] = {
    use ElementType::*;
    use Mapping::Builtin as B;
    [
        (Dtype::BOOL, Mapping::Bool),
        (Dtype::F4, B(Float4E2m1)),
        (Dtype::F6_E2M3, B(Float6E2m3)),
        (Dtype::F6_E3M2, B(Float6E3m2)),
        (Dtype::U8, B(Uint8)),
        (Dtype::I8, B(Int8)),
        (Dtype::F8_E5M2, B(Float8E5m2)),
        (Dtype::F8_E4M3, B(Float8E4m3)),
        (Dtype::F8_E8M0, B(Float8E8m0)),
        (
            Dtype::F8_E4M3FNUZ,
            Mapping::Extension(TAG_F8_E4M3FNUZ, fp8_fnuz(4, 3, 8)),
        ),
        (
            Dtype::F8_E5M2FNUZ,
            Mapping::Extension(TAG_F8_E5M2FNUZ, fp8_fnuz(5, 2, 16)),
        ),
        (Dtype::I16, B(Int16)),
        (Dtype::U16, B(Uint16)),
        (Dtype::F16, B(Float16)),
        (Dtype::BF16, B(Bfloat16)),
        (Dtype::I32, B(Int32)),
        (Dtype::U32, B(Uint32)),
        (Dtype::F32, B(Float32)),
        (Dtype::C64, B(Complex64)),
        (Dtype::F64, B(Float64)),
        (Dtype::I64, B(Int64)),
        (Dtype::U64, B(Uint64)),
    ]
};

fn mapping_of(dtype: Dtype) -> Option<Mapping> {
    DTYPES.iter().find(|(d, _)| *d == dtype).map(|(_, m)| *m)
}

/// The safetensors dtype holding a float type.
fn float_dtype(t: FloatType) -> Dtype {
    match t {
        FloatType::F32 => Dtype::F32,
        FloatType::F16 => Dtype::F16,
        FloatType::Bf16 => Dtype::BF16,
    }
}

/// Reads and checks the header: the parsed metadata and the offset of the data.
fn read_header(src: &mut FileSource) -> Result<(Metadata, u64), Error> {
    let prefix = src.read_prefix(8)?;
    let n = prefix
        .get(..8)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes)
        .ok_or_else(|| Error::Safetensors("file shorter than the 8-byte header length".into()))?;
    if n > MAX_HEADER_SIZE {
        return Err(Error::Safetensors(format!(
            "header length {n} exceeds the {MAX_HEADER_SIZE}-byte limit"
        )));
    }
    if n + 8 > src.len() {
        return Err(Error::Safetensors(format!(
            "header length {n} runs past the end of the file ({} bytes)",
            src.len()
        )));
    }
    let header = src.read_range(8, n, None)?;
    let metadata: Metadata = serde_json::from_slice(&header)
        .map_err(|e| Error::Safetensors(format!("invalid header: {e}")))?;
    let data_start = 8 + n;
    let expected = data_start + metadata.data_len() as u64;
    if expected != src.len() {
        return Err(Error::Safetensors(format!(
            "the header accounts for {expected} bytes but the file holds {}",
            src.len()
        )));
    }
    Ok((metadata, data_start))
}

/// The Hurray descriptor and data buffer for one safetensors tensor.
fn to_hurray_tensor<'b>(
    name: &str,
    dtype: Dtype,
    shape: &[u64],
    bytes: &'b [u8],
) -> Result<(TensorDescriptor, Cow<'b, [u8]>), Error> {
    let mapping = mapping_of(dtype).ok_or_else(|| {
        Error::tensor(
            name,
            format!("safetensors dtype {dtype} has no Hurray counterpart"),
        )
    })?;
    let overflow = || Error::tensor(name, "shape overflows a 64-bit size");
    let (desc, data): (TensorDescriptor, Cow<[u8]>) = match mapping {
        Mapping::Builtin(ty) => (dense(ty, shape).ok_or_else(overflow)?, bytes.into()),
        Mapping::Bool => (
            dense(ElementType::Bool, shape).ok_or_else(overflow)?,
            pack_bools(bytes).into(),
        ),
        Mapping::Extension(tag, ext) => {
            let mut d = descriptor(
                tag,
                LAYOUT_ROW_MAJOR,
                shape,
                LayoutFields::Implicit,
                &[bytes.len() as u64],
            );
            d.extension_type = Some(ext);
            d.sync_sections();
            (d, bytes.into())
        }
    };
    if desc.buffers[0].byte_size != data.len() as u64 {
        return Err(Error::tensor(
            name,
            format!(
                "{} data bytes for dtype {dtype} and shape {shape:?}, {} expected",
                data.len(),
                desc.buffers[0].byte_size
            ),
        ));
    }
    Ok((desc, data))
}

/// Converts the safetensors file `input` into the HRRYFILE `output`.
pub fn to_hrry(
    input: &Path,
    output: &Path,
    options: &Options,
    progress: &mut dyn Progress,
) -> Result<Summary, Error> {
    let mut src = FileSource::open(input)?;
    let (metadata, data_start) = read_header(&mut src)?;
    let names = metadata.offset_keys();
    let mut writer = HrryWriter::create_from(
        output,
        &[input],
        WriterOptions {
            tensor_count_hint: Some(names.len() as u64),
            ..options.writer
        },
    )?;
    let mut kv: Vec<(&String, &String)> = metadata.metadata().iter().flatten().collect();
    kv.sort();
    for (key, value) in &kv {
        writer.add_kv(
            key,
            KvValue::String(LenBytes {
                bytes: value.as_bytes().to_vec(),
            }),
        )?;
    }
    progress.begin(metadata.data_len() as u64);
    // One read buffer for every tensor: memory stays at the largest.
    let mut bytes = Vec::new();
    for name in &names {
        progress.tensor(name);
        let info = metadata.info(name).ok_or_else(|| {
            Error::Safetensors(format!("tensor {name:?} vanished from the header"))
        })?;
        let (start, end) = info.data_offsets;
        src.read_range_into(
            data_start + start as u64,
            (end - start) as u64,
            Some(&mut *progress),
            &mut bytes,
        )?;
        let shape: Vec<u64> = info.shape.iter().map(|&d| d as u64).collect();
        let (desc, data) = to_hurray_tensor(name, info.dtype, &shape, &bytes)?;
        writer.write_tensor(name, &desc, &[&data])?;
    }
    writer.finish_file()?;
    Ok(Summary {
        from: Format::Safetensors,
        to: Format::Hrry,
        tensors: names.len(),
        metadata: kv.len(),
        notes: Vec::new(),
    })
}

/// How one Hurray tensor becomes safetensors bytes.
#[derive(Clone, Debug)]
enum Plan {
    /// Copy `len` bytes at file offset `offset`.
    Copy { offset: u64, len: u64 },
    /// Unpack `n` bits at `offset` (`len` bytes) to one byte each.
    Bools { offset: u64, len: u64, n: usize },
    /// Widen `n` packed sub-byte integers at `offset` to one byte each.
    Widen {
        offset: u64,
        len: u64,
        n: usize,
        ty: ElementType,
    },
    /// Dequantize (buffers at these file offsets and sizes) to the float type.
    Dequantize {
        descriptor: Box<TensorDescriptor>,
        buffers: Vec<(u64, u64)>,
    },
}

struct Planned {
    name: String,
    dtype: Dtype,
    shape: Vec<usize>,
    out_len: usize,
    in_len: u64,
    plan: Plan,
}

/// The safetensors dtype matching a Hurray extension section, if any.
fn extension_dtype(d: &TensorDescriptor) -> Option<Dtype> {
    let ext = d.extension_type?;
    DTYPES.iter().find_map(|(dtype, m)| match m {
        Mapping::Extension(_, e) if *e == ext => Some(*dtype),
        _ => None,
    })
}

/// Decides how tensor `name` (descriptor `d`, buffer `i` at file offset `offsets[i]`)
/// is written.
fn plan_tensor(
    name: &str,
    d: &TensorDescriptor,
    offsets: &[u64],
    dtype: FloatType,
    notes: &mut Vec<String>,
) -> Result<Planned, Error> {
    let bad = |m: String| Error::tensor(name, m);
    let n =
        element_count(&d.shape).ok_or_else(|| bad("the shape is dynamic or overflows".into()))?;
    let shape: Vec<usize> = d
        .shape
        .iter()
        .map(|&x| usize::try_from(x))
        .collect::<Result<_, _>>()
        .map_err(|_| bad("a dimension does not fit in memory".into()))?;
    let n_usize =
        usize::try_from(n).map_err(|_| bad("the element count does not fit in memory".into()))?;
    if d.quantization.is_some() {
        let out_len = n_usize
            .checked_mul(dtype.size())
            .ok_or_else(|| bad("the dequantized size overflows".into()))?;
        let buffers: Vec<(u64, u64)> = offsets
            .iter()
            .zip(&d.buffers)
            .map(|(&o, h)| (o, h.byte_size))
            .collect();
        return Ok(Planned {
            name: name.to_string(),
            dtype: float_dtype(dtype),
            shape,
            out_len,
            in_len: buffers.iter().map(|b| b.1).sum(),
            plan: Plan::Dequantize {
                descriptor: Box::new(d.clone()),
                buffers,
            },
        });
    }
    if d.layout_tag != LAYOUT_ROW_MAJOR {
        return Err(bad(format!(
            "layout {:#04x} is not row-major; only row-major tensors convert to safetensors",
            d.layout_tag
        )));
    }
    let ty = ElementType::from_tag(d.type_tag)
        .ok_or_else(|| bad(format!("unknown type tag {:#04x}", d.type_tag)))?;
    let (target, bits) = match ty {
        ElementType::Extension(_) => {
            let dt = extension_dtype(d).ok_or_else(|| {
                bad("its private extension type has no safetensors counterpart".into())
            })?;
            (dt, d.extension_type.map_or(0, |e| e.bit_width))
        }
        ElementType::Int4 | ElementType::Int2 => (Dtype::I8, 0),
        ElementType::Uint4 | ElementType::Uint2 => (Dtype::U8, 0),
        other => {
            let dt = DTYPES
                .iter()
                .find_map(|(dt, m)| match m {
                    Mapping::Builtin(t) if *t == other => Some(*dt),
                    Mapping::Bool if other == ElementType::Bool => Some(*dt),
                    _ => None,
                })
                .ok_or_else(|| {
                    bad(format!(
                        "element type {} has no safetensors dtype",
                        other.name()
                    ))
                })?;
            (dt, 0)
        }
    };
    let stored = match ty {
        ElementType::Extension(_) => crate::model::packed_size(bits, n),
        _ => ty.buffer_size(n),
    }
    .ok_or_else(|| bad("the data size overflows".into()))?;
    let buffer = d
        .buffers
        .first()
        .ok_or_else(|| bad("a row-major tensor without a data buffer".into()))?;
    let fits = d
        .byte_offset
        .checked_add(stored)
        .is_some_and(|end| end <= buffer.byte_size);
    if !fits {
        return Err(bad(format!(
            "byte_offset {} + {stored} data bytes exceed buffer 0 ({} bytes)",
            d.byte_offset, buffer.byte_size
        )));
    }
    let offset = offsets[0] + d.byte_offset;
    let out_bits = (n as u128) * target.bitsize() as u128;
    if !out_bits.is_multiple_of(8) {
        return Err(bad(format!(
            "{n} elements of {target} do not fill whole bytes, which safetensors requires"
        )));
    }
    let out_len = usize::try_from(out_bits / 8)
        .map_err(|_| bad("the output size does not fit in memory".into()))?;
    let plan = match ty {
        ElementType::Bool => Plan::Bools {
            offset,
            len: stored,
            n: n_usize,
        },
        ElementType::Int4 | ElementType::Int2 | ElementType::Uint4 | ElementType::Uint2 => {
            notes.push(format!(
                "tensor {name:?}: {} widened to {target} (safetensors has no {}-bit integers)",
                ty.name(),
                ty.bit_width().unwrap_or(0)
            ));
            Plan::Widen {
                offset,
                len: stored,
                n: n_usize,
                ty,
            }
        }
        _ => Plan::Copy {
            offset,
            len: stored,
        },
    };
    Ok(Planned {
        name: name.to_string(),
        dtype: target,
        shape,
        out_len,
        in_len: stored,
        plan,
    })
}

/// Sign-extends or zero-extends `n` packed `ty` integers to one byte each.
fn widen(bits: &[u8], n: usize, ty: ElementType) -> Vec<u8> {
    let width = ty.bit_width().unwrap_or(8) as usize;
    let mask = (1u8 << width) - 1;
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

/// Buffers reused from tensor to tensor by [`write_rendered`].
#[derive(Default)]
struct Scratch {
    /// The input bytes of a tensor (one per data buffer when dequantizing).
    inputs: Vec<Vec<u8>>,
    /// Values of one piece.
    values: Vec<f32>,
    /// Encoded output of one piece.
    out: Vec<u8>,
}

/// Writes the safetensors bytes of one planned tensor to `sink`, checking their
/// count against the plan.
/// Dequantized tensors are written a piece at a time, so only their (quantized)
/// input is held whole.
fn write_rendered(
    p: &Planned,
    src: &mut FileSource,
    dtype: FloatType,
    progress: &mut dyn Progress,
    scratch: &mut Scratch,
    sink: &mut dyn FnMut(&[u8]) -> Result<(), Error>,
) -> Result<(), Error> {
    let Scratch {
        inputs,
        values,
        out,
    } = scratch;
    let mut read = |i: usize, offset: u64, len: u64, progress: &mut dyn Progress| {
        if inputs.len() <= i {
            inputs.resize_with(i + 1, Vec::new);
        }
        src.read_range_into(offset, len, Some(progress), &mut inputs[i])
    };
    let written = match &p.plan {
        Plan::Copy { offset, len } => {
            read(0, *offset, *len, progress)?;
            sink(&inputs[0])?;
            inputs[0].len()
        }
        Plan::Bools { offset, len, n } => {
            read(0, *offset, *len, progress)?;
            let bytes = unpack_bools(&inputs[0], *n);
            sink(&bytes)?;
            bytes.len()
        }
        Plan::Widen { offset, len, n, ty } => {
            read(0, *offset, *len, progress)?;
            let bytes = widen(&inputs[0], *n, *ty);
            sink(&bytes)?;
            bytes.len()
        }
        Plan::Dequantize {
            descriptor,
            buffers,
        } => {
            for (i, &(offset, len)) in buffers.iter().enumerate() {
                read(i, offset, len, &mut *progress)?;
            }
            let slices: Vec<&[u8]> = inputs[..buffers.len()].iter().map(Vec::as_slice).collect();
            let dq = Dequantizer::new(descriptor, &slices)
                .map_err(|e| Error::tensor(&p.name, format!("cannot dequantize: {e}")))?;
            let mut chunks = dq
                .row_chunks(DEQUANTIZE_CHUNK)
                .map_err(|e| Error::tensor(&p.name, format!("cannot dequantize: {e}")))?;
            let mut total = 0;
            while chunks.next_into(values).is_some() {
                out.clear();
                dtype.encode(values, out);
                sink(out)?;
                total += out.len();
            }
            // Only the data buffer is kept for the next tensor; parameter buffers go.
            inputs.truncate(1);
            total
        }
    };
    if written != p.out_len {
        return Err(Error::tensor(
            &p.name,
            format!("produced {written} bytes, {} planned", p.out_len),
        ));
    }
    Ok(())
}

/// Values dequantized per piece, so the float32 copy never exceeds this many.
const DEQUANTIZE_CHUNK: usize = 1 << 18;

/// Converts the HRRYFILE `input` into the safetensors file `output`.
pub fn from_hrry(
    input: &Path,
    output: &Path,
    options: &Options,
    progress: &mut dyn Progress,
) -> Result<Summary, Error> {
    let file = HrryFile::open(input)?;
    let mut src = FileSource::open(input)?;
    let base = file.bytes().as_ptr() as usize;
    let mut notes = Vec::new();
    let mut planned = Vec::with_capacity(file.len());
    for entry in file.entries() {
        let name = entry.name().to_string();
        let tensor = file.tensor_at(entry)?;
        // Offsets of the (bounds-checked) buffers in the file; their bytes are read
        // later, one tensor at a time, instead of through the map.
        let offsets: Vec<u64> = tensor
            .buffers
            .iter()
            .map(|b| (b.as_ptr() as usize - base) as u64)
            .collect();
        planned.push(plan_tensor(
            &name,
            &tensor.descriptor,
            &offsets,
            options.dtype,
            &mut notes,
        )?);
    }
    // The `safetensors` crate's order: descending dtype alignment, then name.
    planned.sort_by(|a, b| b.dtype.cmp(&a.dtype).then_with(|| a.name.cmp(&b.name)));

    let mut strings = HashMap::new();
    let mut dropped = Vec::new();
    for kv in file.kv() {
        let key = String::from_utf8_lossy(&kv.key).into_owned();
        match &kv.value {
            KvValue::String(s) => match std::str::from_utf8(&s.bytes) {
                Ok(v) => {
                    strings.insert(key, v.to_string());
                }
                Err(_) => dropped.push(key),
            },
            _ => dropped.push(key),
        }
    }
    if !dropped.is_empty() {
        notes.push(format!(
            "{} non-string metadata entr{} dropped (safetensors metadata holds strings only): {}",
            dropped.len(),
            if dropped.len() == 1 { "y" } else { "ies" },
            summarize_keys(&dropped)
        ));
    }
    let kv_count = strings.len();
    // Everything needed from the map is copied out: unmapping now keeps the pages
    // planning touched (descriptors, KV, scale checks) out of the resident set.
    drop(file);

    let mut offset = 0usize;
    let mut infos = Vec::with_capacity(planned.len());
    for p in &planned {
        let end = offset
            .checked_add(p.out_len)
            .ok_or_else(|| Error::Unsupported("the output exceeds the address space".into()))?;
        infos.push((
            p.name.clone(),
            TensorInfo {
                dtype: p.dtype,
                shape: p.shape.clone(),
                data_offsets: (offset, end),
            },
        ));
        offset = end;
    }
    let metadata = Metadata::new((!strings.is_empty()).then_some(strings), infos)
        .map_err(|e| Error::Safetensors(format!("cannot build the header: {e}")))?;
    let mut header = serde_json::to_vec(&metadata)
        .map_err(|e| Error::Safetensors(format!("cannot encode the header: {e}")))?;
    header.resize(header.len().next_multiple_of(8), b' ');
    if header.len() as u64 > MAX_HEADER_SIZE {
        return Err(Error::Safetensors(format!(
            "the header would be {} bytes, over the {MAX_HEADER_SIZE}-byte limit",
            header.len()
        )));
    }

    let mut out = Output::create(output, &[input]).map_err(crate::file::Error::from)?;
    let io = |e| Error::Io {
        path: output.to_path_buf(),
        source: e,
    };
    out.write_all(&(header.len() as u64).to_le_bytes())
        .map_err(io)?;
    out.write_all(&header).map_err(io)?;
    progress.begin(planned.iter().map(|p| p.in_len).sum());
    let mut scratch = Scratch::default();
    for p in &planned {
        progress.tensor(&p.name);
        let mut sink = |bytes: &[u8]| out.write_all(bytes).map_err(io);
        write_rendered(
            p,
            &mut src,
            options.dtype,
            progress,
            &mut scratch,
            &mut sink,
        )?;
    }
    out.commit().map_err(crate::file::Error::from)?;
    Ok(Summary {
        from: Format::Hrry,
        to: Format::Safetensors,
        tensors: planned.len(),
        metadata: kv_count,
        notes,
    })
}

/// The first few keys of a list, for a message.
fn summarize_keys(keys: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut s = keys
        .iter()
        .take(SHOWN)
        .map(|k| format!("{k:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    if keys.len() > SHOWN {
        s.push_str(&format!(", … ({} more)", keys.len() - SHOWN));
    }
    s
}

/// Reads a safetensors file's tensors and metadata (for tests and tools): names in
/// file order with dtype, shape and bytes, and the `__metadata__` map.
#[allow(clippy::type_complexity)]
pub fn read_all(
    path: &Path,
) -> Result<
    (
        Vec<(String, Dtype, Vec<usize>, Vec<u8>)>,
        HashMap<String, String>,
    ),
    Error,
> {
    let mut src = FileSource::open(path)?;
    let (metadata, data_start) = read_header(&mut src)?;
    let mut tensors = Vec::new();
    for name in metadata.offset_keys() {
        let Some(info) = metadata.info(&name) else {
            continue;
        };
        let (s, e) = info.data_offsets;
        let bytes = src.read_range(data_start + s as u64, (e - s) as u64, None)?;
        tensors.push((name, info.dtype, info.shape.clone(), bytes));
    }
    Ok((tensors, metadata.metadata().clone().unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dtype_maps_once() {
        for (i, (a, _)) in DTYPES.iter().enumerate() {
            for (b, _) in &DTYPES[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(
            mapping_of(Dtype::F32),
            Some(Mapping::Builtin(ElementType::Float32))
        );
        assert_eq!(mapping_of(Dtype::BOOL), Some(Mapping::Bool));
    }

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
}

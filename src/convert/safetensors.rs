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

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::Path;

use safetensors::tensor::{Metadata, TensorInfo};
use safetensors::Dtype;

use super::checkpoint::{self, Provenance, SafetensorsIndex};
use super::hrry_source::{self, render, HrryInput, Render, RenderScratch};
use super::listing::{ListedKv, ListedTensor, Listing};
use super::output::Target;
use super::{output, Summary};
use super::{
    pack_bools, Error, FileSource, FloatType, ModelFormat, NoProgress, Options, Progress, CHUNK,
};
use crate::file::WriterOptions;
use crate::model::build::{dense, descriptor};
use crate::model::{element_count, ElementType};
use crate::schema::{ExtensionType, KvValue, LayoutFields, TensorDescriptor, LAYOUT_ROW_MAJOR};

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
        .ok_or_else(|| super::safetensors_error("file shorter than the 8-byte header length"))?;
    if n > MAX_HEADER_SIZE {
        return Err(super::safetensors_error(format!(
            "header length {n} exceeds the {MAX_HEADER_SIZE}-byte limit"
        )));
    }
    if n + 8 > src.len() {
        return Err(super::safetensors_error(format!(
            "header length {n} runs past the end of the file ({} bytes)",
            src.len()
        )));
    }
    let header = src.read_range(8, n, None)?;
    let metadata: Metadata = serde_json::from_slice(&header)
        .map_err(|e| super::safetensors_error(format!("invalid header: {e}")))?;
    let data_start = 8 + n;
    let expected = data_start + metadata.data_len() as u64;
    if expected != src.len() {
        return Err(super::safetensors_error(format!(
            "the header accounts for {expected} bytes but the file holds {}{}",
            src.len(),
            if expected > src.len() {
                ": a truncated safetensors file (an interrupted download?)"
            } else {
                ""
            }
        )));
    }
    Ok((metadata, data_start))
}

/// The Hurray descriptor for one safetensors tensor of `len` data bytes, and how
/// its bytes are stored.
fn hurray_descriptor(
    name: &str,
    dtype: Dtype,
    shape: &[u64],
    len: u64,
) -> Result<(TensorDescriptor, Mapping), Error> {
    let mapping = mapping_of(dtype).ok_or_else(|| {
        Error::tensor(
            name,
            format!("safetensors dtype {dtype} has no Hurray counterpart"),
        )
    })?;
    let overflow = || Error::tensor(name, "shape overflows a 64-bit size");
    let (desc, input_len) = match mapping {
        Mapping::Builtin(ty) => {
            let d = dense(ty, shape).ok_or_else(overflow)?;
            let size = d.buffers[0].byte_size;
            (d, size)
        }
        Mapping::Bool => (
            dense(ElementType::Bool, shape).ok_or_else(overflow)?,
            element_count(shape).ok_or_else(overflow)?,
        ),
        Mapping::Extension(tag, ext) => {
            let mut d = descriptor(tag, LAYOUT_ROW_MAJOR, shape, LayoutFields::Implicit, &[len]);
            d.extension_type = Some(ext);
            d.sync_sections();
            (d, len)
        }
    };
    if input_len != len {
        return Err(Error::tensor(
            name,
            format!("{len} data bytes for dtype {dtype} and shape {shape:?}, {input_len} expected"),
        ));
    }
    Ok((desc, mapping))
}

/// One tensor of a safetensors input: where its bytes are and what they hold.
struct InputTensor {
    name: String,
    /// Index of the file holding it.
    shard: usize,
    dtype: Dtype,
    shape: Vec<u64>,
    /// Absolute offset of its data in that file.
    offset: u64,
    len: u64,
}

/// The files of a safetensors input, their tensors in output order (file by file,
/// each in data order) and their merged `__metadata__`.
struct Shards {
    /// Every file read (the index too), which the output must not be.
    paths: Vec<std::path::PathBuf>,
    sources: Vec<FileSource>,
    tensors: Vec<InputTensor>,
    metadata: Vec<(String, String)>,
    /// Set for a checkpoint given by its index.
    provenance: Option<Provenance>,
}

/// Opens `input`: one safetensors file, or the shards its index lists (checked
/// against each shard's header: every tensor where the index says, and nowhere
/// else).
fn open_shards(input: &Path) -> Result<Shards, Error> {
    let index = if checkpoint::is_index(input)? {
        Some(checkpoint::read_index(input)?)
    } else {
        None
    };
    let paths = match &index {
        Some(ix) => ix.shards.clone(),
        None => vec![input.to_path_buf()],
    };
    let mut sources = Vec::with_capacity(paths.len());
    let mut tensors = Vec::new();
    let mut metadata: Vec<(String, String, usize)> = Vec::new();
    for (shard, path) in paths.iter().enumerate() {
        let named = |e: Error| match (&index, e) {
            (Some(_), Error::Format(m)) => Error::Format(format!("{}: {m}", path.display())),
            (_, e) => e,
        };
        let mut src = match (FileSource::open(path), &index) {
            (Ok(src), _) => src,
            (Err(Error::Io(source)), Some(ix)) => {
                let tensor = ix
                    .weight_map
                    .iter()
                    .find(|(_, &s)| s == shard)
                    .map_or("", |(t, _)| t.as_str());
                return Err(super::checkpoint_at(
                    &ix.path,
                    format!(
                        "shard {:?} (holding {tensor:?}) cannot be opened: {source}",
                        ix.shard_names[shard]
                    ),
                ));
            }
            (Err(e), _) => return Err(e),
        };
        let (header, data_start) = read_header(&mut src).map_err(named)?;
        for name in header.offset_keys() {
            let info = header.info(&name).ok_or_else(|| {
                super::safetensors_error(format!("tensor {name:?} vanished from the header"))
            })?;
            if let Some(ix) = &index {
                check_placement(ix, &name, shard)?;
            }
            let (start, end) = info.data_offsets;
            tensors.push(InputTensor {
                shape: info.shape.iter().map(|&d| d as u64).collect(),
                dtype: info.dtype,
                offset: data_start + start as u64,
                len: (end - start) as u64,
                shard,
                name,
            });
        }
        let mut kv: Vec<(&String, &String)> = header.metadata().iter().flatten().collect();
        kv.sort();
        for (key, value) in kv {
            match metadata.iter().find(|(k, _, _)| k == key) {
                None => metadata.push((key.clone(), value.clone(), shard)),
                Some((_, v, _)) if v == value => {}
                Some((_, v, first)) => {
                    return Err(super::checkpoint_at(
                        path,
                        format!(
                            "__metadata__ {key:?} is {value:?} here but {v:?} in {}",
                            paths[*first].display()
                        ),
                    ))
                }
            }
        }
        sources.push(src);
    }
    let provenance = match &index {
        None => None,
        Some(ix) => {
            if ix.weight_map.len() != tensors.len() {
                let held: HashSet<&str> = tensors.iter().map(|t| t.name.as_str()).collect();
                let (missing, shard) = ix
                    .weight_map
                    .iter()
                    .find(|(t, _)| !held.contains(t.as_str()))
                    .map_or(("", 0), |(t, &s)| (t.as_str(), s));
                return Err(super::checkpoint_at(
                    &ix.path,
                    format!(
                        "the index maps tensor {missing:?} to {:?}, which does not hold it",
                        ix.shard_names[shard]
                    ),
                ));
            }
            let mut extra = vec![(
                checkpoint::SOURCE_INDEX_KEY.to_string(),
                checkpoint::kv_string(&checkpoint::file_name(&ix.path)),
            )];
            if let Some(m) = &ix.metadata {
                extra.push((
                    checkpoint::SOURCE_INDEX_METADATA_KEY.to_string(),
                    checkpoint::kv_string(m),
                ));
            }
            Some(Provenance {
                files: ix.shard_names.clone(),
                extra,
            })
        }
    };
    let mut all_paths = paths;
    if let Some(ix) = &index {
        all_paths.push(ix.path.clone());
    }
    Ok(Shards {
        paths: all_paths,
        sources,
        tensors,
        metadata: metadata.into_iter().map(|(k, v, _)| (k, v)).collect(),
        provenance,
    })
}

/// Refuses a tensor found in shard `shard` that the index puts elsewhere or omits.
fn check_placement(ix: &SafetensorsIndex, name: &str, shard: usize) -> Result<(), Error> {
    let message = match ix.weight_map.get(name) {
        Some(&s) if s == shard => return Ok(()),
        Some(&s) => format!(
            "tensor {name:?} is in {:?} but the index maps it to {:?}",
            ix.shard_names[shard], ix.shard_names[s]
        ),
        None => format!(
            "tensor {name:?} is in {:?} but the index does not list it",
            ix.shard_names[shard]
        ),
    };
    Err(super::checkpoint_at(&ix.path, message))
}

/// Converts the safetensors file, or the sharded checkpoint whose
/// `*.index.json` is `input`, into the HRRYFILE `output`. Tensor data is copied
/// (by the kernel where it can) or repacked a piece at a time, never held whole.
pub fn to_hrry(
    input: &Path,
    output: &Path,
    options: &Options,
    progress: &mut dyn Progress,
) -> Result<Summary, Error> {
    to_hrry_into(input, Target::Path(output), options, progress)
}

/// [`to_hrry`] into `target`.
pub(crate) fn to_hrry_into(
    input: &Path,
    target: Target<'_>,
    options: &Options,
    progress: &mut dyn Progress,
) -> Result<Summary, Error> {
    let Shards {
        paths,
        mut sources,
        tensors,
        metadata,
        provenance,
    } = open_shards(input)?;
    // Every descriptor is built (and every tensor refused) before a byte is written.
    let descriptors = tensors
        .iter()
        .map(|t| hurray_descriptor(&t.name, t.dtype, &t.shape, t.len))
        .collect::<Result<Vec<_>, _>>()?;
    let mut buf = Vec::new();
    for t in tensors.iter().filter(|t| t.dtype == Dtype::F8_E8M0) {
        check_e8m0_codes(&mut sources[t.shard], t, &mut buf)?;
    }
    let inputs: Vec<&Path> = paths.iter().map(|p| p.as_path()).collect();
    let mut writer = output::hrry_writer(
        target,
        &inputs,
        WriterOptions {
            tensor_count_hint: Some(tensors.len() as u64),
            ..options.writer
        },
    )?;
    let mut kv_count = 0;
    for (key, value) in &metadata {
        writer.add_kv(key, checkpoint::kv_string(value))?;
        kv_count += 1;
    }
    if let Some(p) = &provenance {
        for (key, value) in p.entries(tensors.iter().map(|t| (t.name.as_str(), t.shard))) {
            writer.add_kv(&key, value)?;
            kv_count += 1;
        }
    }
    progress.begin(tensors.iter().map(|t| t.len).sum());
    for (t, (desc, mapping)) in tensors.iter().zip(&descriptors) {
        progress.tensor(&t.name);
        let src = &mut sources[t.shard];
        writer.begin_tensor(&t.name, desc)?;
        if *mapping == Mapping::Bool {
            // Eight input bytes make one output byte: pieces of whole output bytes.
            src.for_each_piece(t.offset, t.len, 8, CHUNK, &mut buf, progress, |piece| {
                writer.write_data(&pack_bools(piece))
            })?;
        } else {
            output::copy_into_tensor(&mut writer, src, t.offset, t.len, progress)?;
        }
        writer.end_tensor()?;
    }
    output::finish_hrry(writer)?;
    Ok(Summary {
        from: ModelFormat::Safetensors,
        to: ModelFormat::Hrry,
        tensors: tensors.len(),
        metadata: kv_count,
        as_dtype: 0,
        notes: Vec::new(),
    })
}

/// Refuses a float8_e8m0 tensor holding code 0x00 or 0xFF, which a HRRYFILE may not
/// store (rule TD-TYP-002), naming the first such element. This reads the tensor
/// once before anything is written, in pieces.
fn check_e8m0_codes(src: &mut FileSource, t: &InputTensor, buf: &mut Vec<u8>) -> Result<(), Error> {
    let mut seen = 0u64;
    src.for_each_piece(t.offset, t.len, 1, CHUNK, buf, &mut NoProgress, |piece| {
        if let Some(i) = piece.iter().position(|&b| b == 0x00 || b == 0xFF) {
            return Err(Error::tensor(
                &t.name.clone(),
                format!(
                    "element {} is the float8_e8m0 code 0x{:02X}, which a HRRYFILE may not \
                     store (rule TD-TYP-002 reserves 0x00 and 0xFF)",
                    seen + i as u64,
                    piece[i]
                ),
            ));
        }
        seen += piece.len() as u64;
        Ok(())
    })
}

/// One tensor of the output: its header entry and how its bytes are made.
struct Planned {
    name: String,
    dtype: Dtype,
    shape: Vec<usize>,
    out_len: usize,
    render: Render,
}

/// The safetensors dtype matching a Hurray extension section, if any.
fn extension_dtype(d: &TensorDescriptor) -> Option<Dtype> {
    let ext = d.extension_type?;
    DTYPES.iter().find_map(|(dtype, m)| match m {
        Mapping::Extension(_, e) if *e == ext => Some(*dtype),
        _ => None,
    })
}

/// Decides how tensor `index` of the input is written.
fn plan_tensor(
    input: &HrryInput,
    index: usize,
    dtype: FloatType,
    notes: &mut Vec<String>,
) -> Result<Planned, Error> {
    let hrry_source::InputTensor {
        name,
        descriptor: d,
        offsets,
    } = &input.tensors[index];
    let name = name.as_str();
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
        return Ok(Planned {
            name: name.to_string(),
            dtype: float_dtype(dtype),
            shape,
            out_len,
            render: Render::Dequantize {
                tensor: index,
                dtype,
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
    let render = match ty {
        ElementType::Bool => Render::Bools {
            offset,
            len: stored,
            n,
        },
        ElementType::Int4 | ElementType::Int2 | ElementType::Uint4 | ElementType::Uint2 => {
            notes.push(format!(
                "tensor {name:?}: {} widened to {target} (safetensors has no {}-bit integers)",
                ty.name(),
                ty.bit_width().unwrap_or(0)
            ));
            Render::Widen {
                offset,
                len: stored,
                n,
                ty,
            }
        }
        _ => Render::Copy {
            offset,
            len: stored,
        },
    };
    Ok(Planned {
        name: name.to_string(),
        dtype: target,
        shape,
        out_len,
        render,
    })
}

/// Converts the HRRYFILE `input` into the safetensors file `output`, a piece of a
/// tensor at a time (dense data copied by the kernel where it can, quantized
/// tensors dequantized a slab at a time).
pub fn from_hrry(
    input_path: &Path,
    output: &Path,
    options: &Options,
    progress: &mut dyn Progress,
) -> Result<Summary, Error> {
    from_hrry_into(input_path, Target::Path(output), options, progress)
}

/// [`from_hrry`] into `target`.
pub(crate) fn from_hrry_into(
    input_path: &Path,
    target: Target<'_>,
    options: &Options,
    progress: &mut dyn Progress,
) -> Result<Summary, Error> {
    let name = target.name();
    let output = name.as_path();
    let mut input = hrry_source::open(input_path, options.permissive)?;
    let mut notes = std::mem::take(&mut input.notes);
    let mut planned = (0..input.tensors.len())
        .map(|i| plan_tensor(&input, i, options.dtype, &mut notes))
        .collect::<Result<Vec<_>, _>>()?;
    // The `safetensors` crate's order: descending dtype alignment, then name.
    planned.sort_by(|a, b| b.dtype.cmp(&a.dtype).then_with(|| a.name.cmp(&b.name)));

    let mut strings = HashMap::new();
    let mut dropped = Vec::new();
    for kv in &input.kv {
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
        .map_err(|e| super::safetensors_error(format!("cannot build the header: {e}")))?;
    let mut header = serde_json::to_vec(&metadata)
        .map_err(|e| super::safetensors_error(format!("cannot encode the header: {e}")))?;
    header.resize(header.len().next_multiple_of(8), b' ');
    if header.len() as u64 > MAX_HEADER_SIZE {
        return Err(super::safetensors_error(format!(
            "the header would be {} bytes, over the {MAX_HEADER_SIZE}-byte limit",
            header.len()
        )));
    }

    let mut out = target.create(&[input_path])?;
    let io = |e| super::io_at(output, e);
    out.write_all(&(header.len() as u64).to_le_bytes())
        .map_err(io)?;
    out.write_all(&header).map_err(io)?;
    progress.begin(planned.iter().map(|p| p.render.input_len(&input)).sum());
    let mut scratch = RenderScratch::default();
    for p in &planned {
        progress.tensor(&p.name);
        let written = render(
            &p.render,
            &mut input,
            &mut out,
            output,
            &mut scratch,
            progress,
        )?;
        if written != p.out_len as u64 {
            return Err(Error::tensor(
                &p.name,
                format!("produced {written} bytes, {} planned", p.out_len),
            ));
        }
    }
    output::commit(out)?;
    Ok(Summary {
        from: ModelFormat::Hrry,
        to: ModelFormat::Safetensors,
        tensors: planned.len(),
        metadata: kv_count,
        as_dtype: planned
            .iter()
            .filter(|p| matches!(p.render, Render::Dequantize { .. }))
            .count(),
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

/// The listing of the safetensors file `path` (see [`super::list`]):
/// its checked header, `__metadata__` as strings, and each tensor with the Hurray
/// type it converts to.
pub(crate) fn listing(path: &Path) -> Result<Listing, Error> {
    let mut src = FileSource::open(path)?;
    let (metadata, data_start) = read_header(&mut src)?;
    let mut entries: Vec<_> = metadata
        .metadata()
        .clone()
        .unwrap_or_default()
        .into_iter()
        .collect();
    // The JSON object has no order the crate keeps: sorted by key.
    entries.sort();
    let metadata_list = entries
        .into_iter()
        .map(|(key, value)| ListedKv {
            value: checkpoint::kv_string(&value),
            key,
            source_type: "string".into(),
        })
        .collect();
    let mut tensors = Vec::new();
    for name in metadata.offset_keys() {
        let Some(info) = metadata.info(&name) else {
            continue;
        };
        let (s, e) = info.data_offsets;
        let converts_to = match mapping_of(info.dtype) {
            Some(Mapping::Builtin(ty)) => ty.name().to_string(),
            Some(Mapping::Bool) => "bool (repacked to bits)".to_string(),
            Some(Mapping::Extension(tag, _)) => format!("extension type {tag:#04x}"),
            None => "refused: no Hurray counterpart".to_string(),
        };
        tensors.push(ListedTensor {
            dtype: info.dtype.to_string(),
            shape: info.shape.iter().map(|&d| d as u64).collect(),
            offset: data_start + s as u64,
            bytes: Some((e - s) as u64),
            converts_to,
            name,
        });
    }
    Ok(Listing {
        format: ModelFormat::Safetensors,
        file_len: src.len(),
        version: None,
        data_start,
        alignment: None,
        metadata: metadata_list,
        tensors,
    })
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
}

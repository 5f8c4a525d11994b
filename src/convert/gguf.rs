//! GGUF → HRRYFILE, from one file or a whole split set.
//!
//! Metadata: every pair becomes a KV entry under the same key. Integers widen to
//! int64 (signed types) or uint64 (unsigned), floats to float64 (exactly), bools to
//! bool, strings to strings (byte sequences when not UTF-8); arrays to typed KV
//! arrays of the widened type. KV arrays cannot nest, so an array of arrays is
//! stored as a string holding its JSON text. The original GGUF types are recorded
//! under [`GGUF_VALUE_TYPES_KEY`] so that the way back restores them.
//!
//! Tensors: GGUF lists dimensions fastest-varying first; the Hurray shape is the
//! reverse, row-major. Plain types (F32, F16, BF16, F64, I8–I64) are copied (by the
//! kernel where it can). `Q8_0` and `Q4_0` become per-block affine int8 / int4
//! tensors (blocks of 32 along the last axis, float16 scales, symmetric): codes
//! stream out a piece at a time, then the scales, kept in memory up to
//! 8 MiB per tensor and in a temporary file beyond it. Other block types are
//! refused unless [`Options::dequantize_unsupported`] asks to store them
//! dequantized.
//!
//! Split sets (`NAME-0000N-of-0000M.gguf`, with `split.no`, `split.count` and
//! `split.tensors.count` in their KV): given any one of the files, all are read and
//! checked against each other, and the output's KV records which file each tensor
//! came from (see [`super::checkpoint`]).

use std::collections::{HashMap, HashSet};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use binrw::BinRead;

use super::checkpoint::{self, Provenance};
use super::listing::{ListedKv, ListedTensor, Listing};
use super::output::Target;
use super::{
    ggml, output, qblocks, Error, FileSource, FloatType, ModelFormat, Options, Progress, Summary,
    CHUNK,
};
use crate::convert::gguf_schema::{
    gguf_type_name, GgmlType, GgufArray, GgufArrayValues, GgufHeader, GgufKv, GgufPreamble,
    GgufValue, GGUF_ALIGNMENT_KEY, GGUF_DEFAULT_ALIGNMENT, GGUF_SPLIT_COUNT_KEY, GGUF_SPLIT_NO_KEY,
    GGUF_SPLIT_PREFIX, GGUF_SPLIT_TENSORS_COUNT_KEY,
};
use crate::file::{CopyFrom, HrryWriter, WriterOptions};
use crate::model::build::dense;
use crate::model::ElementType;
use crate::quant::quantize::quantized_descriptor;
use crate::schema::{
    KvArray, KvScalar, KvValue, LenBytes, PerBlockAffine, QuantScheme, TensorDescriptor,
};

/// KV key of a JSON object giving each GGUF metadata key's original GGUF type
/// (`"uint32"`, `"array<int32>"`, …), so that HRRYFILE → GGUF restores the types
/// llama.cpp checks instead of the widened KV types.
pub const GGUF_VALUE_TYPES_KEY: &str = "hrry.gguf.value_types";

/// Largest `general.alignment` accepted.
const MAX_ALIGNMENT: u64 = 1 << 30;

fn gguf_error(offset: u64, message: impl std::fmt::Display) -> Error {
    super::gguf_error(offset, message)
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
        KvValue::Array(KvArray::new(tag, v.iter().map(|&x| f(x))))
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
            KvValue::Array(KvArray::new(if all_utf8 { 0x01 } else { 0x06 }, elements))
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
pub(crate) fn plain_type(ty: GgmlType) -> Option<ElementType> {
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

/// What happens to a tensor's bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Treatment {
    /// Copied as they are, under this element type.
    Plain(ElementType),
    /// `Q8_0` / `Q4_0` split into codes and scales.
    Blocks(qblocks::Kind),
    /// Dequantized to the requested float type (`--dequantize-unsupported`).
    Dequantize,
}

/// One tensor ready to read: name, type, Hurray shape, which file, absolute
/// offset and size.
struct TensorPlan {
    name: String,
    ty: GgmlType,
    treatment: Treatment,
    shape: Vec<u64>,
    source: usize,
    offset: u64,
    size: u64,
}

/// Checks every tensor info of one file (`source` of the input) against it before
/// anything is written.
fn plan_tensors(
    preamble: &GgufPreamble,
    source: usize,
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
        let treatment = match (plain_type(ty), qblocks::Kind::of(ty)) {
            (Some(t), _) => Treatment::Plain(t),
            (None, Some(kind)) => Treatment::Blocks(kind),
            (None, None) if !ggml::supported(ty) => {
                return Err(Error::tensor(
                    &name,
                    format!(
                        "GGUF type {} cannot be converted: hrry has no dequantizer for it",
                        ty.name()
                    ),
                ))
            }
            (None, None) if !options.dequantize_unsupported => {
                return Err(Error::tensor(
                    &name,
                    format!(
                        "GGUF type {} has no Hurray equivalent; rerun with --dequantize-unsupported to store it dequantized (float32, or --dtype f16/bf16)",
                        ty.name()
                    ),
                ))
            }
            (None, None) => Treatment::Dequantize,
        };
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
            treatment,
            shape: info.dimensions.iter().rev().copied().collect(),
            source,
            offset,
            size,
        });
    }
    Ok(plans)
}

/// One GGUF file, parsed: its source, preamble and where its data starts.
struct GgufInput {
    src: FileSource,
    preamble: GgufPreamble,
    data_start: u64,
}

/// Opens and parses the GGUF file `path`.
fn open_gguf(path: &Path) -> Result<GgufInput, Error> {
    let mut src = FileSource::open(path)?;
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
    Ok(GgufInput {
        src,
        preamble,
        data_start,
    })
}

/// The listing of the GGUF file `path` (see [`super::list`]): its
/// metadata with their GGUF types, and each tensor with its row-major shape and
/// what `convert` makes of it. A tensor whose type or size is wrong is listed with
/// the reason instead of failing the listing.
pub(crate) fn listing(path: &Path) -> Result<Listing, Error> {
    let input = open_gguf(path)?;
    let file_len = input.src.len();
    let metadata = input
        .preamble
        .metadata
        .iter()
        .map(|kv| ListedKv {
            key: kv.key.lossy().into_owned(),
            value: kv_value(&kv.value),
            source_type: value_type_name(&kv.value),
        })
        .collect();
    let tensors = input
        .preamble
        .tensors
        .iter()
        .map(|info| {
            let ty = GgmlType::from_code(info.ggml_type);
            let rows = info
                .dimensions
                .iter()
                .skip(1)
                .try_fold(1u64, |acc, &d| acc.checked_mul(d));
            let ne0 = info.dimensions.first().copied().unwrap_or(1);
            let bytes = ty
                .zip(rows)
                .and_then(|(ty, rows)| ty.tensor_bytes(ne0, rows));
            let offset = input.data_start.saturating_add(info.offset);
            let fits =
                bytes.is_some_and(|n| offset.checked_add(n).is_some_and(|end| end <= file_len));
            let converts_to = match ty {
                None => format!("refused: unknown ggml type code {}", info.ggml_type),
                Some(_) if bytes.is_none() => {
                    "refused: not whole blocks, or the size overflows".into()
                }
                Some(_) if !fits => "refused: its data runs past the end of the file".into(),
                Some(ty) => match (plain_type(ty), qblocks::Kind::of(ty)) {
                    (Some(t), _) => t.name().to_string(),
                    (None, Some(qblocks::Kind::Q8_0)) => "int8 per-block affine (exact)".into(),
                    (None, Some(qblocks::Kind::Q4_0)) => "int4 per-block affine (exact)".into(),
                    (None, None) if ggml::supported(ty) => {
                        "dequantized with --dequantize-unsupported".into()
                    }
                    (None, None) => "refused: no dequantizer for this type".into(),
                },
            };
            ListedTensor {
                name: info.name.lossy().into_owned(),
                dtype: ty.map_or_else(
                    || format!("code {}", info.ggml_type),
                    |t| t.name().to_string(),
                ),
                shape: info.dimensions.iter().rev().copied().collect(),
                offset,
                bytes,
                converts_to,
            }
        })
        .collect();
    let alignment = match input.preamble.value(GGUF_ALIGNMENT_KEY) {
        Some(v) => v.as_u64(),
        None => Some(u64::from(GGUF_DEFAULT_ALIGNMENT)),
    };
    Ok(Listing {
        format: ModelFormat::Gguf,
        file_len,
        version: Some(input.preamble.version),
        data_start: input.data_start,
        alignment,
        metadata,
        tensors,
    })
}

/// `split.no`, `split.count` and `split.tensors.count` of a file, when it is part
/// of a split set (a `split.count` above 1).
fn split_keys(path: &Path, p: &GgufPreamble) -> Result<Option<(u64, u64, Option<u64>)>, Error> {
    let count = match p.value(GGUF_SPLIT_COUNT_KEY) {
        None => return Ok(None),
        Some(v) => v.as_u64(),
    };
    let bad = |m: String| super::checkpoint_at(path, m);
    let count = count.ok_or_else(|| bad(format!("{GGUF_SPLIT_COUNT_KEY} is not an integer")))?;
    if count <= 1 {
        return Ok(None);
    }
    if count > MAX_SPLITS {
        return Err(bad(format!(
            "{GGUF_SPLIT_COUNT_KEY} is {count}; split file names hold at most {MAX_SPLITS}"
        )));
    }
    let no = p
        .value(GGUF_SPLIT_NO_KEY)
        .and_then(GgufValue::as_u64)
        .filter(|&n| n < count)
        .ok_or_else(|| {
            bad(format!(
                "{GGUF_SPLIT_COUNT_KEY} is {count} but {GGUF_SPLIT_NO_KEY} is missing or not below it"
            ))
        })?;
    let tensors = p
        .value(GGUF_SPLIT_TENSORS_COUNT_KEY)
        .and_then(GgufValue::as_u64);
    Ok(Some((no, count, tensors)))
}

/// Most split files accepted (five-digit split numbers).
const MAX_SPLITS: u64 = 99_999;

/// The input files: `input` alone, or every file of its split set, checked to
/// agree with each other (split numbers, counts, total tensor count).
fn open_inputs(input: &Path) -> Result<(Vec<GgufInput>, Option<Vec<PathBuf>>), Error> {
    let first = open_gguf(input)?;
    let Some((no, count, tensors)) = split_keys(input, &first.preamble)? else {
        return Ok((vec![first], None));
    };
    let paths = checkpoint::gguf_split_paths(input, no, count)?;
    let mut inputs = Vec::with_capacity(paths.len());
    let mut first = Some(first);
    for (i, path) in paths.iter().enumerate() {
        let file = if i as u64 == no {
            first
                .take()
                .ok_or_else(|| Error::Unsupported("split listed twice".into()))?
        } else {
            open_gguf(path).map_err(|e| match e {
                Error::Io(source) => super::checkpoint_at(
                    path,
                    format!("split {} of {count} cannot be opened: {source}", i + 1),
                ),
                other => other,
            })?
        };
        let keys = split_keys(path, &file.preamble)?;
        if keys.map(|(n, c, _)| (n, c)) != Some((i as u64, count)) {
            return Err(super::checkpoint_at(
                path,
                format!(
                    "expected split {} of {count}, its KV says {}",
                    i + 1,
                    keys.map_or("it is not a split".to_string(), |(n, c, _)| format!(
                        "split {} of {c}",
                        n + 1
                    ))
                ),
            ));
        }
        if keys.and_then(|k| k.2) != tensors {
            return Err(super::checkpoint_at(
                path,
                format!(
                    "{GGUF_SPLIT_TENSORS_COUNT_KEY} differs from {}'s",
                    input.display()
                ),
            ));
        }
        inputs.push(file);
    }
    let total: u64 = inputs.iter().map(|f| f.preamble.tensors.len() as u64).sum();
    if let Some(expected) = tensors.filter(|&t| t != total) {
        return Err(super::checkpoint_at(input, format!(
                "{GGUF_SPLIT_TENSORS_COUNT_KEY} is {expected} but the {count} splits hold {total} tensors"
            )));
    }
    Ok((inputs, Some(paths)))
}

/// The metadata of a split set: the first file's, then any key a later file adds;
/// the `split.*` keys (which describe the set, not the model) are left out. A key
/// with different values in two files is an error.
fn merged_metadata<'a>(
    inputs: &'a [GgufInput],
    paths: Option<&[PathBuf]>,
) -> Result<Vec<&'a GgufKv>, Error> {
    let mut merged: Vec<&GgufKv> = Vec::new();
    // Key -> (position in `merged`, file it came from).
    let mut seen: HashMap<&[u8], (usize, usize)> = HashMap::new();
    for (i, input) in inputs.iter().enumerate() {
        for kv in &input.preamble.metadata {
            if paths.is_some() && kv.key.bytes.starts_with(GGUF_SPLIT_PREFIX.as_bytes()) {
                continue;
            }
            match seen.get(kv.key.bytes.as_slice()) {
                None => {
                    seen.insert(&kv.key.bytes, (merged.len(), i));
                    merged.push(kv);
                }
                Some(&(at, _)) if merged[at].value == kv.value => {}
                Some(&(_, first)) => {
                    let path = |j: usize| paths.map_or_else(PathBuf::new, |p| p[j].clone());
                    return Err(super::checkpoint_at(
                        path(i),
                        format!(
                            "metadata {:?} differs from its value in {}",
                            kv.key.lossy(),
                            path(first).display()
                        ),
                    ));
                }
            }
        }
    }
    Ok(merged)
}

/// Converts the GGUF file `input` (or the split set it belongs to) into the
/// HRRYFILE `output`, streaming tensor data through fixed-size buffers.
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
    let name = target.name();
    let output = name.as_path();
    let (mut inputs, split_paths) = open_inputs(input)?;
    let mut plans = Vec::new();
    for (i, f) in inputs.iter().enumerate() {
        plans.extend(plan_tensors(
            &f.preamble,
            i,
            f.data_start,
            f.src.len(),
            options,
        )?);
    }
    if split_paths.is_some() {
        let mut names = HashSet::new();
        if let Some(dup) = plans.iter().find(|p| !names.insert(p.name.as_str())) {
            return Err(super::checkpoint_at(
                input,
                format!("tensor {:?} is in more than one split", dup.name),
            ));
        }
    }

    let read: Vec<&Path> = match &split_paths {
        Some(paths) => paths.iter().map(|p| p.as_path()).collect(),
        None => vec![input],
    };
    let mut writer = output::hrry_writer(
        target,
        &read,
        WriterOptions {
            tensor_count_hint: Some(plans.len() as u64),
            ..options.writer
        },
    )?;
    let mut notes = Vec::new();
    let mut nested = 0usize;
    let metadata = merged_metadata(&inputs, split_paths.as_deref())?;
    let mut value_types = serde_json::Map::new();
    for kv in &metadata {
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
        value_types.insert(key.to_string(), value_type_name(&kv.value).into());
    }
    let mut kv_count = metadata.len();
    if !value_types.is_empty() {
        writer.add_kv(
            GGUF_VALUE_TYPES_KEY,
            checkpoint::kv_string(&serde_json::Value::Object(value_types).to_string()),
        )?;
        kv_count += 1;
    }
    if nested > 0 {
        notes.push(format!(
            "{nested} nested metadata {} stored as JSON strings (KV arrays cannot nest)",
            if nested == 1 { "array" } else { "arrays" }
        ));
    }
    if let Some(paths) = &split_paths {
        let provenance = Provenance {
            files: paths.iter().map(|p| checkpoint::file_name(p)).collect(),
            extra: Vec::new(),
        };
        for (key, value) in provenance.entries(plans.iter().map(|p| (p.name.as_str(), p.source))) {
            writer.add_kv(&key, value)?;
            kv_count += 1;
        }
        notes.push(format!(
            "{} split files read; their split.* keys describe the split set and are not kept",
            paths.len()
        ));
    }
    for f in &mut inputs {
        // The metadata is written: only the sources are needed from here on.
        f.preamble = GgufPreamble {
            version: f.preamble.version,
            metadata: Vec::new(),
            tensors: Vec::new(),
        };
    }

    progress.begin(plans.iter().map(|p| p.size).sum());
    let mut dequantized = 0usize;
    let mut scratch = Scratch::default();
    let output_dir = checkpoint::parent_dir(output);
    for plan in &plans {
        progress.tensor(&plan.name);
        let src = &mut inputs[plan.source].src;
        match plan.treatment {
            Treatment::Plain(ty) => {
                let desc = dense(ty, &plan.shape)
                    .ok_or_else(|| Error::tensor(&plan.name, "the shape overflows"))?;
                writer.begin_tensor(&plan.name, &desc)?;
                output::copy_into_tensor(&mut writer, src, plan.offset, plan.size, progress)?;
            }
            Treatment::Blocks(kind) => {
                let scales = ScaleStore {
                    budget: SCALE_BUDGET,
                    spill_dir: output_dir,
                };
                write_blocks(
                    &mut writer,
                    src,
                    plan,
                    kind,
                    &scales,
                    &mut scratch,
                    progress,
                )?;
            }
            Treatment::Dequantize => {
                dequantized += 1;
                write_dequantized(
                    &mut writer,
                    src,
                    plan,
                    options.dtype,
                    &mut scratch,
                    progress,
                )?;
            }
        }
        writer.end_tensor()?;
    }
    output::finish_hrry(writer)?;
    if dequantized > 0 {
        notes.push(format!(
            "{dequantized} {} dequantized to {}",
            if dequantized == 1 {
                "tensor"
            } else {
                "tensors"
            },
            options.dtype.element_type().name()
        ));
    }
    Ok(Summary {
        from: ModelFormat::Gguf,
        to: ModelFormat::Hrry,
        tensors: plans.len(),
        metadata: kv_count,
        as_dtype: dequantized,
        notes,
    })
}

/// The GGUF type of a metadata value, by name: `uint32`, `string`,
/// `array<float32>`, `array<array>` (nested arrays, whose inner types vary).
pub fn value_type_name(value: &GgufValue) -> String {
    match value {
        GgufValue::Array(a) => format!("array<{}>", gguf_type_name(a.values.value_type())),
        v => gguf_type_name(v.value_type()).to_string(),
    }
}

/// Buffers reused from tensor to tensor.
#[derive(Default)]
struct Scratch {
    input: Vec<u8>,
    codes: Vec<u8>,
    scales: Vec<u8>,
    values: Vec<f32>,
}

/// Largest scale buffer kept in memory while a block tensor's codes stream out;
/// beyond it the scales wait in a temporary file (the writer emits a tensor's
/// buffers in order, codes first, and never seeks back).
const SCALE_BUDGET: u64 = 8 << 20;

/// Where a block tensor's scales wait while its codes are written: in memory up to
/// `budget` bytes, else in an unnamed temporary file in `spill_dir` (the output's
/// directory, so that the kernel can copy them on from there).
struct ScaleStore<'a> {
    budget: u64,
    spill_dir: &'a Path,
}

/// Writes a `Q8_0` / `Q4_0` tensor as per-block affine codes then scales, a piece
/// of blocks at a time.
#[allow(clippy::too_many_arguments)]
fn write_blocks<W: CopyFrom>(
    writer: &mut HrryWriter<W>,
    src: &mut FileSource,
    plan: &TensorPlan,
    kind: qblocks::Kind,
    store: &ScaleStore<'_>,
    scratch: &mut Scratch,
    progress: &mut dyn Progress,
) -> Result<(), Error> {
    let block_bytes = kind.block_bytes();
    let blocks = plan.size / block_bytes as u64;
    let desc = per_block(kind, &plan.shape, blocks)
        .ok_or_else(|| Error::tensor(&plan.name, "the shape overflows"))?;
    writer.begin_tensor(&plan.name, &desc)?;
    let bad_scale = |b: u64| {
        Error::tensor(
            &plan.name,
            format!(
                "{} block {b} has a NaN or infinite scale, which Hurray cannot store",
                plan.ty.name()
            ),
        )
    };
    let spill_error = |source| super::io_at(store.spill_dir, source);
    let mut spill = match blocks * 2 <= store.budget {
        true => None,
        // Beside the output when that directory takes files (not for standard output or a
        // device, say), else in the temporary directory.
        false => Some(
            tempfile::tempfile_in(store.spill_dir)
                .or_else(|_| tempfile::tempfile())
                .map_err(spill_error)?,
        ),
    };
    let Scratch {
        input,
        codes,
        scales,
        ..
    } = scratch;
    scales.clear();
    let mut first = 0u64;
    src.for_each_piece(
        plan.offset,
        plan.size,
        block_bytes,
        CHUNK,
        input,
        progress,
        |piece| {
            let n = piece.len() / block_bytes;
            qblocks::size_to(codes, n * kind.code_bytes());
            qblocks::split(kind, piece, codes, Some(&mut *scales))
                .map_err(|b| bad_scale(first + b as u64))?;
            first += n as u64;
            if let Some(file) = spill.as_mut() {
                file.write_all(scales).map_err(spill_error)?;
                scales.clear();
            }
            writer.write_data(codes)
        },
    )?;
    match spill {
        None => writer.write_data(scales)?,
        Some(file) => writer.copy_data(&file, 0, blocks * 2)?,
    }
    Ok(())
}

/// Float32 values produced per piece when dequantizing.
const DEQUANTIZE_PIECE: usize = 1 << 18;

/// Writes a tensor of a block type without Hurray equivalent dequantized to
/// `dtype`, a piece of blocks at a time.
fn write_dequantized(
    writer: &mut HrryWriter<output::Output>,
    src: &mut FileSource,
    plan: &TensorPlan,
    dtype: FloatType,
    scratch: &mut Scratch,
    progress: &mut dyn Progress,
) -> Result<(), Error> {
    let (block_len, block_bytes) = plan.ty.block_geometry();
    let (block_len, block_bytes) = (block_len as usize, block_bytes as usize);
    let desc = dense(dtype.element_type(), &plan.shape)
        .ok_or_else(|| Error::tensor(&plan.name, "the shape overflows"))?;
    writer.begin_tensor(&plan.name, &desc)?;
    let piece = (DEQUANTIZE_PIECE / block_len.max(1)).max(1) * block_bytes;
    let Scratch {
        input,
        codes: out,
        values,
        ..
    } = scratch;
    src.for_each_piece(
        plan.offset,
        plan.size,
        block_bytes,
        piece,
        input,
        progress,
        |blocks| {
            values.clear();
            if !ggml::dequantize(plan.ty, blocks, values) {
                return Err(Error::tensor(
                    &plan.name,
                    format!("hrry has no dequantizer for GGUF type {}", plan.ty.name()),
                ));
            }
            out.clear();
            dtype.encode(values, out);
            writer.write_data(out)
        },
    )
}

/// The per-block affine descriptor of a `Q8_0` / `Q4_0` tensor of `blocks` blocks:
/// int8 or int4 codes (buffer 0) and float16 scales (buffer 1), blocks of 32 along
/// the last axis, symmetric.
fn per_block(kind: qblocks::Kind, shape: &[u64], blocks: u64) -> Option<TensorDescriptor> {
    let storage = match kind {
        qblocks::Kind::Q8_0 => ElementType::Int8,
        qblocks::Kind::Q4_0 => ElementType::Int4,
    };
    let scheme = QuantScheme::PerBlockAffine(PerBlockAffine::version1(
        shape.len().saturating_sub(1) as u32,
        qblocks::BLOCK as u32,
        ElementType::Float16.tag(),
        true,
    ));
    let codes = blocks.checked_mul(kind.code_bytes() as u64)?;
    Some(quantized_descriptor(
        storage.tag(),
        shape,
        &[codes, blocks.checked_mul(2)?],
        scheme,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

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
            kv_value(&GgufValue::String(
                crate::convert::gguf_schema::GgufString { bytes: vec![0xFF] }
            )),
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
                    a.to_scalars(),
                    vec![KvScalar::Uint64(1), KvScalar::Uint64(65535)]
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn block_scales_kept_or_spilled_give_the_same_file() {
        // Q4_0 [2, 96]: six blocks, the third with a zero scale.
        let mut blocks = Vec::new();
        for b in 0..6u8 {
            let d = if b == 2 { 0.0 } else { 0.5 + f32::from(b) };
            blocks.extend(half::f16::from_f32(d).to_bits().to_le_bytes());
            blocks.extend((0..16).map(|j| b.wrapping_mul(37).wrapping_add(j * 11)));
        }
        let preamble = GgufPreamble {
            version: 3,
            metadata: Vec::new(),
            tensors: vec![crate::convert::gguf_schema::GgufTensorInfo {
                name: "q".into(),
                dimensions: vec![96, 2],
                ggml_type: 2,
                offset: 0,
            }],
        };
        let mut bytes = crate::schema::to_bytes(&preamble);
        bytes.resize(bytes.len().next_multiple_of(32), 0);
        bytes.extend(&blocks);
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("q.gguf");
        std::fs::write(&path, &bytes).unwrap();
        let mut input = open_gguf(&path).unwrap();
        let plans = plan_tensors(
            &input.preamble,
            0,
            input.data_start,
            input.src.len(),
            &Options::default(),
        )
        .unwrap();
        let files: Vec<Vec<u8>> = [0, u64::MAX]
            .into_iter()
            .map(|budget| {
                let store = ScaleStore {
                    budget,
                    spill_dir: tmp.path(),
                };
                let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).unwrap();
                let kind = qblocks::Kind::Q4_0;
                let mut scratch = Scratch::default();
                let mut progress = crate::convert::NoProgress;
                write_blocks(
                    &mut w,
                    &mut input.src,
                    &plans[0],
                    kind,
                    &store,
                    &mut scratch,
                    &mut progress,
                )
                .unwrap();
                w.end_tensor().unwrap();
                w.finish().unwrap()
            })
            .collect();
        assert_eq!(files[0], files[1]);
        let file = crate::file::HrryFile::from_bytes(&files[0]).unwrap();
        let t = file.tensor("q").unwrap().unwrap();
        let (mut codes, mut scales) = (vec![0; 6 * 16], Vec::new());
        qblocks::split(qblocks::Kind::Q4_0, &blocks, &mut codes, Some(&mut scales)).unwrap();
        assert_eq!(t.buffers, vec![codes.as_slice(), scales.as_slice()]);
    }
}

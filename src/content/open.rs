//! A model file of any format hrry reads (HRRYFILE, safetensors, GGUF), local or
//! over any [`ReadAt`], opened as a list of tensors and metadata whose values can
//! be read in logical row-major order a piece at a time.

use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use binrw::BinRead;
use safetensors::tensor::Metadata;
use safetensors::Dtype;

use super::error::Error;
use super::values::{ValueKind, Values};
use crate::convert::gguf_schema::{
    GgmlType, GgufPreamble, GGUF_ALIGNMENT_KEY, GGUF_DEFAULT_ALIGNMENT,
};
use crate::convert::{gguf, ModelFormat};
use crate::export::{export_dtype, export_row_major, ExportOptions};
use crate::file::{HrryFile, OpenOptions};
use crate::layout::dense::{is_dense, DenseView};
use crate::model::ElementType;
use crate::schema::{layout_name, scheme_name, KvValue, Statistics};
use crate::source::ReadAt;

/// Values are handed on in runs of at most this many bytes: the bound on what
/// reading a tensor holds (besides what a layout must assemble whole: a sparse or
/// quantized HRRYFILE tensor, see [`crate::export`]).
pub const PIECE: usize = 4 << 20;

/// Largest safetensors header read (the `safetensors` crate's own limit).
const MAX_SAFETENSORS_HEADER: u64 = 100_000_000;
/// Largest GGUF data alignment accepted.
const MAX_GGUF_ALIGNMENT: u64 = 1 << 30;

/// One tensor of a [`ModelFile`], as its metadata describes it.
#[derive(Clone, Debug)]
pub struct TensorInfo {
    /// The tensor's name.
    pub name: String,
    /// Its element type: the spec name of a Hurray element type (`float32`), which
    /// safetensors and GGUF plain types map to, else the format's own name (a
    /// ggml block type such as `Q4_K`, an extension type).
    pub dtype: String,
    /// Dimension sizes, dimension 0 (the slowest-varying) first; a GGUF tensor's
    /// dimensions are given in this order too (reversed from the file's).
    pub shape: Vec<u64>,
    /// How the elements are laid out (`row-major` for safetensors and GGUF).
    pub layout: String,
    /// The quantization scheme, for a quantized tensor.
    pub quantization: Option<String>,
    /// The number of logical elements (`None` when it overflows 64 bits).
    pub elements: Option<u64>,
    /// Bytes the tensor's data takes in the file (its buffers, without padding).
    pub stored_bytes: u64,
    /// Absolute offset of the tensor's data in the file.
    pub data_offset: u64,
    /// The statistics section the file stores for it (HRRYFILE only).
    pub statistics: Option<Statistics>,
    pub(crate) reading: Reading,
}

/// How a tensor's values are read.
#[derive(Clone, Debug)]
pub(crate) enum Reading {
    /// Exported from the HRRYFILE ([`crate::export`]): any layout, dequantized.
    Export,
    /// Stored row-major as `kind`, `len` bytes at `offset`.
    Stored {
        kind: ValueKind,
        offset: u64,
        len: u64,
    },
    /// ggml blocks of `ty`, `len` bytes at `offset`, dequantized to float32.
    Ggml { ty: GgmlType, offset: u64, len: u64 },
    /// Tensor `index` of part `part` of a container ([`ModelFile::parts`]).
    Part { part: usize, index: usize },
    /// The values cannot be read, for this reason.
    Unreadable(String),
}

/// The bytes behind a [`ModelFile`].
enum Body<'a> {
    Hrry(Box<HrryFile<'static>>),
    Borrowed(&'a HrryFile<'a>),
    Source(Box<dyn ReadAt + Send>),
    /// The HRRYFILEs a container holds (a `.holo` archive's).
    Parts(Vec<ModelFile<'static>>),
}

/// A model file opened for comparison and statistics: its format, tensors and
/// metadata (read when opened, without tensor data), and its tensors' values on
/// demand.
pub struct ModelFile<'a> {
    format: ModelFormat,
    /// The container the tensors were found in (a `.holo` archive, a bare
    /// stream), when they are not the file's own.
    container: Option<crate::Format>,
    len: u64,
    tensors: Vec<TensorInfo>,
    metadata: Vec<(String, KvValue)>,
    body: Body<'a>,
}

impl std::fmt::Debug for ModelFile<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelFile")
            .field("format", &self.format)
            .field("len", &self.len)
            .field("tensors", &self.tensors.len())
            .finish()
    }
}

impl ModelFile<'static> {
    /// Opens the file at `path`, recognising its format by its first bytes. A
    /// HRRYFILE is mapped (and must pass [`OpenOptions`]' default checks); a
    /// safetensors or GGUF file is read with positioned reads.
    pub fn open(path: &Path) -> Result<ModelFile<'static>, Error> {
        let io = |e| crate::error::io_at(path, e);
        let source = crate::source::FileSource::open(path).map_err(io)?;
        let format = sniff(&source)?;
        if format == ModelFormat::Hrry {
            let file = HrryFile::open(path)?;
            return Ok(Self::from_hrry(file, source.len()));
        }
        Self::from_other(format, Box::new(source))
    }

    /// Opens `source` (a remote object, bytes in memory), recognising its format
    /// by its first bytes. A HRRYFILE is opened with [`OpenOptions::open_source`]:
    /// only its metadata is read now, and each tensor's data when its values are.
    pub fn open_source(source: impl ReadAt + Send + 'static) -> Result<ModelFile<'static>, Error> {
        let format = sniff(&source)?;
        let len = source.len();
        if format == ModelFormat::Hrry {
            let file = OpenOptions::new().open_source(source)?;
            return Ok(Self::from_hrry(file, len));
        }
        Self::from_other(format, Box::new(source))
    }

    pub(super) fn from_hrry(file: HrryFile<'static>, len: u64) -> ModelFile<'static> {
        let (tensors, metadata) = hrry_tensors(&file);
        ModelFile {
            format: ModelFormat::Hrry,
            container: None,
            len,
            tensors,
            metadata,
            body: Body::Hrry(Box::new(file)),
        }
    }

    /// `self`, its tensors found in a `container` of `len` bytes.
    pub(super) fn in_container(mut self, container: crate::Format, len: u64) -> Self {
        self.container = Some(container);
        self.len = len;
        self
    }

    /// The HRRYFILEs `parts` held by a `container` of `len` bytes, as one file:
    /// each part's tensors and metadata keys named `LABEL/NAME` after the part's
    /// label and data offsets made absolute by its start, then `metadata`, the
    /// container's own entries.
    pub(super) fn of_parts(
        container: crate::Format,
        len: u64,
        parts: Vec<(String, u64, ModelFile<'static>)>,
        mut metadata: Vec<(String, KvValue)>,
    ) -> ModelFile<'static> {
        let mut tensors = Vec::new();
        let mut kv = Vec::new();
        let mut files = Vec::with_capacity(parts.len());
        for (part, (label, start, file)) in parts.into_iter().enumerate() {
            for (index, t) in file.tensors.iter().enumerate() {
                tensors.push(TensorInfo {
                    name: format!("{label}/{}", t.name),
                    data_offset: t.data_offset.saturating_add(start),
                    reading: match t.reading {
                        Reading::Unreadable(ref why) => Reading::Unreadable(why.clone()),
                        _ => Reading::Part { part, index },
                    },
                    ..t.clone()
                });
            }
            kv.extend(
                file.metadata
                    .iter()
                    .map(|(k, v)| (format!("{label}/{k}"), v.clone())),
            );
            files.push(file);
        }
        kv.append(&mut metadata);
        ModelFile {
            format: ModelFormat::Hrry,
            container: Some(container),
            len,
            tensors,
            metadata: kv,
            body: Body::Parts(files),
        }
    }

    fn from_other(
        format: ModelFormat,
        source: Box<dyn ReadAt + Send>,
    ) -> Result<ModelFile<'static>, Error> {
        let (tensors, metadata) = match format {
            ModelFormat::Safetensors => safetensors_tensors(&*source)?,
            _ => gguf_tensors(&*source)?,
        };
        Ok(ModelFile {
            format,
            container: None,
            len: source.len(),
            tensors,
            metadata,
            body: Body::Source(source),
        })
    }
}

impl<'a> ModelFile<'a> {
    /// A HRRYFILE opened already (by a binding that keeps it), borrowed.
    pub fn of_hrry(file: &'a HrryFile<'a>) -> ModelFile<'a> {
        let (tensors, metadata) = hrry_tensors(file);
        ModelFile {
            format: ModelFormat::Hrry,
            container: None,
            len: file.size(),
            tensors,
            metadata,
            body: Body::Borrowed(file),
        }
    }

    /// The file's format.
    pub fn format(&self) -> ModelFormat {
        self.format
    }

    /// The container the tensors were read from: a `.holo` archive (whose
    /// HRRYFILEs they are, [`ModelFile::open_holo`]) or a bare stream
    /// ([`ModelFile::open_stream`]); `None` for a model file's own tensors.
    pub fn container(&self) -> Option<crate::Format> {
        self.container
    }

    /// The name to show for the file's format: the container's (`holo`,
    /// `stream`), else the model format's (`hrryfile`, `safetensors`, `gguf`).
    pub fn format_name(&self) -> &'static str {
        self.container
            .map_or(self.format.name(), crate::Format::name)
    }

    /// The file's length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True for an empty file (never opened: no format is empty).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The tensors, in the file's order (a HRRYFILE's index order).
    pub fn tensors(&self) -> &[TensorInfo] {
        &self.tensors
    }

    /// The metadata: a HRRYFILE's KV entries, a GGUF file's metadata pairs (as
    /// `hrry convert` stores them), a safetensors file's `__metadata__` strings
    /// (sorted by key, as the format keeps no order).
    pub fn metadata(&self) -> &[(String, KvValue)] {
        &self.metadata
    }

    /// The HRRYFILE, when this is one.
    pub fn hrry(&self) -> Option<&HrryFile<'_>> {
        match &self.body {
            Body::Hrry(f) => Some(f),
            Body::Borrowed(f) => Some(f),
            Body::Source(_) | Body::Parts(_) => None,
        }
    }

    /// Reads the values of tensor `index` in logical row-major order and hands
    /// them to `f` in runs of at most [`PIECE`] bytes (whole values). A quantized
    /// tensor gives its dequantized float32 values.
    pub fn read_values(
        &self,
        index: usize,
        f: &mut dyn FnMut(Values<'_>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let info = self
            .tensors
            .get(index)
            .ok_or_else(|| Error::Format(format!("no tensor {index}")))?;
        let unreadable = |why: &str| Error::Unsupported(why.to_string());
        match (&info.reading, &self.body) {
            (Reading::Unreadable(why), _) => Err(unreadable(why)),
            (Reading::Export, Body::Hrry(file)) => export_values(file, info, f),
            (Reading::Export, Body::Borrowed(file)) => export_values(file, info, f),
            (Reading::Part { part, index }, Body::Parts(parts)) => parts
                .get(*part)
                .ok_or_else(|| unreadable("internal: no such part"))?
                .read_values(*index, f),
            (Reading::Stored { kind, offset, len }, Body::Source(src)) => {
                let mut buf = Vec::new();
                let piece = (PIECE / kind.size()).max(1) * kind.size();
                pieces(&**src, *offset, *len, piece, &mut buf, &mut |bytes| {
                    f(Values { kind: *kind, bytes })
                })
            }
            (Reading::Ggml { ty, offset, len }, Body::Source(src)) => {
                let (block_len, block_bytes) = ty.block_geometry();
                let blocks = (PIECE as u64 / 4 / block_len.max(1)).max(1);
                let piece = usize::try_from(blocks * block_bytes).unwrap_or(PIECE);
                let (mut buf, mut values) = (Vec::new(), Vec::new());
                pieces(&**src, *offset, *len, piece, &mut buf, &mut |bytes| {
                    values.clear();
                    if !crate::convert::ggml::dequantize(*ty, bytes, &mut values) {
                        return Err(unreadable("the ggml blocks cannot be dequantized"));
                    }
                    f(Values {
                        kind: ValueKind::Float32,
                        bytes: bytemuck::cast_slice(&values),
                    })
                })
            }
            _ => Err(unreadable("internal: reading does not match the file")),
        }
    }
}

/// The tensors and metadata of a HRRYFILE.
#[allow(clippy::type_complexity)]
fn hrry_tensors(file: &HrryFile<'_>) -> (Vec<TensorInfo>, Vec<(String, KvValue)>) {
    let metadata = file
        .kv()
        .iter()
        .map(|kv| {
            (
                String::from_utf8_lossy(&kv.key).into_owned(),
                kv.value.clone(),
            )
        })
        .collect();
    let mut tensors = Vec::with_capacity(file.len());
    for entry in file.entries() {
        let name = entry.name().to_string();
        let ix = entry.index_entry();
        let info = match file.descriptor(entry) {
            Ok(desc) => TensorInfo {
                name,
                dtype: match ElementType::from_tag(desc.type_tag) {
                    Some(t) if !matches!(t, ElementType::Extension(_)) => t.name().to_string(),
                    _ => format!("extension {:#04x}", desc.type_tag),
                },
                shape: desc.shape.clone(),
                layout: layout_name(desc.layout_tag).to_string(),
                quantization: desc.quantization.as_ref().map(|q| {
                    q.bytes()
                        .first()
                        .map_or("unassigned", |&t| scheme_name(t))
                        .to_string()
                }),
                elements: crate::model::element_count(&desc.shape),
                stored_bytes: desc
                    .buffers
                    .iter()
                    .fold(0u64, |a, b| a.saturating_add(b.byte_size)),
                data_offset: ix.data_offset,
                statistics: desc.statistics.clone(),
                reading: match export_dtype(desc) {
                    Ok(_) => Reading::Export,
                    Err(e) => Reading::Unreadable(e.to_string()),
                },
            },
            Err(e) => TensorInfo {
                name,
                dtype: "unknown".into(),
                shape: Vec::new(),
                layout: "unknown".into(),
                quantization: None,
                elements: None,
                stored_bytes: ix.data_length,
                data_offset: ix.data_offset,
                statistics: None,
                reading: Reading::Unreadable(e.to_string()),
            },
        };
        tensors.push(info);
    }
    (tensors, metadata)
}

/// Recognises the format of `source` by its first bytes.
fn sniff(source: &dyn ReadAt) -> Result<ModelFormat, Error> {
    let mut head = [0u8; 16];
    let n = head.len().min(usize::try_from(source.len()).unwrap_or(16));
    source.read_at(0, &mut head[..n]).map_err(Error::Io)?;
    ModelFormat::sniff(&head[..n], source.len()).ok_or_else(|| {
        Error::Format(format!(
            "not a HRRYFILE, safetensors or GGUF file (first bytes {:02x?})",
            &head[..n.min(8)]
        ))
    })
}

/// Reads `len` bytes at `offset` of `src` in pieces of at most `piece` bytes into
/// `buf` (reused), handing each to `f`.
fn pieces(
    src: &dyn ReadAt,
    offset: u64,
    len: u64,
    piece: usize,
    buf: &mut Vec<u8>,
    f: &mut dyn FnMut(&[u8]) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut at = 0u64;
    while at < len {
        let n = (len - at).min(piece as u64) as usize;
        buf.resize(n, 0);
        src.read_at(offset + at, buf).map_err(Error::Io)?;
        f(buf)?;
        at += n as u64;
    }
    Ok(())
}

/// Exports a HRRYFILE tensor's values through `f`.
fn export_values(
    file: &HrryFile<'_>,
    info: &TensorInfo,
    f: &mut dyn FnMut(Values<'_>) -> Result<(), Error>,
) -> Result<(), Error> {
    let tensor_error = |message: String| Error::Unsupported(message);
    let desc = file
        .find(&info.name)
        .map(|e| file.descriptor(e))
        .transpose()?
        .ok_or_else(|| tensor_error("not in the file".into()))?;
    // A dense tensor stored contiguous and row-major is its values already: read
    // in place, a piece at a time (no widening, no copy).
    if desc.quantization.is_none() && is_dense(desc.layout_tag) {
        let stored = ElementType::from_tag(desc.type_tag).and_then(ValueKind::stored);
        if let (Some(kind), Some(tensor)) = (stored, file.tensor(&info.name)?) {
            if let Some(bytes) = DenseView::new(desc, &tensor.buffers)
                .ok()
                .and_then(|v| v.contiguous())
            {
                let piece = (PIECE / kind.size()).max(1) * kind.size();
                for run in bytes.chunks(piece) {
                    f(Values { kind, bytes: run })?;
                }
                return Ok(());
            }
        }
    }
    let descr = export_dtype(desc)
        .map_err(|e| tensor_error(e.to_string()))?
        .descr;
    let kind = ValueKind::from_descr(descr)
        .ok_or_else(|| tensor_error(format!("values of dtype {descr} cannot be compared")))?;
    let mut sink = Runs {
        kind,
        buf: Vec::new(),
        f,
        error: None,
    };
    let result =
        export_row_major(file, &info.name, &mut sink, &ExportOptions::default()).map(|_| ());
    if let Some(e) = sink.error.take() {
        return Err(e);
    }
    result.map_err(|e| tensor_error(e.to_string()))?;
    sink.emit(true)
}

/// A `Write` that collects exported bytes and hands them on as whole values in
/// runs of up to [`PIECE`] bytes; an error of the callback is kept, to be returned
/// in place of the write error that stops the export.
struct Runs<'f> {
    kind: ValueKind,
    buf: Vec<u8>,
    f: &'f mut dyn FnMut(Values<'_>) -> Result<(), Error>,
    error: Option<Error>,
}

impl Runs<'_> {
    /// Hands on the whole values collected (all of them when `last`).
    fn emit(&mut self, last: bool) -> Result<(), Error> {
        let size = self.kind.size();
        let whole = self.buf.len() / size * size;
        if whole > 0 {
            (self.f)(Values {
                kind: self.kind,
                bytes: &self.buf[..whole],
            })?;
            self.buf.drain(..whole);
        }
        if last && !self.buf.is_empty() {
            return Err(Error::Format("the values end inside an element".into()));
        }
        Ok(())
    }
}

impl io::Write for Runs<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(bytes);
        if self.buf.len() >= PIECE {
            if let Err(e) = self.emit(false) {
                self.error = Some(e);
                return Err(io::Error::other("stopped"));
            }
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The dtype name and value kind of a safetensors dtype.
fn safetensors_kind(dtype: Dtype) -> (String, Option<ValueKind>) {
    let named = |ty: ElementType| (ty.name().to_string(), ValueKind::stored(ty));
    match dtype {
        Dtype::BOOL => ("bool".into(), Some(ValueKind::Bool)),
        Dtype::U8 => named(ElementType::Uint8),
        Dtype::I8 => named(ElementType::Int8),
        Dtype::U16 => named(ElementType::Uint16),
        Dtype::I16 => named(ElementType::Int16),
        Dtype::U32 => named(ElementType::Uint32),
        Dtype::I32 => named(ElementType::Int32),
        Dtype::U64 => named(ElementType::Uint64),
        Dtype::I64 => named(ElementType::Int64),
        Dtype::F16 => named(ElementType::Float16),
        Dtype::BF16 => named(ElementType::Bfloat16),
        Dtype::F32 => named(ElementType::Float32),
        Dtype::F64 => named(ElementType::Float64),
        Dtype::C64 => named(ElementType::Complex64),
        Dtype::F8_E4M3 => named(ElementType::Float8E4m3),
        Dtype::F8_E5M2 => named(ElementType::Float8E5m2),
        Dtype::F8_E8M0 => named(ElementType::Float8E8m0),
        Dtype::F8_E4M3FNUZ | Dtype::F8_E5M2FNUZ => (
            dtype.to_string().to_ascii_lowercase(),
            Some(ValueKind::Raw(1)),
        ),
        other => (other.to_string().to_ascii_lowercase(), None),
    }
}

/// The tensors and metadata of a safetensors file.
#[allow(clippy::type_complexity)]
fn safetensors_tensors(
    src: &dyn ReadAt,
) -> Result<(Vec<TensorInfo>, Vec<(String, KvValue)>), Error> {
    let bad = |m: String| Error::Format(format!("safetensors: {m}"));
    let io = Error::Io;
    let mut len8 = [0u8; 8];
    src.read_at(0, &mut len8).map_err(io)?;
    let n = u64::from_le_bytes(len8);
    if n > MAX_SAFETENSORS_HEADER || n + 8 > src.len() {
        return Err(bad(format!(
            "header length {n} exceeds the limit or the file ({} bytes)",
            src.len()
        )));
    }
    let mut header = vec![0u8; n as usize];
    src.read_at(8, &mut header).map_err(io)?;
    let metadata: Metadata =
        serde_json::from_slice(&header).map_err(|e| bad(format!("invalid header: {e}")))?;
    let data_start = 8 + n;
    if data_start + metadata.data_len() as u64 != src.len() {
        return Err(bad(format!(
            "the header accounts for {} bytes but the file holds {}",
            data_start + metadata.data_len() as u64,
            src.len()
        )));
    }
    let mut tensors = Vec::new();
    for name in metadata.offset_keys() {
        let Some(info) = metadata.info(&name) else {
            continue;
        };
        let (s, e) = info.data_offsets;
        let (offset, len) = (data_start + s as u64, (e - s) as u64);
        let shape: Vec<u64> = info.shape.iter().map(|&d| d as u64).collect();
        let (dtype, kind) = safetensors_kind(info.dtype);
        let elements = crate::model::element_count(&shape);
        let reading = match kind {
            Some(kind) if elements.and_then(|n| n.checked_mul(kind.size() as u64)) == Some(len) => {
                Reading::Stored { kind, offset, len }
            }
            Some(_) => Reading::Unreadable(format!("{len} data bytes do not match the shape")),
            None => Reading::Unreadable(format!("dtype {dtype} is packed below a byte")),
        };
        tensors.push(TensorInfo {
            name,
            dtype,
            shape,
            layout: layout_name(crate::schema::LAYOUT_ROW_MAJOR).to_string(),
            quantization: None,
            elements,
            stored_bytes: len,
            data_offset: offset,
            statistics: None,
            reading,
        });
    }
    let mut kv: Vec<(String, KvValue)> = metadata
        .metadata()
        .clone()
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k, KvValue::from(v.as_str())))
        .collect();
    kv.sort_by(|a, b| a.0.cmp(&b.0));
    Ok((tensors, kv))
}

/// The tensors and metadata of a GGUF file.
#[allow(clippy::type_complexity)]
fn gguf_tensors(src: &dyn ReadAt) -> Result<(Vec<TensorInfo>, Vec<(String, KvValue)>), Error> {
    let bad = |m: String| Error::Format(format!("GGUF: {m}"));
    let mut reader = SourceReader::new(src);
    let preamble =
        GgufPreamble::read_le(&mut reader).map_err(|e| bad(format!("cannot be read: {e}")))?;
    let end_of_infos = reader.pos;
    let alignment = match preamble.value(GGUF_ALIGNMENT_KEY) {
        None => u64::from(GGUF_DEFAULT_ALIGNMENT),
        Some(v) => v
            .as_u64()
            .filter(|a| a.is_power_of_two() && *a <= MAX_GGUF_ALIGNMENT)
            .ok_or_else(|| bad(format!("{GGUF_ALIGNMENT_KEY} is {v:?}")))?,
    };
    let data_start = end_of_infos
        .checked_next_multiple_of(alignment)
        .ok_or_else(|| bad("the data section offset overflows".into()))?;
    let mut tensors = Vec::with_capacity(preamble.tensors.len());
    for info in &preamble.tensors {
        let name = info.name.lossy().into_owned();
        let shape: Vec<u64> = info.dimensions.iter().rev().copied().collect();
        let elements = crate::model::element_count(&shape);
        let ty = GgmlType::from_code(info.ggml_type);
        let ne0 = info.dimensions.first().copied().unwrap_or(1);
        let rows = info
            .dimensions
            .iter()
            .skip(1)
            .try_fold(1u64, |a, &d| a.checked_mul(d));
        let size = ty.and_then(|t| t.tensor_bytes(ne0, rows?));
        let offset = data_start.checked_add(info.offset);
        let fits = match (offset, size) {
            (Some(o), Some(s)) => o.checked_add(s).is_some_and(|end| end <= src.len()),
            _ => false,
        };
        let (offset, size) = (offset.unwrap_or(0), size.unwrap_or(0));
        let plain = ty.and_then(gguf::plain_type);
        let reading = match ty {
            None => Reading::Unreadable(format!("unknown ggml type code {}", info.ggml_type)),
            Some(_) if !fits => {
                Reading::Unreadable("the data runs past the end of the file".into())
            }
            Some(t) => match plain.and_then(ValueKind::stored) {
                Some(kind) => Reading::Stored {
                    kind,
                    offset,
                    len: size,
                },
                None if crate::convert::ggml::supported(t) => Reading::Ggml {
                    ty: t,
                    offset,
                    len: size,
                },
                None => Reading::Unreadable(format!("hrry has no dequantizer for {}", t.name())),
            },
        };
        tensors.push(TensorInfo {
            name,
            dtype: match (plain, ty) {
                (Some(p), _) => p.name().to_string(),
                (None, Some(t)) => t.name().to_string(),
                (None, None) => format!("ggml type {}", info.ggml_type),
            },
            shape,
            layout: layout_name(crate::schema::LAYOUT_ROW_MAJOR).to_string(),
            quantization: match (plain, ty) {
                (None, Some(t)) => Some(format!("ggml {}", t.name())),
                _ => None,
            },
            elements,
            stored_bytes: size,
            data_offset: offset,
            statistics: None,
            reading,
        });
    }
    let metadata = preamble
        .metadata
        .iter()
        .map(|kv| (kv.key.lossy().into_owned(), gguf::kv_value(&kv.value)))
        .collect();
    Ok((tensors, metadata))
}

/// A source read as `Read + Seek` through a small buffer, for the GGUF schema
/// parser (which asks for the bytes that remain before each counted read).
struct SourceReader<'a> {
    src: &'a dyn ReadAt,
    pos: u64,
    buf: Vec<u8>,
    buf_start: u64,
}

impl<'a> SourceReader<'a> {
    fn new(src: &'a dyn ReadAt) -> Self {
        SourceReader {
            src,
            pos: 0,
            buf: Vec::new(),
            buf_start: 0,
        }
    }
}

impl Read for SourceReader<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let end = self.buf_start + self.buf.len() as u64;
        if self.pos < self.buf_start || self.pos >= end {
            if self.pos >= self.src.len() {
                return Ok(0);
            }
            let n = (self.src.len() - self.pos).min(64 << 10) as usize;
            self.buf.resize(n, 0);
            self.src.read_at(self.pos, &mut self.buf)?;
            self.buf_start = self.pos;
        }
        let at = (self.pos - self.buf_start) as usize;
        let n = (self.buf.len() - at).min(out.len());
        out[..n].copy_from_slice(&self.buf[at..at + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for SourceReader<'_> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => self.src.len().checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = target.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "bad seek"))?;
        Ok(self.pos)
    }
}

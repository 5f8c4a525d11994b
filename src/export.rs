//! Exporting a tensor of an opened file in logical row-major order as a NumPy
//! `.npy` array (the `hrry export` command).
//!
//! Dense layouts stream element by element (whole runs when buffer 0 already is
//! row-major); sparse layouts are densified and composite partitions (and replace
//! overlays) assembled in memory, up to [`ExportOptions::max_bytes`]. Quantized
//! tensors export their dequantized float32 values.
//!
//! [`export_row_major`] gives the same bytes without the `.npy` header, for callers
//! that want the array data itself (the C ABI's `hrry_read_row_major`).

use std::io::Write;

use crate::error::Error;
use crate::file::{HrryFile, Tensor};
use crate::layout::composite::{assemble, Member};
use crate::layout::dense::{is_dense, DenseView};
use crate::layout::sparse::is_sparse;
use crate::layout::{bits::read_bits, densify, element_bits};
use crate::model::ElementType;
use crate::npy::{self, FloatDecoder, NpyWriter};
use crate::schema::{LayoutFields, TensorDescriptor, LAYOUT_BLOCK_PAGED, LAYOUT_COMPOSITE};

/// Export settings.
#[derive(Clone, Copy, Debug)]
pub struct ExportOptions {
    /// Largest export, in bytes of its row-major elements ([`row_major_len`]):
    /// the bound on what a sparse, composite or quantized tensor assembles in
    /// memory, and on what any tensor writes (a dense one whose strides repeat
    /// elements claims far more than its buffer holds).
    pub max_bytes: u64,
    /// Decoder of the 8-, 6- and 4-bit float formats to float32.
    pub decode: FloatDecoder,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            max_bytes: 16 << 30,
            decode: narrow_float,
        }
    }
}

/// Float32 value of a code of one of the narrow float formats (the decoders of
/// [`crate::quant::element`]).
pub(crate) fn narrow_float(ty: ElementType, code: u32) -> Option<f32> {
    crate::quant::element::float_value(ty, code)
}

fn element_type(desc: &TensorDescriptor) -> Result<ElementType, Error> {
    ElementType::from_tag(desc.type_tag)
        .filter(|t| npy::dtype(*t).is_some())
        .ok_or_else(|| {
            Error::Unsupported(format!(
                "element type {:#04x} has no NumPy export",
                desc.type_tag
            ))
        })
}

/// Writes `packed` (row-major packed elements of `desc`'s type) as `.npy`.
fn write_packed<W: Write>(
    desc: &TensorDescriptor,
    packed: &[u8],
    sink: W,
    options: &ExportOptions,
) -> Result<W, Error> {
    let ty = element_type(desc)?;
    let width = element_bits(desc)?;
    let count = crate::layout::checked_count(&desc.shape)?;
    let mut out = NpyWriter::new(sink, ty, &desc.shape, options.decode)?;
    if npy::is_native(ty) {
        out.push_native(packed)?;
    } else {
        for i in 0..count {
            let raw = read_bits(packed, i * u64::from(width), width)
                .ok_or_else(|| crate::layout::error::overflow("element index"))?;
            out.push(raw)?;
        }
    }
    Ok(out.finish()?)
}

/// Writes the dense tensor `desc` over `buffers` as `.npy`, streaming.
pub(crate) fn write_dense<W: Write>(
    desc: &TensorDescriptor,
    buffers: &[&[u8]],
    sink: W,
    options: &ExportOptions,
) -> Result<W, Error> {
    let ty = element_type(desc)?;
    let view = DenseView::new(desc, buffers)?;
    let out = NpyWriter::new(sink, ty, &desc.shape, options.decode)?;
    // The view gathers packed row-major bytes with locality; the converter turns
    // them into NumPy elements as they arrive.
    let converter = Converter {
        out,
        native: npy::is_native(ty),
        width: view.width(),
        pending: Vec::new(),
        remaining: view.element_count(),
    };
    // The layout layer keeps only the text of a write error; the sink keeps the
    // error itself, so that a full disk is reported as the output's failure.
    let mut failure = None;
    let sink = KeepWriteError {
        inner: converter,
        error: &mut failure,
    };
    match view.stream_row_major(sink) {
        Ok(sink) => sink.inner.finish(),
        Err(e) => Err(failure.map_or(e, Error::Io)),
    }
}

/// A `Write` that remembers the first error of the writer it wraps.
struct KeepWriteError<'e, W> {
    inner: W,
    error: &'e mut Option<std::io::Error>,
}

impl<W: Write> Write for KeepWriteError<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.inner.write(buf).inspect_err(|e| self.keep(e))
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.inner.write_all(buf).inspect_err(|e| self.keep(e))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush().inspect_err(|e| self.keep(e))
    }
}

impl<W> KeepWriteError<'_, W> {
    fn keep(&mut self, e: &std::io::Error) {
        if self.error.is_none() {
            *self.error = Some(match e.raw_os_error() {
                Some(code) => std::io::Error::from_raw_os_error(code),
                None => std::io::Error::new(e.kind(), e.to_string()),
            });
        }
    }
}

/// A `Write` receiving packed row-major elements and pushing them to an
/// [`NpyWriter`], keeping an element split across writes until it is whole and
/// dropping the padding after the last element.
struct Converter<W: Write> {
    out: NpyWriter<W>,
    native: bool,
    width: u32,
    pending: Vec<u8>,
    remaining: u64,
}

impl<W: Write> Converter<W> {
    /// Bytes and elements of the smallest whole packing unit.
    fn unit(&self) -> (usize, u64) {
        match self.width {
            6 => (3, 4),
            w if w % 8 == 0 => ((w / 8) as usize, 1),
            w => (1, u64::from(8 / w)),
        }
    }

    fn drain(&mut self) -> std::io::Result<()> {
        let (unit_bytes, per_unit) = self.unit();
        let whole = self.pending.len() / unit_bytes * unit_bytes;
        if self.native {
            let left = self.remaining.saturating_mul(unit_bytes as u64);
            let take = whole.min(usize::try_from(left).unwrap_or(usize::MAX));
            self.out.push_native(&self.pending[..take])?;
            self.remaining -= (take / unit_bytes) as u64;
        } else {
            let elements = (whole / unit_bytes) as u64 * per_unit;
            let w = u64::from(self.width);
            for i in 0..elements.min(self.remaining) {
                let raw = read_bits(&self.pending, i * w, self.width).unwrap_or(0);
                self.out.push(raw)?;
            }
            self.remaining = self.remaining.saturating_sub(elements);
        }
        self.pending.drain(..whole);
        Ok(())
    }

    fn finish(mut self) -> Result<W, Error> {
        self.drain()?;
        Ok(self.out.finish()?)
    }
}

impl<W: Write> Write for Converter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(buf);
        if self.pending.len() >= 1 << 16 {
            self.drain()?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The members of the composite head `head` in `file`: the next `member_count`
/// tensors in descriptor order, a nested head's own members skipped over.
pub fn composite_members<'f>(
    file: &'f HrryFile<'_>,
    head: &Tensor<'f>,
) -> Result<Vec<Tensor<'f>>, Error> {
    let LayoutFields::Composite(fields) = &head.descriptor.layout else {
        return Err(Error::Unsupported("not a composite head".into()));
    };
    let mut order: Vec<_> = file.entries().collect();
    order.sort_by_key(|e| e.index_entry().descriptor_offset);
    let start = order
        .iter()
        .position(|e| e.position() == head.entry.position())
        .ok_or_else(|| {
            Error::Usage(format!(
                "tensor {:?} is not in this file",
                head.entry.name()
            ))
        })?;
    let mut rest = order[start + 1..].iter();
    let mut members = Vec::new();
    for _ in 0..fields.member_count {
        let torn = || {
            Error::Unsupported(
                "the composite is torn: fewer members follow than member_count".into(),
            )
        };
        let entry = *rest.next().ok_or_else(torn)?;
        let member = file.tensor_at(entry)?;
        // Skip the subtree of a nested head.
        let mut pending = match &member.descriptor.layout {
            LayoutFields::Composite(c) => u64::from(c.member_count),
            _ => 0,
        };
        while pending > 0 {
            let e = *rest.next().ok_or_else(torn)?;
            pending -= 1;
            if let LayoutFields::Composite(c) = &file.descriptor(e)?.layout {
                pending += u64::from(c.member_count);
            }
        }
        members.push(member);
    }
    Ok(members)
}

/// The logical row-major bytes of the composite head `head` of `file`, its members
/// assembled (at most `limit` bytes). A group composite has no single value (its
/// members are separate tensors bound together): it is refused with a message
/// naming the members, which are read one by one.
pub fn assemble_composite(
    file: &HrryFile<'_>,
    head: &Tensor<'_>,
    limit: u64,
) -> Result<Vec<u8>, Error> {
    let members = composite_members(file, head)?;
    if let LayoutFields::Composite(fields) = &head.descriptor.layout {
        if fields.composition_rule == crate::layout::composite::GROUP {
            let names: Vec<String> = members
                .iter()
                .map(|m| format!("{:?}", m.entry.name()))
                .collect();
            return Err(Error::Unsupported(format!(
                "tensor {:?} is a group composite: a group binds separate tensors and has \
                 no single value of its own, so its members are read one by one: {}",
                head.entry.name(),
                names.join(", ")
            )));
        }
    }
    assemble_tensors(head.descriptor, &members, limit)
}

/// The logical view of the composite head `head` over its `members` (see
/// [`assemble`]), the members as read from a file.
pub fn assemble_tensors(
    head: &TensorDescriptor,
    members: &[Tensor<'_>],
    limit: u64,
) -> Result<Vec<u8>, Error> {
    let list: Vec<Member> = members
        .iter()
        .map(|m| Member {
            desc: m.descriptor,
            buffers: &m.buffers,
        })
        .collect();
    assemble(head, &list, limit)
}

/// The stored bytes of `tensor` when they already are exactly the data
/// [`export_npy`] writes after the header (what [`export_row_major`] writes), with
/// their dtype: an unquantized dense tensor of a type NumPy holds natively (see
/// [`npy::is_native`]) whose buffer 0 is contiguous and row-major. A reader can hand
/// these bytes out without copying; `None` means the tensor must be exported.
pub fn stored_row_major<'f>(tensor: &Tensor<'f>) -> Option<(npy::Dtype, &'f [u8])> {
    stored_row_major_of(tensor.descriptor, &tensor.buffers)
}

/// [`stored_row_major`] for a tensor given as its descriptor and buffers (a
/// stream's tensor, which belongs to no file).
pub fn stored_row_major_of<'b>(
    desc: &TensorDescriptor,
    buffers: &[&'b [u8]],
) -> Option<(npy::Dtype, &'b [u8])> {
    if desc.quantization.is_some() || !is_dense(desc.layout_tag) {
        return None;
    }
    let ty = ElementType::from_tag(desc.type_tag).filter(|t| npy::is_native(*t))?;
    let bytes = DenseView::new(desc, buffers).ok()?.contiguous()?;
    Some((npy::dtype(ty)?, bytes))
}

/// A dense tensor whose stored bytes repeat (strides of 0, or strides shorter
/// than the dimensions they step over), seen as a strided view of those bytes:
/// what a reader hands out instead of a copy that could be far larger than the
/// file (an 8 KB file may declare gigabytes of broadcast elements).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepeatedBytes<'b> {
    /// The NumPy dtype of the elements.
    pub dtype: npy::Dtype,
    /// Buffer 0, every element inside it.
    pub buffer: &'b [u8],
    /// Where in `buffer` the element at index `[0, 0, …]` starts.
    pub origin: usize,
    /// The step in bytes (possibly zero or negative) along each dimension.
    pub byte_strides: Vec<isize>,
}

/// [`RepeatedBytes`] for `tensor` when its elements overlap in storage: an
/// unquantized tensor of a byte-aligned type NumPy holds natively, in an affine
/// dense layout (row-major, column-major, strided) whose every element lies in
/// buffer 0 (checked), and whose row-major export would be larger than buffer
/// 0. `None` otherwise (export it, within a bound).
pub fn repeated_bytes<'f>(tensor: &Tensor<'f>) -> Option<RepeatedBytes<'f>> {
    let desc = tensor.descriptor;
    if desc.quantization.is_some() || !is_dense(desc.layout_tag) {
        return None;
    }
    let ty = ElementType::from_tag(desc.type_tag).filter(|t| npy::is_native(*t))?;
    let width = element_bits(desc).ok()?;
    if width % 8 != 0 {
        return None;
    }
    let item = i128::from(width / 8);
    let buffer = *tensor.buffers.first()?;
    let view = DenseView::new(desc, &tensor.buffers).ok()?;
    let crate::layout::DenseMap::Affine(strides) = view.map() else {
        return None;
    };
    let (lo, hi) = view.map().range(&desc.shape)?;
    // Every element inside buffer 0: the lowest starts at or after its start, the
    // highest ends at or before its end.
    let origin = i128::from(desc.byte_offset);
    let first = origin.checked_add(lo.checked_mul(item)?)?;
    let end = origin
        .checked_add(hi.checked_mul(item)?)?
        .checked_add(item)?;
    if first < 0 || end > buffer.len() as i128 {
        return None;
    }
    let exported = crate::layout::checked_count(&desc.shape)
        .ok()
        .and_then(|n| n.checked_mul(item as u64));
    if exported.is_some_and(|n| n <= buffer.len() as u64) {
        return None;
    }
    let byte_strides = strides
        .iter()
        .map(|&s| isize::try_from(s.checked_mul(item)?).ok())
        .collect::<Option<Vec<_>>>()?;
    Some(RepeatedBytes {
        dtype: npy::dtype(ty)?,
        buffer,
        origin: usize::try_from(origin).ok()?,
        byte_strides,
    })
}

/// Writes tensor `name` of `file` to `sink` as a `.npy` array in logical row-major
/// order.
pub fn export_npy<W: Write>(
    file: &HrryFile<'_>,
    name: &str,
    sink: W,
    options: &ExportOptions,
) -> Result<W, Error> {
    let tensor = file
        .tensor(name)?
        .ok_or_else(|| Error::Usage(format!("no tensor named {name:?}")))?;
    let desc = &tensor.descriptor;
    if desc.layout_tag == LAYOUT_COMPOSITE && desc.quantization.is_none() {
        let packed = assemble_composite(file, &tensor, options.max_bytes)?;
        return write_packed(desc, &packed, sink, options);
    }
    export_lone_npy(desc, &tensor.buffers, sink, options)
}

/// Writes the tensor `desc` over `buffers` as `.npy` in logical row-major order,
/// for every layout but a composite head (whose members are other tensors).
fn export_lone_npy<W: Write>(
    desc: &TensorDescriptor,
    buffers: &[&[u8]],
    sink: W,
    options: &ExportOptions,
) -> Result<W, Error> {
    if desc.layout_tag == LAYOUT_BLOCK_PAGED {
        // Token counts are not stored: there is no logical order to write, and a
        // quantized pool dequantizes in pool order (`crate::quant`), not in `shape`.
        return Err(no_logical_order(desc));
    }
    // Before any layout: a dense tensor whose strides repeat elements (a stride
    // of 0) claims far more elements than its buffer holds.
    let len = row_major_len(desc)?;
    if len > options.max_bytes {
        return Err(crate::layout::error::too_large(
            u128::from(len),
            options.max_bytes,
        ));
    }
    if desc.quantization.is_some() {
        let values = crate::quant::dequantize(desc, buffers)
            .map_err(|e| Error::Unsupported(format!("cannot dequantize: {e}")))?;
        return Ok(npy::write_f32(sink, &desc.shape, &values)?);
    }
    if is_dense(desc.layout_tag) {
        return write_dense(desc, buffers, sink, options);
    }
    if is_sparse(desc.layout_tag) {
        let packed = densify(desc, buffers, options.max_bytes)?;
        return write_packed(desc, &packed, sink, options);
    }
    Err(no_logical_order(desc))
}

fn no_logical_order(desc: &TensorDescriptor) -> Error {
    Error::Unsupported(format!(
        "layout {:#04x} has no logical-order export",
        desc.layout_tag
    ))
}

/// The NumPy dtype `hrry export` writes for `desc`: float32 for a quantized tensor
/// (its dequantized values), else the export dtype of its element type.
pub fn export_dtype(desc: &TensorDescriptor) -> Result<npy::Dtype, Error> {
    if desc.quantization.is_some() {
        return Ok(npy::FLOAT32);
    }
    let ty = element_type(desc)?;
    npy::dtype(ty).ok_or_else(|| {
        Error::Unsupported(format!("element type {} has no NumPy export", ty.name()))
    })
}

/// Length in bytes of what [`export_row_major`] writes for `desc`: the element count
/// times the item size of [`export_dtype`].
pub fn row_major_len(desc: &TensorDescriptor) -> Result<u64, Error> {
    let count = crate::layout::checked_count(&desc.shape)?;
    let item = export_dtype(desc)?.item_size as u64;
    count
        .checked_mul(item)
        .ok_or_else(|| crate::layout::error::overflow("row-major byte length"))
}

/// Writes tensor `name` of `file` in logical row-major order to `sink`: exactly the
/// data `hrry export` stores after the `.npy` header, with the same element widening
/// ([`export_dtype`]), [`row_major_len`] bytes in all.
pub fn export_row_major<W: Write>(
    file: &HrryFile<'_>,
    name: &str,
    sink: W,
    options: &ExportOptions,
) -> Result<W, Error> {
    let tensor = file
        .tensor(name)?
        .ok_or_else(|| Error::Usage(format!("no tensor named {name:?}")))?;
    let desc = &tensor.descriptor;
    // One export path for both outputs: run the `.npy` export and drop its header,
    // whose length follows from the dtype and shape alone.
    let header = npy::header(export_dtype(desc)?.descr, &desc.shape).len();
    let skip = SkipPrefix { sink, left: header };
    Ok(export_npy(file, name, skip, options)?.sink)
}

/// [`export_row_major`] into a new vector.
pub fn row_major_bytes(
    file: &HrryFile<'_>,
    name: &str,
    options: &ExportOptions,
) -> Result<Vec<u8>, Error> {
    export_row_major(file, name, Vec::new(), options)
}

/// The logical row-major bytes of the tensor `desc` over `buffers` (what
/// [`row_major_bytes`] gives for a file's tensor), for a tensor that belongs to no
/// file, such as a stream's. A composite head has no data of its own and is
/// refused: its members are other tensors.
pub fn row_major_bytes_of(
    desc: &TensorDescriptor,
    buffers: &[&[u8]],
    options: &ExportOptions,
) -> Result<Vec<u8>, Error> {
    if desc.layout_tag == LAYOUT_COMPOSITE && desc.quantization.is_none() {
        return Err(Error::Unsupported(
            "a composite head's values are its members'".into(),
        ));
    }
    let header = npy::header(export_dtype(desc)?.descr, &desc.shape).len();
    let skip = SkipPrefix {
        sink: Vec::new(),
        left: header,
    };
    Ok(export_lone_npy(desc, buffers, skip, options)?.sink)
}

/// A `Write` that discards the first `left` bytes written and passes the rest on.
struct SkipPrefix<W: Write> {
    sink: W,
    left: usize,
}

impl<W: Write> Write for SkipPrefix<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let skipped = self.left.min(buf.len());
        self.left -= skipped;
        if skipped == buf.len() {
            return Ok(skipped);
        }
        Ok(skipped + self.sink.write(&buf[skipped..])?)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.sink.flush()
    }
}

/// One array of a quantized tensor's stored form, as [`export_raw`] writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RawPart {
    /// The stored codes as the storage type, in logical row-major order, over the
    /// storage shape (a block scheme's padded axis included, padding codes too).
    Codes,
    /// The scales, one per channel or block, in stored order (float16 and float32
    /// as stored, bfloat16 widened exactly to float32, E8M0 as its uint8 codes).
    Scales,
    /// The int32 zero points, one per channel or block (asymmetric schemes only).
    ZeroPoints,
}

impl RawPart {
    /// The part's name in file names and indexes (`codes`, `scales`,
    /// `zero_points`).
    pub fn name(self) -> &'static str {
        match self {
            RawPart::Codes => "codes",
            RawPart::Scales => "scales",
            RawPart::ZeroPoints => "zero_points",
        }
    }
}

/// Writes the stored form of the quantized tensor `name` of `file`: its codes and
/// each parameter buffer as separate `.npy` arrays, for someone checking their own
/// decoder against the exact stored values. `sink` opens the output of each part;
/// the written outputs come back in order (codes, scales, zero points). Only dense
/// layouts are supported; the tensor must pass the dequantizer's checks, so every
/// slice read lies inside its buffer.
pub fn export_raw<W: Write>(
    file: &HrryFile<'_>,
    name: &str,
    mut sink: impl FnMut(RawPart) -> Result<W, Error>,
    options: &ExportOptions,
) -> Result<Vec<(RawPart, W)>, Error> {
    use crate::file::slice_at;
    use crate::model::quant::{block_scale_size, BlockGeometry};
    use crate::schema::{QuantScheme, FLAG_SYMMETRIC};

    let tensor = file
        .tensor(name)?
        .ok_or_else(|| Error::Usage(format!("no tensor named {name:?}")))?;
    let desc = &tensor.descriptor;
    let raw = desc
        .quantization
        .as_ref()
        .ok_or_else(|| Error::Unsupported("the tensor is not quantized".into()))?;
    if !is_dense(desc.layout_tag) {
        return Err(Error::Unsupported(format!(
            "raw export needs a dense layout, not {}",
            crate::schema::layout_name(desc.layout_tag)
        )));
    }
    crate::quant::Dequantizer::new(desc, &tensor.buffers)
        .map_err(|e| Error::Unsupported(format!("cannot read the quantized tensor: {e}")))?;
    let scheme = raw
        .scheme()
        .ok_or_else(|| Error::Unsupported("unknown quantization scheme".into()))?;

    // (block geometry, scale buffer, scale bytes each, zero-point buffer)
    let blocks = |axis: u32, block_size: u32| {
        BlockGeometry::new(&desc.shape, axis as usize, block_size.into())
            .ok_or_else(|| Error::Unsupported("the block geometry overflows".into()))
    };
    let symmetric = scheme.header().flags & FLAG_SYMMETRIC != 0;
    let (storage_shape, params) = match scheme {
        QuantScheme::PerTensorAffine(_) => (desc.shape.clone(), None),
        QuantScheme::PerChannelAffine(p) => {
            let n = desc.shape.get(p.axis as usize).copied().unwrap_or(0);
            let zp = (!symmetric).then_some(p.zero_point_buffer_index);
            (
                desc.shape.clone(),
                Some((n, p.scale_buffer_index, 0x03, zp)),
            )
        }
        QuantScheme::PerBlockAffine(p) => {
            let g = blocks(p.axis, p.block_size)?;
            let zp = (!symmetric).then_some(p.zero_point_buffer_index);
            let params = (g.num_blocks, p.scale_buffer_index, p.scale_type_tag, zp);
            (g.storage_shape(&desc.shape), Some(params))
        }
        QuantScheme::Nf4(b) => {
            let g = blocks(b.axis, b.block_size)?;
            let params = (g.num_blocks, b.scale_buffer_index, 0x03, None);
            (g.storage_shape(&desc.shape), Some(params))
        }
        QuantScheme::Mxfp(b) => {
            let g = blocks(b.axis, b.block_size)?;
            // 0x00 is no scale type tag: it stands for E8M0 codes below.
            (
                g.storage_shape(&desc.shape),
                Some((g.num_blocks, b.scale_buffer_index, 0x00, None)),
            )
        }
    };

    let mut out = Vec::new();
    let mut codes_desc = crate::schema::TensorDescriptor::clone(desc);
    codes_desc.quantization = None;
    codes_desc.shape = storage_shape;
    let codes = write_dense(
        &codes_desc,
        &tensor.buffers[..1],
        sink(RawPart::Codes)?,
        options,
    )?;
    out.push((RawPart::Codes, codes));

    let Some((count, scale_index, scale_type, zero_point_index)) = params else {
        return Ok(out);
    };
    let too_short = || Error::Unsupported("a parameter buffer is too short".into());
    let buffer = |index: u32| {
        tensor
            .buffers
            .get(index as usize)
            .copied()
            .ok_or_else(too_short)
    };
    let scale_size = match scale_type {
        0x00 => 1,
        tag => block_scale_size(tag).ok_or_else(too_short)?,
    };
    let scale_bytes = count.checked_mul(scale_size).ok_or_else(too_short)?;
    let scales = slice_at(buffer(scale_index)?, 0, scale_bytes).ok_or_else(too_short)?;
    let mut w = sink(RawPart::Scales)?;
    match scale_type {
        0x00 => {
            w.write_all(&npy::header("|u1", &[count]))?;
            w.write_all(scales)?;
        }
        0x01 => {
            w.write_all(&npy::header("<f2", &[count]))?;
            w.write_all(scales)?;
        }
        0x03 => {
            w.write_all(&npy::header("<f4", &[count]))?;
            w.write_all(scales)?;
        }
        tag => {
            w.write_all(&npy::header("<f4", &[count]))?;
            for s in scales.chunks_exact(scale_size as usize) {
                let v = crate::model::quant::widen_scale(tag, s);
                w.write_all(&v.to_le_bytes())?;
            }
        }
    }
    out.push((RawPart::Scales, w));

    if let Some(index) = zero_point_index {
        // A buffer shared with the scales holds [scales | zero points].
        let skip = if index == scale_index { scale_bytes } else { 0 };
        let bytes = count.checked_mul(4).ok_or_else(too_short)?;
        let zero_points = slice_at(buffer(index)?, skip, bytes).ok_or_else(too_short)?;
        let mut w = sink(RawPart::ZeroPoints)?;
        w.write_all(&npy::header("<i4", &[count]))?;
        w.write_all(zero_points)?;
        out.push((RawPart::ZeroPoints, w));
    }
    Ok(out)
}

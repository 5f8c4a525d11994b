//! Random access over a whole file in memory or mapped (file-format.md "Random-Access
//! Reader"), built on the validator's decode pass.

use std::sync::OnceLock;

use crate::decode::file::{
    check_entry_data_offset, check_entry_descriptor_length, decode_descriptor, decode_file,
    DecodedFile, Names, Region, Walked,
};
use crate::decode::header::stated_length;
use crate::decode::input::{touch_first_bytes, TOUCH_BATCH};
use crate::limits::Limits;
use crate::model::view::{typed_slice, typed_vec, Element};
use crate::model::ElementType;
use crate::schema::{
    placement::{place_buffers, DataPlacement},
    FileHeader, IndexEntryOf, KvEntry, LayoutFields, NameSpan, TensorDescriptor, Trailer,
};
use crate::validate::rules::container as rules;
use crate::validate::{Depth, Judging, Pass, Report};

use super::mirror::Mirror;
use super::Error;
use crate::source::ReadAt;

pub(super) enum Source<'a> {
    Borrowed(&'a [u8]),
    Mapped(super::Mapping),
    /// Any [`crate::source::ReadAt`], mirrored on disk as it is read.
    Mirrored(Box<Mirror>),
}

impl Source<'_> {
    /// The whole file, when all of it is at hand.
    fn whole(&self) -> Option<&[u8]> {
        match self {
            Source::Borrowed(b) => Some(b),
            Source::Mapped(m) => Some(m),
            Source::Mirrored(_) => None,
        }
    }

    /// Length in bytes.
    fn len(&self) -> u64 {
        match self {
            Source::Mirrored(m) => ReadAt::len(&**m),
            _ => self.whole().map_or(0, |b| b.len() as u64),
        }
    }

    /// The bytes `offset..offset + len` (fetched first from a mirrored source);
    /// `None` when they are not all inside the file.
    fn range(&self, offset: u64, len: u64) -> std::io::Result<Option<&[u8]>> {
        match self {
            Source::Mirrored(m) => m.fetched(offset, len),
            _ => Ok(self.whole().and_then(|b| slice_at(b, offset, len))),
        }
    }
}

/// An opened HRRYFILE: header, trailer, index and KV decoded and checked (and, by
/// default, every descriptor); tensor data borrowed, never copied.
///
/// Opening runs the validator's own decode pass and refuses the file at the first
/// rule it breaks, naming the rule `hrry validate` reports: by default every `spec`
/// rule decided from metadata ([`Depth`] says what each depth of
/// [`OpenOptions::judging`](super::OpenOptions::judging) checks).
///
/// # Examples
///
/// ```
/// use hrry::file::{HrryFile, HrryWriter, WriterOptions};
///
/// let path = std::env::temp_dir().join(format!("hrry-doc-{}.hrry", std::process::id()));
/// let mut w = HrryWriter::create(&path, WriterOptions::default())?;
/// w.write_row_major::<f32>("embed", &[3, 2], &[0.0, 0.1, 1.0, 1.1, 2.0, 2.1])?;
/// w.write_row_major::<u8>("mask", &[4], &[1, 1, 0, 1])?;
/// w.finish_file()?;
///
/// // Maps the file and checks its metadata; tensor data is not read now.
/// let file = HrryFile::open(&path)?;
/// let names: Vec<&str> = file.entries().map(|e| e.name()).collect();
/// assert_eq!(names, ["embed", "mask"]);
/// // Lookup by name, data borrowed from the mapping.
/// let embed = file.tensor("embed")?.expect("present");
/// assert_eq!(embed.shape(), [3, 2]);
/// assert_eq!(embed.as_slice::<f32>()?[2..4], [1.0, 1.1]);
/// assert!(file.tensor("missing")?.is_none());
/// # drop(file);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct HrryFile<'a> {
    source: Source<'a>,
    header: FileHeader,
    trailer: Trailer,
    /// Every name, checked UTF-8, concatenated in index order.
    names: String,
    /// The entries; each name is a [`NameSpan`] into `names`.
    index: Vec<IndexEntryOf<NameSpan>>,
    /// Absolute offset of each entry of `index`.
    index_offsets: Vec<u64>,
    kv: Vec<KvEntry>,
    /// The tensors the open's walk of the region found, and which one each index
    /// entry names (`None` when the open did not walk the region).
    region: Option<Region>,
    /// For each entry the walk did not give, its tensor decoded when first asked
    /// for (the table made on first use).
    lazy: OnceLock<Vec<OnceLock<Box<Walked>>>>,
    /// Whether the index order is checked sorted, so that lookups may bisect it.
    sorted: bool,
    limits: Limits,
    /// How descriptors decoded on demand are judged.
    judging: Judging,
    /// How their violations are treated.
    pass: Pass,
    by_name: OnceLock<Vec<u32>>,
}

/// One index entry of an opened file.
#[derive(Clone, Copy)]
pub struct TensorEntry<'f> {
    position: usize,
    entry: &'f IndexEntryOf<NameSpan>,
    name: &'f str,
}

impl<'f> TensorEntry<'f> {
    /// The tensor's name.
    pub fn name(&self) -> &'f str {
        self.name
    }

    /// Position of this entry in the index.
    pub fn position(&self) -> usize {
        self.position
    }

    /// The index entry; its name is a [`NameSpan`] into [`HrryFile::name_text`].
    pub fn index_entry(&self) -> &'f IndexEntryOf<NameSpan> {
        self.entry
    }
}

/// A tensor with its descriptor and its buffers borrowed from the file.
pub struct Tensor<'f> {
    /// The index entry.
    pub entry: TensorEntry<'f>,
    /// The decoded descriptor.
    pub descriptor: &'f TensorDescriptor,
    /// Buffer `i` of the descriptor's buffer table, borrowed from the file.
    pub buffers: Vec<&'f [u8]>,
}

impl Tensor<'_> {
    /// The tensor's name.
    pub fn name(&self) -> &str {
        self.entry.name()
    }

    /// The shape, outermost dimension first (empty for a scalar).
    pub fn shape(&self) -> &[u64] {
        &self.descriptor.shape
    }

    /// The element type; `None` for a type tag this library does not know (an
    /// extension type).
    pub fn element_type(&self) -> Option<ElementType> {
        ElementType::from_tag(self.descriptor.type_tag)
    }

    /// The layout with its fields.
    pub fn layout(&self) -> &LayoutFields {
        &self.descriptor.layout
    }

    /// Whether the tensor is quantized (its values need [`crate::quant::Dequantizer`]).
    pub fn is_quantized(&self) -> bool {
        self.descriptor.quantization.is_some()
    }

    /// The values of a row-major, unquantized tensor as a `&[T]` borrowed from the
    /// file, in row-major order: `tensor.as_slice::<f32>()` for a float32 tensor.
    ///
    /// Fails, saying why, when the tensor holds another element type, uses another
    /// layout, is quantized, or its data is not aligned for `T` (see
    /// [`crate::model::view::typed_slice`]); [`Tensor::to_vec`] copies instead.
    pub fn as_slice<T: Element>(&self) -> Result<&[T], crate::Error> {
        typed_slice(
            self.descriptor,
            self.buffers.first().copied().unwrap_or_default(),
        )
    }

    /// The values of a row-major, unquantized tensor copied into a vector, at any
    /// alignment and byte order (see [`crate::model::view::typed_vec`]).
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>, crate::Error> {
        typed_vec(
            self.descriptor,
            self.buffers.first().copied().unwrap_or_default(),
        )
    }
}

impl<'a> HrryFile<'a> {
    /// Runs the decode pass over `source` as `judging` says, refusing the file at
    /// the first violation recorded that `pass` does not let pass. The pass reads
    /// through `read_through` when given (the file a mapped `source` maps, read
    /// with positioned reads, so that decoding leaves the mapping's pages alone).
    pub(super) fn decode(
        source: Source<'a>,
        read_through: Option<&dyn ReadAt>,
        limits: Limits,
        judging: Judging,
        pass: Pass,
    ) -> Result<Self, Error> {
        let (report, decoded) = match (&source, read_through) {
            (_, Some(file)) => decode_file(file, limits, judging, pass.clone())?,
            (Source::Mirrored(m), None) => decode_file(&**m, limits, judging, pass.clone())?,
            (_, None) => {
                let bytes = source.whole().unwrap_or_default();
                decode_file(&bytes, limits, judging, pass.clone())?
            }
        };
        let sorted_checked = !report.allows(&rules::HF_IDX_SORTED);
        let decoded = refuse(report, decoded)?;
        let DecodedFile {
            header,
            trailer,
            index,
            index_offsets,
            names,
            kv,
            region,
        } = decoded;
        let names = match names {
            Names::Text(text) => text,
            Names::Bytes(e) => {
                return Err(Error::invalid(
                    &rules::HF_IDX_NAME_UTF8,
                    trailer.index_offset,
                    format!("a tensor name is not UTF-8: {e}"),
                ))
            }
        };
        let sorted = header.file_flags.sorted_index() && sorted_checked;
        Ok(HrryFile {
            source,
            header,
            trailer,
            names,
            index,
            index_offsets,
            kv,
            region,
            lazy: OnceLock::new(),
            sorted,
            limits,
            judging,
            // An open that does not walk the region decodes each descriptor safely
            // when asked for and leaves judging it to the validator.
            pass: match judging.depth {
                Depth::Index | Depth::Frame => Pass {
                    allow_all: true,
                    ..pass
                },
                Depth::Metadata | Depth::Data => pass,
            },
            by_name: OnceLock::new(),
        })
    }

    /// The whole file, when all of it is at hand: a file opened from bytes in
    /// memory or mapped. `None` for a file opened over a source
    /// ([`OpenOptions::open_source`](super::OpenOptions::open_source)), whose bytes
    /// are fetched as they are asked for: [`HrryFile::read_range`] reads any range
    /// of it, [`HrryFile::size`] gives its length.
    pub fn bytes(&self) -> Option<&[u8]> {
        self.source.whole()
    }

    /// The file's length in bytes.
    pub fn size(&self) -> u64 {
        self.source.len()
    }

    /// The bytes `offset..offset + len` of the file, borrowed; from a file opened
    /// over a source, those not fetched yet are fetched first (and kept, so that
    /// asking again costs nothing). A range not inside the file is an error, as is
    /// a failed fetch ([`Error::Io`]).
    pub fn read_range(&self, offset: u64, len: u64) -> Result<&[u8], Error> {
        self.source.range(offset, len)?.ok_or_else(|| {
            Error::Io(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!(
                    "{len} bytes at offset {offset} run past the end of the {}-byte file",
                    self.size()
                ),
            ))
        })
    }

    /// Where `part` starts in the file, when it is a slice the file handed out (a
    /// tensor's buffer, a [`HrryFile::read_range`]): what serving or copying a
    /// buffer by its offset needs.
    pub fn offset_of(&self, part: &[u8]) -> Option<u64> {
        match &self.source {
            Source::Mirrored(m) => m.offset_of(part),
            _ => {
                let whole = self.source.whole()?;
                let at = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
                (at.checked_add(part.len())? <= whole.len()).then_some(at as u64)
            }
        }
    }

    /// The source a file opened with
    /// [`OpenOptions::open_source`](super::OpenOptions::open_source) reads (`None`
    /// for bytes in memory or mapped): to validate it, or ask what reading it cost.
    pub fn source(&self) -> Option<&(dyn ReadAt + Send)> {
        match &self.source {
            Source::Mirrored(m) => Some(m.source()),
            _ => None,
        }
    }

    /// Bytes fetched from the source so far, for a file opened over one.
    pub fn fetched_len(&self) -> Option<u64> {
        match &self.source {
            Source::Mirrored(m) => Some(m.fetched_len()),
            _ => None,
        }
    }

    /// Every tensor name, concatenated in index order: what the [`NameSpan`] of each
    /// [`TensorEntry::index_entry`] points into. Kept as one string, checked UTF-8
    /// once when the file was opened, so that listing names allocates nothing.
    pub fn name_text(&self) -> &str {
        &self.names
    }

    /// The entry at index position `position`, its name resolved in `names`.
    fn tensor_entry<'f>(
        names: &'f str,
        position: usize,
        entry: &'f IndexEntryOf<NameSpan>,
    ) -> TensorEntry<'f> {
        TensorEntry {
            position,
            entry,
            name: name_in(names, entry.name),
        }
    }

    /// The file header.
    pub fn header(&self) -> &FileHeader {
        &self.header
    }

    /// The trailer.
    pub fn trailer(&self) -> &Trailer {
        &self.trailer
    }

    /// KV metadata entries, in file order.
    pub fn kv(&self) -> &[KvEntry] {
        &self.kv
    }

    /// The KV value stored under `key`.
    pub fn kv_value(&self, key: &str) -> Option<&crate::schema::KvValue> {
        self.kv
            .iter()
            .find(|e| e.key == key.as_bytes())
            .map(|e| &e.value)
    }

    /// Number of tensors (index entries).
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// True when the file holds no tensor.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Index entries in index order.
    pub fn entries(&self) -> impl ExactSizeIterator<Item = TensorEntry<'_>> + '_ {
        let names = self.name_text();
        self.index
            .iter()
            .enumerate()
            .map(move |(position, entry)| Self::tensor_entry(names, position, entry))
    }

    /// The entry at index position `i`.
    pub fn entry(&self, i: usize) -> Option<TensorEntry<'_>> {
        let entry = self.index.get(i)?;
        Some(Self::tensor_entry(self.name_text(), i, entry))
    }

    /// Looks a tensor up by name in O(log n): binary search over the index when it is
    /// checked sorted, else over a name order built once on first use.
    pub fn find(&self, name: &str) -> Option<TensorEntry<'_>> {
        let key = name.as_bytes();
        let names = self.names.as_bytes();
        let name_at = |i: u32| {
            self.index
                .get(i as usize)
                .and_then(|e| e.name.bytes_in(names))
                .unwrap_or_default()
        };
        let position = if self.sorted {
            self.index
                .binary_search_by(|e| e.name.bytes_in(names).unwrap_or_default().cmp(key))
                .ok()?
        } else {
            let order = self.by_name.get_or_init(|| {
                let mut order: Vec<u32> = (0..self.index.len() as u32).collect();
                order.sort_by(|&a, &b| name_at(a).cmp(name_at(b)));
                order
            });
            let at = order.binary_search_by(|&i| name_at(i).cmp(key)).ok()?;
            *order.get(at)? as usize
        };
        self.entry(position)
    }

    /// The tensor of `entry`: the one the walk found, else decoded, checked and
    /// placed now (then kept).
    fn tensor_of(&self, entry: TensorEntry<'_>) -> Result<&Walked, Error> {
        let walked = self.region.as_ref().and_then(|r| {
            let at = (*r.by_entry.get(entry.position)?)?;
            r.walked.get(at)
        });
        if let Some(t) = walked {
            return Ok(t);
        }
        let lazy = self
            .lazy
            .get_or_init(|| (0..self.index.len()).map(|_| OnceLock::new()).collect());
        let slot = lazy
            .get(entry.position)
            .ok_or_else(|| Error::Usage(format!("no index entry {}", entry.position)))?;
        if let Some(t) = slot.get() {
            return Ok(t);
        }
        let descriptor = self.decode_descriptor(entry)?;
        let placement = self.place(entry, &descriptor)?;
        let at = entry.entry.descriptor_offset;
        Ok(slot.get_or_init(|| Box::new(Walked::new(at, descriptor, placement))))
    }

    /// The descriptor of `entry`: the one the open decoded, else decoded and checked
    /// now (reading exactly `descriptor_length` bytes).
    pub fn descriptor(&self, entry: TensorEntry<'_>) -> Result<&TensorDescriptor, Error> {
        self.tensor_of(entry).map(|t| &t.descriptor)
    }

    /// Where the buffers of `entry`'s `descriptor` lie, as its index entry says.
    fn place(
        &self,
        entry: TensorEntry<'_>,
        descriptor: &TensorDescriptor,
    ) -> Result<DataPlacement, Error> {
        let e = entry.entry;
        let end = e.descriptor_offset + u64::from(e.descriptor_length);
        let alignment = self.header.data_buffer_alignment.into();
        let placement = place_buffers(end, &descriptor.buffers, alignment).ok_or_else(|| {
            Error::invalid(
                &rules::HF_PLC_DATA_BOUNDS,
                e.descriptor_offset,
                format!("tensor {:?}: buffer offsets overflow", entry.name()),
            )
        })?;
        if !descriptor.buffers.is_empty() {
            let at = self.entry_offset(entry);
            check_entry_data_offset(e, at, placement.data_offset, alignment)?;
        }
        Ok(placement)
    }

    /// Absolute offset of the index entry `entry`.
    fn entry_offset(&self, entry: TensorEntry<'_>) -> u64 {
        self.index_offsets
            .get(entry.position)
            .copied()
            .unwrap_or(self.trailer.index_offset)
    }

    /// Decodes the descriptor of `entry` from the file and judges it as the walk
    /// would on its own.
    fn decode_descriptor(&self, entry: TensorEntry<'_>) -> Result<TensorDescriptor, Error> {
        let e = entry.entry;
        let at = e.descriptor_offset;
        let past_end = |what: &str| {
            Error::invalid(
                &rules::HF_PLC_DATA_BOUNDS,
                at,
                format!(
                    "the {what} of {:?} ({} bytes at {at}) runs past the end of the file ({} bytes)",
                    entry.name(),
                    e.descriptor_length,
                    self.size()
                ),
            )
        };
        let bytes = self
            .source
            .range(at, e.descriptor_length.into())?
            .ok_or_else(|| past_end("descriptor"))?;
        // The index locates exactly the descriptor's bytes (HF-IDX-004).
        if let Some(stated) = stated_length(bytes) {
            check_entry_descriptor_length(e, self.entry_offset(entry), stated)?;
        }
        Ok(decode_descriptor(
            bytes,
            at,
            &self.limits,
            self.judging,
            &self.pass,
        )?)
    }

    /// Every entry with its descriptor, in index order: what listing names, element
    /// types and shapes needs.
    ///
    /// Same result as calling [`HrryFile::descriptor`] on each of
    /// [`HrryFile::entries`]. When descriptors are decoded now (opened to
    /// [`Depth::Frame`] or [`Depth::Index`]),
    /// this touches those of a batch of entries together before decoding them, so
    /// that the cache (and TLB) misses of descriptors spread over a large file
    /// overlap instead of queueing one behind the other.
    pub fn descriptors(&self) -> Descriptors<'_> {
        Descriptors {
            file: self,
            next: 0,
            touched: 0,
        }
    }

    /// Reads one byte of each descriptor of entries `from..to`, so that their cache
    /// lines are fetched together; for a mirrored source, asks it to fetch the
    /// descriptors together instead.
    fn touch_descriptors(&self, from: usize, to: usize) {
        let bytes = match &self.source {
            Source::Mirrored(m) => {
                let ranges: Vec<(u64, u64)> = self
                    .index
                    .get(from..to)
                    .unwrap_or_default()
                    .iter()
                    .map(|e| (e.descriptor_offset, u64::from(e.descriptor_length)))
                    .collect();
                m.prefetch(&ranges);
                return;
            }
            _ => self.source.whole().unwrap_or_default(),
        };
        let entries = self.index.get(from..to).unwrap_or_default();
        touch_first_bytes(bytes, entries.iter().map(|e| e.descriptor_offset));
    }

    /// The tensor named `name`, with its descriptor and borrowed buffers.
    pub fn tensor(&self, name: &str) -> Result<Option<Tensor<'_>>, Error> {
        match self.find(name) {
            Some(entry) => self.tensor_at(entry).map(Some),
            None => Ok(None),
        }
    }

    /// The descriptor of `entry` and the absolute file offset of each of its
    /// buffers, placed and checked as [`HrryFile::tensor_at`] does but without
    /// reading them: for a caller that reads the data itself (a conversion, a
    /// stream pack). A buffer not inside the file is an error.
    pub fn placement(&self, entry: TensorEntry<'_>) -> Result<(&TensorDescriptor, &[u64]), Error> {
        let walked = self.tensor_of(entry)?;
        let size = self.size();
        for (i, (h, &at)) in walked
            .descriptor
            .buffers
            .iter()
            .zip(&walked.buffer_offsets)
            .enumerate()
        {
            if at.checked_add(h.byte_size).is_none_or(|end| end > size) {
                return Err(Error::invalid(
                    &rules::HF_PLC_DATA_BOUNDS,
                    at,
                    format!(
                        "tensor {:?}: buffer {i} ({} bytes at {at}) runs past the end of the file",
                        entry.name(),
                        h.byte_size
                    ),
                ));
            }
        }
        Ok((&walked.descriptor, &walked.buffer_offsets))
    }

    /// The tensor of `entry`, with its descriptor and borrowed buffers.
    pub fn tensor_at<'f>(&'f self, entry: TensorEntry<'f>) -> Result<Tensor<'f>, Error> {
        let Walked {
            descriptor,
            buffer_offsets: offsets,
            ..
        } = self.tensor_of(entry)?;
        // The buffers lie one after the other: one fetch for them all.
        let span = descriptor
            .buffers
            .iter()
            .zip(offsets)
            .map(|(h, &at)| (at, at.saturating_add(h.byte_size)))
            .reduce(|(s, e), (s2, e2)| (s.min(s2), e.max(e2)));
        if let Some((start, end)) = span {
            self.source.range(start, end - start)?;
        }
        let mut buffers = Vec::with_capacity(descriptor.buffers.len());
        for (i, (h, &at)) in descriptor.buffers.iter().zip(offsets).enumerate() {
            let data = self.source.range(at, h.byte_size)?.ok_or_else(|| {
                Error::invalid(
                    &rules::HF_PLC_DATA_BOUNDS,
                    at,
                    format!(
                        "tensor {:?}: buffer {i} ({} bytes at {at}) runs past the end of the file",
                        entry.name(),
                        h.byte_size
                    ),
                )
            })?;
            buffers.push(data);
        }
        Ok(Tensor {
            entry,
            descriptor,
            buffers,
        })
    }
}

/// The first violation of a reader's decode pass as the error, else what decoded.
fn refuse(report: Report, decoded: Option<DecodedFile>) -> Result<DecodedFile, Error> {
    if let Some(v) = report.violations.into_iter().next() {
        return Err(Error::Invalid(v));
    }
    decoded.ok_or_else(|| {
        Error::invalid(
            &rules::HF_FILE_SIZE,
            0,
            "the tensor region could not be located",
        )
    })
}

/// Iterator returned by [`HrryFile::descriptors`].
pub struct Descriptors<'f> {
    file: &'f HrryFile<'f>,
    next: usize,
    touched: usize,
}

impl Descriptors<'_> {
    /// Entries whose descriptors are touched together.
    const BATCH: usize = TOUCH_BATCH;
    /// Entries whose descriptors a mirrored source is asked to fetch together:
    /// few requests to a remote one.
    const SOURCE_BATCH: usize = 4096;
}

impl<'f> Iterator for Descriptors<'f> {
    type Item = (TensorEntry<'f>, Result<&'f TensorDescriptor, Error>);

    fn next(&mut self) -> Option<Self::Item> {
        let entry = self.file.entry(self.next)?;
        if self.file.region.is_none() && self.next >= self.touched {
            let batch = match self.file.source {
                Source::Mirrored(_) => Self::SOURCE_BATCH,
                _ => Self::BATCH,
            };
            self.touched = self.next.saturating_add(batch).min(self.file.len());
            self.file.touch_descriptors(self.next, self.touched);
        }
        self.next += 1;
        Some((entry, self.file.descriptor(entry)))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.file.len().saturating_sub(self.next);
        (left, Some(left))
    }
}

impl ExactSizeIterator for Descriptors<'_> {}

/// The name `span` locates in `names` (empty if it is not there, which cannot happen
/// for the spans the decode pass makes).
fn name_in(names: &str, span: NameSpan) -> &str {
    usize::try_from(span.offset)
        .ok()
        .and_then(|start| names.get(start..start.checked_add(span.len.into())?))
        .unwrap_or_default()
}

/// `len` bytes of `bytes` at `offset`, if they are all there.
pub(crate) fn slice_at(bytes: &[u8], offset: u64, len: u64) -> Option<&[u8]> {
    let start = usize::try_from(offset).ok()?;
    let end = start.checked_add(usize::try_from(len).ok()?)?;
    bytes.get(start..end)
}

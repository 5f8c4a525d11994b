//! Random access over a whole file in memory or mapped (file-format.md "Random-Access
//! Reader").

use std::fs::File;
use std::path::Path;
use std::sync::OnceLock;

use memmap2::Mmap;

use crate::limits::Limits;
use crate::model::view::{typed_slice, typed_vec, Element, ViewError};
use crate::schema::{
    container::{header_offsets, trailer_offsets, FILE_HEADER_LEN, MIN_INDEX_ENTRY_LEN},
    placement::place_buffers,
    read_from, FileHeader, IndexEntryOf, IndexSectionOf, KvEntry, KvSection, NameSpan,
    TensorDescriptor, Trailer, FILE_MAGIC, TRAILER_LEN, TRAILER_MAGIC,
};
use crate::validate::rules::container as rules;

use super::Error;

enum Source<'a> {
    Borrowed(&'a [u8]),
    Mapped(Mmap),
}

/// An opened HRRYFILE: header, trailer, index and KV parsed and bounds-checked;
/// descriptors parsed on demand; tensor data borrowed, never copied.
///
/// Opening checks what reading needs (magic, versions, trailer, bounds, CRC,
/// limits). Full conformance is [`crate::validate::validate_file`]'s job.
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
/// // Maps the file; only the header, trailer, index and KV are read now.
/// let file = HrryFile::open(&path)?;
/// let names: Vec<&str> = file.entries().map(|e| e.name()).collect();
/// assert_eq!(names, ["embed", "mask"]);
/// // Lookup by name (binary search when the index is sorted), data borrowed
/// // from the mapping.
/// let embed = file.tensor("embed")?.expect("present");
/// assert_eq!(embed.descriptor.shape, [3, 2]);
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
    kv: Vec<KvEntry>,
    limits: Limits,
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
    /// The tensor's name (checked to be UTF-8 when the file was opened).
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
    /// The parsed descriptor.
    pub descriptor: TensorDescriptor,
    /// Buffer `i` of the descriptor's buffer table, borrowed from the file.
    pub buffers: Vec<&'f [u8]>,
}

impl Tensor<'_> {
    /// The values of a row-major, unquantized tensor as a `&[T]` borrowed from the
    /// file, in row-major order: `tensor.as_slice::<f32>()` for a float32 tensor.
    ///
    /// Fails, saying why, when the tensor holds another element type, uses another
    /// layout, is quantized, or its data is not aligned for `T` (see
    /// [`crate::model::view::typed_slice`]); [`Tensor::to_vec`] copies instead.
    pub fn as_slice<T: Element>(&self) -> Result<&[T], ViewError> {
        typed_slice(
            &self.descriptor,
            self.buffers.first().copied().unwrap_or_default(),
        )
    }

    /// The values of a row-major, unquantized tensor copied into a vector, at any
    /// alignment and byte order (see [`crate::model::view::typed_vec`]).
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>, ViewError> {
        typed_vec(
            &self.descriptor,
            self.buffers.first().copied().unwrap_or_default(),
        )
    }
}

/// A boxed iterator over index entries, in index order.
pub type IndexView<'f> = Box<dyn ExactSizeIterator<Item = TensorEntry<'f>> + 'f>;

impl HrryFile<'static> {
    /// Maps `path` and opens it with default limits.
    pub fn open(path: &Path) -> Result<Self, Error> {
        Self::open_with(path, Limits::default())
    }

    /// Maps `path` and opens it with `limits`.
    pub fn open_with(path: &Path, limits: Limits) -> Result<Self, Error> {
        Self::map(path, limits, Crc::Verify)
    }

    /// Maps `path` and opens it as [`HrryFile::from_bytes_unverified`] does.
    pub fn open_unverified(path: &Path, limits: Limits) -> Result<Self, Error> {
        Self::map(path, limits, Crc::Skip)
    }

    /// Opens a file already mapped with [`map_file`] (so that a caller can validate
    /// the bytes first and keep them when opening fails), with `limits`.
    pub fn from_mmap(map: Mmap, limits: Limits) -> Result<Self, Error> {
        Self::from_source(Source::Mapped(map), limits, Crc::Verify)
    }

    fn map(path: &Path, limits: Limits, crc: Crc) -> Result<Self, Error> {
        Self::from_source(Source::Mapped(map_file(path)?), limits, crc)
    }
}

/// Maps the file at `path` read-only.
pub fn map_file(path: &Path) -> std::io::Result<Mmap> {
    let file = File::open(path)?;
    // SAFETY: the map is read-only; as with every mmap-based reader, another process
    // truncating or rewriting the file while it is mapped is outside what we can
    // guard against (documented in the README).
    unsafe { Mmap::map(&file) }
}

/// Whether opening verifies the index CRC-32C.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Crc {
    Verify,
    Skip,
}

impl<'a> HrryFile<'a> {
    /// Opens a file held in memory, with default limits.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::from_bytes_with(bytes, Limits::default())
    }

    /// Opens a file held in memory, with `limits`.
    pub fn from_bytes_with(bytes: &'a [u8], limits: Limits) -> Result<Self, Error> {
        Self::from_source(Source::Borrowed(bytes), limits, Crc::Verify)
    }

    /// Opens a file held in memory without verifying the index CRC-32C, to show what
    /// can be read of a damaged file (`hrry inspect --permissive`). Everything else is
    /// checked as usual, so reading stays safe; the index may simply be wrong.
    pub fn from_bytes_unverified(bytes: &'a [u8], limits: Limits) -> Result<Self, Error> {
        Self::from_source(Source::Borrowed(bytes), limits, Crc::Skip)
    }

    fn from_source(source: Source<'a>, limits: Limits, crc: Crc) -> Result<Self, Error> {
        let bytes: &[u8] = match &source {
            Source::Borrowed(b) => b,
            Source::Mapped(m) => m,
        };
        let (header, trailer) = read_frame(bytes)?;
        let (names, index) = read_index(bytes, &header, &trailer, &limits, crc)?;
        let kv = read_kv(bytes, &trailer, &limits)?;
        Ok(HrryFile {
            source,
            header,
            trailer,
            names,
            index,
            kv,
            limits,
            by_name: OnceLock::new(),
        })
    }

    /// The whole file.
    pub fn bytes(&self) -> &[u8] {
        match &self.source {
            Source::Borrowed(b) => b,
            Source::Mapped(m) => m,
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
    /// sorted, else over a name order built once on first use.
    pub fn find(&self, name: &str) -> Option<TensorEntry<'_>> {
        let key = name.as_bytes();
        let names = self.names.as_bytes();
        let name_at = |i: u32| {
            self.index
                .get(i as usize)
                .and_then(|e| e.name.bytes_in(names))
                .unwrap_or_default()
        };
        let position = if self.header.file_flags.sorted_index() {
            self.index
                .binary_search_by(|e| e.name.bytes_in(names).unwrap_or_default().cmp(key))
                .ok()?
        } else {
            let order = self.by_name.get_or_init(|| {
                let mut order: Vec<u32> = (0..self.index.len() as u32).collect();
                order.sort_unstable_by(|&a, &b| name_at(a).cmp(name_at(b)));
                order
            });
            let at = order.binary_search_by(|&i| name_at(i).cmp(key)).ok()?;
            *order.get(at)? as usize
        };
        self.entry(position)
    }

    /// Parses the descriptor of `entry`, reading exactly `descriptor_length` bytes.
    pub fn descriptor(&self, entry: TensorEntry<'_>) -> Result<TensorDescriptor, Error> {
        let e = entry.entry;
        if e.descriptor_length > self.limits.max_descriptor_bytes {
            return Err(Error::Limit {
                limit: "max_descriptor_bytes",
                value: e.descriptor_length.into(),
                max: self.limits.max_descriptor_bytes.into(),
                offset: e.descriptor_offset,
            });
        }
        let slice = slice_at(
            self.bytes(),
            e.descriptor_offset,
            e.descriptor_length.into(),
        )
        .ok_or_else(|| {
            Error::invalid(
                &rules::HF_PLC_DATA_BOUNDS,
                e.descriptor_offset,
                format!(
                    "descriptor of {:?} ({} bytes at {}) runs past the end of the file ({} bytes)",
                    entry.name(),
                    e.descriptor_length,
                    e.descriptor_offset,
                    self.bytes().len()
                ),
            )
        })?;
        parse_descriptor(slice, e.descriptor_offset, &self.limits)
    }

    /// Every entry with its parsed descriptor, in index order: what listing names,
    /// element types and shapes needs.
    ///
    /// Same result as calling [`HrryFile::descriptor`] on each of
    /// [`HrryFile::entries`], faster on a large file: descriptors sit between data
    /// buffers, usually one per page, so each is a cache (and TLB) miss. This touches
    /// the descriptors of a batch of entries together before parsing them, so the
    /// misses overlap instead of queueing one behind the other.
    pub fn descriptors(&self) -> Descriptors<'_> {
        Descriptors {
            file: self,
            next: 0,
            touched: 0,
        }
    }

    /// Reads one byte of each descriptor of entries `from..to`, so that their cache
    /// lines are fetched together.
    fn touch_descriptors(&self, from: usize, to: usize) {
        let bytes = self.bytes();
        let first_bytes = self
            .index
            .get(from..to)
            .unwrap_or_default()
            .iter()
            .map(|e| {
                usize::try_from(e.descriptor_offset)
                    .ok()
                    .and_then(|at| bytes.get(at))
                    .copied()
                    .unwrap_or(0)
            });
        std::hint::black_box(first_bytes.fold(0u8, |acc, b| acc ^ b));
    }

    /// The tensor named `name`, with its descriptor and borrowed buffers.
    pub fn tensor(&self, name: &str) -> Result<Option<Tensor<'_>>, Error> {
        match self.find(name) {
            Some(entry) => self.tensor_at(entry).map(Some),
            None => Ok(None),
        }
    }

    /// The tensor of `entry`, with its descriptor and borrowed buffers.
    pub fn tensor_at<'f>(&'f self, entry: TensorEntry<'f>) -> Result<Tensor<'f>, Error> {
        let descriptor = self.descriptor(entry)?;
        let e = entry.entry;
        let bytes = self.bytes();
        let end = e.descriptor_offset + u64::from(e.descriptor_length);
        let placement = place_buffers(
            end,
            &descriptor.buffers,
            self.header.data_buffer_alignment.into(),
        )
        .filter(|p| p.data_offset == e.data_offset || descriptor.buffers.is_empty())
        .ok_or_else(|| {
            Error::invalid(
                &rules::HF_IDX_DATA_OFFSET,
                e.descriptor_offset,
                format!(
                    "tensor {:?}: index data_offset {} is not where its first buffer belongs",
                    entry.name(),
                    e.data_offset
                ),
            )
        })?;
        let mut buffers = Vec::with_capacity(descriptor.buffers.len());
        for (i, (h, &at)) in descriptor
            .buffers
            .iter()
            .zip(&placement.buffer_offsets)
            .enumerate()
        {
            let data = slice_at(bytes, at, h.byte_size).ok_or_else(|| {
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

/// Iterator returned by [`HrryFile::descriptors`].
pub struct Descriptors<'f> {
    file: &'f HrryFile<'f>,
    next: usize,
    touched: usize,
}

impl Descriptors<'_> {
    /// Entries whose descriptors are touched together; enough misses in flight to
    /// cover the memory latency, few enough to stay in the L1 cache and TLB.
    const BATCH: usize = 16;
}

impl<'f> Iterator for Descriptors<'f> {
    type Item = (TensorEntry<'f>, Result<TensorDescriptor, Error>);

    fn next(&mut self) -> Option<Self::Item> {
        let entry = self.file.entry(self.next)?;
        if self.next >= self.touched {
            self.touched = self.next.saturating_add(Self::BATCH).min(self.file.len());
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
/// for the spans [`read_index`] makes).
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

/// Parses a descriptor from exactly its bytes, refusing ranks over the limit.
pub(crate) fn parse_descriptor(
    slice: &[u8],
    offset: u64,
    limits: &Limits,
) -> Result<TensorDescriptor, Error> {
    let (header, _) = read_from::<crate::schema::DescriptorHeader>(slice).map_err(|_| {
        Error::invalid(
            &rules::TD_HDR_LENGTH,
            offset,
            format!(
                "descriptor is {} bytes, shorter than its 20-byte header",
                slice.len()
            ),
        )
    })?;
    if header.magic != crate::schema::DESCRIPTOR_MAGIC {
        return Err(Error::invalid(
            &rules::TD_HDR_MAGIC,
            offset,
            format!(
                "descriptor magic is {:02x?}, expected \"HRRY\"",
                header.magic
            ),
        ));
    }
    if header.version_major != 1 {
        return Err(Error::invalid(
            &rules::TD_HDR_VERSION,
            offset + 4,
            format!(
                "descriptor version_major {} is not supported (1)",
                header.version_major
            ),
        ));
    }
    if header.rank > limits.max_rank.min(crate::schema::MAX_RANK) {
        return Err(Error::Limit {
            limit: "max_rank",
            value: header.rank.into(),
            max: limits.max_rank.min(crate::schema::MAX_RANK).into(),
            offset: offset + 16,
        });
    }
    read_from::<TensorDescriptor>(slice)
        .map(|(d, _)| d)
        .map_err(|e| {
            Error::invalid(
                &rules::TD_HDR_FIT,
                offset,
                format!(
                    "descriptor does not decode within its {} bytes: {e}",
                    slice.len()
                ),
            )
        })
}

/// Reads and checks the header and trailer.
fn read_frame(bytes: &[u8]) -> Result<(FileHeader, Trailer), Error> {
    let len = bytes.len() as u64;
    if bytes.len() < 8 || bytes[..8] != FILE_MAGIC {
        return Err(Error::NotHrry(crate::diagnose::describe(bytes)));
    }
    if len < FILE_HEADER_LEN + TRAILER_LEN {
        return Err(Error::invalid(
            &rules::HF_FILE_SIZE,
            0,
            format!("file is {len} bytes, shorter than a header and trailer (104): truncated"),
        ));
    }
    let (header, _) = read_from::<FileHeader>(bytes).map_err(|e| {
        Error::invalid(
            &rules::HF_HDR_MAGIC,
            0,
            format!("header does not decode: {e}"),
        )
    })?;
    if header.container_version_major != 1 {
        return Err(Error::invalid(
            &rules::HF_HDR_VERSION,
            header_offsets::VERSION_MAJOR,
            format!(
                "container_version_major {} is not supported (1)",
                header.container_version_major
            ),
        ));
    }
    let dba = header.data_buffer_alignment;
    if !dba.is_power_of_two() {
        return Err(Error::invalid(
            &rules::HF_HDR_ALIGN_POW2,
            header_offsets::DATA_BUFFER_ALIGNMENT,
            format!("data_buffer_alignment {dba} is not a power of two"),
        ));
    }
    let trailer_at = len - TRAILER_LEN;
    let (trailer, _) = read_from::<Trailer>(&bytes[trailer_at as usize..]).map_err(|e| {
        Error::invalid(
            &rules::HF_TRL_MAGIC,
            trailer_at,
            format!("trailer does not decode: {e}"),
        )
    })?;
    if trailer.trailer_magic != TRAILER_MAGIC {
        return Err(Error::invalid(
            &rules::HF_TRL_MAGIC,
            trailer_at + trailer_offsets::TRAILER_MAGIC,
            format!(
                "the last four bytes are {:02x?}, not \"HRRY\": the file is {len} bytes and looks truncated",
                trailer.trailer_magic
            ),
        ));
    }
    let index_end = trailer.index_offset.checked_add(trailer.index_length);
    if index_end.is_none_or(|end| end > trailer_at) || trailer.index_offset < FILE_HEADER_LEN {
        return Err(Error::invalid(
            &rules::HF_TRL_INDEX_BOUNDS,
            trailer_at + trailer_offsets::INDEX_OFFSET,
            match index_end {
                Some(end) if end > trailer_at => format!(
                    "file is {len} bytes; the trailer says the index ends at {end}, past the trailer at {trailer_at} (truncated or corrupt)"
                ),
                _ => format!(
                    "index_offset {} + index_length {} is outside the file",
                    trailer.index_offset, trailer.index_length
                ),
            },
        ));
    }
    Ok((header, trailer))
}

/// Verifies the CRC and decodes the index.
fn read_index(
    bytes: &[u8],
    header: &FileHeader,
    trailer: &Trailer,
    limits: &Limits,
    crc: Crc,
) -> Result<(String, Vec<IndexEntryOf<NameSpan>>), Error> {
    let trailer_at = bytes.len() as u64 - TRAILER_LEN;
    if trailer.index_length > limits.max_index_bytes {
        return Err(Error::Limit {
            limit: "max_index_bytes",
            value: trailer.index_length,
            max: limits.max_index_bytes,
            offset: trailer_at + trailer_offsets::INDEX_LENGTH,
        });
    }
    let index = slice_at(bytes, trailer.index_offset, trailer.index_length).unwrap_or_default();
    if header.file_flags.has_index_crc32c() && crc == Crc::Verify {
        let crc = crc32c::crc32c(index);
        if crc != trailer.index_crc32c {
            return Err(Error::invalid(
                &rules::HF_CRC_MATCH,
                trailer_at + trailer_offsets::INDEX_CRC32C,
                format!(
                    "index CRC-32C is {crc:#010x}, trailer says {:#010x}",
                    trailer.index_crc32c
                ),
            ));
        }
    }
    let count = index
        .get(..8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
        .ok_or_else(|| {
            Error::invalid(
                &rules::HF_IDX_DECODE,
                trailer.index_offset,
                format!("index is {} bytes, too short for its count", index.len()),
            )
        })?;
    if count > limits.max_tensors {
        return Err(Error::Limit {
            limit: "max_tensors",
            value: count,
            max: limits.max_tensors,
            offset: trailer.index_offset,
        });
    }
    if count.saturating_mul(MIN_INDEX_ENTRY_LEN) > trailer.index_length - 8 {
        return Err(Error::invalid(
            &rules::HF_IDX_DECODE,
            trailer.index_offset,
            format!(
                "index_entry_count {count} needs at least {} bytes, the index has {}",
                count.saturating_mul(MIN_INDEX_ENTRY_LEN).saturating_add(8),
                trailer.index_length
            ),
        ));
    }
    // Names are read as spans: no allocation per entry.
    let (mut section, _) = read_from::<IndexSectionOf<NameSpan>>(index).map_err(|e| {
        Error::invalid(
            &rules::HF_IDX_DECODE,
            trailer.index_offset,
            format!("index entries do not decode within index_length: {e}"),
        )
    })?;
    let names = gather_names(index, trailer.index_offset, &mut section.entries, limits)?;
    Ok((names, section.entries))
}

/// Copies every name of `entries` (spans into `index`, which sits at `index_offset`
/// in the file) into one string, checking each against the length limit and UTF-8,
/// and moves the spans to point into that string.
fn gather_names(
    index: &[u8],
    index_offset: u64,
    entries: &mut [IndexEntryOf<NameSpan>],
    limits: &Limits,
) -> Result<String, Error> {
    let total: u64 = entries.iter().map(|e| u64::from(e.name.len)).sum();
    let mut text = String::with_capacity(usize::try_from(total).unwrap_or(0).min(index.len()));
    for e in entries.iter_mut() {
        let name_at = index_offset.saturating_add(e.name.offset);
        if e.name.len > limits.max_name_length {
            return Err(Error::Limit {
                limit: "max_name_length",
                value: e.name.len.into(),
                max: limits.max_name_length.into(),
                offset: name_at.saturating_sub(2),
            });
        }
        let name = e.name.bytes_in(index).ok_or_else(|| {
            Error::invalid(
                &rules::HF_IDX_DECODE,
                name_at,
                format!("index name of {} bytes runs past index_length", e.name.len),
            )
        })?;
        let name = std::str::from_utf8(name).map_err(|_| {
            Error::invalid(
                &rules::HF_IDX_NAME_UTF8,
                name_at,
                format!("index name {name:02x?} is not UTF-8"),
            )
        })?;
        e.name.offset = text.len() as u64;
        text.push_str(name);
    }
    Ok(text)
}

/// Decodes the KV section, if the trailer declares one.
fn read_kv(bytes: &[u8], trailer: &Trailer, limits: &Limits) -> Result<Vec<KvEntry>, Error> {
    if trailer.kv_length == 0 {
        return Ok(Vec::new());
    }
    let at = bytes.len() as u64 - TRAILER_LEN + trailer_offsets::KV_OFFSET;
    if u64::from(trailer.kv_length) > limits.max_kv_bytes {
        return Err(Error::Limit {
            limit: "max_kv_bytes",
            value: trailer.kv_length.into(),
            max: limits.max_kv_bytes,
            offset: at + 8,
        });
    }
    let kv_end = trailer.kv_offset.checked_add(trailer.kv_length.into());
    let kv = match kv_end {
        Some(end) if end <= trailer.index_offset && trailer.kv_offset >= FILE_HEADER_LEN => {
            slice_at(bytes, trailer.kv_offset, trailer.kv_length.into())
        }
        _ => None,
    }
    .ok_or_else(|| {
        Error::invalid(
            &rules::HF_TRL_KV_BOUNDS,
            at,
            format!(
                "KV section ({} bytes at {}) is not between the tensor region and the index at {}",
                trailer.kv_length, trailer.kv_offset, trailer.index_offset
            ),
        )
    })?;
    let count = kv
        .get(..4)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap_or_default()))
        .unwrap_or(0);
    if count > limits.max_kv_entries {
        return Err(Error::Limit {
            limit: "max_kv_entries",
            value: count.into(),
            max: limits.max_kv_entries.into(),
            offset: trailer.kv_offset,
        });
    }
    let (section, _) = read_from::<KvSection>(kv).map_err(|e| {
        Error::invalid(
            &rules::HF_KV_DECODE,
            trailer.kv_offset,
            format!("KV entries do not decode within kv_length: {e}"),
        )
    })?;
    if let Some(e) = section
        .entries
        .iter()
        .find(|e| e.key.len() > usize::from(limits.max_name_length))
    {
        return Err(Error::Limit {
            limit: "max_name_length",
            value: e.key.len() as u64,
            max: limits.max_name_length.into(),
            offset: trailer.kv_offset,
        });
    }
    Ok(section.entries)
}

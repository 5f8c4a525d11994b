//! The single-pass HRRYFILE writer (file-format.md "Writer Protocol").

use std::collections::HashSet;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use crate::layout::dense::{TailWindow, UnusedTail};
use crate::model::build::dense;
use crate::model::element_count;
use crate::model::view::{le_bytes, Element};

use crate::schema::{
    placement::{align_up, place_buffers},
    to_bytes, FileFlags, FileHeader, IndexEntry, IndexSection, KvEntry, KvSection, KvValue,
    TensorDescriptor, Trailer, LAYOUT_COMPOSITE, TRAILER_MAGIC,
};

use super::{CopyFrom, Error, Output};

/// Choices for a new file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriterOptions {
    /// Alignment of every data buffer: a power of two from 4096 to 2 MiB.
    pub data_buffer_alignment: u32,
    /// Sort index entries by name bytes and set `SORTED_INDEX`.
    pub sorted_index: bool,
    /// Store the CRC-32C of the index and set `HAS_INDEX_CRC32C`.
    pub index_crc32c: bool,
    /// The tensor count to announce in the header, if known up front.
    pub tensor_count_hint: Option<u64>,
    /// Where the first descriptor starts: 64, or more to leave zeroed room after the
    /// header (a multiple of 8).
    pub first_descriptor_offset: u64,
    /// Pad after each tensor's last buffer to `data_buffer_alignment` instead of 8
    /// (both are accepted by readers; 8 keeps files smaller).
    pub pad_last_buffer_to_alignment: bool,
    /// Pad after a composite head to `data_buffer_alignment`, as some other writers
    /// do (the spec forbids it; strict validation reports it).
    pub pad_after_composite_heads: bool,
    /// Skip every consistency check on names, keys, options and descriptor lengths,
    /// so deliberately invalid files (the conformance corpus) can be produced.
    pub unchecked: bool,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            data_buffer_alignment: 4096,
            sorted_index: false,
            index_crc32c: true,
            tensor_count_hint: None,
            first_descriptor_offset: 64,
            pad_last_buffer_to_alignment: false,
            pad_after_composite_heads: false,
            unchecked: false,
        }
    }
}

/// Writes a HRRYFILE in one forward pass over any [`Write`]; it never seeks back.
///
/// KV entries added before the first tensor set `HAS_KV_METADATA` in the header;
/// later ones are still written (found through the trailer) with the flag clear,
/// since the header is already out.
///
/// # Examples
///
/// ```
/// use hrry::file::{HrryFile, HrryWriter, WriterOptions};
/// use hrry::model::{build::dense, ElementType};
///
/// let mut w = HrryWriter::new(Vec::new(), WriterOptions::default())?;
/// w.add_kv("model.name", "tiny")?;
/// w.add_kv("model.context", 2048u64)?;
/// // From a slice of Rust values: the element type comes from the slice.
/// w.write_row_major::<f32>("bias", &[4], &[0.0, 0.5, 1.0, 1.5])?;
/// // From a descriptor and its buffers, here packed int4 (two per byte).
/// let desc = dense(ElementType::Int4, &[4]).expect("fits");
/// w.write_tensor("codes", &desc, &[&[0x21, 0x43]])?;
/// // Writing the same name twice is refused, and the writer stays usable.
/// assert!(w.write_row_major::<f32>("bias", &[1], &[0.0]).is_err());
/// let bytes = w.finish()?;
///
/// let file = HrryFile::from_bytes(&bytes)?;
/// assert_eq!(file.len(), 2);
/// assert_eq!(file.tensor("codes")?.unwrap().buffers[0], [0x21, 0x43]);
/// # Ok::<(), hrry::file::Error>(())
/// ```
pub struct HrryWriter<W: Write> {
    sink: W,
    options: WriterOptions,
    position: u64,
    header_written: bool,
    kv: Vec<KvEntry>,
    kv_keys: HashSet<Vec<u8>>,
    kv_flag: bool,
    entries: Vec<IndexEntry>,
    names: HashSet<Vec<u8>>,
    open_composites: Vec<u32>,
    /// The tensor whose buffers are being written, if any.
    open: Option<OpenTensor>,
    /// Set when a streamed tensor failed after some of its bytes were written.
    poisoned: bool,
}

/// A tensor begun by [`HrryWriter::begin_tensor`] and not yet ended.
struct OpenTensor {
    name: Vec<u8>,
    /// Declared size of each buffer.
    sizes: Vec<u64>,
    /// Absolute offset of each buffer.
    offsets: Vec<u64>,
    /// The buffer being written.
    buffer: usize,
    /// Bytes written into it so far.
    written: u64,
    /// Where buffer 0's packing tail is, when it has one to check.
    tail: Option<TailWindow>,
    /// The bytes of that window seen so far.
    tail_bytes: Vec<u8>,
    /// A composite head (no buffers).
    is_head: bool,
    /// Its index entry, pushed when it ends.
    entry: IndexEntry,
}

impl HrryWriter<Output> {
    /// A writer to `path` as [`Output::create`] opens it (a regular file through a
    /// temporary file renamed on [`HrryWriter::finish_file`]).
    pub fn create(path: &Path, options: WriterOptions) -> Result<Self, Error> {
        Self::create_from(path, &[], options)
    }

    /// [`HrryWriter::create`] for a command reading `inputs`, which `path` must not
    /// be.
    pub fn create_from(
        path: &Path,
        inputs: &[&Path],
        options: WriterOptions,
    ) -> Result<Self, Error> {
        Self::new(Output::create(path, inputs)?, options)
    }

    /// Finishes the file and renames it into place.
    pub fn finish_file(self) -> Result<(), Error> {
        Ok(self.finish()?.commit()?)
    }
}

impl<W: Write> HrryWriter<W> {
    /// A writer over `sink`; fails on an invalid `data_buffer_alignment`.
    pub fn new(sink: W, options: WriterOptions) -> Result<Self, Error> {
        let a = options.data_buffer_alignment;
        if !options.unchecked && (!a.is_power_of_two() || !(4096..=2 << 20).contains(&a)) {
            return Err(Error::Write(format!(
                "data_buffer_alignment must be a power of two from 4096 to 2097152, got {a}"
            )));
        }
        let first = options.first_descriptor_offset;
        if !options.unchecked && (first < 64 || !first.is_multiple_of(8)) {
            return Err(Error::Write(format!(
                "first_descriptor_offset must be a multiple of 8 of at least 64, got {first}"
            )));
        }
        if !a.is_power_of_two() {
            return Err(Error::Write(format!(
                "data_buffer_alignment {a} is not a power of two, so buffers cannot be placed"
            )));
        }
        Ok(HrryWriter {
            sink,
            options,
            position: 0,
            header_written: false,
            kv: Vec::new(),
            kv_keys: HashSet::new(),
            kv_flag: false,
            entries: Vec::new(),
            names: HashSet::new(),
            open_composites: Vec::new(),
            open: None,
            poisoned: false,
        })
    }

    /// Adds a KV metadata entry; keys must be non-empty and unique. The value is a
    /// [`KvValue`] or anything that converts into one (`"text"`, `42`, `1.5`,
    /// `true`, `vec![1u8, 2]`, `vec!["a", "b"]`; see [`crate::model::kv`]).
    pub fn add_kv(&mut self, key: &str, value: impl Into<KvValue>) -> Result<(), Error> {
        let value = value.into();
        let key = key.as_bytes().to_vec();
        if self.options.unchecked {
            self.kv.push(KvEntry { key, value });
            return Ok(());
        }
        if key.is_empty() || key.len() > u16::MAX as usize {
            return Err(Error::Write(format!(
                "KV keys must be 1 to 65535 bytes, got {}",
                key.len()
            )));
        }
        if !self.kv_keys.insert(key.clone()) {
            return Err(Error::Write(format!(
                "duplicate KV key {:?}",
                String::from_utf8_lossy(&key)
            )));
        }
        self.kv.push(KvEntry { key, value });
        Ok(())
    }

    /// Writes one tensor: its descriptor, then its buffers (`buffers[i]` must hold
    /// exactly `descriptor.buffers[i].byte_size` bytes). The descriptor's
    /// `descriptor_length` must equal its encoded size (see
    /// [`TensorDescriptor::fix_length`]). Every check runs before a byte is written,
    /// so a refused tensor leaves the writer usable.
    pub fn write_tensor(
        &mut self,
        name: &str,
        descriptor: &TensorDescriptor,
        buffers: &[&[u8]],
    ) -> Result<(), Error> {
        if descriptor.buffers.len() != buffers.len() {
            return Err(Error::Write(format!(
                "tensor {name:?}: descriptor declares {} buffers, {} given",
                descriptor.buffers.len(),
                buffers.len()
            )));
        }
        for (i, (h, b)) in descriptor.buffers.iter().zip(buffers).enumerate() {
            if h.byte_size != b.len() as u64 {
                return Err(Error::Write(format!(
                    "tensor {name:?}: buffer {i} declares {} bytes, {} given",
                    h.byte_size,
                    b.len()
                )));
            }
        }
        if !self.options.unchecked {
            if let (Some(data), Some(window)) = (buffers.first(), TailWindow::of(descriptor)) {
                if let Some(tail) = window.check(window.bytes_of(data)) {
                    return Err(tail_error(name, tail));
                }
            }
        }
        self.begin_tensor(name, descriptor)?;
        for data in buffers {
            self.write_data(data)?;
        }
        self.end_tensor()
    }

    /// Writes a dense row-major tensor of `shape` whose values, in row-major order,
    /// are `data`: `w.write_row_major::<f32>("weights", &[2, 3], &values)`. The
    /// element type comes from `T` (see [`Element`]); `data` must hold exactly one
    /// value per element.
    pub fn write_row_major<T: Element>(
        &mut self,
        name: &str,
        shape: &[u64],
        data: &[T],
    ) -> Result<(), Error> {
        let count = element_count(shape);
        if count != Some(data.len() as u64) {
            return Err(Error::Write(match count {
                Some(n) => format!(
                    "tensor {name:?}: shape {shape:?} holds {n} elements, {} given",
                    data.len()
                ),
                None => format!("tensor {name:?}: shape {shape:?} has no fixed element count"),
            }));
        }
        let descriptor = dense(T::TYPE, shape).ok_or_else(|| {
            Error::Write(format!("tensor {name:?}: shape {shape:?} is too large"))
        })?;
        self.write_tensor(name, &descriptor, &[&le_bytes(data)])
    }

    /// Starts a tensor whose buffers are then given in pieces, in buffer-table
    /// order, by [`HrryWriter::write_data`] (and [`HrryWriter::copy_data`]), and
    /// closed by [`HrryWriter::end_tensor`]: peak memory stays at the size of a piece
    /// whatever the size of the tensor. Writes the descriptor now, after the checks of
    /// [`HrryWriter::write_tensor`] that need no data.
    ///
    /// A check that needs the data (byte counts, the packing tail of `TD-BUF-006`)
    /// can only fail once bytes are out: the writer then refuses every further call,
    /// and the caller abandons the output.
    pub fn begin_tensor(&mut self, name: &str, descriptor: &TensorDescriptor) -> Result<(), Error> {
        self.usable()?;
        let name_bytes = name.as_bytes();
        let checked = !self.options.unchecked;
        if name_bytes.len() > u16::MAX as usize || (checked && name_bytes.is_empty()) {
            return Err(Error::Write(format!(
                "tensor names must be 1 to 65535 bytes, got {}",
                name_bytes.len()
            )));
        }
        if checked && self.names.contains(name_bytes) {
            return Err(Error::Write(format!("duplicate tensor name {name:?}")));
        }
        if descriptor.buffers.len() > 255 {
            return Err(Error::Write(format!(
                "tensor {name:?}: {} buffers, at most 255",
                descriptor.buffers.len()
            )));
        }
        let encoded = to_bytes(descriptor);
        if checked && encoded.len() as u64 != u64::from(descriptor.descriptor_length) {
            return Err(Error::Write(format!(
                "tensor {name:?}: descriptor_length is {} but the descriptor encodes to {} bytes",
                descriptor.descriptor_length,
                encoded.len()
            )));
        }
        self.ensure_header()?;
        let descriptor_offset = self.position;
        let alignment = u64::from(self.options.data_buffer_alignment);
        let placement = descriptor_offset
            .checked_add(encoded.len() as u64)
            .and_then(|start| place_buffers(start, &descriptor.buffers, alignment))
            .ok_or_else(|| Error::Write("tensor data overflows a 64-bit offset".into()))?;
        self.emit(&encoded)?;
        self.open = Some(OpenTensor {
            name: name_bytes.to_vec(),
            sizes: descriptor.buffers.iter().map(|h| h.byte_size).collect(),
            offsets: placement.buffer_offsets.clone(),
            buffer: 0,
            written: 0,
            tail: TailWindow::of(descriptor).filter(|_| checked),
            tail_bytes: Vec::new(),
            is_head: descriptor.layout_tag == LAYOUT_COMPOSITE && descriptor.buffers.is_empty(),
            entry: IndexEntry {
                name: name_bytes.to_vec(),
                descriptor_offset,
                descriptor_length: descriptor.descriptor_length,
                data_offset: placement.data_offset,
                data_length: placement.data_length(),
                flags: 0,
            },
        });
        self.track_composite(descriptor);
        Ok(())
    }

    /// Appends `bytes` to the open tensor's buffers: they fill the current buffer,
    /// then the next ones (with the alignment padding between them written as they
    /// start). More bytes than the buffers declare is an error.
    pub fn write_data(&mut self, mut bytes: &[u8]) -> Result<(), Error> {
        while !bytes.is_empty() {
            let n = self.next_piece(bytes.len() as u64)? as usize;
            let (piece, rest) = bytes.split_at(n);
            self.keep_tail(piece);
            self.emit(piece)?;
            self.advance(n as u64);
            bytes = rest;
        }
        Ok(())
    }

    /// Closes the open tensor: every declared byte must have been given, and a
    /// sub-byte tensor's bits after its last element must be zero (`TD-BUF-006`).
    pub fn end_tensor(&mut self) -> Result<(), Error> {
        let open = self
            .open
            .take()
            .ok_or_else(|| Error::Write("no tensor is open".into()))?;
        let name = String::from_utf8_lossy(&open.name).into_owned();
        let given: u64 = open.sizes[..open.buffer].iter().sum::<u64>() + open.written;
        let declared: u64 = open.sizes.iter().sum();
        if given != declared {
            self.poisoned = true;
            return Err(Error::Write(format!(
                "tensor {name:?}: its buffers declare {declared} bytes, {given} given"
            )));
        }
        if let Some(tail) = open.tail.and_then(|w| w.check(&open.tail_bytes)) {
            self.poisoned = true;
            return Err(tail_error(&name, tail));
        }
        let tail = if (self.options.pad_last_buffer_to_alignment && !open.sizes.is_empty())
            || (self.options.pad_after_composite_heads && open.is_head)
        {
            u64::from(self.options.data_buffer_alignment)
        } else {
            8
        };
        // Trailing empty buffers still have their place.
        if let Some(&last) = open.offsets.last() {
            self.pad_to(last)?;
        }
        let end = align_up(self.position, tail)
            .ok_or_else(|| Error::Write("file overflows a 64-bit offset".into()))?;
        self.pad_to(end)?;
        self.names.insert(open.name);
        self.entries.push(open.entry);
        Ok(())
    }

    /// How many of the next `wanted` bytes fit in the current buffer (moving to the
    /// next non-full buffer and padding up to it first). An error, which leaves the
    /// writer unusable, when every buffer is full.
    fn next_piece(&mut self, wanted: u64) -> Result<u64, Error> {
        self.usable()?;
        let Some(open) = self.open.as_mut() else {
            return Err(Error::Write(
                "no tensor is open: call begin_tensor first".into(),
            ));
        };
        while open.buffer < open.sizes.len() && open.written == open.sizes[open.buffer] {
            open.buffer += 1;
            open.written = 0;
        }
        let Some(&size) = open.sizes.get(open.buffer) else {
            let name = String::from_utf8_lossy(&open.name).into_owned();
            self.poisoned = true;
            return Err(Error::Write(format!(
                "tensor {name:?}: more bytes given than its buffers declare"
            )));
        };
        let start = open.offsets[open.buffer];
        let room = size - open.written;
        if open.written == 0 {
            self.pad_to(start)?;
        }
        Ok(wanted.min(room))
    }

    /// Counts `n` bytes written into the current buffer.
    fn advance(&mut self, n: u64) {
        if let Some(open) = self.open.as_mut() {
            open.written += n;
        }
    }

    /// Keeps the bytes of `piece` (about to be written at the current place in the
    /// current buffer) that fall in buffer 0's packing-tail window.
    fn keep_tail(&mut self, piece: &[u8]) {
        if let Some(open) = self.open.as_mut() {
            if let (0, Some(w)) = (open.buffer, open.tail) {
                let (from, to) = window_overlap(w, open.written, piece.len() as u64);
                open.tail_bytes.extend_from_slice(&piece[from..to]);
            }
        }
    }

    /// Fails once a streamed tensor went wrong: the output is then unusable.
    fn usable(&self) -> Result<(), Error> {
        if self.poisoned {
            return Err(Error::Write(
                "an earlier tensor failed part-way; this output is unusable".into(),
            ));
        }
        Ok(())
    }

    /// Writes the KV section, the index and the trailer; returns the sink.
    /// Fails if a composite still waits for members.
    pub fn finish(mut self) -> Result<W, Error> {
        self.usable()?;
        if let Some(open) = &self.open {
            return Err(Error::Write(format!(
                "tensor {:?} was begun but not ended",
                String::from_utf8_lossy(&open.name)
            )));
        }
        if let (Some(left), false) = (self.open_composites.last(), self.options.unchecked) {
            return Err(Error::Write(format!(
                "a composite still expects {left} more member(s)"
            )));
        }
        self.ensure_header()?;
        let mut trailer = Trailer {
            trailer_magic: TRAILER_MAGIC,
            ..Trailer::default()
        };
        if !self.kv.is_empty() {
            let kv = to_bytes(&KvSection {
                entries: std::mem::take(&mut self.kv),
            });
            trailer.kv_offset = self.position;
            trailer.kv_length = u32::try_from(kv.len())
                .map_err(|_| Error::Write("KV section exceeds 4 GiB".into()))?;
            self.emit(&kv)?;
            let end = align_up(self.position, 8).unwrap_or(self.position);
            self.pad_to(end)?;
        }
        let mut entries = std::mem::take(&mut self.entries);
        if self.options.sorted_index {
            entries.sort_by(|a, b| a.name.cmp(&b.name));
        }
        let index = to_bytes(&IndexSection { entries });
        trailer.index_offset = self.position;
        trailer.index_length = index.len() as u64;
        if self.options.index_crc32c {
            trailer.index_crc32c = crc32c::crc32c(&index);
        }
        self.emit(&index)?;
        self.emit(&to_bytes(&trailer))?;
        self.sink.flush()?;
        Ok(self.sink)
    }

    fn ensure_header(&mut self) -> Result<(), Error> {
        if self.header_written {
            return Ok(());
        }
        self.kv_flag = !self.kv.is_empty();
        let header = FileHeader {
            container_version_major: 1,
            container_version_minor: 0,
            reserved: [0; 2],
            file_flags: FileFlags::new()
                .with_has_kv_metadata(self.kv_flag)
                .with_sorted_index(self.options.sorted_index)
                .with_has_index_crc32c(self.options.index_crc32c),
            data_buffer_alignment: self.options.data_buffer_alignment,
            first_descriptor_offset: self.options.first_descriptor_offset,
            tensor_count_hint: self.options.tensor_count_hint.unwrap_or(u64::MAX),
            reserved_header: [0; 28],
        };
        self.emit(&to_bytes(&header))?;
        self.pad_to(self.options.first_descriptor_offset)?;
        self.header_written = true;
        Ok(())
    }

    /// Counts this tensor against the innermost open composite and opens a new one
    /// when it is a head (members follow in pre-order).
    fn track_composite(&mut self, descriptor: &TensorDescriptor) {
        if let Some(left) = self.open_composites.last_mut() {
            *left = left.saturating_sub(1);
        }
        if descriptor.layout_tag == LAYOUT_COMPOSITE {
            if let crate::schema::LayoutFields::Composite(c) = &descriptor.layout {
                self.open_composites.push(c.member_count);
            }
        }
        while self.open_composites.last() == Some(&0) {
            self.open_composites.pop();
        }
    }

    fn emit(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.sink.write_all(bytes)?;
        self.position += bytes.len() as u64;
        Ok(())
    }

    fn pad_to(&mut self, target: u64) -> Result<(), Error> {
        const ZEROS: [u8; 4096] = [0; 4096];
        while self.position < target {
            let n = (target - self.position).min(ZEROS.len() as u64) as usize;
            self.emit(&ZEROS[..n])?;
        }
        Ok(())
    }
}

impl<W: CopyFrom> HrryWriter<W> {
    /// Like [`HrryWriter::write_data`] with the `len` bytes of `file` at `offset`,
    /// which the sink may copy without passing them through memory
    /// (`copy_file_range`). Moves `file`'s cursor.
    pub fn copy_data(&mut self, file: &File, offset: u64, len: u64) -> Result<(), Error> {
        let mut done = 0u64;
        while done < len {
            let n = self.next_piece(len - done)?;
            let at = offset
                .checked_add(done)
                .ok_or_else(|| Error::Write("source offset overflows".into()))?;
            // The packing-tail window (at most 3 bytes) is read, the rest copied.
            let window = self.open.as_ref().and_then(|o| match (o.buffer, o.tail) {
                (0, Some(w)) => Some(window_overlap(w, o.written, n)),
                _ => None,
            });
            match window {
                Some((from, to)) if from < to => {
                    let (from, to) = (from as u64, to as u64);
                    self.copy_piece(file, at, from)?;
                    let mut bytes = vec![0u8; (to - from) as usize];
                    let mut reader = file;
                    reader.seek(SeekFrom::Start(at + from))?;
                    reader.read_exact(&mut bytes)?;
                    self.keep_tail(&bytes);
                    self.emit(&bytes)?;
                    self.advance(to - from);
                    self.copy_piece(file, at + to, n - to)?;
                }
                _ => self.copy_piece(file, at, n)?,
            }
            done += n;
        }
        Ok(())
    }

    /// Copies `len` bytes of `file` at `offset` into the current buffer.
    fn copy_piece(&mut self, file: &File, offset: u64, len: u64) -> Result<(), Error> {
        if len == 0 {
            return Ok(());
        }
        if let Err(e) = self.sink.copy_from(file, offset, len) {
            // Some bytes may be out: the position is no longer known.
            self.poisoned = true;
            return Err(e.into());
        }
        self.position += len;
        self.advance(len);
        Ok(())
    }
}

/// The part `[from, to)` of a piece of `len` bytes, written `written` bytes into
/// buffer 0, that falls in the packing-tail window `w`.
fn window_overlap(w: TailWindow, written: u64, len: u64) -> (usize, usize) {
    let end = written.saturating_add(len);
    let from = w.start.clamp(written, end) - written;
    let to = w.end().clamp(written, end) - written;
    (from as usize, to as usize)
}

/// The error for a tensor whose bits after its last packed element are not zero:
/// the file would break `TD-BUF-006`.
fn tail_error(name: &str, tail: UnusedTail) -> Error {
    Error::Write(format!(
        "tensor {name:?}, byte {} of buffer 0: {tail} (TD-BUF-006)",
        tail.byte_index
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::build::dense;
    use crate::model::ElementType;
    use crate::quant::quantize::quantized_descriptor;

    /// Three tensors: float32 [5, 3], int4 [7] (a packing tail) and a two-buffer
    /// quantized one, with their buffers.
    fn tensors() -> Vec<(String, TensorDescriptor, Vec<Vec<u8>>)> {
        let f32s: Vec<u8> = (0..60u8).collect();
        let int4 = vec![0x21, 0x43, 0x65, 0x07];
        let q = quantized_descriptor(
            ElementType::Int8.tag(),
            &[2, 32],
            &[64, 4],
            crate::schema::QuantScheme::PerBlockAffine(crate::schema::PerBlockAffine::version1(
                1,
                32,
                ElementType::Float16.tag(),
                true,
            )),
        );
        vec![
            (
                "f".into(),
                dense(ElementType::Float32, &[5, 3]).unwrap(),
                vec![f32s],
            ),
            (
                "i".into(),
                dense(ElementType::Int4, &[7]).unwrap(),
                vec![int4],
            ),
            (
                "q".into(),
                q,
                vec![(0..64u8).collect(), vec![0x00, 0x3C, 0x00, 0x40]],
            ),
        ]
    }

    fn whole() -> Vec<u8> {
        let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).unwrap();
        for (name, d, bufs) in tensors() {
            let slices: Vec<&[u8]> = bufs.iter().map(Vec::as_slice).collect();
            w.write_tensor(&name, &d, &slices).unwrap();
        }
        w.finish().unwrap()
    }

    #[test]
    fn pieces_and_copies_write_the_same_bytes_as_whole_buffers() {
        let want = whole();
        for piece in [1usize, 3, 7, 64, 1000] {
            let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).unwrap();
            for (name, d, bufs) in tensors() {
                w.begin_tensor(&name, &d).unwrap();
                let all: Vec<u8> = bufs.concat();
                for p in all.chunks(piece) {
                    w.write_data(p).unwrap();
                }
                w.end_tensor().unwrap();
            }
            assert_eq!(w.finish().unwrap(), want, "pieces of {piece}");
        }
        // From a file, copied in pieces that split the int4 tail window.
        let mut src = tempfile::tempfile().unwrap();
        let mut offsets = Vec::new();
        for (_, _, bufs) in tensors() {
            offsets.push(src.stream_position().unwrap() + 5);
            src.write_all(b"junk!").unwrap();
            src.write_all(&bufs.concat()).unwrap();
        }
        for piece in [1u64, 2, 1000] {
            let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).unwrap();
            for ((name, d, bufs), &at) in tensors().iter().zip(&offsets) {
                w.begin_tensor(name, d).unwrap();
                let len: u64 = bufs.iter().map(|b| b.len() as u64).sum();
                let mut done = 0;
                while done < len {
                    let n = piece.min(len - done);
                    w.copy_data(&src, at + done, n).unwrap();
                    done += n;
                }
                w.end_tensor().unwrap();
            }
            assert_eq!(w.finish().unwrap(), want, "copies of {piece}");
        }
    }

    #[test]
    fn streamed_tensors_keep_the_checks() {
        let int4 = dense(ElementType::Int4, &[7]).unwrap();
        let bad_tail = [0x21, 0x43, 0x65, 0x17];
        // Whole buffers: refused before a byte is written; the writer stays usable.
        let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).unwrap();
        let e = w.write_tensor("i", &int4, &[&bad_tail]).unwrap_err();
        assert!(e.to_string().contains("TD-BUF-006"), "{e}");
        w.write_tensor("i", &int4, &[&[0x21, 0x43, 0x65, 0x07]])
            .unwrap();
        // In pieces: refused at the end, and nothing more is accepted.
        w.begin_tensor("j", &int4).unwrap();
        w.write_data(&bad_tail[..3]).unwrap();
        w.write_data(&bad_tail[3..]).unwrap();
        let e = w.end_tensor().unwrap_err();
        assert!(e.to_string().contains("byte 3 of buffer 0"), "{e}");
        assert!(w.begin_tensor("k", &int4).is_err());
        assert!(w.finish().is_err());
        // Copied from a file: the window bytes are read and judged too.
        let mut src = tempfile::tempfile().unwrap();
        src.write_all(&bad_tail).unwrap();
        let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).unwrap();
        w.begin_tensor("i", &int4).unwrap();
        w.copy_data(&src, 0, 4).unwrap();
        assert!(w.end_tensor().is_err());

        // Too many bytes, too few, nothing open, a tensor left open.
        let f = dense(ElementType::Float32, &[2]).unwrap();
        let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).unwrap();
        assert!(w.write_data(&[1]).is_err());
        let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).unwrap();
        w.begin_tensor("f", &f).unwrap();
        let e = w.write_data(&[0; 9]).unwrap_err();
        assert!(e.to_string().contains("more bytes"), "{e}");
        let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).unwrap();
        w.begin_tensor("f", &f).unwrap();
        w.write_data(&[0; 7]).unwrap();
        let e = w.end_tensor().unwrap_err();
        assert!(e.to_string().contains("8 bytes, 7 given"), "{e}");
        let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).unwrap();
        w.begin_tensor("f", &f).unwrap();
        assert!(w.finish().is_err());
        // A copy past the end of the source fails and leaves the writer unusable.
        let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).unwrap();
        w.begin_tensor("f", &f).unwrap();
        assert!(w.copy_data(&src, 0, 8).is_err());
        assert!(w.write_data(&[0; 4]).is_err());
    }
}

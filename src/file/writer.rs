//! The single-pass HRRYFILE writer (file-format.md "Writer Protocol").

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

use crate::schema::{
    placement::{align_up, place_buffers},
    to_bytes, FileFlags, FileHeader, IndexEntry, IndexSection, KvEntry, KvSection, KvValue,
    TensorDescriptor, Trailer, LAYOUT_COMPOSITE, TRAILER_MAGIC,
};

use super::{AtomicFile, Error};

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
    pending: Option<Pending>,
}

/// The tensor being written in pieces.
struct Pending {
    name: String,
    descriptor: TensorDescriptor,
    descriptor_offset: u64,
    placement: crate::schema::placement::DataPlacement,
    /// The buffer the next byte goes to, and how many of its bytes are written.
    buffer: usize,
    written: u64,
    /// Bytes of buffer 0 the `TD-BUF-006` check needs, and those seen so far.
    tail_range: std::ops::Range<u64>,
    tail: Vec<u8>,
}

impl Pending {
    /// Keeps the bytes of `piece` (the next bytes of buffer 0) that fall in
    /// `tail_range`.
    fn keep_tail(&mut self, piece: &[u8]) {
        let from = self.written.max(self.tail_range.start);
        let to = (self.written + piece.len() as u64).min(self.tail_range.end);
        if from < to {
            let at = (from - self.written) as usize;
            self.tail
                .extend_from_slice(&piece[at..at + (to - from) as usize]);
        }
    }
}

impl HrryWriter<AtomicFile> {
    /// A writer to `path` through a temporary file renamed on [`HrryWriter::finish_file`].
    pub fn create(path: &Path, options: WriterOptions) -> Result<Self, Error> {
        Self::new(AtomicFile::create(path)?, options)
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
            return Err(Error::Usage(format!(
                "data_buffer_alignment must be a power of two from 4096 to 2097152, got {a}"
            )));
        }
        let first = options.first_descriptor_offset;
        if !options.unchecked && (first < 64 || !first.is_multiple_of(8)) {
            return Err(Error::Usage(format!(
                "first_descriptor_offset must be a multiple of 8 of at least 64, got {first}"
            )));
        }
        if !a.is_power_of_two() {
            return Err(Error::Usage(format!(
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
            pending: None,
        })
    }

    /// Adds a KV metadata entry; keys must be non-empty and unique.
    pub fn add_kv(&mut self, key: &str, value: KvValue) -> Result<(), Error> {
        let key = key.as_bytes().to_vec();
        if self.options.unchecked {
            self.kv.push(KvEntry { key, value });
            return Ok(());
        }
        if key.is_empty() || key.len() > u16::MAX as usize {
            return Err(Error::Usage(format!(
                "KV keys must be 1 to 65535 bytes, got {}",
                key.len()
            )));
        }
        if !self.kv_keys.insert(key.clone()) {
            return Err(Error::Usage(format!(
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
    /// [`TensorDescriptor::fix_length`]).
    pub fn write_tensor(
        &mut self,
        name: &str,
        descriptor: &TensorDescriptor,
        buffers: &[&[u8]],
    ) -> Result<(), Error> {
        if descriptor.buffers.len() != buffers.len() {
            return Err(Error::Usage(format!(
                "tensor {name:?}: descriptor declares {} buffers, {} given",
                descriptor.buffers.len(),
                buffers.len()
            )));
        }
        for (i, (h, b)) in descriptor.buffers.iter().zip(buffers).enumerate() {
            if h.byte_size != b.len() as u64 {
                return Err(Error::Usage(format!(
                    "tensor {name:?}: buffer {i} declares {} bytes, {} given",
                    h.byte_size,
                    b.len()
                )));
            }
        }
        self.begin_tensor(name, descriptor)?;
        for b in buffers {
            self.write_data(b)?;
        }
        self.end_tensor()
    }

    /// Starts a tensor whose buffers arrive in pieces: write its buffers' bytes, back
    /// to back in buffer-table order, with [`HrryWriter::write_data`] (the writer
    /// places each at its aligned offset), then call [`HrryWriter::end_tensor`].
    /// Only a few bytes of the data are held, whatever its size. The descriptor's
    /// `descriptor_length` must equal its encoded size.
    pub fn begin_tensor(&mut self, name: &str, descriptor: &TensorDescriptor) -> Result<(), Error> {
        if self.pending.is_some() {
            return Err(Error::Usage(format!(
                "tensor {name:?} started before the previous one ended"
            )));
        }
        let name_bytes = name.as_bytes();
        let checked = !self.options.unchecked;
        if name_bytes.len() > u16::MAX as usize || (checked && name_bytes.is_empty()) {
            return Err(Error::Usage(format!(
                "tensor names must be 1 to 65535 bytes, got {}",
                name_bytes.len()
            )));
        }
        if checked && self.names.contains(name_bytes) {
            return Err(Error::Usage(format!("duplicate tensor name {name:?}")));
        }
        if descriptor.buffers.len() > 255 {
            return Err(Error::Usage(format!(
                "tensor {name:?}: {} buffers, at most 255 fit the buffer table",
                descriptor.buffers.len()
            )));
        }
        let encoded = to_bytes(descriptor);
        if checked && encoded.len() as u64 != u64::from(descriptor.descriptor_length) {
            return Err(Error::Usage(format!(
                "tensor {name:?}: descriptor_length is {} but the descriptor encodes to {} bytes",
                descriptor.descriptor_length,
                encoded.len()
            )));
        }
        self.ensure_header()?;
        let descriptor_offset = self.position;
        self.emit(&encoded)?;
        let alignment = u64::from(self.options.data_buffer_alignment);
        let placement = place_buffers(self.position, &descriptor.buffers, alignment)
            .ok_or_else(|| Error::Usage("tensor data overflows a 64-bit offset".into()))?;
        let tail_range = if checked {
            crate::layout::dense::unused_tail_range(descriptor)
        } else {
            0..0
        };
        self.pending = Some(Pending {
            name: name.to_string(),
            descriptor: descriptor.clone(),
            descriptor_offset,
            placement,
            buffer: 0,
            written: 0,
            tail_range,
            tail: Vec::new(),
        });
        Ok(())
    }

    /// Writes the next bytes of the tensor begun with [`HrryWriter::begin_tensor`];
    /// a piece may span buffers. Fails on more bytes than the buffers declare.
    pub fn write_data(&mut self, mut bytes: &[u8]) -> Result<(), Error> {
        let Some(mut p) = self.pending.take() else {
            return Err(Error::Usage("write_data without begin_tensor".into()));
        };
        let result = (|| {
            while !bytes.is_empty() {
                let sizes = &p.descriptor.buffers;
                while p.buffer < sizes.len() && p.written == sizes[p.buffer].byte_size {
                    p.buffer += 1;
                    p.written = 0;
                }
                let Some(handle) = sizes.get(p.buffer) else {
                    return Err(Error::Usage(format!(
                        "tensor {:?}: {} bytes more than its buffers declare",
                        p.name,
                        bytes.len()
                    )));
                };
                if p.written == 0 {
                    self.pad_to(p.placement.buffer_offsets[p.buffer])?;
                }
                let n = (handle.byte_size - p.written).min(bytes.len() as u64) as usize;
                let (now, rest) = bytes.split_at(n);
                if p.buffer == 0 {
                    p.keep_tail(now);
                }
                self.emit(now)?;
                p.written += n as u64;
                bytes = rest;
            }
            Ok(())
        })();
        self.pending = Some(p);
        result
    }

    /// Ends the tensor begun with [`HrryWriter::begin_tensor`]: every declared byte
    /// must have been written. In checked mode, refuses a row- or column-major,
    /// unquantized sub-byte tensor whose bits after the last packed element are not
    /// zero (the file would break `TD-BUF-006`).
    pub fn end_tensor(&mut self) -> Result<(), Error> {
        let Some(p) = self.pending.take() else {
            return Err(Error::Usage("end_tensor without begin_tensor".into()));
        };
        let sizes = &p.descriptor.buffers;
        let missing: u64 = sizes
            .iter()
            .enumerate()
            .skip(p.buffer)
            .map(|(i, h)| h.byte_size - if i == p.buffer { p.written } else { 0 })
            .sum();
        if missing != 0 {
            return Err(Error::Usage(format!(
                "tensor {:?}: {missing} bytes of its buffers were not written",
                p.name
            )));
        }
        if let Some(tail) =
            crate::layout::dense::nonzero_unused_tail_in(&p.descriptor, p.tail_range.start, &p.tail)
                .filter(|_| !p.tail_range.is_empty())
        {
            return Err(Error::Usage(format!(
                "tensor {:?}, byte {} of buffer 0: {tail} (TD-BUF-006)",
                p.name, tail.byte_index
            )));
        }
        // Trailing empty buffers still sit at aligned offsets (a no-op otherwise).
        if let Some(&last) = p.placement.buffer_offsets.last() {
            self.pad_to(last)?;
        }
        let alignment = u64::from(self.options.data_buffer_alignment);
        let is_head = p.descriptor.layout_tag == LAYOUT_COMPOSITE && sizes.is_empty();
        let tail = if (self.options.pad_last_buffer_to_alignment && !sizes.is_empty())
            || (self.options.pad_after_composite_heads && is_head)
        {
            alignment
        } else {
            8
        };
        let end = align_up(self.position, tail)
            .ok_or_else(|| Error::Usage("file overflows a 64-bit offset".into()))?;
        self.pad_to(end)?;

        self.track_composite(&p.descriptor);
        let name_bytes = p.name.into_bytes();
        self.names.insert(name_bytes.clone());
        self.entries.push(IndexEntry {
            name: name_bytes,
            descriptor_offset: p.descriptor_offset,
            descriptor_length: p.descriptor.descriptor_length,
            data_offset: p.placement.data_offset,
            data_length: p.placement.data_length(),
            flags: 0,
        });
        Ok(())
    }

    /// Writes the KV section, the index and the trailer; returns the sink.
    /// Fails if a composite still waits for members.
    pub fn finish(mut self) -> Result<W, Error> {
        if let Some(p) = &self.pending {
            return Err(Error::Usage(format!(
                "tensor {:?} was begun but not ended",
                p.name
            )));
        }
        if let (Some(left), false) = (self.open_composites.last(), self.options.unchecked) {
            return Err(Error::Usage(format!(
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
                .map_err(|_| Error::Usage("KV section exceeds 4 GiB".into()))?;
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

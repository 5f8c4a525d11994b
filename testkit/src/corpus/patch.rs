//! Byte surgery on well-formed files, used to build invalid corpus cases that break
//! exactly one rule. Inputs are files this crate wrote, so failures here are bugs in
//! the generator and panic with a message.

use hrry::file::{HrryFile, HrryWriter, WriterOptions};
use hrry::layout::dense::clear_unused_tail;
use hrry::schema::{
    read_from, to_bytes, IndexEntry, IndexSection, QuantizationSection, TensorDescriptor, Trailer,
    TRAILER_LEN,
};

/// One tensor to write: name, descriptor and buffers.
pub struct Item {
    /// Tensor name.
    pub name: String,
    /// Its descriptor (`descriptor_length` already fixed).
    pub descriptor: TensorDescriptor,
    /// Its buffers.
    pub buffers: Vec<Vec<u8>>,
}

impl Item {
    /// An item whose buffers are filled with a deterministic byte pattern of the
    /// descriptor's sizes (the bits after the last packed sub-byte element of a
    /// row- or column-major tensor cleared, as element-types.md requires).
    pub fn patterned(name: &str, descriptor: TensorDescriptor) -> Self {
        let mut buffers: Vec<Vec<u8>> = descriptor
            .buffers
            .iter()
            .enumerate()
            .map(|(b, h)| {
                (0..h.byte_size)
                    .map(|i| (i as u8).wrapping_mul(31).wrapping_add(b as u8 * 7 + 1))
                    .collect()
            })
            .collect();
        if let Some(first) = buffers.first_mut() {
            clear_unused_tail(&descriptor, first);
        }
        Item {
            name: name.to_string(),
            descriptor,
            buffers,
        }
    }
}

/// Writes `items` and `kv` with `options`.
pub fn write(
    options: WriterOptions,
    kv: &[(&str, hrry::schema::KvValue)],
    items: &[Item],
) -> Vec<u8> {
    let mut w = HrryWriter::new(Vec::new(), options).expect("corpus writer options");
    for (k, v) in kv {
        w.add_kv(k, v.clone()).expect("corpus KV");
    }
    for it in items {
        let bufs: Vec<&[u8]> = it.buffers.iter().map(Vec::as_slice).collect();
        w.write_tensor(&it.name, &it.descriptor, &bufs)
            .expect("corpus tensor");
    }
    w.finish().expect("corpus finish")
}

/// A file holding the one tensor `descriptor` (named `name`) with `buffers`, written
/// without the writer's own checks so that broken descriptors can be written.
pub fn write_one(name: &str, descriptor: TensorDescriptor, buffers: Vec<Vec<u8>>) -> Vec<u8> {
    let item = Item {
        name: name.to_string(),
        descriptor,
        buffers,
    };
    let options = WriterOptions {
        unchecked: true,
        ..WriterOptions::default()
    };
    write(options, &[], &[item])
}

/// Overwrites bytes of `d`'s quantization descriptor at `offset` (it must have one).
pub fn put_quantization(d: &mut TensorDescriptor, offset: u64, data: &[u8]) {
    edit_quantization(d, |bytes| put(bytes, offset, data));
}

/// Edits the bytes of `d`'s quantization descriptor (it must have one; their length
/// may change) and decodes the section again from the result, as a reader would.
pub fn edit_quantization(d: &mut TensorDescriptor, edit: impl FnOnce(&mut Vec<u8>)) {
    let q = d.quantization.as_mut().expect("quantized");
    let mut bytes = q.bytes().to_vec();
    edit(&mut bytes);
    *q = QuantizationSection::from_bytes(bytes);
}

/// Little-endian bytes of `values`.
pub fn f32s(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Little-endian bytes of `values`.
pub fn i32s(values: &[i32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Little-endian bytes of `values`.
pub fn u32s(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Overwrites bytes at `offset`.
pub fn put(bytes: &mut [u8], offset: u64, data: &[u8]) {
    let at = offset as usize;
    bytes[at..at + data.len()].copy_from_slice(data);
}

/// The trailer of `bytes`.
pub fn trailer(bytes: &[u8]) -> Trailer {
    read_from::<Trailer>(&bytes[bytes.len() - TRAILER_LEN as usize..])
        .expect("trailer")
        .0
}

/// Absolute offset of the trailer.
pub fn trailer_at(bytes: &[u8]) -> u64 {
    bytes.len() as u64 - TRAILER_LEN
}

/// Rewrites the trailer.
pub fn set_trailer(bytes: &mut [u8], t: &Trailer) {
    let at = trailer_at(bytes);
    put(bytes, at, &to_bytes(t));
}

/// Recomputes `index_crc32c` when the file's flag asks for it.
pub fn fix_crc(bytes: &mut [u8]) {
    let mut t = trailer(bytes);
    let flags = u32::from_le_bytes(bytes[12..16].try_into().expect("flags"));
    if flags & 4 != 0 {
        let start = t.index_offset as usize;
        t.index_crc32c = crc32c::crc32c(&bytes[start..start + t.index_length as usize]);
        set_trailer(bytes, &t);
    }
}

/// Index entries with their absolute offsets.
pub fn index_entries(bytes: &[u8]) -> Vec<(u64, IndexEntry)> {
    let t = trailer(bytes);
    let mut pos = t.index_offset + 8;
    let (section, _) =
        read_from::<IndexSection>(&bytes[t.index_offset as usize..]).expect("index decodes");
    section
        .entries
        .into_iter()
        .map(|e| {
            let at = pos;
            pos += e.encoded_len();
            (at, e)
        })
        .collect()
}

/// Decodes the index, lets `edit` change it (the encoded bytes may follow with
/// `extra` appended inside index_length), re-encodes it in place and fixes the
/// trailer and CRC.
pub fn edit_index(bytes: &[u8], edit: impl FnOnce(&mut Vec<IndexEntry>), extra: &[u8]) -> Vec<u8> {
    let t = trailer(bytes);
    let mut entries: Vec<IndexEntry> = index_entries(bytes).into_iter().map(|(_, e)| e).collect();
    edit(&mut entries);
    let mut index = to_bytes(&IndexSection { entries });
    index.extend_from_slice(extra);
    let mut out = bytes[..t.index_offset as usize].to_vec();
    out.extend_from_slice(&index);
    let mut t2 = t.clone();
    t2.index_length = index.len() as u64;
    out.extend_from_slice(&to_bytes(&t2));
    fix_crc(&mut out);
    out
}

/// Inserts `n` zero bytes at `at`, which must lie after the last tensor, shifting
/// the KV and index offsets in the trailer that follow it.
pub fn insert_after_tensors(bytes: &[u8], at: u64, n: u64) -> Vec<u8> {
    let mut out = bytes[..at as usize].to_vec();
    out.extend(std::iter::repeat_n(0u8, n as usize));
    out.extend_from_slice(&bytes[at as usize..]);
    let mut t = trailer(&out);
    if t.kv_offset >= at && t.kv_length != 0 {
        t.kv_offset += n;
    }
    if t.index_offset >= at {
        t.index_offset += n;
    }
    set_trailer(&mut out, &t);
    fix_crc(&mut out);
    out
}

/// Absolute offset of the descriptor of the tensor named `name`.
pub fn descriptor_offset(bytes: &[u8], name: &str) -> u64 {
    let f = HrryFile::from_bytes(bytes).expect("corpus file opens");
    let e = f.find(name).expect("tensor present");
    e.index_entry().descriptor_offset
}

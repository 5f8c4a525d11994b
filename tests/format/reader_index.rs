//! The random-access reader's index: names kept as spans into the index section,
//! lookup by name on sorted and unsorted indexes, and the batched descriptor listing.

use hrry::file::{HrryFile, HrryWriter, WriterOptions};
use hrry::schema::{
    read_from, to_bytes, IndexEntry, IndexEntryOf, IndexSection, IndexSectionOf, LayoutFields,
    NameSpan, TensorDescriptor, Trailer, LAYOUT_ROW_MAJOR, TRAILER_LEN,
};

fn descriptor(type_tag: u8, shape: &[u64], byte_size: u64) -> TensorDescriptor {
    hrry::model::build::descriptor(
        type_tag,
        LAYOUT_ROW_MAJOR,
        shape,
        LayoutFields::Implicit,
        &[byte_size],
    )
}

/// Tensor `i`: a name that does not sort in writing order, a float32 or int8 tensor
/// of rank 1 to 3.
fn tensor(i: usize) -> (String, TensorDescriptor, Vec<u8>) {
    let name = format!("layer.{}.w{}", (i * 7) % 23, i);
    let d = match i % 3 {
        0 => descriptor(0x03, &[4, 8], 128),
        1 => descriptor(0x10, &[2, 3, 5], 30),
        _ => descriptor(0x03, &[i as u64 + 1], 4 * (i as u64 + 1)),
    };
    let data = vec![i as u8; d.buffers[0].byte_size as usize];
    (name, d, data)
}

fn file(n: usize, sorted_index: bool, index_crc32c: bool) -> Vec<u8> {
    let options = WriterOptions {
        sorted_index,
        index_crc32c,
        ..WriterOptions::default()
    };
    let mut w = HrryWriter::new(Vec::new(), options).expect("options");
    for i in 0..n {
        let (name, d, data) = tensor(i);
        w.write_tensor(&name, &d, &[&data]).expect("write");
    }
    w.finish().expect("finish")
}

fn trailer(bytes: &[u8]) -> Trailer {
    read_from::<Trailer>(&bytes[bytes.len() - TRAILER_LEN as usize..])
        .expect("trailer")
        .0
}

#[test]
fn name_spans_decode_like_name_bytes() {
    let bytes = file(40, false, true);
    let t = trailer(&bytes);
    let index = &bytes[t.index_offset as usize..(t.index_offset + t.index_length) as usize];
    let (owned, used_owned) = read_from::<IndexSection>(index).expect("owned");
    let (spans, used_spans) = read_from::<IndexSectionOf<NameSpan>>(index).expect("spans");
    assert_eq!(used_owned, t.index_length);
    assert_eq!(used_spans, t.index_length);
    assert_eq!(owned.entries.len(), 40);
    assert_eq!(spans.entries.len(), 40);
    let mut expected_offset = 8 + 2;
    for (o, s) in owned.entries.iter().zip(&spans.entries) {
        assert_eq!(s.name.offset, expected_offset);
        assert_eq!(s.name.bytes_in(index), Some(o.name.as_slice()));
        assert_eq!(s.encoded_len(), o.encoded_len());
        assert_eq!(
            (
                s.descriptor_offset,
                s.descriptor_length,
                s.data_offset,
                s.data_length,
                s.flags
            ),
            (
                o.descriptor_offset,
                o.descriptor_length,
                o.data_offset,
                o.data_length,
                o.flags
            )
        );
        expected_offset += o.encoded_len();
    }
    // The owned form writes back the same bytes; a span holds none, so it refuses.
    assert_eq!(to_bytes(&owned), index);
    let mut out = binrw::io::Cursor::new(Vec::new());
    assert!(binrw::BinWrite::write_le(&spans, &mut out).is_err());
}

#[test]
fn a_name_running_past_the_input_is_refused_by_both_forms() {
    let entry = IndexEntry {
        name: b"weights".to_vec(),
        descriptor_offset: 64,
        descriptor_length: 100,
        data_offset: 4096,
        data_length: 128,
        flags: 0,
    };
    let bytes = to_bytes(&entry);
    assert_eq!(bytes.len() as u64, entry.encoded_len());
    // name_length 7, but only 3 name bytes follow.
    let cut = &bytes[..5];
    assert!(read_from::<IndexEntry>(cut).is_err());
    assert!(read_from::<IndexEntryOf<NameSpan>>(cut).is_err());
    // A name_length larger than everything after it.
    let mut long = bytes.clone();
    long[..2].copy_from_slice(&u16::MAX.to_le_bytes());
    assert!(read_from::<IndexEntry>(&long).is_err());
    assert!(read_from::<IndexEntryOf<NameSpan>>(&long).is_err());
}

#[test]
fn entries_and_lookup_work_on_sorted_and_unsorted_indexes() {
    let n = 300;
    for sorted in [false, true] {
        let bytes = file(n, sorted, true);
        let f = HrryFile::from_bytes(&bytes).expect("open");
        assert_eq!(f.len(), n);
        let names: Vec<&str> = f.entries().map(|e| e.name()).collect();
        let mut expected: Vec<String> = (0..n).map(|i| tensor(i).0).collect();
        if sorted {
            expected.sort();
        }
        assert_eq!(names, expected, "sorted: {sorted}");
        for (position, name) in names.iter().enumerate() {
            let e = f.find(name).expect("every name is found");
            assert_eq!(e.position(), position);
            assert_eq!(e.name(), *name);
            let at = e.index_entry().name;
            assert_eq!(at.bytes_in(f.name_text().as_bytes()), Some(name.as_bytes()));
        }
        for missing in ["", "layer", "layer.0.w", "layer.22.w999", "zzz"] {
            assert!(f.find(missing).is_none(), "{missing:?} is not a tensor");
        }
        assert_eq!(f.entry(n - 1).map(|e| e.name()), names.last().copied());
        assert!(f.entry(n).is_none());
    }
}

#[test]
fn descriptors_lists_what_descriptor_parses() {
    // More entries than one touch batch, and a count that is not a multiple of it.
    let bytes = file(53, false, true);
    let f = HrryFile::from_bytes(&bytes).expect("open");
    let listed = f.descriptors();
    assert_eq!(listed.len(), 53);
    let mut count = 0;
    for (i, (entry, d)) in listed.enumerate() {
        assert_eq!(entry.position(), i);
        let d = d.expect("descriptor");
        assert_eq!(d, f.descriptor(entry).expect("descriptor"));
        let name = entry.name().to_string();
        let (_, expected, _) = tensor(
            (0..53)
                .find(|&j| tensor(j).0 == name)
                .expect("a written name"),
        );
        assert_eq!(*d, expected);
        count += 1;
    }
    assert_eq!(count, 53);
    let mut it = f.descriptors();
    it.nth(50);
    assert_eq!(it.len(), 2);
}

#[test]
fn a_name_that_is_not_utf8_is_reported_at_the_name() {
    let mut bytes = file(3, false, false);
    let t = trailer(&bytes);
    // The first entry's name starts after the entry count and its name_length.
    let name_at = t.index_offset + 8 + 2;
    bytes[name_at as usize + 1] = 0xFF;
    let err = HrryFile::from_bytes(&bytes).err().expect("refused");
    assert_eq!(
        err.rule(),
        Some(&hrry::validate::rules::container::HF_IDX_NAME_UTF8)
    );
    assert_eq!(err.violation().map(|v| v.offset), Some(name_at), "{err}");
}

#[test]
fn a_name_over_the_limit_is_reported_at_its_length() {
    let bytes = file(3, false, true);
    let t = trailer(&bytes);
    let limits = hrry::limits::Limits {
        max_name_length: 4,
        ..hrry::limits::Limits::default()
    };
    let err = hrry::file::OpenOptions::new()
        .limits(limits)
        .open_bytes(&bytes)
        .err()
        .expect("refused");
    let v = err.violation().expect("a violation");
    assert_eq!(v.limit, Some(hrry::limits::Limit::NameLength), "{v}");
    assert!(v.message.contains("max_name_length 4"), "{v}");
    assert_eq!(v.offset, t.index_offset + 8);
}

/// The trusted open leaves out the two frame rules nothing it reads rests on (the
/// index CRC and name uniqueness), and only those: the checked open refuses both
/// files, the trusted one opens them, reads every tensor, and finds a duplicated
/// name's tensor by name.
#[test]
fn the_trusted_open_skips_only_the_index_crc_and_name_uniqueness() {
    use hrry::file::OpenOptions;
    use hrry::validate::rules::container::{HF_CRC_MATCH, HF_IDX_NAME_UNIQUE};
    let trusted = OpenOptions::new().depth(hrry::validate::Depth::Index);

    let mut bad_crc = file(12, false, true);
    let at = bad_crc.len() - TRAILER_LEN as usize + 28;
    bad_crc[at] ^= 0xFF; // index_crc32c
    let err = HrryFile::from_bytes(&bad_crc)
        .err()
        .expect("checked open refuses");
    assert_eq!(err.rule(), Some(&HF_CRC_MATCH), "{err}");
    let frame = OpenOptions::new()
        .depth(hrry::validate::Depth::Frame)
        .open_bytes(&bad_crc);
    let err = frame.err().expect("the frame open checks the CRC");
    assert_eq!(err.rule(), Some(&HF_CRC_MATCH), "{err}");
    let f = trusted.open_bytes(&bad_crc).expect("trusted open");
    assert_eq!(f.len(), 12);
    for e in f.entries() {
        assert!(f.tensor(e.name()).expect("read").is_some(), "{}", e.name());
    }

    // Rename entry 1 to entry 0's name (`layer.7.w1` and `layer.0.w0`: one length).
    let plain = file(12, false, false);
    let t = trailer(&plain);
    let (section, _) = read_from::<IndexSection>(
        &plain[t.index_offset as usize..(t.index_offset + t.index_length) as usize],
    )
    .expect("index");
    let (first, second) = (&section.entries[0], &section.entries[1]);
    assert_eq!(first.name.len(), second.name.len(), "names of one length");
    let mut dup = plain.clone();
    let second_at = t.index_offset as usize + 8 + (2 + first.name.len() + 32) + 2;
    assert_eq!(
        &dup[second_at..second_at + second.name.len()],
        &second.name[..]
    );
    dup[second_at..second_at + first.name.len()].copy_from_slice(&first.name);
    let err = HrryFile::from_bytes(&dup)
        .err()
        .expect("checked open refuses");
    assert_eq!(err.rule(), Some(&HF_IDX_NAME_UNIQUE), "{err}");
    let f = trusted.open_bytes(&dup).expect("trusted open");
    let name = String::from_utf8(first.name.clone()).expect("utf-8");
    let found = f.tensor(&name).expect("read").expect("found");
    assert_eq!(found.name(), name);
    // Any other rule still refuses: a flipped flag byte of an index entry.
    let mut flags = plain.clone();
    let flags_at = t.index_offset as usize + 8 + 2 + first.name.len() + 28;
    flags[flags_at] = 1;
    let err = trusted
        .open_bytes(&flags)
        .err()
        .expect("trusted open refuses");
    assert_eq!(err.rule().map(|r| r.id), Some("HF-IDX-005"), "{err}");
}

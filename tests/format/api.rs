//! The conveniences a Rust user reaches for: typed views of tensor data, writing a
//! tensor from a slice, KV values from Rust values, a descriptor's element type.

use std::fmt::Debug;

use half::{bf16, f16};
use hrry::file::{HrryFile, HrryWriter, SequentialReader, TensorRegionEnd, WriterOptions};
use hrry::limits::Limits;
use hrry::model::build::{dense, descriptor};
use hrry::model::view::{typed_slice, typed_vec};
use hrry::model::{Element, ElementType};
use hrry::schema::{ExtensionType, KvValue, LayoutFields, LAYOUT_COLUMN_MAJOR};
use hrry::Error;

/// A file with one row-major tensor `t` of shape [2, 3] holding `values`.
fn file_of<T: Element>(values: &[T]) -> Vec<u8> {
    let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    w.write_row_major("t", &[2, 3], values).unwrap();
    let bytes = w.finish().unwrap();
    let (_, report) = hrry::validate_bytes(&bytes, &Default::default());
    assert!(report.is_valid(), "{:?}", report.violations);
    bytes
}

fn round_trip<T: Element + PartialEq + Debug>(values: [T; 6]) {
    let bytes = file_of(&values);
    let file = HrryFile::from_bytes(&bytes).unwrap();
    let t = file.tensor("t").unwrap().unwrap();
    assert_eq!(t.descriptor.element_type(), Some(T::TYPE));
    assert_eq!(t.descriptor.shape, [2, 3]);
    assert_eq!(t.as_slice::<T>().unwrap(), values);
    assert_eq!(t.to_vec::<T>().unwrap(), values);
    let mut r =
        SequentialReader::new(&bytes[..], TensorRegionEnd::BufferToEof, Limits::default()).unwrap();
    let s = r.next_tensor().unwrap().unwrap();
    assert_eq!(s.to_vec::<T>().unwrap(), values);
}

#[test]
fn every_element_type_writes_and_reads_back_as_rust_values() {
    round_trip([1.5f32, -2.0, 0.0, f32::MAX, f32::MIN_POSITIVE, -0.0]);
    round_trip([1.5f64, -2.0, 0.0, f64::MAX, 1e-300, 3.25]);
    round_trip([1.5, -2.0, 0.0, 65504.0, 0.5, 3.25].map(f16::from_f32));
    round_trip([1.5, -2.0, 0.0, 1e30, 0.5, 3.25].map(bf16::from_f32));
    round_trip([1i8, -2, 0, i8::MAX, i8::MIN, 3]);
    round_trip([1u8, 2, 0, u8::MAX, 7, 3]);
    round_trip([1i16, -2, 0, i16::MAX, i16::MIN, 3]);
    round_trip([1u16, 2, 0, u16::MAX, 7, 3]);
    round_trip([1i32, -2, 0, i32::MAX, i32::MIN, 3]);
    round_trip([1u32, 2, 0, u32::MAX, 7, 3]);
    round_trip([1i64, -2, 0, i64::MAX, i64::MIN, 3]);
    round_trip([1u64, 2, 0, u64::MAX, 7, 3]);
}

#[test]
fn the_stored_bytes_are_little_endian_row_major() {
    let bytes = file_of(&[1u16, 2, 3, 4, 5, 0x0102]);
    let file = HrryFile::from_bytes(&bytes).unwrap();
    let t = file.tensor("t").unwrap().unwrap();
    assert_eq!(t.buffers[0], [1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 2, 1]);
}

#[test]
fn a_view_of_another_type_says_what_the_tensor_holds() {
    let bytes = file_of(&[0f32; 6]);
    let file = HrryFile::from_bytes(&bytes).unwrap();
    let t = file.tensor("t").unwrap().unwrap();
    // Asking for another type is the caller's mistake.
    let e = t.as_slice::<i32>().unwrap_err();
    assert!(matches!(e, Error::Usage(_)), "{e:?}");
    assert_eq!(
        e.to_string(),
        "invalid use: the tensor holds float32 (type tag 0x03), not int32"
    );
    assert!(matches!(t.to_vec::<f64>(), Err(Error::Usage(_))));
}

#[test]
fn only_row_major_unquantized_complete_data_is_viewed() {
    let data: Vec<u8> = (0..24).collect();
    let row_major = dense(ElementType::Uint8, &[4, 6]).unwrap();
    assert_eq!(typed_slice::<u8>(&row_major, &data).unwrap(), &data[..]);

    // Column-major stores the same bytes in another order.
    let column_major = descriptor(
        ElementType::Uint8.tag(),
        LAYOUT_COLUMN_MAJOR,
        &[4, 6],
        LayoutFields::Implicit,
        &[24],
    );
    let e = typed_slice::<u8>(&column_major, &data).unwrap_err();
    assert!(
        matches!(&e, Error::Unsupported(m) if m.contains("0x02")),
        "{e:?}"
    );
    assert!(e.to_string().contains("to_row_major"), "{e}");

    // Quantized int8 codes are not int8 values.
    let mut quantized = row_major.clone();
    quantized.type_tag = ElementType::Int8.tag();
    quantized.quantization = Some(Default::default());
    let e = typed_vec::<i8>(&quantized, &data).unwrap_err();
    assert!(
        matches!(&e, Error::Unsupported(m) if m.contains("int8 bytes are codes")),
        "{e:?}"
    );
    assert!(e.to_string().contains("Dequantizer"), "{e}");

    // byte_offset moves the start; the buffer must hold every element after it.
    let mut offset = row_major.clone();
    offset.shape = vec![2, 2];
    offset.byte_offset = 20;
    assert_eq!(typed_slice::<u8>(&offset, &data).unwrap(), [20, 21, 22, 23]);
    offset.byte_offset = 21;
    // A buffer too short breaks TD-BUF-005.
    let e = typed_slice::<u8>(&offset, &data).unwrap_err();
    assert_eq!(e.rule().map(|r| r.id), Some("TD-BUF-005"), "{e:?}");
    assert!(
        e.to_string()
            .ends_with("buffer 0 holds 24 bytes; byte_offset 21 plus 4 elements need 25"),
        "{e}"
    );
    offset.byte_offset = u64::MAX;
    let e = typed_vec::<u8>(&offset, &data).unwrap_err();
    assert_eq!(e.rule().map(|r| r.id), Some("TD-BUF-005"), "{e:?}");

    // A dynamic dimension has no element count.
    let mut dynamic = row_major;
    dynamic.shape = vec![u64::MAX, 6];
    let no_count = |r: Result<&[u8], Error>| matches!(r, Err(Error::Unsupported(m)) if m.contains("has no fixed element count"));
    assert!(no_count(typed_slice::<u8>(&dynamic, &data)));
    // No buffer at all.
    assert!(no_count(typed_slice::<u8>(&dynamic, &[])));
    let empty = dense(ElementType::Float32, &[0]).unwrap();
    assert_eq!(typed_slice::<f32>(&empty, &[]).unwrap(), &[] as &[f32]);
}

#[test]
fn misaligned_bytes_are_refused_by_the_view_and_copied_by_to_vec() {
    let desc = dense(ElementType::Float32, &[3]).unwrap();
    let values = [1.0f32, -2.5, 4.0];
    let le: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut buffer = [0u8; 16];
    // The offsets in `buffer` where the data starts at an address ≡ 1 and ≡ 0 mod 4.
    let at = |r: usize| {
        (0..4)
            .find(|s| (buffer.as_ptr() as usize + s) % 4 == r)
            .unwrap()
    };
    let (odd, even) = (at(1), at(0));

    buffer[odd..odd + 12].copy_from_slice(&le);
    let e = typed_slice::<f32>(&desc, &buffer[odd..]).unwrap_err();
    assert!(
        matches!(&e, Error::Unsupported(m) if m.contains("of the 4-byte alignment")),
        "{e:?}"
    );
    assert_eq!(typed_vec::<f32>(&desc, &buffer[odd..]).unwrap(), values);

    buffer[even..even + 12].copy_from_slice(&le);
    assert_eq!(typed_slice::<f32>(&desc, &buffer[even..]).unwrap(), values);
}

#[test]
fn write_row_major_refuses_a_slice_that_does_not_fill_the_shape() {
    let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    let e = w.write_row_major("t", &[2, 3], &[1.0f32; 5]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "cannot write: tensor \"t\": shape [2, 3] holds 6 elements, 5 given"
    );
    assert!(w.write_row_major("t", &[u64::MAX], &[1u8]).is_err());
    // The writer is still usable.
    w.write_row_major("t", &[5], &[1.0f32; 5]).unwrap();
    let bytes = w.finish().unwrap();
    let file = HrryFile::from_bytes(&bytes).unwrap();
    assert_eq!(
        file.tensor("t")
            .unwrap()
            .unwrap()
            .as_slice::<f32>()
            .unwrap(),
        [1.0; 5]
    );
}

#[test]
fn kv_values_come_from_rust_values_and_read_back() {
    let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    w.add_kv("name", "llama").unwrap();
    w.add_kv("owner", String::from("me")).unwrap();
    w.add_kv("layers", 32).unwrap();
    w.add_kv("offset", -7i64).unwrap();
    w.add_kv("params", 7_000_000_000u64).unwrap();
    w.add_kv("eps", 1e-5).unwrap();
    w.add_kv("tied", true).unwrap();
    w.add_kv("blob", vec![0u8, 255]).unwrap();
    w.add_kv("shape", vec![4096u64, 32]).unwrap();
    w.add_kv("tags", vec!["a", "b"]).unwrap();
    w.add_kv("none", Vec::<f64>::new()).unwrap();
    w.add_kv("raw", KvValue::Bool(1)).unwrap();
    let bytes = w.finish().unwrap();
    let (_, report) = hrry::validate_bytes(&bytes, &Default::default());
    assert!(report.is_valid(), "{:?}", report.violations);

    let file = HrryFile::from_bytes(&bytes).unwrap();
    let kv = |k: &str| file.kv_value(k).unwrap().clone();
    assert_eq!(kv("name").as_str(), Some("llama"));
    assert_eq!(kv("owner").as_str(), Some("me"));
    assert_eq!(kv("layers"), KvValue::Int64(32));
    assert_eq!(kv("layers").as_i64(), Some(32));
    assert_eq!(kv("layers").as_u64(), None);
    assert_eq!(kv("offset").as_i64(), Some(-7));
    assert_eq!(kv("params").as_u64(), Some(7_000_000_000));
    assert_eq!(kv("eps").as_f64(), Some(1e-5));
    assert_eq!(kv("tied").as_bool(), Some(true));
    assert_eq!(kv("raw").as_bool(), Some(true));
    assert_eq!(KvValue::Bool(2).as_bool(), None);
    assert_eq!(kv("blob").as_bytes(), Some(&[0u8, 255][..]));
    let shape = kv("shape");
    let shape: Vec<u64> = shape
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e.as_u64())
        .collect();
    assert_eq!(shape, [4096, 32]);
    let tags = kv("tags");
    let tags: Vec<&str> = tags
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e.as_str())
        .collect();
    assert_eq!(tags, ["a", "b"]);
    // An empty array keeps its element type.
    match kv("none") {
        KvValue::Array(a) => assert_eq!((a.element_tag, a.len()), (0x04, 0)),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        KvValue::from(&[1.5f32][..])
            .as_array()
            .unwrap()
            .get(0)
            .unwrap()
            .as_f64(),
        Some(1.5)
    );
    assert_eq!(KvValue::from(&b"xy"[..]).as_bytes(), Some(&b"xy"[..]));
    assert_eq!(KvValue::from(3u32), KvValue::Uint64(3));
}

#[test]
fn a_descriptor_names_its_element_type_and_width() {
    let mut d = dense(ElementType::Int4, &[3]).unwrap();
    assert_eq!(d.element_type(), Some(ElementType::Int4));
    assert_eq!(d.element_bits(), Some(4));
    d.type_tag = 0x47; // unassigned
    assert_eq!((d.element_type(), d.element_bits()), (None, None));
    // An extension type takes its width from the extension-type section, and has
    // none without it.
    d.type_tag = 0xF3;
    assert_eq!(d.element_type(), Some(ElementType::Extension(0xF3)));
    assert_eq!(d.element_bits(), None);
    d.extension_type = Some(ExtensionType {
        bit_width: 12,
        ..Default::default()
    });
    assert_eq!(d.element_bits(), Some(12));
}

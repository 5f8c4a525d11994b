//! `hrry::export`: whole files in, `.npy` bytes out, in logical row-major order.

use hrry::export::{composite_members, export_npy, ExportOptions};
use hrry::file::{HrryFile, HrryWriter, WriterOptions};
use hrry::layout::from_row_major;
use hrry::layout::sparse::encode;
use hrry::model::build::{composite_head, descriptor};
use hrry::model::ElementType;
use hrry::schema::{
    LayoutFields, ShardSection, TensorDescriptor, TiledFields, LAYOUT_ROW_MAJOR, LAYOUT_TILED,
};
use hrry::Error;

type Item = (String, TensorDescriptor, Vec<Vec<u8>>);

fn file(items: &[Item]) -> Vec<u8> {
    let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    for (n, d, b) in items {
        let s: Vec<&[u8]> = b.iter().map(Vec::as_slice).collect();
        w.write_tensor(n, d, &s).unwrap();
    }
    w.finish().unwrap()
}

/// Exports `name` and splits the result into header text and data.
fn export(bytes: &[u8], name: &str) -> Result<(String, Vec<u8>), Error> {
    let f = HrryFile::from_bytes(bytes).unwrap();
    let out = export_npy(&f, name, Vec::new(), &ExportOptions::default())?;
    assert_eq!(&out[..8], b"\x93NUMPY\x01\x00");
    let len = u16::from_le_bytes([out[8], out[9]]) as usize;
    assert_eq!((10 + len) % 64, 0);
    Ok((
        String::from_utf8(out[10..10 + len].to_vec()).unwrap(),
        out[10 + len..].to_vec(),
    ))
}

fn member(
    shape: &[u64],
    offset: &[u64],
    parent: &[u64],
    data: Vec<u8>,
) -> (TensorDescriptor, Vec<Vec<u8>>) {
    let mut d = descriptor(
        0x11,
        LAYOUT_ROW_MAJOR,
        shape,
        LayoutFields::Implicit,
        &[data.len() as u64],
    );
    d.shard = Some(ShardSection {
        parent_shape: parent.to_vec(),
        shard_offset: offset.to_vec(),
    });
    d.sync_sections();
    (d, vec![data])
}

#[test]
fn dense_native_and_widened() {
    let f32s: Vec<u8> = (0..6)
        .flat_map(|i| (i as f32 * 1.5).to_le_bytes())
        .collect();
    let rm = descriptor(
        0x03,
        LAYOUT_ROW_MAJOR,
        &[2, 3],
        LayoutFields::Implicit,
        &[24],
    );
    // int4 [3, 3] in [2, 2] tiles, column-major grid: values -4..=4.
    let tiled = LayoutFields::Tiled(TiledFields {
        tile_shape: vec![2, 2],
        outer_layout: 2,
        inner_layout: 1,
        reserved: [0; 2],
        outer_strides: None,
        inner_strides: None,
        inner_tiled: None,
    });
    let mut td = descriptor(0x48, LAYOUT_TILED, &[3, 3], tiled, &[0]);
    let src = hrry::layout::bits::pack(4, (-4i8..=4).map(|v| u128::from(v as u8 & 0xF)));
    let buf = from_row_major(&td, &src, 1 << 20).unwrap();
    td.buffers[0].byte_size = buf.len() as u64;
    let bytes = file(&[
        ("a".into(), rm, vec![f32s.clone()]),
        ("b".into(), td, vec![buf]),
    ]);
    let (h, data) = export(&bytes, "a").unwrap();
    assert!(h.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"));
    assert_eq!(data, f32s);
    let (h, data) = export(&bytes, "b").unwrap();
    assert!(h.starts_with("{'descr': '|i1', 'fortran_order': False, 'shape': (3, 3), }"));
    assert_eq!(data, (-4i8..=4).map(|v| v as u8).collect::<Vec<_>>());
    assert!(
        matches!(export(&bytes, "c"), Err(Error::Usage(m)) if m == "no tensor named \"c\""),
        "{:?}",
        export(&bytes, "c")
    );
}

#[test]
fn sparse_densifies() {
    let dense: Vec<u8> = [0f32, 2., 0., 0., 0., -1.]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let (d, b) = encode::compressed(0x03, &[2, 3], &dense, true).unwrap();
    let bytes = file(&[("s".into(), d, b)]);
    let (h, data) = export(&bytes, "s").unwrap();
    assert!(h.contains("'shape': (2, 3)"));
    assert_eq!(data, dense);
}

#[test]
fn partitions_assemble_and_nested_members_are_skipped() {
    // Group head "g" of 2: a nested partition head (2 members) and a plain tensor.
    let p0 = member(&[2, 1], &[0, 0], &[2, 2], vec![1, 3]);
    let p1 = member(&[2, 1], &[0, 1], &[2, 2], vec![2, 4]);
    let mut inner = composite_head(ElementType::Uint8, &[2, 2], 1, 0, 2);
    inner.shard = None;
    let plain = descriptor(0x11, LAYOUT_ROW_MAJOR, &[1], LayoutFields::Implicit, &[1]);
    let items: Vec<Item> = vec![
        (
            "g".into(),
            composite_head(ElementType::Uint8, &[1], 3, 0, 2),
            vec![],
        ),
        ("p".into(), inner, vec![]),
        ("p0".into(), p0.0, p0.1),
        ("p1".into(), p1.0, p1.1),
        ("x".into(), plain, vec![vec![9]]),
    ];
    let bytes = file(&items);
    let f = HrryFile::from_bytes(&bytes).unwrap();
    let g = f.tensor("g").unwrap().unwrap();
    let names: Vec<&str> = composite_members(&f, &g)
        .unwrap()
        .iter()
        .map(|t| t.entry.name())
        .collect();
    assert_eq!(names, ["p", "x"]);
    let (h, data) = export(&bytes, "p").unwrap();
    assert!(h.contains("'descr': '|u1'") && h.contains("'shape': (2, 2)"));
    assert_eq!(data, [1, 2, 3, 4]);
    // A group has no single logical array: its members are named, to be read one
    // by one.
    match export(&bytes, "g") {
        Err(Error::Unsupported(m)) => {
            assert!(m.contains("\"p\"") && m.contains("\"x\""), "{m}")
        }
        other => panic!("a group exported: {other:?}"),
    }
}

/// `export_row_major` gives export's bytes without the header, for every tensor of
/// every valid corpus file, and `row_major_len` says how many.
#[test]
fn row_major_bytes_are_export_data() {
    use hrry::export::{row_major_bytes, row_major_len};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/valid");
    let options = ExportOptions::default();
    let (mut compared, mut refused) = (0, 0);
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "hrry") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let f = HrryFile::from_bytes(&bytes).unwrap();
        for e in f.entries() {
            let name = e.name();
            match export(&bytes, name) {
                Ok((_, data)) => {
                    let desc = f.descriptor(e).unwrap();
                    assert_eq!(row_major_len(desc).unwrap(), data.len() as u64);
                    assert_eq!(row_major_bytes(&f, name, &options).unwrap(), data);
                    compared += 1;
                }
                Err(_) => {
                    assert!(row_major_bytes(&f, name, &options).is_err());
                    refused += 1;
                }
            }
        }
    }
    assert!(
        compared > 50,
        "{compared} tensors compared, {refused} refused"
    );
}

#[test]
fn max_bytes_bounds_a_dense_export_whose_strides_repeat_elements() {
    use hrry::export::row_major_bytes_of;
    use hrry::schema::LAYOUT_STRIDED;
    // One float32 repeated along an axis of 7e13 elements by a stride of 0.
    let shape = [1u64, 70_368_744_177_667];
    let strided = LayoutFields::Strided {
        strides: vec![1, 0],
    };
    let desc = descriptor(0x03, LAYOUT_STRIDED, &shape, strided, &[4]);
    let one = 1.5f32.to_le_bytes();
    let options = ExportOptions {
        max_bytes: 1 << 20,
        ..ExportOptions::default()
    };
    let refused = row_major_bytes_of(&desc, &[&one], &options);
    assert!(
        matches!(
            refused,
            Err(Error::Unsupported(ref m))
                if *m == format!(
                    "output of {} bytes exceeds the limit of 1048576 bytes",
                    4 * u128::from(shape[1])
                )
        ),
        "{refused:?}"
    );
    // Within the bound, the repeated element is written out.
    let desc = descriptor(
        0x03,
        LAYOUT_STRIDED,
        &[1, 3],
        LayoutFields::Strided {
            strides: vec![1, 0],
        },
        &[4],
    );
    let data = row_major_bytes_of(&desc, &[&one], &options).unwrap();
    assert_eq!(data, [one, one, one].concat());
}

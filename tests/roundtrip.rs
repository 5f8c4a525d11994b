//! Random valid files written by `HrryWriter` read back equal, validate clean, and
//! re-encode to identical bytes.

use arbitrary::{Arbitrary, Result, Unstructured};
use hrry::file::{HrryFile, HrryWriter, SequentialReader, TensorRegionEnd, WriterOptions};
use hrry::limits::Limits;
use hrry::model::{build::dense, ElementType, BUILTIN_TYPES};
use hrry::schema::{KvArray, KvScalar, KvValue, LenBytes, TensorDescriptor};
use hrry::validate::Mode;

struct Model {
    options: WriterOptions,
    kv: Vec<(String, KvValue)>,
    tensors: Vec<(String, TensorDescriptor, Vec<u8>)>,
}

fn text(u: &mut Unstructured<'_>) -> Result<String> {
    let n = u.int_in_range(1..=12)?;
    (0..n)
        .map(|_| Ok(char::from(u.int_in_range(b'a'..=b'z')?)))
        .collect()
}

fn scalar(u: &mut Unstructured<'_>, tag: u8) -> Result<KvScalar> {
    Ok(match tag {
        1 => KvScalar::String(LenBytes {
            bytes: text(u)?.into_bytes(),
        }),
        2 => KvScalar::Int64(u.arbitrary()?),
        3 => KvScalar::Uint64(u.arbitrary()?),
        4 => KvScalar::Float64(f64::from(u.arbitrary::<i32>()?) / 8.0),
        5 => KvScalar::Bool(u.int_in_range(0..=1)?),
        _ => KvScalar::Bytes(LenBytes {
            bytes: u.arbitrary()?,
        }),
    })
}

fn value(u: &mut Unstructured<'_>) -> Result<KvValue> {
    let tag = u.int_in_range(1..=7)?;
    if tag == 7 {
        let element_tag = u.int_in_range(1..=6)?;
        let n = u.int_in_range(0..=4)?;
        let elements = (0..n)
            .map(|_| scalar(u, element_tag))
            .collect::<Result<_>>()?;
        return Ok(KvValue::Array(KvArray {
            element_tag,
            elements,
        }));
    }
    Ok(match scalar(u, tag)? {
        KvScalar::String(s) => KvValue::String(s),
        KvScalar::Int64(v) => KvValue::Int64(v),
        KvScalar::Uint64(v) => KvValue::Uint64(v),
        KvScalar::Float64(v) => KvValue::Float64(v),
        KvScalar::Bool(v) => KvValue::Bool(v),
        KvScalar::Bytes(v) => KvValue::Bytes(v),
    })
}

impl<'a> Arbitrary<'a> for Model {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let options = WriterOptions {
            data_buffer_alignment: 4096 << u.int_in_range(0..=2)?,
            sorted_index: u.arbitrary()?,
            index_crc32c: u.arbitrary()?,
            tensor_count_hint: None,
            first_descriptor_offset: 64 + 8 * u64::from(u.int_in_range(0u8..=4)?),
            pad_last_buffer_to_alignment: u.arbitrary()?,
            ..WriterOptions::default()
        };
        let mut kv = Vec::new();
        for i in 0..u.int_in_range(0..=5)? {
            kv.push((format!("{}{i}", text(u)?), value(u)?));
        }
        let mut tensors = Vec::new();
        for i in 0..u.int_in_range(0..=6)? {
            let ty: ElementType = *u.choose(&BUILTIN_TYPES)?;
            let rank = u.int_in_range(0..=3)?;
            let shape: Vec<u64> = (0..rank)
                .map(|_| u.int_in_range(0..=5))
                .collect::<Result<_>>()?;
            let d = dense(ty, &shape).expect("small shapes fit");
            let size = d.buffers[0].byte_size as usize;
            let mut data = vec![0u8; size];
            u.fill_buffer(&mut data)?;
            tensors.push((format!("{}{i}", text(u)?), d, data));
        }
        let mut m = Model {
            options,
            kv,
            tensors,
        };
        if u.arbitrary()? {
            m.options.tensor_count_hint = Some(m.tensors.len() as u64);
        }
        Ok(m)
    }
}

fn write(m: &Model) -> Vec<u8> {
    let mut w = HrryWriter::new(Vec::new(), m.options).expect("options");
    for (k, v) in &m.kv {
        w.add_kv(k, v.clone()).expect("kv");
    }
    for (name, d, data) in &m.tensors {
        w.write_tensor(name, d, &[data]).expect("tensor");
    }
    w.finish().expect("finish")
}

#[test]
fn random_models_round_trip() {
    arbtest::arbtest(|u| {
        let m: Model = u.arbitrary()?;
        let bytes = write(&m);
        let (_, report) = hrry::validate_any(&bytes, Mode::Strict);
        assert!(report.is_valid(), "{:?}", report.violations);

        let file = HrryFile::from_bytes(&bytes).expect("opens");
        assert_eq!(file.len(), m.tensors.len());
        assert_eq!(file.header().file_flags.has_kv_metadata(), !m.kv.is_empty());
        let kv: Vec<(String, KvValue)> = file
            .kv()
            .iter()
            .map(|e| (String::from_utf8(e.key.clone()).unwrap(), e.value.clone()))
            .collect();
        assert_eq!(kv, m.kv);
        for (name, d, data) in &m.tensors {
            let t = file.tensor(name).expect("reads").expect("present");
            assert_eq!(&t.descriptor, d);
            assert_eq!(t.buffers, vec![data.as_slice()]);
        }

        // Re-encode what was read, in file (descriptor) order: identical bytes.
        let mut order: Vec<_> = file.entries().collect();
        order.sort_by_key(|e| e.index_entry().descriptor_offset);
        let again = Model {
            options: m.options,
            kv,
            tensors: order
                .iter()
                .map(|e| {
                    let t = file.tensor_at(*e).unwrap();
                    (e.name().to_string(), t.descriptor, t.buffers[0].to_vec())
                })
                .collect(),
        };
        assert_eq!(write(&again), bytes);

        // The sequential reader sees the same tensors in write order.
        let mut ends = vec![TensorRegionEnd::BufferToEof];
        if m.options.tensor_count_hint.is_some() {
            ends.push(TensorRegionEnd::CountHint);
        }
        for end in ends {
            let mut r = SequentialReader::new(bytes.as_slice(), end, Limits::default()).unwrap();
            for (_, d, data) in &m.tensors {
                let t = r.next_tensor().unwrap().expect("tensor");
                assert_eq!(&t.descriptor, d);
                assert_eq!(t.buffers, vec![data.clone()]);
            }
            assert!(r.next_tensor().unwrap().is_none());
        }
        Ok(())
    })
    .budget_ms(4000);
}

#[test]
fn writing_to_a_path_is_atomic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.hrry");
    let d = dense(ElementType::Float32, &[2]).unwrap();
    let mut w = HrryWriter::create(&path, WriterOptions::default()).unwrap();
    w.write_tensor("a", &d, &[&[0u8; 8]]).unwrap();
    assert!(
        !path.exists(),
        "nothing under the target name before finishing"
    );
    // A failing write (wrong buffer size) leaves no file behind once dropped.
    assert!(w.write_tensor("b", &d, &[&[0u8; 3]]).is_err());
    drop(w);
    assert!(!path.exists());
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "temporary file removed"
    );

    let mut w = HrryWriter::create(&path, WriterOptions::default()).unwrap();
    w.write_tensor("a", &d, &[&[0u8; 8]]).unwrap();
    w.finish_file().unwrap();
    let file = HrryFile::open(&path).unwrap();
    assert_eq!(file.tensor("a").unwrap().unwrap().buffers[0], &[0u8; 8]);
}

#[test]
fn writer_refuses_inconsistent_input() {
    let d = dense(ElementType::Float32, &[2]).unwrap();
    let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    assert!(w.write_tensor("", &d, &[&[0u8; 8]]).is_err(), "empty name");
    w.write_tensor("a", &d, &[&[0u8; 8]]).unwrap();
    assert!(
        w.write_tensor("a", &d, &[&[0u8; 8]]).is_err(),
        "duplicate name"
    );
    assert!(w.add_kv("k", KvValue::Int64(1)).is_ok());
    assert!(w.add_kv("k", KvValue::Int64(2)).is_err(), "duplicate key");
    let mut short = d.clone();
    short.descriptor_length += 1;
    assert!(
        w.write_tensor("c", &short, &[&[0u8; 8]]).is_err(),
        "wrong descriptor_length"
    );
    let bad = WriterOptions {
        data_buffer_alignment: 1000,
        ..WriterOptions::default()
    };
    assert!(HrryWriter::new(Vec::new(), bad).is_err());
    let head = hrry::model::build::composite_head(ElementType::Float32, &[2], 3, 0, 2);
    let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    w.write_tensor("head", &head, &[]).unwrap();
    w.write_tensor("m0", &d, &[&[0u8; 8]]).unwrap();
    assert!(
        w.finish().is_err(),
        "a composite missing a member is refused"
    );
}

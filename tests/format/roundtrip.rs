//! Random valid files written by `HrryWriter` read back equal, validate clean, and
//! re-encode to identical bytes. The generator and the oracle live in
//! `hrry-testkit` (the `testkit/` crate), shared with the `roundtrip` fuzz
//! target.

use hrry::file::{HrryFile, HrryWriter, WriterOptions};
use hrry::model::{build::dense, ElementType};
use hrry::schema::KvValue;
use hrry_testkit::ArbitraryModel;

#[test]
fn random_models_round_trip() {
    arbtest::arbtest(|u| {
        let m: ArbitraryModel = u.arbitrary()?;
        m.assert_round_trip();
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

#[test]
fn the_writer_refuses_set_bits_after_the_last_packed_element() {
    // uint4 [3]: spec example C5 03 is fine; C5 13 sets the unused high nibble.
    let desc = dense(ElementType::Uint4, &[3]).unwrap();
    let write = |data: &[u8], unchecked: bool| {
        let options = WriterOptions {
            unchecked,
            ..WriterOptions::default()
        };
        let mut w = HrryWriter::new(Vec::new(), options).unwrap();
        w.write_tensor("t", &desc, &[data])?;
        w.finish()
    };
    let bytes = write(&[0xC5, 0x03], false).expect("a zero tail is accepted");
    assert!(hrry::validate_bytes(&bytes, &Default::default())
        .1
        .is_valid());
    let err = write(&[0xC5, 0x13], false).expect_err("a set tail bit is refused");
    assert!(err.to_string().contains("TD-BUF-006"), "{err}");
    // Unchecked (corpus) writing still produces the invalid file on request.
    let bad = write(&[0xC5, 0x13], true).expect("unchecked");
    let (_, report) = hrry::validate_bytes(&bad, &Default::default());
    assert_eq!(report.rule_ids(), ["TD-BUF-006"]);
}

//! Each configured limit is enforced the same way by the validator and by
//! `HrryFile`: a file past it is refused with `HF-LIM-001` naming the limit.

use hrry::file::{Error, HrryFile, HrryWriter, WriterOptions};
use hrry::limits::Limits;
use hrry::model::{build::dense, ElementType};
use hrry::schema::KvValue;
use hrry::validate::{Options, Rules};

/// A valid file with one KV entry (key "producer") and one tensor ("weights").
fn sample() -> Vec<u8> {
    let d = dense(ElementType::Float32, &[2]).unwrap();
    let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    w.add_kv("producer", KvValue::Int64(1)).unwrap();
    w.write_tensor("weights", &d, &[&[0u8; 8]]).unwrap();
    w.finish().unwrap()
}

fn assert_refused(limits: Limits, limit: &str) {
    let bytes = sample();
    let report = hrry::Format::HrryFile.validate_bytes(
        &bytes,
        &Options {
            judging: Rules::Hardened.into(),
            limits,
        },
    );
    assert!(
        report.violations.iter().any(|v| v.rule.id == "HF-LIM-001"
            && v.message.contains(limit)
            && v.limit.map(|l| l.name()) == Some(limit)),
        "validator, {limit}: {:?}",
        report.violations
    );
    match hrry::file::OpenOptions::new()
        .limits(limits)
        .open_bytes(&bytes)
    {
        Err(e @ Error::Invalid(_)) => {
            assert_eq!(e.rule().map(|r| r.id), Some("HF-LIM-001"), "{e}");
            assert_eq!(e.exceeded_limit().map(|l| l.name()), Some(limit), "{e}");
        }
        Err(e) => panic!("HrryFile, {limit}: {e}"),
        Ok(_) => panic!("HrryFile, {limit}: opened"),
    }
}

#[test]
fn the_sample_is_within_the_defaults() {
    let bytes = sample();
    assert!(hrry::validate_bytes(&bytes, &Default::default())
        .1
        .is_valid());
    assert!(HrryFile::from_bytes(&bytes).is_ok());
}

#[test]
fn kv_keys_are_held_to_max_name_length() {
    // "weights" (7 bytes) fits, "producer" (8 bytes) does not.
    let limits = Limits {
        max_name_length: 7,
        ..Limits::default()
    };
    assert_refused(limits, "max_name_length");
}

#[test]
fn tensor_names_are_held_to_max_name_length() {
    let limits = Limits {
        max_name_length: 6,
        ..Limits::default()
    };
    assert_refused(limits, "max_name_length");
}

#[test]
fn index_and_kv_sizes_are_limited() {
    assert_refused(
        Limits {
            max_index_bytes: 16,
            ..Limits::default()
        },
        "max_index_bytes",
    );
    assert_refused(
        Limits {
            max_kv_bytes: 8,
            ..Limits::default()
        },
        "max_kv_bytes",
    );
}

#[test]
fn counts_are_limited() {
    assert_refused(
        Limits {
            max_tensors: 0,
            ..Limits::default()
        },
        "max_tensors",
    );
    assert_refused(
        Limits {
            max_kv_entries: 0,
            ..Limits::default()
        },
        "max_kv_entries",
    );
}

//! `Limits` honoured by archives: what the sections make the loader and the
//! validator hold is charged to the memory budget (`max_memory`), names are held
//! to `max_name_length`; past either, `HF-LIM-001` naming the limit.

use hrry::holo::{Constant, HoloLoader, HoloWriter, PortDescriptor};
use hrry::limits::{Limit, Limits};
use hrry::validate::{Options, Verdict};

/// An archive of `n` empty inline constants (10 bytes each on the wire, a few
/// times that decoded).
fn many_constants(n: u32) -> Vec<u8> {
    let constants = (0..n)
        .map(|slot| Constant {
            slot,
            dtype: 1,
            bytes: Vec::new(),
        })
        .collect();
    HoloWriter::new().set_constants(constants).finish().unwrap()
}

fn capped(max_memory: u64) -> Limits {
    Limits {
        max_memory,
        ..Limits::default()
    }
}

/// The validator's report on `bytes` within `limits`.
fn validate(bytes: &[u8], limits: Limits) -> hrry::Report {
    let options = Options {
        limits,
        ..Options::default()
    };
    hrry::Format::Holo.validate_bytes(bytes, &options)
}

#[test]
fn entries_past_the_memory_budget_are_refused_naming_max_memory() {
    let bytes = many_constants(100_000);
    assert!(HoloLoader::from_bytes(&bytes).is_ok());
    assert!(validate(&bytes, Limits::default()).is_valid());

    let e = HoloLoader::with_limits(&bytes[..], &capped(1 << 20)).unwrap_err();
    assert_eq!(e.exceeded_limit(), Some(Limit::Memory), "{e}");
    let text = e.to_string();
    assert!(
        text.contains("HF-LIM-001") && text.contains("max_memory") && text.contains("Constants"),
        "{text}"
    );

    let report = validate(&bytes, capped(1 << 20));
    assert_eq!(
        report.verdict(),
        Verdict::Refused,
        "{:?}",
        report.violations
    );
    assert_eq!(report.rule_ids(), ["HF-LIM-001"]);
    assert_eq!(report.violations[0].limit, Some(Limit::Memory));
    // The same from a source read in pieces.
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), &bytes).unwrap();
    let source = hrry::source::FileSource::open(file.path()).unwrap();
    let options = Options {
        limits: capped(1 << 20),
        ..Options::default()
    };
    let from_file = hrry::Format::Holo
        .validate_source(&source, &options)
        .unwrap();
    assert_eq!(from_file.rule_ids(), ["HF-LIM-001"]);
}

#[test]
fn a_structured_section_past_the_budget_is_refused_before_it_is_read() {
    // 200 000 empty levels: an 800 KB Schedule, read whole to be decoded.
    let bytes = HoloWriter::new()
        .set_schedule(vec![Vec::new(); 200_000])
        .finish()
        .unwrap();
    assert_eq!(
        HoloLoader::from_bytes(&bytes)
            .unwrap()
            .schedule()
            .map(<[_]>::len),
        Some(200_000)
    );
    let report = validate(&bytes, capped(512 << 10));
    assert_eq!(report.rule_ids(), ["HF-LIM-001"], "{:?}", report.violations);
    let v = &report.violations[0];
    assert_eq!(v.limit, Some(Limit::Memory));
    assert!(v.message.contains("Schedule"), "{}", v.message);
    assert!(report.fatal);
}

#[test]
fn port_names_and_extension_keys_are_held_to_max_name_length() {
    let port = PortDescriptor {
        name: "input_ids".into(),
        slot: 0,
        element_count: 4,
        dtype: 1,
        shape: vec![4],
    };
    let bytes = HoloWriter::new()
        .set_inputs(vec![port])
        .add_extension("a-long-extension-key", b"v".to_vec())
        .finish()
        .unwrap();
    let short = Limits {
        max_name_length: 12,
        ..Limits::default()
    };
    assert!(HoloLoader::with_limits(&bytes[..], &Limits::default()).is_ok());
    let e = HoloLoader::with_limits(&bytes[..], &short).unwrap_err();
    assert_eq!(e.exceeded_limit(), Some(Limit::NameLength), "{e}");
    let report = validate(&bytes, short);
    let limits: Vec<_> = report.violations.iter().map(|v| v.limit).collect();
    assert_eq!(limits, [Some(Limit::NameLength)], "{:?}", report.violations);
    assert!(report.violations[0].message.contains("Extension key"));
    let shorter = Limits {
        max_name_length: 4,
        ..Limits::default()
    };
    assert_eq!(validate(&bytes, shorter).violations.len(), 2);
}

//! The loader's lookups, file helpers and the inspect summary.

use hrry::holo::{hex, inspect_json, is_holo, HoloLoader, SectionKind};

fn sample() -> Vec<u8> {
    hrry_testkit::corpus::holo::sample_writer()
        .finish()
        .unwrap()
}

#[test]
fn lookups_return_the_archived_values() {
    let bytes = sample();
    let a = HoloLoader::from_bytes(&bytes).unwrap();
    assert_eq!(
        a.fingerprint(),
        *blake3::hash(&bytes[..bytes.len() - 32]).as_bytes()
    );
    assert_eq!(a.input_port_by_name("attention_mask").unwrap().slot, 1);
    assert_eq!(
        a.output_port_by_name("logits").unwrap().shape,
        vec![1, 8, 4]
    );
    assert!(a.input_port_by_name("logits").is_none());
    assert_eq!(a.extension("tokenizer"), Some(&b"{\"vocab\":[]}"[..]));
    assert_eq!(a.extension("missing"), None);
    assert_eq!(
        a.extension_keys().collect::<Vec<_>>(),
        vec!["tokenizer", "generation_config"]
    );
    assert_eq!(a.schedule().unwrap(), &[vec![0, 1], vec![2]][..]);
    assert_eq!(a.exec_plan().unwrap(), &[vec![0], vec![1, 2]][..]);
    assert_eq!(a.shape_registry().unwrap()[0].dims[1], 8);
    assert_eq!(
        a.section_bytes(SectionKind::Metadata),
        Some(&b"{\"producer\":\"hrry\"}"[..])
    );
    // Two pool bodies plus the large constant's body.
    assert_eq!(a.weight_count(), 3);
    let small = a.constant_for_slot(3).unwrap();
    assert_eq!(small.bytes, &[0, 0, 128, 63]);
    assert_eq!(small.fingerprint, None);
    let large = a.constant_for_slot(4).unwrap();
    assert_eq!(large.bytes.len(), 5000);
    assert_eq!(a.weight(&large.fingerprint.unwrap()), Some(large.bytes));
}

#[test]
fn constants_and_weights_borrow_the_archive() {
    let bytes = sample();
    let a = HoloLoader::from_bytes(&bytes).unwrap();
    let range = bytes.as_ptr_range();
    for c in a.constants() {
        assert!(range.contains(&c.bytes.as_ptr()), "slot {} copied", c.slot);
    }
    for (_, body) in a.weights() {
        assert!(range.contains(&body.as_ptr()));
    }
    assert!(range.contains(&a.extension("tokenizer").unwrap().as_ptr()));
}

#[test]
fn write_to_path_then_open_maps_the_same_archive() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.holo");
    let w = hrry_testkit::corpus::holo::sample_writer();
    w.write_to_path(&path).unwrap();
    // Writing again replaces the file atomically; no temporary is left behind.
    w.write_to_path(&path).unwrap();
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    let mapped = HoloLoader::open(&path).unwrap();
    assert_eq!(mapped.bytes(), &sample()[..]);
    assert_eq!(mapped.extension("generation_config"), Some(&b"{}"[..]));
    assert!(HoloLoader::open(dir.path().join("absent.holo")).is_err());
    std::fs::write(&path, b"").unwrap();
    let err = HoloLoader::open(&path).unwrap_err().to_string();
    assert!(err.starts_with("HOLO-HDR-001"), "{err}");
}

#[test]
fn inspect_json_describes_the_archive() {
    let bytes = sample();
    assert!(is_holo(&bytes));
    let j = inspect_json(&bytes).unwrap();
    assert_eq!(j["format"], "holo");
    assert_eq!(j["format_version"], 2);
    assert_eq!(j["flags"], 0);
    let a = HoloLoader::from_bytes(&bytes).unwrap();
    assert_eq!(j["fingerprint"], hex(&a.fingerprint()));
    let sections = j["sections"].as_array().unwrap();
    assert_eq!(sections.len(), a.sections().len());
    assert_eq!(sections[0]["kind"], 1);
    assert_eq!(sections[0]["kind_name"], "KernelCalls");
    assert_eq!(sections[0]["offset"], a.sections()[0].offset);
    assert_eq!(sections[0]["length"], a.sections()[0].length);
    assert_eq!(j["inputs"][0]["name"], "input_ids");
    assert_eq!(j["outputs"][0]["shape"], serde_json::json!([1, 8, 4]));
    assert_eq!(
        j["extension_keys"],
        serde_json::json!(["tokenizer", "generation_config"])
    );
    assert_eq!(j["constants"]["by_reference"], 1);
    assert!(inspect_json(b"HOLO").is_err());
}

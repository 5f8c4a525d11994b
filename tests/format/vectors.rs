//! The upstream golden vectors (`tests/data/upstream-vectors/`, see its ORIGIN.md)
//! decode to what their manifest says.

use std::path::PathBuf;

use hrry::file::HrryFile;
use hrry::model::ElementType;
use hrry::schema::{read_from, KvValue, TensorDescriptor};
use serde_json::Value;

fn vectors_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/upstream-vectors")
}

fn manifest() -> Value {
    let text = std::fs::read_to_string(vectors_dir().join("manifest.json"))
        .expect("tests/data/upstream-vectors/manifest.json is readable");
    serde_json::from_str(&text).expect("manifest is JSON")
}

fn u64s(v: &Value) -> Vec<u64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_u64().expect("integer"))
        .collect()
}

#[test]
fn every_descriptor_vector_matches_its_manifest() {
    let m = manifest();
    let descriptors = m["descriptors"].as_array().expect("descriptors");
    assert_eq!(descriptors.len(), 11);
    for d in descriptors {
        let path = vectors_dir().join(d["file"].as_str().unwrap());
        let bytes = std::fs::read(&path).unwrap();
        let (desc, used) = read_from::<TensorDescriptor>(&bytes)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let x = &d["expect"];
        let name = d["file"].as_str().unwrap();
        assert_eq!(used as usize, bytes.len(), "{name}: consumed");
        assert_eq!(
            desc.descriptor_length as usize,
            bytes.len(),
            "{name}: length"
        );
        assert_eq!(
            u64::from(desc.version_major),
            x["version_major"].as_u64().unwrap()
        );
        assert_eq!(
            u64::from(desc.version_minor),
            x["version_minor"].as_u64().unwrap()
        );
        assert_eq!(
            u64::from(desc.type_tag),
            x["element_type_tag"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            ElementType::from_tag(desc.type_tag).unwrap().name(),
            x["element_type"].as_str().unwrap(),
            "{name}"
        );
        assert_eq!(desc.shape, u64s(&x["shape"]), "{name}");
        assert_eq!(
            desc.byte_offset,
            x["byte_offset"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            u64::from(desc.layout_tag),
            x["layout_tag"].as_u64().unwrap(),
            "{name}"
        );
        let sizes: Vec<u64> = desc.buffers.iter().map(|b| b.byte_size).collect();
        assert_eq!(sizes, u64s(&x["buffer_byte_sizes"]), "{name}");
        assert_eq!(
            desc.quantization.is_some(),
            x["has_quantization"].as_bool().unwrap()
        );
        assert_eq!(desc.shard.is_some(), x["has_shard"].as_bool().unwrap());
        // Re-encoding gives the same bytes back.
        assert_eq!(hrry::schema::to_bytes(&desc), bytes, "{name}: re-encode");
    }
}

#[test]
fn basic_file_matches_its_manifest() {
    let m = manifest();
    for f in m["files"].as_array().unwrap() {
        let bytes = std::fs::read(vectors_dir().join(f["file"].as_str().unwrap())).unwrap();
        let file = HrryFile::from_bytes(&bytes).expect("opens");
        let tensors = f["tensors"].as_array().unwrap();
        assert_eq!(file.len(), tensors.len());
        for t in tensors {
            let name = t["name"].as_str().unwrap();
            let tensor = file.tensor(name).unwrap().expect("tensor present");
            let d = &tensor.descriptor;
            assert_eq!(
                u64::from(d.type_tag),
                t["element_type_tag"].as_u64().unwrap()
            );
            assert_eq!(
                ElementType::from_tag(d.type_tag).unwrap().name(),
                t["element_type"].as_str().unwrap()
            );
            assert_eq!(d.shape, u64s(&t["shape"]));
            assert_eq!(
                tensor.buffers[0].len() as u64,
                t["data_bytes"].as_u64().unwrap()
            );
        }
        for kv in f["kv"].as_array().unwrap() {
            let key = kv["key"].as_str().unwrap();
            let value = file.kv_value(key).expect("key present");
            match (kv["kind"].as_str().unwrap(), value) {
                ("string", KvValue::String(s)) => {
                    assert_eq!(s.bytes, kv["value_string"].as_str().unwrap().as_bytes())
                }
                ("int64", KvValue::Int64(i)) => {
                    assert_eq!(*i, kv["value_int"].as_i64().unwrap())
                }
                (kind, v) => panic!("{key}: manifest kind {kind} but file has {v:?}"),
            }
        }
    }
}

//! `hrry diff`: two files compared on their tensors, metadata and logical values,
//! whatever their layouts and formats.

use crate::hrry;
use std::path::{Path, PathBuf};

use hrry::export::{export_dtype, row_major_bytes, ExportOptions};
use hrry::file::{HrryFile, HrryWriter};
use hrry::model::build::dense;
use hrry::schema::KvValue;

fn diff_json(a: &Path, b: &Path, extra: &[&str]) -> (i32, serde_json::Value) {
    let mut args = vec!["diff", "--json", a.to_str().unwrap(), b.to_str().unwrap()];
    args.extend_from_slice(extra);
    let (code, out, err) = hrry(&args);
    let doc = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    (code, doc)
}

fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus/valid")
        .join(name)
}

/// One tensor of a twin: name, element type, shape, row-major bytes.
type Twin = Vec<(String, hrry::model::ElementType, Vec<u64>, Vec<u8>)>;

/// The tensors of a HRRYFILE as row-major values (quantized ones dequantized), as
/// `hrry export` gives them.
fn row_major_tensors(path: &Path) -> Twin {
    let file = HrryFile::open(path).expect("open");
    let names: Vec<String> = file.entries().map(|e| e.name().to_string()).collect();
    names
        .into_iter()
        .map(|name| {
            let t = file.tensor(&name).unwrap().unwrap();
            let descr = export_dtype(t.descriptor).unwrap().descr;
            let ty = hrry::npy::import_type(descr).expect("a native dtype");
            let bytes = row_major_bytes(&file, &name, &ExportOptions::default()).unwrap();
            (name, ty, t.descriptor.shape.clone(), bytes)
        })
        .collect()
}

/// Writes `tensors` row-major, with `kv`, to `path`.
fn write_twin(path: &Path, kv: &[(String, KvValue)], tensors: &Twin) {
    let mut w = HrryWriter::new(Vec::new(), Default::default()).unwrap();
    for (k, v) in kv {
        w.add_kv(k, v.clone()).unwrap();
    }
    for (name, ty, shape, bytes) in tensors {
        w.write_tensor(name, &dense(*ty, shape).unwrap(), &[bytes])
            .unwrap();
    }
    std::fs::write(path, w.finish().unwrap()).unwrap();
}

fn kv_of(path: &Path) -> Vec<(String, KvValue)> {
    let file = HrryFile::open(path).unwrap();
    file.kv()
        .iter()
        .map(|e| (String::from_utf8(e.key.clone()).unwrap(), e.value.clone()))
        .collect()
}

#[test]
fn the_same_values_in_other_layouts_compare_equal() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "layout-tiled.hrry",
        "layout-tiled-nested.hrry",
        "layout-morton.hrry",
        "layout-hilbert.hrry",
        "layout-strided-reversed.hrry",
        "layout-csr.hrry",
        "layout-csc.hrry",
        "layout-coo.hrry",
        "layout-csf.hrry",
        "layout-column-major-int4.hrry",
        "quant-per-block-int4-f16.hrry",
        "quant-per-channel-symmetric.hrry",
        "quant-nf4.hrry",
    ] {
        let original = corpus(name);
        let twin = dir.path().join(name);
        write_twin(&twin, &kv_of(&original), &row_major_tensors(&original));
        let (code, doc) = diff_json(&original, &twin, &[]);
        assert_eq!(code, 0, "{name}: {doc:#}");
        assert_eq!(doc["equal"], true);
        // The storage changed and is reported; the values did not.
        let changed = doc["tensors"].as_array().unwrap();
        assert!(!changed.is_empty(), "{name}: {doc:#}");
        for t in changed {
            assert_eq!(t["values"]["equal"], true, "{name}: {t:#}");
            assert_eq!(t["different"], false);
            let fields: Vec<&str> = t["changes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["field"].as_str().unwrap())
                .collect();
            assert!(
                fields.contains(&"layout") || fields.contains(&"quantization"),
                "{name}: {fields:?}"
            );
        }
        // Without the values, the changed storage is all there is to go by.
        let (code, doc) = diff_json(&original, &twin, &["--metadata-only"]);
        assert_eq!(code, 1, "{name}: {doc:#}");
        assert_eq!(doc["values_compared"], false);
    }
}

#[test]
fn one_changed_element_is_found_with_its_index() {
    let dir = tempfile::tempdir().unwrap();
    let original = corpus("layout-tiled.hrry");
    let mut tensors = row_major_tensors(&original);
    let (_, ty, shape, bytes) = &mut tensors[0];
    assert_eq!(*ty, hrry::model::ElementType::Float32);
    let n = bytes.len() / 4;
    let i = n - 3;
    let old = f32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().unwrap());
    bytes[4 * i..4 * i + 4].copy_from_slice(&(old + 0.25).to_le_bytes());
    let shape = shape.clone();
    let twin = dir.path().join("twin.hrry");
    write_twin(&twin, &kv_of(&original), &tensors);

    let (code, doc) = diff_json(&original, &twin, &[]);
    assert_eq!(code, 1, "{doc:#}");
    assert_eq!(doc["equal"], false);
    let v = &doc["tensors"][0]["values"];
    assert_eq!(v["equal"], false);
    assert_eq!(v["differing"], 1);
    assert_eq!(v["first_index"], i as u64);
    let mut position = Vec::new();
    let mut rest = i as u64;
    for &d in shape.iter().rev() {
        position.push(rest % d);
        rest /= d;
    }
    position.reverse();
    assert_eq!(v["first_position"], serde_json::json!(position));
    assert_eq!(v["a"], f64::from(old));
    assert_eq!(v["b"], f64::from(old + 0.25));
    assert_eq!(v["max_abs_diff"], 0.25);
    // Within a tolerance the files are equal.
    assert_eq!(diff_json(&original, &twin, &["--tolerance", "0.3"]).0, 0);
    assert_eq!(diff_json(&original, &twin, &["--tolerance", "0.2"]).0, 1);

    // Text output names the index too.
    let (code, out, _) = hrry(&["diff", original.to_str().unwrap(), twin.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(out.contains(&format!("first at index {i}")), "{out}");
    assert!(
        out.lines().last().unwrap().starts_with("different:"),
        "{out}"
    );
}

#[test]
fn added_and_removed_tensors_and_metadata_are_listed() {
    let dir = tempfile::tempdir().unwrap();
    let original = corpus("basic.hrry");
    let mut tensors = row_major_tensors(&original);
    let removed = tensors.remove(0).0;
    tensors.push((
        "extra".into(),
        hrry::model::ElementType::Int32,
        vec![2],
        [7i32, 8].iter().flat_map(|v| v.to_le_bytes()).collect(),
    ));
    let mut kv = kv_of(&original);
    let (gone, _) = kv.remove(0);
    kv[0].1 = KvValue::from(99i64);
    let changed = kv[0].0.clone();
    kv.push(("added.key".into(), KvValue::from("new")));
    let twin = dir.path().join("twin.hrry");
    write_twin(&twin, &kv, &tensors);

    let (code, doc) = diff_json(&original, &twin, &[]);
    assert_eq!(code, 1, "{doc:#}");
    assert_eq!(doc["only_in_a"], serde_json::json!([removed]));
    assert_eq!(doc["only_in_b"], serde_json::json!(["extra"]));
    let changes: Vec<(String, String)> = doc["metadata"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["key"].as_str().unwrap().to_string(),
                m["change"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        changes,
        [
            (gone, "removed".to_string()),
            (changed, "changed".to_string()),
            ("added.key".to_string(), "added".to_string())
        ]
    );
    // The tensor in both is equal; metadata-only finds the same differences.
    assert_eq!(doc["equal_tensors"], 1);
    let (code, meta) = diff_json(&original, &twin, &["--metadata-only"]);
    assert_eq!(code, 1);
    assert_eq!(meta["only_in_b"], doc["only_in_b"]);
    assert_eq!(meta["metadata"], doc["metadata"]);
    // A file against itself: equal, exit 0, with or without values.
    assert_eq!(diff_json(&original, &original, &[]).0, 0);
    assert_eq!(diff_json(&twin, &twin, &["--metadata-only"]).0, 0);
}

/// A safetensors file of `tensors` (name, dtype, shape, bytes) with `metadata`.
fn write_safetensors(
    path: &Path,
    tensors: &[(&str, &str, &[u64], Vec<u8>)],
    metadata: &[(&str, &str)],
) {
    let mut header = serde_json::Map::new();
    let meta: serde_json::Map<String, serde_json::Value> = metadata
        .iter()
        .map(|(k, v)| (k.to_string(), serde_json::json!(v)))
        .collect();
    header.insert("__metadata__".into(), serde_json::Value::Object(meta));
    let mut data = Vec::new();
    for (name, dtype, shape, bytes) in tensors {
        header.insert(
            name.to_string(),
            serde_json::json!({"dtype": dtype, "shape": shape,
                "data_offsets": [data.len(), data.len() + bytes.len()]}),
        );
        data.extend_from_slice(bytes);
    }
    let mut h = serde_json::Value::Object(header).to_string().into_bytes();
    while !h.len().is_multiple_of(8) {
        h.push(b' ');
    }
    let mut out = (h.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&h);
    out.extend_from_slice(&data);
    std::fs::write(path, out).unwrap();
}

#[test]
fn a_safetensors_file_and_its_conversion_compare_equal() {
    let dir = tempfile::tempdir().unwrap();
    let st = dir.path().join("model.safetensors");
    let f32s: Vec<u8> = (0..24)
        .flat_map(|i| (i as f32 * 0.5 - 3.0).to_le_bytes())
        .collect();
    let bf16s: Vec<u8> = (0..8)
        .flat_map(|i| half::bf16::from_f32(i as f32 - 4.0).to_le_bytes())
        .collect();
    let i64s: Vec<u8> = (0..3)
        .flat_map(|i| (i as i64 * -1000).to_le_bytes())
        .collect();
    write_safetensors(
        &st,
        &[
            ("w", "F32", &[4, 6], f32s.clone()),
            ("b", "BF16", &[2, 4], bf16s),
            ("pos", "I64", &[3], i64s),
            ("mask", "BOOL", &[4], vec![1, 0, 0, 1]),
        ],
        &[("format", "pt"), ("note", "<b>hi</b>")],
    );
    let hr = dir.path().join("model.hrry");
    let (code, _, err) = hrry(&["convert", st.to_str().unwrap(), hr.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    for extra in [&[][..], &["--metadata-only"][..]] {
        let (code, doc) = diff_json(&st, &hr, extra);
        assert_eq!(code, 0, "{extra:?} {doc:#}");
        assert_eq!(doc["a"]["format"], "safetensors");
        assert_eq!(doc["b"]["format"], "hrryfile");
        assert_eq!(doc["equal_tensors"], 4, "{doc:#}");
    }
    // One value changed in the safetensors file is found in the HRRYFILE's terms.
    let other = dir.path().join("other.safetensors");
    let mut changed = f32s;
    changed[4 * 7..4 * 8].copy_from_slice(&100f32.to_le_bytes());
    write_safetensors(
        &other,
        &[("w", "F32", &[4, 6], changed)],
        &[("format", "pt")],
    );
    let (code, doc) = diff_json(&hr, &other, &[]);
    assert_eq!(code, 1);
    assert_eq!(doc["tensors"][0]["values"]["first_index"], 7);
    assert_eq!(
        doc["tensors"][0]["values"]["first_position"],
        serde_json::json!([1, 1])
    );
    assert_eq!(doc["only_in_a"], serde_json::json!(["b", "pos", "mask"]));
    // And to GGUF: the plain tensors compare equal there too.
    let gguf = dir.path().join("model.gguf");
    let (code, _, err) = hrry(&["convert", hr.to_str().unwrap(), gguf.to_str().unwrap()]);
    if code == 0 {
        let (_, doc) = diff_json(&st, &gguf, &[]);
        assert_eq!(doc["b"]["format"], "gguf");
        for t in doc["tensors"].as_array().unwrap() {
            assert_ne!(t["values"]["equal"], false, "{t:#}");
        }
    } else {
        eprintln!("no GGUF conversion of this model: {err}");
    }
}

#[test]
fn errors_exit_2() {
    let (code, _, err) = hrry(&["diff", "corpus/valid/basic.hrry", "no/such.hrry"]);
    assert_eq!(code, 2);
    assert!(err.contains("no/such.hrry"), "{err}");
    let (code, _, err) = hrry(&["diff", "corpus/valid/basic.hrry", "README.md"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, _) = hrry(&[
        "diff",
        "--tolerance",
        "-1",
        "corpus/valid/basic.hrry",
        "corpus/valid/basic.hrry",
    ]);
    assert_eq!(code, 2);
}

#[test]
fn inspect_stats_counts_values_and_checks_statistics_sections() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.hrry");
    let mut w = HrryWriter::new(Vec::new(), Default::default()).unwrap();
    w.write_row_major::<f32>(
        "w",
        &[2, 3],
        &[1.0, -2.0, 0.0, f32::NAN, f32::INFINITY, 4.0],
    )
    .unwrap();
    w.write_row_major::<i64>("n", &[3], &[0, 0, 9]).unwrap();
    std::fs::write(&path, w.finish().unwrap()).unwrap();
    let (code, out, err) = hrry(&["inspect", "--stats", "--json", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let s = &doc["tensors"][0]["stats"];
    assert_eq!(s["count"], 6);
    assert_eq!(
        (s["nan"].clone(), s["inf"].clone(), s["zeros"].clone()),
        (1.into(), 1.into(), 1.into())
    );
    assert_eq!(
        (s["min"].clone(), s["max"].clone()),
        ((-2.0).into(), 4.0.into())
    );
    assert_eq!(s["mean"], 0.75);
    let std = (((1.0f64 - 0.75).powi(2) + 2.75f64.powi(2) + 0.75f64.powi(2) + 3.25f64.powi(2))
        / 4.0)
        .sqrt();
    assert!((s["std"].as_f64().unwrap() - std).abs() < 1e-12);
    assert_eq!(doc["tensors"][1]["stats"]["zeros"], 2);
    assert_eq!(doc["total"]["elements"], 9);
    assert_eq!(doc["total"]["stored_bytes"], 6 * 4 + 3 * 8);
    assert_eq!(doc["findings"], serde_json::json!([]));

    // Quantization-aware: logical elements, and the bytes stored.
    let (_, out, _) = hrry(&[
        "inspect",
        "--stats",
        "--json",
        "corpus/valid/quant-per-block-int4-f16.hrry",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let p = &doc["parameters"][0];
    assert_eq!(p["dtype"], "int4 (per-block affine)", "{p}");
    assert!(p["bits_per_element"].as_f64().unwrap() < 8.0, "{p}");

    // A statistics section that disagrees with the values is a finding.
    let (code, out, _) = hrry(&["inspect", "--stats", "corpus/valid/shard_statistics.hrry"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("the statistics section's value_min is -1"),
        "{out}"
    );
}

#[test]
fn a_quantized_tensor_and_its_gguf_blocks_compare_on_dequantized_values() {
    use hrry::quant::{quantize_per_block, PerBlockOptions};
    let dir = tempfile::tempdir().unwrap();
    let values: Vec<f32> = (0..4 * 64)
        .map(|i| ((i * 37) % 101) as f32 / 20.0 - 2.5)
        .collect();
    let q = quantize_per_block(&values, &[4, 64], &PerBlockOptions::default()).unwrap();
    let mut w = HrryWriter::new(Vec::new(), Default::default()).unwrap();
    w.write_tensor("blk.0.weight", &q.descriptor, &q.buffer_slices())
        .unwrap();
    let hr = dir.path().join("q.hrry");
    std::fs::write(&hr, w.finish().unwrap()).unwrap();
    let gguf = dir.path().join("q.gguf");
    let (code, _, err) = hrry(&["convert", hr.to_str().unwrap(), gguf.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let (code, doc) = diff_json(&hr, &gguf, &["--tolerance", "1e-6"]);
    assert_eq!(code, 0, "{doc:#}");
    let t = &doc["tensors"][0];
    assert_eq!(t["values"]["equal"], true, "{t:#}");
    assert!(
        t["changes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["field"] == "quantization"),
        "{t:#}"
    );
    // The dequantized values, not the codes: a float32 twin of them is equal too.
    let twin = dir.path().join("f.hrry");
    write_twin(&twin, &[], &row_major_tensors(&hr));
    assert_eq!(diff_json(&gguf, &twin, &["--tolerance", "1e-6"]).0, 0);
}

#[test]
fn the_hrryfiles_inside_two_archives_compare_like_hrryfiles() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = |name: &str, values: &[f32]| {
        let p = dir.path().join(name);
        std::fs::write(&p, crate::report::archive(values)).expect("write");
        p
    };
    let a = path("a.holo", &[1.0, 2.0, 3.0]);
    let same = path("same.holo", &[1.0, 2.0, 3.0]);
    let changed = path("changed.holo", &[1.0, 2.0, 4.0]);
    let (code, doc) = diff_json(&a, &same, &[]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc["a"]["format"], "holo");
    // A Weights body and an Extension value are HRRYFILEs, of one tensor each.
    assert_eq!(doc["equal_tensors"], 2, "{doc}");
    let (code, doc) = diff_json(&a, &changed, &[]);
    assert_eq!(code, 1, "{doc}");
    let t = &doc["tensors"][0];
    assert_eq!(t["name"], "Weights[0]/w", "{doc}");
    assert_eq!(t["values"]["first_index"], 2);
    assert_eq!(t["values"]["max_abs_diff"], 1.0);
    assert_eq!(doc["tensors"].as_array().map(Vec::len), Some(1));
    // The opaque weight is compared by its fingerprint: unchanged.
    assert_eq!(doc["metadata"], serde_json::json!([]), "{doc}");
}

#[test]
fn two_streams_compare_on_their_tensors() {
    let dir = tempfile::tempdir().expect("temp dir");
    let stream = |name: &str, values: &[f32]| {
        let file = dir.path().join(format!("{name}.hrry"));
        std::fs::write(&file, crate::report::hrryfile("w", values)).expect("write");
        let out = dir.path().join(format!("{name}.hrrys"));
        let (code, _, err) = hrry(&[
            "stream",
            "pack",
            file.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{err}");
        out
    };
    let a = stream("a", &[1.0, 2.0, 3.0, 4.0]);
    let same = stream("same", &[1.0, 2.0, 3.0, 4.0]);
    let changed = stream("changed", &[1.0, 2.0, 3.0, -4.0]);
    let (code, doc) = diff_json(&a, &same, &[]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc["a"]["format"], "stream");
    assert_eq!(doc["equal_tensors"], 1);
    let (code, doc) = diff_json(&a, &changed, &[]);
    assert_eq!(code, 1, "{doc}");
    assert_eq!(doc["tensors"][0]["name"], "t0");
    assert_eq!(doc["tensors"][0]["values"]["first_index"], 3);
    assert_eq!(doc["tensors"][0]["values"]["max_abs_diff"], 8.0);
    // A conversation is not compared; a stream breaking a rule cannot be read.
    let messages =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/messages/valid/composite.hrrymsg");
    let broken =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/stream/invalid/HF-CMP-002.hrrys");
    for other in [messages, broken] {
        let (code, _, err) = hrry(&["diff", a.to_str().unwrap(), other.to_str().unwrap()]);
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains(other.file_name().unwrap().to_str().unwrap()),
            "{err}"
        );
    }
}

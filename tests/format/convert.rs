//! `hrry::convert`: safetensors round trips, GGUF metadata and tensors, refusals.

use std::collections::HashMap;
use std::path::Path;

use hrry::convert::gguf::GGUF_VALUE_TYPES_KEY;
use hrry::convert::gguf_schema::{
    GgufArray, GgufArrayValues, GgufKv, GgufPreamble, GgufString, GgufTensorInfo, GgufValue,
};
use hrry::convert::{
    convert, safetensors::read_all, Error, FloatType, ModelFormat, NoProgress, Options,
};
use hrry::file::HrryFile;
use hrry::schema::{to_bytes, KvScalar, KvValue, LenBytes};
use hrry::validate::Options as ValidateOptions;
use safetensors::tensor::TensorView;
use safetensors::Dtype;

fn assert_strictly_valid(path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    let report = hrry::Format::HrryFile.validate_bytes(&bytes, &ValidateOptions::default());
    assert!(
        report.violations.is_empty(),
        "{}: {:?}",
        path.display(),
        report.violations
    );
}

fn run(input: &Path, output: &Path, options: &Options) -> Result<hrry::convert::Summary, Error> {
    convert(input, output, options, &mut NoProgress)
}

/// Bytes for `n` elements of `bits` bits each, deterministic and varied.
fn pattern(n: usize, bits: usize, seed: u8) -> Vec<u8> {
    (0..n * bits / 8)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

#[test]
fn safetensors_round_trips_every_dtype_and_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let dtypes = [
        Dtype::BOOL,
        Dtype::F4,
        Dtype::F6_E2M3,
        Dtype::F6_E3M2,
        Dtype::U8,
        Dtype::I8,
        Dtype::F8_E5M2,
        Dtype::F8_E4M3,
        Dtype::F8_E8M0,
        Dtype::F8_E4M3FNUZ,
        Dtype::F8_E5M2FNUZ,
        Dtype::I16,
        Dtype::U16,
        Dtype::F16,
        Dtype::BF16,
        Dtype::I32,
        Dtype::U32,
        Dtype::F32,
        Dtype::C64,
        Dtype::F64,
        Dtype::I64,
        Dtype::U64,
    ];
    let shape = vec![3usize, 8];
    let mut data = Vec::new();
    for (i, &dt) in dtypes.iter().enumerate() {
        let mut bytes = pattern(24, dt.bitsize(), i as u8);
        if dt == Dtype::BOOL {
            bytes.iter_mut().for_each(|b| *b &= 1);
        }
        if dt == Dtype::F8_E8M0 {
            // 0x00 and 0xFF are reserved float8_e8m0 codes: a tensor holding them is
            // invalid (element-types.md), so the round trip uses 0x01-0xFE only.
            bytes.iter_mut().for_each(|b| *b = (*b).clamp(1, 0xFE));
        }
        data.push((format!("t.{dt}"), dt, bytes));
    }
    data.push(("scalar".into(), Dtype::F32, 1.5f32.to_le_bytes().to_vec()));
    data.push(("empty".into(), Dtype::F16, Vec::new()));
    let views: Vec<(String, TensorView)> = data
        .iter()
        .map(|(name, dt, bytes)| {
            let shape = match name.as_str() {
                "scalar" => vec![],
                "empty" => vec![0, 4],
                _ => shape.clone(),
            };
            (name.clone(), TensorView::new(*dt, shape, bytes).unwrap())
        })
        .collect();
    let metadata: HashMap<String, String> = [
        ("format".to_string(), "pt".to_string()),
        ("note".to_string(), "ünïcode ✓".to_string()),
    ]
    .into();
    let st = dir.path().join("in.safetensors");
    std::fs::write(
        &st,
        safetensors::serialize(views, Some(metadata.clone())).unwrap(),
    )
    .unwrap();

    let hrry_path = dir.path().join("mid.hrry");
    let summary = run(&st, &hrry_path, &Options::default()).unwrap();
    assert_eq!(summary.tensors, dtypes.len() + 2);
    assert_eq!(summary.metadata, 2);
    assert_strictly_valid(&hrry_path);

    let file = HrryFile::open(&hrry_path).unwrap();
    assert_eq!(
        file.kv_value("note"),
        Some(&KvValue::String(LenBytes {
            bytes: "ünïcode ✓".as_bytes().to_vec()
        }))
    );
    // BOOL is repacked to bits; F32 is stored as is.
    let b = file.tensor("t.BOOL").unwrap().unwrap();
    assert_eq!(b.descriptor.type_tag, 0x20);
    assert_eq!(b.buffers[0].len(), 3);
    let f = file.tensor("t.F32").unwrap().unwrap();
    assert_eq!(f.descriptor.shape, vec![3, 8]);
    assert_eq!(f.buffers[0], pattern(24, 32, 17).as_slice());
    let fnuz = file.tensor("t.F8_E4M3FNUZ").unwrap().unwrap();
    assert_eq!(fnuz.descriptor.type_tag, 0xF0);
    assert_eq!(fnuz.descriptor.extension_type.unwrap().exponent_bias, 8);
    drop(file);

    let back = dir.path().join("out.safetensors");
    let summary = run(&hrry_path, &back, &Options::default()).unwrap();
    assert!(summary.notes.is_empty(), "{:?}", summary.notes);
    let (original, original_meta) = read_all(&st).unwrap();
    let (round, round_meta) = read_all(&back).unwrap();
    assert_eq!(round_meta, original_meta);
    assert_eq!(round_meta, metadata);
    let sort = |mut v: Vec<(String, Dtype, Vec<usize>, Vec<u8>)>| {
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    };
    assert_eq!(sort(round), sort(original));
}

fn gguf_string(s: &str) -> GgufString {
    GgufString::from(s)
}

fn gguf_array(values: GgufArrayValues) -> GgufValue {
    GgufValue::Array(GgufArray { values })
}

fn kv(key: &str, value: GgufValue) -> GgufKv {
    GgufKv {
        key: gguf_string(key),
        value,
    }
}

/// A GGUF file: preamble, padding to `alignment`, then each tensor's bytes at its
/// offset (tensors are laid out in order, each padded to `alignment`).
fn gguf_file(
    mut metadata: Vec<GgufKv>,
    tensors: &[(&str, Vec<u64>, u32, Vec<u8>)],
    alignment: u64,
) -> Vec<u8> {
    if alignment != 32 {
        metadata.push(kv("general.alignment", GgufValue::Uint32(alignment as u32)));
    }
    let mut infos = Vec::new();
    let mut offset = 0u64;
    for (name, dims, ty, bytes) in tensors {
        infos.push(GgufTensorInfo {
            name: gguf_string(name),
            dimensions: dims.clone(),
            ggml_type: *ty,
            offset,
        });
        offset = (offset + bytes.len() as u64).next_multiple_of(alignment);
    }
    let mut out = to_bytes(&GgufPreamble {
        version: 3,
        metadata,
        tensors: infos,
    });
    for (_, _, _, bytes) in tensors {
        out.resize((out.len() as u64).next_multiple_of(alignment) as usize, 0);
        out.extend_from_slice(bytes);
    }
    out
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn gguf_metadata_and_dense_tensors() {
    let dir = tempfile::tempdir().unwrap();
    let metadata = vec![
        kv(
            "general.architecture",
            GgufValue::String(gguf_string("llama")),
        ),
        kv("u8", GgufValue::Uint8(200)),
        kv("i8", GgufValue::Int8(-100)),
        kv("u16", GgufValue::Uint16(60000)),
        kv("i16", GgufValue::Int16(-30000)),
        kv("u32", GgufValue::Uint32(4_000_000_000)),
        kv("i32", GgufValue::Int32(-2_000_000_000)),
        kv("f32", GgufValue::Float32(0.1)),
        kv("bool", GgufValue::Bool(1)),
        kv("u64", GgufValue::Uint64(u64::MAX)),
        kv("i64", GgufValue::Int64(i64::MIN)),
        kv("f64", GgufValue::Float64(-1e300)),
        kv(
            "tokens",
            gguf_array(GgufArrayValues::String(vec![
                gguf_string("<s>"),
                gguf_string("▁the"),
            ])),
        ),
        kv(
            "scores",
            gguf_array(GgufArrayValues::Float32(vec![0.5, -1.25])),
        ),
        kv("types", gguf_array(GgufArrayValues::Int32(vec![1, 3]))),
        kv(
            "nested",
            GgufValue::Array(GgufArray {
                values: GgufArrayValues::Array(vec![GgufArray {
                    values: GgufArrayValues::Bool(vec![1, 0]),
                }]),
            }),
        ),
    ];
    let w: Vec<f32> = (0..6).map(|i| i as f32 * 0.5 - 1.0).collect();
    let h: Vec<u8> = [1.0f32, -2.0]
        .iter()
        .flat_map(|&x| half::f16::from_f32(x).to_bits().to_le_bytes())
        .collect();
    let tensors = [
        ("w", vec![3, 2], 0, f32_bytes(&w)),
        ("h", vec![2], 1, h.clone()),
        (
            "idx",
            vec![1, 1, 3],
            26,
            vec![1, 0, 0, 0, 2, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF],
        ),
        ("bf", vec![1], 30, vec![0x80, 0x3F]),
    ];
    let path = dir.path().join("m.gguf");
    std::fs::write(&path, gguf_file(metadata, &tensors, 64)).unwrap();
    let out = dir.path().join("m.hrry");
    let summary = run(&path, &out, &Options::default()).unwrap();
    assert_eq!(summary.tensors, 4);
    // 16 pairs, general.alignment, and the record of their GGUF types.
    assert_eq!(summary.metadata, 18);
    assert_eq!(summary.notes.len(), 1, "{:?}", summary.notes);
    assert_strictly_valid(&out);

    let file = HrryFile::open(&out).unwrap();
    let v = |k: &str| file.kv_value(k).cloned().unwrap();
    assert_eq!(v("u8"), KvValue::Uint64(200));
    assert_eq!(v("i8"), KvValue::Int64(-100));
    assert_eq!(v("u32"), KvValue::Uint64(4_000_000_000));
    assert_eq!(v("i32"), KvValue::Int64(-2_000_000_000));
    assert_eq!(v("f32"), KvValue::Float64(f64::from(0.1f32)));
    assert_eq!(v("bool"), KvValue::Bool(1));
    assert_eq!(v("u64"), KvValue::Uint64(u64::MAX));
    assert_eq!(v("i64"), KvValue::Int64(i64::MIN));
    assert_eq!(v("f64"), KvValue::Float64(-1e300));
    assert_eq!(v("general.alignment"), KvValue::Uint64(64));
    let KvValue::String(types) = v(GGUF_VALUE_TYPES_KEY) else {
        panic!("no GGUF value types");
    };
    let types: serde_json::Value = serde_json::from_slice(&types.bytes).unwrap();
    assert_eq!(types["u32"], "uint32");
    assert_eq!(types["i8"], "int8");
    assert_eq!(types["f32"], "float32");
    assert_eq!(types["tokens"], "array<string>");
    assert_eq!(types["types"], "array<int32>");
    assert_eq!(types["nested"], "array<array>");
    assert_eq!(types["general.alignment"], "uint32");
    match v("tokens") {
        KvValue::Array(a) => {
            assert_eq!(a.element_tag, 0x01);
            assert_eq!(
                a.get(1).unwrap().to_scalar(),
                KvScalar::String(LenBytes {
                    bytes: "▁the".as_bytes().to_vec()
                })
            );
        }
        other => panic!("{other:?}"),
    }
    match v("scores") {
        KvValue::Array(a) => assert_eq!(
            a.to_scalars(),
            vec![KvScalar::Float64(0.5), KvScalar::Float64(-1.25)]
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        v("nested"),
        KvValue::String(LenBytes {
            bytes: b"[[true,false]]".to_vec()
        })
    );
    let t = file.tensor("w").unwrap().unwrap();
    assert_eq!(t.descriptor.shape, vec![2, 3]);
    assert_eq!(t.descriptor.type_tag, 0x03);
    assert_eq!(t.buffers[0], f32_bytes(&w).as_slice());
    let t = file.tensor("h").unwrap().unwrap();
    assert_eq!((t.descriptor.type_tag, t.buffers[0]), (0x01, h.as_slice()));
    let t = file.tensor("idx").unwrap().unwrap();
    assert_eq!(t.descriptor.shape, vec![3, 1, 1]);
    assert_eq!(t.descriptor.type_tag, 0x14);
    let t = file.tensor("bf").unwrap().unwrap();
    assert_eq!(
        (t.descriptor.type_tag, t.buffers[0]),
        (0x02, &[0x80, 0x3F][..])
    );
}

/// One Q4_K super-block: d = 1.0, dmin = 0.5, scales/mins and codes varied.
fn q4_k_block() -> Vec<u8> {
    let mut b = Vec::new();
    b.extend(half::f16::from_f32(1.0).to_bits().to_le_bytes());
    b.extend(half::f16::from_f32(0.5).to_bits().to_le_bytes());
    b.extend((0..12u8).map(|i| i.wrapping_mul(23)));
    b.extend((0..128u8).map(|i| i.wrapping_mul(7)));
    b
}

#[test]
fn gguf_unsupported_types_are_refused_or_dequantized() {
    let dir = tempfile::tempdir().unwrap();
    let tensors = [
        ("ok", vec![2], 0, f32_bytes(&[1.0, 2.0])),
        ("blk.0.ffn_down.weight", vec![256], 12, q4_k_block()),
    ];
    let path = dir.path().join("k.gguf");
    std::fs::write(&path, gguf_file(Vec::new(), &tensors, 32)).unwrap();
    let out = dir.path().join("k.hrry");
    let err = run(&path, &out, &Options::default()).unwrap_err();
    let message = err.to_string();
    assert!(message.contains("blk.0.ffn_down.weight"), "{message}");
    assert!(message.contains("Q4_K"), "{message}");
    assert!(message.contains("--dequantize-unsupported"), "{message}");
    assert!(!out.exists());
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "a temporary file was left behind");

    for dtype in [FloatType::F32, FloatType::F16] {
        let options = Options {
            dequantize_unsupported: true,
            dtype,
            ..Options::default()
        };
        let summary = run(&path, &out, &options).unwrap();
        assert_eq!(summary.tensors, 2);
        assert_strictly_valid(&out);
        let file = HrryFile::open(&out).unwrap();
        let t = file.tensor("blk.0.ffn_down.weight").unwrap().unwrap();
        assert_eq!(t.descriptor.shape, vec![256]);
        assert_eq!(t.descriptor.type_tag, dtype.element_type().tag());
        // Element 0: sub-block 0: sc = 0, m = byte 4 (92) & 63 = 28 -> -0.5 * 28.
        // Element 32: sub-block 1: sc = 23 & 63 = 23, m = byte 5 (115) & 63 = 51;
        // code = low nibble of qs[0] = 0 -> 1.0 * 23 * 0 - 0.5 * 51 = -25.5.
        let value = |i: usize| match dtype {
            FloatType::F32 => {
                f32::from_le_bytes(t.buffers[0][i * 4..i * 4 + 4].try_into().unwrap())
            }
            _ => half::f16::from_le_bytes(t.buffers[0][i * 2..i * 2 + 2].try_into().unwrap())
                .to_f32(),
        };
        assert_eq!(value(0), -14.0);
        assert_eq!(value(32), -25.5);
    }
}

#[test]
fn safetensors_e8m0_codes_a_hrryfile_reserves_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.hrry");
    // Over one piece, so that the element index counts across pieces.
    let n = (4 << 20) + 100;
    for (code, at) in [(0xFFu8, n - 3), (0x00, 0), (0x00, 4 << 20)] {
        let mut codes = vec![0x7Fu8; n];
        codes[at] = code;
        let st = dir.path().join("e8m0.safetensors");
        let ok = ("ok", Dtype::F8_E8M0, vec![4], vec![1, 0x7F, 0xFE, 0x80]);
        write_safetensors(&st, &[ok, ("scales", Dtype::F8_E8M0, vec![n], codes)], &[]);
        let e = run(&st, &out, &Options::default()).unwrap_err().to_string();
        let want = format!(
            "unsupported: tensor \"scales\": element {at} is the float8_e8m0 code 0x{code:02X}"
        );
        assert!(e.starts_with(&want) && e.contains("TD-TYP-002"), "{e}");
        assert!(!out.exists());
    }
}

#[test]
fn malformed_inputs_fail_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.hrry");
    let tensors = [("w", vec![4], 0, f32_bytes(&[1.0, 2.0, 3.0, 4.0]))];
    let good = gguf_file(vec![kv("a", GgufValue::Uint8(1))], &tensors, 32);
    // Every truncation fails without a panic and without leaving an output.
    for cut in (0..good.len()).step_by(7) {
        let path = dir.path().join("t.gguf");
        std::fs::write(&path, &good[..cut]).unwrap();
        assert!(
            run(&path, &out, &Options::default()).is_err(),
            "cut at {cut}"
        );
        assert!(!out.exists());
    }
    // A tensor extending past the end.
    let mut bad = good.clone();
    bad.truncate(bad.len() - 1);
    let path = dir.path().join("short.gguf");
    std::fs::write(&path, &bad).unwrap();
    let e = run(&path, &out, &Options::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("\"w\"") && e.contains("past the end"), "{e}");
    // Version 1 and big-endian files are named.
    let mut v1 = good.clone();
    v1[4..8].copy_from_slice(&1u32.to_le_bytes());
    std::fs::write(&path, &v1).unwrap();
    let e = run(&path, &out, &Options::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("version 1"), "{e}");
    let mut be = good.clone();
    be[4..8].copy_from_slice(&3u32.to_be_bytes());
    std::fs::write(&path, &be).unwrap();
    let e = run(&path, &out, &Options::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("big-endian"), "{e}");
    // A safetensors header that does not account for the file.
    let mut st = safetensors::serialize(
        [("a", TensorView::new(Dtype::U8, vec![2], &[1, 2]).unwrap())],
        None,
    )
    .unwrap();
    st.push(0);
    let path = dir.path().join("x.safetensors");
    std::fs::write(&path, &st).unwrap();
    let e = run(&path, &out, &Options::default()).unwrap_err();
    assert!(
        matches!(&e, Error::Format(m) if m.starts_with("safetensors: ")),
        "{e}"
    );
    // Unknown formats and unsupported directions.
    std::fs::write(&path, b"PK\x03\x04 not a model").unwrap();
    assert!(run(&path, &out, &Options::default()).is_err());
    let gguf = dir.path().join("m.gguf");
    std::fs::write(&gguf, &good).unwrap();
    let e = run(&gguf, &dir.path().join("copy.gguf"), &Options::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("not supported"), "{e}");
    // GGUF to safetensors goes through a HRRYFILE in one run.
    let summary = run(
        &gguf,
        &dir.path().join("m.safetensors"),
        &Options::default(),
    )
    .unwrap();
    assert_eq!(
        (summary.from, summary.to),
        (ModelFormat::Gguf, ModelFormat::Safetensors)
    );
}

#[test]
fn gguf_q8_0_and_q4_0_become_per_block_affine() {
    let dir = tempfile::tempdir().unwrap();
    let (mut q8, mut want8, mut q4, mut want4) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for b in 0..4usize {
        // Block 2 has a zero scale, which Hurray stores as the smallest float16.
        let d = half::f16::from_f32(if b == 2 { 0.0 } else { 0.25 * (b as f32 + 1.0) });
        q8.extend(d.to_bits().to_le_bytes());
        q4.extend(d.to_bits().to_le_bytes());
        let codes: Vec<u8> = (0..32).map(|i| ((b * 32 + i) * 5 % 16) as u8).collect();
        for (i, &c) in codes.iter().enumerate() {
            let q = (((b * 32 + i) * 7 % 255) as i32 - 127) as i8;
            q8.push(q as u8);
            want8.push(f32::from(q) * d.to_f32());
            want4.push(d.to_f32() * f32::from(c as i8 - 8));
        }
        q4.extend((0..16).map(|j| codes[j] | (codes[j + 16] << 4)));
    }
    let tensors = [("q8", vec![64, 2], 8, q8), ("q4", vec![32, 2, 2], 2, q4)];
    let path = dir.path().join("q.gguf");
    std::fs::write(&path, gguf_file(Vec::new(), &tensors, 32)).unwrap();
    let out = dir.path().join("q.hrry");
    run(&path, &out, &Options::default()).unwrap();
    assert_strictly_valid(&out);
    let file = HrryFile::open(&out).unwrap();
    for (name, want, storage, shape) in [
        ("q8", &want8, 0x10, vec![2, 64]),
        ("q4", &want4, 0x48, vec![2, 2, 32]),
    ] {
        let t = file.tensor(name).unwrap().unwrap();
        assert_eq!(t.descriptor.type_tag, storage);
        assert_eq!(t.descriptor.shape, shape);
        assert_eq!(t.buffers[1].len(), 8, "four float16 scales");
        let got = hrry::quant::dequantize(t.descriptor, &t.buffers).unwrap();
        assert_eq!(&got, want, "{name}");
    }
    drop(file);

    // Back to safetensors: dequantized float32 (or float16) values.
    let st = dir.path().join("q.safetensors");
    run(&out, &st, &Options::default()).unwrap();
    let (tensors, _) = read_all(&st).unwrap();
    for (name, dtype, shape, bytes) in tensors {
        assert_eq!(dtype, Dtype::F32);
        let want = if name == "q8" { &want8 } else { &want4 };
        let got: Vec<f32> = bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(&got, want, "{name}");
        assert_eq!(shape.iter().product::<usize>(), 128);
    }
    let options = Options {
        dtype: FloatType::Bf16,
        ..Options::default()
    };
    run(&out, &st, &options).unwrap();
    let (tensors, _) = read_all(&st).unwrap();
    let q8 = tensors.iter().find(|t| t.0 == "q8").unwrap();
    assert_eq!(q8.1, Dtype::BF16);
    let first = half::bf16::from_le_bytes(q8.3[..2].try_into().unwrap());
    assert_eq!(first, half::bf16::from_f32(want8[0]));
}

/// Writes a safetensors file of `tensors` (name, dtype, shape, bytes) and metadata.
fn write_safetensors(
    path: &Path,
    tensors: &[(&str, Dtype, Vec<usize>, Vec<u8>)],
    metadata: &[(&str, &str)],
) {
    let views: Vec<(String, TensorView)> = tensors
        .iter()
        .map(|(n, dt, shape, bytes)| {
            (
                n.to_string(),
                TensorView::new(*dt, shape.clone(), bytes).unwrap(),
            )
        })
        .collect();
    let meta: HashMap<String, String> = metadata
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let bytes = safetensors::serialize(views, (!meta.is_empty()).then_some(meta)).unwrap();
    std::fs::write(path, bytes).unwrap();
}

type StTensors = Vec<(&'static str, Dtype, Vec<usize>, Vec<u8>)>;

/// Three shards (tensors of several dtypes, an empty one, booleans) and the
/// tensors each holds, written into `dir` with an index; returns the index path.
fn sharded_checkpoint(dir: &Path) -> (std::path::PathBuf, Vec<StTensors>) {
    let shards: Vec<StTensors> = vec![
        vec![
            (
                "model.embed.weight",
                Dtype::F32,
                vec![4, 3],
                pattern(12, 32, 1),
            ),
            ("model.norm.weight", Dtype::BF16, vec![5], pattern(5, 16, 2)),
        ],
        vec![
            (
                "model.mask",
                Dtype::BOOL,
                vec![11],
                (0..11u8).map(|i| (i % 3) & 1).collect(),
            ),
            ("model.ids", Dtype::I64, vec![2, 2], pattern(4, 64, 3)),
        ],
        vec![
            ("lm_head.weight", Dtype::F16, vec![3, 4], pattern(12, 16, 4)),
            ("model.empty", Dtype::F32, vec![0, 7], Vec::new()),
        ],
    ];
    let mut weight_map = serde_json::Map::new();
    for (i, shard) in shards.iter().enumerate() {
        let name = format!("model-{:05}-of-00003.safetensors", i + 1);
        let metadata: &[(&str, &str)] = if i == 1 {
            &[("format", "pt"), ("note", "shard two")]
        } else {
            &[("format", "pt")]
        };
        write_safetensors(&dir.join(&name), shard, metadata);
        for t in shard {
            weight_map.insert(t.0.to_string(), name.clone().into());
        }
    }
    let index = serde_json::json!({
        "metadata": {"total_size": 48 + 10 + 11 + 32 + 24},
        "weight_map": weight_map,
    });
    let path = dir.join("model.safetensors.index.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&index).unwrap()).unwrap();
    (path, shards)
}

fn kv_text(file: &HrryFile, key: &str) -> String {
    match file.kv_value(key) {
        Some(KvValue::String(s)) => String::from_utf8(s.bytes.clone()).unwrap(),
        other => panic!("{key}: {other:?}"),
    }
}

#[test]
fn sharded_safetensors_checkpoint_becomes_one_file() {
    let dir = tempfile::tempdir().unwrap();
    let (index, shards) = sharded_checkpoint(dir.path());
    let out = dir.path().join("out").with_extension("hrry");
    let summary = run(&index, &out, &Options::default()).unwrap();
    assert_eq!(summary.tensors, 6);
    assert_strictly_valid(&out);

    let file = HrryFile::open(&out).unwrap();
    // Tensors in shard order, then data order.
    let names: Vec<&str> = file.entries().map(|e| e.name()).collect();
    let want: Vec<&str> = shards
        .iter()
        .flat_map(|s| {
            let mut v: Vec<&(&str, Dtype, Vec<usize>, Vec<u8>)> = s.iter().collect();
            // safetensors lays data out by descending alignment, then name.
            v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
            v.into_iter().map(|t| t.0)
        })
        .collect();
    assert_eq!(names, want);
    assert_eq!(kv_text(&file, "format"), "pt");
    assert_eq!(kv_text(&file, "note"), "shard two");
    match file.kv_value(hrry::convert::checkpoint::SOURCE_FILES_KEY) {
        Some(KvValue::Array(a)) => assert_eq!(
            a.to_scalars(),
            (1..=3)
                .map(|i| KvScalar::String(LenBytes {
                    bytes: format!("model-{i:05}-of-00003.safetensors").into_bytes()
                }))
                .collect::<Vec<_>>()
        ),
        other => panic!("{other:?}"),
    }
    for (i, shard) in shards.iter().enumerate() {
        for t in shard {
            let key = format!("{}{}", hrry::convert::checkpoint::SOURCE_TENSOR_PREFIX, t.0);
            assert_eq!(
                kv_text(&file, &key),
                format!("model-{:05}-of-00003.safetensors", i + 1)
            );
        }
    }
    assert_eq!(
        kv_text(&file, hrry::convert::checkpoint::SOURCE_INDEX_KEY),
        "model.safetensors.index.json"
    );
    let meta: serde_json::Value = serde_json::from_str(&kv_text(
        &file,
        hrry::convert::checkpoint::SOURCE_INDEX_METADATA_KEY,
    ))
    .unwrap();
    assert_eq!(meta["total_size"], 125);
    drop(file);

    // Back to one safetensors file: every tensor equals its shard's.
    let back = dir.path().join("back.safetensors");
    run(&out, &back, &Options::default()).unwrap();
    let (mut got, _) = read_all(&back).unwrap();
    let mut want: Vec<(String, Dtype, Vec<usize>, Vec<u8>)> = Vec::new();
    for i in 1..=3 {
        let (t, _) = read_all(
            &dir.path()
                .join(format!("model-{i:05}-of-00003.safetensors")),
        )
        .unwrap();
        want.extend(t);
    }
    got.sort_by(|a, b| a.0.cmp(&b.0));
    want.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(got, want);

    // The directory names the same checkpoint.
    let from_dir = dir.path().join("from_dir.hrry");
    run(dir.path(), &from_dir, &Options::default()).unwrap();
    assert_eq!(
        std::fs::read(&from_dir).unwrap(),
        std::fs::read(&out).unwrap()
    );
}

/// Runs a conversion expected to fail with a malformed checkpoint (`Error::Format`) mentioning `needle`
/// and leave no output.
fn expect_checkpoint_error(input: &Path, needle: &str) {
    let out = input.with_file_name("refused.hrry");
    match run(input, &out, &Options::default()) {
        Err(e @ Error::Format(_)) => {
            assert!(e.to_string().contains(needle), "{e} (wanted {needle:?})")
        }
        other => panic!("{needle}: {other:?}"),
    }
    assert!(!out.exists());
}

#[test]
fn malformed_checkpoints_fail_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let (index, _) = sharded_checkpoint(dir.path());
    let original: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&index).unwrap()).unwrap();
    let with = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut v = original.clone();
        edit(&mut v);
        std::fs::write(&index, serde_json::to_vec(&v).unwrap()).unwrap();
    };
    std::fs::write(&index, b"{\"weight_map\": {").unwrap();
    expect_checkpoint_error(&index, "not valid JSON");
    std::fs::write(&index, b"[1, 2]").unwrap();
    expect_checkpoint_error(&index, "not a JSON object");
    with(&|v| {
        v.as_object_mut().unwrap().remove("weight_map");
    });
    expect_checkpoint_error(&index, "no \"weight_map\"");
    with(&|v| v["weight_map"]["model.ids"] = 3.into());
    expect_checkpoint_error(&index, "not a shard file name");
    with(&|v| v["weight_map"]["model.ids"] = "../model-00002-of-00003.safetensors".into());
    expect_checkpoint_error(&index, "relative paths");
    with(&|v| v["weight_map"]["model.ids"] = "missing.safetensors".into());
    expect_checkpoint_error(
        &index,
        "\"missing.safetensors\" (holding \"model.ids\") cannot be opened",
    );
    with(&|v| v["weight_map"]["model.ids"] = "model-00001-of-00003.safetensors".into());
    expect_checkpoint_error(&index, "tensor \"model.ids\" is in \"model-00002-of-00003.safetensors\" but the index maps it to \"model-00001-of-00003.safetensors\"");
    with(&|v| {
        v["weight_map"].as_object_mut().unwrap().remove("model.ids");
    });
    expect_checkpoint_error(&index, "the index does not list it");
    with(&|v| v["weight_map"]["ghost"] = "model-00003-of-00003.safetensors".into());
    expect_checkpoint_error(
        &index,
        "maps tensor \"ghost\" to \"model-00003-of-00003.safetensors\", which does not hold it",
    );
    with(&|v| v["metadata"] = "big".into());
    expect_checkpoint_error(&index, "not an object");

    // Shards that disagree about __metadata__.
    with(&|_| {});
    let shard3 = dir.path().join("model-00003-of-00003.safetensors");
    let saved = std::fs::read(&shard3).unwrap();
    write_safetensors(
        &shard3,
        &[
            ("lm_head.weight", Dtype::F16, vec![3, 4], pattern(12, 16, 4)),
            ("model.empty", Dtype::F32, vec![0, 7], Vec::new()),
        ],
        &[("format", "np")],
    );
    expect_checkpoint_error(&index, "__metadata__ \"format\" is \"np\" here but \"pt\"");
    // A truncated shard: the safetensors error names the shard.
    std::fs::write(&shard3, &saved[..saved.len() - 1]).unwrap();
    let e = run(&index, &dir.path().join("x.hrry"), &Options::default()).unwrap_err();
    assert!(
        matches!(&e, Error::Format(m) if m.contains("safetensors: ")),
        "{e}"
    );
    assert!(
        e.to_string().contains("model-00003-of-00003.safetensors"),
        "{e}"
    );
    std::fs::write(&shard3, &saved).unwrap();

    // Directories: two indexes, or nothing to convert. The user must name the
    // file: not a malformed checkpoint.
    std::fs::write(dir.path().join("other.safetensors.index.json"), b"{}").unwrap();
    let e = run(
        dir.path(),
        &dir.path().join("two.hrry"),
        &Options::default(),
    )
    .unwrap_err();
    assert!(matches!(e, Error::Usage(_)), "{e:?}");
    assert!(e.to_string().contains("several index files"), "{e}");
    let empty = tempfile::tempdir().unwrap();
    let out = dir.path().join("from-empty.hrry");
    let e = run(empty.path(), &out, &Options::default()).unwrap_err();
    assert!(matches!(e, Error::Usage(_)), "{e:?}");
    assert!(e.to_string().contains("no *.index.json"), "{e}");
}

fn split_kv(no: u16, count: u16, tensors: i32) -> Vec<GgufKv> {
    vec![
        kv("split.no", GgufValue::Uint16(no)),
        kv("split.count", GgufValue::Uint16(count)),
        kv("split.tensors.count", GgufValue::Int32(tensors)),
    ]
}

/// One Q8_0 block of scale `d` and codes from `seed`.
fn q8_0_block(d: f32, seed: u8) -> Vec<u8> {
    let mut b = half::f16::from_f32(d).to_bits().to_le_bytes().to_vec();
    b.extend((0..32u8).map(|i| i.wrapping_mul(seed).wrapping_add(seed)));
    b
}

/// One Q4_0 block of scale `d` and nibbles from `seed`.
fn q4_0_block(d: f32, seed: u8) -> Vec<u8> {
    let mut b = half::f16::from_f32(d).to_bits().to_le_bytes().to_vec();
    b.extend((0..16u8).map(|i| i.wrapping_mul(seed).wrapping_add(seed >> 1)));
    b
}

type GgufTensors = Vec<(&'static str, Vec<u64>, u32, Vec<u8>)>;

/// Tensors for the GGUF tests: dense types, and Q8_0 / Q4_0 with a zero block
/// as GGUF quantizes one (scale 0, value-0 codes).
fn gguf_tensors() -> GgufTensors {
    let mut q8 = q8_0_block(0.5, 3);
    q8.extend([0u8; 34]);
    q8.extend(q8_0_block(-0.25, 7));
    q8.extend(q8_0_block(2.0, 9));
    let mut q4 = q4_0_block(1.5, 5);
    q4.extend([0, 0]);
    q4.extend([0x88u8; 16]);
    vec![
        ("token_embd.weight", vec![64, 2], 8, q8),
        ("blk.0.attn_q.weight", vec![32, 2], 2, q4),
        (
            "blk.0.attn_norm.weight",
            vec![3],
            0,
            f32_bytes(&[1.0, -2.5, 0.125]),
        ),
        ("output.weight", vec![2, 2], 1, pattern(4, 16, 5)),
        ("blk.0.bf", vec![2], 30, pattern(2, 16, 6)),
        ("idx", vec![3], 26, pattern(3, 32, 7)),
        ("f64", vec![1, 2], 28, pattern(2, 64, 8)),
    ]
}

fn gguf_metadata() -> Vec<GgufKv> {
    vec![
        kv(
            "general.architecture",
            GgufValue::String(gguf_string("llama")),
        ),
        kv("llama.block_count", GgufValue::Uint32(1)),
        kv("llama.rope.freq_base", GgufValue::Float32(10000.0)),
        kv("u8", GgufValue::Uint8(200)),
        kv("i16", GgufValue::Int16(-300)),
        kv("flag", GgufValue::Bool(1)),
        kv("big", GgufValue::Uint64(u64::MAX)),
        kv("neg", GgufValue::Int64(i64::MIN)),
        kv("f64", GgufValue::Float64(-1e300)),
        kv(
            "tokenizer.ggml.tokens",
            gguf_array(GgufArrayValues::String(vec![
                gguf_string("<s>"),
                gguf_string("▁a"),
            ])),
        ),
        kv(
            "tokenizer.ggml.scores",
            gguf_array(GgufArrayValues::Float32(vec![0.0, -1.5])),
        ),
        kv(
            "tokenizer.ggml.token_type",
            gguf_array(GgufArrayValues::Int32(vec![3, 1])),
        ),
        kv(
            "bytes",
            GgufValue::String(GgufString {
                bytes: vec![0xFF, 0x00],
            }),
        ),
    ]
}

#[test]
fn gguf_split_set_becomes_one_file() {
    let dir = tempfile::tempdir().unwrap();
    let tensors = gguf_tensors();
    let whole = dir.path().join("whole.gguf");
    std::fs::write(&whole, gguf_file(gguf_metadata(), &tensors, 32)).unwrap();
    // Three splits: metadata in the first, 3 + 2 + 2 tensors.
    let parts = [&tensors[..3], &tensors[3..5], &tensors[5..]];
    for (i, part) in parts.iter().enumerate() {
        let mut metadata = if i == 0 { gguf_metadata() } else { Vec::new() };
        metadata.extend(split_kv(i as u16, 3, 7));
        let path = dir.path().join(format!("m-{:05}-of-00003.gguf", i + 1));
        std::fs::write(&path, gguf_file(metadata, part, 32)).unwrap();
    }
    let one = dir.path().join("one.hrry");
    run(&whole, &one, &Options::default()).unwrap();
    let out = dir.path().join("split.hrry");
    // Any split names the set.
    let summary = run(
        &dir.path().join("m-00002-of-00003.gguf"),
        &out,
        &Options::default(),
    )
    .unwrap();
    assert_eq!(summary.tensors, 7);
    assert!(
        summary.notes.iter().any(|n| n.contains("3 split files")),
        "{:?}",
        summary.notes
    );
    assert_strictly_valid(&out);
    let (a, b) = (HrryFile::open(&one).unwrap(), HrryFile::open(&out).unwrap());
    assert_eq!(a.len(), b.len());
    for e in a.entries() {
        let (x, y) = (
            a.tensor(e.name()).unwrap().unwrap(),
            b.tensor(e.name()).unwrap().unwrap(),
        );
        assert_eq!(x.descriptor, y.descriptor, "{}", e.name());
        assert_eq!(x.buffers, y.buffers, "{}", e.name());
    }
    // The same metadata, without split.*, plus where each tensor came from.
    for kv in a.kv() {
        assert_eq!(
            b.kv_value(std::str::from_utf8(&kv.key).unwrap()),
            Some(&kv.value)
        );
    }
    assert!(b.kv_value("split.count").is_none());
    assert_eq!(
        kv_text(
            &b,
            &format!(
                "{}output.weight",
                hrry::convert::checkpoint::SOURCE_TENSOR_PREFIX
            )
        ),
        "m-00002-of-00003.gguf"
    );
    assert_eq!(b.kv().len(), a.kv().len() + 1 + 7);
    // The directory names it too.
    std::fs::remove_file(&whole).unwrap();
    let from_dir = dir.path().join("dir.hrry");
    run(dir.path(), &from_dir, &Options::default()).unwrap();
    assert_eq!(
        std::fs::read(&from_dir).unwrap(),
        std::fs::read(&out).unwrap()
    );
}

#[test]
fn inconsistent_gguf_splits_fail_cleanly() {
    let tensors = gguf_tensors();
    let make = |edit: &dyn Fn(usize, &mut Vec<GgufKv>, &mut GgufTensors)| {
        let dir = tempfile::tempdir().unwrap();
        let parts = [
            tensors[..3].to_vec(),
            tensors[3..5].to_vec(),
            tensors[5..].to_vec(),
        ];
        for (i, mut part) in parts.into_iter().enumerate() {
            let mut metadata = if i == 0 { gguf_metadata() } else { Vec::new() };
            metadata.extend(split_kv(i as u16, 3, 7));
            edit(i, &mut metadata, &mut part);
            let path = dir.path().join(format!("m-{:05}-of-00003.gguf", i + 1));
            std::fs::write(&path, gguf_file(metadata, &part, 32)).unwrap();
        }
        dir
    };
    let first = |d: &tempfile::TempDir| d.path().join("m-00001-of-00003.gguf");
    let set_kv = |m: &mut Vec<GgufKv>, key: &str, value: GgufValue| {
        m.iter_mut()
            .find(|k| k.key.bytes == key.as_bytes())
            .unwrap()
            .value = value;
    };

    let d = make(&|_, _, _| {});
    std::fs::remove_file(d.path().join("m-00003-of-00003.gguf")).unwrap();
    expect_checkpoint_error(&first(&d), "split 3 of 3 cannot be opened");

    let d = make(&|i, m, _| {
        if i == 1 {
            set_kv(m, "split.count", GgufValue::Uint16(4));
        }
    });
    expect_checkpoint_error(
        &first(&d),
        "expected split 2 of 3, its KV says split 2 of 4",
    );

    let d = make(&|i, m, _| {
        if i == 2 {
            set_kv(m, "split.no", GgufValue::Uint16(1));
        }
    });
    expect_checkpoint_error(
        &first(&d),
        "expected split 3 of 3, its KV says split 2 of 3",
    );

    let d = make(&|i, m, _| {
        if i == 2 {
            m.clear();
        }
    });
    expect_checkpoint_error(&first(&d), "it is not a split");

    let d = make(&|_, m, _| set_kv(m, "split.tensors.count", GgufValue::Int32(8)));
    expect_checkpoint_error(
        &first(&d),
        "split.tensors.count is 8 but the 3 splits hold 7 tensors",
    );

    let d = make(&|i, m, _| {
        if i == 1 {
            set_kv(m, "split.tensors.count", GgufValue::Int32(6));
        }
    });
    expect_checkpoint_error(&first(&d), "split.tensors.count differs");

    let d = make(&|i, _, part| {
        if i == 2 {
            part[0].0 = "output.weight";
        }
    });
    expect_checkpoint_error(
        &first(&d),
        "tensor \"output.weight\" is in more than one split",
    );

    let d = make(&|i, m, _| {
        if i == 2 {
            m.push(kv(
                "general.architecture",
                GgufValue::String(gguf_string("qwen")),
            ));
        }
    });
    expect_checkpoint_error(&first(&d), "metadata \"general.architecture\" differs");

    // A split whose name does not follow the pattern.
    let d = make(&|_, _, _| {});
    let renamed = d.path().join("model.gguf");
    std::fs::rename(first(&d), &renamed).unwrap();
    expect_checkpoint_error(&renamed, "does not end in -NNNNN-of-MMMMM.gguf");
    let wrong = d.path().join("m-00002-of-00005.gguf");
    std::fs::rename(&renamed, &wrong).unwrap();
    expect_checkpoint_error(
        &wrong,
        "the name says split 2 of 5, the KV says split 1 of 3",
    );
}

#[test]
fn hrry_to_gguf_gives_the_gguf_back() {
    let dir = tempfile::tempdir().unwrap();
    let original = gguf_file(gguf_metadata(), &gguf_tensors(), 32);
    let src = dir.path().join("a.gguf");
    std::fs::write(&src, &original).unwrap();
    let mid = dir.path().join("a.hrry");
    run(&src, &mid, &Options::default()).unwrap();
    let back = dir.path().join("b.gguf");
    let summary = run(&mid, &back, &Options::default()).unwrap();
    assert_eq!(summary.tensors, 7);
    assert!(summary.notes.is_empty(), "{:?}", summary.notes);
    // Same metadata (types restored), tensor infos, and Q8_0 / Q4_0 blocks byte
    // for byte, zero blocks included: the whole file.
    let got = std::fs::read(&back).unwrap();
    let (p, _) = hrry::schema::read_from::<GgufPreamble>(&got).unwrap();
    let (q, _) = hrry::schema::read_from::<GgufPreamble>(&original).unwrap();
    assert_eq!(p, q);
    assert_eq!(got, original);

    // Without the recorded types, values keep their widened types.
    let options = Options {
        to: Some(hrry::convert::ModelFormat::Gguf),
        ..Options::default()
    };
    let st = dir.path().join("c.safetensors");
    let st_tensors = vec![("w", Dtype::F32, vec![2], f32_bytes(&[1.0, 2.0]))];
    write_safetensors(&st, &st_tensors, &[("format", "pt")]);
    let h = dir.path().join("c.hrry");
    run(&st, &h, &Options::default()).unwrap();
    let out = dir.path().join("c.bin");
    run(&h, &out, &options).unwrap();
    let bytes = std::fs::read(&out).unwrap();
    let (p, _) = hrry::schema::read_from::<GgufPreamble>(&bytes).unwrap();
    assert_eq!(
        p.value("format"),
        Some(&GgufValue::String(gguf_string("pt")))
    );
    assert_eq!(p.tensors[0].ggml_type, 0);
    assert_eq!(p.tensors[0].dimensions, vec![2]);
}

#[test]
fn hrry_to_gguf_refuses_what_gguf_cannot_hold_unless_asked() {
    use hrry::file::{HrryWriter, WriterOptions};
    use hrry::model::{build::dense, ElementType};
    use hrry::quant::{quantize_per_block, PerBlockOptions};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.hrry");
    let values: Vec<f32> = (0..128).map(|i| (i as f32 * 0.1).cos()).collect();
    // int8 blocks of 64: not Q8_0; int4 with float32 scales: not Q4_0.
    let q64 = quantize_per_block(
        &values,
        &[2, 64],
        &PerBlockOptions {
            storage: ElementType::Int8,
            block_size: 64,
            ..PerBlockOptions::default()
        },
    )
    .unwrap();
    let q32 = quantize_per_block(
        &values,
        &[4, 32],
        &PerBlockOptions {
            scale_type: ElementType::Float32,
            ..PerBlockOptions::default()
        },
    )
    .unwrap();
    let exact = quantize_per_block(&values, &[4, 32], &PerBlockOptions::default()).unwrap();
    let mut w = HrryWriter::create(&path, WriterOptions::default()).unwrap();
    w.write_tensor("q64", &q64.descriptor, &q64.buffer_slices())
        .unwrap();
    w.write_tensor("exact", &exact.descriptor, &exact.buffer_slices())
        .unwrap();
    w.write_tensor("q32", &q32.descriptor, &q32.buffer_slices())
        .unwrap();
    w.write_tensor(
        "u8",
        &dense(ElementType::Uint8, &[3]).unwrap(),
        &[&[0, 7, 255]],
    )
    .unwrap();
    w.write_tensor(
        "bits",
        &dense(ElementType::Bool, &[3]).unwrap(),
        &[&[0b101]],
    )
    .unwrap();
    w.finish_file().unwrap();

    let out = dir.path().join("m.gguf");
    let e = run(&path, &out, &Options::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("\"q64\"") && e.contains("blocks of 64"), "{e}");
    assert!(
        e.contains("--dequantize-unsupported") && e.contains("3 more: \"q32\", \"u8\", \"bits\""),
        "{e}"
    );
    assert!(!out.exists());

    for dtype in [FloatType::F32, FloatType::F16] {
        let options = Options {
            dequantize_unsupported: true,
            dtype,
            ..Options::default()
        };
        let summary = run(&path, &out, &options).unwrap();
        assert!(
            summary
                .notes
                .iter()
                .any(|n| n.contains("4 tensors stored as")),
            "{:?}",
            summary.notes
        );
        let bytes = std::fs::read(&out).unwrap();
        let (p, used) = hrry::schema::read_from::<GgufPreamble>(&bytes).unwrap();
        let data_start = used.next_multiple_of(32);
        let float_type = if dtype == FloatType::F32 { 0 } else { 1 };
        let value = |name: &str, i: usize| {
            let info = p
                .tensors
                .iter()
                .find(|t| t.name.bytes == name.as_bytes())
                .unwrap();
            let at = (data_start + info.offset) as usize;
            if info.ggml_type == 0 {
                f32::from_le_bytes(bytes[at + 4 * i..at + 4 * i + 4].try_into().unwrap())
            } else {
                half::f16::from_le_bytes(bytes[at + 2 * i..at + 2 * i + 2].try_into().unwrap())
                    .to_f32()
            }
        };
        let types: Vec<(String, u32)> = p
            .tensors
            .iter()
            .map(|t| (t.name.lossy().into_owned(), t.ggml_type))
            .collect();
        assert_eq!(
            types,
            vec![
                ("q64".to_string(), float_type),
                ("exact".to_string(), 2),
                ("q32".to_string(), float_type),
                ("u8".to_string(), float_type),
                ("bits".to_string(), float_type),
            ]
        );
        let want = hrry::quant::dequantize(&q64.descriptor, &q64.buffer_slices()).unwrap();
        let round = |v: f32| {
            if dtype == FloatType::F32 {
                v
            } else {
                half::f16::from_f32(v).to_f32()
            }
        };
        for i in [0, 63, 100] {
            assert_eq!(value("q64", i), round(want[i]));
        }
        assert_eq!(
            (value("u8", 0), value("u8", 1), value("u8", 2)),
            (0.0, 7.0, 255.0)
        );
        assert_eq!(
            (value("bits", 0), value("bits", 1), value("bits", 2)),
            (1.0, 0.0, 1.0)
        );
    }

    // Never: more than four dimensions, or a layout other than row-major.
    let mut w = HrryWriter::create(&path, WriterOptions::default()).unwrap();
    w.write_tensor(
        "deep",
        &dense(ElementType::Float32, &[1, 1, 1, 1, 2]).unwrap(),
        &[&[0; 8]],
    )
    .unwrap();
    w.finish_file().unwrap();
    let options = Options {
        dequantize_unsupported: true,
        ..Options::default()
    };
    let e = run(&path, &out, &options).unwrap_err().to_string();
    assert!(e.contains("\"deep\"") && e.contains("at most 4"), "{e}");
}

/// The values of GGUF `Q8_0` (`q8`) or `Q4_0` blocks, as ggml defines them: a
/// float16 scale `d`, then 32 codes (int8, or nibbles `q` standing for `q - 8`,
/// elements `j` and `j + 16` sharing byte `j`, low nibble first).
fn ggml_block_values(bytes: &[u8], q8: bool) -> Vec<f32> {
    let block = if q8 { 34 } else { 18 };
    assert_eq!(bytes.len() % block, 0);
    let mut out = Vec::new();
    for b in bytes.chunks(block) {
        let d = half::f16::from_le_bytes([b[0], b[1]]).to_f32();
        if q8 {
            out.extend(b[2..].iter().map(|&q| d * f32::from(q as i8)));
        } else {
            let low = b[2..].iter().map(|&q| f32::from(q & 0xF) - 8.0);
            let high = b[2..].iter().map(|&q| f32::from(q >> 4) - 8.0);
            out.extend(low.chain(high).map(|q| d * q));
        }
    }
    out
}

#[test]
fn hrry_quantized_tensors_become_q8_0_and_q4_0_exactly() {
    use hrry::file::{HrryWriter, WriterOptions};
    use hrry::model::ElementType;
    use hrry::quant::{quantize_per_block, PerBlockOptions};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.hrry");
    // Tensors made by hrry's own quantizer (not from a GGUF): int8 and int4, rank 2
    // and rank 3 (blocks along the last axis), extreme codes included.
    let values = |n: usize, k: f32| -> Vec<f32> {
        (0..n)
            .map(|i| (i as f32 * k).sin() * (1.0 + (i % 7) as f32))
            .collect()
    };
    let cases = [
        ("i8", ElementType::Int8, vec![3u64, 64], 0.37f32, true),
        ("i4", ElementType::Int4, vec![5, 32], 0.11, false),
        ("i8r3", ElementType::Int8, vec![2, 3, 96], 0.05, true),
        ("i4r3", ElementType::Int4, vec![2, 2, 64], 0.73, false),
    ];
    let mut quantized = Vec::new();
    let mut w = HrryWriter::create(&path, WriterOptions::default()).unwrap();
    for (name, storage, shape, k, _) in &cases {
        let n = shape.iter().product::<u64>() as usize;
        let q = quantize_per_block(
            &values(n, *k),
            shape,
            &PerBlockOptions {
                storage: *storage,
                axis: shape.len() - 1,
                ..PerBlockOptions::default()
            },
        )
        .unwrap();
        w.write_tensor(name, &q.descriptor, &q.buffer_slices())
            .unwrap();
        quantized.push(q);
    }
    w.finish_file().unwrap();

    let out = dir.path().join("q.gguf");
    let summary = run(&path, &out, &Options::default()).unwrap();
    assert!(summary.notes.is_empty(), "{:?}", summary.notes);
    let bytes = std::fs::read(&out).unwrap();
    let (p, used) = hrry::schema::read_from::<GgufPreamble>(&bytes).unwrap();
    let data_start = used.next_multiple_of(32);
    for ((name, _, shape, _, q8), q) in cases.iter().zip(&quantized) {
        let info = p
            .tensors
            .iter()
            .find(|t| t.name.bytes == name.as_bytes())
            .unwrap();
        assert_eq!(info.ggml_type, if *q8 { 8 } else { 2 }, "{name}");
        let dims: Vec<u64> = shape.iter().rev().copied().collect();
        assert_eq!(info.dimensions, dims, "{name}");
        let n = shape.iter().product::<u64>() as usize;
        let at = (data_start + info.offset) as usize;
        let len = n / 32 * if *q8 { 34 } else { 18 };
        let got = ggml_block_values(&bytes[at..at + len], *q8);
        let want = hrry::quant::dequantize(&q.descriptor, &q.buffer_slices()).unwrap();
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            bits(&got),
            bits(&want),
            "{name}: GGUF blocks dequantize as hrry"
        );
    }

    // Blocks of 32 on a last axis that is not a multiple of 32 long (a partial last
    // block): no GGUF type holds it; the refusal says why.
    let q = quantize_per_block(&values(160, 0.2), &[4, 40], &PerBlockOptions::default()).unwrap();
    let mut w = HrryWriter::create(&path, WriterOptions::default()).unwrap();
    w.write_tensor("partial", &q.descriptor, &q.buffer_slices())
        .unwrap();
    w.finish_file().unwrap();
    let e = run(&path, &out, &Options::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("\"partial\"")
            && e.contains("axis 1 of length 40")
            && e.contains("a multiple of 32"),
        "{e}"
    );
}

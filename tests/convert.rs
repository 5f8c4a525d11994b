//! `hrry::convert`: safetensors round trips, GGUF metadata and tensors, refusals.

use std::collections::HashMap;
use std::path::Path;

use hrry::convert::{convert, safetensors::read_all, Error, FloatType, NoProgress, Options};
use hrry::file::HrryFile;
use hrry::schema::gguf::{
    GgufArray, GgufArrayValues, GgufKv, GgufPreamble, GgufString, GgufTensorInfo, GgufValue,
};
use hrry::schema::{to_bytes, KvScalar, KvValue, LenBytes};
use hrry::validate::{validate_file, Options as ValidateOptions};
use safetensors::tensor::TensorView;
use safetensors::Dtype;

fn assert_strictly_valid(path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    let report = validate_file(&bytes, &ValidateOptions::default());
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
            GgufValue::Array(GgufArray {
                values: GgufArrayValues::String(vec![gguf_string("<s>"), gguf_string("▁the")]),
            }),
        ),
        kv(
            "scores",
            GgufValue::Array(GgufArray {
                values: GgufArrayValues::Float32(vec![0.5, -1.25]),
            }),
        ),
        kv(
            "types",
            GgufValue::Array(GgufArray {
                values: GgufArrayValues::Int32(vec![1, 3]),
            }),
        ),
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
    assert_eq!(summary.metadata, 17);
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
    match v("tokens") {
        KvValue::Array(a) => {
            assert_eq!(a.element_tag, 0x01);
            assert_eq!(
                a.elements[1],
                KvScalar::String(LenBytes {
                    bytes: "▁the".as_bytes().to_vec()
                })
            );
        }
        other => panic!("{other:?}"),
    }
    match v("scores") {
        KvValue::Array(a) => assert_eq!(
            a.elements,
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
    assert!(matches!(e, Error::Safetensors(_)), "{e}");
    // Unknown formats and unsupported directions.
    std::fs::write(&path, b"PK\x03\x04 not a model").unwrap();
    assert!(run(&path, &out, &Options::default()).is_err());
    let gguf = dir.path().join("m.gguf");
    std::fs::write(&gguf, &good).unwrap();
    let e = run(
        &gguf,
        &dir.path().join("m.safetensors"),
        &Options::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("not supported"), "{e}");
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
        let got = hrry::quant::dequantize(&t.descriptor, &t.buffers).unwrap();
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

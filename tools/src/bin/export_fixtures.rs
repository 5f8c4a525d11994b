//! Writes the fixtures of `tests/python/test_export.py`: HRRYFILEs holding known
//! tensors in every layout and many element types, and `expected.json` listing,
//! for each, the tensor name, the NumPy dtype and shape `hrry export` must produce,
//! and the expected values in logical row-major order (computed from the source
//! values, not by reading the files back).
//!
//! `cargo run -p hrry-tools --bin export_fixtures -- DIR`

use std::path::Path;

use hrry::file::{HrryWriter, WriterOptions};
use hrry::layout::bits::pack;
use hrry::layout::from_row_major;
use hrry::layout::sparse::encode;
use hrry::model::build::{composite_head, descriptor};
use hrry::model::ElementType;
use hrry::schema::{
    HilbertFields, LayoutFields, ShardSection, TensorDescriptor, TiledFields, LAYOUT_COLUMN_MAJOR,
    LAYOUT_HILBERT, LAYOUT_MORTON, LAYOUT_ROW_MAJOR, LAYOUT_STRIDED, LAYOUT_TILED,
};
use serde_json::{json, Value};

/// One exported element: its raw code and the value NumPy must show.
#[derive(Clone)]
struct Elem {
    raw: u128,
    value: Value,
}

fn e(raw: u128, value: Value) -> Elem {
    Elem { raw, value }
}

/// Known codes and values of every exportable element type (from the formats'
/// definitions in element-types.md).
fn samples(ty: ElementType) -> Vec<Elem> {
    use ElementType::*;
    let f = |v: f64| json!(v);
    let nan = || json!("nan");
    let inf = |neg: bool| json!(if neg { "-inf" } else { "inf" });
    match ty {
        Float32 => [1.5f32, -2.25, 0.0, 3.0e38, -1.0e-38, 7.0]
            .iter()
            .map(|&v| e(u128::from(v.to_bits()), f(f64::from(v))))
            .collect(),
        Float64 => [1.5f64, -1.0e300, 0.1, 2.0, -0.5]
            .iter()
            .map(|&v| e(u128::from(v.to_bits()), f(v)))
            .collect(),
        Float16 => [1.0f32, -2.5, 0.099975586, 65504.0, 0.0]
            .iter()
            .map(|&v| {
                e(
                    u128::from(half::f16::from_f32(v).to_bits()),
                    f(f64::from(v)),
                )
            })
            .collect(),
        Bfloat16 => vec![
            e(0x3F80, f(1.0)),
            e(0xC040, f(-3.0)),
            e(0x3FC0, f(1.5)),
            e(0x7F80, inf(false)),
            e(0x0000, f(0.0)),
        ],
        Float128 => [1.0f64, -2.5, 1.0e-300, 123456.75]
            .iter()
            .map(|&v| {
                let b = v.to_bits();
                let exp = u128::from((b >> 52) & 0x7FF) + 16383 - 1023;
                let raw = (u128::from(b >> 63) << 127)
                    | (exp << 112)
                    | (u128::from(b & ((1 << 52) - 1)) << 60);
                e(raw, f(v))
            })
            .collect(),
        Int8 => [-128i64, 127, 0, -1, 5]
            .iter()
            .map(|&v| e(u128::from(v as u8), json!(v)))
            .collect(),
        Uint8 => [0u64, 255, 7, 128]
            .iter()
            .map(|&v| e(u128::from(v), json!(v)))
            .collect(),
        Int16 => [-32768i64, 32767, -2]
            .iter()
            .map(|&v| e(u128::from(v as u16), json!(v)))
            .collect(),
        Uint16 => [65535u64, 1, 300]
            .iter()
            .map(|&v| e(u128::from(v), json!(v)))
            .collect(),
        Int32 => [i64::from(i32::MIN), 2_000_000_000, -7]
            .iter()
            .map(|&v| e(u128::from(v as u32), json!(v)))
            .collect(),
        Uint32 => [u64::from(u32::MAX), 0, 99]
            .iter()
            .map(|&v| e(u128::from(v), json!(v)))
            .collect(),
        Int64 => [i64::MIN, i64::MAX, -3]
            .iter()
            .map(|&v| e(u128::from(v as u64), json!(v)))
            .collect(),
        Uint64 => [u64::MAX, 1 << 60, 42]
            .iter()
            .map(|&v| e(u128::from(v), json!(v)))
            .collect(),
        Bool => vec![e(1, json!(true)), e(0, json!(false)), e(1, json!(true))],
        Int4 => (0..16u128)
            .map(|c| e(c, json!(if c >= 8 { c as i64 - 16 } else { c as i64 })))
            .collect(),
        Uint4 => (0..16u128).map(|c| e(c, json!(c))).collect(),
        Int2 => (0..4u128)
            .map(|c| e(c, json!(if c >= 2 { c as i64 - 4 } else { c as i64 })))
            .collect(),
        Uint2 => (0..4u128).map(|c| e(c, json!(c))).collect(),
        Float8E4m3 => vec![
            e(0x38, f(1.0)),
            e(0xC0, f(-2.0)),
            e(0x7E, f(448.0)),
            e(0x01, f(2f64.powi(-9))),
            e(0x7F, nan()),
            e(0x00, f(0.0)),
        ],
        Float8E5m2 => vec![
            e(0x3C, f(1.0)),
            e(0x7B, f(57344.0)),
            e(0x7C, inf(false)),
            e(0xFC, inf(true)),
            e(0x01, f(2f64.powi(-16))),
            e(0x7E, nan()),
        ],
        Float8E8m0 => vec![
            e(0x7F, f(1.0)),
            e(0x80, f(2.0)),
            e(0x70, f(2f64.powi(-15))),
            e(0xFF, nan()),
        ],
        Float4E2m1 => {
            let mags = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];
            (0..16u128)
                .map(|c| {
                    e(
                        c,
                        f(if c >= 8 {
                            -mags[c as usize - 8]
                        } else {
                            mags[c as usize]
                        }),
                    )
                })
                .collect()
        }
        Float6E2m3 => vec![
            e(0b001000, f(1.0)),
            e(0b011111, f(7.5)),
            e(0b000001, f(0.125)),
            e(0b101100, f(-1.5)),
        ],
        Float6E3m2 => vec![
            e(0b001100, f(1.0)),
            e(0b011111, f(28.0)),
            e(0b000001, f(0.0625)),
            e(0b110000, f(-2.0)),
        ],
        Complex64 => [(1.0f32, -2.0f32), (0.5, 0.25)]
            .iter()
            .map(|&(r, i)| {
                e(
                    u128::from(r.to_bits()) | u128::from(i.to_bits()) << 32,
                    json!([r, i]),
                )
            })
            .collect(),
        Complex128 => [(1.0f64, -2.0f64), (0.5, 1e300)]
            .iter()
            .map(|&(r, i)| {
                e(
                    u128::from(r.to_bits()) | u128::from(i.to_bits()) << 64,
                    json!([r, i]),
                )
            })
            .collect(),
        Extension(_) => Vec::new(),
    }
}

/// `n` elements cycling through the samples, offset by `seed`.
fn tensor(ty: ElementType, n: u64, seed: usize) -> Vec<Elem> {
    let s = samples(ty);
    (0..n as usize)
        .map(|i| s[(i * 7 + seed) % s.len()].clone())
        .collect()
}

struct Fixtures {
    cases: Vec<Value>,
    dir: std::path::PathBuf,
}

impl Fixtures {
    /// Writes `tensors` (name, descriptor, buffers) to `<file>.hrry` and records the
    /// export expectation of tensor `name`.
    fn add(
        &mut self,
        file: &str,
        tensors: Vec<(String, TensorDescriptor, Vec<Vec<u8>>)>,
        name: &str,
        dtype: &str,
        shape: &[u64],
        values: &[Elem],
    ) {
        let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).expect("writer");
        for (n, d, b) in &tensors {
            let slices: Vec<&[u8]> = b.iter().map(Vec::as_slice).collect();
            w.write_tensor(n, d, &slices).expect("tensor");
        }
        let path = self.dir.join(format!("{file}.hrry"));
        std::fs::write(&path, w.finish().expect("finish")).expect("write fixture");
        self.cases.push(json!({
            "file": format!("{file}.hrry"),
            "tensor": name,
            "dtype": dtype,
            "shape": shape,
            "values": values.iter().map(|v| v.value.clone()).collect::<Vec<_>>(),
        }));
    }

    /// A dense tensor of `ty` and `shape` laid out per `layout_tag`/`fields`.
    fn dense(
        &mut self,
        file: &str,
        ty: ElementType,
        shape: &[u64],
        layout_tag: u8,
        fields: LayoutFields,
        byte_offset_elems: u64,
    ) {
        let width = ty.bit_width().expect("width");
        let n: u64 = shape.iter().product();
        let values = tensor(ty, n, file.len());
        let mut d = descriptor(ty.tag(), layout_tag, shape, fields, &[0]);
        d.byte_offset = (byte_offset_elems * u64::from(width)).div_ceil(8);
        let buffer = from_row_major(&d, &pack(width, values.iter().map(|v| v.raw)), 1 << 24)
            .expect("layout");
        d.buffers[0].byte_size = buffer.len() as u64;
        let dtype = hrry::npy::dtype(ty).expect("dtype").descr;
        self.add(
            file,
            vec![("t".into(), d, vec![buffer])],
            "t",
            dtype,
            shape,
            &values,
        );
    }
}

fn tiled(tile: &[u64], outer: u8, inner: u8, nested: Option<TiledFields>) -> LayoutFields {
    LayoutFields::Tiled(TiledFields {
        tile_shape: tile.to_vec(),
        outer_layout: outer,
        inner_layout: if nested.is_some() {
            LAYOUT_TILED
        } else {
            inner
        },
        reserved: [0; 2],
        outer_strides: None,
        inner_strides: None,
        inner_tiled: nested.map(Box::new),
    })
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "export-fixtures".into());
    std::fs::create_dir_all(&dir).expect("fixture dir");
    let mut fx = Fixtures {
        cases: Vec::new(),
        dir: Path::new(&dir).to_path_buf(),
    };
    // Every exportable type, row-major [2, 3] and column-major [3, 2].
    for ty in hrry::model::BUILTIN_TYPES {
        fx.dense(
            &format!("rm-{}", ty.name()),
            ty,
            &[2, 3],
            LAYOUT_ROW_MAJOR,
            LayoutFields::Implicit,
            0,
        );
        fx.dense(
            &format!("cm-{}", ty.name()),
            ty,
            &[3, 2],
            LAYOUT_COLUMN_MAJOR,
            LayoutFields::Implicit,
            0,
        );
    }
    // Scalars and empty tensors.
    fx.dense(
        "scalar-f32",
        ElementType::Float32,
        &[],
        LAYOUT_ROW_MAJOR,
        LayoutFields::Implicit,
        0,
    );
    fx.dense(
        "scalar-bool",
        ElementType::Bool,
        &[],
        LAYOUT_ROW_MAJOR,
        LayoutFields::Implicit,
        0,
    );
    fx.dense(
        "empty-f32",
        ElementType::Float32,
        &[0, 3],
        LAYOUT_ROW_MAJOR,
        LayoutFields::Implicit,
        0,
    );
    // Every dense layout, whole-byte and sub-byte.
    for ty in [ElementType::Int16, ElementType::Int4, ElementType::Float16] {
        let n = ty.name();
        fx.dense(
            &format!("strided-{n}"),
            ty,
            &[3, 4],
            LAYOUT_STRIDED,
            LayoutFields::Strided {
                strides: vec![-1, 3],
            },
            2,
        );
        fx.dense(
            &format!("strided-gaps-{n}"),
            ty,
            &[2, 3],
            LAYOUT_STRIDED,
            LayoutFields::Strided {
                strides: vec![8, 2],
            },
            0,
        );
        fx.dense(
            &format!("tiled-{n}"),
            ty,
            &[5, 7],
            LAYOUT_TILED,
            tiled(&[2, 3], 2, 1, None),
            0,
        );
        let nested = TiledFields {
            tile_shape: vec![2, 2],
            outer_layout: 1,
            inner_layout: 2,
            reserved: [0; 2],
            outer_strides: None,
            inner_strides: None,
            inner_tiled: None,
        };
        fx.dense(
            &format!("tiled-nested-{n}"),
            ty,
            &[6, 8],
            LAYOUT_TILED,
            tiled(&[4, 4], 1, 1, Some(nested)),
            0,
        );
        fx.dense(
            &format!("morton-{n}"),
            ty,
            &[3, 5],
            LAYOUT_MORTON,
            LayoutFields::Morton {
                morton_bits: vec![2, 3],
            },
            0,
        );
        fx.dense(
            &format!("hilbert-{n}"),
            ty,
            &[4, 4, 4],
            LAYOUT_HILBERT,
            LayoutFields::Hilbert(HilbertFields {
                hilbert_order: 2,
                hilbert_rank: 3,
            }),
            0,
        );
    }
    // Sparse layouts of a [4, 5] float32 matrix and a [2, 3, 4] tensor.
    let dense_matrix: Vec<f32> = (0..20)
        .map(|i| {
            if i % 3 == 0 {
                i as f32 * 0.5 - 2.0
            } else {
                0.0
            }
        })
        .collect();
    let dense3: Vec<f32> = (0..24)
        .map(|i| if i % 5 == 1 { i as f32 } else { 0.0 })
        .collect();
    let bytes = |v: &[f32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let vals = |v: &[f32]| -> Vec<Elem> { v.iter().map(|&x| e(0, json!(x))).collect() };
    let sparse: Vec<(&str, encode::Encoded, Vec<u64>, &Vec<f32>)> = vec![
        (
            "coo",
            encode::coo(0x03, &[4, 5], &bytes(&dense_matrix)).expect("coo"),
            vec![4, 5],
            &dense_matrix,
        ),
        (
            "csr",
            encode::compressed(0x03, &[4, 5], &bytes(&dense_matrix), false).expect("csr"),
            vec![4, 5],
            &dense_matrix,
        ),
        (
            "csc",
            encode::compressed(0x03, &[4, 5], &bytes(&dense_matrix), true).expect("csc"),
            vec![4, 5],
            &dense_matrix,
        ),
        (
            "csf",
            encode::csf(0x03, &[2, 3, 4], &bytes(&dense3), &[1, 2, 0]).expect("csf"),
            vec![2, 3, 4],
            &dense3,
        ),
    ];
    for (name, (d, b), shape, values) in sparse {
        fx.add(
            name,
            vec![("t".into(), d, b)],
            "t",
            "<f4",
            &shape,
            &vals(values),
        );
    }
    // A partition of [4, 6] int32 into [4, 2] and [4, 4] members.
    let parent: Vec<i32> = (0..24).map(|i| i * 10 - 50).collect();
    let mut tensors = vec![(
        "head".to_string(),
        composite_head(ElementType::Int32, &[4, 6], 1, 0, 2),
        vec![],
    )];
    for (k, (off, cols)) in [(0u64, 2u64), (2, 4)].iter().enumerate() {
        let local: Vec<u8> = (0..4)
            .flat_map(|r| (0..*cols).map(move |c| (r, c)))
            .flat_map(|(r, c)| parent[(r * 6 + off + c) as usize].to_le_bytes())
            .collect();
        let mut d = descriptor(
            0x14,
            LAYOUT_ROW_MAJOR,
            &[4, *cols],
            LayoutFields::Implicit,
            &[local.len() as u64],
        );
        d.shard = Some(ShardSection {
            parent_shape: vec![4, 6],
            shard_offset: vec![0, *off],
        });
        d.sync_sections();
        tensors.push((format!("part{k}"), d, vec![local]));
    }
    fx.add(
        "partition",
        tensors,
        "head",
        "<i4",
        &[4, 6],
        &parent.iter().map(|&v| e(0, json!(v))).collect::<Vec<_>>(),
    );
    // Per-tensor affine int8: value = (q - z) * s with s = 0.5, z = -2.
    let q = hrry::schema::PerTensorAffine {
        header: hrry::schema::QuantizationHeader::version1(
            hrry::schema::SCHEME_PER_TENSOR_AFFINE,
            0,
        ),
        scale: 0.5,
        zero_point: -2,
        reserved: [0; 4],
    };
    let codes: [i8; 6] = [-4, -2, 0, 3, 10, 127];
    let d = hrry::quant::quantize::quantized_descriptor(
        0x10,
        &[2, 3],
        &[6],
        hrry::schema::QuantScheme::PerTensorAffine(q),
    );
    let expected: Vec<Elem> = codes
        .iter()
        .map(|&c| e(0, json!((f64::from(c) + 2.0) * 0.5)))
        .collect();
    fx.add(
        "quantized-per-tensor",
        vec![(
            "t".into(),
            d,
            vec![codes.iter().map(|&c| c as u8).collect()],
        )],
        "t",
        "<f4",
        &[2, 3],
        &expected,
    );
    let manifest = json!({ "cases": fx.cases });
    std::fs::write(
        Path::new(&dir).join("expected.json"),
        serde_json::to_string_pretty(&manifest).expect("json"),
    )
    .expect("manifest");
    println!("wrote {} fixtures to {dir}", fx.cases.len());
}

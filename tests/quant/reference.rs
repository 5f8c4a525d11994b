//! The reference dequantizer against values computed by hand from the spec
//! formulas, and the upstream per-block vector.

use crate::common::assert_bits_eq;
use hrry::model::element_type::ElementType;
use hrry::quant::quantize::quantized_descriptor;
use hrry::quant::{dequantize, Dequantizer, Kernel, PerBlockOptions};
use hrry::schema::{
    BlockScaled, LayoutFields, PerBlockAffine, PerChannelAffine, PerTensorAffine, QuantScheme,
    QuantizationHeader, TensorDescriptor, FLAG_SYMMETRIC, LAYOUT_COLUMN_MAJOR,
    NO_ZERO_POINT_BUFFER,
};

fn f32s(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn i32s(values: &[i32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Dequantizes with the reference and with the default kernels; both must give
/// `want` exactly.
fn assert_dequantizes(desc: &TensorDescriptor, buffers: &[Vec<u8>], want: &[f32]) {
    let slices: Vec<&[u8]> = buffers.iter().map(Vec::as_slice).collect();
    let mut dq = Dequantizer::new(desc, &slices).unwrap();
    dq.set_kernel(Kernel::Reference);
    assert_bits_eq(&dq.to_vec().unwrap(), want, "reference");
    assert_bits_eq(&dequantize(desc, &slices).unwrap(), want, "default");
}

#[test]
fn per_block_int4_partial_block_with_zero_points() {
    // shape [2, 5], K = 4 along axis 1: each row is two blocks, the second holding
    // one valid element and three zero padding codes.
    // row 0 codes [1, -2, 7, -8 | 3], row 1 [0, 5, -1, 2 | -3].
    let data = vec![0xE1, 0x87, 0x03, 0x00, 0x50, 0x2F, 0x0D, 0x00];
    let scales = f32s(&[0.5, 2.0, 0.25, -1.5]);
    let zero_points = i32s(&[1, -2, 0, 3]);
    let q = QuantScheme::PerBlockAffine(PerBlockAffine::version1(1, 4, 0x03, false));
    let desc = quantized_descriptor(0x48, &[2, 5], &[8, 16, 16], q);
    // s * (q - z): 0.5*(1-1), 0.5*(-2-1), 0.5*(7-1), 0.5*(-8-1), 2*(3+2);
    // 0.25*0, 0.25*5, 0.25*-1, 0.25*2, -1.5*(-3-3).
    let want = [0.0, -1.5, 3.0, -4.5, 10.0, 0.0, 1.25, -0.25, 0.5, 9.0];
    assert_dequantizes(&desc, &[data, scales, zero_points], &want);
}

#[test]
fn per_block_along_axis_zero_with_float16_scales() {
    // shape [3, 2] uint8, K = 2 along axis 0: padded to [4, 2] (last row zero).
    // Block b = column * 2 + row / 2.
    let data = vec![10, 20, 30, 40, 50, 60, 0, 0];
    let scales: Vec<u8> = [1.0f32, 0.5, 2.0, -0.25]
        .iter()
        .flat_map(|&v| half::f16::from_f32(v).to_bits().to_le_bytes())
        .collect();
    let q = QuantScheme::PerBlockAffine(PerBlockAffine::version1(0, 2, 0x01, true));
    let desc = quantized_descriptor(0x11, &[3, 2], &[8, 8], q);
    let want = [10.0, 40.0, 30.0, 80.0, 25.0, -15.0];
    assert_dequantizes(&desc, &[data, scales], &want);
}

#[test]
fn per_block_bfloat16_scales_and_int2() {
    // shape [1, 8] int2, K = 4: codes [1, -2, -1, 0 | 1, 1, -2, -2].
    // int2 codes 01, 10, 11, 00 -> byte 0b00_11_10_01 = 0x39; 01, 01, 10, 10 -> 0xA5.
    let data = vec![0x39, 0xA5];
    // bfloat16 3.0 = 0x4040, -0.5 = 0xBF00.
    let scales = vec![0x40, 0x40, 0x00, 0xBF];
    let q = QuantScheme::PerBlockAffine(PerBlockAffine::version1(1, 4, 0x02, true));
    let desc = quantized_descriptor(0x4A, &[1, 8], &[2, 4], q);
    let want = [3.0, -6.0, -3.0, 0.0, -0.5, -0.5, 1.0, 1.0];
    assert_dequantizes(&desc, &[data, scales], &want);
}

#[test]
fn per_tensor_uint8() {
    let q = QuantScheme::PerTensorAffine(PerTensorAffine {
        header: QuantizationHeader::version1(0x01, 0),
        scale: 0.5,
        zero_point: 128,
        reserved: [0; 4],
    });
    let desc = quantized_descriptor(0x11, &[4], &[4], q);
    assert_dequantizes(&desc, &[vec![0, 128, 255, 130]], &[-64.0, 0.0, 63.5, 1.0]);
}

#[test]
fn per_tensor_uint32_difference_is_exact_before_conversion() {
    // q - z = 4294967295 - 2147483647 = 2147483648 exactly (2^31), then * 1.0.
    let q = QuantScheme::PerTensorAffine(PerTensorAffine {
        header: QuantizationHeader::version1(0x01, 0),
        scale: 1.0,
        zero_point: i32::MAX,
        reserved: [0; 4],
    });
    let desc = quantized_descriptor(0x15, &[1], &[4], q);
    assert_dequantizes(&desc, &[u32::MAX.to_le_bytes().to_vec()], &[2147483648.0]);
}

#[test]
fn per_channel_int4_with_shared_parameter_buffer() {
    // shape [2, 3] int4 along axis 0; buffer 1 is [scales | zero_points].
    // codes row 0 [3, -1, 0], row 1 [-8, 7, 2] -> nibbles 3 F 0 8 7 2.
    let data = vec![0xF3, 0x80, 0x27];
    let mut params = f32s(&[0.5, 4.0]);
    params.extend(i32s(&[1, -1]));
    let q = QuantScheme::PerChannelAffine(PerChannelAffine {
        header: QuantizationHeader::version1(0x02, 0),
        axis: 0,
        scale_buffer_index: 1,
        zero_point_buffer_index: 1,
        scale_type_tag: 0x03,
        reserved: [0; 3],
    });
    let desc = quantized_descriptor(0x48, &[2, 3], &[3, 16], q);
    // 0.5*(3-1), 0.5*(-1-1), 0.5*(0-1); 4*(-8+1), 4*(7+1), 4*(2+1).
    let want = [1.0, -1.0, -0.5, -28.0, 32.0, 12.0];
    assert_dequantizes(&desc, &[data, params], &want);
}

#[test]
fn nf4_levels_times_absmax() {
    // shape [1, 8], K = 8, absmax 2.0: codes 0..7 (two per byte, low nibble first).
    let data = vec![0x10, 0x32, 0x54, 0x76];
    let q = QuantScheme::Nf4(BlockScaled::version1(0x04, 1, 8));
    let desc = quantized_descriptor(0x49, &[1, 8], &[4, 4], q);
    // Doubling is exact: twice the spec's levels.
    let want = [
        -2.0f64,
        -1.3923856019973755,
        -1.0501461029052734,
        -0.7898349761962891,
        -0.5688827633857727,
        -0.3695468604564667,
        -0.1821000725030899,
        0.0,
    ]
    .map(|v| v as f32);
    assert_dequantizes(&desc, &[data, f32s(&[2.0])], &want);
}

#[test]
fn mxfp4_values_times_power_of_two() {
    // float4_e2m1 codes 0..15, one block of 16, scale 2^(128 - 127) = 2.
    let data = vec![0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC, 0xFE];
    let q = QuantScheme::Mxfp(BlockScaled::version1(0x05, 0, 16));
    let desc = quantized_descriptor(0x43, &[16], &[8, 1], q);
    let want = [
        0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, -0.0, -1.0, -2.0, -3.0, -4.0, -6.0, -8.0, -12.0,
    ];
    assert_dequantizes(&desc, &[data, vec![128]], &want);
}

#[test]
fn mxfp6_packing_example_from_element_types() {
    // element-types.md § 6-bit packing: codes 1, 2, 4, 8 pack to 81 40 20. As
    // float6_e2m3 (bias 1) they are 0.125, 0.25, 0.5 and 1.0; scale 2^-1.
    let mut data = vec![0x81, 0x40, 0x20];
    data.resize(12, 0);
    let q = QuantScheme::Mxfp(BlockScaled::version1(0x05, 0, 16));
    let desc = quantized_descriptor(0x44, &[16], &[12, 1], q);
    let mut want = vec![0.0625, 0.125, 0.25, 0.5];
    want.resize(16, 0.0);
    assert_dequantizes(&desc, &[data, vec![126]], &want);
}

#[test]
fn mxfp8_e4m3_nan_and_max() {
    // float8_e4m3 0x7E = 448, 0x7F = NaN, 0x38 = 1, 0xB8 = -1; scale 2^3.
    let mut data = vec![0x7E, 0x7F, 0x38, 0xB8];
    data.resize(16, 0);
    let q = QuantScheme::Mxfp(BlockScaled::version1(0x05, 0, 16));
    let desc = quantized_descriptor(0x40, &[16], &[16, 1], q);
    let slices: Vec<&[u8]> = vec![&data, &[130]];
    let out = dequantize(&desc, &slices).unwrap();
    assert_eq!(out[0], 3584.0);
    assert!(out[1].is_nan());
    assert_eq!(out[2], 8.0);
    assert_eq!(out[3], -8.0);
}

#[test]
fn column_major_per_block() {
    // shape [2, 4] int8 column-major, K = 2 along axis 1, float32 scales.
    // Logical [i, j] is stored at j * 2 + i; block b = i * 2 + j / 2.
    let logical = [[1i8, 2, 3, 4], [-1, -2, -3, -4]];
    let mut data = vec![0u8; 8];
    for (i, row) in logical.iter().enumerate() {
        for (j, &v) in row.iter().enumerate() {
            data[j * 2 + i] = v as u8;
        }
    }
    let q = QuantScheme::PerBlockAffine(PerBlockAffine::version1(1, 2, 0x03, true));
    let mut desc = quantized_descriptor(0x10, &[2, 4], &[8, 16], q);
    desc.layout_tag = LAYOUT_COLUMN_MAJOR;
    desc.layout = LayoutFields::Implicit;
    let want = [1.0, 2.0, 30.0, 40.0, -100.0, -200.0, -3000.0, -4000.0];
    assert_dequantizes(&desc, &[data, f32s(&[1.0, 10.0, 100.0, 1000.0])], &want);
}

#[test]
fn strided_layout_with_negative_stride() {
    // shape [3] per-tensor int8 with stride -1 and byte_offset 2: a reversed view.
    let q = QuantScheme::PerTensorAffine(PerTensorAffine {
        header: QuantizationHeader::version1(0x01, 0),
        scale: 2.0,
        zero_point: 0,
        reserved: [0; 4],
    });
    let mut desc = quantized_descriptor(0x10, &[3], &[3], q);
    desc.layout_tag = hrry::schema::LAYOUT_STRIDED;
    desc.layout = LayoutFields::Strided { strides: vec![-1] };
    desc.byte_offset = 2;
    desc.fix_length();
    assert_dequantizes(&desc, &[vec![1, 2, 3]], &[6.0, 4.0, 2.0]);
}

#[test]
fn quantizer_round_trips_within_half_a_step() {
    let shape = [3u64, 70];
    let values: Vec<f32> = (0..210)
        .map(|i| ((i * 37 % 101) as f32 - 50.0) / 7.0)
        .collect();
    for storage in [
        ElementType::Int8,
        ElementType::Uint8,
        ElementType::Int4,
        ElementType::Uint4,
    ] {
        for scale_type in [
            ElementType::Float16,
            ElementType::Bfloat16,
            ElementType::Float32,
        ] {
            for symmetric in [true, false] {
                if symmetric && !storage.is_signed_int() {
                    continue;
                }
                let opts = PerBlockOptions {
                    storage,
                    scale_type,
                    block_size: 16,
                    axis: 1,
                    symmetric,
                };
                let q = hrry::quant::quantize_per_block(&values, &shape, &opts).unwrap();
                let out = dequantize(&q.descriptor, &q.buffer_slices()).unwrap();
                let (lo, hi) = hrry::model::quant::int_range(storage).unwrap();
                let steps = (hi - lo) as f32;
                for (block, (x, y)) in values.chunks(16).zip(out.chunks(16)).enumerate() {
                    let (mn, mx) = x
                        .iter()
                        .fold((0f32, 0f32), |(a, b), &v| (a.min(v), b.max(v)));
                    let step = if symmetric {
                        mn.abs().max(mx.abs()) / hi as f32
                    } else {
                        (mx - mn) / steps
                    };
                    // Half a step (a whole one when the rounded zero point pushes the
                    // maximum past the top code), plus the scale type's rounding.
                    let steps_off = if symmetric { 0.51 } else { 1.01 };
                    for (a, b) in x.iter().zip(y) {
                        assert!(
                            (a - b).abs() <= step * steps_off + step * 0.02 * steps,
                            "{} {} sym {symmetric} block {block}: {a} -> {b}",
                            storage.name(),
                            scale_type.name()
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn upstream_per_block_vector_decodes_to_its_manifest_entry() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/upstream-vectors/");
    let bytes = std::fs::read(format!(
        "{root}descriptors/quant_per_block_int4_128x128.bin"
    ))
    .expect("upstream vector");
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(format!("{root}manifest.json")).unwrap()).unwrap();
    let entry = manifest["descriptors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["file"] == "descriptors/quant_per_block_int4_128x128.bin")
        .unwrap();
    let expect = &entry["expect"];
    let (desc, used) = hrry::schema::read_from::<TensorDescriptor>(&bytes).unwrap();
    assert_eq!(used, bytes.len() as u64);
    assert_eq!(u64::from(desc.version_major), expect["version_major"]);
    assert_eq!(u64::from(desc.version_minor), expect["version_minor"]);
    assert_eq!(u64::from(desc.type_tag), expect["element_type_tag"]);
    assert_eq!(
        ElementType::from_tag(desc.type_tag).unwrap().name(),
        expect["element_type"]
    );
    assert_eq!(serde_json::json!(desc.shape), expect["shape"]);
    assert_eq!(desc.byte_offset, expect["byte_offset"]);
    assert_eq!(u64::from(desc.layout_tag), expect["layout_tag"]);
    let sizes: Vec<u64> = desc.buffers.iter().map(|b| b.byte_size).collect();
    assert_eq!(serde_json::json!(sizes), expect["buffer_byte_sizes"]);
    assert_eq!(desc.flags.has_quantization(), expect["has_quantization"]);
    assert_eq!(desc.flags.has_shard(), expect["has_shard"]);

    let section = desc.quantization.as_ref().unwrap();
    let scheme = *section.scheme().unwrap();
    let QuantScheme::PerBlockAffine(d) = scheme else {
        panic!("not per-block affine: {scheme:?}");
    };
    assert_eq!(d.header.flags, FLAG_SYMMETRIC);
    assert_eq!((d.axis, d.block_size), (1, 128));
    assert_eq!(d.scale_buffer_index, 1);
    assert_eq!(d.zero_point_buffer_index, NO_ZERO_POINT_BUFFER);
    assert_eq!(d.scale_type_tag, 0x01);
    let mut report = hrry::validate::Report::default();
    hrry::decode::quant::check(&desc, 0, None, &mut report);
    assert!(report.is_valid(), "{:?}", report.violations);

    // Our quantizer writes the same descriptor for the same options.
    let values: Vec<f32> = (0..128 * 128).map(|i| (i % 17) as f32 - 8.0).collect();
    let opts = PerBlockOptions {
        block_size: 128,
        ..PerBlockOptions::default()
    };
    let q = hrry::quant::quantize_per_block(&values, &[128, 128], &opts).unwrap();
    assert_eq!(hrry::schema::to_bytes(&q.descriptor), bytes);
    // And it dequantizes: absmax 8 over 7 levels.
    let out = dequantize(&desc, &q.buffer_slices()).unwrap();
    assert_eq!(out.len(), 128 * 128);
    let s = half::f16::from_f32(8.0 / 7.0).to_f32();
    assert_eq!(out[0], -7.0 * s);
}

#[test]
fn broadcasting_strides_are_refused_whole_but_served_by_rows() {
    // [2^30, 4] int8 with stride 0 along axis 0: 4 bytes of data, 4 Gi values.
    let q = QuantScheme::PerTensorAffine(PerTensorAffine {
        header: QuantizationHeader::version1(0x01, 0),
        scale: 0.5,
        zero_point: 0,
        reserved: [0; 4],
    });
    let mut desc = quantized_descriptor(0x10, &[1 << 30, 4], &[4], q);
    desc.layout_tag = hrry::schema::LAYOUT_STRIDED;
    desc.layout = LayoutFields::Strided {
        strides: vec![0, 1],
    };
    desc.fix_length();
    let data = vec![2u8, 4, 6, 8];
    let slices: Vec<&[u8]> = vec![&data];
    let dq = Dequantizer::new(&desc, &slices).unwrap();
    assert!(matches!(
        dq.to_vec(),
        Err(hrry::Error::Unsupported(m)) if m.contains("dequantize it in row chunks")
    ));
    let mut rows = [0.0f32; 8];
    dq.dequantize_rows(123_456, &mut rows).unwrap();
    assert_eq!(rows, [1.0, 2.0, 3.0, 4.0, 1.0, 2.0, 3.0, 4.0]);
    assert!(dq.dequantize_rows(1 << 30, &mut rows).is_err());
    let mut odd = [0.0f32; 5];
    assert!(dq.dequantize_rows(0, &mut odd).is_err());
}

#[test]
fn shared_parameter_buffer_dequantizes_like_separate_buffers() {
    let values: Vec<f32> = (0..60).map(|i| (i as f32 * 0.37).sin() * 5.0).collect();
    let opts = PerBlockOptions {
        storage: ElementType::Uint4,
        scale_type: ElementType::Bfloat16,
        block_size: 8,
        axis: 1,
        symmetric: false,
    };
    let q = hrry::quant::quantize_per_block(&values, &[3, 20], &opts).unwrap();
    let separate = dequantize(&q.descriptor, &q.buffer_slices()).unwrap();
    let mut shared = q.buffers[1].clone();
    shared.extend_from_slice(&q.buffers[2]);
    let mut scheme = *q
        .descriptor
        .quantization
        .as_ref()
        .unwrap()
        .scheme()
        .unwrap();
    if let QuantScheme::PerBlockAffine(d) = &mut scheme {
        d.zero_point_buffer_index = 1;
    }
    let desc = quantized_descriptor(
        0x49,
        &[3, 20],
        &[q.buffers[0].len() as u64, shared.len() as u64],
        scheme,
    );
    let slices: Vec<&[u8]> = vec![&q.buffers[0], &shared];
    assert_bits_eq(&dequantize(&desc, &slices).unwrap(), &separate, "shared");
}

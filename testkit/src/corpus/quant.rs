//! Corpus cases for quantization (rules `QZ-…`, `QT-…`, `QC-…`, `QB-…`, `QN-…`,
//! `QM-…`): valid quantized tensors of every scheme, and for every rule a one-tensor
//! file that breaks only that rule, made by editing one field of a valid tensor.

use hrry::model::ElementType;
use hrry::quant::quantize::{quantize_per_block, quantized_descriptor, PerBlockOptions};
use hrry::schema::{
    BlockScaled, PerBlockAffine, PerChannelAffine, PerTensorAffine, QuantScheme,
    QuantizationHeader, TensorDescriptor, FLAG_SYMMETRIC, NO_ZERO_POINT_BUFFER, SCHEME_MXFP,
    SCHEME_NF4, SCHEME_PER_CHANNEL_AFFINE, SCHEME_PER_TENSOR_AFFINE,
};

use super::patch::{self, f32s, i32s};
use super::{Case, Format};

const F: Format = Format::HrryFile;

/// A quantized tensor being edited into a corpus case.
#[derive(Clone)]
struct Tensor {
    desc: TensorDescriptor,
    buffers: Vec<Vec<u8>>,
}

impl Tensor {
    fn new(
        scheme: QuantScheme,
        storage: ElementType,
        shape: &[u64],
        buffers: Vec<Vec<u8>>,
    ) -> Self {
        let sizes: Vec<u64> = buffers.iter().map(|b| b.len() as u64).collect();
        Tensor {
            desc: quantized_descriptor(storage.tag(), shape, &sizes, scheme),
            buffers,
        }
    }

    /// Overwrites bytes of the quantization descriptor at `offset`.
    fn q(mut self, offset: u64, bytes: &[u8]) -> Self {
        patch::put_quantization(&mut self.desc, offset, bytes);
        self
    }

    /// Edits the quantization descriptor bytes (their length may change).
    fn q_bytes(mut self, edit: impl FnOnce(&mut Vec<u8>)) -> Self {
        patch::edit_quantization(&mut self.desc, edit);
        self
    }

    fn desc(mut self, edit: impl FnOnce(&mut TensorDescriptor)) -> Self {
        edit(&mut self.desc);
        self
    }

    fn buffer(mut self, i: usize, edit: impl FnOnce(&mut Vec<u8>)) -> Self {
        edit(&mut self.buffers[i]);
        self
    }

    /// The one-tensor file holding this tensor (buffer sizes and length synced).
    fn file(mut self) -> Vec<u8> {
        for (h, b) in self.desc.buffers.iter_mut().zip(&self.buffers) {
            h.byte_size = b.len() as u64;
        }
        self.desc.sync_sections();
        patch::write_one("q", self.desc, self.buffers)
    }
}

/// Deterministic bytes.
fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(29).wrapping_add(seed))
        .collect()
}

/// Deterministic values in about [-4, 4].
fn values(n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| ((i * 37 % 97) as f32 - 48.0) / 12.0)
        .collect()
}

/// Per-tensor affine, int8 [2, 3], scale 0.5, zero point -3.
fn per_tensor() -> Tensor {
    let d = PerTensorAffine {
        header: QuantizationHeader::version1(SCHEME_PER_TENSOR_AFFINE, 0),
        scale: 0.5,
        zero_point: -3,
        reserved: [0; 4],
    };
    let scheme = QuantScheme::PerTensorAffine(d);
    Tensor::new(scheme, ElementType::Int8, &[2, 3], vec![pattern(6, 3)])
}

fn per_channel_scheme(flags: u16, scale: u32, zero_point: u32) -> QuantScheme {
    QuantScheme::PerChannelAffine(PerChannelAffine {
        header: QuantizationHeader::version1(SCHEME_PER_CHANNEL_AFFINE, flags),
        axis: 0,
        scale_buffer_index: scale,
        zero_point_buffer_index: zero_point,
        scale_type_tag: 0x03,
        reserved: [0; 3],
    })
}

/// Per-channel affine, uint8 [3, 4] along axis 0, with zero points.
fn per_channel() -> Tensor {
    Tensor::new(
        per_channel_scheme(0, 1, 2),
        ElementType::Uint8,
        &[3, 4],
        vec![
            pattern(12, 5),
            f32s(&[0.25, -2.0, 0.125]),
            i32s(&[128, 0, 255]),
        ],
    )
}

/// Per-channel affine, uint8 [3, 4], symmetric.
fn per_channel_symmetric() -> Tensor {
    Tensor::new(
        per_channel_scheme(FLAG_SYMMETRIC, 1, NO_ZERO_POINT_BUFFER),
        ElementType::Uint8,
        &[3, 4],
        vec![pattern(12, 5), f32s(&[0.25, -2.0, 0.125])],
    )
}

/// Per-channel affine, int4 [2, 3], scales and zero points sharing buffer 1.
fn per_channel_shared() -> Tensor {
    let mut params = f32s(&[0.5, 4.0]);
    params.extend(i32s(&[1, -1]));
    Tensor::new(
        per_channel_scheme(0, 1, 1),
        ElementType::Int4,
        &[2, 3],
        vec![vec![0xF3, 0x80, 0x27], params],
    )
}

fn quantized(shape: &[u64], opts: PerBlockOptions) -> Tensor {
    let n = shape.iter().product::<u64>() as usize;
    let q = quantize_per_block(&values(n), shape, &opts).expect("corpus quantizer options");
    Tensor {
        desc: q.descriptor,
        buffers: q.buffers,
    }
}

/// Per-block affine int4 [4, 40], float16 scales, blocks of 32 (the second of each
/// row partial), symmetric.
fn per_block() -> Tensor {
    quantized(&[4, 40], PerBlockOptions::default())
}

/// Per-block affine uint8 [3, 10] along axis 1, bfloat16 scales, blocks of 4, with
/// zero points.
fn per_block_asymmetric() -> Tensor {
    quantized(
        &[3, 10],
        PerBlockOptions {
            storage: ElementType::Uint8,
            scale_type: ElementType::Bfloat16,
            block_size: 4,
            axis: 1,
            symmetric: false,
        },
    )
}

/// [`per_block_asymmetric`] with its scales and zero points in one buffer
/// (`[scales | zero_points]`, both indices 1).
fn per_block_shared() -> Tensor {
    let mut t = per_block_asymmetric();
    let zero_points = t.buffers.pop().expect("zero points");
    t.buffers[1].extend(zero_points);
    t.desc.buffers.pop();
    t.q(PerBlockAffine::ZERO_POINT_BUFFER_INDEX, &[1, 0, 0, 0])
}

/// Per-block affine int2 [5, 3] along axis 0, float32 scales, blocks of 2.
fn per_block_axis0() -> Tensor {
    quantized(
        &[5, 3],
        PerBlockOptions {
            storage: ElementType::Int2,
            scale_type: ElementType::Float32,
            block_size: 2,
            axis: 0,
            symmetric: true,
        },
    )
}

/// NF4 [2, 70], blocks of 64 (partial second block, padded), one zero absmax.
fn nf4() -> Tensor {
    // Row-major storage padded to 128 codes per row; padding codes zero.
    let mut data = vec![0u8; 128];
    for row in 0..2 {
        for i in 0..70usize {
            let code = ((row * 70 + i) * 7 % 16) as u8;
            let at = row * 128 + i;
            data[at / 2] |= code << (4 * (at % 2));
        }
    }
    Tensor::new(
        QuantScheme::Nf4(BlockScaled::version1(SCHEME_NF4, 1, 64)),
        ElementType::Uint4,
        &[2, 70],
        vec![data, f32s(&[1.5, 0.0, 0.25, 3.0])],
    )
}

/// MXFP4 (float4_e2m1) [2, 32], blocks of 32.
fn mxfp4() -> Tensor {
    Tensor::new(
        QuantScheme::Mxfp(BlockScaled::version1(SCHEME_MXFP, 1, 32)),
        ElementType::Float4E2m1,
        &[2, 32],
        vec![pattern(32, 9), vec![127, 120]],
    )
}

/// MXFP8 (float8_e4m3) [16], one block of 16.
fn mxfp8() -> Tensor {
    Tensor::new(
        QuantScheme::Mxfp(BlockScaled::version1(SCHEME_MXFP, 0, 16)),
        ElementType::Float8E4m3,
        &[16],
        vec![pattern(16, 1).iter().map(|b| b & 0x77).collect(), vec![130]],
    )
}

/// Per-block affine with an empty quantization axis: no blocks, empty buffers.
fn per_block_empty() -> Tensor {
    let d = PerBlockAffine::version1(1, 32, 0x01, true);
    let scheme = QuantScheme::PerBlockAffine(d);
    Tensor::new(scheme, ElementType::Int4, &[3, 0], vec![vec![], vec![]])
}

fn valid(name: &str, description: &str, t: Tensor) -> Case {
    Case::valid(F, name, description, t.file())
}

fn inv(rule: &'static str, suffix: &str, description: &str, t: Tensor) -> Case {
    Case::invalid(F, rule, suffix, description, t.file())
}

fn f16(v: f32) -> [u8; 2] {
    half::f16::from_f32(v).to_bits().to_le_bytes()
}

/// Every quantization corpus case.
pub fn cases() -> Vec<Case> {
    let mut out = vec![
        valid("quant-per-tensor-int8.hrry", "per-tensor affine int8 [2, 3]", per_tensor()),
        valid(
            "quant-per-channel-uint8.hrry",
            "per-channel affine uint8 [3, 4] along axis 0 with zero points",
            per_channel(),
        ),
        valid(
            "quant-per-channel-symmetric.hrry",
            "per-channel affine uint8 [3, 4], symmetric",
            per_channel_symmetric(),
        ),
        valid(
            "quant-per-channel-shared-buffer.hrry",
            "per-channel affine int4 [2, 3]; scales and zero points share buffer 1 ([scales | zero_points])",
            per_channel_shared(),
        ),
        valid(
            "quant-per-block-int4-f16.hrry",
            "per-block affine int4 [4, 40], float16 scales, blocks of 32 with a padded partial final block",
            per_block(),
        ),
        valid(
            "quant-per-block-uint8-bf16-asym.hrry",
            "per-block affine uint8 [3, 10], bfloat16 scales, blocks of 4, zero points",
            per_block_asymmetric(),
        ),
        valid(
            "quant-per-block-shared-buffer.hrry",
            "per-block affine uint8 [3, 10] with scales and zero points sharing buffer 1",
            per_block_shared(),
        ),
        valid(
            "quant-per-block-int2-axis0.hrry",
            "per-block affine int2 [5, 3] along axis 0 (padded to 6 rows), float32 scales",
            per_block_axis0(),
        ),
        valid(
            "quant-per-block-empty-axis.hrry",
            "per-block affine int4 [3, 0]: empty axis, block_size 32, zero-byte buffers",
            per_block_empty(),
        ),
        valid(
            "quant-nf4.hrry",
            "NF4 [2, 70], blocks of 64 (padded partial block), one zero absmax",
            nf4(),
        ),
        valid("quant-mxfp4.hrry", "MXFP4 float4_e2m1 [2, 32], blocks of 32", mxfp4()),
        valid("quant-mxfp8-e4m3.hrry", "MXFP8 float8_e4m3 [16], one block", mxfp8()),
    ];
    out.extend(quantization_md_cases());
    out.extend(per_tensor_cases());
    out.extend(per_channel_cases());
    out.extend(per_block_cases());
    out.extend(nf4_cases());
    out.extend(mxfp_cases());
    out
}

fn quantization_md_cases() -> Vec<Case> {
    vec![
        inv(
            "QZ-TAG-001",
            "",
            "scheme_tag 0xFF (reserved invalid)",
            per_tensor().q(0, &[0xFF]),
        ),
        inv(
            "QZ-TAG-001",
            "zero",
            "scheme_tag 0x00 (reserved invalid)",
            per_tensor().q(0, &[0x00]),
        ),
        inv(
            "QZ-TAG-002",
            "",
            "scheme_tag 0x60 (reserved for nested schemes)",
            per_tensor().q(0, &[0x60]),
        ),
        inv(
            "QZ-TAG-002",
            "future",
            "scheme_tag 0x80 (reserved for future versions)",
            per_tensor().q(0, &[0x80]),
        ),
        inv(
            "QZ-TAG-003",
            "",
            "scheme_tag 0x06 (unassigned)",
            per_tensor().q(0, &[0x06]),
        ),
        inv(
            "QZ-TAG-003",
            "private",
            "scheme_tag 0xF0 (private, unknown here)",
            per_tensor().q(0, &[0xF0]),
        ),
        inv(
            "QZ-VER-001",
            "",
            "scheme_version 2",
            per_tensor().q(1, &[2]),
        ),
        inv(
            "QZ-VER-002",
            "",
            "scheme_version 0",
            per_tensor().q(1, &[0]),
        ),
        inv(
            "QZ-FLG-001",
            "",
            "per-tensor flags 0x0001 (no flags defined)",
            per_tensor().q(2, &[1, 0]),
        ),
        inv(
            "QZ-FLG-001",
            "per-block",
            "per-block flags bit 1 set",
            per_block().q(2, &[3, 0]),
        ),
        inv(
            "QZ-LEN-001",
            "",
            "per-tensor descriptor of 12 bytes (16 needed)",
            per_tensor().q_bytes(|q| q.truncate(12)),
        ),
        inv(
            "QZ-BUF-001",
            "",
            "per-block scale_buffer_index 0 (the data buffer)",
            per_block().q(PerBlockAffine::SCALE_BUFFER_INDEX, &[0, 0, 0, 0]),
        ),
        inv(
            "QZ-BUF-002",
            "",
            "shared scale/zero-point buffer of 12 bytes (16 needed)",
            per_channel_shared().buffer(1, |b| b.truncate(12)),
        ),
        inv(
            "QZ-BUF-002",
            "per-block",
            "per-block shared scale/zero-point buffer one zero point short",
            per_block_shared().buffer(1, |b| b.truncate(b.len() - 4)),
        ),
        inv(
            "QZ-BUF-003",
            "",
            "symmetric per-block tensor with buffer_count 3 (2 expected)",
            per_block()
                .desc(|d| d.buffers.push(d.buffers[1]))
                .buffers_push(vec![0; 16]),
        ),
        inv(
            "TD-BUF-013",
            "memory-class",
            "per-block scale buffer in HOST_PINNED memory, data buffer STANDARD",
            per_block().desc(|d| d.buffers[1].memory_class = 0x01),
        ),
        inv(
            "QZ-DEV-001",
            "",
            "scale buffer on device 1, data on device 0",
            per_block().desc(|d| d.buffers[1].device_tag = 1),
        ),
        inv(
            "QZ-DAT-001",
            "",
            "per-tensor int8 [2, 3] data buffer of 5 bytes",
            per_tensor().buffer(0, |b| b.truncate(5)),
        ),
        inv(
            "QZ-DAT-001",
            "padded",
            "per-block int4 [4, 40] data buffer sized for 40 codes a row, not the padded 64",
            per_block().buffer(0, |b| b.truncate(80)),
        ),
    ]
}

impl Tensor {
    fn buffers_push(mut self, b: Vec<u8>) -> Self {
        self.buffers.push(b);
        self
    }
}

fn per_tensor_cases() -> Vec<Case> {
    let scale = |v: f32| per_tensor().q(PerTensorAffine::SCALE, &v.to_le_bytes());
    vec![
        inv(
            "QT-TYP-001",
            "",
            "per-tensor storage float32",
            per_tensor().desc(|d| d.type_tag = 0x03),
        ),
        inv("QT-SCL-001", "", "per-tensor scale 0", scale(0.0)),
        inv(
            "QT-SCL-001",
            "negative-zero",
            "per-tensor scale -0.0",
            scale(-0.0),
        ),
        inv("QT-SCL-001", "nan", "per-tensor scale NaN", scale(f32::NAN)),
        inv(
            "QT-SCL-001",
            "inf",
            "per-tensor scale +inf",
            scale(f32::INFINITY),
        ),
        inv(
            "QT-ZPT-001",
            "",
            "per-tensor int8 zero_point 200",
            per_tensor().q(PerTensorAffine::ZERO_POINT, &200i32.to_le_bytes()),
        ),
        inv(
            "QT-BUF-001",
            "",
            "per-tensor affine int8 [2, 3] with a second buffer",
            per_tensor()
                .desc(|d| d.buffers.push(d.buffers[0]))
                .buffers_push(vec![0; 8]),
        ),
        inv(
            "QT-RSV-001",
            "",
            "per-tensor _reserved[2] = 1",
            per_tensor().q(PerTensorAffine::RESERVED + 2, &[1]),
        ),
    ]
}

fn per_channel_cases() -> Vec<Case> {
    vec![
        inv(
            "QC-TYP-001",
            "",
            "per-channel storage float16",
            per_channel().desc(|d| d.type_tag = 0x01),
        ),
        inv(
            "QC-AXS-001",
            "",
            "per-channel axis 2 of rank 2",
            per_channel().q(PerChannelAffine::AXIS, &[2, 0, 0, 0]),
        ),
        inv(
            "QC-AXS-002",
            "",
            "per-channel along axis 0 with shape[0] the dynamic sentinel",
            per_channel().desc(|d| d.shape[0] = u64::MAX),
        ),
        inv(
            "QC-STY-001",
            "",
            "per-channel scale_type_tag 0x01 (float16)",
            per_channel().q(PerChannelAffine::SCALE_TYPE_TAG, &[0x01]),
        ),
        inv(
            "QC-RSV-001",
            "",
            "per-channel _reserved[1] = 1",
            per_channel().q(PerChannelAffine::RESERVED + 1, &[1]),
        ),
        inv(
            "QC-SYM-001",
            "",
            "symmetric per-channel zero_point_buffer_index 5 (0xFFFFFFFF required)",
            per_channel_symmetric().q(PerChannelAffine::ZERO_POINT_BUFFER_INDEX, &[5, 0, 0, 0]),
        ),
        inv(
            "QC-IDX-001",
            "",
            "per-channel scale_buffer_index 7 of 3 buffers",
            per_channel().q(PerChannelAffine::SCALE_BUFFER_INDEX, &[7, 0, 0, 0]),
        ),
        inv(
            "QC-SIZ-001",
            "",
            "per-channel scale buffer of 16 bytes for 3 channels",
            per_channel().buffer(1, |b| b.extend([0, 0, 0x80, 0x3F])),
        ),
        inv(
            "QC-SCL-001",
            "",
            "per-channel scale[1] = +inf",
            per_channel().buffer(1, |b| b[4..8].copy_from_slice(&f32::INFINITY.to_le_bytes())),
        ),
        inv(
            "QC-ZPT-001",
            "",
            "per-channel uint8 zero_point[2] = 300",
            per_channel().buffer(2, |b| b[8..12].copy_from_slice(&300i32.to_le_bytes())),
        ),
    ]
}

fn per_block_cases() -> Vec<Case> {
    let scale0 = |v: [u8; 2]| per_block().buffer(1, move |b| b[2..4].copy_from_slice(&v));
    vec![
        inv(
            "QB-TYP-001",
            "",
            "per-block storage int16",
            per_block().desc(|d| d.type_tag = 0x12),
        ),
        inv(
            "QB-AXS-001",
            "",
            "per-block axis 2 of rank 2",
            per_block().q(PerBlockAffine::AXIS, &[2, 0, 0, 0]),
        ),
        inv(
            "QB-AXS-002",
            "",
            "per-block along axis 1 with shape[1] the dynamic sentinel",
            per_block().desc(|d| d.shape[1] = u64::MAX),
        ),
        inv(
            "QB-BSZ-001",
            "",
            "per-block block_size 24 (not a power of two)",
            per_block().q(PerBlockAffine::BLOCK_SIZE, &[24, 0, 0, 0]),
        ),
        inv(
            "QB-BSZ-001",
            "one",
            "per-block block_size 1",
            per_block().q(PerBlockAffine::BLOCK_SIZE, &[1, 0, 0, 0]),
        ),
        inv(
            "QB-BSZ-002",
            "",
            "per-block block_size 64 over shape[1] = 40",
            per_block()
                .q(PerBlockAffine::BLOCK_SIZE, &[64, 0, 0, 0])
                .buffer(1, |b| {
                    let firsts: Vec<u8> = b.chunks(4).flat_map(|c| c[..2].to_vec()).collect();
                    *b = firsts;
                }),
        ),
        inv(
            "QB-STY-001",
            "",
            "per-block scale_type_tag 0x04 (float64)",
            per_block().q(PerBlockAffine::SCALE_TYPE_TAG, &[0x04]),
        ),
        inv(
            "QB-RSV-001",
            "",
            "per-block _reserved[0] = 1",
            per_block().q(PerBlockAffine::RESERVED, &[1]),
        ),
        inv(
            "QB-SYM-001",
            "",
            "symmetric per-block zero_point_buffer_index 2 (0xFFFFFFFF required)",
            per_block().q(PerBlockAffine::ZERO_POINT_BUFFER_INDEX, &[2, 0, 0, 0]),
        ),
        inv(
            "QB-IDX-001",
            "",
            "per-block scale_buffer_index 9 of 2 buffers",
            per_block().q(PerBlockAffine::SCALE_BUFFER_INDEX, &[9, 0, 0, 0]),
        ),
        inv(
            "QB-IDX-001",
            "zero-point",
            "asymmetric per-block zero_point_buffer_index 3 of 3 buffers",
            per_block_asymmetric().q(PerBlockAffine::ZERO_POINT_BUFFER_INDEX, &[3, 0, 0, 0]),
        ),
        inv(
            "QB-SIZ-001",
            "",
            "per-block scale buffer of 18 bytes for 8 float16 scales",
            per_block().buffer(1, |b| b.extend(f16(1.0))),
        ),
        inv(
            "QB-SIZ-001",
            "zero-point",
            "per-block zero-point buffer of 32 bytes for 9 blocks",
            per_block_asymmetric().buffer(2, |b| b.truncate(32)),
        ),
        inv(
            "QB-PAD-001",
            "",
            "per-block int4 [4, 40]: padding code 45 of row 0 is 1",
            per_block().buffer(0, |b| b[22] |= 0x10),
        ),
        inv(
            "QB-PAD-001",
            "axis0",
            "per-block int2 [5, 3] along axis 0: a code of padding row 5 is 1",
            per_block_axis0().buffer(0, |b| b[3] |= 0x40),
        ),
        inv(
            "QB-SCL-001",
            "",
            "per-block float16 scale[1] = 0",
            scale0(f16(0.0)),
        ),
        inv(
            "QB-SCL-001",
            "negative-zero",
            "per-block float16 scale[1] = -0.0",
            scale0(f16(-0.0)),
        ),
        inv(
            "QB-SCL-001",
            "inf",
            "per-block float16 scale[1] = +inf",
            scale0(f16(f32::INFINITY)),
        ),
        inv(
            "QB-SCL-001",
            "nan",
            "per-block float16 scale[1] = NaN",
            scale0([0x00, 0x7E]),
        ),
    ]
}

fn nf4_cases() -> Vec<Case> {
    vec![
        inv(
            "QN-TYP-001",
            "",
            "NF4 storage int4",
            nf4().desc(|d| d.type_tag = 0x48),
        ),
        inv(
            "QN-AXS-001",
            "",
            "NF4 axis 5 of rank 2",
            nf4().q(BlockScaled::AXIS, &[5, 0, 0, 0]),
        ),
        inv(
            "QN-AXS-002",
            "",
            "NF4 along axis 1 with shape[1] the dynamic sentinel",
            nf4().desc(|d| d.shape[1] = u64::MAX),
        ),
        inv(
            "QN-BSZ-001",
            "",
            "NF4 block_size 4",
            nf4().q(BlockScaled::BLOCK_SIZE, &[4, 0, 0, 0]),
        ),
        inv(
            "QN-BSZ-002",
            "",
            "NF4 block_size 128 over shape[1] = 70",
            nf4()
                .q(BlockScaled::BLOCK_SIZE, &[128, 0, 0, 0])
                .buffer(1, |b| {
                    *b = f32s(&[1.5, 0.25]);
                }),
        ),
        inv(
            "QN-IDX-001",
            "",
            "NF4 scale_buffer_index 3 of 2 buffers",
            nf4().q(BlockScaled::SCALE_BUFFER_INDEX, &[3, 0, 0, 0]),
        ),
        inv(
            "QN-SIZ-001",
            "",
            "NF4 absmax buffer of 20 bytes for 4 blocks",
            nf4().buffer(1, |b| b.extend(f32s(&[1.0]))),
        ),
        inv(
            "QN-PAD-001",
            "",
            "NF4 padding code 71 of row 0 is 15",
            nf4().buffer(0, |b| b[35] |= 0xF0),
        ),
        inv(
            "QN-SCL-001",
            "",
            "NF4 absmax[3] = -1",
            nf4().buffer(1, |b| b[12..16].copy_from_slice(&(-1.0f32).to_le_bytes())),
        ),
    ]
}

fn mxfp_cases() -> Vec<Case> {
    vec![
        inv(
            "QM-TYP-001",
            "",
            "MXFP storage uint4",
            mxfp4().desc(|d| d.type_tag = 0x49),
        ),
        inv(
            "QM-AXS-001",
            "",
            "MXFP axis 2 of rank 2",
            mxfp4().q(BlockScaled::AXIS, &[2, 0, 0, 0]),
        ),
        inv(
            "QM-AXS-002",
            "",
            "MXFP along axis 1 with shape[1] the dynamic sentinel",
            mxfp4().desc(|d| d.shape[1] = u64::MAX),
        ),
        inv(
            "QM-BSZ-001",
            "",
            "MXFP block_size 8",
            mxfp4().q(BlockScaled::BLOCK_SIZE, &[8, 0, 0, 0]),
        ),
        inv(
            "QM-BSZ-001",
            "large",
            "MXFP block_size 4096",
            mxfp4().q(BlockScaled::BLOCK_SIZE, &[0, 0x10, 0, 0]),
        ),
        inv(
            "QM-MUL-001",
            "",
            "MXFP shape[1] = 48 with blocks of 32",
            mxfp4()
                .desc(|d| d.shape[1] = 48)
                .buffer(0, |b| b.resize(48, 0x11)),
        ),
        inv(
            "QM-IDX-001",
            "",
            "MXFP scale_buffer_index 4 of 2 buffers",
            mxfp4().q(BlockScaled::SCALE_BUFFER_INDEX, &[4, 0, 0, 0]),
        ),
        inv(
            "QM-SIZ-001",
            "",
            "MXFP scale buffer of 3 bytes for 2 blocks",
            mxfp4().buffer(1, |b| b.push(127)),
        ),
        inv(
            "QM-SCL-001",
            "",
            "MXFP scale 0xFF (reserved E8M0)",
            mxfp4().buffer(1, |b| b[1] = 0xFF),
        ),
        inv(
            "QM-SCL-001",
            "zero",
            "MXFP scale 0x00 (reserved E8M0)",
            mxfp4().buffer(1, |b| b[0] = 0x00),
        ),
    ]
}

//! Corpus cases for quantization outside dense layouts (quantization.md § Buffer
//! Table Placement Rules, layouts/block-paged.md § Quantization Compatibility):
//! valid quantized COO, CSR and block-paged tensors, and one file per rule that a
//! sparse or block-paged quantized tensor can break on its own.

use hrry::layout::bits::pack;
use hrry::layout::sparse::encode;
use hrry::model::build::descriptor;
use hrry::schema::{
    BlockScaled, LayoutFields, PerBlockAffine, PerChannelAffine, PerTensorAffine, QuantScheme,
    QuantizationHeader, QuantizationSection, TensorDescriptor, FLAG_SYMMETRIC, LAYOUT_BLOCK_PAGED,
    NO_ZERO_POINT_BUFFER, SCHEME_NF4, SCHEME_PER_BLOCK_AFFINE, SCHEME_PER_CHANNEL_AFFINE,
    SCHEME_PER_TENSOR_AFFINE,
};

use super::patch::{self, f32s, i32s, u32s};
use super::{Case, Format};

const F: Format = Format::HrryFile;
const INT8: u8 = 0x10;
const UINT4: u8 = 0x49;

/// A quantized tensor of any layout: its descriptor and buffers in table order.
#[derive(Clone)]
pub struct Quantized {
    /// The descriptor (buffer sizes are synced when written).
    pub desc: TensorDescriptor,
    /// Layout buffers, then parameter buffers.
    pub buffers: Vec<Vec<u8>>,
}

impl Quantized {
    /// `layout` (an unquantized encoding) with `scheme` and `params` appended.
    fn new(
        layout: (TensorDescriptor, Vec<Vec<u8>>),
        scheme: QuantScheme,
        params: Vec<Vec<u8>>,
    ) -> Self {
        let (mut desc, mut buffers) = layout;
        buffers.extend(params);
        desc.buffers.resize(buffers.len(), desc.buffers[0]);
        desc.quantization = Some(QuantizationSection::new(scheme));
        Quantized { desc, buffers }
    }

    /// Overwrites bytes of the quantization descriptor at `offset`.
    pub fn q(mut self, offset: u64, bytes: &[u8]) -> Self {
        patch::put_quantization(&mut self.desc, offset, bytes);
        self
    }

    /// Edits the descriptor and the buffers.
    pub fn edit(mut self, f: impl FnOnce(&mut TensorDescriptor, &mut Vec<Vec<u8>>)) -> Self {
        f(&mut self.desc, &mut self.buffers);
        self
    }

    /// The descriptor with one handle per buffer (extra ones copy buffer 0's), each
    /// sized to its buffer, flags and length synced; and the buffers.
    pub fn synced(mut self) -> (TensorDescriptor, Vec<Vec<u8>>) {
        self.desc
            .buffers
            .resize(self.buffers.len(), self.desc.buffers[0]);
        for (h, b) in self.desc.buffers.iter_mut().zip(&self.buffers) {
            h.byte_size = b.len() as u64;
        }
        self.desc.sync_sections();
        (self.desc, self.buffers)
    }

    /// The one-tensor file holding this tensor ([`Quantized::synced`]), written
    /// unchecked.
    pub fn file(self) -> Vec<u8> {
        let (descriptor, buffers) = self.synced();
        patch::write_one("q", descriptor, buffers)
    }
}

fn f16s(values: &[f32]) -> Vec<u8> {
    values
        .iter()
        .flat_map(|&v| half::f16::from_f32(v).to_bits().to_le_bytes())
        .collect()
}

fn per_channel(axis: u32, symmetric: bool, scale: u32, zero_point: u32) -> QuantScheme {
    QuantScheme::PerChannelAffine(PerChannelAffine {
        header: QuantizationHeader::version1(
            SCHEME_PER_CHANNEL_AFFINE,
            if symmetric { FLAG_SYMMETRIC } else { 0 },
        ),
        axis,
        scale_buffer_index: scale,
        zero_point_buffer_index: if symmetric {
            NO_ZERO_POINT_BUFFER
        } else {
            zero_point
        },
        scale_type_tag: 0x03,
        reserved: [0; 3],
    })
}

fn per_block(axis: u32, block_size: u32, scale_type: u8, zero_point: Option<u32>) -> QuantScheme {
    QuantScheme::PerBlockAffine(PerBlockAffine {
        header: QuantizationHeader::version1(
            SCHEME_PER_BLOCK_AFFINE,
            if zero_point.is_none() {
                FLAG_SYMMETRIC
            } else {
                0
            },
        ),
        axis,
        block_size,
        scale_buffer_index: 3,
        zero_point_buffer_index: zero_point.unwrap_or(NO_ZERO_POINT_BUFFER),
        scale_type_tag: scale_type,
        reserved: [0; 3],
    })
}

/// The int8 [4, 4] tensor of coo.md's example, as codes.
fn coo_codes() -> Vec<u8> {
    let mut d = vec![0u8; 16];
    d[1] = 12;
    d[8] = 0xF6; // -10
    d[15] = 100;
    d
}

/// COO int8 [4, 4] (3 entries), per-channel along axis 0 with zero points: scales
/// in buffer 2, zero points in buffer 3.
pub fn coo_per_channel() -> Quantized {
    let layout = encode::coo(INT8, &[4, 4], &coo_codes()).expect("coo");
    Quantized::new(
        layout,
        per_channel(0, false, 2, 3),
        vec![f32s(&[0.5, 0.25, 2.0, 0.125]), i32s(&[0, 1, -2, 3])],
    )
}

/// CSR int8 [4, 8], per-block affine along axis 1 in blocks of 4 (8 blocks), float16
/// scales in buffer 3, symmetric.
pub fn csr_per_block() -> Quantized {
    let codes: Vec<u8> = (0..32u8)
        .map(|i| if i % 3 == 0 { i.wrapping_mul(7) | 1 } else { 0 })
        .collect();
    let layout = encode::compressed(INT8, &[4, 8], &codes, false).expect("csr");
    Quantized::new(
        layout,
        per_block(1, 4, 0x01, None),
        vec![f16s(&[0.5, 1.0, 0.25, 2.0, 1.5, 0.75, 4.0, 0.125])],
    )
}

/// block-paged.md's example with int8 storage: 2 sequences (6 and 3 tokens), pages
/// of 4 tokens, 5 pages of [2 heads, 8 dims], page 0 shared. No quantization yet.
fn paged_layout(type_tag: u8, width: u32) -> (TensorDescriptor, Vec<Vec<u8>>) {
    let fields = super::layout::example_paged_fields();
    let d = descriptor(
        type_tag,
        LAYOUT_BLOCK_PAGED,
        &[9, 2, 8],
        LayoutFields::BlockPaged(fields),
        &[0, 0, 0],
    );
    let pool = pack(width, (0..320u128).map(|i| (i * 37 + 5) % (1 << width)));
    (d, vec![pool, u32s(&[0, 1, 0]), u32s(&[0, 2, 3])])
}

/// The 20 page slots' float32 scales (`num_pages * page_size`).
fn slot_scales() -> Vec<u8> {
    f32s(
        &(0..20)
            .map(|i| 0.125 * (i as f32 + 1.0))
            .collect::<Vec<_>>(),
    )
}

/// Block-paged int8, per-block affine along axis 0 with `block_size = page_size` 4:
/// float32 scales and int32 zero points per page slot (20 each), buffers 3 and 4.
pub fn paged_per_block() -> Quantized {
    Quantized::new(
        paged_layout(INT8, 8),
        per_block(0, 4, 0x03, Some(4)),
        vec![
            slot_scales(),
            i32s(&(0..20).map(|i| i % 5 - 2).collect::<Vec<_>>()),
        ],
    )
}

/// Block-paged int8, per-channel affine along head_dim (axis 2), symmetric: 8
/// float32 scales in buffer 3.
pub fn paged_per_channel() -> Quantized {
    Quantized::new(
        paged_layout(INT8, 8),
        per_channel(2, true, 3, 0),
        vec![f32s(&[0.5, 1.0, 1.5, 2.0, 0.25, 0.75, 1.25, 4.0])],
    )
}

/// Block-paged int8, per-tensor affine: no parameter buffer.
pub fn paged_per_tensor() -> Quantized {
    let scheme = QuantScheme::PerTensorAffine(PerTensorAffine {
        header: QuantizationHeader::version1(SCHEME_PER_TENSOR_AFFINE, 0),
        scale: 0.0625,
        zero_point: 3,
        reserved: [0; 4],
    });
    Quantized::new(paged_layout(INT8, 8), scheme, vec![])
}

fn valid(name: &str, description: &str, t: Quantized) -> Case {
    Case::valid(F, name, description, t.file())
}

fn inv(rule: &'static str, suffix: &str, description: &str, t: Quantized) -> Case {
    Case::invalid(F, rule, suffix, description, t.file())
}

/// Every case of quantization outside dense layouts.
pub fn cases() -> Vec<Case> {
    vec![
        valid(
            "quant-coo-per-channel.hrry",
            "COO int8 [4, 4], per-channel affine along axis 0 with zero points (buffers 2 and 3)",
            coo_per_channel(),
        ),
        valid(
            "quant-csr-per-block.hrry",
            "CSR int8 [4, 8], per-block affine along axis 1 in blocks of 4, float16 scales (buffer 3)",
            csr_per_block(),
        ),
        valid(
            "quant-block-paged-per-block.hrry",
            "block-paged int8 [9, 2, 8], per-block affine axis 0 with block_size = page_size 4; float32 scales and zero points per page slot (20 each)",
            paged_per_block(),
        ),
        valid(
            "quant-block-paged-per-channel.hrry",
            "block-paged int8 [9, 2, 8], symmetric per-channel affine along head_dim (axis 2)",
            paged_per_channel(),
        ),
        valid(
            "quant-block-paged-per-tensor.hrry",
            "block-paged int8 [9, 2, 8], per-tensor affine (3 buffers)",
            paged_per_tensor(),
        ),
        inv(
            "QZ-BUF-004",
            "",
            "COO per-channel scale_buffer_index 1 (the COO indices buffer)",
            coo_per_channel().q(PerChannelAffine::SCALE_BUFFER_INDEX, &[1, 0, 0, 0]),
        ),
        inv(
            "QZ-BUF-004",
            "block-paged",
            "block-paged per-block zero_point_buffer_index 2 (seq_ptr)",
            paged_per_block().q(PerBlockAffine::ZERO_POINT_BUFFER_INDEX, &[2, 0, 0, 0]),
        ),
        inv(
            "QZ-BUF-003",
            "coo",
            "COO per-channel tensor with a fifth buffer (2 layout + 2 parameter buffers expected)",
            coo_per_channel().edit(|_, b| b.push(vec![0; 8])),
        ),
        inv(
            "QZ-BUF-003",
            "block-paged",
            "block-paged per-channel tensor with a fifth buffer (3 layout + 1 parameter buffer expected)",
            paged_per_channel().edit(|_, b| b.push(vec![0; 8])),
        ),
        inv(
            "QC-SIZ-001",
            "coo",
            "COO per-channel scale buffer of 3 float32 for 4 channels",
            coo_per_channel().edit(|_, b| b[2].truncate(12)),
        ),
        inv(
            "QB-SIZ-001",
            "csr",
            "CSR per-block scale buffer of 7 float16 for 8 blocks",
            csr_per_block().edit(|_, b| b[3].truncate(14)),
        ),
        inv(
            "QB-SIZ-001",
            "block-paged",
            "block-paged per-block scales sized for the logical blocks (3 blocks x 16) (48 float32) instead of the 20 page slots",
            paged_per_block().edit(|_, b| b[3].resize(48 * 4, 0x3E)),
        ),
        inv(
            "QT-BUF-001",
            "block-paged",
            "block-paged per-tensor tensor with a fourth buffer",
            paged_per_tensor().edit(|_, b| b.push(vec![0; 16])),
        ),
        inv(
            "LY-BP-013",
            "memory-class",
            "block-paged scale buffer in HOST_PINNED memory, the rest STANDARD",
            paged_per_block().edit(|d, b| {
                d.buffers.resize(b.len(), d.buffers[0]);
                d.buffers[3].memory_class = 0x01;
            }),
        ),
        inv(
            "LY-BP-015",
            "",
            "block-paged uint4 quantized with NF4 (axis 0, blocks of 4)",
            Quantized::new(
                paged_layout(UINT4, 4),
                QuantScheme::Nf4(BlockScaled {
                    scale_buffer_index: 3,
                    ..BlockScaled::version1(SCHEME_NF4, 0, 4)
                }),
                vec![slot_scales()],
            ),
        ),
        inv(
            "LY-BP-019",
            "",
            "block-paged uint4 quantized with NF4 along axis 2 (head_dim), a composition \
             block-paged.md does not define",
            Quantized::new(
                paged_layout(UINT4, 4),
                QuantScheme::Nf4(BlockScaled {
                    scale_buffer_index: 3,
                    ..BlockScaled::version1(SCHEME_NF4, 2, 8)
                }),
                vec![slot_scales()],
            ),
        ),
        inv(
            "LY-BP-016",
            "",
            "block-paged per-block affine along axis 2",
            paged_per_block().q(PerBlockAffine::AXIS, &[2, 0, 0, 0]),
        ),
        inv(
            "LY-BP-016",
            "block-size",
            "block-paged per-block affine along axis 0 with block_size 8, page_size 4",
            paged_per_block().q(PerBlockAffine::BLOCK_SIZE, &[8, 0, 0, 0]),
        ),
        inv(
            "LY-BP-017",
            "",
            "block-paged per-channel affine along the paged axis 0",
            Quantized::new(
                paged_layout(INT8, 8),
                per_channel(0, true, 3, 0),
                vec![f32s(&[1.0; 9])],
            ),
        ),
    ]
}

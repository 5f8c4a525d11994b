//! Helpers shared by the quantization tests: a small deterministic RNG and builders
//! of quantized tensors with random codes and parameters.
#![allow(dead_code)]

use hrry::model::element_type::ElementType;
use hrry::quant::quantize::quantized_descriptor;
use hrry::schema::{
    BlockScaled, PerBlockAffine, QuantScheme, TensorDescriptor, SCHEME_MXFP, SCHEME_NF4,
};

/// SplitMix64.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

/// Stores `code` at element `index` (LSB-first).
pub fn put_code(buf: &mut [u8], index: usize, width: usize, code: u32) {
    let bit = index * width;
    for k in 0..width {
        if code >> k & 1 == 1 {
            let b = bit + k;
            buf[b / 8] |= 1 << (b % 8);
        }
    }
}

/// A random scale of `scale_type_tag` bits: finite and non-zero; "wild" draws any
/// such bit pattern (subnormals, huge values), otherwise a moderate value.
pub fn random_scale(rng: &mut Rng, scale_type_tag: u8) -> Vec<u8> {
    let wild = rng.below(4) == 0;
    loop {
        let bytes = match scale_type_tag {
            0x01 => {
                let h = if wild {
                    rng.next() as u16
                } else {
                    half::f16::from_f32((rng.below(2000) as f32 - 1000.0) / 3000.0).to_bits()
                };
                h.to_le_bytes().to_vec()
            }
            0x02 => {
                let h = if wild {
                    rng.next() as u16
                } else {
                    half::bf16::from_f32((rng.below(2000) as f32 - 1000.0) / 3000.0).to_bits()
                };
                h.to_le_bytes().to_vec()
            }
            _ => {
                let f = if wild {
                    f32::from_bits(rng.next() as u32)
                } else {
                    (rng.below(2000) as f32 - 1000.0) / 3000.0
                };
                f.to_le_bytes().to_vec()
            }
        };
        let v = hrry::model::quant::widen_scale(scale_type_tag, &bytes);
        if v.is_finite() && v != 0.0 {
            return bytes;
        }
    }
}

/// A random zero point: usually small, sometimes anywhere in int32 (including values
/// near the limits that need 64-bit subtraction).
pub fn random_zero_point(rng: &mut Rng) -> i32 {
    match rng.below(8) {
        0 => rng.next() as i32,
        1 => rng.pick(&[i32::MIN, i32::MAX, i32::MIN + 1, i32::MAX - 100]),
        _ => rng.below(300) as i32 - 150,
    }
}

/// Random data of `storage` codes for a row-major tensor of `shape` padded along
/// `axis` to `padded` (padding codes zero).
pub fn random_data(
    rng: &mut Rng,
    storage: ElementType,
    shape: &[u64],
    axis: usize,
    padded: u64,
) -> Vec<u8> {
    let width = storage.bit_width().unwrap() as usize;
    let s = shape[axis];
    let post: u64 = shape[axis + 1..].iter().product();
    let pre: u64 = shape[..axis].iter().product();
    let n = pre * padded * post;
    let mut data = vec![0u8; storage.buffer_size(n).unwrap() as usize];
    for lin in 0..n {
        let i = (lin / post) % padded;
        if i < s {
            let code = (rng.next() as u32) & ((1u64 << width) - 1) as u32;
            put_code(&mut data, lin as usize, width, code);
        }
    }
    data
}

/// Which block scheme to build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Block {
    /// Per-block affine with a scale type tag and symmetry.
    Affine {
        scale_type: u8,
        symmetric: bool,
    },
    Nf4,
    Mxfp,
}

/// A row-major block-quantized tensor with random codes and parameters.
pub fn block_tensor(
    rng: &mut Rng,
    block: Block,
    storage: ElementType,
    block_size: u32,
    shape: &[u64],
    axis: usize,
) -> (TensorDescriptor, Vec<Vec<u8>>) {
    let k = u64::from(block_size);
    let s = shape[axis];
    let per_axis = s.div_ceil(k);
    let outer: u64 = shape.iter().product::<u64>() / s.max(1);
    let outer = if s == 0 {
        shape
            .iter()
            .enumerate()
            .filter(|&(d, _)| d != axis)
            .map(|(_, &n)| n)
            .product()
    } else {
        outer
    };
    let blocks = per_axis * outer;
    let data = random_data(rng, storage, shape, axis, per_axis * k);
    let (scheme, params) = match block {
        Block::Affine {
            scale_type,
            symmetric,
        } => {
            let scales: Vec<u8> = (0..blocks)
                .flat_map(|_| random_scale(rng, scale_type))
                .collect();
            let mut params = vec![scales];
            if !symmetric {
                params.push(
                    (0..blocks)
                        .flat_map(|_| random_zero_point(rng).to_le_bytes())
                        .collect(),
                );
            }
            let d = PerBlockAffine::version1(axis as u32, block_size, scale_type, symmetric);
            (QuantScheme::PerBlockAffine(d), params)
        }
        Block::Nf4 => {
            let scales: Vec<u8> = (0..blocks)
                .flat_map(|_| {
                    let v = match rng.below(6) {
                        0 => 0.0,
                        1 => f32::from_bits(rng.next() as u32 & 0x7F7F_FFFF),
                        _ => rng.below(1000) as f32 / 77.0,
                    };
                    v.to_le_bytes()
                })
                .collect();
            let d = BlockScaled::version1(SCHEME_NF4, axis as u32, block_size);
            (QuantScheme::Nf4(d), vec![scales])
        }
        Block::Mxfp => {
            let scales: Vec<u8> = (0..blocks)
                .map(|_| match rng.below(4) {
                    0 => 1 + rng.below(254) as u8,
                    _ => 110 + rng.below(34) as u8,
                })
                .collect();
            let d = BlockScaled::version1(SCHEME_MXFP, axis as u32, block_size);
            (QuantScheme::Mxfp(d), vec![scales])
        }
    };
    let mut buffers = vec![data];
    buffers.extend(params);
    let sizes: Vec<u64> = buffers.iter().map(|b| b.len() as u64).collect();
    let desc = quantized_descriptor(storage.tag(), shape, &sizes, scheme);
    (desc, buffers)
}

/// Slices of owned buffers.
pub fn slices(buffers: &[Vec<u8>]) -> Vec<&[u8]> {
    buffers.iter().map(Vec::as_slice).collect()
}

/// Asserts two float slices are bit-identical.
pub fn assert_bits_eq(a: &[f32], b: &[f32], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert_eq!(
            x.to_bits(),
            y.to_bits(),
            "{what}: element {i}: {x:e} ({:08X}) vs {y:e} ({:08X})",
            x.to_bits(),
            y.to_bits()
        );
    }
}

//! Dequantization of the ggml block formats that have no Hurray equivalent, used by
//! `--dequantize-unsupported`. Each function reads whole blocks and appends float32
//! values in element order, with the same float32 operations (and order) as the
//! `gguf` Python package's reference dequantizers, so results agree bit for bit.
//!
//! Block layouts (offsets in bytes within a block) are those of the ggml formats.
//! The grid-codebook types (`IQ1_*`, `IQ2_*`, `IQ3_*`) are not supported.

use crate::convert::gguf_schema::GgmlType;

/// Elements per K-quant super-block.
const QK_K: usize = 256;

/// Non-uniform 4-bit codebook of `IQ4_NL` and `IQ4_XS`.
const KVALUES_IQ4NL: [i8; 16] = [
    -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113,
];
/// E2M1 values, doubled, of `MXFP4`.
const KVALUES_MXFP4: [i8; 16] = [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12];

fn f16_at(b: &[u8], at: usize) -> f32 {
    half::f16::from_bits(u16::from_le_bytes([b[at], b[at + 1]])).to_f32()
}

/// True when [`dequantize`] handles `ty`.
pub(crate) fn supported(ty: GgmlType) -> bool {
    use GgmlType::*;
    matches!(
        ty,
        Q4_0 | Q4_1
            | Q5_0
            | Q5_1
            | Q8_0
            | Q8_1
            | Q2K
            | Q3K
            | Q4K
            | Q5K
            | Q6K
            | Q8K
            | Iq4Nl
            | Iq4Xs
            | Tq1_0
            | Tq2_0
            | Mxfp4
    )
}

/// Dequantizes `data` (whole blocks of `ty`) into `out`. Returns `false` (leaving
/// `out` alone) when `ty` is not a supported block type or `data` is not a whole
/// number of blocks.
pub(crate) fn dequantize(ty: GgmlType, data: &[u8], out: &mut Vec<f32>) -> bool {
    let (block_len, block_bytes) = ty.block_geometry();
    let (block_len, block_bytes) = (block_len as usize, block_bytes as usize);
    if !supported(ty) || !data.len().is_multiple_of(block_bytes) {
        return false;
    }
    out.reserve(data.len() / block_bytes * block_len);
    for b in data.chunks_exact(block_bytes) {
        block(ty, b, out);
    }
    true
}

fn block(ty: GgmlType, b: &[u8], out: &mut Vec<f32>) {
    use GgmlType::*;
    match ty {
        Q4_0 => {
            let d = f16_at(b, 0);
            out.extend((0..32).map(|e| {
                let q = (b[2 + e % 16] >> (4 * (e / 16))) & 0x0F;
                d * f32::from(q as i8 - 8)
            }));
        }
        Q4_1 => {
            let (d, m) = (f16_at(b, 0), f16_at(b, 2));
            out.extend((0..32).map(|e| {
                let q = (b[4 + e % 16] >> (4 * (e / 16))) & 0x0F;
                d * f32::from(q) + m
            }));
        }
        Q5_0 => {
            let d = f16_at(b, 0);
            let qh = u32::from_le_bytes([b[2], b[3], b[4], b[5]]);
            out.extend((0..32).map(|e| {
                let q = five_bit(&b[6..22], qh, e);
                d * f32::from(q as i8 - 16)
            }));
        }
        Q5_1 => {
            let (d, m) = (f16_at(b, 0), f16_at(b, 2));
            let qh = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
            out.extend((0..32).map(|e| d * f32::from(five_bit(&b[8..24], qh, e)) + m));
        }
        Q8_0 => {
            let d = f16_at(b, 0);
            out.extend(b[2..34].iter().map(|&q| f32::from(q as i8) * d));
        }
        Q8_1 => {
            let d = f16_at(b, 0);
            out.extend(b[4..36].iter().map(|&q| f32::from(q as i8) * d));
        }
        Q2K => {
            let (scales, qs) = (&b[0..16], &b[16..80]);
            let (d, dmin) = (f16_at(b, 80), f16_at(b, 82));
            out.extend((0..QK_K).map(|e| {
                let s = scales[e / 16];
                let dl = d * f32::from(s & 0x0F);
                let ml = dmin * f32::from(s >> 4);
                dl * f32::from(two_bit(qs, e)) - ml
            }));
        }
        Q3K => {
            let (hmask, qs, sc) = (&b[0..32], &b[32..96], &b[96..108]);
            let d = f16_at(b, 108);
            let scale = |i: usize| {
                let low = if i < 8 { sc[i] & 0x0F } else { sc[i - 8] >> 4 };
                let high = (sc[8 + i % 4] >> (2 * (i / 4))) & 0x03;
                ((low | (high << 4)) as i8).wrapping_sub(32)
            };
            out.extend((0..QK_K).map(|e| {
                let dl = d * f32::from(scale(e / 16));
                let high = ((hmask[e % 32] >> (e / 32)) & 1) ^ 1;
                let q = two_bit(qs, e) as i8 - ((high << 2) as i8);
                dl * f32::from(q)
            }));
        }
        Q4K | Q5K => {
            let (d, dmin) = (f16_at(b, 0), f16_at(b, 2));
            let s = &b[4..16];
            let (qh, qs) = if ty == Q4K {
                (&b[0..0], &b[16..144])
            } else {
                (&b[16..48], &b[48..176])
            };
            let scale_min = |i: usize| {
                if i < 4 {
                    (s[i] & 0x3F, s[i + 4] & 0x3F)
                } else {
                    (
                        (s[i + 4] & 0x0F) | ((s[i - 4] >> 2) & 0x30),
                        (s[i + 4] >> 4) | ((s[i] >> 2) & 0x30),
                    )
                }
            };
            out.extend((0..QK_K).map(|e| {
                let (sc, m) = scale_min(e / 32);
                let dl = d * f32::from(sc);
                let dm = dmin * f32::from(m);
                let mut q = (qs[(e / 64) * 32 + e % 32] >> (4 * ((e % 64) / 32))) & 0x0F;
                if !qh.is_empty() {
                    q |= ((qh[e % 32] >> (e / 32)) & 1) << 4;
                }
                dl * f32::from(q) - dm
            }));
        }
        Q6K => {
            let (ql, qh, scales) = (&b[0..128], &b[128..192], &b[192..208]);
            let d = f16_at(b, 208);
            out.extend((0..QK_K).map(|e| {
                let (h, r) = (e / 128, e % 128);
                let low = (ql[h * 64 + r % 64] >> (4 * (r / 64))) & 0x0F;
                let high = (qh[h * 32 + r % 32] >> (2 * (r / 32))) & 0x03;
                let q = ((low | (high << 4)) as i8).wrapping_sub(32);
                let dl = d * f32::from(scales[e / 16] as i8);
                dl * f32::from(q)
            }));
        }
        Q8K => {
            let d = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            out.extend(b[4..260].iter().map(|&q| f32::from(q as i8) * d));
        }
        Iq4Nl => {
            let d = f16_at(b, 0);
            out.extend((0..32).map(|e| {
                let q = (b[2 + e % 16] >> (4 * (e / 16))) & 0x0F;
                d * f32::from(KVALUES_IQ4NL[q as usize])
            }));
        }
        Iq4Xs => {
            let d = f16_at(b, 0);
            let scales_h = u16::from_le_bytes([b[2], b[3]]);
            let (scales_l, qs) = (&b[4..8], &b[8..136]);
            out.extend((0..QK_K).map(|e| {
                let i = e / 32;
                let low = (scales_l[i / 2] >> (4 * (i % 2))) & 0x0F;
                let high = ((scales_h >> (2 * i)) & 0x03) as u8;
                let sc = ((low | (high << 4)) as i8).wrapping_sub(32);
                let dl = d * f32::from(sc);
                let r = e % 32;
                let q = (qs[i * 16 + r % 16] >> (4 * (r / 16))) & 0x0F;
                dl * f32::from(KVALUES_IQ4NL[q as usize])
            }));
        }
        Tq1_0 => {
            const POW3: [u8; 5] = [1, 3, 9, 27, 81];
            let (qs, qh) = (&b[0..48], &b[48..52]);
            let d = f16_at(b, 52);
            out.extend((0..QK_K).map(|e| {
                let byte = match e {
                    0..160 => qs[e % 32].wrapping_mul(POW3[e / 32]),
                    160..240 => qs[32 + (e - 160) % 16].wrapping_mul(POW3[(e - 160) / 16]),
                    _ => qh[(e - 240) % 4].wrapping_mul(POW3[(e - 240) / 4]),
                };
                let q = ((u16::from(byte) * 3) >> 8) as i8 - 1;
                d * f32::from(q)
            }));
        }
        Tq2_0 => {
            let d = f16_at(b, 64);
            out.extend((0..QK_K).map(|e| d * f32::from(two_bit(&b[0..64], e) as i8 - 1)));
        }
        Mxfp4 => {
            let e8 = u32::from(b[0]);
            let d = f32::from_bits(if e8 < 2 {
                0x0020_0000 << e8
            } else {
                (e8 - 1) << 23
            });
            out.extend((0..32).map(|e| {
                let q = (b[1 + e % 16] >> (4 * (e / 16))) & 0x0F;
                d * f32::from(KVALUES_MXFP4[q as usize])
            }));
        }
        _ => {}
    }
}

/// The 2-bit code of element `e` in a 256-element K-quant layout: 32-byte groups
/// per 128 elements, four 2-bit planes per byte.
fn two_bit(qs: &[u8], e: usize) -> u8 {
    let (half, r) = (e / 128, e % 128);
    (qs[half * 32 + r % 32] >> (2 * (r / 32))) & 0x03
}

/// The 5-bit code of element `e` of a 32-element block: low nibbles then high
/// nibbles of `qs`, fifth bit from bit `e` of `qh`.
fn five_bit(qs: &[u8], qh: u32, e: usize) -> u8 {
    let low = (qs[e % 16] >> (4 * (e / 16))) & 0x0F;
    low | ((((qh >> e) & 1) as u8) << 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn q8_0_and_q4_0_by_hand() {
        // d = 0.5 (f16 0x3800)
        let mut b = vec![0x00, 0x38];
        b.extend((0..32).map(|i| (i as i8 - 16) as u8));
        let mut out = Vec::new();
        assert!(dequantize(GgmlType::Q8_0, &b, &mut out));
        assert_eq!(out[0], -8.0);
        assert_eq!(out[31], 7.5);

        let mut b = vec![0x00, 0x40]; // d = 2.0
        b.extend([0x1F; 16]); // low nibble 15, high nibble 1
        out.clear();
        assert!(dequantize(GgmlType::Q4_0, &b, &mut out));
        assert_eq!(out[0], 14.0);
        assert_eq!(out[16], -14.0);
    }

    #[test]
    fn mxfp4_scale_and_codebook() {
        let mut b = vec![128u8]; // 2^(128-127) halved = 1.0
        b.extend([0x70u8; 16]); // low 0 -> 0, high 7 -> 12
        let mut out = Vec::new();
        assert!(dequantize(GgmlType::Mxfp4, &b, &mut out));
        assert_eq!(out[0], 0.0);
        assert_eq!(out[16], 12.0);
    }

    #[test]
    fn refuses_partial_blocks_and_grid_types() {
        let mut out = Vec::new();
        assert!(!dequantize(GgmlType::Q4K, &[0; 143], &mut out));
        assert!(!dequantize(GgmlType::Iq2Xxs, &[0; 66], &mut out));
        assert!(out.is_empty());
    }

    #[test]
    fn every_supported_type_fills_its_blocks() {
        for code in 0..64 {
            let Some(ty) = GgmlType::from_code(code) else {
                continue;
            };
            if !supported(ty) {
                continue;
            }
            let (n, bytes) = ty.block_geometry();
            let data: Vec<u8> = (0..bytes * 2).map(|i| (i * 37 % 251) as u8).collect();
            let mut out = Vec::new();
            assert!(dequantize(ty, &data, &mut out), "{}", ty.name());
            assert_eq!(out.len() as u64, 2 * n, "{}", ty.name());
        }
    }
}

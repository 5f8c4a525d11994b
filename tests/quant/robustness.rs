//! Damaged quantized tensors never panic: random edits of descriptor fields, shapes
//! and buffers either are refused by `Dequantizer::new` or dequantize, with every
//! kernel agreeing.

use crate::common::*;
use hrry::model::element_type::ElementType::*;
use hrry::quant::{Dequantizer, Kernel};
use hrry::schema::QuantizationSection;
use hrry::validate::{Report, Rules};

#[test]
fn random_edits_never_panic_and_kernels_agree() {
    let mut rng = Rng(77);
    let bases = [
        (
            Block::Affine {
                scale_type: 0x01,
                symmetric: true,
            },
            Int4,
            32u32,
        ),
        (
            Block::Affine {
                scale_type: 0x03,
                symmetric: false,
            },
            Uint8,
            8,
        ),
        (
            Block::Affine {
                scale_type: 0x02,
                symmetric: false,
            },
            Int2,
            4,
        ),
        (Block::Nf4, Uint4, 16),
        (Block::Mxfp, Float4E2m1, 16),
        (Block::Mxfp, Float6E3m2, 16),
    ];
    let mut accepted = 0;
    for round in 0..3000 {
        let (block, storage, k) = bases[round % bases.len()];
        let shape = [1 + rng.below(3), u64::from(k) * (1 + rng.below(3))];
        let (mut desc, mut buffers) = block_tensor(&mut rng, block, storage, k, &shape, 1);
        for _ in 0..1 + rng.below(3) {
            match rng.below(6) {
                0 => {
                    let section = desc.quantization.as_mut().unwrap();
                    let mut q = section.bytes().to_vec();
                    if q.is_empty() {
                        continue;
                    }
                    let i = rng.below(q.len() as u64) as usize;
                    q[i] = rng.next() as u8;
                    *section = QuantizationSection::from_bytes(q);
                }
                1 => {
                    let section = desc.quantization.as_mut().unwrap();
                    let mut q = section.bytes().to_vec();
                    let i = rng.below(q.len() as u64 + 1) as usize;
                    q.truncate(i);
                    *section = QuantizationSection::from_bytes(q);
                }
                2 => {
                    let d = rng.below(desc.shape.len() as u64) as usize;
                    desc.shape[d] = match rng.below(4) {
                        0 => 0,
                        1 => u64::MAX,
                        2 => rng.next(),
                        _ => rng.below(200),
                    };
                }
                3 => {
                    let b = rng.below(buffers.len() as u64) as usize;
                    let n = rng.below(buffers[b].len() as u64 + 1) as usize;
                    buffers[b].truncate(n);
                }
                4 => {
                    let b = rng.below(desc.buffers.len() as u64) as usize;
                    desc.buffers[b].byte_size = rng.below(4096);
                }
                _ => desc.type_tag = rng.next() as u8,
            }
        }
        let slices = slices(&buffers);
        let mut report = Report::default();
        hrry::decode::quant::check(&desc, 0, Some(&slices), &mut report);
        hrry::decode::quant::check(&desc, 0, None, &mut report);
        let Ok(mut dq) = Dequantizer::new(&desc, &slices) else {
            continue;
        };
        let Ok(auto) = dq.to_vec() else { continue };
        accepted += 1;
        dq.set_kernel(Kernel::Reference);
        let reference = dq.to_vec().unwrap();
        assert_bits_eq(&auto, &reference, &format!("round {round}"));
    }
    assert!(
        accepted > 100,
        "only {accepted} edited tensors were still valid"
    );
}

#[test]
fn a_dynamic_axis_breaks_the_scheme_rule_and_other_dynamic_dimensions_td_shp_002() {
    let mut rng = Rng(78);
    let block = Block::Affine {
        scale_type: 0x01,
        symmetric: true,
    };
    let (desc, buffers) = block_tensor(&mut rng, block, Int4, 32, &[4, 64], 1);
    let slices = slices(&buffers);
    let ids = |desc: &hrry::schema::TensorDescriptor, mode: Rules| {
        let mut report = Report::new(mode.into());
        hrry::decode::descriptor::check_descriptor(desc, 0, &mut report);
        hrry::decode::quant::check(desc, 0, Some(&slices), &mut report);
        let mut ids = report.rule_ids();
        ids.sort();
        ids.dedup();
        ids
    };
    assert!(ids(&desc, Rules::Hardened).is_empty());
    // The quantization axis: the scheme's spec rule, in both modes, and nothing else.
    let mut on_axis = desc.clone();
    on_axis.shape[1] = u64::MAX;
    for mode in [Rules::Hardened, Rules::Permissive] {
        assert_eq!(ids(&on_axis, mode), ["QB-AXS-002"], "{mode:?}");
    }
    assert!(Dequantizer::new(&on_axis, &slices).is_err());
    // Another dimension: the container's hardening rule, strict mode only.
    let mut off_axis = desc.clone();
    off_axis.shape[0] = u64::MAX;
    assert!(ids(&off_axis, Rules::Hardened).contains(&"TD-SHP-002"));
    assert!(!ids(&off_axis, Rules::Hardened).contains(&"QB-AXS-002"));
}

#[test]
fn a_huge_channel_count_with_shared_parameters_does_not_overflow() {
    use hrry::quant::quantize::quantized_descriptor;
    use hrry::schema::{PerChannelAffine, QuantScheme, QuantizationHeader};
    // Scales and zero points share one buffer; shape[0] = 2^62 channels makes the
    // byte count of the scales (and the zero points' start) overflow 64 bits, so no
    // parameter size can be checked and the zero-point walk itself must not
    // overflow. Dense and sparse layouts alike (COO's own buffers are 0 and 1).
    for (layout_tag, index) in [(0x01, 1u32), (hrry::schema::LAYOUT_COO, 2)] {
        let q = QuantScheme::PerChannelAffine(PerChannelAffine {
            header: QuantizationHeader::version1(0x02, 0),
            axis: 0,
            scale_buffer_index: index,
            zero_point_buffer_index: index,
            scale_type_tag: 0x03,
            reserved: [0; 3],
        });
        let mut sizes = vec![8u64; index as usize];
        sizes.push(16);
        let mut desc = quantized_descriptor(0x48, &[1 << 62, 1], &sizes, q);
        desc.layout_tag = layout_tag;
        let buffers: Vec<Vec<u8>> = sizes.iter().map(|&n| vec![0u8; n as usize]).collect();
        let mut report = Report::default();
        hrry::decode::quant::check(&desc, 0, Some(&slices(&buffers)), &mut report);
        assert!(report.rule_ids().contains(&"QC-SCL-001"), "{layout_tag}");
        assert!(Dequantizer::new(&desc, &slices(&buffers)).is_err());
    }
}

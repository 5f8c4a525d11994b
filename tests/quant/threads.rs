//! Dequantization split over threads ([`Dequantizer::set_threads`]) gives the same
//! bits as one thread, whatever the split: row counts that do not divide evenly,
//! rows that are not a multiple of the vector width or of the block size, partial
//! final blocks, the non-temporal path of large outputs, the reference path of
//! layouts the block kernels do not take, and the row API starting mid-tensor.
//! Also [`Dequantizer::prevalidated`]: the same values as [`Dequantizer::new`] on
//! valid tensors, descriptor rules and bounds still checked, and no panic on
//! parameter values only a full validation refuses.

use crate::common::*;
use hrry::model::element_type::ElementType::{self, *};
use hrry::quant::{Dequantizer, Kernel, MIN_VALUES_PER_THREAD};
use hrry::schema::{QuantScheme, QuantizationSection};
use hrry::Error;

/// Thread settings tried: one per core (0), and counts that divide the parts
/// unevenly.
const THREADS: [usize; 5] = [0, 2, 3, 5, 8];

/// Dequantizes through every entry point with every thread setting and checks
/// each against one thread; returns the one-thread values.
fn check_splits(dq: &mut Dequantizer<'_>, what: &str) -> Vec<f32> {
    dq.set_threads(1);
    let want = dq.to_vec().unwrap();
    let row_len = dq.row_len() as usize;
    for threads in THREADS {
        dq.set_threads(threads);
        let what = format!("{what}, threads {threads}");
        assert_bits_eq(&dq.to_vec().unwrap(), &want, &format!("{what}: to_vec"));
        // Filled with a value no kernel writes, so a part left unwritten shows.
        let mut out = vec![f32::from_bits(0x7FC0_1234); want.len()];
        dq.dequantize_into(&mut out).unwrap();
        assert_bits_eq(&out, &want, &format!("{what}: dequantize_into"));
        out.fill(f32::from_bits(0x7FC0_1234));
        dq.dequantize_into_fresh(&mut out).unwrap();
        assert_bits_eq(&out, &want, &format!("{what}: dequantize_into_fresh"));
        // Rows from an odd offset: the parts start mid-tensor.
        let first = 3usize;
        let mut rows = vec![0.0f32; want.len() - first * row_len];
        dq.dequantize_rows(first as u64, &mut rows).unwrap();
        assert_bits_eq(
            &rows,
            &want[first * row_len..],
            &format!("{what}: rows {first}.."),
        );
    }
    want
}

#[test]
fn large_tensors_split_over_threads_give_the_same_bits() {
    let mut rng = Rng(21);
    // (block, storage, block size, shape): rows of whole 32-code units; rows that
    // are not a multiple of 8 (no non-temporal stores) with a partial final block;
    // an odd number of rows; every decoder family.
    let cases: [(Block, ElementType, u32, [u64; 2]); 5] = [
        (
            Block::Affine {
                scale_type: 0x01,
                symmetric: true,
            },
            Int4,
            32,
            [1031, 1024],
        ),
        (
            Block::Affine {
                scale_type: 0x02,
                symmetric: false,
            },
            Int8,
            32,
            [613, 1003],
        ),
        (
            Block::Affine {
                scale_type: 0x03,
                symmetric: true,
            },
            Uint2,
            16,
            [2049, 300],
        ),
        (Block::Nf4, Uint4, 64, [777, 1000]),
        (Block::Mxfp, Float4E2m1, 32, [1500, 352]),
    ];
    for (block, storage, k, shape) in cases {
        let n = (shape[0] * shape[1]) as usize;
        assert!(n >= 2 * MIN_VALUES_PER_THREAD, "the case must split");
        let (desc, buffers) = block_tensor(&mut rng, block, storage, k, &shape, 1);
        let slices = slices(&buffers);
        let mut dq = Dequantizer::new(&desc, &slices).unwrap();
        let what = format!("{} block {k} {shape:?}", storage.name());
        let want = check_splits(&mut dq, &what);
        // The one-thread values are the reference's.
        dq.set_threads(1);
        dq.set_kernel(Kernel::Reference);
        let mut head = vec![0.0f32; 4 * shape[1] as usize];
        dq.dequantize_rows(shape[0] - 4, &mut head).unwrap();
        let tail = &want[want.len() - head.len()..];
        assert_bits_eq(&head, tail, &format!("{what}: reference tail"));
        // Scalar block kernels, split.
        dq.set_kernel(Kernel::Scalar);
        dq.set_threads(3);
        assert_bits_eq(&dq.to_vec().unwrap(), &want, &format!("{what}: scalar"));
    }
}

#[test]
fn the_reference_path_splits_too() {
    // Blocks along axis 0: no block kernel, every element through the reference.
    let mut rng = Rng(22);
    let shape = [520u64, 1030];
    let block = Block::Affine {
        scale_type: 0x01,
        symmetric: false,
    };
    let (desc, buffers) = block_tensor(&mut rng, block, Int4, 8, &shape, 0);
    let slices = slices(&buffers);
    let mut dq = Dequantizer::new(&desc, &slices).unwrap();
    check_splits(&mut dq, "int4 blocks along axis 0");
}

#[test]
fn small_outputs_and_one_row_stay_whole() {
    // Below the split threshold, or a single row: whatever `threads` says, the
    // values are the same (and nothing is split that cannot be).
    let mut rng = Rng(23);
    let block = Block::Affine {
        scale_type: 0x01,
        symmetric: true,
    };
    for shape in [[1u64, 3 * MIN_VALUES_PER_THREAD as u64], [7, 33], [2, 40]] {
        let (desc, buffers) = block_tensor(&mut rng, block, Int8, 32, &shape, 1);
        let slices = slices(&buffers);
        let mut dq = Dequantizer::new(&desc, &slices).unwrap();
        dq.set_threads(1);
        let want = dq.to_vec().unwrap();
        for threads in THREADS {
            dq.set_threads(threads);
            let what = format!("{shape:?}, threads {threads}");
            assert_bits_eq(&dq.to_vec().unwrap(), &want, &what);
        }
    }
}

#[test]
fn prevalidated_matches_new_on_valid_tensors() {
    let mut rng = Rng(24);
    for (block, storage, k) in [
        (
            Block::Affine {
                scale_type: 0x01,
                symmetric: false,
            },
            Int4,
            32u32,
        ),
        (
            Block::Affine {
                scale_type: 0x02,
                symmetric: true,
            },
            Int8,
            16,
        ),
        (Block::Nf4, Uint4, 64),
        (Block::Mxfp, Float8E4m3, 32),
    ] {
        // MXFP has no partial blocks; the others end on one.
        let shape = [5u64, if block == Block::Mxfp { 96 } else { 77 }];
        let (desc, buffers) = block_tensor(&mut rng, block, storage, k, &shape, 1);
        let slices = slices(&buffers);
        let full = Dequantizer::new(&desc, &slices).unwrap().to_vec().unwrap();
        let quick = Dequantizer::prevalidated(&desc, &slices)
            .unwrap()
            .to_vec()
            .unwrap();
        assert_bits_eq(&quick, &full, storage.name());
    }
}

/// An int8 tensor of `shape` with float16 scales and zero points, blocks of 32.
fn int8_tensor(rng: &mut Rng, shape: &[u64]) -> (hrry::schema::TensorDescriptor, Vec<Vec<u8>>) {
    let block = Block::Affine {
        scale_type: 0x01,
        symmetric: false,
    };
    block_tensor(rng, block, Int8, 32, shape, 1)
}

#[test]
fn prevalidated_skips_only_value_scans() {
    let mut rng = Rng(25);
    let (desc, mut buffers) = int8_tensor(&mut rng, &[4, 64]);
    // Scale 0 of block 1 becomes a float16 NaN, zero point 2 leaves int8's range.
    buffers[1][2..4].copy_from_slice(&0x7E00u16.to_le_bytes());
    buffers[2][8..12].copy_from_slice(&1000i32.to_le_bytes());
    let slices = slices(&buffers);
    match Dequantizer::new(&desc, &slices) {
        Err(Error::Invalid(_)) => {}
        other => panic!("new accepted a NaN scale: {other:?}"),
    }
    let values = Dequantizer::prevalidated(&desc, &slices)
        .unwrap()
        .to_vec()
        .unwrap();
    // Block 1 is all NaN; block 2 is computed with its zero point as stored.
    assert!(values[32..64].iter().all(|v| v.is_nan()));
    let reference = {
        let mut dq = Dequantizer::prevalidated(&desc, &slices).unwrap();
        dq.set_kernel(Kernel::Reference);
        dq.to_vec().unwrap()
    };
    assert_bits_eq(&values, &reference, "prevalidated, every kernel");
    assert!(values[64..96].iter().all(|v| v.is_finite()));
}

#[test]
fn prevalidated_still_checks_descriptors_and_bounds() {
    let mut rng = Rng(26);
    let (desc, buffers) = int8_tensor(&mut rng, &[4, 64]);
    // A descriptor rule: the axis outside the shape.
    let mut bad_axis = desc.clone();
    let section = bad_axis.quantization.as_mut().unwrap();
    let Some(&QuantScheme::PerBlockAffine(mut d)) = section.scheme() else {
        panic!("per-block affine descriptor expected")
    };
    d.axis = 2;
    *section = QuantizationSection::new(QuantScheme::PerBlockAffine(d));
    bad_axis.sync_sections();
    match Dequantizer::prevalidated(&bad_axis, &slices(&buffers)) {
        Err(Error::Invalid(_)) => {}
        other => panic!("axis 2 of a rank-2 tensor accepted: {other:?}"),
    }
    // Buffers shorter than the descriptor says: refused, not read past.
    for (index, keep) in [(0usize, 255usize), (1, 15), (2, 31)] {
        let mut short = buffers.clone();
        short[index].truncate(keep);
        match Dequantizer::prevalidated(&desc, &slices(&short)) {
            // The data buffer breaks QZ-DAT-001, a parameter buffer QB-SIZ-001.
            Err(e @ Error::Invalid(_))
                if ["QZ-DAT-001", "QB-SIZ-001"].contains(&e.rule().map_or("", |r| r.id))
                    && e.to_string()
                        .contains(&format!("buffer {index} holds {keep} bytes")) => {}
            other => panic!("buffer {index} cut to {keep} bytes accepted: {other:?}"),
        }
    }
}

#[test]
fn small_tensors_split_when_asked_give_the_same_bits() {
    // Parts as small as one value (0 counts as 1): rows of 33 values, 7 rows, split
    // over every thread setting, and blocks that straddle the parts' rows.
    let mut rng = Rng(24);
    let block = Block::Affine {
        scale_type: 0x02,
        symmetric: false,
    };
    for min in [0usize, 1, 33, 100] {
        let (desc, buffers) = block_tensor(&mut rng, block, Int4, 8, &[7, 33], 1);
        let slices = slices(&buffers);
        let mut dq = Dequantizer::new(&desc, &slices).unwrap();
        dq.set_min_values_per_thread(min);
        check_splits(&mut dq, &format!("[7, 33] in parts of at least {min}"));
    }
}

//! Sparse layouts densify to the dense tensor they were built from, and the spec's
//! worked examples encode to the bytes the spec shows.

use hrry::decode::layout::check;
use hrry::layout::bits::pack;
use hrry::layout::sparse::encode;
use hrry::layout::{densify, logical_row_major};
use hrry::model::ElementType;
use hrry::validate::Report;

const NO_LIMIT: u64 = u64::MAX;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// A dense tensor with about one element in three non-zero.
fn sparse_dense(t: ElementType, shape: &[u64], seed: u64) -> Vec<u8> {
    let w = t.bit_width().unwrap();
    let mut rng = Rng(seed | 1);
    let n: u64 = shape.iter().product();
    let mask = if w >= 128 {
        u128::MAX
    } else {
        (1u128 << w) - 1
    };
    pack(
        w,
        (0..n).map(|_| {
            if rng.next().is_multiple_of(3) {
                (u128::from(rng.next()) | 1) & mask
            } else {
                0
            }
        }),
    )
}

fn assert_valid(desc: &hrry::schema::TensorDescriptor, buffers: &[Vec<u8>]) {
    let slices: Vec<&[u8]> = buffers.iter().map(Vec::as_slice).collect();
    let mut report = Report::default();
    check(desc, 0, Some(&slices), &mut report);
    assert!(
        report.is_valid(),
        "{:?}: {:?}",
        desc.layout,
        report.violations
    );
}

fn round_trip(encoded: (hrry::schema::TensorDescriptor, Vec<Vec<u8>>), dense: &[u8]) {
    let (desc, buffers) = encoded;
    assert_valid(&desc, &buffers);
    let slices: Vec<&[u8]> = buffers.iter().map(Vec::as_slice).collect();
    assert_eq!(
        densify(&desc, &slices, NO_LIMIT).unwrap(),
        dense,
        "{:?}",
        desc.layout
    );
    assert_eq!(logical_row_major(&desc, &slices, NO_LIMIT).unwrap(), dense);
}

const TYPES: [ElementType; 5] = [
    ElementType::Float32,
    ElementType::Int4,
    ElementType::Bool,
    ElementType::Float6E3m2,
    ElementType::Uint64,
];

#[test]
fn coo_any_rank() {
    for (n, shape) in [
        &[1u64][..],
        &[7],
        &[0],
        &[4, 5],
        &[3, 0],
        &[2, 3, 4],
        &[2, 1, 3, 2],
    ]
    .iter()
    .enumerate()
    {
        for t in TYPES {
            let dense = sparse_dense(t, shape, 11 + n as u64);
            round_trip(encode::coo(t.tag(), shape, &dense).unwrap(), &dense);
        }
    }
}

#[test]
fn csr_and_csc() {
    for (n, shape) in [&[4u64, 5][..], &[1, 1], &[0, 3], &[3, 0], &[6, 2], &[2, 9]]
        .iter()
        .enumerate()
    {
        for t in TYPES {
            let dense = sparse_dense(t, shape, 5 + n as u64);
            round_trip(
                encode::compressed(t.tag(), shape, &dense, false).unwrap(),
                &dense,
            );
            round_trip(
                encode::compressed(t.tag(), shape, &dense, true).unwrap(),
                &dense,
            );
        }
    }
}

#[test]
fn csf_every_mode_order() {
    let orders: [&[u32]; 6] = [
        &[0, 1, 2],
        &[0, 2, 1],
        &[1, 0, 2],
        &[1, 2, 0],
        &[2, 0, 1],
        &[2, 1, 0],
    ];
    for (n, shape) in [&[2u64, 3, 4][..], &[1, 1, 1], &[3, 0, 2], &[4, 2, 3]]
        .iter()
        .enumerate()
    {
        for t in TYPES {
            let dense = sparse_dense(t, shape, 3 + n as u64);
            for order in orders {
                round_trip(encode::csf(t.tag(), shape, &dense, order).unwrap(), &dense);
            }
        }
    }
    let dense = sparse_dense(ElementType::Float32, &[2, 2, 3, 2], 9);
    round_trip(
        encode::csf(0x03, &[2, 2, 3, 2], &dense, &[3, 1, 0, 2]).unwrap(),
        &dense,
    );
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn u64s(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn spec_examples_encode_as_shown() {
    // csr.md / csc.md: the [4, 5] matrix.
    let dense = f32s(&[
        1., 0., 0., 2., 0., 0., 0., 3., 0., 0., 0., 4., 0., 0., 5., 0., 0., 0., 0., 0.,
    ]);
    let (_, csr) = encode::compressed(0x03, &[4, 5], &dense, false).unwrap();
    assert_eq!(
        csr,
        [
            f32s(&[1., 2., 3., 4., 5.]),
            u64s(&[0, 3, 2, 1, 4]),
            u64s(&[0, 2, 3, 5, 5])
        ]
    );
    let (_, csc) = encode::compressed(0x03, &[4, 5], &dense, true).unwrap();
    assert_eq!(
        csc,
        [
            f32s(&[1., 4., 3., 2., 5.]),
            u64s(&[0, 2, 1, 0, 2]),
            u64s(&[0, 1, 2, 3, 4, 5])
        ]
    );
    // coo.md: [4, 4] with (0,1)=1.5, (2,0)=-0.5, (3,3)=2.0.
    let mut d = vec![0f32; 16];
    d[1] = 1.5;
    d[8] = -0.5;
    d[15] = 2.0;
    let (desc, coo) = encode::coo(0x03, &[4, 4], &f32s(&d)).unwrap();
    assert_eq!(coo, [f32s(&[1.5, -0.5, 2.0]), u64s(&[0, 1, 2, 0, 3, 3])]);
    assert_eq!(desc.buffers[1].byte_size, 48);
    // csf.md: [2, 3, 4] with four non-zeros.
    let mut d = vec![0f32; 24];
    d[1] = 1.0; // (0, 0, 1)
    d[2 * 4 + 3] = 2.0; // (0, 2, 3)
    d[12 + 4] = 3.0; // (1, 1, 0)
    d[12 + 4 + 2] = 4.0; // (1, 1, 2)
    let (desc, csf) = encode::csf(0x03, &[2, 3, 4], &f32s(&d), &[0, 1, 2]).unwrap();
    assert_eq!(desc.buffers.len(), 7);
    assert_eq!(
        csf,
        [
            f32s(&[1., 2., 3., 4.]),
            u64s(&[0, 2]),
            u64s(&[0, 1]),
            u64s(&[0, 2, 3]),
            u64s(&[0, 2, 1]),
            u64s(&[0, 1, 2, 4]),
            u64s(&[1, 3, 0, 2]),
        ]
    );
    // Empty CSF: pos_0 = [0, 0], deeper pos_L = [0], everything else empty.
    let (_, empty) = encode::csf(0x03, &[2, 2, 2], &[0u8; 32], &[0, 1, 2]).unwrap();
    assert_eq!(
        empty,
        [
            vec![],
            u64s(&[0, 0]),
            vec![],
            u64s(&[0]),
            vec![],
            u64s(&[0]),
            vec![]
        ]
    );
}

#[test]
fn broken_structure_is_an_error_not_a_panic() {
    let dense = f32s(&[1., 0., 2., 3.]);
    let (desc, mut b) = encode::compressed(0x03, &[2, 2], &dense, false).unwrap();
    b[2] = u64s(&[0, 3, 2]); // decreasing row_ptr
    let s: Vec<&[u8]> = b.iter().map(Vec::as_slice).collect();
    assert!(densify(&desc, &s, NO_LIMIT).is_err());
    b[2] = u64s(&[0, 2, 3]);
    b[1] = u64s(&[0, 5, 1]); // column out of range
    let s: Vec<&[u8]> = b.iter().map(Vec::as_slice).collect();
    assert!(densify(&desc, &s, NO_LIMIT).is_err());
    let (desc, mut b) = encode::coo(0x03, &[2, 2], &dense).unwrap();
    b[1].truncate(8);
    let s: Vec<&[u8]> = b.iter().map(Vec::as_slice).collect();
    assert!(densify(&desc, &s, NO_LIMIT).is_err());
}

//! Every dense layout, over a range of shapes and element types: a known tensor laid
//! out in the layout reads back in logical row-major order equal to the source.

use hrry::layout::bits::{pack, read_bits};
use hrry::layout::{from_row_major, required_buffer_size, to_row_major, DenseView};
use hrry::model::ElementType;
use hrry::schema::{HilbertFields, LayoutFields, TensorDescriptor, TiledFields};

const NO_LIMIT: u64 = u64::MAX;

/// A descriptor with one buffer of `sizes[0]` bytes and `byte_offset` set.
fn descriptor(
    type_tag: u8,
    layout_tag: u8,
    shape: &[u64],
    byte_offset: u64,
    layout: LayoutFields,
    sizes: &[u64],
) -> TensorDescriptor {
    let mut d = hrry::model::build::descriptor(type_tag, layout_tag, shape, layout, sizes);
    d.byte_offset = byte_offset;
    d
}

/// Element types covering every packing: 1, 2, 4, 6 bits and 1-16 bytes.
const TYPES: [ElementType; 8] = [
    ElementType::Float32,
    ElementType::Uint8,
    ElementType::Int4,
    ElementType::Bool,
    ElementType::Uint2,
    ElementType::Float6E2m3,
    ElementType::Complex128,
    ElementType::Float16,
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn values(width: u32, n: u64, seed: u64) -> Vec<u128> {
    let mut rng = Rng(seed | 1);
    let mask = if width >= 128 {
        u128::MAX
    } else {
        (1u128 << width) - 1
    };
    (0..n)
        .map(|_| ((u128::from(rng.next()) << 64) | u128::from(rng.next())) & mask)
        .collect()
}

fn count(shape: &[u64]) -> u64 {
    shape.iter().product()
}

/// Lays the tensor out and reads it back, asserting equality with the source.
fn round_trip(desc: &TensorDescriptor, source: &[u8]) -> Vec<u8> {
    let buffer = from_row_major(desc, source, NO_LIMIT).unwrap_or_else(|e| panic!("{desc:?}: {e}"));
    assert_eq!(
        Some(buffer.len() as u64),
        required_buffer_size(desc),
        "{desc:?}"
    );
    let back = to_row_major(desc, &[&buffer], NO_LIMIT).unwrap();
    assert_eq!(
        back, source,
        "layout {:#04x} shape {:?} fields {:?}",
        desc.layout_tag, desc.shape, desc.layout
    );
    buffer
}

fn check_layout(tag: u8, shape: &[u64], layout: LayoutFields, byte_offset_elems: u64) {
    for (n, t) in TYPES.iter().enumerate() {
        let width = t.bit_width().unwrap();
        let byte_offset = (byte_offset_elems * u64::from(width)).div_ceil(8);
        let desc = descriptor(t.tag(), tag, shape, byte_offset, layout.clone(), &[0]);
        let source = pack(width, values(width, count(shape), 7 + n as u64));
        round_trip(&desc, &source);
    }
}

const SHAPES: &[&[u64]] = &[
    &[],
    &[0],
    &[1],
    &[5],
    &[3, 4],
    &[2, 0, 3],
    &[2, 3, 4],
    &[1, 1, 1, 7],
    &[3, 1, 2, 2, 2],
];

#[test]
fn row_and_column_major() {
    for shape in SHAPES {
        check_layout(0x01, shape, LayoutFields::Implicit, 0);
        check_layout(0x02, shape, LayoutFields::Implicit, 0);
    }
    // column-major [2, 3] of 0..6 is stored as 0 3 1 4 2 5.
    let desc = descriptor(0x11, 0x02, &[2, 3], 0, LayoutFields::Implicit, &[6]);
    let buf = from_row_major(&desc, &[0, 1, 2, 3, 4, 5], NO_LIMIT).unwrap();
    assert_eq!(buf, [0, 3, 1, 4, 2, 5]);
}

#[test]
fn row_major_with_byte_offset() {
    let desc = descriptor(0x03, 0x01, &[2, 2], 8, LayoutFields::Implicit, &[24]);
    let src: Vec<u8> = (0..16).collect();
    let buf = round_trip(&desc, &src);
    assert_eq!(&buf[..8], &[0; 8]);
    assert_eq!(&buf[8..], &src[..]);
}

/// All stride vectors built from a permutation of the row-major strides, optionally
/// with gaps, reversed dimensions and broadcasts.
fn strided_cases(shape: &[u64]) -> Vec<(Vec<i64>, u64)> {
    let rank = shape.len();
    let mut cases = Vec::new();
    // Row-major, then column-major, then each with a gap of 3 per dimension.
    let mut rm = vec![1i64; rank];
    for k in (0..rank.saturating_sub(1)).rev() {
        rm[k] = rm[k + 1] * shape[k + 1] as i64;
    }
    let mut cm = vec![1i64; rank];
    for k in 1..rank {
        cm[k] = cm[k - 1] * shape[k - 1] as i64;
    }
    for base in [rm.clone(), cm] {
        cases.push((base.clone(), 0));
        cases.push((base.iter().map(|s| s * 3).collect(), 0));
        // Reverse every other dimension; byte_offset moves to the far end.
        let strides: Vec<i64> = base
            .iter()
            .enumerate()
            .map(|(k, &s)| if k % 2 == 0 { -s } else { s })
            .collect();
        let low: i64 = strides
            .iter()
            .zip(shape)
            .map(|(&s, &n)| (s * (n as i64 - 1).max(0)).min(0))
            .sum();
        cases.push((strides, (-low) as u64));
    }
    cases
}

#[test]
fn strided_permutations_gaps_and_reversal() {
    for shape in SHAPES.iter().filter(|s| !s.is_empty()) {
        for (strides, offset) in strided_cases(shape) {
            check_layout(0x03, shape, LayoutFields::Strided { strides }, offset);
        }
    }
    // strided.md: [3, 4] with strides [-4, 1], byte_offset at row 2.
    let desc = descriptor(
        0x03,
        0x03,
        &[3, 4],
        32,
        LayoutFields::Strided {
            strides: vec![-4, 1],
        },
        &[0],
    );
    assert_eq!(required_buffer_size(&desc), Some(48));
    let src: Vec<u8> = (0..48).collect();
    let buf = round_trip(&desc, &src);
    assert_eq!(&buf[32..48], &src[0..16], "row 0 is stored last");
    let view = DenseView::new(&desc, &[&buf]).unwrap();
    assert_eq!(view.bit_address(&[2, 3]).unwrap(), (32 - 5 * 4) * 8);
}

#[test]
fn strided_broadcast_reads_one_element_per_line() {
    // [3, 4] with stride 0 on dimension 0: every row is the same 4 elements.
    for t in TYPES {
        let width = t.bit_width().unwrap();
        let row = values(width, 4, 99);
        let desc = descriptor(
            t.tag(),
            0x03,
            &[3, 4],
            0,
            LayoutFields::Strided {
                strides: vec![0, 1],
            },
            &[0],
        );
        let buffer = pack(width, row.iter().copied());
        let dense = to_row_major(&desc, &[&buffer], NO_LIMIT).unwrap();
        let expect = pack(width, (0..3).flat_map(|_| row.iter().copied()));
        assert_eq!(dense, expect, "{}", t.name());
    }
    // Sub-byte with a negative stride at a byte_offset inside a packed byte run:
    // bit address byte_offset * 8 + offset * width.
    let desc = descriptor(
        0x49,
        0x03,
        &[3],
        1,
        LayoutFields::Strided { strides: vec![-1] },
        &[2],
    );
    let dense = to_row_major(&desc, &[&[0x21, 0x43]], NO_LIMIT).unwrap();
    // Elements at bits 8, 4, 0: 3, 2, 1.
    assert_eq!(read_bits(&dense, 0, 4), Some(3));
    assert_eq!(read_bits(&dense, 4, 4), Some(2));
    assert_eq!(read_bits(&dense, 8, 4), Some(1));
}

fn tiled(
    tile: &[u64],
    outer: u8,
    inner: u8,
    outer_strides: Option<Vec<i64>>,
    inner_strides: Option<Vec<i64>>,
    nested: Option<TiledFields>,
) -> TiledFields {
    TiledFields {
        tile_shape: tile.to_vec(),
        outer_layout: outer,
        inner_layout: inner,
        reserved: [0; 2],
        outer_strides,
        inner_strides,
        inner_tiled: nested.map(Box::new),
    }
}

#[test]
fn tiled_orders_and_padding() {
    let shapes: &[(&[u64], &[u64])] = &[
        (&[6, 8], &[2, 4]),
        (&[5, 7], &[2, 3]),
        (&[1], &[4]),
        (&[9], &[4]),
        (&[0, 3], &[2, 2]),
        (&[3, 4, 5], &[2, 2, 2]),
        (&[2, 2], &[8, 8]),
    ];
    for &(shape, tile) in shapes {
        for outer in [1u8, 2] {
            for inner in [1u8, 2] {
                check_layout(
                    0x04,
                    shape,
                    LayoutFields::Tiled(tiled(tile, outer, inner, None, None, None)),
                    0,
                );
            }
        }
        // Strided inner: column-major strides inside a tile written explicitly.
        let mut cm = vec![1i64; tile.len()];
        for k in 1..tile.len() {
            cm[k] = cm[k - 1] * tile[k - 1] as i64;
        }
        check_layout(
            0x04,
            shape,
            LayoutFields::Tiled(tiled(tile, 1, 3, None, Some(cm), None)),
            0,
        );
        // Strided outer with the tile grid reversed along dimension 0.
        let grid: Vec<u64> = shape
            .iter()
            .zip(tile)
            .map(|(n, t)| n.div_ceil(*t))
            .collect();
        let mut rm = vec![1i64; grid.len()];
        for k in (0..grid.len().saturating_sub(1)).rev() {
            rm[k] = rm[k + 1] * grid[k + 1] as i64;
        }
        rm[0] = -rm[0];
        let tile_elems: u64 = tile.iter().product();
        let back = (grid[0].saturating_sub(1)) * (-rm[0]) as u64 * tile_elems;
        check_layout(
            0x04,
            shape,
            LayoutFields::Tiled(tiled(tile, 3, 1, Some(rm), None, None)),
            back,
        );
    }
    // tiled.md example: element [3, 5] of [6, 8] in [2, 4] tiles sits at offset 29.
    let desc = descriptor(
        0x11,
        0x04,
        &[6, 8],
        0,
        LayoutFields::Tiled(tiled(&[2, 4], 1, 1, None, None, None)),
        &[0],
    );
    let src: Vec<u8> = (0..48).collect();
    let buf = round_trip(&desc, &src);
    assert_eq!(buf[29], 3 * 8 + 5);
}

#[test]
fn recursive_tiling() {
    // Two and three levels, with partial tiles at each level.
    let l3 = tiled(&[1, 2], 1, 1, None, None, None);
    let l2 = tiled(&[2, 2], 2, 4, None, None, Some(l3));
    let fields = tiled(&[4, 4], 1, 4, None, None, Some(l2.clone()));
    for shape in [&[8u64, 8][..], &[7, 5], &[4, 4], &[1, 9]] {
        check_layout(0x04, shape, LayoutFields::Tiled(fields.clone()), 0);
        check_layout(0x04, shape, LayoutFields::Tiled(l2.clone()), 0);
    }
    // Nested tiles are product(tile_shape) apart: in [4, 4] tiles of [2, 2]
    // sub-tiles (row-major at both levels), element [0, 2] starts sub-tile 1.
    let two = tiled(
        &[4, 4],
        1,
        4,
        None,
        None,
        Some(tiled(&[2, 2], 1, 1, None, None, None)),
    );
    let desc = descriptor(0x11, 0x04, &[4, 4], 0, LayoutFields::Tiled(two), &[0]);
    let view_src: Vec<u8> = (0..16).collect();
    let buf = round_trip(&desc, &view_src);
    assert_eq!(buf[4], 2);
    assert_eq!(buf[8], 8);
    assert_eq!(buf[15], 15);
}

#[test]
fn morton_exact_padded_and_unequal() {
    let cases: &[(&[u64], &[u32])] = &[
        (&[4, 4], &[2, 2]),
        (&[3, 4], &[2, 2]),
        (&[5, 3], &[3, 2]),
        (&[2, 8], &[1, 3]),
        (&[8, 2], &[3, 1]),
        (&[7], &[3]),
        (&[3, 3, 3], &[2, 2, 2]),
        (&[0, 4], &[1, 2]),
        (&[1, 1], &[1, 1]),
    ];
    for &(shape, bits) in cases {
        check_layout(
            0x05,
            shape,
            LayoutFields::Morton {
                morton_bits: bits.to_vec(),
            },
            0,
        );
    }
    // morton.md: element [2, 3] of [4, 4] is at offset 14.
    let desc = descriptor(
        0x11,
        0x05,
        &[4, 4],
        0,
        LayoutFields::Morton {
            morton_bits: vec![2, 2],
        },
        &[0],
    );
    let src: Vec<u8> = (0..16).collect();
    let buf = round_trip(&desc, &src);
    assert_eq!(buf[14], 2 * 4 + 3);
    // Unequal bits follow the formula as written: [1, 3] bits put i_1's bit 2 at
    // code bit 5, beyond 2^(1+3) codes.
    let desc = descriptor(
        0x11,
        0x05,
        &[2, 8],
        0,
        LayoutFields::Morton {
            morton_bits: vec![1, 3],
        },
        &[0],
    );
    assert_eq!(required_buffer_size(&desc), Some(0b10_1011 + 1));
}

#[test]
fn hilbert_orders_and_ranks() {
    for (rank, order) in [(2usize, 1u32), (2, 2), (2, 3), (3, 1), (3, 2), (4, 1)] {
        let shape = vec![1u64 << order; rank];
        let fields = LayoutFields::Hilbert(HilbertFields {
            hilbert_order: order,
            hilbert_rank: rank as u32,
        });
        check_layout(0x40, &shape, fields, 0);
    }
    // hilbert.md conformance table: h = 6 holds [1, 3].
    let fields = LayoutFields::Hilbert(HilbertFields {
        hilbert_order: 2,
        hilbert_rank: 2,
    });
    let desc = descriptor(0x11, 0x40, &[4, 4], 0, fields, &[0]);
    let src: Vec<u8> = (0..16).collect();
    let buf = round_trip(&desc, &src);
    assert_eq!(buf[6], 4 + 3);
    assert_eq!(buf[15], 3 * 4);
}

#[test]
fn reads_never_leave_the_buffer() {
    let desc = descriptor(0x03, 0x01, &[3, 4], 0, LayoutFields::Implicit, &[48]);
    assert!(to_row_major(&desc, &[&[0u8; 47]], NO_LIMIT).is_err());
    let desc = descriptor(
        0x03,
        0x03,
        &[3, 4],
        0,
        LayoutFields::Strided {
            strides: vec![-4, 1],
        },
        &[48],
    );
    assert!(to_row_major(&desc, &[&[0u8; 48]], NO_LIMIT).is_err());
    let desc = descriptor(
        0x03,
        0x03,
        &[3, 4],
        0,
        LayoutFields::Strided {
            strides: vec![i64::MAX, i64::MIN],
        },
        &[48],
    );
    assert!(to_row_major(&desc, &[&[0u8; 48]], NO_LIMIT).is_err());
    assert_eq!(required_buffer_size(&desc), Some(u64::MAX));
    // The limit is honoured before anything is allocated.
    let desc = descriptor(
        0x03,
        0x03,
        &[1 << 40],
        0,
        LayoutFields::Strided { strides: vec![0] },
        &[4],
    );
    assert!(matches!(
        to_row_major(&desc, &[&[0u8; 4]], 1 << 20),
        Err(hrry::Error::Unsupported(m)) if m.contains("exceeds the limit")
    ));
}

#[test]
fn wide_rows_and_several_slabs() {
    // Rows wider than one 64-column block, and tensors larger than one 4 MiB slab,
    // for a whole-byte, a 4-bit and a 6-bit type: the slab-and-block gathering of
    // to_row_major must agree with the element-by-element scatter of from_row_major.
    let cases: [(ElementType, &[u64]); 5] = [
        (ElementType::Uint8, &[4099, 1030]),
        (ElementType::Int4, &[3, 7, 131]),
        (ElementType::Uint2, &[9, 300]),
        (ElementType::Float6E3m2, &[2900, 2100]),
        (ElementType::Float32, &[5, 200]),
    ];
    for (n, (t, shape)) in cases.into_iter().enumerate() {
        let width = t.bit_width().unwrap();
        let source = pack(width, values(width, count(shape), 40 + n as u64));
        let rank = shape.len();
        let tile: Vec<u64> = (0..rank).map(|k| 3 + k as u64).collect();
        let mut strides = vec![1i64; rank];
        for k in 1..rank {
            strides[k] = strides[k - 1] * shape[k - 1] as i64;
        }
        let layouts = [
            (0x02, LayoutFields::Implicit),
            (0x03, LayoutFields::Strided { strides }),
            (
                0x04,
                LayoutFields::Tiled(tiled(&tile, 2, 1, None, None, None)),
            ),
            (
                0x05,
                LayoutFields::Morton {
                    morton_bits: shape
                        .iter()
                        .map(|&d| 64 - (d - 1).leading_zeros())
                        .collect(),
                },
            ),
        ];
        for (tag, fields) in layouts {
            if tag == 0x05 && count(shape) > 1 << 20 {
                continue; // the padded curve would be four times larger
            }
            let desc = descriptor(t.tag(), tag, shape, 0, fields, &[0]);
            round_trip(&desc, &source);
        }
    }
}

//! Corpus cases for the layouts (rules `LY-…`): one valid file per layout, and one
//! invalid file per layout rule, each breaking only that rule.

use hrry::file::WriterOptions;
use hrry::layout::bits::pack;
use hrry::layout::dense::{from_row_major, required_buffer_size};
use hrry::layout::sparse::encode;
use hrry::model::build::{composite_head, descriptor};
use hrry::model::ElementType;
use hrry::schema::{
    BlockPagedFields, CompositeMember, HilbertFields, LayoutFields, ShardSection, Statistics,
    TensorDescriptor, TiledFields, LAYOUT_BLOCK_PAGED, LAYOUT_COLUMN_MAJOR, LAYOUT_HILBERT,
    LAYOUT_MORTON, LAYOUT_ROW_MAJOR, LAYOUT_STRIDED, LAYOUT_TILED,
};

use super::patch::{self, f32s, u32s, Item};
use super::{Case, Format};

const F: Format = Format::HrryFile;
const F32: u8 = 0x03;
const U8: u8 = 0x11;

fn item(name: &str, descriptor: TensorDescriptor, buffers: Vec<Vec<u8>>) -> Item {
    Item {
        name: name.to_string(),
        descriptor,
        buffers,
    }
}

/// A file holding `items`, written without the writer's own checks.
fn file(items: Vec<Item>) -> Vec<u8> {
    let options = WriterOptions {
        unchecked: true,
        ..WriterOptions::default()
    };
    patch::write(options, &[], &items)
}

/// A one-tensor file; the buffer handles' sizes are set to the buffers' lengths.
fn one(mut descriptor: TensorDescriptor, buffers: Vec<Vec<u8>>) -> Vec<u8> {
    for (h, b) in descriptor.buffers.iter_mut().zip(&buffers) {
        h.byte_size = b.len() as u64;
    }
    file(vec![item("t", descriptor, buffers)])
}

fn u64s(values: &[u64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// `n` distinct non-zero elements of `width` bits, packed row-major.
fn ramp(width: u32, n: u64) -> Vec<u8> {
    let mask = if width >= 128 {
        u128::MAX
    } else {
        (1u128 << width) - 1
    };
    pack(width, (0..n).map(|i| (u128::from(i) % mask) + 1))
}

/// A dense tensor of `type_tag` holding a ramp, laid out per `layout_tag`/`fields`,
/// with buffer 0 exactly [`required_buffer_size`] (or `size` when given).
fn dense(
    type_tag: u8,
    layout_tag: u8,
    shape: &[u64],
    byte_offset: u64,
    fields: LayoutFields,
    size: Option<u64>,
) -> (TensorDescriptor, Vec<Vec<u8>>) {
    let mut d = descriptor(type_tag, layout_tag, shape, fields, &[0]);
    d.byte_offset = byte_offset;
    let width = hrry::layout::element_bits(&d).expect("corpus element type");
    let n: u64 = shape.iter().product();
    let buffer = match from_row_major(&d, &ramp(width, n), 1 << 20) {
        Ok(mut b) => {
            if let Some(s) = size {
                b.resize(s as usize, 0);
            }
            b
        }
        Err(_) => vec![0x5A; size.expect("an explicit size for an unmappable layout") as usize],
    };
    d.buffers[0].byte_size = buffer.len() as u64;
    (d, vec![buffer])
}

fn tiled(tile: &[u64], outer: u8, inner: u8) -> TiledFields {
    TiledFields {
        tile_shape: tile.to_vec(),
        outer_layout: outer,
        inner_layout: inner,
        reserved: [0; 2],
        outer_strides: None,
        inner_strides: None,
        inner_tiled: None,
    }
}

fn hilbert(order: u32, rank: u32) -> LayoutFields {
    LayoutFields::Hilbert(HilbertFields {
        hilbert_order: order,
        hilbert_rank: rank,
    })
}

/// The [4, 5] matrix of csr.md / csc.md.
fn csr_matrix() -> Vec<u8> {
    f32s(&[
        1., 0., 0., 2., 0., 0., 0., 3., 0., 0., 0., 4., 0., 0., 5., 0., 0., 0., 0., 0.,
    ])
}

/// The [4, 4] tensor of coo.md.
fn coo_tensor() -> Vec<u8> {
    let mut d = vec![0f32; 16];
    d[1] = 1.5;
    d[8] = -0.5;
    d[15] = 2.0;
    f32s(&d)
}

/// The [2, 3, 4] tensor of csf.md.
fn csf_tensor() -> Vec<u8> {
    let mut d = vec![0f32; 24];
    d[1] = 1.0;
    d[11] = 2.0;
    d[16] = 3.0;
    d[18] = 4.0;
    f32s(&d)
}

fn coo() -> (TensorDescriptor, Vec<Vec<u8>>) {
    encode::coo(F32, &[4, 4], &coo_tensor()).expect("coo")
}

fn csr(by_column: bool) -> (TensorDescriptor, Vec<Vec<u8>>) {
    encode::compressed(F32, &[4, 5], &csr_matrix(), by_column).expect("csr")
}

fn csf() -> (TensorDescriptor, Vec<Vec<u8>>) {
    encode::csf(F32, &[2, 3, 4], &csf_tensor(), &[0, 1, 2]).expect("csf")
}

/// Edits a descriptor and the buffers of an encoded tensor, then fits the buffer
/// handles to the buffers (unless `keep_sizes`).
fn edit(
    (mut d, mut b): (TensorDescriptor, Vec<Vec<u8>>),
    f: impl FnOnce(&mut TensorDescriptor, &mut Vec<Vec<u8>>),
) -> Vec<u8> {
    f(&mut d, &mut b);
    d.buffers.resize(b.len(), d.buffers[0]);
    for (h, buf) in d.buffers.iter_mut().zip(&b) {
        h.byte_size = buf.len() as u64;
    }
    d.sync_sections();
    one(d, b)
}

/// The fields of block-paged.md's example: 2 sequences, pages of 4 tokens, 5 pages,
/// key role of layer 3, uint32 block table.
pub(super) fn example_paged_fields() -> BlockPagedFields {
    BlockPagedFields {
        page_size: 4,
        num_pages: 5,
        paged_axis: 0,
        num_seqs: 2,
        kv_role: 0,
        layer_index: 3,
        block_table_index_type: 0,
        reserved: [0; 6],
    }
}

/// The block-paged example of block-paged.md: 2 sequences (6 and 3 tokens), pages
/// of 4 tokens, 5 pages of [2 heads, 8 dims] float16, page 0 shared.
fn block_paged() -> (TensorDescriptor, Vec<Vec<u8>>) {
    let fields = example_paged_fields();
    let d = descriptor(
        0x01,
        LAYOUT_BLOCK_PAGED,
        &[9, 2, 8],
        LayoutFields::BlockPaged(fields),
        &[0, 0, 0],
    );
    (
        d,
        vec![ramp(16, 5 * 4 * 2 * 8), u32s(&[0, 1, 0]), u32s(&[0, 2, 3])],
    )
}

fn paged(
    f: impl FnOnce(&mut BlockPagedFields, &mut TensorDescriptor, &mut Vec<Vec<u8>>),
) -> Vec<u8> {
    edit(block_paged(), |d, b| {
        let LayoutFields::BlockPaged(mut fields) = d.layout.clone() else {
            unreachable!("block-paged fields")
        };
        f(&mut fields, d, b);
        d.layout = LayoutFields::BlockPaged(fields);
    })
}

/// A float32 row-major member of `shape` placed at `offset` in `parent`.
fn member(
    shape: &[u64],
    offset: &[u64],
    parent: &[u64],
    role: Option<u8>,
) -> (TensorDescriptor, Vec<Vec<u8>>) {
    let (mut d, b) = dense(
        F32,
        LAYOUT_ROW_MAJOR,
        shape,
        0,
        LayoutFields::Implicit,
        None,
    );
    d.shard = Some(ShardSection {
        parent_shape: parent.to_vec(),
        shard_offset: offset.to_vec(),
    });
    d.composite_member = role.map(|member_role| CompositeMember {
        member_role,
        reserved: [0; 15],
    });
    d.sync_sections();
    (d, b)
}

/// A composite file: `head` then `members`.
fn composite(head: TensorDescriptor, members: Vec<(TensorDescriptor, Vec<Vec<u8>>)>) -> Vec<u8> {
    let mut items = vec![item("head", head, vec![])];
    for (i, (d, b)) in members.into_iter().enumerate() {
        items.push(item(&format!("member{i}"), d, b));
    }
    file(items)
}

fn partition(members: Vec<(TensorDescriptor, Vec<Vec<u8>>)>) -> Vec<u8> {
    let head = composite_head(ElementType::Float32, &[8, 8], 1, 0, members.len() as u32);
    composite(head, members)
}

fn overlay(members: Vec<(TensorDescriptor, Vec<Vec<u8>>)>) -> Vec<u8> {
    let head = composite_head(ElementType::Float32, &[4, 4], 2, 1, members.len() as u32);
    composite(head, members)
}

fn valid_cases() -> Vec<Case> {
    let strided = dense(
        U8,
        LAYOUT_STRIDED,
        &[3, 4],
        8,
        LayoutFields::Strided {
            strides: vec![-4, 1],
        },
        None,
    );
    let nested = TiledFields {
        inner_tiled: Some(Box::new(tiled(&[2, 2], 2, 1))),
        ..tiled(&[4, 4], 1, LAYOUT_TILED)
    };
    let (mut coo_sparse, coo_b) = coo();
    coo_sparse.statistics = Some(Statistics {
        computed_mask: Statistics::NNZ_VALID,
        nnz: 3,
        ..Statistics::default()
    });
    coo_sparse.sync_sections();
    let v = |name: &str, description: &str, (d, b): (TensorDescriptor, Vec<Vec<u8>>)| {
        Case::valid(F, name, description, one(d, b))
    };
    let examples = [
        ("layout-coo.hrry", "layouts/coo.md § Example"),
        ("layout-csr.hrry", "layouts/csr.md § Example"),
        ("layout-csc.hrry", "layouts/csc.md § Example"),
        ("layout-csf.hrry", "layouts/csf.md § Example"),
        (
            "layout-block-paged.hrry",
            "layouts/block-paged.md § Example",
        ),
        (
            "layout-strided-reversed.hrry",
            "layouts/strided.md § Example",
        ),
        (
            "layout-hilbert.hrry",
            "layouts/hilbert.md § Conformance Check",
        ),
    ];
    let cases = vec![
        v(
            "layout-column-major-int4.hrry",
            "column-major int4 [3, 5]",
            dense(
                0x48,
                LAYOUT_COLUMN_MAJOR,
                &[3, 5],
                0,
                LayoutFields::Implicit,
                None,
            ),
        ),
        v(
            "layout-strided-reversed.hrry",
            "strided uint8 [3, 4], rows reversed (strides [-4, 1], byte_offset 8)",
            strided,
        ),
        v(
            "layout-strided-broadcast.hrry",
            "strided float32 [3, 4] broadcasting one row (strides [0, 1])",
            dense(
                F32,
                LAYOUT_STRIDED,
                &[3, 4],
                0,
                LayoutFields::Strided {
                    strides: vec![0, 1],
                },
                Some(16),
            ),
        ),
        v(
            "layout-tiled.hrry",
            "tiled float32 [5, 7] in [2, 3] tiles, partial tiles padded",
            dense(
                F32,
                LAYOUT_TILED,
                &[5, 7],
                0,
                LayoutFields::Tiled(tiled(&[2, 3], 1, 2)),
                None,
            ),
        ),
        v(
            "layout-tiled-nested.hrry",
            "two-level tiling of uint8 [8, 6]: [4, 4] tiles of [2, 2] tiles",
            dense(
                U8,
                LAYOUT_TILED,
                &[8, 6],
                0,
                LayoutFields::Tiled(nested),
                None,
            ),
        ),
        v(
            "layout-morton.hrry",
            "Morton uint8 [3, 5] with bits [2, 3], padding zero",
            dense(
                U8,
                LAYOUT_MORTON,
                &[3, 5],
                0,
                LayoutFields::Morton {
                    morton_bits: vec![2, 3],
                },
                None,
            ),
        ),
        v(
            "layout-hilbert.hrry",
            "Hilbert uint8 [4, 4], order 2",
            dense(U8, LAYOUT_HILBERT, &[4, 4], 0, hilbert(2, 2), None),
        ),
        v(
            "layout-coo.hrry",
            "the COO example of coo.md, with statistics nnz",
            (coo_sparse, coo_b),
        ),
        v("layout-csr.hrry", "the CSR example of csr.md", csr(false)),
        v("layout-csc.hrry", "the CSC example of csc.md", csc_pair()),
        v("layout-csf.hrry", "the CSF example of csf.md", csf()),
        v(
            "layout-csf-mode-order.hrry",
            "the csf.md tensor stored with mode_order [2, 0, 1]",
            encode::csf(F32, &[2, 3, 4], &csf_tensor(), &[2, 0, 1]).expect("csf"),
        ),
        v(
            "layout-block-paged.hrry",
            "the block-paged example of block-paged.md (shared page 0)",
            block_paged(),
        ),
        Case::valid(
            F,
            "layout-partition-2x2.hrry",
            "a partition of [8, 8] into four [4, 4] members",
            partition(vec![
                member(&[4, 4], &[0, 0], &[8, 8], None),
                member(&[4, 4], &[0, 4], &[8, 8], None),
                member(&[4, 4], &[4, 0], &[8, 8], None),
                member(&[4, 4], &[4, 4], &[8, 8], None),
            ]),
        ),
        Case::valid(
            F,
            "layout-overlay.hrry",
            "a replace overlay of [4, 4]: base plus two overlapping corrections",
            overlay(vec![
                member(&[4, 4], &[0, 0], &[4, 4], Some(1)),
                member(&[2, 2], &[1, 1], &[4, 4], Some(0)),
                member(&[1, 4], &[2, 0], &[4, 4], Some(0)),
            ]),
        ),
    ];
    cases
        .into_iter()
        .map(|c| {
            match examples
                .iter()
                .find(|(n, _)| c.path == format!("valid/{n}"))
            {
                Some((_, source)) => c.spec_example(source),
                None => c,
            }
        })
        .collect()
}

fn csc_pair() -> (TensorDescriptor, Vec<Vec<u8>>) {
    csr(true)
}

/// Sets `buffers[i]` to `values` as uint64 entries.
fn set(b: &mut [Vec<u8>], i: usize, values: &[u64]) {
    b[i] = u64s(values);
}

fn compressed_cases(by_column: bool) -> Vec<Case> {
    let (rank, buffers, reserved, sizes, ends, monotone, sorted, range, name) = if by_column {
        (
            "LY-CSC-001",
            "LY-CSC-002",
            "LY-CSC-003",
            "LY-CSC-004",
            "LY-CSC-005",
            "LY-CSC-006",
            "LY-CSC-007",
            "LY-CSC-008",
            "CSC",
        )
    } else {
        (
            "LY-CSR-001",
            "LY-CSR-002",
            "LY-CSR-003",
            "LY-CSR-004",
            "LY-CSR-005",
            "LY-CSR-006",
            "LY-CSR-007",
            "LY-CSR-008",
            "CSR",
        )
    };
    let base = || csr(by_column);
    let with_fields = |f: fn(&mut hrry::schema::CompressedFields)| {
        edit(base(), move |d, _| match &mut d.layout {
            LayoutFields::Csr(c) | LayoutFields::Csc(c) => f(c),
            _ => unreachable!("compressed fields"),
        })
    };
    // The example's pointer array: row_ptr [0, 2, 3, 5, 5] / col_ptr [0, 1, 2, 3, 4, 5].
    // For the unsorted case CSC first moves column 1's entry into column 0, since
    // the example stores one entry per column.
    type Arrays = (Vec<u64>, Vec<u64>, (Vec<u64>, Vec<u64>), Vec<u64>);
    let (ptr_ends, ptr_decreasing, (unsorted_ptr, unsorted_idx), idx_out): Arrays = if by_column {
        (
            vec![0, 1, 2, 3, 4, 4],
            vec![0, 2, 1, 3, 4, 5],
            (vec![0, 2, 2, 3, 4, 5], vec![2, 0, 1, 0, 2]),
            vec![0, 2, 1, 0, 9],
        )
    } else {
        (
            vec![0, 2, 3, 4, 4],
            vec![0, 3, 2, 5, 5],
            (vec![0, 2, 3, 5, 5], vec![3, 0, 2, 1, 4]),
            vec![0, 3, 2, 1, 9],
        )
    };
    let inv = |rule, suffix: &str, what: &str, bytes| {
        Case::invalid(F, rule, suffix, &format!("{name}: {what}"), bytes)
    };
    let rank3 = {
        let (mut d, b) = base();
        d.shape = vec![4, 5, 1];
        d.fix_length();
        one(d, b)
    };
    vec![
        inv(rank, "", "rank 3", rank3),
        inv(
            buffers,
            "",
            "a fourth buffer without quantization",
            edit(base(), |_, b| b.push(vec![0; 8])),
        ),
        inv(
            reserved,
            "",
            "a non-zero reserved byte",
            with_fields(|c| c.reserved[3] = 1),
        ),
        inv(
            sizes,
            "",
            "the pointer buffer one entry short",
            edit(base(), |_, b| {
                let n = b[2].len() - 8;
                b[2].truncate(n);
            }),
        ),
        inv(
            ends,
            "",
            "the last pointer is not nnz",
            edit(base(), |_, b| set(b, 2, &ptr_ends)),
        ),
        inv(
            monotone,
            "",
            "a decreasing pointer",
            edit(base(), |_, b| set(b, 2, &ptr_decreasing)),
        ),
        inv(
            sorted,
            "",
            "indices out of order within a slice",
            edit(base(), |_, b| {
                set(b, 1, &unsorted_idx);
                set(b, 2, &unsorted_ptr);
            }),
        ),
        inv(
            range,
            "",
            "an index beyond the dimension",
            edit(base(), |_, b| set(b, 1, &idx_out)),
        ),
    ]
}

fn invalid_cases() -> Vec<Case> {
    let inv = |rule, what: &str, bytes| Case::invalid(F, rule, "", what, bytes);
    let single = |(d, b): (TensorDescriptor, Vec<Vec<u8>>)| one(d, b);
    let depth9 = (0..9).fold(None, |inner: Option<TiledFields>, _| {
        Some(TiledFields {
            inner_layout: if inner.is_some() {
                LAYOUT_TILED
            } else {
                LAYOUT_ROW_MAJOR
            },
            inner_tiled: inner.map(Box::new),
            ..tiled(&[1], 1, 1)
        })
    });
    let morton_padding = {
        let (d, mut b) = dense(
            U8,
            LAYOUT_MORTON,
            &[3, 3],
            0,
            LayoutFields::Morton {
                morton_bits: vec![2, 2],
            },
            None,
        );
        // Code 5 = [3, 0] lies outside the shape.
        b[0][5] = 0xAA;
        one(d, b)
    };
    let coo_entries = |sorted: u8, idx: &[u64]| {
        edit(coo(), |d, b| {
            if let LayoutFields::Coo(c) = &mut d.layout {
                c.is_sorted = sorted;
            }
            set(b, 1, idx);
        })
    };
    let csf_fields = |f: fn(&mut hrry::schema::CsfFields)| {
        edit(csf(), move |d, _| {
            if let LayoutFields::Csf(c) = &mut d.layout {
                f(c);
            }
            d.fix_length();
        })
    };
    let tiled_strided = |outer: Option<Vec<i64>>, inner: Option<Vec<i64>>, byte_offset: u64| {
        let fields = TiledFields {
            outer_layout: if outer.is_some() {
                LAYOUT_STRIDED
            } else {
                LAYOUT_ROW_MAJOR
            },
            inner_layout: if inner.is_some() {
                LAYOUT_STRIDED
            } else {
                LAYOUT_ROW_MAJOR
            },
            outer_strides: outer,
            inner_strides: inner,
            ..tiled(&[2], 1, 1)
        };
        let mut d = descriptor(F32, LAYOUT_TILED, &[4], LayoutFields::Tiled(fields), &[0]);
        d.byte_offset = byte_offset;
        let size = required_buffer_size(&d).expect("tiled size");
        d.buffers[0].byte_size = size;
        one(d, vec![vec![0; size as usize]])
    };
    let f32_dense =
        |tag, shape: &[u64], fields, size| single(dense(F32, tag, shape, 0, fields, size));
    vec![
        inv(
            "LY-STR-001",
            "strides [-4, 1] with byte_offset 0: rows 1 and 2 lie before buffer 0",
            f32_dense(
                LAYOUT_STRIDED,
                &[3, 4],
                LayoutFields::Strided {
                    strides: vec![-4, 1],
                },
                Some(16),
            ),
        ),
        inv(
            "LY-TIL-001",
            "tile_shape [0, 2]",
            f32_dense(
                LAYOUT_TILED,
                &[4, 4],
                LayoutFields::Tiled(tiled(&[0, 2], 1, 1)),
                Some(64),
            ),
        ),
        inv(
            "LY-TIL-002",
            "outer_layout 0x05",
            f32_dense(
                LAYOUT_TILED,
                &[4, 4],
                LayoutFields::Tiled(tiled(&[2, 2], 5, 1)),
                Some(64),
            ),
        ),
        inv(
            "LY-TIL-003",
            "inner_layout 0x05",
            f32_dense(
                LAYOUT_TILED,
                &[4, 4],
                LayoutFields::Tiled(tiled(&[2, 2], 1, 5)),
                Some(64),
            ),
        ),
        inv(
            "LY-TIL-004",
            "a non-zero reserved byte",
            f32_dense(
                LAYOUT_TILED,
                &[4, 4],
                LayoutFields::Tiled(TiledFields {
                    reserved: [0, 1],
                    ..tiled(&[2, 2], 1, 1)
                }),
                None,
            ),
        ),
        inv(
            "LY-TIL-005",
            "nine nested tiled levels",
            f32_dense(
                LAYOUT_TILED,
                &[2],
                LayoutFields::Tiled(depth9.expect("levels")),
                None,
            ),
        ),
        inv(
            "LY-TIL-006",
            "a reversed tile grid (outer strides [-1]) with byte_offset 0",
            tiled_strided(Some(vec![-1]), None, 0),
        ),
        inv(
            "LY-TIL-007",
            "inner strides [2] reach past a 2-element tile",
            tiled_strided(None, Some(vec![2]), 0),
        ),
        inv(
            "LY-MOR-001",
            "morton_bits [0, 2]",
            f32_dense(
                LAYOUT_MORTON,
                &[1, 4],
                LayoutFields::Morton {
                    morton_bits: vec![0, 2],
                },
                Some(64),
            ),
        ),
        inv(
            "LY-MOR-002",
            "shape[0] = 3 with morton_bits[0] = 1",
            f32_dense(
                LAYOUT_MORTON,
                &[3, 4],
                LayoutFields::Morton {
                    morton_bits: vec![1, 2],
                },
                Some(64),
            ),
        ),
        inv(
            "LY-MOR-003",
            "a non-zero byte at Morton position 5 ([3, 0], outside [3, 3])",
            morton_padding,
        ),
        inv(
            "LY-HIL-001",
            "hilbert_order 0",
            f32_dense(LAYOUT_HILBERT, &[1, 1], hilbert(0, 2), Some(4)),
        ),
        inv(
            "LY-HIL-002",
            "hilbert_rank 3 for a rank-2 tensor",
            f32_dense(LAYOUT_HILBERT, &[2, 2], hilbert(1, 3), Some(16)),
        ),
        inv(
            "LY-HIL-003",
            "a rank-1 Hilbert curve",
            f32_dense(LAYOUT_HILBERT, &[4], hilbert(2, 1), Some(16)),
        ),
        inv(
            "LY-HIL-004",
            "shape [4, 3] with hilbert_order 2",
            f32_dense(LAYOUT_HILBERT, &[4, 3], hilbert(2, 2), None),
        ),
        inv(
            "LY-HIL-005",
            "a Hilbert [4, 4] uint8 buffer of 17 bytes (exactly 16 needed)",
            single(dense(
                U8,
                LAYOUT_HILBERT,
                &[4, 4],
                0,
                hilbert(2, 2),
                Some(17),
            )),
        ),
        Case::invalid(
            F,
            "LY-HIL-005",
            "short",
            "a Hilbert [4, 4] uint8 buffer of 15 bytes (exactly 16 needed)",
            single(dense(
                U8,
                LAYOUT_HILBERT,
                &[4, 4],
                0,
                hilbert(2, 2),
                Some(15),
            )),
        ),
        inv(
            "LY-SPR-001",
            "a COO tensor with byte_offset 8",
            edit(coo(), |d, _| d.byte_offset = 8),
        ),
        inv(
            "LY-SPR-002",
            "COO nnz 3 but statistics nnz 4",
            edit(coo(), |d, _| {
                d.statistics = Some(Statistics {
                    computed_mask: Statistics::NNZ_VALID,
                    nnz: 4,
                    ..Statistics::default()
                })
            }),
        ),
        inv(
            "LY-COO-001",
            "a third buffer without quantization",
            edit(coo(), |_, b| b.push(vec![0; 8])),
        ),
        inv(
            "LY-COO-002",
            "is_sorted 0x02",
            edit(coo(), |d, _| {
                if let LayoutFields::Coo(c) = &mut d.layout {
                    c.is_sorted = 2;
                }
            }),
        ),
        inv(
            "LY-COO-003",
            "a non-zero reserved byte",
            edit(coo(), |d, _| {
                if let LayoutFields::Coo(c) = &mut d.layout {
                    c.reserved[6] = 1;
                }
            }),
        ),
        inv(
            "LY-COO-004",
            "indices one entry short",
            edit(coo(), |_, b| b[1].truncate(40)),
        ),
        inv(
            "LY-COO-005",
            "coordinate 5 in a dimension of 4",
            coo_entries(1, &[0, 1, 0, 5, 3, 3]),
        ),
        inv(
            "LY-COO-006",
            "the tuple (2, 0) stored twice",
            coo_entries(0, &[2, 0, 0, 1, 2, 0]),
        ),
        inv(
            "LY-COO-007",
            "is_sorted 0x01 but (0, 1) follows (2, 0)",
            coo_entries(1, &[2, 0, 0, 1, 3, 3]),
        ),
        inv(
            "LY-CSF-001",
            "a rank-2 CSF tensor",
            single(encode::csf(F32, &[4, 4], &coo_tensor(), &[0, 1]).expect("csf")),
        ),
        inv(
            "LY-CSF-002",
            "an eighth buffer without quantization",
            edit(csf(), |_, b| b.push(vec![0; 8])),
        ),
        inv(
            "LY-CSF-003",
            "a non-zero reserved byte",
            csf_fields(|c| c.reserved[0] = 1),
        ),
        inv(
            "LY-CSF-004",
            "mode_order [0, 0, 2]",
            csf_fields(|c| c.mode_order = vec![0, 0, 2]),
        ),
        inv(
            "LY-CSF-005",
            "crd_2 one entry short",
            edit(csf(), |_, b| b[6].truncate(24)),
        ),
        inv(
            "LY-CSF-006",
            "pos_0 starts at 1",
            edit(csf(), |_, b| set(b, 1, &[1, 2])),
        ),
        inv(
            "LY-CSF-007",
            "pos_2 decreases ([0, 3, 2, 4])",
            edit(csf(), |_, b| set(b, 5, &[0, 3, 2, 4])),
        ),
        inv(
            "LY-CSF-008",
            "siblings [2, 0] under one parent",
            edit(csf(), |_, b| set(b, 6, &[1, 3, 2, 0])),
        ),
        inv(
            "LY-CSF-009",
            "crd_2 holds 9 in a dimension of 4",
            edit(csf(), |_, b| set(b, 6, &[1, 3, 0, 9])),
        ),
        inv(
            "LY-CSF-010",
            "a CSF tensor with a shard section",
            edit(csf(), |d, _| {
                d.shard = Some(ShardSection {
                    parent_shape: vec![2, 3, 4],
                    shard_offset: vec![0, 0, 0],
                })
            }),
        ),
        inv(
            "LY-BP-001",
            "a rank-2 block-paged tensor",
            edit(block_paged(), |d, _| d.shape = vec![9, 16]),
        ),
        inv(
            "LY-BP-002",
            "a fourth buffer without quantization",
            edit(block_paged(), |_, b| b.push(vec![0; 8])),
        ),
        inv(
            "LY-BP-003",
            "page_size 0 (no tokens)",
            paged(|f, d, _| {
                f.page_size = 0;
                d.shape[0] = 0;
            }),
        ),
        inv(
            "LY-BP-004",
            "paged_axis 1",
            paged(|f, _, _| f.paged_axis = 1),
        ),
        inv("LY-BP-005", "kv_role 0x03", paged(|f, _, _| f.kv_role = 3)),
        inv(
            "LY-BP-006",
            "block_table_index_type 0x02",
            paged(|f, _, _| f.block_table_index_type = 2),
        ),
        inv(
            "LY-BP-007",
            "a non-zero reserved byte",
            paged(|f, _, _| f.reserved[5] = 1),
        ),
        inv(
            "LY-BP-008",
            "page_pool one page short",
            edit(block_paged(), |_, b| b[0].truncate(4 * 4 * 2 * 8 * 2)),
        ),
        inv(
            "LY-BP-009",
            "seq_ptr starts at 1",
            edit(block_paged(), |_, b| b[2] = u32s(&[1, 2, 3])),
        ),
        inv(
            "LY-BP-010",
            "seq_ptr [0, 3, 2, 3] decreases",
            paged(|f, _, b| {
                f.num_seqs = 3;
                b[2] = u32s(&[0, 3, 2, 3]);
            }),
        ),
        inv(
            "LY-BP-011",
            "block_table names page 7 of 5",
            edit(block_paged(), |_, b| b[1] = u32s(&[0, 1, 7])),
        ),
        inv(
            "LY-BP-012",
            "a block-paged tensor with a shard section",
            edit(block_paged(), |d, _| {
                d.shard = Some(ShardSection {
                    parent_shape: vec![9, 2, 8],
                    shard_offset: vec![0, 0, 0],
                })
            }),
        ),
        inv(
            "LY-BP-013",
            "seq_ptr on device 1, the rest on device 0",
            edit(block_paged(), |d, _| d.buffers[2].device_tag = 1),
        ),
        inv(
            "LY-BP-018",
            "an empty batch over a pool of 2^32 pages (of [0, 8] slots) with a uint32 block table",
            paged(|f, d, b| {
                f.num_pages = 1 << 32;
                f.num_seqs = 0;
                d.shape = vec![0, 0, 8];
                b[0].clear();
                b[1].clear();
                b[2] = u32s(&[0]);
            }),
        ),
        inv(
            "LY-BP-014",
            "13 tokens in 3 pages of 4",
            edit(block_paged(), |d, _| d.shape[0] = 13),
        ),
        inv(
            "LY-CMP-001",
            "a partition member without a shard section",
            partition(vec![member(&[8, 4], &[0, 0], &[8, 8], None), {
                let (mut d, b) = member(&[8, 4], &[0, 4], &[8, 8], None);
                d.shard = None;
                d.sync_sections();
                (d, b)
            }]),
        ),
        inv(
            "LY-CMP-002",
            "a partition member whose parent_shape is [8, 9]",
            partition(vec![
                member(&[8, 4], &[0, 0], &[8, 8], None),
                member(&[8, 4], &[0, 4], &[8, 9], None),
            ]),
        ),
        inv(
            "LY-CMP-003",
            "an int8 member of a float32 partition",
            partition(vec![member(&[8, 4], &[0, 0], &[8, 8], None), {
                let (mut d, _) = member(&[8, 4], &[0, 4], &[8, 8], None);
                d.type_tag = 0x10;
                d.buffers[0].byte_size = 32;
                (d, vec![vec![1; 32]])
            }]),
        ),
        inv(
            "LY-CMP-004",
            "an overlay whose first member is a correction",
            overlay(vec![
                member(&[4, 4], &[0, 0], &[4, 4], Some(0)),
                member(&[2, 2], &[1, 1], &[4, 4], Some(0)),
            ]),
        ),
        inv(
            "LY-CMP-005",
            "an overlay with two base members",
            overlay(vec![
                member(&[4, 4], &[0, 0], &[4, 4], Some(1)),
                member(&[4, 4], &[0, 0], &[4, 4], Some(1)),
            ]),
        ),
        inv(
            "LY-CMP-006",
            "an overlay head with member_count 0",
            overlay(vec![]),
        ),
        inv(
            "LY-CMP-007",
            "partition members [8, 5] at [0, 0] and [8, 4] at [0, 4] overlap",
            partition(vec![
                member(&[8, 5], &[0, 0], &[8, 8], None),
                member(&[8, 4], &[0, 4], &[8, 8], None),
            ]),
        ),
        inv(
            "LY-CMP-008",
            "one [8, 4] member leaves half of [8, 8] uncovered",
            partition(vec![member(&[8, 4], &[0, 0], &[8, 8], None)]),
        ),
    ]
}

/// Every layout corpus case.
pub fn cases() -> Vec<Case> {
    let mut cases = valid_cases();
    cases.extend(invalid_cases());
    cases.extend(compressed_cases(false));
    cases.extend(compressed_cases(true));
    cases
}

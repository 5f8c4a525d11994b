//! The spec's worked examples that no other area of the corpus generates, each built
//! from the facts its section states (shapes, layout fields, buffer contents where
//! given): every one is valid under the spec policy. Where the spec leaves a fact
//! open (an element type, element values), the choice is said in the case's
//! description. The examples other areas generate (metadata.md's in `container.rs`,
//! the sparse and block-paged ones in `layout.rs`) carry [`Case::spec_example`] too.

use hrry::file::WriterOptions;
use hrry::layout::dense::from_row_major;
use hrry::model::build::{composite_head, descriptor};
use hrry::model::ElementType;
use hrry::schema::{
    LayoutFields, PerChannelAffine, QuantScheme, QuantizationHeader, QuantizationSection,
    ShardSection, TensorDescriptor, TiledFields, LAYOUT_COLUMN_MAJOR, LAYOUT_MORTON,
    LAYOUT_ROW_MAJOR, LAYOUT_TILED, SCHEME_PER_CHANNEL_AFFINE,
};

use super::patch::{self, f32s, i32s, Item};
use super::{Case, Format};

const F: Format = Format::HrryFile;
const F32: u8 = 0x03;

/// `n` float32 values 0, 1, 2, … (row-major order).
fn counting(n: u64) -> Vec<u8> {
    f32s(&(0..n).map(|i| i as f32).collect::<Vec<_>>())
}

/// A float32 tensor of `shape` in `layout_tag`/`fields` holding [`counting`] values,
/// its one buffer exactly what the layout needs.
fn dense_f32(layout_tag: u8, shape: &[u64], fields: LayoutFields) -> (TensorDescriptor, Vec<u8>) {
    let mut d = descriptor(F32, layout_tag, shape, fields, &[0]);
    let n: u64 = shape.iter().product();
    let buffer = from_row_major(&d, &counting(n), 1 << 20).expect("a spec example's layout");
    d.buffers[0].byte_size = buffer.len() as u64;
    (d, buffer)
}

/// A file of `items`, written without the writer's own checks (the test judges it).
fn file(items: Vec<Item>) -> Vec<u8> {
    let options = WriterOptions {
        unchecked: true,
        ..WriterOptions::default()
    };
    patch::write(options, &[], &items)
}

fn one(name: &str, (d, b): (TensorDescriptor, Vec<u8>)) -> Vec<u8> {
    file(vec![Item {
        name: name.into(),
        descriptor: d,
        buffers: vec![b],
    }])
}

/// A float32 row-major partition member of `shape` at `offset` in `parent`.
fn member(shape: &[u64], offset: &[u64], parent: &[u64]) -> (TensorDescriptor, Vec<u8>) {
    let (mut d, b) = dense_f32(LAYOUT_ROW_MAJOR, shape, LayoutFields::Implicit);
    d.shard = Some(ShardSection {
        parent_shape: parent.to_vec(),
        shard_offset: offset.to_vec(),
    });
    d.sync_sections();
    (d, b)
}

/// quantization/per-channel-affine.md § Worked Example: an int8 [768, 1024] weight,
/// per-channel affine along axis 0 (asymmetric), scales in buffer 1 and zero points
/// in buffer 2.
fn per_channel_worked_example() -> Vec<u8> {
    let scheme = QuantScheme::PerChannelAffine(PerChannelAffine {
        header: QuantizationHeader::version1(SCHEME_PER_CHANNEL_AFFINE, 0),
        axis: 0,
        scale_buffer_index: 1,
        zero_point_buffer_index: 2,
        scale_type_tag: 0x03,
        reserved: [0; 3],
    });
    let data: Vec<u8> = (0..768 * 1024u32).map(|i| (i % 251) as u8).collect();
    let scales: Vec<f32> = (1..=768).map(|c| c as f32 / 1024.0).collect();
    let zero_points: Vec<i32> = (0..768).map(|c| c % 255 - 127).collect();
    let buffers = vec![data, f32s(&scales), i32s(&zero_points)];
    let mut d = descriptor(
        ElementType::Int8.tag(),
        LAYOUT_ROW_MAJOR,
        &[768, 1024],
        LayoutFields::Implicit,
        &buffers.iter().map(|b| b.len() as u64).collect::<Vec<_>>(),
    );
    d.quantization = Some(QuantizationSection::new(scheme));
    d.sync_sections();
    patch::write_one("weight", d, buffers)
}

/// The spec's examples not yet in the corpus, as valid cases named
/// `valid/spec-example-*.hrry`.
pub fn cases() -> Vec<Case> {
    let tiled = TiledFields {
        tile_shape: vec![2, 4],
        outer_layout: 0x01,
        inner_layout: 0x01,
        reserved: [0; 2],
        outer_strides: None,
        inner_strides: None,
        inner_tiled: None,
    };
    let head = composite_head(ElementType::Float32, &[8, 8], 1, 0, 2);
    let partition = file(vec![
        Item {
            name: "head".into(),
            descriptor: head,
            buffers: vec![],
        },
        {
            let (d, b) = member(&[8, 4], &[0, 0], &[8, 8]);
            Item {
                name: "member0".into(),
                descriptor: d,
                buffers: vec![b],
            }
        },
        {
            let (d, b) = member(&[8, 4], &[0, 4], &[8, 8]);
            Item {
                name: "member1".into(),
                descriptor: d,
                buffers: vec![b],
            }
        },
    ]);
    let case = |name: &str, source: &'static str, description: &str, bytes| {
        Case::valid(F, &format!("spec-example-{name}.hrry"), description, bytes)
            .spec_example(source)
    };
    vec![
        case(
            "row-major",
            "layouts/row-major.md § Example",
            "row-major [3, 4] (strides [4, 1]); float32 0..11 (type and values not given)",
            one(
                "t",
                dense_f32(LAYOUT_ROW_MAJOR, &[3, 4], LayoutFields::Implicit),
            ),
        ),
        case(
            "column-major",
            "layouts/column-major.md § Example",
            "column-major [3, 4] (strides [1, 3]); float32 0..11 (type and values not given)",
            one(
                "t",
                dense_f32(LAYOUT_COLUMN_MAJOR, &[3, 4], LayoutFields::Implicit),
            ),
        ),
        case(
            "tiled",
            "layouts/tiled.md § Example",
            "tiled [6, 8] in [2, 4] tiles, row-major outer and inner; float32 0..47 (type \
             and values not given)",
            one(
                "t",
                dense_f32(LAYOUT_TILED, &[6, 8], LayoutFields::Tiled(tiled)),
            ),
        ),
        case(
            "morton",
            "layouts/morton.md § Example",
            "Morton [4, 4] with morton_bits [2, 2]; float32 0..15 (type and values not given)",
            one(
                "t",
                dense_f32(
                    LAYOUT_MORTON,
                    &[4, 4],
                    LayoutFields::Morton {
                        morton_bits: vec![2, 2],
                    },
                ),
            ),
        ),
        case(
            "partition",
            "layouts/composite.md § Example",
            "the partition example: float32 [8, 8] from two [8, 4] members at [0, 0] and \
             [0, 4] (values not given)",
            partition,
        ),
    ]
}

/// The spec's examples too large for the corpus, built the same way and tested
/// valid under the spec policy, but not written under `corpus/`: per-channel-affine.md's
/// weight is 0.8 MB, seven times the largest corpus file, and every corpus-wide check
/// (truncation at every length, the explore seeds, the Python suite) grows with it.
pub fn large_cases() -> Vec<Case> {
    vec![Case::valid(
        F,
        "spec-example-per-channel-affine.hrry",
        "int8 [768, 1024], per-channel affine along axis 0, asymmetric: scales in buffer 1 \
         (3072 bytes), zero points in buffer 2 (3072 bytes) (values not given)",
        per_channel_worked_example(),
    )
    .spec_example("quantization/per-channel-affine.md § Worked Example")]
}

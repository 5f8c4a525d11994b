//! Corpus cases for bare streams (rules `ST-…`, and descriptor and composite rules
//! as a stream reader meets them).

use hrry::file::HrryFile;
use hrry::model::build::{composite_head, dense};
use hrry::model::ElementType;
use hrry::schema::{descriptor_offsets as doff, CompositeMember, TensorDescriptor};
use hrry::stream::{pack, StreamWriter};

use super::patch::{put, Item};
use super::{Case, Expect, Format};

const S: Format = Format::Stream;

/// The valid HRRYFILE cases packed as streams: one of each kind of tensor the
/// stream must carry unchanged (multi-buffer sparse, quantized with parameter
/// buffers, composites, descriptor growth bytes, every element type).
const PACKED: &[&str] = &[
    "valid/all_element_types.hrry",
    "valid/basic.hrry",
    "valid/composite_nested_group.hrry",
    "valid/composite_overlay.hrry",
    "valid/composite_partition.hrry",
    "valid/empty.hrry",
    "valid/layout-csr.hrry",
    "valid/layout-tiled-nested.hrry",
    "valid/minor_version_growth.hrry",
    "valid/quant-per-block-int4-f16.hrry",
];

/// Invalid HRRYFILE cases whose one broken rule a stream carries unchanged
/// (descriptor, layout, quantization and composite rules), written as streams:
/// each file's tensors in file order, without any check.
const FROM_FILES: &[(&str, &str)] = &[
    ("TD-HDR-005", "a reserved descriptor flag bit (7) set"),
    ("TD-BUF-002", "a buffer alignment of 32"),
    ("TD-BUF-003", "a buffer handle's reserved byte set"),
    (
        "TD-BUF-005",
        "a [2, 3] float32 tensor whose buffer holds 20 bytes",
    ),
    ("QZ-TAG-001", "a quantization scheme_tag of 0xFF (invalid)"),
    ("LY-CMP-003", "an int8 member of a float32 partition"),
    (
        "LY-CMP-007",
        "a partition whose members [8, 5] at [0, 0] and [8, 4] at [0, 4] overlap",
    ),
];

/// The tensors of the HRRYFILE `bytes` as a bare stream, in file order (by
/// descriptor offset): each descriptor's bytes as the file holds them, then its
/// buffers, read without checking the descriptors' rules.
fn stream_of_file(bytes: &[u8]) -> Vec<u8> {
    let file = hrry::file::OpenOptions::new()
        .allow_all()
        .open_bytes(bytes)
        .expect("corpus file opens");
    let mut entries: Vec<_> = file.entries().collect();
    entries.sort_by_key(|e| e.index_entry().descriptor_offset);
    let mut out = Vec::new();
    for e in entries {
        let t = file.tensor_at(e).expect("corpus tensor reads");
        let at = e.index_entry().descriptor_offset as usize;
        out.extend_from_slice(&bytes[at..at + t.descriptor.descriptor_length as usize]);
        for b in &t.buffers {
            out.extend_from_slice(b);
        }
    }
    out
}

/// `items` written as a bare stream, without any check (so broken composites can
/// be written).
fn stream_of(items: &[Item]) -> Vec<u8> {
    let mut out = Vec::new();
    for it in items {
        out.extend_from_slice(&hrry::schema::to_bytes(&it.descriptor));
        for b in &it.buffers {
            out.extend_from_slice(b);
        }
    }
    out
}

fn f32d(shape: &[u64]) -> TensorDescriptor {
    dense(ElementType::Float32, shape).expect("dense float32")
}

/// Two tensors: float32 [2, 3] and int8 [3].
fn base_items() -> Vec<Item> {
    vec![
        Item::patterned("weights", f32d(&[2, 3])),
        Item::patterned("bias", dense(ElementType::Int8, &[3]).expect("int8")),
    ]
}

/// A group head with `members` float32 [2] members announced and `sent` sent.
fn group(members: u32, sent: u32) -> Vec<Item> {
    let mut items = vec![Item::patterned(
        "head",
        composite_head(ElementType::Float32, &[2], 3, 0, members),
    )];
    for i in 0..sent {
        items.push(Item::patterned(&format!("m{i}"), f32d(&[2])));
    }
    items
}

/// The stream cases; `files` are the HRRYFILE cases, some of which are packed.
pub fn cases(files: &[Case]) -> Vec<Case> {
    // `valid/empty.hrry` packs to zero bytes: the empty stream.
    let mut out = Vec::new();
    for path in PACKED {
        let case = files
            .iter()
            .find(|c| c.path == *path && c.expect == Expect::Valid)
            .unwrap_or_else(|| panic!("corpus case {path} to pack"));
        let file = HrryFile::from_bytes(&case.bytes).expect("valid corpus file opens");
        let mut w = StreamWriter::new(Vec::new());
        pack(&file, &mut w).expect("valid corpus file packs");
        let name = path.trim_start_matches("valid/").replace(".hrry", ".hrrys");
        let stem = name.trim_end_matches(".hrrys").to_string();
        let description = format!("corpus/{path} packed: its tensors in file order ({stem})");
        out.push(Case::valid(
            S,
            &name,
            &description,
            w.finish().expect("finish"),
        ));
    }

    let base = stream_of(&base_items());
    let second = u64::from(base_items()[0].descriptor.descriptor_length) + 24;
    let inv = |rule, suffix: &str, description: &str, bytes: Vec<u8>| {
        Case::invalid(S, rule, suffix, description, bytes)
    };
    out.push(inv(
        "ST-TRN-001",
        "",
        "two tensors, then 7 bytes of a third descriptor's header",
        {
            let mut b = base.clone();
            b.extend_from_slice(&base[..7]);
            b
        },
    ));
    out.push(inv(
        "ST-TRN-002",
        "",
        "the second descriptor cut 4 bytes before its descriptor_length",
        base[..base.len() - 3 - 4].to_vec(),
    ));
    out.push(inv(
        "ST-TRN-003",
        "",
        "the last tensor's data one byte short",
        base[..base.len() - 1].to_vec(),
    ));
    out.push(inv(
        "ST-CMP-001",
        "",
        "a group head expecting 3 members followed by 2, then the end",
        stream_of(&group(3, 2)),
    ));
    out.push(inv(
        "TD-HDR-001",
        "",
        "two tensors, then 24 zero bytes where a descriptor would start",
        {
            let mut b = base.clone();
            b.extend_from_slice(&[0; 24]);
            b
        },
    ));
    out.push(inv(
        "TD-HDR-003",
        "",
        "the second descriptor's descriptor_length is 12",
        {
            let mut b = base.clone();
            put(
                &mut b,
                second + doff::DESCRIPTOR_LENGTH,
                &12u32.to_le_bytes(),
            );
            b
        },
    ));
    out.push(inv(
        "HF-CMP-002",
        "",
        "groups nested 9 deep, each with one member",
        {
            let mut items: Vec<Item> = (0..9)
                .map(|i| {
                    Item::patterned(
                        &format!("h{i}"),
                        composite_head(ElementType::Float32, &[2], 3, 0, 1),
                    )
                })
                .collect();
            items.push(Item::patterned("leaf", f32d(&[2])));
            stream_of(&items)
        },
    ));
    for &(rule, description) in FROM_FILES {
        let path = format!("invalid/{rule}.hrry");
        let case = files
            .iter()
            .find(|c| c.path == path)
            .unwrap_or_else(|| panic!("corpus case {path} to stream"));
        out.push(inv(
            rule,
            "",
            &format!("{description} (corpus/{path}'s tensors as a stream)"),
            stream_of_file(&case.bytes),
        ));
    }
    out.push(inv(
        "TD-TYP-001",
        "",
        "the second tensor's type_tag is 0x00",
        {
            let mut b = base.clone();
            put(&mut b, second + doff::TYPE_TAG, &[0]);
            b
        },
    ));
    out.push(inv(
        "HF-CMP-004",
        "",
        "a group member carrying a composite member section",
        {
            let mut items = group(1, 1);
            let d = &mut items[1].descriptor;
            d.composite_member = Some(CompositeMember::default());
            d.sync_sections();
            stream_of(&items)
        },
    ));
    out
}

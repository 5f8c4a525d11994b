//! Corpus cases for the container and the descriptor (rules `HF-…` and `TD-…`).

use hrry::file::WriterOptions;
use hrry::model::build::{composite_head, dense, descriptor};
use hrry::model::{ElementType, BUILTIN_TYPES};
use hrry::schema::{
    container::trailer_offsets as to, descriptor_offsets as doff, CompositeMember, ExtensionType,
    KvArray, KvScalar, KvValue, LayoutFields, LenBytes, QuantizationSection, ShardSection,
    Statistics, TensorDescriptor, LAYOUT_COLUMN_MAJOR, LAYOUT_ROW_MAJOR,
};

use super::patch::{self, put, Item};
use super::{Case, Format};

const F: Format = Format::HrryFile;

fn f32d(shape: &[u64]) -> TensorDescriptor {
    dense(ElementType::Float32, shape).expect("dense float32")
}

fn s(text: &str) -> KvValue {
    KvValue::String(LenBytes {
        bytes: text.as_bytes().to_vec(),
    })
}

fn base_items() -> Vec<Item> {
    vec![
        Item::patterned("weights", f32d(&[2, 3])),
        Item::patterned("bias", dense(ElementType::Int8, &[3]).expect("int8")),
    ]
}

fn base_kv() -> Vec<(&'static str, KvValue)> {
    vec![
        ("producer", s("hrry corpus")),
        ("layers", KvValue::Int64(2)),
    ]
}

fn opts() -> WriterOptions {
    WriterOptions::default()
}

fn unchecked() -> WriterOptions {
    WriterOptions {
        unchecked: true,
        ..WriterOptions::default()
    }
}

fn base() -> Vec<u8> {
    patch::write(opts(), &base_kv(), &base_items())
}

fn no_tensors(options: WriterOptions) -> Vec<u8> {
    patch::write(options, &[], &[])
}

/// A one-tensor file whose only tensor is `d`.
fn single(d: TensorDescriptor) -> Vec<u8> {
    patch::write(unchecked(), &[], &[Item::patterned("t", d)])
}

/// A file holding `items` written unchecked.
fn items(list: Vec<Item>) -> Vec<u8> {
    patch::write(unchecked(), &[], &list)
}

fn with<T>(mut value: T, edit: impl FnOnce(&mut T)) -> T {
    edit(&mut value);
    value
}

/// Patches the descriptor of tensor `name` at `rel` (relative to its start).
fn patch_desc(mut bytes: Vec<u8>, name: &str, rel: u64, data: &[u8]) -> Vec<u8> {
    let at = patch::descriptor_offset(&bytes, name);
    put(&mut bytes, at + rel, data);
    bytes
}

fn member(shape: &[u64], parent: &[u64], offset: &[u64]) -> TensorDescriptor {
    with(f32d(shape), |d| {
        d.shard = Some(ShardSection {
            parent_shape: parent.to_vec(),
            shard_offset: offset.to_vec(),
        });
        d.sync_sections();
    })
}

fn overlay_member(role: u8, reserved: u8) -> TensorDescriptor {
    with(member(&[2, 2], &[2, 2], &[0, 0]), |d| {
        let mut m = CompositeMember {
            member_role: role,
            ..Default::default()
        };
        m.reserved[0] = reserved;
        d.composite_member = Some(m);
        d.sync_sections();
    })
}

fn stats() -> Statistics {
    Statistics {
        computed_mask: Statistics::DEFINED_MASK,
        nnz: 6,
        sparsity_ratio: 0.0,
        value_min: -1.0,
        value_max: 2.0,
        value_abs_max: 2.0,
        value_mean: 0.5,
        value_stddev: 1.0,
        nm_n: 2,
        nm_m: 4,
        ..Default::default()
    }
}

fn with_stats(edit: impl FnOnce(&mut Statistics)) -> TensorDescriptor {
    with(f32d(&[2, 3]), |d| {
        d.statistics = Some(with(stats(), edit));
        d.sync_sections();
    })
}

fn ext_type() -> ExtensionType {
    ExtensionType {
        bit_width: 8,
        packing_factor: 1,
        is_float: 1,
        sign_bits: 1,
        exponent_bits: 4,
        mantissa_bits: 3,
        exponent_bias: 7,
        has_nan: 1,
        ..Default::default()
    }
}

fn ext_tensor(edit: impl FnOnce(&mut ExtensionType)) -> TensorDescriptor {
    with(
        descriptor(0xF0, LAYOUT_ROW_MAJOR, &[4], LayoutFields::Implicit, &[4]),
        |d| {
            d.extension_type = Some(with(ext_type(), edit));
            d.sync_sections();
        },
    )
}

fn head(rule: u8, combine: u8, count: u32, shape: &[u64]) -> Item {
    Item::patterned(
        "head",
        composite_head(ElementType::Float32, shape, rule, combine, count),
    )
}

fn partition() -> Vec<Item> {
    vec![
        head(1, 0, 2, &[4, 2]),
        Item::patterned("part0", member(&[2, 2], &[4, 2], &[0, 0])),
        Item::patterned("part1", member(&[2, 2], &[4, 2], &[2, 0])),
    ]
}

fn group(count: u32, members: usize) -> Vec<Item> {
    let mut v = vec![head(3, 0, count, &[2])];
    for i in 0..members {
        v.push(Item::patterned(&format!("g{i}"), f32d(&[2])));
    }
    v
}

/// A one-tensor file of a float8_e8m0 vector holding `codes`.
fn e8m0(codes: &[u8]) -> Vec<u8> {
    let n = codes.len() as u64;
    let d = descriptor(0x42, LAYOUT_ROW_MAJOR, &[n], LayoutFields::Implicit, &[n]);
    items(vec![Item {
        name: "t".into(),
        descriptor: d,
        buffers: vec![codes.to_vec()],
    }])
}

/// Tensors whose buffer handles use what buffer-protocol.md allows beyond CPU
/// defaults: device memory classes, sync modes, an empty buffer aligned to 1, a
/// stronger declared alignment.
fn buffer_protocol() -> Vec<Item> {
    let handle = |name: &str, edit: fn(&mut hrry::schema::BufferHandle)| {
        Item::patterned(name, with(f32d(&[2]), |d| edit(&mut d.buffers[0])))
    };
    vec![
        handle("cuda_peer_event", |b| {
            b.device_tag = 0x01;
            b.memory_class = 0x03;
            b.sync_mode = 0x01;
        }),
        handle("metal_unified_stream", |b| {
            b.device_tag = 0x03;
            b.memory_class = 0x02;
            b.sync_mode = 0x02;
        }),
        handle("cpu_pinned", |b| b.memory_class = 0x01),
        handle("page_aligned", |b| b.alignment = 4096),
        Item::patterned(
            "empty_align_1",
            with(f32d(&[0]), |d| d.buffers[0].alignment = 1),
        ),
    ]
}

/// `bytes` with `container_version_minor` set to `minor` and non-zero bytes in
/// every header and trailer byte 1.0 reserves (the index CRC still matches). Flag
/// bits are left alone: an unknown one is rejected at every minor version.
fn newer_minor_fields(mut bytes: Vec<u8>, minor: u8) -> Vec<u8> {
    bytes[9] = minor;
    bytes[10..12].copy_from_slice(&[0x11, 0x12]);
    bytes[36..64].fill(0x5A);
    let ta = bytes.len() - 40;
    let at = ta + to::RESERVED as usize;
    bytes[at..at + 4].copy_from_slice(&[1, 2, 3, 4]);
    bytes
}

/// KV values at the edges of their types, for readers comparing metadata exactly.
fn kv_extremes() -> Vec<(&'static str, KvValue)> {
    let text = |t: &str| LenBytes {
        bytes: t.as_bytes().to_vec(),
    };
    let array = |element_tag: u8, elements: Vec<KvScalar>| {
        KvValue::Array(KvArray::new(element_tag, elements))
    };
    vec![
        ("int64.min", KvValue::Int64(i64::MIN)),
        ("int64.max", KvValue::Int64(i64::MAX)),
        ("uint64.max", KvValue::Uint64(u64::MAX)),
        ("float64.tiny", KvValue::Float64(-1.5e-300)),
        ("float64.third", KvValue::Float64(1.0 / 3.0)),
        ("string.non_ascii", s("größe · 大小 · ✓")),
        ("clé.non_ascii", s("")),
        ("string.empty", s("")),
        (
            "array.string",
            array(
                0x01,
                vec![KvScalar::String(text("é")), KvScalar::String(text(""))],
            ),
        ),
        (
            "array.int64",
            array(
                0x02,
                vec![KvScalar::Int64(i64::MIN), KvScalar::Int64(i64::MAX)],
            ),
        ),
        (
            "array.uint64",
            array(0x03, vec![KvScalar::Uint64(u64::MAX), KvScalar::Uint64(0)]),
        ),
        (
            "array.float64",
            array(
                0x04,
                vec![KvScalar::Float64(-1.5e-300), KvScalar::Float64(1e300)],
            ),
        ),
        (
            "array.bool",
            array(0x05, vec![KvScalar::Bool(0), KvScalar::Bool(1)]),
        ),
        (
            "array.bytes",
            array(
                0x06,
                vec![
                    KvScalar::Bytes(text("")),
                    KvScalar::Bytes(LenBytes { bytes: vec![0xFF] }),
                ],
            ),
        ),
        ("array.empty", array(0x02, Vec::new())),
    ]
}

fn valid_cases() -> Vec<Case> {
    let mut all_types = Vec::new();
    for t in BUILTIN_TYPES {
        all_types.push(Item::patterned(t.name(), dense(t, &[5]).expect("dense")));
    }
    let kv_all = vec![
        ("string", s("text")),
        ("int64", KvValue::Int64(-7)),
        ("uint64", KvValue::Uint64(u64::MAX)),
        ("float64", KvValue::Float64(0.25)),
        ("bool", KvValue::Bool(1)),
        (
            "bytes",
            KvValue::Bytes(LenBytes {
                bytes: vec![0, 1, 255],
            }),
        ),
        (
            "array",
            KvValue::Array(KvArray::new(
                0x02,
                vec![KvScalar::Int64(1), KvScalar::Int64(-2)],
            )),
        ),
        (
            "strings",
            KvValue::Array(KvArray::new(
                0x01,
                vec![KvScalar::String(LenBytes {
                    bytes: b"a".to_vec(),
                })],
            )),
        ),
    ];
    let mut sections = with(f32d(&[2, 3]), |d| {
        d.shard = Some(ShardSection {
            parent_shape: vec![4, 3],
            shard_offset: vec![2, 0],
        });
        d.statistics = Some(stats());
        d.sync_sections();
    });
    sections.fix_length();
    let mut nested = vec![head(3, 0, 2, &[2])];
    nested.push(Item::patterned(
        "inner",
        composite_head(ElementType::Float32, &[2], 3, 0, 1),
    ));
    nested.push(Item::patterned("leaf", f32d(&[2])));
    nested.push(Item::patterned("last", f32d(&[2])));
    let overlay = vec![
        head(2, 2, 2, &[2, 2]),
        Item::patterned("base", overlay_member(1, 0)),
        Item::patterned("correction", overlay_member(0, 0)),
    ];
    let minor = with(f32d(&[2]), |d| {
        d.version_minor = 1;
        d.trailing = vec![0xAB; 8];
        d.fix_length();
    });
    let scalars = vec![
        Item::patterned("scalar", f32d(&[])),
        Item::patterned("empty", f32d(&[0, 4])),
        Item::patterned(
            "column_major",
            descriptor(
                0x03,
                LAYOUT_COLUMN_MAJOR,
                &[2, 3],
                LayoutFields::Implicit,
                &[24],
            ),
        ),
    ];
    let names: Vec<Item> = ["zeta", "alpha", "mu", "beta"]
        .iter()
        .map(|n| Item::patterned(n, f32d(&[1])))
        .collect();
    vec![
        Case::valid(
            F,
            "basic.hrry",
            "two dense tensors and string/int64 KV, CRC on",
            base(),
        ),
        Case::valid(F, "empty.hrry", "no tensors, no KV", no_tensors(opts())),
        Case::valid(
            F,
            "sorted_index.hrry",
            "SORTED_INDEX with names written out of order",
            patch::write(
                WriterOptions {
                    sorted_index: true,
                    ..opts()
                },
                &[],
                &names,
            ),
        ),
        Case::valid(
            F,
            "no_crc.hrry",
            "HAS_INDEX_CRC32C clear, index_crc32c zero",
            patch::write(
                WriterOptions {
                    index_crc32c: false,
                    ..opts()
                },
                &base_kv(),
                &base_items(),
            ),
        ),
        Case::valid(
            F,
            "all_element_types.hrry",
            "one [5] tensor of every built-in element type (sub-byte packing included)",
            patch::write(opts(), &[], &all_types),
        ),
        Case::valid(
            F,
            "kv_all_types.hrry",
            "KV values of every type, arrays included",
            patch::write(opts(), &kv_all, &[Item::patterned("x", f32d(&[1]))]),
        ),
        Case::valid(
            F,
            "container_minor_1.hrry",
            "container_version_minor 1 with non-zero bytes where 1.0 reserves them (header \
             bytes 10-11 and 36-63, the trailer's reserved bytes): fields of a newer minor \
             version, not judged (versioning.md)",
            newer_minor_fields(base(), 1),
        ),
        Case::valid(
            F,
            "kv_extremes.hrry",
            "KV values at the edges: int64 minimum and maximum, uint64 maximum, float64 \
             -1.5e-300, non-ASCII strings and keys, empty strings, an array of each \
             element type and an empty array",
            patch::write(opts(), &kv_extremes(), &[Item::patterned("x", f32d(&[1]))]),
        ),
        Case::valid(
            F,
            "scalar_empty_column_major.hrry",
            "a rank-0 scalar, an empty [0, 4] tensor and a column-major tensor",
            patch::write(opts(), &[], &scalars),
        ),
        Case::valid(
            F,
            "shard_statistics.hrry",
            "a shard with statistics",
            patch::write(opts(), &[], &[Item::patterned("shard", sections)]),
        ),
        Case::valid(
            F,
            "buffer_protocol.hrry",
            "buffer handles with CUDA/PEER/SYNC_EVENT, Metal/UNIFIED/SYNC_CONSUMER_STREAM, CPU/HOST_PINNED, alignment 4096, and an empty buffer aligned to 1",
            items(buffer_protocol()),
        ),
        Case::valid(
            F,
            "extension_type.hrry",
            "a private element type 0xF0 with its extension type section",
            patch::write(opts(), &[], &[Item::patterned("ext", ext_tensor(|_| {}))]),
        ),
        Case::valid(
            F,
            "composite_partition.hrry",
            "a partition composite: head and two shard members",
            patch::write(opts(), &[], &partition()),
        ),
        Case::valid(
            F,
            "composite_nested_group.hrry",
            "a group composite nesting another group",
            patch::write(opts(), &[], &nested),
        ),
        Case::valid(
            F,
            "composite_overlay.hrry",
            "an overlay composite: base and one correction with member sections",
            patch::write(opts(), &[], &overlay),
        ),
        Case::valid(
            F,
            "tail_padding_to_alignment.hrry",
            "padding after each tensor's last buffer runs to data_buffer_alignment (accepted)",
            patch::write(
                WriterOptions {
                    pad_last_buffer_to_alignment: true,
                    ..opts()
                },
                &base_kv(),
                &base_items(),
            ),
        ),
        Case::valid(
            F,
            "alignment_8192_offset_128.hrry",
            "data_buffer_alignment 8192 and first_descriptor_offset 128",
            patch::write(
                WriterOptions {
                    data_buffer_alignment: 8192,
                    first_descriptor_offset: 128,
                    tensor_count_hint: Some(2),
                    ..opts()
                },
                &base_kv(),
                &base_items(),
            ),
        ),
        Case::valid(
            F,
            "minor_version_growth.hrry",
            "a 1.1 descriptor with 8 bytes after the known fields (skipped)",
            patch::write(opts(), &[], &[Item::patterned("grown", minor)]),
        ),
    ]
}

/// Every container and descriptor case.
pub fn cases() -> Vec<Case> {
    let mut out = valid_cases();
    out.extend(header_cases());
    out.extend(trailer_cases());
    out.extend(index_cases());
    out.extend(kv_cases());
    out.extend(placement_cases());
    out.extend(composite_cases());
    out.extend(descriptor_cases());
    out
}

fn header_cases() -> Vec<Case> {
    let inv = |rule, what: &str, bytes| Case::invalid(F, rule, "", what, bytes);
    let b = base();
    let mut short = b"HRRYFILE".to_vec();
    short.resize(60, 0);
    vec![
        inv(
            "HF-FIL-001",
            "60 bytes: too short for header and trailer",
            short,
        ),
        inv(
            "HF-HDR-001",
            "magic HRRYFILX",
            with(b.clone(), |x| x[7] = b'X'),
        ),
        inv(
            "HF-HDR-002",
            "container_version_major 2",
            with(b.clone(), |x| x[8] = 2),
        ),
        inv(
            "HF-HDR-003",
            "reserved header byte 10 set",
            with(b.clone(), |x| x[10] = 1),
        ),
        inv(
            "HF-HDR-004",
            "reserved header byte 40 set",
            with(b.clone(), |x| x[40] = 1),
        ),
        Case::invalid(
            F,
            "HF-HDR-004",
            "minor-0",
            "container_version_minor 0 with reserved header bytes 36-63 set (the same \
             bytes a 1.1 file may use are reserved in 1.0)",
            with(b.clone(), |x| x[36..64].fill(0x5A)),
        ),
        inv(
            "HF-HDR-005",
            "reserved file flag bit 3 set",
            with(b.clone(), |x| x[12] |= 0x08),
        ),
        Case::invalid(
            F,
            "HF-HDR-005",
            "minor-1",
            "container_version_minor 1 with file flag bit 3 set: an unknown flag bit is \
             rejected at every minor version (versioning.md § Compatibility Matrix)",
            with(b.clone(), |x| {
                x[9] = 1;
                x[12] |= 0x08;
            }),
        ),
        inv(
            "HF-HDR-006",
            "data_buffer_alignment 4100 (no tensors)",
            with(no_tensors(opts()), |x| put(x, 16, &4100u32.to_le_bytes())),
        ),
        inv(
            "HF-HDR-007",
            "data_buffer_alignment 2048",
            patch::write(
                WriterOptions {
                    data_buffer_alignment: 2048,
                    ..unchecked()
                },
                &[],
                &base_items(),
            ),
        ),
        inv(
            "HF-HDR-008",
            "data_buffer_alignment 4 MiB (no tensors)",
            no_tensors(WriterOptions {
                data_buffer_alignment: 4 << 20,
                ..unchecked()
            }),
        ),
        inv(
            "HF-HDR-009",
            "first_descriptor_offset 56",
            with(b.clone(), |x| put(x, 20, &56u64.to_le_bytes())),
        ),
        inv(
            "HF-HDR-010",
            "first_descriptor_offset 68",
            patch::write(
                WriterOptions {
                    first_descriptor_offset: 68,
                    ..unchecked()
                },
                &[],
                &[Item::patterned("t", f32d(&[2]))],
            ),
        ),
    ]
}

fn trailer_cases() -> Vec<Case> {
    let inv = |rule, what: &str, bytes| Case::invalid(F, rule, "", what, bytes);
    let b = base();
    let t = patch::trailer(&b);
    let ta = patch::trailer_at(&b);
    let empty = no_tensors(opts());
    let misaligned_index = patch::insert_after_tensors(&empty, 64, 4);
    let kv_only = patch::write(opts(), &base_kv(), &[]);
    let misaligned_kv = {
        // Header, 4 zero bytes, the KV section at 68, padding to 8, index, trailer.
        let t = patch::trailer(&kv_only);
        let kv = &kv_only[t.kv_offset as usize..(t.kv_offset + u64::from(t.kv_length)) as usize];
        let index = &kv_only[t.index_offset as usize..patch::trailer_at(&kv_only) as usize];
        let mut v = kv_only[..64].to_vec();
        v.extend_from_slice(&[0; 4]);
        v.extend_from_slice(kv);
        while !v.len().is_multiple_of(8) {
            v.push(0);
        }
        let mut t2 = t.clone();
        t2.kv_offset = 68;
        t2.index_offset = v.len() as u64;
        v.extend_from_slice(index);
        v.extend_from_slice(&hrry::schema::to_bytes(&t2));
        v
    };
    let no_kv = patch::write(opts(), &[], &base_items());
    vec![
        inv(
            "HF-TRL-001",
            "last byte of the trailer magic changed (as in a truncated file)",
            with(b.clone(), |x| *x.last_mut().expect("byte") = b'Z'),
        ),
        inv(
            "HF-TRL-002",
            "trailer reserved byte set",
            with(b.clone(), |x| x[(ta + to::RESERVED) as usize] = 1),
        ),
        inv(
            "HF-TRL-003",
            "index_length runs into the trailer",
            with(b.clone(), |x| {
                put(
                    x,
                    ta + to::INDEX_LENGTH,
                    &(t.index_length + 16).to_le_bytes(),
                )
            }),
        ),
        inv(
            "HF-TRL-004",
            "index at offset 68 (not 8-aligned), no tensors",
            misaligned_index,
        ),
        inv(
            "HF-TRL-005",
            "KV section at offset 68 (not 8-aligned)",
            misaligned_kv,
        ),
        inv(
            "HF-TRL-006",
            "kv_length runs into the index",
            with(b.clone(), |x| {
                put(x, ta + to::KV_LENGTH, &(t.kv_length + 8).to_le_bytes())
            }),
        ),
        inv(
            "HF-TRL-007",
            "HAS_KV_METADATA set without a KV section",
            with(no_kv.clone(), |x| x[12] |= 0x01),
        ),
        inv(
            "HF-TRL-008",
            "kv_offset set with kv_length 0",
            with(no_kv.clone(), |x| {
                let t = patch::trailer(x);
                let at = patch::trailer_at(x);
                put(x, at + to::KV_OFFSET, &t.index_offset.to_le_bytes());
            }),
        ),
        inv(
            "HF-CRC-001",
            "index_crc32c off by one bit",
            with(b.clone(), |x| x[(ta + to::INDEX_CRC32C) as usize] ^= 1),
        ),
        inv(
            "HF-CRC-002",
            "HAS_INDEX_CRC32C clear but index_crc32c non-zero",
            with(
                patch::write(
                    WriterOptions {
                        index_crc32c: false,
                        ..opts()
                    },
                    &base_kv(),
                    &base_items(),
                ),
                |x| {
                    let at = patch::trailer_at(x);
                    put(x, at + to::INDEX_CRC32C, &1u32.to_le_bytes());
                },
            ),
        ),
        inv(
            "HF-PLC-006",
            "8 unaccounted bytes between the index and the trailer",
            {
                let mut v = b[..ta as usize].to_vec();
                v.extend_from_slice(&[0; 8]);
                v.extend_from_slice(&b[ta as usize..]);
                v
            },
        ),
    ]
}

fn index_cases() -> Vec<Case> {
    let inv = |rule, what: &str, bytes| Case::invalid(F, rule, "", what, bytes);
    let b = base();
    let ix = |edit: &dyn Fn(&mut Vec<hrry::schema::IndexEntry>)| patch::edit_index(&b, edit, &[]);
    let t = patch::trailer(&b);
    let unsorted = patch::write(
        opts(),
        &[],
        &[
            Item::patterned("b", f32d(&[1])),
            Item::patterned("a", f32d(&[1])),
        ],
    );
    vec![
        inv(
            "HF-IDX-001",
            "index_entry_count 1000 with two entries' bytes",
            with(b.clone(), |x| {
                put(x, t.index_offset, &1000u64.to_le_bytes());
                patch::fix_crc(x);
            }),
        ),
        inv(
            "HF-IDX-002",
            "a tensor with an empty name",
            items(vec![Item::patterned("", f32d(&[1]))]),
        ),
        inv(
            "HF-IDX-003",
            "a name that is not UTF-8",
            with(b.clone(), |x| {
                let (at, _) = patch::index_entries(x)[1];
                x[at as usize + 2] = 0xFF;
                patch::fix_crc(x);
            }),
        ),
        inv(
            "HF-IDX-004",
            "two tensors named the same",
            items(vec![
                Item::patterned("w", f32d(&[1])),
                Item::patterned("w", f32d(&[1])),
            ]),
        ),
        inv(
            "HF-TXT-001",
            "a tensor name holding the terminal sequence ESC [2J (clear screen)",
            items(vec![Item::patterned("w\x1b[2J", f32d(&[1]))]),
        ),
        inv(
            "HF-IDX-005",
            "index entry flags non-zero",
            ix(&|e| e[0].flags = 1),
        ),
        inv(
            "HF-IDX-006",
            "SORTED_INDEX set on an unsorted index",
            with(unsorted, |x| x[12] |= 0x02),
        ),
        inv(
            "HF-IDX-007",
            "the index omits one tensor",
            ix(&|e| {
                e.pop();
            }),
        ),
        inv(
            "HF-IDX-008",
            "8 bytes after the last index entry",
            patch::edit_index(&b, |_| {}, &[0; 8]),
        ),
        inv(
            "HF-IDX-009",
            "descriptor_length 8 more than the descriptor's",
            ix(&|e| e[0].descriptor_length += 8),
        ),
        inv(
            "HF-IDX-010",
            "data_offset one alignment unit late",
            ix(&|e| e[0].data_offset += 4096),
        ),
        inv(
            "HF-IDX-011",
            "data_length one byte long",
            ix(&|e| e[1].data_length += 1),
        ),
        inv(
            "HF-IDX-012",
            "descriptor_offset pointing 8 bytes into a descriptor",
            ix(&|e| e[1].descriptor_offset += 8),
        ),
        inv(
            "HF-PLC-002",
            "data_offset not a multiple of data_buffer_alignment",
            ix(&|e| e[0].data_offset += 8),
        ),
        inv(
            "HF-LIM-001",
            "index_entry_count 2^40",
            with(b.clone(), |x| {
                put(x, t.index_offset, &(1u64 << 40).to_le_bytes());
                patch::fix_crc(x);
            }),
        ),
    ]
}

fn kv_bytes(kv: &[(&str, KvValue)]) -> Vec<u8> {
    patch::write(unchecked(), kv, &[Item::patterned("x", f32d(&[1]))])
}

/// Offset of the first KV entry's value tag.
fn first_tag_at(bytes: &[u8]) -> u64 {
    let t = patch::trailer(bytes);
    let key_len = u16::from_le_bytes([
        bytes[t.kv_offset as usize + 4],
        bytes[t.kv_offset as usize + 5],
    ]);
    t.kv_offset + 4 + 2 + u64::from(key_len)
}

fn kv_cases() -> Vec<Case> {
    let inv = |rule, what: &str, bytes| Case::invalid(F, rule, "", what, bytes);
    let one = kv_bytes(&[("k", KvValue::Int64(1))]);
    let array = kv_bytes(&[(
        "k",
        KvValue::Array(KvArray::new(2, vec![KvScalar::Int64(1)])),
    )]);
    // "abcdef" + tag + int64 = 4 + 2 + 6 + 1 + 8 = 21 bytes: 3 bytes of padding follow.
    let padded = kv_bytes(&[("abcdef", KvValue::Int64(1))]);
    let t = patch::trailer(&padded);
    assert_ne!(t.kv_length % 8, 0, "generator: KV must need padding");
    vec![
        inv(
            "HF-KV-001",
            "kv_count 2 with one entry",
            with(one.clone(), |x| {
                let t = patch::trailer(x);
                put(x, t.kv_offset, &2u32.to_le_bytes());
            }),
        ),
        inv(
            "HF-KV-002",
            "an empty key",
            kv_bytes(&[("", KvValue::Int64(1))]),
        ),
        inv(
            "HF-KV-003",
            "a key that is not UTF-8",
            with(one.clone(), |x| {
                let t = patch::trailer(x);
                x[t.kv_offset as usize + 6] = 0xFE;
            }),
        ),
        inv(
            "HF-KV-004",
            "the same key twice",
            kv_bytes(&[("k", KvValue::Int64(1)), ("k", KvValue::Int64(2))]),
        ),
        inv(
            "HF-KV-005",
            "bool value 2",
            kv_bytes(&[("k", KvValue::Bool(2))]),
        ),
        inv(
            "HF-KV-006",
            "reserved value tag 0x08",
            with(one.clone(), |x| {
                let at = first_tag_at(x);
                x[at as usize] = 0x08;
            }),
        ),
        inv(
            "HF-KV-007",
            "array element tag 0x09",
            with(array, |x| {
                let at = first_tag_at(x);
                x[at as usize + 1] = 0x09;
            }),
        ),
        Case::invalid(
            F,
            "HF-KV-007",
            "empty",
            "an empty array with element tag 0x00",
            kv_bytes(&[("k", KvValue::Array(KvArray::new(0x00, vec![])))]),
        ),
        inv(
            "HF-KV-008",
            "string value not UTF-8",
            kv_bytes(&[(
                "k",
                KvValue::String(LenBytes {
                    bytes: vec![0xC3, 0x28],
                }),
            )]),
        ),
        inv(
            "HF-KV-009",
            "private value tag 0xF0",
            with(one, |x| {
                let at = first_tag_at(x);
                x[at as usize] = 0xF0;
            }),
        ),
        inv(
            "HF-KV-010",
            "kv_length covers 3 padding bytes after the last entry",
            with(padded, |x| {
                let t = patch::trailer(x);
                let at = patch::trailer_at(x);
                put(x, at + to::KV_LENGTH, &(t.kv_length + 3).to_le_bytes());
            }),
        ),
    ]
}

fn placement_cases() -> Vec<Case> {
    let inv = |rule, what: &str, bytes| Case::invalid(F, rule, "", what, bytes);
    let b = base();
    let t = patch::trailer(&b);
    let kv_end = t.kv_offset + u64::from(t.kv_length);
    let w = patch::descriptor_offset(&b, "weights");
    let bias = patch::descriptor_offset(&b, "bias");
    let empty = no_tensors(opts());
    let first_128 = with(empty, |x| put(x, 20, &128u64.to_le_bytes()));
    vec![
        inv(
            "HF-PLC-003",
            "a padding byte after a descriptor is 0x01",
            with(b.clone(), |x| x[(w + 100) as usize] = 1),
        ),
        inv(
            "HF-PLC-011",
            "a buffer declaring alignment 8192 at file offset 4096",
            single(with(f32d(&[2]), |d| d.buffers[0].alignment = 8192)),
        ),
        inv(
            "HF-PLC-005",
            "16 unaccounted zero bytes between the last tensor and the KV section",
            patch::insert_after_tensors(&b, t.kv_offset, 16),
        ),
        inv(
            "HF-PLC-007",
            "first_descriptor_offset 128 past the end of an empty region",
            first_128,
        ),
        inv(
            "HF-PLC-008",
            "the last tensor's shape [100000] and byte_size 100000 run into the KV section",
            with(b.clone(), |x| {
                let desc: TensorDescriptor = hrry::schema::read_from(&x[bias as usize..])
                    .expect("desc")
                    .0;
                // The shape grows with the buffer, so that the buffer is not also
                // larger than its elements need (TD-BUF-014).
                put(x, bias + doff::SHAPE, &100_000u64.to_le_bytes());
                put(x, bias + desc.buffer_pos(0), &100_000u64.to_le_bytes());
            }),
        ),
        inv(
            "HF-PLC-009",
            "the second descriptor moved 8 bytes past its boundary",
            {
                let mut x = b.clone();
                let len = patch::index_entries(&x)[1].1.descriptor_length as usize;
                let at = bias as usize;
                let moved = x[at..at + len].to_vec();
                x[at..at + 8].fill(0);
                x[at + 8..at + 8 + len].copy_from_slice(&moved);
                patch::edit_index(&x, |e| e[1].descriptor_offset += 8, &[])
            },
        ),
        inv(
            "HF-PLC-010",
            "8 unaccounted bytes between the KV section and the index",
            patch::insert_after_tensors(&b, t.index_offset.max(kv_end), 8),
        ),
    ]
}

fn composite_cases() -> Vec<Case> {
    let inv = |rule, what: &str, bytes| Case::invalid(F, rule, "", what, bytes);
    let mut deep = Vec::new();
    for i in 0..9 {
        deep.push(Item::patterned(
            &format!("h{i}"),
            composite_head(ElementType::Float32, &[2], 3, 0, 1),
        ));
    }
    deep.push(Item::patterned("leaf", f32d(&[2])));
    let with_section = with(f32d(&[2]), |d| {
        d.composite_member = Some(CompositeMember::default());
        d.sync_sections();
    });
    let mut grp = group(2, 1);
    grp.push(Item::patterned("g1", with_section));
    let grp_ok = patch::write(opts(), &[], &group(2, 2));
    vec![
        inv(
            "HF-CMP-001",
            "a group head expecting 3 members followed by 2",
            items(group(3, 2)),
        ),
        inv("HF-CMP-002", "groups nested 9 deep", items(deep)),
        inv(
            "HF-CMP-003",
            "a composite head's index entry with data_length 1",
            patch::edit_index(&grp_ok, |e| e[0].data_length = 1, &[]),
        ),
        inv(
            "HF-CMP-004",
            "a group member carrying a composite member section",
            items(grp),
        ),
        inv(
            "HF-PLC-004",
            "alignment padding after a composite head",
            patch::write(
                WriterOptions {
                    pad_after_composite_heads: true,
                    ..opts()
                },
                &[],
                &group(2, 2),
            ),
        ),
    ]
}

fn descriptor_cases() -> Vec<Case> {
    let inv = |rule, what: &str, bytes| Case::invalid(F, rule, "", what, bytes);
    let one = || single(f32d(&[2, 3]));
    let quant_short = with(f32d(&[2, 3]), |d| {
        d.quantization = Some(QuantizationSection::from_bytes(vec![3, 1]));
        d.sync_sections();
    });
    vec![
        inv(
            "TD-HDR-001",
            "descriptor magic HRRX",
            patch_desc(one(), "t", 3, b"X"),
        ),
        inv(
            "TD-HDR-002",
            "descriptor version_major 2",
            patch_desc(one(), "t", doff::VERSION_MAJOR, &[2]),
        ),
        inv(
            "TD-HDR-003",
            "descriptor_length 12",
            patch_desc(one(), "t", doff::DESCRIPTOR_LENGTH, &12u32.to_le_bytes()),
        ),
        inv(
            "TD-HDR-004",
            "descriptor_length 40 cuts the buffer table",
            patch_desc(one(), "t", doff::DESCRIPTOR_LENGTH, &40u32.to_le_bytes()),
        ),
        inv(
            "TD-HDR-005",
            "reserved descriptor flag bit 7",
            patch_desc(one(), "t", doff::FLAGS, &[0x80]),
        ),
        Case::invalid(
            F,
            "TD-HDR-005",
            "minor-1",
            "a version 1.1 descriptor with flag bit 7 set: an unknown flag bit is rejected \
             at every minor version (versioning.md § Compatibility Matrix)",
            patch_desc(
                patch_desc(one(), "t", doff::VERSION_MINOR, &[1]),
                "t",
                doff::FLAGS,
                &[0x80],
            ),
        ),
        inv(
            "TD-SHP-001",
            "rank 65",
            patch_desc(one(), "t", doff::RANK, &65u32.to_le_bytes()),
        ),
        inv(
            "TD-SHP-002",
            "dynamic dimension sentinel in a stored tensor",
            single(with(f32d(&[2]), |d| d.shape = vec![u64::MAX])),
        ),
        inv(
            "TD-TYP-001",
            "type_tag 0x47 (reserved)",
            patch_desc(one(), "t", doff::TYPE_TAG, &[0x47]),
        ),
        inv(
            "TD-LAY-001",
            "layout_tag 0x0C (unassigned)",
            patch_desc(one(), "t", doff::LAYOUT_TAG, &[0x0C]),
        ),
        inv(
            "TD-LAY-002",
            "a rank-0 tensor in column-major layout",
            single(descriptor(
                0x03,
                LAYOUT_COLUMN_MAJOR,
                &[],
                LayoutFields::Implicit,
                &[4],
            )),
        ),
        inv(
            "TD-LAY-003",
            "an unrecognised extension layout 0xF0",
            single(descriptor(
                0x11,
                0xF0,
                &[4],
                LayoutFields::Extension(hrry::schema::ExtensionLayoutFields {
                    extension_layout_id: 42,
                    extension_data: vec![1, 2],
                }),
                &[4],
            )),
        ),
        inv(
            "TD-BUF-001",
            "an unquantized row-major tensor with two buffers",
            single(descriptor(
                0x03,
                LAYOUT_ROW_MAJOR,
                &[2],
                LayoutFields::Implicit,
                &[8, 8],
            )),
        ),
        inv(
            "TD-BUF-002",
            "buffer alignment 32",
            single(with(f32d(&[2]), |d| d.buffers[0].alignment = 32)),
        ),
        Case::invalid(
            F,
            "TD-BUF-002",
            "empty",
            "an empty buffer with alignment 3 (not a power of two)",
            single(with(f32d(&[0]), |d| d.buffers[0].alignment = 3)),
        ),
        inv(
            "TD-BUF-003",
            "buffer handle reserved byte set",
            single(with(f32d(&[2]), |d| d.buffers[0].reserved = 1)),
        ),
        inv(
            "TD-BUF-007",
            "sync_mode 0x03 (reserved)",
            single(with(f32d(&[2]), |d| d.buffers[0].sync_mode = 3)),
        ),
        inv(
            "TD-BUF-008",
            "a CPU buffer with sync_mode 0x01 (SYNC_EVENT)",
            single(with(f32d(&[2]), |d| d.buffers[0].sync_mode = 1)),
        ),
        inv(
            "TD-BUF-009",
            "memory_class 0x04 (reserved)",
            single(with(f32d(&[2]), |d| d.buffers[0].memory_class = 4)),
        ),
        inv(
            "TD-BUF-010",
            "a CPU buffer with memory_class PEER (0x03)",
            single(with(f32d(&[2]), |d| d.buffers[0].memory_class = 3)),
        ),
        inv(
            "TD-BUF-011",
            "device_tag 0xFF (invalid)",
            single(with(f32d(&[2]), |d| d.buffers[0].device_tag = 0xFF)),
        ),
        inv(
            "TD-BUF-012",
            "device_tag 0xF0 (implementation-private)",
            single(with(f32d(&[2]), |d| d.buffers[0].device_tag = 0xF0)),
        ),
        inv(
            "TD-BUF-013",
            "a COO tensor whose indices buffer is on device 0x01, its values on 0x00",
            items(vec![{
                let (mut d, b) = hrry::layout::sparse::encode::coo(
                    0x03,
                    &[2, 2],
                    &[0, 0, 0x80, 0x3F, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x40],
                )
                .expect("coo");
                d.buffers[1].device_tag = 1;
                Item {
                    name: "t".into(),
                    descriptor: d,
                    buffers: b,
                }
            }]),
        ),
        inv(
            "TD-BUF-004",
            "byte_offset past the end of buffer 0",
            single(with(f32d(&[2]), |d| d.byte_offset = 9)),
        ),
        inv(
            "TD-BUF-005",
            "a [2, 3] float32 buffer of 20 bytes",
            single(with(f32d(&[2, 3]), |d| d.buffers[0].byte_size = 20)),
        ),
        Case::invalid(
            F,
            "TD-BUF-014",
            "metadata-worked-example",
            "metadata.md § Worked Example as a HRRYFILE: float32 [3, 4], row-major, one \
             CPU buffer of 192 bytes aligned to 64 (48 needed); valid per the spec, \
             refused only by the hardening rule on oversized buffers",
            items(vec![Item::patterned(
                "worked_example",
                with(f32d(&[3, 4]), |d| d.buffers[0].byte_size = 192),
            )]),
        )
        .spec_example("metadata.md § Worked Example"),
        inv(
            "TD-BUF-014",
            "a bool [2, 3, 4] tensor stored one byte per element (24 bytes of 0 and 1, \
             as upstream hurray.save writes a NumPy bool array) where packed bits need 3",
            items(vec![Item {
                name: "mask".into(),
                descriptor: with(dense(ElementType::Bool, &[2, 3, 4]).expect("dense"), |d| {
                    d.buffers[0].byte_size = 24
                }),
                buffers: vec![(0..24u8).map(|i| u8::from(i % 7 != 0)).collect()],
            }]),
        ),
        inv(
            "TD-BUF-006",
            "a [5] uint4 tensor whose final byte has 0x9 in its unused high nibble",
            items(vec![with(
                Item::patterned("t", dense(ElementType::Uint4, &[5]).expect("dense")),
                |item| item.buffers[0][2] |= 0x90,
            )]),
        ),
        inv(
            "TD-TYP-002",
            "a float8_e8m0 [4] tensor holding code 0x00",
            e8m0(&[0x7F, 0x00, 0x80, 0x81]),
        ),
        Case::invalid(
            F,
            "TD-TYP-002",
            "ff",
            "a float8_e8m0 [4] tensor holding code 0xFF",
            e8m0(&[0x7F, 0x70, 0x80, 0xFF]),
        ),
        Case::invalid(
            F,
            "TD-TYP-002",
            "coo",
            "a COO float8_e8m0 [2, 2] tensor storing code 0xFF",
            items(vec![{
                let (d, b) = hrry::layout::sparse::encode::coo(0x42, &[2, 2], &[0, 0x7F, 0xFF, 0])
                    .expect("coo");
                Item {
                    name: "t".into(),
                    descriptor: d,
                    buffers: b,
                }
            }]),
        ),
        inv(
            "TD-QNT-001",
            "a quantization section of 2 bytes",
            single(quant_short),
        ),
        inv(
            "TD-SHD-001",
            "shard_offset + shape exceeds parent_shape",
            single(member(&[2, 3], &[3, 3], &[2, 0])),
        ),
        inv(
            "TD-SHD-002",
            "parent_shape[0] is the dynamic sentinel 2^64-1",
            single(member(&[2, 3], &[u64::MAX, 3], &[0, 0])),
        ),
        inv(
            "TD-STA-001",
            "statistics computed_mask bit 6",
            single(with_stats(|s| s.computed_mask |= 1 << 6)),
        ),
        inv(
            "TD-STA-002",
            "statistics reserved field set",
            single(with_stats(|s| s.reserved = 1)),
        ),
        inv(
            "TD-STA-003",
            "sparsity_ratio 1.5",
            single(with_stats(|s| s.sparsity_ratio = 1.5)),
        ),
        inv(
            "TD-STA-004",
            "value_stddev -1",
            single(with_stats(|s| s.value_stddev = -1.0)),
        ),
        inv(
            "TD-STA-005",
            "nm_n 4 > nm_m 2",
            single(with_stats(|s| {
                s.nm_n = 4;
                s.nm_m = 2;
            })),
        ),
        inv(
            "TD-STA-006",
            "has_nan 2",
            single(with_stats(|s| s.has_nan = 2)),
        ),
        inv(
            "TD-EXT-001",
            "HAS_EXTENSION_TYPE on a float32 tensor",
            single(with(f32d(&[2]), |d| {
                d.extension_type = Some(ext_type());
                d.sync_sections();
            })),
        ),
        inv(
            "TD-EXT-002",
            "extension type bit_width 0",
            single(ext_tensor(|e| e.bit_width = 0)),
        ),
        inv(
            "TD-EXT-003",
            "extension type bit_width 3",
            single(ext_tensor(|e| {
                e.bit_width = 3;
                e.packing_factor = 2;
            })),
        ),
        inv(
            "TD-EXT-004",
            "an integer extension type with exponent bits",
            single(ext_tensor(|e| {
                e.is_float = 0;
                e.is_signed = 1;
                e.sign_bits = 0;
                e.exponent_bits = 4;
                e.mantissa_bits = 0;
                e.exponent_bias = 0;
            })),
        ),
        inv(
            "TD-EXT-005",
            "extension type reserved byte set",
            single(ext_tensor(|e| e.reserved2[0] = 1)),
        ),
        inv(
            "TD-MEM-001",
            "an overlay correction with member_role 2",
            items(vec![
                head(2, 2, 2, &[2, 2]),
                Item::patterned("base", overlay_member(1, 0)),
                Item::patterned("correction", overlay_member(2, 0)),
            ]),
        ),
        inv(
            "TD-MEM-002",
            "a member section with a reserved byte set",
            items(vec![
                head(2, 2, 2, &[2, 2]),
                Item::patterned("base", overlay_member(1, 0)),
                Item::patterned("correction", overlay_member(0, 1)),
            ]),
        ),
        inv(
            "TD-CMP-001",
            "composition_rule 0x04 (reserved)",
            items(vec![head(4, 0, 1, &[2]), Item::patterned("m", f32d(&[2]))]),
        ),
        inv(
            "TD-CMP-002",
            "a group head with combine_op 1",
            items(vec![head(3, 1, 1, &[2]), Item::patterned("m", f32d(&[2]))]),
        ),
        inv("TD-CMP-003", "composite head reserved byte set", {
            let mut h = composite_head(ElementType::Float32, &[2], 3, 0, 1);
            if let LayoutFields::Composite(c) = &mut h.layout {
                c.reserved[0] = 1;
            }
            items(vec![
                Item::patterned("head", h),
                Item::patterned("m", f32d(&[2])),
            ])
        }),
        inv(
            "TD-CMP-004",
            "member_count 0xFFFFFFFF (open composite)",
            items(vec![head(3, 0, u32::MAX, &[2])]),
        ),
        inv(
            "TD-CMP-006",
            "a group head with a per-tensor quantization section",
            {
                let h = with(composite_head(ElementType::Float32, &[2], 3, 0, 1), |d| {
                    d.quantization = Some(QuantizationSection::from_bytes(vec![
                        1, 1, 0, 0, 0, 0, 0x80, 0x3F, 0, 0, 0, 0, 0, 0, 0, 0,
                    ]));
                    d.sync_sections();
                });
                items(vec![
                    Item::patterned("head", h),
                    Item::patterned("m", f32d(&[2])),
                ])
            },
        ),
        inv("TD-CMP-005", "a composite head with byte_offset 8", {
            let h = with(composite_head(ElementType::Float32, &[2], 3, 0, 1), |d| {
                d.byte_offset = 8
            });
            items(vec![
                Item::patterned("head", h),
                Item::patterned("m", f32d(&[2])),
            ])
        }),
    ]
}

//! Requirements that one field decides: buffer handles per buffer-protocol.md,
//! quantization in every layout, element codes, composite heads, shard sections,
//! Hilbert buffers, empty KV arrays and per-tensor buffer counts. For each the
//! smallest file that breaks it and one that keeps it are built here, and both are
//! judged in strict and permissive mode: the valid file passes both; the broken one
//! reports exactly its rule in strict mode, and in permissive mode too when the
//! rule is a `spec` rule (never when it is `hardening`).

use hrry::file::{HrryWriter, WriterOptions};
use hrry::model::build::{composite_head, dense, descriptor};
use hrry::model::ElementType;
use hrry::schema::{
    BufferHandle, KvArray, KvValue, LayoutFields, PerBlockAffine, PerChannelAffine,
    QuantizationSection, ShardSection, TensorDescriptor, LAYOUT_HILBERT, LAYOUT_ROW_MAJOR,
    SCHEME_NF4,
};
use hrry::validate::{rule_by_id, Level, Options, Report, Rules};
use hrry::Format;
use hrry_testkit::corpus::quant_layouts::{self as ql, Quantized};

fn validate(bytes: &[u8], mode: Rules) -> Report {
    let options = Options {
        judging: mode.into(),
        ..Options::default()
    };
    Format::HrryFile.validate_bytes(bytes, &options)
}

/// Writes `tensors` (descriptor, buffers; handle sizes set to the buffers) and `kv`
/// with the writer's own checks off, so that broken files can be written.
fn write(kv: &[(&str, KvValue)], tensors: Vec<(TensorDescriptor, Vec<Vec<u8>>)>) -> Vec<u8> {
    write_with(WriterOptions::default(), kv, tensors)
}

fn write_with(
    options: WriterOptions,
    kv: &[(&str, KvValue)],
    tensors: Vec<(TensorDescriptor, Vec<Vec<u8>>)>,
) -> Vec<u8> {
    let options = WriterOptions {
        unchecked: true,
        ..options
    };
    let mut w = HrryWriter::new(Vec::new(), options).unwrap();
    for (k, v) in kv {
        w.add_kv(k, v.clone()).unwrap();
    }
    for (i, (mut d, b)) in tensors.into_iter().enumerate() {
        for (h, buf) in d.buffers.iter_mut().zip(&b) {
            h.byte_size = buf.len() as u64;
        }
        let slices: Vec<&[u8]> = b.iter().map(Vec::as_slice).collect();
        w.write_tensor(&format!("t{i}"), &d, &slices).unwrap();
    }
    w.finish().unwrap()
}

/// A float32 [2] tensor whose buffer handle `edit` changes.
fn f32_with(edit: impl FnOnce(&mut BufferHandle)) -> Vec<u8> {
    let mut d = dense(ElementType::Float32, &[2]).unwrap();
    edit(&mut d.buffers[0]);
    write(&[], vec![(d, vec![vec![0, 0, 0x80, 0x3F, 0, 0, 0, 0x40]])])
}

/// One requirement: a file that keeps it and the smallest edit that breaks it.
struct Item {
    what: &'static str,
    rule: &'static str,
    valid: Vec<u8>,
    broken: Vec<u8>,
}

fn check(items: Vec<Item>) {
    let mut failures = Vec::new();
    for it in items {
        let level = rule_by_id(it.rule).expect("a rule of the table").level;
        for mode in [Rules::Hardened, Rules::Permissive] {
            let good = validate(&it.valid, mode);
            if !good.is_valid() {
                failures.push(format!(
                    "{} ({mode:?}): valid file reports {:?}",
                    it.what, good.violations
                ));
            }
            let bad = validate(&it.broken, mode);
            let expected: Vec<&str> = if mode == Rules::Permissive && level == Level::Hardening {
                vec![]
            } else {
                vec![it.rule]
            };
            if bad.rule_ids() != expected {
                failures.push(format!(
                    "{} ({mode:?}): expected {expected:?}, got {:?}",
                    it.what, bad.violations
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn buffer_handles_follow_buffer_protocol() {
    check(vec![
        Item {
            what: "memory_class (byte 14) is a field, not reserved",
            rule: "TD-BUF-003",
            valid: f32_with(|b| b.memory_class = 0x02),
            broken: f32_with(|b| b.reserved = 1),
        },
        Item {
            what: "sync_mode (byte 13) takes 0x00-0x02",
            rule: "TD-BUF-007",
            valid: f32_with(|b| {
                b.device_tag = 0x01;
                b.sync_mode = 0x02;
            }),
            broken: f32_with(|b| {
                b.device_tag = 0x01;
                b.sync_mode = 0x03;
            }),
        },
        Item {
            what: "a CPU buffer is SYNC_PRODUCER_SYNCED",
            rule: "TD-BUF-008",
            valid: f32_with(|b| b.sync_mode = 0x00),
            broken: f32_with(|b| b.sync_mode = 0x01),
        },
        Item {
            what: "memory_class 0x04-0xEF and 0xFF are reserved",
            rule: "TD-BUF-009",
            valid: f32_with(|b| b.memory_class = 0x01),
            broken: f32_with(|b| b.memory_class = 0xFF),
        },
        Item {
            what: "(device, memory class) pairs follow the per-device table",
            rule: "TD-BUF-010",
            valid: f32_with(|b| {
                b.device_tag = 0x04;
                b.memory_class = 0x03;
            }),
            broken: f32_with(|b| {
                b.device_tag = 0x05;
                b.memory_class = 0x01;
            }),
        },
        Item {
            what: "device_tag 0x09-0xEF and 0xFF are rejected",
            rule: "TD-BUF-011",
            valid: f32_with(|b| b.device_tag = 0x08),
            broken: f32_with(|b| b.device_tag = 0x09),
        },
        Item {
            what: "private device tags are a hardening violation",
            rule: "TD-BUF-012",
            valid: f32_with(|b| b.device_tag = 0x00),
            broken: f32_with(|b| b.device_tag = 0xFE),
        },
        Item {
            what: "an empty buffer may carry any power-of-two alignment",
            rule: "TD-BUF-002",
            valid: {
                let d = dense(ElementType::Float32, &[0]).unwrap();
                let d = with_handle(d, |b| b.alignment = 1);
                write(&[], vec![(d, vec![vec![]])])
            },
            broken: f32_with(|b| b.alignment = 1),
        },
        Item {
            what: "all buffers of a descriptor share device and memory class",
            rule: "TD-BUF-013",
            valid: ql::coo_per_channel()
                .edit(|d, b| {
                    d.buffers.resize(b.len(), d.buffers[0]);
                    for h in &mut d.buffers {
                        h.memory_class = 0x02;
                    }
                })
                .file(),
            broken: ql::coo_per_channel()
                .edit(|d, b| {
                    d.buffers.resize(b.len(), d.buffers[0]);
                    d.buffers[1].memory_class = 0x02;
                })
                .file(),
        },
        Item {
            what: "a non-empty buffer's file offset is a multiple of its alignment",
            rule: "HF-PLC-011",
            valid: f32_with(|b| b.alignment = 4096),
            broken: f32_with(|b| b.alignment = 8192),
        },
    ]);
}

fn with_handle(mut d: TensorDescriptor, edit: impl FnOnce(&mut BufferHandle)) -> TensorDescriptor {
    edit(&mut d.buffers[0]);
    d
}

/// Resizes the buffer table to the buffers (extra handles copy buffer 0's).
fn fit(d: &mut TensorDescriptor, b: &[Vec<u8>]) {
    d.buffers.resize(b.len(), d.buffers[0]);
}

#[test]
fn quantization_in_every_layout() {
    let q = |t: Quantized| t.file();
    check(vec![
        Item {
            what: "per-channel scale size on a COO tensor",
            rule: "QC-SIZ-001",
            valid: q(ql::coo_per_channel()),
            broken: q(ql::coo_per_channel().edit(|_, b| b[2].extend([0; 4]))),
        },
        Item {
            what: "per-block scale size on a CSR tensor (blocks along the logical axis)",
            rule: "QB-SIZ-001",
            valid: q(ql::csr_per_block()),
            broken: q(ql::csr_per_block().edit(|_, b| b[3].truncate(2))),
        },
        Item {
            what: "buffer_count is exact for a quantized sparse tensor",
            rule: "QZ-BUF-003",
            valid: q(ql::csr_per_block()),
            broken: q(ql::csr_per_block().edit(|d, b| {
                b.push(vec![1; 4]);
                fit(d, b);
            })),
        },
        Item {
            what: "a parameter index names none of the layout's buffers",
            rule: "QZ-BUF-004",
            valid: q(ql::csr_per_block()),
            broken: q(ql::csr_per_block().q(PerBlockAffine::SCALE_BUFFER_INDEX, &[2, 0, 0, 0])),
        },
        Item {
            what: "block-paged per-block scales are num_pages x page_size entries",
            rule: "QB-SIZ-001",
            valid: q(ql::paged_per_block()),
            broken: q(ql::paged_per_block().edit(|_, b| b[4].truncate(76))),
        },
        Item {
            what: "block-paged per-block affine needs block_size = page_size",
            rule: "LY-BP-016",
            valid: q(ql::paged_per_block()),
            broken: q(ql::paged_per_block().q(PerBlockAffine::BLOCK_SIZE, &[2, 0, 0, 0])),
        },
        Item {
            what: "block-paged per-channel affine never on axis 0",
            rule: "LY-BP-017",
            valid: q(ql::paged_per_channel()),
            broken: q(ql::paged_per_channel()
                .q(PerChannelAffine::AXIS, &[0, 0, 0, 0])
                .edit(|_, b| b[3] = [0, 0, 0x80, 0x3F].repeat(9))),
        },
        Item {
            what: "block-paged quantization is per-tensor, per-channel or per-block affine",
            rule: "LY-BP-015",
            valid: q(ql::paged_per_tensor()),
            // The first 16 bytes of the per-block descriptor read as NF4 axis 0,
            // blocks of 4, scales in buffer 3; the rest is writer padding.
            broken: q(ql::paged_per_block().q(0, &[SCHEME_NF4])),
        },
        Item {
            what: "a per-tensor affine tensor has no parameter buffer",
            rule: "QT-BUF-001",
            valid: q(ql::paged_per_tensor()),
            broken: q(ql::paged_per_tensor().edit(|d, b| {
                b.push(vec![0; 4]);
                fit(d, b);
            })),
        },
    ]);
}

#[test]
fn block_paged_quantized_tensors_dequantize() {
    for t in [
        ql::paged_per_block(),
        ql::paged_per_channel(),
        ql::paged_per_tensor(),
    ] {
        let (d, buffers) = t.synced();
        let slices: Vec<&[u8]> = buffers.iter().map(Vec::as_slice).collect();
        let dq = hrry::quant::Dequantizer::new(&d, &slices).expect("valid");
        // The pool: 5 pages of 4 slots, each [2 heads, 8 dims].
        assert_eq!(dq.shape(), [20, 2, 8]);
        let out = dq.to_vec().unwrap();
        let f32_at =
            |b: &[u8], i: usize| f32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap());
        let i32_at =
            |b: &[u8], i: usize| i32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap());
        let quant = QuantizedScheme::of(&d);
        for (flat, &v) in out.iter().enumerate() {
            let q = f32::from(buffers[0][flat] as i8);
            let (slot, channel) = (flat / 16, flat % 8);
            let want = match quant {
                QuantizedScheme::PerSlot => {
                    let s = f32_at(&buffers[3], slot);
                    (q - i32_at(&buffers[4], slot) as f32) * s
                }
                QuantizedScheme::HeadDim => q * f32_at(&buffers[3], channel),
                QuantizedScheme::Tensor(s, z) => (q - z as f32) * s,
            };
            assert_eq!(v.to_bits(), want.to_bits(), "element {flat}");
        }
    }
}

/// Which of the block-paged test tensors a descriptor is.
#[derive(Clone, Copy)]
enum QuantizedScheme {
    PerSlot,
    HeadDim,
    Tensor(f32, i32),
}

impl QuantizedScheme {
    fn of(d: &TensorDescriptor) -> Self {
        match d.quantization.as_ref().unwrap().scheme() {
            Some(hrry::schema::QuantScheme::PerBlockAffine(_)) => QuantizedScheme::PerSlot,
            Some(hrry::schema::QuantScheme::PerChannelAffine(_)) => QuantizedScheme::HeadDim,
            Some(hrry::schema::QuantScheme::PerTensorAffine(p)) => {
                QuantizedScheme::Tensor(p.scale, p.zero_point)
            }
            other => panic!("unexpected scheme {other:?}"),
        }
    }
}

/// A group composite head followed by one float32 [2] member.
fn group(head: TensorDescriptor, options: WriterOptions) -> Vec<u8> {
    let member = dense(ElementType::Float32, &[2]).unwrap();
    write_with(
        options,
        &[],
        vec![(head, vec![]), (member, vec![vec![0; 8]])],
    )
}

fn plain_head() -> TensorDescriptor {
    composite_head(ElementType::Float32, &[2], 3, 0, 1)
}

fn shard(parent: Vec<u64>) -> Vec<u8> {
    let mut d = dense(ElementType::Float32, &[2]).unwrap();
    d.shard = Some(ShardSection {
        parent_shape: parent,
        shard_offset: vec![0],
    });
    d.sync_sections();
    write(&[], vec![(d, vec![vec![0; 8]])])
}

fn hilbert(bytes: usize) -> Vec<u8> {
    let d = descriptor(
        ElementType::Uint8.tag(),
        LAYOUT_HILBERT,
        &[2, 2],
        LayoutFields::Hilbert(hrry::schema::HilbertFields {
            hilbert_order: 1,
            hilbert_rank: 2,
        }),
        &[0],
    );
    write(&[], vec![(d, vec![vec![7; bytes]])])
}

fn e8m0(codes: &[u8]) -> Vec<u8> {
    let d = descriptor(
        ElementType::Float8E8m0.tag(),
        LAYOUT_ROW_MAJOR,
        &[codes.len() as u64],
        LayoutFields::Implicit,
        &[0],
    );
    write(&[], vec![(d, vec![codes.to_vec()])])
}

fn kv_array(element_tag: u8) -> Vec<u8> {
    let array = KvValue::Array(KvArray::new(element_tag, vec![]));
    write(&[("k", array)], vec![])
}

#[test]
fn codes_composite_heads_shards_hilbert_kv_arrays_and_buffer_counts() {
    check(vec![
        Item {
            what: "float8_e8m0 data codes 0x00 and 0xFF make the descriptor invalid",
            rule: "TD-TYP-002",
            valid: e8m0(&[0x01, 0x7F, 0xFE]),
            broken: e8m0(&[0x01, 0x00, 0xFE]),
        },
        Item {
            what: "a composite head never sets HAS_QUANTIZATION",
            rule: "TD-CMP-006",
            valid: group(plain_head(), WriterOptions::default()),
            broken: group(
                {
                    let mut h = plain_head();
                    h.quantization = Some(QuantizationSection::from_bytes(vec![
                        1, 1, 0, 0, 0, 0, 0x80, 0x3F, 0, 0, 0, 0, 0, 0, 0, 0,
                    ]));
                    h.sync_sections();
                    h
                },
                WriterOptions::default(),
            ),
        },
        Item {
            what: "no padding after a composite head (a spec rule)",
            rule: "HF-PLC-004",
            valid: group(plain_head(), WriterOptions::default()),
            broken: group(
                plain_head(),
                WriterOptions {
                    pad_after_composite_heads: true,
                    ..WriterOptions::default()
                },
            ),
        },
        Item {
            what: "shard sections never use 2^64-1",
            rule: "TD-SHD-002",
            valid: shard(vec![u64::MAX - 1]),
            broken: shard(vec![u64::MAX]),
        },
        Item {
            what: "a Hilbert buffer holds exactly 2^(rank * order) elements",
            rule: "LY-HIL-005",
            valid: hilbert(4),
            broken: hilbert(5),
        },
        Item {
            what: "an empty KV array still has an element tag 0x01-0x06",
            rule: "HF-KV-007",
            valid: kv_array(0x06),
            broken: kv_array(0x07),
        },
        Item {
            what: "a per-tensor affine dense tensor has exactly one buffer",
            rule: "QT-BUF-001",
            valid: per_tensor(1),
            broken: per_tensor(2),
        },
    ]);
}

fn per_tensor(buffers: usize) -> Vec<u8> {
    let scheme = hrry::schema::QuantScheme::PerTensorAffine(hrry::schema::PerTensorAffine {
        header: hrry::schema::QuantizationHeader::version1(0x01, 0),
        scale: 0.5,
        zero_point: 0,
        reserved: [0; 4],
    });
    let d = hrry::quant::quantize::quantized_descriptor(
        ElementType::Int8.tag(),
        &[4],
        &vec![4; buffers],
        scheme,
    );
    write(&[], vec![(d, vec![vec![1, 2, 3, 4]; buffers])])
}

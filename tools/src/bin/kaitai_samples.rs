//! Writes sample HRRYFILEs covering every layout, every optional descriptor section,
//! every quantization scheme and every KV value type (each also packed as a bare
//! stream, `.hrrys`), and a `.holo` archive, for the
//! Kaitai Struct cross-check (`tests/kaitai/run.sh`) to parse and compare with `hrry inspect --json`.
//!
//! usage: `cargo run --release -p hrry-tools --bin kaitai_samples -- OUT_DIR`
//!
//! The files exercise the wire format, not the validator: most are valid, but some
//! fields take values chosen only to make each byte position distinct.

use std::path::{Path, PathBuf};

use hrry::file::{HrryWriter, WriterOptions};
use hrry::holo::{Constant, HoloWriter, PortDescriptor, ShapeDescriptor};
use hrry::schema::*;

fn main() {
    let out = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            eprintln!("usage: kaitai_samples OUT_DIR");
            std::process::exit(2)
        });
    std::fs::create_dir_all(&out).expect("create OUT_DIR");
    layouts(&out);
    sections(&out);
    quantized(&out);
    kv_values(&out);
    options(&out);
    composites(&out);
    upstream_descriptors(&out);
    tail_at_alignment(&out);
    oversized_buffers(&out);
    holo(&out);
    streams(&out);
}

/// Every sample HRRYFILE packed as a bare stream (`NAME.hrrys`), so the stream
/// description meets every layout and section too.
fn streams(dir: &Path) {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read OUT_DIR")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "hrry"))
        .collect();
    files.sort();
    for path in files {
        // Some samples break rules on purpose: open whatever can be located.
        let file = hrry::OpenOptions::new()
            .allow_all()
            .open(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut w = hrry::stream::StreamWriter::new(Vec::new());
        hrry::stream::pack(&file, &mut w).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        std::fs::write(path.with_extension("hrrys"), w.finish().expect("finish")).expect("write");
    }
}

/// A descriptor with no optional sections and no buffers yet; `fix_length` is
/// applied by [`write`].
fn desc(type_tag: u8, layout: LayoutFields, layout_tag: u8, shape: &[u64]) -> TensorDescriptor {
    hrry::model::build::descriptor(type_tag, layout_tag, shape, layout, &[])
}

fn handle(byte_size: u64) -> BufferHandle {
    BufferHandle {
        byte_size,
        alignment: 64,
        ..BufferHandle::default()
    }
}

/// Adds buffers of the given sizes to `d`.
fn with_buffers(mut d: TensorDescriptor, sizes: &[u64]) -> TensorDescriptor {
    d.buffers = sizes.iter().map(|&s| handle(s)).collect();
    d
}

fn dense(type_tag: u8, shape: &[u64], bytes: u64) -> TensorDescriptor {
    with_buffers(
        desc(type_tag, LayoutFields::Implicit, LAYOUT_ROW_MAJOR, shape),
        &[bytes],
    )
}

/// Deterministic non-zero buffer contents.
fn fill(len: u64, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

/// Writes `tensors` to `dir/name` with `options` and the KV entries `kv`.
fn write(
    dir: &Path,
    name: &str,
    options: WriterOptions,
    kv: Vec<(&str, KvValue)>,
    tensors: Vec<(&str, TensorDescriptor)>,
) {
    let path = dir.join(name);
    let mut w = HrryWriter::create(&path, options).expect("create");
    for (k, v) in kv {
        w.add_kv(k, v).expect("kv");
    }
    for (i, (tname, mut d)) in tensors.into_iter().enumerate() {
        d.fix_length();
        let mut data: Vec<Vec<u8>> = d
            .buffers
            .iter()
            .enumerate()
            .map(|(j, b)| fill(b.byte_size, (i * 16 + j) as u8))
            .collect();
        if let Some(first) = data.first_mut() {
            hrry::layout::dense::clear_unused_tail(&d, first);
        }
        let refs: Vec<&[u8]> = data.iter().map(Vec::as_slice).collect();
        w.write_tensor(tname, &d, &refs)
            .unwrap_or_else(|e| panic!("{name}/{tname}: {e}"));
    }
    w.finish_file().expect("finish");
}

fn layouts(dir: &Path) {
    let f32_ = 0x03;
    let tiled = |outer_layout, inner_layout, inner: Option<TiledFields>| TiledFields {
        tile_shape: vec![2, 4],
        outer_layout,
        inner_layout,
        reserved: [0; 2],
        outer_strides: (outer_layout == LAYOUT_STRIDED).then(|| vec![3, 1]),
        inner_strides: (inner_layout == LAYOUT_STRIDED).then(|| vec![1, 2]),
        inner_tiled: inner.map(Box::new),
    };
    let nested = tiled(
        LAYOUT_STRIDED,
        LAYOUT_TILED,
        Some(TiledFields {
            tile_shape: vec![1, 2],
            outer_layout: LAYOUT_COLUMN_MAJOR,
            inner_layout: LAYOUT_TILED,
            reserved: [0; 2],
            outer_strides: None,
            inner_strides: None,
            inner_tiled: Some(Box::new(TiledFields {
                tile_shape: vec![1, 1],
                outer_layout: LAYOUT_ROW_MAJOR,
                inner_layout: LAYOUT_STRIDED,
                reserved: [0; 2],
                outer_strides: None,
                inner_strides: Some(vec![-1, 7]),
                inner_tiled: None,
            })),
        }),
    );
    let t = |layout, tag, shape: &[u64], sizes: &[u64]| {
        with_buffers(desc(f32_, layout, tag, shape), sizes)
    };
    write(
        dir,
        "layouts.hrry",
        WriterOptions::default(),
        vec![],
        vec![
            (
                "row_major",
                t(LayoutFields::Implicit, LAYOUT_ROW_MAJOR, &[3, 4], &[48]),
            ),
            (
                "column_major",
                t(LayoutFields::Implicit, LAYOUT_COLUMN_MAJOR, &[4, 3], &[48]),
            ),
            (
                "strided",
                t(
                    LayoutFields::Strided {
                        strides: vec![-4, 1],
                    },
                    LAYOUT_STRIDED,
                    &[3, 4],
                    &[48],
                ),
            ),
            (
                "tiled_plain",
                t(
                    LayoutFields::Tiled(tiled(1, 2, None)),
                    LAYOUT_TILED,
                    &[4, 8],
                    &[128],
                ),
            ),
            (
                "tiled_strided",
                t(
                    LayoutFields::Tiled(tiled(3, 3, None)),
                    LAYOUT_TILED,
                    &[4, 8],
                    &[128],
                ),
            ),
            (
                "tiled_nested",
                t(LayoutFields::Tiled(nested), LAYOUT_TILED, &[4, 8], &[128]),
            ),
            (
                "morton",
                t(
                    LayoutFields::Morton {
                        morton_bits: vec![2, 3],
                    },
                    LAYOUT_MORTON,
                    &[4, 8],
                    &[128],
                ),
            ),
            (
                "coo",
                t(
                    LayoutFields::Coo(CooFields {
                        nnz: 3,
                        is_sorted: 1,
                        reserved: [0; 7],
                    }),
                    LAYOUT_COO,
                    &[5, 5],
                    &[12, 48],
                ),
            ),
            (
                "csr",
                t(
                    LayoutFields::Csr(CompressedFields {
                        nnz: 2,
                        reserved: [0; 8],
                    }),
                    LAYOUT_CSR,
                    &[3, 3],
                    &[8, 32, 16],
                ),
            ),
            (
                "csc",
                t(
                    LayoutFields::Csc(CompressedFields {
                        nnz: 4,
                        reserved: [0; 8],
                    }),
                    LAYOUT_CSC,
                    &[3, 2],
                    &[16, 24, 32],
                ),
            ),
            (
                "csf",
                t(
                    LayoutFields::Csf(CsfFields {
                        nnz: 2,
                        mode_order: vec![2, 0, 1],
                        reserved: [0; 8],
                    }),
                    LAYOUT_CSF,
                    &[2, 3, 4],
                    &[8, 16, 16, 24, 16, 24, 16],
                ),
            ),
            (
                "block_paged",
                t(
                    LayoutFields::BlockPaged(BlockPagedFields {
                        page_size: 16,
                        num_pages: 5,
                        paged_axis: 0,
                        num_seqs: 2,
                        kv_role: 1,
                        layer_index: 0xFFFF_FFFF,
                        block_table_index_type: 1,
                        reserved: [0; 6],
                    }),
                    LAYOUT_BLOCK_PAGED,
                    &[80, 2, 4],
                    &[2560, 40, 24],
                ),
            ),
            (
                "hilbert",
                t(
                    LayoutFields::Hilbert(HilbertFields {
                        hilbert_order: 2,
                        hilbert_rank: 2,
                    }),
                    LAYOUT_HILBERT,
                    &[4, 4],
                    &[64],
                ),
            ),
            (
                "extension_layout",
                t(
                    LayoutFields::Extension(ExtensionLayoutFields {
                        extension_layout_id: 0x0123_4567_89AB_CDEF,
                        extension_data: b"\x00opaque\xff".to_vec(),
                    }),
                    0xF3,
                    &[2, 2],
                    &[16],
                ),
            ),
            (
                "scalar",
                t(LayoutFields::Implicit, LAYOUT_ROW_MAJOR, &[], &[4]),
            ),
            (
                "empty",
                t(LayoutFields::Implicit, LAYOUT_ROW_MAJOR, &[0, 4], &[0]),
            ),
            (
                "dynamic_dim",
                t(
                    LayoutFields::Implicit,
                    LAYOUT_ROW_MAJOR,
                    &[u64::MAX, 2],
                    &[0],
                ),
            ),
        ],
    );
}

fn sections(dir: &Path) {
    let mut sharded = dense(0x03, &[4, 2], 40);
    sharded.flags.set_has_shard(true);
    sharded.shard = Some(ShardSection {
        parent_shape: vec![8, 6],
        shard_offset: vec![4, 2],
    });
    sharded.byte_offset = 8;

    let mut stats = dense(0x04, &[3], 24);
    stats.flags.set_has_statistics(true);
    stats.statistics = Some(Statistics {
        computed_mask: 0x3F,
        reserved: 0,
        nnz: 2,
        sparsity_ratio: 1.0 / 3.0,
        value_min: -2.5,
        value_max: 1e300,
        value_abs_max: 1e300,
        value_mean: -0.0,
        value_stddev: 5e-324,
        nm_n: 2,
        nm_m: 4,
        has_nan: 1,
        has_inf: 0,
        reserved2: [0; 4],
    });

    let mut non_finite = dense(0x03, &[2], 8);
    non_finite.flags.set_has_statistics(true);
    non_finite.statistics = Some(Statistics {
        computed_mask: 0x04,
        value_min: f64::NEG_INFINITY,
        value_max: f64::INFINITY,
        value_abs_max: f64::NAN,
        ..Statistics::default()
    });

    let mut ext = dense(0xF5, &[8], 4);
    ext.flags.set_has_extension_type(true);
    ext.extension_type = Some(ExtensionType {
        bit_width: 4,
        packing_factor: 2,
        is_float: 1,
        is_signed: 0,
        sign_bits: 1,
        exponent_bits: 2,
        mantissa_bits: 1,
        reserved: [0; 2],
        exponent_bias: 1,
        has_nan: 0,
        has_inf: 1,
        reserved2: [0; 2],
    });

    let mut everything = dense(0xF1, &[6, 2], 12);
    everything.flags = DescriptorFlags::new()
        .with_has_quantization(true)
        .with_has_shard(true)
        .with_has_extension_type(true)
        .with_has_statistics(true)
        .with_has_composite_member(true);
    everything.quantization = Some(QuantizationSection::from_bytes(vec![
        0xF2, 1, 0, 0, 9, 8, 7,
    ]));
    everything.shard = Some(ShardSection {
        parent_shape: vec![12, 2],
        shard_offset: vec![6, 0],
    });
    everything.statistics = Some(Statistics {
        computed_mask: 1,
        nnz: 11,
        ..Statistics::default()
    });
    everything.extension_type = Some(ExtensionType {
        bit_width: 8,
        packing_factor: 1,
        is_signed: 1,
        ..ExtensionType::default()
    });
    everything.composite_member = Some(CompositeMember {
        member_role: 1,
        reserved: [0; 15],
    });

    let mut grown = dense(0x11, &[5], 5);
    grown.version_minor = 3;
    grown.trailing = b"future fields".to_vec();

    let mut multi = with_buffers(
        desc(0x10, LayoutFields::Implicit, LAYOUT_ROW_MAJOR, &[3]),
        &[3, 5000, 0, 7],
    );
    multi.buffers[1].alignment = 4096;
    multi.buffers[2].device_tag = 2;
    multi.buffers[2].sync_mode = 1;
    multi.buffers[2].memory_class = 3;

    write(
        dir,
        "sections.hrry",
        WriterOptions::default(),
        vec![],
        vec![
            ("sharded", sharded),
            ("statistics", stats),
            ("non_finite_statistics", non_finite),
            ("extension_type", ext),
            ("every_section", everything),
            ("trailing_bytes", grown),
            ("four_buffers", multi),
            ("bool", dense(0x20, &[10], 2)),
            ("int4", dense(0x48, &[5], 3)),
            ("float6", dense(0x44, &[5], 6)),
            ("complex128", dense(0x51, &[1], 16)),
        ],
    );
}

fn quantized(dir: &Path) {
    fn q(type_tag: u8, shape: &[u64], sizes: &[u64], qd: Vec<u8>) -> TensorDescriptor {
        let mut d = with_buffers(
            desc(type_tag, LayoutFields::Implicit, LAYOUT_ROW_MAJOR, shape),
            sizes,
        );
        d.flags.set_has_quantization(true);
        d.quantization = Some(QuantizationSection::from_bytes(qd));
        d
    }
    let le32 = |v: u32| v.to_le_bytes();
    let cat = |parts: &[&[u8]]| parts.concat();

    let per_tensor = cat(&[
        &[0x01, 1, 0, 0],
        &0.125f32.to_le_bytes(),
        &(-3i32).to_le_bytes(),
        &[0; 4],
    ]);
    let per_channel = cat(&[
        &[0x02, 1, 0, 0],
        &le32(1),
        &le32(1),
        &le32(2),
        &[0x03, 0, 0, 0],
    ]);
    let per_channel_sym = cat(&[
        &[0x02, 1, 1, 0],
        &le32(0),
        &le32(1),
        &le32(u32::MAX),
        &[0x03, 0, 0, 0],
    ]);
    let per_block = cat(&[
        &[0x03, 1, 0, 0],
        &le32(1),
        &le32(32),
        &le32(1),
        &le32(2),
        &[0x01, 0, 0, 0],
    ]);
    let per_block_shared = cat(&[
        &[0x03, 1, 0, 0],
        &le32(0),
        &le32(4),
        &le32(1),
        &le32(1),
        &[0x03, 0, 0, 0],
    ]);
    let per_block_sym_padded = cat(&[
        &[0x03, 1, 1, 0],
        &le32(1),
        &le32(64),
        &le32(1),
        &le32(u32::MAX),
        &[0x02, 0, 0, 0],
        &[0; 8],
    ]);
    let nf4 = cat(&[&[0x04, 1, 0, 0], &le32(1), &le32(64), &le32(1)]);
    let mxfp = cat(&[&[0x05, 1, 0, 0], &le32(1), &le32(32), &le32(1)]);
    let private = vec![0xF7, 2, 0xAA, 0x55, 1, 2, 3];

    write(
        dir,
        "quantized.hrry",
        WriterOptions::default(),
        vec![(
            "quantization",
            KvValue::String(LenBytes {
                bytes: b"mixed".to_vec(),
            }),
        )],
        vec![
            ("per_tensor", q(0x11, &[4, 4], &[16], per_tensor)),
            ("per_channel", q(0x10, &[3, 5], &[15, 20, 20], per_channel)),
            (
                "per_channel_symmetric",
                q(0x12, &[3, 2], &[12, 12], per_channel_sym),
            ),
            ("per_block", q(0x48, &[2, 64], &[64, 8, 16], per_block)),
            (
                "per_block_shared",
                q(0x10, &[8, 2], &[16, 32], per_block_shared),
            ),
            (
                "per_block_symmetric_padded",
                q(0x49, &[3, 64], &[96, 6], per_block_sym_padded),
            ),
            ("nf4", q(0x49, &[2, 128], &[128, 16], nf4)),
            ("mxfp", q(0x43, &[2, 64], &[64, 4], mxfp)),
            ("private_scheme", q(0x10, &[2], &[2], private)),
        ],
    );
}

fn kv_values(dir: &Path) {
    let s = |t: &str| LenBytes {
        bytes: t.as_bytes().to_vec(),
    };
    let arr = |element_tag, elements| KvValue::Array(KvArray::new(element_tag, elements));
    write(
        dir,
        "kv.hrry",
        WriterOptions::default(),
        vec![
            ("general.name", KvValue::String(s("kaitai ✓ sample"))),
            ("empty_string", KvValue::String(s(""))),
            ("int_min", KvValue::Int64(i64::MIN)),
            ("int", KvValue::Int64(-42)),
            ("uint_max", KvValue::Uint64(u64::MAX)),
            ("float", KvValue::Float64(0.1)),
            ("float_neg_zero", KvValue::Float64(-0.0)),
            ("float_nan", KvValue::Float64(f64::NAN)),
            ("float_inf", KvValue::Float64(f64::NEG_INFINITY)),
            ("float_big", KvValue::Float64(1.7976931348623157e308)),
            ("float_tiny", KvValue::Float64(5e-324)),
            ("true", KvValue::Bool(1)),
            ("false", KvValue::Bool(0)),
            (
                "bytes",
                KvValue::Bytes(LenBytes {
                    bytes: vec![0, 1, 0xFE, 0xFF],
                }),
            ),
            ("empty_bytes", KvValue::Bytes(LenBytes::default())),
            (
                "strings",
                arr(
                    0x01,
                    vec![KvScalar::String(s("a")), KvScalar::String(s("βγ"))],
                ),
            ),
            (
                "int64s",
                arr(0x02, vec![KvScalar::Int64(-1), KvScalar::Int64(i64::MAX)]),
            ),
            (
                "uint64s",
                arr(0x03, vec![KvScalar::Uint64(0), KvScalar::Uint64(u64::MAX)]),
            ),
            (
                "float64s",
                arr(
                    0x04,
                    vec![
                        KvScalar::Float64(2.5),
                        KvScalar::Float64(f64::INFINITY),
                        KvScalar::Float64(-1e-10),
                    ],
                ),
            ),
            (
                "bools",
                arr(0x05, vec![KvScalar::Bool(1), KvScalar::Bool(0)]),
            ),
            (
                "byte_seqs",
                arr(
                    0x06,
                    vec![
                        KvScalar::Bytes(LenBytes { bytes: vec![0xAB] }),
                        KvScalar::Bytes(LenBytes::default()),
                    ],
                ),
            ),
            ("empty_array", arr(0x03, vec![])),
        ],
        vec![("t", dense(0x03, &[1], 4))],
    );
}

fn options(dir: &Path) {
    let sorted = WriterOptions {
        data_buffer_alignment: 8192,
        sorted_index: true,
        index_crc32c: false,
        tensor_count_hint: Some(3),
        ..WriterOptions::default()
    };
    write(
        dir,
        "sorted_no_crc.hrry",
        sorted,
        vec![],
        vec![
            ("zeta", dense(0x03, &[3], 12)),
            ("alpha", dense(0x01, &[2, 2], 8)),
            ("mu", dense(0x16, &[1], 8)),
        ],
    );
    write(
        dir,
        "no_tensors.hrry",
        WriterOptions::default(),
        vec![("only", KvValue::Uint64(1))],
        vec![],
    );
    write(
        dir,
        "nothing.hrry",
        WriterOptions::default(),
        vec![],
        vec![],
    );

    // KV declared after the first tensor: present, found through the trailer, with
    // HAS_KV_METADATA clear.
    let path = dir.join("late_kv.hrry");
    let mut w = HrryWriter::create(&path, WriterOptions::default()).expect("create");
    let mut d = dense(0x03, &[2], 8);
    d.fix_length();
    w.write_tensor("x", &d, &[&fill(8, 1)]).expect("tensor");
    w.add_kv("late", KvValue::Int64(7)).expect("kv");
    w.finish_file().expect("finish");
}

fn composites(dir: &Path) {
    let head = |rule, op, members| {
        desc(
            0x03,
            LayoutFields::Composite(CompositeFields {
                composition_rule: rule,
                combine_op: op,
                reserved: [0; 2],
                member_count: members,
            }),
            LAYOUT_COMPOSITE,
            &[4, 4],
        )
    };
    let member = |role: Option<u8>| {
        let mut d = dense(0x03, &[4, 4], 64);
        if let Some(member_role) = role {
            d.flags.set_has_composite_member(true);
            d.composite_member = Some(CompositeMember {
                member_role,
                reserved: [0; 15],
            });
        }
        d
    };
    let part = |offset: u64| {
        let mut d = dense(0x03, &[2, 4], 32);
        d.flags.set_has_shard(true);
        d.shard = Some(ShardSection {
            parent_shape: vec![4, 4],
            shard_offset: vec![offset, 0],
        });
        d
    };
    write(
        dir,
        "composites.hrry",
        WriterOptions::default(),
        vec![],
        vec![
            ("overlay", head(2, 1, 2)),
            ("overlay.base", member(Some(1))),
            ("overlay.correction", member(Some(0))),
            ("partition", head(1, 0, 2)),
            ("partition.0", part(0)),
            ("partition.1", head(3, 0, 1)),
            ("partition.1.only", part(2)),
            ("after", member(None)),
        ],
    );
}

/// Every upstream golden descriptor (`tests/data/upstream-vectors/descriptors/`) as a tensor
/// of one file; the composite head is followed by two members.
fn upstream_descriptors(dir: &Path) {
    // The repository root is the parent of this crate's folder, `tools/`.
    let vectors =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/upstream-vectors/descriptors");
    let listing = std::fs::read_dir(&vectors).unwrap_or_else(|e| {
        eprintln!("cannot list {}: {e}", vectors.display());
        std::process::exit(1)
    });
    let mut names: Vec<PathBuf> = listing.filter_map(|e| e.ok().map(|e| e.path())).collect();
    names.sort();
    let mut tensors = Vec::new();
    let mut heads = Vec::new();
    for path in &names {
        let bytes = std::fs::read(path).expect("read vector");
        let (d, _) = read_from::<TensorDescriptor>(&bytes).expect("vector decodes");
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        if d.layout_tag == LAYOUT_COMPOSITE {
            heads.push((stem, d));
        } else {
            tensors.push((stem, d));
        }
    }
    let mut all: Vec<(String, TensorDescriptor)> = tensors;
    for (stem, d) in heads {
        let n = match &d.layout {
            LayoutFields::Composite(c) => c.member_count,
            _ => 0,
        };
        let shape = d.shape.clone();
        all.push((stem.clone(), d));
        for i in 0..n {
            let rows = shape[0] / u64::from(n);
            let mut m = dense(0x03, &[rows, shape[1]], rows * shape[1] * 4);
            m.flags.set_has_shard(true);
            m.shard = Some(ShardSection {
                parent_shape: shape.clone(),
                shard_offset: vec![rows * u64::from(i), 0],
            });
            all.push((format!("{stem}.member{i}"), m));
        }
    }
    let refs = all.iter().map(|(n, d)| (n.as_str(), d.clone())).collect();
    write(
        dir,
        "upstream_descriptors.hrry",
        WriterOptions::default(),
        vec![],
        refs,
    );
}

/// A file whose tensors are followed by padding to `data_buffer_alignment` rather
/// than to 8, after a composite head too (as the upstream writer pads), which
/// readers accept; it also leaves room after the header.
fn tail_at_alignment(dir: &Path) {
    let head = desc(
        0x03,
        LayoutFields::Composite(CompositeFields {
            composition_rule: 3,
            combine_op: 0,
            reserved: [0; 2],
            member_count: 1,
        }),
        LAYOUT_COMPOSITE,
        &[2],
    );
    let options = WriterOptions {
        first_descriptor_offset: 128,
        pad_last_buffer_to_alignment: true,
        pad_after_composite_heads: true,
        tensor_count_hint: Some(3),
        ..WriterOptions::default()
    };
    write(
        dir,
        "tail_at_alignment.hrry",
        options,
        vec![],
        vec![
            ("group", head),
            ("group.member", dense(0x03, &[2], 8)),
            ("last", dense(0x10, &[3], 3)),
        ],
    );
}

/// Dense buffers larger than their elements need (`TD-BUF-014`, marked by
/// `oversized_buffer` in `hrry inspect --json`): bools stored one byte per
/// element, and a float32 tensor with 4 bytes to spare.
fn oversized_buffers(dir: &Path) {
    let column_major = with_buffers(desc(0x49, LayoutFields::Implicit, 0x02, &[3, 5]), &[15]);
    write(
        dir,
        "oversized_buffers.hrry",
        WriterOptions::default(),
        vec![],
        vec![
            ("mask", dense(0x20, &[2, 3, 4], 24)),
            ("uint4_one_per_byte", column_major),
            ("spare", dense(0x03, &[2], 12)),
        ],
    );
}

/// A `.holo` archive with what the corpus archives leave out: a shape with more
/// than eight dimensions, an unnamed port of unknown rank, an empty extension key,
/// an empty level, weights shared by two large constants.
fn holo(dir: &Path) {
    let big =
        |seed: u8| -> Vec<u8> { (0..5000u32).map(|i| (i as u8).wrapping_add(seed)).collect() };
    let mut w = HoloWriter::new();
    w.set_schedule(vec![vec![], vec![3, 1, 2]])
        .set_shape_registry(vec![
            ShapeDescriptor {
                rank: 10,
                dims: [1, 2, 3, 4, 5, 6, 7, 8],
                overflow: vec![9, 10],
            },
            ShapeDescriptor {
                rank: 0,
                dims: [0; 8],
                overflow: vec![],
            },
        ])
        .set_inputs(vec![PortDescriptor {
            name: String::new(),
            slot: 7,
            element_count: 1,
            dtype: 3,
            shape: vec![],
        }])
        .set_outputs(vec![
            PortDescriptor {
                name: "λ".into(),
                slot: 0,
                element_count: 6,
                dtype: 1,
                shape: vec![2, 3],
            },
            PortDescriptor {
                name: "empty".into(),
                slot: 1,
                element_count: 0,
                dtype: 1,
                shape: vec![0, 4],
            },
        ])
        .set_constants(vec![
            Constant {
                slot: 1,
                dtype: 1,
                bytes: big(1),
            },
            Constant {
                slot: 2,
                dtype: 1,
                bytes: big(1),
            },
            Constant {
                slot: 3,
                dtype: 2,
                bytes: vec![],
            },
            Constant {
                slot: 4,
                dtype: 2,
                bytes: big(2),
            },
        ])
        .set_exec_plan(vec![vec![0, 0]])
        .add_extension("", b"no key".to_vec())
        .add_extension("config", vec![]);
    w.write_to_path(dir.join("archive.holo"))
        .expect("write .holo");
}

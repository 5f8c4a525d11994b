//! `.holo` corpus cases: valid archives, and one invalid archive per `HOLO-…` rule
//! that breaks that rule only (every other byte, the footer included, is kept
//! consistent).

use super::{Case, Format};
use hrry::holo::{
    assemble, Constant, HoloWriter, PortDescriptor, SectionKind, ShapeDescriptor, WeightStore,
};
use hrry::schema::holo::{
    holo_header_offsets, section_entry_offsets, HOLO_FOOTER_LEN, HOLO_HEADER_LEN, SECTION_ENTRY_LEN,
};
use hrry::validate::rules::holo as r;

/// A deterministic archive using every section kind of version 2: two ports each
/// way, a deduplicated weight pool, a small (inline) and a large (by reference)
/// constant, two extensions.
pub fn sample_writer() -> HoloWriter {
    let mut weights = WeightStore::new();
    weights.insert((0..64u8).collect());
    weights.insert(vec![0xA5; 300]);
    let large: Vec<u8> = (0..5000u32).map(|i| (i * 7 % 251) as u8).collect();
    let mut w = HoloWriter::new();
    w.set_kernel_calls(b"\x01\x02kernel-calls".to_vec())
        .set_schedule(vec![vec![0, 1], vec![2]])
        .set_weights(weights)
        .set_shape_registry(vec![ShapeDescriptor {
            rank: 2,
            dims: [1, 8, 0, 0, 0, 0, 0, 0],
            overflow: vec![],
        }])
        .set_dtype_registry(b"dtypes".to_vec())
        .set_certificates(b"certificates".to_vec())
        .set_trace(b"trace".to_vec())
        .set_metadata(b"{\"producer\":\"hrry\"}".to_vec())
        .set_inputs(vec![
            PortDescriptor {
                name: "input_ids".into(),
                slot: 0,
                element_count: 8,
                dtype: 7,
                shape: vec![1, 8],
            },
            PortDescriptor {
                name: "attention_mask".into(),
                slot: 1,
                element_count: 8,
                dtype: 7,
                shape: vec![1, 8],
            },
        ])
        .set_outputs(vec![PortDescriptor {
            name: "logits".into(),
            slot: 9,
            element_count: 32,
            dtype: 1,
            shape: vec![1, 8, 4],
        }])
        .set_constants(vec![
            Constant {
                slot: 3,
                dtype: 1,
                bytes: vec![0, 0, 128, 63],
            },
            Constant {
                slot: 4,
                dtype: 0,
                bytes: large,
            },
        ])
        .set_exec_plan(vec![vec![0], vec![1, 2]])
        .set_warm_start(b"warm".to_vec())
        .add_extension("tokenizer", b"{\"vocab\":[]}".to_vec())
        .add_extension("generation_config", b"{}".to_vec());
    w
}

/// The sample's `(kind, payload)` sections in emission order.
fn sample_sections() -> Vec<(SectionKind, Vec<u8>)> {
    sample_writer()
        .payloads()
        .expect("the sample fits every field")
}

/// Frames sections as a version-`version` archive with a correct footer (the
/// writer frames the version it writes; the header's field is set after).
fn frame(version: u16, sections: &[(SectionKind, Vec<u8>)]) -> Vec<u8> {
    let mut bytes = assemble(sections).expect("corpus sections fit every field");
    let at = holo_header_offsets::FORMAT_VERSION as usize;
    bytes[at..at + 2].copy_from_slice(&version.to_le_bytes());
    reseal(bytes)
}

/// Recomputes the footer after an edit.
fn reseal(mut bytes: Vec<u8>) -> Vec<u8> {
    let body_len = bytes.len() - HOLO_FOOTER_LEN as usize;
    let hash = blake3::hash(&bytes[..body_len]);
    bytes[body_len..].copy_from_slice(hash.as_bytes());
    bytes
}

/// Absolute offset of table entry `i`.
fn entry_at(i: usize) -> usize {
    (HOLO_HEADER_LEN + SECTION_ENTRY_LEN * i as u64) as usize
}

fn put_u64(bytes: &mut [u8], at: usize, value: u64) {
    bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
}

fn get_u64(bytes: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(b)
}

/// The sample with the payload of its first `kind` section replaced.
fn with_payload(kind: SectionKind, edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut sections = sample_sections();
    if let Some((_, p)) = sections.iter_mut().find(|(k, _)| *k == kind) {
        edit(p);
    }
    frame(2, &sections)
}

/// The sample with one more section appended.
fn with_extra(kind: SectionKind, payload: Vec<u8>) -> Vec<u8> {
    let mut sections = sample_sections();
    sections.push((kind, payload));
    frame(2, &sections)
}

/// The minimal archive (empty KernelCalls and Weights) with its table patched.
fn minimal_with(edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut bytes = HoloWriter::new().finish().expect("empty archive");
    edit(&mut bytes);
    reseal(bytes)
}

fn port_entry(name: &[u8], element_count: u64, shape: &[u64]) -> Vec<u8> {
    let mut p = Vec::new();
    p.extend_from_slice(&(name.len() as u16).to_le_bytes());
    p.extend_from_slice(name);
    p.extend_from_slice(&5u32.to_le_bytes());
    p.extend_from_slice(&element_count.to_le_bytes());
    p.push(1);
    p.push(shape.len() as u8);
    for d in shape {
        p.extend_from_slice(&d.to_le_bytes());
    }
    p
}

fn port_list(entries: &[Vec<u8>]) -> Vec<u8> {
    let mut p = (entries.len() as u32).to_le_bytes().to_vec();
    for e in entries {
        p.extend_from_slice(e);
    }
    p
}

fn weights_payload(entries: &[([u8; 32], Vec<u8>)]) -> Vec<u8> {
    let mut p = (entries.len() as u32).to_le_bytes().to_vec();
    for (fp, body) in entries {
        p.extend_from_slice(fp);
        p.extend_from_slice(&(body.len() as u64).to_le_bytes());
        p.extend_from_slice(body);
    }
    p
}

fn valid_cases() -> Vec<Case> {
    let v = |name: &str, description: &str, bytes: Vec<u8>| {
        Case::valid(Format::Holo, name, description, bytes)
    };
    let minimal = HoloWriter::new().finish().expect("empty archive");
    let full = sample_writer().finish().expect("sample archive");

    let mut v3_sections = sample_sections();
    v3_sections.insert(0, (SectionKind::AppManifest, b"app-manifest".to_vec()));
    let mut blob = vec![b'k'; 71];
    blob.extend_from_slice(b"content");
    v3_sections.push((SectionKind::ContentBlob, blob.clone()));
    v3_sections.push((SectionKind::ContentBlob, blob));

    // Weights listed first but stored last, a 3-byte gap after the table, a
    // zero-length Trace, and header flags set: all accepted.
    let any_order = {
        let table_end = entry_at(3);
        let kc = b"kc".to_vec();
        let wt = weights_payload(&[]);
        let mut bytes = b"HOLO".to_vec();
        bytes.extend_from_slice(&2u16.to_le_bytes());
        bytes.extend_from_slice(&0x8001u16.to_le_bytes());
        bytes.extend_from_slice(&3u16.to_le_bytes());
        let kc_at = table_end as u64 + 3;
        let wt_at = kc_at + kc.len() as u64;
        for (kind, offset, length) in [
            (SectionKind::Weights, wt_at, wt.len() as u64),
            (SectionKind::KernelCalls, kc_at, kc.len() as u64),
            (SectionKind::Trace, wt_at, 0),
        ] {
            bytes.push(kind.number());
            bytes.extend_from_slice(&[0; 7]);
            bytes.extend_from_slice(&offset.to_le_bytes());
            bytes.extend_from_slice(&length.to_le_bytes());
        }
        bytes.extend_from_slice(&[0xEE; 3]);
        bytes.extend_from_slice(&kc);
        bytes.extend_from_slice(&wt);
        bytes.extend_from_slice(&[0; 32]);
        reseal(bytes)
    };

    // A small constant by reference (the writer would inline it) and no
    // KernelCalls section: accepted.
    let small_fp = *blake3::hash(b"tiny").as_bytes();
    let mut constants = 1u32.to_le_bytes().to_vec();
    constants.push(1);
    constants.extend_from_slice(&2u32.to_le_bytes());
    constants.push(0);
    constants.extend_from_slice(&small_fp);
    let small_ref = frame(
        2,
        &[
            (SectionKind::Constants, constants),
            (
                SectionKind::Weights,
                weights_payload(&[(small_fp, b"tiny".to_vec())]),
            ),
        ],
    );

    vec![
        v(
            "minimal.holo",
            "empty KernelCalls and Weights only",
            minimal,
        ),
        v(
            "full.holo",
            "every version-2 section kind, two extensions, inline and referenced constants",
            full,
        ),
        v(
            "v3-app-manifest.holo",
            "format_version 3 with an AppManifest and two ContentBlob sections",
            frame(3, &v3_sections),
        ),
        v(
            "any-order.holo",
            "table out of payload order, a gap, a zero-length section, flags set",
            any_order,
        ),
        v(
            "small-constant-by-reference.holo",
            "a 4-byte constant stored by reference; no KernelCalls section",
            small_ref,
        ),
    ]
}

fn invalid_cases() -> Vec<Case> {
    let full = sample_writer().finish().expect("sample archive");
    let x = |rule: &'static str, description: &str, bytes: Vec<u8>| {
        Case::invalid(Format::Holo, rule, "", description, bytes)
    };
    let big_fp = *blake3::hash(b"body").as_bytes();
    vec![
        x(
            r::HOLO_SIZE.id,
            "41 bytes: shorter than header plus footer",
            b"HOLO\x02\x00\x00\x00\x00\x00"
                .iter()
                .copied()
                .chain([0; 31])
                .collect(),
        ),
        x(r::HOLO_MAGIC.id, "magic HOLA", {
            let mut b = full.clone();
            b[3] = b'A';
            reseal(b)
        }),
        x(r::HOLO_VERSION.id, "format_version 4", {
            let mut b = full.clone();
            b[holo_header_offsets::FORMAT_VERSION as usize] = 4;
            reseal(b)
        }),
        x(r::HOLO_FOOTER.id, "last footer byte flipped", {
            let mut b = full.clone();
            if let Some(last) = b.last_mut() {
                *last ^= 1;
            }
            b
        }),
        x(
            r::HOLO_TABLE_SIZE.id,
            "section_count 1000 in a 94-byte archive",
            minimal_with(|b| {
                let at = holo_header_offsets::SECTION_COUNT as usize;
                b[at..at + 2].copy_from_slice(&1000u16.to_le_bytes());
            }),
        ),
        x(
            r::HOLO_TABLE_PADDING.id,
            "a padding byte of the first table entry is 1",
            minimal_with(|b| b[entry_at(0) + section_entry_offsets::PADDING as usize + 3] = 1),
        ),
        x(
            r::HOLO_KIND.id,
            "a section of kind 99",
            minimal_with(|b| b[entry_at(0)] = 99),
        ),
        x(
            r::HOLO_KIND_VERSION.id,
            "a ContentBlob section in a version-2 archive",
            with_extra(SectionKind::ContentBlob, vec![b'k'; 80]),
        ),
        x(
            r::HOLO_SECTION_BOUNDS.id,
            "the KernelCalls section runs into the footer",
            minimal_with(|b| {
                let at = entry_at(0) + section_entry_offsets::LENGTH as usize;
                put_u64(b, at, 100);
            }),
        ),
        x(
            r::HOLO_SECTION_OVERLAP.id,
            "KernelCalls extends one byte into Schedule",
            {
                let mut b = full.clone();
                // Entry 0 is KernelCalls, stored right before Schedule: one byte
                // longer, it covers Schedule's first byte.
                let at = entry_at(0) + section_entry_offsets::LENGTH as usize;
                let len = get_u64(&b, at);
                put_u64(&mut b, at, len + 1);
                reseal(b)
            },
        ),
        x(
            r::HOLO_SECTION_REPEAT.id,
            "two Trace sections",
            with_extra(SectionKind::Trace, b"second trace".to_vec()),
        ),
        x(
            r::HOLO_SECTION_TRAILING.id,
            "one byte after the last input port",
            with_payload(SectionKind::Inputs, |p| p.push(0)),
        ),
        x(
            r::HOLO_PORT_DECODE.id,
            "port_count 2 with one port present",
            with_payload(SectionKind::Outputs, |p| {
                p[..4].copy_from_slice(&2u32.to_le_bytes());
            }),
        ),
        x(
            r::HOLO_PORT_NAME.id,
            "a port name that is not UTF-8",
            with_payload(SectionKind::Outputs, |p| {
                *p = port_list(&[port_entry(b"log\xFFits", 32, &[1, 8, 4])]);
            }),
        ),
        x(
            r::HOLO_PORT_COUNT.id,
            "element_count 31 for shape [1, 8, 4]",
            with_payload(SectionKind::Outputs, |p| {
                *p = port_list(&[port_entry(b"logits", 31, &[1, 8, 4])]);
            }),
        ),
        x(
            r::HOLO_EXT_DECODE.id,
            "an Extension with key_length 40 and a 3-byte key",
            with_extra(SectionKind::Extension, b"\x28\x00abc".to_vec()),
        ),
        x(
            r::HOLO_EXT_KEY_UTF8.id,
            "an Extension key that is not UTF-8",
            with_extra(SectionKind::Extension, b"\x02\x00\xC3\x28value".to_vec()),
        ),
        x(
            r::HOLO_EXT_KEY_UNIQUE.id,
            "two Extensions with key tokenizer",
            with_extra(SectionKind::Extension, b"\x09\x00tokenizerother".to_vec()),
        ),
        x(
            r::HOLO_WEIGHT_DECODE.id,
            "a weight body_length past the end of the section",
            frame(
                2,
                &[(SectionKind::Weights, {
                    let mut p = weights_payload(&[(big_fp, b"body".to_vec())]);
                    let at = 4 + 32;
                    p[at..at + 8].copy_from_slice(&5u64.to_le_bytes());
                    p
                })],
            ),
        ),
        x(
            r::HOLO_WEIGHT_HASH.id,
            "a weight body that does not hash to its fingerprint",
            frame(
                2,
                &[(
                    SectionKind::Weights,
                    weights_payload(&[(big_fp, b"bodY".to_vec())]),
                )],
            ),
        ),
        x(
            r::HOLO_WEIGHT_UNIQUE.id,
            "the same weight entry twice",
            frame(
                2,
                &[(
                    SectionKind::Weights,
                    weights_payload(&[(big_fp, b"body".to_vec()), (big_fp, b"body".to_vec())]),
                )],
            ),
        ),
        x(
            r::HOLO_CONST_DECODE.id,
            "an inline constant whose body_length runs past the section",
            with_payload(SectionKind::Constants, |p| {
                // The first entry is the 4-byte inline constant: tag, slot, dtype, length.
                p[10..14].copy_from_slice(&1000u32.to_le_bytes());
            }),
        ),
        x(
            r::HOLO_CONST_TAG.id,
            "a constant with tag 2",
            with_payload(SectionKind::Constants, |p| p[4] = 2),
        ),
        x(
            r::HOLO_CONST_REFERENCE.id,
            "a constant reference to a fingerprint Weights lacks",
            with_payload(SectionKind::Constants, |p| {
                // Second entry: after count (4) and the inline entry (10 + 4 bytes),
                // tag, slot and dtype (6 bytes) precede the fingerprint.
                let at = 4 + 14 + 6;
                p[at..at + 32].copy_from_slice(&[7; 32]);
            }),
        ),
        x(
            r::HOLO_SCHEDULE_DECODE.id,
            "a Schedule level with index_count 9 and two indices",
            with_payload(SectionKind::Schedule, |p| {
                p[4..8].copy_from_slice(&9u32.to_le_bytes());
            }),
        ),
        x(
            r::HOLO_EXEC_PLAN_DECODE.id,
            "an ExecPlan with level_count 1000",
            with_payload(SectionKind::ExecPlan, |p| {
                p[..4].copy_from_slice(&1000u32.to_le_bytes());
            }),
        ),
        x(
            r::HOLO_SHAPES_DECODE.id,
            "a ShapeRegistry entry cut short",
            with_payload(SectionKind::ShapeRegistry, |p| p.truncate(40)),
        ),
    ]
}

/// Every `.holo` corpus case.
pub fn cases() -> Vec<Case> {
    let mut cases = valid_cases();
    cases.extend(invalid_cases());
    cases
}

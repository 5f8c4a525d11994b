//! Checks of buffer handles against buffer-protocol.md, the normative reference for
//! them (it overrides metadata.md's older table: bytes 13 and 14 are `sync_mode` and
//! `memory_class`, only byte 15 is reserved).
//!
//! Each check takes parsed values (a descriptor, its absolute offset, and for the
//! file-level check the buffers' absolute offsets); none reads input bytes.

use crate::schema::{
    device_memory_pair_valid, is_private_tag, BufferHandle, TensorDescriptor, DEVICE_CPU,
    DEVICE_LAST_ASSIGNED, LAYOUT_BLOCK_PAGED, MEMORY_PEER, SYNC_LAST_DEFINED, SYNC_PRODUCER_SYNCED,
};

use crate::validate::rules::container::*;
use crate::validate::Report;

/// The handle fields of buffer `i`, whose handle starts at absolute offset `pos`:
/// alignment, reserved byte, sync mode, device tag, memory class and their pair.
pub fn check_handle(b: &BufferHandle, i: usize, pos: u64, report: &mut Report) {
    let empty = b.byte_size == 0;
    report.check(
        b.alignment.is_power_of_two() && (empty || b.alignment >= 64),
        &TD_BUF_ALIGN,
        pos + BufferHandle::ALIGNMENT,
        || {
            if empty {
                format!(
                    "buffer {i} (empty) alignment {} is not a power of two",
                    b.alignment
                )
            } else {
                format!(
                    "buffer {i} alignment {} is not a power of two >= 64",
                    b.alignment
                )
            }
        },
    );
    report.check(
        b.reserved == 0,
        &TD_BUF_RESERVED,
        pos + BufferHandle::RESERVED,
        || {
            format!(
                "buffer {i} reserved byte 15 is {:#04x}, expected 0",
                b.reserved
            )
        },
    );
    let sync_defined = report.check(
        b.sync_mode <= SYNC_LAST_DEFINED,
        &TD_BUF_SYNC,
        pos + BufferHandle::SYNC_MODE,
        || {
            format!(
                "buffer {i} sync_mode {:#04x} is not 0x00, 0x01 or 0x02",
                b.sync_mode
            )
        },
    );
    if sync_defined && b.device_tag == DEVICE_CPU {
        report.check(
            b.sync_mode == SYNC_PRODUCER_SYNCED,
            &TD_BUF_SYNC_CPU,
            pos + BufferHandle::SYNC_MODE,
            || {
                format!(
                    "buffer {i} is a CPU buffer with sync_mode {:#04x}; CPU buffers use 0x00 (SYNC_PRODUCER_SYNCED)",
                    b.sync_mode
                )
            },
        );
    }
    let device_known = b.device_tag <= DEVICE_LAST_ASSIGNED || is_private_tag(b.device_tag);
    report.check(
        device_known,
        &TD_BUF_DEVICE,
        pos + BufferHandle::DEVICE_TAG,
        || format!("buffer {i} device_tag {:#04x} is reserved", b.device_tag),
    );
    if is_private_tag(b.device_tag) {
        report.violation(
            &TD_BUF_DEVICE_PRIVATE,
            pos + BufferHandle::DEVICE_TAG,
            format!(
                "buffer {i} uses the private device_tag {:#04x}, which files exchanged between implementations must not carry without agreement",
                b.device_tag
            ),
        );
    }
    let class_known = b.memory_class <= MEMORY_PEER || is_private_tag(b.memory_class);
    report.check(
        class_known,
        &TD_BUF_MEMORY_CLASS,
        pos + BufferHandle::MEMORY_CLASS,
        || {
            format!(
                "buffer {i} memory_class {:#04x} is reserved",
                b.memory_class
            )
        },
    );
    // A reserved tag or class is its own rule's fault, not the pair's.
    if device_known && class_known {
        report.check(
            device_memory_pair_valid(b.device_tag, b.memory_class),
            &TD_BUF_PAIR,
            pos + BufferHandle::MEMORY_CLASS,
            || {
                format!(
                    "buffer {i}: memory_class {:#04x} is not valid for device_tag {:#04x}",
                    b.memory_class, b.device_tag
                )
            },
        );
    }
}

/// Every buffer of `d` (at absolute offset `at`) shares buffer 0's `device_tag` and
/// `memory_class`. Two cases belong to more specific rules and are left to them: a
/// block-paged tensor (`LY-BP-013`), and the `device_tag` of a quantization-parameter
/// buffer (`QZ-DEV-001`).
pub fn check_colocation(d: &TensorDescriptor, at: u64, report: &mut Report) {
    let Some(first) = d.buffers.first() else {
        return;
    };
    if d.layout_tag == LAYOUT_BLOCK_PAGED {
        return;
    }
    let params = d
        .quantization
        .as_ref()
        .and_then(|q| q.scheme())
        .map(|s| s.parameter_buffers())
        .unwrap_or_default();
    for (i, b) in d.buffers.iter().enumerate().skip(1) {
        let pos = at + d.buffer_pos(i);
        let device_differs = b.device_tag != first.device_tag && !params.contains(&(i as u32));
        if device_differs {
            report.violation(
                &TD_BUF_COLOCATION,
                pos + BufferHandle::DEVICE_TAG,
                format!(
                    "buffer {i} has device_tag {:#04x}; buffer 0 has {:#04x}",
                    b.device_tag, first.device_tag
                ),
            );
            return;
        }
        if b.memory_class != first.memory_class {
            report.violation(
                &TD_BUF_COLOCATION,
                pos + BufferHandle::MEMORY_CLASS,
                format!(
                    "buffer {i} has memory_class {:#04x}; buffer 0 has {:#04x}",
                    b.memory_class, first.memory_class
                ),
            );
            return;
        }
    }
}

/// In a file: every non-empty buffer of `d` (at absolute offset `at`) starts at an
/// absolute offset (`buffer_offsets[i]`) that is a multiple of its handle's
/// `alignment`, since the handle states the alignment the writer guarantees.
/// Alignments that are not powers of two are `TD-BUF-002`'s fault and skipped.
pub fn check_file_alignment(
    d: &TensorDescriptor,
    at: u64,
    buffer_offsets: &[u64],
    report: &mut Report,
) {
    for (i, (b, &offset)) in d.buffers.iter().zip(buffer_offsets).enumerate() {
        if b.byte_size == 0 || !b.alignment.is_power_of_two() {
            continue;
        }
        report.check(
            offset.is_multiple_of(u64::from(b.alignment)),
            &HF_PLC_BUFFER_OWN_ALIGN,
            at + d.buffer_pos(i) + BufferHandle::ALIGNMENT,
            || {
                format!(
                    "buffer {i} starts at file offset {offset}, not a multiple of its declared alignment {}",
                    b.alignment
                )
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::{Judging, Rules};

    fn handle(device_tag: u8, sync_mode: u8, memory_class: u8) -> BufferHandle {
        BufferHandle {
            byte_size: 8,
            alignment: 64,
            device_tag,
            sync_mode,
            memory_class,
            reserved: 0,
        }
    }

    fn ids(b: BufferHandle) -> Vec<&'static str> {
        let mut r = Report::default();
        check_handle(&b, 0, 100, &mut r);
        r.rule_ids()
    }

    #[test]
    fn every_table_pair_is_judged() {
        // buffer-protocol.md § Per-Device Validity, row by row (S, H, U, P).
        let table: [(u8, [bool; 4]); 9] = [
            (0x00, [true, true, true, false]),
            (0x01, [true, true, true, true]),
            (0x02, [true, true, true, true]),
            (0x03, [true, true, true, false]),
            (0x04, [true, true, true, true]),
            (0x05, [true, false, false, false]),
            (0x06, [true, true, true, false]),
            (0x07, [true, true, true, true]),
            (0x08, [true, true, true, false]),
        ];
        for (device, row) in table {
            for (class, &ok) in row.iter().enumerate() {
                assert_eq!(
                    device_memory_pair_valid(device, class as u8),
                    ok,
                    "device {device:#x} class {class}"
                );
                let got = ids(handle(device, 0, class as u8));
                assert_eq!(
                    got.is_empty(),
                    ok,
                    "device {device:#x} class {class}: {got:?}"
                );
            }
            assert!(!device_memory_pair_valid(device, 0xF0));
        }
        assert!(device_memory_pair_valid(0xF3, 0x00));
        assert!(device_memory_pair_valid(0xF3, 0xFE));
        assert!(!device_memory_pair_valid(0xF3, 0x01));
    }

    #[test]
    fn one_fault_one_rule() {
        assert_eq!(ids(handle(0xFF, 0, 0)), ["TD-BUF-011"]);
        assert_eq!(ids(handle(0x09, 0, 0)), ["TD-BUF-011"]);
        assert_eq!(ids(handle(0xF0, 0, 0)), ["TD-BUF-012"]);
        assert_eq!(ids(handle(0x00, 0, 0x04)), ["TD-BUF-009"]);
        assert_eq!(ids(handle(0x00, 0, 0xFF)), ["TD-BUF-009"]);
        assert_eq!(ids(handle(0x00, 0, 0xF0)), ["TD-BUF-010"]);
        assert_eq!(ids(handle(0x00, 3, 0)), ["TD-BUF-007"]);
        assert_eq!(ids(handle(0x00, 1, 0)), ["TD-BUF-008"]);
        assert!(ids(handle(0x01, 2, 0x03)).is_empty());
        let empty = BufferHandle {
            byte_size: 0,
            alignment: 1,
            ..BufferHandle::default()
        };
        assert!(ids(empty).is_empty());
        assert_eq!(
            ids(BufferHandle {
                alignment: 32,
                ..handle(0, 0, 0)
            }),
            ["TD-BUF-002"]
        );
        assert_eq!(
            ids(BufferHandle {
                reserved: 1,
                ..handle(0, 0, 0)
            }),
            ["TD-BUF-003"]
        );
    }

    #[test]
    fn private_tags_are_hardening_only() {
        let mut r = Report::new(Judging {
            rules: Rules::Permissive,
            ..Judging::default()
        });
        check_handle(&handle(0xF5, 0, 0xF9), 0, 0, &mut r);
        assert!(r.is_valid(), "{:?}", r.violations);
    }
}

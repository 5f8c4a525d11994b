//! Checks of one tensor descriptor on its own (metadata.md, element-types.md,
//! data-model.md, the composite head fields of layouts/composite.md).

use crate::layout::dense::{is_dense, lowest_bit_address};
use crate::model::ElementType;
use crate::schema::{
    descriptor_offsets as off, ExtensionType, LayoutFields, Statistics, TensorDescriptor,
    LAYOUT_COMPOSITE, LAYOUT_HILBERT, LAYOUT_ROW_MAJOR,
};

use crate::validate::rules::container::*;
use crate::validate::Report;

/// Runs every descriptor-level check on `d`, which starts at absolute offset `at`.
pub fn check_descriptor(d: &TensorDescriptor, at: u64, report: &mut Report) {
    check_header(d, at, report);
    check_buffers(d, at, report);
    check_sections(d, at, report);
    if let LayoutFields::Composite(_) = &d.layout {
        check_composite_head(d, at, report);
    }
}

fn check_header(d: &TensorDescriptor, at: u64, report: &mut Report) {
    // versioning.md § Compatibility Matrix: an unknown descriptor flag bit is
    // rejected at every minor version.
    let reserved = d.flags.reserved();
    report.check(reserved == 0, &TD_HDR_FLAGS, at + off::FLAGS, || {
        format!(
            "reserved descriptor flag bits are {:#x}, expected 0",
            reserved << 5
        )
    });
    report.check(
        ElementType::from_tag(d.type_tag).is_some(),
        &TD_TYP_TAG,
        at + off::TYPE_TAG,
        || {
            format!(
                "type_tag {:#04x} is not an assigned element type",
                d.type_tag
            )
        },
    );
    // A dynamic quantization axis breaks its scheme's rule (QC/QB/QN/QM-AXS-002, spec
    // level), reported there; this hardening rule covers the other dimensions.
    let quant_axis = d
        .quantization
        .as_ref()
        .and_then(|q| q.scheme())
        .and_then(|s| s.axis())
        .map(|a| a as usize);
    let dynamic = (0..d.shape.len()).find(|&k| d.shape[k] == u64::MAX && Some(k) != quant_axis);
    if let Some(k) = dynamic {
        report.violation(
            &TD_SHP_DYNAMIC,
            at + off::SHAPE + 8 * k as u64,
            format!("shape[{k}] is the dynamic sentinel; a stored tensor needs a concrete size"),
        );
    }
    report.check(
        !d.shape.is_empty() || d.layout_tag == LAYOUT_ROW_MAJOR,
        &TD_LAY_SCALAR,
        at + off::LAYOUT_TAG,
        || {
            format!(
                "a rank-0 tensor must be row-major (0x01), found layout {:#04x}",
                d.layout_tag
            )
        },
    );
    if let LayoutFields::Extension(e) = &d.layout {
        if report.rules().is_strict() {
            report.violation(
                &TD_LAY_EXT_ID,
                at + d.layout_pos(),
                format!(
                    "extension layout {:#04x} id {:#x} is not recognised by this reader",
                    d.layout_tag, e.extension_layout_id
                ),
            );
        }
    }
    let is_ext_tag = (0xF0..=0xFE).contains(&d.type_tag);
    report.check(
        is_ext_tag == d.flags.has_extension_type(),
        &TD_EXT_FLAG,
        at + off::FLAGS,
        || {
            format!(
                "HAS_EXTENSION_TYPE is {} but type_tag {:#04x} {} an extension tag",
                d.flags.has_extension_type(),
                d.type_tag,
                if is_ext_tag { "is" } else { "is not" }
            )
        },
    );
}

fn check_buffers(d: &TensorDescriptor, at: u64, report: &mut Report) {
    let count = d.buffers.len();
    let quantized = d.quantization.is_some();
    let (ok, expected) = if d.layout_tag == LAYOUT_COMPOSITE {
        (count == 0, "exactly 0 for a composite head")
    } else if is_dense(d.layout_tag) && !quantized {
        (count == 1, "exactly 1 for an unquantized dense layout")
    } else {
        (count >= 1, "at least 1")
    };
    report.check(ok, &TD_BUF_COUNT, at + d.buffer_table_pos(), || {
        format!("buffer_count is {count}, expected {expected}")
    });
    for (i, b) in d.buffers.iter().enumerate() {
        super::buffer::check_handle(b, i, at + d.buffer_pos(i), report);
    }
    super::buffer::check_colocation(d, at, report);
    if let Some(b0) = d.buffers.first() {
        report.check(
            d.byte_offset <= b0.byte_size,
            &TD_BUF_BYTE_OFFSET,
            at + d.byte_offset_pos(),
            || {
                format!(
                    "byte_offset {} exceeds buffer 0 size {}",
                    d.byte_offset, b0.byte_size
                )
            },
        );
        let fits = d.byte_offset <= b0.byte_size;
        if let (Some(need), true) = (minimum_buffer_size(d), fits) {
            report.check(
                b0.byte_size >= need,
                &TD_BUF_SIZE,
                at + d.buffer_pos(0),
                || {
                    format!(
                        "buffer 0 holds {} bytes; shape {:?} of type {:#04x} needs at least {need}",
                        b0.byte_size, d.shape, d.type_tag
                    )
                },
            );
        }
    }
    if let Some(o) = oversized_buffer(d) {
        report.violation(&TD_BUF_OVERSIZED, at + d.buffer_pos(0), o.message(d));
    }
}

/// An unquantized dense tensor whose buffer 0 holds more than its elements need
/// (`TD-BUF-014`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Oversized {
    /// Buffer 0's `byte_size`.
    pub byte_size: u64,
    /// What shape, type and layout need: `byte_offset` plus the packed elements
    /// (strided: up to the highest element the strides reach).
    pub needed: u64,
    /// The type is bool or sub-byte and `byte_size` is the element count: the data
    /// looks stored one byte per element instead of packed.
    pub one_byte_per_element: bool,
}

/// `Some` when `d` is an unquantized dense tensor whose buffer 0 is larger than
/// `minimum_buffer_size`; `None` otherwise, and where the size is not defined,
/// `byte_offset` already lies past the buffer (`TD-BUF-004`) or strides reach
/// below the buffer's start (`LY-STR-001`): one fault, one report.
pub fn oversized_buffer(d: &TensorDescriptor) -> Option<Oversized> {
    let b0 = d.buffers.first()?;
    if d.byte_offset > b0.byte_size || lowest_bit_address(d).is_some_and(|lo| lo < 0) {
        return None;
    }
    let needed = minimum_buffer_size(d)?;
    if b0.byte_size <= needed {
        return None;
    }
    let bits = crate::layout::element_bits(d).ok()?;
    let count = crate::model::element_count(&d.shape);
    Some(Oversized {
        byte_size: b0.byte_size,
        needed,
        one_byte_per_element: bits < 8 && count == Some(b0.byte_size),
    })
}

impl Oversized {
    /// The violation's text: the sizes and, for data stored one byte per element,
    /// what a reader makes of it.
    pub fn message(&self, d: &TensorDescriptor) -> String {
        let (size, need) = (self.byte_size, self.needed);
        let name = ElementType::from_tag(d.type_tag).map_or("?", ElementType::name);
        let mut text = format!(
            "buffer 0 holds {size} bytes; shape {:?} of type {name} ({:#04x}) needs exactly \
             {need}, so {} bytes are never read",
            d.shape,
            d.type_tag,
            size - need
        );
        if self.one_byte_per_element {
            let bits = crate::layout::element_bits(d).unwrap_or(1);
            let packing = if bits == 6 {
                "4 to every 3 bytes".to_string()
            } else {
                format!("{} to a byte, lowest bits first", 8 / bits)
            };
            text.push_str(&format!(
                "; {size} is the element count: the data looks stored one byte per element, \
                 but {bits}-bit {name} elements are packed ({packing}), so a reader takes \
                 all {size} elements from the first {need} bytes (element 1 from byte 0, not \
                 byte 1) and sees other values than the writer meant"
            ));
        }
        text
    }
}

/// Smallest buffer 0 (byte_offset included) an unquantized dense tensor needs
/// ([`crate::layout::required_buffer_size`]); `None` where this check does not apply
/// (other layouts, quantized data, dynamic dimensions, unknown types, layout fields
/// that the layout rules reject, and Hilbert buffers, whose exact size is
/// `LY-HIL-005`'s).
pub(crate) fn minimum_buffer_size(d: &TensorDescriptor) -> Option<u64> {
    if d.quantization.is_some() || d.shape.contains(&u64::MAX) || d.layout_tag == LAYOUT_HILBERT {
        return None;
    }
    crate::layout::required_buffer_size(d)
}

fn check_sections(d: &TensorDescriptor, at: u64, report: &mut Report) {
    if let Some(q) = &d.quantization {
        report.check(
            q.bytes().len() >= 4,
            &TD_QNT_HEADER,
            at + d.quantization_pos(),
            || {
                format!(
                    "quantization_length is {}, shorter than the 4-byte scheme header",
                    q.bytes().len()
                )
            },
        );
    }
    if let Some(s) = &d.shard {
        let base = at + d.shard_pos();
        let rank = d.shape.len() as u64;
        for (k, ((&p, &o), &n)) in s
            .parent_shape
            .iter()
            .zip(&s.shard_offset)
            .zip(&d.shape)
            .enumerate()
        {
            // A sentinel is TD-SHD-002's fault; the bounds of that dimension are not
            // judged on it.
            let sentinel = [(p, 0), (o, rank)]
                .into_iter()
                .find(|&(v, _)| v == u64::MAX);
            if let Some((_, field)) = sentinel {
                let name = if field == 0 {
                    "parent_shape"
                } else {
                    "shard_offset"
                };
                report.violation(
                    &TD_SHD_DYNAMIC,
                    base + 8 * (field + k as u64),
                    format!("{name}[{k}] is the dynamic dimension sentinel 2^64-1"),
                );
                continue;
            }
            let fits = o.checked_add(n).is_some_and(|end| end <= p);
            report.check(fits, &TD_SHD_BOUNDS, base + 8 * (rank + k as u64), || {
                format!("dimension {k}: shard_offset {o} + shape {n} exceeds parent_shape {p}")
            });
        }
    }
    if let Some(s) = &d.statistics {
        check_statistics(s, at + d.statistics_pos(), report);
    }
    if let Some(e) = &d.extension_type {
        check_extension_type(e, at + d.extension_type_pos(), report);
    }
    if let Some(m) = &d.composite_member {
        let base = at + d.composite_member_pos();
        report.check(m.member_role <= 1, &TD_MEM_ROLE, base, || {
            format!("member_role {:#04x} is not 0x00 or 0x01", m.member_role)
        });
        report.check(m.reserved == [0; 15], &TD_MEM_RESERVED, base + 1, || {
            "composite member reserved bytes are not zero".into()
        });
    }
}

fn check_statistics(s: &Statistics, at: u64, report: &mut Report) {
    let mask = s.computed_mask;
    report.check(
        mask & !Statistics::DEFINED_MASK == 0,
        &TD_STA_MASK,
        at,
        || format!("computed_mask {mask:#x} sets reserved bits 6-31"),
    );
    report.check(s.reserved == 0, &TD_STA_RESERVED, at + 4, || {
        format!("statistics _reserved is {:#x}, expected 0", s.reserved)
    });
    report.check(s.reserved2 == [0; 4], &TD_STA_RESERVED, at + 68, || {
        "statistics _reserved2 bytes are not zero".into()
    });
    if mask & Statistics::SPARSITY_VALID != 0 {
        report.check(
            (0.0..=1.0).contains(&s.sparsity_ratio),
            &TD_STA_SPARSITY,
            at + 16,
            || format!("sparsity_ratio {} is outside [0, 1]", s.sparsity_ratio),
        );
    }
    if mask & Statistics::VALUE_STATS_VALID != 0 {
        report.check(s.value_stddev >= 0.0, &TD_STA_STDDEV, at + 56, || {
            format!("value_stddev {} is below 0", s.value_stddev)
        });
    }
    if mask & Statistics::NM_SPARSITY_VALID != 0 {
        report.check(s.nm_n <= s.nm_m, &TD_STA_NM, at + 64, || {
            format!("nm_n {} exceeds nm_m {}", s.nm_n, s.nm_m)
        });
    }
    if mask & Statistics::NAN_INF_VALID != 0 {
        report.check(
            s.has_nan <= 1 && s.has_inf <= 1,
            &TD_STA_BOOL,
            at + 66,
            || {
                format!(
                    "has_nan {} / has_inf {} are not 0 or 1",
                    s.has_nan, s.has_inf
                )
            },
        );
    }
}

fn check_extension_type(e: &ExtensionType, at: u64, report: &mut Report) {
    report.check(e.bit_width > 0, &TD_EXT_WIDTH, at, || {
        "bit_width is 0".into()
    });
    let packing_ok = match e.bit_width {
        0 => true,
        w if w >= 8 => w % 8 == 0 && e.packing_factor == 1,
        w => matches!(w, 1 | 2 | 4) && u32::from(e.packing_factor) == 8 / w,
    };
    report.check(packing_ok, &TD_EXT_PACKING, at + 4, || {
        format!(
            "bit_width {} with packing_factor {} is not whole-byte with packing 1 or 1/2/4 bits with packing 8/bit_width",
            e.bit_width, e.packing_factor
        )
    });
    let kind_ok = match e.is_float {
        0 => {
            e.sign_bits == 0 && e.exponent_bits == 0 && e.mantissa_bits == 0 && e.exponent_bias == 0
        }
        1 => e.is_signed == 0 && e.sign_bits <= 1,
        _ => false,
    } && e.is_signed <= 1;
    report.check(kind_ok, &TD_EXT_KIND, at + 5, || {
        format!(
            "is_float {} / is_signed {} / sign {} exponent {} mantissa {} bias {} are inconsistent",
            e.is_float, e.is_signed, e.sign_bits, e.exponent_bits, e.mantissa_bits, e.exponent_bias
        )
    });
    report.check(
        e.reserved == [0; 2] && e.reserved2 == [0; 2],
        &TD_EXT_RESERVED,
        at + 10,
        || "extension type reserved bytes are not zero".into(),
    );
}

/// The rules of a composite head's layout fields and of what a head must not
/// have (quantization, data), for the descriptor at offset `at`.
pub(crate) fn check_composite_head(d: &TensorDescriptor, at: u64, report: &mut Report) {
    let LayoutFields::Composite(c) = &d.layout else {
        return;
    };
    let base = at + d.layout_pos();
    let rule_ok = match c.composition_rule {
        1..=3 => true,
        0xF0..=0xFE => !report.rules().is_strict(),
        _ => false,
    };
    report.check(rule_ok, &TD_CMP_RULE, base, || {
        format!(
            "composition_rule {:#04x} is not 1, 2 or 3",
            c.composition_rule
        )
    });
    let combine_ok = match c.composition_rule {
        2 => matches!(c.combine_op, 1 | 2),
        1 | 3 => c.combine_op == 0,
        _ => true,
    };
    report.check(combine_ok, &TD_CMP_COMBINE, base + 1, || {
        format!(
            "combine_op {:#04x} does not fit composition_rule {:#04x}",
            c.combine_op, c.composition_rule
        )
    });
    report.check(c.reserved == [0; 2], &TD_CMP_RESERVED, base + 2, || {
        "composite head reserved bytes are not zero".into()
    });
    report.check(c.member_count != u32::MAX, &TD_CMP_OPEN, base + 4, || {
        "member_count is 0xFFFFFFFF (an open composite)".into()
    });
    report.check(
        !d.flags.has_quantization(),
        &TD_CMP_QUANTIZATION,
        at + off::FLAGS,
        || "a composite head sets HAS_QUANTIZATION; it has no data to dequantize".into(),
    );
    report.check(
        d.byte_offset == 0,
        &TD_CMP_BYTE_OFFSET,
        at + d.byte_offset_pos(),
        || {
            format!(
                "a composite head's byte_offset must be 0, found {}",
                d.byte_offset
            )
        },
    );
}

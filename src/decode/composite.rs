//! Composite binding rules shared by every container that carries composites
//! positionally: files (the tensor region), bare streams and transport
//! conversations.

use crate::layout::composite::Binding;
use crate::schema::{descriptor_offsets as off, LayoutFields, TensorDescriptor};

use crate::validate::rules::container::{HF_CMP_DEPTH, HF_CMP_MEMBER_SECTION};
use crate::validate::Report;

/// The binding rules of one tensor (`d` at `at`, just bound as `bound`): only
/// overlay members carry a composite member section (`HF-CMP-004`), and nesting
/// stays within `max_depth` (`HF-CMP-002`). Shared by files, bare streams and
/// transport conversations.
pub fn check_binding<T>(
    d: &TensorDescriptor,
    at: u64,
    bound: &Binding<T>,
    max_depth: u32,
    report: &mut Report,
) {
    let has_member = d.composite_member.is_some();
    let is_head = matches!(d.layout, LayoutFields::Composite(_));
    match bound.member_of {
        Some(rule) => {
            let overlay = rule == 2;
            report.check(
                has_member == overlay || (is_head && !has_member),
                &HF_CMP_MEMBER_SECTION,
                at + off::FLAGS,
                || {
                    if overlay {
                        "a member of an overlay composite must carry a composite member section"
                            .into()
                    } else {
                        "a partition or group member must not carry a composite member section"
                            .into()
                    }
                },
            );
            if is_head && has_member {
                report.violation(
                    &HF_CMP_MEMBER_SECTION,
                    at + off::FLAGS,
                    "a composite head must not carry a composite member section",
                );
            }
        }
        None => {
            report.check(!has_member, &HF_CMP_MEMBER_SECTION, at + off::FLAGS, || {
                "a tensor outside any composite carries a composite member section".into()
            });
        }
    }
    if bound.opened && bound.depth as u64 > u64::from(max_depth) {
        report.violation(
            &HF_CMP_DEPTH,
            at,
            format!(
                "composite nesting depth {} exceeds {max_depth}",
                bound.depth
            ),
        );
    }
}

//! The rules one tensor answers to, in one sequence for every container that
//! carries tensors (a file's tensor region, a bare stream, a transport
//! conversation): the descriptor's own rules, its quantization, its layout, then
//! its place in a composite.

use crate::layout::composite::Binder;
use crate::limits::Limits;
use crate::schema::TensorDescriptor;
use crate::validate::Report;

use super::composite::check_binding;
use super::descriptor::check_descriptor;
use super::input::Buffers;

/// A tensor's stored bytes as the per-tensor rules read them.
#[derive(Clone, Copy)]
pub(crate) struct Data<'a> {
    /// The tensor's buffers, in buffer table order.
    pub buffers: Buffers<'a>,
    /// The absolute offset of each buffer, when known: violations in stored values
    /// are then reported at the offending bytes.
    pub offsets: Option<&'a [u64]>,
}

/// Applies the rules the tensor `d` (its descriptor at absolute offset `at`)
/// answers to on its own: the descriptor's rules, then the quantization rules,
/// then the layout rules, the last two reading the stored values in `data` when
/// given (a container that has only the descriptor passes `None`).
pub(crate) fn check_tensor(
    d: &TensorDescriptor,
    at: u64,
    data: Option<Data<'_>>,
    limits: &Limits,
    report: &mut Report,
) {
    check_descriptor(d, at, report);
    check_stored(d, at, data, limits, report);
}

/// The quantization and layout rules of [`check_tensor`], for a caller that has
/// applied the descriptor's rules already.
pub(crate) fn check_stored(
    d: &TensorDescriptor,
    at: u64,
    data: Option<Data<'_>>,
    limits: &Limits,
    report: &mut Report,
) {
    let (buffers, offsets) = match data {
        Some(data) => (Some(data.buffers), data.offsets),
        None => (None, None),
    };
    super::quant::check_buffers(d, at, buffers, offsets, report);
    super::layout::check_buffers(d, at, buffers, offsets, limits, report);
}

/// How the items a [`Binder`] holds name their tensors.
pub(crate) trait Members<T> {
    /// The descriptor of `item` and its absolute offset.
    fn member<'a>(&'a self, item: &'a T) -> (&'a TensorDescriptor, u64);
}

/// Items that are the tensor itself: its descriptor offset and descriptor.
pub(crate) struct Owned;

impl Members<(u64, TensorDescriptor)> for Owned {
    fn member<'a>(&'a self, item: &'a (u64, TensorDescriptor)) -> (&'a TensorDescriptor, u64) {
        (&item.1, item.0)
    }
}

/// Binds the tensor `d` (at `at`, held in `binder` as `item`) into the composites
/// open before it and applies the composite rules: its binding (member section,
/// nesting depth) and, for every composite it completes, the assembly of its
/// members (`members` names them).
#[allow(clippy::too_many_arguments)]
pub(crate) fn bind_composite<T: Clone>(
    binder: &mut Binder<T>,
    item: T,
    d: &TensorDescriptor,
    at: u64,
    members: &impl Members<T>,
    limits: &Limits,
    report: &mut Report,
) {
    let bound = binder.bind(item, d, at);
    check_binding(d, at, &bound, limits.max_composite_depth, report);
    for done in &bound.closed {
        let parts: Vec<(&TensorDescriptor, u64)> =
            done.members.iter().map(|m| members.member(m)).collect();
        let (head, head_at) = members.member(&done.head);
        super::layout::check_composite(head, head_at, &parts, report);
    }
}

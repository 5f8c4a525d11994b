//! Composite tensors: assembling partition and replace-overlay members into the
//! head's logical row-major view (layouts/composite.md § Composition Semantics).

use crate::schema::{TensorDescriptor, LAYOUT_COMPOSITE};

use super::bits::{read_bits, write_bits};
use super::dense::row_major_len;
use super::{element_bits, logical_row_major, LayoutError};

/// `composition_rule` partition.
pub const PARTITION: u8 = 0x01;
/// `composition_rule` overlay.
pub const OVERLAY: u8 = 0x02;
/// `composition_rule` group.
pub const GROUP: u8 = 0x03;
/// `combine_op` replace (later members win).
pub const COMBINE_REPLACE: u8 = 0x01;
/// `combine_op` add.
pub const COMBINE_ADD: u8 = 0x02;

/// One member of a composite: its descriptor and borrowed buffers.
#[derive(Clone, Copy, Debug)]
pub struct Member<'a> {
    /// The member's descriptor.
    pub desc: &'a TensorDescriptor,
    /// Its buffers, in buffer table order.
    pub buffers: &'a [&'a [u8]],
}

/// The logical view of a partition or replace-overlay composite as packed row-major
/// bytes of the head's element type (at most `limit` bytes).
///
/// Members are taken in emission order; each must be an unquantized dense or sparse
/// tensor of the head's `type_tag` with a shard section placing it inside the head.
/// Later members overwrite earlier ones, which is the replace overlay's rule and
/// has no effect on a partition (whose boxes do not overlap). Indices no member
/// covers stay zero.
pub fn assemble(
    head: &TensorDescriptor,
    members: &[Member],
    limit: u64,
) -> Result<Vec<u8>, LayoutError> {
    let crate::schema::LayoutFields::Composite(fields) = &head.layout else {
        return Err(LayoutError::Unsupported {
            tag: head.layout_tag,
        });
    };
    match (fields.composition_rule, fields.combine_op) {
        (PARTITION, _) | (OVERLAY, COMBINE_REPLACE) => {}
        (rule, op) => {
            return Err(LayoutError::Field {
                field: "composition_rule",
                detail: format!(
                    "rule {rule:#04x} with combine_op {op:#04x} cannot be assembled by copying"
                ),
            })
        }
    }
    let width = element_bits(head)?;
    let len = row_major_len(head, width, limit)?;
    let mut out = vec![0u8; len];
    let rank = head.shape.len();
    let mut parent_strides = vec![1u64; rank];
    for k in (0..rank.saturating_sub(1)).rev() {
        parent_strides[k] = parent_strides[k + 1].saturating_mul(head.shape[k + 1]);
    }
    for (m, member) in members.iter().enumerate() {
        let desc = member.desc;
        let bad = |detail: String| LayoutError::Field {
            field: "member",
            detail: format!("member {m}: {detail}"),
        };
        if desc.layout_tag == LAYOUT_COMPOSITE {
            return Err(bad(
                "nested composites are assembled by their own head first".into(),
            ));
        }
        if desc.type_tag != head.type_tag || desc.flags.has_quantization() {
            return Err(bad(format!(
                "stored type {:#04x} is not the head's {:#04x}",
                desc.type_tag, head.type_tag
            )));
        }
        let shard = desc
            .shard
            .as_ref()
            .ok_or_else(|| bad("no shard section".into()))?;
        if desc.shape.len() != rank
            || shard.shard_offset.len() != rank
            || (0..rank).any(|k| {
                shard.shard_offset[k]
                    .checked_add(desc.shape[k])
                    .is_none_or(|end| end > head.shape[k])
            })
        {
            return Err(bad("box lies outside the head's shape".into()));
        }
        let local = logical_row_major(desc, member.buffers, limit)?;
        let count = crate::model::element_count(&desc.shape).unwrap_or(0);
        let mut index = vec![0u64; rank];
        for i in 0..count {
            let target: u64 = (0..rank)
                .map(|k| (shard.shard_offset[k] + index[k]) * parent_strides[k])
                .sum();
            let w = u64::from(width);
            let value = read_bits(&local, i * w, width).ok_or(LayoutError::Overflow {
                what: "member element",
            })?;
            write_bits(&mut out, target * w, width, value).ok_or(LayoutError::Overflow {
                what: "parent element",
            })?;
            for k in (0..rank).rev() {
                index[k] += 1;
                if index[k] < desc.shape[k] {
                    break;
                }
                index[k] = 0;
            }
        }
    }
    Ok(out)
}

/// A composite still waiting for members, as tracked by [`Binder`].
#[derive(Clone, Debug)]
pub struct OpenComposite<T> {
    /// The head's item (what the caller passed to [`Binder::bind`]).
    pub head: T,
    /// Where the head's descriptor starts.
    pub head_offset: u64,
    /// The head's `composition_rule`.
    pub composition_rule: u8,
    /// Members still to come.
    pub remaining: u32,
    /// The direct members bound so far, in order.
    pub members: Vec<T>,
}

/// Where [`Binder::bind`] placed a tensor.
#[derive(Clone, Debug)]
pub struct Binding<T> {
    /// The `composition_rule` of the composite the tensor is a direct member of;
    /// `None` outside any composite.
    pub member_of: Option<u8>,
    /// Open composites after this tensor (its own, if it is a head with members).
    pub depth: usize,
    /// Composites this tensor completed, innermost first (a head with
    /// `member_count` 0 completes itself).
    pub closed: Vec<OpenComposite<T>>,
}

/// Positional binding of composite members (layouts/composite.md § Binding): a head
/// with `member_count = N` binds the next N tensors, a member that is itself a head
/// binds its own members first (pre-order). Fed one tensor at a time, so files,
/// bare streams and transport conversations share it; holds nothing but the open
/// composites and their members' items.
#[derive(Clone, Debug)]
pub struct Binder<T> {
    open: Vec<OpenComposite<T>>,
}

impl<T> Default for Binder<T> {
    fn default() -> Self {
        Binder { open: Vec::new() }
    }
}

impl<T: Clone> Binder<T> {
    /// An empty binder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Binds the next tensor, `desc` at `offset`, carried as `item`.
    pub fn bind(&mut self, item: T, desc: &TensorDescriptor, offset: u64) -> Binding<T> {
        let member_of = self.open.last_mut().map(|top| {
            top.remaining -= 1;
            top.members.push(item.clone());
            top.composition_rule
        });
        let mut closed = Vec::new();
        if let crate::schema::LayoutFields::Composite(c) = &desc.layout {
            // An open composite (0xFFFFFFFF) is refused by TD-CMP-004; binding it
            // would swallow the rest of the input, so it binds nothing.
            let head = OpenComposite {
                head: item,
                head_offset: offset,
                composition_rule: c.composition_rule,
                remaining: if c.member_count == u32::MAX {
                    0
                } else {
                    c.member_count
                },
                members: Vec::new(),
            };
            if head.remaining == 0 {
                closed.push(head);
            } else {
                self.open.push(head);
            }
        }
        let depth = self.open.len();
        while self.open.last().is_some_and(|t| t.remaining == 0) {
            closed.extend(self.open.pop());
        }
        Binding {
            member_of,
            depth,
            closed,
        }
    }

    /// The outermost composite still waiting for members, if any: at the end of the
    /// input, a torn composite.
    pub fn outermost_open(&self) -> Option<&OpenComposite<T>> {
        self.open.first()
    }

    /// True when no composite waits for members.
    pub fn is_idle(&self) -> bool {
        self.open.is_empty()
    }
}

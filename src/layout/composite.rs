//! Composite tensors: assembling partition and replace-overlay members into the
//! head's logical row-major view (layouts/composite.md § Composition Semantics).

use crate::schema::{TensorDescriptor, LAYOUT_COMPOSITE};

use super::bits::{read_bits, write_bits};
use super::dense::row_major_len;
use super::element::element_bits;
use super::error;
use super::logical_row_major;
use crate::error::Broken;
use crate::error::Error;

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
pub fn assemble(head: &TensorDescriptor, members: &[Member], limit: u64) -> Result<Vec<u8>, Error> {
    let crate::schema::LayoutFields::Composite(fields) = &head.layout else {
        return Err(error::unsupported_layout(head.layout_tag));
    };
    match (fields.composition_rule, fields.combine_op) {
        (PARTITION, _) | (OVERLAY, COMBINE_REPLACE) => {}
        (rule, op) => {
            return Err(Error::Unsupported(format!(
            "composition_rule {rule:#04x} with combine_op {op:#04x} cannot be assembled by copying"
        )))
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
        let bad =
            |rule, detail: String| error::field(rule, "member", format!("member {m}: {detail}"));
        if desc.layout_tag == LAYOUT_COMPOSITE {
            return Err(Error::Unsupported(format!(
                "member {m}: nested composites are assembled by their own head first"
            )));
        }
        if desc.flags.has_quantization() {
            return Err(Error::Unsupported(format!(
                "member {m}: a quantized member is not assembled by copying"
            )));
        }
        if desc.type_tag != head.type_tag {
            return Err(bad(
                Broken::MemberType,
                format!(
                    "stored type {:#04x} is not the head's {:#04x}",
                    desc.type_tag, head.type_tag
                ),
            ));
        }
        let shard = desc
            .shard
            .as_ref()
            .ok_or_else(|| bad(Broken::MemberShard, "no shard section".into()))?;
        if desc.shape.len() != rank
            || shard.shard_offset.len() != rank
            || (0..rank).any(|k| {
                shard.shard_offset[k]
                    .checked_add(desc.shape[k])
                    .is_none_or(|end| end > head.shape[k])
            })
        {
            return Err(bad(
                Broken::ShardBounds,
                "box lies outside the head's shape".into(),
            ));
        }
        let local = logical_row_major(desc, member.buffers, limit)?;
        let count = crate::model::element_count(&desc.shape).unwrap_or(0);
        let mut index = vec![0u64; rank];
        for i in 0..count {
            let target: u64 = (0..rank)
                .map(|k| (shard.shard_offset[k] + index[k]) * parent_strides[k])
                .sum();
            let w = u64::from(width);
            let value =
                read_bits(&local, i * w, width).ok_or_else(|| error::overflow("member element"))?;
            write_bits(&mut out, target * w, width, value)
                .ok_or_else(|| error::overflow("parent element"))?;
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
    /// True when this tensor is a head that opened a composite (it has members).
    pub opened: bool,
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
        let mut opened = false;
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
                opened = true;
            }
        }
        let depth = self.open.len();
        while self.open.last().is_some_and(|t| t.remaining == 0) {
            closed.extend(self.open.pop());
        }
        Binding {
            member_of,
            depth,
            opened,
            closed,
        }
    }

    /// The outermost composite still waiting for members, if any: at the end of the
    /// input, a torn composite.
    pub fn outermost_open(&self) -> Option<&OpenComposite<T>> {
        self.open.first()
    }

    /// The innermost composite still waiting for members: the one the next tensor
    /// will be a member of.
    pub fn innermost_open(&self) -> Option<&OpenComposite<T>> {
        self.open.last()
    }

    /// How many composites are waiting for members: the nesting depth of the next
    /// tensor.
    pub fn depth(&self) -> usize {
        self.open.len()
    }

    /// True when no composite waits for members.
    pub fn is_idle(&self) -> bool {
        self.open.is_empty()
    }
}

/// A box inside a parent shape: the caller's index for it, its offset and its
/// shape (a composite member's or a parallel-transfer shard's `shard_offset` and
/// `shape`).
pub type ShardBox<'a> = (usize, &'a [u64], &'a [u64]);

/// How a set of boxes fails to partition a shape exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartitionFault {
    /// Two boxes share an index (`first < second`, the callers' indices).
    Overlap {
        /// The earlier box.
        first: usize,
        /// The later box, which is blamed.
        second: usize,
    },
    /// The boxes, pairwise disjoint, cover `covered` of the `total` indices.
    Cover {
        /// Indices covered.
        covered: u128,
        /// Indices of the shape.
        total: u128,
    },
}

/// Whether `boxes`, each lying inside `shape`, partition it (layouts/composite.md
/// § Validation, interchange.md § Shard Consistency): the first overlap found,
/// else — when `judge_cover` (every box is known to be placed) — a shortfall in
/// coverage. Empty boxes hold no index, so they neither overlap nor cover. A
/// sweep along dimension 0 keeps it near-linear in the number of boxes.
pub fn partition_fault(
    shape: &[u64],
    boxes: &[ShardBox<'_>],
    judge_cover: bool,
) -> Option<PartitionFault> {
    let mut live: Vec<&ShardBox<'_>> = boxes.iter().filter(|(_, _, s)| !s.contains(&0)).collect();
    let rank = shape.len();
    let overlaps = |a: &ShardBox<'_>, b: &ShardBox<'_>| {
        (0..rank).all(|k| a.1[k] < b.1[k] + b.2[k] && b.1[k] < a.1[k] + a.2[k])
    };
    let ordered = |a: usize, b: usize| {
        let (first, second) = if a < b { (a, b) } else { (b, a) };
        PartitionFault::Overlap { first, second }
    };
    if rank == 0 {
        // Every rank-0 box is the single index.
        if live.len() > 1 {
            return Some(ordered(live[0].0, live[1].0));
        }
    } else {
        live.sort_by_key(|b| (b.1[0], b.0));
        let mut open: Vec<&ShardBox<'_>> = Vec::new();
        for b in &live {
            open.retain(|a| a.1[0] + a.2[0] > b.1[0]);
            if let Some(a) = open.iter().find(|a| overlaps(a, b)) {
                return Some(ordered(a.0, b.0));
            }
            open.push(b);
        }
    }
    if !judge_cover {
        return None;
    }
    let volume = |shape: &[u64]| {
        shape
            .iter()
            .try_fold(1u128, |acc, &n| acc.checked_mul(u128::from(n)))
    };
    let covered = live
        .iter()
        .try_fold(0u128, |acc, b| acc.checked_add(volume(b.2)?))?;
    let total = volume(shape)?;
    (covered != total).then_some(PartitionFault::Cover { covered, total })
}

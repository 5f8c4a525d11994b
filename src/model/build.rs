//! Convenience constructors for common descriptors.

use crate::schema::{
    BufferHandle, CompositeFields, DescriptorFlags, LayoutFields, TensorDescriptor,
    LAYOUT_COMPOSITE, LAYOUT_ROW_MAJOR,
};

use super::{element_count, ElementType};

/// Default buffer alignment written into buffer handles.
pub const DEFAULT_BUFFER_ALIGNMENT: u32 = 64;

/// A descriptor with no optional sections, the given layout fields and buffer
/// sizes (alignment 64, CPU), with `descriptor_length` set.
pub fn descriptor(
    type_tag: u8,
    layout_tag: u8,
    shape: &[u64],
    layout: LayoutFields,
    buffer_sizes: &[u64],
) -> TensorDescriptor {
    let mut d = TensorDescriptor {
        version_major: 1,
        version_minor: 0,
        descriptor_length: 0,
        flags: DescriptorFlags::new(),
        type_tag,
        layout_tag,
        shape: shape.to_vec(),
        byte_offset: 0,
        layout,
        buffers: buffer_sizes
            .iter()
            .map(|&byte_size| BufferHandle {
                byte_size,
                alignment: DEFAULT_BUFFER_ALIGNMENT,
                ..BufferHandle::default()
            })
            .collect(),
        quantization: None,
        shard: None,
        statistics: None,
        extension_type: None,
        composite_member: None,
        trailing: Vec::new(),
    };
    d.fix_length();
    d
}

/// A row-major descriptor for `shape` of `ty` with one buffer of exactly the
/// minimum size. `None` when the size overflows or `ty` has no built-in width.
pub fn dense(ty: ElementType, shape: &[u64]) -> Option<TensorDescriptor> {
    let size = ty.buffer_size(element_count(shape)?)?;
    Some(descriptor(
        ty.tag(),
        LAYOUT_ROW_MAJOR,
        shape,
        LayoutFields::Implicit,
        &[size],
    ))
}

/// A composite head: `composition_rule` 1 partition, 2 overlay, 3 group.
pub fn composite_head(
    ty: ElementType,
    shape: &[u64],
    composition_rule: u8,
    combine_op: u8,
    member_count: u32,
) -> TensorDescriptor {
    descriptor(
        ty.tag(),
        LAYOUT_COMPOSITE,
        shape,
        LayoutFields::Composite(CompositeFields {
            composition_rule,
            combine_op,
            reserved: [0; 2],
            member_count,
        }),
        &[],
    )
}

impl TensorDescriptor {
    /// Re-derives the flags from which optional sections are present and fixes
    /// `descriptor_length`; call after adding or removing a section.
    pub fn sync_sections(&mut self) {
        self.flags = self
            .flags
            .with_has_quantization(self.quantization.is_some())
            .with_has_shard(self.shard.is_some())
            .with_has_statistics(self.statistics.is_some())
            .with_has_extension_type(self.extension_type.is_some())
            .with_has_composite_member(self.composite_member.is_some());
        self.fix_length();
    }
}

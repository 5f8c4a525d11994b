//! Building descriptors for a layout: a convenience for writers, tests and the
//! corpus generator.

use crate::schema::{BufferHandle, DescriptorFlags, LayoutFields, TensorDescriptor};

/// Alignment given to buffers built here (the spec's minimum).
pub const DEFAULT_ALIGNMENT: u32 = 64;

/// A version 1.0 descriptor with no optional sections, one CPU buffer handle of
/// 64-byte alignment per entry of `buffer_sizes`, and `descriptor_length` set.
pub fn descriptor(
    type_tag: u8,
    layout_tag: u8,
    shape: &[u64],
    byte_offset: u64,
    layout: LayoutFields,
    buffer_sizes: &[u64],
) -> TensorDescriptor {
    let mut desc = TensorDescriptor {
        version_major: 1,
        version_minor: 0,
        descriptor_length: 0,
        flags: DescriptorFlags::new(),
        type_tag,
        layout_tag,
        shape: shape.to_vec(),
        byte_offset,
        layout,
        buffers: buffer_sizes
            .iter()
            .map(|&byte_size| BufferHandle {
                byte_size,
                alignment: DEFAULT_ALIGNMENT,
                device_tag: 0,
                reserved: [0; 3],
            })
            .collect(),
        quantization: None,
        shard: None,
        statistics: None,
        extension_type: None,
        composite_member: None,
        trailing: Vec::new(),
    };
    desc.fix_length();
    desc
}

/// Sets every buffer handle's `byte_size` to the length of the matching slice and
/// fixes `descriptor_length`.
pub fn fit_buffers(desc: &mut TensorDescriptor, buffers: &[&[u8]]) {
    desc.buffers = buffers
        .iter()
        .enumerate()
        .map(|(i, b)| BufferHandle {
            byte_size: b.len() as u64,
            ..desc.buffers.get(i).copied().unwrap_or(BufferHandle {
                byte_size: 0,
                alignment: DEFAULT_ALIGNMENT,
                device_tag: 0,
                reserved: [0; 3],
            })
        })
        .collect();
    desc.fix_length();
}

//! Where a tensor's bytes sit in the tensor region (file-format.md "Tensor Region",
//! "Data Buffer Placement"). Pure offset arithmetic shared by the writer, the readers
//! and the validator; every step is checked so untrusted sizes cannot overflow.

use super::BufferHandle;

/// Rounds `offset` up to a multiple of `align` (a power of two); `None` on overflow.
pub fn align_up(offset: u64, align: u64) -> Option<u64> {
    debug_assert!(align.is_power_of_two());
    let mask = align - 1;
    offset.checked_add(mask).map(|v| v & !mask)
}

/// The placement of one tensor's data, derived from its descriptor end and buffers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataPlacement {
    /// Absolute offset of each buffer, in buffer-table order.
    pub buffer_offsets: Vec<u64>,
    /// Where the data region starts (`data_offset` of the index entry). For a tensor
    /// with no buffers this is the end of its descriptor.
    pub data_offset: u64,
    /// End of the last buffer (or `data_offset` when there are none).
    pub data_end: u64,
}

impl DataPlacement {
    /// `data_length` of the index entry: buffers plus inter-buffer padding.
    pub fn data_length(&self) -> u64 {
        self.data_end - self.data_offset
    }
}

/// Computes where the buffers of a tensor whose descriptor ends at `descriptor_end`
/// go: the first at the next `data_buffer_alignment` boundary, each following one at
/// the next boundary after its predecessor. `None` when an offset would overflow.
pub fn place_buffers(
    descriptor_end: u64,
    buffers: &[BufferHandle],
    data_buffer_alignment: u64,
) -> Option<DataPlacement> {
    if buffers.is_empty() {
        return Some(DataPlacement {
            buffer_offsets: Vec::new(),
            data_offset: descriptor_end,
            data_end: descriptor_end,
        });
    }
    let mut offsets = Vec::with_capacity(buffers.len());
    let mut pos = descriptor_end;
    for b in buffers {
        pos = align_up(pos, data_buffer_alignment)?;
        offsets.push(pos);
        pos = pos.checked_add(b.byte_size)?;
    }
    Some(DataPlacement {
        data_offset: offsets[0],
        buffer_offsets: offsets,
        data_end: pos,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handle(byte_size: u64) -> BufferHandle {
        BufferHandle {
            byte_size,
            alignment: 64,
            ..BufferHandle::default()
        }
    }

    #[test]
    fn buffers_follow_alignment() {
        let p = place_buffers(100, &[handle(10), handle(5000), handle(0)], 4096).unwrap();
        assert_eq!(p.buffer_offsets, vec![4096, 8192, 16384]);
        assert_eq!(p.data_offset, 4096);
        assert_eq!(p.data_end, 16384);
        assert_eq!(p.data_length(), 12288);
    }

    #[test]
    fn no_buffers_means_no_padding() {
        let p = place_buffers(77, &[], 4096).unwrap();
        assert_eq!((p.data_offset, p.data_end), (77, 77));
    }

    #[test]
    fn overflow_is_none() {
        assert_eq!(place_buffers(u64::MAX - 3, &[handle(1)], 4096), None);
        assert_eq!(place_buffers(4096, &[handle(u64::MAX)], 4096), None);
        assert_eq!(align_up(u64::MAX, 8), None);
    }
}

//! Reusable memory for the float32 arrays `dequantize` returns.
//!
//! The first write to newly allocated memory faults its pages in, each zeroed by the
//! OS first. For a large output that costs more than dequantizing into it: on a
//! 2-core machine, 64 MiB of float32 output takes about 2 ms to dequantize into
//! memory already in use and about 8 ms into new memory. So a large array
//! `dequantize` creates owns a [`Buffer`] (through [`BufferOwner`], its NumPy base
//! object); when NumPy frees the array, the buffer waits here, and the next output of
//! the same size reuses it. Loading a model layer by layer, whose layers have the
//! same shapes, then pays for fresh pages once.
//!
//! At most [`limit`] bytes wait ([`DEFAULT_LIMIT`] unless `hrry.set_buffer_cache`
//! changes it); the oldest buffers go first. Memory held by a live array is never
//! counted nor reused.

use std::alloc::{self, Layout};
use std::collections::VecDeque;
use std::ptr::NonNull;
use std::sync::{Mutex, MutexGuard, PoisonError};

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Bytes of freed outputs kept for reuse unless `hrry.set_buffer_cache` says
/// otherwise.
pub(crate) const DEFAULT_LIMIT: usize = 256 << 20;

/// Outputs smaller than this come from NumPy's allocator: small allocations are
/// cheap, and the C library's allocator already reuses them.
pub(crate) const MIN_POOLED: usize = 1 << 20;

/// Alignment of a pooled buffer: a cache line, and a huge page for buffers of at
/// least a huge page, so that the whole buffer can be backed by huge pages.
const LINE: usize = 64;
const HUGE_PAGE: usize = 2 << 20;

/// A block of memory for float32 values, allocated here and freed on drop.
pub(crate) struct Buffer {
    ptr: NonNull<u8>,
    layout: Layout,
    /// Never written since it was allocated (its pages may not be mapped yet).
    fresh: bool,
}

// SAFETY: a `Buffer` owns its allocation exclusively, like a `Box<[u8]>`: moving it
// between threads or sharing `&Buffer` (which gives no access to the bytes) is safe.
unsafe impl Send for Buffer {}
unsafe impl Sync for Buffer {}

impl Buffer {
    /// A new buffer of `bytes` bytes (at least one), or `None` if the allocator
    /// refuses it.
    fn allocate(bytes: usize) -> Option<Buffer> {
        let align = if bytes >= HUGE_PAGE { HUGE_PAGE } else { LINE };
        let layout = Layout::from_size_align(bytes.max(1), align).ok()?;
        // SAFETY: the layout has a non-zero size.
        let ptr = NonNull::new(unsafe { alloc::alloc(layout) })?;
        advise_huge_pages(ptr, layout);
        Some(Buffer {
            ptr,
            layout,
            fresh: true,
        })
    }

    /// Its size in bytes.
    pub(crate) fn bytes(&self) -> usize {
        self.layout.size()
    }

    /// True when the memory was never written: its pages fault in, zeroed, on the
    /// first write (ordinary stores suit it better than non-temporal ones).
    pub(crate) fn is_fresh(&self) -> bool {
        self.fresh
    }

    /// Its first `len` floats, to be written (`len * 4` at most its size). Marks the
    /// buffer as used.
    pub(crate) fn floats_mut(&mut self, len: usize) -> &mut [f32] {
        assert!(len.checked_mul(4).is_some_and(|n| n <= self.bytes()));
        self.fresh = false;
        // SAFETY: the allocation holds `len` floats (checked above) and is aligned
        // for f32; `&mut self` makes the borrow exclusive. Fresh memory is
        // uninitialised, but floats have no invalid bit patterns and the caller only
        // writes before it reads.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().cast(), len) }
    }

    /// Its bytes, for a NumPy array over them.
    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: allocated in `allocate` with this layout, freed once.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

/// Asks Linux to back a large buffer with transparent huge pages (as NumPy does for
/// its own large arrays): far fewer page faults on the first write.
#[cfg(target_os = "linux")]
fn advise_huge_pages(ptr: NonNull<u8>, layout: Layout) {
    if layout.align() >= HUGE_PAGE {
        // SAFETY: the range is this allocation, page-aligned; the advice only
        // changes how the kernel backs it (failure is harmless and ignored).
        unsafe {
            libc::madvise(ptr.as_ptr().cast(), layout.size(), libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_ptr: NonNull<u8>, _layout: Layout) {}

/// The buffers waiting for reuse, oldest first.
struct Pool {
    free: VecDeque<Buffer>,
    held: usize,
    limit: usize,
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    free: VecDeque::new(),
    held: 0,
    limit: DEFAULT_LIMIT,
});

fn pool() -> MutexGuard<'static, Pool> {
    POOL.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Pool {
    /// Drops the oldest buffers until at most `limit` bytes are held; returns them
    /// (to be freed once the lock is released).
    fn trim(&mut self) -> Vec<Buffer> {
        let mut evicted = Vec::new();
        while self.held > self.limit {
            let Some(old) = self.free.pop_front() else {
                break;
            };
            self.held -= old.bytes();
            evicted.push(old);
        }
        evicted
    }
}

/// A buffer of exactly `bytes` bytes: the most recently freed one of that size, or
/// a new one; `None` if the allocator refuses.
pub(crate) fn take(bytes: usize) -> Option<Buffer> {
    {
        let mut pool = pool();
        if let Some(i) = pool.free.iter().rposition(|b| b.bytes() == bytes) {
            pool.held -= bytes;
            return pool.free.remove(i);
        }
    }
    Buffer::allocate(bytes)
}

/// Gives `buffer` back for reuse (or frees it, beyond the limit).
pub(crate) fn give_back(buffer: Buffer) {
    let evicted = {
        let mut pool = pool();
        if buffer.bytes() > pool.limit {
            drop(pool);
            drop(buffer);
            return;
        }
        pool.held += buffer.bytes();
        pool.free.push_back(buffer);
        pool.trim()
    };
    drop(evicted);
}

/// The NumPy base object of an array over a pooled buffer: when the array (and every
/// view of it) is gone, the buffer goes back to the pool.
#[pyclass(module = "hrry._hrry", frozen)]
pub(crate) struct BufferOwner {
    buffer: Mutex<Option<Buffer>>,
}

impl BufferOwner {
    /// An owner of `buffer`.
    pub(crate) fn new(buffer: Buffer) -> Self {
        BufferOwner {
            buffer: Mutex::new(Some(buffer)),
        }
    }
}

impl Drop for BufferOwner {
    fn drop(&mut self) {
        let buffer = self
            .buffer
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(buffer) = buffer {
            give_back(buffer);
        }
    }
}

/// Sets how many bytes of freed ``dequantize`` outputs are kept for reuse (default
/// 256 MiB) and returns the previous limit. A new float32 array's first write costs
/// page faults, several times the dequantization itself for large tensors; arrays of
/// at least 1 MiB that ``dequantize`` returns therefore come from memory that earlier
/// outputs of the same size left behind when they were freed. ``0`` frees what is
/// kept and turns the reuse off.
#[pyfunction]
pub fn set_buffer_cache(max_bytes: usize) -> usize {
    let (previous, evicted) = {
        let mut pool = pool();
        let previous = std::mem::replace(&mut pool.limit, max_bytes);
        (previous, pool.trim())
    };
    drop(evicted);
    previous
}

/// The state of the ``dequantize`` output cache (see `set_buffer_cache`): a dict
/// with ``"limit"`` (bytes), ``"held"`` (bytes of freed outputs waiting for reuse)
/// and ``"buffers"`` (how many).
#[pyfunction]
pub fn buffer_cache(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let (limit, held, buffers) = {
        let pool = pool();
        (pool.limit, pool.held, pool.free.len())
    };
    let out = PyDict::new(py);
    out.set_item("limit", limit)?;
    out.set_item("held", held)?;
    out.set_item("buffers", buffers)?;
    Ok(out)
}

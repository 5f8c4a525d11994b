//! What a server serves: the tensors of its HRRYFILEs, by name, and the tensors
//! clients pushed with TENSOR_PUT, held in a size-capped in-memory store.

use std::collections::HashMap;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::ServeOptions;
use crate::error::Error;
use crate::file::HrryFile;
use crate::schema::TensorDescriptor;

/// Where the bytes of a [`Chunk`] live.
#[derive(Clone)]
pub enum Owner {
    /// An opened (mapped) file.
    File(Arc<HrryFile<'static>>),
    /// Bytes in memory: a pushed tensor.
    Memory(Arc<Vec<u8>>),
    /// Bytes in memory counted against a [`Budget`] until the last chunk of them is
    /// sent: a transcoded tensor.
    Leased(Arc<LeasedBytes>),
}

impl Owner {
    /// The bytes `range`, when they are all there. Of a file, only bytes it has
    /// handed out (read already, for a file opened over a source) make chunks, so
    /// asking for them again reads nothing.
    fn slice(&self, range: Range<usize>) -> Option<&[u8]> {
        match self {
            Owner::File(f) => f.read_range(range.start as u64, range.len() as u64).ok(),
            Owner::Memory(m) => m.get(range),
            Owner::Leased(l) => l.bytes.get(range),
        }
    }

    /// Where `part`, a slice of the owner's bytes, starts in them.
    fn offset_of(&self, part: &[u8]) -> Option<usize> {
        let whole: &[u8] = match self {
            Owner::File(f) => return f.offset_of(part).and_then(|o| usize::try_from(o).ok()),
            Owner::Memory(m) => m,
            Owner::Leased(l) => &l.bytes,
        };
        (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)
    }
}

/// Bytes held under a [`Lease`], given back when they are dropped.
pub struct LeasedBytes {
    bytes: Vec<u8>,
    _lease: Lease,
}

impl LeasedBytes {
    /// `bytes`, counted under `lease`.
    pub fn new(bytes: Vec<u8>, lease: Lease) -> Self {
        LeasedBytes {
            bytes,
            _lease: lease,
        }
    }

    /// Their count.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

/// Memory every connection draws on for one purpose, at most `limit` bytes at once:
/// the server's transcoded tensors on their way out, so that many clients asking
/// for transcodings at the same time cannot add up past it.
pub struct Budget {
    limit: u64,
    in_use: Mutex<u64>,
}

/// Bytes taken from a [`Budget`], given back when dropped.
pub struct Lease {
    budget: Arc<Budget>,
    bytes: u64,
}

impl Budget {
    /// A budget of `limit` bytes.
    pub fn new(limit: u64) -> Arc<Budget> {
        Arc::new(Budget {
            limit,
            in_use: Mutex::new(0),
        })
    }

    fn in_use_guard(&self) -> std::sync::MutexGuard<'_, u64> {
        self.in_use.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes `bytes`; `None` when they do not fit beside what is in use.
    pub fn lease(self: &Arc<Self>, bytes: u64) -> Option<Lease> {
        let mut in_use = self.in_use_guard();
        let taken = in_use.checked_add(bytes).filter(|&t| t <= self.limit)?;
        *in_use = taken;
        Some(Lease {
            budget: Arc::clone(self),
            bytes,
        })
    }

    /// Bytes taken now.
    pub fn in_use(&self) -> u64 {
        *self.in_use_guard()
    }

    /// The capacity.
    pub fn limit(&self) -> u64 {
        self.limit
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        *self.budget.in_use_guard() -= self.bytes;
    }
}

/// A range of bytes kept alive by its owner: data sent without copying it first.
#[derive(Clone)]
pub struct Chunk {
    owner: Owner,
    range: Range<usize>,
}

impl Chunk {
    /// `range` of `owner`'s bytes; `None` when it is not inside them.
    pub fn new(owner: Owner, range: Range<usize>) -> Option<Chunk> {
        owner.slice(range.clone())?;
        Some(Chunk { owner, range })
    }

    /// The slice `part`, which must be borrowed from `owner`'s bytes.
    pub fn of_slice(owner: &Owner, part: &[u8]) -> Option<Chunk> {
        let start = owner.offset_of(part)?;
        Chunk::new(owner.clone(), start..start.checked_add(part.len())?)
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        // `new` checked the range against the owner's bytes, which never change
        // (nor stop being there).
        self.owner
            .slice(self.range.clone())
            .expect("a chunk's range was checked when it was made")
    }

    /// Their count.
    pub fn len(&self) -> usize {
        self.range.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.range.is_empty()
    }
}

/// A tensor pushed with TENSOR_PUT: its descriptor and its buffers' bytes back to
/// back in buffer-table order.
pub struct StoredTensor {
    /// The descriptor as the client sent it.
    pub descriptor: TensorDescriptor,
    /// The buffers' bytes, back to back.
    pub data: Arc<Vec<u8>>,
}

impl StoredTensor {
    /// Buffer `i` of the buffer table, as slices of [`StoredTensor::data`].
    pub fn buffers(&self) -> Vec<&[u8]> {
        let mut at = 0usize;
        let mut out = Vec::with_capacity(self.descriptor.buffers.len());
        for b in &self.descriptor.buffers {
            let len = usize::try_from(b.byte_size).unwrap_or(usize::MAX);
            let end = at.saturating_add(len).min(self.data.len());
            out.push(&self.data[at.min(end)..end]);
            at = end;
        }
        out
    }
}

/// The in-memory store of pushed tensors, holding at most `limit` data bytes
/// (counting space reserved by pushes in progress).
pub struct Store {
    limit: u64,
    state: Mutex<StoreState>,
}

#[derive(Default)]
struct StoreState {
    tensors: HashMap<String, Arc<StoredTensor>>,
    used: u64,
    reserved: u64,
}

/// Space reserved in a [`Store`] for a push in progress; given back when dropped
/// unless committed.
pub struct Reservation {
    store: Arc<Store>,
    bytes: u64,
}

impl Store {
    /// An empty store holding at most `limit` bytes of tensor data.
    pub fn new(limit: u64) -> Arc<Store> {
        Arc::new(Store {
            limit,
            state: Mutex::new(StoreState::default()),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, StoreState> {
        // A panic elsewhere while holding the lock leaves consistent numbers behind.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reserves `bytes`; `None` when they do not fit beside what is stored and
    /// reserved.
    pub fn reserve(self: &Arc<Self>, bytes: u64) -> Option<Reservation> {
        let mut s = self.state();
        let taken = s.used.checked_add(s.reserved)?.checked_add(bytes)?;
        if taken > self.limit {
            return None;
        }
        s.reserved += bytes;
        Some(Reservation {
            store: Arc::clone(self),
            bytes,
        })
    }

    /// The tensor pushed under `key`.
    pub fn get(&self, key: &str) -> Option<Arc<StoredTensor>> {
        self.state().tensors.get(key).cloned()
    }

    /// Bytes of tensor data held (not counting reservations).
    pub fn used(&self) -> u64 {
        self.state().used
    }

    /// The capacity.
    pub fn limit(&self) -> u64 {
        self.limit
    }
}

impl Reservation {
    /// The bytes reserved.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Stores `tensor` under `key` in the space reserved, replacing (and freeing)
    /// a tensor pushed earlier under the same key.
    pub fn commit(mut self, key: String, tensor: StoredTensor) {
        let mut s = self.store.state();
        s.reserved -= self.bytes;
        s.used += self.bytes;
        if let Some(old) = s.tensors.insert(key, Arc::new(tensor)) {
            s.used -= old.data.len() as u64;
        }
        self.bytes = 0;
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if self.bytes > 0 {
            self.store.state().reserved -= self.bytes;
        }
    }
}

/// Where a key's tensor comes from.
pub enum Source {
    /// Entry `position` of the index of `file`.
    File {
        /// The file.
        file: Arc<HrryFile<'static>>,
        /// Index position of the tensor.
        position: usize,
    },
    /// A pushed tensor.
    Stored(Arc<StoredTensor>),
}

/// Every tensor a server serves, by key.
pub struct Catalog {
    files: Vec<Arc<HrryFile<'static>>>,
    names: HashMap<String, (usize, usize)>,
    store: Arc<Store>,
    transcoding: Arc<Budget>,
}

impl Catalog {
    /// Opens `paths` and indexes their tensors by name, with a pushed-tensor store of
    /// `options.store_limit` bytes and `options.transcode_memory` bytes for
    /// transcodings in flight. A name in two files is refused, naming both.
    pub fn open(paths: &[PathBuf], options: &ServeOptions) -> Result<Catalog, Error> {
        let mut files = Vec::new();
        for path in paths {
            let file = HrryFile::open(path).map_err(|e| e.in_file(path))?;
            files.push((path.display().to_string(), file));
        }
        Catalog::from_files(files, options)
    }

    /// A catalog of already opened files, each with a label naming it in errors.
    pub fn from_files(
        files: Vec<(String, HrryFile<'static>)>,
        options: &ServeOptions,
    ) -> Result<Catalog, Error> {
        let mut names: HashMap<String, (usize, usize)> = HashMap::new();
        let mut labels: Vec<String> = Vec::new();
        let mut opened = Vec::new();
        for (i, (label, file)) in files.into_iter().enumerate() {
            for entry in file.entries() {
                if let Some(&(first, _)) = names.get(entry.name()) {
                    return Err(Error::Usage(format!(
                        "tensor {:?} is in both {} and {label}; each key must name one tensor",
                        entry.name(),
                        labels[first]
                    )));
                }
                names.insert(entry.name().to_string(), (i, entry.position()));
            }
            labels.push(label);
            opened.push(Arc::new(file));
        }
        Ok(Catalog {
            files: opened,
            names,
            store: Store::new(options.store_limit),
            transcoding: Budget::new(options.transcode_memory),
        })
    }

    /// The tensor `key` names: a file's tensor, else a pushed one.
    pub fn lookup(&self, key: &str) -> Option<Source> {
        if let Some(&(file, position)) = self.names.get(key) {
            return Some(Source::File {
                file: Arc::clone(&self.files[file]),
                position,
            });
        }
        self.store.get(key).map(Source::Stored)
    }

    /// True when `key` names a tensor of one of the files (which pushes may not
    /// replace).
    pub fn is_file_key(&self, key: &str) -> bool {
        self.names.contains_key(key)
    }

    /// Number of tensors in the files.
    pub fn file_tensor_count(&self) -> usize {
        self.names.len()
    }

    /// The pushed-tensor store.
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// The memory transcodings in flight share.
    pub fn transcoding(&self) -> &Arc<Budget> {
        &self.transcoding
    }
}

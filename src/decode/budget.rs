//! The memory budget of one operation (opening, validating, inspecting, loading,
//! exporting a file): every allocation whose size the input decides is charged to
//! it, and one that would go past it is a limit violation (`HF-LIM-001`, naming
//! `max_memory` and the structure that asked), never an abort.
//!
//! The budget grows with the input actually read: a fixed allowance plus
//! [`BUDGET_PER_BYTE_READ`] bytes for each byte read, never above
//! [`Limits::max_memory`](crate::limits::Limits::max_memory). A file can therefore
//! make hrry hold only a small multiple of what it makes hrry read, and never more
//! than the cap, whatever its counts and lengths say.

use std::cell::Cell;

use crate::limits::Limit;

use crate::validate::Violation;

/// What every operation may allocate before it has read anything (the header,
/// trailer and first pieces of metadata of any file fit in it).
pub const BUDGET_ALLOWANCE: u64 = 16 << 20;

/// Bytes an operation may allocate per byte of input it has read.
pub const BUDGET_PER_BYTE_READ: u64 = 16;

/// The memory budget of one operation ([module docs](self)).
#[derive(Debug)]
pub struct Budget {
    cap: u64,
    read: Cell<u64>,
    charged: Cell<u64>,
}

impl Budget {
    /// A budget capped at `cap` bytes (`Limits::max_memory`), nothing read yet.
    pub fn new(cap: u64) -> Self {
        Budget {
            cap,
            read: Cell::new(0),
            charged: Cell::new(0),
        }
    }

    /// Records `n` more bytes read from the input.
    pub fn read(&self, n: u64) {
        self.read.set(self.read.get().saturating_add(n));
    }

    /// Bytes of input read so far.
    pub fn bytes_read(&self) -> u64 {
        self.read.get()
    }

    /// Bytes charged so far.
    pub fn charged(&self) -> u64 {
        self.charged.get()
    }

    /// What may be charged now: the allowance plus the multiple of the bytes
    /// read, at most the cap.
    pub fn allowed(&self) -> u64 {
        BUDGET_PER_BYTE_READ
            .saturating_mul(self.read.get())
            .saturating_add(BUDGET_ALLOWANCE)
            .min(self.cap)
    }

    /// Charges `bytes` for `what` (the structure that asks, e.g. "KV entry 3"),
    /// whose field is at absolute offset `at`; the violation naming the budget when
    /// they do not fit (nothing is charged then).
    pub fn charge(
        &self,
        bytes: u64,
        what: impl FnOnce() -> String,
        at: u64,
    ) -> Result<(), Violation> {
        let total = self.charged.get().saturating_add(bytes);
        let allowed = self.allowed();
        if total > allowed {
            return Err(Violation::limit(
                Limit::Memory,
                at,
                format!(
                    "{} needs {bytes} bytes of memory, past the operation's budget: \
                     {} already held, {allowed} allowed ({} MiB + {BUDGET_PER_BYTE_READ} \
                     x {} bytes read, at most max_memory {})",
                    what(),
                    self.charged.get(),
                    BUDGET_ALLOWANCE >> 20,
                    self.read.get(),
                    self.cap
                ),
            ));
        }
        self.charged.set(total);
        Ok(())
    }

    /// Charges `bytes` that are about to be read and held (a section read whole):
    /// judged as if they were read already, so that a section is refused before it
    /// is read when even its own bytes could not fit.
    pub fn charge_read(
        &self,
        bytes: u64,
        what: impl FnOnce() -> String,
        at: u64,
    ) -> Result<(), Violation> {
        let read = self.read.get();
        self.read.set(read.saturating_add(bytes));
        let charged = self.charge(bytes, what, at);
        self.read.set(read);
        charged
    }

    /// Makes room in `v` for `additional` more items, charging what its capacity
    /// grows by (doubling, so that pushes one at a time cost amortised constant
    /// time): the one way an input-dependent collection grows.
    pub fn grow<T>(
        &self,
        v: &mut Vec<T>,
        additional: usize,
        what: impl FnOnce() -> String,
        at: u64,
    ) -> Result<(), Violation> {
        let need = v.len().saturating_add(additional);
        if need <= v.capacity() {
            return Ok(());
        }
        let capacity = need.max(v.capacity().saturating_mul(2)).max(4);
        let size = std::mem::size_of::<T>() as u64;
        let more = (capacity - v.capacity()) as u64;
        self.charge(more.saturating_mul(size), what, at)?;
        v.reserve_exact(capacity - v.len());
        Ok(())
    }

    /// Returns `bytes` charged earlier, once what they paid for is freed.
    pub fn release(&self, bytes: u64) {
        self.charged.set(self.charged.get().saturating_sub(bytes));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_grows_with_the_bytes_read_up_to_the_cap() {
        let b = Budget::new(64 << 20);
        assert!(b.charge(BUDGET_ALLOWANCE, || "allowance".into(), 0).is_ok());
        let v = b.charge(1, || "one more byte".into(), 7).expect_err("over");
        assert_eq!(v.limit, Some(Limit::Memory));
        assert_eq!(v.offset, 7);
        assert!(v.message.contains("one more byte"), "{}", v.message);
        assert!(v.message.contains("max_memory"), "{}", v.message);
        b.read(1000);
        assert!(b
            .charge(1000 * BUDGET_PER_BYTE_READ, || "read".into(), 0)
            .is_ok());
        assert!(b.charge(1, || "read".into(), 0).is_err());
        b.read(u64::MAX);
        assert_eq!(b.allowed(), 64 << 20);
        b.release(u64::MAX);
        assert_eq!(b.charged(), 0);
        let mut v: Vec<u64> = Vec::new();
        for i in 0..1000 {
            b.grow(&mut v, 1, || "a list".into(), 0).expect("fits");
            v.push(i);
        }
        assert!(v.capacity() < 2048);
        assert_eq!(b.charged(), 8 * v.capacity() as u64);
        let small = Budget::new(1024);
        let mut v: Vec<u64> = Vec::new();
        let e = small.grow(&mut v, 1000, || "a long list".into(), 3);
        assert!(e.is_err() && v.capacity() == 0);
        assert!(small.charge_read(2000, || "a section".into(), 0).is_err());
        assert_eq!(small.bytes_read(), 0);
        assert!(b
            .charge((64 << 20) + 1, || "past the cap".into(), 0)
            .is_err());
    }
}

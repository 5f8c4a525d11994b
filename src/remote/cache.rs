//! The bytes already fetched: extents of the object, kept within a byte budget,
//! the least recently used dropped first.

/// Fetched extents of one object.
pub(crate) struct Cache {
    /// `(start, bytes, last use)`; extents may overlap.
    extents: Vec<(u64, Vec<u8>, u64)>,
    held: u64,
    budget: u64,
    clock: u64,
}

impl Cache {
    /// An empty cache holding at most `budget` bytes.
    pub fn new(budget: u64) -> Cache {
        Cache {
            extents: Vec::new(),
            held: 0,
            budget,
            clock: 0,
        }
    }

    /// Copies `offset..offset + buf.len()` into `buf` if one extent holds it all.
    pub fn read(&mut self, offset: u64, buf: &mut [u8]) -> bool {
        self.clock += 1;
        let end = offset + buf.len() as u64;
        for (start, bytes, used) in &mut self.extents {
            if offset >= *start && end <= *start + bytes.len() as u64 {
                let from = (offset - *start) as usize;
                buf.copy_from_slice(&bytes[from..from + buf.len()]);
                *used = self.clock;
                return true;
            }
        }
        false
    }

    /// Whether one extent holds all of `start..end`.
    pub fn holds(&self, start: u64, end: u64) -> bool {
        self.extents
            .iter()
            .any(|(s, b, _)| start >= *s && end <= *s + b.len() as u64)
    }

    /// Keeps `bytes` (at `start`), dropping the least recently used extents to stay
    /// within the budget. An extent larger than the whole budget is not kept.
    pub fn insert(&mut self, start: u64, bytes: Vec<u8>) {
        let len = bytes.len() as u64;
        if len == 0 || len > self.budget || self.holds(start, start + len) {
            return;
        }
        while self.held + len > self.budget {
            let Some(oldest) = (0..self.extents.len()).min_by_key(|&i| self.extents[i].2) else {
                break;
            };
            let (_, dropped, _) = self.extents.swap_remove(oldest);
            self.held -= dropped.len() as u64;
        }
        self.clock += 1;
        self.held += len;
        self.extents.push((start, bytes, self.clock));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_inside_an_extent_hit_and_the_budget_holds() {
        let mut c = Cache::new(10);
        c.insert(100, vec![1, 2, 3, 4, 5, 6]);
        let mut b = [0u8; 3];
        assert!(c.read(101, &mut b));
        assert_eq!(b, [2, 3, 4]);
        assert!(!c.read(104, &mut b), "runs past the extent");
        c.insert(0, vec![9; 6]); // drops the extent at 100
        assert!(!c.holds(100, 101));
        assert!(c.holds(0, 6));
        c.insert(50, vec![0; 11]); // larger than the budget: not kept
        assert!(!c.holds(50, 51));
        assert!(c.held <= c.budget);
    }
}

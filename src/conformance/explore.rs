//! Exploration: cases generated from valid files by structure-aware mutation, each
//! judged by hrry ([`judge`]), and a shrinker that makes a case that shows a
//! disagreement as small as it can while it keeps showing it ([`shrink`]).
//! `hrry conformance explore` compares the cases with a testee.
//!
//! A case is a base file (one of the valid files it was given) and a list of
//! concrete edits ([`mutation::Mutation`]): new values in header, trailer, index,
//! descriptor and KV fields, counts, offsets, flags and lengths, with the index
//! CRC recomputed or not; changed data bytes (scales, zero points, indices,
//! codes, padding); cuts; bytes spliced in from another valid file. Case `i` of
//! seed `s` is the same on every run, and does not depend on the cases before it.
//!
//! Beside the valid files it is given, an explorer can start from random models
//! the writer makes ([`model::Model::random`], made from the seed: the same seed
//! gives the same models), which mix dense tensors of every fixed-width element
//! type with the tensor groups and KV values of the given files.

pub mod judge;
pub mod model;
pub mod mutation;
mod rng;
pub mod shrink;

use crate::Format;
use mutation::{Mutation, Site, ValueChange};
use rng::Rng;

/// A valid file cases are made from.
#[derive(Clone, Debug)]
pub struct Base {
    /// Its name (the corpus path).
    pub name: String,
    /// Its format.
    pub format: Format,
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// Its fields (HRRYFILE; empty for the other formats).
    sites: Vec<Site>,
    /// The places in its tensors' buffers and KV section (HRRYFILE).
    data_sites: Vec<Site>,
    /// Its parts (HRRYFILE).
    regions: Vec<mutation::Region>,
}

impl Base {
    /// A base file, its fields located once.
    pub fn new(name: impl Into<String>, format: Format, bytes: Vec<u8>) -> Base {
        let (sites, data_sites, regions) = if format == Format::HrryFile {
            (
                mutation::sites(&bytes),
                mutation::data_sites(&bytes),
                mutation::regions(&bytes),
            )
        } else {
            (Vec::new(), Vec::new(), Vec::new())
        };
        Base {
            name: name.into(),
            format,
            bytes,
            sites,
            data_sites,
            regions,
        }
    }
}

/// One generated case: a base file and the edits made to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    /// Its number in the seed's sequence.
    pub index: u64,
    /// The base file (an index into the explorer's bases).
    pub base: usize,
    /// The edits, applied in order.
    pub mutations: Vec<Mutation>,
}

/// The generator of cases for one seed.
#[derive(Clone, Debug)]
pub struct Explorer {
    seed: u64,
    bases: Vec<Base>,
}

/// The stream of the seed's generator random model `k` is drawn from.
const MODEL_STREAM: u64 = 0x4D4F_4445_4C00_0000;

impl Explorer {
    /// An explorer drawing from `bases` (used in the order given: the same bases
    /// and seed give the same cases). Empty bases are left out.
    pub fn new(seed: u64, bases: Vec<Base>) -> Explorer {
        let bases = bases.into_iter().filter(|b| !b.bytes.is_empty()).collect();
        Explorer { seed, bases }
    }

    /// An explorer drawing from `bases` and from `models` random models the writer
    /// makes (named `model-K`), whose tensor groups and KV values come partly from
    /// the HRRYFILEs among `bases`. The same bases, seed and count give the same
    /// models.
    pub fn with_models(seed: u64, bases: Vec<Base>, models: usize) -> Explorer {
        let mut x = Explorer::new(seed, bases);
        if models == 0 {
            return x;
        }
        let pool = x.model_pool();
        for k in 0..models {
            let mut rng = Rng::new(seed, MODEL_STREAM ^ k as u64);
            if let Some(bytes) = model::Model::random(&mut rng, &pool).write_valid() {
                x.bases
                    .push(Base::new(format!("model-{k}"), Format::HrryFile, bytes));
            }
        }
        x
    }

    /// The KV entries and tensor groups of the HRRYFILE bases, each group one that
    /// gives a valid file on its own.
    fn model_pool(&self) -> model::Model {
        let mut pool = model::Model {
            options: Default::default(),
            kv: Vec::new(),
            groups: Vec::new(),
        };
        for b in self.bases.iter().filter(|b| b.format == Format::HrryFile) {
            let Some(m) = model::Model::of_file(&b.bytes) else {
                continue;
            };
            pool.kv.extend(m.kv);
            for g in m.groups {
                let alone = model::Model {
                    options: Default::default(),
                    kv: Vec::new(),
                    groups: vec![g],
                };
                if alone.write_valid().is_some() {
                    pool.groups.extend(alone.groups);
                }
            }
        }
        pool
    }

    /// The base files.
    pub fn bases(&self) -> &[Base] {
        &self.bases
    }

    /// The bytes of `case`.
    pub fn bytes(&self, case: &Case) -> Vec<u8> {
        match self.bases.get(case.base) {
            Some(b) => mutation::apply(&b.bytes, &case.mutations),
            None => Vec::new(),
        }
    }

    /// The format of `case`.
    pub fn format(&self, case: &Case) -> Format {
        self.bases
            .get(case.base)
            .map_or(Format::HrryFile, |b| b.format)
    }

    /// Case number `index` of this seed (`None` when there are no bases). Smaller
    /// bases are drawn more often (the smaller of two drawn), so that what is found
    /// is small from the start.
    pub fn case(&self, index: u64) -> Option<Case> {
        if self.bases.is_empty() {
            return None;
        }
        let mut rng = Rng::new(self.seed, index);
        let (a, b) = (rng.index(self.bases.len()), rng.index(self.bases.len()));
        let base = if self.bases[b].bytes.len() < self.bases[a].bytes.len() {
            b
        } else {
            a
        };
        Some(Case {
            index,
            base,
            mutations: self.mutations_on(base, &mut rng),
        })
    }

    /// `tries` cases on base `base` only, numbered after `index` (the shrinker's
    /// attempts to show the same disagreement on a smaller file).
    pub fn cases_on(&self, base: usize, index: u64, tries: u64) -> Vec<Case> {
        (0..tries)
            .map(|t| {
                let stream = index
                    .wrapping_mul(0x1_0000_0001)
                    .wrapping_add((base as u64) << 20)
                    .wrapping_add(t)
                    ^ 0x5348_5249_4E4B;
                let mut rng = Rng::new(self.seed, stream);
                Case {
                    index,
                    base,
                    mutations: self.mutations_on(base, &mut rng),
                }
            })
            .collect()
    }

    /// `case`'s edits moved onto base `base` part by part (HRRYFILE: the same
    /// place of the same header, trailer, index, descriptor, data or KV section;
    /// edits with no such place are dropped). `None` when the files have no parts.
    pub fn transplant_parts(&self, case: &Case, base: usize) -> Option<Case> {
        let (from, to) = (
            &self.bases.get(case.base)?.regions,
            &self.bases.get(base)?.regions,
        );
        if from.is_empty() || to.is_empty() {
            return None;
        }
        let mutations = case
            .mutations
            .iter()
            .filter_map(|m| match m {
                Mutation::Write { at, bytes, what } => Some(Mutation::Write {
                    at: mutation::move_offset(from, to, *at, bytes.len())?,
                    bytes: bytes.clone(),
                    what,
                }),
                Mutation::Truncate { len } => Some(Mutation::Truncate {
                    len: mutation::move_offset(from, to, *len, 0)?,
                }),
                Mutation::ResealIndex => Some(Mutation::ResealIndex),
            })
            .collect();
        Some(Case {
            index: case.index,
            base,
            mutations,
        })
    }

    /// `case`'s edits moved onto base `base`: at the same offsets from the start of
    /// the file, or (`from_end`) from its end, where the trailer and, in a
    /// HRRYFILE, usually the index and KV section lie.
    pub fn transplant(&self, case: &Case, base: usize, from_end: bool) -> Case {
        let old = self.bases.get(case.base).map_or(0, |b| b.bytes.len());
        let new = self.bases.get(base).map_or(0, |b| b.bytes.len());
        let moved = |at: usize| -> usize {
            if from_end {
                (at + new).saturating_sub(old)
            } else {
                at
            }
        };
        let mutations = case
            .mutations
            .iter()
            .map(|m| match m {
                Mutation::Write { at, bytes, what } => Mutation::Write {
                    at: moved(*at),
                    bytes: bytes.clone(),
                    what,
                },
                Mutation::Truncate { len } => Mutation::Truncate { len: moved(*len) },
                Mutation::ResealIndex => Mutation::ResealIndex,
            })
            .collect();
        Case {
            index: case.index,
            base,
            mutations,
        }
    }

    /// One to three edits of base `base`, then, for a HRRYFILE, the index CRC
    /// recomputed half of the time.
    fn mutations_on(&self, base: usize, rng: &mut Rng) -> Vec<Mutation> {
        let b = &self.bases[base];
        let len = b.bytes.len();
        let mut out = Vec::new();
        for _ in 0..1 + rng.below(3) {
            let r = rng.below(100);
            let m = if r < 45 {
                self.field(b, pick_site(rng, &b.sites, len), rng, "field")
            } else if r < 65 {
                let sites = if b.data_sites.is_empty() {
                    &b.sites
                } else {
                    &b.data_sites
                };
                self.field(b, pick_site(rng, sites, len), rng, "data")
            } else if r < 73 {
                let at = match pick_site(rng, &b.sites, len) {
                    s if rng.percent(50) => s.at,
                    _ => rng.index(len),
                };
                Mutation::Truncate { len: at }
            } else if r < 85 {
                self.splice(b, pick_site(rng, &b.sites, len).at, rng)
            } else {
                let at = rng.index(len);
                let change = ValueChange::FlipBit(rng.below(8) as u32);
                Mutation::Write {
                    at,
                    bytes: vec![change.apply(u64::from(b.bytes[at]), 1, len as u64) as u8],
                    what: "bit",
                }
            };
            out.push(m);
        }
        if b.format == Format::HrryFile && rng.percent(50) {
            out.push(Mutation::ResealIndex);
        }
        out
    }

    /// A new value at `site` of `b`.
    fn field(&self, b: &Base, site: Site, rng: &mut Rng, what: &'static str) -> Mutation {
        let old = mutation::read_field(&b.bytes, site);
        let change =
            ValueChange::of_kind(rng.below(u64::from(ValueChange::KINDS)) as u32, rng.next());
        let v = change.apply(old, site.width, b.bytes.len() as u64);
        Mutation::Write {
            at: site.at,
            bytes: v.to_le_bytes()[..site.width].to_vec(),
            what,
        }
    }

    /// 1 to 16 bytes of another base of the same format (or of `b`) written at `at`.
    fn splice(&self, b: &Base, at: usize, rng: &mut Rng) -> Mutation {
        let donors: Vec<&Base> = self.bases.iter().filter(|d| d.format == b.format).collect();
        let donor = donors.get(rng.index(donors.len())).copied().unwrap_or(b);
        let n = (1 + rng.index(16)).min(donor.bytes.len());
        let from = rng.index(donor.bytes.len() - n + 1);
        let n = n.min(b.bytes.len().saturating_sub(at));
        Mutation::Write {
            at,
            bytes: donor.bytes[from..from + n].to_vec(),
            what: "splice",
        }
    }
}

/// One of `sites`, or, when there are none (formats without a site map), a field
/// of 1, 2, 4 or 8 bytes at a random offset, in the first 64 bytes half of the time.
fn pick_site(rng: &mut Rng, sites: &[Site], len: usize) -> Site {
    if !sites.is_empty() {
        return sites[rng.index(sites.len())];
    }
    let width = [1, 2, 4, 8][rng.index(4)].min(len.max(1));
    let room = len.saturating_sub(width) + 1;
    let at = if rng.percent(50) {
        rng.index(room.min(64))
    } else {
        rng.index(room)
    };
    Site { at, width }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bases() -> Vec<Base> {
        let mut hdr = vec![0u8; 200];
        hdr[..8].copy_from_slice(b"HRRYFILE");
        vec![
            Base::new("a", Format::HrryFile, hdr),
            Base::new("b", Format::Stream, vec![7u8; 50]),
        ]
    }

    #[test]
    fn the_same_seed_gives_the_same_cases() {
        let (x, y) = (Explorer::new(7, bases()), Explorer::new(7, bases()));
        let other = Explorer::new(8, bases());
        let a: Vec<_> = (0..50).map(|i| x.case(i)).collect();
        let b: Vec<_> = (0..50).map(|i| y.case(i)).collect();
        let c: Vec<_> = (0..50).map(|i| other.case(i)).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        // A case does not depend on those before it.
        assert_eq!(x.case(42), a[42]);
    }

    #[test]
    fn cases_stay_inside_their_base() {
        let x = Explorer::new(1, bases());
        for i in 0..500 {
            let case = x.case(i).expect("a case");
            let bytes = x.bytes(&case);
            assert!(bytes.len() <= x.bases()[case.base].bytes.len());
            assert!(!case.mutations.is_empty());
        }
    }
}

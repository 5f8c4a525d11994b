//! Expected-failure lists: lines `PATH TIER`, or `PATH` for every tier, `#`
//! comments. A listed failure becomes `expected-failure` (it does not fail the run); a
//! listed case that passes becomes `unexpected-pass` (it does); a listed case the
//! corpus does not have is reported as stale.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use super::score::{CaseResult, Status, Tier};
use crate::Failure;

/// A parsed list.
#[derive(Default)]
pub struct ExpectedFailures {
    /// (path, tier); `None` for every tier.
    entries: BTreeSet<(String, Option<Tier>)>,
}

impl ExpectedFailures {
    /// Reads the list at `path`; a malformed line is a usage error naming it.
    pub fn read(path: &Path) -> Result<Self, Failure> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Failure(format!("cannot read {}: {e}", path.display())))?;
        Self::parse(&text).map_err(|(n, why)| Failure(format!("{}:{n}: {why}", path.display())))
    }

    /// Parses the text of a list; the error gives the line number and why.
    pub fn parse(text: &str) -> Result<Self, (usize, String)> {
        let mut entries = BTreeSet::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                [] => {}
                [path] => {
                    entries.insert((path.to_string(), None));
                }
                [path, tier] => {
                    let tier = Tier::from_name(tier).ok_or_else(|| {
                        (
                            n + 1,
                            format!("unknown tier {tier:?} (verdict, rule, read, write)"),
                        )
                    })?;
                    entries.insert((path.to_string(), Some(tier)));
                }
                _ => return Err((n + 1, "expected `PATH` or `PATH TIER`".into())),
            }
        }
        Ok(ExpectedFailures { entries })
    }

    fn lists(&self, result: &CaseResult) -> bool {
        self.entries
            .contains(&(result.path.clone(), Some(result.tier)))
            || self.entries.contains(&(result.path.clone(), None))
    }

    /// Marks the listed cases of `results`; returns the listed entries that match
    /// no case (stale lines).
    pub fn apply(&self, results: &mut [CaseResult]) -> Vec<String> {
        for r in results.iter_mut() {
            if !self.lists(r) {
                continue;
            }
            if r.status.is_failure() {
                r.detail = format!("expected failure ({}): {}", r.status.name(), r.detail);
                r.status = Status::ExpectedFailure;
            } else if r.status == Status::Pass {
                r.status = Status::UnexpectedPass;
                r.detail = "passes, but the expected-failures list names it".into();
            }
        }
        self.entries
            .iter()
            .filter(|(path, tier)| {
                !results
                    .iter()
                    .any(|r| &r.path == path && tier.is_none_or(|t| t == r.tier))
            })
            .map(|(path, tier)| match tier {
                Some(t) => format!("{path} {}", t.name()),
                None => path.clone(),
            })
            .collect()
    }
}

/// The list that names exactly the cases of `results` that fail now (failures and
/// expected failures), one `PATH TIER` line each.
pub fn render(results: &[CaseResult]) -> String {
    let mut s = String::from(
        "# Expected failures for `hrry conformance --expected-failures`: `PATH TIER` or\n\
         # `PATH` (every tier). Written by --update-expected-failures.\n",
    );
    for r in results {
        if r.status.is_failure() || r.status == Status::ExpectedFailure {
            let _ = writeln!(s, "{} {}", r.path, r.tier.name());
        }
    }
    s
}

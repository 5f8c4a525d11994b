//! The reference verdict on a generated case: hrry's strict validation split by
//! level (the spec's MUSTs decide; hardening and limit findings are kept apart),
//! and, for a file the spec accepts, the reading the read tier expects.

use crate::conformance::{read_tensors, TensorReading};
use crate::file::HrryFile;
use crate::validate::{Level, Options};
use crate::Format;

/// One broken rule, as the reference found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The rule's ID, e.g. `HF-CRC-001`.
    pub rule: &'static str,
    /// Its level.
    pub level: Level,
    /// Absolute byte offset of the offending field.
    pub offset: u64,
    /// What was expected and what was found.
    pub message: String,
}

/// hrry's verdict on one file.
#[derive(Clone, Debug)]
pub struct Judgement {
    /// Violations of the spec (`Level::Spec`): the file is invalid when there is one.
    pub spec: Vec<Finding>,
    /// Hardening and limit findings: a policy of this reader, never a disagreement.
    pub policy: Vec<Finding>,
    /// For a HRRYFILE the spec accepts and hrry reads: every tensor's reading.
    pub readings: Option<Vec<TensorReading>>,
}

impl Judgement {
    /// Validates `bytes` strictly as `format` and, when the spec accepts a
    /// HRRYFILE, reads its tensors.
    pub fn of(format: Format, bytes: &[u8]) -> Judgement {
        let report = format.validate_bytes(bytes, &Options::default());
        let (spec, policy): (Vec<Finding>, Vec<Finding>) = report
            .violations
            .iter()
            .map(|v| Finding {
                rule: v.rule.id,
                level: v.rule.level,
                offset: v.offset,
                message: v.message.clone(),
            })
            .partition(|f| f.level == Level::Spec);
        let readings = if spec.is_empty() && format == Format::HrryFile {
            HrryFile::from_bytes(bytes)
                .ok()
                .and_then(|f| read_tensors(&f).ok())
        } else {
            None
        };
        Judgement {
            spec,
            policy,
            readings,
        }
    }

    /// Whether the spec accepts the file.
    pub fn valid(&self) -> bool {
        self.spec.is_empty()
    }

    /// Whether the spec verdict alone decides the case: the spec rejects the file,
    /// or accepts it with no hardening or limit finding beside (a file only this
    /// reader's policy refuses is no case to compare).
    pub fn decided(&self) -> bool {
        !self.spec.is_empty() || self.policy.is_empty()
    }

    /// The spec rules broken, sorted, without repeats.
    pub fn spec_rules(&self) -> Vec<&'static str> {
        let mut r: Vec<&'static str> = self.spec.iter().map(|f| f.rule).collect();
        r.sort_unstable();
        r.dedup();
        r
    }

    /// Every rule broken (spec, hardening and limit), sorted, without repeats.
    pub fn broken_rules(&self) -> Vec<&'static str> {
        let mut r: Vec<&'static str> = self
            .spec
            .iter()
            .chain(&self.policy)
            .map(|f| f.rule)
            .collect();
        r.sort_unstable();
        r.dedup();
        r
    }
}

//! The rule type, violations and reports shared by every validator.

use std::fmt;

use crate::limits::Limit;

use super::{Depth, Judging, Rules};

/// How binding a rule is (docs/interpretations.md § Rules and levels).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Level {
    /// A MUST / MUST NOT of the spec: judged under every [`Rules`].
    Spec,
    /// A stricter check of our own: judged under [`Rules::Hardened`] only.
    Hardening,
    /// A configured resource limit of this reader: judged under every [`Rules`], since
    /// going past it would mean allocating or walking more than we allow.
    Limit,
}

impl Level {
    /// The lowercase name used in reports and `hrry rules`.
    pub fn name(self) -> &'static str {
        match self {
            Level::Spec => "spec",
            Level::Hardening => "hardening",
            Level::Limit => "limit",
        }
    }
}

/// What a rule is decided from, which says what checking it costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reads {
    /// The header, trailer, index, KV, descriptors, and the parameter and
    /// sparse-index buffers: what opening a file reads anyway, whatever the size of
    /// its tensors. [`crate::HrryFile::open`] refuses a file that breaks one.
    Metadata,
    /// The contents of padding or of data buffers (zero padding, the unused bits
    /// after packed elements, reserved element codes): reading them costs a pass
    /// over the data, so only a judging to [`Depth::Data`] (validation's, or an
    /// open that asks for it) judges them.
    Data,
}

impl Reads {
    /// The lowercase name used in `hrry rules`.
    pub fn name(self) -> &'static str {
        match self {
            Reads::Metadata => "metadata",
            Reads::Data => "data",
        }
    }
}

/// One checkable requirement, identified by a stable ID.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Rule {
    /// Stable identifier, e.g. `HF-HDR-003`.
    pub id: &'static str,
    /// Whether the spec demands it or we add it.
    pub level: Level,
    /// What the rule is decided from.
    pub reads: Reads,
    /// One line saying what must hold.
    pub summary: &'static str,
    /// The spec file and section the rule comes from.
    pub spec: &'static str,
}

/// Declares rule constants and a `RULES` slice listing them in order. A rule
/// decided from data or padding bytes says so after its level (`Spec + Data`);
/// the others read metadata.
///
/// ```text
/// declare_rules! {
///     HF_HDR_MAGIC: "HF-HDR-001", Spec, "magic is HRRYFILE", "file-format.md § File Header";
///     HF_PLC_PADDING_ZERO: "HF-PLC-003", Spec + Data, "padding is zero", "file-format.md § …";
/// }
/// ```
macro_rules! declare_rules {
    ($($name:ident : $id:literal, $level:ident $(+ $reads:ident)?, $summary:literal, $spec:literal;)+) => {
        $(
            // Summaries quote the spec's formulas (`shape[axis]`), not links.
            #[allow(rustdoc::broken_intra_doc_links)]
            #[doc = concat!("`", $id, "`: ", $summary, " (", $spec, ").")]
            pub static $name: $crate::validate::Rule = $crate::validate::Rule {
                id: $id,
                level: $crate::validate::Level::$level,
                reads: $crate::validate::rule::reads!($($reads)?),
                summary: $summary,
                spec: $spec,
            };
        )+
        /// Every rule declared in this module, in declaration order.
        pub static RULES: &[&$crate::validate::Rule] = &[$(&$name),+];
    };
}
pub(crate) use declare_rules;

/// The [`Reads`] of a rule declaration: metadata unless it says `Data`.
macro_rules! reads {
    () => {
        $crate::validate::Reads::Metadata
    };
    (Data) => {
        $crate::validate::Reads::Data
    };
}
pub(crate) use reads;

/// What a report concludes (docs/interpretations.md § Rules and levels).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// No finding that counts.
    Valid,
    /// At least one `spec` rule is broken: the file does not conform.
    Invalid,
    /// No `spec` rule is broken, but the judging refuses it: a `hardening` finding
    /// under [`Rules::Hardened`], or a `limit` finding (the spec verdict is then
    /// incomplete) under any rules.
    Refused,
}

impl Verdict {
    /// The lowercase name used in JSON reports (`valid`, `invalid`, `refused`).
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Valid => "valid",
            Verdict::Invalid => "invalid",
            Verdict::Refused => "refused",
        }
    }
}

/// A broken rule, located at the absolute byte offset of the offending field.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    /// The rule that was broken.
    pub rule: &'static Rule,
    /// Absolute byte offset of the offending field in the input.
    pub offset: u64,
    /// What was expected and what was found.
    pub message: String,
    /// For a violation of `HF-LIM-001`, the limit that was exceeded.
    pub limit: Option<Limit>,
}

impl Violation {
    /// A violation of `rule` at `offset`.
    pub fn new(rule: &'static Rule, offset: u64, message: impl Into<String>) -> Self {
        Violation {
            rule,
            offset,
            message: message.into(),
            limit: None,
        }
    }
}

impl std::error::Error for Violation {}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at offset {}: {}",
            self.rule.id, self.offset, self.message
        )
    }
}

/// Most violations of one rule a report lists. Further ones are counted in
/// [`Report::suppressed`], not stored, so that no input can make a report grow
/// faster than a fixed amount per rule (a KV section of 4-byte entries could
/// otherwise yield several violations, each with its message, per 4 input bytes).
pub const MAX_VIOLATIONS_PER_RULE: u32 = 1000;

/// Collects violations and notes while a validator walks a file.
///
/// # Examples
///
/// ```
/// use hrry::validate::{Judging, Level, Options, Rules};
/// use hrry::Format;
///
/// # let mut bytes = {
/// #     let mut w = hrry::file::HrryWriter::new(Vec::new(), Default::default())?;
/// #     w.write_row_major::<u8>("t", &[1], &[7])?;
/// #     w.finish()?
/// # };
/// bytes[10] = 0xFF; // a reserved header byte
/// let strict = Format::HrryFile.validate_bytes(&bytes, &Options::default());
/// assert!(!strict.is_valid());
/// assert_eq!(strict.rule_ids(), ["HF-HDR-003"]);
/// for v in &strict.violations {
///     println!("{} ({}) at offset {}: {}", v.rule.id, v.rule.summary, v.offset, v.message);
/// }
///
/// // A spec rule binds under the permissive rules too; only hardening rules are dropped.
/// assert_eq!(strict.violations[0].rule.level, Level::Spec);
/// let permissive = Options {
///     judging: Judging { rules: Rules::Permissive, ..Judging::default() },
///     ..Options::default()
/// };
/// assert_eq!(Format::HrryFile.validate_bytes(&bytes, &permissive).rule_ids(), ["HF-HDR-003"]);
/// # Ok::<(), hrry::file::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Report {
    /// What the report judged: which rules count and how far the input was read.
    pub judging: Judging,
    /// Broken rules that count under `judging`, in the order found.
    pub violations: Vec<Violation>,
    /// Remarks that are not violations (e.g. KV present with the flag clear).
    pub notes: Vec<String>,
    /// Set when validation stopped early because the structure could not be followed.
    pub fatal: bool,
    /// Violations found but not listed, because their rule already had
    /// [`MAX_VIOLATIONS_PER_RULE`] entries in `violations`.
    pub suppressed: u64,
    per_rule: std::collections::HashMap<&'static str, u32>,
    pass: Pass,
}

/// How a decode pass treats what its [`Judging`] records: the validator's (every
/// violation, to the end) or a reader's (stopping at the first, letting the rules
/// it was told to allow pass). Private to the decode layer: the public policy is
/// the [`Judging`].
#[derive(Clone, Debug, Default)]
pub(crate) struct Pass {
    /// Rules whose violations are let pass (not recorded, not stopped for).
    pub allowed: Vec<&'static str>,
    /// Every violation is let pass.
    pub allow_all: bool,
    /// The pass stops at the first violation recorded.
    pub first_only: bool,
}

impl Default for Report {
    /// An empty report judging as [`Judging::default`] does.
    fn default() -> Self {
        Report::new(Judging::default())
    }
}

impl Report {
    /// An empty report judging as `judging` says.
    pub fn new(judging: Judging) -> Self {
        Report::for_pass(judging, Pass::default())
    }

    /// An empty report for a decode pass judging as `judging` says and treating
    /// violations as `pass` says.
    pub(crate) fn for_pass(judging: Judging, pass: Pass) -> Self {
        Report {
            judging,
            violations: Vec::new(),
            notes: Vec::new(),
            fatal: false,
            suppressed: 0,
            per_rule: std::collections::HashMap::new(),
            pass,
        }
    }

    /// The rules the report judges.
    pub(crate) fn rules(&self) -> Rules {
        self.judging.rules
    }

    /// Whether the pass lets violations of `rule` pass.
    pub(crate) fn allows(&self, rule: &Rule) -> bool {
        self.pass.allow_all || self.pass.allowed.contains(&rule.id)
    }

    /// Whether a reader's pass has what it stops for: the walk need go no further.
    pub(crate) fn stopped(&self) -> bool {
        self.pass.first_only && !self.violations.is_empty()
    }

    /// Records a violation of `rule` unless the judging leaves it out.
    pub fn violation(&mut self, rule: &'static Rule, offset: u64, message: impl Into<String>) {
        self.record(Violation::new(rule, offset, message));
    }

    /// Records that the input asks for more than `limit` allows (`HF-LIM-001`).
    pub(crate) fn limit(&mut self, limit: Limit, offset: u64, message: impl Into<String>) {
        self.record(Violation::limit(limit, offset, message));
    }

    /// Whether a violation of `rule` would be recorded: its level is judged by
    /// these rules, its bytes are read to this depth, and the pass has not
    /// stopped. A check whose only purpose is `rule` may be skipped when it is not
    /// (a check of a [`Reads::Data`] rule cannot run without it: it needs the
    /// consent [`crate::decode`] gives only at [`Depth::Data`]).
    pub(crate) fn wants(&self, rule: &Rule) -> bool {
        if rule.level == Level::Hardening && !self.judging.rules.hardening() {
            return false;
        }
        if rule.reads == Reads::Data && self.judging.depth < Depth::Data {
            return false;
        }
        !self.pass.allow_all && !self.pass.allowed.contains(&rule.id) && !self.stopped()
    }

    /// Records `v` unless the judging leaves its rule out.
    pub(crate) fn record(&mut self, v: Violation) {
        let rule = v.rule;
        if !self.wants(rule) {
            return;
        }
        let listed = self.per_rule.entry(rule.id).or_insert(0);
        if *listed >= MAX_VIOLATIONS_PER_RULE {
            if self.suppressed == 0 {
                self.notes.push(format!(
                    "over {MAX_VIOLATIONS_PER_RULE} violations of one rule: further ones are counted, not listed"
                ));
            }
            self.suppressed += 1;
            return;
        }
        *listed += 1;
        self.violations.push(v);
    }

    /// Records `rule` as broken when `ok` is false; returns `ok`.
    pub fn check(
        &mut self,
        ok: bool,
        rule: &'static Rule,
        offset: u64,
        message: impl FnOnce() -> String,
    ) -> bool {
        if !ok {
            self.violation(rule, offset, message());
        }
        ok
    }

    /// Adds a note.
    pub fn note(&mut self, text: impl Into<String>) {
        self.notes.push(text.into());
    }

    /// True when no violation was recorded: the verdict is [`Verdict::Valid`].
    pub fn is_valid(&self) -> bool {
        self.violations.is_empty()
    }

    /// What the report concludes: invalid when a `spec` rule is broken, refused
    /// when only `hardening` or `limit` findings were recorded, else valid.
    pub fn verdict(&self) -> Verdict {
        if self.violations.is_empty() {
            Verdict::Valid
        } else if self.violations.iter().any(|v| v.rule.level == Level::Spec) {
            Verdict::Invalid
        } else {
            Verdict::Refused
        }
    }

    /// How many recorded violations break a `spec` rule.
    pub fn spec_violations(&self) -> usize {
        self.violations
            .iter()
            .filter(|v| v.rule.level == Level::Spec)
            .count()
    }

    /// The IDs of the rules broken, in order, without repeats.
    pub fn rule_ids(&self) -> Vec<&'static str> {
        let mut ids: Vec<&'static str> = Vec::new();
        for v in &self.violations {
            if !ids.contains(&v.rule.id) {
                ids.push(v.rule.id);
            }
        }
        ids
    }
}

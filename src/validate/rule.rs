//! The rule type, violations and reports shared by every validator.

use std::fmt;

/// How binding a rule is (docs/interpretations.md § Rules and levels).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Level {
    /// A MUST / MUST NOT of the spec: enforced in strict and permissive mode.
    Spec,
    /// A stricter check of our own: enforced in strict mode only.
    Hardening,
    /// A configured resource limit of this reader: enforced in every mode, since
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

/// One checkable requirement, identified by a stable ID.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Rule {
    /// Stable identifier, e.g. `HF-HDR-003`.
    pub id: &'static str,
    /// Whether the spec demands it or we add it.
    pub level: Level,
    /// One line saying what must hold.
    pub summary: &'static str,
    /// The spec file and section the rule comes from.
    pub spec: &'static str,
}

/// Declares rule constants and a `RULES` slice listing them in order.
///
/// ```text
/// declare_rules! {
///     HF_HDR_MAGIC: "HF-HDR-001", Spec, "magic is HRRYFILE", "file-format.md § File Header";
/// }
/// ```
macro_rules! declare_rules {
    ($($name:ident : $id:literal, $level:ident, $summary:literal, $spec:literal;)+) => {
        $(
            // Summaries quote the spec's formulas (`shape[axis]`), not links.
            #[allow(rustdoc::broken_intra_doc_links)]
            #[doc = concat!("`", $id, "`: ", $summary, " (", $spec, ").")]
            pub static $name: $crate::validate::Rule = $crate::validate::Rule {
                id: $id,
                level: $crate::validate::Level::$level,
                summary: $summary,
                spec: $spec,
            };
        )+
        /// Every rule declared in this module, in declaration order.
        pub static RULES: &[&$crate::validate::Rule] = &[$(&$name),+];
    };
}
pub(crate) use declare_rules;

/// How strictly a file is judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Mode {
    /// Every rule, spec and hardening alike.
    #[default]
    Strict,
    /// Spec rules only, with the spec's permissive allowances.
    Permissive,
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
}

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
/// use hrry::validate::{validate_file, Level, Mode, Options};
///
/// # let mut bytes = {
/// #     let mut w = hrry::file::HrryWriter::new(Vec::new(), Default::default())?;
/// #     w.write_row_major::<u8>("t", &[1], &[7])?;
/// #     w.finish()?
/// # };
/// bytes[10] = 0xFF; // a reserved header byte
/// let strict = validate_file(&bytes, &Options::default());
/// assert!(!strict.is_valid());
/// assert_eq!(strict.rule_ids(), ["HF-HDR-003"]);
/// for v in &strict.violations {
///     println!("{} ({}) at offset {}: {}", v.rule.id, v.rule.summary, v.offset, v.message);
/// }
///
/// // A spec rule binds in permissive mode too; only hardening rules are dropped.
/// assert_eq!(strict.violations[0].rule.level, Level::Spec);
/// let permissive = Options { mode: Mode::Permissive, ..Options::default() };
/// assert_eq!(validate_file(&bytes, &permissive).rule_ids(), ["HF-HDR-003"]);
/// # Ok::<(), hrry::file::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// The mode the report was made in.
    pub mode: Mode,
    /// Broken rules that count in this mode, in the order found.
    pub violations: Vec<Violation>,
    /// Remarks that are not violations (e.g. KV present with the flag clear).
    pub notes: Vec<String>,
    /// Set when validation stopped early because the structure could not be followed.
    pub fatal: bool,
    /// Violations found but not listed, because their rule already had
    /// [`MAX_VIOLATIONS_PER_RULE`] entries in `violations`.
    pub suppressed: u64,
    per_rule: std::collections::HashMap<&'static str, u32>,
}

impl Report {
    /// An empty report for `mode`.
    pub fn new(mode: Mode) -> Self {
        Report {
            mode,
            ..Report::default()
        }
    }

    /// Records a violation of `rule` unless the mode ignores its level.
    pub fn violation(&mut self, rule: &'static Rule, offset: u64, message: impl Into<String>) {
        if self.mode == Mode::Permissive && rule.level == Level::Hardening {
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
        self.violations.push(Violation {
            rule,
            offset,
            message: message.into(),
        });
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

    /// True when no violation was recorded.
    pub fn is_valid(&self) -> bool {
        self.violations.is_empty()
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

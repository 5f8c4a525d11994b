//! The results of a run: the text table, the `--json` document
//! (`schema/conformance.schema.json`), Markdown for a CI job summary and JUnit XML.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{json, Map, Value};

use super::score::{CaseResult, Status, Tier};

/// The version of the `--json` document.
pub const FORMAT_VERSION: u64 = 1;

/// Everything a report is made from.
pub struct Results<'a> {
    /// The testee's hello answer.
    pub testee: &'a Value,
    /// The corpus description.
    pub corpus: Value,
    /// Every case.
    pub cases: &'a [CaseResult],
    /// Expected-failure lines that match no case.
    pub stale: &'a [String],
}

/// Counts by status.
type Counts = BTreeMap<Status, usize>;

fn count<'a>(cases: impl Iterator<Item = &'a CaseResult>) -> Counts {
    let mut c = Counts::new();
    for r in cases {
        *c.entry(r.status).or_default() += 1;
    }
    c
}

fn counts_json(c: &Counts) -> Value {
    let mut m = Map::new();
    m.insert("cases".into(), json!(c.values().sum::<usize>()));
    for s in Status::ALL {
        m.insert(s.name().into(), json!(c.get(&s).copied().unwrap_or(0)));
    }
    Value::Object(m)
}

/// Counts by (format, family, tier), in that order.
fn groups(cases: &[CaseResult]) -> BTreeMap<(String, String, Tier), Counts> {
    let mut g: BTreeMap<(String, String, Tier), Counts> = BTreeMap::new();
    for r in cases {
        let c = g
            .entry((r.format.clone(), r.family.clone(), r.tier))
            .or_default();
        *c.entry(r.status).or_default() += 1;
    }
    g
}

impl Results<'_> {
    /// Whether nothing failed unexpectedly (exit 0).
    pub fn ok(&self) -> bool {
        !self.cases.iter().any(|r| r.status.fails_run())
    }

    fn name(&self) -> String {
        format!(
            "{} {}",
            self.testee["name"].as_str().unwrap_or("testee"),
            self.testee["version"].as_str().unwrap_or("")
        )
        .trim_end()
        .to_string()
    }

    /// The `--json` document.
    pub fn json(&self) -> Value {
        let by_tier: Map<String, Value> = Tier::ALL
            .iter()
            .map(|t| {
                let c = count(self.cases.iter().filter(|r| r.tier == *t));
                (t.name().to_string(), counts_json(&c))
            })
            .collect();
        let groups: Vec<Value> = groups(self.cases)
            .iter()
            .map(|((format, family, tier), c)| {
                let mut v = counts_json(c);
                v["format"] = json!(format);
                v["family"] = json!(family);
                v["tier"] = json!(tier.name());
                v
            })
            .collect();
        json!({
            "format_version": FORMAT_VERSION,
            "testee": self.testee,
            "corpus": self.corpus,
            "summary": {
                "ok": self.ok(),
                "total": counts_json(&count(self.cases.iter())),
                "tiers": by_tier,
                "groups": groups,
                "stale_expected_failures": self.stale,
            },
            "cases": self.cases.iter().map(|r| json!({
                "path": r.path,
                "tier": r.tier.name(),
                "status": r.status.name(),
                "detail": r.detail,
                "format": r.format,
                "family": r.family,
            })).collect::<Vec<_>>(),
        })
    }

    /// The text report: a header, one row per format, family and tier, the cases that
    /// did not pass, and a closing count.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "testee: {}", self.name());
        let _ = writeln!(
            s,
            "corpus: {} (manifest version {}, BLAKE3 {})\n",
            self.corpus["source"].as_str().unwrap_or(""),
            self.corpus["manifest_version"],
            self.corpus["manifest_blake3"].as_str().unwrap_or("")
        );
        let head = [
            "pass", "fail", "skip", "error", "timeout", "crash", "xfail", "xpass",
        ];
        let _ = write!(s, "{:<9} {:<10} {:<8}", "format", "family", "tier");
        for h in head {
            let _ = write!(s, " {h:>7}");
        }
        s.push('\n');
        for ((format, family, tier), c) in groups(self.cases) {
            let _ = write!(s, "{format:<9} {family:<10} {:<8}", tier.name());
            for st in Status::ALL {
                let _ = write!(s, " {:>7}", c.get(&st).copied().unwrap_or(0));
            }
            s.push('\n');
        }
        let notable: Vec<&CaseResult> = self
            .cases
            .iter()
            .filter(|r| r.status != Status::Pass && r.status != Status::Skip)
            .collect();
        if !notable.is_empty() {
            s.push('\n');
        }
        for r in notable {
            let _ = writeln!(
                s,
                "{:<16} {} {}: {}",
                r.status.name(),
                r.path,
                r.tier.name(),
                r.detail
            );
        }
        for line in self.stale {
            let _ = writeln!(s, "stale expected failure (no such case): {line}");
        }
        let total = count(self.cases.iter());
        let n = |st: Status| total.get(&st).copied().unwrap_or(0);
        let _ = writeln!(
            s,
            "\nconformance: {} passed, {} failed, {} skipped",
            n(Status::Pass) + n(Status::ExpectedFailure),
            self.cases.iter().filter(|r| r.status.fails_run()).count(),
            n(Status::Skip)
        );
        s
    }

    /// The Markdown summary: totals by tier, the table by format and family, and the
    /// cases that failed the run.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "## Conformance: {}\n", md(&self.name()));
        let _ = writeln!(
            s,
            "Corpus: {}, manifest version {}, BLAKE3 `{}`. Result: **{}**.\n",
            md(self.corpus["source"].as_str().unwrap_or("")),
            self.corpus["manifest_version"],
            self.corpus["manifest_blake3"].as_str().unwrap_or(""),
            if self.ok() { "pass" } else { "fail" }
        );
        let header = |s: &mut String, first: &str| {
            let _ = write!(s, "| {first} |");
            for st in Status::ALL {
                let _ = write!(s, " {} |", st.name());
            }
            let _ = write!(s, "\n|---|");
            for _ in Status::ALL {
                s.push_str("---:|");
            }
            s.push('\n');
        };
        let row = |s: &mut String, first: &str, c: &Counts| {
            let _ = write!(s, "| {first} |");
            for st in Status::ALL {
                let _ = write!(s, " {} |", c.get(&st).copied().unwrap_or(0));
            }
            s.push('\n');
        };
        header(&mut s, "tier");
        for t in Tier::ALL {
            row(
                &mut s,
                t.name(),
                &count(self.cases.iter().filter(|r| r.tier == t)),
            );
        }
        s.push_str("\n<details><summary>By format, rule family and tier</summary>\n\n");
        header(&mut s, "format / family / tier");
        for ((format, family, tier), c) in groups(self.cases) {
            row(
                &mut s,
                &format!("{format} / {family} / {}", tier.name()),
                &c,
            );
        }
        s.push_str("\n</details>\n");
        let failing: Vec<&CaseResult> =
            self.cases.iter().filter(|r| r.status.fails_run()).collect();
        if !failing.is_empty() {
            let _ = writeln!(
                s,
                "\n### Failing cases\n\n| case | tier | status | detail |\n|---|---|---|---|"
            );
            for r in &failing {
                let _ = writeln!(
                    s,
                    "| `{}` | {} | {} | {} |",
                    r.path,
                    r.tier.name(),
                    r.status.name(),
                    md(&r.detail)
                );
            }
        }
        s
    }

    /// JUnit XML: one test case per corpus file and tier (class `tier.format`),
    /// failures and unexpected passes as `failure`, errors, timeouts and crashes as
    /// `error`, skips as `skipped`.
    pub fn junit(&self) -> String {
        let total = count(self.cases.iter());
        let n = |st: &[Status]| {
            st.iter()
                .map(|s| total.get(s).copied().unwrap_or(0))
                .sum::<usize>()
        };
        let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = writeln!(
            s,
            "<testsuites><testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\">",
            xml(&format!("hrry conformance: {}", self.name())),
            self.cases.len(),
            n(&[Status::Fail, Status::UnexpectedPass]),
            n(&[Status::Error, Status::Timeout, Status::Crash]),
            n(&[Status::Skip])
        );
        for r in self.cases {
            let _ = write!(
                s,
                "  <testcase classname=\"{}.{}\" name=\"{}\"",
                r.tier.name(),
                xml(&r.format),
                xml(&r.path)
            );
            let body = match r.status {
                Status::Pass | Status::ExpectedFailure => None,
                Status::Skip => Some("skipped"),
                Status::Fail | Status::UnexpectedPass => Some("failure"),
                Status::Error | Status::Timeout | Status::Crash => Some("error"),
            };
            match body {
                None => s.push_str("/>\n"),
                Some(tag) => {
                    let _ = writeln!(
                        s,
                        "><{tag} message=\"{}: {}\"/></testcase>",
                        r.status.name(),
                        xml(&r.detail)
                    );
                }
            }
        }
        s.push_str("</testsuite></testsuites>\n");
        s
    }
}

/// Text made safe in XML attributes.
fn xml(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            '\'' => s.push_str("&apos;"),
            c if (c as u32) < 0x20 => s.push(' '),
            c => s.push(c),
        }
    }
    s
}

/// Text made safe in a Markdown table cell.
fn md(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

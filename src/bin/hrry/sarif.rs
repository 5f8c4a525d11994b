//! `hrry validate --sarif`: the findings of a run as one SARIF 2.1.0 log (OASIS Static
//! Analysis Results Interchange Format), the format code-scanning services read.
//!
//! The log has one run: the tool with every rule of the rule table (`hrry rules`),
//! each linked to its entry in `docs/conformance.md`; one artifact per input checked
//! (a path relative to the working directory, or a URL without credentials); one
//! result per violation, located by byte offset in its artifact. Levels: `spec` →
//! `error`, `hardening` and `limit` → `warning`, the rule table's level name kept in
//! the result's `properties.level`. An input that could not be read is a
//! tool-execution notification of the run's invocation, not a result.

use hrry::validate::{all_rules, Level, Report, Rule};
use serde_json::{json, Map, Value};

use crate::conformance_map::anchor;

/// The schema the log declares.
const SCHEMA: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// Where a rule's documentation is: the crate's source on docs.rs, or the
/// repository's when Cargo.toml names one.
fn conformance_doc() -> String {
    let version = env!("CARGO_PKG_VERSION");
    match env!("CARGO_PKG_REPOSITORY").trim_end_matches('/') {
        "" => format!("https://docs.rs/crate/hrry/{version}/source/docs/conformance.md"),
        repository => format!("{repository}/blob/v{version}/docs/conformance.md"),
    }
}

/// What checking one input gave, as the log needs it.
pub enum Checked<'a> {
    /// The input was read and validated.
    Report(&'a Report),
    /// The input could not be read; the message says why.
    Unreadable(&'a str),
}

/// The SARIF level of a rule level.
fn sarif_level(level: Level) -> &'static str {
    match level {
        Level::Spec => "error",
        Level::Hardening | Level::Limit => "warning",
    }
}

/// A rule as a SARIF reporting descriptor.
fn descriptor(rule: &Rule, doc: &str) -> Value {
    let reads = match rule.reads {
        hrry::validate::Reads::Metadata => "metadata",
        hrry::validate::Reads::Data => "data",
    };
    json!({
        "id": rule.id,
        "shortDescription": { "text": rule.summary },
        "fullDescription": {
            "text": format!("{} ({}; a {} rule, decided from {reads}).",
                rule.summary, rule.spec, rule.level.name()),
        },
        "help": {
            "text": format!(
                "{}. Level {}: {}. Enforces {} of the Hurray spec.",
                rule.summary,
                rule.level.name(),
                level_help(rule.level),
                rule.spec
            ),
        },
        "helpUri": format!("{doc}#{}", anchor(rule)),
        "defaultConfiguration": { "level": sarif_level(rule.level) },
        "properties": { "level": rule.level.name(), "reads": reads, "spec": rule.spec },
    })
}

/// What a rule level means, for the help text.
fn level_help(level: Level) -> &'static str {
    match level {
        Level::Spec => "the spec makes a file breaking it invalid",
        Level::Hardening => {
            "hrry's stricter check (policy): a file breaking it is refused under the \
             hardened policy, though the spec does not make it invalid"
        }
        Level::Limit => {
            "a resource bound of hrry's: the file was not fully checked, so no verdict \
             of the spec's is given"
        }
    }
}

/// The artifact location of an input named `name`: a URL as it is, a local path as
/// a URI reference (relative to the working directory, `%SRCROOT%`, unless absolute).
fn location(name: &str, index: usize) -> Value {
    if crate::remote::url(std::path::Path::new(name)).is_some() {
        return json!({ "uri": name, "index": index });
    }
    let mut uri = String::new();
    if name.starts_with('/') {
        uri.push_str("file://");
    }
    percent_encode(name, &mut uri);
    if name.starts_with('/') {
        json!({ "uri": uri, "index": index })
    } else {
        json!({ "uri": uri, "uriBaseId": "%SRCROOT%", "index": index })
    }
}

/// Appends `path` to `uri`, each byte but unreserved characters and `/`
/// percent-encoded.
fn percent_encode(path: &str, uri: &mut String) {
    for b in path.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                uri.push(char::from(b))
            }
            _ => uri.push_str(&format!("%{b:02X}")),
        }
    }
}

/// The working directory as a `file:` URI ending with `/`, for `%SRCROOT%`.
fn working_directory() -> Option<Value> {
    let dir = std::env::current_dir().ok()?;
    let dir = dir.to_str()?;
    let mut uri = String::from("file://");
    percent_encode(dir, &mut uri);
    if !uri.ends_with('/') {
        uri.push('/');
    }
    Some(json!({ "uri": uri }))
}

/// The SARIF log of a run over `inputs` (name and what checking it gave), in order.
pub fn log<'a>(inputs: impl IntoIterator<Item = (&'a str, Checked<'a>)>) -> Value {
    let doc = conformance_doc();
    let rules: Vec<&'static Rule> = all_rules().collect();
    let index_of: std::collections::HashMap<&str, usize> =
        rules.iter().enumerate().map(|(i, r)| (r.id, i)).collect();
    let mut artifacts = Vec::new();
    let mut results = Vec::new();
    let mut notifications = Vec::new();
    for (i, (name, checked)) in inputs.into_iter().enumerate() {
        let loc = location(name, i);
        let mut artifact = Map::new();
        artifact.insert("location".into(), without_index(&loc));
        match checked {
            Checked::Report(report) => {
                if !report.notes.is_empty() {
                    artifact.insert("properties".into(), json!({ "notes": report.notes }));
                }
                for v in &report.violations {
                    let mut result = json!({
                        "ruleId": v.rule.id,
                        "level": sarif_level(v.rule.level),
                        "message": { "text": v.message },
                        "locations": [{
                            "physicalLocation": {
                                "artifactLocation": loc,
                                "region": { "byteOffset": v.offset },
                            },
                        }],
                        "properties": { "level": v.rule.level.name() },
                    });
                    if let Some(&r) = index_of.get(v.rule.id) {
                        result["ruleIndex"] = json!(r);
                    }
                    results.push(result);
                }
            }
            Checked::Unreadable(message) => {
                notifications.push(json!({
                    "level": "error",
                    "message": { "text": message },
                    "locations": [{ "physicalLocation": { "artifactLocation": loc } }],
                }));
            }
        }
        artifacts.push(Value::Object(artifact));
    }
    let mut run = json!({
        "tool": {
            "driver": {
                "name": "hrry",
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "informationUri": doc,
                "rules": rules.iter().map(|r| descriptor(r, &doc)).collect::<Vec<_>>(),
            },
        },
        "invocations": [{
            "executionSuccessful": notifications.is_empty(),
            "toolExecutionNotifications": notifications,
        }],
        "artifacts": artifacts,
        "results": results,
        "columnKind": "unicodeCodePoints",
    });
    if let Some(root) = working_directory() {
        run["originalUriBaseIds"] = json!({ "%SRCROOT%": root });
    }
    json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [run],
    })
}

/// An artifact location without its `index` (an artifact's own location has none).
fn without_index(loc: &Value) -> Value {
    let mut loc = loc.clone();
    if let Some(m) = loc.as_object_mut() {
        m.remove("index");
    }
    loc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_paths_are_relative_uri_references_and_urls_stay() {
        assert_eq!(
            location("corpus/valid/a b.hrry", 0),
            json!({ "uri": "corpus/valid/a%20b.hrry", "uriBaseId": "%SRCROOT%", "index": 0 })
        );
        assert_eq!(
            location("/tmp/x#1.holo", 2),
            json!({ "uri": "file:///tmp/x%231.holo", "index": 2 })
        );
        assert_eq!(
            location("https://example.com/m.hrry", 1),
            json!({ "uri": "https://example.com/m.hrry", "index": 1 })
        );
    }

    #[test]
    fn levels_map_spec_to_error_and_the_others_to_warning() {
        assert_eq!(sarif_level(Level::Spec), "error");
        assert_eq!(sarif_level(Level::Hardening), "warning");
        assert_eq!(sarif_level(Level::Limit), "warning");
    }

    #[test]
    fn an_unreadable_input_is_a_notification_not_a_result() {
        let log = log([(
            "missing.hrry",
            Checked::Unreadable("cannot read missing.hrry"),
        )]);
        let run = &log["runs"][0];
        assert_eq!(run["results"], json!([]));
        assert_eq!(run["invocations"][0]["executionSuccessful"], json!(false));
        assert_eq!(
            run["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"],
            json!("cannot read missing.hrry")
        );
    }
}

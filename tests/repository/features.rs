//! The feature table of `src/lib.rs`'s documentation (`# Features`) agrees with
//! `[features]` in Cargo.toml: a row for each feature and none for a feature that
//! does not exist, the default column saying whether a default build has it, and
//! "implies" naming exactly the features it turns on.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// `[features]` of a Cargo.toml: each feature and the features it turns on
/// (`dep:` entries left out). Each entry is one line, `name = [ … ]`, as the
/// manifest writes them.
fn cargo_features(manifest: &str) -> BTreeMap<String, Vec<String>> {
    manifest
        .lines()
        .skip_while(|line| line.trim() != "[features]")
        .skip(1)
        .take_while(|line| !line.starts_with('['))
        .filter(|line| !line.trim_start().starts_with('#'))
        .filter_map(|line| {
            let (name, list) = line.split_once('=')?;
            let list = list.trim().strip_prefix('[')?.strip_suffix(']')?;
            let enables = list
                .split(',')
                .map(|s| s.trim().trim_matches('"'))
                .filter(|s| !s.is_empty() && !s.starts_with("dep:"))
                .map(String::from)
                .collect();
            Some((name.trim().to_string(), enables))
        })
        .collect()
}

/// One row of the feature table.
#[derive(Debug)]
struct Row {
    feature: String,
    /// The "default" column.
    default: String,
    /// The features named in backticks after "implies" in the last column.
    implies: Vec<String>,
}

/// The rows of the `# Features` table of `src/lib.rs`'s doc comment.
fn feature_table(lib: &str) -> Vec<Row> {
    lib.lines()
        .skip_while(|line| line.trim() != "//! # Features")
        .skip(1)
        .take_while(|line| !line.starts_with("//! #") || line.trim() == "//! # Features")
        .filter_map(|line| {
            let row = line.strip_prefix("//! |")?;
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let feature = cells.first()?.strip_prefix('`')?.strip_suffix('`')?;
            let what = cells.get(2)?;
            let implies = what
                .split_once("implies")
                .map(|(_, rest)| {
                    rest.split('`')
                        .skip(1)
                        .step_by(2)
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default();
            Some(Row {
                feature: feature.to_string(),
                default: cells.get(1)?.to_string(),
                implies,
            })
        })
        .collect()
}

/// Every feature `start` turns on, itself included.
fn closure(features: &BTreeMap<String, Vec<String>>, start: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![start.to_string()];
    while let Some(f) = stack.pop() {
        if seen.insert(f.clone()) {
            stack.extend(features.get(&f).cloned().unwrap_or_default());
        }
    }
    seen
}

#[test]
fn the_feature_table_of_lib_rs_is_cargo_toml_s() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let features = cargo_features(&std::fs::read_to_string(root.join("Cargo.toml")).unwrap());
    let rows = feature_table(&std::fs::read_to_string(root.join("src/lib.rs")).unwrap());
    assert!(
        features.contains_key("default") && features.len() > 3,
        "read the features {features:?} from Cargo.toml"
    );
    assert!(rows.len() > 3, "read the rows {rows:?} from src/lib.rs");
    let declared: BTreeSet<&str> = features
        .keys()
        .map(String::as_str)
        .filter(|f| *f != "default")
        .collect();
    let documented: BTreeSet<&str> = rows.iter().map(|r| r.feature.as_str()).collect();
    assert_eq!(
        documented, declared,
        "the features src/lib.rs's table lists (left) and Cargo.toml's (right)"
    );
    let by_default = closure(&features, "default");
    for row in &rows {
        let on = by_default.contains(&row.feature);
        assert_eq!(
            row.default.starts_with("yes"),
            on,
            "feature `{}`: the table says default {:?}, Cargo.toml {}",
            row.feature,
            row.default,
            if on { "yes" } else { "no" }
        );
        if !row.implies.is_empty() {
            let implied: BTreeSet<&String> = row.implies.iter().collect();
            let enabled: BTreeSet<&String> = features[&row.feature].iter().collect();
            assert_eq!(
                implied, enabled,
                "feature `{}`: what the table says it implies (left) and what Cargo.toml turns on (right)",
                row.feature
            );
        }
    }
}

#[test]
fn the_feature_readers_read_what_they_are_given() {
    let manifest = "[package]\nname = \"x\"\n[features]\n# a comment\ndefault = [\"a\"]\na = [\"b\", \"dep:z\"]\nb = []\n[dependencies]\nc = \"1\"\n";
    let features = cargo_features(manifest);
    assert_eq!(features.len(), 3);
    assert_eq!(features["a"], ["b"]);
    assert_eq!(closure(&features, "default").len(), 3);
    let lib = "//! # Features\n//!\n//! | feature | default | what |\n//! |---|---|---|\n//! | `a` | yes | a thing; implies `b` |\n//! | `b` | yes (via `a`) | b |\n//!\n//! # Next\n//! | `c` | no | not in the table |\n";
    let rows = feature_table(lib);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0].implies, ["b"]);
    assert_eq!(rows[1].default, "yes (via `a`)");
}

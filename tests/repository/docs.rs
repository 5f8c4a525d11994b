//! The documentation matches the code: the README is a front page whose links
//! resolve and whose figures are the code's, docs/cli.md documents every subcommand,
//! and every citation of docs/interpretations.md names one of its sections.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The subcommands a `--help` text lists under `Commands:` (without `help`).
fn subcommands(args: &[&str]) -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_hrry"))
        .args(args)
        .arg("--help")
        .output()
        .expect("hrry runs");
    assert!(out.status.success(), "{args:?} --help failed");
    let text = String::from_utf8(out.stdout).expect("UTF-8 help");
    text.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(String::from)
        .collect()
}

/// Every subcommand of the binary, as `hrry COMMAND ` or, for a command with
/// subcommands, `hrry COMMAND SUB `.
fn every_subcommand() -> Vec<String> {
    let mut all = Vec::new();
    for command in subcommands(&[]) {
        let nested = subcommands(&[&command]);
        if nested.is_empty() {
            all.push(format!("hrry {command} "));
        } else {
            all.extend(nested.iter().map(|n| format!("hrry {command} {n} ")));
        }
    }
    all
}

/// The commands `docs/cli.md` lists in its synopsis (the first code block after
/// `## Commands`), as `hrry COMMAND ` or `hrry COMMAND SUB `.
fn documented_commands(cli_md: &str, nested: &[String]) -> Vec<String> {
    let list = &cli_md[cli_md.find("## Commands").expect("a Commands section")..];
    let block = &list[list.find("```").expect("a synopsis block")..];
    let block = &block[3..];
    let block = &block[..block.find("```").expect("the block ends")];
    let mut found = Vec::new();
    for line in block.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.first() != Some(&"hrry") || words.len() < 2 {
            continue;
        }
        let two = words.get(2).map(|sub| format!("hrry {} {sub} ", words[1]));
        let name = match two {
            Some(two) if nested.contains(&two) => two,
            _ => format!("hrry {} ", words[1]),
        };
        if !found.contains(&name) {
            found.push(name);
        }
    }
    found
}

#[test]
fn cli_reference_documents_exactly_the_subcommands() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cli_md = std::fs::read_to_string(root.join("docs/cli.md")).unwrap();
    let mut actual = every_subcommand();
    // `hrry conformance` runs by itself and has the subcommand `explain`.
    if actual.iter().any(|c| c.starts_with("hrry conformance ")) {
        actual.push("hrry conformance ".to_string());
    }
    actual.sort();
    actual.dedup();
    let mut documented = documented_commands(&cli_md, &actual);
    documented.sort();
    assert_eq!(
        documented, actual,
        "docs/cli.md's synopsis against the binary's --help"
    );
}

#[test]
fn readme_is_a_front_page() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines <= 200, "README.md has {lines} lines (at most 200)");
    // The two set-up commands, which CI runs as written in a fresh clone.
    let setup = readme_setup_commands(&readme);
    assert_eq!(
        setup,
        [
            "cargo run --release -- validate corpus/valid/basic.hrry",
            "cargo test"
        ]
    );
    let ci = std::fs::read_to_string(root.join(".ci/run")).unwrap();
    let clone_step = &ci[ci.find("git clone").expect(".ci/run clones the repository")..];
    for command in &setup {
        assert!(
            clone_step.lines().any(|l| l.trim() == command),
            ".ci/run does not run {command:?} in its clone"
        );
    }
}

/// The commands of the README's `## Set-up` code block, comments removed.
fn readme_setup_commands(readme: &str) -> Vec<String> {
    let setup = &readme[readme.find("## Set-up").expect("a Set-up section")..];
    let block = &setup[setup.find("```sh\n").expect("a sh block") + 6..];
    let block = &block[..block.find("```").expect("the block ends")];
    block
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn the_rule_count_in_the_readme_is_the_rule_table_s() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let at = readme
        .find(" rules (`hrry rules`)")
        .expect("the README gives a rule count");
    let stated: usize = readme[..at]
        .rsplit(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
        .expect("a number before \" rules\"");
    assert_eq!(stated, hrry::validate::all_rules().count());
    let out = Command::new(env!("CARGO_BIN_EXE_hrry"))
        .args(["rules", "--json"])
        .output()
        .expect("hrry runs");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON rules");
    assert_eq!(
        stated,
        json["rules"].as_array().expect("a rule array").len()
    );
}

/// The Markdown files whose links must resolve: the README and docs/*.md.
fn linked_documents(root: &Path) -> Vec<PathBuf> {
    let mut files = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap().flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "md") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// The targets of a Markdown text's inline links `[text](target)` and reference
/// definitions `[label]: target`, outside code blocks and code spans.
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        // Drop code spans, which may hold brackets.
        let mut plain = String::new();
        for (i, piece) in line.split('`').enumerate() {
            if i % 2 == 0 {
                plain.push_str(piece);
            }
        }
        let trimmed = plain.trim_start();
        if trimmed.starts_with('[') {
            if let Some((_, rest)) = trimmed.split_once("]: ") {
                targets.push(rest.trim().to_string());
                continue;
            }
        }
        for (at, _) in plain.match_indices("](") {
            let rest = &plain[at + 2..];
            if let Some(end) = rest.find(')') {
                targets.push(rest[..end].trim().to_string());
            }
        }
    }
    targets
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces as `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| anchor(l.trim_start_matches('#')))
        .collect()
}

#[test]
fn every_relative_link_in_the_readme_and_docs_resolves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in linked_documents(root) {
        let text = std::fs::read_to_string(&file).unwrap();
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, fragment) = target.split_once('#').unwrap_or((&target, ""));
            let resolved = if path.is_empty() {
                file.clone()
            } else {
                file.parent().unwrap().join(path)
            };
            if !resolved.exists() {
                broken.push(format!("{}: {target}", file.display()));
                continue;
            }
            if !fragment.is_empty() {
                let linked = std::fs::read_to_string(&resolved).unwrap_or_default();
                if !anchors(&linked).iter().any(|a| a == fragment) {
                    broken.push(format!("{}: {target} (no such heading)", file.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links: {broken:#?}");
    // The README alone links the docs index and each page; none found means the
    // scan is broken.
    assert!(checked > 20, "only {checked} relative links found");
}

#[test]
fn the_link_scanner_reads_inline_and_reference_links() {
    let text = "see [a](docs/a.md) and [b](b.md#x-y), `[not](code)`\n\
        ```\n[nor](block)\n```\n[ref]: https://example.org\n";
    assert_eq!(
        link_targets(text),
        ["docs/a.md", "b.md#x-y", "https://example.org"]
    );
    assert_eq!(anchor("serve, fetch and put"), "serve-fetch-and-put");
    assert_eq!(anchor("Exit codes"), "exit-codes");
}

/// The second-level headings of `docs/interpretations.md`.
fn interpretation_headings(root: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(root.join("docs/interpretations.md")).unwrap();
    text.lines()
        .filter_map(|l| l.strip_prefix("## "))
        .map(|h| h.trim().to_string())
        .collect()
}

/// Every readable text file under `dir`, skipping build output and generated corpora.
fn text_files(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
    const SKIP: &[&str] = &["target", "node_modules", "corpus", "artifacts", "coverage"];
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if path.is_dir() {
            if !SKIP.contains(&name.as_ref()) && !name.starts_with('.') {
                text_files(&path, out);
            }
        } else if entry.metadata().is_ok_and(|m| m.len() < 1 << 20) {
            if let Ok(text) = std::fs::read_to_string(&path) {
                out.push((path, text));
            }
        }
    }
}

/// The README and every text file of the repository's source, test, doc and CI folders.
fn repository_texts(root: &Path) -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    for dir in [
        "src", "docs", "tests", "examples", "python", "capi", "fuzz", "schema", "benches", ".ci",
    ] {
        text_files(&root.join(dir), &mut files);
    }
    let readme = root.join("README.md");
    files.push((readme.clone(), std::fs::read_to_string(&readme).unwrap()));
    files
}

/// `text` with line breaks and the comment markers that start the following lines
/// folded into single spaces, so a citation may wrap.
fn unwrapped(text: &str) -> String {
    let mut lines = text.lines();
    let mut joined = lines.next().unwrap_or("").to_string();
    for line in lines.take(3) {
        let line = line.trim_start();
        let line = ["//!", "///", "//", "#", "*"]
            .iter()
            .find_map(|m| line.strip_prefix(m))
            .unwrap_or(line);
        joined.push(' ');
        joined.push_str(line.trim());
    }
    joined
}

/// The sections of docs/interpretations.md cited in `text` as
/// the file's path, `§` and a heading; the heading ends at punctuation (a full stop
/// too, except the one `.holo` starts with).
fn cited_sections(text: &str) -> Vec<String> {
    const DOC: &str = "docs/interpretations.md";
    let mut cited = Vec::new();
    for (at, _) in text.match_indices(DOC) {
        let rest = unwrapped(&text[at + DOC.len()..]);
        let rest = rest.trim_start_matches(|c: char| c == '`' || c.is_whitespace());
        let Some(section) = rest.strip_prefix('§') else {
            continue;
        };
        let section = section.trim_start();
        let end = section
            .char_indices()
            .find(|&(i, c)| ")];,:\"`\\".contains(c) || (c == '.' && i > 0))
            .map_or(section.len(), |(i, _)| i);
        cited.push(section[..end].trim().to_string());
    }
    cited
}

#[test]
fn citations_of_interpretations_name_existing_sections() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let headings = interpretation_headings(root);
    let sections = [
        "Rules and levels",
        "Container",
        "Descriptor",
        "Buffer handles",
        "Layouts",
        "Quantization",
        ".holo",
        "Streams and the transport",
        "Conversion",
        "The tensor server",
    ];
    assert_eq!(
        headings, sections,
        "the sections of docs/interpretations.md"
    );
    let files = repository_texts(root);
    let mut citations = 0;
    let mut unknown = Vec::new();
    for (path, text) in &files {
        for section in cited_sections(text) {
            citations += 1;
            if !headings.contains(&section) {
                unknown.push(format!("{}: § {section}", path.display()));
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "citations of missing sections: {unknown:#?}"
    );
    // The rule table alone cites more than twenty sections; finding none would mean
    // the scan itself is broken.
    assert!(citations > 20, "only {citations} citations found");
}

#[test]
fn the_section_parser_reads_wrapped_and_quoted_citations() {
    // DOC stands for the path, so that the scan of this file skips these samples.
    let text = "see DOC § Layouts).\n//! and (DOC\n//! § Streams and the transport: back to back) and \"DOC § .holo\"; \
        DOC § Container and descriptor, DOC § .holo. Next"
        .replace("DOC", "docs/interpretations.md");
    assert_eq!(
        cited_sections(&text),
        [
            "Layouts",
            "Streams and the transport",
            ".holo",
            "Container and descriptor",
            ".holo"
        ]
    );
}

#[test]
fn no_file_cites_documents_outside_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = repository_texts(root);
    // Spelled in pieces so that this file does not match itself.
    let outside = [
        ["INTERPRETATIONS", ".md"].concat(),
        ["DESIGN", ".md"].concat(),
        ["../", "shared"].concat(),
    ];
    let found: Vec<String> = files
        .iter()
        .flat_map(|(path, text)| {
            outside
                .iter()
                .filter(|o| text.contains(o.as_str()))
                .map(move |o| format!("{}: {o}", path.display()))
        })
        .collect();
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn the_c_readme_says_how_an_installed_library_is_found() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("capi/README.md")).unwrap();
    // After `capi/install.sh PREFIX`, a dynamically linked program needs the loader
    // told where PREFIX/lib is, unless the prefix is one it searches.
    let after = &text[text.find("capi/install.sh").expect("the install step")..];
    let next_section = after.find("\n## ").unwrap_or(after.len());
    let install = &after[..next_section];
    for needed in ["LD_LIBRARY_PATH=PREFIX/lib", "-Wl,-rpath,PREFIX/lib"] {
        assert!(install.contains(needed), "capi/README.md lacks {needed:?}");
    }
}

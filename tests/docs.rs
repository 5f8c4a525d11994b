//! The documentation matches the code: the README lists every subcommand, and every
//! citation of docs/interpretations.md names one of its sections.

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

#[test]
fn readme_lists_every_subcommand() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let list = &readme[readme
        .find("## Command line")
        .expect("a command-line section")..];
    let list = &list[..list.find("\n## ").unwrap_or(list.len())];
    let top = subcommands(&[]);
    assert!(top.len() >= 7, "{top:?}");
    let mut missing = Vec::new();
    for command in &top {
        let nested = subcommands(&[command]);
        let names: Vec<String> = if nested.is_empty() {
            vec![format!("hrry {command} ")]
        } else {
            nested
                .iter()
                .map(|n| format!("hrry {command} {n} "))
                .collect()
        };
        missing.extend(names.into_iter().filter(|n| !list.contains(n.as_str())));
    }
    assert!(
        missing.is_empty(),
        "README's command list lacks {missing:?}"
    );
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

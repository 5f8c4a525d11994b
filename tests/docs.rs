//! The README's command list names every subcommand `hrry --help` lists.

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

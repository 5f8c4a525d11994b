//! The module map of docs/architecture.md agrees with the tree: a row for each
//! top-level module of `src/` (a folder or a file, `lib.rs` and the binary aside),
//! and no row, nor file named in a row, that is not there.

use std::collections::BTreeSet;
use std::path::Path;

/// One row of the `## Module map` table: the paths of its first cell and the
/// file and folder names (`x.rs`, `x/`) of its second.
#[derive(Debug)]
struct Row {
    paths: Vec<String>,
    names: Vec<String>,
}

/// The text between backticks in `cell`.
fn code_spans(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(String::from)
        .collect()
}

/// The rows of the `## Module map` table of `architecture`.
fn module_map(architecture: &str) -> Vec<Row> {
    architecture
        .lines()
        .skip_while(|line| line.trim() != "## Module map")
        .skip(1)
        .take_while(|line| !line.starts_with("## "))
        .filter_map(|line| {
            let row = line.trim().strip_prefix('|')?;
            let (first, rest) = row.split_once('|')?;
            let paths = code_spans(first);
            if paths.is_empty() {
                return None; // the header or the separator
            }
            let names = code_spans(rest)
                .into_iter()
                .filter(|n| {
                    !n.contains(' ')
                        && (n.ends_with(".rs") || n.ends_with('/'))
                        && !n.starts_with("src/")
                })
                .collect();
            Some(Row { paths, names })
        })
        .collect()
}

/// The top-level modules of the library: `src/x/` and `src/x.rs`, by name.
fn top_level_modules(src: &Path) -> BTreeSet<String> {
    std::fs::read_dir(src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_string();
            if p.is_dir() {
                (name != "bin").then_some(name)
            } else {
                let module = name.strip_suffix(".rs")?;
                (module != "lib").then(|| module.to_string())
            }
        })
        .collect()
}

#[test]
fn the_module_map_of_architecture_md_is_the_tree() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rows = module_map(&std::fs::read_to_string(root.join("docs/architecture.md")).unwrap());
    assert!(rows.len() > 10, "read the rows {rows:?}");
    let modules = top_level_modules(&root.join("src"));
    assert!(modules.len() > 10, "found the modules {modules:?}");
    // Named in a first cell as `src/x/` or `src/x.rs`.
    let mapped: BTreeSet<String> = rows
        .iter()
        .flat_map(|r| &r.paths)
        .filter_map(|p| {
            let rest = p.strip_prefix("src/")?;
            let module = rest
                .strip_suffix('/')
                .or_else(|| rest.strip_suffix(".rs"))?;
            (!module.contains('/')).then(|| module.to_string())
        })
        .collect();
    let unmapped: Vec<_> = modules.difference(&mapped).collect();
    assert!(
        unmapped.is_empty(),
        "modules of src/ without a row in docs/architecture.md's module map: {unmapped:?}"
    );
    let mut gone = Vec::new();
    for row in &rows {
        for path in &row.paths {
            if !root.join(path).exists() {
                gone.push(path.clone());
            }
        }
        // The names in a folder's row are of files and folders in it.
        if let [folder] = row.paths.as_slice() {
            if folder.starts_with("src/") && folder.ends_with('/') {
                for name in &row.names {
                    if !root.join(folder).join(name).exists() {
                        gone.push(format!("{folder}{name}"));
                    }
                }
            }
        }
    }
    assert!(
        gone.is_empty(),
        "docs/architecture.md's module map names what is not in the tree: {gone:?}"
    );
}

#[test]
fn the_module_map_reader_reads_paths_and_names() {
    let doc = "# A\n## Module map\n\n| path | what |\n|---|---|\n| `src/a/` | `x.rs` X; `y/` Y; `Thing` a type; `tests/` too |\n| `src/b.rs`, `src/c.rs` | b and c |\n\n## Next\n| `src/z/` | not read |\n";
    let rows = module_map(doc);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0].paths, ["src/a/"]);
    assert_eq!(rows[0].names, ["x.rs", "y/", "tests/"]);
    assert_eq!(rows[1].paths, ["src/b.rs", "src/c.rs"]);
}

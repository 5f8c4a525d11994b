//! No import cycles between the modules of each crate the repository builds from
//! its own sources: the library (`src/`), the `hrry` binary (`src/bin/hrry/`), the
//! Python extension (`python/src/`) and the C ABI (`capi/src/`).
//!
//! Reads every file of a crate and builds the graph of file modules: an edge
//! `a → b` when code in `a.rs` (its unit tests included) names an item that `b.rs`
//! defines. Paths are found in `use` trees and in code (`crate::…`, `super::…`,
//! `self::…`, `child::…`) and resolved through `pub use` re-exports to the module
//! that defines the item, so a parent that only re-exports its children is not
//! part of their cycles, but a parent whose items its children use (an error type,
//! a helper) and which calls them back is. A re-export is an edge only when the
//! re-exporting file also uses the name itself. Any cycle fails the test: without
//! one, the modules can be ordered so that each only calls the ones below it.
//! Paths into other crates (`hrry::…` from the binary and the bindings) are not
//! edges: those crates are checked on their own.
//!
//! Comments and string literals are skipped, so doc links and messages do not count.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A lexical token: an identifier or keyword, `::`, or one punctuation character.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Ident(String),
    PathSep,
    Punct(char),
}

/// Splits Rust source into tokens, dropping comments, string, byte-string, raw
/// string and character literals, numbers and lifetimes.
fn tokens(src: &str) -> Vec<Token> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == '"' {
            i = skip_quoted(&chars, i + 1);
        } else if (c == 'r' || (c == 'b' && at(i + 1) == 'r'))
            && matches!(at(i + 1 + usize::from(c == 'b')), '"' | '#')
            && is_raw_string(&chars, i + 1 + usize::from(c == 'b'))
        {
            let mut j = i + 1 + usize::from(c == 'b');
            let mut hashes = 0;
            while at(j) == '#' {
                hashes += 1;
                j += 1;
            }
            j += 1; // the opening quote
            loop {
                if j >= chars.len() {
                    break;
                }
                if chars[j] == '"' && (1..=hashes).all(|k| at(j + k) == '#') {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            i = j;
        } else if c == 'b' && at(i + 1) == '"' {
            i = skip_quoted(&chars, i + 2);
        } else if c == 'b' && at(i + 1) == '\'' {
            i = skip_char_literal(&chars, i + 1);
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{..}') or a lifetime ('a).
            if at(i + 1) == '\\' || at(i + 2) == '\'' {
                i = skip_char_literal(&chars, i);
            } else {
                i += 1;
                while at(i).is_alphanumeric() || at(i) == '_' {
                    i += 1;
                }
            }
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while at(i).is_alphanumeric() || at(i) == '_' {
                i += 1;
            }
            out.push(Token::Ident(chars[start..i].iter().collect()));
        } else if c.is_ascii_digit() {
            while at(i).is_alphanumeric()
                || at(i) == '_'
                || at(i) == '.' && at(i + 1).is_ascii_digit()
            {
                i += 1;
            }
        } else if c == ':' && at(i + 1) == ':' {
            out.push(Token::PathSep);
            i += 2;
        } else {
            if !c.is_whitespace() {
                out.push(Token::Punct(c));
            }
            i += 1;
        }
    }
    out
}

/// Whether `r` / `br` followed by hashes and a quote starts at `i` (not an
/// identifier such as `rows` or `r#type`).
fn is_raw_string(chars: &[char], mut i: usize) -> bool {
    while chars.get(i) == Some(&'#') {
        i += 1;
    }
    chars.get(i) == Some(&'"')
}

/// The index after the closing quote of a string whose contents start at `i`.
fn skip_quoted(chars: &[char], mut i: usize) -> usize {
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '"' => return i + 1,
            _ => i += 1,
        }
    }
    i
}

/// The index after a character literal whose opening quote is at `i`.
fn skip_char_literal(chars: &[char], mut i: usize) -> usize {
    i += 1;
    if chars.get(i) == Some(&'\\') {
        i += 2;
    } else {
        i += 1;
    }
    while i < chars.len() && chars[i] != '\'' {
        i += 1;
    }
    i + 1
}

/// Whether the `use` at `i` is preceded by `pub` or `pub(…)`.
fn is_reexport(toks: &[Token], i: usize) -> bool {
    let pub_at = |k: usize| toks.get(k) == Some(&Token::Ident("pub".into()));
    if i >= 1 && pub_at(i - 1) {
        return true;
    }
    // pub(crate) / pub(super) / pub(in path): find `pub (` before the `)`.
    if i >= 2 && toks[i - 1] == Token::Punct(')') {
        let mut k = i - 1;
        while k > 0 && toks[k] != Token::Punct('(') {
            k -= 1;
        }
        return k >= 1 && pub_at(k - 1);
    }
    false
}

/// One leaf of a `use` tree.
struct UseLeaf {
    /// The path as written (`self` at the end removed).
    segments: Vec<String>,
    /// Whether it is a glob (`…::*`).
    glob: bool,
    /// The name it brings into scope (the alias after `as`, else the last segment).
    local: String,
}

/// Parses a `use` tree from `i`, pushing each leaf; returns the index after the
/// tree.
fn use_tree(
    toks: &[Token],
    mut i: usize,
    mut prefix: Vec<String>,
    leaves: &mut Vec<UseLeaf>,
) -> usize {
    if toks.get(i) == Some(&Token::PathSep) {
        i += 1; // a leading `::` (extern crate path)
    }
    loop {
        match toks.get(i) {
            Some(Token::Ident(s)) => {
                prefix.push(s.clone());
                i += 1;
                if toks.get(i) == Some(&Token::PathSep) {
                    i += 1;
                    continue;
                }
                if prefix.len() > 1 && prefix.last().map(String::as_str) == Some("self") {
                    prefix.pop(); // `a::{self}` names `a`
                }
                let mut local = prefix.last().cloned().unwrap_or_default();
                if toks.get(i) == Some(&Token::Ident("as".into())) {
                    if let Some(Token::Ident(alias)) = toks.get(i + 1) {
                        local = alias.clone();
                    }
                    i += 2;
                }
                leaves.push(UseLeaf {
                    segments: prefix,
                    glob: false,
                    local,
                });
                return skip_terminator(toks, i);
            }
            Some(Token::Punct('*')) => {
                leaves.push(UseLeaf {
                    segments: prefix,
                    glob: true,
                    local: String::new(),
                });
                return skip_terminator(toks, i + 1);
            }
            Some(Token::Punct('{')) => {
                i += 1;
                while toks.get(i).is_some_and(|t| *t != Token::Punct('}')) {
                    i = use_tree(toks, i, prefix.clone(), leaves);
                }
                return skip_terminator(toks, i + 1);
            }
            _ => return i + 1,
        }
    }
}

/// Steps over the `,` or `;` after a use tree (a `}` is left to the caller).
fn skip_terminator(toks: &[Token], i: usize) -> usize {
    match toks.get(i) {
        Some(Token::Punct(',' | ';')) => i + 1,
        _ => i,
    }
}

/// Makes `segments` (starting with `crate`, `super`, `self`) absolute from module
/// `here`; `None` for a path into another crate or one that leaves the crate.
fn absolute(here: &[String], segments: &[String]) -> Option<Vec<String>> {
    let mut base: Vec<String>;
    let mut rest = segments;
    match segments.first().map(String::as_str) {
        Some("crate") => {
            base = Vec::new();
            rest = &segments[1..];
        }
        Some("self") => {
            base = here.to_vec();
            rest = &segments[1..];
        }
        Some("super") => {
            base = here.to_vec();
            while rest.first().map(String::as_str) == Some("super") {
                base.pop()?;
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The file modules of the crate whose root file (`lib.rs` or `main.rs`) is in
/// `src`: module path → source text. Folders named in `skip` (relative to `src`)
/// are other crates and left out.
fn module_files(src: &Path, skip: &[&str]) -> BTreeMap<Vec<String>, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(src).unwrap();
            if skip.iter().any(|s| rel.starts_with(s)) {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let mut module: Vec<String> = rel
                .with_extension("")
                .iter()
                .map(|c| c.to_string_lossy().into_owned())
                .collect();
            let root = module.len() == 1;
            match module.last().map(String::as_str) {
                Some("mod") => {
                    module.pop();
                }
                Some("lib" | "main") if root => {
                    module.pop();
                }
                _ => {}
            }
            out.insert(module, std::fs::read_to_string(&path).unwrap());
        }
    }
    out
}

/// The library's file modules (the binary under `src/bin/` is its own crate).
fn library_files() -> BTreeMap<Vec<String>, String> {
    module_files(&repository().join("src"), &["bin"])
}

/// The repository's root folder.
fn repository() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// A path into the crate named in a source file.
#[derive(Clone, Debug)]
struct Reference {
    /// The file module the path appears in.
    from: Vec<String>,
    /// The absolute path, as segments after `crate`.
    path: Vec<String>,
    /// A `pub use` that the file does not otherwise use: a re-export only.
    reexport_only: bool,
    /// Whether it is a `pub use` (named or glob), followed when resolving.
    reexport: bool,
    /// Whether it ends in a glob (`…::*`).
    glob: bool,
}

/// What one file names and defines.
struct FileScan {
    references: Vec<Reference>,
    /// Names the file defines (`fn`, `struct`, `enum`, `macro_rules!`, …).
    defines: BTreeSet<String>,
    /// Inline modules (`mod tests { … }`), relative to the file module.
    inline_modules: BTreeSet<Vec<String>>,
}

/// Every crate path in the tokens of the file for `module` (whose child modules
/// are `children`), and every name it defines.
fn scan(module: &[String], toks: &[Token], children: &BTreeSet<String>) -> FileScan {
    let mut references = Vec::new();
    let mut inline_modules = BTreeSet::new();
    // Inline modules and the brace depth each opened at.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    // Identifiers outside `use` trees, to tell a re-export the file also uses.
    let mut used_names: BTreeSet<String> = BTreeSet::new();
    let mut uses: Vec<(Vec<String>, UseLeaf, bool)> = Vec::new();
    let mut i = 0;
    let ident = |i: usize| match toks.get(i) {
        Some(Token::Ident(s)) => Some(s.as_str()),
        _ => None,
    };
    while i < toks.len() {
        let inline_path: Vec<String> = inline.iter().map(|(m, _)| m.clone()).collect();
        let here: Vec<String> = module
            .iter()
            .cloned()
            .chain(inline_path.iter().cloned())
            .collect();
        match &toks[i] {
            Token::Punct('{') => depth += 1,
            Token::Punct('}') => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
            }
            Token::Ident(kw) if kw == "mod" => {
                if let (Some(name), Some(Token::Punct('{'))) = (ident(i + 1), toks.get(i + 2)) {
                    inline.push((name.to_string(), depth));
                    inline_modules.insert(
                        inline_path
                            .iter()
                            .cloned()
                            .chain([name.to_string()])
                            .collect(),
                    );
                    depth += 1;
                    i += 3;
                    continue;
                }
            }
            Token::Ident(kw) if kw == "use" => {
                let reexport = is_reexport(toks, i);
                let mut leaves = Vec::new();
                i = use_tree(toks, i + 1, Vec::new(), &mut leaves);
                for leaf in leaves {
                    uses.push((here.clone(), leaf, reexport));
                }
                continue;
            }
            Token::Ident(first) => {
                used_names.insert(first.clone());
                // A path in code: `crate::a::b(…)`, `super::X`, `$crate::…`, or one
                // starting at a child module (`sparse::is_sparse(…)`); not `::x::…`.
                let after_sep = i > 0 && toks[i - 1] == Token::PathSep;
                let starts_path = matches!(first.as_str(), "crate" | "super" | "self")
                    || (inline.is_empty() && children.contains(first));
                if starts_path && !after_sep && toks.get(i + 1) == Some(&Token::PathSep) {
                    let mut segments = vec![first.clone()];
                    let mut j = i + 1;
                    while toks.get(j) == Some(&Token::PathSep) {
                        match ident(j + 1) {
                            Some(s) => segments.push(s.to_string()),
                            None => break,
                        }
                        j += 2;
                    }
                    if let Some(path) =
                        resolve_relative(&here, &segments, inline.is_empty(), children)
                    {
                        references.push(Reference {
                            from: module.to_vec(),
                            path,
                            reexport_only: false,
                            reexport: false,
                            glob: false,
                        });
                    }
                    for s in &segments {
                        used_names.insert(s.clone());
                    }
                    i = j;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    for (here, leaf, reexport) in uses {
        let at_file_level = here.len() == module.len();
        if let Some(path) = resolve_relative(&here, &leaf.segments, at_file_level, children) {
            references.push(Reference {
                from: module.to_vec(),
                path,
                reexport_only: reexport && (leaf.glob || !used_names.contains(&leaf.local)),
                reexport,
                glob: leaf.glob,
            });
        }
    }
    let mut defines = BTreeSet::new();
    for w in toks.windows(3) {
        match w {
            [Token::Ident(kw), Token::Ident(name), _]
                if matches!(
                    kw.as_str(),
                    "fn" | "struct"
                        | "enum"
                        | "const"
                        | "static"
                        | "type"
                        | "trait"
                        | "union"
                        | "mod"
                ) =>
            {
                defines.insert(name.clone());
            }
            [Token::Ident(kw), Token::Punct('!'), Token::Ident(name)] if kw == "macro_rules" => {
                defines.insert(name.clone());
            }
            _ => {}
        }
    }
    FileScan {
        references,
        defines,
        inline_modules,
    }
}

/// `segments` as an absolute path from module `here`: paths starting with
/// `crate`, `super` or `self`, or (at file level) with one of the file's child
/// modules. `None` for other paths (other crates, local names).
fn resolve_relative(
    here: &[String],
    segments: &[String],
    at_file_level: bool,
    children: &BTreeSet<String>,
) -> Option<Vec<String>> {
    if at_file_level && segments.first().is_some_and(|s| children.contains(s)) {
        return Some(here.iter().chain(segments).cloned().collect());
    }
    absolute(here, segments)
}

/// The crate as a graph of file modules.
struct Crate {
    /// The file modules.
    files: BTreeSet<Vec<String>>,
    /// Inline modules, as absolute paths, mapped to the file module holding them.
    inline: BTreeMap<Vec<String>, Vec<String>>,
    /// Every reference of every file.
    references: Vec<Reference>,
    /// Names each file module defines.
    defines: BTreeMap<Vec<String>, BTreeSet<String>>,
}

/// Reads the given file modules (module path → source text).
fn parse(sources: &BTreeMap<Vec<String>, String>) -> Crate {
    let mut inline = BTreeMap::new();
    let mut references = Vec::new();
    let mut defines = BTreeMap::new();
    for (module, text) in sources {
        let children: BTreeSet<String> = sources
            .keys()
            .filter(|m| m.len() == module.len() + 1 && m.starts_with(module))
            .map(|m| m[module.len()].clone())
            .collect();
        let file = scan(module, &tokens(text), &children);
        for m in file.inline_modules {
            inline.insert(module.iter().cloned().chain(m).collect(), module.clone());
        }
        references.extend(file.references);
        defines.insert(module.clone(), file.defines);
    }
    Crate {
        files: sources.keys().cloned().collect(),
        inline,
        references,
        defines,
    }
}

impl Crate {
    /// The file module that defines what `path` names: the longest module prefix,
    /// followed through that module's re-exports (named or glob) when it does not
    /// define the name itself. A `#[macro_export]` macro named from the crate root
    /// is found in the file that defines it.
    fn defining_file(&self, path: &[String]) -> Vec<String> {
        let mut path = path.to_vec();
        // Re-export chains are short; the bound only guards against a loop.
        for _ in 0..16 {
            let (module, file) = self.longest_module(&path);
            let Some(name) = path.get(module.len()) else {
                return file; // the path names a module
            };
            if module != file || self.defines[&file].contains(name) {
                return file; // defined in the file, or inside an inline module
            }
            match self.reexport_target(&file, name) {
                Some(target) if target != path => {
                    path = target
                        .into_iter()
                        .chain(path[module.len() + 1..].iter().cloned())
                        .collect();
                }
                _ => {
                    if module.is_empty() {
                        if let Some((f, _)) = self.defines.iter().find(|(_, d)| d.contains(name)) {
                            return f.clone();
                        }
                    }
                    return file;
                }
            }
        }
        self.longest_module(&path).1
    }

    /// The longest prefix of `path` that is a module, and the file holding it.
    fn longest_module(&self, path: &[String]) -> (Vec<String>, Vec<String>) {
        for n in (0..=path.len()).rev() {
            let p = path[..n].to_vec();
            if self.files.contains(&p) {
                return (p.clone(), p);
            }
            if let Some(file) = self.inline.get(&p) {
                return (p, file.clone());
            }
        }
        (Vec::new(), Vec::new())
    }

    /// Where `file` re-exports `name` from, if it does.
    fn reexport_target(&self, file: &[String], name: &str) -> Option<Vec<String>> {
        let reexports = self
            .references
            .iter()
            .filter(|r| r.reexport && r.from == file);
        for r in reexports.clone().filter(|r| !r.glob) {
            if r.path.last().map(String::as_str) == Some(name) {
                return Some(r.path.clone());
            }
        }
        for r in reexports.filter(|r| r.glob) {
            let (_, target) = self.longest_module(&r.path);
            if self.defines.get(&target).is_some_and(|d| d.contains(name)) {
                return Some(r.path.iter().cloned().chain([name.to_string()]).collect());
            }
        }
        None
    }

    /// `from → to` for every pair of distinct files with a reference between them,
    /// with the first reference found as evidence.
    fn edges(&self) -> BTreeMap<(String, String), String> {
        let name = |m: &[String]| {
            if m.is_empty() {
                "crate".to_string()
            } else {
                m.join("::")
            }
        };
        let mut out = BTreeMap::new();
        for r in self.references.iter().filter(|r| !r.reexport_only) {
            let to = self.defining_file(&r.path);
            if to != r.from {
                out.entry((name(&r.from), name(&to))).or_insert_with(|| {
                    format!("{} names crate::{}", name(&r.from), r.path.join("::"))
                });
            }
        }
        out
    }

    /// Every cycle, each as its modules and the references that close it.
    fn cycles(&self) -> Vec<String> {
        let edges = self.edges();
        let mut adjacency: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (a, b) in edges.keys() {
            adjacency.entry(a).or_default().push(b);
        }
        strongly_connected(&adjacency)
            .into_iter()
            .filter(|component| component.len() > 1)
            .map(|component| {
                let steps: Vec<String> = edges
                    .iter()
                    .filter(|((a, b), _)| {
                        component.contains(&a.as_str()) && component.contains(&b.as_str())
                    })
                    .map(|((a, b), why)| format!("  {a} -> {b}: {why}"))
                    .collect();
                format!("cycle {{{}}}\n{}", component.join(", "), steps.join("\n"))
            })
            .collect()
    }
}

/// The strongly connected components of a small directed graph (Tarjan).
fn strongly_connected<'a>(adjacency: &BTreeMap<&'a str, Vec<&'a str>>) -> Vec<Vec<&'a str>> {
    struct State<'a> {
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<Vec<&'a str>>,
    }
    fn visit<'a>(v: &'a str, adjacency: &BTreeMap<&'a str, Vec<&'a str>>, s: &mut State<'a>) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for &w in adjacency.get(v).map(Vec::as_slice).unwrap_or(&[]) {
            if !s.index.contains_key(w) {
                visit(w, adjacency, s);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w);
                if w == v {
                    break;
                }
            }
            component.sort_unstable();
            s.out.push(component);
        }
    }
    let mut s = State {
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for &v in adjacency.keys() {
        if !s.index.contains_key(v) {
            visit(v, adjacency, &mut s);
        }
    }
    s.out
}

#[test]
fn library_modules_have_no_import_cycles() {
    let sources = library_files();
    assert!(
        sources.len() > 20,
        "found only {} modules under src/",
        sources.len()
    );
    let krate = parse(&sources);
    // The reader must see the edges the layering relies on, else it could pass by
    // finding nothing.
    let edges = krate.edges();
    for (a, b) in [
        ("file::reader", "validate::rules::container"),
        ("decode::descriptor", "schema::descriptor"),
        ("layout::dense", "layout::addressing"),
        ("quant", "decode::quant"),
    ] {
        assert!(
            edges.contains_key(&(a.into(), b.into())),
            "no edge {a} -> {b} in {edges:#?}"
        );
    }
    let cycles = krate.cycles();
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

/// Checks the crate rooted at `src` (relative to the repository) for cycles, after
/// making sure the scan found at least `min_modules` files and the edges `expected`
/// (so that it cannot pass by finding nothing).
fn assert_no_cycles(src: &str, skip: &[&str], min_modules: usize, expected: &[(&str, &str)]) {
    let sources = module_files(&repository().join(src), skip);
    assert!(
        sources.len() >= min_modules,
        "found only {} modules under {src}",
        sources.len()
    );
    let krate = parse(&sources);
    let edges = krate.edges();
    for (a, b) in expected {
        assert!(
            edges.contains_key(&(a.to_string(), b.to_string())),
            "no edge {a} -> {b} under {src} in {edges:#?}"
        );
    }
    let cycles = krate.cycles();
    assert!(
        cycles.is_empty(),
        "import cycles under {src}:\n{}",
        cycles.join("\n")
    );
}

#[test]
fn cli_modules_have_no_import_cycles() {
    assert_no_cycles(
        "src/bin/hrry",
        &[],
        15,
        &[("inspect", "render"), ("holo", "outcome")],
    );
}

#[test]
fn python_extension_modules_have_no_import_cycles() {
    assert_no_cycles("python/src", &[], 10, &[("file", "errors")]);
}

#[test]
fn c_abi_modules_have_no_import_cycles() {
    assert_no_cycles("capi/src", &[], 5, &[("file", "error")]);
}

/// The only cycle among `files`; fails when there is none or more than one.
fn the_one_cycle(files: &[(&str, &str)]) -> String {
    let cycles = parse(&sources(files)).cycles();
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    cycles.into_iter().next().unwrap()
}

fn sources(files: &[(&str, &str)]) -> BTreeMap<Vec<String>, String> {
    files
        .iter()
        .map(|(m, text)| {
            let module = m
                .split("::")
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect();
            (module, text.to_string())
        })
        .collect()
}

#[test]
fn a_cycle_through_a_parent_that_children_use_is_found() {
    // layout::addressing ↔ layout::dense as they were: addressing uses the parent's
    // error type and the parent calls dense, which calls addressing.
    let cycle = the_one_cycle(&[
        ("", "pub mod layout;"),
        (
            "layout",
            "mod addressing; mod dense; pub struct LayoutError; pub fn f() { dense::g(); }",
        ),
        (
            "layout::dense",
            "use super::addressing::h; pub fn g() { h() }",
        ),
        (
            "layout::addressing",
            "use super::LayoutError; pub fn h() {}",
        ),
    ]);
    assert!(
        cycle.starts_with("cycle {layout, layout::addressing, layout::dense}"),
        "{cycle}"
    );
}

#[test]
fn a_cycle_between_top_level_modules_is_found_from_code_paths() {
    let cycle = the_one_cycle(&[
        ("", "pub mod layout; pub mod validate;"),
        (
            "layout",
            "pub fn bits() { crate::validate::descriptor::width(); }",
        ),
        ("validate", "pub mod descriptor;"),
        (
            "validate::descriptor",
            "pub fn width() { let _ = crate::layout::bits; }",
        ),
    ]);
    assert!(
        cycle.starts_with("cycle {layout, validate::descriptor}"),
        "{cycle}"
    );
}

#[test]
fn a_cycle_through_a_use_tree_and_a_reexport_is_found() {
    let cycle = the_one_cycle(&[
        ("", "pub mod a;"),
        ("a", "mod dense; mod addressing; pub use dense::Dense;"),
        ("a::dense", "use super::addressing::map; pub struct Dense;"),
        // Names `Dense` through the parent's re-export, in a grouped use tree.
        (
            "a::addressing",
            "use crate::a::{self, Dense as D}; pub fn map() {}",
        ),
    ]);
    assert!(
        cycle.starts_with("cycle {a::addressing, a::dense}"),
        "{cycle}"
    );
}

#[test]
fn reexports_comments_and_strings_make_no_edge() {
    let krate = parse(&sources(&[
        ("", "pub mod a; pub mod b;"),
        // A parent that only re-exports its children (one by glob) is no part of a
        // cycle even when a child names a sibling's item through it.
        ("a", "mod c; mod d; pub use c::X; pub use d::*;"),
        ("a::c", "use super::Y; pub struct X;"),
        ("a::d", "pub struct Y;"),
        // b names a::X; the mentions of crate::b in a comment, a string, a raw
        // string and after a lifetime and a character literal are not references.
        (
            "b",
            "use crate::a::X; // crate::b::x\n/* crate::b */ fn s<'a>(_: &'a str) { let _ = ('\"', \"crate::b\", r#\"crate::b\"#); }",
        ),
    ]));
    assert!(krate.cycles().is_empty(), "{:?}", krate.cycles());
    let edges: Vec<_> = krate.edges().into_keys().collect();
    assert_eq!(
        edges,
        [
            ("a::c".to_string(), "a::d".to_string()),
            ("b".to_string(), "a::c".to_string())
        ]
    );
}

/// The layers `src/lib.rs` lists under "# Layers", in order: `1. [`schema`] — …`.
fn stated_layers(lib: &str) -> Vec<String> {
    lib.lines()
        .filter_map(|line| {
            let item = line.strip_prefix("//! ")?;
            let (number, rest) = item.split_once(". [`")?;
            number.parse::<u32>().ok()?;
            let name = rest.split('`').next()?;
            Some(name.trim_start_matches("mod@").to_string())
        })
        .collect()
}

#[test]
fn each_layer_imports_only_the_layers_lib_rs_lists_before_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let layers = stated_layers(&lib);
    assert_eq!(
        layers,
        ["schema", "model", "layout", "validate", "decode", "file", "quant", "holo", "stream"],
        "the layer list of src/lib.rs"
    );
    let rank = |module: &str| {
        let top = module.split("::").next().unwrap_or_default();
        layers.iter().position(|l| l == top)
    };
    let edges = parse(&library_files()).edges();
    // Unit tests that build their fixtures with a later layer (the graph counts
    // test code too); each must still exist, so the list cannot go stale.
    let fixtures = [
        ("file::writer", "quant::quantize"),
        ("schema::transport", "model::build"),
        ("schema::transport", "model::element_type"),
    ];
    for (a, b) in fixtures {
        assert!(
            edges.contains_key(&(a.into(), b.into())),
            "no edge {a} -> {b}"
        );
    }
    let mut upward = Vec::new();
    for ((a, b), why) in &edges {
        if fixtures.contains(&(a.as_str(), b.as_str())) {
            continue;
        }
        if let (Some(from), Some(to)) = (rank(a), rank(b)) {
            if to > from {
                upward.push(format!("{a} -> {b}: {why}"));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports from a later layer:\n{}",
        upward.join("\n")
    );
    // The check sees edges between layers, so it could fail.
    assert!(edges
        .keys()
        .any(|(a, b)| matches!((rank(a), rank(b)), (Some(x), Some(y)) if y < x)));
}

/// The modules `src/lib.rs` declares public (`pub mod name;`, behind a feature or not).
fn public_modules(lib: &str) -> Vec<String> {
    lib.lines()
        .filter_map(|line| line.trim().strip_prefix("pub mod ")?.strip_suffix(';'))
        .map(String::from)
        .collect()
}

/// The names `src/lib.rs`'s "Beside them:" paragraph puts in backticks (links or
/// not), the identifiers only.
fn modules_beside_the_layers(lib: &str) -> Vec<String> {
    let paragraph: String = lib
        .lines()
        .skip_while(|line| !line.starts_with("//! Beside them:"))
        .take_while(|line| line.trim() != "//!")
        .map(|line| line.trim_start_matches("//!"))
        .collect::<Vec<_>>()
        .join(" ");
    paragraph
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|name| !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_'))
        .map(String::from)
        .collect()
}

#[test]
fn every_library_module_is_a_layer_or_named_beside_them() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let layers = stated_layers(&lib);
    let beside = modules_beside_the_layers(&lib);
    let modules = public_modules(&lib);
    assert!(
        modules.len() > layers.len() && beside.len() > 5,
        "found modules {modules:?}, beside the layers {beside:?}"
    );
    let unlisted: Vec<_> = modules
        .iter()
        .filter(|m| !layers.contains(m) && !beside.contains(m))
        .collect();
    assert!(
        unlisted.is_empty(),
        "modules src/lib.rs neither layers nor names beside them: {unlisted:?}"
    );
    let stale: Vec<_> = beside.iter().filter(|m| !modules.contains(m)).collect();
    assert!(
        stale.is_empty(),
        "src/lib.rs names modules beside the layers that it does not declare: {stale:?}"
    );
    // The test support is its own crate (testkit/), not part of the library.
    for test_support in ["corpus", "testing"] {
        assert!(
            !modules.iter().any(|m| m == test_support) && !src.join(test_support).exists(),
            "src/{test_support} is test support: it belongs in testkit/"
        );
    }
}

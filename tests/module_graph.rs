//! The top-level modules of `src/` form no import circle and keep their layers:
//!
//! ```text
//! api → runtime → policy → trace (the recorder) → hsa → leaves
//! ```
//!
//! where the leaves (`config`, `error`, `probe`, `fork_guard`, `logging`) use no module of the
//! crate, and a module may use any module of a lower layer, never one of its own or a higher
//! one. `probe` is the trace probe the HSA layer reports through; the recorder above `hsa`
//! installs itself into it.
//!
//! The graph is read from the source, not from the compiler: every `crate::a::...` path
//! (in `use` declarations, `use crate::{a, b::c}` groups, inline paths and `$crate::` in
//! macros) and every `super::` path that climbs to the crate root counts as "this file's
//! top-level module uses `a`". Comments, string and char literals are blanked first, so paths
//! in documentation do not count. Test modules (`#[cfg(test)]`) are read like the rest: their
//! imports are held to the same layers. What this reader cannot see: a path through a name
//! imported by `use` is attributed to the `use`, which is enough, because a module of the
//! crate can only be named from outside it through `crate::` or `super::` (only `lib.rs` could
//! name one bare, and it only declares them).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, top first. A module may use modules of lower layers only.
const LAYERS: &[&[&str]] = &[
    &["api"],
    &["runtime"],
    &["policy"],
    &["trace"],
    &["hsa"],
    &["config", "error", "probe", "fork_guard", "logging"],
];

/// Where an edge was seen first: file and line.
type Witness = (PathBuf, usize);
type Graph = BTreeMap<String, BTreeMap<String, Witness>>;

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The source with comments, string literals and char literals replaced by spaces (newlines
/// kept, so line numbers stay right); lifetimes are left alone.
fn blank_non_code(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let blank = |out: &mut String, ch: char| out.push(if ch == '\n' { '\n' } else { ' ' });
    let is_ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut i = 0;
    while i < c.len() {
        let next = c.get(i + 1).copied();
        if c[i] == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if c[i] == '/' && next == Some('*') {
            let mut depth = 0;
            loop {
                if i >= c.len() {
                    break;
                }
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
        } else if c[i] == 'r'
            && (i == 0
                || !is_ident(c[i - 1])
                || (c[i - 1] == 'b' && (i < 2 || !is_ident(c[i - 2]))))
            && matches!(next, Some('"') | Some('#'))
        {
            // A raw string r"..." / r#"..."#, if that is what follows.
            let hashes = c[i + 1..].iter().take_while(|&&ch| ch == '#').count();
            if c.get(i + 1 + hashes) != Some(&'"') {
                out.push(c[i]);
                i += 1;
                continue;
            }
            let close: Vec<char> = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            let mut j = i + 2 + hashes;
            while j < c.len() && !c[j..].starts_with(&close) {
                j += 1;
            }
            let end = (j + close.len()).min(c.len());
            for &ch in &c[i..end] {
                blank(&mut out, ch);
            }
            i = end;
        } else if c[i] == '"' {
            let mut j = i + 1;
            while j < c.len() && c[j] != '"' {
                j += if c[j] == '\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(c.len());
            for &ch in &c[i..end] {
                blank(&mut out, ch);
            }
            i = end;
        } else if c[i] == '\'' {
            // A char literal ('x', '\n', '\u{..}') rather than a lifetime ('a).
            let end = if next == Some('\\') {
                // The escape is at least one character; the closing quote comes after it.
                c.get(i + 3..)
                    .and_then(|tail| tail.iter().position(|&ch| ch == '\''))
                    .map(|p| i + 4 + p)
            } else if c.get(i + 2) == Some(&'\'') {
                Some(i + 3)
            } else {
                None
            };
            match end {
                Some(end) => {
                    for &ch in &c[i..end] {
                        blank(&mut out, ch);
                    }
                    i = end;
                }
                None => {
                    out.push(c[i]);
                    i += 1;
                }
            }
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// The module path of a file under `src/`: `src/hsa/queue.rs` → `[hsa, queue]`,
/// `src/hsa/mod.rs` → `[hsa]`, `src/lib.rs` → `[]`.
fn module_path(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src_dir()).expect("a file under src/");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// The names a path names at its start, given the text right after `crate::` (or after the
/// `super::`s that reach the crate root): `a::b` → `[a]`, `{a, b::c, self}` → `[a, b, self]`.
fn first_segments(rest: &str) -> Vec<String> {
    let rest = rest.trim_start();
    if let Some(group) = rest.strip_prefix('{') {
        let mut names = Vec::new();
        let (mut depth, mut start) = (0usize, 0usize);
        for (k, ch) in group.char_indices() {
            match ch {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    names.extend(first_segments(&group[start..k]));
                    break;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    names.extend(first_segments(&group[start..k]));
                    start = k + 1;
                }
                _ => {}
            }
        }
        return names;
    }
    let name: String = rest
        .chars()
        .take_while(|&ch| ch.is_alphanumeric() || ch == '_')
        .collect();
    if name.is_empty() {
        Vec::new()
    } else {
        vec![name]
    }
}

/// The top-level modules `text` (a file at module path `path`, blanked) uses, with the line of
/// each first use. Inline `mod x { ... }` blocks are followed so that `super::` resolves.
fn uses(path: &[String], text: &str) -> Vec<(String, usize)> {
    let is_ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut found = Vec::new();
    // Inline modules open at this point: (name, brace depth inside them).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut line = 1;
    let mut pending_mod: Option<String> = None;
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        let ch = rest.chars().next().expect("in bounds");
        let at_word = i == 0 || !text[..i].ends_with(|p: char| is_ident(p) || p == ':');
        if ch == '\n' {
            line += 1;
        } else if ch == '{' {
            depth += 1;
            if let Some(name) = pending_mod.take() {
                inline.push((name, depth));
            }
        } else if ch == '}' {
            if inline.last().is_some_and(|(_, d)| *d == depth) {
                inline.pop();
            }
            depth = depth.saturating_sub(1);
        } else if ch == ';' {
            pending_mod = None;
        } else if at_word && rest.starts_with("mod ") {
            let name: String = rest[4..]
                .trim_start()
                .chars()
                .take_while(|&c| is_ident(c))
                .collect();
            pending_mod = Some(name);
        } else if at_word && (rest.starts_with("crate::") || rest.starts_with("super::")) {
            let mut here: Vec<String> = path.to_vec();
            here.extend(inline.iter().map(|(n, _)| n.clone()));
            let mut rest = rest;
            let mut climbs_to_root = false;
            if let Some(after) = rest.strip_prefix("crate::") {
                here.clear();
                climbs_to_root = true;
                rest = after;
            } else {
                while let Some(after) = rest.strip_prefix("super::") {
                    if here.pop().is_none() {
                        break;
                    }
                    rest = after.trim_start();
                }
                climbs_to_root |= here.is_empty();
            }
            let targets = if climbs_to_root {
                first_segments(rest)
            } else {
                vec![here[0].clone()]
            };
            found.extend(targets.into_iter().map(|t| (t, line)));
            // Skip past the keyword so the path is read once.
            i += 7;
            continue;
        }
        i += ch.len_utf8();
    }
    found
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable src/") {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The modules `lib.rs` declares.
fn top_level_modules() -> BTreeSet<String> {
    let lib = std::fs::read_to_string(src_dir().join("lib.rs")).expect("src/lib.rs");
    blank_non_code(&lib)
        .lines()
        .filter_map(|l| {
            let l = l.trim().strip_prefix("pub ").unwrap_or(l.trim());
            Some(
                l.strip_prefix("mod ")?
                    .strip_suffix(';')?
                    .trim()
                    .to_string(),
            )
        })
        .collect()
}

fn graph() -> Graph {
    let modules = top_level_modules();
    let mut files = Vec::new();
    rust_files(&src_dir(), &mut files);
    files.sort();
    let mut graph = Graph::new();
    for file in files {
        let path = module_path(&file);
        let Some(from) = path.first().cloned() else {
            continue; // lib.rs: declarations only
        };
        assert!(
            modules.contains(&from),
            "{} belongs to no module lib.rs declares",
            file.display()
        );
        let text = blank_non_code(&std::fs::read_to_string(&file).expect("readable source"));
        let entry = graph.entry(from.clone()).or_default();
        for (to, line) in uses(&path, &text) {
            if to != from && modules.contains(&to) {
                entry.entry(to).or_insert_with(|| (file.clone(), line));
            }
        }
    }
    graph
}

fn describe(graph: &Graph, from: &str, to: &str) -> String {
    let (file, line) = &graph[from][to];
    let rel = file
        .strip_prefix(src_dir().parent().unwrap())
        .unwrap_or(file);
    format!("{from} → {to} ({}:{line})", rel.display())
}

/// A cycle, as its modules in order, if the graph has one.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        graph: &Graph,
        node: &str,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = stack.iter().position(|n| n == node) {
            return Some(stack[at..].to_vec());
        }
        if done.contains(node) {
            return None;
        }
        stack.push(node.to_string());
        for next in graph.get(node).into_iter().flat_map(|e| e.keys()) {
            if let Some(cycle) = visit(graph, next, stack, done) {
                return Some(cycle);
            }
        }
        stack.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(graph, node, &mut Vec::new(), &mut done))
}

#[test]
fn top_level_modules_of_src_form_no_import_cycle() {
    let graph = graph();
    if let Some(cycle) = find_cycle(&graph) {
        let steps: Vec<String> = (0..cycle.len())
            .map(|k| describe(&graph, &cycle[k], &cycle[(k + 1) % cycle.len()]))
            .collect();
        panic!("import cycle in src/:\n  {}", steps.join("\n  "));
    }
}

#[test]
fn top_level_modules_of_src_keep_their_layers() {
    let graph = graph();
    let layer_of = |m: &str| LAYERS.iter().position(|layer| layer.contains(&m));
    let unplaced: Vec<String> = top_level_modules()
        .into_iter()
        .filter(|m| layer_of(m).is_none())
        .collect();
    assert!(
        unplaced.is_empty(),
        "modules with no place in LAYERS (tests/module_graph.rs): {unplaced:?}"
    );
    let mut wrong = Vec::new();
    for (from, edges) in &graph {
        for to in edges.keys() {
            if layer_of(to) <= layer_of(from) {
                wrong.push(describe(&graph, from, to));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "uses against the layering (api → runtime → policy → trace → hsa → leaves):\n  {}",
        wrong.join("\n  ")
    );
    // The reader sees the edges the architecture is made of (a reader that found nothing
    // would pass everything above).
    for (from, to) in [
        ("api", "runtime"),
        ("runtime", "policy"),
        ("policy", "hsa"),
        ("trace", "hsa"),
        ("hsa", "probe"),
    ] {
        assert!(
            graph.get(from).is_some_and(|e| e.contains_key(to)),
            "expected {from} to use {to}; the graph is {graph:?}"
        );
    }
}

#[test]
fn the_reader_follows_groups_super_and_inline_modules_but_not_comments_or_strings() {
    let src = r##"
        //! See `crate::doc_only`.
        use crate::{alpha::X, beta, gamma::{self, Y}};
        /* crate::block_comment */
        fn f() {
            let _ = "crate::in_a_string";
            let _ = r#"crate::in_a_raw_string"#;
            let _ = '{';
            let _ = '\'';
            let _ = "a \" crate::escaped";
            $crate::delta::g();
        }
        mod inner {
            use super::super::epsilon;
            use super::local;
        }
        fn h<'a>(x: &'a str) -> &'a str { crate::zeta::z(x) }
    "##;
    let path = vec!["top".to_string()];
    let mut got: Vec<String> = uses(&path, &blank_non_code(src))
        .into_iter()
        .map(|(m, _)| m)
        .collect();
    got.sort();
    got.dedup();
    assert_eq!(
        got,
        ["alpha", "beta", "delta", "epsilon", "gamma", "top", "zeta"]
    );
}

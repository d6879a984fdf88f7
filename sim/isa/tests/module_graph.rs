//! The crate's modules use each other in one direction only: the import graph of `src/` has
//! no cycle. On failure the test prints the cycle, with a file and line for each edge.
//!
//! Granularity: a node is a module path cut to `depth` segments; the crate root (`lib.rs`)
//! is the node `crate`. At depth 1 the nodes are the top-level modules (`api`, `inst`,
//! `decode`, `exec`, `wave`, `disasm`, `dispatch`, ...), at depth 2 also the families
//! inside them (`exec::valu`, `exec::round`, ...). An edge A -> B means a file of A names
//! a path into B: `crate::b::..`, `super::..` / `self::..` resolved against the file's (or
//! inline `mod`'s) position, `use` groups expanded, and a path that starts with the name of
//! a child module (`dispatch::run` in `lib.rs`). A path into the root's own items
//! (`crate::Foo`) is an edge to `crate`, so modules must not import through the root
//! facade. `mod x;` declarations own, they do not use: they are not edges. Comments and
//! string literals are skipped.
//!
//! The graph builder is plain text processing with no dependencies, so the same file can
//! check any crate's `src/`: call [`module_graph`] with its directory and a depth.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// node -> (node it uses -> where, as "file:line").
type Graph = BTreeMap<String, BTreeMap<String, String>>;

#[test]
fn top_level_modules_have_no_import_cycle() {
    check(1);
}

#[test]
fn modules_inside_the_top_level_ones_have_no_import_cycle() {
    check(2);
}

fn check(depth: usize) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = module_graph(&src, depth);
    let mut listing = String::new();
    for (from, to) in &graph {
        let names: Vec<&str> = to.keys().map(String::as_str).collect();
        listing += &format!("  {from} -> {}\n", names.join(", "));
    }
    // The layering the crate is built on must show up at all, or the parser lost its way.
    assert!(
        graph
            .get("decode")
            .is_some_and(|to| to.contains_key("exec")),
        "decode should use exec; graph:\n{listing}"
    );
    if let Some(cycle) = find_cycle(&graph) {
        let mut text = String::new();
        for pair in cycle.windows(2) {
            text += &format!(
                "  {} -> {}  ({})\n",
                pair[0], pair[1], graph[&pair[0]][&pair[1]]
            );
        }
        panic!(
            "import cycle among the depth-{depth} modules of src/:\n{text}whole graph:\n{listing}"
        );
    }
}

/// The import graph of the crate whose sources are under `src` (see the file comment).
pub fn module_graph(src: &Path, depth: usize) -> Graph {
    let mut files = Vec::new();
    collect_rs(src, &mut files);
    files.sort();
    let lexed: Vec<(PathBuf, Vec<String>, Vec<Tok>)> = files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            (f.clone(), file_module(src, f), lex(&text))
        })
        .collect();
    // Every module: one per file, plus the inline `mod x { .. }` blocks.
    let mut modules = BTreeSet::new();
    for (_, module, toks) in &lexed {
        modules.insert(module.clone());
        walk(module, toks, &mut |m, _, _| {
            modules.insert(m.to_vec());
        });
    }
    let node = |m: &[String]| -> String {
        if m.is_empty() {
            "crate".into()
        } else {
            m[..m.len().min(depth)].join("::")
        }
    };
    let mut graph = Graph::new();
    for (file, module, toks) in &lexed {
        let rel = file
            .strip_prefix(src.parent().unwrap_or(src))
            .unwrap_or(file);
        for (cur, line, target) in paths(module, toks, &modules) {
            let (from, to) = (node(&cur), node(&target));
            graph.entry(from.clone()).or_default();
            if from != to {
                graph
                    .entry(from)
                    .or_default()
                    .entry(to)
                    .or_insert_with(|| format!("{}:{line}", rel.display()));
            }
        }
    }
    graph
}

/// A cycle as its nodes, the first repeated at the end, or `None`.
pub fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        graph: &Graph,
        done: &mut BTreeSet<String>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = stack.iter().position(|s| s == n) {
            let mut cycle = stack[at..].to_vec();
            cycle.push(n.to_string());
            return Some(cycle);
        }
        if done.contains(n) {
            return None;
        }
        stack.push(n.to_string());
        for next in graph.get(n).into_iter().flat_map(|to| to.keys()) {
            if let Some(c) = visit(next, graph, done, stack) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|n| visit(n, graph, &mut done, &mut Vec::new()))
}

fn collect_rs(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            collect_rs(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// `src/lib.rs` -> [], `src/a.rs` and `src/a/mod.rs` -> [a], `src/a/b.rs` -> [a, b].
fn file_module(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod")) {
        parts.pop();
    }
    if parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main") {
        parts.clear();
    }
    parts
}

#[derive(Clone, Debug, PartialEq)]
struct Tok {
    text: String,
    line: usize,
}

/// Identifiers, `::` and single punctuation characters; comments, strings, char literals
/// and numbers are dropped.
fn lex(s: &str) -> Vec<Tok> {
    let b = s.as_bytes();
    let (mut i, mut line, mut out) = (0, 1, Vec::new());
    let skip_to = |i: &mut usize, line: &mut usize, end: usize| {
        *line += b[*i..end.min(b.len())]
            .iter()
            .filter(|&&c| c == b'\n')
            .count();
        *i = end;
    };
    while i < b.len() {
        let c = b[i];
        let rest = &s[i..];
        if c == b'\n' {
            line += 1;
            i += 1;
        } else if rest.starts_with("//") {
            let end = rest.find('\n').map_or(b.len(), |n| i + n);
            skip_to(&mut i, &mut line, end);
        } else if rest.starts_with("/*") {
            let (mut j, mut nest) = (i + 2, 1);
            while j < b.len() && nest > 0 {
                if s[j..].starts_with("/*") {
                    nest += 1;
                    j += 2;
                } else if s[j..].starts_with("*/") {
                    nest -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            skip_to(&mut i, &mut line, j);
        } else if let Some(end) = raw_string_end(s, i) {
            skip_to(&mut i, &mut line, end);
        } else if c == b'"' || (c == b'b' && b.get(i + 1) == Some(&b'"')) {
            let mut j = if c == b'b' { i + 2 } else { i + 1 };
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            skip_to(&mut i, &mut line, j + 1);
        } else if c == b'\'' {
            // A char literal ('x', '\n', '\u{..}'), or a lifetime / label ('a).
            if b.get(i + 1) == Some(&b'\\') {
                let end = s[i + 2..].find('\'').map_or(b.len(), |n| i + 2 + n + 1);
                skip_to(&mut i, &mut line, end);
            } else if let Some(ch) = s[i + 1..].chars().next() {
                let after = i + 1 + ch.len_utf8();
                i = if b.get(after) == Some(&b'\'') {
                    after + 1
                } else {
                    i + 1
                };
            } else {
                i += 1;
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let n = rest
                .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
                .unwrap_or(rest.len());
            out.push(Tok {
                text: rest[..n].to_string(),
                line,
            });
            i += n;
        } else if c.is_ascii_digit() {
            let n = rest
                .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_' || ch == '.'))
                .unwrap_or(rest.len());
            i += n;
        } else if rest.starts_with("::") {
            out.push(Tok {
                text: "::".into(),
                line,
            });
            i += 2;
        } else if c.is_ascii_whitespace() {
            i += 1;
        } else {
            let ch = rest.chars().next().unwrap();
            out.push(Tok {
                text: ch.to_string(),
                line,
            });
            i += ch.len_utf8();
        }
    }
    out
}

/// The end of a raw string (`r"..."`, `r#"..."#`, `br#"..."#`) starting at `i`, if one does.
fn raw_string_end(s: &str, i: usize) -> Option<usize> {
    let rest = &s[i..];
    let rest = rest.strip_prefix('b').unwrap_or(rest).strip_prefix('r')?;
    let hashes = rest.len() - rest.trim_start_matches('#').len();
    if !rest[hashes..].starts_with('"') {
        return None;
    }
    let close = format!("\"{}", "#".repeat(hashes));
    let body = i + (s[i..].len() - rest.len()) + hashes + 1;
    Some(
        s[body..]
            .find(&close)
            .map_or(s.len(), |n| body + n + close.len()),
    )
}

/// Calls `f(module, index, line)` at each token with the module it sits in, following inline
/// `mod x { .. }` blocks.
fn walk(file_module: &[String], toks: &[Tok], f: &mut dyn FnMut(&[String], usize, usize)) {
    let mut cur = file_module.to_vec();
    let mut open: Vec<usize> = Vec::new(); // brace depth at which each inline module opened
    let mut depth = 0;
    for (k, t) in toks.iter().enumerate() {
        match t.text.as_str() {
            "{" => {
                depth += 1;
                if k >= 2 && toks[k - 2].text == "mod" {
                    cur.push(toks[k - 1].text.clone());
                    open.push(depth);
                }
            }
            "}" => {
                if open.last() == Some(&depth) {
                    open.pop();
                    cur.pop();
                }
                depth -= 1;
            }
            _ => {}
        }
        f(&cur, k, t.line);
    }
}

/// Every module path named in the file: (module the path is in, line, module it names).
fn paths(
    file_module: &[String],
    toks: &[Tok],
    modules: &BTreeSet<Vec<String>>,
) -> Vec<(Vec<String>, usize, Vec<String>)> {
    let mut at = vec![Vec::new(); toks.len()];
    walk(file_module, toks, &mut |m, k, _| at[k] = m.to_vec());
    let text = |k: usize| toks.get(k).map_or("", |t| t.text.as_str());
    let mut out = Vec::new();
    let mut k = 0;
    while k < toks.len() {
        let cur = &at[k];
        let prev = if k > 0 { text(k - 1) } else { "" };
        let starts_path = text(k + 1) == "::" && prev != "::" && prev != "in";
        let base = match text(k) {
            "crate" if starts_path => Some(Vec::new()),
            "self" if starts_path => Some(cur.clone()),
            "super" if starts_path => {
                let mut m = cur.clone();
                m.pop();
                Some(m)
            }
            name if starts_path && prev != "." && {
                let mut child = cur.clone();
                child.push(name.to_string());
                modules.contains(&child)
            } =>
            {
                let mut child = cur.clone();
                child.push(name.to_string());
                Some(child)
            }
            _ => None,
        };
        let Some(mut base) = base else {
            k += 1;
            continue;
        };
        let line = toks[k].line;
        k += 1;
        // Further `super`s: `super::super::x`.
        while text(k) == "::" && text(k + 1) == "super" {
            base.pop();
            k += 2;
        }
        let mut named = Vec::new();
        k = use_tree(toks, k, base, &mut named);
        for p in named {
            out.push((cur.clone(), line, longest_module(&p, modules)));
        }
    }
    out
}

/// Reads `(:: seg)* [:: { tree, .. } | :: *]` from `k` after `prefix`; pushes every full
/// path; returns the index after it.
fn use_tree(
    toks: &[Tok],
    mut k: usize,
    mut prefix: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    let text = |k: usize| toks.get(k).map_or("", |t| t.text.as_str());
    while text(k) == "::" {
        let seg = text(k + 1);
        if seg == "{" {
            k += 2;
            while k < toks.len() && text(k) != "}" {
                if text(k) == "," {
                    k += 1;
                    continue;
                }
                let mut sub = prefix.clone();
                if text(k) != "self" && text(k) != "*" && text(k) != "{" {
                    sub.push(text(k).to_string());
                }
                k = use_tree(toks, k + 1, sub, out);
                // Skip `as name` and anything else up to the next item of the group.
                while k < toks.len() && text(k) != "," && text(k) != "}" {
                    k += 1;
                }
            }
            return k + 1;
        }
        if seg.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            prefix.push(seg.to_string());
        }
        k += 2;
    }
    out.push(prefix);
    k
}

/// The longest prefix of `path` that is a module (the rest names items inside it).
fn longest_module(path: &[String], modules: &BTreeSet<Vec<String>>) -> Vec<String> {
    (0..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|p| modules.contains(p))
        .unwrap_or_default()
}

#[test]
fn the_parser_resolves_paths_groups_and_super() {
    let modules: BTreeSet<Vec<String>> = [
        vec![],
        vec!["a".into()],
        vec!["a".into(), "b".into()],
        vec!["c".into()],
    ]
    .into_iter()
    .collect();
    let toks = lex("use crate::{a::b::{X, Y as Z}, c}; // crate::q::r\n\
         fn f() { let s = \"crate::c::x\"; super::X; b::f(); 'l: loop {} }\n\
         mod tests { use super::*; }");
    let found: Vec<(String, String)> = paths(&["a".to_string()], &toks, &modules)
        .into_iter()
        .map(|(from, _, to)| (from.join("::"), to.join("::")))
        .collect();
    let want = [
        ("a", "a::b"), // crate::a::b::X
        ("a", "a::b"), // crate::a::b::Y
        ("a", "c"),    // crate::c
        ("a", ""),     // super::X from a: the root
        ("a", "a::b"), // b::f, b a child of a
        ("a::tests", "a"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(f, t)| (f.to_string(), t.to_string()))
        .collect();
    assert_eq!(found, want);
    let mut g = Graph::new();
    g.entry("x".into())
        .or_default()
        .insert("y".into(), String::new());
    g.entry("y".into())
        .or_default()
        .insert("x".into(), String::new());
    assert_eq!(
        find_cycle(&g),
        Some(vec!["x".into(), "y".into(), "x".into()])
    );
}

//! The import graph of a crate's `src/`, read from the source: shared by the module-graph
//! tests of hipshim (`tests/module_graph.rs`) and hsasim-isa (`sim/isa/tests/module_graph.rs`),
//! which include this file with `#[path]`.
//!
//! Granularity: a node is a module path cut to `depth` segments; the crate root (`lib.rs`)
//! is the node `crate`. At depth 1 the nodes are the top-level modules, at depth 2 also the
//! modules inside them (`runtime::device`, `exec::valu`, ...). An edge A -> B means a file of A
//! names a path into B: `crate::b::..` (also `$crate::` in macros), `super::..` / `self::..`
//! resolved against the file's (or inline `mod`'s) position, `use` groups expanded, and a path
//! that starts with the name of a child module (`dispatch::run` in `lib.rs`). A path is
//! attributed to the longest module it names, so a path into the root's own items
//! (`crate::Foo`) is an edge to `crate`, and `super::Item` from a child is an edge to its
//! parent (also when the parent only re-exports `Item` from a sibling: the reader sees paths,
//! not what they resolve to). `mod x;` declarations own, they do not use: they are not edges.
//! Comments, string and char literals are skipped; test modules (`#[cfg(test)]`) are read like
//! the rest.
//!
//! Plain text processing with no dependencies, so it checks any crate: call [`module_graph`]
//! with its `src/` directory and a depth.

// Each including test uses a different part.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// node -> (node it uses -> where it was seen first, as "file:line").
pub type Graph = BTreeMap<String, BTreeMap<String, String>>;

/// One edge: from, to, where it was seen first.
pub type Edge = (String, String, String);

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
    // Every module is a node, also one that names no path (a leaf).
    let mut graph: Graph = modules.iter().map(|m| (node(m), BTreeMap::new())).collect();
    for (file, module, toks) in &lexed {
        let rel = file
            .strip_prefix(src.parent().unwrap_or(src))
            .unwrap_or(file);
        for (cur, line, target) in paths(module, toks, &modules) {
            let (from, to) = (node(&cur), node(&target));
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

/// `graph` without the edges from a module into its own descendants (`runtime` ->
/// `runtime::device`, `crate` -> anything): a parent declares, re-exports and assembles its
/// children, so those edges are ownership, not dependence. The edges from a child to its
/// parent stay (a child that uses its parent's items depends on it), so what is left can
/// close a cycle only among siblings or across top-level modules, never through a parent.
pub fn without_edges_into_descendants(graph: &Graph) -> Graph {
    graph
        .iter()
        .map(|(from, to)| {
            let owned = |t: &String| from == "crate" || t.starts_with(&format!("{from}::"));
            let kept = to
                .iter()
                .filter(|(t, _)| !owned(t))
                .map(|(t, w)| (t.clone(), w.clone()))
                .collect();
            (from.clone(), kept)
        })
        .collect()
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

/// Every group of nodes that reach each other (a strongly connected component of two or more
/// nodes), each sorted, with the edges inside it: all a cycle-breaker needs to see at once.
pub fn cyclic_groups(graph: &Graph) -> Vec<(Vec<String>, Vec<Edge>)> {
    let reach = |start: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![start.to_string()];
        while let Some(n) = todo.pop() {
            for next in graph.get(&n).into_iter().flat_map(|to| to.keys()) {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|n| (n, reach(n))).collect();
    let mut grouped = BTreeSet::new();
    let mut groups = Vec::new();
    for n in graph.keys() {
        if grouped.contains(n) || !reached[n].contains(n) {
            continue;
        }
        let members: Vec<String> = reached[n]
            .iter()
            .filter(|m| reached.get(m).is_some_and(|r| r.contains(n)))
            .cloned()
            .collect();
        let edges = members
            .iter()
            .flat_map(|from| {
                graph[from]
                    .iter()
                    .filter(|(to, _)| members.contains(to))
                    .map(move |(to, at)| (from.clone(), to.clone(), at.clone()))
            })
            .collect();
        grouped.extend(members.iter().cloned());
        groups.push((members, edges));
    }
    groups
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

#[test]
fn the_lexer_skips_comments_strings_and_char_literals_but_not_macro_paths() {
    let modules: BTreeSet<Vec<String>> = [
        vec![],
        vec!["top".into()],
        vec!["alpha".into()],
        vec!["delta".into()],
        vec!["zeta".into()],
    ]
    .into_iter()
    .collect();
    let src = r##"
        //! See `crate::doc_only`.
        use crate::alpha::X;
        /* crate::block_comment /* nested crate::nested */ */
        fn f() {
            let _ = "crate::in_a_string";
            let _ = r#"crate::in_a_raw_string"#;
            let _ = b"crate::in_bytes";
            let _ = '{';
            let _ = '\'';
            let _ = "a \" crate::escaped";
            $crate::delta::g();
        }
        fn h<'a>(x: &'a str) -> &'a str { crate::zeta::z(x) }
    "##;
    let found: Vec<String> = paths(&["top".to_string()], &lex(src), &modules)
        .into_iter()
        .map(|(_, _, to)| to.join("::"))
        .collect();
    assert_eq!(found, ["alpha", "delta", "zeta"]);
}

#[test]
fn edges_into_descendants_are_ownership_and_groups_list_every_edge_of_a_cycle() {
    let mut g = Graph::new();
    for (from, to) in [
        ("crate", "a"),
        ("a", "a::x"),
        ("a::x", "a"),
        ("a::x", "a::y"),
        ("a::y", "a::x"),
        ("a::y", "b"),
    ] {
        g.entry(from.into())
            .or_default()
            .insert(to.into(), format!("{from}.rs:1"));
        g.entry(to.into()).or_default();
    }
    let owned_removed = without_edges_into_descendants(&g);
    assert!(owned_removed["crate"].is_empty());
    assert!(owned_removed["a"].is_empty());
    assert!(owned_removed["a::x"].contains_key("a"));
    let groups = cyclic_groups(&owned_removed);
    assert_eq!(groups.len(), 1, "{groups:?}");
    assert_eq!(groups[0].0, ["a::x", "a::y"]);
    assert_eq!(groups[0].1.len(), 2, "{groups:?}");
}

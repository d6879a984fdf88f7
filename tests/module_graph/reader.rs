//! The import graph of a crate's `src/`, read from the source: shared by the module-graph
//! tests of hipshim (`tests/module_graph.rs`, which checks the whole house) and hsasim-isa
//! (`sim/isa/tests/module_graph.rs`), which include this file with `#[path]`.
//!
//! Granularity: a node is a module path cut to `depth` segments; the crate root (`lib.rs` or
//! `main.rs`) is the node `crate`. At depth 1 the nodes are the top-level modules, at depth 2
//! also the modules inside them (`runtime::device`, `exec::valu`, ...). An edge A -> B means
//! a file of A names a path into B: `crate::b::..` (also `$crate::` in macros), `super::..` /
//! `self::..` resolved against the file's (or inline `mod`'s) position, `use` groups
//! expanded, and a path that starts with the name of a child module (`dispatch::run` in
//! `lib.rs`). A path is attributed to the longest module it names, after following the names
//! that module binds with `use`: `super::Device` from a child of `runtime`, where
//! `runtime/mod.rs` has `use device::Device`, is an edge to `runtime::device`, while
//! `super::runtime()` (a function `runtime/mod.rs` defines) is an edge to `runtime`. A name
//! a module binds with `use` is also an edge where that module's own code names it bare
//! (`Event` in `fn f(e: &Event)` after `pub use model::Event`). Comments, string and char
//! literals are skipped; test modules (`#[cfg(test)]`) are read like the rest.
//!
//! Parents and children. `mod x;` declares a child: it is no edge. A parent's re-export of
//! what its descendants define (`pub use x::Item`, `pub(crate) use`, `pub(super) use`, any
//! `use` with a visibility) is an edge, marked [`RE_EXPORT`]: it only arranges the names,
//! and [`without_edges_into_descendants`] drops it. Every other use of a child by the
//! parent's own code is a dependence and stays: a function body calling `child::f()`, a struct
//! field of a child's type, an `impl`, a private `use child::Item` (the code then uses
//! `Item`), a re-exported name the parent's code then uses. A child's use of its parent
//! (`super::runtime()`, `crate::Config` defined in `lib.rs`) always counts. So a parent whose
//! code calls a child that calls back up (a singleton built from its children, which reach it
//! again) is a cycle, and one a sibling cycle cannot hide behind.
//!
//! What the reader does not see: names brought in by glob imports (`use super::*`,
//! `pub use x::*`) are edges to the module globbed, not to where each name is defined; names
//! that `use` items bind from other crates are not followed (`super::OnceCell` is an edge to
//! the parent); a local variable spelled like a name the module imports counts as that name.
//!
//! Plain text processing with no dependencies, so it checks any crate: call [`module_graph`]
//! with its `src/` directory and a depth.

// Each including test uses a different part.
#![allow(dead_code)]

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// node -> (node it uses -> where it was seen first, as "file:line"; where only re-exports
/// make the edge, their first place followed by [`RE_EXPORT`]).
pub type Graph = BTreeMap<String, BTreeMap<String, String>>;

/// One edge: from, to, where it was seen first.
pub type Edge = (String, String, String);

/// The mark after the place of an edge that only a parent's re-exports of its descendants
/// make. Kept in the place string so that the graph stays a plain map every including test
/// can print, and so that a listing says why such an edge is not counted.
pub const RE_EXPORT: &str = " (re-export)";

/// A module path from the crate root; empty for the root.
type Module = Vec<String>;

/// module -> (a name its `use` items bind -> the path it binds, from the crate root).
type Bindings = BTreeMap<Module, BTreeMap<String, Vec<String>>>;

/// The import graph of the crate whose sources are under `src` (see the file comment).
pub fn module_graph(src: &Path, depth: usize) -> Graph {
    let mut files = Vec::new();
    collect_rs(src, &mut files);
    files.sort();
    let lexed: Vec<(PathBuf, Module, Vec<Tok>)> = files
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
    let named: Vec<Vec<Named>> = lexed
        .iter()
        .map(|(_, module, toks)| paths(module, toks, &modules))
        .collect();
    let mut bindings = Bindings::new();
    for n in named.iter().flatten() {
        if let Some(name) = &n.binds {
            bindings
                .entry(n.module.clone())
                .or_default()
                .insert(name.clone(), n.path.clone());
        }
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
    for ((file, module, toks), mut named) in lexed.iter().zip(named) {
        let rel = file
            .strip_prefix(src.parent().unwrap_or(src))
            .unwrap_or(file);
        named.extend(bound_names_in_code(module, toks, &bindings));
        named.sort_by_key(|n| n.line);
        for n in named {
            let target = resolve(&n.path, &modules, &bindings);
            let (from, to) = (node(&n.module), node(&target));
            if from == to {
                continue;
            }
            let declares =
                n.re_export && target.len() > n.module.len() && target.starts_with(&n.module[..]);
            let at = format!(
                "{}:{}{}",
                rel.display(),
                n.line,
                if declares { RE_EXPORT } else { "" }
            );
            match graph.entry(from).or_default().entry(to) {
                Entry::Vacant(place) => {
                    place.insert(at);
                }
                // A use after re-exports: the edge is a dependence, shown where it is one.
                Entry::Occupied(mut place) if place.get().ends_with(RE_EXPORT) && !declares => {
                    place.insert(at);
                }
                Entry::Occupied(_) => {}
            }
        }
    }
    graph
}

/// `graph` under the rule for parents (see the file comment): without the edges from a
/// module into its own descendants (`runtime` -> `runtime::device`, `crate` -> anything) that
/// only re-exports make. A parent's code that uses a child stays an edge, and so does a
/// child's use of its parent, so a cycle through a parent is seen.
pub fn without_edges_into_descendants(graph: &Graph) -> Graph {
    graph
        .iter()
        .map(|(from, to)| {
            let declared = |t: &String, at: &String| {
                (from == "crate" || t.starts_with(&format!("{from}::"))) && at.ends_with(RE_EXPORT)
            };
            let kept = to
                .iter()
                .filter(|(t, at)| !declared(t, at))
                .map(|(t, at)| (t.clone(), at.clone()))
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
                } else if k >= 3 && toks[k - 3].text == "mod" && toks[k - 2].text == "$" {
                    // `mod $name { .. }` in a macro: one module per expansion, read as one.
                    cur.push(format!("${}", toks[k - 1].text));
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

/// A path named in the source.
#[derive(Clone, Debug, PartialEq)]
struct Named {
    /// The module the path is written in.
    module: Module,
    line: usize,
    /// The path from the crate root, as written (not yet followed through `use` bindings).
    path: Vec<String>,
    /// The name a `use` item binds to the path (its last segment, or the `as` name).
    binds: Option<String>,
    /// Written in a `use` item with a visibility (`pub use`, `pub(crate) use`, ...).
    re_export: bool,
}

/// For each token, whether it is in a `use` item and, if so, whether the item has a
/// visibility (a re-export).
fn use_items(toks: &[Tok]) -> Vec<Option<bool>> {
    let text = |k: usize| toks.get(k).map_or("", |t| t.text.as_str());
    let mut inside = vec![None; toks.len()];
    let mut k = 0;
    while k < toks.len() {
        if text(k) != "use" {
            k += 1;
            continue;
        }
        let re_export = match k.checked_sub(1).map(text) {
            Some("pub") => true,
            // `pub(crate)`, `pub(super)`, `pub(in path)`.
            Some(")") => toks[..k]
                .iter()
                .rposition(|t| t.text == "(")
                .is_some_and(|open| open > 0 && text(open - 1) == "pub"),
            _ => false,
        };
        let end = (k..toks.len())
            .find(|&e| text(e) == ";")
            .unwrap_or(toks.len() - 1);
        for slot in &mut inside[k..=end] {
            *slot = Some(re_export);
        }
        k = end + 1;
    }
    inside
}

/// Every in-crate path named in the file (see [`Named`]).
fn paths(file_module: &[String], toks: &[Tok], modules: &BTreeSet<Module>) -> Vec<Named> {
    let mut at = vec![Vec::new(); toks.len()];
    walk(file_module, toks, &mut |m, k, _| at[k] = m.to_vec());
    let in_use = use_items(toks);
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
        let (line, use_item) = (toks[k].line, in_use[k]);
        k += 1;
        // Further `super`s: `super::super::x`.
        while text(k) == "::" && text(k + 1) == "super" {
            base.pop();
            k += 2;
        }
        let mut named = Vec::new();
        if text(k) == "::" {
            k = use_tree(toks, k + 1, base, &mut named);
        } else {
            named.push((base, None));
        }
        for (path, binds) in named {
            out.push(Named {
                module: cur.clone(),
                line,
                path,
                // An `as` after a path outside a `use` item is a cast.
                binds: binds.filter(|_| use_item.is_some()),
                re_export: use_item == Some(true),
            });
        }
    }
    out
}

/// Reads one tree at `k` below `prefix` (`b`, `b::c`, `b::{c, d::*}`, `b as e`, `*`, `self`,
/// or a path in code: `b::f(..)`, `B::<T>::new`); pushes each full path with the name it
/// would bind in a `use` item (none for a glob); returns the index after the tree.
fn use_tree(
    toks: &[Tok],
    mut k: usize,
    mut prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>)>,
) -> usize {
    let text = |k: usize| toks.get(k).map_or("", |t| t.text.as_str());
    match text(k) {
        "{" => {
            k += 1;
            while k < toks.len() && text(k) != "}" {
                if text(k) == "," {
                    k += 1;
                    continue;
                }
                k = use_tree(toks, k, prefix.clone(), out);
                // Anything else up to the next item of the group.
                while k < toks.len() && text(k) != "," && text(k) != "}" {
                    k += 1;
                }
            }
            k + 1
        }
        "*" => {
            out.push((prefix, None));
            k + 1
        }
        seg if seg.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') => {
            if seg != "self" {
                prefix.push(seg.to_string());
            }
            if text(k + 1) == "::" {
                return use_tree(toks, k + 2, prefix, out);
            }
            let (binds, k) = match text(k + 1) {
                "as" => (Some(text(k + 2).to_string()).filter(|n| n != "_"), k + 3),
                _ => (prefix.last().cloned(), k + 1),
            };
            out.push((prefix, binds));
            k
        }
        // `::<T>` after a path in code, or something the reader does not know.
        _ => {
            out.push((prefix, None));
            k
        }
    }
}

/// Where a module's code names a name one of its `use` items binds, other than in a path
/// (`Event` in `fn f(e: &Event)` or `Event::Map`, after `use model::Event`): a use of what it
/// binds, written at that place.
fn bound_names_in_code(file_module: &[String], toks: &[Tok], bindings: &Bindings) -> Vec<Named> {
    let mut at = vec![Vec::new(); toks.len()];
    walk(file_module, toks, &mut |m, k, _| at[k] = m.to_vec());
    let in_use = use_items(toks);
    let text = |k: usize| toks.get(k).map_or("", |t| t.text.as_str());
    let mut out = Vec::new();
    for (k, tok) in toks.iter().enumerate() {
        let prev = if k > 0 { text(k - 1) } else { "" };
        if in_use[k].is_some() || prev == "::" || prev == "." {
            continue;
        }
        // A module's `use` items are all in its own file, so `bindings` has the ones in scope.
        if let Some(path) = bindings.get(&at[k]).and_then(|b| b.get(&tok.text)) {
            out.push(Named {
                module: at[k].clone(),
                line: tok.line,
                path: path.clone(),
                binds: None,
                re_export: false,
            });
        }
    }
    out
}

/// The module `path` names, following the names modules bind with `use` (`runtime::Device`
/// after `runtime`'s `use device::Device` is in `runtime::device`).
fn resolve(path: &[String], modules: &BTreeSet<Module>, bindings: &Bindings) -> Module {
    let mut path = path.to_vec();
    // A few steps: re-exports of re-exports, never a loop.
    for _ in 0..8 {
        let module = longest_module(&path, modules);
        let Some(bound) = path
            .get(module.len())
            .and_then(|name| bindings.get(&module)?.get(name))
        else {
            return module;
        };
        let mut followed = bound.clone();
        followed.extend_from_slice(&path[module.len() + 1..]);
        path = followed;
    }
    longest_module(&path, modules)
}

/// The longest prefix of `path` that is a module (the rest names items inside it).
fn longest_module(path: &[String], modules: &BTreeSet<Module>) -> Module {
    (0..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|p| modules.contains(p))
        .unwrap_or_default()
}

#[test]
fn the_parser_resolves_paths_groups_and_super() {
    let modules: BTreeSet<Module> = [
        vec![],
        vec!["a".into()],
        vec!["a".into(), "b".into()],
        vec!["c".into()],
    ]
    .into_iter()
    .collect();
    let toks = lex("use crate::{a::b::{X, Y as Z}, c}; // crate::q::r\n\
         fn f() { let s = \"crate::c::x\"; super::X; b::f(); 'l: loop {} }\n\
         pub(crate) use b::W;\n\
         mod tests { use super::*; }");
    let found: Vec<(String, String, Option<String>, bool)> =
        paths(&["a".to_string()], &toks, &modules)
            .into_iter()
            .map(|n| {
                let to = longest_module(&n.path, &modules).join("::");
                (n.module.join("::"), to, n.binds, n.re_export)
            })
            .collect();
    let want = [
        ("a", "a::b", Some("X"), false), // crate::a::b::X
        ("a", "a::b", Some("Z"), false), // crate::a::b::Y as Z
        ("a", "c", Some("c"), false),    // crate::c
        ("a", "", None, false),          // super::X from a: the root, in code
        ("a", "a::b", None, false),      // b::f, b a child of a
        ("a", "a::b", Some("W"), true),  // a re-export
        ("a::tests", "a", None, false),  // a glob binds no name
    ];
    let want: Vec<(String, String, Option<String>, bool)> = want
        .iter()
        .map(|(f, t, b, r)| (f.to_string(), t.to_string(), b.map(String::from), *r))
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
    let modules: BTreeSet<Module> = [
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
        .map(|n| longest_module(&n.path, &modules).join("::"))
        .collect();
    assert_eq!(found, ["alpha", "delta", "zeta"]);
}

#[test]
fn groups_list_every_edge_of_a_cycle() {
    let mut g = Graph::new();
    for (from, to) in [
        ("crate", "a"),
        ("a", "a::x"),
        ("a::x", "a::y"),
        ("a::y", "a::x"),
        ("a::y", "b"),
    ] {
        g.entry(from.into())
            .or_default()
            .insert(to.into(), format!("{from}.rs:1"));
        g.entry(to.into()).or_default();
    }
    let groups = cyclic_groups(&g);
    assert_eq!(groups.len(), 1, "{groups:?}");
    assert_eq!(groups[0].0, ["a::x", "a::y"]);
    assert_eq!(groups[0].1.len(), 2, "{groups:?}");
}

/// A crate written to a fresh temporary directory from (path under `src/`, text) pairs; the
/// directory goes when the value does.
struct ScratchCrate(PathBuf);

impl ScratchCrate {
    fn new(name: &str, files: &[(&str, &str)]) -> Self {
        let root = std::env::temp_dir().join(format!(
            "module-graph-{name}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&root);
        for (path, text) in files {
            let file = root.join("src").join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
        }
        ScratchCrate(root)
    }

    /// The graph at `depth` under the rule for parents.
    fn graph(&self, depth: usize) -> Graph {
        without_edges_into_descendants(&module_graph(&self.0.join("src"), depth))
    }
}

impl Drop for ScratchCrate {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn has_edge(graph: &Graph, from: &str, to: &str) -> bool {
    graph.get(from).is_some_and(|e| e.contains_key(to))
}

#[test]
fn a_parents_re_exports_of_its_children_are_no_edges() {
    let krate = ScratchCrate::new(
        "re-export",
        &[
            ("lib.rs", "pub mod a;\npub use a::Thing;\n"),
            (
                "a/mod.rs",
                "mod child;\nmod other;\npub use child::Thing;\npub(crate) use other::{Other as Renamed};\n\
                 pub(super) use self::child::make;\npub fn global() {}\n",
            ),
            ("a/child.rs", "pub struct Thing;\npub fn make() { super::global(); }\n"),
            ("a/other.rs", "pub struct Other;\nfn f() { crate::a::global(); }\n"),
        ],
    );
    let all = module_graph(&krate.0.join("src"), 2);
    // The reader sees the re-exports, marked as such.
    assert!(all["a"]["a::child"].ends_with(RE_EXPORT), "{all:?}");
    let graph = krate.graph(2);
    assert!(!has_edge(&graph, "a", "a::child"), "{graph:?}");
    assert!(!has_edge(&graph, "a", "a::other"), "{graph:?}");
    assert!(!has_edge(&graph, "crate", "a"), "{graph:?}");
    // The children's uses of their parent's function count.
    assert!(has_edge(&graph, "a::child", "a"), "{graph:?}");
    assert!(has_edge(&graph, "a::other", "a"), "{graph:?}");
    assert_eq!(cyclic_groups(&graph), Vec::new());
}

#[test]
fn a_parents_own_code_that_uses_a_child_is_an_edge() {
    let krate = ScratchCrate::new(
        "parent-code",
        &[
            (
                "lib.rs",
                "mod body;\nmod field;\nmod private_use;\nmod named;\n",
            ),
            ("body/mod.rs", "mod child;\nfn init() { child::make(); }\n"),
            ("body/child.rs", "pub fn make() {}\n"),
            (
                "field/mod.rs",
                "mod child;\npub struct Holder { pub part: child::Part }\n",
            ),
            ("field/child.rs", "pub struct Part;\n"),
            (
                "private_use/mod.rs",
                "mod child;\nuse child::Part;\nimpl Part { fn f() {} }\n",
            ),
            ("private_use/child.rs", "pub struct Part;\n"),
            // A name re-exported, then used by the parent's own code.
            (
                "named/mod.rs",
                "mod child;\npub use child::Event;\npub fn log(e: &Event) {}\n",
            ),
            ("named/child.rs", "pub struct Event;\n"),
        ],
    );
    let graph = krate.graph(2);
    for (from, line) in [
        ("body", "src/body/mod.rs:2"),
        ("field", "src/field/mod.rs:2"),
        ("private_use", "src/private_use/mod.rs:2"),
        ("named", "src/named/mod.rs:3"),
    ] {
        let child = format!("{from}::child");
        assert_eq!(
            graph
                .get(from)
                .and_then(|e| e.get(&child))
                .map(String::as_str),
            Some(line),
            "{graph:?}"
        );
    }
}

#[test]
fn a_childs_use_of_its_parents_global_closes_a_cycle_through_the_parent() {
    let krate = ScratchCrate::new(
        "singleton",
        &[
            ("lib.rs", "pub mod runtime;\n"),
            (
                "runtime/mod.rs",
                "pub mod memory;\npub mod peer;\npub use memory::Allocation;\n\
                 pub struct Runtime { peers: peer::PeerTable }\n\
                 pub fn runtime() -> Option<&'static Runtime> { None }\n",
            ),
            (
                "runtime/memory.rs",
                "pub struct Allocation;\npub fn free() { let _ = super::runtime(); }\n",
            ),
            (
                "runtime/peer.rs",
                "pub struct PeerTable;\nuse super::memory::Allocation;\n",
            ),
        ],
    );
    let graph = krate.graph(2);
    assert!(has_edge(&graph, "runtime::memory", "runtime"), "{graph:?}");
    assert!(has_edge(&graph, "runtime", "runtime::peer"), "{graph:?}");
    let groups = cyclic_groups(&graph);
    assert_eq!(groups.len(), 1, "{groups:?}");
    assert_eq!(groups[0].0, ["runtime", "runtime::memory", "runtime::peer"]);
    let cycle = find_cycle(&graph).expect("the cycle through runtime/mod.rs");
    assert!(cycle.contains(&"runtime".to_string()), "{cycle:?}");
    // Each edge says where it is.
    assert!(groups[0].1.contains(&(
        "runtime::memory".into(),
        "runtime".into(),
        "src/runtime/memory.rs:2".into()
    )));
}

#[test]
fn a_path_through_a_parents_use_is_an_edge_to_where_the_name_is_defined() {
    let krate = ScratchCrate::new(
        "through-parent",
        &[
            ("lib.rs", "pub mod runtime;\n"),
            (
                "runtime/mod.rs",
                "pub mod device;\npub mod stream;\nuse device::Device;\n\
                 pub fn open() -> Device { device::Device }\n",
            ),
            ("runtime/device.rs", "pub struct Device;\n"),
            (
                "runtime/stream.rs",
                "pub fn on(d: &super::Device) {}\nmacro_rules! m { () => { $crate::runtime::Device } }\n",
            ),
        ],
    );
    let graph = krate.graph(2);
    assert!(
        has_edge(&graph, "runtime::stream", "runtime::device"),
        "{graph:?}"
    );
    assert!(!has_edge(&graph, "runtime::stream", "runtime"), "{graph:?}");
    assert_eq!(cyclic_groups(&graph), Vec::new());
}

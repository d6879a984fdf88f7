//! The house keeps its shape: no import cycle among the modules of any of its crates, and the
//! top-level modules of `src/` keep their layers:
//!
//! ```text
//! api → runtime → policy → trace (the recorder) → hsa → leaves → observed
//! ```
//!
//! where the leaves (`config`, `error`, `probe`, `fork_guard`, `logging`) use no module of the
//! crate but `observed` (the flag word the API shells read, which the leaves set), and a module may use any module of a lower layer, never one of its own or a higher
//! one. `probe` is the trace probe the HSA layer reports through; the recorder above `hsa`
//! installs itself into it.
//!
//! No cycle anywhere: every crate of the house ([`HOUSE`]: hipshim's `src/` to depth 3,
//! hsasim's core, its interpreter and its scheduler model, the CLI, the others to depth 2) is
//! read with each of its files a node (`runtime::code_object::bundle`, `api::svm`,
//! `bench::plot`; only the interpreter's instruction families, `exec::valu`, stay one node
//! each, as its own test reads them), and its modules use each other in one direction only,
//! under one rule for parents and children:
//! a parent's `mod x;` and its re-exports of what its children define (`pub use x::Item`) are
//! free, every other use of a child by the parent's own code counts (a function calling
//! `child::f()`, a field of a child's type), and so does a child's use of its parent (a child
//! calling `super::runtime()` depends on `runtime/mod.rs`). So a singleton in a parent that its
//! children reach while it is built from them is a cycle, and a sibling cycle cannot hide
//! behind the parent. On failure the test lists every cycle with the file and line of each of
//! its edges; with `--nocapture` it prints the count of cyclic groups per crate and in all:
//!
//! ```text
//! cargo test -p hipshim --test module_graph house -- --nocapture
//! ```
//!
//! The graph is read from the source by the reader shared with hsasim-isa's test,
//! `tests/module_graph/reader.rs`, which says what counts as an edge.

#[path = "module_graph/reader.rs"]
mod reader;

use reader::{cyclic_groups, find_cycle, module_graph, without_edges_into_descendants, Graph};
use std::path::{Path, PathBuf};

/// A crate of the house, as the whole-house test reads it.
struct Crate {
    /// Its sources, from the workspace root.
    src: &'static str,
    /// The depth of its nodes (module paths cut to so many segments).
    depth: usize,
    /// A use the crate is built on, as (from, to) node prefixes: seeing it shows that the
    /// reader found the crate's structure (a reader that found nothing would pass it).
    built_on: (&'static str, &'static str),
}

/// Every crate of the house with modules of its own.
const HOUSE: &[Crate] = &[
    Crate {
        src: "src",
        depth: 3,
        built_on: ("api::device", "runtime"),
    },
    Crate {
        src: "sim/src",
        depth: 2,
        built_on: ("api::queue", "queue"),
    },
    Crate {
        src: "sim/isa/src",
        depth: 2,
        built_on: ("decode", "exec"),
    },
    Crate {
        src: "sim/sched/src",
        depth: 2,
        built_on: ("device", "model"),
    },
    Crate {
        src: "cli/src",
        depth: 2,
        built_on: ("crate", "run"),
    },
];

/// The layers, top first. A module may use modules of lower layers only.
const LAYERS: &[&[&str]] = &[
    &["api"],
    &["runtime"],
    &["policy"],
    &["trace"],
    &["hsa"],
    &["config", "error", "probe", "fork_guard", "logging"],
    &["observed"],
];

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn describe(graph: &Graph, from: &str, to: &str) -> String {
    format!("{from} → {to} ({})", graph[from][to])
}

#[test]
fn top_level_modules_of_src_form_no_import_cycle() {
    let graph = module_graph(&src_dir(), 1);
    if let Some(cycle) = find_cycle(&graph) {
        let steps: Vec<String> = cycle
            .windows(2)
            .map(|pair| describe(&graph, &pair[0], &pair[1]))
            .collect();
        panic!("import cycle in src/:\n  {}", steps.join("\n  "));
    }
}

#[test]
fn top_level_modules_of_src_keep_their_layers() {
    let graph = module_graph(&src_dir(), 1);
    // `lib.rs` only declares the modules; an edge to it (a path into an item of the root)
    // has no layer and is reported below.
    let layer_of = |m: &str| LAYERS.iter().position(|layer| layer.contains(&m));
    let unplaced: Vec<&String> = graph
        .keys()
        .filter(|m| *m != "crate" && layer_of(m).is_none())
        .collect();
    assert!(
        unplaced.is_empty(),
        "modules with no place in LAYERS (tests/module_graph.rs): {unplaced:?}"
    );
    let mut wrong = Vec::new();
    for (from, edges) in &graph {
        for to in edges.keys() {
            if from != "crate" && layer_of(to) <= layer_of(from) {
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
fn no_module_of_the_house_is_in_an_import_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (mut report, mut total) = (String::new(), 0);
    for krate in HOUSE {
        let graph =
            without_edges_into_descendants(&module_graph(&root.join(krate.src), krate.depth));
        let (from, to) = krate.built_on;
        assert!(
            graph
                .iter()
                .any(|(f, edges)| f.starts_with(from) && edges.keys().any(|t| t.starts_with(to))),
            "expected {from} to use {to} in {}; the graph is {graph:?}",
            krate.src
        );
        let groups = cyclic_groups(&graph);
        let edges: usize = graph.values().map(|e| e.len()).sum();
        println!(
            "{}: {} modules, {edges} edges, {} cyclic groups",
            krate.src,
            graph.len(),
            groups.len()
        );
        total += groups.len();
        // The reader's places are relative to the folder above `src`.
        let crate_dir = krate.src.strip_suffix("src").unwrap_or_default();
        for (members, edges) in &groups {
            report += &format!(
                "  in {}: {} use each other:\n",
                krate.src,
                members.join(", ")
            );
            for (from, to, at) in edges {
                report += &format!("    {from} → {to} ({crate_dir}{at})\n");
            }
        }
    }
    println!("whole house: {total} cyclic groups");
    assert!(
        report.is_empty(),
        "{total} groups of modules in an import cycle in the house (a parent's own use of a child counts, its re-exports do not):\n{report}"
    );
}

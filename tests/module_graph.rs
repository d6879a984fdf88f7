//! The modules of `src/` form no import cycle, and the top-level ones keep their layers:
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
//! One level deeper, the modules inside the top-level ones (`runtime::device`,
//! `runtime::stream`, `hsa::queue`, `api::memory`, ...) form no cycle either, under one rule
//! for parents and children: a parent's edges into its own children do not count (`mod.rs`
//! declares, re-exports and assembles its children), a child's edges to its parent do (a child
//! using `super::runtime()` depends on `runtime/mod.rs`). So siblings must use each other in
//! one direction only, and a sibling cycle cannot hide behind the parent.
//!
//! The graph is read from the source by the reader shared with hsasim-isa's test,
//! `tests/module_graph/reader.rs`, which says what counts as an edge.

#[path = "module_graph/reader.rs"]
mod reader;

use reader::{cyclic_groups, find_cycle, module_graph, without_edges_into_descendants, Graph};
use std::path::{Path, PathBuf};

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
fn modules_inside_the_top_level_ones_form_no_import_cycle() {
    let graph = without_edges_into_descendants(&module_graph(&src_dir(), 2));
    // The reader sees inside the top-level modules at all.
    assert!(
        graph
            .get("api::device")
            .is_some_and(|e| e.keys().any(|to| to.starts_with("runtime"))),
        "expected api::device to use runtime; the graph is {graph:?}"
    );
    let groups = cyclic_groups(&graph);
    if !groups.is_empty() {
        let mut text = String::new();
        for (members, edges) in &groups {
            text += &format!("  {} use each other:\n", members.join(", "));
            for (from, to, at) in edges {
                text += &format!("    {from} → {to} ({at})\n");
            }
        }
        panic!("import cycles among the depth-2 modules of src/:\n{text}");
    }
}

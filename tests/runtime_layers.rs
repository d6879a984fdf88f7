//! The folders of `src/runtime` are layers, in the order `runtime/mod.rs` writes down:
//!
//! ```text
//! ops, rtc → graph → launch.rs → kernel, image → copy.rs → stream → mem → devices
//!          → ordering → base → code_object
//! ```
//!
//! A folder (or one of the two files still beside them, `launch.rs` and `copy.rs`) uses
//! folders of lower layers only: never one of its own layer, never a higher one. What is
//! inside a folder is the folder's own business (the module-graph test checks it has no
//! cycle).
//!
//! `runtime/mod.rs` is above them all: it opens the devices and holds the process's
//! `Runtime`, and the C shells in `api/` hand down what each call needs of it. A module below
//! that names it (`runtime()`, `Runtime`, or one of the flat paths it re-exports for the C
//! shells, such as `runtime::mem::memory`) reaches up; only the modules in [`REACHING_UP`] still do.
//!
//! The graph is read from the source by the reader shared with the module-graph tests,
//! `tests/module_graph/reader.rs`, which says what counts as an edge.

#[path = "module_graph/reader.rs"]
mod reader;

use reader::{module_graph, Graph};
use std::path::Path;

/// The layers of `src/runtime`, top first.
const LAYERS: &[&[&str]] = &[
    &["ops", "rtc"],
    &["graph"],
    &["launch"],
    &["kernel", "image"],
    &["copy"],
    &["stream"],
    &["mem"],
    &["devices"],
    &["ordering"],
    &["base"],
    &["code_object"],
];

/// The modules that may still name `runtime/mod.rs`: none (kept as a list so that a
/// temporary exception is written down where the check is).
const REACHING_UP: &[&str] = &[];

/// The folder (or file) of `src/runtime` a depth-2 node names: `runtime::mem` -> `mem`.
fn folder(node: &str) -> Option<&str> {
    node.strip_prefix("runtime::")
}

fn layer_of(folder: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&folder))
}

fn runtime_graph() -> Graph {
    module_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), 2)
}

#[test]
fn every_folder_of_the_runtime_has_a_layer() {
    let graph = runtime_graph();
    let unplaced: Vec<&str> = graph
        .keys()
        .filter_map(|node| folder(node))
        .filter(|f| layer_of(f).is_none())
        .collect();
    assert!(
        unplaced.is_empty(),
        "folders of src/runtime with no place in LAYERS (tests/runtime_layers.rs, and the \
         order in runtime/mod.rs): {unplaced:?}"
    );
}

#[test]
fn runtime_folders_use_only_lower_layers() {
    let graph = runtime_graph();
    let mut wrong = Vec::new();
    for (from, edges) in &graph {
        let Some(from_layer) = folder(from).and_then(layer_of) else {
            continue;
        };
        for (to, at) in edges {
            let Some(to_layer) = folder(to).and_then(layer_of) else {
                continue;
            };
            if to_layer <= from_layer {
                wrong.push(format!("{from} → {to} ({at})"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "uses against the layers of src/runtime (top first: {LAYERS:?}):\n  {}",
        wrong.join("\n  ")
    );
    // The reader sees the edges the layers are made of (a reader that found nothing would
    // pass everything above).
    for (from, to) in [
        ("ops", "graph"),
        ("graph", "launch"),
        ("graph", "kernel"),
        ("kernel", "copy"),
        ("copy", "stream"),
        ("stream", "mem"),
        ("mem", "devices"),
        ("devices", "ordering"),
        ("ordering", "base"),
        ("base", "code_object"),
    ] {
        let (from, to) = (format!("runtime::{from}"), format!("runtime::{to}"));
        assert!(
            graph.get(&from).is_some_and(|e| e.contains_key(&to)),
            "expected {from} to use {to}; it uses {:?}",
            graph.get(&from).map(|e| e.keys().collect::<Vec<_>>())
        );
    }
}

#[test]
fn only_the_known_modules_reach_up_into_runtime_mod_rs() {
    let graph = runtime_graph();
    let reaching: Vec<String> = graph
        .iter()
        .filter_map(|(from, edges)| {
            let f = folder(from)?;
            let at = edges.get("runtime")?;
            (!REACHING_UP.contains(&f)).then(|| format!("{from} → runtime ({at})"))
        })
        .collect();
    assert!(
        reaching.is_empty(),
        "modules below runtime/mod.rs that name it (hand the device down from the C shell \
         instead, or name the folder path rather than the flat re-export):\n  {}",
        reaching.join("\n  ")
    );
}

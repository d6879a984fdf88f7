//! hsasim's core keeps the layers its crate documentation lists: the modules of `sim/src`
//! (to depth 2, so `api::queue` and `api::system` are modules of their own) form no import
//! cycle, and every import goes down the list in `src/lib.rs`'s "Layers" section, which this
//! test reads (so the order is written once, where a reader looks for it).
//!
//! Rules: a module belongs to the layer that names it, or names the nearest module above it
//! (`memory::tests` is `memory`'s); a module may use modules of the layers below its own,
//! never one of its own layer or above (peers in a layer do not use each other). Every module
//! of `sim/src` must be named, so a new one is placed on purpose. Nothing may use the crate
//! root, whose `lib.rs` only declares.
//!
//! The graph is read from the source by the reader the workspace's module-graph tests share,
//! `tests/module_graph/reader.rs`, which says what counts as an edge.

#[path = "../../tests/module_graph/reader.rs"]
mod reader;

use reader::{find_cycle, module_graph, Graph};
use std::path::{Path, PathBuf};

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The layers, top first, from the numbered list under `## Layers` in `src/lib.rs`'s doc
/// comment: each item names its modules in backticks before the first `: `.
fn documented_layers() -> Vec<Vec<String>> {
    let lib = std::fs::read_to_string(src_dir().join("lib.rs")).unwrap();
    // The section's numbered items, each with its continuation lines.
    let mut items: Vec<String> = Vec::new();
    let mut in_section = false;
    for line in lib.lines() {
        let Some(text) = line.strip_prefix("//!") else {
            continue;
        };
        let text = text.trim();
        if text.starts_with("## ") {
            in_section = text.starts_with("## Layers");
            continue;
        }
        if !in_section || text.is_empty() {
            continue;
        }
        match text.split_once(". ") {
            Some((number, item)) if number.parse::<u32>().is_ok() => items.push(item.into()),
            _ => {
                if let Some(item) = items.last_mut() {
                    item.push(' ');
                    item.push_str(text);
                }
            }
        }
    }
    let layers: Vec<Vec<String>> = items
        .iter()
        .map(|item| {
            let names = item.split(": ").next().unwrap_or("");
            let modules: Vec<String> = names
                .split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect();
            assert!(
                !modules.is_empty(),
                "src/lib.rs: layer item without modules: {item}"
            );
            modules
        })
        .collect();
    assert!(
        layers.len() > 5,
        "src/lib.rs has no `## Layers` list (found {layers:?})"
    );
    layers
}

/// The listed module `node` belongs to (itself, or its nearest listed ancestor) and that
/// module's layer.
fn placed<'a>(node: &'a str, layers: &[Vec<String>]) -> Option<(&'a str, usize)> {
    let mut name = node;
    loop {
        if let Some(layer) = layers.iter().position(|l| l.iter().any(|m| m == name)) {
            return Some((name, layer));
        }
        name = &name[..name.rfind("::")?];
    }
}

fn graph() -> Graph {
    module_graph(&src_dir(), 2)
}

#[test]
fn the_modules_of_sim_src_form_no_import_cycle() {
    let graph = graph();
    if let Some(cycle) = find_cycle(&graph) {
        let steps: Vec<String> = cycle
            .windows(2)
            .map(|p| format!("{} → {} (sim/{})", p[0], p[1], graph[&p[0]][&p[1]]))
            .collect();
        panic!("import cycle in sim/src:\n  {}", steps.join("\n  "));
    }
}

#[test]
fn every_import_of_sim_src_goes_down_the_documented_layers() {
    let layers = documented_layers();
    let graph = graph();
    let unplaced: Vec<&String> = graph
        .keys()
        .filter(|n| *n != "crate" && placed(n, &layers).is_none())
        .collect();
    assert!(
        unplaced.is_empty(),
        "modules of sim/src that no layer in src/lib.rs's `## Layers` names: {unplaced:?}"
    );
    let mut upward = Vec::new();
    for (from, uses) in &graph {
        for (to, at) in uses {
            let Some((to_module, to_layer)) = placed(to, &layers) else {
                upward.push(format!(
                    "{from} → {to} (sim/{at}): nothing may use the crate root"
                ));
                continue;
            };
            let Some((from_module, from_layer)) = placed(from, &layers) else {
                continue; // the crate root declares; it is above everything
            };
            if from_module != to_module && to_layer <= from_layer {
                upward.push(format!(
                    "{from} → {to} (sim/{at}): layer {} ({}) uses layer {} ({})",
                    from_layer + 1,
                    layers[from_layer].join(", "),
                    to_layer + 1,
                    layers[to_layer].join(", "),
                ));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports of sim/src that do not go down src/lib.rs's `## Layers`:\n  {}",
        upward.join("\n  ")
    );
}

/// The reader must see the imports the layering rests on, or the checks above pass for
/// nothing.
#[test]
fn the_reader_sees_the_known_imports_of_each_layer() {
    let graph = graph();
    for (from, to) in [
        ("api::queue", "system"),
        ("api::system", "api::extension"),
        ("system", "queue"),
        ("system", "svm"),
        ("svm", "platform"),
        ("queue", "loader"),
        ("queue", "signal"),
        ("loader", "memory"),
        ("ipc_signal", "signal"),
        ("signal", "handles"),
        ("memory", "host_map"),
    ] {
        assert!(
            graph.get(from).is_some_and(|uses| uses.contains_key(to)),
            "the reader no longer sees {from} → {to}: is the graph empty? ({} modules)",
            graph.len()
        );
    }
    let layers = documented_layers();
    assert_eq!(layers[0].first().map(String::as_str), Some("api"));
    assert!(layers.iter().any(|l| l.iter().any(|m| m == "system")));
}

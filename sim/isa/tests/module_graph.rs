//! The crate's modules use each other in one direction only: the import graph of `src/` has
//! no cycle, among the top-level modules (`api`, `inst`, `decode`, `exec`, `wave`, `disasm`,
//! `dispatch`, ...) nor among the modules at depth 2 (the families inside them: `exec::valu`,
//! `exec::round`, ...). On failure the test prints the cycle, with a file and line for each
//! edge. The graph and what counts as an edge are described in the shared reader,
//! `tests/module_graph/reader.rs` at the workspace root. Here every edge counts, also a
//! parent's into its children: a parent module must not use a child that uses it.

#[path = "../../../tests/module_graph/reader.rs"]
mod reader;

use reader::{find_cycle, module_graph};
use std::path::Path;

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
    if depth == 1 {
        // The translator is a layer between the decoder and the run loop: the run loop uses
        // it, and it never reaches back into the run loop.
        assert!(
            graph
                .get("dispatch")
                .is_some_and(|to| to.contains_key("jit")),
            "dispatch should use jit; graph:\n{listing}"
        );
        assert!(
            !graph
                .get("jit")
                .is_some_and(|to| to.contains_key("dispatch") || to.contains_key("coop")),
            "jit must not use the run loop; graph:\n{listing}"
        );
    }
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

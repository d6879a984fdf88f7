//! `hipGraphDebugDotPrint`: a graph in Graphviz's DOT language, one box per node labelled
//! with its type and parameters (a kernel node with the kernel's name), a cluster per child
//! graph.

use super::{bad, Graph, NodeParams};
use crate::error::{HipError, HipResult};
use std::fmt::Write;

fn label(params: &NodeParams) -> String {
    match params {
        NodeParams::Kernel(k) => format!(
            "KERNEL\\n{}\\ngrid ({},{},{}) block ({},{},{}) shared {}",
            escape(&k.function.name),
            k.grid.x,
            k.grid.y,
            k.grid.z,
            k.block.x,
            k.block.y,
            k.block.z,
            k.shared_mem
        ),
        NodeParams::Memcpy1D(m) => format!(
            "MEMCPY\\n{:#x} <- {:#x}, {} bytes ({:?})",
            m.dst, m.src, m.count, m.kind
        ),
        NodeParams::Memcpy3D(m) => format!(
            "MEMCPY\\n{:?} <- {:?}, {} x {} x {} bytes ({:?})",
            m.copy.dst.place,
            m.copy.src.place,
            m.copy.extent.width,
            m.copy.extent.height,
            m.copy.extent.depth,
            m.copy.kind
        ),
        NodeParams::Memset(m) => format!(
            "MEMSET\\n{:#x} = {:#x}, {} x {} elements of {} bytes",
            m.dst, m.value, m.width, m.height, m.element
        ),
        NodeParams::Host(h) => format!("HOST\\nfn {:#x}", h.function as usize),
        NodeParams::Empty => "EMPTY".into(),
        NodeParams::EventRecord(e) => format!("EVENT_RECORD\\nevent {:#x}", e.handle),
        NodeParams::EventWait(e) => format!("EVENT_WAIT\\nevent {:#x}", e.handle),
        NodeParams::Child(g) => format!("GRAPH\\n{:#x}", g.handle),
        NodeParams::MemAlloc(a) => format!("MEM_ALLOC\\n{:#x}, {} bytes", a.start, a.size),
        NodeParams::MemFree(a) => format!("MEM_FREE\\n{:#x}", a.start),
    }
}

fn escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

fn write_graph(graph: &Graph, out: &mut String, depth: usize) {
    let body = graph.body.lock();
    let indent = "  ".repeat(depth);
    for node in &body.nodes {
        let params = node.params();
        let _ = writeln!(
            out,
            "{indent}n{:x} [shape=box, label=\"{}\"];",
            node.handle,
            label(&params)
        );
        if let NodeParams::Child(child) = &params {
            let _ = writeln!(out, "{indent}subgraph cluster_{:x} {{", node.handle);
            let _ = writeln!(
                out,
                "{indent}  label=\"child graph of n{:x}\";",
                node.handle
            );
            write_graph(child, out, depth + 1);
            let _ = writeln!(out, "{indent}}}");
        }
    }
    for (from, to) in &body.edges {
        let _ = writeln!(out, "{indent}n{from:x} -> n{to:x};");
    }
}

/// Writes `graph` to the file at `path`.
pub fn print_dot(graph: &Graph, path: &str) -> HipResult {
    if path.is_empty() {
        return Err(bad("hipGraphDebugDotPrint: empty path"));
    }
    let mut out = format!("digraph hipGraph_{:x} {{\n", graph.handle);
    write_graph(graph, &mut out, 1);
    out.push_str("}\n");
    std::fs::write(path, out).map_err(|e| {
        tracing::warn!(path, error = %e, "hipGraphDebugDotPrint: cannot write the file");
        HipError::OPERATING_SYSTEM
    })
}

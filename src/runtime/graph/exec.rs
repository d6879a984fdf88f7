//! Executable graphs: `hipGraphInstantiate` makes a plan, `hipGraphLaunch` submits it.
//!
//! Instantiation flattens the graph (a child graph's nodes take the child node's place,
//! between two empty markers), orders the nodes topologically (Kahn's algorithm, ties in the
//! order nodes were added, so a plan is deterministic) and copies each node's parameters into
//! a step; a kernel step keeps its explicit arguments packed in the kernel's kernarg layout,
//! laid out once. A launch submits the steps in that order onto one stream through the
//! runtime's own operations; the stream being in order, every edge is respected.
//!
//! The plan is kept apart from how it is submitted: the flattened nodes keep their
//! dependencies, so a later executor can put independent branches on several queues or
//! prebuild each step's AQL packet.

use super::memory::{self, GraphAlloc};
use super::user_object;
use super::{bad, node_type, Graph, HostCall, KernelNode, Memcpy1D, Memset, NodeParams};
use crate::error::{HipError, HipResult};
use crate::runtime::event::{self, Event};
use crate::runtime::handles::HandleTable;
use crate::runtime::launch::{self, Args, Dispatch, GridSize};
use crate::runtime::{copy, stream};
use parking_lot::Mutex;
use std::collections::{BTreeSet, HashMap};
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

static EXECS: HandleTable<Exec> = HandleTable::new("graph exec", 0x40);

/// `hipGraphInstantiateFlagAutoFreeOnLaunch` (see `memory.rs`), `...Upload`,
/// `...UseNodePriority`: the last two nothing for this executor to do (it uploads nothing and
/// has one queue).
const KNOWN_FLAGS: u64 = AUTO_FREE_ON_LAUNCH | UPLOAD | 8;
const AUTO_FREE_ON_LAUNCH: u64 = 1;
pub const UPLOAD: u64 = 2;
/// `hipGraphInstantiateFlagDeviceLaunch`.
const DEVICE_LAUNCH: u64 = 4;

/// One node of a flattened graph.
#[derive(Clone)]
struct Flat {
    /// The node of the instantiated graph (or of one of its child graphs) this came from;
    /// `None` for a child graph's closing marker.
    origin: Option<usize>,
    /// The node's type (`hipGraphNodeType`; a child graph's markers are `GRAPH`).
    type_code: u32,
    /// A child marker carries no work; every other node carries its parameters.
    params: Option<NodeParams>,
    /// Flat indices this node waits for, sorted.
    deps: Vec<usize>,
}

/// What a launch submits for one node.
#[derive(Clone)]
enum Step {
    Kernel(KernelNode),
    Memcpy(Memcpy1D),
    Memcpy3D(super::Memcpy3DNode),
    Memset(Memset),
    Host(HostCall),
    Record(Arc<Event>),
    Wait(Arc<Event>),
    /// Graph memory: allocated or freed when the launch is submitted (see `memory.rs`).
    Alloc(Arc<GraphAlloc>),
    Free(Arc<GraphAlloc>),
    Nothing,
}

impl Step {
    fn of(params: Option<NodeParams>) -> Step {
        match params {
            Some(NodeParams::Kernel(k)) => Step::Kernel(k),
            Some(NodeParams::Memcpy1D(m)) => Step::Memcpy(m),
            Some(NodeParams::Memcpy3D(m)) => Step::Memcpy3D(m),
            Some(NodeParams::Memset(m)) => Step::Memset(m),
            Some(NodeParams::Host(h)) => Step::Host(h),
            Some(NodeParams::EventRecord(e)) => Step::Record(e.event),
            Some(NodeParams::EventWait(e)) => Step::Wait(e.event),
            Some(NodeParams::MemAlloc(a)) => Step::Alloc(a),
            Some(NodeParams::MemFree(a)) => Step::Free(a),
            Some(NodeParams::Empty) | Some(NodeParams::Child(_)) | None => Step::Nothing,
        }
    }
}

pub struct Exec {
    /// The flattened graph's shape: each node's origin, type and dependencies (what
    /// `hipGraphExecUpdate` compares).
    shape: Vec<Flat>,
    /// Flat indices in launch order.
    order: Vec<usize>,
    /// The step of each flat node, by flat index. A launch takes the current steps and
    /// submits them unlocked (a host node may change its own executable graph); a setter
    /// copies them if a launch still holds them.
    steps: Mutex<Arc<Vec<Step>>>,
    /// Flat index of each node of the instantiated graph (and of its child graphs).
    by_origin: HashMap<usize, usize>,
    /// `hipGraphInstantiateWithFlags`'s flags (`hipGraphExecGetFlags`).
    pub flags: u64,
    /// Whether each flat node runs (`hipGraphNodeSetEnabled`); a disabled one keeps its edges.
    enabled: Vec<AtomicBool>,
    /// The user object references the graph held, retained while this exists.
    _user_objects: user_object::Owned,
}

/// Appends `graph`'s nodes to `out`; returns each node's first and last flat index (the two
/// markers of a child graph, the node itself otherwise), in the graph's node order.
fn flatten(graph: &Graph, out: &mut Vec<Flat>) -> Vec<(usize, usize)> {
    let body = graph.body.lock();
    let mut spans = Vec::with_capacity(body.nodes.len());
    for node in &body.nodes {
        let params = node.params();
        let type_code = params.type_code();
        let push = |out: &mut Vec<Flat>, origin, params| {
            out.push(Flat {
                origin,
                type_code,
                params,
                deps: Vec::new(),
            });
            out.len() - 1
        };
        if let NodeParams::Child(child) = params {
            let begin = push(out, Some(node.handle), None);
            let inner = flatten(&child, out);
            let inner_edges = child.body.lock().edges.clone();
            let inner_nodes: Vec<usize> =
                child.body.lock().nodes.iter().map(|n| n.handle).collect();
            let end = push(out, None, None);
            for (i, &(first, last)) in inner.iter().enumerate() {
                let h = inner_nodes[i];
                if !inner_edges.iter().any(|&(_, t)| t == h) {
                    out[first].deps.push(begin);
                }
                if !inner_edges.iter().any(|&(f, _)| f == h) {
                    out[end].deps.push(last);
                }
            }
            if inner.is_empty() {
                out[end].deps.push(begin);
            }
            spans.push((begin, end));
        } else {
            let at = push(out, Some(node.handle), Some(params));
            spans.push((at, at));
        }
    }
    let index: HashMap<usize, usize> = body
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.handle, i))
        .collect();
    for (from, to) in &body.edges {
        let (Some(&f), Some(&t)) = (index.get(from), index.get(to)) else {
            continue;
        };
        let last = spans[f].1;
        out[spans[t].0].deps.push(last);
    }
    spans
}

fn flatten_graph(graph: &Graph) -> Vec<Flat> {
    let mut flat = Vec::new();
    flatten(graph, &mut flat);
    for node in &mut flat {
        node.deps.sort_unstable();
        node.deps.dedup();
    }
    flat
}

/// Kahn's algorithm over the flattened graph, ties in flat order; a node left over is on a
/// cycle (returned as the error).
fn topological_order(flat: &[Flat]) -> Result<Vec<usize>, usize> {
    let mut waiting: Vec<usize> = flat.iter().map(|n| n.deps.len()).collect();
    let mut dependents = vec![Vec::new(); flat.len()];
    for (i, node) in flat.iter().enumerate() {
        for &d in &node.deps {
            dependents[d].push(i);
        }
    }
    let mut ready: BTreeSet<usize> = (0..flat.len()).filter(|&i| waiting[i] == 0).collect();
    let mut order = Vec::with_capacity(flat.len());
    while let Some(next) = ready.pop_first() {
        order.push(next);
        for &d in &dependents[next] {
            waiting[d] -= 1;
            if waiting[d] == 0 {
                ready.insert(d);
            }
        }
    }
    match (0..flat.len()).find(|&i| waiting[i] > 0) {
        Some(stuck) => Err(stuck),
        None => Ok(order),
    }
}

/// `hipGraphInstantiate[WithFlags]`: on a cycle, `error_node` learns a node on it.
pub fn instantiate(graph: &Graph, flags: u64, error_node: &mut usize) -> HipResult<*mut c_void> {
    if flags & DEVICE_LAUNCH != 0 {
        tracing::warn!("hipGraphInstantiateFlagDeviceLaunch: graphs launched from the device are not supported");
        return Err(HipError::NOT_SUPPORTED);
    }
    if flags & !KNOWN_FLAGS != 0 {
        return Err(bad("hipGraphInstantiateWithFlags: unknown flags"));
    }
    let shape = flatten_graph(graph);
    let order = topological_order(&shape).map_err(|stuck| {
        *error_node = shape[stuck].origin.unwrap_or(0);
        bad("hipGraphInstantiate: the graph has a cycle")
    })?;
    let by_origin = shape
        .iter()
        .enumerate()
        .filter_map(|(i, n)| n.origin.map(|o| (o, i)))
        .collect();
    let steps = shape.iter().map(|n| Step::of(n.params.clone())).collect();
    let shape: Vec<Flat> = shape
        .into_iter()
        .map(|n| Flat { params: None, ..n })
        .collect();
    let enabled = (0..shape.len()).map(|_| AtomicBool::new(true)).collect();
    let exec = Arc::new(Exec {
        shape,
        order,
        steps: Mutex::new(Arc::new(steps)),
        by_origin,
        flags,
        enabled,
        _user_objects: super::user_objects(graph),
    });
    Ok(EXECS.insert(exec) as *mut c_void)
}

pub fn lookup(handle: *mut c_void) -> HipResult<Arc<Exec>> {
    EXECS
        .get(handle as usize)
        .map_err(|_| HipError::INVALID_VALUE)
}

pub fn destroy(handle: *mut c_void) -> HipResult {
    EXECS
        .remove(handle as usize)
        .map(drop)
        .map_err(|_| HipError::INVALID_VALUE)
}

/// `hipGraphUpload`: nothing to upload ahead of a launch; checks the stream.
pub fn upload(_exec: &Exec, stream_handle: *mut c_void) -> HipResult {
    stream::lookup(stream_handle).map(drop)
}

/// `hipGraphLaunch`: every step in order on `stream_handle`. A step that fails stops the
/// launch (the steps before it stay submitted).
pub fn launch(exec: &Exec, stream_handle: *mut c_void) -> HipResult {
    let (device, stream) = stream::lookup(stream_handle)?;
    // A handle, looked up again by each operation, never dereferenced.
    let stream_handle = stream_handle as usize as *mut c_void;
    let steps = exec.steps.lock().clone();
    let auto_free = exec.flags & AUTO_FREE_ON_LAUNCH != 0;
    // A graph whose allocation is still allocated does not start at all.
    for step in steps.iter() {
        if let Step::Alloc(a) = step {
            if !memory::may_allocate(a, auto_free) {
                return memory::launch_allocate(a, auto_free);
            }
        }
    }
    for &at in &exec.order {
        if !exec.enabled[at].load(Ordering::Relaxed) {
            continue;
        }
        match &steps[at] {
            Step::Kernel(k) => {
                // SAFETY: packed arguments need no caller contract; `launch_on` checks they
                // cover the kernel's explicit arguments.
                unsafe {
                    launch::launch_on(
                        device,
                        &k.function,
                        GridSize::Blocks(k.grid),
                        k.block,
                        Args::Packed(&k.args.bytes),
                        k.shared_mem as usize,
                        stream_handle,
                        if k.attrs.cooperative != 0 {
                            Dispatch::Cooperative {
                                multigrid_sync: crate::runtime::cooperative::SINGLE_GRID,
                            }
                        } else {
                            Dispatch::Stream
                        },
                    )
                }?
            }
            Step::Memcpy(m) => {
                // SAFETY: HIP's contract for a memcpy node: its host memory stays valid while
                // the graph may run; device ranges are checked against the allocations.
                unsafe {
                    copy::memcpy_async(
                        m.dst as *mut c_void,
                        m.src as *const c_void,
                        m.count,
                        m.kind,
                        stream_handle,
                    )
                }?
            }
            Step::Memcpy3D(m) => {
                // SAFETY: as for a 1D memcpy node; arrays are checked again as the copy runs.
                unsafe { crate::runtime::copy3d::copy_3d(&m.copy, Some(stream_handle)) }?
            }
            Step::Memset(m) => {
                for row in 0..m.height {
                    let dst = m.dst + row * m.pitch;
                    copy::memset_async(
                        dst as *mut c_void,
                        m.value,
                        m.element,
                        m.width,
                        stream_handle,
                    )?;
                }
            }
            &Step::Host(HostCall {
                function,
                user_data,
            }) => stream::enqueue_host_task(
                &device.streams,
                &stream,
                Box::new(move || {
                    // SAFETY: the program added this function with this argument to the graph.
                    unsafe { function(user_data as *mut c_void) };
                    Ok(())
                }),
            )?,
            Step::Record(e) => event::record(e, device, &stream)?,
            Step::Wait(e) => event::stream_wait(device, &stream, e, 0)?,
            Step::Alloc(a) => memory::launch_allocate(a, auto_free)?,
            Step::Free(a) => memory::launch_free(a),
            Step::Nothing => {}
        }
    }
    Ok(())
}

/// Replaces the parameters of the step made from `node` (a node of the instantiated graph),
/// which must be of the same type (`hipGraphExec*NodeSetParams`).
pub fn set_params(exec: &Exec, node: *mut c_void, params: NodeParams) -> HipResult {
    let Some(&at) = exec.by_origin.get(&(node as usize)) else {
        return Err(bad(
            "the node is not in the graph this executable graph was made from",
        ));
    };
    if exec.shape[at].type_code != params.type_code()
        || matches!(
            params.type_code(),
            node_type::GRAPH | node_type::MEM_ALLOC | node_type::MEM_FREE
        )
    {
        return Err(bad("graph exec node parameters of another node type"));
    }
    let mut params = params;
    if let (NodeParams::Kernel(new), Step::Kernel(old)) = (&mut params, &exec.steps.lock()[at]) {
        new.attrs = old.attrs;
    }
    Arc::make_mut(&mut exec.steps.lock())[at] = Step::of(Some(params));
    Ok(())
}

/// The flat index of `node` (a node of the instantiated graph or of its child graphs).
fn flat_index(exec: &Exec, node: *mut c_void) -> HipResult<usize> {
    exec.by_origin
        .get(&(node as usize))
        .copied()
        .ok_or_else(|| bad("the node is not in the graph this executable graph was made from"))
}

/// `hipGraphNodeSetEnabled`: kernel, memcpy and memset nodes only (CUDA's rule).
pub fn set_enabled(exec: &Exec, node: *mut c_void, enabled: bool) -> HipResult {
    let at = flat_index(exec, node)?;
    if !matches!(
        exec.shape[at].type_code,
        node_type::KERNEL | node_type::MEMCPY | node_type::MEMSET
    ) {
        return Err(bad(
            "hipGraphNodeSetEnabled: only kernel, memcpy and memset nodes can be disabled",
        ));
    }
    exec.enabled[at].store(enabled, Ordering::Relaxed);
    Ok(())
}

/// `hipGraphNodeGetEnabled`.
pub fn enabled(exec: &Exec, node: *mut c_void) -> HipResult<bool> {
    let at = flat_index(exec, node)?;
    if !matches!(
        exec.shape[at].type_code,
        node_type::KERNEL | node_type::MEMCPY | node_type::MEMSET
    ) {
        return Err(bad(
            "hipGraphNodeGetEnabled: only kernel, memcpy and memset nodes can be disabled",
        ));
    }
    Ok(exec.enabled[at].load(Ordering::Relaxed))
}

/// `hipGraphExecChildGraphNodeSetParams`: `child`'s parameters for the child graph `node`
/// embeds, if `child` has the same shape (nodes in the same order, same types and edges).
pub fn set_child(exec: &Exec, node: *mut c_void, child: &Graph) -> HipResult {
    let begin = flat_index(exec, node)?;
    if exec.shape[begin].type_code != node_type::GRAPH {
        return Err(bad(
            "hipGraphExecChildGraphNodeSetParams: not a child-graph node",
        ));
    }
    let fresh = flatten_graph(child);
    let base = begin + 1;
    let end = base + fresh.len();
    let same_shape = end < exec.shape.len()
        && exec.shape[end].origin.is_none()
        && exec.shape[end].type_code == node_type::GRAPH
        && fresh.iter().enumerate().all(|(i, new)| {
            let old = &exec.shape[base + i];
            let mut deps: Vec<usize> = new.deps.iter().map(|d| d + base).collect();
            if deps.is_empty() {
                deps.push(begin);
            }
            new.type_code == old.type_code
                && new.origin.is_some() == old.origin.is_some()
                && deps == old.deps
        });
    if !same_shape
        || fresh
            .iter()
            .any(|n| matches!(n.type_code, node_type::MEM_ALLOC | node_type::MEM_FREE))
    {
        return Err(bad(
            "hipGraphExecChildGraphNodeSetParams: the graph's shape differs from the child graph's",
        ));
    }
    let mut current = exec.steps.lock();
    let steps = Arc::make_mut(&mut current);
    for (i, new) in fresh.into_iter().enumerate() {
        steps[base + i] = Step::of(new.params);
    }
    Ok(())
}

/// `hipGraphExecUpdateResult`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum UpdateResult {
    Success = 0,
    TopologyChanged = 2,
    NodeTypeChanged = 3,
    FunctionChanged = 4,
}

/// `hipGraphExecUpdate`: takes `graph`'s parameters if its nodes pair with the executable
/// graph's (in the order they were added, child graphs included) with the same types, edges
/// and kernels; otherwise nothing changes, and the result says why, with the first node of
/// `graph` that differs.
pub fn update(exec: &Exec, graph: &Graph) -> (UpdateResult, usize) {
    let fresh = flatten_graph(graph);
    if fresh.len() != exec.shape.len() {
        return (UpdateResult::TopologyChanged, 0);
    }
    let mut current = exec.steps.lock();
    let steps = Arc::make_mut(&mut current);
    for (i, (new, old)) in fresh.iter().zip(&exec.shape).enumerate() {
        let origin = new.origin.unwrap_or(0);
        if new.type_code != old.type_code || new.origin.is_some() != old.origin.is_some() {
            return (UpdateResult::NodeTypeChanged, origin);
        }
        if new.deps != old.deps {
            return (UpdateResult::TopologyChanged, origin);
        }
        if let (Some(NodeParams::Kernel(k)), Step::Kernel(current)) = (&new.params, &steps[i]) {
            if !Arc::ptr_eq(&k.function, &current.function) {
                return (UpdateResult::FunctionChanged, origin);
            }
        }
    }
    for (i, new) in fresh.into_iter().enumerate() {
        steps[i] = Step::of(new.params);
    }
    (UpdateResult::Success, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat(deps: &[&[usize]]) -> Vec<Flat> {
        deps.iter()
            .map(|d| Flat {
                origin: None,
                type_code: node_type::EMPTY,
                params: None,
                deps: d.to_vec(),
            })
            .collect()
    }

    #[test]
    fn the_order_respects_every_edge_and_breaks_ties_by_position() {
        // 3 -> 1 -> 0, 2 independent, 4 after 0 and 2.
        let nodes = flat(&[&[1], &[3], &[], &[], &[0, 2]]);
        assert_eq!(topological_order(&nodes), Ok(vec![2, 3, 1, 0, 4]));
    }

    #[test]
    fn a_cycle_names_a_node_on_it() {
        let nodes = flat(&[&[], &[2], &[1]]);
        assert_eq!(topological_order(&nodes), Err(1));
    }

    #[test]
    fn reachability_follows_edges_forward_only() {
        let edges = [(1, 2), (2, 3), (5, 1)];
        assert!(super::super::reaches(&edges, 1, 3));
        assert!(!super::super::reaches(&edges, 3, 1));
        assert!(super::super::reaches(&edges, 5, 3));
    }
}

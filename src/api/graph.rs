//! HIP graphs built explicitly or by stream capture, instantiated and launched
//! (`runtime/graph/`). `hipStreamGetCaptureInfo_v2`, `hipStreamUpdateCaptureDependencies`,
//! `hipStreamBeginCaptureToGraph`, memcpy nodes other than 1D, symbol copies, memory
//! alloc/free nodes, external semaphores, kernel node attributes, user objects and node
//! enabling are not implemented: their generated stubs return `hipErrorNotSupported` and log
//! their names.

use super::convert::{write_c_string, Out, PerThread, Stream};
use super::declare::hip_api;
use super::types::{
    hipError_t, hipEvent_t, hipGraphExec_t, hipGraphNode_t, hipGraph_t, hipStream_t,
    HostNodeParams, KernelNodeParams, MemsetParams,
};
use crate::error::{HipError, HipResult};
use crate::runtime::graph::{
    self, capture, exec, EventRef, Exec, Graph, Node, NodeParams, UpdateResult,
};
use std::ffi::{c_char, c_void};
use std::sync::Arc;

/// A node's dependency list: null is allowed only with a count of 0.
///
/// # Safety
/// A non-null `deps` holds `count` handles.
unsafe fn deps<'a>(deps: *const hipGraphNode_t, count: usize) -> HipResult<&'a [*mut c_void]> {
    if count == 0 {
        return Ok(&[]);
    }
    if deps.is_null() {
        tracing::warn!(count, "graph dependencies: null list with a non-zero count");
        return Err(HipError::INVALID_VALUE);
    }
    // SAFETY: non-null with `count` entries (HIP's contract).
    Ok(unsafe { std::slice::from_raw_parts(deps, count) })
}

/// Adds a node to `graph` after the `count` nodes at `dependencies` and writes its handle.
///
/// # Safety
/// As for [`deps`].
unsafe fn add(
    out: Out<hipGraphNode_t>,
    graph: &Graph,
    dependencies: *const hipGraphNode_t,
    count: usize,
    params: NodeParams,
) -> HipResult {
    // SAFETY: forwarded contract.
    let dependencies = unsafe { deps(dependencies, count) }?;
    out.write(graph::add_node(graph, dependencies, params)?)
}

/// Writes a list the `hipGraphGet*` calls return (see `graph::write_list`).
///
/// # Safety
/// A non-null `out` has room for `*count` handles.
unsafe fn list(items: &[usize], out: *mut hipGraphNode_t, count: Out<usize>) -> HipResult {
    // SAFETY: `count` is an in-out value the caller set when it passes an array.
    let mut n = if out.is_null() {
        0
    } else {
        unsafe { count.read() }
    };
    // SAFETY: forwarded contract.
    unsafe { graph::write_list(items, out, &mut n) };
    count.write(n)
}

/// The node `node` names, if it belongs to the graph `exec` was made from (checked there).
fn exec_set(exec: &Exec, node: hipGraphNode_t, params: NodeParams) -> HipResult {
    graph::node(node)?;
    exec::set_params(exec, node, params)
}

fn kernel_of(node: &Node) -> HipResult<graph::KernelNode> {
    match node.params() {
        NodeParams::Kernel(k) => Ok(k),
        _ => Err(wrong_type()),
    }
}

fn wrong_type() -> HipError {
    tracing::warn!("the graph node is of another type");
    HipError::INVALID_VALUE
}

fn begin_capture(stream: &Stream, mode: u32) -> HipResult {
    capture::begin(&stream.stream, mode)
}

fn capture_info(stream: &Stream, status: Out<u32>, id: *mut usize) -> HipResult {
    let (code, value) = capture::info(&stream.stream);
    if !id.is_null() && code != capture::STATUS_NONE {
        // SAFETY: a non-null `pId` is writable (HIP's contract).
        unsafe { id.write(value as usize) };
    }
    status.write(code)
}

hip_api! {
    fn hipStreamBeginCapture(stream: hipStream_t => Stream, mode: u32) -> hipError_t {
        begin_capture(&stream, mode)
    }

    fn hipStreamBeginCapture_spt(stream: hipStream_t => PerThread<Stream>, mode: u32) -> hipError_t {
        begin_capture(&stream.0, mode)
    }

    /// The graph belongs to the program (`hipGraphDestroy`).
    fn hipStreamEndCapture(stream: hipStream_t => Stream, graph: *mut hipGraph_t => Out<hipGraph_t>) -> hipError_t {
        graph.write(capture::end(&stream.stream)?)
    }

    fn hipStreamEndCapture_spt(
        stream: hipStream_t => PerThread<Stream>,
        graph: *mut hipGraph_t => Out<hipGraph_t>,
    ) -> hipError_t {
        graph.write(capture::end(&stream.0.stream)?)
    }

    fn hipStreamIsCapturing(stream: hipStream_t => Stream, status: *mut u32 => Out<u32>) -> hipError_t {
        status.write(capture::info(&stream.stream).0)
    }

    fn hipStreamIsCapturing_spt(stream: hipStream_t => PerThread<Stream>, status: *mut u32 => Out<u32>) -> hipError_t {
        status.write(capture::info(&stream.0.stream).0)
    }

    /// `pId` may be null; it is written only while the stream captures.
    fn hipStreamGetCaptureInfo(stream: hipStream_t => Stream, status: *mut u32 => Out<u32>, id: *mut usize) -> hipError_t {
        capture_info(&stream, status, id)
    }

    fn hipStreamGetCaptureInfo_spt(
        stream: hipStream_t => PerThread<Stream>,
        status: *mut u32 => Out<u32>,
        id: *mut usize,
    ) -> hipError_t {
        capture_info(&stream.0, status, id)
    }

    fn hipThreadExchangeStreamCaptureMode(mode: *mut u32 => Out<u32>) -> hipError_t {
        // SAFETY: an in-out value (HIP's contract).
        let wanted = unsafe { mode.read() };
        mode.write(capture::exchange_mode(wanted)?)
    }

    fn hipGraphCreate(graph: *mut hipGraph_t => Out<hipGraph_t>, flags: u32) -> hipError_t {
        graph.write(graph::create(flags)?)
    }

    fn hipGraphDestroy(graph: hipGraph_t) -> hipError_t {
        graph::destroy(graph)
    }

    fn hipGraphAddKernelNode(
        node: *mut hipGraphNode_t => Out<hipGraphNode_t>,
        graph: hipGraph_t => Arc<Graph>,
        dependencies: *const hipGraphNode_t,
        count: usize,
        params: *const KernelNodeParams => &KernelNodeParams,
    ) -> hipError_t {
        // SAFETY: HIP's contract for the parameters and the dependency list.
        unsafe { add(node, &graph, dependencies, count, NodeParams::Kernel(graph::kernel_node(params)?)) }
    }

    fn hipGraphAddMemcpyNode1D(
        node: *mut hipGraphNode_t => Out<hipGraphNode_t>,
        graph: hipGraph_t => Arc<Graph>,
        dependencies: *const hipGraphNode_t,
        count: usize,
        dst: *mut c_void,
        src: *const c_void,
        size: usize,
        kind: u32,
    ) -> hipError_t {
        let copy = graph::memcpy_1d(dst, src, size, kind)?;
        // SAFETY: HIP's contract for the dependency list.
        unsafe { add(node, &graph, dependencies, count, NodeParams::Memcpy1D(copy)) }
    }

    fn hipGraphAddMemsetNode(
        node: *mut hipGraphNode_t => Out<hipGraphNode_t>,
        graph: hipGraph_t => Arc<Graph>,
        dependencies: *const hipGraphNode_t,
        count: usize,
        params: *const MemsetParams => &MemsetParams,
    ) -> hipError_t {
        let fill = graph::memset(params)?;
        // SAFETY: HIP's contract for the dependency list.
        unsafe { add(node, &graph, dependencies, count, NodeParams::Memset(fill)) }
    }

    fn hipGraphAddHostNode(
        node: *mut hipGraphNode_t => Out<hipGraphNode_t>,
        graph: hipGraph_t => Arc<Graph>,
        dependencies: *const hipGraphNode_t,
        count: usize,
        params: *const HostNodeParams => &HostNodeParams,
    ) -> hipError_t {
        let call = graph::host(params)?;
        // SAFETY: HIP's contract for the dependency list.
        unsafe { add(node, &graph, dependencies, count, NodeParams::Host(call)) }
    }

    fn hipGraphAddEmptyNode(
        node: *mut hipGraphNode_t => Out<hipGraphNode_t>,
        graph: hipGraph_t => Arc<Graph>,
        dependencies: *const hipGraphNode_t,
        count: usize,
    ) -> hipError_t {
        // SAFETY: HIP's contract for the dependency list.
        unsafe { add(node, &graph, dependencies, count, NodeParams::Empty) }
    }

    fn hipGraphAddEventRecordNode(
        node: *mut hipGraphNode_t => Out<hipGraphNode_t>,
        graph: hipGraph_t => Arc<Graph>,
        dependencies: *const hipGraphNode_t,
        count: usize,
        event: hipEvent_t,
    ) -> hipError_t {
        let event = EventRef::new(event)?;
        // SAFETY: HIP's contract for the dependency list.
        unsafe { add(node, &graph, dependencies, count, NodeParams::EventRecord(event)) }
    }

    fn hipGraphAddEventWaitNode(
        node: *mut hipGraphNode_t => Out<hipGraphNode_t>,
        graph: hipGraph_t => Arc<Graph>,
        dependencies: *const hipGraphNode_t,
        count: usize,
        event: hipEvent_t,
    ) -> hipError_t {
        let event = EventRef::new(event)?;
        // SAFETY: HIP's contract for the dependency list.
        unsafe { add(node, &graph, dependencies, count, NodeParams::EventWait(event)) }
    }

    /// The node embeds a copy of `child`.
    fn hipGraphAddChildGraphNode(
        node: *mut hipGraphNode_t => Out<hipGraphNode_t>,
        graph: hipGraph_t => Arc<Graph>,
        dependencies: *const hipGraphNode_t,
        count: usize,
        child: hipGraph_t => Arc<Graph>,
    ) -> hipError_t {
        // SAFETY: HIP's contract for the dependency list.
        unsafe { add(node, &graph, dependencies, count, NodeParams::Child(child)) }
    }

    fn hipGraphChildGraphNodeGetGraph(
        node: hipGraphNode_t => Arc<Node>,
        graph: *mut hipGraph_t => Out<hipGraph_t>,
    ) -> hipError_t {
        graph.write(graph::child_graph(&node)?)
    }

    fn hipGraphAddDependencies(
        graph: hipGraph_t => Arc<Graph>,
        from: *const hipGraphNode_t,
        to: *const hipGraphNode_t,
        count: usize,
    ) -> hipError_t {
        // SAFETY: HIP's contract: both lists hold `count` handles.
        let (from, to) = unsafe { (deps(from, count)?, deps(to, count)?) };
        graph::add_dependencies(&graph, from, to)
    }

    fn hipGraphRemoveDependencies(
        graph: hipGraph_t => Arc<Graph>,
        from: *const hipGraphNode_t,
        to: *const hipGraphNode_t,
        count: usize,
    ) -> hipError_t {
        // SAFETY: HIP's contract: both lists hold `count` handles.
        let (from, to) = unsafe { (deps(from, count)?, deps(to, count)?) };
        graph::remove_dependencies(&graph, from, to)
    }

    fn hipGraphDestroyNode(node: hipGraphNode_t) -> hipError_t {
        graph::destroy_node(node)
    }

    fn hipGraphGetNodes(
        graph: hipGraph_t => Arc<Graph>,
        nodes: *mut hipGraphNode_t,
        count: *mut usize => Out<usize>,
    ) -> hipError_t {
        // SAFETY: HIP's contract: a non-null `nodes` has room for `*count` handles.
        unsafe { list(&graph::nodes(&graph), nodes, count) }
    }

    fn hipGraphGetRootNodes(
        graph: hipGraph_t => Arc<Graph>,
        nodes: *mut hipGraphNode_t,
        count: *mut usize => Out<usize>,
    ) -> hipError_t {
        // SAFETY: as for hipGraphGetNodes.
        unsafe { list(&graph::root_nodes(&graph), nodes, count) }
    }

    /// Both arrays or neither.
    fn hipGraphGetEdges(
        graph: hipGraph_t => Arc<Graph>,
        from: *mut hipGraphNode_t,
        to: *mut hipGraphNode_t,
        count: *mut usize => Out<usize>,
    ) -> hipError_t {
        if from.is_null() != to.is_null() {
            tracing::warn!("hipGraphGetEdges: one of from and to is null");
            return Err(HipError::INVALID_VALUE);
        }
        let edges = graph::edges(&graph);
        let froms: Vec<usize> = edges.iter().map(|e| e.0).collect();
        let tos: Vec<usize> = edges.iter().map(|e| e.1).collect();
        if from.is_null() {
            return count.write(edges.len());
        }
        // SAFETY: an in-out count when arrays are given (HIP's contract).
        let room = unsafe { count.read() };
        let (mut a, mut b) = (room, room);
        // SAFETY: HIP's contract: both arrays have room for `*count` handles.
        unsafe {
            graph::write_list(&froms, from, &mut a);
            graph::write_list(&tos, to, &mut b);
        }
        count.write(a)
    }

    fn hipGraphNodeGetType(node: hipGraphNode_t => Arc<Node>, kind: *mut u32 => Out<u32>) -> hipError_t {
        kind.write(node.params().type_code())
    }

    fn hipGraphNodeGetDependencies(
        node: hipGraphNode_t => Arc<Node>,
        nodes: *mut hipGraphNode_t,
        count: *mut usize => Out<usize>,
    ) -> hipError_t {
        // SAFETY: as for hipGraphGetNodes.
        unsafe { list(&graph::dependencies(&node)?, nodes, count) }
    }

    fn hipGraphNodeGetDependentNodes(
        node: hipGraphNode_t => Arc<Node>,
        nodes: *mut hipGraphNode_t,
        count: *mut usize => Out<usize>,
    ) -> hipError_t {
        // SAFETY: as for hipGraphGetNodes.
        unsafe { list(&graph::dependents(&node)?, nodes, count) }
    }

    fn hipGraphClone(clone: *mut hipGraph_t => Out<hipGraph_t>, graph: hipGraph_t => Arc<Graph>) -> hipError_t {
        clone.write(graph::clone(&graph)?)
    }

    fn hipGraphNodeFindInClone(
        node: *mut hipGraphNode_t => Out<hipGraphNode_t>,
        original: hipGraphNode_t,
        clone: hipGraph_t => Arc<Graph>,
    ) -> hipError_t {
        node.write(graph::find_in_clone(original, &clone)?)
    }

    /// On a cycle, `error_node` (if given) learns a node on it and the log says so.
    fn hipGraphInstantiate(
        exec: *mut hipGraphExec_t => Out<hipGraphExec_t>,
        graph: hipGraph_t => Arc<Graph>,
        error_node: *mut hipGraphNode_t => Option<Out<hipGraphNode_t>>,
        log: *mut c_char,
        log_size: usize,
    ) -> hipError_t {
        let mut stuck = 0;
        let made = exec::instantiate(&graph, 0, &mut stuck);
        if !log.is_null() && log_size > 0 {
            // SAFETY: HIP's contract: `log` has room for `log_size` characters.
            let buffer = unsafe { std::slice::from_raw_parts_mut(log, log_size) };
            write_c_string(buffer, if made.is_ok() { "" } else { "the graph has a cycle" });
        }
        if let (Err(_), Some(out)) = (&made, error_node) {
            out.write(stuck as hipGraphNode_t)?;
        }
        exec.write(made?)
    }

    fn hipGraphInstantiateWithFlags(
        exec: *mut hipGraphExec_t => Out<hipGraphExec_t>,
        graph: hipGraph_t => Arc<Graph>,
        flags: u64,
    ) -> hipError_t {
        exec.write(exec::instantiate(&graph, flags, &mut 0)?)
    }

    fn hipGraphLaunch(exec: hipGraphExec_t => Arc<Exec>, stream: hipStream_t) -> hipError_t {
        exec::launch(&exec, stream)
    }

    fn hipGraphLaunch_spt(exec: hipGraphExec_t => Arc<Exec>, stream: hipStream_t => PerThread<hipStream_t>) -> hipError_t {
        exec::launch(&exec, stream.0)
    }

    /// Nothing to upload ahead of a launch: checks its arguments.
    fn hipGraphUpload(exec: hipGraphExec_t => Arc<Exec>, stream: hipStream_t) -> hipError_t {
        exec::upload(&exec, stream)
    }

    fn hipGraphExecDestroy(exec: hipGraphExec_t) -> hipError_t {
        exec::destroy(exec)
    }

    fn hipGraphKernelNodeGetParams(
        node: hipGraphNode_t => Arc<Node>,
        params: *mut KernelNodeParams => Out<KernelNodeParams>,
    ) -> hipError_t {
        params.write(kernel_of(&node)?.to_abi())
    }

    fn hipGraphKernelNodeSetParams(
        node: hipGraphNode_t => Arc<Node>,
        params: *const KernelNodeParams => &KernelNodeParams,
    ) -> hipError_t {
        kernel_of(&node)?;
        // SAFETY: HIP's contract for the parameters.
        graph::set_params(&node, NodeParams::Kernel(unsafe { graph::kernel_node(params) }?))
    }

    fn hipGraphMemsetNodeGetParams(
        node: hipGraphNode_t => Arc<Node>,
        params: *mut MemsetParams => Out<MemsetParams>,
    ) -> hipError_t {
        match node.params() {
            NodeParams::Memset(m) => params.write(m.to_abi()),
            _ => Err(wrong_type()),
        }
    }

    fn hipGraphMemsetNodeSetParams(
        node: hipGraphNode_t => Arc<Node>,
        params: *const MemsetParams => &MemsetParams,
    ) -> hipError_t {
        graph::set_params(&node, NodeParams::Memset(graph::memset(params)?))
    }

    fn hipGraphHostNodeGetParams(
        node: hipGraphNode_t => Arc<Node>,
        params: *mut HostNodeParams => Out<HostNodeParams>,
    ) -> hipError_t {
        match node.params() {
            NodeParams::Host(h) => params.write(HostNodeParams {
                function: Some(h.function),
                user_data: h.user_data as *mut c_void,
            }),
            _ => Err(wrong_type()),
        }
    }

    fn hipGraphHostNodeSetParams(
        node: hipGraphNode_t => Arc<Node>,
        params: *const HostNodeParams => &HostNodeParams,
    ) -> hipError_t {
        graph::set_params(&node, NodeParams::Host(graph::host(params)?))
    }

    fn hipGraphMemcpyNodeSetParams1D(
        node: hipGraphNode_t => Arc<Node>,
        dst: *mut c_void,
        src: *const c_void,
        size: usize,
        kind: u32,
    ) -> hipError_t {
        graph::set_params(&node, NodeParams::Memcpy1D(graph::memcpy_1d(dst, src, size, kind)?))
    }

    fn hipGraphEventRecordNodeGetEvent(node: hipGraphNode_t => Arc<Node>, event: *mut hipEvent_t => Out<hipEvent_t>) -> hipError_t {
        match node.params() {
            NodeParams::EventRecord(e) => event.write(e.handle as hipEvent_t),
            _ => Err(wrong_type()),
        }
    }

    fn hipGraphEventRecordNodeSetEvent(node: hipGraphNode_t => Arc<Node>, event: hipEvent_t) -> hipError_t {
        graph::set_params(&node, NodeParams::EventRecord(EventRef::new(event)?))
    }

    fn hipGraphEventWaitNodeGetEvent(node: hipGraphNode_t => Arc<Node>, event: *mut hipEvent_t => Out<hipEvent_t>) -> hipError_t {
        match node.params() {
            NodeParams::EventWait(e) => event.write(e.handle as hipEvent_t),
            _ => Err(wrong_type()),
        }
    }

    fn hipGraphEventWaitNodeSetEvent(node: hipGraphNode_t => Arc<Node>, event: hipEvent_t) -> hipError_t {
        graph::set_params(&node, NodeParams::EventWait(EventRef::new(event)?))
    }

    fn hipGraphExecKernelNodeSetParams(
        exec: hipGraphExec_t => Arc<Exec>,
        node: hipGraphNode_t,
        params: *const KernelNodeParams => &KernelNodeParams,
    ) -> hipError_t {
        // SAFETY: HIP's contract for the parameters.
        exec_set(&exec, node, NodeParams::Kernel(unsafe { graph::kernel_node(params) }?))
    }

    fn hipGraphExecMemcpyNodeSetParams1D(
        exec: hipGraphExec_t => Arc<Exec>,
        node: hipGraphNode_t,
        dst: *mut c_void,
        src: *const c_void,
        size: usize,
        kind: u32,
    ) -> hipError_t {
        exec_set(&exec, node, NodeParams::Memcpy1D(graph::memcpy_1d(dst, src, size, kind)?))
    }

    fn hipGraphExecMemsetNodeSetParams(
        exec: hipGraphExec_t => Arc<Exec>,
        node: hipGraphNode_t,
        params: *const MemsetParams => &MemsetParams,
    ) -> hipError_t {
        exec_set(&exec, node, NodeParams::Memset(graph::memset(params)?))
    }

    fn hipGraphExecHostNodeSetParams(
        exec: hipGraphExec_t => Arc<Exec>,
        node: hipGraphNode_t,
        params: *const HostNodeParams => &HostNodeParams,
    ) -> hipError_t {
        exec_set(&exec, node, NodeParams::Host(graph::host(params)?))
    }

    fn hipGraphExecEventRecordNodeSetEvent(
        exec: hipGraphExec_t => Arc<Exec>,
        node: hipGraphNode_t,
        event: hipEvent_t,
    ) -> hipError_t {
        exec_set(&exec, node, NodeParams::EventRecord(EventRef::new(event)?))
    }

    fn hipGraphExecEventWaitNodeSetEvent(
        exec: hipGraphExec_t => Arc<Exec>,
        node: hipGraphNode_t,
        event: hipEvent_t,
    ) -> hipError_t {
        exec_set(&exec, node, NodeParams::EventWait(EventRef::new(event)?))
    }

    /// hipErrorGraphExecUpdateFailure unless the topology, node types and kernels match;
    /// `result` says why and `error_node` names the first node that differs.
    fn hipGraphExecUpdate(
        exec: hipGraphExec_t => Arc<Exec>,
        graph: hipGraph_t => Arc<Graph>,
        error_node: *mut hipGraphNode_t => Out<hipGraphNode_t>,
        result: *mut u32 => Out<u32>,
    ) -> hipError_t {
        let (outcome, node) = exec::update(&exec, &graph);
        error_node.write(node as hipGraphNode_t)?;
        result.write(outcome as u32)?;
        if outcome == UpdateResult::Success {
            Ok(())
        } else {
            tracing::warn!(?outcome, "hipGraphExecUpdate: the graph does not match");
            Err(HipError::GRAPH_EXEC_UPDATE_FAILURE)
        }
    }

    fn hipGraphDebugDotPrint(graph: hipGraph_t => Arc<Graph>, path: *const c_char => &str, flags: u32) -> hipError_t {
        // Every flag asks for more detail; this print has one level of it.
        let _ = flags;
        graph::print_dot(&graph, path)
    }
}

#[cfg(not(test))]
include!(concat!(env!("OUT_DIR"), "/symver_graph.rs"));

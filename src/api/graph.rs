//! HIP graphs built explicitly or by stream capture, instantiated and launched
//! (`runtime/graph/`); capture itself is `capture.rs`, memory nodes `graph_memory.rs`, user
//! objects `user_object.rs`. Memcpy nodes of `hipMemcpy3DParms` (also in the generic
//! `hipGraphNodeParams` form), external semaphore and batch memory operation nodes are not
//! implemented: their generated stubs return `hipErrorNotSupported` and log their names.

use super::convert::{write_c_string, Out, PerThread};
use super::declare::hip_api;
use super::types::{
    hipError_t, hipEvent_t, hipGraphExec_t, hipGraphNode_t, hipGraph_t, hipStream_t, DrvMemcpy3D,
    DrvMemsetParams, GraphNodeParams, HostNodeParams, InstantiateParams, KernelAttrValue,
    KernelNodeParams, Memcpy3DParms, MemsetParams,
};
use crate::error::{HipError, HipResult};
use crate::runtime::graph::generic::{self, instantiate_result};
use crate::runtime::graph::{
    self, exec, kernel_attr, EventRef, Exec, Graph, Node, NodeParams, UpdateResult,
};
use crate::runtime::kernel::module::Towards;
use crate::runtime::{current_device, devices};
use std::ffi::{c_char, c_void};
use std::sync::Arc;

/// A node's dependency list: null is allowed only with a count of 0.
///
/// # Safety
/// A non-null `deps` holds `count` handles.
pub(super) unsafe fn deps<'a>(
    deps: *const hipGraphNode_t,
    count: usize,
) -> HipResult<&'a [*mut c_void]> {
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
pub(super) unsafe fn add(
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
    exec::set_params(devices()?, exec, node, params)
}

fn kernel_of(node: &Node) -> HipResult<graph::KernelNode> {
    match node.params() {
        NodeParams::Kernel(k) => Ok(k),
        _ => Err(wrong_type()),
    }
}

pub(super) fn wrong_type() -> HipError {
    tracing::warn!("the graph node is of another type");
    HipError::INVALID_VALUE
}

/// `hipGraphInstantiateWithParams`: the outcome goes to `params` (error node, result); with
/// `hipGraphInstantiateFlagUpload` the graph is uploaded to the given stream.
fn instantiate_with_params(
    out: Out<hipGraphExec_t>,
    graph: &Graph,
    params: Out<InstantiateParams>,
) -> HipResult {
    // SAFETY: an in-out structure (HIP's contract).
    let mut given = unsafe { params.read() };
    let mut stuck = 0;
    let made = exec::instantiate(graph, given.flags, &mut stuck);
    given.error_node = std::ptr::null_mut();
    given.result = match &made {
        Ok(_) => instantiate_result::SUCCESS,
        Err(_) if stuck != 0 => {
            given.error_node = stuck as hipGraphNode_t;
            instantiate_result::INVALID_STRUCTURE
        }
        Err(e) if *e == HipError::NOT_SUPPORTED => instantiate_result::NODE_OPERATION_NOT_SUPPORTED,
        Err(_) => instantiate_result::ERROR,
    };
    params.write(given)?;
    let made = made?;
    if given.flags & exec::UPLOAD != 0 {
        exec::upload(devices()?, &*exec::lookup(made)?, given.upload_stream)?;
    }
    out.write(made)
}

/// A kernel node attribute's value, read or written (`hipGraphKernelNode[GS]etAttribute`).
fn kernel_attribute(
    node: &Node,
    attr: u32,
    value: Option<KernelAttrValue>,
) -> HipResult<KernelAttrValue> {
    let mut read = KernelAttrValue { int: 0 };
    graph::update_kernel_attrs(node, |attrs| {
        match (attr, value) {
            (kernel_attr::ACCESS_POLICY_WINDOW, None) => {
                read = KernelAttrValue {
                    access_policy_window: attrs.access_policy_window,
                }
            }
            (kernel_attr::COOPERATIVE, None) => {
                read = KernelAttrValue {
                    int: attrs.cooperative,
                }
            }
            (kernel_attr::PRIORITY, None) => {
                read = KernelAttrValue {
                    int: attrs.priority,
                }
            }
            // SAFETY (each read): the attribute says which member the program filled in.
            (kernel_attr::ACCESS_POLICY_WINDOW, Some(v)) => {
                let window = unsafe { v.access_policy_window };
                if !(0.0..=1.0).contains(&window.hit_ratio)
                    || window.hit_prop > 2
                    || window.miss_prop > 2
                {
                    tracing::warn!(?window, "kernel node attribute: bad access policy window");
                    return Err(HipError::INVALID_VALUE);
                }
                attrs.access_policy_window = window
            }
            (kernel_attr::COOPERATIVE, Some(v)) => attrs.cooperative = unsafe { v.int },
            (kernel_attr::PRIORITY, Some(v)) => attrs.priority = unsafe { v.int },
            _ => {
                tracing::warn!(attr, "kernel node attribute: unknown attribute");
                return Err(HipError::INVALID_VALUE);
            }
        }
        Ok(())
    })?;
    Ok(read)
}

hip_api! {
    fn hipGraphCreate(graph: *mut hipGraph_t => Out<hipGraph_t>, flags: u32) -> hipError_t {
        crate::runtime::runtime()?;
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
        let device = current_device()?;
        // SAFETY: HIP's contract for the parameters and the dependency list.
        unsafe { add(node, &graph, dependencies, count, NodeParams::Kernel(graph::kernel_node(device, params)?)) }
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
        params: *const MemsetParams,
    ) -> hipError_t {
        // SAFETY: HIP's contract, in the layout of the program's ABI.
        let fill = graph::memset(&unsafe { MemsetParams::read(params) }?)?;
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
        kind.write(crate::runtime::base::compat::graph_node_type(node.params().type_code()))
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
        exec::launch(devices()?, &exec, stream)
    }
    alias hipGraphLaunch_spt = hipGraphLaunch with stream: PerThread;

    /// Nothing to upload ahead of a launch: checks its arguments.
    fn hipGraphUpload(exec: hipGraphExec_t => Arc<Exec>, stream: hipStream_t) -> hipError_t {
        exec::upload(devices()?, &exec, stream)
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
        let device = current_device()?;
        // SAFETY: HIP's contract for the parameters.
        graph::set_params(&node, NodeParams::Kernel(unsafe { graph::kernel_node(device, params) }?))
    }

    fn hipGraphMemsetNodeGetParams(
        node: hipGraphNode_t => Arc<Node>,
        params: *mut MemsetParams,
    ) -> hipError_t {
        match node.params() {
            // SAFETY: HIP's contract, in the layout of the program's ABI.
            NodeParams::Memset(m) => unsafe { m.to_abi().write(params) },
            _ => Err(wrong_type()),
        }
    }

    fn hipGraphMemsetNodeSetParams(
        node: hipGraphNode_t => Arc<Node>,
        params: *const MemsetParams,
    ) -> hipError_t {
        // SAFETY: HIP's contract, in the layout of the program's ABI.
        let fill = graph::memset(&unsafe { MemsetParams::read(params) }?)?;
        graph::set_params(&node, NodeParams::Memset(fill))
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

    /// A copy of any shape (`runtime/image/copy3d.rs`): between arrays and pitched memory, in 3D.
    fn hipGraphAddMemcpyNode(
        node: *mut hipGraphNode_t => Out<hipGraphNode_t>,
        graph: hipGraph_t => Arc<Graph>,
        dependencies: *const hipGraphNode_t,
        count: usize,
        params: *const Memcpy3DParms => &Memcpy3DParms,
    ) -> hipError_t {
        let copy = graph::memcpy_3d(params)?;
        // SAFETY: HIP's contract for the dependency list.
        unsafe { add(node, &graph, dependencies, count, NodeParams::Memcpy3D(copy)) }
    }

    /// Also answers for a 1D or symbol memcpy node, as one row.
    fn hipGraphMemcpyNodeGetParams(
        node: hipGraphNode_t => Arc<Node>,
        params: *mut Memcpy3DParms => Out<Memcpy3DParms>,
    ) -> hipError_t {
        params.write(graph::memcpy_params(&node.params())?)
    }

    fn hipGraphMemcpyNodeSetParams(
        node: hipGraphNode_t => Arc<Node>,
        params: *const Memcpy3DParms => &Memcpy3DParms,
    ) -> hipError_t {
        graph::set_params(&node, NodeParams::Memcpy3D(graph::memcpy_3d(params)?))
    }

    fn hipGraphExecMemcpyNodeSetParams(
        exec: hipGraphExec_t => Arc<Exec>,
        node: hipGraphNode_t,
        params: *const Memcpy3DParms => &Memcpy3DParms,
    ) -> hipError_t {
        exec_set(&exec, node, NodeParams::Memcpy3D(graph::memcpy_3d(params)?))
    }

    /// The driver API's form; a device's primary context is the only context, so `context`
    /// is not consulted.
    fn hipDrvGraphAddMemcpyNode(
        node: *mut hipGraphNode_t => Out<hipGraphNode_t>,
        graph: hipGraph_t => Arc<Graph>,
        dependencies: *const hipGraphNode_t,
        count: usize,
        params: *const DrvMemcpy3D => &DrvMemcpy3D,
        _context: *mut c_void,
    ) -> hipError_t {
        let copy = graph::memcpy_3d_driver(params)?;
        // SAFETY: HIP's contract for the dependency list.
        unsafe { add(node, &graph, dependencies, count, NodeParams::Memcpy3D(copy)) }
    }

    fn hipDrvGraphMemcpyNodeGetParams(
        node: hipGraphNode_t => Arc<Node>,
        params: *mut DrvMemcpy3D => Out<DrvMemcpy3D>,
    ) -> hipError_t {
        params.write(graph::drv_memcpy_params(&node.params())?)
    }

    fn hipDrvGraphMemcpyNodeSetParams(
        node: hipGraphNode_t => Arc<Node>,
        params: *const DrvMemcpy3D => &DrvMemcpy3D,
    ) -> hipError_t {
        graph::set_params(&node, NodeParams::Memcpy3D(graph::memcpy_3d_driver(params)?))
    }

    fn hipDrvGraphExecMemcpyNodeSetParams(
        exec: hipGraphExec_t => Arc<Exec>,
        node: hipGraphNode_t,
        params: *const DrvMemcpy3D => &DrvMemcpy3D,
        _context: *mut c_void,
    ) -> hipError_t {
        exec_set(&exec, node, NodeParams::Memcpy3D(graph::memcpy_3d_driver(params)?))
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
        let device = current_device()?;
        // SAFETY: HIP's contract for the parameters.
        exec_set(&exec, node, NodeParams::Kernel(unsafe { graph::kernel_node(device, params) }?))
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
        params: *const MemsetParams,
    ) -> hipError_t {
        // SAFETY: HIP's contract, in the layout of the program's ABI.
        let fill = graph::memset(&unsafe { MemsetParams::read(params) }?)?;
        exec_set(&exec, node, NodeParams::Memset(fill))
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
        let (outcome, node) = exec::update(devices()?, &exec, &graph);
        error_node.write(node as hipGraphNode_t)?;
        result.write(outcome as u32)?;
        if outcome == UpdateResult::Success {
            Ok(())
        } else {
            tracing::warn!(?outcome, "hipGraphExecUpdate: the graph does not match");
            Err(HipError::GRAPH_EXEC_UPDATE_FAILURE)
        }
    }

    fn hipGraphAddMemcpyNodeToSymbol(
        node: *mut hipGraphNode_t => Out<hipGraphNode_t>,
        graph: hipGraph_t => Arc<Graph>,
        dependencies: *const hipGraphNode_t,
        count: usize,
        symbol: *const c_void,
        src: *const c_void,
        size: usize,
        offset: usize,
        kind: u32,
    ) -> hipError_t {
        let copy = graph::memcpy_symbol(current_device()?, Towards::Symbol, symbol, src as *mut c_void, size, offset, kind)?;
        // SAFETY: HIP's contract for the dependency list.
        unsafe { add(node, &graph, dependencies, count, NodeParams::Memcpy1D(copy)) }
    }

    fn hipGraphAddMemcpyNodeFromSymbol(
        node: *mut hipGraphNode_t => Out<hipGraphNode_t>,
        graph: hipGraph_t => Arc<Graph>,
        dependencies: *const hipGraphNode_t,
        count: usize,
        dst: *mut c_void,
        symbol: *const c_void,
        size: usize,
        offset: usize,
        kind: u32,
    ) -> hipError_t {
        let copy = graph::memcpy_symbol(current_device()?, Towards::Host, symbol, dst, size, offset, kind)?;
        // SAFETY: HIP's contract for the dependency list.
        unsafe { add(node, &graph, dependencies, count, NodeParams::Memcpy1D(copy)) }
    }

    fn hipGraphMemcpyNodeSetParamsToSymbol(
        node: hipGraphNode_t => Arc<Node>,
        symbol: *const c_void,
        src: *const c_void,
        size: usize,
        offset: usize,
        kind: u32,
    ) -> hipError_t {
        let copy = graph::memcpy_symbol(current_device()?, Towards::Symbol, symbol, src as *mut c_void, size, offset, kind)?;
        graph::set_params(&node, NodeParams::Memcpy1D(copy))
    }

    fn hipGraphMemcpyNodeSetParamsFromSymbol(
        node: hipGraphNode_t => Arc<Node>,
        dst: *mut c_void,
        symbol: *const c_void,
        size: usize,
        offset: usize,
        kind: u32,
    ) -> hipError_t {
        let copy = graph::memcpy_symbol(current_device()?, Towards::Host, symbol, dst, size, offset, kind)?;
        graph::set_params(&node, NodeParams::Memcpy1D(copy))
    }

    fn hipGraphExecMemcpyNodeSetParamsToSymbol(
        exec: hipGraphExec_t => Arc<Exec>,
        node: hipGraphNode_t,
        symbol: *const c_void,
        src: *const c_void,
        size: usize,
        offset: usize,
        kind: u32,
    ) -> hipError_t {
        let copy = graph::memcpy_symbol(current_device()?, Towards::Symbol, symbol, src as *mut c_void, size, offset, kind)?;
        exec_set(&exec, node, NodeParams::Memcpy1D(copy))
    }

    fn hipGraphExecMemcpyNodeSetParamsFromSymbol(
        exec: hipGraphExec_t => Arc<Exec>,
        node: hipGraphNode_t,
        dst: *mut c_void,
        symbol: *const c_void,
        size: usize,
        offset: usize,
        kind: u32,
    ) -> hipError_t {
        let copy = graph::memcpy_symbol(current_device()?, Towards::Host, symbol, dst, size, offset, kind)?;
        exec_set(&exec, node, NodeParams::Memcpy1D(copy))
    }

    /// `ctx` is not used (one context per device).
    fn hipDrvGraphAddMemsetNode(
        node: *mut hipGraphNode_t => Out<hipGraphNode_t>,
        graph: hipGraph_t => Arc<Graph>,
        dependencies: *const hipGraphNode_t,
        count: usize,
        params: *const DrvMemsetParams => &DrvMemsetParams,
        ctx: *mut c_void,
    ) -> hipError_t {
        let _ = ctx;
        let fill = graph::memset(&params.to_memset())?;
        // SAFETY: HIP's contract for the dependency list.
        unsafe { add(node, &graph, dependencies, count, NodeParams::Memset(fill)) }
    }

    fn hipDrvGraphExecMemsetNodeSetParams(
        exec: hipGraphExec_t => Arc<Exec>,
        node: hipGraphNode_t,
        params: *const DrvMemsetParams => &DrvMemsetParams,
        ctx: *mut c_void,
    ) -> hipError_t {
        let _ = ctx;
        exec_set(&exec, node, NodeParams::Memset(graph::memset(&params.to_memset())?))
    }

    /// Every node type but memcpy (`hipMemcpy3DParms`) and external semaphores; an alloc
    /// node's address is written to `params->alloc.dptr`.
    fn hipGraphAddNode(
        node: *mut hipGraphNode_t => Out<hipGraphNode_t>,
        graph: hipGraph_t => Arc<Graph>,
        dependencies: *const hipGraphNode_t,
        count: usize,
        params: *mut GraphNodeParams => Out<GraphNodeParams>,
    ) -> hipError_t {
        // SAFETY: an in-out structure (HIP's contract).
        let mut given = unsafe { params.read() };
        let devices = devices()?;
        // SAFETY: HIP's contract for the member `type` selects.
        let made = unsafe { generic::node_params(devices, &given) }?;
        let allocated = match &made {
            NodeParams::MemAlloc(a) => Some(a.start),
            _ => None,
        };
        // SAFETY: HIP's contract for the dependency list.
        unsafe { add(node, &graph, dependencies, count, made) }?;
        if let Some(start) = allocated {
            given.body.alloc.dptr = start as *mut c_void;
            params.write(given)?;
        }
        Ok(())
    }

    /// Of the node's own type; alloc, free and child-graph nodes cannot change.
    fn hipGraphNodeSetParams(node: hipGraphNode_t => Arc<Node>, params: *mut GraphNodeParams => Out<GraphNodeParams>) -> hipError_t {
        // SAFETY: the caller's structure (HIP declares it non-const).
        let params = &unsafe { params.read() };
        if matches!(params.type_, graph::node_type::MEM_ALLOC | graph::node_type::MEM_FREE | graph::node_type::GRAPH) {
            tracing::warn!(node_type = params.type_, "hipGraphNodeSetParams: this node type cannot change");
            return Err(HipError::INVALID_VALUE);
        }
        let devices = devices()?;
        // SAFETY: HIP's contract for the member `type` selects.
        graph::set_params(&node, unsafe { generic::node_params(devices, params) }?)
    }

    /// A child-graph node takes the new graph's parameters if its shape is the same.
    fn hipGraphExecNodeSetParams(
        exec: hipGraphExec_t => Arc<Exec>,
        node: hipGraphNode_t,
        params: *mut GraphNodeParams => Out<GraphNodeParams>,
    ) -> hipError_t {
        // SAFETY: the caller's structure (HIP declares it non-const).
        let params = &unsafe { params.read() };
        graph::node(node)?;
        match params.type_ {
            graph::node_type::MEM_ALLOC | graph::node_type::MEM_FREE => {
                tracing::warn!("hipGraphExecNodeSetParams: alloc and free nodes cannot change");
                Err(HipError::INVALID_VALUE)
            }
            // SAFETY: a child-graph node's parameters are one graph handle.
            graph::node_type::GRAPH => exec::set_child(devices()?, &exec, node, &*graph::graph(unsafe { params.body.handle })?),
            _ => {
                let devices = devices()?;
                // SAFETY: HIP's contract for the member `type` selects.
                exec::set_params(devices, &exec, node, unsafe { generic::node_params(devices, params) }?)
            }
        }
    }

    fn hipGraphExecChildGraphNodeSetParams(
        exec: hipGraphExec_t => Arc<Exec>,
        node: hipGraphNode_t,
        child: hipGraph_t => Arc<Graph>,
    ) -> hipError_t {
        graph::node(node)?;
        exec::set_child(devices()?, &exec, node, &child)
    }

    /// Kernel, memcpy and memset nodes only; a disabled node does nothing but keeps its edges.
    fn hipGraphNodeSetEnabled(exec: hipGraphExec_t => Arc<Exec>, node: hipGraphNode_t, enabled: u32) -> hipError_t {
        graph::node(node)?;
        exec::set_enabled(&exec, node, enabled != 0)
    }

    fn hipGraphNodeGetEnabled(exec: hipGraphExec_t => Arc<Exec>, node: hipGraphNode_t, enabled: *mut u32 => Out<u32>) -> hipError_t {
        graph::node(node)?;
        enabled.write(u32::from(exec::enabled(&exec, node)?))
    }

    /// Access policy window (kept, no effect), cooperative (launches as
    /// `hipLaunchCooperativeKernel`), priority (kept; the stream's priority applies).
    fn hipGraphKernelNodeSetAttribute(
        node: hipGraphNode_t => Arc<Node>,
        attr: u32,
        value: *const KernelAttrValue => &KernelAttrValue,
    ) -> hipError_t {
        kernel_attribute(&node, attr, Some(*value)).map(drop)
    }

    fn hipGraphKernelNodeGetAttribute(
        node: hipGraphNode_t => Arc<Node>,
        attr: u32,
        value: *mut KernelAttrValue => Out<KernelAttrValue>,
    ) -> hipError_t {
        value.write(kernel_attribute(&node, attr, None)?)
    }

    fn hipGraphKernelNodeCopyAttributes(src: hipGraphNode_t => Arc<Node>, dst: hipGraphNode_t => Arc<Node>) -> hipError_t {
        let attrs = kernel_of(&src)?.attrs;
        graph::update_kernel_attrs(&dst, |a| {
            *a = attrs;
            Ok(())
        })
    }

    /// `result_out` and `errNode_out` tell the outcome; `uploadStream` is used with the
    /// upload flag.
    fn hipGraphInstantiateWithParams(
        exec: *mut hipGraphExec_t => Out<hipGraphExec_t>,
        graph: hipGraph_t => Arc<Graph>,
        params: *mut InstantiateParams => Out<InstantiateParams>,
    ) -> hipError_t {
        instantiate_with_params(exec, &graph, params)
    }

    fn hipGraphExecGetFlags(exec: hipGraphExec_t => Arc<Exec>, flags: *mut u64 => Out<u64>) -> hipError_t {
        flags.write(exec.flags)
    }

    fn hipGraphDebugDotPrint(graph: hipGraph_t => Arc<Graph>, path: *const c_char => &str, flags: u32) -> hipError_t {
        // Every flag asks for more detail; this print has one level of it.
        let _ = flags;
        graph::print_dot(&graph, path)
    }
}

#[cfg(not(test))]
include!(concat!(env!("OUT_DIR"), "/symver_graph.rs"));

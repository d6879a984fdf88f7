//! Executable graphs: `hipGraphInstantiate` makes a plan, `hipGraphLaunch` submits it.
//!
//! Instantiation flattens the graph (a child graph's nodes take the child node's place,
//! between two empty markers), orders the nodes topologically (Kahn's algorithm, ties in the
//! order nodes were added, so a plan is deterministic) and copies each node's parameters into
//! a step; a kernel step keeps its explicit arguments packed in the kernel's kernarg layout.
//! The steps, in that order, are cut into *segments*: maximal runs of kernel (and empty) nodes
//! form *batches*, and every other node (copies, fills, host calls, event records and waits,
//! and any node type not named here) is an *eager* step.
//!
//! A launch submits the segments in order on one stream. An eager step goes through the
//! runtime's own operation (`copy::memcpy_async`, ...). A batch is ours: its kernel nodes'
//! dispatch packets and kernarg images are built once per device (`aql.rs`, with the launch
//! path's own checks and kernarg layout) and planned once (`plan.rs`: which queue each node
//! goes to, and the barrier-AND packets for joins across queues); a launch copies them into
//! the rings and rings one doorbell per queue, as one operation of the stream
//! (`Stream::submit_batch`), so the stream's ordering (legacy null-stream semantics, events,
//! synchronize, queries, fault reports) covers it like any launch. The stream's queue alone
//! serves a batch unless `HIPSHIM_GRAPH_QUEUES` allows more: independent branches then run on
//! branch queues of the device, joined back on the stream's queue.
//!
//! A launch on a capturing stream submits every step through the runtime's operations, which
//! capture them; so does every launch with `HIPSHIM_GRAPH_QUEUES=0` (the executor before
//! this one, kept for comparison).

mod aql;
mod plan;

use super::memory::{self, GraphAlloc};
use super::user_object;
use super::{bad, node_type, Graph, HostCall, KernelNode, Memcpy1D, Memset, NodeParams};
use crate::error::{HipError, HipResult};
use crate::runtime::base::handles::HandleTable;
use crate::runtime::devices::device::Device;
use crate::runtime::image::copy3d;
use crate::runtime::launch::{self, Args, Dispatch, GridSize, LaunchRequest};
use crate::runtime::stream::event::{self, Event};
use crate::runtime::{copy, stream};
use aql::{BatchShape, Prebuilt, Publication};
use parking_lot::Mutex;
use std::collections::{BTreeSet, HashMap};
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

static EXECS: HandleTable<Exec> = HandleTable::new("graph exec", 0x40);

/// `hipGraphInstantiateFlagAutoFreeOnLaunch` (see `mem/memory.rs`), `...Upload`,
/// `...UseNodePriority` (queues are chosen per stream and branch, not per node priority).
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
// Steps are made at instantiation and patched by setters, never per launch.
#[allow(clippy::large_enum_variant)]
#[derive(Clone)]
enum Step {
    Kernel(KernelNode),
    Memcpy(Memcpy1D),
    Memcpy3D(super::Memcpy3DNode),
    Memset(Memset),
    Host(HostCall),
    Record(Arc<Event>),
    Wait(Arc<Event>),
    /// Graph memory: allocated or freed when the launch is submitted (see `mem/memory.rs`).
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

/// How a step is submitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A prebuilt dispatch packet.
    Kernel,
    /// Nothing, but its dependencies pass through it.
    Empty,
    /// Through the runtime's operations (every other step, whatever its type).
    Eager,
}

impl Step {
    fn kind(&self) -> Kind {
        match self {
            // A cooperative kernel goes to the device's cooperative queue (`launch_function`).
            Step::Kernel(k) if k.attrs.cooperative == 0 => Kind::Kernel,
            Step::Nothing => Kind::Empty,
            _ => Kind::Eager,
        }
    }
}

/// What a launch submits, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Segment {
    /// Batch `n` of `Exec::batches`.
    Batch(usize),
    /// The step of this flat node, through the runtime's operations.
    Eager(usize),
}

pub struct Exec {
    /// The flattened graph's shape: each node's origin, type and dependencies (what
    /// `hipGraphExecUpdate` compares).
    shape: Vec<Flat>,
    /// Flat indices in launch order.
    order: Vec<usize>,
    /// `order` cut into batches and eager steps.
    segments: Vec<Segment>,
    batches: Vec<BatchShape>,
    /// The steps and their packets. A launch takes both and submits them unlocked (a host
    /// node may change its own executable graph); a setter copies what a launch still holds.
    state: Mutex<State>,
    /// Flat index of each node of the instantiated graph (and of its child graphs).
    by_origin: HashMap<usize, usize>,
    /// Names the graph in traces.
    serial: u64,
    /// `hipGraphInstantiateWithFlags`'s flags (`hipGraphExecGetFlags`).
    pub flags: u64,
    /// Whether each flat node runs (`hipGraphNodeSetEnabled`); a disabled one keeps its edges.
    enabled: Vec<AtomicBool>,
    /// How many nodes are disabled: while any is, launches take the eager path, which skips
    /// them (the prebuilt batches hold every kernel node).
    disabled: AtomicUsize,
    /// The user object references the graph held, retained while this exists.
    _user_objects: user_object::Owned,
}

struct State {
    /// The step of each flat node, by flat index.
    steps: Arc<Vec<Step>>,
    /// The batches' packets, per device launched on (built at the first launch there).
    prebuilt: Vec<Arc<Prebuilt>>,
}

static NEXT_SERIAL: AtomicU64 = AtomicU64::new(1);

/// Cuts `order` into segments: runs of batchable steps become batches (if they hold a kernel
/// node), everything else an eager step. A kernel node's dependencies inside its batch go
/// through empty nodes to the kernel nodes behind them; dependencies outside the batch are
/// earlier segments, complete in stream order before the batch starts.
fn segment(shape: &[Flat], order: &[usize], kinds: &[Kind]) -> (Vec<Segment>, Vec<BatchShape>) {
    let mut segments = Vec::new();
    let mut batches = Vec::new();
    let mut run: Vec<usize> = Vec::new();
    let mut flush = |run: &mut Vec<usize>, segments: &mut Vec<Segment>| {
        let mut local: HashMap<usize, usize> = HashMap::new();
        // Per flat node of the run: the batch nodes it stands for as a dependency.
        let mut reach: HashMap<usize, Vec<usize>> = HashMap::new();
        let mut batch = BatchShape {
            nodes: Vec::new(),
            deps: Vec::new(),
        };
        for &at in run.iter() {
            let mut deps: Vec<usize> = shape[at]
                .deps
                .iter()
                .filter_map(|d| reach.get(d))
                .flatten()
                .copied()
                .collect();
            deps.sort_unstable();
            deps.dedup();
            if kinds[at] == Kind::Kernel {
                let me = batch.nodes.len();
                local.insert(at, me);
                batch.nodes.push(at);
                batch.deps.push(deps);
                reach.insert(at, vec![me]);
            } else {
                reach.insert(at, deps);
            }
        }
        run.clear();
        if !batch.nodes.is_empty() {
            segments.push(Segment::Batch(batches.len()));
            batches.push(batch);
        }
    };
    for &at in order {
        if kinds[at] != Kind::Eager {
            run.push(at);
        } else {
            flush(&mut run, &mut segments);
            segments.push(Segment::Eager(at));
        }
    }
    flush(&mut run, &mut segments);
    (segments, batches)
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
    let steps: Vec<Step> = shape.iter().map(|n| Step::of(n.params.clone())).collect();
    let shape: Vec<Flat> = shape
        .into_iter()
        .map(|n| Flat { params: None, ..n })
        .collect();
    let kinds: Vec<Kind> = steps.iter().map(Step::kind).collect();
    let (segments, batches) = segment(&shape, &order, &kinds);
    let enabled = (0..shape.len()).map(|_| AtomicBool::new(true)).collect();
    let exec = Arc::new(Exec {
        shape,
        order,
        segments,
        batches,
        state: Mutex::new(State {
            steps: Arc::new(steps),
            prebuilt: Vec::new(),
        }),
        by_origin,
        serial: NEXT_SERIAL.fetch_add(1, Ordering::Relaxed),
        flags,
        enabled,
        disabled: AtomicUsize::new(0),
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

/// `hipGraphUpload`: builds the graph's packets for the stream's device ahead of a launch.
pub fn upload(devices: &[Device], exec: &Exec, stream_handle: *mut c_void) -> HipResult {
    let (device, _) = stream::lookup(devices, stream_handle)?;
    if !exec.batches.is_empty() {
        exec.snapshot(device)?;
    }
    Ok(())
}

impl Exec {
    /// The current steps and the batches' packets for `device` (built now if need be).
    fn snapshot(&self, device: &Device) -> HipResult<(Arc<Vec<Step>>, Arc<Prebuilt>)> {
        let mut state = self.state.lock();
        let steps = state.steps.clone();
        if let Some(p) = state.prebuilt.iter().find(|p| p.device == device.index) {
            return Ok((steps, p.clone()));
        }
        let lanes = (device.streams.policy.graph_queues as usize).max(1);
        let built = Arc::new(Prebuilt::build(device, &steps, &self.batches, lanes)?);
        state.prebuilt.push(built.clone());
        Ok((steps, built))
    }

    /// After `at`'s step changed (`None`: every step): patches each device's packets (the
    /// device one of `devices`) where no launch holds them, else a copy; drops those that
    /// cannot be patched (the next launch builds them anew, and reports what is wrong with
    /// them).
    fn repatch(&self, devices: &[Device], state: &mut State, at: Option<usize>) {
        let steps = state.steps.clone();
        state.prebuilt.retain_mut(|prebuilt| {
            let Some(device) = devices.get(prebuilt.device) else {
                return false;
            };
            if Arc::get_mut(prebuilt).is_none() {
                match prebuilt.copied(device) {
                    Ok(copy) => *prebuilt = Arc::new(copy),
                    Err(_) => return false,
                }
            }
            let Some(unique) = Arc::get_mut(prebuilt) else {
                return false;
            };
            let mut patch = |at: usize| match &steps[at] {
                Step::Kernel(k) => unique.repatch(device, at, k).is_ok(),
                _ => true,
            };
            match at {
                Some(at) => patch(at),
                None => (0..steps.len()).all(&mut patch),
            }
        });
    }
}

/// `hipGraphLaunch`: the segments in order on `stream_handle` (see the module comment). Every
/// kernel node is checked before anything is submitted; an eager step that fails stops the
/// launch (what was submitted before it stays submitted).
pub fn launch(devices: &'static [Device], exec: &Exec, stream_handle: *mut c_void) -> HipResult {
    let (device, stream) = stream::lookup(devices, stream_handle)?;
    // A handle, looked up again by each operation, never dereferenced.
    let stream_handle = stream_handle as usize as *mut c_void;
    let auto_free = exec.flags & AUTO_FREE_ON_LAUNCH != 0;
    {
        // A graph whose allocation is still allocated does not start at all.
        let steps = exec.state.lock().steps.clone();
        for step in steps.iter() {
            if let Step::Alloc(a) = step {
                if !memory::may_allocate(a, auto_free) {
                    return memory::launch_allocate(a, auto_free);
                }
            }
        }
    }
    if exec.batches.is_empty()
        || stream.capturing.load(Ordering::Relaxed)
        || device.streams.policy.graph_queues == 0
        || exec.disabled.load(Ordering::Relaxed) != 0
    {
        let steps = exec.state.lock().steps.clone();
        for &at in &exec.order {
            if exec.enabled[at].load(Ordering::Relaxed) {
                eager(
                    devices,
                    device,
                    &stream,
                    stream_handle,
                    &steps[at],
                    auto_free,
                )?;
            }
        }
        return Ok(());
    }
    let (steps, prebuilt) = exec.snapshot(device)?;
    // A kernel node of a module being unloaded refuses the launch before anything is
    // submitted; the unload waits until the packets of this one are published.
    let mut admitted = Vec::new();
    for step in steps.iter() {
        if let Step::Kernel(k) = step {
            let admission = k.function.admit_launch()?;
            if admission.is_of_module() {
                admitted.push(admission);
            }
        }
    }
    let mut queues_used: Vec<u64> = Vec::new();
    for segment in &exec.segments {
        match *segment {
            Segment::Eager(at) => eager(
                devices,
                device,
                &stream,
                stream_handle,
                &steps[at],
                auto_free,
            )?,
            Segment::Batch(b) => {
                let branch_queues = match prebuilt.branch_lanes(b) {
                    0 => Vec::new(),
                    wanted => device
                        .streams
                        .policy
                        .graph_branch_queues(&device.streams.queues, wanted),
                };
                let plan = prebuilt.plan(b, &branch_queues);
                let signals = (0..plan.signals)
                    .map(|_| device.streams.signals.get(1))
                    .collect::<Result<Vec<_>, _>>()?;
                let publication = Publication {
                    plan,
                    nodes: &exec.batches[b].nodes,
                    prebuilt: &prebuilt,
                    signals: &signals,
                    branch_queues: &branch_queues,
                };
                let recording = crate::trace::recording();
                stream.submit_batch(
                    &device.streams,
                    signals.clone(),
                    prebuilt.clone(),
                    |queue, completion| {
                        if recording {
                            queues_used.extend(publication.queue_ids(queue));
                        }
                        publication.publish(queue, completion)
                    },
                )?;
            }
        }
    }
    drop(admitted);
    if crate::trace::recording() {
        queues_used.sort_unstable();
        queues_used.dedup();
        let eager = exec
            .segments
            .iter()
            .filter(|s| matches!(s, Segment::Eager(_)))
            .count();
        crate::trace::record::graph_launch(
            exec.serial,
            device.index as u32,
            prebuilt.kernel_count() as u32,
            eager as u32,
            &queues_used,
        );
    }
    Ok(())
}

/// Submits one step through the runtime's operations.
fn eager(
    devices: &'static [Device],
    device: &'static Device,
    stream: &stream::StreamRef<'static>,
    stream_handle: *mut c_void,
    step: &Step,
    auto_free: bool,
) -> HipResult {
    match step {
        Step::Kernel(k) => {
            // SAFETY: packed arguments need no caller contract; `launch_function` checks they
            // cover the kernel's explicit arguments.
            unsafe {
                launch::launch_function(
                    device,
                    &k.function,
                    LaunchRequest {
                        grid: GridSize::Blocks(k.grid),
                        block: k.block,
                        shared_mem: k.shared_mem as usize,
                        args: Args::Packed(&k.args.bytes),
                        stream: stream_handle,
                    },
                    if k.attrs.cooperative != 0 {
                        Dispatch::SINGLE_GRID
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
                    copy::Devices::of(devices),
                    copy::CopyRequest::linear(
                        m.dst as *mut c_void,
                        m.src as *const c_void,
                        m.count,
                        m.kind,
                    ),
                    stream_handle,
                )
            }?
        }
        Step::Memcpy3D(m) => {
            // SAFETY: as for a 1D memcpy node; arrays are checked again as the copy runs.
            unsafe { copy3d::copy_3d(copy::Devices::of(devices), &m.copy, Some(stream_handle)) }?
        }
        Step::Memset(m) => {
            for row in 0..m.height {
                let dst = m.dst + row * m.pitch;
                copy::memset_async(
                    copy::Devices::of(devices),
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
            stream,
            Box::new(move || {
                // SAFETY: the program added this function with this argument to the graph.
                unsafe { function(user_data as *mut c_void) };
                Ok(())
            }),
        )?,
        Step::Record(e) => event::record(e, device, stream)?,
        Step::Wait(e) => event::stream_wait(device, stream, e, 0)?,
        Step::Alloc(a) => memory::launch_allocate(a, auto_free)?,
        Step::Free(a) => memory::launch_free(a),
        Step::Nothing => {}
    }
    Ok(())
}

/// Replaces the parameters of the step made from `node` (a node of the instantiated graph),
/// which must be of the same type (`hipGraphExec*NodeSetParams`).
pub fn set_params(
    devices: &[Device],
    exec: &Exec,
    node: *mut c_void,
    params: NodeParams,
) -> HipResult {
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
    let mut state = exec.state.lock();
    let mut params = params;
    if let (NodeParams::Kernel(new), Step::Kernel(old)) = (&mut params, &state.steps[at]) {
        new.attrs = old.attrs;
    }
    // An executable graph's copy keeps its direction (CUDA's rule, which AMD's runtime and
    // hip-tests follow): new operands of another kind of memory are refused.
    if let (NodeParams::Memcpy1D(new), Step::Memcpy(old)) = (&params, &state.steps[at]) {
        if new.kind != old.kind {
            return Err(bad(
                "hipGraphExecMemcpyNodeSetParams: the copy's direction cannot change",
            ));
        }
    }
    Arc::make_mut(&mut state.steps)[at] = Step::of(Some(params));
    exec.repatch(devices, &mut state, Some(at));
    Ok(())
}

/// The flat index of `node` (a node of the instantiated graph or of its child graphs).
fn flat_index(exec: &Exec, node: *mut c_void) -> HipResult<usize> {
    exec.by_origin
        .get(&(node as usize))
        .copied()
        .ok_or_else(|| bad("the node is not in the graph this executable graph was made from"))
}

/// Kernel, memcpy and memset nodes only can be disabled (CUDA's rule).
fn can_disable(exec: &Exec, at: usize, call: &str) -> HipResult {
    if matches!(
        exec.shape[at].type_code,
        node_type::KERNEL | node_type::MEMCPY | node_type::MEMSET
    ) {
        Ok(())
    } else {
        Err(bad(&format!(
            "{call}: only kernel, memcpy and memset nodes can be disabled"
        )))
    }
}

/// `hipGraphNodeSetEnabled`.
pub fn set_enabled(exec: &Exec, node: *mut c_void, enabled: bool) -> HipResult {
    let at = flat_index(exec, node)?;
    can_disable(exec, at, "hipGraphNodeSetEnabled")?;
    // Under the state lock, so the count and the flags change together.
    let _state = exec.state.lock();
    let was = exec.enabled[at].swap(enabled, Ordering::Relaxed);
    match (was, enabled) {
        (true, false) => {
            exec.disabled.fetch_add(1, Ordering::Relaxed);
        }
        (false, true) => {
            exec.disabled.fetch_sub(1, Ordering::Relaxed);
        }
        _ => {}
    }
    Ok(())
}

/// `hipGraphNodeGetEnabled`.
pub fn enabled(exec: &Exec, node: *mut c_void) -> HipResult<bool> {
    let at = flat_index(exec, node)?;
    can_disable(exec, at, "hipGraphNodeGetEnabled")?;
    Ok(exec.enabled[at].load(Ordering::Relaxed))
}

/// `hipGraphExecChildGraphNodeSetParams`: `child`'s parameters for the child graph `node`
/// embeds, if `child` has the same shape (nodes in the same order, same types and edges).
pub fn set_child(devices: &[Device], exec: &Exec, node: *mut c_void, child: &Graph) -> HipResult {
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
    let mut state = exec.state.lock();
    let steps = Arc::make_mut(&mut state.steps);
    for (i, new) in fresh.into_iter().enumerate() {
        steps[base + i] = Step::of(new.params);
    }
    exec.repatch(devices, &mut state, None);
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
/// graph's (in the order they were added, child graphs included) with the same types and
/// edges; otherwise nothing changes, and the result says why, with the first node of `graph`
/// that differs. A kernel node may change its function (AMD's runtime and CUDA since 11.2
/// allow it); `FunctionChanged` stays in the ABI's enum, unused.
pub fn update(devices: &[Device], exec: &Exec, graph: &Graph) -> (UpdateResult, usize) {
    let fresh = flatten_graph(graph);
    if fresh.len() != exec.shape.len() {
        return (UpdateResult::TopologyChanged, 0);
    }
    for (new, old) in fresh.iter().zip(&exec.shape) {
        let origin = new.origin.unwrap_or(0);
        if new.type_code != old.type_code || new.origin.is_some() != old.origin.is_some() {
            return (UpdateResult::NodeTypeChanged, origin);
        }
        if new.deps != old.deps {
            return (UpdateResult::TopologyChanged, origin);
        }
    }
    let mut state = exec.state.lock();
    let steps = Arc::make_mut(&mut state.steps);
    for (i, new) in fresh.into_iter().enumerate() {
        steps[i] = Step::of(new.params);
    }
    exec.repatch(devices, &mut state, None);
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
    fn batches_are_cut_at_eager_steps_and_see_through_empty_nodes() {
        use Kind::*;
        // 0 kernel; 1 empty after 0; 2, 3 kernels after 1; 4 eager after 2 and 3; 5 kernel
        // after 4 and 0 (0 is in an earlier segment: no dependency inside the batch); 6
        // empty after 5; 7 kernel after 6.
        let nodes = flat(&[&[], &[0], &[1], &[1], &[2, 3], &[4, 0], &[5], &[6]]);
        let kinds = [Kernel, Empty, Kernel, Kernel, Eager, Kernel, Empty, Kernel];
        let order: Vec<usize> = (0..8).collect();
        let (segments, batches) = segment(&nodes, &order, &kinds);
        assert_eq!(
            segments,
            vec![Segment::Batch(0), Segment::Eager(4), Segment::Batch(1)]
        );
        assert_eq!(batches[0].nodes, vec![0, 2, 3]);
        assert_eq!(batches[0].deps, vec![vec![], vec![0], vec![0]]);
        assert_eq!(batches[1].nodes, vec![5, 7]);
        assert_eq!(batches[1].deps, vec![vec![], vec![0]]);
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

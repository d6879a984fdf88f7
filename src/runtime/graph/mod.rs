//! HIP graphs, built explicitly (`hipGraphAdd*Node`): a graph of nodes whose parameters are
//! copied when they are added (as CUDA does: the program may reuse its structures and argument
//! storage at once), with dependency edges between them. `exec.rs` turns a graph into an
//! executable plan (`hipGraphInstantiate`) and submits it (`hipGraphLaunch`); `dot.rs` prints
//! one (`hipGraphDebugDotPrint`).
//!
//! Every graph, node and executable graph is a handle of `runtime/base/handles.rs`, so a stale or
//! foreign handle is never dereferenced; the graph calls report one as
//! `hipErrorInvalidValue`, as AMD's runtime does for graph objects.

pub mod capture;
mod dot;
pub mod exec;
pub mod generic;
pub mod memory;
pub mod user_object;

use crate::error::{HipError, HipResult};
use crate::runtime::base::compat;
use crate::runtime::base::handles::HandleTable;
use crate::runtime::base::kernarg;
use crate::runtime::copy::{CopyKind, Rows};
use crate::runtime::devices::device::Device;
use crate::runtime::image::array::{Extent, PitchedPtr, Pos};
use crate::runtime::image::copy3d::{Copy3D, DrvMemcpy3D, Memcpy3DParms};
use crate::runtime::kernel::module::{self, Function};
use crate::runtime::launch::Dim3;
use crate::runtime::mem::memory::{classify, Side};
use crate::runtime::stream::event::Event;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Arc;

pub use dot::print_dot;
pub use exec::{Exec, UpdateResult};
pub use user_object::HostFunction;

static GRAPHS: HandleTable<Graph> = HandleTable::new("graph", 0x20);
static NODES: HandleTable<Node> = HandleTable::new("graph node", 0x30);

/// `hipKernelNodeParams` (the same layout in ROCm 5, 6 and 7).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KernelNodeParams {
    pub block: Dim3,
    pub extra: *mut *mut c_void,
    /// A kernel's host stub (as for `hipLaunchKernel`) or a `hipFunction_t`.
    pub func: *mut c_void,
    pub grid: Dim3,
    pub kernel_params: *mut *mut c_void,
    pub shared_mem: u32,
}

/// `hipMemsetParams` as ROCm 5 and 6 lay it out (48 bytes). ROCm 7 reordered it into the
/// layout of `HIP_MEMSET_NODE_PARAMS` (`DrvMemsetParams`, 40 bytes, CUDA's order):
/// a program's structure is read and written in its ABI's layout by [`MemsetParams::read`] and
/// [`MemsetParams::write`].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct MemsetParams {
    pub dst: *mut c_void,
    pub element_size: u32,
    pub height: usize,
    pub pitch: usize,
    pub value: u32,
    pub width: usize,
}

impl MemsetParams {
    /// The program's `hipMemsetParams` at `p`, in the layout of the ABI it was built for
    /// (`compat::abi`).
    ///
    /// # Safety
    /// `p` is null or points to a `hipMemsetParams` of that layout.
    pub unsafe fn read(p: *const MemsetParams) -> HipResult<MemsetParams> {
        if p.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        if compat::abi() < compat::Abi::Rocm7 {
            // SAFETY: the caller's contract, the ROCm 5/6 layout.
            return Ok(unsafe { p.read() });
        }
        // SAFETY: the caller's contract, ROCm 7's layout.
        Ok(unsafe { p.cast::<DrvMemsetParams>().read() }.to_memset())
    }

    /// Writes these parameters to the program's `hipMemsetParams` at `p`, in its ABI's layout.
    ///
    /// # Safety
    /// `p` is null or points to writable storage of a `hipMemsetParams` of that layout.
    pub unsafe fn write(&self, p: *mut MemsetParams) -> HipResult {
        if p.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        if compat::abi() < compat::Abi::Rocm7 {
            // SAFETY: the caller's contract, the ROCm 5/6 layout.
            unsafe { p.write(*self) };
        } else {
            // SAFETY: the caller's contract, ROCm 7's layout.
            unsafe {
                p.cast::<DrvMemsetParams>()
                    .write(DrvMemsetParams::from(self))
            };
        }
        Ok(())
    }
}

/// `HIP_MEMSET_NODE_PARAMS` (40 bytes), which is also ROCm 7's `hipMemsetParams` (ROCm 7
/// dropped the driver name; `hipDrvGraphAddMemsetNode` takes the same structure either way).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DrvMemsetParams {
    pub dst: *mut c_void,
    pub pitch: usize,
    pub value: u32,
    pub element_size: u32,
    pub width: usize,
    pub height: usize,
}

const _: () = assert!(std::mem::size_of::<DrvMemsetParams>() == 40);

impl From<&MemsetParams> for DrvMemsetParams {
    fn from(m: &MemsetParams) -> DrvMemsetParams {
        DrvMemsetParams {
            dst: m.dst,
            pitch: m.pitch,
            value: m.value,
            element_size: m.element_size,
            width: m.width,
            height: m.height,
        }
    }
}

impl DrvMemsetParams {
    pub fn to_memset(&self) -> MemsetParams {
        MemsetParams {
            dst: self.dst,
            element_size: self.element_size,
            height: self.height,
            pitch: self.pitch,
            value: self.value,
            width: self.width,
        }
    }
}

/// `hipHostNodeParams`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HostNodeParams {
    pub function: Option<HostFunction>,
    pub user_data: *mut c_void,
}

/// `hipGraphNodeType` as numbered since ROCm 5.4 (ROCm 5.0 to 5.3 counted from 1 and had a
/// `Memcpy1D` type): the numbering of the hip_5.5 and later ABI, where `hipGraphAddNode` and
/// `hipGraphNodeParams` take these codes. A 1D copy, like a symbol copy, is a memcpy node, as
/// in AMD's runtime.
pub mod node_type {
    pub const KERNEL: u32 = 0;
    pub const MEMCPY: u32 = 1;
    pub const MEMSET: u32 = 2;
    pub const HOST: u32 = 3;
    pub const GRAPH: u32 = 4;
    pub const EMPTY: u32 = 5;
    pub const WAIT_EVENT: u32 = 6;
    pub const EVENT_RECORD: u32 = 7;
    pub const EXT_SEMAPHORE_SIGNAL: u32 = 8;
    pub const EXT_SEMAPHORE_WAIT: u32 = 9;
    pub const MEM_ALLOC: u32 = 10;
    pub const MEM_FREE: u32 = 11;
}

/// A kernel node's explicit arguments, copied at add time into the kernel's kernarg layout
/// (the packed form a launch takes), with a pointer to each argument for
/// `hipGraphKernelNodeGetParams`.
pub struct PackedArgs {
    pub bytes: Box<[u8]>,
    /// `void*` to each explicit argument inside `bytes` (what `kernelParams` reads as).
    pointers: Box<[usize]>,
}

#[derive(Clone)]
pub struct KernelNode {
    pub function: Arc<Function>,
    /// `func` as the program gave it, returned by `hipGraphKernelNodeGetParams`.
    pub func: usize,
    pub grid: Dim3,
    pub block: Dim3,
    pub shared_mem: u32,
    pub args: Arc<PackedArgs>,
    /// `hipGraphKernelNodeSetAttribute`'s: kept when the parameters change.
    pub attrs: KernelAttrs,
}

/// `hipAccessPolicyWindow`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AccessPolicyWindow {
    pub base_ptr: usize,
    pub hit_prop: u32,
    pub hit_ratio: f32,
    pub miss_prop: u32,
    pub num_bytes: usize,
}

const _: () = assert!(std::mem::size_of::<AccessPolicyWindow>() == 32);

/// A kernel node's attributes (`hipKernelNodeAttrID` / `hipLaunchAttributeID`). The access
/// policy window is a caching hint with no effect here, and the priority is the stream's at
/// launch (queues are chosen per stream); a cooperative node launches as
/// `hipLaunchCooperativeKernel` does.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct KernelAttrs {
    pub access_policy_window: AccessPolicyWindow,
    pub cooperative: i32,
    pub priority: i32,
}

/// `hipKernelNodeAttrID`.
pub mod kernel_attr {
    pub const ACCESS_POLICY_WINDOW: u32 = 1;
    pub const COOPERATIVE: u32 = 2;
    pub const PRIORITY: u32 = 8;
}

#[derive(Clone, Copy, Debug)]
pub struct Memcpy1D {
    pub dst: usize,
    pub src: usize,
    pub count: usize,
    pub kind: CopyKind,
}

#[derive(Clone, Copy, Debug)]
pub struct Memset {
    pub dst: usize,
    pub element: usize,
    pub value: u32,
    pub width: usize,
    pub height: usize,
    pub pitch: usize,
}

/// An event node's event, with the handle `hipGraphEvent*NodeGetEvent` returns.
#[derive(Clone)]
pub struct EventRef {
    pub event: Arc<Event>,
    pub handle: usize,
}

impl EventRef {
    pub fn new(handle: *mut c_void) -> HipResult<EventRef> {
        Ok(EventRef {
            event: crate::runtime::stream::event::lookup(handle)
                .map_err(|_| bad("not a live event"))?,
            handle: handle as usize,
        })
    }
}

#[derive(Clone, Copy, Debug)]
pub struct HostCall {
    pub function: HostFunction,
    pub user_data: usize,
}

/// What a node does, with its parameters as copied when it was added or set.
#[derive(Clone)]
// A node's parameters are made once per node, never on a launch: size matters less than
// keeping each variant plain.
#[allow(clippy::large_enum_variant)]
pub enum NodeParams {
    Kernel(KernelNode),
    Memcpy1D(Memcpy1D),
    Memcpy3D(Memcpy3DNode),
    Memset(Memset),
    Host(HostCall),
    Empty,
    EventRecord(EventRef),
    EventWait(EventRef),
    /// The node's own copy of the child graph (embedded: not destroyable by the program).
    Child(Arc<Graph>),
    MemAlloc(Arc<memory::GraphAlloc>),
    MemFree(Arc<memory::GraphAlloc>),
}

impl NodeParams {
    pub fn type_code(&self) -> u32 {
        match self {
            NodeParams::Kernel(_) => node_type::KERNEL,
            NodeParams::Memcpy1D(_) | NodeParams::Memcpy3D(_) => node_type::MEMCPY,
            NodeParams::Memset(_) => node_type::MEMSET,
            NodeParams::Host(_) => node_type::HOST,
            NodeParams::Empty => node_type::EMPTY,
            NodeParams::EventRecord(_) => node_type::EVENT_RECORD,
            NodeParams::EventWait(_) => node_type::WAIT_EVENT,
            NodeParams::Child(_) => node_type::GRAPH,
            NodeParams::MemAlloc(_) => node_type::MEM_ALLOC,
            NodeParams::MemFree(_) => node_type::MEM_FREE,
        }
    }
}

pub struct Graph {
    pub handle: usize,
    /// Owned by a child-graph node: `hipGraphDestroy` refuses it.
    embedded: bool,
    body: Mutex<Body>,
}

#[derive(Default)]
struct Body {
    /// In the order they were added (the order `hipGraphGetNodes` reports and
    /// `hipGraphExecUpdate` pairs nodes in).
    nodes: Vec<Arc<Node>>,
    /// (from, to) node handles, in the order they were added.
    edges: Vec<(usize, usize)>,
    /// For a clone: each original node's handle to its copy's (`hipGraphNodeFindInClone`).
    clone_of: HashMap<usize, usize>,
    /// User object references the graph owns.
    user_objects: user_object::Owned,
}

pub struct Node {
    pub handle: usize,
    /// The graph it belongs to.
    graph: usize,
    params: Mutex<NodeParams>,
}

impl Node {
    pub fn params(&self) -> NodeParams {
        self.params.lock().clone()
    }
}

fn bad(why: &str) -> HipError {
    tracing::warn!("{why}");
    HipError::INVALID_VALUE
}

pub fn graph(handle: *mut c_void) -> HipResult<Arc<Graph>> {
    GRAPHS
        .get(handle as usize)
        .map_err(|_| HipError::INVALID_VALUE)
}

pub fn node(handle: *mut c_void) -> HipResult<Arc<Node>> {
    NODES
        .get(handle as usize)
        .map_err(|_| HipError::INVALID_VALUE)
}

fn new_graph(embedded: bool) -> Arc<Graph> {
    let mut made = None;
    GRAPHS
        .insert_with(|handle| {
            let graph = Arc::new(Graph {
                handle,
                embedded,
                body: Mutex::new(Body::default()),
            });
            made = Some(graph.clone());
            Ok(graph)
        })
        .expect("making a graph cannot fail");
    made.expect("insert_with ran make")
}

/// `hipGraphCreate`: `flags` must be 0 (the caller has started the runtime).
pub fn create(flags: u32) -> HipResult<*mut c_void> {
    if flags != 0 {
        return Err(bad("hipGraphCreate: flags must be 0"));
    }
    Ok(new_graph(false).handle as *mut c_void)
}

/// `hipGraphDestroy`: the graph, its nodes and its child graphs (executable graphs made from
/// it keep their own copies).
pub fn destroy(handle: *mut c_void) -> HipResult {
    let graph = graph(handle)?;
    if graph.embedded {
        return Err(bad(
            "hipGraphDestroy: the graph belongs to a child-graph node",
        ));
    }
    release(&graph);
    Ok(())
}

fn release(graph: &Graph) {
    let _ = GRAPHS.remove(graph.handle);
    let (nodes, user_objects) = {
        let mut body = graph.body.lock();
        (
            std::mem::take(&mut body.nodes),
            std::mem::take(&mut body.user_objects),
        )
    };
    // Released unlocked (a destructor is only queued, but releasing takes other locks).
    drop(user_objects);
    for node in nodes {
        release_node(&node);
    }
}

fn release_node(node: &Node) {
    let _ = NODES.remove(node.handle);
    if let NodeParams::Child(child) = &*node.params.lock() {
        release(child);
    }
}

/// Resolves a kernel node's `func`: a registered host stub, else a `hipFunction_t` (AMD's
/// runtime accepts both).
fn kernel_function(func: *mut c_void) -> HipResult<Arc<Function>> {
    if func.is_null() {
        tracing::warn!("kernel node: func is null");
        return Err(HipError::INVALID_DEVICE_FUNCTION);
    }
    module::function(func as usize)
        .or_else(|_| module::function_handle(func))
        .map_err(|_| HipError::INVALID_DEVICE_FUNCTION)
}

/// Checks `params` and copies what they point to: the arguments, laid out as the kernel on
/// `device` (the current device) takes them.
///
/// # Safety
/// HIP's contract for `kernelParams` and `extra`.
pub unsafe fn kernel_node(device: &Device, params: &KernelNodeParams) -> HipResult<KernelNode> {
    let function = kernel_function(params.func)?;
    let kernel = function.kernel(device)?.clone();
    let layout = &kernel.layout;
    if !params.kernel_params.is_null() && !params.extra.is_null() {
        return Err(bad("kernel node: both kernelParams and extra given"));
    }
    let bytes = if !params.extra.is_null() {
        // SAFETY: HIP's contract for `extra`.
        let buffer = unsafe { crate::runtime::launch::packed_args(params.extra, &kernel.info) }?;
        if buffer.len() < layout.explicit_extent() {
            return Err(bad(
                "kernel node: the extra buffer does not cover the arguments",
            ));
        }
        buffer.to_vec()
    } else {
        let count = layout.explicit_count();
        let pointers: &[*const c_void] = if params.kernel_params.is_null() {
            &[]
        } else {
            // SAFETY: HIP's contract: one pointer per explicit argument.
            unsafe {
                std::slice::from_raw_parts(params.kernel_params as *const *const c_void, count)
            }
        };
        // SAFETY: HIP's contract: each pointer is readable for its argument's size.
        unsafe { layout.pack(pointers) }.map_err(|e| {
            tracing::warn!(kernel = %function.name, error = %e, "kernel node: invalid arguments");
            HipError::INVALID_VALUE
        })?
    };
    let bytes: Box<[u8]> = bytes.into();
    let base = bytes.as_ptr() as usize;
    let pointers = layout.explicit_offsets().map(|at| base + at).collect();
    let node = KernelNode {
        function,
        func: params.func as usize,
        grid: params.grid,
        block: params.block,
        shared_mem: params.shared_mem,
        args: Arc::new(PackedArgs { bytes, pointers }),
        attrs: KernelAttrs::default(),
    };
    if let Some(refusal) = crate::runtime::launch::check_configuration(
        &kernel.info,
        node.grid,
        node.block,
        node.shared_mem as usize,
        device.lds_bytes,
        device.info.max_grid_size,
    ) {
        tracing::warn!(kernel = %node.function.name, "kernel node: {}", refusal.why());
        return Err(compat::abi().launch_error(refusal, false));
    }
    Ok(node)
}

/// A kernel node made by stream capture from a launch already checked, with its explicit
/// arguments packed in `bytes`. `func` is left null: the launch named its kernel by a pointer
/// this layer does not keep.
pub fn captured_kernel(
    function: Arc<Function>,
    grid: Dim3,
    block: Dim3,
    shared_mem: u32,
    bytes: Box<[u8]>,
    layout: &kernarg::KernargLayout,
) -> KernelNode {
    let base = bytes.as_ptr() as usize;
    let pointers = layout.explicit_offsets().map(|at| base + at).collect();
    KernelNode {
        function,
        func: 0,
        grid,
        block,
        shared_mem,
        args: Arc::new(PackedArgs { bytes, pointers }),
        attrs: KernelAttrs::default(),
    }
}

impl KernelNode {
    pub fn to_abi(&self) -> KernelNodeParams {
        KernelNodeParams {
            block: self.block,
            extra: std::ptr::null_mut(),
            func: self.func as *mut c_void,
            grid: self.grid,
            kernel_params: self.args.pointers.as_ptr() as *mut *mut c_void,
            shared_mem: self.shared_mem,
        }
    }
}

/// A memcpy node made from a `hipMemcpy3DParms` or a `HIP_MEMCPY3D`: the copy (checked again
/// when it runs, as arrays may be freed meanwhile) and the structure as the program gave it,
/// which `hip[Drv]GraphMemcpyNodeGetParams` return.
#[derive(Clone, Copy, Debug)]
pub struct Memcpy3DNode {
    pub copy: Copy3D,
    pub given: GivenCopy,
}

#[derive(Clone, Copy, Debug)]
pub enum GivenCopy {
    Runtime(Memcpy3DParms),
    Driver(DrvMemcpy3D),
}

// SAFETY: the pointers of a `GivenCopy` are values handed back to the program, never
// dereferenced by hipshim; the copy itself works from `Copy3D`'s addresses.
unsafe impl Send for GivenCopy {}
// SAFETY: as for `Send`; a `GivenCopy` is never mutated after it is made.
unsafe impl Sync for GivenCopy {}

/// A memcpy node from `hipGraphAddMemcpyNode`'s structure.
pub fn memcpy_3d(params: &Memcpy3DParms) -> HipResult<Memcpy3DNode> {
    Ok(Memcpy3DNode {
        copy: Copy3D::from_abi(params)?,
        given: GivenCopy::Runtime(*params),
    })
}

/// A memcpy node from `hipDrvGraphAddMemcpyNode`'s structure.
pub fn memcpy_3d_driver(params: &DrvMemcpy3D) -> HipResult<Memcpy3DNode> {
    Ok(Memcpy3DNode {
        copy: Copy3D::from_drv(params)?,
        given: GivenCopy::Driver(*params),
    })
}

/// The runtime-API structure of a memcpy node: as given, or a 1D copy's as one row.
pub fn memcpy_params(params: &NodeParams) -> HipResult<Memcpy3DParms> {
    match params {
        NodeParams::Memcpy3D(Memcpy3DNode {
            given: GivenCopy::Runtime(p),
            ..
        }) => Ok(*p),
        NodeParams::Memcpy1D(m) => {
            let row = |ptr: usize| PitchedPtr {
                ptr: ptr as *mut c_void,
                pitch: m.count,
                xsize: m.count,
                ysize: 1,
            };
            let origin = Pos { x: 0, y: 0, z: 0 };
            Ok(Memcpy3DParms {
                src_array: std::ptr::null_mut(),
                src_pos: origin,
                src_ptr: row(m.src),
                dst_array: std::ptr::null_mut(),
                dst_pos: origin,
                dst_ptr: row(m.dst),
                extent: Extent {
                    width: m.count,
                    height: 1,
                    depth: 1,
                },
                kind: m.kind.to_raw(),
            })
        }
        NodeParams::Memcpy3D(_) => Err(bad(
            "hipGraphMemcpyNodeGetParams of a node made with the driver API's HIP_MEMCPY3D",
        )),
        _ => Err(bad("not a memcpy node")),
    }
}

/// The driver-API structure of a memcpy node made with one.
pub fn drv_memcpy_params(params: &NodeParams) -> HipResult<DrvMemcpy3D> {
    match params {
        NodeParams::Memcpy3D(Memcpy3DNode {
            given: GivenCopy::Driver(p),
            ..
        }) => Ok(*p),
        _ => Err(bad(
            "hipDrvGraphMemcpyNodeGetParams of a node not made with HIP_MEMCPY3D",
        )),
    }
}

pub fn memcpy_1d(
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: u32,
) -> HipResult<Memcpy1D> {
    let kind = CopyKind::from_raw(kind)?;
    if count == 0 || dst.is_null() || src.is_null() {
        return Err(bad(
            "memcpy node: no bytes, or a null destination or source",
        ));
    }
    let (d, s) = (dst as usize, src as usize);
    // AMD's rules: the same pointer both ways, or a source that starts inside the destination,
    // is refused; a destination inside the source is allowed.
    if d == s || (s > d && s < d.saturating_add(count)) {
        return Err(bad(
            "memcpy node: the source overlaps the destination from behind",
        ));
    }
    // The destination must hold the bytes (a source read past its allocation fails when the
    // copy runs, as AMD's runtime lets such a node be made).
    if let Some(a) = crate::runtime::mem::memory::lookup(d, 1) {
        if d.saturating_add(count) > a.start + a.size {
            return Err(bad("memcpy node: more bytes than the destination holds"));
        }
    }
    Ok(Memcpy1D {
        dst: dst as usize,
        src: src as usize,
        count,
        kind,
    })
}

/// A memcpy node's copy to (`Towards::Symbol`) or from a device variable: the symbol is
/// resolved now, on `device` (the current device), as `hipMemcpyToSymbol` resolves it.
pub fn memcpy_symbol(
    device: &Device,
    towards: module::Towards,
    symbol: *const c_void,
    other: *mut c_void,
    count: usize,
    offset: usize,
    kind: u32,
) -> HipResult<Memcpy1D> {
    let kind = CopyKind::from_raw(kind)?;
    if other.is_null() || count == 0 {
        return Err(bad(
            "symbol memcpy node: no bytes, or a null source or destination",
        ));
    }
    if std::ptr::eq(other.cast_const(), symbol) || module::is_symbol(other) {
        return Err(bad("symbol memcpy node: a symbol on both sides"));
    }
    // A device-to-device copy needs device memory on the other side (AMD's check).
    let device_side =
        crate::runtime::mem::memory::lookup(other as usize, 1).is_some_and(|a| !a.kind.is_host());
    if kind == CopyKind::DeviceToDevice && !device_side {
        return Err(bad(
            "symbol memcpy node: hipMemcpyDeviceToDevice with host memory",
        ));
    }
    let at = module::symbol_target(device, towards, symbol, count, offset, kind)?;
    let (dst, src) = match towards {
        module::Towards::Symbol => (at, other as usize),
        module::Towards::Host => (other as usize, at),
    };
    Ok(Memcpy1D {
        dst,
        src,
        count,
        kind,
    })
}

pub fn memset(params: &MemsetParams) -> HipResult<Memset> {
    let element = params.element_size as usize;
    if !matches!(element, 1 | 2 | 4) {
        return Err(bad("memset node: elementSize must be 1, 2 or 4"));
    }
    if params.dst.is_null() || params.width == 0 || params.height == 0 {
        return Err(bad("memset node: null destination or an empty extent"));
    }
    let row = params
        .width
        .checked_mul(element)
        .ok_or(HipError::INVALID_VALUE)?;
    if params.height > 1 && params.pitch < row {
        return Err(bad("memset node: pitch smaller than a row"));
    }
    if !(params.dst as usize).is_multiple_of(element) {
        return Err(bad(
            "memset node: destination not aligned to its element size",
        ));
    }
    // The destination is checked now, as CUDA does, not first when the graph runs.
    let extent = Rows {
        width: row,
        height: params.height,
        dst_pitch: params.pitch.max(row),
        src_pitch: row,
    }
    .extent(params.pitch.max(row))
    .ok_or(HipError::INVALID_VALUE)?;
    if let Side::Pageable = classify(params.dst as usize, extent, None, "memset node destination")?
    {
        return Err(bad(
            "memset node: the destination is not inside a device or pinned host allocation",
        ));
    }
    Ok(Memset {
        dst: params.dst as usize,
        element,
        value: params.value,
        width: params.width,
        height: params.height,
        pitch: params.pitch,
    })
}

impl Memset {
    pub fn to_abi(&self) -> MemsetParams {
        MemsetParams {
            dst: self.dst as *mut c_void,
            element_size: self.element as u32,
            height: self.height,
            pitch: self.pitch,
            value: self.value,
            width: self.width,
        }
    }
}

pub fn host(params: &HostNodeParams) -> HipResult<HostCall> {
    let Some(function) = params.function else {
        return Err(bad("host node: fn is null"));
    };
    Ok(HostCall {
        function,
        user_data: params.user_data as usize,
    })
}

/// Adds a node doing `params` to `graph` after `deps` (nodes of `graph`, each once).
pub fn add_node(graph: &Graph, deps: &[*mut c_void], params: NodeParams) -> HipResult<*mut c_void> {
    // The child graph is copied (later changes to the program's graph do not reach it)
    // before `graph` is locked: it may be `graph` itself.
    let params = match params {
        NodeParams::Child(child) => NodeParams::Child(clone_graph(&child, true)?),
        other => other,
    };
    let mut body = graph.body.lock();
    let mut from = Vec::with_capacity(deps.len());
    for &dep in deps {
        let dep = dep as usize;
        if !body.nodes.iter().any(|n| n.handle == dep) {
            return Err(bad("graph node dependency is not a node of the graph"));
        }
        if from.contains(&dep) {
            return Err(bad("graph node dependency given twice"));
        }
        from.push(dep);
    }
    let handle = NODES.insert_with(|handle| {
        Ok(Arc::new(Node {
            handle,
            graph: graph.handle,
            params: Mutex::new(params),
        }))
    })?;
    body.nodes.push(NODES.get(handle)?);
    body.edges.extend(from.into_iter().map(|f| (f, handle)));
    Ok(handle as *mut c_void)
}

/// The node `handle` names, if it belongs to `graph`.
fn node_of(graph: &Graph, handle: *mut c_void) -> HipResult<Arc<Node>> {
    let node = node(handle)?;
    if node.graph != graph.handle {
        return Err(bad("the node belongs to another graph"));
    }
    Ok(node)
}

/// Whether `to` is reachable from `from` along `edges`.
fn reaches(edges: &[(usize, usize)], from: usize, to: usize) -> bool {
    let mut seen = vec![from];
    let mut stack = vec![from];
    while let Some(at) = stack.pop() {
        if at == to {
            return true;
        }
        for &(a, b) in edges {
            if a == at && !seen.contains(&b) {
                seen.push(b);
                stack.push(b);
            }
        }
    }
    false
}

/// `hipGraphAddDependencies`: every edge is checked (both nodes in `graph`, not there yet, no
/// cycle) before any is added.
pub fn add_dependencies(graph: &Graph, from: &[*mut c_void], to: &[*mut c_void]) -> HipResult {
    let pairs = from
        .iter()
        .zip(to)
        .map(|(&f, &t)| Ok((node_of(graph, f)?.handle, node_of(graph, t)?.handle)))
        .collect::<HipResult<Vec<_>>>()?;
    let mut body = graph.body.lock();
    let mut edges = body.edges.clone();
    for (f, t) in pairs {
        if f == t || edges.contains(&(f, t)) {
            return Err(bad(
                "hipGraphAddDependencies: a self edge or an edge already there",
            ));
        }
        if reaches(&edges, t, f) {
            return Err(bad("hipGraphAddDependencies: the edge would make a cycle"));
        }
        edges.push((f, t));
    }
    body.edges = edges;
    Ok(())
}

/// `hipGraphRemoveDependencies`: every edge must exist.
pub fn remove_dependencies(graph: &Graph, from: &[*mut c_void], to: &[*mut c_void]) -> HipResult {
    let pairs = from
        .iter()
        .zip(to)
        .map(|(&f, &t)| Ok((node_of(graph, f)?.handle, node_of(graph, t)?.handle)))
        .collect::<HipResult<Vec<_>>>()?;
    let mut body = graph.body.lock();
    let mut edges = body.edges.clone();
    for pair in pairs {
        let Some(at) = edges.iter().position(|e| *e == pair) else {
            return Err(bad("hipGraphRemoveDependencies: no such edge"));
        };
        edges.remove(at);
    }
    body.edges = edges;
    Ok(())
}

/// `hipGraphDestroyNode`: the node and its edges.
pub fn destroy_node(handle: *mut c_void) -> HipResult {
    let node = node(handle)?;
    let graph = GRAPHS
        .get(node.graph)
        .map_err(|_| HipError::INVALID_VALUE)?;
    let mut body = graph.body.lock();
    body.nodes.retain(|n| n.handle != node.handle);
    body.edges
        .retain(|&(f, t)| f != node.handle && t != node.handle);
    drop(body);
    release_node(&node);
    Ok(())
}

pub fn nodes(graph: &Graph) -> Vec<usize> {
    graph.body.lock().nodes.iter().map(|n| n.handle).collect()
}

pub fn root_nodes(graph: &Graph) -> Vec<usize> {
    let body = graph.body.lock();
    body.nodes
        .iter()
        .map(|n| n.handle)
        .filter(|&h| !body.edges.iter().any(|&(_, t)| t == h))
        .collect()
}

pub fn edges(graph: &Graph) -> Vec<(usize, usize)> {
    graph.body.lock().edges.clone()
}

fn owner(node: &Node) -> HipResult<Arc<Graph>> {
    GRAPHS.get(node.graph).map_err(|_| HipError::INVALID_VALUE)
}

pub fn dependencies(node: &Node) -> HipResult<Vec<usize>> {
    let graph = owner(node)?;
    let body = graph.body.lock();
    Ok(body
        .edges
        .iter()
        .filter(|&&(_, t)| t == node.handle)
        .map(|&(f, _)| f)
        .collect())
}

pub fn dependents(node: &Node) -> HipResult<Vec<usize>> {
    let graph = owner(node)?;
    let body = graph.body.lock();
    Ok(body
        .edges
        .iter()
        .filter(|&&(f, _)| f == node.handle)
        .map(|&(_, t)| t)
        .collect())
}

/// Replaces the parameters of a node of the type `type_code` (`hipGraph*NodeSetParams`). A
/// kernel node keeps its attributes; memory alloc and free nodes cannot change.
pub fn set_params(node: &Node, params: NodeParams) -> HipResult {
    let mut current = node.params.lock();
    if current.type_code() != params.type_code() {
        return Err(bad("graph node parameters of another node type"));
    }
    let mut params = params;
    match (&*current, &mut params) {
        (NodeParams::Kernel(old), NodeParams::Kernel(new)) => new.attrs = old.attrs,
        (NodeParams::MemAlloc(_) | NodeParams::MemFree(_), _) => {
            return Err(bad("memory alloc and free nodes cannot change"))
        }
        (NodeParams::Child(_), _) => {
            return Err(bad(
                "a child-graph node's graph cannot be replaced in the graph",
            ))
        }
        _ => {}
    }
    *current = params;
    Ok(())
}

/// Changes a kernel node's attribute through `f`.
pub fn update_kernel_attrs(
    node: &Node,
    f: impl FnOnce(&mut KernelAttrs) -> HipResult,
) -> HipResult {
    match &mut *node.params.lock() {
        NodeParams::Kernel(k) => f(&mut k.attrs),
        _ => Err(bad("not a kernel node")),
    }
}

/// `hipGraphRetainUserObject`.
pub fn retain_user_object(
    graph: &Graph,
    object: Arc<user_object::UserObject>,
    count: u32,
    flags: u32,
) -> HipResult {
    graph.body.lock().user_objects.retain(object, count, flags)
}

/// `hipGraphReleaseUserObject`.
pub fn release_user_object(
    graph: &Graph,
    object: &Arc<user_object::UserObject>,
    count: u32,
) -> HipResult {
    graph.body.lock().user_objects.release(object, count)
}

/// The user object references of `graph` and of its child graphs, retained once more (for an
/// executable graph made from it).
pub fn user_objects(graph: &Graph) -> user_object::Owned {
    let body = graph.body.lock();
    let mut owned = body.user_objects.duplicate();
    for node in &body.nodes {
        if let NodeParams::Child(child) = node.params() {
            owned.absorb(user_objects(&child));
        }
    }
    owned
}

/// `hipGraphClone`: a graph with a copy of every node and edge; child graphs are copied too.
pub fn clone(graph: &Graph) -> HipResult<*mut c_void> {
    clone_graph(graph, false).map(|g| g.handle as *mut c_void)
}

fn clone_graph(original: &Graph, embedded: bool) -> HipResult<Arc<Graph>> {
    let copy = new_graph(embedded);
    let body = original.body.lock();
    let mut map = HashMap::with_capacity(body.nodes.len());
    let mut nodes = Vec::with_capacity(body.nodes.len());
    for node in &body.nodes {
        let params = match node.params() {
            NodeParams::Child(child) => NodeParams::Child(clone_graph(&child, true)?),
            other => other,
        };
        let handle = NODES.insert_with(|handle| {
            Ok(Arc::new(Node {
                handle,
                graph: copy.handle,
                params: Mutex::new(params),
            }))
        })?;
        map.insert(node.handle, handle);
        nodes.push(NODES.get(handle)?);
    }
    let edges = body.edges.iter().map(|(f, t)| (map[f], map[t])).collect();
    let user_objects = body.user_objects.duplicate();
    drop(body);
    *copy.body.lock() = Body {
        nodes,
        edges,
        clone_of: map,
        user_objects,
    };
    Ok(copy)
}

/// `hipGraphNodeFindInClone`: the copy in `clone` of `original`.
pub fn find_in_clone(original: *mut c_void, clone: &Graph) -> HipResult<*mut c_void> {
    let original = node(original)?;
    clone
        .body
        .lock()
        .clone_of
        .get(&original.handle)
        .map(|&h| h as *mut c_void)
        .ok_or_else(|| bad("hipGraphNodeFindInClone: the node has no copy in that graph"))
}

/// `hipGraphChildGraphNodeGetGraph`.
pub fn child_graph(node: &Node) -> HipResult<*mut c_void> {
    match &*node.params.lock() {
        NodeParams::Child(child) => Ok(child.handle as *mut c_void),
        _ => Err(bad("not a child-graph node")),
    }
}

/// Writes what a `hipGraphGet*` call returns: with no output array, the count; else up to
/// `*count` entries (the rest of the array null) and the number written.
///
/// # Safety
/// `out`, if not null, has room for `*count` entries.
pub unsafe fn write_list(items: &[usize], out: *mut *mut c_void, count: &mut usize) {
    if out.is_null() {
        *count = items.len();
        return;
    }
    for i in 0..*count {
        let value = items.get(i).copied().unwrap_or(0);
        // SAFETY: the caller's contract: room for `*count` entries.
        unsafe { out.add(i).write(value as *mut c_void) };
    }
    *count = (*count).min(items.len());
}

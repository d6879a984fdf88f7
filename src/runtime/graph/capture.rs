//! Stream capture (`hipStreamBeginCapture` .. `hipStreamEndCapture`): while a stream
//! captures, the work enqueued on it becomes nodes of a graph instead of running. Each
//! capturing stream has a list of *capture dependencies* (the nodes its next operation comes
//! after); an event recorded on a capturing stream remembers that list, so that a stream
//! waiting on it joins the capture (a fork) or adds it to its own list (a join).
//!
//! The state lives here, in side tables keyed by the stream's serial and the event's address;
//! the stream itself only carries the `capturing` flag the launch path reads. The calls that
//! capture reach this module from their API shells (`api/`), and a kernel launch through the
//! hook `launch::CAPTURE_KERNEL` set here, so the modules below graphs never name it.

use super::{add_node, new_graph, reaches, release, Graph, NodeParams};
use crate::error::{HipError, HipResult};
use crate::runtime::base::compat::{self, Abi};
use crate::runtime::devices::device::Device;
use crate::runtime::launch::{self, CapturedKernel};
use crate::runtime::ordering::{Stream, StreamRef};
use crate::runtime::stream::event::Event;
use parking_lot::Mutex;
use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// `hipStreamCaptureMode`.
pub const MODE_GLOBAL: u32 = 0;
pub const MODE_THREAD_LOCAL: u32 = 1;
pub const MODE_RELAXED: u32 = 2;

/// `hipStreamCaptureStatus`.
pub const STATUS_NONE: u32 = 0;
pub const STATUS_ACTIVE: u32 = 1;
pub const STATUS_INVALIDATED: u32 = 2;

/// Captures in progress: while 0, the operations that are not the launch path skip the
/// lookup of their stream's capture with one load (the stream module's counter, which the
/// null stream's operations read too).
use crate::runtime::stream::ACTIVE_CAPTURES as ACTIVE;
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

struct Capture {
    id: u64,
    graph: Arc<Graph>,
    mode: u32,
    thread: std::thread::ThreadId,
    /// The stream that began it (the one `hipStreamEndCapture` must name).
    origin: u64,
    invalidated: bool,
    /// Began by `hipStreamBeginCaptureToGraph`: the graph is the program's, never released
    /// here.
    into_existing: bool,
}

struct Member {
    capture: Arc<Mutex<Capture>>,
    /// The stream, kept alive to clear its flag when the capture ends (a stream destroyed
    /// while capturing stays in the capture until it ends).
    stream: Arc<Stream>,
    deps: Vec<usize>,
}

#[derive(Default)]
struct Tables {
    /// By stream serial.
    members: HashMap<u64, Member>,
    /// By event address: the capture and the dependencies recorded into it.
    events: HashMap<usize, (Arc<Mutex<Capture>>, Vec<usize>)>,
}

static TABLES: Mutex<Option<Tables>> = Mutex::new(None);

thread_local! {
    /// `hipThreadExchangeStreamCaptureMode`'s per-thread mode.
    static THREAD_MODE: Cell<u32> = const { Cell::new(MODE_GLOBAL) };
    /// Captures in global or thread-local mode this thread began and has not ended.
    static OWN_STRICT: Cell<usize> = const { Cell::new(0) };
}

/// Global-mode captures in progress (any thread).
static GLOBAL_STRICT: AtomicUsize = AtomicUsize::new(0);

fn with_tables<R>(f: impl FnOnce(&mut Tables) -> R) -> R {
    let mut guard = TABLES.lock();
    f(guard.get_or_insert_with(Tables::default))
}

/// `hipStreamBeginCapture`.
pub fn begin(stream: &StreamRef<'_>, mode: u32) -> HipResult {
    begin_into(stream, mode, None, &[])
}

/// `hipStreamBeginCaptureToGraph`: the capture adds to `graph`, its first operation after
/// `deps` (nodes of `graph`).
pub fn begin_to_graph(
    stream: &StreamRef<'_>,
    mode: u32,
    graph: Arc<Graph>,
    deps: &[*mut c_void],
) -> HipResult {
    let mut checked = Vec::with_capacity(deps.len());
    for &dep in deps {
        let node = super::node_of(&graph, dep)?;
        if !checked.contains(&node.handle) {
            checked.push(node.handle);
        }
    }
    begin_into(stream, mode, Some(graph), &checked)
}

fn begin_into(
    stream: &StreamRef<'_>,
    mode: u32,
    graph: Option<Arc<Graph>>,
    deps: &[usize],
) -> HipResult {
    if mode > MODE_RELAXED {
        tracing::warn!(mode, "hipStreamBeginCapture: unknown mode");
        return Err(HipError::INVALID_VALUE);
    }
    let StreamRef::Shared(stream) = stream else {
        tracing::warn!("hipStreamBeginCapture: the null stream cannot be captured");
        return Err(HipError::STREAM_CAPTURE_UNSUPPORTED);
    };
    let _ = launch::CAPTURE_KERNEL.set(capture_kernel);
    let _ = crate::runtime::stream::NULL_STREAM_DURING_CAPTURE.set(null_stream_use);
    let _ = crate::runtime::stream::ON_CAPTURING_STREAM_DESTROYED.set(stream_destroyed);
    with_tables(|t| {
        if t.members.contains_key(&stream.serial) {
            tracing::warn!("hipStreamBeginCapture: the stream is already capturing");
            return Err(HipError::ILLEGAL_STATE);
        }
        let capture = Capture {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            into_existing: graph.is_some(),
            graph: graph.unwrap_or_else(|| new_graph(false)),
            mode,
            thread: std::thread::current().id(),
            origin: stream.serial,
            invalidated: false,
        };
        join(t, stream, Arc::new(Mutex::new(capture)), deps.to_vec());
        Ok(())
    })?;
    ACTIVE.fetch_add(1, Ordering::Relaxed);
    match mode {
        MODE_GLOBAL => {
            GLOBAL_STRICT.fetch_add(1, Ordering::Relaxed);
            OWN_STRICT.with(|n| n.set(n.get() + 1));
        }
        MODE_THREAD_LOCAL => OWN_STRICT.with(|n| n.set(n.get() + 1)),
        _ => {}
    }
    Ok(())
}

fn join(t: &mut Tables, stream: &Arc<Stream>, capture: Arc<Mutex<Capture>>, deps: Vec<usize>) {
    stream.capturing.store(true, Ordering::Relaxed);
    t.members.insert(
        stream.serial,
        Member {
            capture,
            stream: stream.clone(),
            deps,
        },
    );
}

/// `launch::CAPTURE_KERNEL`: a launch on a capturing stream becomes a kernel node.
fn capture_kernel(stream: &Stream, kernel: CapturedKernel) -> HipResult {
    let node = super::captured_kernel(
        kernel.function,
        kernel.grid,
        kernel.block,
        kernel.shared_mem,
        kernel.args,
        kernel.layout,
    );
    add(stream, || Ok(NodeParams::Kernel(node))).map(drop)
}

/// `hipStreamEndCapture`: the captured graph's handle.
pub fn end(stream: &Stream) -> HipResult<*mut c_void> {
    let capture = with_tables(|t| {
        let member = t.members.get(&stream.serial).ok_or_else(|| {
            tracing::warn!("hipStreamEndCapture: the stream is not capturing");
            HipError::ILLEGAL_STATE
        })?;
        let capture = member.capture.clone();
        {
            let c = capture.lock();
            if c.origin != stream.serial {
                tracing::warn!("hipStreamEndCapture: the capture began on another stream");
                return Err(HipError::STREAM_CAPTURE_UNMATCHED);
            }
            if c.mode != MODE_RELAXED && c.thread != std::thread::current().id() {
                return Err(HipError::STREAM_CAPTURE_WRONG_THREAD);
            }
        }
        let origin_deps = member.deps.clone();
        // Every stream of the capture leaves it; the others' capture dependencies must be
        // ones the origin's work comes after (they rejoined it).
        let forked_deps = leave_all(t, &capture, stream.serial);
        Ok((capture, origin_deps, forked_deps))
    })?;
    let (capture, origin_deps, forked_deps) = capture;
    let c = capture.lock();
    retire(&c);
    let fail = |error| {
        if !c.into_existing {
            release(&c.graph);
        }
        Err(error)
    };
    if c.invalidated {
        return fail(HipError::STREAM_CAPTURE_INVALIDATED);
    }
    let edges = super::edges(&c.graph);
    let joined = |d: &usize| {
        origin_deps
            .iter()
            .any(|&o| o == *d || reaches(&edges, *d, o))
    };
    if !forked_deps.iter().all(joined) {
        tracing::warn!("hipStreamEndCapture: a forked stream did not rejoin the origin");
        return fail(HipError::STREAM_CAPTURE_UNJOINED);
    }
    Ok(c.graph.handle as *mut c_void)
}

/// `hipStreamGetCaptureInfo`: the status and, if capturing, the capture's id.
pub fn info(stream: &Stream) -> (u32, u64) {
    if !stream.capturing.load(Ordering::Relaxed) {
        return (STATUS_NONE, 0);
    }
    with_tables(|t| match t.members.get(&stream.serial) {
        None => (STATUS_NONE, 0),
        Some(m) => {
            let c = m.capture.lock();
            let status = if c.invalidated {
                STATUS_INVALIDATED
            } else {
                STATUS_ACTIVE
            };
            (status, c.id)
        }
    })
}

/// What `hipStreamGetCaptureInfo_v2` reports of a capturing stream.
pub struct InfoV2 {
    pub status: u32,
    pub id: u64,
    pub graph: usize,
    /// The stream's capture dependencies: the array stays where it is until the stream's
    /// next capture call (CUDA's promise for the pointer it returns).
    pub deps: *const usize,
    pub count: usize,
}

/// `hipStreamGetCaptureInfo_v2`: `None` if the stream is not capturing.
pub fn info_v2(stream: &Stream) -> Option<InfoV2> {
    if !stream.capturing.load(Ordering::Relaxed) {
        return None;
    }
    with_tables(|t| {
        let m = t.members.get(&stream.serial)?;
        let c = m.capture.lock();
        Some(InfoV2 {
            status: if c.invalidated {
                STATUS_INVALIDATED
            } else {
                STATUS_ACTIVE
            },
            id: c.id,
            graph: c.graph.handle,
            deps: m.deps.as_ptr(),
            count: m.deps.len(),
        })
    })
}

/// `hipStreamUpdateCaptureDependencies` flags.
pub const ADD_DEPENDENCIES: u32 = 0;
pub const SET_DEPENDENCIES: u32 = 1;

/// `hipStreamUpdateCaptureDependencies`: adds `nodes` (of the capture's graph) to the
/// stream's capture dependencies, or makes them the whole set.
pub fn update_dependencies(stream: &Stream, nodes: &[*mut c_void], flags: u32) -> HipResult {
    if flags > SET_DEPENDENCIES {
        tracing::warn!(flags, "hipStreamUpdateCaptureDependencies: unknown flags");
        return Err(HipError::INVALID_VALUE);
    }
    let capture = with_tables(|t| t.members.get(&stream.serial).map(|m| m.capture.clone()));
    let Some(capture) = capture else {
        tracing::warn!("hipStreamUpdateCaptureDependencies: the stream is not capturing");
        return Err(HipError::ILLEGAL_STATE);
    };
    let graph = {
        let c = capture.lock();
        if c.invalidated {
            return Err(HipError::STREAM_CAPTURE_INVALIDATED);
        }
        c.graph.clone()
    };
    let mut handles = Vec::with_capacity(nodes.len());
    for &node in nodes {
        handles.push(super::node_of(&graph, node)?.handle);
    }
    with_tables(|t| {
        let Some(m) = t.members.get_mut(&stream.serial) else {
            return Err(HipError::ILLEGAL_STATE);
        };
        if flags == SET_DEPENDENCIES {
            m.deps.clear();
        }
        for h in handles {
            if !m.deps.contains(&h) {
                m.deps.push(h);
            }
        }
        Ok(())
    })
}

/// `hipThreadExchangeStreamCaptureMode`.
pub fn exchange_mode(mode: u32) -> HipResult<u32> {
    if mode > MODE_RELAXED {
        return Err(HipError::INVALID_VALUE);
    }
    Ok(THREAD_MODE.with(|m| m.replace(mode)))
}

/// Adds `params` to the capture `stream` takes part in, after its capture dependencies, which
/// become the new node. `Ok(false)` if the stream is not capturing.
pub fn add(stream: &Stream, params: impl FnOnce() -> HipResult<NodeParams>) -> HipResult<bool> {
    if !stream.capturing.load(Ordering::Relaxed) {
        return Ok(false);
    }
    let (capture, deps) = match with_tables(|t| {
        t.members
            .get(&stream.serial)
            .map(|m| (m.capture.clone(), m.deps.clone()))
    }) {
        Some(found) => found,
        None => return Ok(false),
    };
    let graph = {
        let c = capture.lock();
        if c.invalidated {
            return Err(HipError::STREAM_CAPTURE_INVALIDATED);
        }
        c.graph.clone()
    };
    let params = match params() {
        Ok(p) => p,
        Err(e) => {
            capture.lock().invalidated = true;
            return Err(e);
        }
    };
    let deps: Vec<*mut c_void> = deps.iter().map(|&d| d as *mut c_void).collect();
    let node = add_node(&graph, &deps, params)?;
    with_tables(|t| {
        if let Some(m) = t.members.get_mut(&stream.serial) {
            m.deps = vec![node as usize];
        }
    });
    Ok(true)
}

/// Like [`add`] for a stream (of one of `devices`) given by handle, for the calls that are not
/// the launch path: one load while no capture is in progress.
pub fn add_on(
    devices: &[Device],
    stream: *mut c_void,
    params: impl FnOnce() -> HipResult<NodeParams>,
) -> HipResult<bool> {
    if ACTIVE.load(Ordering::Relaxed) == 0 {
        return Ok(false);
    }
    let (_, stream) = crate::runtime::stream::lookup(devices, stream)?;
    add(&stream, params)
}

/// `hipEventRecord` on a capturing stream: the event remembers the stream's capture
/// dependencies (no work is recorded). `Ok(false)` if the stream is not capturing.
pub fn record(event: &Event, stream: &Stream) -> HipResult<bool> {
    if !stream.capturing.load(Ordering::Relaxed) {
        return Ok(false);
    }
    with_tables(|t| {
        let Some(m) = t.members.get(&stream.serial) else {
            return Ok(false);
        };
        let entry = (m.capture.clone(), m.deps.clone());
        t.events.insert(event as *const Event as usize, entry);
        Ok(true)
    })
}

/// `hipStreamWaitEvent` on an event recorded in a capture: the stream joins the capture (a
/// fork) or adds the event's dependencies to its own (a join). `Ok(false)` if the event was
/// not recorded in a capture.
pub fn wait(stream: &StreamRef<'_>, event: &Event) -> HipResult<bool> {
    if ACTIVE.load(Ordering::Relaxed) == 0 {
        return Ok(false);
    }
    with_tables(|t| {
        let Some((capture, deps)) = t.events.get(&(event as *const Event as usize)).cloned() else {
            if let Some(m) = t.members.get(&stream.serial) {
                // CUDA's rule: a capture may not wait for work outside it.
                tracing::warn!("hipStreamWaitEvent: a capturing stream waits for an event recorded outside the capture");
                m.capture.lock().invalidated = true;
                return Err(HipError::STREAM_CAPTURE_ISOLATION);
            }
            return Ok(false);
        };
        match t.members.get_mut(&stream.serial) {
            Some(m) if Arc::ptr_eq(&m.capture, &capture) => {
                for d in deps {
                    if !m.deps.contains(&d) {
                        m.deps.push(d);
                    }
                }
                Ok(true)
            }
            Some(_) => {
                tracing::warn!("hipStreamWaitEvent: the event belongs to another capture");
                Err(HipError::STREAM_CAPTURE_ISOLATION)
            }
            None => match stream {
                StreamRef::Shared(stream) => {
                    join(t, stream, capture, deps);
                    Ok(true)
                }
                StreamRef::Borrowed(_) => {
                    tracing::warn!("hipStreamWaitEvent: the null stream cannot join a capture");
                    capture.lock().invalidated = true;
                    Err(HipError::STREAM_CAPTURE_IMPLICIT)
                }
            },
        }
    })
}

/// Every stream of `capture` leaves it; returns the capture dependencies of those other than
/// `origin`.
fn leave_all(t: &mut Tables, capture: &Arc<Mutex<Capture>>, origin: u64) -> Vec<usize> {
    let serials: Vec<u64> = t
        .members
        .iter()
        .filter(|(_, m)| Arc::ptr_eq(&m.capture, capture))
        .map(|(&s, _)| s)
        .collect();
    let mut forked_deps = Vec::new();
    for serial in serials {
        if let Some(m) = t.members.remove(&serial) {
            m.stream.capturing.store(false, Ordering::Relaxed);
            if serial != origin {
                forked_deps.extend(m.deps);
            }
        }
    }
    t.events.retain(|_, (c, _)| !Arc::ptr_eq(c, capture));
    forked_deps
}

/// A capture is over: it no longer counts as in progress, nor against unsafe calls (the
/// thread that began it keeps a count of its own strict captures, which only it can lower).
fn retire(c: &Capture) {
    ACTIVE.fetch_sub(1, Ordering::Relaxed);
    let own = c.thread == std::thread::current().id();
    match c.mode {
        MODE_GLOBAL => {
            GLOBAL_STRICT.fetch_sub(1, Ordering::Relaxed);
            if own {
                OWN_STRICT.with(|n| n.set(n.get().saturating_sub(1)));
            }
        }
        MODE_THREAD_LOCAL if own => OWN_STRICT.with(|n| n.set(n.get().saturating_sub(1))),
        _ => {}
    }
}

/// `stream::ON_CAPTURING_STREAM_DESTROYED`: a stream destroyed while it captures. The capture
/// it began ends there, its graph released (AMD's runtime drops it: later calls see no
/// capture in progress, and `hipStreamEndCapture` on the dead handle fails as any call on a
/// dead stream does); a forked stream leaves its capture, which is invalidated.
fn stream_destroyed(stream: &Stream) {
    let ended = with_tables(|t| {
        let capture = t.members.get(&stream.serial)?.capture.clone();
        if capture.lock().origin != stream.serial {
            t.members.remove(&stream.serial);
            stream.capturing.store(false, Ordering::Relaxed);
            capture.lock().invalidated = true;
            return None;
        }
        leave_all(t, &capture, stream.serial);
        Some(capture)
    });
    if let Some(capture) = ended {
        tracing::warn!("a capturing stream was destroyed: its capture ends unfinished");
        let c = capture.lock();
        retire(&c);
        if !c.into_existing {
            release(&c.graph);
        }
    }
}

/// `stream::NULL_STREAM_DURING_CAPTURE`: an operation on `device`'s null stream would
/// synchronise with every blocking stream of the device, which a capturing one cannot do:
/// their captures are invalidated and the operation fails with
/// `hipErrorStreamCaptureImplicit` (CUDA's rule). Non-blocking streams may capture meanwhile.
fn null_stream_use(device: &crate::runtime::devices::device::Device) -> HipResult {
    let hit = with_tables(|t| {
        let mut hit = false;
        for m in t.members.values() {
            if m.stream.device == device.index && m.stream.is_blocking() {
                m.capture.lock().invalidated = true;
                hit = true;
            }
        }
        hit
    });
    if hit {
        tracing::warn!(
            device = device.index,
            "null-stream work while a blocking stream is capturing: the capture is invalidated"
        );
        return Err(HipError::STREAM_CAPTURE_IMPLICIT);
    }
    Ok(())
}

/// For a call not allowed on a capturing stream (`hipStreamSynchronize`, `hipStreamQuery`):
/// invalidates the capture and fails.
pub fn refuse_if_capturing(stream: &Stream, call: &str) -> HipResult {
    if !stream.capturing.load(Ordering::Relaxed) {
        return Ok(());
    }
    let capture = with_tables(|t| t.members.get(&stream.serial).map(|m| m.capture.clone()));
    if let Some(capture) = capture {
        tracing::warn!("{call} on a capturing stream: the capture is invalidated");
        capture.lock().invalidated = true;
        return Err(HipError::STREAM_CAPTURE_UNSUPPORTED);
    }
    Ok(())
}

/// For a device-wide synchronisation (`hipDeviceSynchronize`): not allowed while a capture
/// in global mode (any thread) or thread-local mode (this thread) is in progress, unless this
/// thread chose relaxed mode (`hipThreadExchangeStreamCaptureMode`). Invalidates those
/// captures.
pub fn refuse_unsafe_call(call: &str) -> HipResult {
    if ACTIVE.load(Ordering::Relaxed) == 0 || THREAD_MODE.with(Cell::get) == MODE_RELAXED {
        return Ok(());
    }
    let own = OWN_STRICT.with(Cell::get);
    if GLOBAL_STRICT.load(Ordering::Relaxed) == 0 && own == 0 {
        return Ok(());
    }
    let me = std::thread::current().id();
    with_tables(|t| {
        for m in t.members.values() {
            let mut c = m.capture.lock();
            if c.mode == MODE_GLOBAL || (c.mode == MODE_THREAD_LOCAL && c.thread == me) {
                c.invalidated = true;
            }
        }
    });
    tracing::warn!("{call} during a stream capture: the capture is invalidated");
    Err(HipError::STREAM_CAPTURE_UNSUPPORTED)
}

/// For a call ROCm 7 refuses during a stream capture (AMD's 7.0 change, CUDA's rule) and
/// earlier ABIs allow: `hipMallocManaged`, `hipMemAdvise`, `hipMemPoolCreate`/`Destroy`,
/// `hipDeviceSetMemPool`, `hipDevice/CtxSet{Cache,SharedMem}Config`, `hipEventQuery`. Under
/// ROCm 7 it fails (and invalidates the capture) as [`refuse_unsafe_call`] says: while
/// a global-mode capture, or a thread-local one of this thread, is in progress, unless this
/// thread chose relaxed mode.
pub fn refuse_unsafe_call_from_rocm7(call: &str) -> HipResult {
    if compat::abi() >= Abi::Rocm7 {
        refuse_unsafe_call(call)
    } else {
        Ok(())
    }
}

/// [`refuse_if_capturing`] for a stream (of one of `devices`) given by handle: one load while
/// no capture is in progress.
/// Inlined into idle `hipStreamSynchronize` and `hipStreamQuery` (benchmarked): out of line,
/// the slow path's register saves cost four times the check.
#[inline(always)]
pub fn refuse_on(devices: &[Device], stream: *mut c_void, call: &str) -> HipResult {
    if ACTIVE.load(Ordering::Relaxed) == 0 {
        return Ok(());
    }
    refuse_on_while_capturing(devices, stream, call)
}

#[cold]
#[inline(never)]
fn refuse_on_while_capturing(devices: &[Device], stream: *mut c_void, call: &str) -> HipResult {
    let (_, stream) = crate::runtime::stream::lookup(devices, stream)?;
    refuse_if_capturing(&stream, call)
}

//! Live recording: the hooks the runtime calls, per-thread buffers, and writing the trace and
//! the stats when the process exits. The HSA layer below reaches this recorder only through
//! the trace probe (`crate::probe`), where it installs itself as the sink when recording
//! starts; the flag, the clock and the HSA call counts live there too.
//!
//! ## Cost when off
//! Every hook is behind [`recording`], one relaxed load of a process-wide flag set once at
//! start-up. With `HIPSHIM_TRACE` and `HIPSHIM_STATS` unset nothing else runs: no clock read,
//! no allocation, no formatting.
//!
//! ## Buffers
//! Each thread records into its own buffer (a mutex only that thread takes while running, and
//! the exit hook once), registered in a global list the first time the thread records. HSA
//! call counts are per-thread atomics in the probe, outside that mutex, because the recorder
//! itself calls the HSA runtime (to read completion timestamps) while holding its buffer.
//! Without a trace (`HIPSHIM_STATS` alone) a buffer keeps no events: each is added to the
//! thread's [`Tally`] (the same code `summarize` runs over a trace), packets and copies once
//! their times are read, and the exit hook merges the threads' tallies. So a long run with
//! stats on holds a row per function, queue and engine, not an event per call.
//!
//! ## Per-packet completion times
//! A stream's kernels share one counting completion signal (see `runtime/ordering/`), which
//! cannot say when each one ended. While recording, a `Reservation` (`hsa/queue.rs`) takes
//! two slots per packet: the packet itself, carrying a signal of the recorder's own (recycled
//! per thread), and a barrier-AND packet (barrier bit set, no dependencies) carrying the packet's original
//! completion signal. The barrier completes right after the packet, so the stream's counter,
//! markers and events see the same completions as without tracing, a few microseconds later.
//! The extra packet is in the trace as a `trace_barrier` slice and counted apart in the stats.
//! The recorder reads each signal's start/end with `hsa_amd_profiling_get_dispatch_time` once
//! it reads 0 (checked when the thread publishes its next packet, and at exit), then reuses it.
//!
//! ## Clocks
//! Host times are `CLOCK_MONOTONIC` nanoseconds minus the moment recording started. Device
//! timestamps are in the HSA system timestamp domain (`HSA_SYSTEM_INFO_TIMESTAMP`, frequency
//! `HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY`; ROCr converts GPU ticks into it in the profiling
//! calls; hsasim uses `CLOCK_MONOTONIC` ns directly). At start-up the recorder reads the HSA
//! timestamp between two host clock reads five times and keeps the offset of the tightest
//! pair: `host_ns = ticks * 1e9 / frequency + offset`. The bracket width (the alignment's
//! uncertainty) is written into the trace.
//!
//! ## Exit
//! The trace and the stats are written by an `atexit` handler registered right after the HSA
//! runtime was loaded and initialised: handlers run in reverse order of registration, so ours
//! runs before the destructors ROCr registered while loading, while the runtime can still
//! answer. A program that exits without synchronising gets a valid trace; what had not
//! completed is marked incomplete and drawn up to the exit.

use super::json::{write_trace, TraceInfo};
use super::stats::Tally;
use super::*;
use crate::config::{Config, OutputFormat, StatsOutput};
use crate::hsa::signal::PooledSignal;
use crate::hsa::HsaApi;
pub use crate::probe::now_ns;
use crate::probe::{self, Published};
use hsa_abi::*;
use parking_lot::Mutex;
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::ffi::c_void;
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;

static FINISHED: AtomicBool = AtomicBool::new(false);
/// Whether what is recorded is kept as events: only for the trace (`HIPSHIM_TRACE`), which
/// draws every call, packet, copy and wait. The stats alone need totals: each thread adds its
/// events to a [`Tally`] as they complete and keeps none, so a long run with `HIPSHIM_STATS`
/// grows with the functions, queues and engines it used, not with its number of calls.
static KEEP_EVENTS: AtomicBool = AtomicBool::new(false);

static EPOCH: AtomicU64 = AtomicU64::new(0);

/// Host time since recording started.
fn rel(host_ns: u64) -> u64 {
    host_ns.saturating_sub(EPOCH.load(Ordering::Relaxed))
}

/// Where the results go, decided at start-up.
struct Output {
    trace: Option<(PathBuf, File)>,
    stats: StatsOutput,
    stats_format: OutputFormat,
    stats_file: Option<File>,
}

static OUTPUT: Mutex<Option<Output>> = Mutex::new(None);

/// The HSA runtime in use, once loaded.
struct Attached {
    api: &'static HsaApi,
    hz: u64,
    /// host ns = device ns + offset.
    offset_ns: i128,
    clock: String,
    /// The runtime is hsasim on its virtual clock.
    virtual_time: bool,
}

static ATTACHED: OnceLock<Attached> = OnceLock::new();

/// Starts recording if the configuration asks for a trace or stats. Must run before the HSA
/// runtime is loaded (HSA calls are counted through wrappers installed at load time).
pub fn init(config: &Config) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| start(config));
}

fn start(config: &Config) {
    let trace = config.trace.as_ref().and_then(|path| {
        // The trace is written beside its path and renamed onto it when complete, so a process
        // killed at any moment leaves the path as it was (absent, or an earlier whole trace),
        // never half a trace. Opened now so an unwritable place is said at start-up.
        let partial = partial_trace_path(path);
        match File::create(&partial) {
            Ok(file) => Some((path.clone(), file)),
            Err(e) => {
                eprintln!(
                    "hipshim: cannot write the trace file HIPSHIM_TRACE={}: {e}; tracing is disabled",
                    path.display()
                );
                None
            }
        }
    });
    let mut stats = config.stats.clone();
    let stats_file = match &stats {
        StatsOutput::File(path) => match File::create(path) {
            Ok(f) => Some(f),
            Err(e) => {
                eprintln!(
                    "hipshim: cannot write the stats file HIPSHIM_STATS={}: {e}; printing the stats on stderr instead",
                    path.display()
                );
                stats = StatsOutput::Stderr;
                None
            }
        },
        _ => None,
    };
    if trace.is_none() && stats == StatsOutput::Off {
        return;
    }
    KEEP_EVENTS.store(trace.is_some(), Ordering::Relaxed);
    *OUTPUT.lock() = Some(Output {
        trace,
        stats,
        stats_format: config.stats_format,
        stats_file,
    });
    EPOCH.store(now_ns(), Ordering::Relaxed);
    probe::start(&Recorder);
}

/// The recorder as the probe's sink: what the HSA layer reports comes in here.
struct Recorder;

impl probe::Sink for Recorder {
    fn packet_signal(&self) -> Option<hsa_signal_t> {
        packet_signal()
    }

    fn packet_published(&self, packet: Published<'_>) {
        packet_published(packet);
    }

    fn wait_done(&self, signal: u64, start_ns: u64, end_ns: u64, spin_ns: u64, blocked: bool) {
        wait_done(signal, start_ns, end_ns, spin_ns, blocked);
    }
}

/// Called once the HSA runtime is initialised (or failed to be): aligns its clock with the
/// host's, asks for copy timestamps, and registers the exit hook (after the runtime's own).
pub fn attach(api: Option<&'static HsaApi>, hz: u64) {
    static ONCE: AtomicBool = AtomicBool::new(false);
    if !recording() || ONCE.swap(true, Ordering::AcqRel) {
        return;
    }
    if let Some(api) = api {
        let hz = hz.max(1);
        let mut virtual_time = false;
        // SAFETY: a bool attribute and a valid out-pointer; a runtime that does not know it
        // (ROCr) returns an error and leaves the value alone.
        unsafe {
            (api.hsa_system_get_info)(
                system_info::HSASIM_VIRTUAL_TIME,
                &mut virtual_time as *mut bool as *mut c_void,
            )
        };
        if virtual_time && hz == 1_000_000_000 {
            // The timeline moves to the device's clock and starts where it is now (nothing
            // was put on it before the runtime was up: the first call's span starts at the
            // epoch).
            probe::use_device_clock(api.system_get_info_uncounted());
            EPOCH.store(now_ns(), Ordering::Relaxed);
        }
        let (mut best, mut offset) = (u64::MAX, 0i128);
        for _ in 0..5 {
            let mut ticks: u64 = 0;
            let h0 = now_ns();
            // SAFETY: TIMESTAMP is a u64 attribute; the out-pointer is valid.
            unsafe {
                (api.hsa_system_get_info)(
                    system_info::TIMESTAMP,
                    &mut ticks as *mut u64 as *mut c_void,
                )
            };
            let h1 = now_ns();
            if h1 - h0 < best {
                best = h1 - h0;
                offset = (h0 as i128 + h1 as i128) / 2 - ticks_to_ns(ticks, hz) as i128;
            }
        }
        // SAFETY: a plain flag for the runtime's copy engines.
        let copy_profiling = unsafe { (api.hsa_amd_profiling_async_copy_enable)(true) };
        if copy_profiling != status::SUCCESS {
            tracing::warn!(
                target: "hipshim::trace",
                status = copy_profiling,
                "copy timestamps unavailable; copies will show as incomplete"
            );
        }
        let clock = if virtual_time {
            "hsasim's virtual clock (HSASIM_TIME=virtual) in ns since recording started, for host and device events alike".to_string()
        } else {
            format!(
                "host CLOCK_MONOTONIC ns since recording started; device ns = HSA system timestamp * 1e9 / {hz} Hz + {offset} ns (aligned within {best} ns)"
            )
        };
        let _ = ATTACHED.set(Attached {
            api,
            hz,
            offset_ns: offset,
            clock,
            virtual_time,
        });
    }
    extern "C" fn at_exit() {
        // No panic may unwind into libc's exit.
        let _ = std::panic::catch_unwind(finish);
    }
    // SAFETY: registers a plain function; the C library calls it once at exit.
    unsafe { libc::atexit(at_exit) };
}

fn ticks_to_ns(ticks: u64, hz: u64) -> u64 {
    (ticks as u128 * 1_000_000_000 / hz as u128) as u64
}

/// A device timestamp as trace time.
fn device_time(ticks: u64) -> Option<u64> {
    let a = ATTACHED.get()?;
    if ticks == 0 {
        return None;
    }
    let host = ticks_to_ns(ticks, a.hz) as i128 + a.offset_ns;
    Some(rel(host.max(0) as u64))
}

// ---- per-thread buffers ----

// A packet's entry holds its two events while stats alone are recorded: moved in and out
// once each, where boxing them would allocate per packet.
#[allow(clippy::large_enum_variant)]
enum InFlight {
    Packet {
        /// The packet's event, then its trace barrier's.
        events: Held<[PacketEvent; 2]>,
        signal: hsa_signal_t,
        agent: hsa_agent_t,
    },
    Copy {
        event: Held<CopyEvent>,
        signal: PooledSignal,
    },
}

/// Where the event of work in flight waits for the work's times.
enum Held<T> {
    /// In the buffer's events, at this index (the trace keeps every event).
    Kept(usize),
    /// Here, to be tallied once the work completes (the stats alone keep no events).
    Pending(T),
}

struct Buffer {
    tid: u64,
    /// What is kept for the trace; without one, only the thread's track.
    events: Vec<TraceEvent>,
    /// What the thread recorded, when events are not kept.
    tally: Tally,
    in_flight: VecDeque<InFlight>,
    /// Length of `in_flight` at which the next full scan happens (a packet on a failed queue
    /// never completes and must not stop the harvest of the ones behind it).
    next_scan: usize,
    /// Recorder-owned completion signals ready for reuse.
    free: Vec<hsa_signal_t>,
}

type Shared<T> = std::sync::Arc<Mutex<T>>;

static BUFFERS: Mutex<Vec<Shared<Buffer>>> = Mutex::new(Vec::new());
static NEXT_API: AtomicU64 = AtomicU64::new(1);

thread_local! {
    static LOCAL: std::cell::OnceCell<Shared<Buffer>> = const { std::cell::OnceCell::new() };
    /// The API call running on this thread (0: none), for flow arrows.
    static CURRENT_API: Cell<u64> = const { Cell::new(0) };
    /// The kernel the next dispatch packet of this thread launches, and its kernarg size.
    static KERNEL_NOTE: RefCell<Option<(std::sync::Arc<str>, u32)>> = const { RefCell::new(None) };
    /// Kernel names interned by address, so a launch does not allocate one each time.
    static NAMES: RefCell<HashMap<(usize, usize), std::sync::Arc<str>>> = RefCell::new(HashMap::new());
}

fn os_tid() -> u64 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() as u64 }
}

fn new_buffer() -> Shared<Buffer> {
    let tid = os_tid();
    let name = match std::thread::current().name() {
        Some(n) => format!("{n} ({tid})"),
        // SAFETY: getpid has no preconditions.
        None if tid == unsafe { libc::getpid() } as u64 => format!("main thread ({tid})"),
        None => format!("thread {tid}"),
    };
    let buffer = std::sync::Arc::new(Mutex::new(Buffer {
        tid,
        events: vec![TraceEvent::Thread { tid, name }],
        tally: Tally::bounded(),
        in_flight: VecDeque::new(),
        next_scan: 256,
        free: Vec::new(),
    }));
    BUFFERS.lock().push(buffer.clone());
    buffer
}

fn keep_events() -> bool {
    KEEP_EVENTS.load(Ordering::Relaxed)
}

impl Buffer {
    /// Keeps `event` for the trace, or adds it to the thread's tally.
    fn record(&mut self, event: TraceEvent) {
        if keep_events() {
            self.events.push(event);
        } else {
            self.tally.add(&event);
        }
    }

    /// Keeps the events of work in flight for the trace (`keep` pushes them), or holds them
    /// until the work is done.
    fn hold<T>(&mut self, events: T, keep: impl FnOnce(T, &mut Vec<TraceEvent>)) -> Held<T> {
        if keep_events() {
            let at = self.events.len();
            keep(events, &mut self.events);
            Held::Kept(at)
        } else {
            Held::Pending(events)
        }
    }
}

/// Runs `f` on this thread's buffer (`None` if not recording or the thread is exiting).
fn with_buffer<R>(f: impl FnOnce(&mut Buffer) -> R) -> Option<R> {
    if !recording() {
        return None;
    }
    LOCAL
        .try_with(|cell| {
            let buffer = cell.get_or_init(new_buffer);
            let mut b = buffer.lock();
            f(&mut b)
        })
        .ok()
}

// ---- hooks ----

/// An API call starts: returns the id of the call it interrupts (to restore at its end).
pub fn api_enter() -> (u64, u64) {
    let id = NEXT_API.fetch_add(1, Ordering::Relaxed);
    let outer = CURRENT_API.try_with(|c| c.replace(id)).unwrap_or(0);
    (id, outer)
}

/// The host time recording started at.
pub fn epoch() -> u64 {
    EPOCH.load(Ordering::Relaxed)
}

/// An id for an API call during which recording started (no call was interrupted).
pub fn api_started_late() -> (u64, u64) {
    (NEXT_API.fetch_add(1, Ordering::Relaxed), 0)
}

/// An API call ends.
pub fn api_exit(name: &'static str, (id, outer): (u64, u64), start: u64, dur: u64, result: u32) {
    let _ = CURRENT_API.try_with(|c| c.set(outer));
    with_buffer(|b| {
        b.record(TraceEvent::Api(ApiEvent {
            tid: b.tid,
            name: name.into(),
            start_ns: rel(start),
            dur_ns: dur,
            result,
            id,
        }))
    });
}

fn current_api() -> Option<u64> {
    match CURRENT_API.try_with(Cell::get).unwrap_or(0) {
        0 => None,
        id => Some(id),
    }
}

/// The launch path names the kernel of the dispatch packet it is about to publish.
pub fn note_kernel(name: &str, kernarg_bytes: u32) {
    let key = (name.as_ptr() as usize, name.len());
    let _ = NAMES.try_with(|names| {
        let name = names
            .borrow_mut()
            .entry(key)
            .or_insert_with(|| std::sync::Arc::from(name))
            .clone();
        let _ = KERNEL_NOTE.try_with(|n| *n.borrow_mut() = Some((name, kernarg_bytes)));
    });
}

/// A recorder-owned completion signal for a packet about to be published (value 1).
fn packet_signal() -> Option<hsa_signal_t> {
    let api = ATTACHED.get()?.api;
    with_buffer(|b| {
        if let Some(s) = b.free.pop() {
            // SAFETY: a signal this recorder created and that no packet names any more.
            unsafe { (api.hsa_signal_store_relaxed)(s, 1) };
            return Some(s);
        }
        let mut s = hsa_signal_t::default();
        // SAFETY: valid out-pointer; no consumer list.
        let status = unsafe { (api.hsa_signal_create)(1, 0, std::ptr::null(), &mut s) };
        (status == status::SUCCESS).then_some(s)
    })
    .flatten()
}

/// Records a traced packet and the trace barrier after it; harvests completed ones.
fn packet_published(p: Published<'_>) {
    let kind_of = |header: u16| match (header & 0xff) as u8 {
        t if t as u32 == HSA_PACKET_TYPE_KERNEL_DISPATCH as u32 => PacketKind::KernelDispatch,
        t if t as u32 == HSA_PACKET_TYPE_BARRIER_AND as u32 => PacketKind::BarrierAnd,
        t if t as u32 == HSA_PACKET_TYPE_BARRIER_OR as u32 => PacketKind::BarrierOr,
        t => PacketKind::Other(t),
    };
    let header = u16::from_le_bytes([p.packet.bytes[0], p.packet.bytes[1]]);
    let kind = kind_of(header);
    let barrier = header & (1 << HSA_PACKET_HEADER_BARRIER) != 0;
    let (mut kernel, mut kernarg_bytes, mut grid, mut workgroup, mut deps) =
        (None, 0, [0u32; 3], [0u16; 3], Vec::new());
    match kind {
        PacketKind::KernelDispatch => {
            // SAFETY: a 64-byte dispatch packet is plain data of exactly this layout.
            let d: hsa_kernel_dispatch_packet_t =
                unsafe { std::ptr::read_unaligned(p.packet.bytes.as_ptr() as *const _) };
            grid = [d.grid_size_x, d.grid_size_y, d.grid_size_z];
            workgroup = [d.workgroup_size_x, d.workgroup_size_y, d.workgroup_size_z];
            if let Ok(Some((name, bytes))) = KERNEL_NOTE.try_with(|n| n.borrow_mut().take()) {
                kernel = Some(name);
                kernarg_bytes = bytes;
            }
        }
        PacketKind::BarrierAnd | PacketKind::BarrierOr => {
            // SAFETY: barrier-AND and barrier-OR packets share this 64-byte layout.
            let b: hsa_barrier_and_packet_t =
                unsafe { std::ptr::read_unaligned(p.packet.bytes.as_ptr() as *const _) };
            deps = b
                .dep_signal
                .iter()
                .map(|s| s.handle)
                .filter(|&h| h != 0)
                .collect();
        }
        _ => {}
    }
    let api = current_api();
    with_buffer(|b| {
        let tid = b.tid;
        let submit_ns = rel(p.submit_ns);
        let packet = PacketEvent {
            queue: p.queue,
            device: p.device,
            index: p.index,
            kind,
            barrier,
            kernel,
            grid,
            workgroup,
            kernarg_bytes,
            deps,
            completion_signal: p.original_completion.handle,
            depth: p.depth,
            doorbell: false,
            tid,
            submit_ns,
            start_ns: None,
            end_ns: None,
            api,
        };
        let trace_barrier = PacketEvent {
            queue: p.queue,
            device: p.device,
            index: p.index + 1,
            kind: PacketKind::TraceBarrier,
            barrier: true,
            kernel: None,
            grid: [0; 3],
            workgroup: [0; 3],
            kernarg_bytes: 0,
            deps: Vec::new(),
            completion_signal: p.original_completion.handle,
            depth: p.depth + 1,
            doorbell: true,
            tid,
            submit_ns,
            start_ns: None,
            end_ns: None,
            api: None,
        };
        let events = b.hold([packet, trace_barrier], |pair, kept| {
            kept.extend(pair.map(TraceEvent::Packet));
        });
        b.in_flight.push_back(InFlight::Packet {
            events,
            signal: p.signal,
            agent: p.agent,
        });
        harvest(b, false);
    });
}

/// What a copy hook knows.
pub struct CopyInfo {
    pub engine: Option<u32>,
    pub device: u32,
    pub bytes: u64,
    pub pieces: u32,
    pub direction: Direction,
    pub staged: bool,
    pub submit_ns: u64,
}

fn copy_event(info: &CopyInfo, tid: u64) -> CopyEvent {
    CopyEvent {
        engine: match info.engine {
            Some(bit) => format!("sdma{}", bit.trailing_zeros()),
            None => "runtime".into(),
        },
        device: info.device,
        bytes: info.bytes,
        pieces: info.pieces,
        direction: info.direction,
        staged: info.staged,
        tid,
        submit_ns: rel(info.submit_ns),
        start_ns: None,
        end_ns: None,
        api: current_api(),
    }
}

/// A stream-ordered copy was handed to the copy engines; `signal` reads 0 when it is done.
pub fn copy_submitted(info: CopyInfo, signal: &PooledSignal) {
    with_buffer(|b| {
        let event = b.hold(copy_event(&info, b.tid), |copy, kept| {
            kept.push(TraceEvent::Copy(copy));
        });
        b.in_flight.push_back(InFlight::Copy {
            event,
            signal: signal.clone(),
        });
        // A thread may record only copies (the HSA handler thread starts the stream-ordered
        // copies that waited for earlier work), so its completed ones are harvested here too.
        harvest(b, false);
    });
}

/// A synchronous copy completed on `signal` (read its timestamps now, before reuse).
pub fn copy_completed(info: CopyInfo, signal: hsa_signal_t) {
    let times = copy_times(signal);
    with_buffer(|b| {
        let mut event = copy_event(&info, b.tid);
        if let Some((s, e)) = times {
            event.start_ns = Some(piece_start(&event, s));
            event.end_ns = Some(e);
        }
        b.record(TraceEvent::Copy(event));
    });
}

/// The start of a copy: a signal shared by several pieces keeps only the last piece's start,
/// so a batch is drawn from its submission (an upper bound on its time, not a lower one).
fn piece_start(copy: &CopyEvent, last_piece_start: u64) -> u64 {
    if copy.pieces > 1 {
        copy.submit_ns.min(last_piece_start)
    } else {
        last_piece_start
    }
}

fn copy_times(signal: hsa_signal_t) -> Option<(u64, u64)> {
    let a = ATTACHED.get()?;
    let mut t = hsa_amd_profiling_time_t::default();
    // SAFETY: a live signal and a valid out-pointer.
    let status = unsafe { (a.api.hsa_amd_profiling_get_async_copy_time)(signal, &mut t) };
    if status != status::SUCCESS {
        return None;
    }
    Some((device_time(t.start)?, device_time(t.end)?))
}

/// A host wait on `signal` finished.
fn wait_done(signal: u64, start: u64, end: u64, spin_ns: u64, blocked: bool) {
    with_buffer(|b| {
        b.record(TraceEvent::Wait(WaitEvent {
            tid: b.tid,
            signal,
            condition: "== 0".into(),
            start_ns: rel(start),
            dur_ns: end.saturating_sub(start),
            spin_ns,
            blocked,
        }))
    });
}

pub fn queue_created(queue: u64, device: u32, size: u32, reason: &str) {
    let ts = now_ns();
    with_buffer(|b| {
        b.record(TraceEvent::QueueCreated {
            tid: b.tid,
            ts_ns: rel(ts),
            queue,
            device,
            size,
            reason: reason.to_string(),
        })
    });
}

pub fn stream_assigned(stream: &dyn std::fmt::Display, queue: u64, device: u32, reason: &str) {
    let ts = now_ns();
    with_buffer(|b| {
        b.record(TraceEvent::StreamAssigned {
            tid: b.tid,
            ts_ns: rel(ts),
            stream: stream.to_string(),
            queue,
            device,
            reason: reason.to_string(),
        })
    });
}

/// A graph launch (see [`TraceEvent::GraphLaunch`]).
pub fn graph_launch(graph: u64, device: u32, kernels: u32, eager: u32, queues: &[u64]) {
    let ts = now_ns();
    with_buffer(|b| {
        b.record(TraceEvent::GraphLaunch {
            tid: b.tid,
            ts_ns: rel(ts),
            graph,
            device,
            kernels,
            eager,
            queues: queues.to_vec(),
        })
    });
}

/// A stream-ordered allocation from memory pool `pool` (see [`TraceEvent::PoolAlloc`]).
pub fn pool_alloc(pool: u64, device: u32, bytes: u64, reused: bool, used: u64, reserved: u64) {
    let ts = now_ns();
    with_buffer(|b| {
        b.record(TraceEvent::PoolAlloc {
            tid: b.tid,
            ts_ns: rel(ts),
            pool,
            device,
            bytes,
            reused,
            used,
            reserved,
        })
    });
}

/// Fills in the times of completed work. `all`: look at every entry (not just the oldest).
fn harvest(b: &mut Buffer, all: bool) {
    let Some(a) = ATTACHED.get() else { return };
    let done = |entry: &InFlight| -> bool {
        let signal = match entry {
            InFlight::Packet { signal, .. } => *signal,
            InFlight::Copy { signal, .. } => signal.handle(),
        };
        // SAFETY: the signal is live (the recorder's own, or a pooled one it holds).
        unsafe { (a.api.hsa_signal_load_scacquire)(signal) == 0 }
    };
    let complete = |b: &mut Buffer, entry: InFlight| match entry {
        InFlight::Packet {
            events,
            signal,
            agent,
        } => {
            let mut t = hsa_amd_profiling_time_t::default();
            // SAFETY: a live signal, the queue's agent and a valid out-pointer.
            let status =
                unsafe { (a.api.hsa_amd_profiling_get_dispatch_time)(agent, signal, &mut t) };
            let times = (status == status::SUCCESS)
                .then(|| Some((device_time(t.start)?, device_time(t.end)?)))
                .flatten();
            // The trace barrier completes the moment its packet does.
            let set_times = |p: &mut PacketEvent, (s, e): (u64, u64)| {
                p.start_ns = Some(s);
                p.end_ns = Some(e);
            };
            match events {
                Held::Kept(at) => {
                    if let Some((s, e)) = times {
                        for (i, span) in [(at, (s, e)), (at + 1, (e, e))] {
                            if let Some(TraceEvent::Packet(p)) = b.events.get_mut(i) {
                                set_times(p, span);
                            }
                        }
                    }
                }
                Held::Pending(pair) => {
                    for (i, mut p) in pair.into_iter().enumerate() {
                        if let Some((s, e)) = times {
                            set_times(&mut p, if i == 0 { (s, e) } else { (e, e) });
                        }
                        b.tally.add(&TraceEvent::Packet(p));
                    }
                }
            }
            b.free.push(signal);
        }
        InFlight::Copy { event, signal } => {
            let times = copy_times(signal.handle());
            let set_times = |c: &mut CopyEvent| {
                if let Some((s, e)) = times {
                    c.start_ns = Some(piece_start(c, s));
                    c.end_ns = Some(e);
                }
            };
            match event {
                Held::Kept(at) => {
                    if let Some(TraceEvent::Copy(c)) = b.events.get_mut(at) {
                        set_times(c);
                    }
                }
                Held::Pending(mut c) => {
                    set_times(&mut c);
                    b.tally.add(&TraceEvent::Copy(c));
                }
            }
        }
    };
    while b.in_flight.front().is_some_and(done) {
        let entry = b.in_flight.pop_front().expect("checked");
        complete(b, entry);
    }
    if all || b.in_flight.len() >= b.next_scan {
        let pending = std::mem::take(&mut b.in_flight);
        for entry in pending {
            if done(&entry) {
                complete(b, entry);
            } else {
                b.in_flight.push_back(entry);
            }
        }
        b.next_scan = (b.in_flight.len() * 2).max(256);
    }
}

/// Everything kept so far (completed work harvested first), for the exit hook and tests.
pub fn collect() -> Vec<TraceEvent> {
    collect_with_tally().0
}

/// [`collect`], and the tally of what was not kept as events: work still in flight counts
/// as incomplete.
fn collect_with_tally() -> (Vec<TraceEvent>, Tally) {
    let buffers: Vec<Shared<Buffer>> = BUFFERS.lock().clone();
    let mut events = Vec::new();
    let mut tally = Tally::bounded();
    for buffer in buffers {
        let mut b = buffer.lock();
        harvest(&mut b, true);
        events.append(&mut b.events);
        let mut thread = std::mem::replace(&mut b.tally, Tally::bounded());
        for entry in &b.in_flight {
            match entry {
                InFlight::Packet {
                    events: Held::Pending(pair),
                    ..
                } => pair
                    .iter()
                    .for_each(|p| thread.add(&TraceEvent::Packet(p.clone()))),
                InFlight::Copy {
                    event: Held::Pending(c),
                    ..
                } => thread.add(&TraceEvent::Copy(c.clone())),
                _ => {}
            }
        }
        tally.merge(thread);
    }
    for (name, calls, ns) in probe::hsa_calls() {
        events.push(TraceEvent::HsaCall {
            name: name.to_string(),
            calls,
            total_ns: ns,
        });
    }
    (events, tally)
}

/// Where the trace for `path` is written until it is complete: beside it (the rename stays
/// on one file system), named for this process.
fn partial_trace_path(path: &std::path::Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    // SAFETY: getpid has no preconditions.
    name.push(format!(".{}.partial", unsafe { libc::getpid() }));
    path.with_file_name(name)
}

/// The compute units in use over the runtime's virtual time line, as trace events: hsasim
/// answers `HSASIM_CU_USE` under `HSASIM_TIME=virtual`; ROCr (and hsasim on host time) has
/// none to give, and the trace then has no counter of them.
fn cus_in_use() -> Vec<TraceEvent> {
    let Some(a) = ATTACHED.get() else {
        return Vec::new();
    };
    let get_info = a.api.system_get_info_uncounted();
    let mut query = hsasim_cu_use_t {
        capacity: 0,
        count: 0,
        truncated: 0,
        steps: std::ptr::null_mut(),
    };
    // SAFETY: the attribute's value is an `hsasim_cu_use_t` with no room for steps; a runtime
    // that does not know it leaves it alone.
    let asked = unsafe {
        get_info(
            system_info::HSASIM_CU_USE,
            (&mut query as *mut hsasim_cu_use_t).cast(),
        )
    };
    if asked != status::SUCCESS || query.count == 0 {
        return Vec::new();
    }
    let mut steps = vec![hsasim_cu_step_t::default(); query.count as usize];
    query.capacity = steps.len() as u64;
    query.steps = steps.as_mut_ptr();
    // SAFETY: as above, with room for `capacity` steps at `steps`.
    let asked = unsafe {
        get_info(
            system_info::HSASIM_CU_USE,
            (&mut query as *mut hsasim_cu_use_t).cast(),
        )
    };
    if asked != status::SUCCESS {
        return Vec::new();
    }
    if query.truncated != 0 {
        tracing::warn!(target: "hipshim::trace",
            "the runtime stopped recording compute-unit use (its bound); the counter covers the start of the run");
    }
    steps.truncate(query.count.min(query.capacity) as usize);
    steps
        .iter()
        .filter_map(|s| {
            Some(TraceEvent::CusInUse {
                node: s.node,
                at_ns: device_time(s.at_ns)?,
                cus: s.cus,
            })
        })
        .collect()
}

/// The hardware queue slots the runtime held on its virtual time line, as trace events: hsasim
/// answers `HSASIM_HQD_SLOTS` under `HSASIM_TIME=virtual`; ROCr (and hsasim on host time) has
/// none to give, and the trace then has no slot tracks.
fn hqd_slots() -> Vec<TraceEvent> {
    let Some(a) = ATTACHED.get().filter(|a| a.virtual_time) else {
        return Vec::new();
    };
    let get_info = a.api.system_get_info_uncounted();
    let mut query = hsasim_hqd_slots_t {
        capacity: 0,
        count: 0,
        slots: std::ptr::null_mut(),
    };
    // SAFETY: the attribute's value is an `hsasim_hqd_slots_t` with no room for entries; a
    // runtime that does not know it leaves it alone.
    if unsafe {
        get_info(
            system_info::HSASIM_HQD_SLOTS,
            (&mut query as *mut hsasim_hqd_slots_t).cast(),
        )
    } != status::SUCCESS
        || query.count == 0
    {
        return Vec::new();
    }
    let mut slots = vec![hsasim_hqd_slot_t::default(); query.count as usize];
    query.capacity = slots.len() as u64;
    query.slots = slots.as_mut_ptr();
    // SAFETY: as above, with room for `capacity` entries at `slots`.
    if unsafe {
        get_info(
            system_info::HSASIM_HQD_SLOTS,
            (&mut query as *mut hsasim_hqd_slots_t).cast(),
        )
    } != status::SUCCESS
    {
        return Vec::new();
    }
    slots.truncate(query.count.min(query.capacity) as usize);
    slots
        .iter()
        .filter_map(|s| {
            Some(TraceEvent::HqdSlot {
                pid: s.pid,
                slot: s.slot,
                pipe: s.pipe,
                queue_id: s.queue_id,
                start_ns: device_time(s.start_ns)?,
                end_ns: device_time(s.end_ns)?,
            })
        })
        .collect()
}

/// Writes the trace and prints the stats (once; at exit).
pub fn finish() {
    // A forked child inherited the parent's handler and a copy of its events: the parent
    // writes the trace, and the child must not take locks a vanished thread may hold.
    if crate::fork_guard::in_forked_child() {
        return;
    }
    if FINISHED.swap(true, Ordering::AcqRel) {
        return;
    }
    let end_ns = rel(now_ns());
    let (mut events, mut tally) = collect_with_tally();
    if KEEP_EVENTS.load(Ordering::Relaxed) {
        events.extend(cus_in_use());
        events.extend(hqd_slots());
    }
    probe::stop();
    let Some(output) = OUTPUT.lock().take() else {
        return;
    };
    if let Some((path, file)) = output.trace {
        let info = TraceInfo {
            // SAFETY: getpid has no preconditions.
            pid: unsafe { libc::getpid() } as u32,
            end_ns,
            clock: ATTACHED
                .get()
                .map_or_else(|| "no HSA runtime".to_string(), |a| a.clock.clone()),
            origin_ns: EPOCH.load(Ordering::Relaxed),
        };
        let partial = partial_trace_path(&path);
        let mut out = std::io::BufWriter::new(file);
        let written = write_trace(&mut out, &events, &info)
            .and_then(|_| out.flush())
            .and_then(|_| out.get_ref().sync_all())
            .and_then(|_| std::fs::rename(&partial, &path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&partial);
            eprintln!(
                "hipshim: writing the trace HIPSHIM_TRACE={} failed: {e}",
                path.display()
            );
        }
    }
    if output.stats != StatsOutput::Off {
        for event in &events {
            tally.add(event);
        }
        let stats = tally.into_stats();
        let text = stats.render(output.stats_format, "stats");
        match output.stats_file {
            Some(mut f) => {
                let _ = f.write_all(text.as_bytes());
            }
            None => eprint!("{text}"),
        }
    }
}

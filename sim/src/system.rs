//! The runtime instance: everything `hsa_init` creates and `hsa_shut_down` tears down, and
//! the one place that knows whether work runs on service threads or on waiting threads.
//!
//! The top of the core (see the crate's layers): the runtime owns every part and lends each
//! the narrow context it takes ([`QueueContext`] to queues, [`Platform`] to virtual, IPC and
//! SVM memory); where a lower part must reach up, the runtime installs the hook at `hsa_init`
//! (the memory registry's interrupt, the SIGSEGV handler's lookup). Nothing below calls
//! [`rt`].

use crate::agent::Agent;
use crate::async_handler::{AsyncHandler, AsyncHandlers};
use crate::config::Config;
use crate::error::{HsaError, HsaResult};
use crate::loader::LoaderState;
use crate::memory::{MemoryRegistry, Pool};
use crate::platform::Platform;
use crate::queue::{Queue, QueueContext, QueueHost};
use crate::signal::{condition_holds, Signal, SignalRegistry, HUB};
use crate::virtual_time::{Origin, VirtualTime};
use hsa_abi::*;
use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Deterministic mode: consecutive polls by one thread after which the poll runs pending
/// work (see [`Runtime::poll`]).
pub const POLLS_PER_PUMP: u32 = 64;
/// Deterministic mode: consecutive unchanged polls after which a poll runs everything.
pub const POLLS_PER_FULL_PUMP: u32 = 8192;

pub struct Runtime {
    pub config: Config,
    /// CPU agent first, then the GPUs (the order `hsa_iterate_agents` reports).
    pub agents: Vec<Arc<Agent>>,
    /// Shared with the copy engines, which check their ranges against it.
    pub memory: Arc<MemoryRegistry>,
    pub signals: SignalRegistry,
    /// Live queues by `hsa_queue_t*` address.
    pub queues: RwLock<crate::handles::HandleMap<Arc<Queue>>>,
    pub loader: LoaderState,
    pub async_copy_profiling: AtomicBool,
    /// `hsa_signal_group_t` handles (the address of the member list) to their signals.
    pub signal_groups: Mutex<HashMap<u64, Arc<Vec<Arc<Signal>>>>>,
    /// SVM attribute ranges (`hsa_amd_svm_attributes_set`), newest last.
    pub svm: crate::svm::SvmRanges,
    /// Virtual memory: reservations, physical allocations and their mappings.
    pub vmem: crate::vmem::Vmem,
    /// Memory exported to and attached from other processes.
    pub ipc: crate::ipc::Ipc,
    /// The device service's device memory, the first GPU's pool (`HSASIM_DEVICE_SERVICE`).
    pub vram: Option<Arc<crate::device_memory::SharedVram>>,
    /// IPC signals, in the device service's segment (`HSASIM_DEVICE_SERVICE`).
    pub ipc_signals: Option<crate::ipc_signal::IpcSignals>,
    /// The hardware queue scheduler model, when configured (`sched.rs`).
    pub sched: Option<Arc<crate::sched::Scheduler>>,
    /// The virtual clock (`HSASIM_TIME=virtual`).
    pub vtime: Option<Arc<VirtualTime>>,
    handlers: AsyncHandlers,
    handler_thread: Mutex<Option<JoinHandle<()>>>,
    stopping: AtomicBool,
}

struct Global {
    refcount: u32,
    runtime: Option<Arc<Runtime>>,
}

static GLOBAL: Mutex<Global> = Mutex::new(Global {
    refcount: 0,
    runtime: None,
});
/// Read-mostly copy of `GLOBAL.runtime` so API calls don't contend on the init lock.
static CURRENT: RwLock<Option<Arc<Runtime>>> = RwLock::new(None);

/// Whether the initialised runtime runs in deterministic mode (`HSASIM_THREADS=0`): what a
/// signal read needs to know before it pays for [`rt`] to make queued work progress.
static DETERMINISTIC: AtomicBool = AtomicBool::new(false);

pub fn deterministic() -> bool {
    DETERMINISTIC.load(Ordering::Relaxed)
}

/// The initialised runtime, or NOT_INITIALIZED.
pub fn rt() -> HsaResult<Arc<Runtime>> {
    CURRENT.read().clone().ok_or(HsaError::NOT_INITIALIZED)
}

/// Runs `f` on the initialised runtime without blocking: `None` if there is none or its
/// slot is being written. For signal handlers, which must not wait on a lock.
pub fn try_with_runtime<R>(f: impl FnOnce(&Runtime) -> R) -> Option<R> {
    let current = CURRENT.try_read()?;
    current.as_deref().map(f)
}

pub fn init() -> HsaResult {
    let mut g = GLOBAL.lock();
    if g.refcount == u32::MAX {
        return Err(HsaError::REFCOUNT_OVERFLOW);
    }
    if g.refcount == 0 {
        let config = Config::from_env();
        crate::logging::init(config.log.as_deref());
        let sched = crate::sched::Scheduler::start(&config)?;
        let vram = match sched.as_ref().and_then(|s| s.service()) {
            None => None,
            Some(device) => Some(Arc::new(
                crate::device_memory::SharedVram::attach(device.clone(), config.large_bar)
                    .map_err(|why| {
                        tracing::error!(target: "hsasim", "HSASIM_DEVICE_SERVICE: {why}");
                        eprintln!("hsasim: HSASIM_DEVICE_SERVICE: {why}");
                        if let Some(s) = &sched {
                            s.shut_down();
                        }
                        HsaError::GENERIC
                    })?,
            )),
        };
        crate::cpu_touch::install_lookup(device_only_allocation);
        let rt = Arc::new(Runtime::new(config, sched, vram));
        tracing::info!(target: "hsasim", config = ?rt.config, "hsa_init");
        DETERMINISTIC.store(!rt.config.threaded, Ordering::Relaxed);
        crate::fail::arm(rt.config.fail.clone());
        if let Some(path) = rt.config.capture.as_deref() {
            if !crate::capture::is_on() {
                crate::capture::open(path);
            }
        }
        *CURRENT.write() = Some(rt.clone());
        g.runtime = Some(rt);
    }
    g.refcount += 1;
    Ok(())
}

pub fn shut_down() -> HsaResult {
    let mut g = GLOBAL.lock();
    if g.refcount == 0 {
        return Err(HsaError::NOT_INITIALIZED);
    }
    g.refcount -= 1;
    if g.refcount == 0 {
        *CURRENT.write() = None;
        if let Some(rt) = g.runtime.take() {
            rt.tear_down();
        }
        tracing::info!(target: "hsasim", "hsa_shut_down: runtime released");
    }
    Ok(())
}

/// What the SIGSEGV handler of [`crate::cpu_touch`] asks: the device allocation the CPU may
/// not touch that holds `address`. Never blocks: a handler must not wait on a lock.
fn device_only_allocation(address: u64) -> Option<(u64, u64)> {
    try_with_runtime(|rt| rt.memory.device_only_allocation(address)).flatten()
}

/// A wave changed a signal in memory (not through the signal API, which wakes waiters
/// itself) and raised the interrupt: wake every waiter to re-check its condition. In
/// deterministic mode no handler thread exists, so the async handlers whose condition now
/// holds run here, on the wave's thread, before the wave goes on: a device-to-host call (the
/// device library's hostcall) is answered by such a handler, and the wave that asked waits
/// for the answer. Installed in the memory registry, which the waves see.
fn device_interrupt(_data: u32) {
    crate::signal::changed_behind_the_api();
    if deterministic() {
        if let Ok(rt) = rt() {
            rt.run_ready_handlers();
        }
    }
}

/// How long a host wait lasts before virtual time says what its frontier waits for.
const STALL_REPORT_AFTER: Duration = Duration::from_secs(10);

thread_local! {
    /// The signal this thread last waited for, since when, and whether that was reported.
    static WAITING_ON: std::cell::Cell<(u64, Option<Instant>, bool)> =
        const { std::cell::Cell::new((0, None, false)) };
}

/// A host thread that keeps waiting for one signal (clients wait in slices, checking for
/// faults between them) longer than [`STALL_REPORT_AFTER`]: says once what virtual time's
/// frontier waits for.
fn report_long_wait(v: &VirtualTime, target: Option<u64>) {
    let Some(target) = target else { return };
    let now = Instant::now();
    let (signal, since, reported) = WAITING_ON.with(std::cell::Cell::get);
    if signal != target {
        WAITING_ON.with(|w| w.set((target, Some(now), false)));
        return;
    }
    let since = since.unwrap_or(now);
    if !reported && now.duration_since(since) > STALL_REPORT_AFTER {
        WAITING_ON.with(|w| w.set((target, Some(since), true)));
        tracing::warn!(target: "hsasim", signal = format_args!("{target:#x}"),
            "a host wait has lasted {} s; virtual time: {}",
            STALL_REPORT_AFTER.as_secs(), v.stall_report(&describe_entry));
        if let Some(rt) = CURRENT.try_read().and_then(|c| c.clone()) {
            tracing::warn!(target: "hsasim", "async signal handlers: {}", rt.handlers.describe());
        }
    }
}

/// What the work at `origin` waits for, for [`report_long_wait`].
fn describe_entry(origin: Origin) -> String {
    let Some(rt) = CURRENT.try_read().and_then(|c| c.clone()) else {
        return String::new();
    };
    match origin {
        Origin::Packet { queue, .. } => match rt.queue(queue) {
            Err(_) => "queue gone".into(),
            Ok(q) => q.describe_head(&rt.queue_context()),
        },
        Origin::Copy { node, engine } => copy_engine(&rt, node, engine).map_or_else(
            || "no such engine".into(),
            |e| format!("engine front waits: {}", e.front_waits()),
        ),
    }
}

/// Virtual time's question (see [`crate::virtual_time`]): whether the work at `origin` cannot
/// run now, so the entries after it may commit first. A packet cannot while its queue is
/// stopped, or its front packet waits on a signal or on memory; a copy while its engine's
/// front job waits on a dependency.
fn virtual_entry_blocked(origin: Origin) -> bool {
    let Some(rt) = CURRENT.try_read().and_then(|c| c.clone()) else {
        return false;
    };
    match origin {
        Origin::Packet { queue, .. } => match rt.queue(queue) {
            Err(_) => true,
            Ok(q) => {
                let cx = rt.queue_context();
                !q.is_active()
                    || matches!(
                        q.peek_packet(&cx),
                        crate::queue::Peek::Blocked | crate::queue::Peek::Polling
                    )
            }
        },
        Origin::Copy { node, engine } => {
            copy_engine(&rt, node, engine).is_none_or(|e| e.front_waits())
        }
    }
}

/// Copy engine `engine` of the GPU with node id `node`.
fn copy_engine(rt: &Runtime, node: u32, engine: u32) -> Option<&Arc<crate::sdma::SdmaEngine>> {
    rt.agents
        .iter()
        .find(|a| a.node == node)
        .and_then(|a| a.sdma.get(engine as usize))
}

fn host_memory_bytes() -> u64 {
    // SAFETY: sysconf has no memory-safety preconditions.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    if pages > 0 && page > 0 {
        pages as u64 * page as u64
    } else {
        16 << 30
    }
}

impl Runtime {
    fn new(
        config: Config,
        sched: Option<Arc<crate::sched::Scheduler>>,
        vram: Option<Arc<crate::device_memory::SharedVram>>,
    ) -> Runtime {
        // Pools record their owner's handle (the agent's address), known only once the
        // agent's Arc exists: new_cyclic hands it out before construction.
        let memory = Arc::new(MemoryRegistry::default());
        memory.set_interrupt_hook(device_interrupt);
        let mut agents = Vec::new();
        let cpu = Arc::new_cyclic(|w: &std::sync::Weak<Agent>| {
            Agent::cpu(
                hsa_agent_t {
                    handle: w.as_ptr() as u64,
                },
                host_memory_bytes(),
                &config,
            )
        });
        agents.push(cpu);
        for i in 0..config.gpus {
            agents.push(Arc::new_cyclic(|w: &std::sync::Weak<Agent>| {
                Agent::gpu(
                    hsa_agent_t {
                        handle: w.as_ptr() as u64,
                    },
                    i + 1,
                    &config,
                    &memory,
                    vram.as_ref().filter(|_| i == 0),
                )
            }));
        }
        for (start, len) in crate::signal::device_visible_ranges() {
            memory.add(crate::memory::Region::internal(
                start,
                len,
                agents[0].handle(),
            ));
        }
        let ipc_signals = sched.as_ref().and_then(|s| s.service()).map(|device| {
            crate::ipc_signal::IpcSignals::new(device.clone(), &memory, agents[0].handle())
        });
        let vtime = config
            .virtual_time
            .map(|model| Arc::new(VirtualTime::new(model)));
        if let Some(v) = &vtime {
            for a in &agents {
                for e in &a.sdma {
                    e.use_virtual_time(v.clone());
                }
            }
            v.install_blocked_check(Box::new(virtual_entry_blocked));
            // The slots: a device service's runlist and parameters, HSASIM_SCHED's, or the
            // model's HQDs.
            let shared = sched.as_ref().and_then(|s| s.service()).cloned();
            let params = match (&shared, config.sched) {
                (Some(device), _) => device.lock().params,
                (None, Some(params)) => params,
                (None, None) => crate::virtual_slots::params_of(v.model),
            };
            v.install_slots(crate::virtual_slots::VirtualSlots::new(params, shared));
        }
        Runtime {
            ipc_signals,
            vtime,
            config,
            agents,
            memory,
            signals: SignalRegistry::default(),
            queues: RwLock::new(Default::default()),
            loader: LoaderState::default(),
            async_copy_profiling: AtomicBool::new(false),
            signal_groups: Mutex::new(HashMap::new()),
            svm: Default::default(),
            vmem: Default::default(),
            ipc: Default::default(),
            vram,
            sched,
            handlers: AsyncHandlers::default(),
            handler_thread: Mutex::new(None),
            stopping: AtomicBool::new(false),
        }
    }

    fn tear_down(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        if let Some(v) = &self.vtime {
            v.retire();
        }
        HUB.notify();
        let queues: Vec<_> = self.queues.write().drain().map(|(_, q)| q).collect();
        for q in queues {
            self.release_queue(&q);
        }
        if let Some(s) = &self.ipc_signals {
            s.shut_down();
        }
        if let Some(s) = &self.sched {
            s.shut_down();
        }
        for a in &self.agents {
            for e in &a.sdma {
                e.shut_down();
            }
        }
        if let Some(h) = self.handler_thread.lock().take() {
            let _ = h.join();
        }
        for r in self.memory.drain_pool_allocations() {
            if self.vram.as_ref().is_some_and(|v| v.contains(r.start)) {
                continue;
            }
            // SAFETY: pool allocations are our own mappings; after shut-down no client may
            // use HSA memory (the HSA spec makes it invalid).
            unsafe { crate::memory::unmap_pool_allocation(&r) };
        }
        if let Some(v) = &self.vram {
            v.release_all();
        }
        self.loader.clear();
    }

    /// What queues reach of the runtime.
    pub fn queue_context(&self) -> QueueContext<'_> {
        QueueContext {
            config: &self.config,
            memory: &self.memory,
            signals: &self.signals,
            loader: &self.loader,
            vram: self.vram.as_ref(),
            sched: self.sched.as_ref(),
            vtime: self.vtime.as_ref(),
        }
    }

    /// What virtual memory, IPC memory and SVM ranges reach of the runtime.
    pub fn platform(&self) -> Platform<'_> {
        Platform {
            config: &self.config,
            agents: &self.agents,
            memory: &self.memory,
            vram: self.vram.as_ref(),
        }
    }

    pub fn cpu_agent(&self) -> &Arc<Agent> {
        self.platform().cpu_agent()
    }

    pub fn agent(&self, h: hsa_agent_t) -> HsaResult<&Arc<Agent>> {
        self.platform().agent(h)
    }

    pub fn pool(&self, h: hsa_amd_memory_pool_t) -> HsaResult<(&Arc<Agent>, &Arc<Pool>)> {
        self.platform().pool(h)
    }

    pub fn pool_by_handle(&self, h: u64) -> Option<Arc<Pool>> {
        self.pool(hsa_amd_memory_pool_t { handle: h })
            .ok()
            .map(|(_, p)| p.clone())
    }

    pub fn queue(&self, addr: u64) -> HsaResult<Arc<Queue>> {
        self.queues
            .read()
            .get(&addr)
            .cloned()
            .ok_or(HsaError::INVALID_QUEUE)
    }

    /// Unregisters and stops a queue that was already removed from `queues`.
    pub fn release_queue(&self, q: &Arc<Queue>) {
        q.stop();
        if let Some(v) = &self.vtime {
            v.forget_queue(q.address());
            v.queue_removed(q.address());
        }
        if crate::capture::is_on() {
            crate::capture::queue_destroyed(q.id);
        }
        q.agent.queue_count.fetch_sub(1, Ordering::SeqCst);
        for start in q.memory_ranges() {
            self.memory
                .remove_at(start, |r| r.kind == crate::memory::RegionKind::Internal);
        }
        let _ = self.signals.destroy(q.doorbell.handle());
    }

    /// Deterministic mode: runs everything until nothing can progress. Returns true if
    /// anything ran. In threaded mode the service threads do this.
    pub fn pump(&self) -> bool {
        let mut any = false;
        while self.pump_step(None, true) {
            any = true;
        }
        any
    }

    /// Deterministic mode: one unit of progress, chosen in a fixed order so runs repeat:
    ///
    /// 1. a ready async handler;
    /// 2. a ready copy job (copies are short and never wait on kernels except through
    ///    dependency signals, which they honour);
    /// 3. a ready barrier packet, or the kernel dispatch whose completion signal is
    ///    `target` (the signal the caller waits for or polls; or any kernel of the queue
    ///    whose address `target` is), at the front of its queue;
    /// 4. only if `any_kernel`: the first ready kernel dispatch, queues by priority (highest
    ///    first, as the GPU's dispatcher gives compute units to the highest-priority queue with
    ///    work), then in creation order.
    ///
    /// Kernels run to completion, so starting an unrelated kernel is the one step that can
    /// block the caller for long (a kernel spinning on a flag the host has yet to set):
    /// polls never do it, waits only when nothing in 1-3 can progress. Returns false when
    /// nothing could run, and always in threaded mode.
    ///
    /// The async handlers a step made ready run right after it, as the handler thread would
    /// run them: a waiter returns as soon as its signal completes, and a process that waits no
    /// more (one blocked on a pipe) would otherwise never run them.
    pub fn pump_step(&self, target: Option<u64>, any_kernel: bool) -> bool {
        let progressed = self.pump_step_once(target, any_kernel);
        if progressed {
            self.run_ready_handlers();
        }
        progressed
    }

    fn pump_step_once(&self, target: Option<u64>, any_kernel: bool) -> bool {
        if self.config.threaded {
            return false;
        }
        if self.run_ready_handlers() {
            return true;
        }
        if let Some(v) = &self.vtime {
            return self.pump_virtual(v, target, any_kernel);
        }
        for a in &self.agents {
            for e in &a.sdma {
                if e.ready_front().is_some() && e.step() {
                    return true;
                }
            }
        }
        let mut queues: Vec<_> = self.queues.read().values().cloned().collect();
        queues.sort_by_key(|q| (std::cmp::Reverse(q.priority.load(Ordering::Relaxed)), q.id));
        let cx = self.queue_context();
        let cheap_or_target = |q: &Arc<Queue>| match q.ready_front(&cx) {
            Some((t, _)) if t != HSA_PACKET_TYPE_KERNEL_DISPATCH => true,
            // A kernel completing the awaited signal, or any kernel of the polled queue (a
            // producer waiting for room).
            Some((_, completion)) => {
                target.is_some_and(|t| t != 0 && (t == completion || t == q.address()))
            }
            None => false,
        };
        if queues.iter().any(|q| cheap_or_target(q) && q.step(&cx)) {
            return true;
        }
        any_kernel && queues.iter().any(|q| q.step(&cx))
    }

    /// Deterministic mode under virtual time: the one unit of progress is the work virtual
    /// time commits next (entries commit in submission order, and work run out of that order
    /// would be committed out of it). A kernel runs only where [`Runtime::pump_step`]'s rules
    /// let a kernel run (`any_kernel`, or the kernel of `target`).
    fn pump_virtual(&self, v: &VirtualTime, target: Option<u64>, any_kernel: bool) -> bool {
        match v.next_to_run() {
            None => false,
            Some(Origin::Copy { node, engine }) => self
                .agents
                .iter()
                .find(|a| a.node == node)
                .and_then(|a| a.sdma.get(engine as usize))
                .is_some_and(|e| e.step()),
            Some(Origin::Packet { queue, .. }) => {
                let Ok(q) = self.queue(queue) else {
                    return false;
                };
                let cx = self.queue_context();
                let allowed = match q.ready_front(&cx) {
                    None => false,
                    Some((t, _)) if t != HSA_PACKET_TYPE_KERNEL_DISPATCH => true,
                    Some((_, completion)) => {
                        any_kernel
                            || target.is_some_and(|t| t != 0 && (t == completion || t == queue))
                    }
                };
                allowed && q.step(&cx)
            }
        }
    }

    /// A non-blocking observation of `key` (a signal or queue address) that saw `value`.
    /// In deterministic mode a single poll only observes: it must not run the device, or a
    /// query right after a launch could never report "not ready". A thread that keeps
    /// polling the same thing and seeing the same value is waiting in a loop, though: every
    /// [`POLLS_PER_PUMP`]th such poll in a row runs the cheap and targeted work of
    /// [`Runtime::pump_step`] (`key` as the target), and a loop that still sees nothing
    /// change after [`POLLS_PER_FULL_PUMP`] polls runs everything, as a wait would.
    /// Returns true if it ran anything (the caller then observes again). Threaded mode: no
    /// effect.
    pub fn poll(&self, key: u64, value: i64) -> bool {
        if self.config.threaded {
            return false;
        }
        thread_local! {
            /// (key, value, consecutive polls of that key seeing that value)
            static LAST: std::cell::Cell<(u64, i64, u32)> = const { std::cell::Cell::new((0, 0, 0)) };
        }
        let n = LAST.with(|last| {
            let (k, v, n) = last.get();
            let n = if k == key && v == value { n + 1 } else { 1 };
            last.set((key, value, if n >= POLLS_PER_FULL_PUMP { 0 } else { n }));
            n
        });
        if n >= POLLS_PER_FULL_PUMP {
            return self.pump();
        }
        if !n.is_multiple_of(POLLS_PER_PUMP) {
            return false;
        }
        let mut any = false;
        while self.pump_step(Some(key), false) {
            any = true;
        }
        any
    }

    /// Blocks until `done()` holds or the deadline passes (returns false then). Spins
    /// briefly first (the common short wait), then sleeps on the signal hub; in
    /// deterministic mode it runs pending work itself between checks.
    pub fn wait_until(&self, deadline: Option<Instant>, done: &mut dyn FnMut() -> bool) -> bool {
        self.wait_for(None, deadline, done)
    }

    /// [`Runtime::wait_until`] for a waiter on the signal `target` (deterministic mode runs
    /// the work that completes it first; see [`Runtime::pump_step`]).
    pub fn wait_for(
        &self,
        target: Option<u64>,
        deadline: Option<Instant>,
        done: &mut dyn FnMut() -> bool,
    ) -> bool {
        let spin_until = Instant::now() + Duration::from_micros(50);
        let mut checked = false;
        loop {
            if done() {
                return true;
            }
            if !checked {
                checked = true;
                if let Some(v) = &self.vtime {
                    report_long_wait(v, target);
                }
            }
            if self.pump_step(target, false) || self.pump_step(target, true) {
                continue;
            }
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                return done();
            }
            if now < spin_until {
                std::hint::spin_loop();
                std::thread::yield_now();
                continue;
            }
            let cap = Duration::from_millis(if self.config.threaded { 20 } else { 5 });
            let sleep = deadline.map_or(cap, |d| d.saturating_duration_since(now).min(cap));
            HUB.sleep_unless(done, sleep);
        }
    }

    // ---- hsa_amd_signal_async_handler ---------------------------------------------------

    pub fn add_async_handler(
        self: &Arc<Self>,
        signal: Arc<Signal>,
        condition: u32,
        value: i64,
        handler: SignalHandler,
        arg: *mut c_void,
    ) -> HsaResult {
        condition_holds(condition, 0, 0)?;
        self.handlers.add(AsyncHandler {
            signal,
            condition,
            value,
            handler,
            arg: arg as usize,
        });
        if self.config.threaded {
            let mut t = self.handler_thread.lock();
            if t.is_none() {
                let me = self.clone();
                *t = Some(
                    std::thread::Builder::new()
                        .name("hsasim-async-handlers".into())
                        .spawn(move || me.serve_handlers())
                        .map_err(|_| HsaError::OUT_OF_RESOURCES)?,
                );
            }
        }
        HUB.notify();
        Ok(())
    }

    fn any_handler_ready(&self) -> bool {
        self.handlers.any_ready()
    }

    /// Calls every handler whose condition holds (see [`AsyncHandlers::run_ready`]).
    pub(crate) fn run_ready_handlers(&self) -> bool {
        self.handlers.run_ready()
    }

    fn serve_handlers(&self) {
        while !self.stopping.load(Ordering::SeqCst) {
            // An internal panic must not end the thread: every later handler would be
            // silently never called.
            let ran = crate::error::catch_panic(|| self.run_ready_handlers()).unwrap_or_else(|why| {
                tracing::error!(target: "hsasim", "async signal handlers: internal error: {why}");
                eprintln!("hsasim: async signal handlers: internal error: {why}");
                true
            });
            if !ran {
                HUB.sleep_unless(
                    &mut || self.stopping.load(Ordering::SeqCst) || self.any_handler_ready(),
                    Duration::from_millis(50),
                );
            }
        }
    }
}

impl QueueHost for Runtime {
    fn queue_context(&self) -> QueueContext<'_> {
        Runtime::queue_context(self)
    }
}

//! Virtual time (`HSASIM_TIME=virtual`): the clock of a modelled GPU instead of the host's.
//!
//! The functional simulation runs as always. What changes is when its results become
//! visible and what time they carry: every packet and copy is an *entry*, numbered in the
//! order it was submitted (a doorbell, an async copy call). When its functional work is done
//! it waits to be *committed*: entries commit in submission order, each placed on the device
//! model (`hsasim_vtime`: compute units shared by all queues, SDMA engines) at the virtual
//! time it becomes ready, and only then is its completion signal written, with its virtual
//! timestamps. So the order in which host threads happened to finish the work changes
//! nothing: the same program gets the same virtual times in deterministic and threaded mode,
//! however loaded the host.
//!
//! An entry that cannot run yet (a barrier waiting on a signal that nothing committed has
//! written, or work queued behind it) is passed over rather than waited for: it is committed
//! when it is done, after everything submitted before it that could run.
//!
//! The host has a virtual clock too ([`host_now`]): it moves when the host submits work
//! (the model's submission cost) and when it sees a completion (a wait or a load that
//! observes a signal written at a later virtual time moves it there). A load of a signal
//! whose device writes lie in the host's virtual future reads the value without them: a query
//! right after a launch says "not ready", as on a GPU. A thread that keeps loading signals
//! without its clock moving is polling; after [`LOADS_BEFORE_SKIP`] loads that did not show
//! a write, its clock moves to the earliest such write.

use crate::signal::{Signal, HUB};
use hsasim_vtime::{CuUse, DeviceModel, Direction, DispatchShape, Gpu, Sdma, WorkgroupCost};
use parking_lot::Mutex;
use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Whether the runtime keeps virtual time: read on every signal operation, so a plain flag.
static ON: AtomicBool = AtomicBool::new(false);

/// The host's virtual clock, shared by all its threads (the model has one host).
static HOST_NS: AtomicU64 = AtomicU64::new(ORIGIN_NS);

/// Where the virtual clock starts: not at 0, which profiling interfaces read as "no
/// timestamp" (ROCr's never is 0, and hipshim's recorder drops such a copy as incomplete).
pub const ORIGIN_NS: u64 = 1_000_000_000;

/// The model's host wake-up cost (see [`host_waited`]).
static WAKE_NS: AtomicU64 = AtomicU64::new(0);

/// What the runtime reads of a packet when its doorbell rings.
pub struct SubmittedPacket {
    /// The handle of its completion signal (0: none).
    pub completes: u64,
    pub barrier: bool,
    /// A kernel dispatch (its submission is a launch).
    pub dispatch: bool,
}

thread_local! {
    /// While an async signal handler runs: its own clock, which starts at the virtual time of
    /// the signal write that made it run (plus the host's wake-up cost), not the host's.
    static HANDLER_NS: Cell<Option<u64>> = const { Cell::new(None) };
    /// (the thread's virtual time, loads since it last moved that did not show a write in
    /// the thread's virtual future).
    static HELD_BACK: Cell<(u64, u32)> = const { Cell::new((0, 0)) };
}

/// Loads by one thread that did not show a device write in its virtual future, with its clock
/// standing still, after which the thread is taken to be polling for it, and its clock moves
/// to the earliest such write. Counted over all signals: a thread polling a stream reads
/// several in turn (its packet count, the signals of work it waits for), and one that
/// showed nothing new must not restart the count, or a poll could spin for ever.
pub const LOADS_BEFORE_SKIP: u32 = 64;

/// How long (host time) a finished entry waits for the entries submitted before it to finish
/// before it gives up the order and commits anyway (with a warning): the case of a kernel that
/// spins on a flag the host sets only after waiting on later work. Never reached by programs
/// whose work only waits on signals.
const COMMIT_PATIENCE: Duration = Duration::from_secs(20);

/// How long (host time) a finished entry waits for a single-workgroup kernel submitted before
/// it that is still running and certainly ends after it could, before it passes that kernel
/// (see [`VirtualTime::passable_ahead`]). Such a kernel is nearly always one that waits for
/// the host (a flag the host sets once it saw the later work finish), and the host would
/// wait [`COMMIT_PATIENCE`] for every such look. Programs whose single-workgroup kernels run
/// this long by themselves may get different times from run to run.
const PASS_PATIENCE: Duration = Duration::from_secs(1);

/// Commits between two trims of the models' history.
const RETIRE_EVERY: u64 = 256;

pub fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// The calling thread's virtual time (ns).
pub fn host_now() -> u64 {
    HANDLER_NS
        .with(Cell::get)
        .unwrap_or_else(|| HOST_NS.load(Ordering::Acquire))
}

/// The calling thread saw something that happened at virtual time `at`.
pub fn host_observe(at: u64) {
    match HANDLER_NS.with(Cell::get) {
        Some(t) => HANDLER_NS.with(|h| h.set(Some(t.max(at)))),
        None => {
            HOST_NS.fetch_max(at, Ordering::AcqRel);
        }
    }
}

/// A host thread's wait ended on a write at virtual time `at`: a write in its future it
/// sees only after waking up ([`HostCosts::host_wake_ns`](hsasim_vtime::HostCosts)).
pub fn host_waited(at: u64) {
    let now = host_now();
    if at > now {
        host_observe(at.saturating_add(WAKE_NS.load(Ordering::Relaxed)));
    } else {
        host_observe(at);
    }
}

/// The calling thread spent `ns` of virtual time (a submission).
fn host_spend(ns: u64) {
    match HANDLER_NS.with(Cell::get) {
        Some(t) => HANDLER_NS.with(|h| h.set(Some(t.saturating_add(ns)))),
        None => {
            HOST_NS.fetch_add(ns, Ordering::AcqRel);
        }
    }
}

/// Runs an async signal handler on a clock of its own that starts at `at`; what it submits
/// is submitted then. The host's clock does not follow it: when a handler runs in host time
/// (on its thread, or on a waiting thread in deterministic mode) differs between runs; the
/// host sees the handler's work through the signals that work writes.
pub fn in_handler<R>(at: u64, f: impl FnOnce() -> R) -> R {
    if !on() {
        return f();
    }
    let outer = HANDLER_NS.with(|h| h.replace(Some(at)));
    let result = f();
    HANDLER_NS.with(|h| h.set(outer));
    result
}

/// Where an entry's work is done, so that the frontier can tell whether it may run now.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Origin {
    /// Packet `index` of the queue whose `amd_queue_t` is at `queue`.
    Packet { queue: u64, index: u64 },
    /// A job of copy engine `engine` of GPU `node`.
    Copy { node: u32, engine: u32 },
}

/// What a finished entry asks of the model.
pub enum Work {
    Dispatch {
        node: u32,
        shape: DispatchShape,
        costs: Vec<WorkgroupCost>,
        /// The packet's barrier bit: it starts only after everything before it on its queue
        /// completed.
        barrier: bool,
        cu_mask: Option<Vec<u32>>,
    },
    /// A barrier-AND/OR or barrier-value packet: done when its last (AND) or first (OR)
    /// dependency was written. The signals are read at commit, when their writes are final.
    Barrier {
        barrier: bool,
        deps: Vec<Arc<Signal>>,
        any: bool,
    },
    Copy {
        node: u32,
        engine: u32,
        bytes: u64,
        direction: Direction,
        deps: Vec<Arc<Signal>>,
    },
}

/// The signal a committed entry writes.
pub struct Completion {
    pub signal: Option<Arc<Signal>>,
    /// Write the start and end timestamps into it (every packet; copies when profiling).
    pub timestamps: bool,
}

/// An entry's virtual start and end (ns), once committed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Times {
    pub start: u64,
    pub end: u64,
}

enum State {
    Submitted,
    Done(Work, Completion),
    Committed(Times),
}

struct Entry {
    origin: Origin,
    submitted_at: u64,
    state: State,
    /// The handle of the signal it writes (0: none), for loads that must wait for it.
    completes: u64,
    /// A dispatch running now: its [`ExecConfig::progress`](hsasim_isa::ExecConfig::progress).
    progress: Option<Arc<AtomicU64>>,
    /// A running dispatch of one workgroup: one that later work may pass (see
    /// [`PASS_PATIENCE`]).
    lone: bool,
    /// A packet with the barrier bit: it starts only once every packet before it on its
    /// queue completed.
    barrier: bool,
}

/// A queue's front end on the virtual time line.
#[derive(Default)]
struct QueueLine {
    /// Packets up to this index (exclusive) were submitted by a doorbell.
    submitted_to: u64,
    /// When its packet processor can take the next packet.
    front_free: u64,
    /// When everything it started so far completes (what a barrier bit waits for).
    all_done: u64,
}

struct Inner {
    next_seq: u64,
    entries: BTreeMap<u64, Entry>,
    packets: HashMap<(u64, u64), u64>,
    queues: HashMap<u64, QueueLine>,
    gpus: HashMap<u32, Gpu>,
    /// Per GPU: which compute units had work when, for traces (see [`VirtualTime::cu_use`]).
    cu_use: HashMap<u32, CuUse>,
    engines: HashMap<u32, Sdma>,
    /// Per signal handle: the virtual times of its device writes (each a decrement by 1) that
    /// may lie in the host's virtual future. Counted rather than remembered as the value
    /// before them: the host also adds to such a signal directly in memory (a stream's count
    /// of packets in flight), and an earlier value would undo those adds.
    future_writes: HashMap<u64, Vec<u64>>,
    /// Entries not yet committed, by the signal they will write.
    pending_writes: HashMap<u64, u32>,
    commits: u64,
}

impl Inner {
    /// A new entry, submitted at `submitted_at`, that will write the signal `completes` (0:
    /// none): its number.
    fn add(&mut self, origin: Origin, submitted_at: u64, completes: u64) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.entries.insert(
            seq,
            Entry {
                origin,
                submitted_at,
                state: State::Submitted,
                completes,
                progress: None,
                lone: false,
                barrier: false,
            },
        );
        if let Origin::Packet { queue, index } = origin {
            self.packets.insert((queue, index), seq);
        }
        if completes != 0 {
            *self.pending_writes.entry(completes).or_default() += 1;
        }
        seq
    }
}

/// The device side of virtual time: entries, the frontier that commits them, the model.
pub struct VirtualTime {
    pub model: &'static DeviceModel,
    inner: Mutex<Inner>,
    /// Whether an entry at `Origin` cannot run now (installed by the runtime, which sees the
    /// queues and engines).
    blocked: OnceLock<Box<dyn Fn(Origin) -> bool + Send + Sync>>,
    /// The queues' hardware slots on the time line (installed by the runtime).
    slots: OnceLock<crate::virtual_slots::VirtualSlots>,
}

impl VirtualTime {
    pub fn new(model: &'static DeviceModel) -> VirtualTime {
        HOST_NS.store(ORIGIN_NS, Ordering::Release);
        WAKE_NS.store(model.host.host_wake_ns, Ordering::Relaxed);
        ON.store(true, Ordering::Release);
        VirtualTime {
            model,
            inner: Mutex::new(Inner {
                next_seq: 0,
                entries: BTreeMap::new(),
                packets: HashMap::new(),
                queues: HashMap::new(),
                gpus: HashMap::new(),
                cu_use: HashMap::new(),
                engines: HashMap::new(),
                future_writes: HashMap::new(),
                pending_writes: HashMap::new(),
                commits: 0,
            }),
            blocked: OnceLock::new(),
            slots: OnceLock::new(),
        }
    }

    pub fn install_slots(&self, slots: crate::virtual_slots::VirtualSlots) {
        // The host's clock starts no earlier than the shared runlist's last update.
        if let Some(at) = slots.joins_at() {
            host_observe(at);
        }
        let _ = self.slots.set(slots);
    }

    /// The queues' hardware slots on the time line.
    pub fn slots(&self) -> Option<&crate::virtual_slots::VirtualSlots> {
        self.slots.get()
    }

    /// Queue `queue_id` (its `amd_queue_t` at `address`) was created: a runlist update at the
    /// host's virtual time, seen by the entries submitted from now on. The host waits for it,
    /// as KFD's queue creation returns once the new runlist is mapped.
    pub fn queue_created(&self, address: u64, queue_id: u64, priority: u32) {
        if let Some(slots) = self.slots.get() {
            let inner = self.inner.lock();
            let done = slots.queue_created(address, queue_id, priority, host_now(), inner.next_seq);
            host_observe(done);
        }
    }

    /// The queue at `address` is being destroyed: a runlist update the host waits for.
    pub fn queue_removed(&self, address: u64) {
        if let Some(slots) = self.slots.get() {
            let inner = self.inner.lock();
            let done = slots.queue_removed(address, host_now(), inner.next_seq);
            host_observe(done);
        }
    }

    /// The queue at `address` got a new priority: a runlist update the host waits for.
    pub fn queue_priority(&self, address: u64, priority: u32) {
        if let Some(slots) = self.slots.get() {
            let inner = self.inner.lock();
            let done = slots.queue_priority(address, priority, host_now(), inner.next_seq);
            host_observe(done);
        }
    }

    /// When a packet of `origin`, entry `seq`, ready at `ready`, can start: once its queue
    /// holds a hardware slot.
    fn slot_start(&self, origin: Origin, seq: u64, ready: u64) -> u64 {
        match (origin, self.slots.get()) {
            (Origin::Packet { queue, .. }, Some(slots)) => slots.start(queue, ready, seq),
            _ => ready,
        }
    }

    pub fn install_blocked_check(&self, check: Box<dyn Fn(Origin) -> bool + Send + Sync>) {
        let _ = self.blocked.set(check);
    }

    /// The end of virtual time for this process (`hsa_shut_down`).
    pub fn retire(&self) {
        ON.store(false, Ordering::Release);
    }

    fn is_blocked(&self, origin: Origin) -> bool {
        self.blocked.get().is_some_and(|check| check(origin))
    }

    /// A producer rang `queue`'s doorbell with `value`: the packets up to it are submitted now.
    /// `packet_of(index)` reads a packet's completion signal handle (0: none), so that a
    /// host load of that signal waits for the packet's commit, and its barrier bit.
    /// Returns how many packets of the queue are submitted now (the processor takes packets
    /// below that).
    pub fn doorbell(
        &self,
        queue: u64,
        value: i64,
        packet_of: &dyn Fn(u64) -> SubmittedPacket,
    ) -> u64 {
        let mut inner = self.inner.lock();
        if let Some(slots) = self.slots.get() {
            // Runlist updates other processes of a device service made are seen from here on.
            slots.sync(inner.next_seq);
        }
        let from = inner.queues.entry(queue).or_default().submitted_to;
        let to = u64::try_from(value).map_or(0, |v| v + 1);
        if to <= from {
            return from;
        }
        let packets: Vec<SubmittedPacket> = (from..to).map(packet_of).collect();
        // The host's cost of the call that rang: up to the doorbell, so before the packets
        // reach the device.
        let host = &self.model.host;
        host_spend(if packets.iter().any(|p| p.dispatch) {
            host.host_launch_ns
        } else {
            host.host_submit_ns
        });
        let now = host_now();
        for (index, packet) in (from..to).zip(packets) {
            let seq = inner.add(Origin::Packet { queue, index }, now, packet.completes);
            if let Some(e) = inner.entries.get_mut(&seq) {
                e.barrier = packet.barrier;
            }
        }
        if let Some(line) = inner.queues.get_mut(&queue) {
            line.submitted_to = to;
        }
        to
    }

    /// When the dispatch at packet `index` of `queue` can start at the earliest (its queue's
    /// packets before it are committed by now, so this is exact but for the wait for compute
    /// units): the start of the clocks its waves read.
    pub fn estimated_start(&self, queue: u64, index: u64) -> u64 {
        let inner = self.inner.lock();
        let seq = inner.packets.get(&(queue, index)).copied();
        let submitted = seq
            .and_then(|seq| inner.entries.get(&seq))
            .map_or(0, |e| e.submitted_at);
        let (front_free, all_done) = inner
            .queues
            .get(&queue)
            .map_or((0, 0), |l| (l.front_free, l.all_done));
        // hipshim sets the barrier bit on its dispatches: assume it (the commit uses the
        // packet's own bit).
        let ready = self.packet_ready(submitted, (front_free, all_done), true);
        match (self.slots.get(), seq) {
            (Some(slots), Some(seq)) => slots.peek_start(queue, ready, seq),
            _ => ready,
        }
    }

    /// The dispatch of packet `index` of `queue` starts running: a counter of the most
    /// instructions one of its waves has executed, which it keeps up to date, so that loads
    /// of its signal know how late it ends at the earliest (see [`VirtualTime::host_load`]).
    /// None for a dispatch whose costs are bucketed (many workgroups share an entry's mean
    /// wave, so no one wave's count bounds the time).
    pub fn dispatch_running(
        &self,
        queue: u64,
        index: u64,
        workgroups: u64,
    ) -> Option<Arc<AtomicU64>> {
        if workgroups > hsasim_isa::MAX_COST_ENTRIES {
            return None;
        }
        let progress = Arc::new(AtomicU64::new(0));
        let mut inner = self.inner.lock();
        let seq = *inner.packets.get(&(queue, index))?;
        let entry = inner.entries.get_mut(&seq)?;
        entry.progress = Some(progress.clone());
        entry.lone = workgroups == 1;
        Some(progress)
    }

    /// The earliest virtual time entry `e` can write its signal, from what is known while it
    /// has not finished: a packet reaches its processor no sooner than the doorbell latency
    /// after its submission, and a running dispatch ends no sooner than its busiest wave's
    /// instructions at their cheapest.
    fn earliest_write(&self, e: &Entry) -> u64 {
        let fe = &self.model.front_end;
        let ran = e.progress.as_ref().map_or(0, |p| {
            let cycles = p.load(Ordering::Relaxed) * self.model.wave_costs.min_cycles();
            cycles * 1000 / u64::from(self.model.compute.shader_clock_mhz.max(1))
        });
        e.submitted_at + fe.doorbell_to_dispatch_ns + ran
    }

    /// When a packet submitted at `submitted_at` reaches its queue's packet processor, given
    /// the queue's (front free, all done) line and the packet's barrier bit.
    fn packet_ready(&self, submitted_at: u64, line: (u64, u64), barrier: bool) -> u64 {
        let ready = (submitted_at + self.model.front_end.doorbell_to_dispatch_ns).max(line.0);
        if barrier {
            ready.max(line.1)
        } else {
            ready
        }
    }

    /// An async copy submitted now on `engine` of `node`: its entry's number.
    pub fn submit_copy(&self, node: u32, engine: u32, completes: u64) -> u64 {
        host_spend(self.model.host.host_submit_ns);
        let now = host_now();
        self.inner
            .lock()
            .add(Origin::Copy { node, engine }, now, completes)
    }

    /// The entry of packet `index` of `queue`; one is made now for a packet that no doorbell
    /// submitted (a producer that never rings: its order is then the processor's).
    pub fn packet_entry(&self, queue: u64, index: u64) -> u64 {
        let mut inner = self.inner.lock();
        if let Some(&seq) = inner.packets.get(&(queue, index)) {
            return seq;
        }
        tracing::warn!(target: "hsasim", queue = format_args!("{queue:#x}"), index,
            "virtual time: packet taken without a doorbell for it; its place in virtual time follows the packet processor");
        inner.add(Origin::Packet { queue, index }, host_now(), 0)
    }

    /// Entry `seq` finished its functional work. Returns its times once committed (the
    /// completion signal is then written): at once if everything submitted before it is
    /// committed or cannot run; otherwise, with `wait`, after those commit (threaded mode:
    /// other threads do them). Without `wait` (deterministic mode, which must not wait for
    /// work only this thread can do) it is committed at once, out of turn. `None`: the entry
    /// is unknown (its queue was forgotten).
    pub fn finish(
        &self,
        seq: u64,
        work: Work,
        completion: Completion,
        wait: bool,
    ) -> Option<Times> {
        {
            let mut inner = self.inner.lock();
            let handle = completion.signal.as_ref().map_or(0, |s| s.handle().handle);
            let entry = inner.entries.get_mut(&seq)?;
            if handle != 0 && entry.completes == 0 {
                entry.completes = handle;
                *inner.pending_writes.entry(handle).or_default() += 1;
            }
            if let Some(entry) = inner.entries.get_mut(&seq) {
                entry.state = State::Done(work, completion);
            }
            self.advance(&mut inner);
            if let Some(t) = self.take_committed(&mut inner, seq) {
                return Some(t);
            }
        }
        if !wait {
            // Deterministic mode runs entries in the frontier's order (`next_to_run`), so this
            // is work run out of turn by some other path: commit it now rather than leave its
            // completion unwritten.
            let mut inner = self.inner.lock();
            tracing::debug!(target: "hsasim", seq, "virtual time: entry committed out of turn");
            self.commit(&mut inner, seq);
            let t = self.take_committed(&mut inner, seq);
            drop(inner);
            HUB.notify();
            return t;
        }
        let since = Instant::now();
        loop {
            // The hub calls this under its lock, and a commit notifies the hub under ours:
            // only a look that does not wait for our lock is safe here.
            HUB.sleep_unless(
                &mut || {
                    self.inner.try_lock().is_some_and(|inner| {
                        matches!(
                            inner.entries.get(&seq).map(|e| &e.state),
                            Some(State::Committed(_)) | None
                        )
                    })
                },
                Duration::from_millis(10),
            );
            let mut inner = self.inner.lock();
            self.advance(&mut inner);
            if let Some(t) = self.take_committed(&mut inner, seq) {
                return Some(t);
            }
            if !inner.entries.contains_key(&seq) {
                return None;
            }
            if since.elapsed() > PASS_PATIENCE {
                if let Some(passing) = self.passable_ahead(&inner, seq) {
                    tracing::debug!(target: "hsasim", seq, ?passing,
                        "virtual time: passing single-workgroup kernels still running (virtual times of this run may differ from another run's)");
                    let done_ahead: Vec<u64> = inner
                        .entries
                        .range(..seq)
                        .filter(|(_, e)| matches!(e.state, State::Done(..)))
                        .map(|(&s, _)| s)
                        .collect();
                    for ahead in done_ahead {
                        self.commit(&mut inner, ahead);
                    }
                    self.commit(&mut inner, seq);
                    drop(inner);
                    HUB.notify();
                    return self.take_committed(&mut self.inner.lock(), seq);
                }
            }
            if since.elapsed() > COMMIT_PATIENCE {
                let ahead = inner
                    .entries
                    .iter()
                    .take_while(|(&s, _)| s < seq)
                    .find(|(_, e)| matches!(e.state, State::Submitted))
                    .map(|(_, e)| e.origin);
                tracing::warn!(target: "hsasim", ?ahead,
                    "virtual time: work submitted earlier has not finished for {} s; committing entry {seq} out of order (virtual times of this run may differ from another run's)",
                    COMMIT_PATIENCE.as_secs());
                self.commit(&mut inner, seq);
                return self.take_committed(&mut inner, seq);
            }
        }
    }

    /// The running single-workgroup kernels that hold up entry `seq`, if nothing else does:
    /// every entry before it not committed is finished (it commits first), cannot run, is
    /// such a kernel that certainly ends after `seq` could write, or is a packet queued with
    /// the barrier bit behind one on its queue. Passing one of them changes what the model
    /// knows of the other by one workgroup's compute unit.
    fn passable_ahead(&self, inner: &Inner, seq: u64) -> Option<Vec<Origin>> {
        let own = self.earliest_write(inner.entries.get(&seq)?);
        let mut held = std::collections::HashSet::new();
        let mut passing = Vec::new();
        for e in inner.entries.range(..seq).map(|(_, e)| e) {
            match e.state {
                State::Committed(_) | State::Done(..) => continue,
                State::Submitted if self.is_blocked(e.origin) => continue,
                State::Submitted => {}
            }
            let Origin::Packet { queue, .. } = e.origin else {
                return None;
            };
            if e.lone && e.progress.is_some() && self.earliest_write(e) > own {
                held.insert(queue);
                passing.push(e.origin);
            } else if !(e.barrier && held.contains(&queue)) {
                return None;
            }
        }
        (!passing.is_empty()).then_some(passing)
    }

    /// Packet `index` of `queue` failed: when the client may hear of it, once the packets
    /// ahead of it on its queue are done (they are placed already: a queue's processor waits
    /// for each packet's placement before it takes the next). The failure is placed at once,
    /// out of turn: waiting for everything submitted before it could wait for a kernel that
    /// spins until the host acts on the failure. The host's clock moves there: what the host
    /// does after hearing of the failure it does after it, and every completion on the queue
    /// before the failure is visible to it. Where other queues' work stands then depends on
    /// the host's threads, so a faulting program's virtual times may differ between runs.
    pub fn fault(&self, queue: u64, index: u64) -> u64 {
        let seq = self.packet_entry(queue, index);
        let work = Work::Barrier {
            barrier: true,
            deps: Vec::new(),
            any: false,
        };
        let completion = Completion {
            signal: None,
            timestamps: false,
        };
        let at = self
            .finish(seq, work, completion, false)
            .map_or_else(host_now, |t| t.start);
        host_observe(at);
        at
    }

    /// What the frontier waits for, for a log line when a host wait lasts long: the first
    /// entries not committed, with whether each can run now.
    pub fn stall_report(&self, describe: &dyn Fn(Origin) -> String) -> String {
        let inner = self.inner.lock();
        let mut lines = Vec::new();
        for (seq, e) in inner
            .entries
            .iter()
            .filter(|(_, e)| !matches!(e.state, State::Committed(_)))
            .take(8)
        {
            let state = match e.state {
                State::Submitted if self.is_blocked(e.origin) => "cannot run",
                State::Submitted => "not finished",
                State::Done(..) => "finished",
                State::Committed(_) => "committed",
            };
            lines.push(format!(
                "entry {seq} {:?} {state}, writes signal {:#x} ({})",
                e.origin,
                e.completes,
                describe(e.origin)
            ));
        }
        let pending = inner.entries.len();
        format!(
            "{pending} entries kept, host clock {} ns: {}",
            host_now(),
            if lines.is_empty() {
                "none waiting".to_string()
            } else {
                lines.join("; ")
            }
        )
    }

    /// In deterministic mode: the entry the frontier waits for, if it can run (what the
    /// pump runs next).
    pub fn next_to_run(&self) -> Option<Origin> {
        let inner = self.inner.lock();
        inner
            .entries
            .values()
            .filter(|e| matches!(e.state, State::Submitted))
            .map(|e| e.origin)
            .find(|&o| !self.is_blocked(o))
    }

    /// A queue went away: its packets will never be done (or written), and the frontier
    /// stops waiting for them.
    pub fn forget_queue(&self, queue: u64) {
        let mut inner = self.inner.lock();
        let gone: Vec<u64> = inner
            .entries
            .iter()
            .filter(|(_, e)| matches!(e.origin, Origin::Packet { queue: q, .. } if q == queue))
            .map(|(&s, _)| s)
            .collect();
        for seq in gone {
            if let Some(e) = inner.entries.remove(&seq) {
                Self::unpend(&mut inner, e.completes);
                if let Origin::Packet { queue, index } = e.origin {
                    inner.packets.remove(&(queue, index));
                }
            }
        }
        // A queue created later may get the same address: it starts a line of its own.
        inner.queues.remove(&queue);
        self.advance(&mut inner);
        drop(inner);
        HUB.notify();
    }

    fn unpend(inner: &mut Inner, handle: u64) {
        if handle == 0 {
            return;
        }
        if let Some(n) = inner.pending_writes.get_mut(&handle) {
            *n -= 1;
            if *n == 0 {
                inner.pending_writes.remove(&handle);
            }
        }
    }

    fn take_committed(&self, inner: &mut Inner, seq: u64) -> Option<Times> {
        match inner.entries.get(&seq).map(|e| &e.state) {
            Some(State::Committed(t)) => {
                let t = *t;
                if let Some(e) = inner.entries.remove(&seq) {
                    if let Origin::Packet { queue, index } = e.origin {
                        inner.packets.remove(&(queue, index));
                    }
                }
                Some(t)
            }
            _ => None,
        }
    }

    /// The frontier: commits finished entries in submission order, passing over those that
    /// cannot run now, and stops at the first that can run but has not finished.
    fn advance(&self, inner: &mut Inner) {
        let mut committed = false;
        let seqs: Vec<u64> = inner
            .entries
            .iter()
            .filter(|(_, e)| !matches!(e.state, State::Committed(_)))
            .map(|(&s, _)| s)
            .collect();
        for seq in seqs {
            let Some(entry) = inner.entries.get(&seq) else {
                continue;
            };
            match entry.state {
                State::Done(..) => {
                    self.commit(inner, seq);
                    committed = true;
                }
                State::Submitted => {
                    if !self.is_blocked(entry.origin) {
                        break;
                    }
                }
                State::Committed(_) => {}
            }
        }
        if committed {
            HUB.notify();
        }
    }

    /// Places a finished entry on the model and writes its completion signal.
    fn commit(&self, inner: &mut Inner, seq: u64) {
        let Some(entry) = inner.entries.get_mut(&seq) else {
            return;
        };
        let State::Done(work, completion) = std::mem::replace(&mut entry.state, State::Submitted)
        else {
            return;
        };
        let (origin, submitted_at, completes) = (entry.origin, entry.submitted_at, entry.completes);
        let front = &self.model.front_end;
        let times = match &work {
            Work::Dispatch {
                node,
                shape,
                costs,
                barrier,
                cu_mask,
            } => {
                let line = self.line(inner, origin);
                let ready = self.packet_ready(submitted_at, line, *barrier);
                let ready = self.slot_start(origin, seq, ready);
                let gpu = inner
                    .gpus
                    .entry(*node)
                    .or_insert_with(|| Gpu::new(self.model));
                let placed = gpu.place(ready, shape, costs, cu_mask.as_deref());
                inner
                    .cu_use
                    .entry(*node)
                    .or_default()
                    .record(&placed.cu_busy);
                let times = Times {
                    start: placed.start_ns,
                    end: placed.end_ns + front.completion_signal_ns,
                };
                self.advance_line(inner, origin, ready + front.packet_ns, times.end);
                times
            }
            Work::Barrier { barrier, deps, any } => {
                let line = self.line(inner, origin);
                let ready = self.packet_ready(submitted_at, line, *barrier);
                let written: Vec<u64> = deps.iter().map(|s| s.virtual_time()).collect();
                let deps_at = if *any {
                    written.iter().copied().min().unwrap_or(0)
                } else {
                    written.iter().copied().max().unwrap_or(0)
                };
                // Its queue must hold a slot when the barrier can complete.
                let start = self.slot_start(origin, seq, ready.max(deps_at));
                let times = Times {
                    start,
                    end: start + front.barrier_ns + front.completion_signal_ns,
                };
                self.advance_line(inner, origin, start + front.packet_ns, times.end);
                times
            }
            Work::Copy {
                node,
                engine,
                bytes,
                direction,
                deps,
            } => {
                let deps_at = deps.iter().map(|s| s.virtual_time()).max().unwrap_or(0);
                let engines = inner
                    .engines
                    .entry(*node)
                    .or_insert_with(|| Sdma::new(self.model));
                let t = engines.copy(submitted_at.max(deps_at), *bytes, *direction, Some(*engine));
                Times {
                    start: t.start_ns,
                    end: t.end_ns,
                }
            }
        };
        if let Some(signal) = &completion.signal {
            if completion.timestamps {
                signal.set_timestamps(times.start, times.end);
            }
            signal.set_virtual_time(times.end);
            signal.rmw(Ordering::Release, |v, o| v.fetch_sub(1, o));
            let host = HOST_NS.load(Ordering::Acquire);
            let writes = inner
                .future_writes
                .entry(signal.handle().handle)
                .or_default();
            writes.retain(|&at| at > host);
            writes.push(times.end);
        }
        Self::unpend(inner, completes);
        if let Some(entry) = inner.entries.get_mut(&seq) {
            entry.state = State::Committed(times);
        }
        inner.commits += 1;
        if inner.commits.is_multiple_of(RETIRE_EVERY) {
            // Nothing submitted from now on can be ready before the host's clock, nor anything
            // already submitted before its submission: the models may forget what ended earlier.
            let horizon = inner
                .entries
                .values()
                .filter(|e| !matches!(e.state, State::Committed(_)))
                .map(|e| e.submitted_at)
                .min()
                .unwrap_or(u64::MAX)
                .min(HOST_NS.load(Ordering::Acquire));
            for gpu in inner.gpus.values_mut() {
                gpu.retire_before(horizon);
            }
            for engines in inner.engines.values_mut() {
                engines.retire_before(horizon);
            }
            if let Some(slots) = self.slots.get() {
                let min_seq = inner
                    .entries
                    .iter()
                    .find(|(_, e)| !matches!(e.state, State::Committed(_)))
                    .map_or(inner.next_seq, |(&s, _)| s);
                slots.retire_before(horizon, min_seq);
            }
        }
    }

    /// (front free, all done) of the queue a packet came from.
    fn line(&self, inner: &mut Inner, origin: Origin) -> (u64, u64) {
        match origin {
            Origin::Packet { queue, .. } => {
                let l = inner.queues.entry(queue).or_default();
                (l.front_free, l.all_done)
            }
            Origin::Copy { .. } => (0, 0),
        }
    }

    fn advance_line(&self, inner: &mut Inner, origin: Origin, front_free: u64, done: u64) {
        if let Origin::Packet { queue, .. } = origin {
            let l = inner.queues.entry(queue).or_default();
            l.front_free = l.front_free.max(front_free);
            l.all_done = l.all_done.max(done);
        }
    }

    /// A host thread read `value` from the signal `handle`: the value it may see at its
    /// virtual time. Waits first for work that will write the signal and is not committed
    /// (`settle`: threaded mode sleeps, deterministic mode runs work), so that the answer does
    /// not depend on how far the host's threads got.
    pub fn host_load(
        &self,
        handle: u64,
        load: &dyn Fn() -> i64,
        deterministic: bool,
        settle: &mut dyn FnMut() -> bool,
    ) -> i64 {
        let since = Instant::now();
        while self.write_coming(handle, host_now()) {
            if since.elapsed() > COMMIT_PATIENCE {
                break;
            }
            if deterministic {
                if !settle() {
                    break;
                }
            } else {
                // As in `finish`: no waiting for our lock under the hub's.
                HUB.sleep_unless(
                    &mut || {
                        self.inner
                            .try_lock()
                            .is_some_and(|i| !i.pending_writes.contains_key(&handle))
                    },
                    Duration::from_millis(10),
                );
            }
        }
        let value = load();
        let now = host_now();
        let unseen: Vec<u64> = {
            let mut inner = self.inner.lock();
            match inner.future_writes.get_mut(&handle) {
                Some(writes) => {
                    let host = HOST_NS.load(Ordering::Acquire);
                    writes.retain(|&at| at > host);
                    let unseen = writes.iter().copied().filter(|&at| at > now).collect();
                    if writes.is_empty() {
                        inner.future_writes.remove(&handle);
                    }
                    unseen
                }
                None => Vec::new(),
            }
        };
        let (since, n) = HELD_BACK.with(Cell::get);
        let n = if since == now { n + 1 } else { 1 };
        let Some(&earliest) = unseen.iter().min() else {
            // Deterministic mode: the device runs only when the host polls (the caller's
            // pump), so a poll of work not yet run counts towards the skip as well; the count
            // is then the same on every run. Threaded: how many loads come before the
            // device commits depends on the host's threads, so only loads that held back a
            // committed write count.
            if deterministic && self.inner.lock().pending_writes.contains_key(&handle) {
                HELD_BACK.with(|h| h.set((now, n)));
            }
            return value;
        };
        if n >= LOADS_BEFORE_SKIP {
            host_observe(earliest);
            HELD_BACK.with(|h| h.set((host_now(), 0)));
            // Each write still unseen took 1 off.
            value + unseen.iter().filter(|&&at| at > earliest).count() as i64
        } else {
            HELD_BACK.with(|h| h.set((now, n)));
            value + unseen.len() as i64
        }
    }

    /// Whether copy engine `engine` of GPU `node` is idle at the calling thread's virtual
    /// time (what `hsa_amd_memory_copy_engine_status` answers under virtual time: which
    /// engines the host's own simulation threads happen to have finished with differs from
    /// run to run). Waits first, as [`VirtualTime::host_load`] does, for the engine's copies
    /// that may end before then to be committed.
    pub fn engine_idle(
        &self,
        node: u32,
        engine: u32,
        deterministic: bool,
        settle: &mut dyn FnMut() -> bool,
    ) -> bool {
        let on_engine = |e: &Entry| matches!(e.origin, Origin::Copy { node: n, engine: g } if n == node && g == engine);
        let since = Instant::now();
        loop {
            let now = host_now();
            let coming = self.inner.lock().entries.values().any(|e| {
                on_engine(e)
                    && match e.state {
                        State::Done(..) => true,
                        State::Submitted => {
                            !self.is_blocked(e.origin) && self.earliest_write(e) <= now
                        }
                        State::Committed(_) => false,
                    }
            });
            if !coming || since.elapsed() > COMMIT_PATIENCE {
                break;
            }
            if deterministic {
                if !settle() {
                    break;
                }
            } else {
                HUB.sleep_unless(&mut || false, Duration::from_millis(1));
            }
        }
        let now = host_now();
        let inner = self.inner.lock();
        let queued = inner
            .entries
            .values()
            .any(|e| on_engine(e) && !matches!(e.state, State::Committed(_)));
        let copying = inner
            .engines
            .get(&node)
            .is_some_and(|s| s.busy_at(engine, now));
        !queued && !copying
    }

    /// Whether work that will write the signal `handle` is submitted, not committed, and
    /// able to run (work that waits on something, say a value the host has yet to write, is
    /// not waited for).
    ///
    /// Nor is work that certainly writes it after the host's virtual time `now`: a kernel
    /// still running (one that spins until the host writes memory, say) once its waves have
    /// run long enough. The host then reads the value from before that write, as it would
    /// after waiting, without waiting.
    fn write_coming(&self, handle: u64, now: u64) -> bool {
        let inner = self.inner.lock();
        if !inner.pending_writes.contains_key(&handle) {
            return false;
        }
        // Entries in submission order, which on one queue is packet order: a packet with the
        // barrier bit ends no sooner than the packets before it on its queue, so a kernel
        // that runs on and on bounds the packets queued behind it too.
        let mut queue_bound: HashMap<u64, u64> = HashMap::new();
        for e in inner.entries.values() {
            let bound = match e.origin {
                Origin::Packet { queue, .. } if !matches!(e.state, State::Committed(_)) => {
                    let ahead = queue_bound.get(&queue).copied().unwrap_or(0);
                    let own = self.earliest_write(e);
                    let bound = if e.barrier { own.max(ahead) } else { own };
                    queue_bound.insert(queue, ahead.max(bound));
                    bound
                }
                _ => self.earliest_write(e),
            };
            let coming = e.completes == handle
                && match e.state {
                    State::Done(..) => true,
                    State::Submitted => !self.is_blocked(e.origin) && bound <= now,
                    State::Committed(_) => false,
                };
            if coming {
                return true;
            }
        }
        false
    }

    /// The number of compute units with work over virtual time, per GPU node, for traces:
    /// `(node, time, CUs)` steps in time order per node, each holding until the node's next
    /// (the last is 0), of the dispatches committed so far; and whether recording stopped at
    /// its bound ([`hsasim_vtime::MAX_CU_INTERVALS`]).
    pub fn cu_use(&self) -> (Vec<(u32, u64, u32)>, bool) {
        let inner = self.inner.lock();
        let mut nodes: Vec<_> = inner.cu_use.iter().collect();
        nodes.sort_by_key(|(node, _)| **node);
        let truncated = nodes.iter().any(|(_, u)| u.truncated);
        let steps = nodes
            .into_iter()
            .flat_map(|(&node, u)| u.samples().into_iter().map(move |(at, n)| (node, at, n)))
            .collect();
        (steps, truncated)
    }

    /// The host replaced the value of the signal `handle` (it is the host's from now on).
    pub fn host_wrote(&self, handle: u64) {
        self.inner.lock().future_writes.remove(&handle);
    }
}

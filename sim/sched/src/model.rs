//! The scheduler model itself: a runlist of every user queue, a fixed number of hardware queue
//! slots (HQDs), and the state machine that maps queues into slots, evicts them, rebuilds the
//! runlist and time-slices it. Everything here is plain data (`repr(C)`, no pointers) driven by
//! explicit times, so the same table works inside one process, in shared memory for several,
//! and under a fake clock in the tests.
//!
//! ## What it models, and from where
//! - **Oversubscription** is decided as KFD's packet manager decides it (`pm_calc_rlib_size` in
//!   `amdkfd/kfd_packet_manager.c`): the runlist is oversubscribed when more processes have
//!   queues than `max_proc_per_quantum`, or more compute queues exist than the hardware queue
//!   slots KFD owns (`get_queues_num`). `max_proc_per_quantum` is the `hws_max_conc_proc`
//!   module parameter capped by the VMIDs KFD owns (8 by default: [`Params::max_procs`]);
//!   on GFX 9.4.3 (MI300) in CPX partition mode with several nodes KFD halves those VMIDs.
//! - **Time slicing** then goes round the runlist by process, as the hardware scheduler does
//!   with a chained (oversubscribed) runlist: each turn maps as many whole processes as fit
//!   in the process limit and the slots, for one quantum. KFD's `MAP_PROCESS` packet carries
//!   a process quantum; MES's path documents 10 ms per process, the default here.
//! - **Runlist updates** (a queue created, destroyed or reprioritised, a process gone): with
//!   [`Params::serial_updates`] each one is applied on its own, as KFD does through the HIQ
//!   (unmap everything, send the new runlist, which costs [`Params::update_ns`], map again),
//!   one after another; without it, all pending changes apply at once and only the queues that
//!   lose their slot are unmapped.
//! - **Priorities** order the runlist: processes by their highest queue priority, then by
//!   arrival; within a process, queues by priority. A turn starts where the last one stopped,
//!   so every process gets turns whatever its priority.
//!
//! ## What it does not model
//! - Preemption inside a kernel: hardware preempts a running dispatch (saving its waves, CWSR)
//!   when its queue is unmapped; here a queue leaves its slot only between packets, so a
//!   kernel that outlasts the quantum keeps its slot until it ends.
//! - Contention between mapped queues for compute units, pipe arbitration and the doorbell
//!   path: every mapped queue runs as if alone, unless a device service models a budget of
//!   compute units ([`Params::cu_budget`], off by default): then each dispatch of an
//!   attached process holds up to one unit per workgroup (at least one) while it runs, and
//!   waits while none is free. That first model has no per-CU occupancy (waves per SIMD, LDS,
//!   registers), no queue-priority or pipe order among waiting dispatches, and the ledger's
//!   run share counts a dispatch's wait for units as running time.
//!
//! ## Where a queue's work is seen
//! A queue of a process attached to a device service has a hardware queue descriptor
//! ([`Hqd`]): where its ring, its read and write indices and its doorbell lie in the shared
//! device memory and segment. The service reads them, as the command processor reads a
//! mapped queue's descriptor, and decides from them whether the queue has work
//! ([`ring_has_work`], [`Table::observe_ring`]); the process's packet processor still reports
//! the packets it starts and ends, and still executes them (kernarguments, code objects and
//! host memory live in that process).
//! - The costs ([`Params::map_ns`], [`Params::unmap_ns`], [`Params::update_ns`]) are
//!   assumptions to be replaced by measurements; no public source states them.

/// Most processes a table tracks.
pub const MAX_PROCS: usize = 64;
/// Most queues a table tracks (all processes together).
pub const MAX_QUEUES: usize = 512;
/// Most hardware queue slots.
pub const MAX_SLOTS: usize = 256;
/// Largest compute-unit budget (MI300X has 304 CUs).
pub const MAX_CU_BUDGET: u32 = 4096;

/// The scheduler's parameters.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Hardware queue slots (HQDs) for user compute queues.
    pub slots: u32,
    /// Pipes the slots are split across (a slot's pipe is `slot / (slots / pipes)`).
    pub pipes: u32,
    /// Processes mapped at once (KFD's `max_proc_per_quantum`).
    pub max_procs: u32,
    /// 1: runlist updates one at a time, each unmapping everything and costing `update_ns`.
    pub serial_updates: u32,
    /// 1: time slices pass over queues with no work (not what the hardware scheduler does; a
    /// what-if).
    pub skip_idle: u32,
    /// Compute units the dispatches of every attached process draw from (a device service's
    /// option; 0, the default: not modelled, each dispatch runs as if alone). See
    /// [`crate::device::Device::take_compute_units`].
    pub cu_budget: u32,
    /// How long a process keeps its slots while the runlist is oversubscribed.
    pub quantum_ns: u64,
    /// Mapping a queue into a slot (loading its descriptor).
    pub map_ns: u64,
    /// Unmapping a queue (preempting and saving it) once its running packet ended.
    pub unmap_ns: u64,
    /// Building and sending a new runlist.
    pub update_ns: u64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            slots: 32,
            pipes: 4,
            max_procs: 8,
            serial_updates: 1,
            skip_idle: 0,
            cu_budget: 0,
            quantum_ns: 10_000_000,
            map_ns: 20_000,
            unmap_ns: 50_000,
            update_ns: 200_000,
        }
    }
}

impl Params {
    /// The parameters with every value in its range (a shared table may come from anywhere).
    pub fn clamped(mut self) -> Params {
        self.slots = self.slots.clamp(1, MAX_SLOTS as u32);
        self.pipes = self.pipes.clamp(1, self.slots);
        self.max_procs = self.max_procs.clamp(1, MAX_PROCS as u32);
        self.serial_updates = self.serial_updates.min(1);
        self.skip_idle = self.skip_idle.min(1);
        self.cu_budget = self.cu_budget.min(MAX_CU_BUDGET);
        self.quantum_ns = self.quantum_ns.max(1_000);
        self
    }

    pub fn pipe_of(&self, slot: u32) -> u32 {
        let per_pipe = (self.slots / self.pipes).max(1);
        (slot / per_pipe).min(self.pipes - 1)
    }
}

/// What the scheduler has done so far.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub runlist_updates: u64,
    pub maps: u64,
    pub unmaps: u64,
    pub time_slices: u64,
    pub slots_in_use: u64,
    pub max_slots_in_use: u64,
    /// 1 while the current runlist is oversubscribed.
    pub oversubscribed: u64,
    /// Runlists built oversubscribed.
    pub oversubscribed_updates: u64,
    pub packets_started: u64,
    /// Times a queue with a packet ready found itself without a slot.
    pub waits: u64,
    pub processes_reaped: u64,
    pub queues_registered: u64,
    /// Queues removed because their process died.
    pub queues_reaped: u64,
    /// Times the scheduler found work in a queue's ring (doorbell and write index past the
    /// read index) before its process reported a packet.
    pub work_from_doorbells: u64,
    /// Time packets ran (summed over queues).
    pub busy_ns: u64,
    /// Time queues had a packet ready but no slot (summed over queues).
    pub wait_ns: u64,
}

/// What one process's queues did, summed over them; kept after the process leaves so that a
/// benchmark can read it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ledger {
    pub pid: u32,
    pub reserved: u32,
    pub packets: u64,
    pub busy_ns: u64,
    pub wait_ns: u64,
}

impl Ledger {
    /// The share of its queues' time with work that they could run: 1 when a packet never
    /// waited for a slot. With every mapped queue running as if alone (see the module
    /// comment), this is the throughput the scheduler left the process, relative to running
    /// alone.
    pub fn run_share(&self) -> f64 {
        let total = self.busy_ns + self.wait_ns;
        if total == 0 {
            1.0
        } else {
            self.busy_ns as f64 / total as f64
        }
    }
}

/// Where a queue stands with its slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum QueueState {
    Unmapped = 0,
    Mapping = 1,
    Mapped = 2,
    Unmapping = 3,
}

impl QueueState {
    fn from_u32(v: u32) -> QueueState {
        match v {
            1 => QueueState::Mapping,
            2 => QueueState::Mapped,
            3 => QueueState::Unmapping,
            _ => QueueState::Unmapped,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            QueueState::Unmapped => "unmapped",
            QueueState::Mapping => "mapping",
            QueueState::Mapped => "mapped",
            QueueState::Unmapping => "unmapping",
        }
    }
}

/// Where a queue's state lies, as the hardware queue descriptor (MQD) KFD writes tells the
/// command processor: the ring (`CP_HQD_PQ_BASE`, the size in `CP_HQD_PQ_CONTROL`), where
/// the read index is reported (`CP_HQD_PQ_RPTR_REPORT_ADDR`) and where the write index is
/// polled (`CP_HQD_PQ_WPTR_POLL_ADDR`): addresses in the device memory, the same in every
/// attached process. The doorbell is the segment's doorbell cell of the queue's runlist
/// index. All zero for a queue whose ring is private (a scheduler of one process).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hqd {
    pub ring_base: u64,
    pub ring_bytes: u64,
    pub read_index_addr: u64,
    pub write_index_addr: u64,
}

impl Hqd {
    pub fn is_shared(&self) -> bool {
        self.ring_bytes != 0
    }
}

/// Whether a ring holds packets the command processor should fetch: the producer reserved
/// past the read index (`write > read`) and rang the doorbell with a packet id at or past it
/// (HSA's doorbell carries the id of the last packet published).
pub fn ring_has_work(read: u64, write: u64, doorbell: i64) -> bool {
    write > read && doorbell >= 0 && doorbell as u64 >= read
}

/// One user queue in the runlist.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct QueueEntry {
    pub used: u32,
    pub pid: u32,
    state: u32,
    /// The slot it holds (mapping, mapped or unmapping), or -1.
    pub slot: i32,
    pub queue_id: u64,
    /// Offset of its doorbell in its process's doorbell page.
    pub doorbell_offset: u64,
    pub priority: u32,
    /// A packet is running.
    pub busy: u32,
    /// A packet is ready (set when the processor asks for its slot, cleared when the ring
    /// runs empty).
    pub pending: u32,
    /// Must leave its slot at the next packet boundary.
    pub evict: u32,
    /// In the set the current runlist turn maps.
    pub selected: u32,
    /// Waiting for a slot (for the `waits` counter).
    pub waiting: u32,
    pub seq: u64,
    /// When the current packet started, or the current wait for a slot began.
    pub since_ns: u64,
    /// When the current mapping or unmapping completes.
    pub until_ns: u64,
    /// Where its ring, indices and doorbell are (device service only).
    pub hqd: Hqd,
}

impl QueueEntry {
    pub fn state(&self) -> QueueState {
        QueueState::from_u32(self.state)
    }
    fn set_state(&mut self, s: QueueState) {
        self.state = s as u32;
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ProcEntry {
    pub used: u32,
    pub pid: u32,
    pub seq: u64,
    /// Rotation inside a process with more queues than slots.
    pub queue_cursor: u64,
}

const UPDATE_IDLE: u32 = 0;
const UPDATE_DRAINING: u32 = 1;
const UPDATE_SENDING: u32 = 2;

/// One queue of a runlist, with what orders it ([`crate::timeline`] orders runlists by it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Member {
    pub pid: u32,
    pub queue_id: u64,
    pub priority: u32,
    /// Arrival of its process (smaller first).
    pub proc_seq: u64,
    /// Arrival of the queue (smaller first).
    pub seq: u64,
}

/// Something the scheduler did, for the timeline (`hipshim trace merge --sched`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A queue took a slot (mapping starts).
    Map {
        at_ns: u64,
        pid: u32,
        queue_id: u64,
        slot: u32,
    },
    /// A queue gave its slot back (unmapping done).
    Unmap {
        at_ns: u64,
        pid: u32,
        queue_id: u64,
        slot: u32,
    },
    RunlistUpdate {
        at_ns: u64,
        oversubscribed: bool,
        queues: u32,
        processes: u32,
    },
    TimeSlice {
        at_ns: u64,
    },
}

/// The whole scheduler state: parameters, counters, the runlist and the slots.
#[repr(C)]
pub struct Table {
    pub params: Params,
    pub counters: Counters,
    /// Runlist changes not yet applied.
    pub pending_updates: u32,
    update_state: u32,
    update_until_ns: u64,
    slice_start_ns: u64,
    /// The process (by `seq`) the next turn starts with.
    cursor: u64,
    next_seq: u64,
    pub procs: [ProcEntry; MAX_PROCS],
    pub queues: [QueueEntry; MAX_QUEUES],
    /// Which queue (index) holds each slot, or -1.
    slot_owner: [i32; MAX_SLOTS],
    ledger: [Ledger; MAX_PROCS],
    ledger_next: u64,
    /// The runlist on the virtual time line ([`crate::timeline`]) of the processes that run
    /// under virtual time.
    pub virtual_runlist: VirtualRunlist,
}

/// The last runlist update on the virtual time line shared by the processes attached to a
/// device service: written, under the table's lock, by the process whose queue change caused
/// it; the others adopt it ([`crate::timeline::Timeline::adopt`]) with the runlist the table
/// holds then.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VirtualRunlist {
    /// Bumped at every update (0: none yet).
    pub generation: u64,
    pub begin_ns: u64,
    pub open_ns: u64,
}

/// Why a queue could not be registered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Full {
    Processes,
    Queues,
}

impl Table {
    /// Makes a zeroed table (as a fresh mapping is) ready for use.
    pub fn init(&mut self, params: Params) {
        self.params = params.clamped();
        self.counters = Counters::default();
        self.pending_updates = 0;
        self.update_state = UPDATE_IDLE;
        self.update_until_ns = 0;
        self.slice_start_ns = 0;
        self.cursor = 0;
        self.next_seq = 1;
        self.procs = [ProcEntry::default(); MAX_PROCS];
        self.queues = [QueueEntry::default(); MAX_QUEUES];
        self.slot_owner = [-1; MAX_SLOTS];
        self.ledger = [Ledger::default(); MAX_PROCS];
        self.ledger_next = 0;
        self.virtual_runlist = VirtualRunlist::default();
    }

    /// The runlist as [`crate::timeline`] orders it: every live queue, with its process's
    /// arrival and its own.
    pub fn members(&self) -> Vec<Member> {
        self.live_queues()
            .map(|(_, q)| Member {
                pid: q.pid,
                queue_id: q.queue_id,
                priority: q.priority,
                proc_seq: self
                    .proc_index(q.pid)
                    .map_or(u64::MAX, |p| self.procs[p].seq),
                seq: q.seq,
            })
            .collect()
    }

    fn seq(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq
    }

    fn proc_index(&self, pid: u32) -> Option<usize> {
        self.procs.iter().position(|p| p.used != 0 && p.pid == pid)
    }

    /// Adds a queue to the runlist (a runlist update follows). Returns its index.
    pub fn register_queue(
        &mut self,
        pid: u32,
        queue_id: u64,
        doorbell_offset: u64,
        priority: u32,
    ) -> Result<usize, Full> {
        self.register_hardware_queue(pid, queue_id, doorbell_offset, priority, Hqd::default())
    }

    /// [`Table::register_queue`] of a queue whose ring the scheduler can read (`hqd`).
    pub fn register_hardware_queue(
        &mut self,
        pid: u32,
        queue_id: u64,
        doorbell_offset: u64,
        priority: u32,
        hqd: Hqd,
    ) -> Result<usize, Full> {
        if self.proc_index(pid).is_none() {
            let free = self
                .procs
                .iter()
                .position(|p| p.used == 0)
                .ok_or(Full::Processes)?;
            let seq = self.seq();
            self.procs[free] = ProcEntry {
                used: 1,
                pid,
                seq,
                queue_cursor: 0,
            };
        }
        let free = self
            .queues
            .iter()
            .position(|q| q.used == 0)
            .ok_or(Full::Queues)?;
        let seq = self.seq();
        self.queues[free] = QueueEntry {
            used: 1,
            pid,
            state: QueueState::Unmapped as u32,
            slot: -1,
            queue_id,
            doorbell_offset,
            priority,
            seq,
            hqd,
            ..QueueEntry::default()
        };
        self.counters.queues_registered += 1;
        self.pending_updates += 1;
        Ok(free)
    }

    /// Removes a queue (its packet processor has stopped): its slot is free at once.
    pub fn unregister_queue(&mut self, index: usize) {
        let Some(q) = self.queues.get_mut(index).filter(|q| q.used != 0) else {
            return;
        };
        let pid = q.pid;
        if q.slot >= 0 {
            self.slot_owner[q.slot as usize] = -1;
        }
        *q = QueueEntry::default();
        self.pending_updates += 1;
        if !self.queues.iter().any(|q| q.used != 0 && q.pid == pid) {
            if let Some(p) = self.proc_index(pid) {
                self.procs[p] = ProcEntry::default();
            }
        }
        self.count_slots();
    }

    /// Removes a process and all its queues (it exited or died). Returns the runlist indices
    /// its queues had.
    pub fn remove_process(&mut self, pid: u32) -> Vec<usize> {
        let indices: Vec<usize> = (0..MAX_QUEUES)
            .filter(|&i| self.queues[i].used != 0 && self.queues[i].pid == pid)
            .collect();
        for &i in &indices {
            self.unregister_queue(i);
        }
        if let Some(p) = self.proc_index(pid) {
            self.procs[p] = ProcEntry::default();
        }
        indices
    }

    pub fn set_priority(&mut self, index: usize, priority: u32) {
        if let Some(q) = self.queues.get_mut(index).filter(|q| q.used != 0) {
            if q.priority != priority {
                q.priority = priority;
                self.pending_updates += 1;
            }
        }
    }

    /// The packet processor of queue `index` has a packet ready at `now`: may it start it? If
    /// so, the queue is busy until [`Table::end_packet`].
    pub fn begin_packet(&mut self, index: usize, now: u64) -> bool {
        let q = &mut self.queues[index];
        q.pending = 1;
        if q.used != 0 && q.state() == QueueState::Mapped && q.evict == 0 {
            let waited = if q.waiting != 0 {
                now.saturating_sub(q.since_ns)
            } else {
                0
            };
            q.busy = 1;
            q.waiting = 0;
            q.since_ns = now;
            let pid = q.pid;
            self.counters.packets_started += 1;
            self.counters.wait_ns += waited;
            let l = self.ledger_for(pid);
            l.wait_ns += waited;
            l.packets += 1;
            true
        } else {
            if q.waiting == 0 {
                q.waiting = 1;
                q.since_ns = now;
                self.counters.waits += 1;
            }
            false
        }
    }

    /// The packet started by [`Table::begin_packet`] ended at `now`. Returns true if the queue
    /// now has to leave its slot (the scheduler should run).
    pub fn end_packet(&mut self, index: usize, now: u64) -> bool {
        let q = &mut self.queues[index];
        let ran = if q.busy != 0 {
            now.saturating_sub(q.since_ns)
        } else {
            0
        };
        q.busy = 0;
        let (pid, evict) = (q.pid, q.evict != 0);
        self.counters.busy_ns += ran;
        self.ledger_for(pid).busy_ns += ran;
        evict
    }

    /// What the scheduler read in queue `index`'s descriptor at `now` (`has_work`: see
    /// [`ring_has_work`]). Work makes the queue ready and, if it holds no slot it may run in,
    /// starts its wait for one (counted from here, not from when its packet processor asks);
    /// an empty ring with no packet running makes it idle. Returns whether the queue became
    /// ready.
    pub fn observe_ring(&mut self, index: usize, has_work: bool, now: u64) -> bool {
        let q = &mut self.queues[index];
        if q.used == 0 {
            return false;
        }
        if !has_work {
            if q.busy == 0 {
                q.pending = 0;
            }
            return false;
        }
        let fresh = q.pending == 0;
        q.pending = 1;
        let runnable = q.state() == QueueState::Mapped && q.evict == 0;
        if q.busy == 0 && !runnable && q.waiting == 0 {
            q.waiting = 1;
            q.since_ns = now;
            self.counters.waits += 1;
        }
        if fresh {
            self.counters.work_from_doorbells += 1;
        }
        fresh
    }

    /// The queue's ring ran empty at `now`.
    pub fn set_idle(&mut self, index: usize, now: u64) {
        let q = &mut self.queues[index];
        let waited = if q.waiting != 0 {
            now.saturating_sub(q.since_ns)
        } else {
            0
        };
        q.pending = 0;
        q.waiting = 0;
        let pid = q.pid;
        self.counters.wait_ns += waited;
        self.ledger_for(pid).wait_ns += waited;
    }

    /// The ledger entry of `pid` (kept after the process leaves; the oldest entry is reused
    /// when all are taken).
    fn ledger_for(&mut self, pid: u32) -> &mut Ledger {
        let i = match self.ledger.iter().position(|l| l.pid == pid) {
            Some(i) => i,
            None => {
                let i = self
                    .ledger
                    .iter()
                    .position(|l| l.pid == 0)
                    .unwrap_or_else(|| {
                        self.ledger_next = (self.ledger_next + 1) % MAX_PROCS as u64;
                        self.ledger_next as usize
                    });
                self.ledger[i] = Ledger {
                    pid,
                    ..Ledger::default()
                };
                i
            }
        };
        &mut self.ledger[i]
    }

    /// Starts every process's ledger afresh (a benchmark's measured phase begins).
    pub fn reset_ledger(&mut self) {
        for l in self.ledger.iter_mut() {
            *l = Ledger {
                pid: l.pid,
                ..Ledger::default()
            };
        }
        // Waits under way count from now.
        for q in self.queues.iter_mut().filter(|q| q.waiting != 0) {
            q.since_ns = q.since_ns.max(crate::clock::now_ns());
        }
    }

    /// What process `pid`'s queues did, if it is in the ledger.
    pub fn ledger(&self, pid: u32) -> Option<Ledger> {
        self.ledger
            .iter()
            .find(|l| l.pid == pid && pid != 0)
            .copied()
    }

    /// Processes and queues in the runlist.
    pub fn population(&self) -> (usize, usize) {
        (
            self.procs.iter().filter(|p| p.used != 0).count(),
            self.queues.iter().filter(|q| q.used != 0).count(),
        )
    }

    /// KFD's rule (`pm_calc_rlib_size`).
    pub fn oversubscribed(&self) -> bool {
        let (procs, queues) = self.population();
        procs > self.params.max_procs as usize || queues > self.params.slots as usize
    }

    fn count_slots(&mut self) {
        let used = self.slot_owner[..self.params.slots as usize]
            .iter()
            .filter(|&&o| o >= 0)
            .count() as u64;
        self.counters.slots_in_use = used;
        self.counters.max_slots_in_use = self.counters.max_slots_in_use.max(used);
    }

    /// Processes in runlist order: highest queue priority first, then by arrival.
    fn runlist_order(&self) -> Vec<usize> {
        let mut procs: Vec<usize> = (0..MAX_PROCS)
            .filter(|&p| self.procs[p].used != 0)
            .collect();
        let top = |p: usize| {
            self.queues
                .iter()
                .filter(|q| q.used != 0 && q.pid == self.procs[p].pid)
                .map(|q| q.priority)
                .max()
                .unwrap_or(0)
        };
        procs.sort_by_key(|&p| (std::cmp::Reverse(top(p)), self.procs[p].seq));
        procs
    }

    /// A process's queues by priority, then arrival.
    fn queues_of(&self, pid: u32) -> Vec<usize> {
        let mut qs: Vec<usize> = (0..MAX_QUEUES)
            .filter(|&i| self.queues[i].used != 0 && self.queues[i].pid == pid)
            .collect();
        qs.sort_by_key(|&i| {
            (
                std::cmp::Reverse(self.queues[i].priority),
                self.queues[i].seq,
            )
        });
        qs
    }

    /// Chooses the queues the next turn maps: everything when the runlist fits; otherwise
    /// whole processes from the cursor on (the first process the last turn left out), while
    /// they fit in the process limit and the slots.
    fn select(&mut self) {
        for q in self.queues.iter_mut() {
            q.selected = 0;
        }
        let skip_idle = self.params.skip_idle != 0;
        let active = |q: &QueueEntry| !skip_idle || q.pending != 0 || q.busy != 0;
        if !self.oversubscribed() {
            for q in self.queues.iter_mut().filter(|q| q.used != 0) {
                q.selected = 1;
            }
            return;
        }
        let mut order = self.runlist_order();
        if skip_idle {
            let with_work: Vec<usize> = order
                .iter()
                .copied()
                .filter(|&p| {
                    self.queues
                        .iter()
                        .any(|q| q.used != 0 && q.pid == self.procs[p].pid && active(q))
                })
                .collect();
            if !with_work.is_empty() {
                order = with_work;
            }
        }
        if order.is_empty() {
            return;
        }
        let start = order
            .iter()
            .position(|&p| self.procs[p].seq >= self.cursor)
            .unwrap_or(0);
        let slots = self.params.slots as usize;
        let mut taken_queues = 0;
        let mut next_cursor = None;
        // Every process looked at is taken whole, or the turn ends: the k-th is preceded by k
        // taken ones.
        for k in 0..order.len() {
            let taken_procs = k;
            let p = order[(start + k) % order.len()];
            let mut qs = self.queues_of(self.procs[p].pid);
            if skip_idle && qs.iter().any(|&i| active(&self.queues[i])) {
                qs.retain(|&i| active(&self.queues[i]));
            }
            if taken_procs == self.params.max_procs as usize {
                next_cursor = Some(self.procs[p].seq);
                break;
            }
            if taken_queues + qs.len() > slots {
                if taken_procs == 0 {
                    // One process with more queues than slots: a window of its queues,
                    // rotating from turn to turn.
                    let n = qs.len();
                    let from = (self.procs[p].queue_cursor as usize) % n;
                    for j in 0..slots {
                        self.queues[qs[(from + j) % n]].selected = 1;
                    }
                    self.procs[p].queue_cursor = ((from + slots) % n) as u64;
                    next_cursor = Some(if from + slots >= n {
                        self.procs[order[(start + k + 1) % order.len()]].seq
                    } else {
                        self.procs[p].seq
                    });
                }
                if next_cursor.is_none() {
                    next_cursor = Some(self.procs[p].seq);
                }
                break;
            }
            for &i in &qs {
                self.queues[i].selected = 1;
            }
            taken_queues += qs.len();
        }
        // Everything fitted (possible with skip_idle): the next turn starts at the top again.
        self.cursor = next_cursor.unwrap_or(0);
    }

    /// Advances the scheduler to `now`. Returns whether anything changed (waiting packet
    /// processors should look again) and when it next has something to do.
    pub fn tick(&mut self, now: u64, events: &mut Vec<Event>) -> (bool, Option<u64>) {
        let mut changed = false;
        loop {
            let step = self.tick_once(now, events);
            changed |= step;
            if !step {
                break;
            }
        }
        self.count_slots();
        (changed, self.next_deadline())
    }

    fn tick_once(&mut self, now: u64, events: &mut Vec<Event>) -> bool {
        let mut changed = false;
        let n = self.params.slots as usize;
        // Mappings and unmappings that completed.
        for i in 0..MAX_QUEUES {
            let q = &mut self.queues[i];
            if q.used == 0 || q.until_ns > now {
                continue;
            }
            match q.state() {
                QueueState::Mapping => {
                    q.set_state(QueueState::Mapped);
                    changed = true;
                }
                QueueState::Unmapping => {
                    let slot = q.slot;
                    q.set_state(QueueState::Unmapped);
                    q.slot = -1;
                    q.evict = 0;
                    self.slot_owner[slot as usize] = -1;
                    self.counters.unmaps += 1;
                    events.push(Event::Unmap {
                        at_ns: now,
                        pid: q.pid,
                        queue_id: q.queue_id,
                        slot: slot as u32,
                    });
                    changed = true;
                }
                _ => {}
            }
        }
        // Runlist updates.
        if self.update_state == UPDATE_IDLE && self.pending_updates > 0 {
            self.counters.runlist_updates += 1;
            if self.params.serial_updates != 0 {
                self.pending_updates -= 1;
                self.update_state = UPDATE_DRAINING;
                for q in self
                    .queues
                    .iter_mut()
                    .filter(|q| q.used != 0 && q.slot >= 0)
                {
                    q.evict = 1;
                }
            } else {
                self.pending_updates = 0;
                self.rebuild(now, events);
            }
            changed = true;
        }
        if self.update_state == UPDATE_DRAINING
            && !self.queues.iter().any(|q| q.used != 0 && q.slot >= 0)
        {
            self.update_state = UPDATE_SENDING;
            self.update_until_ns = now + self.params.update_ns;
            changed = true;
        }
        if self.update_state == UPDATE_SENDING && self.update_until_ns <= now {
            self.update_state = UPDATE_IDLE;
            self.rebuild(now, events);
            changed = true;
        }
        // Time slices.
        if self.update_state == UPDATE_IDLE
            && self.counters.oversubscribed != 0
            && now >= self.slice_start_ns + self.params.quantum_ns
        {
            let before: Vec<u32> = self.queues.iter().map(|q| q.selected).collect();
            self.select();
            self.slice_start_ns = now;
            if self.queues.iter().map(|q| q.selected).ne(before) {
                self.counters.time_slices += 1;
                events.push(Event::TimeSlice { at_ns: now });
                changed = true;
            }
        }
        // Queues that lost their turn leave at their next packet boundary; one whose turn came
        // back before it could leave stays.
        let idle = self.update_state == UPDATE_IDLE;
        for q in self.queues.iter_mut() {
            if q.used != 0 && q.slot >= 0 && q.state() != QueueState::Unmapping {
                if q.selected == 0 {
                    q.evict = 1;
                } else if idle {
                    q.evict = 0;
                }
            }
        }
        for q in self.queues.iter_mut() {
            if q.used != 0 && q.evict != 0 && q.busy == 0 && q.state() == QueueState::Mapped {
                q.set_state(QueueState::Unmapping);
                q.until_ns = now + self.params.unmap_ns;
                changed = true;
            }
            // A queue still mapping when told to leave finishes mapping first.
        }
        // Map the selected queues into free slots, spreading them over the pipes.
        if self.update_state == UPDATE_IDLE {
            let mut want: Vec<usize> = (0..MAX_QUEUES)
                .filter(|&i| {
                    let q = &self.queues[i];
                    q.used != 0 && q.selected != 0 && q.slot < 0
                })
                .collect();
            want.sort_by_key(|&i| {
                (
                    std::cmp::Reverse(self.queues[i].priority),
                    self.queues[i].seq,
                )
            });
            // Each process on the hardware holds a VMID: no more than the limit at once, so
            // the next turn's processes wait for the last turn's to leave.
            let mut on_hw: Vec<u32> = self
                .queues
                .iter()
                .filter(|q| q.used != 0 && q.slot >= 0)
                .map(|q| q.pid)
                .collect();
            on_hw.sort_unstable();
            on_hw.dedup();
            for i in want {
                let pid = self.queues[i].pid;
                if !on_hw.contains(&pid) {
                    if on_hw.len() >= self.params.max_procs as usize {
                        continue;
                    }
                    on_hw.push(pid);
                }
                let Some(slot) = self.free_slot(n) else { break };
                self.slot_owner[slot] = i as i32;
                let q = &mut self.queues[i];
                q.slot = slot as i32;
                q.evict = 0;
                q.set_state(QueueState::Mapping);
                q.until_ns = now + self.params.map_ns;
                self.counters.maps += 1;
                events.push(Event::Map {
                    at_ns: now,
                    pid: q.pid,
                    queue_id: q.queue_id,
                    slot: slot as u32,
                });
                changed = true;
            }
        }
        changed
    }

    /// A free slot on the pipe with the fewest queues mapped.
    fn free_slot(&self, n: usize) -> Option<usize> {
        let pipes = self.params.pipes as usize;
        let mut load = vec![0usize; pipes];
        for s in 0..n {
            if self.slot_owner[s] >= 0 {
                load[self.params.pipe_of(s as u32) as usize] += 1;
            }
        }
        (0..n)
            .filter(|&s| self.slot_owner[s] < 0)
            .min_by_key(|&s| (load[self.params.pipe_of(s as u32) as usize], s))
    }

    /// A new runlist is in place: decide oversubscription and the first turn.
    fn rebuild(&mut self, now: u64, events: &mut Vec<Event>) {
        let over = self.oversubscribed();
        let (procs, queues) = self.population();
        self.counters.oversubscribed = u64::from(over);
        if over {
            self.counters.oversubscribed_updates += 1;
        }
        // A new runlist is walked from its start.
        self.cursor = 0;
        self.select();
        self.slice_start_ns = now;
        events.push(Event::RunlistUpdate {
            at_ns: now,
            oversubscribed: over,
            queues: queues as u32,
            processes: procs as u32,
        });
    }

    fn next_deadline(&self) -> Option<u64> {
        let mut next: Option<u64> = None;
        let mut at = |t: u64| next = Some(next.map_or(t, |n: u64| n.min(t)));
        for q in self.queues.iter().filter(|q| q.used != 0) {
            if matches!(q.state(), QueueState::Mapping | QueueState::Unmapping) {
                at(q.until_ns);
            }
        }
        if self.update_state == UPDATE_SENDING {
            at(self.update_until_ns);
        }
        if self.update_state == UPDATE_IDLE && self.counters.oversubscribed != 0 {
            at(self.slice_start_ns + self.params.quantum_ns);
        }
        next
    }

    /// The live queues, for status displays.
    pub fn live_queues(&self) -> impl Iterator<Item = (usize, &QueueEntry)> {
        self.queues.iter().enumerate().filter(|(_, q)| q.used != 0)
    }

    pub fn live_pids(&self) -> Vec<u32> {
        self.procs
            .iter()
            .filter(|p| p.used != 0)
            .map(|p| p.pid)
            .collect()
    }
}

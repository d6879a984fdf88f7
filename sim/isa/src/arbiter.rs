//! The workgroup dispatcher's choice between dispatches of several queues: free compute
//! units go to the highest-priority dispatch that still has workgroups to start. A GPU's
//! dispatcher does this with the queue priority `hsa_amd_queue_set_priority` sets; here each
//! dispatch runs on host threads of its own, so a worker of a lower-priority dispatch, before
//! it claims its next batch of workgroups, waits while a higher-priority dispatch of the same
//! device has workgroups nobody has claimed yet, and gives the host CPU to it. Workgroups
//! already claimed run to their end: nothing is preempted.
//!
//! The host's cores are the compute units here: once the higher dispatch has claimed its last
//! workgroup, its workers still run their last ones, and a held-back worker goes on only into
//! a free slot (while fewer workers of the device run than its dispatch's worker count). Were
//! all held-back workers let go at once, the host would share its cores between them and the
//! higher dispatch's last workgroups, and the next dispatch of the higher queue would start
//! late, behind them.
//!
//! A higher dispatch whose workers are all stuck inside workgroups (spinning on a flag that
//! only the lower dispatch will set) would hold the lower one back for ever, where a GPU, with
//! room for far more resident workgroups than hsasim has workers, would run both. So a waiting
//! worker watches the device's progress (claims by dispatches not held back): after
//! [`STALL`] without any, it marks the device stalled and the held-back dispatches go on
//! until the next such claim.
//!
//! The cost where nothing competes (one dispatch at a time, or all of one priority): an
//! atomic add and subtract on the device's word per dispatch (none for low priority) and on
//! its count of running workers per worker, and one relaxed load per batch claim.

use crate::api::QueuePriority;
use crate::cache_line::CacheLine;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long held-back workers wait without any claim on the device before they take it that
/// the higher-priority dispatch is stuck (see the module comment). Far longer than a batch of
/// ordinary workgroups takes, so a working dispatch is never mistaken for a stuck one.
const STALL: Duration = Duration::from_millis(200);
/// How often a waiting worker looks at the progress, its dispatch's stop flag and deadline;
/// the end of the higher dispatch's claims wakes it at once.
const POLL: Duration = Duration::from_millis(5);

// The device's state word. Dispatches of normal and of high priority that still have
// unclaimed workgroups are counted in fields of 20 bits (at most 4096 queues per agent, one
// dispatch in flight each); low priority holds nobody back, so it is not counted. Then the
// workers waiting (23 bits: at most 256 workers per dispatch), and the stalled mark.
// Everything a worker's claim looks at is in this one word.
const NORMAL_PENDING: u64 = 1;
const HIGH_PENDING: u64 = 1 << 20;
const WAITER: u64 = 1 << 40;
const NORMAL_FIELD: u64 = (1 << 20) - 1;
const HIGH_FIELD: u64 = NORMAL_FIELD << 20;
const WAITER_FIELD: u64 = ((1 << 23) - 1) << 40;
const STALLED: u64 = 1 << 63;

/// Devices with a dispatcher of their own; device numbers beyond share one (which only
/// makes their dispatches compete as one device's would).
const DEVICES: usize = 32;

struct Device {
    state: CacheLine<AtomicU64>,
    /// Workers of the device's dispatches running (not waiting here).
    running: CacheLine<AtomicU64>,
    /// Claims by dispatches not held back, counted while workers wait or the device is
    /// marked stalled.
    progress: CacheLine<AtomicU64>,
    lock: Mutex<()>,
    /// Rung when the last pending dispatch of a level has claimed everything, when a worker
    /// stops running while others wait, or when a waiter marks the device stalled.
    wake: Condvar,
}

impl Device {
    const fn idle() -> Device {
        Device {
            state: CacheLine(AtomicU64::new(0)),
            running: CacheLine(AtomicU64::new(0)),
            progress: CacheLine(AtomicU64::new(0)),
            lock: Mutex::new(()),
            wake: Condvar::new(),
        }
    }
}

static DEVICE_STATE: [Device; DEVICES] = [const { Device::idle() }; DEVICES];

fn device(index: u32) -> &'static Device {
    &DEVICE_STATE[index as usize % DEVICES]
}

/// Workers of dispatches on `device` held back by a higher-priority dispatch right now (for
/// tests and diagnostics).
pub fn waiting_workers(device_index: u32) -> u64 {
    (device(device_index).state.0.load(Ordering::Relaxed) & WAITER_FIELD) / WAITER
}

/// One dispatch's place in its device's arbitration, from before its first claim until it has
/// claimed its last workgroup (or stopped): then, or when dropped, it holds nobody back.
pub(crate) struct Entry {
    device: &'static Device,
    /// What this dispatch adds to the state word while it has unclaimed workgroups.
    pending: u64,
    /// The fields of dispatches that hold this one back.
    above: u64,
    /// Fields that send a claim to the slow path: `above`, and waiters or the stalled
    /// mark (an unhindered claim then counts as progress).
    attention: u64,
    /// The host threads the dispatch may use: a held-back worker goes on only while fewer
    /// workers of the device run.
    slots: u64,
    retired: AtomicBool,
}

impl Entry {
    /// Enters a dispatch of `priority` on `device_index` that may use `workers` host threads.
    pub(crate) fn enter(device_index: u32, priority: QueuePriority, workers: usize) -> Entry {
        let (pending, above) = match priority {
            QueuePriority::Low => (0, NORMAL_FIELD | HIGH_FIELD),
            QueuePriority::Normal => (NORMAL_PENDING, HIGH_FIELD),
            QueuePriority::High => (HIGH_PENDING, 0),
        };
        let device = device(device_index);
        if pending != 0 {
            device.state.0.fetch_add(pending, Ordering::Relaxed);
        }
        Entry {
            device,
            pending,
            above,
            attention: above | WAITER_FIELD | STALLED,
            slots: workers as u64,
            retired: AtomicBool::new(pending == 0),
        }
    }

    /// A worker of the dispatch starts: it counts as running until the guard is dropped.
    pub(crate) fn run_worker(&self) -> RunningWorker<'_> {
        self.device.running.0.fetch_add(1, Ordering::SeqCst);
        RunningWorker(self)
    }

    /// Before a worker claims workgroups: returns once no higher-priority dispatch of the
    /// device has unclaimed workgroups and, if it had to wait, a slot is free (at once while
    /// the device is stalled). False if it gave up waiting because `stop` was set or
    /// `deadline` passed (the caller then looks at both).
    #[inline]
    pub(crate) fn may_claim(&self, stop: &AtomicBool, deadline: Option<Instant>) -> bool {
        let state = self.device.state.0.load(Ordering::Relaxed);
        if state & self.attention == 0 {
            return true;
        }
        self.contended(state, stop, deadline)
    }

    #[cold]
    fn contended(&self, state: u64, stop: &AtomicBool, deadline: Option<Instant>) -> bool {
        let d = self.device;
        if state & self.above == 0 {
            // Not held back: the device moves, which waiters want to know.
            d.progress.0.fetch_add(1, Ordering::Relaxed);
            if state & STALLED != 0 {
                d.state.0.fetch_and(!STALLED, Ordering::Relaxed);
            }
            return true;
        }
        if state & STALLED != 0 {
            return true;
        }
        // Waiting, it leaves its slot to others; both counts change before the checks below
        // (SeqCst, against `RunningWorker::drop`'s decrement and its look for waiters).
        d.state.0.fetch_add(WAITER, Ordering::SeqCst);
        d.running.0.fetch_sub(1, Ordering::SeqCst);
        let mut guard = d.lock.lock().unwrap_or_else(|p| p.into_inner());
        let mut seen = d.progress.0.load(Ordering::Relaxed);
        let mut since = Instant::now();
        let go_on = loop {
            // Under the lock: `retire` and `RunningWorker::drop` ring after their decrement
            // while holding it, so a decrement these loads miss is followed by a wake-up this
            // wait gets.
            let state = d.state.0.load(Ordering::SeqCst);
            if state & STALLED != 0
                || (state & self.above == 0 && d.running.0.load(Ordering::SeqCst) < self.slots)
            {
                break true;
            }
            if stop.load(Ordering::Relaxed) {
                break false;
            }
            let now = Instant::now();
            if deadline.is_some_and(|t| now >= t) {
                break false;
            }
            let progress = d.progress.0.load(Ordering::Relaxed);
            if progress != seen {
                seen = progress;
                since = now;
            } else if now.duration_since(since) >= STALL {
                d.state.0.fetch_or(STALLED, Ordering::Relaxed);
                d.wake.notify_all();
                break true;
            }
            guard = d
                .wake
                .wait_timeout(guard, POLL)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        };
        d.running.0.fetch_add(1, Ordering::SeqCst);
        drop(guard);
        d.state.0.fetch_sub(WAITER, Ordering::Relaxed);
        go_on
    }

    /// The dispatch has no workgroups left to claim: it holds nobody back any more.
    pub(crate) fn retire(&self) {
        if self.retired.swap(true, Ordering::Relaxed) {
            return;
        }
        let before = self
            .device
            .state
            .0
            .fetch_sub(self.pending, Ordering::SeqCst);
        if before & WAITER_FIELD != 0 {
            self.device.wake_waiters();
        }
    }
}

impl Device {
    fn wake_waiters(&self) {
        // Under the lock: a waiter checks and sleeps holding it, so it cannot miss this.
        let _guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        self.wake.notify_all();
    }
}

/// A worker of a dispatch, counted as running until dropped (also when it unwinds).
pub(crate) struct RunningWorker<'a>(&'a Entry);

impl Drop for RunningWorker<'_> {
    fn drop(&mut self) {
        let d = self.0.device;
        d.running.0.fetch_sub(1, Ordering::SeqCst);
        if d.state.0.load(Ordering::SeqCst) & WAITER_FIELD != 0 {
            d.wake_waiters();
        }
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        self.retire();
    }
}

//! HSA signals owned by the shim, the pool that recycles them, and the one place that waits
//! on them.

use super::{check, HsaApi, HsaError};
use hsa_abi::*;
use parking_lot::Mutex;
use std::sync::atomic::{fence, AtomicI64, AtomicUsize, Ordering};
use std::time::Duration;

/// How long a wait spins (lowest latency for short kernels) before it blocks in the runtime.
const SPIN: Duration = Duration::from_micros(50);
/// A blocked wait wakes up this often to check whether the queue reported an error.
const BLOCKED_SLICE: Duration = Duration::from_millis(10);

pub struct Signal {
    api: &'static HsaApi,
    pub handle: hsa_signal_t,
    /// The signal's value in memory (`hsa_amd_signal_value_pointer`), for
    /// [`Signal::count_up`]; null where the runtime does not give it.
    value: *const AtomicI64,
}

// SAFETY: an HSA signal is a process-wide object designed for concurrent use from any thread.
unsafe impl Send for Signal {}
// SAFETY: as above; all operations go through the thread-safe HSA API or are atomic
// accesses of the signal's value.
unsafe impl Sync for Signal {}

impl Signal {
    pub fn new(api: &'static HsaApi, initial: i64) -> Result<Signal, HsaError> {
        let mut handle = hsa_signal_t::default();
        // SAFETY: no consumer list (0, null) means any agent may wait; `handle` is valid.
        let status = unsafe { (api.hsa_signal_create)(initial, 0, std::ptr::null(), &mut handle) };
        check("hsa_signal_create", status)?;
        let mut value: *mut hsa_signal_value_t = std::ptr::null_mut();
        if let Some(value_pointer) = api.hsa_amd_signal_value_pointer {
            // SAFETY: `handle` is live; `value` is a valid out-pointer.
            let status = unsafe { value_pointer(handle, &mut value) };
            if status != status::SUCCESS || !(value as usize).is_multiple_of(8) {
                value = std::ptr::null_mut();
            }
        }
        Ok(Signal {
            api,
            handle,
            value: value.cast_const().cast(),
        })
    }

    pub fn load(&self) -> i64 {
        // SAFETY: the handle is live for as long as `self`.
        unsafe { (self.api.hsa_signal_load_relaxed)(self.handle) }
    }

    pub fn add(&self, delta: i64) {
        // SAFETY: the handle is live for as long as `self`.
        unsafe { (self.api.hsa_signal_add_relaxed)(self.handle, delta) }
    }

    /// Adds `delta` (> 0) to a count that waiters only ever wait to see fall to 0 (a stream's
    /// packets in flight: it goes up as the host publishes packets and down as they complete).
    /// A relaxed atomic add on the value in memory, which is what the runtime's
    /// `hsa_signal_add_relaxed` does before it wakes the signal's waiters (ROCr's interrupt
    /// signals set their event; hsasim notifies its hub). An increase needs no wake-up: a
    /// waiter for 0 (or below 1) that was not done stays not done. Through the HSA call
    /// where the runtime does not give the value's address.
    #[inline(always)]
    pub fn count_up(&self, delta: i64) {
        debug_assert!(delta > 0);
        if self.value.is_null() {
            self.add(delta);
        } else {
            // SAFETY: the address of this signal's value (8-aligned, checked), live as long as
            // the signal, i.e. `self`; the runtime and the device access it atomically too.
            unsafe { (*self.value).fetch_add(delta, Ordering::Relaxed) };
        }
    }

    pub fn store(&self, value: i64) {
        // SAFETY: the handle is live for as long as `self`.
        unsafe { (self.api.hsa_signal_store_screlease)(self.handle, value) }
    }

    /// Reads the value with acquire ordering (so work the signal reports done is visible).
    pub fn load_acquire(&self) -> i64 {
        // SAFETY: the handle is live for as long as `self`.
        unsafe { (self.api.hsa_signal_load_scacquire)(self.handle) }
    }

    /// Decrements with release ordering: what this thread did before is visible to whoever
    /// observes the new value (a barrier packet, a waiting host thread).
    pub fn subtract_release(&self, delta: i64) {
        // SAFETY: the handle is live for as long as `self`.
        unsafe { (self.api.hsa_signal_subtract_screlease)(self.handle, delta) }
    }

    /// When the packet processor ran the packet this signal completed (start and end, in
    /// `HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY` units), on a queue of `agent` with profiling on.
    pub fn dispatch_time(&self, agent: hsa_agent_t) -> Result<hsa_amd_profiling_time_t, HsaError> {
        let mut time = hsa_amd_profiling_time_t::default();
        // SAFETY: the handle is live for as long as `self`; `time` is a valid out-pointer.
        let status = unsafe {
            (self.api.hsa_amd_profiling_get_dispatch_time)(agent, self.handle, &mut time)
        };
        check("hsa_amd_profiling_get_dispatch_time", status)?;
        Ok(time)
    }

    /// Waits until the signal reads 0. Spins for a short while, then blocks in the runtime in
    /// slices, asking `failed` between slices whether the work it waits for can no longer
    /// complete (a queue error); if so returns that error instead of waiting forever.
    pub fn wait_zero<E>(
        &self,
        timestamp_hz: u64,
        failed: impl FnMut() -> Option<E>,
    ) -> Result<(), E> {
        self.wait_zero_with(timestamp_hz, false, failed)
    }

    /// [`Signal::wait_zero`], optionally without the initial spin (`hipEventBlockingSync`
    /// asks for the waiting thread to sleep rather than burn a core).
    pub fn wait_zero_with<E>(
        &self,
        timestamp_hz: u64,
        block_at_once: bool,
        mut failed: impl FnMut() -> Option<E>,
    ) -> Result<(), E> {
        // Timed only when someone looks: the recorder or the `hipshim::wait` log.
        let timed = crate::probe::recording()
            || tracing::enabled!(target: "hipshim::wait", tracing::Level::TRACE);
        let started = if timed { crate::probe::now_ns() } else { 0 };
        let mut spin_end = None;
        let (spin_ticks, slice_ticks) = (
            ticks(SPIN, timestamp_hz),
            ticks(BLOCKED_SLICE, timestamp_hz),
        );
        let mut blocked = block_at_once;
        if blocked {
            spin_end = Some(started);
        }
        loop {
            let (state, timeout) = if blocked {
                (HSA_WAIT_STATE_BLOCKED, slice_ticks)
            } else {
                (HSA_WAIT_STATE_ACTIVE, spin_ticks)
            };
            // SAFETY: the handle is live; EQ 0 with a finite timeout returns the current value.
            let value = unsafe {
                (self.api.hsa_signal_wait_scacquire)(
                    self.handle,
                    HSA_SIGNAL_CONDITION_EQ,
                    0,
                    timeout,
                    state,
                )
            };
            if value == 0 {
                if timed {
                    let ended = crate::probe::now_ns();
                    let spin_ns = spin_end.unwrap_or(ended).saturating_sub(started);
                    let waited_ns = ended.saturating_sub(started);
                    tracing::trace!(
                        target: "hipshim::wait",
                        signal = format_args!("{:#x}", self.handle.handle),
                        condition = "== 0",
                        waited_us = waited_ns / 1000,
                        spin_us = spin_ns / 1000,
                        blocked,
                        "signal wait done"
                    );
                    if crate::probe::recording() {
                        crate::probe::wait_done(
                            self.handle.handle,
                            started,
                            ended,
                            spin_ns,
                            blocked,
                        );
                    }
                }
                return Ok(());
            }
            if let Some(error) = failed() {
                return Err(error);
            }
            if !blocked && timed {
                spin_end = Some(crate::probe::now_ns());
            }
            blocked = true;
        }
    }
}

fn ticks(duration: Duration, hz: u64) -> u64 {
    (duration.as_nanos() as u64).saturating_mul(hz) / 1_000_000_000
}

/// Signals recycled between uses: markers, copy completions, host-task gates and event
/// records each need a signal of their own, and creating one per use would put an HSA call
/// (and, on ROCr, an ioctl for its event) on paths that must stay cheap.
///
/// A slot is handed out with one reference ([`PooledSignal`]); clones share it and the last
/// drop returns it to the free list. Whoever publishes a packet or copy naming a pooled signal
/// keeps a clone until that packet or copy is known to be complete, so a signal is never
/// reused while the device may still touch it, and for the same reason a free slot may be
/// destroyed: [`SignalPool::trim`] does so for the free slots beyond what the pool may need
/// again soon, so that 100,000 streams or a million event records, once gone, do not keep
/// their signals for the rest of the process. The pool itself is leaked with its device.
pub struct SignalPool {
    api: &'static HsaApi,
    /// Slots ready for reuse. Locked only to take or return a slot, never while waiting.
    /// Its capacity never falls below `total`, so returning a slot never allocates.
    free: Mutex<Vec<SlotRef>>,
    /// Slots alive (in use or free).
    total: AtomicUsize,
}

/// Free slots [`SignalPool::trim`] always keeps, whatever is in use: a burst of markers and
/// copies after a quiet spell finds its signals made.
const KEEP_FREE: usize = 256;

struct PoolSlot {
    signal: Signal,
    refs: AtomicUsize,
    pool: &'static SignalPool,
}

/// A slot, from `Box::into_raw`; freed only by [`SignalPool::trim`], once no reference to it
/// is left (it is on the free list).
#[derive(Clone, Copy)]
struct SlotRef(std::ptr::NonNull<PoolSlot>);

// SAFETY: a slot holds a `Signal` (Send + Sync), an atomic and a shared reference to a Sync
// pool; the pointer is shared as an `Arc` would be.
unsafe impl Send for SlotRef {}
// SAFETY: as above.
unsafe impl Sync for SlotRef {}

impl SlotRef {
    fn get(&self) -> &PoolSlot {
        // SAFETY: a slot is freed only from the free list by `trim`, and no `SlotRef` outside
        // the free list exists then (its `PooledSignal`s are all dropped); so a slot reached
        // through a live `PooledSignal` or the locked free list is alive.
        unsafe { self.0.as_ref() }
    }
}

/// A counted reference to a pooled signal.
pub struct PooledSignal(SlotRef);

impl SignalPool {
    /// A new, empty pool that lives for the rest of the process.
    pub fn leak(api: &'static HsaApi) -> &'static SignalPool {
        Box::leak(Box::new(SignalPool {
            api,
            free: Mutex::new(Vec::with_capacity(64)),
            total: AtomicUsize::new(0),
        }))
    }

    /// A signal holding `initial`: a recycled one if any is free, else a new one.
    pub fn get(&'static self, initial: i64) -> Result<PooledSignal, HsaError> {
        let recycled = self.free.lock().pop();
        let slot = match recycled {
            Some(slot) => slot,
            None => {
                let slot = SlotRef(std::ptr::NonNull::from(Box::leak(Box::new(PoolSlot {
                    signal: Signal::new(self.api, initial)?,
                    refs: AtomicUsize::new(0),
                    pool: self,
                }))));
                // Grow the free list with the pool so returning a slot never allocates.
                let total = self.total.fetch_add(1, Ordering::Relaxed) + 1;
                let mut free = self.free.lock();
                if free.capacity() < total {
                    let more = total - free.len();
                    free.reserve(more);
                }
                slot
            }
        };
        slot.get().refs.store(1, Ordering::Relaxed);
        slot.get().signal.store(initial);
        Ok(PooledSignal(slot))
    }

    /// Destroys the free signals beyond those the pool keeps: as many as are in use, and at
    /// least [`KEEP_FREE`]. Called where many signals may just have come back (a stream or an
    /// event destroyed, a device synchronised), never on the launch path; each signal it
    /// destroys was made by a `get` before, so the work is O(1) per operation over time.
    pub fn trim(&self) {
        let surplus = {
            let mut free = self.free.lock();
            let total = self.total.load(Ordering::Relaxed);
            let in_use = total.saturating_sub(free.len());
            let keep = in_use.max(KEEP_FREE);
            if free.len() <= keep {
                return;
            }
            let surplus = free.split_off(keep);
            let left = self.total.fetch_sub(surplus.len(), Ordering::Relaxed) - surplus.len();
            // Room for every slot still alive, and no more than twice that.
            if free.capacity() > 2 * left.max(KEEP_FREE) {
                free.shrink_to(left.max(KEEP_FREE));
            }
            surplus
        };
        // Destroyed without the lock: each is an HSA call.
        for slot in surplus {
            // SAFETY: the slot was on the free list (no `PooledSignal` names it) and is no
            // longer: this is the one reference left, from `Box::leak` in `get`.
            drop(unsafe { Box::from_raw(slot.0.as_ptr()) });
        }
    }

    /// Signals this pool has alive now (in use or free): bounded by the most ever in use at
    /// once, and after a [`SignalPool::trim`] by what is in use now (or [`KEEP_FREE`]).
    pub fn created(&self) -> usize {
        self.total.load(Ordering::Relaxed)
    }

    /// Free signals kept for reuse (for tests of what the pool gives back).
    pub fn free_len(&self) -> usize {
        self.free.lock().len()
    }
}

impl PooledSignal {
    pub fn handle(&self) -> hsa_signal_t {
        self.0.get().signal.handle
    }

    pub fn signal(&self) -> &Signal {
        &self.0.get().signal
    }

    /// The pool the signal goes back to.
    pub fn pool(&self) -> &'static SignalPool {
        self.0.get().pool
    }

    /// True once the signal reads 0 (acquire: the work it reports is visible).
    pub fn is_zero(&self) -> bool {
        self.0.get().signal.load_acquire() == 0
    }

    /// Gives up this reference without ever returning the slot to the pool: for signals a
    /// failed (stuck) queue may still name, which must never be reused.
    pub fn leak(self) {
        std::mem::forget(self);
    }
}

impl Clone for PooledSignal {
    fn clone(&self) -> Self {
        self.0.get().refs.fetch_add(1, Ordering::Relaxed);
        PooledSignal(self.0)
    }
}

impl Drop for PooledSignal {
    fn drop(&mut self) {
        let slot = self.0.get();
        if slot.refs.fetch_sub(1, Ordering::Release) == 1 {
            // Pairs with the Release above in other holders: their last uses happen before
            // the slot is reused.
            fence(Ordering::Acquire);
            slot.pool.free.lock().push(self.0);
        }
    }
}

impl std::fmt::Debug for PooledSignal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "signal {:#x}", self.handle().handle)
    }
}

impl Drop for Signal {
    fn drop(&mut self) {
        // SAFETY: the handle was created by this wrapper and is destroyed exactly once.
        let status = unsafe { (self.api.hsa_signal_destroy)(self.handle) };
        if status != status::SUCCESS {
            tracing::warn!(status, "hsa_signal_destroy failed");
        }
    }
}

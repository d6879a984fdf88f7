//! Signals: ROCr-layout `amd_signal_t` memory plus the wake-up machinery.
//!
//! An `hsa_signal_t` handle is the address of the signal's `amd_signal_t`, so clients that
//! read `value` or the profiling timestamps directly (AMD's HIP does) see what they expect.
//! That memory is a slot of a slab that is never unmapped: the value operations check a
//! handle by arithmetic and one load ([`live`]), the calls that keep a signal look it up in
//! the runtime's [`SignalRegistry`]. A garbage handle is reported, never followed outside
//! the slab.
//!
//! Waking: every mutation goes through [`SignalMemory`] methods, which bump the global [`HUB`].
//! All blocked waiters (host waits, barrier packets, SDMA dependencies, async handlers, idle
//! packet processors waiting on their doorbell) sleep on that one condvar and re-check their
//! own condition when woken. One condvar keeps the lost-wake-up argument in one place; the
//! cost is spurious wake-ups, which are cheap at simulator scale.

use crate::error::{HsaError, HsaResult};
use crate::handles::Slab;
use hsa_abi::{
    amd_signal_t, hsa_signal_t, hsa_signal_value_t, AMD_SIGNAL_KIND_DOORBELL,
    AMD_SIGNAL_KIND_INVALID, AMD_SIGNAL_KIND_USER,
};
use parking_lot::{Condvar, Mutex, RwLock};
use std::cell::UnsafeCell;
use std::mem::offset_of;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The global wake-up point. Protocol: a waiter increments `waiters`, then (under `lock`)
/// re-checks its condition and sleeps; a mutator changes the value first (SeqCst) and then,
/// if `waiters` is non-zero, takes `lock` and notifies. Either the waiter sees the new value
/// or the mutator sees the waiter and its notify cannot be lost (the waiter holds `lock`
/// from its re-check until it sleeps).
pub struct Hub {
    lock: Mutex<u64>,
    cond: Condvar,
    waiters: AtomicUsize,
}

pub static HUB: Hub = Hub {
    lock: Mutex::new(0),
    cond: Condvar::new(),
    waiters: AtomicUsize::new(0),
};

impl Hub {
    /// Every signal change calls this: inline, one load while nobody sleeps on the hub.
    #[inline]
    pub fn notify(&self) {
        if self.waiters.load(Ordering::SeqCst) != 0 {
            self.wake_all();
        }
    }

    #[cold]
    #[inline(never)]
    fn wake_all(&self) {
        let mut epoch = self.lock.lock();
        *epoch = epoch.wrapping_add(1);
        self.cond.notify_all();
    }

    /// Sleeps until notified or until `max_sleep` passes, unless `ready()` already holds.
    /// The cap bounds the latency of changes made behind our back (a client writing
    /// `amd_signal_t::value` directly).
    pub fn sleep_unless(&self, ready: &mut dyn FnMut() -> bool, max_sleep: Duration) {
        self.waiters.fetch_add(1, Ordering::SeqCst);
        {
            let mut guard = self.lock.lock();
            if !ready() {
                self.cond.wait_for(&mut guard, max_sleep);
            }
        }
        self.waiters.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A wake-up point of one sleeper's own (an idle packet processor's doorbell, an idle copy
/// engine's job list), beside the [`HUB`] that everything waiting for signals shares: waking
/// it costs its producers one load while nobody sleeps on it, and never wakes a thread that
/// sleeps elsewhere. The hub's protocol, per bell: the waiter counts itself in (SeqCst), then
/// re-checks its condition under its stripe's lock and sleeps; a producer makes its change,
/// then (after a SeqCst read-modify-write or fence of its own) reads the count and, if
/// non-zero, notifies under the same lock. Either the waiter's re-check sees the change, or
/// the producer sees the waiter and its notify cannot be lost. Bells share [`BELL_STRIPES`]
/// locks and condvars by address (a count of 8 bytes fits where a bell must live, such as a
/// doorbell's `amd_signal_t`); sharing costs at most a spurious wake-up.
#[repr(transparent)]
#[derive(Default)]
pub struct Bell(AtomicI64);

/// Lock and condvar pairs the bells share.
const BELL_STRIPES: usize = 16;

static STRIPES: [(Mutex<()>, Condvar); BELL_STRIPES] =
    [const { (Mutex::new(()), Condvar::new()) }; BELL_STRIPES];

impl Bell {
    pub const fn new() -> Bell {
        Bell(AtomicI64::new(0))
    }

    fn stripe(&self) -> &'static (Mutex<()>, Condvar) {
        // Bells are 8-aligned fields of 64-aligned blocks or of heap objects.
        &STRIPES[(self as *const Bell as usize >> 6) % BELL_STRIPES]
    }

    /// Wakes whoever sleeps here; the caller has made its change with SeqCst (see the type's
    /// protocol).
    #[inline]
    pub fn wake(&self) {
        if self.0.load(Ordering::SeqCst) != 0 {
            self.wake_sleepers();
        }
    }

    #[cold]
    #[inline(never)]
    fn wake_sleepers(&self) {
        let (lock, cond) = self.stripe();
        let _guard = lock.lock();
        cond.notify_all();
    }

    /// Sleeps until woken or until `max_sleep` passes, unless `ready()` already holds.
    pub fn sleep_unless(&self, ready: &mut dyn FnMut() -> bool, max_sleep: Duration) {
        self.0.fetch_add(1, Ordering::SeqCst);
        {
            let (lock, cond) = self.stripe();
            let mut guard = lock.lock();
            if !ready() {
                cond.wait_for(&mut guard, max_sleep);
            }
        }
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The `amd_signal_t` of one signal, in the signal slab: its address is the signal's handle,
/// so clients that read `value` or the timestamps directly (AMD's HIP does) see what they
/// expect. After construction every field is accessed through atomics.
#[repr(transparent)]
pub struct SignalMemory(UnsafeCell<amd_signal_t>);

// SAFETY: all access after the slot is handed out goes through atomic views of its fields.
unsafe impl Sync for SignalMemory {}

impl SignalMemory {
    /// The 8-byte field at `offset` (an `offset_of!` of `amd_signal_t`), as an atomic.
    fn field(&self, offset: usize) -> &AtomicI64 {
        // SAFETY: `offset` is that of an 8-byte aligned i64 or u64 field inside this 64-byte
        // aligned block, which lives as long as the slab (the whole process); all concurrent
        // access goes through this atomic view.
        unsafe { AtomicI64::from_ptr(self.0.get().cast::<u8>().add(offset).cast()) }
    }

    fn kind_field(&self) -> &AtomicI64 {
        self.field(offset_of!(amd_signal_t, kind))
    }

    fn value(&self) -> &AtomicI64 {
        self.field(offset_of!(amd_signal_t, value))
    }

    fn ts(&self, end: bool) -> &AtomicI64 {
        if end {
            self.field(offset_of!(amd_signal_t, end_ts))
        } else {
            self.field(offset_of!(amd_signal_t, start_ts))
        }
    }

    fn queue_ptr(&self) -> &AtomicI64 {
        self.field(offset_of!(amd_signal_t, queue_ptr))
    }

    /// Wakes whoever waits for a change: this process's waiters, and, for a shared (IPC)
    /// signal, other processes' (one relaxed load for a process without shared signals).
    #[inline]
    fn changed(&self) {
        HUB.notify();
        if SHARED_ON.load(Ordering::Relaxed) {
            shared_changed(self as *const SignalMemory as u64);
        }
    }

    /// Makes a free slot a user signal of value `initial` (the kind, stored last with
    /// release, tells a handle check that the rest is written).
    pub(crate) fn init(&self, kind: i64, initial: i64) {
        for field in [
            self.value(),
            self.ts(false),
            self.ts(true),
            self.queue_ptr(),
            self.fell_back_field(),
            self.field(offset_of!(amd_signal_t, event_mailbox_ptr)),
            self.field(offset_of!(amd_signal_t, event_id)),
        ] {
            field.store(0, Ordering::Relaxed);
        }
        self.value().store(initial, Ordering::Relaxed);
        self.kind_field().store(kind, Ordering::Release);
    }

    pub fn handle(&self) -> hsa_signal_t {
        hsa_signal_t {
            handle: self as *const SignalMemory as u64,
        }
    }

    pub fn kind(&self) -> i64 {
        self.kind_field().load(Ordering::Acquire)
    }

    pub fn value_ptr(&self) -> *mut i64 {
        self.value().as_ptr()
    }

    pub fn load(&self, order: Ordering) -> i64 {
        self.value().load(order)
    }

    pub fn store(&self, v: i64, order: Ordering) {
        if self.kind() == AMD_SIGNAL_KIND_DOORBELL {
            self.ring(v);
        } else {
            self.value().store(v, order);
        }
        self.changed();
    }

    /// A doorbell store: wakes the queue's packet processor if it sleeps on the doorbell's
    /// [`Bell`], and no other thread.
    fn ring(&self, v: i64) {
        // A swap whatever the order asked for: it reads the old value (for strict mode's
        // `doorbell-monotonic`) and is the SeqCst change the bell's protocol wants before
        // the sleeper count is read.
        let old = self.value().swap(v, Ordering::SeqCst);
        if v < old {
            self.note_doorbell_fell_back(old);
        }
        self.doorbell_bell().wake();
        if crate::capture::is_on() {
            self.capture_doorbell(v);
        }
    }

    /// The [`Bell`] an idle packet processor sleeps on, in the doorbell's `start_ts` (a
    /// doorbell has no timestamps, and no client reads them): ringing one queue wakes that
    /// queue's processor and no other thread, and a launch never takes the [`HUB`]'s lock.
    pub fn doorbell_bell(&self) -> &Bell {
        let count = self.ts(false);
        // SAFETY: `Bell` is a transparent `AtomicI64`; the field lives as long as `self`.
        unsafe { &*(count as *const AtomicI64).cast::<Bell>() }
    }

    #[cold]
    fn capture_doorbell(&self, value: i64) {
        let queue = self.queue_ptr().load(Ordering::Acquire) as u64;
        if queue != 0 {
            // SAFETY: a doorbell's `queue_ptr` is its queue's `amd_queue_t`, which lives as
            // long as the queue (and so its doorbell); `hsa_queue.id` is set before the
            // queue is handed out.
            let id = unsafe { (*(queue as *const hsa_abi::amd_queue_t)).hsa_queue.id };
            crate::capture::doorbell(id, value);
        }
    }

    /// The first value this doorbell fell back from (kept in the doorbell's `reserved3`,
    /// which no one else uses): strict mode's `doorbell-monotonic` reads it.
    #[cold]
    fn note_doorbell_fell_back(&self, from: i64) {
        let _ = self.fell_back_field().compare_exchange(
            0,
            from.wrapping_add(1),
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
    }

    fn fell_back_field(&self) -> &AtomicI64 {
        self.field(offset_of!(amd_signal_t, reserved3))
    }

    /// Under virtual time: when (virtual ns) the value last changed. Kept in `reserved3`,
    /// which only doorbells use otherwise (for their fall-back record), and doorbells have no
    /// virtual time.
    pub fn virtual_time(&self) -> u64 {
        self.fell_back_field().load(Ordering::Acquire) as u64
    }

    pub fn set_virtual_time(&self, at: u64) {
        self.fell_back_field().store(at as i64, Ordering::Release);
    }

    /// For a doorbell: the `amd_queue_t` address of its queue.
    pub fn doorbell_queue(&self) -> u64 {
        self.queue_ptr().load(Ordering::Acquire) as u64
    }

    /// For a doorbell: the value it was rung with before a later store went lower, if any.
    pub fn doorbell_fell_back_from(&self) -> Option<i64> {
        match self.fell_back_field().load(Ordering::Relaxed) {
            0 => None,
            v => Some(v.wrapping_sub(1)),
        }
    }

    /// Applies a read-modify-write and wakes waiters; returns the previous value.
    pub fn rmw(&self, order: Ordering, f: impl Fn(&AtomicI64, Ordering) -> i64) -> i64 {
        let old = f(self.value(), order);
        self.changed();
        old
    }

    pub fn cas(&self, expected: i64, new: i64, order: Ordering) -> i64 {
        let failure = match order {
            Ordering::Release | Ordering::Relaxed => Ordering::Relaxed,
            Ordering::AcqRel | Ordering::Acquire => Ordering::Acquire,
            _ => Ordering::SeqCst,
        };
        let old = match self.value().compare_exchange(expected, new, order, failure) {
            Ok(v) | Err(v) => v,
        };
        self.changed();
        old
    }
}

/// Signals that live outside the slab and that other processes share: a device service's
/// IPC signals and doorbells. The layer above that attaches to the service
/// (`ipc_signal.rs`) installs how to find them and how to tell other processes of a change
/// ([`install_shared`]); this module knows only these two functions.
pub struct SharedSignals {
    /// The live shared signal a handle names, if it is one.
    pub find: fn(u64) -> Option<&'static SignalMemory>,
    /// The signal at this address changed (0: any may have): other processes hear of it.
    pub changed: fn(u64),
}

static SHARED: std::sync::OnceLock<SharedSignals> = std::sync::OnceLock::new();

/// Whether this process holds shared signals (a change of any signal then looks further);
/// set by their owner while it does.
pub static SHARED_ON: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Installs the shared signals' functions (the first call wins: there is one kind).
pub fn install_shared(shared: SharedSignals) {
    let _ = SHARED.set(shared);
}

#[cold]
fn shared_changed(at: u64) {
    if let Some(shared) = SHARED.get() {
        (shared.changed)(at);
    }
}

fn shared_find(handle: u64) -> Option<&'static SignalMemory> {
    SHARED.get().and_then(|shared| (shared.find)(handle))
}

/// Signals may have changed behind the signal API (a wave wrote them and raised its
/// interrupt): wakes every waiter of this process and, if it shares signals, tells other
/// processes.
pub fn changed_behind_the_api() {
    HUB.notify();
    if SHARED_ON.load(Ordering::Relaxed) {
        shared_changed(0);
    }
}

/// Keeps a shared signal's slot while the [`Signal`] lives; dropping it gives the slot back.
pub trait SlotKeeper: Send + Sync {}

/// Where every signal's `amd_signal_t` lives (see [`Slab`]). A slot is in use while its `kind`
/// is not `AMD_SIGNAL_KIND_INVALID` (0): the kind is written before the handle is handed out
/// and cleared when the last holder of the signal drops it, and only then is the slot reused.
/// 2^20 live signals at most (64 MiB of address space, backed as slots are first used); a
/// client that needs more gets `HSA_STATUS_ERROR_OUT_OF_RESOURCES`.
static SLAB: std::sync::LazyLock<Option<Slab>> =
    std::sync::LazyLock::new(|| Slab::new(SLOT_BYTES, 1 << 20));
const SLOT_BYTES: u64 = std::mem::size_of::<amd_signal_t>() as u64;

fn alloc_memory(kind: i64, initial: i64) -> HsaResult<&'static SignalMemory> {
    let slot = SLAB
        .as_ref()
        .and_then(Slab::alloc)
        .ok_or(HsaError::OUT_OF_RESOURCES)?;
    // SAFETY: a slot of the slab (64 bytes, 64-aligned, mapped for the whole process) that no
    // signal uses: fresh, or given back by its last holder.
    let memory: &'static SignalMemory = unsafe { &*slot.cast::<SignalMemory>() };
    memory.init(kind, initial);
    Ok(memory)
}

/// Where signal memory lies, as (start, bytes): the `amd_signal_t` slab and the event
/// mailboxes. The device may touch both, as on ROCr (signals live in system memory every
/// agent reaches, mailboxes in the driver's event page): the device library's
/// `__ockl_hsa_signal_add` changes a signal's value and writes its event mailbox itself.
pub fn device_visible_ranges() -> impl Iterator<Item = (u64, u64)> {
    let slab = SLAB.as_ref().map(Slab::range);
    let mailboxes = (
        MAILBOXES.as_ptr() as u64,
        std::mem::size_of_val(&MAILBOXES) as u64,
    );
    slab.into_iter().chain(std::iter::once(mailboxes))
}

/// The memory of the live signal `handle` names, without a lock or a reference count (the
/// signal and queue-index entry points); anything else is `HSA_STATUS_ERROR_INVALID_SIGNAL`.
/// A signal destroyed while a client still uses its handle reads as destroyed, or, once its
/// slot is reused, as the new signal: the client's error, never a fault.
#[inline]
pub fn live(handle: hsa_signal_t) -> HsaResult<&'static SignalMemory> {
    let Some(slot) = SLAB.as_ref().and_then(|slab| slab.slot(handle.handle)) else {
        return shared_find(handle.handle).ok_or(HsaError::INVALID_SIGNAL);
    };
    // SAFETY: a slot of the slab: mapped for the whole process, 64-aligned; an untouched slot
    // reads as zeros.
    let memory: &'static SignalMemory = unsafe { &*slot.cast::<SignalMemory>() };
    if memory.kind() == AMD_SIGNAL_KIND_INVALID {
        return Err(HsaError::INVALID_SIGNAL);
    }
    Ok(memory)
}

/// An HSA signal: its memory in the slab, and what hsasim keeps beside it. Packet processors,
/// copy engines and waiters hold it by `Arc`, so its slot stays its own until the last of them
/// lets go, even after `hsa_signal_destroy`.
pub struct Signal {
    memory: &'static SignalMemory,
    pub consumers: Vec<u64>,
    pub attributes: u64,
    /// A shared signal's slot in a device service's segment (not the slab).
    shared: Option<Box<dyn SlotKeeper>>,
}

impl Drop for Signal {
    fn drop(&mut self) {
        if self.shared.take().is_some() {
            // Its `SharedRef` gave the process's reference back (and cleared the slot if it
            // was the last).
            return;
        }
        let event = self.event_id();
        if event != 0 {
            EVENTS.lock().free.push(event);
        }
        self.memory
            .kind_field()
            .store(AMD_SIGNAL_KIND_INVALID, Ordering::Release);
        if let Some(slab) = SLAB.as_ref() {
            slab.release(self.memory.0.get().cast());
        }
    }
}

impl std::ops::Deref for Signal {
    type Target = SignalMemory;
    fn deref(&self) -> &SignalMemory {
        self.memory
    }
}

/// KFD's budget of signal events per process (`KFD_SIGNAL_EVENT_LIMIT`): what lets a CPU
/// sleep on a signal until the GPU's completion interrupt instead of polling it.
pub const SIGNAL_EVENT_LIMIT: usize = 4096;

/// The process's signal events, as KFD hands them out: ids 1.., each with a mailbox word the
/// GPU writes to raise the interrupt. ROCr gives one to every signal a CPU may wait on and,
/// when KFD has none left, makes a polling signal instead (event id 0, no mailbox): it still
/// works, but a CPU wait on it spins or sleeps in slices rather than sleeping on an interrupt.
struct EventPool {
    free: Vec<u32>,
    next: u32,
    exhausted_warned: bool,
}

static EVENTS: Mutex<EventPool> = Mutex::new(EventPool {
    free: Vec::new(),
    next: 1,
    exhausted_warned: false,
});

/// The event mailboxes (event `id` writes slot `id - 1`).
static MAILBOXES: [AtomicU64; SIGNAL_EVENT_LIMIT] =
    [const { AtomicU64::new(0) }; SIGNAL_EVENT_LIMIT];

fn take_event() -> Option<u32> {
    let mut pool = EVENTS.lock();
    if let Some(id) = pool.free.pop() {
        return Some(id);
    }
    if (pool.next as usize) <= SIGNAL_EVENT_LIMIT {
        pool.next += 1;
        return Some(pool.next - 1);
    }
    if !pool.exhausted_warned {
        pool.exhausted_warned = true;
        tracing::warn!(target: "hsasim", "all {SIGNAL_EVENT_LIMIT} signal events of this process are in use (KFD's limit): new signals are polling signals, as with ROCr (CPU waits on them poll instead of sleeping on an interrupt)");
    }
    None
}

/// Whether ROCr would give a signal with these attributes and consumers an interrupt event:
/// not for GPU-only or IPC signals, nor for signals whose consumers are all GPUs.
pub fn wants_event(attributes: u64, consumers: &[u64], is_cpu: impl Fn(u64) -> bool) -> bool {
    const GPU_ONLY: u64 = 1;
    const IPC: u64 = 2;
    attributes & (GPU_ONLY | IPC) == 0
        && (consumers.is_empty() || consumers.iter().any(|&a| is_cpu(a)))
}

impl Signal {
    pub fn new(
        kind: i64,
        initial: hsa_signal_value_t,
        consumers: Vec<u64>,
        attributes: u64,
    ) -> HsaResult<Self> {
        Ok(Signal {
            memory: alloc_memory(kind, initial)?,
            consumers,
            attributes,
            shared: None,
        })
    }

    /// An IPC signal in slot `memory` of a device service's segment, which `shared` keeps.
    pub(crate) fn shared(
        memory: &'static SignalMemory,
        consumers: Vec<u64>,
        attributes: u64,
        shared: Box<dyn SlotKeeper>,
    ) -> Self {
        Signal {
            memory,
            consumers,
            attributes,
            shared: Some(shared),
        }
    }

    /// Gives this signal one of the process's interrupt events, if any is left; otherwise it
    /// stays a polling signal.
    pub fn attach_event(&self) {
        if let Some(id) = take_event() {
            let mailbox = &MAILBOXES[id as usize - 1];
            self.field(offset_of!(amd_signal_t, event_mailbox_ptr))
                .store(mailbox.as_ptr() as i64, Ordering::Relaxed);
            // event_id shares its 8 bytes with reserved1 (0).
            self.field(offset_of!(amd_signal_t, event_id))
                .store(i64::from(id), Ordering::Release);
        }
    }

    /// The interrupt event this signal owns (0: a polling signal).
    pub fn event_id(&self) -> u32 {
        self.field(offset_of!(amd_signal_t, event_id))
            .load(Ordering::Acquire) as u32
    }

    pub fn set_queue_ptr(&self, queue: u64) {
        self.queue_ptr().store(queue as i64, Ordering::Release);
    }

    pub fn set_timestamps(&self, start: u64, end: u64) {
        self.ts(false).store(start as i64, Ordering::Relaxed);
        self.ts(true).store(end as i64, Ordering::Relaxed);
    }

    pub fn timestamps(&self) -> (u64, u64) {
        (
            self.ts(false).load(Ordering::Relaxed) as u64,
            self.ts(true).load(Ordering::Relaxed) as u64,
        )
    }
}

/// Live signals by handle, for the calls that keep a signal (packets, copies, waits): lookups
/// clone the `Arc`, so a signal destroyed while a packet processor or SDMA engine still holds
/// it keeps its slot until they drop it.
#[derive(Default)]
pub struct SignalRegistry {
    map: RwLock<crate::handles::HandleMap<Arc<Signal>>>,
}

impl SignalRegistry {
    pub fn create(
        &self,
        kind: i64,
        initial: i64,
        consumers: Vec<u64>,
        attributes: u64,
    ) -> HsaResult<Arc<Signal>> {
        let s = Arc::new(Signal::new(kind, initial, consumers, attributes)?);
        self.map.write().insert(s.handle().handle, s.clone());
        Ok(s)
    }
    /// Enters a signal made elsewhere (an IPC signal).
    pub fn insert(&self, s: Signal) -> Arc<Signal> {
        let s = Arc::new(s);
        self.map.write().insert(s.handle().handle, s.clone());
        s
    }
    pub fn create_user(&self, initial: i64) -> HsaResult<Arc<Signal>> {
        self.create(AMD_SIGNAL_KIND_USER, initial, Vec::new(), 0)
    }
    pub fn get(&self, h: hsa_signal_t) -> HsaResult<Arc<Signal>> {
        self.map
            .read()
            .get(&h.handle)
            .cloned()
            .ok_or(HsaError::INVALID_SIGNAL)
    }
    /// Like [`get`](Self::get) but a zero handle means "no signal".
    pub fn get_opt(&self, h: hsa_signal_t) -> HsaResult<Option<Arc<Signal>>> {
        if h.handle == 0 {
            Ok(None)
        } else {
            self.get(h).map(Some)
        }
    }
    pub fn destroy(&self, h: hsa_signal_t) -> HsaResult {
        let mut map = self.map.write();
        let removed = map.remove(&h.handle);
        // A map grown for a million signals gives that room back once most are gone
        // (amortised: the rehash follows capacity * 3/4 removals).
        if map.capacity() > 1024 && map.len() < map.capacity() / 4 {
            let keep = map.len() * 2;
            map.shrink_to(keep);
        }
        drop(map);
        removed.map(drop).ok_or(HsaError::INVALID_SIGNAL)
    }
    pub fn len(&self) -> usize {
        self.map.read().len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// `hsa_signal_condition_t` applied to a value.
pub fn condition_holds(cond: u32, value: i64, compare: i64) -> HsaResult<bool> {
    use hsa_abi::*;
    Ok(match cond {
        HSA_SIGNAL_CONDITION_EQ => value == compare,
        HSA_SIGNAL_CONDITION_NE => value != compare,
        HSA_SIGNAL_CONDITION_LT => value < compare,
        HSA_SIGNAL_CONDITION_GTE => value >= compare,
        _ => return Err(HsaError::INVALID_ARGUMENT),
    })
}

/// Converts an HSA timeout hint (timestamp units = ns) into a deadline; `u64::MAX` and
/// overflowing hints mean "forever".
pub fn deadline_after(timeout_ns: u64) -> Option<Instant> {
    if timeout_ns == u64::MAX {
        return None;
    }
    Instant::now().checked_add(Duration::from_nanos(timeout_ns))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hsa_abi::*;

    #[test]
    fn handle_is_the_address_of_the_amd_signal() {
        let reg = SignalRegistry::default();
        let s = reg.create_user(7).unwrap();
        let h = s.handle();
        // SAFETY: the handle points at the live signal's amd_signal_t.
        let abi = unsafe { &*(h.handle as *const amd_signal_t) };
        assert_eq!(abi.value, 7);
        assert_eq!(abi.kind, AMD_SIGNAL_KIND_USER);
        assert_eq!(h.handle % 64, 0);
        reg.destroy(h).unwrap();
        assert_eq!(reg.destroy(h), Err(HsaError::INVALID_SIGNAL));
        assert!(reg.get(hsa_signal_t { handle: 0x1234 }).is_err());
    }

    /// A bell's sleeper wakes when rung, whichever comes first: its sleep or the change
    /// (without a wake-up it would sleep for the hour it asked for).
    #[test]
    fn a_bell_wakes_its_sleeper_and_no_change_is_lost() {
        use std::sync::atomic::AtomicBool;
        static BELL: Bell = Bell::new();
        for round in 0..200 {
            let changed = Arc::new(AtomicBool::new(false));
            let sleeper = {
                let changed = changed.clone();
                std::thread::spawn(move || {
                    while !changed.load(Ordering::SeqCst) {
                        BELL.sleep_unless(
                            &mut || changed.load(Ordering::SeqCst),
                            Duration::from_secs(3600),
                        );
                    }
                })
            };
            if round % 2 == 0 {
                std::thread::yield_now();
            }
            changed.store(true, Ordering::SeqCst);
            BELL.wake();
            sleeper.join().unwrap();
        }
        assert_eq!(
            BELL.0.load(Ordering::SeqCst),
            0,
            "every sleeper counted itself out"
        );
    }

    #[test]
    fn a_doorbells_bell_lives_in_its_unused_timestamp() {
        let reg = SignalRegistry::default();
        let doorbell = reg
            .create(AMD_SIGNAL_KIND_DOORBELL, 0, Vec::new(), 0)
            .unwrap();
        // Nobody sleeps: a ring only stores (and reads the count).
        doorbell.store(5, Ordering::Release);
        assert_eq!(doorbell.load(Ordering::Acquire), 5);
        assert_eq!(doorbell.doorbell_bell().0.load(Ordering::SeqCst), 0);
        // A sleeper on the doorbell is woken by the next ring.
        let rung = Arc::new(std::sync::Barrier::new(2));
        let waiter = {
            let (doorbell, rung) = (doorbell.clone(), rung.clone());
            std::thread::spawn(move || {
                rung.wait();
                while doorbell.load(Ordering::Acquire) < 6 {
                    doorbell.doorbell_bell().sleep_unless(
                        &mut || doorbell.load(Ordering::Acquire) >= 6,
                        Duration::from_secs(3600),
                    );
                }
            })
        };
        rung.wait();
        doorbell.store(6, Ordering::Release);
        waiter.join().unwrap();
        reg.destroy(doorbell.handle()).ok();
    }

    #[test]
    fn conditions_follow_hsa_semantics() {
        assert!(condition_holds(HSA_SIGNAL_CONDITION_EQ, 1, 1).unwrap());
        assert!(condition_holds(HSA_SIGNAL_CONDITION_NE, 1, 2).unwrap());
        assert!(condition_holds(HSA_SIGNAL_CONDITION_LT, -1, 0).unwrap());
        assert!(condition_holds(HSA_SIGNAL_CONDITION_GTE, 0, 0).unwrap());
        assert!(condition_holds(9, 0, 0).is_err());
    }
}

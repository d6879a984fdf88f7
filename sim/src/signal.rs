//! Signals: ROCr-layout `amd_signal_t` memory plus the wake-up machinery.
//!
//! An `hsa_signal_t` handle is the address of the signal's `amd_signal_t`, so clients that
//! read `value` or the profiling timestamps directly (AMD's HIP does) see what they expect.
//! Handles are still checked against a registry before use: a garbage handle is reported,
//! never dereferenced.
//!
//! Waking: every mutation goes through [`Signal`] methods, which bump the global [`HUB`].
//! All blocked waiters (host waits, barrier packets, SDMA dependencies, async handlers, idle
//! packet processors waiting on their doorbell) sleep on that one condvar and re-check their
//! own condition when woken. One condvar keeps the lost-wake-up argument in one place; the
//! cost is spurious wake-ups, which are cheap at simulator scale.

use crate::error::{HsaError, HsaResult};
use hsa_abi::{amd_signal_t, hsa_signal_t, hsa_signal_value_t, AMD_SIGNAL_KIND_USER};
use parking_lot::{Condvar, Mutex, RwLock};
use std::cell::UnsafeCell;
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
    pub fn notify(&self) {
        if self.waiters.load(Ordering::SeqCst) != 0 {
            let mut epoch = self.lock.lock();
            *epoch = epoch.wrapping_add(1);
            self.cond.notify_all();
        }
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

/// An HSA signal. `repr(C)` with the ABI block first: the handle (this struct's address)
/// is also the address of the `amd_signal_t`.
#[repr(C)]
pub struct Signal {
    abi: UnsafeCell<amd_signal_t>,
    pub consumers: Vec<u64>,
    pub attributes: u64,
}

// SAFETY: the `amd_signal_t` inside is only accessed through atomics (value, timestamps)
// after construction; the other fields are immutable.
unsafe impl Sync for Signal {}
// SAFETY: as above; nothing in it is tied to a thread.
unsafe impl Send for Signal {}

impl Signal {
    pub fn new(
        kind: i64,
        initial: hsa_signal_value_t,
        consumers: Vec<u64>,
        attributes: u64,
    ) -> Self {
        Signal {
            abi: UnsafeCell::new(amd_signal_t {
                kind,
                value: initial,
                event_mailbox_ptr: 0,
                event_id: 0,
                reserved1: 0,
                start_ts: 0,
                end_ts: 0,
                queue_ptr: 0,
                reserved3: [0; 2],
            }),
            consumers,
            attributes,
        }
    }

    pub fn handle(self: &Arc<Self>) -> hsa_signal_t {
        hsa_signal_t {
            handle: Arc::as_ptr(self) as u64,
        }
    }

    pub fn kind(&self) -> i64 {
        // SAFETY: `kind` is written only in `new`, before the signal is shared.
        unsafe { (*self.abi.get()).kind }
    }

    pub fn value_ptr(&self) -> *mut i64 {
        // SAFETY: projecting a field pointer out of our own cell; no reference is created.
        unsafe { std::ptr::addr_of_mut!((*self.abi.get()).value) }
    }

    fn value(&self) -> &AtomicI64 {
        // SAFETY: `value` is an 8-byte aligned i64 inside a 64-byte aligned struct that
        // lives as long as `self`; all concurrent access goes through this atomic view.
        unsafe { AtomicI64::from_ptr(self.value_ptr()) }
    }

    fn ts(&self, end: bool) -> &AtomicU64 {
        // SAFETY: as for `value`: aligned u64 fields of the cell, accessed only atomically.
        unsafe {
            let p = self.abi.get();
            AtomicU64::from_ptr(if end {
                std::ptr::addr_of_mut!((*p).end_ts)
            } else {
                std::ptr::addr_of_mut!((*p).start_ts)
            })
        }
    }

    pub fn set_queue_ptr(&self, queue: u64) {
        // SAFETY: set once by the queue that owns this doorbell, before it is published.
        unsafe { (*self.abi.get()).queue_ptr = queue }
    }

    pub fn load(&self, order: Ordering) -> i64 {
        self.value().load(order)
    }
    pub fn store(&self, v: i64, order: Ordering) {
        self.value().store(v, order);
        HUB.notify();
    }
    /// Applies a read-modify-write and wakes waiters; returns the previous value.
    pub fn rmw(&self, order: Ordering, f: impl Fn(&AtomicI64, Ordering) -> i64) -> i64 {
        let old = f(self.value(), order);
        HUB.notify();
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
        HUB.notify();
        old
    }

    pub fn set_timestamps(&self, start: u64, end: u64) {
        self.ts(false).store(start, Ordering::Relaxed);
        self.ts(true).store(end, Ordering::Relaxed);
    }
    pub fn timestamps(&self) -> (u64, u64) {
        (
            self.ts(false).load(Ordering::Relaxed),
            self.ts(true).load(Ordering::Relaxed),
        )
    }
}

/// Live signals by handle. Lookups clone the `Arc`, so a signal destroyed while a packet
/// processor or SDMA engine still holds it stays valid memory until they drop it.
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
    ) -> Arc<Signal> {
        let s = Arc::new(Signal::new(kind, initial, consumers, attributes));
        self.map.write().insert(Arc::as_ptr(&s) as u64, s.clone());
        s
    }
    pub fn create_user(&self, initial: i64) -> Arc<Signal> {
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
        self.map
            .write()
            .remove(&h.handle)
            .map(|_| ())
            .ok_or(HsaError::INVALID_SIGNAL)
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
        let s = reg.create_user(7);
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

    #[test]
    fn conditions_follow_hsa_semantics() {
        assert!(condition_holds(HSA_SIGNAL_CONDITION_EQ, 1, 1).unwrap());
        assert!(condition_holds(HSA_SIGNAL_CONDITION_NE, 1, 2).unwrap());
        assert!(condition_holds(HSA_SIGNAL_CONDITION_LT, -1, 0).unwrap());
        assert!(condition_holds(HSA_SIGNAL_CONDITION_GTE, 0, 0).unwrap());
        assert!(condition_holds(9, 0, 0).is_err());
    }
}

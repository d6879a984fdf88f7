//! AQL queues the shim creates and writes packets into itself.
//!
//! Concurrency rule: a `Queue` may be shared by several streams; every method here is safe
//! to call from several threads at once, because slots are reserved with the atomic
//! `add_write_index` and each writer only touches its own slot.
//!
//! ## When a queue fails
//! The HSA runtime reports a failed packet (a memory fault, an illegal instruction, a trap)
//! through the queue's error callback, and from then on nothing on that queue runs. Other
//! queues learn of it only through barrier packets that wait for a packet of the failed
//! queue: such a barrier never completes, so its queue is *stuck* from that barrier on, and
//! so is every queue that waits for a packet behind it, however long the chain. Each queue
//! therefore records its barrier packets that wait for another queue ([`Queue::add_blocker`],
//! called only for cross-queue waits, never on the launch path), and
//! [`Queue::doomed_at`] answers, by walking those records back, whether a given packet can
//! still complete.

use super::memory::{MemoryPool, PoolBuffer};
use super::signal::PooledSignal;
use super::{check, HsaApi, HsaError};
use hsa_abi::*;
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

/// The largest kernarg segment a launch may have (and the size and alignment of a large
/// kernarg slot). AMD's limit on explicit kernel arguments is 4 KiB including hidden arguments
/// for our purposes; larger kernarg segments are refused at launch.
pub const KERNARG_SLOT_BYTES: usize = 4096;

/// Size and alignment of a small kernarg slot: 256 bytes of explicit arguments and the 256 of
/// code object v5's hidden arguments, what nearly every kernel has. Launches write their
/// segments into these, densely packed (eight to a page), so that consecutive launches fill
/// consecutive cache lines of the same pages instead of a fresh page each.
pub const SMALL_KERNARG_SLOT_BYTES: usize = 512;

/// Which of a queue's two kernarg regions a kernel's segment is written to. Both have one slot
/// per packet index (see the `kernargs` field of [`Queue`]), so a slot belongs to its packet
/// until that completes whichever region it is in; the large region is only touched by
/// launches of kernels whose segment does not fit a small slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum KernargSlot {
    /// [`SMALL_KERNARG_SLOT_BYTES`], so aligned. The discriminants are the sizes' log2: a
    /// slot's address is then a shift and an add (the launch path works it out).
    Small = 9,
    /// [`KERNARG_SLOT_BYTES`], so aligned.
    Large = 12,
}

const _: () = assert!(
    1 << KernargSlot::Small as u32 == SMALL_KERNARG_SLOT_BYTES
        && 1 << KernargSlot::Large as u32 == KERNARG_SLOT_BYTES
);

impl KernargSlot {
    /// The slot that holds a segment of `size` bytes aligned to `align` (a power of two), or
    /// `None` if no slot does.
    pub fn for_segment(size: usize, align: usize) -> Option<KernargSlot> {
        if size <= SMALL_KERNARG_SLOT_BYTES && align <= SMALL_KERNARG_SLOT_BYTES {
            Some(KernargSlot::Small)
        } else if size <= KERNARG_SLOT_BYTES && align <= KERNARG_SLOT_BYTES {
            Some(KernargSlot::Large)
        } else {
            None
        }
    }

    /// Bytes of one slot.
    #[inline(always)]
    pub const fn bytes(self) -> usize {
        1 << self as u32
    }

    /// Where packet `index`'s slot of this kind starts in the kernarg memory of a queue with
    /// `slots` slots per region (a power of two): the small region first, then the large one.
    #[inline(always)]
    fn offset(self, index: u64, slots: u64) -> usize {
        let slot = (index & (slots - 1)) as usize;
        let region = match self {
            KernargSlot::Small => 0,
            KernargSlot::Large => slots as usize * SMALL_KERNARG_SLOT_BYTES,
        };
        region + (slot << self as u32)
    }

    /// Bytes of kernarg memory a queue with `slots` slots per region needs.
    fn region_bytes(slots: u64) -> usize {
        slots as usize * (SMALL_KERNARG_SLOT_BYTES + KERNARG_SLOT_BYTES)
    }
}

/// What the error callback of a queue records; 0 while the queue is healthy.
struct QueueHealth {
    status: AtomicU32,
    queue_id: u64,
}

pub struct Queue {
    api: &'static HsaApi,
    raw: *mut hsa_queue_t,
    ring: *mut AqlPacket,
    size: u64,
    pub id: u64,
    /// The GPU agent and the device ordinal the queue belongs to (for traces).
    agent: hsa_agent_t,
    pub device: u32,
    health: Box<QueueHealth>,
    /// Cross-queue waits of this queue's barrier packets, and where it is stuck (see the
    /// module comment). Locked only by cross-queue waits and by fault checks.
    waits: Mutex<Waits>,
    /// Two regions of `2 * size` slots each, one of [`SMALL_KERNARG_SLOT_BYTES`] slots and one
    /// of [`KERNARG_SLOT_BYTES`] slots ([`KernargSlot`]): packet `i` uses slot `i % (2 * size)`
    /// of the region its kernel's segment fits. Slot reuse is safe because we only reserve index `j` once `j - size` was consumed, and
    /// every packet carries the barrier bit, so packet `j - 2 * size` has completed by then.
    /// That holds however many streams share the queue: every packet the shim publishes, from
    /// any stream (kernels, markers, barrier-AND waits), is built with
    /// [`stream_packet_header`], which sets the barrier bit.
    /// Freed after the queue is destroyed (fields drop after `Drop::drop`).
    kernargs: PoolBuffer,
    /// The highest read index any reservation has loaded. The packet processor only moves
    /// the read index forward, so this never overstates how far it got: a reservation that
    /// fits behind it fits behind the real one, and needs no HSA call to find out.
    read_seen: AtomicU64,
}

// SAFETY: the queue ring and kernarg memory are shared with the device by design; concurrent
// use follows the AQL protocol (atomic index reservation, one writer per slot).
unsafe impl Send for Queue {}
// SAFETY: as above.
unsafe impl Sync for Queue {}

/// The queue error callback the HSA runtime calls (on its own thread) when a packet fails.
unsafe extern "C" fn on_queue_error(
    status: hsa_status_t,
    _queue: *mut hsa_queue_t,
    data: *mut c_void,
) {
    if data.is_null() {
        return;
    }
    // SAFETY: `data` is the boxed `QueueHealth` of a live `Queue` (the queue is destroyed
    // before its health record is dropped).
    let health = unsafe { &*(data as *const QueueHealth) };
    record_queue_error(health, status);
}

/// Faults any queue of the process has become known to suffer (an error reported, a barrier
/// found stuck): a stream that answers a synchronize from host state does so only while this
/// has not moved since it last looked at its queue.
static FAULTS_SEEN: AtomicU64 = AtomicU64::new(0);

/// See [`FAULTS_SEEN`].
#[inline]
pub fn faults_seen() -> u64 {
    FAULTS_SEEN.load(Ordering::Acquire)
}

/// A fault became known: every host-side answer that predates it must look again.
pub fn note_fault() {
    FAULTS_SEEN.fetch_add(1, Ordering::AcqRel);
}

/// Records a queue's failure; what waiters look for is stored before anything that could
/// panic, and the rest is guarded (see `callback.rs`).
fn record_queue_error(health: &QueueHealth, status: hsa_status_t) {
    // A runtime that reports "success" as an error still means the queue stopped.
    let stored = if status == status::SUCCESS {
        status::ERROR
    } else {
        status
    };
    health.status.store(stored, Ordering::Release);
    note_fault();
    super::callback::guarded("the queue error callback", (), || {
        // Reported to the program at its next synchronising call (see `stream.rs`).
        tracing::debug!(
            queue = health.queue_id,
            status = format_args!("{status:#x}"),
            "queue error callback"
        );
    });
}

/// A barrier packet published for others to wait for (an event record, "this stream so
/// far"): its completion signal and where it is.
#[derive(Clone)]
pub struct Marker {
    pub signal: PooledSignal,
    pub queue: Arc<Queue>,
    pub index: u64,
}

impl Marker {
    /// Why this marker can never complete, if it has not and cannot (see
    /// [`Queue::doomed_at`]).
    pub fn lost(&self) -> Option<Doom> {
        let doom = self.queue.doomed_at(self.index)?;
        // Read after the fault became visible: had the marker completed before the fault, it
        // would read 0 now.
        (!self.signal.is_zero()).then_some(doom)
    }
}

impl std::fmt::Debug for Marker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:?} (queue {} packet {})",
            self.signal, self.queue.id, self.index
        )
    }
}

/// Why a packet can never complete: queue `origin` failed with `status`, and the packet is on
/// it or behind a barrier that waits, directly or through other queues, for a packet of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Doom {
    pub status: hsa_status_t,
    pub origin: u64,
}

impl Doom {
    /// The fault, as the error the runtime reports it with (see `hsa/error.rs`).
    pub fn error(&self) -> HsaError {
        HsaError::fault(self.status)
    }
}

/// A barrier packet of a queue (at index `at`) that waits for something `upstream`, a marker
/// of another queue, must complete first.
struct Blocker {
    at: u64,
    upstream: Marker,
}

#[derive(Default)]
struct Waits {
    /// Cross-queue waits not yet known complete, oldest first.
    blockers: VecDeque<Blocker>,
    /// How many were left after the last full sweep of `blockers` (see `add_blocker`).
    swept: usize,
    /// The first packet index from which nothing on this queue can complete any more, and why.
    stuck: Option<(u64, Doom)>,
}

/// How many cross-queue waits one [`Queue::doomed_at`] question follows at most: the wait
/// graph is acyclic (a barrier only waits for packets published before it), but a wide one
/// could be walked many times over. An unanswered question is asked again at the next check
/// of the waiter, and every stuck queue found is remembered, so the walk makes progress.
const WALK_BUDGET: u32 = 256;

/// Outstanding cross-queue waits of a queue below which `add_blocker` sweeps only the front.
const SWEEP_AT: usize = 32;

impl Queue {
    /// Creates a queue of `size` packets of `queue_type` (`HSA_QUEUE_TYPE_MULTI`, or
    /// `HSA_QUEUE_TYPE_COOPERATIVE` for a device's cooperative queue) on `agent` (device
    /// ordinal `device`) and its kernarg ring in `kernarg_pool`.
    pub fn create(
        api: &'static HsaApi,
        agent: hsa_agent_t,
        device: u32,
        size: u32,
        queue_type: u32,
        kernarg_pool: MemoryPool,
    ) -> Result<Queue, HsaError> {
        let health = Box::new(QueueHealth {
            status: AtomicU32::new(0),
            queue_id: 0,
        });
        let mut raw: *mut hsa_queue_t = std::ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer; the callback data (`health`) is boxed so its
        // address is stable and outlives the queue (see Drop).
        let status = unsafe {
            (api.hsa_queue_create)(
                agent,
                size,
                queue_type,
                Some(on_queue_error),
                &*health as *const QueueHealth as *mut c_void,
                u32::MAX,
                u32::MAX,
                &mut raw,
            )
        };
        check("hsa_queue_create", status)?;
        // SAFETY: hsa_queue_create succeeded, so `raw` points to a live queue.
        let (ring, size, id) = unsafe {
            (
                (*raw).base_address as *mut AqlPacket,
                (*raw).size as u64,
                (*raw).id,
            )
        };
        if !size.is_power_of_two() {
            // The HSA specification promises a power of two; slots are found by masking.
            tracing::error!(target: "hipshim::queue", size, "the HSA runtime made a queue whose size is not a power of two");
            // SAFETY: the queue was created above and is not used elsewhere yet.
            unsafe { (api.hsa_queue_destroy)(raw) };
            return Err(HsaError::call(
                "hsa_queue_create",
                status::ERROR_INVALID_QUEUE_CREATION,
            ));
        }
        let kernarg_bytes = KernargSlot::region_bytes(2 * size);
        let kernargs = match kernarg_pool.allocate(kernarg_bytes, &[agent]) {
            // Every slot is aligned to its size if the memory is aligned to the largest.
            Ok(kernargs) if !(kernargs.as_ptr() as usize).is_multiple_of(KERNARG_SLOT_BYTES) => {
                tracing::error!(target: "hipshim::queue", address = ?kernargs.as_ptr(), "the kernarg pool gave memory not aligned to {KERNARG_SLOT_BYTES} bytes");
                // SAFETY: the queue was created above and is not used elsewhere yet.
                unsafe { (api.hsa_queue_destroy)(raw) };
                return Err(HsaError::call(
                    "hsa_amd_memory_pool_allocate",
                    status::ERROR_INVALID_ALLOCATION,
                ));
            }
            Ok(kernargs) => kernargs,
            Err(e) => {
                // SAFETY: the queue was created above and is not used elsewhere yet.
                unsafe { (api.hsa_queue_destroy)(raw) };
                return Err(e);
            }
        };
        let mut health = health;
        health.queue_id = id;
        tracing::debug!(target: "hipshim::queue", queue = id, device, size, queue_type, "created AQL queue");
        LIVE_QUEUES.fetch_add(1, Ordering::Relaxed);
        Ok(Queue {
            api,
            raw,
            ring,
            size,
            read_seen: AtomicU64::new(0),
            id,
            agent,
            device,
            health,
            waits: Mutex::new(Waits::default()),
            kernargs,
        })
    }

    /// Packets the ring holds.
    pub fn capacity(&self) -> u64 {
        self.size
    }

    /// Sets the queue's scheduling priority (`HSA_AMD_QUEUE_PRIORITY_*`).
    pub fn set_priority(&self, priority: u32) -> Result<(), HsaError> {
        // SAFETY: `raw` is live for the lifetime of `self`.
        let status = unsafe { (self.api.hsa_amd_queue_set_priority)(self.raw, priority) };
        check("hsa_amd_queue_set_priority", status)
    }

    /// Restricts the queue's dispatches to the compute units set in `mask` (bit i of word j is
    /// CU 32 * j + i).
    pub fn set_cu_mask(&self, mask: &[u32]) -> Result<(), HsaError> {
        let words = mask.len().min(u32::MAX as usize / 32);
        let bits = words as u32 * 32;
        // SAFETY: `mask` holds at least `bits / 32` words; `raw` is live.
        let status = unsafe { (self.api.hsa_amd_queue_cu_set_mask)(self.raw, bits, mask.as_ptr()) };
        check("hsa_amd_queue_cu_set_mask", status)
    }

    /// Asks the packet processor to record start/end timestamps in every completion signal,
    /// which events read with `hsa_amd_profiling_get_dispatch_time`.
    pub fn enable_profiling(&self) -> Result<(), HsaError> {
        // SAFETY: `raw` is live for the lifetime of `self`.
        let status = unsafe { (self.api.hsa_amd_profiling_set_profiler_enabled)(self.raw, 1) };
        check("hsa_amd_profiling_set_profiler_enabled", status)
    }

    /// The status the HSA runtime reported for this queue, if it failed.
    pub fn error(&self) -> Option<hsa_status_t> {
        match self.health.status.load(Ordering::Acquire) {
            0 => None,
            status => Some(status),
        }
    }

    /// Records that this queue's barrier packet `at` cannot complete before `upstream`, a
    /// marker of another queue. Called for cross-queue waits only.
    ///
    /// Completed waits are dropped from the front, where the oldest are, and by a full sweep
    /// only when the list has doubled since the last one: a handful of signal reads per wait
    /// however many are outstanding.
    pub fn add_blocker(&self, at: u64, upstream: &Marker) {
        let mut waits = self.waits.lock();
        while waits
            .blockers
            .front()
            .is_some_and(|b| b.upstream.signal.is_zero())
        {
            waits.blockers.pop_front();
        }
        if waits.blockers.len() >= (2 * waits.swept).max(SWEEP_AT) {
            waits.blockers.retain(|b| !b.upstream.signal.is_zero());
            waits.swept = waits.blockers.len();
        }
        waits.blockers.push_back(Blocker {
            at,
            upstream: upstream.clone(),
        });
    }

    /// Drops the cross-queue waits that can tell nothing any more: completed ones, every one
    /// once the queue failed, and those at or behind the barrier it is stuck from. Each wait
    /// holds its upstream queue, and that queue its own waits: a long-lived queue's stale
    /// waits kept every queue retired since alive, a chain that grew with each fault until no
    /// queue could be created. Called when a queue is retired (see `QueuePolicy::retire`).
    pub fn forget_settled_waits(&self) {
        let failed = self.error().is_some();
        let dropped: Vec<Blocker> = {
            let mut waits = self.waits.lock();
            let stuck_at = waits.stuck.map(|(at, _)| at);
            let (keep, drop): (VecDeque<Blocker>, VecDeque<Blocker>) =
                std::mem::take(&mut waits.blockers)
                    .into_iter()
                    .partition(|b| {
                        !failed
                            && stuck_at.is_none_or(|at| b.at < at)
                            && !b.upstream.signal.is_zero()
                    });
            waits.blockers = keep;
            waits.swept = waits.blockers.len();
            drop.into_iter().collect()
        };
        // Dropped without the lock: the last reference to an upstream queue destroys it.
        drop(dropped);
    }

    /// Why the packet at `index` can never complete, if it cannot: this queue failed, or the
    /// packet is at or behind a barrier whose dependency can never complete. Every stuck
    /// queue found on the way is remembered. Waiters call this between waits, never on the
    /// launch path.
    pub fn doomed_at(&self, index: u64) -> Option<Doom> {
        let mut budget = WALK_BUDGET;
        self.walk(index, &mut budget)
    }

    /// What this queue is already known to suffer (a reported error, or a stuck barrier found
    /// by an earlier walk), without walking.
    pub fn known_fault(&self) -> Option<Doom> {
        if let Some(status) = self.error() {
            return Some(Doom {
                status,
                origin: self.id,
            });
        }
        self.waits.lock().stuck.map(|(_, doom)| doom)
    }

    /// For a queue stuck (not failed) at or before packet `last`: how many packets from the
    /// stuck barrier up to `last` name `completion` as their completion signal, the ones
    /// that will never decrement it. The packets ahead of the stuck barrier still run, and a
    /// counter shared by packets on both sides of it settles at this number once they are
    /// done. None when the queue failed (nothing more runs on it) or is not stuck there.
    ///
    /// Before counting, the waits ahead of the known stuck barrier are walked again: a wait
    /// found doomed later than a barrier behind it moves the stuck point forward in the ring,
    /// and the packets between would otherwise be counted as still running.
    pub fn stranded_completions(&self, last: u64, completion: hsa_signal_t) -> Option<u64> {
        if self.error().is_some() {
            return None;
        }
        let mut at = self.waits.lock().stuck.map(|(at, _)| at)?;
        while at > 0 && self.doomed_at(at - 1).is_some() {
            let earlier = self.waits.lock().stuck.map(|(at, _)| at)?;
            if earlier >= at {
                break;
            }
            at = earlier;
        }
        if self.error().is_some() || at > last {
            return None;
        }
        Some(
            (at..=last)
                .filter(|&index| self.completion_at(index) == Some(completion.handle))
                .count() as u64,
        )
    }

    /// The completion signal of the packet in the slot of `index`, if the slot holds a
    /// published packet. Only for indices at or behind where the packet processor stopped:
    /// slots ahead of the read index still hold their packets of this lap of the ring.
    fn completion_at(&self, index: u64) -> Option<u64> {
        // SAFETY: the slot lies in the ring, which lives as long as `self`; the header is
        // read atomically (a producer may be publishing it), and the completion signal field
        // of every AQL packet type sits at byte 56 of its 64-byte slot.
        unsafe {
            let slot = self.ring.add((index & (self.size - 1)) as usize) as *const u8;
            let header = (*(slot as *const AtomicU32)).load(Ordering::Acquire) as u16;
            if PacketHeader(header).packet_type() == HSA_PACKET_TYPE_INVALID {
                return None;
            }
            Some(std::ptr::read_volatile(slot.add(56) as *const u64))
        }
    }

    /// Signals are read only once a fault is found: a thread polling a stream or event
    /// (hsasim's deterministic mode runs the device for a thread that keeps polling one
    /// signal) sees the same single signal read on every poll.
    fn walk(&self, index: u64, budget: &mut u32) -> Option<Doom> {
        if let Some(status) = self.error() {
            return Some(Doom {
                status,
                origin: self.id,
            });
        }
        let upstream: Vec<(u64, Marker)> = {
            let waits = self.waits.lock();
            if let Some((at, doom)) = waits.stuck {
                if index >= at {
                    return Some(doom);
                }
            }
            waits
                .blockers
                .iter()
                .filter(|b| b.at <= index)
                .map(|b| (b.at, b.upstream.clone()))
                .collect()
        };
        for (at, marker) in upstream {
            if *budget == 0 {
                return None;
            }
            *budget -= 1;
            let Some(doom) = marker.queue.walk(marker.index, budget) else {
                continue;
            };
            // As in `Marker::lost`: only a marker still incomplete after the fault is lost.
            if marker.signal.is_zero() {
                let mut waits = self.waits.lock();
                waits
                    .blockers
                    .retain(|b| b.at != at || b.upstream.signal.handle() != marker.signal.handle());
                continue;
            }
            self.mark_stuck(at, doom);
            return Some(doom);
        }
        None
    }

    fn mark_stuck(&self, at: u64, doom: Doom) {
        let mut waits = self.waits.lock();
        if waits.stuck.is_some_and(|(known, _)| known <= at) {
            return;
        }
        waits.stuck = Some((at, doom));
        drop(waits);
        note_fault();
        tracing::error!(
            queue = self.id,
            "queue {} is stuck from packet {at} on: that barrier waits for work of queue {}, which failed",
            self.id,
            doom.origin
        );
    }

    /// Reserves `count` consecutive packet slots (and their kernarg slots), waiting until the
    /// ring has room for them. The caller fills them in order with [`Reservation::write`] and
    /// rings the doorbell once with [`Reservation::ring`]; see [`Reservation`] for the
    /// protocol and for what recording adds.
    #[inline(always)]
    pub fn reserve(&self, count: u64) -> Reservation<'_> {
        // One relaxed load when not recording.
        let traced = crate::probe::timing_packets().then(crate::probe::now_ns);
        let stride = if traced.is_some() { 2 } else { 1 };
        let slots = count * stride;
        // SAFETY: `raw` is live for the lifetime of `self`.
        let first = unsafe { (self.api.hsa_queue_add_write_index_screlease)(self.raw, slots) };
        let mut read = self.read_seen.load(Ordering::Relaxed);
        // A trace records the queue's depth, which needs the read index as it is now.
        if first + slots - 1 - read >= self.size || traced.is_some() {
            read = self.wait_for_room(first + slots - 1);
        }
        Reservation {
            queue: self,
            first,
            count,
            written: 0,
            depth: first - read,
            traced,
        }
    }

    /// Publishes one kernel dispatch packet with kernargs and rings the doorbell; returns its
    /// index. `build` writes the kernargs into the packet's kernarg slot of kind `slot`, its
    /// until the packet completes, and returns the packet. [`Queue::reserve`] for one packet, as the launch
    /// path uses it: while nothing records, one index and no [`Reservation`] to keep (a struct
    /// in memory, moved at the ring).
    ///
    /// Once the doorbell is rung, the next packet's ring slot and the first line of the next
    /// kernarg slot of the same kind are prefetched: the next launch on the queue writes there
    /// (most likely a kernel of the same kind of slot), and finds the lines in cache instead of
    /// stalling on them (a ring slot was last written `size` packets ago, a kernarg slot
    /// `2 * size`). Where the ring or the region wraps, once per lap, the hint goes past its end
    /// and is wasted.
    #[inline(always)]
    pub fn publish_with_kernargs(
        &self,
        slot: KernargSlot,
        build: impl FnOnce(&mut [u8]) -> hsa_kernel_dispatch_packet_t,
    ) -> u64 {
        if crate::probe::timing_packets() {
            return self.publish_with_kernargs_recorded(slot, build);
        }
        // SAFETY: `raw` is live for the lifetime of `self`.
        let index = unsafe { (self.api.hsa_queue_add_write_index_screlease)(self.raw, 1) };
        if index - self.read_seen.load(Ordering::Relaxed) >= self.size {
            self.wait_for_room(index);
        }
        let kernargs = self.kernarg_slot(index, slot);
        let next_kernargs = kernargs.as_ptr().wrapping_add(slot.bytes());
        let packet = build(kernargs);
        // SAFETY: `index` was reserved above, the ring has room for it, and it is written once
        // before the doorbell is rung for it.
        unsafe {
            self.write_dispatch(index, &packet);
            self.ring_doorbell(index);
        }
        prefetch_for_write(
            self.ring
                .wrapping_add((index & (self.size - 1)) as usize + 1),
        );
        prefetch_for_write(next_kernargs);
        index
    }

    /// [`Queue::publish_with_kernargs`] while recording (see [`Reservation`]).
    #[inline(never)]
    fn publish_with_kernargs_recorded(
        &self,
        slot: KernargSlot,
        build: impl FnOnce(&mut [u8]) -> hsa_kernel_dispatch_packet_t,
    ) -> u64 {
        let mut slots = self.reserve(1);
        let packet = build(slots.kernarg(slot));
        slots.write(&to_bytes(&packet));
        slots.ring()
    }

    /// Publishes one packet that needs no kernarg memory and rings the doorbell; returns its
    /// index.
    pub fn publish(&self, packet: &AqlPacket) -> u64 {
        let mut slots = self.reserve(1);
        let index = slots.write(packet);
        slots.ring();
        index
    }

    /// The kernarg slot of kind `slot` of packet `index`. Mutable from `&self`: the slot is
    /// memory shared with the device, owned by whoever reserved `index` (see the `kernargs`
    /// field).
    #[allow(clippy::mut_from_ref)]
    #[inline(always)]
    fn kernarg_slot(&self, index: u64, slot: KernargSlot) -> &mut [u8] {
        // The common case inline, its size a constant; large slots out of line.
        match slot {
            KernargSlot::Small => self.kernarg_slot_of(index, KernargSlot::Small),
            KernargSlot::Large => self.large_kernarg_slot(index),
        }
    }

    #[allow(clippy::mut_from_ref)]
    #[cold]
    #[inline(never)]
    fn large_kernarg_slot(&self, index: u64) -> &mut [u8] {
        self.kernarg_slot_of(index, KernargSlot::Large)
    }

    #[allow(clippy::mut_from_ref)]
    #[inline(always)]
    fn kernarg_slot_of(&self, index: u64, slot: KernargSlot) -> &mut [u8] {
        // SAFETY: the slot belongs to this index alone until the packet completes (see the
        // `kernargs` field); the memory was sized for 2 * size slots of each kind.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.kernargs
                    .as_ptr()
                    .add(slot.offset(index, 2 * self.size)),
                slot.bytes(),
            )
        }
    }

    /// Writes `packet` into its slot: body first, then the header+setup word with release.
    ///
    /// # Safety
    /// `index` was reserved by this thread and the ring has room for it.
    #[inline(always)]
    unsafe fn write(&self, index: u64, packet: &AqlPacket) {
        // SAFETY: the slot at `index % size` was released by the packet processor (room was
        // checked) and is written by this thread only.
        unsafe {
            let slot = self.ring.add((index & (self.size - 1)) as usize) as *mut u8;
            std::ptr::copy_nonoverlapping(packet.bytes.as_ptr().add(4), slot.add(4), 60);
            let header_and_setup = u32::from_le_bytes([
                packet.bytes[0],
                packet.bytes[1],
                packet.bytes[2],
                packet.bytes[3],
            ]);
            (*(slot as *const AtomicU32)).store(header_and_setup, Ordering::Release);
        }
        log_packet(self.id, index, packet);
    }

    /// [`Queue::write`] for a dispatch packet, field by field into the slot: a packet built in
    /// memory field by field and then copied in 16-byte pieces makes each wide load wait for
    /// the narrow stores under it (a failed store-to-load forward, ~15 cycles each, five per
    /// packet), while the fields' values are in registers already.
    ///
    /// # Safety
    /// As for [`Queue::write`].
    #[inline(always)]
    unsafe fn write_dispatch(&self, index: u64, p: &hsa_kernel_dispatch_packet_t) {
        // SAFETY: as in `write`: the slot is this thread's until its header is published, and
        // 64-byte aligned like the packet type.
        unsafe {
            let slot = self.ring.add((index & (self.size - 1)) as usize)
                as *mut hsa_kernel_dispatch_packet_t;
            std::ptr::addr_of_mut!((*slot).workgroup_size_x).write(p.workgroup_size_x);
            std::ptr::addr_of_mut!((*slot).workgroup_size_y).write(p.workgroup_size_y);
            std::ptr::addr_of_mut!((*slot).workgroup_size_z).write(p.workgroup_size_z);
            std::ptr::addr_of_mut!((*slot).reserved0).write(p.reserved0);
            std::ptr::addr_of_mut!((*slot).grid_size_x).write(p.grid_size_x);
            std::ptr::addr_of_mut!((*slot).grid_size_y).write(p.grid_size_y);
            std::ptr::addr_of_mut!((*slot).grid_size_z).write(p.grid_size_z);
            std::ptr::addr_of_mut!((*slot).private_segment_size).write(p.private_segment_size);
            std::ptr::addr_of_mut!((*slot).group_segment_size).write(p.group_segment_size);
            std::ptr::addr_of_mut!((*slot).kernel_object).write(p.kernel_object);
            std::ptr::addr_of_mut!((*slot).kernarg_address).write(p.kernarg_address);
            std::ptr::addr_of_mut!((*slot).reserved2).write(p.reserved2);
            std::ptr::addr_of_mut!((*slot).completion_signal).write(p.completion_signal);
            let header_and_setup = u32::from(p.header) | u32::from(p.setup) << 16;
            if tracing::enabled!(target: "hipshim::packet", tracing::Level::TRACE) {
                // From the slot, not from `p`: `p` stays in registers.
                let mut logged = std::ptr::read(slot as *const AqlPacket);
                logged.bytes[..4].copy_from_slice(&header_and_setup.to_le_bytes());
                log_decoded_packet(self.id, index, &logged);
            }
            (*(slot as *const AtomicU32)).store(header_and_setup, Ordering::Release);
        }
    }

    /// Tells the packet processor that packets up to `index` are written.
    ///
    /// # Safety
    /// Every packet up to `index` has been written.
    #[inline(always)]
    unsafe fn ring_doorbell(&self, index: u64) {
        // SAFETY: `raw` is live; the doorbell signal belongs to the queue.
        unsafe { (self.api.hsa_signal_store_screlease)((*self.raw).doorbell_signal, index as i64) };
        tracing::trace!(target: "hipshim::doorbell", queue = self.id, index, "doorbell rung");
    }

    /// Waits until the ring has room up to index `last`; returns the read index then.
    #[inline(never)]
    fn wait_for_room(&self, last: u64) -> u64 {
        let mut read = self.read_index();
        while last - read >= self.size {
            std::hint::spin_loop();
            std::thread::yield_now();
            read = self.read_index();
        }
        self.read_seen.fetch_max(read, Ordering::Relaxed);
        read
    }

    fn read_index(&self) -> u64 {
        tracing::trace!(target: "hipshim::read_index", queue = self.id, "read index loaded");
        // SAFETY: `raw` is live for the lifetime of `self`.
        unsafe { (self.api.hsa_queue_load_read_index_scacquire)(self.raw) }
    }
}

/// Packet slots reserved on a queue, filled in order and published with one doorbell.
///
/// The AQL protocol, as the packet processor sees it: an index is reserved with the atomic
/// `add_write_index` (so producers sharing the queue never get the same slot), the producer
/// waits until the ring has room, writes bytes 4..64 of the packet, then stores the
/// header+setup word last with release ordering; until that store the slot reads INVALID and
/// the packet processor stops in front of it rather than read a half-written packet. Only
/// then is the doorbell rung with the last index written.
///
/// **Why producers may ring out of order.** Streams that share a queue reserve their slots
/// atomically but publish and ring independently, so a producer holding index 11 can ring
/// before the one holding 10 has written its header, and the doorbell then moves from 11 back
/// to 10. That is harmless: the doorbell only says "look again"; the packet processor walks
/// the ring from its read index in order and stops at the first INVALID header, so it neither
/// skips packet 10 nor runs 11 early, and the late ring of 10 wakes it for both. ROCr's
/// runtime relies on the same rule: on gfx9 and later the hardware reads the write index and
/// the headers, and for older doorbells it drops backward rings itself.
///
/// **While recording** (`HIPSHIM_TRACE`/`HIPSHIM_STATS`) each packet takes two slots: the
/// packet carries the recorder's signal (its timestamps are the packet's), and a barrier-AND
/// right behind it carries the packet's own completion signal, so whoever waits for that still
/// sees it complete after the packet (see `trace::record`). Callers see no difference: indices
/// and kernarg slots come from the reservation.
///
/// A reservation dropped with slots left unwritten fills them with empty barrier packets and
/// rings: an INVALID header left in the ring would stop the queue for every producer.
pub struct Reservation<'q> {
    queue: &'q Queue,
    first: u64,
    count: u64,
    written: u64,
    /// Packets in the ring ahead of this reservation when it was made (for traces).
    depth: u64,
    /// When recording: the time of the reservation, the packets' submit time.
    traced: Option<u64>,
}

impl Reservation<'_> {
    #[inline]
    fn stride(&self) -> u64 {
        if self.traced.is_some() {
            2
        } else {
            1
        }
    }

    /// The queue index the next [`Reservation::write`] publishes at.
    #[inline]
    pub fn next_index(&self) -> u64 {
        self.first + self.written * self.stride()
    }

    /// The kernarg slot of kind `slot` of the next packet, its until that packet completes.
    #[inline(always)]
    pub fn kernarg(&mut self, slot: KernargSlot) -> &mut [u8] {
        self.queue.kernarg_slot(self.next_index(), slot)
    }

    /// Writes the next packet of the reservation (body first, header last) and returns its
    /// index. Panics if every reserved slot is already written (a bug of the caller).
    #[inline(always)]
    pub fn write(&mut self, packet: &AqlPacket) -> u64 {
        assert!(self.written < self.count, "more packets than reserved");
        let index = self.next_index();
        self.written += 1;
        let Some(submit_ns) = self.traced else {
            // SAFETY: `index` is reserved by this reservation, room was checked, and each
            // slot is written once (`written` only grows).
            unsafe { self.queue.write(index, packet) };
            return index;
        };
        self.write_traced(index, packet, submit_ns);
        index
    }

    /// [`Reservation::write`] while recording: the packet and its trace barrier.
    #[inline(never)]
    fn write_traced(&mut self, index: u64, packet: &AqlPacket, submit_ns: u64) {
        let mut packet = *packet;
        let original = completion_of(&packet);
        let trailer = match crate::probe::packet_signal() {
            Some(signal) => {
                set_completion(&mut packet, signal);
                crate::probe::packet_published(crate::probe::Published {
                    queue: self.queue.id,
                    device: self.queue.device,
                    agent: self.queue.agent,
                    index,
                    depth: self.depth,
                    packet: &packet,
                    signal,
                    original_completion: original,
                    submit_ns,
                });
                barrier_and(&[], original)
            }
            // No signal to time it with: the packet keeps its own, the second slot stays empty.
            None => barrier_and(&[], hsa_signal_t::default()),
        };
        // SAFETY: `index` and `index + 1` belong to this reservation (stride 2), written once.
        unsafe {
            self.queue.write(index, &packet);
            self.queue.write(index + 1, &trailer);
        }
    }

    /// Rings the doorbell once for every packet of the reservation; returns the index of the
    /// last packet written.
    #[inline(always)]
    pub fn ring(mut self) -> u64 {
        let last = self.finish();
        // `finish` left nothing for the drop to do; skipping it keeps the launch path free
        // of an out-of-line call.
        std::mem::forget(self);
        last
    }

    #[inline(always)]
    fn finish(&mut self) -> u64 {
        if self.written < self.count {
            self.fill_unwritten();
        }
        let stride = self.stride();
        let last = self.first + self.count.saturating_sub(1) * stride;
        if self.count > 0 {
            // SAFETY: every slot of this reservation, up to its last one, has been written.
            unsafe {
                self.queue
                    .ring_doorbell(self.first + self.count * stride - 1)
            };
        }
        // Drop after `ring` finds nothing left to do.
        self.count = 0;
        last
    }
}

impl Reservation<'_> {
    /// Only a caller's bug gets here (or a panic while filling): never leave a hole.
    #[cold]
    #[inline(never)]
    fn fill_unwritten(&mut self) {
        tracing::error!(
            queue = self.queue.id,
            reserved = self.count,
            written = self.written,
            "reserved packet slots left unwritten; filled with empty barriers"
        );
        while self.written < self.count {
            self.write(&barrier_and(&[], hsa_signal_t::default()));
        }
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if self.count != 0 {
            self.finish();
        }
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        // SAFETY: the queue was created by `create` and is destroyed exactly once, before its
        // health record and kernarg ring (fields) go, so its error callback cannot run and the
        // packet processor cannot read kernargs afterwards.
        unsafe { (self.api.hsa_queue_destroy)(self.raw) };
        LIVE_QUEUES.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Queues created and not destroyed yet, of every device: what a fault episode must give back
/// once its retired queues are unreachable (checked by `tests/fault_episodes.rs`).
static LIVE_QUEUES: AtomicU64 = AtomicU64::new(0);

/// See [`LIVE_QUEUES`].
pub fn live_queues() -> u64 {
    LIVE_QUEUES.load(Ordering::Relaxed)
}

/// Makes the queues of one GPU agent as the runtime uses them: what the queue policy needs of
/// a device, and no more (the policy decides which queue serves a stream; this makes one).
#[derive(Clone, Copy)]
pub struct QueueFactory {
    pub api: &'static HsaApi,
    pub agent: hsa_agent_t,
    /// The device ordinal (for logs and traces).
    pub device: u32,
    /// Where each queue's kernarg ring is allocated.
    pub kernarg_pool: MemoryPool,
}

impl QueueFactory {
    /// A queue of `size` packets with profiling on (events read completion timestamps from
    /// marker packets; without it ROCr does not write them), the scheduling `priority`
    /// (`HSA_AMD_QUEUE_PRIORITY_*`; `None` keeps the runtime's default) and, if given, a CU
    /// mask. A failure to set the priority or the mask is an error; profiling is only warned
    /// about.
    pub fn create(
        &self,
        size: u32,
        priority: Option<u32>,
        cu_mask: Option<&[u32]>,
    ) -> Result<Queue, HsaError> {
        let queue = Queue::create(
            self.api,
            self.agent,
            self.device,
            size,
            HSA_QUEUE_TYPE_MULTI,
            self.kernarg_pool,
        )?;
        if let Err(e) = queue.enable_profiling() {
            tracing::warn!(queue = queue.id, error = %e, "queue profiling unavailable; event timings will read 0");
        }
        if let Some(priority) = priority {
            queue.set_priority(priority)?;
        }
        if let Some(mask) = cu_mask {
            queue.set_cu_mask(mask)?;
        }
        Ok(queue)
    }
}

impl QueueFactory {
    /// The device's cooperative queue (`HSA_QUEUE_TYPE_COOPERATIVE`): every work-group of a
    /// dispatch there is resident at once, and grid-wide barriers (GWS) work. Profiling as
    /// for [`QueueFactory::create`].
    pub fn create_cooperative(&self, size: u32) -> Result<Queue, HsaError> {
        let queue = Queue::create(
            self.api,
            self.agent,
            self.device,
            size,
            HSA_QUEUE_TYPE_COOPERATIVE,
            self.kernarg_pool,
        )?;
        if let Err(e) = queue.enable_profiling() {
            tracing::warn!(queue = queue.id, error = %e, "queue profiling unavailable; event timings will read 0");
        }
        Ok(queue)
    }
}

/// Asks the CPU to bring the cache line at `address` into its cache, for writing: the line
/// was last touched by the packet processor, on another core, and a plain prefetch would fetch
/// it shared, leaving the write to take it over a second time. `prefetchw` is spelled out
/// because the x86-64 baseline lacks the `prfchw` feature, without which `_MM_HINT_ET0`
/// compiles to a read prefetch; CPUs that predate it decode it as a no-op.
#[inline(always)]
fn prefetch_for_write<T>(address: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch neither faults nor changes memory or flags, whatever the address.
    unsafe {
        std::arch::asm!(
            "prefetchw [{address}]",
            address = in(reg) address,
            options(nostack, preserves_flags, readonly)
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

/// Byte offset of the completion signal in every AQL packet type.
const COMPLETION_OFFSET: usize = 56;

fn completion_of(packet: &AqlPacket) -> hsa_signal_t {
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&packet.bytes[COMPLETION_OFFSET..]);
    hsa_signal_t {
        handle: u64::from_le_bytes(bytes),
    }
}

/// Sets the completion signal of a packet of any type.
#[inline(always)]
pub fn set_completion(packet: &mut AqlPacket, signal: hsa_signal_t) {
    packet.bytes[COMPLETION_OFFSET..].copy_from_slice(&signal.handle.to_le_bytes());
}

/// The `hipshim::packet` trace event: what the packet processor will read, decoded. Formats
/// only when that target is enabled.
#[inline(always)]
fn log_packet(queue: u64, index: u64, packet: &AqlPacket) {
    if tracing::enabled!(target: "hipshim::packet", tracing::Level::TRACE) {
        log_decoded_packet(queue, index, packet);
    }
}

#[inline(never)]
fn log_decoded_packet(queue: u64, index: u64, packet: &AqlPacket) {
    let header = u16::from_le_bytes([packet.bytes[0], packet.bytes[1]]);
    let kind = (header & 0xff) as u32;
    let barrier = header & (1 << HSA_PACKET_HEADER_BARRIER) != 0;
    let completion = completion_of(packet).handle;
    if kind == HSA_PACKET_TYPE_KERNEL_DISPATCH as u32 {
        // SAFETY: a dispatch packet is 64 bytes of plain data of this layout.
        let d: hsa_kernel_dispatch_packet_t =
            unsafe { std::ptr::read_unaligned(packet.bytes.as_ptr() as *const _) };
        tracing::trace!(
            target: "hipshim::packet",
            queue,
            index,
            r#type = "kernel_dispatch",
            barrier,
            grid = ?[d.grid_size_x, d.grid_size_y, d.grid_size_z],
            workgroup = ?[d.workgroup_size_x, d.workgroup_size_y, d.workgroup_size_z],
            group_segment = d.group_segment_size,
            kernel_object = format_args!("{:#x}", d.kernel_object),
            kernarg = format_args!("{:#x}", d.kernarg_address),
            completion = format_args!("{completion:#x}"),
            "packet published, doorbell rung"
        );
    } else {
        // SAFETY: barrier packets are 64 bytes of plain data of this layout.
        let b: hsa_barrier_and_packet_t =
            unsafe { std::ptr::read_unaligned(packet.bytes.as_ptr() as *const _) };
        let deps: Vec<String> = b
            .dep_signal
            .iter()
            .filter(|s| s.handle != 0)
            .map(|s| format!("{:#x}", s.handle))
            .collect();
        tracing::trace!(
            target: "hipshim::packet",
            queue,
            index,
            r#type = if kind == HSA_PACKET_TYPE_BARRIER_AND as u32 { "barrier_and" } else { "other" },
            barrier,
            deps = ?deps,
            completion = format_args!("{completion:#x}"),
            "packet published, doorbell rung"
        );
    }
}

/// Header word of a packet the shim publishes: streams are in order, so every packet carries
/// the barrier bit; system-scope fences make host writes visible before and results after.
pub const fn stream_packet_header(packet_type: u16) -> u16 {
    packet_header(
        packet_type,
        true,
        HSA_FENCE_SCOPE_SYSTEM,
        HSA_FENCE_SCOPE_SYSTEM,
    )
}

/// Most dependency signals one barrier-AND packet carries.
pub const BARRIER_DEPS: usize = 5;

/// A barrier-AND packet: completes (decrementing `completion`) once every signal in `deps`
/// (at most [`BARRIER_DEPS`]; null handles are ignored by the packet processor) reads 0 and,
/// through the barrier bit, every earlier packet of its queue has completed.
pub fn barrier_and(deps: &[hsa_signal_t], completion: hsa_signal_t) -> AqlPacket {
    debug_assert!(deps.len() <= BARRIER_DEPS);
    let mut dep_signal = [hsa_signal_t::default(); BARRIER_DEPS];
    for (slot, dep) in dep_signal.iter_mut().zip(deps) {
        *slot = *dep;
    }
    to_bytes(&hsa_barrier_and_packet_t {
        header: stream_packet_header(HSA_PACKET_TYPE_BARRIER_AND),
        dep_signal,
        completion_signal: completion,
        ..Default::default()
    })
}

/// AMD's barrier-value packet: completes (decrementing `completion`) once
/// `(value of signal & mask) cond value` holds and, through the barrier bit, every earlier
/// packet of its queue has completed. `signal` may be a handle whose value field
/// (`handle + offsetof(amd_signal_t, value)`) is memory the device reaches rather than a
/// signal: the packet processor reads the value there, whatever the handle (see
/// `runtime/stream/value.rs`).
pub fn barrier_value(
    signal: hsa_signal_t,
    value: u64,
    mask: u64,
    cond: u32,
    completion: hsa_signal_t,
) -> AqlPacket {
    to_bytes(&hsa_amd_barrier_value_packet_t {
        header: stream_packet_header(HSA_PACKET_TYPE_VENDOR_SPECIFIC),
        amd_format: HSA_AMD_PACKET_TYPE_BARRIER_VALUE,
        signal,
        value: value as i64,
        mask: mask as i64,
        cond,
        completion_signal: completion,
        ..Default::default()
    })
}

/// Serialises a typed packet into the 64 raw bytes `submit` publishes.
#[inline(always)]
pub fn to_bytes<T: Copy>(packet: &T) -> AqlPacket {
    const { assert!(std::mem::size_of::<T>() == 64) };
    // SAFETY: `T` is one of the 64-byte repr(C) packet types (asserted above), plain data,
    // and any 64 bytes are an `AqlPacket`; the read does not need `T`'s alignment.
    unsafe { std::mem::transmute_copy(packet) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_queue_error_callback_records_the_status_and_tolerates_no_data() {
        let health = QueueHealth {
            status: AtomicU32::new(0),
            queue_id: 3,
        };
        let data = &health as *const QueueHealth as *mut c_void;
        // SAFETY: `data` points at a live QueueHealth, as the HSA runtime's would.
        unsafe {
            on_queue_error(
                status::AMD_ERROR_MEMORY_APERTURE_VIOLATION,
                std::ptr::null_mut(),
                data,
            )
        };
        assert_eq!(
            health.status.load(Ordering::Acquire),
            status::AMD_ERROR_MEMORY_APERTURE_VIOLATION
        );
        // SAFETY: null data is ignored.
        unsafe { on_queue_error(status::ERROR, std::ptr::null_mut(), std::ptr::null_mut()) };
    }

    #[test]
    fn segments_go_to_the_smallest_slot_that_holds_them_size_and_alignment() {
        let small = Some(KernargSlot::Small);
        let large = Some(KernargSlot::Large);
        // Explicit arguments plus code object v5's 256 bytes of hidden ones.
        assert_eq!(KernargSlot::for_segment(0, 8), small);
        assert_eq!(KernargSlot::for_segment(272, 8), small);
        assert_eq!(KernargSlot::for_segment(512, 16), small);
        assert_eq!(KernargSlot::for_segment(513, 8), large);
        assert_eq!(KernargSlot::for_segment(3336, 8), large);
        assert_eq!(KernargSlot::for_segment(4096, 8), large);
        // A small segment that asks for more alignment than a small slot has.
        assert_eq!(KernargSlot::for_segment(256, 1024), large);
        assert_eq!(KernargSlot::for_segment(4097, 8), None);
        assert_eq!(KernargSlot::for_segment(64, 8192), None);
    }

    #[test]
    fn small_slots_are_dense_and_large_slots_follow_them() {
        let slots = 2048;
        let small = |index| KernargSlot::Small.offset(index, slots);
        let large = |index| KernargSlot::Large.offset(index, slots);
        // Eight consecutive packets share one page of small slots.
        assert_eq!(small(0), 0);
        assert_eq!(small(7) + SMALL_KERNARG_SLOT_BYTES, 4096);
        assert_eq!(small(1) - small(0), SMALL_KERNARG_SLOT_BYTES);
        // Slots repeat every `slots` packets, in both regions.
        assert_eq!(small(slots + 5), small(5));
        assert_eq!(large(slots + 5), large(5));
        // The large region starts where the small one ends, page aligned, and ends where the
        // memory does.
        let small_region = slots as usize * SMALL_KERNARG_SLOT_BYTES;
        assert_eq!(large(0), small_region);
        assert_eq!(small(slots - 1) + SMALL_KERNARG_SLOT_BYTES, small_region);
        assert_eq!(large(0) % KERNARG_SLOT_BYTES, 0);
        assert_eq!(
            large(slots - 1) + KERNARG_SLOT_BYTES,
            KernargSlot::region_bytes(slots)
        );
        // Every slot is aligned to its size (given memory aligned to the largest).
        for index in [0, 1, 3, 1000, slots - 1, slots, 3 * slots + 17] {
            assert_eq!(small(index) % SMALL_KERNARG_SLOT_BYTES, 0);
            assert_eq!(large(index) % KERNARG_SLOT_BYTES, 0);
        }
    }

    #[test]
    fn a_queue_error_reported_as_success_still_marks_the_queue_failed() {
        let health = QueueHealth {
            status: AtomicU32::new(0),
            queue_id: 4,
        };
        record_queue_error(&health, status::SUCCESS);
        assert_eq!(health.status.load(Ordering::Acquire), status::ERROR);
    }
}

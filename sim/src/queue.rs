//! AQL queues and their packet processors.
//!
//! A queue is ROCr's `amd_queue_t` (its first member is the `hsa_queue_t` clients see) plus
//! a ring of 64-byte packet slots, both in runtime-owned device-accessible memory. The
//! packet processor consumes packets strictly in order, one at a time: a packet starts only
//! after the previous one completed, so the barrier bit is always honoured (in-order
//! completion is inherent) and acquire/release fences reduce to full memory fences, because
//! host and "device" share one coherent memory.
//!
//! Protocol with producers: a slot is ready when its header type is not INVALID (read with
//! Acquire; producers store it last with Release). After a packet completes the processor
//! stores INVALID into the header *before* advancing `read_dispatch_id`, so a producer that
//! sees the new read index may reuse the slot without racing our reset.

use crate::agent::Agent;
use crate::clock::now_ns;
use crate::config::Config;
use crate::device_memory::SharedVram;
use crate::error::{catch_panic, HsaError, HsaResult};
use crate::handles::Slab;
use crate::host_map::{map_anon, round_up, unmap, PAGE};
use crate::idle_spin::IdleSpin;
use crate::loader::LoaderState;
use crate::memory::{node_bit, AgentMemory, MemoryRegistry, Region};
use crate::sched::Scheduler;
use crate::signal::{Signal, SignalRegistry, HUB};
use crate::virtual_time::{Completion, VirtualTime, Work};
use hsa_abi::*;
use hsasim_isa::{Dispatch, DispatchError, ExecConfig, GuestMemory, Gws, QueuePriority};
use hsasim_vtime::DispatchShape;
use parking_lot::Mutex;
use std::ffi::c_void;
use std::sync::atomic::{
    AtomicBool, AtomicI64, AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering,
};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const ACTIVE: u8 = 0;
const ERROR: u8 = 1;
const STOPPING: u8 = 2;

static NEXT_QUEUE_ID: AtomicU64 = AtomicU64::new(0);

/// What the processor found at the read index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peek {
    /// No packet published (header INVALID) or the queue stopped.
    Empty,
    /// A barrier packet whose dependencies are not met yet.
    Blocked,
    /// A barrier-value packet waiting on plain memory, whose writes announce nothing: the
    /// processor looks again soon instead of sleeping until a signal changes.
    Polling,
    /// A packet that can be processed now.
    Ready,
}

pub struct Queue {
    /// The `amd_queue_t` (one page, `mmap`ed so it is page aligned and device-accessible).
    amd: *mut amd_queue_t,
    ring: *mut u8,
    ring_bytes: u64,
    pub size: u32,
    pub id: u64,
    pub agent: Arc<Agent>,
    pub doorbell: Arc<Signal>,
    /// Created as `HSA_QUEUE_TYPE_SINGLE`: one producer, so its doorbell never goes back.
    single_producer: bool,
    /// Created as `HSA_QUEUE_TYPE_COOPERATIVE`: its dispatches run with every workgroup
    /// resident, and this is its Global Wave Sync unit (kept across dispatches, as
    /// `ds_gws_init` in one dispatch prepares the next).
    gws: Option<Box<Gws>>,
    error_callback: Option<QueueErrorCallback>,
    callback_data: usize,
    state: AtomicU8,
    /// Serialises packet processing: exactly one packet is in flight per queue, whichever
    /// thread (processor or deterministic-mode waiter) runs it.
    exec: Mutex<()>,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// `HSA_AMD_QUEUE_PRIORITY_*`: how its dispatches compete with other queues' (see
    /// `hsa_amd_queue_set_priority`).
    pub priority: AtomicU32,
    pub cu_mask: Mutex<Vec<u32>>,
    /// Under virtual time: packets below this index were submitted by a doorbell (see
    /// `virtual_time`); the processor takes none beyond.
    pub virtual_submitted: AtomicU64,
    pub profiling: AtomicBool,
    stalled_warned: AtomicBool,
    stall_since: Mutex<Option<Instant>>,
    /// Its place in the hardware scheduler's runlist, when the scheduler is modelled.
    slot: Option<crate::sched::QueueSlot>,
    /// Its block and ring, when they are in a device service's memory (freed last, after
    /// the runlist entry went).
    shared: Option<crate::device_memory::QueueMemory>,
}

// SAFETY: the raw pointers are to mappings this queue owns for its whole life; every access
// to shared fields (indices, headers) goes through atomics.
unsafe impl Send for Queue {}
// SAFETY: as above.
unsafe impl Sync for Queue {}

impl Drop for Queue {
    fn drop(&mut self) {
        if self.shared.is_some() {
            // Its handle goes first; the memory goes with the field.
            forget_shared_block(self.amd);
            return;
        }
        // SAFETY: the ring was mapped in `Queue::new`, is unregistered by
        // `Runtime::destroy_queue` before the last reference goes, and nothing else
        // references it once the queue is dropped.
        unsafe { unmap(self.ring, self.ring_bytes) };
        release_queue_block(self.amd);
    }
}

/// Where a queue's block and ring are while `Queue::new` builds it; gives them back if it
/// fails.
enum Placement {
    Private {
        amd: *mut amd_queue_t,
        ring: *mut u8,
        ring_bytes: u64,
    },
    Shared(Option<crate::device_memory::QueueMemory>),
}

impl Placement {
    /// Private memory, or a device service's (`vram`): one allocation, the block's page
    /// first, then the ring.
    fn new(
        vram: Option<&Arc<crate::device_memory::SharedVram>>,
        ring_bytes: u64,
    ) -> HsaResult<Self> {
        if let Some(vram) = vram {
            return Ok(Placement::Shared(Some(
                vram.queue_memory(PAGE + ring_bytes)?,
            )));
        }
        let ring = map_anon(ring_bytes)?;
        match alloc_queue_block() {
            Ok(amd) => Ok(Placement::Private {
                amd,
                ring,
                ring_bytes,
            }),
            Err(e) => {
                // SAFETY: just mapped, not shared.
                unsafe { unmap(ring, ring_bytes) };
                Err(e)
            }
        }
    }

    fn block_and_ring(&self) -> (*mut amd_queue_t, *mut u8) {
        match self {
            Placement::Private { amd, ring, .. } => (*amd, *ring),
            Placement::Shared(m) => {
                let start = m.as_ref().map_or(0, |m| m.start);
                (start as *mut amd_queue_t, (start + PAGE) as *mut u8)
            }
        }
    }

    /// The queue takes the memory over.
    fn keep(mut self) -> Option<crate::device_memory::QueueMemory> {
        match &mut self {
            Placement::Private { ring_bytes, .. } => {
                *ring_bytes = 0;
                None
            }
            Placement::Shared(m) => m.take(),
        }
    }
}

impl Drop for Placement {
    fn drop(&mut self) {
        if let Placement::Private {
            amd,
            ring,
            ring_bytes,
        } = *self
        {
            if ring_bytes != 0 {
                // SAFETY: mapped by `Placement::new`, never handed out (`keep` zeroes the
                // length of memory it hands out).
                unsafe { unmap(ring, ring_bytes) };
                release_queue_block(amd);
            }
        }
    }
}

/// Most queues of this process with their block in a device service's memory: the
/// runlist's limit, all processes together.
const MAX_SHARED_BLOCKS: usize = hsasim_sched::model::MAX_QUEUES;

/// The blocks of this process's queues in a device service's memory, outside the slab: the
/// other handles [`live_indices`] accepts (0: a free entry).
static SHARED_BLOCKS: [AtomicU64; MAX_SHARED_BLOCKS] =
    [const { AtomicU64::new(0) }; MAX_SHARED_BLOCKS];

fn remember_shared_block(amd: *mut amd_queue_t) -> HsaResult {
    SHARED_BLOCKS
        .iter()
        .find(|b| {
            b.compare_exchange(0, amd as u64, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        })
        .map(|_| ())
        .ok_or(HsaError::OUT_OF_RESOURCES)
}

fn forget_shared_block(amd: *mut amd_queue_t) {
    if let Some(b) = SHARED_BLOCKS
        .iter()
        .find(|b| b.load(Ordering::Acquire) == amd as u64)
    {
        b.store(0, Ordering::Release);
    }
}

/// The block `handle` names if it is a live queue's in a device service's memory.
#[cold]
fn shared_block(handle: u64) -> Option<*mut u8> {
    (handle != 0
        && SHARED_BLOCKS
            .iter()
            .any(|b| b.load(Ordering::Acquire) == handle))
    .then_some(handle as *mut u8)
}

/// Where every queue's `amd_queue_t` lives (see [`Slab`]): one page each, 2^14 at most (64 MiB
/// of address space, backed as pages are first used). A block is in use while its
/// `hsa_queue_t::size` is not 0: set before the queue is handed out, and the whole block is
/// zeroed before it is reused.
static QUEUE_BLOCKS: std::sync::LazyLock<Option<Slab>> =
    std::sync::LazyLock::new(|| Slab::new(PAGE, 1 << 14));

fn alloc_queue_block() -> HsaResult<*mut amd_queue_t> {
    QUEUE_BLOCKS
        .as_ref()
        .and_then(Slab::alloc)
        .map(|block| block.cast())
        .ok_or(HsaError::OUT_OF_RESOURCES)
}

fn release_queue_block(amd: *mut amd_queue_t) {
    // SAFETY: a block of the slab that no queue uses any more; zeroed, a stale handle to it
    // reads as no queue.
    unsafe { amd.cast::<u8>().write_bytes(0, PAGE as usize) };
    if let Some(blocks) = QUEUE_BLOCKS.as_ref() {
        blocks.release(amd.cast());
    }
}

/// The read and write indices of one queue's `amd_queue_t`, as atomics.
#[derive(Clone, Copy)]
pub struct QueueIndices(*mut amd_queue_t);

impl QueueIndices {
    pub fn read_index(&self) -> &AtomicU64 {
        // SAFETY: an 8-aligned u64 field of a queue block, which stays mapped for the whole
        // process; only accessed atomically once the queue is shared.
        unsafe { AtomicU64::from_ptr(std::ptr::addr_of_mut!((*self.0).read_dispatch_id)) }
    }

    pub fn write_index(&self) -> &AtomicU64 {
        // SAFETY: as for `read_index`.
        unsafe { AtomicU64::from_ptr(std::ptr::addr_of_mut!((*self.0).write_dispatch_id)) }
    }
}

/// The indices of the live queue whose `hsa_queue_t*` is `handle`, without a lock, map or
/// reference count (the queue-index entry points run on every packet); anything else is
/// `HSA_STATUS_ERROR_INVALID_QUEUE`. A destroyed queue's handle reads as no queue, or, once
/// its block is reused, as the new queue: the client's error, never a fault.
#[inline]
pub fn live_indices(handle: u64) -> HsaResult<QueueIndices> {
    let block = match QUEUE_BLOCKS.as_ref().and_then(|blocks| blocks.slot(handle)) {
        Some(block) => block,
        None => shared_block(handle).ok_or(HsaError::INVALID_QUEUE)?,
    }
    .cast::<amd_queue_t>();
    // SAFETY: a block of the slab (mapped for the whole process, page-aligned; untouched ones
    // read as zeros), or of a live queue in a device service's memory (mapped until the
    // queue drops, which forgets it first: a client racing `hsa_queue_destroy` with its own
    // index calls is outside HSA's rules); `size` is read atomically as a live queue's
    // producers never write it.
    let size = unsafe { AtomicU32::from_ptr(std::ptr::addr_of_mut!((*block).hsa_queue.size)) };
    if size.load(Ordering::Acquire) == 0 {
        return Err(HsaError::INVALID_QUEUE);
    }
    Ok(QueueIndices(block))
}

/// What a queue reaches of the runtime: the configuration, the memory registry its kernels
/// run against, the signals its packets name, the loader's kernels, and where a device
/// service keeps queues. The runtime hands it down ([`QueueHost`]); a queue never names the
/// runtime.
#[derive(Clone, Copy)]
pub struct QueueContext<'a> {
    pub config: &'a Config,
    pub memory: &'a MemoryRegistry,
    pub signals: &'a SignalRegistry,
    pub loader: &'a LoaderState,
    /// The device service's device memory, where its queues' blocks and rings live.
    pub vram: Option<&'a Arc<SharedVram>>,
    /// The hardware queue scheduler model, when configured.
    pub sched: Option<&'a Arc<Scheduler>>,
    /// The virtual clock (`HSASIM_TIME=virtual`).
    pub vtime: Option<&'a Arc<VirtualTime>>,
}

/// Whoever owns what a [`QueueContext`] lends (the runtime): a packet processor thread holds
/// it while it runs.
pub trait QueueHost: Send + Sync + 'static {
    fn queue_context(&self) -> QueueContext<'_>;
}

pub struct QueueParams {
    pub size: u32,
    pub queue_type: u32,
    pub callback: Option<QueueErrorCallback>,
    pub data: *mut c_void,
}

impl Queue {
    pub fn new(cx: &QueueContext<'_>, agent: Arc<Agent>, p: QueueParams) -> HsaResult<Arc<Queue>> {
        let ring_bytes =
            round_up(u64::from(p.size) * 64, PAGE).ok_or(HsaError::OUT_OF_RESOURCES)?;
        // Attached to a device service, the block and ring are in its memory, where the
        // service reads them.
        let placement = Placement::new(cx.vram, ring_bytes)?;
        let (amd, ring) = placement.block_and_ring();
        for slot in 0..u64::from(p.size) {
            // SAFETY: slot * 64 < ring_bytes; the ring is private until the queue is returned.
            unsafe {
                let slot = ring.add((slot * 64) as usize);
                slot.cast::<u16>()
                    .write(packet_header(HSA_PACKET_TYPE_INVALID, false, 0, 0));
                if cx.config.strict {
                    fill_stale_body(slot);
                }
            }
        }
        let id = cx.config.queue_id_base + NEXT_QUEUE_ID.fetch_add(1, Ordering::Relaxed);
        // KFD hands each queue a 64-bit doorbell in its process's doorbell page; the offset
        // follows the queue id, as the id does the process's own numbering.
        let doorbell_offset = id * 8;
        let shared = matches!(placement, Placement::Shared(_));
        let hqd = if shared {
            hsasim_sched::Hqd {
                ring_base: ring as u64,
                ring_bytes,
                read_index_addr: amd as u64
                    + std::mem::offset_of!(amd_queue_t, read_dispatch_id) as u64,
                write_index_addr: amd as u64
                    + std::mem::offset_of!(amd_queue_t, write_dispatch_id) as u64,
            }
        } else {
            hsasim_sched::Hqd::default()
        };
        let slot = cx
            .sched
            .map(|s| s.register(id, doorbell_offset, HSA_AMD_QUEUE_PRIORITY_NORMAL, hqd))
            .transpose()?;
        // A device service's queue rings the doorbell cell of its runlist entry.
        let doorbell = match slot.as_ref().filter(|_| shared) {
            Some(slot) => {
                let (device, index) = slot.doorbell_place();
                cx.signals
                    .insert(crate::ipc_signal::doorbell(device, index))
            }
            None => cx
                .signals
                .create(AMD_SIGNAL_KIND_DOORBELL, 0, Vec::new(), 0)?,
        };
        doorbell.set_queue_ptr(amd as u64);
        if shared {
            if let Err(e) = remember_shared_block(amd) {
                let _ = cx.signals.destroy(doorbell.handle());
                return Err(e);
            }
        }
        // SAFETY: `amd` is a zeroed block no one else uses, a page large and aligned, enough for
        // amd_queue_t; `size` goes in last (atomically), as it says the block is in use.
        unsafe {
            let q = &mut *amd;
            q.hsa_queue = hsa_queue_t {
                type_: p.queue_type,
                features: HSA_QUEUE_FEATURE_KERNEL_DISPATCH,
                base_address: ring.cast(),
                doorbell_signal: doorbell.handle(),
                size: 0,
                reserved1: 0,
                id,
            };
            q.max_cu_id = agent.compute_units.saturating_sub(1);
            q.max_wave_id = 31;
            // AMD_QUEUE_PROPERTIES_IS_PTR64
            q.queue_properties = 1 << 1;
            AtomicU32::from_ptr(std::ptr::addr_of_mut!(q.hsa_queue.size))
                .store(p.size, Ordering::Release);
        }
        for (start, len) in [(ring as u64, ring_bytes), (amd as u64, PAGE)] {
            cx.memory.add(Region::internal(start, len, agent.handle()));
        }
        if crate::capture::is_on() {
            crate::capture::queue_created(id, p.size, p.queue_type);
        }
        let shared = placement.keep();
        Ok(Arc::new(Queue {
            amd,
            ring,
            ring_bytes,
            size: p.size,
            id,
            agent,
            doorbell,
            single_producer: p.queue_type == HSA_QUEUE_TYPE_SINGLE,
            gws: (p.queue_type == HSA_QUEUE_TYPE_COOPERATIVE).then(Box::default),
            error_callback: p.callback,
            callback_data: p.data as usize,
            state: AtomicU8::new(ACTIVE),
            exec: Mutex::new(()),
            thread: Mutex::new(None),
            priority: AtomicU32::new(HSA_AMD_QUEUE_PRIORITY_NORMAL),
            cu_mask: Mutex::new(Vec::new()),
            virtual_submitted: AtomicU64::new(0),
            profiling: AtomicBool::new(false),
            stalled_warned: AtomicBool::new(false),
            stall_since: Mutex::new(None),
            slot,
            shared,
        }))
    }

    /// The `hsa_queue_t*` clients hold (also the `amd_queue_t*`).
    pub fn address(&self) -> u64 {
        self.amd as u64
    }
    pub fn memory_ranges(&self) -> [u64; 2] {
        [self.ring as u64, self.amd as u64]
    }

    pub fn read_index(&self) -> &AtomicU64 {
        // SAFETY: a view of this queue's own block, which outlives `&self`.
        unsafe { &*(QueueIndices(self.amd).read_index() as *const AtomicU64) }
    }
    pub fn write_index(&self) -> &AtomicU64 {
        // SAFETY: as for `read_index`.
        unsafe { &*(QueueIndices(self.amd).write_index() as *const AtomicU64) }
    }
    fn slot(&self, index: u64) -> *mut u8 {
        let slot = index % u64::from(self.size);
        // SAFETY: slot < size, so the offset stays inside the ring mapping.
        unsafe { self.ring.add((slot * 64) as usize) }
    }
    fn header(&self, index: u64) -> &AtomicU16 {
        // SAFETY: the first two bytes of a 64-byte aligned slot in the live ring; producers
        // and the processor access headers only atomically.
        unsafe { AtomicU16::from_ptr(self.slot(index).cast::<u16>()) }
    }

    /// What virtual time reads of the packet at `index` when its doorbell rings, as it is in
    /// the ring now: its completion signal, its barrier bit (it starts only once every packet
    /// before it on the queue completed) and whether it is a kernel dispatch.
    pub fn submitted_packet(&self, index: u64) -> crate::virtual_time::SubmittedPacket {
        let header = PacketHeader(self.header(index).load(Ordering::Acquire));
        crate::virtual_time::SubmittedPacket {
            completes: self.completion_of(index),
            barrier: header.barrier(),
            dispatch: header.packet_type() == HSA_PACKET_TYPE_KERNEL_DISPATCH,
        }
    }

    /// The completion signal handle of the packet at `index` (both packet formats keep it
    /// at byte 56), as it is in the ring now.
    pub fn completion_of(&self, index: u64) -> u64 {
        // SAFETY: a 64-byte aligned slot of the live ring; bytes 56..64 are in it. A slot a
        // producer is still writing reads as whatever it holds, which is then not used.
        unsafe { std::ptr::read_volatile(self.slot(index).add(56).cast::<u64>()) }
    }

    /// Its place in the hardware scheduler's runlist (scheduler model on).
    pub fn sched_slot(&self) -> Option<&crate::sched::QueueSlot> {
        self.slot.as_ref()
    }

    pub fn is_active(&self) -> bool {
        self.state.load(Ordering::SeqCst) == ACTIVE
    }

    /// Starts the queue's packet processor thread, which holds `host` while it runs.
    pub fn start_thread<H: QueueHost>(self: &Arc<Self>, host: Arc<H>) -> HsaResult {
        let me = self.clone();
        let handle = std::thread::Builder::new()
            .name(format!("hsasim-queue{}", self.id))
            .spawn(move || me.serve(&host.queue_context()))
            .map_err(|_| HsaError::OUT_OF_RESOURCES)?;
        *self.thread.lock() = Some(handle);
        Ok(())
    }

    fn serve(&self, cx: &QueueContext<'_>) {
        // Whether the last step ran a packet: only a processor that just had work expects
        // more soon (one woken for another queue's signal goes straight back to sleep).
        let mut busy = false;
        let mut idle = IdleSpin::new();
        while self.is_active() {
            // `step` already turns a panic in a packet's work into a queue error; this
            // catches one anywhere else, so the thread never dies with the queue active
            // (its producers would wait forever).
            let stepped = catch_panic(|| self.step(cx)).unwrap_or_else(|why| {
                self.fail(
                    cx,
                    status::ERROR,
                    &format!("internal error in the packet processor: {why}"),
                );
                true
            });
            if !stepped {
                if let Some(slot) = self.slot.as_ref().filter(|s| s.is_waiting()) {
                    // A packet is ready but the queue holds no hardware slot: wait for the
                    // scheduler to map it.
                    if !slot.wait() {
                        self.fail(
                            cx,
                            status::ERROR,
                            &format!("device service {} is gone", slot.service_name()),
                        );
                    }
                    busy = false;
                    continue;
                }
            }
            let work_soon = stepped
                || (busy && idle.look(&mut || !self.is_active() || self.peek(cx) == Peek::Ready));
            if !work_soon {
                // An empty ring waits for its doorbell alone: a producer's ring wakes this
                // processor and no other thread. A barrier waits for signals, which the hub
                // announces.
                if self.peek(cx) == Peek::Empty {
                    if let Some(slot) = &self.slot {
                        slot.idle();
                    }
                    self.doorbell.doorbell_bell().sleep_unless(
                        &mut || !self.is_active() || self.peek(cx) != Peek::Empty,
                        Duration::from_millis(50),
                    );
                    idle.woke();
                } else {
                    let max_sleep = if self.peek(cx) == Peek::Polling {
                        MEMORY_POLL
                    } else {
                        Duration::from_millis(50)
                    };
                    HUB.sleep_unless(
                        &mut || !self.is_active() || self.peek(cx) == Peek::Ready,
                        max_sleep,
                    );
                }
            }
            busy = stepped;
        }
    }

    /// Stops the processor and waits for it, unless called from the processor itself
    /// (an error callback destroying its own queue), which then just exits when it returns.
    pub fn stop(&self) {
        self.state.store(STOPPING, Ordering::SeqCst);
        self.doorbell.doorbell_bell().wake();
        HUB.notify();
        let handle = self.thread.lock().take();
        if let Some(h) = handle {
            if h.thread().id() != std::thread::current().id() {
                let _ = h.join();
            }
        }
    }

    fn dep_signals(
        &self,
        cx: &QueueContext<'_>,
        p: &hsa_barrier_and_packet_t,
    ) -> Result<Vec<Arc<Signal>>, HsaError> {
        p.dep_signal
            .iter()
            .filter(|s| s.handle != 0)
            .map(|s| cx.signals.get(*s))
            .collect()
    }

    /// The packet at the read index and, for a barrier, what it waits for: for a log line
    /// saying why the queue does not move.
    pub fn describe_head(&self, cx: &QueueContext<'_>) -> String {
        let read = self.read_index().load(Ordering::Acquire);
        let header = PacketHeader(self.header(read).load(Ordering::Acquire));
        let state = if self.is_active() { "active" } else { "failed" };
        match header.packet_type() {
            t @ (HSA_PACKET_TYPE_BARRIER_AND | HSA_PACKET_TYPE_BARRIER_OR) => {
                let p = self.read_barrier(read);
                let deps: Vec<String> = p
                    .dep_signal
                    .iter()
                    .filter(|s| s.handle != 0)
                    .map(|s| match cx.signals.get(*s) {
                        Ok(sig) => format!("{:#x}={}", s.handle, sig.load(Ordering::Acquire)),
                        Err(_) => format!("{:#x} (no such signal)", s.handle),
                    })
                    .collect();
                format!(
                    "queue {} ({state}) packet {read}: barrier-{} on [{}]",
                    self.id,
                    if t == HSA_PACKET_TYPE_BARRIER_AND {
                        "and"
                    } else {
                        "or"
                    },
                    deps.join(", ")
                )
            }
            t => format!("queue {} ({state}) packet {read}: type {t}", self.id),
        }
    }

    fn read_barrier(&self, index: u64) -> hsa_barrier_and_packet_t {
        // SAFETY: the slot is a live, 64-byte aligned packet the producer finished (its
        // header was observed non-INVALID with Acquire); a volatile copy avoids assuming
        // nobody else touches the memory.
        unsafe { std::ptr::read_volatile(self.slot(index).cast::<hsa_barrier_and_packet_t>()) }
    }

    pub fn peek(&self, cx: &QueueContext<'_>) -> Peek {
        if cx.vtime.is_some() {
            // Virtual time orders work by submission: a packet is not taken before its
            // doorbell, or that order would depend on how fast this thread looked.
            let read = self.read_index().load(Ordering::Acquire);
            if read >= self.virtual_submitted.load(Ordering::Acquire) {
                // A doorbell that broke strict mode's rules submitted nothing, but the
                // violation is the step's to report all the same.
                if cx.config.strict && self.doorbell_check().is_err() {
                    return Peek::Ready;
                }
                return Peek::Empty;
            }
        }
        self.peek_packet(cx)
    }

    /// [`Queue::peek`] without virtual time's doorbell rule (what virtual time itself asks).
    pub fn peek_packet(&self, cx: &QueueContext<'_>) -> Peek {
        if !self.is_active() {
            return Peek::Empty;
        }
        let read = self.read_index().load(Ordering::Acquire);
        let header = PacketHeader(self.header(read).load(Ordering::Acquire));
        match header.packet_type() {
            HSA_PACKET_TYPE_INVALID => {
                // Strict mode: a doorbell rung past what was reserved is the step's to report.
                if cx.config.strict && self.doorbell_check().is_err() {
                    return Peek::Ready;
                }
                self.note_stall(read);
                Peek::Empty
            }
            t @ (HSA_PACKET_TYPE_BARRIER_AND | HSA_PACKET_TYPE_BARRIER_OR) => {
                let p = self.read_barrier(read);
                match self.dep_signals(cx, &p) {
                    // An invalid dependency is an error the step reports.
                    Err(_) => Peek::Ready,
                    Ok(deps) => {
                        if barrier_satisfied(t, &deps) {
                            Peek::Ready
                        } else {
                            Peek::Blocked
                        }
                    }
                }
            }
            HSA_PACKET_TYPE_VENDOR_SPECIFIC => match self.barrier_value(cx, read) {
                Ok((BarrierValue::Waiting, on_memory)) => {
                    if on_memory {
                        Peek::Polling
                    } else {
                        Peek::Blocked
                    }
                }
                // Satisfied, or an error the step reports.
                _ => Peek::Ready,
            },
            _ => Peek::Ready,
        }
    }

    fn read_barrier_value(&self, index: u64) -> hsa_amd_barrier_value_packet_t {
        // SAFETY: as in `read_barrier`: a published, 64-byte aligned packet slot.
        unsafe {
            std::ptr::read_volatile(self.slot(index).cast::<hsa_amd_barrier_value_packet_t>())
        }
    }

    /// Whether the AMD vendor packet at `index` (only the barrier-value format exists) may
    /// complete now, and whether the value it waits on is plain memory rather than a signal.
    ///
    /// The value is that of `signal` when it names a signal of this runtime. Otherwise it is
    /// the 8 bytes where a signal's value would be (`handle + offsetof(amd_signal_t, value)`),
    /// which must be memory this queue's agent reaches: a GPU's packet processor reads the
    /// value from there whatever the handle is, and HIP's stream waits
    /// (`hipStreamWaitValue32/64`) use that to wait on a program's own memory.
    fn barrier_value(
        &self,
        cx: &QueueContext<'_>,
        index: u64,
    ) -> Result<(BarrierValue, bool), (hsa_status_t, String)> {
        let p = self.read_barrier_value(index);
        if p.amd_format != HSA_AMD_PACKET_TYPE_BARRIER_VALUE {
            return Err((
                status::ERROR_INVALID_PACKET_FORMAT,
                format!(
                    "packet {index} at {:#x} is an AMD vendor packet of format {}, which this packet processor does not execute (only {HSA_AMD_PACKET_TYPE_BARRIER_VALUE}, barrier-value)",
                    self.slot(index) as u64,
                    p.amd_format
                ),
            ));
        }
        if p.signal.handle == 0 {
            // hsa_ext_amd.h: a null signal is a satisfied dependency.
            return Ok((BarrierValue::Satisfied, false));
        }
        let (current, on_memory) = match cx.signals.get(p.signal) {
            Ok(signal) => (signal.load(Ordering::Acquire), false),
            Err(_) => (self.value_in_memory(cx, index, p.signal.handle)?, true),
        };
        let holds = barrier_value_holds(p.cond, current, p.mask, p.value).ok_or_else(|| {
            (
                status::ERROR_INVALID_PACKET_FORMAT,
                format!(
                    "barrier-value packet {index} has condition {}, which is not an hsa_signal_condition_t",
                    p.cond
                ),
            )
        })?;
        let state = if holds {
            BarrierValue::Satisfied
        } else {
            BarrierValue::Waiting
        };
        Ok((state, on_memory))
    }

    /// The 64-bit value at `handle + 8` in memory this queue's agent reaches.
    fn value_in_memory(
        &self,
        cx: &QueueContext<'_>,
        index: u64,
        handle: u64,
    ) -> Result<i64, (hsa_status_t, String)> {
        let at = handle.wrapping_add(std::mem::offset_of!(amd_signal_t, value) as u64);
        let memory = AgentMemory {
            registry: cx.memory,
            agent: self.agent.handle(),
            bit: node_bit(self.agent.node),
        };
        let host = if at.is_multiple_of(8) {
            hsasim_isa::GuestMemory::translate(&memory, at, 8)
        } else {
            None
        };
        let Some(host) = host else {
            return Err((
                status::ERROR_INVALID_SIGNAL,
                format!(
                    "barrier-value packet {index} waits on {handle:#x}, which is neither a signal nor 8-byte aligned memory (at {at:#x}) this agent reaches"
                ),
            ));
        };
        // SAFETY: the registry says [at, at + 8) is mapped memory this agent may access and
        // `host` is where it lives; it is 8-byte aligned (same page offset as `at`), and
        // other agents and the host write it concurrently, hence an atomic load.
        Ok(unsafe { &*(host as *const AtomicI64) }.load(Ordering::Acquire))
    }

    /// The packet at the read index if it can run now: its type and completion signal
    /// handle (both packet formats keep it at byte 56). Deterministic-mode scheduling uses
    /// it to pick work.
    pub fn ready_front(&self, cx: &QueueContext<'_>) -> Option<(u16, u64)> {
        if self.peek(cx) != Peek::Ready {
            return None;
        }
        let read = self.read_index().load(Ordering::Acquire);
        let header = PacketHeader(self.header(read).load(Ordering::Acquire));
        // SAFETY: a published, 64-byte aligned slot; bytes 56..64 are the completion signal.
        let completion = unsafe { std::ptr::read_volatile(self.slot(read).add(56).cast::<u64>()) };
        Some((header.packet_type(), completion))
    }

    /// Strict mode's doorbell rules on the doorbell's value now and its history.
    fn doorbell_check(&self) -> Result<(), crate::strict::Violation> {
        if self.single_producer {
            crate::strict::doorbell_monotonic(
                self.doorbell.doorbell_fell_back_from(),
                self.doorbell.load(Ordering::Relaxed),
            )?;
        }
        crate::strict::doorbell(
            self.doorbell.load(Ordering::Acquire),
            self.write_index().load(Ordering::Acquire),
        )
    }

    /// A producer that rang the doorbell past a slot whose header stays INVALID is either
    /// still writing it (legal with several producers) or forgot it. Hardware just waits;
    /// so do we, but say so once after a second so a hang has an explanation.
    fn note_stall(&self, read: u64) {
        let rung = self.doorbell.load(Ordering::Relaxed);
        let pending =
            rung >= 0 && (rung as u64) >= read && self.write_index().load(Ordering::Relaxed) > read;
        let mut since = self.stall_since.lock();
        if !pending {
            *since = None;
            return;
        }
        let start = *since.get_or_insert_with(Instant::now);
        if start.elapsed() > Duration::from_secs(1)
            && !self.stalled_warned.swap(true, Ordering::Relaxed)
        {
            tracing::warn!(target: "hsasim", queue = self.id, index = read, doorbell = rung,
                "doorbell rung past packet {read} but its header is still INVALID; waiting for the producer");
        }
    }

    /// Processes the packet at the read index if it can run now. Returns true if one was
    /// consumed (or the queue just failed).
    pub fn step(&self, cx: &QueueContext<'_>) -> bool {
        let _one_at_a_time = self.exec.lock();
        if self.peek(cx) != Peek::Ready {
            return false;
        }
        let read = self.read_index().load(Ordering::Acquire);
        let header = PacketHeader(self.header(read).load(Ordering::Acquire));
        if header.packet_type() == HSA_PACKET_TYPE_INVALID {
            // Only strict mode's doorbell rule makes an empty slot ready (see `peek`); it may
            // hold no longer if a producer reserved more since.
            return match self.doorbell_check() {
                Err(violation) => {
                    let (code, message) = invalid_packet(read, violation);
                    self.fail(cx, code, &message);
                    true
                }
                Ok(()) => false,
            };
        }
        std::sync::atomic::fence(Ordering::SeqCst);
        if crate::capture::is_on() {
            self.capture(cx, read, header);
        }
        if cx.config.strict && self.single_producer {
            let rung = self.doorbell.load(Ordering::Relaxed);
            let history = self.doorbell.doorbell_fell_back_from();
            if let Err(violation) = crate::strict::doorbell_monotonic(history, rung) {
                let (code, message) = invalid_packet(read, violation);
                self.fail(cx, code, &message);
                return true;
            }
        }
        if cx.config.strict {
            // SAFETY: a live slot of the ring, read as eight words without assuming the
            // producer is done with it (that is what is being checked).
            let words = unsafe { std::ptr::read_volatile(self.slot(read).cast::<[u64; 8]>()) };
            if let Err(violation) = crate::strict::body_written(&words) {
                let (code, message) = invalid_packet(read, violation);
                self.fail(cx, code, &message);
                return true;
            }
        }
        // The hardware scheduler model: a packet starts only while its queue holds a slot.
        if let Some(slot) = &self.slot {
            // Without its service nothing maps or unmaps queues any more: stop loudly.
            if slot.service_gone() {
                self.fail(
                    cx,
                    status::ERROR,
                    &format!("device service {} is gone", slot.service_name()),
                );
                return true;
            }
            // Under virtual time the slots act on the virtual time line (`virtual_slots`),
            // not here: the host-time scheduler's turns follow the host's threads, and a queue
            // holding the slot while its finished packet waits for an earlier entry of an
            // unmapped queue to commit would hold it for ever.
            if cx.vtime.is_none() && !slot.begin() {
                return false;
            }
        }
        // An internal panic fails this packet like any other error: the queue stops with
        // an error report, and the process and the other queues go on.
        let result = catch_panic(|| self.execute(cx, read, header)).unwrap_or_else(|why| {
            Err((
                status::ERROR,
                format!("internal error while processing packet {read}: {why}"),
            ))
        });
        if let Some(slot) = self.slot.as_ref().filter(|_| cx.vtime.is_none()) {
            slot.end();
        }
        std::sync::atomic::fence(Ordering::SeqCst);
        match result {
            Ok(()) => {
                if cx.config.strict {
                    // SAFETY: the consumed slot; its producer finished with it and the next
                    // one may not write it before the read index moves on below.
                    unsafe { fill_stale_body(self.slot(read)) };
                }
                self.header(read).store(
                    packet_header(HSA_PACKET_TYPE_INVALID, false, 0, 0),
                    Ordering::Release,
                );
                self.read_index().store(read + 1, Ordering::Release);
                HUB.notify();
            }
            Err((code, message)) => self.fail(cx, code, &message),
        }
        true
    }

    /// Writes the packet at `read` to the capture file (`capture.rs`), with the kernarg
    /// segment of a dispatch of a loaded kernel whose kernargs the device can read.
    fn capture(&self, cx: &QueueContext<'_>, read: u64, header: PacketHeader) {
        // SAFETY: a published, 64-byte aligned slot of this queue's ring.
        let bytes = unsafe { std::ptr::read_volatile(self.slot(read).cast::<[u8; 64]>()) };
        let detail = (header.packet_type() == HSA_PACKET_TYPE_KERNEL_DISPATCH).then(|| {
            // SAFETY: as above; the slot holds a kernel dispatch packet.
            let p = unsafe {
                std::ptr::read_volatile(self.slot(read).cast::<hsa_kernel_dispatch_packet_t>())
            };
            // The whole segment as the metadata states it (hidden arguments included; a
            // descriptor's `kernarg_size` may count only the explicit ones).
            let kernel = cx
                .loader
                .is_kernel_object(p.kernel_object)
                .then(|| cx.loader.kernel_at(p.kernel_object))
                .flatten();
            let size = kernel
                .as_ref()
                .map_or(0, |(_, info)| u64::from(info.kernarg_size));
            let kernarg = match (size > 0)
                .then(|| cx.memory.translate(p.kernarg_address, size))
                .flatten()
            {
                // SAFETY: the registry says the range is mapped memory the device may read,
                // and `host` is where it lives.
                Some(host) => unsafe {
                    std::slice::from_raw_parts(host as *const u8, size as usize)
                },
                None => &[],
            };
            (kernel, kernarg)
        });
        let hidden = detail
            .as_ref()
            .and_then(|(kernel, _)| kernel.as_ref())
            .map(|(_, info)| info.hidden_args.clone())
            .unwrap_or_default();
        crate::capture::packet(
            self.id,
            read,
            &bytes,
            detail.map(|(kernel, kernarg)| crate::capture::DispatchDetail {
                kernel: kernel.map(|(name, _)| name),
                kernarg,
                hidden: &hidden,
            }),
        );
    }

    /// What the packet at `read` asks for; an error fails the queue.
    fn execute(
        &self,
        cx: &QueueContext<'_>,
        read: u64,
        header: PacketHeader,
    ) -> Result<(), (hsa_status_t, String)> {
        match header.packet_type() {
            HSA_PACKET_TYPE_KERNEL_DISPATCH => self.kernel_dispatch(cx, read),
            t @ (HSA_PACKET_TYPE_BARRIER_AND | HSA_PACKET_TYPE_BARRIER_OR) => {
                let p = self.read_barrier(read);
                if cx.config.strict {
                    crate::strict::barrier(&p).map_err(|v| invalid_packet(read, v))?;
                }
                match self.dep_signals(cx, &p) {
                    Err(_) => Err((
                        status::ERROR_INVALID_SIGNAL,
                        format!("barrier packet {read} names a dependency signal that does not exist"),
                    )),
                    Ok(deps) => self.complete(cx, p.completion_signal, read, None, || Work::Barrier {
                        barrier: header.barrier(),
                        deps,
                        any: t == HSA_PACKET_TYPE_BARRIER_OR,
                    }),
                }
                .map(|()| tracing::trace!(target: "hsasim", queue = self.id, index = read, and = (t == HSA_PACKET_TYPE_BARRIER_AND), "barrier done"))
            }
            HSA_PACKET_TYPE_VENDOR_SPECIFIC => {
                let p = self.read_barrier_value(read);
                if cx.config.strict {
                    crate::strict::barrier_value(&p).map_err(|v| invalid_packet(read, v))?;
                }
                // `step` runs this only after `peek` saw the condition hold: that look is the
                // one that counts, even if the value has moved on since (as a GPU's processor
                // goes on once it saw it). Here only the errors are reported.
                self.barrier_value(cx, read)?;
                self.complete(cx, p.completion_signal, read, None, || Work::Barrier {
                    barrier: header.barrier(),
                    deps: cx.signals.get(p.signal).into_iter().collect(),
                    any: false,
                })
                .map(|()| tracing::trace!(target: "hsasim", queue = self.id, index = read, "barrier-value done"))
            }
            other => Err((
                status::ERROR_INVALID_PACKET_FORMAT,
                format!(
                    "packet {read} at {:#x} has type {other} ({}), which this packet processor does not execute",
                    self.slot(read) as u64,
                    packet_type_name(other)
                ),
            )),
        }
    }

    fn kernel_dispatch(
        &self,
        cx: &QueueContext<'_>,
        index: u64,
    ) -> Result<(), (hsa_status_t, String)> {
        let slot = self.slot(index);
        // SAFETY: as in `read_barrier`: a published, aligned packet slot.
        let packet =
            unsafe { std::ptr::read_volatile(slot.cast::<hsa_kernel_dispatch_packet_t>()) };
        let dispatch = Dispatch {
            model: self.agent.model,
            packet,
            packet_address: slot as u64,
            queue_address: self.address(),
            dispatch_id: index,
            code: cx.loader.kernel_code(packet.kernel_object),
        };
        tracing::trace!(target: "hsasim", queue = self.id, index, kernel_object = format_args!("{:#x}", packet.kernel_object),
            grid = ?[packet.grid_size_x, packet.grid_size_y, packet.grid_size_z],
            block = ?[packet.workgroup_size_x, packet.workgroup_size_y, packet.workgroup_size_z], "kernel dispatch");
        crate::testing::dispatch_hook(packet.completion_signal.handle);
        let start = now_ns();
        // Only descriptors the loader placed are run: anything else (a stale or garbage
        // pointer, an address inside a descriptor or a data symbol) would make the
        // interpreter decode whatever bytes it points at.
        let outcome = if !cx.loader.is_kernel_object(packet.kernel_object) {
            Err(DispatchError::InvalidDispatch(format!(
                "kernel_object {:#x} is not the kernel descriptor of a loaded kernel{}",
                packet.kernel_object,
                if packet.kernel_object % 64 != 0 {
                    " (not even 64-byte aligned)"
                } else {
                    ""
                }
            )))
        } else if let Some(violation) = cx
            .config
            .strict
            .then(|| {
                // SAFETY: a loaded kernel descriptor (checked above): 64 readable bytes.
                let kd = unsafe {
                    std::ptr::read_unaligned(packet.kernel_object as *const KernelDescriptor)
                };
                crate::strict::kernel_dispatch(&packet, &kd).err()
            })
            .flatten()
        {
            return Err(invalid_packet(index, violation));
        } else {
            // Attached processes' dispatches compete for the compute units of a device
            // service that models a budget: this one runs on no more workers than the units
            // it got, and holds them until it ends.
            let lease = match &self.slot {
                None => None,
                Some(slot) => {
                    let workgroups = workgroups_of(&packet);
                    let give_up = || !self.is_active() || slot.service_gone();
                    slot.compute_units(workgroups, &give_up).map_err(|_| {
                        (
                            status::ERROR,
                            format!(
                                "dispatch {index}: the queue stopped, or device service {} went, while it waited for compute units",
                                slot.service_name()
                            ),
                        )
                    })?
                }
            };
            let config = ExecConfig {
                worker_threads: lease.as_ref().map_or(cx.config.workers, |l| {
                    cx.config.workers.min(l.units() as usize)
                }),
                compute_units: self.agent.compute_units,
                max_wave_instructions: cx.config.max_wave_instructions,
                timeout: Some(cx.config.dispatch_timeout),
                // `hsa_amd_queue_set_priority` accepts nothing else.
                priority: QueuePriority::from_hsa(self.priority.load(Ordering::Relaxed))
                    .unwrap_or(QueuePriority::Normal),
                device: self.agent.node,
                jit: cx.config.jit,
                timing: cx.vtime.map(|v| hsasim_isa::Timing {
                    costs: &v.model.wave_costs,
                    start_ns: v.estimated_start(self.address(), index),
                    clock_mhz: v.model.compute.shader_clock_mhz,
                }),
                progress: cx.vtime.and_then(|v| {
                    v.dispatch_running(self.address(), index, workgroups_of(&packet))
                }),
            };
            // The kernel sees memory as its agent does: another GPU's memory faults unless
            // it was granted to this one.
            let memory = AgentMemory {
                registry: cx.memory,
                agent: self.agent.handle(),
                bit: node_bit(self.agent.node),
            };
            match &self.gws {
                None => hsasim_isa::run_dispatch_timed(&dispatch, &memory, &config),
                Some(gws) => {
                    hsasim_isa::run_cooperative_dispatch_timed(&dispatch, &memory, &config, gws)
                }
            }
            .map(|stats| stats.costs)
        };
        let end = now_ns();
        match outcome {
            Ok(costs) => self.complete(
                cx,
                packet.completion_signal,
                index,
                Some((start, end)),
                || {
                    // SAFETY: a loaded kernel descriptor (the dispatch ran, so it was checked).
                    let kd = unsafe {
                        std::ptr::read_unaligned(packet.kernel_object as *const KernelDescriptor)
                    };
                    Work::Dispatch {
                        node: self.agent.node,
                        shape: dispatch_shape(&packet, &kd),
                        costs,
                        barrier: PacketHeader(packet.header).barrier(),
                        cu_mask: Some(self.cu_mask.lock().clone()).filter(|m| !m.is_empty()),
                    }
                },
            ),
            Err(e) => Err((
                e.hsa_status(),
                format!(
                    "dispatch {index} (packet at {:#x}) of kernel {} failed: {e}",
                    slot as u64,
                    cx.loader
                        .kernel_at(packet.kernel_object)
                        .map_or_else(|| format!("{:#x}", packet.kernel_object), |(name, _)| name)
                ),
            )),
        }
    }

    /// Writes the completion signal of packet `index` (after virtual time commits it, under
    /// `HSASIM_TIME=virtual`, with the times `work` gets on the model).
    fn complete(
        &self,
        cx: &QueueContext<'_>,
        signal: hsa_signal_t,
        index: u64,
        times: Option<(u64, u64)>,
        work: impl FnOnce() -> Work,
    ) -> Result<(), (hsa_status_t, String)> {
        let sig = cx.signals.get_opt(signal).map_err(|_| {
            (
                status::ERROR_INVALID_SIGNAL,
                format!(
                    "packet {index} has completion signal {:#x}, which does not exist",
                    signal.handle
                ),
            )
        })?;
        if let Some(v) = cx.vtime {
            let entry = v.packet_entry(self.address(), index);
            std::sync::atomic::fence(Ordering::Release);
            v.finish(
                entry,
                work(),
                Completion {
                    signal: sig,
                    timestamps: true,
                },
                cx.config.threaded,
            );
            return Ok(());
        }
        if let Some(s) = sig {
            let (start, end) = times.unwrap_or_else(|| {
                let t = now_ns();
                (t, t)
            });
            s.set_timestamps(start, end);
            s.rmw(Ordering::Release, |v, o| v.fetch_sub(1, o));
        }
        Ok(())
    }

    /// Puts the queue in the error state (as hardware does: nothing after the failing packet
    /// runs, its completion signal is not touched), reports once, and calls the client's
    /// error callback on this thread.
    ///
    /// Under virtual time the client hears of it on the host's clock at the failure, after
    /// the packets ahead of it on the queue (see [`VirtualTime::fault`]). Hearing of it
    /// earlier, it would take work that completed before the failure, whose completion the
    /// host's clock does not show yet, for work the failure stopped.
    fn fail(&self, cx: &QueueContext<'_>, code: hsa_status_t, message: &str) {
        crate::testing::note_queue_failure(self.address(), message);
        self.state.store(ERROR, Ordering::SeqCst);
        HUB.notify();
        tracing::error!(target: "hsasim", queue = self.id, status = format_args!("{code:#x}"), "{message}");
        eprintln!("hsasim: queue {} error {code:#x}: {message}", self.id);
        let at = cx.vtime.map(|v| {
            let index = self.read_index().load(Ordering::Acquire);
            v.fault(self.address(), index)
        });
        if let Some(cb) = self.error_callback {
            let report = || {
                // SAFETY: the callback and its data were supplied by the client at
                // hsa_queue_create for exactly this use; the queue pointer is live.
                unsafe { cb(code, self.amd.cast(), self.callback_data as *mut c_void) };
            };
            match at {
                Some(at) => crate::virtual_time::in_handler(at, report),
                None => report(),
            }
        }
    }
}

/// What the device model needs of a dispatch: its size and the resources each workgroup
/// holds (AMDGPUUsage's kernel descriptor fields for GFX90A/GFX942: VGPRs in granules of 8,
/// arch and accumulation registers split at ACCUM_OFFSET; SGPRs in granules of 16).
fn dispatch_shape(p: &hsa_kernel_dispatch_packet_t, kd: &KernelDescriptor) -> DispatchShape {
    let workgroups = workgroups_of(p);
    let lanes = u32::from(p.workgroup_size_x.max(1))
        * u32::from(p.workgroup_size_y.max(1))
        * u32::from(p.workgroup_size_z.max(1));
    let total_vgprs = ((kd.compute_pgm_rsrc1 & 0x3f) + 1) * 8;
    let arch_vgprs = (((kd.compute_pgm_rsrc3 & 0x3f) + 1) * 4).min(total_vgprs);
    let sgprs = (((kd.compute_pgm_rsrc1 >> 6) & 0xf) / 2 + 1) * 16;
    DispatchShape {
        workgroups,
        waves_per_workgroup: lanes.div_ceil(64),
        vgprs: arch_vgprs,
        agprs: total_vgprs - arch_vgprs,
        sgprs,
        lds_bytes: kd
            .group_segment_fixed_size
            .saturating_add(p.group_segment_size),
        scratch_per_lane: kd.private_segment_fixed_size.max(p.private_segment_size),
    }
}

/// A packet that breaks a strict-mode rule fails its queue as an invalid packet.
fn invalid_packet(index: u64, violation: crate::strict::Violation) -> (hsa_status_t, String) {
    (
        status::ERROR_INVALID_PACKET_FORMAT,
        format!("packet {index}: {violation}"),
    )
}

/// How long a processor whose front packet waits on plain memory sleeps between looks.
const MEMORY_POLL: Duration = Duration::from_micros(200);

/// What a barrier-value packet's condition says now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BarrierValue {
    Satisfied,
    Waiting,
}

/// `(current & mask) cond value`; `None` for a condition that is not one. The comparison is
/// unsigned: hsa_ext_amd.h does not say, and HIP's stream waits (this packet's user, in
/// hipshim as in AMD's runtime) define `hipStreamWaitValueGte` on unsigned values, which a
/// 32-bit wait in the upper half of a 64-bit word keeps only when compared unsigned.
fn barrier_value_holds(cond: u32, current: i64, mask: i64, value: i64) -> Option<bool> {
    let (masked, value) = ((current & mask) as u64, value as u64);
    Some(match cond {
        HSA_SIGNAL_CONDITION_EQ => masked == value,
        HSA_SIGNAL_CONDITION_NE => masked != value,
        HSA_SIGNAL_CONDITION_LT => masked < value,
        HSA_SIGNAL_CONDITION_GTE => masked >= value,
        _ => return None,
    })
}

fn barrier_satisfied(packet_type: u16, deps: &[Arc<Signal>]) -> bool {
    let zero = |s: &Arc<Signal>| s.load(Ordering::Acquire) == 0;
    if packet_type == HSA_PACKET_TYPE_BARRIER_AND {
        deps.iter().all(zero)
    } else {
        // All-null dependencies satisfy a barrier-OR immediately.
        deps.is_empty() || deps.iter().any(zero)
    }
}

fn packet_type_name(t: u16) -> &'static str {
    match t {
        HSA_PACKET_TYPE_VENDOR_SPECIFIC => "VENDOR_SPECIFIC",
        HSA_PACKET_TYPE_INVALID => "INVALID",
        HSA_PACKET_TYPE_KERNEL_DISPATCH => "KERNEL_DISPATCH",
        HSA_PACKET_TYPE_BARRIER_AND => "BARRIER_AND",
        HSA_PACKET_TYPE_AGENT_DISPATCH => "AGENT_DISPATCH",
        HSA_PACKET_TYPE_BARRIER_OR => "BARRIER_OR",
        _ => "unknown",
    }
}

/// Fills bytes 8-63 of a free ring slot with [`crate::strict::STALE_BODY`].
///
/// # Safety
/// `slot` is a 64-byte aligned ring slot no producer may write now.
unsafe fn fill_stale_body(slot: *mut u8) {
    for word in 1..8 {
        // SAFETY: within the slot, per the caller; volatile because producers read and write
        // the ring from other threads once the slot is theirs.
        unsafe {
            std::ptr::write_volatile(slot.cast::<u64>().add(word), crate::strict::STALE_BODY)
        };
    }
}

/// The workgroups of a dispatch packet's grid.
fn workgroups_of(packet: &hsa_kernel_dispatch_packet_t) -> u64 {
    let size = |grid: u32, group: u16| u64::from(grid).div_ceil(u64::from(group.max(1)));
    size(packet.grid_size_x, packet.workgroup_size_x)
        * size(packet.grid_size_y, packet.workgroup_size_y)
        * size(packet.grid_size_z, packet.workgroup_size_z)
}

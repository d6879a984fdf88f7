//! IPC signals (`hsa_amd_signal_create` with `HSA_AMD_SIGNAL_IPC`,
//! `hsa_amd_ipc_signal_create` / `_attach`) of processes attached to a device service
//! (`HSASIM_DEVICE_SERVICE`): their `amd_signal_t` lives in a slot of the service's segment
//! ([`hsasim_sched::device::SignalCell`]), so every process that holds the signal reads and
//! writes the same value. A process's handle is the slot's address in its own mapping of the
//! segment; an IPC handle names the slot, its serial and the service.
//!
//! Waking across processes: every change of such a signal through the signal API (and every
//! interrupt a wave raises, which may follow a write to one) moves the segment's
//! `signal_epoch` futex word and wakes its sleepers (a shared futex, not
//! `FUTEX_PRIVATE_FLAG`); in each process holding IPC signals a thread,
//! `hsasim-ipc-signals`, sleeps on that word and wakes the process's own waiters (the
//! [`HUB`]), which then re-check their signals. Processes without IPC signals pay one
//! relaxed load of [`SHARED_ON`] per signal change.
//!
//! This module sits above `signal.rs` and the memory registry: it installs [`find`] and
//! [`changed`] as the signal module's [`SharedSignals`] when it attaches to a service.
//!
//! The segment has [`MAX_SIGNALS`](hsasim_sched::memory::MAX_SIGNALS) slots; a slot is free
//! once its creator and every process that attached it let go of it, or died (the service
//! reaps them with their memory).
//!
//! The doorbells of an attached process's queues are signals in the segment too, in its
//! doorbell array (one cell per runlist entry, freed with the entry; [`doorbell`]): the
//! service reads them to see which queues have work. Ringing one wakes the queue's own
//! packet processor only (its bell), and no other process.

use crate::error::{HsaError, HsaResult};
use crate::memory::{MemoryRegistry, Region};
use crate::signal::{SharedSignals, Signal, SignalMemory, SlotKeeper, HUB, SHARED_ON};
use hsa_abi::hsa_amd_ipc_signal_t;
use hsasim_sched::Device;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// "HSIG": the first word of IPC signal handles.
const MAGIC: u32 = 0x4853_4947;

/// Where this process maps the segment's signal slots, `[START, END)`: what [`find`] checks
/// a handle against (0 and 0 while attached to no service).
static START: AtomicU64 = AtomicU64::new(0);
static END: AtomicU64 = AtomicU64::new(0);

/// Where this process maps the segment's doorbell cells, `[DOORBELLS_START, DOORBELLS_END)`.
static DOORBELLS_START: AtomicU64 = AtomicU64::new(0);
static DOORBELLS_END: AtomicU64 = AtomicU64::new(0);

/// The segment the slots are in, while attached (for [`changed`]).
static DEVICE: Mutex<Option<Arc<Device>>> = Mutex::new(None);

/// A signal's place in the segment: keeps the segment mapped while the [`Signal`] lives, and
/// dropping the last one that holds an IPC signal gives the process's reference back.
pub struct SharedRef {
    device: Arc<Device>,
    index: usize,
    role: Role,
}

enum Role {
    Creator,
    Attacher,
    /// A queue's doorbell: its runlist entry owns the cell (and clears it when it goes).
    Doorbell,
}

impl SlotKeeper for SharedRef {}

impl Drop for SharedRef {
    fn drop(&mut self) {
        let creator = match self.role {
            Role::Creator => true,
            Role::Attacher => false,
            Role::Doorbell => return,
        };
        self.device
            .release_signal(self.index, std::process::id(), creator);
    }
}

/// The doorbell of the queue at runlist entry `index` of `device`: its cell made a doorbell
/// signal of value 0.
pub fn doorbell(device: &Arc<Device>, index: usize) -> Signal {
    // SAFETY: a 64-byte, 64-aligned cell of the segment that the runlist entry just taken
    // gives this queue alone, mapped while `device` (held by the signal's `SharedRef`) lives;
    // accessed through atomics.
    let memory: &'static SignalMemory = unsafe { &*device.doorbell_cell(index).cast() };
    memory.init(hsa_abi::AMD_SIGNAL_KIND_DOORBELL, 0);
    Signal::shared(
        memory,
        Vec::new(),
        0,
        Box::new(SharedRef {
            device: device.clone(),
            index,
            role: Role::Doorbell,
        }),
    )
}

/// The IPC signals of one runtime attached to a device service.
pub struct IpcSignals {
    device: Arc<Device>,
    tag: u32,
    stopping: Arc<AtomicBool>,
    watcher: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl IpcSignals {
    pub fn new(
        device: Arc<Device>,
        registry: &MemoryRegistry,
        owner: hsa_abi::hsa_agent_t,
    ) -> IpcSignals {
        let (start, len) = device.signal_cells();
        // Kernels reach signals (the device library's signal functions write them).
        registry.add(Region::internal(start, len, owner));
        START.store(start, Ordering::Release);
        END.store(start + len, Ordering::Release);
        // Doorbells too (a kernel may ring a queue's doorbell, as on ROCr).
        let (doorbells, doorbells_len) = device.doorbell_cells();
        registry.add(Region::internal(doorbells, doorbells_len, owner));
        DOORBELLS_START.store(doorbells, Ordering::Release);
        DOORBELLS_END.store(doorbells + doorbells_len, Ordering::Release);
        *DEVICE.lock() = Some(device.clone());
        crate::signal::install_shared(SharedSignals { find, changed });
        let t = device.started_ns();
        IpcSignals {
            tag: (t as u32) ^ ((t >> 32) as u32) ^ device.service_pid().rotate_left(16),
            device,
            stopping: Arc::new(AtomicBool::new(false)),
            watcher: Mutex::new(None),
        }
    }

    /// Starts the thread that wakes this process's waiters for other processes' changes.
    fn watch(&self) -> HsaResult {
        let mut w = self.watcher.lock();
        if w.is_some() {
            return Ok(());
        }
        let (device, stopping) = (self.device.clone(), self.stopping.clone());
        *w = Some(
            std::thread::Builder::new()
                .name("hsasim-ipc-signals".into())
                .spawn(move || {
                    while !stopping.load(Ordering::SeqCst) {
                        // Read the epoch, then wake: a change after the read makes the
                        // futex wait return at once, one before it is seen by the waiters
                        // this wakes.
                        let seen = device.signal_epoch().load(Ordering::SeqCst);
                        HUB.notify();
                        device.wait_signal_change(seen, Duration::from_millis(100));
                    }
                })
                .map_err(|_| HsaError::OUT_OF_RESOURCES)?,
        );
        SHARED_ON.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// `hsa_amd_signal_create` with the IPC attribute: a signal in a free slot.
    pub fn create(&self, initial: i64, consumers: Vec<u64>, attributes: u64) -> HsaResult<Signal> {
        self.watch()?;
        let (index, _) = self
            .device
            .memory()
            .create_signal(std::process::id())
            .map_err(|e| {
                tracing::error!(target: "hsasim", "hsa_amd_signal_create(IPC): {e} (at most {} IPC signals on a device service)", hsasim_sched::memory::MAX_SIGNALS);
                HsaError::OUT_OF_RESOURCES
            })?;
        let memory = self.cell(index);
        memory.init(hsa_abi::AMD_SIGNAL_KIND_USER, initial);
        Ok(Signal::shared(
            memory,
            consumers,
            attributes,
            Box::new(SharedRef {
                device: self.device.clone(),
                index,
                role: Role::Creator,
            }),
        ))
    }

    fn cell(&self, index: usize) -> &'static SignalMemory {
        // SAFETY: a 64-byte, 64-aligned slot of the segment, mapped while `self.device` (which
        // every `Signal` in it holds through its `SharedRef`) lives; accessed through atomics.
        unsafe { &*self.device.signal_cell(index).cast::<SignalMemory>() }
    }

    fn index_of(&self, memory: &SignalMemory) -> Option<usize> {
        let (start, len) = self.device.signal_cells();
        let at = memory as *const SignalMemory as u64;
        (at >= start && at < start + len).then(|| ((at - start) / 64) as usize)
    }

    /// `hsa_amd_ipc_signal_create`: a handle of an IPC signal this process holds.
    pub fn export(&self, signal: &Signal) -> HsaResult<hsa_amd_ipc_signal_t> {
        let index = self.index_of(signal).ok_or_else(|| {
            tracing::error!(target: "hsasim", "hsa_amd_ipc_signal_create: not a signal created with HSA_AMD_SIGNAL_IPC");
            HsaError::INVALID_SIGNAL
        })?;
        let serial = self.device.memory().signals[index].serial;
        let mut w = [
            MAGIC,
            index as u32,
            serial as u32,
            (serial >> 32) as u32,
            self.tag,
            0,
            0,
            0,
        ];
        w[7] = check_word(&w);
        Ok(hsa_amd_ipc_signal_t { handle: w })
    }

    /// `hsa_amd_ipc_signal_attach`: the signal another process exported.
    pub fn attach(&self, handle: &hsa_amd_ipc_signal_t) -> HsaResult<Signal> {
        let what = "hsa_amd_ipc_signal_attach";
        let w = &handle.handle;
        if w[0] != MAGIC || w[7] != check_word(w) {
            tracing::error!(target: "hsasim", "{what}: not a handle hsa_amd_ipc_signal_create made");
            return Err(HsaError::INVALID_ARGUMENT);
        }
        if w[4] != self.tag {
            tracing::error!(target: "hsasim", "{what}: the handle is of another device service's signal");
            return Err(HsaError::INVALID_ARGUMENT);
        }
        let index = w[1] as usize;
        let serial = u64::from(w[2]) | (u64::from(w[3]) << 32);
        self.watch()?;
        self.device
            .memory()
            .attach_signal(index, serial, std::process::id())
            .map_err(|e| {
                tracing::error!(target: "hsasim", "{what}: {e} (the signal was destroyed, or too many processes attached it)");
                HsaError::INVALID_ARGUMENT
            })?;
        Ok(Signal::shared(
            self.cell(index),
            Vec::new(),
            2,
            Box::new(SharedRef {
                device: self.device.clone(),
                index,
                role: Role::Attacher,
            }),
        ))
    }

    /// At `hsa_shut_down`.
    pub fn shut_down(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        self.device.signal_changed();
        if let Some(h) = self.watcher.lock().take() {
            let _ = h.join();
        }
        SHARED_ON.store(false, Ordering::SeqCst);
        START.store(0, Ordering::Release);
        END.store(0, Ordering::Release);
        DOORBELLS_START.store(0, Ordering::Release);
        DOORBELLS_END.store(0, Ordering::Release);
        *DEVICE.lock() = None;
    }
}

fn check_word(words: &[u32; 8]) -> u32 {
    words[..7]
        .iter()
        .fold(0x516a_1c0d, |acc, w| acc.rotate_left(9) ^ w)
}

/// The IPC signal slot or doorbell cell `handle` names, if it is one and live (what
/// `signal::live` falls back to for handles outside the process's own signals).
pub fn find(handle: u64) -> Option<&'static SignalMemory> {
    let within = |start: &AtomicU64, end: &AtomicU64| {
        let (start, end) = (start.load(Ordering::Acquire), end.load(Ordering::Acquire));
        handle >= start && handle < end && (handle - start).is_multiple_of(64)
    };
    if !within(&START, &END) && !within(&DOORBELLS_START, &DOORBELLS_END) {
        return None;
    }
    // SAFETY: a slot of the segment's signal array, mapped while attached (START..END are
    // cleared before the runtime lets the segment go); read through atomics.
    let memory: &'static SignalMemory = unsafe { &*(handle as *const SignalMemory) };
    (memory.kind() != hsa_abi::AMD_SIGNAL_KIND_INVALID).then_some(memory)
}

/// A signal changed (or a wave raised an interrupt): if it may be an IPC signal, other
/// processes hear of it.
#[cold]
pub fn changed(at: u64) {
    let (start, end) = (START.load(Ordering::Acquire), END.load(Ordering::Acquire));
    if at == 0 || (at >= start && at < end) {
        if let Some(d) = DEVICE.lock().as_ref() {
            d.signal_changed();
        }
    }
}

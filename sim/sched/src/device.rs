//! Where a scheduler table lives and how its users meet: an anonymous mapping for one process,
//! or a named shared-memory segment (`/dev/shm/hsasim-device-NAME`) that a device service
//! (`hipshim device start`) creates and every attached process maps.
//!
//! The segment is a [`Shared`] block: a lock, two futex words and the [`Table`]. The lock
//! holds the pid of its owner, so a process that dies holding it (killed mid-call) does not
//! block the others: a waiter that finds the owner gone takes the lock over. Futexes work
//! across processes on a shared mapping (no `FUTEX_PRIVATE_FLAG`):
//! - `generation` changes whenever the scheduler mapped or unmapped something; packet
//!   processors waiting for a slot sleep on it;
//! - `kick` changes whenever a packet processor wants the scheduler to look (a packet waits
//!   for a slot, a queue that has to leave finished its packet); the scheduler sleeps on it
//!   until its next deadline.
//!
//! Version 2 adds the device memory ([`crate::memory`]): a second file,
//! `/dev/shm/hsasim-device-NAME.mem`, that every attached process maps at the address the
//! table records, and the table of allocations in it, under a lock of its own (`mem_lock`,
//! the same owner-pid protocol), so that allocating never waits for the scheduler. The
//! service frees a dead process's allocations when it removes its queues. The segment also
//! holds the IPC signals ([`SignalCell`], bookkept in the memory table) and a futex word,
//! `signal_epoch`, that a change of any of them moves, so that a process waiting on one
//! wakes for a store made by another.
//!
//! Version 3 adds the queues: each attached process's AQL queue has its `amd_queue_t` block
//! and ring in the device memory (an allocation of [`Use::Queue`](crate::memory::Use), with
//! its owner's pid, so the same address in every process) and its doorbell in a cell of the
//! segment's doorbell array, one per runlist entry (index for index). The runlist entry
//! records where they are ([`Hqd`]), and the scheduler decides from the indices and the
//! doorbell whether a queue has work ([`Device::step`]), as the command processor reads a
//! mapped queue's descriptor. The process's own packet processor still executes its
//! packets: their kernarguments, code objects and host memory live in that process.

use crate::clock::now_ns;
use crate::memory::{MemTable, DEFAULT_BASE, MAX_SIGNALS};
use crate::model::{ring_has_work, Event, Hqd, Params, Table, MAX_PROCS, MAX_QUEUES};
use std::cell::UnsafeCell;
use std::io;
use std::ops::{Deref, DerefMut};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

const MAGIC: u64 = u64::from_le_bytes(*b"HSASIMDV");
const VERSION: u32 = 4;

/// The shared block.
#[repr(C)]
pub struct Shared {
    magic: AtomicU64,
    version: AtomicU32,
    /// The pid holding the lock, 0 when free.
    pub(crate) lock: AtomicU32,
    generation: AtomicU32,
    kick: AtomicU32,
    /// The device service's pid (0 for a private table).
    service_pid: AtomicU32,
    /// Set by `hipshim device stop`, and by the service as it exits.
    stop: AtomicU32,
    /// CLOCK_MONOTONIC ns when the service started.
    started_ns: AtomicU64,
    /// The pid holding the memory table's lock, 0 when free.
    pub(crate) mem_lock: AtomicU32,
    /// Moves whenever an IPC signal changes (a futex word shared by every process).
    signal_epoch: AtomicU32,
    table: UnsafeCell<Table>,
    memory: UnsafeCell<MemTable>,
    signals: [SignalCell; MAX_SIGNALS],
    /// The doorbell of runlist entry `i` is `doorbells[i]` (all zeroes while the entry is
    /// free): an `amd_signal_t` of kind doorbell, whose value the queue's producers store.
    doorbells: [SignalCell; MAX_QUEUES],
    compute_units: CuPool,
}

/// The compute units the dispatches of every attached process draw from
/// ([`Params::cu_budget`]; [`Device::take_compute_units`]): how many are in use, and how many
/// each process holds, so that the service takes back what a dead process held.
#[repr(C)]
struct CuPool {
    budget: AtomicU32,
    in_use: AtomicU32,
    max_in_use: AtomicU32,
    /// Moves whenever units are given back: dispatches waiting for units sleep on it.
    epoch: AtomicU32,
    sleepers: AtomicU32,
    reserved: AtomicU32,
    /// Dispatches that found no unit free and waited.
    waits: AtomicU64,
    /// Units the service took back from processes that died holding them.
    reaped: AtomicU64,
    holders: [CuHolder; MAX_PROCS],
}

#[repr(C)]
struct CuHolder {
    pid: AtomicU32,
    held: AtomicU32,
}

/// What the compute-unit budget stands at (all zero when it is not modelled).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CuStatus {
    pub budget: u32,
    pub in_use: u32,
    pub max_in_use: u32,
    pub waits: u64,
    pub reaped: u64,
}

/// Units a dispatch took ([`Device::take_compute_units`]): give them back with
/// [`Device::give_back_compute_units`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CuGrant {
    holder: usize,
    pub units: u32,
}

/// Where ROCr's `amd_signal_t` keeps the value: its second 8-byte word (after `kind`).
const SIGNAL_VALUE_WORD: usize = 1;

/// The memory of one IPC signal: ROCr's 64-byte `amd_signal_t`, whose address in each process
/// is that process's handle of the signal. All zeroes (kind invalid) while free.
#[repr(C, align(64))]
pub struct SignalCell(pub UnsafeCell<[u64; 8]>);

fn pid() -> u32 {
    // SAFETY: getpid has no preconditions.
    unsafe { libc::getpid() as u32 }
}

/// Whether process `pid` exists (it may be a zombie not yet reaped; its queues are gone then
/// too, as its threads are).
pub fn process_alive(pid: u32) -> bool {
    if pid == 0 {
        return false;
    }
    // SAFETY: signal 0 only checks that the process exists and may be signalled.
    let r = unsafe { libc::kill(pid as libc::pid_t, 0) };
    if r == 0 {
        // A zombie still answers kill(); its /proc status says so.
        return !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| {
                s.rsplit_once(')')
                    .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
            })
            .unwrap_or(false);
    }
    io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Takes a lock word of the segment: it holds the owner's pid, 0 when free. A waiter that
/// finds the owner dead (killed mid-call) takes it over; critical sections are microseconds
/// long, so a waiter spins, yielding now and then.
fn lock_word(word: &AtomicU32) {
    let me = pid();
    let mut spins = 0u32;
    loop {
        let owner = word.load(Ordering::Relaxed);
        if owner == 0 {
            if word
                .compare_exchange_weak(0, me, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                return;
            }
            continue;
        }
        spins += 1;
        if spins.is_multiple_of(64) {
            std::thread::yield_now();
        }
        if spins.is_multiple_of(4096)
            && owner != me
            && !process_alive(owner)
            && word
                .compare_exchange(owner, me, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            return;
        }
    }
}

fn futex_wait(word: &AtomicU32, seen: u32, timeout: Duration) {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: `word` is a live, aligned u32; FUTEX_WAIT only reads it and sleeps while it
    // equals `seen`, for at most `ts`.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            seen,
            &ts as *const libc::timespec,
        )
    };
}

fn futex_wake_all(word: &AtomicU32) {
    // SAFETY: `word` is a live, aligned u32; FUTEX_WAKE does not touch memory.
    unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, i32::MAX) };
}

/// A scheduler table and the block around it, private or shared.
pub struct Device {
    shared: *mut Shared,
    len: usize,
    /// The device memory's file, when the device has memory.
    memory_file: Option<std::fs::File>,
    /// The segment's path when this handle created it (the service unlinks it on drop).
    owned_path: Option<PathBuf>,
    name: Option<String>,
    /// A read-only mapping of the device memory, made the first time the scheduler or a
    /// status reader looks at a queue's indices: (address, bytes, the device address of its
    /// first byte).
    view: std::sync::OnceLock<Option<(usize, usize, u64)>>,
}

// SAFETY: the block is only touched through atomics and, for the table, under its lock.
unsafe impl Send for Device {}
// SAFETY: as above.
unsafe impl Sync for Device {}

impl Drop for Device {
    fn drop(&mut self) {
        // SAFETY: our own mapping of `len` bytes, no longer used once the handle goes.
        unsafe { libc::munmap(self.shared.cast(), self.len) };
        if let Some(Some((at, len, _))) = self.view.get() {
            // SAFETY: the view this handle mapped; only read through `&self`, which is going.
            unsafe { libc::munmap(*at as *mut libc::c_void, *len) };
        }
        if let Some(path) = &self.owned_path {
            let _ = std::fs::remove_file(path);
            let _ = std::fs::remove_file(memory_path_of(path));
        }
    }
}

/// The path of device service `name`'s segment.
pub fn segment_path(name: &str) -> PathBuf {
    PathBuf::from(format!("/dev/shm/hsasim-device-{name}"))
}

fn memory_path_of(segment: &std::path::Path) -> PathBuf {
    let mut p = segment.as_os_str().to_owned();
    p.push(".mem");
    PathBuf::from(p)
}

/// The path of device service `name`'s device memory.
pub fn memory_path(name: &str) -> PathBuf {
    memory_path_of(&segment_path(name))
}

/// Accepts names that make a plain file name.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty()
        || name.len() > 64
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
        || name.starts_with('.')
    {
        return Err(format!(
            "device name {name:?}: use 1 to 64 letters, digits, '-', '_' or '.'"
        ));
    }
    Ok(())
}

fn map(fd: Option<i32>, len: usize) -> io::Result<*mut Shared> {
    let (flags, fd) = match fd {
        Some(fd) => (libc::MAP_SHARED, fd),
        None => (libc::MAP_SHARED | libc::MAP_ANONYMOUS, -1),
    };
    // SAFETY: a fresh mapping; the kernel picks the address.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            flags,
            fd,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(p.cast())
}

impl Device {
    fn init(shared: *mut Shared, params: Params, service_pid: u32, memory_bytes: u64) {
        // SAFETY: a zeroed mapping we just made, large enough for `Shared`, not yet shared
        // with anyone (the magic, stored last, says it is ready).
        unsafe {
            (*(*shared).table.get()).init(params);
            (*(*shared).memory.get()).init(DEFAULT_BASE, memory_bytes);
            let s = &*shared;
            let budget = (*s.table.get()).params.cu_budget;
            s.compute_units.budget.store(budget, Ordering::Relaxed);
            s.version.store(VERSION, Ordering::Relaxed);
            s.service_pid.store(service_pid, Ordering::Relaxed);
            s.started_ns.store(now_ns(), Ordering::Relaxed);
            s.magic.store(MAGIC, Ordering::Release);
        }
    }

    /// A table for this process alone.
    pub fn private(params: Params) -> io::Result<Device> {
        let len = std::mem::size_of::<Shared>();
        let shared = map(None, len)?;
        Device::init(shared, params, 0, 0);
        Ok(Device {
            shared,
            len,
            memory_file: None,
            owned_path: None,
            name: None,
            view: std::sync::OnceLock::new(),
        })
    }

    /// Creates the segment of device service `name`, with `memory_bytes` of device memory
    /// (a sparse file: pages exist once touched), owned by this process (both removed when
    /// the handle drops). A segment left by a service that died is replaced; a live one is
    /// an error.
    pub fn create(name: &str, params: Params, memory_bytes: u64) -> Result<Device, String> {
        check_name(name)?;
        let path = segment_path(name);
        if let Ok(existing) = Device::open(name) {
            if existing.service_alive() {
                return Err(format!(
                    "device {name} is already running (service pid {})",
                    existing.service_pid()
                ));
            }
        }
        let _ = std::fs::remove_file(&path);
        let mem_path = memory_path(name);
        let _ = std::fs::remove_file(&mem_path);
        let memory_file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&mem_path)
            .and_then(|f| f.set_len(memory_bytes).map(|()| f))
            .map_err(|e| format!("cannot make the device memory {}: {e}", mem_path.display()))?;
        let len = std::mem::size_of::<Shared>();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        file.set_len(len as u64)
            .map_err(|e| format!("cannot size {}: {e}", path.display()))?;
        use std::os::fd::AsRawFd;
        let shared = map(Some(file.as_raw_fd()), len)
            .map_err(|e| format!("cannot map {}: {e}", path.display()))?;
        Device::init(shared, params, pid(), memory_bytes);
        Ok(Device {
            shared,
            len,
            memory_file: Some(memory_file),
            owned_path: Some(path),
            name: Some(name.to_string()),
            view: std::sync::OnceLock::new(),
        })
    }

    /// Attaches to device service `name`'s segment.
    pub fn open(name: &str) -> Result<Device, String> {
        check_name(name)?;
        let path = segment_path(name);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| {
                format!(
                    "device service {name} is not running ({}: {e}); start it with `hipshim device start --name {name}`",
                    path.display()
                )
            })?;
        let len = std::mem::size_of::<Shared>();
        let size = file.metadata().map(|m| m.len()).unwrap_or(0);
        if size < len as u64 {
            return Err(format!(
                "{} is {size} bytes, not a device segment of this version ({len} bytes)",
                path.display()
            ));
        }
        use std::os::fd::AsRawFd;
        let shared = map(Some(file.as_raw_fd()), len)
            .map_err(|e| format!("cannot map {}: {e}", path.display()))?;
        // Absent only if the service is going (it removes the segment first).
        let memory_file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(memory_path(name))
            .ok();
        let device = Device {
            shared,
            len,
            memory_file,
            owned_path: None,
            name: Some(name.to_string()),
            view: std::sync::OnceLock::new(),
        };
        let s = device.block();
        if s.magic.load(Ordering::Acquire) != MAGIC || s.version.load(Ordering::Relaxed) != VERSION
        {
            return Err(format!(
                "{} is not a device segment of this version",
                path.display()
            ));
        }
        Ok(device)
    }

    #[cfg(test)]
    pub(crate) fn block_for_tests(&self) -> &Shared {
        self.block()
    }

    fn block(&self) -> &Shared {
        // SAFETY: mapped for the handle's life; every field but the table is atomic.
        unsafe { &*self.shared }
    }

    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    pub fn service_pid(&self) -> u32 {
        self.block().service_pid.load(Ordering::Relaxed)
    }

    pub fn started_ns(&self) -> u64 {
        self.block().started_ns.load(Ordering::Relaxed)
    }

    /// A private table has no service; a shared one needs its service process alive.
    pub fn service_alive(&self) -> bool {
        let pid = self.service_pid();
        pid == 0 || process_alive(pid)
    }

    pub fn request_stop(&self) {
        self.block().stop.store(1, Ordering::SeqCst);
        self.kick();
    }

    pub fn stop_requested(&self) -> bool {
        self.block().stop.load(Ordering::SeqCst) != 0
    }

    /// The table, locked.
    pub fn lock(&self) -> Locked<'_> {
        Guarded::take(&self.block().table, &self.block().lock)
    }

    /// The device memory's table, locked.
    pub fn memory(&self) -> MemLocked<'_> {
        Guarded::take(&self.block().memory, &self.block().mem_lock)
    }

    /// The device memory's file (absent for a private table).
    pub fn memory_file(&self) -> Option<&std::fs::File> {
        self.memory_file.as_ref()
    }

    /// Gives the pages of `[offset, offset + len)` of the device memory back (they read as
    /// zeroes after, in every process).
    pub fn discard(&self, offset: u64, len: u64) {
        use std::os::fd::AsRawFd;
        let Some(f) = &self.memory_file else { return };
        // SAFETY: punching a hole in our own descriptor's file; no memory is touched.
        let r = unsafe {
            libc::fallocate(
                f.as_raw_fd(),
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                offset as libc::off_t,
                len as libc::off_t,
            )
        };
        if r != 0 {
            eprintln!(
                "hsasim: cannot release device memory pages: {}",
                io::Error::last_os_error()
            );
        }
    }

    /// Signal slot `index`'s memory in this process's mapping.
    pub fn signal_cell(&self, index: usize) -> *mut u8 {
        self.block().signals[index].0.get().cast()
    }

    /// Where the signal slots lie in this process: (first slot's address, bytes).
    pub fn signal_cells(&self) -> (u64, u64) {
        (
            self.block().signals.as_ptr() as u64,
            std::mem::size_of::<[SignalCell; MAX_SIGNALS]>() as u64,
        )
    }

    /// The doorbell cell of runlist entry `index` in this process's mapping.
    pub fn doorbell_cell(&self, index: usize) -> *mut u8 {
        self.block().doorbells[index].0.get().cast()
    }

    /// Where the doorbell cells lie in this process: (first cell's address, bytes).
    pub fn doorbell_cells(&self) -> (u64, u64) {
        (
            self.block().doorbells.as_ptr() as u64,
            std::mem::size_of::<[SignalCell; MAX_QUEUES]>() as u64,
        )
    }

    fn cell_words(cell: &SignalCell) -> &[AtomicU64; 8] {
        // SAFETY: a 64-byte cell of the mapped segment, which every process reads and writes
        // only through atomics.
        unsafe { &*cell.0.get().cast::<[AtomicU64; 8]>() }
    }

    /// The value runlist entry `index`'s producers last stored in its doorbell.
    pub fn doorbell_value(&self, index: usize) -> i64 {
        Self::cell_words(&self.block().doorbells[index])[SIGNAL_VALUE_WORD].load(Ordering::Acquire)
            as i64
    }

    /// Clears the doorbell of a runlist entry that was just freed (under the table's lock,
    /// before anyone can register there again).
    fn clear_doorbell(&self, index: usize) {
        for w in Self::cell_words(&self.block().doorbells[index]) {
            w.store(0, Ordering::Release);
        }
    }

    /// Doorbell cells in use (a kind other than 0, the invalid kind).
    pub fn doorbells_in_use(&self) -> usize {
        self.block()
            .doorbells
            .iter()
            .filter(|c| Self::cell_words(c)[0].load(Ordering::Acquire) != 0)
            .count()
    }

    /// The 8-byte word at device address `addr` (a queue's read or write index), read
    /// through this process's own view of the device memory; `None` outside it.
    pub fn read_device_u64(&self, addr: u64) -> Option<u64> {
        let &(view, len, base) = self
            .view
            .get_or_init(|| {
                use std::os::fd::AsRawFd;
                let file = self.memory_file.as_ref()?;
                let len = file.metadata().ok()?.len() as usize;
                // SAFETY: a fresh read-only shared mapping of the device memory's file; the
                // kernel picks the address.
                let p = unsafe {
                    libc::mmap(
                        std::ptr::null_mut(),
                        len,
                        libc::PROT_READ,
                        libc::MAP_SHARED | libc::MAP_NORESERVE,
                        file.as_raw_fd(),
                        0,
                    )
                };
                let base = self.memory().base;
                (p != libc::MAP_FAILED).then_some((p as usize, len, base))
            })
            .as_ref()?;
        let offset = addr.checked_sub(base)?;
        if !offset.is_multiple_of(8) || offset.checked_add(8)? > len as u64 {
            return None;
        }
        // SAFETY: 8 aligned bytes inside the view, mapped while `self` lives; other
        // processes write them concurrently, so the read is atomic.
        let word = unsafe { AtomicU64::from_ptr((view + offset as usize) as *mut u64) };
        Some(word.load(Ordering::Acquire))
    }

    /// What a queue's descriptor says now: (read index, write index, doorbell), or `None`
    /// for a queue without one.
    pub fn ring_state(&self, index: usize, hqd: &Hqd) -> Option<(u64, u64, i64)> {
        if !hqd.is_shared() {
            return None;
        }
        Some((
            self.read_device_u64(hqd.read_index_addr)?,
            self.read_device_u64(hqd.write_index_addr)?,
            self.doorbell_value(index),
        ))
    }

    /// Process `pid`'s queue `queue_id` at runlist entry `index` leaves the runlist, with its
    /// doorbell (unless the entry is another's by now: the process left the runlist before).
    pub fn unregister_queue(&self, index: usize, pid: u32, queue_id: u64) {
        let mut table = self.lock();
        let q = &table.queues[index];
        if q.used != 0 && q.pid == pid && q.queue_id == queue_id {
            table.unregister_queue(index);
            self.clear_doorbell(index);
        }
    }

    /// Process `pid` leaves the runlist with all its queues and their doorbells. Returns how
    /// many queues it had.
    pub fn remove_process(&self, pid: u32) -> usize {
        let mut table = self.lock();
        let indices = table.remove_process(pid);
        for &i in &indices {
            self.clear_doorbell(i);
        }
        indices.len()
    }

    /// The compute units dispatches share, 0 when not modelled.
    pub fn cu_budget(&self) -> u32 {
        self.block().compute_units.budget.load(Ordering::Relaxed)
    }

    /// Takes up to `want` compute units (at least one) for a dispatch of process `pid`,
    /// sleeping while none is free. `None` when `give_up()` holds while it waits (asked at
    /// least every 10 ms), when the budget is 0 (not modelled), or when more processes than
    /// the table holds take units at once.
    pub fn take_compute_units(
        &self,
        pid: u32,
        want: u32,
        give_up: &dyn Fn() -> bool,
    ) -> Option<CuGrant> {
        let pool = &self.block().compute_units;
        let budget = pool.budget.load(Ordering::Relaxed);
        if budget == 0 {
            return None;
        }
        let holder = pool
            .holders
            .iter()
            .position(|h| h.pid.load(Ordering::Acquire) == pid)
            .or_else(|| {
                pool.holders.iter().position(|h| {
                    h.pid
                        .compare_exchange(0, pid, Ordering::AcqRel, Ordering::Relaxed)
                        .is_ok()
                })
            })?;
        let want = want.clamp(1, budget);
        let mut waited = false;
        loop {
            let used = pool.in_use.load(Ordering::Acquire);
            let free = budget.saturating_sub(used);
            if free > 0 {
                let units = want.min(free);
                if pool
                    .in_use
                    .compare_exchange_weak(used, used + units, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
                {
                    pool.holders[holder].held.fetch_add(units, Ordering::AcqRel);
                    pool.max_in_use.fetch_max(used + units, Ordering::Relaxed);
                    return Some(CuGrant { holder, units });
                }
                continue;
            }
            if !waited {
                waited = true;
                pool.waits.fetch_add(1, Ordering::Relaxed);
            }
            if give_up() {
                return None;
            }
            // Counted in before the last look, so a give-back after it wakes us (it moves
            // the epoch first, then reads the count).
            let seen = pool.epoch.load(Ordering::SeqCst);
            pool.sleepers.fetch_add(1, Ordering::SeqCst);
            if pool.in_use.load(Ordering::SeqCst) >= budget {
                futex_wait(&pool.epoch, seen, Duration::from_millis(10));
            }
            pool.sleepers.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Gives back the units of a dispatch that ended.
    pub fn give_back_compute_units(&self, grant: CuGrant) {
        let pool = &self.block().compute_units;
        pool.holders[grant.holder]
            .held
            .fetch_sub(grant.units, Ordering::AcqRel);
        pool.in_use.fetch_sub(grant.units, Ordering::SeqCst);
        Self::units_returned(pool);
    }

    fn units_returned(pool: &CuPool) {
        pool.epoch.fetch_add(1, Ordering::SeqCst);
        if pool.sleepers.load(Ordering::SeqCst) != 0 {
            futex_wake_all(&pool.epoch);
        }
    }

    /// Process `pid` holds no units any more (it shut down, or died): its entry goes, and
    /// whatever it still held returns to the budget. Returns the units taken back.
    pub fn release_compute_units_of(&self, pid: u32) -> u32 {
        let pool = &self.block().compute_units;
        let Some(h) = pool
            .holders
            .iter()
            .find(|h| h.pid.load(Ordering::Acquire) == pid && pid != 0)
        else {
            return 0;
        };
        let held = h.held.swap(0, Ordering::AcqRel);
        h.pid.store(0, Ordering::Release);
        if held > 0 {
            pool.in_use.fetch_sub(held, Ordering::SeqCst);
            Self::units_returned(pool);
        }
        held
    }

    pub fn cu_status(&self) -> CuStatus {
        let pool = &self.block().compute_units;
        CuStatus {
            budget: pool.budget.load(Ordering::Relaxed),
            in_use: pool.in_use.load(Ordering::Acquire),
            max_in_use: pool.max_in_use.load(Ordering::Relaxed),
            waits: pool.waits.load(Ordering::Relaxed),
            reaped: pool.reaped.load(Ordering::Relaxed),
        }
    }

    /// Clears a freed signal slot (under the memory lock, before anyone can take it again).
    fn clear_signal(&self, index: usize) {
        // SAFETY: a slot of our mapping whose last holder just let go; zeroed through atomics
        // as its users read it.
        let words = unsafe { &*self.signal_cell(index).cast::<[AtomicU64; 8]>() };
        for w in words {
            w.store(0, Ordering::Release);
        }
    }

    /// Process `pid` drops a reference to signal `index` (see [`MemTable::release_signal`]).
    pub fn release_signal(&self, index: usize, pid: u32, creator: bool) {
        let mut table = self.memory();
        if table.release_signal(index, pid, creator) {
            self.clear_signal(index);
        }
    }

    pub fn signal_epoch(&self) -> &AtomicU32 {
        &self.block().signal_epoch
    }

    /// An IPC signal changed: wakes the processes sleeping on the epoch.
    pub fn signal_changed(&self) {
        let e = &self.block().signal_epoch;
        e.fetch_add(1, Ordering::SeqCst);
        futex_wake_all(e);
    }

    /// Sleeps until an IPC signal changes after `seen` or `timeout` passes.
    pub fn wait_signal_change(&self, seen: u32, timeout: Duration) {
        futex_wait(&self.block().signal_epoch, seen, timeout);
    }

    /// Everything a dead process `pid` held goes: its memory and its references to IPC
    /// signals. Returns the bytes freed.
    pub fn release_process(&self, pid: u32) -> u64 {
        {
            let mut table = self.memory();
            for index in table.release_signals_of(pid) {
                self.clear_signal(index);
            }
        }
        self.release_memory_of(pid)
    }

    /// Everything process `pid` holds in the device memory goes (a runtime shutting down:
    /// its signals go as its `Signal`s drop). Returns the bytes freed.
    pub fn release_memory_of(&self, pid: u32) -> u64 {
        let mut table = self.memory();
        let released = table.release_process(pid);
        // Under the lock, so that no one allocates the range before its old pages are gone.
        for &(offset, len) in &released {
            self.discard(offset, len);
        }
        released.iter().map(|r| r.1).sum()
    }

    pub fn generation(&self) -> u32 {
        self.block().generation.load(Ordering::Acquire)
    }

    /// Tells slot waiters that the mapping changed.
    pub fn publish(&self) {
        let g = &self.block().generation;
        g.fetch_add(1, Ordering::Release);
        futex_wake_all(g);
    }

    /// Sleeps until the mapping changes after `seen` or `timeout` passes.
    pub fn wait_change(&self, seen: u32, timeout: Duration) {
        futex_wait(&self.block().generation, seen, timeout);
    }

    /// Asks the scheduler to look now.
    pub fn kick(&self) {
        let k = &self.block().kick;
        k.fetch_add(1, Ordering::Release);
        futex_wake_all(k);
    }

    pub fn kicks(&self) -> u32 {
        self.block().kick.load(Ordering::Acquire)
    }

    /// The scheduler's sleep: until kicked after `seen` or `timeout` passes.
    pub fn wait_kick(&self, seen: u32, timeout: Duration) {
        futex_wait(&self.block().kick, seen, timeout);
    }

    /// One scheduler step at `now`: runs the model, removes processes that died (when
    /// `reap`), and wakes slot waiters if anything changed. Returns the events and the time
    /// of the next deadline.
    pub fn step(&self, now: u64, reap: bool) -> (Vec<Event>, Option<u64>) {
        let mut events = Vec::new();
        let mut table = self.lock();
        let mut reaped = false;
        if reap {
            for pid in table.live_pids() {
                if !process_alive(pid) {
                    let indices = table.remove_process(pid);
                    for &i in &indices {
                        self.clear_doorbell(i);
                    }
                    table.counters.processes_reaped += 1;
                    table.counters.queues_reaped += indices.len() as u64;
                    reaped = true;
                }
            }
            let holders = self.memory().holders();
            for pid in holders {
                if !process_alive(pid) {
                    self.release_process(pid);
                }
            }
            let pool = &self.block().compute_units;
            for h in &pool.holders {
                let pid = h.pid.load(Ordering::Acquire);
                if pid != 0 && !process_alive(pid) {
                    let held = self.release_compute_units_of(pid);
                    pool.reaped.fetch_add(u64::from(held), Ordering::Relaxed);
                }
            }
        }
        // Which queues have work, from their rings and doorbells (queues of a device
        // service; a private table has no descriptors).
        for i in 0..MAX_QUEUES {
            let q = &table.queues[i];
            if q.used == 0 || !q.hqd.is_shared() {
                continue;
            }
            if let Some((read, write, doorbell)) = self.ring_state(i, &q.hqd) {
                table.observe_ring(i, ring_has_work(read, write, doorbell), now);
            }
        }
        let (changed, next) = table.tick(now, &mut events);
        drop(table);
        if changed || reaped {
            self.publish();
        }
        (events, next)
    }

    /// The scheduler thread's loop: steps at every deadline and kick until `stop()` holds
    /// (checked at least every 100 ms, when dead processes are also looked for). `sink`
    /// receives the events.
    pub fn run(&self, reap: bool, stop: &dyn Fn() -> bool, sink: &mut dyn FnMut(&[Event])) {
        let mut last_reap = 0;
        while !stop() {
            let seen = self.kicks();
            let now = now_ns();
            let do_reap = reap && now.saturating_sub(last_reap) >= 100_000_000;
            if do_reap {
                last_reap = now;
            }
            let (events, next) = self.step(now, do_reap);
            if !events.is_empty() {
                sink(&events);
            }
            let cap = 100_000_000;
            let wait = next.map_or(cap, |t| t.saturating_sub(now_ns()).min(cap));
            if wait > 0 {
                self.wait_kick(seen, Duration::from_nanos(wait));
            }
        }
    }
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device")
            .field("name", &self.name)
            .field("service_pid", &self.service_pid())
            .finish()
    }
}

/// A table of the shared segment under its lock word: the scheduler's table ([`Locked`]) or
/// the device memory's ([`MemLocked`]), each with a lock of its own.
pub struct Guarded<'a, T> {
    table: &'a UnsafeCell<T>,
    lock: &'a AtomicU32,
}

/// The table under the device's lock.
pub type Locked<'a> = Guarded<'a, Table>;
/// The device memory's table under its lock.
pub type MemLocked<'a> = Guarded<'a, MemTable>;

impl<'a, T> Guarded<'a, T> {
    /// Takes `lock` (see `lock_word`) and guards `table` until dropped.
    fn take(table: &'a UnsafeCell<T>, lock: &'a AtomicU32) -> Self {
        lock_word(lock);
        Guarded { table, lock }
    }
}

impl<T> Deref for Guarded<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: we hold the table's lock, so no one else accesses the table.
        unsafe { &*self.table.get() }
    }
}

impl<T> DerefMut for Guarded<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as for `deref`.
        unsafe { &mut *self.table.get() }
    }
}

impl<T> Drop for Guarded<'_, T> {
    fn drop(&mut self) {
        self.lock.store(0, Ordering::Release);
    }
}

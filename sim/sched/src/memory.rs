//! The device memory of a shared device: one sparse file (`/dev/shm/hsasim-device-NAME.mem`)
//! that every attached process maps at the same address ([`MemTable::base`]), and the table
//! of allocations in it, which lives in the device segment under a lock of its own.
//!
//! The table is plain data (no pointers), zeroed in a fresh segment: a sorted array of
//! allocations (first fit over the gaps between them) and an unordered array of
//! attachments (another process's `hsa_amd_ipc_memory_attach` of an allocation). Each
//! allocation records its owner's pid, so the device service frees what a dead process held;
//! an allocation freed by its owner while attached elsewhere stays until its last
//! attachment goes (as ROCr keeps exported memory alive for its importers). The runtime's
//! AQL queues (their `amd_queue_t` block and ring) are allocations too, of their own
//! [`Use`], counted apart and never exported.

/// Allocations are whole pages, as the GPU maps them.
pub const GRANULE: u64 = 4096;

/// Allocations the table holds at once, all processes together.
pub const MAX_ALLOCATIONS: usize = 4096;

/// IPC attachments the table holds at once.
pub const MAX_ATTACHMENTS: usize = 1024;

/// Where the service puts device memory: above where Linux puts a PIE program and its heap
/// (around 0x5555_5555_0000) and below where it starts mappings (just under the stack, from
/// 0x7f00_0000_0000 at the lowest with ASLR), so that the range is free in every process.
pub const DEFAULT_BASE: u64 = 0x6000_0000_0000;

/// The device memory's default size: the 16 GiB hsasim's GPU reports (`HSASIM_MEM_GB`).
pub const DEFAULT_SIZE: u64 = 16 << 30;

/// Signals in the segment (`hsa_amd_signal_create` with the IPC attribute), all processes
/// together.
pub const MAX_SIGNALS: usize = 256;

/// Attachments of one signal at once (besides its creator).
pub const SIGNAL_HOLDERS: usize = 7;

/// The bookkeeping of one signal slot of the segment (the slot itself, the signal's memory,
/// is [`crate::device::SignalCell`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SignalEntry {
    /// 0 while the slot is free.
    pub serial: u64,
    /// The creating process, while it holds the signal (IPC handles of it attach only
    /// then); 0 after.
    pub creator: u32,
    /// A pid per attachment (0: none).
    pub holders: [u32; SIGNAL_HOLDERS],
}

/// What an allocation holds.
#[repr(u32)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Use {
    /// Memory a program allocated (`hsa_amd_memory_pool_allocate`, `hipMalloc`).
    #[default]
    Memory = 0,
    /// An AQL queue's `amd_queue_t` block and ring: the runtime's, never exported.
    Queue = 1,
}

/// One allocation: `[offset, offset + len)` of the device memory.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Allocation {
    pub offset: u64,
    pub len: u64,
    /// Unique over the device's life (IPC handles carry it, so a handle of freed memory
    /// does not attach to whatever took its place).
    pub serial: u64,
    /// The allocating process; 0 once it freed the allocation (kept for attachments).
    pub owner: u32,
    pub attachments: u32,
    /// A [`Use`] (a plain integer in the segment, which any process writes).
    use_code: u32,
    pub reserved: u32,
}

impl Allocation {
    pub fn used_for(&self) -> Use {
        if self.use_code == Use::Queue as u32 {
            Use::Queue
        } else {
            Use::Memory
        }
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct Attachment {
    serial: u64,
    pid: u32,
    /// Times this process attached it (each detach gives one back).
    count: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemCounters {
    pub allocations: u64,
    pub frees: u64,
    /// Allocations the service freed because their process died.
    pub reaped: u64,
    pub reaped_bytes: u64,
    /// Requests refused for want of memory or of table entries.
    pub refused: u64,
    pub attaches: u64,
    /// The same four for queue memory ([`Use::Queue`]), which the ones above leave out.
    pub queue_allocations: u64,
    pub queue_frees: u64,
    pub queue_reaped: u64,
    pub queue_reaped_bytes: u64,
}

#[repr(C)]
pub struct MemTable {
    /// The address every process maps the device memory at.
    pub base: u64,
    /// Bytes of device memory (0: the device has none, a private scheduler's table).
    pub size: u64,
    /// Bytes allocated, all processes together.
    pub used: u64,
    pub counters: MemCounters,
    next_serial: u64,
    count: u32,
    attach_count: u32,
    allocations: [Allocation; MAX_ALLOCATIONS],
    attached: [Attachment; MAX_ATTACHMENTS],
    pub signals: [SignalEntry; MAX_SIGNALS],
}

/// Why a request failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemError {
    /// No gap of the size is left.
    OutOfMemory,
    /// The allocation or attachment table is full.
    TableFull,
    /// No allocation starts at that offset (or it is not the one the handle named).
    NotFound,
    /// The allocation belongs to another process, or this one has not attached it.
    NotYours,
}

impl std::fmt::Display for MemError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            MemError::OutOfMemory => "the device memory is exhausted",
            MemError::TableFull => "the device's allocation table is full",
            MemError::NotFound => "no such allocation",
            MemError::NotYours => "the allocation is not this process's",
        })
    }
}

/// A range whose pages can go (the caller punches a hole there, which also zeroes it).
pub type Released = Option<(u64, u64)>;

impl MemTable {
    /// Makes a zeroed table (as a fresh mapping is) ready for `size` bytes at `base`.
    pub fn init(&mut self, base: u64, size: u64) {
        self.base = base;
        self.size = size / GRANULE * GRANULE;
        self.used = 0;
        self.counters = MemCounters::default();
        self.next_serial = 1;
        self.count = 0;
        self.attach_count = 0;
    }

    pub fn allocations(&self) -> &[Allocation] {
        &self.allocations[..self.count as usize]
    }

    /// Allocates `len` bytes (rounded up to whole pages) for process `pid`, first fit.
    pub fn allocate(&mut self, len: u64, pid: u32) -> Result<Allocation, MemError> {
        self.allocate_for(len, pid, Use::Memory)
    }

    /// [`MemTable::allocate`] of memory for `used_for`.
    pub fn allocate_for(
        &mut self,
        len: u64,
        pid: u32,
        used_for: Use,
    ) -> Result<Allocation, MemError> {
        let Some(len) = len
            .max(1)
            .checked_next_multiple_of(GRANULE)
            .filter(|&l| l <= self.size)
        else {
            self.counters.refused += 1;
            return Err(MemError::OutOfMemory);
        };
        let n = self.count as usize;
        if n == MAX_ALLOCATIONS {
            self.counters.refused += 1;
            return Err(MemError::TableFull);
        }
        let mut at = 0u64;
        let mut index = n;
        for (i, a) in self.allocations[..n].iter().enumerate() {
            if a.offset - at >= len {
                index = i;
                break;
            }
            at = a.offset + a.len;
        }
        if index == n && self.size - at < len {
            self.counters.refused += 1;
            return Err(MemError::OutOfMemory);
        }
        let a = Allocation {
            offset: at,
            len,
            serial: self.next_serial,
            owner: pid,
            attachments: 0,
            use_code: used_for as u32,
            reserved: 0,
        };
        self.next_serial += 1;
        self.allocations.copy_within(index..n, index + 1);
        self.allocations[index] = a;
        self.count += 1;
        self.used += len;
        match used_for {
            Use::Memory => self.counters.allocations += 1,
            Use::Queue => self.counters.queue_allocations += 1,
        }
        Ok(a)
    }

    fn index_of(&self, offset: u64) -> Option<usize> {
        self.allocations()
            .binary_search_by_key(&offset, |a| a.offset)
            .ok()
    }

    /// The allocation starting at `offset`.
    pub fn get(&self, offset: u64) -> Option<Allocation> {
        self.index_of(offset).map(|i| self.allocations[i])
    }

    fn remove(&mut self, index: usize) -> Released {
        let a = self.allocations[index];
        let n = self.count as usize;
        self.allocations.copy_within(index + 1..n, index);
        self.count -= 1;
        self.used -= a.len;
        Some((a.offset, a.len))
    }

    /// Process `pid` frees its allocation at `offset`. The memory goes at once unless another
    /// process has it attached.
    pub fn free(&mut self, offset: u64, pid: u32) -> Result<Released, MemError> {
        let i = self.index_of(offset).ok_or(MemError::NotFound)?;
        if self.allocations[i].owner != pid {
            return Err(MemError::NotYours);
        }
        match self.allocations[i].used_for() {
            Use::Memory => self.counters.frees += 1,
            Use::Queue => self.counters.queue_frees += 1,
        }
        if self.allocations[i].attachments > 0 {
            self.allocations[i].owner = 0;
            return Ok(None);
        }
        Ok(self.remove(i))
    }

    /// Process `pid` attaches the allocation at `offset`, which must still be the one of
    /// `serial`.
    pub fn attach(&mut self, offset: u64, serial: u64, pid: u32) -> Result<Allocation, MemError> {
        let i = self
            .index_of(offset)
            .filter(|&i| {
                let a = &self.allocations[i];
                a.serial == serial && a.owner != 0 && a.used_for() == Use::Memory
            })
            .ok_or(MemError::NotFound)?;
        let live = self.attach_count as usize;
        if let Some(t) = self.attached[..live]
            .iter_mut()
            .find(|t| t.serial == serial && t.pid == pid)
        {
            t.count += 1;
        } else {
            if live == MAX_ATTACHMENTS {
                return Err(MemError::TableFull);
            }
            self.attached[live] = Attachment {
                serial,
                pid,
                count: 1,
            };
            self.attach_count += 1;
            self.allocations[i].attachments += 1;
        }
        self.counters.attaches += 1;
        Ok(self.allocations[i])
    }

    /// Process `pid` gives back one attachment of the allocation at `offset`.
    pub fn detach(&mut self, offset: u64, pid: u32) -> Result<Released, MemError> {
        let i = self.index_of(offset).ok_or(MemError::NotFound)?;
        let serial = self.allocations[i].serial;
        let live = self.attach_count as usize;
        let t = self.attached[..live]
            .iter()
            .position(|t| t.serial == serial && t.pid == pid)
            .ok_or(MemError::NotYours)?;
        self.attached[t].count -= 1;
        if self.attached[t].count > 0 {
            return Ok(None);
        }
        Ok(self.drop_attachment(t, i))
    }

    fn drop_attachment(&mut self, t: usize, i: usize) -> Released {
        let live = self.attach_count as usize;
        self.attached.swap(t, live - 1);
        self.attach_count -= 1;
        let a = &mut self.allocations[i];
        a.attachments -= 1;
        if a.attachments == 0 && a.owner == 0 {
            return self.remove(i);
        }
        None
    }

    /// A free signal slot for process `pid`: (index, serial).
    pub fn create_signal(&mut self, pid: u32) -> Result<(usize, u64), MemError> {
        let i = self
            .signals
            .iter()
            .position(|s| s.serial == 0)
            .ok_or(MemError::TableFull)?;
        let serial = self.next_serial;
        self.next_serial += 1;
        self.signals[i] = SignalEntry {
            serial,
            creator: pid,
            holders: [0; SIGNAL_HOLDERS],
        };
        Ok((i, serial))
    }

    /// Process `pid` takes a reference to signal `index`, which must still be the one of
    /// `serial` and held by its creator.
    pub fn attach_signal(&mut self, index: usize, serial: u64, pid: u32) -> Result<(), MemError> {
        let s = self
            .signals
            .get_mut(index)
            .filter(|s| s.serial == serial && serial != 0 && s.creator != 0)
            .ok_or(MemError::NotFound)?;
        let free = s
            .holders
            .iter_mut()
            .find(|h| **h == 0)
            .ok_or(MemError::TableFull)?;
        *free = pid;
        Ok(())
    }

    /// Process `pid` drops a reference to signal `index` (`creator`: the one it created it
    /// with). True when that was the last one: the slot is free again.
    pub fn release_signal(&mut self, index: usize, pid: u32, creator: bool) -> bool {
        let Some(s) = self.signals.get_mut(index).filter(|s| s.serial != 0) else {
            return false;
        };
        if creator {
            if s.creator == pid {
                s.creator = 0;
            }
        } else if let Some(h) = s.holders.iter_mut().find(|h| **h == pid) {
            *h = 0;
        }
        if s.creator == 0 && s.holders.iter().all(|&h| h == 0) {
            *s = SignalEntry::default();
            return true;
        }
        false
    }

    /// Every reference process `pid` holds to signals goes; returns the slots freed.
    pub fn release_signals_of(&mut self, pid: u32) -> Vec<usize> {
        let mut freed = Vec::new();
        for i in 0..MAX_SIGNALS {
            let s = self.signals[i];
            if s.serial == 0 {
                continue;
            }
            let attached = s.holders.iter().filter(|&&h| h == pid).count();
            let refs = (0..attached)
                .map(|_| false)
                .chain((s.creator == pid).then_some(true));
            for creator in refs.collect::<Vec<_>>() {
                if self.release_signal(i, pid, creator) {
                    freed.push(i);
                }
            }
        }
        freed
    }

    /// Queue memory in use, all processes together: (allocations, bytes).
    pub fn queue_memory(&self) -> (usize, u64) {
        self.allocations()
            .iter()
            .filter(|a| a.used_for() == Use::Queue)
            .fold((0, 0), |(n, b), a| (n + 1, b + a.len))
    }

    /// The pids that hold allocations, attachments or signals.
    pub fn holders(&self) -> Vec<u32> {
        let mut pids: Vec<u32> = self
            .allocations()
            .iter()
            .map(|a| a.owner)
            .chain(
                self.attached[..self.attach_count as usize]
                    .iter()
                    .map(|t| t.pid),
            )
            .chain(
                self.signals
                    .iter()
                    .flat_map(|s| s.holders.into_iter().chain([s.creator])),
            )
            .filter(|&p| p != 0)
            .collect();
        pids.sort_unstable();
        pids.dedup();
        pids
    }

    /// Everything process `pid` held goes (it died, or shut its runtime down): its
    /// attachments, then its allocations (those still attached elsewhere stay, ownerless).
    /// Returns the ranges whose pages can go.
    pub fn release_process(&mut self, pid: u32) -> Vec<(u64, u64)> {
        let mut released = Vec::new();
        let mut t = 0;
        while t < self.attach_count as usize {
            if self.attached[t].pid != pid {
                t += 1;
                continue;
            }
            let serial = self.attached[t].serial;
            let i = self
                .allocations()
                .iter()
                .position(|a| a.serial == serial)
                .expect("an attachment names a live allocation");
            released.extend(self.drop_attachment(t, i));
        }
        let mut i = 0;
        while i < self.count as usize {
            let a = self.allocations[i];
            if a.owner != pid {
                i += 1;
                continue;
            }
            match a.used_for() {
                Use::Memory => {
                    self.counters.reaped += 1;
                    self.counters.reaped_bytes += a.len;
                }
                Use::Queue => {
                    self.counters.queue_reaped += 1;
                    self.counters.queue_reaped_bytes += a.len;
                }
            }
            if a.attachments > 0 {
                self.allocations[i].owner = 0;
                i += 1;
            } else {
                released.extend(self.remove(i));
            }
        }
        released
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(size: u64) -> Box<MemTable> {
        // SAFETY: MemTable is plain integers, for which all zeroes is valid (a fresh mapping).
        let mut t: Box<MemTable> = unsafe { Box::new_zeroed().assume_init() };
        t.init(DEFAULT_BASE, size);
        t
    }

    #[test]
    fn first_fit_reuses_gaps_and_refuses_what_does_not_fit() {
        let mut t = table(8 * GRANULE);
        let a = t.allocate(1, 10).unwrap();
        let b = t.allocate(3 * GRANULE, 10).unwrap();
        let c = t.allocate(GRANULE, 11).unwrap();
        assert_eq!((a.offset, b.offset, c.offset), (0, GRANULE, 4 * GRANULE));
        assert_eq!(t.used, 5 * GRANULE);
        assert_eq!(t.allocate(4 * GRANULE, 10), Err(MemError::OutOfMemory));
        assert_eq!(t.free(b.offset, 11), Err(MemError::NotYours));
        assert_eq!(t.free(b.offset, 10), Ok(Some((GRANULE, 3 * GRANULE))));
        let d = t.allocate(2 * GRANULE, 12).unwrap();
        assert_eq!(d.offset, GRANULE, "first fit");
        assert!(d.serial > c.serial);
        assert_eq!(t.free(7, 12), Err(MemError::NotFound));
        let offsets: Vec<u64> = t.allocations().iter().map(|a| a.offset).collect();
        assert_eq!(offsets, [0, GRANULE, 4 * GRANULE]);
    }

    #[test]
    fn a_dead_process_loses_its_memory_but_attached_memory_stays_until_detached() {
        let mut t = table(16 * GRANULE);
        let a = t.allocate(2 * GRANULE, 10).unwrap();
        let b = t.allocate(GRANULE, 10).unwrap();
        let c = t.allocate(GRANULE, 20).unwrap();
        assert_eq!(
            t.attach(b.offset, b.serial + 100, 20),
            Err(MemError::NotFound)
        );
        t.attach(b.offset, b.serial, 20).unwrap();
        t.attach(b.offset, b.serial, 20).unwrap();
        assert_eq!(t.holders(), [10, 20]);
        let released = t.release_process(10);
        assert_eq!(released, [(a.offset, a.len)]);
        assert_eq!(t.counters.reaped, 2);
        assert_eq!(t.used, 2 * GRANULE, "b stays for its importer, c is 20's");
        assert_eq!(t.detach(b.offset, 20), Ok(None), "attached twice");
        assert_eq!(t.detach(b.offset, 20), Ok(Some((b.offset, b.len))));
        assert_eq!(t.detach(b.offset, 20), Err(MemError::NotFound));
        assert_eq!(t.release_process(20), [(c.offset, c.len)]);
        assert_eq!((t.used, t.allocations().len()), (0, 0));
    }

    #[test]
    fn a_signal_lives_while_its_creator_or_an_attacher_holds_it() {
        let mut t = table(GRANULE);
        let (i, serial) = t.create_signal(10).unwrap();
        t.attach_signal(i, serial, 20).unwrap();
        assert_eq!(t.attach_signal(i, serial + 1, 20), Err(MemError::NotFound));
        assert!(!t.release_signal(i, 10, true), "20 still has it");
        assert_eq!(
            t.attach_signal(i, serial, 30),
            Err(MemError::NotFound),
            "its creator let it go"
        );
        assert_eq!(t.holders(), [20]);
        assert_eq!(t.release_signals_of(20), [i]);
        assert_eq!(t.signals[i], SignalEntry::default());
        let (j, again) = t.create_signal(10).unwrap();
        assert_eq!(j, i, "the slot is reused");
        assert!(again > serial);
        assert_eq!(t.release_signals_of(10), [i]);
    }

    #[test]
    fn an_owner_free_of_attached_memory_waits_for_the_importer_to_die() {
        let mut t = table(4 * GRANULE);
        let a = t.allocate(GRANULE, 10).unwrap();
        t.attach(a.offset, a.serial, 20).unwrap();
        assert_eq!(t.free(a.offset, 10), Ok(None));
        assert_eq!(
            t.attach(a.offset, a.serial, 30),
            Err(MemError::NotFound),
            "freed memory takes no new importers"
        );
        assert_eq!(t.release_process(20), [(a.offset, a.len)]);
        assert_eq!(t.used, 0);
    }
}

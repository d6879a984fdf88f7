//! Memory: pools, allocations and the registry of device-accessible ranges.
//!
//! Device addresses are host addresses, with two exceptions that make hsasim behave like a
//! discrete GPU: under `HSASIM_STRICT`, host memory locked with `hsa_amd_memory_lock` gets
//! an agent address of its own and the device faults on the host pointer; and without
//! `HSASIM_LARGE_BAR` (the strict default) a GPU's own memory lives at an address the CPU
//! cannot touch, while hsasim reaches its bytes through a second, private mapping
//! ([`Region::host`]). Every allocation is backed by an
//! anonymous host mapping (`MAP_NORESERVE`, so a 16 GiB device costs nothing until touched;
//! system-memory pools' allocations have their first MiB populated when made, as ROCr pins
//! them, so a kernarg ring's first touches are not page faults), and every range the simulated GPU may touch is recorded in [`MemoryRegistry`], which is
//! what the interpreter's [`GuestMemory`] translates with and what `hsa_amd_pointer_info`
//! answers from.

use crate::error::{HsaError, HsaResult};
use crate::host_map::{
    host_range_mapped, map_anon, map_anon_backed_prefix, reserve_unmapped, round_up, unmap, PAGE,
};
use hsa_abi::hsa_agent_t;
use hsasim_isa::{GuestMemory, Span};
use parking_lot::{Mutex, RwLock};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolKind {
    /// A GPU's coarse-grained global memory.
    Device,
    /// The CPU's fine-grained system memory.
    System,
    /// The CPU's fine-grained, kernarg-capable memory.
    Kernarg,
    /// The CPU's coarse-grained system memory (ROCr lists it third on the CPU agent; AMD's
    /// HIP runtime uses it for pinned host buffers that need no coherence).
    SystemCoarse,
    /// A GPU's group segment (LDS): reported with its size so clients learn the LDS
    /// capacity, as ROCr does; not allocatable.
    Group,
}

/// LDS bytes available to one workgroup on gfx90a and gfx942.
pub const GROUP_SEGMENT_BYTES: u64 = 64 << 10;

pub struct Pool {
    pub kind: PoolKind,
    /// The agent this pool belongs to.
    pub owner: hsa_agent_t,
    pub size: u64,
    /// Bytes of this process's allocations the pool accounts itself (all of them, unless
    /// `shared`).
    used: Mutex<u64>,
    /// A device service's device memory, which this GPU pool allocates from
    /// ([`crate::device_memory`]); it keeps the account of every process's allocations.
    pub shared: Option<std::sync::Arc<crate::device_memory::SharedVram>>,
}

impl Pool {
    pub fn new(kind: PoolKind, owner: hsa_agent_t, size: u64) -> Self {
        Pool {
            kind,
            owner,
            size,
            used: Mutex::new(0),
            shared: None,
        }
    }
    /// A GPU pool over a device service's device memory.
    pub fn shared(
        owner: hsa_agent_t,
        vram: std::sync::Arc<crate::device_memory::SharedVram>,
    ) -> Self {
        Pool {
            size: vram.size(),
            shared: Some(vram),
            ..Pool::new(PoolKind::Device, owner, 0)
        }
    }
    /// Bytes allocated (with a device service: by every attached process).
    pub fn used(&self) -> u64 {
        *self.used.lock() + self.shared.as_ref().map_or(0, |s| s.used())
    }
    pub fn global_flags(&self) -> u32 {
        use hsa_abi::*;
        match self.kind {
            PoolKind::Device | PoolKind::SystemCoarse => {
                HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED
            }
            PoolKind::System => HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED,
            PoolKind::Kernarg => {
                HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED
                    | HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT
            }
            PoolKind::Group => 0,
        }
    }
    /// Memory that lives on a GPU (device memory and LDS), as opposed to system memory.
    pub fn on_gpu(&self) -> bool {
        matches!(self.kind, PoolKind::Device | PoolKind::Group)
    }
    /// `hsa_amd_segment_t`.
    pub fn segment(&self) -> u32 {
        if self.kind == PoolKind::Group {
            hsa_abi::HSA_AMD_SEGMENT_GROUP
        } else {
            hsa_abi::HSA_AMD_SEGMENT_GLOBAL
        }
    }
    pub fn alloc_allowed(&self) -> bool {
        self.kind != PoolKind::Group
    }
    /// Reserves `bytes` of the pool's capacity; fails with OUT_OF_RESOURCES past the size.
    pub(crate) fn reserve(&self, bytes: u64) -> HsaResult {
        let others = self.shared.as_ref().map_or(0, |s| s.used());
        let mut used = self.used.lock();
        match used.checked_add(bytes) {
            Some(n) if n.saturating_add(others) <= self.size => {
                *used = n;
                Ok(())
            }
            _ => Err(HsaError::OUT_OF_RESOURCES),
        }
    }
    pub(crate) fn release(&self, bytes: u64) {
        let mut used = self.used.lock();
        *used = used.saturating_sub(bytes);
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegionKind {
    /// From `hsa_amd_memory_pool_allocate`; `pool` is the pool handle. `peers` is `Some` for
    /// a GPU's own memory, which other GPUs reach only once `hsa_amd_agents_allow_access`
    /// grants it (ROCr's DISALLOWED_BY_DEFAULT): a bit per granted agent's node
    /// ([`node_bit`]). `None` for system memory, which every agent reaches.
    PoolAllocation { pool: u64, peers: Option<u64> },
    /// Host memory made device-accessible by `hsa_amd_memory_lock(_to_pool)`, at its agent
    /// address (the host address itself unless strict).
    Locked,
    /// Under `HSASIM_STRICT`, the host side of a lock whose agent address differs: found by
    /// `hsa_amd_pointer_info` and `hsa_amd_memory_unlock`, but the device may not touch it.
    LockedHost { agent_address: u64 },
    /// Host memory registered with `hsa_memory_register`.
    Registered,
    /// A loaded code object's segments.
    CodeObject,
    /// Runtime-owned memory the device reads: queue rings and `amd_queue_t` blocks.
    Internal,
    /// Host memory a GPU was given access to through `hsa_amd_svm_attributes_set`.
    Svm,
    /// One mapping of a physical allocation into a reserved virtual range
    /// (`hsa_amd_vmem_map`, see [`crate::vmem`]): `handle` is the physical allocation;
    /// `access` has a bit per agent node ([`node_bit`]) that `hsa_amd_vmem_set_access`
    /// granted any access, the owner included (nothing is reachable before that, as in ROCr).
    Vmem { handle: u64, access: u64 },
    /// Another process's exported allocation, attached by `hsa_amd_ipc_memory_attach`
    /// ([`crate::ipc`]).
    IpcAttached,
}

#[derive(Clone, Copy, Debug)]
pub struct Region {
    /// The first byte's address as the device uses it.
    pub start: u64,
    /// Where hsasim finds that byte: `start`, except for strict-mode locks (the program's
    /// host pointer) and device memory the CPU may not reach (hsasim's private view).
    pub host: u64,
    pub len: u64,
    pub kind: RegionKind,
    pub owner: hsa_agent_t,
    pub global_flags: u32,
    pub user_data: u64,
    /// Bytes actually mapped (allocation sizes are rounded up to the page granule).
    pub mapped_len: u64,
}

impl Region {
    fn contains(&self, addr: u64, len: u64) -> bool {
        addr >= self.start
            && addr
                .checked_add(len)
                .is_some_and(|end| end <= self.start + self.len)
    }

    /// What the GPU can touch: whole pages, as the hardware maps them. A kernel may read
    /// past the end of a 28-byte kernarg block within its page (scalar loads fetch 16 or
    /// 32 bytes at a time) without faulting, exactly as on a real device.
    fn page_contains(&self, addr: u64, len: u64) -> bool {
        let (first, end) = self.page_span();
        addr >= first && addr.checked_add(len).is_some_and(|e| e <= end)
    }

    /// The pages the GPU can touch, `[first, end)`.
    fn page_span(&self) -> (u64, u64) {
        let first = self.start / PAGE * PAGE;
        let end = round_up(self.start + self.len.max(self.mapped_len), PAGE).unwrap_or(u64::MAX);
        (first, end)
    }
}

/// Ranges may overlap (a buffer can be locked twice, or registered and locked), so they are
/// keyed by (start, sequence number); lookups scan backwards from the address and stop once
/// no region could reach it (tracked through the longest region ever added).
#[derive(Default)]
pub struct MemoryRegistry {
    regions: RwLock<BTreeMap<(u64, u64), Region>>,
    next_seq: AtomicU64,
    longest: AtomicU64,
    /// Bytes of the agent-address window handed out to strict-mode locks so far.
    agent_window_used: AtomicU64,
    /// Moves after every change of what the GPU may reach (the interpreter's
    /// [`GuestMemory::generation`]: it keeps translations while this holds its value). On a
    /// cache line of its own: every access of every worker thread reads it, and the lock
    /// word next to it is written by every lookup.
    generation: Generation,
    /// What a wave's interrupt does (see [`GuestMemory::interrupt`] below): installed by the
    /// runtime, which knows who waits; a registry without one ignores interrupts.
    interrupt_hook: std::sync::OnceLock<InterruptHook>,
}

/// Runs when a wave raises an interrupt (`s_sendmsg` interrupt), with its data word.
pub type InterruptHook = fn(u32);

#[derive(Default)]
#[repr(align(128))]
struct Generation(AtomicU64);

/// Regions a span lookup looks at past the one it found before it gives up narrowing the
/// span to exclude the others (and answers for the access alone).
const SPAN_SCAN_LIMIT: usize = 32;

/// Agent addresses of strict-mode locks lie in this window: above every host user address
/// (x86-64 user space ends at 2^47), so a host pointer never reaches locked memory on the
/// device and an agent address touched by the CPU faults; below the interpreter's LDS and
/// private windows. Addresses are handed out once and never reused.
pub const AGENT_WINDOW: std::ops::Range<u64> = 0x8000_0000_0000..0xa000_0000_0000;

impl MemoryRegistry {
    /// Sets what a wave's interrupt does (the first call wins).
    pub fn set_interrupt_hook(&self, hook: InterruptHook) {
        let _ = self.interrupt_hook.set(hook);
    }

    pub fn add(&self, region: Region) -> (u64, u64) {
        let key = (region.start, self.next_seq.fetch_add(1, Ordering::Relaxed));
        self.longest.fetch_max(region.len, Ordering::Relaxed);
        let mut map = self.regions.write();
        map.insert(key, region);
        self.changed();
        key
    }

    /// Publishes a change of the map: called with the write lock held, after the change,
    /// so that a translation made from the old map carries an older generation (the
    /// ordering argument is `hsasim_isa::exec::tlb`'s). Memory is unmapped only after
    /// its region was removed, hence after this.
    fn changed(&self) {
        self.generation.0.fetch_add(1, Ordering::Release);
    }

    /// The most recently added region containing `[addr, addr + len)`.
    pub fn find(&self, addr: u64, len: u64) -> Option<Region> {
        self.search(addr, len, Region::contains)
    }

    /// The most recently added region whose pages contain `[addr, addr + len)`: what the
    /// simulated GPU may access.
    pub fn find_page(&self, addr: u64, len: u64) -> Option<Region> {
        self.search(addr, len, Self::gpu_reaches)
    }

    /// A fresh agent address for `len` bytes of host memory at `host` (same offset in its
    /// page, a guard page after), for a strict-mode lock.
    pub fn new_agent_address(&self, host: u64, len: u64) -> HsaResult<u64> {
        let offset = host % PAGE;
        let span = round_up(offset + len, PAGE)
            .and_then(|s| s.checked_add(PAGE))
            .ok_or(HsaError::OUT_OF_RESOURCES)?;
        let used = self.agent_window_used.fetch_add(span, Ordering::Relaxed);
        if used.saturating_add(span) > AGENT_WINDOW.end - AGENT_WINDOW.start {
            return Err(HsaError::OUT_OF_RESOURCES);
        }
        Ok(AGENT_WINDOW.start + used + offset)
    }

    /// [`find_page`](Self::find_page), with the span around the access inside which every
    /// access finds the same region: the region's pages less those of every region the
    /// lookup would prefer (it takes the highest key that holds the access). Where such a
    /// region overlaps the access itself, or there are too many to look at, the span is
    /// the access alone.
    pub fn find_page_span(&self, addr: u64, len: u64) -> Option<(Region, u64, u64)> {
        let map = self.regions.read();
        let (key, found) = self.search_in(&map, addr, len, Self::gpu_reaches)?;
        let end = addr.saturating_add(len.max(1));
        let (mut lo, mut hi) = found.page_span();
        if hi <= key.0 {
            // Cannot hold an access (an empty region); BTreeMap::range would panic below.
            return Some((*found, addr, end));
        }
        let preferred = map
            .range((key.0, key.1.saturating_add(1))..(hi, 0))
            .map(|(_, r)| r)
            .filter(|r| !matches!(r.kind, RegionKind::LockedHost { .. }));
        for (n, r) in preferred.enumerate() {
            let (first, last) = r.page_span();
            if n == SPAN_SCAN_LIMIT || (first < end && last > addr) {
                return Some((*found, addr, end));
            }
            if last <= addr {
                lo = lo.max(last);
            } else {
                hi = hi.min(first);
            }
        }
        Some((*found, lo, hi))
    }

    /// Whether the simulated GPU reaches `[addr, addr + len)` through `r`.
    fn gpu_reaches(r: &Region, addr: u64, len: u64) -> bool {
        !matches!(r.kind, RegionKind::LockedHost { .. }) && r.page_contains(addr, len)
    }

    fn search(
        &self,
        addr: u64,
        len: u64,
        hit: impl Fn(&Region, u64, u64) -> bool,
    ) -> Option<Region> {
        let map = self.regions.read();
        self.search_in(&map, addr, len, hit).map(|(_, r)| *r)
    }

    /// The region of highest key that `hit` accepts for the access, and its key.
    fn search_in<'m>(
        &self,
        map: &'m BTreeMap<(u64, u64), Region>,
        addr: u64,
        len: u64,
        hit: impl Fn(&Region, u64, u64) -> bool,
    ) -> Option<((u64, u64), &'m Region)> {
        // Regions start at most a page before the address they can cover.
        let longest = self
            .longest
            .load(Ordering::Relaxed)
            .saturating_add(2 * PAGE);
        let upper = addr.saturating_add(PAGE);
        for (key, r) in map.range(..=(upper, u64::MAX)).rev() {
            if key.0.saturating_add(longest) < addr {
                break;
            }
            if hit(r, addr, len.max(1)) {
                return Some((*key, r));
            }
        }
        None
    }

    /// The pool allocation the CPU may not touch that holds `addr`, as (start, length), for
    /// a fault handler: never blocks (gives up if the registry is being written) and never
    /// allocates.
    pub fn device_only_allocation(&self, addr: u64) -> Option<(u64, u64)> {
        let map = self.regions.try_read()?;
        let (_, r) = map.range(..=(addr, u64::MAX)).next_back()?;
        let device_only = matches!(
            r.kind,
            RegionKind::PoolAllocation { .. } | RegionKind::Vmem { .. } | RegionKind::IpcAttached
        ) && r.host != r.start;
        (device_only && addr < r.start + r.mapped_len).then_some((r.start, r.len))
    }

    /// Removes the region starting exactly at `start` whose kind satisfies `pred`.
    pub fn remove_at(&self, start: u64, pred: impl Fn(&Region) -> bool) -> Option<Region> {
        let mut map = self.regions.write();
        let key = map
            .range((start, 0)..=(start, u64::MAX))
            .rev()
            .find(|(_, r)| pred(r))
            .map(|(k, _)| *k)?;
        let removed = map.remove(&key);
        self.changed();
        removed
    }

    /// Lets the agents of `nodes` (a bit each, [`node_bit`]) reach the GPU memory allocation
    /// containing `addr` (`hsa_amd_agents_allow_access`); other regions need no grant.
    /// Grants are never taken back, as in ROCr, where only freeing unmaps.
    pub fn grant(&self, addr: u64, nodes: u64) -> HsaResult {
        let mut map = self.regions.write();
        let upper = addr.saturating_add(1);
        let region = map
            .range_mut(..(upper, 0))
            .rev()
            .map(|(_, r)| r)
            .find(|r| r.contains(addr, 1))
            .ok_or(HsaError::INVALID_ARGUMENT)?;
        if let RegionKind::PoolAllocation {
            peers: Some(peers), ..
        } = &mut region.kind
        {
            *peers |= nodes;
        }
        self.changed();
        Ok(())
    }

    /// Sets the agents (a bit per node) that may reach the virtual-memory mapping starting
    /// exactly at `start`.
    pub fn set_vmem_access(&self, start: u64, nodes: u64) -> HsaResult {
        let mut map = self.regions.write();
        let region = map
            .range_mut((start, 0)..=(start, u64::MAX))
            .rev()
            .map(|(_, r)| r)
            .find(|r| matches!(r.kind, RegionKind::Vmem { .. }))
            .ok_or(HsaError::INVALID_ARGUMENT)?;
        if let RegionKind::Vmem { access, .. } = &mut region.kind {
            *access = nodes;
        }
        self.changed();
        Ok(())
    }

    pub fn set_user_data(&self, start: u64, user_data: u64) -> HsaResult {
        let mut map = self.regions.write();
        let r = map
            .range_mut((start, 0)..=(start, u64::MAX))
            .next_back()
            .ok_or(HsaError::INVALID_ARGUMENT)?;
        r.1.user_data = user_data;
        Ok(())
    }

    /// Every pool allocation (for tear-down at `hsa_shut_down`).
    pub fn drain_pool_allocations(&self) -> Vec<Region> {
        let mut map = self.regions.write();
        let keys: Vec<_> = map
            .iter()
            .filter(|(_, r)| matches!(r.kind, RegionKind::PoolAllocation { .. }))
            .map(|(k, _)| *k)
            .collect();
        let drained = keys.iter().filter_map(|k| map.remove(k)).collect();
        self.changed();
        drained
    }
}

/// Why a range cannot be handed to a copy or fill.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadRange {
    /// No pool allocation, locked or registered range contains it.
    NotRegistered,
    /// It is the program's memory (locked, registered, SVM) and the page at `.0` is no
    /// longer mapped.
    Unmapped(u64),
    /// It is the host pointer of locked memory whose agent address (`.0`, for the range's
    /// first byte) is what devices must use (strict mode).
    HostSideOfLock(u64),
}

impl std::fmt::Display for BadRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadRange::NotRegistered => f.write_str(
                "is not device-accessible memory (allocate it from a pool or lock/register it)",
            ),
            BadRange::Unmapped(page) => write!(
                f,
                "was locked or registered but is not mapped any more (page {page:#x})"
            ),
            BadRange::HostSideOfLock(agent) => write!(
                f,
                "is the host pointer of locked memory: devices reach it at its agent address \
                 {agent:#x} (the address hsa_amd_memory_lock returned)"
            ),
        }
    }
}

impl MemoryRegistry {
    /// The region a copy engine or fill may use for `[addr, addr + len)`: one that contains
    /// the range and, if it is the program's own memory, is still mapped (a program may
    /// unmap memory it locked; touching it would take the process down). Pool allocations
    /// are hsasim's own mappings, alive until freed, so they cost no system call.
    /// Returns the host address of `addr`.
    pub fn accessible(&self, addr: u64, len: u64) -> Result<u64, BadRange> {
        let Some(region) = self.find(addr, len) else {
            return self.vmem_span(addr, len).ok_or(BadRange::NotRegistered);
        };
        if let RegionKind::LockedHost { agent_address } = region.kind {
            return Err(BadRange::HostSideOfLock(
                agent_address + (addr - region.start),
            ));
        }
        let host = region.host + (addr - region.start);
        if !matches!(
            region.kind,
            RegionKind::PoolAllocation { .. } | RegionKind::Vmem { .. } | RegionKind::IpcAttached
        ) {
            host_range_mapped(host, len).map_err(BadRange::Unmapped)?;
        }
        Ok(host)
    }

    /// The host address of `addr` when `[addr, addr + len)` runs through several virtual-
    /// memory mappings that follow each other both at their device addresses and in hsasim's
    /// view of them (mappings of one reservation do: [`crate::vmem`]), so one copy can cross
    /// from one physical chunk into the next, as on a GPU's page tables.
    fn vmem_span(&self, addr: u64, len: u64) -> Option<u64> {
        let end = addr.checked_add(len)?;
        let first = self.find(addr, 1)?;
        if !matches!(first.kind, RegionKind::Vmem { .. }) {
            return None;
        }
        let mut region = first;
        while region.start + region.len < end {
            let next_start = region.start + region.len;
            let next = self.find(next_start, 1)?;
            let follows = matches!(next.kind, RegionKind::Vmem { .. })
                && next.start == next_start
                && next.host == region.host + region.len;
            if !follows {
                return None;
            }
            region = next;
        }
        Some(first.host + (addr - first.start))
    }
}

/// The bit of the agent with KFD node id `node` in a grant mask (nodes past 63 share the last
/// bit; hsasim has at most 16 GPUs).
pub fn node_bit(node: u32) -> u64 {
    1 << node.min(63)
}

impl Region {
    /// Runtime-owned memory kernels reach at its host address (queue rings and blocks,
    /// signals, doorbells), owned by the GPU agent `owner`.
    pub fn internal(start: u64, len: u64, owner: hsa_agent_t) -> Region {
        Region {
            start,
            host: start,
            len,
            kind: RegionKind::Internal,
            owner,
            global_flags: 0,
            user_data: 0,
            mapped_len: len,
        }
    }

    /// Whether `agent` (of node bit `bit`) may touch this region: anything but another GPU's
    /// memory that was not granted to it.
    pub fn reachable_by(&self, agent: hsa_agent_t, bit: u64) -> bool {
        match self.kind {
            RegionKind::PoolAllocation {
                peers: Some(peers), ..
            } => self.owner == agent || peers & bit != 0,
            RegionKind::Vmem { access, .. } => access & bit != 0,
            _ => true,
        }
    }
}

/// Guest memory as one GPU agent sees it: the registry, less other GPUs' memory not granted
/// to it. What a dispatch runs against; one comparison per access on top of the lookup.
pub struct AgentMemory<'a> {
    pub registry: &'a MemoryRegistry,
    pub agent: hsa_agent_t,
    pub bit: u64,
}

impl AgentMemory<'_> {
    fn reaches(&self, r: &Region, address: u64) -> bool {
        let ok = r.reachable_by(self.agent, self.bit);
        if !ok {
            tracing::debug!(target: "hsasim", address = format_args!("{address:#x}"), owner = r.owner.handle, "access to another GPU's memory that was not granted to this agent");
        }
        ok
    }
}

impl GuestMemory for AgentMemory<'_> {
    fn translate(&self, address: u64, len: u64) -> Option<u64> {
        let r = self.registry.find_page(address, len)?;
        self.reaches(&r, address)
            .then(|| r.host.wrapping_add(address.wrapping_sub(r.start)))
    }

    fn generation(&self) -> Option<&AtomicU64> {
        self.registry.generation()
    }

    fn translate_span(&self, address: u64, len: u64) -> Option<Span> {
        let (r, start, end) = self.registry.find_page_span(address, len)?;
        self.reaches(&r, address).then(|| Span {
            start,
            end,
            offset: r.host.wrapping_sub(r.start),
        })
    }

    fn interrupt(&self, data: u32) {
        self.registry.interrupt(data)
    }
}

impl GuestMemory for MemoryRegistry {
    fn translate(&self, address: u64, len: u64) -> Option<u64> {
        // Pages a device reaches lie at the same offsets from both addresses (an agent
        // address keeps its host address's page offset), so an access in the first page
        // before `start` translates too.
        let r = self.find_page(address, len)?;
        Some(r.host.wrapping_add(address.wrapping_sub(r.start)))
    }

    fn generation(&self) -> Option<&AtomicU64> {
        Some(&self.generation.0)
    }

    fn translate_span(&self, address: u64, len: u64) -> Option<Span> {
        let (r, start, end) = self.find_page_span(address, len)?;
        Some(Span {
            start,
            end,
            offset: r.host.wrapping_sub(r.start),
        })
    }

    /// A wave raised the interrupt: the runtime's hook wakes whoever waits (see
    /// [`MemoryRegistry::set_interrupt_hook`]).
    fn interrupt(&self, data: u32) {
        if let Some(hook) = self.interrupt_hook.get() {
            hook(data);
        }
    }
}

/// Unmaps what [`pool_allocate`] mapped for `region`.
///
/// # Safety
/// `region` must come from [`pool_allocate`] and be unregistered; nothing may use it.
pub unsafe fn unmap_pool_allocation(region: &Region) {
    // SAFETY: guaranteed by the caller.
    unsafe {
        unmap(region.start as *mut u8, region.mapped_len);
        if region.host != region.start {
            unmap(region.host as *mut u8, region.mapped_len);
        }
    }
}

/// How much of a system-memory allocation is backed when it is made. ROCr pins a pool
/// allocation's pages (a first touch never faults), but ROCr's own per-queue memory is small
/// (a ring of `size * 64` bytes, the `amd_queue_t`, a 4 KiB PM4 buffer and a signal; scratch
/// only once a dispatch needs it) and AMD's HIP runtime gives each stream a kernarg pool of
/// `HSA_KERNARG_POOL_SIZE`, 1 MiB by default. Backing every page of a 9 MiB kernarg ring
/// made each queue cost 9 MiB of resident memory, most of it never touched; backing the
/// first 1 MiB keeps a ring's hot slots from faulting on their first pass and the rest costs
/// what is used. (Over 64 MiB, a managed range sized by the device's free memory, nothing
/// was ever backed up front, as it is now for all but the first 1 MiB.)
pub const BACKED_AT_ALLOCATION_BYTES: u64 = 1 << 20;

/// Allocates `size` bytes from `pool` (handle `pool_handle`) and records the region.
/// Unless `large_bar`, a GPU pool's memory is given to the program at an address the CPU
/// cannot touch, and hsasim keeps its own view of the bytes.
pub fn pool_allocate(
    registry: &MemoryRegistry,
    pool: &Pool,
    pool_handle: u64,
    size: u64,
    large_bar: bool,
) -> HsaResult<*mut u8> {
    if size == 0 {
        return Err(HsaError::INVALID_ARGUMENT);
    }
    if !pool.alloc_allowed() {
        tracing::error!(target: "hsasim", kind = ?pool.kind, "allocation from a pool that does not allow runtime allocation");
        return Err(HsaError::new(hsa_abi::status::ERROR_INVALID_ALLOCATION));
    }
    if let Some(vram) = &pool.shared {
        return shared_allocate(registry, pool, pool_handle, vram, size);
    }
    let mapped = round_up(size, PAGE).ok_or(HsaError::OUT_OF_RESOURCES)?;
    pool.reserve(mapped)?;
    let mapped_views = || -> HsaResult<(*mut u8, *mut u8)> {
        if pool.kind != PoolKind::Device {
            let host = map_anon_backed_prefix(mapped, BACKED_AT_ALLOCATION_BYTES)?;
            return Ok((host, host));
        }
        let host = map_anon(mapped)?;
        if large_bar {
            return Ok((host, host));
        }
        match reserve_unmapped(mapped) {
            Ok(device_only) => Ok((device_only, host)),
            Err(e) => {
                // SAFETY: just mapped, not yet handed to anyone.
                unsafe { unmap(host, mapped) };
                Err(e)
            }
        }
    };
    let (ptr, host) = match mapped_views() {
        Ok(views) => views,
        Err(e) => {
            pool.release(mapped);
            return Err(e);
        }
    };
    if ptr != host {
        crate::cpu_touch::watch();
    }
    registry.add(Region {
        start: ptr as u64,
        host: host as u64,
        len: size,
        kind: RegionKind::PoolAllocation {
            pool: pool_handle,
            peers: (pool.kind == PoolKind::Device).then_some(0),
        },
        owner: pool.owner,
        global_flags: pool.global_flags(),
        user_data: 0,
        mapped_len: mapped,
    });
    tracing::debug!(target: "hsasim", ?ptr, size, pool = ?pool.kind, "pool allocate");
    Ok(ptr)
}

/// [`pool_allocate`] from a device service's device memory: the same region, with an
/// address every attached process shares and no mapping of its own.
fn shared_allocate(
    registry: &MemoryRegistry,
    pool: &Pool,
    pool_handle: u64,
    vram: &crate::device_memory::SharedVram,
    size: u64,
) -> HsaResult<*mut u8> {
    let (start, host, mapped) = vram.allocate(size)?;
    if start != host {
        crate::cpu_touch::watch();
    }
    registry.add(Region {
        start,
        host,
        len: size,
        kind: RegionKind::PoolAllocation {
            pool: pool_handle,
            peers: Some(0),
        },
        owner: pool.owner,
        global_flags: pool.global_flags(),
        user_data: 0,
        mapped_len: mapped,
    });
    tracing::debug!(target: "hsasim", start = format_args!("{start:#x}"), size, "pool allocate (device service memory)");
    Ok(start as *mut u8)
}

/// Frees an allocation made by [`pool_allocate`]; `pool_of` maps a pool handle to its pool.
pub fn pool_free(
    registry: &MemoryRegistry,
    ptr: u64,
    pool_of: impl Fn(u64) -> Option<std::sync::Arc<Pool>>,
) -> HsaResult {
    let region = registry
        .remove_at(ptr, |r| matches!(r.kind, RegionKind::PoolAllocation { .. }))
        .ok_or_else(|| {
            tracing::error!(target: "hsasim", ptr = format_args!("{ptr:#x}"), "hsa_amd_memory_pool_free of a pointer no pool allocated");
            HsaError::INVALID_ARGUMENT
        })?;
    tracing::debug!(target: "hsasim", ptr = format_args!("{ptr:#x}"), size = region.mapped_len, "pool free");
    if let RegionKind::PoolAllocation { pool, .. } = region.kind {
        if let Some(p) = pool_of(pool) {
            if let Some(vram) = &p.shared {
                return vram.free(region.start);
            }
            p.release(region.mapped_len);
        }
    }
    // SAFETY: the region came from pool_allocate and was just unregistered.
    unsafe { unmap_pool_allocation(&region) };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(start: u64, len: u64, kind: RegionKind) -> Region {
        Region {
            start,
            host: start,
            len,
            kind,
            owner: hsa_agent_t::default(),
            global_flags: 0,
            user_data: 0,
            mapped_len: len,
        }
    }

    #[test]
    fn registry_finds_containing_ranges_only() {
        let r = MemoryRegistry::default();
        r.add(region(0x10000, 0x1000, RegionKind::Registered));
        r.add(region(0x20000, 0x100000, RegionKind::Locked));
        assert!(r.is_accessible(0x10000, 0x1000));
        assert!(!r.is_accessible(0x10000, 0x1001));
        assert!(!r.is_accessible(0xffff, 1));
        assert!(r.is_accessible(0x20000 + 0xffff0, 0x10));
        assert!(!r.is_accessible(0x1f000, 0x2000));
        assert!(!r.is_accessible(u64::MAX - 1, 4));
    }

    #[test]
    fn gpu_access_is_page_granular_but_lookups_are_exact() {
        let r = MemoryRegistry::default();
        r.add(region(
            0x30010,
            28,
            RegionKind::PoolAllocation {
                pool: 1,
                peers: None,
            },
        ));
        assert!(
            r.is_accessible(0x30020, 16),
            "a scalar load past a small kernarg block"
        );
        assert!(r.is_accessible(0x30000, 0x1000));
        assert!(!r.is_accessible(0x30ff0, 0x20));
        assert!(!r.is_accessible(0x31000, 1));
        assert!(r.find(0x30020, 16).is_none());
        assert!(r.find(0x30010, 28).is_some());
    }

    #[test]
    fn gpu_memory_is_reachable_by_its_owner_and_granted_gpus_only() {
        let r = MemoryRegistry::default();
        let (owner, peer, other) = (
            hsa_agent_t { handle: 1 },
            hsa_agent_t { handle: 2 },
            hsa_agent_t { handle: 3 },
        );
        let mut device = region(
            0x40000,
            0x1000,
            RegionKind::PoolAllocation {
                pool: 1,
                peers: Some(0),
            },
        );
        device.owner = owner;
        r.add(device);
        r.add(region(0x50000, 0x1000, RegionKind::Locked));
        let view = |agent, node| AgentMemory {
            registry: &r,
            agent,
            bit: node_bit(node),
        };
        assert!(view(owner, 1).is_accessible(0x40010, 4));
        assert!(!view(peer, 2).is_accessible(0x40010, 4));
        assert!(
            view(peer, 2).is_accessible(0x50010, 4),
            "host memory needs no grant"
        );
        r.grant(0x40000, node_bit(2)).unwrap();
        assert!(view(peer, 2).is_accessible(0x40010, 4));
        assert!(!view(other, 3).is_accessible(0x40010, 4));
        // Granting memory that needs no grant is a no-op; unknown memory is an error.
        r.grant(0x50000, node_bit(3)).unwrap();
        assert_eq!(
            r.grant(0x60000, node_bit(3)),
            Err(HsaError::INVALID_ARGUMENT)
        );
    }

    #[test]
    fn overlapping_regions_are_removed_independently() {
        let r = MemoryRegistry::default();
        r.add(region(0x10000, 0x1000, RegionKind::Registered));
        r.add(region(0x10000, 0x2000, RegionKind::Locked));
        assert!(r.is_accessible(0x10800, 0x1000));
        r.remove_at(0x10000, |x| x.kind == RegionKind::Locked)
            .unwrap();
        assert!(!r.is_accessible(0x10800, 0x1000));
        assert!(r.is_accessible(0x10800, 0x100));
    }

    #[test]
    fn accessible_ranges_must_still_be_mapped() {
        let base = map_anon(3 * PAGE).unwrap() as u64;
        // SAFETY: the middle page of the mapping made above.
        unsafe { unmap((base + PAGE) as *mut u8, PAGE) };
        assert_eq!(host_range_mapped(base, PAGE + 1), Err(base + PAGE));

        let r = MemoryRegistry::default();
        r.add(region(base, 3 * PAGE, RegionKind::Locked));
        assert_eq!(r.accessible(base, 16), Ok(base));
        assert_eq!(
            r.accessible(base, 2 * PAGE),
            Err(BadRange::Unmapped(base + PAGE))
        );
        assert_eq!(r.accessible(base, 4 * PAGE), Err(BadRange::NotRegistered));
        // SAFETY: the first and last pages, still mapped.
        unsafe {
            unmap(base as *mut u8, PAGE);
            unmap((base + 2 * PAGE) as *mut u8, PAGE);
        }
    }

    #[test]
    fn every_change_of_the_map_moves_the_generation() {
        let r = MemoryRegistry::default();
        let gen = || r.generation().unwrap().load(Ordering::Acquire);
        let pool = RegionKind::PoolAllocation {
            pool: 1,
            peers: Some(0),
        };
        let g0 = gen();
        r.add(region(0x10000, 0x1000, pool));
        let g1 = gen();
        assert!(g1 > g0, "add");
        r.grant(0x10000, node_bit(3)).unwrap();
        let g2 = gen();
        assert!(g2 > g1, "grant");
        r.set_user_data(0x10000, 7).unwrap();
        assert_eq!(gen(), g2, "user data changes no translation");
        r.remove_at(0x10000, |_| true).unwrap();
        assert!(gen() > g2, "remove");
        let g3 = gen();
        r.add(region(0x20000, 0x1000, pool));
        r.drain_pool_allocations();
        assert!(gen() > g3 + 1, "drain");
    }

    #[test]
    fn a_span_holds_only_addresses_that_find_its_region() {
        let r = MemoryRegistry::default();
        let span = |a, l| {
            let s = r.translate_span(a, l).unwrap();
            (s.start, s.end)
        };
        // Alone: the region's pages.
        r.add(region(0x100000, 0x10000, RegionKind::Registered));
        assert_eq!(span(0x100010, 4), (0x100000, 0x110000));
        // A region added later inside it wins for its own pages: the old one's span stops
        // short of them on either side, and an access of the new one gets the new pages.
        let mut inner = region(0x104000, 0x1000, RegionKind::Locked);
        inner.host = 0x9990_0000;
        r.add(inner);
        assert_eq!(span(0x100010, 4), (0x100000, 0x104000));
        assert_eq!(span(0x10f000, 4), (0x105000, 0x110000));
        assert_eq!(span(0x104010, 4), (0x104000, 0x105000));
        assert_eq!(
            r.translate(0x104010, 4),
            Some(0x9990_0010),
            "the newer region's host bytes"
        );
        // An access straddling a preferred region's edge finds the old region (the newer
        // one does not hold it all) but its span is the access alone.
        assert_eq!(span(0x103ffc, 8), (0x103ffc, 0x104004));
        assert_eq!(r.translate(0x103ffc, 8), Some(0x103ffc));
        // Every address of a span finds what the span says.
        for (a, l) in [(0x100010u64, 4u64), (0x10f000, 4), (0x104010, 4)] {
            let s = r.translate_span(a, l).unwrap();
            for probe in (s.start..s.end).step_by(0x400) {
                assert_eq!(
                    r.translate(probe, 4),
                    Some(probe.wrapping_add(s.offset)),
                    "{probe:#x} in the span of {a:#x}"
                );
            }
        }
    }

    #[test]
    fn pool_accounting_rejects_over_allocation() {
        let reg = MemoryRegistry::default();
        let pool = std::sync::Arc::new(Pool::new(
            PoolKind::Device,
            hsa_agent_t::default(),
            3 * PAGE,
        ));
        let a = pool_allocate(&reg, &pool, 1, 2 * PAGE, true).unwrap();
        assert_eq!(pool.used(), 2 * PAGE);
        assert_eq!(
            pool_allocate(&reg, &pool, 1, 2 * PAGE, true),
            Err(HsaError::OUT_OF_RESOURCES)
        );
        pool_free(&reg, a as u64, |_| Some(pool.clone())).unwrap();
        assert_eq!(pool.used(), 0);
        assert_eq!(
            pool_free(&reg, a as u64, |_| Some(pool.clone())),
            Err(HsaError::INVALID_ARGUMENT)
        );
    }
}

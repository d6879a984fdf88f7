//! Virtual memory management (`hsa_amd_vmem_*`): address ranges reserved apart from any
//! memory, physical allocations made apart from any address, and mappings of the second into
//! the first, each with per-agent access.
//!
//! How hsasim models it with host memory:
//! - a **reservation** is address space nothing backs: an `mmap(PROT_NONE)` range, which is
//!   the device address the program sees. Unless the GPU is large-BAR, hsasim also reserves a
//!   second range of the same size, its private **view** (as for pool allocations, the CPU
//!   must not touch device memory at the program's address); with large BAR the view is the
//!   reservation itself;
//! - a **physical allocation** is a memfd of its size, so that it can be mapped at several
//!   places at once (every mapping shows the same bytes) and exported as a file descriptor;
//! - a **mapping** maps the memfd (`MAP_SHARED | MAP_FIXED`) into the view at the same offset
//!   the device address has in its reservation, and records the range in the registry, which
//!   is what the interpreter and the copy engines translate with. Consecutive mappings of one
//!   reservation are consecutive in the view too, so one copy or kernel access can cross from
//!   one physical chunk into the next; an unmapped part of a reservation is in no region, and
//!   a kernel touching it faults (`HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION`).
//!
//! Lifetimes follow ROCr's: a physical allocation lives while a handle to it is held
//! (`handle_create`, `import_shareable_handle` and `retain_alloc_handle` each give one that
//! `handle_release` gives back) or while it is mapped; the memfd pages live while any mapping
//! or exported descriptor refers to them.

use crate::error::{HsaError, HsaResult};
use crate::host_map::PAGE;
use crate::memory::{node_bit, Pool, PoolKind, Region, RegionKind};
use crate::platform::Platform;
use hsa_abi::{access_permission, hsa_agent_t, hsa_amd_memory_access_desc_t};
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;

/// `HSA_AMD_VMEM_ADDRESS_NO_REGISTER`: the only flag `hsa_amd_vmem_address_reserve` knows.
pub const ADDRESS_NO_REGISTER: u64 = 1;

/// Handles are numbers from here on (never addresses, never reused), so a stray value is
/// rejected without being dereferenced.
const FIRST_HANDLE: u64 = 0x7600_0000_0001;

#[derive(Default)]
pub struct Vmem {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// By start (the device address).
    reservations: BTreeMap<u64, Reservation>,
    handles: HashMap<u64, Physical>,
    /// By device address.
    mappings: BTreeMap<u64, Mapping>,
    next_handle: u64,
}

struct Reservation {
    len: u64,
    /// Where hsasim reaches the reservation's bytes: `start` itself with a large BAR.
    view: u64,
}

struct Physical {
    memfd: Arc<OwnedFd>,
    size: u64,
    /// The pool it was made from (or, for an import, the pool it counts as).
    pool: Arc<Pool>,
    pool_handle: u64,
    /// `hsa_amd_memory_type_t` it was made with.
    memory_type: u32,
    /// Whether its size is charged to `pool` (imports are the exporter's memory).
    charged: bool,
    /// Handles held by the program.
    refs: u32,
    /// Mappings of it.
    maps: u32,
}

struct Mapping {
    len: u64,
    handle: u64,
    /// Each agent's permission (`hsa_access_permission_t`); absent means none.
    access: HashMap<u64, u32>,
}

/// `mmap` with `flags`, checked; `at` is a hint unless `flags` has `MAP_FIXED`.
fn map(at: u64, len: u64, prot: i32, flags: i32, fd: RawFd, offset: u64) -> HsaResult<u64> {
    let len = usize::try_from(len).map_err(|_| HsaError::OUT_OF_RESOURCES)?;
    let offset = libc::off_t::try_from(offset).map_err(|_| HsaError::INVALID_ARGUMENT)?;
    // SAFETY: either a fresh mapping at an address the kernel picks, or (MAP_FIXED) one over
    // a range of a reservation hsasim owns and nothing else uses (the callers' contract).
    let p = unsafe { libc::mmap(at as *mut libc::c_void, len, prot, flags, fd, offset) };
    if p == libc::MAP_FAILED {
        tracing::error!(target: "hsasim", at = format_args!("{at:#x}"), len, err = %std::io::Error::last_os_error(), "vmem: mmap failed");
        return Err(HsaError::OUT_OF_RESOURCES);
    }
    Ok(p as u64)
}

/// Address space with nothing behind it.
fn reserve_space(at: u64, len: u64) -> HsaResult<u64> {
    map(
        at,
        len,
        libc::PROT_NONE,
        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
        -1,
        0,
    )
}

/// Puts `[at, at + len)` of a reservation back to nothing behind it.
fn clear_space(at: u64, len: u64) -> HsaResult {
    map(
        at,
        len,
        libc::PROT_NONE,
        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED,
        -1,
        0,
    )
    .map(|_| ())
}

fn unmap_space(at: u64, len: u64) {
    // SAFETY: a range of a reservation hsasim made and no longer records.
    unsafe { libc::munmap(at as *mut libc::c_void, len as usize) };
}

/// `len` bytes of address space aligned to `align` (a power of two, at least a page), at
/// `hint` if that is free and aligned.
fn reserve_aligned(hint: u64, len: u64, align: u64) -> HsaResult<u64> {
    if hint != 0 && hint.is_multiple_of(align) {
        let p = reserve_space(hint, len)?;
        if p == hint {
            return Ok(p);
        }
        unmap_space(p, len);
        tracing::debug!(target: "hsasim", hint = format_args!("{hint:#x}"), "vmem: the requested address is taken; reserving elsewhere");
    }
    if align <= PAGE {
        return reserve_space(0, len);
    }
    let padded = len.checked_add(align).ok_or(HsaError::OUT_OF_RESOURCES)?;
    let p = reserve_space(0, padded)?;
    let start = p.next_multiple_of(align);
    if start > p {
        unmap_space(p, start - p);
    }
    let tail = p + padded - (start + len);
    if tail > 0 {
        unmap_space(start + len, tail);
    }
    Ok(start)
}

fn page_aligned(v: u64) -> bool {
    v.is_multiple_of(PAGE)
}

impl Vmem {
    /// `hsa_amd_vmem_address_reserve(_align)`.
    pub fn reserve(
        &self,
        platform: &Platform<'_>,
        size: u64,
        hint: u64,
        align: u64,
        flags: u64,
    ) -> HsaResult<u64> {
        if size == 0 || !page_aligned(size) {
            tracing::error!(target: "hsasim", size, "hsa_amd_vmem_address_reserve: the size must be a non-zero multiple of the page size ({PAGE})");
            return Err(HsaError::INVALID_ARGUMENT);
        }
        if flags & !ADDRESS_NO_REGISTER != 0 {
            tracing::error!(target: "hsasim", flags, "hsa_amd_vmem_address_reserve: unknown flags");
            return Err(HsaError::INVALID_ARGUMENT);
        }
        if align != 0 && !align.is_power_of_two() {
            tracing::error!(target: "hsasim", align, "hsa_amd_vmem_address_reserve_align: the alignment must be a power of two");
            return Err(HsaError::INVALID_ARGUMENT);
        }
        let start = reserve_aligned(hint, size, align.max(PAGE))?;
        let view = if platform.config.large_bar {
            start
        } else {
            match reserve_space(0, size) {
                Ok(v) => v,
                Err(e) => {
                    unmap_space(start, size);
                    return Err(e);
                }
            }
        };
        if view != start {
            crate::cpu_touch::watch();
        }
        self.state
            .lock()
            .reservations
            .insert(start, Reservation { len: size, view });
        tracing::debug!(target: "hsasim", start = format_args!("{start:#x}"), size, "vmem: reserved");
        Ok(start)
    }

    /// `hsa_amd_vmem_address_free`: the whole reservation starting at `ptr`, none of it mapped.
    pub fn free(&self, ptr: u64, size: u64) -> HsaResult {
        let mut state = self.state.lock();
        let Some(r) = state.reservations.get(&ptr) else {
            tracing::error!(target: "hsasim", ptr = format_args!("{ptr:#x}"), "hsa_amd_vmem_address_free: not the start of a reservation");
            return Err(HsaError::INVALID_ARGUMENT);
        };
        if r.len != size {
            tracing::error!(target: "hsasim", ptr = format_args!("{ptr:#x}"), size, reserved = r.len, "hsa_amd_vmem_address_free: the size is not the reservation's");
            return Err(HsaError::INVALID_ARGUMENT);
        }
        if state.mappings.range(ptr..ptr + size).next().is_some() {
            tracing::error!(target: "hsasim", ptr = format_args!("{ptr:#x}"), "hsa_amd_vmem_address_free: the range is still mapped; unmap it first");
            return Err(HsaError::new(hsa_abi::status::ERROR_RESOURCE_FREE));
        }
        let r = state.reservations.remove(&ptr).expect("looked up above");
        unmap_space(ptr, r.len);
        if r.view != ptr {
            unmap_space(r.view, r.len);
        }
        Ok(())
    }

    /// `hsa_amd_vmem_handle_create`: `size` bytes of `pool`'s memory, a multiple of its
    /// allocation granule.
    pub fn create(
        &self,
        platform: &Platform<'_>,
        pool_handle: u64,
        size: u64,
        memory_type: u32,
        flags: u64,
    ) -> HsaResult<u64> {
        let (_, pool) = platform.pool(hsa_abi::hsa_amd_memory_pool_t {
            handle: pool_handle,
        })?;
        if !pool.alloc_allowed() {
            tracing::error!(target: "hsasim", kind = ?pool.kind, "hsa_amd_vmem_handle_create: the pool does not allow allocation");
            return Err(HsaError::INVALID_ALLOCATION);
        }
        if size == 0
            || !page_aligned(size)
            || flags != 0
            || memory_type > hsa_abi::MEMORY_TYPE_PINNED
        {
            tracing::error!(target: "hsasim", size, flags, memory_type, "hsa_amd_vmem_handle_create: the size must be a non-zero multiple of the pool's granule ({PAGE}), flags 0 and the type MEMORY_TYPE_NONE or _PINNED");
            return Err(HsaError::INVALID_ARGUMENT);
        }
        pool.reserve(size)?;
        let memfd = match new_memfd(size) {
            Ok(fd) => fd,
            Err(e) => {
                pool.release(size);
                return Err(e);
            }
        };
        let physical = Physical {
            memfd: Arc::new(memfd),
            size,
            pool: pool.clone(),
            pool_handle,
            memory_type,
            charged: true,
            refs: 1,
            maps: 0,
        };
        Ok(self.insert_handle(physical))
    }

    fn insert_handle(&self, physical: Physical) -> u64 {
        let mut state = self.state.lock();
        let handle = FIRST_HANDLE + state.next_handle;
        state.next_handle += 1;
        state.handles.insert(handle, physical);
        handle
    }

    /// `hsa_amd_vmem_handle_release`: gives one handle back; the memory goes once no handle
    /// and no mapping is left.
    pub fn release(&self, handle: u64) -> HsaResult {
        let mut state = self.state.lock();
        let p = live_handle(&mut state, handle, "hsa_amd_vmem_handle_release")?;
        p.refs -= 1;
        drop_if_unused(&mut state, handle);
        Ok(())
    }

    /// `hsa_amd_vmem_map`: `size` bytes of `handle` from `offset` at `va`, inside one
    /// reservation and over no other mapping. Nothing may access it before
    /// [`Vmem::set_access`].
    pub fn map(
        &self,
        platform: &Platform<'_>,
        va: u64,
        size: u64,
        offset: u64,
        handle: u64,
        flags: u64,
    ) -> HsaResult {
        let what = "hsa_amd_vmem_map";
        if flags != 0
            || size == 0
            || !page_aligned(va)
            || !page_aligned(size)
            || !page_aligned(offset)
        {
            tracing::error!(target: "hsasim", va = format_args!("{va:#x}"), size, offset, flags, "{what}: the address, size and offset must be page aligned, the size non-zero and flags 0");
            return Err(HsaError::INVALID_ARGUMENT);
        }
        let mut state = self.state.lock();
        let (res_start, view) = reservation_of(&state, va, size, what)?;
        if let Some((at, _)) = overlapping(&state, va, size).next() {
            tracing::error!(target: "hsasim", va = format_args!("{va:#x}"), size, mapped = format_args!("{at:#x}"), "{what}: the range is already mapped (unmap it first)");
            return Err(HsaError::INVALID_ARGUMENT);
        }
        let p = live_handle(&mut state, handle, what)?;
        if offset.checked_add(size).is_none_or(|end| end > p.size) {
            tracing::error!(target: "hsasim", size, offset, allocation = p.size, "{what}: the mapping runs past the end of the physical allocation");
            return Err(HsaError::INVALID_ARGUMENT);
        }
        let host = view + (va - res_start);
        map(
            host,
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_FIXED,
            p.memfd.as_raw_fd(),
            offset,
        )?;
        p.maps += 1;
        let (owner, global_flags) = (p.pool.owner, p.pool.global_flags());
        state.mappings.insert(
            va,
            Mapping {
                len: size,
                handle,
                access: HashMap::new(),
            },
        );
        platform.memory.add(Region {
            start: va,
            host,
            len: size,
            kind: RegionKind::Vmem { handle, access: 0 },
            owner,
            global_flags,
            user_data: 0,
            mapped_len: size,
        });
        tracing::debug!(target: "hsasim", va = format_args!("{va:#x}"), size, handle, "vmem: mapped");
        Ok(())
    }

    /// `hsa_amd_vmem_unmap`: `[va, va + size)` must be exactly one or more whole mappings.
    pub fn unmap(&self, platform: &Platform<'_>, va: u64, size: u64) -> HsaResult {
        let what = "hsa_amd_vmem_unmap";
        let mut state = self.state.lock();
        let starts = whole_mappings(&state, va, size, what)?;
        let (res_start, view) = reservation_of(&state, va, size, what)?;
        // Unregistered first: no new access can find the range once its bytes go.
        for start in &starts {
            platform
                .memory
                .remove_at(*start, |r| matches!(r.kind, RegionKind::Vmem { .. }));
        }
        clear_space(view + (va - res_start), size)?;
        for start in starts {
            let m = state.mappings.remove(&start).expect("found above");
            if let Some(p) = state.handles.get_mut(&m.handle) {
                p.maps -= 1;
            }
            drop_if_unused(&mut state, m.handle);
        }
        tracing::debug!(target: "hsasim", va = format_args!("{va:#x}"), size, "vmem: unmapped");
        Ok(())
    }

    /// `hsa_amd_vmem_set_access`: the permissions of the agents `descs` names on the mapped
    /// range `[va, va + size)` (whole mappings); other agents keep theirs.
    pub fn set_access(
        &self,
        platform: &Platform<'_>,
        va: u64,
        size: u64,
        descs: &[hsa_amd_memory_access_desc_t],
    ) -> HsaResult {
        let what = "hsa_amd_vmem_set_access";
        let mut state = self.state.lock();
        let starts = whole_mappings(&state, va, size, what)?;
        for d in descs {
            platform.agent(d.agent_handle)?;
            if d.permissions > access_permission::RW {
                tracing::error!(target: "hsasim", permissions = d.permissions, "{what}: unknown permission");
                return Err(HsaError::INVALID_ARGUMENT);
            }
        }
        for start in starts {
            let m = state.mappings.get_mut(&start).expect("found above");
            for d in descs {
                m.access.insert(d.agent_handle.handle, d.permissions);
            }
            // Read-only and write-only access are not told apart: any permission lets the
            // agent's kernels and engines in (a gap the module documentation names).
            let mut nodes = 0;
            for (agent, perm) in &m.access {
                if *perm != access_permission::NONE {
                    if let Ok(a) = platform.agent(hsa_agent_t { handle: *agent }) {
                        nodes |= node_bit(a.node);
                    }
                }
            }
            platform.memory.set_vmem_access(start, nodes)?;
        }
        Ok(())
    }

    /// `hsa_amd_vmem_get_access`: `agent`'s permission on the mapping holding `va`.
    pub fn get_access(
        &self,
        platform: &Platform<'_>,
        va: u64,
        agent: hsa_agent_t,
    ) -> HsaResult<u32> {
        platform.agent(agent)?;
        let state = self.state.lock();
        let (_, m) = mapping_at(&state, va).ok_or_else(|| {
            tracing::error!(target: "hsasim", va = format_args!("{va:#x}"), "hsa_amd_vmem_get_access: not a mapped address");
            HsaError::INVALID_ARGUMENT
        })?;
        Ok(m.access
            .get(&agent.handle)
            .copied()
            .unwrap_or(access_permission::NONE))
    }

    /// `hsa_amd_vmem_retain_alloc_handle`: one more handle to the allocation mapped at `va`.
    pub fn retain(&self, va: u64) -> HsaResult<u64> {
        let mut state = self.state.lock();
        let handle = mapping_at(&state, va)
            .map(|(_, m)| m.handle)
            .ok_or_else(|| {
                tracing::error!(target: "hsasim", va = format_args!("{va:#x}"), "hsa_amd_vmem_retain_alloc_handle: not a mapped address");
                HsaError::INVALID_ARGUMENT
            })?;
        let p = state
            .handles
            .get_mut(&handle)
            .expect("a mapping keeps its allocation");
        p.refs = p.refs.checked_add(1).ok_or(HsaError::REFCOUNT_OVERFLOW)?;
        Ok(handle)
    }

    /// `hsa_amd_vmem_get_alloc_properties_from_handle`: (pool handle, memory type).
    pub fn properties(&self, handle: u64) -> HsaResult<(u64, u32)> {
        let mut state = self.state.lock();
        let p = live_handle(
            &mut state,
            handle,
            "hsa_amd_vmem_get_alloc_properties_from_handle",
        )?;
        Ok((p.pool_handle, p.memory_type))
    }

    /// `hsa_amd_vmem_export_shareable_handle`: a new descriptor of the allocation's memory,
    /// the caller's to close.
    pub fn export(&self, handle: u64, flags: u64) -> HsaResult<RawFd> {
        if flags != 0 {
            tracing::error!(target: "hsasim", flags, "hsa_amd_vmem_export_shareable_handle: flags must be 0");
            return Err(HsaError::INVALID_ARGUMENT);
        }
        let mut state = self.state.lock();
        let p = live_handle(&mut state, handle, "hsa_amd_vmem_export_shareable_handle")?;
        // SAFETY: duplicating a descriptor hsasim owns.
        let fd = unsafe { libc::fcntl(p.memfd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 0) };
        if fd < 0 {
            tracing::error!(target: "hsasim", err = %std::io::Error::last_os_error(), "hsa_amd_vmem_export_shareable_handle: dup failed");
            return Err(HsaError::OUT_OF_RESOURCES);
        }
        Ok(fd)
    }

    /// `hsa_amd_vmem_import_shareable_handle`: a handle to the memory behind `fd` (from an
    /// export, of this process or another). It counts as memory of the pool of the allocation
    /// it came from when that is this process's, else of the first GPU's device pool.
    pub fn import(&self, platform: &Platform<'_>, fd: RawFd) -> HsaResult<u64> {
        let what = "hsa_amd_vmem_import_shareable_handle";
        let stat = fstat(fd).ok_or_else(|| {
            tracing::error!(target: "hsasim", fd, "{what}: not an open file descriptor");
            HsaError::INVALID_ARGUMENT
        })?;
        if stat.st_size <= 0 || !page_aligned(stat.st_size as u64) {
            tracing::error!(target: "hsasim", fd, size = stat.st_size, "{what}: not a descriptor of exported device memory");
            return Err(HsaError::INVALID_ARGUMENT);
        }
        let source = {
            let state = self.state.lock();
            state
                .handles
                .values()
                .find(|p| {
                    fstat(p.memfd.as_raw_fd())
                        .is_some_and(|s| s.st_ino == stat.st_ino && s.st_dev == stat.st_dev)
                })
                .map(|p| (p.pool.clone(), p.pool_handle, p.memory_type))
        };
        let (pool, pool_handle, memory_type) = match source {
            Some(s) => s,
            None => platform
                .agents
                .iter()
                .filter(|a| a.is_gpu())
                .flat_map(|a| a.pools.iter())
                .find(|p| p.kind == PoolKind::Device)
                .map(|p| {
                    (
                        p.clone(),
                        Arc::as_ptr(p) as u64,
                        hsa_abi::MEMORY_TYPE_PINNED,
                    )
                })
                .ok_or(HsaError::INVALID_AGENT)?,
        };
        // SAFETY: duplicating the caller's open descriptor (checked by fstat above); the
        // duplicate is ours.
        let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
        if dup < 0 {
            return Err(HsaError::OUT_OF_RESOURCES);
        }
        // SAFETY: `dup` is a fresh descriptor nothing else owns.
        let memfd = unsafe { OwnedFd::from_raw_fd(dup) };
        Ok(self.insert_handle(Physical {
            memfd: Arc::new(memfd),
            size: stat.st_size as u64,
            pool,
            pool_handle,
            memory_type,
            charged: false,
            refs: 1,
            maps: 0,
        }))
    }
}

impl Drop for Vmem {
    /// At `hsa_shut_down`: reservations go (their mappings with them); the memfds close with
    /// their handles.
    fn drop(&mut self) {
        let state = self.state.get_mut();
        for (start, r) in std::mem::take(&mut state.reservations) {
            unmap_space(start, r.len);
            if r.view != start {
                unmap_space(r.view, r.len);
            }
        }
        for p in state.handles.values().filter(|p| p.charged) {
            p.pool.release(p.size);
        }
    }
}

fn new_memfd(size: u64) -> HsaResult<OwnedFd> {
    // SAFETY: a static NUL-terminated name; the result is checked.
    let fd = unsafe { libc::memfd_create(c"hsasim-vmem".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        tracing::error!(target: "hsasim", err = %std::io::Error::last_os_error(), "vmem: memfd_create failed");
        return Err(HsaError::OUT_OF_RESOURCES);
    }
    // SAFETY: a fresh descriptor nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let len = libc::off_t::try_from(size).map_err(|_| HsaError::OUT_OF_RESOURCES)?;
    // SAFETY: resizing our own memfd.
    if unsafe { libc::ftruncate(fd.as_raw_fd(), len) } != 0 {
        return Err(HsaError::OUT_OF_RESOURCES);
    }
    Ok(fd)
}

fn fstat(fd: RawFd) -> Option<libc::stat> {
    // SAFETY: `stat` is plain data; fstat fills it or fails (a bad descriptor is EBADF).
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    (unsafe { libc::fstat(fd, &mut st) } == 0).then_some(st)
}

fn live_handle<'a>(state: &'a mut State, handle: u64, what: &str) -> HsaResult<&'a mut Physical> {
    match state.handles.get_mut(&handle) {
        Some(p) if p.refs > 0 || p.maps > 0 => Ok(p),
        _ => {
            tracing::error!(target: "hsasim", handle = format_args!("{handle:#x}"), "{what}: not a live allocation handle");
            Err(HsaError::INVALID_ARGUMENT)
        }
    }
}

/// Frees the allocation once nothing holds it.
fn drop_if_unused(state: &mut State, handle: u64) {
    let unused = state
        .handles
        .get(&handle)
        .is_some_and(|p| p.refs == 0 && p.maps == 0);
    if unused {
        let p = state.handles.remove(&handle).expect("checked above");
        if p.charged {
            p.pool.release(p.size);
        }
    }
}

/// The reservation holding all of `[va, va + size)`: (start, view).
fn reservation_of(state: &State, va: u64, size: u64, what: &str) -> HsaResult<(u64, u64)> {
    state
        .reservations
        .range(..=va)
        .next_back()
        .filter(|(start, r)| va.checked_add(size).is_some_and(|end| end <= *start + r.len))
        .map(|(start, r)| (*start, r.view))
        .ok_or_else(|| {
            tracing::error!(target: "hsasim", va = format_args!("{va:#x}"), size, "{what}: the range is not inside one reserved address range");
            HsaError::INVALID_ARGUMENT
        })
}

/// Mappings overlapping `[va, va + size)`, as (start, length).
fn overlapping(state: &State, va: u64, size: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
    let end = va.saturating_add(size);
    let before = state
        .mappings
        .range(..va)
        .next_back()
        .filter(move |(s, m)| *s + m.len > va);
    before
        .into_iter()
        .chain(state.mappings.range(va..end))
        .map(|(s, m)| (*s, m.len))
}

fn mapping_at(state: &State, va: u64) -> Option<(u64, &Mapping)> {
    state
        .mappings
        .range(..=va)
        .next_back()
        .filter(|(s, m)| va < *s + m.len)
        .map(|(s, m)| (*s, m))
}

/// The starts of the mappings that tile `[va, va + size)` exactly.
fn whole_mappings(state: &State, va: u64, size: u64, what: &str) -> HsaResult<Vec<u64>> {
    let mut starts = Vec::new();
    let mut at = va;
    let end = va.checked_add(size).ok_or(HsaError::INVALID_ARGUMENT)?;
    while at < end {
        match state.mappings.get(&at) {
            Some(m) if at + m.len <= end => {
                starts.push(at);
                at += m.len;
            }
            _ => break,
        }
    }
    if size == 0 || at != end {
        tracing::error!(target: "hsasim", va = format_args!("{va:#x}"), size, "{what}: the range is not one or more whole mappings");
        return Err(HsaError::INVALID_ARGUMENT);
    }
    Ok(starts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_reservations_are_aligned_and_hints_are_taken_when_free() {
        let align = 1 << 21;
        let a = reserve_aligned(0, 3 * PAGE, align).unwrap();
        assert_eq!(a % align, 0);
        unmap_space(a, 3 * PAGE);
        let b = reserve_aligned(a, 3 * PAGE, align).unwrap();
        assert_eq!(b, a, "a free, aligned hint is honoured");
        unmap_space(b, 3 * PAGE);
    }
}

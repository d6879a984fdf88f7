//! Memory: the registry of every address range the runtime knows (device allocations,
//! pinned host allocations, registered host ranges, managed allocations and device globals
//! of loaded code objects), and the synchronous copies and fills.
//!
//! Copies run on the HSA runtime's copy engines (`hsa_amd_memory_async_copy`). A side that
//! the devices can reach directly (device memory, pinned, registered or managed host memory)
//! is handed to the engine as is; ordinary pageable host memory goes through the device's
//! pinned staging buffer in chunks. Every copy — 1D, 2D, to a symbol — is one row list
//! copied by [`copy_rows`].

use super::device::{Device, STAGING_BYTES};
use super::runtime;
use crate::error::{HipError, HipResult};
use crate::hsa::copy::EngineCopy;
use crate::hsa::memory::{HostLock, PoolBuffer};
use hsa_abi::*;
use parking_lot::RwLock;
use std::collections::BTreeMap;
use std::ffi::c_void;

/// `hipMemcpyKind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyKind {
    HostToHost,
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
    Default,
}

impl CopyKind {
    pub fn from_raw(kind: u32) -> HipResult<CopyKind> {
        Ok(match kind {
            0 => CopyKind::HostToHost,
            1 => CopyKind::HostToDevice,
            2 => CopyKind::DeviceToHost,
            3 => CopyKind::DeviceToDevice,
            4 => CopyKind::Default,
            _ => return Err(HipError::INVALID_MEMCPY_DIRECTION),
        })
    }

    /// Whether the kind says the (source, destination) is device memory; `None` = infer.
    fn device_sides(self) -> (Option<bool>, Option<bool>) {
        match self {
            CopyKind::HostToHost => (Some(false), Some(false)),
            CopyKind::HostToDevice => (Some(false), Some(true)),
            CopyKind::DeviceToHost => (Some(true), Some(false)),
            CopyKind::DeviceToDevice => (Some(true), Some(true)),
            CopyKind::Default => (None, None),
        }
    }
}

/// What kind of memory a registry entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemKind {
    /// `hipMalloc`/`hipMallocPitch`: coarse-grained memory of one device.
    Device,
    /// A `__device__`/`__constant__` variable of a loaded code object (not freeable).
    DeviceGlobal,
    /// `hipHostMalloc`: fine-grained system memory every device can access.
    PinnedHost,
    /// `hipHostRegister`: the application's memory, locked for device access.
    Registered,
    /// `hipMallocManaged`: fine-grained system memory (host-visible, device-accessible).
    Managed,
}

impl MemKind {
    fn is_host(self) -> bool {
        matches!(
            self,
            MemKind::PinnedHost | MemKind::Registered | MemKind::Managed
        )
    }
}

/// One registry entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Allocation {
    pub start: usize,
    pub size: usize,
    /// The device it belongs to (for host kinds: the device current when it was made).
    pub device: usize,
    pub kind: MemKind,
    /// The HIP flags it was made with (`hipHostMalloc*`, `hipHostRegister*`, `hipMemAttach*`).
    pub flags: u32,
    /// The address devices use for it: equal to `start` except for registered memory on
    /// runtimes whose `hsa_amd_memory_lock` hands out a separate agent address.
    pub device_address: usize,
}

impl Allocation {
    /// The address the copy engines use for `ptr` inside this entry.
    fn engine_address(&self, ptr: usize) -> usize {
        self.device_address + (ptr - self.start)
    }
}

/// What a registry entry holds of the HSA runtime's, released when the entry is removed.
enum Backing {
    /// Nothing (a device global belongs to its code object's executable).
    None,
    /// Memory allocated from a pool (device, pinned host and managed memory).
    Pool(PoolBuffer),
    /// The program's memory, locked (registered host memory).
    Locked(HostLock),
}

impl Backing {
    /// Frees or unlocks now, saying whether the runtime could.
    fn release(self) -> Result<(), crate::hsa::HsaError> {
        match self {
            Backing::None => Ok(()),
            Backing::Pool(buffer) => buffer.free(),
            Backing::Locked(lock) => lock.unlock(),
        }
    }
}

/// One registry entry: the range and what backs it.
struct Entry {
    alloc: Allocation,
    backing: Backing,
}

/// Every known range by start address.
static ALLOCATIONS: RwLock<BTreeMap<usize, Entry>> = RwLock::new(BTreeMap::new());

/// The entry containing address `ptr`, if one does.
fn containing(table: &BTreeMap<usize, Entry>, ptr: usize) -> Option<Allocation> {
    let (_, entry) = table.range(..=ptr).next_back()?;
    let alloc = entry.alloc;
    (ptr - alloc.start < alloc.size.max(1)).then_some(alloc)
}

/// The entry containing `[ptr, ptr + len)`, if one does.
pub fn lookup(ptr: usize, len: usize) -> Option<Allocation> {
    let alloc = containing(&ALLOCATIONS.read(), ptr)?;
    (ptr.checked_add(len)? <= alloc.start + alloc.size.max(1)).then_some(alloc)
}

/// Where a host-visible address range lives, which decides how it is copied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Residence {
    /// Inside one allocation of device `.0`.
    Device(usize),
    /// Host memory the devices can access directly (hipHostMalloc, hipHostRegister,
    /// hipMallocManaged): copied by the copy engine without staging.
    PinnedHost,
    /// Ordinary pageable host memory: copied through the pinned staging buffer.
    Pageable,
}

/// Where `[ptr, ptr + len)`, one side (`what`) of a stream-ordered copy or fill, lives; the
/// range is checked as for every copy (see [`classify`]).
pub fn residence(ptr: usize, len: usize, what: &str) -> HipResult<Residence> {
    Ok(match classify(ptr, len, None, what)? {
        Side::Device(d) => Residence::Device(d),
        Side::Pinned(_) => Residence::PinnedHost,
        Side::Pageable => Residence::Pageable,
    })
}

pub use host_pages::host_range_mapped;

/// The address a copy engine must be given for `ptr` (differs from `ptr` only inside
/// registered host memory on runtimes with separate agent addresses).
pub fn engine_address(ptr: usize) -> usize {
    match lookup(ptr, 1) {
        Some(a) => a.engine_address(ptr),
        None => ptr,
    }
}

fn insert(alloc: Allocation, backing: Backing) {
    ALLOCATIONS
        .write()
        .insert(alloc.start, Entry { alloc, backing });
}

/// Records a device global of a loaded code object (so copies and pointer queries know it).
pub(crate) fn register_device_global(start: usize, size: usize, device: usize) {
    insert(
        Allocation {
            start,
            size,
            device,
            kind: MemKind::DeviceGlobal,
            flags: 0,
            device_address: start,
        },
        Backing::None,
    );
}

/// Forgets a device global (its code object was unloaded).
pub(crate) fn unregister_device_global(start: usize) {
    let mut table = ALLOCATIONS.write();
    if table
        .get(&start)
        .is_some_and(|e| e.alloc.kind == MemKind::DeviceGlobal)
    {
        table.remove(&start);
    }
}

/// Bytes of device memory allocated on `device` through hipMalloc*.
pub fn device_bytes_in_use(device: usize) -> usize {
    ALLOCATIONS
        .read()
        .values()
        .map(|e| &e.alloc)
        .filter(|a| a.kind == MemKind::Device && a.device == device)
        .map(|a| a.size)
        .sum()
}

// ---------------------------------------------------------------------------------------
// Allocation

pub fn malloc(size: usize) -> HipResult<*mut c_void> {
    let rt = runtime()?;
    let device = rt.current_device()?;
    if size == 0 {
        return Ok(std::ptr::null_mut());
    }
    if size > device.device_pool.size {
        tracing::warn!(
            size,
            pool = device.device_pool.size,
            "allocation larger than device memory"
        );
        return Err(HipError::OUT_OF_MEMORY);
    }
    // Whatever the runtime's reason, a failed hipMalloc is out of memory (AMD's and CUDA's
    // contract), not the runtime error the status would otherwise be.
    let buffer = device.device_pool.allocate(size, &[]).map_err(|e| {
        tracing::warn!(size, status = %device.api.describe(e.status), "device allocation failed");
        HipError::OUT_OF_MEMORY
    })?;
    let ptr = buffer.as_ptr() as *mut c_void;
    insert(
        Allocation {
            start: ptr as usize,
            size,
            device: device.index,
            kind: MemKind::Device,
            flags: 0,
            device_address: ptr as usize,
        },
        Backing::Pool(buffer),
    );
    tracing::debug!(size, ptr = format_args!("{ptr:p}"), "hipMalloc");
    Ok(ptr)
}

/// Row pitches are multiples of this (the texture pitch alignment the device reports), so
/// every row of a pitched allocation starts on a cache-line-friendly boundary.
pub const PITCH_ALIGNMENT: usize = 256;

/// The pitch `hipMallocPitch` gives a row of `width` bytes; `None` on overflow.
pub fn pitch_for(width: usize) -> Option<usize> {
    width
        .checked_add(PITCH_ALIGNMENT - 1)
        .map(|w| w / PITCH_ALIGNMENT * PITCH_ALIGNMENT)
}

/// `hipMallocPitch`: (pointer, pitch); a zero width or height gives (null, 0) as AMD does.
pub fn malloc_pitch(width: usize, height: usize) -> HipResult<(*mut c_void, usize)> {
    if width == 0 || height == 0 {
        return Ok((std::ptr::null_mut(), 0));
    }
    let pitch = pitch_for(width).ok_or(HipError::INVALID_VALUE)?;
    let size = pitch.checked_mul(height).ok_or(HipError::OUT_OF_MEMORY)?;
    Ok((malloc(size)?, pitch))
}

/// `hipHostMalloc` flags (AMD's values).
pub mod host_flags {
    pub const PORTABLE: u32 = 0x1;
    pub const MAPPED: u32 = 0x2;
    pub const WRITE_COMBINED: u32 = 0x4;
    pub const NUMA_USER: u32 = 0x2000_0000;
    pub const COHERENT: u32 = 0x4000_0000;
    pub const NON_COHERENT: u32 = 0x8000_0000;
    pub const ALL: u32 = PORTABLE | MAPPED | WRITE_COMBINED | NUMA_USER | COHERENT | NON_COHERENT;
    /// `hipHostRegister` flags: portable, mapped, I/O memory, read-only.
    pub const REGISTER_ALL: u32 = 0xf;
    /// `hipMallocManaged` flags.
    pub const ATTACH_GLOBAL: u32 = 0x1;
    pub const ATTACH_HOST: u32 = 0x2;
}

/// Fine-grained system memory every device may access (hipHostMalloc, hipMallocManaged).
fn allocate_host(size: usize, kind: MemKind, flags: u32) -> HipResult<*mut c_void> {
    let rt = runtime()?;
    let device = rt.current_device()?;
    // As for hipMalloc, failing to get the memory is out of memory; failing to let every
    // device reach it is the runtime's error (which frees the memory).
    let buffer = device.host_pool.allocate(size, &[]).map_err(|e| {
        tracing::warn!(size, status = %device.api.describe(e.status), "host allocation failed");
        HipError::OUT_OF_MEMORY
    })?;
    buffer.allow_access(&rt.hsa.gpus)?;
    let ptr = buffer.as_ptr() as *mut c_void;
    insert(
        Allocation {
            start: ptr as usize,
            size,
            device: device.index,
            kind,
            flags,
            device_address: ptr as usize,
        },
        Backing::Pool(buffer),
    );
    tracing::debug!(
        size,
        ?kind,
        flags,
        ptr = format_args!("{ptr:p}"),
        "host memory allocated"
    );
    Ok(ptr)
}

/// `hipHostMalloc`/`hipHostAlloc`. Every flag combination maps to pinned fine-grained system
/// memory; coherent together with non-coherent is contradictory.
pub fn host_malloc(size: usize, flags: u32) -> HipResult<*mut c_void> {
    use host_flags::*;
    if flags & !ALL != 0 || flags & (COHERENT | NON_COHERENT) == COHERENT | NON_COHERENT {
        tracing::warn!(flags, "hipHostMalloc: invalid flags");
        return Err(HipError::INVALID_VALUE);
    }
    if size == 0 {
        return Ok(std::ptr::null_mut());
    }
    allocate_host(size, MemKind::PinnedHost, flags)
}

/// `hipMallocManaged`: host-visible memory kernels can use (fine-grained system memory).
pub fn malloc_managed(size: usize, flags: u32) -> HipResult<*mut c_void> {
    if size == 0 || (flags != host_flags::ATTACH_GLOBAL && flags != host_flags::ATTACH_HOST) {
        tracing::warn!(size, flags, "hipMallocManaged: zero size or invalid flags");
        return Err(HipError::INVALID_VALUE);
    }
    let rt = runtime()?;
    if size > rt.current_device()?.device_pool.size {
        return Err(HipError::OUT_OF_MEMORY);
    }
    allocate_host(size, MemKind::Managed, flags)
}

/// Waits for every device (host memory may be in use by kernels on any of them).
fn synchronize_all() -> HipResult {
    for device in &runtime()?.devices {
        device.synchronize()?;
    }
    Ok(())
}

/// Frees a registry entry of one of `kinds` starting exactly at `ptr`.
fn free_kinds(ptr: *mut c_void, kinds: &[MemKind], what: &str) -> HipResult {
    if ptr.is_null() {
        return Ok(());
    }
    let rt = runtime()?;
    let alloc = ALLOCATIONS.read().get(&(ptr as usize)).map(|e| e.alloc);
    let Some(alloc) = alloc.filter(|a| kinds.contains(&a.kind)) else {
        tracing::warn!(
            ptr = format_args!("{ptr:p}"),
            "{what} of a pointer that is not a live allocation of its kind"
        );
        return Err(HipError::INVALID_VALUE);
    };
    // Freeing memory a queued kernel or copy may still use would be a use-after-free on the
    // device.
    if alloc.kind.is_host() {
        synchronize_all()?;
    } else {
        rt.device(alloc.device)?.synchronize()?;
    }
    let Some(entry) = ALLOCATIONS.write().remove(&(ptr as usize)) else {
        // Another thread freed it meanwhile.
        return Err(HipError::INVALID_VALUE);
    };
    Ok(entry.backing.release()?)
}

/// `hipFree`: device, managed and (as AMD allows) pinned host memory.
///
/// # Safety
/// `ptr` is null or any pointer value; only pointers found in the registry are passed on to
/// the HSA runtime.
pub unsafe fn free(ptr: *mut c_void) -> HipResult {
    free_kinds(
        ptr,
        &[MemKind::Device, MemKind::Managed, MemKind::PinnedHost],
        "hipFree",
    )
}

/// `hipHostFree`: memory from hipHostMalloc only.
pub fn host_free(ptr: *mut c_void) -> HipResult {
    free_kinds(ptr, &[MemKind::PinnedHost], "hipHostFree")
}

/// `hipHostRegister`: locks `[ptr, ptr + size)` for access by every device.
///
/// # Safety
/// `[ptr, ptr + size)` must be live host memory of the caller (HIP's contract); it is pinned
/// by the HSA runtime until [`host_unregister`].
pub unsafe fn host_register(ptr: *mut c_void, size: usize, flags: u32) -> HipResult {
    if ptr.is_null() || size == 0 || flags & !host_flags::REGISTER_ALL != 0 {
        return Err(HipError::INVALID_VALUE);
    }
    let start = ptr as usize;
    let end = start.checked_add(size).ok_or(HipError::INVALID_VALUE)?;
    {
        let table = ALLOCATIONS.read();
        // Overlapping an existing registration (or any known range) is CUDA's
        // "already registered".
        let overlaps = table
            .range(..end)
            .next_back()
            .is_some_and(|(_, e)| e.alloc.start + e.alloc.size > start);
        if overlaps {
            tracing::warn!(
                ptr = format_args!("{ptr:p}"),
                size,
                "hipHostRegister: the range overlaps memory the runtime already knows"
            );
            return Err(HipError::HOST_MEMORY_ALREADY_REGISTERED);
        }
    }
    let rt = runtime()?;
    let device = rt.current_device()?;
    // SAFETY: the caller's range is live host memory until hipHostUnregister, which drops
    // the lock.
    let lock = unsafe { HostLock::lock(rt.hsa.api, ptr, size, &rt.hsa.gpus) }.map_err(|e| {
        // ROCr fails the lock of memory that is not mapped (the driver cannot pin it), and
        // so does hsasim.
        tracing::warn!(
            ptr = format_args!("{ptr:p}"),
            size,
            status = %rt.hsa.api.describe(e.status),
            "hipHostRegister: hsa_amd_memory_lock failed (is the whole range mapped?)"
        );
        HipError::OUT_OF_MEMORY
    })?;
    insert(
        Allocation {
            start,
            size,
            device: device.index,
            kind: MemKind::Registered,
            flags,
            device_address: lock.agent_address(),
        },
        Backing::Locked(lock),
    );
    Ok(())
}

/// `hipHostUnregister`.
///
/// # Safety
/// `ptr` is any pointer value; only a pointer found registered is passed on to the HSA
/// runtime.
pub unsafe fn host_unregister(ptr: *mut c_void) -> HipResult {
    if ptr.is_null() {
        return Err(HipError::INVALID_VALUE);
    }
    let registered = ALLOCATIONS
        .read()
        .get(&(ptr as usize))
        .is_some_and(|e| e.alloc.kind == MemKind::Registered);
    if !registered {
        tracing::warn!(
            ptr = format_args!("{ptr:p}"),
            "hipHostUnregister of memory that is not registered"
        );
        return Err(HipError::HOST_MEMORY_NOT_REGISTERED);
    }
    synchronize_all()?;
    let Some(entry) = ALLOCATIONS.write().remove(&(ptr as usize)) else {
        return Err(HipError::HOST_MEMORY_NOT_REGISTERED);
    };
    Ok(entry.backing.release()?)
}

/// `hipHostGetDevicePointer`: the device address of pinned, registered or managed memory.
pub fn host_get_device_pointer(ptr: *mut c_void, flags: u32) -> HipResult<*mut c_void> {
    if flags != 0 {
        return Err(HipError::INVALID_VALUE);
    }
    match lookup(ptr as usize, 1) {
        Some(a) if a.kind.is_host() => Ok(a.engine_address(ptr as usize) as *mut c_void),
        _ => {
            tracing::warn!(
                ptr = format_args!("{ptr:p}"),
                "hipHostGetDevicePointer: not pinned host memory"
            );
            Err(HipError::INVALID_VALUE)
        }
    }
}

/// `hipHostGetFlags`: the flags of hipHostMalloc'd (or registered/managed) memory.
pub fn host_get_flags(ptr: *mut c_void) -> HipResult<u32> {
    match lookup(ptr as usize, 1) {
        Some(a) if a.kind.is_host() => Ok(a.flags),
        _ => Err(HipError::INVALID_VALUE),
    }
}

/// `hipMemGetInfo` for the current device: (free, total).
pub fn mem_get_info() -> HipResult<(usize, usize)> {
    let device = runtime()?.current_device()?;
    let total = device.device_pool.size;
    Ok((
        total.saturating_sub(device_bytes_in_use(device.index)),
        total,
    ))
}

/// `hipMemPtrGetInfo`: the size of the allocation containing `ptr`.
pub fn mem_ptr_get_info(ptr: *mut c_void) -> HipResult<usize> {
    runtime()?;
    lookup(ptr as usize, 1)
        .map(|a| a.size)
        .ok_or(HipError::INVALID_VALUE)
}

/// Frees every allocation of `device` (hipDeviceReset); the caller has drained its work.
pub(crate) fn free_device_allocations(device: &Device) {
    let doomed: Vec<Entry> = {
        let mut table = ALLOCATIONS.write();
        let starts: Vec<usize> = table
            .values()
            .map(|e| &e.alloc)
            .filter(|a| {
                a.device == device.index
                    && matches!(
                        a.kind,
                        MemKind::Device | MemKind::PinnedHost | MemKind::Managed
                    )
            })
            .map(|a| a.start)
            .collect();
        starts.iter().filter_map(|s| table.remove(s)).collect()
    };
    // Released outside the lock, as every free is.
    for entry in doomed {
        if let Err(e) = entry.backing.release() {
            tracing::warn!(error = %e, "hipDeviceReset: freeing an allocation failed");
        }
    }
}

// ---------------------------------------------------------------------------------------
// Pointer attributes

/// `hipMemoryType` as ROCm 6 numbers it (ROCm 5 used Host = 0, Device = 1).
pub mod memory_type {
    pub const UNREGISTERED: u32 = 0;
    pub const HOST: u32 = 1;
    pub const DEVICE: u32 = 2;
    pub const MANAGED: u32 = 3;
}

/// `hipPointerAttribute_t` (identical layout in ROCm 5.x and 6.x: the first field is
/// `memoryType` in 5.x and the union `type`/`memoryType` in 6.x; only the enum's values
/// differ, and hipshim answers with ROCm 6's).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PointerAttributes {
    pub type_: u32,
    pub device: i32,
    pub device_pointer: *mut c_void,
    pub host_pointer: *mut c_void,
    pub is_managed: i32,
    pub allocation_flags: u32,
}

const _: () = {
    assert!(std::mem::size_of::<PointerAttributes>() == 32);
    assert!(std::mem::offset_of!(PointerAttributes, device) == 4);
    assert!(std::mem::offset_of!(PointerAttributes, device_pointer) == 8);
    assert!(std::mem::offset_of!(PointerAttributes, host_pointer) == 16);
    assert!(std::mem::offset_of!(PointerAttributes, is_managed) == 24);
    assert!(std::mem::offset_of!(PointerAttributes, allocation_flags) == 28);
};

/// `hipPointerGetAttributes`: like ROCm 6, memory the runtime does not know is
/// `hipMemoryTypeUnregistered` with device -1 (success, not an error).
pub fn pointer_attributes(ptr: *const c_void) -> HipResult<PointerAttributes> {
    if ptr.is_null() {
        return Err(HipError::INVALID_VALUE);
    }
    runtime()?;
    let p = ptr as usize;
    let Some(a) = lookup(p, 1) else {
        return Ok(PointerAttributes {
            type_: memory_type::UNREGISTERED,
            device: -1,
            device_pointer: std::ptr::null_mut(),
            host_pointer: std::ptr::null_mut(),
            is_managed: 0,
            allocation_flags: 0,
        });
    };
    let device_pointer = a.engine_address(p) as *mut c_void;
    let (type_, host_pointer) = match a.kind {
        MemKind::Device | MemKind::DeviceGlobal => (memory_type::DEVICE, std::ptr::null_mut()),
        MemKind::PinnedHost | MemKind::Registered => (memory_type::HOST, p as *mut c_void),
        MemKind::Managed => (memory_type::MANAGED, p as *mut c_void),
    };
    Ok(PointerAttributes {
        type_,
        device: a.device as i32,
        device_pointer,
        host_pointer,
        is_managed: i32::from(a.kind == MemKind::Managed),
        allocation_flags: a.flags,
    })
}

// ---------------------------------------------------------------------------------------
// Copies

/// How one side of a copy or fill is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    /// Device memory of device `.0`.
    Device(usize),
    /// Host memory the copy engine can reach directly; `.0` is the engine address of the
    /// side's base pointer.
    Pinned(usize),
    /// Pageable host memory: the CPU copies it, the engine only sees staging.
    Pageable,
}

/// Classifies `[ptr, ptr + len)`, the `what` side of a copy or fill: the one bounds check of
/// every copy and fill, synchronous or stream-ordered.
///
/// - Inside one allocation: that allocation's memory. The registry wins over the kind (AMD,
///   too, trusts pointer info over the kind).
/// - Starting inside an allocation and leaving it: an error. Going on would write (or read)
///   whatever lies next to the allocation, another allocation as often as not.
/// - In no allocation: the program's own host memory. An explicit kind that says "device"
///   makes that an error; so does running into device memory, and so does a page that is not
///   mapped (a huge length fails here, not as a SIGSEGV in the middle of the copy). Whether
///   the mapped bytes are the ones the program meant is its business, as with `memcpy`.
///
/// End addresses are computed with `checked_add`: a range that wraps is an error too.
fn classify(ptr: usize, len: usize, says_device: Option<bool>, what: &str) -> HipResult<Side> {
    let Some(end) = ptr.checked_add(len) else {
        tracing::warn!(
            ptr = format_args!("{ptr:#x}"),
            len,
            "the {what} range wraps around the end of the address space"
        );
        return Err(HipError::INVALID_VALUE);
    };
    let (inside, runs_into) = {
        let table = ALLOCATIONS.read();
        match containing(&table, ptr) {
            Some(a) => (Some(a), None),
            None => (
                None,
                table
                    .range(ptr..end)
                    .map(|(_, e)| e.alloc)
                    .find(|a| !a.kind.is_host()),
            ),
        }
    };
    if let Some(a) = inside {
        let alloc_end = a.start + a.size;
        if end > alloc_end {
            tracing::warn!(
                allocation = format_args!("{:#x}", a.start),
                size = a.size,
                kind = ?a.kind,
                offset = ptr - a.start,
                len,
                overrun = end - alloc_end,
                "the {what} range runs past the end of its allocation"
            );
            return Err(HipError::INVALID_VALUE);
        }
        return Ok(if a.kind.is_host() {
            Side::Pinned(a.engine_address(ptr))
        } else {
            Side::Device(a.device)
        });
    }
    if let Some(a) = runs_into {
        tracing::warn!(
            ptr = format_args!("{ptr:#x}"),
            len,
            allocation = format_args!("{:#x}", a.start),
            kind = ?a.kind,
            "the {what} range starts outside any allocation and runs into device memory"
        );
        return Err(HipError::INVALID_VALUE);
    }
    if says_device == Some(true) {
        tracing::warn!(
            ptr = format_args!("{ptr:#x}"),
            len,
            "the {what} range is not inside a device allocation"
        );
        return Err(HipError::INVALID_VALUE);
    }
    if let Err(page) = host_range_mapped(ptr, len) {
        tracing::warn!(
            ptr = format_args!("{ptr:#x}"),
            len,
            unmapped = format_args!("{page:#x}"),
            "the {what} range is neither an allocation nor mapped host memory"
        );
        return Err(HipError::INVALID_VALUE);
    }
    Ok(Side::Pageable)
}

/// A strided set of rows: `height` rows of `width` bytes, `pitch` bytes apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rows {
    pub width: usize,
    pub height: usize,
    pub dst_pitch: usize,
    pub src_pitch: usize,
}

impl Rows {
    pub fn linear(size: usize) -> Rows {
        Rows {
            width: size,
            height: 1,
            dst_pitch: size,
            src_pitch: size,
        }
    }

    /// Bytes from the first to the last byte touched, for a side with `pitch`.
    pub fn extent(&self, pitch: usize) -> Option<usize> {
        if self.height == 0 || self.width == 0 {
            return Some(0);
        }
        pitch.checked_mul(self.height - 1)?.checked_add(self.width)
    }
}

/// Synchronous copy in the null stream's order (waits for earlier work first).
///
/// # Safety
/// Host-side ranges (`src` for host-to-device, `dst` for device-to-host, both for
/// host-to-host) must be valid for `size` bytes; device-side ranges are checked against the
/// registry.
pub unsafe fn memcpy(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    kind: CopyKind,
) -> HipResult {
    if size == 0 {
        return Ok(());
    }
    // SAFETY: forwarded contract.
    unsafe { memcpy_2d(dst, src, Rows::linear(size), kind) }
}

/// `hipMemcpy2D`: `height` rows of `width` bytes between pitched ranges.
///
/// # Safety
/// As for [`memcpy`], for every row of each host side.
pub unsafe fn memcpy_2d(
    dst: *mut c_void,
    src: *const c_void,
    rows: Rows,
    kind: CopyKind,
) -> HipResult {
    if rows.width == 0 || rows.height == 0 {
        return Ok(());
    }
    if dst.is_null() || src.is_null() {
        return Err(HipError::INVALID_VALUE);
    }
    if rows.width > rows.dst_pitch || rows.width > rows.src_pitch {
        return Err(HipError::INVALID_PITCH_VALUE);
    }
    let dst_extent = rows.extent(rows.dst_pitch).ok_or(HipError::INVALID_VALUE)?;
    let src_extent = rows.extent(rows.src_pitch).ok_or(HipError::INVALID_VALUE)?;
    let (src_dev, dst_dev) = kind.device_sides();
    let dst_side = classify(dst as usize, dst_extent, dst_dev, "destination")?;
    let src_side = classify(src as usize, src_extent, src_dev, "source")?;
    let rt = runtime()?;
    // The device whose copy engine and staging buffer serve the copy.
    let device = match (dst_side, src_side) {
        (Side::Device(d), _) | (_, Side::Device(d)) => Some(rt.device(d)?),
        _ => None,
    };
    match device {
        Some(device) => {
            // Earlier work on the other device of a device-to-device copy must be done too.
            if let (Side::Device(a), Side::Device(b)) = (dst_side, src_side) {
                if a != b {
                    rt.device(a)?.synchronize()?;
                }
                rt.device(b)?.synchronize()?;
            } else {
                device.synchronize()?;
            }
            copy_rows(
                device,
                (dst as usize, dst_side),
                (src as usize, src_side),
                rows,
            )
        }
        None => {
            // Host to host. Kernels may be writing pinned memory: wait for them first.
            if dst_side != Side::Pageable || src_side != Side::Pageable {
                rt.current_device()?.synchronize()?;
            }
            for r in 0..rows.height {
                // SAFETY: both are host ranges valid per the caller's contract; `copy`
                // tolerates overlap (undefined in HIP, harmless here).
                unsafe {
                    std::ptr::copy(
                        (src as usize + r * rows.src_pitch) as *const u8,
                        (dst as usize + r * rows.dst_pitch) as *mut u8,
                        rows.width,
                    )
                };
            }
            Ok(())
        }
    }
}

/// A piece of a row that fits in the staging buffer: (row, offset in row, length).
fn segments(rows: Rows) -> impl Iterator<Item = (usize, usize, usize)> {
    (0..rows.height).flat_map(move |r| {
        (0..rows.width)
            .step_by(STAGING_BYTES)
            .map(move |off| (r, off, (rows.width - off).min(STAGING_BYTES)))
    })
}

/// Groups row segments into batches whose total length fits the staging buffer.
fn staging_batches(rows: Rows) -> Vec<Vec<(usize, usize, usize)>> {
    let mut batches: Vec<Vec<(usize, usize, usize)>> = Vec::new();
    let mut used = STAGING_BYTES;
    for seg in segments(rows) {
        if used + seg.2 > STAGING_BYTES {
            batches.push(Vec::new());
            used = 0;
        }
        used += seg.2;
        batches.last_mut().expect("pushed above").push(seg);
    }
    batches
}

/// Copies `rows` between two sides at least one of which `device` serves. Both sides
/// reachable by the engine: one engine copy per row, batched on one signal. A pageable side:
/// rows are packed into the staging buffer and moved by the CPU on that side.
fn copy_rows(
    device: &Device,
    (dst, dst_side): (usize, Side),
    (src, src_side): (usize, Side),
    rows: Rows,
) -> HipResult {
    let rt = runtime()?;
    let agent_of = |side: Side| -> HipResult<hsa_agent_t> {
        Ok(match side {
            Side::Device(d) => rt.device(d)?.agent,
            _ => device.cpu_agent,
        })
    };
    let engine_base = |ptr: usize, side: Side| match side {
        Side::Pinned(engine) => engine,
        _ => ptr,
    };
    let copy = device.copy.lock();
    let staging = copy.staging.as_ptr() as usize;
    match (dst_side, src_side) {
        (Side::Pageable, Side::Pageable) => unreachable!("host-to-host copies use the CPU"),
        (Side::Pageable, src_side) => {
            let (src_agent, src_base) = (agent_of(src_side)?, engine_base(src, src_side));
            for batch in staging_batches(rows) {
                let mut at = 0;
                let copies: Vec<EngineCopy> = batch
                    .iter()
                    .map(|&(r, off, len)| {
                        let c = EngineCopy {
                            dst: staging + at,
                            dst_agent: device.cpu_agent,
                            src: src_base + r * rows.src_pitch + off,
                            src_agent,
                            len,
                        };
                        at += len;
                        c
                    })
                    .collect();
                engine_copies(device, &copy.signal, true, &copies)?;
                let mut at = 0;
                for &(r, off, len) in &batch {
                    // SAFETY: the destination row is caller-valid host memory; staging holds
                    // the batch (at most STAGING_BYTES).
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            (staging + at) as *const u8,
                            (dst + r * rows.dst_pitch + off) as *mut u8,
                            len,
                        )
                    };
                    at += len;
                }
            }
        }
        (dst_side, Side::Pageable) => {
            let (dst_agent, dst_base) = (agent_of(dst_side)?, engine_base(dst, dst_side));
            for batch in staging_batches(rows) {
                let mut at = 0;
                let mut copies = Vec::with_capacity(batch.len());
                for &(r, off, len) in &batch {
                    // SAFETY: the source row is caller-valid host memory; staging holds the
                    // batch (at most STAGING_BYTES).
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            (src + r * rows.src_pitch + off) as *const u8,
                            (staging + at) as *mut u8,
                            len,
                        )
                    };
                    copies.push(EngineCopy {
                        dst: dst_base + r * rows.dst_pitch + off,
                        dst_agent,
                        src: staging + at,
                        src_agent: device.cpu_agent,
                        len,
                    });
                    at += len;
                }
                engine_copies(device, &copy.signal, true, &copies)?;
            }
        }
        (dst_side, src_side) => {
            let (dst_agent, dst_base) = (agent_of(dst_side)?, engine_base(dst, dst_side));
            let (src_agent, src_base) = (agent_of(src_side)?, engine_base(src, src_side));
            let copies: Vec<EngineCopy> =
                if rows.width == rows.dst_pitch && rows.width == rows.src_pitch {
                    // Contiguous on both sides: one copy.
                    vec![EngineCopy {
                        dst: dst_base,
                        dst_agent,
                        src: src_base,
                        src_agent,
                        len: rows.width * rows.height,
                    }]
                } else {
                    (0..rows.height)
                        .map(|r| EngineCopy {
                            dst: dst_base + r * rows.dst_pitch,
                            dst_agent,
                            src: src_base + r * rows.src_pitch,
                            src_agent,
                            len: rows.width,
                        })
                        .collect()
                };
            for chunk in copies.chunks(MAX_BATCH) {
                engine_copies(device, &copy.signal, false, chunk)?;
            }
        }
    }
    Ok(())
}

/// Most copies in flight on one signal (bounds the engine's queue of outstanding copies).
const MAX_BATCH: usize = 256;

/// Submits `copies` to the copy engine with one completion signal and waits for all.
/// `staged`: one side is the pinned staging buffer (for the trace and stats).
fn engine_copies(
    device: &Device,
    signal: &crate::hsa::signal::Signal,
    staged: bool,
    copies: &[EngineCopy],
) -> HipResult {
    if copies.is_empty() {
        return Ok(());
    }
    let submit_ns = if crate::trace::recording() {
        crate::trace::record::now_ns()
    } else {
        0
    };
    signal.store(copies.len() as i64);
    for (i, c) in copies.iter().enumerate() {
        // SAFETY: both ranges are device-accessible (device memory, pinned/registered host
        // memory or the staging buffer) and cover `len` bytes until the wait below; no
        // dependency signals; the runtime places the copy.
        let started = unsafe { device.engines.start(c, &[], signal.handle, None) };
        if let Err(e) = started {
            // Account for the copies never submitted, then wait for those that were.
            signal.add(-((copies.len() - i) as i64));
            let _ = signal.wait_zero(device.timestamp_hz, || None::<HipError>);
            return Err(e.into());
        }
    }
    let bytes: usize = copies.iter().map(|c| c.len).sum();
    let is_host = |agent: hsa_agent_t| agent.handle == device.cpu_agent.handle;
    let direction =
        crate::trace::Direction::of(is_host(copies[0].src_agent), is_host(copies[0].dst_agent));
    tracing::debug!(
        target: "hipshim::copy",
        device = device.index,
        engine = "runtime",
        bytes,
        pieces = copies.len(),
        direction = direction.label(),
        staged,
        "copies submitted to the copy engine"
    );
    signal
        .wait_zero(device.timestamp_hz, || None::<HipError>)
        .map_err(|_| HipError::UNKNOWN)?;
    if crate::trace::recording() {
        crate::trace::record::copy_completed(
            crate::trace::record::CopyInfo {
                engine: None,
                device: device.index as u32,
                bytes: bytes as u64,
                pieces: copies.len() as u32,
                direction,
                staged,
                submit_ns,
            },
            signal.handle,
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Fills

/// Fills `count` elements of `pattern.len()` bytes (1, 2 or 4) at `dst` with the
/// pattern (hipMemset, hipMemsetD8/D16/D32).
pub fn memset_pattern(dst: *mut c_void, pattern: &[u8], count: usize) -> HipResult {
    let size = count
        .checked_mul(pattern.len())
        .ok_or(HipError::INVALID_VALUE)?;
    memset_2d_pattern(dst, size, pattern, size, 1)
}

/// Fills `size` bytes at `dst` with `value` (checked against the registry, so any pointer
/// value is safe to pass).
pub fn memset(dst: *mut c_void, value: u8, size: usize) -> HipResult {
    memset_pattern(dst, &[value], size)
}

/// `hipMemset2D`: `height` rows of `width` bytes, `pitch` apart.
pub fn memset_2d(
    dst: *mut c_void,
    pitch: usize,
    value: u8,
    width: usize,
    height: usize,
) -> HipResult {
    if width > pitch && height > 1 {
        return Err(HipError::INVALID_PITCH_VALUE);
    }
    memset_2d_pattern(dst, pitch, &[value], width, height)
}

fn memset_2d_pattern(
    dst: *mut c_void,
    pitch: usize,
    pattern: &[u8],
    width: usize,
    height: usize,
) -> HipResult {
    if width == 0 || height == 0 {
        return Ok(());
    }
    if dst.is_null() {
        return Err(HipError::INVALID_VALUE);
    }
    let rows = Rows {
        width,
        height,
        dst_pitch: pitch,
        src_pitch: width,
    };
    let extent = rows.extent(pitch).ok_or(HipError::INVALID_VALUE)?;
    let side = classify(dst as usize, extent, Some(true), "memset")?;
    let rt = runtime()?;
    match side {
        Side::Device(d) => {
            let device = rt.device(d)?;
            device.synchronize()?;
            let copy = device.copy.lock();
            let fill = width.min(STAGING_BYTES);
            // SAFETY: the staging buffer holds STAGING_BYTES and is ours while `copy` is
            // locked; the pattern repeats from offset 0 (width is a multiple of its size).
            let staging = unsafe { std::slice::from_raw_parts_mut(copy.staging.as_ptr(), fill) };
            for (i, b) in staging.iter_mut().enumerate() {
                *b = pattern[i % pattern.len()];
            }
            // Every segment starts at a multiple of STAGING_BYTES within its row, a multiple
            // of the pattern size, so the staged pattern lines up.
            let copies: Vec<EngineCopy> = segments(rows)
                .map(|(r, off, len)| EngineCopy {
                    dst: dst as usize + r * pitch + off,
                    dst_agent: device.agent,
                    src: copy.staging.as_ptr() as usize,
                    src_agent: device.cpu_agent,
                    len,
                })
                .collect();
            for chunk in copies.chunks(MAX_BATCH) {
                engine_copies(device, &copy.signal, true, chunk)?;
            }
            Ok(())
        }
        Side::Pinned(_) => {
            // Host memory: the CPU fills it once the devices are done with it.
            synchronize_all()?;
            for r in 0..height {
                // SAFETY: the registry says this range is live host memory of ours.
                let row = unsafe {
                    std::slice::from_raw_parts_mut((dst as usize + r * pitch) as *mut u8, width)
                };
                for (i, b) in row.iter_mut().enumerate() {
                    *b = pattern[i % pattern.len()];
                }
            }
            Ok(())
        }
        Side::Pageable => unreachable!("classify rejects unknown ranges said to be device"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake(start: usize, size: usize, device: usize, kind: MemKind) -> Allocation {
        Allocation {
            start,
            size,
            device,
            kind,
            flags: 0,
            device_address: start,
        }
    }

    #[test]
    fn lookup_finds_ranges_inside_entries_only() {
        insert(fake(0x10_0000, 0x100, 3, MemKind::Device), Backing::None);
        assert_eq!(lookup(0x10_0000, 0x100).map(|a| a.device), Some(3));
        assert_eq!(lookup(0x10_0080, 0x80).map(|a| a.device), Some(3));
        assert_eq!(lookup(0x10_0080, 0x81), None);
        assert_eq!(lookup(0x0f_ffff, 1), None);
        assert_eq!(residence(0x10_0010, 4, "x"), Ok(Residence::Device(3)));
        ALLOCATIONS.write().remove(&0x10_0000);
    }

    #[test]
    fn host_kinds_are_pinned_residence_and_translate_engine_addresses() {
        let mut reg = fake(0x20_0000, 0x1000, 0, MemKind::Registered);
        reg.device_address = 0x7000_0000;
        insert(reg, Backing::None);
        assert_eq!(residence(0x20_0010, 16, "x"), Ok(Residence::PinnedHost));
        assert_eq!(engine_address(0x20_0010), 0x7000_0010);
        let pageable = [0u8; 64];
        let host = pageable.as_ptr() as usize;
        assert_eq!(residence(host, 64, "x"), Ok(Residence::Pageable));
        assert_eq!(
            classify(0x20_0000, 8, Some(true), "x"),
            Ok(Side::Pinned(0x7000_0000))
        );
        assert_eq!(
            classify(host, 8, Some(true), "x"),
            Err(HipError::INVALID_VALUE)
        );
        assert_eq!(classify(host, 8, None, "x"), Ok(Side::Pageable));
        ALLOCATIONS.write().remove(&0x20_0000);
    }

    #[test]
    fn ranges_that_leave_their_allocation_are_refused() {
        insert(fake(0x40_0000, 0x1000, 0, MemKind::Device), Backing::None);
        insert(fake(0x40_1000, 0x1000, 0, MemKind::Device), Backing::None);
        insert(
            fake(0x50_0000, 0x1000, 0, MemKind::PinnedHost),
            Backing::None,
        );
        let bad = Err(HipError::INVALID_VALUE);
        assert_eq!(classify(0x40_0000, 0x1000, None, "x"), Ok(Side::Device(0)));
        assert_eq!(classify(0x40_0fff, 1, None, "x"), Ok(Side::Device(0)));
        // One byte into the neighbour, from the start and from inside.
        assert_eq!(classify(0x40_0000, 0x1001, None, "x"), bad);
        assert_eq!(classify(0x40_0fff, 2, Some(true), "x"), bad);
        assert_eq!(classify(0x50_0001, 0x1000, None, "x"), bad);
        // Huge lengths: past the allocation, and wrapping around the address space.
        assert_eq!(classify(0x40_0000, 1 << 63, None, "x"), bad);
        assert_eq!(classify(0x40_0000, usize::MAX, None, "x"), bad);
        assert_eq!(
            classify(0x40_0000, 0usize.wrapping_sub(0x40_0000), None, "x"),
            bad
        );
        // Starting before a device allocation and running into it.
        assert_eq!(classify(0x3f_fff0, 0x20, None, "x"), bad);
        assert_eq!(
            residence(0x40_0800, 0x1000, "x"),
            Err(HipError::INVALID_VALUE)
        );
        for start in [0x40_0000, 0x40_1000, 0x50_0000] {
            ALLOCATIONS.write().remove(&start);
        }
    }

    #[test]
    fn a_pageable_range_over_an_unmapped_page_is_invalid() {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        // SAFETY: a fresh private anonymous mapping; its second page is unmapped again.
        let base = unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                3 * page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(p, libc::MAP_FAILED);
            assert_eq!(libc::munmap((p as usize + page) as *mut c_void, page), 0);
            p as usize
        };
        assert_eq!(
            classify(base, page + 1, None, "x"),
            Err(HipError::INVALID_VALUE)
        );
        // SAFETY: the two pages still mapped above.
        unsafe {
            libc::munmap(base as *mut c_void, page);
            libc::munmap((base + 2 * page) as *mut c_void, page);
        }
    }

    #[test]
    fn copy_kinds_beyond_default_are_rejected() {
        assert_eq!(CopyKind::from_raw(4), Ok(CopyKind::Default));
        assert_eq!(
            CopyKind::from_raw(5),
            Err(HipError::INVALID_MEMCPY_DIRECTION)
        );
    }

    #[test]
    fn pitch_rounds_rows_up_to_the_alignment() {
        assert_eq!(pitch_for(1), Some(256));
        assert_eq!(pitch_for(256), Some(256));
        assert_eq!(pitch_for(257), Some(512));
        assert_eq!(pitch_for(usize::MAX), None);
    }

    #[test]
    fn row_extent_covers_first_to_last_byte() {
        let rows = Rows {
            width: 10,
            height: 3,
            dst_pitch: 64,
            src_pitch: 10,
        };
        assert_eq!(rows.extent(64), Some(138));
        assert_eq!(rows.extent(10), Some(30));
        assert_eq!(Rows::linear(7).extent(7), Some(7));
    }

    #[test]
    fn staging_batches_split_rows_and_fill_the_buffer() {
        let rows = Rows {
            width: STAGING_BYTES + 10,
            height: 2,
            dst_pitch: STAGING_BYTES + 10,
            src_pitch: STAGING_BYTES + 10,
        };
        let batches = staging_batches(rows);
        let total: usize = batches.iter().flatten().map(|s| s.2).sum();
        assert_eq!(total, 2 * (STAGING_BYTES + 10));
        for b in &batches {
            assert!(b.iter().map(|s| s.2).sum::<usize>() <= STAGING_BYTES);
        }
        let small = Rows {
            width: 100,
            height: 5,
            dst_pitch: 256,
            src_pitch: 100,
        };
        assert_eq!(staging_batches(small).len(), 1);
    }
}

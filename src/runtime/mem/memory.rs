//! Memory: the registry of every address range the runtime knows (device allocations,
//! pinned host allocations, registered host ranges, managed allocations and device globals
//! of loaded code objects), allocation and freeing, pointer queries, and [`classify`], the
//! one bounds check of every copy and fill (which `copy.rs` runs).

use crate::error::{HipError, HipResult};
use crate::hsa::memory::{HostLock, PoolBuffer};
use crate::runtime::base::compat::Abi;
use crate::runtime::devices::current;
use crate::runtime::devices::device::{self, Device};
use crate::runtime::devices::device_props;
use hsa_abi::hsa_agent_t;
use parking_lot::RwLock;
use std::collections::BTreeMap;
use std::ffi::c_void;

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
    /// `hipMallocAsync`/`hipMallocFromPoolAsync`: device memory of a stream-ordered pool
    /// (`mempool.rs`), which owns the backing; the entry only says the range is in use.
    Pooled,
    /// One mapping of a physical allocation into a reserved range (`hipMemMap`, `vmm.rs`,
    /// which owns it). Consecutive mappings make one range for copies and fills.
    Virtual,
    /// Another process's device memory, opened by `hipIpcOpenMemHandle` (`ipc.rs`, which
    /// owns it).
    Imported,
}

impl MemKind {
    pub fn is_host(self) -> bool {
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
    /// Device memory: the other devices granted access to it (a bit per device index), by
    /// peer access or for a copy between the two (see `peer.rs`).
    pub reach: u64,
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
    /// `HIP_POINTER_ATTRIBUTE_BUFFER_ID`: unique over the process's life, so memory
    /// allocated again at a freed allocation's address gets another.
    buffer_id: u32,
}

static NEXT_BUFFER_ID: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);

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

pub use host_pages::host_range_mapped;

fn insert(alloc: Allocation, backing: Backing) {
    ALLOCATIONS.write().insert(
        alloc.start,
        Entry {
            alloc,
            backing,
            buffer_id: NEXT_BUFFER_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        },
    );
}

/// `HIP_POINTER_ATTRIBUTE_BUFFER_ID` of the live allocation starting at `start`.
pub fn buffer_id(start: usize) -> Option<u32> {
    ALLOCATIONS.read().get(&start).map(|e| e.buffer_id)
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
            reach: 0,
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
/// Bytes of `device`'s memory its allocations use up, each counted in whole allocation
/// granules (`granule`, the device pool's unit), as the device spends them: a 2-byte
/// hipMalloc costs a granule of free memory.
pub fn device_bytes_in_use(device: usize, granule: usize) -> usize {
    ALLOCATIONS
        .read()
        .values()
        .map(|e| &e.alloc)
        .filter(|a| matches!(a.kind, MemKind::Device | MemKind::Pooled) && a.device == device)
        .map(|a| a.size.max(1).next_multiple_of(granule.max(1)))
        .sum()
}

// ---------------------------------------------------------------------------------------
// Allocation

/// `hipMalloc` on `device` (the current device).
pub fn malloc(device: &Device, size: usize) -> HipResult<*mut c_void> {
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
    // The devices that enabled peer access to this one reach the new memory too; an enable
    // waits until it is recorded (and then finds it).
    let readers = device.peer_readers.lock();
    // Whatever the runtime's reason, a failed hipMalloc is out of memory (AMD's and CUDA's
    // contract), not the runtime error the status would otherwise be.
    let buffer = device.device_pool.allocate(size, &[]).map_err(|e| {
        tracing::warn!(size, status = %device.api.describe(e.status), "device allocation failed");
        HipError::OUT_OF_MEMORY
    })?;
    if *readers != 0 {
        buffer
            .allow_access(&agents_reaching(&device.all_gpus, device.index, *readers))
            .map_err(|e| {
                tracing::warn!(size, status = %device.api.describe(e.status), "granting peers access to a new allocation failed");
                HipError::OUT_OF_MEMORY
            })?;
    }
    let ptr = buffer.as_ptr() as *mut c_void;
    insert(
        Allocation {
            start: ptr as usize,
            size,
            device: device.index,
            kind: MemKind::Device,
            flags: 0,
            device_address: ptr as usize,
            reach: *readers,
        },
        Backing::Pool(buffer),
    );
    drop(readers);
    tracing::debug!(size, ptr = format_args!("{ptr:p}"), "hipMalloc");
    Ok(ptr)
}

/// `hipExtMallocWithFlags` flags (hip_runtime_api.h): one value each, not a bit set.
pub mod ext_malloc_flags {
    pub const DEFAULT: u32 = 0;
    pub const FINE_GRAINED: u32 = 1;
    pub const SIGNAL_MEMORY: u32 = 2;
    pub const UNCACHED: u32 = 3;
    pub const CONTIGUOUS: u32 = 4;
}

/// `hipExtMallocWithFlags`: device memory of `device`, as `flags` asks.
///
/// - `hipDeviceMallocDefault`, `hipDeviceMallocContiguous`: `hipMalloc`'s coarse-grained
///   memory (a software GPU has no physical pages whose contiguity could matter; on ROCr the
///   pool's allocations are what hipshim can offer).
/// - `hipDeviceMallocFinegrained`, `hipDeviceMallocUncached`: fine-grained memory, coherent
///   between the host and the devices while kernels run: the device's fine-grained pool where
///   the HSA runtime has one, else fine-grained system memory granted to the device (said once
///   in the log). Either way it is this device's memory to the registry and to pointer
///   queries, as AMD reports it.
/// - `hipMallocSignalMemory`: 8 bytes of fine-grained memory, zeroed (the value a new signal
///   starts at), for `hipStreamWaitValue*`; any other size is `hipErrorInvalidValue`, as AMD
///   answers.
///
/// Other flags are `hipErrorInvalidValue`.
pub fn malloc_with_flags(device: &Device, size: usize, flags: u32) -> HipResult<*mut c_void> {
    use ext_malloc_flags::*;
    match flags {
        DEFAULT | CONTIGUOUS => return malloc(device, size),
        FINE_GRAINED | UNCACHED => {}
        SIGNAL_MEMORY if size == 8 => {}
        SIGNAL_MEMORY => {
            tracing::warn!(size, "hipExtMallocWithFlags: signal memory is 8 bytes");
            return Err(HipError::INVALID_VALUE);
        }
        _ => {
            tracing::warn!(flags, "hipExtMallocWithFlags: not a hipDeviceMalloc flag");
            return Err(HipError::INVALID_VALUE);
        }
    }
    if size == 0 {
        return Ok(std::ptr::null_mut());
    }
    let pool = match &device.fine_pool {
        Some(pool) => pool,
        None => {
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                tracing::info!("the HSA runtime offers no fine-grained device memory: hipExtMallocWithFlags gives fine-grained system memory instead");
            });
            &device.host_pool
        }
    };
    if size > pool.size {
        tracing::warn!(size, pool = pool.size, "allocation larger than the pool");
        return Err(HipError::OUT_OF_MEMORY);
    }
    let readers = device.peer_readers.lock();
    let agents = agents_reaching(&device.all_gpus, device.index, *readers);
    let buffer = pool.allocate(size, &agents).map_err(|e| {
        tracing::warn!(size, status = %device.api.describe(e.status), "fine-grained allocation failed");
        HipError::OUT_OF_MEMORY
    })?;
    let ptr = buffer.as_ptr() as *mut c_void;
    if flags == SIGNAL_MEMORY {
        // SAFETY: fine-grained memory the host reaches, 8 bytes, just allocated and ours.
        unsafe { std::ptr::write_bytes(ptr as *mut u8, 0, size) };
    }
    insert(
        Allocation {
            start: ptr as usize,
            size,
            device: device.index,
            kind: MemKind::Device,
            flags,
            device_address: ptr as usize,
            reach: *readers,
        },
        Backing::Pool(buffer),
    );
    drop(readers);
    tracing::debug!(
        size,
        flags,
        ptr = format_args!("{ptr:p}"),
        "hipExtMallocWithFlags"
    );
    Ok(ptr)
}

/// Records a block a stream-ordered pool hands out: `size` bytes at `start` on `device`.
pub(crate) fn insert_pooled(start: usize, size: usize, device: usize) {
    insert(
        Allocation {
            start,
            size,
            device,
            kind: MemKind::Pooled,
            flags: 0,
            device_address: start,
            // Pools grant other devices access themselves (hipMemPoolSetAccess); peer access
            // does not apply to pool memory (CUDA's rule).
            reach: 0,
        },
        Backing::None,
    );
}

/// Forgets the pool block starting exactly at `ptr` (it goes back to its pool); `None` if
/// `ptr` is not the start of one.
pub(crate) fn remove_pooled(ptr: usize) -> Option<Allocation> {
    let mut table = ALLOCATIONS.write();
    if table.get(&ptr)?.alloc.kind != MemKind::Pooled {
        return None;
    }
    table.remove(&ptr).map(|e| e.alloc)
}

/// The registry entry starting exactly at `ptr`, if one does.
pub(crate) fn starting_at(ptr: usize) -> Option<Allocation> {
    ALLOCATIONS.read().get(&ptr).map(|e| e.alloc)
}

/// Records a mapping `hipMemMap` made: `size` bytes at `start`, memory of `device`.
pub(crate) fn insert_virtual(start: usize, size: usize, device: usize) {
    insert(
        Allocation {
            start,
            size,
            device,
            kind: MemKind::Virtual,
            flags: 0,
            device_address: start,
            // Access is per mapping (hipMemSetAccess), not peer access.
            reach: 0,
        },
        Backing::None,
    );
}

/// Records another process's memory `hipIpcOpenMemHandle` attached: `size` bytes at `start`,
/// reached by `device`.
pub(crate) fn insert_imported(start: usize, size: usize, device: usize) {
    insert(
        Allocation {
            start,
            size,
            device,
            kind: MemKind::Imported,
            flags: 0,
            device_address: start,
            reach: 0,
        },
        Backing::None,
    );
}

/// Forgets the imported range starting exactly at `start` (`hipIpcCloseMemHandle`).
pub(crate) fn remove_imported(start: usize) {
    let mut table = ALLOCATIONS.write();
    if table
        .get(&start)
        .is_some_and(|e| e.alloc.kind == MemKind::Imported)
    {
        table.remove(&start);
    }
}

/// Forgets the mapping starting exactly at `start` (`hipMemUnmap`).
pub(crate) fn remove_virtual(start: usize) {
    let mut table = ALLOCATIONS.write();
    if table
        .get(&start)
        .is_some_and(|e| e.alloc.kind == MemKind::Virtual)
    {
        table.remove(&start);
    }
}

/// The end of the run of virtual-memory mappings that follow each other from `alloc` on (its
/// own end for any other kind): a copy may cross from one mapping into the next, as the
/// device's page tables let it.
fn contiguous_end(table: &BTreeMap<usize, Entry>, alloc: &Allocation) -> usize {
    let mut end = alloc.start + alloc.size;
    if alloc.kind != MemKind::Virtual {
        return end;
    }
    while let Some(next) = table
        .get(&end)
        .filter(|e| e.alloc.kind == MemKind::Virtual && e.alloc.size > 0)
    {
        end += next.alloc.size;
    }
    end
}

/// Row pitches are multiples of the texture pitch alignment the device reports.
pub const PITCH_ALIGNMENT: usize = device_props::TEXTURE_ALIGNMENT;

/// The pitch `hipMallocPitch` gives a row of `width` bytes; `None` on overflow.
pub fn pitch_for(width: usize) -> Option<usize> {
    width
        .checked_add(PITCH_ALIGNMENT - 1)
        .map(|w| w / PITCH_ALIGNMENT * PITCH_ALIGNMENT)
}

/// `hipMallocPitch`: (pointer, pitch); a zero width or height gives (null, 0) as AMD does.
pub fn malloc_pitch(
    device: &Device,
    width: usize,
    height: usize,
) -> HipResult<(*mut c_void, usize)> {
    if width == 0 || height == 0 {
        return Ok((std::ptr::null_mut(), 0));
    }
    let pitch = pitch_for(width).ok_or(HipError::INVALID_VALUE)?;
    let size = pitch.checked_mul(height).ok_or(HipError::OUT_OF_MEMORY)?;
    Ok((malloc(device, size)?, pitch))
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

/// Fine-grained system memory every device may access (hipHostMalloc, hipMallocManaged),
/// through `device` (the current device).
fn allocate_host(
    device: &Device,
    size: usize,
    kind: MemKind,
    flags: u32,
) -> HipResult<*mut c_void> {
    // As for hipMalloc, failing to get the memory is out of memory; failing to let every
    // device reach it is the runtime's error (which frees the memory).
    let buffer = device.host_pool.allocate(size, &[]).map_err(|e| {
        tracing::warn!(size, status = %device.api.describe(e.status), "host allocation failed");
        HipError::OUT_OF_MEMORY
    })?;
    buffer.allow_access(&device.all_gpus)?;
    let ptr = buffer.as_ptr() as *mut c_void;
    insert(
        Allocation {
            start: ptr as usize,
            size,
            device: device.index,
            kind,
            flags,
            device_address: ptr as usize,
            reach: 0,
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
pub fn host_malloc(device: &Device, size: usize, flags: u32) -> HipResult<*mut c_void> {
    use host_flags::*;
    if flags & !ALL != 0 || flags & (COHERENT | NON_COHERENT) == COHERENT | NON_COHERENT {
        tracing::warn!(flags, "hipHostMalloc: invalid flags");
        return Err(HipError::INVALID_VALUE);
    }
    if size == 0 {
        return Ok(std::ptr::null_mut());
    }
    allocate_host(device, size, MemKind::PinnedHost, flags)
}

/// `hipMallocManaged`: host-visible memory kernels can use (fine-grained system memory).
pub fn malloc_managed(device: &Device, size: usize, flags: u32) -> HipResult<*mut c_void> {
    if size == 0 || (flags != host_flags::ATTACH_GLOBAL && flags != host_flags::ATTACH_HOST) {
        tracing::warn!(size, flags, "hipMallocManaged: zero size or invalid flags");
        return Err(HipError::INVALID_VALUE);
    }
    if size > device.device_pool.size {
        return Err(HipError::OUT_OF_MEMORY);
    }
    allocate_host(device, size, MemKind::Managed, flags)
}

/// Waits for every device (host memory may be in use by kernels on any of them).
pub(crate) fn synchronize_all(devices: &[Device]) -> HipResult {
    for device in devices {
        device.synchronize()?;
    }
    Ok(())
}

/// Frees a registry entry of one of `kinds` starting exactly at `ptr`, after the work of
/// the `devices` that may use it.
fn free_kinds(devices: &[Device], ptr: *mut c_void, kinds: &[MemKind], what: &str) -> HipResult {
    if ptr.is_null() {
        return Ok(());
    }
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
        synchronize_all(devices)?;
    } else {
        device::nth(devices, alloc.device)?.synchronize()?;
        // Devices granted access (peer access, copies) may be using it too.
        for reader in devices.iter().filter(|d| alloc.reach & (1 << d.index) != 0) {
            reader.synchronize()?;
        }
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
pub unsafe fn free(devices: &[Device], ptr: *mut c_void) -> HipResult {
    free_kinds(
        devices,
        ptr,
        &[MemKind::Device, MemKind::Managed, MemKind::PinnedHost],
        "hipFree",
    )
}

/// `hipHostFree`: memory from hipHostMalloc only.
pub fn host_free(devices: &[Device], ptr: *mut c_void) -> HipResult {
    free_kinds(devices, ptr, &[MemKind::PinnedHost], "hipHostFree")
}

/// `hipHostRegister`: locks `[ptr, ptr + size)` for access by every one of `devices`, through
/// the current one.
///
/// # Safety
/// `[ptr, ptr + size)` must be live host memory of the caller (HIP's contract); it is pinned
/// by the HSA runtime until [`host_unregister`].
pub unsafe fn host_register(
    devices: &[Device],
    ptr: *mut c_void,
    size: usize,
    flags: u32,
) -> HipResult {
    if ptr.is_null() || size == 0 || flags & !host_flags::REGISTER_ALL != 0 {
        return Err(HipError::INVALID_VALUE);
    }
    let start = ptr as usize;
    let end = start.checked_add(size).ok_or(HipError::INVALID_VALUE)?;
    let device = current::device(devices)?;
    {
        let table = ALLOCATIONS.read();
        // Known ranges never overlap one another: walking back from `end`, the ones that
        // overlap the new range come first.
        let overlapping: Vec<(usize, MemKind)> = table
            .range(..end)
            .rev()
            .take_while(|(_, e)| e.alloc.start + e.alloc.size > start)
            .map(|(&at, e)| (at, e.alloc.kind))
            .collect();
        // A registration at the same address is replaced: AMD's runtime does not check, and
        // programs (hip-tests among them) free registered memory without hipHostUnregister
        // and register the allocator's next block, at the same address, again. Overlapping
        // any other known range is CUDA's "already registered".
        let replaces = overlapping == [(start, MemKind::Registered)];
        drop(table);
        if replaces {
            tracing::warn!(
                ptr = format_args!("{ptr:p}"),
                size,
                "hipHostRegister of an address already registered: the new registration replaces the old one"
            );
            synchronize_all(devices)?;
            if let Some(old) = ALLOCATIONS.write().remove(&start) {
                old.backing.release()?;
            }
        } else if !overlapping.is_empty() {
            tracing::warn!(
                ptr = format_args!("{ptr:p}"),
                size,
                "hipHostRegister: the range overlaps memory the runtime already knows"
            );
            return Err(HipError::HOST_MEMORY_ALREADY_REGISTERED);
        }
    }
    // SAFETY: the caller's range is live host memory until hipHostUnregister, which drops
    // the lock.
    let lock = unsafe { HostLock::lock(device.api, ptr, size, &device.all_gpus) }.map_err(|e| {
        // ROCr fails the lock of memory that is not mapped (the driver cannot pin it), and
        // so does hsasim.
        tracing::warn!(
            ptr = format_args!("{ptr:p}"),
            size,
            status = %device.api.describe(e.status),
            "hipHostRegister: hsa_amd_memory_lock failed (is the whole range mapped?)"
        );
        // AMD's answer after ROCm 5.2 (which gave hipErrorOutOfMemory); hip-tests 5.4 check it.
        HipError::INVALID_VALUE
    })?;
    insert(
        Allocation {
            start,
            size,
            device: device.index,
            kind: MemKind::Registered,
            flags,
            device_address: lock.agent_address(),
            reach: 0,
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
pub unsafe fn host_unregister(devices: &[Device], ptr: *mut c_void) -> HipResult {
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
    synchronize_all(devices)?;
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

/// `hipMemGetInfo` for `device` (the current device): (free, total).
pub fn mem_get_info(device: &Device) -> HipResult<(usize, usize)> {
    let total = device.device_pool.size;
    let ours_free = total.saturating_sub(device_bytes_in_use(
        device.index,
        device.device_pool.granule,
    ));
    // Other processes' allocations too, where the HSA runtime counts them (a real GPU, or
    // hsasim's shared device): never more than the device itself has left.
    let device_free = crate::hsa::agent_value::<u64>(
        device.api,
        device.agent,
        hsa_abi::agent_info::AMD_MEMORY_AVAIL,
    );
    let free = device_free.map_or(ours_free, |f| ours_free.min(f as usize));
    Ok((free, total))
}

/// `hipMemPtrGetInfo`: the size of the allocation containing `ptr` (the caller has started
/// the runtime).
pub fn mem_ptr_get_info(ptr: *mut c_void) -> HipResult<usize> {
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
    // Released outside the lock, as every free is. Memory the CPU reaches directly (pinned
    // host, managed) is forgotten but left mapped, as AMD's runtime leaves it: a thread may
    // still be filling such a buffer, and a runtime must not turn that into a fault. It stays
    // until the process ends.
    let mut kept = (0usize, 0usize);
    for entry in doomed {
        if matches!(entry.alloc.kind, MemKind::PinnedHost | MemKind::Managed) {
            if let Backing::Pool(buffer) = entry.backing {
                kept = (kept.0 + 1, kept.1 + buffer.len());
                std::mem::forget(buffer);
                continue;
            }
        }
        if let Err(e) = entry.backing.release() {
            tracing::warn!(error = %e, "hipDeviceReset: freeing an allocation failed");
        }
    }
    if kept.0 > 0 {
        tracing::info!(
            allocations = kept.0,
            bytes = kept.1,
            "hipDeviceReset: host-reachable allocations forgotten but left mapped until exit"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Access of other devices (peer access and copies between devices: `peer.rs`)

/// The agents of `owner` and of the devices in `readers` (a bit per index), of `gpus` (every
/// device's agent, by ordinal: `Device::all_gpus`): the list an HSA grant of `owner`'s memory
/// names.
fn agents_reaching(gpus: &[hsa_agent_t], owner: usize, readers: u64) -> Vec<hsa_agent_t> {
    gpus.iter()
        .enumerate()
        .filter(|&(index, _)| index == owner || readers & (1 << index) != 0)
        .map(|(_, &agent)| agent)
        .collect()
}

/// Grants `reader` access to `alloc`'s memory (whose entry is `entry`), unless it has it: the
/// HSA grant names every device that may reach it (the owner and all granted), so a runtime
/// that maps exactly the agents listed keeps the earlier grants.
fn grant_entry(gpus: &[hsa_agent_t], entry: &mut Entry, reader: usize) -> HipResult {
    let alloc = &mut entry.alloc;
    let bit = 1u64 << reader;
    if alloc.kind != MemKind::Device || reader == alloc.device || alloc.reach & bit != 0 {
        return Ok(());
    }
    let Backing::Pool(buffer) = &entry.backing else {
        return Ok(());
    };
    let agents = agents_reaching(gpus, alloc.device, alloc.reach | bit);
    buffer.allow_access(&agents).map_err(|e| {
        tracing::warn!(
            allocation = format_args!("{:#x}", alloc.start),
            owner = alloc.device,
            reader,
            error = %e,
            "granting a device access to another device's memory failed"
        );
        HipError::PEER_ACCESS_UNSUPPORTED
    })?;
    alloc.reach |= bit;
    Ok(())
}

/// Lets device `reader` reach the device allocation containing `ptr` (a no-op for its own
/// memory and for memory every device reaches); `gpus` as for [`agents_reaching`].
pub(crate) fn grant_containing(gpus: &[hsa_agent_t], ptr: usize, reader: usize) -> HipResult {
    let mut table = ALLOCATIONS.write();
    let Some((_, entry)) = table.range_mut(..=ptr).next_back() else {
        return Ok(());
    };
    if ptr - entry.alloc.start >= entry.alloc.size.max(1) {
        return Ok(());
    }
    grant_entry(gpus, entry, reader)
}

/// Lets device `reader` reach every allocation of device `owner` (hipDeviceEnablePeerAccess);
/// the caller holds `owner`'s `peer_readers`, so no allocation is being made meanwhile.
/// `gpus` as for [`agents_reaching`].
pub(crate) fn grant_all(gpus: &[hsa_agent_t], owner: usize, reader: usize) -> HipResult {
    let mut table = ALLOCATIONS.write();
    for entry in table.values_mut().filter(|e| e.alloc.device == owner) {
        grant_entry(gpus, entry, reader)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Pointer attributes

/// `hipMemoryType` as ROCm 6 and 7 number it.
pub mod memory_type {
    pub const UNREGISTERED: u32 = 0;
    pub const HOST: u32 = 1;
    pub const DEVICE: u32 = 2;
    pub const MANAGED: u32 = 3;
    pub const ARRAY: u32 = 10;

    /// ROCm 5's numbering (its enum had no "unregistered" and no "managed": managed memory
    /// was host memory with `isManaged` set).
    pub mod rocm5 {
        pub const HOST: u32 = 0;
        pub const DEVICE: u32 = 1;
        pub const ARRAY: u32 = 2;
    }

    /// `type` (ROCm 6 numbering) as the process's ABI numbers it.
    pub fn for_abi(type_: u32, abi: crate::runtime::base::compat::Abi) -> u32 {
        if abi != crate::runtime::base::compat::Abi::Rocm5 {
            return type_;
        }
        match type_ {
            DEVICE => rocm5::DEVICE,
            ARRAY => rocm5::ARRAY,
            _ => rocm5::HOST,
        }
    }
}

/// `hipInvalidDeviceId`: the device ROCm 6 reports for memory it does not know.
pub const INVALID_DEVICE_ID: i32 = -2;

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

/// `hipPointerGetAttributes` as the process's ABI answers it (`runtime::base::compat`; the caller
/// has started the runtime):
/// - memory the runtime does not know: ROCm 5 says hipErrorInvalidValue; ROCm 6 and 7 say
///   `hipMemoryTypeUnregistered` with device `hipInvalidDeviceId` (success);
/// - a null pointer: an invalid value up to ROCm 6, unregistered memory from ROCm 7 on (which
///   follows CUDA 11);
/// - `type` in the ABI's numbering (ROCm 5: host 0, device 1; ROCm 6: unregistered 0, host 1,
///   device 2, managed 3).
pub fn pointer_attributes(ptr: *const c_void, abi: Abi) -> HipResult<PointerAttributes> {
    if ptr.is_null() && abi < Abi::Rocm7 {
        return Err(HipError::INVALID_VALUE);
    }
    let p = ptr as usize;
    let Some(a) = lookup(p, 1).filter(|_| !ptr.is_null()) else {
        if abi == Abi::Rocm5 {
            tracing::debug!(ptr = format_args!("{p:#x}"), "not memory the runtime knows");
            return Err(HipError::INVALID_VALUE);
        }
        return Ok(PointerAttributes {
            type_: memory_type::UNREGISTERED,
            device: INVALID_DEVICE_ID,
            device_pointer: std::ptr::null_mut(),
            host_pointer: std::ptr::null_mut(),
            is_managed: 0,
            allocation_flags: 0,
        });
    };
    let device_pointer = a.engine_address(p) as *mut c_void;
    let (type_, host_pointer) = match a.kind {
        MemKind::Device
        | MemKind::DeviceGlobal
        | MemKind::Pooled
        | MemKind::Virtual
        | MemKind::Imported => (memory_type::DEVICE, std::ptr::null_mut()),
        MemKind::PinnedHost | MemKind::Registered => (memory_type::HOST, p as *mut c_void),
        MemKind::Managed => (memory_type::MANAGED, p as *mut c_void),
    };
    Ok(PointerAttributes {
        type_: memory_type::for_abi(type_, abi),
        device: a.device as i32,
        device_pointer,
        host_pointer,
        is_managed: i32::from(a.kind == MemKind::Managed),
        allocation_flags: a.flags,
    })
}

/// One `hipPointer_attribute` answer, in the width AMD's runtime writes it (a `bool` is one
/// byte, `RANGE_SIZE` and `BUFFER_ID` are 32-bit there).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PointerValue {
    Bool(bool),
    U32(u32),
    I32(i32),
    Ptr(*mut c_void),
}

/// `hipPointer_attribute` values (ROCm 6's `driver_types.h`).
pub mod pointer_attribute {
    pub const CONTEXT: u32 = 1;
    pub const MEMORY_TYPE: u32 = 2;
    pub const DEVICE_POINTER: u32 = 3;
    pub const HOST_POINTER: u32 = 4;
    pub const P2P_TOKENS: u32 = 5;
    pub const SYNC_MEMOPS: u32 = 6;
    pub const BUFFER_ID: u32 = 7;
    pub const IS_MANAGED: u32 = 8;
    pub const DEVICE_ORDINAL: u32 = 9;
    pub const IS_LEGACY_HIP_IPC_CAPABLE: u32 = 10;
    pub const RANGE_START_ADDR: u32 = 11;
    pub const RANGE_SIZE: u32 = 12;
    pub const MAPPED: u32 = 13;
    pub const ALLOWED_HANDLE_TYPES: u32 = 14;
    pub const IS_GPU_DIRECT_RDMA_CAPABLE: u32 = 15;
    pub const ACCESS_FLAGS: u32 = 16;
    pub const MEMPOOL_HANDLE: u32 = 17;
}

/// `hipPointerGetAttribute`: the value of `attribute` for `ptr`, with the result of the query
/// (the caller has started the runtime).
/// As in AMD's runtime, memory the runtime does not know gets the attribute's default value
/// (0, false, null; device -2) and hipErrorInvalidValue (`hipDrvPointerGetAttributes` writes
/// those defaults and still succeeds); the attributes AMD does not support are
/// hipErrorNotSupported (logged, no value), the owning context among them.
pub fn pointer_attribute(
    attribute: u32,
    ptr: *const c_void,
    abi: Abi,
) -> HipResult<(Option<PointerValue>, HipResult)> {
    use pointer_attribute::*;
    use PointerValue::*;
    let p = ptr as usize;
    let found = lookup(p, 1);
    let unknown = Err(HipError::INVALID_VALUE);
    let value = |known: PointerValue, default: PointerValue| match found {
        Some(_) => (Some(known), Ok(())),
        None => (Some(default), unknown),
    };
    // For unknown memory only the defaults above are used; this stands in for the fields.
    let a = found.unwrap_or(Allocation {
        start: 0,
        size: 0,
        device: 0,
        kind: MemKind::Device,
        flags: 0,
        device_address: 0,
        reach: 0,
    });
    let host = a.kind.is_host();
    Ok(match attribute {
        // AMD: host for every host-side kind (managed included), device otherwise.
        MEMORY_TYPE => {
            let t = if host {
                memory_type::HOST
            } else {
                memory_type::DEVICE
            };
            value(U32(memory_type::for_abi(t, abi)), U32(0))
        }
        DEVICE_POINTER => value(
            Ptr(a.engine_address(p.max(a.start)) as *mut c_void),
            Ptr(std::ptr::null_mut()),
        ),
        HOST_POINTER if found.is_some() && !host => (Some(Ptr(std::ptr::null_mut())), unknown),
        HOST_POINTER => value(Ptr(p as *mut c_void), Ptr(std::ptr::null_mut())),
        // Synchronous copies and fills in hipshim are synchronous for every allocation:
        // the attribute holds for all of them.
        SYNC_MEMOPS => value(Bool(true), Bool(false)),
        BUFFER_ID => value(U32(buffer_id(a.start).unwrap_or(0)), U32(0)),
        IS_MANAGED => value(Bool(a.kind == MemKind::Managed), Bool(false)),
        DEVICE_ORDINAL => value(I32(a.device as i32), I32(INVALID_DEVICE_ID)),
        RANGE_START_ADDR => value(Ptr(a.start as *mut c_void), Ptr(std::ptr::null_mut())),
        RANGE_SIZE => value(U32(a.size as u32), U32(0)),
        MAPPED => value(Bool(true), Bool(false)),
        // hipMemAccessFlagsProtReadWrite for everything hipshim allocates.
        ACCESS_FLAGS => value(I32(3), I32(0)),
        CONTEXT
        | P2P_TOKENS
        | IS_LEGACY_HIP_IPC_CAPABLE
        | ALLOWED_HANDLE_TYPES
        | IS_GPU_DIRECT_RDMA_CAPABLE
        | MEMPOOL_HANDLE => {
            tracing::warn!(
                attribute,
                "pointer attribute not supported (as in AMD's runtime)"
            );
            (None, Err(HipError::NOT_SUPPORTED))
        }
        _ => {
            tracing::warn!(attribute, "unknown pointer attribute");
            (None, Err(HipError::INVALID_VALUE))
        }
    })
}

/// `hipPointerSetAttribute`: only `HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS` can be set (AMD's
/// rule), on memory the runtime knows (else hipErrorInvalidDevicePointer; the caller has
/// started the runtime). Setting it changes nothing: hipshim's synchronous memory operations
/// already are.
pub fn set_pointer_attribute(attribute: u32, ptr: *const c_void) -> HipResult {
    if attribute != pointer_attribute::SYNC_MEMOPS {
        tracing::warn!(
            attribute,
            "only HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS can be set"
        );
        return Err(HipError::INVALID_VALUE);
    }
    lookup(ptr as usize, 1)
        .map(|_| ())
        .ok_or(HipError::INVALID_DEVICE_POINTER)
}

// ---------------------------------------------------------------------------------------
// Classification of copy and fill ranges

/// How one side of a copy or fill is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
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
pub(crate) fn classify(
    ptr: usize,
    len: usize,
    says_device: Option<bool>,
    what: &str,
) -> HipResult<Side> {
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
            Some(a) => (Some((a, contiguous_end(&table, &a))), None),
            None => (
                None,
                table
                    .range(ptr..end)
                    .map(|(_, e)| e.alloc)
                    .find(|a| !a.kind.is_host()),
            ),
        }
    };
    if let Some((a, alloc_end)) = inside {
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

/// Test entries planted in the registry (without backing), removed again on drop.
#[cfg(test)]
pub(crate) struct TestEntries(Vec<usize>);

/// Plants `(start, size, kind, agent address)` entries for a test of code that reads the
/// registry.
#[cfg(test)]
pub(crate) fn test_registry(entries: &[(usize, usize, MemKind, usize)]) -> TestEntries {
    for &(start, size, kind, device_address) in entries {
        let alloc = Allocation {
            start,
            size,
            device: 0,
            kind,
            flags: 0,
            device_address,
            reach: 0,
        };
        insert(alloc, Backing::None);
    }
    TestEntries(entries.iter().map(|e| e.0).collect())
}

#[cfg(test)]
impl Drop for TestEntries {
    fn drop(&mut self) {
        let mut table = ALLOCATIONS.write();
        for start in &self.0 {
            table.remove(start);
        }
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
            reach: 0,
        }
    }

    #[test]
    fn lookup_finds_ranges_inside_entries_only() {
        insert(fake(0x10_0000, 0x100, 3, MemKind::Device), Backing::None);
        assert_eq!(lookup(0x10_0000, 0x100).map(|a| a.device), Some(3));
        assert_eq!(lookup(0x10_0080, 0x80).map(|a| a.device), Some(3));
        assert_eq!(lookup(0x10_0080, 0x81), None);
        assert_eq!(lookup(0x0f_ffff, 1), None);
        assert_eq!(classify(0x10_0010, 4, None, "x"), Ok(Side::Device(3)));
        ALLOCATIONS.write().remove(&0x10_0000);
    }

    #[test]
    fn host_kinds_are_reached_at_their_agent_address() {
        let mut reg = fake(0x20_0000, 0x1000, 0, MemKind::Registered);
        reg.device_address = 0x7000_0000;
        insert(reg, Backing::None);
        assert_eq!(
            classify(0x20_0010, 16, None, "x"),
            Ok(Side::Pinned(0x7000_0010))
        );
        let pageable = [0u8; 64];
        let host = pageable.as_ptr() as usize;
        assert_eq!(classify(host, 64, None, "x"), Ok(Side::Pageable));
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
            classify(0x40_0800, 0x1000, None, "x"),
            Err(HipError::INVALID_VALUE)
        );
        for start in [0x40_0000, 0x40_1000, 0x50_0000] {
            ALLOCATIONS.write().remove(&start);
        }
    }

    #[test]
    fn a_pageable_range_over_an_unmapped_page_is_invalid() {
        let holed = host_pages::testing::Holed::new(3, 1);
        let (base, page) = (holed.base, host_pages::page_size());
        assert_eq!(
            classify(base, page + 1, None, "x"),
            Err(HipError::INVALID_VALUE)
        );
        holed.release();
    }

    #[test]
    fn pitch_rounds_rows_up_to_the_alignment() {
        assert_eq!(pitch_for(1), Some(256));
        assert_eq!(pitch_for(256), Some(256));
        assert_eq!(pitch_for(257), Some(512));
        assert_eq!(pitch_for(usize::MAX), None);
    }
}

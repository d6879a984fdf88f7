//! Virtual memory management (`hipMemCreate`, `hipMemAddressReserve`, `hipMemMap`, ...):
//! CUDA's driver-API model, which HIP follows. Address ranges are reserved apart from any
//! memory; physical allocations are made apart from any address; a mapping puts (part of) an
//! allocation at an address of a reservation, and nothing may touch it before
//! `hipMemSetAccess` grants the devices access.
//!
//! All of it is the HSA runtime's (`hsa_amd_vmem_*`, `hsa::vmem`); a runtime without those
//! entry points (ROCm 5.2's ROCr) makes every call here hipErrorNotSupported, with a log line
//! naming the missing entry point, and `hipDeviceAttributeVirtualMemoryManagementSupported`
//! says 0.
//!
//! What hipshim keeps: the allocation handles it issued (`hipMemGenericAllocationHandle_t`,
//! each naming one HSA handle and the properties it was made with, alive while the program
//! holds a reference or a mapping uses it, as in CUDA: releasing a mapped allocation is
//! allowed, and its memory lives until unmapped), and the mappings, which it enters in the
//! memory table (`memory::insert_virtual`) so that copies, fills, kernels and pointer queries
//! know them; a copy may run through consecutive mappings.

use crate::error::{HipError, HipResult};
use crate::hsa::{vmem as hsa_vmem, HsaApi, HsaRuntime};
use crate::runtime::base::handles::HandleTable;
use crate::runtime::devices::device::{self, Device};
use crate::runtime::mem::memory;
use crate::runtime::mem::mempool::{access, MemAccessDesc, MemLocation};
use hsa_abi::{access_permission, hsa_amd_memory_access_desc_t};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::Arc;

/// `hipMemAllocationProp` (ROCm 6 and 7).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemAllocationProp {
    /// `hipMemAllocationType`: only `hipMemAllocationTypePinned` (1).
    pub type_: u32,
    /// `hipMemAllocationHandleType`: none (0) or a POSIX file descriptor (1).
    pub requested_handle_type: u32,
    pub location: MemLocation,
    pub win32_handle_meta_data: usize,
    pub compression_type: u8,
    pub gpu_direct_rdma_capable: u8,
    pub usage: u16,
}

const _: () = {
    assert!(std::mem::size_of::<MemAllocationProp>() == 32);
    assert!(std::mem::offset_of!(MemAllocationProp, location) == 8);
    assert!(std::mem::offset_of!(MemAllocationProp, win32_handle_meta_data) == 16);
    assert!(std::mem::offset_of!(MemAllocationProp, compression_type) == 24);
};

/// `hipMemAllocationTypePinned`.
const ALLOCATION_PINNED: u32 = 1;
/// `hipMemLocationTypeDevice`.
const LOCATION_DEVICE: u32 = 1;

/// `hipMemAllocationHandleType`.
pub mod handle_type {
    pub const NONE: u32 = 0;
    pub const POSIX_FILE_DESCRIPTOR: u32 = 1;
}

/// `hipMemAllocationGranularity_flags`.
pub mod granularity {
    pub const MINIMUM: u32 = 0;
    pub const RECOMMENDED: u32 = 1;
}

/// One physical allocation as the program holds it.
pub struct Allocation {
    hsa: u64,
    device: usize,
    prop: MemAllocationProp,
    /// (references the program holds, mappings): the handle ends when both are 0.
    uses: Mutex<(u32, u32)>,
}

static ALLOCATIONS: HandleTable<Allocation> = HandleTable::new("memory allocation", 0x10);

struct Mapping {
    len: usize,
    handle: usize,
}

/// Live mappings by address. Lock order: this, then the memory table.
static MAPPINGS: Mutex<BTreeMap<usize, Mapping>> = Mutex::new(BTreeMap::new());

/// The HSA entry points, if the HSA runtime has the VMM ones.
fn vmm_api(hsa: &HsaRuntime, call: &str) -> HipResult<&'static HsaApi> {
    if let Some(absent) = hsa_vmem::missing(hsa.api) {
        tracing::warn!(
            hsa = %hsa.api.path.display(),
            absent,
            "{call}: the HSA runtime has no virtual memory management"
        );
        return Err(HipError::NOT_SUPPORTED);
    }
    Ok(hsa.api)
}

fn device_of(devices: &[Device], location: &MemLocation, call: &str) -> HipResult<usize> {
    if location.type_ != LOCATION_DEVICE || location.id < 0 || location.id as usize >= devices.len()
    {
        tracing::warn!(
            location_type = location.type_,
            id = location.id,
            "{call}: the location must be a device"
        );
        return Err(HipError::INVALID_VALUE);
    }
    Ok(location.id as usize)
}

fn check_prop(devices: &[Device], prop: &MemAllocationProp, call: &str) -> HipResult<usize> {
    if prop.type_ != ALLOCATION_PINNED {
        tracing::warn!(
            type_ = prop.type_,
            "{call}: only hipMemAllocationTypePinned"
        );
        return Err(HipError::INVALID_VALUE);
    }
    device_of(devices, &prop.location, call)
}

/// `hipMemGetAllocationGranularity`: the device memory pool's granule.
pub fn allocation_granularity(
    hsa: &HsaRuntime,
    devices: &[Device],
    prop: &MemAllocationProp,
    option: u32,
) -> HipResult<usize> {
    let call = "hipMemGetAllocationGranularity";
    vmm_api(hsa, call)?;
    let device = check_prop(devices, prop, call)?;
    if !matches!(option, granularity::MINIMUM | granularity::RECOMMENDED) {
        tracing::warn!(option, "{call}: unknown option");
        return Err(HipError::INVALID_VALUE);
    }
    Ok(device::nth(devices, device)?
        .device_pool
        .granule(option == granularity::RECOMMENDED)?)
}

fn minimum_granule(devices: &[Device], device: usize) -> HipResult<usize> {
    Ok(device::nth(devices, device)?
        .device_pool
        .granule(false)?
        .max(1))
}

fn new_handle(hsa: u64, device: usize, prop: MemAllocationProp) -> usize {
    ALLOCATIONS.insert(Arc::new(Allocation {
        hsa,
        device,
        prop,
        uses: Mutex::new((1, 0)),
    }))
}

fn allocation(handle: usize, call: &str) -> HipResult<Arc<Allocation>> {
    ALLOCATIONS.get(handle).map_err(|_| {
        tracing::warn!(
            handle = format_args!("{handle:#x}"),
            "{call}: not a live allocation handle"
        );
        HipError::INVALID_VALUE
    })
}

/// `hipMemCreate`: `size` bytes (a multiple of the granularity) of the device's memory.
pub fn create(
    hsa: &HsaRuntime,
    devices: &[Device],
    size: usize,
    prop: &MemAllocationProp,
    flags: u64,
) -> HipResult<usize> {
    let call = "hipMemCreate";
    let api = vmm_api(hsa, call)?;
    let device = check_prop(devices, prop, call)?;
    if flags != 0 {
        tracing::warn!(flags, "{call}: flags must be 0");
        return Err(HipError::INVALID_VALUE);
    }
    if !matches!(
        prop.requested_handle_type,
        handle_type::NONE | handle_type::POSIX_FILE_DESCRIPTOR
    ) {
        tracing::warn!(
            handle_type = prop.requested_handle_type,
            "{call}: only POSIX file descriptors can be shared"
        );
        return Err(HipError::NOT_SUPPORTED);
    }
    let granule = minimum_granule(devices, device)?;
    if size == 0 || !size.is_multiple_of(granule) {
        tracing::warn!(
            size,
            granule,
            "{call}: the size must be a non-zero multiple of the granularity"
        );
        return Err(HipError::INVALID_VALUE);
    }
    let d = device::nth(devices, device)?;
    if size > d.device_pool.size {
        return Err(HipError::OUT_OF_MEMORY);
    }
    let hsa = hsa_vmem::create(api, d.device_pool.handle(), size).map_err(|e| {
        tracing::warn!(size, error = %e, "{call}: the allocation failed");
        HipError::OUT_OF_MEMORY
    })?;
    Ok(new_handle(hsa, device, *prop))
}

/// Drops one use of `handle` (a reference when `reference`, else a mapping); the last use
/// ends the handle and gives the HSA handle back.
fn drop_use(handle: usize, alloc: &Allocation, reference: bool, api: &HsaApi) -> HipResult {
    let ended = {
        let mut uses = alloc.uses.lock();
        let count = if reference { &mut uses.0 } else { &mut uses.1 };
        if *count == 0 {
            return Err(HipError::INVALID_VALUE);
        }
        *count -= 1;
        *uses == (0, 0)
    };
    if reference {
        // Each reference the program held is one the HSA runtime counts too.
        hsa_vmem::release(api, alloc.hsa)?;
    }
    if ended {
        let _ = ALLOCATIONS.remove(handle);
    }
    Ok(())
}

/// `hipMemRelease`: gives back one reference; a mapped allocation lives until unmapped.
pub fn release(hsa: &HsaRuntime, handle: usize) -> HipResult {
    let call = "hipMemRelease";
    let api = vmm_api(hsa, call)?;
    let alloc = allocation(handle, call)?;
    if alloc.uses.lock().0 == 0 {
        tracing::warn!(
            handle = format_args!("{handle:#x}"),
            "{call}: every reference was already released"
        );
        return Err(HipError::INVALID_VALUE);
    }
    drop_use(handle, &alloc, true, api)
}

/// `hipMemAddressReserve`.
pub fn address_reserve(
    hsa: &HsaRuntime,
    devices: &[Device],
    size: usize,
    alignment: usize,
    addr: usize,
    flags: u64,
) -> HipResult<*mut c_void> {
    let call = "hipMemAddressReserve";
    let api = vmm_api(hsa, call)?;
    if flags != 0 {
        tracing::warn!(flags, "{call}: flags must be 0");
        return Err(HipError::INVALID_VALUE);
    }
    let granule = minimum_granule(devices, 0)?;
    if size == 0
        || !size.is_multiple_of(granule)
        || (alignment != 0 && !alignment.is_power_of_two())
    {
        tracing::warn!(size, alignment, granule, "{call}: the size must be a non-zero multiple of the granularity and the alignment 0 or a power of two");
        return Err(HipError::INVALID_VALUE);
    }
    let ptr = hsa_vmem::reserve(api, size, addr, alignment.max(granule)).map_err(|e| {
        tracing::warn!(size, error = %e, "{call}: no address space");
        HipError::OUT_OF_MEMORY
    })?;
    Ok(ptr as *mut c_void)
}

/// `hipMemAddressFree`: the whole reservation, with nothing mapped in it.
pub fn address_free(hsa: &HsaRuntime, ptr: usize, size: usize) -> HipResult {
    let call = "hipMemAddressFree";
    let api = vmm_api(hsa, call)?;
    if ptr == 0 || size == 0 {
        return Err(HipError::INVALID_VALUE);
    }
    hsa_vmem::free(api, ptr, size).map_err(|e| {
        tracing::warn!(ptr = format_args!("{ptr:#x}"), size, error = %e, "{call}: not a whole reservation with nothing mapped in it");
        HipError::INVALID_VALUE
    })
}

/// `hipMemMap`: `size` bytes of `handle` from `offset` at `ptr` (all aligned to the
/// granularity), in a reservation, over nothing mapped.
pub fn map(
    hsa: &HsaRuntime,
    devices: &[Device],
    ptr: usize,
    size: usize,
    offset: usize,
    handle: usize,
    flags: u64,
) -> HipResult {
    let call = "hipMemMap";
    let api = vmm_api(hsa, call)?;
    let alloc = allocation(handle, call)?;
    let granule = minimum_granule(devices, alloc.device)?;
    if ptr == 0
        || size == 0
        || flags != 0
        || !ptr.is_multiple_of(granule)
        || !size.is_multiple_of(granule)
        || !offset.is_multiple_of(granule)
    {
        tracing::warn!(
            ptr = format_args!("{ptr:#x}"),
            size,
            offset,
            flags,
            granule,
            "{call}: the address, size and offset must be multiples of the granularity, flags 0"
        );
        return Err(HipError::INVALID_VALUE);
    }
    let mut mappings = MAPPINGS.lock();
    hsa_vmem::map(api, ptr, size, offset, alloc.hsa).map_err(|e| {
        tracing::warn!(ptr = format_args!("{ptr:#x}"), size, offset, error = %e, "{call}: not a free part of a reservation, or past the allocation's end");
        HipError::INVALID_VALUE
    })?;
    alloc.uses.lock().1 += 1;
    mappings.insert(ptr, Mapping { len: size, handle });
    memory::insert_virtual(ptr, size, alloc.device);
    Ok(())
}

/// The mappings that tile `[ptr, ptr + size)` exactly, as (start, handle).
fn whole_mappings(
    mappings: &BTreeMap<usize, Mapping>,
    ptr: usize,
    size: usize,
    call: &str,
) -> HipResult<Vec<(usize, usize)>> {
    let end = ptr.checked_add(size).ok_or(HipError::INVALID_VALUE)?;
    let mut found = Vec::new();
    let mut at = ptr;
    while at < end {
        match mappings.get(&at) {
            Some(m) if at + m.len <= end => {
                found.push((at, m.handle));
                at += m.len;
            }
            _ => break,
        }
    }
    if size == 0 || at != end {
        tracing::warn!(
            ptr = format_args!("{ptr:#x}"),
            size,
            "{call}: the range is not one or more whole mappings"
        );
        return Err(HipError::INVALID_VALUE);
    }
    Ok(found)
}

/// `hipMemUnmap`: whole mappings only. Work already queued on `devices` that may use them
/// finishes first.
pub fn unmap(hsa: &HsaRuntime, devices: &[Device], ptr: usize, size: usize) -> HipResult {
    let call = "hipMemUnmap";
    let api = vmm_api(hsa, call)?;
    {
        let mappings = MAPPINGS.lock();
        whole_mappings(&mappings, ptr, size, call)?;
    }
    memory::synchronize_all(devices)?;
    let mut mappings = MAPPINGS.lock();
    let found = whole_mappings(&mappings, ptr, size, call)?;
    // Out of the memory table first: no new copy may start on memory about to go.
    for (start, _) in &found {
        memory::remove_virtual(*start);
    }
    hsa_vmem::unmap(api, ptr, size)?;
    for (start, handle) in found {
        mappings.remove(&start);
        if let Ok(alloc) = ALLOCATIONS.get(handle) {
            drop_use(handle, &alloc, false, api)?;
        }
    }
    Ok(())
}

/// `hipMemAccessFlags` as an `hsa_access_permission_t`.
fn permission(flags: u32) -> HipResult<u32> {
    Ok(match flags {
        access::NONE => access_permission::NONE,
        access::READ => access_permission::RO,
        access::READ_WRITE => access_permission::RW,
        _ => {
            tracing::warn!(flags, "hipMemSetAccess: unknown access flags");
            return Err(HipError::INVALID_VALUE);
        }
    })
}

/// `hipMemSetAccess`: each device's access to the mappings of `[ptr, ptr + size)`.
pub fn set_access(
    hsa: &HsaRuntime,
    devices: &[Device],
    ptr: usize,
    size: usize,
    descs: &[MemAccessDesc],
) -> HipResult {
    let call = "hipMemSetAccess";
    let api = vmm_api(hsa, call)?;
    let mut hsa_descs = Vec::with_capacity(descs.len());
    for d in descs {
        let device = device_of(devices, &d.location, call)?;
        hsa_descs.push(hsa_amd_memory_access_desc_t {
            permissions: permission(d.flags)?,
            agent_handle: device::nth(devices, device)?.agent,
        });
    }
    let mappings = MAPPINGS.lock();
    whole_mappings(&mappings, ptr, size, call)?;
    hsa_vmem::set_access(api, ptr, size, &hsa_descs).map_err(|e| {
        tracing::warn!(error = %e, "{call}: the runtime refused");
        HipError::INVALID_VALUE
    })
}

/// `hipMemGetAccess`: `location`'s access flags on the mapping holding `ptr`.
pub fn get_access(
    hsa: &HsaRuntime,
    devices: &[Device],
    location: &MemLocation,
    ptr: usize,
) -> HipResult<u32> {
    let call = "hipMemGetAccess";
    let api = vmm_api(hsa, call)?;
    let device = device_of(devices, location, call)?;
    let perms = hsa_vmem::get_access(api, ptr, device::nth(devices, device)?.agent).map_err(|e| {
        tracing::warn!(ptr = format_args!("{ptr:#x}"), error = %e, "{call}: not a mapped address");
        HipError::INVALID_VALUE
    })?;
    Ok(match perms {
        access_permission::RW => access::READ_WRITE,
        access_permission::RO => access::READ,
        // Write-only has no HIP name; a device that may write may not read here.
        _ => access::NONE,
    })
}

/// `hipMemGetAllocationPropertiesFromHandle`.
pub fn properties(hsa: &HsaRuntime, handle: usize) -> HipResult<MemAllocationProp> {
    let call = "hipMemGetAllocationPropertiesFromHandle";
    vmm_api(hsa, call)?;
    Ok(allocation(handle, call)?.prop)
}

/// `hipMemRetainAllocationHandle`: one more reference to the allocation mapped at `ptr`
/// (the handle it was mapped with).
pub fn retain(hsa: &HsaRuntime, ptr: usize) -> HipResult<usize> {
    let call = "hipMemRetainAllocationHandle";
    let api = vmm_api(hsa, call)?;
    let mappings = MAPPINGS.lock();
    let handle = mappings
        .range(..=ptr)
        .next_back()
        .filter(|(start, m)| ptr < *start + m.len)
        .map(|(_, m)| m.handle)
        .ok_or_else(|| {
            tracing::warn!(
                ptr = format_args!("{ptr:#x}"),
                "{call}: not a mapped address"
            );
            HipError::INVALID_VALUE
        })?;
    let alloc = allocation(handle, call)?;
    hsa_vmem::retain(api, ptr)?;
    alloc.uses.lock().0 += 1;
    Ok(handle)
}

/// `hipMemExportToShareableHandle`: a new file descriptor of the allocation (the caller's to
/// close), for an allocation made to be shared that way.
pub fn export(hsa: &HsaRuntime, handle: usize, handle_type: u32, flags: u64) -> HipResult<i32> {
    let call = "hipMemExportToShareableHandle";
    let api = vmm_api(hsa, call)?;
    let alloc = allocation(handle, call)?;
    if flags != 0 {
        tracing::warn!(flags, "{call}: flags must be 0");
        return Err(HipError::INVALID_VALUE);
    }
    if handle_type != handle_type::POSIX_FILE_DESCRIPTOR
        || alloc.prop.requested_handle_type != handle_type
    {
        tracing::warn!(handle_type, requested = alloc.prop.requested_handle_type, "{call}: only a POSIX file descriptor, for an allocation made with that requestedHandleType");
        return Err(HipError::INVALID_VALUE);
    }
    Ok(hsa_vmem::export(api, alloc.hsa)?)
}

/// `hipMemRangeHandleTypeDmaBufFd`, the one handle type of `hipMemGetHandleForAddressRange`.
pub const RANGE_HANDLE_DMA_BUF_FD: u32 = 1;
/// `hipMemRangeFlagDmaBufMappingTypePcie`, its one flag.
pub const RANGE_FLAG_DMA_BUF_MAPPING_PCIE: u64 = 1;

/// `hipMemGetHandleForAddressRange`: a dma-buf file descriptor for a range of device memory
/// (`hipMalloc`, a pool's, or a mapping of a physical allocation). The arguments and the
/// range are checked as AMD's runtime checks them; a good request is then
/// `hipErrorNotSupported`: on a GPU the dma-buf comes from ROCr's
/// `hsa_amd_portable_export_dmabuf`, which hipshim's HSA table does not take (hsasim, with no
/// kernel driver behind its memory, has nothing a dma-buf could describe).
pub fn range_handle(ptr: usize, size: usize, handle_type: u32, flags: u64) -> HipResult<i32> {
    let call = "hipMemGetHandleForAddressRange";
    if ptr == 0 || size == 0 {
        tracing::warn!(ptr, size, "{call}: a null pointer or an empty range");
        return Err(HipError::INVALID_VALUE);
    }
    if handle_type != RANGE_HANDLE_DMA_BUF_FD {
        tracing::warn!(
            handle_type,
            "{call}: the handle type is hipMemRangeHandleTypeDmaBufFd (1)"
        );
        return Err(HipError::INVALID_VALUE);
    }
    if flags & !RANGE_FLAG_DMA_BUF_MAPPING_PCIE != 0 {
        tracing::warn!(
            flags,
            "{call}: the only flag is hipMemRangeFlagDmaBufMappingTypePcie (1)"
        );
        return Err(HipError::INVALID_VALUE);
    }
    let device_memory = memory::lookup(ptr, size).is_some_and(|a| {
        matches!(
            a.kind,
            memory::MemKind::Device | memory::MemKind::Pooled | memory::MemKind::Virtual
        )
    });
    if !device_memory {
        tracing::warn!(
            ptr = format_args!("{ptr:#x}"),
            size,
            "{call}: the range is not inside one allocation of device memory"
        );
        return Err(HipError::INVALID_VALUE);
    }
    tracing::warn!(
        ptr = format_args!("{ptr:#x}"),
        size,
        "{call}: dma-buf export is not supported: hipshim does not call ROCr's \
         hsa_amd_portable_export_dmabuf, and hsasim's device memory has no kernel driver to \
         export it"
    );
    Err(HipError::NOT_SUPPORTED)
}

/// `hipMemImportFromShareableHandle`: `os_handle` is the file descriptor itself (CUDA's
/// convention: `(void*)(uintptr_t)fd`). The allocation belongs to the current device.
pub fn import(
    hsa: &HsaRuntime,
    current: &Device,
    os_handle: usize,
    handle_type: u32,
) -> HipResult<usize> {
    let call = "hipMemImportFromShareableHandle";
    let api = vmm_api(hsa, call)?;
    if handle_type != handle_type::POSIX_FILE_DESCRIPTOR {
        tracing::warn!(handle_type, "{call}: only POSIX file descriptors");
        return Err(HipError::INVALID_VALUE);
    }
    let Ok(fd) = i32::try_from(os_handle) else {
        tracing::warn!(os_handle, "{call}: not a file descriptor");
        return Err(HipError::INVALID_VALUE);
    };
    let hsa = hsa_vmem::import(api, fd).map_err(|e| {
        tracing::warn!(fd, error = %e, "{call}: not a descriptor of exported memory");
        HipError::INVALID_VALUE
    })?;
    let device = current.index;
    let prop = MemAllocationProp {
        type_: ALLOCATION_PINNED,
        requested_handle_type: handle_type::POSIX_FILE_DESCRIPTOR,
        location: MemLocation {
            type_: LOCATION_DEVICE,
            id: device as i32,
        },
        win32_handle_meta_data: 0,
        compression_type: 0,
        gpu_direct_rdma_capable: 0,
        usage: 0,
    };
    Ok(new_handle(hsa, device, prop))
}

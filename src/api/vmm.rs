//! Virtual memory management (`runtime/mem/vmm.rs`): reserved address ranges, physical
//! allocations and their mappings.

use super::convert::{slice, Out};
use super::declare::hip_api;
use super::types::{
    hipError_t, hipMemGenericAllocationHandle_t, hipStream_t, MemAccessDesc, MemAllocationProp,
    MemLocation,
};
use crate::error::HipError;
use crate::runtime::{mem::vmm, runtime};
use std::ffi::c_void;

fn handle_of(raw: hipMemGenericAllocationHandle_t) -> usize {
    raw as usize
}

fn to_raw(handle: usize) -> hipMemGenericAllocationHandle_t {
    handle as hipMemGenericAllocationHandle_t
}

hip_api! {
    fn hipMemGetAllocationGranularity(
        granularity: *mut usize => Out<usize>,
        prop: *const MemAllocationProp => &MemAllocationProp,
        option: u32,
    ) -> hipError_t {
        let rt = runtime()?;
        granularity.write(vmm::allocation_granularity(&rt.hsa, rt.devices, prop, option)?)
    }

    fn hipMemCreate(
        handle: *mut hipMemGenericAllocationHandle_t => Out<hipMemGenericAllocationHandle_t>,
        size: usize,
        prop: *const MemAllocationProp => &MemAllocationProp,
        flags: u64,
    ) -> hipError_t {
        let rt = runtime()?;
        handle.write(to_raw(vmm::create(&rt.hsa, rt.devices, size, prop, flags)?))
    }

    fn hipMemRelease(handle: hipMemGenericAllocationHandle_t) -> hipError_t {
        vmm::release(&runtime()?.hsa, handle_of(handle))
    }

    fn hipMemAddressReserve(
        ptr: *mut *mut c_void => Out<*mut c_void>,
        size: usize,
        alignment: usize,
        addr: *mut c_void,
        flags: u64,
    ) -> hipError_t {
        let rt = runtime()?;
        ptr.write(vmm::address_reserve(&rt.hsa, rt.devices, size, alignment, addr as usize, flags)?)
    }

    fn hipMemAddressFree(dev_ptr: *mut c_void, size: usize) -> hipError_t {
        vmm::address_free(&runtime()?.hsa, dev_ptr as usize, size)
    }

    fn hipMemMap(
        ptr: *mut c_void,
        size: usize,
        offset: usize,
        handle: hipMemGenericAllocationHandle_t,
        flags: u64,
    ) -> hipError_t {
        let rt = runtime()?;
        vmm::map(&rt.hsa, rt.devices, ptr as usize, size, offset, handle_of(handle), flags)
    }

    fn hipMemUnmap(ptr: *mut c_void, size: usize) -> hipError_t {
        let rt = runtime()?;
        vmm::unmap(&rt.hsa, rt.devices, ptr as usize, size)
    }

    fn hipMemSetAccess(ptr: *mut c_void, size: usize, desc: *const MemAccessDesc, count: usize) -> hipError_t {
        // SAFETY: HIP's contract: `count` descriptors at `desc`.
        let descs = unsafe { slice(desc, count, "desc") }?;
        let rt = runtime()?;
        vmm::set_access(&rt.hsa, rt.devices, ptr as usize, size, descs)
    }

    fn hipMemGetAccess(
        flags: *mut u64 => Out<u64>,
        location: *const MemLocation => &MemLocation,
        ptr: *mut c_void,
    ) -> hipError_t {
        let rt = runtime()?;
        flags.write(u64::from(vmm::get_access(&rt.hsa, rt.devices, location, ptr as usize)?))
    }

    fn hipMemGetAllocationPropertiesFromHandle(
        prop: *mut MemAllocationProp => Out<MemAllocationProp>,
        handle: hipMemGenericAllocationHandle_t,
    ) -> hipError_t {
        prop.write(vmm::properties(&runtime()?.hsa, handle_of(handle))?)
    }

    fn hipMemRetainAllocationHandle(
        handle: *mut hipMemGenericAllocationHandle_t => Out<hipMemGenericAllocationHandle_t>,
        addr: *mut c_void,
    ) -> hipError_t {
        handle.write(to_raw(vmm::retain(&runtime()?.hsa, addr as usize)?))
    }

    /// For `hipMemHandleTypePosixFileDescriptor`, `shareable_handle` receives an `int`.
    fn hipMemExportToShareableHandle(
        shareable_handle: *mut c_void,
        handle: hipMemGenericAllocationHandle_t,
        handle_type: u32,
        flags: u64,
    ) -> hipError_t {
        if shareable_handle.is_null() {
            tracing::warn!("hipMemExportToShareableHandle: null shareableHandle");
            return Err(HipError::INVALID_VALUE);
        }
        let fd = vmm::export(&runtime()?.hsa, handle_of(handle), handle_type, flags)?;
        // SAFETY: non-null; HIP's contract: room for the handle type's value, an int here.
        unsafe { shareable_handle.cast::<i32>().write_unaligned(fd) };
        Ok(())
    }

    /// For `hipMemHandleTypePosixFileDescriptor`, `os_handle` is the descriptor itself.
    fn hipMemImportFromShareableHandle(
        handle: *mut hipMemGenericAllocationHandle_t => Out<hipMemGenericAllocationHandle_t>,
        os_handle: *mut c_void,
        sh_handle_type: u32,
    ) -> hipError_t {
        let rt = runtime()?;
        handle.write(to_raw(vmm::import(&rt.hsa, rt.current_device()?, os_handle as usize, sh_handle_type)?))
    }

    /// Sparse arrays: AMD's runtime checks the list and the count and answers
    /// `hipErrorNotSupported` (it has no sparse arrays); so does hipshim. The stream is not
    /// used.
    fn hipMemMapArrayAsync(map_info_list: *mut c_void, count: u32, stream: hipStream_t) -> hipError_t {
        let _ = stream;
        if map_info_list.is_null() || count == 0 {
            tracing::warn!(count, "hipMemMapArrayAsync: no mapping to make");
            return Err(HipError::INVALID_VALUE);
        }
        tracing::warn!(count, "hipMemMapArrayAsync: sparse arrays are not supported (nor by AMD's runtime)");
        Err(HipError::NOT_SUPPORTED)
    }

    /// Checked, then `hipErrorNotSupported` (`vmm::range_handle` says why).
    fn hipMemGetHandleForAddressRange(
        handle: *mut c_void,
        dptr: *mut c_void,
        size: usize,
        handle_type: u32,
        flags: u64,
    ) -> hipError_t {
        if handle.is_null() {
            tracing::warn!("hipMemGetHandleForAddressRange: nowhere to write the handle");
            return Err(HipError::INVALID_VALUE);
        }
        let fd = vmm::range_handle(dptr as usize, size, handle_type, flags)?;
        // SAFETY: HIP's contract: a dma-buf handle is an int at `handle`, checked non-null.
        unsafe { handle.cast::<i32>().write_unaligned(fd) };
        Ok(())
    }
}

#[cfg(not(test))]
include!(concat!(env!("OUT_DIR"), "/symver_vmm.rs"));

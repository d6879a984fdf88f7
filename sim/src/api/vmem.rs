//! Virtual memory entry points (`hsa_amd_vmem_*`, ROCm 6); the model is in `crate::vmem`.

use super::shell::guard;
use crate::cabi::out;
use crate::error::HsaError;
use crate::system::rt;
use hsa_abi::*;
use std::ffi::c_void;

/// # Safety
/// `ptr` must be null or valid for a pointer.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_vmem_address_reserve(
    ptr: *mut *mut c_void,
    size: usize,
    address: u64,
    flags: u64,
) -> hsa_status_t {
    // SAFETY: forwarded contract.
    unsafe { hsa_amd_vmem_address_reserve_align(ptr, size, address, 0, flags) }
}

/// # Safety
/// `ptr` must be null or valid for a pointer.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_vmem_address_reserve_align(
    ptr: *mut *mut c_void,
    size: usize,
    address: u64,
    alignment: u64,
    flags: u64,
) -> hsa_status_t {
    guard("hsa_amd_vmem_address_reserve", || {
        let rt = rt()?;
        if ptr.is_null() {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        let start = rt
            .vmem
            .reserve(&rt.platform(), size as u64, address, alignment, flags)?;
        // SAFETY: non-null and valid per the caller.
        unsafe { out(ptr, start as *mut c_void) }
    })
}

#[no_mangle]
pub extern "C" fn hsa_amd_vmem_address_free(ptr: *mut c_void, size: usize) -> hsa_status_t {
    guard("hsa_amd_vmem_address_free", || {
        rt()?.vmem.free(ptr as u64, size as u64)
    })
}

/// # Safety
/// `memory_handle` must be null or valid for a handle.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_vmem_handle_create(
    pool: hsa_amd_memory_pool_t,
    size: usize,
    memory_type: u32,
    flags: u64,
    memory_handle: *mut hsa_amd_vmem_alloc_handle_t,
) -> hsa_status_t {
    guard("hsa_amd_vmem_handle_create", || {
        let rt = rt()?;
        if memory_handle.is_null() {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        let handle =
            rt.vmem
                .create(&rt.platform(), pool.handle, size as u64, memory_type, flags)?;
        // SAFETY: non-null and valid per the caller.
        unsafe { out(memory_handle, hsa_amd_vmem_alloc_handle_t { handle }) }
    })
}

#[no_mangle]
pub extern "C" fn hsa_amd_vmem_handle_release(
    memory_handle: hsa_amd_vmem_alloc_handle_t,
) -> hsa_status_t {
    guard("hsa_amd_vmem_handle_release", || {
        rt()?.vmem.release(memory_handle.handle)
    })
}

#[no_mangle]
pub extern "C" fn hsa_amd_vmem_map(
    va: *mut c_void,
    size: usize,
    in_offset: usize,
    memory_handle: hsa_amd_vmem_alloc_handle_t,
    flags: u64,
) -> hsa_status_t {
    guard("hsa_amd_vmem_map", || {
        let rt = rt()?;
        rt.vmem.map(
            &rt.platform(),
            va as u64,
            size as u64,
            in_offset as u64,
            memory_handle.handle,
            flags,
        )
    })
}

#[no_mangle]
pub extern "C" fn hsa_amd_vmem_unmap(va: *mut c_void, size: usize) -> hsa_status_t {
    guard("hsa_amd_vmem_unmap", || {
        let rt = rt()?;
        rt.vmem.unmap(&rt.platform(), va as u64, size as u64)
    })
}

/// # Safety
/// `desc` must be null or valid for `desc_cnt` descriptors.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_vmem_set_access(
    va: *mut c_void,
    size: usize,
    desc: *const hsa_amd_memory_access_desc_t,
    desc_cnt: usize,
) -> hsa_status_t {
    guard("hsa_amd_vmem_set_access", || {
        let rt = rt()?;
        if desc.is_null() || desc_cnt == 0 {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        // SAFETY: `desc_cnt` descriptors at non-null `desc` per the caller.
        let descs = unsafe { std::slice::from_raw_parts(desc, desc_cnt) };
        rt.vmem
            .set_access(&rt.platform(), va as u64, size as u64, descs)
    })
}

/// # Safety
/// `perms` must be null or valid for a `hsa_access_permission_t`.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_vmem_get_access(
    va: *mut c_void,
    perms: *mut u32,
    agent_handle: hsa_agent_t,
) -> hsa_status_t {
    guard("hsa_amd_vmem_get_access", || {
        let rt = rt()?;
        if perms.is_null() {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        let p = rt
            .vmem
            .get_access(&rt.platform(), va as u64, agent_handle)?;
        // SAFETY: non-null and valid per the caller.
        unsafe { out(perms, p) }
    })
}

/// # Safety
/// `dmabuf_fd` must be null or valid for an int.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_vmem_export_shareable_handle(
    dmabuf_fd: *mut i32,
    handle: hsa_amd_vmem_alloc_handle_t,
    flags: u64,
) -> hsa_status_t {
    guard("hsa_amd_vmem_export_shareable_handle", || {
        let rt = rt()?;
        if dmabuf_fd.is_null() {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        let fd = rt.vmem.export(handle.handle, flags)?;
        // SAFETY: non-null and valid per the caller.
        unsafe { out(dmabuf_fd, fd) }
    })
}

/// # Safety
/// `handle` must be null or valid for a handle.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_vmem_import_shareable_handle(
    dmabuf_fd: i32,
    handle: *mut hsa_amd_vmem_alloc_handle_t,
) -> hsa_status_t {
    guard("hsa_amd_vmem_import_shareable_handle", || {
        let rt = rt()?;
        if handle.is_null() {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        let h = rt.vmem.import(&rt.platform(), dmabuf_fd)?;
        // SAFETY: non-null and valid per the caller.
        unsafe { out(handle, hsa_amd_vmem_alloc_handle_t { handle: h }) }
    })
}

/// # Safety
/// `handle` must be null or valid for a handle.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_vmem_retain_alloc_handle(
    handle: *mut hsa_amd_vmem_alloc_handle_t,
    addr: *mut c_void,
) -> hsa_status_t {
    guard("hsa_amd_vmem_retain_alloc_handle", || {
        let rt = rt()?;
        if handle.is_null() {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        let h = rt.vmem.retain(addr as u64)?;
        // SAFETY: non-null and valid per the caller.
        unsafe { out(handle, hsa_amd_vmem_alloc_handle_t { handle: h }) }
    })
}

/// # Safety
/// `pool` and `type_` must be null or valid for their types.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_vmem_get_alloc_properties_from_handle(
    alloc_handle: hsa_amd_vmem_alloc_handle_t,
    pool: *mut hsa_amd_memory_pool_t,
    type_: *mut u32,
) -> hsa_status_t {
    guard("hsa_amd_vmem_get_alloc_properties_from_handle", || {
        let rt = rt()?;
        if pool.is_null() || type_.is_null() {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        let (p, t) = rt.vmem.properties(alloc_handle.handle)?;
        // SAFETY: both non-null and valid per the caller.
        unsafe {
            out(pool, hsa_amd_memory_pool_t { handle: p })?;
            out(type_, t)
        }
    })
}

include!(concat!(env!("OUT_DIR"), "/symver_api_vmem.rs"));

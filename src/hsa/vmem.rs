//! The HSA runtime's virtual memory management (`hsa_amd_vmem_*`, ROCm 6 on): typed calls,
//! each an error naming the call. The entry points are optional in the table; callers ask
//! [`missing`] first, and a call whose entry point is absent fails as `HSA_STATUS_ERROR`.

use super::{check, HsaApi, HsaError};
use hsa_abi::*;
use std::ffi::c_void;

/// The first VMM entry point the loaded runtime lacks, if any (ROCm 5.2's ROCr has none).
pub fn missing(api: &HsaApi) -> Option<&'static str> {
    api.first_absent(fns::optional::VMEM)
}

/// The entry point `$field` or an error naming it.
macro_rules! entry {
    ($api:expr, $field:ident) => {
        $api.$field
            .ok_or_else(|| HsaError::call(stringify!($field), status::ERROR))?
    };
}

/// `size` bytes of address space aligned to `alignment` (0: the runtime's choice), at `hint`
/// if it is free.
pub fn reserve(
    api: &HsaApi,
    size: usize,
    hint: usize,
    alignment: usize,
) -> Result<usize, HsaError> {
    let f = entry!(api, hsa_amd_vmem_address_reserve_align);
    let mut ptr: *mut c_void = std::ptr::null_mut();
    // SAFETY: `ptr` is a valid out-pointer; the other arguments are plain values.
    let s = unsafe { f(&mut ptr, size, hint as u64, alignment as u64, 0) };
    check("hsa_amd_vmem_address_reserve_align", s).map(|()| ptr as usize)
}

pub fn free(api: &HsaApi, ptr: usize, size: usize) -> Result<(), HsaError> {
    let f = entry!(api, hsa_amd_vmem_address_free);
    // SAFETY: plain values; the runtime checks they name a reservation.
    check("hsa_amd_vmem_address_free", unsafe {
        f(ptr as *mut c_void, size)
    })
}

/// A physical allocation of `size` bytes from `pool`.
pub fn create(api: &HsaApi, pool: hsa_amd_memory_pool_t, size: usize) -> Result<u64, HsaError> {
    let f = entry!(api, hsa_amd_vmem_handle_create);
    let mut handle = hsa_amd_vmem_alloc_handle_t::default();
    // SAFETY: `handle` is a valid out-pointer.
    let s = unsafe { f(pool, size, MEMORY_TYPE_PINNED, 0, &mut handle) };
    check("hsa_amd_vmem_handle_create", s).map(|()| handle.handle)
}

pub fn release(api: &HsaApi, handle: u64) -> Result<(), HsaError> {
    let f = entry!(api, hsa_amd_vmem_handle_release);
    // SAFETY: a plain value; the runtime checks it.
    check("hsa_amd_vmem_handle_release", unsafe {
        f(hsa_amd_vmem_alloc_handle_t { handle })
    })
}

pub fn map(
    api: &HsaApi,
    va: usize,
    size: usize,
    offset: usize,
    handle: u64,
) -> Result<(), HsaError> {
    let f = entry!(api, hsa_amd_vmem_map);
    // SAFETY: plain values; the runtime checks the range lies in a reservation.
    check("hsa_amd_vmem_map", unsafe {
        f(
            va as *mut c_void,
            size,
            offset,
            hsa_amd_vmem_alloc_handle_t { handle },
            0,
        )
    })
}

pub fn unmap(api: &HsaApi, va: usize, size: usize) -> Result<(), HsaError> {
    let f = entry!(api, hsa_amd_vmem_unmap);
    // SAFETY: plain values; the runtime checks they name mappings.
    check("hsa_amd_vmem_unmap", unsafe { f(va as *mut c_void, size) })
}

pub fn set_access(
    api: &HsaApi,
    va: usize,
    size: usize,
    descs: &[hsa_amd_memory_access_desc_t],
) -> Result<(), HsaError> {
    let f = entry!(api, hsa_amd_vmem_set_access);
    // SAFETY: `descs` is a live slice of its length.
    check("hsa_amd_vmem_set_access", unsafe {
        f(va as *mut c_void, size, descs.as_ptr(), descs.len())
    })
}

/// `agent`'s `hsa_access_permission_t` on the mapping holding `va`.
pub fn get_access(api: &HsaApi, va: usize, agent: hsa_agent_t) -> Result<u32, HsaError> {
    let f = entry!(api, hsa_amd_vmem_get_access);
    let mut perms = access_permission::NONE;
    // SAFETY: `perms` is a valid out-pointer.
    let s = unsafe { f(va as *mut c_void, &mut perms, agent) };
    check("hsa_amd_vmem_get_access", s).map(|()| perms)
}

/// A new file descriptor of the allocation's memory (the caller's to close).
pub fn export(api: &HsaApi, handle: u64) -> Result<i32, HsaError> {
    let f = entry!(api, hsa_amd_vmem_export_shareable_handle);
    let mut fd = -1;
    // SAFETY: `fd` is a valid out-pointer.
    let s = unsafe { f(&mut fd, hsa_amd_vmem_alloc_handle_t { handle }, 0) };
    check("hsa_amd_vmem_export_shareable_handle", s).map(|()| fd)
}

pub fn import(api: &HsaApi, fd: i32) -> Result<u64, HsaError> {
    let f = entry!(api, hsa_amd_vmem_import_shareable_handle);
    let mut handle = hsa_amd_vmem_alloc_handle_t::default();
    // SAFETY: `handle` is a valid out-pointer; the runtime checks the descriptor.
    let s = unsafe { f(fd, &mut handle) };
    check("hsa_amd_vmem_import_shareable_handle", s).map(|()| handle.handle)
}

/// One more handle to the allocation mapped at `va`.
pub fn retain(api: &HsaApi, va: usize) -> Result<u64, HsaError> {
    let f = entry!(api, hsa_amd_vmem_retain_alloc_handle);
    let mut handle = hsa_amd_vmem_alloc_handle_t::default();
    // SAFETY: `handle` is a valid out-pointer.
    let s = unsafe { f(&mut handle, va as *mut c_void) };
    check("hsa_amd_vmem_retain_alloc_handle", s).map(|()| handle.handle)
}

/// The pool a physical allocation came from.
pub fn pool_of(api: &HsaApi, handle: u64) -> Result<hsa_amd_memory_pool_t, HsaError> {
    let f = entry!(api, hsa_amd_vmem_get_alloc_properties_from_handle);
    let mut pool = hsa_amd_memory_pool_t::default();
    let mut memory_type = 0u32;
    // SAFETY: both are valid out-pointers.
    let s = unsafe {
        f(
            hsa_amd_vmem_alloc_handle_t { handle },
            &mut pool,
            &mut memory_type,
        )
    };
    check("hsa_amd_vmem_get_alloc_properties_from_handle", s).map(|()| pool)
}

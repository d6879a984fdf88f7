//! The HSA runtime's inter-process memory (`hsa_amd_ipc_memory_*`): typed calls, each an
//! error naming the call. The entry points are optional in the table; callers ask
//! [`missing`] first, and a call whose entry point is absent fails as `HSA_STATUS_ERROR`.

use super::{check, HsaApi, HsaError};
use hsa_abi::*;
use std::ffi::c_void;

/// The first IPC memory entry point the loaded runtime lacks, if any.
pub fn missing(api: &HsaApi) -> Option<&'static str> {
    api.first_absent(fns::optional::IPC_MEMORY)
}

fn absent(name: &'static str) -> HsaError {
    HsaError::call(name, status::ERROR)
}

/// A handle another process can attach `len` bytes of the allocation starting at `ptr` with.
pub fn create(api: &HsaApi, ptr: usize, len: usize) -> Result<hsa_amd_ipc_memory_t, HsaError> {
    let f = api
        .hsa_amd_ipc_memory_create
        .ok_or_else(|| absent("hsa_amd_ipc_memory_create"))?;
    let mut handle = hsa_amd_ipc_memory_t::default();
    // SAFETY: `handle` is a valid out-pointer; the runtime checks `ptr`.
    let s = unsafe { f(ptr as *mut c_void, len, &mut handle) };
    check("hsa_amd_ipc_memory_create", s).map(|()| handle)
}

/// Maps `len` bytes of another process's exported memory for `agents`.
pub fn attach(
    api: &HsaApi,
    handle: &hsa_amd_ipc_memory_t,
    len: usize,
    agents: &[hsa_agent_t],
) -> Result<usize, HsaError> {
    let f = api
        .hsa_amd_ipc_memory_attach
        .ok_or_else(|| absent("hsa_amd_ipc_memory_attach"))?;
    let mut ptr: *mut c_void = std::ptr::null_mut();
    // SAFETY: `handle` and `agents` are live for the call; `ptr` is a valid out-pointer.
    let s = unsafe { f(handle, len, agents.len() as u32, agents.as_ptr(), &mut ptr) };
    check("hsa_amd_ipc_memory_attach", s).map(|()| ptr as usize)
}

pub fn detach(api: &HsaApi, ptr: usize) -> Result<(), HsaError> {
    let f = api
        .hsa_amd_ipc_memory_detach
        .ok_or_else(|| absent("hsa_amd_ipc_memory_detach"))?;
    // SAFETY: a plain value; the runtime checks it.
    check("hsa_amd_ipc_memory_detach", unsafe {
        f(ptr as *mut c_void)
    })
}

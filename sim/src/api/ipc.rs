//! Inter-process memory entry points (`hsa_amd_ipc_memory_*`); the model is in `crate::ipc`.

use super::shell::guard;
use crate::cabi::out;
use crate::error::HsaError;
use crate::system::rt;
use hsa_abi::*;
use std::ffi::c_void;

/// # Safety
/// `handle` must be null or valid for a `hsa_amd_ipc_memory_t`.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_ipc_memory_create(
    ptr: *mut c_void,
    len: usize,
    handle: *mut hsa_amd_ipc_memory_t,
) -> hsa_status_t {
    guard("hsa_amd_ipc_memory_create", || {
        let rt = rt()?;
        if handle.is_null() {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        let h = rt.ipc.create(&rt.platform(), ptr as u64, len as u64)?;
        // SAFETY: non-null and valid per the caller.
        unsafe { out(handle, h) }
    })
}

/// # Safety
/// `handle` must be null or valid; `mapping_agents` null or valid for `num_agents` agents;
/// `mapped_ptr` null or valid for a pointer.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_ipc_memory_attach(
    handle: *const hsa_amd_ipc_memory_t,
    len: usize,
    num_agents: u32,
    mapping_agents: *const hsa_agent_t,
    mapped_ptr: *mut *mut c_void,
) -> hsa_status_t {
    guard("hsa_amd_ipc_memory_attach", || {
        let rt = rt()?;
        if handle.is_null() || mapped_ptr.is_null() || (num_agents > 0 && mapping_agents.is_null())
        {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        // SAFETY: non-null and valid per the caller.
        let handle = unsafe { handle.read_unaligned() };
        let agents = if num_agents == 0 {
            &[][..]
        } else {
            // SAFETY: `num_agents` agents at non-null `mapping_agents` per the caller.
            unsafe { std::slice::from_raw_parts(mapping_agents, num_agents as usize) }
        };
        let p = rt.ipc.attach(&rt.platform(), &handle, len as u64, agents)?;
        // SAFETY: non-null and valid per the caller.
        unsafe { out(mapped_ptr, p as *mut c_void) }
    })
}

#[no_mangle]
pub extern "C" fn hsa_amd_ipc_memory_detach(mapped_ptr: *mut c_void) -> hsa_status_t {
    guard("hsa_amd_ipc_memory_detach", || {
        let rt = rt()?;
        rt.ipc.detach(&rt.platform(), mapped_ptr as u64)
    })
}

fn ipc_signals<'a>(
    rt: &'a crate::system::Runtime,
    call: &str,
) -> Result<&'a crate::ipc_signal::IpcSignals, HsaError> {
    rt.ipc_signals.as_ref().ok_or_else(|| {
        tracing::error!(target: "hsasim", "{call}: IPC signals need a device service (hipshim device start; HSASIM_DEVICE_SERVICE=NAME)");
        HsaError::INVALID_SIGNAL
    })
}

/// # Safety
/// `handle` must be null or valid for a `hsa_amd_ipc_signal_t`.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_ipc_signal_create(
    signal: hsa_signal_t,
    handle: *mut hsa_amd_ipc_signal_t,
) -> hsa_status_t {
    guard("hsa_amd_ipc_signal_create", || {
        let rt = rt()?;
        if handle.is_null() {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        let s = rt.signals.get(signal)?;
        let h = ipc_signals(&rt, "hsa_amd_ipc_signal_create")?.export(&s)?;
        // SAFETY: non-null and valid per the caller.
        unsafe { out(handle, h) }
    })
}

/// # Safety
/// `handle` must be null or valid for a `hsa_amd_ipc_signal_t`; `signal` null or valid.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_ipc_signal_attach(
    handle: *const hsa_amd_ipc_signal_t,
    signal: *mut hsa_signal_t,
) -> hsa_status_t {
    guard("hsa_amd_ipc_signal_attach", || {
        let rt = rt()?;
        if handle.is_null() || signal.is_null() {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        // SAFETY: non-null and valid per the caller.
        let handle = unsafe { handle.read_unaligned() };
        let s = ipc_signals(&rt, "hsa_amd_ipc_signal_attach")?.attach(&handle)?;
        let s = rt.signals.insert(s);
        // SAFETY: non-null and valid per the caller.
        unsafe { out(signal, s.handle()) }
    })
}

include!(concat!(env!("OUT_DIR"), "/symver_api_ipc.rs"));

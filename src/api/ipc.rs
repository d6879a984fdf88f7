//! Inter-process memory (`runtime/ipc.rs`). The IPC event calls (`hipIpcGetEventHandle`,
//! `hipIpcOpenEventHandle`) are not implemented: their generated stubs return
//! `hipErrorNotSupported` and log their names.

use super::convert::Out;
use super::declare::hip_api;
use super::types::{hipError_t, IpcHandle};
use crate::error::HipError;
use crate::runtime::ipc;
use std::ffi::c_void;

hip_api! {
    fn hipIpcGetMemHandle(handle: *mut IpcHandle => Out<IpcHandle>, dev_ptr: *mut c_void) -> hipError_t {
        if dev_ptr.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        handle.write(ipc::get_mem_handle(dev_ptr as usize)?)
    }

    fn hipIpcOpenMemHandle(
        dev_ptr: *mut *mut c_void => Out<*mut c_void>,
        handle: IpcHandle,
        flags: u32,
    ) -> hipError_t {
        dev_ptr.write(ipc::open_mem_handle(&handle, flags)? as *mut c_void)
    }

    fn hipIpcCloseMemHandle(dev_ptr: *mut c_void) -> hipError_t {
        if dev_ptr.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        ipc::close_mem_handle(dev_ptr as usize)
    }
}

#[cfg(not(test))]
include!(concat!(env!("OUT_DIR"), "/symver_ipc.rs"));

//! Inter-process memory (`runtime/mem/ipc.rs`) and events (`runtime/stream/event.rs`,
//! `runtime/stream/ipc_event.rs`).

use super::convert::Out;
use super::declare::hip_api;
use super::types::{hipError_t, hipEvent_t, IpcHandle};
use crate::error::HipError;
use crate::runtime::stream::event::{self, Event};
use crate::runtime::{self, mem::ipc};
use std::ffi::c_void;
use std::sync::Arc;

hip_api! {
    fn hipIpcGetMemHandle(handle: *mut IpcHandle => Out<IpcHandle>, dev_ptr: *mut c_void) -> hipError_t {
        if dev_ptr.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        let rt = runtime::runtime()?;
        handle.write(ipc::get_mem_handle(rt.hsa.api, rt.devices, dev_ptr as usize)?)
    }

    fn hipIpcOpenMemHandle(
        dev_ptr: *mut *mut c_void => Out<*mut c_void>,
        handle: IpcHandle,
        flags: u32,
    ) -> hipError_t {
        let rt = runtime::runtime()?;
        dev_ptr.write(ipc::open_mem_handle(rt.hsa.api, rt.devices, &handle, flags)? as *mut c_void)
    }

    fn hipIpcCloseMemHandle(dev_ptr: *mut c_void) -> hipError_t {
        if dev_ptr.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        let rt = runtime::runtime()?;
        ipc::close_mem_handle(rt.hsa.api, rt.devices, dev_ptr as usize)
    }

    fn hipIpcGetEventHandle(handle: *mut IpcHandle => Out<IpcHandle>, event: hipEvent_t => Arc<Event>) -> hipError_t {
        handle.write(IpcHandle { reserved: event::ipc_handle(&event)? })
    }

    fn hipIpcOpenEventHandle(event: *mut hipEvent_t => Out<hipEvent_t>, handle: IpcHandle) -> hipError_t {
        runtime::runtime()?;
        event.write(event::open_ipc_handle(&handle.reserved)?)
    }
}

#[cfg(not(test))]
include!(concat!(env!("OUT_DIR"), "/symver_ipc.rs"));

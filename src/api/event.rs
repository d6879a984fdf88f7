//! Events.
#![allow(non_snake_case)]

use super::{call, write_out};
use crate::error::{hipError_t, HipError};
use crate::runtime::event;
use std::ffi::c_void;

#[no_mangle]
pub extern "C" fn hipEventCreate(event: *mut *mut c_void) -> hipError_t {
    call("hipEventCreate", || {
        if event.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        write_out(event, event::create(event::DEFAULT)?)
    })
}

#[no_mangle]
pub extern "C" fn hipEventCreateWithFlags(event: *mut *mut c_void, flags: u32) -> hipError_t {
    call("hipEventCreateWithFlags", || {
        if event.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        write_out(event, event::create(flags)?)
    })
}

#[no_mangle]
pub extern "C" fn hipEventDestroy(event: *mut c_void) -> hipError_t {
    call("hipEventDestroy", || event::destroy(event))
}

#[no_mangle]
pub extern "C" fn hipEventRecord(event: *mut c_void, stream: *mut c_void) -> hipError_t {
    call("hipEventRecord", || event::record(event, stream))
}

#[no_mangle]
pub extern "C" fn hipEventRecord_spt(event: *mut c_void, stream: *mut c_void) -> hipError_t {
    let stream = crate::runtime::stream::spt_stream(stream);
    call("hipEventRecord_spt", || event::record(event, stream))
}

#[no_mangle]
pub extern "C" fn hipEventSynchronize(event: *mut c_void) -> hipError_t {
    call("hipEventSynchronize", || event::synchronize(event))
}

#[no_mangle]
pub extern "C" fn hipEventQuery(event: *mut c_void) -> hipError_t {
    call("hipEventQuery", || event::query(event))
}

#[no_mangle]
pub extern "C" fn hipEventElapsedTime(
    ms: *mut f32,
    start: *mut c_void,
    stop: *mut c_void,
) -> hipError_t {
    call("hipEventElapsedTime", || {
        if ms.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        write_out(ms, event::elapsed_ms(start, stop)?)
    })
}

include!(concat!(env!("OUT_DIR"), "/symver_event.rs"));

//! Streams, stream callbacks and per-thread-stream entry points.
//!
//! `_spt` entry points are what code built with `-fgpu-default-stream=per-thread` calls: there
//! the null stream means the calling thread's stream (`hipStreamPerThread`).
#![allow(non_snake_case)]

use super::{call, write_out};
use crate::error::{hipError_t, HipError};
use crate::policy::Priority;
use crate::runtime::launch::{self, Dim3};
use crate::runtime::stream;
use std::ffi::c_void;

/// `hipStreamCallback_t`.
type StreamCallback = unsafe extern "C" fn(*mut c_void, hipError_t, *mut c_void);
/// `hipHostFn_t`.
type HostFn = unsafe extern "C" fn(*mut c_void);

fn create(out: *mut *mut c_void, flags: u32, priority: i32, mask: Option<&[u32]>) -> hipError_t {
    call("hipStreamCreate", || {
        if out.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        write_out(out, stream::create(flags, priority, mask)?)
    })
}

#[no_mangle]
pub extern "C" fn hipStreamCreate(stream: *mut *mut c_void) -> hipError_t {
    create(stream, 0, 0, None)
}

#[no_mangle]
pub extern "C" fn hipStreamCreateWithFlags(stream: *mut *mut c_void, flags: u32) -> hipError_t {
    create(stream, flags, 0, None)
}

#[no_mangle]
pub extern "C" fn hipStreamCreateWithPriority(
    stream: *mut *mut c_void,
    flags: u32,
    priority: i32,
) -> hipError_t {
    create(stream, flags, priority, None)
}

/// # Safety
/// `cu_mask` must hold `cu_mask_size` words when non-null.
#[no_mangle]
pub unsafe extern "C" fn hipExtStreamCreateWithCUMask(
    stream: *mut *mut c_void,
    cu_mask_size: u32,
    cu_mask: *const u32,
) -> hipError_t {
    if cu_mask.is_null() || cu_mask_size == 0 {
        return call("hipExtStreamCreateWithCUMask", || {
            Err(HipError::INVALID_VALUE)
        });
    }
    // SAFETY: non-null with `cu_mask_size` words (caller's contract).
    let mask = unsafe { std::slice::from_raw_parts(cu_mask, cu_mask_size as usize) };
    create(stream, 0, 0, Some(mask))
}

/// # Safety
/// `output` must have room for `cu_mask_size` words when non-null.
#[no_mangle]
pub unsafe extern "C" fn hipExtStreamGetCUMask(
    stream: *mut c_void,
    cu_mask_size: u32,
    output: *mut u32,
) -> hipError_t {
    call("hipExtStreamGetCUMask", || {
        if output.is_null() || cu_mask_size == 0 {
            return Err(HipError::INVALID_VALUE);
        }
        let mask = stream::cu_mask_of(stream)?;
        // SAFETY: the caller provides `cu_mask_size` words at `output`.
        let out = unsafe { std::slice::from_raw_parts_mut(output, cu_mask_size as usize) };
        for (i, word) in out.iter_mut().enumerate() {
            *word = mask.get(i).copied().unwrap_or(0);
        }
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn hipDeviceGetStreamPriorityRange(
    least: *mut i32,
    greatest: *mut i32,
) -> hipError_t {
    call("hipDeviceGetStreamPriorityRange", || {
        crate::runtime::runtime()?;
        // Either pointer may be null (CUDA and AMD allow asking for one bound).
        if !least.is_null() {
            write_out(least, Priority::LEAST)?;
        }
        if !greatest.is_null() {
            write_out(greatest, Priority::GREATEST)?;
        }
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn hipStreamDestroy(stream: *mut c_void) -> hipError_t {
    call("hipStreamDestroy", || stream::destroy(stream))
}

#[no_mangle]
pub extern "C" fn hipStreamSynchronize(stream: *mut c_void) -> hipError_t {
    call("hipStreamSynchronize", || stream::synchronize(stream))
}

#[no_mangle]
pub extern "C" fn hipStreamSynchronize_spt(stream: *mut c_void) -> hipError_t {
    call("hipStreamSynchronize_spt", || {
        stream::synchronize(stream::spt_stream(stream))
    })
}

#[no_mangle]
pub extern "C" fn hipStreamQuery(stream: *mut c_void) -> hipError_t {
    call("hipStreamQuery", || stream::query(stream))
}

#[no_mangle]
pub extern "C" fn hipStreamQuery_spt(stream: *mut c_void) -> hipError_t {
    call("hipStreamQuery_spt", || {
        stream::query(stream::spt_stream(stream))
    })
}

#[no_mangle]
pub extern "C" fn hipStreamWaitEvent(
    stream: *mut c_void,
    event: *mut c_void,
    flags: u32,
) -> hipError_t {
    call("hipStreamWaitEvent", || {
        crate::runtime::event::stream_wait(stream, event, flags)
    })
}

#[no_mangle]
pub extern "C" fn hipStreamWaitEvent_spt(
    stream: *mut c_void,
    event: *mut c_void,
    flags: u32,
) -> hipError_t {
    call("hipStreamWaitEvent_spt", || {
        crate::runtime::event::stream_wait(stream::spt_stream(stream), event, flags)
    })
}

fn get_flags(name: &'static str, stream: *mut c_void, flags: *mut u32) -> hipError_t {
    call(name, || {
        if flags.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        let (_, s) = stream::lookup(stream)?;
        write_out(flags, s.flags)
    })
}

#[no_mangle]
pub extern "C" fn hipStreamGetFlags(stream: *mut c_void, flags: *mut u32) -> hipError_t {
    get_flags("hipStreamGetFlags", stream, flags)
}

#[no_mangle]
pub extern "C" fn hipStreamGetFlags_spt(stream: *mut c_void, flags: *mut u32) -> hipError_t {
    get_flags("hipStreamGetFlags_spt", stream::spt_stream(stream), flags)
}

fn get_priority(name: &'static str, stream: *mut c_void, priority: *mut i32) -> hipError_t {
    call(name, || {
        if priority.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        let (_, s) = stream::lookup(stream)?;
        write_out(priority, s.priority.to_hip())
    })
}

#[no_mangle]
pub extern "C" fn hipStreamGetPriority(stream: *mut c_void, priority: *mut i32) -> hipError_t {
    get_priority("hipStreamGetPriority", stream, priority)
}

#[no_mangle]
pub extern "C" fn hipStreamGetPriority_spt(stream: *mut c_void, priority: *mut i32) -> hipError_t {
    get_priority(
        "hipStreamGetPriority_spt",
        stream::spt_stream(stream),
        priority,
    )
}

#[no_mangle]
pub extern "C" fn hipStreamGetDevice(stream: *mut c_void, device: *mut i32) -> hipError_t {
    call("hipStreamGetDevice", || {
        if device.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        let (d, _) = stream::lookup(stream)?;
        write_out(device, d.index as i32)
    })
}

/// AMD's older spelling: returns the device ordinal, or -1 for an invalid stream.
#[no_mangle]
pub extern "C" fn hipGetStreamDeviceId(stream: *mut c_void) -> i32 {
    let mut id = -1;
    call("hipGetStreamDeviceId", || {
        id = stream::lookup(stream)?.0.index as i32;
        Ok(())
    });
    id
}

/// A C pointer carried into a host task (the program vouches for its thread safety).
#[derive(Clone, Copy)]
struct UserPtr(usize);
// SAFETY: HIP hands callback arguments to another thread by definition; the pointer is never
// dereferenced by hipshim.
unsafe impl Send for UserPtr {}

fn add_callback(
    name: &'static str,
    stream: *mut c_void,
    callback: Option<StreamCallback>,
    user_data: *mut c_void,
    flags: u32,
) -> hipError_t {
    call(name, || {
        // Flags are reserved and must be 0.
        let (Some(callback), 0) = (callback, flags) else {
            return Err(HipError::INVALID_VALUE);
        };
        let (device, s) = stream::lookup(stream)?;
        let (handle, data) = (UserPtr(stream as usize), UserPtr(user_data as usize));
        stream::enqueue_host_task(
            &device.streams,
            &s,
            Box::new(move || {
                let (handle, data) = (handle, data);
                // SAFETY: the program registered this callback for exactly this call; errors
                // of earlier work are reported by the next synchronising call instead.
                unsafe { callback(handle.0 as *mut c_void, 0, data.0 as *mut c_void) };
                Ok(())
            }),
        )
    })
}

#[no_mangle]
pub extern "C" fn hipStreamAddCallback(
    stream: *mut c_void,
    callback: Option<StreamCallback>,
    user_data: *mut c_void,
    flags: u32,
) -> hipError_t {
    add_callback("hipStreamAddCallback", stream, callback, user_data, flags)
}

#[no_mangle]
pub extern "C" fn hipStreamAddCallback_spt(
    stream: *mut c_void,
    callback: Option<StreamCallback>,
    user_data: *mut c_void,
    flags: u32,
) -> hipError_t {
    add_callback(
        "hipStreamAddCallback_spt",
        stream::spt_stream(stream),
        callback,
        user_data,
        flags,
    )
}

fn launch_host_func(
    name: &'static str,
    stream: *mut c_void,
    function: Option<HostFn>,
    user_data: *mut c_void,
) -> hipError_t {
    call(name, || {
        let Some(function) = function else {
            return Err(HipError::INVALID_VALUE);
        };
        let (device, s) = stream::lookup(stream)?;
        let data = UserPtr(user_data as usize);
        stream::enqueue_host_task(
            &device.streams,
            &s,
            Box::new(move || {
                let data = data;
                // SAFETY: the program registered this function for exactly this call.
                unsafe { function(data.0 as *mut c_void) };
                Ok(())
            }),
        )
    })
}

#[no_mangle]
pub extern "C" fn hipLaunchHostFunc(
    stream: *mut c_void,
    function: Option<HostFn>,
    user_data: *mut c_void,
) -> hipError_t {
    launch_host_func("hipLaunchHostFunc", stream, function, user_data)
}

#[no_mangle]
pub extern "C" fn hipLaunchHostFunc_spt(
    stream: *mut c_void,
    function: Option<HostFn>,
    user_data: *mut c_void,
) -> hipError_t {
    launch_host_func(
        "hipLaunchHostFunc_spt",
        stream::spt_stream(stream),
        function,
        user_data,
    )
}

/// `hipLaunchKernel` on the per-thread stream when `stream` is null.
///
/// # Safety
/// As `hipLaunchKernel`: `args` holds one pointer per explicit kernel argument.
#[no_mangle]
pub unsafe extern "C" fn hipLaunchKernel_spt(
    function: *const c_void,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    shared_mem: usize,
    stream: *mut c_void,
) -> hipError_t {
    // A null or unregistered `function` is hipErrorInvalidDeviceFunction (launch_kernel).
    call("hipLaunchKernel_spt", || {
        // SAFETY: HIP's contract: `args` holds one pointer per explicit kernel argument.
        unsafe {
            launch::launch_kernel(
                function,
                grid,
                block,
                args as *const *const c_void,
                shared_mem,
                stream::spt_stream(stream),
            )
        }
    })
}

include!(concat!(env!("OUT_DIR"), "/symver_stream.rs"));

//! Streams, stream callbacks and per-thread-stream entry points (`runtime/stream/`).
//!
//! `_spt` entry points are what code built with `-fgpu-default-stream=per-thread` calls: there
//! the null stream means the calling thread's stream (`hipStreamPerThread`).

use super::convert::{self, write_if_wanted, Out, PerThread, Stream};
use super::declare::hip_api;
use super::types::{hipError_t, hipStream_t, BatchMemOpParams, HostFn, StreamCallback};
use crate::error::{HipError, HipResult};
use crate::policy::Priority;
use crate::runtime::base::compat::{self, Abi};
use crate::runtime::{self, copy, graph, stream};
use std::ffi::c_void;

hip_api! {
    fn hipStreamCreate(stream: *mut hipStream_t => Out<hipStream_t>) -> hipError_t {
        stream.write(stream::create(runtime::current_device()?, 0, 0, None)?)
    }

    fn hipStreamCreateWithFlags(stream: *mut hipStream_t => Out<hipStream_t>, flags: u32) -> hipError_t {
        stream.write(stream::create(runtime::current_device()?, flags, 0, None)?)
    }

    fn hipStreamCreateWithPriority(
        stream: *mut hipStream_t => Out<hipStream_t>,
        flags: u32,
        priority: i32,
    ) -> hipError_t {
        stream.write(stream::create(runtime::current_device()?, flags, priority, None)?)
    }

    fn hipExtStreamCreateWithCUMask(
        stream: *mut hipStream_t => Out<hipStream_t>,
        cu_mask_size: u32,
        cu_mask: *const u32,
    ) -> hipError_t {
        // SAFETY: HIP's contract: `cu_mask` holds `cu_mask_size` words.
        let mask = unsafe { convert::slice(cu_mask, cu_mask_size as usize, "cu_mask") }?;
        stream.write(stream::create(runtime::current_device()?, 0, 0, Some(mask))?)
    }

    fn hipExtStreamGetCUMask(stream: hipStream_t, cu_mask_size: u32, output: *mut u32) -> hipError_t {
        // SAFETY: HIP's contract: `output` has room for `cu_mask_size` words.
        let output = unsafe { convert::slice_mut(output, cu_mask_size as usize, "output") }?;
        let mask = stream::cu_mask_of(runtime::devices()?, stream)?;
        for (i, word) in output.iter_mut().enumerate() {
            *word = mask.get(i).copied().unwrap_or(0);
        }
        Ok(())
    }

    /// Either pointer may be null (CUDA and AMD allow asking for one bound).
    fn hipDeviceGetStreamPriorityRange(
        least: *mut i32 => Option<Out<i32>>,
        greatest: *mut i32 => Option<Out<i32>>,
    ) -> hipError_t {
        runtime::runtime()?;
        write_if_wanted(least, Priority::LEAST)?;
        write_if_wanted(greatest, Priority::GREATEST)
    }

    /// The null and per-thread streams are hipErrorInvalidHandle; a destroyed one is reported
    /// as the process's ROCm ABI does (`compat::dead_handle`).
    fn hipStreamDestroy(stream: hipStream_t) -> hipError_t {
        let special = matches!(stream as usize, 0 | stream::LEGACY_HANDLE | stream::PER_THREAD_HANDLE);
        runtime::devices()
            .and_then(|devices| stream::destroy(devices, stream))
            .map_err(|e| if special { e } else { compat::dead_handle(e) })
    }

    fn hipStreamSynchronize(stream: hipStream_t) -> hipError_t {
        let devices = runtime::devices().map_err(compat::dead_handle)?;
        graph::capture::refuse_on(devices, stream, "hipStreamSynchronize").map_err(compat::dead_handle)?;
        stream::synchronize(devices, stream).map_err(compat::dead_handle)
    }

    // This and hipStreamQuery_spt are written out, not aliases: they answer a dead handle
    // with the lookup's error, where the plain forms map it per ROCm ABI (`compat::dead_handle`).
    fn hipStreamSynchronize_spt(stream: hipStream_t => PerThread<hipStream_t>) -> hipError_t {
        let devices = runtime::devices()?;
        graph::capture::refuse_on(devices, stream.0, "hipStreamSynchronize")?;
        stream::synchronize(devices, stream.0)
    }

    /// The null stream is not ready while a blocking stream has work pending (it waits for
    /// them, as its synchronisation does).
    fn hipStreamQuery(stream: hipStream_t) -> hipError_t {
        let devices = runtime::devices().map_err(compat::dead_handle)?;
        graph::capture::refuse_on(devices, stream, "hipStreamQuery").map_err(compat::dead_handle)?;
        stream::query(devices, stream).map_err(compat::dead_handle)
    }

    fn hipStreamQuery_spt(stream: hipStream_t => PerThread<hipStream_t>) -> hipError_t {
        let devices = runtime::devices()?;
        graph::capture::refuse_on(devices, stream.0, "hipStreamQuery")?;
        stream::query(devices, stream.0)
    }

    /// The null stream is hipErrorInvalidValue, as AMD answers (CUDA gives its flags).
    fn hipStreamGetFlags(stream: hipStream_t, flags: *mut u32 => Out<u32>) -> hipError_t {
        if stream.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        flags.write(live(stream)?.stream.flags)
    }

    fn hipStreamGetFlags_spt(
        stream: hipStream_t => PerThread<Stream>,
        flags: *mut u32 => Out<u32>,
    ) -> hipError_t {
        flags.write(stream.0.stream.flags)
    }

    fn hipStreamGetPriority(stream: hipStream_t, priority: *mut i32 => Out<i32>) -> hipError_t {
        priority.write(live(stream)?.stream.priority.to_hip())
    }

    fn hipStreamGetPriority_spt(
        stream: hipStream_t => PerThread<Stream>,
        priority: *mut i32 => Out<i32>,
    ) -> hipError_t {
        priority.write(stream.0.stream.priority.to_hip())
    }

    fn hipStreamGetDevice(stream: hipStream_t, device: *mut i32 => Out<i32>) -> hipError_t {
        device.write(live(stream)?.device.index as i32)
    }

    /// A number no other stream of the process has (null and per-thread streams included).
    fn hipStreamGetId(stream: hipStream_t, id: *mut u64 => Out<u64>) -> hipError_t {
        id.write(live(stream)?.stream.serial)
    }

    /// AMD's older spelling: returns the device ordinal, or -1 for an invalid stream.
    fn hipGetStreamDeviceId(stream: hipStream_t => Stream) -> i32 as value(-1) {
        Ok(stream.device.index as i32)
    }

    fn hipStreamAddCallback(
        stream: hipStream_t,
        callback: Option<StreamCallback>,
        user_data: *mut c_void,
        flags: u32,
    ) -> hipError_t {
        add_callback(stream, callback, user_data, flags)
    }
    alias hipStreamAddCallback_spt = hipStreamAddCallback with stream: PerThread;

    fn hipLaunchHostFunc(stream: hipStream_t, function: Option<HostFn>, user_data: *mut c_void) -> hipError_t {
        launch_host_func(stream, function, user_data)
    }
    alias hipLaunchHostFunc_spt = hipLaunchHostFunc with stream: PerThread;

    /// The stream's later work waits on the device until the value at `ptr` meets the
    /// condition `flags` names (`runtime/stream/value.rs`).
    fn hipStreamWaitValue32(stream: hipStream_t, ptr: *mut c_void, value: u32, flags: u32, mask: u32) -> hipError_t {
        stream::value::wait_value(runtime::devices()?, stream, ptr, value.into(), flags, mask.into(), 4)
    }

    fn hipStreamWaitValue64(stream: hipStream_t, ptr: *mut c_void, value: u64, flags: u32, mask: u64) -> hipError_t {
        stream::value::wait_value(runtime::devices()?, stream, ptr, value, flags, mask, 8)
    }

    /// `flags` are reserved and ignored, as AMD documents.
    fn hipStreamWriteValue32(stream: hipStream_t, ptr: *mut c_void, value: u32, flags: u32) -> hipError_t {
        let _ = flags;
        copy::write_value_async(super::copy::devices(), stream, ptr, value.into(), 4)
    }

    fn hipStreamWriteValue64(stream: hipStream_t, ptr: *mut c_void, value: u64, flags: u32) -> hipError_t {
        let _ = flags;
        copy::write_value_async(super::copy::devices(), stream, ptr, value, 8)
    }

    /// The operations of `params` in order, all checked before the first is enqueued
    /// (`copy::batch_mem_op`); `flags` must be 0 and `count` 1 to 256, as AMD requires.
    fn hipStreamBatchMemOp(
        stream: hipStream_t,
        count: u32,
        params: *mut BatchMemOpParams,
        flags: u32,
    ) -> hipError_t {
        if flags != 0 || count == 0 || count as usize > stream::value::BATCH_MAX {
            tracing::warn!(count, flags, "hipStreamBatchMemOp: flags must be 0 and count 1 to {}", stream::value::BATCH_MAX);
            return Err(HipError::INVALID_VALUE);
        }
        // SAFETY: HIP's contract: `params` holds `count` operations.
        let params = unsafe { convert::slice(params.cast_const(), count as usize, "paramArray") }?;
        let ops = params
            .iter()
            .enumerate()
            .map(|(i, p)| stream::value::MemOp::read(p, i))
            .collect::<HipResult<Vec<_>>>()?;
        copy::batch_mem_op(super::copy::devices(), stream, &ops)
    }

    /// `value` is a `hipStreamAttrValue`; its first word (`syncPolicy`) is what can be set.
    fn hipStreamSetAttribute(stream: hipStream_t => Stream, attr: u32, value: *const u32 => &u32) -> hipError_t {
        stream::attributes::set(&stream.stream, attr, *value)
    }

    fn hipStreamGetAttribute(stream: hipStream_t => Stream, attr: u32, value_out: *mut i32 => Out<i32>) -> hipError_t {
        value_out.write(stream::attributes::get(&stream.stream, attr)?)
    }

    fn hipStreamCopyAttributes(dst: hipStream_t => Stream, src: hipStream_t => Stream) -> hipError_t {
        stream::attributes::copy(&dst.stream, &src.stream);
        Ok(())
    }
}

/// A C pointer carried into a host task (the program vouches for its thread safety).
#[derive(Clone, Copy)]
struct UserPtr(usize);
// SAFETY: HIP hands callback arguments to another thread by definition; the pointer is never
// dereferenced by hipshim.
unsafe impl Send for UserPtr {}

/// `hipStreamAddCallback`: the callback gets the stream handle as the program passed it.
fn add_callback(
    handle: hipStream_t,
    callback: Option<StreamCallback>,
    user_data: *mut c_void,
    flags: u32,
) -> HipResult {
    // Flags are reserved and must be 0.
    let (Some(callback), 0) = (callback, flags) else {
        return Err(HipError::INVALID_VALUE);
    };
    let (device, s) = stream::lookup(runtime::devices()?, handle)?;
    // A capturing stream refuses the callback in every ABI (`Stream::begin`); ROCm 7 also
    // invalidates the capture (CUDA's rule).
    if compat::abi() >= Abi::Rocm7 {
        graph::capture::refuse_if_capturing(&s, "hipStreamAddCallback")?;
    }
    let (handle, data) = (UserPtr(handle as usize), UserPtr(user_data as usize));
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
}

fn launch_host_func(
    handle: hipStream_t,
    function: Option<HostFn>,
    user_data: *mut c_void,
) -> HipResult {
    let Some(function) = function else {
        return Err(HipError::INVALID_VALUE);
    };
    let (device, s) = stream::lookup(runtime::devices()?, handle)?;
    let call = graph::HostCall {
        function,
        user_data: user_data as usize,
    };
    if graph::capture::add(&s, || Ok(graph::NodeParams::Host(call)))? {
        return Ok(());
    }
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
}

#[cfg(test)]
#[test]
fn each_stream_creation_call_is_logged_under_its_own_name() {
    let log = crate::api::testing::ApiLog::start();
    let null = std::ptr::null_mut();
    // SAFETY: null out-pointers are rejected before anything is dereferenced.
    unsafe {
        hipStreamCreate(null);
        hipStreamCreateWithFlags(null, 0);
        hipStreamCreateWithPriority(null, 0, 0);
        hipExtStreamCreateWithCUMask(null, 1, [1u32].as_ptr());
    }
    assert_eq!(
        log.names(),
        [
            "hipStreamCreate",
            "hipStreamCreateWithFlags",
            "hipStreamCreateWithPriority",
            "hipExtStreamCreateWithCUMask"
        ]
    );
}

#[cfg(test)]
#[test]
fn an_alias_is_an_export_of_its_own_logged_under_its_own_name() {
    let log = crate::api::testing::ApiLog::start();
    let null = std::ptr::null_mut();
    // SAFETY: a call without a function is refused before anything is dereferenced.
    let result = unsafe { hipLaunchHostFunc_spt(null, None, null) };
    assert_ne!(result, 0);
    assert_eq!(log.names(), ["hipLaunchHostFunc_spt"]);

    let row = |name: &str| {
        *SIGNATURES
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("{name} has no row"))
    };
    let (alias, target) = (row("hipLaunchHostFunc_spt"), row("hipLaunchHostFunc"));
    assert_eq!((alias.params, alias.ret), (target.params, target.ret));
}

/// The stream `raw` names; a handle that names none (destroyed, or never made) is reported as
/// the process's ROCm ABI does.
fn live(raw: hipStream_t) -> HipResult<Stream> {
    // SAFETY: the handle is only looked up in the stream table.
    unsafe { <Stream as convert::FromAbi<hipStream_t>>::from_abi(raw, "stream") }
        .map_err(compat::dead_handle)
}

#[cfg(not(test))]
include!(concat!(env!("OUT_DIR"), "/symver_stream.rs"));

//! Stream-ordered (asynchronous) copies and fills.
#![allow(non_snake_case)]

use super::call;
use crate::error::hipError_t;
use crate::runtime::copy::{self, CopyKind};
use crate::runtime::stream;
use std::ffi::c_void;

/// # Safety
/// HIP's contract: host ranges are valid for `size` bytes (until the copy completes for
/// pinned memory); device ranges are checked.
#[no_mangle]
pub unsafe extern "C" fn hipMemcpyAsync(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    kind: u32,
    stream: *mut c_void,
) -> hipError_t {
    call("hipMemcpyAsync", || {
        let kind = CopyKind::from_raw(kind)?;
        // SAFETY: forwarded caller contract.
        unsafe { copy::memcpy_async(dst, src, size, kind, stream) }
    })
}

/// # Safety
/// As [`hipMemcpyAsync`].
#[no_mangle]
pub unsafe extern "C" fn hipMemcpyAsync_spt(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    kind: u32,
    stream: *mut c_void,
) -> hipError_t {
    call("hipMemcpyAsync_spt", || {
        let kind = CopyKind::from_raw(kind)?;
        // SAFETY: forwarded caller contract.
        unsafe { copy::memcpy_async(dst, src, size, kind, stream::spt_stream(stream)) }
    })
}

/// # Safety
/// As [`hipMemcpyAsync`].
#[no_mangle]
pub unsafe extern "C" fn hipMemcpyHtoDAsync(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    stream: *mut c_void,
) -> hipError_t {
    call("hipMemcpyHtoDAsync", || {
        // SAFETY: forwarded caller contract.
        unsafe { copy::memcpy_async(dst, src, size, CopyKind::HostToDevice, stream) }
    })
}

/// # Safety
/// As [`hipMemcpyAsync`].
#[no_mangle]
pub unsafe extern "C" fn hipMemcpyDtoHAsync(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    stream: *mut c_void,
) -> hipError_t {
    call("hipMemcpyDtoHAsync", || {
        // SAFETY: forwarded caller contract.
        unsafe { copy::memcpy_async(dst, src, size, CopyKind::DeviceToHost, stream) }
    })
}

/// # Safety
/// As [`hipMemcpyAsync`].
#[no_mangle]
pub unsafe extern "C" fn hipMemcpyDtoDAsync(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    stream: *mut c_void,
) -> hipError_t {
    call("hipMemcpyDtoDAsync", || {
        // SAFETY: forwarded caller contract.
        unsafe { copy::memcpy_async(dst, src, size, CopyKind::DeviceToDevice, stream) }
    })
}

/// `hipMemcpyWithStream`: a copy in the stream's order that returns when it is complete.
///
/// # Safety
/// As [`hipMemcpyAsync`].
#[no_mangle]
pub unsafe extern "C" fn hipMemcpyWithStream(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    kind: u32,
    stream: *mut c_void,
) -> hipError_t {
    call("hipMemcpyWithStream", || {
        let kind = CopyKind::from_raw(kind)?;
        // SAFETY: forwarded caller contract.
        unsafe { copy::memcpy_async(dst, src, size, kind, stream) }?;
        let (device, s) = stream::lookup(stream)?;
        s.synchronize(&device.streams)
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn copy_2d(
    name: &'static str,
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: u32,
    stream: *mut c_void,
) -> hipError_t {
    call(name, || {
        let kind = CopyKind::from_raw(kind)?;
        // SAFETY: forwarded caller contract.
        unsafe { copy::memcpy_2d_async(dst, dpitch, src, spitch, width, height, kind, stream) }
    })
}

/// # Safety
/// As [`hipMemcpyAsync`], for each of the `height` rows.
#[no_mangle]
pub unsafe extern "C" fn hipMemcpy2DAsync(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: u32,
    stream: *mut c_void,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    unsafe {
        copy_2d(
            "hipMemcpy2DAsync",
            dst,
            dpitch,
            src,
            spitch,
            width,
            height,
            kind,
            stream,
        )
    }
}

/// # Safety
/// As [`hipMemcpy2DAsync`].
#[no_mangle]
pub unsafe extern "C" fn hipMemcpy2DAsync_spt(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: u32,
    stream: *mut c_void,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    unsafe {
        copy_2d(
            "hipMemcpy2DAsync_spt",
            dst,
            dpitch,
            src,
            spitch,
            width,
            height,
            kind,
            stream::spt_stream(stream),
        )
    }
}

#[no_mangle]
pub extern "C" fn hipMemsetAsync(
    dst: *mut c_void,
    value: i32,
    size: usize,
    stream: *mut c_void,
) -> hipError_t {
    call("hipMemsetAsync", || {
        copy::memset_async(dst, value as u8 as u32, 1, size, stream)
    })
}

#[no_mangle]
pub extern "C" fn hipMemsetAsync_spt(
    dst: *mut c_void,
    value: i32,
    size: usize,
    stream: *mut c_void,
) -> hipError_t {
    call("hipMemsetAsync_spt", || {
        copy::memset_async(dst, value as u8 as u32, 1, size, stream::spt_stream(stream))
    })
}

#[no_mangle]
pub extern "C" fn hipMemsetD8Async(
    dst: *mut c_void,
    value: u8,
    count: usize,
    stream: *mut c_void,
) -> hipError_t {
    call("hipMemsetD8Async", || {
        copy::memset_async(dst, value as u32, 1, count, stream)
    })
}

#[no_mangle]
pub extern "C" fn hipMemsetD16Async(
    dst: *mut c_void,
    value: u16,
    count: usize,
    stream: *mut c_void,
) -> hipError_t {
    call("hipMemsetD16Async", || {
        copy::memset_async(dst, value as u32, 2, count, stream)
    })
}

#[no_mangle]
pub extern "C" fn hipMemsetD32Async(
    dst: *mut c_void,
    value: i32,
    count: usize,
    stream: *mut c_void,
) -> hipError_t {
    call("hipMemsetD32Async", || {
        copy::memset_async(dst, value as u32, 4, count, stream)
    })
}

include!(concat!(env!("OUT_DIR"), "/symver_memory_async.rs"));

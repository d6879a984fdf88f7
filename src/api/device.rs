//! Initialisation, devices, versions.
#![allow(non_snake_case)]

use super::{call, write_out};
use crate::error::{hipError_t, HipError};
use crate::runtime;
use std::ffi::c_char;

/// The HIP API level hipshim implements, in HIP_VERSION form (major * 10^7 + minor * 10^5).
const HIP_VERSION: i32 = 60_200_000;

#[no_mangle]
pub extern "C" fn hipInit(flags: u32) -> hipError_t {
    call("hipInit", || runtime::init(flags))
}

#[no_mangle]
pub extern "C" fn hipGetDeviceCount(count: *mut i32) -> hipError_t {
    call("hipGetDeviceCount", || {
        if count.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        write_out(count, runtime::device_count()?)
    })
}

#[no_mangle]
pub extern "C" fn hipSetDevice(device: i32) -> hipError_t {
    call("hipSetDevice", || runtime::set_device(device))
}

#[no_mangle]
pub extern "C" fn hipGetDevice(device: *mut i32) -> hipError_t {
    call("hipGetDevice", || {
        if device.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        write_out(device, runtime::get_device()?)
    })
}

#[no_mangle]
pub extern "C" fn hipDeviceSynchronize() -> hipError_t {
    call("hipDeviceSynchronize", runtime::device_synchronize)
}

#[no_mangle]
pub extern "C" fn hipRuntimeGetVersion(version: *mut i32) -> hipError_t {
    call("hipRuntimeGetVersion", || write_out(version, HIP_VERSION))
}

#[no_mangle]
pub extern "C" fn hipDriverGetVersion(version: *mut i32) -> hipError_t {
    call("hipDriverGetVersion", || write_out(version, HIP_VERSION))
}

/// Copies the device's product name (NUL-terminated, truncated to `len`).
#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetName(name: *mut c_char, len: i32, device: i32) -> hipError_t {
    call("hipDeviceGetName", || {
        if name.is_null() || len <= 0 {
            return Err(HipError::INVALID_VALUE);
        }
        let rt = runtime::runtime()?;
        let index = usize::try_from(device).map_err(|_| HipError::INVALID_DEVICE)?;
        let product = rt.device(index)?.product_name.as_bytes();
        let n = product.len().min(len as usize - 1);
        // SAFETY: the caller provides `len` writable bytes at `name`; we write n + 1 <= len.
        unsafe {
            std::ptr::copy_nonoverlapping(product.as_ptr(), name as *mut u8, n);
            *name.add(n) = 0;
        }
        Ok(())
    })
}

include!(concat!(env!("OUT_DIR"), "/symver_device.rs"));

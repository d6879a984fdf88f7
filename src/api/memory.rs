//! Memory allocation and copies.
#![allow(non_snake_case)]

use super::{call, write_out};
use crate::error::{hipError_t, HipError};
use crate::runtime::memory::{self, CopyKind};
use std::ffi::c_void;

#[no_mangle]
pub extern "C" fn hipMalloc(ptr: *mut *mut c_void, size: usize) -> hipError_t {
    call("hipMalloc", || {
        if ptr.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        write_out(ptr, memory::malloc(size)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipFree(ptr: *mut c_void) -> hipError_t {
    // SAFETY: `free` only dereferences pointers it finds in its allocation table.
    call("hipFree", || unsafe { memory::free(ptr) })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpy(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    kind: u32,
) -> hipError_t {
    call("hipMemcpy", || {
        let kind = CopyKind::from_raw(kind)?;
        // SAFETY: HIP's contract: host-side ranges are valid for `size` bytes.
        unsafe { memory::memcpy(dst, src, size, kind) }
    })
}

#[no_mangle]
pub extern "C" fn hipMemset(dst: *mut c_void, value: i32, size: usize) -> hipError_t {
    call("hipMemset", || memory::memset(dst, value as u8, size))
}

include!(concat!(env!("OUT_DIR"), "/symver_memory.rs"));

//! Error reporting.
#![allow(non_snake_case)]

use crate::error::{hipError_t, HipError};
use std::ffi::c_char;

/// Returns the thread's last error and resets it to `hipSuccess`.
#[no_mangle]
pub extern "C" fn hipGetLastError() -> hipError_t {
    super::take_last_error()
}

/// Returns the thread's last error without resetting it.
#[no_mangle]
pub extern "C" fn hipPeekAtLastError() -> hipError_t {
    super::peek_last_error()
}

#[no_mangle]
pub extern "C" fn hipGetErrorName(error: hipError_t) -> *const c_char {
    HipError::name_of(error)
        .unwrap_or(c"hipErrorUnknown")
        .as_ptr()
}

#[no_mangle]
pub extern "C" fn hipGetErrorString(error: hipError_t) -> *const c_char {
    HipError::description_of(error)
        .unwrap_or(c"unknown error")
        .as_ptr()
}

include!(concat!(env!("OUT_DIR"), "/symver_errors.rs"));

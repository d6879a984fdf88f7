//! Error reporting (`error.rs`: the codes, names and descriptions; the last error is kept by
//! `api::call`).

use super::declare::hip_api;
use super::types::hipError_t;
use crate::error::HipError;
use std::ffi::c_char;

hip_api! {
    /// Returns the thread's last error and resets it to `hipSuccess`.
    fn hipGetLastError() -> hipError_t as plain(HipError::UNKNOWN.code()) {
        super::take_last_error()
    }

    /// Returns the thread's last error without resetting it.
    fn hipPeekAtLastError() -> hipError_t as plain(HipError::UNKNOWN.code()) {
        super::peek_last_error()
    }

    fn hipGetErrorName(error: hipError_t) -> *const c_char as plain(std::ptr::null()) {
        HipError::name_of(error)
            .unwrap_or(c"hipErrorUnknown")
            .as_ptr()
    }

    fn hipGetErrorString(error: hipError_t) -> *const c_char as plain(std::ptr::null()) {
        HipError::description_of(error)
            .unwrap_or(c"unknown error")
            .as_ptr()
    }
}

#[cfg(not(test))]
include!(concat!(env!("OUT_DIR"), "/symver_error.rs"));

//! Error reporting (`error.rs`: the codes, names and descriptions; the last error is kept by
//! `api::call`, and read as the process's ROCm ABI defines it: `runtime/base/compat.rs`).

use super::declare::hip_api;
use super::types::hipError_t;
use crate::error::HipError;
use std::ffi::{c_char, CStr};

hip_api! {
    /// Returns the thread's last error and resets it to `hipSuccess`: up to ROCm 6 the result
    /// of the latest call, from ROCm 7 on the latest failure since the last read.
    fn hipGetLastError() -> hipError_t as plain(HipError::UNKNOWN.code()) {
        super::take_last_error()
    }

    /// Returns the thread's last error (as `hipGetLastError` does) without resetting it.
    fn hipPeekAtLastError() -> hipError_t as plain(HipError::UNKNOWN.code()) {
        super::peek_last_error()
    }

    /// ROCm 6's `hipGetLastError` under the name ROCm 7 keeps it: the latest call's result.
    fn hipExtGetLastError() -> hipError_t as plain(HipError::UNKNOWN.code()) {
        super::take_latest_result()
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

    /// The driver-API form: the name through `out`; an unknown code still gets
    /// "hipErrorUnknown" but the call says hipErrorInvalidValue (AMD's answers). Leaves the
    /// last error alone, as AMD's does.
    fn hipDrvGetErrorName(error: hipError_t, out: *mut *const c_char) -> hipError_t
        as plain(HipError::UNKNOWN.code())
    {
        // SAFETY: HIP's contract: `out` is null or points to a writable pointer.
        unsafe { write_text(out, error, HipError::name_of(error), c"hipErrorUnknown") }
    }

    /// As `hipDrvGetErrorName`, with the description ("unknown error" for an unknown code).
    fn hipDrvGetErrorString(error: hipError_t, out: *mut *const c_char) -> hipError_t
        as plain(HipError::UNKNOWN.code())
    {
        // SAFETY: as for hipDrvGetErrorName.
        unsafe { write_text(out, error, HipError::description_of(error), c"unknown error") }
    }
}

/// Writes `known` (or `unknown`) through `out`; success only for a known code.
///
/// # Safety
/// `out` is null or points to a writable pointer.
unsafe fn write_text(
    out: *mut *const c_char,
    code: hipError_t,
    known: Option<&'static CStr>,
    unknown: &'static CStr,
) -> hipError_t {
    if out.is_null() {
        return HipError::INVALID_VALUE.code();
    }
    // SAFETY: the caller's contract.
    unsafe { out.write(known.unwrap_or(unknown).as_ptr()) };
    if known.is_some() || code == HipError::UNKNOWN.code() {
        0
    } else {
        HipError::INVALID_VALUE.code()
    }
}

#[cfg(not(test))]
include!(concat!(env!("OUT_DIR"), "/symver_error.rs"));

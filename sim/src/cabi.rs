//! Helpers for writing results through C out-pointers.

use crate::error::{HsaError, HsaResult};
use std::ffi::c_void;

/// Writes `v` through `dst`, which the caller promises is valid for a `T`.
///
/// # Safety
/// `dst` must be null (rejected) or valid for writes of `size_of::<T>()` bytes; it need not
/// be aligned (C callers pass `void*` attribute buffers).
pub unsafe fn put<T: Copy>(dst: *mut c_void, v: T) -> HsaResult {
    if dst.is_null() {
        return Err(HsaError::INVALID_ARGUMENT);
    }
    // SAFETY: non-null and valid per the caller; unaligned write for `void*` buffers.
    unsafe { std::ptr::write_unaligned(dst.cast::<T>(), v) };
    Ok(())
}

/// Same as [`put`] for typed out-pointers.
///
/// # Safety
/// As for [`put`].
pub unsafe fn out<T: Copy>(dst: *mut T, v: T) -> HsaResult {
    // SAFETY: forwarded contract.
    unsafe { put(dst.cast(), v) }
}

/// Writes `s` NUL-padded into a fixed `N`-byte char array (agent/pool names are `char[64]`).
///
/// # Safety
/// `dst` must be null (rejected) or valid for writes of `N` bytes.
pub unsafe fn put_fixed_str<const N: usize>(dst: *mut c_void, s: &str) -> HsaResult {
    let mut buf = [0u8; N];
    let n = s.len().min(N - 1);
    buf[..n].copy_from_slice(&s.as_bytes()[..n]);
    // SAFETY: forwarded contract.
    unsafe { put(dst, buf) }
}

/// Writes the bytes of `s` without a terminator (symbol and ISA names: the length is a
/// separate attribute).
///
/// # Safety
/// `dst` must be null (rejected) or valid for writes of `s.len()` bytes.
pub unsafe fn put_bytes(dst: *mut c_void, s: &[u8]) -> HsaResult {
    if dst.is_null() {
        return Err(HsaError::INVALID_ARGUMENT);
    }
    // SAFETY: valid per the caller; byte copy has no alignment needs.
    unsafe { std::ptr::copy_nonoverlapping(s.as_ptr(), dst.cast::<u8>(), s.len()) };
    Ok(())
}

/// A monotonic nanosecond clock: the HSA system timestamp (frequency 1 GHz).
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-parameter; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64) * 1_000_000_000 + ts.tv_nsec as u64
}

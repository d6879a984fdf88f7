//! Helpers the exported shells (`api/`) write results through C out-pointers with: part of the
//! C-ABI layer above the core, which hands the shells typed values.

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

//! Shared virtual memory attributes (`hsa_amd_svm_attributes_set/get`), as AMD's HIP
//! runtime uses them for `hipMallocManaged`, `hipMemAdvise` and `hipMemRangeGetAttribute`:
//! the shells; the ranges and their rules are `crate::svm`'s.

use super::shell::guard;
use crate::error::{HsaError, HsaResult};
use crate::svm::page_range;
pub use crate::svm::AttributePair;
use crate::system::rt;
use hsa_abi::*;
use std::ffi::c_void;

/// # Safety
/// `attribute_list` must hold `attribute_count` pairs.
unsafe fn pairs<'a>(list: *mut AttributePair, count: usize) -> HsaResult<&'a mut [AttributePair]> {
    if list.is_null() || count == 0 {
        return Err(HsaError::INVALID_ARGUMENT);
    }
    // SAFETY: `count` pairs at non-null `list` per the caller.
    Ok(unsafe { std::slice::from_raw_parts_mut(list, count) })
}

/// Records the attributes for the page range of `[ptr, ptr + size)`; access attributes
/// for GPU agents make the range device-accessible.
///
/// # Safety
/// `attribute_list` must hold `attribute_count` pairs.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_svm_attributes_set(
    ptr: *mut c_void,
    size: usize,
    attribute_list: *mut AttributePair,
    attribute_count: usize,
) -> hsa_status_t {
    guard("hsa_amd_svm_attributes_set", || {
        let rt = rt()?;
        let (start, end) = page_range(ptr as u64, size as u64)?;
        // SAFETY: forwarded caller contract.
        let list = unsafe { pairs(attribute_list, attribute_count) }?;
        rt.svm.set(&rt.platform(), start, end, list)
    })
}

/// Reports the attributes of the newest range covering the page range (defaults for
/// memory never given attributes: fine-grained, CPU access in place, GPUs no access).
///
/// # Safety
/// `attribute_list` must hold `attribute_count` pairs.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_svm_attributes_get(
    ptr: *mut c_void,
    size: usize,
    attribute_list: *mut AttributePair,
    attribute_count: usize,
) -> hsa_status_t {
    guard("hsa_amd_svm_attributes_get", || {
        let rt = rt()?;
        let (start, end) = page_range(ptr as u64, size as u64)?;
        // SAFETY: forwarded caller contract.
        let list = unsafe { pairs(attribute_list, attribute_count) }?;
        rt.svm.get(&rt.platform(), start, end, list)
    })
}

include!(concat!(env!("OUT_DIR"), "/symver_api_svm.rs"));

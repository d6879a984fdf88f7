//! The module API's linker, `hipLink*` (ROCm 6.4; `runtime/rtc/link.rs`, which it shares with
//! `hiprtcLink*`): inputs of type `hipJitInputSpirv` linked into one code object for
//! `hipModuleLoadData`. The order of the checks, and so which error a call with several
//! faults gets, is AMD's.

use super::convert::{slice, FromAbi, Out};
use super::declare::hip_api;
use super::rtc::{current_arch, link_options, optional_str};
use super::types::{hipError_t, hipLinkState_t};
use crate::error::{HipError, HipResult};
use crate::runtime::rtc::{self, HipLinkState};
use std::ffi::{c_char, c_void};
use std::sync::Arc;

/// The link `state` names; `unknown` is the call's answer to a handle that names none.
fn link(state: hipLinkState_t, unknown: HipError, call: &str) -> HipResult<Arc<HipLinkState>> {
    rtc::hip_link_state(state as usize).ok_or_else(|| {
        tracing::warn!(state = ?state, "{call}: not a live hipLinkState_t");
        unknown
    })
}

hip_api! {
    /// Of the options, `hipJitOptionIRtoISAOptExt` (an array of compiler options, such as
    /// `-mcpu=gfx90a` or `-mllvm ...`) with `hipJitOptionIRtoISAOptCountExt` (their number)
    /// count; CUDA's options are `hipErrorInvalidValue`, as in AMD's runtime.
    fn hipLinkCreate(
        num_options: u32,
        options: *mut u32,
        option_values: *mut *mut c_void,
        state: *mut hipLinkState_t => Out<hipLinkState_t>,
    ) -> hipError_t {
        if num_options > 0 {
            // SAFETY: HIP's contract: `num_options` options (null is refused there).
            let kinds = unsafe { slice(options.cast_const(), num_options as usize, "options") }?;
            rtc::hip_link_check_options(kinds)?;
            if option_values.is_null() {
                tracing::warn!("hipLinkCreate: options without values");
                return Err(HipError::INVALID_VALUE);
            }
        }
        // SAFETY: HIP's contract: as many values as options, and the string array and count
        // the two compiler-option values say.
        let compiler_options = unsafe { link_options(num_options, options, option_values) }
            .map_err(|_| HipError::INVALID_VALUE)?;
        state.write(rtc::hip_link_create(compiler_options) as hipLinkState_t)
    }

    /// `name` (may be null) only labels the input in the log; per-input options do not apply
    /// and are ignored.
    fn hipLinkAddData(
        state: hipLinkState_t,
        input_type: u32,
        data: *mut c_void,
        size: usize,
        name: *const c_char,
        _num_options: u32,
        _options: *mut u32,
        _option_values: *mut *mut c_void,
    ) -> hipError_t {
        if data.is_null() || size == 0 {
            tracing::warn!(size, "hipLinkAddData: no data");
            return Err(HipError::INVALID_IMAGE);
        }
        rtc::hip_link_check_input_type(input_type, "hipLinkAddData")?;
        let state = link(state, HipError::INVALID_HANDLE, "hipLinkAddData")?;
        // SAFETY: null or a NUL-terminated name.
        let name = unsafe { optional_str(name) }.map_err(|_| HipError::INVALID_VALUE)?;
        // SAFETY: HIP's contract: `size` readable bytes at `data`.
        let bytes = unsafe { slice(data.cast::<u8>().cast_const(), size, "data") }?;
        state.add(name.unwrap_or("(data)"), bytes.to_vec())
    }

    /// A file that cannot be read is `hipErrorInvalidConfiguration`, AMD's answer.
    fn hipLinkAddFile(
        state: hipLinkState_t,
        input_type: u32,
        path: *const c_char,
        _num_options: u32,
        _options: *mut u32,
        _option_values: *mut *mut c_void,
    ) -> hipError_t {
        if state.is_null() {
            tracing::warn!("hipLinkAddFile: a null hipLinkState_t");
            return Err(HipError::INVALID_HANDLE);
        }
        rtc::hip_link_check_input_type(input_type, "hipLinkAddFile")?;
        let state = link(state, HipError::INVALID_VALUE, "hipLinkAddFile")?;
        // SAFETY: HIP's contract: a NUL-terminated path (null is refused there).
        let path = unsafe { <&str>::from_abi(path, "path") }?;
        let bytes = std::fs::read(path).map_err(|e| {
            tracing::warn!(path, error = %e, "hipLinkAddFile: cannot read the file");
            HipError::INVALID_CONFIGURATION
        })?;
        state.add(path, bytes)
    }

    /// `*bin_out` stays valid until the link is destroyed or completed again. A link of
    /// nothing is a code object without kernels, as AMD's.
    fn hipLinkComplete(
        state: hipLinkState_t,
        bin_out: *mut *mut c_void => Out<*mut c_void>,
        size_out: *mut usize => Out<usize>,
    ) -> hipError_t {
        let state = link(state, HipError::INVALID_VALUE, "hipLinkComplete")?;
        let (code, size) = state.complete(current_arch)?;
        bin_out.write(code.cast_mut().cast())?;
        size_out.write(size)
    }

    fn hipLinkDestroy(state: hipLinkState_t) -> hipError_t {
        rtc::hip_link_destroy(state as usize)
    }
}

#[cfg(not(test))]
include!(concat!(env!("OUT_DIR"), "/symver_link.rs"));

//! hiprtc: runtime compilation and linking (`runtime/rtc/`). These return `hiprtcResult`,
//! not `hipError_t`, and leave the last HIP error alone (`as rtc`).

use super::convert::Out;
use super::declare::hip_api;
use super::types::{hiprtcLinkState, hiprtcProgram, hiprtcResult};
use crate::runtime::rtc::{self, LinkState, Program, RtcError, RtcResult};
use std::ffi::{c_char, c_void, CStr};
use std::sync::Arc;

hip_api! {
    /// The enumerator's name, or AMD's text for a value it does not define; never null.
    fn hiprtcGetErrorString(result: hiprtcResult) -> *const c_char as plain(c"HIPRTC_ERROR_INTERNAL_ERROR".as_ptr()) {
        rtc::result_name(result).as_ptr()
    }

    /// The HIP version hipshim implements (`hipRuntimeGetVersion`'s).
    fn hiprtcVersion(major: *mut i32 => Out<i32>, minor: *mut i32 => Out<i32>) -> hiprtcResult as rtc {
        let version = super::device::HIP_VERSION;
        major.write(version / 10_000_000)?;
        Ok(minor.write(version / 100_000 % 100)?)
    }

    /// `name` may be null (a default file name is used); `headers[i]` is the text that
    /// `#include "includeNames[i]"` finds.
    fn hiprtcCreateProgram(
        prog: *mut hiprtcProgram => Out<hiprtcProgram>,
        src: *const c_char => &CStr,
        name: *const c_char,
        num_headers: i32,
        headers: *const *const c_char,
        include_names: *const *const c_char,
    ) -> hiprtcResult as rtc {
        let source = utf8(src, "src", RtcError::InvalidInput)?;
        // SAFETY: HIP's contract: null or a NUL-terminated name.
        let name = unsafe { optional_str(name) }?;
        // SAFETY: HIP's contract: `num_headers` strings in each array.
        let texts = unsafe { c_strings(headers, num_headers, "headers", RtcError::InvalidInput) }?;
        // SAFETY: as above.
        let names = unsafe { c_strings(include_names, num_headers, "includeNames", RtcError::InvalidInput) }?;
        let headers = names
            .into_iter()
            .zip(texts)
            .map(|(name, text)| (name.to_owned(), text.to_owned()))
            .collect();
        let handle = rtc::create_program(source.to_owned(), name, headers)?;
        Ok(prog.write(handle as hiprtcProgram)?)
    }

    /// Clears `*prog` once destroyed.
    fn hiprtcDestroyProgram(prog: *mut hiprtcProgram => Out<hiprtcProgram>) -> hiprtcResult as rtc {
        // SAFETY: `Out` checked it non-null; HIP's contract makes it a readable handle.
        let handle = unsafe { prog.read() };
        rtc::destroy_program(handle as usize)?;
        Ok(prog.write(std::ptr::null_mut())?)
    }

    fn hiprtcAddNameExpression(
        prog: hiprtcProgram => Arc<Program>,
        name_expression: *const c_char => &str,
    ) -> hiprtcResult as rtc {
        prog.add_name_expression(name_expression)
    }

    fn hiprtcCompileProgram(
        prog: hiprtcProgram => Arc<Program>,
        num_options: i32,
        options: *const *const c_char,
    ) -> hiprtcResult as rtc {
        // SAFETY: HIP's contract: `num_options` strings.
        let options = unsafe { c_strings(options, num_options, "options", RtcError::InvalidOption) }?;
        prog.compile(&options, current_arch)
    }

    fn hiprtcGetLoweredName(
        prog: hiprtcProgram => Arc<Program>,
        name_expression: *const c_char => &str,
        lowered_name: *mut *const c_char => Out<*const c_char>,
    ) -> hiprtcResult as rtc {
        Ok(lowered_name.write(prog.lowered_name(name_expression)?)?)
    }

    /// Counts the terminating NUL.
    fn hiprtcGetProgramLogSize(prog: hiprtcProgram => Arc<Program>, size: *mut usize => Out<usize>) -> hiprtcResult as rtc {
        Ok(size.write(prog.log_size())?)
    }

    /// Writes `hiprtcGetProgramLogSize` bytes.
    fn hiprtcGetProgramLog(prog: hiprtcProgram => Arc<Program>, log: *mut c_char) -> hiprtcResult as rtc {
        // SAFETY: HIP's contract: room for the log's size.
        unsafe { copy_out(&prog.log(), log.cast()) }
    }

    fn hiprtcGetCodeSize(prog: hiprtcProgram => Arc<Program>, size: *mut usize => Out<usize>) -> hiprtcResult as rtc {
        Ok(size.write(prog.code()?.len())?)
    }

    fn hiprtcGetCode(prog: hiprtcProgram => Arc<Program>, code: *mut c_char) -> hiprtcResult as rtc {
        // SAFETY: HIP's contract: room for the code's size.
        unsafe { copy_out(&prog.code()?, code.cast()) }
    }

    fn hiprtcGetBitcodeSize(prog: hiprtcProgram => Arc<Program>, size: *mut usize => Out<usize>) -> hiprtcResult as rtc {
        Ok(size.write(prog.bitcode()?.len())?)
    }

    fn hiprtcGetBitcode(prog: hiprtcProgram => Arc<Program>, bitcode: *mut c_char) -> hiprtcResult as rtc {
        // SAFETY: HIP's contract: room for the bitcode's size.
        unsafe { copy_out(&prog.bitcode()?, bitcode.cast()) }
    }

    /// Of the options, `HIPRTC_JIT_IR_TO_ISA_OPT_EXT` (an array of compiler options) with
    /// `HIPRTC_JIT_IR_TO_ISA_OPT_COUNT_EXT` (their number) count; the rest are CUDA's.
    fn hiprtcLinkCreate(
        num_options: u32,
        options: *mut u32,
        values: *mut *mut c_void,
        state: *mut hiprtcLinkState => Out<hiprtcLinkState>,
    ) -> hiprtcResult as rtc {
        // SAFETY: HIP's contract: `num_options` options and values.
        let compiler_options = unsafe { link_options(num_options, options, values) }?;
        Ok(state.write(rtc::link_create(compiler_options) as hiprtcLinkState)?)
    }

    /// Per-input options do not apply to bitcode and are ignored.
    fn hiprtcLinkAddFile(
        state: hiprtcLinkState,
        input_type: u32,
        file_path: *const c_char => &str,
        _num_options: u32,
        _options: *mut u32,
        _values: *mut *mut c_void,
    ) -> hiprtcResult as rtc {
        let state = link_state(state)?;
        let bytes = std::fs::read(file_path).map_err(|e| {
            tracing::warn!(file_path, error = %e, "hiprtcLinkAddFile: cannot read the file");
            RtcError::InvalidInput
        })?;
        state.add(input_type, file_path.to_owned(), bytes)
    }

    /// `name` (may be null) only labels the input in the log.
    fn hiprtcLinkAddData(
        state: hiprtcLinkState,
        input_type: u32,
        image: *mut c_void,
        image_size: usize,
        name: *const c_char,
        _num_options: u32,
        _options: *mut u32,
        _values: *mut *mut c_void,
    ) -> hiprtcResult as rtc {
        let state = link_state(state)?;
        // SAFETY: HIP's contract: `image_size` readable bytes.
        let bytes = unsafe { super::convert::slice(image.cast::<u8>().cast_const(), image_size, "image") }?;
        // SAFETY: null or a NUL-terminated name.
        let name = unsafe { optional_str(name) }?.unwrap_or("(data)");
        state.add(input_type, name.to_owned(), bytes.to_vec())
    }

    /// `*bin_out` stays valid until the state is destroyed.
    fn hiprtcLinkComplete(
        state: hiprtcLinkState,
        bin_out: *mut *mut c_void => Out<*mut c_void>,
        size_out: *mut usize => Out<usize>,
    ) -> hiprtcResult as rtc {
        let (code, size) = link_state(state)?.complete(current_arch)?;
        bin_out.write(code.cast_mut().cast())?;
        Ok(size_out.write(size)?)
    }

    fn hiprtcLinkDestroy(state: hiprtcLinkState) -> hiprtcResult as rtc {
        rtc::link_destroy(state as usize)
    }
}

/// `rtc::CurrentArch`: the current device's architecture, as `hipDeviceProp_t::gcnArchName`
/// reports it (`gfx90a:sramecc+:xnack-`), for a compile or link whose options name none.
pub(super) fn current_arch() -> Result<String, String> {
    crate::runtime::current_device()
        .map(|device| device.info.gcn_arch_name.clone())
        .map_err(|e| {
            format!(
                "hiprtc: no --gpu-architecture option was given and there is no HIP device to \
                 take it from ({e:?})\n"
            )
        })
}

fn link_state(handle: hiprtcLinkState) -> RtcResult<Arc<LinkState>> {
    rtc::link_state(handle as usize)
}

fn utf8<'a>(text: &'a CStr, parameter: &str, error: RtcError) -> RtcResult<&'a str> {
    text.to_str().map_err(|_| {
        tracing::warn!(target: "hipshim::api", parameter, "hiprtc: text that is not UTF-8");
        error
    })
}

/// A C string that may be null.
///
/// # Safety
/// `raw` is null or NUL-terminated.
pub(super) unsafe fn optional_str<'a>(raw: *const c_char) -> RtcResult<Option<&'a str>> {
    if raw.is_null() {
        return Ok(None);
    }
    // SAFETY: non-null and NUL-terminated (the contract).
    utf8(
        unsafe { CStr::from_ptr(raw) },
        "name",
        RtcError::InvalidInput,
    )
    .map(Some)
}

/// `count` C strings at `array` (none when `count` is 0, whatever `array` is); `error` for
/// text that is not UTF-8.
///
/// # Safety
/// With `count` > 0, `array` is null or holds `count` pointers, each null or NUL-terminated.
unsafe fn c_strings<'a>(
    array: *const *const c_char,
    count: i32,
    parameter: &'static str,
    error: RtcError,
) -> RtcResult<Vec<&'a str>> {
    let count = usize::try_from(count).map_err(|_| {
        tracing::warn!(target: "hipshim::api", parameter, count, "hiprtc: a negative count");
        RtcError::InvalidInput
    })?;
    if count == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: `count` pointers (the contract); null is rejected there.
    let pointers = unsafe { super::convert::slice(array, count, parameter) }?;
    pointers
        .iter()
        .map(|&p| {
            if p.is_null() {
                tracing::warn!(target: "hipshim::api", parameter, "hiprtc: a null string");
                return Err(RtcError::InvalidInput);
            }
            // SAFETY: non-null and NUL-terminated (the contract).
            utf8(unsafe { CStr::from_ptr(p) }, parameter, error)
        })
        .collect()
}

/// Copies `bytes` to the caller's buffer.
///
/// # Safety
/// `out` is null or has room for `bytes.len()` bytes.
unsafe fn copy_out(bytes: &[u8], out: *mut u8) -> RtcResult {
    if out.is_null() {
        return Err(RtcError::InvalidInput);
    }
    // SAFETY: room for `bytes.len()` (the contract); a caller's buffer never overlaps ours.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), out, bytes.len()) };
    Ok(())
}

/// The compiler options of `hiprtcLinkCreate`'s `HIPRTC_JIT_IR_TO_ISA_OPT_EXT`.
///
/// # Safety
/// With `count` > 0, `options` and `values` are null or hold `count` entries, and the
/// value of `HIPRTC_JIT_IR_TO_ISA_OPT_EXT` points to as many C strings as the value of
/// `HIPRTC_JIT_IR_TO_ISA_OPT_COUNT_EXT` says.
pub(super) unsafe fn link_options(
    count: u32,
    options: *mut u32,
    values: *mut *mut c_void,
) -> RtcResult<Vec<String>> {
    if count == 0 {
        return Ok(Vec::new());
    }
    let count = count as usize;
    // SAFETY: `count` entries each (the contract).
    let options = unsafe { super::convert::slice(options.cast_const(), count, "option_ptr") }?;
    // SAFETY: as above.
    let values = unsafe { super::convert::slice(values.cast_const(), count, "option_vals_pptr") }?;
    let find = |wanted: u32| options.iter().position(|&o| o == wanted).map(|i| values[i]);
    let (Some(array), Some(number)) = (
        find(rtc::JIT_IR_TO_ISA_OPT_EXT),
        find(rtc::JIT_IR_TO_ISA_OPT_COUNT_EXT),
    ) else {
        return Ok(Vec::new());
    };
    // The count is passed as the pointer's value.
    let number = number as usize;
    if number > i32::MAX as usize {
        return Err(RtcError::InvalidOption);
    }
    // SAFETY: `number` strings at `array` (the contract).
    let strings = unsafe {
        c_strings(
            array.cast_const().cast(),
            number as i32,
            "HIPRTC_JIT_IR_TO_ISA_OPT_EXT",
            RtcError::InvalidOption,
        )
    }?;
    Ok(strings.into_iter().map(str::to_owned).collect())
}

#[cfg(not(test))]
include!(concat!(env!("OUT_DIR"), "/symver_rtc.rs"));

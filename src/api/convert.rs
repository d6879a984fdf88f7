//! Typed argument conversion: what a declaration's `=> Checked` runs before the body. One
//! rule per impl; none allocates or takes a lock beyond the handle table's map read.

use super::types::{
    hipEvent_t, hipFunction_t, hipGraphExec_t, hipGraphNode_t, hipGraph_t, hipMemPool_t,
    hipModule_t, hipStream_t, hipUserObject_t, hiprtcProgram,
};
use crate::error::{HipError, HipResult};
use crate::runtime::copy::CopyKind;
use crate::runtime::devices::device::Device;
use crate::runtime::kernel::module::{Function, Module};
use crate::runtime::mem::mempool::MemPool;
use crate::runtime::stream::{self, StreamRef};
use crate::runtime::{graph, kernel::module, mem::mempool, rtc, stream::event};
use std::ffi::{c_char, CStr};
use std::ptr::NonNull;
use std::sync::Arc;

/// Converts a raw C argument into the checked value a shell's body works with.
pub trait FromAbi<Raw>: Sized {
    /// `parameter` is the C parameter's name, for the log line of a rejected argument.
    ///
    /// # Safety
    /// `raw` is what HIP's contract promises for the parameter (a non-null pointer points to
    /// what it should, a C string is NUL-terminated).
    unsafe fn from_abi(raw: Raw, parameter: &'static str) -> HipResult<Self>;
}

fn null(parameter: &'static str) -> HipError {
    tracing::debug!(target: "hipshim::api", parameter, "null pointer argument");
    HipError::INVALID_VALUE
}

/// A required out-pointer: null is `hipErrorInvalidValue`; written through once.
#[derive(Debug)]
pub struct Out<T>(NonNull<T>);

impl<T> Out<T> {
    pub fn write(self, value: T) -> HipResult {
        // SAFETY: checked non-null in `from_abi`; HIP's contract makes it writable storage of T.
        unsafe { self.0.as_ptr().write(value) };
        Ok(())
    }
}

impl<T: Copy> Out<T> {
    /// The value an in-out pointer holds on entry.
    ///
    /// # Safety
    /// The pointee is initialised (the contract of an in-out parameter).
    pub unsafe fn read(&self) -> T {
        // SAFETY: checked non-null in `from_abi`; initialised per the caller.
        unsafe { self.0.as_ptr().read() }
    }
}

impl<T> FromAbi<*mut T> for Out<T> {
    unsafe fn from_abi(raw: *mut T, parameter: &'static str) -> HipResult<Self> {
        NonNull::new(raw).map(Out).ok_or_else(|| null(parameter))
    }
}

/// An out-pointer HIP lets the caller leave null (it then does not want that value).
impl<T> FromAbi<*mut T> for Option<Out<T>> {
    unsafe fn from_abi(raw: *mut T, _: &'static str) -> HipResult<Self> {
        Ok(NonNull::new(raw).map(Out))
    }
}

/// Writes `value` through an optional out-pointer, if the caller gave one.
pub fn write_if_wanted<T>(out: Option<Out<T>>, value: T) -> HipResult {
    match out {
        Some(out) => out.write(value),
        None => Ok(()),
    }
}

/// A required input structure.
impl<T> FromAbi<*const T> for &T {
    unsafe fn from_abi(raw: *const T, parameter: &'static str) -> HipResult<Self> {
        // SAFETY: non-null and, per the contract, a readable T for the call.
        unsafe { raw.as_ref() }.ok_or_else(|| null(parameter))
    }
}

/// A required C string.
impl FromAbi<*const c_char> for &CStr {
    unsafe fn from_abi(raw: *const c_char, parameter: &'static str) -> HipResult<Self> {
        if raw.is_null() {
            return Err(null(parameter));
        }
        // SAFETY: non-null and NUL-terminated per the contract.
        Ok(unsafe { CStr::from_ptr(raw) })
    }
}

/// A required name: a non-empty UTF-8 C string (an empty one names nothing).
impl FromAbi<*const c_char> for &str {
    unsafe fn from_abi(raw: *const c_char, parameter: &'static str) -> HipResult<Self> {
        // SAFETY: forwarded contract.
        let text = unsafe { <&CStr>::from_abi(raw, parameter) }?;
        match text.to_str() {
            Ok(name) if !name.is_empty() => Ok(name),
            _ => {
                tracing::debug!(target: "hipshim::api", parameter, "empty or non-UTF-8 name");
                Err(HipError::INVALID_VALUE)
            }
        }
    }
}

/// `len` elements at `ptr`; null or empty is `hipErrorInvalidValue`.
///
/// # Safety
/// A non-null `ptr` points to `len` readable elements that live through the call.
pub unsafe fn slice<'a, T>(
    ptr: *const T,
    len: usize,
    parameter: &'static str,
) -> HipResult<&'a [T]> {
    if ptr.is_null() || len == 0 {
        return Err(null(parameter));
    }
    // SAFETY: non-null with `len` elements (the contract).
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// `len` writable elements at `ptr`; null or empty is `hipErrorInvalidValue`.
///
/// # Safety
/// A non-null `ptr` points to `len` writable elements no one else uses during the call.
pub unsafe fn slice_mut<'a, T>(
    ptr: *mut T,
    len: usize,
    parameter: &'static str,
) -> HipResult<&'a mut [T]> {
    if ptr.is_null() || len == 0 {
        return Err(null(parameter));
    }
    // SAFETY: non-null with `len` writable elements (the contract).
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr, len) })
}

/// Copies `text` NUL-terminated into `buffer`, truncating.
pub fn write_c_string(buffer: &mut [c_char], text: &str) {
    let n = text.len().min(buffer.len().saturating_sub(1));
    for (to, &from) in buffer.iter_mut().zip(&text.as_bytes()[..n]) {
        *to = from as c_char;
    }
    if let Some(end) = buffer.get_mut(n) {
        *end = 0;
    }
}

// ---------------------------------------------------------------------------------------
// Handles: each resolved through its table (`runtime/base/handles.rs`); a dead, foreign or
// garbage handle is `hipErrorInvalidHandle`.

/// A live stream and the device it runs on (the current device for the null and per-thread
/// streams).
pub struct Stream {
    pub device: &'static Device,
    pub stream: StreamRef<'static>,
}

/// A handle that names no stream is what the process's ABI says (`compat::dead_handle`).
impl FromAbi<hipStream_t> for Stream {
    unsafe fn from_abi(raw: hipStream_t, _: &'static str) -> HipResult<Self> {
        let (device, stream) = crate::runtime::devices()
            .and_then(|devices| stream::lookup(devices, raw))
            .map_err(crate::runtime::base::compat::dead_handle)?;
        Ok(Stream { device, stream })
    }
}

/// A stream argument of an `_spt` ("per-thread default stream") entry point: there, null is
/// the calling thread's stream (`hipStreamPerThread`) rather than the legacy null stream.
pub struct PerThread<T>(pub T);

impl<T: FromAbi<hipStream_t>> FromAbi<hipStream_t> for PerThread<T> {
    unsafe fn from_abi(raw: hipStream_t, parameter: &'static str) -> HipResult<Self> {
        // SAFETY: forwarded contract.
        unsafe { T::from_abi(stream::spt_stream(raw), parameter) }.map(PerThread)
    }
}

/// The handle itself, for runtime functions that take the raw value (they resolve it where
/// it is used: the launch path looks it up once, under the device it launches on).
impl FromAbi<hipStream_t> for hipStream_t {
    unsafe fn from_abi(raw: hipStream_t, _: &'static str) -> HipResult<Self> {
        Ok(raw)
    }
}

impl FromAbi<hipEvent_t> for Arc<event::Event> {
    unsafe fn from_abi(raw: hipEvent_t, _: &'static str) -> HipResult<Self> {
        event::lookup(raw)
    }
}

/// An event a call may be given or not (`hipExtLaunchKernel`'s start and stop events).
impl FromAbi<hipEvent_t> for Option<Arc<event::Event>> {
    unsafe fn from_abi(raw: hipEvent_t, _: &'static str) -> HipResult<Self> {
        if raw.is_null() {
            return Ok(None);
        }
        event::lookup(raw).map(Some)
    }
}

impl FromAbi<hipMemPool_t> for Arc<MemPool> {
    unsafe fn from_abi(raw: hipMemPool_t, _: &'static str) -> HipResult<Self> {
        mempool::lookup(raw)
    }
}

impl FromAbi<hipGraph_t> for Arc<graph::Graph> {
    unsafe fn from_abi(raw: hipGraph_t, _: &'static str) -> HipResult<Self> {
        graph::graph(raw)
    }
}

impl FromAbi<hipGraphNode_t> for Arc<graph::Node> {
    unsafe fn from_abi(raw: hipGraphNode_t, _: &'static str) -> HipResult<Self> {
        graph::node(raw)
    }
}

impl FromAbi<hipGraphExec_t> for Arc<graph::Exec> {
    unsafe fn from_abi(raw: hipGraphExec_t, _: &'static str) -> HipResult<Self> {
        graph::exec::lookup(raw)
    }
}

impl FromAbi<hipUserObject_t> for Arc<graph::user_object::UserObject> {
    unsafe fn from_abi(raw: hipUserObject_t, _: &'static str) -> HipResult<Self> {
        graph::user_object::lookup(raw)
    }
}

impl FromAbi<hipModule_t> for Arc<Module> {
    unsafe fn from_abi(raw: hipModule_t, _: &'static str) -> HipResult<Self> {
        module::module(raw)
    }
}

/// A `hiprtcProgram` (the same C type as the other handles); a bad one is reported as
/// `hipErrorInvalidHandle`, which the hiprtc shells turn into `HIPRTC_ERROR_INVALID_PROGRAM`.
impl FromAbi<hiprtcProgram> for Arc<rtc::Program> {
    unsafe fn from_abi(raw: hiprtcProgram, _: &'static str) -> HipResult<Self> {
        rtc::program(raw as usize).map_err(|_| HipError::INVALID_HANDLE)
    }
}

impl FromAbi<hipFunction_t> for Arc<Function> {
    unsafe fn from_abi(raw: hipFunction_t, _: &'static str) -> HipResult<Self> {
        module::function_handle(raw)
    }
}

/// `hipMemcpyKind`: an unknown value is `hipErrorInvalidMemcpyDirection`.
impl FromAbi<u32> for CopyKind {
    unsafe fn from_abi(raw: u32, _: &'static str) -> HipResult<Self> {
        CopyKind::from_raw(raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_required_pointers_are_invalid_values_and_optional_ones_are_none() {
        // SAFETY: null pointers only.
        unsafe {
            assert_eq!(
                Out::<i32>::from_abi(std::ptr::null_mut(), "p").err(),
                Some(HipError::INVALID_VALUE)
            );
            assert!(Option::<Out<i32>>::from_abi(std::ptr::null_mut(), "p")
                .unwrap()
                .is_none());
            assert_eq!(
                <&str>::from_abi(std::ptr::null(), "name").err(),
                Some(HipError::INVALID_VALUE)
            );
            assert_eq!(
                <&str>::from_abi(c"".as_ptr(), "name").err(),
                Some(HipError::INVALID_VALUE)
            );
            assert_eq!(
                slice::<u32>(std::ptr::null(), 4, "mask").err(),
                Some(HipError::INVALID_VALUE)
            );
        }
    }

    #[test]
    fn out_writes_through() {
        let mut value = 0;
        // SAFETY: a live local.
        let out = unsafe { Out::from_abi(&mut value as *mut i32, "value") }.unwrap();
        out.write(7).unwrap();
        assert_eq!(value, 7);
    }

    #[test]
    fn c_strings_are_truncated_and_terminated() {
        let mut buffer = [1 as c_char; 4];
        write_c_string(&mut buffer, "gfx942");
        assert_eq!(buffer, [b'g' as c_char, b'f' as c_char, b'x' as c_char, 0]);
        let mut buffer = [1 as c_char; 8];
        write_c_string(&mut buffer, "ab");
        assert_eq!(&buffer[..3], &[b'a' as c_char, b'b' as c_char, 0]);
    }
}

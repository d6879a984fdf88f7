//! Copies and fills, synchronous and stream-ordered (`runtime/copy.rs`). The shells resolve
//! the devices a copy may involve (`devices`) and hand them down.
//!
//! The synchronous `_spt` forms ("per-thread default stream") must be ordered after the
//! calling thread's stream; the synchronous copies and fills already wait for every stream of
//! the device, which includes it, so they are the plain forms under their own names.

use super::convert::{self, write_if_wanted, Out, PerThread};
use super::declare::hip_api;
use super::types::{hipError_t, hipStream_t, MemcpyAttributes};
use crate::error::HipResult;
use crate::runtime::copy::{self, CopyKind, CopyRequest, Devices, Rows};
use crate::runtime::graph::{self, capture, NodeParams};
use crate::runtime::{runtime, stream};
use std::ffi::c_void;

/// The devices a copy or fill may involve: all of them, and the calling thread's current one
/// (none when the runtime could not start, which only the copies that need one report).
pub(super) fn devices() -> Devices<'static> {
    match runtime() {
        Ok(rt) => rt.copy_devices(),
        Err(error) => Devices::none(error),
    }
}

/// `copy::memcpy` of `size` bytes.
///
/// # Safety
/// As for `copy::memcpy`.
unsafe fn memcpy(dst: *mut c_void, src: *const c_void, size: usize, kind: CopyKind) -> HipResult {
    // SAFETY: forwarded contract.
    unsafe { copy::memcpy(devices(), CopyRequest::linear(dst, src, size, kind)) }
}

/// `copy::memcpy_async` of `copy` on `stream`.
///
/// # Safety
/// As for `copy::memcpy_async`.
unsafe fn memcpy_on_stream(copy: CopyRequest, stream: hipStream_t) -> HipResult {
    // SAFETY: forwarded contract.
    unsafe { copy::memcpy_async(devices(), copy, stream) }
}

/// `copy::memcpy_async`, or a memcpy node of the capture `stream` takes part in.
///
/// # Safety
/// As for `copy::memcpy_async`.
unsafe fn memcpy_async(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    kind: CopyKind,
    stream: hipStream_t,
) -> HipResult {
    let node = || {
        Ok(NodeParams::Memcpy1D(graph::Memcpy1D {
            dst: dst as usize,
            src: src as usize,
            count: size,
            kind,
        }))
    };
    if capture::add_on(crate::runtime::devices()?, stream, node)? {
        return Ok(());
    }
    // SAFETY: forwarded contract.
    unsafe { memcpy_on_stream(CopyRequest::linear(dst, src, size, kind), stream) }
}

/// `hipMemcpyBatchAsync` without its `failIdx`: what failed, and which copy it was.
///
/// # Safety
/// `dsts`, `srcs` and `sizes` hold `count` elements and `attrs`, `attrs_idxs` `num_attrs`
/// (or are null); each copy's host-side ranges are valid for its size.
#[allow(clippy::too_many_arguments)]
unsafe fn memcpy_batch(
    dsts: *mut *mut c_void,
    srcs: *mut *mut c_void,
    sizes: *mut usize,
    count: usize,
    attrs: *mut MemcpyAttributes,
    attrs_idxs: *mut usize,
    num_attrs: usize,
    stream: hipStream_t,
) -> Result<(), copy::BatchFailure> {
    let whole = |error| (None, error);
    // SAFETY: the caller's contract; null or empty is hipErrorInvalidValue, as AMD answers.
    let (dsts, srcs, sizes) = unsafe {
        (
            convert::slice(dsts.cast_const(), count, "dsts").map_err(whole)?,
            convert::slice(srcs.cast_const(), count, "srcs").map_err(whole)?,
            convert::slice(sizes.cast_const(), count, "sizes").map_err(whole)?,
        )
    };
    // No attributes is allowed (AMD's runtime takes the batch as stream-ordered copies).
    let (attrs, attrs_idxs) = if num_attrs == 0 {
        (&[][..], &[][..])
    } else {
        // SAFETY: the caller's contract, as above.
        unsafe {
            (
                convert::slice(attrs.cast_const(), num_attrs, "attrs").map_err(whole)?,
                convert::slice(attrs_idxs.cast_const(), num_attrs, "attrsIdxs").map_err(whole)?,
            )
        }
    };
    let during_call = copy::check_batch_attributes(count, attrs, attrs_idxs)?;
    let all = crate::runtime::devices().map_err(whole)?;
    stream::lookup(all, stream).map_err(whole)?;
    let copies: Vec<CopyRequest> = (0..count)
        .map(|i| CopyRequest::linear(dsts[i], srcs[i], sizes[i], CopyKind::Default))
        .collect();
    for (i, &c) in copies.iter().enumerate() {
        copy::check_stream_copy(c).map_err(|e| (Some(i), e))?;
    }
    for (i, c) in copies.iter().enumerate() {
        // SAFETY: the caller's contract for each copy.
        unsafe { memcpy_async(c.dst, c.src, c.rows.width, CopyKind::Default, stream) }
            .map_err(|e| (Some(i), e))?;
    }
    // A source read "during the API call" may be reused once the call returns.
    if during_call {
        stream::synchronize(all, stream).map_err(whole)?;
    }
    Ok(())
}

/// `copy::memset_async`, or a memset node of the capture `stream` takes part in.
fn memset_async(
    dst: *mut c_void,
    value: u32,
    element: usize,
    count: usize,
    stream: hipStream_t,
) -> HipResult {
    let node = || {
        graph::memset(&graph::MemsetParams {
            dst,
            element_size: element as u32,
            height: 1,
            pitch: 0,
            value,
            width: count,
        })
        .map(NodeParams::Memset)
    };
    if count > 0 && capture::add_on(crate::runtime::devices()?, stream, node)? {
        return Ok(());
    }
    copy::memset_async(devices(), dst, value, element, count, stream)
}

hip_api! {
    fn hipMemcpy(dst: *mut c_void, src: *const c_void, size: usize, kind: u32 => CopyKind) -> hipError_t {
        // SAFETY: HIP's contract: host-side ranges are valid for `size` bytes.
        unsafe { memcpy(dst, src, size, kind) }
    }
    alias hipMemcpy_spt = hipMemcpy;

    fn hipMemcpyHtoD(dst: *mut c_void, src: *mut c_void, size: usize) -> hipError_t {
        // SAFETY: HIP's contract: `src` is valid host memory of `size` bytes.
        unsafe { memcpy(dst, src, size, CopyKind::HostToDevice) }
    }

    fn hipMemcpyDtoH(dst: *mut c_void, src: *mut c_void, size: usize) -> hipError_t {
        // SAFETY: HIP's contract: `dst` is valid host memory of `size` bytes.
        unsafe { memcpy(dst, src, size, CopyKind::DeviceToHost) }
    }

    fn hipMemcpyDtoD(dst: *mut c_void, src: *mut c_void, size: usize) -> hipError_t {
        // SAFETY: both sides are checked against the registry.
        unsafe { memcpy(dst, src, size, CopyKind::DeviceToDevice) }
    }

    fn hipMemcpy2D(
        dst: *mut c_void,
        dst_pitch: usize,
        src: *const c_void,
        src_pitch: usize,
        width: usize,
        height: usize,
        kind: u32 => CopyKind,
    ) -> hipError_t {
        let rows = Rows { width, height, dst_pitch, src_pitch };
        // SAFETY: HIP's contract: host-side rows are valid memory.
        unsafe { copy::memcpy(devices(), CopyRequest { dst, src, rows, kind }) }
    }
    alias hipMemcpy2D_spt = hipMemcpy2D;

    fn hipMemset(dst: *mut c_void, value: i32, size: usize) -> hipError_t {
        copy::memset(devices(), dst, value as u8, size)
    }
    alias hipMemset_spt = hipMemset;

    fn hipMemsetD8(dst: *mut c_void, value: u8, count: usize) -> hipError_t {
        copy::memset_pattern(devices(), dst, &[value], count)
    }

    fn hipMemsetD16(dst: *mut c_void, value: u16, count: usize) -> hipError_t {
        copy::memset_pattern(devices(), dst, &value.to_le_bytes(), count)
    }

    fn hipMemsetD32(dst: *mut c_void, value: i32, count: usize) -> hipError_t {
        copy::memset_pattern(devices(), dst, &value.to_le_bytes(), count)
    }

    fn hipMemset2D(dst: *mut c_void, pitch: usize, value: i32, width: usize, height: usize) -> hipError_t {
        copy::memset_2d(devices(), dst, pitch, value as u8, width, height)
    }
    alias hipMemset2D_spt = hipMemset2D;

    /// Host ranges are valid for `size` bytes (until the copy completes for pinned memory);
    /// device ranges are checked.
    fn hipMemcpyAsync(
        dst: *mut c_void,
        src: *const c_void,
        size: usize,
        kind: u32 => CopyKind,
        stream: hipStream_t,
    ) -> hipError_t {
        // SAFETY: HIP's contract, as above.
        unsafe { memcpy_async(dst, src, size, kind, stream) }
    }
    alias hipMemcpyAsync_spt = hipMemcpyAsync with stream: PerThread;

    /// The copies in order on `stream`, each as `hipMemcpyAsync` with `hipMemcpyDefault`, all
    /// checked before the first is enqueued; `*fail_idx` is the refused copy's index, or
    /// `SIZE_MAX` (also on success) when the failure is the whole batch's (`memcpy_batch`).
    fn hipMemcpyBatchAsync(
        dsts: *mut *mut c_void,
        srcs: *mut *mut c_void,
        sizes: *mut usize,
        count: usize,
        attrs: *mut MemcpyAttributes,
        attrs_idxs: *mut usize,
        num_attrs: usize,
        fail_idx: *mut usize => Option<Out<usize>>,
        stream: hipStream_t,
    ) -> hipError_t {
        // SAFETY: HIP's contract for the arrays, as `memcpy_batch` states it.
        let result = unsafe { memcpy_batch(dsts, srcs, sizes, count, attrs, attrs_idxs, num_attrs, stream) };
        let failed_at = match result {
            Err((Some(i), _)) => i,
            _ => usize::MAX,
        };
        write_if_wanted(fail_idx, failed_at)?;
        result.map_err(|(_, error)| error)
    }

    fn hipMemcpyHtoDAsync(dst: *mut c_void, src: *const c_void, size: usize, stream: hipStream_t) -> hipError_t {
        // SAFETY: HIP's contract, as for hipMemcpyAsync.
        unsafe { memcpy_async(dst, src, size, CopyKind::HostToDevice, stream) }
    }

    fn hipMemcpyDtoHAsync(dst: *mut c_void, src: *const c_void, size: usize, stream: hipStream_t) -> hipError_t {
        // SAFETY: HIP's contract, as for hipMemcpyAsync.
        unsafe { memcpy_async(dst, src, size, CopyKind::DeviceToHost, stream) }
    }

    fn hipMemcpyDtoDAsync(dst: *mut c_void, src: *const c_void, size: usize, stream: hipStream_t) -> hipError_t {
        // SAFETY: HIP's contract, as for hipMemcpyAsync.
        unsafe { memcpy_async(dst, src, size, CopyKind::DeviceToDevice, stream) }
    }

    /// A copy in the stream's order that returns when it is complete.
    fn hipMemcpyWithStream(
        dst: *mut c_void,
        src: *const c_void,
        size: usize,
        kind: u32 => CopyKind,
        stream: hipStream_t,
    ) -> hipError_t {
        // SAFETY: HIP's contract, as for hipMemcpyAsync.
        unsafe { memcpy_on_stream(CopyRequest::linear(dst, src, size, kind), stream) }?;
        let (device, s) = stream::lookup(crate::runtime::devices()?, stream)?;
        s.synchronize(&device.streams)
    }

    /// As hipMemcpyAsync, for each of the `height` rows.
    fn hipMemcpy2DAsync(
        dst: *mut c_void,
        dpitch: usize,
        src: *const c_void,
        spitch: usize,
        width: usize,
        height: usize,
        kind: u32 => CopyKind,
        stream: hipStream_t,
    ) -> hipError_t {
        let rows = Rows { width, height, dst_pitch: dpitch, src_pitch: spitch };
        // SAFETY: HIP's contract, as above.
        unsafe { memcpy_on_stream(CopyRequest { dst, src, rows, kind }, stream) }
    }
    alias hipMemcpy2DAsync_spt = hipMemcpy2DAsync with stream: PerThread;

    fn hipMemsetAsync(dst: *mut c_void, value: i32, size: usize, stream: hipStream_t) -> hipError_t {
        memset_async(dst, value as u8 as u32, 1, size, stream)
    }
    alias hipMemsetAsync_spt = hipMemsetAsync with stream: PerThread;

    fn hipMemsetD8Async(dst: *mut c_void, value: u8, count: usize, stream: hipStream_t) -> hipError_t {
        memset_async(dst, value as u32, 1, count, stream)
    }

    fn hipMemsetD16Async(dst: *mut c_void, value: u16, count: usize, stream: hipStream_t) -> hipError_t {
        memset_async(dst, value as u32, 2, count, stream)
    }

    fn hipMemsetD32Async(dst: *mut c_void, value: i32, count: usize, stream: hipStream_t) -> hipError_t {
        memset_async(dst, value as u32, 4, count, stream)
    }
}

#[cfg(not(test))]
include!(concat!(env!("OUT_DIR"), "/symver_copy.rs"));

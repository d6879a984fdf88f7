//! Copies to, from and between arrays, 3D and driver-API pitched copies
//! (`runtime/image/copy3d.rs`). A `stream` of `None` is a synchronous copy (`hipMemcpy2D`'s rules);
//! the synchronous `_spt` forms are their plain forms (see `copy.rs` in this directory).

use super::convert::{self, write_if_wanted, Out, PerThread};
use super::declare::hip_api;
use super::types::{
    hipError_t, hipStream_t, DrvMemcpy3D, HipArray, Memcpy2DParams, Memcpy3DBatchOp, Memcpy3DParms,
    Memcpy3DPeerParms,
};
use crate::error::{HipError, HipResult};
use crate::runtime::copy::CopyKind;
use crate::runtime::image::array::{self, Pos};
use crate::runtime::image::copy3d::{self, Copy3D, Linear, Place, Side3D};
use std::ffi::c_void;

/// An array side of a 2D copy at (`x` bytes, `y` rows).
fn array_at(array: *const HipArray, x: usize, y: usize) -> Side3D {
    Side3D {
        place: Place::Array(array as usize),
        pos: Pos { x, y, z: 0 },
    }
}

/// A pitched-memory side of a 2D copy, at its start.
fn memory_at(ptr: *const c_void, pitch: usize) -> Side3D {
    Side3D {
        place: Place::Pitched {
            ptr: ptr as usize,
            pitch,
            rows: 0,
        },
        pos: Pos::default(),
    }
}

/// An array addressed by its packed byte offset, starting at (`x` bytes, `y` rows).
fn packed(array: *const HipArray, x: usize, y: usize) -> HipResult<Linear> {
    let g = array::geometry(array)?;
    let offset = y
        .checked_mul(g.row_bytes())
        .and_then(|o| o.checked_add(x))
        .ok_or(HipError::INVALID_VALUE)?;
    Ok(Linear::Array(array, offset))
}

/// `hipMemcpy2DToArray(Async)`.
///
/// # Safety
/// Host rows of `src` are valid memory (see `copy3d::copy_3d`).
#[allow(clippy::too_many_arguments)]
unsafe fn to_array_2d(
    dst: *mut HipArray,
    w_offset: usize,
    h_offset: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: CopyKind,
    stream: Option<hipStream_t>,
) -> HipResult {
    let dst = array_at(dst, w_offset, h_offset);
    let c = Copy3D::rows(dst, memory_at(src, spitch), width, height, kind);
    // SAFETY: forwarded contract.
    unsafe { copy3d::copy_3d(super::copy::devices(), &c, stream) }
}

/// `hipMemcpy2DFromArray(Async)`.
///
/// # Safety
/// Host rows of `dst` are valid memory.
#[allow(clippy::too_many_arguments)]
unsafe fn from_array_2d(
    dst: *mut c_void,
    dpitch: usize,
    src: *const HipArray,
    w_offset: usize,
    h_offset: usize,
    width: usize,
    height: usize,
    kind: CopyKind,
    stream: Option<hipStream_t>,
) -> HipResult {
    let src = array_at(src, w_offset, h_offset);
    let c = Copy3D::rows(memory_at(dst, dpitch), src, width, height, kind);
    // SAFETY: forwarded contract.
    unsafe { copy3d::copy_3d(super::copy::devices(), &c, stream) }
}

/// A copy of `count` bytes between packed array offsets and memory.
///
/// # Safety
/// Host memory among the sides is valid for `count` bytes.
unsafe fn linear(
    dst: Linear,
    src: Linear,
    count: usize,
    kind: CopyKind,
    stream: Option<hipStream_t>,
) -> HipResult {
    // SAFETY: forwarded contract.
    unsafe { copy3d::linear_copy(super::copy::devices(), dst, src, count, kind, stream) }
}

/// Memory named by a driver-API call's device pointer: null is an error there.
fn memory(ptr: *const c_void) -> HipResult<Linear> {
    if ptr.is_null() {
        return Err(HipError::INVALID_VALUE);
    }
    Ok(Linear::Memory(ptr as usize))
}

hip_api! {
    // ---- 3D copies -----------------------------------------------------------------------

    fn hipMemcpy3D(p: *const Memcpy3DParms => &Memcpy3DParms) -> hipError_t {
        // SAFETY: HIP's contract: host memory named by `p` is valid for the box.
        unsafe { copy3d::copy_3d(super::copy::devices(), &Copy3D::from_abi(p)?, None) }
    }
    alias hipMemcpy3D_spt = hipMemcpy3D;

    fn hipMemcpy3DAsync(p: *const Memcpy3DParms => &Memcpy3DParms, stream: hipStream_t) -> hipError_t {
        // SAFETY: as for hipMemcpy3D, until the copy completes.
        unsafe { copy3d::copy_3d(super::copy::devices(), &Copy3D::from_abi(p)?, Some(stream)) }
    }
    alias hipMemcpy3DAsync_spt = hipMemcpy3DAsync with stream: PerThread;

    /// The copies in order on `stream`, each as `hipMemcpy3DAsync` would make it, all checked
    /// before the first is enqueued; `*fail_idx` is the refused copy's index, or `SIZE_MAX`
    /// (also on success) when the failure is the whole batch's.
    fn hipMemcpy3DBatchAsync(
        num_ops: usize,
        op_list: *mut Memcpy3DBatchOp,
        fail_idx: *mut usize => Option<Out<usize>>,
        flags: u64,
        stream: hipStream_t,
    ) -> hipError_t {
        // SAFETY: HIP's contract: `op_list` holds `num_ops` operations, whose host memory is
        // valid for their boxes until the copies complete.
        let result = unsafe { copy_3d_batch(num_ops, op_list, flags, stream) };
        let failed_at = match result {
            Err((Some(i), _)) => i,
            _ => usize::MAX,
        };
        write_if_wanted(fail_idx, failed_at)?;
        result.map_err(|(_, error)| error)
    }

    fn hipMemcpy3DPeer(p: *mut Memcpy3DPeerParms => Out<Memcpy3DPeerParms>) -> hipError_t {
        // SAFETY: an input structure (non-const only in the declaration).
        let p = unsafe { p.read() };
        let desc = Copy3D::from_peer(crate::runtime::devices()?.len(), &p)?;
        // SAFETY: as for hipMemcpy3D.
        unsafe { copy3d::copy_3d(super::copy::devices(), &desc, None) }
    }

    fn hipMemcpy3DPeerAsync(
        p: *mut Memcpy3DPeerParms => Out<Memcpy3DPeerParms>,
        stream: hipStream_t,
    ) -> hipError_t {
        // SAFETY: an input structure (non-const only in the declaration).
        let p = unsafe { p.read() };
        let desc = Copy3D::from_peer(crate::runtime::devices()?.len(), &p)?;
        // SAFETY: as for hipMemcpy3DAsync.
        unsafe { copy3d::copy_3d(super::copy::devices(), &desc, Some(stream)) }
    }

    /// `p` in the layout of the program's ABI (ROCm 5 narrowed its fields to 32 bits).
    fn hipDrvMemcpy3D(p: *const DrvMemcpy3D) -> hipError_t {
        // SAFETY: HIP's contract for `p`; then as for hipMemcpy3D.
        unsafe { copy3d::copy_3d(super::copy::devices(), &Copy3D::from_drv(&DrvMemcpy3D::read(p)?)?, None) }
    }

    fn hipDrvMemcpy3DAsync(p: *const DrvMemcpy3D, stream: hipStream_t) -> hipError_t {
        // SAFETY: HIP's contract for `p`; then as for hipMemcpy3DAsync.
        unsafe { copy3d::copy_3d(super::copy::devices(), &Copy3D::from_drv(&DrvMemcpy3D::read(p)?)?, Some(stream)) }
    }

    fn hipMemcpyParam2D(p: *const Memcpy2DParams => &Memcpy2DParams) -> hipError_t {
        // SAFETY: as for hipMemcpy3D.
        unsafe { copy3d::copy_3d(super::copy::devices(), &Copy3D::from_2d(p)?, None) }
    }
    // The engine copies any alignment.
    alias hipDrvMemcpy2DUnaligned = hipMemcpyParam2D;

    fn hipMemcpyParam2DAsync(p: *const Memcpy2DParams => &Memcpy2DParams, stream: hipStream_t) -> hipError_t {
        // SAFETY: as for hipMemcpy3DAsync.
        unsafe { copy3d::copy_3d(super::copy::devices(), &Copy3D::from_2d(p)?, Some(stream)) }
    }

    // ---- 2D copies with arrays -----------------------------------------------------------

    fn hipMemcpy2DToArray(
        dst: *mut HipArray,
        w_offset: usize,
        h_offset: usize,
        src: *const c_void,
        spitch: usize,
        width: usize,
        height: usize,
        kind: u32 => CopyKind,
    ) -> hipError_t {
        // SAFETY: HIP's contract: host rows of `src` are valid memory.
        unsafe { to_array_2d(dst, w_offset, h_offset, src, spitch, width, height, kind, None) }
    }
    alias hipMemcpy2DToArray_spt = hipMemcpy2DToArray;

    fn hipMemcpy2DToArrayAsync(
        dst: *mut HipArray,
        w_offset: usize,
        h_offset: usize,
        src: *const c_void,
        spitch: usize,
        width: usize,
        height: usize,
        kind: u32 => CopyKind,
        stream: hipStream_t,
    ) -> hipError_t {
        // SAFETY: as for hipMemcpy2DToArray, until the copy completes.
        unsafe { to_array_2d(dst, w_offset, h_offset, src, spitch, width, height, kind, Some(stream)) }
    }
    alias hipMemcpy2DToArrayAsync_spt = hipMemcpy2DToArrayAsync with stream: PerThread;

    fn hipMemcpy2DFromArray(
        dst: *mut c_void,
        dpitch: usize,
        src: *const HipArray,
        w_offset: usize,
        h_offset: usize,
        width: usize,
        height: usize,
        kind: u32 => CopyKind,
    ) -> hipError_t {
        // SAFETY: HIP's contract: host rows of `dst` are valid memory.
        unsafe { from_array_2d(dst, dpitch, src, w_offset, h_offset, width, height, kind, None) }
    }
    alias hipMemcpy2DFromArray_spt = hipMemcpy2DFromArray;

    fn hipMemcpy2DFromArrayAsync(
        dst: *mut c_void,
        dpitch: usize,
        src: *const HipArray,
        w_offset: usize,
        h_offset: usize,
        width: usize,
        height: usize,
        kind: u32 => CopyKind,
        stream: hipStream_t,
    ) -> hipError_t {
        // SAFETY: as for hipMemcpy2DFromArray, until the copy completes.
        unsafe { from_array_2d(dst, dpitch, src, w_offset, h_offset, width, height, kind, Some(stream)) }
    }
    alias hipMemcpy2DFromArrayAsync_spt = hipMemcpy2DFromArrayAsync with stream: PerThread;

    fn hipMemcpy2DArrayToArray(
        dst: *mut HipArray,
        w_offset_dst: usize,
        h_offset_dst: usize,
        src: *const HipArray,
        w_offset_src: usize,
        h_offset_src: usize,
        width: usize,
        height: usize,
        kind: u32 => CopyKind,
    ) -> hipError_t {
        let c = Copy3D::rows(
            array_at(dst, w_offset_dst, h_offset_dst),
            array_at(src, w_offset_src, h_offset_src),
            width,
            height,
            kind,
        );
        // SAFETY: both sides are arrays (checked device memory).
        unsafe { copy3d::copy_3d(super::copy::devices(), &c, None) }
    }

    // ---- 1D copies with arrays (packed byte offsets) -------------------------------------

    fn hipMemcpyToArray(
        dst: *mut HipArray,
        w_offset: usize,
        h_offset: usize,
        src: *const c_void,
        count: usize,
        kind: u32 => CopyKind,
    ) -> hipError_t {
        let dst = packed(dst, w_offset, h_offset)?;
        // SAFETY: HIP's contract: a host `src` is valid for `count` bytes.
        unsafe { linear(dst, memory(src)?, count, kind, None) }
    }

    fn hipMemcpyFromArray(
        dst: *mut c_void,
        src: *const HipArray,
        w_offset: usize,
        h_offset: usize,
        count: usize,
        kind: u32 => CopyKind,
    ) -> hipError_t {
        let src = packed(src, w_offset, h_offset)?;
        // SAFETY: HIP's contract: a host `dst` is valid for `count` bytes.
        unsafe { linear(memory(dst)?, src, count, kind, None) }
    }
    alias hipMemcpyFromArray_spt = hipMemcpyFromArray;

    fn hipMemcpyAtoA(
        dst: *mut HipArray,
        dst_offset: usize,
        src: *mut HipArray,
        src_offset: usize,
        count: usize,
    ) -> hipError_t {
        let (dst, src) = (packed(dst, dst_offset, 0)?, packed(src, src_offset, 0)?);
        // SAFETY: both sides are arrays (checked device memory).
        unsafe { linear(dst, src, count, CopyKind::DeviceToDevice, None) }
    }

    fn hipMemcpyAtoD(dst: *mut c_void, src: *mut HipArray, src_offset: usize, count: usize) -> hipError_t {
        let src = packed(src, src_offset, 0)?;
        // SAFETY: device memory is checked.
        unsafe { linear(memory(dst)?, src, count, CopyKind::DeviceToDevice, None) }
    }

    fn hipMemcpyDtoA(dst: *mut HipArray, dst_offset: usize, src: *mut c_void, count: usize) -> hipError_t {
        let dst = packed(dst, dst_offset, 0)?;
        // SAFETY: device memory is checked.
        unsafe { linear(dst, memory(src)?, count, CopyKind::DeviceToDevice, None) }
    }

    fn hipMemcpyAtoH(dst: *mut c_void, src: *mut HipArray, src_offset: usize, count: usize) -> hipError_t {
        let src = packed(src, src_offset, 0)?;
        // SAFETY: HIP's contract: `dst` is host memory valid for `count` bytes.
        unsafe { linear(memory(dst)?, src, count, CopyKind::DeviceToHost, None) }
    }

    fn hipMemcpyHtoA(dst: *mut HipArray, dst_offset: usize, src: *const c_void, count: usize) -> hipError_t {
        let dst = packed(dst, dst_offset, 0)?;
        // SAFETY: HIP's contract: `src` is host memory valid for `count` bytes.
        unsafe { linear(dst, memory(src)?, count, CopyKind::HostToDevice, None) }
    }

    fn hipMemcpyAtoHAsync(
        dst: *mut c_void,
        src: *mut HipArray,
        src_offset: usize,
        count: usize,
        stream: hipStream_t,
    ) -> hipError_t {
        let src = packed(src, src_offset, 0)?;
        // SAFETY: as for hipMemcpyAtoH, until the copy completes.
        unsafe { linear(memory(dst)?, src, count, CopyKind::DeviceToHost, Some(stream)) }
    }

    fn hipMemcpyHtoAAsync(
        dst: *mut HipArray,
        dst_offset: usize,
        src: *const c_void,
        count: usize,
        stream: hipStream_t,
    ) -> hipError_t {
        let dst = packed(dst, dst_offset, 0)?;
        // SAFETY: as for hipMemcpyHtoA, until the copy completes.
        unsafe { linear(dst, memory(src)?, count, CopyKind::HostToDevice, Some(stream)) }
    }
}

/// `hipMemcpy3DBatchAsync` without its `failIdx`.
///
/// # Safety
/// As `hipMemcpy3DBatchAsync` states it.
unsafe fn copy_3d_batch(
    num_ops: usize,
    op_list: *mut Memcpy3DBatchOp,
    flags: u64,
    stream: hipStream_t,
) -> Result<(), crate::runtime::copy::BatchFailure> {
    let whole = |error| (None, error);
    if flags != 0 {
        tracing::warn!(flags, "hipMemcpy3DBatchAsync: flags must be 0");
        return Err(whole(HipError::INVALID_VALUE));
    }
    // SAFETY: the caller's contract; null or empty is hipErrorInvalidValue, as AMD answers.
    let ops = unsafe { convert::slice(op_list.cast_const(), num_ops, "opList") }.map_err(whole)?;
    let all = crate::runtime::devices().map_err(whole)?;
    crate::runtime::stream::lookup(all, stream).map_err(whole)?;
    let mut copies = Vec::with_capacity(ops.len());
    let mut during_call = false;
    for (i, op) in ops.iter().enumerate() {
        let desc = Copy3D::from_batch_op(op).map_err(|e| (Some(i), e))?;
        desc.check().map_err(|e| (Some(i), e))?;
        during_call |=
            op.src_access_order == crate::runtime::copy::src_access_order::DURING_API_CALL;
        copies.push(desc);
    }
    for (i, desc) in copies.iter().enumerate() {
        // SAFETY: the caller's contract for each copy.
        unsafe { copy3d::copy_3d(super::copy::devices(), desc, Some(stream)) }
            .map_err(|e| (Some(i), e))?;
    }
    // A source read "during the API call" may be reused once the call returns.
    if during_call {
        crate::runtime::stream::synchronize(all, stream).map_err(whole)?;
    }
    Ok(())
}

#[cfg(not(test))]
include!(concat!(env!("OUT_DIR"), "/symver_copy3d.rs"));

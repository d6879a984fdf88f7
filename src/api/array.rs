//! Arrays, mipmapped arrays, 3D and pitched copies and fills (`runtime/image/array.rs`,
//! `runtime/image/copy3d.rs`).
//!
//! The synchronous `_spt` forms are their plain forms (see `copy.rs` in this directory); the
//! stream-ordered ones resolve the per-thread stream first.

use super::convert::{Out, PerThread};
use super::declare::hip_api;
use super::types::{
    hipError_t, hipStream_t, Array3DDescriptor, ArrayDescriptor, ChannelFormatDesc, Extent,
    HipArray, HipMipmappedArray, PitchedPtr,
};
use crate::error::{HipError, HipResult};
use crate::runtime::image::array::{self, ArraySpec};
use crate::runtime::{self, copy, image::copy3d, mem::memory};
use std::ffi::c_void;

/// `hipMalloc3D`: pitched device memory for `extent` (bytes, rows, slices).
fn malloc_3d(extent: Extent) -> HipResult<PitchedPtr> {
    let (width, height, depth) = (extent.width, extent.height, extent.depth);
    if width == 0 || height == 0 || depth == 0 {
        return Ok(PitchedPtr {
            ptr: std::ptr::null_mut(),
            pitch: 0,
            xsize: width,
            ysize: height,
        });
    }
    let rows = height.checked_mul(depth).ok_or(HipError::OUT_OF_MEMORY)?;
    let (ptr, pitch) = memory::malloc_pitch(runtime::current_device()?, width, rows)?;
    Ok(PitchedPtr {
        ptr,
        pitch,
        xsize: width,
        ysize: height,
    })
}

hip_api! {
    // ---- arrays --------------------------------------------------------------------------

    fn hipMallocArray(
        array: *mut *mut HipArray => Out<*mut HipArray>,
        desc: *const ChannelFormatDesc => &ChannelFormatDesc,
        width: usize,
        height: usize,
        flags: u32,
    ) -> hipError_t {
        let extent = Extent { width, height, depth: 0 };
        array.write(array::create(runtime::current_device()?, &ArraySpec { desc: *desc, extent, flags, driver: false })?)
    }

    fn hipMalloc3DArray(
        array: *mut *mut HipArray => Out<*mut HipArray>,
        desc: *const ChannelFormatDesc => &ChannelFormatDesc,
        extent: Extent,
        flags: u32,
    ) -> hipError_t {
        array.write(array::create(runtime::current_device()?, &ArraySpec { desc: *desc, extent, flags, driver: false })?)
    }

    fn hipArrayCreate(
        array: *mut *mut HipArray => Out<*mut HipArray>,
        desc: *const ArrayDescriptor => &ArrayDescriptor,
    ) -> hipError_t {
        array.write(array::create(runtime::current_device()?, &ArraySpec::from_descriptor(desc)?)?)
    }

    fn hipArray3DCreate(
        array: *mut *mut HipArray => Out<*mut HipArray>,
        desc: *const Array3DDescriptor => &Array3DDescriptor,
    ) -> hipError_t {
        array.write(array::create(runtime::current_device()?, &ArraySpec::from_3d_descriptor(desc)?)?)
    }

    fn hipFreeArray(array: *mut HipArray) -> hipError_t {
        array::destroy(runtime::devices()?, array)
    }
    alias hipArrayDestroy = hipFreeArray;

    /// Each out-pointer may be null (not wanted).
    fn hipArrayGetInfo(
        desc: *mut ChannelFormatDesc => Option<Out<ChannelFormatDesc>>,
        extent: *mut Extent => Option<Out<Extent>>,
        flags: *mut u32 => Option<Out<u32>>,
        array: *mut HipArray,
    ) -> hipError_t {
        use super::convert::write_if_wanted;
        let (d, e, f) = array::info(array)?;
        write_if_wanted(desc, d)?;
        write_if_wanted(extent, e)?;
        write_if_wanted(flags, f)
    }

    fn hipArrayGetDescriptor(
        desc: *mut ArrayDescriptor => Out<ArrayDescriptor>,
        array: *mut HipArray,
    ) -> hipError_t {
        desc.write(array::descriptor(array)?)
    }

    fn hipArray3DGetDescriptor(
        desc: *mut Array3DDescriptor => Out<Array3DDescriptor>,
        array: *mut HipArray,
    ) -> hipError_t {
        desc.write(array::descriptor_3d(array)?)
    }

    /// Also an inline function in AMD's headers; exported for programs that call it.
    fn hipCreateChannelDesc(x: i32, y: i32, z: i32, w: i32, f: u32) -> ChannelFormatDesc
        as plain(ChannelFormatDesc::default())
    {
        array::create_channel_desc(x, y, z, w, f)
    }

    fn hipGetChannelDesc(
        desc: *mut ChannelFormatDesc => Out<ChannelFormatDesc>,
        array: *const HipArray,
    ) -> hipError_t {
        desc.write(array::info(array)?.0)
    }

    // ---- mipmapped arrays ----------------------------------------------------------------

    fn hipMallocMipmappedArray(
        mipmap: *mut *mut HipMipmappedArray => Out<*mut HipMipmappedArray>,
        desc: *const ChannelFormatDesc => &ChannelFormatDesc,
        extent: Extent,
        levels: u32,
        flags: u32,
    ) -> hipError_t {
        let spec = ArraySpec { desc: *desc, extent, flags, driver: false };
        mipmap.write(array::create_mipmapped(runtime::devices()?, &spec, levels)?)
    }

    fn hipMipmappedArrayCreate(
        mipmap: *mut *mut HipMipmappedArray => Out<*mut HipMipmappedArray>,
        desc: *mut Array3DDescriptor => Out<Array3DDescriptor>,
        levels: u32,
    ) -> hipError_t {
        // SAFETY: an input descriptor (non-const only in AMD's declaration).
        let desc = unsafe { desc.read() };
        mipmap.write(array::create_mipmapped(runtime::devices()?, &ArraySpec::from_3d_descriptor(&desc)?, levels)?)
    }

    fn hipMipmappedArrayDestroy(mipmap: *mut HipMipmappedArray) -> hipError_t {
        array::destroy_mipmapped(runtime::devices()?, mipmap)
    }
    alias hipFreeMipmappedArray = hipMipmappedArrayDestroy;

    fn hipMipmappedArrayGetLevel(
        level_array: *mut *mut HipArray => Out<*mut HipArray>,
        mipmap: *mut HipMipmappedArray,
        level: u32,
    ) -> hipError_t {
        level_array.write(array::mipmapped_level(mipmap, level)?)
    }

    fn hipGetMipmappedArrayLevel(
        level_array: *mut *mut HipArray => Out<*mut HipArray>,
        mipmap: *const HipMipmappedArray,
        level: u32,
    ) -> hipError_t {
        level_array.write(array::mipmapped_level(mipmap, level)?)
    }

    // ---- pitched 3D memory ---------------------------------------------------------------

    fn hipMalloc3D(pitched: *mut PitchedPtr => Out<PitchedPtr>, extent: Extent) -> hipError_t {
        pitched.write(malloc_3d(extent)?)
    }

    fn hipMemset3D(pitched: PitchedPtr, value: i32, extent: Extent) -> hipError_t {
        copy3d::memset_3d(super::copy::devices(), &pitched, value as u8, &extent, None)
    }
    alias hipMemset3D_spt = hipMemset3D;

    fn hipMemset3DAsync(pitched: PitchedPtr, value: i32, extent: Extent, stream: hipStream_t) -> hipError_t {
        copy3d::memset_3d(super::copy::devices(), &pitched, value as u8, &extent, Some(stream))
    }
    alias hipMemset3DAsync_spt = hipMemset3DAsync with stream: PerThread;

    fn hipMemset2DAsync(
        dst: *mut c_void,
        pitch: usize,
        value: i32,
        width: usize,
        height: usize,
        stream: hipStream_t,
    ) -> hipError_t {
        copy::memset_2d_async(super::copy::devices(), dst, pitch, value as u8 as u32, 1, width, height, stream)
    }
    alias hipMemset2DAsync_spt = hipMemset2DAsync with stream: PerThread;

    fn hipMemsetD2D8(dst: *mut c_void, pitch: usize, value: u8, width: usize, height: usize) -> hipError_t {
        copy::memset_2d_elements(super::copy::devices(), dst, pitch, &[value], width, height)
    }

    fn hipMemsetD2D16(dst: *mut c_void, pitch: usize, value: u16, width: usize, height: usize) -> hipError_t {
        copy::memset_2d_elements(super::copy::devices(), dst, pitch, &value.to_le_bytes(), width, height)
    }

    fn hipMemsetD2D32(dst: *mut c_void, pitch: usize, value: u32, width: usize, height: usize) -> hipError_t {
        copy::memset_2d_elements(super::copy::devices(), dst, pitch, &value.to_le_bytes(), width, height)
    }

    fn hipMemsetD2D8Async(
        dst: *mut c_void,
        pitch: usize,
        value: u8,
        width: usize,
        height: usize,
        stream: hipStream_t,
    ) -> hipError_t {
        copy::memset_2d_async(super::copy::devices(), dst, pitch, value as u32, 1, width, height, stream)
    }

    fn hipMemsetD2D16Async(
        dst: *mut c_void,
        pitch: usize,
        value: u16,
        width: usize,
        height: usize,
        stream: hipStream_t,
    ) -> hipError_t {
        copy::memset_2d_async(super::copy::devices(), dst, pitch, value as u32, 2, width, height, stream)
    }

    fn hipMemsetD2D32Async(
        dst: *mut c_void,
        pitch: usize,
        value: u32,
        width: usize,
        height: usize,
        stream: hipStream_t,
    ) -> hipError_t {
        copy::memset_2d_async(super::copy::devices(), dst, pitch, value, 4, width, height, stream)
    }
}

#[cfg(not(test))]
include!(concat!(env!("OUT_DIR"), "/symver_array.rs"));

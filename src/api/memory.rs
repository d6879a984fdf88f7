//! Memory allocation, host registration and pointer queries (`runtime/mem/memory.rs`).

use super::convert::{self, write_if_wanted, Out};
use super::declare::hip_api;
use super::types::{hipError_t, PointerAttributes};
use crate::error::{HipError, HipResult};
use crate::runtime::base::compat::{self, Abi};
use crate::runtime::graph::capture::refuse_unsafe_call;
use crate::runtime::{self, image::array, mem::memory};
use std::ffi::c_void;

hip_api! {
    fn hipMalloc(ptr: *mut *mut c_void => Out<*mut c_void>, size: usize) -> hipError_t {
        // Allocations are unsafe during a global-mode capture (CUDA's rule, AMD's too), here
        // and in every allocation call below.
        refuse_unsafe_call("hipMalloc")?;
        ptr.write(memory::malloc(runtime::current_device()?, size)?)
    }

    /// Device memory of the current device, coarse- or fine-grained or signal memory as
    /// `flags` says (`memory::malloc_with_flags`).
    fn hipExtMallocWithFlags(ptr: *mut *mut c_void => Out<*mut c_void>, size: usize, flags: u32) -> hipError_t {
        refuse_unsafe_call("hipExtMallocWithFlags")?;
        ptr.write(memory::malloc_with_flags(runtime::current_device()?, size, flags)?)
    }

    /// Also frees stream-ordered memory (`runtime/mem/mempool.rs`), after the device's work.
    /// Graph memory a launch allocated is freed (for its graph to launch again).
    fn hipFree(ptr: *mut c_void) -> hipError_t {
        if let Some(freed) = crate::runtime::graph::memory::program_free(ptr) {
            return freed;
        }
        let devices = runtime::devices()?;
        // SAFETY: `free` only dereferences pointers it finds in its allocation table.
        unsafe { crate::runtime::mem::mempool::free(devices, ptr) }
    }

    fn hipMallocPitch(
        ptr: *mut *mut c_void => Out<*mut c_void>,
        pitch: *mut usize => Out<usize>,
        width: usize,
        height: usize,
    ) -> hipError_t {
        refuse_unsafe_call("hipMallocPitch")?;
        let (p, row_pitch) = memory::malloc_pitch(runtime::current_device()?, width, height)?;
        pitch.write(row_pitch)?;
        ptr.write(p)
    }

    /// The driver-API form; the element size only matters to CUDA's texture path.
    fn hipMemAllocPitch(
        ptr: *mut *mut c_void => Out<*mut c_void>,
        pitch: *mut usize => Out<usize>,
        width: usize,
        height: usize,
        _element_size: u32,
    ) -> hipError_t {
        refuse_unsafe_call("hipMemAllocPitch")?;
        let (p, row_pitch) = memory::malloc_pitch(runtime::current_device()?, width, height)?;
        pitch.write(row_pitch)?;
        ptr.write(p)
    }

    fn hipHostMalloc(ptr: *mut *mut c_void => Out<*mut c_void>, size: usize, flags: u32) -> hipError_t {
        refuse_unsafe_call("hipHostMalloc")?;
        ptr.write(memory::host_malloc(runtime::current_device()?, size, flags)?)
    }

    /// CUDA's spelling: only the portable, mapped and write-combined flags (AMD checks so too).
    fn hipHostAlloc(ptr: *mut *mut c_void => Out<*mut c_void>, size: usize, flags: u32) -> hipError_t {
        refuse_unsafe_call("hipHostAlloc")?;
        use memory::host_flags::*;
        if flags & !(PORTABLE | MAPPED | WRITE_COMBINED) != 0 {
            return Err(HipError::INVALID_VALUE);
        }
        ptr.write(memory::host_malloc(runtime::current_device()?, size, flags)?)
    }

    /// Deprecated alias of `hipHostMalloc(ptr, size, 0)`.
    fn hipMallocHost(ptr: *mut *mut c_void => Out<*mut c_void>, size: usize) -> hipError_t {
        refuse_unsafe_call("hipMallocHost")?;
        ptr.write(memory::host_malloc(runtime::current_device()?, size, 0)?)
    }

    /// Deprecated alias of `hipHostMalloc(ptr, size, 0)`.
    fn hipMemAllocHost(ptr: *mut *mut c_void => Out<*mut c_void>, size: usize) -> hipError_t {
        refuse_unsafe_call("hipMemAllocHost")?;
        ptr.write(memory::host_malloc(runtime::current_device()?, size, 0)?)
    }

    fn hipHostFree(ptr: *mut c_void) -> hipError_t {
        memory::host_free(runtime::devices()?, ptr)
    }
    // Deprecated spelling.
    alias hipFreeHost = hipHostFree;

    fn hipMallocManaged(ptr: *mut *mut c_void => Out<*mut c_void>, size: usize, flags: u32) -> hipError_t {
        crate::runtime::graph::capture::refuse_unsafe_call_from_rocm7("hipMallocManaged")?;
        ptr.write(memory::malloc_managed(runtime::current_device()?, size, flags)?)
    }

    fn hipHostRegister(ptr: *mut c_void, size: usize, flags: u32) -> hipError_t {
        let devices = runtime::devices()?;
        // SAFETY: HIP's contract: the range is the caller's live host memory.
        unsafe { memory::host_register(devices, ptr, size, flags) }
    }

    fn hipHostUnregister(ptr: *mut c_void) -> hipError_t {
        let devices = runtime::devices()?;
        // SAFETY: only a registered pointer is passed on (checked against the registry).
        unsafe { memory::host_unregister(devices, ptr) }
    }

    fn hipHostGetDevicePointer(
        device_ptr: *mut *mut c_void => Out<*mut c_void>,
        host_ptr: *mut c_void,
        flags: u32,
    ) -> hipError_t {
        device_ptr.write(memory::host_get_device_pointer(host_ptr, flags)?)
    }

    fn hipHostGetFlags(flags: *mut u32 => Out<u32>, host_ptr: *mut c_void) -> hipError_t {
        if host_ptr.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        flags.write(memory::host_get_flags(host_ptr)?)
    }

    /// Either pointer may be null (AMD fills the ones given).
    fn hipMemGetInfo(free: *mut usize => Option<Out<usize>>, total: *mut usize => Option<Out<usize>>) -> hipError_t {
        let (f, t) = memory::mem_get_info(runtime::current_device()?)?;
        write_if_wanted(free, f)?;
        write_if_wanted(total, t)
    }

    fn hipMemPtrGetInfo(ptr: *mut c_void, size: *mut usize => Out<usize>) -> hipError_t {
        runtime::runtime()?;
        size.write(memory::mem_ptr_get_info(ptr)?)
    }

    fn hipMemGetAddressRange(
        base: *mut *mut c_void => Option<Out<*mut c_void>>,
        size: *mut usize => Option<Out<usize>>,
        ptr: *mut c_void,
    ) -> hipError_t {
        let alloc = memory::lookup(ptr as usize, 1).ok_or(HipError::NOT_FOUND)?;
        write_if_wanted(base, alloc.start as *mut c_void)?;
        write_if_wanted(size, alloc.size)
    }

    /// One attribute of `ptr` (AMD's widths: `memory::PointerValue`).
    fn hipPointerGetAttribute(data: *mut c_void, attribute: u32, ptr: *mut c_void) -> hipError_t {
        if data.is_null() || ptr.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        let (value, result) = attribute_of(attribute, ptr)?;
        if let Some(value) = value {
            // SAFETY: HIP's contract: `data` has room for the attribute's value.
            unsafe { write_pointer_value(data, value) };
        }
        result
    }

    /// Several attributes at once; as in AMD's runtime, memory the runtime does not know gets
    /// each attribute's default and the call still succeeds.
    fn hipDrvPointerGetAttributes(
        count: u32,
        attributes: *mut u32,
        data: *mut *mut c_void,
        ptr: *mut c_void,
    ) -> hipError_t {
        if count == 0 || ptr.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        // SAFETY: HIP's contract: both arrays hold `count` entries.
        let attributes = unsafe { convert::slice(attributes.cast_const(), count as usize, "attributes") }?;
        // SAFETY: as above.
        let data = unsafe { convert::slice(data.cast_const(), count as usize, "data") }?;
        for (&attribute, &out) in attributes.iter().zip(data) {
            let (value, _) = attribute_of(attribute, ptr)?;
            if let (Some(value), false) = (value, out.is_null()) {
                // SAFETY: HIP's contract: each `data` entry has room for its attribute.
                unsafe { write_pointer_value(out, value) };
            }
        }
        Ok(())
    }

    /// Only `HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS` (AMD's rule; see `memory::set_pointer_attribute`).
    fn hipPointerSetAttribute(value: *const c_void, attribute: u32, ptr: *mut c_void) -> hipError_t {
        if value.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        runtime::runtime()?;
        memory::set_pointer_attribute(attribute, ptr)
    }

    /// As the process's ROCm ABI answers (`runtime::base::compat`, `memory::pointer_attributes`);
    /// ROCm 7 also accepts a null `attributes` (success, nothing written).
    fn hipPointerGetAttributes(
        attributes: *mut PointerAttributes => Option<Out<PointerAttributes>>,
        ptr: *const c_void,
    ) -> hipError_t {
        let abi = compat::abi();
        match attributes {
            Some(out) => {
                runtime::runtime()?;
                out.write(memory::pointer_attributes(ptr, abi)?)
            }
            None if abi >= Abi::Rocm7 => Ok(()),
            None => Err(HipError::INVALID_VALUE),
        }
    }
}

/// Writes `value` at `data` in its width.
///
/// # Safety
/// `data` has room for the value's width.
unsafe fn write_pointer_value(data: *mut c_void, value: memory::PointerValue) {
    use memory::PointerValue::*;
    // SAFETY: the caller's contract; unaligned writes, since AMD's callers pass any storage.
    unsafe {
        match value {
            Bool(b) => data.cast::<u8>().write(u8::from(b)),
            U32(v) => data.cast::<u32>().write_unaligned(v),
            I32(v) => data.cast::<i32>().write_unaligned(v),
            Ptr(p) => data.cast::<*mut c_void>().write_unaligned(p),
        }
    }
}

#[cfg(not(test))]
include!(concat!(env!("OUT_DIR"), "/symver_memory.rs"));

/// One pointer attribute, as `memory::pointer_attribute` answers it, except that an array
/// handle's memory type is "array" (AMD's answer, which hip-tests check).
fn attribute_of(
    attribute: u32,
    ptr: *const c_void,
) -> HipResult<(Option<memory::PointerValue>, HipResult)> {
    let abi = compat::abi();
    if attribute == memory::pointer_attribute::MEMORY_TYPE && array::is_live(ptr.cast()) {
        let array = memory::memory_type::for_abi(memory::memory_type::ARRAY, abi);
        return Ok((Some(memory::PointerValue::U32(array)), Ok(())));
    }
    runtime::runtime()?;
    memory::pointer_attribute(attribute, ptr, abi)
}

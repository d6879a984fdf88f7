//! Managed memory: advice, prefetch, range attributes, stream attachment and `__managed__`
//! variables (`runtime/ops/managed.rs`; `hipMallocManaged` is in `runtime/mem/memory.rs`).

use super::convert;
use super::declare::hip_api;
use super::types::{hipError_t, hipStream_t, MemLocation};
use crate::error::HipError;
use crate::runtime::{kernel::module, ops::managed};
use std::ffi::{c_char, c_void, CStr};

hip_api! {
    fn hipMemAdvise(dev_ptr: *const c_void, count: usize, advice: u32, device: i32) -> hipError_t {
        crate::runtime::graph::capture::refuse_unsafe_call_from_rocm7("hipMemAdvise")?;
        managed::advise(crate::runtime::devices()?, dev_ptr, count, advice, device)
    }

    fn hipMemPrefetchAsync(dev_ptr: *const c_void, count: usize, device: i32, stream: hipStream_t) -> hipError_t {
        managed::prefetch(crate::runtime::devices()?, dev_ptr, count, device, stream)
    }

    /// `hipMemAdvise` with the location as a `hipMemLocation`.
    fn hipMemAdvise_v2(dev_ptr: *const c_void, count: usize, advice: u32, location: MemLocation) -> hipError_t {
        crate::runtime::graph::capture::refuse_unsafe_call_from_rocm7("hipMemAdvise_v2")?;
        let device = managed::device_of_location(location)?;
        managed::advise(crate::runtime::devices()?, dev_ptr, count, advice, device)
    }

    /// `hipMemPrefetchAsync` with the destination as a `hipMemLocation`; `flags` must be 0.
    fn hipMemPrefetchAsync_v2(
        dev_ptr: *const c_void,
        count: usize,
        location: MemLocation,
        flags: u32,
        stream: hipStream_t,
    ) -> hipError_t {
        if flags != 0 {
            tracing::error!(flags, "hipMemPrefetchAsync_v2: flags must be 0");
            return Err(HipError::INVALID_VALUE);
        }
        let device = managed::device_of_location(location)?;
        managed::prefetch(crate::runtime::devices()?, dev_ptr, count, device, stream)
    }

    /// Each range to the location `prefetch_loc_idxs` assigns it (`managed::prefetch_batch`).
    fn hipMemPrefetchBatchAsync(
        dev_ptrs: *mut *mut c_void,
        sizes: *mut usize,
        count: usize,
        prefetch_locs: *mut MemLocation,
        prefetch_loc_idxs: *mut usize,
        num_prefetch_locs: usize,
        flags: u64,
        stream: hipStream_t,
    ) -> hipError_t {
        // SAFETY: HIP's contract: the first two arrays hold `count` elements, the last two
        // `num_prefetch_locs` (null or empty is hipErrorInvalidValue).
        let (ptrs, sizes, locations, first_of) = unsafe {
            (
                convert::slice(dev_ptrs.cast_const(), count, "dev_ptrs")?,
                convert::slice(sizes.cast_const(), count, "sizes")?,
                convert::slice(prefetch_locs.cast_const(), num_prefetch_locs, "prefetch_locs")?,
                convert::slice(prefetch_loc_idxs.cast_const(), num_prefetch_locs, "prefetch_loc_idxs")?,
            )
        };
        let ranges: Vec<(*const c_void, usize)> =
            ptrs.iter().zip(sizes).map(|(&p, &n)| (p.cast_const(), n)).collect();
        managed::prefetch_batch(crate::runtime::devices()?, &ranges, locations, first_of, flags, stream)
    }

    /// `data` receives the attribute: 4 bytes, or for `hipMemRangeAttributeAccessedBy` one
    /// device id per 4 bytes (`hipInvalidDeviceId` past the devices that have the advice).
    fn hipMemRangeGetAttribute(
        data: *mut c_void,
        data_size: usize,
        attribute: u32,
        dev_ptr: *const c_void,
        count: usize,
    ) -> hipError_t {
        // SAFETY: HIP's contract: `data` holds `data_size` bytes.
        unsafe { managed::range_attribute(data, data_size, attribute, dev_ptr, count) }
    }

    fn hipMemRangeGetAttributes(
        data: *mut *mut c_void,
        data_sizes: *mut usize,
        attributes: *mut u32,
        num_attributes: usize,
        dev_ptr: *const c_void,
        count: usize,
    ) -> hipError_t {
        if data.is_null() || data_sizes.is_null() || attributes.is_null() || num_attributes == 0 {
            tracing::warn!(num_attributes, "hipMemRangeGetAttributes: a null array or no attributes");
            return Err(HipError::INVALID_VALUE);
        }
        for i in 0..num_attributes {
            // SAFETY: HIP's contract: three arrays of `num_attributes` entries, each `data[i]`
            // holding `data_sizes[i]` bytes.
            unsafe {
                managed::range_attribute(*data.add(i), *data_sizes.add(i), *attributes.add(i), dev_ptr, count)?;
            }
        }
        Ok(())
    }

    fn hipStreamAttachMemAsync(
        stream: hipStream_t,
        dev_ptr: *mut c_void,
        length: usize,
        flags: u32,
    ) -> hipError_t {
        managed::attach(crate::runtime::devices()?, stream, dev_ptr, length, flags)
    }

    /// What clang emits for each `__managed__` variable: `pointer` is the host-side pointer
    /// variable, `init_value` the initial bytes, `name` the device-side pointer variable.
    fn __hipRegisterManagedVar(
        modules: *mut *mut c_void,
        pointer: *mut *mut c_void,
        init_value: *mut c_void,
        name: *const c_char,
        size: usize,
        align: u32,
    ) -> () as void {
        let Ok(fat_binary) = module::fat_binary(modules) else {
            eprintln!("hipshim: __hipRegisterManagedVar with an unknown fat binary handle");
            return;
        };
        if name.is_null() {
            eprintln!("hipshim: __hipRegisterManagedVar with a null name");
            return;
        }
        // SAFETY: clang passes the variable's NUL-terminated device-side name.
        let name = unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned();
        let registered = crate::runtime::devices().and_then(|devices| {
            // SAFETY: clang passes its host pointer variable and initialiser of `size` bytes.
            unsafe {
                module::register_managed_variable(devices, &fat_binary, pointer, init_value, name.clone(), size, align as usize)
            }
        });
        if let Err(e) = registered {
            // A constructor has no caller to tell: the program would read through a null
            // pointer, so say why first.
            eprintln!("hipshim: __managed__ variable {name} could not be allocated: {e:?}");
        }
    }
}

#[cfg(not(test))]
include!(concat!(env!("OUT_DIR"), "/symver_managed.rs"));

//! The stream-ordered allocator and its memory pools (`runtime/mem/mempool.rs`), shared between
//! processes too.

use super::convert::{slice, Out, Stream};
use super::declare::hip_api;
use super::types::{
    hipError_t, hipMemPool_t, hipStream_t, MemAccessDesc, MemLocation, MemPoolProps,
    PoolPtrExportData,
};
use crate::error::HipError;
use crate::error::HipResult;
use crate::runtime;
use crate::runtime::graph::{capture, memory as graph_memory, NodeParams};
use crate::runtime::mem::mempool::{self, MemPool};
use std::ffi::c_void;
use std::sync::Arc;

/// On a capturing stream, a stream-ordered allocation is a memory alloc node of the capture
/// (its address fixed now); `None` if the stream is not capturing.
fn captured_malloc(size: usize, device: usize, stream: &Stream) -> HipResult<Option<*mut c_void>> {
    let mut start = 0;
    let captured = capture::add(&stream.stream, || {
        let alloc = graph_memory::allocate_on(runtime::devices()?, device, size)?;
        start = alloc.start;
        Ok(NodeParams::MemAlloc(alloc))
    })?;
    Ok(captured.then_some(start as *mut c_void))
}

/// `hipFreeAsync`: on a capturing stream a memory free node (of graph memory), else graph
/// memory a launch allocated is freed, else the pool's.
///
/// # Safety
/// As for `mempool::free_async`.
unsafe fn free_async(ptr: *mut c_void, stream: &Stream) -> HipResult {
    if capture::add(&stream.stream, || {
        Ok(NodeParams::MemFree(graph_memory::find(ptr)?))
    })? {
        return Ok(());
    }
    if let Some(freed) = graph_memory::program_free(ptr) {
        return freed;
    }
    let devices = runtime::devices()?;
    // SAFETY: forwarded contract.
    unsafe { mempool::free_async(devices, ptr, stream.device, &stream.stream) }
}

hip_api! {
    fn hipMallocAsync(
        dev_ptr: *mut *mut c_void => Out<*mut c_void>,
        size: usize,
        stream: hipStream_t => Stream,
    ) -> hipError_t {
        if let Some(ptr) = captured_malloc(size, stream.device.index, &stream)? {
            return dev_ptr.write(ptr);
        }
        dev_ptr.write(mempool::malloc_async(runtime::devices()?, size, stream.device, &stream.stream)?)
    }

    fn hipMallocFromPoolAsync(
        dev_ptr: *mut *mut c_void => Out<*mut c_void>,
        size: usize,
        mem_pool: hipMemPool_t => Arc<MemPool>,
        stream: hipStream_t => Stream,
    ) -> hipError_t {
        if let Some(ptr) = captured_malloc(size, mem_pool.device, &stream)? {
            return dev_ptr.write(ptr);
        }
        dev_ptr.write(mempool::malloc_from_pool_async(runtime::devices()?, size, &mem_pool, stream.device, &stream.stream)?)
    }

    fn hipFreeAsync(dev_ptr: *mut c_void, stream: hipStream_t => Stream) -> hipError_t {
        // SAFETY: `free_async` only frees pointers it finds in its tables.
        unsafe { free_async(dev_ptr, &stream) }
    }

    fn hipMemPoolCreate(
        mem_pool: *mut hipMemPool_t => Out<hipMemPool_t>,
        pool_props: *const MemPoolProps => &MemPoolProps,
    ) -> hipError_t {
        crate::runtime::graph::capture::refuse_unsafe_call_from_rocm7("hipMemPoolCreate")?;
        mem_pool.write(mempool::create(runtime::devices()?, pool_props)?)
    }

    fn hipMemPoolDestroy(mem_pool: hipMemPool_t) -> hipError_t {
        crate::runtime::graph::capture::refuse_unsafe_call_from_rocm7("hipMemPoolDestroy")?;
        mempool::destroy(mem_pool)
    }

    fn hipDeviceGetDefaultMemPool(mem_pool: *mut hipMemPool_t => Out<hipMemPool_t>, device: i32) -> hipError_t {
        mem_pool.write(mempool::default_pool(runtime::devices()?, device)?)
    }

    fn hipDeviceGetMemPool(mem_pool: *mut hipMemPool_t => Out<hipMemPool_t>, device: i32) -> hipError_t {
        mem_pool.write(mempool::current_pool(runtime::devices()?, device)?)
    }

    fn hipDeviceSetMemPool(device: i32, mem_pool: hipMemPool_t => Arc<MemPool>) -> hipError_t {
        crate::runtime::graph::capture::refuse_unsafe_call_from_rocm7("hipDeviceSetMemPool")?;
        mempool::set_current_pool(runtime::devices()?, device, mem_pool)
    }

    fn hipMemPoolTrimTo(mem_pool: hipMemPool_t => Arc<MemPool>, min_bytes_to_hold: usize) -> hipError_t {
        mempool::trim_to(&mem_pool, min_bytes_to_hold)
    }

    fn hipMemPoolSetAttribute(mem_pool: hipMemPool_t => Arc<MemPool>, attr: u32, value: *mut c_void) -> hipError_t {
        // SAFETY: HIP's contract: `value` points to the attribute's type.
        unsafe { mempool::set_attribute(&mem_pool, attr, value) }
    }

    fn hipMemPoolGetAttribute(mem_pool: hipMemPool_t => Arc<MemPool>, attr: u32, value: *mut c_void) -> hipError_t {
        // SAFETY: HIP's contract: `value` points to the attribute's type.
        unsafe { mempool::get_attribute(&mem_pool, attr, value) }
    }

    fn hipMemPoolSetAccess(
        mem_pool: hipMemPool_t => Arc<MemPool>,
        desc_list: *const MemAccessDesc,
        count: usize,
    ) -> hipError_t {
        // SAFETY: HIP's contract: `count` descriptors at `desc_list`.
        let descs = unsafe { slice(desc_list, count, "desc_list") }?;
        mempool::set_access(runtime::devices()?, &mem_pool, descs)
    }

    fn hipMemPoolGetAccess(
        flags: *mut u32 => Out<u32>,
        mem_pool: hipMemPool_t => Arc<MemPool>,
        location: *mut MemLocation => Out<MemLocation>,
    ) -> hipError_t {
        // SAFETY: an input the caller filled in (HIP declares it non-const).
        let location = unsafe { location.read() };
        flags.write(mempool::get_access(runtime::devices()?, &mem_pool, &location)?)
    }

    /// Writes the descriptor as an `int`, as CUDA and AMD's runtime do.
    fn hipMemPoolExportToShareableHandle(
        shared_handle: *mut c_void,
        mem_pool: hipMemPool_t => Arc<MemPool>,
        handle_type: u32,
        flags: u32,
    ) -> hipError_t {
        if shared_handle.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        let fd = mempool::export_pool(&mem_pool, handle_type, flags)?;
        // SAFETY: HIP's contract: room for the handle type's value, an int for a descriptor.
        unsafe { shared_handle.cast::<i32>().write_unaligned(fd) };
        Ok(())
    }

    fn hipMemPoolImportFromShareableHandle(
        mem_pool: *mut hipMemPool_t => Out<hipMemPool_t>,
        shared_handle: *mut c_void,
        handle_type: u32,
        flags: u32,
    ) -> hipError_t {
        mem_pool.write(mempool::import_pool(runtime::devices()?, shared_handle as usize, handle_type, flags)?)
    }

    fn hipMemPoolExportPointer(export_data: *mut PoolPtrExportData => Out<PoolPtrExportData>, ptr: *mut c_void) -> hipError_t {
        if ptr.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        let rt = runtime::runtime()?;
        export_data.write(mempool::export_pointer(rt.hsa.api, rt.devices, ptr as usize)?)
    }

    fn hipMemPoolImportPointer(
        ptr: *mut *mut c_void => Out<*mut c_void>,
        mem_pool: hipMemPool_t => Arc<MemPool>,
        export_data: *mut PoolPtrExportData,
    ) -> hipError_t {
        if export_data.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        // SAFETY: HIP's contract: 64 readable bytes (declared non-const).
        let data = unsafe { export_data.read_unaligned() };
        ptr.write(mempool::import_pointer(runtime::devices()?, &mem_pool, &data)? as *mut c_void)
    }
}

#[cfg(not(test))]
include!(concat!(env!("OUT_DIR"), "/symver_mempool.rs"));

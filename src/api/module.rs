//! The compiler's registration hooks and kernel launch.
#![allow(non_snake_case)]

use super::{call, call_void, write_out};
use crate::error::{hipError_t, HipError};
use crate::runtime::launch::{self, CallConfiguration, Dim3};
use crate::runtime::module::{self, FatBinary};
use std::ffi::{c_char, c_void, CStr};
use std::sync::Arc;

/// The handle `__hipRegisterFatBinary` returns: a tagged box, checked on every use.
struct FatBinaryHandle {
    tag: u64,
    fat_binary: Arc<FatBinary>,
}
const FAT_BINARY_TAG: u64 = u64::from_le_bytes(*b"hipFATB\0");

/// Looks up a handle we returned, rejecting null, foreign and unregistered pointers.
fn fat_binary(handle: *mut *mut c_void) -> Option<Arc<FatBinary>> {
    if handle.is_null() || !live_handles().contains(&(handle as usize)) {
        return None;
    }
    // SAFETY: the pointer is in the live set, so it is a `FatBinaryHandle` we boxed.
    let h = unsafe { &*(handle as *const FatBinaryHandle) };
    (h.tag == FAT_BINARY_TAG).then(|| h.fat_binary.clone())
}

fn live_handles() -> &'static dashmap::DashSet<usize> {
    static LIVE: once_cell::sync::Lazy<dashmap::DashSet<usize>> =
        once_cell::sync::Lazy::new(dashmap::DashSet::new);
    &LIVE
}

#[no_mangle]
pub unsafe extern "C" fn __hipRegisterFatBinary(wrapper: *const c_void) -> *mut *mut c_void {
    let mut handle = std::ptr::null_mut();
    call("__hipRegisterFatBinary", || {
        // SAFETY: clang passes its fat-binary wrapper; the parser validates it.
        let fat_binary = unsafe { module::register_fat_binary(wrapper) }?;
        let boxed = Box::into_raw(Box::new(FatBinaryHandle {
            tag: FAT_BINARY_TAG,
            fat_binary,
        }));
        live_handles().insert(boxed as usize);
        handle = boxed as *mut *mut c_void;
        Ok(())
    });
    handle
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn __hipRegisterFunction(
    modules: *mut *mut c_void,
    host_function: *const c_void,
    device_function: *mut c_char,
    _device_name: *const c_char,
    _thread_limit: u32,
    _tid: *mut c_void,
    _bid: *mut c_void,
    _block_dim: *mut Dim3,
    _grid_dim: *mut Dim3,
    _wave_size: *mut i32,
) {
    call_void("__hipRegisterFunction", || {
        let Some(fat_binary) = fat_binary(modules) else {
            eprintln!("hipshim: __hipRegisterFunction with an unknown fat binary handle");
            return;
        };
        if device_function.is_null() || host_function.is_null() {
            eprintln!("hipshim: __hipRegisterFunction with a null function");
            return;
        }
        // SAFETY: clang passes the kernel's NUL-terminated (mangled) name.
        let name = unsafe { CStr::from_ptr(device_function) }
            .to_string_lossy()
            .into_owned();
        module::register_function(fat_binary, host_function as usize, name);
    })
}

#[no_mangle]
pub unsafe extern "C" fn __hipUnregisterFatBinary(modules: *mut *mut c_void) {
    call_void("__hipUnregisterFatBinary", || {
        if let Some(fat_binary) = fat_binary(modules) {
            module::unregister_fat_binary(&fat_binary);
            live_handles().remove(&(modules as usize));
            // SAFETY: the handle was live (checked above) and is now removed, so it is freed once.
            drop(unsafe { Box::from_raw(modules as *mut FatBinaryHandle) });
        }
    })
}

#[no_mangle]
pub extern "C" fn __hipPushCallConfiguration(
    grid: Dim3,
    block: Dim3,
    shared_mem: usize,
    stream: *mut c_void,
) -> hipError_t {
    launch::push_call_configuration(CallConfiguration {
        grid,
        block,
        shared_mem,
        stream,
    });
    0
}

#[no_mangle]
pub unsafe extern "C" fn __hipPopCallConfiguration(
    grid: *mut Dim3,
    block: *mut Dim3,
    shared_mem: *mut usize,
    stream: *mut *mut c_void,
) -> hipError_t {
    call("__hipPopCallConfiguration", || {
        if grid.is_null() || block.is_null() || shared_mem.is_null() || stream.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        let config = launch::pop_call_configuration()?;
        write_out(grid, config.grid)?;
        write_out(block, config.block)?;
        write_out(shared_mem, config.shared_mem)?;
        write_out(stream, config.stream)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipLaunchKernel(
    function: *const c_void,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    shared_mem: usize,
    stream: *mut c_void,
) -> hipError_t {
    call("hipLaunchKernel", || {
        if function.is_null() {
            return Err(HipError::INVALID_DEVICE_FUNCTION);
        }
        // SAFETY: HIP's contract: `args` holds one pointer per explicit kernel argument.
        unsafe {
            launch::launch_kernel(
                function,
                grid,
                block,
                args as *const *const c_void,
                shared_mem,
                stream,
            )
        }
    })
}

include!(concat!(env!("OUT_DIR"), "/symver_module.rs"));

//! The compiler's registration hooks and kernel launch.
#![allow(non_snake_case)]

use super::{call, call_void, write_out};
use crate::error::{hipError_t, HipError, HipResult};
use crate::runtime::code_object::KernelInfo;
use crate::runtime::launch::{self, Args, CallConfiguration, Dim3};
use crate::runtime::module::{self, FatBinary, Function};
use crate::runtime::occupancy::{self, CuLimits};
use crate::runtime::{self, device::Device};
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
    // A null or unregistered `function` is hipErrorInvalidDeviceFunction (launch_kernel).
    call("hipLaunchKernel", || {
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

/// `__hipRegisterVar`: clang registers each `__device__`/`__constant__` variable with the
/// address of its host shadow and its device-side name (clang passes the same string as
/// `host_var` and `device_var`).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn __hipRegisterVar(
    modules: *mut *mut c_void,
    var: *mut c_void,
    _host_var: *mut c_char,
    device_var: *const c_char,
    _ext: i32,
    size: usize,
    _constant: i32,
    _global: i32,
) {
    call_void("__hipRegisterVar", || {
        let Some(fat_binary) = fat_binary(modules) else {
            eprintln!("hipshim: __hipRegisterVar with an unknown fat binary handle");
            return;
        };
        if var.is_null() || device_var.is_null() {
            eprintln!("hipshim: __hipRegisterVar with a null variable");
            return;
        }
        // SAFETY: clang passes the variable's NUL-terminated device-side name.
        let name = unsafe { CStr::from_ptr(device_var) }
            .to_string_lossy()
            .into_owned();
        module::register_variable(fat_binary, var as usize, name, size);
    })
}

// ---------------------------------------------------------------------------------------
// Modules

/// Reads a module handle argument: null is hipErrorInvalidHandle, like a dead one.
fn module_handle(module: *mut c_void) -> HipResult<usize> {
    if module.is_null() {
        return Err(HipError::INVALID_HANDLE);
    }
    Ok(module as usize)
}

/// A non-empty C string argument.
///
/// # Safety
/// `s` is null or NUL-terminated.
unsafe fn c_str<'a>(s: *const c_char) -> HipResult<&'a str> {
    if s.is_null() {
        return Err(HipError::INVALID_VALUE);
    }
    // SAFETY: non-null and NUL-terminated per the contract.
    let text = unsafe { CStr::from_ptr(s) }
        .to_str()
        .map_err(|_| HipError::INVALID_VALUE)?;
    if text.is_empty() {
        return Err(HipError::INVALID_VALUE);
    }
    Ok(text)
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleLoad(
    module: *mut *mut c_void,
    fname: *const c_char,
) -> hipError_t {
    call("hipModuleLoad", || {
        if module.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        // SAFETY: NUL-terminated per the API.
        let path = unsafe { c_str(fname) }?;
        let handle = module::load_module_file(std::path::Path::new(path))?;
        write_out(module, handle as *mut c_void)
    })
}

/// Loads a module from memory: an ELF code object, an offload bundle or a fat binary.
/// The image has no length: its headers say how long it is, and bytes they claim that are
/// not readable memory make it `hipErrorInvalidImage` (`image_from_memory`).
///
/// # Safety
/// `image` is null or one of those forms (see `image_from_memory` for what is checked).
unsafe fn load_data(api: &str, module: *mut *mut c_void, image: *const c_void) -> HipResult {
    if module.is_null() || image.is_null() {
        return Err(HipError::INVALID_VALUE);
    }
    // SAFETY: forwarded contract.
    let bytes = unsafe { crate::runtime::code_object::image_from_memory(image) }.map_err(|e| {
        tracing::warn!(error = %e, "{api}: unusable code image");
        HipError::INVALID_IMAGE
    })?;
    let handle = module::load_module(bytes)?;
    write_out(module, handle as *mut c_void)
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleLoadData(
    module: *mut *mut c_void,
    image: *const c_void,
) -> hipError_t {
    // SAFETY: HIP's contract for `image`.
    call("hipModuleLoadData", || unsafe {
        load_data("hipModuleLoadData", module, image)
    })
}

/// JIT options do not apply: hipshim loads finished code objects only.
#[no_mangle]
pub unsafe extern "C" fn hipModuleLoadDataEx(
    module: *mut *mut c_void,
    image: *const c_void,
    _num_options: u32,
    _options: *mut c_void,
    _values: *mut *mut c_void,
) -> hipError_t {
    // SAFETY: HIP's contract for `image`.
    call("hipModuleLoadDataEx", || unsafe {
        load_data("hipModuleLoadDataEx", module, image)
    })
}

#[no_mangle]
pub extern "C" fn hipModuleUnload(module: *mut c_void) -> hipError_t {
    call("hipModuleUnload", || {
        module::unload_module(module_handle(module)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleGetFunction(
    function: *mut *mut c_void,
    module: *mut c_void,
    name: *const c_char,
) -> hipError_t {
    call("hipModuleGetFunction", || {
        if function.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        // SAFETY: NUL-terminated per the API.
        let name = unsafe { c_str(name) }?;
        let handle = module::module_get_function(module_handle(module)?, name)?;
        write_out(function, handle as *mut c_void)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleGetGlobal(
    dptr: *mut *mut c_void,
    bytes: *mut usize,
    module: *mut c_void,
    name: *const c_char,
) -> hipError_t {
    call("hipModuleGetGlobal", || {
        if dptr.is_null() && bytes.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        // SAFETY: NUL-terminated per the API.
        let name = unsafe { c_str(name) }?;
        let (address, size) = module::module_get_global(module_handle(module)?, name)?;
        if !dptr.is_null() {
            write_out(dptr, address as *mut c_void)?;
        }
        if !bytes.is_null() {
            write_out(bytes, size)?;
        }
        Ok(())
    })
}

/// `HIP_LAUNCH_PARAM_BUFFER_POINTER`, `_SIZE`, `_END` (AMD's values).
const LAUNCH_PARAM_BUFFER_POINTER: usize = 1;
const LAUNCH_PARAM_BUFFER_SIZE: usize = 2;
const LAUNCH_PARAM_END: usize = 3;

/// The packed argument buffer named by an `extra` array:
/// `{BUFFER_POINTER, buf, BUFFER_SIZE, &size, END}` (the order AMD requires), for a launch
/// of `kernel`. A size larger than the kernel's whole kernarg segment cannot be an argument
/// buffer for it and is `hipErrorInvalidValue` (AMD's ROCm 5.2 runtime ignores the size);
/// `launch_function` checks that the buffer covers the explicit arguments.
///
/// # Safety
/// `extra` is a readable array of that form (checked entry by entry up to END), and the
/// buffer holds `size` bytes.
unsafe fn packed_args<'a>(extra: *mut *mut c_void, kernel: &KernelInfo) -> HipResult<&'a [u8]> {
    // SAFETY: the first five entries of a well-formed array; the tags are checked before the
    // pointers they introduce are used.
    let e = |i: usize| unsafe { *extra.add(i) } as usize;
    if e(0) != LAUNCH_PARAM_BUFFER_POINTER
        || e(2) != LAUNCH_PARAM_BUFFER_SIZE
        || e(4) != LAUNCH_PARAM_END
    {
        tracing::warn!("hipModuleLaunchKernel: malformed `extra` array");
        return Err(HipError::INVALID_VALUE);
    }
    let (buffer, size_ptr) = (e(1) as *const u8, e(3) as *const usize);
    if buffer.is_null() || size_ptr.is_null() {
        tracing::warn!("hipModuleLaunchKernel: null buffer or size in `extra`");
        return Err(HipError::INVALID_VALUE);
    }
    // SAFETY: BUFFER_SIZE points to the buffer's size.
    let size = unsafe { *size_ptr };
    if size > kernel.kernarg_size as usize {
        tracing::warn!(
            kernel = %kernel.name,
            size,
            kernarg_size = kernel.kernarg_size,
            "hipModuleLaunchKernel: HIP_LAUNCH_PARAM_BUFFER_SIZE is larger than the kernel's \
             kernarg segment"
        );
        return Err(HipError::INVALID_VALUE);
    }
    // SAFETY: the buffer holds `size` bytes (HIP's contract), and `size` is at most the
    // kernarg segment size, a u32.
    Ok(unsafe { std::slice::from_raw_parts(buffer, size) })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn hipModuleLaunchKernel(
    function: *mut c_void,
    grid_x: u32,
    grid_y: u32,
    grid_z: u32,
    block_x: u32,
    block_y: u32,
    block_z: u32,
    shared_mem: u32,
    stream: *mut c_void,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> hipError_t {
    call("hipModuleLaunchKernel", || {
        if function.is_null() {
            return Err(HipError::INVALID_HANDLE);
        }
        let f = module::function_handle(function as usize)?;
        if !kernel_params.is_null() && !extra.is_null() {
            tracing::warn!("hipModuleLaunchKernel: both kernelParams and extra given");
            return Err(HipError::INVALID_VALUE);
        }
        let args = if extra.is_null() {
            Args::Pointers(kernel_params as *const *const c_void)
        } else {
            let device = runtime::runtime()?.current_device()?;
            // SAFETY: HIP's contract for `extra`.
            Args::Packed(unsafe { packed_args(extra, &f.kernel(device)?.info) }?)
        };
        let grid = Dim3 {
            x: grid_x,
            y: grid_y,
            z: grid_z,
        };
        let block = Dim3 {
            x: block_x,
            y: block_y,
            z: block_z,
        };
        // SAFETY: HIP's contract: kernelParams has one pointer per explicit argument.
        unsafe { launch::launch_function(&f, grid, block, args, shared_mem as usize, stream) }
    })
}

// ---------------------------------------------------------------------------------------
// Function attributes and occupancy

/// `hipFuncAttributes` (same layout in ROCm 5 and 6), 56 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FuncAttributes {
    pub binary_version: i32,
    pub cache_mode_ca: i32,
    pub const_size_bytes: usize,
    pub local_size_bytes: usize,
    pub max_dynamic_shared_size_bytes: i32,
    pub max_threads_per_block: i32,
    pub num_regs: i32,
    pub preferred_shmem_carveout: i32,
    pub ptx_version: i32,
    pub shared_size_bytes: usize,
}

const _: () = {
    assert!(std::mem::size_of::<FuncAttributes>() == 56);
    assert!(std::mem::offset_of!(FuncAttributes, const_size_bytes) == 8);
    assert!(std::mem::offset_of!(FuncAttributes, local_size_bytes) == 16);
    assert!(std::mem::offset_of!(FuncAttributes, max_dynamic_shared_size_bytes) == 24);
    assert!(std::mem::offset_of!(FuncAttributes, ptx_version) == 40);
    assert!(std::mem::offset_of!(FuncAttributes, shared_size_bytes) == 48);
};

fn func_attributes(info: &KernelInfo, device: &Device) -> FuncAttributes {
    // AMD reports the ISA version (major * 10 + minor) as both versions.
    let version = device.info.major * 10 + device.info.minor;
    FuncAttributes {
        binary_version: version,
        cache_mode_ca: 0,
        const_size_bytes: 0,
        local_size_bytes: info.private_segment_fixed_size as usize,
        max_dynamic_shared_size_bytes: device
            .lds_bytes
            .saturating_sub(info.group_segment_fixed_size)
            as i32,
        max_threads_per_block: match info.max_flat_workgroup_size {
            0 => 1024,
            n => n.min(1024) as i32,
        },
        num_regs: info.vgpr_count as i32,
        preferred_shmem_carveout: 0,
        ptx_version: version,
        shared_size_bytes: info.group_segment_fixed_size as usize,
    }
}

/// The registered kernel behind a host function pointer, on the current device.
fn host_kernel(func: *const c_void) -> HipResult<(Arc<Function>, &'static Device)> {
    if func.is_null() {
        return Err(HipError::INVALID_DEVICE_FUNCTION);
    }
    let device = runtime::runtime()?.current_device()?;
    Ok((module::function(func as usize)?, device))
}

#[no_mangle]
pub extern "C" fn hipFuncGetAttributes(
    attr: *mut FuncAttributes,
    func: *const c_void,
) -> hipError_t {
    call("hipFuncGetAttributes", || {
        if attr.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        let (f, device) = host_kernel(func)?;
        let kernel = f.kernel(device)?;
        write_out(attr, func_attributes(&kernel.info, device))
    })
}

/// `hipFunction_attribute` values.
mod func_attr {
    pub const MAX_THREADS_PER_BLOCK: i32 = 0;
    pub const SHARED_SIZE_BYTES: i32 = 1;
    pub const CONST_SIZE_BYTES: i32 = 2;
    pub const LOCAL_SIZE_BYTES: i32 = 3;
    pub const NUM_REGS: i32 = 4;
    pub const PTX_VERSION: i32 = 5;
    pub const BINARY_VERSION: i32 = 6;
    pub const CACHE_MODE_CA: i32 = 7;
    pub const MAX_DYNAMIC_SHARED_SIZE_BYTES: i32 = 8;
    pub const PREFERRED_SHARED_MEMORY_CARVEOUT: i32 = 9;
}

#[no_mangle]
pub extern "C" fn hipFuncGetAttribute(
    value: *mut i32,
    attribute: i32,
    function: *mut c_void,
) -> hipError_t {
    call("hipFuncGetAttribute", || {
        if value.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        if function.is_null() {
            return Err(HipError::INVALID_HANDLE);
        }
        let f = module::function_handle(function as usize)?;
        let device = runtime::runtime()?.current_device()?;
        let a = func_attributes(&f.kernel(device)?.info, device);
        use func_attr::*;
        let v = match attribute {
            MAX_THREADS_PER_BLOCK => a.max_threads_per_block,
            SHARED_SIZE_BYTES => a.shared_size_bytes as i32,
            CONST_SIZE_BYTES => a.const_size_bytes as i32,
            LOCAL_SIZE_BYTES => a.local_size_bytes as i32,
            NUM_REGS => a.num_regs,
            PTX_VERSION => a.ptx_version,
            BINARY_VERSION => a.binary_version,
            CACHE_MODE_CA => a.cache_mode_ca,
            MAX_DYNAMIC_SHARED_SIZE_BYTES => a.max_dynamic_shared_size_bytes,
            PREFERRED_SHARED_MEMORY_CARVEOUT => a.preferred_shmem_carveout,
            _ => return Err(HipError::INVALID_VALUE),
        };
        write_out(value, v)
    })
}

fn cu_limits(device: &Device) -> CuLimits {
    CuLimits {
        wave_size: device.info.warp_size.max(1) as u32,
        max_waves_per_cu: device.info.max_waves_per_cu.max(4) as u32,
        lds_bytes: device.lds_bytes,
    }
}

fn max_active_blocks(
    f: &Function,
    device: &Device,
    block_size: i32,
    dynamic_lds: usize,
) -> HipResult<i32> {
    if block_size <= 0 {
        return Err(HipError::INVALID_VALUE);
    }
    let info = &f.kernel(device)?.info;
    Ok(
        occupancy::max_active_blocks(info, cu_limits(device), block_size as u32, dynamic_lds)
            as i32,
    )
}

fn max_potential_block_size(
    f: &Function,
    device: &Device,
    dynamic_lds: usize,
    block_limit: i32,
) -> HipResult<(i32, i32)> {
    let info = &f.kernel(device)?.info;
    let (grid, block) = occupancy::max_potential_block_size(
        info,
        cu_limits(device),
        device.info.compute_units.max(1) as u32,
        dynamic_lds,
        block_limit.max(0) as u32,
    );
    if block == 0 {
        // Not even one wave fits (the dynamic LDS alone exceeds the device's).
        return Err(HipError::INVALID_VALUE);
    }
    Ok((grid as i32, block as i32))
}

#[no_mangle]
pub extern "C" fn hipOccupancyMaxActiveBlocksPerMultiprocessor(
    num_blocks: *mut i32,
    func: *const c_void,
    block_size: i32,
    dynamic_lds: usize,
) -> hipError_t {
    call("hipOccupancyMaxActiveBlocksPerMultiprocessor", || {
        if num_blocks.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        let (f, device) = host_kernel(func)?;
        write_out(
            num_blocks,
            max_active_blocks(&f, device, block_size, dynamic_lds)?,
        )
    })
}

/// The flags (hipOccupancyDefault / DisableCachingOverride) do not change the model.
#[no_mangle]
pub extern "C" fn hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    num_blocks: *mut i32,
    func: *const c_void,
    block_size: i32,
    dynamic_lds: usize,
    _flags: u32,
) -> hipError_t {
    call(
        "hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
        || {
            if num_blocks.is_null() {
                return Err(HipError::INVALID_VALUE);
            }
            let (f, device) = host_kernel(func)?;
            write_out(
                num_blocks,
                max_active_blocks(&f, device, block_size, dynamic_lds)?,
            )
        },
    )
}

#[no_mangle]
pub extern "C" fn hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(
    num_blocks: *mut i32,
    function: *mut c_void,
    block_size: i32,
    dynamic_lds: usize,
) -> hipError_t {
    call("hipModuleOccupancyMaxActiveBlocksPerMultiprocessor", || {
        if num_blocks.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        let f = module::function_handle(function as usize)?;
        let device = runtime::runtime()?.current_device()?;
        write_out(
            num_blocks,
            max_active_blocks(&f, device, block_size, dynamic_lds)?,
        )
    })
}

#[no_mangle]
pub extern "C" fn hipOccupancyMaxPotentialBlockSize(
    grid_size: *mut i32,
    block_size: *mut i32,
    func: *const c_void,
    dynamic_lds: usize,
    block_limit: i32,
) -> hipError_t {
    call("hipOccupancyMaxPotentialBlockSize", || {
        if grid_size.is_null() || block_size.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        let (f, device) = host_kernel(func)?;
        let (grid, block) = max_potential_block_size(&f, device, dynamic_lds, block_limit)?;
        write_out(grid_size, grid)?;
        write_out(block_size, block)
    })
}

#[no_mangle]
pub extern "C" fn hipModuleOccupancyMaxPotentialBlockSize(
    grid_size: *mut i32,
    block_size: *mut i32,
    function: *mut c_void,
    dynamic_lds: usize,
    block_limit: i32,
) -> hipError_t {
    call("hipModuleOccupancyMaxPotentialBlockSize", || {
        if grid_size.is_null() || block_size.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        let f = module::function_handle(function as usize)?;
        let device = runtime::runtime()?.current_device()?;
        let (grid, block) = max_potential_block_size(&f, device, dynamic_lds, block_limit)?;
        write_out(grid_size, grid)?;
        write_out(block_size, block)
    })
}

include!(concat!(env!("OUT_DIR"), "/symver_module.rs"));

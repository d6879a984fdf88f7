//! The compiler's registration hooks, loaded modules, device symbols, function attributes and
//! `hipModuleLaunchKernel` (`runtime/kernel/module.rs`).

use super::convert::{write_if_wanted, Out, PerThread};
use super::declare::hip_api;
use super::types::{hipError_t, hipFunction_t, hipModule_t, hipStream_t, Dim3, FuncAttributes};
use crate::error::HipError;
use crate::runtime;
use crate::runtime::copy::CopyKind;
use crate::runtime::kernel::module::{self, Function, Module, Towards};
use std::ffi::{c_char, c_void, CStr};
use std::sync::Arc;

hip_api! {
    /// A failure (an unusable wrapper) returns null: clang's start-up code has no other way to
    /// hear of it, and every later hook with that handle says so.
    fn __hipRegisterFatBinary(wrapper: *const c_void) -> *mut *mut c_void as value(std::ptr::null_mut()) {
        // SAFETY: clang passes its fat-binary wrapper; the parser validates it.
        unsafe { module::register_fat_binary_handle(wrapper) }
    }

    fn __hipRegisterFunction(
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
    ) -> () as void {
        let Ok(fat_binary) = module::fat_binary(modules) else {
            eprintln!("hipshim: __hipRegisterFunction with an unknown fat binary handle");
            return;
        };
        if device_function.is_null() || host_function.is_null() {
            eprintln!("hipshim: __hipRegisterFunction with a null function");
            return;
        }
        // SAFETY: clang passes the kernel's NUL-terminated (mangled) name. Kept as bytes:
        // checking that they are UTF-8 would cost more than the rest of the registration.
        let name = unsafe { CStr::from_ptr(device_function) }.to_bytes().into();
        module::register_function(fat_binary, host_function as usize, name);
    }

    fn __hipUnregisterFatBinary(modules: *mut *mut c_void) -> () as void {
        // An unknown handle has nothing to unregister (the table logged it).
        let _ = module::unregister_fat_binary_handle(modules);
    }

    /// `__hipRegisterVar`: clang registers each `__device__`/`__constant__` variable with the
    /// address of its host shadow and its device-side name (clang passes the same string as
    /// `host_var` and `device_var`).
    fn __hipRegisterVar(
        modules: *mut *mut c_void,
        var: *mut c_void,
        _host_var: *mut c_char,
        device_var: *const c_char,
        _ext: i32,
        size: usize,
        _constant: i32,
        _global: i32,
    ) -> () as void {
        let Ok(fat_binary) = module::fat_binary(modules) else {
            eprintln!("hipshim: __hipRegisterVar with an unknown fat binary handle");
            return;
        };
        if var.is_null() || device_var.is_null() {
            eprintln!("hipshim: __hipRegisterVar with a null variable");
            return;
        }
        // SAFETY: clang passes the variable's NUL-terminated device-side name.
        let name = unsafe { CStr::from_ptr(device_var) }.to_string_lossy().into_owned();
        module::register_variable(fat_binary, var as usize, name, size);
    }

    fn hipModuleLoad(module: *mut hipModule_t => Out<hipModule_t>, fname: *const c_char => &str) -> hipError_t {
        module.write(module::load_module_file(runtime::current_device()?, std::path::Path::new(fname))?)
    }

    /// The image has no length: its headers say how long it is (`load_module_image`).
    fn hipModuleLoadData(module: *mut hipModule_t => Out<hipModule_t>, image: *const c_void) -> hipError_t {
        let device = runtime::current_device()?;
        // SAFETY: HIP's contract for `image`.
        module.write(unsafe { module::load_module_image(device, image) }?)
    }

    /// A clang offload bundle (or a code object): AMD's runtime loads it as `hipModuleLoadData`
    /// does, and so does hipshim.
    fn hipModuleLoadFatBinary(module: *mut hipModule_t => Out<hipModule_t>, fatbin: *const c_void) -> hipError_t {
        let device = runtime::current_device()?;
        // SAFETY: HIP's contract for `fatbin`, as for `hipModuleLoadData`'s image.
        module.write(unsafe { module::load_module_image(device, fatbin) }?)
    }

    /// JIT options do not apply: hipshim loads finished code objects only.
    fn hipModuleLoadDataEx(
        module: *mut hipModule_t => Out<hipModule_t>,
        image: *const c_void,
        _num_options: u32,
        _options: *mut c_void,
        _values: *mut *mut c_void,
    ) -> hipError_t {
        let device = runtime::current_device()?;
        // SAFETY: HIP's contract for `image`.
        module.write(unsafe { module::load_module_image(device, image) }?)
    }

    fn hipModuleUnload(module: hipModule_t) -> hipError_t {
        module::unload_module(runtime::devices()?, module)
    }

    fn hipModuleGetFunction(
        function: *mut hipFunction_t => Out<hipFunction_t>,
        module: hipModule_t => Arc<Module>,
        name: *const c_char => &str,
    ) -> hipError_t {
        function.write(module::module_get_function(runtime::current_device()?, &module, name)?)
    }

    /// The kernels the module's code object for the current device lists.
    fn hipModuleGetFunctionCount(count: *mut u32 => Out<u32>, module: hipModule_t => Arc<Module>) -> hipError_t {
        count.write(module::module_function_count(runtime::current_device()?, &module)?)
    }

    /// Either out-pointer may be null, not both.
    fn hipModuleGetGlobal(
        dptr: *mut *mut c_void => Option<Out<*mut c_void>>,
        bytes: *mut usize => Option<Out<usize>>,
        module: hipModule_t => Arc<Module>,
        name: *const c_char => &str,
    ) -> hipError_t {
        if dptr.is_none() && bytes.is_none() {
            return Err(HipError::INVALID_VALUE);
        }
        let (address, size) = module::module_get_global(runtime::current_device()?, &module, name)?;
        write_if_wanted(dptr, address as *mut c_void)?;
        write_if_wanted(bytes, size)
    }

    fn hipFuncGetAttributes(attr: *mut FuncAttributes => Out<FuncAttributes>, func: *const c_void) -> hipError_t {
        let f = module::host_function(func)?;
        attr.write(f.attributes(runtime::current_device()?)?)
    }

    fn hipFuncSetAttribute(func: *const c_void, attribute: u32, value: i32) -> hipError_t {
        module::set_function_attribute(runtime::current_device()?, func, attribute, value)
    }

    fn hipFuncSetCacheConfig(func: *const c_void, config: u32) -> hipError_t {
        module::set_function_config(func, config, 4, "hipFuncSetCacheConfig")
    }

    fn hipFuncSetSharedMemConfig(func: *const c_void, config: u32) -> hipError_t {
        module::set_function_config(func, config, 3, "hipFuncSetSharedMemConfig")
    }

    /// The kernel's mangled name, valid while its function is; null for a bad handle.
    fn hipKernelNameRef(function: hipFunction_t => Arc<Function>) -> *const c_char as value(std::ptr::null()) {
        // Handles are never reused, and the function lives as long as a handle names it.
        Ok(function.c_name().as_ptr())
    }

    /// The mangled name of the kernel registered for a host stub; the stream is not used (AMD
    /// takes it for its device, the name is the same on every device).
    fn hipKernelNameRefByPtr(function: *const c_void, stream: hipStream_t) -> *const c_char as value(std::ptr::null()) {
        let _ = stream;
        let function = module::host_function(function)?;
        // Registered kernels stay alive until their fat binary is unregistered.
        Ok(function.c_name().as_ptr())
    }

    fn hipGetFuncBySymbol(function: *mut hipFunction_t => Out<hipFunction_t>, symbol: *const c_void) -> hipError_t {
        function.write(module::function_handle_of_symbol(symbol)?)
    }

    fn hipFuncGetAttribute(value: *mut i32 => Out<i32>, attribute: u32, function: hipFunction_t => Arc<Function>) -> hipError_t {
        value.write(function.attribute(runtime::runtime()?.current_device()?, attribute)?)
    }

    fn hipGetSymbolAddress(ptr: *mut *mut c_void => Out<*mut c_void>, symbol: *const c_void) -> hipError_t {
        let (address, _) = module::symbol_on_device(runtime::current_device()?, symbol)?;
        ptr.write(address as *mut c_void)
    }

    fn hipGetSymbolSize(size: *mut usize => Out<usize>, symbol: *const c_void) -> hipError_t {
        let (_, bytes) = module::symbol_on_device(runtime::current_device()?, symbol)?;
        size.write(bytes)
    }

    fn hipMemcpyToSymbol(
        symbol: *const c_void,
        src: *const c_void,
        size: usize,
        offset: usize,
        kind: u32 => CopyKind,
    ) -> hipError_t {
        // SAFETY: HIP's contract: `src` is valid for `size` bytes.
        unsafe { module::symbol_copy(super::copy::devices(), Towards::Symbol, symbol, src as *mut c_void, size, offset, kind, None) }
    }
    alias hipMemcpyToSymbol_spt = hipMemcpyToSymbol;

    fn hipMemcpyFromSymbol(
        dst: *mut c_void,
        symbol: *const c_void,
        size: usize,
        offset: usize,
        kind: u32 => CopyKind,
    ) -> hipError_t {
        // SAFETY: HIP's contract: `dst` is valid for `size` bytes.
        unsafe { module::symbol_copy(super::copy::devices(), Towards::Host, symbol, dst, size, offset, kind, None) }
    }
    alias hipMemcpyFromSymbol_spt = hipMemcpyFromSymbol;

    /// Stream-ordered copy into a device variable: the symbol is resolved now.
    fn hipMemcpyToSymbolAsync(
        symbol: *const c_void,
        src: *const c_void,
        size: usize,
        offset: usize,
        kind: u32 => CopyKind,
        stream: hipStream_t,
    ) -> hipError_t {
        // SAFETY: HIP's contract: `src` is valid for `size` bytes until the copy completes.
        unsafe { module::symbol_copy(super::copy::devices(), Towards::Symbol, symbol, src as *mut c_void, size, offset, kind, Some(stream)) }
    }
    alias hipMemcpyToSymbolAsync_spt = hipMemcpyToSymbolAsync with stream: PerThread;

    /// Stream-ordered copy out of a device variable.
    fn hipMemcpyFromSymbolAsync(
        dst: *mut c_void,
        symbol: *const c_void,
        size: usize,
        offset: usize,
        kind: u32 => CopyKind,
        stream: hipStream_t,
    ) -> hipError_t {
        // SAFETY: HIP's contract: `dst` is valid for `size` bytes until the copy completes.
        unsafe { module::symbol_copy(super::copy::devices(), Towards::Host, symbol, dst, size, offset, kind, Some(stream)) }
    }
    alias hipMemcpyFromSymbolAsync_spt = hipMemcpyFromSymbolAsync with stream: PerThread;

}

#[cfg(not(test))]
include!(concat!(env!("OUT_DIR"), "/symver_module.rs"));

//! Kernel launches and the compiler's call-configuration stack (`runtime/launch.rs`). The
//! hot path: `hipLaunchKernel` converts nothing; the runtime resolves the kernel and the stream
//! once, under the device it launches on.

use super::convert::{Out, PerThread};
use super::declare::hip_api;
use super::types::{hipError_t, hipFunction_t, hipStream_t, Dim3};
use crate::runtime::launch::{self, CallConfiguration};
use crate::runtime::module::Function;
use std::ffi::c_void;
use std::sync::Arc;

hip_api! {
    /// A null or unregistered `function` is hipErrorInvalidDeviceFunction (`launch_kernel`).
    fn hipLaunchKernel(
        function: *const c_void,
        grid: Dim3,
        block: Dim3,
        args: *mut *mut c_void,
        shared_mem: usize,
        stream: hipStream_t,
    ) -> hipError_t {
        // SAFETY: HIP's contract: `args` holds one pointer per explicit kernel argument.
        unsafe {
            launch::launch_kernel(function, grid, block, args as *const *const c_void, shared_mem, stream)
        }
    }

    /// `hipLaunchKernel` on the per-thread stream when `stream` is null.
    fn hipLaunchKernel_spt(
        function: *const c_void,
        grid: Dim3,
        block: Dim3,
        args: *mut *mut c_void,
        shared_mem: usize,
        stream: hipStream_t => PerThread<hipStream_t>,
    ) -> hipError_t {
        // SAFETY: HIP's contract: `args` holds one pointer per explicit kernel argument.
        unsafe {
            launch::launch_kernel(function, grid, block, args as *const *const c_void, shared_mem, stream.0)
        }
    }

    fn hipModuleLaunchKernel(
        function: hipFunction_t => Arc<Function>,
        grid_x: u32,
        grid_y: u32,
        grid_z: u32,
        block_x: u32,
        block_y: u32,
        block_z: u32,
        shared_mem: u32,
        stream: hipStream_t,
        kernel_params: *mut *mut c_void,
        extra: *mut *mut c_void,
    ) -> hipError_t {
        let grid = Dim3 { x: grid_x, y: grid_y, z: grid_z };
        let block = Dim3 { x: block_x, y: block_y, z: block_z };
        // SAFETY: HIP's contract for `kernel_params` and `extra`.
        unsafe {
            launch::launch_module_kernel(&function, grid, block, shared_mem as usize, stream, kernel_params, extra)
        }
    }

    /// What `<<<grid, block, shared_mem, stream>>>` compiles to before the stub's launch;
    /// neither logged nor traced (its launch is), and it leaves the last error alone.
    fn __hipPushCallConfiguration(
        grid: Dim3,
        block: Dim3,
        shared_mem: usize,
        stream: hipStream_t,
    ) -> hipError_t as plain(crate::error::HipError::UNKNOWN.code()) {
        crate::error::to_code(launch::push_call_configuration(CallConfiguration { grid, block, shared_mem, stream }))
    }

    fn __hipPopCallConfiguration(
        grid: *mut Dim3 => Out<Dim3>,
        block: *mut Dim3 => Out<Dim3>,
        shared_mem: *mut usize => Out<usize>,
        stream: *mut hipStream_t => Out<hipStream_t>,
    ) -> hipError_t {
        let config = launch::pop_call_configuration()?;
        grid.write(config.grid)?;
        block.write(config.block)?;
        shared_mem.write(config.shared_mem)?;
        stream.write(config.stream)
    }
}

#[cfg(not(test))]
include!(concat!(env!("OUT_DIR"), "/symver_launch.rs"));

//! Kernel launches: the compiler's call-configuration stack and `hipLaunchKernel`.
//!
//! This is the hot path. Per launch: a registry lookup, one stream lock, kernarg writes into
//! a recycled ring slot and one packet; no heap allocation and no system call.

use super::kernarg::{self, LaunchGeometry};
use super::module;
use super::runtime;
use crate::error::{HipError, HipResult};
use crate::hsa::queue::{stream_packet_header, to_bytes, KERNARG_SLOT_BYTES};
use hsa_abi::*;
use std::cell::RefCell;
use std::ffi::c_void;

/// HIP's `dim3`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

/// What `<<<grid, block, shmem, stream>>>` pushed, for the stub to pop.
#[derive(Clone, Copy, Debug)]
pub struct CallConfiguration {
    pub grid: Dim3,
    pub block: Dim3,
    pub shared_mem: usize,
    pub stream: *mut c_void,
}

thread_local! {
    static CALL_CONFIGURATIONS: RefCell<Vec<CallConfiguration>> = const { RefCell::new(Vec::new()) };
}

pub fn push_call_configuration(config: CallConfiguration) {
    CALL_CONFIGURATIONS.with(|stack| stack.borrow_mut().push(config));
}

pub fn pop_call_configuration() -> HipResult<CallConfiguration> {
    CALL_CONFIGURATIONS
        .with(|stack| stack.borrow_mut().pop())
        .ok_or(HipError::MISSING_CONFIGURATION)
}

/// Most work-items a workgroup may have on the devices hipshim targets.
const MAX_BLOCK_THREADS: u64 = 1024;

/// `hipLaunchKernel`.
///
/// # Safety
/// `args` must point to one pointer per explicit kernel argument, each pointing to a value of
/// that argument's size (HIP's `void** args` contract).
pub unsafe fn launch_kernel(
    host_function: *const c_void,
    grid: Dim3,
    block: Dim3,
    args: *const *const c_void,
    shared_mem: usize,
    stream: *mut c_void,
) -> HipResult {
    let rt = runtime()?;
    let device = rt.current_device()?;
    let function = module::function(host_function as usize)?;
    let kernel = function.kernel(device)?;
    let info = &kernel.info;

    let threads = block.x as u64 * block.y as u64 * block.z as u64;
    let max_threads = match info.max_flat_workgroup_size {
        0 => MAX_BLOCK_THREADS,
        n => (n as u64).min(MAX_BLOCK_THREADS),
    };
    if threads == 0 || grid.x == 0 || grid.y == 0 || grid.z == 0 || threads > max_threads {
        tracing::warn!(kernel = %function.name, ?grid, ?block, max_threads, "invalid launch configuration");
        return Err(HipError::INVALID_CONFIGURATION);
    }
    let geometry = LaunchGeometry::from_blocks(
        [grid.x, grid.y, grid.z],
        [block.x, block.y, block.z],
        u32::try_from(shared_mem).unwrap_or(u32::MAX),
    )
    .map_err(|e| {
        tracing::warn!(kernel = %function.name, ?grid, ?block, error = %e, "invalid launch geometry");
        HipError::INVALID_CONFIGURATION
    })?;
    let group_segment = info.group_segment_fixed_size as u64 + shared_mem as u64;
    if info.kernarg_size as usize > KERNARG_SLOT_BYTES || group_segment > u32::MAX as u64 {
        tracing::warn!(kernel = %function.name, kernarg = info.kernarg_size, group_segment, "launch exceeds kernarg or LDS limits");
        return Err(HipError::INVALID_CONFIGURATION);
    }
    let stream = super::stream::resolve(stream, device)?;
    let [gx, gy, gz] = geometry.grid_size();
    // SAFETY: the caller guarantees one valid pointer per explicit argument.
    let args = unsafe { std::slice::from_raw_parts(args, info.explicit_arg_count()) };
    stream.submit(device, |kernarg, completion_signal| {
        // SAFETY: `args` holds one valid pointer per explicit argument (caller's contract).
        if let Err(e) = unsafe { kernarg::write_kernargs(info, args, &geometry, kernarg) } {
            // Validated above, so this is an internal inconsistency: publish a no-op barrier
            // in the reserved slot so the queue and the stream's accounting stay consistent.
            tracing::error!(error = %e, kernel = %function.name, "kernarg layout failed; kernel skipped");
            return to_bytes(&hsa_barrier_and_packet_t {
                header: stream_packet_header(HSA_PACKET_TYPE_BARRIER_AND),
                completion_signal,
                ..Default::default()
            });
        }
        tracing::trace!(kernel = %function.name, ?grid, ?block, shared_mem, "kernel dispatch");
        to_bytes(&hsa_kernel_dispatch_packet_t {
            header: stream_packet_header(HSA_PACKET_TYPE_KERNEL_DISPATCH),
            setup: geometry.dimensions() << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS,
            workgroup_size_x: block.x as u16,
            workgroup_size_y: block.y as u16,
            workgroup_size_z: block.z as u16,
            grid_size_x: gx,
            grid_size_y: gy,
            grid_size_z: gz,
            private_segment_size: info.private_segment_fixed_size,
            group_segment_size: group_segment as u32,
            kernel_object: kernel.kernel_object,
            kernarg_address: kernarg.as_ptr() as u64,
            completion_signal,
            ..Default::default()
        })
    })
}

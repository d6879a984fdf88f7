//! Occupancy (`runtime/kernel/occupancy.rs`). The flags of the `WithFlags` forms
//! (hipOccupancyDefault / DisableCachingOverride) do not change the model; any other value is
//! `hipErrorInvalidValue`, as in AMD's runtime.

use super::convert::Out;
use super::declare::hip_api;
use super::types::{hipError_t, hipFunction_t};
use crate::error::{HipError, HipResult};
use crate::runtime::kernel::module::{self, Function};
use crate::runtime::kernel::occupancy::{
    active_blocks_of, available_dynamic_lds_of, potential_block_size_of,
};
use crate::runtime::runtime;
use std::ffi::c_void;
use std::sync::Arc;

/// `hipOccupancyDefault`, `hipOccupancyDisableCachingOverride`: the only flags AMD takes.
const OCCUPANCY_FLAGS: [u32; 2] = [0, 1];

fn check_flags(flags: u32) -> HipResult {
    if OCCUPANCY_FLAGS.contains(&flags) {
        return Ok(());
    }
    tracing::warn!(
        flags,
        "occupancy flags are hipOccupancyDefault (0) or hipOccupancyDisableCachingOverride (1)"
    );
    Err(HipError::INVALID_VALUE)
}

hip_api! {
    fn hipOccupancyMaxActiveBlocksPerMultiprocessor(
        num_blocks: *mut i32 => Out<i32>,
        func: *const c_void,
        block_size: i32,
        dynamic_lds: usize,
    ) -> hipError_t {
        let f = module::host_function(func)?;
        num_blocks.write(active_blocks_of(&f, runtime()?.current_device()?, block_size, dynamic_lds)?)
    }

    fn hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
        num_blocks: *mut i32 => Out<i32>,
        func: *const c_void,
        block_size: i32,
        dynamic_lds: usize,
        flags: u32,
    ) -> hipError_t {
        check_flags(flags)?;
        let f = module::host_function(func)?;
        num_blocks.write(active_blocks_of(&f, runtime()?.current_device()?, block_size, dynamic_lds)?)
    }

    /// The most dynamic shared memory per block that still lets `num_blocks` blocks of
    /// `block_size` threads run on one compute unit at once.
    fn hipOccupancyAvailableDynamicSMemPerBlock(
        dynamic_smem_size: *mut usize => Out<usize>,
        func: *const c_void,
        num_blocks: i32,
        block_size: i32,
    ) -> hipError_t {
        let f = module::host_function(func)?;
        dynamic_smem_size.write(available_dynamic_lds_of(&f, runtime()?.current_device()?, num_blocks, block_size)?)
    }

    fn hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(
        num_blocks: *mut i32 => Out<i32>,
        function: hipFunction_t => Arc<Function>,
        block_size: i32,
        dynamic_lds: usize,
    ) -> hipError_t {
        num_blocks.write(active_blocks_of(&function, runtime()?.current_device()?, block_size, dynamic_lds)?)
    }

    /// The flags (`hipOccupancyDefault`, `hipOccupancyDisableCachingOverride`) change nothing
    /// on AMD's GPUs, as for `hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags`.
    fn hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
        num_blocks: *mut i32 => Out<i32>,
        function: hipFunction_t => Arc<Function>,
        block_size: i32,
        dynamic_lds: usize,
        flags: u32,
    ) -> hipError_t {
        check_flags(flags)?;
        num_blocks.write(active_blocks_of(&function, runtime()?.current_device()?, block_size, dynamic_lds)?)
    }

    fn hipOccupancyMaxPotentialBlockSize(
        grid_size: *mut i32 => Out<i32>,
        block_size: *mut i32 => Out<i32>,
        func: *const c_void,
        dynamic_lds: usize,
        block_limit: i32,
    ) -> hipError_t {
        let f = module::host_function(func)?;
        let device = runtime()?.current_device()?;
        let (grid, block) = potential_block_size_of(&f, device, dynamic_lds, block_limit)?;
        grid_size.write(grid)?;
        block_size.write(block)
    }

    fn hipModuleOccupancyMaxPotentialBlockSize(
        grid_size: *mut i32 => Out<i32>,
        block_size: *mut i32 => Out<i32>,
        function: hipFunction_t => Arc<Function>,
        dynamic_lds: usize,
        block_limit: i32,
    ) -> hipError_t {
        let device = runtime()?.current_device()?;
        let (grid, block) = potential_block_size_of(&function, device, dynamic_lds, block_limit)?;
        grid_size.write(grid)?;
        block_size.write(block)
    }

    /// `hipModuleOccupancyMaxPotentialBlockSize` with flags that change nothing (see above).
    fn hipModuleOccupancyMaxPotentialBlockSizeWithFlags(
        grid_size: *mut i32 => Out<i32>,
        block_size: *mut i32 => Out<i32>,
        function: hipFunction_t => Arc<Function>,
        dynamic_lds: usize,
        block_limit: i32,
        flags: u32,
    ) -> hipError_t {
        check_flags(flags)?;
        let device = runtime()?.current_device()?;
        let (grid, block) = potential_block_size_of(&function, device, dynamic_lds, block_limit)?;
        grid_size.write(grid)?;
        block_size.write(block)
    }
}

#[cfg(not(test))]
include!(concat!(env!("OUT_DIR"), "/symver_occupancy.rs"));

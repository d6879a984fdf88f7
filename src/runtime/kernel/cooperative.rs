//! Cooperative launches (`hipLaunchCooperativeKernel`, `hipModuleLaunchCooperativeKernel`):
//! kernels whose work-groups wait for each other with grid-wide barriers
//! (`cooperative_groups::this_grid().sync()`, the device library's `__ockl_grid_sync`, a GWS
//! barrier over every work-group of the dispatch).
//!
//! Such a barrier only completes if every work-group of the grid is resident at once, so:
//! - the grid may have at most as many work-groups as the device holds at once for this
//!   kernel, block and dynamic LDS (occupancy, `occupancy.rs`, times the compute units a
//!   cooperative dispatch may use); more is `hipErrorCooperativeLaunchTooLarge`;
//! - the dispatch goes to the device's *cooperative queue* (`HSA_QUEUE_TYPE_COOPERATIVE`, made
//!   at the first cooperative launch), whose dispatches the packet processor runs with all of
//!   their work-groups co-resident and the global wave sync (GWS) resource set up. It stays in
//!   the order of the launching stream: a barrier-AND there waits for the stream's earlier work
//!   and the stream's later work waits for the dispatch (`Stream::submit_elsewhere`).
//!   Other launches never touch it and pay nothing for it.
//!
//! The kernel's `hidden_multigrid_sync_arg` tells the device library what kind of launch this
//! is: 0 for an ordinary one (`grid_group::is_valid()` is false), [`SINGLE_GRID`] for a
//! cooperative launch on one device (`__ockl_grid_is_valid` tests for non-zero,
//! `__ockl_multi_grid_is_valid` for more than 1), which is what AMD's ROCm 5.2 runtime writes
//! (its packets on hsasim, `hipshim compare`: 1 and 0), and the address of the grid's
//! multi-grid block for a multi-device launch (`ops/multi_device.rs`).

//!
//! Multi-device launches (`ops/multi_device.rs`) build on these: one cooperative dispatch per
//! device.

use crate::error::{HipError, HipResult};
use crate::hsa::queue::Queue;
use crate::runtime::code_object::KernelInfo;
use crate::runtime::devices::device::Device;
use crate::runtime::kernel::module::Function;
use crate::runtime::kernel::occupancy::{max_active_blocks, CuLimits};
use std::sync::Arc;

/// Why the cooperative queue was made, in a trace's `QueueCreated` event.
pub const COOPERATIVE_QUEUE: &str = "cooperative: the device's queue for cooperative launches";

/// `hidden_multigrid_sync_arg` of a cooperative launch on one device.
pub const SINGLE_GRID: u64 = 1;

/// Most work-groups a cooperative grid of `block_threads`-thread blocks with `dynamic_lds`
/// bytes of dynamic LDS may have: all of them must be resident at once.
pub fn max_cooperative_blocks(
    info: &KernelInfo,
    limits: CuLimits,
    compute_units: u32,
    block_threads: u32,
    dynamic_lds: usize,
) -> u64 {
    u64::from(max_active_blocks(info, limits, block_threads, dynamic_lds))
        * u64::from(compute_units)
}

/// What a cooperative launch checks beyond an ordinary one (which `launch_function` has checked
/// already): the device supports it and the grid fits at once. Returns the device's
/// cooperative queue.
pub(in crate::runtime) fn prepare(
    device: &Device,
    function: &Function,
    info: &KernelInfo,
    grid: [u32; 3],
    block: [u32; 3],
    shared_mem: usize,
) -> HipResult<Arc<Queue>> {
    if !device.info.cooperative_launch {
        tracing::warn!(
            device = device.index,
            kernel = %function.name,
            "cooperative launch on a device whose HSA runtime offers no cooperative queues"
        );
        return Err(HipError::NOT_SUPPORTED);
    }
    let blocks = grid.iter().map(|&n| u64::from(n)).product::<u64>();
    let block_threads = block.iter().product::<u32>();
    let most = max_cooperative_blocks(
        info,
        CuLimits::of(device),
        device.cooperative_compute_units,
        block_threads,
        shared_mem,
    );
    if blocks > most {
        tracing::warn!(
            device = device.index,
            kernel = %function.name,
            ?grid,
            ?block,
            shared_mem,
            blocks,
            most,
            compute_units = device.cooperative_compute_units,
            "cooperative launch too large: every work-group must be resident at once, and the \
             device holds at most {most} of these"
        );
        return Err(HipError::COOPERATIVE_LAUNCH_TOO_LARGE);
    }
    device.cooperative_queue()
}

impl Device {
    /// The device's cooperative queue, made now if this is the first cooperative launch or the
    /// last one failed there (a failed queue runs nothing more).
    fn cooperative_queue(&self) -> HipResult<Arc<Queue>> {
        let mut slot = self.cooperative_queue.lock();
        if let Some(queue) = slot.as_ref().filter(|q| q.known_fault().is_none()) {
            return Ok(queue.clone());
        }
        let size = self.queue_size;
        let queue = Arc::new(self.queue_factory().create_cooperative(size).map_err(|e| {
            tracing::error!(device = self.index, error = %e, "could not create the cooperative queue");
            HipError::from(e)
        })?);
        tracing::info!(target: "hipshim::queue", device = self.index, queue = queue.id, "cooperative queue created");
        if crate::trace::recording() {
            crate::trace::record::queue_created(
                queue.id,
                self.index as u32,
                size,
                COOPERATIVE_QUEUE,
            );
        }
        *slot = Some(queue.clone());
        Ok(queue)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(max_flat: u32, lds: u32, vgprs: u32) -> KernelInfo {
        KernelInfo::with_resources(max_flat, lds, 16, vgprs, 0)
    }

    const LIMITS: CuLimits = CuLimits {
        wave_size: 64,
        max_waves_per_cu: 32,
        lds_bytes: 64 << 10,
    };

    #[test]
    fn a_cooperative_grid_may_fill_every_compute_unit_and_no_more() {
        // 256-thread blocks (4 waves) of a small kernel: 32 wave slots per CU hold 8.
        assert_eq!(
            max_cooperative_blocks(&info(256, 0, 8), LIMITS, 4, 256, 0),
            32
        );
        // 40 KiB of LDS each: one per CU.
        assert_eq!(
            max_cooperative_blocks(&info(256, 0, 8), LIMITS, 4, 256, 40 << 10),
            4
        );
        // 128 VGPRs: 4 waves per SIMD, 16 per CU, 4 blocks.
        assert_eq!(
            max_cooperative_blocks(&info(256, 0, 128), LIMITS, 2, 256, 0),
            8
        );
        // A block the kernel cannot run: nothing fits.
        assert_eq!(
            max_cooperative_blocks(&info(128, 0, 8), LIMITS, 4, 256, 0),
            0
        );
    }
}

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
//! `__ockl_multi_grid_is_valid` for more than 1), which is what AMD's runtime writes.

use super::code_object::KernelInfo;
use super::device::Device;
use super::launch::{self, Args, Dim3, GridSize};
use super::module::Function;
use super::occupancy::{max_active_blocks, CuLimits};
use super::runtime;
use super::stream::{self, Dep};
use crate::error::{HipError, HipResult};
use crate::hsa::memory::PoolBuffer;
use crate::hsa::queue::{Marker, Queue};
use parking_lot::Mutex;
use std::ffi::c_void;
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

/// What a cooperative launch checks beyond an ordinary one (which `launch_on` has checked
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
        let size = runtime()?.config.queue_size;
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

/// `hipCooperativeLaunchMultiDeviceNoPreSync`: each grid waits only for its own stream's
/// earlier work.
pub const NO_PRE_SYNC: u32 = 0x1;
/// `hipCooperativeLaunchMultiDeviceNoPostSync`: each stream's later work waits only for its
/// own grid.
pub const NO_POST_SYNC: u32 = 0x2;
/// Every flag a multi-device launch knows.
pub const MULTI_DEVICE_FLAGS: u32 = NO_PRE_SYNC | NO_POST_SYNC;

/// `hipLaunchParams`: one device's part of `hipLaunchCooperativeKernelMultiDevice`. 56 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LaunchParams {
    /// The kernel's host handle, as for `hipLaunchKernel`.
    pub func: *const c_void,
    pub grid: Dim3,
    pub block: Dim3,
    pub args: *mut *mut c_void,
    pub shared_mem: usize,
    pub stream: *mut c_void,
}

/// `hipFunctionLaunchParams`: one device's part of
/// `hipModuleLaunchCooperativeKernelMultiDevice`. 56 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct FunctionLaunchParams {
    pub function: *mut c_void,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_mem: u32,
    pub stream: *mut c_void,
    pub kernel_params: *mut *mut c_void,
}

const _: () = assert!(std::mem::size_of::<LaunchParams>() == 56);
const _: () = assert!(std::mem::size_of::<FunctionLaunchParams>() == 56);

/// One device's part of a multi-device cooperative launch, its kernel resolved.
pub struct GridPart {
    pub function: Arc<Function>,
    pub grid: Dim3,
    pub block: Dim3,
    pub shared_mem: usize,
    /// Names the device: its stream's.
    pub stream: *mut c_void,
    /// One pointer per explicit kernel argument (HIP's `void** args`).
    pub args: *const *const c_void,
}

/// The device library's multi-grid block (`__ockl_multi_grid_*` read it through
/// `hidden_multigrid_sync_arg`): the shared sync word, this grid's rank, the number of grids,
/// the work-items of the grids before this one and of all grids.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct MultiGridInfo {
    sync_word: u64,
    grid_rank: u32,
    num_grids: u32,
    threads_before: u64,
    threads_total: u64,
}

const _: () = assert!(std::mem::size_of::<MultiGridInfo>() == 32);

/// Where the sync word lives in a block; the grids' `MultiGridInfo` follow from
/// [`INFO_OFFSET`] (a cache line apart from the word every grid's atomics hit).
const INFO_OFFSET: usize = 64;

/// The memory of one multi-device launch, kept until all its grids have completed (they read
/// and write it while they run), then reused by a later launch.
struct SyncBlock {
    buffer: PoolBuffer,
    /// The launch's grids, and what their barriers wait for (whose signals the barriers read
    /// until the grids start).
    grids: Vec<Marker>,
    _waits: Vec<Dep>,
}

impl SyncBlock {
    fn in_use(&self) -> bool {
        self.grids.iter().any(|g| !g.signal.is_zero())
    }
}

/// Every multi-device launch's blocks, busy or free. Its lock is held while a launch publishes
/// its grids, so that the grids of two launches are in the same order on every cooperative
/// queue (otherwise each could wait on one device for a grid stuck behind the other's).
static SYNC_BLOCKS: Mutex<Vec<SyncBlock>> = Mutex::new(Vec::new());

/// Whether multi-device cooperative launches over more than one device can run: every device
/// has cooperative queues, and the devices run at the same time (not in hsasim's deterministic
/// mode, where one host thread runs one dispatch at a time: a grid waiting for another
/// device's grid would wait for ever).
pub fn multi_device_supported(devices: &[Device], devices_run_one_at_a_time: bool) -> bool {
    devices.iter().all(|d| d.info.cooperative_launch)
        && !(devices_run_one_at_a_time && devices.len() > 1)
}

/// `hipLaunchCooperativeKernelMultiDevice` and `hipModuleLaunchCooperativeKernelMultiDevice`,
/// once the API shell has read the parts and resolved their kernels: one grid per part, each on
/// its stream's device, all co-resident, `this_multi_grid().sync()` synchronising all of them.
///
/// Checked as AMD's runtime does: a null or legacy stream is `hipErrorInvalidHandle`
/// (hipErrorInvalidResourceHandle), two parts on one device `hipErrorInvalidDevice`, grids,
/// blocks or dynamic LDS that differ between parts `hipErrorInvalidValue`; then each part as a
/// cooperative launch on its device (a grid too large is
/// `hipErrorCooperativeLaunchTooLarge`). Nothing is published unless every part passes.
///
/// Order, on the devices (barrier-AND packets; the host never waits): each grid runs after its
/// own stream's earlier work and, unless `NO_PRE_SYNC`, after every participating stream's;
/// each stream's later work waits for its own grid and, unless `NO_POST_SYNC`, for all of them.
///
/// # Safety
/// Each part's `args` holds one valid pointer per explicit argument of its kernel.
pub unsafe fn launch_multi_device(api: &str, parts: &[GridPart], flags: u32) -> HipResult {
    let rt = runtime()?;
    if flags & !MULTI_DEVICE_FLAGS != 0 {
        tracing::warn!(flags, "{api}: unknown flags");
        return Err(HipError::INVALID_VALUE);
    }
    let mut devices: Vec<&'static Device> = Vec::with_capacity(parts.len());
    for (rank, part) in parts.iter().enumerate() {
        if part.stream.is_null() || part.stream as usize == stream::LEGACY_HANDLE {
            tracing::warn!(
                part = rank,
                "{api}: the null stream names no device; each part needs a stream of its device"
            );
            return Err(HipError::INVALID_HANDLE);
        }
        let (device, _) = stream::lookup(part.stream)?;
        if devices.iter().any(|d| d.index == device.index) {
            tracing::warn!(
                part = rank,
                device = device.index,
                "{api}: two parts on the same device"
            );
            return Err(HipError::INVALID_DEVICE);
        }
        devices.push(device);
    }
    if let Some(pair) = parts.windows(2).find(|w| {
        (w[0].grid, w[0].block, w[0].shared_mem) != (w[1].grid, w[1].block, w[1].shared_mem)
    }) {
        tracing::warn!(
            first = ?(pair[0].grid, pair[0].block, pair[0].shared_mem),
            other = ?(pair[1].grid, pair[1].block, pair[1].shared_mem),
            "{api}: every part must have the same grid, block and dynamic shared memory"
        );
        return Err(HipError::INVALID_VALUE);
    }
    // Every part checked before anything is published: all or nothing.
    let checked = parts
        .iter()
        .zip(&devices)
        .map(|(part, device)| {
            // SAFETY: the caller's contract for `args`.
            unsafe {
                launch::check_launch(
                    device,
                    &part.function,
                    GridSize::Blocks(part.grid),
                    part.block,
                    Args::Pointers(part.args),
                    part.shared_mem,
                    part.stream,
                    true,
                )
            }
        })
        .collect::<HipResult<Vec<_>>>()?;
    if parts.len() > 1 && rt.hsa.devices_run_one_at_a_time {
        tracing::warn!(
            devices = parts.len(),
            "{api}: the HSA runtime runs one device's work at a time (hsasim's deterministic \
             mode, HSASIM_THREADS=0), so grids on different devices cannot wait for each other; \
             run threaded, or launch on one device"
        );
        return Err(HipError::NOT_SUPPORTED);
    }
    let streams = parts
        .iter()
        .zip(&devices)
        .map(|(part, device)| stream::resolve(part.stream, device))
        .collect::<HipResult<Vec<_>>>()?;

    let mut blocks = SYNC_BLOCKS.lock();
    let block = free_block(&mut blocks, devices[0], rt.devices.len())?;
    let base = block.as_ptr();
    let total: u64 = checked.iter().map(|c| c.work_items()).sum();
    let mut before = 0;
    for (rank, part) in checked.iter().enumerate() {
        let info = MultiGridInfo {
            sync_word: base as u64,
            grid_rank: rank as u32,
            num_grids: parts.len() as u32,
            threads_before: before,
            threads_total: total,
        };
        before += part.work_items();
        // SAFETY: the block holds the sync word and one info per device (`free_block`), and
        // no grid uses it: its last launch has completed.
        unsafe {
            base.add(INFO_OFFSET + rank * std::mem::size_of::<MultiGridInfo>())
                .cast::<MultiGridInfo>()
                .write(info)
        };
    }
    // SAFETY: as above; the word starts at 0 (the device library counts arrivals in its low
    // byte and completed syncs above).
    unsafe { base.cast::<u64>().write(0) };

    // What each grid waits for besides its own stream: the other streams' work so far.
    let pre: Vec<Option<Marker>> = if flags & NO_PRE_SYNC == 0 {
        streams
            .iter()
            .zip(&devices)
            .map(|(s, d)| s.marker_after_work_so_far(&d.streams))
            .collect::<HipResult<_>>()?
    } else {
        vec![None; parts.len()]
    };
    let others = |of: &[Option<Marker>], rank: usize| -> Vec<Dep> {
        of.iter()
            .enumerate()
            .filter(|&(j, _)| j != rank)
            .filter_map(|(_, m)| m.clone().map(Dep::on))
            .collect()
    };
    let mut grids = Vec::with_capacity(parts.len());
    let mut waits = Vec::new();
    for (rank, launch) in checked.into_iter().enumerate() {
        let deps = others(&pre, rank);
        let address = base as u64
            + (INFO_OFFSET + rank * std::mem::size_of::<MultiGridInfo>()) as u64;
        let device = launch.device().index;
        match launch.submit_cooperative(address, &deps) {
            Ok(grid) => grids.push(Some(grid)),
            Err(e) => {
                // Only running out of signals or queues gets here: the grids already published
                // wait for this one at their first multi-grid sync.
                tracing::error!(
                    device,
                    part = rank,
                    error = ?e,
                    "{api}: could not publish a grid after publishing {rank}; those wait for it"
                );
                blocks.push(SyncBlock {
                    buffer: block,
                    grids: grids.into_iter().flatten().collect(),
                    _waits: waits,
                });
                return Err(e);
            }
        }
        waits.extend(deps);
    }
    tracing::debug!(
        grids = parts.len(),
        total,
        flags,
        sync = format_args!("{base:p}"),
        "{api}: multi-device cooperative launch published"
    );
    if flags & NO_POST_SYNC == 0 {
        for (rank, (s, d)) in streams.iter().zip(&devices).enumerate() {
            let deps = others(&grids, rank);
            if let Err(e) = s.wait_for_all(&d.streams, deps) {
                tracing::error!(device = d.index, error = ?e, "{api}: could not make the stream wait for the other grids");
                blocks.push(SyncBlock {
                    buffer: block,
                    grids: grids.into_iter().flatten().collect(),
                    _waits: waits,
                });
                return Err(e);
            }
        }
    }
    blocks.push(SyncBlock {
        buffer: block,
        grids: grids.into_iter().flatten().collect(),
        _waits: waits,
    });
    Ok(())
}

/// A block whose last launch has completed, or a new one: fine-grained system memory every
/// device may access, for the sync word and `devices` infos.
fn free_block(blocks: &mut Vec<SyncBlock>, device: &Device, devices: usize) -> HipResult<PoolBuffer> {
    if let Some(at) = blocks.iter().position(|b| !b.in_use()) {
        return Ok(blocks.swap_remove(at).buffer);
    }
    let size = INFO_OFFSET + devices * std::mem::size_of::<MultiGridInfo>();
    let gpus = &runtime()?.hsa.gpus;
    device.host_pool.allocate(size, gpus).map_err(|e| {
        tracing::warn!(size, status = %device.api.describe(e.status), "multi-device cooperative launch: no memory for the multi-grid sync block");
        HipError::OUT_OF_MEMORY
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(max_flat: u32, lds: u32, vgprs: u32) -> KernelInfo {
        KernelInfo {
            name: "k".into(),
            symbol: "k.kd".into(),
            kernarg_size: 0,
            kernarg_align: 8,
            group_segment_fixed_size: lds,
            private_segment_fixed_size: 0,
            max_flat_workgroup_size: max_flat,
            wavefront_size: 64,
            uses_dynamic_stack: false,
            sgpr_count: 16,
            vgpr_count: vgprs,
            agpr_count: 0,
            args: Vec::new(),
        }
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

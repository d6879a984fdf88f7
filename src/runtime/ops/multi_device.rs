//! Multi-device cooperative launches (`hipLaunchCooperativeKernelMultiDevice`,
//! `hipModuleLaunchCooperativeKernelMultiDevice`, [`launch_multi_device`]): one grid per
//! device (the device of each part's stream), each a cooperative dispatch on its device's
//! cooperative queue (`kernel/cooperative.rs`), and `this_multi_grid().sync()`
//! (`__ockl_multi_grid_sync`) synchronises all of them.
//!
//! How: work-group 0 of each grid adds 1 to a sync word shared by the grids, and the last to
//! arrive moves it to the next generation; the others spin on it (`s_sleep` between reads). The device library finds the word, the grid's
//! rank, the number of grids and the work-items before and in all grids in a 32-byte block
//! whose address is the kernel's `hidden_multigrid_sync_arg` ([`MultiGridInfo`], the layout
//! `__ockl_multi_grid_*` read in ockl.bc). The word and the blocks are in one allocation of
//! fine-grained system memory every device may access, kept until every grid has completed and
//! then reused by a later launch (no host wait, no completion callback).
//!
//! The grids only progress together if the devices run at the same time. hsasim's threaded
//! mode runs each agent's cooperative queue on its own packet processor; its deterministic
//! mode (`HSASIM_THREADS=0`) runs one dispatch at a time on the thread that waits, so a grid
//! spinning for another device's grid would spin for ever: there, launches over more than one
//! device are refused (`hipErrorNotSupported`, after the other checks) and
//! `hipDeviceAttributeCooperativeMultiDeviceLaunch` reads 0.

use crate::error::{HipError, HipResult};
use crate::hsa::memory::PoolBuffer;
use crate::hsa::queue::Marker;
use crate::runtime::base::compat;
use crate::runtime::devices::device::Device;
use crate::runtime::kernel::module::Function;
use crate::runtime::launch::{self, Args, Dim3, GridSize, LaunchRequest};
use crate::runtime::stream::{self, Dep};
use parking_lot::Mutex;
use std::ffi::c_void;
use std::sync::Arc;

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
pub fn supported(devices: &[Device], devices_run_one_at_a_time: bool) -> bool {
    devices.iter().all(|d| d.info.cooperative_launch)
        && !(devices_run_one_at_a_time && devices.len() > 1)
}

/// `hipLaunchCooperativeKernelMultiDevice` and `hipModuleLaunchCooperativeKernelMultiDevice`,
/// once the API shell has read the parts and resolved their kernels: one grid per part, each on
/// its stream's device, all co-resident, `this_multi_grid().sync()` synchronising all of them.
///
/// Checked as AMD's runtime does: a null or legacy stream is `hipErrorInvalidHandle`
/// (hipErrorInvalidResourceHandle), a capturing stream is
/// `hipErrorStreamCaptureUnsupported` (ROCm 7 also invalidates the capture), two parts on one
/// device `hipErrorInvalidDevice`; then each part as a cooperative launch on its device (a grid
/// too large is `hipErrorCooperativeLaunchTooLarge`). Nothing is published unless every part
/// passes. Parts may differ in grid, block and dynamic LDS (AMD's runtime allows it, unlike
/// CUDA): each grid's multi-grid ranks start after the work-items of the parts before it.
///
/// Order, on the devices (barrier-AND packets; the host never waits): each grid runs after its
/// own stream's earlier work and, unless `NO_PRE_SYNC`, after every participating stream's;
/// each stream's later work waits for its own grid and, unless `NO_POST_SYNC`, for all of them.
///
/// # Safety
/// Each part's `args` holds one valid pointer per explicit argument of its kernel.
pub unsafe fn launch_multi_device(
    devices: &[Device],
    devices_run_one_at_a_time: bool,
    api: &str,
    parts: &[GridPart],
    flags: u32,
) -> HipResult {
    if flags & !MULTI_DEVICE_FLAGS != 0 {
        tracing::warn!(flags, "{api}: unknown flags");
        return Err(HipError::INVALID_VALUE);
    }
    let all_devices = devices;
    let mut devices: Vec<&Device> = Vec::with_capacity(parts.len());
    for (rank, part) in parts.iter().enumerate() {
        if part.stream.is_null() || part.stream as usize == stream::LEGACY_HANDLE {
            tracing::warn!(
                part = rank,
                "{api}: the null stream names no device; each part needs a stream of its device"
            );
            return Err(HipError::INVALID_HANDLE);
        }
        let (device, stream) = stream::lookup(all_devices, part.stream)?;
        // A capturing stream refuses the launch in every ABI (`Stream::begin`); ROCm 7 also
        // invalidates the capture.
        if compat::abi() >= compat::Abi::Rocm7 {
            crate::runtime::graph::capture::refuse_if_capturing(&stream, api)?;
        }
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
                    LaunchRequest {
                        grid: GridSize::Blocks(part.grid),
                        block: part.block,
                        shared_mem: part.shared_mem,
                        args: Args::Pointers(part.args),
                        stream: part.stream,
                    },
                    true,
                )
            }
        })
        .collect::<HipResult<Vec<_>>>()?;
    if parts.len() > 1 && devices_run_one_at_a_time {
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
    let block = free_block(&mut blocks, devices[0], all_devices.len())?;
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
        let address =
            base as u64 + (INFO_OFFSET + rank * std::mem::size_of::<MultiGridInfo>()) as u64;
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
fn free_block(
    blocks: &mut Vec<SyncBlock>,
    device: &Device,
    devices: usize,
) -> HipResult<PoolBuffer> {
    if let Some(at) = blocks.iter().position(|b| !b.in_use()) {
        return Ok(blocks.swap_remove(at).buffer);
    }
    let size = INFO_OFFSET + devices * std::mem::size_of::<MultiGridInfo>();
    device.host_pool.allocate(size, &device.all_gpus).map_err(|e| {
        tracing::warn!(size, status = %device.api.describe(e.status), "multi-device cooperative launch: no memory for the multi-grid sync block");
        HipError::OUT_OF_MEMORY
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_multi_grid_block_has_the_device_librarys_layout() {
        // `__ockl_multi_grid_*` in ockl.bc: { ptr addrspace(1), i32, i32, i64, i64 }, read as
        // the sync word, grid rank, grid count, work-items before this grid and of all grids.
        use std::mem::offset_of;
        assert_eq!(offset_of!(MultiGridInfo, sync_word), 0);
        assert_eq!(offset_of!(MultiGridInfo, grid_rank), 8);
        assert_eq!(offset_of!(MultiGridInfo, num_grids), 12);
        assert_eq!(offset_of!(MultiGridInfo, threads_before), 16);
        assert_eq!(offset_of!(MultiGridInfo, threads_total), 24);
        assert_eq!(std::mem::size_of::<LaunchParams>(), 56);
        assert_eq!(offset_of!(LaunchParams, args), 32);
        assert_eq!(offset_of!(LaunchParams, stream), 48);
        assert_eq!(offset_of!(FunctionLaunchParams, shared_mem), 32);
        assert_eq!(offset_of!(FunctionLaunchParams, stream), 40);
        assert_eq!(offset_of!(FunctionLaunchParams, kernel_params), 48);
    }
}

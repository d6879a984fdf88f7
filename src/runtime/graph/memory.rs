//! Graph memory: the allocations of memory alloc nodes (`hipGraphAddMemAllocNode`, or
//! `hipMallocAsync` captured), with CUDA's semantics, which HIP follows.
//!
//! - An alloc node's address is fixed when the node is made (the program learns it at once
//!   and may bake it into later nodes) and stays the same for every launch. The memory behind
//!   it is taken then too, from the device's *graph memory*: blocks this module keeps per
//!   device, reused by later alloc nodes and given back to the HSA runtime only by
//!   `hipDeviceGraphMemTrim` (as CUDA keeps graph memory reserved until trimmed).
//! - A launch *allocates* it (from then on the program may use it, in stream order) and a free
//!   node, or the program's `hipFree` / `hipFreeAsync` after the launch, *frees* it. A graph
//!   whose allocation is still allocated cannot be launched again (`hipErrorInvalidValue`)
//!   unless it was instantiated with `hipGraphInstantiateFlagAutoFreeOnLaunch`.
//! - The block stays the node's while any graph, clone or executable graph holds the node
//!   (they share one [`GraphAlloc`]), or while the allocation is allocated: the last of those
//!   returns it to the device's graph memory.
//!
//! Allocation state changes when a launch is submitted, not when the stream reaches the node:
//! the memory is there all along, so only the bookkeeping moves.

use crate::error::{HipError, HipResult};
use crate::hsa::memory::PoolBuffer;
use crate::runtime::devices::device::{self, Device};
use crate::runtime::mem::memory;
use crate::runtime::mem::mempool::{MemAccessDesc, MemPoolProps, GRANULE};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::LazyLock;
use std::sync::{Arc, Weak};

/// `hipMemAllocNodeParams` (ROCm 5.5 and later).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct MemAllocNodeParams {
    pub pool_props: MemPoolProps,
    pub access_descs: *const MemAccessDesc,
    pub access_desc_count: usize,
    pub bytesize: usize,
    pub dptr: *mut c_void,
}

const _: () = {
    assert!(std::mem::size_of::<MemAllocNodeParams>() == 120);
    assert!(std::mem::offset_of!(MemAllocNodeParams, access_descs) == 88);
    assert!(std::mem::offset_of!(MemAllocNodeParams, bytesize) == 104);
    assert!(std::mem::offset_of!(MemAllocNodeParams, dptr) == 112);
};

/// `hipGraphMemAttributeType`.
pub mod attr {
    pub const USED_MEM_CURRENT: u32 = 0;
    pub const USED_MEM_HIGH: u32 = 1;
    pub const RESERVED_MEM_CURRENT: u32 = 2;
    pub const RESERVED_MEM_HIGH: u32 = 3;
}

/// One alloc node's allocation, shared by the node's copies (clones, executable graphs).
pub struct GraphAlloc {
    pub start: usize,
    pub size: usize,
    pub device: usize,
    /// The parameters as given (for `hipGraphMemAllocNodeGetParams`), with their own copy of
    /// the access descriptors.
    props: MemPoolProps,
    access: Box<[MemAccessDesc]>,
    buffer: Mutex<Option<PoolBuffer>>,
}

// SAFETY: the one raw pointer, `props.win32_security_attributes`, is only handed back to the
// program, never dereferenced.
unsafe impl Send for GraphAlloc {}
// SAFETY: as above.
unsafe impl Sync for GraphAlloc {}

impl GraphAlloc {
    /// The parameters as `hipGraphMemAllocNodeGetParams` returns them.
    pub fn to_abi(&self) -> MemAllocNodeParams {
        MemAllocNodeParams {
            pool_props: self.props,
            access_descs: if self.access.is_empty() {
                std::ptr::null()
            } else {
                self.access.as_ptr()
            },
            access_desc_count: self.access.len(),
            bytesize: self.size,
            dptr: self.start as *mut c_void,
        }
    }
}

impl Drop for GraphAlloc {
    fn drop(&mut self) {
        if let Some(buffer) = self.buffer.get_mut().take() {
            memory::remove_pooled(self.start);
            let mut st = STATE.lock();
            st.live.remove(&self.start);
            let dev = st.device(self.device);
            dev.used -= buffer.len() as u64;
            dev.cached.push(buffer);
        }
    }
}

#[derive(Default)]
struct DeviceMemory {
    /// Blocks no alloc node holds, for later ones.
    cached: Vec<PoolBuffer>,
    /// Bytes of blocks that alloc nodes hold, and of all blocks (held or cached).
    used: u64,
    used_high: u64,
    reserved: u64,
    reserved_high: u64,
}

#[derive(Default)]
struct State {
    devices: HashMap<usize, DeviceMemory>,
    /// Every alloc node's allocation, by address (what a free node or `hipFree` names).
    live: HashMap<usize, Weak<GraphAlloc>>,
    /// Allocations a launch allocated and nothing freed yet, by address: kept here so that
    /// the memory outlives its graphs until the program frees it.
    allocated: HashMap<usize, Arc<GraphAlloc>>,
}

impl State {
    fn device(&mut self, device: usize) -> &mut DeviceMemory {
        self.devices.entry(device).or_default()
    }
}

static STATE: LazyLock<Mutex<State>> = LazyLock::new(Mutex::default);

const LOCATION_DEVICE: u32 = 1;
const ALLOCATION_PINNED: u32 = 1;

/// `hipGraphAddMemAllocNode` (and a captured `hipMallocAsync`): checks `params` and takes the
/// memory of one of `devices`, from the device's graph memory or the HSA runtime.
///
/// # Safety
/// `params.access_descs` holds `params.access_desc_count` descriptors when not null.
pub unsafe fn allocate(
    devices: &[Device],
    params: &MemAllocNodeParams,
) -> HipResult<Arc<GraphAlloc>> {
    let props = &params.pool_props;
    if props.alloc_type != ALLOCATION_PINNED || props.location.type_ != LOCATION_DEVICE {
        tracing::warn!(
            alloc_type = props.alloc_type,
            location_type = props.location.type_,
            "memory alloc node: only pinned device memory"
        );
        return Err(HipError::INVALID_VALUE);
    }
    let device = usize::try_from(props.location.id)
        .ok()
        .filter(|&d| d < devices.len())
        .ok_or_else(|| {
            tracing::warn!(
                device = props.location.id,
                "memory alloc node: no such device"
            );
            HipError::INVALID_VALUE
        })?;
    if params.bytesize == 0 {
        tracing::warn!("memory alloc node of 0 bytes");
        return Err(HipError::INVALID_VALUE);
    }
    let access: Box<[MemAccessDesc]> = if params.access_desc_count == 0 {
        Box::new([])
    } else if params.access_descs.is_null() || params.access_desc_count > devices.len() {
        tracing::warn!(
            count = params.access_desc_count,
            "memory alloc node: bad access descriptor list"
        );
        return Err(HipError::INVALID_VALUE);
    } else {
        // SAFETY: the caller's contract.
        unsafe { std::slice::from_raw_parts(params.access_descs, params.access_desc_count) }.into()
    };
    let owner = device::nth(devices, device)?;
    let rounded = params
        .bytesize
        .checked_next_multiple_of(GRANULE)
        .filter(|&r| r <= owner.device_pool.size)
        .ok_or(HipError::OUT_OF_MEMORY)?;
    let cached = {
        let mut st = STATE.lock();
        let dev = st.device(device);
        let best = dev
            .cached
            .iter()
            .enumerate()
            .filter(|(_, b)| b.len() >= rounded && b.len() <= rounded.saturating_mul(2))
            .min_by_key(|(_, b)| b.len())
            .map(|(i, _)| i);
        best.map(|i| dev.cached.swap_remove(i))
    };
    let buffer = match cached {
        Some(buffer) => buffer,
        None => {
            let buffer = owner.device_pool.allocate(rounded, &[]).map_err(|e| {
                tracing::warn!(size = rounded, status = %owner.api.describe(e.status), "graph memory: device allocation failed");
                HipError::OUT_OF_MEMORY
            })?;
            let mut st = STATE.lock();
            let dev = st.device(device);
            dev.reserved += buffer.len() as u64;
            dev.reserved_high = dev.reserved_high.max(dev.reserved);
            buffer
        }
    };
    let start = buffer.as_ptr() as usize;
    let len = buffer.len() as u64;
    memory::insert_pooled(start, params.bytesize, device);
    let alloc = Arc::new(GraphAlloc {
        start,
        size: params.bytesize,
        device,
        props: *props,
        access,
        buffer: Mutex::new(Some(buffer)),
    });
    let mut st = STATE.lock();
    st.live.insert(start, Arc::downgrade(&alloc));
    let dev = st.device(device);
    dev.used += len;
    dev.used_high = dev.used_high.max(dev.used);
    tracing::debug!(
        ptr = format_args!("{start:#x}"),
        size = params.bytesize,
        "graph memory allocation"
    );
    Ok(alloc)
}

/// The allocation of an alloc node at `ptr` (what a free node names).
pub fn find(ptr: *mut c_void) -> HipResult<Arc<GraphAlloc>> {
    STATE
        .lock()
        .live
        .get(&(ptr as usize))
        .and_then(Weak::upgrade)
        .ok_or_else(|| {
            tracing::warn!(
                ptr = format_args!("{ptr:p}"),
                "memory free node: not the address of a graph allocation"
            );
            HipError::INVALID_VALUE
        })
}

/// A launch reached `alloc`'s node: allocated until freed. Fails if it already is (the graph
/// was launched again before the allocation was freed).
pub fn launch_allocate(alloc: &Arc<GraphAlloc>, auto_free: bool) -> HipResult {
    let mut st = STATE.lock();
    if st.allocated.contains_key(&alloc.start) && !auto_free {
        tracing::warn!(
            ptr = format_args!("{:#x}", alloc.start),
            "hipGraphLaunch: the graph's allocation from an earlier launch is not freed yet (free it, or instantiate with hipGraphInstantiateFlagAutoFreeOnLaunch)"
        );
        return Err(HipError::INVALID_VALUE);
    }
    st.allocated.insert(alloc.start, alloc.clone());
    Ok(())
}

/// Whether a launch may allocate `alloc` now (see [`launch_allocate`]), checked for every
/// alloc node before a launch submits anything.
pub fn may_allocate(alloc: &GraphAlloc, auto_free: bool) -> bool {
    auto_free || !STATE.lock().allocated.contains_key(&alloc.start)
}

/// A free node ran: the allocation is free again. Freeing what is not allocated is a no-op
/// here (the free node's graph was checked when it was added).
pub fn launch_free(alloc: &GraphAlloc) {
    let released = STATE.lock().allocated.remove(&alloc.start);
    // Dropped outside the lock: the last reference returns the block.
    drop(released);
}

/// `hipFree` / `hipFreeAsync` of graph memory: `None` if `ptr` is not a graph allocation,
/// else whether it was allocated (freeing one that is not is an invalid value).
pub fn program_free(ptr: *mut c_void) -> Option<HipResult> {
    let mut st = STATE.lock();
    if !st.live.contains_key(&(ptr as usize)) {
        return None;
    }
    let released = st.allocated.remove(&(ptr as usize));
    drop(st);
    Some(match released {
        Some(alloc) => {
            drop(alloc);
            Ok(())
        }
        None => {
            tracing::warn!(
                ptr = format_args!("{ptr:p}"),
                "hipFree of graph memory that no launch has allocated (or freed twice)"
            );
            Err(HipError::INVALID_VALUE)
        }
    })
}

/// The ordinal of one of `devices`.
fn device_ordinal(devices: &[Device], device: i32) -> HipResult<usize> {
    usize::try_from(device)
        .ok()
        .filter(|&d| d < devices.len())
        .ok_or(HipError::INVALID_DEVICE)
}

/// `hipDeviceGraphMemTrim`: gives the device's cached graph memory back to the HSA runtime,
/// after the device's work (a launch still running may use a block an alloc node had).
pub fn trim(devices: &[Device], device: i32) -> HipResult {
    let device = device_ordinal(devices, device)?;
    device::nth(devices, device)?.synchronize()?;
    let doomed = {
        let mut st = STATE.lock();
        let dev = st.device(device);
        let doomed = std::mem::take(&mut dev.cached);
        dev.reserved -= doomed.iter().map(|b| b.len() as u64).sum::<u64>();
        doomed
    };
    for buffer in doomed {
        if let Err(error) = buffer.free() {
            tracing::warn!(%error, "releasing graph memory failed");
        }
    }
    Ok(())
}

/// `hipDeviceGetGraphMemAttribute`: every attribute is a `uint64_t`.
///
/// # Safety
/// `value` is null or points to a `uint64_t`.
pub unsafe fn get_attribute(
    devices: &[Device],
    device: i32,
    which: u32,
    value: *mut c_void,
) -> HipResult {
    let device = device_ordinal(devices, device)?;
    if value.is_null() {
        return Err(HipError::INVALID_VALUE);
    }
    let mut st = STATE.lock();
    let dev = st.device(device);
    let v = match which {
        attr::USED_MEM_CURRENT => dev.used,
        attr::USED_MEM_HIGH => dev.used_high,
        attr::RESERVED_MEM_CURRENT => dev.reserved,
        attr::RESERVED_MEM_HIGH => dev.reserved_high,
        _ => {
            tracing::warn!(which, "hipDeviceGetGraphMemAttribute: unknown attribute");
            return Err(HipError::INVALID_VALUE);
        }
    };
    // SAFETY: the caller's contract.
    unsafe { (value as *mut u64).write_unaligned(v) };
    Ok(())
}

/// `hipDeviceSetGraphMemAttribute`: only the high watermarks, and only reset to 0 (CUDA's
/// rule), which sets them to the current value.
///
/// # Safety
/// `value` is null or points to a `uint64_t`.
pub unsafe fn set_attribute(
    devices: &[Device],
    device: i32,
    which: u32,
    value: *mut c_void,
) -> HipResult {
    let device = device_ordinal(devices, device)?;
    if value.is_null() {
        return Err(HipError::INVALID_VALUE);
    }
    // SAFETY: the caller's contract.
    let v = unsafe { (value as *const u64).read_unaligned() };
    if v != 0 {
        tracing::warn!(
            which,
            v,
            "hipDeviceSetGraphMemAttribute: a high watermark can only be reset to 0"
        );
        return Err(HipError::INVALID_VALUE);
    }
    let mut st = STATE.lock();
    let dev = st.device(device);
    match which {
        attr::USED_MEM_HIGH => dev.used_high = dev.used,
        attr::RESERVED_MEM_HIGH => dev.reserved_high = dev.reserved,
        _ => {
            tracing::warn!(
                which,
                "hipDeviceSetGraphMemAttribute: not a settable attribute"
            );
            return Err(HipError::INVALID_VALUE);
        }
    }
    Ok(())
}

/// An alloc node of `size` bytes of the memory of `device` (an ordinal of `devices`), as a
/// captured `hipMallocAsync` makes.
pub fn allocate_on(devices: &[Device], device: usize, size: usize) -> HipResult<Arc<GraphAlloc>> {
    let params = MemAllocNodeParams {
        pool_props: MemPoolProps {
            alloc_type: ALLOCATION_PINNED,
            handle_types: 0,
            location: crate::runtime::mem::mempool::MemLocation {
                type_: LOCATION_DEVICE,
                id: device as i32,
            },
            win32_security_attributes: std::ptr::null_mut(),
            reserved: [0; 64],
        },
        access_descs: std::ptr::null(),
        access_desc_count: 0,
        bytesize: size,
        dptr: std::ptr::null_mut(),
    };
    // SAFETY: no access descriptors.
    unsafe { allocate(devices, &params) }
}

//! The stream-ordered allocator: `hipMallocAsync`, `hipFreeAsync`, `hipMallocFromPoolAsync`
//! and the memory pools they draw on (`hipMemPool_t`), with CUDA's semantics, which HIP follows.
//!
//! ## Pools and blocks
//! Every device has a default pool (`hipDeviceGetDefaultMemPool`), made at first use, and a
//! current pool (`hipDeviceGetMemPool`/`hipDeviceSetMemPool`) that `hipMallocAsync` draws on;
//! `hipMemPoolCreate` makes more. A pool keeps *blocks*: each is one allocation from the device's
//! HSA memory pool, its size the request rounded up to [`GRANULE`]. Blocks are not split: a
//! request is served by a free block of at least its size and at most twice it, else by a new
//! block. *Reserved* is what the pool's blocks hold, *used* what of it is handed out.
//!
//! ## When a freed block may be reused
//! `hipFreeAsync(p, s)` returns the block at once, stamped with a marker of "stream `s` so far"
//! (`Stream::record`): the device may still use it until that marker completes. A later
//! `hipMallocAsync` on stream `t` may take the block
//! - if `t` is `s`: its later work runs after the free (stream order), so at once;
//! - if the free is known complete: after a synchronisation that covered it (stream, event or
//!   device synchronise, `hipFree`), always; before, if the free has completed by then and the
//!   pool allows opportunistic reuse (`hipMemPoolReuseAllowOpportunistic`);
//! - if `t` already waits for the free through events (`hipMemPoolReuseFollowEventDependencies`):
//!   `t` waited (`hipStreamWaitEvent`) for a marker at or after the free's on the same queue,
//!   whose barrier bit orders it after the free. Dependencies through other queues or legacy
//!   null-stream ordering are not followed (the block is then just not reused);
//! - otherwise, with `hipMemPoolReuseAllowInternalDependencies`, only when the device has no
//!   memory for a new block: then `t` waits for the free's marker on the device (a barrier-AND)
//!   and takes the block. Fresh memory is preferred to an added wait between streams.
//!
//! ## Giving memory back
//! At a synchronisation point (`hipStreamSynchronize`, `hipEventSynchronize`,
//! `hipDeviceSynchronize`, `hipFree` of pool memory) each pool releases completed free blocks
//! to the HSA runtime until it reserves no more than its release threshold (default 0: all of
//! them, as in CUDA); `hipMemPoolTrimTo` does the same down to the bytes it is given.
//!
//! ## Locking
//! A pool's `state` lock may be held while taking a stream's locks (to record a wait); no
//! stream path takes a pool lock. HSA frees happen after the lock is dropped.

use crate::error::{HipError, HipResult};
use crate::hsa::memory::PoolBuffer;
use crate::hsa::queue::Marker;
use crate::runtime::base::compat;
use crate::runtime::base::handles::HandleTable;
use crate::runtime::devices::device::{self, Device};
use crate::runtime::mem::ipc;
use crate::runtime::mem::memory;
use crate::runtime::ordering::{Dep, Stream, StreamKind};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::c_void;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::sync::LazyLock;

/// Block sizes are multiples of this (the HSA runtimes' allocation granule on gfx9).
pub const GRANULE: usize = 4096;

/// `hipMemPoolAttr`.
pub mod attr {
    pub const REUSE_FOLLOW_EVENT_DEPENDENCIES: u32 = 1;
    pub const REUSE_ALLOW_OPPORTUNISTIC: u32 = 2;
    pub const REUSE_ALLOW_INTERNAL_DEPENDENCIES: u32 = 3;
    pub const RELEASE_THRESHOLD: u32 = 4;
    pub const RESERVED_MEM_CURRENT: u32 = 5;
    pub const RESERVED_MEM_HIGH: u32 = 6;
    pub const USED_MEM_CURRENT: u32 = 7;
    pub const USED_MEM_HIGH: u32 = 8;
}

/// `hipMemAccessFlags`.
pub mod access {
    pub const NONE: u32 = 0;
    pub const READ: u32 = 1;
    pub const READ_WRITE: u32 = 3;
}

/// `hipMemLocationTypeDevice`.
const LOCATION_DEVICE: u32 = 1;
/// `hipMemAllocationTypePinned`.
const ALLOCATION_PINNED: u32 = 1;
/// `hipMemHandleTypeNone`, `hipMemHandleTypePosixFileDescriptor`.
const HANDLE_TYPES_LINUX: u32 = 0x1;

/// `hipMemLocation`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemLocation {
    pub type_: u32,
    pub id: i32,
}

/// `hipMemAccessDesc`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemAccessDesc {
    pub location: MemLocation,
    pub flags: u32,
}

/// `hipMemPoolProps` (ROCm 5 and 6 agree on the fields read here; ROCm 6 carves `maxSize` out
/// of the reserved bytes, which hipshim does not read).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct MemPoolProps {
    pub alloc_type: u32,
    pub handle_types: u32,
    pub location: MemLocation,
    pub win32_security_attributes: *mut c_void,
    pub reserved: [u8; 64],
}

const _: () = {
    assert!(std::mem::size_of::<MemAccessDesc>() == 12);
    assert!(std::mem::size_of::<MemPoolProps>() == 88);
    assert!(std::mem::offset_of!(MemPoolProps, location) == 8);
    assert!(std::mem::offset_of!(MemPoolProps, reserved) == 24);
};

/// One memory pool (a `hipMemPool_t`).
pub struct MemPool {
    /// Its `hipMemPool_t`.
    pub handle: usize,
    /// The device whose memory it holds.
    pub device: usize,
    is_default: bool,
    /// `hipMemPoolProps.handleTypes`: what it may be exported as.
    handle_types: u32,
    /// Made by `hipMemPoolImportFromShareableHandle`: it only takes imported pointers.
    imported: bool,
    /// The descriptor of its shared description, once exported.
    shared: Mutex<Option<OwnedFd>>,
    state: Mutex<PoolState>,
}

/// How a pool was used, for the stats line at exit and the log.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolCounts {
    /// Allocations handed out.
    pub allocations: u64,
    /// Of them, served by a block freed earlier.
    pub reused: u64,
    /// Of those, reused after an inserted wait (internal dependency).
    pub waited: u64,
    /// Blocks given back to the HSA runtime.
    pub released: u64,
    pub reserved_high: u64,
    pub used_high: u64,
}

struct PoolState {
    follow_event_dependencies: bool,
    opportunistic: bool,
    internal_dependencies: bool,
    release_threshold: u64,
    /// Blocks handed out, by start address.
    in_use: HashMap<usize, PoolBuffer>,
    free: Vec<FreeBlock>,
    reserved: u64,
    reserved_high: u64,
    used: u64,
    used_high: u64,
    /// Access of each device (by ordinal) other than the owner, which always reads and writes.
    access: Vec<u32>,
    /// `hipMemPoolDestroy` was called: the handle is gone, and the pool goes once it is empty.
    destroyed: bool,
    counts: PoolCounts,
}

struct FreeBlock {
    buffer: PoolBuffer,
    /// The free not yet known complete; `None` once it is.
    pending: Option<PendingFree>,
}

struct PendingFree {
    /// `Stream::serial` of the stream it was freed on.
    stream: u64,
    /// That stream's device.
    device: usize,
    /// That stream is the null stream or a blocking one: what `hipStreamSynchronize(0)` waits
    /// for (a non-blocking stream's free is not covered by it).
    legacy: bool,
    /// "That stream so far", recorded by the free.
    marker: Marker,
    /// Its number in [`FREES_ISSUED`]: a synchronisation covers only frees issued before it
    /// began (another thread may free while it waits).
    seq: u64,
}

impl PendingFree {
    fn complete(&self) -> bool {
        self.marker.signal.is_zero()
    }
}

/// How a free block can serve an allocation on a stream.
enum Fit {
    Now,
    /// After the allocating stream waits for this marker.
    AfterWait(Marker),
}

impl PoolState {
    fn new(devices: usize) -> PoolState {
        PoolState {
            follow_event_dependencies: true,
            opportunistic: true,
            internal_dependencies: true,
            release_threshold: 0,
            in_use: HashMap::new(),
            free: Vec::new(),
            reserved: 0,
            reserved_high: 0,
            used: 0,
            used_high: 0,
            access: vec![access::NONE; devices],
            destroyed: false,
            counts: PoolCounts::default(),
        }
    }

    fn fit(&self, block: &FreeBlock, stream: &Stream) -> Option<Fit> {
        let Some(pending) = &block.pending else {
            return Some(Fit::Now);
        };
        if pending.stream == stream.serial
            || (self.opportunistic && pending.complete())
            || (self.follow_event_dependencies && stream.has_waited_for(&pending.marker))
        {
            return Some(Fit::Now);
        }
        self.internal_dependencies
            .then(|| Fit::AfterWait(pending.marker.clone()))
    }

    /// The smallest free block of `size` to `2 * size` bytes that `stream` may take now (or,
    /// with `after_wait`, after a wait), and how.
    fn best_fit(&self, size: usize, stream: &Stream, after_wait: bool) -> Option<(usize, Fit)> {
        self.free
            .iter()
            .enumerate()
            .filter(|(_, b)| b.buffer.len() >= size && b.buffer.len() <= size.saturating_mul(2))
            .filter_map(|(i, b)| match self.fit(b, stream)? {
                Fit::Now if !after_wait => Some((i, Fit::Now, b.buffer.len())),
                Fit::AfterWait(m) if after_wait => Some((i, Fit::AfterWait(m), b.buffer.len())),
                _ => None,
            })
            .min_by_key(|(_, _, len)| *len)
            .map(|(i, fit, _)| (i, fit))
    }

    fn take_free(&mut self, index: usize) -> PoolBuffer {
        FREE_BLOCKS.fetch_sub(1, Ordering::Relaxed);
        self.free.swap_remove(index).buffer
    }

    fn hand_out(&mut self, buffer: PoolBuffer) -> usize {
        let start = buffer.as_ptr() as usize;
        self.used += buffer.len() as u64;
        self.used_high = self.used_high.max(self.used);
        self.counts.allocations += 1;
        self.in_use.insert(start, buffer);
        start
    }

    fn reserve(&mut self, bytes: usize) {
        self.reserved += bytes as u64;
        self.reserved_high = self.reserved_high.max(self.reserved);
    }

    fn put_back(&mut self, start: usize, pending: Option<PendingFree>) -> Option<()> {
        let buffer = self.in_use.remove(&start)?;
        self.used -= buffer.len() as u64;
        self.free.push(FreeBlock { buffer, pending });
        FREE_BLOCKS.fetch_add(1, Ordering::Relaxed);
        Some(())
    }

    /// Takes completed free blocks out, largest first, until the pool reserves at most `keep`
    /// bytes; the caller frees them after dropping the lock.
    fn release_down_to(&mut self, keep: u64) -> Vec<PoolBuffer> {
        let mut doomed = Vec::new();
        while self.reserved > keep {
            let largest = self
                .free
                .iter()
                .enumerate()
                .filter(|(_, b)| b.pending.as_ref().is_none_or(PendingFree::complete))
                .max_by_key(|(_, b)| b.buffer.len())
                .map(|(i, _)| i);
            let Some(index) = largest else { break };
            let buffer = self.take_free(index);
            self.reserved -= buffer.len() as u64;
            self.counts.released += 1;
            doomed.push(buffer);
        }
        doomed
    }
}

/// Frees released blocks (outside any pool lock).
fn release(doomed: Vec<PoolBuffer>) {
    for buffer in doomed {
        if let Err(error) = buffer.free() {
            tracing::warn!(%error, "releasing a memory pool block failed");
        }
    }
}

static POOLS: HandleTable<MemPool> = HandleTable::new("memory pool", 0x60);

/// Every pool not yet gone (destroyed ones that still hold blocks included): what the
/// synchronisation hook looks at.
static ALL: Mutex<Vec<Arc<MemPool>>> = Mutex::new(Vec::new());

/// Which pool a handed-out block belongs to, by start address.
static OWNERS: LazyLock<Mutex<HashMap<usize, Arc<MemPool>>>> = LazyLock::new(Mutex::default);

/// Free blocks in all pools: 0 lets a synchronisation skip the pools at the cost of one load.
static FREE_BLOCKS: AtomicUsize = AtomicUsize::new(0);

/// Stream-ordered frees issued so far (each numbered after its marker is recorded).
static FREES_ISSUED: AtomicU64 = AtomicU64::new(0);

/// Read before a synchronisation begins and handed to [`after_sync`]: the frees it may
/// cover. A free another thread issues while the synchronisation waits is not waited for.
#[inline(always)]
pub fn frees_issued() -> u64 {
    FREES_ISSUED.load(Ordering::SeqCst)
}

/// Each device's default and current pool, made at first use.
struct DevicePools {
    default: Arc<MemPool>,
    current: Arc<MemPool>,
}

static DEVICE_POOLS: LazyLock<Mutex<HashMap<usize, DevicePools>>> = LazyLock::new(Mutex::default);

/// A pool of `device`'s memory, with an access entry for each of `devices` devices.
fn make_pool(devices: usize, device: usize, is_default: bool) -> HipResult<Arc<MemPool>> {
    make_pool_of(devices, device, is_default, 0, false)
}

fn make_pool_of(
    devices: usize,
    device: usize,
    is_default: bool,
    handle_types: u32,
    imported: bool,
) -> HipResult<Arc<MemPool>> {
    let mut made = None;
    POOLS.insert_with(|handle| {
        let pool = Arc::new(MemPool {
            handle,
            device,
            is_default,
            handle_types,
            imported,
            shared: Mutex::new(None),
            state: Mutex::new(PoolState::new(devices)),
        });
        made = Some(pool.clone());
        Ok(pool)
    })?;
    let pool = made.ok_or(HipError::UNKNOWN)?;
    ALL.lock().push(pool.clone());
    Ok(pool)
}

fn with_device_pools<T>(
    devices: &[Device],
    device: usize,
    f: impl FnOnce(&mut DevicePools) -> T,
) -> HipResult<T> {
    device::nth(devices, device)?;
    let mut table = DEVICE_POOLS.lock();
    let pools = match table.entry(device) {
        std::collections::hash_map::Entry::Occupied(entry) => entry.into_mut(),
        std::collections::hash_map::Entry::Vacant(entry) => {
            let default = make_pool(devices.len(), device, true)?;
            entry.insert(DevicePools {
                current: default.clone(),
                default,
            })
        }
    };
    Ok(f(pools))
}

/// The ordinal of one of `devices`.
fn device_ordinal(devices: &[Device], device: i32) -> HipResult<usize> {
    usize::try_from(device)
        .ok()
        .filter(|&d| d < devices.len())
        .ok_or_else(|| {
            // AMD's runtime answers the pool calls' bad ordinals with an invalid value (as
            // CUDA documents), not hipErrorInvalidDevice.
            tracing::warn!(device, "memory pool call for a device that does not exist");
            HipError::INVALID_VALUE
        })
}

/// The live pool a `hipMemPool_t` names.
pub fn lookup(handle: *mut c_void) -> HipResult<Arc<MemPool>> {
    POOLS.get(handle as usize)
}

/// `hipDeviceGetDefaultMemPool`.
pub fn default_pool(devices: &[Device], device: i32) -> HipResult<*mut c_void> {
    let device = device_ordinal(devices, device)?;
    with_device_pools(devices, device, |p| p.default.handle as *mut c_void)
}

/// `hipDeviceGetMemPool`.
pub fn current_pool(devices: &[Device], device: i32) -> HipResult<*mut c_void> {
    let device = device_ordinal(devices, device)?;
    with_device_pools(devices, device, |p| p.current.handle as *mut c_void)
}

/// `hipDeviceSetMemPool`: the pool must hold memory of `device`.
pub fn set_current_pool(devices: &[Device], device: i32, pool: Arc<MemPool>) -> HipResult {
    let device = device_ordinal(devices, device)?;
    if pool.imported {
        tracing::warn!("hipDeviceSetMemPool of an imported pool (it cannot allocate)");
        return Err(HipError::INVALID_VALUE);
    }
    if pool.device != device {
        tracing::warn!(
            device,
            pool_device = pool.device,
            "hipDeviceSetMemPool: the pool holds memory of another device"
        );
        return Err(HipError::INVALID_VALUE);
    }
    with_device_pools(devices, device, |p| p.current = pool)
}

/// `hipMemPoolCreate`: pinned device memory of one device; of the export handle types only
/// none and POSIX file descriptors are accepted (see "Sharing pools between processes").
pub fn create(devices: &[Device], props: &MemPoolProps) -> HipResult<*mut c_void> {
    if props.alloc_type != ALLOCATION_PINNED
        || props.location.type_ != LOCATION_DEVICE
        || props.handle_types & !HANDLE_TYPES_LINUX != 0
    {
        tracing::warn!(
            alloc_type = props.alloc_type,
            location_type = props.location.type_,
            handle_types = props.handle_types,
            "hipMemPoolCreate: only pinned device memory with no or POSIX-fd handle types"
        );
        return Err(HipError::INVALID_VALUE);
    }
    let device = device_ordinal(devices, props.location.id)?;
    let pool = make_pool_of(devices.len(), device, false, props.handle_types, false)?;
    tracing::debug!(
        pool = format_args!("{:#x}", pool.handle),
        device,
        "memory pool created"
    );
    Ok(pool.handle as *mut c_void)
}

/// `hipMemPoolDestroy`: a default pool cannot be destroyed. A pool current for its device
/// leaves the default current. Blocks still handed out stay valid until freed; the pool's
/// memory goes back as its frees complete.
pub fn destroy(handle: *mut c_void) -> HipResult {
    let pool = lookup(handle)?;
    if pool.is_default {
        tracing::warn!("hipMemPoolDestroy of a device's default pool");
        return Err(HipError::INVALID_VALUE);
    }
    POOLS.remove(handle as usize)?;
    {
        let mut table = DEVICE_POOLS.lock();
        if let Some(p) = table.get_mut(&pool.device) {
            if Arc::ptr_eq(&p.current, &pool) {
                p.current = p.default.clone();
            }
        }
    }
    let doomed = {
        let mut st = pool.state.lock();
        st.destroyed = true;
        st.release_down_to(0)
    };
    release(doomed);
    forget_if_gone(&pool);
    Ok(())
}

/// Drops a destroyed pool that holds nothing from the list the hooks look at.
fn forget_if_gone(pool: &Arc<MemPool>) {
    let gone = {
        let st = pool.state.lock();
        st.destroyed && st.in_use.is_empty() && st.free.is_empty()
    };
    if gone {
        ALL.lock().retain(|p| !Arc::ptr_eq(p, pool));
    }
}

/// `hipMallocAsync`: from the current pool of the stream's device (one of `devices`).
pub fn malloc_async(
    devices: &[Device],
    size: usize,
    device: &Device,
    stream: &Stream,
) -> HipResult<*mut c_void> {
    let pool = with_device_pools(devices, device.index, |p| p.current.clone())?;
    allocate(devices, &pool, size, device, stream)
}

/// `hipMallocFromPoolAsync`.
pub fn malloc_from_pool_async(
    devices: &[Device],
    size: usize,
    pool: &Arc<MemPool>,
    device: &Device,
    stream: &Stream,
) -> HipResult<*mut c_void> {
    if pool.imported {
        // CUDA's rule: an imported pool only holds what other processes exported.
        tracing::warn!(
            pool = format_args!("{:#x}", pool.handle),
            "hipMallocFromPoolAsync from an imported pool (it takes imported pointers only)"
        );
        return Err(HipError::INVALID_VALUE);
    }
    allocate(devices, pool, size, device, stream)
}

/// A block of `size` bytes from `pool` for use on `stream` (of `device`), see "When a freed
/// block may be reused". A zero size is an invalid value, as in AMD's runtime (unlike
/// `hipMalloc`).
fn allocate(
    devices: &[Device],
    pool: &Arc<MemPool>,
    size: usize,
    device: &Device,
    stream: &Stream,
) -> HipResult<*mut c_void> {
    if size == 0 {
        tracing::warn!("hipMallocAsync of 0 bytes");
        return Err(HipError::INVALID_VALUE);
    }
    let owner = device::nth(devices, pool.device)?;
    let rounded = size
        .checked_next_multiple_of(GRANULE)
        .filter(|&r| r <= owner.device_pool.size)
        .ok_or_else(|| {
            tracing::warn!(size, "hipMallocAsync: larger than the device's memory");
            HipError::OUT_OF_MEMORY
        })?;
    let mut st = pool.state.lock();
    let reused = if let Some((index, _)) = st.best_fit(rounded, stream, false) {
        Some(st.take_free(index))
    } else {
        None
    };
    let (buffer, reused) = match reused {
        Some(buffer) => (buffer, true),
        None => match grow(&mut st, owner, rounded) {
            Ok(buffer) => (buffer, false),
            Err(error) => {
                let Some((index, Fit::AfterWait(marker))) = st.best_fit(rounded, stream, true)
                else {
                    return Err(error);
                };
                stream.wait_for(&device.streams, Dep::on(marker))?;
                st.counts.waited += 1;
                tracing::debug!(
                    size,
                    "hipMallocAsync: no memory for a new block; reusing one after a wait for its free"
                );
                (st.take_free(index), true)
            }
        },
    };
    if reused {
        st.counts.reused += 1;
    }
    let start = st.hand_out(buffer);
    if crate::trace::recording() {
        crate::trace::record::pool_alloc(
            pool.handle as u64,
            pool.device as u32,
            size as u64,
            reused,
            st.used,
            st.reserved,
        );
    }
    drop(st);
    memory::insert_pooled(start, size, pool.device);
    OWNERS.lock().insert(start, pool.clone());
    tracing::debug!(
        size,
        ptr = format_args!("{start:#x}"),
        pool = format_args!("{:#x}", pool.handle),
        reused,
        "stream-ordered allocation"
    );
    Ok(start as *mut c_void)
}

/// A new block of `size` bytes for the pool; when the device has no memory left, completed free
/// blocks of the pool are released first and the allocation tried once more.
fn grow(st: &mut PoolState, owner: &Device, size: usize) -> HipResult<PoolBuffer> {
    let agents: Vec<_> = st
        .access
        .iter()
        .enumerate()
        .filter(|&(d, &a)| d != owner.index && a != access::NONE)
        .filter_map(|(d, _)| owner.all_gpus.get(d).copied())
        .collect();
    let attempt = || owner.device_pool.allocate(size, &agents);
    let buffer = match attempt() {
        Ok(buffer) => buffer,
        Err(_) => {
            let keep = st.reserved.saturating_sub(size as u64);
            release(st.release_down_to(keep));
            attempt().map_err(|e| {
                tracing::warn!(size, status = %owner.api.describe(e.status), "memory pool: device allocation failed");
                HipError::OUT_OF_MEMORY
            })?
        }
    };
    st.reserve(buffer.len());
    Ok(buffer)
}

/// `hipFreeAsync`: the block goes back to its pool once `stream` reaches this point. Memory
/// from `hipMalloc` is freed at once after the device's work, as `hipFree` does.
///
/// # Safety
/// As [`memory::free`]: `ptr` is any pointer value; only registered ones are freed.
pub unsafe fn free_async(
    devices: &[Device],
    ptr: *mut c_void,
    device: &Device,
    stream: &Stream,
) -> HipResult {
    if ptr.is_null() {
        // AMD's runtime refuses it too (unlike hipFree).
        tracing::warn!("hipFreeAsync of a null pointer");
        return Err(HipError::INVALID_VALUE);
    }
    let start = ptr as usize;
    if let Some(freed) = ipc::free_pool_import(devices, start) {
        // Unmapped once the device's work is done: the stream's work is part of it.
        return freed;
    }
    let owner = OWNERS.lock().get(&start).cloned();
    let Some(pool) = owner else {
        return match memory::starting_at(start) {
            Some(a) if a.kind == memory::MemKind::Device => {
                tracing::debug!(
                    ptr = format_args!("{ptr:p}"),
                    "hipFreeAsync of hipMalloc memory: freed after the device's work, as hipFree"
                );
                // SAFETY: forwarded contract (`ptr` was just found to be hipMalloc memory).
                unsafe { memory::free(devices, ptr) }
            }
            _ => {
                tracing::warn!(
                    ptr = format_args!("{ptr:p}"),
                    "hipFreeAsync of a pointer that is not a live stream-ordered or hipMalloc allocation (freed twice?)"
                );
                Err(HipError::INVALID_VALUE)
            }
        };
    };
    let marker = stream.record(&device.streams)?;
    if OWNERS.lock().remove(&start).is_none() || memory::remove_pooled(start).is_none() {
        // Another thread freed it meanwhile.
        tracing::warn!(ptr = format_args!("{ptr:p}"), "hipFreeAsync: freed twice");
        return Err(HipError::INVALID_VALUE);
    }
    let pending = PendingFree {
        stream: stream.serial,
        device: device.index,
        legacy: stream.kind == StreamKind::Null || stream.is_blocking(),
        marker,
        seq: FREES_ISSUED.fetch_add(1, Ordering::SeqCst),
    };
    pool.state.lock().put_back(start, Some(pending));
    Ok(())
}

/// `hipFree` (and `hipFreeAsync`'s caller-facing twin for synchronous frees): any pointer but
/// pool memory is `memory::free`'s. Pool memory, as the program's ABI frees it: up to ROCm 6,
/// `hipFree` waits for the device's work and returns the block to its pool; ROCm 7 does not
/// wait ("HIP API 7.0 changes"): the block is freed as `hipFreeAsync` on the device's null
/// stream frees it (AMD's runtime orders it there too), so it is reused only after the work
/// the null stream waits for.
///
/// # Safety
/// As [`memory::free`]: `ptr` is any pointer value; only registered ones are freed.
pub unsafe fn free(devices: &[Device], ptr: *mut c_void) -> HipResult {
    let start = ptr as usize;
    if let Some(freed) = ipc::free_pool_import(devices, start) {
        return freed;
    }
    let owner = if ptr.is_null() {
        None
    } else {
        OWNERS.lock().get(&start).cloned()
    };
    let Some(pool) = owner else {
        // SAFETY: forwarded contract.
        return unsafe { memory::free(devices, ptr) };
    };
    let device = device::nth(devices, pool.device)?;
    if compat::abi() >= compat::Abi::Rocm7 {
        // SAFETY: forwarded contract.
        return unsafe { free_async(devices, ptr, device, &device.streams.null) };
    }
    let issued = frees_issued();
    device.synchronize()?;
    if OWNERS.lock().remove(&start).is_none() || memory::remove_pooled(start).is_none() {
        return Err(HipError::INVALID_VALUE);
    }
    pool.state.lock().put_back(start, None);
    after_sync(Synced::Device(pool.device, issued));
    Ok(())
}

/// What a synchronisation the host just completed covered. The `u64` of each is
/// [`frees_issued`] read before it began: frees issued since are not covered.
pub enum Synced<'a> {
    /// All work of a stream so far (by `Stream::serial`).
    Stream(u64, u64),
    /// All work of a device.
    Device(usize, u64),
    /// The null stream's and every blocking stream's work of a device, not that of its
    /// non-blocking streams (`hipStreamSynchronize(0)`).
    Legacy(usize, u64),
    /// Work up to an event's marker.
    Marker(&'a Marker),
}

/// After a synchronisation: frees it covered that have completed are known complete (any
/// stream may now reuse their blocks), and every pool gives back completed free blocks above
/// its release threshold. One atomic load, inlined into the synchronising call, when no pool
/// holds a free block (an idle `hipStreamSynchronize` is benchmarked).
#[inline(always)]
pub fn after_sync(synced: Synced<'_>) {
    if FREE_BLOCKS.load(Ordering::Relaxed) != 0 {
        release_after_sync(synced);
    }
}

#[cold]
#[inline(never)]
fn release_after_sync(synced: Synced<'_>) {
    let pools: Vec<Arc<MemPool>> = ALL.lock().clone();
    for pool in &pools {
        let doomed = {
            let mut st = pool.state.lock();
            for block in &mut st.free {
                // The host saw everything before the free complete (the marker's own signal
                // may lag: a stream synchronisation waits for the stream's work, not for its
                // markers, and a later barrier completes only after the earlier packets).
                let covered = block.pending.as_ref().is_some_and(|p| match synced {
                    Synced::Stream(serial, issued) => p.stream == serial && p.seq < issued,
                    Synced::Device(device, issued) => p.device == device && p.seq < issued,
                    Synced::Legacy(device, issued) => {
                        p.device == device && p.legacy && p.seq < issued
                    }
                    Synced::Marker(m) => {
                        p.marker.queue.id == m.queue.id && p.marker.index <= m.index
                    }
                });
                if covered {
                    block.pending = None;
                }
            }
            let keep = if st.destroyed {
                0
            } else {
                st.release_threshold
            };
            st.release_down_to(keep)
        };
        release(doomed);
        forget_if_gone(pool);
    }
}

/// `hipMemPoolTrimTo`: releases completed free blocks until the pool reserves at most `keep`
/// bytes (or none is left to release).
pub fn trim_to(pool: &MemPool, keep: usize) -> HipResult {
    let doomed = pool.state.lock().release_down_to(keep as u64);
    release(doomed);
    Ok(())
}

/// `hipMemPoolGetAttribute`: reuse flags as `int`, the rest as `uint64_t`.
///
/// # Safety
/// `value` points to an `int` for the reuse attributes and a `uint64_t` for the others.
pub unsafe fn get_attribute(pool: &MemPool, which: u32, value: *mut c_void) -> HipResult {
    if value.is_null() {
        return Err(HipError::INVALID_VALUE);
    }
    let st = pool.state.lock();
    let flag = |on: bool| Ok::<_, HipError>(Value::Int(i32::from(on)));
    let v = match which {
        attr::REUSE_FOLLOW_EVENT_DEPENDENCIES => flag(st.follow_event_dependencies)?,
        attr::REUSE_ALLOW_OPPORTUNISTIC => flag(st.opportunistic)?,
        attr::REUSE_ALLOW_INTERNAL_DEPENDENCIES => flag(st.internal_dependencies)?,
        attr::RELEASE_THRESHOLD => Value::U64(st.release_threshold),
        attr::RESERVED_MEM_CURRENT => Value::U64(st.reserved),
        attr::RESERVED_MEM_HIGH => Value::U64(st.reserved_high),
        attr::USED_MEM_CURRENT => Value::U64(st.used),
        attr::USED_MEM_HIGH => Value::U64(st.used_high),
        _ => return Err(unknown_attribute(which)),
    };
    // SAFETY: the caller's pointer is to the type the attribute has.
    unsafe {
        match v {
            Value::Int(i) => value.cast::<i32>().write_unaligned(i),
            Value::U64(u) => value.cast::<u64>().write_unaligned(u),
        }
    }
    Ok(())
}

enum Value {
    Int(i32),
    U64(u64),
}

fn unknown_attribute(which: u32) -> HipError {
    tracing::warn!(attribute = which, "unknown hipMemPoolAttr");
    HipError::INVALID_VALUE
}

/// `hipMemPoolSetAttribute`: the reuse flags and the release threshold; the high-water marks
/// only to 0, which restarts them from the current value; the current values not at all.
///
/// # Safety
/// As [`get_attribute`], for reading.
pub unsafe fn set_attribute(pool: &MemPool, which: u32, value: *mut c_void) -> HipResult {
    if value.is_null() {
        return Err(HipError::INVALID_VALUE);
    }
    // SAFETY: the caller's pointer is to the type the attribute has.
    let int = || unsafe { value.cast::<i32>().read_unaligned() } != 0;
    // SAFETY: as above.
    let u64_value = || unsafe { value.cast::<u64>().read_unaligned() };
    let mut st = pool.state.lock();
    match which {
        attr::REUSE_FOLLOW_EVENT_DEPENDENCIES => st.follow_event_dependencies = int(),
        attr::REUSE_ALLOW_OPPORTUNISTIC => st.opportunistic = int(),
        attr::REUSE_ALLOW_INTERNAL_DEPENDENCIES => st.internal_dependencies = int(),
        attr::RELEASE_THRESHOLD => st.release_threshold = u64_value(),
        attr::RESERVED_MEM_HIGH | attr::USED_MEM_HIGH => {
            if u64_value() != 0 {
                tracing::warn!(
                    attribute = which,
                    "hipMemPoolSetAttribute: a high-water mark can only be reset to 0"
                );
                return Err(HipError::INVALID_VALUE);
            }
            if which == attr::RESERVED_MEM_HIGH {
                st.reserved_high = st.reserved;
            } else {
                st.used_high = st.used;
            }
        }
        attr::RESERVED_MEM_CURRENT | attr::USED_MEM_CURRENT => {
            tracing::warn!(
                attribute = which,
                "hipMemPoolSetAttribute: a current amount is read-only"
            );
            return Err(HipError::INVALID_VALUE);
        }
        _ => return Err(unknown_attribute(which)),
    }
    Ok(())
}

/// The ordinal of the one of `devices` a `hipMemLocation` names.
fn location_device(devices: &[Device], location: &MemLocation) -> HipResult<usize> {
    if location.type_ != LOCATION_DEVICE {
        tracing::warn!(
            location_type = location.type_,
            "memory pool access: only device locations"
        );
        return Err(HipError::INVALID_VALUE);
    }
    device_ordinal(devices, location.id)
}

/// `hipMemPoolSetAccess`: read or read-write access lets a device reach every block of the pool,
/// now and later (`hsa_amd_agents_allow_access`). The owner always has read-write access; asking
/// it for less is an error. Taking access away is recorded but cannot unmap blocks already
/// granted (HSA has no revoke).
pub fn set_access(devices: &[Device], pool: &MemPool, descs: &[MemAccessDesc]) -> HipResult {
    // Every descriptor is checked before any takes effect.
    let mut changes = Vec::with_capacity(descs.len());
    for desc in descs {
        let device = location_device(devices, &desc.location)?;
        if !matches!(desc.flags, access::NONE | access::READ | access::READ_WRITE) {
            tracing::warn!(
                flags = desc.flags,
                "hipMemPoolSetAccess: unknown access flags"
            );
            return Err(HipError::INVALID_VALUE);
        }
        if device == pool.device && desc.flags != access::READ_WRITE {
            tracing::warn!(
                device,
                "hipMemPoolSetAccess: the pool's own device always has read-write access"
            );
            return Err(HipError::INVALID_VALUE);
        }
        changes.push((device, desc.flags));
    }
    let mut st = pool.state.lock();
    for (device, flags) in changes {
        if device == pool.device {
            continue;
        }
        if flags != access::NONE && st.access[device] == access::NONE {
            let agent = [device::nth(devices, device)?.agent];
            let blocks = st.in_use.values().chain(st.free.iter().map(|b| &b.buffer));
            for buffer in blocks {
                buffer.allow_access(&agent)?;
            }
        } else if flags == access::NONE && st.access[device] != access::NONE {
            tracing::debug!(
                device,
                "hipMemPoolSetAccess: access taken away is recorded; blocks already mapped stay reachable"
            );
        }
        st.access[device] = flags;
    }
    Ok(())
}

/// `hipMemPoolGetAccess`.
pub fn get_access(devices: &[Device], pool: &MemPool, location: &MemLocation) -> HipResult<u32> {
    let device = location_device(devices, location)?;
    if device == pool.device {
        return Ok(access::READ_WRITE);
    }
    Ok(pool.state.lock().access[device])
}

// ---- Sharing pools between processes --------------------------------------------------
//
// A pool made with `hipMemHandleTypePosixFileDescriptor` exports a file descriptor
// (`hipMemPoolExportToShareableHandle`) that another process, having received it (over a Unix
// socket, or by inheritance), imports as a pool of its own (`hipMemPoolImportFromShareableHandle`);
// each allocation is then shared by its own 64 bytes (`hipMemPoolExportPointer` /
// `hipMemPoolImportPointer`), the same bytes `hipIpcGetMemHandle` makes for it (`ipc.rs`), and
// the importer frees what it imported with `hipFree`/`hipFreeAsync`, which unmaps it. As in
// AMD's runtime, the descriptor names a small shared file describing the pool (its process,
// device and the access other devices have), and importing a pointer in the process that
// exported it maps the memory a second time. An imported pool cannot allocate (CUDA's rule).

/// `hipMemHandleTypePosixFileDescriptor`.
const HANDLE_TYPE_POSIX_FD: u32 = 0x1;
/// "HSMP": the first word of a shared pool description.
const SHARED_MAGIC: u32 = 0x4853_4d50;
/// Devices whose access a shared description carries.
const SHARED_DEVICES: usize = 64;

/// What the exported descriptor's file holds.
#[repr(C)]
#[derive(Clone, Copy)]
struct SharedPool {
    magic: u32,
    pid: u32,
    device: u32,
    devices: u32,
    access: [u8; SHARED_DEVICES],
}

/// `hipMemPoolExportToShareableHandle`: a new descriptor (the caller's to close) of the pool's
/// shared description, which the first export writes.
pub fn export_pool(pool: &MemPool, handle_type: u32, flags: u32) -> HipResult<i32> {
    let call = "hipMemPoolExportToShareableHandle";
    if flags != 0 || handle_type != HANDLE_TYPE_POSIX_FD || pool.handle_types & handle_type == 0 {
        tracing::warn!(
            handle_type,
            flags,
            pool_handle_types = pool.handle_types,
            "{call}: the pool must have been made with hipMemHandleTypePosixFileDescriptor, which is also the type asked for, and flags must be 0"
        );
        return Err(HipError::INVALID_VALUE);
    }
    let mut shared = pool.shared.lock();
    if shared.is_none() {
        let access = pool.state.lock().access.clone();
        let mut description = SharedPool {
            magic: SHARED_MAGIC,
            pid: std::process::id(),
            device: pool.device as u32,
            devices: access.len().min(SHARED_DEVICES) as u32,
            access: [0; SHARED_DEVICES],
        };
        for (to, from) in description.access.iter_mut().zip(&access) {
            *to = *from as u8;
        }
        *shared = Some(write_shared(&description).map_err(|e| {
            tracing::warn!(error = %e, "{call}: cannot make the shared description");
            HipError::OUT_OF_MEMORY
        })?);
    }
    let fd = shared.as_ref().map_or(-1, |f| f.as_raw_fd());
    // SAFETY: F_DUPFD_CLOEXEC on a descriptor this pool owns; no memory is involved.
    let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
    if dup < 0 {
        tracing::warn!(error = %std::io::Error::last_os_error(), "{call}: cannot duplicate the descriptor");
        return Err(HipError::OUT_OF_MEMORY);
    }
    Ok(dup)
}

fn write_shared(description: &SharedPool) -> std::io::Result<OwnedFd> {
    let owned = ipc::memfd(c"hipshim-mempool")?;
    let fd = owned.as_raw_fd();
    let bytes = std::mem::size_of::<SharedPool>();
    // SAFETY: writes the `bytes` bytes of a plain `repr(C)` value to the new file.
    let written = unsafe { libc::pwrite(fd, (description as *const SharedPool).cast(), bytes, 0) };
    if written != bytes as isize {
        return Err(std::io::Error::last_os_error());
    }
    Ok(owned)
}

/// `hipMemPoolImportFromShareableHandle`: `handle` is the descriptor's number (the C API
/// passes it as a pointer value). The new pool belongs to the exporter's device where this
/// process has it, else device 0 (AMD's runtime always uses device 0).
pub fn import_pool(
    devices: &[Device],
    handle: usize,
    handle_type: u32,
    flags: u32,
) -> HipResult<*mut c_void> {
    let call = "hipMemPoolImportFromShareableHandle";
    if flags != 0 || handle_type != HANDLE_TYPE_POSIX_FD {
        tracing::warn!(
            handle_type,
            flags,
            "{call}: only hipMemHandleTypePosixFileDescriptor, with flags 0"
        );
        return Err(HipError::INVALID_VALUE);
    }
    let fd = i32::try_from(handle).map_err(|_| HipError::INVALID_VALUE)?;
    let mut description = std::mem::MaybeUninit::<SharedPool>::zeroed();
    let bytes = std::mem::size_of::<SharedPool>();
    // SAFETY: reads at most `bytes` bytes into the zeroed value; any descriptor number is safe
    // to pass (a bad one fails with EBADF).
    let read = unsafe { libc::pread(fd, description.as_mut_ptr().cast(), bytes, 0) };
    // SAFETY: zero-initialised and made only of integers, so every byte pattern is a value.
    let description = unsafe { description.assume_init() };
    if read != bytes as isize || description.magic != SHARED_MAGIC {
        tracing::warn!(
            fd,
            "{call}: not a descriptor hipMemPoolExportToShareableHandle made"
        );
        return Err(HipError::INVALID_VALUE);
    }
    let device = Some(description.device as usize)
        .filter(|&d| d < devices.len())
        .unwrap_or(0);
    let pool = make_pool_of(devices.len(), device, false, handle_type, true)?;
    {
        let mut st = pool.state.lock();
        let shared = (description.devices as usize).min(SHARED_DEVICES);
        for (d, flags) in description.access[..shared].iter().enumerate() {
            if let Some(slot) = st.access.get_mut(d) {
                *slot = u32::from(*flags);
            }
        }
    }
    tracing::debug!(
        pool = format_args!("{:#x}", pool.handle),
        device,
        exporter = description.pid,
        "memory pool imported"
    );
    Ok(pool.handle as *mut c_void)
}

/// `hipMemPoolExportPointer`: the 64 bytes that share the allocation holding `ptr` (memory
/// from a pool or from `hipMalloc`, as AMD's runtime accepts).
/// Anything else is an invalid value, one of the two errors HIP documents for it (AMD's
/// runtime answers out of memory).
/// `api` and `devices` are the process's HSA runtime and devices.
pub fn export_pointer(
    api: &'static crate::hsa::HsaApi,
    devices: &[Device],
    ptr: usize,
) -> HipResult<ipc::IpcHandle> {
    ipc::export(
        api,
        devices,
        ptr,
        &[memory::MemKind::Pooled, memory::MemKind::Device],
        "hipMemPoolExportPointer",
    )
    .map_err(|e| {
        if e == HipError::INVALID_DEVICE_POINTER {
            HipError::INVALID_VALUE
        } else {
            e
        }
    })
}

/// `hipMemPoolImportPointer`: maps what `data` shares into `pool`'s device; `hipFree` or
/// `hipFreeAsync` unmaps it.
pub fn import_pointer(
    devices: &[Device],
    pool: &Arc<MemPool>,
    data: &ipc::IpcHandle,
) -> HipResult<usize> {
    let call = "hipMemPoolImportPointer";
    let device = device::nth(devices, pool.device)?;
    let ptr = ipc::import(data, device, call)?.ok_or_else(|| {
        tracing::warn!("{call}: not data hipMemPoolExportPointer made");
        HipError::INVALID_VALUE
    })?;
    Ok(ptr)
}

/// Each live pool's device and counts, for the stats at exit.
pub fn counts() -> Vec<(usize, usize, PoolCounts)> {
    ALL.lock()
        .iter()
        .map(|p| {
            let st = p.state.lock();
            let counts = PoolCounts {
                reserved_high: st.reserved_high,
                used_high: st.used_high,
                ..st.counts
            };
            (p.handle, p.device, counts)
        })
        .collect()
}

/// `hipDeviceReset`: the device's explicit pools are destroyed, its default pool is emptied
/// and made current again with its default attributes; blocks handed out are freed (the caller
/// drained the device).
pub(crate) fn reset_device(device: &Device) {
    let pools: Vec<Arc<MemPool>> = ALL
        .lock()
        .iter()
        .filter(|p| p.device == device.index)
        .cloned()
        .collect();
    let devices = device.all_gpus.len();
    for pool in pools {
        let doomed: Vec<PoolBuffer> = {
            let mut st = pool.state.lock();
            let starts: Vec<usize> = st.in_use.keys().copied().collect();
            for start in starts {
                OWNERS.lock().remove(&start);
                memory::remove_pooled(start);
            }
            FREE_BLOCKS.fetch_sub(st.free.len(), Ordering::Relaxed);
            let mut old = std::mem::replace(&mut *st, PoolState::new(devices));
            st.destroyed = !pool.is_default;
            let mut all: Vec<PoolBuffer> = old.in_use.drain().map(|(_, b)| b).collect();
            all.extend(old.free.drain(..).map(|b| b.buffer));
            all
        };
        release(doomed);
        if !pool.is_default {
            let _ = POOLS.remove(pool.handle);
        }
        forget_if_gone(&pool);
    }
    if let Some(p) = DEVICE_POOLS.lock().get_mut(&device.index) {
        p.current = p.default.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abi_layouts_match_hip_runtime_api_h() {
        assert_eq!(std::mem::size_of::<MemLocation>(), 8);
        assert_eq!(std::mem::offset_of!(MemAccessDesc, flags), 8);
        assert_eq!(
            std::mem::offset_of!(MemPoolProps, win32_security_attributes),
            16
        );
    }
}

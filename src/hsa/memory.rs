//! Memory the HSA runtime hands out: an agent's memory pools ([`PoolInfo`] to choose one,
//! [`MemoryPool`] to allocate from it), the buffers they allocate ([`PoolBuffer`], freed when
//! dropped) and host memory locked for device access ([`HostLock`], unlocked when dropped).
//!
//! Allocating and granting access are one step ([`MemoryPool::allocate`]): a buffer some agent
//! may not reach is never handed out, and a failed grant frees what it allocated.

use super::callback;
use super::{check, HsaApi, HsaError};
use hsa_abi::*;
use std::ffi::c_void;

/// A memory pool of an agent with the properties the runtime selects pools by.
#[derive(Clone, Copy, Debug)]
pub struct PoolInfo {
    pub pool: hsa_amd_memory_pool_t,
    pub segment: u32,
    pub global_flags: u32,
    pub size: usize,
    pub alloc_allowed: bool,
    /// The unit allocations are made in (`RUNTIME_ALLOC_GRANULE`; 0 if the runtime does not say).
    pub granule: usize,
}

/// Every memory pool of `agent`.
pub fn agent_pools(api: &HsaApi, agent: hsa_agent_t) -> Vec<PoolInfo> {
    let mut pools: Vec<PoolInfo> = Vec::new();
    unsafe extern "C" fn collect(pool: hsa_amd_memory_pool_t, data: *mut c_void) -> hsa_status_t {
        // SAFETY: forwarded from the HSA runtime's call.
        callback::guarded(
            "the memory pool iteration callback",
            status::ERROR,
            || unsafe { collect_pool(pool, data) },
        )
    }
    unsafe fn collect_pool(pool: hsa_amd_memory_pool_t, data: *mut c_void) -> hsa_status_t {
        // SAFETY: `data` is the `(Vec, api)` pair passed below, alive for the iteration.
        let (pools, api) = unsafe { &mut *(data as *mut (&mut Vec<PoolInfo>, &HsaApi)) };
        let get = |attribute: u32, out: *mut c_void| {
            // SAFETY: each attribute below is read into a value of its HSA type.
            unsafe { (api.hsa_amd_memory_pool_get_info)(pool, attribute, out) }
        };
        let mut info = PoolInfo {
            pool,
            segment: u32::MAX,
            global_flags: 0,
            size: 0,
            alloc_allowed: false,
            granule: 0,
        };
        get(
            memory_pool_info::SEGMENT,
            &mut info.segment as *mut u32 as *mut c_void,
        );
        get(
            memory_pool_info::GLOBAL_FLAGS,
            &mut info.global_flags as *mut u32 as *mut c_void,
        );
        get(
            memory_pool_info::SIZE,
            &mut info.size as *mut usize as *mut c_void,
        );
        get(
            memory_pool_info::RUNTIME_ALLOC_ALLOWED,
            &mut info.alloc_allowed as *mut bool as *mut c_void,
        );
        get(
            memory_pool_info::RUNTIME_ALLOC_GRANULE,
            &mut info.granule as *mut usize as *mut c_void,
        );
        pools.push(info);
        status::SUCCESS
    }
    let mut ctx = (&mut pools, api);
    // SAFETY: callback signature matches; ctx outlives the call.
    unsafe {
        (api.hsa_amd_agent_iterate_memory_pools)(
            agent,
            Some(collect),
            &mut ctx as *mut _ as *mut c_void,
        )
    };
    pools
}

/// A pool the runtime allocates from (a handle: pools live as long as the HSA runtime).
#[derive(Clone, Copy)]
pub struct MemoryPool {
    api: &'static HsaApi,
    raw: hsa_amd_memory_pool_t,
    /// Bytes the pool holds (`HSA_AMD_MEMORY_POOL_INFO_SIZE`).
    pub size: usize,
    /// The unit allocations use up (`RUNTIME_ALLOC_GRANULE`, at least 1).
    pub granule: usize,
}

impl std::fmt::Debug for MemoryPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MemoryPool({:#x}, {} bytes)", self.raw.handle, self.size)
    }
}

impl MemoryPool {
    /// The pool `info` describes.
    pub fn new(api: &'static HsaApi, info: &PoolInfo) -> MemoryPool {
        MemoryPool {
            api,
            raw: info.pool,
            size: info.size,
            granule: info.granule.max(1),
        }
    }

    /// The runtime's handle of the pool.
    pub fn handle(&self) -> hsa_amd_memory_pool_t {
        self.raw
    }

    /// The pool's allocation granule: the smallest (`RUNTIME_ALLOC_GRANULE`) or the
    /// recommended (`RUNTIME_ALLOC_REC_GRANULE`, which older runtimes lack: then the smallest).
    pub fn granule(&self, recommended: bool) -> Result<usize, HsaError> {
        let get = |attribute| {
            let mut value = 0usize;
            // SAFETY: both granule attributes are a size_t.
            let status = unsafe {
                (self.api.hsa_amd_memory_pool_get_info)(
                    self.raw,
                    attribute,
                    &mut value as *mut usize as *mut c_void,
                )
            };
            check(
                "hsa_amd_memory_pool_get_info(RUNTIME_ALLOC_GRANULE)",
                status,
            )
            .map(|()| value)
        };
        let smallest = get(memory_pool_info::RUNTIME_ALLOC_GRANULE)?;
        if !recommended {
            return Ok(smallest);
        }
        Ok(get(memory_pool_info::RUNTIME_ALLOC_REC_GRANULE)
            .ok()
            .filter(|&g| g >= smallest && g.is_multiple_of(smallest.max(1)))
            .unwrap_or(smallest))
    }

    /// How `agent` may reach this pool (`HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS`: never,
    /// by default, or once granted).
    pub fn access_of(&self, agent: hsa_agent_t) -> Result<u32, HsaError> {
        let mut access = HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED;
        // SAFETY: the attribute is a u32; both handles are the runtime's.
        let status = unsafe {
            (self.api.hsa_amd_agent_memory_pool_get_info)(
                agent,
                self.raw,
                HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS,
                &mut access as *mut u32 as *mut c_void,
            )
        };
        check("hsa_amd_agent_memory_pool_get_info(ACCESS)", status).map(|()| access)
    }

    /// The hops of the link from `agent` to this pool (none for the agent's own pool).
    pub fn links_from(
        &self,
        agent: hsa_agent_t,
    ) -> Result<Vec<hsa_amd_memory_pool_link_info_t>, HsaError> {
        let mut hops = 0u32;
        // SAFETY: the attribute is a u32; both handles are the runtime's.
        let status = unsafe {
            (self.api.hsa_amd_agent_memory_pool_get_info)(
                agent,
                self.raw,
                HSA_AMD_AGENT_MEMORY_POOL_INFO_NUM_LINK_HOPS,
                &mut hops as *mut u32 as *mut c_void,
            )
        };
        check("hsa_amd_agent_memory_pool_get_info(NUM_LINK_HOPS)", status)?;
        let mut links = vec![hsa_amd_memory_pool_link_info_t::default(); hops as usize];
        if hops > 0 {
            // SAFETY: room for `hops` entries, as the attribute writes.
            let status = unsafe {
                (self.api.hsa_amd_agent_memory_pool_get_info)(
                    agent,
                    self.raw,
                    HSA_AMD_AGENT_MEMORY_POOL_INFO_LINK_INFO,
                    links.as_mut_ptr() as *mut c_void,
                )
            };
            check("hsa_amd_agent_memory_pool_get_info(LINK_INFO)", status)?;
        }
        Ok(links)
    }

    /// Allocates `size` bytes and lets each of `agents` access them (none: only the agents
    /// the pool's memory is accessible to by default). A failed grant frees the memory.
    pub fn allocate(&self, size: usize, agents: &[hsa_agent_t]) -> Result<PoolBuffer, HsaError> {
        let mut ptr: *mut c_void = std::ptr::null_mut();
        // SAFETY: the pool handle is live while the runtime is; `ptr` is a valid out-pointer.
        let status =
            unsafe { (self.api.hsa_amd_memory_pool_allocate)(self.raw, size, 0, &mut ptr) };
        check("hsa_amd_memory_pool_allocate", status)?;
        if ptr.is_null() {
            // A runtime that reports success without memory has none to give.
            return Err(HsaError::call(
                "hsa_amd_memory_pool_allocate",
                status::ERROR_OUT_OF_RESOURCES,
            ));
        }
        // Owned from here: an early return frees it.
        let buffer = PoolBuffer {
            api: self.api,
            ptr: ptr as *mut u8,
            size,
        };
        buffer.allow_access(agents)?;
        Ok(buffer)
    }
}

/// Memory allocated from a [`MemoryPool`], freed when dropped (or by [`PoolBuffer::free`],
/// which reports a failure).
pub struct PoolBuffer {
    api: &'static HsaApi,
    ptr: *mut u8,
    size: usize,
}

// SAFETY: the buffer is process-wide memory; this type only owns the right to free it, and
// `hsa_amd_memory_pool_free` may be called from any thread.
unsafe impl Send for PoolBuffer {}
// SAFETY: as above; `&PoolBuffer` only reads the address.
unsafe impl Sync for PoolBuffer {}

impl PoolBuffer {
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }

    pub fn len(&self) -> usize {
        self.size
    }

    pub fn is_empty(&self) -> bool {
        self.size == 0
    }

    /// Lets each of `agents` access the buffer (none: nothing to do).
    pub fn allow_access(&self, agents: &[hsa_agent_t]) -> Result<(), HsaError> {
        if agents.is_empty() {
            return Ok(());
        }
        // SAFETY: `agents` holds `agents.len()` agents; the buffer is a live allocation.
        let status = unsafe {
            (self.api.hsa_amd_agents_allow_access)(
                agents.len() as u32,
                agents.as_ptr(),
                std::ptr::null(),
                self.ptr as *const c_void,
            )
        };
        check("hsa_amd_agents_allow_access", status)
    }

    /// Frees the memory now, saying whether the runtime could.
    pub fn free(self) -> Result<(), HsaError> {
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: the pointer came from hsa_amd_memory_pool_allocate and is freed once: `self`
        // is consumed without running Drop.
        let status = unsafe { (this.api.hsa_amd_memory_pool_free)(this.ptr as *mut c_void) };
        check("hsa_amd_memory_pool_free", status)
    }
}

impl Drop for PoolBuffer {
    fn drop(&mut self) {
        // SAFETY: as in `free`: allocated by the pool, freed once, here.
        let status = unsafe { (self.api.hsa_amd_memory_pool_free)(self.ptr as *mut c_void) };
        if let Err(error) = check("hsa_amd_memory_pool_free", status) {
            tracing::warn!(%error, "freeing HSA memory failed");
        }
    }
}

impl std::fmt::Debug for PoolBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PoolBuffer({:p}, {} bytes)", self.ptr, self.size)
    }
}

/// Host memory of the program locked (pinned) for access by agents, unlocked when dropped
/// (or by [`HostLock::unlock`], which reports a failure).
pub struct HostLock {
    api: &'static HsaApi,
    host: *mut c_void,
    agent_address: *mut c_void,
}

// SAFETY: the lock is process-wide; this type only owns the right to undo it, and
// `hsa_amd_memory_unlock` may be called from any thread.
unsafe impl Send for HostLock {}
// SAFETY: as above; `&HostLock` only reads the addresses.
unsafe impl Sync for HostLock {}

impl HostLock {
    /// Locks `[host, host + size)` for access by `agents`.
    ///
    /// # Safety
    /// The range is live host memory of the caller and stays so until the lock is dropped.
    pub unsafe fn lock(
        api: &'static HsaApi,
        host: *mut c_void,
        size: usize,
        agents: &[hsa_agent_t],
    ) -> Result<HostLock, HsaError> {
        // The runtime's signature takes a mutable agent list; give it its own copy.
        let mut agents = agents.to_vec();
        let mut agent_address: *mut c_void = std::ptr::null_mut();
        // SAFETY: the caller's range is live host memory; `agents` holds `len` agents and
        // `agent_address` is a valid out-pointer.
        let status = unsafe {
            (api.hsa_amd_memory_lock)(
                host,
                size,
                agents.as_mut_ptr(),
                agents.len() as i32,
                &mut agent_address,
            )
        };
        check("hsa_amd_memory_lock", status)?;
        if agent_address.is_null() {
            // SAFETY: the lock above succeeded and is undone once, here.
            unsafe { (api.hsa_amd_memory_unlock)(host) };
            return Err(HsaError::call("hsa_amd_memory_lock", status::ERROR));
        }
        Ok(HostLock {
            api,
            host,
            agent_address,
        })
    }

    /// The address agents use for the locked range's first byte (on some runtimes it differs
    /// from the host address).
    pub fn agent_address(&self) -> usize {
        self.agent_address as usize
    }

    /// Unlocks now, saying whether the runtime could.
    pub fn unlock(self) -> Result<(), HsaError> {
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: locked by `lock` and unlocked once: `self` is consumed without running Drop.
        let status = unsafe { (this.api.hsa_amd_memory_unlock)(this.host) };
        check("hsa_amd_memory_unlock", status)
    }
}

impl Drop for HostLock {
    fn drop(&mut self) {
        // SAFETY: as in `unlock`: locked by `lock`, unlocked once, here.
        let status = unsafe { (self.api.hsa_amd_memory_unlock)(self.host) };
        if let Err(error) = check("hsa_amd_memory_unlock", status) {
            tracing::warn!(%error, "unlocking host memory failed");
        }
    }
}

impl std::fmt::Debug for HostLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HostLock({:p} -> {:p})", self.host, self.agent_address)
    }
}

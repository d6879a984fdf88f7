//! Memory entry points: pools, allocation, access, locking/registration, pointer info.

use super::shell::guard;
use super::shell::iterate;
use crate::cabi::{out, put};
use crate::config::GpuLink;
use crate::error::{HsaError, HsaResult};
use crate::host_map::{host_range_mapped, PAGE};
use crate::memory::{node_bit, pool_allocate, pool_free, PoolKind, Region, RegionKind};
use crate::system::{rt, Runtime};
use hsa_abi::*;
use std::ffi::c_void;
use std::sync::Arc;

/// # Safety
/// `callback` is called with `data`, which must be what it expects.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_agent_iterate_memory_pools(
    agent: hsa_agent_t,
    callback: Option<PoolCallback>,
    data: *mut c_void,
) -> hsa_status_t {
    iterate("hsa_amd_agent_iterate_memory_pools", || {
        let rt = rt()?;
        let a = rt.agent(agent)?;
        let cb = callback.ok_or(HsaError::INVALID_ARGUMENT)?;
        for p in &a.pools {
            let h = hsa_amd_memory_pool_t {
                handle: Arc::as_ptr(p) as u64,
            };
            // SAFETY: the client's callback with its own data.
            let s = unsafe { cb(h, data) };
            if s != status::SUCCESS {
                return Ok(s);
            }
        }
        Ok(status::SUCCESS)
    })
}

/// # Safety
/// `value` must be null or valid for the attribute's type.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_memory_pool_get_info(
    pool: hsa_amd_memory_pool_t,
    attr: u32,
    value: *mut c_void,
) -> hsa_status_t {
    guard("hsa_amd_memory_pool_get_info", || {
        let rt = rt()?;
        let (_, p) = rt.pool(pool)?;
        use memory_pool_info::*;
        // SAFETY (all calls): `value` is valid for the attribute's type per the caller.
        unsafe {
            match attr {
                SEGMENT => put(value, p.segment()),
                GLOBAL_FLAGS => put(value, p.global_flags()),
                SIZE => put(value, p.size as usize),
                RUNTIME_ALLOC_ALLOWED => put(value, p.alloc_allowed()),
                RUNTIME_ALLOC_GRANULE | RUNTIME_ALLOC_ALIGNMENT | RUNTIME_ALLOC_REC_GRANULE => {
                    put(value, PAGE as usize)
                }
                ACCESSIBLE_BY_ALL => put(value, !p.on_gpu()),
                ALLOC_MAX_SIZE => put(value, p.size as usize),
                // HSA_AMD_MEMORY_POOL_LOCATION_CPU = 0, _GPU = 1
                LOCATION => put(value, u32::from(p.on_gpu())),
                _ => {
                    super::shell::report_once(
                        "hsa_amd_memory_pool_get_info(attr)",
                        &format!("hsa_amd_memory_pool_get_info: attribute {attr:#x} is not modelled; returning HSA_STATUS_ERROR_INVALID_ARGUMENT"),
                    );
                    Err(HsaError::INVALID_ARGUMENT)
                }
            }
        }
    })
}

/// The one hop between an agent and another agent's pool: PCIe between the CPU and a GPU, and
/// between two GPUs what `HSASIM_GPU_LINK` chooses (see [`GpuLink`]); 32- and 64-bit atomics
/// across it; GPU memory is not coherent across it.
fn link_to(gpu_to_gpu: bool, pool_on_gpu: bool, rt: &Runtime) -> hsa_amd_memory_pool_link_info_t {
    let (link_type, numa_distance, bandwidth) = match (gpu_to_gpu, rt.config.gpu_link) {
        (true, GpuLink::Xgmi) => (HSA_AMD_LINK_INFO_TYPE_XGMI, 15, 50_000),
        (true, GpuLink::Pcie) => (HSA_AMD_LINK_INFO_TYPE_PCIE, 40, 32_000),
        (false, _) => (HSA_AMD_LINK_INFO_TYPE_PCIE, 20, 32_000),
    };
    hsa_amd_memory_pool_link_info_t {
        min_latency: 1000,
        max_latency: 1000,
        min_bandwidth: bandwidth,
        max_bandwidth: bandwidth,
        atomic_support_32bit: true,
        atomic_support_64bit: true,
        coherent_support: !pool_on_gpu,
        link_type,
        numa_distance,
    }
}

/// # Safety
/// `value` must be null or valid for the attribute's type.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_agent_memory_pool_get_info(
    agent: hsa_agent_t,
    pool: hsa_amd_memory_pool_t,
    attr: u32,
    value: *mut c_void,
) -> hsa_status_t {
    guard("hsa_amd_agent_memory_pool_get_info", || {
        let rt = rt()?;
        let a = rt.agent(agent)?;
        let (owner, p) = rt.pool(pool)?;
        let local = Arc::ptr_eq(a, owner);
        // None to an agent's own memory, one to anything else (see `link_to`).
        let hops = u32::from(!local);
        // SAFETY (all calls): valid for the attribute's type per the caller.
        unsafe {
            match attr {
                HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS => {
                    let cpu_without_bar =
                        !a.is_gpu() && p.kind == PoolKind::Device && !rt.config.large_bar;
                    let access = if (p.kind == PoolKind::Group && !local) || cpu_without_bar {
                        // A CPU that cannot reach device memory through the BAR: AMD's runtime
                        // reads NEVER_ALLOWED here as "no large BAR".
                        HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED
                    } else if local || !p.on_gpu() {
                        HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT
                    } else {
                        HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT
                    };
                    put(value, access)
                }
                HSA_AMD_AGENT_MEMORY_POOL_INFO_NUM_LINK_HOPS => put(value, hops),
                // An array of `hops` entries.
                HSA_AMD_AGENT_MEMORY_POOL_INFO_LINK_INFO => {
                    if hops == 0 {
                        return Ok(());
                    }
                    put(
                        value,
                        link_to(a.is_gpu() && owner.is_gpu(), p.on_gpu(), &rt),
                    )
                }
                _ => {
                    super::shell::report_once(
                        "hsa_amd_agent_memory_pool_get_info(attr)",
                        &format!("hsa_amd_agent_memory_pool_get_info: attribute {attr:#x} is not modelled; returning HSA_STATUS_ERROR_INVALID_ARGUMENT"),
                    );
                    Err(HsaError::INVALID_ARGUMENT)
                }
            }
        }
    })
}

/// # Safety
/// `ptr` must be null or valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_memory_pool_allocate(
    pool: hsa_amd_memory_pool_t,
    size: usize,
    _flags: u32,
    ptr: *mut *mut c_void,
) -> hsa_status_t {
    guard("hsa_amd_memory_pool_allocate", || {
        let rt = rt()?;
        let (_, p) = rt.pool(pool)?;
        if ptr.is_null() {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        crate::fail::check(
            crate::fail::FailPoint::PoolAllocate,
            "hsa_amd_memory_pool_allocate",
        )?;
        let a = pool_allocate(&rt.memory, p, pool.handle, size as u64, rt.config.large_bar)?;
        // SAFETY: checked non-null; valid per the caller.
        unsafe { out(ptr, a.cast::<c_void>()) }
    })
}

#[no_mangle]
pub extern "C" fn hsa_amd_memory_pool_free(ptr: *mut c_void) -> hsa_status_t {
    guard("hsa_amd_memory_pool_free", || {
        let rt = rt()?;
        pool_free(&rt.memory, ptr as u64, |h| rt.pool_by_handle(h))?;
        rt.ipc.forget(ptr as u64);
        Ok(())
    })
}

/// All memory is host memory, so access needs no mapping; the call validates its arguments
/// (agents exist, the pointer is a known allocation) and records the grant of a GPU's memory
/// to other GPUs, whose kernels and copy engines fault on it until then.
///
/// # Safety
/// `agents` must hold `num_agents` agents.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_agents_allow_access(
    num_agents: u32,
    agents: *const hsa_agent_t,
    _flags: *const u32,
    ptr: *const c_void,
) -> hsa_status_t {
    guard("hsa_amd_agents_allow_access", || {
        let rt = rt()?;
        if num_agents == 0 || agents.is_null() || ptr.is_null() {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        let mut nodes = 0;
        // SAFETY: `num_agents` elements at non-null `agents` per the caller.
        for a in unsafe { std::slice::from_raw_parts(agents, num_agents as usize) } {
            nodes |= node_bit(rt.agent(*a)?.node);
        }
        rt.memory.grant(ptr as u64, nodes)
    })
}

fn lock(
    rt: &Runtime,
    host: *mut c_void,
    size: usize,
    agents: *const hsa_agent_t,
    num_agents: i32,
    global_flags: u32,
) -> HsaResult<u64> {
    if host.is_null() || size == 0 || num_agents < 0 || (num_agents > 0 && agents.is_null()) {
        return Err(HsaError::INVALID_ARGUMENT);
    }
    if num_agents > 0 {
        // SAFETY: `num_agents` elements at non-null `agents` per the caller.
        for a in unsafe { std::slice::from_raw_parts(agents, num_agents as usize) } {
            rt.agent(*a)?;
        }
    }
    if (host as u64).checked_add(size as u64).is_none() {
        tracing::error!(target: "hsasim", "memory lock: {host:p}+{size:#x} wraps around the address space");
        return Err(HsaError::INVALID_ARGUMENT);
    }
    // ROCr's driver pins the pages and fails for any that is not mapped, and ROCr then
    // returns HSA_STATUS_ERROR; a lock that succeeded here would let a later copy or kernel
    // touch the hole.
    if let Err(page) = host_range_mapped(host as u64, size as u64) {
        tracing::error!(target: "hsasim", "memory lock: {host:p}+{size:#x} is not all mapped host memory (page {page:#x} is not mapped)");
        return Err(HsaError::GENERIC);
    }
    let (host, len) = (host as u64, size as u64);
    // A discrete GPU reaches pinned host pages through addresses of its own: strict mode
    // hands out such an address, so a client that gives the device the host pointer faults
    // here as it would on hardware.
    let agent_address = if rt.config.strict {
        rt.memory.new_agent_address(host, len)?
    } else {
        host
    };
    let region = |start, kind| Region {
        start,
        host,
        len,
        kind,
        owner: rt.cpu_agent().handle(),
        global_flags,
        user_data: 0,
        mapped_len: len,
    };
    rt.memory.add(region(agent_address, RegionKind::Locked));
    if agent_address != host {
        rt.memory
            .add(region(host, RegionKind::LockedHost { agent_address }));
    }
    Ok(agent_address)
}

/// Host memory becomes device-accessible at the returned agent address: the host pointer
/// itself, or (`HSASIM_STRICT`) an address of the device's own, as on a discrete GPU.
///
/// # Safety
/// `agents` must hold `num_agent` agents; `agent_ptr` null or valid.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_memory_lock(
    host_ptr: *mut c_void,
    size: usize,
    agents: *const hsa_agent_t,
    num_agent: i32,
    agent_ptr: *mut *mut c_void,
) -> hsa_status_t {
    guard("hsa_amd_memory_lock", || {
        let rt = rt()?;
        if agent_ptr.is_null() {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        let p = lock(
            &rt,
            host_ptr,
            size,
            agents,
            num_agent,
            HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED,
        )?;
        // SAFETY: checked non-null; valid per the caller.
        unsafe { out(agent_ptr, p as *mut c_void) }
    })
}

/// # Safety
/// As for `hsa_amd_memory_lock`.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_memory_lock_to_pool(
    host_ptr: *mut c_void,
    size: usize,
    agents: *const hsa_agent_t,
    num_agent: i32,
    pool: hsa_amd_memory_pool_t,
    _flags: u32,
    agent_ptr: *mut *mut c_void,
) -> hsa_status_t {
    guard("hsa_amd_memory_lock_to_pool", || {
        let rt = rt()?;
        let (_, p) = rt.pool(pool)?;
        if agent_ptr.is_null() {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        let a = lock(&rt, host_ptr, size, agents, num_agent, p.global_flags())?;
        // SAFETY: checked non-null; valid per the caller.
        unsafe { out(agent_ptr, a as *mut c_void) }
    })
}

#[no_mangle]
pub extern "C" fn hsa_amd_memory_unlock(host_ptr: *mut c_void) -> hsa_status_t {
    guard("hsa_amd_memory_unlock", || {
        let memory = &rt()?.memory;
        let host = host_ptr as u64;
        let agent_address =
            match memory.remove_at(host, |r| matches!(r.kind, RegionKind::LockedHost { .. })) {
                Some(Region {
                    kind: RegionKind::LockedHost { agent_address },
                    ..
                }) => agent_address,
                _ => host,
            };
        memory
            .remove_at(agent_address, |r| {
                r.kind == RegionKind::Locked && r.host == host
            })
            .map(|_| ())
            .ok_or(HsaError::INVALID_ARGUMENT)
    })
}

#[no_mangle]
pub extern "C" fn hsa_memory_register(ptr: *mut c_void, size: usize) -> hsa_status_t {
    guard("hsa_memory_register", || {
        let rt = rt()?;
        if ptr.is_null() || size == 0 {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        rt.memory.add(Region {
            start: ptr as u64,
            host: ptr as u64,
            len: size as u64,
            kind: RegionKind::Registered,
            owner: rt.cpu_agent().handle(),
            global_flags: HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED,
            user_data: 0,
            mapped_len: size as u64,
        });
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn hsa_memory_deregister(ptr: *mut c_void, _size: usize) -> hsa_status_t {
    guard("hsa_memory_deregister", || {
        rt()?
            .memory
            .remove_at(ptr as u64, |r| r.kind == RegionKind::Registered)
            .map(|_| ())
            .ok_or(HsaError::INVALID_ARGUMENT)
    })
}

/// A synchronous host copy (all memory is host memory).
///
/// # Safety
/// `dst`/`src` must be valid for `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn hsa_memory_copy(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
) -> hsa_status_t {
    guard("hsa_memory_copy", || {
        let rt = rt()?;
        if dst.is_null() || src.is_null() {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        // Any memory of the process will do (as on ROCr), but it has to be there: a bad
        // range is an error, not a SIGSEGV in the caller.
        // An agent address (strict-mode locked memory) is copied through its host bytes.
        let mut host = [0u64; 2];
        for (slot, (what, p)) in host
            .iter_mut()
            .zip([("destination", dst as u64), ("source", src as u64)])
        {
            let region = rt.memory.find(p, size as u64);
            *slot = region.map_or(p, |r| r.host + (p - r.start));
            let pool = matches!(
                region.map(|r| r.kind),
                Some(
                    RegionKind::PoolAllocation { .. }
                        | RegionKind::Vmem { .. }
                        | RegionKind::IpcAttached
                )
            );
            if !pool {
                if let Err(page) = host_range_mapped(*slot, size as u64) {
                    tracing::error!(target: "hsasim", "hsa_memory_copy: {what} range {p:#x}+{size:#x} is not mapped memory (page {page:#x})");
                    return Err(HsaError::INVALID_ARGUMENT);
                }
            }
        }
        // SAFETY: both ranges are mapped memory of `size` bytes (checked above, or pool
        // allocations alive per the caller); `copy` allows overlap.
        unsafe { std::ptr::copy(host[1] as *const u8, host[0] as *mut u8, size) };
        Ok(())
    })
}

/// Fills `count` 32-bit words with `value`.
#[no_mangle]
pub extern "C" fn hsa_amd_memory_fill(ptr: *mut c_void, value: u32, count: usize) -> hsa_status_t {
    guard("hsa_amd_memory_fill", || {
        let rt = rt()?;
        let bytes = count.checked_mul(4).ok_or(HsaError::INVALID_ARGUMENT)?;
        if ptr.is_null() || !(ptr as usize).is_multiple_of(4) {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        let host = match rt.memory.accessible(ptr as u64, bytes as u64) {
            Ok(host) => host,
            Err(why) => {
                tracing::error!(target: "hsasim", "hsa_amd_memory_fill: {ptr:p}+{bytes:#x} {why}");
                return Err(HsaError::INVALID_ARGUMENT);
            }
        };
        let words = host as *mut u32;
        for i in 0..count {
            // SAFETY: the range is a registered, 4-aligned allocation of >= count words.
            unsafe { words.add(i).write(value) };
        }
        Ok(())
    })
}

/// # Safety
/// `info` must be valid with `info->size` set; `accessible`/`num_agents_accessible` null or
/// valid; `alloc` (if given) returns memory for the agent list.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_pointer_info(
    ptr: *const c_void,
    info: *mut hsa_amd_pointer_info_t,
    alloc: Option<unsafe extern "C" fn(usize) -> *mut c_void>,
    num_agents_accessible: *mut u32,
    accessible: *mut *mut hsa_agent_t,
) -> hsa_status_t {
    guard("hsa_amd_pointer_info", || {
        let rt = rt()?;
        if info.is_null() {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        // SAFETY: non-null; the caller sets `size` before calling.
        let declared =
            unsafe { std::ptr::read_unaligned(std::ptr::addr_of!((*info).size)) } as usize;
        if declared < std::mem::size_of::<hsa_amd_pointer_info_t>() {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        let region = rt.memory.find(ptr as u64, 1);
        let result = match region {
            None => hsa_amd_pointer_info_t {
                size: declared as u32,
                type_: HSA_EXT_POINTER_TYPE_UNKNOWN,
                agent_base_address: std::ptr::null_mut(),
                host_base_address: std::ptr::null_mut(),
                size_in_bytes: 0,
                user_data: std::ptr::null_mut(),
                agent_owner: hsa_agent_t::default(),
                global_flags: 0,
            },
            Some(r) => hsa_amd_pointer_info_t {
                size: declared as u32,
                type_: match r.kind {
                    RegionKind::Locked | RegionKind::LockedHost { .. } | RegionKind::Registered => {
                        HSA_EXT_POINTER_TYPE_LOCKED
                    }
                    // Plain (SVM) host memory is not an HSA allocation, as in ROCr.
                    RegionKind::Svm => HSA_EXT_POINTER_TYPE_UNKNOWN,
                    RegionKind::IpcAttached => HSA_EXT_POINTER_TYPE_IPC,
                    _ => HSA_EXT_POINTER_TYPE_HSA,
                },
                agent_base_address: match r.kind {
                    RegionKind::LockedHost { agent_address } => agent_address,
                    _ => r.start,
                } as *mut c_void,
                // hsasim's private view of device memory is not the program's business.
                host_base_address: match r.kind {
                    RegionKind::PoolAllocation { .. }
                    | RegionKind::Vmem { .. }
                    | RegionKind::IpcAttached => r.start,
                    _ => r.host,
                } as *mut c_void,
                size_in_bytes: r.len as usize,
                user_data: r.user_data as *mut c_void,
                agent_owner: r.owner,
                global_flags: r.global_flags,
            },
        };
        // SAFETY: `info` is valid for at least the struct size (checked above).
        unsafe { out(info, result) }?;
        if !num_agents_accessible.is_null() || !accessible.is_null() {
            let list: Vec<hsa_agent_t> = if region.is_some() {
                rt.agents.iter().map(|a| a.handle()).collect()
            } else {
                Vec::new()
            };
            if !num_agents_accessible.is_null() {
                // SAFETY: non-null and valid per the caller.
                unsafe { out(num_agents_accessible, list.len() as u32) }?;
            }
            if !accessible.is_null() {
                let alloc = alloc.ok_or(HsaError::INVALID_ARGUMENT)?;
                // SAFETY: the client's allocator; we write `list.len()` agents into it.
                unsafe {
                    let buf = alloc(list.len().max(1) * std::mem::size_of::<hsa_agent_t>())
                        .cast::<hsa_agent_t>();
                    if buf.is_null() {
                        return Err(HsaError::OUT_OF_RESOURCES);
                    }
                    for (i, a) in list.iter().enumerate() {
                        buf.add(i).write_unaligned(*a);
                    }
                    out(accessible, buf)?;
                }
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn hsa_amd_pointer_info_set_userdata(
    ptr: *const c_void,
    userdata: *mut c_void,
) -> hsa_status_t {
    guard("hsa_amd_pointer_info_set_userdata", || {
        let rt = rt()?;
        let r = rt
            .memory
            .find(ptr as u64, 1)
            .ok_or(HsaError::INVALID_ARGUMENT)?;
        rt.memory.set_user_data(r.start, userdata as u64)
    })
}

/// `HSA_AMD_COHERENCY_TYPE_COHERENT` (0) unless set otherwise; GPU agents only.
///
/// # Safety
/// `type_` must be null or valid for a u32.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_coherency_get_type(
    agent: hsa_agent_t,
    type_: *mut u32,
) -> hsa_status_t {
    guard("hsa_amd_coherency_get_type", || {
        let rt = rt()?;
        let a = rt.agent(agent)?;
        if !a.is_gpu() {
            return Err(HsaError::INVALID_AGENT);
        }
        // SAFETY: valid per the caller.
        unsafe { out(type_, a.coherency_type()) }
    })
}

/// Records the type (reported back by `hsa_amd_coherency_get_type`); simulated memory is
/// coherent either way.
#[no_mangle]
pub extern "C" fn hsa_amd_coherency_set_type(agent: hsa_agent_t, type_: u32) -> hsa_status_t {
    guard("hsa_amd_coherency_set_type", || {
        let rt = rt()?;
        let a = rt.agent(agent)?;
        if !a.is_gpu() {
            return Err(HsaError::INVALID_AGENT);
        }
        if type_ > 1 {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        a.coherency
            .store(type_, std::sync::atomic::Ordering::Relaxed);
        tracing::info!(target: "hsasim", node = a.node, coherent = (type_ == 0), "coherency type set (recorded; memory stays coherent)");
        Ok(())
    })
}

include!(concat!(env!("OUT_DIR"), "/symver_api_memory.rs"));

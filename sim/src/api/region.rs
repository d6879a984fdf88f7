//! The HSA core (pre-AMD-pool) views of the same machine: regions, caches, wavefronts,
//! exception policies and the region-based allocation calls.
//!
//! A region is one of the agent's memory pools seen through `hsa.h`: `hsa_region_t` has the
//! same handle as the `hsa_amd_memory_pool_t`, so memory allocated either way is the same
//! allocation (as in ROCr, where regions and pools share one implementation).

use super::shell::guard;
use super::shell::iterate;
use super::system::isa_get_info;
use crate::agent::{isa_from_handle, AgentKind};
use crate::cabi::{out, put, put_bytes};
use crate::error::{HsaError, HsaResult};
use crate::host_map::PAGE;
use crate::memory::{pool_allocate, pool_free, Pool, PoolKind};
use crate::system::rt;
use hsa_abi::*;
use hsasim_isa::GfxModel;
use std::ffi::c_void;
use std::sync::Arc;

// `hsa_region_info_t` and the AMD additions (`hsa_amd_region_info_t`).
const REGION_INFO_SEGMENT: u32 = 0;
const REGION_INFO_GLOBAL_FLAGS: u32 = 1;
const REGION_INFO_SIZE: u32 = 2;
const REGION_INFO_ALLOC_MAX_SIZE: u32 = 4;
const REGION_INFO_RUNTIME_ALLOC_ALLOWED: u32 = 5;
const REGION_INFO_RUNTIME_ALLOC_GRANULE: u32 = 6;
const REGION_INFO_RUNTIME_ALLOC_ALIGNMENT: u32 = 7;
const REGION_INFO_ALLOC_MAX_PRIVATE_WORKGROUP_SIZE: u32 = 8;
const AMD_REGION_INFO_HOST_ACCESSIBLE: u32 = 0xA000;
const AMD_REGION_INFO_BASE: u32 = 0xA001;
const AMD_REGION_INFO_BUS_WIDTH: u32 = 0xA002;
const AMD_REGION_INFO_MAX_CLOCK_FREQUENCY: u32 = 0xA003;
const REGION_SEGMENT_GLOBAL: u32 = 0;
const REGION_SEGMENT_GROUP: u32 = 3;
const REGION_GLOBAL_FLAG_KERNARG: u32 = 1;
const REGION_GLOBAL_FLAG_FINE_GRAINED: u32 = 2;
const REGION_GLOBAL_FLAG_COARSE_GRAINED: u32 = 4;

fn region_flags(p: &Pool) -> u32 {
    match p.kind {
        PoolKind::Device | PoolKind::SystemCoarse => REGION_GLOBAL_FLAG_COARSE_GRAINED,
        PoolKind::System => REGION_GLOBAL_FLAG_FINE_GRAINED,
        PoolKind::Kernarg => REGION_GLOBAL_FLAG_FINE_GRAINED | REGION_GLOBAL_FLAG_KERNARG,
        PoolKind::Group => 0,
    }
}

fn pool_of_region(region: hsa_region_t) -> HsaResult<Arc<Pool>> {
    let rt = rt()?;
    rt.pool(hsa_amd_memory_pool_t {
        handle: region.handle,
    })
    .map(|(_, p)| p.clone())
    .map_err(|_| HsaError::new(status::ERROR_INVALID_REGION))
}

/// Calls `callback` for each of the agent's regions (its memory pools, in pool order).
///
/// # Safety
/// `callback` is called with `data`, which must be what it expects.
#[no_mangle]
pub unsafe extern "C" fn hsa_agent_iterate_regions(
    agent: hsa_agent_t,
    callback: Option<RegionCallback>,
    data: *mut c_void,
) -> hsa_status_t {
    iterate("hsa_agent_iterate_regions", || {
        let rt = rt()?;
        let a = rt.agent(agent)?;
        let cb = callback.ok_or(HsaError::INVALID_ARGUMENT)?;
        for p in &a.pools {
            let r = hsa_region_t {
                handle: Arc::as_ptr(p) as u64,
            };
            // SAFETY: the client's callback with its own data.
            let s = unsafe { cb(r, data) };
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
pub unsafe extern "C" fn hsa_region_get_info(
    region: hsa_region_t,
    attribute: u32,
    value: *mut c_void,
) -> hsa_status_t {
    guard("hsa_region_get_info", || {
        let p = pool_of_region(region)?;
        let device = p.kind == PoolKind::Device;
        // SAFETY (all calls): `value` is valid for the attribute's type per the caller.
        unsafe {
            match attribute {
                REGION_INFO_SEGMENT => put(
                    value,
                    if p.kind == PoolKind::Group {
                        REGION_SEGMENT_GROUP
                    } else {
                        REGION_SEGMENT_GLOBAL
                    },
                ),
                REGION_INFO_GLOBAL_FLAGS => put(value, region_flags(&p)),
                REGION_INFO_SIZE | REGION_INFO_ALLOC_MAX_SIZE => put(value, p.size as usize),
                REGION_INFO_RUNTIME_ALLOC_ALLOWED => put(value, p.alloc_allowed()),
                REGION_INFO_RUNTIME_ALLOC_GRANULE | REGION_INFO_RUNTIME_ALLOC_ALIGNMENT => {
                    put(value, PAGE as usize)
                }
                // Only meaningful for the private segment, which no region models.
                REGION_INFO_ALLOC_MAX_PRIVATE_WORKGROUP_SIZE => put(value, 0u32),
                // As on a discrete GPU: device memory is not host-accessible through the
                // region API (the simulator could, but clients must not rely on it).
                AMD_REGION_INFO_HOST_ACCESSIBLE => put(value, !device),
                AMD_REGION_INFO_BASE => put(value, std::ptr::null_mut::<c_void>()),
                AMD_REGION_INFO_BUS_WIDTH => put(value, if device { 8192u32 } else { 0 }),
                AMD_REGION_INFO_MAX_CLOCK_FREQUENCY => put(value, if device { 1300u32 } else { 0 }),
                _ => {
                    super::shell::report_once(
                        "hsa_region_get_info(attr)",
                        &format!("hsa_region_get_info: attribute {attribute:#x} is not modelled; returning HSA_STATUS_ERROR_INVALID_ARGUMENT"),
                    );
                    Err(HsaError::INVALID_ARGUMENT)
                }
            }
        }
    })
}

/// Allocates from the region's pool (same accounting, same allocation kind).
///
/// # Safety
/// `ptr` must be null or valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn hsa_memory_allocate(
    region: hsa_region_t,
    size: usize,
    ptr: *mut *mut c_void,
) -> hsa_status_t {
    guard("hsa_memory_allocate", || {
        let rt = rt()?;
        let p = pool_of_region(region)?;
        if ptr.is_null() {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        crate::fail::check(crate::fail::FailPoint::PoolAllocate, "hsa_memory_allocate")?;
        let a = pool_allocate(
            &rt.memory,
            &p,
            region.handle,
            size as u64,
            rt.config.large_bar,
        )?;
        // SAFETY: checked non-null; valid per the caller.
        unsafe { out(ptr, a.cast::<c_void>()) }
    })
}

#[no_mangle]
pub extern "C" fn hsa_memory_free(ptr: *mut c_void) -> hsa_status_t {
    guard("hsa_memory_free", || {
        let rt = rt()?;
        pool_free(&rt.memory, ptr as u64, |h| rt.pool_by_handle(h))
    })
}

/// Ownership hints have no effect on a shared-memory machine; the call checks that the
/// pointer is an allocation and the agent exists.
#[no_mangle]
pub extern "C" fn hsa_memory_assign_agent(
    ptr: *mut c_void,
    agent: hsa_agent_t,
    access: u32,
) -> hsa_status_t {
    guard("hsa_memory_assign_agent", || {
        let rt = rt()?;
        rt.agent(agent)?;
        // HSA_ACCESS_PERMISSION_RO = 1 .. RW = 3
        if !(1..=3).contains(&access) {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        rt.memory
            .find(ptr as u64, 1)
            .map(|_| ())
            .ok_or(HsaError::INVALID_ARGUMENT)
    })
}

// ---- caches --------------------------------------------------------------------------

/// One cache level of an agent model; `hsa_cache_t` handles are addresses of entries.
pub struct CacheDesc {
    name: &'static str,
    level: u8,
    size: u32,
}

const fn cache(name: &'static str, level: u8, size: u32) -> CacheDesc {
    CacheDesc { name, level, size }
}

static CPU_CACHES: [CacheDesc; 3] = [
    cache("L1", 1, 32 << 10),
    cache("L2", 2, 1 << 20),
    cache("L3", 3, 32 << 20),
];
/// MI300X: 16 KiB vector L1 per CU, 4 MiB L2 per XCD, 256 MiB Infinity Cache.
static GFX942_CACHES: [CacheDesc; 3] = [
    cache("L1", 1, 16 << 10),
    cache("L2", 2, 4 << 20),
    cache("L3", 3, 256 << 20),
];
/// MI250X (per GCD): 16 KiB L1 per CU, 8 MiB L2.
static GFX90A_CACHES: [CacheDesc; 2] = [cache("L1", 1, 16 << 10), cache("L2", 2, 8 << 20)];

fn caches_of(kind: AgentKind, model: GfxModel) -> &'static [CacheDesc] {
    match (kind, model) {
        (AgentKind::Cpu, _) => &CPU_CACHES,
        (AgentKind::Gpu, GfxModel::Gfx942) => &GFX942_CACHES,
        (AgentKind::Gpu, GfxModel::Gfx90a) => &GFX90A_CACHES,
    }
}

fn cache_from_handle(h: hsa_cache_t) -> HsaResult<&'static CacheDesc> {
    CPU_CACHES
        .iter()
        .chain(GFX942_CACHES.iter())
        .chain(GFX90A_CACHES.iter())
        .find(|c| *c as *const CacheDesc as u64 == h.handle)
        .ok_or(HsaError::new(status::ERROR_INVALID_CACHE))
}

pub use hsa_abi::hsa_cache_t;

/// The agent's caches, L1 first (the same sizes `HSA_AGENT_INFO_CACHE_SIZE` reports).
///
/// # Safety
/// `callback` is called with `data`, which must be what it expects.
#[no_mangle]
pub unsafe extern "C" fn hsa_agent_iterate_caches(
    agent: hsa_agent_t,
    callback: Option<CacheCallback>,
    data: *mut c_void,
) -> hsa_status_t {
    iterate("hsa_agent_iterate_caches", || {
        let rt = rt()?;
        let a = rt.agent(agent)?;
        let cb = callback.ok_or(HsaError::INVALID_ARGUMENT)?;
        for c in caches_of(a.kind, a.model) {
            let h = hsa_cache_t {
                handle: c as *const CacheDesc as u64,
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
/// `value` must be null or valid for the attribute's type (NAME: NAME_LENGTH bytes).
#[no_mangle]
pub unsafe extern "C" fn hsa_cache_get_info(
    cache: hsa_cache_t,
    attribute: u32,
    value: *mut c_void,
) -> hsa_status_t {
    guard("hsa_cache_get_info", || {
        rt()?;
        let c = cache_from_handle(cache)?;
        // SAFETY (all calls): valid for the attribute's type per the caller.
        unsafe {
            match attribute {
                // HSA_CACHE_INFO_NAME_LENGTH, _NAME, _LEVEL, _SIZE
                0 => put(value, c.name.len() as u32),
                1 => put_bytes(value, c.name.as_bytes()),
                2 => put(value, c.level),
                3 => put(value, c.size),
                _ => Err(HsaError::INVALID_ARGUMENT),
            }
        }
    })
}

// ---- ISA details ---------------------------------------------------------------------

/// The one wavefront size of GFX9 compute (wave64).
static WAVE64: u32 = 64;

pub use hsa_abi::hsa_wavefront_t;

fn wave64() -> hsa_wavefront_t {
    hsa_wavefront_t {
        handle: &WAVE64 as *const u32 as u64,
    }
}

/// Deprecated form of `hsa_isa_get_info_alt` with a call-convention index (only 0 exists).
///
/// # Safety
/// `value` must be null or valid for the attribute's type.
#[no_mangle]
pub unsafe extern "C" fn hsa_isa_get_info(
    isa: hsa_isa_t,
    attribute: u32,
    index: u32,
    value: *mut c_void,
) -> hsa_status_t {
    guard("hsa_isa_get_info", || {
        rt()?;
        let i = isa_from_handle(isa)?;
        if index != 0 {
            return Err(HsaError::new(status::ERROR_INVALID_INDEX));
        }
        // SAFETY: forwarded caller contract.
        unsafe { isa_get_info(i, attribute, value) }
    })
}

/// # Safety
/// `callback` is called with `data`, which must be what it expects.
#[no_mangle]
pub unsafe extern "C" fn hsa_isa_iterate_wavefronts(
    isa: hsa_isa_t,
    callback: Option<WavefrontCallback>,
    data: *mut c_void,
) -> hsa_status_t {
    iterate("hsa_isa_iterate_wavefronts", || {
        rt()?;
        isa_from_handle(isa)?;
        let cb = callback.ok_or(HsaError::INVALID_ARGUMENT)?;
        // SAFETY: the client's callback with its own data.
        Ok(unsafe { cb(wave64(), data) })
    })
}

/// # Safety
/// `value` must be null or valid for a u32.
#[no_mangle]
pub unsafe extern "C" fn hsa_wavefront_get_info(
    wavefront: hsa_wavefront_t,
    attribute: u32,
    value: *mut c_void,
) -> hsa_status_t {
    guard("hsa_wavefront_get_info", || {
        rt()?;
        if wavefront.handle != wave64().handle {
            return Err(HsaError::new(status::ERROR_INVALID_WAVEFRONT));
        }
        match attribute {
            // HSA_WAVEFRONT_INFO_SIZE
            // SAFETY: valid per the caller.
            0 => unsafe { put(value, WAVE64) },
            _ => Err(HsaError::INVALID_ARGUMENT),
        }
    })
}

/// GFX9 reports floating-point exceptions (DETECT) and does not trap on them (BREAK).
const EXCEPTION_POLICY_DETECT: u16 = 2;

fn check_profile(profile: u32) -> HsaResult {
    if profile > HSA_PROFILE_FULL {
        return Err(HsaError::INVALID_ARGUMENT);
    }
    Ok(())
}

/// # Safety
/// `mask` must be null or valid for a u16.
#[no_mangle]
pub unsafe extern "C" fn hsa_agent_get_exception_policies(
    agent: hsa_agent_t,
    profile: u32,
    mask: *mut u16,
) -> hsa_status_t {
    guard("hsa_agent_get_exception_policies", || {
        let rt = rt()?;
        let a = rt.agent(agent)?;
        check_profile(profile)?;
        let m = if a.is_gpu() {
            EXCEPTION_POLICY_DETECT
        } else {
            0
        };
        // SAFETY: valid per the caller.
        unsafe { out(mask, m) }
    })
}

/// # Safety
/// `mask` must be null or valid for a u16.
#[no_mangle]
pub unsafe extern "C" fn hsa_isa_get_exception_policies(
    isa: hsa_isa_t,
    profile: u32,
    mask: *mut u16,
) -> hsa_status_t {
    guard("hsa_isa_get_exception_policies", || {
        rt()?;
        isa_from_handle(isa)?;
        check_profile(profile)?;
        // SAFETY: valid per the caller.
        unsafe { out(mask, EXCEPTION_POLICY_DETECT) }
    })
}

/// Rounding is per instruction on GFX9: `HSA_ROUND_METHOD_SINGLE` for every FP type.
///
/// # Safety
/// `round_method` must be null or valid for a u32.
#[no_mangle]
pub unsafe extern "C" fn hsa_isa_get_round_method(
    isa: hsa_isa_t,
    fp_type: u32,
    flush_mode: u32,
    round_method: *mut u32,
) -> hsa_status_t {
    guard("hsa_isa_get_round_method", || {
        rt()?;
        isa_from_handle(isa)?;
        // HSA_FP_TYPE_16/32/64 = 1/2/4; HSA_FLUSH_MODE_FTZ/NON_FTZ = 1/2.
        if ![1, 2, 4].contains(&fp_type) || !(1..=2).contains(&flush_mode) {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        // SAFETY: valid per the caller.
        unsafe { out(round_method, 1u32) }
    })
}

include!(concat!(env!("OUT_DIR"), "/symver_api_region.rs"));

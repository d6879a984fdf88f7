//! Runtime, system, agent and ISA queries.

use super::shell::{guard, iterate};
use crate::agent::{
    isa_for, isa_from_handle, isa_handle, Agent, IsaDesc, ISAS, QUEUE_MAX_PACKETS,
    QUEUE_MIN_PACKETS, WORKGROUP_MAX,
};
use crate::cabi::{out, put, put_bytes, put_fixed_str};
use crate::clock::now_ns;
use crate::error::{status_text, HsaError, HsaResult};
use crate::system::{self, rt};
use hsa_abi::*;
use hsasim_isa::GfxModel;
use std::ffi::{c_char, c_void, CStr};

#[no_mangle]
pub extern "C" fn hsa_init() -> hsa_status_t {
    guard("hsa_init", system::init)
}

#[no_mangle]
pub extern "C" fn hsa_shut_down() -> hsa_status_t {
    guard("hsa_shut_down", system::shut_down)
}

/// # Safety
/// `out_string` must be null or valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn hsa_status_string(
    code: hsa_status_t,
    out_string: *mut *const c_char,
) -> hsa_status_t {
    guard("hsa_status_string", || {
        let text = status_text(code).ok_or(HsaError::INVALID_ARGUMENT)?;
        // Leaked once per distinct status: the strings must outlive every caller.
        static CACHE: parking_lot::Mutex<Vec<(hsa_status_t, &'static CStr)>> =
            parking_lot::Mutex::new(Vec::new());
        let mut cache = CACHE.lock();
        let s = match cache.iter().find(|(c, _)| *c == code) {
            Some((_, s)) => *s,
            None => {
                let owned = std::ffi::CString::new(text).map_err(|_| HsaError::GENERIC)?;
                let s: &'static CStr = Box::leak(owned.into_boxed_c_str());
                cache.push((code, s));
                s
            }
        };
        // SAFETY: `out_string` is valid per the caller.
        unsafe { out(out_string, s.as_ptr()) }
    })
}

/// # Safety
/// `value` must be null or valid for the attribute's type.
#[no_mangle]
pub unsafe extern "C" fn hsa_system_get_info(attr: u32, value: *mut c_void) -> hsa_status_t {
    guard("hsa_system_get_info", || {
        let runtime = rt()?;
        use system_info::*;
        // SAFETY (all calls): `value` is valid for the attribute's type per the caller.
        unsafe {
            match attr {
                VERSION_MAJOR => put(value, 1u16),
                VERSION_MINOR => put(value, 1u16),
                TIMESTAMP => put(
                    value,
                    if crate::virtual_time::on() {
                        crate::virtual_time::host_now()
                    } else {
                        now_ns()
                    },
                ),
                TIMESTAMP_FREQUENCY => put(value, 1_000_000_000u64),
                HSASIM_VIRTUAL_TIME => put(value, crate::virtual_time::on()),
                HSASIM_CU_USE => cu_use(value.cast()),
                HSASIM_HQD_SLOTS => hqd_slots(&runtime, value),
                SIGNAL_MAX_WAIT => put(value, u64::MAX),
                ENDIANNESS => put(value, HSA_ENDIANNESS_LITTLE),
                MACHINE_MODEL => put(value, HSA_MACHINE_MODEL_LARGE),
                EXTENSIONS => {
                    // One bit per extension id: only HSA_EXTENSION_AMD_LOADER (0x201).
                    let mut mask = [0u8; 128];
                    let id = usize::from(super::extension::EXTENSION_AMD_LOADER);
                    mask[id / 8] |= 1 << (id % 8);
                    put(value, mask)
                }
                AMD_BUILD_VERSION => {
                    static VERSION: &CStr = c"hsasim 0.1";
                    put(value, VERSION.as_ptr())
                }
                AMD_SVM_SUPPORTED => put(value, true),
                // The modelled parts run xnack-: the GPU reaches only memory the runtime
                // mapped for it (pool allocations, locked/registered host memory), never
                // arbitrary pageable memory, so clients must stage or lock (as ROCr reports
                // on xnack- systems).
                AMD_SVM_ACCESSIBLE_BY_DEFAULT => put(value, false),
                AMD_MWAITX_ENABLED | AMD_DMABUF_SUPPORTED => put(value, false),
                _ => Err(HsaError::INVALID_ARGUMENT),
            }
        }
    })
}

/// [`system_info::HSASIM_CU_USE`]: the compute units in use over the virtual time line
/// (none on host time).
///
/// # Safety
/// `value` must be null or point to a valid `hsasim_cu_use_t` whose `steps` has room for
/// `capacity` entries (or is null).
unsafe fn cu_use(value: *mut hsa_abi::hsasim_cu_use_t) -> HsaResult {
    if value.is_null() {
        return Err(HsaError::INVALID_ARGUMENT);
    }
    let (steps, truncated) = rt()?
        .vtime
        .as_ref()
        .map_or_else(Default::default, |v| v.cu_use());
    // SAFETY: a valid `hsasim_cu_use_t` per the caller.
    let query = unsafe { &mut *value };
    if !query.steps.is_null() {
        for (i, &(node, at_ns, cus)) in steps.iter().take(query.capacity as usize).enumerate() {
            // SAFETY: `i` < `capacity`, the room the caller gave.
            unsafe {
                query
                    .steps
                    .add(i)
                    .write(hsa_abi::hsasim_cu_step_t { node, cus, at_ns })
            };
        }
    }
    query.count = steps.len() as u64;
    query.truncated = u64::from(truncated);
    Ok(())
}

/// [`system_info::HSASIM_HQD_SLOTS`]: the slots held on the virtual time line up to the
/// host's virtual time (none on host time).
///
/// # Safety
/// `value` must be null or point to a valid `hsasim_hqd_slots_t` whose `slots` has room for
/// `capacity` entries (or is null).
unsafe fn hqd_slots(rt: &crate::system::Runtime, value: *mut c_void) -> HsaResult {
    if value.is_null() {
        return Err(HsaError::INVALID_ARGUMENT);
    }
    let mapped = rt
        .vtime
        .as_ref()
        .and_then(|v| v.slots())
        .map(|s| s.mapped(crate::virtual_time::host_now()))
        .unwrap_or_default();
    // SAFETY: valid per the caller.
    let query = unsafe { &mut *value.cast::<hsasim_hqd_slots_t>() };
    if !query.slots.is_null() {
        for (i, m) in mapped.iter().take(query.capacity as usize).enumerate() {
            // SAFETY: i < capacity, which the caller made room for.
            unsafe {
                query.slots.add(i).write(hsasim_hqd_slot_t {
                    pid: m.pid,
                    slot: m.slot,
                    pipe: m.pipe,
                    reserved: 0,
                    queue_id: m.queue_id,
                    start_ns: m.from_ns,
                    end_ns: m.to_ns,
                })
            };
        }
    }
    query.count = mapped.len() as u64;
    Ok(())
}

/// Only `HSA_EXTENSION_AMD_LOADER` v1.0..1.3 is supported (see `api::extension`).
///
/// # Safety
/// `result` must be null or valid for one bool write.
#[no_mangle]
pub unsafe extern "C" fn hsa_system_extension_supported(
    extension: u16,
    major: u16,
    minor: u16,
    result: *mut bool,
) -> hsa_status_t {
    guard("hsa_system_extension_supported", || {
        rt()?;
        let yes = super::extension::supported(extension, major, Some(minor));
        tracing::debug!(target: "hsasim", extension, major, minor, yes, "extension query");
        // SAFETY: valid per the caller.
        unsafe { out(result, yes) }
    })
}

/// # Safety
/// `version_minor` and `result` must be null or valid.
#[no_mangle]
pub unsafe extern "C" fn hsa_system_major_extension_supported(
    extension: u16,
    major: u16,
    version_minor: *mut u16,
    result: *mut bool,
) -> hsa_status_t {
    guard("hsa_system_major_extension_supported", || {
        rt()?;
        let minor = super::extension::newest_minor(extension, major);
        tracing::debug!(target: "hsasim", extension, major, ?minor, "extension query");
        if !version_minor.is_null() {
            // SAFETY: non-null and valid per the caller.
            unsafe { out(version_minor, minor.unwrap_or(0)) }?;
        }
        // SAFETY: valid per the caller.
        unsafe { out(result, minor.is_some()) }
    })
}

/// # Safety
/// `result` must be null or valid for one bool write.
#[no_mangle]
pub unsafe extern "C" fn hsa_agent_extension_supported(
    _extension: u16,
    agent: hsa_agent_t,
    _major: u16,
    _minor: u16,
    result: *mut bool,
) -> hsa_status_t {
    guard("hsa_agent_extension_supported", || {
        rt()?.agent(agent)?;
        // SAFETY: valid per the caller.
        unsafe { out(result, false) }
    })
}

/// # Safety
/// `version_minor` and `result` must be null or valid.
#[no_mangle]
pub unsafe extern "C" fn hsa_agent_major_extension_supported(
    _extension: u16,
    agent: hsa_agent_t,
    _major: u16,
    version_minor: *mut u16,
    result: *mut bool,
) -> hsa_status_t {
    guard("hsa_agent_major_extension_supported", || {
        rt()?.agent(agent)?;
        if !version_minor.is_null() {
            // SAFETY: non-null and valid per the caller.
            unsafe { out(version_minor, 0) }?;
        }
        // SAFETY: valid per the caller.
        unsafe { out(result, false) }
    })
}

/// # Safety
/// `name` must be null or valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn hsa_extension_get_name(
    extension: u16,
    name: *mut *const c_char,
) -> hsa_status_t {
    guard("hsa_extension_get_name", || {
        rt()?;
        let s: &'static CStr = match extension {
            0 => c"HSA_EXTENSION_FINALIZER",
            1 => c"HSA_EXTENSION_IMAGES",
            2 => c"HSA_EXTENSION_PERFORMANCE_COUNTERS",
            3 => c"HSA_EXTENSION_PROFILING_EVENTS",
            0x200 => c"HSA_EXTENSION_AMD_PROFILER",
            0x201 => c"HSA_EXTENSION_AMD_LOADER",
            0x202 => c"HSA_EXTENSION_AMD_AQLPROFILE",
            _ => return Err(HsaError::INVALID_ARGUMENT),
        };
        // SAFETY: valid per the caller.
        unsafe { out(name, s.as_ptr()) }
    })
}

/// Calls `callback` for the CPU agent, then each GPU agent; stops early on a non-SUCCESS
/// return and passes that status back (INFO_BREAK included), as ROCr does.
///
/// # Safety
/// `callback` is called with `data`, which must be what it expects.
#[no_mangle]
pub unsafe extern "C" fn hsa_iterate_agents(
    callback: Option<AgentCallback>,
    data: *mut c_void,
) -> hsa_status_t {
    iterate("hsa_iterate_agents", || {
        let rt = rt()?;
        let cb = callback.ok_or(HsaError::INVALID_ARGUMENT)?;
        for a in &rt.agents {
            // SAFETY: the client's callback, called with its own data pointer.
            let s = unsafe { cb(a.handle(), data) };
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
pub unsafe extern "C" fn hsa_agent_get_info(
    agent: hsa_agent_t,
    attr: u32,
    value: *mut c_void,
) -> hsa_status_t {
    guard("hsa_agent_get_info", || {
        let rt = rt()?;
        let a = rt.agent(agent)?;
        // SAFETY: forwarded caller contract.
        unsafe { agent_get_info(a, attr, value, rt.cpu_agent().handle()) }
    })
}

/// # Safety
/// `callback` is called with `data`, which must be what it expects.
#[no_mangle]
pub unsafe extern "C" fn hsa_agent_iterate_isas(
    agent: hsa_agent_t,
    callback: Option<IsaCallback>,
    data: *mut c_void,
) -> hsa_status_t {
    iterate("hsa_agent_iterate_isas", || {
        let rt = rt()?;
        let a = rt.agent(agent)?;
        let cb = callback.ok_or(HsaError::INVALID_ARGUMENT)?;
        if !a.is_gpu() {
            return Ok(status::SUCCESS);
        }
        // SAFETY: the client's callback with its own data.
        Ok(unsafe { cb(isa_handle(isa_for(a.model)), data) })
    })
}

/// # Safety
/// `value` must be null or valid for the attribute's type.
#[no_mangle]
pub unsafe extern "C" fn hsa_isa_get_info_alt(
    isa: hsa_isa_t,
    attr: u32,
    value: *mut c_void,
) -> hsa_status_t {
    guard("hsa_isa_get_info_alt", || {
        rt()?;
        let i = isa_from_handle(isa)?;
        // SAFETY: forwarded caller contract.
        unsafe { isa_get_info(i, attr, value) }
    })
}

/// # Safety
/// `name` must be null or a NUL-terminated string; `isa` null or valid.
#[no_mangle]
pub unsafe extern "C" fn hsa_isa_from_name(
    name: *const c_char,
    isa: *mut hsa_isa_t,
) -> hsa_status_t {
    guard("hsa_isa_from_name", || {
        rt()?;
        if name.is_null() {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        // SAFETY: non-null NUL-terminated string per the caller.
        let n = unsafe { CStr::from_ptr(name) }
            .to_str()
            .map_err(|_| HsaError::INVALID_ISA_NAME)?;
        let found = ISAS
            .iter()
            .find(|i| i.name == n || i.name.split(':').next() == Some(n))
            .ok_or(HsaError::INVALID_ISA_NAME)?;
        // SAFETY: valid per the caller.
        unsafe { out(isa, isa_handle(found)) }
    })
}

/// # Safety
/// `result` must be null or valid.
#[no_mangle]
pub unsafe extern "C" fn hsa_isa_compatible(
    code_isa: hsa_isa_t,
    agent_isa: hsa_isa_t,
    result: *mut bool,
) -> hsa_status_t {
    guard("hsa_isa_compatible", || {
        rt()?;
        let a = isa_from_handle(code_isa)?;
        let b = isa_from_handle(agent_isa)?;
        // SAFETY: valid per the caller.
        unsafe { out(result, a.model == b.model) }
    })
}

/// `hsa_agent_get_info` for `a`, as ROCr answers for the modelled part. `nearest_cpu` is the
/// CPU agent's handle.
///
/// # Safety
/// `value` must be null or valid for the attribute's documented type.
unsafe fn agent_get_info(
    a: &Agent,
    attr: u32,
    value: *mut c_void,
    nearest_cpu: hsa_agent_t,
) -> HsaResult {
    use agent_info::*;
    let gpu = a.is_gpu();
    let device_pool = a.pools.first();
    // SAFETY (all `put` calls below): `value` is valid for the attribute's type per the
    // caller; the types are those `hsa.h` / `hsa_ext_amd.h` document for each attribute.
    unsafe {
        match attr {
            NAME => put_fixed_str::<64>(
                value,
                if gpu {
                    a.model.processor()
                } else {
                    "hsasim CPU"
                },
            ),
            VENDOR_NAME => put_fixed_str::<64>(value, if gpu { "AMD" } else { "CPU" }),
            FEATURE => put(
                value,
                if gpu {
                    HSA_AGENT_FEATURE_KERNEL_DISPATCH
                } else {
                    0u32
                },
            ),
            MACHINE_MODEL => put(value, HSA_MACHINE_MODEL_LARGE),
            PROFILE => put(value, HSA_PROFILE_BASE),
            DEFAULT_FLOAT_ROUNDING_MODE => put(value, HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR),
            BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES => {
                put(value, HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR)
            }
            FAST_F16_OPERATION => put(value, false),
            WAVEFRONT_SIZE => put(value, if gpu { 64u32 } else { 0 }),
            WORKGROUP_MAX_DIM => put(value, if gpu { [1024u16; 3] } else { [0u16; 3] }),
            WORKGROUP_MAX_SIZE => put(value, if gpu { WORKGROUP_MAX } else { 0 }),
            GRID_MAX_DIM => put(value, if gpu { [u32::MAX; 3] } else { [0u32; 3] }),
            GRID_MAX_SIZE => put(value, if gpu { u32::MAX } else { 0 }),
            FBARRIER_MAX_SIZE => put(value, if gpu { 32u32 } else { 0 }),
            QUEUES_MAX => put(value, a.max_queues),
            QUEUE_MIN_SIZE => put(value, if gpu { QUEUE_MIN_PACKETS } else { 0 }),
            QUEUE_MAX_SIZE => put(value, if gpu { QUEUE_MAX_PACKETS } else { 0 }),
            QUEUE_TYPE => put(value, HSA_QUEUE_TYPE_MULTI),
            NODE | AMD_DRIVER_NODE_ID => put(value, a.node),
            DEVICE => put(
                value,
                if gpu {
                    HSA_DEVICE_TYPE_GPU
                } else {
                    HSA_DEVICE_TYPE_CPU
                },
            ),
            CACHE_SIZE => put(
                value,
                match (gpu, a.model) {
                    (false, _) => [32u32 << 10, 1 << 20, 32 << 20, 0],
                    (true, GfxModel::Gfx942) => [16 << 10, 4 << 20, 256 << 20, 0],
                    (true, GfxModel::Gfx90a) => [16 << 10, 8 << 20, 0, 0],
                },
            ),
            ISA => put(
                value,
                if gpu {
                    isa_handle(isa_for(a.model))
                } else {
                    hsa_isa_t { handle: 0 }
                },
            ),
            EXTENSIONS => put(value, [0u8; 128]),
            VERSION_MAJOR => put(value, 1u16),
            VERSION_MINOR => put(value, 1u16),
            AMD_CHIP_ID => put(value, if gpu { a.chip_id() } else { 0 }),
            AMD_CACHELINE_SIZE => put(value, if gpu { 128u32 } else { 64 }),
            AMD_COMPUTE_UNIT_COUNT | AMD_COOPERATIVE_COMPUTE_UNIT_COUNT => {
                put(value, a.compute_units)
            }
            AMD_MAX_CLOCK_FREQUENCY => put(
                value,
                if gpu {
                    a.model.shader_clock_mhz()
                } else {
                    3000u32
                },
            ),
            AMD_MAX_ADDRESS_WATCH_POINTS => put(value, if gpu { 4u32 } else { 0 }),
            AMD_BDFID => put(value, if gpu { (0x10 + a.node) << 8 } else { 0u32 }),
            AMD_DOMAIN => put(value, 0u32),
            AMD_MEMORY_WIDTH => put(value, if gpu { 8192u32 } else { 0 }),
            AMD_MEMORY_MAX_FREQUENCY => put(value, if gpu { 1300u32 } else { 0 }),
            AMD_PRODUCT_NAME => put_fixed_str::<64>(value, &a.product_name()),
            AMD_MAX_WAVES_PER_CU => put(value, if gpu { 32u32 } else { 0 }),
            AMD_NUM_SIMDS_PER_CU => put(value, if gpu { 4u32 } else { 0 }),
            AMD_NUM_SHADER_ENGINES => put(
                value,
                match (gpu, a.model) {
                    (false, _) => 0u32,
                    (true, GfxModel::Gfx942) => 32,
                    (true, GfxModel::Gfx90a) => 8,
                },
            ),
            AMD_NUM_SHADER_ARRAYS_PER_SE => put(value, if gpu { 1u32 } else { 0 }),
            AMD_NUM_XCC => put(
                value,
                match (gpu, a.model) {
                    (false, _) => 0u32,
                    (true, GfxModel::Gfx942) => 8,
                    (true, GfxModel::Gfx90a) => 1,
                },
            ),
            // Cooperative queues run every workgroup of a dispatch resident, with a GWS
            // unit (hsasim_isa::run_cooperative_dispatch).
            AMD_COOPERATIVE_QUEUES => put(value, gpu),
            // Discrete parts over PCIe: system memory is not directly accessible.
            AMD_SVM_DIRECT_HOST_ACCESS => put(value, !gpu),
            AMD_UUID => put_fixed_str::<21>(
                value,
                &if gpu {
                    format!("GPU-{:016x}", 0x4853_5349_4d00_0000u64 | a.node as u64)
                } else {
                    "CPU-XX".to_string()
                },
            ),
            AMD_ASIC_REVISION => put(value, 0u32),
            AMD_MEMORY_AVAIL => put(value, device_pool.map(|p| p.size - p.used()).unwrap_or(0)),
            AMD_TIMESTAMP_FREQUENCY => put(value, 1_000_000_000u64),
            AMD_ASIC_FAMILY_ID => put(value, if gpu { 141u32 } else { 0 }),
            AMD_UCODE_VERSION | AMD_SDMA_UCODE_VERSION => put(value, 0u32),
            AMD_NUM_SDMA_ENG => put(value, a.sdma.len() as u32),
            AMD_NUM_SDMA_XGMI_ENG => put(value, 0u32),
            AMD_IOMMU_SUPPORT => put(value, 0u32),
            AMD_DRIVER_UID => put(value, a.node),
            AMD_NEAREST_CPU => put(value, nearest_cpu),
            AMD_HDP_FLUSH => put(value, [0u64; 2]),
            _ => {
                tracing::warn!(target: "hsasim", attr = format_args!("{attr:#x}"), "hsa_agent_get_info: attribute not modelled");
                Err(HsaError::INVALID_ARGUMENT)
            }
        }
    }
}

/// `hsa_isa_get_info_alt`.
///
/// # Safety
/// `value` must be null or valid for the attribute's documented type (NAME: at least
/// NAME_LENGTH bytes).
pub(crate) unsafe fn isa_get_info(isa: &IsaDesc, attr: u32, value: *mut c_void) -> HsaResult {
    use isa_info::*;
    // SAFETY (all calls): `value` is valid for the attribute's type per the caller.
    unsafe {
        match attr {
            NAME_LENGTH => put(value, isa.name.len() as u32 + 1),
            NAME => {
                let mut bytes = isa.name.as_bytes().to_vec();
                bytes.push(0);
                put_bytes(value, &bytes)
            }
            CALL_CONVENTION_COUNT => put(value, 1u32),
            CALL_CONVENTION_INFO_WAVEFRONT_SIZE => put(value, 64u32),
            CALL_CONVENTION_INFO_WAVEFRONTS_PER_COMPUTE_UNIT => put(value, 32u32),
            MACHINE_MODELS => put(value, [false, true]),
            PROFILES => put(value, [true, false]),
            DEFAULT_FLOAT_ROUNDING_MODES => put(value, [false, false, true]),
            BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES => put(value, [false, false, true]),
            FAST_F16_OPERATION => put(value, true),
            WORKGROUP_MAX_DIM => put(value, [1024u16; 3]),
            WORKGROUP_MAX_SIZE => put(value, WORKGROUP_MAX),
            GRID_MAX_DIM => put(value, [u32::MAX; 3]),
            GRID_MAX_SIZE => put(value, u32::MAX),
            FBARRIER_MAX_SIZE => put(value, 32u32),
            _ => Err(HsaError::INVALID_ARGUMENT),
        }
    }
}

include!(concat!(env!("OUT_DIR"), "/symver_api_system.rs"));

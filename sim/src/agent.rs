//! Agents: one CPU agent (node 0) and N GPU agents (nodes 1..), with their ISAs, memory
//! pools and SDMA engines, answering `hsa_agent_get_info` as ROCr does for the modelled part.

use crate::cabi::{put, put_fixed_str};
use crate::config::Config;
use crate::error::{HsaError, HsaResult};
use crate::memory::{MemoryRegistry, Pool, PoolKind};
use crate::sdma::SdmaEngine;
use hsa_abi::*;
use hsasim_isa::GfxModel;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// An instruction set the simulator runs; `hsa_isa_t` handles are addresses of [`ISAS`]
/// entries.
pub struct IsaDesc {
    pub model: GfxModel,
    /// ROCr's full ISA name (target id with the features the modelled parts ship with).
    pub name: &'static str,
}

pub static ISAS: [IsaDesc; 2] = [
    IsaDesc {
        model: GfxModel::Gfx942,
        name: "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-",
    },
    IsaDesc {
        model: GfxModel::Gfx90a,
        name: "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-",
    },
];

pub fn isa_for(model: GfxModel) -> &'static IsaDesc {
    match model {
        GfxModel::Gfx942 => &ISAS[0],
        GfxModel::Gfx90a => &ISAS[1],
    }
}

pub fn isa_handle(isa: &'static IsaDesc) -> hsa_isa_t {
    hsa_isa_t {
        handle: isa as *const IsaDesc as u64,
    }
}

pub fn isa_from_handle(h: hsa_isa_t) -> HsaResult<&'static IsaDesc> {
    ISAS.iter()
        .find(|i| isa_handle(i).handle == h.handle)
        .ok_or(HsaError::INVALID_ISA)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgentKind {
    Cpu,
    Gpu,
}

pub const QUEUE_MIN_PACKETS: u32 = 64;
pub const QUEUE_MAX_PACKETS: u32 = 1 << 17;
const WORKGROUP_MAX: u32 = 1024;

pub struct Agent {
    pub kind: AgentKind,
    /// KFD-style node id: 0 for the CPU, 1.. for GPUs.
    pub node: u32,
    pub model: GfxModel,
    pub compute_units: u32,
    pub max_queues: u32,
    pub pools: Vec<Arc<Pool>>,
    pub sdma: Vec<Arc<SdmaEngine>>,
    /// Live queues on this agent (the per-agent limit).
    pub queue_count: AtomicU32,
    /// `hsa_amd_coherency_set_type`: recorded and reported back; all simulated memory is
    /// coherent whatever the setting.
    pub coherency: AtomicU32,
}

impl Agent {
    pub fn handle(self: &Arc<Self>) -> hsa_agent_t {
        hsa_agent_t {
            handle: Arc::as_ptr(self) as u64,
        }
    }

    pub fn cpu(handle_hint: hsa_agent_t, host_memory: u64, config: &Config) -> Agent {
        Agent {
            kind: AgentKind::Cpu,
            node: 0,
            model: config.model,
            compute_units: std::thread::available_parallelism()
                .map(|n| n.get() as u32)
                .unwrap_or(1),
            max_queues: 0,
            pools: vec![
                Arc::new(Pool::new(PoolKind::System, handle_hint, host_memory)),
                Arc::new(Pool::new(PoolKind::Kernarg, handle_hint, host_memory)),
                Arc::new(Pool::new(PoolKind::SystemCoarse, handle_hint, host_memory)),
            ],
            sdma: Vec::new(),
            queue_count: AtomicU32::new(0),
            coherency: AtomicU32::new(0),
        }
    }

    /// `memory` is the registry the agent's copy engines check their ranges against.
    pub fn gpu(
        handle_hint: hsa_agent_t,
        node: u32,
        config: &Config,
        memory: &Arc<MemoryRegistry>,
        vram: Option<&Arc<crate::device_memory::SharedVram>>,
    ) -> Agent {
        let device_pool = match vram {
            Some(v) => Pool::shared(handle_hint, v.clone()),
            None => Pool::new(PoolKind::Device, handle_hint, config.device_memory_bytes),
        };
        Agent {
            kind: AgentKind::Gpu,
            node,
            model: config.model,
            compute_units: config.compute_units,
            max_queues: config.max_queues,
            pools: vec![
                Arc::new(device_pool),
                Arc::new(Pool::new(
                    PoolKind::Group,
                    handle_hint,
                    crate::memory::GROUP_SEGMENT_BYTES,
                )),
            ],
            sdma: (0..config.sdma_engines)
                .map(|i| Arc::new(SdmaEngine::new(node, i, memory.clone())))
                .collect(),
            queue_count: AtomicU32::new(0),
            coherency: AtomicU32::new(0),
        }
    }

    pub fn coherency_type(&self) -> u32 {
        self.coherency.load(Ordering::Relaxed)
    }

    pub fn is_gpu(&self) -> bool {
        self.kind == AgentKind::Gpu
    }

    pub fn product_name(&self) -> String {
        match self.kind {
            AgentKind::Cpu => "hsasim CPU".into(),
            AgentKind::Gpu => format!("hsasim {} (software GPU)", self.model.processor()),
        }
    }

    fn chip_id(&self) -> u32 {
        match self.model {
            GfxModel::Gfx942 => 0x74a1,
            GfxModel::Gfx90a => 0x740f,
        }
    }

    /// `hsa_agent_get_info`. `nearest_cpu` is the CPU agent's handle.
    ///
    /// # Safety
    /// `value` must be null or valid for the attribute's documented type.
    pub unsafe fn get_info(
        &self,
        attr: u32,
        value: *mut c_void,
        nearest_cpu: hsa_agent_t,
    ) -> HsaResult {
        use agent_info::*;
        let gpu = self.is_gpu();
        let device_pool = self.pools.first();
        // SAFETY (all `put` calls below): `value` is valid for the attribute's type per the
        // caller; the types are those `hsa.h` / `hsa_ext_amd.h` document for each attribute.
        unsafe {
            match attr {
                NAME => put_fixed_str::<64>(
                    value,
                    if gpu {
                        self.model.processor()
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
                QUEUES_MAX => put(value, self.max_queues),
                QUEUE_MIN_SIZE => put(value, if gpu { QUEUE_MIN_PACKETS } else { 0 }),
                QUEUE_MAX_SIZE => put(value, if gpu { QUEUE_MAX_PACKETS } else { 0 }),
                QUEUE_TYPE => put(value, HSA_QUEUE_TYPE_MULTI),
                NODE | AMD_DRIVER_NODE_ID => put(value, self.node),
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
                    match (gpu, self.model) {
                        (false, _) => [32u32 << 10, 1 << 20, 32 << 20, 0],
                        (true, GfxModel::Gfx942) => [16 << 10, 4 << 20, 256 << 20, 0],
                        (true, GfxModel::Gfx90a) => [16 << 10, 8 << 20, 0, 0],
                    },
                ),
                ISA => put(
                    value,
                    if gpu {
                        isa_handle(isa_for(self.model))
                    } else {
                        hsa_isa_t { handle: 0 }
                    },
                ),
                EXTENSIONS => put(value, [0u8; 128]),
                VERSION_MAJOR => put(value, 1u16),
                VERSION_MINOR => put(value, 1u16),
                AMD_CHIP_ID => put(value, if gpu { self.chip_id() } else { 0 }),
                AMD_CACHELINE_SIZE => put(value, if gpu { 128u32 } else { 64 }),
                AMD_COMPUTE_UNIT_COUNT | AMD_COOPERATIVE_COMPUTE_UNIT_COUNT => {
                    put(value, self.compute_units)
                }
                AMD_MAX_CLOCK_FREQUENCY => put(
                    value,
                    if gpu {
                        self.model.shader_clock_mhz()
                    } else {
                        3000u32
                    },
                ),
                AMD_MAX_ADDRESS_WATCH_POINTS => put(value, if gpu { 4u32 } else { 0 }),
                AMD_BDFID => put(value, if gpu { (0x10 + self.node) << 8 } else { 0u32 }),
                AMD_DOMAIN => put(value, 0u32),
                AMD_MEMORY_WIDTH => put(value, if gpu { 8192u32 } else { 0 }),
                AMD_MEMORY_MAX_FREQUENCY => put(value, if gpu { 1300u32 } else { 0 }),
                AMD_PRODUCT_NAME => put_fixed_str::<64>(value, &self.product_name()),
                AMD_MAX_WAVES_PER_CU => put(value, if gpu { 32u32 } else { 0 }),
                AMD_NUM_SIMDS_PER_CU => put(value, if gpu { 4u32 } else { 0 }),
                AMD_NUM_SHADER_ENGINES => put(
                    value,
                    match (gpu, self.model) {
                        (false, _) => 0u32,
                        (true, GfxModel::Gfx942) => 32,
                        (true, GfxModel::Gfx90a) => 8,
                    },
                ),
                AMD_NUM_SHADER_ARRAYS_PER_SE => put(value, if gpu { 1u32 } else { 0 }),
                AMD_NUM_XCC => put(
                    value,
                    match (gpu, self.model) {
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
                        format!("GPU-{:016x}", 0x4853_5349_4d00_0000u64 | self.node as u64)
                    } else {
                        "CPU-XX".to_string()
                    },
                ),
                AMD_ASIC_REVISION => put(value, 0u32),
                AMD_MEMORY_AVAIL => put(value, device_pool.map(|p| p.size - p.used()).unwrap_or(0)),
                AMD_TIMESTAMP_FREQUENCY => put(value, 1_000_000_000u64),
                AMD_ASIC_FAMILY_ID => put(value, if gpu { 141u32 } else { 0 }),
                AMD_UCODE_VERSION | AMD_SDMA_UCODE_VERSION => put(value, 0u32),
                AMD_NUM_SDMA_ENG => put(value, self.sdma.len() as u32),
                AMD_NUM_SDMA_XGMI_ENG => put(value, 0u32),
                AMD_IOMMU_SUPPORT => put(value, 0u32),
                AMD_DRIVER_UID => put(value, self.node),
                AMD_NEAREST_CPU => put(value, nearest_cpu),
                AMD_HDP_FLUSH => put(value, [0u64; 2]),
                _ => {
                    tracing::warn!(target: "hsasim", attr = format_args!("{attr:#x}"), "hsa_agent_get_info: attribute not modelled");
                    Err(HsaError::INVALID_ARGUMENT)
                }
            }
        }
    }
}

/// `hsa_isa_get_info_alt`.
///
/// # Safety
/// `value` must be null or valid for the attribute's documented type (NAME: at least
/// NAME_LENGTH bytes).
pub unsafe fn isa_get_info(isa: &IsaDesc, attr: u32, value: *mut c_void) -> HsaResult {
    use isa_info::*;
    // SAFETY (all calls): `value` is valid for the attribute's type per the caller.
    unsafe {
        match attr {
            NAME_LENGTH => put(value, isa.name.len() as u32 + 1),
            NAME => {
                let mut bytes = isa.name.as_bytes().to_vec();
                bytes.push(0);
                crate::cabi::put_bytes(value, &bytes)
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

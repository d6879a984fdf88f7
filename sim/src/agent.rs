//! Agents: one CPU agent (node 0) and N GPU agents (nodes 1..), with their ISAs, memory
//! pools and SDMA engines, modelled on what ROCr reports for the parts (`api/system.rs` answers
//! `hsa_agent_get_info` from them).

use crate::config::Config;
use crate::error::{HsaError, HsaResult};
use crate::memory::{MemoryRegistry, Pool, PoolKind};
use crate::sdma::SdmaEngine;
use hsa_abi::*;
use hsasim_isa::GfxModel;
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
pub const WORKGROUP_MAX: u32 = 1024;

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

    pub fn chip_id(&self) -> u32 {
        match self.model {
            GfxModel::Gfx942 => 0x74a1,
            GfxModel::Gfx90a => 0x740f,
        }
    }
}

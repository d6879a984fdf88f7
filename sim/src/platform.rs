//! The simulated machine as the parts above the agents reach it: the configuration, the
//! agents with their pools, the memory registry and, attached to a device service, its
//! device memory. Virtual memory, IPC memory and SVM ranges take this context instead of the
//! whole runtime (which hands it out: `Runtime::platform`), so they see what they use and
//! nothing above it.

use crate::agent::Agent;
use crate::config::Config;
use crate::device_memory::SharedVram;
use crate::error::{HsaError, HsaResult};
use crate::memory::{MemoryRegistry, Pool};
use hsa_abi::{hsa_agent_t, hsa_amd_memory_pool_t};
use std::sync::Arc;

#[derive(Clone, Copy)]
pub struct Platform<'a> {
    pub config: &'a Config,
    /// CPU agent first, then the GPUs (the order `hsa_iterate_agents` reports).
    pub agents: &'a [Arc<Agent>],
    pub memory: &'a MemoryRegistry,
    /// The device service's device memory, the first GPU's pool (`HSASIM_DEVICE_SERVICE`).
    pub vram: Option<&'a Arc<SharedVram>>,
}

impl<'a> Platform<'a> {
    pub fn cpu_agent(&self) -> &'a Arc<Agent> {
        &self.agents[0]
    }

    pub fn agent(&self, h: hsa_agent_t) -> HsaResult<&'a Arc<Agent>> {
        self.agents
            .iter()
            .find(|a| a.handle() == h)
            .ok_or(HsaError::INVALID_AGENT)
    }

    pub fn pool(&self, h: hsa_amd_memory_pool_t) -> HsaResult<(&'a Arc<Agent>, &'a Arc<Pool>)> {
        self.agents
            .iter()
            .flat_map(|a| a.pools.iter().map(move |p| (a, p)))
            .find(|(_, p)| Arc::as_ptr(p) as u64 == h.handle)
            .ok_or(HsaError::INVALID_ARGUMENT)
    }
}

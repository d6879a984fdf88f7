//! A HIP device: one GPU agent, its memory pools, the queues the policy hands to its streams,
//! and the staging state for copies from pageable host memory.

use super::stream::DeviceStreams;
use crate::config::Config;
use crate::error::{HipError, HipResult};
use crate::hsa::signal::Signal;
use crate::hsa::{self, HsaApi, HsaRuntime, PoolInfo};
use hsa_abi::*;
use parking_lot::Mutex;
use std::ffi::c_void;

/// Size of each pinned staging buffer for pageable host copies.
pub const STAGING_BYTES: usize = 4 << 20;

pub struct Device {
    pub index: usize,
    pub agent: hsa_agent_t,
    pub cpu_agent: hsa_agent_t,
    /// Agent name, e.g. `gfx942`.
    pub name: String,
    /// Marketing/product name, e.g. `hsasim gfx942 (software GPU)`.
    pub product_name: String,
    /// ISA names, e.g. `amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-`.
    pub isas: Vec<String>,
    pub device_pool: PoolInfo,
    pub kernarg_pool: hsa_amd_memory_pool_t,
    pub host_pool: hsa_amd_memory_pool_t,
    pub api: &'static HsaApi,
    pub timestamp_hz: u64,
    /// The device's streams and the policy that assigns them queues (see `stream.rs`).
    pub streams: DeviceStreams,
    /// Serialises synchronous copies through the staging buffer.
    pub copy: Mutex<CopyState>,
}

/// A pinned buffer and a completion signal for synchronous copies.
pub struct CopyState {
    pub staging: *mut u8,
    pub signal: Signal,
}

// SAFETY: the staging pointer is owned by the device and only used under the `copy` mutex.
unsafe impl Send for CopyState {}

impl Device {
    pub fn open(
        index: usize,
        agent: hsa_agent_t,
        hsa: &HsaRuntime,
        config: &Config,
    ) -> HipResult<Device> {
        let api = hsa.api;
        let gpu_pools = hsa::agent_pools(api, agent);
        let cpu_pools = hsa::agent_pools(api, hsa.cpu);
        let device_pool = *gpu_pools
            .iter()
            .find(|p| {
                p.segment == HSA_AMD_SEGMENT_GLOBAL
                    && p.alloc_allowed
                    && p.global_flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED != 0
            })
            .ok_or_else(|| no_pool(index, "coarse-grained device"))?;
        let kernarg_pool = cpu_pools
            .iter()
            .find(|p| {
                p.segment == HSA_AMD_SEGMENT_GLOBAL
                    && p.alloc_allowed
                    && p.global_flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT != 0
            })
            .ok_or_else(|| no_pool(index, "kernarg"))?
            .pool;
        let host_pool = cpu_pools
            .iter()
            .find(|p| {
                p.segment == HSA_AMD_SEGMENT_GLOBAL
                    && p.alloc_allowed
                    && p.global_flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED != 0
            })
            .ok_or_else(|| no_pool(index, "fine-grained host"))?
            .pool;

        let mut staging: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid pool and out-pointer.
        let status = unsafe {
            (api.hsa_amd_memory_pool_allocate)(host_pool, STAGING_BYTES, 0, &mut staging)
        };
        hsa::check("hsa_amd_memory_pool_allocate(staging)", status).map_err(runtime_error)?;
        // SAFETY: grants this GPU access to the staging buffer allocated above.
        let status =
            unsafe { (api.hsa_amd_agents_allow_access)(1, &agent, std::ptr::null(), staging) };
        hsa::check("hsa_amd_agents_allow_access(staging)", status).map_err(runtime_error)?;
        let copy_signal = Signal::new(api, 0).map_err(runtime_error)?;

        let name = hsa::agent_string(api, agent, agent_info::NAME).unwrap_or_default();
        let product_name = hsa::agent_string(api, agent, agent_info::AMD_PRODUCT_NAME)
            .unwrap_or_else(|| name.clone());
        let isas = hsa::agent_isa_names(api, agent);
        tracing::info!(device = index, %name, %product_name, ?isas, "opened device");
        Ok(Device {
            index,
            agent,
            cpu_agent: hsa.cpu,
            name,
            product_name,
            isas,
            device_pool,
            kernarg_pool,
            host_pool,
            api,
            timestamp_hz: hsa.timestamp_hz,
            streams: DeviceStreams::new(api, config).map_err(runtime_error)?,
            copy: Mutex::new(CopyState {
                staging: staging as *mut u8,
                signal: copy_signal,
            }),
        })
    }

    /// Waits for all work submitted to this device.
    pub fn synchronize(&self) -> HipResult {
        self.streams.synchronize_all(self)
    }
}

fn no_pool(index: usize, kind: &str) -> HipError {
    tracing::error!(
        device = index,
        "the HSA runtime offers no {kind} memory pool"
    );
    HipError::NOT_INITIALIZED
}

/// An HSA failure the runtime cannot attribute to the caller's arguments.
pub fn runtime_error(error: hsa::HsaError) -> HipError {
    tracing::error!(%error, "HSA call failed");
    match error.status {
        status::ERROR_OUT_OF_RESOURCES => HipError::OUT_OF_MEMORY,
        _ => HipError::RUNTIME_OTHER,
    }
}

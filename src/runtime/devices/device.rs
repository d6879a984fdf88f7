//! A HIP device: one GPU agent, its memory pools, the queues the policy hands to its streams,
//! and the staging state for copies from pageable host memory.

use crate::config::Config;
use crate::error::{HipError, HipResult};
use crate::hsa::copy::CopyEngines;
use crate::hsa::memory::{MemoryPool, PoolBuffer};
use crate::hsa::signal::Signal;
use crate::hsa::{self, HsaApi, HsaRuntime, PoolInfo};
use crate::runtime::devices::device_props::{self, DeviceInfo};
use crate::runtime::ordering::DeviceStreams;
use hsa_abi::*;
use parking_lot::Mutex;

/// `s_memrealtime` on GFX9 (gfx90a, gfx942) reads a constant 100 MHz reference clock,
/// independent of the shader clock; HSA has no portable query for it.
const GFX9_REALTIME_CLOCK_KHZ: i32 = 100_000;

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
    /// Coarse-grained device memory (`hipMalloc`).
    pub device_pool: MemoryPool,
    /// Where queues allocate their kernarg rings (see `hsa::queue::Queue::create`).
    pub kernarg_pool: MemoryPool,
    /// Fine-grained system memory every device may access (`hipHostMalloc`, staging).
    pub host_pool: MemoryPool,
    /// Fine-grained device memory (`hipExtMallocWithFlags`), where the HSA runtime offers it
    /// (ROCr does on MI200 and MI300; hsasim does not).
    pub fine_pool: Option<MemoryPool>,
    pub api: &'static HsaApi,
    pub engines: CopyEngines,
    pub timestamp_hz: u64,
    /// The device's streams and the policy that assigns them queues (see `stream.rs`).
    pub streams: DeviceStreams,
    /// Serialises synchronous copies through the staging buffer.
    pub copy: Mutex<CopyState>,
    /// What the device reports (properties and attributes), gathered once at open.
    pub info: DeviceInfo,
    /// LDS bytes a work-group may use (static + dynamic): the launch-time limit.
    pub lds_bytes: u32,
    /// Flags and limits the application set.
    pub settings: Mutex<DeviceSettings>,
    /// Compute units a cooperative dispatch may use (`HSA_AMD_AGENT_INFO_COOPERATIVE_COMPUTE_UNIT_COUNT`,
    /// else all of them): with the kernel's occupancy, how many work-groups can be resident at once.
    pub cooperative_compute_units: u32,
    /// The devices that enabled peer access to this device's memory (a bit per device index):
    /// every allocation made here is granted to them too. Held while an allocation is made and
    /// recorded, so that an enable sees every allocation or the allocation sees the enable
    /// (see `mem/peer.rs`).
    pub peer_readers: Mutex<u64>,
    /// Every GPU agent of the process: the agents host memory made through this device is
    /// granted to (fine-grained host memory every device may reach).
    pub all_gpus: Vec<hsa_agent_t>,
    /// Packets per queue (`HIPSHIM_QUEUE_SIZE`), for the queues made after open (the
    /// cooperative queue).
    pub queue_size: u32,
    /// The queue cooperative launches go to, made at the first one (see `kernel/cooperative.rs`).
    pub(in crate::runtime) cooperative_queue: Mutex<Option<std::sync::Arc<hsa::queue::Queue>>>,
}

/// What `hipSetDeviceFlags` and `hipDeviceSetLimit` recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceSettings {
    pub flags: u32,
    /// `hipLimitStackSize`: bytes of stack per work-item.
    pub stack_size: usize,
    /// `hipLimitPrintfFifoSize`.
    pub printf_fifo_size: usize,
    /// `hipLimitMallocHeapSize`.
    pub malloc_heap_size: usize,
}

impl Default for DeviceSettings {
    /// AMD's defaults: 1 KiB stack, 1 MiB printf buffer, 8 MiB device heap... the values a
    /// program reads back before setting anything.
    fn default() -> Self {
        DeviceSettings {
            flags: 0,
            stack_size: 1024,
            printf_fifo_size: 1 << 20,
            malloc_heap_size: 8 << 20,
        }
    }
}

/// `hipLimit_t`.
pub mod limit {
    pub const STACK_SIZE: u32 = 0;
    pub const PRINTF_FIFO_SIZE: u32 = 1;
    pub const MALLOC_HEAP_SIZE: u32 = 2;
}

/// Largest per-work-item stack AMD accepts for hipLimitStackSize: (128 Ki - 16) dwords... in
/// AMD's words "units of 256 dwords, up to 128K - 16"; bytes here.
const MAX_STACK_BYTES: usize = (128 * 1024 - 16) * 4;

/// `hipSetDeviceFlags` flags: the schedule mask, hipDeviceMapHost, hipDeviceLmemResizeToMax.
pub const DEVICE_FLAGS_ALL: u32 = 0x7 | 0x8 | 0x10;

/// Pinned buffers ([`STAGING_BYTES`] each) and their completion signals for synchronous
/// copies of pageable memory. Two, so that the CPU fills or drains one while a copy engine
/// moves the other; fills use the first.
pub struct CopyState {
    pub staging: [StagingBuffer; 2],
}

pub struct StagingBuffer {
    pub memory: PoolBuffer,
    /// Counts the buffer's engine copies in flight down to 0.
    pub signal: Signal,
}

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
        let device_pool = gpu_pools
            .iter()
            .find(|p| {
                p.segment == HSA_AMD_SEGMENT_GLOBAL
                    && p.alloc_allowed
                    && p.global_flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED != 0
            })
            .map(|info| MemoryPool::new(api, info))
            .ok_or_else(|| no_pool(index, "coarse-grained device"))?;
        let kernarg_pool = cpu_pools
            .iter()
            .find(|p| {
                p.segment == HSA_AMD_SEGMENT_GLOBAL
                    && p.alloc_allowed
                    && p.global_flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT != 0
            })
            .map(|info| MemoryPool::new(api, info))
            .ok_or_else(|| no_pool(index, "kernarg"))?;
        let host_pool = cpu_pools
            .iter()
            .find(|p| {
                p.segment == HSA_AMD_SEGMENT_GLOBAL
                    && p.alloc_allowed
                    && p.global_flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED != 0
            })
            .map(|info| MemoryPool::new(api, info))
            .ok_or_else(|| no_pool(index, "fine-grained host"))?;

        let fine_pool = gpu_pools
            .iter()
            .find(|p| {
                p.segment == HSA_AMD_SEGMENT_GLOBAL
                    && p.alloc_allowed
                    && p.global_flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED != 0
            })
            .map(|info| MemoryPool::new(api, info));

        let staging_buffer = || -> HipResult<StagingBuffer> {
            Ok(StagingBuffer {
                memory: host_pool.allocate(STAGING_BYTES, &[agent])?,
                signal: Signal::new(api, 0)?,
            })
        };
        let staging = [staging_buffer()?, staging_buffer()?];

        let name = hsa::agent_string(api, agent, agent_info::NAME).unwrap_or_default();
        let product_name = hsa::agent_string(api, agent, agent_info::AMD_PRODUCT_NAME)
            .unwrap_or_else(|| name.clone());
        let isas = hsa::agent_isa_names(api, agent);
        let info = gather_info(
            api,
            agent,
            &gpu_pools,
            device_pool.size,
            &name,
            &product_name,
            &isas,
        );
        tracing::info!(device = index, %name, %product_name, ?isas, "opened device");
        let cooperative_compute_units =
            hsa::agent_value::<u32>(api, agent, agent_info::AMD_COOPERATIVE_COMPUTE_UNIT_COUNT)
                .filter(|&n| n > 0)
                .unwrap_or(info.compute_units.max(0) as u32);
        let queues = hsa::queue::QueueFactory {
            api,
            agent,
            device: index as u32,
            kernarg_pool,
        };
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
            fine_pool,
            api,
            engines: CopyEngines::new(api),
            timestamp_hz: hsa.timestamp_hz,
            streams: DeviceStreams::new(config, queues, hsa.timestamp_hz)?,
            copy: Mutex::new(CopyState { staging }),
            lds_bytes: info.lds_bytes as u32,
            info,
            settings: Mutex::new(DeviceSettings::default()),
            cooperative_compute_units,
            peer_readers: Mutex::new(0),
            all_gpus: hsa.gpus.clone(),
            queue_size: config.queue_size,
            cooperative_queue: Mutex::new(None),
        })
    }

    /// What the queue policy makes this device's queues with.
    pub fn queue_factory(&self) -> hsa::queue::QueueFactory {
        self.streams.queues
    }

    /// `hipDeviceGetLimit`.
    pub fn limit(&self, which: u32) -> HipResult<usize> {
        let s = self.settings.lock();
        match which {
            limit::STACK_SIZE => Ok(s.stack_size),
            limit::PRINTF_FIFO_SIZE => Ok(s.printf_fifo_size),
            limit::MALLOC_HEAP_SIZE => Ok(s.malloc_heap_size),
            _ => Err(HipError::UNSUPPORTED_LIMIT),
        }
    }

    /// `hipDeviceSetLimit`: recorded (the printf buffer and device heap are not provided
    /// yet, see kernarg.rs; the stack size is what a kernel's scratch would be sized by).
    pub fn set_limit(&self, which: u32, value: usize) -> HipResult {
        let mut s = self.settings.lock();
        match which {
            limit::STACK_SIZE if value > MAX_STACK_BYTES => Err(HipError::INVALID_VALUE),
            limit::STACK_SIZE => {
                s.stack_size = value;
                Ok(())
            }
            limit::PRINTF_FIFO_SIZE => {
                s.printf_fifo_size = value;
                Ok(())
            }
            limit::MALLOC_HEAP_SIZE if value > self.info.total_global_mem => {
                Err(HipError::INVALID_VALUE)
            }
            limit::MALLOC_HEAP_SIZE => {
                s.malloc_heap_size = value;
                Ok(())
            }
            _ => Err(HipError::UNSUPPORTED_LIMIT),
        }
    }

    /// `domain:bus:device.function`, as CUDA and AMD format it (`0000:11:00.0`).
    pub fn pci_bus_id(&self) -> String {
        format!(
            "{:04x}:{:02x}:{:02x}.0",
            self.info.pci_domain, self.info.pci_bus, self.info.pci_device
        )
    }

    /// Waits for all work submitted to this device.
    pub fn synchronize(&self) -> HipResult {
        self.streams.synchronize_all()
    }
}

/// The device at `index` of the process's devices (as the C shells hand them down).
pub fn nth(devices: &[Device], index: usize) -> HipResult<&Device> {
    devices.get(index).ok_or(HipError::INVALID_DEVICE)
}

fn no_pool(index: usize, kind: &str) -> HipError {
    tracing::error!(
        device = index,
        "the HSA runtime offers no {kind} memory pool"
    );
    HipError::NOT_INITIALIZED
}

/// Everything the device reports, from the agent's HSA attributes.
fn gather_info(
    api: &HsaApi,
    agent: hsa_agent_t,
    pools: &[PoolInfo],
    memory: usize,
    name: &str,
    product_name: &str,
    isas: &[String],
) -> DeviceInfo {
    let u32_of = |attribute| hsa::agent_value::<u32>(api, agent, attribute).unwrap_or(0);
    let int = |v: u32| v.min(i32::MAX as u32) as i32;
    // The group segment pool's size is the LDS a work-group may use; 64 KiB on gfx9 when the
    // runtime lists no group pool.
    let lds = pools
        .iter()
        .find(|p| p.segment == HSA_AMD_SEGMENT_GROUP)
        .map(|p| p.size)
        .filter(|&s| s > 0)
        .unwrap_or(64 << 10);
    let isa = isas.first().map(String::as_str).unwrap_or(name);
    let gcn_arch_name = isa
        .strip_prefix("amdgcn-amd-amdhsa--")
        .unwrap_or(isa)
        .to_owned();
    let (major, minor, gcn_arch) = device_props::gfx_version(name).unwrap_or((0, 0, 0));
    let wave = u32_of(agent_info::WAVEFRONT_SIZE).max(1);
    let max_waves = u32_of(agent_info::AMD_MAX_WAVES_PER_CU);
    let dims = hsa::agent_value::<[u16; 3]>(api, agent, agent_info::WORKGROUP_MAX_DIM)
        .unwrap_or([1024; 3]);
    let grid =
        hsa::agent_value::<[u32; 3]>(api, agent, agent_info::GRID_MAX_DIM).unwrap_or([u32::MAX; 3]);
    let caches = hsa::agent_value::<[u32; 4]>(api, agent, agent_info::CACHE_SIZE).unwrap_or([0; 4]);
    let bdf = u32_of(agent_info::AMD_BDFID);
    let clock_khz = int(u32_of(agent_info::AMD_MAX_CLOCK_FREQUENCY).saturating_mul(1000));
    let uuid_text = hsa::agent_string(api, agent, agent_info::AMD_UUID).unwrap_or_default();
    let mut uuid = [0u8; 16];
    for (o, b) in uuid
        .iter_mut()
        .zip(uuid_text.strip_prefix("GPU-").unwrap_or(&uuid_text).bytes())
    {
        *o = b;
    }
    let async_engines =
        hsa::agent_value::<u32>(api, agent, agent_info::AMD_NUM_SDMA_ENG).unwrap_or(1);
    DeviceInfo {
        name: product_name.to_owned(),
        ecc_enabled: gcn_arch_name.contains("sramecc+"),
        gcn_arch_name,
        gcn_arch,
        major,
        minor,
        total_global_mem: memory,
        lds_bytes: lds,
        // A work-group may use the whole register file of one SIMD: 512 VGPRs x 64 lanes
        // on gfx90a/gfx942 is more than a 32-bit int of CUDA's meaning needs; AMD reports
        // 64 Ki per block and the CU's four SIMDs' worth per multiprocessor.
        regs_per_block: 65536,
        regs_per_cu: 4 * 512 * int(wave),
        warp_size: int(wave),
        max_threads_per_block: int(u32_of(agent_info::WORKGROUP_MAX_SIZE).max(1)),
        max_threads_dim: dims.map(i32::from),
        max_grid_size: grid.map(int),
        clock_rate: clock_khz,
        memory_clock_rate: int(u32_of(agent_info::AMD_MEMORY_MAX_FREQUENCY).saturating_mul(1000)),
        memory_bus_width: int(u32_of(agent_info::AMD_MEMORY_WIDTH)),
        l2_cache_size: int(caches[1]),
        compute_units: int(u32_of(agent_info::AMD_COMPUTE_UNIT_COUNT)),
        max_waves_per_cu: int(max_waves),
        max_threads_per_cu: int(max_waves.saturating_mul(wave)),
        // AMD's headers define both as the rate of the counter `clock64()` reads (the shader
        // clock, `s_memtime`): cycles over clockRate is time.
        clock_instruction_rate: clock_khz,
        wall_clock_rate: GFX9_REALTIME_CLOCK_KHZ,
        pci_domain: int(u32_of(agent_info::AMD_DOMAIN)),
        pci_bus: int((bdf >> 8) & 0xff),
        pci_device: int((bdf >> 3) & 0x1f),
        async_engines: int(async_engines),
        cooperative_launch: hsa::agent_value::<bool>(
            api,
            agent,
            agent_info::AMD_COOPERATIVE_QUEUES,
        )
        .unwrap_or(false),
        cooperative_multi_device_launch: false,
        asic_revision: int(u32_of(agent_info::AMD_ASIC_REVISION)),
        uuid,
        virtual_memory_management: hsa::vmem::missing(api).is_none(),
        image_support: device_props::has_images(name),
    }
}

/// Parses `[domain:]bus:device[.function]` (hex).
pub fn parse_pci_bus_id(text: &str) -> Option<(i32, i32, i32)> {
    let text = text.split('.').next()?;
    let parts: Vec<&str> = text.split(':').collect();
    let hex = |s: &str| i32::from_str_radix(s, 16).ok();
    match parts.as_slice() {
        [domain, bus, dev] => Some((hex(domain)?, hex(bus)?, hex(dev)?)),
        [bus, dev] => Some((0, hex(bus)?, hex(dev)?)),
        _ => None,
    }
}

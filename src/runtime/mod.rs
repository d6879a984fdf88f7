//! The HIP runtime proper: devices, streams, memory, modules and launches, all in terms of the
//! HSA layer. Functions here take typed arguments and return `HipResult`; the C ABI is in
//! `api/`.

pub mod array;
pub mod code_object;
pub mod compat;
pub mod context;
pub mod cooperative;
pub mod copy;
pub mod copy3d;
pub mod current;
pub mod device;
pub mod device_assert;
pub mod device_props;
pub mod event;
pub mod graph;
pub mod handles;
pub mod hostcall;
pub mod ipc;
pub mod ipc_event;
pub mod kernarg;
pub mod launch;
pub mod managed;
pub mod managed_var;
pub mod memory;
pub mod mempool;
pub mod module;
pub mod multi_device;
pub mod occupancy;
pub mod ordering;
pub mod peer;
pub mod rtc;
pub mod stream;
pub mod texture;
pub mod vmm;

use crate::config::Config;
use crate::error::{HipError, HipResult};
use crate::hsa::{self, HsaRuntime};
use device::{Device, DeviceSettings};
use once_cell::sync::OnceCell;

pub struct Runtime {
    pub config: Config,
    pub hsa: HsaRuntime,
    /// Open for the life of the process (the runtime is never dropped): the ordering engine
    /// holds their streams from the start (`ordering::watch_devices`).
    pub devices: &'static [Device],
    /// What the HSA runtime says about each pair of devices (`peer`).
    pub peers: peer::PeerTable,
}

impl Runtime {
    /// `hipChooseDevice`: the device that best matches the fields `wanted` sets (see
    /// [`device_props::match_score`]).
    pub fn choose_device(&self, wanted: &device_props::DevicePropR0600) -> HipResult<usize> {
        self.devices
            .iter()
            .max_by_key(|d| device_props::match_score(&d.info, wanted))
            .map(|d| d.index)
            .ok_or(HipError::NO_DEVICE)
    }

    /// `hipDeviceGetByPCIBusId`: the device at `[domain:]bus:device[.function]`.
    pub fn device_by_pci_bus_id(&self, text: &str) -> HipResult<usize> {
        let (domain, bus, dev) = device::parse_pci_bus_id(text).ok_or(HipError::INVALID_VALUE)?;
        self.devices
            .iter()
            .find(|d| {
                d.info.pci_domain == domain && d.info.pci_bus == bus && d.info.pci_device == dev
            })
            .map(|d| d.index)
            .ok_or(HipError::INVALID_DEVICE)
    }
}

// A device's reset spans its streams and its memory, both of which build on `Device`: it is
// written here, above all three, so that none of them needs the others in a circle.
impl Device {
    /// `hipDeviceReset`: drains the device's work, destroys the streams the program created
    /// on it, frees its allocations and forgets the flags and limits the application set.
    /// Faults are part of the state it resets: those no call has reported yet are forgotten
    /// (logged), as CUDA's reset clears its errors.
    pub fn reset(&self) -> HipResult {
        if let Err(error) = self.synchronize() {
            tracing::warn!(
                device = self.index,
                ?error,
                "hipDeviceReset: a fault found while draining the device is discarded"
            );
        }
        stream::destroy_created_streams(self);
        self.streams.discard_reports();
        mempool::reset_device(self);
        memory::free_device_allocations(self);
        *self.settings.lock() = DeviceSettings::default();
        Ok(())
    }
}

static RUNTIME: OnceCell<Result<Runtime, HipError>> = OnceCell::new();

/// The process-wide runtime, initialised on first use (by `hipInit` or any other call).
pub fn runtime() -> HipResult<&'static Runtime> {
    RUNTIME
        .get_or_init(|| {
            let config = Config::global().clone();
            crate::logging::init(config.log.as_deref());
            // Recording starts before the HSA runtime is loaded (its HSA calls are counted
            // from the first one) and learns its clock once it is initialised, whether or not
            // that worked.
            crate::trace::record::init(&config);
            let hsa = hsa::open_runtime(&config);
            crate::trace::record::attach(
                hsa.as_ref().ok().map(|r| r.api),
                hsa.as_ref().map_or(1, |r| r.timestamp_hz),
            );
            let hsa = hsa.map_err(|why| {
                eprintln!("hipshim: no HSA runtime could be initialised: {why}");
                HipError::NO_DEVICE
            })?;
            let mut devices = hsa
                .gpus
                .iter()
                .enumerate()
                .map(|(index, &agent)| Device::open(index, agent, &hsa, &config))
                .collect::<HipResult<Vec<_>>>()?;
            let multi_device_launch =
                multi_device::supported(&devices, hsa.devices_run_one_at_a_time);
            for device in &mut devices {
                device.info.cooperative_multi_device_launch = multi_device_launch;
            }
            // Open for the life of the process: the runtime that owns them is never dropped.
            let devices: &'static [Device] = Vec::leak(devices);
            ordering::watch_devices(devices.iter().map(|d| &d.streams).collect());
            let peers = peer::PeerTable::survey(devices);
            tracing::info!(devices = devices.len(), "hipshim runtime ready");
            crate::fork_guard::watch();
            Ok(Runtime {
                config,
                hsa,
                devices,
                peers,
            })
        })
        .as_ref()
        .map_err(|e| *e)
}

impl Runtime {
    pub fn device(&self, ordinal: usize) -> HipResult<&Device> {
        device::nth(self.devices, ordinal)
    }

    /// The device current on this thread.
    pub fn current_device(&self) -> HipResult<&Device> {
        current::device(self.devices)
    }
}

/// The process's devices, for a C shell to hand down (starts the runtime on first use).
pub fn devices() -> HipResult<&'static [Device]> {
    Ok(runtime()?.devices)
}

/// The device current on the calling thread, for a C shell to hand down.
pub fn current_device() -> HipResult<&'static Device> {
    runtime()?.current_device()
}

/// Whether the runtime has started (or failed to), asked without starting it or waiting for a start
/// under way: a forked child must never wait for a thread it does not have.
pub fn started() -> bool {
    RUNTIME.get().is_some()
}

pub fn init(flags: u32) -> HipResult {
    if flags != 0 {
        return Err(HipError::INVALID_VALUE);
    }
    runtime().map(|_| ())
}

pub fn device_count() -> HipResult<i32> {
    Ok(runtime()?.devices.len() as i32)
}

pub fn set_device(ordinal: i32) -> HipResult {
    let rt = runtime()?;
    let index = usize::try_from(ordinal).map_err(|_| HipError::INVALID_DEVICE)?;
    rt.device(index)?;
    current::select(index);
    Ok(())
}

pub fn get_device() -> HipResult<i32> {
    runtime()?;
    Ok(current::index() as i32)
}

/// Waits for all work on every stream of the current device.
pub fn device_synchronize() -> HipResult {
    let device = runtime()?.current_device()?;
    device.synchronize()?;
    mempool::after_sync(mempool::Synced::Device(device.index));
    Ok(())
}

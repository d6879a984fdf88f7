//! The HIP runtime proper: devices, streams, memory, modules and launches, all in terms of the
//! HSA layer. Functions here take typed arguments and return `HipResult`; the C ABI is in
//! `api/`, whose shells resolve the process's [`Runtime`] and hand down what each call uses
//! (the current `&Device`, the `&[Device]`, the HSA runtime): the code below this file does
//! not reach up for it (`tests/runtime_layers.rs` fails if a module below this file names it).
//!
//! The folders are layers, top first; a module uses modules of lower layers (and of its own
//! folder), never of a higher one (`tests/runtime_layers.rs` checks it):
//!
//! ```text
//! ops, rtc      managed-memory advice, multi-device launches; hiprtc beside the runtime
//! graph         graphs, stream capture, executable graphs
//! launch.rs     kernel launches (the launch path)
//! kernel, image code images, functions, occupancy, cooperative launches; arrays, 3D
//!               copies, textures
//! copy.rs       copies and fills (the copy path)
//! stream        hipStream_t handles and events over the ordering engine
//! mem           the memory registry, pools, VMM, IPC memory, peer access
//! devices       the Device, its properties, the current device, contexts, hostcall
//! ordering      the ordering engine: streams, markers, gates, faults
//! base          handle tables, kernarg layout, ABI differences, device assertions
//! code_object   fat binaries, bundles, code-object metadata
//! ```
//!
//! This file holds the index, the `Runtime` (what the process opened: configuration, HSA
//! runtime, devices, what the devices say about each other) and its start.

pub mod base;
pub mod code_object;
pub mod copy;
pub mod devices;
pub mod graph;
pub mod image;
pub mod kernel;
pub mod launch;
pub mod mem;
pub mod ops;
pub mod ordering;
pub mod rtc;
pub mod stream;

use crate::config::Config;
use crate::error::{HipError, HipResult};
use crate::hsa::{self, HsaRuntime};
use devices::device::Device;
use std::sync::OnceLock;

pub struct Runtime {
    pub config: Config,
    pub hsa: HsaRuntime,
    /// Open for the life of the process (the runtime is never dropped): the ordering engine
    /// holds their streams from the start (`ordering::watch_devices`).
    pub devices: &'static [Device],
    /// What the HSA runtime says about each pair of devices (`peer`).
    pub peers: mem::peer::PeerTable,
}

impl Runtime {
    /// `hipChooseDevice`: the device that best matches the fields `wanted` sets (see
    /// [`devices::device_props::match_score`]).
    pub fn choose_device(
        &self,
        wanted: &devices::device_props::DevicePropR0600,
    ) -> HipResult<usize> {
        self.devices
            .iter()
            .max_by_key(|d| devices::device_props::match_score(&d.info, wanted))
            .map(|d| d.index)
            .ok_or(HipError::NO_DEVICE)
    }

    /// `hipDeviceGetByPCIBusId`: the device at `[domain:]bus:device[.function]`.
    pub fn device_by_pci_bus_id(&self, text: &str) -> HipResult<usize> {
        let (domain, bus, dev) =
            devices::device::parse_pci_bus_id(text).ok_or(HipError::INVALID_VALUE)?;
        self.devices
            .iter()
            .find(|d| {
                d.info.pci_domain == domain && d.info.pci_bus == bus && d.info.pci_device == dev
            })
            .map(|d| d.index)
            .ok_or(HipError::INVALID_DEVICE)
    }
}

static RUNTIME: OnceLock<Result<Runtime, HipError>> = OnceLock::new();
/// Held while the runtime is being opened (one opener at a time).
static OPENING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The process-wide runtime, initialised on first use (by `hipInit` or any other call).
/// Without an HSA runtime the answer is the same for the life of the process; a device that
/// could not be opened for want of resources (a queue, a signal or memory the HSA runtime
/// refused) is tried again by the next call, so a program that meets such a failure at its
/// first call keeps working once the resources are there.
pub fn runtime() -> HipResult<&'static Runtime> {
    match RUNTIME.get() {
        Some(Ok(runtime)) => Ok(runtime),
        Some(Err(e)) => Err(*e),
        None => open_runtime(),
    }
}

#[cold]
fn open_runtime() -> HipResult<&'static Runtime> {
    let _one_opener = OPENING.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(opened) = RUNTIME.get() {
        return opened.as_ref().map_err(|e| *e);
    }
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
    if let Ok(r) = &hsa {
        base::callbacks::attach(r.api, r.timestamp_hz);
    }
    let opened = match hsa {
        Err(why) => {
            eprintln!("hipshim: no HSA runtime could be initialised: {why}");
            Err(HipError::NO_DEVICE)
        }
        Ok(hsa) => {
            let devices = hsa
                .gpus
                .iter()
                .enumerate()
                .map(|(index, &agent)| Device::open(index, agent, &hsa, &config))
                .collect::<HipResult<Vec<_>>>();
            match devices {
                Err(e) => {
                    tracing::error!(error = ?e, "a device could not be opened; the next HIP call tries again");
                    return Err(e);
                }
                Ok(devices) => Ok(finish_opening(config, hsa, devices)),
            }
        }
    };
    RUNTIME.get_or_init(|| opened).as_ref().map_err(|e| *e)
}

fn finish_opening(config: Config, hsa: HsaRuntime, mut devices: Vec<Device>) -> Runtime {
    let multi_device_launch = ops::multi_device::supported(&devices, hsa.devices_run_one_at_a_time);
    for device in &mut devices {
        device.info.cooperative_multi_device_launch = multi_device_launch;
    }
    // Open for the life of the process: the runtime that owns them is never dropped.
    let devices: &'static [Device] = Vec::leak(devices);
    ordering::watch_devices(devices.iter().map(|d| &d.streams).collect());
    let peers = mem::peer::PeerTable::survey(devices);
    tracing::info!(devices = devices.len(), "hipshim runtime ready");
    crate::fork_guard::watch();
    Runtime {
        config,
        hsa,
        devices,
        peers,
    }
}

impl Runtime {
    pub fn device(&self, ordinal: usize) -> HipResult<&Device> {
        devices::device::nth(self.devices, ordinal)
    }

    /// The device current on this thread.
    pub fn current_device(&self) -> HipResult<&Device> {
        devices::current::device(self.devices)
    }

    /// What a copy or fill is handed: every device and the current one.
    pub fn copy_devices(&self) -> copy::Devices<'static> {
        copy::Devices::of(self.devices)
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
    devices::current::select(index);
    Ok(())
}

pub fn get_device() -> HipResult<i32> {
    runtime()?;
    Ok(devices::current::index() as i32)
}

/// Waits for all work on every stream of the current device.
pub fn device_synchronize() -> HipResult {
    let device = runtime()?.current_device()?;
    ordering::refuse_wait_in_host_task(
        "hipDeviceSynchronize",
        ordering::Wait::Device {
            device: device.index,
        },
    )?;
    let issued = mem::mempool::frees_issued();
    device.synchronize()?;
    mem::mempool::after_sync(mem::mempool::Synced::Device(device.index, issued));
    Ok(())
}

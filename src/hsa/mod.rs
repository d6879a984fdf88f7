//! The HSA layer: choosing and loading the HSA runtime, and one small type per HSA resource:
//! agents here, memory pools and their buffers ([`memory`]), code objects and executables
//! ([`executable`]), copy engines ([`copy`]), [`queue::Queue`], [`signal::Signal`]. Each owns
//! what it must release; [`HsaError`] says which call failed and converts into the HIP error
//! the runtime reports ([`error`]).

pub mod api;
pub mod callback;
pub mod copy;
pub mod error;
pub mod executable;
pub mod ipc;
pub mod memory;
pub mod queue;
pub mod signal;
pub mod vmem;

pub use api::HsaApi;
pub use error::{check, HsaError};
pub use memory::{agent_pools, PoolInfo};

use crate::config::{Config, DeviceChoice};
use hsa_abi::*;
use std::ffi::c_void;
use std::path::{Path, PathBuf};

/// ROCr's soname, found by the dynamic loader.
const ROCR_SONAME: &str = "libhsa-runtime64.so.1";
/// The software GPU shipped next to this library.
const HSASIM_FILE: &str = "libhsasim.so";
/// An installed hipshim's lib dir relative to its `bin/` (the release tarball, the .deb):
/// where the `hipshim` executable, which links this runtime in, finds hsasim, and where it
/// finds the lib dir it gives programs (cli/src/libdir.rs).
pub const INSTALLED_LIB_DIRS: [&str; 2] = ["../lib/hipshim", "../lib/x86_64-linux-gnu/hipshim"];

/// An initialised HSA runtime with at least one GPU agent.
pub struct HsaRuntime {
    pub api: &'static HsaApi,
    pub gpus: Vec<hsa_agent_t>,
    pub cpu: hsa_agent_t,
    /// `HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY`, to turn waits into timestamp units.
    pub timestamp_hz: u64,
    /// True when this is hsasim rather than ROCr or another runtime.
    pub is_simulator: bool,
    /// The devices never run at the same time: hsasim's deterministic mode
    /// (`HSASIM_THREADS=0`), where the host thread that waits runs the pending work, one
    /// dispatch at a time. A kernel that waits for another device's running kernel (a
    /// multi-device cooperative launch) would wait for ever there.
    pub devices_run_one_at_a_time: bool,
}

/// Picks and initialises the HSA runtime per `HIPSHIM_HSA_LIB` / `HIPSHIM_DEVICE`:
/// an explicit library wins; otherwise ROCr if it initialises and has a GPU; otherwise the
/// bundled hsasim, with one notice on stderr saying why.
pub fn open_runtime(config: &Config) -> Result<HsaRuntime, String> {
    if let Some(path) = &config.hsa_lib {
        return init_runtime(path);
    }
    let sim_path = || {
        own_directory()
            .map(|dir| sim_near(&dir))
            .unwrap_or_else(|| PathBuf::from(HSASIM_FILE))
    };
    if config.device == DeviceChoice::Sim {
        return init_runtime(&sim_path());
    }
    let no_gpu = match gpu_runtime() {
        Ok(runtime) => return Ok(runtime),
        Err(no_gpu) => no_gpu,
    };
    if config.device == DeviceChoice::Gpu {
        return Err(format!(
            "HIPSHIM_DEVICE=gpu but no AMD GPU is usable: {}",
            no_gpu.in_words()
        ));
    }
    let path = sim_path();
    let runtime = init_runtime(&path)?;
    let model = agent_string(runtime.api, runtime.gpus[0], agent_info::NAME).unwrap_or_default();
    eprintln!(
        "hipshim: {}; using the software GPU hsasim ({model}, {}). \
         HIPSHIM_DEVICE=sim chooses it without this notice, HIPSHIM_DEVICE=gpu makes a missing GPU an error.",
        no_gpu.in_words(),
        path.display()
    );
    if let NoGpu::NoRocr(detail) | NoGpu::RocrFailed(detail) = &no_gpu {
        tracing::info!("ROCr did not start: {detail}");
    }
    Ok(runtime)
}

/// Why no real GPU serves this process, in the words a user acts on.
enum NoGpu {
    /// No `/dev/kfd`: the amdgpu kernel driver is not loaded, so no AMD GPU is reachable
    /// and ROCr is not even tried (it would only fail with an out-of-resources status).
    NoKfd,
    /// ROCr (`libhsa-runtime64.so.1`) is not installed or could not be loaded.
    NoRocr(String),
    /// ROCr loaded but reported no GPU agent or failed to initialise.
    RocrFailed(String),
}

impl NoGpu {
    fn in_words(&self) -> String {
        match self {
            NoGpu::NoKfd => {
                "no AMD GPU found (no /dev/kfd: the amdgpu driver is not loaded here)".to_string()
            }
            NoGpu::NoRocr(_) => {
                "no AMD GPU runtime found (ROCr, libhsa-runtime64.so.1, is not installed)"
                    .to_string()
            }
            NoGpu::RocrFailed(detail) => format!("ROCr found no usable AMD GPU ({detail})"),
        }
    }
}

/// ROCr with a GPU, when the machine has the driver for one.
fn gpu_runtime() -> Result<HsaRuntime, NoGpu> {
    if !Path::new("/dev/kfd").exists() {
        return Err(NoGpu::NoKfd);
    }
    let api = HsaApi::load(Path::new(ROCR_SONAME)).map_err(NoGpu::NoRocr)?;
    init_loaded(api, Path::new(ROCR_SONAME)).map_err(NoGpu::RocrFailed)
}

fn init_runtime(path: &Path) -> Result<HsaRuntime, String> {
    init_loaded(HsaApi::load(path)?, path)
}

fn init_loaded(api: HsaApi, path: &Path) -> Result<HsaRuntime, String> {
    let api: &'static HsaApi = Box::leak(Box::new(api));
    // SAFETY: hsa_init takes no arguments; the table was resolved from this library.
    let status = unsafe { (api.hsa_init)() };
    if status != status::SUCCESS {
        return Err(format!(
            "hsa_init in {} returned {}",
            path.display(),
            api.describe(status)
        ));
    }
    let mut agents: Vec<(hsa_agent_t, u32)> = Vec::new();
    unsafe extern "C" fn collect(agent: hsa_agent_t, data: *mut c_void) -> hsa_status_t {
        // SAFETY: forwarded from the HSA runtime's call.
        callback::guarded("the agent iteration callback", status::ERROR, || unsafe {
            collect_agent(agent, data)
        })
    }
    unsafe fn collect_agent(agent: hsa_agent_t, data: *mut c_void) -> hsa_status_t {
        // SAFETY: `data` is the `&mut (Vec, api)` passed below, alive for the iteration.
        let (agents, api) = unsafe { &mut *(data as *mut (&mut Vec<(hsa_agent_t, u32)>, &HsaApi)) };
        let mut device_type: u32 = u32::MAX;
        // SAFETY: DEVICE is a u32 attribute; the out-pointer is valid.
        unsafe {
            (api.hsa_agent_get_info)(
                agent,
                agent_info::DEVICE,
                &mut device_type as *mut u32 as *mut c_void,
            )
        };
        agents.push((agent, device_type));
        status::SUCCESS
    }
    let mut ctx = (&mut agents, api);
    // SAFETY: the callback matches the HSA signature and `ctx` outlives the call.
    let status =
        unsafe { (api.hsa_iterate_agents)(Some(collect), &mut ctx as *mut _ as *mut c_void) };
    check("hsa_iterate_agents", status).map_err(|e| e.to_string())?;

    let gpus: Vec<hsa_agent_t> = agents
        .iter()
        .filter(|a| a.1 == HSA_DEVICE_TYPE_GPU)
        .map(|a| a.0)
        .collect();
    let cpu = agents
        .iter()
        .find(|a| a.1 == HSA_DEVICE_TYPE_CPU)
        .map(|a| a.0);
    let (Some(cpu), false) = (cpu, gpus.is_empty()) else {
        // SAFETY: balances the successful hsa_init above.
        unsafe { (api.hsa_shut_down)() };
        return Err(format!("{} reports no GPU agent", path.display()));
    };
    let mut timestamp_hz: u64 = 0;
    // SAFETY: TIMESTAMP_FREQUENCY is a u64 attribute; the out-pointer is valid.
    unsafe {
        (api.hsa_system_get_info)(
            system_info::TIMESTAMP_FREQUENCY,
            &mut timestamp_hz as *mut u64 as *mut c_void,
        )
    };
    let is_simulator = agent_string(api, gpus[0], agent_info::AMD_PRODUCT_NAME)
        .map(|name| name.starts_with("hsasim"))
        .unwrap_or(false);
    // hsasim reads the same variable: 0 is its deterministic mode (1, the default, threaded).
    let devices_run_one_at_a_time = is_simulator
        && std::env::var("HSASIM_THREADS").is_ok_and(|v| v.trim().parse::<u32>() == Ok(0));
    tracing::info!(library = %path.display(), gpus = gpus.len(), is_simulator, devices_run_one_at_a_time, "HSA runtime initialised");
    Ok(HsaRuntime {
        api,
        gpus,
        cpu,
        timestamp_hz: timestamp_hz.max(1),
        is_simulator,
        devices_run_one_at_a_time,
    })
}

/// Reads a fixed-size (at most 64-byte) string attribute of an agent.
pub fn agent_string(api: &HsaApi, agent: hsa_agent_t, attribute: u32) -> Option<String> {
    let mut buf = [0u8; 64];
    // SAFETY: string attributes (NAME, VENDOR_NAME, PRODUCT_NAME) are at most 64 bytes.
    let status =
        unsafe { (api.hsa_agent_get_info)(agent, attribute, buf.as_mut_ptr() as *mut c_void) };
    if status != status::SUCCESS {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Some(String::from_utf8_lossy(&buf[..end]).into_owned())
}

/// Reads a plain-old-data attribute of an agent.
pub fn agent_value<T: Copy + Default>(
    api: &HsaApi,
    agent: hsa_agent_t,
    attribute: u32,
) -> Option<T> {
    let mut value = T::default();
    // SAFETY: the caller names an attribute whose HSA type is `T`.
    let status =
        unsafe { (api.hsa_agent_get_info)(agent, attribute, &mut value as *mut T as *mut c_void) };
    (status == status::SUCCESS).then_some(value)
}

/// The names of an agent's ISAs, e.g. `amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-`.
pub fn agent_isa_names(api: &HsaApi, agent: hsa_agent_t) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    unsafe extern "C" fn collect(isa: hsa_isa_t, data: *mut c_void) -> hsa_status_t {
        // SAFETY: forwarded from the HSA runtime's call.
        callback::guarded("the ISA iteration callback", status::ERROR, || unsafe {
            collect_isa(isa, data)
        })
    }
    unsafe fn collect_isa(isa: hsa_isa_t, data: *mut c_void) -> hsa_status_t {
        // SAFETY: `data` is the `(Vec, api)` pair passed below, alive for the iteration.
        let (names, api) = unsafe { &mut *(data as *mut (&mut Vec<String>, &HsaApi)) };
        let mut len: u32 = 0;
        // SAFETY: NAME_LENGTH is a u32 attribute.
        unsafe {
            (api.hsa_isa_get_info_alt)(
                isa,
                isa_info::NAME_LENGTH,
                &mut len as *mut u32 as *mut c_void,
            )
        };
        let mut buf = vec![0u8; len as usize + 1];
        // SAFETY: NAME writes NAME_LENGTH bytes; the buffer has one more.
        let status = unsafe {
            (api.hsa_isa_get_info_alt)(isa, isa_info::NAME, buf.as_mut_ptr() as *mut c_void)
        };
        if status == status::SUCCESS {
            let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
            names.push(String::from_utf8_lossy(&buf[..end]).into_owned());
        }
        status::SUCCESS
    }
    let mut ctx = (&mut names, api);
    // SAFETY: callback signature matches; ctx outlives the call.
    unsafe {
        (api.hsa_agent_iterate_isas)(agent, Some(collect), &mut ctx as *mut _ as *mut c_void)
    };
    names
}

/// hsasim beside this code (next to libamdhip64.so), else in the lib dir of an installed
/// `hipshim` whose `bin/` is `dir`; the path beside it when neither exists (for the message).
fn sim_near(dir: &Path) -> PathBuf {
    let beside = dir.join(HSASIM_FILE);
    if beside.is_file() {
        return beside;
    }
    INSTALLED_LIB_DIRS
        .iter()
        .map(|rel| dir.join(rel).join(HSASIM_FILE))
        .find(|path| path.is_file())
        // `/usr/lib/...`, not `/usr/bin/../lib/...`, in messages and `hipshim info`.
        .map(
            |path| match path.parent().and_then(|d| d.canonicalize().ok()) {
                Some(dir) => dir.join(HSASIM_FILE),
                None => path,
            },
        )
        .unwrap_or(beside)
}

/// The directory of the file this library was loaded from (the path ld.so used, so a
/// `libamdhip64.so.5` symlink resolves to the directory holding the link).
fn own_directory() -> Option<PathBuf> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the address of a function in this library and fills `info`.
    let found = unsafe { libc::dladdr(own_directory as *const c_void, &mut info) };
    if found == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr returned a NUL-terminated path owned by the loader.
    let file = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
    let path = PathBuf::from(file.to_string_lossy().into_owned());
    path.parent().map(Path::to_path_buf)
}

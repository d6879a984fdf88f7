//! Every knob of the simulated machine, read once from the environment at `hsa_init`.
//!
//! [`SETTINGS`] describes each variable once: [`Config`] reads it by that name and words its
//! malformed-value warning (and an integer's bounds) from that entry, and `hipshim config
//! reference` prints the table as `docs/reference/configuration.md`.

pub use config_doc::{Accepted, SettingDoc};
use hsasim_isa::GfxModel;
use std::env::VarError;
use std::time::Duration;

/// Default watchdog limit in wave-instructions. Measured on one wave in a release build:
/// a scalar-only endless loop runs about 200 M instructions/s and reaches it in ~20 s; a
/// loop that polls memory runs ~24 M/s (~3 min). Slower mixes (vector, MFMA: 10 M/s down
/// to 1 M/s) meet [`DEFAULT_DISPATCH_TIMEOUT_S`] first.
pub const DEFAULT_MAX_WAVE_INSTRUCTIONS: u64 = 1 << 32;
/// Default wall-clock limit of one dispatch, in seconds: what bounds every hang, whatever
/// the kernel executes.
pub const DEFAULT_DISPATCH_TIMEOUT_S: u64 = 300;

#[derive(Clone, Debug)]
pub struct Config {
    /// `HSASIM_GFX=gfx942|gfx90a` (default gfx942).
    pub model: GfxModel,
    /// `HSASIM_GPUS` (default 1): GPU agents after the CPU agent.
    pub gpus: u32,
    /// `HSASIM_CUS` (default: the model's full part, 304 for gfx942, 104 for gfx90a).
    pub compute_units: u32,
    /// `HSASIM_MEM_GB` (default 16): size of each GPU's device pool. Nothing is reserved up
    /// front; allocations are mapped lazily.
    pub device_memory_bytes: u64,
    /// `HSASIM_SDMA_ENGINES` (default 2): copy engines per GPU.
    pub sdma_engines: u32,
    /// `HSASIM_MAX_QUEUES` (default 128): queues per GPU agent; one more fails.
    pub max_queues: u32,
    /// `HSASIM_WORKERS` (default: host parallelism): interpreter threads per dispatch.
    pub workers: usize,
    /// `HSASIM_MAX_WAVE_INSTRUCTIONS`: a wave that executes more stops its dispatch with a
    /// queue error (exact, so the same on every run).
    pub max_wave_instructions: u64,
    /// `HSASIM_DISPATCH_TIMEOUT` (seconds): a dispatch still running after this long is
    /// stopped, all its waves, with a queue error. Only a dispatch that runs this long is
    /// affected, so deterministic mode stays deterministic for every other kernel.
    pub dispatch_timeout: Duration,
    /// `HSASIM_JIT=1`: translate hot kernel code into host code (default 0: interpret).
    pub jit: bool,
    /// `HSASIM_TIME=virtual`: the device model whose virtual clock every duration follows
    /// (`HSASIM_TIME_MODEL`, default the one for `HSASIM_GFX`); `None`: host time.
    pub virtual_time: Option<&'static hsasim_vtime::DeviceModel>,
    /// `HSASIM_THREADS=0` selects deterministic mode: no packet-processor, SDMA or
    /// async-handler threads; the work runs on whichever thread waits for it (an HSA wait,
    /// or a loop of polls: see `Runtime::poll`). A single poll only observes. Default 1
    /// (threaded).
    pub threaded: bool,
    /// `HSASIM_STRICT=1`: check what real hardware and ROCr check or depend on (see
    /// `strict.rs`) and fail the queue, naming the rule, where a lenient simulator would go on.
    pub strict: bool,
    /// `HSASIM_LARGE_BAR`: whether the CPU can reach a GPU's coarse-grained memory, as on a
    /// host whose PCIe BAR spans all of it. Default: yes when lenient, no when strict. Without
    /// it, device allocations are not mapped for the CPU, the CPU agent's access to the GPU
    /// pool reads NEVER_ALLOWED (which is how AMD's runtime detects a small BAR), and a CPU
    /// touch is reported by name before the process dies of it (`cpu_touch.rs`).
    pub large_bar: bool,
    /// `HSASIM_GPU_LINK=xgmi|pcie` (default xgmi): how two GPUs are linked, as the link
    /// information of one GPU's access to another's memory reports it (see [`GpuLink`]).
    pub gpu_link: GpuLink,
    /// `HSASIM_CAPTURE=PATH`: every packet a packet processor takes, written to PATH as one
    /// JSON object a line (see `capture.rs`), for comparing two runtimes' packet streams.
    pub capture: Option<std::path::PathBuf>,
    /// `HSASIM_SCHED=1`: model the hardware queue scheduler for this process alone (see
    /// `sched.rs`), with `HSASIM_SCHED_SLOTS` (32), `HSASIM_SCHED_PIPES` (4),
    /// `HSASIM_SCHED_MAX_PROCS` (8), `HSASIM_SCHED_QUANTUM_US` (10000), `HSASIM_SCHED_MAP_US`
    /// (20), `HSASIM_SCHED_UNMAP_US` (50), `HSASIM_SCHED_UPDATE_US` (200),
    /// `HSASIM_SCHED_SERIAL_UPDATES` (1) and `HSASIM_SCHED_SKIP_IDLE` (0). Default off: packets
    /// start as soon as they are ready.
    pub sched: Option<hsasim_sched::Params>,
    /// `HSASIM_SCHED_LOG=PATH`: the private scheduler's map/unmap events, one JSON object a line.
    pub sched_log: Option<std::path::PathBuf>,
    /// `HSASIM_DEVICE_SERVICE=NAME`: schedule this process's queues on the device service NAME
    /// (`hipshim device start --name NAME`), with every other process attached to it; its
    /// parameters are the service's. `hsa_init` fails if it is not running.
    pub device_service: Option<String>,
    /// `HSASIM_QUEUE_ID_BASE` (default 0): the first queue id this process hands out (ids, and
    /// the doorbell offsets derived from them, are per process, as KFD's are).
    pub queue_id_base: u64,
    /// `HSASIM_LOG`: a `tracing` filter for hsasim's own log (`logging.rs`); unset, none.
    pub log: Option<String>,
    /// `HSASIM_FAIL`: HSA calls that fail on purpose (see [`FAIL`] and `fail.rs`); default off.
    pub fail: Option<crate::fail::FailPlan>,
}

/// An integer setting's bounds, for the table below.
const fn integer(min: u64, max: u64) -> Accepted {
    Accepted::Integer { min, max }
}

/// A setting that is 0 or 1.
const SWITCH: Accepted = integer(0, 1);

pub const GFX: SettingDoc = SettingDoc {
    name: "HSASIM_GFX",
    accepted: Accepted::Forms("gfx942 | gfx90a"),
    default: "gfx942",
    meaning: "The GPU model every simulated GPU is: gfx942 (MI300) or gfx90a (MI200); its ISA, \
              compute units and agent properties follow.",
    run_flag: Some("--gfx"),
};
pub const GPUS: SettingDoc = SettingDoc {
    name: "HSASIM_GPUS",
    accepted: integer(1, 16),
    default: "1",
    meaning: "GPU agents, after the CPU agent.",
    run_flag: None,
};
pub const CUS: SettingDoc = SettingDoc {
    name: "HSASIM_CUS",
    accepted: integer(1, 1024),
    default: "the model's full part: 304 for gfx942, 104 for gfx90a",
    meaning: "Compute units per GPU, as the agent reports them.",
    run_flag: None,
};
pub const MEM_GB: SettingDoc = SettingDoc {
    name: "HSASIM_MEM_GB",
    accepted: integer(1, 1 << 16),
    default: "16",
    meaning: "Size of each GPU's device memory pool, in GiB. Nothing is reserved up front; \
              allocations are mapped as they are made.",
    run_flag: None,
};
pub const SDMA_ENGINES: SettingDoc = SettingDoc {
    name: "HSASIM_SDMA_ENGINES",
    accepted: integer(1, 16),
    default: "2",
    meaning: "Copy engines per GPU.",
    run_flag: None,
};
pub const MAX_QUEUES: SettingDoc = SettingDoc {
    name: "HSASIM_MAX_QUEUES",
    accepted: integer(1, 4096),
    default: "128",
    meaning: "Queues a GPU agent allows; creating one more fails.",
    run_flag: None,
};
pub const WORKERS: SettingDoc = SettingDoc {
    name: "HSASIM_WORKERS",
    accepted: integer(1, 1024),
    default: "the host's available parallelism",
    meaning: "Interpreter threads that run the workgroups of one dispatch.",
    run_flag: None,
};
pub const MAX_WAVE_INSTRUCTIONS: SettingDoc = SettingDoc {
    name: "HSASIM_MAX_WAVE_INSTRUCTIONS",
    accepted: integer(1, u64::MAX),
    default: "4294967296",
    meaning: "Watchdog: a wave that executes more instructions stops its dispatch with a queue \
              error naming the wave and its pc. Exact, so the same on every run.",
    run_flag: None,
};
pub const DISPATCH_TIMEOUT: SettingDoc = SettingDoc {
    name: "HSASIM_DISPATCH_TIMEOUT",
    accepted: integer(1, MAX_DISPATCH_TIMEOUT_S),
    default: "300",
    meaning: "Seconds a dispatch may run: one still running after this long is stopped, all its \
              waves, with a queue error. What bounds every hang, whatever the kernel executes.",
    run_flag: None,
};
pub const JIT: SettingDoc = SettingDoc {
    name: "HSASIM_JIT",
    accepted: SWITCH,
    default: "0",
    meaning: "1 translates kernel code that runs often into host code (Cranelift) instead of \
              interpreting it one instruction at a time; instructions without a translation \
              yet run in the interpreter from inside the translated code. Results, faults and \
              the watchdog are the interpreter's. Being built up: off by default.",
    run_flag: None,
};
pub const TIME: SettingDoc = SettingDoc {
    name: "HSASIM_TIME",
    accepted: Accepted::Forms("host | virtual"),
    default: "host",
    meaning: "virtual gives the simulated GPU a clock of its own: kernels, copies and packets \
              take the time a model of the device (`HSASIM_TIME_MODEL`) says, not the time the \
              host took to simulate them, and every timestamp (profiling, events, \
              `clock64()`, `wall_clock64()`, the system timestamp) reads that clock. Results are \
              the same; the times are the same on every run, in both modes of `HSASIM_THREADS`.",
    run_flag: None,
};
pub const TIME_MODEL: SettingDoc = SettingDoc {
    name: "HSASIM_TIME_MODEL",
    accepted: Accepted::Forms("mi300x | mi308x | mi250x-gcd"),
    default: "mi300x for gfx942, mi250x-gcd for gfx90a",
    meaning: "With `HSASIM_TIME=virtual`: the device whose model gives the times (see the \
              virtual time guide for each model's figures and their sources).",
    run_flag: None,
};
pub const THREADS: SettingDoc = SettingDoc {
    name: "HSASIM_THREADS",
    accepted: SWITCH,
    default: "1",
    meaning: "0 selects deterministic mode: no packet-processor, copy-engine or async-handler \
              threads; the work runs on whichever thread waits for it, so every run of a \
              program takes the same steps. 1 runs them on threads of their own.",
    run_flag: None,
};
pub const STRICT: SettingDoc = SettingDoc {
    name: "HSASIM_STRICT",
    accepted: SWITCH,
    default: "0",
    meaning: "1 checks what real hardware and ROCr check or depend on (packet headers, barrier \
              and signal rules, memory the GPU may reach) and fails the queue, naming the rule, \
              where a lenient simulator would go on. This repository's `.cargo/config.toml` \
              sets it for everything cargo runs.",
    run_flag: None,
};
pub const LARGE_BAR: SettingDoc = SettingDoc {
    name: "HSASIM_LARGE_BAR",
    accepted: SWITCH,
    default: "1, or 0 under strict mode",
    meaning: "Whether the CPU can reach a GPU's coarse-grained memory, as on a host whose PCIe \
              BAR spans all of it. With 0 device allocations are not mapped for the CPU, the \
              CPU's access to the GPU pool reads as never allowed (how ROCr's clients detect a \
              small BAR), and a CPU touch is reported by name before the process dies of it.",
    run_flag: None,
};
pub const GPU_LINK: SettingDoc = SettingDoc {
    name: "HSASIM_GPU_LINK",
    accepted: Accepted::Forms("xgmi | pcie"),
    default: "xgmi",
    meaning: "How two simulated GPUs are linked, as the link information of one GPU's access to \
              another's memory reports it (hop count and NUMA distance).",
    run_flag: None,
};
pub const CAPTURE: SettingDoc = SettingDoc {
    name: "HSASIM_CAPTURE",
    accepted: Accepted::Forms("a file path"),
    default: "no capture",
    meaning: "Write every packet a packet processor takes to this file, one JSON object a line, \
              for comparing two runtimes' packet streams (`hipshim compare`).",
    run_flag: None,
};
pub const SCHED: SettingDoc = SettingDoc {
    name: "HSASIM_SCHED",
    accepted: SWITCH,
    default: "0",
    meaning: "1 models the GPU's hardware queue scheduler for this process alone, with the \
              `HSASIM_SCHED_*` parameters below: queues get hardware slots, are mapped and \
              unmapped, and share time slices. 0: a packet starts as soon as it is ready.",
    run_flag: None,
};
pub const SCHED_SLOTS: SettingDoc = SettingDoc {
    name: "HSASIM_SCHED_SLOTS",
    accepted: integer(1, 256),
    default: "32",
    meaning: "With `HSASIM_SCHED=1`: hardware queue slots (HQDs) for user compute queues.",
    run_flag: None,
};
pub const SCHED_PIPES: SettingDoc = SettingDoc {
    name: "HSASIM_SCHED_PIPES",
    accepted: integer(1, 256),
    default: "4",
    meaning: "With `HSASIM_SCHED=1`: pipes the slots are split across.",
    run_flag: None,
};
pub const SCHED_MAX_PROCS: SettingDoc = SettingDoc {
    name: "HSASIM_SCHED_MAX_PROCS",
    accepted: integer(1, 64),
    default: "8",
    meaning: "With `HSASIM_SCHED=1`: processes mapped at once (KFD's `max_proc_per_quantum`).",
    run_flag: None,
};
pub const SCHED_QUANTUM_US: SettingDoc = SettingDoc {
    name: "HSASIM_SCHED_QUANTUM_US",
    accepted: integer(1, 10_000_000),
    default: "10000",
    meaning: "With `HSASIM_SCHED=1`: how long, in microseconds, a process keeps its slots \
              while the runlist is oversubscribed.",
    run_flag: None,
};
pub const SCHED_MAP_US: SettingDoc = SettingDoc {
    name: "HSASIM_SCHED_MAP_US",
    accepted: integer(0, 10_000_000),
    default: "20",
    meaning: "With `HSASIM_SCHED=1`: microseconds to map a queue into a slot.",
    run_flag: None,
};
pub const SCHED_UNMAP_US: SettingDoc = SettingDoc {
    name: "HSASIM_SCHED_UNMAP_US",
    accepted: integer(0, 10_000_000),
    default: "50",
    meaning: "With `HSASIM_SCHED=1`: microseconds to unmap (preempt and save) a queue once its \
              running packet ended.",
    run_flag: None,
};
pub const SCHED_UPDATE_US: SettingDoc = SettingDoc {
    name: "HSASIM_SCHED_UPDATE_US",
    accepted: integer(0, 10_000_000),
    default: "200",
    meaning: "With `HSASIM_SCHED=1`: microseconds to build and send a new runlist.",
    run_flag: None,
};
pub const SCHED_SERIAL_UPDATES: SettingDoc = SettingDoc {
    name: "HSASIM_SCHED_SERIAL_UPDATES",
    accepted: SWITCH,
    default: "1",
    meaning: "With `HSASIM_SCHED=1`: 1 runs runlist updates one at a time, each unmapping \
              every queue.",
    run_flag: None,
};
pub const SCHED_SKIP_IDLE: SettingDoc = SettingDoc {
    name: "HSASIM_SCHED_SKIP_IDLE",
    accepted: SWITCH,
    default: "0",
    meaning: "With `HSASIM_SCHED=1`: 1 lets time slices pass over queues with no work (not \
              what the hardware scheduler does; a what-if).",
    run_flag: None,
};
pub const SCHED_LOG: SettingDoc = SettingDoc {
    name: "HSASIM_SCHED_LOG",
    accepted: Accepted::Forms("a file path"),
    default: "no log",
    meaning: "With `HSASIM_SCHED=1`: write the scheduler's map and unmap events to this file, \
              one JSON object a line (`hipshim trace merge --sched` draws them).",
    run_flag: None,
};
pub const DEVICE_SERVICE: SettingDoc = SettingDoc {
    name: "HSASIM_DEVICE_SERVICE",
    accepted: Accepted::Forms("a device name (letters, digits, '-', '_', '.')"),
    default: "none: the process has a GPU of its own",
    meaning: "Schedule this process's queues on the device service of this name (`hipshim \
              device start --name NAME`), with every other process attached to it, and share \
              its device memory; the scheduler's parameters are the service's. `hsa_init` \
              fails if it is not running.",
    run_flag: None,
};
pub const QUEUE_ID_BASE: SettingDoc = SettingDoc {
    name: "HSASIM_QUEUE_ID_BASE",
    accepted: integer(0, 1 << 40),
    default: "0",
    meaning: "The first queue id this process hands out (ids, and the doorbell offsets derived \
              from them, are per process, as KFD's are).",
    run_flag: None,
};
pub const HIDE: SettingDoc = SettingDoc {
    name: "HSASIM_HIDE",
    accepted: Accepted::Forms("hsa_* entry-point names, comma-separated"),
    default: "none hidden",
    meaning: "Entry points the library pretends not to export, so a client's fallback for an \
              older ROCr runs as it would there. Read when the library is loaded (`hide.rs`), \
              before any `dlsym`.",
    run_flag: None,
};
pub const LOG: SettingDoc = SettingDoc {
    name: "HSASIM_LOG",
    accepted: Accepted::Forms("a tracing filter, e.g. hsasim=info"),
    default: "no log",
    meaning: "hsasim's own log on stderr. When the HIP runtime in the same process has already \
              installed its log (`HIPSHIM_LOG`), that one's filter applies.",
    run_flag: None,
};

/// `HSASIM_FAIL`.
pub const FAIL: SettingDoc = SettingDoc {
    name: "HSASIM_FAIL",
    accepted: Accepted::Forms(
        "POINT[,POINT...][:p=P][:seed=N][:after=K][:count=N]; POINT: queue_create, \
         pool_allocate, signal_create, async_copy, executable_load, interrupt_signal or all; \
         or off",
    ),
    default: "off",
    meaning: "Make HSA calls fail on purpose, to test a client's error paths. Each call at a \
              chosen point, after the first K (0), fails with probability P (1), drawn from its \
              call number and the seed N (0), until `count` (unlimited) have failed; the same \
              calls in the same order fail the same way on every run. A failing call returns \
              what ROCr returns when the resource runs out (out of resources); \
              `interrupt_signal` instead makes a new CPU-waitable signal a polling one, as ROCr \
              does when KFD's events run out. Each failure is logged at warn level.",
    run_flag: None,
};

/// Every setting hsasim reads, in the order `hipshim info` and the reference list them.
pub const SETTINGS: &[SettingDoc] = &[
    GFX,
    GPUS,
    CUS,
    MEM_GB,
    SDMA_ENGINES,
    MAX_QUEUES,
    WORKERS,
    MAX_WAVE_INSTRUCTIONS,
    DISPATCH_TIMEOUT,
    JIT,
    TIME,
    TIME_MODEL,
    THREADS,
    STRICT,
    LARGE_BAR,
    GPU_LINK,
    CAPTURE,
    SCHED,
    SCHED_SLOTS,
    SCHED_PIPES,
    SCHED_MAX_PROCS,
    SCHED_QUANTUM_US,
    SCHED_MAP_US,
    SCHED_UNMAP_US,
    SCHED_UPDATE_US,
    SCHED_SERIAL_UPDATES,
    SCHED_SKIP_IDLE,
    SCHED_LOG,
    DEVICE_SERVICE,
    QUEUE_ID_BASE,
    HIDE,
    LOG,
    FAIL,
];

impl Config {
    /// Reads every knob; malformed values are reported on stderr and replaced by defaults.
    pub fn from_env() -> Self {
        let (config, warnings) = Self::from_vars(&|name| std::env::var(name));
        for w in warnings {
            eprintln!("hsasim: {w}");
        }
        config
    }

    /// The configuration `get` describes (`std::env::var`'s contract), and a warning per
    /// malformed value.
    pub fn from_vars(get: &dyn Fn(&str) -> Result<String, VarError>) -> (Self, Vec<String>) {
        let mut vars = Vars {
            get,
            warnings: Vec::new(),
        };
        let model = vars.read(&GFX, GfxModel::Gfx942, |s| {
            match s.trim().to_ascii_lowercase().as_str() {
                "gfx942" => Some(GfxModel::Gfx942),
                "gfx90a" => Some(GfxModel::Gfx90a),
                _ => None,
            }
        });
        let default_cus = match model {
            GfxModel::Gfx942 => 304,
            GfxModel::Gfx90a => 104,
        };
        let workers_default = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        let strict = vars.num(&STRICT, 0u32) != 0;
        let sched = (vars.num(&SCHED, 0u32) != 0).then(|| {
            let d = hsasim_sched::Params::default();
            let us = 1_000u64;
            hsasim_sched::Params {
                slots: vars.num(&SCHED_SLOTS, d.slots),
                pipes: vars.num(&SCHED_PIPES, d.pipes),
                max_procs: vars.num(&SCHED_MAX_PROCS, d.max_procs),
                quantum_ns: vars.num(&SCHED_QUANTUM_US, d.quantum_ns / us) * us,
                map_ns: vars.num(&SCHED_MAP_US, d.map_ns / us) * us,
                unmap_ns: vars.num(&SCHED_UNMAP_US, d.unmap_ns / us) * us,
                update_ns: vars.num(&SCHED_UPDATE_US, d.update_ns / us) * us,
                serial_updates: vars.num(&SCHED_SERIAL_UPDATES, d.serial_updates),
                skip_idle: vars.num(&SCHED_SKIP_IDLE, d.skip_idle),
                ..d
            }
            .clamped()
        });
        let config = Config {
            model,
            gpus: vars.num(&GPUS, 1u32),
            compute_units: vars.num(&CUS, default_cus),
            device_memory_bytes: vars.num(&MEM_GB, 16u64) << 30,
            sdma_engines: vars.num(&SDMA_ENGINES, 2u32),
            max_queues: vars.num(&MAX_QUEUES, 128u32),
            workers: vars.num(&WORKERS, workers_default),
            max_wave_instructions: vars.num(&MAX_WAVE_INSTRUCTIONS, DEFAULT_MAX_WAVE_INSTRUCTIONS),
            dispatch_timeout: Duration::from_secs(
                vars.num(&DISPATCH_TIMEOUT, DEFAULT_DISPATCH_TIMEOUT_S),
            ),
            jit: vars.num(&JIT, 0u32) != 0,
            virtual_time: {
                let virtual_on = vars.read(&TIME, false, |s| {
                    match s.trim().to_ascii_lowercase().as_str() {
                        "host" => Some(false),
                        "virtual" => Some(true),
                        _ => None,
                    }
                });
                let default_model = hsasim_vtime::default_for(model.processor());
                let device = vars.read(&TIME_MODEL, default_model, |s| {
                    hsasim_vtime::by_name(s.trim())
                });
                virtual_on.then_some(device)
            },
            threaded: vars.num(&THREADS, 1u32) != 0,
            strict,
            large_bar: vars.num(&LARGE_BAR, u32::from(!strict)) != 0,
            gpu_link: vars.read(&GPU_LINK, GpuLink::Xgmi, |s| {
                match s.trim().to_ascii_lowercase().as_str() {
                    "xgmi" => Some(GpuLink::Xgmi),
                    "pcie" => Some(GpuLink::Pcie),
                    _ => None,
                }
            }),
            capture: vars.path(&CAPTURE),
            sched,
            sched_log: vars.path(&SCHED_LOG),
            device_service: vars.read(&DEVICE_SERVICE, None, |s| {
                let name = s.trim();
                hsasim_sched::device::check_name(name)
                    .ok()
                    .map(|()| Some(name.to_string()))
            }),
            queue_id_base: vars.num(&QUEUE_ID_BASE, 0u64),
            log: vars.read(&LOG, None, |s| Some(Some(s.to_string()))),
            fail: vars.read(&FAIL, None, |s| match s.trim() {
                "off" | "0" => Some(None),
                plan => crate::fail::FailPlan::parse(plan).map(Some),
            }),
        };
        (config, vars.warnings)
    }

    /// Each setting this configuration holds, with its effective value as `hipshim info`
    /// shows it, in [`SETTINGS`] order. `HSASIM_HIDE` is not here: it is read when the library
    /// is loaded, before there is a configuration.
    pub fn effective_values(&self) -> Vec<(&'static SettingDoc, String)> {
        // Destructured whole, so that a new field cannot be left out of `hipshim info`.
        let Config {
            model,
            gpus,
            compute_units,
            device_memory_bytes,
            sdma_engines,
            max_queues,
            workers,
            max_wave_instructions,
            dispatch_timeout,
            jit,
            virtual_time,
            threaded,
            strict,
            large_bar,
            gpu_link,
            capture,
            sched,
            sched_log,
            device_service,
            queue_id_base,
            log,
            fail,
        } = self;
        let switch = |on: bool| u32::from(on).to_string();
        let path_or = |path: &Option<std::path::PathBuf>, unset: &str| {
            path.as_ref()
                .map_or_else(|| unset.to_string(), |p| p.display().to_string())
        };
        let model = match model {
            GfxModel::Gfx942 => "gfx942",
            GfxModel::Gfx90a => "gfx90a",
        };
        let gpu_link = match gpu_link {
            GpuLink::Xgmi => "xgmi",
            GpuLink::Pcie => "pcie",
        };
        let us = |ns: u64| (ns / 1_000).to_string();
        let sched_value = |value: &dyn Fn(&hsasim_sched::Params) -> String| {
            sched.as_ref().map_or_else(|| "(off)".to_string(), value)
        };
        vec![
            (&GFX, model.to_string()),
            (&GPUS, gpus.to_string()),
            (&CUS, compute_units.to_string()),
            (&MEM_GB, (device_memory_bytes >> 30).to_string()),
            (&SDMA_ENGINES, sdma_engines.to_string()),
            (&MAX_QUEUES, max_queues.to_string()),
            (&WORKERS, workers.to_string()),
            (&MAX_WAVE_INSTRUCTIONS, max_wave_instructions.to_string()),
            (&DISPATCH_TIMEOUT, dispatch_timeout.as_secs().to_string()),
            (&JIT, switch(*jit)),
            (
                &TIME,
                if virtual_time.is_some() {
                    "virtual"
                } else {
                    "host"
                }
                .to_string(),
            ),
            (
                &TIME_MODEL,
                virtual_time.map_or_else(|| "(host time)".to_string(), |m| m.name.to_string()),
            ),
            (&THREADS, switch(*threaded)),
            (&STRICT, switch(*strict)),
            (&LARGE_BAR, switch(*large_bar)),
            (&GPU_LINK, gpu_link.to_string()),
            (&CAPTURE, path_or(capture, CAPTURE.default)),
            (&SCHED, switch(sched.is_some())),
            (&SCHED_SLOTS, sched_value(&|p| p.slots.to_string())),
            (&SCHED_PIPES, sched_value(&|p| p.pipes.to_string())),
            (&SCHED_MAX_PROCS, sched_value(&|p| p.max_procs.to_string())),
            (&SCHED_QUANTUM_US, sched_value(&|p| us(p.quantum_ns))),
            (&SCHED_MAP_US, sched_value(&|p| us(p.map_ns))),
            (&SCHED_UNMAP_US, sched_value(&|p| us(p.unmap_ns))),
            (&SCHED_UPDATE_US, sched_value(&|p| us(p.update_ns))),
            (
                &SCHED_SERIAL_UPDATES,
                sched_value(&|p| p.serial_updates.to_string()),
            ),
            (&SCHED_SKIP_IDLE, sched_value(&|p| p.skip_idle.to_string())),
            (&SCHED_LOG, path_or(sched_log, SCHED_LOG.default)),
            (
                &DEVICE_SERVICE,
                device_service
                    .clone()
                    .unwrap_or_else(|| "(none)".to_string()),
            ),
            (&QUEUE_ID_BASE, queue_id_base.to_string()),
            (&LOG, log.clone().unwrap_or_else(|| LOG.default.to_string())),
            (
                &FAIL,
                fail.as_ref()
                    .map_or_else(|| FAIL.default.to_string(), |plan| plan.to_string()),
            ),
        ]
    }
}

/// The link between two GPUs of the simulated machine. Both are what ROCr reports for GPUs of
/// one host, through KFD's I/O link table: one hop (ROCr reports a single hop between any two
/// GPUs) whose NUMA distance is KFD's link weight, 15 for a direct xGMI link and 40 for a
/// PCIe path through the root complex (20 per GPU-to-CPU link); AMD's HIP runtime divides the
/// distance by 15 (xGMI) or 20 (otherwise) for `hipExtGetLinkTypeAndHopCount`'s hop count.
/// The default is xGMI: gfx90a and gfx942 parts (MI200, MI300) come in xGMI hives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuLink {
    Xgmi,
    Pcie,
}

/// A year: the largest `HSASIM_DISPATCH_TIMEOUT`, for "never" in practice.
const MAX_DISPATCH_TIMEOUT_S: u64 = 365 * 24 * 3600;

/// Where the knobs come from, and what was wrong with them.
struct Vars<'a> {
    get: &'a dyn Fn(&str) -> Result<String, VarError>,
    warnings: Vec<String>,
}

impl Vars<'_> {
    /// Reads `doc`'s variable; unset or blank gives `default`, and a malformed value is
    /// reported (naming the variable, the accepted forms and the default) and gives
    /// `default`, so a typo never silently changes the machine.
    fn read<T>(&mut self, doc: &SettingDoc, default: T, parse: impl Fn(&str) -> Option<T>) -> T {
        match (self.get)(doc.name) {
            Err(VarError::NotPresent) => default,
            Ok(v) if v.trim().is_empty() => default,
            Ok(v) => match parse(&v) {
                Some(x) => x,
                None => {
                    self.warnings.push(doc.malformed(&v));
                    default
                }
            },
            Err(VarError::NotUnicode(raw)) => {
                self.warnings
                    .push(doc.malformed(&raw.to_string_lossy()) + " (not valid UTF-8)");
                default
            }
        }
    }

    /// An integer setting, within the bounds its [`Accepted::Integer`] documents.
    fn num<T: TryFrom<u64>>(&mut self, doc: &SettingDoc, default: T) -> T {
        self.read(doc, default, |s| doc.integer(s))
    }

    fn path(&mut self, doc: &SettingDoc) -> Option<std::path::PathBuf> {
        self.read(doc, None, |s| Some(Some(std::path::PathBuf::from(s))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(vars: &[(&str, &str)]) -> (Config, Vec<String>) {
        Config::from_vars(&|name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
                .ok_or(VarError::NotPresent)
        })
    }

    #[test]
    fn limits_default_to_the_documented_values() {
        let (c, warnings) = parse(&[]);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(c.max_wave_instructions, 1 << 32);
        assert_eq!(c.dispatch_timeout, Duration::from_secs(300));
    }

    #[test]
    fn limits_take_positive_integers() {
        let (c, warnings) = parse(&[
            ("HSASIM_MAX_WAVE_INSTRUCTIONS", "1000000"),
            ("HSASIM_DISPATCH_TIMEOUT", " 2 "),
        ]);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(c.max_wave_instructions, 1_000_000);
        assert_eq!(c.dispatch_timeout, Duration::from_secs(2));
    }

    #[test]
    fn zero_or_malformed_limits_warn_and_keep_the_defaults() {
        for (name, value) in [
            ("HSASIM_MAX_WAVE_INSTRUCTIONS", "0"),
            ("HSASIM_MAX_WAVE_INSTRUCTIONS", "-1"),
            ("HSASIM_MAX_WAVE_INSTRUCTIONS", "1e9"),
            ("HSASIM_MAX_WAVE_INSTRUCTIONS", "18446744073709551616"),
            ("HSASIM_DISPATCH_TIMEOUT", "0"),
            ("HSASIM_DISPATCH_TIMEOUT", "1.5"),
            ("HSASIM_DISPATCH_TIMEOUT", "99999999999"),
        ] {
            let (c, warnings) = parse(&[(name, value)]);
            let doc = SETTINGS.iter().find(|doc| doc.name == name).unwrap();
            assert_eq!(warnings, [doc.malformed(value)]);
            assert_eq!(c.max_wave_instructions, DEFAULT_MAX_WAVE_INSTRUCTIONS);
            assert_eq!(
                c.dispatch_timeout,
                Duration::from_secs(DEFAULT_DISPATCH_TIMEOUT_S)
            );
        }
    }

    #[test]
    fn the_scheduler_model_is_off_unless_asked_for() {
        let (c, warnings) = parse(&[("HSASIM_SCHED_SLOTS", "16")]);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert!(c.sched.is_none() && c.device_service.is_none());
        assert_eq!(c.queue_id_base, 0);
        let (c, warnings) = parse(&[
            ("HSASIM_SCHED", "1"),
            ("HSASIM_SCHED_SLOTS", "16"),
            ("HSASIM_SCHED_MAX_PROCS", "4"),
            ("HSASIM_SCHED_QUANTUM_US", "2000"),
            ("HSASIM_QUEUE_ID_BASE", "1000"),
            ("HSASIM_DEVICE_SERVICE", "a/b"),
        ]);
        let p = c.sched.unwrap();
        assert_eq!((p.slots, p.max_procs, p.quantum_ns), (16, 4, 2_000_000));
        assert_eq!(p.pipes, 4);
        assert_eq!(c.queue_id_base, 1000);
        assert!(c.device_service.is_none());
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].starts_with("ignoring HSASIM_DEVICE_SERVICE=\"a/b\""));
    }

    #[test]
    fn other_malformed_values_warn_the_same_way() {
        let (c, warnings) = parse(&[("HSASIM_GFX", "gfx1100"), ("HSASIM_THREADS", "2")]);
        assert_eq!(c.model, GfxModel::Gfx942);
        assert!(c.threaded);
        assert_eq!(
            warnings,
            [
                "ignoring HSASIM_GFX=\"gfx1100\": expected gfx942 | gfx90a; using the default (gfx942)",
                "ignoring HSASIM_THREADS=\"2\": expected an integer from 0 to 1; using the default (1)",
            ]
        );
    }

    /// Read when the library is loaded (`hide.rs`), not by [`Config`].
    const READ_AT_LOAD: &[&str] = &["HSASIM_HIDE"];

    #[test]
    fn every_setting_is_documented_once_and_read_by_its_documented_name() {
        let asked = std::cell::RefCell::new(Vec::new());
        Config::from_vars(&|name| {
            asked.borrow_mut().push(name.to_string());
            // The scheduler's parameters are read only when it is on.
            if name == SCHED.name {
                Ok("1".into())
            } else {
                Err(VarError::NotPresent)
            }
        });
        let mut asked = asked.into_inner();
        asked.sort();
        let mut documented: Vec<String> = SETTINGS
            .iter()
            .map(|doc| doc.name.to_string())
            .filter(|name| !READ_AT_LOAD.contains(&name.as_str()))
            .collect();
        documented.sort();
        assert_eq!(
            asked, documented,
            "read by Config vs documented in SETTINGS (each once)"
        );
    }

    #[test]
    fn every_setting_shows_an_effective_value_in_table_order() {
        let shown: Vec<&str> = parse(&[])
            .0
            .effective_values()
            .iter()
            .map(|(doc, _)| doc.name)
            .collect();
        let documented: Vec<&str> = SETTINGS
            .iter()
            .map(|doc| doc.name)
            .filter(|name| !READ_AT_LOAD.contains(name))
            .collect();
        assert_eq!(shown, documented);
    }

    #[test]
    fn documented_defaults_are_the_values_used_when_unset() {
        // Defaults given in words rather than as a value the variable takes.
        let in_words = [
            CUS.name,
            WORKERS.name,
            LARGE_BAR.name,
            CAPTURE.name,
            SCHED_LOG.name,
            DEVICE_SERVICE.name,
            HIDE.name,
            LOG.name,
            TIME_MODEL.name,
        ];
        let sched_on = (SCHED.name, "1");
        let unset = parse(&[sched_on]).0.effective_values();
        for doc in SETTINGS.iter().filter(|doc| !in_words.contains(&doc.name)) {
            let (_, value) = unset.iter().find(|(d, _)| d.name == doc.name).unwrap();
            let set = if doc.name == SCHED.name {
                vec![(doc.name, doc.default)]
            } else {
                vec![sched_on, (doc.name, doc.default)]
            };
            let (set, warnings) = parse(&set);
            assert!(warnings.is_empty(), "{warnings:?}");
            let set = set.effective_values();
            let (_, set_value) = set.iter().find(|(d, _)| d.name == doc.name).unwrap();
            if doc.name == SCHED.name {
                assert_eq!(set_value, "0", "HSASIM_SCHED={:?}", doc.default);
            } else {
                assert_eq!(set_value, value, "{}={:?}", doc.name, doc.default);
            }
        }
        let (c, _) = parse(&[]);
        assert_eq!((c.compute_units, c.large_bar), (304, true));
        let (c, _) = parse(&[(GFX.name, "gfx90a"), (STRICT.name, "1")]);
        assert_eq!((c.compute_units, c.large_bar), (104, false));
    }

    #[test]
    fn the_log_filter_and_paths_are_taken_as_given() {
        let (c, warnings) = parse(&[
            ("HSASIM_LOG", "hsasim=info"),
            ("HSASIM_CAPTURE", "/tmp/packets.jsonl"),
        ]);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(c.log.as_deref(), Some("hsasim=info"));
        assert_eq!(
            c.capture.as_deref(),
            Some(std::path::Path::new("/tmp/packets.jsonl"))
        );
        let (c, _) = parse(&[("HSASIM_LOG", " ")]);
        assert_eq!(c.log, None);
    }
}

//! Every knob of the simulated machine, read once from the environment at `hsa_init`.

use hsasim_isa::GfxModel;
use std::env::VarError;
use std::str::FromStr;
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
    /// `HSASIM_FAIL=POINT[,POINT...][:p=P][:seed=N][:after=K][:count=N]`: make HSA calls fail
    /// on purpose, with the status ROCr returns when the resource runs out (see `fail.rs`).
    /// POINT is `queue_create`, `pool_allocate`, `signal_create`, `async_copy`,
    /// `executable_load`, `interrupt_signal` (a new CPU-waitable signal gets no interrupt
    /// event: a polling signal, as ROCr makes when KFD's events run out) or `all`; each call
    /// at a chosen point, after the first K (0), fails with probability P (1), drawn from
    /// its number and the seed N (0), until `count` (unlimited) have failed. Each failure is
    /// logged at warn level. Default off.
    pub fail: Option<crate::fail::FailPlan>,
}

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
    fn from_vars(get: &dyn Fn(&str) -> Result<String, VarError>) -> (Self, Vec<String>) {
        let mut vars = Vars {
            get,
            warnings: Vec::new(),
        };
        let model = vars.read(
            "HSASIM_GFX",
            "gfx942 or gfx90a",
            GfxModel::Gfx942,
            |s| match s.trim().to_ascii_lowercase().as_str() {
                "gfx942" => Some(GfxModel::Gfx942),
                "gfx90a" => Some(GfxModel::Gfx90a),
                _ => None,
            },
        );
        let default_cus = match model {
            GfxModel::Gfx942 => 304,
            GfxModel::Gfx90a => 104,
        };
        let workers_default = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        let strict = vars.num("HSASIM_STRICT", 0u32, 0, 1) != 0;
        let config = Config {
            model,
            gpus: vars.num("HSASIM_GPUS", 1u32, 1, 16),
            compute_units: vars.num("HSASIM_CUS", default_cus, 1, 1024),
            device_memory_bytes: vars.num("HSASIM_MEM_GB", 16u64, 1, 1 << 16) << 30,
            sdma_engines: vars.num("HSASIM_SDMA_ENGINES", 2u32, 1, 16),
            max_queues: vars.num("HSASIM_MAX_QUEUES", 128u32, 1, 4096),
            workers: vars.num("HSASIM_WORKERS", workers_default, 1, 1024),
            max_wave_instructions: vars.num(
                "HSASIM_MAX_WAVE_INSTRUCTIONS",
                DEFAULT_MAX_WAVE_INSTRUCTIONS,
                1,
                u64::MAX,
            ),
            dispatch_timeout: Duration::from_secs(vars.num(
                "HSASIM_DISPATCH_TIMEOUT",
                DEFAULT_DISPATCH_TIMEOUT_S,
                1,
                MAX_DISPATCH_TIMEOUT_S,
            )),
            threaded: vars.num("HSASIM_THREADS", 1u32, 0, 1) != 0,
            strict,
            large_bar: vars.num("HSASIM_LARGE_BAR", u32::from(!strict), 0, 1) != 0,
            gpu_link: vars.read(
                "HSASIM_GPU_LINK",
                "xgmi or pcie",
                GpuLink::Xgmi,
                |s| match s.trim().to_ascii_lowercase().as_str() {
                    "xgmi" => Some(GpuLink::Xgmi),
                    "pcie" => Some(GpuLink::Pcie),
                    _ => None,
                },
            ),
            capture: std::env::var_os("HSASIM_CAPTURE")
                .filter(|p| !p.is_empty())
                .map(std::path::PathBuf::from),
            sched: None,
            sched_log: (get)("HSASIM_SCHED_LOG")
                .ok()
                .filter(|p| !p.is_empty())
                .map(std::path::PathBuf::from),
            device_service: vars.read(
                "HSASIM_DEVICE_SERVICE",
                "a device name (letters, digits, '-', '_', '.')",
                None,
                |s| {
                    let name = s.trim();
                    hsasim_sched::device::check_name(name)
                        .ok()
                        .map(|()| Some(name.to_string()))
                },
            ),
            queue_id_base: vars.num("HSASIM_QUEUE_ID_BASE", 0u64, 0, 1 << 40),
            fail: vars.read(
                "HSASIM_FAIL",
                "POINT[,POINT...][:p=P][:seed=N][:after=K][:count=N] (POINT: queue_create, \
                 pool_allocate, signal_create, async_copy, executable_load, interrupt_signal \
                 or all)",
                None,
                |s| crate::fail::FailPlan::parse(s).map(Some),
            ),
        };
        let mut config = config;
        if vars.num("HSASIM_SCHED", 0u32, 0, 1) != 0 {
            let d = hsasim_sched::Params::default();
            let us = 1_000u64;
            config.sched = Some(
                hsasim_sched::Params {
                    slots: vars.num("HSASIM_SCHED_SLOTS", d.slots, 1, 256),
                    pipes: vars.num("HSASIM_SCHED_PIPES", d.pipes, 1, 256),
                    max_procs: vars.num("HSASIM_SCHED_MAX_PROCS", d.max_procs, 1, 64),
                    quantum_ns: vars.num(
                        "HSASIM_SCHED_QUANTUM_US",
                        d.quantum_ns / us,
                        1,
                        10_000_000,
                    ) * us,
                    map_ns: vars.num("HSASIM_SCHED_MAP_US", d.map_ns / us, 0, 10_000_000) * us,
                    unmap_ns: vars.num("HSASIM_SCHED_UNMAP_US", d.unmap_ns / us, 0, 10_000_000)
                        * us,
                    update_ns: vars.num("HSASIM_SCHED_UPDATE_US", d.update_ns / us, 0, 10_000_000)
                        * us,
                    serial_updates: vars.num("HSASIM_SCHED_SERIAL_UPDATES", d.serial_updates, 0, 1),
                    skip_idle: vars.num("HSASIM_SCHED_SKIP_IDLE", d.skip_idle, 0, 1),
                    ..d
                }
                .clamped(),
            );
        }
        (config, vars.warnings)
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
    /// Reads `name`; a malformed value is reported (naming the variable and the accepted
    /// forms) and the default is used, so a typo never silently changes the machine.
    fn read<T>(
        &mut self,
        name: &str,
        accepted: &str,
        default: T,
        parse: impl Fn(&str) -> Option<T>,
    ) -> T {
        match (self.get)(name) {
            Err(VarError::NotPresent) => default,
            Ok(v) if v.trim().is_empty() => default,
            Ok(v) => match parse(&v) {
                Some(x) => x,
                None => {
                    self.warnings.push(format!(
                        "ignoring {name}={v:?}: expected {accepted}; using the default"
                    ));
                    default
                }
            },
            Err(VarError::NotUnicode(_)) => {
                self.warnings.push(format!(
                    "ignoring {name}: not valid UTF-8; expected {accepted}; using the default"
                ));
                default
            }
        }
    }

    fn num<T>(&mut self, name: &str, default: T, min: T, max: T) -> T
    where
        T: FromStr + PartialOrd + Copy + std::fmt::Display,
    {
        let accepted = format!("an integer from {min} to {max}");
        self.read(name, &accepted, default, |s| {
            s.trim()
                .parse::<T>()
                .ok()
                .filter(|v| *v >= min && *v <= max)
        })
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
            assert_eq!(
                warnings,
                [format!(
                    "ignoring {name}={value:?}: expected an integer from 1 to {}; using the default",
                    if name == "HSASIM_DISPATCH_TIMEOUT" {
                        MAX_DISPATCH_TIMEOUT_S
                    } else {
                        u64::MAX
                    }
                )]
            );
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
                "ignoring HSASIM_GFX=\"gfx1100\": expected gfx942 or gfx90a; using the default",
                "ignoring HSASIM_THREADS=\"2\": expected an integer from 0 to 1; using the default",
            ]
        );
    }
}

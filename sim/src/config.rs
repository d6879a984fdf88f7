//! Every knob of the simulated machine, read once from the environment at `hsa_init`.

use hsasim_isa::GfxModel;
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
}

impl Config {
    pub fn from_env() -> Self {
        let model = read_env(
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
        Config {
            model,
            gpus: read_num("HSASIM_GPUS", 1u32, 1, 16),
            compute_units: read_num("HSASIM_CUS", default_cus, 1, 1024),
            device_memory_bytes: read_num("HSASIM_MEM_GB", 16u64, 1, 1 << 16) << 30,
            sdma_engines: read_num("HSASIM_SDMA_ENGINES", 2u32, 1, 16),
            max_queues: read_num("HSASIM_MAX_QUEUES", 128u32, 1, 4096),
            workers: read_num("HSASIM_WORKERS", workers_default, 1, 1024),
            max_wave_instructions: read_num(
                "HSASIM_MAX_WAVE_INSTRUCTIONS",
                DEFAULT_MAX_WAVE_INSTRUCTIONS,
                1,
                u64::MAX,
            ),
            dispatch_timeout: Duration::from_secs(read_num(
                "HSASIM_DISPATCH_TIMEOUT",
                DEFAULT_DISPATCH_TIMEOUT_S,
                1,
                MAX_DISPATCH_TIMEOUT_S,
            )),
            threaded: read_num("HSASIM_THREADS", 1u32, 0, 1) != 0,
        }
    }
}

/// A year: the largest `HSASIM_DISPATCH_TIMEOUT`, for "never" in practice.
const MAX_DISPATCH_TIMEOUT_S: u64 = 365 * 24 * 3600;

/// Reads `name`; a malformed value is reported on stderr (naming the variable and the
/// accepted forms) and the default is used, so a typo never silently changes the machine.
fn read_env<T>(name: &str, accepted: &str, default: T, parse: impl Fn(&str) -> Option<T>) -> T {
    match std::env::var(name) {
        Err(std::env::VarError::NotPresent) => default,
        Ok(v) if v.trim().is_empty() => default,
        Ok(v) => match parse(&v) {
            Some(x) => x,
            None => {
                eprintln!("hsasim: ignoring {name}={v:?}: expected {accepted}; using the default");
                default
            }
        },
        Err(_) => {
            eprintln!("hsasim: ignoring {name}: not valid UTF-8; expected {accepted}");
            default
        }
    }
}

fn read_num<T>(name: &str, default: T, min: T, max: T) -> T
where
    T: FromStr + PartialOrd + Copy + std::fmt::Display,
{
    let accepted = format!("an integer from {min} to {max}");
    read_env(name, &accepted, default, |s| {
        s.trim()
            .parse::<T>()
            .ok()
            .filter(|v| *v >= min && *v <= max)
    })
}

//! Every `HIPSHIM_*` setting, read once from the environment. A malformed value is reported
//! on stderr with the accepted forms and the default is used: a typo must never stop a
//! program that would otherwise run.

use std::fmt;
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceChoice {
    /// ROCr with a GPU if there is one, else the bundled software GPU.
    Auto,
    /// ROCr with a GPU, or an error.
    Gpu,
    /// The bundled software GPU (hsasim).
    Sim,
}

#[derive(Clone, Debug)]
pub struct Config {
    /// `HIPSHIM_HSA_LIB`: the HSA runtime library to load, overriding the device choice.
    pub hsa_lib: Option<PathBuf>,
    /// `HIPSHIM_DEVICE` = auto | gpu | sim (default auto).
    pub device: DeviceChoice,
    /// `HIPSHIM_LOG`: a tracing filter (e.g. `debug`, `hipshim=trace`); unset = warnings only.
    pub log: Option<String>,
    /// `HIPSHIM_QUEUE_SIZE`: packets per AQL queue, a power of two (default 1024).
    pub queue_size: u32,
    /// `HIPSHIM_QUEUE_POLICY`: which HSA queue serves each stream (default `pool:4`; AMD's
    /// `GPU_MAX_HW_QUEUES` sets the pool size when the policy does not name one).
    pub queue_policy: PolicySpec,
    /// `HIPSHIM_GRAPH_QUEUES`: queues a graph launch may spread independent branches of
    /// kernel nodes over (default 1: the launching stream's own queue; at most
    /// [`Config::MAX_GRAPH_QUEUES`]); 0 submits every node through the runtime's eager
    /// operations instead of prebuilt packets (for comparison). See `runtime/graph/exec`.
    pub graph_queues: u32,
    /// `HIPSHIM_TRACE`: write a Chrome/Perfetto JSON timeline to this file at exit.
    pub trace: Option<PathBuf>,
    /// `HIPSHIM_STATS` = 1 (tables on stderr at exit) | a file path | 0 (default).
    pub stats: StatsOutput,
    /// `HIPSHIM_STATS_FORMAT` = text | json | csv: how those tables are written (default text;
    /// the schema of json and csv is `docs/guide/output-formats.md`).
    pub stats_format: OutputFormat,
    /// `HIPSHIM_ABI` = 5 | 6 | 7: the ROCm generation whose behaviour the program gets, where
    /// ROCm 5, 6 and 7 differ for the same name (`runtime::base::compat`). Unset: decided from the
    /// name the library was loaded as (`libamdhip64.so.N`), else ROCm 6.
    pub abi: Option<u32>,
}

/// Where `HIPSHIM_STATS` sends the tables printed at exit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StatsOutput {
    Off,
    Stderr,
    File(PathBuf),
}

impl StatsOutput {
    pub const ACCEPTED: &'static str = "1 | stderr | 0 | a file path (containing '/' or '.')";

    /// `None` if malformed.
    pub fn parse(text: &str) -> Option<StatsOutput> {
        let t = text.trim();
        match t.to_ascii_lowercase().as_str() {
            "" | "0" | "off" | "false" | "no" => Some(StatsOutput::Off),
            "1" | "on" | "true" | "yes" | "stderr" => Some(StatsOutput::Stderr),
            _ if t.contains('/') || t.contains('.') => Some(StatsOutput::File(PathBuf::from(t))),
            _ => None,
        }
    }
}

/// How a report is written: the table people read, or a document for programs
/// (`HIPSHIM_STATS_FORMAT`, and the CLI's `--format`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OutputFormat {
    #[default]
    Text,
    Json,
    Csv,
}

impl OutputFormat {
    pub const ACCEPTED: &'static str = "text | json | csv";

    /// `None` if malformed.
    pub fn parse(text: &str) -> Option<OutputFormat> {
        match text.trim().to_ascii_lowercase().as_str() {
            "" | "text" => Some(OutputFormat::Text),
            "json" => Some(OutputFormat::Json),
            "csv" => Some(OutputFormat::Csv),
            _ => None,
        }
    }
}

impl fmt::Display for OutputFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OutputFormat::Text => "text",
            OutputFormat::Json => "json",
            OutputFormat::Csv => "csv",
        })
    }
}

/// How a pool picks among its queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolStrategy {
    /// An idle queue, else a new one while the pool is not full, else the least-loaded.
    LeastLoaded,
    /// Queue `k mod N` for the k-th assignment.
    RoundRobin,
}

/// The configured queue policy (parsed from `HIPSHIM_QUEUE_POLICY`); what each one does is
/// `crate::policy`'s business.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicySpec {
    Dedicated,
    Single,
    Pool { size: u32, strategy: PoolStrategy },
}

impl PolicySpec {
    pub const DEFAULT_POOL: u32 = 4;
    pub const MAX_POOL: u32 = 1024;
    /// The accepted forms, for the message about a malformed value.
    pub const ACCEPTED: &'static str =
        "dedicated | single | pool | pool:N | pool:N:rr | pool:N:ll (N from 1 to 1024)";

    /// A least-loaded pool of `size` queues per priority.
    pub const fn pool(size: u32) -> PolicySpec {
        PolicySpec::Pool {
            size,
            strategy: PoolStrategy::LeastLoaded,
        }
    }

    /// Parses a policy; a pool without a size gets `default_pool`. `None` if malformed.
    pub fn parse(text: &str, default_pool: u32) -> Option<PolicySpec> {
        let text = text.trim().to_ascii_lowercase();
        let mut parts = text.split(':');
        match parts.next()? {
            "dedicated" if parts.next().is_none() => Some(PolicySpec::Dedicated),
            "single" if parts.next().is_none() => Some(PolicySpec::Single),
            "pool" => {
                let (mut size, mut strategy) = (None, None);
                for part in parts {
                    match part {
                        "rr" if strategy.is_none() => strategy = Some(PoolStrategy::RoundRobin),
                        "ll" if strategy.is_none() => strategy = Some(PoolStrategy::LeastLoaded),
                        n if size.is_none() && strategy.is_none() => {
                            let n: u32 = n.parse().ok()?;
                            if !(1..=Self::MAX_POOL).contains(&n) {
                                return None;
                            }
                            size = Some(n);
                        }
                        _ => return None,
                    }
                }
                Some(PolicySpec::Pool {
                    size: size.unwrap_or(default_pool),
                    strategy: strategy.unwrap_or(PoolStrategy::LeastLoaded),
                })
            }
            _ => None,
        }
    }
}

impl fmt::Display for PolicySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PolicySpec::Dedicated => f.write_str("dedicated"),
            PolicySpec::Single => f.write_str("single"),
            PolicySpec::Pool {
                size,
                strategy: PoolStrategy::LeastLoaded,
            } => write!(f, "pool:{size}"),
            PolicySpec::Pool {
                size,
                strategy: PoolStrategy::RoundRobin,
            } => write!(f, "pool:{size}:rr"),
        }
    }
}

/// `HIPSHIM_TRACE`: a file path, or off. `Err` if malformed (a flag value instead of a path,
/// or a directory).
fn parse_trace(text: &str) -> Result<Option<PathBuf>, ()> {
    let t = text.trim();
    match t.to_ascii_lowercase().as_str() {
        "" | "0" | "off" | "false" | "no" => Ok(None),
        "1" | "on" | "true" | "yes" => Err(()),
        _ if t.ends_with('/') || std::path::Path::new(t).is_dir() => Err(()),
        _ => Ok(Some(PathBuf::from(t))),
    }
}

impl Config {
    /// The process's settings, read from the environment on first use.
    pub fn global() -> &'static Config {
        static GLOBAL: std::sync::OnceLock<Config> = std::sync::OnceLock::new();
        GLOBAL.get_or_init(Config::from_env)
    }

    /// Most queues one graph launch spreads over.
    pub const MAX_GRAPH_QUEUES: u32 = 16;

    pub fn from_env() -> Config {
        Config::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads settings through `lookup` (the environment, or a map in tests).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Config {
        let device = match lookup("HIPSHIM_DEVICE").as_deref().map(str::trim) {
            None | Some("") | Some("auto") => DeviceChoice::Auto,
            Some("gpu") => DeviceChoice::Gpu,
            Some("sim") => DeviceChoice::Sim,
            Some(other) => {
                warn_malformed("HIPSHIM_DEVICE", other, "auto | gpu | sim", "auto");
                DeviceChoice::Auto
            }
        };
        let queue_size = match lookup("HIPSHIM_QUEUE_SIZE") {
            None => 1024,
            Some(text) => match text.trim().parse::<u32>() {
                Ok(n) if n.is_power_of_two() && (64..=1 << 20).contains(&n) => n,
                _ => {
                    warn_malformed(
                        "HIPSHIM_QUEUE_SIZE",
                        &text,
                        "a power of two from 64 to 1048576",
                        "1024",
                    );
                    1024
                }
            },
        };
        let pool_size = match lookup("GPU_MAX_HW_QUEUES") {
            None => PolicySpec::DEFAULT_POOL,
            Some(text) => match text.trim().parse::<u32>() {
                Ok(n) if (1..=PolicySpec::MAX_POOL).contains(&n) => n,
                _ => {
                    warn_malformed(
                        "GPU_MAX_HW_QUEUES",
                        &text,
                        "a queue count from 1 to 1024",
                        "4",
                    );
                    PolicySpec::DEFAULT_POOL
                }
            },
        };
        let queue_policy = match lookup("HIPSHIM_QUEUE_POLICY") {
            None => PolicySpec::pool(pool_size),
            Some(text) if text.trim().is_empty() => PolicySpec::pool(pool_size),
            Some(text) => PolicySpec::parse(&text, pool_size).unwrap_or_else(|| {
                warn_malformed(
                    "HIPSHIM_QUEUE_POLICY",
                    &text,
                    PolicySpec::ACCEPTED,
                    &PolicySpec::pool(pool_size).to_string(),
                );
                PolicySpec::pool(pool_size)
            }),
        };
        let graph_queues = match lookup("HIPSHIM_GRAPH_QUEUES") {
            None => 1,
            Some(text) => match text.trim().parse::<u32>() {
                Ok(n) if n <= Config::MAX_GRAPH_QUEUES => n,
                _ => {
                    warn_malformed(
                        "HIPSHIM_GRAPH_QUEUES",
                        &text,
                        "a queue count from 1 to 16, or 0 (no prebuilt packets)",
                        "1",
                    );
                    1
                }
            },
        };
        let trace = match lookup("HIPSHIM_TRACE") {
            None => None,
            Some(text) => parse_trace(&text).unwrap_or_else(|()| {
                warn_malformed(
                    "HIPSHIM_TRACE",
                    &text,
                    "a path of a file to write, e.g. HIPSHIM_TRACE=trace.json",
                    "no trace",
                );
                None
            }),
        };
        let stats = match lookup("HIPSHIM_STATS") {
            None => StatsOutput::Off,
            Some(text) => StatsOutput::parse(&text).unwrap_or_else(|| {
                warn_malformed(
                    "HIPSHIM_STATS",
                    &text,
                    StatsOutput::ACCEPTED,
                    "0 (no stats)",
                );
                StatsOutput::Off
            }),
        };
        let stats_format = match lookup("HIPSHIM_STATS_FORMAT") {
            None => OutputFormat::Text,
            Some(text) => OutputFormat::parse(&text).unwrap_or_else(|| {
                warn_malformed(
                    "HIPSHIM_STATS_FORMAT",
                    &text,
                    OutputFormat::ACCEPTED,
                    "text",
                );
                OutputFormat::Text
            }),
        };
        let abi = match lookup("HIPSHIM_ABI") {
            None => None,
            Some(text) if text.trim().is_empty() => None,
            Some(text) => match text.trim().parse::<u32>() {
                Ok(n @ 5..=7) => Some(n),
                _ => {
                    warn_malformed(
                        "HIPSHIM_ABI",
                        &text,
                        "5 | 6 | 7",
                        "the version the library was loaded as",
                    );
                    None
                }
            },
        };
        Config {
            abi,
            trace,
            stats,
            stats_format,
            queue_policy,
            hsa_lib: lookup("HIPSHIM_HSA_LIB")
                .filter(|s| !s.is_empty())
                .map(PathBuf::from),
            device,
            log: lookup("HIPSHIM_LOG").filter(|s| !s.is_empty()),
            queue_size,
            graph_queues,
        }
    }
}

fn warn_malformed(variable: &str, value: &str, accepted: &str, default: &str) {
    eprintln!(
        "hipshim: ignoring {variable}={value:?}: accepted values are {accepted}; using {default}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn policies_parse_in_every_accepted_form() {
        assert_eq!(
            PolicySpec::parse("dedicated", 4),
            Some(PolicySpec::Dedicated)
        );
        assert_eq!(PolicySpec::parse(" Single ", 4), Some(PolicySpec::Single));
        assert_eq!(PolicySpec::parse("pool", 6), Some(PolicySpec::pool(6)));
        assert_eq!(PolicySpec::parse("pool:8", 4), Some(PolicySpec::pool(8)));
        assert_eq!(PolicySpec::parse("pool:8:ll", 4), Some(PolicySpec::pool(8)));
        assert_eq!(
            PolicySpec::parse("pool:2:rr", 4),
            Some(PolicySpec::Pool {
                size: 2,
                strategy: PoolStrategy::RoundRobin
            })
        );
        assert_eq!(
            PolicySpec::parse("pool:rr", 3),
            Some(PolicySpec::Pool {
                size: 3,
                strategy: PoolStrategy::RoundRobin
            })
        );
    }

    #[test]
    fn malformed_policies_are_rejected() {
        for bad in [
            "",
            "pool:0",
            "pool:1025",
            "pool:x",
            "pool:4:rr:2",
            "pool:rr:4",
            "single:2",
            "many",
            "dedicated:",
            "pool:4:fifo",
        ] {
            assert_eq!(PolicySpec::parse(bad, 4), None, "{bad:?}");
        }
    }

    #[test]
    fn policies_print_as_they_parse() {
        for text in ["dedicated", "single", "pool:4", "pool:2:rr"] {
            assert_eq!(PolicySpec::parse(text, 4).unwrap().to_string(), text);
        }
    }

    fn config(pairs: &[(&str, &str)]) -> Config {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_lookup(|k| map.get(k).cloned())
    }

    #[test]
    fn defaults_when_unset() {
        let c = config(&[]);
        assert_eq!(c.device, DeviceChoice::Auto);
        assert!(c.hsa_lib.is_none());
        assert_eq!(c.queue_size, 1024);
    }

    #[test]
    fn device_choice_is_parsed_and_bad_values_fall_back_to_auto() {
        assert_eq!(
            config(&[("HIPSHIM_DEVICE", "sim")]).device,
            DeviceChoice::Sim
        );
        assert_eq!(
            config(&[("HIPSHIM_DEVICE", "gpu")]).device,
            DeviceChoice::Gpu
        );
        assert_eq!(
            config(&[("HIPSHIM_DEVICE", "tpu")]).device,
            DeviceChoice::Auto
        );
    }

    #[test]
    fn queue_policy_defaults_to_a_pool_of_four_least_loaded() {
        assert_eq!(config(&[]).queue_policy, PolicySpec::pool(4));
        assert_eq!(config(&[]).queue_policy.to_string(), "pool:4");
    }

    #[test]
    fn queue_policy_is_parsed_and_bad_values_fall_back_to_the_default() {
        let policy = |v: &str| config(&[("HIPSHIM_QUEUE_POLICY", v)]).queue_policy;
        assert_eq!(policy("single"), PolicySpec::Single);
        assert_eq!(policy("dedicated"), PolicySpec::Dedicated);
        assert_eq!(policy("pool:2:rr").to_string(), "pool:2:rr");
        assert_eq!(policy("fastest"), PolicySpec::pool(4));
        assert_eq!(policy("pool:0"), PolicySpec::pool(4));
    }

    #[test]
    fn gpu_max_hw_queues_sets_the_pool_size_unless_the_policy_names_one() {
        let c = config(&[("GPU_MAX_HW_QUEUES", "2")]);
        assert_eq!(c.queue_policy, PolicySpec::pool(2));
        let c = config(&[
            ("GPU_MAX_HW_QUEUES", "2"),
            ("HIPSHIM_QUEUE_POLICY", "pool:rr"),
        ]);
        assert_eq!(c.queue_policy.to_string(), "pool:2:rr");
        let c = config(&[
            ("GPU_MAX_HW_QUEUES", "2"),
            ("HIPSHIM_QUEUE_POLICY", "pool:8"),
        ]);
        assert_eq!(c.queue_policy, PolicySpec::pool(8));
        let c = config(&[("GPU_MAX_HW_QUEUES", "lots")]);
        assert_eq!(c.queue_policy, PolicySpec::pool(4));
    }

    #[test]
    fn trace_and_stats_take_paths_and_flags() {
        assert_eq!(config(&[]).trace, None);
        assert_eq!(config(&[]).stats, StatsOutput::Off);
        let c = config(&[("HIPSHIM_TRACE", "out.json"), ("HIPSHIM_STATS", "1")]);
        assert_eq!(c.trace, Some(PathBuf::from("out.json")));
        assert_eq!(c.stats, StatsOutput::Stderr);
        let c = config(&[("HIPSHIM_TRACE", "1"), ("HIPSHIM_STATS", "/tmp/s.txt")]);
        assert_eq!(c.trace, None, "a flag is not a path");
        assert_eq!(c.stats, StatsOutput::File(PathBuf::from("/tmp/s.txt")));
        assert_eq!(config(&[("HIPSHIM_TRACE", "/tmp/")]).trace, None);
        assert_eq!(config(&[("HIPSHIM_STATS", "lots")]).stats, StatsOutput::Off);
        assert_eq!(config(&[("HIPSHIM_STATS", "0")]).stats, StatsOutput::Off);
        assert_eq!(config(&[]).stats_format, OutputFormat::Text);
        let json = config(&[("HIPSHIM_STATS_FORMAT", " JSON ")]);
        assert_eq!(json.stats_format, OutputFormat::Json);
        let csv = config(&[("HIPSHIM_STATS_FORMAT", "csv")]);
        assert_eq!(csv.stats_format, OutputFormat::Csv);
        let typo = config(&[("HIPSHIM_STATS_FORMAT", "yaml")]);
        assert_eq!(typo.stats_format, OutputFormat::Text);
    }

    #[test]
    fn abi_takes_a_rocm_major_version() {
        assert_eq!(config(&[]).abi, None);
        assert_eq!(config(&[("HIPSHIM_ABI", "5")]).abi, Some(5));
        assert_eq!(config(&[("HIPSHIM_ABI", " 7 ")]).abi, Some(7));
        assert_eq!(config(&[("HIPSHIM_ABI", "8")]).abi, None);
        assert_eq!(config(&[("HIPSHIM_ABI", "rocm6")]).abi, None);
    }

    #[test]
    fn queue_size_must_be_a_power_of_two() {
        assert_eq!(config(&[("HIPSHIM_QUEUE_SIZE", "256")]).queue_size, 256);
        assert_eq!(config(&[("HIPSHIM_QUEUE_SIZE", "300")]).queue_size, 1024);
        assert_eq!(config(&[("HIPSHIM_QUEUE_SIZE", "x")]).queue_size, 1024);
    }
}

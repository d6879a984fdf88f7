//! Every `HIPSHIM_*` setting, read once from the environment. A malformed value is reported
//! on stderr with the accepted forms and the default is used: a typo must never stop a
//! program that would otherwise run.

use crate::policy::PolicySpec;
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
    /// `HIPSHIM_TRACE`: write a Chrome/Perfetto JSON timeline to this file at exit.
    pub trace: Option<PathBuf>,
    /// `HIPSHIM_STATS` = 1 (tables on stderr at exit) | a file path | 0 (default).
    pub stats: StatsOutput,
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
        Config {
            trace,
            stats,
            queue_policy,
            hsa_lib: lookup("HIPSHIM_HSA_LIB")
                .filter(|s| !s.is_empty())
                .map(PathBuf::from),
            device,
            log: lookup("HIPSHIM_LOG").filter(|s| !s.is_empty()),
            queue_size,
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
    }

    #[test]
    fn queue_size_must_be_a_power_of_two() {
        assert_eq!(config(&[("HIPSHIM_QUEUE_SIZE", "256")]).queue_size, 256);
        assert_eq!(config(&[("HIPSHIM_QUEUE_SIZE", "300")]).queue_size, 1024);
        assert_eq!(config(&[("HIPSHIM_QUEUE_SIZE", "x")]).queue_size, 1024);
    }
}

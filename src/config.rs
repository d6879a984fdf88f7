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
        Config {
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
    fn queue_size_must_be_a_power_of_two() {
        assert_eq!(config(&[("HIPSHIM_QUEUE_SIZE", "256")]).queue_size, 256);
        assert_eq!(config(&[("HIPSHIM_QUEUE_SIZE", "300")]).queue_size, 1024);
        assert_eq!(config(&[("HIPSHIM_QUEUE_SIZE", "x")]).queue_size, 1024);
    }
}

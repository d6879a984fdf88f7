//! Every `HIPSHIM_*` setting, read once from the environment. A malformed value is reported
//! on stderr with the accepted forms and the default is used: a typo must never stop a
//! program that would otherwise run.

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
        Config {
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
    fn queue_size_must_be_a_power_of_two() {
        assert_eq!(config(&[("HIPSHIM_QUEUE_SIZE", "256")]).queue_size, 256);
        assert_eq!(config(&[("HIPSHIM_QUEUE_SIZE", "300")]).queue_size, 1024);
        assert_eq!(config(&[("HIPSHIM_QUEUE_SIZE", "x")]).queue_size, 1024);
    }
}

//! Every hipshim setting, read once from the environment. A malformed value is reported
//! on stderr with the accepted forms and the default is used: a typo must never stop a
//! program that would otherwise run.
//!
//! [`SETTINGS`] describes each variable once: the parser reads it by that name and words its
//! warning from that entry, `hipshim info` lists the effective values in its order, and
//! `hipshim config reference` prints it as `docs/reference/configuration.md`.

pub use config_doc::{Accepted, SettingDoc};
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
    /// `GPU_MAX_HW_QUEUES`: the size of a pool whose policy names none (default
    /// [`PolicySpec::DEFAULT_POOL`]).
    pub max_hw_queues: u32,
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
    /// `HIPSHIM_RTC_CLANG`: the compiler hiprtc runs instead of searching for one
    /// (`runtime::rtc::toolchain`).
    pub rtc_clang: Option<PathBuf>,
    /// `HIPSHIM_BITCODE_DIR`: the ROCm device libraries hiprtc links instead of searching
    /// for them.
    pub bitcode_dir: Option<PathBuf>,
}

/// `HIPSHIM_HSA_LIB`.
pub const HSA_LIB: SettingDoc = SettingDoc {
    name: "HIPSHIM_HSA_LIB",
    accepted: Accepted::Forms("a path of an HSA runtime library"),
    default: "the library HIPSHIM_DEVICE picks",
    meaning: "The HSA runtime to load (`libhsa-runtime64.so.1`, `libhsasim.so`, ...), whatever \
              `HIPSHIM_DEVICE` says.",
    run_flag: None,
};

/// `HIPSHIM_DEVICE`.
pub const DEVICE: SettingDoc = SettingDoc {
    name: "HIPSHIM_DEVICE",
    accepted: Accepted::Forms("auto | gpu | sim"),
    default: "auto",
    meaning: "Which GPU the program gets. `auto`: AMD's HSA runtime (ROCr) when it finds a GPU, \
              else the bundled software GPU (hsasim); `gpu`: ROCr with a GPU, or every HIP call \
              fails saying why; `sim`: hsasim.",
    run_flag: None,
};

/// `HIPSHIM_LOG`.
pub const LOG: SettingDoc = SettingDoc {
    name: "HIPSHIM_LOG",
    accepted: Accepted::Forms("a tracing filter, e.g. debug, hipshim=trace"),
    default: "warn",
    meaning: "What hipshim logs on stderr: `debug` shows every HIP call, `trace` every packet, \
              doorbell and wait; targets such as `hipshim::policy=info` select one kind of \
              event. Set, it also adds timestamps.",
    run_flag: Some("--log"),
};

/// `HIPSHIM_QUEUE_SIZE`.
pub const QUEUE_SIZE: SettingDoc = SettingDoc {
    name: "HIPSHIM_QUEUE_SIZE",
    accepted: Accepted::Forms("a power of two from 64 to 1048576"),
    default: "1024",
    meaning: "Packets per AQL queue hipshim creates.",
    run_flag: None,
};

/// `HIPSHIM_QUEUE_POLICY`.
pub const QUEUE_POLICY: SettingDoc = SettingDoc {
    name: "HIPSHIM_QUEUE_POLICY",
    accepted: Accepted::Forms(PolicySpec::ACCEPTED),
    default: "pool:4, or pool:N with N from GPU_MAX_HW_QUEUES",
    meaning: "Which HSA queue serves each stream: `dedicated` gives every stream its own queue, \
              `single` puts all streams of a device on one queue, `pool:N` shares N queues per \
              priority, each stream taking the least-loaded one (`ll`, the default) or the next \
              in turn (`rr`). A pool without N takes its size from `GPU_MAX_HW_QUEUES`.",
    run_flag: Some("--policy"),
};

/// `GPU_MAX_HW_QUEUES`: AMD's variable, read for the same meaning.
pub const MAX_HW_QUEUES: SettingDoc = SettingDoc {
    name: "GPU_MAX_HW_QUEUES",
    accepted: Accepted::Integer {
        min: 1,
        max: PolicySpec::MAX_POOL as u64,
    },
    default: "4",
    meaning: "AMD's runtime variable for the number of hardware queues streams share: here the \
              size of a pool whose policy names none (`pool`, `pool:rr`, and the default \
              policy).",
    run_flag: None,
};

/// `HIPSHIM_GRAPH_QUEUES`.
pub const GRAPH_QUEUES: SettingDoc = SettingDoc {
    name: "HIPSHIM_GRAPH_QUEUES",
    accepted: Accepted::Integer {
        min: 0,
        max: Config::MAX_GRAPH_QUEUES as u64,
    },
    default: "1",
    meaning: "Queues one graph launch may spread independent branches of kernel nodes over; 1 \
              keeps a launch on its stream's queue. 0 submits every node through the ordinary \
              stream operations instead of prebuilt packets, for comparison.",
    run_flag: None,
};

/// `HIPSHIM_TRACE`.
pub const TRACE: SettingDoc = SettingDoc {
    name: "HIPSHIM_TRACE",
    accepted: Accepted::Forms("a file path (not a directory), or 0 | off"),
    default: "off",
    meaning: "Write a Chrome/Perfetto JSON timeline of API calls, queues, packets, copies and \
              waits to this file when the program exits (`hipshim trace summarize` reads it).",
    run_flag: Some("--trace"),
};

/// `HIPSHIM_STATS`.
pub const STATS: SettingDoc = SettingDoc {
    name: "HIPSHIM_STATS",
    accepted: Accepted::Forms(StatsOutput::ACCEPTED),
    default: "0",
    meaning: "Print the stats tables (API calls, queues, copy engines, waits) at exit: `1` on \
              stderr, a path to that file.",
    run_flag: Some("--stats"),
};

/// `HIPSHIM_STATS_FORMAT`.
pub const STATS_FORMAT: SettingDoc = SettingDoc {
    name: "HIPSHIM_STATS_FORMAT",
    accepted: Accepted::Forms("text | json | csv"),
    default: "text",
    meaning: "The format of the `HIPSHIM_STATS` output: tables for people, or one JSON \
              document or CSV for programs (schema in `docs/guide/output-formats.md`).",
    run_flag: Some("--stats-format"),
};

/// `HIPSHIM_ABI`.
pub const ABI: SettingDoc = SettingDoc {
    name: "HIPSHIM_ABI",
    accepted: Accepted::Forms("5 | 6 | 7"),
    default: "the N of the libamdhip64.so.N name the library was loaded as, else 6",
    meaning: "The ROCm generation whose behaviour the program gets where ROCm 5, 6 and 7 differ \
              for the same name (error numbering, struct layouts, defaults).",
    run_flag: None,
};

/// `HIPSHIM_RTC_CLANG`.
pub const RTC_CLANG: SettingDoc = SettingDoc {
    name: "HIPSHIM_RTC_CLANG",
    accepted: Accepted::Forms("a path of a clang++ that targets amdgcn"),
    default: "searched: clang 19 first, on PATH, then in LLVM's and ROCm's directories",
    meaning: "The compiler hiprtc runs for HIP source compiled at run time.",
    run_flag: None,
};

/// `HIPSHIM_BITCODE_DIR`.
pub const BITCODE_DIR: SettingDoc = SettingDoc {
    name: "HIPSHIM_BITCODE_DIR",
    accepted: Accepted::Forms("a directory holding ockl.bc, ocml.bc, ..."),
    default: "searched: Debian's, then ROCm's bitcode directories",
    meaning: "The ROCm device libraries hiprtc links programs compiled at run time with.",
    run_flag: None,
};

/// Every setting hipshim reads, in the order `hipshim info` and the reference list them.
pub const SETTINGS: &[SettingDoc] = &[
    DEVICE,
    HSA_LIB,
    QUEUE_POLICY,
    MAX_HW_QUEUES,
    QUEUE_SIZE,
    GRAPH_QUEUES,
    TRACE,
    STATS,
    STATS_FORMAT,
    LOG,
    ABI,
    RTC_CLANG,
    BITCODE_DIR,
];

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

/// `HIPSHIM_TRACE`: `Some(None)` for off, `None` if malformed (a flag value instead of a
/// path, or a directory).
fn parse_trace(text: &str) -> Option<Option<PathBuf>> {
    let t = text.trim();
    match t.to_ascii_lowercase().as_str() {
        "" | "0" | "off" | "false" | "no" => Some(None),
        "1" | "on" | "true" | "yes" => None,
        _ if t.ends_with('/') || std::path::Path::new(t).is_dir() => None,
        _ => Some(Some(PathBuf::from(t))),
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

    /// Reads the environment; a value that is not UTF-8 is reported and treated as unset.
    pub fn from_env() -> Config {
        Config::from_lookup(|name| match std::env::var(name) {
            Ok(value) => Some(value),
            Err(std::env::VarError::NotPresent) => None,
            Err(std::env::VarError::NotUnicode(raw)) => {
                let doc = SETTINGS.iter().find(|doc| doc.name == name)?;
                eprintln!("hipshim: {}", doc.malformed(&raw.to_string_lossy()));
                None
            }
        })
    }

    /// Reads settings through `lookup` (the environment, or a map in tests); each malformed
    /// value is reported on stderr.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Config {
        let (config, warnings) = Config::read(lookup);
        for warning in warnings {
            eprintln!("hipshim: {warning}");
        }
        config
    }

    /// The configuration `lookup` describes, and a warning per malformed value.
    fn read(lookup: impl Fn(&str) -> Option<String>) -> (Config, Vec<String>) {
        let mut vars = Vars {
            lookup,
            warnings: Vec::new(),
        };
        let max_hw_queues = vars.parse(&MAX_HW_QUEUES, PolicySpec::DEFAULT_POOL, |text| {
            MAX_HW_QUEUES.integer(text)
        });
        let config = Config {
            hsa_lib: vars.path(&HSA_LIB),
            device: vars.parse(&DEVICE, DeviceChoice::Auto, |text| match text.trim() {
                "auto" => Some(DeviceChoice::Auto),
                "gpu" => Some(DeviceChoice::Gpu),
                "sim" => Some(DeviceChoice::Sim),
                _ => None,
            }),
            log: vars.text(&LOG),
            queue_size: vars.parse(&QUEUE_SIZE, 1024, |text| {
                text.trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|n| n.is_power_of_two() && (64..=1 << 20).contains(n))
            }),
            queue_policy: vars.parse(&QUEUE_POLICY, PolicySpec::pool(max_hw_queues), |text| {
                PolicySpec::parse(text, max_hw_queues)
            }),
            max_hw_queues,
            graph_queues: vars.parse(&GRAPH_QUEUES, 1, |text| GRAPH_QUEUES.integer(text)),
            trace: vars.parse(&TRACE, None, parse_trace),
            stats: vars.parse(&STATS, StatsOutput::Off, StatsOutput::parse),
            stats_format: vars.parse(&STATS_FORMAT, OutputFormat::Text, OutputFormat::parse),
            abi: vars.parse(&ABI, None, |text| match text.trim().parse::<u32>() {
                Ok(n @ 5..=7) => Some(Some(n)),
                _ => None,
            }),
            rtc_clang: vars.path(&RTC_CLANG),
            bitcode_dir: vars.path(&BITCODE_DIR),
        };
        (config, vars.warnings)
    }

    /// Each setting this configuration holds, with its effective value as `hipshim info`
    /// shows it, in [`SETTINGS`] order.
    pub fn effective_values(&self) -> Vec<(&'static SettingDoc, String)> {
        // Destructured whole, so that a new field cannot be left out of `hipshim info`.
        let Config {
            hsa_lib,
            device,
            log,
            queue_size,
            queue_policy,
            max_hw_queues,
            graph_queues,
            trace,
            stats,
            stats_format,
            abi,
            rtc_clang,
            bitcode_dir,
        } = self;
        let path_or = |path: &Option<PathBuf>, unset: &str| {
            path.as_ref()
                .map_or_else(|| unset.to_string(), |p| p.display().to_string())
        };
        let values = [
            (
                &DEVICE,
                match device {
                    DeviceChoice::Auto => "auto",
                    DeviceChoice::Gpu => "gpu",
                    DeviceChoice::Sim => "sim",
                }
                .to_string(),
            ),
            (&HSA_LIB, path_or(hsa_lib, "(unset)")),
            (&QUEUE_POLICY, queue_policy.to_string()),
            (&MAX_HW_QUEUES, max_hw_queues.to_string()),
            (&QUEUE_SIZE, queue_size.to_string()),
            (&GRAPH_QUEUES, graph_queues.to_string()),
            (&TRACE, path_or(trace, "off")),
            (
                &STATS,
                match stats {
                    StatsOutput::Off => "0".into(),
                    StatsOutput::Stderr => "1".into(),
                    StatsOutput::File(path) => path.display().to_string(),
                },
            ),
            (&STATS_FORMAT, stats_format.to_string()),
            (&LOG, log.clone().unwrap_or_else(|| LOG.default.into())),
            (
                &ABI,
                abi.map_or_else(
                    || "(from the loaded name, else 6)".into(),
                    |n| n.to_string(),
                ),
            ),
            (&RTC_CLANG, path_or(rtc_clang, "(searched)")),
            (&BITCODE_DIR, path_or(bitcode_dir, "(searched)")),
        ];
        Vec::from(values)
    }
}

/// Settings read by their [`SettingDoc`] through a lookup: unset or blank gives the default,
/// a malformed value the default and a warning.
struct Vars<L> {
    lookup: L,
    warnings: Vec<String>,
}

impl<L: Fn(&str) -> Option<String>> Vars<L> {
    fn text(&self, doc: &SettingDoc) -> Option<String> {
        (self.lookup)(doc.name).filter(|v| !v.trim().is_empty())
    }

    fn path(&self, doc: &SettingDoc) -> Option<PathBuf> {
        self.text(doc).map(PathBuf::from)
    }

    fn parse<T>(&mut self, doc: &SettingDoc, default: T, parse: impl Fn(&str) -> Option<T>) -> T {
        match self.text(doc) {
            None => default,
            Some(text) => parse(&text).unwrap_or_else(|| {
                self.warnings.push(doc.malformed(&text));
                default
            }),
        }
    }
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
    fn every_setting_is_documented_once_and_read_by_its_documented_name() {
        let asked = std::cell::RefCell::new(Vec::new());
        Config::read(|name| {
            asked.borrow_mut().push(name.to_string());
            None
        });
        let mut asked = asked.into_inner();
        asked.sort();
        let mut documented: Vec<String> = SETTINGS.iter().map(|doc| doc.name.to_string()).collect();
        documented.sort();
        assert_eq!(asked, documented, "read vs documented in SETTINGS");
    }

    #[test]
    fn every_setting_shows_an_effective_value_in_table_order() {
        let shown: Vec<&str> = config(&[])
            .effective_values()
            .iter()
            .map(|(doc, _)| doc.name)
            .collect();
        let documented: Vec<&str> = SETTINGS.iter().map(|doc| doc.name).collect();
        assert_eq!(shown, documented);
    }

    #[test]
    fn documented_defaults_are_the_values_used_when_unset() {
        // Defaults given in words rather than as a value the variable takes.
        let in_words = [
            HSA_LIB.name,
            QUEUE_POLICY.name,
            ABI.name,
            RTC_CLANG.name,
            BITCODE_DIR.name,
        ];
        let unset = config(&[]).effective_values();
        for doc in SETTINGS.iter().filter(|doc| !in_words.contains(&doc.name)) {
            let Some((_, value)) = unset.iter().find(|(d, _)| d.name == doc.name) else {
                continue; // awaiting its parser
            };
            let (set, warnings) =
                Config::read(|name| (name == doc.name).then(|| doc.default.into()));
            assert!(warnings.is_empty(), "{warnings:?}");
            let set = set.effective_values();
            let (_, set_value) = set.iter().find(|(d, _)| d.name == doc.name).unwrap();
            assert_eq!(set_value, value, "{}={:?}", doc.name, doc.default);
        }
        assert_eq!(
            config(&[]).queue_policy.to_string(),
            "pool:4",
            "QUEUE_POLICY.default says pool:4"
        );
    }

    #[test]
    fn a_malformed_value_is_reported_with_the_documented_forms_and_default() {
        let (c, warnings) = Config::read(|name| (name == "HIPSHIM_DEVICE").then(|| "tpu".into()));
        assert_eq!(c.device, DeviceChoice::Auto);
        assert_eq!(
            warnings,
            ["ignoring HIPSHIM_DEVICE=\"tpu\": expected auto | gpu | sim; using the default (auto)"]
        );
    }

    #[test]
    fn blank_values_take_the_default() {
        let c = config(&[
            ("HIPSHIM_DEVICE", " "),
            ("HIPSHIM_QUEUE_SIZE", ""),
            ("HIPSHIM_LOG", ""),
            ("HIPSHIM_RTC_CLANG", ""),
        ]);
        assert_eq!(c.device, DeviceChoice::Auto);
        assert_eq!(c.queue_size, 1024);
        assert_eq!((c.log, c.rtc_clang), (None, None));
    }

    #[test]
    fn the_compiler_and_bitcode_paths_are_taken_as_given() {
        let c = config(&[
            ("HIPSHIM_RTC_CLANG", "/opt/clang/bin/clang++"),
            ("HIPSHIM_BITCODE_DIR", "/opt/bitcode"),
        ]);
        assert_eq!(c.rtc_clang, Some(PathBuf::from("/opt/clang/bin/clang++")));
        assert_eq!(c.bitcode_dir, Some(PathBuf::from("/opt/bitcode")));
    }

    #[test]
    fn queue_size_must_be_a_power_of_two() {
        assert_eq!(config(&[("HIPSHIM_QUEUE_SIZE", "256")]).queue_size, 256);
        assert_eq!(config(&[("HIPSHIM_QUEUE_SIZE", "300")]).queue_size, 1024);
        assert_eq!(config(&[("HIPSHIM_QUEUE_SIZE", "x")]).queue_size, 1024);
    }
}

//! `hipshim info`: what a HIP program would get if it started now — the HSA runtime the shim
//! picks (same choice, same code: `runtime::runtime()`), its agents, ISAs, pools and queue
//! limits, and the effective configuration with where each value came from.

use amdhip64::config::{Config, OutputFormat};
use amdhip64::hsa::{self, HsaApi, PoolInfo};
use amdhip64::runtime;
use amdhip64::trace::schema;
use config_doc::SettingDoc;
use hsa_abi::*;
use serde::Serialize;
use std::ffi::c_void;
use std::fmt::Write as _;
use std::path::PathBuf;

/// What `hipshim info` found: one model, rendered as text or as a `hipshim.info` document.
#[derive(Serialize)]
pub struct Report {
    hsa_runtime: HsaRuntime,
    cpu_agent: CpuAgent,
    gpu_agents: Vec<GpuAgent>,
    configuration: Vec<ConfigRow>,
}

#[derive(Serialize)]
struct HsaRuntime {
    library: PathBuf,
    /// The file the loader mapped, where it differs from `library` (a soname resolved).
    loaded_from: Option<PathBuf>,
    simulator: bool,
    /// Optional HSA entry points the runtime lacks (fallbacks in use).
    lacks: Vec<&'static str>,
    timestamp_hz: u64,
}

#[derive(Serialize)]
struct CpuAgent {
    name: String,
    pools: Vec<Pool>,
}

#[derive(Serialize)]
struct GpuAgent {
    index: usize,
    name: String,
    product_name: String,
    isas: Vec<String>,
    compute_units: i64,
    wavefront_size: i64,
    queues_max: Option<u32>,
    queue_min_packets: Option<u32>,
    queue_max_packets: Option<u32>,
    pools: Vec<Pool>,
}

#[derive(Serialize)]
struct Pool {
    segment: &'static str,
    size_bytes: usize,
    /// coarse-grained, fine-grained, kernarg, allocatable.
    flags: Vec<&'static str>,
}

#[derive(Serialize)]
struct ConfigRow {
    name: &'static str,
    value: String,
    /// `default` or `environment`.
    source: &'static str,
    /// The environment's text, where set.
    raw: Option<String>,
}

pub fn info(format: OutputFormat) -> Result<i32, String> {
    let text = match format {
        OutputFormat::Text => report()?.to_string(),
        OutputFormat::Json => schema::document(
            "info",
            serde_json::to_value(report()?).map_err(|e| e.to_string())?,
        ),
        OutputFormat::Csv => return Ok(crate::format::no_csv("info")),
    };
    print!("{text}");
    Ok(0)
}

pub fn report() -> Result<Report, String> {
    let rt = runtime::runtime().map_err(|e| {
        let mut why = format!("the HIP runtime did not initialise ({e:?}); see the message above");
        // Linked into this executable, the runtime looks for hsasim beside it; `cargo test`
        // leaves libhsasim.so only in deps/ (cargo build puts it here).
        if let Ok(dir) = crate::libdir::exe_dir() {
            if !dir.join("libhsasim.so").is_file() {
                why.push_str(&format!(
                    "\n(there is no libhsasim.so beside {}: run `cargo build --workspace`, or set \
                     HIPSHIM_HSA_LIB=\"$(hipshim lib-dir)/libhsasim.so\")",
                    dir.join("hipshim").display()
                ));
            }
        }
        why
    })?;
    let api = rt.hsa.api;
    let hsa_runtime = HsaRuntime {
        library: api.path.clone(),
        loaded_from: loaded_from(api.hsa_init as *const c_void).filter(|f| *f != api.path),
        simulator: rt.hsa.is_simulator,
        lacks: api.absent_optional(),
        timestamp_hz: rt.hsa.timestamp_hz,
    };
    let cpu_agent = CpuAgent {
        name: hsa::agent_string(api, rt.hsa.cpu, agent_info::NAME).unwrap_or_default(),
        pools: pools(api, rt.hsa.cpu),
    };
    let gpu_agents = rt
        .devices
        .iter()
        .map(|device| {
            let agent = device.agent;
            GpuAgent {
                index: device.index,
                name: device.name.clone(),
                product_name: device.product_name.clone(),
                isas: device.isas.iter().map(|i| i.to_string()).collect(),
                compute_units: i64::from(device.info.compute_units),
                wavefront_size: i64::from(device.info.warp_size),
                queues_max: hsa::agent_value::<u32>(api, agent, agent_info::QUEUES_MAX),
                queue_min_packets: hsa::agent_value::<u32>(api, agent, agent_info::QUEUE_MIN_SIZE),
                queue_max_packets: hsa::agent_value::<u32>(api, agent, agent_info::QUEUE_MAX_SIZE),
                pools: pools(api, agent),
            }
        })
        .collect();
    let configuration = settings(&rt.config)
        .into_iter()
        .map(|setting| ConfigRow {
            name: setting.name,
            source: if setting.raw.is_some() {
                "environment"
            } else {
                "default"
            },
            value: setting.value,
            raw: setting.raw,
        })
        .collect();
    Ok(Report {
        hsa_runtime,
        cpu_agent,
        gpu_agents,
        configuration,
    })
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = String::new();
        let rt = &self.hsa_runtime;
        let _ = writeln!(out, "HSA runtime");
        row(&mut out, "library", rt.library.display());
        if let Some(file) = &rt.loaded_from {
            row(&mut out, "loaded from", file.display());
        }
        let kind = if rt.simulator {
            "hsasim (software GPU)"
        } else {
            "hardware (ROCr)"
        };
        row(&mut out, "kind", kind);
        if !rt.lacks.is_empty() {
            row(
                &mut out,
                "lacks",
                format!("{} (fallbacks in use)", rt.lacks.join(", ")),
            );
        }
        row(
            &mut out,
            "timestamps",
            format!("{} Hz", group_digits(rt.timestamp_hz)),
        );

        let _ = writeln!(out, "\nCPU agent: {}", self.cpu_agent.name);
        write_pools(&mut out, &self.cpu_agent.pools);

        for gpu in &self.gpu_agents {
            let _ = writeln!(
                out,
                "\nGPU agent {}: {} ({})",
                gpu.index, gpu.name, gpu.product_name
            );
            for isa in &gpu.isas {
                row(&mut out, "ISA", isa);
            }
            row(&mut out, "compute units", gpu.compute_units);
            row(&mut out, "wavefront", gpu.wavefront_size);
            row(
                &mut out,
                "queues",
                format!(
                    "QUEUES_MAX {}, size {} .. {} packets",
                    show(gpu.queues_max),
                    show(gpu.queue_min_packets),
                    show(gpu.queue_max_packets)
                ),
            );
            write_pools(&mut out, &gpu.pools);
        }

        let _ = writeln!(out, "\nConfiguration (effective value, source)");
        let width = self
            .configuration
            .iter()
            .map(|s| s.name.len())
            .max()
            .unwrap_or(0);
        for setting in &self.configuration {
            let source = match &setting.raw {
                None => "default".to_string(),
                Some(raw) if raw == &setting.value => "environment".to_string(),
                Some(raw) => format!("environment ({raw:?})"),
            };
            let _ = writeln!(
                out,
                "  {:<width$} {:<28} {source}",
                setting.name, setting.value
            );
        }
        f.write_str(&out)
    }
}

/// One indented `label  value` line.
fn row(out: &mut String, label: &str, value: impl std::fmt::Display) {
    let _ = writeln!(out, "  {label:<14} {value}");
}

fn show(value: Option<u32>) -> String {
    value.map_or_else(|| "?".into(), |v| v.to_string())
}

fn pools(api: &HsaApi, agent: hsa_agent_t) -> Vec<Pool> {
    hsa::agent_pools(api, agent).iter().map(pool).collect()
}

fn write_pools(out: &mut String, pools: &[Pool]) {
    for (i, pool) in pools.iter().enumerate() {
        let text = format!(
            "{:<8} {:>12}  {}",
            pool.segment,
            bytes(pool.size_bytes),
            pool.flags.join(", ")
        );
        row(out, &format!("pool {i}"), text.trim_end());
    }
}

fn pool(pool: &PoolInfo) -> Pool {
    let segment = match pool.segment {
        HSA_AMD_SEGMENT_GLOBAL => "global",
        HSA_AMD_SEGMENT_READONLY => "readonly",
        HSA_AMD_SEGMENT_PRIVATE => "private",
        HSA_AMD_SEGMENT_GROUP => "group",
        _ => "unknown",
    };
    let mut flags = Vec::new();
    for (bit, name) in [
        (
            HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED,
            "coarse-grained",
        ),
        (HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED, "fine-grained"),
        (HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT, "kernarg"),
    ] {
        if pool.global_flags & bit != 0 {
            flags.push(name);
        }
    }
    if pool.alloc_allowed {
        flags.push("allocatable");
    }
    Pool {
        segment,
        size_bytes: pool.size,
        flags,
    }
}

/// Sizes as people read them (pools range from 64 KiB of LDS to many GiB).
fn bytes(n: usize) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 || value.fract() == 0.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

fn group_digits(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push('_');
        }
        out.push(c);
    }
    out
}

/// One configuration variable: its effective value and what the environment said.
pub struct Setting {
    pub name: &'static str,
    pub value: String,
    /// The environment's text, if the variable is set (non-empty).
    pub raw: Option<String>,
}

/// Every setting of hipshim and hsasim, in their tables' order (`config_reference`), with the
/// effective value each library's own parser gives: hipshim's from `config` (the runtime's,
/// parsed once), hsasim's parsed here from the same environment (its warnings were printed by
/// the library itself). A setting no configuration holds (read when hsasim is loaded) shows
/// the environment's text, else its documented default.
pub fn settings(config: &Config) -> Vec<Setting> {
    let (sim, _warnings) = hsasim::config::Config::from_vars(&|name| std::env::var(name));
    let values: Vec<(&SettingDoc, String)> = config
        .effective_values()
        .into_iter()
        .chain(sim.effective_values())
        .collect();
    crate::config_reference::all_settings()
        .map(|doc| {
            let raw = std::env::var(doc.name)
                .ok()
                .filter(|v| !v.trim().is_empty());
            let value = values
                .iter()
                .find(|(d, _)| d.name == doc.name)
                .map(|(_, value)| value.clone())
                .or_else(|| raw.clone())
                .unwrap_or_else(|| doc.default.to_string());
            Setting {
                name: doc.name,
                value,
                raw,
            }
        })
        .collect()
}

/// The file the dynamic loader mapped `address` from (resolves a soname like
/// `libhsa-runtime64.so.1` to the file actually used).
fn loaded_from(address: *const c_void) -> Option<PathBuf> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only inspects the address and fills `info`.
    if unsafe { libc::dladdr(address, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr returned a NUL-terminated path owned by the loader.
    let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
    let path = PathBuf::from(name.to_string_lossy().into_owned());
    Some(path.canonicalize().unwrap_or(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_like_people_write_them() {
        assert_eq!(bytes(65536), "64 KiB");
        assert_eq!(bytes(16 << 30), "16 GiB");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(100), "100 B");
    }

    #[test]
    fn digits_are_grouped() {
        assert_eq!(group_digits(1_000_000_000), "1_000_000_000");
        assert_eq!(group_digits(100), "100");
    }
}

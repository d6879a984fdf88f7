//! `hipshim info`: what a HIP program would get if it started now — the HSA runtime the shim
//! picks (same choice, same code: `runtime::runtime()`), its agents, ISAs, pools and queue
//! limits, and the effective configuration with where each value came from.

use amdhip64::config::Config;
use amdhip64::hsa::{self, HsaApi, PoolInfo};
use amdhip64::runtime;
use config_doc::SettingDoc;
use hsa_abi::*;
use std::ffi::c_void;
use std::fmt::Write as _;
use std::path::PathBuf;

pub fn info() -> Result<String, String> {
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
    let mut out = String::new();

    let _ = writeln!(out, "HSA runtime");
    let file = loaded_from(api.hsa_init as *const c_void);
    row(&mut out, "library", api.path.display());
    if let Some(file) = file.filter(|f| *f != api.path) {
        row(&mut out, "loaded from", file.display());
    }
    let kind = if rt.hsa.is_simulator {
        "hsasim (software GPU)"
    } else {
        "hardware (ROCr)"
    };
    row(&mut out, "kind", kind);
    let absent = api.absent_optional();
    if !absent.is_empty() {
        row(
            &mut out,
            "lacks",
            format!("{} (fallbacks in use)", absent.join(", ")),
        );
    }
    row(
        &mut out,
        "timestamps",
        format!("{} Hz", group_digits(rt.hsa.timestamp_hz)),
    );

    let cpu_name = hsa::agent_string(api, rt.hsa.cpu, agent_info::NAME).unwrap_or_default();
    let _ = writeln!(out, "\nCPU agent: {cpu_name}");
    write_pools(&mut out, api, rt.hsa.cpu);

    for device in rt.devices {
        let agent = device.agent;
        let _ = writeln!(
            out,
            "\nGPU agent {}: {} ({})",
            device.index, device.name, device.product_name
        );
        for isa in &device.isas {
            row(&mut out, "ISA", isa);
        }
        row(&mut out, "compute units", device.info.compute_units);
        row(&mut out, "wavefront", device.info.warp_size);
        let queues_max = hsa::agent_value::<u32>(api, agent, agent_info::QUEUES_MAX);
        let min_size = hsa::agent_value::<u32>(api, agent, agent_info::QUEUE_MIN_SIZE);
        let max_size = hsa::agent_value::<u32>(api, agent, agent_info::QUEUE_MAX_SIZE);
        row(
            &mut out,
            "queues",
            format!(
                "QUEUES_MAX {}, size {} .. {} packets",
                show(queues_max),
                show(min_size),
                show(max_size)
            ),
        );
        write_pools(&mut out, api, agent);
    }

    let _ = writeln!(out, "\nConfiguration (effective value, source)");
    let settings = settings(&rt.config);
    let width = settings.iter().map(|s| s.name.len()).max().unwrap_or(0);
    for setting in settings {
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
    Ok(out)
}

/// One indented `label  value` line.
fn row(out: &mut String, label: &str, value: impl std::fmt::Display) {
    let _ = writeln!(out, "  {label:<14} {value}");
}

fn show(value: Option<u32>) -> String {
    value.map_or_else(|| "?".into(), |v| v.to_string())
}

fn write_pools(out: &mut String, api: &HsaApi, agent: hsa_agent_t) {
    for (i, pool) in hsa::agent_pools(api, agent).iter().enumerate() {
        row(out, &format!("pool {i}"), describe_pool(pool));
    }
}

fn describe_pool(pool: &PoolInfo) -> String {
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
    format!(
        "{segment:<8} {:>12}  {}",
        bytes(pool.size),
        flags.join(", ")
    )
    .trim_end()
    .to_string()
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

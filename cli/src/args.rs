//! The arguments several commands share: how a program is started on hipshim, and the
//! queue policy it runs under.

use crate::libdir;
use crate::run::{Launch, LoadMode};
use amdhip64::config::PolicySpec;
use clap::Args;
use std::path::PathBuf;

/// How a program is started on hipshim (shared by `run` and `bench`).
#[derive(Args, Clone, Debug)]
pub struct LoadArgs {
    /// Load hipshim by LD_PRELOAD of its libamdhip64.so.
    #[arg(long, conflicts_with = "libpath")]
    preload: bool,
    /// Load hipshim by putting its lib dir first on LD_LIBRARY_PATH (the default).
    #[arg(long)]
    libpath: bool,
    /// The lib dir to load from (default: staged beside this hipshim).
    #[arg(long, value_name = "DIR")]
    lib_dir: Option<PathBuf>,
    /// The GPU model hsasim simulates (HSASIM_GFX; no effect on a real GPU).
    #[arg(long, value_parser = ["gfx942", "gfx90a"])]
    gfx: Option<String>,
    /// HIPSHIM_LOG filter, e.g. `debug`, `hipshim=info`, `trace`.
    #[arg(long, value_name = "FILTER")]
    log: Option<String>,
    /// hsasim's clock (HSASIM_TIME): `virtual` times kernels, copies and packets on a model
    /// of the GPU, the same on every run, instead of by the host's time (no effect on a GPU).
    #[arg(long, value_parser = ["host", "virtual"])]
    time: Option<String>,
}

impl LoadArgs {
    fn mode(&self) -> LoadMode {
        if self.preload {
            LoadMode::Preload
        } else {
            LoadMode::Libpath
        }
    }

    /// A launch with these loading settings and nothing else set.
    pub fn launch(&self) -> Result<Launch, String> {
        Ok(Launch {
            lib_dir: libdir::resolve(self.lib_dir.as_deref())?,
            mode: self.mode(),
            policy: None,
            trace: None,
            stats: None,
            stats_format: None,
            log: self.log.clone(),
            gfx: self.gfx.clone(),
            time: self.time.clone(),
        })
    }
}

/// Validates a policy with the runtime's own parser and keeps the text as given, so the
/// program's runtime resolves it (e.g. `pool` takes the pool size from GPU_MAX_HW_QUEUES).
pub fn parse_policy(text: &str) -> Result<String, String> {
    PolicySpec::parse(text, PolicySpec::DEFAULT_POOL)
        .map(|_| text.trim().to_string())
        .ok_or_else(|| format!("accepted forms: {}", PolicySpec::ACCEPTED))
}

//! `hipshim run`: start a program on hipshim with chosen settings. `hipshim bench` starts
//! its experiment program through the same [`Launch`], so both set the environment the
//! same way.

use crate::format::OutputFormat;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

/// How the program finds our libamdhip64.so.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LoadMode {
    /// The lib dir first on LD_LIBRARY_PATH: answers to NEEDED libamdhip64.so{,.5,.6,.7}.
    Libpath,
    /// LD_PRELOAD of our libamdhip64.so: wins even over an rpath to AMD's library.
    Preload,
}

/// The settings `hipshim run` and `hipshim bench` apply to a program.
#[derive(Clone, Debug)]
pub struct Launch {
    pub lib_dir: PathBuf,
    pub mode: LoadMode,
    /// HIPSHIM_QUEUE_POLICY, already validated with the runtime's parser.
    pub policy: Option<String>,
    /// HIPSHIM_TRACE.
    pub trace: Option<PathBuf>,
    /// HIPSHIM_STATS: `Some(None)` for stderr (`1`), `Some(Some(path))` for a file.
    pub stats: Option<Option<PathBuf>>,
    /// HIPSHIM_STATS_FORMAT.
    pub stats_format: Option<OutputFormat>,
    /// HIPSHIM_LOG.
    pub log: Option<String>,
    /// HSASIM_GFX: the model hsasim simulates (ignored on a GPU).
    pub gfx: Option<String>,
    /// HSASIM_TIME: `virtual` gives hsasim's GPU its own clock (ignored on a GPU).
    pub time: Option<String>,
}

impl Launch {
    /// The command that runs `program args` with these settings; everything else in the
    /// environment is inherited.
    pub fn command(&self, program: &OsStr, args: &[OsString]) -> Command {
        let mut cmd = Command::new(program);
        cmd.args(args);
        for (name, value) in self.environment() {
            cmd.env(name, value);
        }
        cmd
    }

    /// The command that runs `program args` on AMD's own `libamdhip64.so.5` (from the system)
    /// over hsasim: AMD's runtime loads ROCr by its soname, which hsasim answers to from a dir
    /// of its own (the README's recipe). Only the simulator's settings of this launch apply.
    pub fn command_on_amd(&self, program: &OsStr, args: &[OsString]) -> Command {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .env("LD_LIBRARY_PATH", rocr_dir(&self.lib_dir))
            .env_remove("LD_PRELOAD");
        if let Some(gfx) = &self.gfx {
            cmd.env("HSASIM_GFX", gfx);
        }
        cmd
    }

    /// The variables this launch sets, in a stable order (also shown on stderr).
    pub fn environment(&self) -> Vec<(&'static str, OsString)> {
        let mut env: Vec<(&'static str, OsString)> = Vec::new();
        match self.mode {
            LoadMode::Libpath => env.push((
                "LD_LIBRARY_PATH",
                prepend_path(&self.lib_dir, std::env::var_os("LD_LIBRARY_PATH")),
            )),
            LoadMode::Preload => {
                // Ahead of anything already preloaded, so our hip* symbols win.
                let ours = self.lib_dir.join("libamdhip64.so").into_os_string();
                let value = match std::env::var_os("LD_PRELOAD").filter(|v| !v.is_empty()) {
                    Some(old) => join_os(&[ours, old], ":"),
                    None => ours,
                };
                env.push(("LD_PRELOAD", value));
            }
        }
        if let Some(policy) = &self.policy {
            env.push(("HIPSHIM_QUEUE_POLICY", policy.into()));
        }
        if let Some(trace) = &self.trace {
            env.push(("HIPSHIM_TRACE", absolute(trace).into_os_string()));
        }
        match &self.stats {
            None => {}
            Some(None) => env.push(("HIPSHIM_STATS", "1".into())),
            Some(Some(path)) => env.push(("HIPSHIM_STATS", absolute(path).into_os_string())),
        }
        if let Some(format) = self.stats_format {
            env.push(("HIPSHIM_STATS_FORMAT", format.to_string().into()));
        }
        if let Some(log) = &self.log {
            env.push(("HIPSHIM_LOG", log.into()));
        }
        if let Some(gfx) = &self.gfx {
            env.push(("HSASIM_GFX", gfx.into()));
        }
        if let Some(time) = &self.time {
            env.push(("HSASIM_TIME", time.into()));
        }
        env
    }

    /// One line for stderr: what is about to run, with the settings that matter.
    pub fn describe(&self, program: &OsStr, args: &[OsString]) -> String {
        let mut line = String::from("hipshim: running");
        for (name, value) in self.environment() {
            if name.starts_with("LD_") {
                continue; // long and always the lib dir; said once below
            }
            line.push_str(&format!(" {name}={}", value.to_string_lossy()));
        }
        line.push_str(&format!(" {}", program.to_string_lossy()));
        for a in args {
            line.push_str(&format!(" {}", a.to_string_lossy()));
        }
        let how = match self.mode {
            LoadMode::Libpath => "LD_LIBRARY_PATH",
            LoadMode::Preload => "LD_PRELOAD",
        };
        line.push_str(&format!(
            " (hipshim from {} by {how})",
            self.lib_dir.display()
        ));
        line
    }
}

/// The exit code `hipshim run` reports for the child: its own, or 128 + signal like a shell.
pub fn exit_code(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => 1,
    }
}

/// Runs `cmd` to the end and returns its status. Ctrl-C reaches the child (same process
/// group); the CLI ignores it meanwhile so it can still report how the child ended.
pub fn run_to_end(cmd: &mut Command) -> std::io::Result<ExitStatus> {
    let mut child = cmd.spawn()?;
    // Set after spawn: an ignored disposition would be inherited by the child.
    // SAFETY: installs a standard disposition; no handler code runs.
    let previous = unsafe { libc::signal(libc::SIGINT, libc::SIG_IGN) };
    let status = child.wait();
    // SAFETY: restores what was there before.
    unsafe { libc::signal(libc::SIGINT, previous) };
    status
}

fn prepend_path(dir: &Path, old: Option<OsString>) -> OsString {
    match old.filter(|v| !v.is_empty()) {
        Some(old) => join_os(&[dir.as_os_str().to_owned(), old], ":"),
        None => dir.as_os_str().to_owned(),
    }
}

fn join_os(parts: &[OsString], sep: &str) -> OsString {
    let mut out = OsString::new();
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            out.push(sep);
        }
        out.push(part);
    }
    out
}

/// The child may change directory; a relative output path means relative to where the
/// user typed the command.
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// A dir where hsasim answers to ROCr's soname (created once per lib dir).
pub fn rocr_dir(lib_dir: &Path) -> PathBuf {
    let dir = lib_dir.join("as-rocr");
    let link = dir.join("libhsa-runtime64.so.1");
    if !link.exists() {
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::os::unix::fs::symlink(lib_dir.join("libhsasim.so"), &link);
    }
    dir
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(mode: LoadMode) -> Launch {
        Launch {
            lib_dir: PathBuf::from("/opt/hipshim-lib"),
            mode,
            policy: Some("pool:2:rr".into()),
            trace: Some(PathBuf::from("/tmp/t.json")),
            stats: Some(None),
            stats_format: Some(OutputFormat::Json),
            log: Some("debug".into()),
            gfx: Some("gfx90a".into()),
            time: Some("virtual".into()),
        }
    }

    fn value<'a>(env: &'a [(&str, OsString)], name: &str) -> Option<&'a OsString> {
        env.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    #[test]
    fn settings_become_the_runtime_variables() {
        let env = launch(LoadMode::Libpath).environment();
        assert_eq!(value(&env, "HIPSHIM_QUEUE_POLICY").unwrap(), "pool:2:rr");
        assert_eq!(value(&env, "HIPSHIM_TRACE").unwrap(), "/tmp/t.json");
        assert_eq!(value(&env, "HIPSHIM_STATS").unwrap(), "1");
        assert_eq!(value(&env, "HIPSHIM_STATS_FORMAT").unwrap(), "json");
        assert_eq!(value(&env, "HIPSHIM_LOG").unwrap(), "debug");
        assert_eq!(value(&env, "HSASIM_GFX").unwrap(), "gfx90a");
        assert_eq!(value(&env, "HSASIM_TIME").unwrap(), "virtual");
        assert!(value(&env, "LD_PRELOAD").is_none());
        let path = value(&env, "LD_LIBRARY_PATH").unwrap().to_string_lossy();
        assert!(path.starts_with("/opt/hipshim-lib"), "{path}");
    }

    #[test]
    fn preload_names_our_library_and_leaves_the_library_path_alone() {
        let env = launch(LoadMode::Preload).environment();
        let preload = value(&env, "LD_PRELOAD").unwrap().to_string_lossy();
        assert!(
            preload.starts_with("/opt/hipshim-lib/libamdhip64.so"),
            "{preload}"
        );
        assert!(value(&env, "LD_LIBRARY_PATH").is_none());
    }

    #[test]
    fn unset_settings_are_not_passed() {
        let bare = Launch {
            policy: None,
            trace: None,
            stats: None,
            stats_format: None,
            log: None,
            gfx: None,
            time: None,
            ..launch(LoadMode::Libpath)
        };
        let names: Vec<&str> = bare.environment().iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["LD_LIBRARY_PATH"]);
    }

    #[test]
    fn a_signal_death_is_reported_like_a_shell() {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(exit_code(ExitStatus::from_raw(3 << 8)), 3);
        assert_eq!(exit_code(ExitStatus::from_raw(libc::SIGKILL)), 137);
    }
}

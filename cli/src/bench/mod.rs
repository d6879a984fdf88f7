//! `hipshim bench`: bundled experiments, each a HIP program from `c_tests/bench/` that the
//! CLI builds on first use and runs through the same [`crate::run::Launch`] as `hipshim run`.
//!
//! - [`policies`]: the stream→queue policy experiment;
//! - [`ops`]: instructions and time per submission operation, optionally beside AMD's runtime;
//! - [`processes`]: several processes on one simulated GPU's hardware queue scheduler.
//!
//! Each bench's table is one model rendered as text, json or csv (`--format`). A row that
//! fails is kept as failed with its reason and the other rows still run and print; the exit
//! status is then 1.

pub mod callgrind;
mod measure;
pub mod ops;
mod plot;
pub mod policies;
pub mod processes;

use crate::libdir;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

/// The exit code after printing a table of `total` rows of which `failed` failed: 1 if any
/// did, with a line on stderr, so scripts see it while every figure still prints.
pub fn exit_code(failed: usize, total: usize) -> i32 {
    if failed == 0 {
        0
    } else {
        eprintln!("hipshim bench: {failed} of {total} rows failed (marked FAILED above)");
        1
    }
}

/// A failure's reason on one line, for a table cell: its first line (what failed) and its
/// last (usually the program's own last word); stderr and json have all of it.
pub fn short_reason(reason: &str) -> String {
    let mut lines = reason.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("");
    match lines.next_back() {
        Some(last) => format!("{first} {last}"),
        None => first.to_string(),
    }
}

/// Where the CLI builds its programs, under its own profile dir.
const BUILD_DIR: &str = "hipshim-bench";

/// Which compiler and headers build a bundled program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compiler {
    /// `scripts/build-hip.sh`: clang-19, hipshim's headers, gfx942 and gfx90a, code object v5,
    /// linked to hipshim.
    Ours,
    /// Debian's `hipcc` (ROCm 5.2): AMD's headers, gfx90a, code object v4, linked to
    /// `libamdhip64.so.5`, so the same binary runs on AMD's runtime and on hipshim.
    Hipcc,
}

impl Compiler {
    fn suffix(self) -> &'static str {
        match self {
            Compiler::Ours => "",
            Compiler::Hipcc => "-hipcc",
        }
    }
}

/// The program built from `source` (relative to the repository root) beside this hipshim,
/// rebuilt when its source, the headers or the build script changed.
pub fn bundled_program(source: &str, compiler: Compiler) -> Result<PathBuf, String> {
    let exe_dir = libdir::exe_dir()?;
    let stem = Path::new(source)
        .file_stem()
        .and_then(|s| s.to_str())
        .ok_or_else(|| format!("{source} has no file name"))?;
    let program = exe_dir
        .join(BUILD_DIR)
        .join(format!("{stem}{}", compiler.suffix()));
    let Some(repo) = libdir::repo_root() else {
        return if program.is_file() {
            Ok(program)
        } else {
            Err(format!(
                "{} does not exist and the hipshim sources are not here to build it; pass --program PATH",
                program.display()
            ))
        };
    };
    let mut inputs = vec![repo.join(source)];
    if compiler == Compiler::Ours {
        inputs.push(repo.join("hip_headers"));
        inputs.push(repo.join("scripts/build-hip.sh"));
    }
    let built = mtime(&program);
    let newest_input = inputs.iter().filter_map(|p| newest(p)).max();
    if built.is_some() && built >= newest_input {
        return Ok(program);
    }
    let (Some(profile), Some(target)) = (exe_dir.file_name(), exe_dir.parent()) else {
        return Err(format!("{} is not a cargo profile dir", exe_dir.display()));
    };
    eprintln!(
        "hipshim bench: building {} from {source}",
        program.display()
    );
    std::fs::create_dir_all(exe_dir.join(BUILD_DIR))
        .map_err(|e| format!("cannot create {}: {e}", exe_dir.join(BUILD_DIR).display()))?;
    // Build beside the final name and rename: two benches starting at once never run a
    // half-written program.
    let partial = program.with_extension(format!("partial-{}", std::process::id()));
    let mut cmd = match compiler {
        Compiler::Ours => {
            let mut cmd = Command::new("bash");
            cmd.arg(repo.join("scripts/build-hip.sh"))
                .arg(repo.join(source))
                .arg(&partial)
                .env("CARGO_TARGET_DIR", target)
                .env("HIPSHIM_PROFILE", profile);
            cmd
        }
        Compiler::Hipcc => {
            let mut cmd = Command::new("hipcc");
            // hipcc (a Perl driver) reads these; pinned so that a CUDA-flavoured environment
            // cannot redirect it. /usr is where Debian puts ROCm.
            cmd.env("HIP_PLATFORM", "amd")
                .env("HIP_PATH", "/usr")
                .env("ROCM_PATH", "/usr")
                .args(["--offload-arch=gfx90a", "-O3"])
                .arg(repo.join(source))
                .arg("-o")
                .arg(&partial);
            cmd
        }
    };
    let status = cmd.status().map_err(|e| match compiler {
        Compiler::Ours => format!("cannot run scripts/build-hip.sh: {e}"),
        Compiler::Hipcc => format!("cannot run hipcc ({e}); scripts/setup.sh installs it"),
    })?;
    if !status.success() {
        let _ = std::fs::remove_file(&partial);
        return Err(format!("building {source} failed ({status})"));
    }
    std::fs::rename(&partial, &program)
        .map_err(|e| format!("cannot move the built program into place: {e}"))?;
    Ok(program)
}

fn mtime(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The newest modification time of `path` or anything under it.
fn newest(path: &Path) -> Option<SystemTime> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_dir() {
        return meta.modified().ok();
    }
    std::fs::read_dir(path)
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| newest(&e.path()))
        .max()
}

//! Where a launched program loads hipshim from: the "lib dir" (libamdhip64.so, its .5/.6/.7
//! sonames, libhiprtc.so.* and libhsasim.so in one directory).
//!
//! The layout is known in one place, `scripts/stage-libs.sh`; this module never builds the
//! directory itself. In a cargo build (this binary in `<target>/<profile>/`, next to the
//! cdylibs) it runs that script for its own profile, which (re)stages
//! `<target>/<profile>/hipshim-lib` and prints it. A copied or packaged `hipshim` uses the
//! `hipshim-lib` directory beside it as it is (staged when it was packaged), and
//! `--lib-dir` overrides both.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The directory name stage-libs.sh creates in the profile dir.
const STAGED_NAME: &str = "hipshim-lib";
/// The repository this binary was built from; its scripts are used while it still exists.
const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// Files a usable lib dir must hold (what `--libpath` and `--preload` rely on).
pub const REQUIRED: &[&str] = &[
    "libamdhip64.so",
    "libamdhip64.so.5",
    "libamdhip64.so.6",
    "libamdhip64.so.7",
    "libhiprtc.so.6",
    "libhiprtc.so.7",
    "libhsasim.so",
];

/// The repository root, if the checkout this binary was built from is still there.
pub fn repo_root() -> Option<PathBuf> {
    let repo = Path::new(REPO);
    repo.join("scripts/stage-libs.sh")
        .is_file()
        .then(|| repo.canonicalize().unwrap_or_else(|_| repo.to_path_buf()))
}

/// The directory holding this executable.
pub fn exe_dir() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate hipshim itself: {e}"))?;
    exe.parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| format!("{} has no parent directory", exe.display()))
}

/// True when `dir` is a cargo profile dir holding a built shim (top level or in deps/).
fn is_cargo_profile_dir(dir: &Path) -> bool {
    dir.join("deps").is_dir()
        && (dir.join("libamdhip64.so").is_file() || dir.join("deps/libamdhip64.so").is_file())
}

/// Finds (and in a cargo build, stages) the lib dir; `explicit` is `--lib-dir`.
pub fn resolve(explicit: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(dir) = explicit {
        return check(dir);
    }
    let exe_dir = exe_dir()?;
    if let (Some(repo), true) = (repo_root(), is_cargo_profile_dir(&exe_dir)) {
        return check(&stage(&repo, &exe_dir)?);
    }
    check(&exe_dir.join(STAGED_NAME)).map_err(|why| {
        format!("{why}\n(hipshim looks for a lib dir staged by scripts/stage-libs.sh beside itself; pass --lib-dir DIR)")
    })
}

/// Runs `scripts/stage-libs.sh` for the profile dir `profile_dir` and returns what it printed.
fn stage(repo: &Path, profile_dir: &Path) -> Result<PathBuf, String> {
    let (Some(profile), Some(target)) = (profile_dir.file_name(), profile_dir.parent()) else {
        return Err(format!(
            "{} is not a cargo profile dir",
            profile_dir.display()
        ));
    };
    let script = repo.join("scripts/stage-libs.sh");
    let out = Command::new("bash")
        .arg(&script)
        .arg(profile)
        .env("CARGO_TARGET_DIR", target)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} failed ({}): {}",
            script.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or("").trim();
    if last.is_empty() {
        return Err(format!("{} printed no directory", script.display()));
    }
    Ok(PathBuf::from(last))
}

/// `dir` if every required library resolves in it (a dangling symlink counts as missing).
fn check(dir: &Path) -> Result<PathBuf, String> {
    let missing: Vec<&str> = REQUIRED
        .iter()
        .copied()
        .filter(|name| !dir.join(name).is_file())
        .collect();
    if missing.is_empty() {
        Ok(dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf()))
    } else {
        Err(format!(
            "{} is not a hipshim lib dir: missing {}",
            dir.display(),
            missing.join(", ")
        ))
    }
}

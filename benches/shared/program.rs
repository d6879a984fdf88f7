//! What every HIP-program benchmark does first: build the release libraries and one program
//! from `c_tests/bench/` against them (included by each bench with `#[path]`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target"))
}

fn check(what: &str, status: std::io::Result<std::process::ExitStatus>) {
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => panic!("{what} failed: {s}"),
        Err(e) => panic!("{what} could not start: {e}"),
    }
}

/// Builds the release `libamdhip64.so` and `libhsasim.so`, then `source` (relative to the
/// repository) for gfx942 into `out`, linked to them.
pub fn build_release_program(source: &str, out: &Path) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    check(
        "cargo build --release",
        Command::new(cargo)
            .args(["build", "--release", "-p", "hipshim", "-p", "hsasim"])
            .current_dir(repo())
            .status(),
    );
    check(
        "scripts/build-hip.sh",
        Command::new("bash")
            .arg(repo().join("scripts/build-hip.sh"))
            .arg(repo().join(source))
            .arg(out)
            .arg("gfx942")
            .env("CARGO_TARGET_DIR", target_dir())
            .env("HIPSHIM_PROFILE", "release")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status(),
    );
}

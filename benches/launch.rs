//! Launch benchmark: ns per asynchronous `hipLaunchKernel` of a small kernel on hsasim, with
//! recording off, with `HIPSHIM_TRACE` on, and with `HIPSHIM_LOG=trace` (printed to a pipe
//! that is thrown away). Prints the figures; asserts nothing about time.
//!
//! `cargo bench --bench launch [-- LAUNCHES ROUNDS]`. It builds the release libraries
//! (`cargo build --release -p hipshim -p hsasim`) and `c_tests/bench/ops.hip` (the
//! program of `hipshim bench ops`, which measures every submission operation with recording
//! off) with `scripts/build-hip.sh`, then runs its `launch` operation three times. The program
//! reports the best round (least disturbed by the simulator's threads on a small machine) and
//! the mean.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn target_dir() -> PathBuf {
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

fn build_program(out: &Path) {
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
            .arg(repo().join("c_tests/bench/ops.hip"))
            .arg(out)
            .arg("gfx942")
            .env("CARGO_TARGET_DIR", target_dir())
            .env("HIPSHIM_PROFILE", "release")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status(),
    );
}

/// Runs the benchmark program with `env`; returns its report line.
fn run(program: &Path, args: &[String], env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new(program);
    cmd.arg("launch")
        .args(args)
        .env("HIPSHIM_DEVICE", "sim")
        .env("HSASIM_GFX", "gfx942")
        .env_remove("HIPSHIM_TRACE")
        .env_remove("HIPSHIM_STATS")
        .env_remove("HIPSHIM_LOG")
        .env_remove("LD_PRELOAD")
        .env_remove("LD_LIBRARY_PATH")
        .stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("the benchmark program runs");
    assert!(
        out.status.success(),
        "benchmark program failed: {:?}",
        out.status
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn main() {
    // `cargo bench` passes `--bench`; anything else is LAUNCHES ROUNDS.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let program = target_dir().join("bench").join("ops");
    std::fs::create_dir_all(program.parent().unwrap()).unwrap();
    build_program(&program);
    let trace = target_dir().join("bench").join("launch-trace.json");
    let trace_env = trace.to_string_lossy().into_owned();
    println!("ns per asynchronous hipLaunchKernel (3 arguments, hsasim gfx942, release build)");
    for (label, env) in [
        ("recording off", vec![]),
        ("HIPSHIM_TRACE", vec![("HIPSHIM_TRACE", trace_env.as_str())]),
        ("HIPSHIM_LOG=trace", vec![("HIPSHIM_LOG", "trace")]),
    ] {
        println!("  {label:<20} {}", run(&program, &args, &env));
    }
}

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

use std::path::Path;
use std::process::{Command, Stdio};

#[path = "shared/program.rs"]
mod program;
use program::{build_release_program, target_dir};

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
    build_release_program("c_tests/bench/ops.hip", &program);
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

//! What the virtual-time model costs end to end: one program run under hsasim's host time and
//! under `HSASIM_TIME=virtual`, alternated, in both of hsasim's modes, and the CPU time of
//! each. The model's budget is 20% of the functional simulation (issue 42); the ratio is
//! printed, nothing about time is asserted (the hosts are shared and noisy).
//!
//! `cargo bench --bench vtime_cost [-- ROUNDS]` (3 rounds by default, best of each kept). It
//! builds the release libraries and `c_tests/vtime/validation.hip` (the published-figures
//! program: a 1 M-element vector add, a 64 MiB stream copy, empty kernels, SDMA copies),
//! then runs it round by round: host time, then virtual time, threaded and deterministic.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

#[path = "shared/program.rs"]
mod program;
use program::{build_release_program, target_dir};

/// CPU seconds (user + system) of the children waited for so far.
fn children_cpu() -> f64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes one rusage into the buffer it is given.
    let usage = unsafe {
        libc::getrusage(libc::RUSAGE_CHILDREN, usage.as_mut_ptr());
        usage.assume_init()
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// One run: (CPU seconds, wall seconds).
fn run(program: &Path, time: &str, deterministic: bool) -> (f64, f64) {
    let cpu = children_cpu();
    let wall = Instant::now();
    let mut cmd = Command::new(program);
    cmd.env("HIPSHIM_DEVICE", "sim")
        .env("HSASIM_GFX", "gfx942")
        .env("HSASIM_TIME", time)
        .env("HSASIM_THREADS", if deterministic { "0" } else { "1" })
        .env_remove("HIPSHIM_TRACE")
        .env_remove("HIPSHIM_STATS")
        .env_remove("HIPSHIM_LOG")
        .env_remove("LD_PRELOAD")
        .env_remove("LD_LIBRARY_PATH")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    let status = cmd.status().expect("the program runs");
    let wall = wall.elapsed().as_secs_f64();
    assert!(
        status.success(),
        "validation failed under {time} time: {status}"
    );
    (children_cpu() - cpu, wall)
}

fn main() {
    let rounds: usize = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .find_map(|a| a.parse().ok())
        .unwrap_or(3);
    let program = target_dir().join("bench-vtime-validation");
    build_release_program("c_tests/vtime/validation.hip", &program);
    println!("virtual time's cost end to end: c_tests/vtime/validation.hip, release, best of {rounds}, alternated");
    println!(
        "  mode            host time CPU s  virtual CPU s  virtual/host  (wall s: host, virtual)"
    );
    for deterministic in [false, true] {
        let mut best = [(f64::INFINITY, f64::INFINITY); 2];
        for _ in 0..rounds {
            for (k, time) in ["host", "virtual"].into_iter().enumerate() {
                let (cpu, wall) = run(&program, time, deterministic);
                best[k].0 = best[k].0.min(cpu);
                best[k].1 = best[k].1.min(wall);
            }
        }
        println!(
            "  {:<15} {:>15.3} {:>14.3} {:>13.3}  ({:.3}, {:.3})",
            if deterministic {
                "deterministic"
            } else {
                "threaded"
            },
            best[0].0,
            best[1].0,
            best[1].0 / best[0].0,
            best[0].1,
            best[1].1
        );
    }
}

//! Several devices: the HIP programs in `c_tests/peer/`, on hipshim over hsasim with two GPUs
//! (`HSASIM_GPUS=2`, from each program's `hipshim-test:` line), for gfx942 and gfx90a, each in
//! hsasim's threaded and deterministic (`HSASIM_THREADS=0`) modes. `peer_access` checks what
//! each device owns and reports, can-access and enabling/disabling peer access with their
//! errors, that a kernel on one device faults on the other's memory until access is enabled
//! (for memory made before and after enabling), the P2P attributes and the link type and hop
//! count of hsasim's xGMI link (and of its PCIe link, `HSASIM_GPU_LINK=pcie`); `peer_copy`
//! checks hipMemcpyPeer(Async) and hipMemcpy between the devices, and their order with kernels
//! and events on both devices.

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::ctest::{build, c_tests_dir, Spec, DEFAULT_TARGETS};

/// Builds `c_tests/peer/NAME.hip` for both targets; returns it with its `hipshim-test:` spec.
fn program(name: &str) -> (PathBuf, Spec) {
    let source = c_tests_dir("peer").join(format!("{name}.hip"));
    let text = std::fs::read_to_string(&source).expect("the c_test exists");
    let targets: Vec<String> = DEFAULT_TARGETS.iter().map(|s| s.to_string()).collect();
    (build(&source, name, &targets), Spec::parse(&text, &source))
}

/// Runs `name` on hsasim as `target`, deterministic or threaded, with its spec's environment
/// and `env`; fails unless it passes.
fn run(name: &str, target: &str, deterministic: bool, env: &[(&str, &str)]) {
    let (program, spec) = program(name);
    let mut cmd = Command::new(&program);
    common::clear_loader_env(&mut cmd);
    common::use_simulator(&mut cmd, target);
    for (k, v) in &spec.env {
        cmd.env(k, v);
    }
    if deterministic {
        cmd.env("HSASIM_THREADS", "0");
    } else {
        cmd.env_remove("HSASIM_THREADS");
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = common::run(&mut cmd, common::program_timeout());
    let report = out.report(&cmd);
    let mode = if deterministic {
        "deterministic"
    } else {
        "threaded"
    };
    assert!(
        !out.timed_out,
        "{name} ({target}, {mode}) did not finish\n{report}"
    );
    assert!(
        out.status.success(),
        "{name} ({target}, {mode}) failed: {}\n{report}",
        out.status
    );
    assert!(
        out.stdout().contains(&format!("{name}: PASSED")),
        "{report}"
    );
}

#[test]
fn peer_access_gfx942() {
    run("peer_access", "gfx942", false, &[]);
}

#[test]
fn peer_access_gfx942_deterministic() {
    run("peer_access", "gfx942", true, &[]);
}

#[test]
fn peer_access_gfx90a() {
    run("peer_access", "gfx90a", false, &[]);
}

#[test]
fn peer_access_gfx90a_deterministic() {
    run("peer_access", "gfx90a", true, &[]);
}

/// With GPUs linked through PCIe: type 2, and two hops (KFD's weight 40 over 20 per hop).
#[test]
fn peer_access_over_pcie() {
    run(
        "peer_access",
        "gfx942",
        false,
        &[("HSASIM_GPU_LINK", "pcie"), ("PEER_LINK", "pcie")],
    );
}

#[test]
fn peer_copy_gfx942() {
    run("peer_copy", "gfx942", false, &[]);
}

#[test]
fn peer_copy_gfx942_deterministic() {
    run("peer_copy", "gfx942", true, &[]);
}

#[test]
fn peer_copy_gfx90a() {
    run("peer_copy", "gfx90a", false, &[]);
}

#[test]
fn peer_copy_gfx90a_deterministic() {
    run("peer_copy", "gfx90a", true, &[]);
}

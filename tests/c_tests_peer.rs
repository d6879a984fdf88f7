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

use common::ctest::{build_area_program, run_in_mode};

/// Builds `c_tests/peer/NAME.hip` and runs it on hsasim as `target`, deterministic or
/// threaded, with its spec's environment and `env`; fails unless it passes.
fn run(name: &str, target: &str, deterministic: bool, env: &[(&str, &str)]) {
    let (program, spec) = build_area_program("peer", name);
    let out = run_in_mode(&program, name, target, deterministic, |cmd| {
        cmd.envs(spec.env.iter().map(|(k, v)| (k, v)))
            .envs(env.iter().copied());
    });
    assert!(out.contains(&format!("{name}: PASSED")), "{out}");
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

//! `hipshim info`: the runtime a program would get, its GPU agent and the configuration.

mod common;

use common::hipshim;
use std::time::Duration;

/// `hipshim info` with `env` set. The CLI links the runtime in, so the runtime looks for
/// hsasim beside the `hipshim` executable; `cargo test` (unlike `cargo build`) leaves
/// libhsasim.so only in deps/, so then the staged lib dir's copy is named explicitly.
fn info(env: &[(&str, &str)]) -> common::Output {
    let mut cmd = hipshim(["info"]);
    if !common::profile_dir().join("libhsasim.so").is_file() {
        cmd.env("HIPSHIM_HSA_LIB", common::lib_dir().join("libhsasim.so"));
    }
    for (name, value) in env {
        cmd.env(name, value);
    }
    let out = common::run(&mut cmd, Duration::from_secs(60));
    assert_eq!(out.code(), Some(0), "{}", out.report());
    out
}

/// The line of the configuration table for `name`, split into words.
fn setting<'a>(out: &'a common::Output, name: &str) -> Vec<&'a str> {
    let line = out
        .stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("no {name} line\n{}", out.report()));
    line.split_whitespace().collect()
}

#[test]
fn info_lists_the_simulated_gpu_agent_its_isa_pools_and_queue_limits() {
    let out = info(&[]);
    let text = &out.stdout;
    for expected in [
        "hsasim (software GPU)",
        "libhsasim.so",
        "GPU agent 0: gfx942",
        "amdgcn-amd-amdhsa--gfx942",
        "wavefront      64",
        "QUEUES_MAX",
        "coarse-grained",
        "kernarg",
        "CPU agent",
    ] {
        assert!(text.contains(expected), "no `{expected}`\n{}", out.report());
    }
}

#[test]
fn info_models_the_gpu_hsasim_is_asked_for() {
    let out = info(&[("HSASIM_GFX", "gfx90a")]);
    assert!(
        out.stdout.contains("GPU agent 0: gfx90a"),
        "{}",
        out.report()
    );
    assert!(
        out.stdout.contains("amdgcn-amd-amdhsa--gfx90a"),
        "{}",
        out.report()
    );
    assert_eq!(setting(&out, "HSASIM_GFX")[1..], ["gfx90a", "environment"]);
}

#[test]
fn info_shows_each_setting_with_its_value_and_source() {
    let out = info(&[
        ("HIPSHIM_QUEUE_POLICY", "pool:rr"),
        ("GPU_MAX_HW_QUEUES", "2"),
    ]);
    // `pool:rr` takes its size from GPU_MAX_HW_QUEUES: the effective value says so, next
    // to what the environment said.
    assert_eq!(
        setting(&out, "HIPSHIM_QUEUE_POLICY")[1..],
        ["pool:2:rr", "environment", "(\"pool:rr\")"]
    );
    assert_eq!(
        setting(&out, "GPU_MAX_HW_QUEUES")[1..],
        ["2", "environment"]
    );
    assert_eq!(
        setting(&out, "HIPSHIM_QUEUE_SIZE")[1..],
        ["1024", "default"]
    );
    assert_eq!(setting(&out, "HIPSHIM_DEVICE")[2..], ["environment"]);
}

#[test]
fn info_defaults_to_a_pool_of_four_queues() {
    let out = info(&[]);
    assert_eq!(
        setting(&out, "HIPSHIM_QUEUE_POLICY")[1..],
        ["pool:4", "default"]
    );
    assert_eq!(setting(&out, "GPU_MAX_HW_QUEUES")[1..], ["4", "default"]);
}

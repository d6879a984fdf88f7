//! Cooperative launches: the HIP programs in `c_tests/cooperative/`, on hipshim over hsasim for
//! gfx942 and gfx90a, each in hsasim's threaded and deterministic (`HSASIM_THREADS=0`) modes.
//! `grid_sync` checks grid-wide sync across work-groups over several rounds (wrong without the
//! barrier), `grid_group::is_valid`, the thread-block and tile helpers, the largest grid and
//! `hipErrorCooperativeLaunchTooLarge`, and stream order with earlier and later work; `module`
//! launches a module's kernel with `hipModuleLaunchCooperativeKernel`. A traced run shows the
//! cooperative dispatches on the device's cooperative queue, which no stream is assigned.

mod common;

use std::path::{Path, PathBuf};

use amdhip64::trace::{read_trace, PacketKind, TraceEvent};
use common::ctest::{build_area_program, build_device_code, c_tests_dir, run_in_mode};

/// Builds `c_tests/cooperative/NAME.hip` for both targets.
fn program(name: &str) -> PathBuf {
    build_area_program("cooperative", name).0
}

/// Runs `program` on hsasim as `target`, deterministic or threaded, with `env`; fails unless it
/// exits 0. Returns stdout.
fn run(program: &Path, target: &str, deterministic: bool, env: &[(&str, &str)]) -> String {
    let label = program.display().to_string();
    run_in_mode(program, &label, target, deterministic, |cmd| {
        // A small device keeps the largest co-resident grid (every work-group resident at
        // once) cheap to simulate.
        cmd.env("HSASIM_CUS", "4").envs(env.iter().copied());
    })
}

fn grid_sync(target: &str, deterministic: bool) {
    // Its stream-order case holds the stream with a kernel that waits for the host.
    let env: &[(&str, &str)] = if deterministic {
        &[common::ctest::KERNEL_WAITS_FOR_HOST]
    } else {
        &[]
    };
    let out = run(&program("grid_sync"), target, deterministic, env);
    assert!(out.contains("grid_sync: PASSED"), "{out}");
    assert!(
        out.contains("8 work-groups of 64, 6 rounds, 0 wrong"),
        "{out}"
    );
}

#[test]
fn grid_sync_gfx942() {
    grid_sync("gfx942", false);
}

#[test]
fn grid_sync_gfx942_deterministic() {
    grid_sync("gfx942", true);
}

#[test]
fn grid_sync_gfx90a() {
    grid_sync("gfx90a", false);
}

#[test]
fn grid_sync_gfx90a_deterministic() {
    grid_sync("gfx90a", true);
}

fn module(target: &str, deterministic: bool) {
    let source = c_tests_dir("cooperative").join("kernels/coop_kernels.hip");
    let code_object = build_device_code(&source, "coop_kernels", &[target], false, true);
    let env = [("HIPSHIM_TEST_CODE_OBJECT", code_object.to_str().unwrap())];
    let out = run(&program("module"), target, deterministic, &env);
    assert!(out.contains("module: PASSED"), "{out}");
}

#[test]
fn module_gfx942() {
    module("gfx942", false);
}

#[test]
fn module_gfx942_deterministic() {
    module("gfx942", true);
}

#[test]
fn module_gfx90a() {
    module("gfx90a", false);
}

#[test]
fn module_gfx90a_deterministic() {
    module("gfx90a", true);
}

/// `multi_device` on two hsasim GPUs: threaded, the grids of both devices run at once and
/// synchronise; deterministic, the runtime says it cannot (one device's work at a time) and
/// refuses two-device launches after the same checks.
fn multi_device(target: &str, deterministic: bool) {
    let source = c_tests_dir("cooperative").join("kernels/coop_kernels.hip");
    let code_object = build_device_code(&source, "coop_kernels", &[target], false, true);
    let env = [
        ("HSASIM_GPUS", "2"),
        ("HIPSHIM_TEST_CODE_OBJECT", code_object.to_str().unwrap()),
    ];
    let out = run(&program("multi_device"), target, deterministic, &env);
    assert!(out.contains("multi_device: PASSED"), "{out}");
    if deterministic {
        assert!(
            out.contains("multi-device cooperative launch: not supported"),
            "{out}"
        );
    } else {
        assert!(
            out.contains("multi-device cooperative launch: supported"),
            "{out}"
        );
        for line in [
            "exchange (flags 0, device 0 first): 512 work-items on 2 devices, 4 rounds, 0 wrong",
            "exchange (flags 3, device 1 first): 512 work-items on 2 devices, 4 rounds, 0 wrong",
            "pre- and post-sync: 0 wrong",
            "module exchange: 0 wrong",
        ] {
            assert!(out.contains(line), "missing {line:?}:\n{out}");
        }
    }
}

#[test]
fn multi_device_gfx942() {
    multi_device("gfx942", false);
}

#[test]
fn multi_device_gfx942_deterministic() {
    multi_device("gfx942", true);
}

#[test]
fn multi_device_gfx90a() {
    multi_device("gfx90a", false);
}

#[test]
fn multi_device_gfx90a_deterministic() {
    multi_device("gfx90a", true);
}

#[test]
fn cooperative_dispatches_go_to_the_cooperative_queue() {
    let path = common::target_dir().join("c_tests/cooperative-trace.json");
    let _ = std::fs::remove_file(&path);
    run(
        &program("grid_sync"),
        "gfx942",
        false,
        &[("HIPSHIM_TRACE", path.to_str().unwrap())],
    );
    let events = read_trace(&path).unwrap();
    let cooperative: Vec<u64> = events
        .iter()
        .filter_map(|e| match e {
            TraceEvent::QueueCreated { queue, reason, .. } if reason.starts_with("cooperative") => {
                Some(*queue)
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        cooperative.len(),
        1,
        "one cooperative queue: {cooperative:?}"
    );
    let queue = cooperative[0];
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, TraceEvent::StreamAssigned { queue: q, .. } if *q == queue)),
        "no stream is assigned the cooperative queue"
    );
    let dispatched = |name: &str, on_cooperative: bool| {
        events
            .iter()
            .filter(|e| match e {
                TraceEvent::Packet(p) => {
                    p.kind == PacketKind::KernelDispatch
                        && (p.queue == queue) == on_cooperative
                        && p.kernel.as_deref().is_some_and(|k| k.contains(name))
                }
                _ => false,
            })
            .count()
    };
    // Four grid-sync launches (two by hipLaunchCooperativeKernel, two by hipLaunchKernelExC
    // with the cooperative attribute), three in stream order on each of two streams.
    assert_eq!(dispatched("rounds", true), 4);
    assert_eq!(dispatched("rounds", false), 0);
    assert_eq!(dispatched("sum_neighbour", true), 6);
    // Ordinary launches never go there.
    assert_eq!(dispatched("add_one", true), 0);
    assert_eq!(dispatched("add_one", false), 6);
    // The cooperative queue waits for the streams' earlier work with barrier-AND packets: at
    // least the first cooperative launch on each of the two streams, whose earlier work is
    // held back by the host (the later ones wait only if their stream's slow fill is still
    // running when they are submitted, which depends on timing).
    let waits = events
        .iter()
        .filter(|e| {
            matches!(e, TraceEvent::Packet(p) if p.queue == queue && p.kind == PacketKind::BarrierAnd && !p.deps.is_empty())
        })
        .count();
    assert!(waits >= 2, "{waits} waits on the cooperative queue");
}

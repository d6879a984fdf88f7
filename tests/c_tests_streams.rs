//! Streams, events, stream-ordered memory and queue policies: the HIP programs in
//! `c_tests/streams/`, built with clang-19 against `hip_headers/` and run on hsasim for each
//! target (see `tests/common/ctest.rs`), plus the policy experiment run under several
//! `HIPSHIM_QUEUE_POLICY` values and `priority_order` in the deterministic mode too.

mod common;

use std::process::Command;

use common::ctest::{build, c_tests_dir, run_in_mode, Spec};

c_tests! {
    dir "streams";
    streams_gfx942 => "streams" on "gfx942";
    streams_gfx90a => "streams" on "gfx90a";
    events_gfx942 => "events" on "gfx942";
    events_gfx90a => "events" on "gfx90a";
    stream_attributes_gfx942 => "stream_attributes" on "gfx942";
    stream_attributes_gfx90a => "stream_attributes" on "gfx90a";
    memory_async_gfx942 => "memory_async" on "gfx942";
    memory_async_gfx90a => "memory_async" on "gfx90a";
    legacy_stream_gfx942 => "legacy_stream" on "gfx942";
    legacy_stream_gfx90a => "legacy_stream" on "gfx90a";
    policy_gfx942 => "policy" on "gfx942";
    policy_gfx90a => "policy" on "gfx90a";
    per_thread_default_gfx942 => "per_thread_default" on "gfx942";
    per_thread_default_gfx90a => "per_thread_default" on "gfx90a";
    device_reset_gfx942 => "device_reset" on "gfx942";
    device_reset_gfx90a => "device_reset" on "gfx90a";
    memcpy_order_gfx942 => "memcpy_order" on "gfx942";
    memcpy_order_gfx90a => "memcpy_order" on "gfx90a";
    pageable_copies_gfx942 => "pageable_copies" on "gfx942";
    pageable_copies_gfx90a => "pageable_copies" on "gfx90a";
    stream_done_gfx942 => "stream_done" on "gfx942";
    stream_done_gfx90a => "stream_done" on "gfx90a";
    launch_targets_gfx942 => "launch_targets" on "gfx942";
    launch_targets_gfx90a => "launch_targets" on "gfx90a";
    priority_order_gfx942 => "priority_order" on "gfx942";
    priority_order_gfx90a => "priority_order" on "gfx90a";
    kernarg_slots_gfx942 => "kernarg_slots" on "gfx942";
    queue_release_gfx942 => "queue_release" on "gfx942";
    fill_ends_behind_copies_gfx942 => "fill_ends_behind_copies" on "gfx942";
    fill_ends_behind_copies_gfx90a => "fill_ends_behind_copies" on "gfx90a";
    stream_values_gfx942 => "stream_values" on "gfx942";
    stream_values_gfx90a => "stream_values" on "gfx90a";
    batch_mem_op_gfx942 => "batch_mem_op" on "gfx942";
    batch_mem_op_gfx90a => "batch_mem_op" on "gfx90a";
    memcpy_batch_gfx942 => "memcpy_batch" on "gfx942";
    memcpy_batch_gfx90a => "memcpy_batch" on "gfx90a";
}

/// `stream_values` in hsasim's deterministic mode, where a barrier-value packet waiting on
/// memory is looked at again only when a waiting thread pumps the queues.
#[test]
fn stream_values_gfx942_deterministic() {
    let (program, spec) = common::ctest::build_area_program("streams", "stream_values");
    let out = common::ctest::run_in_mode(&program, "stream_values", "gfx942", true, |cmd| {
        cmd.envs(spec.env.iter().map(|(k, v)| (k, v)));
    });
    assert!(out.contains("stream_values: PASSED"), "{out}");
}

/// `priority_order` in hsasim's deterministic mode, where one thread runs the queues' work
/// and takes the highest-priority ready kernel first (the c_tests! entries above run it
/// threaded).
fn priority_order_deterministic(target: &str) {
    let (program, spec) = common::ctest::build_area_program("streams", "priority_order");
    let out = common::ctest::run_in_mode(&program, "priority_order", target, true, |cmd| {
        cmd.envs(spec.env.iter().map(|(k, v)| (k, v)));
        let (name, value) = common::ctest::KERNELS_WAIT_FOR_LATER_ONES;
        cmd.env(name, value);
    });
    assert!(out.contains("priority_order: PASSED"), "{out}");
}

/// `fill_ends_behind_copies` in hsasim's deterministic mode, where the thread that waits runs
/// the copy engines' jobs in their order.
#[test]
fn fill_ends_behind_copies_gfx942_deterministic() {
    let (program, spec) = common::ctest::build_area_program("streams", "fill_ends_behind_copies");
    let out =
        common::ctest::run_in_mode(&program, "fill_ends_behind_copies", "gfx942", true, |cmd| {
            cmd.envs(spec.env.iter().map(|(k, v)| (k, v)));
        });
    assert!(out.contains("fill_ends_behind_copies: PASSED"), "{out}");
}

#[test]
fn priority_order_gfx942_deterministic() {
    priority_order_deterministic("gfx942");
}

#[test]
fn priority_order_gfx90a_deterministic() {
    priority_order_deterministic("gfx90a");
}

/// Builds `c_tests/streams/policy.hip` and runs it on hsasim (gfx942) under `policy`, with
/// hipshim's log set to `log`; returns the program's stdout and stderr.
fn run_policy(policy: &str, log: &str) -> (String, String) {
    run_under_policy("policy", policy, log)
}

/// Builds `c_tests/streams/NAME.hip` and runs it as [`run_policy`] runs `policy`.
fn run_under_policy(name: &str, policy: &str, log: &str) -> (String, String) {
    let source_path = c_tests_dir("streams").join(format!("{name}.hip"));
    let source = std::fs::read_to_string(&source_path).unwrap();
    let spec = Spec::parse(&source, &source_path);
    let program = build(&source_path, name, &spec.targets);
    let mut cmd = Command::new(&program);
    common::clear_loader_env(&mut cmd);
    common::use_simulator(&mut cmd, "gfx942");
    cmd.env("HIPSHIM_QUEUE_POLICY", policy)
        .env("HIPSHIM_LOG", log);
    let out = common::run(&mut cmd, common::program_timeout());
    assert!(
        !out.timed_out && out.status.success(),
        "{name} under {policy} failed\n{}",
        out.report(&cmd)
    );
    (out.stdout(), out.stderr())
}

/// A destroyed stream's queue goes back to the pool at once, though the launching thread's
/// launch record still holds the stream: three streams made, launched on and destroyed in
/// turn under a least-loaded pool of two all get the same queue (a queue still counted for a
/// destroyed stream would send the second to a new one).
#[test]
fn a_destroyed_stream_gives_its_queue_back_while_a_launch_record_holds_it() {
    let (out, log) = run_under_policy("queue_release", "pool:2", "hipshim::policy=info");
    assert!(out.contains("queue_release: PASSED"), "{out}");
    let queues: Vec<&str> = log
        .lines()
        .filter(|line| line.contains("stream assigned to queue"))
        .filter_map(|line| line.split("queue=").nth(1)?.split_whitespace().next())
        .collect();
    assert_eq!(queues.len(), 3, "one assignment per stream:\n{log}");
    assert!(
        queues.iter().all(|q| *q == queues[0]),
        "every stream should get the first one's idle queue:\n{log}"
    );
}

/// The policy experiment: a long kernel on stream A delays a short one on stream B when the
/// streams share a queue, and does not when each has its own.
#[test]
fn single_queue_serializes_streams_and_dedicated_queues_overlap_them() {
    let (single, _) = run_policy("single", "warn");
    assert!(single.contains("B waited for A"), "{single}");
    let (dedicated, _) = run_policy("dedicated", "warn");
    assert!(dedicated.contains("B overtook A"), "{dedicated}");
}

/// A pool of one queue behaves like `single`; a round-robin pool of two gives the two
/// streams different queues.
#[test]
fn pool_size_decides_whether_streams_share_a_queue() {
    let (one, _) = run_policy("pool:1", "warn");
    assert!(one.contains("B waited for A"), "{one}");
    let (two, _) = run_policy("pool:2:rr", "warn");
    assert!(two.contains("B overtook A"), "{two}");
}

/// The policy in force and every stream→queue assignment are logged (target `hipshim`).
#[test]
fn policy_and_assignments_are_logged() {
    let (_, log) = run_policy("dedicated", "hipshim=info");
    assert!(log.contains("queue policy in force"), "{log}");
    assert!(log.contains("policy=dedicated"), "{log}");
    assert!(
        log.matches("stream assigned to queue").count() >= 2,
        "each stream's queue assignment is logged:\n{log}"
    );
}

/// A malformed policy is reported with the accepted forms and the default is used.
#[test]
fn a_malformed_policy_falls_back_to_the_default_pool() {
    let (out, log) = run_policy("fastest", "warn");
    assert!(
        log.contains("HIPSHIM_QUEUE_POLICY") && log.contains("pool:N:rr"),
        "the message names the variable and the accepted forms:\n{log}"
    );
    // The default pool:4 gives the two streams different queues. The program reads the
    // variable itself, so it expects a shared queue for nothing but single/pool:1.
    assert!(out.contains("B overtook A"), "{out}");
}

/// Runs the streams program `name` (gfx942) with the HSA call stats and extra environment;
/// returns the stats (stderr).
fn run_with_stats(name: &str, env: &[(&str, &str)]) -> String {
    let source_path = c_tests_dir("streams").join(format!("{name}.hip"));
    let source = std::fs::read_to_string(&source_path).unwrap();
    let spec = Spec::parse(&source, &source_path);
    let program = build(&source_path, name, &spec.targets);
    let mut cmd = Command::new(&program);
    common::clear_loader_env(&mut cmd);
    common::use_simulator(&mut cmd, "gfx942");
    cmd.env("HIPSHIM_STATS", "1").envs(env.iter().copied());
    let out = common::run(&mut cmd, common::program_timeout());
    assert!(
        !out.timed_out && out.status.success(),
        "{name} failed\n{}",
        out.report(&cmd)
    );
    out.stderr()
}

/// Large pageable copies go to the engines straight from the program's pages, locked for the
/// copy and unlocked after it (one lock per copy of 8 MiB or more: eight in
/// `pageable_copies`, beside its one `hipHostRegister`, and two more for the copies over a
/// range with a registered tail if the runtime grants them), in both of hsasim's modes; the
/// program checks every byte.
#[test]
fn large_pageable_copies_lock_their_pages_for_the_engines() {
    for deterministic in [false, true] {
        let env: &[(&str, &str)] = if deterministic {
            &[("HSASIM_THREADS", "0")]
        } else {
            &[]
        };
        let stats = run_with_stats("pageable_copies", env);
        let locks = hsa_calls(&stats, "hsa_amd_memory_lock");
        let unlocks = hsa_calls(&stats, "hsa_amd_memory_unlock");
        assert!(
            locks >= 9,
            "deterministic={deterministic}: {locks} locks\n{stats}"
        );
        assert_eq!(locks, unlocks, "every lock is undone\n{stats}");
    }
}

/// The calls count of one HSA entry point in the stats table (0 when it is not listed).
fn hsa_calls(stats: &str, name: &str) -> u64 {
    stats
        .lines()
        .find_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some(name))
                .then(|| words.next().and_then(|n| n.parse().ok()))
                .flatten()
        })
        .unwrap_or(0)
}

/// ROCm 5.2's ROCr has no `hsa_amd_memory_async_copy_on_engine` or
/// `hsa_amd_memory_copy_engine_status`: with hsasim hiding them (`HSASIM_HIDE`), stream
/// copies fall back to runtime-placed `hsa_amd_memory_async_copy` and still come out right
/// and in order. Without hiding, the engine-choosing call is the one used.
#[test]
fn copies_fall_back_to_runtime_placed_engines_without_rocm_5_3_calls() {
    let with_engines = run_with_stats("memcpy_order", &[]);
    assert!(
        hsa_calls(&with_engines, "hsa_amd_memory_async_copy_on_engine") > 0,
        "{with_engines}"
    );
    let hidden = run_with_stats(
        "memcpy_order",
        &[(
            "HSASIM_HIDE",
            "hsa_amd_memory_async_copy_on_engine,hsa_amd_memory_copy_engine_status",
        )],
    );
    assert!(!hidden.contains("stays visible"), "{hidden}");
    assert_eq!(
        hsa_calls(&hidden, "hsa_amd_memory_async_copy_on_engine"),
        0,
        "{hidden}"
    );
    assert_eq!(hsa_calls(&hidden, "hsa_amd_memory_copy_engine_status"), 0);
    assert!(
        hsa_calls(&hidden, "hsa_amd_memory_async_copy") > 0,
        "{hidden}"
    );
}

/// `kernarg_slots` (run threaded by the list above) in hsasim's deterministic mode too, where
/// the device runs only when the host waits: every launch of a round is published before any
/// runs, so each kernarg slot must still hold its own launch's segment when the device reads
/// it.
#[test]
fn kernarg_slots_gfx942_deterministic() {
    let source_path = c_tests_dir("streams").join("kernarg_slots.hip");
    let source = std::fs::read_to_string(&source_path).unwrap();
    let spec = Spec::parse(&source, &source_path);
    let program = build(&source_path, "kernarg_slots", &spec.targets);
    let out = run_in_mode(&program, "kernarg_slots", "gfx942", true, |_| {});
    assert!(out.contains("PASSED"), "{out}");
}

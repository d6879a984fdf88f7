//! Running out of HSA queues loses no work: the HIP programs in `c_tests/queues/`, run on
//! hsasim with a small `HSASIM_MAX_QUEUES` under every `HIPSHIM_QUEUE_POLICY`. When a queue
//! cannot be made, a stream shares one of the device's working queues (logged at warn and
//! traced with the reason); a failed queue is never shared; only a device with no working queue
//! refuses a launch, with hipErrorOutOfMemory. Each program checks that every kernel ran
//! exactly once. Run them in both hsasim modes (`HSASIM_THREADS=0` too).

mod common;

use std::path::PathBuf;
use std::process::Command;

use amdhip64::trace::{read_trace, TraceEvent};
use common::ctest::{build, c_tests_dir, Spec};

c_tests! {
    dir "queues";
    many_streams_gfx942 => "many_streams" on "gfx942";
    failed_queue_gfx942 => "failed_queue" on "gfx942";
    stress_gfx942 => "stress" on "gfx942";
}

const POLICIES: &[&str] = &[
    "dedicated",
    "single",
    "pool:1",
    "pool:4",
    "pool:4:rr",
    "pool:8",
];

/// What the fallback says, in the log and in the trace.
const FALLBACK: &str = "fallback: no new queue";
const MASK_DROPPED: &str = "the stream's CU mask is NOT applied";
const NO_QUEUE: &str = "the device has no working queue to share";

/// Builds `c_tests/queues/NAME.hip` (shared with the `c_tests!` runs) and runs it on hsasim
/// (gfx942) under `policy` with `HSASIM_MAX_QUEUES=max_queues` and `env`; fails the test
/// unless it exits 0. Returns stdout and stderr.
fn run(name: &str, policy: &str, max_queues: u32, env: &[(&str, &str)]) -> (String, String) {
    let source_path = c_tests_dir("queues").join(format!("{name}.hip"));
    let source = std::fs::read_to_string(&source_path).unwrap();
    let spec = Spec::parse(&source, &source_path);
    let program = build(&source_path, name, &spec.targets);
    let mut cmd = Command::new(&program);
    common::clear_loader_env(&mut cmd);
    common::use_simulator(&mut cmd, "gfx942");
    for var in ["HIPSHIM_TRACE", "HIPSHIM_STATS", "HIPSHIM_LOG"] {
        cmd.env_remove(var);
    }
    cmd.env("HIPSHIM_QUEUE_POLICY", policy)
        .env("HSASIM_MAX_QUEUES", max_queues.to_string());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = common::run(&mut cmd, common::program_timeout());
    assert!(
        !out.timed_out && out.status.success(),
        "{name} under {policy} with HSASIM_MAX_QUEUES={max_queues} failed\n{}",
        out.report(&cmd)
    );
    (out.stdout(), out.stderr())
}

/// More streams than queues under every policy: every kernel runs; policies that want more
/// queues than the 3 hsasim allows say so at warn.
#[test]
fn every_kernel_runs_when_streams_outnumber_queues_under_every_policy() {
    for policy in POLICIES {
        let (out, err) = run("many_streams", policy, 3, &[]);
        assert!(
            out.contains("1004 of 1004 kernels ran exactly once"),
            "{policy}: {out}"
        );
        // single and pool:1 need one queue plus the CU-masked stream's: no fallback.
        let wants_more = !matches!(*policy, "single" | "pool:1");
        assert_eq!(err.contains(FALLBACK), wants_more, "{policy}:\n{err}");
    }
}

/// A CU-masked stream that cannot get its private queue runs its work on a shared queue, and
/// the warning says the mask is not applied.
#[test]
fn a_cu_masked_stream_without_a_queue_runs_unmasked_with_a_warning() {
    let (out, err) = run("many_streams", "dedicated", 2, &[]);
    assert!(
        out.contains("1004 of 1004 kernels ran exactly once"),
        "{out}"
    );
    assert!(err.contains(MASK_DROPPED), "{err}");
}

/// Every fallback is in the trace as a stream assignment whose reason says why.
#[test]
fn the_fallback_is_traced_with_its_reason() {
    let dir = common::target_dir()
        .join("queue-tests")
        .join(format!("trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path: PathBuf = dir.join("many_streams.json");
    let _ = std::fs::remove_file(&path);
    run(
        "many_streams",
        "dedicated",
        4,
        &[("HIPSHIM_TRACE", path.to_str().unwrap())],
    );
    let events = read_trace(&path).unwrap();
    let created = events
        .iter()
        .filter(|e| matches!(e, TraceEvent::QueueCreated { .. }))
        .count();
    let reasons: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            TraceEvent::StreamAssigned { reason, .. } => Some(reason.as_str()),
            _ => None,
        })
        .collect();
    let fallbacks = reasons.iter().filter(|r| r.starts_with(FALLBACK)).count();
    assert_eq!(created, 4, "HSASIM_MAX_QUEUES=4 allows 4 queues");
    // dedicated: every assignment either made a queue or fell back.
    assert_eq!(fallbacks, reasons.len() - created, "{reasons:?}");
    assert!(fallbacks >= 1000, "{fallbacks} fallbacks");
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("HSA_STATUS_ERROR_OUT_OF_RESOURCES")),
        "the reason names hsa_queue_create's status"
    );
    assert!(reasons.iter().any(|r| r.contains(MASK_DROPPED)));
    // The high-priority stream found no queue of its priority to share.
    assert!(reasons
        .iter()
        .any(|r| r.contains("that queue has Normal priority")));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A failed queue is never given to a new stream: with room for another queue the new
/// stream's kernel runs there; without, its launch is refused with hipErrorOutOfMemory and a
/// log line (the program checks which, from HSASIM_MAX_QUEUES).
#[test]
fn a_failed_queue_is_never_shared() {
    for (policy, max_queues) in [
        ("single", 1),
        ("single", 2),
        ("pool:1", 1),
        ("pool:4", 2),
        ("dedicated", 1),
        ("dedicated", 2),
    ] {
        let (out, err) = run("failed_queue", policy, max_queues, &[]);
        let refused = max_queues == 1;
        let expected = if refused { "was refused" } else { "ran" };
        assert!(
            out.contains(&format!("D's kernel {expected}")),
            "{policy}, {max_queues} queues:\n{out}"
        );
        assert_eq!(
            err.contains(NO_QUEUE),
            refused,
            "{policy}, {max_queues} queues:\n{err}"
        );
    }
}

/// 8 threads on shared, private, short-lived, null and per-thread streams, 3 queues.
fn stress(policy: &str) {
    stress_with(policy, 3);
}

fn stress_with(policy: &str, max_queues: u32) {
    let (out, _) = run("stress", policy, max_queues, &[]);
    assert!(
        out.contains("2304 of 2304 kernels from 8 threads ran exactly once"),
        "{policy}: {out}"
    );
}

#[test]
fn stress_dedicated() {
    stress("dedicated");
}

#[test]
fn stress_single() {
    stress("single");
}

#[test]
fn stress_pool_1() {
    stress("pool:1");
}

#[test]
fn stress_pool_4() {
    stress("pool:4");
}

#[test]
fn stress_pool_4_rr() {
    stress("pool:4:rr");
}

#[test]
fn stress_pool_8() {
    stress("pool:8");
}

/// The same churn with hsasim's default limit of 128 queues, most streams on their own.
#[test]
fn stress_dedicated_with_the_default_queue_limit() {
    stress_with("dedicated", 128);
}

//! Faults and the error model (docs/guide/faults-and-errors.md): the HIP programs in
//! `c_tests/faults/`, built with clang-19 against `hip_headers/` and run on hsasim for each
//! target under the default policy (see `tests/common/ctest.rs`), and on gfx942 under the
//! other queue policies, where streams share queues differently. A hang fails the test: each
//! program's watchdog ends it within 60 s naming the step, and the runner kills it after
//! [`RUN_LIMIT`].

mod common;

use std::process::Command;
use std::time::Duration;

use common::ctest::{build, c_tests_dir, Spec};

c_tests! {
    dir "faults";
    chain_gfx942 => "chain" on "gfx942";
    chain_gfx90a => "chain" on "gfx90a";
    shared_gfx942 => "shared" on "gfx942";
    shared_gfx90a => "shared" on "gfx90a";
    engine_behind_barrier_gfx942 => "engine_behind_barrier" on "gfx942";
    engine_behind_barrier_gfx90a => "engine_behind_barrier" on "gfx90a";
    copy_behind_fault_gfx942 => "copy_behind_fault" on "gfx942";
    copy_behind_fault_gfx90a => "copy_behind_fault" on "gfx90a";
    ahead_of_stuck_gfx942 => "ahead_of_stuck" on "gfx942";
    ahead_of_stuck_gfx90a => "ahead_of_stuck" on "gfx90a";
}

/// Besides the default `pool:4` of the runs above: a queue per stream, one queue for all,
/// round-robin and least-loaded pools smaller than the number of streams.
const POLICIES: &[&str] = &["dedicated", "single", "pool:1", "pool:2:rr", "pool:3"];

/// A program that has not finished by then hangs (its own watchdog fires at 60 s).
const RUN_LIMIT: Duration = Duration::from_secs(90);

/// Builds `c_tests/faults/<program>.hip` and runs it on hsasim (gfx942) under each policy.
fn run_under_each_policy(program: &str) {
    let source_path = c_tests_dir("faults").join(format!("{program}.hip"));
    let source = std::fs::read_to_string(&source_path).unwrap();
    let spec = Spec::parse(&source, &source_path);
    let binary = build(&source_path, program, &spec.targets);
    for policy in POLICIES {
        let mut cmd = Command::new(&binary);
        common::clear_loader_env(&mut cmd);
        common::use_simulator(&mut cmd, "gfx942");
        cmd.env("HIPSHIM_QUEUE_POLICY", policy);
        let out = common::run(&mut cmd, RUN_LIMIT.min(common::program_timeout()));
        assert!(
            !out.timed_out && out.status.success(),
            "{program} under HIPSHIM_QUEUE_POLICY={policy} failed\n{}",
            out.report(&cmd)
        );
    }
}

/// Stream 0 faults and streams 1..=4 wait for it through a chain of events: every stream
/// and event of the chain reports the fault, whichever call looks first, and nothing hangs.
#[test]
fn a_fault_reaches_every_stream_through_any_chain_of_waits_under_every_policy() {
    run_under_each_policy("chain");
}

/// Every stream whose queued work a fault dropped reports it, also after a device-wide or
/// null-stream call saw it first; work that was not dropped runs.
#[test]
fn no_work_is_lost_silently_under_every_policy() {
    run_under_each_policy("shared");
}

/// A copy queued behind a fault never runs, whichever queue its stream shares.
#[test]
fn a_copy_behind_a_fault_never_runs_under_every_policy() {
    run_under_each_policy("copy_behind_fault");
}

/// Work queued ahead of a wait that can never complete still runs, and every wait that
/// reports the fault waits for it first, whichever queue its stream shares.
#[test]
fn work_ahead_of_a_stuck_wait_is_waited_for_under_every_policy() {
    run_under_each_policy("ahead_of_stuck");
}

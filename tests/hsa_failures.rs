//! HIP programs on hsasim with HSA calls failing on purpose (`HSASIM_FAIL`, see
//! sim/src/fail.rs): every failure reaches the program as a HIP error, never as a crash, a
//! hang or a success with wrong data, and a program that retries gets right results once
//! the failures stop.

mod common;

use common::ctest;
use std::process::Command;
use std::time::Duration;

/// What one run under `HSASIM_FAIL=spec` did.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    report: String,
}

fn run_under(program: &std::path::Path, spec: &str) -> Run {
    let mut cmd = Command::new(program);
    common::clear_loader_env(&mut cmd);
    common::use_simulator(&mut cmd, "gfx942");
    cmd.env("HSASIM_FAIL", spec)
        .env("HSASIM_LOG", "hsasim=warn")
        .env("HIPSHIM_LOG", "warn");
    let out = common::run(&mut cmd, Duration::from_secs(120));
    let report = out.report(&cmd);
    assert!(
        !out.timed_out,
        "HSASIM_FAIL={spec}: the program hung\n{report}"
    );
    Run {
        code: out.status.code(),
        stdout: out.stdout(),
        stderr: out.stderr(),
        report,
    }
}

/// Failures hsasim made on purpose in a run.
fn injected(run: &Run) -> usize {
    run.stderr.matches("HSASIM_FAIL: failing this call").count()
}

/// Corpus programs that check every HIP call, launches included (`hipGetLastError`), and
/// their results; each exits 1 through its CHECK macro, which prints "CALL failed:
/// hipErrorNAME", on the first failing call. (A program that does not check its launches,
/// like `matmul_tiled`, reads zeros after a refused launch, as with CUDA.) Under random failures
/// of every kind: each run either succeeds (its own check passed: right data) or stops at a
/// call that returned a HIP error; never a signal, a hang or a wrong result.
#[test]
fn corpus_programs_under_random_hsa_failures_fail_cleanly_or_succeed() {
    let mut outcomes = Vec::new();
    for name in ["saxpy", "packed_int_dot", "rounding_modes"] {
        let (program, _) = ctest::build_area_program("corpus", name);
        for seed in 1..=4 {
            let spec = format!("all:p=0.1:seed={seed}");
            let run = run_under(&program, &spec);
            let label = format!("{name} under HSASIM_FAIL={spec}");
            assert!(
                run.code.is_some(),
                "{label}: killed by a signal\n{}",
                run.report
            );
            assert!(
                !run.stderr.contains("panicked"),
                "{label}: a panic\n{}",
                run.report
            );
            if run.code != Some(0) {
                assert_eq!(run.code, Some(1), "{label}\n{}", run.report);
                assert!(
                    run.stderr.contains(" failed: hipError"),
                    "{label}: exited {:?} without a HIP error\n{}",
                    run.code,
                    run.report
                );
            }
            outcomes.push((label, run.code, injected(&run)));
        }
    }
    // The mode did something: some runs met failures.
    assert!(
        outcomes.iter().any(|(_, _, n)| *n > 0),
        "no run met an injected failure: {outcomes:?}"
    );
    for (label, code, n) in &outcomes {
        println!("{label}: exit {code:?}, {n} injected failures");
    }
}

/// Every program of the c_tests corpus under random failures of every kind (one seed each,
/// two programs a seed, so the runs differ): most do not check their launches, so a refused
/// launch shows as a wrong result, but then hipshim must have said so: a run that fails has
/// met an injected failure and logged a HIP error for it (never a silent failure). No run
/// may crash, panic or hang.
#[test]
fn every_corpus_program_under_random_hsa_failures_fails_only_with_a_reported_error() {
    let mut names: Vec<String> = std::fs::read_dir(ctest::c_tests_dir("corpus"))
        .unwrap()
        .filter_map(|e| {
            let path = e.ok()?.path();
            (path.extension()? == "hip").then(|| path.file_stem()?.to_str().map(str::to_owned))?
        })
        .collect();
    names.sort();
    assert!(names.len() >= 19, "{names:?}");
    let mut failed = 0;
    let mut met = 0;
    for (k, name) in names.iter().enumerate() {
        let source = ctest::c_tests_dir("corpus").join(format!("{name}.hip"));
        let text = std::fs::read_to_string(&source).unwrap();
        let targets = ctest::Spec::parse(&text, &source).targets;
        let program = ctest::build(&source, name, &targets);
        let spec = format!("all:p=0.05:seed={}", 100 + k / 2);
        let run = run_under(&program, &spec);
        let label = format!("{name} under HSASIM_FAIL={spec}");
        assert!(
            run.code.is_some(),
            "{label}: killed by a signal\n{}",
            run.report
        );
        assert!(
            !run.stderr.contains("panicked"),
            "{label}: a panic\n{}",
            run.report
        );
        let n = injected(&run);
        met += usize::from(n > 0);
        if run.code != Some(0) {
            failed += 1;
            assert!(
                n > 0,
                "{label}: failed with no injected failure\n{}",
                run.report
            );
            assert!(
                run.stderr.contains("hipError") || run.stderr.contains(" failed: "),
                "{label}: failed without a HIP error reported\n{}",
                run.report
            );
        }
        println!("{label}: exit {:?}, {n} injected failures", run.code);
    }
    println!(
        "{} programs, {met} met injected failures, {failed} failed",
        names.len()
    );
    assert!(met > 0, "no run met an injected failure");
}

/// A program that retries every HIP call until it succeeds: with a bounded number of
/// failures (`count`), the failures surface as HIP errors and the results are right.
#[test]
fn a_program_that_retries_gets_right_results_once_failures_stop() {
    let (program, _) = ctest::build_area_program("hsa_failures", "retry");
    for spec in [
        "all:count=3:seed=1",
        "pool_allocate,async_copy,signal_create:p=0.5:count=6:seed=2",
        "queue_create,interrupt_signal:p=0.5:count=4:seed=3",
        "all:p=0.3:after=4:count=8:seed=4",
    ] {
        let run = run_under(&program, spec);
        assert_eq!(
            run.code,
            Some(0),
            "retry under HSASIM_FAIL={spec}\n{}",
            run.report
        );
        assert!(
            run.stdout.contains("results right"),
            "HSASIM_FAIL={spec}\n{}",
            run.report
        );
        println!(
            "HSASIM_FAIL={spec}: {} injected, {}",
            injected(&run),
            run.stdout.trim()
        );
    }
}

/// A stream-ordered copy that waited behind a kernel, on a stream destroyed meanwhile, fails
/// to start: the next `hipDeviceSynchronize` reports it every time (it used to return
/// `hipSuccess` now and then, the copy missing: the stream counted as done, and was dropped,
/// just before the failure was recorded).
#[test]
fn a_copy_failing_on_a_destroyed_stream_is_reported_by_the_device() {
    let (program, _) = ctest::build_area_program("hsa_failures", "destroyed_stream_copy");
    let run = run_under(&program, "async_copy:p=1");
    assert_eq!(run.code, Some(0), "{}", run.report);
    assert!(run.stdout.contains("reported 12 of 12"), "{}", run.report);
}

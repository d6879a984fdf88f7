//! `hipshim trace summarize` on a trace that `hipshim run --trace` wrote: the CLI reads it
//! with the runtime's own trace reader and prints the same tables as HIPSHIM_STATS.

mod common;

use common::{hipshim, hipshim_output};
use std::time::Duration;

const VECTOR_ADD: &str = "c_tests/vector_add.hip";

/// A run with `--trace T --stats=S`: `hipshim trace summarize T` must print exactly the
/// tables the runtime wrote to S at exit (one computation, two ways to reach it).
#[test]
fn trace_summarize_prints_the_stats_the_run_wrote() {
    let program = common::build_hip(VECTOR_ADD, "vector_add");
    let stem = format!("vector_add-{}", std::process::id());
    let (trace, stats, out) = common::traced_run(&program, &stem, "stats.txt", &[]);
    assert_eq!(out.code(), Some(0), "{}", out.report());
    assert!(trace.is_file(), "no trace written\n{}", out.report());
    let written = std::fs::read_to_string(&stats)
        .unwrap_or_else(|e| panic!("no stats file ({e})\n{}", out.report()));

    let mut cmd = hipshim([
        "trace".into(),
        "summarize".into(),
        trace.clone().into_os_string(),
    ]);
    let summary = common::run(&mut cmd, Duration::from_secs(60));
    assert_eq!(summary.code(), Some(0), "{}", summary.report());
    // The run created a queue and dispatched on it: the tables must say so.
    for expected in ["hsa_queue_create", "Queues", "Signal waits"] {
        assert!(
            summary.stdout.contains(expected),
            "no `{expected}`\n{}",
            summary.report()
        );
    }
    assert_eq!(
        summary.stdout, written,
        "summarize differs from HIPSHIM_STATS"
    );
    let _ = std::fs::remove_file(&trace);
    let _ = std::fs::remove_file(&stats);
}

#[test]
fn summarizing_a_missing_or_foreign_file_fails_with_its_name() {
    let out = hipshim_output(["trace", "summarize", "/nonexistent/trace.json"]);
    assert_eq!(out.code(), Some(1), "{}", out.report());
    assert!(
        out.stderr.contains("/nonexistent/trace.json"),
        "{}",
        out.report()
    );

    let dir = common::profile_dir().join("cli-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let bogus = dir.join(format!("not-a-trace-{}.json", std::process::id()));
    std::fs::write(&bogus, "{\"hello\": 1").unwrap();
    let out = hipshim_output([
        "trace".into(),
        "summarize".into(),
        bogus.clone().into_os_string(),
    ]);
    assert_eq!(out.code(), Some(1), "{}", out.report());
    let _ = std::fs::remove_file(&bogus);

    let out = hipshim_output(["trace", "summarize"]);
    assert_eq!(out.code(), Some(2), "{}", out.report());
}

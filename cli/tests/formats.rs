//! `--format json|csv` as a program reads it: every document is parsed with serde_json and
//! checked for its `hipshim.<kind>` schema, its version and a few values that the run that
//! produced it fixes (docs/guide/output-formats.md is the schema).

mod common;

use common::{hipshim, hipshim_output};
use serde_json::Value;
use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

const VECTOR_ADD: &str = "c_tests/vector_add.hip";

fn document(text: &str, kind: &str, context: &str) -> Value {
    let doc: Value = serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("not one JSON document ({e})\n{context}"));
    assert_eq!(doc["schema"], format!("hipshim.{kind}"), "{context}");
    assert_eq!(doc["schema_version"], 1, "{context}");
    doc
}

/// The body without its envelope, to compare two kinds that carry the same fields.
fn body(mut doc: Value) -> Value {
    let fields = doc.as_object_mut().unwrap();
    fields.remove("schema");
    fields.remove("schema_version");
    doc
}

#[test]
fn info_as_json_lists_the_runtime_agents_and_settings() {
    let mut cmd = hipshim(["info", "--format", "json"]);
    // As tests/info.rs: `cargo test` leaves libhsasim.so only in deps/.
    if !common::profile_dir().join("libhsasim.so").is_file() {
        cmd.env("HIPSHIM_HSA_LIB", common::lib_dir().join("libhsasim.so"));
    }
    let out = common::run(&mut cmd, Duration::from_secs(60));
    assert_eq!(out.code(), Some(0), "{}", out.report());
    let doc = document(&out.stdout, "info", &out.report());
    assert_eq!(doc["hsa_runtime"]["simulator"], true, "{}", out.report());
    assert!(doc["hsa_runtime"]["timestamp_hz"].as_u64().unwrap() > 0);
    let gpu = &doc["gpu_agents"][0];
    assert!(
        gpu["compute_units"].as_i64().unwrap() > 0,
        "{}",
        out.report()
    );
    assert!(gpu["pools"][0]["size_bytes"].is_u64(), "{}", out.report());
    let settings = doc["configuration"].as_array().unwrap();
    let stats_format = settings
        .iter()
        .find(|s| s["name"] == "HIPSHIM_STATS_FORMAT")
        .unwrap_or_else(|| panic!("no HIPSHIM_STATS_FORMAT\n{}", out.report()));
    assert_eq!(stats_format["value"], "text");
    assert_eq!(stats_format["source"], "default");
}

#[test]
fn csv_of_a_report_that_is_not_a_table_is_a_usage_error() {
    let out = hipshim_output(["info", "--format", "csv"]);
    assert_eq!(out.code(), Some(2), "{}", out.report());
    assert!(out.stderr.contains("--format json"), "{}", out.report());
    assert!(out.stdout.is_empty(), "{}", out.report());
    let out = hipshim_output(["info", "--format", "yaml"]);
    assert_eq!(out.code(), Some(2), "{}", out.report());
    assert!(out.stderr.contains("text | json | csv"), "{}", out.report());
}

/// `run --stats=F --stats-format json` and `trace summarize --format json` of the same run's
/// trace: two kinds, one computation, so the same fields and values.
#[test]
fn stats_and_trace_summary_as_json_and_csv() {
    let program = common::build_hip(VECTOR_ADD, "vector_add");
    let stem = format!("formats-{}", std::process::id());
    let (trace, stats, out) =
        common::traced_run(&program, &stem, "stats.json", &["--stats-format", "json"]);
    assert_eq!(out.code(), Some(0), "{}", out.report());
    assert!(
        out.stderr.contains("HIPSHIM_STATS_FORMAT=json"),
        "{}",
        out.report()
    );
    let written = std::fs::read_to_string(&stats)
        .unwrap_or_else(|e| panic!("no stats file ({e})\n{}", out.report()));
    let stats_doc = document(&written, "stats", &written);
    let api = stats_doc["api"].as_array().unwrap();
    let launches = api
        .iter()
        .find(|r| r["name"] == "hipLaunchKernel")
        .unwrap_or_else(|| panic!("no hipLaunchKernel row\n{written}"));
    assert_eq!(launches["calls"], 1, "{written}");
    assert_eq!(launches["errors"], 0, "{written}");
    let queue = &stats_doc["queues"][0];
    assert!(queue["kernels"].as_u64().unwrap() >= 1, "{written}");
    assert!(queue["doorbells"].as_u64().unwrap() >= 1, "{written}");
    assert!(stats_doc["waits"]["waits"].is_u64(), "{written}");

    let summarize = |format: &str| {
        let mut cmd = hipshim([
            "trace".into(),
            "summarize".into(),
            trace.clone().into_os_string(),
            "--format".into(),
            OsString::from(format),
        ]);
        let out = common::run(&mut cmd, Duration::from_secs(60));
        assert_eq!(out.code(), Some(0), "{}", out.report());
        out
    };
    let json = summarize("json");
    let summary = document(&json.stdout, "trace-summary", &json.report());
    assert_eq!(
        body(summary),
        body(stats_doc),
        "summary differs from the stats"
    );

    let csv = summarize("csv");
    let mut lines = csv.stdout.lines();
    assert_eq!(lines.next(), Some("table,row,field,value"));
    assert!(
        csv.stdout
            .lines()
            .any(|l| l.starts_with("api,") && l.ends_with(",name,hipLaunchKernel")),
        "{}",
        csv.report()
    );
    assert!(
        csv.stdout.lines().all(|l| l.split(',').count() == 4),
        "{}",
        csv.report()
    );
    let _ = std::fs::remove_file(&trace);
    let _ = std::fs::remove_file(&stats);
}

#[test]
fn device_status_as_json() {
    let name = format!("formats-{}", std::process::id());
    let out = hipshim_output([
        "device", "start", "--name", &name, "--slots", "8", "--memory", "64M",
    ]);
    assert_eq!(out.code(), Some(0), "{}", out.report());
    let status = hipshim_output(["device", "status", "--name", &name, "--format", "json"]);
    let stop = hipshim_output(["device", "stop", "--name", &name]);
    assert_eq!(status.code(), Some(0), "{}", status.report());
    assert_eq!(stop.code(), Some(0), "{}", stop.report());
    let doc = document(&status.stdout, "device-status", &status.report());
    assert_eq!(doc["device"], name.as_str());
    assert_eq!(doc["service_alive"], true);
    assert_eq!(doc["scheduler"]["slots"], 8);
    assert_eq!(doc["memory"]["size_bytes"], 64u64 << 20);
    assert_eq!(doc["runlist"]["queues"], 0);
    assert_eq!(doc["counters"]["maps"], 0);
    assert_eq!(doc["queues"].as_array().unwrap().len(), 0);
}

/// A stand-in for the policy program: prints what the real one prints, except under the
/// `single` policy, where it fails as a runtime would.
fn failing_program(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(
        path,
        "#!/bin/sh\n\
         if [ \"$HIPSHIM_QUEUE_POLICY\" = single ]; then\n\
         echo 'hipStreamCreate failed: hipErrorOutOfMemory' >&2; exit 3\n\
         fi\n\
         echo 'config streams=1 kernels=2 work_us=10 churn=0 clock_hz=1000000 clock_attr_khz=1000'\n\
         echo 'host total_ns=50000'\n\
         echo 'kernel stream=0 start=0 end=10'\n\
         echo 'kernel stream=0 start=10 end=20'\n",
    )
    .unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// One policy's run fails: its row says so with the reason, the rows before and after it
/// still have their figures, in text, json and csv, and the exit status is 1.
#[test]
fn a_failing_bench_row_is_reported_and_the_others_still_print() {
    let dir = common::profile_dir().join("cli-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let program = dir.join(format!("fails-under-single-{}", std::process::id()));
    failing_program(&program);
    let bench = |format: &str| {
        hipshim_output([
            "bench".into(),
            "policies".into(),
            "--program".into(),
            program.clone().into_os_string(),
            "--policies".into(),
            "pool:1,single,dedicated".into(),
            "--format".into(),
            OsString::from(format),
        ])
    };
    let text = bench("text");
    assert_eq!(text.code(), Some(1), "{}", text.report());
    let rows: Vec<&str> = text.stdout.lines().skip(2).collect();
    assert_eq!(rows.len(), 3, "{}", text.report());
    assert!(rows[0].starts_with("pool:1 "), "{}", text.report());
    assert!(
        rows[1].starts_with("single       FAILED:"),
        "{}",
        text.report()
    );
    assert!(rows[1].contains("hipErrorOutOfMemory"), "{}", text.report());
    assert!(rows[2].starts_with("dedicated "), "{}", text.report());
    assert!(
        text.stderr.contains("1 of 3 rows failed"),
        "{}",
        text.report()
    );

    let json = bench("json");
    assert_eq!(json.code(), Some(1), "{}", json.report());
    let doc = document(&json.stdout, "bench-policies", &json.report());
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows[0]["status"], "ok");
    let makespan = rows[0]["makespan_ms"].as_f64().unwrap();
    assert!((makespan - 0.02).abs() < 1e-9, "{}", json.report());
    assert_eq!(rows[1]["status"], "failed");
    assert!(rows[1]["reason"]
        .as_str()
        .unwrap()
        .contains("hipErrorOutOfMemory"));
    assert_eq!(rows[2]["kernels"], 2);

    let csv = bench("csv");
    assert_eq!(csv.code(), Some(1), "{}", csv.report());
    let lines: Vec<&str> = csv.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{}", csv.report());
    assert!(lines[0].starts_with("policy,status,"), "{}", csv.report());
    assert!(lines[2].starts_with("single,failed,"), "{}", csv.report());
    assert!(lines[3].starts_with("dedicated,ok,"), "{}", csv.report());
    let _ = std::fs::remove_file(&program);
}

/// The real policy program, as small as it goes: json and csv of the same one-row bench.
#[test]
fn a_short_bench_as_json_and_csv() {
    let bench = |format: &str| {
        let mut cmd = hipshim([
            "bench",
            "policies",
            "--streams",
            "1",
            "--kernels",
            "1",
            "--work",
            "100",
            "--policies",
            "single",
            "--format",
            format,
        ]);
        // The first run builds the bench program (clang, two targets).
        let out = common::run(&mut cmd, Duration::from_secs(300));
        assert_eq!(out.code(), Some(0), "{}", out.report());
        out
    };
    let json = bench("json");
    let doc = document(&json.stdout, "bench-policies", &json.report());
    assert_eq!(doc["config"]["streams"], 1);
    assert_eq!(doc["config"]["work_us"], 100);
    let row = &doc["rows"][0];
    assert_eq!(row["policy"], "single");
    assert_eq!(row["status"], "ok");
    assert_eq!(row["kernels"], 1);
    assert!(
        row["makespan_ms"].as_f64().unwrap() > 0.0,
        "{}",
        json.report()
    );

    let csv = bench("csv");
    let lines: Vec<&str> = csv.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", csv.report());
    let header: Vec<&str> = lines[0].split(',').collect();
    let record: Vec<&str> = lines[1].split(',').collect();
    assert_eq!(header.len(), record.len(), "{}", csv.report());
    assert_eq!(record[0], "single");
    assert_eq!(record[1], "ok");
    let makespan = header.iter().position(|h| *h == "makespan_ms").unwrap();
    assert!(
        record[makespan].parse::<f64>().unwrap() > 0.0,
        "{}",
        csv.report()
    );
}

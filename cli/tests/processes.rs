//! `hipshim bench processes` and `hipshim trace merge` end to end: two copies of the policy
//! experiment on one device service that maps one process at a time are time-sliced (one
//! copy alone is not), distinct queue ids change nothing in the scheduler's view, and their
//! traces merge onto one timeline with the service's slot log. Asserted: which rows say
//! oversubscribed, that slices happened, that the scheduler's run share shows the waiting
//! (a model figure), and what the merged file holds; never a measured throughput, as the
//! copies share this host's cores.

mod common;

use common::hipshim;
use std::time::Duration;

/// (scheduler, procs, ids, run share, oversubscribed, time slices) of each table row.
fn rows(stdout: &str) -> Vec<(String, u32, String, f64, bool, u64)> {
    stdout
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() != 15 {
                return None;
            }
            Some((
                f[0].to_string(),
                f[1].parse().ok()?,
                f[2].to_string(),
                f[3].parse().ok()?,
                f[11] == "yes",
                f[13].parse().ok()?,
            ))
        })
        .collect()
}

#[test]
fn copies_on_one_service_are_time_sliced_and_their_traces_merge() {
    let dir = common::profile_dir().join(format!("cli-tests/processes-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let plot = dir.join("plot.svg");
    let mut cmd = hipshim([
        "bench",
        "processes",
        "--procs",
        "1,2",
        "--streams",
        "2",
        "--kernels",
        "3",
        "--work",
        "3000",
        "--sched",
        "max-procs=1+quantum-us=2000",
        "--queue-ids",
        "shared,per-process",
    ]);
    cmd.arg("--trace-dir").arg(&dir).arg("--plot").arg(&plot);
    // The run share and time slices of the scheduler on the host's clock (the bench's
    // programs inherit HSASIM_TIME; the virtual clock's turns are tested below).
    cmd.env("HSASIM_TIME", "host");
    // The first run builds the bench program (clang, two targets).
    let out = common::run(&mut cmd, Duration::from_secs(600));
    assert_eq!(out.code(), Some(0), "{}", out.report());
    let rows = rows(&out.stdout);
    assert_eq!(rows.len(), 4, "{}", out.report());
    for (sched, procs, ids, share, over, slices) in &rows {
        assert_eq!(sched, "max-procs=1+quantum-us=2000");
        assert_eq!(*over, *procs == 2, "{procs} {ids}\n{}", out.stdout);
        if *procs == 2 {
            // One process on the hardware at a time: each waited for its turns, whatever
            // its queue ids.
            assert!(*slices > 0 && *share < 0.95, "{}", out.stdout);
        } else {
            assert!(*slices == 0 && *share > 0.95, "{}", out.stdout);
        }
    }
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("polyline"), "{svg}");

    let run = dir.join("max-procs_1_quantum-us_2000-2-per-process");
    let merged = dir.join("merged.json");
    let mut cmd = hipshim(["trace", "merge"]);
    cmd.arg(run.join("proc0.json"))
        .arg(run.join("proc1.json"))
        .arg("--sched")
        .arg(run.join("sched.jsonl"))
        .arg("-o")
        .arg(&merged);
    let out = common::run(&mut cmd, Duration::from_secs(120));
    assert_eq!(out.code(), Some(0), "{}", out.report());
    let process_rows: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.contains("proc0.json") || l.contains("proc1.json"))
        .collect();
    assert_eq!(process_rows.len(), 2, "{}", out.stdout);
    for row in process_rows {
        // Pid, start, span, API calls, queues, kernels: each copy ran its 2 x 3 kernels and the
        // program's own (clock samples, warm-up).
        let kernels: u64 = row.split_whitespace().nth(5).unwrap().parse().unwrap();
        assert!(kernels >= 6, "{}", out.stdout);
    }
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    assert!(
        events.iter().any(|e| e["cat"] == "slot"),
        "no slot intervals"
    );
    // The second copy numbered its queues from 1000 and its slots say so.
    assert!(events
        .iter()
        .any(|e| e["cat"] == "slot" && e["args"]["queue_id"].as_u64() >= Some(1000)));
    let names: Vec<&str> = events
        .iter()
        .filter(|e| e["name"] == "process_name")
        .filter_map(|e| e["args"]["name"].as_str())
        .collect();
    assert!(
        names.len() >= 7,
        "two processes x 3 tracks and the slots: {names:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// On the virtual clock the copies take turns for the HQD slots on one virtual time line: with
/// one process mapped at a time, two copies each keep well under their alone throughput in
/// virtual time, and the table gives virtual makespans next to the host's times.
#[test]
fn copies_on_the_virtual_clock_take_turns_on_one_time_line() {
    let mut cmd = hipshim([
        "bench",
        "processes",
        "--time",
        "virtual",
        "--procs",
        "1,2",
        "--streams",
        "2",
        "--kernels",
        "6",
        "--work",
        "1000",
        "--sched",
        "max-procs=1+quantum-us=2000",
        "--queue-ids",
        "shared",
    ]);
    let out = common::run(&mut cmd, Duration::from_secs(600));
    assert_eq!(out.code(), Some(0), "{}", out.report());
    assert!(out.stdout.contains("virtual ms"), "{}", out.stdout);
    // (procs, kernels/s vs 1 process, virtual makespan ms)
    let rows: Vec<(u32, f64, f64)> = out
        .stdout
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 15 && f[0].starts_with("max-procs")).then_some(())?;
            Some((f[1].parse().ok()?, f[6].parse().ok()?, f[7].parse().ok()?))
        })
        .collect();
    assert_eq!(rows.len(), 2, "{}", out.stdout);
    let (alone, two) = (rows[0], rows[1]);
    // 2 streams x 6 kernels of 1 ms alone: 6 ms of virtual time.
    assert!((6.0..6.5).contains(&alone.2), "{}", out.stdout);
    assert!(two.1 < 0.8, "two copies took turns: {}", out.stdout);
}

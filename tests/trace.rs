//! `HIPSHIM_TRACE` and `HIPSHIM_STATS`: the programs in `c_tests/trace/` run on hsasim with
//! recording on; the trace must be valid Chrome/Perfetto JSON with the expected tracks,
//! slices and flow arrows, and the stats must count exactly the calls the program made.

mod common;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use amdhip64::trace::{read_trace, summarize, Direction, PacketKind, TraceEvent};
use common::ctest::{build, c_tests_dir, check_declared, Spec};
use serde_json::Value;

/// Builds `c_tests/trace/NAME.hip`.
fn program(name: &str) -> PathBuf {
    let source_path = c_tests_dir("trace").join(format!("{name}.hip"));
    let source = std::fs::read_to_string(&source_path).unwrap();
    let spec = Spec::parse(&source, &source_path);
    build(&source_path, &format!("trace_{name}"), &spec.targets)
}

/// A fresh scratch directory for one test's output files.
fn scratch(test: &str) -> PathBuf {
    let dir = common::target_dir()
        .join("trace-tests")
        .join(format!("{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `program` on hsasim (gfx942) with `env`; returns (success, stdout, stderr).
fn run(program: &Path, env: &[(&str, &str)]) -> (bool, String, String) {
    let mut cmd = Command::new(program);
    common::clear_loader_env(&mut cmd);
    common::use_simulator(&mut cmd, "gfx942");
    for var in ["HIPSHIM_TRACE", "HIPSHIM_STATS", "HIPSHIM_LOG"] {
        cmd.env_remove(var);
    }
    cmd.env("HIPSHIM_QUEUE_POLICY", "dedicated");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = common::run(&mut cmd, common::program_timeout());
    let ok = !out.timed_out && out.status.success();
    if !ok {
        eprintln!("{}", out.report(&cmd));
    }
    (ok, out.stdout(), out.stderr())
}

fn load_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("no trace at {}: {e}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("invalid JSON in {}: {e}", path.display()))
}

fn events(json: &Value) -> &Vec<Value> {
    json["traceEvents"].as_array().expect("traceEvents array")
}

/// Names of the tracks (thread_name metadata) of process `pid`, by tid.
fn track_names(json: &Value, pid: u64) -> HashMap<u64, String> {
    events(json)
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == pid)
        .map(|e| {
            (
                e["tid"].as_u64().unwrap(),
                e["args"]["name"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn process_names(json: &Value) -> HashMap<u64, String> {
    events(json)
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "process_name")
        .map(|e| {
            (
                e["pid"].as_u64().unwrap(),
                e["args"]["name"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn every_trace_program_has_a_test() {
    check_declared(
        "trace",
        &[
            ("known", "gfx942"),
            ("no_sync", "gfx942"),
            ("stats_bounded", "gfx942"),
        ],
    );
}

/// The known program: process and thread metadata, a track per queue and per copy engine,
/// a slice per kernel named after it with a positive duration, and flow arrows from the
/// API calls to their packets.
#[test]
fn trace_has_tracks_slices_and_flows_for_a_known_program() {
    let dir = scratch("tracks");
    let trace = dir.join("known.json");
    let (ok, stdout, _) = run(
        &program("known"),
        &[("HIPSHIM_TRACE", trace.to_str().unwrap())],
    );
    assert!(ok && stdout.contains("known: PASSED"), "{stdout}");
    let json = load_json(&trace);
    let all = events(&json);

    let processes = process_names(&json);
    assert!(processes[&1].starts_with("host threads"), "{processes:?}");
    assert_eq!(processes[&2], "HSA queues");
    assert_eq!(processes[&3], "copy engines");
    let hosts = track_names(&json, 1);
    assert!(
        hosts.values().any(|n| n.starts_with("main thread")),
        "{hosts:?}"
    );
    let queues = track_names(&json, 2);
    let queue_tracks: HashSet<&String> = queues.values().collect();
    assert_eq!(
        queue_tracks.len(),
        2,
        "dedicated policy, 2 streams: one track per queue {queues:?}"
    );
    assert!(queue_tracks.iter().all(|n| n.starts_with("queue ")));
    let engines = track_names(&json, 3);
    assert!(
        engines.values().any(|n| n.starts_with("copy engine ")),
        "{engines:?}"
    );

    // Every slice is a well-formed complete event.
    for e in all.iter().filter(|e| e["ph"] == "X") {
        assert!(
            e["ts"].as_f64().is_some() && e["dur"].as_f64().unwrap() >= 0.0,
            "{e}"
        );
        assert!(
            e["pid"].as_u64().is_some() && e["tid"].as_u64().is_some(),
            "{e}"
        );
    }
    let kernels: Vec<&Value> = all
        .iter()
        .filter(|e| e["cat"] == "packet" && e["args"]["type"] == "kernel_dispatch")
        .collect();
    let names: HashSet<&str> = kernels
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(kernels.len(), 3, "{names:?}");
    for k in ["fill_kernel", "scale_kernel", "add_kernel"] {
        assert!(names.iter().any(|n| n.contains(k)), "{k} in {names:?}");
    }
    for k in &kernels {
        assert_eq!(k["pid"], 2, "kernels are on queue tracks");
        assert_eq!(k["args"]["complete"], true, "{k}");
        assert!(k["dur"].as_f64().unwrap() > 0.0, "positive duration: {k}");
        assert_eq!(k["args"]["workgroup"][0], 256);
        assert_eq!(k["args"]["grid"][0], 1024);
        assert!(k["args"]["kernarg_bytes"].as_u64().unwrap() > 0);
    }
    // The fill kernel ran on a different queue than scale and add.
    let queue_of = |name: &str| {
        kernels
            .iter()
            .find(|e| e["name"].as_str().unwrap().contains(name))
            .unwrap()["args"]["queue"]
            .as_u64()
            .unwrap()
    };
    assert_ne!(queue_of("fill_kernel"), queue_of("scale_kernel"));
    assert_eq!(queue_of("scale_kernel"), queue_of("add_kernel"));

    let copies: Vec<&Value> = all.iter().filter(|e| e["cat"] == "copy").collect();
    assert_eq!(copies.len(), 2, "{copies:?}");
    for c in &copies {
        assert_eq!(c["pid"], 3);
        assert_eq!(c["args"]["bytes"], 4096);
        assert_eq!(
            c["args"]["staged"], false,
            "pinned memory is copied directly"
        );
        assert_eq!(c["args"]["complete"], true);
    }

    // Flow arrows: each kernel slice is the end of a flow that starts inside the
    // hipLaunchKernel slice that published it, on the same host thread.
    let starts: HashMap<u64, &Value> = all
        .iter()
        .filter(|e| e["ph"] == "s")
        .map(|e| (e["id"].as_u64().unwrap(), e))
        .collect();
    let apis: Vec<&Value> = all.iter().filter(|e| e["cat"] == "api").collect();
    for k in &kernels {
        let finish = all
            .iter()
            .find(|e| {
                e["ph"] == "f"
                    && e["pid"] == k["pid"]
                    && e["tid"] == k["tid"]
                    && e["ts"] == k["ts"]
                    && e["bp"] == "e"
            })
            .unwrap_or_else(|| panic!("no flow ends at {k}"));
        let start = starts[&finish["id"].as_u64().unwrap()];
        let ts = start["ts"].as_f64().unwrap();
        let inside = apis.iter().any(|a| {
            a["tid"] == start["tid"]
                && a["name"] == "hipLaunchKernel"
                && a["ts"].as_f64().unwrap() <= ts
                && ts <= a["ts"].as_f64().unwrap() + a["dur"].as_f64().unwrap()
        });
        assert!(
            inside,
            "flow start {start} is inside a hipLaunchKernel slice"
        );
    }
    // The extra packets tracing adds are named and explained.
    let extra = all
        .iter()
        .find(|e| e["args"]["type"] == "trace_barrier")
        .expect("trace barriers are in the trace");
    assert_eq!(extra["name"], "trace completion barrier");
    assert!(extra["args"]["note"].as_str().unwrap().contains("tracing"));
}

/// Exact counts for the known program's calls, from the trace file, and the same tables in
/// the `HIPSHIM_STATS` file written in the same run.
#[test]
fn stats_count_the_known_sequence_of_calls() {
    let dir = scratch("stats");
    let trace = dir.join("known.json");
    let stats_file = dir.join("stats.txt");
    let (ok, _, _) = run(
        &program("known"),
        &[
            ("HIPSHIM_TRACE", trace.to_str().unwrap()),
            ("HIPSHIM_STATS", stats_file.to_str().unwrap()),
        ],
    );
    assert!(ok);
    let events = read_trace(&trace).expect("read_trace");
    let stats = summarize(&events);
    let calls: HashMap<&str, u64> = stats
        .api
        .iter()
        .map(|r| (r.name.as_str(), r.calls))
        .collect();
    for (name, n) in [
        ("hipMalloc", 2),
        ("hipHostMalloc", 1),
        ("hipStreamCreate", 2),
        ("hipEventCreate", 1),
        ("hipLaunchKernel", 3),
        ("hipMemcpyAsync", 2),
        ("hipEventRecord", 1),
        ("hipStreamWaitEvent", 1),
        ("hipStreamSynchronize", 1),
        ("hipEventDestroy", 1),
        ("hipStreamDestroy", 2),
        ("hipFree", 2),
        ("hipHostFree", 1),
    ] {
        assert_eq!(calls.get(name), Some(&n), "{name} calls in {calls:?}");
    }
    assert!(stats.api.iter().all(|r| r.errors == 0), "{:?}", stats.api);
    assert!(
        stats
            .hsa
            .iter()
            .any(|r| r.name == "hsa_queue_create" && r.calls == 2),
        "two queues created through the HSA table: {:?}",
        stats.hsa
    );

    // Per queue: the fill kernel's queue has 1 kernel and the event's marker; the other has
    // 2 kernels. Every packet the program's streams published is followed by one trace
    // barrier, and each pair rang the doorbell once.
    assert_eq!(stats.queues.len(), 2, "{:?}", stats.queues);
    let mut kernels: Vec<u64> = stats.queues.iter().map(|q| q.kernels).collect();
    kernels.sort();
    assert_eq!(kernels, [1, 2]);
    for q in &stats.queues {
        assert_eq!(q.packets, 2 * q.trace_barriers, "{q:?}");
        assert_eq!(q.trace_barriers, q.kernels + q.barriers, "{q:?}");
        assert_eq!(q.doorbells, q.trace_barriers, "{q:?}");
        assert_eq!((q.incomplete, q.streams), (0, 1), "{q:?}");
        assert!(q.busy_ns > 0, "{q:?}");
        // The fill kernel's queue always has the event's marker; s2's waits (for the event
        // and for its copy) are published only if what they wait for has not finished yet.
        if q.kernels == 1 {
            assert!(q.barriers >= 1, "{q:?}");
        }
        assert_eq!(q.reason, "dedicated queue");
    }
    // One copy each way, 4 KiB, on the copy engines.
    let mut copies: Vec<(String, u64, u64)> = stats
        .engines
        .iter()
        .map(|e| (e.direction.clone(), e.copies, e.bytes))
        .collect();
    copies.sort();
    assert_eq!(
        copies,
        [("D2H".to_string(), 1, 4096), ("H2D".to_string(), 1, 4096)]
    );
    assert!(stats.waits.waits >= 1);
    let packets = events
        .iter()
        .filter(|e| matches!(e, TraceEvent::Packet(p) if p.kind == PacketKind::KernelDispatch))
        .count();
    assert_eq!(packets, 3);
    assert!(events
        .iter()
        .any(|e| matches!(e, TraceEvent::Copy(c) if c.direction == Direction::DeviceToHost)));

    // The stats file is the same tables, computed from the same events before writing.
    let written = std::fs::read_to_string(&stats_file).expect("HIPSHIM_STATS file");
    assert_eq!(written, stats.to_string());
    for header in [
        "HIP API calls",
        "HSA calls",
        "Queues",
        "Copy engines",
        "Signal waits",
    ] {
        assert!(written.contains(header), "{header} in\n{written}");
    }
}

/// A program that returns from main with work still queued: the exit hook writes a valid
/// trace (the unfinished work marked incomplete) and the stats.
#[test]
fn a_program_that_exits_without_synchronizing_still_writes_trace_and_stats() {
    let dir = scratch("nosync");
    let trace = dir.join("no_sync.json");
    let (ok, stdout, stderr) = run(
        &program("no_sync"),
        &[
            ("HIPSHIM_TRACE", trace.to_str().unwrap()),
            ("HIPSHIM_STATS", "1"),
        ],
    );
    assert!(ok, "{stdout}{stderr}");
    let json = load_json(&trace);
    let kernel = events(&json)
        .iter()
        .find(|e| e["cat"] == "packet" && e["args"]["type"] == "kernel_dispatch")
        .expect("the kernel's packet is in the trace");
    assert!(kernel["name"].as_str().unwrap().contains("spin_kernel"));
    assert!(kernel["args"]["complete"].is_boolean());
    let events = read_trace(&trace).unwrap();
    let stats = summarize(&events);
    assert_eq!(stats.queues.iter().map(|q| q.kernels).sum::<u64>(), 1);
    assert!(
        stderr.contains("HIP API calls") && stderr.contains("Queues"),
        "{stderr}"
    );
    assert!(stderr.contains("hipLaunchKernel"), "{stderr}");
}

/// `HIPSHIM_STATS` without a trace keeps no event per call: a program of 30,000 rounds of
/// a launch, two copies and a synchronisation keeps its resident memory within 2 MiB of what
/// it was after the first 6,000 (it checks that itself), and the stats still count every call
/// and packet.
#[test]
fn stats_alone_keep_memory_flat_over_a_long_run_and_count_every_call() {
    let dir = scratch("bounded");
    let stats_file = dir.join("stats.json");
    let (ok, stdout, stderr) = run(
        &program("stats_bounded"),
        &[
            ("HIPSHIM_STATS", stats_file.to_str().unwrap()),
            ("HIPSHIM_STATS_FORMAT", "json"),
        ],
    );
    assert!(
        ok && stdout.contains("stats_bounded: PASSED"),
        "{stdout}{stderr}"
    );
    let stats = load_json(&stats_file);
    let calls = |name: &str| {
        stats["api"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .map(|r| r["calls"].as_u64().unwrap())
    };
    const ROUNDS: u64 = 30_000;
    assert_eq!(calls("hipLaunchKernel"), Some(ROUNDS));
    assert_eq!(calls("hipMemcpyAsync"), Some(ROUNDS));
    assert_eq!(calls("hipMemcpy"), Some(ROUNDS + 1));
    assert_eq!(calls("hipStreamSynchronize"), Some(ROUNDS));
    let queues = stats["queues"].as_array().unwrap();
    let sum = |rows: &[Value], field: &str| -> u64 {
        rows.iter().map(|r| r[field].as_u64().unwrap()).sum()
    };
    assert_eq!(sum(queues, "kernels"), ROUNDS, "{queues:?}");
    assert_eq!(sum(queues, "incomplete"), 0, "{queues:?}");
    let engines = stats["engines"].as_array().unwrap();
    assert_eq!(sum(engines, "copies"), 2 * ROUNDS + 1, "{engines:?}");
    assert!(stats["waits"]["waits"].as_u64().unwrap() >= ROUNDS);
}

/// An unwritable trace path is reported with the variable's name and the program runs on.
#[test]
fn an_unwritable_trace_path_is_reported_and_the_program_succeeds() {
    let (ok, stdout, stderr) = run(
        &program("known"),
        &[("HIPSHIM_TRACE", "/nonexistent-dir/sub/trace.json")],
    );
    assert!(ok && stdout.contains("known: PASSED"), "{stderr}");
    assert!(
        stderr.contains("HIPSHIM_TRACE=/nonexistent-dir/sub/trace.json")
            && stderr.contains("tracing is disabled"),
        "{stderr}"
    );
}

/// Malformed values name the variable and the accepted forms; the defaults (off) are used.
#[test]
fn malformed_trace_and_stats_values_are_reported() {
    let (ok, _, stderr) = run(&program("known"), &[("HIPSHIM_STATS", "lots")]);
    assert!(ok, "{stderr}");
    assert!(
        stderr.contains("HIPSHIM_STATS=\"lots\"") && stderr.contains("a file path"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("HIP API calls"),
        "stats stay off: {stderr}"
    );
    let (ok, _, stderr) = run(&program("known"), &[("HIPSHIM_TRACE", "1")]);
    assert!(ok, "{stderr}");
    assert!(
        stderr.contains("HIPSHIM_TRACE=\"1\"") && stderr.contains("a file path"),
        "{stderr}"
    );
}

/// With `HIPSHIM_LOG=trace` the structured events of every kind are printed under their
/// `hipshim::` targets.
#[test]
fn log_shows_every_kind_of_event_under_hipshim_targets() {
    let (ok, _, stderr) = run(&program("known"), &[("HIPSHIM_LOG", "hipshim=trace")]);
    assert!(ok, "{stderr}");
    for needle in [
        "hipshim::api",
        "api=\"hipLaunchKernel\"",
        "dur_ns=",
        "hipshim::packet",
        "type=\"kernel_dispatch\"",
        "type=\"barrier_and\"",
        "hipshim::doorbell",
        "hipshim::wait",
        "spin_us=",
        "hipshim::copy",
        "direction=\"H2D\"",
        "hipshim::policy",
        "queue created: dedicated queue",
        "stream assigned to queue",
        "hipshim::launch",
    ] {
        assert!(
            stderr.contains(needle),
            "{needle} missing from the log:\n{stderr}"
        );
    }
}

//! `hipshim bench processes`: several processes on one simulated GPU, the multi-process queue
//! experiment without the hardware.
//!
//! For each scheduler setting (`--sched`), each process count (`--procs`) and each way of
//! numbering queues (`--queue-ids`), it starts a device service (`hipshim device start`),
//! runs that many copies of the policy experiment's program at once against it
//! (`HSASIM_DEVICE_SERVICE`), each with K streams on dedicated queues, lines them up so that
//! their measured kernels run at the same time (`--go`), and reads the scheduler's counters.
//!
//! **The kernels and the figures.** Each kernel spins until a fixed span of device wall-clock
//! time has passed (`wall_clock64`), as in `bench policies`. The scheduler model unmaps a
//! queue only between packets (see `hsasim_sched::model`), so a kernel is never descheduled
//! while it runs and keeps its device length; what the scheduler changes is when a queue's
//! next kernel may start. (On a GPU the hardware preempts mid-kernel: a wall-clock kernel
//! would be stretched by the time it spent unmapped instead, and lose the same throughput.)
//! Two figures per process, each relative to one process under the same setting:
//! - **run share**, from the scheduler's ledger over the measured phase: of the time its
//!   queues had a packet ready, the part they held a slot and ran it. With every mapped queue
//!   running as if alone (the model gives mapped queues no contention), this is the throughput
//!   the scheduler leaves the process. It does not depend on the host.
//! - **kernels/s per process** over its own device makespan: what the copies measured. The
//!   copies' kernels spin on the host's cores, so with more copies than cores this also falls
//!   for reasons that have nothing to do with the GPU: the `unlimited` setting (more slots and
//!   processes per quantum than anyone uses) shows how much.
//!
//! Kernels of fixed work instead of fixed time would make the host's speed part of every
//! figure; fixed time keeps the device length independent of it.
//!
//! **On the virtual clock** (`--time virtual`) the copies' kernels, makespans and kernels/s
//! are on the modelled GPU's clock, and the processes take turns for the HQD slots on one
//! virtual time line (`hsasim::virtual_slots`): the run share and the scheduler's counters,
//! which come from the device service's host-time scheduler, then say nothing about the
//! device (that scheduler gates no packet under virtual time) and are printed as `-`. Each row
//! also gives the device makespan and the host's time per process, so the two clocks stand
//! side by side.

use super::measure::{metrics, parse_output, RunOutput};
use crate::args::LoadArgs;
use crate::device::{NameArg, SchedArgs, StartArgs};
use crate::format::{FormatArg, OutputFormat};
use amdhip64::trace::schema;
use hsasim_sched::{Counters, Device};
use serde_json::json;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

const SOURCE: &str = "c_tests/bench/policy_bench.hip";

#[derive(clap::Args, Debug)]
pub struct ProcessesArgs {
    /// Process counts to run (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "1,2,6",
          value_parser = clap::value_parser!(u32).range(1..=32))]
    procs: Vec<u32>,
    /// Streams per process, each on its own queue (the `dedicated` policy).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=64))]
    streams: u32,
    /// Kernels per stream.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=10000))]
    kernels: u32,
    /// Length of each kernel in microseconds of device time.
    #[arg(long, value_name = "US", default_value_t = 2000,
          value_parser = clap::value_parser!(u32).range(1..=10_000_000))]
    work: u32,
    /// Queue numbering: `shared` (every process numbers its queues from 0, as KFD does per
    /// process) or `per-process` (process k from 1000·k: distinct ids everywhere).
    #[arg(long, value_delimiter = ',', default_value = "shared,per-process",
          value_parser = ["shared", "per-process"])]
    queue_ids: Vec<String>,
    /// Scheduler settings to compare, each `default`, `unlimited` or KEY=VALUE[+KEY=VALUE...]
    /// with keys slots, pipes, max-procs, quantum-us, map-us, unmap-us, update-us,
    /// serial-updates, skip-idle, cu-budget (the rest as `hipshim device start`'s defaults).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "unlimited,default,max-procs=4,slots=16,max-procs=4+quantum-us=2000"
    )]
    sched: Vec<String>,
    /// The experiment program (default: built from c_tests/bench/policy_bench.hip).
    #[arg(long, value_name = "PATH")]
    program: Option<PathBuf>,
    /// Also write an SVG chart of relative throughput per process.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Keep each configuration's traces (one per process, HIPSHIM_TRACE) and the scheduler's
    /// event log in DIR/<setting>-<procs>-<ids>/, ready for `hipshim trace merge`.
    #[arg(long, value_name = "DIR")]
    trace_dir: Option<PathBuf>,
    #[command(flatten)]
    load: LoadArgs,
    #[command(flatten)]
    format: FormatArg,
}

/// A `--sched` item as device-service settings.
pub fn parse_sched(spec: &str) -> Result<SchedArgs, String> {
    let mut a = SchedArgs::default();
    match spec.trim() {
        "default" => return Ok(a),
        "unlimited" => {
            a.slots = Some(256);
            a.max_procs = Some(64);
            return Ok(a);
        }
        _ => {}
    }
    for item in spec.split('+') {
        let (key, value) = item
            .split_once('=')
            .ok_or_else(|| format!("--sched {spec}: {item} is not KEY=VALUE"))?;
        let n: u64 = value
            .trim()
            .parse()
            .map_err(|_| format!("--sched {spec}: {value} is not a number"))?;
        let small = || u32::try_from(n).map_err(|_| format!("--sched {spec}: {n} is too large"));
        match key.trim() {
            "slots" => a.slots = Some(small()?),
            "pipes" => a.pipes = Some(small()?),
            "max-procs" => a.max_procs = Some(small()?),
            "quantum-us" => a.quantum_us = Some(n),
            "map-us" => a.map_us = Some(n),
            "unmap-us" => a.unmap_us = Some(n),
            "update-us" => a.update_us = Some(n),
            "serial-updates" => a.serial_updates = Some(small()?.min(1)),
            "skip-idle" => a.skip_idle = Some(small()?.min(1)),
            "cu-budget" => a.cu_budget = Some(small()?),
            other => return Err(format!("--sched {spec}: unknown key {other}")),
        }
    }
    Ok(a)
}

/// One configuration's result.
#[derive(Clone, Debug, Default)]
pub struct Row {
    pub sched: String,
    pub procs: u32,
    pub ids: String,
    /// Why the configuration has no figures (the rest of the row is then empty).
    pub failure: Option<String>,
    /// Kernels per second of each process's own makespan.
    pub per_process: Vec<f64>,
    /// Each process's share of its queues' time with work that they held a slot for
    /// (`hsasim_sched::Ledger::run_share`), over the measured phase.
    pub run_share: Vec<f64>,
    pub counters: Counters,
    pub queues: usize,
    pub oversubscribed: bool,
    /// Each process's makespan on the device's clock (the virtual one under `--time virtual`).
    pub makespan_s: Vec<f64>,
    /// Each process's host time for the whole run.
    pub host_s: Vec<f64>,
    /// The copies ran on the virtual clock.
    pub virtual_time: bool,
}

impl Row {
    pub fn mean(&self) -> f64 {
        self.per_process.iter().sum::<f64>() / self.per_process.len().max(1) as f64
    }

    pub fn mean_share(&self) -> f64 {
        self.run_share.iter().sum::<f64>() / self.run_share.len().max(1) as f64
    }

    pub fn mean_makespan_s(&self) -> f64 {
        self.makespan_s.iter().sum::<f64>() / self.makespan_s.len().max(1) as f64
    }

    pub fn mean_host_s(&self) -> f64 {
        self.host_s.iter().sum::<f64>() / self.host_s.len().max(1) as f64
    }
}

pub fn processes(args: &ProcessesArgs) -> Result<i32, String> {
    let program = match &args.program {
        Some(path) => path.clone(),
        None => super::bundled_program(SOURCE, super::Compiler::Ours)?,
    };
    let specs: Vec<(String, SchedArgs)> = args
        .sched
        .iter()
        .map(|s| parse_sched(s).map(|a| (s.trim().to_string(), a)))
        .collect::<Result<_, _>>()?;
    let mut procs = args.procs.clone();
    if !procs.contains(&1) {
        procs.insert(0, 1);
    }
    procs.sort_unstable();
    procs.dedup();
    let mut rows = Vec::new();
    for (label, sched) in &specs {
        for &n in &procs {
            for ids in &args.queue_ids {
                eprint!("hipshim bench: {label:<28} {n:>2} processes, {ids:<11} ids ...");
                // A configuration that fails costs its own row only.
                let row = match run_config(args, &program, label, sched, n, ids) {
                    Ok(row) => {
                        eprintln!(
                            " {:.1} kernels/s per process, {} time slices",
                            row.mean(),
                            row.counters.time_slices
                        );
                        row
                    }
                    Err(reason) => {
                        eprintln!(" failed: {reason}");
                        Row {
                            sched: label.clone(),
                            procs: n,
                            ids: ids.clone(),
                            failure: Some(reason),
                            ..Row::default()
                        }
                    }
                };
                rows.push(row);
            }
        }
    }
    print!("{}", render(args, &rows, args.format.format));
    if let Some(path) = &args.plot {
        std::fs::write(path, svg(&rows))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        eprintln!("hipshim bench: plot written to {}", path.display());
    }
    let failed = rows.iter().filter(|r| r.failure.is_some()).count();
    Ok(super::exit_code(failed, rows.len()))
}

const CSV_COLUMNS: [&str; 18] = [
    "scheduler",
    "processes",
    "queue_ids",
    "status",
    "clock",
    "run_share",
    "run_share_vs_1p",
    "kernels_per_s_per_process",
    "kernels_per_s_vs_1p",
    "makespan_ms",
    "host_ms",
    "queues",
    "max_slots_in_use",
    "oversubscribed",
    "runlist_updates",
    "time_slices",
    "unmaps",
    "reason",
];

/// The table in `format` (one model: these rows and the run's sizes).
pub fn render(args: &ProcessesArgs, rows: &[Row], format: OutputFormat) -> String {
    match format {
        OutputFormat::Text => format_table(args, rows),
        OutputFormat::Json => schema::document(
            "bench-processes",
            json!({
                "streams_per_process": args.streams,
                "kernels_per_stream": args.kernels,
                "work_us": args.work,
                "rows": rows.iter().map(|r| row_json(rows, r)).collect::<Vec<_>>(),
            }),
        ),
        OutputFormat::Csv => {
            schema::csv_of_json_rows(&CSV_COLUMNS, rows.iter().map(|r| row_json(rows, r)))
        }
    }
}

/// A ratio to the one-process row, `null` where there is none (JSON has no NaN).
fn ratio(value: f64, base: Option<f64>) -> serde_json::Value {
    match base {
        Some(b) if b != 0.0 && (value / b).is_finite() => json!(value / b),
        _ => serde_json::Value::Null,
    }
}

fn row_json(rows: &[Row], r: &Row) -> serde_json::Value {
    let mut v = json!({
        "scheduler": r.sched,
        "processes": r.procs,
        "queue_ids": r.ids,
    });
    if let Some(reason) = &r.failure {
        v["status"] = json!("failed");
        v["reason"] = json!(reason);
        return v;
    }
    let b = baseline(rows, r);
    v["status"] = json!("ok");
    v["clock"] = json!(if r.virtual_time { "virtual" } else { "host" });
    if !r.virtual_time {
        v["run_share"] = json!(r.mean_share());
        v["run_share_vs_1p"] = ratio(r.mean_share(), b.map(Row::mean_share));
        v["per_process_run_share"] = json!(r.run_share);
    }
    v["kernels_per_s_per_process"] = json!(r.mean());
    v["kernels_per_s_vs_1p"] = ratio(r.mean(), b.map(Row::mean));
    v["makespan_ms"] = json!(r.mean_makespan_s() * 1e3);
    v["host_ms"] = json!(r.mean_host_s() * 1e3);
    v["per_process_kernels_per_s"] = json!(r.per_process);
    v["per_process_makespan_ms"] = json!(r.makespan_s.iter().map(|s| s * 1e3).collect::<Vec<_>>());
    v["queues"] = json!(r.queues);
    v["max_slots_in_use"] = json!(r.counters.max_slots_in_use);
    v["oversubscribed"] = json!(r.oversubscribed);
    v["runlist_updates"] = json!(r.counters.runlist_updates);
    v["time_slices"] = json!(r.counters.time_slices);
    v["unmaps"] = json!(r.counters.unmaps);
    v
}

fn run_config(
    args: &ProcessesArgs,
    program: &std::path::Path,
    label: &str,
    sched: &SchedArgs,
    n: u32,
    ids: &str,
) -> Result<Row, String> {
    let name = format!("bench-{}-{}", std::process::id(), rows_serial());
    let work_dir = std::env::temp_dir().join(format!("hipshim-{name}"));
    std::fs::create_dir_all(&work_dir)
        .map_err(|e| format!("cannot create {}: {e}", work_dir.display()))?;
    let keep = args
        .trace_dir
        .as_ref()
        .map(|d| d.join(format!("{}-{n}-{ids}", label.replace(['=', '+', '/'], "_"))));
    if let Some(dir) = &keep {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let start = StartArgs {
        name: NameArg { name: name.clone() },
        sched: sched.clone(),
        log: keep.as_ref().map(|d| d.join("sched.jsonl")),
        memory: hsasim_sched::memory::DEFAULT_SIZE,
    };
    crate::device::start(&start)?;
    let result = run_copies(args, program, &name, &work_dir, keep.as_deref(), n, ids);
    let device = Device::open(&name);
    let _ = crate::device::stop(&start.name);
    let _ = std::fs::remove_dir_all(&work_dir);
    let (runs, run_share, counters, queues, oversubscribed) = {
        let (runs, pids) = result?;
        let device = device?;
        let t = device.lock();
        let share = pids
            .iter()
            .map(|&pid| t.ledger(pid).map_or(1.0, |l| l.run_share()))
            .collect();
        (
            runs,
            share,
            t.counters,
            t.counters.queues_registered as usize,
            t.counters.oversubscribed_updates > 0,
        )
    };
    Ok(Row {
        sched: label.to_string(),
        procs: n,
        ids: ids.to_string(),
        failure: None,
        per_process: runs.iter().map(|r| metrics(r).throughput).collect(),
        run_share,
        counters,
        queues,
        oversubscribed,
        makespan_s: runs.iter().map(|r| metrics(r).makespan_s).collect(),
        host_s: runs.iter().map(|r| metrics(r).host_s).collect(),
        virtual_time: args.load.launch()?.time.as_deref() == Some("virtual"),
    })
}

fn rows_serial() -> u32 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// Runs `n` copies at once, lined up on a go file; returns their outputs and pids.
fn run_copies(
    args: &ProcessesArgs,
    program: &std::path::Path,
    device: &str,
    work_dir: &std::path::Path,
    keep: Option<&std::path::Path>,
    n: u32,
    ids: &str,
) -> Result<(Vec<RunOutput>, Vec<u32>), String> {
    let go = work_dir.join("go");
    let base = args.load.launch()?;
    let mut children = Vec::new();
    for k in 0..n {
        let launch = crate::run::Launch {
            policy: Some("dedicated".into()),
            trace: keep.map(|d| d.join(format!("proc{k}.json"))),
            ..base.clone()
        };
        let mut bench_args: Vec<std::ffi::OsString> = vec![
            "--streams".into(),
            args.streams.to_string().into(),
            "--kernels".into(),
            args.kernels.to_string().into(),
            "--work".into(),
            args.work.to_string().into(),
            "--go".into(),
            go.clone().into(),
        ];
        if base.time.as_deref() == Some("virtual") {
            // As in `bench policies`: the virtual clock's rate is the reported one.
            bench_args.push("--attr-clock".into());
        }
        let mut cmd = launch.command(program.as_os_str(), &bench_args);
        cmd.env("HSASIM_DEVICE_SERVICE", device)
            // Several queues running at once is the point: the threaded model.
            .env("HSASIM_THREADS", "1")
            // Each process's interpreter on one thread: the copies share the host's cores.
            .env("HSASIM_WORKERS", "1")
            .env(
                "HSASIM_QUEUE_ID_BASE",
                if ids == "per-process" {
                    (1000 * u64::from(k)).to_string()
                } else {
                    "0".into()
                },
            )
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        children.push(
            cmd.spawn()
                .map_err(|e| format!("cannot start {}: {e}", program.display()))?,
        );
    }
    // Wait until every copy has its queues, then let them all go at once.
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let ready = std::fs::read_dir(work_dir)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .filter(|e| e.file_name().to_string_lossy().starts_with("go.ready."))
                    .count()
            })
            .unwrap_or(0);
        if ready >= n as usize {
            break;
        }
        let mut exited = None;
        for c in children.iter_mut() {
            if let Ok(Some(status)) = c.try_wait() {
                exited = Some(status);
            }
        }
        if let Some(status) = exited {
            for mut c in children {
                let _ = c.kill();
                let _ = c.wait();
            }
            return Err(format!("a copy exited before the start ({status})"));
        }
        if Instant::now() > deadline {
            for mut c in children {
                let _ = c.kill();
                let _ = c.wait();
            }
            return Err("the copies did not get ready in 300 s".into());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    // The measured phase starts: what the processes' start-up (their runlist updates) cost
    // them stays out of the ledger.
    if let Ok(d) = Device::open(device) {
        d.lock().reset_ledger();
    }
    std::fs::write(&go, b"").map_err(|e| format!("cannot create {}: {e}", go.display()))?;
    let pids: Vec<u32> = children.iter().map(|c| c.id()).collect();
    let mut runs = Vec::new();
    for c in children {
        let out = c
            .wait_with_output()
            .map_err(|e| format!("waiting for a copy: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "a copy exited with {}:\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim_end()
            ));
        }
        runs.push(
            parse_output(&String::from_utf8_lossy(&out.stdout))
                .map_err(|e| format!("unexpected output: {e}"))?,
        );
    }
    Ok((runs, pids))
}

fn baseline<'a>(rows: &'a [Row], r: &Row) -> Option<&'a Row> {
    rows.iter()
        .find(|b| b.procs == 1 && b.sched == r.sched && b.ids == r.ids && b.failure.is_none())
}

pub fn format_table(args: &ProcessesArgs, rows: &[Row]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} streams per process x {} kernels x {} us; per process, relative to 1 process under the same setting:",
        args.streams, args.kernels, args.work
    );
    let _ = writeln!(
        out,
        "  run share: of its queues' time with a packet ready, the part they held a slot (the scheduler's effect);"
    );
    let virtual_time = rows.iter().any(|r| r.virtual_time);
    if virtual_time {
        let _ = writeln!(
            out,
            "  kernels/s/p and makespan: on the modelled GPU's virtual clock, where the processes take turns for the HQD slots;"
        );
        let _ = writeln!(
            out,
            "  host ms: the host's time per process; run share and scheduler counters (host time, gating nothing): -"
        );
    } else {
        let _ = writeln!(
            out,
            "  kernels/s/p: kernels per second of its device makespan (also the host's cores, shared by all copies)"
        );
    }
    let _ = writeln!(
        out,
        "{:<28} {:>5} {:<11} {:>9} {:>9} {:>11} {:>7} {:>11} {:>9} {:>6} {:>6} {:>6} {:>7} {:>7} {:>7}",
        "scheduler",
        "procs",
        "queue ids",
        "run share",
        "vs 1p",
        "kernels/s/p",
        "vs 1p",
        if virtual_time { "virtual ms" } else { "makespan ms" },
        "host ms",
        "queues",
        "slots",
        "over",
        "updates",
        "slices",
        "unmaps"
    );
    for r in rows {
        if let Some(reason) = &r.failure {
            let _ = writeln!(
                out,
                "{:<28} {:>5} {:<11} FAILED: {}",
                r.sched,
                r.procs,
                r.ids,
                super::short_reason(reason)
            );
            continue;
        }
        let b = baseline(rows, r);
        let rel = b.map_or(f64::NAN, |b| r.mean() / b.mean());
        let rel_share = b.map_or(f64::NAN, |b| r.mean_share() / b.mean_share());
        // Under virtual time the host-time scheduler's figures describe no device.
        let host_only = |v: String| if r.virtual_time { "-".to_string() } else { v };
        let _ = writeln!(
            out,
            "{:<28} {:>5} {:<11} {:>9} {:>9} {:>11.1} {:>7.2} {:>11.3} {:>9.1} {:>6} {:>6} {:>6} {:>7} {:>7} {:>7}",
            r.sched,
            r.procs,
            r.ids,
            host_only(format!("{:.3}", r.mean_share())),
            host_only(format!("{rel_share:.2}")),
            r.mean(),
            rel,
            r.mean_makespan_s() * 1e3,
            r.mean_host_s() * 1e3,
            r.queues,
            host_only(r.counters.max_slots_in_use.to_string()),
            host_only((if r.oversubscribed { "yes" } else { "no" }).to_string()),
            host_only(r.counters.runlist_updates.to_string()),
            host_only(r.counters.time_slices.to_string()),
            host_only(r.counters.unmaps.to_string())
        );
    }
    out
}

/// Relative run share (the scheduler's throughput per process) against process count, one line
/// per setting and numbering.
pub fn svg(rows: &[Row]) -> String {
    let (w, h, left, top, plot_w, plot_h) = (900.0, 420.0, 60.0, 40.0, 440.0, 320.0);
    let max_procs = rows.iter().map(|r| r.procs).max().unwrap_or(1).max(2) as f64;
    let x = |p: f64| left + plot_w * (p - 1.0) / (max_procs - 1.0);
    let y = |v: f64| top + plot_h * (1.0 - (v / 1.2).clamp(0.0, 1.0));
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{left}" y="20" font-size="14">Run share per process vs one process (modelled throughput)</text>"#
    );
    for v in [0.0, 0.2, 0.4, 0.6, 0.8, 1.0, 1.2] {
        let yv = y(v);
        let _ = writeln!(
            s,
            r##"<line x1="{left}" x2="{:.1}" y1="{yv:.1}" y2="{yv:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{v:.1}</text>"##,
            left + plot_w,
            left - 6.0,
            yv + 4.0,
        );
    }
    let mut procs: Vec<u32> = rows.iter().map(|r| r.procs).collect();
    procs.sort_unstable();
    procs.dedup();
    for p in &procs {
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{p}</text>"#,
            x(*p as f64),
            top + plot_h + 18.0
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{}" text-anchor="middle">processes</text>"#,
        left + plot_w / 2.0,
        top + plot_h + 36.0
    );
    const COLOURS: [&str; 8] = [
        "#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#bbbbbb", "#000000",
    ];
    let mut series: Vec<(String, String)> = Vec::new();
    for r in rows {
        let key = (r.sched.clone(), r.ids.clone());
        if !series.contains(&key) {
            series.push(key);
        }
    }
    for (i, (sched, ids)) in series.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let dash = if ids == "per-process" { "6,3" } else { "none" };
        let points: Vec<String> = rows
            .iter()
            .filter(|r| &r.sched == sched && &r.ids == ids && r.failure.is_none())
            .filter_map(|r| {
                let b = baseline(rows, r)?;
                Some(format!(
                    "{:.1},{:.1}",
                    x(r.procs as f64),
                    y(r.mean() / b.mean())
                ))
            })
            .collect();
        let _ = writeln!(
            s,
            r#"<polyline fill="none" stroke="{colour}" stroke-width="2" stroke-dasharray="{dash}" points="{}"/>"#,
            points.join(" ")
        );
        let ly = top + 14.0 + i as f64 * 18.0;
        let _ = writeln!(
            s,
            r#"<line x1="{}" x2="{}" y1="{ly:.1}" y2="{ly:.1}" stroke="{colour}" stroke-width="2" stroke-dasharray="{dash}"/><text x="{}" y="{:.1}">{} ({ids})</text>"#,
            left + plot_w + 12.0,
            left + plot_w + 36.0,
            left + plot_w + 42.0,
            ly + 4.0,
            sched.replace('&', "&amp;").replace('<', "&lt;")
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sched_specs_parse() {
        let a = parse_sched("max-procs=4+quantum-us=2000").unwrap();
        assert_eq!(a.max_procs, Some(4));
        assert_eq!(a.quantum_us, Some(2000));
        assert_eq!(parse_sched("unlimited").unwrap().slots, Some(256));
        assert!(parse_sched("slots").unwrap_err().contains("KEY=VALUE"));
        assert!(parse_sched("cows=3").unwrap_err().contains("unknown key"));
    }

    #[test]
    fn a_failed_configuration_is_marked_and_the_others_still_print() {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            args: ProcessesArgs,
        }
        let args = Cli::parse_from(["x", "--streams", "2"]).args;
        let ok = |procs, per: f64| Row {
            sched: "default".into(),
            procs,
            ids: "shared".into(),
            per_process: vec![per; procs as usize],
            run_share: vec![1.0 / f64::from(procs); procs as usize],
            ..Row::default()
        };
        let rows = vec![
            ok(1, 100.0),
            Row {
                sched: "default".into(),
                procs: 2,
                ids: "shared".into(),
                failure: Some("a copy exited with 1:\nout of memory".into()),
                ..Row::default()
            },
            ok(6, 50.0),
        ];
        let text = render(&args, &rows, OutputFormat::Text);
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[5].contains("FAILED: a copy exited with 1: out of memory"),
            "{text}"
        );
        assert!(
            lines[6].starts_with("default") && lines[6].contains(" 0.50 "),
            "{text}"
        );

        let json: serde_json::Value =
            serde_json::from_str(&render(&args, &rows, OutputFormat::Json)).unwrap();
        assert_eq!(json["schema"], "hipshim.bench-processes");
        assert_eq!(json["streams_per_process"], 2);
        assert_eq!(json["rows"][1]["status"], "failed");
        assert_eq!(json["rows"][2]["kernels_per_s_vs_1p"], 0.5);

        let csv = render(&args, &rows, OutputFormat::Csv);
        assert_eq!(csv.lines().count(), 4, "{csv}");
        assert!(
            csv.lines()
                .nth(2)
                .unwrap()
                .starts_with("default,2,shared,failed,"),
            "{csv}"
        );
    }

    #[test]
    fn the_plot_has_one_line_per_setting_and_numbering() {
        let row = |sched: &str, procs, ids: &str, share| Row {
            sched: sched.into(),
            procs,
            ids: ids.into(),
            failure: None,
            per_process: vec![1.0],
            run_share: vec![share],
            counters: Counters::default(),
            queues: 0,
            oversubscribed: false,
            ..Row::default()
        };
        let rows = [
            row("a", 1, "shared", 1.0),
            row("a", 1, "per-process", 1.0),
            row("a", 6, "shared", 0.6),
            row("a", 6, "per-process", 0.6),
        ];
        let svg = svg(&rows);
        assert_eq!(svg.matches("<polyline").count(), 2, "{svg}");
    }
}

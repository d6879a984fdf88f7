//! `hipshim bench policies`: the stream→queue policy experiment.
//!
//! The experiment program (`c_tests/bench/policy_bench.hip`) launches K streams × M kernels
//! that each spin for a fixed span of device wall-clock time and record their own start
//! and end (`wall_clock64()`). It runs once per policy through the same [`Launch`] as
//! `hipshim run`, so nothing here depends on hsasim: on a GPU the same timestamps come from
//! the hardware's constant-rate clock.
//!
//! What the table reports, from those device timestamps:
//! - **makespan**: first kernel start to last kernel end;
//! - **kernels/s**: K·M / makespan;
//! - **overlap**: Σ over streams of the time that stream had a kernel running, divided by
//!   the makespan — the average number of streams busy at once. 1.0 means the streams were
//!   serialized (one at a time); K means all streams ran side by side the whole time;
//! - **peak**: the most streams ever running at the same instant;
//! - **vs serial**: makespan / (K·M·work): 1.0 when everything ran one after another,
//!   1/K when the streams ran fully in parallel;
//! - **queues** (with `--trace-dir`): how many HSA queues the kernels were dispatched on,
//!   read from each run's trace with the runtime's trace reader.

use super::plot;
use crate::run::Launch;
use crate::LoadArgs;
use amdhip64::trace::{PacketKind, TraceEvent};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Source of the experiment program, relative to the repository root.
const SOURCE: &str = "c_tests/bench/policy_bench.hip";

pub const DEFAULT_POLICIES: &str =
    "single,pool:1,pool:2,pool:2:rr,pool:4,pool:4:rr,pool:8,pool:8:rr,dedicated";

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Streams (K).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256))]
    streams: u32,
    /// Kernels per stream (M).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=10000))]
    kernels: u32,
    /// Length of each kernel in microseconds of device time.
    #[arg(long, value_name = "US", default_value_t = 10000,
          value_parser = clap::value_parser!(u32).range(1..=10_000_000))]
    work: u32,
    /// Comma-separated policies to compare.
    #[arg(long, value_delimiter = ',', default_value = DEFAULT_POLICIES,
          value_parser = crate::parse_policy)]
    policies: Vec<String>,
    /// The experiment program (default: built from c_tests/bench/policy_bench.hip into
    /// <profile>/hipshim-bench/ on first use, when hipshim runs from its cargo build).
    #[arg(long, value_name = "PATH")]
    program: Option<PathBuf>,
    /// Also write an SVG bar chart of makespan per policy.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Replace every other stream after the first ones got their queues (streams that come
    /// and go): where least-loaded and round-robin pools differ.
    #[arg(long)]
    churn: bool,
    /// Write a trace per policy into DIR (DIR/<policy>.json, via HIPSHIM_TRACE).
    #[arg(long, value_name = "DIR")]
    trace_dir: Option<PathBuf>,
    #[command(flatten)]
    load: LoadArgs,
}

/// One kernel's device interval, in ticks of the measured clock.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KernelTime {
    pub stream: u32,
    pub start: u64,
    pub end: u64,
}

/// What one run of the program printed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunOutput {
    pub streams: u32,
    pub kernels: u32,
    pub work_us: u64,
    pub churn: bool,
    pub clock_hz: f64,
    pub clock_attr_khz: i64,
    pub host_total_ns: u64,
    pub times: Vec<KernelTime>,
}

/// The measured figures of one policy.
#[derive(Clone, Debug, PartialEq)]
pub struct Metrics {
    pub kernels: usize,
    pub makespan_s: f64,
    pub throughput: f64,
    pub overlap: f64,
    pub peak: usize,
    pub vs_serial: f64,
    pub host_s: f64,
    /// Distinct HSA queues that ran kernels, when a trace was written.
    pub queues: Option<usize>,
}

pub fn parse_output(text: &str) -> Result<RunOutput, String> {
    let mut out = RunOutput::default();
    let mut saw_config = false;
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let Some(kind) = words.next() else { continue };
        let fields: Vec<(&str, &str)> = words.filter_map(|w| w.split_once('=')).collect();
        let get = |key: &str| -> Result<&str, String> {
            fields
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| *v)
                .ok_or_else(|| format!("line {line:?} has no {key}="))
        };
        let num = |key: &str| -> Result<u64, String> {
            get(key)?
                .parse()
                .map_err(|_| format!("line {line:?}: {key} is not a number"))
        };
        match kind {
            "config" => {
                saw_config = true;
                out.streams = num("streams")? as u32;
                out.kernels = num("kernels")? as u32;
                out.work_us = num("work_us")?;
                out.churn = get("churn").is_ok_and(|v| v == "1");
                out.clock_hz = get("clock_hz")?
                    .parse()
                    .map_err(|_| format!("line {line:?}: bad clock_hz"))?;
                out.clock_attr_khz = get("clock_attr_khz")?.parse().unwrap_or(0);
            }
            "host" => out.host_total_ns = num("total_ns")?,
            "kernel" => out.times.push(KernelTime {
                stream: num("stream")? as u32,
                start: num("start")?,
                end: num("end")?,
            }),
            _ => {}
        }
    }
    if !saw_config || out.clock_hz <= 0.0 {
        return Err("no `config` line with a clock rate".into());
    }
    let expected = out.streams as usize * out.kernels as usize;
    if out.times.len() != expected {
        return Err(format!(
            "{} kernel records, expected {expected}",
            out.times.len()
        ));
    }
    Ok(out)
}

/// Merges intervals into disjoint ones, sorted.
fn union(mut intervals: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    intervals.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::new();
    for (start, end) in intervals {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

pub fn metrics(run: &RunOutput) -> Metrics {
    let times = &run.times;
    let first = times.iter().map(|t| t.start).min().unwrap_or(0);
    let last = times.iter().map(|t| t.end).max().unwrap_or(0);
    let ticks_to_s = |ticks: u64| ticks as f64 / run.clock_hz;
    let makespan_ticks = last.saturating_sub(first);

    // Per stream: when it had a kernel running.
    let mut streams: Vec<u32> = times.iter().map(|t| t.stream).collect();
    streams.sort_unstable();
    streams.dedup();
    let busy: Vec<Vec<(u64, u64)>> = streams
        .iter()
        .map(|&s| {
            union(
                times
                    .iter()
                    .filter(|t| t.stream == s)
                    .map(|t| (t.start, t.end))
                    .collect(),
            )
        })
        .collect();
    let busy_ticks: u64 = busy.iter().flatten().map(|(s, e)| e - s).sum();

    // Peak: sweep over the streams' busy intervals (an end before a start at the same
    // instant: touching intervals do not overlap).
    let mut edges: Vec<(u64, i32)> = busy
        .iter()
        .flatten()
        .flat_map(|&(s, e)| [(s, 1), (e, -1)])
        .collect();
    edges.sort_unstable();
    let (mut running, mut peak) = (0i32, 0i32);
    for (_, delta) in edges {
        running += delta;
        peak = peak.max(running);
    }

    let makespan_s = ticks_to_s(makespan_ticks);
    let serial_s = times.len() as f64 * run.work_us as f64 * 1e-6;
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    Metrics {
        kernels: times.len(),
        makespan_s,
        throughput: ratio(times.len() as f64, makespan_s),
        overlap: ratio(busy_ticks as f64, makespan_ticks as f64),
        peak: peak.max(0) as usize,
        vs_serial: ratio(makespan_s, serial_s),
        host_s: run.host_total_ns as f64 * 1e-9,
        queues: None,
    }
}

pub fn format_table(config: &RunOutput, rows: &[(String, Metrics)]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} streams{} x {} kernels x {} us (serial {:.1} ms, fully parallel {:.1} ms); device clock {:.1} MHz measured",
        config.streams,
        if config.churn { " (churned)" } else { "" },
        config.kernels,
        config.work_us,
        (config.streams * config.kernels) as f64 * config.work_us as f64 * 1e-3,
        config.kernels as f64 * config.work_us as f64 * 1e-3,
        config.clock_hz * 1e-6,
    );
    let traced = rows.iter().any(|(_, m)| m.queues.is_some());
    let _ = write!(
        out,
        "{:<12} {:>10} {:>12} {:>8} {:>5} {:>10} {:>9}",
        "policy", "kernels/s", "makespan ms", "overlap", "peak", "vs serial", "host ms"
    );
    out.push_str(if traced { "  queues\n" } else { "\n" });
    for (policy, m) in rows {
        let _ = write!(
            out,
            "{:<12} {:>10.1} {:>12.1} {:>8.2} {:>5} {:>10.2} {:>9.1}",
            policy,
            m.throughput,
            m.makespan_s * 1e3,
            m.overlap,
            m.peak,
            m.vs_serial,
            m.host_s * 1e3
        );
        match (traced, m.queues) {
            (false, _) => out.push('\n'),
            (true, Some(q)) => out.push_str(&format!(" {q:>7}\n")),
            (true, None) => out.push_str("       ?\n"),
        }
    }
    out
}

pub fn policies(args: &BenchArgs) -> Result<(), String> {
    let program = match &args.program {
        Some(path) => path.clone(),
        None => super::bundled_program(SOURCE, super::Compiler::Ours)?,
    };
    let base = args.load.launch()?;
    if let Some(dir) = &args.trace_dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let mut bench_args: Vec<std::ffi::OsString> = vec![
        "--streams".into(),
        args.streams.to_string().into(),
        "--kernels".into(),
        args.kernels.to_string().into(),
        "--work".into(),
        args.work.to_string().into(),
    ];
    if args.churn {
        bench_args.push("--churn".into());
    }
    let mut rows: Vec<(String, Metrics)> = Vec::new();
    let mut first_run: Option<RunOutput> = None;
    for policy in &args.policies {
        let launch = Launch {
            policy: Some(policy.clone()),
            trace: args
                .trace_dir
                .as_ref()
                .map(|d| d.join(format!("{}.json", policy.replace(':', "_")))),
            ..base.clone()
        };
        eprint!("hipshim bench: {policy:<10} ...");
        let output = launch
            .command(program.as_os_str(), &bench_args)
            .output()
            .map_err(|e| format!("cannot start {}: {e}", program.display()))?;
        if !output.status.success() {
            eprintln!(" failed");
            return Err(format!(
                "{} under policy {policy} exited with {}:\n{}",
                program.display(),
                output.status,
                String::from_utf8_lossy(&output.stderr).trim_end()
            ));
        }
        let run = parse_output(&String::from_utf8_lossy(&output.stdout))
            .map_err(|e| format!("policy {policy}: unexpected output: {e}"))?;
        let mut m = metrics(&run);
        if let Some(trace) = &launch.trace {
            m.queues = queues_used(trace);
        }
        eprintln!(
            " makespan {:.1} ms, overlap {:.2}",
            m.makespan_s * 1e3,
            m.overlap
        );
        rows.push((policy.clone(), m));
        first_run.get_or_insert(run);
    }
    let Some(config) = first_run else {
        return Err("no policy given".into());
    };
    let attr_hz = config.clock_attr_khz as f64 * 1e3;
    if attr_hz > 0.0 && (attr_hz / config.clock_hz - 1.0).abs() > 0.1 {
        eprintln!(
            "hipshim bench: note: hipDeviceAttributeWallClockRate says {} kHz, the clock runs at {:.0} kHz; figures use the measured rate",
            config.clock_attr_khz,
            config.clock_hz * 1e-3
        );
    }
    print!("{}", format_table(&config, &rows));
    if let Some(path) = &args.plot {
        let svg = plot::makespan_svg(&config, &rows);
        std::fs::write(path, svg).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        eprintln!("hipshim bench: plot written to {}", path.display());
    }
    Ok(())
}

/// How many HSA queues ran kernel dispatches, from a trace (`None` if it cannot be read:
/// the table then shows `?` and the run's own figures stand).
fn queues_used(trace: &Path) -> Option<usize> {
    let events = amdhip64::trace::read_trace(trace)
        .map_err(|e| eprintln!("hipshim bench: {}: {e}", trace.display()))
        .ok()?;
    let mut queues: Vec<u64> = events
        .iter()
        .filter_map(|e| match e {
            TraceEvent::Packet(p) if p.kind == PacketKind::KernelDispatch => Some(p.queue),
            _ => None,
        })
        .collect();
    queues.sort_unstable();
    queues.dedup();
    Some(queues.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(work_us: u64, times: &[(u32, u64, u64)]) -> RunOutput {
        RunOutput {
            streams: 2,
            kernels: (times.len() / 2) as u32,
            work_us,
            // One tick per microsecond keeps the figures readable.
            clock_hz: 1e6,
            clock_attr_khz: 1000,
            churn: false,
            host_total_ns: 0,
            times: times
                .iter()
                .map(|&(stream, start, end)| KernelTime { stream, start, end })
                .collect(),
        }
    }

    #[test]
    fn serialized_streams_have_overlap_one() {
        // Two streams, two kernels each, one after another: 0-10, 10-20, 20-30, 30-40.
        let m = metrics(&run(
            10,
            &[(0, 0, 10), (1, 10, 20), (0, 20, 30), (1, 30, 40)],
        ));
        assert!((m.makespan_s - 40e-6).abs() < 1e-12);
        assert!((m.overlap - 1.0).abs() < 1e-9);
        assert_eq!(m.peak, 1);
        assert!((m.vs_serial - 1.0).abs() < 1e-9);
        assert!((m.throughput - 4.0 / 40e-6).abs() < 1.0);
    }

    #[test]
    fn parallel_streams_have_overlap_equal_to_their_number() {
        let m = metrics(&run(
            10,
            &[(0, 0, 10), (0, 10, 20), (1, 0, 10), (1, 10, 20)],
        ));
        assert!((m.overlap - 2.0).abs() < 1e-9);
        assert_eq!(m.peak, 2);
        assert!((m.vs_serial - 0.5).abs() < 1e-9);
    }

    #[test]
    fn partial_overlap_counts_only_the_shared_time() {
        // Stream 0 busy 0-20, stream 1 busy 10-30: 40 busy units over a makespan of 30.
        let m = metrics(&run(
            10,
            &[(0, 0, 10), (0, 10, 20), (1, 10, 20), (1, 20, 30)],
        ));
        assert!((m.overlap - 40.0 / 30.0).abs() < 1e-9);
        assert_eq!(m.peak, 2);
    }

    #[test]
    fn the_queue_column_appears_only_with_traces() {
        let r = run(10, &[(0, 0, 10), (1, 10, 20)]);
        let plain = metrics(&r);
        let traced = Metrics {
            queues: Some(3),
            ..plain.clone()
        };
        let table = format_table(&r, &[("single".into(), plain.clone())]);
        assert!(!table.contains("queues"), "{table}");
        let table = format_table(&r, &[("a".into(), traced), ("b".into(), plain)]);
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[1].ends_with("queues"), "{table}");
        assert!(
            lines[2].ends_with(" 3") && lines[3].ends_with(" ?"),
            "{table}"
        );
    }

    #[test]
    fn the_programs_output_parses() {
        let text =
            "config streams=2 kernels=1 work_us=5 clock_hz=100000000 clock_attr_khz=100000\n\
                    host launch_ns=10 total_ns=2000\n\
                    kernel stream=0 index=0 start=100 end=600\n\
                    kernel stream=1 index=0 start=100 end=700\n";
        let out = parse_output(text).unwrap();
        assert_eq!(out.streams, 2);
        assert_eq!(out.clock_hz, 1e8);
        assert_eq!(out.host_total_ns, 2000);
        assert_eq!(
            out.times[1],
            KernelTime {
                stream: 1,
                start: 100,
                end: 700
            }
        );
    }

    #[test]
    fn missing_kernel_records_are_an_error() {
        let text = "config streams=2 kernels=1 work_us=5 clock_hz=1e8 clock_attr_khz=0\n\
                    kernel stream=0 index=0 start=100 end=600\n";
        assert!(parse_output(text).unwrap_err().contains("expected 2"));
    }
}

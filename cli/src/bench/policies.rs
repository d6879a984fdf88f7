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

use super::measure::{metrics, parse_output, Metrics, RunOutput};
use super::plot;
use crate::args::LoadArgs;
use crate::run::Launch;
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
          value_parser = crate::args::parse_policy)]
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
    use crate::bench::measure::two_stream_run;

    #[test]
    fn the_queue_column_appears_only_with_traces() {
        let r = two_stream_run(10, &[(0, 0, 10), (1, 10, 20)]);
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
}

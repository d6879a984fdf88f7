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
use crate::format::{FormatArg, OutputFormat};
use crate::run::Launch;
use amdhip64::trace::schema;
use amdhip64::trace::{PacketKind, TraceEvent};
use serde_json::json;
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
    #[command(flatten)]
    format: FormatArg,
}

/// One policy's figures, or why its run gave none.
pub type PolicyRow = (String, Result<Metrics, String>);

/// What `bench policies` prints, in any format. `config` is the first successful run's
/// (`None` when every policy failed).
pub struct Table<'a> {
    pub config: Option<&'a RunOutput>,
    pub rows: &'a [PolicyRow],
}

const CSV_COLUMNS: [&str; 10] = [
    "policy",
    "status",
    "kernels_per_s",
    "makespan_ms",
    "overlap",
    "peak_streams",
    "vs_serial",
    "host_ms",
    "queues",
    "reason",
];

impl Table<'_> {
    pub fn render(&self, format: OutputFormat) -> String {
        match format {
            OutputFormat::Text => format_table(self.config, self.rows),
            OutputFormat::Json => {
                let config = self.config.map(|c| {
                    json!({
                        "streams": c.streams,
                        "kernels_per_stream": c.kernels,
                        "work_us": c.work_us,
                        "churn": c.churn,
                        "clock_hz": c.clock_hz,
                    })
                });
                schema::document(
                    "bench-policies",
                    json!({
                        "config": config,
                        "rows": self.rows.iter().map(row_json).collect::<Vec<_>>(),
                    }),
                )
            }
            OutputFormat::Csv => {
                schema::csv_of_json_rows(&CSV_COLUMNS, self.rows.iter().map(row_json))
            }
        }
    }
}

fn row_json((policy, result): &PolicyRow) -> serde_json::Value {
    match result {
        Ok(m) => json!({
            "policy": policy,
            "status": "ok",
            "kernels": m.kernels,
            "kernels_per_s": m.throughput,
            "makespan_ms": m.makespan_s * 1e3,
            "overlap": m.overlap,
            "peak_streams": m.peak,
            "vs_serial": m.vs_serial,
            "host_ms": m.host_s * 1e3,
            "queues": m.queues,
        }),
        Err(reason) => json!({"policy": policy, "status": "failed", "reason": reason}),
    }
}

pub fn format_table(config: Option<&RunOutput>, rows: &[PolicyRow]) -> String {
    let mut out = String::new();
    match config {
        Some(config) => {
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
        }
        None => out.push_str("no policy ran to the end\n"),
    }
    let traced = rows
        .iter()
        .any(|(_, m)| m.as_ref().is_ok_and(|m| m.queues.is_some()));
    let _ = write!(
        out,
        "{:<12} {:>10} {:>12} {:>8} {:>5} {:>10} {:>9}",
        "policy", "kernels/s", "makespan ms", "overlap", "peak", "vs serial", "host ms"
    );
    out.push_str(if traced { "  queues\n" } else { "\n" });
    for (policy, m) in rows {
        let m = match m {
            Ok(m) => m,
            Err(reason) => {
                let _ = writeln!(out, "{policy:<12} FAILED: {}", super::short_reason(reason));
                continue;
            }
        };
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

pub fn policies(args: &BenchArgs) -> Result<i32, String> {
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
    if base.time.as_deref() == Some("virtual") {
        // The virtual clock does not follow the host's: the program cannot measure its rate
        // against the host clock, and takes the rate the device reports.
        bench_args.push("--attr-clock".into());
    }
    let mut rows: Vec<PolicyRow> = Vec::new();
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
        // A policy whose run fails costs its own row only.
        let result = run_policy(&launch, &program, &bench_args, policy);
        match &result {
            Ok((run, m)) => {
                eprintln!(
                    " makespan {:.1} ms, overlap {:.2}",
                    m.makespan_s * 1e3,
                    m.overlap
                );
                first_run.get_or_insert(run.clone());
            }
            Err(reason) => eprintln!(" failed: {reason}"),
        }
        rows.push((policy.clone(), result.map(|(_, m)| m)));
    }
    if rows.is_empty() {
        return Err("no policy given".into());
    }
    if let Some(config) = &first_run {
        let attr_hz = config.clock_attr_khz as f64 * 1e3;
        if attr_hz > 0.0 && (attr_hz / config.clock_hz - 1.0).abs() > 0.1 {
            eprintln!(
                "hipshim bench: note: hipDeviceAttributeWallClockRate says {} kHz, the clock runs at {:.0} kHz; figures use the measured rate",
                config.clock_attr_khz,
                config.clock_hz * 1e-3
            );
        }
    }
    let table = Table {
        config: first_run.as_ref(),
        rows: &rows,
    };
    print!("{}", table.render(args.format.format));
    let measured: Vec<(String, Metrics)> = rows
        .iter()
        .filter_map(|(p, m)| Some((p.clone(), m.as_ref().ok()?.clone())))
        .collect();
    if let (Some(path), Some(config)) = (&args.plot, &first_run) {
        let svg = plot::makespan_svg(config, &measured);
        std::fs::write(path, svg).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        eprintln!("hipshim bench: plot written to {}", path.display());
    }
    let failed = rows.len() - measured.len();
    Ok(super::exit_code(failed, rows.len()))
}

/// One policy's run of the program and its figures.
fn run_policy(
    launch: &Launch,
    program: &Path,
    bench_args: &[std::ffi::OsString],
    policy: &str,
) -> Result<(RunOutput, Metrics), String> {
    let output = launch
        .command(program.as_os_str(), bench_args)
        .output()
        .map_err(|e| format!("cannot start {}: {e}", program.display()))?;
    if !output.status.success() {
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
    Ok((run, m))
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
        let table = format_table(Some(&r), &[("single".into(), Ok(plain.clone()))]);
        assert!(!table.contains("queues"), "{table}");
        let table = format_table(
            Some(&r),
            &[("a".into(), Ok(traced)), ("b".into(), Ok(plain))],
        );
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[1].ends_with("queues"), "{table}");
        assert!(
            lines[2].ends_with(" 3") && lines[3].ends_with(" ?"),
            "{table}"
        );
    }

    #[test]
    fn a_failed_policy_is_marked_and_the_others_still_print() {
        let r = two_stream_run(10, &[(0, 0, 10), (1, 10, 20)]);
        let rows = vec![
            ("single".to_string(), Ok(metrics(&r))),
            (
                "pool:2".to_string(),
                Err("prog under policy pool:2 exited with 1:\nhipStreamCreate failed".into()),
            ),
            ("dedicated".to_string(), Ok(metrics(&r))),
        ];
        let table = Table {
            config: Some(&r),
            rows: &rows,
        };
        let text = table.render(OutputFormat::Text);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[2].starts_with("single "), "{text}");
        assert!(lines[3].starts_with("pool:2       FAILED:"), "{text}");
        assert!(lines[3].ends_with("hipStreamCreate failed"), "{text}");
        assert!(lines[4].starts_with("dedicated "), "{text}");

        let json: serde_json::Value =
            serde_json::from_str(&table.render(OutputFormat::Json)).unwrap();
        assert_eq!(json["schema"], "hipshim.bench-policies");
        assert_eq!(json["config"]["streams"], 2);
        assert_eq!(json["rows"][0]["status"], "ok");
        assert_eq!(json["rows"][0]["peak_streams"], 1);
        assert_eq!(json["rows"][1]["status"], "failed");
        assert_eq!(json["rows"][2]["policy"], "dedicated");

        let csv = table.render(OutputFormat::Csv);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 4, "{csv}");
        assert!(lines[2].starts_with("pool:2,failed,,"), "{csv}");
        assert!(
            lines[2].ends_with("exited with 1: | hipStreamCreate failed"),
            "{csv}"
        );
    }
}

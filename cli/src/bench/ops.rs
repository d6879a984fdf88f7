//! `hipshim bench ops`: what one submission operation costs, in host time and in x86
//! instructions, on hipshim and (with `--amd`) on AMD's own runtime over the same hsasim.
//!
//! The program (`c_tests/bench/ops.hip`) runs one operation N times per round and prints the
//! best round's ns per operation. Instructions come from callgrind: the program runs with N
//! and with 2N operations and the difference is divided by N, so loading, warm-up and
//! teardown cancel. Per run, the thread that called HIP is split into the runtime's own work
//! (everything but the program itself and hsasim's library) and the HSA calls it made into
//! hsasim; hsasim's own threads (packet processors, copy engines) are a column of their own.
//! For a launch+sync round trip that column is the simulator's cost of one dispatch.

use super::callgrind;
use super::Compiler;
use crate::args::LoadArgs;
use crate::format::{FormatArg, OutputFormat};
use crate::run::Launch;
use amdhip64::trace::schema;
use serde_json::json;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const SOURCE: &str = "c_tests/bench/ops.hip";

/// The operations, in table order: (program's name, table label).
pub const OPERATIONS: &[(&str, &str)] = &[
    ("launch", "launch (async, 3 args)"),
    ("sync", "idle hipStreamSynchronize"),
    ("record", "hipEventRecord"),
    ("roundtrip", "launch + sync round trip"),
    ("create", "stream create + destroy"),
    ("copy4k", "hipMemcpy 4 KiB pinned"),
    ("copy4k_pageable", "hipMemcpy 4 KiB pageable"),
    ("pageable", "hipMemcpy 64 MiB pageable"),
    ("pageable_d2h", "hipMemcpy 64 MiB to pageable"),
    ("graph", "graph replay, per kernel node"),
    ("graph_eager", "graph replay, eager executor"),
];

/// Kernel nodes of the `graph` operations' graph (a chain of empty kernels; the program's
/// `GRAPH_NODES`): their rows are per node.
const GRAPH_NODES: u32 = 100;

/// Launches per round of a `graph` operation: twice (the callgrind run of 2N) that many
/// nodes must fit a 1024-packet ring, or the host would wait for the device.
const GRAPH_LAUNCHES: u32 = 4;

fn is_graph(op: &str) -> bool {
    op == "graph" || op == "graph_eager"
}

/// The HIP functions an operation calls: the calling-thread columns count instructions only
/// inside them (callgrind's `--toggle-collect`), so neither the program's loop nor the
/// untimed synchronisation after a round is counted.
fn api_functions(op: &str) -> &'static [&'static str] {
    const LAUNCH: &[&str] = &[
        "__hipPushCallConfiguration",
        "__hipPopCallConfiguration",
        "hipLaunchKernel",
    ];
    match op {
        "launch" => LAUNCH,
        "sync" => &["hipStreamSynchronize"],
        "record" => &["hipEventRecord"],
        "roundtrip" => &[
            "__hipPushCallConfiguration",
            "__hipPopCallConfiguration",
            "hipLaunchKernel",
            "hipStreamSynchronize",
        ],
        "create" => &["hipStreamCreate", "hipStreamDestroy"],
        "graph" | "graph_eager" => &["hipGraphLaunch"],
        _ => &["hipMemcpy"],
    }
}

/// Whether hsasim's own threads do work for the operation worth a column: dispatches and
/// copies. (A launch's dispatches also run there, but after the timed loop.)
fn has_simulator_work(op: &str) -> bool {
    matches!(
        op,
        "roundtrip" | "copy4k" | "copy4k_pageable" | "pageable" | "pageable_d2h"
    )
}

const DEFAULT_OPS: &str = "launch,sync,record,roundtrip,create,copy4k,pageable";

#[derive(clap::Args, Debug)]
pub struct OpsArgs {
    /// Comma-separated operations: launch, sync, record, roundtrip, create, copy4k,
    /// pageable, copy4k_pageable, pageable_d2h, graph, graph_eager (the last four not run
    /// unless named;
    /// `graph` replays a chain of 100 empty-kernel nodes, `graph_eager` the same through the
    /// eager executor, HIPSHIM_GRAPH_QUEUES=0; both report per kernel node).
    #[arg(long, value_delimiter = ',', default_value = DEFAULT_OPS, value_parser = parse_op)]
    ops: Vec<String>,
    /// Operations per round (at most 500, so 2N launches fit a 1024-packet queue).
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..=500))]
    count: u32,
    /// Timed rounds; the best one is reported.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=1000))]
    rounds: u32,
    /// Time only: skip the callgrind runs (they take a few seconds per operation).
    #[arg(long)]
    no_callgrind: bool,
    /// Also run AMD's libamdhip64.so.5 over the same hsasim. Both runtimes then run one
    /// binary built by Debian's hipcc for gfx90a (AMD's headers, code object v4).
    #[arg(long)]
    amd: bool,
    /// Keep the callgrind profiles in DIR (default: a temporary dir, removed afterwards).
    #[arg(long, value_name = "DIR")]
    profiles: Option<PathBuf>,
    #[command(flatten)]
    load: LoadArgs,
    #[command(flatten)]
    format: FormatArg,
}

fn parse_op(text: &str) -> Result<String, String> {
    let text = text.trim();
    if OPERATIONS.iter().any(|(name, _)| *name == text) {
        Ok(text.to_string())
    } else {
        Err(format!(
            "known operations: {}",
            OPERATIONS
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }
}

/// The two runtimes the bench can drive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runtime {
    Hipshim,
    Amd,
}

impl Runtime {
    fn label(self) -> &'static str {
        match self {
            Runtime::Hipshim => "hipshim",
            Runtime::Amd => "AMD CLR",
        }
    }
}

/// One operation measured on one runtime.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Row {
    pub op: String,
    pub runtime: String,
    /// Why the operation has no figures (the runtime failed it); the fields below are then
    /// zero or `None`.
    pub failure: Option<String>,
    /// Best round's ns per operation.
    pub ns: f64,
    /// Median round's (older programs print none).
    pub median_ns: Option<f64>,
    pub gb_per_s: Option<f64>,
    pub counts: Option<Counts>,
}

/// Instructions per operation.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Counts {
    /// The thread that called HIP, everything included.
    pub calling: i64,
    /// Of `calling`: the runtime's own (not the program's, not hsasim's).
    pub runtime: i64,
    /// Of `calling`: inside hsasim's library (the HSA calls).
    pub hsa: i64,
    /// hsasim's own threads, where the operation gives them work.
    pub simulator: Option<i64>,
}

/// What the program printed: `ns_per_op BEST [median MEDIAN] mean MEAN [gb_per_s G] (...)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    pub best_ns: f64,
    pub median_ns: Option<f64>,
    pub gb_per_s: Option<f64>,
}

pub fn parse_output(text: &str) -> Result<Timing, String> {
    let line = text
        .lines()
        .find(|l| l.starts_with("ns_per_op "))
        .ok_or_else(|| format!("no ns_per_op line in {text:?}"))?;
    let fields: Vec<&str> = line.split_whitespace().collect();
    let value = |key: &str| {
        fields
            .iter()
            .position(|f| *f == key)
            .and_then(|i| fields.get(i + 1))
            .and_then(|v| v.parse::<f64>().ok())
    };
    let best_ns = value("ns_per_op").ok_or_else(|| format!("bad ns_per_op line {line:?}"))?;
    Ok(Timing {
        best_ns,
        median_ns: value("median"),
        gb_per_s: value("gb_per_s"),
    })
}

/// Operations per callgrind run: a 64 MiB copy is slow under valgrind, and one (against two)
/// is enough to cancel the setup.
fn callgrind_count(op: &str, count: u32) -> u32 {
    if is_graph(op) {
        GRAPH_LAUNCHES
    } else if op.starts_with("pageable") {
        1
    } else {
        count
    }
}

/// Operations per timed round.
fn timed_count(op: &str, count: u32) -> u32 {
    if is_graph(op) {
        GRAPH_LAUNCHES
    } else if op.starts_with("pageable") {
        4
    } else {
        count
    }
}

/// Per-operation counts on the calling thread from runs of `n` and `2n` operations
/// (profiles collected only inside the operation's HIP functions).
pub fn per_operation(one: &callgrind::Profile, two: &callgrind::Profile, n: u32) -> Counts {
    let split = |p: &callgrind::Profile| {
        let Some(calling) = p.threads.first() else {
            return (0, 0);
        };
        (calling.total() as i64, calling.sum(is_hsa_runtime) as i64)
    };
    let ((total_a, hsa_a), (total_b, hsa_b)) = (split(one), split(two));
    let per = |x: i64, y: i64| (y - x) / n as i64;
    Counts {
        calling: per(total_a, total_b),
        runtime: per(total_a - hsa_a, total_b - hsa_b),
        hsa: per(hsa_a, hsa_b),
        simulator: None,
    }
}

/// Per-operation instructions on hsasim's own threads (every thread but the first) from
/// whole-program profiles of `n` and `2n` operations.
pub fn simulator_per_operation(one: &callgrind::Profile, two: &callgrind::Profile, n: u32) -> i64 {
    let others = |p: &callgrind::Profile| -> i64 {
        p.threads.iter().skip(1).map(|t| t.total() as i64).sum()
    };
    (others(two) - others(one)) / n as i64
}

/// The HSA runtime's library: hsasim under its own name, or whatever answers to ROCr's.
fn is_hsa_runtime(object: &str) -> bool {
    object.ends_with("/libhsasim.so") || object.contains("/libhsa-runtime64.so")
}

pub fn ops(args: &OpsArgs) -> Result<i32, String> {
    let callgrind = !args.no_callgrind && callgrind::available();
    if !args.no_callgrind && !callgrind {
        eprintln!("hipshim bench: valgrind not found: time only (scripts/setup.sh installs it)");
    }
    let base = args.load.launch()?;
    let (program, runtimes) = if args.amd {
        amd_library()?;
        (
            super::bundled_program(SOURCE, Compiler::Hipcc)?,
            vec![Runtime::Hipshim, Runtime::Amd],
        )
    } else {
        (
            super::bundled_program(SOURCE, Compiler::Ours)?,
            vec![Runtime::Hipshim],
        )
    };
    let program = program.canonicalize().unwrap_or(program);
    let scratch = match &args.profiles {
        Some(dir) => dir.clone(),
        None => std::env::temp_dir().join(format!("hipshim-bench-ops-{}", std::process::id())),
    };
    let result = measure_all(args, &base, &program, &runtimes, callgrind, &scratch);
    if args.profiles.is_none() {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    let rows = result;
    let table = Table {
        build: base.lib_dir.display().to_string(),
        count: args.count,
        rounds: args.rounds,
        callgrind,
        rows,
    };
    print!("{}", table.render(args.format.format));
    let failed = table.rows.iter().filter(|r| r.failure.is_some()).count();
    Ok(super::exit_code(failed, table.rows.len()))
}

/// What `bench ops` prints, in any format.
pub struct Table {
    /// The lib dir measured: a debug build (opt-level 1, debug assertions) costs about 1.6x
    /// the instructions of a release build on the launch path.
    pub build: String,
    pub count: u32,
    pub rounds: u32,
    pub callgrind: bool,
    pub rows: Vec<Row>,
}

const CSV_COLUMNS: [&str; 12] = [
    "operation",
    "runtime",
    "status",
    "best_ns",
    "median_ns",
    "gb_per_s",
    "calling_instructions",
    "runtime_instructions",
    "hsa_instructions",
    "simulator_instructions",
    "goal",
    "reason",
];

impl Table {
    pub fn render(&self, format: OutputFormat) -> String {
        match format {
            OutputFormat::Text => format!(
                "measured build: {}\n{}",
                self.build,
                format_table(&self.rows, self.count, self.rounds, self.callgrind)
            ),
            OutputFormat::Json => schema::document(
                "bench-ops",
                json!({
                    "measured_build": self.build,
                    "operations_per_round": self.count,
                    "rounds": self.rounds,
                    "callgrind": self.callgrind,
                    "rows": self.rows.iter().map(row_json).collect::<Vec<_>>(),
                }),
            ),
            OutputFormat::Csv => {
                schema::csv_of_json_rows(&CSV_COLUMNS, self.rows.iter().map(row_json))
            }
        }
    }
}

/// A row's JSON object (also the source of its CSV record).
fn row_json(row: &Row) -> serde_json::Value {
    let mut v = json!({
        "operation": row.op,
        "label": label(&row.op),
        "runtime": row.runtime,
        "goal": goal(&row.op),
    });
    match &row.failure {
        Some(reason) => {
            v["status"] = json!("failed");
            v["reason"] = json!(reason);
        }
        None => {
            v["status"] = json!("ok");
            v["best_ns"] = json!(row.ns);
            v["median_ns"] = json!(row.median_ns);
            v["gb_per_s"] = json!(row.gb_per_s);
            if let Some(c) = row.counts {
                v["calling_instructions"] = json!(c.calling);
                v["runtime_instructions"] = json!(c.runtime);
                v["hsa_instructions"] = json!(c.hsa);
                v["simulator_instructions"] = json!(c.simulator);
            }
        }
    }
    v
}

fn label(op: &str) -> &str {
    OPERATIONS
        .iter()
        .find(|(n, _)| *n == op)
        .map(|(_, l)| *l)
        .unwrap_or(op)
}

fn measure_all(
    args: &OpsArgs,
    base: &Launch,
    program: &Path,
    runtimes: &[Runtime],
    callgrind: bool,
    scratch: &Path,
) -> Vec<Row> {
    let mut rows = Vec::new();
    for op in &args.ops {
        for &runtime in runtimes {
            eprint!("hipshim bench: {op:<10} {:<8}...", runtime.label());
            // A runtime failing one operation (AMD's fails some graph calls on hsasim)
            // costs that row only: the figures measured before and after it still print.
            let row = match measure(args, base, program, runtime, op, callgrind, scratch) {
                Ok(row) => {
                    eprintln!(" {:.0} ns", row.ns);
                    row
                }
                Err(reason) => {
                    eprintln!(" failed: {reason}");
                    Row {
                        op: op.clone(),
                        runtime: runtime.label().to_string(),
                        failure: Some(reason),
                        ..Row::default()
                    }
                }
            };
            rows.push(row);
        }
    }
    rows
}

fn measure(
    args: &OpsArgs,
    base: &Launch,
    program: &Path,
    runtime: Runtime,
    op: &str,
    callgrind: bool,
    scratch: &Path,
) -> Result<Row, String> {
    // Timed runs begin with the program's untimed round; instruction counts need none (it
    // would have to cancel between the N and 2N runs, and its waits' spinning does not).
    let run_args = |n: u32, rounds: u32, untimed_round: bool| -> Vec<OsString> {
        let mut args: Vec<OsString> =
            vec![op.into(), n.to_string().into(), rounds.to_string().into()];
        if !untimed_round {
            args.push("0".into());
        }
        args
    };
    let command = |n: u32, rounds: u32, untimed_round: bool| {
        let mut cmd = command(base, program, runtime, &run_args(n, rounds, untimed_round));
        if op == "graph_eager" {
            cmd.env("HIPSHIM_GRAPH_QUEUES", "0");
        }
        cmd
    };
    let output = command(timed_count(op, args.count), args.rounds, true)
        .output()
        .map_err(|e| format!("cannot start {}: {e}", program.display()))?;
    if !output.status.success() {
        return Err(format!(
            "{} {op} on {} exited with {}:\n{}",
            program.display(),
            runtime.label(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim_end()
        ));
    }
    let timing = parse_output(&String::from_utf8_lossy(&output.stdout))?;
    let counts = if callgrind {
        let n = callgrind_count(op, args.count);
        let dir = scratch.join(format!("{op}-{}", runtime.label().replace(' ', "_")));
        let apis = api_functions(op);
        let one = callgrind::profile(command(n, 1, false), &dir.join("n"), apis)?;
        let two = callgrind::profile(command(2 * n, 1, false), &dir.join("2n"), apis)?;
        let mut counts = per_operation(&one, &two, n);
        if is_graph(op) {
            // Per kernel node, as the program's times.
            let per_node = |x: i64| x / i64::from(GRAPH_NODES);
            counts.calling = per_node(counts.calling);
            counts.runtime = per_node(counts.runtime);
            counts.hsa = per_node(counts.hsa);
        }
        if has_simulator_work(op) {
            let one = callgrind::profile(command(n, 1, false), &dir.join("n-all"), &[])?;
            let two = callgrind::profile(command(2 * n, 1, false), &dir.join("2n-all"), &[])?;
            counts.simulator = Some(simulator_per_operation(&one, &two, n));
        }
        Some(counts)
    } else {
        None
    };
    Ok(Row {
        op: op.to_string(),
        runtime: runtime.label().to_string(),
        failure: None,
        ns: timing.best_ns,
        median_ns: timing.median_ns,
        gb_per_s: timing.gb_per_s,
        counts,
    })
}

/// The program under `runtime`, on hsasim either way.
fn command(
    base: &Launch,
    program: &Path,
    runtime: Runtime,
    args: &[OsString],
) -> std::process::Command {
    let mut cmd = match runtime {
        Runtime::Hipshim => base.command(program.as_os_str(), args),
        Runtime::Amd => base.command_on_amd(program.as_os_str(), args),
    };
    // Both runtimes on the simulated device, so the rows compare like with like.
    cmd.env("HIPSHIM_DEVICE", "sim");
    if program.to_string_lossy().ends_with("-hipcc") {
        cmd.env("HSASIM_GFX", "gfx90a");
    }
    cmd
}

/// AMD's runtime must be installed for `--amd`.
pub fn amd_library() -> Result<(), String> {
    let found = ["/usr/lib/x86_64-linux-gnu", "/opt/rocm/lib", "/usr/lib64"]
        .iter()
        .any(|d| Path::new(d).join("libamdhip64.so.5").exists());
    if found {
        Ok(())
    } else {
        Err("--amd needs AMD's libamdhip64.so.5 (Debian's libamdhip64-5; scripts/setup.sh installs it)".into())
    }
}

/// The goal the issue set for an operation, as text for the table's last column.
fn goal(op: &str) -> &'static str {
    match op {
        "launch" => "own <= 600 instr, <= 1,000 with HSA, <= 150 ns",
        "sync" => "<= 150 instr, never above AMD's",
        "roundtrip" => "<= 5,000 ns; dispatch <= 20,000 instr",
        "pageable" | "pageable_d2h" => "at least AMD's GB/s",
        "graph" => "<= 100 ns per kernel node",
        _ => "",
    }
}

pub fn format_table(rows: &[Row], count: u32, rounds: u32, callgrind: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "per operation: host ns (best and median of {rounds} rounds of {count}){}",
        if callgrind {
            "; x86 instructions (callgrind, N vs 2N operations): calling = inside the operation's HIP calls = runtime + HSA (the runtime's calls into the HSA library), simulator = hsasim's own threads"
        } else {
            ""
        }
    );
    let _ = write!(
        out,
        "{:<29} {:<8} {:>10} {:>7}",
        "operation", "runtime", "ns/op", "median"
    );
    if callgrind {
        let _ = write!(
            out,
            " {:>10} {:>9} {:>9} {:>10}",
            "calling", "runtime", "HSA", "simulator"
        );
    }
    let _ = writeln!(out, "  goal");
    let mut last_op = "";
    for row in rows {
        let label = if row.op == last_op {
            ""
        } else {
            label(&row.op)
        };
        if let Some(reason) = &row.failure {
            let _ = writeln!(
                out,
                "{label:<29} {:<8} FAILED: {}",
                row.runtime,
                super::short_reason(reason)
            );
            last_op = &row.op;
            continue;
        }
        let time = match row.gb_per_s {
            Some(g) => format!("{:.0} ({g:.1} GB/s)", row.ns),
            None => format!("{:.0}", row.ns),
        };
        let median = row
            .median_ns
            .map_or_else(|| "-".to_string(), |m| format!("{m:.0}"));
        let _ = write!(out, "{label:<29} {:<8} {time:>10} {median:>7}", row.runtime);
        if let Some(c) = row.counts {
            let _ = write!(
                out,
                " {:>10} {:>9} {:>9} {:>10}",
                c.calling,
                c.runtime,
                c.hsa,
                c.simulator
                    .map_or_else(|| "-".to_string(), |s| s.max(0).to_string())
            );
        } else if callgrind {
            let _ = write!(out, " {:>10} {:>9} {:>9} {:>10}", "-", "-", "-", "-");
        }
        let g = if row.op == last_op { "" } else { goal(&row.op) };
        let _ = writeln!(out, "  {g}");
        last_op = &row.op;
    }
    // Trailing spaces of rows without a goal.
    out.lines()
        .map(|l| l.trim_end().to_string() + "\n")
        .collect()
}

#[cfg(test)]
mod tests {
    use super::callgrind::{Profile, ThreadProfile};
    use super::*;

    fn thread(parts: &[(&str, u64)]) -> ThreadProfile {
        ThreadProfile {
            by_object: parts.iter().map(|(o, n)| (o.to_string(), *n)).collect(),
        }
    }

    #[test]
    fn counts_are_the_difference_per_operation_split_by_object() {
        let one = Profile {
            threads: vec![
                thread(&[("/l/libamdhip64.so", 5000), ("/l/libhsasim.so", 3000)]),
                thread(&[("/l/libhsasim.so", 7000)]),
            ],
        };
        let two = Profile {
            threads: vec![
                thread(&[
                    ("/l/libamdhip64.so", 6000),
                    ("/usr/lib/libc.so.6", 100),
                    ("/l/libhsasim.so", 3500),
                ]),
                thread(&[("/l/libhsasim.so", 9000)]),
                thread(&[("/l/libhsasim.so", 1000)]),
            ],
        };
        let c = per_operation(&one, &two, 10);
        assert_eq!(
            c,
            Counts {
                calling: 160,
                // libamdhip64 +1000 and libc +100 (called by the runtime) are the runtime's.
                runtime: 110,
                hsa: 50,
                simulator: None,
            }
        );
        // Every thread but the first: +2000 and a new thread's 1000.
        assert_eq!(simulator_per_operation(&one, &two, 10), 300);
    }

    #[test]
    fn rocr_by_its_soname_counts_as_the_hsa_runtime() {
        assert!(is_hsa_runtime("/t/debug/deps/libhsasim.so"));
        assert!(is_hsa_runtime("/opt/rocm/lib/libhsa-runtime64.so.1.5.0"));
        assert!(!is_hsa_runtime("/usr/lib/libamdhip64.so.5"));
    }

    #[test]
    fn the_programs_line_parses_with_and_without_bandwidth() {
        assert_eq!(
            parse_output("ns_per_op 101.5 median 110.5 mean 120.0 (launch: 10 rounds of 200)\n")
                .unwrap(),
            Timing {
                best_ns: 101.5,
                median_ns: Some(110.5),
                gb_per_s: None
            }
        );
        assert_eq!(
            parse_output("x\nns_per_op 4000000 mean 5 gb_per_s 16.78 (pageable)\n").unwrap(),
            Timing {
                best_ns: 4_000_000.0,
                median_ns: None,
                gb_per_s: Some(16.78)
            }
        );
        assert!(parse_output("nothing").is_err());
    }

    #[test]
    fn the_table_labels_each_operation_once_and_shows_goals() {
        let rows = vec![
            Row {
                op: "launch".into(),
                runtime: "hipshim".into(),
                failure: None,
                ns: 120.0,
                median_ns: Some(131.0),
                gb_per_s: None,
                counts: Some(Counts {
                    calling: 900,
                    runtime: 500,
                    hsa: 350,
                    simulator: Some(20000),
                }),
            },
            Row {
                op: "launch".into(),
                runtime: "AMD CLR".into(),
                failure: None,
                ns: 400.0,
                median_ns: None,
                gb_per_s: None,
                counts: None,
            },
        ];
        let table = format_table(&rows, 200, 10, true);
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[2].starts_with("launch (async, 3 args)"), "{table}");
        assert!(lines[2].contains("own <= 600 instr"), "{table}");
        assert!(
            lines[2].contains(" 131 "),
            "the median round shows: {table}"
        );
        assert!(
            lines[3].starts_with("  ") && lines[3].contains("AMD CLR"),
            "{table}"
        );
        assert!(lines[3].contains(" - "), "{table}");
        assert!(!lines[3].contains("<= 600"), "{table}");
    }

    /// A runtime failing one operation keeps every other row, in every format.
    #[test]
    fn a_failed_row_is_marked_and_the_others_still_print() {
        let ok = |op: &str, ns: f64| Row {
            op: op.into(),
            runtime: "AMD CLR".into(),
            ns,
            ..Row::default()
        };
        let table = Table {
            build: "/lib".into(),
            count: 200,
            rounds: 10,
            callgrind: false,
            rows: vec![
                ok("launch", 400.0),
                Row {
                    op: "graph".into(),
                    runtime: "AMD CLR".into(),
                    failure: Some(
                        "ops graph on AMD CLR exited with exit status: 1:\nhipGraphAddKernelNode failed"
                            .into(),
                    ),
                    ..Row::default()
                },
                ok("sync", 90.0),
            ],
        };
        let text = table.render(OutputFormat::Text);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[3].starts_with("launch (async, 3 args)"), "{text}");
        assert!(lines[4].contains("FAILED"), "{text}");
        assert!(lines[4].contains("hipGraphAddKernelNode failed"), "{text}");
        assert!(lines[5].starts_with("idle hipStreamSynchronize"), "{text}");

        let json: serde_json::Value =
            serde_json::from_str(&table.render(OutputFormat::Json)).unwrap();
        assert_eq!(json["schema"], "hipshim.bench-ops");
        let rows = json["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0]["status"], "ok");
        assert_eq!(rows[0]["best_ns"], 400.0);
        assert_eq!(rows[1]["status"], "failed");
        assert!(rows[1]["reason"]
            .as_str()
            .unwrap()
            .contains("hipGraphAddKernelNode"));
        assert!(rows[1].get("best_ns").is_none());
        assert_eq!(rows[2]["best_ns"], 90.0);

        let csv = table.render(OutputFormat::Csv);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], CSV_COLUMNS.join(","));
        assert!(lines[1].starts_with("launch,AMD CLR,ok,400.0,"), "{csv}");
        assert!(lines[2].starts_with("graph,AMD CLR,failed,,"), "{csv}");
        assert_eq!(lines.len(), 4, "a quoted reason stays on its record: {csv}");
    }

    #[test]
    fn unknown_operations_are_rejected_with_the_known_ones() {
        assert!(parse_op("launch").is_ok());
        assert!(parse_op("teleport").unwrap_err().contains("roundtrip"));
    }
}

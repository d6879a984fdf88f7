//! `hipshim`: the command line of the hipshim HIP runtime.
//!
//! Exit codes: 0 success, 1 the command failed, 2 a usage error (clap's convention, also
//! used for an unknown policy), and for `run` the program's own status (128 + signal when a
//! signal ended it). Progress and errors go to stderr; results to stdout.

mod args;
mod bench;
mod compare;
mod config_reference;
mod device;
mod format;
mod info;
mod libdir;
mod run;
mod summarize;

use args::{parse_policy, LoadArgs};
use clap::{Args, CommandFactory, Parser, Subcommand};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "hipshim",
    version,
    about = "hipshim: see and steer how HIP work reaches the GPU"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The HSA runtime in use, its agents, ISAs, memory pools, queue limits and the
    /// effective configuration.
    Info(format::FormatArg),
    /// Run a HIP program on hipshim with the given settings.
    Run(RunArgs),
    /// Work with trace files written by HIPSHIM_TRACE / `hipshim run --trace`.
    #[command(subcommand)]
    Trace(TraceCommand),
    /// Bundled experiments.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// A simulated GPU's hardware scheduler shared by several processes (hsasim only).
    #[command(subcommand)]
    Device(device::DeviceCommand),
    /// Print the lib dir programs load hipshim from (staging it in a cargo build).
    LibDir(LibDirArgs),
    /// Run a gfx90a HIP program built by Debian's hipcc under AMD's runtime and under
    /// hipshim, both on hsasim, and print where the kernel dispatch packets they submit
    /// differ (HSASIM_CAPTURE, addresses normalised).
    Compare(compare::CompareArgs),
    /// The settings hipshim and hsasim read from the environment.
    #[command(subcommand)]
    Config(config_reference::ConfigCommand),
}

#[derive(Subcommand)]
enum TraceCommand {
    /// The stats tables (API calls, queues, copy engines, waits) of a trace file.
    Summarize {
        /// A trace written by HIPSHIM_TRACE.
        file: PathBuf,
        #[command(flatten)]
        format: format::FormatArg,
    },
    /// Several processes' traces on one timeline (CLOCK_MONOTONIC), each process's host
    /// threads, queues and copy engines side by side, and the hardware queue slots from a
    /// device service's log; prints the stats per process.
    Merge {
        /// Traces written by HIPSHIM_TRACE (one per process).
        #[arg(required = true, num_args = 1..)]
        files: Vec<PathBuf>,
        /// The merged trace.
        #[arg(short = 'o', long = "output", value_name = "OUT")]
        output: PathBuf,
        /// A device service's event log (`hipshim device start --log FILE`): draws which
        /// queue held each hardware slot when.
        #[arg(long, value_name = "FILE")]
        sched: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum BenchCommand {
    /// K streams x M kernels under each queue policy: throughput, makespan, overlap.
    Policies(bench::policies::BenchArgs),
    /// Host time and x86 instructions per submission operation (launch, idle sync, event
    /// record, round trip, stream create, copies), optionally beside AMD's runtime.
    Ops(bench::ops::OpsArgs),
    /// N copies of the policy experiment at once on one simulated GPU (a device service):
    /// throughput per process, queue slots, runlist updates and time slices per scheduler
    /// setting.
    Processes(bench::processes::ProcessesArgs),
}

#[derive(Args)]
struct LibDirArgs {
    /// Use this lib dir instead of the one beside hipshim.
    #[arg(long, value_name = "DIR")]
    lib_dir: Option<PathBuf>,
}

#[derive(Args)]
#[command(trailing_var_arg = true)]
struct RunArgs {
    /// Queue policy (HIPSHIM_QUEUE_POLICY): dedicated | single | pool | pool:N | pool:N:rr |
    /// pool:N:ll.
    #[arg(long, value_name = "POLICY", value_parser = parse_policy)]
    policy: Option<String>,
    /// Write a Chrome/Perfetto trace to FILE (HIPSHIM_TRACE).
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Print the stats tables at exit (HIPSHIM_STATS=1), or write them to FILE with
    /// --stats=FILE.
    #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true)]
    stats: Option<Option<PathBuf>>,
    /// How --stats writes the tables (HIPSHIM_STATS_FORMAT): text, json (a `hipshim.stats`
    /// document) or csv (`table,row,field,value` records).
    #[arg(long, value_name = "FORMAT", requires = "stats", value_parser = format::parse_format)]
    stats_format: Option<format::OutputFormat>,
    #[command(flatten)]
    load: LoadArgs,
    /// The program and its arguments (after `--`).
    #[arg(required = true, value_name = "PROGRAM")]
    command: Vec<OsString>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Info(args) => info::info(args.format),
        Command::Run(args) => run_program(args),
        Command::Trace(TraceCommand::Summarize { file, format }) => {
            summarize::summarize(&file, format.format).map(|t| {
                print!("{t}");
                0
            })
        }
        Command::Trace(TraceCommand::Merge {
            files,
            output,
            sched,
        }) => summarize::merge(&files, &output, sched.as_deref()).map(|t| {
            print!("{t}");
            0
        }),
        Command::Bench(BenchCommand::Policies(args)) => bench::policies::policies(&args),
        Command::Bench(BenchCommand::Ops(args)) => bench::ops::ops(&args),
        Command::Bench(BenchCommand::Processes(args)) => bench::processes::processes(&args),
        Command::Compare(args) => compare::compare(&args),
        Command::Config(config_reference::ConfigCommand::Reference) => {
            let cli = Cli::command();
            cli.find_subcommand("run")
                .ok_or_else(|| "no `run` command to describe".to_string())
                .map(|run| {
                    print!("{}", config_reference::reference(run));
                    0
                })
        }
        Command::Device(cmd) => device::device(&cmd),
        Command::LibDir(args) => libdir::resolve(args.lib_dir.as_deref()).map(|dir| {
            println!("{}", dir.display());
            0
        }),
    };
    match result {
        Ok(code) => ExitCode::from(code.clamp(0, 255) as u8),
        Err(message) => {
            eprintln!("hipshim: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run_program(args: RunArgs) -> Result<i32, String> {
    let mut launch = args.load.launch()?;
    launch.policy = args.policy;
    launch.trace = args.trace;
    launch.stats = args.stats;
    launch.stats_format = args.stats_format;
    let (program, rest) = args
        .command
        .split_first()
        .ok_or("no program given (hipshim run [OPTIONS] -- PROGRAM ARGS)")?;
    eprintln!("{}", launch.describe(program, rest));
    let status = run::run_to_end(&mut launch.command(program, rest))
        .map_err(|e| format!("cannot start {}: {e}", program.to_string_lossy()))?;
    Ok(run::exit_code(status))
}

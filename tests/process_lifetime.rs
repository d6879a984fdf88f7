//! A program that ends with work in flight and a trace open (`c_tests/lifetime/`): returning
//! from main, `exit()` from another thread, or SIGKILL. The trace at `HIPSHIM_TRACE` is then
//! a whole trace or absent (never half written: it is written beside the path and renamed
//! onto it), and the process leaves nothing of its own in /dev/shm when it exits, IPC handles
//! included. With a device service: `cli/tests/device_lifetime.rs`.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use amdhip64::trace::read_trace;
use common::ctest::{build, c_tests_dir, Spec};

fn program() -> PathBuf {
    let source_path = c_tests_dir("lifetime").join("exit_in_flight.hip");
    let source = std::fs::read_to_string(&source_path).unwrap();
    let spec = Spec::parse(&source, &source_path);
    build(&source_path, "lifetime_exit_in_flight", &spec.targets)
}

fn scratch(test: &str) -> PathBuf {
    let dir = common::target_dir()
        .join("lifetime-tests")
        .join(format!("{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn command(mode: &str, trace: &Path) -> Command {
    let mut cmd = Command::new(program());
    common::clear_loader_env(&mut cmd);
    common::use_simulator(&mut cmd, "gfx942");
    for var in ["HIPSHIM_STATS", "HIPSHIM_LOG", "HSASIM_DEVICE_SERVICE"] {
        cmd.env_remove(var);
    }
    cmd.arg(mode).env("HIPSHIM_TRACE", trace);
    cmd
}

/// /dev/shm entries whose name holds `pid` (what a process would leave of its own there).
fn shm_entries_of(pid: u32) -> Vec<String> {
    let pid = pid.to_string();
    std::fs::read_dir("/dev/shm")
        .map(|dir| {
            dir.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|name| {
                    name.split(|c: char| !c.is_ascii_digit())
                        .any(|part| part == pid)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Files of `dir` other than `trace` (a partial trace left behind, say).
fn others(dir: &Path, trace: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p != trace)
        .collect()
}

fn exits_with_a_whole_trace(mode: &str) {
    let dir = scratch(mode);
    let trace = dir.join("trace.json");
    let mut cmd = command(mode, &trace);
    let out = common::run(&mut cmd, common::program_timeout());
    let report = out.report(&cmd);
    assert!(!out.timed_out, "{mode}: did not finish\n{report}");
    assert_eq!(out.status.code(), Some(0), "{mode}\n{report}");
    let events = read_trace(&trace).unwrap_or_else(|e| {
        panic!(
            "{mode}: no whole trace at {}: {e}\n{report}",
            trace.display()
        )
    });
    assert!(!events.is_empty(), "{mode}: an empty trace");
    assert_eq!(
        others(&dir, &trace),
        Vec::<PathBuf>::new(),
        "{mode}: files left beside the trace"
    );
}

#[test]
fn returning_from_main_with_work_in_flight_writes_a_whole_trace() {
    exits_with_a_whole_trace("normal");
}

#[test]
fn exit_from_another_thread_while_launching_writes_a_whole_trace() {
    exits_with_a_whole_trace("thread-exit");
}

#[test]
fn a_killed_process_leaves_no_partial_trace_at_the_path() {
    let dir = scratch("kill");
    let trace = dir.join("trace.json");
    let mut cmd = command("kill", &trace);
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the program");
    let pid = child.id();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "READY", "the program did not get going");
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        !trace.exists(),
        "a SIGKILLed process left a file at the trace's path ({} bytes)",
        std::fs::metadata(&trace).map(|m| m.len()).unwrap_or(0)
    );
    // The partial file the trace was being written to is the process's own: its name says
    // whose it is, and nothing but it is there.
    for left in others(&dir, &trace) {
        let name = left.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(
            name,
            format!("trace.json.{pid}.partial"),
            "unexpected file {name}"
        );
    }
}

#[test]
fn a_process_that_exits_leaves_nothing_of_its_own_in_dev_shm() {
    let dir = scratch("shm");
    let trace = dir.join("trace.json");
    // Holding an exported allocation and an interprocess event to the end (their shared
    // bytes are memfds, which go with the process).
    let mut cmd = command("normal", &trace);
    cmd.arg("ipc");
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the program");
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(shm_entries_of(pid), Vec::<String>::new());
}

//! A program attached to a device service that ends while it holds the service's resources:
//! queues with work in flight, device memory, an exported allocation (hipIpcGetMemHandle) and
//! an exported interprocess event. Whether it returns from main, another of its threads calls
//! `exit()`, or it is killed, the service ends up with none of it: no runlist row of the
//! process, no ring or doorbell, no memory in use, no IPC signal; and the service keeps serving
//! the next program. (An interprocess event's shared page is a memfd of the process,
//! `src/runtime/stream/ipc_event.rs`, which the kernel frees with it; the service holds none.)
//!
//! The program is `c_tests/lifetime/exit_in_flight.hip` with `ipc` (tests/process_lifetime.rs
//! runs it without a service, for the trace file and /dev/shm).

mod common;

use common::{hipshim_output, status_counter as counter, wait_device_status as wait_status};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const PROGRAM: &str = "c_tests/lifetime/exit_in_flight.hip";

fn attached(exe: &Path, service: &str, mode: &str) -> Command {
    let mut cmd = Command::new(exe);
    cmd.args([mode, "ipc"])
        .env("LD_LIBRARY_PATH", common::lib_dir())
        .env("HIPSHIM_DEVICE", "sim")
        .env("HSASIM_DEVICE_SERVICE", service)
        .env_remove("HIPSHIM_TRACE")
        .env_remove("HIPSHIM_STATS")
        .stdin(Stdio::null());
    cmd
}

/// Whether the status still lists anything of process `pid`, or anything at all of the
/// resources the program held (it was the only program attached).
fn leftovers(status: &str, pid: u32) -> Vec<String> {
    let mut left: Vec<String> = ["used", "rings", "doorbells", "ipc_signals"]
        .into_iter()
        .filter(|name| counter(status, name) != 0)
        .map(|name| format!("{name}={}", counter(status, name)))
        .collect();
    let pid = pid.to_string();
    left.extend(
        status
            .lines()
            .filter(|l| l.split_whitespace().next() == Some(pid.as_str()))
            .map(|l| format!("runlist row: {l}")),
    );
    left
}

/// A program that runs until killed: killed when the test is done with it, or fails.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn ends_clean(exe: &Path, service: &str, mode: &str) {
    let mut cmd = attached(exe, service, mode);
    let pid = if mode == "kill" {
        let mut child = Killed(
            cmd.stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("start the program"),
        );
        let child = &mut child.0;
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(
            line.trim(),
            "READY",
            "{mode}: the program did not get going"
        );
        // What it holds while it runs: its exported MiB and its queues.
        let s = common::device_status(service);
        assert!(counter(&s, "used") >= 1 << 20, "{mode}:\n{s}");
        assert!(counter(&s, "rings") >= 1, "{mode}:\n{s}");
        child.kill().unwrap();
        child.wait().unwrap();
        child.id()
    } else {
        let child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the program");
        let pid = child.id();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{mode}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        pid
    };
    let s = wait_status(
        service,
        &format!("cleared what the {mode} program held"),
        |s| leftovers(s, pid).is_empty(),
    );
    assert_eq!(
        counter(&s, "used"),
        0,
        "{mode}: memory still in use after the program ended:\n{s}"
    );
}

#[test]
fn a_program_that_ends_holding_queues_memory_and_ipc_handles_leaves_the_service_clean() {
    let exe = common::build_hip(PROGRAM, "exit_in_flight");
    let name = format!("test-life-{}", std::process::id());
    let out = hipshim_output(["device", "start", "--name", &name, "--memory", "256M"]);
    assert_eq!(out.code(), Some(0), "{}", out.report());
    for mode in ["normal", "thread-exit", "kill"] {
        ends_clean(&exe, &name, mode);
    }
    // The service still serves: one more program runs to its end on it.
    let mut again = attached(&exe, &name, "normal");
    let run = common::run(&mut again, Duration::from_secs(120));
    assert_eq!(run.code(), Some(0), "{}", run.report());
    let out = hipshim_output(["device", "stop", "--name", &name]);
    assert_eq!(out.code(), Some(0), "{}", out.report());
    assert!(!Path::new(&format!("/dev/shm/hsasim-device-{name}.mem")).exists());
}

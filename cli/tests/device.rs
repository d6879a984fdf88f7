//! `hipshim device`: two HIP programs attached to one device service share its runlist (each
//! queue registered with its pid, id and doorbell offset), a program killed mid-run has its
//! queues removed, a program whose service stops fails its next packet, and a program that
//! names a service that is not running fails at start-up; both say why.
//!
//! The programs are the policy experiment's (`c_tests/bench/policy_bench.hip`) with `--go`:
//! each creates its streams' queues, says it is ready and waits for the go file, which leaves
//! time to look at the runlist. One runs in deterministic mode (`HSASIM_THREADS=0`), the other
//! threaded.

mod common;

use common::{
    device_status as status, hipshim_output, status_counter as counter,
    wait_device_status as wait_status,
};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const PROGRAM: &str = "c_tests/bench/policy_bench.hip";

fn program(exe: &Path, service: &str, id_base: u64, threads: &str, go: &Path) -> Child {
    Command::new(exe)
        .args(["--streams", "2", "--kernels", "2", "--work", "1000", "--go"])
        .arg(go)
        .env("LD_LIBRARY_PATH", common::lib_dir())
        .env("HIPSHIM_DEVICE", "sim")
        .env("HIPSHIM_QUEUE_POLICY", "dedicated")
        .env("HSASIM_DEVICE_SERVICE", service)
        .env("HSASIM_QUEUE_ID_BASE", id_base.to_string())
        .env("HSASIM_THREADS", threads)
        // The service's status shows the scheduler on the host's clock; under virtual time the
        // slots are taken on the time line instead (sim/tests/sched.rs tests those).
        .env("HSASIM_TIME", "host")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the program")
}

/// The runlist rows of `device status`: (pid, queue id, doorbell offset).
fn rows(status: &str) -> Vec<(u32, u64, u64)> {
    status
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() < 8 {
                return None;
            }
            Some((
                f[0].parse().ok()?,
                f[1].parse().ok()?,
                u64::from_str_radix(f[2].trim_start_matches("0x"), 16).ok()?,
            ))
        })
        .collect()
}

#[test]
fn two_programs_share_one_runlist_and_a_killed_one_leaves_it() {
    let exe = common::build_hip(PROGRAM, "policy_bench");
    let name = format!("test-{}", std::process::id());
    let out = hipshim_output([
        "device",
        "start",
        "--name",
        &name,
        "--max-procs",
        "1",
        "--quantum-us",
        "2000",
    ]);
    assert_eq!(out.code(), Some(0), "{}", out.report());
    let dir: PathBuf =
        std::env::temp_dir().join(format!("hipshim-device-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let go = dir.join("go");
    let a = program(&exe, &name, 0, "0", &go);
    let mut b = program(&exe, &name, 1000, "1", &go);
    let (pa, pb) = (a.id(), b.id());

    // Both programs' queues are in the runlist, each with its own pid and ids.
    let s = wait_status(&name, "saw both programs' queues", |s| {
        let r = rows(s);
        r.iter().filter(|q| q.0 == pa).count() >= 3 && r.iter().filter(|q| q.0 == pb).count() >= 3
    });
    let r = rows(&s);
    assert!(
        r.iter()
            .filter(|q| q.0 == pa)
            .all(|q| q.1 < 1000 && q.2 == q.1 * 8),
        "{s}"
    );
    assert!(
        r.iter()
            .filter(|q| q.0 == pb)
            .all(|q| q.1 >= 1000 && q.2 == q.1 * 8),
        "{s}"
    );
    assert!(
        s.contains("(oversubscribed)"),
        "two processes, one per quantum:\n{s}"
    );

    // Killed without a chance to clean up: the service removes its queues.
    b.kill().unwrap();
    b.wait().unwrap();
    let s = wait_status(&name, "removed the killed program's queues", |s| {
        !rows(s).iter().any(|q| q.0 == pb)
    });
    assert_eq!(counter(&s, "processes_reaped"), 1, "{s}");
    assert!(!s.contains("(oversubscribed)"), "{s}");

    // The other one runs its kernels to the end on the service's slots.
    std::fs::write(&go, b"").unwrap();
    let out = a.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.starts_with("kernel "))
            .count(),
        4
    );
    let s = status(&name);
    assert!(counter(&s, "packets") >= 4, "{s}");
    assert!(counter(&s, "runlist_updates") >= 6, "{s}");
    assert!(counter(&s, "time_slices") >= 1, "{s}");

    // The service stops under a waiting program: its next packet fails, saying why.
    let go2 = dir.join("go2");
    let c = program(&exe, &name, 0, "1", &go2);
    let pc = c.id();
    wait_status(&name, "saw the third program's queues", |s| {
        rows(s).iter().filter(|q| q.0 == pc).count() >= 3
    });
    let out = hipshim_output(["device", "stop", "--name", &name]);
    assert_eq!(out.code(), Some(0), "{}", out.report());
    assert!(!Path::new(&format!("/dev/shm/hsasim-device-{name}")).exists());
    std::fs::write(&go2, b"").unwrap();
    let out = c.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("device service {name} is gone")),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);

    // The service is gone: hsa_init fails and says why.
    let out = common::run(
        Command::new(&exe)
            .args(["--streams", "1", "--kernels", "1", "--work", "1"])
            .env("LD_LIBRARY_PATH", common::lib_dir())
            .env("HIPSHIM_DEVICE", "sim")
            .env("HSASIM_DEVICE_SERVICE", &name),
        Duration::from_secs(60),
    );
    assert_ne!(out.code(), Some(0), "{}", out.report());
    assert!(
        out.stderr.contains(&format!(
            "HSASIM_DEVICE_SERVICE={name}: device service {name} is not running"
        )),
        "{}",
        out.report()
    );
}

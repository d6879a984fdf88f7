//! `hipshim device`'s device memory: processes attached to one service allocate from its
//! memory, at addresses every one of them shares. One process exports an allocation it filled
//! by a kernel (hipIpcGetMemHandle), another opens the handle at the same address, reads the
//! bytes and doubles them, and the first sees its writes; a process killed while it holds
//! memory has it freed by the service; once the service stopped, the next allocation fails
//! and says why.
//!
//! The roles are `c_tests/device/shared_memory.hip`'s. The exporter runs threaded with its
//! device memory out of the CPU's reach (strict, no large BAR), the importer deterministic
//! (`HSASIM_THREADS=0`) with a large BAR, so that it also reads the bytes in place.

mod common;

use common::{
    device_status as status, hipshim_output, status_counter as counter,
    wait_device_status as wait_status,
};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const PROGRAM: &str = "c_tests/device/shared_memory.hip";

fn role(exe: &Path, service: &str, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .env("LD_LIBRARY_PATH", common::lib_dir())
        .env("HIPSHIM_DEVICE", "sim")
        .env("HSASIM_DEVICE_SERVICE", service);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

fn spawn(mut cmd: Command) -> Child {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the program")
}

/// A program the test started, killed when the test ends however it ends (a failed
/// assertion included), so that none is left waiting for a file.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl std::ops::Deref for Running {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.0
    }
}

impl std::ops::DerefMut for Running {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

/// A device service the test started, stopped when the test ends however it ends.
struct Service(String);

impl Drop for Service {
    fn drop(&mut self) {
        let _ = common::hipshim(["device", "stop", "--name", &self.0]).output();
    }
}

fn wait_file(path: &Path, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !path.exists() {
        if let Some(st) = child.try_wait().unwrap() {
            panic!("the program ended ({st}) before writing {}", path.display());
        }
        assert!(Instant::now() < deadline, "no {}", path.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn pointer(stdout: &str, who: &str) -> u64 {
    let p = stdout
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{who} pointer ")))
        .unwrap_or_else(|| panic!("no {who} pointer in {stdout}"));
    u64::from_str_radix(p.trim().trim_start_matches("0x"), 16).unwrap()
}

#[test]
fn device_memory_is_shared_across_processes_reaped_and_refused_without_the_service() {
    let exe = common::build_hip(PROGRAM, "shared_memory");
    let name = format!("test-mem-{}", std::process::id());
    let out = hipshim_output(["device", "start", "--name", &name, "--memory", "256M"]);
    assert_eq!(out.code(), Some(0), "{}", out.report());
    let s = status(&name);
    assert!(
        s.contains("memory: size=268435456 used=0 free=268435456 base=0x600000000000"),
        "{s}"
    );
    let dir: PathBuf =
        std::env::temp_dir().join(format!("hipshim-devmem-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.to_str().unwrap();

    // IPC through the service: the same bytes at the same address in both processes.
    let mut export = role(&exe, &name, &["export", d], &[("HSASIM_THREADS", "1")]);
    let mut import = role(
        &exe,
        &name,
        &["import", d],
        &[("HSASIM_THREADS", "0"), ("HSASIM_LARGE_BAR", "1")],
    );
    let a = std::thread::spawn(move || common::run(&mut export, Duration::from_secs(180)));
    let b = common::run(&mut import, Duration::from_secs(180));
    let a = a.join().unwrap();
    assert_eq!(a.code(), Some(0), "{}", a.report());
    assert_eq!(b.code(), Some(0), "{}", b.report());
    let (pa, pb) = (
        pointer(&a.stdout, "exporter"),
        pointer(&b.stdout, "importer"),
    );
    assert_eq!(pa, pb, "{}\n{}", a.report(), b.report());
    assert!(
        (0x6000_0000_0000..0x6000_1000_0000).contains(&pa),
        "{pa:#x} is in the service's device memory"
    );
    let s = wait_status(&name, "freed the exited programs' memory", |s| {
        counter(s, "used") == 0
    });
    assert_eq!(counter(&s, "ipc_attaches"), 1, "{s}");
    assert_eq!(counter(&s, "allocated"), 1, "{s}");
    assert_eq!(counter(&s, "freed"), 1, "the exporter's hipFree:\n{s}");

    // A process killed while it holds 64 MiB: the service frees them.
    let hold_dir = dir.join("hold");
    std::fs::create_dir_all(&hold_dir).unwrap();
    let mut holder = spawn(role(
        &exe,
        &name,
        &["hold", hold_dir.to_str().unwrap(), "64"],
        &[("HSASIM_THREADS", "1")],
    ));
    wait_file(&hold_dir.join("ready"), &mut holder);
    let s = status(&name);
    assert!(counter(&s, "used") >= 64 << 20, "{s}");
    let reaped_before = counter(&s, "reaped_bytes");
    holder.kill().unwrap();
    holder.wait().unwrap();
    let s = wait_status(&name, "freed the killed program's memory", |s| {
        counter(s, "used") == 0
    });
    assert!(
        counter(&s, "reaped_bytes") - reaped_before >= 64 << 20,
        "{s}"
    );
    assert_eq!(counter(&s, "free"), 256 << 20, "{s}");

    // The service stops under a program: its next allocation fails, saying why.
    let again_dir = dir.join("again");
    std::fs::create_dir_all(&again_dir).unwrap();
    let mut again = spawn(role(
        &exe,
        &name,
        &["again", again_dir.to_str().unwrap()],
        &[("HSASIM_THREADS", "1")],
    ));
    wait_file(&again_dir.join("ready"), &mut again);
    let out = hipshim_output(["device", "stop", "--name", &name]);
    assert_eq!(out.code(), Some(0), "{}", out.report());
    assert!(!Path::new(&format!("/dev/shm/hsasim-device-{name}.mem")).exists());
    std::fs::write(again_dir.join("go"), b"").unwrap();
    let out = again.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "hsa_amd_memory_pool_allocate: device service {name} is gone"
        )),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The IPC program of `c_tests/ipc/` (a parent and the child it starts, each opening two
/// handles into one allocation) with both processes attached to one service, in both modes.
#[test]
fn the_ipc_program_passes_with_both_processes_on_one_service() {
    let exe = common::build_hip("c_tests/ipc/ipc.hip", "ipc");
    let name = format!("test-ipc-{}", std::process::id());
    let out = hipshim_output(["device", "start", "--name", &name, "--memory", "64M"]);
    assert_eq!(out.code(), Some(0), "{}", out.report());
    for threads in ["1", "0"] {
        let out = common::run(
            &mut role(&exe, &name, &[], &[("HSASIM_THREADS", threads)]),
            Duration::from_secs(180),
        );
        assert!(out.stdout.contains("ipc: PASSED"), "{}", out.report());
    }
    let s = status(&name);
    assert_eq!(counter(&s, "ipc_attaches"), 4, "two handles a run:\n{s}");
    let out = hipshim_output(["device", "stop", "--name", &name]);
    assert_eq!(out.code(), Some(0), "{}", out.report());
}

/// The `device status` rows of process `pid`, each as its columns by header name.
fn queue_rows(status: &str, pid: u32) -> Vec<std::collections::HashMap<String, String>> {
    let mut lines = status.lines();
    let Some(header) = lines.find(|l| l.trim_start().starts_with("pid ")) else {
        return Vec::new();
    };
    let names: Vec<&str> = header.split_whitespace().collect();
    lines
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() == names.len() && f[0] == pid.to_string())
        .map(|f| {
            names
                .iter()
                .zip(f)
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

/// A program's AQL queues live in the service's device memory and their doorbells in its
/// segment: `device status` (another process) reads the queue the program launched K kernels
/// on, with read and write index K, doorbell K - 1 (the last packet's id) and the ring in the
/// device memory; killing the program gives back its rings, blocks and doorbells. Threaded
/// with the device memory out of the CPU's reach, deterministic with a large BAR.
#[test]
fn queues_rings_and_doorbells_are_the_services_and_go_with_a_killed_program() {
    const K: u64 = 5;
    let exe = common::build_hip(PROGRAM, "shared_memory");
    let name = format!("test-queues-{}", std::process::id());
    let _service = Service(name.clone());
    let out = hipshim_output(["device", "start", "--name", &name, "--memory", "64M"]);
    assert_eq!(out.code(), Some(0), "{}", out.report());
    let dir: PathBuf =
        std::env::temp_dir().join(format!("hipshim-devq-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (round, threads) in ["1", "0"].into_iter().enumerate() {
        let run_dir = dir.join(threads);
        std::fs::create_dir_all(&run_dir).unwrap();
        let mut program = Running(spawn(role(
            &exe,
            &name,
            &["queue", run_dir.to_str().unwrap(), &K.to_string()],
            // Deterministic with a large BAR, so that both ways of giving the CPU the
            // queue's memory run.
            &[
                ("HSASIM_THREADS", threads),
                ("HSASIM_LARGE_BAR", if threads == "0" { "1" } else { "0" }),
            ],
        )));
        wait_file(&run_dir.join("ready"), &mut program);
        let pid = program.id();
        // The read index moves just after the last kernel's completion signal, which the
        // program waited for.
        let s = wait_status(&name, "saw the queue's packets consumed", |s| {
            let rows = queue_rows(s, pid);
            rows.iter().any(|r| r["wptr"] == K.to_string())
                && rows.iter().all(|r| r["rptr"] == r["wptr"])
        });
        let rows = queue_rows(&s, pid);
        assert!(
            !rows.is_empty(),
            "HSASIM_THREADS={threads}: no queues of {pid}:\n{s}"
        );
        let mem_base = s
            .split_whitespace()
            .find_map(|w| w.strip_prefix("base=0x"))
            .and_then(|v| u64::from_str_radix(v, 16).ok())
            .unwrap_or_else(|| panic!("no base in\n{s}"));
        let mem_size = counter(&s, "size");
        for r in &rows {
            let ring = u64::from_str_radix(r["ring"].trim_start_matches("0x"), 16)
                .unwrap_or_else(|_| panic!("no ring address:\n{s}"));
            let bytes: u64 = r["ring_bytes"].parse().unwrap();
            assert!(
                ring >= mem_base && ring + bytes <= mem_base + mem_size && bytes >= 4096,
                "the ring lies in the device memory:\n{s}"
            );
        }
        let launched: Vec<_> = rows.iter().filter(|r| r["wptr"] == K.to_string()).collect();
        assert_eq!(launched.len(), 1, "one queue took the {K} kernels:\n{s}");
        assert_eq!(launched[0]["rptr"], K.to_string(), "all consumed:\n{s}");
        assert_eq!(launched[0]["db_value"], (K - 1).to_string(), "{s}");
        assert_eq!(counter(&s, "rings"), rows.len() as u64, "{s}");
        assert_eq!(counter(&s, "doorbells"), rows.len() as u64, "{s}");
        assert!(counter(&s, "ring_bytes") >= rows.len() as u64 * 8192, "{s}");

        let (rings_reaped, queues_reaped) =
            (counter(&s, "rings_reaped"), counter(&s, "queues_reaped"));
        program.kill().unwrap();
        program.wait().unwrap();
        let s = wait_status(&name, "reclaimed the killed program's queues", |s| {
            counter(s, "rings") == 0 && queue_rows(s, pid).is_empty()
        });
        assert_eq!(counter(&s, "doorbells"), 0, "{s}");
        assert_eq!(counter(&s, "used"), 0, "{s}");
        assert_eq!(counter(&s, "processes_reaped"), round as u64 + 1, "{s}");
        let n = rows.len() as u64;
        assert_eq!(counter(&s, "rings_reaped"), rings_reaped + n, "{s}");
        assert_eq!(counter(&s, "queues_reaped"), queues_reaped + n, "{s}");
    }
    let out = hipshim_output(["device", "stop", "--name", &name]);
    assert_eq!(out.code(), Some(0), "{}", out.report());
    let _ = std::fs::remove_dir_all(&dir);
}

/// With a compute-unit budget (`--cu-budget 1`), attached programs' dispatches compete for
/// the units: while one program's kernel spins on the only unit, another's kernels wait for
/// it, and run once it is given back; a program killed while its kernel holds the unit has
/// it taken back by the service.
#[test]
fn attached_programs_dispatches_compete_for_the_compute_unit_budget() {
    let exe = common::build_hip(PROGRAM, "shared_memory");
    let name = format!("test-cus-{}", std::process::id());
    let _service = Service(name.clone());
    let out = hipshim_output([
        "device",
        "start",
        "--name",
        &name,
        "--memory",
        "64M",
        "--cu-budget",
        "1",
        // A serialised runlist update would unmap the spinning kernel's queue, and wait for
        // the kernel to end before it maps the other program's: the programs would wait for
        // a slot, not for the unit.
        "--serial-updates",
        "0",
    ]);
    assert_eq!(out.code(), Some(0), "{}", out.report());
    assert_eq!(counter(&status(&name), "cu_budget"), 1);
    let dir: PathBuf =
        std::env::temp_dir().join(format!("hipshim-devcu-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let sub = |d: &str| {
        let p = dir.join(d);
        std::fs::create_dir_all(&p).unwrap();
        p
    };
    let (hog_dir, queue_dir, killed_dir) = (sub("hog"), sub("queue"), sub("killed"));

    let mut hog = Running(spawn(role(
        &exe,
        &name,
        &["hog", hog_dir.to_str().unwrap()],
        &[("HSASIM_THREADS", "1")],
    )));
    wait_file(&hog_dir.join("ready"), &mut hog);
    wait_status(&name, "saw the spinning kernel take the unit", |s| {
        counter(s, "cu_in_use") == 1
    });
    let mut waiting = Running(spawn(role(
        &exe,
        &name,
        &["queue", queue_dir.to_str().unwrap(), "2"],
        &[("HSASIM_THREADS", "0")],
    )));
    wait_status(&name, "saw the second program's kernel wait", |s| {
        counter(s, "cu_waits") >= 1
    });
    assert!(
        !queue_dir.join("ready").exists(),
        "its kernels cannot have run"
    );
    std::fs::write(hog_dir.join("go"), b"").unwrap();
    let status = hog.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut hog.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(status.success(), "{stderr}");
    wait_file(&queue_dir.join("ready"), &mut waiting);
    let s = wait_status(&name, "saw every unit back", |s| {
        counter(s, "cu_in_use") == 0
    });
    assert_eq!(counter(&s, "cu_max_in_use"), 1, "{s}");
    waiting.kill().unwrap();
    waiting.wait().unwrap();

    let mut killed = Running(spawn(role(
        &exe,
        &name,
        &["hog", killed_dir.to_str().unwrap()],
        &[("HSASIM_THREADS", "1")],
    )));
    wait_file(&killed_dir.join("ready"), &mut killed);
    wait_status(
        &name,
        "saw the killed program's kernel take the unit",
        |s| counter(s, "cu_in_use") == 1,
    );
    killed.kill().unwrap();
    killed.wait().unwrap();
    let s = wait_status(&name, "took the killed program's unit back", |s| {
        counter(s, "cu_in_use") == 0
    });
    assert_eq!(counter(&s, "cu_reaped"), 1, "{s}");
    let out = hipshim_output(["device", "stop", "--name", &name]);
    assert_eq!(out.code(), Some(0), "{}", out.report());
    let _ = std::fs::remove_dir_all(&dir);
}

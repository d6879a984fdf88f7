//! The dispatch limits: `HSASIM_MAX_WAVE_INSTRUCTIONS` and `HSASIM_DISPATCH_TIMEOUT` stop an
//! endless kernel, all its waves, with a queue error naming the limit, and the device
//! keeps working; malformed values warn on stderr and leave the defaults. The host's own
//! limit too: private memory it cannot provide fails the dispatch, not the process.
//!
//! hsasim reads its configuration once, at `hsa_init`, so each case runs this test binary
//! again as a child process (the `child` test) with the limit in its environment (or its
//! address space limited), once per mode.
mod common;
use common::*;
use std::process::Command;

const KERNELS: &str = r#"
extern "C" __attribute__((global)) void spin(volatile int* stop) {
    while (*stop == 0) {}
}
extern "C" __attribute__((global)) void store(int* out, int v) {
    out[__builtin_amdgcn_workitem_id_x()] = v;
}
"#;

/// Set in the child's environment: which case it runs.
const CASE: &str = "HSASIM_LIMITS_TEST_CASE";

/// Runs `case` in a child with `env`, in threaded and deterministic mode; returns each
/// run's stderr after checking the child passed.
fn run_child(case: &str, env: &[(&str, &str)]) -> Vec<String> {
    ["1", "0"]
        .iter()
        .map(|threads| {
            let exe = std::env::current_exe().expect("test executable path");
            let mut cmd = Command::new(exe);
            cmd.args(["--exact", "child", "--nocapture", "--test-threads=1"])
                .env(CASE, case)
                .env("HSASIM_THREADS", threads)
                .env("HSASIM_WORKERS", "2")
                .env_remove("HSASIM_GFX")
                .env_remove("HSASIM_MAX_WAVE_INSTRUCTIONS")
                .env_remove("HSASIM_DISPATCH_TIMEOUT");
            for (k, v) in env {
                cmd.env(k, v);
            }
            let out = cmd.output().expect("the child runs");
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success() && stdout.contains("child passed"),
                "case {case} (HSASIM_THREADS={threads}) failed: {}\nstdout:\n{stdout}\nstderr:\n{stderr}",
                out.status
            );
            stderr
        })
        .collect()
}

#[test]
fn instruction_limit_stops_an_endless_kernel_and_the_device_keeps_working() {
    for stderr in run_child(
        "endless",
        &[
            ("HSASIM_MAX_WAVE_INSTRUCTIONS", "1000000"),
            ("HSASIM_DISPATCH_TIMEOUT", "100000"),
        ],
    ) {
        assert!(
            stderr
                .contains("executed more than 1000000 instructions (HSASIM_MAX_WAVE_INSTRUCTIONS)"),
            "{stderr}"
        );
    }
}

#[test]
fn dispatch_timeout_stops_an_endless_kernel_and_the_device_keeps_working() {
    for stderr in run_child(
        "endless",
        &[
            ("HSASIM_MAX_WAVE_INSTRUCTIONS", "1000000000000000"),
            ("HSASIM_DISPATCH_TIMEOUT", "1"),
        ],
    ) {
        assert!(
            stderr.contains("still running after 1 s (HSASIM_DISPATCH_TIMEOUT)"),
            "{stderr}"
        );
        assert!(stderr.contains("0 of 4 workgroups finished"), "{stderr}");
    }
}

#[test]
fn zero_limits_warn_and_the_defaults_apply() {
    for stderr in run_child(
        "normal",
        &[
            ("HSASIM_MAX_WAVE_INSTRUCTIONS", "0"),
            ("HSASIM_DISPATCH_TIMEOUT", "0"),
        ],
    ) {
        for name in ["HSASIM_MAX_WAVE_INSTRUCTIONS", "HSASIM_DISPATCH_TIMEOUT"] {
            assert!(
                stderr.contains(&format!("hsasim: ignoring {name}=\"0\"")),
                "{name}: {stderr}"
            );
        }
    }
}

#[test]
fn private_memory_the_host_cannot_provide_is_an_out_of_resources_queue_error() {
    run_child("private_memory", &[]);
}

/// Limits the process's address space to what it uses now plus `headroom` bytes.
fn limit_address_space(headroom: u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let vm_kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmSize:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmSize in /proc/self/status");
    let limit = libc::rlimit {
        rlim_cur: vm_kib * 1024 + headroom,
        rlim_max: vm_kib * 1024 + headroom,
    };
    // SAFETY: setrlimit reads the struct; lowering a limit has no other effect.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) }, 0);
}

/// The child side; does nothing when run as an ordinary test.
#[test]
fn child() {
    let Ok(case) = std::env::var(CASE) else {
        return;
    };
    let _h = Hsa::init();
    let exec = load_executable(&compile_hip(KERNELS, "gfx942")).expect("loads");
    let buffer = pool_alloc(host_visible_pool(), 256).unwrap();
    let kernarg = pool_alloc(kernarg_pool(), 64).unwrap();
    // SAFETY: fresh 256-byte buffer and 64-byte kernarg block; both kernels take the buffer
    // as their first argument and `store` its value at 8.
    unsafe {
        std::ptr::write_bytes(buffer as *mut u8, 0, 256);
        (kernarg as *mut u64).write(buffer as u64);
        (kernarg as *mut i32).add(2).write(7);
    }
    if case == "endless" {
        // Four workgroups on two workers: every wave of the dispatch must stop.
        let q = queue(64, Some(record_queue_error), std::ptr::null_mut());
        let done = signal(1);
        let spin = kernel_object(exec, "spin.kd");
        // SAFETY: a live queue and a 64-byte packet.
        unsafe { publish(q, dispatch(spin, kernarg, 256, 64, done)) };
        assert_eq!(queue_error(q), status::AMD_ERROR_ILLEGAL_INSTRUCTION);
        assert_eq!(hsa_signal_load_relaxed(done), 1);
        assert_eq!(hsa_queue_destroy(q), status::SUCCESS);
    }
    if case == "private_memory" {
        // A workgroup of 16 waves, each wanting 64 MiB of private memory (1 MiB per
        // work-item), in a process left 256 MiB to grow.
        let q = queue(64, Some(record_queue_error), std::ptr::null_mut());
        let done = signal(1);
        let mut packet = dispatch(kernel_object(exec, "store.kd"), kernarg, 1024, 1024, done);
        packet.private_segment_size = 1 << 20;
        limit_address_space(256 << 20);
        // SAFETY: a live queue and a 64-byte packet.
        unsafe { publish(q, packet) };
        assert_eq!(queue_error(q), status::ERROR_OUT_OF_RESOURCES);
        assert_eq!(hsa_queue_destroy(q), status::SUCCESS);
    }
    let q = queue(64, Some(record_queue_error), std::ptr::null_mut());
    let done = signal(1);
    let store = kernel_object(exec, "store.kd");
    // SAFETY: a live queue and a 64-byte packet.
    unsafe { publish(q, dispatch(store, kernarg, 64, 64, done)) };
    assert_eq!(wait_eq(done, 0, 10 * SECOND), 0, "the device still works");
    // SAFETY: the kernel finished writing the buffer.
    assert_eq!(unsafe { *(buffer as *const i32).add(63) }, 7);
    hsa_queue_destroy(q);
    hsa_amd_memory_pool_free(buffer);
    hsa_amd_memory_pool_free(kernarg);
    println!("child passed");
}

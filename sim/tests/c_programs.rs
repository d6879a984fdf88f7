//! HSA-level C programs (`tests/c/*.c`, written against Debian's `<hsa/hsa.h>` and
//! `<hsa/hsa_ext_amd.h>`) compiled with gcc at test time, linked against `libhsasim.so` as
//! `libhsa-runtime64.so.1`, and run in both the threaded and the deterministic
//! (`HSASIM_THREADS=0`) mode. Each program checks its own results and says what differed.
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const SOURCE_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/c");

fn build_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = common::rocr_link_dir("c-programs");
        assert!(
            Path::new("/usr/include/hsa/hsa.h").exists(),
            "/usr/include/hsa/hsa.h is missing: install libhsa-runtime-dev (scripts/setup.sh)"
        );
        dir
    })
}

/// Compiles `tests/c/<name>.c` (once per test process) and returns the executable.
fn program(name: &str) -> PathBuf {
    let dir = build_dir();
    let exe = dir.join(name);
    let src = Path::new(SOURCE_DIR).join(format!("{name}.c"));
    let out = Command::new("gcc")
        .args([
            "-std=gnu11",
            "-O1",
            "-g",
            "-Wall",
            "-Wextra",
            "-Wno-unused-function",
            "-Werror=implicit-function-declaration",
        ])
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", dir.display()))
        .arg("-l:libhsa-runtime64.so.1")
        .arg(format!("-Wl,-rpath,{}", dir.display()))
        .arg("-lpthread")
        .output()
        .expect("gcc runs");
    assert!(
        out.status.success(),
        "gcc failed for {}:\n{}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// Builds `tests/c/<stem>.hip` with clang-19 into a raw gfx942 code object (once per test
/// process and stem).
fn code_object(stem: &str, extra: &[&str]) -> PathBuf {
    static BUILT: std::sync::Mutex<Vec<(String, PathBuf)>> = std::sync::Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap();
    if let Some((_, p)) = built.iter().find(|(s, _)| s == stem) {
        return p.clone();
    }
    let out = build_dir().join(format!("{stem}.co"));
    let st = Command::new("clang++-19")
        .args([
            "-x",
            "hip",
            "-nogpuinc",
            "-nogpulib",
            "--offload-arch=gfx942",
            "--cuda-device-only",
            "--no-gpu-bundle-output",
            "-O3",
            "-mcode-object-version=5",
        ])
        .args(extra)
        .arg(Path::new(SOURCE_DIR).join(format!("{stem}.hip")))
        .arg("-o")
        .arg(&out)
        .status()
        .expect("clang++-19 runs (apt-get install clang-19 lld-19)");
    assert!(st.success(), "clang++-19 failed on {stem}.hip");
    built.push((stem.to_string(), out.clone()));
    out
}

/// The kernel for `executable_dispatch` and `loader_extension`.
fn scale_code_object() -> PathBuf {
    code_object("scale", &[])
}

/// Runs the program in one mode with a 120 s limit; panics with its output on failure.
fn run(exe: &Path, args: &[&Path], env: &[(&str, &str)], threads: &str) {
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .env("LD_LIBRARY_PATH", build_dir())
        .env("HSASIM_THREADS", threads)
        .env_remove("HSASIM_GPUS")
        .env_remove("HSASIM_GFX")
        .env_remove("HSASIM_CUS")
        .env_remove("HSASIM_MAX_QUEUES");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("test program starts");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if child.try_wait().expect("wait").is_some() || Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let timed_out = child.try_wait().expect("wait").is_none();
    if timed_out {
        let _ = child.kill();
    }
    let out = child.wait_with_output().expect("output");
    let name = exe.file_name().unwrap().to_string_lossy();
    assert!(
        !timed_out && out.status.success(),
        "{name} (HSASIM_THREADS={threads}) {}:\nstdout:\n{}\nstderr:\n{}",
        if timed_out {
            "timed out".to_string()
        } else {
            format!("exited with {}", out.status)
        },
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn both_modes(name: &str, args: &[&Path]) {
    both_modes_with(name, args, &[]);
}

fn both_modes_with(name: &str, args: &[&Path], env: &[(&str, &str)]) {
    let exe = program(name);
    run(&exe, args, env, "1");
    run(&exe, args, env, "0");
}

#[test]
fn c_invalid_signal_handles_are_reported_and_signal_ops_follow_hsa() {
    both_modes("signal_invalid_handle", &[]);
}

#[test]
fn c_full_queue_producer_waits_for_room() {
    both_modes("queue_full_producer_waits", &[]);
}

#[test]
fn c_copy_waits_for_a_dependency_signalled_later() {
    both_modes("copy_waits_for_dependency", &[]);
}

#[test]
fn c_barrier_and_waits_for_a_signal_from_another_queue() {
    both_modes("barrier_and_two_queues", &[]);
}

#[test]
fn c_queue_error_callback_reports_bad_packets_and_stops_the_queue() {
    both_modes("queue_error_callback", &[]);
}

#[test]
fn c_executable_loads_a_clang_code_object_and_dispatches_it() {
    both_modes("executable_dispatch", &[&scale_code_object()]);
}

#[test]
fn c_system_agent_region_cache_info_signal_groups_and_queue_limit() {
    both_modes_with(
        "system_agent_info",
        &[],
        &[
            ("HSASIM_GPUS", "2"),
            ("HSASIM_CUS", "40"),
            ("HSASIM_MAX_QUEUES", "4"),
        ],
    );
}

#[test]
fn c_amd_loader_extension_maps_addresses_to_loaded_code_objects() {
    both_modes("loader_extension", &[&scale_code_object()]);
}

#[test]
fn c_device_globals_resolve_external_variables_and_relative_relocations() {
    // The external `ext_bias` stays undefined in the code object (the loader resolves it).
    let co = code_object(
        "globals",
        &["-Xoffload-linker", "--unresolved-symbols=ignore-all"],
    );
    both_modes("global_variables", &[&co]);
}

#[test]
fn c_hidden_exports_are_not_found_and_the_rest_work() {
    both_modes_with(
        "hidden_exports",
        &[],
        &[(
            "HSASIM_HIDE",
            "hsa_amd_memory_async_copy_on_engine, hsa_amd_memory_copy_engine_status",
        )],
    );
}

#[test]
fn c_cpu_touch_of_device_memory_without_a_large_bar_is_named_and_fatal() {
    use std::os::unix::process::ExitStatusExt;
    let exe = program("cpu_touch");
    for threads in ["1", "0"] {
        // A large BAR: the CPU reads and writes device memory.
        run(
            &exe,
            &[Path::new("bar")],
            &[("HSASIM_LARGE_BAR", "1")],
            threads,
        );
        // None (strict's default): copies reach the memory, the CPU store dies of it, and
        // hsasim says why first.
        let out = Command::new(&exe)
            .arg("nobar")
            .env("LD_LIBRARY_PATH", build_dir())
            .env("HSASIM_THREADS", threads)
            .env("HSASIM_STRICT", "1")
            .env_remove("HSASIM_LARGE_BAR")
            .env_remove("HSASIM_GPUS")
            .env_remove("HSASIM_GFX")
            .output()
            .expect("test program runs");
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        let touched = stdout
            .lines()
            .find_map(|l| l.strip_prefix("touching 0x"))
            .unwrap_or_else(|| panic!("no touch reached:\n{stdout}\n{stderr}"));
        assert_eq!(
            out.status.signal(),
            Some(libc::SIGSEGV),
            "the touch must fault as on hardware:\n{stdout}\n{stderr}"
        );
        assert!(
            stderr.contains("strict rule `cpu-touch-device-memory`")
                && stderr.contains(&format!("the CPU touched 0x{touched}")),
            "the fault is named with its address:\n{stderr}"
        );
        assert!(!stdout.contains("cpu_touch: ok"));
    }
}

#[test]
fn c_signals_get_interrupt_events_up_to_kfds_limit_then_poll() {
    both_modes("signal_events", &[]);
}

//! HIP programs in `c_tests/` built with a stock clang against `hip_headers/`
//! and run on hipshim over the software GPU (hsasim).
//!
//! Each `c_tests/NAME.hip` checks its own results and exits non-zero with a
//! message when something differs. The program is built once by
//! `scripts/build-hip.sh` (clang-19, `-nogpuinc`, our headers), as a fat binary
//! holding a code object for each of its targets, linked with `-lamdhip64`
//! against the staged lib dir (rpath to it), and run once per target with
//! `HSASIM_GFX=<target>`: one test function per program × target, so a failure
//! names both.
//!
//! The runner (build, run, the `// hipshim-test:` line) lives in
//! `tests/common/ctest.rs`. This file covers the top-level `c_tests/*.hip`
//! (the walking skeleton); each area has its own directory and test file.
//!
//! `c_tests/compile_only/` holds programs that are only built: they check that
//! the headers cover what they declare, in HIP mode and for a host-only C++
//! compiler.

mod common;

use std::process::Command;

use common::ctest::{build, c_tests_dir, Spec, CLANG, DEFAULT_TARGETS};
use common::Fnv;

c_tests! {
    dir "";
    vector_add_gfx942 => "vector_add" on "gfx942";
    vector_add_gfx90a => "vector_add" on "gfx90a";
    bad_input_gfx942 => "bad_input" on "gfx942";
    no_binary_gfx90a => "no_binary" on "gfx90a";
    device_fault_gfx942 => "device_fault" on "gfx942";
    device_fault_gfx90a => "device_fault" on "gfx90a";
    launch_bounds_gfx942 => "launch_bounds" on "gfx942";
    launch_bounds_gfx90a => "launch_bounds" on "gfx90a";
}

/// The headers cover the device and host surface they declare: a program using
/// all of it compiles for every target and links against the shim.
#[test]
fn headers_compile_a_program_using_all_they_declare() {
    let source = c_tests_dir("").join("compile_only/headers.hip");
    let targets: Vec<String> = DEFAULT_TARGETS.iter().map(|s| s.to_string()).collect();
    build(&source, "headers", &targets);
}

/// A plain C++ compiler (not in HIP mode) can include the headers for host code.
#[test]
fn headers_serve_a_host_only_cpp_compiler() {
    let source = c_tests_dir("").join("compile_only/host_only.cpp");
    let headers = common::repo_root().join("hip_headers");
    let clang = common::require_tool(CLANG);
    let mut key = Fnv::new();
    key.tool(&clang).file(&source).tree(&headers);
    let cache = common::target_dir().join("c_tests");
    common::cached_build(&cache, "host_only.o", &key, |out| {
        let mut cmd = Command::new(&clang);
        cmd.args([
            "-x",
            "c++",
            "-std=c++17",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-c",
        ])
        .arg(format!("-I{}", headers.display()))
        .arg(&source)
        .arg("-o")
        .arg(out);
        cmd
    });
}

/// `HIPSHIM_LOG` selects what the shim prints: API calls at debug, packets and doorbells at
/// trace, and by default (unset) nothing but the simulator notice for a passing program.
#[test]
fn hipshim_log_shows_api_calls_at_debug_and_packets_at_trace() {
    let source_path = c_tests_dir("").join("vector_add.hip");
    let source = std::fs::read_to_string(&source_path).unwrap();
    let spec = Spec::parse(&source, &source_path);
    let program = build(&source_path, "vector_add", &spec.targets);
    let run_with = |log: Option<&str>| {
        let mut cmd = Command::new(&program);
        common::clear_loader_env(&mut cmd);
        common::use_simulator(&mut cmd, "gfx942");
        match log {
            Some(filter) => cmd.env("HIPSHIM_LOG", filter),
            None => cmd.env_remove("HIPSHIM_LOG"),
        };
        let out = common::run(&mut cmd, common::program_timeout());
        assert!(
            out.status.success(),
            "vector_add failed\n{}",
            out.report(&cmd)
        );
        out.stderr()
    };
    let quiet = run_with(None);
    assert!(
        !quiet.contains("hipMalloc"),
        "no API log by default:\n{quiet}"
    );
    let debug = run_with(Some("debug"));
    assert!(
        debug.contains("api=\"hipLaunchKernel\""),
        "debug shows API calls:\n{debug}"
    );
    assert!(
        !debug.contains("doorbell"),
        "debug does not show packets:\n{debug}"
    );
    let trace = run_with(Some("trace"));
    assert!(
        trace.contains("packet published, doorbell rung"),
        "trace shows packets:\n{trace}"
    );
    assert!(
        trace.contains("signal wait done"),
        "trace shows waits:\n{trace}"
    );
}

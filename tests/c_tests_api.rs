//! The HIP API breadth programs in `c_tests/api/` (memory, device, errors, symbols, launch
//! variants), run on
//! hipshim over hsasim for gfx942 and gfx90a, and the module and library tests in
//! `c_tests/api/modules/`, which load a code object and an offload bundle the test builds from
//! `c_tests/api/modules/kernels.hip` with clang-19 and passes in the environment.

mod common;

use std::process::Command;

use common::ctest::{build, build_module_kernels as build_kernels, c_tests_dir, DEFAULT_TARGETS};

c_tests! {
    dir "api";
    memory_gfx942 => "memory" on "gfx942";
    memory_gfx90a => "memory" on "gfx90a";
    ext_malloc_gfx942 => "ext_malloc" on "gfx942";
    ext_malloc_gfx90a => "ext_malloc" on "gfx90a";
    driver_entry_point_gfx942 => "driver_entry_point" on "gfx942";
    driver_entry_point_gfx90a => "driver_entry_point" on "gfx90a";
    device_gfx942 => "device" on "gfx942";
    device_gfx90a => "device" on "gfx90a";
    symbols_gfx942 => "symbols" on "gfx942";
    symbols_gfx90a => "symbols" on "gfx90a";
    errors_gfx942 => "errors" on "gfx942";
    errors_gfx90a => "errors" on "gfx90a";
    wall_clock_gfx942 => "wall_clock" on "gfx942";
    wall_clock_gfx90a => "wall_clock" on "gfx90a";
    shader_clock_gfx942 => "shader_clock" on "gfx942";
    shader_clock_gfx90a => "shader_clock" on "gfx90a";
    fork_gfx942 => "fork" on "gfx942";
    fork_gfx90a => "fork" on "gfx90a";
    launch_variants_gfx942 => "launch_variants" on "gfx942";
    launch_variants_gfx90a => "launch_variants" on "gfx90a";
}

/// Runs `c_tests/api/modules/<name>.hip` on `target` with the module files it loads.
fn run_modules(name: &str, target: &str) {
    let source = c_tests_dir("api").join(format!("modules/{name}.hip"));
    let targets: Vec<String> = DEFAULT_TARGETS.iter().map(|s| s.to_string()).collect();
    let program = build(&source, name, &targets);
    let code_object = build_kernels(&[target], false);
    let bundle = build_kernels(DEFAULT_TARGETS, true);
    let mut cmd = Command::new(&program);
    common::clear_loader_env(&mut cmd);
    common::use_simulator(&mut cmd, target);
    cmd.env("HIPSHIM_TEST_CODE_OBJECT", &code_object)
        .env("HIPSHIM_TEST_BUNDLE", &bundle);
    let out = common::run(&mut cmd, common::program_timeout());
    let report = out.report(&cmd);
    assert!(!out.timed_out, "{name} ({target}) did not finish\n{report}");
    assert!(
        out.status.success(),
        "{name} ({target}) failed: {}\n{report}",
        out.status
    );
    print!("{}", out.stdout());
}

#[test]
fn modules_gfx942() {
    run_modules("modules", "gfx942");
}

#[test]
fn modules_gfx90a() {
    run_modules("modules", "gfx90a");
}

#[test]
fn library_gfx942() {
    run_modules("library", "gfx942");
}

#[test]
fn library_gfx90a() {
    run_modules("library", "gfx90a");
}

//! Launch and device limits: the HIP programs in `c_tests/limits/` (grids past maxGridSize
//! or the packet's 32-bit work-item counts; a kernel stopped by hsasim's dispatch timeout),
//! and `c_tests/limits/modules/grid_module.hip`, which loads the module kernels built from
//! `c_tests/api/modules/kernels.hip` and launches them with hipModuleLaunchKernel.

mod common;

use std::process::Command;

use common::ctest::{build, build_module_kernels, c_tests_dir, DEFAULT_TARGETS};

c_tests! {
    dir "limits";
    grid_gfx942 => "grid" on "gfx942";
    grid_gfx90a => "grid" on "gfx90a";
    watchdog_gfx942 => "watchdog" on "gfx942";
    watchdog_gfx90a => "watchdog" on "gfx90a";
}

/// Runs `c_tests/limits/modules/grid_module.hip` on `target` with the module it loads.
fn run_grid_module(target: &str) {
    let source = c_tests_dir("limits").join("modules/grid_module.hip");
    let targets: Vec<String> = DEFAULT_TARGETS.iter().map(|s| s.to_string()).collect();
    let program = build(&source, "grid_module", &targets);
    let code_object = build_module_kernels(&[target], false);
    let mut cmd = Command::new(&program);
    common::clear_loader_env(&mut cmd);
    common::use_simulator(&mut cmd, target);
    cmd.env("HIPSHIM_TEST_CODE_OBJECT", &code_object);
    let out = common::run(&mut cmd, common::program_timeout());
    let report = out.report(&cmd);
    assert!(
        !out.timed_out,
        "grid_module ({target}) did not finish\n{report}"
    );
    assert!(
        out.status.success(),
        "grid_module ({target}) failed: {}\n{report}",
        out.status
    );
    assert!(
        out.stderr().contains("maxGridSize"),
        "grid_module ({target}): the refusal is not logged\n{report}"
    );
    print!("{}", out.stdout());
}

#[test]
fn grid_module_gfx942() {
    run_grid_module("gfx942");
}

#[test]
fn grid_module_gfx90a() {
    run_grid_module("gfx90a");
}

//! The ROCm ABI profiles (`runtime/base/compat.rs`): the HIP programs in `c_tests/compat/`, each run
//! under every profile it checks, on hipshim over hsasim. A program learns which behaviour to
//! expect from `HIPSHIM_ABI` (the override the run sets) or `EXPECT_ABI` (for the runs whose
//! profile comes from the name the library was loaded as: `LD_PRELOAD` of
//! `libamdhip64.so.N` satisfies the program's NEEDED `libamdhip64.so.6`, hipshim's soname, so
//! the loader keeps the preloaded name; an unversioned `libamdhip64.so` falls back to what the
//! program records as NEEDED).
//!
//! `last_error`: which error hipGetLastError / hipPeekAtLastError / hipExtGetLastError report
//! (ROCm 5/6: every call's result; ROCm 7: the last failure until read), hipDrvGetErrorName.
//! `pointer_attributes`: hipPointerGetAttributes' numbering and its answers for unknown and
//! null pointers.
//! `launch_errors`: the error of each refused launch configuration, every launch call.
//! `free_pool`: whether hipFree of stream-ordered memory waits for the device.
//! `memset_params`: hipMemsetParams in each ABI's layout, every call that takes it.
//! `capture_calls`: the calls ROCm 7 refuses during a stream capture.
//! `empty_module`: hipModuleLoad of an empty file.
//! `profiler_names`: hipApiName, hipGetCmdName, and hipProfilerStart/Stop (ROCm 7: success).
//! `api_callbacks`: AMD's callback interface for tracing tools (ROCm 5: 5.2's table and
//! hipRegisterTracerCallback; ROCm 6 and 7: the table refused, the tracer callback).

mod common;

use common::ctest::{build_area_program, run_in_mode, KERNEL_WAITS_FOR_HOST};

/// Builds `c_tests/compat/NAME.hip` and runs it on hsasim (gfx942), deterministic or threaded,
/// with `env`; fails unless it passes.
fn run(name: &str, deterministic: bool, env: &[(&str, &str)]) {
    run_on(name, "gfx942", deterministic, env);
}

fn run_on(name: &str, target: &str, deterministic: bool, env: &[(&str, &str)]) {
    let (program, spec) = build_area_program("compat", name);
    let out = run_in_mode(&program, name, target, deterministic, |cmd| {
        cmd.env_remove("HIPSHIM_ABI")
            .env_remove("EXPECT_ABI")
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .envs(env.iter().copied());
    });
    assert!(out.contains(&format!("{name}: PASSED")), "{out}");
}

/// Runs `name` with `libamdhip64.so` + `suffix` from the staged lib dir preloaded.
fn run_preloaded(name: &str, suffix: &str, expect: &str) {
    let lib = common::lib_dir().join(format!("libamdhip64.so{suffix}"));
    let lib = lib.to_str().expect("utf-8 lib path");
    run(name, false, &[("LD_PRELOAD", lib), ("EXPECT_ABI", expect)]);
}

#[test]
fn last_error_rocm5() {
    run("last_error", false, &[("HIPSHIM_ABI", "5")]);
}

#[test]
fn last_error_rocm6() {
    run("last_error", false, &[("HIPSHIM_ABI", "6")]);
}

#[test]
fn last_error_rocm7() {
    run("last_error", false, &[("HIPSHIM_ABI", "7")]);
}

#[test]
fn last_error_rocm7_deterministic() {
    run(
        "last_error",
        true,
        &[("HIPSHIM_ABI", "7"), KERNEL_WAITS_FOR_HOST],
    );
}

/// No override: the program links `libamdhip64.so.6`, so ROCm 6 it is.
#[test]
fn last_error_follows_the_linked_soname() {
    run(
        "last_error",
        true,
        &[("EXPECT_ABI", "6"), KERNEL_WAITS_FOR_HOST],
    );
}

#[test]
fn last_error_follows_a_preloaded_so_7() {
    run_preloaded("last_error", ".7", "7");
}

#[test]
fn pointer_attributes_follow_a_preloaded_so_5() {
    run_preloaded("pointer_attributes", ".5", "5");
}

/// Preloaded under the unversioned name: the program's NEEDED `libamdhip64.so.6` decides.
#[test]
fn pointer_attributes_follow_needed_when_preloaded_unversioned() {
    run_preloaded("pointer_attributes", "", "6");
}

#[test]
fn pointer_attributes_rocm5() {
    run("pointer_attributes", false, &[("HIPSHIM_ABI", "5")]);
}

#[test]
fn pointer_attributes_rocm6() {
    run("pointer_attributes", false, &[("HIPSHIM_ABI", "6")]);
}

#[test]
fn pointer_attributes_rocm7() {
    run("pointer_attributes", false, &[("HIPSHIM_ABI", "7")]);
}

#[test]
fn pointer_attributes_rocm7_gfx90a_deterministic() {
    run_on(
        "pointer_attributes",
        "gfx90a",
        true,
        &[("HIPSHIM_ABI", "7")],
    );
}

#[test]
fn stream_queries_rocm6() {
    run("stream_queries", false, &[("HIPSHIM_ABI", "6")]);
}

#[test]
fn stream_queries_rocm6_deterministic() {
    run(
        "stream_queries",
        true,
        &[("HIPSHIM_ABI", "6"), KERNEL_WAITS_FOR_HOST],
    );
}

#[test]
fn stream_queries_rocm7() {
    run("stream_queries", false, &[("HIPSHIM_ABI", "7")]);
}

#[test]
fn stream_queries_rocm5_gfx90a() {
    run_on("stream_queries", "gfx90a", false, &[("HIPSHIM_ABI", "5")]);
}

#[test]
fn contexts_rocm6() {
    run("contexts", false, &[("HIPSHIM_ABI", "6")]);
}

#[test]
fn contexts_rocm5_deterministic() {
    run("contexts", true, &[("HIPSHIM_ABI", "5")]);
}

/// `hipGraphNodeGetType` numbers node types as the program's headers did.
#[test]
fn graph_node_types_rocm5() {
    run("graph_node_type", false, &[("HIPSHIM_ABI", "5")]);
}

#[test]
fn graph_node_types_rocm6() {
    run("graph_node_type", true, &[("HIPSHIM_ABI", "6")]);
}

#[test]
fn graph_node_types_follow_the_preloaded_soname() {
    run_preloaded("graph_node_type", ".5", "5");
}

/// `hipDrvMemcpy3D` reads `HIP_MEMCPY3D` in the layout of the program's ABI.
#[test]
fn drv_memcpy3d_rocm5_layout() {
    run("drv_memcpy3d", false, &[("HIPSHIM_ABI", "5")]);
}

#[test]
fn drv_memcpy3d_rocm6_layout() {
    run("drv_memcpy3d", true, &[("HIPSHIM_ABI", "6")]);
}

#[test]
fn drv_memcpy3d_follows_the_preloaded_soname() {
    run_preloaded("drv_memcpy3d", ".5", "5");
}

/// Each refused launch configuration gets the error of the program's ABI.
#[test]
fn launch_errors_rocm5() {
    run("launch_errors", false, &[("HIPSHIM_ABI", "5")]);
}

#[test]
fn launch_errors_rocm6() {
    run("launch_errors", true, &[("HIPSHIM_ABI", "6")]);
}

#[test]
fn launch_errors_rocm7() {
    run("launch_errors", false, &[("HIPSHIM_ABI", "7")]);
}

#[test]
fn launch_errors_rocm7_gfx90a_deterministic() {
    run_on("launch_errors", "gfx90a", true, &[("HIPSHIM_ABI", "7")]);
}

#[test]
fn launch_errors_follow_a_preloaded_so_5() {
    run_preloaded("launch_errors", ".5", "5");
}

/// hipFree of stream-ordered memory waits for the device up to ROCm 6, not in ROCm 7. The
/// ROCm 7 runs hold a kernel until the host releases it after hipFree: a hipFree that waited
/// would meet the dispatch timeout instead.
#[test]
fn free_pool_rocm5() {
    run("free_pool", true, &[("HIPSHIM_ABI", "5")]);
}

#[test]
fn free_pool_rocm6() {
    run("free_pool", false, &[("HIPSHIM_ABI", "6")]);
}

#[test]
fn free_pool_rocm7() {
    run(
        "free_pool",
        false,
        &[("HIPSHIM_ABI", "7"), ("HSASIM_DISPATCH_TIMEOUT", "30")],
    );
}

#[test]
fn free_pool_rocm7_deterministic() {
    run(
        "free_pool",
        true,
        &[
            ("HIPSHIM_ABI", "7"),
            ("HSASIM_DISPATCH_TIMEOUT", "30"),
            KERNEL_WAITS_FOR_HOST,
        ],
    );
}

#[test]
fn free_pool_follows_a_preloaded_so_7() {
    run_preloaded("free_pool", ".7", "7");
}

/// hipMemsetParams is read and written in the program's ABI's layout.
#[test]
fn memset_params_rocm5() {
    run("memset_params", false, &[("HIPSHIM_ABI", "5")]);
}

#[test]
fn memset_params_rocm6() {
    run("memset_params", true, &[("HIPSHIM_ABI", "6")]);
}

#[test]
fn memset_params_rocm7() {
    run("memset_params", false, &[("HIPSHIM_ABI", "7")]);
}

#[test]
fn memset_params_rocm7_deterministic() {
    run("memset_params", true, &[("HIPSHIM_ABI", "7")]);
}

#[test]
fn memset_params_follow_a_preloaded_so_7() {
    run_preloaded("memset_params", ".7", "7");
}

/// Calls ROCm 7 refuses during a stream capture and earlier ABIs allow.
#[test]
fn capture_calls_rocm5() {
    run("capture_calls", false, &[("HIPSHIM_ABI", "5")]);
}

#[test]
fn capture_calls_rocm6() {
    run("capture_calls", true, &[("HIPSHIM_ABI", "6")]);
}

#[test]
fn capture_calls_rocm7() {
    run("capture_calls", false, &[("HIPSHIM_ABI", "7")]);
}

#[test]
fn capture_calls_follow_a_preloaded_so_7() {
    run_preloaded("capture_calls", ".7", "7");
}

/// hipModuleLoad of an empty file: each ABI's error.
#[test]
fn empty_module_rocm5() {
    run("empty_module", false, &[("HIPSHIM_ABI", "5")]);
}

#[test]
fn empty_module_rocm6() {
    run("empty_module", false, &[("HIPSHIM_ABI", "6")]);
}

#[test]
fn empty_module_rocm7() {
    run("empty_module", true, &[("HIPSHIM_ABI", "7")]);
}

/// `hipMemcpyParam2D` reads memory types in the program's numbering, takes a device side's
/// pointer from its device field, and reads a pitch of 0 as packed rows.
#[test]
fn param2d_rocm5() {
    run("param2d", false, &[("HIPSHIM_ABI", "5")]);
}

#[test]
fn param2d_rocm5_deterministic() {
    run("param2d", true, &[("HIPSHIM_ABI", "5")]);
}

#[test]
fn param2d_rocm6() {
    run("param2d", false, &[("HIPSHIM_ABI", "6")]);
}

#[test]
fn param2d_rocm7_deterministic() {
    run("param2d", true, &[("HIPSHIM_ABI", "7")]);
}

#[test]
fn profiler_names_rocm6() {
    run("profiler_names", false, &[("HIPSHIM_ABI", "6")]);
}

#[test]
fn profiler_names_rocm7() {
    run("profiler_names", false, &[("HIPSHIM_ABI", "7")]);
}

/// The API and activity callbacks tracing tools register: ids, phases, correlation ids and
/// the device's times of each dispatch and copy, as the profile's runtime reports them.
#[test]
fn api_callbacks_rocm5() {
    run("api_callbacks", false, &[("HIPSHIM_ABI", "5")]);
}

#[test]
fn api_callbacks_rocm6_gfx90a_deterministic() {
    run_on("api_callbacks", "gfx90a", true, &[("HIPSHIM_ABI", "6")]);
}

#[test]
fn api_callbacks_rocm7() {
    run("api_callbacks", false, &[("HIPSHIM_ABI", "7")]);
}

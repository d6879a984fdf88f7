//! `hipshim run`: programs run on hipshim in both loading modes, settings reach them, the
//! exit status comes back, and a bad policy is a usage error.

mod common;

use common::hipshim_output;

const VECTOR_ADD: &str = "c_tests/vector_add.hip";
const PASSED: &str = "vector_add: PASSED";

#[test]
fn run_passes_the_programs_exit_status_through() {
    for mode in ["--libpath", "--preload"] {
        let out = hipshim_output(["run", mode, "--", "sh", "-c", "exit 7"]);
        assert_eq!(out.code(), Some(7), "{mode}\n{}", out.report());
    }
    let out = hipshim_output(["run", "--", "sh", "-c", "kill -TERM $$"]);
    assert_eq!(out.code(), Some(128 + 15), "{}", out.report());
}

#[test]
fn run_sets_the_loader_and_runtime_variables() {
    let lib_dir = common::lib_dir();
    let show = "echo \"$LD_LIBRARY_PATH|$LD_PRELOAD|$HIPSHIM_QUEUE_POLICY|$HIPSHIM_STATS|$HIPSHIM_LOG|$HSASIM_GFX\"";
    let out = hipshim_output([
        "run",
        "--policy",
        "pool:2:rr",
        "--stats",
        "--log",
        "debug",
        "--gfx",
        "gfx90a",
        "--",
        "sh",
        "-c",
        show,
    ]);
    assert_eq!(out.code(), Some(0), "{}", out.report());
    let fields: Vec<&str> = out.stdout.trim().split('|').collect();
    assert!(
        fields[0].starts_with(lib_dir.to_str().unwrap()),
        "{}",
        out.report()
    );
    assert_eq!(
        fields[1..],
        ["", "pool:2:rr", "1", "debug", "gfx90a"],
        "{}",
        out.report()
    );

    let out = hipshim_output(["run", "--preload", "--", "sh", "-c", show]);
    let fields: Vec<&str> = out.stdout.trim().split('|').collect();
    assert_eq!(
        fields[1],
        lib_dir.join("libamdhip64.so").to_str().unwrap(),
        "{}",
        out.report()
    );
    assert_eq!(fields[0], "", "{}", out.report());
}

#[test]
fn a_c_test_runs_on_hipshim_under_a_policy() {
    let program = common::build_hip(VECTOR_ADD, "vector_add");
    for mode in ["--libpath", "--preload"] {
        let out = hipshim_output(
            ["run", mode, "--policy", "single", "--"]
                .map(Into::into)
                .into_iter()
                .chain([program.clone().into_os_string()]),
        );
        assert_eq!(out.code(), Some(0), "{mode}\n{}", out.report());
        assert!(out.stdout.contains(PASSED), "{mode}\n{}", out.report());
        assert!(
            out.stderr.contains("HIPSHIM_QUEUE_POLICY=single"),
            "{}",
            out.report()
        );
    }
}

/// Debian's hipcc build of vector_add is linked to AMD's libamdhip64.so.5 and has no rpath
/// to hipshim: it can only pass on this machine (no GPU) if the loading mode put hipshim in
/// front of AMD's library.
#[test]
fn an_existing_binary_runs_in_both_loading_modes() {
    let program = common::build_hipcc(VECTOR_ADD, "vector_add-hipcc");
    for mode in ["--libpath", "--preload"] {
        let out = hipshim_output(
            ["run", mode, "--gfx", "gfx90a", "--"]
                .map(Into::into)
                .into_iter()
                .chain([program.clone().into_os_string()]),
        );
        assert_eq!(out.code(), Some(0), "{mode}\n{}", out.report());
        assert!(out.stdout.contains(PASSED), "{mode}\n{}", out.report());
    }
}

#[test]
fn an_unknown_policy_is_a_usage_error_naming_the_accepted_forms() {
    let out = hipshim_output(["run", "--policy", "fastest", "--", "true"]);
    assert_eq!(out.code(), Some(2), "{}", out.report());
    for form in ["dedicated", "single", "pool:N", "pool:N:rr", "pool:N:ll"] {
        assert!(out.stderr.contains(form), "no `{form}`\n{}", out.report());
    }
}

#[test]
fn a_missing_program_is_a_failure_and_no_program_a_usage_error() {
    let out = hipshim_output(["run", "--", "/nonexistent/program"]);
    assert_eq!(out.code(), Some(1), "{}", out.report());
    assert!(
        out.stderr.contains("/nonexistent/program"),
        "{}",
        out.report()
    );
    let out = hipshim_output(["run"]);
    assert_eq!(out.code(), Some(2), "{}", out.report());
}

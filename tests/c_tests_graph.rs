//! HIP graphs built explicitly: the programs in `c_tests/graph/` on hipshim over hsasim for
//! gfx942 and gfx90a, each in hsasim's threaded and deterministic (`HSASIM_THREADS=0`) modes.
//! `exec` runs a diamond of kernels between memcpy, memset and host nodes several times and
//! changes it through the executable graph's setters and `hipGraphExecUpdate`; `structure`
//! the queries, clones, child graphs, event nodes across two streams and the DOT print;
//! `errors` bad input; `capture` stream capture of a fork/join pipeline over two streams and
//! the capture errors.

mod common;

use std::process::Command;

use common::ctest::{build, c_tests_dir, Spec, DEFAULT_TARGETS};

/// Builds `c_tests/graph/NAME.hip` and runs it on hsasim as `target`, deterministic or
/// threaded; fails unless it passes.
fn run(name: &str, target: &str, deterministic: bool) -> String {
    let source = c_tests_dir("graph").join(format!("{name}.hip"));
    let text = std::fs::read_to_string(&source).expect("readable source");
    let spec = Spec::parse(&text, &source);
    let targets: Vec<String> = DEFAULT_TARGETS.iter().map(|s| s.to_string()).collect();
    let program = build(&source, name, &targets);
    let mut cmd = Command::new(&program);
    common::clear_loader_env(&mut cmd);
    common::use_simulator(&mut cmd, target);
    // The DOT file goes where the program runs.
    let dir = common::target_dir().join(format!("c_tests/graph-{name}-{target}-{deterministic}"));
    std::fs::create_dir_all(&dir).expect("a run directory");
    cmd.current_dir(&dir);
    if deterministic {
        cmd.env("HSASIM_THREADS", "0");
    } else {
        cmd.env_remove("HSASIM_THREADS");
    }
    for (k, v) in &spec.env {
        cmd.env(k, v);
    }
    let out = common::run(&mut cmd, common::program_timeout());
    let report = out.report(&cmd);
    let mode = if deterministic {
        "deterministic"
    } else {
        "threaded"
    };
    assert!(
        !out.timed_out,
        "{name} ({target}, {mode}) did not finish\n{report}"
    );
    assert!(
        out.status.success(),
        "{name} ({target}, {mode}) failed: {}\n{report}",
        out.status
    );
    out.stdout()
}

macro_rules! graph_tests {
    ($($test:ident => $name:literal on $target:literal, $deterministic:expr;)*) => {
        $(
            #[test]
            fn $test() {
                let out = run($name, $target, $deterministic);
                assert!(out.contains("PASSED"), "{out}");
            }
        )*
    };
}

graph_tests! {
    exec_gfx942 => "exec" on "gfx942", false;
    exec_gfx942_deterministic => "exec" on "gfx942", true;
    exec_gfx90a => "exec" on "gfx90a", false;
    exec_gfx90a_deterministic => "exec" on "gfx90a", true;
    structure_gfx942 => "structure" on "gfx942", false;
    structure_gfx942_deterministic => "structure" on "gfx942", true;
    structure_gfx90a => "structure" on "gfx90a", false;
    structure_gfx90a_deterministic => "structure" on "gfx90a", true;
    errors_gfx942 => "errors" on "gfx942", false;
    errors_gfx942_deterministic => "errors" on "gfx942", true;
    errors_gfx90a => "errors" on "gfx90a", false;
    errors_gfx90a_deterministic => "errors" on "gfx90a", true;
    capture_gfx942 => "capture" on "gfx942", false;
    capture_gfx942_deterministic => "capture" on "gfx942", true;
    capture_gfx90a => "capture" on "gfx90a", false;
    capture_gfx90a_deterministic => "capture" on "gfx90a", true;
}

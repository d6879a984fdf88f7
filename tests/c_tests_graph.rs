//! HIP graphs built explicitly: the programs in `c_tests/graph/` on hipshim over hsasim for
//! gfx942 and gfx90a, each in hsasim's threaded and deterministic (`HSASIM_THREADS=0`) modes.
//! `exec` runs a diamond of kernels between memcpy, memset and host nodes several times and
//! changes it through the executable graph's setters and `hipGraphExecUpdate`; `structure`
//! the queries, clones, child graphs, event nodes across two streams and the DOT print;
//! `errors` bad input; `capture` stream capture of a fork/join pipeline over two streams and
//! the capture errors; `capture_deps` the capture dependency calls, capture into an existing
//! graph and captured stream-ordered allocation; `nodes` memory alloc/free, symbol copy and
//! driver memset nodes, disabled nodes, the generic node calls, kernel node attributes and
//! user objects.

mod common;

use common::ctest::{build_area_program, run_in_mode};

/// Builds `c_tests/graph/NAME.hip` and runs it on hsasim as `target`, deterministic or
/// threaded, in a directory of its own (the DOT file goes where the program runs); fails
/// unless it passes.
fn run(name: &str, target: &str, deterministic: bool) -> String {
    let (program, spec) = build_area_program("graph", name);
    let dir = common::target_dir().join(format!("c_tests/graph-{name}-{target}-{deterministic}"));
    std::fs::create_dir_all(&dir).expect("a run directory");
    run_in_mode(&program, name, target, deterministic, |cmd| {
        cmd.current_dir(&dir)
            .envs(spec.env.iter().map(|(k, v)| (k, v)));
    })
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
    nodes_gfx942 => "nodes" on "gfx942", false;
    nodes_gfx942_deterministic => "nodes" on "gfx942", true;
    nodes_gfx90a => "nodes" on "gfx90a", false;
    nodes_gfx90a_deterministic => "nodes" on "gfx90a", true;
    memcpy3d_gfx942 => "memcpy3d" on "gfx942", false;
    memcpy3d_gfx942_deterministic => "memcpy3d" on "gfx942", true;
    memcpy3d_gfx90a => "memcpy3d" on "gfx90a", false;
    memcpy3d_gfx90a_deterministic => "memcpy3d" on "gfx90a", true;
    capture_deps_gfx942 => "capture_deps" on "gfx942", false;
    capture_deps_gfx942_deterministic => "capture_deps" on "gfx942", true;
    capture_deps_gfx90a => "capture_deps" on "gfx90a", false;
    capture_deps_gfx90a_deterministic => "capture_deps" on "gfx90a", true;
}

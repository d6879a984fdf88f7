//! HIP graphs built explicitly: the programs in `c_tests/graph/` on hipshim over hsasim for
//! gfx942 and gfx90a, each in hsasim's threaded and deterministic (`HSASIM_THREADS=0`) modes.
//! `exec` runs a diamond of kernels between memcpy, memset and host nodes several times and
//! changes it through the executable graph's setters and `hipGraphExecUpdate`; `structure`
//! the queries, clones, child graphs, event nodes across two streams and the DOT print;
//! `errors` bad input; `capture` stream capture of a fork/join pipeline over two streams and
//! the capture errors; `capture_deps` the capture dependency calls, capture into an existing
//! graph and captured stream-ordered allocation; `nodes` memory alloc/free, symbol copy and
//! driver memset nodes, disabled nodes, the generic node calls, kernel node attributes and
//! user objects; `capture_rules` what a capture forbids elsewhere (null-stream work beside a
//! capturing blocking stream, allocations in global mode); `memcpy3d` memcpy nodes of any shape (arrays, pitched memory, 3D, the driver
//! form); `replay` the executor of prebuilt packets (fork/join graphs replayed
//! back to back, parameters and updates changed while launches are queued, kernel nodes
//! between copies and host calls, a graph longer than the queue's ring, eager work and events
//! after a launch), and `replay_spread` the same with branches over several queues
//! (`HIPSHIM_GRAPH_QUEUES=4`), checking in the stats it writes that launches used several;
//! `fault_spread` a kernel node faulting on a branch queue, reported through the join.

mod common;

use common::ctest::{build_area_program, run_in_mode, KERNEL_WAITS_FOR_HOST};

/// Programs whose kernels spin until the host writes memory: their deterministic runs are on
/// host time (see [`KERNEL_WAITS_FOR_HOST`]).
const WAIT_FOR_THE_HOST: &[&str] = &["replay", "replay_spread"];

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
        if deterministic && WAIT_FOR_THE_HOST.contains(&name) {
            cmd.env(KERNEL_WAITS_FOR_HOST.0, KERNEL_WAITS_FOR_HOST.1);
        }
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
    capture_rules_gfx942 => "capture_rules" on "gfx942", false;
    capture_rules_gfx942_deterministic => "capture_rules" on "gfx942", true;
    capture_rules_gfx90a => "capture_rules" on "gfx90a", false;
    capture_rules_gfx90a_deterministic => "capture_rules" on "gfx90a", true;
    memcpy3d_gfx942 => "memcpy3d" on "gfx942", false;
    memcpy3d_gfx942_deterministic => "memcpy3d" on "gfx942", true;
    memcpy3d_gfx90a => "memcpy3d" on "gfx90a", false;
    memcpy3d_gfx90a_deterministic => "memcpy3d" on "gfx90a", true;
    capture_deps_gfx942 => "capture_deps" on "gfx942", false;
    capture_deps_gfx942_deterministic => "capture_deps" on "gfx942", true;
    capture_deps_gfx90a => "capture_deps" on "gfx90a", false;
    capture_deps_gfx90a_deterministic => "capture_deps" on "gfx90a", true;
    replay_gfx942 => "replay" on "gfx942", false;
    replay_gfx942_deterministic => "replay" on "gfx942", true;
    replay_gfx90a => "replay" on "gfx90a", false;
    replay_gfx90a_deterministic => "replay" on "gfx90a", true;
    fault_spread_gfx942 => "fault_spread" on "gfx942", false;
    fault_spread_gfx942_deterministic => "fault_spread" on "gfx942", true;
    fault_spread_gfx90a => "fault_spread" on "gfx90a", false;
    fault_spread_gfx90a_deterministic => "fault_spread" on "gfx90a", true;
}

/// `replay_spread` on `target`: passes, and the stats it wrote at exit show graph launches
/// whose packets went to more than one queue.
fn spread(target: &str, deterministic: bool) {
    let out = run("replay_spread", target, deterministic);
    assert!(out.contains("PASSED"), "{out}");
    let stats = common::target_dir()
        .join(format!(
            "c_tests/graph-replay_spread-{target}-{deterministic}"
        ))
        .join("graph-stats.txt");
    let text =
        std::fs::read_to_string(&stats).unwrap_or_else(|e| panic!("{}: {e}", stats.display()));
    let table = text
        .split("Graph launches")
        .nth(1)
        .unwrap_or_else(|| panic!("no graph launch table in the stats:\n{text}"));
    // Rows: graph, launches, kernels, eager, then the queues, comma-separated.
    let spread_rows = table
        .lines()
        .skip(2)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.split_whitespace().nth(4).is_some_and(|q| q.contains(',')))
        .count();
    assert!(
        spread_rows > 0,
        "no graph launch used several queues:\n{text}"
    );
}

#[test]
fn replay_spread_gfx942() {
    spread("gfx942", false);
}

#[test]
fn replay_spread_gfx942_deterministic() {
    spread("gfx942", true);
}

#[test]
fn replay_spread_gfx90a() {
    spread("gfx90a", false);
}

#[test]
fn replay_spread_gfx90a_deterministic() {
    spread("gfx90a", true);
}

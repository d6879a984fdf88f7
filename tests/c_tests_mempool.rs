//! The stream-ordered allocator: the HIP programs in `c_tests/mempool/` on hipshim over hsasim
//! for gfx942 and gfx90a, each in hsasim's threaded and deterministic (`HSASIM_THREADS=0`)
//! modes. `reuse` checks when a block freed with `hipFreeAsync` comes back (same stream at
//! once, another stream only after the free is known complete or followed through an event,
//! never while it is pending behind a busy stream); `pools` the attributes, used/reserved
//! amounts and high-water marks, release threshold and trimming, explicit pools, access and
//! bad input, also with two devices; `oom` the internal-dependency reuse when the device is
//! out of memory; `null_sync` that `hipStreamSynchronize(0)` gives back no block a busy
//! non-blocking stream freed.

mod common;

use common::ctest::{build_area_program, run_in_mode};

/// Builds `c_tests/mempool/NAME.hip` and runs it on hsasim as `target`, deterministic or
/// threaded, with the environment its header asks for and `env`; fails unless it passes.
fn run(name: &str, target: &str, deterministic: bool, env: &[(&str, &str)]) -> String {
    let (program, spec) = build_area_program("mempool", name);
    run_in_mode(&program, name, target, deterministic, |cmd| {
        cmd.envs(spec.env.iter().map(|(k, v)| (k, v)))
            .envs(env.iter().copied());
    })
}

macro_rules! mempool_tests {
    ($($test:ident => $name:literal on $target:literal, $deterministic:expr, [$(($k:literal, $v:literal)),*];)*) => {
        $(
            #[test]
            fn $test() {
                let out = run($name, $target, $deterministic, &[$(($k, $v)),*]);
                assert!(out.contains("PASSED"), "{out}");
            }
        )*
    };
}

mempool_tests! {
    reuse_gfx942 => "reuse" on "gfx942", false, [];
    // Its kernels spin until the host writes a flag: on host time when deterministic
    // (`common::ctest::KERNEL_WAITS_FOR_HOST`).
    reuse_gfx942_deterministic => "reuse" on "gfx942", true, [("HSASIM_TIME", "host")];
    reuse_gfx90a => "reuse" on "gfx90a", false, [];
    reuse_gfx90a_deterministic => "reuse" on "gfx90a", true, [("HSASIM_TIME", "host")];
    pools_gfx942 => "pools" on "gfx942", false, [];
    pools_gfx942_deterministic => "pools" on "gfx942", true, [];
    pools_gfx90a => "pools" on "gfx90a", false, [];
    pools_gfx90a_deterministic => "pools" on "gfx90a", true, [];
    pools_two_devices_gfx942 => "pools" on "gfx942", false, [("HSASIM_GPUS", "2")];
    pools_two_devices_gfx90a_deterministic => "pools" on "gfx90a", true, [("HSASIM_GPUS", "2")];
    oom_gfx942 => "oom" on "gfx942", false, [];
    oom_gfx942_deterministic => "oom" on "gfx942", true, [];
    oom_gfx90a => "oom" on "gfx90a", false, [];
    oom_gfx90a_deterministic => "oom" on "gfx90a", true, [];
    null_sync_gfx942 => "null_sync" on "gfx942", false, [];
    null_sync_gfx942_deterministic => "null_sync" on "gfx942", true, [];
}

/// A traced run records each stream-ordered allocation, and the stats count the reuses.
#[test]
fn pool_reuse_is_traced_and_counted() {
    use amdhip64::trace::{read_trace, summarize, TraceEvent};
    let path = common::target_dir().join("c_tests/mempool-trace.json");
    let _ = std::fs::remove_file(&path);
    run(
        "reuse",
        "gfx942",
        false,
        &[("HIPSHIM_TRACE", path.to_str().unwrap())],
    );
    let events = read_trace(&path).unwrap();
    let allocs: Vec<bool> = events
        .iter()
        .filter_map(|e| match e {
            TraceEvent::PoolAlloc { reused, .. } => Some(*reused),
            _ => None,
        })
        .collect();
    assert!(allocs.len() >= 10, "{allocs:?}");
    assert!(!allocs[0], "the first allocation is a new block");
    assert!(
        allocs[1],
        "the second reuses the first's block on the same stream"
    );
    let stats = summarize(&events);
    assert_eq!(stats.pools.len(), 1, "{:?}", stats.pools);
    let row = &stats.pools[0];
    assert_eq!(row.allocations, allocs.len() as u64);
    assert_eq!(row.reused, allocs.iter().filter(|r| **r).count() as u64);
    assert!(
        row.reserved_high >= row.used_high && row.used_high > 0,
        "{row:?}"
    );
    assert!(stats.to_string().contains("Memory pools"), "{stats}");
}

//! Managed memory beyond hipMallocManaged: the HIP programs in `c_tests/managed/` on hipshim
//! over hsasim for gfx942 and gfx90a, each in hsasim's threaded and deterministic
//! (`HSASIM_THREADS=0`) modes, with two devices. `advise` checks hipMemAdvise and what
//! hipMemRangeGetAttribute(s) reads back per byte range, prefetch locations, stream
//! attachment, advice forgotten at free, and bad input; `managed_vars` the `__managed__`
//! variables clang registers with __hipRegisterManagedVar, shared by host and both devices.

mod common;

use common::ctest::{build_area_program, run_in_mode};

fn run(name: &str, target: &str, deterministic: bool) -> String {
    let (program, spec) = build_area_program("managed", name);
    run_in_mode(&program, name, target, deterministic, |cmd| {
        cmd.envs(spec.env.iter().map(|(k, v)| (k, v)));
    })
}

macro_rules! managed_tests {
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

managed_tests! {
    advise_gfx942 => "advise" on "gfx942", false;
    advise_gfx942_deterministic => "advise" on "gfx942", true;
    advise_gfx90a => "advise" on "gfx90a", false;
    advise_gfx90a_deterministic => "advise" on "gfx90a", true;
    location_v2_gfx942 => "location_v2" on "gfx942", false;
    location_v2_gfx942_deterministic => "location_v2" on "gfx942", true;
    location_v2_gfx90a => "location_v2" on "gfx90a", false;
    managed_vars_gfx942 => "managed_vars" on "gfx942", false;
    managed_vars_gfx942_deterministic => "managed_vars" on "gfx942", true;
    managed_vars_gfx90a => "managed_vars" on "gfx90a", false;
    managed_vars_gfx90a_deterministic => "managed_vars" on "gfx90a", true;
    prefetch_batch_gfx942 => "prefetch_batch" on "gfx942", false;
    prefetch_batch_gfx90a => "prefetch_batch" on "gfx90a", false;
}

//! Virtual memory management: the HIP programs in `c_tests/vmm/` on hipshim over hsasim for
//! gfx942 and gfx90a, each in hsasim's threaded and deterministic (`HSASIM_THREADS=0`)
//! modes. `vmm` reserves a range, maps several physical chunks into it, runs kernels and
//! copies across the chunk boundaries, remaps a chunk (its data moves with it, and one chunk
//! at two addresses shows the same bytes), exports and imports a POSIX fd, checks the
//! granularity rules and error codes, and faults a kernel on an unmapped part of the range.

mod common;

use common::ctest::{build_area_program, run_in_mode};

fn run(name: &str, target: &str, deterministic: bool) -> String {
    let (program, spec) = build_area_program("vmm", name);
    run_in_mode(&program, name, target, deterministic, |cmd| {
        cmd.envs(spec.env.iter().map(|(k, v)| (k, v)));
    })
}

macro_rules! vmm_tests {
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

vmm_tests! {
    vmm_gfx942 => "vmm" on "gfx942", false;
    vmm_gfx942_deterministic => "vmm" on "gfx942", true;
    vmm_gfx90a => "vmm" on "gfx90a", false;
    vmm_gfx90a_deterministic => "vmm" on "gfx90a", true;
}

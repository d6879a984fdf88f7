//! Inter-process memory: the HIP program in `c_tests/ipc/` on hipshim over hsasim for gfx942
//! and gfx90a, each in hsasim's threaded and deterministic (`HSASIM_THREADS=0`) modes. `ipc`
//! exports a device allocation, starts a child (fork + exec) that opens it with its own
//! runtime and simulated GPU, runs a kernel on it and closes it; the parent sees the child's
//! writes. It also checks the errors of bad handles, flags and pointers. `mempool_ipc` does
//! the same through a memory pool exported as a file descriptor and its exported pointers.

mod common;

use common::ctest::{build_area_program, run_in_mode};

fn run(name: &str, target: &str, deterministic: bool) -> String {
    let (program, spec) = build_area_program("ipc", name);
    run_in_mode(&program, name, target, deterministic, |cmd| {
        cmd.envs(spec.env.iter().map(|(k, v)| (k, v)));
    })
}

macro_rules! ipc_tests {
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

ipc_tests! {
    ipc_gfx942 => "ipc" on "gfx942", false;
    ipc_gfx942_deterministic => "ipc" on "gfx942", true;
    ipc_gfx90a => "ipc" on "gfx90a", false;
    ipc_gfx90a_deterministic => "ipc" on "gfx90a", true;
    mempool_ipc_gfx942 => "mempool_ipc" on "gfx942", false;
    mempool_ipc_gfx942_deterministic => "mempool_ipc" on "gfx942", true;
    mempool_ipc_gfx90a => "mempool_ipc" on "gfx90a", false;
}

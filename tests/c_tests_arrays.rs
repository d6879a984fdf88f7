//! Arrays and pitched 3D memory: the HIP programs in `c_tests/arrays/`, on hipshim over hsasim
//! for gfx942 and gfx90a, each in hsasim's threaded and deterministic (`HSASIM_THREADS=0`)
//! modes. `array_copies` round-trips 2D and 3D arrays (odd widths, offsets, sub-boxes) through
//! every array copy call against a host model, checks the ROCm 5.2 public fields of the
//! handle, descriptors, mipmapped level sizes and AMD's error codes for bad input;
//! `pitched_3d` checks hipMalloc3D, hipMemcpy3D(Async) with sub-box positions, hipMemset3D,
//! hipMemset2DAsync, hipMemsetD2D*, hipMemcpyParam2D, hipDrvMemcpy3D(Async), and the order of
//! stream-ordered array copies with kernels that read and write the array's memory;
//! `memcpy_3d_batch` checks hipMemcpy3DBatchAsync; `texref_registration` checks that a
//! `texture<>` global clang-19 registers through hipshim's headers is bound on the device
//! (a kernel reads the reference's device copy) and the reference calls' errors (gfx942: all
//! hipErrorNotSupported).

mod common;

use common::ctest::{build_area_program, run_in_mode};

/// Builds `c_tests/arrays/NAME.hip` and runs it on hsasim as `target`, deterministic or
/// threaded; fails unless it passes.
fn run(name: &str, target: &str, deterministic: bool) {
    let (program, spec) = build_area_program("arrays", name);
    let out = run_in_mode(&program, name, target, deterministic, |cmd| {
        cmd.envs(spec.env.iter().map(|(k, v)| (k, v)));
    });
    assert!(out.contains(&format!("{name}: PASSED")), "{out}");
}

#[test]
fn array_copies_gfx942() {
    run("array_copies", "gfx942", false);
}

#[test]
fn array_copies_gfx942_deterministic() {
    run("array_copies", "gfx942", true);
}

#[test]
fn array_copies_gfx90a() {
    run("array_copies", "gfx90a", false);
}

#[test]
fn array_copies_gfx90a_deterministic() {
    run("array_copies", "gfx90a", true);
}

#[test]
fn pitched_3d_gfx942() {
    run("pitched_3d", "gfx942", false);
}

#[test]
fn pitched_3d_gfx942_deterministic() {
    run("pitched_3d", "gfx942", true);
}

#[test]
fn pitched_3d_gfx90a() {
    run("pitched_3d", "gfx90a", false);
}

#[test]
fn pitched_3d_gfx90a_deterministic() {
    run("pitched_3d", "gfx90a", true);
}

/// `hipMemcpy3DBatchAsync`: pointer and array boxes, the refusals and failIdx.
#[test]
fn memcpy_3d_batch_gfx90a() {
    run("memcpy_3d_batch", "gfx90a", false);
}

#[test]
fn memcpy_3d_batch_gfx942() {
    run("memcpy_3d_batch", "gfx942", false);
}

/// A 3D box that runs past the end of its device allocation is refused, not copied slice by
/// slice with the slices beyond the end taken for host memory (which the CPU then touched).
#[test]
fn copy3d_overrun_gfx942() {
    run("copy3d_overrun", "gfx942", false);
}

#[test]
fn copy3d_overrun_gfx90a_deterministic() {
    run("copy3d_overrun", "gfx90a", true);
}

#[test]
fn texref_registration_gfx90a() {
    run("texref_registration", "gfx90a", false);
}

#[test]
fn texref_registration_gfx90a_deterministic() {
    run("texref_registration", "gfx90a", true);
}

#[test]
fn texref_registration_gfx942() {
    run("texref_registration", "gfx942", false);
}

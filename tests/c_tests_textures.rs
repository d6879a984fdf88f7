//! Texture and surface objects: `c_tests/hipcc/textures.cpp`, built by Debian's hipcc with
//! AMD's ROCm 5.2 headers for gfx90a (hipshim's own headers have no device-side texture
//! functions), run on hipshim over hsasim in its threaded and deterministic
//! (`HSASIM_THREADS=0`) modes. On gfx90a it reads 1D, 2D, 3D and layered array textures of
//! every channel count and 8/16/32-bit integer, half and float formats at unnormalized and
//! normalized coordinates, filters linearly, wraps, clamps and reads the border, reads 8/16-bit
//! integers as normalized floats, samples pitch2D memory and a single-level mipmapped array,
//! fetches from linear memory (`tex1Dfetch`: hsasim's `buffer_load_format_*`),
//! goes through the driver API, writes and reads a surface, and checks the getters and the
//! errors. On gfx942 (no image instructions) it checks that the device says so and that every
//! call answers hipErrorNotSupported.
//!
//! AMD's own runtime cannot serve as the reference here: over hsasim it reports no image
//! support (hsasim offers ROCr no image extension), so it refuses the arrays' textures.

mod common;

use common::ctest::run_in_mode;
use std::path::PathBuf;

fn program() -> PathBuf {
    let source = common::repo_root().join("c_tests/hipcc/textures.cpp");
    common::hipcc_build(&source, "textures-hipcc", "c_tests_textures")
}

fn run(target: &str, deterministic: bool, args: &[&str]) {
    let lib_dir = common::lib_dir();
    let out = run_in_mode(&program(), "textures", target, deterministic, |cmd| {
        cmd.env("LD_LIBRARY_PATH", lib_dir).args(args);
    });
    assert!(out.contains("textures: PASSED"), "{out}");
}

#[test]
fn textures_and_surfaces_gfx90a() {
    run("gfx90a", false, &[]);
}

#[test]
fn textures_and_surfaces_gfx90a_deterministic() {
    run("gfx90a", true, &[]);
}

#[test]
fn no_textures_without_image_instructions_gfx942() {
    run("gfx942", false, &["no-images"]);
}

#[test]
fn no_textures_without_image_instructions_gfx942_deterministic() {
    run("gfx942", true, &["no-images"]);
}

//! Texture and surface objects, and texture references (`c_tests/hipcc/texref.cpp`, below):
//! `c_tests/hipcc/textures.cpp`, built by Debian's hipcc with
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

// ---- texture references (`c_tests/hipcc/texref.cpp`) ------------------------------------
//
// `texture<>` globals registered by __hipRegisterTexture, bound to linear memory, a 2D array
// and pitched memory, read by tex1Dfetch and tex2D; filter and address modes and flags set
// through hipTexRefSet*, the getters, unbinding and the errors; a module's texture variable
// through hipModuleGetTexRef and hipTexRefSetAddress, read by the module's kernel. On gfx942 every call answers
// hipErrorNotSupported, and so does every call under the ROCm 7 ABI (AMD removed the API).

fn texref_program() -> PathBuf {
    let source = common::repo_root().join("c_tests/hipcc/texref.cpp");
    common::hipcc_build(&source, "texref-hipcc", "c_tests_textures")
}

fn run_texref(target: &str, deterministic: bool, args: &[&str], abi: Option<&str>) {
    let lib_dir = common::lib_dir();
    let out = run_in_mode(&texref_program(), "texref", target, deterministic, |cmd| {
        cmd.env("LD_LIBRARY_PATH", lib_dir).args(args);
        if let Some(abi) = abi {
            cmd.env("HIPSHIM_ABI", abi);
        }
    });
    assert!(out.contains("texref: PASSED"), "{out}");
}

/// The same source as a code object (`--genco`): a module whose `lin` is a texture variable,
/// for hipModuleGetTexRef.
fn texref_module() -> PathBuf {
    let hipcc = common::require_tool("hipcc");
    let source = common::repo_root().join("c_tests/hipcc/texref.cpp");
    let flags = ["--genco", "--offload-arch=gfx90a", "-O3"];
    let mut key = common::Fnv::new();
    key.tool(&hipcc).file(&source);
    for f in flags {
        key.bytes(f.as_bytes());
    }
    let cache = common::target_dir().join("c_tests_textures");
    common::cached_build(&cache, "texref-hipcc.co", &key, |out| {
        let mut cmd = std::process::Command::new(&hipcc);
        cmd.env("HIP_PLATFORM", "amd")
            .env("HIP_PATH", "/usr")
            .env("ROCM_PATH", "/usr")
            .args(flags)
            .arg(&source)
            .arg("-o")
            .arg(out);
        cmd
    })
}

#[test]
fn module_texture_reference_gfx90a() {
    let module = texref_module();
    run_texref("gfx90a", false, &["module", module.to_str().unwrap()], None);
}

#[test]
fn texture_references_gfx90a() {
    run_texref("gfx90a", false, &[], None);
}

#[test]
fn texture_references_gfx90a_deterministic() {
    run_texref("gfx90a", true, &[], None);
}

#[test]
fn texture_references_rocm5_profile() {
    run_texref("gfx90a", false, &[], Some("5"));
}

#[test]
fn no_texture_references_without_image_instructions_gfx942() {
    run_texref("gfx942", false, &["no-images"], None);
}

#[test]
fn no_texture_references_under_the_rocm7_abi() {
    run_texref("gfx90a", false, &["rocm7"], Some("7"));
}

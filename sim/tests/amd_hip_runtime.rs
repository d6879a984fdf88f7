//! AMD's own HIP runtime on hsasim: `c_tests/vector_add.hip` built by Debian's `hipcc`
//! (ROCm 5.2, gfx90a, code object v4) and linked to Debian's real `libamdhip64.so.5`, run
//! with `LD_LIBRARY_PATH` giving it hsasim as `libhsa-runtime64.so.1` and the gfx90a model.
//! AMD's runtime initialises on the simulated agents, loads its blit kernels and the
//! program's code object through hsasim's loader (and the AMD loader extension table),
//! copies with blit kernels on hsasim's AQL queues, and the program checks its results.
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const HIPCC: &str = "/usr/bin/hipcc";
const AMD_HIP: &str = "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5";

/// The hipcc-built vector_add, or `None` (with a SKIPPED line) when Debian's HIP is absent.
fn vector_add() -> Option<&'static PathBuf> {
    static EXE: OnceLock<Option<PathBuf>> = OnceLock::new();
    EXE.get_or_init(|| {
        if !Path::new(HIPCC).exists() || !Path::new(AMD_HIP).exists() {
            eprintln!(
                "SKIPPED: Debian's hipcc and libamdhip64.so.5 are not installed (scripts/setup.sh installs them)"
            );
            return None;
        }
        let dir = std::env::temp_dir().join(format!("hsasim-amdhip-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join("vector_add");
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../c_tests/vector_add.hip");
        let out = Command::new(HIPCC)
            .env("HIP_PLATFORM", "amd")
            .env("HIP_PATH", "/usr")
            .env("ROCM_PATH", "/usr")
            .args(["--offload-arch=gfx90a", "-O3"])
            .arg(&source)
            .arg("-o")
            .arg(&exe)
            .output()
            .expect("hipcc runs");
        assert!(
            out.status.success(),
            "hipcc failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        Some(exe)
    })
    .as_ref()
}

fn run_on_hsasim(exe: &Path, threads: &str) -> (bool, String, String) {
    let out = Command::new(exe)
        .env("LD_LIBRARY_PATH", common::rocr_link_dir("amdhip"))
        .env_remove("LD_PRELOAD")
        .env("HSASIM_GFX", "gfx90a")
        .env("HSASIM_THREADS", threads)
        .env("HSASIM_LOG", "hsasim=info")
        .env_remove("HSASIM_GPUS")
        .output()
        .expect("vector_add starts");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn check(threads: &str) {
    let Some(exe) = vector_add() else { return };
    let (ok, stdout, stderr) = run_on_hsasim(exe, threads);
    assert!(
        ok && stdout.contains("vector_add: PASSED"),
        "AMD's libamdhip64.so.5 on hsasim (HSASIM_THREADS={threads}) failed:\n{stdout}\n{stderr}"
    );
    assert!(
        stderr.contains("hsa_init"),
        "the HSA runtime AMD's HIP loaded was not hsasim:\n{stderr}"
    );
}

#[test]
fn amd_libamdhip64_runs_hipcc_vector_add_on_hsasim() {
    check("1");
}

#[test]
fn amd_libamdhip64_runs_hipcc_vector_add_on_hsasim_deterministically() {
    check("0");
}

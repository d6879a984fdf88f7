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

/// Debian's HIP is installed (else prints a SKIPPED line).
fn have_amd_hip() -> bool {
    let ok = Path::new(HIPCC).exists() && Path::new(AMD_HIP).exists();
    if !ok {
        eprintln!(
            "SKIPPED: Debian's hipcc and libamdhip64.so.5 are not installed (scripts/setup.sh installs them)"
        );
    }
    ok
}

/// `c_tests/<rel>.hip` built by hipcc for gfx90a, cached in cargo's per-target test
/// directory and rebuilt when the source is newer.
fn hipcc_build(rel: &str) -> PathBuf {
    hipcc_build_source(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../c_tests/{rel}.hip")),
        rel,
    )
}

fn hipcc_build_source(source: &Path, rel: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("amd-hip");
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join(rel.replace('/', "_"));
    let mtime = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if mtime(&exe).is_some() && mtime(&exe) >= mtime(source) {
        return exe;
    }
    let partial = dir.join(format!(
        "{}.partial-{}",
        rel.replace('/', "_"),
        std::process::id()
    ));
    let out = Command::new(HIPCC)
        .env("HIP_PLATFORM", "amd")
        .env("HIP_PATH", "/usr")
        .env("ROCM_PATH", "/usr")
        .args(["--offload-arch=gfx90a", "-O3"])
        .arg(source)
        .arg("-o")
        .arg(&partial)
        .output()
        .expect("hipcc runs");
    assert!(
        out.status.success(),
        "hipcc failed on {rel}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::rename(&partial, &exe).unwrap();
    exe
}

/// The hipcc-built vector_add, or `None` when Debian's HIP is absent.
fn vector_add() -> Option<&'static PathBuf> {
    static EXE: OnceLock<Option<PathBuf>> = OnceLock::new();
    EXE.get_or_init(|| have_amd_hip().then(|| hipcc_build("vector_add")))
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
    check_program(exe, "vector_add: PASSED", threads);
}

fn check_program(exe: &Path, success: &str, threads: &str) {
    let (ok, stdout, stderr) = run_on_hsasim(exe, threads);
    assert!(
        ok && stdout.contains(success),
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

/// More of AMD's runtime on the simulator: LDS reductions and histograms, tiled matmul,
/// atomics, hipMemset/hipMemcpy through AMD's blit kernels.
#[test]
fn amd_libamdhip64_runs_hipcc_corpus_programs_on_hsasim() {
    if !have_amd_hip() {
        return;
    }
    for name in [
        "block_reduce",
        "lds_histogram",
        "matmul_tiled",
        "atomics",
        "x_only_ids",
    ] {
        let exe = hipcc_build(&format!("corpus/{name}"));
        check_program(&exe, &format!("{name}: PASSED"), "1");
    }
}

/// AMD's ROCm 5.2 compiler (clang-15, code object v4) builds the flat address of a stack
/// object from `s_getreg_b32 hwreg(HW_REG_SH_MEM_BASES, 0, 16)` (the private aperture base,
/// shifted left by 16 into the high dword), where clang-19 uses `src_private_base`: both must
/// name the same aperture, at a multiple of 2^48, for stack objects to be reachable.
#[test]
fn amd_libamdhip64_runs_hipcc_noinline_stack_on_hsasim() {
    if !have_amd_hip() {
        return;
    }
    let exe = hipcc_build("corpus/noinline_stack");
    check_program(&exe, "noinline_stack: PASSED", "1");
}

/// `hipMallocManaged` + `hipMemAdvise` + `hipMemPrefetchAsync` on AMD's runtime: SVM
/// attributes make plain host memory device-accessible on the xnack- model.
#[test]
fn amd_libamdhip64_managed_memory_uses_svm_attributes_on_hsasim() {
    if !have_amd_hip() {
        return;
    }
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/amd_hip/managed.hip");
    let exe = hipcc_build_source(&source, "managed");
    check_program(&exe, "managed: PASSED", "1");
    check_program(&exe, "managed: PASSED", "0");
}

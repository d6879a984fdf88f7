//! Real-world kernels: host programs that call Debian's ROCm libraries
//! (`librocsparse0`, `librocrand1`), whose GPU code is AMD-built gfx90a:xnack-
//! code objects, run on hipshim over the gfx90a model of hsasim and check the
//! results against CPU references (`c_tests/real_world/`):
//!
//! - `rocsparse_csrmv.cpp`: `rocsparse_{s,d}csrmv` with and without the
//!   analysis step (general and adaptive kernels) on a ragged random CSR
//!   matrix, against a CPU SpMV;
//! - `rocrand_philox.cpp`: rocRAND's Philox4x32-10 generator bit for bit
//!   against a CPU Philox4x32-10 (words, uniform floats), and normal floats
//!   against CPU Box-Muller plus moments;
//! - `rocrand_xorwow.cpp`: rocRAND's XORWOW generator bit for bit against a
//!   CPU XORWOW, including the per-engine subsequence jump (2^67 steps) that
//!   its init kernel does with 160x160 GF(2) matrices (~10 s on hsasim).
//!
//! The programs are built with Debian's `hipcc` (ROCm 5.2), so they link the
//! real `libamdhip64.so.5` and the libraries' own dependency on it; the tests
//! swap in our library with `LD_LIBRARY_PATH` or `LD_PRELOAD`. Each runs in
//! threaded mode and in hsasim's deterministic mode (`HSASIM_THREADS=0`).
//!
//! When the libraries or their headers are not installed the tests say so and
//! pass (install them with `sudo scripts/setup.sh`).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use common::Fnv;

const HIPCC: &str = "hipcc";
const LIB_DIR: &str = "/usr/lib/x86_64-linux-gnu";

/// A ROCm library a program links: its Debian package, a header the program
/// includes and the shared object it loads.
struct RocmLib {
    package: &'static str,
    header: &'static str,
    soname: &'static str,
    link: &'static str,
}

const ROCSPARSE: RocmLib = RocmLib {
    package: "librocsparse0 + librocsparse-dev",
    header: "/usr/include/rocsparse/rocsparse.h",
    soname: "librocsparse.so.0",
    link: "-lrocsparse",
};

const ROCRAND: RocmLib = RocmLib {
    package: "librocrand1 + librocrand-dev",
    header: "/usr/include/rocrand/rocrand.h",
    soname: "librocrand.so.1",
    link: "-lrocrand",
};

impl RocmLib {
    /// Whether the library and its headers are installed; if not, says which
    /// package is missing (the caller then skips).
    fn available(&self, test: &str) -> bool {
        let missing: Vec<String> = [
            PathBuf::from(self.header),
            Path::new(LIB_DIR).join(self.soname),
        ]
        .into_iter()
        .filter(|p| !p.exists())
        .map(|p| p.display().to_string())
        .collect();
        if missing.is_empty() {
            return true;
        }
        eprintln!(
            "SKIPPED {test}: {} not installed (missing {}); run `sudo scripts/setup.sh`",
            self.package,
            missing.join(", ")
        );
        false
    }
}

/// Builds `c_tests/real_world/<stem>.cpp` with Debian's hipcc, linked to
/// `lib` (cached in `<target>/real_world/`).
fn build(stem: &str, lib: &RocmLib) -> PathBuf {
    let hipcc = common::require_tool(HIPCC);
    let source = common::repo_root()
        .join("c_tests/real_world")
        .join(format!("{stem}.cpp"));
    // The programs have no kernels of their own; naming the target keeps
    // hipcc from probing for a GPU (rocm_agent_enumerator).
    let flags = ["--offload-arch=gfx90a", "-O2", lib.link];
    let mut key = Fnv::new();
    let checks = source.with_file_name("checks.h");
    key.tool(&hipcc)
        .file(&source)
        .file(&checks)
        .file(Path::new(lib.header));
    for f in flags {
        key.bytes(f.as_bytes());
    }
    let cache = common::target_dir().join("real_world");
    common::cached_build(&cache, stem, &key, |out| {
        let mut cmd = Command::new(&hipcc);
        // As in tests/existing_binary.rs: pin hipcc to Debian's ROCm in /usr.
        cmd.env("HIP_PLATFORM", "amd")
            .env("HIP_PATH", "/usr")
            .env("ROCM_PATH", "/usr")
            .arg(&source)
            .args(&flags[..2])
            .arg("-o")
            .arg(out)
            .arg(flags[2]);
        cmd
    })
}

/// How the program finds our library instead of AMD's.
#[derive(Clone, Copy, Debug)]
enum Loader {
    LibraryPath,
    Preload,
}

/// hsasim's execution mode.
#[derive(Clone, Copy, Debug)]
enum Mode {
    Threaded,
    Deterministic,
}

/// Runs `program` on hipshim's gfx90a simulator and requires it to exit 0
/// and print `<stem>: PASSED`; returns its stdout.
fn run_passes(program: &Path, stem: &str, loader: Loader, mode: Mode) -> String {
    let mut cmd = Command::new(program);
    common::clear_loader_env(&mut cmd);
    common::use_simulator(&mut cmd, "gfx90a");
    let lib_dir = common::lib_dir();
    match loader {
        Loader::LibraryPath => cmd.env("LD_LIBRARY_PATH", lib_dir),
        Loader::Preload => cmd.env("LD_PRELOAD", lib_dir.join("libamdhip64.so")),
    };
    match mode {
        Mode::Threaded => cmd.env_remove("HSASIM_THREADS"),
        Mode::Deterministic => cmd.env("HSASIM_THREADS", "0"),
    };
    let start = Instant::now();
    let out = common::run(&mut cmd, common::program_timeout());
    let elapsed = start.elapsed();
    let report = out.report(&cmd);
    let what = format!("{stem} ({loader:?}, {mode:?})");
    assert!(!out.timed_out, "{what}: did not finish\n{report}");
    assert!(
        out.status.success(),
        "{what}: exited with {}\n{report}",
        out.status
    );
    let success = format!("{stem}: PASSED");
    let stdout = out.stdout();
    assert!(
        stdout.contains(&success),
        "{what}: no `{success}` in its output\n{report}"
    );
    print!("{stdout}");
    eprint!("{}", out.stderr());
    println!("{what}: {:.2} s", elapsed.as_secs_f64());
    stdout
}

/// The premise: the program and the library it calls both ask for the real
/// HIP runtime by its ROCm 5 soname (so `LD_LIBRARY_PATH` swaps in ours for
/// both).
fn assert_needs_libamdhip64_so_5(program: &Path, lib: &RocmLib) {
    let dynamic = common::tool_output("readelf", &["-d", "-W"], program);
    let soname = format!("Shared library: [{}]", lib.soname);
    assert!(
        dynamic.contains(&soname),
        "{} does not need {}:\n{dynamic}",
        program.display(),
        lib.soname
    );
    let library = common::tool_output(
        "readelf",
        &["-d", "-W"],
        &Path::new(LIB_DIR).join(lib.soname),
    );
    assert!(
        library.contains("Shared library: [libamdhip64.so.5]"),
        "{} does not need libamdhip64.so.5:\n{library}",
        lib.soname
    );
}

// ---- rocSPARSE --------------------------------------------------------------

const CSRMV: &str = "rocsparse_csrmv";

#[test]
fn rocsparse_csrmv_matches_cpu_spmv_with_ld_library_path() {
    if !ROCSPARSE.available(CSRMV) {
        return;
    }
    let program = build(CSRMV, &ROCSPARSE);
    assert_needs_libamdhip64_so_5(&program, &ROCSPARSE);
    let out = run_passes(&program, CSRMV, Loader::LibraryPath, Mode::Threaded);
    // Both precisions, both kernels, and the stream run all reported.
    for line in [
        "scsrmv without analysis",
        "scsrmv with analysis",
        "dcsrmv on a stream, device scalars",
    ] {
        assert!(out.contains(line), "no `{line}` in the output:\n{out}");
    }
}

#[test]
fn rocsparse_csrmv_matches_cpu_spmv_in_deterministic_mode() {
    if !ROCSPARSE.available(CSRMV) {
        return;
    }
    let program = build(CSRMV, &ROCSPARSE);
    run_passes(&program, CSRMV, Loader::LibraryPath, Mode::Deterministic);
}

// ---- rocRAND ----------------------------------------------------------------

const PHILOX: &str = "rocrand_philox";

#[test]
fn rocrand_philox_matches_cpu_philox_with_ld_library_path() {
    if !ROCRAND.available(PHILOX) {
        return;
    }
    let program = build(PHILOX, &ROCRAND);
    assert_needs_libamdhip64_so_5(&program, &ROCRAND);
    run_passes(&program, PHILOX, Loader::LibraryPath, Mode::Threaded);
}

#[test]
fn rocrand_philox_matches_cpu_philox_with_ld_preload() {
    if !ROCRAND.available(PHILOX) {
        return;
    }
    let program = build(PHILOX, &ROCRAND);
    run_passes(&program, PHILOX, Loader::Preload, Mode::Threaded);
}

#[test]
fn rocrand_philox_matches_cpu_philox_in_deterministic_mode() {
    if !ROCRAND.available(PHILOX) {
        return;
    }
    let program = build(PHILOX, &ROCRAND);
    run_passes(&program, PHILOX, Loader::LibraryPath, Mode::Deterministic);
}

const XORWOW: &str = "rocrand_xorwow";

#[test]
fn rocrand_xorwow_matches_cpu_xorwow_with_ld_library_path() {
    if !ROCRAND.available(XORWOW) {
        return;
    }
    let program = build(XORWOW, &ROCRAND);
    run_passes(&program, XORWOW, Loader::LibraryPath, Mode::Threaded);
}

#[test]
fn rocrand_xorwow_matches_cpu_xorwow_in_deterministic_mode() {
    if !ROCRAND.available(XORWOW) {
        return;
    }
    let program = build(XORWOW, &ROCRAND);
    run_passes(&program, XORWOW, Loader::LibraryPath, Mode::Deterministic);
}

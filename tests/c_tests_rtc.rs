//! hiprtc (`c_tests/rtc/`): runtime compilation on hipshim over hsasim.
//!
//! - `rtc.hip` (built with hipshim's headers): compile, name expressions, headers, options,
//!   load and launch, bitcode and `hiprtcLink*`, and the error cases; on gfx942 and gfx90a,
//!   each in hsasim's threaded and deterministic (`HSASIM_THREADS=0`) modes. Run again with
//!   `HIPSHIM_RTC_CLANG` naming a missing file, it checks the no-compiler error and log.
//! - `hipcc_saxpy.cpp`: built by Debian's hipcc with AMD's ROCm 5.2 `hip/hiprtc.h` (hiprtc
//!   from `libamdhip64.so.5`), the flow of AMD's `runtime_compilation` example; also run
//!   under AMD's own runtime over hsasim as the reference, where that is installed.
//! - `rocm6_hiprtc.cpp`: linked as ROCm 6/7 programs are, against a `libhiprtc.so.6` with
//!   unversioned exports, and run with hipshim's lib dir answering to that soname.
//!
//! hiprtc runs a compiler found at run time (clang-19 here): without one these tests say so
//! and pass (`sudo scripts/setup.sh` installs it).

mod common;

use common::ctest::{build, c_tests_dir, DEFAULT_TARGETS};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The compiler hiprtc looks for first; without it (and no HIPSHIM_RTC_CLANG) there is
/// nothing to test but the error, which `no_compiler_*` covers.
fn compiler_installed() -> bool {
    let found = std::env::var_os("HIPSHIM_RTC_CLANG").is_some()
        || std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .any(|dir| dir.join("clang++-19").is_file());
    if !found {
        println!(
            "SKIPPED: no clang++-19 on PATH for hiprtc to compile with \
             (install it with `sudo scripts/setup.sh`)"
        );
    }
    found
}

fn rtc_program() -> PathBuf {
    let source = c_tests_dir("rtc").join("rtc.hip");
    let targets: Vec<String> = DEFAULT_TARGETS.iter().map(|s| s.to_string()).collect();
    build(&source, "rtc", &targets)
}

/// Runs `program` on hipshim's model of `gfx` and expects `passed` in its output.
fn run_and_expect(program: &Path, gfx: &str, passed: &str, setup: impl FnOnce(&mut Command)) {
    let mut cmd = Command::new(program);
    common::clear_loader_env(&mut cmd);
    common::use_simulator(&mut cmd, gfx);
    setup(&mut cmd);
    let out = common::run(&mut cmd, common::program_timeout());
    let report = out.report(&cmd);
    assert!(
        !out.timed_out,
        "{} did not finish\n{report}",
        program.display()
    );
    assert!(
        out.status.success() && out.stdout().contains(passed),
        "{} ({gfx}): {}\n{report}",
        program.display(),
        out.status
    );
    print!("{}", out.stdout());
}

fn run_rtc(gfx: &str, deterministic: bool) {
    if !compiler_installed() {
        return;
    }
    run_and_expect(&rtc_program(), gfx, "rtc: PASSED", |cmd| {
        if deterministic {
            cmd.env("HSASIM_THREADS", "0");
        } else {
            cmd.env_remove("HSASIM_THREADS");
        }
    });
}

#[test]
fn rtc_gfx942() {
    run_rtc("gfx942", false);
}

#[test]
fn rtc_gfx942_deterministic() {
    run_rtc("gfx942", true);
}

#[test]
fn rtc_gfx90a() {
    run_rtc("gfx90a", false);
}

#[test]
fn rtc_gfx90a_deterministic() {
    run_rtc("gfx90a", true);
}

/// Needs no compiler: that is the point.
#[test]
fn no_compiler_is_a_compilation_error_with_a_log_saying_what_is_missing() {
    let program = rtc_program();
    let missing = common::target_dir().join("no-such-clang++");
    run_and_expect(&program, "gfx942", "rtc (no compiler): PASSED", |cmd| {
        cmd.arg("no-compiler").env("HIPSHIM_RTC_CLANG", &missing);
    });
}

/// Builds `source` with Debian's hipcc for gfx90a (cached), or `None` when hipcc is not
/// installed.
fn hipcc_build(source: &Path, stem: &str) -> Option<PathBuf> {
    if !Path::new("/usr/include/hip/hiprtc.h").is_file() {
        println!("SKIPPED: AMD's hip/hiprtc.h is not installed (libamdhip64-dev)");
        return None;
    }
    Some(common::hipcc_build(source, stem, "c_tests_rtc"))
}

#[test]
fn hipcc_program_with_amds_rocm5_header_compiles_and_launches() {
    if !compiler_installed() {
        return;
    }
    let Some(program) = hipcc_build(&c_tests_dir("rtc").join("hipcc_saxpy.cpp"), "hipcc_saxpy")
    else {
        return;
    };
    let imports = common::tool_output("objdump", &["-T", "-w"], &program);
    assert!(
        imports
            .lines()
            .any(|l| l.contains("(hip_4.2)") && l.ends_with(" hiprtcCompileProgram")),
        "hipcc's program does not import hiprtcCompileProgram@hip_4.2:\n{imports}"
    );
    let lib_dir = common::lib_dir();
    for deterministic in [false, true] {
        run_and_expect(&program, "gfx90a", "hipcc_saxpy: PASSED", |cmd| {
            cmd.env("LD_LIBRARY_PATH", lib_dir);
            if deterministic {
                cmd.env("HSASIM_THREADS", "0");
            }
        });
    }
    // The reference: AMD's hiprtc (ROCm 5.2, through comgr) runs the same binary over hsasim
    // and finds the same lowered name.
    let amd = Path::new(common::AMDS_RUNTIME);
    let comgr = Path::new("/usr/lib/x86_64-linux-gnu/libamd_comgr.so.2");
    if !amd.exists() || !comgr.exists() {
        println!("skipped the AMD run: its libamdhip64.so.5 or comgr is not installed");
        return;
    }
    let mut cmd = common::amds_runtime(&program);
    let out = common::run(&mut cmd, common::program_timeout());
    let report = out.report(&cmd);
    assert!(
        out.status.success()
            && out.stdout().contains("hipcc_saxpy: PASSED")
            && out.stdout().contains("lowered to _Z4fillILi5EEvPi"),
        "under AMD's runtime: {}\n{report}",
        out.status
    );
}

/// A stand-in for ROCm 6's `libhiprtc.so.6` to link against: the hiprtc names, exported
/// without a symbol version as AMD's version script (`hiprtc.map.in`, no node name) does.
fn fake_rocm6_libhiprtc(dir: &Path) {
    let names = [
        "hiprtcVersion",
        "hiprtcCreateProgram",
        "hiprtcDestroyProgram",
        "hiprtcAddNameExpression",
        "hiprtcCompileProgram",
        "hiprtcGetLoweredName",
        "hiprtcGetProgramLogSize",
        "hiprtcGetProgramLog",
        "hiprtcGetCodeSize",
        "hiprtcGetCode",
        "hiprtcGetErrorString",
    ];
    std::fs::create_dir_all(dir).unwrap();
    let source: String = names
        .iter()
        .map(|n| format!("int {n}(void) {{ return 1; }}\n"))
        .collect();
    std::fs::write(dir.join("stub.c"), source).unwrap();
    std::fs::write(
        dir.join("hiprtc.map"),
        "{\nglobal:\n    hiprtc*;\nlocal:\n    *;\n};\n",
    )
    .unwrap();
    let mut cmd = Command::new(common::require_tool("clang-19"));
    cmd.current_dir(dir).args([
        "-shared",
        "-fPIC",
        "stub.c",
        "-Wl,--version-script=hiprtc.map",
        "-Wl,-soname,libhiprtc.so.6",
        "-o",
        "libhiprtc.so.6",
    ]);
    let out = common::run(&mut cmd, std::time::Duration::from_secs(120));
    assert!(out.status.success(), "{}", out.report(&cmd));
    let link = dir.join("libhiprtc.so");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink("libhiprtc.so.6", link).unwrap();
}

#[test]
fn rocm6_program_linked_with_libhiprtc_so_6_runs_on_hipshim() {
    if !compiler_installed() {
        return;
    }
    let stub_dir = common::target_dir().join("c_tests_rtc/fake-rocm6");
    fake_rocm6_libhiprtc(&stub_dir);
    let source = c_tests_dir("rtc").join("rocm6_hiprtc.cpp");
    let lib_dir = common::lib_dir();
    let program = stub_dir.join("rocm6_hiprtc");
    let mut cmd = Command::new(common::require_tool(common::ctest::CLANG));
    cmd.arg(&source)
        .arg(format!(
            "-I{}",
            common::repo_root().join("hip_headers").display()
        ))
        .arg(format!("-L{}", stub_dir.display()))
        .arg("-lhiprtc")
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        .arg("-o")
        .arg(&program);
    let out = common::run(&mut cmd, std::time::Duration::from_secs(300));
    assert!(out.status.success(), "{}", out.report(&cmd));
    let dynamic = common::tool_output("readelf", &["-d", "-W"], &program);
    assert!(
        dynamic.contains("[libhiprtc.so.6]") && !dynamic.contains("libamdhip64"),
        "{dynamic}"
    );
    let imports = common::tool_output("objdump", &["-T", "-w"], &program);
    let line = imports
        .lines()
        .find(|l| l.ends_with(" hiprtcCompileProgram"))
        .unwrap_or_else(|| panic!("no hiprtcCompileProgram import:\n{imports}"));
    assert!(!line.contains("(hip_"), "the import is versioned: {line}");
    run_and_expect(&program, "gfx942", "rocm6_hiprtc: PASSED", |_| {});
}

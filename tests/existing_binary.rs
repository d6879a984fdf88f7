//! An existing binary: `c_tests/vector_add.hip` built by Debian's `hipcc`
//! (ROCm 5.2: clang-15, AMD's own headers from /usr/include/hip,
//! `--offload-arch=gfx90a`, code object v4) and linked to the real
//! `libamdhip64.so.5`, then run on hipshim without relinking:
//!
//! - with `LD_LIBRARY_PATH=<lib dir>`, where our library answers to
//!   `libamdhip64.so.5`;
//! - with `LD_PRELOAD=<lib dir>/libamdhip64.so` (the real library still loads,
//!   but every HIP symbol binds to ours first).
//!
//! Both run on the gfx90a model of the software GPU. Built binaries are cached
//! in `<target>/existing_binary/`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::Fnv;

const HIPCC: &str = "hipcc";
const SUCCESS_LINE: &str = "vector_add: PASSED";

/// Builds `source` with Debian's hipcc for gfx90a (cached).
fn hipcc_build(source: &Path, stem: &str) -> PathBuf {
    common::hipcc_build(source, stem, "existing_binary")
}

fn vector_add_hipcc() -> PathBuf {
    let source = common::repo_root().join("c_tests/vector_add.hip");
    hipcc_build(&source, "vector_add-hipcc")
}

/// Runs an existing binary on hipshim's gfx90a simulator; `how` sets the
/// loader variables that make it pick up our library.
fn run_on_hipshim(program: &Path, how: impl FnOnce(&mut Command)) -> (Command, common::Output) {
    let mut cmd = Command::new(program);
    common::clear_loader_env(&mut cmd);
    common::use_simulator(&mut cmd, "gfx90a");
    how(&mut cmd);
    let out = common::run(&mut cmd, common::program_timeout());
    (cmd, out)
}

fn assert_passed(what: &str, cmd: &Command, out: &common::Output) {
    let report = out.report(cmd);
    assert!(!out.timed_out, "{what}: did not finish\n{report}");
    assert!(
        out.status.success(),
        "{what}: exited with {}\n{report}",
        out.status
    );
    assert!(
        out.stdout().contains(SUCCESS_LINE),
        "{what}: no `{SUCCESS_LINE}` in its output\n{report}"
    );
    print!("{}", out.stdout());
    eprint!("{}", out.stderr());
}

/// The premise of the other tests: hipcc's output asks for the real library
/// by its ROCm 5 soname and imports versioned HIP symbols.
#[test]
fn hipcc_binary_needs_libamdhip64_so_5() {
    let program = vector_add_hipcc();
    let dynamic = common::tool_output("readelf", &["-d", "-W"], &program);
    assert!(
        dynamic.contains("Shared library: [libamdhip64.so.5]"),
        "hipcc's binary does not need libamdhip64.so.5:\n{dynamic}"
    );
    let symbols = common::tool_output("objdump", &["-T", "-w"], &program);
    let imports: Vec<&str> = symbols
        .lines()
        .filter(|l| l.contains("*UND*") && l.contains("(hip_"))
        .collect();
    assert!(
        imports.iter().any(|l| l.ends_with(" hipLaunchKernel")),
        "hipcc's binary imports no hipLaunchKernel@hip_*:\n{symbols}"
    );
    println!("HIP imports of {}:", program.display());
    for line in imports {
        println!(
            "  {}",
            line.split_whitespace()
                .rev()
                .take(2)
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
}

#[test]
fn hipcc_vector_add_runs_with_ld_library_path() {
    let program = vector_add_hipcc();
    let lib_dir = common::lib_dir();
    let (cmd, out) = run_on_hipshim(&program, |cmd| {
        cmd.env("LD_LIBRARY_PATH", lib_dir);
    });
    assert_passed("LD_LIBRARY_PATH run", &cmd, &out);
}

/// On a machine without an AMD GPU the default device choice (`auto`) falls back to the
/// software GPU and says so once, in words a user acts on: what is missing and which
/// setting chooses. Skipped (and says so) where `/dev/kfd` exists, since a GPU there would
/// rightly be used instead.
#[test]
fn no_gpu_notice_says_why_and_how_to_choose() {
    if Path::new("/dev/kfd").exists() {
        eprintln!("skipped: this machine has /dev/kfd, so hipshim would use its GPU");
        return;
    }
    let program = vector_add_hipcc();
    let lib_dir = common::lib_dir();
    let (cmd, out) = run_on_hipshim(&program, |cmd| {
        cmd.env("LD_LIBRARY_PATH", lib_dir)
            .env("HIPSHIM_DEVICE", "auto");
    });
    assert_passed("HIPSHIM_DEVICE=auto run", &cmd, &out);
    let stderr = out.stderr();
    let notices: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains("software GPU"))
        .collect();
    assert_eq!(notices.len(), 1, "one notice\n{}", out.report(&cmd));
    let notice = notices[0];
    for words in [
        "no AMD GPU found",
        "no /dev/kfd",
        "HIPSHIM_DEVICE=sim",
        "HIPSHIM_DEVICE=gpu",
    ] {
        assert!(notice.contains(words), "notice lacks `{words}`: {notice}");
    }
    assert!(
        !notice.contains("OUT_OF_RESOURCES") && !notice.contains("0x"),
        "the notice speaks of the machine, not of status codes: {notice}"
    );

    // Choosing the software GPU explicitly is silent.
    let (cmd, out) = run_on_hipshim(&program, |cmd| {
        cmd.env("LD_LIBRARY_PATH", lib_dir)
            .env("HIPSHIM_DEVICE", "sim");
    });
    assert_passed("HIPSHIM_DEVICE=sim run", &cmd, &out);
    assert!(
        !out.stderr().contains("software GPU"),
        "no notice when chosen\n{}",
        out.report(&cmd)
    );
}

#[test]
fn hipcc_vector_add_runs_with_ld_preload() {
    let program = vector_add_hipcc();
    let lib = common::lib_dir().join("libamdhip64.so");
    let (cmd, out) = run_on_hipshim(&program, |cmd| {
        cmd.env("LD_PRELOAD", &lib);
    });
    assert_passed("LD_PRELOAD run", &cmd, &out);
}

/// `ldd` under `LD_LIBRARY_PATH` resolves the ROCm 5 soname to our library.
#[test]
fn ldd_resolves_libamdhip64_so_5_to_hipshim() {
    let program = vector_add_hipcc();
    let lib_dir = common::lib_dir();
    let mut cmd = Command::new(common::require_tool("ldd"));
    common::clear_loader_env(&mut cmd);
    cmd.env("LD_LIBRARY_PATH", lib_dir).arg(&program);
    let out = common::run(&mut cmd, std::time::Duration::from_secs(60));
    let report = out.report(&cmd);
    assert!(out.status.success(), "{report}");
    let want = format!(
        "libamdhip64.so.5 => {}",
        lib_dir.join("libamdhip64.so.5").display()
    );
    assert!(
        out.stdout().contains(&want),
        "ldd does not show `{want}`\n{report}"
    );
}

/// A hipcc binary importing from every version node of libamdhip64.so.5
/// (hip_4.2 ... hip_5.2) starts on our library: ld.so checks the nodes at
/// load time and refuses a library that lacks one.
#[test]
fn hipcc_binary_importing_every_rocm5_version_node_starts() {
    let source = common::repo_root().join("c_tests/hipcc/version_nodes.cpp");
    let program = hipcc_build(&source, "version_nodes-hipcc");
    let symbols = common::tool_output("objdump", &["-T", "-w"], &program);
    for node in [
        "hip_4.2", "hip_4.3", "hip_4.4", "hip_4.5", "hip_5.0", "hip_5.1", "hip_5.2",
    ] {
        assert!(
            symbols.contains(&format!("({node})")),
            "version_nodes imports nothing from {node}:\n{symbols}"
        );
    }
    let lib_dir = common::lib_dir();
    let (cmd, out) = run_on_hipshim(&program, |cmd| {
        cmd.env("LD_LIBRARY_PATH", lib_dir);
    });
    let report = out.report(&cmd);
    assert!(
        out.status.success() && out.stdout().contains("version_nodes: started"),
        "the program did not start on our library\n{report}"
    );
    assert!(
        !out.stderr().contains("version `"),
        "ld.so complained about a version node\n{report}"
    );
}

/// `source`'s kernels as hipcc makes a code object for gfx90a (`--genco`: an offload bundle,
/// code object v4), which both runtimes load (ROCm 5.2's has no code object v5).
fn hipcc_code_object(source: &Path) -> PathBuf {
    let hipcc = common::require_tool(HIPCC);
    let flags = ["--genco", "--offload-arch=gfx90a", "-O3"];
    let mut key = Fnv::new();
    key.tool(&hipcc).file(source);
    for f in flags {
        key.bytes(f.as_bytes());
    }
    let cache = common::target_dir().join("existing_binary");
    common::cached_build(&cache, "kernels-hipcc.co", &key, |out| {
        let mut cmd = Command::new(&hipcc);
        cmd.env("HIP_PLATFORM", "amd")
            .env("HIP_PATH", "/usr")
            .env("ROCM_PATH", "/usr")
            .args(flags)
            .arg(source)
            .arg("-o")
            .arg(out);
        cmd
    })
}

/// hipcc with AMD's hip_ext.h: `hipExtModuleLaunchKernel` and `hipHccModuleLaunchKernel` are
/// imported under their C++ names. The program passes on hipshim (grid in work-items, a
/// partial last work-group, start/stop events) and, as the reference, under AMD's own
/// libamdhip64.so.5 over hsasim.
#[test]
fn hipcc_binary_calls_the_cxx_module_launches() {
    let source = common::repo_root().join("c_tests/hipcc/ext_module_launch.cpp");
    let program = hipcc_build(&source, "ext_module_launch-hipcc");
    let symbols = common::tool_output("objdump", &["-T", "-w"], &program);
    for name in [
        "_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j",
        "_Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_",
    ] {
        assert!(
            symbols.contains(name),
            "the program does not import {name}:\n{symbols}"
        );
    }
    let code_object =
        hipcc_code_object(&common::repo_root().join("c_tests/api/modules/kernels.hip"));
    let lib_dir = common::lib_dir();
    let (cmd, out) = run_on_hipshim(&program, |cmd| {
        cmd.env("LD_LIBRARY_PATH", lib_dir)
            .env("HIPSHIM_TEST_CODE_OBJECT", &code_object);
    });
    let report = out.report(&cmd);
    assert!(
        out.status.success() && out.stdout().contains("ext_module_launch: PASSED"),
        "on hipshim: {}\n{report}",
        out.status
    );
    // AMD's runtime, where Debian installed it, runs the same binary over hsasim.
    let amd = Path::new(common::AMDS_RUNTIME);
    if !amd.exists() {
        eprintln!("skipped the AMD run: {} is not installed", amd.display());
        return;
    }
    let mut cmd = common::amds_runtime(&program);
    cmd.env("HIPSHIM_TEST_CODE_OBJECT", &code_object);
    let out = common::run(&mut cmd, common::program_timeout());
    let report = out.report(&cmd);
    assert!(
        out.status.success() && out.stdout().contains("ext_module_launch: PASSED"),
        "under AMD's runtime: {}\n{report}",
        out.status
    );
}

/// The occupancy calls answer as AMD's runtime does (its numbers, taken live from AMD's
/// libamdhip64.so.5 over hsasim for the same hipcc-built binary), for kernels limited by wave
/// slots, LDS (static and dynamic) and registers. The one deliberate difference: blocks larger
/// than a kernel's `__launch_bounds__`, which AMD counts as if they could run and hipshim does
/// not (0 blocks; never proposed as the potential block size).
#[test]
fn occupancy_matches_amds_runtime() {
    let source = common::repo_root().join("c_tests/hipcc/occupancy.cpp");
    let program = hipcc_build(&source, "occupancy-hipcc");
    let lib_dir = common::lib_dir();
    let (cmd, out) = run_on_hipshim(&program, |cmd| {
        cmd.env("LD_LIBRARY_PATH", lib_dir);
    });
    assert!(out.status.success(), "on hipshim:\n{}", out.report(&cmd));
    let ours = out.stdout();
    // AMD's occupancy example: a 32-thread block, 32 resident groups (50% of 2048 threads).
    assert!(
        ours.contains("tiny block 32 lds 0: hipSuccess 32\n"),
        "{ours}"
    );
    let amd = Path::new(common::AMDS_RUNTIME);
    assert!(amd.exists(), "hipcc is installed without AMD's runtime");
    let mut cmd = common::amds_runtime(&program);
    let out = common::run(&mut cmd, common::program_timeout());
    assert!(
        out.status.success(),
        "under AMD's runtime:\n{}",
        out.report(&cmd)
    );
    let theirs = out.stdout();
    // `registers` is declared with __launch_bounds__(256).
    let over_bounds = |line: &str| {
        line.starts_with("registers block 512 ")
            || line.starts_with("registers block 1024 ")
            || line.starts_with("registers potential ")
    };
    let (ours, theirs): (Vec<&str>, Vec<&str>) = (
        ours.lines().filter(|l| !over_bounds(l)).collect(),
        theirs.lines().filter(|l| !over_bounds(l)).collect(),
    );
    assert!(ours.len() > 90, "too few lines compared: {}", ours.len());
    let differing: Vec<String> = ours
        .iter()
        .zip(&theirs)
        .filter(|(a, b)| a != b)
        .map(|(a, b)| format!("hipshim: {a}\n    AMD: {b}"))
        .collect();
    assert!(
        differing.is_empty() && ours.len() == theirs.len(),
        "occupancy differs from AMD's runtime:\n{}",
        differing.join("\n")
    );
}

/// Device printf in a hipcc-built program (AMD's headers, code object v4: the hostcall buffer
/// at its v4 hidden offset): on hipshim the device lines come out between the host's, with the
/// same text as under AMD's own libamdhip64.so.5 over hsasim (work-groups' lines compared
/// sorted: they run in any order).
#[test]
fn hipcc_device_printf_matches_amds_runtime() {
    let source = common::repo_root().join("c_tests/hipcc/printf.cpp");
    let program = hipcc_build(&source, "printf-hipcc");
    let lib_dir = common::lib_dir();
    let (cmd, out) = run_on_hipshim(&program, |cmd| {
        cmd.env("LD_LIBRARY_PATH", lib_dir);
    });
    assert!(out.status.success(), "on hipshim:\n{}", out.report(&cmd));
    let ours = out.stdout();
    let amd = Path::new(common::AMDS_RUNTIME);
    assert!(amd.exists(), "hipcc is installed without AMD's runtime");
    let mut cmd = common::amds_runtime(&program);
    // AMD's runtime does not finish this program on hsasim's deterministic mode (its hostcall
    // listener waits on the doorbell in HSA, and there such a wait runs pending kernels
    // itself): the reference runs threaded.
    cmd.env("HSASIM_THREADS", "1");
    let out = common::run(&mut cmd, common::program_timeout());
    assert!(
        out.status.success(),
        "under AMD's runtime:\n{}",
        out.report(&cmd)
    );
    let theirs = out.stdout();
    let shape = |text: &str| -> (Vec<String>, Vec<String>) {
        let (mut host, mut device): (Vec<String>, Vec<String>) = text
            .lines()
            .map(str::to_owned)
            .partition(|l| l.starts_with("host: "));
        device.sort();
        host.dedup();
        (host, device)
    };
    let lines: Vec<&str> = ours.lines().collect();
    assert_eq!(lines.first(), Some(&"host: before"), "{ours}");
    assert_eq!(lines.last(), Some(&"host: after (hipSuccess)"), "{ours}");
    assert_eq!(lines.len(), 6, "{ours}");
    assert_eq!(
        shape(&ours),
        shape(&theirs),
        "device printf differs from AMD's runtime:\nhipshim:\n{ours}\nAMD:\n{theirs}"
    );
}

/// Cooperative launches in a hipcc-built program (AMD's <hip/hip_cooperative_groups.h>) on two
/// devices: a grid-wide sync by `hipLaunchCooperativeKernel`, what `grid_group::is_valid()` and
/// `multi_grid_group::is_valid()` read in cooperative and ordinary launches (the value of
/// `hidden_multigrid_sync_arg`: AMD's runtime writes 1 for a cooperative launch on one device,
/// 0 for an ordinary one, as `hipshim compare` shows), and a multi-grid sync across both devices
/// by `hipLaunchCooperativeKernelMultiDevice` with the multi-grid's ranks and sizes. The output
/// is the same as under AMD's own libamdhip64.so.5 over hsasim, which runs the multi-device
/// launch there too. Threaded: hsasim's deterministic mode runs one device's work at a time,
/// where hipshim refuses two-device launches (tests/c_tests_cooperative.rs).
#[test]
fn hipcc_cooperative_launches_match_amds_runtime() {
    let source = common::repo_root().join("c_tests/hipcc/cooperative.cpp");
    let program = hipcc_build(&source, "cooperative-hipcc");
    let lib_dir = common::lib_dir();
    let (cmd, out) = run_on_hipshim(&program, |cmd| {
        cmd.env("LD_LIBRARY_PATH", lib_dir)
            .env("HSASIM_GPUS", "2")
            .env("HSASIM_THREADS", "1");
    });
    assert!(out.status.success(), "on hipshim:\n{}", out.report(&cmd));
    let ours = out.stdout();
    for line in [
        "grid sync: 4 work-groups of 64, 4 rounds, 0 wrong",
        "cooperative launch: grid valid 1, multi-grid valid 0",
        "ordinary launch: grid valid 0, multi-grid valid 0",
        "devices 2, multi-device cooperative launch 1",
        "multi-grid sync: 256 work-items on 2 devices, 0 wrong",
        "grid 1: rank 1 of 2, size 256, first thread rank 128",
    ] {
        assert!(ours.contains(line), "missing {line:?} on hipshim:\n{ours}");
    }
    let amd = Path::new(common::AMDS_RUNTIME);
    assert!(amd.exists(), "hipcc is installed without AMD's runtime");
    let mut cmd = common::amds_runtime(&program);
    cmd.env("HSASIM_GPUS", "2").env("HSASIM_THREADS", "1");
    let out = common::run(&mut cmd, common::program_timeout());
    assert!(
        out.status.success(),
        "under AMD's runtime:\n{}",
        out.report(&cmd)
    );
    assert_eq!(
        ours,
        out.stdout(),
        "cooperative launches differ from AMD's runtime"
    );
}

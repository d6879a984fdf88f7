//! HIP programs in `c_tests/` built with a stock clang against `hip_headers/`
//! and run on hipshim over the software GPU (hsasim).
//!
//! Each `c_tests/NAME.hip` checks its own results and exits non-zero with a
//! message when something differs. The program is built once by
//! `scripts/build-hip.sh` (clang-19, `-nogpuinc`, our headers), as a fat binary
//! holding a code object for each of its targets, linked with `-lamdhip64`
//! against the staged lib dir (rpath to it), and run once per target with
//! `HSASIM_GFX=<target>`: one test function per program × target, so a failure
//! names both.
//!
//! A program may declare what it needs in a line within its first 20 lines:
//!
//! ```text
//! // hipshim-test: targets=gfx90a sim=gfx942 expect-stderr=gfx90a expect-exit=0
//! ```
//!
//! - `targets`: comma-separated offload archs (default `gfx942,gfx90a`);
//! - `sim`: the model to run on instead of the target itself (to run code on a
//!   device it was not built for);
//! - `expect-stderr`: text (without spaces) the program's stderr must contain;
//! - `expect-exit`: the exit status (default 0).
//!
//! `c_tests/compile_only/` holds programs that are only built: they check that
//! the headers cover what they declare, in HIP mode and for a host-only C++
//! compiler.
//!
//! Built programs are cached in `<target>/c_tests/`, keyed by a hash of the
//! source, the headers, the build scripts, the targets and the compiler.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::Fnv;

const CLANG: &str = "clang++-19";
const DEFAULT_TARGETS: &[&str] = &["gfx942", "gfx90a"];

/// One test function per (program, target), and the list of those pairs that
/// `every_c_test_has_a_test_function` compares with `c_tests/*.hip`.
macro_rules! c_tests {
    ($($test:ident => $program:literal on $target:literal;)*) => {
        const DECLARED: &[(&str, &str)] = &[$(($program, $target)),*];
        $(
            #[test]
            fn $test() {
                run_c_test($program, $target);
            }
        )*
    };
}

c_tests! {
    vector_add_gfx942 => "vector_add" on "gfx942";
    vector_add_gfx90a => "vector_add" on "gfx90a";
    bad_input_gfx942 => "bad_input" on "gfx942";
    no_binary_gfx90a => "no_binary" on "gfx90a";
    device_fault_gfx942 => "device_fault" on "gfx942";
    device_fault_gfx90a => "device_fault" on "gfx90a";
}

/// What a program's `// hipshim-test:` line asks for.
#[derive(Debug)]
struct Spec {
    targets: Vec<String>,
    sim: Option<String>,
    /// Each of these must appear in the program's stderr (the key may repeat).
    expect_stderr: Vec<String>,
    expect_exit: i32,
}

impl Spec {
    fn parse(source: &str, path: &Path) -> Spec {
        let mut spec = Spec {
            targets: DEFAULT_TARGETS.iter().map(|s| s.to_string()).collect(),
            sim: None,
            expect_stderr: Vec::new(),
            expect_exit: 0,
        };
        let header = source
            .lines()
            .take(20)
            .filter_map(|l| l.trim().strip_prefix("// hipshim-test:"));
        for line in header {
            for field in line.split_whitespace() {
                let (key, value) = field
                    .split_once('=')
                    .unwrap_or_else(|| panic!("{}: `{field}` is not key=value", path.display()));
                match key {
                    "targets" => spec.targets = value.split(',').map(str::to_owned).collect(),
                    "sim" => spec.sim = Some(value.to_owned()),
                    "expect-stderr" => spec.expect_stderr.push(value.to_owned()),
                    "expect-exit" => {
                        spec.expect_exit = value.parse().unwrap_or_else(|_| {
                            panic!("{}: expect-exit={value} is not a number", path.display())
                        })
                    }
                    _ => panic!("{}: unknown hipshim-test key `{key}`", path.display()),
                }
            }
        }
        spec
    }
}

fn c_tests_dir() -> PathBuf {
    common::repo_root().join("c_tests")
}

/// Builds (or reuses) `source` as a fat binary for `targets` with
/// `scripts/build-hip.sh`, the one place that holds the compile flags.
fn build(source: &Path, stem: &str, targets: &[String]) -> PathBuf {
    let repo = common::repo_root();
    let scripts = repo.join("scripts");
    let clang = common::require_tool(CLANG);
    // Fails early, with instructions, when the cdylibs are not built.
    let lib_dir = common::lib_dir();
    let profile = common::profile_dir();
    let profile_name = profile.file_name().expect("profile dir name");

    let mut key = Fnv::new();
    key.tool(&clang)
        .file(source)
        .tree(&repo.join("hip_headers"))
        .file(&scripts.join("build-hip.sh"))
        .file(&scripts.join("stage-libs.sh"))
        .file(&scripts.join("hip-devlibs.sh"))
        .bytes(lib_dir.as_os_str().as_encoded_bytes())
        // Relink when the shim is rebuilt: its version nodes are recorded.
        .tool(&lib_dir.join("libamdhip64.so"));
    for t in targets {
        key.bytes(t.as_bytes());
    }
    let cache = common::target_dir().join("c_tests");
    common::cached_build(&cache, stem, &key, |out| {
        let mut cmd = Command::new("bash");
        cmd.arg(scripts.join("build-hip.sh"))
            .arg(source)
            .arg(out)
            .args(targets)
            .env("CARGO_TARGET_DIR", common::target_dir())
            .env("HIPSHIM_PROFILE", profile_name)
            .env("CLANGXX", &clang);
        cmd
    })
}

fn run_c_test(name: &str, target: &str) {
    let source_path = c_tests_dir().join(format!("{name}.hip"));
    let source = std::fs::read_to_string(&source_path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", source_path.display()));
    let spec = Spec::parse(&source, &source_path);
    assert!(
        spec.targets.iter().any(|t| t == target),
        "{name}.hip does not list target {target} (targets={:?})",
        spec.targets
    );
    let program = build(&source_path, name, &spec.targets);
    let gfx = spec.sim.as_deref().unwrap_or(target);

    let mut cmd = Command::new(&program);
    common::clear_loader_env(&mut cmd);
    common::use_simulator(&mut cmd, gfx);
    let out = common::run(&mut cmd, common::program_timeout());
    let report = out.report(&cmd);

    assert!(!out.timed_out, "{name} ({target}) did not finish\n{report}");
    assert_eq!(
        out.status.code(),
        Some(spec.expect_exit),
        "{name} ({target} on {gfx}) exited with {} instead of {}\n{report}",
        out.status,
        spec.expect_exit
    );
    for text in &spec.expect_stderr {
        assert!(
            out.stderr().contains(text.as_str()),
            "{name} ({target} on {gfx}): stderr does not mention `{text}`\n{report}"
        );
    }
    // Visible with `cargo test -- --nocapture`.
    print!("{}", out.stdout());
    eprint!("{}", out.stderr());
}

#[test]
fn every_c_test_has_a_test_function() {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(c_tests_dir()).expect("c_tests/ exists") {
        let path = entry.expect("dir entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("hip") {
            continue;
        }
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let source = std::fs::read_to_string(&path).expect("readable source");
        let spec = Spec::parse(&source, &path);
        for target in spec.targets {
            found.push((name.clone(), target));
        }
    }
    found.sort();
    let mut declared: Vec<(String, String)> = DECLARED
        .iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect();
    declared.sort();
    assert_eq!(
        found, declared,
        "c_tests/*.hip (with their `targets=`) and the c_tests! list in tests/c_tests.rs \
         differ: add a `NAME_TARGET => \"NAME\" on \"TARGET\";` line per program and target"
    );
}

/// The headers cover the device and host surface they declare: a program using
/// all of it compiles for every target and links against the shim.
#[test]
fn headers_compile_a_program_using_all_they_declare() {
    let source = c_tests_dir().join("compile_only/headers.hip");
    let targets: Vec<String> = DEFAULT_TARGETS.iter().map(|s| s.to_string()).collect();
    build(&source, "headers", &targets);
}

/// A plain C++ compiler (not in HIP mode) can include the headers for host code.
#[test]
fn headers_serve_a_host_only_cpp_compiler() {
    let source = c_tests_dir().join("compile_only/host_only.cpp");
    let headers = common::repo_root().join("hip_headers");
    let clang = common::require_tool(CLANG);
    let mut key = Fnv::new();
    key.tool(&clang).file(&source).tree(&headers);
    let cache = common::target_dir().join("c_tests");
    common::cached_build(&cache, "host_only.o", &key, |out| {
        let mut cmd = Command::new(&clang);
        cmd.args([
            "-x",
            "c++",
            "-std=c++17",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-c",
        ])
        .arg(format!("-I{}", headers.display()))
        .arg(&source)
        .arg("-o")
        .arg(out);
        cmd
    });
}

/// `HIPSHIM_LOG` selects what the shim prints: API calls at debug, packets and doorbells at
/// trace, and by default (unset) nothing but the simulator notice for a passing program.
#[test]
fn hipshim_log_shows_api_calls_at_debug_and_packets_at_trace() {
    let source_path = c_tests_dir().join("vector_add.hip");
    let source = std::fs::read_to_string(&source_path).unwrap();
    let spec = Spec::parse(&source, &source_path);
    let program = build(&source_path, "vector_add", &spec.targets);
    let run_with = |log: Option<&str>| {
        let mut cmd = Command::new(&program);
        common::clear_loader_env(&mut cmd);
        common::use_simulator(&mut cmd, "gfx942");
        match log {
            Some(filter) => cmd.env("HIPSHIM_LOG", filter),
            None => cmd.env_remove("HIPSHIM_LOG"),
        };
        let out = common::run(&mut cmd, common::program_timeout());
        assert!(
            out.status.success(),
            "vector_add failed\n{}",
            out.report(&cmd)
        );
        out.stderr()
    };
    let quiet = run_with(None);
    assert!(
        !quiet.contains("hipMalloc"),
        "no API log by default:\n{quiet}"
    );
    let debug = run_with(Some("debug"));
    assert!(
        debug.contains("api=\"hipLaunchKernel\""),
        "debug shows API calls:\n{debug}"
    );
    assert!(
        !debug.contains("doorbell"),
        "debug does not show packets:\n{debug}"
    );
    let trace = run_with(Some("trace"));
    assert!(
        trace.contains("packet published, doorbell rung"),
        "trace shows packets:\n{trace}"
    );
    assert!(
        trace.contains("signal wait done"),
        "trace shows waits:\n{trace}"
    );
}

//! The c_test runner: builds a HIP program from a `c_tests/` directory with
//! `scripts/build-hip.sh` and runs it on hipshim over hsasim, once per target.
//! Each area has its own directory and test file (`tests/c_tests*.rs`), which
//! lists its programs with [`c_tests!`] and checks that list against the
//! directory with [`check_declared`].
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
//!   may be given several times;
//! - `expect-exit`: the exit status (default 0);
//! - `env`: `NAME=VALUE` set for the run (may be given several times).
//!
//! Built programs are cached in `<target>/c_tests/`, keyed by a hash of the
//! source, the `.h` files beside it and in `c_tests/`, `hip_headers/`, the build scripts, the
//! targets and the compiler.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use super::Fnv;
use crate::common;

pub const CLANG: &str = "clang++-19";

/// For a deterministic run of a program whose kernel spins until the host writes memory while
/// the host only queries: on host time. In deterministic mode the device runs only for a
/// host that waits, and under virtual time (`HSASIM_TIME=virtual`, which the whole suite
/// also runs under) a query of unfinished work runs it to its end first, which such a
/// kernel never reaches (docs/guide/virtual-time.md, "Limits").
pub const KERNEL_WAITS_FOR_HOST: (&str, &str) = ("HSASIM_TIME", "host");
/// For a deterministic run of a program whose kernels spin until a kernel launched after them
/// starts, and which counts on the device's one thread taking the highest-priority kernel
/// first: on host time. Under virtual time deterministic mode runs work in the order it was
/// submitted (the order virtual time commits it in, so that both modes give the same
/// times), so priorities do not choose which kernel runs first.
pub const KERNELS_WAIT_FOR_LATER_ONES: (&str, &str) = ("HSASIM_TIME", "host");
pub const DEFAULT_TARGETS: &[&str] = &["gfx942", "gfx90a"];

/// One test function per (program, target) of a c_test directory, and the list
/// of those pairs that [`check_declared`] compares with the directory.
#[macro_export]
macro_rules! c_tests {
    (dir $dir:literal; $($test:ident => $program:literal on $target:literal;)*) => {
        const C_TEST_DIR: &str = $dir;
        const DECLARED: &[(&str, &str)] = &[$(($program, $target)),*];
        $(
            #[test]
            fn $test() {
                common::ctest::run_c_test(C_TEST_DIR, $program, $target);
            }
        )*
        #[test]
        fn every_c_test_has_a_test_function() {
            common::ctest::check_declared(C_TEST_DIR, DECLARED);
        }
    };
}

/// What a program's `// hipshim-test:` line asks for.
#[derive(Debug)]
pub struct Spec {
    pub targets: Vec<String>,
    pub sim: Option<String>,
    /// Each of these must appear in the program's stderr (the key may repeat).
    pub expect_stderr: Vec<String>,
    pub expect_exit: i32,
    /// Extra environment for the run.
    pub env: Vec<(String, String)>,
}

impl Spec {
    pub fn parse(source: &str, path: &Path) -> Spec {
        let mut spec = Spec {
            targets: DEFAULT_TARGETS.iter().map(|s| s.to_string()).collect(),
            sim: None,
            expect_stderr: Vec::new(),
            expect_exit: 0,
            env: Vec::new(),
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
                    "env" => {
                        let (name, val) = value.split_once('=').unwrap_or_else(|| {
                            panic!("{}: env={value} is not NAME=VALUE", path.display())
                        });
                        spec.env.push((name.to_owned(), val.to_owned()));
                    }
                    _ => panic!("{}: unknown hipshim-test key `{key}`", path.display()),
                }
            }
        }
        spec
    }
}

/// `c_tests/` or one of its area subdirectories (`dir` relative to `c_tests/`).
pub fn c_tests_dir(dir: &str) -> PathBuf {
    common::repo_root().join("c_tests").join(dir)
}

/// Builds (or reuses) `source` as a fat binary for `targets` with
/// `scripts/build-hip.sh`, the one place that holds the compile flags.
pub fn build(source: &Path, stem: &str, targets: &[String]) -> PathBuf {
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
    // Headers beside the program and those in `c_tests/` itself (the shared check.h) are
    // part of what it is.
    let beside = source.parent().expect("source dir");
    let mut headers = headers_in(beside);
    let shared = c_tests_dir("");
    if beside != shared {
        headers.extend(headers_in(&shared));
    }
    for header in &headers {
        key.file(header);
    }
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

/// The `.h` files directly in `dir`, sorted (an absent directory has none).
fn headers_in(dir: &Path) -> Vec<PathBuf> {
    let mut headers: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|dir| dir.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    headers.retain(|p| p.extension().is_some_and(|e| e == "h"));
    headers.sort();
    headers
}

/// Builds `c_tests/api/modules/kernels.hip` (the kernels programs load as modules) with
/// clang-19 as device code only: a raw code object for `targets[0]` when `bundle` is
/// false, else an offload bundle of all `targets`.
pub fn build_module_kernels(targets: &[&str], bundle: bool) -> PathBuf {
    build_device_code(
        &c_tests_dir("api").join("modules/kernels.hip"),
        "kernels",
        targets,
        bundle,
        false,
    )
}

/// Builds `source` with clang-19 as device code only, as [`build_module_kernels`] does, into
/// `c_tests/STEM-bundle` or `c_tests/STEM-TARGET.co` of the target directory; linked with the
/// device libraries (ockl...) when `device_libs`.
pub fn build_device_code(
    source: &Path,
    stem: &str,
    targets: &[&str],
    bundle: bool,
    device_libs: bool,
) -> PathBuf {
    let headers = common::repo_root().join("hip_headers");
    let clang = common::require_tool(CLANG);
    let devlibs = common::devlibs_dir();
    let mut key = Fnv::new();
    key.tool(&clang).file(source).tree(&headers);
    for t in targets {
        key.bytes(t.as_bytes());
    }
    key.bytes(if bundle { b"bundle" } else { b"co" });
    key.bytes(if device_libs { b"libs" } else { b"nolibs" });
    let stem = if bundle {
        format!("{stem}-bundle")
    } else {
        format!("{stem}-{}.co", targets[0])
    };
    let cache = common::target_dir().join("c_tests");
    common::cached_build(&cache, &stem, &key, |out: &Path| {
        let mut cmd = Command::new(&clang);
        cmd.args(["-x", "hip", "-O3", "-nogpuinc", "--cuda-device-only", "-c"]);
        if !device_libs {
            cmd.arg("-nogpulib");
        }
        for t in targets {
            cmd.arg(format!("--offload-arch={t}"));
        }
        if !bundle {
            cmd.arg("--no-gpu-bundle-output");
        }
        cmd.arg("-mcode-object-version=5")
            .arg(format!("--rocm-device-lib-path={}", devlibs.display()))
            .arg(format!("-I{}", headers.display()))
            .arg(source)
            .arg("-o")
            .arg(out);
        cmd
    })
}

pub fn run_c_test(dir: &str, name: &str, target: &str) {
    let source_path = c_tests_dir(dir).join(format!("{name}.hip"));
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
    for (name, value) in &spec.env {
        cmd.env(name, value);
    }
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

/// Fails unless `declared` lists exactly the (program, target) pairs of `dir`.
pub fn check_declared(dir: &str, declared: &[(&str, &str)]) {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(c_tests_dir(dir)).expect("the c_test dir exists") {
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
    let mut declared: Vec<(String, String)> = declared
        .iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect();
    declared.sort();
    assert_eq!(
        found, declared,
        "c_tests/{dir}/*.hip (with their `targets=`) and the c_tests! list of its test \
         file differ: add a `NAME_TARGET => \"NAME\" on \"TARGET\";` line per program and target"
    );
}

/// Builds `c_tests/DIR/NAME.hip` for both default targets; returns it with its
/// `hipshim-test:` spec (for the areas whose tests run each program in both hsasim modes).
pub fn build_area_program(dir: &str, name: &str) -> (PathBuf, Spec) {
    let source = c_tests_dir(dir).join(format!("{name}.hip"));
    let text = std::fs::read_to_string(&source)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", source.display()));
    let targets: Vec<String> = DEFAULT_TARGETS.iter().map(|s| s.to_string()).collect();
    (build(&source, name, &targets), Spec::parse(&text, &source))
}

/// Runs `program` on hsasim as `target`, in its deterministic (`HSASIM_THREADS=0`) or threaded
/// mode; `setup` adds the run's environment (after the mode, so it may override it) or working
/// directory. Fails unless the program finishes and exits 0; returns its stdout. `label`
/// names the run in failure messages.
pub fn run_in_mode(
    program: &Path,
    label: &str,
    target: &str,
    deterministic: bool,
    setup: impl FnOnce(&mut Command),
) -> String {
    let mut cmd = Command::new(program);
    common::clear_loader_env(&mut cmd);
    common::use_simulator(&mut cmd, target);
    if deterministic {
        cmd.env("HSASIM_THREADS", "0");
    } else {
        cmd.env_remove("HSASIM_THREADS");
    }
    setup(&mut cmd);
    let out = common::run(&mut cmd, common::program_timeout());
    let report = out.report(&cmd);
    let mode = if deterministic {
        "deterministic"
    } else {
        "threaded"
    };
    assert!(
        !out.timed_out,
        "{label} ({target}, {mode}) did not finish\n{report}"
    );
    assert!(
        out.status.success(),
        "{label} ({target}, {mode}) failed: {}\n{report}",
        out.status
    );
    out.stdout()
}

//! The release packages, installed as a user would install them, with no checkout involved:
//! the `.deb` unpacked into a scratch root (`dpkg-deb -x`) and the tarball into a scratch
//! prefix, each running an existing binary (Debian's hipcc, linked to AMD's
//! libamdhip64.so.5) through the installed `hipshim run` and through `LD_LIBRARY_PATH` alone.
//!
//! The packages come from `scripts/package.sh`; point `HIPSHIM_PACKAGE_DIR` at its output
//! (`.ci/run` does). Without it every test here says it was skipped, and why, and passes:
//! building a release inside `cargo test` would take longer than the rest of the suite.
//!
//! What proves the checkout is not used: the programs run from a scratch working directory
//! with a scratch copy of the program, the installed `hipshim lib-dir` names a directory
//! inside the scratch root, and the dynamic loader's own record (`LD_DEBUG=files`) shows
//! libamdhip64 and libhsasim initialised from there and nowhere else.

mod common;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

const VERSION: &str = env!("CARGO_PKG_VERSION");
const PASS_LINE: &str = "vector_add: PASSED";
/// Where the .deb puts the lib dir, beside (never over) AMD's libamdhip64 packages.
const DEB_LIB_DIR: &str = "usr/lib/x86_64-linux-gnu/hipshim";
/// The names a usable lib dir answers to (programs record libamdhip64.so.5/.6/.7 or libhiprtc).
const LIB_NAMES: &[&str] = &[
    "libamdhip64.so",
    "libamdhip64.so.5",
    "libamdhip64.so.6",
    "libamdhip64.so.7",
    "libhiprtc.so",
    "libhiprtc.so.5",
    "libhiprtc.so.6",
    "libhiprtc.so.7",
    "libhsasim.so",
];

/// The directory holding scripts/package.sh's output, or `None` (with a loud note) when the
/// test is not given one.
fn package_dir(test: &str) -> Option<PathBuf> {
    match std::env::var_os("HIPSHIM_PACKAGE_DIR") {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => {
            // Straight to stderr, past the test harness's capture: a skip must be seen.
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED install::{test}: HIPSHIM_PACKAGE_DIR is not set. Run \
                 `scripts/package.sh`, then `HIPSHIM_PACKAGE_DIR=target/package cargo test \
                 -p hipshim-cli --test install` (.ci/run does both)."
            );
            None
        }
    }
}

fn tarball(dir: &Path) -> PathBuf {
    existing(dir.join(format!("hipshim-{VERSION}-x86_64-linux-gnu.tar.gz")))
}

fn deb(dir: &Path) -> PathBuf {
    existing(dir.join(format!("hipshim_{VERSION}-1_amd64.deb")))
}

fn existing(path: PathBuf) -> PathBuf {
    assert!(
        path.is_file(),
        "{} is missing: run scripts/package.sh (HIPSHIM_PACKAGE_DIR names its output dir)",
        path.display()
    );
    path
}

/// A fresh directory under the system temp dir (outside the checkout), removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(what: &str) -> Scratch {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "hipshim-install-{what}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir.canonicalize().unwrap())
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs a packaging tool and returns its stdout, failing the test on error.
fn tool(program: &str, args: &[&std::ffi::OsStr]) -> String {
    let mut cmd = Command::new(program);
    cmd.args(args);
    let out = common::run(&mut cmd, Duration::from_secs(120));
    assert!(out.status.success(), "{}", out.report());
    out.stdout
}

/// One installation: its root, the installed `hipshim` and the lib dir it should report.
struct Installed {
    scratch: Scratch,
    hipshim: PathBuf,
    lib_dir: PathBuf,
}

fn install_deb(packages: &Path) -> Installed {
    let scratch = Scratch::new("deb");
    let root = scratch.0.join("root");
    tool(
        "dpkg-deb",
        &["-x".as_ref(), deb(packages).as_os_str(), root.as_os_str()],
    );
    Installed {
        hipshim: root.join("usr/bin/hipshim"),
        lib_dir: root.join(DEB_LIB_DIR),
        scratch,
    }
}

fn install_tarball(packages: &Path) -> Installed {
    let scratch = Scratch::new("tar");
    let prefix = scratch.0.join("opt");
    std::fs::create_dir_all(&prefix).unwrap();
    tool(
        "tar",
        &[
            "-xzf".as_ref(),
            tarball(packages).as_os_str(),
            "-C".as_ref(),
            prefix.as_os_str(),
        ],
    );
    let top = prefix.join(format!("hipshim-{VERSION}"));
    Installed {
        hipshim: top.join("bin/hipshim"),
        lib_dir: top.join("lib/hipshim"),
        scratch,
    }
}

/// Debian's hipcc build of vector_add, built once per test binary.
fn hipcc_program() -> &'static Path {
    static PROGRAM: OnceLock<PathBuf> = OnceLock::new();
    PROGRAM.get_or_init(|| common::build_hipcc("c_tests/vector_add.hip", "vector_add-hipcc"))
}

/// A command that sees none of the caller's loader or hipshim settings and starts in
/// `cwd`: only the software GPU's model and its test settings carry over.
fn clean_command(program: &Path, cwd: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.env_clear()
        .current_dir(cwd)
        .env("PATH", "/usr/bin:/bin");
    for kept in ["HSASIM_STRICT", "HSASIM_THREADS", "HIPSHIM_DEVICE", "HOME"] {
        if let Some(value) = std::env::var_os(kept) {
            cmd.env(kept, value);
        }
    }
    if std::env::var_os("HIPSHIM_DEVICE").is_none() {
        cmd.env("HIPSHIM_DEVICE", "sim");
    }
    // Debian's hipcc builds for gfx90a.
    cmd.env("HSASIM_GFX", "gfx90a");
    cmd
}

/// The program copied into the installation's scratch dir, so nothing the run touches lies
/// in the checkout.
fn scratch_program(installed: &Installed) -> PathBuf {
    let copy = installed.scratch.0.join("vector_add-hipcc");
    std::fs::copy(hipcc_program(), &copy).unwrap();
    copy
}

/// Checks the program passed and that the loader initialised hipshim's libraries from
/// `lib_dir` only (`LD_DEBUG=files` lines "calling init: PATH").
fn assert_ran_from(what: &str, out: &common::Output, lib_dir: &Path) {
    let report = out.report();
    assert!(out.status.success(), "{what}: failed\n{report}");
    assert!(
        out.stdout.contains(PASS_LINE),
        "{what}: no `{PASS_LINE}`\n{report}"
    );
    let inits: Vec<&str> = out
        .stderr
        .lines()
        .filter_map(|line| {
            line.split_once("calling init: ")
                .map(|(_, path)| path.trim())
        })
        .filter(|path| path.contains("libamdhip64") || path.contains("libhsasim"))
        .collect();
    let lib_dir = lib_dir.canonicalize().unwrap();
    for name in ["libamdhip64", "libhsasim"] {
        assert!(
            inits.iter().any(|p| p.contains(name)),
            "{what}: the loader never initialised {name}\n{report}"
        );
    }
    for path in &inits {
        let real = Path::new(path).canonicalize().unwrap();
        assert!(
            real.starts_with(&lib_dir),
            "{what}: {path} was loaded from outside the installed lib dir {}\n{report}",
            lib_dir.display()
        );
    }
    println!("{what}: {}", out.stdout.trim());
}

/// `hipshim lib-dir` of the installed binary names the installed lib dir.
fn assert_reports_lib_dir(installed: &Installed) {
    let mut cmd = clean_command(&installed.hipshim, &installed.scratch.0);
    cmd.arg("lib-dir");
    let out = common::run(&mut cmd, Duration::from_secs(60));
    assert!(out.status.success(), "{}", out.report());
    assert_eq!(
        Path::new(out.stdout.trim()),
        installed.lib_dir.canonicalize().unwrap(),
        "{}",
        out.report()
    );
}

fn assert_lib_dir_complete(lib_dir: &Path) {
    for name in LIB_NAMES {
        assert!(
            lib_dir.join(name).is_file(),
            "{} lacks {name}",
            lib_dir.display()
        );
    }
    // ROCr's soname for AMD's own runtime over hsasim (`hipshim compare`).
    assert!(lib_dir.join("as-rocr/libhsa-runtime64.so.1").is_file());
}

fn run_through_hipshim(installed: &Installed, what: &str) {
    let program = scratch_program(installed);
    let mut cmd = clean_command(&installed.hipshim, &installed.scratch.0);
    cmd.arg("run")
        .arg("--")
        .arg(&program)
        .env("LD_DEBUG", "files");
    let out = common::run(&mut cmd, Duration::from_secs(300));
    assert_ran_from(what, &out, &installed.lib_dir);
}

fn run_with_ld_library_path(installed: &Installed, what: &str) {
    let program = scratch_program(installed);
    let mut cmd = clean_command(&program, &installed.scratch.0);
    cmd.env("LD_LIBRARY_PATH", &installed.lib_dir)
        .env("LD_DEBUG", "files");
    let out = common::run(&mut cmd, Duration::from_secs(300));
    assert_ran_from(what, &out, &installed.lib_dir);
}

#[test]
fn deb_installs_hipshim_its_lib_dir_headers_and_docs() {
    let Some(packages) = package_dir("deb_installs_hipshim_its_lib_dir_headers_and_docs") else {
        return;
    };
    let installed = install_deb(&packages);
    let root = installed.scratch.0.join("root");
    assert!(installed.hipshim.is_file());
    assert_lib_dir_complete(&installed.lib_dir);
    assert!(root
        .join(DEB_LIB_DIR)
        .join("include/hip/hip_runtime.h")
        .is_file());
    assert!(root.join("usr/share/doc/hipshim/README.md").is_file());
    assert_reports_lib_dir(&installed);
}

/// Every file the .deb installs is a path none of Debian's own libamdhip64 packages owns.
#[test]
fn deb_never_installs_over_amds_packages() {
    let Some(packages) = package_dir("deb_never_installs_over_amds_packages") else {
        return;
    };
    let amds = tool(
        "dpkg",
        &[
            "-L".as_ref(),
            "libamdhip64-5".as_ref(),
            "libamdhip64-dev".as_ref(),
        ],
    );
    let amds: std::collections::HashSet<&str> = amds.lines().map(str::trim).collect();
    assert!(
        amds.contains("/usr/lib/x86_64-linux-gnu/libamdhip64.so"),
        "dpkg -L does not list AMD's libamdhip64.so; is libamdhip64-dev installed?"
    );
    // `dpkg-deb -c`: one line per entry, the path last ("./usr/bin/hipshim", links with
    // " -> target"); directories end in '/' and are shared with every package.
    let listing = tool("dpkg-deb", &["-c".as_ref(), deb(&packages).as_os_str()]);
    let ours: Vec<String> = listing
        .lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .filter(|path| !path.ends_with('/'))
        .map(|path| path.trim_start_matches('.').to_string())
        .collect();
    assert!(ours.iter().any(|p| p == "/usr/bin/hipshim"), "{listing}");
    let clashes: Vec<&String> = ours.iter().filter(|p| amds.contains(p.as_str())).collect();
    assert!(
        clashes.is_empty(),
        "the .deb installs over AMD's files: {clashes:?}"
    );
    for path in &ours {
        assert!(
            path == "/usr/bin/hipshim"
                || path.starts_with("/usr/lib/x86_64-linux-gnu/hipshim/")
                || path.starts_with("/usr/share/doc/hipshim/"),
            "{path} is outside hipshim's own directories"
        );
    }
}

#[test]
fn tarball_is_one_relocatable_folder() {
    let Some(packages) = package_dir("tarball_is_one_relocatable_folder") else {
        return;
    };
    let listing = tool("tar", &["-tzf".as_ref(), tarball(&packages).as_os_str()]);
    let top = format!("hipshim-{VERSION}/");
    for entry in listing.lines() {
        assert!(entry.starts_with(&top), "{entry} is outside {top}");
    }
    let installed = install_tarball(&packages);
    assert!(installed.hipshim.is_file());
    assert_lib_dir_complete(&installed.lib_dir);
    let top = installed.lib_dir.parent().unwrap().parent().unwrap();
    assert!(top.join("include/hip/hip_runtime.h").is_file());
    assert!(top.join("share/doc/hipshim/LICENSE").is_file());
    // Every link stays inside the folder, so it works wherever it is unpacked.
    let links = listing
        .lines()
        .filter(|l| l.ends_with(".so") || l.contains(".so."));
    for entry in links {
        let path = installed.scratch.0.join("opt").join(entry);
        let real = path.canonicalize().unwrap();
        assert!(
            real.starts_with(top),
            "{entry} leads outside: {}",
            real.display()
        );
    }
    assert_reports_lib_dir(&installed);
}

#[test]
fn hipcc_binary_runs_through_the_debs_hipshim_run() {
    let Some(packages) = package_dir("hipcc_binary_runs_through_the_debs_hipshim_run") else {
        return;
    };
    run_through_hipshim(&install_deb(&packages), ".deb: hipshim run");
}

#[test]
fn hipcc_binary_runs_with_the_debs_lib_dir_on_ld_library_path() {
    let Some(packages) = package_dir("hipcc_binary_runs_with_the_debs_lib_dir_on_ld_library_path")
    else {
        return;
    };
    run_with_ld_library_path(&install_deb(&packages), ".deb: LD_LIBRARY_PATH");
}

#[test]
fn hipcc_binary_runs_through_the_tarballs_hipshim_run() {
    let Some(packages) = package_dir("hipcc_binary_runs_through_the_tarballs_hipshim_run") else {
        return;
    };
    run_through_hipshim(&install_tarball(&packages), "tarball: hipshim run");
}

#[test]
fn hipcc_binary_runs_with_the_tarballs_lib_dir_on_ld_library_path() {
    let Some(packages) =
        package_dir("hipcc_binary_runs_with_the_tarballs_lib_dir_on_ld_library_path")
    else {
        return;
    };
    run_with_ld_library_path(&install_tarball(&packages), "tarball: LD_LIBRARY_PATH");
}

/// `hipshim info` runs the runtime inside the installed executable: it finds hsasim in the
/// installation's lib dir, not beside itself in `bin/`.
#[test]
fn installed_hipshim_info_uses_the_installed_hsasim() {
    let Some(packages) = package_dir("installed_hipshim_info_uses_the_installed_hsasim") else {
        return;
    };
    for installed in [install_deb(&packages), install_tarball(&packages)] {
        let mut cmd = clean_command(&installed.hipshim, &installed.scratch.0);
        cmd.arg("info");
        let out = common::run(&mut cmd, Duration::from_secs(120));
        assert!(out.status.success(), "{}", out.report());
        let sim = installed.lib_dir.join("libhsasim.so");
        assert!(
            out.stdout.contains(&sim.display().to_string()),
            "hipshim info does not name {}\n{}",
            sim.display(),
            out.report()
        );
    }
}

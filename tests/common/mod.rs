//! Helpers shared by the integration tests that build and run HIP programs
//! (`tests/c_tests.rs`, `tests/existing_binary.rs`).
//!
//! Layout knowledge lives in the scripts, not here: `scripts/stage-libs.sh`
//! makes the lib dir (libamdhip64.so{,.5,.6,.7} + libhsasim.so) and
//! `scripts/hip-devlibs.sh` the gfx942-capable device-library dir. These
//! helpers call them, cache compiled programs, and run them with a timeout.

// Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

pub mod ctest;

use std::ffi::OsStr;
use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The repository root (this crate's manifest dir).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The cargo profile dir that holds this test's build products
/// (`<target>/debug`): the test executable is `<profile>/deps/<name>-<hash>`.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("path of the test executable");
    let deps = exe.parent().expect("test executable has a parent dir");
    assert!(
        deps.file_name() == Some(OsStr::new("deps")),
        "expected the test executable under <target>/<profile>/deps, got {}",
        exe.display()
    );
    deps.parent().expect("deps has a parent").to_path_buf()
}

/// The cargo target dir (parent of the profile dir).
pub fn target_dir() -> PathBuf {
    profile_dir()
        .parent()
        .expect("profile dir has a parent")
        .to_path_buf()
}

/// Runs one of `scripts/*.sh` and returns the path it prints last.
fn run_script(script: &str, args: &[&OsStr]) -> PathBuf {
    let path = repo_root().join("scripts").join(script);
    let mut cmd = Command::new("bash");
    cmd.arg(&path)
        .args(args)
        .env("CARGO_TARGET_DIR", target_dir());
    let out = run(&mut cmd, Duration::from_secs(60));
    assert!(out.status.success(), "{}", out.report(&cmd));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or("").trim();
    assert!(
        !last.is_empty(),
        "{script} printed no path\n{}",
        out.report(&cmd)
    );
    PathBuf::from(last)
}

static LIB_DIR: OnceLock<PathBuf> = OnceLock::new();

/// The staged lib dir (`<profile>/hipshim-lib`), created once per test binary.
///
/// Panics with the script's instructions when the cdylibs (`libamdhip64.so`,
/// `libhsasim.so`) have not been built: run `cargo test --workspace`.
pub fn lib_dir() -> &'static Path {
    LIB_DIR.get_or_init(|| {
        let profile = profile_dir();
        let name = profile.file_name().expect("profile dir name").to_owned();
        run_script("stage-libs.sh", &[&name])
    })
}

/// Sources each staged library is built from (relative to the repo root).
const LIB_SOURCES: &[(&str, &[&str])] = &[
    (
        "libamdhip64.so",
        &[
            "src",
            "hsa-abi/src",
            "build.rs",
            "Cargo.toml",
            "hip_headers",
        ],
    ),
    (
        "libhsasim.so",
        &["sim/src", "sim/isa/src", "hsa-abi/src", "sim/Cargo.toml"],
    ),
];

/// A note for failure reports when a staged library is older than one of its
/// sources. `cargo test --test c_tests` rebuilds only what that test links
/// (the shim), not libhsasim.so, which the shim loads at run time; a stale
/// simulator then fails in ways that have nothing to do with the change
/// under test.
pub fn stale_build_note() -> Option<&'static str> {
    // Only once the lib dir is staged (never stage it from a failure report).
    let lib_dir = LIB_DIR.get()?;
    static NOTE: OnceLock<Option<String>> = OnceLock::new();
    NOTE.get_or_init(|| {
        let repo = repo_root();
        let mut notes = Vec::new();
        for (lib, sources) in LIB_SOURCES {
            let Some(built) = mtime(&lib_dir.join(lib)) else {
                continue;
            };
            let newer = sources
                .iter()
                .filter_map(|s| newest_file(&repo.join(s)))
                .filter(|(t, _)| *t > built)
                .max();
            if let Some((_, path)) = newer {
                notes.push(format!(
                    "NOTE: {lib} is older than {}; cargo did not rebuild it for this run. \
                     Run `cargo test --workspace` (all targets) or `cargo build --workspace`.",
                    path.display()
                ));
            }
        }
        (!notes.is_empty()).then(|| notes.join("\n"))
    })
    .as_deref()
}

fn mtime(path: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The most recently modified file under `path` (or `path` itself).
fn newest_file(path: &Path) -> Option<(std::time::SystemTime, PathBuf)> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_dir() {
        return Some((meta.modified().ok()?, path.to_path_buf()));
    }
    std::fs::read_dir(path)
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| newest_file(&e.path()))
        .max()
}

/// The ROCm device-library dir with the gfx942 workaround
/// (`<target>/hip-devlibs`), created once per test binary.
pub fn devlibs_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = target_dir().join("hip-devlibs");
        run_script("hip-devlibs.sh", &[dir.as_os_str()])
    })
}

/// Finds `name` on PATH, or panics telling how to install it.
pub fn require_tool(name: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!("`{name}` is not on PATH: install the toolchain with `sudo scripts/setup.sh`")
        })
}

/// What a finished (or killed) child process produced.
pub struct Output {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub timed_out: bool,
}

impl Output {
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }

    /// A failure report: the command, how it ended, and everything it printed.
    pub fn report(&self, cmd: &Command) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "command: {}", describe(cmd));
        if self.timed_out {
            let _ = writeln!(s, "result: killed after the timeout ({})", self.status);
        } else {
            let _ = writeln!(s, "result: {}", self.status);
        }
        let _ = writeln!(s, "--- stdout ---\n{}", self.stdout().trim_end());
        let _ = write!(s, "--- stderr ---\n{}", self.stderr().trim_end());
        if let Some(note) = stale_build_note() {
            let _ = write!(s, "\n{note}");
        }
        s
    }
}

/// The command line, with the environment changes it makes, as a shell
/// command (`env -u REMOVED SET=value program args...`).
pub fn describe(cmd: &Command) -> String {
    let mut s = String::new();
    let envs: Vec<_> = cmd.get_envs().collect();
    if !envs.is_empty() {
        s.push_str("env ");
    }
    // env takes its -u options before any NAME=value.
    for (k, _) in envs.iter().filter(|(_, v)| v.is_none()) {
        let _ = write!(s, "-u {} ", k.to_string_lossy());
    }
    for (k, v) in &envs {
        if let Some(v) = v {
            let _ = write!(s, "{}={} ", k.to_string_lossy(), v.to_string_lossy());
        }
    }
    s.push_str(&cmd.get_program().to_string_lossy());
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// How long a HIP program may run before it is killed (the interpreter is
/// slow, but a hang must still end the test). `HIPSHIM_TEST_TIMEOUT_SECS`
/// overrides.
pub fn program_timeout() -> Duration {
    let secs = std::env::var("HIPSHIM_TEST_TIMEOUT_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(600);
    Duration::from_secs(secs)
}

/// Runs `cmd` to completion, capturing its output; kills it after `timeout`.
pub fn run(cmd: &mut Command, timeout: Duration) -> Output {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start `{}`: {e}", describe(cmd)));
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            buf
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("piped stdout")));
    let err = drain(Box::new(child.stderr.take().expect("piped stderr")));
    let deadline = Instant::now() + timeout;
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for child") {
            break status;
        }
        if Instant::now() >= deadline {
            timed_out = true;
            let _ = child.kill();
            break child.wait().expect("wait for killed child");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        timed_out,
    }
}

/// Removes variables that would make a program load some other HIP or HSA
/// runtime than the one a test means to exercise (the caller sets its own).
pub fn clear_loader_env(cmd: &mut Command) -> &mut Command {
    for var in [
        "LD_LIBRARY_PATH",
        "LD_PRELOAD",
        "LD_BIND_NOW",
        "HIPSHIM_HSA_LIB",
        "HSASIM_GFX",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

/// Selects the software GPU modelled as `gfx`. `HIPSHIM_DEVICE` from the
/// caller's environment is respected (e.g. `gpu` on a machine with one).
pub fn use_simulator<'a>(cmd: &'a mut Command, gfx: &str) -> &'a mut Command {
    if std::env::var_os("HIPSHIM_DEVICE").is_none() {
        cmd.env("HIPSHIM_DEVICE", "sim");
    }
    cmd.env("HSASIM_GFX", gfx)
}

/// 64-bit FNV-1a, for cache keys (stable across Rust versions, unlike
/// `DefaultHasher`).
#[derive(Clone, Copy)]
pub struct Fnv(u64);

impl Fnv {
    pub fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    pub fn bytes(&mut self, data: &[u8]) -> &mut Self {
        for &b in data {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
        // Separate fields so ("ab", "c") and ("a", "bc") differ.
        self.0 ^= data.len() as u64;
        self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        self
    }

    pub fn file(&mut self, path: &Path) -> &mut Self {
        let data =
            std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        self.bytes(path.to_string_lossy().as_bytes()).bytes(&data)
    }

    /// Every file under `dir`, in a stable order.
    pub fn tree(&mut self, dir: &Path) -> &mut Self {
        let mut files = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
                let p = entry.expect("dir entry").path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    files.push(p);
                }
            }
        }
        files.sort();
        for f in files {
            self.file(&f);
        }
        self
    }

    /// The tool's identity: a compiler upgrade invalidates the cache.
    pub fn tool(&mut self, path: &Path) -> &mut Self {
        let meta = std::fs::metadata(path).ok();
        let stamp = meta
            .map(|m| {
                let mtime = m
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_secs());
                format!("{}:{}", m.len(), mtime)
            })
            .unwrap_or_default();
        self.bytes(path.to_string_lossy().as_bytes())
            .bytes(stamp.as_bytes())
    }

    pub fn hex(&self) -> String {
        format!("{:016x}", self.0)
    }
}

/// Builds `output` by running `cmd` (which must write to the path it is given
/// by `with_output`), unless a build with the same key already exists.
///
/// `key` must cover every input (sources, headers, flags, tool). Builds are
/// serialised within a test binary: two tests wanting the same program build it
/// once, and the shared cores are not oversubscribed by compilers.
pub fn cached_build(
    cache_dir: &Path,
    stem: &str,
    key: &Fnv,
    mut command_for: impl FnMut(&Path) -> Command,
) -> PathBuf {
    static BUILD_LOCK: Mutex<()> = Mutex::new(());
    let _guard = BUILD_LOCK.lock().unwrap_or_else(|e| e.into_inner());

    let output = cache_dir.join(format!("{stem}-{}", key.hex()));
    if output.is_file() {
        return output;
    }
    std::fs::create_dir_all(cache_dir)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", cache_dir.display()));
    let partial = cache_dir.join(format!("{stem}-{}.partial", key.hex()));
    let mut cmd = command_for(&partial);
    let out = run(&mut cmd, Duration::from_secs(600));
    assert!(
        out.status.success() && partial.is_file(),
        "building {stem} failed\n{}",
        out.report(&cmd)
    );
    std::fs::rename(&partial, &output)
        .unwrap_or_else(|e| panic!("cannot move {} into place: {e}", partial.display()));
    output
}

/// Lines of `tool args... file` output, or a panic naming the tool.
pub fn tool_output(tool: &str, args: &[&str], file: &Path) -> String {
    let mut cmd = Command::new(require_tool(tool));
    cmd.args(args).arg(file);
    let out = run(&mut cmd, Duration::from_secs(60));
    assert!(out.status.success(), "{}", out.report(&cmd));
    out.stdout()
}

/// Builds `source` with Debian's hipcc (ROCm 5.2, AMD's headers) for gfx90a, cached under
/// `<target>/<cache>/`: the existing-binary programs the tests run on hipshim and, as the
/// reference, under AMD's own runtime ([`amds_runtime`]).
pub fn hipcc_build(source: &Path, stem: &str, cache: &str) -> PathBuf {
    let hipcc = require_tool("hipcc");
    let flags = ["--offload-arch=gfx90a", "-O3"];
    let mut key = Fnv::new();
    key.tool(&hipcc).file(source);
    for f in flags {
        key.bytes(f.as_bytes());
    }
    cached_build(&target_dir().join(cache), stem, &key, |out| {
        let mut cmd = Command::new(&hipcc);
        // hipcc (a Perl driver) reads these; pin them so a CUDA-flavoured environment cannot
        // redirect it. /usr is where Debian puts ROCm.
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

/// AMD's HIP runtime as Debian installs it (ROCm 5.2).
pub const AMDS_RUNTIME: &str = "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5";

/// `program` set up to run under AMD's own `libamdhip64.so.5` over hsasim's gfx90a model:
/// hsasim answers to ROCr's soname from a directory of its own (docs/guide/hsasim.md's recipe).
pub fn amds_runtime(program: &Path) -> Command {
    let lib_dir = lib_dir();
    let rocr = lib_dir.join("as-rocr");
    std::fs::create_dir_all(&rocr).expect("the lib dir is writable");
    let link = rocr.join("libhsa-runtime64.so.1");
    if !link.exists() {
        // Another test may make it at the same moment: either link will do.
        let _ = std::os::unix::fs::symlink(lib_dir.join("libhsasim.so"), &link);
    }
    let mut cmd = Command::new(program);
    clear_loader_env(&mut cmd);
    cmd.env("LD_LIBRARY_PATH", &rocr)
        .env("HSASIM_GFX", "gfx90a");
    cmd
}

//! Helpers for the CLI tests: run the built `hipshim` with a timeout on the software GPU,
//! and build HIP programs with the repository's own scripts (`scripts/build-hip.sh`, which
//! holds the compile flags; Debian's `hipcc` for an "existing binary").

#![allow(dead_code)] // each test file uses a subset

use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

pub const HIPSHIM: &str = env!("CARGO_BIN_EXE_hipshim");

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("cli/ is inside the repository")
        .to_path_buf()
}

/// `<target>/<profile>`: where cargo put `hipshim` (and the cdylibs, or their deps/ copies).
pub fn profile_dir() -> PathBuf {
    Path::new(HIPSHIM).parent().unwrap().to_path_buf()
}

/// A `hipshim` command on the software GPU, with no loader or hipshim settings inherited
/// from the caller's environment except `HIPSHIM_DEVICE` (e.g. `gpu` on a machine with one).
pub fn hipshim<I, S>(args: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut cmd = Command::new(HIPSHIM);
    cmd.args(args);
    for var in [
        "LD_LIBRARY_PATH",
        "LD_PRELOAD",
        "HIPSHIM_HSA_LIB",
        "HIPSHIM_QUEUE_POLICY",
        "HIPSHIM_QUEUE_SIZE",
        "HIPSHIM_TRACE",
        "HIPSHIM_STATS",
        "HIPSHIM_LOG",
        "GPU_MAX_HW_QUEUES",
        "HSASIM_GFX",
    ] {
        cmd.env_remove(var);
    }
    if std::env::var_os("HIPSHIM_DEVICE").is_none() {
        cmd.env("HIPSHIM_DEVICE", "sim");
    }
    cmd
}

pub struct Output {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub command: String,
}

impl Output {
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// Everything a failure message needs.
    pub fn report(&self) -> String {
        format!(
            "command: {}\nresult: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.command,
            self.status,
            self.stdout.trim_end(),
            self.stderr.trim_end()
        )
    }
}

/// Runs `cmd`, capturing its output; kills it (and fails the test) after `timeout`.
pub fn run(cmd: &mut Command, timeout: Duration) -> Output {
    let command = format!("{cmd:?}");
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {command}: {e}"));
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for child") {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let status = child.wait().expect("wait for killed child");
            panic!(
                "{command} did not finish within {timeout:?} ({status})\n--- stderr ---\n{}",
                err.join().unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        command,
    }
}

/// Runs `hipshim ARGS` with the default timeout.
pub fn hipshim_output<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    run(&mut hipshim(args), Duration::from_secs(120))
}

/// The lib dir `hipshim run` uses (staged by `scripts/stage-libs.sh` on first use).
pub fn lib_dir() -> PathBuf {
    let out = hipshim_output(["lib-dir"]);
    assert!(out.status.success(), "{}", out.report());
    PathBuf::from(out.stdout.trim())
}

fn mtime(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

fn newest(path: &Path) -> Option<SystemTime> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_dir() {
        return meta.modified().ok();
    }
    std::fs::read_dir(path)
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| newest(&e.path()))
        .max()
}

/// Serialises builds within a test binary (the machine has few cores).
static BUILD: Mutex<()> = Mutex::new(());

/// Builds `source` (relative to the repository) into `<profile>/cli-tests/<stem>` by
/// running `make_command(output)`, unless the output is newer than every input.
fn build(
    source: &str,
    stem: &str,
    inputs: &[PathBuf],
    make_command: impl Fn(&Path) -> Command,
) -> PathBuf {
    let _guard = BUILD.lock().unwrap_or_else(|e| e.into_inner());
    let dir = profile_dir().join("cli-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let output = dir.join(stem);
    let repo = repo_root();
    let newest_input = std::iter::once(repo.join(source))
        .chain(inputs.iter().cloned())
        .filter_map(|p| newest(&p))
        .max();
    if mtime(&output).is_some() && mtime(&output) >= newest_input {
        return output;
    }
    // Another test binary may build the same program at the same time: build under a
    // private name, then rename (atomic).
    let partial = dir.join(format!("{stem}.partial-{}", std::process::id()));
    let out = run(&mut make_command(&partial), Duration::from_secs(600));
    assert!(
        out.status.success(),
        "building {source} failed\n{}",
        out.report()
    );
    std::fs::rename(&partial, &output).unwrap();
    output
}

/// A c_test program built by `scripts/build-hip.sh` (linked to hipshim, with an rpath to
/// the staged lib dir), for gfx942.
pub fn build_hip(source: &str, stem: &str) -> PathBuf {
    build_hip_with(source, stem, "")
}

/// As [`build_hip`], with more compiler and linker flags (`HIP_BUILD_FLAGS`).
pub fn build_hip_with(source: &str, stem: &str, flags: &str) -> PathBuf {
    let repo = repo_root();
    let profile = profile_dir();
    let inputs = [repo.join("hip_headers"), repo.join("scripts/build-hip.sh")];
    build(source, stem, &inputs, |out| {
        let mut cmd = Command::new("bash");
        cmd.arg(repo.join("scripts/build-hip.sh"))
            .arg(repo.join(source))
            .arg(out)
            .arg("gfx942")
            .env("CARGO_TARGET_DIR", profile.parent().unwrap())
            .env("HIPSHIM_PROFILE", profile.file_name().unwrap())
            .env("HIP_BUILD_FLAGS", flags);
        cmd
    })
}

/// An existing binary: `source` built by Debian's hipcc (ROCm 5.2) for gfx90a and linked
/// to AMD's real libamdhip64.so.5, with no rpath to hipshim: it runs on hipshim only if the
/// loading mode works.
pub fn build_hipcc(source: &str, stem: &str) -> PathBuf {
    let repo = repo_root();
    build(source, stem, &[], |out| {
        let mut cmd = Command::new("hipcc");
        cmd.env("HIP_PLATFORM", "amd")
            .env("HIP_PATH", "/usr")
            .env("ROCM_PATH", "/usr")
            .args(["--offload-arch=gfx90a", "-O3"])
            .arg(repo.join(source))
            .arg("-o")
            .arg(out);
        cmd
    })
}

/// `hipshim device status --name NAME`'s output (the command must succeed).
pub fn device_status(name: &str) -> String {
    let out = hipshim_output(["device", "status", "--name", name]);
    assert_eq!(out.code(), Some(0), "{}", out.report());
    out.stdout
}

/// Polls `device status` until `done` holds (a test's way to wait for the service; no timing
/// asserted): the status that satisfied it.
pub fn wait_device_status(name: &str, what: &str, done: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let s = device_status(name);
        if done(&s) {
            return s;
        }
        assert!(Instant::now() < deadline, "never {what}:\n{s}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The number after `NAME=` in a `device status` output (the field must be there).
pub fn status_counter(status: &str, name: &str) -> u64 {
    status
        .split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{name}=")))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in\n{status}"))
}

/// Runs `program` under `hipshim run --trace T --stats=S EXTRA... --`, where T is
/// `<stem>.json` and S `<stem>.<stats_ext>` in the tests' directory (removed first, so what is
/// there afterwards was written by this run); returns T, S and the run's output.
pub fn traced_run(
    program: &Path,
    stem: &str,
    stats_ext: &str,
    extra: &[&str],
) -> (PathBuf, PathBuf, Output) {
    let dir = profile_dir().join("cli-tests");
    let trace = dir.join(format!("{stem}.json"));
    let stats = dir.join(format!("{stem}.{stats_ext}"));
    let _ = std::fs::remove_file(&trace);
    let _ = std::fs::remove_file(&stats);
    let mut stats_arg = std::ffi::OsString::from("--stats=");
    stats_arg.push(&stats);
    let mut args = vec![
        "run".into(),
        "--trace".into(),
        trace.clone().into_os_string(),
        stats_arg,
    ];
    args.extend(extra.iter().map(std::ffi::OsString::from));
    args.push("--".into());
    args.push(program.as_os_str().to_owned());
    let out = hipshim_output(args);
    (trace, stats, out)
}

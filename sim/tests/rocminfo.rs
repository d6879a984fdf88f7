//! Debian's `rocminfo` (ROCm 5.2) runs on hsasim: it loads `libhsasim.so` as
//! `libhsa-runtime64.so.1` through `LD_LIBRARY_PATH`, exits 0 and lists the CPU agent and
//! every GPU agent with its ISA and pools.
//!
//! Before it calls `hsa_init`, rocminfo checks the machine itself (not through HSA): it runs
//! `lsmod | grep amdgpu` and opens `/dev/kfd` read-write, and exits 1 if either fails. A
//! simulator cannot answer those, so the test gives rocminfo a private mount namespace
//! (`unshare -m`, or `unshare -r -m` when not root) in which `/dev` has an empty regular
//! file `kfd` and `PATH` starts with an `lsmod` that prints an `amdgpu` line. Nothing on
//! the machine changes; every HSA call rocminfo makes is answered by hsasim.
mod common;

use std::path::Path;
use std::process::Command;

/// Runs `rocminfo` with the given extra environment; `None` if it is not installed.
fn run_rocminfo(env: &[(&str, &str)]) -> Option<(i32, String, String)> {
    let rocminfo = Path::new("/usr/bin/rocminfo");
    if !rocminfo.exists() {
        eprintln!(
            "SKIPPED: /usr/bin/rocminfo is not installed (scripts/setup.sh installs Debian's rocminfo)"
        );
        return None;
    }
    let libdir = common::rocr_link_dir("rocminfo");
    let script = r#"
set -e
T=$(mktemp -d)
mkdir -p "$T/dev" "$T/bin"
for n in null zero full random urandom tty; do
  if [ -e "/dev/$n" ]; then touch "$T/dev/$n"; mount --bind "/dev/$n" "$T/dev/$n"; fi
done
touch "$T/dev/kfd"
mount --bind "$T/dev" /dev
printf '#!/bin/sh\necho "amdgpu 0 0"\n' > "$T/bin/lsmod"
chmod +x "$T/bin/lsmod"
PATH="$T/bin:$PATH" exec "$0"
"#;
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let mut tries = Vec::new();
    if root {
        tries.push(vec!["-m"]);
    }
    tries.push(vec!["-r", "-m"]);
    let mut failures = Vec::new();
    for flags in tries {
        let mut cmd = Command::new("unshare");
        cmd.args(&flags)
            .args(["sh", "-c", script])
            .arg(rocminfo)
            .env("LD_LIBRARY_PATH", &libdir)
            .env_remove("HSASIM_GPUS")
            .env_remove("HSASIM_GFX")
            .env_remove("HSASIM_CUS");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("unshare (util-linux) runs");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        if stdout.contains("HSA System Attributes") || stdout.contains("ROCk module") {
            return Some((out.status.code().unwrap_or(-1), stdout, stderr));
        }
        failures.push(format!("unshare {flags:?}: {stderr}"));
    }
    panic!(
        "could not give rocminfo a private /dev/kfd (needs `unshare -m` or user namespaces): {failures:?}"
    );
}

fn assert_line(out: &str, key: &str, value: &str) {
    assert!(
        out.lines()
            .any(|l| l.trim_start().starts_with(key) && l.contains(value)),
        "no `{key} ... {value}` line in rocminfo's output:\n{out}"
    );
}

#[test]
fn rocminfo_lists_cpu_and_two_gfx942_agents_with_isa_and_pools() {
    let Some((code, out, err)) = run_rocminfo(&[("HSASIM_GPUS", "2")]) else {
        return;
    };
    assert_eq!(code, 0, "rocminfo failed:\n{out}\n{err}");
    assert!(
        !err.contains("no version information"),
        "ld.so saw unversioned hsa_* symbols: {err}"
    );
    assert!(out.contains("HSA System Attributes"));
    assert!(out.contains("*** Done ***"));
    for agent in ["Agent 1", "Agent 2", "Agent 3"] {
        assert!(out.contains(agent), "{agent} missing:\n{out}");
    }
    assert!(
        !out.contains("Agent 4"),
        "only one CPU and two GPUs:\n{out}"
    );
    assert_line(&out, "Name:", "hsasim CPU");
    assert_line(&out, "Device Type:", "CPU");
    assert_eq!(
        out.lines()
            .filter(|l| l.trim_start().starts_with("Name:") && l.trim_end().ends_with("gfx942"))
            .count(),
        2
    );
    assert_eq!(
        out.matches("amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-")
            .count(),
        2
    );
    assert_line(&out, "Marketing Name:", "hsasim gfx942");
    assert_line(&out, "Vendor Name:", "AMD");
    assert_line(&out, "Device Type:", "GPU");
    assert_line(&out, "Wavefront Size:", "64(0x40)");
    assert_line(&out, "Compute Unit:", "304");
    assert_line(&out, "Max Queue Number:", "128(0x80)");
    // 16 GiB coarse-grained device pool per GPU, fine-grained + kernarg system pools.
    assert_line(&out, "Size:", "16777216(0x1000000) KB");
    assert_line(&out, "Segment:", "GLOBAL; FLAGS: COARSE GRAINED");
    assert_line(&out, "Segment:", "GLOBAL; FLAGS: KERNARG, FINE GRAINED");
    assert_line(&out, "Segment:", "GLOBAL; FLAGS: FINE GRAINED");
}

#[test]
fn rocminfo_reports_the_configured_gfx90a_part() {
    let Some((code, out, err)) = run_rocminfo(&[
        ("HSASIM_GFX", "gfx90a"),
        ("HSASIM_CUS", "110"),
        ("HSASIM_MEM_GB", "64"),
    ]) else {
        return;
    };
    assert_eq!(code, 0, "rocminfo failed:\n{out}\n{err}");
    assert_line(&out, "Name:", "gfx90a");
    assert_line(&out, "Marketing Name:", "hsasim gfx90a");
    assert!(out.contains("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-"));
    assert_line(&out, "Compute Unit:", "110");
    assert_line(&out, "Size:", "67108864(0x4000000) KB");
    assert!(!out.contains("Agent 3"));
}

//! A real client: AMD's Python bindings (hip-python, pinned by `scripts/hip-python.sh`, which
//! `scripts/setup.sh` runs) load hipshim as `libamdhip64.so` and `libhiprtc.so` and drive it
//! through `tests/hip_python/client.py`: allocation, copies, a fill, a stream, events, a module
//! loaded from a code object and launched with packed arguments, and a kernel compiled with
//! hiprtc, on hsasim.

mod common;

use std::path::PathBuf;
use std::process::Command;

/// The virtual environment with hip-python (made by the script if it is missing).
fn venv() -> PathBuf {
    let out = Command::new(common::repo_root().join("scripts/hip-python.sh"))
        .output()
        .expect("run scripts/hip-python.sh");
    assert!(
        out.status.success(),
        "scripts/hip-python.sh failed (needs python3-venv and PyPI; scripts/setup.sh installs them):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

fn run_client(gfx: &str, deterministic: bool) {
    let dir = common::target_dir().join(format!("hip-python-{gfx}"));
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("scale.hip");
    std::fs::write(
        &source,
        "#include <hip/hip_runtime.h>\n\
         extern \"C\" __global__ void scale(float* p, float factor, int n) {\n\
             int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
             if (i < n) p[i] *= factor;\n\
         }\n",
    )
    .unwrap();
    // The build c_tests use for device-only code objects (cached by content).
    let code = common::ctest::build_device_code(&source, "hip_python_scale", &[gfx], false, false);
    let python = venv().join("bin/python");
    let mut cmd = Command::new(&python);
    common::clear_loader_env(&mut cmd)
        .arg(common::repo_root().join("tests/hip_python/client.py"))
        .arg(&code)
        .env("LD_LIBRARY_PATH", common::lib_dir())
        .env("HSASIM_THREADS", if deterministic { "0" } else { "1" });
    common::use_simulator(&mut cmd, gfx);
    let out = common::run(&mut cmd, common::program_timeout());
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && text.contains("hip-python: PASSED"),
        "{text}"
    );
}

#[test]
fn hip_python_drives_hipshim_gfx942() {
    run_client("gfx942", false);
}

#[test]
fn hip_python_drives_hipshim_gfx90a_deterministic() {
    run_client("gfx90a", true);
}

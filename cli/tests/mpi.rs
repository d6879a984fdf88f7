//! HIP programs under MPI (Debian's OpenMPI, installed by `scripts/setup.sh`): four ranks on
//! one machine run `c_tests/mpi/halo.hip`, a stencil whose slices swap their boundary cells
//! through host buffers every step, first each rank on its own simulated GPU, then all four
//! attached to one device service, where they also write one buffer shared by IPC handle.

mod common;

use common::hipshim_output;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const RANKS: usize = 4;

/// The flags `mpicxx` would add to compile and link an MPI program.
fn mpi_flags() -> String {
    let show = |what: &str| {
        let out = Command::new("mpicxx")
            .arg(format!("--showme:{what}"))
            .output()
            .unwrap_or_else(|e| {
                panic!("mpicxx not found ({e}): scripts/setup.sh installs OpenMPI")
            });
        assert!(out.status.success(), "mpicxx --showme:{what} failed");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    format!("{} {}", show("compile"), show("link"))
}

fn mpirun(exe: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("mpirun");
    // --oversubscribe: more ranks than cores (CI has two). The environment reaches the ranks
    // (OpenMPI starts local ranks with mpirun's own).
    cmd.args(["--oversubscribe", "-np", &RANKS.to_string()])
        .arg(exe)
        .args(args)
        .env("LD_LIBRARY_PATH", common::lib_dir())
        .env("HIPSHIM_DEVICE", "sim")
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .env_remove("HIPSHIM_TRACE")
        .env_remove("HIPSHIM_STATS")
        .env_remove("HSASIM_DEVICE_SERVICE");
    cmd
}

fn assert_ranks_ran(stdout: &str) {
    for rank in 0..RANKS {
        let line = format!("rank {rank} of {RANKS}: gfx942");
        assert!(stdout.contains(&line), "no '{line}' in:\n{stdout}");
    }
    assert!(stdout.contains(&format!("halo: {RANKS} ranks")), "{stdout}");
    assert!(stdout.contains("mpi_halo: PASSED"), "{stdout}");
}

#[test]
fn ranks_each_on_their_own_simulated_gpu_exchange_halos() {
    let exe = common::build_hip_with("c_tests/mpi/halo.hip", "mpi_halo", &mpi_flags());
    let out = common::run(&mut mpirun(&exe, &[]), Duration::from_secs(300));
    assert_eq!(out.code(), Some(0), "{}", out.report());
    assert_ranks_ran(&out.stdout);
}

#[test]
fn ranks_attached_to_one_device_service_share_its_gpu() {
    let exe = common::build_hip_with("c_tests/mpi/halo.hip", "mpi_halo", &mpi_flags());
    let name = format!("test-mpi-{}", std::process::id());
    let out = hipshim_output(["device", "start", "--name", &name, "--memory", "256M"]);
    assert_eq!(out.code(), Some(0), "{}", out.report());
    let mut cmd = mpirun(&exe, &["shared"]);
    cmd.env("HSASIM_DEVICE_SERVICE", &name);
    let run = common::run(&mut cmd, Duration::from_secs(300));
    let status = common::device_status(&name);
    let stop = hipshim_output(["device", "stop", "--name", &name]);
    assert_eq!(run.code(), Some(0), "{}", run.report());
    assert_ranks_ran(&run.stdout);
    assert!(
        run.stdout
            .contains(&format!("shared: {RANKS} ranks wrote one buffer")),
        "{}",
        run.stdout
    );
    // Every rank ran its queues on the service, and every rank but the exporter attached the
    // buffer through it.
    assert!(
        common::status_counter(&status, "queues_registered") >= RANKS as u64,
        "{status}"
    );
    assert_eq!(
        common::status_counter(&status, "ipc_attaches"),
        RANKS as u64 - 1,
        "{status}"
    );
    assert_eq!(stop.code(), Some(0), "{}", stop.report());
}

//! A device service's IPC signals and device memory, at the HSA level: two processes attached
//! to one service (`HSASIM_DEVICE_SERVICE`) share a signal (`hsa_amd_signal_create` with
//! `HSA_AMD_SIGNAL_IPC`, `hsa_amd_ipc_signal_create` / `_attach`), each blocked in
//! `hsa_signal_wait_scacquire` until the other stores; the GPU's pool is the service's memory.
//!
//! This test process plays the service: it creates the segment itself
//! (`hsasim_sched::Device::create`, as `hipshim device serve` does) and runs this binary twice
//! more as the two children (the `child` test), the creator threaded and the attacher
//! deterministic (`HSASIM_THREADS=0`). Afterwards every signal slot is free again.
mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const ROLE: &str = "HSASIM_IPC_SIGNAL_TEST_ROLE";
const DIR: &str = "HSASIM_IPC_SIGNAL_TEST_DIR";
const MEMORY: u64 = 1 << 20;

fn spawn_role(role: &str, service: &str, dir: &Path, threads: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child", "--nocapture", "--test-threads=1"])
        .env(ROLE, role)
        .env(DIR, dir)
        .env("HSASIM_DEVICE_SERVICE", service)
        .env("HSASIM_THREADS", threads)
        .env_remove("HSASIM_SCHED")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the child")
}

fn finish(c: Child, role: &str) {
    let out = c.wait_with_output().unwrap();
    // Visible with --nocapture.
    print!("{}", String::from_utf8_lossy(&out.stdout));
    assert!(
        out.status.success(),
        "{role}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn processes_on_one_service_wait_on_each_others_signal_stores() {
    let name = format!("sigtest-{}", std::process::id());
    let device = hsasim_sched::Device::create(&name, Default::default(), MEMORY).unwrap();
    let dir: PathBuf =
        std::env::temp_dir().join(format!("hsasim-ipc-signal-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let creator = spawn_role("create", &name, &dir, "1");
    let attacher = spawn_role("attach", &name, &dir, "0");
    finish(creator, "create");
    finish(attacher, "attach");
    // Both runtimes shut down: nothing of theirs is left.
    let t = device.memory();
    assert!(
        t.signals.iter().all(|s| s.serial == 0),
        "{:?}",
        &t.signals[..2]
    );
    assert_eq!(t.used, 0);
    assert_eq!(t.counters.allocations, 1);
    drop(t);
    let _ = std::fs::remove_dir_all(&dir);
}

fn wait_for(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !path.exists() {
        assert!(Instant::now() < deadline, "no {}", path.display());
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn publish(path: &Path, bytes: &[u8]) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(tmp, path).unwrap();
}

/// The child side; does nothing when run as an ordinary test.
#[test]
fn child() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    let dir = PathBuf::from(std::env::var(DIR).unwrap());
    let _h = Hsa::init();
    let handle_file = dir.join("handle");
    match role.as_str() {
        "create" => {
            // The GPU's pool is the service's memory.
            let pool = pools(gpu())[0];
            let mut size = 0usize;
            // SAFETY: a valid out-parameter for memory_pool_info::SIZE.
            let st = unsafe {
                hsa_amd_memory_pool_get_info(
                    pool,
                    memory_pool_info::SIZE,
                    (&mut size as *mut usize).cast(),
                )
            };
            assert_eq!((st, size as u64), (status::SUCCESS, MEMORY));
            let p = pool_alloc(pool, 8192).unwrap() as u64;
            assert!(
                (0x6000_0000_0000..0x6000_0000_0000 + MEMORY).contains(&p),
                "{p:#x}"
            );
            assert_eq!(hsa_amd_memory_pool_free(p as *mut _), status::SUCCESS);

            let mut s = hsa_signal_t::default();
            // SAFETY: valid out-parameters; no consumers.
            let st = unsafe { hsa_amd_signal_create(0, 0, std::ptr::null(), 2, &mut s) };
            assert_eq!(st, status::SUCCESS);
            let mut h = hsa_amd_ipc_memory_t::default();
            // SAFETY: a valid out-parameter.
            let st = unsafe { hsasim::api::ipc::hsa_amd_ipc_signal_create(s, &mut h) };
            assert_eq!(st, status::SUCCESS);
            let bytes: Vec<u8> = h.handle.iter().flat_map(|w| w.to_le_bytes()).collect();
            publish(&handle_file, &bytes);
            // Blocked until the other process stores 1; then it is this one's turn.
            assert_eq!(wait_eq(s, 1, 60 * SECOND), 1);
            hsa_signal_store_screlease(s, 2);
            assert_eq!(wait_eq(s, 3, 60 * SECOND), 3);
            assert_eq!(hsa_signal_destroy(s), status::SUCCESS);
        }
        "attach" => {
            wait_for(&handle_file);
            let bytes = std::fs::read(&handle_file).unwrap();
            let mut h = hsa_amd_ipc_memory_t::default();
            for (i, w) in bytes.chunks(4).enumerate() {
                h.handle[i] = u32::from_le_bytes(w.try_into().unwrap());
            }
            let mut s = hsa_signal_t::default();
            // SAFETY: valid in and out parameters.
            let st = unsafe { hsasim::api::ipc::hsa_amd_ipc_signal_attach(&h, &mut s) };
            assert_eq!(st, status::SUCCESS);
            assert_eq!(hsa_signal_load_scacquire(s), 0);
            hsa_signal_store_screlease(s, 1);
            assert_eq!(wait_eq(s, 2, 60 * SECOND), 2);
            hsa_signal_add_scacq_screl(s, 1);
            // A handle changed in one word attaches nothing.
            let mut bad = h;
            bad.handle[2] ^= 1;
            let mut t = hsa_signal_t::default();
            // SAFETY: valid in and out parameters.
            let st = unsafe { hsasim::api::ipc::hsa_amd_ipc_signal_attach(&bad, &mut t) };
            assert_ne!(st, status::SUCCESS);
            assert_eq!(hsa_signal_destroy(s), status::SUCCESS);
        }
        other => panic!("unknown role {other}"),
    }
}

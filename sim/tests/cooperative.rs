//! Cooperative queues (`HSA_QUEUE_TYPE_COOPERATIVE`): the agent says it has them, a kernel
//! calling AMD's `__ockl_grid_sync` (clang-19, linked with the ROCm device libraries) runs
//! with every workgroup resident, in threaded and in deterministic mode (a child process
//! with `HSASIM_THREADS=0`); on an ordinary queue its `ds_gws_barrier` is a queue error
//! naming the queue type it needs.
mod common;
use common::*;
use std::ffi::c_void;
use std::path::Path;

const WG: u32 = 128;
const ROUNDS: u32 = 3;

/// tests/kernels/grid_sync.hip of hsasim-isa, built for gfx942 with the device libraries.
fn grid_sync_code_object() -> Vec<u8> {
    let dir = std::env::temp_dir().join(format!("hsasim-coop-{}", std::process::id()));
    let libs = dir.join("devlibs");
    std::fs::create_dir_all(&libs).unwrap();
    let bitcode = Path::new("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode");
    for e in std::fs::read_dir(bitcode).unwrap().flatten() {
        let _ = std::os::unix::fs::symlink(e.path(), libs.join(e.file_name()));
    }
    // ROCm 5.2's device libraries predate gfx942; gfx940's ISA file serves.
    let _ = std::os::unix::fs::symlink(
        bitcode.join("oclc_isa_version_940.bc"),
        libs.join("oclc_isa_version_942.bc"),
    );
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("isa/tests/kernels/grid_sync.hip");
    let out = dir.join("grid_sync.co");
    let st = std::process::Command::new("clang++-19")
        .args([
            "-x",
            "hip",
            "-nogpuinc",
            "--cuda-device-only",
            "--no-gpu-bundle-output",
        ])
        .args(["-O3", "--offload-arch=gfx942"])
        .arg(format!("--rocm-device-lib-path={}", libs.display()))
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .status()
        .expect("clang++-19 is needed (apt-get install clang-19)");
    assert!(st.success(), "clang++-19 failed on {}", src.display());
    std::fs::read(&out).unwrap()
}

fn queue_of_type(queue_type: u32) -> *mut hsa_queue_t {
    let mut q = std::ptr::null_mut();
    // SAFETY: out-pointer to a local; the callback is a static function.
    let s = unsafe {
        hsa_queue_create(
            gpu(),
            64,
            queue_type,
            Some(record_queue_error),
            std::ptr::null_mut(),
            0,
            0,
            &mut q,
        )
    };
    assert_eq!(s, status::SUCCESS);
    q
}

struct Exchange {
    exec: hsa_executable_t,
    slots: *mut u32,
    out: *mut u32,
    kernarg: *mut c_void,
    groups: u32,
}

impl Exchange {
    fn new(groups: u32) -> Exchange {
        let exec = load_executable(&grid_sync_code_object()).expect("loads");
        let slots = pool_alloc(host_visible_pool(), 4 * groups as usize).unwrap() as *mut u32;
        let out = pool_alloc(host_visible_pool(), 4 * (groups * WG) as usize).unwrap() as *mut u32;
        let kernarg = pool_alloc(kernarg_pool(), 256).unwrap();
        // SAFETY: fresh allocations of the sizes written; the kernargs follow the kernel's
        // metadata: slots at 0, out at 8, rounds at 16, code object v5 hidden arguments from
        // 24 (block counts, group sizes, remainders, offsets, dimensions).
        unsafe {
            std::ptr::write_bytes(slots, 0, groups as usize);
            std::ptr::write_bytes(out, 0xff, (groups * WG) as usize);
            std::ptr::write_bytes(kernarg as *mut u8, 0, 256);
            let k = kernarg as *mut u8;
            (k as *mut u64).write(slots as u64);
            (k.add(8) as *mut u64).write(out as u64);
            (k.add(16) as *mut u32).write(ROUNDS);
            (k.add(24) as *mut [u32; 3]).write([groups, 1, 1]);
            (k.add(36) as *mut [u16; 3]).write([WG as u16, 1, 1]);
            (k.add(88) as *mut u16).write(1);
        }
        Exchange {
            exec,
            slots,
            out,
            kernarg,
            groups,
        }
    }

    fn packet(&self, completion: hsa_signal_t) -> hsa_kernel_dispatch_packet_t {
        let kernel = kernel_object(self.exec, "grid_exchange.kd");
        dispatch(
            kernel,
            self.kernarg,
            self.groups * WG,
            WG as u16,
            completion,
        )
    }

    fn wrong(&self) -> usize {
        let n = self.groups;
        (0..n * WG)
            .filter(|&i| {
                let (g, t) = (i / WG, i % WG);
                let other = (g + 1 + t % (n - 1)) % n;
                let want: u32 = (0..ROUNDS).map(|r| other * 3 + 1 + r * 1000).sum();
                // SAFETY: i < groups * WG, the size of `out`; the dispatch has finished.
                unsafe { *self.out.add(i as usize) != want }
            })
            .count()
    }
}

impl Drop for Exchange {
    fn drop(&mut self) {
        hsa_amd_memory_pool_free(self.slots.cast());
        hsa_amd_memory_pool_free(self.out.cast());
        hsa_amd_memory_pool_free(self.kernarg);
        hsa_executable_destroy(self.exec);
    }
}

fn agent_info<T: Copy + Default>(agent: hsa_agent_t, attribute: u32) -> T {
    let mut v = T::default();
    // SAFETY: `v` is large enough for the attribute's type.
    let s = unsafe { hsa_agent_get_info(agent, attribute, &mut v as *mut T as *mut c_void) };
    assert_eq!(s, status::SUCCESS, "attribute {attribute:#x}");
    v
}

#[test]
fn gpu_agents_report_cooperative_queues() {
    let _h = Hsa::init();
    assert!(agent_info::<bool>(
        gpu(),
        agent_info::AMD_COOPERATIVE_QUEUES
    ));
    assert!(!agent_info::<bool>(
        cpu(),
        agent_info::AMD_COOPERATIVE_QUEUES
    ));
    let cus: u32 = agent_info(gpu(), agent_info::AMD_COMPUTE_UNIT_COUNT);
    assert!(cus > 0);
    assert_eq!(
        agent_info::<u32>(gpu(), agent_info::AMD_COOPERATIVE_COMPUTE_UNIT_COUNT),
        cus
    );
}

/// The whole check; also what the deterministic-mode child process runs.
#[test]
fn grid_sync_runs_on_a_cooperative_queue() {
    let _h = Hsa::init();
    for groups in [2, 64] {
        let x = Exchange::new(groups);
        let q = queue_of_type(HSA_QUEUE_TYPE_COOPERATIVE);
        // SAFETY: a live queue.
        assert_eq!(unsafe { (*q).type_ }, HSA_QUEUE_TYPE_COOPERATIVE);
        let done = signal(1);
        // SAFETY: a live queue and a 64-byte packet.
        unsafe { publish(q, x.packet(done)) };
        assert_eq!(
            wait_eq(done, 0, 60 * SECOND),
            0,
            "{groups} groups: finished"
        );
        assert_eq!(x.wrong(), 0, "{groups} groups: every sum right");
        assert_eq!(hsa_queue_destroy(q), status::SUCCESS);
        hsa_signal_destroy(done);
    }
}

#[test]
fn grid_sync_runs_on_a_cooperative_queue_in_deterministic_mode() {
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "grid_sync_runs_on_a_cooperative_queue",
            "--test-threads=1",
        ])
        .env("HSASIM_THREADS", "0")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&child.stdout);
    assert!(
        child.status.success() && text.contains("1 passed"),
        "{text}\n{}",
        String::from_utf8_lossy(&child.stderr)
    );
}

#[test]
fn gws_on_an_ordinary_queue_is_a_queue_error_naming_the_queue_type() {
    let _h = Hsa::init();
    let x = Exchange::new(4);
    let q = queue_of_type(HSA_QUEUE_TYPE_MULTI);
    let done = signal(1);
    // SAFETY: a live queue and a 64-byte packet.
    unsafe { publish(q, x.packet(done)) };
    assert_eq!(queue_error(q), status::AMD_ERROR_ILLEGAL_INSTRUCTION);
    let message = hsasim::testing::queue_failure(q as u64).expect("a logged failure");
    assert!(message.contains("ds_gws_barrier"), "{message}");
    assert!(message.contains("HSA_QUEUE_TYPE_COOPERATIVE"), "{message}");
    assert_eq!(hsa_signal_load_relaxed(done), 1);
    assert_eq!(hsa_queue_destroy(q), status::SUCCESS);
    hsa_signal_destroy(done);
}

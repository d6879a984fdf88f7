//! Resident memory of N queues, each with the kernarg ring hipshim gives a queue
//! (2 x 1,024 slots of 512 and 4,096 bytes from the kernarg pool): what a program with N
//! streams under `HIPSHIM_QUEUE_POLICY=dedicated` pays for their queues.
//!
//! `cargo run --release -p hsasim --example queue_memory -- [N]` (N = 1,000 by default).

use hsa_abi::*;
use hsasim::api::memory::*;
use hsasim::api::queue::*;
use hsasim::api::system::*;
use std::ffi::c_void;

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

unsafe extern "C" fn collect(a: hsa_agent_t, data: *mut c_void) -> hsa_status_t {
    // SAFETY: `data` is the Vec `main` passes.
    unsafe { (*data.cast::<Vec<hsa_agent_t>>()).push(a) };
    status::SUCCESS
}

unsafe extern "C" fn collect_pool(p: hsa_amd_memory_pool_t, data: *mut c_void) -> hsa_status_t {
    // SAFETY: `data` is the Vec `main` passes.
    unsafe { (*data.cast::<Vec<hsa_amd_memory_pool_t>>()).push(p) };
    status::SUCCESS
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1000);
    assert_eq!(hsa_init(), status::SUCCESS);
    let mut agents: Vec<hsa_agent_t> = Vec::new();
    // SAFETY: the callback pushes into `agents`, alive for the call.
    unsafe { hsa_iterate_agents(Some(collect), (&mut agents as *mut Vec<_>).cast()) };
    let (cpu, gpu) = (agents[0], agents[1]);
    let mut pools: Vec<hsa_amd_memory_pool_t> = Vec::new();
    // SAFETY: as above, for `pools`.
    unsafe {
        hsa_amd_agent_iterate_memory_pools(
            cpu,
            Some(collect_pool),
            (&mut pools as *mut Vec<_>).cast(),
        )
    };
    let kernarg_pool = pools[1];
    let ring = 2 * 1024 * (512 + 4096);
    let before = rss_kib();
    let mut made = Vec::with_capacity(n);
    for _ in 0..n {
        let mut q = std::ptr::null_mut();
        // SAFETY: out-pointers to locals.
        let s = unsafe {
            hsa_queue_create(
                gpu,
                1024,
                HSA_QUEUE_TYPE_MULTI,
                None,
                std::ptr::null_mut(),
                0,
                0,
                &mut q,
            )
        };
        if s != status::SUCCESS {
            // The agent's queue limit (as KFD's): count what was made.
            println!("queue {} not created: status {s:#x}", made.len() + 1);
            break;
        }
        let mut kernargs = std::ptr::null_mut();
        // SAFETY: as above.
        let s = unsafe { hsa_amd_memory_pool_allocate(kernarg_pool, ring, 0, &mut kernargs) };
        assert_eq!(s, status::SUCCESS);
        made.push((q, kernargs));
    }
    let after = rss_kib();
    let n = made.len().max(1);
    println!(
        "{n} queues of 1,024 packets with a {} KiB kernarg ring each: RSS {} -> {} KiB, {} KiB per queue",
        ring / 1024,
        before,
        after,
        (after - before) / n as u64
    );
    for (q, kernargs) in made {
        hsa_amd_memory_pool_free(kernargs);
        hsa_queue_destroy(q);
    }
    hsa_shut_down();
}

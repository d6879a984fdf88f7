//! `HSASIM_STRICT=1` on real packets: each breaks one rule on purpose and fails its queue as
//! an invalid packet whose logged message names the rule; the same kernel dispatched properly
//! still runs. (Every rule is also unit-tested on packet values in `sim/src/strict.rs`.)
mod common;
use common::*;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU16, Ordering};

const KERNELS: &str = r#"
extern "C" __attribute__((global)) void store(int* out, int v) {
    out[__builtin_amdgcn_workitem_id_x()] = v;
}
"#;

/// Strict mode for this whole test binary: the runtime reads its configuration at the first
/// `hsa_init` of the process, whichever test makes it.
fn strict_hsa() -> Hsa {
    std::env::set_var("HSASIM_STRICT", "1");
    Hsa::init()
}

struct Store {
    exec: hsa_executable_t,
    kernel: u64,
    kernarg: *mut u8,
    out: *mut i32,
}

impl Store {
    fn new() -> Store {
        let exec = load_executable(&compile_hip(KERNELS, "gfx942")).expect("loads");
        let kernel = kernel_object(exec, "store.kd");
        let out = pool_alloc(host_visible_pool(), 256).unwrap() as *mut i32;
        let kernarg = pool_alloc(kernarg_pool(), 128).unwrap() as *mut u8;
        // SAFETY: inside the fresh 128-byte block: `out` at +0, `v` (7) at +8.
        unsafe {
            kernarg.cast::<u64>().write(out as u64);
            kernarg.add(8).cast::<i32>().write(7);
        }
        Store {
            exec,
            kernel,
            kernarg,
            out,
        }
    }

    fn packet(&self, completion: hsa_signal_t) -> hsa_kernel_dispatch_packet_t {
        dispatch(
            self.kernel,
            self.kernarg as *const c_void,
            64,
            64,
            completion,
        )
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        hsa_amd_memory_pool_free(self.out as *mut c_void);
        hsa_amd_memory_pool_free(self.kernarg as *mut c_void);
        hsa_executable_destroy(self.exec);
    }
}

/// Publishes `packet` on a fresh queue; returns the queue's error status and logged message.
fn failure_of<P: Copy>(packet: impl FnOnce(hsa_signal_t) -> P) -> (hsa_status_t, String) {
    let q = queue(64, Some(record_queue_error), std::ptr::null_mut());
    let completion = signal(1);
    // SAFETY: a live queue and a 64-byte packet.
    unsafe { publish(q, packet(completion)) };
    let status = queue_error(q);
    let message = hsasim::testing::queue_failure(q as u64).expect("a logged failure");
    assert_eq!(
        hsa_signal_load_relaxed(completion),
        1,
        "the packet did not run"
    );
    assert_eq!(hsa_queue_destroy(q), status::SUCCESS);
    hsa_signal_destroy(completion);
    (status, message)
}

fn runs(k: &Store, packet: hsa_kernel_dispatch_packet_t, done: hsa_signal_t) {
    // SAFETY: the 256-byte output buffer.
    unsafe { std::ptr::write_bytes(k.out, 0, 64) };
    let q = queue(64, Some(record_queue_error), std::ptr::null_mut());
    // SAFETY: a live queue and a 64-byte packet.
    unsafe { publish(q, packet) };
    assert_eq!(wait_eq(done, 0, 10 * SECOND), 0, "a proper dispatch ran");
    // SAFETY: the kernel finished writing the buffer.
    assert_eq!(unsafe { *k.out.add(63) }, 7);
    assert_eq!(hsa_queue_destroy(q), status::SUCCESS);
}

#[test]
fn dispatches_that_break_a_rule_fail_their_queue_naming_it() {
    let _h = strict_hsa();
    let k = Store::new();
    type Breaks = fn(&mut hsa_kernel_dispatch_packet_t);
    let cases: [(&str, Breaks); 7] = [
        ("kernarg-alignment", |p| p.kernarg_address += 8),
        ("dispatch-reserved", |p| p.reserved2 = 0xdead),
        ("dispatch-unused-dimension", |p| p.grid_size_z = 2),
        ("dispatch-setup", |p| p.setup = 1 | 1 << 7),
        ("dispatch-workgroup-size", |p| {
            p.setup = 2;
            p.workgroup_size_y = 32;
            p.grid_size_y = 32;
        }),
        ("header-fence-scope", |p| {
            p.header |= 3 << HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE
        }),
        ("header-reserved-bits", |p| p.header |= 1 << 15),
    ];
    for (rule, breaks) in cases {
        let (status, message) = failure_of(|c| {
            let mut p = k.packet(c);
            breaks(&mut p);
            p
        });
        assert_eq!(
            status,
            status::ERROR_INVALID_PACKET_FORMAT,
            "{rule}: {message}"
        );
        assert!(
            message.contains(&format!("strict rule `{rule}`")),
            "{rule}: {message}"
        );
    }
    let done = signal(1);
    runs(&k, k.packet(done), done);
    hsa_signal_destroy(done);
}

#[test]
fn segment_sizes_below_the_descriptors_fail() {
    let _h = strict_hsa();
    let k = Store::new();
    // A kernel that declares LDS, so a packet can ask for less than it needs.
    let lds = load_executable(&compile_hip(
        r#"
        extern "C" __attribute__((global)) void lds(int* out) {
            __attribute__((shared)) int tile[256];
            tile[__builtin_amdgcn_workitem_id_x()] = 7;
            __builtin_amdgcn_s_barrier();
            out[__builtin_amdgcn_workitem_id_x()] = tile[63 - __builtin_amdgcn_workitem_id_x()];
        }
        "#,
        "gfx942",
    ))
    .expect("loads");
    let kernel = kernel_object(lds, "lds.kd");
    // SAFETY: a loaded kernel descriptor.
    let needs = unsafe { (*(kernel as *const KernelDescriptor)).group_segment_fixed_size };
    assert!(needs >= 1024, "the kernel declares its LDS ({needs})");
    let (status, message) = failure_of(|c| {
        let mut p = dispatch(kernel, k.kernarg as *const c_void, 64, 64, c);
        p.group_segment_size = needs - 4;
        p
    });
    assert_eq!(status, status::ERROR_INVALID_PACKET_FORMAT);
    assert!(
        message.contains("strict rule `group-segment-size`"),
        "{message}"
    );
    let done = signal(1);
    let mut p = dispatch(kernel, k.kernarg as *const c_void, 64, 64, done);
    p.group_segment_size = needs;
    runs(&k, p, done);
    hsa_signal_destroy(done);
    hsa_executable_destroy(lds);
}

#[test]
fn barriers_with_reserved_fields_set_fail() {
    let _h = strict_hsa();
    let (status, message) = failure_of(|c| {
        let mut p = barrier(HSA_PACKET_TYPE_BARRIER_AND, &[], c);
        p.reserved1 = 1;
        p
    });
    assert_eq!(status, status::ERROR_INVALID_PACKET_FORMAT);
    assert!(
        message.contains("strict rule `barrier-reserved`"),
        "{message}"
    );
}

#[test]
fn a_doorbell_rung_past_the_write_index_fails_the_queue() {
    let _h = strict_hsa();
    let q = queue(64, Some(record_queue_error), std::ptr::null_mut());
    // One packet reserved and never written, and the doorbell rung for three.
    assert_eq!(hsa_queue_add_write_index_relaxed(q, 1), 0);
    // SAFETY: a live queue.
    hsa_signal_store_screlease(unsafe { (*q).doorbell_signal }, 2);
    assert_eq!(queue_error(q), status::ERROR_INVALID_PACKET_FORMAT);
    let message = hsasim::testing::queue_failure(q as u64).expect("a logged failure");
    assert!(
        message.contains("strict rule `doorbell-beyond-write-index`"),
        "{message}"
    );
    assert_eq!(hsa_queue_destroy(q), status::SUCCESS);
}

#[test]
fn a_header_published_before_its_body_fails_the_queue() {
    let _h = strict_hsa();
    let k = Store::new();
    let q = queue(64, Some(record_queue_error), std::ptr::null_mut());
    let done = signal(1);
    // A producer that stores the header first: the packet processor may see the packet
    // between the two stores; here it sees it before the body is written at all.
    let packet = k.packet(done);
    let index = hsa_queue_add_write_index_screlease(q, 1);
    // SAFETY: a live queue; slot `index` is ours (the ring is empty).
    unsafe {
        let slot = ((*q).base_address as *mut u8).add((index % u64::from((*q).size)) as usize * 64);
        AtomicU16::from_ptr(slot.cast::<u16>()).store(packet.header, Ordering::Release);
        hsa_signal_store_screlease((*q).doorbell_signal, index as i64);
    }
    assert_eq!(queue_error(q), status::ERROR_INVALID_PACKET_FORMAT);
    let message = hsasim::testing::queue_failure(q as u64).expect("a logged failure");
    assert!(
        message.contains("strict rule `header-written-last`"),
        "{message}"
    );
    assert_eq!(hsa_signal_load_relaxed(done), 1, "the packet did not run");
    assert_eq!(hsa_queue_destroy(q), status::SUCCESS);
    // Written in the right order, slots keep working as the ring wraps (each consumed slot
    // gets the fill pattern back).
    let q = queue(64, Some(record_queue_error), std::ptr::null_mut());
    for _ in 0..70 {
        hsa_signal_store_relaxed(done, 1);
        // SAFETY: a live queue and a 64-byte packet.
        unsafe { publish(q, k.packet(done)) };
        assert_eq!(wait_eq(done, 0, 10 * SECOND), 0);
    }
    assert_eq!(hsa_queue_destroy(q), status::SUCCESS);
    hsa_signal_destroy(done);
}

#[test]
fn a_single_producer_doorbell_that_goes_back_fails_the_queue_and_a_multi_producer_one_may() {
    let _h = strict_hsa();
    for queue_type in [HSA_QUEUE_TYPE_SINGLE, HSA_QUEUE_TYPE_MULTI] {
        ring_a_doorbell_back(queue_type);
    }
}

/// Strict mode gives locked host memory an agent address of the device's own, as a discrete
/// GPU's driver does: kernels and copy engines reach the memory through it, and the host
/// pointer itself is out of their reach (a kernel faults, a copy is refused), which is how
/// a runtime that hands devices the host pointer would fail on hardware.
#[test]
fn locked_memory_is_reached_through_its_agent_address_only() {
    let _h = strict_hsa();
    let k = Store::new();
    let mut host = vec![0i32; 1024];
    let host_ptr = host.as_mut_ptr();
    let g = gpu();
    let mut agent: *mut c_void = std::ptr::null_mut();
    // SAFETY: a live 4 KiB buffer and one agent.
    let s = unsafe { hsa_amd_memory_lock(host_ptr.cast(), 4096, &g, 1, &mut agent) };
    assert_eq!(s, status::SUCCESS);
    assert_ne!(
        agent,
        host_ptr.cast(),
        "strict locks have their own agent address"
    );
    assert_eq!(
        agent as u64 % 4096,
        host_ptr as u64 % 4096,
        "the page offset is kept"
    );
    let with_out = |out: *mut c_void, completion| {
        // SAFETY: the kernarg block's first word is the kernel's `out` pointer.
        unsafe { k.kernarg.cast::<u64>().write(out as u64) };
        k.packet(completion)
    };

    // Through the agent address the kernel's stores land in the host buffer.
    let done = signal(1);
    let q = queue(64, Some(record_queue_error), std::ptr::null_mut());
    // SAFETY: a live queue and a 64-byte packet.
    unsafe { publish(q, with_out(agent, done)) };
    assert_eq!(wait_eq(done, 0, 10 * SECOND), 0);
    assert_eq!(hsa_queue_destroy(q), status::SUCCESS);
    assert_eq!(host[..64], [7; 64]);

    // Through the host pointer the kernel faults.
    let (status, message) = failure_of(|c| with_out(host_ptr.cast(), c));
    assert_eq!(
        status,
        status::AMD_ERROR_MEMORY_APERTURE_VIOLATION,
        "{message}"
    );

    // Copy engines: the agent address copies, the host pointer is refused.
    let dev = pool_alloc(host_visible_pool(), 4096).unwrap();
    host[100] = 0x1234;
    for (src, expect) in [
        (agent as *const c_void, status::SUCCESS),
        (host_ptr as *const c_void, status::ERROR_INVALID_ARGUMENT),
    ] {
        let done = signal(1);
        // SAFETY: 4 KiB each side; the call checks both ranges first.
        let s = unsafe {
            hsa_amd_memory_async_copy(dev, g, src, cpu(), 4096, 0, std::ptr::null(), done)
        };
        assert_eq!(s, expect);
        if s == status::SUCCESS {
            assert_eq!(wait_eq(done, 0, 10 * SECOND), 0);
            // SAFETY: host-visible memory; the copy is done.
            assert_eq!(unsafe { *dev.cast::<i32>().add(100) }, 0x1234);
        }
        hsa_signal_destroy(done);
    }
    // A fill through the agent address reaches the host buffer.
    assert_eq!(hsa_amd_memory_fill(agent, 0x55, 1024), status::SUCCESS);
    assert_eq!(host[1023], 0x55);

    // Unlocking by the host pointer ends both.
    assert_eq!(hsa_amd_memory_unlock(host_ptr.cast()), status::SUCCESS);
    assert_eq!(
        hsa_amd_memory_fill(agent, 0, 1),
        status::ERROR_INVALID_ARGUMENT
    );
    hsa_amd_memory_pool_free(dev);
}

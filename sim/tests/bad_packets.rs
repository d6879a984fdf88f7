//! Packets and copies no real program should submit: each becomes an error reported through
//! the queue's error callback (with the status ROCr would use) or a failed copy, never a
//! crash of the process. Every test ends by showing the device still works.
mod common;
use common::*;
use std::ffi::c_void;

const KERNELS: &str = r#"
extern "C" __attribute__((global)) void store(int* out, int v) {
    out[__builtin_amdgcn_workitem_id_x()] = v;
}
__attribute__((device)) int variable = 1;
"#;

/// The `store` kernel, its kernargs (`out`, `v` = 7) and a 64-int output buffer.
struct Store {
    exec: hsa_executable_t,
    kernel: u64,
    kernarg: *mut c_void,
    out: *mut i32,
}

impl Store {
    fn new() -> Store {
        let exec = load_executable(&compile_hip(KERNELS, "gfx942")).expect("loads");
        let kernel = kernel_object(exec, "store.kd");
        let out = pool_alloc(host_visible_pool(), 256).unwrap() as *mut i32;
        let kernarg = pool_alloc(kernarg_pool(), 64).unwrap();
        // SAFETY: a fresh 64-byte kernarg block: `out` at 0, `v` at 8.
        unsafe {
            (kernarg as *mut u64).write(out as u64);
            (kernarg as *mut i32).add(2).write(7);
        }
        Store {
            exec,
            kernel,
            kernarg,
            out,
        }
    }

    fn packet(&self, completion: hsa_signal_t) -> hsa_kernel_dispatch_packet_t {
        dispatch(self.kernel, self.kernarg, 64, 64, completion)
    }

    /// A good dispatch on a fresh queue runs and stores 7.
    fn expect_device_still_works(&self) {
        // SAFETY: the 256-byte output buffer.
        unsafe { std::ptr::write_bytes(self.out, 0, 64) };
        let q = queue(64, Some(record_queue_error), std::ptr::null_mut());
        let done = signal(1);
        // SAFETY: a live queue and a 64-byte packet.
        unsafe { publish(q, self.packet(done)) };
        assert_eq!(wait_eq(done, 0, 10 * SECOND), 0, "a good dispatch ran");
        // SAFETY: the kernel finished writing the buffer.
        assert_eq!(unsafe { *self.out.add(63) }, 7);
        assert_eq!(hsa_queue_destroy(q), status::SUCCESS);
        hsa_signal_destroy(done);
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        hsa_amd_memory_pool_free(self.out as *mut c_void);
        hsa_amd_memory_pool_free(self.kernarg);
        hsa_executable_destroy(self.exec);
    }
}

/// Publishes `packet` on a fresh queue and returns the status its error callback got;
/// checks that the completion signal was left alone.
fn queue_error_for<P: Copy>(packet: impl FnOnce(hsa_signal_t) -> P) -> hsa_status_t {
    let q = queue(64, Some(record_queue_error), std::ptr::null_mut());
    let completion = signal(1);
    // SAFETY: a live queue and a 64-byte packet.
    unsafe { publish(q, packet(completion)) };
    let status = queue_error(q);
    assert_eq!(
        hsa_signal_load_relaxed(completion),
        1,
        "a failed packet leaves its completion signal alone"
    );
    assert_eq!(hsa_queue_destroy(q), status::SUCCESS);
    hsa_signal_destroy(completion);
    status
}

#[test]
fn kernel_objects_that_are_not_loaded_descriptors_are_invalid_packets() {
    let _h = Hsa::init();
    let k = Store::new();
    let variable: u64 = symbol_value(
        executable_symbol(k.exec, "variable").unwrap(),
        symbol_info::VARIABLE_ADDRESS,
    );
    // A copy of the real descriptor in device memory whose code is `s_endpgm`: readable,
    // well-formed, but not something the loader placed (hardware would not execute it from
    // non-executable memory either).
    let fake = pool_alloc(host_visible_pool(), 4096).unwrap() as *mut u8;
    // SAFETY: 64 bytes of the loaded descriptor into a fresh 4 KiB block.
    unsafe {
        std::ptr::copy_nonoverlapping(k.kernel as *const u8, fake, 64);
        let kd = &mut *(fake as *mut KernelDescriptor);
        kd.kernel_code_entry_byte_offset = 256;
        (fake.add(256) as *mut u32).write(0xbf81_0000);
    }
    for bogus in [
        0,
        0x1234_5678,
        k.kernel + 1,
        k.kernel + 4,
        variable,
        fake as u64,
        !63,
    ] {
        let status = queue_error_for(|c| dispatch(bogus, k.kernarg, 64, 64, c));
        assert_eq!(
            status,
            status::ERROR_INVALID_PACKET_FORMAT,
            "kernel_object {bogus:#x}"
        );
    }
    hsa_amd_memory_pool_free(fake as *mut c_void);
    k.expect_device_still_works();
}

#[test]
fn bogus_kernarg_addresses_are_memory_faults() {
    let _h = Hsa::init();
    let k = Store::new();
    // 16-byte aligned, so strict mode too lets them reach the device (and fault there).
    for bogus in [0xdead_0000u64, u64::MAX - 15, 1 << 62] {
        let status = queue_error_for(|c| {
            let mut p = k.packet(c);
            p.kernarg_address = bogus;
            p
        });
        assert_eq!(
            status,
            status::AMD_ERROR_MEMORY_APERTURE_VIOLATION,
            "kernarg_address {bogus:#x}"
        );
    }
    k.expect_device_still_works();
}

#[test]
fn signals_that_do_not_exist_are_invalid_signal_errors() {
    let _h = Hsa::init();
    let k = Store::new();
    let nowhere = hsa_signal_t {
        handle: 0xdead_beef,
    };
    let status = queue_error_for(|_| k.packet(nowhere));
    assert_eq!(status, status::ERROR_INVALID_SIGNAL, "dispatch completion");
    for kind in [HSA_PACKET_TYPE_BARRIER_AND, HSA_PACKET_TYPE_BARRIER_OR] {
        let status = queue_error_for(|c| barrier(kind, &[nowhere], c));
        assert_eq!(status, status::ERROR_INVALID_SIGNAL, "barrier dependency");
        let status = queue_error_for(|_| barrier(kind, &[], nowhere));
        assert_eq!(status, status::ERROR_INVALID_SIGNAL, "barrier completion");
    }
    k.expect_device_still_works();
}

#[test]
fn packet_types_the_processor_does_not_execute_are_invalid_packets() {
    let _h = Hsa::init();
    let k = Store::new();
    for t in [
        HSA_PACKET_TYPE_VENDOR_SPECIFIC,
        HSA_PACKET_TYPE_AGENT_DISPATCH,
        6,
        0x7f,
        0xff,
    ] {
        let status = queue_error_for(|c| {
            let mut p = barrier(HSA_PACKET_TYPE_BARRIER_AND, &[], c);
            p.header = packet_header(t, true, HSA_FENCE_SCOPE_SYSTEM, HSA_FENCE_SCOPE_SYSTEM);
            p
        });
        assert_eq!(status, status::ERROR_INVALID_PACKET_FORMAT, "type {t}");
    }
    k.expect_device_still_works();
}

#[test]
fn impossible_segment_sizes_and_geometry_are_invalid_packets() {
    let _h = Hsa::init();
    let k = Store::new();
    type Edit = fn(&mut hsa_kernel_dispatch_packet_t);
    let edits: [(&str, Edit); 6] = [
        ("private segment of 4 GiB per work-item", |p| {
            p.private_segment_size = u32::MAX
        }),
        ("group segment of 4 GiB", |p| {
            p.group_segment_size = u32::MAX
        }),
        ("workgroup of 0", |p| p.workgroup_size_x = 0),
        ("workgroup of 2048", |p| p.workgroup_size_x = 2048),
        ("grid of 0", |p| p.grid_size_y = 0),
        ("workgroup of 65535^3", |p| {
            p.workgroup_size_x = u16::MAX;
            p.workgroup_size_y = u16::MAX;
            p.workgroup_size_z = u16::MAX;
        }),
    ];
    for (what, edit) in edits {
        let status = queue_error_for(|c| {
            let mut p = k.packet(c);
            edit(&mut p);
            p
        });
        assert_eq!(status, status::ERROR_INVALID_PACKET_FORMAT, "{what}");
    }
    k.expect_device_still_works();
}

#[test]
fn a_panic_in_the_packet_processor_becomes_a_queue_error() {
    let _h = Hsa::init();
    let k = Store::new();
    let status = queue_error_for(|c| {
        hsasim::testing::panic_in_dispatch(c);
        k.packet(c)
    });
    assert_eq!(status, status::ERROR);
    k.expect_device_still_works();
}

/// Copies 4 KiB from `src` to `dst` on the device's engines once `gate` reads 0.
fn gated_copy(dst: *mut c_void, src: *const c_void, gate: hsa_signal_t, done: hsa_signal_t) {
    // SAFETY: both ranges are live 4 KiB pool allocations at submission; `gate` is live.
    let s = unsafe { hsa_amd_memory_async_copy(dst, gpu(), src, gpu(), 4096, 1, &gate, done) };
    assert_eq!(s, status::SUCCESS);
}

#[test]
fn a_copy_whose_memory_was_freed_before_it_ran_fails_without_touching_it() {
    let _h = Hsa::init();
    let pool = host_visible_pool();
    let dst = pool_alloc(pool, 4096).unwrap();
    let gate = signal(1);
    let done = signal(1);
    for free_source in [true, false] {
        let src = pool_alloc(pool, 4096).unwrap();
        let target = if free_source {
            dst
        } else {
            pool_alloc(pool, 4096).unwrap()
        };
        hsa_signal_store_relaxed(gate, 1);
        hsa_signal_store_relaxed(done, 1);
        gated_copy(target, src, gate, done);
        // The client frees memory the queued copy still names (the HSA spec makes that
        // the client's bug); the engine must notice, not read or write unmapped memory.
        let freed = if free_source { src } else { target };
        assert_eq!(hsa_amd_memory_pool_free(freed), status::SUCCESS);
        hsa_signal_store_screlease(gate, 0);
        assert_eq!(
            wait_eq(done, 0, 10 * SECOND),
            0,
            "the failed copy still completes its signal (no waiter hangs)"
        );
        // What is left of this round's memory; `dst` itself is kept for the last copy.
        if !free_source {
            hsa_amd_memory_pool_free(src);
        }
    }
    // The engines still copy.
    let src = pool_alloc(pool, 4096).unwrap();
    // SAFETY: a live 4 KiB allocation.
    unsafe { std::ptr::write_bytes(src as *mut u8, 0x5a, 4096) };
    hsa_signal_store_relaxed(done, 1);
    gated_copy(dst, src, gate, done);
    assert_eq!(wait_eq(done, 0, 10 * SECOND), 0);
    // SAFETY: the copy completed into the live allocation.
    assert_eq!(unsafe { *(dst as *const u8).add(4095) }, 0x5a);
    hsa_amd_memory_pool_free(src);
    hsa_amd_memory_pool_free(dst);
}

#[test]
fn a_panic_in_a_copy_engine_fails_that_copy_only() {
    let _h = Hsa::init();
    let pool = host_visible_pool();
    let src = pool_alloc(pool, 4096).unwrap();
    let dst = pool_alloc(pool, 4096).unwrap();
    // SAFETY: live 4 KiB allocations.
    unsafe {
        std::ptr::write_bytes(src as *mut u8, 0x11, 4096);
        std::ptr::write_bytes(dst as *mut u8, 0, 4096);
    }
    let open = signal(0);
    let first = signal(1);
    let second = signal(1);
    hsasim::testing::panic_in_copy(first);
    gated_copy(dst, src, open, first);
    assert_eq!(
        wait_eq(first, 0, 10 * SECOND),
        0,
        "the failed copy completes"
    );
    // SAFETY: nothing was copied by the failed job.
    assert_eq!(
        unsafe { *(dst as *const u8) },
        0,
        "the failed copy moved nothing"
    );
    gated_copy(dst, src, open, second);
    assert_eq!(
        wait_eq(second, 0, 10 * SECOND),
        0,
        "the engine still runs copies"
    );
    // SAFETY: the second copy completed.
    assert_eq!(unsafe { *(dst as *const u8).add(4095) }, 0x11);
    hsa_amd_memory_pool_free(src);
    hsa_amd_memory_pool_free(dst);
}

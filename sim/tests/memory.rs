mod common;
use common::*;
use std::ffi::c_void;
use std::time::Duration;

fn device_pool() -> hsa_amd_memory_pool_t {
    pools(gpu())[0]
}

fn alloc(pool: hsa_amd_memory_pool_t, size: usize) -> Result<*mut c_void, hsa_status_t> {
    let mut p = std::ptr::null_mut();
    // SAFETY: out-pointer to a local.
    match unsafe { hsa_amd_memory_pool_allocate(pool, size, 0, &mut p) } {
        status::SUCCESS => Ok(p),
        e => Err(e),
    }
}

#[test]
fn pools_report_their_kind() {
    let _h = Hsa::init();
    let mut flags = 0u32;
    // SAFETY (get_info calls): value pointers to locals of the documented types.
    unsafe {
        hsa_amd_memory_pool_get_info(
            device_pool(),
            memory_pool_info::GLOBAL_FLAGS,
            &mut flags as *mut _ as *mut c_void,
        )
    };
    assert_eq!(flags, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED);
    let cpu_pools = pools(cpu());
    // As ROCr: fine-grained, kernarg (fine-grained), coarse-grained system memory.
    assert_eq!(cpu_pools.len(), 3);
    unsafe {
        hsa_amd_memory_pool_get_info(
            cpu_pools[1],
            memory_pool_info::GLOBAL_FLAGS,
            &mut flags as *mut _ as *mut c_void,
        )
    };
    assert_ne!(flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT, 0);
    let mut access = 0u32;
    unsafe {
        hsa_amd_agent_memory_pool_get_info(
            cpu(),
            device_pool(),
            HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS,
            &mut access as *mut _ as *mut c_void,
        )
    };
    // AMD's runtime reads NEVER_ALLOWED as "no large BAR": the CPU cannot reach device
    // memory, which is strict hsasim's default (`HSASIM_LARGE_BAR`).
    let var = |name| std::env::var(name).ok();
    let large_bar =
        var("HSASIM_LARGE_BAR").map_or(var("HSASIM_STRICT").as_deref() != Some("1"), |v| v == "1");
    assert_eq!(
        access,
        if large_bar {
            HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT
        } else {
            HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED
        }
    );
    let mut size = 0usize;
    unsafe {
        hsa_amd_memory_pool_get_info(
            device_pool(),
            memory_pool_info::SIZE,
            &mut size as *mut _ as *mut c_void,
        )
    };
    assert_eq!(size as u64, 16 << 30);
}

#[test]
fn pool_allocate_free_accounting_and_over_allocation() {
    let _h = Hsa::init();
    let pool = device_pool();
    let a = alloc(pool, 1 << 20).unwrap();
    assert_eq!(a as usize % 4096, 0);
    assert_eq!(alloc(pool, 17 << 30), Err(status::ERROR_OUT_OF_RESOURCES));
    assert_eq!(alloc(pool, 0), Err(status::ERROR_INVALID_ARGUMENT));
    // Whole-pool allocations are accounted (nothing is touched, so nothing is committed).
    let big = alloc(pool, 8 << 30).unwrap();
    assert_eq!(hsa_amd_memory_pool_free(big), status::SUCCESS);
    assert_eq!(hsa_amd_memory_pool_free(a), status::SUCCESS);
    assert_eq!(hsa_amd_memory_pool_free(a), status::ERROR_INVALID_ARGUMENT);
    let mut local = 0u8;
    assert_eq!(
        hsa_amd_memory_pool_free(&mut local as *mut u8 as *mut c_void),
        status::ERROR_INVALID_ARGUMENT
    );
}

#[test]
fn pointer_info_covers_pool_locked_and_unknown_memory() {
    let _h = Hsa::init();
    let a = alloc(device_pool(), 4096).unwrap();
    let info = |p: *const c_void| {
        let mut i = hsa_amd_pointer_info_t {
            size: std::mem::size_of::<hsa_amd_pointer_info_t>() as u32,
            type_: 99,
            agent_base_address: std::ptr::null_mut(),
            host_base_address: std::ptr::null_mut(),
            size_in_bytes: 0,
            user_data: std::ptr::null_mut(),
            agent_owner: hsa_agent_t::default(),
            global_flags: 0,
        };
        // SAFETY: a correctly sized info struct; no agent list requested.
        let s = unsafe {
            hsa_amd_pointer_info(p, &mut i, None, std::ptr::null_mut(), std::ptr::null_mut())
        };
        assert_eq!(s, status::SUCCESS);
        i
    };
    let i = info(unsafe { (a as *const u8).add(100) } as *const c_void);
    assert_eq!(i.type_, HSA_EXT_POINTER_TYPE_HSA);
    assert_eq!(i.agent_base_address, a);
    assert_eq!(i.agent_owner, gpu());
    let mut host = vec![0u8; 8192];
    let mut agent_ptr = std::ptr::null_mut();
    let g = gpu();
    // SAFETY: a live host buffer and one agent.
    let s = unsafe {
        hsa_amd_memory_lock(
            host.as_mut_ptr() as *mut c_void,
            host.len(),
            &g,
            1,
            &mut agent_ptr,
        )
    };
    assert_eq!(s, status::SUCCESS);
    // The agent address is the host pointer when lenient, one of the device's own when
    // strict (sim/tests/strict.rs); either way both addresses describe the lock.
    let host_ptr = host.as_mut_ptr() as *mut c_void;
    for p in [host_ptr, agent_ptr] {
        let i = info(p);
        assert_eq!(i.type_, HSA_EXT_POINTER_TYPE_LOCKED);
        assert_eq!(i.agent_base_address, agent_ptr);
        assert_eq!(i.host_base_address, host_ptr);
        assert_eq!(i.size_in_bytes, 8192);
    }
    assert_eq!(hsa_amd_memory_unlock(host_ptr), status::SUCCESS);
    for p in [host_ptr, agent_ptr] {
        assert_eq!(info(p).type_, HSA_EXT_POINTER_TYPE_UNKNOWN);
    }
    assert_eq!(
        hsa_amd_memory_unlock(host.as_mut_ptr() as *mut c_void),
        status::ERROR_INVALID_ARGUMENT
    );
    hsa_amd_memory_pool_free(a);
}

#[test]
fn async_copy_waits_for_dependency_signalled_later() {
    let _h = Hsa::init();
    let dev = alloc(device_pool(), 4096).unwrap();
    let mut src = vec![7u8; 4096];
    let mut dst = vec![0u8; 4096];
    assert_eq!(
        hsa_memory_register(src.as_mut_ptr() as *mut c_void, 4096),
        status::SUCCESS
    );
    assert_eq!(
        hsa_memory_register(dst.as_mut_ptr() as *mut c_void, 4096),
        status::SUCCESS
    );
    let dep = signal(1);
    let h2d = signal(1);
    let d2h = signal(1);
    // SAFETY (copies): registered/allocated ranges of 4096 bytes; dependency arrays of 1.
    let s = unsafe {
        hsa_amd_memory_async_copy(
            dev,
            gpu(),
            src.as_ptr() as *const c_void,
            cpu(),
            4096,
            1,
            &dep,
            h2d,
        )
    };
    assert_eq!(s, status::SUCCESS);
    let s = unsafe {
        hsa_amd_memory_async_copy_on_engine(
            dst.as_mut_ptr() as *mut c_void,
            cpu(),
            dev,
            gpu(),
            4096,
            1,
            &h2d,
            d2h,
            2,
            false,
        )
    };
    assert_eq!(s, status::SUCCESS);
    assert_eq!(
        wait_eq(d2h, 0, 20_000_000),
        1,
        "nothing moves before the dependency"
    );
    assert_eq!(dst[0], 0);
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(10));
        hsa_signal_store_screlease(dep, 0);
    });
    assert_eq!(wait_eq(d2h, 0, 10 * SECOND), 0);
    t.join().unwrap();
    assert!(dst.iter().all(|&b| b == 7));
    hsa_memory_deregister(src.as_mut_ptr() as *mut c_void, 4096);
    hsa_memory_deregister(dst.as_mut_ptr() as *mut c_void, 4096);
    hsa_amd_memory_pool_free(dev);
}

#[test]
fn async_copy_rejects_unregistered_memory_and_bad_engines() {
    let _h = Hsa::init();
    let dev = alloc(device_pool(), 4096).unwrap();
    let src = vec![1u8; 4096];
    let done = signal(1);
    // SAFETY (copies): arguments are checked before any byte moves.
    let s = unsafe {
        hsa_amd_memory_async_copy(
            dev,
            gpu(),
            src.as_ptr() as *const c_void,
            cpu(),
            4096,
            0,
            std::ptr::null(),
            done,
        )
    };
    assert_eq!(
        s,
        status::ERROR_INVALID_ARGUMENT,
        "pageable host memory is not accepted"
    );
    let s = unsafe {
        hsa_amd_memory_async_copy_on_engine(
            dev,
            gpu(),
            dev,
            gpu(),
            4096,
            0,
            std::ptr::null(),
            done,
            1 << 7,
            false,
        )
    };
    assert_eq!(s, status::ERROR_INVALID_ARGUMENT);
    let bad_dep = hsa_signal_t { handle: 8 };
    let s = unsafe { hsa_amd_memory_async_copy(dev, gpu(), dev, gpu(), 16, 1, &bad_dep, done) };
    assert_eq!(s, status::ERROR_INVALID_SIGNAL);
    let mut mask = 0u32;
    let s = unsafe { hsa_amd_memory_copy_engine_status(gpu(), cpu(), &mut mask) };
    // Other tests may have copies queued: both engines busy is OUT_OF_RESOURCES (as on
    // ROCr); otherwise only the two engines can appear.
    if s != status::ERROR_OUT_OF_RESOURCES {
        assert_eq!(s, status::SUCCESS);
        assert!(mask != 0 && mask & !0b11 == 0, "{mask:#b}");
    }
    assert_eq!(hsa_signal_load_relaxed(done), 1);
    hsa_amd_memory_pool_free(dev);
}

#[test]
fn async_copy_rect_moves_a_sub_block() {
    let _h = Hsa::init();
    let src_mem = alloc(host_visible_pool(), 4096).unwrap();
    let dst_mem = alloc(host_visible_pool(), 4096).unwrap();
    // SAFETY: 4096-byte fresh allocations.
    let src = unsafe { std::slice::from_raw_parts_mut(src_mem as *mut u8, 4096) };
    for (i, b) in src.iter_mut().enumerate() {
        *b = (i % 251) as u8;
    }
    let dptr = PitchedPtr {
        base: dst_mem,
        pitch: 64,
        slice: 1024,
    };
    let sptr = PitchedPtr {
        base: src_mem,
        pitch: 128,
        slice: 2048,
    };
    let (doff, soff, range) = (
        Dim3 { x: 0, y: 0, z: 0 },
        Dim3 { x: 8, y: 1, z: 0 },
        Dim3 { x: 16, y: 3, z: 2 },
    );
    let done = signal(1);
    // SAFETY: extents lie within both allocations.
    let s = unsafe {
        hsa_amd_memory_async_copy_rect(
            &dptr,
            &doff,
            &sptr,
            &soff,
            &range,
            gpu(),
            3,
            0,
            std::ptr::null(),
            done,
        )
    };
    assert_eq!(s, status::SUCCESS);
    assert_eq!(wait_eq(done, 0, 10 * SECOND), 0);
    // SAFETY: as above.
    let dst = unsafe { std::slice::from_raw_parts(dst_mem as *const u8, 4096) };
    for z in 0..2 {
        for y in 0..3 {
            for x in 0..16 {
                assert_eq!(
                    dst[z * 1024 + y * 64 + x],
                    src[z * 2048 + (y + 1) * 128 + 8 + x]
                );
            }
        }
    }
    hsa_amd_memory_pool_free(src_mem);
    hsa_amd_memory_pool_free(dst_mem);
}

/// Resident bytes of `[ptr, ptr + len)` (`len` a multiple of the page), as the kernel counts
/// them for the process's RSS.
fn resident_bytes(ptr: *const c_void, len: usize) -> usize {
    let page = 4096;
    let mut residency = vec![0u8; len.div_ceil(page)];
    // SAFETY: `ptr` is page aligned and `[ptr, ptr + len)` mapped (an allocation or a queue's
    // ring); the vector holds a byte per page.
    let r = unsafe { libc::mincore(ptr as *mut c_void, len, residency.as_mut_ptr()) };
    assert_eq!(r, 0, "mincore");
    residency.iter().filter(|&&b| b & 1 != 0).count() * page
}

/// A queue costs what ROCr's does: its ring of `size * 64` bytes, written once (every header
/// INVALID), and the `amd_queue_t`. A kernarg ring of the size hipshim gives each queue
/// (2 x 1,024 slots of 512 and 4,096 bytes, 9 MiB) from the pinned kernarg pool has only its
/// first MiB backed when made (AMD's HIP runtime gives a stream a 1 MiB kernarg pool); the
/// rest costs nothing until touched. Every byte was backed before, 9 MiB per stream.
#[test]
fn a_queue_and_its_kernarg_ring_cost_what_the_amd_stack_does() {
    let _h = Hsa::init();
    let q = queue(1024, None, std::ptr::null_mut());
    // SAFETY: `q` is live.
    let (ring, size) = unsafe { ((*q).base_address, (*q).size as usize) };
    assert_eq!(resident_bytes(ring, size * 64), size * 64);
    let kernarg_ring = 2 * 1024 * (512 + 4096);
    let kernargs = pool_alloc(kernarg_pool(), kernarg_ring).unwrap();
    let backed = resident_bytes(kernargs, kernarg_ring);
    assert!(
        backed <= 1 << 20,
        "a fresh {kernarg_ring}-byte kernarg allocation has {backed} bytes resident"
    );
    // SAFETY: the allocation is `kernarg_ring` bytes, CPU-reachable; a touched page is backed.
    unsafe { (kernargs as *mut u8).add(kernarg_ring - 1).write(1) };
    assert_eq!(resident_bytes(kernargs, kernarg_ring), backed + 4096);
    assert_eq!(hsa_amd_memory_pool_free(kernargs), status::SUCCESS);
    assert_eq!(hsa_queue_destroy(q), status::SUCCESS);
}

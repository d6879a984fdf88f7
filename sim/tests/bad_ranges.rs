//! hsasim at the edges of memory, as ROCr: locking memory that is not (all) mapped fails, and a
//! copy or fill whose range is not memory the agents can reach (never registered, registered
//! but unmapped since, leaving its allocation, overflowing) is refused when it is submitted,
//! instead of faulting on a copy-engine thread or in the caller. Run in both hsasim modes
//! (`HSASIM_THREADS=0` as well).

mod common;
use common::*;
use host_pages::testing::Holed;
use std::ffi::c_void;

/// The tests make one-page holes in the address space; run one at a time so that no other
/// test's mapping lands in a hole before it is checked.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn page() -> usize {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_PAGESIZE) as usize }
}

/// A fresh two-page anonymous mapping whose second page is unmapped again: the first page
/// is usable, anything reaching the second is not.
fn half_mapped() -> *mut u8 {
    Holed::new(2, 1).base as *mut u8
}

fn release(first_page: *mut u8) {
    Holed {
        base: first_page as usize,
        pages: 2,
        hole: 1,
    }
    .release();
}

fn lock(ptr: *mut u8, size: usize) -> hsa_status_t {
    lock_at(ptr, size).0
}

/// Locks for the GPU; the status and the agent address.
fn lock_at(ptr: *mut u8, size: usize) -> (hsa_status_t, *mut u8) {
    let g = gpu();
    let mut agent_ptr = std::ptr::null_mut();
    // SAFETY: one agent; the range is only checked, never touched, when it is unmapped.
    let s = unsafe { hsa_amd_memory_lock(ptr.cast(), size, &g, 1, &mut agent_ptr) };
    (s, agent_ptr.cast())
}

fn lock_to_pool(ptr: *mut u8, size: usize) -> hsa_status_t {
    let g = gpu();
    let mut agent_ptr = std::ptr::null_mut();
    // SAFETY: as for `lock`; the pool is the CPU's fine-grained pool.
    unsafe {
        hsa_amd_memory_lock_to_pool(ptr.cast(), size, &g, 1, pools(cpu())[0], 0, &mut agent_ptr)
    }
}

fn device_alloc(size: usize) -> *mut c_void {
    let mut p = std::ptr::null_mut();
    // SAFETY: out-pointer to a local.
    let s = unsafe { hsa_amd_memory_pool_allocate(pools(gpu())[0], size, 0, &mut p) };
    assert_eq!(s, status::SUCCESS);
    p
}

/// `hsa_amd_memory_async_copy` of `size` bytes host → device, no dependencies.
fn copy_to_device(dev: *mut c_void, host: *const u8, size: usize, done: hsa_signal_t) -> u32 {
    // SAFETY: the call checks both ranges before any byte moves.
    unsafe {
        hsa_amd_memory_async_copy(
            dev,
            gpu(),
            host.cast(),
            cpu(),
            size,
            0,
            std::ptr::null(),
            done,
        )
    }
}

#[test]
fn locking_memory_that_is_not_all_mapped_fails_as_on_rocr() {
    let _serial = serial();
    let _h = Hsa::init();
    let page = page();
    let p = half_mapped();
    // SAFETY (pointer arithmetic): inside or just past the two-page reservation.
    let (second, middle) = unsafe { (p.add(page), p.add(page / 2)) };
    for f in [lock, lock_to_pool] {
        // Partly unmapped, wholly unmapped, far past the mapping: HSA_STATUS_ERROR (ROCr's
        // answer when the driver cannot register the pages).
        assert_eq!(f(p, 2 * page), status::ERROR);
        assert_eq!(f(middle, page), status::ERROR);
        assert_eq!(f(second, page), status::ERROR);
        assert_eq!(f(p, 1 << 46), status::ERROR);
        // A size whose end wraps around is an invalid argument.
        assert_eq!(f(p, usize::MAX), status::ERROR_INVALID_ARGUMENT);
        // Nothing was recorded: there is nothing to unlock.
        assert_eq!(
            hsa_amd_memory_unlock(p.cast()),
            status::ERROR_INVALID_ARGUMENT
        );
        // The mapped page alone locks and unlocks.
        assert_eq!(f(p, page), status::SUCCESS);
        assert_eq!(hsa_amd_memory_unlock(p.cast()), status::SUCCESS);
    }
    release(p);
}

#[test]
fn gpu_access_to_memory_that_is_not_all_mapped_is_refused() {
    use hsasim::api::svm::{hsa_amd_svm_attributes_set, AttributePair};
    const AGENT_ACCESSIBLE: u64 = 0x200;
    let _serial = serial();
    let _h = Hsa::init();
    let page = page();
    let p = half_mapped();
    let set = |ptr: *mut u8, size: usize| {
        let mut access = [AttributePair {
            attribute: AGENT_ACCESSIBLE,
            value: gpu().handle,
        }];
        // SAFETY: one attribute pair; the range is only checked, never touched.
        unsafe { hsa_amd_svm_attributes_set(ptr.cast(), size, access.as_mut_ptr(), 1) }
    };
    assert_eq!(set(p, 2 * page), status::ERROR_INVALID_ARGUMENT);
    // SAFETY (pointer arithmetic): the unmapped second page of the reservation.
    assert_eq!(
        set(unsafe { p.add(page) }, page),
        status::ERROR_INVALID_ARGUMENT
    );
    // Nothing was made device-accessible: a copy from the range is still refused.
    let dev = device_alloc(page);
    let done = signal(1);
    assert_eq!(
        copy_to_device(dev, p, 2 * page, done),
        status::ERROR_INVALID_ARGUMENT
    );
    // The mapped page alone may be given to the GPU.
    assert_eq!(set(p, page), status::SUCCESS);
    release(p);
}

#[test]
fn copies_from_locked_memory_unmapped_since_are_refused_at_submission() {
    let _serial = serial();
    let _h = Hsa::init();
    let page = page();
    let dev = device_alloc(2 * page);
    // SAFETY: a new two-page mapping, both pages mapped for now.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            2 * page,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    assert_ne!(p, libc::MAP_FAILED);
    let p = p.cast::<u8>();
    // SAFETY: the first page is mapped and ours.
    unsafe { std::ptr::write_bytes(p, 0x3c, page) };
    let (locked, agent) = lock_at(p, 2 * page);
    assert_eq!(locked, status::SUCCESS);
    let p_host = p;
    let p = agent;
    // The program unmaps half of what it locked (a bug, but one that must not kill the
    // copy engine's thread).
    // SAFETY: the second page of the mapping above.
    assert_eq!(unsafe { libc::munmap(p_host.add(page).cast(), page) }, 0);
    let done = signal(1);
    assert_eq!(
        copy_to_device(dev, p, 2 * page, done),
        status::ERROR_INVALID_ARGUMENT
    );
    // SAFETY: device memory of two pages.
    let s = unsafe {
        hsa_amd_memory_async_copy(
            p.cast(),
            cpu(),
            dev,
            gpu(),
            page + 1,
            0,
            std::ptr::null(),
            done,
        )
    };
    assert_eq!(s, status::ERROR_INVALID_ARGUMENT);
    assert_eq!(hsa_signal_load_relaxed(done), 1, "nothing was queued");
    // The part still mapped copies as before.
    assert_eq!(copy_to_device(dev, p, page, done), status::SUCCESS);
    assert_eq!(wait_eq(done, 0, 10 * SECOND), 0);
    // SAFETY (pointer arithmetic): within the two-page allocation.
    assert_eq!(
        read_device_byte(unsafe { dev.cast::<u8>().add(page - 1) }.cast()),
        0x3c
    );
    assert_eq!(hsa_amd_memory_unlock(p_host.cast()), status::SUCCESS);
    release(p_host);
    hsa_amd_memory_pool_free(dev);
}

#[test]
fn copies_from_registered_memory_that_is_not_mapped_are_refused() {
    let _serial = serial();
    let _h = Hsa::init();
    let page = page();
    let dev = device_alloc(page);
    let p = half_mapped();
    // SAFETY: the unmapped second page.
    let second = unsafe { p.add(page) };
    // hsa_memory_register is a no-op that succeeds on ROCr; hsasim records the range, so a
    // copy is where the hole must be caught.
    assert_eq!(hsa_memory_register(second.cast(), page), status::SUCCESS);
    let done = signal(1);
    assert_eq!(
        copy_to_device(dev, second, page, done),
        status::ERROR_INVALID_ARGUMENT
    );
    // A fill of it: refused in the caller, which would otherwise fault.
    assert_eq!(
        hsa_amd_memory_fill(second.cast(), 7, page / 4),
        status::ERROR_INVALID_ARGUMENT
    );
    assert_eq!(hsa_signal_load_relaxed(done), 1);
    assert_eq!(hsa_memory_deregister(second.cast(), page), status::SUCCESS);
    release(p);
    hsa_amd_memory_pool_free(dev);
}

#[test]
fn synchronous_copies_of_unmapped_memory_fail() {
    let _serial = serial();
    let _h = Hsa::init();
    let page = page();
    let dev = device_alloc(page);
    let p = half_mapped();
    // SAFETY (pointer arithmetic): inside the two-page reservation.
    let middle = unsafe { p.add(page / 2) };
    // SAFETY (copies): the call checks both ranges before any byte moves.
    unsafe {
        assert_eq!(
            hsa_memory_copy(dev, middle.cast(), page),
            status::ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            hsa_memory_copy(middle.cast(), dev, page),
            status::ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            hsa_memory_copy(dev, p.cast(), usize::MAX),
            status::ERROR_INVALID_ARGUMENT
        );
        // Mapped host memory of any kind is fine, as on ROCr.
        std::ptr::write_bytes(p, 0x5e, page);
        assert_eq!(hsa_memory_copy(dev, p.cast(), page), status::SUCCESS);
        assert_eq!(read_device_byte(dev.byte_add(page - 1)), 0x5e);
    }
    release(p);
    hsa_amd_memory_pool_free(dev);
}

#[test]
fn copies_and_fills_that_leave_their_allocation_are_refused() {
    let _serial = serial();
    let _h = Hsa::init();
    let a = device_alloc(4096);
    let b = device_alloc(4096);
    let done = signal(1);
    // SAFETY (copies and fills): checked before any byte moves.
    unsafe {
        for (dst, src, len) in [
            (a, b, 4097),
            (a.byte_add(1), b, 4096),
            (a, b.byte_add(4095), 2),
        ] {
            assert_eq!(
                hsa_amd_memory_async_copy(dst, gpu(), src, gpu(), len, 0, std::ptr::null(), done),
                status::ERROR_INVALID_ARGUMENT
            );
        }
        for len in [1usize << 63, usize::MAX, 0usize.wrapping_sub(a as usize)] {
            assert_eq!(
                hsa_amd_memory_async_copy(a, gpu(), b, gpu(), len, 0, std::ptr::null(), done),
                status::ERROR_INVALID_ARGUMENT
            );
        }
        assert_eq!(
            hsa_amd_memory_fill(a, 0, 1025),
            status::ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            hsa_amd_memory_fill(a, 0, usize::MAX / 2),
            status::ERROR_INVALID_ARGUMENT
        );
    }
    assert_eq!(hsa_signal_load_relaxed(done), 1);
    hsa_amd_memory_pool_free(a);
    hsa_amd_memory_pool_free(b);
}

#[test]
fn rect_copies_whose_extent_overflows_are_invalid_arguments() {
    let _serial = serial();
    let _h = Hsa::init();
    let a = device_alloc(4096);
    let b = device_alloc(4096);
    let done = signal(1);
    let fine = PitchedPtr {
        base: a,
        pitch: 64,
        slice: 1024,
    };
    let zero = Dim3 { x: 0, y: 0, z: 0 };
    let range = Dim3 { x: 16, y: 2, z: 2 };
    let cases = [
        // An offset whose byte address overflows.
        (
            PitchedPtr {
                base: b,
                pitch: 64,
                slice: usize::MAX / 2,
            },
            Dim3 { x: 0, y: 0, z: 3 },
            range,
        ),
        // Rows past u32 when the offset is added to the range.
        (
            PitchedPtr {
                base: b,
                pitch: 64,
                slice: 1024,
            },
            Dim3 {
                x: 0,
                y: u32::MAX,
                z: 0,
            },
            range,
        ),
        // A pitch so large that the extent overflows.
        (
            PitchedPtr {
                base: b,
                pitch: usize::MAX / 2,
                slice: usize::MAX,
            },
            zero,
            Dim3 { x: 16, y: 4, z: 1 },
        ),
    ];
    for (src, src_offset, range) in cases {
        // SAFETY: every pointer refers to a live local; the extents are checked first.
        let s = unsafe {
            hsa_amd_memory_async_copy_rect(
                &fine,
                &zero,
                &src,
                &src_offset,
                &range,
                gpu(),
                3,
                0,
                std::ptr::null(),
                done,
            )
        };
        assert_eq!(s, status::ERROR_INVALID_ARGUMENT, "{src:?} {src_offset:?}");
    }
    assert_eq!(hsa_signal_load_relaxed(done), 1);
    hsa_amd_memory_pool_free(a);
    hsa_amd_memory_pool_free(b);
}

//! Under failing HSA calls (`HSASIM_FAIL`) hipshim leaks nothing: once the failures stop and
//! the program has synchronised and freed what it made, the HSA queues alive and the pooled
//! signals in use are back where they were before the failures began. Counts, not resident
//! memory: `hsa::queue::live_queues` and the signal pool of device 0.

mod common;

use amdhip64::hsa::queue::live_queues;
use amdhip64::runtime::runtime;
use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicUsize, Ordering};

type HipError = i32;
type Ptr = *mut c_void;

extern "C" {
    fn hipModuleLoadData(module: *mut Ptr, image: *const c_void) -> HipError;
    fn hipModuleGetFunction(f: *mut Ptr, module: Ptr, name: *const u8) -> HipError;
    #[allow(clippy::too_many_arguments)]
    fn hipModuleLaunchKernel(
        f: Ptr,
        gx: u32,
        gy: u32,
        gz: u32,
        bx: u32,
        by: u32,
        bz: u32,
        shared: u32,
        stream: Ptr,
        args: *mut Ptr,
        extra: *mut Ptr,
    ) -> HipError;
    fn hipStreamCreateWithFlags(stream: *mut Ptr, flags: u32) -> HipError;
    fn hipStreamDestroy(stream: Ptr) -> HipError;
    fn hipDeviceSynchronize() -> HipError;
    fn hipMalloc(ptr: *mut Ptr, bytes: usize) -> HipError;
    fn hipFree(ptr: Ptr) -> HipError;
    fn hipMallocAsync(ptr: *mut Ptr, bytes: usize, stream: Ptr) -> HipError;
    fn hipFreeAsync(ptr: Ptr, stream: Ptr) -> HipError;
    fn hipMemsetD32Async(ptr: Ptr, value: i32, count: usize, stream: Ptr) -> HipError;
    fn hipMemcpyAsync(dst: Ptr, src: *const c_void, bytes: usize, kind: u32, s: Ptr) -> HipError;
    fn hipEventCreate(event: *mut Ptr) -> HipError;
    fn hipEventDestroy(event: Ptr) -> HipError;
    fn hipEventRecord(event: Ptr, stream: Ptr) -> HipError;
    fn hipStreamWaitEvent(stream: Ptr, event: Ptr, flags: u32) -> HipError;
}

const SUCCESS: HipError = 0;
const OUT_OF_MEMORY: HipError = 2;
const MEMCPY_DEFAULT: u32 = 4;
const N: usize = 4096;

/// Calls that returned what an injected HSA failure becomes.
static FAILED: AtomicUsize = AtomicUsize::new(0);

/// A call's code: success, or what an injected HSA failure becomes.
fn allowed(what: &str, rc: HipError) -> bool {
    assert!(
        rc == SUCCESS || rc == OUT_OF_MEMORY,
        "{what} returned {rc} under HSASIM_FAIL"
    );
    if rc == OUT_OF_MEMORY {
        FAILED.fetch_add(1, Ordering::Relaxed);
    }
    rc == SUCCESS
}

/// One round of work of every kind that takes HSA resources (queues, signals, memory, copy
/// submissions) on two new streams, then everything made is freed. Failed calls are skipped
/// over, as a program that gives up the operation would.
fn round(fill: Ptr) {
    // SAFETY: out-pointers to locals; every handle used is one a call here made and returned
    // with success; the kernel's arguments live across the launch.
    unsafe {
        let mut streams = [null_mut(); 2];
        let mut made = Vec::new();
        for (i, s) in streams.iter_mut().enumerate() {
            if allowed(
                "hipStreamCreateWithFlags",
                hipStreamCreateWithFlags(s, i as u32),
            ) {
                made.push(*s);
            }
        }
        let [a, b] = streams;
        let (mut x, mut y, mut pooled, mut event) =
            (null_mut(), null_mut(), null_mut(), null_mut());
        let have_x = allowed("hipMalloc", hipMalloc(&mut x, N * 4));
        let have_y = allowed("hipMalloc", hipMalloc(&mut y, N * 4));
        let have_event = allowed("hipEventCreate", hipEventCreate(&mut event));
        if made.len() == 2 && have_x && have_y && have_event {
            let (mut ptr, mut value, mut n) = (x, 3u32, N as u32);
            let mut args = [
                (&mut ptr as *mut Ptr).cast(),
                (&mut value as *mut u32).cast(),
                (&mut n as *mut u32).cast(),
            ];
            let launch = hipModuleLaunchKernel(
                fill,
                (N / 256) as u32,
                1,
                1,
                256,
                1,
                1,
                0,
                a,
                args.as_mut_ptr(),
                null_mut(),
            );
            allowed("hipModuleLaunchKernel", launch);
            allowed("hipEventRecord", hipEventRecord(event, a));
            allowed("hipStreamWaitEvent", hipStreamWaitEvent(b, event, 0));
            allowed(
                "hipMemcpyAsync",
                hipMemcpyAsync(y, x, N * 4, MEMCPY_DEFAULT, b),
            );
            allowed("hipMemsetD32Async", hipMemsetD32Async(x, 5, N, a));
            if allowed("hipMallocAsync", hipMallocAsync(&mut pooled, N * 4, b)) {
                allowed("hipMemsetD32Async", hipMemsetD32Async(pooled, 1, N, b));
                allowed("hipFreeAsync", hipFreeAsync(pooled, b));
            }
        }
        allowed("hipDeviceSynchronize", hipDeviceSynchronize());
        if have_event {
            assert_eq!(hipEventDestroy(event), SUCCESS);
        }
        for p in [(have_x, x), (have_y, y)].iter().filter(|p| p.0) {
            allowed("hipFree", hipFree(p.1));
        }
        for s in made {
            assert_eq!(hipStreamDestroy(s), SUCCESS);
        }
        allowed("hipDeviceSynchronize", hipDeviceSynchronize());
    }
}

/// Live queues and pooled signals in use on device 0.
fn counts() -> (u64, usize) {
    let pool = runtime().expect("hipshim runtime on hsasim").devices[0]
        .streams
        .signals;
    (live_queues(), pool.created() - pool.free_len())
}

#[test]
fn nothing_leaks_once_hsa_failures_stop() {
    // Before the runtime starts (the first HIP call): the first 500 calls at the failure
    // points succeed (start-up and the warm-up rounds), then 1 in 5 fails, 60 in all.
    std::env::set_var("HSASIM_FAIL", "all:p=0.2:after=500:count=60:seed=9");
    let source = common::repo_root().join("tests/api_fuzz/kernels.hip");
    let image =
        common::ctest::build_device_code(&source, "api_fuzz_kernels", &["gfx942"], false, false);
    let image = std::fs::read(image).unwrap();
    let (mut module, mut fill) = (null_mut(), null_mut());
    // SAFETY: a complete code object, a NUL-terminated name and out-pointers to locals.
    unsafe {
        assert_eq!(
            hipModuleLoadData(&mut module, image.as_ptr().cast()),
            SUCCESS
        );
        assert_eq!(
            hipModuleGetFunction(&mut fill, module, c"fuzz_fill".as_ptr().cast()),
            SUCCESS
        );
    }
    // The device's queues and the signal pool reach their working size.
    for _ in 0..20 {
        round(fill);
    }
    assert_eq!(
        FAILED.load(Ordering::Relaxed),
        0,
        "failures during the warm-up"
    );
    let before = counts();
    for _ in 0..300 {
        round(fill);
    }
    let after = counts();
    let failed = FAILED.load(Ordering::Relaxed);
    println!(
        "live queues, pooled signals in use: {before:?} before, {after:?} after {failed} failed calls"
    );
    assert!(failed > 0, "no HSA call failed");
    assert!(
        after.0 <= before.0 && after.1 <= before.1,
        "(live queues, pooled signals in use) went from {before:?} to {after:?}"
    );
}

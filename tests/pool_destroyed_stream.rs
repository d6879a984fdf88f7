//! A stream-ordered free on a blocking stream that is then destroyed: `hipStreamSynchronize(0)`
//! waits for the null stream and every blocking stream, and then tells the pools that their
//! frees are complete. It did not wait for destroyed blocking streams whose work still ran,
//! yet counted their frees as complete: with release threshold 0 the block went back to the
//! HSA runtime while a kernel the free had waited for (through an event, on a non-blocking
//! stream) still had to write it, and the device faulted (`hipErrorIllegalAddress` from the
//! next `hipDeviceSynchronize`, with no faulting kernel in the program: the API fuzzer's
//! finding, seed 0x5eed0003 without faults, hsasim's deterministic mode, step 41,879).
//!
//! The device runs in hsasim's deterministic mode (`HSASIM_THREADS=0`): work runs only while
//! a thread waits, so the kernel is still pending at the synchronisation on every run.

mod common;

// The HIP entry points below are hipshim's, linked into this test.
use amdhip64 as _;

use std::ffi::c_void;
use std::ptr::null_mut;

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
    fn hipStreamSynchronize(stream: Ptr) -> HipError;
    fn hipStreamWaitEvent(stream: Ptr, event: Ptr, flags: u32) -> HipError;
    fn hipDeviceSynchronize() -> HipError;
    fn hipMallocAsync(ptr: *mut Ptr, bytes: usize, stream: Ptr) -> HipError;
    fn hipFreeAsync(ptr: Ptr, stream: Ptr) -> HipError;
    fn hipEventCreate(event: *mut Ptr) -> HipError;
    fn hipEventRecord(event: Ptr, stream: Ptr) -> HipError;
}

const SUCCESS: HipError = 0;
const NON_BLOCKING: u32 = 1;
/// Large enough that the block is memory of its own (the pool hands it back whole).
const N: u32 = 1 << 20;

#[test]
fn null_stream_sync_waits_for_destroyed_blocking_streams_before_their_frees_complete() {
    // Before the runtime starts (the first HIP call).
    std::env::set_var("HSASIM_THREADS", "0");
    let source = common::repo_root().join("tests/api_fuzz/kernels.hip");
    let image =
        common::ctest::build_device_code(&source, "api_fuzz_kernels", &["gfx942"], false, false);
    let image = std::fs::read(image).unwrap();
    let (mut module, mut fill) = (null_mut(), null_mut());
    let (mut writer, mut freer, mut event, mut block) =
        (null_mut(), null_mut(), null_mut(), null_mut());
    // SAFETY: a complete code object, a NUL-terminated name, out-pointers to locals, live
    // handles; the kernel's arguments live across the launch.
    unsafe {
        assert_eq!(
            hipModuleLoadData(&mut module, image.as_ptr().cast()),
            SUCCESS
        );
        assert_eq!(
            hipModuleGetFunction(&mut fill, module, c"fuzz_fill".as_ptr().cast()),
            SUCCESS
        );
        assert_eq!(hipStreamCreateWithFlags(&mut writer, NON_BLOCKING), SUCCESS);
        assert_eq!(hipStreamCreateWithFlags(&mut freer, 0), SUCCESS);
        assert_eq!(hipEventCreate(&mut event), SUCCESS);
        assert_eq!(
            hipMallocAsync(&mut block, N as usize * 4, null_mut()),
            SUCCESS
        );
        assert_eq!(hipStreamSynchronize(null_mut()), SUCCESS);

        // The non-blocking stream writes the block; the blocking stream frees it after that.
        let (mut ptr, mut value, mut n) = (block, 7u32, N);
        let mut args = [
            (&mut ptr as *mut Ptr).cast(),
            (&mut value as *mut u32).cast(),
            (&mut n as *mut u32).cast(),
        ];
        let launched = hipModuleLaunchKernel(
            fill,
            N / 256,
            1,
            1,
            256,
            1,
            1,
            0,
            writer,
            args.as_mut_ptr(),
            null_mut(),
        );
        assert_eq!(launched, SUCCESS);
        assert_eq!(hipEventRecord(event, writer), SUCCESS);
        assert_eq!(hipStreamWaitEvent(freer, event, 0), SUCCESS);
        assert_eq!(hipFreeAsync(block, freer), SUCCESS);
        assert_eq!(hipStreamDestroy(freer), SUCCESS);

        // Covers the destroyed stream's free only once its work (and so the kernel) is done.
        assert_eq!(hipStreamSynchronize(null_mut()), SUCCESS);
        assert_eq!(
            hipDeviceSynchronize(),
            SUCCESS,
            "the kernel wrote a block the pool had given back"
        );
    }
}

//! A fault episode leaves no HSA queue behind once the program has seen it and recovered.
//!
//! Every cross-queue wait a queue records holds the queue it waits for. Two streams that take
//! turns, one waiting for the other's work that then faults, made each new queue hold the
//! queue retired before it, which held the one retired before that: a chain that kept every
//! queue retired since alive (with its ring and kernarg regions), until hsasim's 128 queues
//! per device ran out and every new stream got `hipErrorOutOfMemory` (the API fuzzer's
//! finding after 65,000-99,000 calls). Now the settled waits of every live queue are dropped
//! whenever a queue is retired.
//!
//! Counts, not resident memory: live HSA queues (`hsa::queue::live_queues`) after each
//! episode's recovery. The device runs in hsasim's deterministic mode (`HSASIM_THREADS=0`),
//! so the work a wait names is still pending when the wait is published, on every run.

mod common;

use amdhip64::hsa::queue::live_queues;
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
    fn hipStreamSynchronize(stream: Ptr) -> HipError;
    fn hipDeviceSynchronize() -> HipError;
    fn hipMalloc(ptr: *mut Ptr, bytes: usize) -> HipError;
    fn hipEventCreate(event: *mut Ptr) -> HipError;
    fn hipEventRecord(event: Ptr, stream: Ptr) -> HipError;
    fn hipStreamWaitEvent(stream: Ptr, event: Ptr, flags: u32) -> HipError;
    fn hipLaunchHostFunc(stream: Ptr, f: unsafe extern "C" fn(Ptr), data: Ptr) -> HipError;
}

const SUCCESS: HipError = 0;
const NON_BLOCKING: u32 = 1;
const N: usize = 1024;

unsafe extern "C" fn nothing(_: Ptr) {}

/// Calls `f` until it stops reporting the fault (each stream and the device report it once);
/// anything but success or a fault fails the test.
fn until_clean(what: &str, mut f: impl FnMut() -> HipError) {
    for _ in 0..8 {
        match f() {
            SUCCESS => return,
            // hipErrorIllegalAddress, hipErrorLaunchFailure.
            700 | 719 => continue,
            rc => panic!("{what} returned {rc}"),
        }
    }
    panic!("{what} kept reporting the fault");
}

struct World {
    fill: Ptr,
    trap: Ptr,
    streams: [Ptr; 2],
    event: Ptr,
    buffers: [Ptr; 2],
}

/// What one fault episode's recovery must end with: each stream and then the device report
/// the fault until they have, and work runs again afterwards.
fn recover(world: &World) {
    for s in world.streams {
        // SAFETY: a live stream.
        until_clean("hipStreamSynchronize", || unsafe {
            hipStreamSynchronize(s)
        });
    }
    // SAFETY: no arguments.
    until_clean("hipDeviceSynchronize", || unsafe { hipDeviceSynchronize() });
    for s in world.streams {
        assert_eq!(world.fill(s, 0), SUCCESS);
        // SAFETY: a live stream.
        assert_eq!(unsafe { hipStreamSynchronize(s) }, SUCCESS);
    }
}

impl World {
    fn launch(&self, f: Ptr, stream: Ptr, args: &mut [Ptr]) -> HipError {
        // SAFETY: `args` points at the kernel's arguments, alive across the call.
        unsafe {
            hipModuleLaunchKernel(
                f,
                (N / 256) as u32,
                1,
                1,
                256,
                1,
                1,
                0,
                stream,
                args.as_mut_ptr(),
                null_mut(),
            )
        }
    }

    fn fill(&self, stream: Ptr, b: usize) -> HipError {
        let (mut ptr, mut value, mut n) = (self.buffers[b], 5u32, N as u32);
        let mut args = [
            (&mut ptr as *mut Ptr).cast(),
            (&mut value as *mut u32).cast(),
            (&mut n as *mut u32).cast(),
        ];
        self.launch(self.fill, stream, &mut args)
    }

    /// Stream `source` queues work and records the event; stream `waiter` waits for it on
    /// the device (a cross-queue wait: the streams have queues of their own), then `source`
    /// runs a trapping kernel. The next episode swaps the roles: the queue that waited now
    /// fails, and the new queue of the stream that failed before waits for it.
    fn episode(&self, waiter: usize) {
        let (w, s) = (self.streams[waiter], self.streams[1 - waiter]);
        // SAFETY: live streams and event.
        unsafe {
            assert_eq!(self.fill(s, 1), SUCCESS);
            assert_eq!(hipEventRecord(self.event, s), SUCCESS);
            assert_eq!(hipStreamWaitEvent(w, self.event, 0), SUCCESS);
            assert_eq!(self.fill(w, 0), SUCCESS);
            assert_eq!(self.launch(self.trap, s, &mut []), SUCCESS);
            assert_eq!(hipLaunchHostFunc(s, nothing, null_mut()), SUCCESS);
        }
        recover(self);
    }
}

#[test]
fn fault_episodes_leave_no_queue_behind() {
    // Before the runtime starts (the first HIP call): one queue per stream, so that the
    // streams' waits are cross-queue waits, and a device that runs only for a waiting thread.
    std::env::set_var("HIPSHIM_QUEUE_POLICY", "dedicated");
    std::env::set_var("HSASIM_THREADS", "0");
    let source = common::repo_root().join("tests/api_fuzz/kernels.hip");
    let image =
        common::ctest::build_device_code(&source, "api_fuzz_kernels", &["gfx942"], false, false);
    let image = std::fs::read(image).unwrap();
    let mut module = null_mut();
    let (mut fill, mut trap) = (null_mut(), null_mut());
    let mut streams = [null_mut(); 2];
    let mut event = null_mut();
    let mut buffers = [null_mut(); 2];
    // SAFETY: a complete code object, NUL-terminated names and out-pointers to locals.
    unsafe {
        assert_eq!(
            hipModuleLoadData(&mut module, image.as_ptr().cast()),
            SUCCESS
        );
        assert_eq!(
            hipModuleGetFunction(&mut fill, module, c"fuzz_fill".as_ptr().cast()),
            SUCCESS
        );
        assert_eq!(
            hipModuleGetFunction(&mut trap, module, c"fuzz_trap".as_ptr().cast()),
            SUCCESS
        );
        assert_eq!(hipStreamCreateWithFlags(&mut streams[0], 0), SUCCESS);
        assert_eq!(
            hipStreamCreateWithFlags(&mut streams[1], NON_BLOCKING),
            SUCCESS
        );
        assert_eq!(hipEventCreate(&mut event), SUCCESS);
        for b in &mut buffers {
            assert_eq!(hipMalloc(b, N * 4), SUCCESS);
        }
    }
    let world = World {
        fill,
        trap,
        streams,
        event,
        buffers,
    };
    // Both streams have their queues.
    recover(&world);
    let before = live_queues();
    const EPISODES: usize = 40;
    let mut seen = Vec::new();
    for episode in 0..EPISODES {
        world.episode(episode % 2);
        seen.push(live_queues());
    }
    let after = live_queues();
    println!("live queues: {before} before, {after} after {EPISODES} fault episodes");
    // One retired queue may still be held by the last episode's stream work.
    assert!(
        after <= before + 1,
        "{EPISODES} fault episodes grew the live queues from {before} to {after}; after each: \
         {seen:?}"
    );
}

//! Streams and events give back what they held once destroyed: the device's list of streams
//! shrinks, and the pool of signals (each stream and each event record takes one) destroys the
//! signals it no longer needs, rather than keeping the peak's for the rest of the process.
//! Counts of what is kept, not resident memory: `cargo bench --bench scale` measures that.

use amdhip64::runtime::runtime;
use std::ffi::c_void;

type HipError = i32;

extern "C" {
    fn hipStreamCreate(stream: *mut *mut c_void) -> HipError;
    fn hipStreamDestroy(stream: *mut c_void) -> HipError;
    fn hipEventCreate(event: *mut *mut c_void) -> HipError;
    fn hipEventDestroy(event: *mut c_void) -> HipError;
    fn hipEventRecord(event: *mut c_void, stream: *mut c_void) -> HipError;
    fn hipStreamSynchronize(stream: *mut c_void) -> HipError;
    fn hipDeviceSynchronize() -> HipError;
}

const MANY: usize = 20_000;

/// Pooled signals the pool may keep once nothing is in use (its `KEEP_FREE`), with room for
/// the few the test's own streams hold.
const KEPT: usize = 300;

// One test: both rounds read the same device's pool, so they must not run side by side.
#[test]
fn destroyed_streams_and_events_give_back_their_signals_and_list_entries() {
    let streams = &runtime().expect("hipshim runtime on hsasim").devices[0].streams;
    let pool = streams.signals;

    let mut handles = vec![std::ptr::null_mut(); MANY];
    for h in &mut handles {
        // SAFETY: an out-pointer to a local.
        assert_eq!(unsafe { hipStreamCreate(h) }, 0);
    }
    assert!(pool.created() >= MANY, "each stream holds a signal");
    assert!(streams.listed_streams().0 >= MANY);
    for &h in &handles {
        // SAFETY: a live handle, destroyed once.
        assert_eq!(unsafe { hipStreamDestroy(h) }, 0);
    }
    // SAFETY: no arguments.
    assert_eq!(unsafe { hipDeviceSynchronize() }, 0);
    let (listed, room) = streams.listed_streams();
    assert!(
        listed < 10 && room <= 128,
        "{listed} streams listed, room for {room} kept after {MANY} were destroyed"
    );
    assert!(
        pool.created() <= KEPT,
        "{} pooled signals kept after {MANY} streams were destroyed",
        pool.created()
    );

    let mut stream = std::ptr::null_mut();
    // SAFETY: an out-pointer to a local.
    assert_eq!(unsafe { hipStreamCreate(&mut stream) }, 0);
    let mut events = vec![std::ptr::null_mut(); MANY];
    for e in &mut events {
        // SAFETY: an out-pointer to a local, then the live handles just made.
        unsafe {
            assert_eq!(hipEventCreate(e), 0);
            assert_eq!(hipEventRecord(*e, stream), 0);
        }
    }
    // SAFETY: a live handle.
    assert_eq!(unsafe { hipStreamSynchronize(stream) }, 0);
    assert!(pool.created() >= MANY, "each record holds a signal");
    for &e in &events {
        // SAFETY: a live handle, destroyed once.
        assert_eq!(unsafe { hipEventDestroy(e) }, 0);
    }
    // SAFETY: no arguments.
    assert_eq!(unsafe { hipDeviceSynchronize() }, 0);
    assert!(
        pool.created() <= KEPT,
        "{} pooled signals kept after {MANY} recorded events were destroyed",
        pool.created()
    );
    // SAFETY: a live handle, destroyed once.
    assert_eq!(unsafe { hipStreamDestroy(stream) }, 0);
}

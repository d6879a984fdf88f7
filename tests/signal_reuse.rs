//! Pooled signals go back to the pool once nothing names them: a stream that only records
//! events (no kernels, whose completion would otherwise sweep its markers) must reuse the
//! same few signals however many events it records, not take a new one per record.

use amdhip64::runtime::runtime;
use std::ffi::c_void;

type HipError = i32;

extern "C" {
    fn hipStreamCreate(stream: *mut *mut c_void) -> HipError;
    fn hipStreamDestroy(stream: *mut c_void) -> HipError;
    fn hipEventCreate(event: *mut *mut c_void) -> HipError;
    fn hipEventDestroy(event: *mut c_void) -> HipError;
    fn hipEventRecord(event: *mut c_void, stream: *mut c_void) -> HipError;
    fn hipEventSynchronize(event: *mut c_void) -> HipError;
}

#[test]
fn a_stream_that_only_records_events_reuses_its_signals() {
    let mut stream = std::ptr::null_mut();
    let mut event = std::ptr::null_mut();
    // SAFETY: out-pointers to locals, as HIP's contract asks.
    unsafe {
        assert_eq!(hipStreamCreate(&mut stream), 0);
        assert_eq!(hipEventCreate(&mut event), 0);
        assert_eq!(hipEventRecord(event, stream), 0);
        assert_eq!(hipEventSynchronize(event), 0);
    }
    let pool = runtime().unwrap().devices[0].streams.signals;
    let before = pool.created();
    const RECORDS: usize = 2000;
    for i in 0..RECORDS {
        // SAFETY: live handles from above.
        unsafe {
            assert_eq!(hipEventRecord(event, stream), 0);
            // Now and then wait, so that the markers complete also where the device only runs
            // for a waiting thread (hsasim's deterministic mode).
            if i % 50 == 49 {
                assert_eq!(hipEventSynchronize(event), 0);
            }
        }
    }
    let grown = pool.created() - before;
    assert!(
        grown < 200,
        "{grown} new pooled signals for {RECORDS} event records: completed markers are not reused"
    );
    // SAFETY: live handles, destroyed once.
    unsafe {
        assert_eq!(hipEventDestroy(event), 0);
        assert_eq!(hipStreamDestroy(stream), 0);
    }
}

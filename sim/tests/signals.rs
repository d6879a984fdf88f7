mod common;
use common::*;
use std::ffi::c_void;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

#[test]
fn signal_wait_conditions_hold_and_timeout_returns_current_value() {
    let _h = Hsa::init();
    let s = signal(5);
    assert_eq!(
        hsa_signal_wait_relaxed(s, HSA_SIGNAL_CONDITION_EQ, 5, 0, 0),
        5
    );
    assert_eq!(
        hsa_signal_wait_relaxed(s, HSA_SIGNAL_CONDITION_NE, 4, 0, 0),
        5
    );
    assert_eq!(
        hsa_signal_wait_relaxed(s, HSA_SIGNAL_CONDITION_LT, 6, 0, 0),
        5
    );
    assert_eq!(
        hsa_signal_wait_relaxed(s, HSA_SIGNAL_CONDITION_GTE, 5, 0, 0),
        5
    );
    let t = Instant::now();
    assert_eq!(
        wait_eq(s, 0, 20_000_000),
        5,
        "timed-out wait returns the current value"
    );
    assert!(t.elapsed() >= Duration::from_millis(20));
    assert!(t.elapsed() < Duration::from_secs(2));
    assert_eq!(hsa_signal_destroy(s), status::SUCCESS);
}

#[test]
fn signal_wait_wakes_on_store_from_another_thread() {
    let _h = Hsa::init();
    let s = signal(1);
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(30));
        hsa_signal_subtract_screlease(s, 1);
    });
    assert_eq!(wait_eq(s, 0, 10 * SECOND), 0);
    t.join().unwrap();
    hsa_signal_destroy(s);
}

#[test]
fn signal_rmw_variants_and_value_pointer() {
    let _h = Hsa::init();
    let s = signal(0b1100);
    hsa_signal_and_relaxed(s, 0b0100);
    assert_eq!(hsa_signal_load_scacquire(s), 0b0100);
    hsa_signal_or_acq_rel(s, 0b0001);
    hsa_signal_xor_screlease(s, 0b0101);
    assert_eq!(hsa_signal_load_relaxed(s), 0);
    hsa_signal_add_scacq_screl(s, 7);
    assert_eq!(hsa_signal_exchange_relaxed(s, 3), 7);
    assert_eq!(hsa_signal_cas_scacq_screl(s, 3, 9), 3);
    assert_eq!(
        hsa_signal_cas_relaxed(s, 3, 1),
        9,
        "failed CAS returns the current value"
    );
    let mut p: *mut i64 = std::ptr::null_mut();
    // SAFETY: out-pointer to a local.
    assert_eq!(
        unsafe { hsa_amd_signal_value_pointer(s, &mut p) },
        status::SUCCESS
    );
    // SAFETY: the value pointer stays valid while the signal lives.
    assert_eq!(unsafe { AtomicI64::from_ptr(p) }.load(Ordering::Acquire), 9);
    // The handle is the amd_signal_t itself.
    // SAFETY: handle = address of a live amd_signal_t.
    let abi = unsafe { &*(s.handle as *const amd_signal_t) };
    assert_eq!(abi.kind, AMD_SIGNAL_KIND_USER);
    hsa_signal_destroy(s);
}

#[test]
fn invalid_signal_handle_is_reported_not_dereferenced() {
    let _h = Hsa::init();
    let garbage = hsa_signal_t {
        handle: 0xdead_beef_0000,
    };
    assert_eq!(hsa_signal_destroy(garbage), status::ERROR_INVALID_SIGNAL);
    assert_eq!(hsa_signal_load_relaxed(garbage), 0);
    hsa_signal_store_relaxed(garbage, 1);
    // A wait on garbage returns a value that does not satisfy the condition (like a timeout).
    assert_eq!(wait_eq(garbage, 0, SECOND), 1);
    let s = signal(0);
    assert_eq!(hsa_signal_destroy(s), status::SUCCESS);
    assert_eq!(
        hsa_signal_destroy(s),
        status::ERROR_INVALID_SIGNAL,
        "double destroy"
    );
    let mut out = 0u32;
    // SAFETY: out-pointer to a local.
    let st = unsafe { hsa_amd_profiling_get_async_copy_time(garbage, std::ptr::null_mut()) };
    assert_eq!(st, status::ERROR_INVALID_SIGNAL);
    let _ = &mut out;
}

#[test]
fn wait_any_reports_the_satisfied_signal() {
    let _h = Hsa::init();
    let a = signal(1);
    let b = signal(1);
    let sigs = [a, b];
    let conds = [HSA_SIGNAL_CONDITION_EQ; 2];
    let vals = [0i64, 0];
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(20));
        hsa_signal_store_screlease(b, 0);
    });
    let mut v = -1;
    // SAFETY: arrays of length 2 and a local out-pointer.
    let i = unsafe {
        hsa_amd_signal_wait_any(
            2,
            sigs.as_ptr(),
            conds.as_ptr(),
            vals.as_ptr(),
            10 * SECOND,
            0,
            &mut v,
        )
    };
    t.join().unwrap();
    assert_eq!((i, v), (1, 0));
    // SAFETY: as above.
    let timeout = unsafe {
        hsa_amd_signal_wait_any(
            1,
            sigs.as_ptr(),
            conds.as_ptr(),
            vals.as_ptr(),
            1_000_000,
            0,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(timeout, u32::MAX);
    hsa_signal_destroy(a);
    hsa_signal_destroy(b);
}

unsafe extern "C" fn on_signal(value: i64, arg: *mut c_void) -> bool {
    // SAFETY: `arg` is the test's AtomicI64.
    unsafe { (*(arg as *const AtomicI64)).store(value + 100, Ordering::SeqCst) };
    false
}

#[test]
fn async_handler_runs_when_condition_holds() {
    let _h = Hsa::init();
    let s = signal(1);
    let seen = Box::leak(Box::new(AtomicI64::new(0)));
    let st = hsa_amd_signal_async_handler(
        s,
        HSA_SIGNAL_CONDITION_LT,
        1,
        Some(on_signal),
        seen as *const _ as *mut c_void,
    );
    assert_eq!(st, status::SUCCESS);
    hsa_signal_store_screlease(s, 0);
    let t = Instant::now();
    while seen.load(Ordering::SeqCst) == 0 && t.elapsed() < Duration::from_secs(5) {
        // Deterministic mode needs someone to pump; a load does that.
        hsa_signal_load_relaxed(s);
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(seen.load(Ordering::SeqCst), 100);
}

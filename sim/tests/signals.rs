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

/// The value operations check handles against hsasim's signal slab instead of a map: a
/// destroyed signal, a handle off a slot boundary and one outside the slab all get the
/// neutral value and change nothing, and no signal made while a copy still holds a destroyed
/// one gets its handle (its memory is still the copy's).
#[test]
fn value_operations_reject_stale_and_garbage_handles_and_held_slots_are_not_reused() {
    let _h = Hsa::init();
    let live = signal(5);
    let dead = signal(9);
    assert_eq!(hsa_signal_destroy(dead), status::SUCCESS);
    let off_boundary = hsa_signal_t {
        handle: live.handle + 8,
    };
    let outside = hsa_signal_t { handle: 0x1000 };
    for bad in [dead, off_boundary, outside] {
        assert_eq!(hsa_signal_load_relaxed(bad), 0, "{bad:?}");
        hsa_signal_store_relaxed(bad, 77);
        hsa_signal_add_relaxed(bad, 1);
        assert_eq!(hsa_signal_exchange_relaxed(bad, 3), 0);
        assert_eq!(hsa_signal_cas_relaxed(bad, 0, 3), 0);
    }
    assert_eq!(
        hsa_signal_load_relaxed(live),
        5,
        "a bad handle touched a live signal"
    );

    // A copy gated on `gate` holds its completion signal `done`; the client destroys `done`.
    let device = pools(gpu())[0];
    let src = pool_alloc(device, 4096).unwrap();
    let dst = pool_alloc(device, 4096).unwrap();
    let gate = signal(1);
    let done = signal(1);
    // SAFETY: live 4 KiB allocations and live signals.
    let s = unsafe { hsa_amd_memory_async_copy(dst, gpu(), src, gpu(), 4096, 1, &gate, done) };
    assert_eq!(s, status::SUCCESS);
    assert_eq!(hsa_signal_destroy(done), status::SUCCESS);
    let made: Vec<hsa_signal_t> = (0..64).map(|_| signal(0)).collect();
    assert!(
        made.iter().all(|s| s.handle != done.handle),
        "a held signal's slot was handed out again"
    );
    hsa_signal_store_screlease(gate, 0);
    for s in made {
        hsa_signal_destroy(s);
    }
    hsa_signal_destroy(gate);
    hsa_signal_destroy(live);
    // The copy has run (the engine is idle again) once a later copy completes.
    let after = signal(1);
    // SAFETY: as above.
    let s = unsafe {
        hsa_amd_memory_async_copy(dst, gpu(), src, gpu(), 4096, 0, std::ptr::null(), after)
    };
    assert_eq!(s, status::SUCCESS);
    assert_eq!(wait_eq(after, 0, 10 * SECOND), 0);
    hsa_signal_destroy(after);
    hsa_amd_memory_pool_free(src);
    hsa_amd_memory_pool_free(dst);
}

/// Queue-index operations check the `hsa_queue_t*` against hsasim's queue blocks: a destroyed
/// queue and garbage pointers get 0 and change nothing.
#[test]
fn index_operations_reject_destroyed_and_garbage_queues() {
    let _h = Hsa::init();
    let q = queue(64, None, std::ptr::null_mut());
    assert_eq!(hsa_queue_add_write_index_relaxed(q, 2), 0);
    assert_eq!(hsa_queue_load_write_index_relaxed(q), 2);
    let off_boundary = (q as usize + 64) as *mut hsa_queue_t;
    let outside = 0x2000usize as *mut hsa_queue_t;
    for bad in [off_boundary, outside] {
        assert_eq!(hsa_queue_add_write_index_relaxed(bad, 5), 0);
        assert_eq!(hsa_queue_load_read_index_relaxed(bad), 0);
    }
    assert_eq!(
        hsa_queue_load_write_index_relaxed(q),
        2,
        "a bad pointer touched a live queue"
    );
    // Let the processor past the two reserved slots before the queue goes.
    hsa_queue_store_write_index_relaxed(q, 0);
    assert_eq!(hsa_queue_destroy(q), status::SUCCESS);
    assert_eq!(hsa_queue_add_write_index_relaxed(q, 5), 0);
    assert_eq!(hsa_queue_load_write_index_relaxed(q), 0);
}

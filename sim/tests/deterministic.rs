//! `HSASIM_THREADS=0`: no processor or engine threads; waiting threads run the work.
mod common;
use common::*;
use std::ffi::c_void;

/// The tests of this file one at a time: with no engine threads, a wait in one test runs
/// the pending work of every queue in the process, the other test's included, which would
/// complete a packet that test expects to see pending (seen once in CI under load).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The runtime and this test's turn; the runtime shuts down before the turn passes on (a
/// tuple drops its first field first).
fn init() -> (Hsa, std::sync::MutexGuard<'static, ()>) {
    let turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    std::env::set_var("HSASIM_THREADS", "0");
    (Hsa::init(), turn)
}

#[test]
fn deterministic_mode_runs_barriers_and_copies_on_the_waiting_thread() {
    let _h = init();
    let q = queue(64, None, std::ptr::null_mut());
    let gate = signal(1);
    let done = signal(2);
    // SAFETY (publish): live queue, 64-byte packets.
    unsafe {
        publish(q, barrier(HSA_PACKET_TYPE_BARRIER_AND, &[gate], done));
        publish(q, barrier(HSA_PACKET_TYPE_BARRIER_OR, &[gate], done));
    }
    assert_eq!(wait_eq(done, 0, 5_000_000), 2, "blocked on the gate");
    hsa_signal_store_relaxed(gate, 0);
    assert_eq!(wait_eq(done, 0, 5 * SECOND), 0);

    let mut src = vec![3u8; 256];
    let mut dst = vec![0u8; 256];
    hsa_memory_register(src.as_mut_ptr() as *mut c_void, 256);
    hsa_memory_register(dst.as_mut_ptr() as *mut c_void, 256);
    let copied = signal(1);
    // SAFETY: registered 256-byte ranges.
    let s = unsafe {
        hsa_amd_memory_async_copy(
            dst.as_mut_ptr() as *mut c_void,
            cpu(),
            src.as_ptr() as *const c_void,
            cpu(),
            256,
            0,
            std::ptr::null(),
            copied,
        )
    };
    assert_eq!(s, status::SUCCESS);
    assert_eq!(dst[0], 0, "nothing runs until someone waits");
    assert_eq!(wait_eq(copied, 0, 5 * SECOND), 0);
    assert!(dst.iter().all(|&b| b == 3));
    hsa_queue_destroy(q);
}

/// [`init`] with hsasim's clock set to `time` (`HSASIM_TIME`) for this runtime only.
fn init_on_clock(time: &str) -> (Hsa, std::sync::MutexGuard<'static, ()>) {
    let turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let before = std::env::var("HSASIM_TIME").ok();
    std::env::set_var("HSASIM_THREADS", "0");
    std::env::set_var("HSASIM_TIME", time);
    let hsa = Hsa::init();
    match before {
        Some(v) => std::env::set_var("HSASIM_TIME", v),
        None => std::env::remove_var("HSASIM_TIME"),
    }
    (hsa, turn)
}

#[test]
fn deterministic_single_poll_only_observes_and_a_polling_loop_makes_progress() {
    single_poll_then_polling_loop(init());
}

/// The same on the virtual clock: a poll of work not yet run counts towards the loop that
/// runs it, and the loop then moves the host's clock to the write (a loop that never ran
/// the work polled for ever before).
#[test]
fn on_the_virtual_clock_a_polling_loop_makes_progress_too() {
    single_poll_then_polling_loop(init_on_clock("virtual"));
}

fn single_poll_then_polling_loop(_h: (Hsa, std::sync::MutexGuard<'static, ()>)) {
    let q = queue(64, None, std::ptr::null_mut());
    let done = signal(1);
    // SAFETY (publish): live queue, 64-byte packet.
    unsafe { publish(q, barrier(HSA_PACKET_TYPE_BARRIER_AND, &[], done)) };
    // One query right after the publish sees the packet pending (hipStreamQuery semantics).
    assert_eq!(hsa_signal_load_relaxed(done), 1);
    // A loop of polls is a wait: within POLLS_PER_PUMP polls the barrier has run.
    let polls = (0..1000)
        .position(|_| hsa_signal_load_relaxed(done) == 0)
        .expect("a polling loop never saw the barrier complete");
    assert!(
        polls < hsasim::system::POLLS_PER_PUMP as usize,
        "{polls} polls"
    );
    hsa_queue_destroy(q);
    hsa_signal_destroy(done);
}

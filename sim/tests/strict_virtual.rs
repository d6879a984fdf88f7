//! Strict mode on the virtual clock (`HSASIM_STRICT=1`, `HSASIM_TIME=virtual`). Under virtual
//! time a packet processor takes only packets a doorbell submitted, so a doorbell rung back
//! to an index already done submits nothing; the violation must be reported all the same.
mod common;
use common::*;

/// The runtime reads its configuration at the first `hsa_init` of the process: this binary
/// holds only tests that want both settings.
fn strict_virtual_hsa() -> Hsa {
    std::env::set_var("HSASIM_STRICT", "1");
    std::env::set_var("HSASIM_TIME", "virtual");
    // Threaded: in deterministic mode under virtual time the device runs the time line's
    // entries, and a doorbell that submitted nothing made none to run.
    std::env::remove_var("HSASIM_THREADS");
    Hsa::init()
}

#[test]
fn a_doorbell_that_goes_back_fails_a_single_producer_queue_on_the_virtual_clock() {
    let _h = strict_virtual_hsa();
    let done = signal(1);
    let mut q = std::ptr::null_mut();
    // SAFETY: out-pointer to a local; the callback is a plain function.
    let s = unsafe {
        hsa_queue_create(
            gpu(),
            64,
            HSA_QUEUE_TYPE_SINGLE,
            Some(record_queue_error),
            std::ptr::null_mut(),
            0,
            0,
            &mut q,
        )
    };
    assert_eq!(s, status::SUCCESS);
    for _ in 0..2 {
        hsa_signal_store_relaxed(done, 1);
        // SAFETY: a live queue and a 64-byte packet.
        unsafe { publish(q, barrier(HSA_PACKET_TYPE_BARRIER_AND, &[], done)) };
        assert_eq!(wait_eq(done, 0, 10 * SECOND), 0);
    }
    // SAFETY: a live queue.
    hsa_signal_store_screlease(unsafe { (*q).doorbell_signal }, 0);
    assert_eq!(queue_error(q), status::ERROR_INVALID_PACKET_FORMAT);
    let message = hsasim::testing::queue_failure(q as u64).expect("a logged failure");
    assert!(
        message.contains("strict rule `doorbell-monotonic`"),
        "{message}"
    );
    assert_eq!(hsa_queue_destroy(q), status::SUCCESS);
    hsa_signal_destroy(done);
}

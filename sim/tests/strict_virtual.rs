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
    ring_a_doorbell_back(HSA_QUEUE_TYPE_SINGLE);
}

//! Hooks for hsasim's own tests, not part of the HSA API: they make a service thread panic
//! inside chosen work, to show that an internal failure becomes a queue or copy error and
//! the process goes on. Each hook fires once, for the work whose completion signal it names.

use hsa_abi::hsa_signal_t;
use std::sync::atomic::{AtomicU64, Ordering};

static DISPATCH: AtomicU64 = AtomicU64::new(0);
static COPY: AtomicU64 = AtomicU64::new(0);

/// The next kernel dispatch whose completion signal is `signal` panics in the packet
/// processor before it runs.
pub fn panic_in_dispatch(signal: hsa_signal_t) {
    DISPATCH.store(signal.handle, Ordering::SeqCst);
}

/// The next copy whose completion signal is `signal` panics in its copy engine before it
/// moves anything.
pub fn panic_in_copy(signal: hsa_signal_t) {
    COPY.store(signal.handle, Ordering::SeqCst);
}

fn fire(slot: &AtomicU64, completion: u64, what: &str) {
    if completion != 0
        && slot.load(Ordering::Relaxed) == completion
        && slot
            .compare_exchange(completion, 0, Ordering::SeqCst, Ordering::Relaxed)
            .is_ok()
    {
        panic!("injected panic in the {what} (hsasim::testing)");
    }
}

pub(crate) fn dispatch_hook(completion: u64) {
    fire(&DISPATCH, completion, "packet processor");
}

pub(crate) fn copy_hook(completion: u64) {
    fire(&COPY, completion, "copy engine");
}

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

static QUEUE_FAILURES: parking_lot::Mutex<Vec<(u64, String)>> = parking_lot::Mutex::new(Vec::new());

pub(crate) fn note_queue_failure(queue: u64, message: &str) {
    let mut failures = QUEUE_FAILURES.lock();
    failures.retain(|(q, _)| *q != queue);
    failures.push((queue, message.to_owned()));
}

/// The message the queue at `queue` (its `hsa_queue_t*`) last failed with, as logged.
pub fn queue_failure(queue: u64) -> Option<String> {
    QUEUE_FAILURES
        .lock()
        .iter()
        .find(|(q, _)| *q == queue)
        .map(|(_, message)| message.clone())
}

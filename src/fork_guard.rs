//! HIP in a child of `fork()`.
//!
//! A forked child inherits the parent's memory but only the thread that called `fork`: the HSA
//! runtime's packet processors, copy engines and signal-handler threads, and hipshim's own
//! callback thread, are gone, and any lock one of them held stays locked forever. Every wait
//! on the device would hang. CUDA answers every call in such a child with an initialization
//! error; hipshim does the same (`hipErrorNotInitialized`, code 3, which is also what
//! `hipErrorInitializationError` means) from the first call on, once the runtime had been
//! initialised before the fork, except for the queries in [`answered_in_child`]. A child that
//! `exec`s starts afresh, and a process that forks before its first HIP call may use HIP in
//! the child normally.
//!
//! Asked once per call, in the API shells (`api::call`, `api::call_void`), before anything that
//! could take a lock; every path into the runtime starts there. This module is a leaf: the
//! shells and the trace recorder's exit handler ask it, and it asks nothing else.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

static IN_CHILD: AtomicBool = AtomicBool::new(false);
static REPORTED: AtomicBool = AtomicBool::new(false);
static WATCHING: Once = Once::new();

/// True in a process forked after the runtime was initialised: HIP cannot work here.
#[inline(always)]
pub fn in_forked_child() -> bool {
    IN_CHILD.load(Ordering::Relaxed)
}

/// Whether `api` is answered in a forked child: the calls whose answer the runtime fixed when
/// it started (devices, their properties and attributes, the links and access between them,
/// versions) and that read it from memory with no device thread, HSA call or lock; the current
/// device is a thread-local of the forking thread, which the child is. AMD's runtime answers
/// these there too (hip-tests' `hipP2pLinkTypeAndHopFunc` forks children that ask them). Not
/// here: flags and limits (behind the device's lock), memory info (asks the HSA runtime), and
/// everything that runs on the device. Error names and the last error go through shells that
/// never refuse (`call_plain`).
pub fn answered_in_child(api: &str) -> bool {
    matches!(
        api,
        "hipInit"
            | "hipGetDeviceCount"
            | "hipGetDevice"
            | "hipSetDevice"
            | "hipDeviceGet"
            | "hipGetDeviceProperties"
            | "hipGetDevicePropertiesR0000"
            | "hipGetDevicePropertiesR0600"
            | "hipDeviceGetAttribute"
            | "hipDeviceGetName"
            | "hipDeviceGetPCIBusId"
            | "hipDeviceGetByPCIBusId"
            | "hipDeviceTotalMem"
            | "hipDeviceComputeCapability"
            | "hipDeviceGetUuid"
            | "hipChooseDevice"
            | "hipChooseDeviceR0000"
            | "hipChooseDeviceR0600"
            | "hipRuntimeGetVersion"
            | "hipDriverGetVersion"
            | "hipDeviceCanAccessPeer"
            | "hipDeviceGetP2PAttribute"
            | "hipExtGetLinkTypeAndHopCount"
    )
}

/// Called once the runtime is initialised: a child forked from now on must not use it.
pub fn watch() {
    WATCHING.call_once(|| {
        // SAFETY: registers a plain function with no preconditions as the child handler; the
        // C library calls it in the child right after fork.
        let status = unsafe { libc::pthread_atfork(None, None, Some(after_fork_in_child)) };
        if status != 0 {
            tracing::warn!(
                status,
                "pthread_atfork failed: HIP calls in a forked child will not be refused"
            );
        }
    });
}

extern "C" fn after_fork_in_child() {
    // Only async-signal-safe work here: atomic stores.
    IN_CHILD.store(true, Ordering::Relaxed);
    crate::observed::set(crate::observed::Watcher::ForkedChild, true);
}

/// Says once, on stderr, why a HIP call in a forked child failed. Writes with `write(2)`
/// directly: the logger's and Rust's stderr locks may have been held by a parent thread at
/// the moment of the fork and would never be released in the child.
pub fn report_once(api: &str) {
    if REPORTED.swap(true, Ordering::Relaxed) {
        return;
    }
    let message = format!(
        "hipshim: {api} called in a child of fork() after HIP was initialised in the parent: \
         returning hipErrorNotInitialized (the device's threads do not exist in the child; \
         exec a new program, or initialise HIP only after fork)\n"
    );
    // SAFETY: writes an initialised buffer of the given length to fd 2.
    let _ = unsafe { libc::write(2, message.as_ptr().cast(), message.len()) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_that_never_forked_is_not_a_child() {
        watch();
        watch();
        assert!(!in_forked_child());
    }
}

//! Device-side `assert`: which kernel faults are failed assertions.
//!
//! The device's `__assert_fail` (hipshim's header or AMD's) prints "FILE:LINE: FUNCTION:
//! Device-side assertion `EXPR' failed." to stderr through the hostcall service
//! (`devices/hostcall.rs`), then traps. The service remembers such a message ([`note_assertion`]);
//! the next kernel fault that is not a memory fault is matched to it and reported as
//! `hipErrorAssert` instead of `hipErrorLaunchFailure` ([`fault_error`]), by every stream that
//! lost work to that fault (they name the same failed queue). A wave prints before it traps
//! and waits for the print, so the message is always noted before its fault is reported.

use crate::error::HipError;
use crate::hsa::queue::Doom;
use parking_lot::Mutex;

/// The text of a device assertion printed and not yet matched to a fault, and the queues
/// whose faults were matched (every stream that lost work to such a fault reports it as an
/// assertion).
static ASSERTIONS: Mutex<Assertions> = Mutex::new(Assertions {
    unmatched: None,
    faulted_queues: Vec::new(),
});

struct Assertions {
    unmatched: Option<(usize, String)>,
    faulted_queues: Vec<u64>,
}

/// A device assertion's message was printed on `device` (its text, for the log).
pub fn note_assertion(device: usize, text: &[u8]) {
    let text = String::from_utf8_lossy(text).trim_end().to_owned();
    ASSERTIONS.lock().unmatched = Some((device, text));
}

/// The HIP error a kernel fault is reported with: `hipErrorAssert` for a trap that follows a
/// device assertion's message, otherwise what [`HipError::from`] makes of the fault.
pub fn fault_error(doom: Doom) -> HipError {
    let error = HipError::from(doom.error());
    if error != HipError::LAUNCH_FAILURE {
        return error;
    }
    let mut assertions = ASSERTIONS.lock();
    if assertions.faulted_queues.contains(&doom.origin) {
        return HipError::ASSERT;
    }
    let Some((device, text)) = assertions.unmatched.take() else {
        return error;
    };
    assertions.faulted_queues.push(doom.origin);
    tracing::error!(
        device,
        queue = doom.origin,
        "a kernel failed a device-side assertion: {text}"
    );
    HipError::ASSERT
}

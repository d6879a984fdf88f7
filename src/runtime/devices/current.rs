//! The device current on the calling thread (`hipSetDevice`), kept apart from the runtime
//! that owns the devices so that the code below it can ask without reaching up: the C shells
//! hand the devices down, and this says which of them the thread has selected.

use crate::error::HipResult;
use crate::runtime::devices::device::{self, Device};
use std::cell::Cell;

thread_local! {
    /// The device ordinal selected by `hipSetDevice` on this thread.
    static CURRENT_DEVICE: Cell<usize> = const { Cell::new(0) };
}

/// The ordinal this thread selected (0 until it selects one); not checked against the devices.
pub fn index() -> usize {
    CURRENT_DEVICE.with(Cell::get)
}

/// Selects `index`, which the caller has checked names a device.
pub fn select(index: usize) {
    CURRENT_DEVICE.with(|c| c.set(index));
}

/// The device of `devices` current on this thread.
#[inline]
pub fn device(devices: &[Device]) -> HipResult<&Device> {
    // With one device it is current on every thread (`hipSetDevice` accepts no other), and
    // the launch path reads no thread-local for it.
    if let [only] = devices {
        return Ok(only);
    }
    device::nth(devices, index())
}

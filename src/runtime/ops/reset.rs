//! `hipDeviceReset`. A device's reset spans its streams and its memory, both of which build
//! on `Device`: it is written here, above all three, so that none of them needs the others in
//! a circle.

use crate::error::HipResult;
use crate::runtime::devices::device::{Device, DeviceSettings};
use crate::runtime::mem::{memory, mempool};
use crate::runtime::stream;

impl Device {
    /// `hipDeviceReset`: drains the device's work, destroys the streams the program created
    /// on it, frees its allocations and forgets the flags and limits the application set.
    /// Faults are part of the state it resets: those no call has reported yet are forgotten
    /// (logged), as CUDA's reset clears its errors.
    pub fn reset(&self) -> HipResult {
        if let Err(error) = self.synchronize() {
            tracing::warn!(
                device = self.index,
                ?error,
                "hipDeviceReset: a fault found while draining the device is discarded"
            );
        }
        stream::destroy_created_streams(self);
        self.streams.discard_reports();
        mempool::reset_device(self);
        memory::free_device_allocations(self);
        *self.settings.lock() = DeviceSettings::default();
        Ok(())
    }
}

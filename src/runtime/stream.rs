//! Streams: in-order sequences of packets on the queue the policy assigned.
//!
//! Completion is tracked without a signal per packet: `pending` counts the stream's
//! outstanding packets (incremented on submit, decremented by the packet processor as the
//! packet's completion signal), so synchronising is waiting for it to read 0.

use super::device::Device;
use crate::config::Config;
use crate::error::{HipError, HipResult};
use crate::hsa::queue::Queue;
use crate::hsa::signal::Signal;
use crate::hsa::{HsaApi, HsaError};
use crate::policy::QueuePolicy;
use hsa_abi::*;
use parking_lot::Mutex;
use std::sync::Arc;

/// The streams of one device and the policy that assigns them queues.
pub struct DeviceStreams {
    pub policy: QueuePolicy,
    pub null_stream: Stream,
}

impl DeviceStreams {
    pub fn new(api: &'static HsaApi, config: &Config) -> Result<DeviceStreams, HsaError> {
        Ok(DeviceStreams {
            policy: QueuePolicy::new(config),
            null_stream: Stream::new(api)?,
        })
    }

    /// Waits for the work of every stream of `device`.
    pub fn synchronize_all(&self, device: &Device) -> HipResult {
        self.null_stream.synchronize(device)
    }
}

pub struct Stream {
    /// The one lock a launch takes: it orders this stream's packets on its queue.
    queue: Mutex<Option<Arc<Queue>>>,
    pending: Signal,
}

impl Stream {
    pub fn new(api: &'static HsaApi) -> Result<Stream, HsaError> {
        Ok(Stream {
            queue: Mutex::new(None),
            pending: Signal::new(api, 0)?,
        })
    }

    /// Publishes one packet built by `fill` from its kernarg slot and completion signal.
    pub fn submit(
        &self,
        device: &Device,
        fill: impl FnOnce(&mut [u8], hsa_signal_t) -> AqlPacket,
    ) -> HipResult {
        let mut slot = self.queue.lock();
        let queue = match slot.as_ref() {
            Some(queue) => queue,
            None => slot.insert(device.streams.policy.queue_for(device)?),
        };
        self.pending.add(1);
        let completion = self.pending.handle;
        queue.submit(|_, kernarg| fill(kernarg, completion));
        Ok(())
    }

    /// Waits until every packet submitted so far has completed. A queue error (a kernel
    /// fault) is returned here, once; the failed queue is retired so later work gets a new one.
    pub fn synchronize(&self, device: &Device) -> HipResult {
        let Some(queue) = self.queue.lock().clone() else {
            return Ok(());
        };
        let result = self
            .pending
            .wait_zero(device.timestamp_hz, || queue.error());
        match result {
            Ok(()) => Ok(()),
            Err(status) => {
                let mut slot = self.queue.lock();
                if slot.as_ref().is_some_and(|q| Arc::ptr_eq(q, &queue)) {
                    *slot = None;
                }
                device.streams.policy.retire(&queue);
                self.pending.store(0);
                let error = match status {
                    status::AMD_ERROR_MEMORY_APERTURE_VIOLATION
                    | status::AMD_ERROR_MEMORY_FAULT => HipError::ILLEGAL_ADDRESS,
                    _ => HipError::LAUNCH_FAILURE,
                };
                tracing::error!(
                    "a kernel failed on device {} (queue {}): {}; reported as {error:?}",
                    device.index,
                    queue.id,
                    device.api.describe(status)
                );
                Err(error)
            }
        }
    }
}

/// The stream a `hipStream_t` names on `device`. Only the null stream exists so far.
pub fn resolve(handle: *mut std::ffi::c_void, device: &Device) -> HipResult<&Stream> {
    if handle.is_null() {
        Ok(&device.streams.null_stream)
    } else {
        tracing::warn!(stream = format_args!("{handle:p}"), "unknown stream handle");
        Err(HipError::INVALID_HANDLE)
    }
}

//! Which HSA queue serves a stream. The policy is the experiment this project exists for:
//! it is consulted when a stream first needs a queue and when a failed queue is retired.
//!
//! Only `single` (every stream of a device shares one queue) exists so far; the `dedicated`,
//! `pool:N` and priority/CU-mask policies plug in here.

use crate::config::Config;
use crate::error::HipResult;
use crate::hsa::queue::Queue;
use crate::runtime::device::{runtime_error, Device};
use parking_lot::Mutex;
use std::sync::Arc;

pub struct QueuePolicy {
    queue_size: u32,
    /// The device's shared queue, created on first use.
    shared: Mutex<Option<Arc<Queue>>>,
}

impl QueuePolicy {
    pub fn new(config: &Config) -> QueuePolicy {
        QueuePolicy {
            queue_size: config.queue_size,
            shared: Mutex::new(None),
        }
    }

    /// The queue a stream of `device` should use.
    pub fn queue_for(&self, device: &Device) -> HipResult<Arc<Queue>> {
        let mut shared = self.shared.lock();
        if let Some(queue) = shared.as_ref() {
            return Ok(queue.clone());
        }
        let queue = Arc::new(
            Queue::create(
                device.api,
                device.agent,
                self.queue_size,
                device.kernarg_pool,
            )
            .map_err(runtime_error)?,
        );
        tracing::info!(
            device = device.index,
            queue = queue.id,
            policy = "single",
            "stream assigned to queue"
        );
        *shared = Some(queue.clone());
        Ok(queue)
    }

    /// Stops handing out `queue` (it failed); streams that use it get a new one next time.
    pub fn retire(&self, queue: &Arc<Queue>) {
        let mut shared = self.shared.lock();
        if shared.as_ref().is_some_and(|q| Arc::ptr_eq(q, queue)) {
            *shared = None;
        }
    }
}

//! HSA signals owned by the shim, and the one place that waits on them.

use super::{check, HsaApi, HsaError};
use hsa_abi::*;
use std::time::{Duration, Instant};

/// How long a wait spins (lowest latency for short kernels) before it blocks in the runtime.
const SPIN: Duration = Duration::from_micros(50);
/// A blocked wait wakes up this often to check whether the queue reported an error.
const BLOCKED_SLICE: Duration = Duration::from_millis(10);

pub struct Signal {
    api: &'static HsaApi,
    pub handle: hsa_signal_t,
}

// SAFETY: an HSA signal is a process-wide object designed for concurrent use from any thread.
unsafe impl Send for Signal {}
// SAFETY: as above; all operations go through the thread-safe HSA API.
unsafe impl Sync for Signal {}

impl Signal {
    pub fn new(api: &'static HsaApi, initial: i64) -> Result<Signal, HsaError> {
        let mut handle = hsa_signal_t::default();
        // SAFETY: no consumer list (0, null) means any agent may wait; `handle` is valid.
        let status = unsafe { (api.hsa_signal_create)(initial, 0, std::ptr::null(), &mut handle) };
        check("hsa_signal_create", status)?;
        Ok(Signal { api, handle })
    }

    pub fn load(&self) -> i64 {
        // SAFETY: the handle is live for as long as `self`.
        unsafe { (self.api.hsa_signal_load_relaxed)(self.handle) }
    }

    pub fn add(&self, delta: i64) {
        // SAFETY: the handle is live for as long as `self`.
        unsafe { (self.api.hsa_signal_add_relaxed)(self.handle, delta) }
    }

    pub fn store(&self, value: i64) {
        // SAFETY: the handle is live for as long as `self`.
        unsafe { (self.api.hsa_signal_store_screlease)(self.handle, value) }
    }

    /// Waits until the signal reads 0. Spins for a short while, then blocks in the runtime in
    /// slices, asking `failed` between slices whether the work it waits for can no longer
    /// complete (a queue error); if so returns that error instead of waiting forever.
    pub fn wait_zero<E>(
        &self,
        timestamp_hz: u64,
        mut failed: impl FnMut() -> Option<E>,
    ) -> Result<(), E> {
        let started = Instant::now();
        let (spin_ticks, slice_ticks) = (
            ticks(SPIN, timestamp_hz),
            ticks(BLOCKED_SLICE, timestamp_hz),
        );
        let mut blocked = false;
        loop {
            let (state, timeout) = if blocked {
                (HSA_WAIT_STATE_BLOCKED, slice_ticks)
            } else {
                (HSA_WAIT_STATE_ACTIVE, spin_ticks)
            };
            // SAFETY: the handle is live; EQ 0 with a finite timeout returns the current value.
            let value = unsafe {
                (self.api.hsa_signal_wait_scacquire)(
                    self.handle,
                    HSA_SIGNAL_CONDITION_EQ,
                    0,
                    timeout,
                    state,
                )
            };
            if value == 0 {
                tracing::trace!(
                    signal = self.handle.handle,
                    waited_us = started.elapsed().as_micros() as u64,
                    blocked,
                    "signal wait done"
                );
                return Ok(());
            }
            if let Some(error) = failed() {
                return Err(error);
            }
            blocked = true;
        }
    }
}

fn ticks(duration: Duration, hz: u64) -> u64 {
    (duration.as_nanos() as u64).saturating_mul(hz) / 1_000_000_000
}

impl Drop for Signal {
    fn drop(&mut self) {
        // SAFETY: the handle was created by this wrapper and is destroyed exactly once.
        let status = unsafe { (self.api.hsa_signal_destroy)(self.handle) };
        if status != status::SUCCESS {
            tracing::warn!(status, "hsa_signal_destroy failed");
        }
    }
}

//! The handlers registered with `hsa_amd_signal_async_handler`, and the one rule for running
//! them from several threads.
//!
//! A handler runs outside the list's lock (it may register another handler), so while it
//! runs it is out of the list, and another thread that looks for ready handlers at that
//! moment cannot run it. That thread may be the only one that will ever look: in
//! deterministic mode a wave's interrupt runs the ready handlers on the wave's own thread,
//! once, and then the wave spins on the answer (the device library's hostcall). So a look
//! that finds a handler out is remembered, and the thread running the handlers looks again
//! when it has put them back: a condition that came true while its handler ran is never
//! left unserved.

use crate::signal::{condition_holds, Signal};
use hsa_abi::*;
use parking_lot::Mutex;
use std::ffi::c_void;
use std::sync::atomic::Ordering;
use std::sync::Arc;

pub struct AsyncHandler {
    pub signal: Arc<Signal>,
    pub condition: u32,
    pub value: i64,
    pub handler: SignalHandler,
    pub arg: usize,
}

impl AsyncHandler {
    fn ready(&self) -> bool {
        condition_holds(
            self.condition,
            self.signal.load(Ordering::Acquire),
            self.value,
        )
        .unwrap_or(false)
    }
}

#[derive(Default)]
pub struct AsyncHandlers {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    waiting: Vec<AsyncHandler>,
    /// Handlers taken out of `waiting` to run, by any thread.
    running: usize,
    /// A thread looked for ready handlers while some were running.
    missed: bool,
}

impl AsyncHandlers {
    pub fn add(&self, handler: AsyncHandler) {
        self.state.lock().waiting.push(handler);
    }

    /// The handlers waiting, as (signal handle, its value, the value awaited), for a log
    /// line about a stall.
    pub fn describe(&self) -> String {
        let state = self.state.lock();
        let waiting: Vec<String> = state
            .waiting
            .iter()
            .map(|h| {
                format!(
                    "{:#x}={} (awaits {} {})",
                    h.signal.handle().handle,
                    h.signal.load(Ordering::Acquire),
                    h.condition,
                    h.value
                )
            })
            .collect();
        format!(
            "{} running, waiting: [{}]",
            state.running,
            waiting.join(", ")
        )
    }

    /// Whether some waiting handler's condition holds.
    pub fn any_ready(&self) -> bool {
        self.state.lock().waiting.iter().any(AsyncHandler::ready)
    }

    /// Calls every handler whose condition holds; those returning false are dropped, as in
    /// ROCr. When another thread looked while these ran, looks again once they are back.
    /// Returns whether any handler ran.
    pub fn run_ready(&self) -> bool {
        let mut ran = false;
        loop {
            let ready: Vec<AsyncHandler> = {
                let mut state = self.state.lock();
                if state.running > 0 {
                    state.missed = true;
                }
                let (ready, waiting) = std::mem::take(&mut state.waiting)
                    .into_iter()
                    .partition(AsyncHandler::ready);
                state.waiting = waiting;
                state.running += ready.len();
                ready
            };
            if ready.is_empty() {
                return ran;
            }
            ran = true;
            let count = ready.len();
            let mut kept = Vec::with_capacity(count);
            for h in ready {
                let value = h.signal.load(Ordering::Acquire);
                // Under virtual time the handler runs when the write that woke it happened.
                let at = h.signal.virtual_time();
                let keep = crate::virtual_time::in_handler(at, || {
                    // SAFETY: the client registered this function and argument for this call.
                    unsafe { (h.handler)(value, h.arg as *mut c_void) }
                });
                if keep {
                    kept.push(h);
                }
            }
            let mut state = self.state.lock();
            state.waiting.extend(kept);
            state.running -= count;
            // The last thread to put its handlers back looks again for whoever missed them.
            if !(state.missed && state.running == 0) {
                return ran;
            }
            state.missed = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signal::SignalRegistry;
    use std::sync::atomic::AtomicU32;

    struct Probe {
        handlers: AsyncHandlers,
        doorbell: Arc<Signal>,
        calls: AtomicU32,
    }

    /// Resets the doorbell, as the hostcall service does. On its first call another thread
    /// rings the doorbell again and looks for ready handlers, finding this one out.
    unsafe extern "C" fn serve(_value: hsa_signal_value_t, arg: *mut c_void) -> bool {
        // SAFETY: `arg` is the test's leaked probe.
        let probe: &'static Probe = unsafe { &*(arg as *const Probe) };
        probe.doorbell.store(0, Ordering::Release);
        if probe.calls.fetch_add(1, Ordering::SeqCst) == 0 {
            std::thread::spawn(move || {
                probe.doorbell.store(1, Ordering::Release);
                assert!(!probe.handlers.run_ready(), "the handler is out, running");
            })
            .join()
            .unwrap();
        }
        true
    }

    /// The lost wake-up of device printf in deterministic mode: a wave rang the doorbell
    /// while the handler ran on another thread, and its one look found nothing to run.
    #[test]
    fn a_condition_that_comes_true_while_its_handler_runs_elsewhere_is_served_before_the_runner_returns(
    ) {
        let registry = SignalRegistry::default();
        let probe: &'static Probe = Box::leak(Box::new(Probe {
            handlers: AsyncHandlers::default(),
            doorbell: registry.create_user(1).unwrap(),
            calls: AtomicU32::new(0),
        }));
        probe.handlers.add(AsyncHandler {
            signal: probe.doorbell.clone(),
            condition: HSA_SIGNAL_CONDITION_NE,
            value: 0,
            handler: serve,
            arg: probe as *const Probe as usize,
        });
        assert!(probe.handlers.run_ready());
        assert_eq!(probe.calls.load(Ordering::SeqCst), 2);
        assert_eq!(probe.doorbell.load(Ordering::Acquire), 0);
        assert!(!probe.handlers.any_ready());
        assert!(!probe.handlers.run_ready(), "nothing left to serve");
        assert_eq!(probe.calls.load(Ordering::SeqCst), 2);
    }
}

//! How a device thread (a packet processor, a copy engine) that just finished its work looks
//! for more before it sleeps. A producer submitting in a loop (launch after launch, copy after
//! copy) gives it the next piece within microseconds, and while the thread is awake that
//! submission needs no wake-up: a system call, and on a virtual machine often an
//! inter-processor interrupt to a halted virtual CPU (tens of microseconds on the 2-core
//! development host).
//!
//! The look yields its core between checks while the core looks shared with a thread that
//! wants it, and a yield that comes back quickly (nobody else wanted the core) stops that.
//! The scheduler often wakes a device thread on its producer's core; a spin that kept the core
//! would keep the producer from submitting until the spin ran out and the thread slept, and
//! the next submission would then wake it on the same core again (measured on the 2-core
//! host: every launch cost the whole spin, ~24 us). A yield on a core of its own is a wasted
//! system call, which a quick round trip (launch, synchronise, launch) feels.

use std::time::{Duration, Instant};

/// How long a device thread that just did some work keeps looking for more.
const SPIN: Duration = Duration::from_micros(20);

/// A yield that takes this long gave the core to another thread (one with the core to itself
/// returns in well under a microsecond).
const YIELD_GAVE_CORE: Duration = Duration::from_micros(2);

/// One device thread's looks for work between sleeps.
pub struct IdleSpin {
    shares_core: bool,
}

impl Default for IdleSpin {
    fn default() -> Self {
        Self::new()
    }
}

impl IdleSpin {
    /// For a thread just started or woken: the scheduler tends to put a woken thread on its
    /// waker's core, so it starts out assuming it shares one.
    pub fn new() -> IdleSpin {
        IdleSpin { shares_core: true }
    }

    /// The thread slept and was woken (see [`IdleSpin::new`]).
    pub fn woke(&mut self) {
        self.shares_core = true;
    }

    /// Looks for work (`found()`) for up to [`SPIN`]; true if it found some.
    pub fn look(&mut self, found: &mut dyn FnMut() -> bool) -> bool {
        let until = Instant::now() + SPIN;
        loop {
            if found() {
                return true;
            }
            if Instant::now() >= until {
                return false;
            }
            for _ in 0..64 {
                std::hint::spin_loop();
            }
            if self.shares_core {
                let before = Instant::now();
                std::thread::yield_now();
                self.shares_core = before.elapsed() >= YIELD_GAVE_CORE;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_look_finds_work_that_arrives_while_it_spins_and_gives_up_without_any() {
        let mut spin = IdleSpin::new();
        assert!(!spin.look(&mut || false), "nothing to find");
        // Work that shows up at the second check (each check comes before the deadline's, so
        // a slow first yield on a busy host cannot end the look before it).
        let mut checks = 0;
        assert!(spin.look(&mut || {
            checks += 1;
            checks == 2
        }));
        assert_eq!(checks, 2);
    }
}

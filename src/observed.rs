//! Whether anything watches the HIP calls: the one load every API shell makes before it runs
//! its body in place (`api::call`). The recorder (`probe`), the API log (`logging`) and the
//! forked-child guard (`fork_guard`) each set their bit, so an unwatched call pays for one
//! relaxed load instead of asking each of them (the log's question alone is a tracing
//! callsite lookup).

use std::sync::atomic::{AtomicU8, Ordering};

static WATCHERS: AtomicU8 = AtomicU8::new(0);

/// What may watch the calls.
#[derive(Clone, Copy, Debug)]
#[repr(u8)]
pub enum Watcher {
    /// `HIPSHIM_TRACE` / `HIPSHIM_STATS` are recording.
    Recorder = 1,
    /// The `hipshim::api` log target is enabled at debug.
    ApiLog = 2,
    /// This is a child forked after the runtime started: calls are refused.
    ForkedChild = 4,
    /// A tool registered AMD's API or activity callbacks (`runtime::base::callbacks`).
    Callbacks = 16,
    /// A unit test collects the API log on its own thread (`api::testing::ApiLog`). Its own
    /// bit: `logging::init`, which another test may run at any moment, sets `ApiLog` from the
    /// global subscriber and would turn a shared bit off under it.
    #[cfg(test)]
    TestLog = 8,
}

/// Turns `watcher` on or off. Async-signal-safe (one atomic operation): the fork handler
/// calls it.
pub fn set(watcher: Watcher, on: bool) {
    let bit = watcher as u8;
    if on {
        WATCHERS.fetch_or(bit, Ordering::Release);
    } else {
        WATCHERS.fetch_and(!bit, Ordering::Release);
    }
}

/// True if any watcher is on.
#[inline(always)]
pub fn any() -> bool {
    WATCHERS.load(Ordering::Relaxed) != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_watcher_turns_on_and_off_alone() {
        let before = WATCHERS.load(Ordering::Relaxed);
        set(Watcher::ApiLog, true);
        assert!(any());
        assert_eq!(WATCHERS.load(Ordering::Relaxed) & 2, 2);
        set(Watcher::ApiLog, before & 2 != 0);
        assert_eq!(WATCHERS.load(Ordering::Relaxed), before);
    }
}

//! The trace probe: what the HSA layer reports while hipshim records (`HIPSHIM_TRACE`,
//! `HIPSHIM_STATS`), in plain data, and the clock every recorded time is read from.
//!
//! This module is a leaf so that `hsa/` may call it: the recorder (`crate::trace`) sits above
//! `hsa/` (it reads completion timestamps through the HSA runtime), so the HSA layer cannot
//! call it directly. Instead the recorder installs itself here as the [`Sink`] when recording
//! starts, and the HSA layer's hooks go through [`packet_signal`], [`packet_published`] and
//! [`wait_done`]. HSA calls are counted here outright ([`count_hsa`]): the counting wrappers
//! run inside every HSA call, the recorder's own included, and take no lock.
//!
//! When recording is off every hook costs one relaxed atomic load ([`recording`]).

use hsa_abi::*;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::sync::OnceLock;

static RECORDING: AtomicBool = AtomicBool::new(false);
static SINK: OnceLock<&'static dyn Sink> = OnceLock::new();
/// Who wants the published packets timed: bit 1 the recorder, bit 2 the activity callbacks
/// (AMD's tracing interface, [`start_activity`]), so the queues ask one word.
static TIMING: AtomicU8 = AtomicU8::new(0);
static ACTIVITY_SINK: OnceLock<&'static dyn Sink> = OnceLock::new();

/// True while hipshim records events (`HIPSHIM_TRACE` or `HIPSHIM_STATS` is set): the one
/// check every hook makes when it is off.
#[inline(always)]
pub fn recording() -> bool {
    RECORDING.load(Ordering::Relaxed)
}

/// True while some sink wants the packets the queues publish timed (the recorder, or a
/// tool's activity callbacks): the queues' one check when none does.
#[inline(always)]
pub fn timing_packets() -> bool {
    TIMING.load(Ordering::Relaxed) != 0
}

/// The device's clock, once the HSA runtime said its timestamps are not the host's (hsasim's
/// virtual time): every time on the trace's timeline is read from it from then on.
static DEVICE_CLOCK: OnceLock<fns::hsa_system_get_info> = OnceLock::new();

/// The clock of every time on the trace's timeline: `CLOCK_MONOTONIC` in ns, or, on a device
/// with a virtual clock ([`use_device_clock`]), the HSA system timestamp (ns on hsasim),
/// which that device advances for the host too (submissions, waits), so host spans and
/// device spans share one time line and repeat exactly from run to run.
#[inline]
pub fn now_ns() -> u64 {
    match DEVICE_CLOCK.get() {
        Some(system_get_info) => device_ns(*system_get_info),
        None => host_ns(),
    }
}

#[cold]
fn device_ns(system_get_info: fns::hsa_system_get_info) -> u64 {
    let mut ns: u64 = 0;
    // SAFETY: the runtime's `hsa_system_get_info`; TIMESTAMP is a u64 attribute and the
    // out-pointer is valid.
    unsafe {
        system_get_info(
            system_info::TIMESTAMP,
            &mut ns as *mut u64 as *mut std::ffi::c_void,
        )
    };
    ns
}

/// Puts the timeline on the device's clock (see [`now_ns`]): called once, by the recorder,
/// when the runtime says its clock is virtual (`HSASIM_VIRTUAL_TIME`); its timestamps are
/// then ns.
pub fn use_device_clock(system_get_info: fns::hsa_system_get_info) {
    let _ = DEVICE_CLOCK.set(system_get_info);
}

/// `CLOCK_MONOTONIC` in ns: what host work costs (the HSA calls' own durations), whatever
/// clock the timeline follows.
pub fn host_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-parameter; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Where the HSA layer's events go: the recorder, which installs itself with [`start`].
pub trait Sink: Sync {
    /// A completion signal of the recorder's own (value 1) for a packet about to be
    /// published, or `None` to publish it untraced.
    fn packet_signal(&self) -> Option<hsa_signal_t>;
    /// A packet was published with the recorder's signal, followed by its trace barrier.
    fn packet_published(&self, packet: Published<'_>);
    /// A host wait for `signal` to read 0 finished.
    fn wait_done(&self, signal: u64, start_ns: u64, end_ns: u64, spin_ns: u64, blocked: bool);
}

/// Starts recording into `sink` (once per process: later calls only set the flag again).
pub fn start(sink: &'static dyn Sink) {
    let _ = SINK.set(sink);
    RECORDING.store(true, Ordering::Release);
    TIMING.fetch_or(1, Ordering::Release);
    crate::observed::set(crate::observed::Watcher::Recorder, true);
}

/// Stops recording: the hooks go quiet from now on.
pub fn stop() {
    RECORDING.store(false, Ordering::Release);
    TIMING.fetch_and(!1, Ordering::Release);
    crate::observed::set(crate::observed::Watcher::Recorder, false);
}

/// Times the published packets for `sink` too (AMD's activity callbacks): it gets them while
/// the recorder does not record (once per process: later calls only set the flag again).
pub fn start_activity(sink: &'static dyn Sink) {
    let _ = ACTIVITY_SINK.set(sink);
    TIMING.fetch_or(2, Ordering::Release);
}

/// The activity callbacks want no more packets timed.
pub fn stop_activity() {
    TIMING.fetch_and(!2, Ordering::Release);
}

/// The sink a packet published now goes to: the recorder while it records, else the activity
/// callbacks' while they want packets.
fn timing_sink() -> Option<&'static dyn Sink> {
    if recording() {
        SINK.get().copied()
    } else if TIMING.load(Ordering::Relaxed) & 2 != 0 {
        ACTIVITY_SINK.get().copied()
    } else {
        None
    }
}

/// What a `Reservation` (`hsa/queue.rs`) knows about a packet it published while recording.
pub struct Published<'a> {
    pub queue: u64,
    pub device: u32,
    pub agent: hsa_agent_t,
    pub index: u64,
    /// Packets in the ring ahead of this one when it was reserved.
    pub depth: u64,
    pub packet: &'a AqlPacket,
    /// The signal the recorder gave the packet (its original one moved to the trace barrier).
    pub signal: hsa_signal_t,
    pub original_completion: hsa_signal_t,
    pub submit_ns: u64,
}

/// See [`Sink::packet_signal`].
pub fn packet_signal() -> Option<hsa_signal_t> {
    timing_sink()?.packet_signal()
}

/// See [`Sink::packet_published`].
pub fn packet_published(packet: Published<'_>) {
    if let Some(sink) = timing_sink() {
        sink.packet_published(packet);
    }
}

/// See [`Sink::wait_done`].
pub fn wait_done(signal: u64, start_ns: u64, end_ns: u64, spin_ns: u64, blocked: bool) {
    if let Some(sink) = SINK.get() {
        sink.wait_done(signal, start_ns, end_ns, spin_ns, blocked);
    }
}

// ---- HSA call counts ----

/// HSA calls of one thread, by table index. Atomics (written by the owning thread only) so
/// counting never takes a lock: the recorder calls the HSA runtime while holding its buffer.
struct HsaCounts {
    calls: Vec<AtomicU64>,
    ns: Vec<AtomicU64>,
}

/// The names of the HSA function table's entries, in table order: counts are by index.
static HSA_NAMES: OnceLock<&'static [&'static str]> = OnceLock::new();
static HSA_COUNTS: Mutex<Vec<Arc<HsaCounts>>> = Mutex::new(Vec::new());

thread_local! {
    static LOCAL_HSA: std::cell::OnceCell<Arc<HsaCounts>> = const { std::cell::OnceCell::new() };
}

/// Names the entries [`count_hsa`] counts by index (the HSA layer, before it installs its
/// counting wrappers).
pub fn name_hsa_calls(names: &'static [&'static str]) {
    let _ = HSA_NAMES.set(names);
}

/// Counts one call of HSA table entry `id` that started at `started` (called by the counting
/// wrappers in `hsa/api.rs`, installed only when recording).
pub fn count_hsa(id: usize, started: u64) {
    let elapsed = host_ns().saturating_sub(started);
    let _ = LOCAL_HSA.try_with(|cell| {
        let counts = cell.get_or_init(|| {
            let n = HSA_NAMES.get().map_or(0, |names| names.len());
            let counts = Arc::new(HsaCounts {
                calls: (0..n).map(|_| AtomicU64::new(0)).collect(),
                ns: (0..n).map(|_| AtomicU64::new(0)).collect(),
            });
            HSA_COUNTS.lock().push(counts.clone());
            counts
        });
        if let (Some(c), Some(t)) = (counts.calls.get(id), counts.ns.get(id)) {
            c.fetch_add(1, Ordering::Relaxed);
            t.fetch_add(elapsed, Ordering::Relaxed);
        }
    });
}

/// Every HSA entry called so far, in table order: its name, calls and total ns (all threads).
pub fn hsa_calls() -> Vec<(&'static str, u64, u64)> {
    let names = HSA_NAMES.get().copied().unwrap_or_default();
    let mut totals = vec![(0u64, 0u64); names.len()];
    for counts in HSA_COUNTS.lock().iter() {
        for (i, t) in totals.iter_mut().enumerate() {
            t.0 += counts.calls.get(i).map_or(0, |c| c.load(Ordering::Relaxed));
            t.1 += counts.ns.get(i).map_or(0, |c| c.load(Ordering::Relaxed));
        }
    }
    names
        .iter()
        .zip(totals)
        .filter(|(_, (calls, _))| *calls > 0)
        .map(|(name, (calls, ns))| (*name, calls, ns))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    struct TestSink;

    impl Sink for TestSink {
        fn packet_signal(&self) -> Option<hsa_signal_t> {
            Some(hsa_signal_t { handle: 0x5157 })
        }
        fn packet_published(&self, _: Published<'_>) {}
        fn wait_done(&self, _: u64, _: u64, _: u64, _: u64, _: bool) {}
    }

    static TEST_SINK: TestSink = TestSink;

    #[test]
    fn the_activity_sink_times_the_packets_while_the_recorder_does_not_record() {
        start_activity(&TEST_SINK);
        assert!(timing_packets());
        if !recording() {
            assert_eq!(packet_signal().map(|s| s.handle), Some(0x5157));
        }
        stop_activity();
        if !recording() {
            assert!(!timing_packets(), "one word says nobody times packets");
            assert!(packet_signal().is_none());
        }
    }
}

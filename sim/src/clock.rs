//! The HSA system timestamp: what packet processors and copy engines stamp signals with and
//! `hsa_system_get_info(TIMESTAMP)` reports.

/// A monotonic nanosecond clock: the HSA system timestamp (frequency 1 GHz).
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-parameter; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64) * 1_000_000_000 + ts.tv_nsec as u64
}

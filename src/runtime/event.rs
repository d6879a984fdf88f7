//! Events: markers recorded into streams, with completion signals and timestamps.
//!
//! Each `hipEventRecord` publishes a marker (a barrier-AND packet, see `stream.rs`) with a
//! fresh pooled signal; the event keeps that signal until it is recorded again or destroyed,
//! so a stream still waiting for an earlier record (`hipStreamWaitEvent`) is never confused by
//! a later one.
//!
//! Timing: every queue hipshim creates has profiling enabled, so the packet processor stores
//! start/end timestamps in each completion signal (ROCr: the CP writes them into the
//! `amd_signal_t`; hsasim does the same). `hipEventElapsedTime` reads the *end* timestamp of
//! both markers with `hsa_amd_profiling_get_dispatch_time`, the portable HSA call for it, and
//! converts with the system timestamp frequency. A marker ends when all work before it has,
//! so the difference is the time the work between the two records took.
//!
//! Faults: a record that can never complete (its marker is behind a failed packet, directly
//! or through any chain of waits, see `stream.rs`) makes `hipEventSynchronize` and
//! `hipEventQuery` return the fault, every time, until the event is recorded again.

use super::device::Device;
use super::handles::HandleTable;
use super::runtime;
use super::stream::{self, Dep, Stream};
use crate::error::{HipError, HipResult};
use crate::hsa::queue::{Doom, Marker};
use parking_lot::Mutex;
use std::ffi::c_void;
use std::sync::Arc;

pub const DEFAULT: u32 = 0;
pub const BLOCKING_SYNC: u32 = 1;
pub const DISABLE_TIMING: u32 = 2;
pub const INTERPROCESS: u32 = 4;
/// AMD extensions accepted and ignored: hipshim's markers always carry system-scope fences.
const AMD_FENCE_FLAGS: u32 = 0x2000_0000 | 0x4000_0000 | 0x8000_0000;

pub struct Event {
    pub flags: u32,
    record: Mutex<Option<Record>>,
}

#[derive(Clone)]
struct Record {
    marker: Marker,
    device: usize,
}

static EVENTS: HandleTable<Event> = HandleTable::new("event", 0xe0);

/// The live event a `hipEvent_t` names.
pub fn lookup(handle: *mut c_void) -> HipResult<Arc<Event>> {
    EVENTS.get(handle as usize)
}

/// `hipEventCreateWithFlags`.
pub fn create(flags: u32) -> HipResult<*mut c_void> {
    // Unknown bits are a caller error whatever else is asked for.
    if flags & !(BLOCKING_SYNC | DISABLE_TIMING | INTERPROCESS | AMD_FENCE_FLAGS) != 0 {
        tracing::warn!(flags, "unknown event flags");
        return Err(HipError::INVALID_VALUE);
    }
    if flags & INTERPROCESS != 0 {
        eprintln!("hipshim: hipEventInterprocess events are not supported; returning hipErrorNotSupported");
        return Err(HipError::NOT_SUPPORTED);
    }
    runtime()?;
    let handle = EVENTS.insert(Arc::new(Event {
        flags,
        record: Mutex::new(None),
    }));
    Ok(handle as *mut c_void)
}

/// `hipEventDestroy`: an outstanding record still completes (its marker's signal is held by
/// the stream until then).
pub fn destroy(handle: *mut c_void) -> HipResult {
    EVENTS.remove(handle as usize).map(drop)
}

/// `hipEventRecord` on `stream`, which runs on `device`.
pub fn record(event: &Event, device: &Device, stream: &Stream) -> HipResult {
    let marker = stream.record(&device.streams)?;
    *event.record.lock() = Some(Record {
        marker,
        device: device.index,
    });
    Ok(())
}

/// `hipEventQuery`: success if complete (or never recorded, as AMD's runtime does).
pub fn query(event: &Event) -> HipResult {
    let Some(record) = event.record.lock().clone() else {
        return Ok(());
    };
    if record.marker.signal.is_zero() {
        return Ok(());
    }
    if let Some(doom) = record.marker.lost() {
        return Err(lost_record(&record, doom));
    }
    Err(HipError::NOT_READY)
}

/// `hipEventSynchronize`: waits on the host (without spinning for `hipEventBlockingSync`).
pub fn synchronize(event: &Event) -> HipResult {
    let Some(record) = event.record.lock().clone() else {
        return Ok(());
    };
    let device = runtime()?.device(record.device)?;
    record
        .marker
        .signal
        .signal()
        .wait_zero_with(
            device.timestamp_hz,
            event.flags & BLOCKING_SYNC != 0,
            || record.marker.lost(),
        )
        .map_err(|doom| lost_record(&record, doom))?;
    super::mempool::after_sync(super::mempool::Synced::Marker(&record.marker));
    Ok(())
}

/// An event whose record can never complete: the streams that lost work to the fault owe it
/// (see `stream::contain`), and the event reports it.
fn lost_record(record: &Record, doom: Doom) -> HipError {
    stream::contain(doom);
    let error = super::device_assert::fault_error(doom);
    let why = runtime().map_or_else(
        |_| format!("{:#x}", doom.status),
        |rt| rt.hsa.api.describe(doom.status),
    );
    // The fault itself was logged as an error where it was found; this is a repeat.
    tracing::debug!(
        "an event recorded on queue {} (packet {}) can never complete: it is behind work of queue {} which failed: {why}; reported as {error:?}",
        record.marker.queue.id,
        record.marker.index,
        doom.origin
    );
    error
}

/// `hipStreamWaitEvent`: the stream's later work waits for the event's latest record, on the
/// device. An event never recorded is no dependency (CUDA and AMD agree).
pub fn stream_wait(device: &Device, stream: &Stream, event: &Event, flags: u32) -> HipResult {
    // hipEventWaitDefault (0) and hipEventWaitExternal (1, graph capture only).
    if flags > 1 {
        tracing::warn!(flags, "unknown hipStreamWaitEvent flags");
        return Err(HipError::INVALID_VALUE);
    }
    let Some(record) = event.record.lock().clone() else {
        return Ok(());
    };
    stream.wait_for(&device.streams, Dep::on(record.marker))
}

/// `hipEventElapsedTime` in milliseconds, with AMD's errors: an event not recorded or created
/// with `hipEventDisableTiming` is an invalid handle; one not complete is `NotReady`.
pub fn elapsed_ms(start: &Event, stop: &Event) -> HipResult<f32> {
    // One lock at a time: `start` and `stop` may be the same event.
    let a = start.record.lock().clone();
    let b = stop.record.lock().clone();
    let (Some(a), Some(b)) = (a, b) else {
        tracing::warn!("hipEventElapsedTime: an event was never recorded");
        return Err(HipError::INVALID_HANDLE);
    };
    if (start.flags | stop.flags) & DISABLE_TIMING != 0 {
        tracing::warn!("hipEventElapsedTime: an event was created with hipEventDisableTiming");
        return Err(HipError::INVALID_HANDLE);
    }
    if !a.marker.signal.is_zero() || !b.marker.signal.is_zero() {
        return Err(HipError::NOT_READY);
    }
    let rt = runtime()?;
    let end = |r: &Record| -> HipResult<(u64, &Device)> {
        let device = rt.device(r.device)?;
        let time = r.marker.signal.signal().dispatch_time(device.agent)?;
        Ok((time.end, device))
    };
    let ((t0, device), (t1, _)) = (end(&a)?, end(&b)?);
    let ticks = t1 as i128 - t0 as i128;
    Ok((ticks as f64 * 1000.0 / device.timestamp_hz as f64) as f32)
}

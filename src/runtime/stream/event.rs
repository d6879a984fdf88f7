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
//!
//! Interprocess events (`hipEventInterprocess`, which needs `hipEventDisableTiming`) also
//! share a page with every process that opened them (`ipc_event.rs`): each record counts as
//! issued there and its marker's completion is stored there, and waiting for the event waits,
//! on the host, for the latest record any of the processes issued.

use super::ipc_event::SharedEvent;
use crate::error::{HipError, HipResult};
use crate::hsa::queue::{Doom, Marker};
use crate::hsa::HsaApi;
use crate::runtime::base::device_assert;
use crate::runtime::base::handles::HandleTable;
use crate::runtime::devices::device::Device;
use crate::runtime::mem::mempool;
use crate::runtime::ordering::{self, Dep, Stream};
use hsa_abi::{hsa_agent_t, hsa_signal_value_t, HSA_SIGNAL_CONDITION_EQ};
use parking_lot::Mutex;
use std::ffi::c_void;
use std::sync::Arc;

pub const DEFAULT: u32 = 0;
pub const BLOCKING_SYNC: u32 = 1;
pub const DISABLE_TIMING: u32 = 2;
pub const INTERPROCESS: u32 = 4;
/// `hipEventReleaseToDevice` and `hipEventReleaseToSystem`: at most one of the two (AMD).
const RELEASE_TO_DEVICE: u32 = 0x4000_0000;
const RELEASE_TO_SYSTEM: u32 = 0x8000_0000;
/// AMD extensions accepted and ignored: hipshim's markers always carry system-scope fences.
const AMD_FENCE_FLAGS: u32 = 0x2000_0000 | RELEASE_TO_DEVICE | RELEASE_TO_SYSTEM;

pub struct Event {
    pub flags: u32,
    record: Mutex<Option<Record>>,
    /// The page shared with other processes, for an interprocess event.
    ipc: Option<Arc<SharedEvent>>,
}

/// A record and what of its device waiting for it and timing it need, so that neither has to
/// find the device again.
#[derive(Clone)]
struct Record {
    marker: Marker,
    /// The stream it was recorded on (`ordering::stream_identity`), for the waits a stream
    /// callback may not make.
    stream: usize,
    agent: hsa_agent_t,
    timestamp_hz: u64,
    api: &'static HsaApi,
}

static EVENTS: HandleTable<Event> = HandleTable::new("event", 0xe0);

/// The live event a `hipEvent_t` names.
pub fn lookup(handle: *mut c_void) -> HipResult<Arc<Event>> {
    EVENTS.get(handle as usize)
}

/// `hipEventCreateWithFlags` (the caller has started the runtime).
pub fn create(flags: u32) -> HipResult<*mut c_void> {
    // Unknown bits are a caller error whatever else is asked for.
    if flags & !(BLOCKING_SYNC | DISABLE_TIMING | INTERPROCESS | AMD_FENCE_FLAGS) != 0 {
        tracing::warn!(flags, "unknown event flags");
        return Err(HipError::INVALID_VALUE);
    }
    let both_releases = RELEASE_TO_DEVICE | RELEASE_TO_SYSTEM;
    if flags & both_releases == both_releases {
        tracing::warn!(
            flags,
            "hipEventReleaseToDevice and hipEventReleaseToSystem contradict each other"
        );
        return Err(HipError::INVALID_VALUE);
    }
    if flags & INTERPROCESS != 0 && flags & DISABLE_TIMING == 0 {
        tracing::warn!(flags, "hipEventInterprocess needs hipEventDisableTiming");
        return Err(HipError::INVALID_VALUE);
    }
    let ipc = if flags & INTERPROCESS != 0 {
        Some(SharedEvent::create()?)
    } else {
        None
    };
    Ok(insert(flags, ipc))
}

fn insert(flags: u32, ipc: Option<Arc<SharedEvent>>) -> *mut c_void {
    let handle = EVENTS.insert(Arc::new(Event {
        flags,
        record: Mutex::new(None),
        ipc,
    }));
    handle as *mut c_void
}

/// `hipIpcGetEventHandle`: the 64 bytes another process opens `event` with.
pub fn ipc_handle(event: &Event) -> HipResult<[u8; 64]> {
    match &event.ipc {
        Some(shared) => Ok(shared.handle()),
        None => {
            tracing::warn!(
                "hipIpcGetEventHandle: the event was not created with hipEventInterprocess"
            );
            // AMD's answer.
            Err(HipError::INVALID_CONFIGURATION)
        }
    }
}

/// `hipIpcOpenEventHandle`: this process's event for another process's interprocess event
/// (the caller has started the runtime).
pub fn open_ipc_handle(handle: &[u8; 64]) -> HipResult<*mut c_void> {
    let shared = SharedEvent::open(handle)?;
    Ok(insert(INTERPROCESS | DISABLE_TIMING, Some(shared)))
}

/// Stores record `seq` as completed in the shared page once its marker completes.
struct SharedCompletion {
    shared: Arc<SharedEvent>,
    seq: u64,
    /// Keeps the marker's pooled signal from being reused before the handler ran.
    _marker: Marker,
}

unsafe extern "C" fn on_shared_record_done(_value: hsa_signal_value_t, arg: *mut c_void) -> bool {
    crate::hsa::callback::guarded("the interprocess event handler", false, || {
        // SAFETY: `arg` is the `Box<SharedCompletion>` leaked when the handler was registered;
        // a handler that returns false runs exactly once.
        let done = unsafe { Box::from_raw(arg as *mut SharedCompletion) };
        done.shared.complete(done.seq);
        false
    })
}

/// Counts a record of an interprocess event as issued, and has its marker's completion stored.
fn share_record(shared: &Arc<SharedEvent>, marker: &Marker, device: &Device) -> HipResult {
    let done = Box::new(SharedCompletion {
        shared: shared.clone(),
        seq: shared.begin_record(),
        _marker: marker.clone(),
    });
    let arg = Box::into_raw(done);
    // SAFETY: the marker's signal is live (held by the box); the handler owns `arg` once it
    // is registered.
    let status = unsafe {
        (device.api.hsa_amd_signal_async_handler)(
            marker.signal.handle(),
            HSA_SIGNAL_CONDITION_EQ,
            0,
            Some(on_shared_record_done),
            arg as *mut c_void,
        )
    };
    if let Err(e) = crate::hsa::check("hsa_amd_signal_async_handler", status) {
        // SAFETY: not registered, so still ours. The record counts as done: a waiter in
        // another process must not wait for a completion nobody will store.
        let done = unsafe { Box::from_raw(arg) };
        done.shared.complete(done.seq);
        return Err(e.into());
    }
    Ok(())
}

/// `hipEventDestroy`: an outstanding record still completes (its marker's signal is held by
/// the stream until then).
pub fn destroy(handle: *mut c_void) -> HipResult {
    let event = EVENTS.remove(handle as usize)?;
    // Held elsewhere too (a graph node, another thread's call): it goes when they let go.
    let Ok(event) = Arc::try_unwrap(event) else {
        return Ok(());
    };
    if let Some(record) = event.record.into_inner() {
        let pool = record.marker.signal.pool();
        drop(record);
        // The record's signal may have gone back to its pool just now.
        pool.trim();
    }
    Ok(())
}

/// `hipEventRecord` on `stream`, which runs on `device`.
pub fn record(event: &Event, device: &Device, stream: &Stream) -> HipResult {
    let marker = stream.record(&device.streams)?;
    if let Some(shared) = &event.ipc {
        share_record(shared, &marker, device)?;
    }
    *event.record.lock() = Some(Record {
        marker,
        stream: ordering::stream_identity(stream),
        agent: device.agent,
        timestamp_hz: device.timestamp_hz,
        api: device.api,
    });
    Ok(())
}

/// `hipEventQuery`: success if complete (or never recorded, as AMD's runtime does).
pub fn query(event: &Event) -> HipResult {
    let Some(record) = event.record.lock().clone() else {
        return match &event.ipc {
            Some(shared) if !shared.is_complete() => Err(HipError::NOT_READY),
            _ => Ok(()),
        };
    };
    if let Some(shared) = &event.ipc {
        if let Some(doom) = record.marker.lost() {
            return Err(lost_record(&record, doom));
        }
        return if shared.is_complete() {
            Ok(())
        } else {
            Err(HipError::NOT_READY)
        };
    }
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
        return event.ipc.as_ref().map_or(Ok(()), |shared| shared.wait());
    };
    if !record.marker.signal.is_zero() {
        ordering::refuse_wait_in_host_task(
            "hipEventSynchronize",
            ordering::Wait::Record {
                stream: record.stream,
            },
        )?;
    }
    record
        .marker
        .signal
        .signal()
        .wait_zero_with(
            record.timestamp_hz,
            event.flags & BLOCKING_SYNC != 0,
            || record.marker.lost(),
        )
        .map_err(|doom| lost_record(&record, doom))?;
    mempool::after_sync(mempool::Synced::Marker(&record.marker));
    // This process's record is done; another process may have recorded since.
    event.ipc.as_ref().map_or(Ok(()), |shared| shared.wait())
}

/// An event whose record can never complete: the streams that lost work to the fault owe it
/// (see `ordering::contain`), and the event reports it.
fn lost_record(record: &Record, doom: Doom) -> HipError {
    ordering::contain(doom);
    let error = device_assert::fault_error(doom);
    let why = record.api.describe(doom.status);
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
    if event.ipc.is_some() {
        // The latest record may be another process's, which no packet here can wait for:
        // the wait happens on the host, now (stronger ordering than asked, never weaker).
        return synchronize(event);
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
    let end =
        |r: &Record| -> HipResult<u64> { Ok(r.marker.signal.signal().dispatch_time(r.agent)?.end) };
    let (t0, t1) = (end(&a)?, end(&b)?);
    let ticks = t1 as i128 - t0 as i128;
    Ok((ticks as f64 * 1000.0 / a.timestamp_hz as f64) as f32)
}

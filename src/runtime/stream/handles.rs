//! The handle table: `hipStream_t` values, the streams they name, per-thread streams and
//! CU masks.

use crate::error::{HipError, HipResult};
use crate::policy::Priority;
use crate::runtime::base::handles::{HandleTable, RecentLookups};
use crate::runtime::devices::current;
use crate::runtime::devices::device::{self, Device};
use crate::runtime::mem::mempool;
use crate::runtime::ordering::{
    self, every_device, Stream, StreamKind, StreamRef, NON_BLOCKING, PER_THREAD_HANDLE,
};
use hsa_abi::*;
use std::cell::RefCell;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// `hipStreamLegacy`: the null stream with legacy semantics.
pub const LEGACY_HANDLE: usize = 1;

/// The stream an `_spt` ("per-thread default stream") entry point means: there, null is the
/// calling thread's own stream rather than the legacy null stream.
pub fn spt_stream(handle: *mut c_void) -> *mut c_void {
    if handle.is_null() {
        PER_THREAD_HANDLE as *mut c_void
    } else {
        handle
    }
}

/// Streams the program created, by handle (`runtime/base/handles.rs`: never 0, 1 or 2, never
/// reused). The null and per-thread streams have fixed values instead and are not in it.
static STREAMS: HandleTable<Stream> = HandleTable::new("stream", 0x50);

/// Stream captures in progress (kept by `graph::capture`): while 0, the null stream's
/// operations skip the capture check with this one load.
pub static ACTIVE_CAPTURES: AtomicUsize = AtomicUsize::new(0);

/// Set by `graph::capture`: the check of a null-stream operation while captures are in
/// progress (a blocking stream of the device capturing makes it an implicit synchronisation
/// with the capture, which fails and invalidates it). Graphs build on streams, not the reverse.
pub static NULL_STREAM_DURING_CAPTURE: std::sync::OnceLock<fn(&Device) -> HipResult> =
    std::sync::OnceLock::new();

/// Set by `graph::capture`: what becomes of a capture when a stream taking part in it is
/// destroyed.
pub static ON_CAPTURING_STREAM_DESTROYED: std::sync::OnceLock<fn(&Stream)> =
    std::sync::OnceLock::new();

/// An operation on `device`'s null stream, while a capture may be in progress.
#[inline(always)]
pub fn check_null_stream_use(device: &Device) -> HipResult {
    if ACTIVE_CAPTURES.load(Ordering::Relaxed) == 0 {
        return Ok(());
    }
    null_stream_during_capture(device)
}

#[cold]
#[inline(never)]
fn null_stream_during_capture(device: &Device) -> HipResult {
    match NULL_STREAM_DURING_CAPTURE.get() {
        Some(check) => check(device),
        None => Ok(()),
    }
}

thread_local! {
    /// This thread's per-thread default streams, by device ordinal.
    static PER_THREAD: PerThreadStreams = const { PerThreadStreams(RefCell::new(Vec::new())) };
}

struct PerThreadStreams(RefCell<Vec<Option<Arc<Stream>>>>);

impl Drop for PerThreadStreams {
    fn drop(&mut self) {
        // The thread is exiting: its streams are destroyed; their work still completes.
        let devices = every_device();
        for (index, stream) in self.0.get_mut().drain(..).enumerate() {
            if let (Some(stream), Some(device)) = (stream, devices.get(index)) {
                device.unregister(&stream);
            }
        }
    }
}

fn per_thread(device: &Device) -> HipResult<Arc<Stream>> {
    PER_THREAD
        .try_with(|streams| {
            let mut streams = streams.0.borrow_mut();
            if streams.len() <= device.index {
                streams.resize(device.index + 1, None);
            }
            if let Some(stream) = &streams[device.index] {
                return Ok(stream.clone());
            }
            let stream = Arc::new(Stream::new(
                device.streams.signals,
                StreamKind::PerThread,
                device.index,
                0,
                Priority::Normal,
                None,
            )?);
            device.streams.register(stream.clone());
            streams[device.index] = Some(stream.clone());
            Ok(stream)
        })
        .unwrap_or(Err(HipError::INVALID_HANDLE))
}

/// The stream a `hipStream_t` names on `device` (the current device): 0 and `hipStreamLegacy`
/// are its null stream, `hipStreamPerThread` the calling thread's stream on it; a stream of
/// another device is hipErrorInvalidHandle. Takes no device list: a named stream carries its
/// device's ordinal, which is all the check needs (the launch path's one lookup).
#[inline(always)]
pub fn resolve(handle: *mut c_void, device: &Device) -> HipResult<StreamRef<'_>> {
    match handle as usize {
        0 | LEGACY_HANDLE => {
            check_null_stream_use(device)?;
            Ok(StreamRef::Borrowed(&device.streams.null))
        }
        PER_THREAD_HANDLE => Ok(StreamRef::Shared(per_thread(device)?)),
        value => {
            let stream = STREAMS.get_via(value, &LAST_STREAM)?;
            if stream.device != device.index {
                wrong_device(&stream, device);
                return Err(HipError::INVALID_HANDLE);
            }
            Ok(StreamRef::Shared(stream))
        }
    }
}

#[cold]
#[inline(never)]
fn wrong_device(stream: &Stream, device: &Device) {
    tracing::warn!(
        stream = %stream.kind,
        "the stream belongs to device {}, not the current device {}",
        stream.device,
        device.index
    );
}

/// Whether `handle` names a live stream of any device (the null and per-thread handles name
/// none of their own).
pub fn is_live_stream(handle: *mut c_void) -> bool {
    !matches!(handle as usize, 0 | LEGACY_HANDLE | PER_THREAD_HANDLE)
        && STREAMS.get(handle as usize).is_ok()
}

/// The stream a `hipStream_t` names and its device, one of `devices` (the current device for
/// the null and per-thread streams).
#[inline(always)]
pub fn lookup(devices: &[Device], handle: *mut c_void) -> HipResult<(&Device, StreamRef<'_>)> {
    resolve_any(devices, handle)
}

/// Streams destroyed so far: a stream looked up by handle while this read the same is still
/// live (see `HandleTable::removals`).
#[inline(always)]
pub fn removals() -> u64 {
    STREAMS.removals()
}

thread_local! {
    /// The stream this thread named last (see `HandleTable::get_via`).
    static LAST_STREAM: RecentLookups<Stream, 1> = const { RecentLookups::new() };
}

#[inline(always)]
fn resolve_any<'a>(
    devices: &'a [Device],
    handle: *mut c_void,
) -> HipResult<(&'a Device, StreamRef<'a>)> {
    let current = || current::device(devices);
    match handle as usize {
        0 | LEGACY_HANDLE => {
            let device = current()?;
            check_null_stream_use(device)?;
            Ok((device, StreamRef::Borrowed(&device.streams.null)))
        }
        PER_THREAD_HANDLE => {
            let device = current()?;
            Ok((device, StreamRef::Shared(per_thread(device)?)))
        }
        value => {
            let stream = STREAMS.get_via(value, &LAST_STREAM)?;
            let device = device::nth(devices, stream.device)?;
            Ok((device, StreamRef::Shared(stream)))
        }
    }
}

/// `hipStreamCreateWithFlags` / `WithPriority` / `hipExtStreamCreateWithCUMask` on `device`
/// (the current device); returns the new handle.
pub fn create(
    device: &Device,
    flags: u32,
    priority: i32,
    cu_mask: Option<&[u32]>,
) -> HipResult<*mut c_void> {
    if flags & !NON_BLOCKING != 0 {
        tracing::warn!(flags, "unknown stream flags");
        return Err(HipError::INVALID_VALUE);
    }
    let cu_mask = match cu_mask {
        None => None,
        Some(mask) => Some(trim_cu_mask(device, mask)?),
    };
    let handle = STREAMS.insert_with(|handle| {
        let stream = Arc::new(Stream::new(
            device.streams.signals,
            StreamKind::Created(handle),
            device.index,
            flags,
            Priority::from_hip(priority),
            cu_mask,
        )?);
        tracing::debug!(stream = %stream.kind, flags, priority = ?stream.priority, device = device.index, "stream created");
        device.streams.register(stream.clone());
        Ok(stream)
    })?;
    Ok(handle as *mut c_void)
}

/// `hipStreamDestroy`: the handle dies now; work already enqueued still completes.
pub fn destroy(devices: &[Device], handle: *mut c_void) -> HipResult {
    let value = handle as usize;
    if matches!(value, 0 | LEGACY_HANDLE | PER_THREAD_HANDLE) {
        tracing::warn!("hipStreamDestroy of the null or per-thread stream");
        return Err(HipError::INVALID_HANDLE);
    }
    let stream = STREAMS.remove(value)?;
    if stream.capturing.load(Ordering::Relaxed) {
        if let Some(ended) = ON_CAPTURING_STREAM_DESTROYED.get() {
            ended(&stream);
        }
    }
    let device = device::nth(devices, stream.device)?;
    device.streams.unregister(&stream);
    tracing::debug!(stream = %stream.kind, "stream destroyed");
    Ok(())
}

/// For `hipDeviceReset`: destroys every stream the program created on `device` (their
/// handles become invalid, as after hipStreamDestroy). The caller has drained the device.
pub fn destroy_created_streams(device: &Device) {
    for stream in STREAMS.remove_where(|s| s.device == device.index) {
        device.streams.unregister(&stream);
    }
}

/// `hipStreamSynchronize`.
#[inline(always)]
pub fn synchronize(devices: &[Device], handle: *mut c_void) -> HipResult {
    let (device, stream) = lookup(devices, handle)?;
    ordering::refuse_wait_in_host_task(
        "hipStreamSynchronize",
        ordering::Wait::Stream {
            stream: ordering::stream_identity(&stream),
            null: stream.kind == StreamKind::Null,
            device: device.index,
        },
    )?;
    let issued = mempool::frees_issued();
    if stream.kind == StreamKind::Null {
        device.streams.synchronize_null()?;
        // The null stream's synchronisation waits for every blocking stream too, never for a
        // non-blocking one: blocks those freed may still be in use.
        mempool::after_sync(mempool::Synced::Legacy(device.index, issued));
    } else {
        stream.wait_for_null_first(&device.streams)?;
        stream.synchronize(&device.streams)?;
        mempool::after_sync(mempool::Synced::Stream(stream.serial, issued));
    }
    Ok(())
}

/// `hipStreamQuery`; the null stream answers for the blocking streams too.
pub fn query(devices: &[Device], handle: *mut c_void) -> HipResult {
    let (device, stream) = lookup(devices, handle)?;
    if stream.kind == StreamKind::Null {
        return device.streams.query_null();
    }
    stream.query(&device.streams)
}

/// The CU mask a stream runs with: its own, or every CU of the device.
pub fn cu_mask_of(devices: &[Device], handle: *mut c_void) -> HipResult<Vec<u32>> {
    let (device, stream) = lookup(devices, handle)?;
    if let Some(mask) = &stream.cu_mask {
        return Ok(mask.to_vec());
    }
    let cus = compute_units(device);
    Ok(full_mask(cus))
}

fn compute_units(device: &Device) -> u32 {
    crate::hsa::agent_value::<u32>(device.api, device.agent, agent_info::AMD_COMPUTE_UNIT_COUNT)
        .unwrap_or(0)
}

fn full_mask(cus: u32) -> Vec<u32> {
    let words = cus.div_ceil(32).max(1) as usize;
    (0..words)
        .map(|w| {
            let lo = w as u32 * 32;
            match cus.saturating_sub(lo) {
                n if n >= 32 => u32::MAX,
                n => (1u32 << n) - 1,
            }
        })
        .collect()
}

/// Drops CUs the device does not have, as AMD does; a mask left with no CU is invalid.
/// A mask that enables none of the device's compute units gets the default, the whole device
/// (AMD's rule, which hip-tests check), with a warning.
fn trim_cu_mask(device: &Device, mask: &[u32]) -> HipResult<Box<[u32]>> {
    let cus = compute_units(device);
    let full = full_mask(cus);
    let trimmed: Vec<u32> = full
        .iter()
        .enumerate()
        .map(|(i, f)| mask.get(i).copied().unwrap_or(0) & f)
        .collect();
    if trimmed.iter().all(|&w| w == 0) {
        tracing::warn!(
            ?mask,
            cus,
            "the CU mask enables none of the device's compute units: the stream gets them all"
        );
        return Ok(full.into_boxed_slice());
    }
    Ok(trimmed.into_boxed_slice())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_masks_cover_exactly_the_device_cus() {
        assert_eq!(full_mask(80), vec![u32::MAX, u32::MAX, 0xffff]);
        assert_eq!(full_mask(32), vec![u32::MAX]);
        assert_eq!(full_mask(4), vec![0xf]);
    }
}

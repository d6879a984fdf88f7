//! The copy engine: every copy and fill, synchronous or stream-ordered, goes through here.
//!
//! 1. **Classification.** Each side is classified by [`memory::classify`] (the one bounds
//!    check): device memory, host memory the devices reach directly (pinned, registered,
//!    managed: handed to the engine at its *agent address*, which for registered memory may
//!    differ from the host pointer), or pageable host memory.
//! 2. **Engine copies.** When both sides are reachable, the copy is a list of
//!    [`EngineCopy`] pieces (one if contiguous, else one per row) issued on the device's copy
//!    engines ([`CopyEngines`]: host-to-device on one engine, the rest on another where the
//!    runtime lets us choose, so the two directions overlap). They are always enqueued in a
//!    stream's order; a synchronous copy is that, on the serving device's null stream, plus a
//!    host wait for its completion.
//! 3. **Staging.** Pageable host memory cannot be reached by the engines, so (as CUDA
//!    documents) such a copy is synchronous with respect to the host: once the ordering wait
//!    is done, rows are packed through the device's pinned staging buffer in batches.
//!    Host-to-host copies are done by the CPU.
//! 4. **Fills.** Device memory: `hsa_amd_memory_fill` writes each row's 4-byte-aligned middle
//!    (it takes 32-bit words) and the staging buffer supplies the up to 3 bytes at either end,
//!    so every alignment and element size (8, 16, 32 bits) is handled. Host memory: the CPU.
//!    A stream-ordered fill runs as a host task in its stream; a synchronous one runs on the
//!    calling thread.
//!
//! What each entry point waits for on the host: a synchronous copy or fill first waits for all
//! work of the devices it touches (as it always has: AMD's hipMemcpy is device-synchronous)
//! and returns when done; a stream-ordered one waits only where pageable memory forces it to
//! (for the stream's earlier work, through [`Stream::host_fence`], which also reports a fault
//! the stream owes).
//!
//! Read top to bottom, a copy goes: the C shell (`api/copy.rs`) resolves the [`Devices`] and
//! hands them down with a [`CopyRequest`] → [`memcpy`] or [`memcpy_async`] checks and
//! classifies it (`Transfer::new`) → the host copies it, or the engines do
//! (`ordered_copies`), or it goes through pageable memory (`pageable`). Fills follow.

use super::devices::device::{Device, StagingBuffer, STAGING_BYTES};
use super::mem::memory::{classify, Side};
use super::mem::mempool::MemLocation;
use super::stream::value::MemOp;
use super::stream::{self, OutOfQueue, Stream};
use crate::error::{HipError, HipResult};
use crate::hsa::copy::{CopyEngines, EngineCopy};
use crate::hsa::memory::HostLock;
use crate::hsa::signal::{PooledSignal, Signal};
use hsa_abi::*;
use std::ffi::c_void;

/// `hipMemcpyKind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyKind {
    HostToHost,
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
    Default,
}

impl CopyKind {
    /// The `hipMemcpyKind` value.
    pub fn to_raw(self) -> u32 {
        match self {
            CopyKind::HostToHost => 0,
            CopyKind::HostToDevice => 1,
            CopyKind::DeviceToHost => 2,
            CopyKind::DeviceToDevice => 3,
            CopyKind::Default => 4,
        }
    }

    pub fn from_raw(kind: u32) -> HipResult<CopyKind> {
        Ok(match kind {
            0 => CopyKind::HostToHost,
            1 => CopyKind::HostToDevice,
            2 => CopyKind::DeviceToHost,
            3 => CopyKind::DeviceToDevice,
            4 => CopyKind::Default,
            _ => return Err(HipError::INVALID_MEMCPY_DIRECTION),
        })
    }

    /// Whether the kind says the (source, destination) is device memory; `None` = infer.
    fn device_sides(self) -> (Option<bool>, Option<bool>) {
        match self {
            CopyKind::HostToHost => (Some(false), Some(false)),
            CopyKind::HostToDevice => (Some(false), Some(true)),
            CopyKind::DeviceToHost => (Some(true), Some(false)),
            CopyKind::DeviceToDevice => (Some(true), Some(true)),
            CopyKind::Default => (None, None),
        }
    }
}

/// A strided set of rows: `height` rows of `width` bytes, `pitch` bytes apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rows {
    pub width: usize,
    pub height: usize,
    pub dst_pitch: usize,
    pub src_pitch: usize,
}

impl Rows {
    pub fn linear(size: usize) -> Rows {
        Rows {
            width: size,
            height: 1,
            dst_pitch: size,
            src_pitch: size,
        }
    }

    /// Bytes from the first to the last byte touched, for a side with `pitch`.
    pub fn extent(&self, pitch: usize) -> Option<usize> {
        if self.height == 0 || self.width == 0 {
            return Some(0);
        }
        pitch.checked_mul(self.height - 1)?.checked_add(self.width)
    }

    fn contiguous(&self) -> bool {
        self.width == self.dst_pitch && self.width == self.src_pitch
    }
}

/// A copy as the program asks for it: `rows` from `src` to `dst`, and what `kind` says each
/// side is.
#[derive(Clone, Copy, Debug)]
pub struct CopyRequest {
    pub dst: *mut c_void,
    pub src: *const c_void,
    pub rows: Rows,
    pub kind: CopyKind,
}

impl CopyRequest {
    /// `size` contiguous bytes.
    pub fn linear(dst: *mut c_void, src: *const c_void, size: usize, kind: CopyKind) -> Self {
        CopyRequest {
            dst,
            src,
            rows: Rows::linear(size),
            kind,
        }
    }
}

/// The devices a copy or fill may involve, handed down by its caller: either side may be any
/// device's memory, and an operation on pinned host memory is ordered on the calling thread's
/// current device.
#[derive(Clone, Copy)]
pub struct Devices<'a> {
    pub all: &'a [Device],
    /// The current device, or why there is none (the runtime did not start), which a copy or
    /// fill reports once its arguments have passed their checks.
    pub current: HipResult<&'a Device>,
}

impl<'a> Devices<'a> {
    /// No devices, because the runtime could not start (`error`).
    pub fn none(error: HipError) -> Devices<'a> {
        Devices {
            all: &[],
            current: Err(error),
        }
    }

    /// Every device, the calling thread's current one among them.
    pub fn of(all: &'a [Device]) -> Devices<'a> {
        Devices {
            all,
            current: crate::runtime::devices::current::device(all),
        }
    }

    /// The device of ordinal `index`.
    fn get(&self, index: usize) -> HipResult<&'a Device> {
        self.all.get(index).ok_or(HipError::INVALID_DEVICE)
    }
}

/// A checked copy: both sides classified, not yet started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Transfer {
    dst: usize,
    dst_side: Side,
    src: usize,
    src_side: Side,
    rows: Rows,
}

impl Transfer {
    /// The checks every copy makes: `None` for an empty copy; null pointers, rows wider than
    /// their pitch and out-of-bounds ranges are errors. `hints` (source, destination): what the
    /// copy kind says about device memory, for [`classify`].
    fn new(
        CopyRequest { dst, src, rows, .. }: CopyRequest,
        (src_hint, dst_hint): (Option<bool>, Option<bool>),
    ) -> HipResult<Option<Transfer>> {
        if rows.width == 0 || rows.height == 0 {
            return Ok(None);
        }
        if dst.is_null() || src.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        if rows.width > rows.dst_pitch || rows.width > rows.src_pitch {
            tracing::warn!(?rows, "copy rows wider than their pitch");
            return Err(HipError::INVALID_PITCH_VALUE);
        }
        let dst_extent = rows.extent(rows.dst_pitch).ok_or(HipError::INVALID_VALUE)?;
        let src_extent = rows.extent(rows.src_pitch).ok_or(HipError::INVALID_VALUE)?;
        Ok(Some(Transfer {
            dst: dst as usize,
            dst_side: classify(dst as usize, dst_extent, dst_hint, "destination")?,
            src: src as usize,
            src_side: classify(src as usize, src_extent, src_hint, "source")?,
            rows,
        }))
    }

    /// The device whose copy engines and staging buffer serve the copy (the destination's
    /// device first); `None` when both sides are host memory.
    fn server(&self) -> Option<usize> {
        match (self.dst_side, self.src_side) {
            (Side::Device(d), _) | (_, Side::Device(d)) => Some(d),
            _ => None,
        }
    }

    /// The engine copies of a transfer whose two sides the engines reach, at the addresses the
    /// engines must be given (a registered side's agent address, never its host pointer).
    fn engine_pieces(&self, dst_agent: hsa_agent_t, src_agent: hsa_agent_t) -> Vec<EngineCopy> {
        let (dst, src) = (
            engine_base(self.dst, self.dst_side),
            engine_base(self.src, self.src_side),
        );
        let rows = self.rows;
        if rows.contiguous() {
            return vec![EngineCopy {
                dst,
                dst_agent,
                src,
                src_agent,
                len: rows.width * rows.height,
            }];
        }
        (0..rows.height)
            .map(|r| EngineCopy {
                dst: dst + r * rows.dst_pitch,
                dst_agent,
                src: src + r * rows.src_pitch,
                src_agent,
                len: rows.width,
            })
            .collect()
    }

    /// A copy between two devices' memory: lets each device reach the other's allocation
    /// (see `peer.rs`), which the engines need whether or not peer access is enabled.
    /// `gpus`: every device's agent, by ordinal (`Device::all_gpus`).
    fn reach_across_devices(&self, gpus: &[hsa_agent_t]) -> HipResult {
        match (self.dst_side, self.src_side) {
            (Side::Device(d), Side::Device(s)) if d != s => {
                super::mem::peer::grant_for_copy(gpus, self.dst, d, self.src, s)
            }
            _ => Ok(()),
        }
    }

    /// The CPU copies a host-to-host transfer.
    ///
    /// # Safety
    /// Both sides are host memory valid for their rows.
    unsafe fn on_host(&self) {
        let rows = self.rows;
        for r in 0..rows.height {
            // SAFETY: per this function's contract; `copy` tolerates overlap (undefined in
            // HIP, harmless here).
            unsafe {
                std::ptr::copy(
                    (self.src + r * rows.src_pitch) as *const u8,
                    (self.dst + r * rows.dst_pitch) as *mut u8,
                    rows.width,
                )
            };
        }
    }
}

/// Where the engine finds `ptr`, the base of a side classified as `side`.
fn engine_base(ptr: usize, side: Side) -> usize {
    match side {
        Side::Pinned(agent_address) => agent_address,
        _ => ptr,
    }
}

/// The agent through which `device`'s engines reach a side (any device's memory).
fn agent_of(devices: Devices<'_>, device: &Device, side: Side) -> HipResult<hsa_agent_t> {
    Ok(match side {
        Side::Device(d) => devices.get(d)?.agent,
        _ => device.cpu_agent,
    })
}

/// The agents through which `device`'s engines reach the transfer's destination and source.
fn agents(
    devices: Devices<'_>,
    device: &Device,
    t: &Transfer,
) -> HipResult<(hsa_agent_t, hsa_agent_t)> {
    Ok((
        agent_of(devices, device, t.dst_side)?,
        agent_of(devices, device, t.src_side)?,
    ))
}

// ---------------------------------------------------------------------------------------
// Entry points: copies

/// What a synchronous copy or fill waits for first. `hipMemcpy` and `hipMemset` are
/// null-stream operations (legacy semantics, as in AMD's runtime): they come after the work
/// of `device`'s null stream and its blocking streams, and after nothing of its non-blocking
/// streams, which a program uses precisely so that unrelated copies do not wait for them.
fn after_legacy_work(device: &Device) -> HipResult {
    stream::check_null_stream_use(device)?;
    stream::refuse_wait_in_host_task(
        "a synchronous copy or fill",
        stream::Wait::Legacy {
            device: device.index,
        },
    )?;
    device.streams.settle_legacy()
}

/// Checks that `[ptr, ptr + len)`, the whole span a multi-part copy touches on its `what`
/// side, is one allocation's memory or host memory (see [`classify`]) before the parts are
/// planned one by one: a part that starts past the end of an allocation would otherwise be
/// taken for host memory on its own.
pub(crate) fn check_span(ptr: usize, len: usize, what: &str) -> HipResult {
    classify(ptr, len, None, what).map(|_| ())
}

/// `hipMemcpy`, `hipMemcpy2D`: a copy synchronous with respect to the host.
///
/// # Safety
/// Host-side rows must be valid memory; device-side ranges are checked against the registry.
pub unsafe fn memcpy(devices: Devices<'_>, copy: CopyRequest) -> HipResult {
    let Some(t) = Transfer::new(copy, copy.kind.device_sides())? else {
        return Ok(());
    };
    // Past its checks, every copy needs the runtime, whatever memory it is between.
    let current = devices.current?;
    let Some(server) = t.server() else {
        // Host to host. Kernels may be writing pinned memory: wait for them first.
        if t.dst_side != Side::Pageable || t.src_side != Side::Pageable {
            after_legacy_work(current)?;
        }
        // SAFETY: both sides are host memory (caller's contract, or the registry's word).
        unsafe { t.on_host() };
        return Ok(());
    };
    let device = devices.get(server)?;
    // The other device of a device-to-device copy: its legacy work must be done too.
    if let (Side::Device(a), Side::Device(b)) = (t.dst_side, t.src_side) {
        for other in [a, b] {
            if other != server {
                after_legacy_work(devices.get(other)?)?;
            }
        }
    }
    after_legacy_work(device)?;
    if t.dst_side == Side::Pageable || t.src_side == Side::Pageable {
        return pageable(devices, device, &t);
    }
    t.reach_across_devices(&device.all_gpus)?;
    // The stream-ordered copy on the serving device's null stream, waited for.
    let (dst_agent, src_agent) = agents(devices, device, &t)?;
    let pieces = t.engine_pieces(dst_agent, src_agent);
    let null = device.streams.null_stream();
    for chunk in pieces.chunks(MAX_BATCH) {
        let (started, result) = ordered_copies(device, null, chunk);
        // Waited for also when issuing failed part-way: the caller's memory is free to go
        // once this returns.
        if let Some((done, ordered)) = started {
            let waited = if ordered {
                // Another thread's work came in between: wait as the stream would, which
                // also notices when that work can never finish.
                null.host_fence(&device.streams)
            } else {
                done.signal()
                    .wait_zero(device.timestamp_hz, || None::<HipError>)
                    .map_err(|_| HipError::UNKNOWN)
            };
            result.and(waited)?;
        } else {
            result?;
        }
    }
    Ok(())
}

/// `hipMemcpyAsync`, `hipMemcpy2DAsync` and friends: a copy in `stream`'s order.
///
/// # Safety
/// Host-side rows must be valid until the copy completes (pinned memory) or the call returns
/// (pageable memory); device-side ranges are checked against the allocation table, so any
/// pointer value is safe there.
pub unsafe fn memcpy_async(
    devices: Devices<'_>,
    copy: CopyRequest,
    stream: *mut c_void,
) -> HipResult {
    let (device, stream) = stream::lookup(devices.all, stream)?;
    let Some(t) = stream_transfer(copy)? else {
        return Ok(());
    };
    match t.server() {
        None => {
            // Both sides in host memory: the CPU copies once the stream's work is done.
            stream.host_fence(&device.streams)?;
            // SAFETY: both sides are host memory (caller's contract, or the registry's word).
            unsafe { t.on_host() };
            Ok(())
        }
        Some(owner) if t.dst_side == Side::Pageable || t.src_side == Side::Pageable => {
            stream.host_fence(&device.streams)?;
            pageable(devices, devices.get(owner)?, &t)
        }
        Some(_) => {
            t.reach_across_devices(&device.all_gpus)?;
            let (dst_agent, src_agent) = agents(devices, device, &t)?;
            let pieces = t.engine_pieces(dst_agent, src_agent);
            for chunk in pieces.chunks(MAX_BATCH) {
                ordered_copies(device, &stream, chunk).1?;
            }
            Ok(())
        }
    }
}

/// `hipMemcpyAttributes` (hip_runtime_api.h, ROCm 7.1; CUDA's `cudaMemcpyAttributes`): how the
/// copies of a `hipMemcpyBatchAsync` from one index on may be done.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct MemcpyAttributes {
    /// `hipMemcpySrcAccessOrder`.
    pub src_access_order: u32,
    pub src_loc_hint: MemLocation,
    pub dst_loc_hint: MemLocation,
    /// `hipMemcpyFlags`.
    pub flags: u32,
}

const _: () = assert!(std::mem::size_of::<MemcpyAttributes>() == 24);

/// `hipMemcpySrcAccessOrder` values.
pub mod src_access_order {
    pub const STREAM: u32 = 1;
    pub const DURING_API_CALL: u32 = 2;
    pub const ANY: u32 = 3;
}

/// `hipMemcpyFlags` a batch copy honours: the overlap preference and AMD's copy-engine
/// preference (hints; every copy here goes to the engines or the staging path anyway).
/// AMD's swap and indirect operations are other operations, not copies, and are refused.
const BATCH_HINT_FLAGS: u32 = 0x1 | 0x100;

/// A batch copy refused: the error, and the copy it is about (`None`: the whole batch).
pub type BatchFailure = (Option<usize>, HipError);

/// The checks of `hipMemcpyBatchAsync`'s attributes: `attrs[k]` holds for the copies from
/// `idxs[k]` up to the next index (the last to the end), so the indices start at 0, rise, and
/// stay below `count`. Returns whether a copy's source must be read before the call returns
/// (`hipMemcpySrcAccessOrderDuringApiCall`).
pub fn check_batch_attributes(
    count: usize,
    attrs: &[MemcpyAttributes],
    idxs: &[usize],
) -> Result<bool, BatchFailure> {
    let mut during_call = false;
    for (k, (attr, &first)) in attrs.iter().zip(idxs).enumerate() {
        let rises = k == 0 && first == 0 || k > 0 && first > idxs[k - 1];
        if !rises || first >= count {
            tracing::warn!(
                k,
                first,
                count,
                "hipMemcpyBatchAsync: attrsIdxs must start at 0, rise and stay below count"
            );
            return Err((None, HipError::INVALID_VALUE));
        }
        during_call |= check_order_and_flags(attr.src_access_order, attr.flags)
            .map_err(|e| (Some(first), e))?;
    }
    Ok(during_call)
}

/// The access order and flags of batch copies (`hipMemcpyBatchAsync`'s attributes,
/// `hipMemcpy3DBatchAsync`'s operations): whether the source must be read before the call
/// returns. An order that is not one of the three is hipErrorInvalidValue; AMD's swap and
/// indirect operations are hipErrorNotSupported.
pub fn check_order_and_flags(order: u32, flags: u32) -> HipResult<bool> {
    let during_call = match order {
        src_access_order::STREAM | src_access_order::ANY => false,
        src_access_order::DURING_API_CALL => true,
        order => {
            tracing::warn!(order, "batch copy: not a hipMemcpySrcAccessOrder");
            return Err(HipError::INVALID_VALUE);
        }
    };
    if flags & !BATCH_HINT_FLAGS != 0 {
        tracing::warn!(
            flags,
            "batch copy: only the hint flags are supported (not AMD's swap or indirect operations)"
        );
        return Err(HipError::NOT_SUPPORTED);
    }
    Ok(during_call)
}

/// The checks `memcpy_async` makes of a stream-ordered copy, without making it (a batch checks
/// every copy before it makes the first).
pub fn check_stream_copy(copy: CopyRequest) -> HipResult {
    stream_transfer(copy).map(|_| ())
}

/// The checks of a stream-ordered copy: those of every copy, and explicit kinds whose device
/// side is not device memory are rejected (the host side cannot be checked);
/// `hipMemcpyDefault` takes the direction from where the pointers live.
fn stream_transfer(copy: CopyRequest) -> HipResult<Option<Transfer>> {
    let Some(t) = Transfer::new(copy, (None, None))? else {
        return Ok(None);
    };
    check_kind(copy.kind, t.dst_side, t.src_side)?;
    Ok(Some(t))
}

fn check_kind(kind: CopyKind, dst: Side, src: Side) -> HipResult {
    let on_device = |s: Side| matches!(s, Side::Device(_));
    let ok = match kind {
        CopyKind::HostToDevice => on_device(dst),
        CopyKind::DeviceToHost => on_device(src),
        CopyKind::DeviceToDevice => on_device(dst) && on_device(src),
        CopyKind::HostToHost | CopyKind::Default => true,
    };
    if !ok {
        tracing::warn!(
            ?kind,
            ?dst,
            ?src,
            "copy kind names device memory that is not a device allocation"
        );
        return Err(HipError::INVALID_VALUE);
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Engine copies

/// Most copies in flight on one completion signal (bounds the engine's queue of outstanding
/// copies).
const MAX_BATCH: usize = 256;

/// The engine a copy prefers: host-to-device on one, the rest on another, so that the two
/// directions overlap.
fn preferred_engine(cpu_agent: hsa_agent_t, copy: &EngineCopy) -> u32 {
    if copy.src_agent.handle == cpu_agent.handle {
        1
    } else {
        2
    }
}

/// Issues `copies` on `device`'s engines once `deps` are complete; each decrements
/// `completion` once. When one cannot be issued, those not issued are taken off `completion`
/// (so it still reaches 0 for the ones that were), after `owe` (if any) is given the error,
/// and the error is returned. Returns the
/// engine of the last copy (its bit), or `None` where the runtime chose.
///
/// # Safety
/// Both ranges of every copy are reachable by their agents and cover `len` bytes until the
/// copy is done; `deps` and `completion` are live signals until then.
unsafe fn issue(
    engines: &CopyEngines,
    cpu_agent: hsa_agent_t,
    copies: &[EngineCopy],
    deps: &[hsa_signal_t],
    completion: &Signal,
    owe: Option<&dyn Fn(HipError)>,
) -> HipResult<Option<u32>> {
    let mut engine = None;
    for (issued, copy) in copies.iter().enumerate() {
        let preferred = Some(preferred_engine(cpu_agent, copy));
        // SAFETY: per this function's contract.
        match unsafe { engines.start(copy, deps, completion.handle, preferred) } {
            Ok(used) => engine = used,
            Err(e) => {
                let error = HipError::from(e);
                // Owed before the copies are counted off: once `completion` reads 0 the
                // stream may count as done (and, destroyed, be dropped) with nothing owed.
                if let Some(owe) = owe {
                    owe(error);
                }
                completion.add(-((copies.len() - issued) as i64));
                return Err(error);
            }
        }
    }
    Ok(engine)
}

/// What the trace and the debug log say about a batch of copies.
fn copy_info(
    (device, cpu_agent): (usize, hsa_agent_t),
    copies: &[EngineCopy],
    engine: Option<u32>,
    staged: bool,
    submit_ns: u64,
) -> crate::trace::record::CopyInfo {
    let is_host = |agent: hsa_agent_t| agent.handle == cpu_agent.handle;
    let direction =
        crate::trace::Direction::of(is_host(copies[0].src_agent), is_host(copies[0].dst_agent));
    let bytes: usize = copies.iter().map(|c| c.len).sum();
    tracing::debug!(
        target: "hipshim::copy",
        device,
        engine = engine.map_or(-1, |e| e.trailing_zeros() as i64),
        bytes,
        pieces = copies.len(),
        direction = direction.label(),
        staged,
        "copies issued on the copy engine"
    );
    crate::trace::record::CopyInfo {
        engine,
        device: device as u32,
        bytes: bytes as u64,
        pieces: copies.len() as u32,
        direction,
        staged,
        submit_ns,
    }
}

fn trace_now() -> u64 {
    if crate::trace::recording() {
        crate::trace::record::now_ns()
    } else {
        0
    }
}

/// Enqueues `copies` (engine-reachable on both sides) in `stream`'s order on `device`'s
/// engines, with one completion signal counting them down. Returns that signal and whether the
/// copies wait for earlier work of the stream (`None` if nothing was started), and the result.
///
/// Copies that must wait for the stream's earlier work reach an engine only once that work is
/// done ([`WaitingCopies`]): an engine runs its jobs in order, so one waiting there would hold
/// up every later job on it, and the host waits for some of those (staged copies, the ends of
/// a stream fill on the callback thread) while the work waited for may itself wait for the
/// host (a stream fill or callback, a later host task on the callback thread).
fn ordered_copies(
    device: &Device,
    stream: &Stream,
    copies: &[EngineCopy],
) -> (Option<(PooledSignal, bool)>, HipResult) {
    let mut out = None;
    let result = stream.enqueue_external(&device.streams, copies.len() as i64, |after, done| {
        out = Some((done.clone(), after.is_some()));
        let engine_device = (device.index, device.cpu_agent);
        let Some(after) = after.filter(|m| !m.is_zero()) else {
            // SAFETY: both ranges are engine-reachable and cover `len` bytes (classified by
            // the caller) until the copies complete; `done` is a pooled signal the stream
            // keeps until then.
            let started =
                unsafe { start_copies(&device.engines, engine_device, copies, &[], done, None) };
            // They wait for nothing.
            return (OutOfQueue::OnEngine, started);
        };
        let owed = stream.owed.clone();
        let waiting = Box::new(WaitingCopies {
            engines: device.engines,
            device: engine_device,
            copies: copies.to_vec(),
            done: done.clone(),
            _after: after.clone(),
            owe: Box::new(move |error| owed.owe(error)),
        });
        let arg = Box::into_raw(waiting);
        // SAFETY: the marker is live (the job holds a clone); the handler takes ownership of
        // `arg` when it runs.
        let status = unsafe {
            (device.api.hsa_amd_signal_async_handler)(
                after.handle(),
                HSA_SIGNAL_CONDITION_EQ,
                0,
                Some(start_waiting_copies),
                arg as *mut c_void,
            )
        };
        if let Err(error) = crate::hsa::check("hsa_amd_signal_async_handler", status) {
            // SAFETY: the handler was not registered, so `arg` is still ours.
            let mut waiting = unsafe { Box::from_raw(arg) };
            let copies = std::mem::take(&mut waiting.copies);
            tracing::debug!(target: "hipshim::copy", ?error, "no handler for a marker: the copies wait for it on their engine");
            // SAFETY: as above; the stream keeps the marker until the copies complete.
            let started = unsafe {
                start_copies(
                    &device.engines,
                    engine_device,
                    &copies,
                    &[after.handle()],
                    done,
                    None,
                )
            };
            return (OutOfQueue::OnEngine, started);
        }
        // Behind a fault the marker never completes and the copies never start, as the
        // stream's other lost work never runs (the program may free their memory as soon as
        // the fault is reported).
        (OutOfQueue::OffEngine, Ok(()))
    });
    (out, result)
}

/// Issues `copies` on `engines` (of the device `(index, CPU agent)`) once `deps` are
/// complete, counted on `done`, and records them in the trace.
///
/// # Safety
/// Both ranges of every copy are engine-reachable and cover `len` bytes until the copies
/// complete; `deps` and `done` are live signals until then.
unsafe fn start_copies(
    engines: &CopyEngines,
    device: (usize, hsa_agent_t),
    copies: &[EngineCopy],
    deps: &[hsa_signal_t],
    done: &PooledSignal,
    owe: Option<&dyn Fn(HipError)>,
) -> HipResult {
    let submit_ns = trace_now();
    // SAFETY: forwarded contract.
    let engine = unsafe { issue(engines, device.1, copies, deps, done.signal(), owe) }?;
    let info = copy_info(device, copies, engine, false, submit_ns);
    if super::base::callbacks::watching() {
        let kind = super::base::callbacks::copy_kind(info.direction);
        super::base::callbacks::copy_submitted(info.device, kind, info.bytes, done);
    }
    if crate::trace::recording() {
        crate::trace::record::copy_submitted(info, done);
    }
    Ok(())
}

/// Stream-ordered copies waiting for their stream's earlier work (`after`), off the engines;
/// an HSA signal handler starts them when it is done. A failure to start them then is owed by
/// the stream, like a failed stream fill. Dropped without starting them (a panic in the
/// handler), it takes them off `done`, so nothing waits for them forever, and the stream owes
/// `hipErrorUnknown`.
struct WaitingCopies {
    engines: CopyEngines,
    /// The device's index and CPU agent.
    device: (usize, hsa_agent_t),
    copies: Vec<EngineCopy>,
    done: PooledSignal,
    /// Kept until the handler has run: it names the signal.
    _after: PooledSignal,
    owe: Box<dyn Fn(HipError) + Send>,
}

impl WaitingCopies {
    fn start(mut self) {
        let copies = std::mem::take(&mut self.copies);
        let owe = |error| {
            tracing::error!(?error, "a stream-ordered copy could not be started once its stream's earlier work was done; its stream reports the error");
            (self.owe)(error);
        };
        // SAFETY: the caller of `ordered_copies` classified both ranges as engine-reachable,
        // covering `len` bytes until the copies complete; `done` is held here and by the
        // stream until then. The error is owed (above), not returned.
        let _ = unsafe {
            start_copies(
                &self.engines,
                self.device,
                &copies,
                &[],
                &self.done,
                Some(&owe),
            )
        };
    }
}

impl Drop for WaitingCopies {
    fn drop(&mut self) {
        if !self.copies.is_empty() {
            tracing::error!("internal error: stream-ordered copies were dropped without starting; their stream reports hipErrorUnknown");
            // Owed first, as in `issue`.
            (self.owe)(HipError::UNKNOWN);
            self.done
                .signal()
                .subtract_release(self.copies.len() as i64);
        }
    }
}

/// Called by the HSA runtime's async-handler thread when the marker [`WaitingCopies`] wait
/// for completes. Guarded: a panic here drops them, which still counts them off.
unsafe extern "C" fn start_waiting_copies(_value: hsa_signal_value_t, arg: *mut c_void) -> bool {
    crate::hsa::callback::guarded("the stream-ordered copy signal handler", false, || {
        // SAFETY: `arg` is the `Box<WaitingCopies>` leaked when the handler was registered;
        // the HSA runtime calls a handler that returns false exactly once.
        let waiting = unsafe { Box::from_raw(arg as *mut WaitingCopies) };
        waiting.start();
        false
    })
}

/// Issues `copies` (one side the staging buffer) and waits for them on the device's copy
/// signal.
fn staged_copies(device: &Device, signal: &Signal, copies: Vec<EngineCopy>) -> HipResult {
    // SAFETY: one side is the staging buffer (held under the device's `copy` lock by the
    // caller), the other device memory or engine-reachable host memory, covering `len`
    // bytes until the wait right here.
    match unsafe { InFlight::issue(device, signal, copies, true) } {
        Some(flight) => flight.wait(device, signal),
        None => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------
// Staging

/// A piece of a row that fits in the staging buffer: (row, offset in row, length).
fn segments(rows: Rows) -> impl Iterator<Item = (usize, usize, usize)> {
    (0..rows.height).flat_map(move |r| {
        (0..rows.width)
            .step_by(STAGING_BYTES)
            .map(move |off| (r, off, (rows.width - off).min(STAGING_BYTES)))
    })
}

/// Groups row segments into batches whose total length fits the staging buffer.
fn staging_batches(rows: Rows) -> Vec<Vec<(usize, usize, usize)>> {
    let mut batches: Vec<Vec<(usize, usize, usize)>> = Vec::new();
    let mut used = STAGING_BYTES;
    for seg in segments(rows) {
        if used + seg.2 > STAGING_BYTES {
            batches.push(Vec::new());
            used = 0;
        }
        used += seg.2;
        batches.last_mut().expect("pushed above").push(seg);
    }
    batches
}

/// A transfer with one pageable side, synchronously: large ones straight from or to the
/// locked pages, the rest (and those whose lock is refused) staged.
fn pageable(devices: Devices<'_>, device: &Device, t: &Transfer) -> HipResult {
    through_locked_pages(devices, device, t).unwrap_or_else(|| staged(devices, device, t))
}

/// A copy of pageable host memory through the device's two staging buffers, pipelined: rows
/// are packed into them in batches, and while a copy engine moves one buffer, the CPU fills
/// (to the device) or drains (from it) the other. Returns once every byte has arrived.
fn staged(devices: Devices<'_>, device: &Device, t: &Transfer) -> HipResult {
    let copy = device.copy.lock();
    // Declared after the lock guard, so dropped before it: no buffer is left in flight for
    // the next copy to overwrite, whatever path returns.
    let mut pipeline = StagingPipeline {
        device,
        buffers: &copy.staging,
        in_flight: [None, None],
    };
    let rows = t.rows;
    let batches = staging_batches(rows);
    match (t.dst_side, t.src_side) {
        (Side::Pageable, Side::Pageable) => unreachable!("host-to-host copies use the CPU"),
        (Side::Pageable, src_side) => {
            let (src_agent, src) = (
                agent_of(devices, device, src_side)?,
                engine_base(t.src, src_side),
            );
            let engine_fill = |k: usize, batch: &[(usize, usize, usize)]| -> Vec<EngineCopy> {
                let staging = copy.staging[k].memory.as_ptr() as usize;
                let mut at = 0;
                batch
                    .iter()
                    .map(|&(r, off, len)| {
                        let c = EngineCopy {
                            dst: staging + at,
                            dst_agent: device.cpu_agent,
                            src: src + r * rows.src_pitch + off,
                            src_agent,
                            len,
                        };
                        at += len;
                        c
                    })
                    .collect()
            };
            if let Some(first) = batches.first() {
                pipeline.start(0, engine_fill(0, first));
            }
            for (i, batch) in batches.iter().enumerate() {
                let k = i % 2;
                // The other buffer was drained in the previous round: refill it now.
                if let Some(next) = batches.get(i + 1) {
                    pipeline.start(1 - k, engine_fill(1 - k, next));
                }
                pipeline.finish(k)?;
                let staging = copy.staging[k].memory.as_ptr() as usize;
                let mut at = 0;
                for &(r, off, len) in batch {
                    // SAFETY: the destination row is caller-valid host memory; the staging
                    // buffer holds the batch (at most STAGING_BYTES), its engine copy is
                    // complete, and it is ours under `copy`.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            (staging + at) as *const u8,
                            (t.dst + r * rows.dst_pitch + off) as *mut u8,
                            len,
                        )
                    };
                    at += len;
                }
            }
        }
        (dst_side, _) => {
            let (dst_agent, dst) = (
                agent_of(devices, device, dst_side)?,
                engine_base(t.dst, dst_side),
            );
            for (i, batch) in batches.iter().enumerate() {
                let k = i % 2;
                // The buffer's previous batch must have left before it is overwritten.
                pipeline.finish(k)?;
                let staging = copy.staging[k].memory.as_ptr() as usize;
                let mut at = 0;
                let mut copies = Vec::with_capacity(batch.len());
                for &(r, off, len) in batch {
                    // SAFETY: the source row is caller-valid host memory; the staging buffer
                    // holds the batch (at most STAGING_BYTES), no engine copy uses it, and it
                    // is ours under `copy`.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            (t.src + r * rows.src_pitch + off) as *const u8,
                            (staging + at) as *mut u8,
                            len,
                        )
                    };
                    copies.push(EngineCopy {
                        dst: dst + r * rows.dst_pitch + off,
                        dst_agent,
                        src: staging + at,
                        src_agent: device.cpu_agent,
                        len,
                    });
                    at += len;
                }
                pipeline.start(k, copies);
            }
            pipeline.finish(0)?;
            pipeline.finish(1)?;
        }
    }
    Ok(())
}

/// Pageable ranges from this size on are locked for the copy engines rather than staged.
/// Staging moves every byte twice (the CPU to or from a staging buffer, an engine between it
/// and the device), locking once (the engine alone), at the price of the lock itself: AMD's
/// runtime too pins large pageable ranges for a transfer, past a threshold of its own
/// (`GPU_PINNED_MIN_XFER_SIZE`). Two staging rounds (8 MiB) are where the pipeline of
/// [`staged`] is in full swing and where locking has paid on hsasim.
const LOCK_PAGEABLE_FROM: usize = 2 * STAGING_BYTES;

/// A copy with one pageable side of at least [`LOCK_PAGEABLE_FROM`] bytes, done by the
/// engines straight from or to that side's pages, locked (`hsa_amd_memory_lock`) for the
/// copy and unlocked after it; `None` if the copy is smaller or the lock is refused (a range
/// another lock overlaps, a driver that will not pin it), for [`staged`] to do.
fn through_locked_pages(devices: Devices<'_>, device: &Device, t: &Transfer) -> Option<HipResult> {
    let rows = t.rows;
    let (host, pitch) = match (t.dst_side, t.src_side) {
        (Side::Pageable, _) => (t.dst, rows.dst_pitch),
        (_, Side::Pageable) => (t.src, rows.src_pitch),
        _ => return None,
    };
    let extent = rows.extent(pitch)?;
    if extent < LOCK_PAGEABLE_FROM {
        return None;
    }
    let page = host_pages::page_size();
    let start = host / page * page;
    let end = (host + extent).div_ceil(page) * page;
    // SAFETY: the range covers the caller's host rows (checked mapped by `classify`), which
    // stay valid until this synchronous copy returns; the lock is dropped before that.
    let lock = match unsafe {
        HostLock::lock(
            device.api,
            start as *mut c_void,
            end - start,
            &[device.agent],
        )
    } {
        Ok(lock) => lock,
        Err(error) => {
            tracing::debug!(target: "hipshim::copy", %error, bytes = extent, "locking a pageable range refused; staging it");
            return None;
        }
    };
    let locked = Side::Pinned(lock.agent_address() + (host - start));
    let mut direct = *t;
    if t.dst_side == Side::Pageable {
        direct.dst_side = locked;
    } else {
        direct.src_side = locked;
    }
    // SAFETY: the locked side stays locked until `lock` is dropped, after the copy.
    let done = unsafe { direct_copy(devices, device, &direct) };
    drop(lock);
    Some(done)
}

/// A copy of a transfer whose sides the engines reach (one of them locked pages), by the
/// engines, spread over several, waited for.
///
/// # Safety
/// Both sides stay reachable by the engines until this returns.
unsafe fn direct_copy(devices: Devices<'_>, device: &Device, t: &Transfer) -> HipResult {
    let (dst_agent, src_agent) = agents(devices, device, t)?;
    let pieces = spread_over_engines(t.engine_pieces(dst_agent, src_agent));
    // The device's copy lock makes its first staging signal this copy's.
    let copy = device.copy.lock();
    for chunk in pieces.chunks(MAX_BATCH) {
        // SAFETY: one side is device memory, the other the locked pages, both covering
        // `len` bytes until the wait inside returns; the signal is ours under `copy`.
        if let Some(flight) =
            unsafe { InFlight::issue(device, &copy.staging[0].signal, chunk.to_vec(), false) }
        {
            flight.wait(device, &copy.staging[0].signal)?;
        }
    }
    Ok(())
}

/// One contiguous copy cut in [`ENGINES_PER_COPY`] page-aligned pieces, which the engines
/// take in turn (a busy engine is not free for the next piece), so that the copy moves on
/// several at once; several copies (rows) stay as they are.
fn spread_over_engines(pieces: Vec<EngineCopy>) -> Vec<EngineCopy> {
    let [whole] = pieces.as_slice() else {
        return pieces;
    };
    let share = whole
        .len
        .div_ceil(ENGINES_PER_COPY)
        .next_multiple_of(host_pages::page_size());
    (0..whole.len)
        .step_by(share)
        .map(|at| EngineCopy {
            dst: whole.dst + at,
            src: whole.src + at,
            len: share.min(whole.len - at),
            ..*whole
        })
        .collect()
}

/// Engines a large locked copy is spread over: hsasim's GPUs have two by default, and MI200
/// and MI300 parts more.
const ENGINES_PER_COPY: usize = 2;

/// The engine copies in flight from or to each staging buffer of one staged copy.
struct StagingPipeline<'a> {
    device: &'a Device,
    buffers: &'a [StagingBuffer; 2],
    in_flight: [Option<InFlight>; 2],
}

/// Engine copies issued on one staging buffer's signal, not yet waited for.
struct InFlight {
    copies: Vec<EngineCopy>,
    issued: HipResult<Option<u32>>,
    submit_ns: u64,
    /// Through a staging buffer (for the trace), or straight from or to locked pages.
    staged: bool,
}

impl StagingPipeline<'_> {
    /// Issues `copies` to or from buffer `k` (which must not be in flight) without waiting.
    fn start(&mut self, k: usize, copies: Vec<EngineCopy>) {
        debug_assert!(self.in_flight[k].is_none());
        // SAFETY: one side is staging buffer `k` (ours under the device's `copy` lock, which
        // outlives this pipeline), the other device memory or engine-reachable host memory,
        // covering `len` bytes until `finish(k)` waits.
        self.in_flight[k] =
            unsafe { InFlight::issue(self.device, &self.buffers[k].signal, copies, true) };
    }

    /// Waits for buffer `k`'s copies (if any); an issue failure is reported here, after the
    /// parts that were issued have completed.
    fn finish(&mut self, k: usize) -> HipResult {
        match self.in_flight[k].take() {
            Some(flight) => flight.wait(self.device, &self.buffers[k].signal),
            None => Ok(()),
        }
    }
}

impl InFlight {
    /// Issues `copies` (none: nothing to wait for) on the engines, counted on `signal`.
    ///
    /// # Safety
    /// One side of each copy is a staging buffer the caller holds under the device's `copy`
    /// lock until [`InFlight::wait`] returns; the other is device memory or engine-reachable
    /// host memory covering `len` bytes.
    unsafe fn issue(
        device: &Device,
        signal: &Signal,
        copies: Vec<EngineCopy>,
        staged: bool,
    ) -> Option<InFlight> {
        if copies.is_empty() {
            return None;
        }
        let submit_ns = trace_now();
        signal.store(copies.len() as i64);
        // SAFETY: forwarded contract; no dependencies.
        let issued = unsafe {
            issue(
                &device.engines,
                device.cpu_agent,
                &copies,
                &[],
                signal,
                None,
            )
        };
        Some(InFlight {
            copies,
            issued,
            submit_ns,
            staged,
        })
    }

    /// Waits until the copies that were issued are done; then reports an issue failure, or
    /// records the copies in the trace.
    fn wait(self, device: &Device, signal: &Signal) -> HipResult {
        let waited = signal
            .wait_zero(device.timestamp_hz, || None::<HipError>)
            .map_err(|_| HipError::UNKNOWN);
        let engine = self.issued?;
        waited?;
        let info = copy_info(
            (device.index, device.cpu_agent),
            &self.copies,
            engine,
            self.staged,
            self.submit_ns,
        );
        if super::base::callbacks::watching() {
            let kind = super::base::callbacks::copy_kind(info.direction);
            super::base::callbacks::copy_completed(info.device, kind, info.bytes, signal.handle);
        }
        if crate::trace::recording() {
            crate::trace::record::copy_completed(info, signal.handle);
        }
        Ok(())
    }
}

impl Drop for StagingPipeline<'_> {
    fn drop(&mut self) {
        // An early return left copies in flight: they still write or read the buffers.
        for k in 0..2 {
            let _ = self.finish(k);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Fills

/// A pattern fill of `height` rows of `width` bytes, `pitch` apart: byte `i` of each row is
/// `pattern[i % element]`.
#[derive(Clone, Copy, Debug)]
struct Fill {
    dst: usize,
    pitch: usize,
    width: usize,
    height: usize,
    pattern: [u8; 4],
    element: usize,
}

impl Fill {
    fn byte_at(&self, offset: usize) -> u8 {
        self.pattern[offset % self.element]
    }

    /// Bytes from the first to the last byte written.
    fn extent(&self) -> Option<usize> {
        self.pitch
            .checked_mul(self.height - 1)?
            .checked_add(self.width)
    }

    /// Fills device memory of `device`, synchronously: the engine fills each row's aligned
    /// middle, the staging buffer the unaligned ends (batched on one signal).
    ///
    /// The device's copy lock is taken only for unaligned ends (an aligned fill needs no
    /// staging). A stream fill runs as a host task and waits here for its end copies: that
    /// wait ends because no engine holds a job waiting for other work (see `ordered_copies`).
    fn on_device(&self, device: &Device) -> HipResult {
        let mut copy = None;
        let mut ends: Vec<EngineCopy> = Vec::new();
        let mut used = 0;
        for r in 0..self.height {
            let row = self.dst + r * self.pitch;
            let head = ((4 - row % 4) % 4).min(self.width);
            let words = (self.width - head) / 4;
            let tail = self.width - head - words * 4;
            if words > 0 {
                // The element size divides 4, so every word of the aligned middle holds the
                // same four pattern bytes.
                let word = u32::from_le_bytes(std::array::from_fn(|k| self.byte_at(head + k)));
                // SAFETY: `[row + head, + 4 * words)` lies in a device allocation (checked by
                // the caller through the registry) and is 4-byte aligned.
                unsafe { device.engines.fill(row + head, word, words) }?;
            }
            for (offset, len) in [(0, head), (head + words * 4, tail)] {
                if len == 0 {
                    continue;
                }
                let fills = &copy.get_or_insert_with(|| device.copy.lock()).staging[0];
                let staging = fills.memory.as_ptr() as usize;
                for k in 0..len {
                    // SAFETY: staging holds STAGING_BYTES (more than MAX_BATCH ends of at most
                    // 3 bytes) and is ours under `copy`.
                    unsafe { ((staging + used + k) as *mut u8).write(self.byte_at(offset + k)) };
                }
                ends.push(EngineCopy {
                    dst: row + offset,
                    dst_agent: device.agent,
                    src: staging + used,
                    src_agent: device.cpu_agent,
                    len,
                });
                used += len;
                if ends.len() == MAX_BATCH {
                    staged_copies(device, &fills.signal, std::mem::take(&mut ends))?;
                    used = 0;
                }
            }
        }
        match &copy {
            Some(copy) => staged_copies(device, &copy.staging[0].signal, ends),
            None => Ok(()),
        }
    }

    /// Fills host memory (pinned, registered or managed) with the CPU.
    fn on_host(&self) {
        for r in 0..self.height {
            // SAFETY: the registry says this range is live host memory; the program may not
            // free it while the fill is pending.
            let row = unsafe {
                std::slice::from_raw_parts_mut((self.dst + r * self.pitch) as *mut u8, self.width)
            };
            for (i, b) in row.iter_mut().enumerate() {
                *b = self.byte_at(i);
            }
        }
    }
}

/// Fills `count` elements of `pattern.len()` bytes (1, 2 or 4) at `dst` with the pattern,
/// synchronously (hipMemset, hipMemsetD8/D16/D32).
pub fn memset_pattern(
    devices: Devices<'_>,
    dst: *mut c_void,
    pattern: &[u8],
    count: usize,
) -> HipResult {
    let size = count
        .checked_mul(pattern.len())
        .ok_or(HipError::INVALID_VALUE)?;
    memset_2d_pattern(devices, dst, size, pattern, size, 1)
}

/// Fills `size` bytes at `dst` with `value` (checked against the registry, so any pointer
/// value is safe to pass).
pub fn memset(devices: Devices<'_>, dst: *mut c_void, value: u8, size: usize) -> HipResult {
    memset_pattern(devices, dst, &[value], size)
}

/// `hipMemset2D`: `height` rows of `width` bytes, `pitch` apart.
pub fn memset_2d(
    devices: Devices<'_>,
    dst: *mut c_void,
    pitch: usize,
    value: u8,
    width: usize,
    height: usize,
) -> HipResult {
    if width > pitch && height > 1 {
        return Err(rows_past_pitch(width, pitch));
    }
    memset_2d_pattern(devices, dst, pitch, &[value], width, height)
}

fn memset_2d_pattern(
    devices: Devices<'_>,
    dst: *mut c_void,
    pitch: usize,
    pattern: &[u8],
    width: usize,
    height: usize,
) -> HipResult {
    debug_assert!(matches!(pattern.len(), 1 | 2 | 4));
    if width == 0 || height == 0 {
        return Ok(());
    }
    if dst.is_null() {
        return Err(HipError::INVALID_VALUE);
    }
    let mut bytes = [0; 4];
    bytes[..pattern.len()].copy_from_slice(pattern);
    let fill = Fill {
        dst: dst as usize,
        pitch,
        width,
        height,
        pattern: bytes,
        element: pattern.len(),
    };
    let extent = fill.extent().ok_or(HipError::INVALID_VALUE)?;
    // Past its checks, every fill needs the runtime.
    let current = devices.current?;
    match classify(dst as usize, extent, Some(true), "memset")? {
        Side::Device(d) => {
            let device = devices.get(d)?;
            after_legacy_work(device)?;
            fill.on_device(device)
        }
        Side::Pinned(_) => {
            // Host memory: the CPU fills it once the work ordered before it is done.
            after_legacy_work(current)?;
            fill.on_host();
            Ok(())
        }
        Side::Pageable => unreachable!("classify rejects unknown ranges said to be device"),
    }
}

/// `hipMemsetD2D8/D16/D32`: `height` rows of `width` elements of `pattern.len()` bytes (1, 2
/// or 4), rows `pitch` bytes apart, synchronously.
pub fn memset_2d_elements(
    devices: Devices<'_>,
    dst: *mut c_void,
    pitch: usize,
    pattern: &[u8],
    width: usize,
    height: usize,
) -> HipResult {
    let bytes = width
        .checked_mul(pattern.len())
        .ok_or(HipError::INVALID_VALUE)?;
    if bytes > pitch && height > 1 {
        return Err(rows_past_pitch(bytes, pitch));
    }
    memset_2d_pattern(devices, dst, pitch, pattern, bytes, height)
}

/// A 2D fill whose rows are wider than their pitch: hipErrorInvalidValue, as AMD answers (its
/// 2D fills are 3D ones, checked alike; hip-tests check it) where 2D copies answer
/// hipErrorInvalidPitchValue.
#[cold]
fn rows_past_pitch(row: usize, pitch: usize) -> HipError {
    tracing::warn!(row, pitch, "fill rows wider than their pitch");
    HipError::INVALID_VALUE
}

/// `hipMemsetAsync` / `hipMemsetD8/D16/D32Async`: `count` elements of `element` bytes (1, 2 or
/// 4), each `value`'s low bytes, at `dst`, in `stream`'s order: a host task in the stream.
pub fn memset_async(
    devices: Devices<'static>,
    dst: *mut c_void,
    value: u32,
    element: usize,
    count: usize,
    stream: *mut c_void,
) -> HipResult {
    let bytes = count.checked_mul(element).ok_or(HipError::INVALID_VALUE)?;
    memset_2d_async(devices, dst, bytes, value, element, count, 1, stream)
}

/// `hipMemset2DAsync`, `hipMemsetD2D*Async`: `height` rows of `width` elements of `element`
/// bytes (1, 2 or 4), rows `pitch` bytes apart, in `stream`'s order: a host task in the stream.
#[allow(clippy::too_many_arguments)]
pub fn memset_2d_async(
    devices: Devices<'static>,
    dst: *mut c_void,
    pitch: usize,
    value: u32,
    element: usize,
    width: usize,
    height: usize,
    stream: *mut c_void,
) -> HipResult {
    debug_assert!(matches!(element, 1 | 2 | 4));
    let (device, stream) = stream::lookup(devices.all, stream)?;
    if width == 0 || height == 0 {
        return Ok(());
    }
    if dst.is_null() {
        return Err(HipError::INVALID_VALUE);
    }
    let row = width.checked_mul(element).ok_or(HipError::INVALID_VALUE)?;
    if !(dst as usize).is_multiple_of(element) {
        tracing::warn!(
            element,
            dst = format_args!("{dst:p}"),
            "fill destination not aligned to its element size"
        );
        return Err(HipError::INVALID_VALUE);
    }
    if row > pitch && height > 1 {
        return Err(rows_past_pitch(row, pitch));
    }
    let fill = Fill {
        dst: dst as usize,
        pitch,
        width: row,
        height,
        pattern: value.to_le_bytes(),
        element,
    };
    let bytes = fill.extent().ok_or(HipError::INVALID_VALUE)?;
    match classify(dst as usize, bytes, None, "fill destination")? {
        Side::Device(i) => {
            let owner = devices.get(i)?;
            stream::enqueue_host_task(
                &device.streams,
                &stream,
                Box::new(move || {
                    fill.on_device(owner).inspect_err(|e| {
                        tracing::error!(
                            bytes = fill.width,
                            error = ?e,
                            "a stream fill failed; its stream reports the error"
                        )
                    })
                }),
            )
        }
        Side::Pinned(_) => stream::enqueue_host_task(
            &device.streams,
            &stream,
            Box::new(move || {
                fill.on_host();
                Ok(())
            }),
        ),
        Side::Pageable => {
            tracing::warn!(
                "hipMemsetAsync: the range is not inside a device or pinned host allocation"
            );
            Err(HipError::INVALID_VALUE)
        }
    }
}

/// `hipStreamWriteValue32/64`: writes the low `bytes` (4 or 8) bytes of `value` at `dst`,
/// naturally aligned device memory or host memory the devices reach, after `stream`'s earlier
/// work and before its later work: a host task in the stream, as a stream fill is. Device
/// memory is written by a copy engine from the staging buffer (the host may not touch it),
/// reachable host memory by one atomic store, so a wait on it never sees half a value.
pub fn write_value_async(
    devices: Devices<'static>,
    stream: *mut c_void,
    dst: *mut c_void,
    value: u64,
    bytes: usize,
) -> HipResult {
    let write = ValueWrite::check(devices, dst as usize, value, bytes)?;
    let (device, stream) = stream::lookup(devices.all, stream)?;
    write.submit(device, &stream)
}

/// A stream value write whose arguments are checked, not yet enqueued.
#[derive(Clone, Copy)]
struct ValueWrite {
    at: usize,
    value: u64,
    bytes: usize,
    /// The device whose memory is written, or none for host memory the devices reach.
    owner: Option<&'static Device>,
}

impl ValueWrite {
    fn check(
        devices: Devices<'static>,
        at: usize,
        value: u64,
        bytes: usize,
    ) -> HipResult<ValueWrite> {
        let at = stream::value::checked_target(at as *mut c_void, bytes, "hipStreamWriteValue")?;
        let owner = match classify(at, bytes, None, "stream write value")? {
            Side::Device(i) => Some(devices.get(i)?),
            Side::Pinned(_) => None,
            Side::Pageable => {
                return Err(stream::value::not_device_accessible(
                    "hipStreamWriteValue",
                    at,
                ))
            }
        };
        Ok(ValueWrite {
            at,
            value,
            bytes,
            owner,
        })
    }

    fn submit(self, device: &Device, stream: &Stream) -> HipResult {
        let ValueWrite {
            at,
            value,
            bytes,
            owner,
        } = self;
        let value_bytes = value.to_le_bytes();
        match owner {
            Some(owner) => stream::enqueue_host_task(
                &device.streams,
                stream,
                Box::new(move || {
                    let copy = owner.copy.lock();
                    let staging = &copy.staging[0];
                    let src = staging.memory.as_ptr() as usize;
                    // SAFETY: the staging buffer holds STAGING_BYTES (more than 8) and is
                    // ours under `copy`.
                    unsafe {
                        std::ptr::copy_nonoverlapping(value_bytes.as_ptr(), src as *mut u8, bytes)
                    };
                    let write = EngineCopy {
                        dst: at,
                        dst_agent: owner.agent,
                        src,
                        src_agent: owner.cpu_agent,
                        len: bytes,
                    };
                    staged_copies(owner, &staging.signal, vec![write]).inspect_err(|e| {
                        tracing::error!(error = ?e, "a stream value write failed; its stream reports the error")
                    })
                }),
            ),
            None => stream::enqueue_host_task(
                &device.streams,
                stream,
                Box::new(move || {
                    // SAFETY: the registry said `[at, at + bytes)` is live host memory, naturally
                    // aligned (checked); the program may not free it while the write is
                    // pending, and device work may read it meanwhile, hence atomics.
                    unsafe {
                        if bytes == 4 {
                            std::sync::atomic::AtomicU32::from_ptr(at as *mut u32)
                                .store(value as u32, std::sync::atomic::Ordering::Release);
                        } else {
                            std::sync::atomic::AtomicU64::from_ptr(at as *mut u64)
                                .store(value, std::sync::atomic::Ordering::Release);
                        }
                    }
                    Ok(())
                }),
            ),
        }
    }
}

/// `hipStreamBatchMemOp`: the operations in `ops`, in order, on `stream`, as the single
/// `hipStreamWaitValue*` and `hipStreamWriteValue*` calls would enqueue them. Every operation
/// is checked before the first is enqueued, so a refused batch leaves the stream as it was.
pub fn batch_mem_op(devices: Devices<'static>, stream: *mut c_void, ops: &[MemOp]) -> HipResult {
    enum Checked {
        Wait(stream::value::Wait),
        Write(ValueWrite),
    }
    let checked = ops
        .iter()
        .map(|op| match *op {
            MemOp::Wait {
                ptr,
                value,
                flags,
                bytes,
            } => stream::value::Wait::check(ptr as *mut c_void, value, flags, u64::MAX, bytes)
                .map(Checked::Wait),
            MemOp::Write { ptr, value, bytes } => {
                ValueWrite::check(devices, ptr, value, bytes).map(Checked::Write)
            }
        })
        .collect::<HipResult<Vec<_>>>()?;
    let (device, stream) = stream::lookup(devices.all, stream)?;
    for op in checked {
        match op {
            Checked::Wait(wait) => wait.submit(device, &stream)?,
            Checked::Write(write) => write.submit(device, &stream)?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::mem::memory::{test_registry, MemKind};

    #[test]
    fn fill_patterns_repeat_per_element_from_the_start() {
        let f = Fill {
            dst: 0x1002,
            pitch: 10,
            width: 10,
            height: 1,
            pattern: 0xaabb_u32.to_le_bytes(),
            element: 2,
        };
        let bytes: Vec<u8> = (0..10).map(|i| f.byte_at(i)).collect();
        assert_eq!(
            bytes,
            [0xbb, 0xaa, 0xbb, 0xaa, 0xbb, 0xaa, 0xbb, 0xaa, 0xbb, 0xaa]
        );
    }

    #[test]
    fn explicit_kinds_must_name_device_memory_on_their_device_side() {
        let (dev, host) = (Side::Device(0), Side::Pageable);
        assert!(check_kind(CopyKind::HostToDevice, dev, host).is_ok());
        assert!(check_kind(CopyKind::HostToDevice, host, host).is_err());
        assert!(check_kind(CopyKind::DeviceToHost, host, dev).is_ok());
        assert!(check_kind(CopyKind::DeviceToHost, dev, Side::Pinned(0x1000)).is_err());
        assert!(check_kind(CopyKind::DeviceToDevice, dev, host).is_err());
        assert!(check_kind(CopyKind::Default, host, host).is_ok());
    }

    /// hsasim's `hsa_amd_memory_lock` hands back the host pointer, so no end-to-end test can
    /// tell the two addresses apart: this one plants a registered range whose agent address
    /// differs, and checks which address each entry point's planning hands to the engines.
    #[test]
    fn engine_copies_of_registered_memory_use_its_agent_address() {
        let (host, agent_address) = (0x60_0000, 0x7000_0000);
        let device = 0x68_0000;
        let _entries = test_registry(&[
            (host, 0x1000, MemKind::Registered, agent_address),
            (device, 0x1000, MemKind::Device, device),
        ]);
        let (gpu, cpu) = (hsa_agent_t { handle: 1 }, hsa_agent_t { handle: 2 });
        let to_device = |t: Transfer| t.engine_pieces(gpu, cpu);
        let rows = Rows::linear(0x100);
        let (d, h) = (device as *mut c_void, (host + 0x10) as *const c_void);
        let copy = CopyRequest {
            dst: d,
            src: h,
            rows,
            kind: CopyKind::HostToDevice,
        };
        let sync = Transfer::new(copy, copy.kind.device_sides());
        let stream = stream_transfer(copy);
        for t in [sync, stream] {
            let pieces = to_device(t.unwrap().unwrap());
            assert_eq!(pieces.len(), 1);
            assert_eq!(pieces[0].src, agent_address + 0x10);
            assert_eq!(pieces[0].dst, device);
        }
        // Row by row, the other way.
        let rows = Rows {
            width: 0x10,
            height: 3,
            dst_pitch: 0x40,
            src_pitch: 0x20,
        };
        let (h, d) = (host as *mut c_void, device as *const c_void);
        let copy = CopyRequest {
            dst: h,
            src: d,
            rows,
            kind: CopyKind::DeviceToHost,
        };
        let sync = Transfer::new(copy, copy.kind.device_sides());
        let stream = stream_transfer(CopyRequest {
            kind: CopyKind::Default,
            ..copy
        });
        for t in [sync, stream] {
            let dsts: Vec<usize> = t
                .unwrap()
                .unwrap()
                .engine_pieces(cpu, gpu)
                .iter()
                .map(|p| p.dst)
                .collect();
            assert_eq!(
                dsts,
                [agent_address, agent_address + 0x40, agent_address + 0x80]
            );
        }
    }

    #[test]
    fn row_extent_covers_first_to_last_byte() {
        let rows = Rows {
            width: 10,
            height: 3,
            dst_pitch: 64,
            src_pitch: 10,
        };
        assert_eq!(rows.extent(64), Some(138));
        assert_eq!(rows.extent(10), Some(30));
        assert_eq!(Rows::linear(7).extent(7), Some(7));
    }

    #[test]
    fn staging_batches_split_rows_and_fill_the_buffer() {
        let rows = Rows {
            width: STAGING_BYTES + 10,
            height: 2,
            dst_pitch: STAGING_BYTES + 10,
            src_pitch: STAGING_BYTES + 10,
        };
        let batches = staging_batches(rows);
        let total: usize = batches.iter().flatten().map(|s| s.2).sum();
        assert_eq!(total, 2 * (STAGING_BYTES + 10));
        for b in &batches {
            assert!(b.iter().map(|s| s.2).sum::<usize>() <= STAGING_BYTES);
        }
        let small = Rows {
            width: 100,
            height: 5,
            dst_pitch: 256,
            src_pitch: 100,
        };
        assert_eq!(staging_batches(small).len(), 1);
    }

    #[test]
    fn copy_kinds_beyond_default_are_rejected() {
        assert_eq!(CopyKind::from_raw(4), Ok(CopyKind::Default));
        assert_eq!(
            CopyKind::from_raw(5),
            Err(HipError::INVALID_MEMCPY_DIRECTION)
        );
    }
}

//! Stream-ordered copies and fills: work ordered after a stream's earlier operations and before
//! its later ones.
//!
//! - **Device and pinned host memory** are copied asynchronously by the HSA runtime's copy
//!   engines (`hsa_amd_memory_async_copy_on_engine` when the runtime has it, else
//!   `hsa_amd_memory_async_copy`). The copy depends on a marker covering the stream's earlier
//!   work and completes a gate signal that the stream's next packet waits for (see
//!   `stream.rs`). The host does not wait.
//! - **Pageable host memory** cannot be reached by the copy engines, so (as CUDA documents for
//!   pageable memory) such a copy is synchronous with respect to the host: it waits for the
//!   stream's earlier work, then copies through the device's pinned staging buffer, and returns
//!   when done. Host-to-host copies likewise.
//! - **Fills** run as a host task in the stream (on hipshim's callback thread once earlier work
//!   is complete): `hsa_amd_memory_fill` writes the 4-byte-aligned middle (it needs 4-byte
//!   alignment and a count of 32-bit words) and the staging buffer supplies the up to 3 bytes
//!   at either end, so every alignment and element size (8, 16, 32 bits) is handled.

use super::device::{Device, STAGING_BYTES};
use super::memory::{self, CopyKind, Residence};
use super::runtime;
use super::stream::{self, Stream};
use crate::error::{HipError, HipResult};
use crate::hsa::copy::EngineCopy;
use crate::hsa::HsaError;
use hsa_abi::*;
use std::ffi::c_void;

/// One contiguous piece of a copy.
#[derive(Clone, Copy, Debug)]
struct Piece {
    dst: usize,
    src: usize,
    len: usize,
}

/// `hipMemcpyAsync` and friends: copies `size` bytes in `stream`'s order.
///
/// # Safety
/// Host-side ranges must be valid for `size` bytes until the copy completes (pinned memory) or
/// the call returns (pageable memory); device-side ranges are checked against the allocation
/// table, so any pointer value is safe there.
pub unsafe fn memcpy_async(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    kind: CopyKind,
    stream: *mut c_void,
) -> HipResult {
    // SAFETY: a 1-row 2D copy is the same contract.
    unsafe { memcpy_2d_async(dst, size, src, size, size, 1, kind, stream) }
}

/// `hipMemcpy2DAsync`: `height` rows of `width` bytes, rows `dpitch`/`spitch` bytes apart.
///
/// # Safety
/// As for [`memcpy_async`], for every row.
#[allow(clippy::too_many_arguments)]
pub unsafe fn memcpy_2d_async(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: CopyKind,
    stream: *mut c_void,
) -> HipResult {
    let (device, stream) = stream::lookup(stream)?;
    if width == 0 || height == 0 {
        return Ok(());
    }
    if dst.is_null() || src.is_null() {
        return Err(HipError::INVALID_VALUE);
    }
    if width > dpitch || width > spitch {
        tracing::warn!(width, dpitch, spitch, "2D copy wider than its pitch");
        return Err(HipError::INVALID_PITCH_VALUE);
    }
    let span = |pitch: usize| {
        pitch
            .checked_mul(height - 1)
            .and_then(|n| n.checked_add(width))
            .ok_or(HipError::INVALID_VALUE)
    };
    let (dst_span, src_span) = (span(dpitch)?, span(spitch)?);
    let (dst_at, src_at) = (
        memory::residence(dst as usize, dst_span, "destination")?,
        memory::residence(src as usize, src_span, "source")?,
    );
    check_kind(kind, dst_at, src_at)?;
    let pieces = move || {
        (0..height).map(move |row| Piece {
            dst: dst as usize + row * dpitch,
            src: src as usize + row * spitch,
            len: width,
        })
    };
    // Contiguous rows are one copy.
    let contiguous = dpitch == width && spitch == width;
    let one = [Piece {
        dst: dst as usize,
        src: src as usize,
        len: width * height,
    }];
    use Residence::*;
    match (dst_at, src_at) {
        (Device(_) | PinnedHost, Device(_)) | (Device(_), PinnedHost) => {
            let rt = runtime()?;
            let agent = |at: Residence| -> HipResult<hsa_agent_t> {
                Ok(match at {
                    Device(i) => rt.device(i)?.agent,
                    _ => device.cpu_agent,
                })
            };
            let (dst_agent, src_agent) = (agent(dst_at)?, agent(src_at)?);
            if contiguous {
                engine_copies(device, &stream, &one, dst_agent, src_agent)
            } else {
                let rows: Vec<Piece> = pieces().collect();
                engine_copies(device, &stream, &rows, dst_agent, src_agent)
            }
        }
        (Device(i), Pageable) | (Pageable, Device(i)) => {
            stream.host_fence(device)?;
            let owner = runtime()?.device(i)?;
            let to_device = matches!(dst_at, Device(_));
            tracing::trace!(
                bytes = width * height,
                to_device,
                "stream copy through staging (pageable host memory)"
            );
            if contiguous {
                staged_copy(owner, one[0], to_device)
            } else {
                pieces().try_for_each(|p| staged_copy(owner, p, to_device))
            }
        }
        _ => {
            // Both sides in host memory: the CPU copies once the stream's work is done.
            stream.host_fence(device)?;
            for p in pieces() {
                // SAFETY: both ranges are host memory valid for `len` bytes (caller's
                // contract); `copy` tolerates overlap.
                unsafe { std::ptr::copy(p.src as *const u8, p.dst as *mut u8, p.len) };
            }
            Ok(())
        }
    }
}

/// Rejects explicit kinds whose device side is not device memory (the host side cannot be
/// checked); `hipMemcpyDefault` takes the direction from where the pointers live.
fn check_kind(kind: CopyKind, dst: Residence, src: Residence) -> HipResult {
    let on_device = |r: Residence| matches!(r, Residence::Device(_));
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

/// Enqueues `pieces` on the copy engines in `stream`'s order, with one completion signal
/// counting them down.
fn engine_copies(
    device: &Device,
    stream: &Stream,
    pieces: &[Piece],
    dst_agent: hsa_agent_t,
    src_agent: hsa_agent_t,
) -> HipResult {
    let to_device = src_agent.handle == device.cpu_agent.handle;
    let direction =
        crate::trace::Direction::of(to_device, dst_agent.handle == device.cpu_agent.handle);
    stream.enqueue_external(device, pieces.len() as i64, |after, done| {
        let marker = after.map(|m| [m.handle()]);
        let deps: &[hsa_signal_t] = marker.as_ref().map_or(&[], |m| m.as_slice());
        let submit_ns = if crate::trace::recording() {
            crate::trace::record::now_ns()
        } else {
            0
        };
        let mut engine = None;
        for (issued, p) in pieces.iter().enumerate() {
            let copy = EngineCopy {
                dst: p.dst,
                dst_agent,
                src: p.src,
                src_agent,
                len: p.len,
            };
            // SAFETY: both ranges are device-accessible and cover `len` bytes (checked by the
            // caller) until the copy completes; `deps` and `done` are live pooled signals the
            // stream keeps until then.
            let copied = unsafe { issue_copy(device, &copy, deps, done.handle(), to_device) };
            match copied {
                Ok(used) => engine = used,
                Err(e) => {
                    // Let the stream go on past the copies that were issued.
                    done.signal().add(-((pieces.len() - issued) as i64));
                    return Err(e.into());
                }
            }
        }
        let bytes: usize = pieces.iter().map(|p| p.len).sum();
        tracing::debug!(
            target: "hipshim::copy",
            device = device.index,
            engine = engine.map_or(-1, |e| e.trailing_zeros() as i64),
            bytes,
            pieces = pieces.len(),
            direction = direction.label(),
            staged = false,
            "stream copy on the copy engine"
        );
        if crate::trace::recording() {
            crate::trace::record::copy_submitted(
                crate::trace::record::CopyInfo {
                    engine,
                    device: device.index as u32,
                    bytes: bytes as u64,
                    pieces: pieces.len() as u32,
                    direction,
                    staged: false,
                    submit_ns,
                },
                done,
            );
        }
        Ok(())
    })
}

/// One copy on a copy engine: host-to-device on one engine, the rest on another where the
/// runtime lets us choose, so the two directions overlap. Returns the engine chosen (its
/// bit), or `None` when the runtime chose.
///
/// # Safety
/// As for [`crate::hsa::copy::CopyEngines::start`].
unsafe fn issue_copy(
    device: &Device,
    copy: &EngineCopy,
    deps: &[hsa_signal_t],
    completion: hsa_signal_t,
    to_device: bool,
) -> Result<Option<u32>, HsaError> {
    let preferred = if to_device { 1 } else { 2 };
    // SAFETY: per this function's contract.
    unsafe {
        device
            .engines
            .start(copy, deps, completion, Some(preferred))
    }
}

/// A synchronous copy between pageable host memory and `device` through its staging buffer.
fn staged_copy(device: &Device, piece: Piece, to_device: bool) -> HipResult {
    let copy = device.copy.lock();
    let staging = copy.staging.as_ptr();
    let mut done = 0;
    while done < piece.len {
        let n = (piece.len - done).min(STAGING_BYTES);
        if to_device {
            // SAFETY: the caller's source covers `len` bytes; staging holds STAGING_BYTES and
            // is ours while `copy` is locked.
            unsafe { std::ptr::copy_nonoverlapping((piece.src + done) as *const u8, staging, n) };
            engine_copy_wait(
                device,
                &copy.signal,
                (piece.dst + done) as *mut c_void,
                device.agent,
                staging as *const c_void,
                device.cpu_agent,
                n,
            )?;
        } else {
            engine_copy_wait(
                device,
                &copy.signal,
                staging as *mut c_void,
                device.cpu_agent,
                (piece.src + done) as *const c_void,
                device.agent,
                n,
            )?;
            // SAFETY: the caller's destination covers `len` bytes.
            unsafe { std::ptr::copy_nonoverlapping(staging, (piece.dst + done) as *mut u8, n) };
        }
        done += n;
    }
    Ok(())
}

/// One copy-engine copy, waited for on the host.
fn engine_copy_wait(
    device: &Device,
    signal: &crate::hsa::signal::Signal,
    dst: *mut c_void,
    dst_agent: hsa_agent_t,
    src: *const c_void,
    src_agent: hsa_agent_t,
    len: usize,
) -> HipResult {
    signal.store(1);
    let to_device = dst_agent.handle == device.agent.handle;
    let submit_ns = if crate::trace::recording() {
        crate::trace::record::now_ns()
    } else {
        0
    };
    let copy = EngineCopy {
        dst: dst as usize,
        dst_agent,
        src: src as usize,
        src_agent,
        len,
    };
    // SAFETY: the caller's ranges (one of them the staging buffer, held under the `copy`
    // lock) cover `len` bytes until the wait below; `signal` is the device's copy signal.
    let engine = unsafe { issue_copy(device, &copy, &[], signal.handle, to_device) }?;
    let direction = crate::trace::Direction::of(
        src_agent.handle == device.cpu_agent.handle,
        dst_agent.handle == device.cpu_agent.handle,
    );
    tracing::debug!(
        target: "hipshim::copy",
        device = device.index,
        engine = engine.map_or(-1, |e| e.trailing_zeros() as i64),
        bytes = len,
        direction = direction.label(),
        staged = true,
        "staged copy on the copy engine"
    );
    signal
        .wait_zero(device.timestamp_hz, || None::<HipError>)
        .map_err(|_| HipError::UNKNOWN)?;
    if crate::trace::recording() {
        crate::trace::record::copy_completed(
            crate::trace::record::CopyInfo {
                engine,
                device: device.index as u32,
                bytes: len as u64,
                pieces: 1,
                direction,
                staged: true,
                submit_ns,
            },
            signal.handle,
        );
    }
    Ok(())
}

/// `hipMemsetAsync` / `hipMemsetD8/D16/D32Async`: `count` elements of `element` bytes (1, 2 or
/// 4), each `value`'s low bytes, at `dst`, in `stream`'s order.
pub fn memset_async(
    dst: *mut c_void,
    value: u32,
    element: usize,
    count: usize,
    stream: *mut c_void,
) -> HipResult {
    debug_assert!(matches!(element, 1 | 2 | 4));
    let (device, stream) = stream::lookup(stream)?;
    if count == 0 {
        return Ok(());
    }
    if dst.is_null() {
        return Err(HipError::INVALID_VALUE);
    }
    let bytes = count.checked_mul(element).ok_or(HipError::INVALID_VALUE)?;
    if !(dst as usize).is_multiple_of(element) {
        tracing::warn!(
            element,
            dst = format_args!("{dst:p}"),
            "fill destination not aligned to its element size"
        );
        return Err(HipError::INVALID_VALUE);
    }
    let pattern = value.to_le_bytes();
    let fill = Fill {
        dst: dst as usize,
        bytes,
        pattern,
        element,
    };
    match memory::residence(dst as usize, bytes, "fill destination")? {
        Residence::Device(i) => {
            let owner = runtime()?.device(i)?;
            stream::enqueue_host_task(
                device,
                &stream,
                Box::new(move || {
                    fill.on_device(owner).inspect_err(|e| {
                        tracing::error!(
                            bytes = fill.bytes,
                            error = ?e,
                            "a stream fill failed; its stream reports the error"
                        )
                    })
                }),
            )
        }
        Residence::PinnedHost => stream::enqueue_host_task(
            device,
            &stream,
            Box::new(move || {
                // SAFETY: pinned host memory of at least `bytes` bytes (the allocation table
                // says so); the program may not free it while the fill is pending.
                let out =
                    unsafe { std::slice::from_raw_parts_mut(fill.dst as *mut u8, fill.bytes) };
                for (i, b) in out.iter_mut().enumerate() {
                    *b = fill.byte_at(i);
                }
                Ok(())
            }),
        ),
        Residence::Pageable => {
            tracing::warn!(
                "hipMemsetAsync: the range is not inside a device or pinned host allocation"
            );
            Err(HipError::INVALID_VALUE)
        }
    }
}

/// A pattern fill: byte `i` of the range is `pattern[i % element]`.
#[derive(Clone, Copy)]
struct Fill {
    dst: usize,
    bytes: usize,
    pattern: [u8; 4],
    element: usize,
}

impl Fill {
    fn byte_at(&self, offset: usize) -> u8 {
        self.pattern[offset % self.element]
    }

    /// Runs on the callback thread, after the stream's earlier work.
    fn on_device(&self, device: &Device) -> HipResult {
        let head = ((4 - self.dst % 4) % 4).min(self.bytes);
        let words = (self.bytes - head) / 4;
        let tail = self.bytes - head - words * 4;
        if words > 0 {
            let start = self.dst + head;
            // The element size divides 4 and `dst` is element-aligned, so every word of the
            // aligned middle holds the same four pattern bytes.
            let word = u32::from_le_bytes(std::array::from_fn(|k| self.byte_at(head + k)));
            // SAFETY: `[start, start + 4 * words)` lies in a device allocation (checked by the
            // caller through the allocation table) and `start` is 4-byte aligned.
            unsafe { device.engines.fill(start, word, words) }?;
        }
        for (offset, len) in [(0, head), (head + words * 4, tail)] {
            if len == 0 {
                continue;
            }
            let copy = device.copy.lock();
            for k in 0..len {
                // SAFETY: staging holds STAGING_BYTES (> 3) and is ours under `copy`.
                unsafe { copy.staging.as_ptr().add(k).write(self.byte_at(offset + k)) };
            }
            engine_copy_wait(
                device,
                &copy.signal,
                (self.dst + offset) as *mut c_void,
                device.agent,
                copy.staging.as_ptr() as *const c_void,
                device.cpu_agent,
                len,
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_patterns_repeat_per_element_from_the_start() {
        let f = Fill {
            dst: 0x1002,
            bytes: 10,
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
        use Residence::*;
        assert!(check_kind(CopyKind::HostToDevice, Device(0), Pageable).is_ok());
        assert!(check_kind(CopyKind::HostToDevice, Pageable, Pageable).is_err());
        assert!(check_kind(CopyKind::DeviceToHost, Pageable, Device(0)).is_ok());
        assert!(check_kind(CopyKind::DeviceToHost, Device(0), PinnedHost).is_err());
        assert!(check_kind(CopyKind::DeviceToDevice, Device(0), Pageable).is_err());
        assert!(check_kind(CopyKind::Default, Pageable, Pageable).is_ok());
    }
}

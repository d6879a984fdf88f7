//! Asynchronous copies on the SDMA engines.

use super::shell::guard;
use crate::agent::Agent;
use crate::cabi::out;
use crate::error::{HsaError, HsaResult};
use crate::memory::node_bit;
use crate::sdma::{CopyJob, CopyShape, SdmaEngine};
use crate::signal::Signal;
use crate::system::{rt, Runtime};
use hsa_abi::*;
use std::ffi::c_void;
use std::sync::atomic::Ordering;
use std::sync::Arc;

pub use hsa_abi::{hsa_dim3_t as Dim3, hsa_pitched_ptr_t as PitchedPtr};

fn deps_of(rt: &Runtime, n: u32, deps: *const hsa_signal_t) -> HsaResult<Vec<Arc<Signal>>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if deps.is_null() {
        return Err(HsaError::INVALID_ARGUMENT);
    }
    // SAFETY: `n` signals at non-null `deps` per the caller.
    unsafe { std::slice::from_raw_parts(deps, n as usize) }
        .iter()
        .map(|h| rt.signals.get(*h))
        .collect()
}

/// Both sides of a copy must be memory the agents can reach (pool allocations, locked or
/// registered host memory that is still mapped): ROCr rejects pageable memory the same way.
/// Checked at submission, so a bad range is an error to the caller, not a fault on the copy
/// engine's thread.
fn check_range(rt: &Runtime, what: &str, addr: u64, len: u64) -> HsaResult {
    if addr == 0 {
        tracing::error!(target: "hsasim", "async copy: null {what}");
        return Err(HsaError::INVALID_ARGUMENT);
    }
    if len == 0 {
        return Ok(());
    }
    if let Err(why) = rt.memory.accessible(addr, len) {
        tracing::error!(target: "hsasim", "async copy: {what} range {addr:#x}+{len:#x} {why}");
        return Err(HsaError::INVALID_ARGUMENT);
    }
    Ok(())
}

/// The GPU whose engines serve a copy between these agents (ROCr uses the device side).
fn copy_gpu(
    rt: &Runtime,
    dst_agent: hsa_agent_t,
    src_agent: hsa_agent_t,
) -> HsaResult<&Arc<Agent>> {
    let d = rt.agent(dst_agent)?;
    let s = rt.agent(src_agent)?;
    if d.is_gpu() {
        Ok(d)
    } else if s.is_gpu() {
        Ok(s)
    } else {
        rt.agents
            .iter()
            .find(|a| a.is_gpu())
            .ok_or(HsaError::INVALID_AGENT)
    }
}

fn engines_for(
    rt: &Runtime,
    dst_agent: hsa_agent_t,
    src_agent: hsa_agent_t,
) -> HsaResult<&[Arc<SdmaEngine>]> {
    Ok(&copy_gpu(rt, dst_agent, src_agent)?.sdma)
}

/// The copying GPU must reach both sides (ROCr: the agents "must be able to directly access
/// both the source and destination buffers"): another GPU's memory only once it was granted
/// to it with `hsa_amd_agents_allow_access`.
fn check_reach(rt: &Runtime, gpu: &Arc<Agent>, what: &str, addr: u64, len: u64) -> HsaResult {
    match rt.memory.find(addr, len.max(1)) {
        Some(r) if !r.reachable_by(gpu.handle(), node_bit(gpu.node)) => {
            tracing::error!(target: "hsasim", "async copy: the {what} range {addr:#x}+{len:#x} is another GPU's memory that was not granted to the copying GPU (node {}): call hsa_amd_agents_allow_access first", gpu.node);
            Err(HsaError::INVALID_ARGUMENT)
        }
        _ => Ok(()),
    }
}

#[allow(clippy::too_many_arguments)]
fn submit(
    rt: &Runtime,
    engine: &Arc<SdmaEngine>,
    shape: CopyShape,
    num_deps: u32,
    deps: *const hsa_signal_t,
    completion: hsa_signal_t,
) -> HsaResult {
    let deps = deps_of(rt, num_deps, deps)?;
    let completion = rt.signals.get_opt(completion)?;
    tracing::trace!(target: "hsasim", engine = engine.index, ?shape, deps = deps.len(), "async copy queued");
    engine.submit(
        CopyJob {
            shape,
            deps,
            completion,
            profile: rt.async_copy_profiling.load(Ordering::Relaxed),
            virtual_entry: None,
        },
        rt.config.threaded,
    );
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn linear_copy(
    dst: *mut c_void,
    dst_agent: hsa_agent_t,
    src: *const c_void,
    src_agent: hsa_agent_t,
    size: usize,
    num_deps: u32,
    deps: *const hsa_signal_t,
    completion: hsa_signal_t,
    engine: Option<u32>,
) -> HsaResult {
    let rt = rt()?;
    crate::fail::check(
        crate::fail::FailPoint::AsyncCopy,
        "hsa_amd_memory_async_copy",
    )?;
    let gpu = copy_gpu(&rt, dst_agent, src_agent)?;
    let engines = &gpu.sdma;
    check_range(&rt, "destination", dst as u64, size as u64)?;
    check_range(&rt, "source", src as u64, size as u64)?;
    check_reach(&rt, gpu, "destination", dst as u64, size as u64)?;
    check_reach(&rt, gpu, "source", src as u64, size as u64)?;
    let index = match engine {
        Some(mask) => {
            if mask.count_ones() != 1 || mask.trailing_zeros() as usize >= engines.len() {
                tracing::error!(target: "hsasim", "async copy: engine id {mask:#x} is not one of this agent's {} SDMA engines", engines.len());
                return Err(HsaError::INVALID_ARGUMENT);
            }
            mask.trailing_zeros() as usize
        }
        // Host-to-device on engine 0, everything else on engine 1 (when present), so the
        // two directions overlap as they do on ROCr.
        None => {
            usize::from(!rt.agent(dst_agent)?.is_gpu() || rt.agent(src_agent)?.is_gpu())
                % engines.len()
        }
    };
    submit(
        &rt,
        &engines[index],
        CopyShape::Linear {
            dst: dst as u64,
            src: src as u64,
            size: size as u64,
        },
        num_deps,
        deps,
        completion,
    )
}

/// # Safety
/// `dep_signals` must hold `num_dep_signals` signals; the memory ranges must stay valid
/// until the completion signal is decremented.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_memory_async_copy(
    dst: *mut c_void,
    dst_agent: hsa_agent_t,
    src: *const c_void,
    src_agent: hsa_agent_t,
    size: usize,
    num_dep_signals: u32,
    dep_signals: *const hsa_signal_t,
    completion_signal: hsa_signal_t,
) -> hsa_status_t {
    guard("hsa_amd_memory_async_copy", || {
        linear_copy(
            dst,
            dst_agent,
            src,
            src_agent,
            size,
            num_dep_signals,
            dep_signals,
            completion_signal,
            None,
        )
    })
}

/// `engine_id` is an `hsa_amd_sdma_engine_id_t` bit (`HSA_AMD_SDMA_ENGINE_0` = 1, ...).
///
/// # Safety
/// As for `hsa_amd_memory_async_copy`.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_memory_async_copy_on_engine(
    dst: *mut c_void,
    dst_agent: hsa_agent_t,
    src: *const c_void,
    src_agent: hsa_agent_t,
    size: usize,
    num_dep_signals: u32,
    dep_signals: *const hsa_signal_t,
    completion_signal: hsa_signal_t,
    engine_id: u32,
    _force_copy_on_sdma: bool,
) -> hsa_status_t {
    guard("hsa_amd_memory_async_copy_on_engine", || {
        linear_copy(
            dst,
            dst_agent,
            src,
            src_agent,
            size,
            num_dep_signals,
            dep_signals,
            completion_signal,
            Some(engine_id),
        )
    })
}

/// Reports the engines with nothing queued as a mask of `HSA_AMD_SDMA_ENGINE_*` bits;
/// OUT_OF_RESOURCES when all are busy.
///
/// # Safety
/// `engine_ids_mask` must be null or valid.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_memory_copy_engine_status(
    dst_agent: hsa_agent_t,
    src_agent: hsa_agent_t,
    engine_ids_mask: *mut u32,
) -> hsa_status_t {
    guard("hsa_amd_memory_copy_engine_status", || {
        let rt = rt()?;
        let engines = engines_for(&rt, dst_agent, src_agent)?;
        let idle = |e: &Arc<SdmaEngine>| match rt.vtime.as_ref() {
            None => e.is_idle(),
            Some(v) => v.engine_idle(e.node, e.index, !rt.config.threaded, &mut || {
                rt.pump_step(None, true)
            }),
        };
        let mask = engines
            .iter()
            .enumerate()
            .filter(|(_, e)| idle(e))
            .fold(0u32, |m, (i, _)| m | (1 << i));
        if mask == 0 {
            return Err(HsaError::OUT_OF_RESOURCES);
        }
        // SAFETY: valid per the caller.
        unsafe { out(engine_ids_mask, mask) }
    })
}

/// 2D/3D copy: offsets and range are (bytes, rows, slices).
///
/// # Safety
/// All pointers must be valid; `dep_signals` holds `num_dep_signals` signals.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_memory_async_copy_rect(
    dst: *const PitchedPtr,
    dst_offset: *const Dim3,
    src: *const PitchedPtr,
    src_offset: *const Dim3,
    range: *const Dim3,
    copy_agent: hsa_agent_t,
    _dir: u32,
    num_dep_signals: u32,
    dep_signals: *const hsa_signal_t,
    completion_signal: hsa_signal_t,
) -> hsa_status_t {
    guard("hsa_amd_memory_async_copy_rect", || {
        let rt = rt()?;
        if dst.is_null()
            || dst_offset.is_null()
            || src.is_null()
            || src_offset.is_null()
            || range.is_null()
        {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        crate::fail::check(
            crate::fail::FailPoint::AsyncCopy,
            "hsa_amd_memory_async_copy_rect",
        )?;
        // SAFETY: all non-null and valid per the caller.
        let (d, dof, s, sof, r) = unsafe { (*dst, *dst_offset, *src, *src_offset, *range) };
        // (first byte, bytes to the last one); any overflow is a range that cannot exist.
        let extent = |p: &PitchedPtr, o: &Dim3| -> Option<(u64, u64)> {
            let (pitch, slice) = (p.pitch as u64, p.slice as u64);
            let rows_end = pitch.checked_mul(u64::from(r.y).checked_add(u64::from(o.y))?)?;
            if u64::from(r.x) > pitch || (r.z > 1 && rows_end > slice) {
                return None;
            }
            let first = (p.base as u64)
                .checked_add(u64::from(o.z).checked_mul(slice)?)?
                .checked_add(u64::from(o.y).checked_mul(pitch)?)?
                .checked_add(u64::from(o.x))?;
            let len = u64::from(r.z.max(1) - 1)
                .checked_mul(slice)?
                .checked_add(u64::from(r.y.max(1) - 1).checked_mul(pitch)?)?
                .checked_add(u64::from(r.x))?;
            first.checked_add(len)?;
            Some((first, len))
        };
        let bad_shape = || {
            tracing::error!(target: "hsasim", "async copy rect: the offsets, pitches and range overflow or do not fit the slices");
            HsaError::INVALID_ARGUMENT
        };
        let (dfirst, dlen) = extent(&d, &dof).ok_or_else(bad_shape)?;
        let (sfirst, slen) = extent(&s, &sof).ok_or_else(bad_shape)?;
        check_range(&rt, "destination", dfirst, dlen)?;
        check_range(&rt, "source", sfirst, slen)?;
        let gpu = copy_gpu(&rt, copy_agent, copy_agent)?;
        check_reach(&rt, gpu, "destination", dfirst, dlen)?;
        check_reach(&rt, gpu, "source", sfirst, slen)?;
        let engines = &gpu.sdma;
        let engine = engines.first().ok_or(HsaError::INVALID_AGENT)?;
        submit(
            &rt,
            engine,
            CopyShape::Rect {
                dst: dfirst,
                dst_pitch: d.pitch as u64,
                dst_slice: d.slice as u64,
                src: sfirst,
                src_pitch: s.pitch as u64,
                src_slice: s.slice as u64,
                range: [u64::from(r.x), u64::from(r.y), u64::from(r.z)],
            },
            num_dep_signals,
            dep_signals,
            completion_signal,
        )
    })
}

/// Orders `completion_signal` after the dependencies on the agent's first copy engine;
/// no data moves (host and device share memory, so the range is already resident).
///
/// # Safety
/// `dep_signals` must hold `num_dep_signals` signals.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_svm_prefetch_async(
    ptr: *mut c_void,
    size: usize,
    agent: hsa_agent_t,
    num_dep_signals: u32,
    dep_signals: *const hsa_signal_t,
    completion_signal: hsa_signal_t,
) -> hsa_status_t {
    guard("hsa_amd_svm_prefetch_async", || {
        let rt = rt()?;
        if ptr.is_null() || size == 0 {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        let engines = engines_for(&rt, agent, agent)?;
        let engine = engines.first().ok_or(HsaError::INVALID_AGENT)?;
        tracing::debug!(target: "hsasim", ?ptr, size, "svm prefetch (no data movement)");
        rt.svm.note_prefetch(ptr as u64, size as u64, agent);
        submit(
            &rt,
            engine,
            CopyShape::Prefetch,
            num_dep_signals,
            dep_signals,
            completion_signal,
        )
    })
}

include!(concat!(env!("OUT_DIR"), "/symver_api_copy.rs"));

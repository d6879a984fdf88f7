//! Queue entry points: creation/destruction, index operations, priority, CU masks,
//! dispatch profiling.

use super::shell::{guard, guard_value};
use crate::agent::{QUEUE_MAX_PACKETS, QUEUE_MIN_PACKETS};
use crate::cabi::out;
use crate::error::{HsaError, HsaResult};
use crate::queue::{live_indices, Queue, QueueIndices, QueueParams};
use crate::system::rt;
use hsa_abi::*;
use std::ffi::c_void;
use std::sync::atomic::Ordering;

/// # Safety
/// `queue` must be null or valid for one pointer write; `callback`/`data` are kept and
/// called from the packet-processor thread on a queue error.
#[no_mangle]
pub unsafe extern "C" fn hsa_queue_create(
    agent: hsa_agent_t,
    size: u32,
    queue_type: u32,
    callback: Option<QueueErrorCallback>,
    data: *mut c_void,
    private_segment_size: u32,
    group_segment_size: u32,
    queue: *mut *mut hsa_queue_t,
) -> hsa_status_t {
    guard("hsa_queue_create", || {
        let rt = rt()?;
        let a = rt.agent(agent)?.clone();
        if queue.is_null()
            || !size.is_power_of_two()
            || !(QUEUE_MIN_PACKETS..=QUEUE_MAX_PACKETS).contains(&size)
            || queue_type > HSA_QUEUE_TYPE_COOPERATIVE
        {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        if !a.is_gpu() {
            return Err(HsaError::INVALID_AGENT);
        }
        crate::fail::check(crate::fail::FailPoint::QueueCreate, "hsa_queue_create")?;
        if a.queue_count.fetch_add(1, Ordering::SeqCst) >= a.max_queues {
            a.queue_count.fetch_sub(1, Ordering::SeqCst);
            tracing::error!(target: "hsasim", limit = a.max_queues, "hsa_queue_create: per-agent queue limit reached (HSASIM_MAX_QUEUES)");
            return Err(HsaError::OUT_OF_RESOURCES);
        }
        let q = match Queue::new(
            &rt.queue_context(),
            a.clone(),
            QueueParams {
                size,
                queue_type,
                callback,
                data,
            },
        ) {
            Ok(q) => q,
            Err(e) => {
                a.queue_count.fetch_sub(1, Ordering::SeqCst);
                return Err(e);
            }
        };
        rt.queues.write().insert(q.address(), q.clone());
        if let Some(v) = &rt.vtime {
            v.queue_created(q.address(), q.id, HSA_AMD_QUEUE_PRIORITY_NORMAL);
        }
        if rt.config.threaded {
            if let Err(e) = q.start_thread(rt.clone()) {
                rt.queues.write().remove(&q.address());
                rt.release_queue(&q);
                return Err(e);
            }
        }
        tracing::debug!(target: "hsasim", id = q.id, size, private_segment_size, group_segment_size, "queue created");
        // SAFETY: checked non-null; valid per the caller.
        unsafe { out(queue, q.address() as *mut hsa_queue_t) }
    })
}

#[no_mangle]
pub extern "C" fn hsa_queue_destroy(queue: *mut hsa_queue_t) -> hsa_status_t {
    guard("hsa_queue_destroy", || {
        let rt = rt()?;
        let q = rt
            .queues
            .write()
            .remove(&(queue as u64))
            .ok_or(HsaError::INVALID_QUEUE)?;
        rt.release_queue(&q);
        tracing::debug!(target: "hsasim", id = q.id, "queue destroyed");
        Ok(())
    })
}

/// Stops the packet processor; the queue keeps its memory until destroyed.
#[no_mangle]
pub extern "C" fn hsa_queue_inactivate(queue: *mut hsa_queue_t) -> hsa_status_t {
    guard("hsa_queue_inactivate", || {
        rt()?.queue(queue as u64)?.stop();
        Ok(())
    })
}

/// The index entry points check the handle against the queue blocks
/// (`crate::queue::live_indices`): no runtime lookup, lock or reference count on the path
/// every packet takes.
fn with_queue<T>(
    name: &'static str,
    queue: *const hsa_queue_t,
    fallback: T,
    f: impl FnOnce(QueueIndices) -> T,
) -> T {
    guard_value(name, fallback, || Ok(f(live_indices(queue as u64)?)))
}

macro_rules! index_loads {
    ($($name:ident => $field:ident, $ord:expr;)*) => {$(
        #[no_mangle]
        pub extern "C" fn $name(queue: *const hsa_queue_t) -> u64 {
            guard_value(stringify!($name), 0, || {
                let q = live_indices(queue as u64)?;
                let v = q.$field().load($ord);
                // Deterministic mode: a producer polling for room must see progress.
                if crate::system::deterministic() && rt()?.poll(queue as u64, v as i64) {
                    return Ok(q.$field().load($ord));
                }
                Ok(v)
            })
        }
        crate::api::shell::rocr_symver!($name);
    )*};
}
index_loads! {
    hsa_queue_load_read_index_relaxed => read_index, Ordering::Relaxed;
    hsa_queue_load_read_index_acquire => read_index, Ordering::Acquire;
    hsa_queue_load_read_index_scacquire => read_index, Ordering::Acquire;
    hsa_queue_load_write_index_relaxed => write_index, Ordering::Relaxed;
    hsa_queue_load_write_index_acquire => write_index, Ordering::Acquire;
    hsa_queue_load_write_index_scacquire => write_index, Ordering::Acquire;
}

macro_rules! index_stores {
    ($($name:ident => $field:ident, $ord:expr;)*) => {$(
        #[no_mangle]
        pub extern "C" fn $name(queue: *const hsa_queue_t, value: u64) {
            with_queue(stringify!($name), queue, (), |q| q.$field().store(value, $ord))
        }
        crate::api::shell::rocr_symver!($name);
    )*};
}
index_stores! {
    hsa_queue_store_write_index_relaxed => write_index, Ordering::Relaxed;
    hsa_queue_store_write_index_release => write_index, Ordering::Release;
    hsa_queue_store_write_index_screlease => write_index, Ordering::Release;
    hsa_queue_store_read_index_relaxed => read_index, Ordering::Relaxed;
    hsa_queue_store_read_index_release => read_index, Ordering::Release;
    hsa_queue_store_read_index_screlease => read_index, Ordering::Release;
}

macro_rules! index_adds {
    ($($name:ident => $ord:expr;)*) => {$(
        #[no_mangle]
        pub extern "C" fn $name(queue: *const hsa_queue_t, value: u64) -> u64 {
            with_queue(stringify!($name), queue, 0, |q| q.write_index().fetch_add(value, $ord))
        }
        crate::api::shell::rocr_symver!($name);
    )*};
}
index_adds! {
    hsa_queue_add_write_index_relaxed => Ordering::Relaxed;
    hsa_queue_add_write_index_acquire => Ordering::Acquire;
    hsa_queue_add_write_index_scacquire => Ordering::Acquire;
    hsa_queue_add_write_index_release => Ordering::Release;
    hsa_queue_add_write_index_screlease => Ordering::Release;
    hsa_queue_add_write_index_acq_rel => Ordering::AcqRel;
    hsa_queue_add_write_index_scacq_screl => Ordering::AcqRel;
}

macro_rules! index_cas {
    ($($name:ident => $ord:expr, $fail:expr;)*) => {$(
        #[no_mangle]
        pub extern "C" fn $name(queue: *const hsa_queue_t, expected: u64, value: u64) -> u64 {
            with_queue(stringify!($name), queue, 0, |q| {
                match q.write_index().compare_exchange(expected, value, $ord, $fail) {
                    Ok(v) | Err(v) => v,
                }
            })
        }
        crate::api::shell::rocr_symver!($name);
    )*};
}
index_cas! {
    hsa_queue_cas_write_index_relaxed => Ordering::Relaxed, Ordering::Relaxed;
    hsa_queue_cas_write_index_acquire => Ordering::Acquire, Ordering::Acquire;
    hsa_queue_cas_write_index_scacquire => Ordering::Acquire, Ordering::Acquire;
    hsa_queue_cas_write_index_release => Ordering::Release, Ordering::Relaxed;
    hsa_queue_cas_write_index_screlease => Ordering::Release, Ordering::Relaxed;
    hsa_queue_cas_write_index_acq_rel => Ordering::AcqRel, Ordering::Acquire;
    hsa_queue_cas_write_index_scacq_screl => Ordering::AcqRel, Ordering::Acquire;
}

/// Applies from the queue's next dispatch: among dispatches of the agent running at once,
/// workgroups of the highest priority start first (`hsasim_isa`'s arbiter); deterministic mode
/// runs the highest-priority ready kernel first; with the scheduler model on, it also orders
/// the runlist (`sched.rs`).
#[no_mangle]
pub extern "C" fn hsa_amd_queue_set_priority(
    queue: *mut hsa_queue_t,
    priority: u32,
) -> hsa_status_t {
    guard("hsa_amd_queue_set_priority", || {
        let q = rt()?.queue(queue as u64)?;
        if priority > HSA_AMD_QUEUE_PRIORITY_HIGH {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        q.priority.store(priority, Ordering::Relaxed);
        if let Some(slot) = q.sched_slot() {
            slot.set_priority(priority);
        }
        if let Some(v) = &rt()?.vtime {
            v.queue_priority(q.address(), priority);
        }
        tracing::info!(target: "hsasim", queue = q.id, priority, "queue priority set");
        Ok(())
    })
}

/// Recorded and logged (visible with `HSASIM_LOG=hsasim=info`); dispatches are not
/// restricted to the masked CUs.
///
/// # Safety
/// `cu_mask` must hold `(num_cu_mask_count + 31) / 32` u32 words.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_queue_cu_set_mask(
    queue: *const hsa_queue_t,
    num_cu_mask_count: u32,
    cu_mask: *const u32,
) -> hsa_status_t {
    guard("hsa_amd_queue_cu_set_mask", || {
        let q = rt()?.queue(queue as u64)?;
        if !num_cu_mask_count.is_multiple_of(32) || (num_cu_mask_count != 0 && cu_mask.is_null()) {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        let words = (num_cu_mask_count / 32) as usize;
        let mask = if words == 0 {
            Vec::new()
        } else {
            // SAFETY: non-null with `words` elements per the caller.
            unsafe { std::slice::from_raw_parts(cu_mask, words) }.to_vec()
        };
        let enabled: u32 = mask.iter().map(|w| w.count_ones()).sum();
        tracing::info!(target: "hsasim", queue = q.id, mask = ?mask.iter().map(|w| format!("{w:#010x}")).collect::<Vec<_>>(), enabled, "queue CU mask set (recorded, not enforced)");
        *q.cu_mask.lock() = mask;
        Ok(())
    })
}

/// # Safety
/// `cu_mask` must be valid for `num_cu_mask_count / 32` u32 writes.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_queue_cu_get_mask(
    queue: *const hsa_queue_t,
    num_cu_mask_count: u32,
    cu_mask: *mut u32,
) -> hsa_status_t {
    guard("hsa_amd_queue_cu_get_mask", || {
        let q = rt()?.queue(queue as u64)?;
        if cu_mask.is_null() || !num_cu_mask_count.is_multiple_of(32) {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        let words = (num_cu_mask_count / 32) as usize;
        let mask = q.cu_mask.lock().clone();
        let cus = q.agent.compute_units as usize;
        for i in 0..words {
            let v = if mask.is_empty() {
                // No mask set: every existing CU is enabled.
                let lo = i * 32;
                if lo >= cus {
                    0
                } else if cus - lo >= 32 {
                    u32::MAX
                } else {
                    (1u32 << (cus - lo)) - 1
                }
            } else {
                mask.get(i).copied().unwrap_or(0)
            };
            // SAFETY: i < words, within the caller's buffer.
            unsafe { cu_mask.add(i).write_unaligned(v) };
        }
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn hsa_amd_profiling_set_profiler_enabled(
    queue: *mut hsa_queue_t,
    enable: i32,
) -> hsa_status_t {
    guard("hsa_amd_profiling_set_profiler_enabled", || {
        let q = rt()?.queue(queue as u64)?;
        q.profiling.store(enable != 0, Ordering::Relaxed);
        Ok(())
    })
}

fn times_of(signal: hsa_signal_t) -> HsaResult<hsa_amd_profiling_time_t> {
    let s = rt()?.signals.get(signal)?;
    let (start, end) = s.timestamps();
    Ok(hsa_amd_profiling_time_t { start, end })
}

/// Start/end (system timestamp domain, ns) of the packet that last completed `signal`.
///
/// # Safety
/// `time` must be null or valid.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_profiling_get_dispatch_time(
    agent: hsa_agent_t,
    signal: hsa_signal_t,
    time: *mut hsa_amd_profiling_time_t,
) -> hsa_status_t {
    guard("hsa_amd_profiling_get_dispatch_time", || {
        rt()?.agent(agent)?;
        let t = times_of(signal)?;
        // SAFETY: valid per the caller.
        unsafe { out(time, t) }
    })
}

/// # Safety
/// `time` must be null or valid.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_profiling_get_async_copy_time(
    signal: hsa_signal_t,
    time: *mut hsa_amd_profiling_time_t,
) -> hsa_status_t {
    guard("hsa_amd_profiling_get_async_copy_time", || {
        let t = times_of(signal)?;
        // SAFETY: valid per the caller.
        unsafe { out(time, t) }
    })
}

#[no_mangle]
pub extern "C" fn hsa_amd_profiling_async_copy_enable(enable: bool) -> hsa_status_t {
    guard("hsa_amd_profiling_async_copy_enable", || {
        rt()?.async_copy_profiling.store(enable, Ordering::Relaxed);
        Ok(())
    })
}

/// Agent ticks already are system ticks (both ns).
///
/// # Safety
/// `system_tick` must be null or valid.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_profiling_convert_tick_to_system_domain(
    agent: hsa_agent_t,
    agent_tick: u64,
    system_tick: *mut u64,
) -> hsa_status_t {
    guard("hsa_amd_profiling_convert_tick_to_system_domain", || {
        rt()?.agent(agent)?;
        // SAFETY: valid per the caller.
        unsafe { out(system_tick, agent_tick) }
    })
}

include!(concat!(env!("OUT_DIR"), "/symver_api_queue.rs"));

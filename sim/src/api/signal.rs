//! Signal entry points: create/destroy, every load/store/RMW variant ROCr exports, waits.

use super::shell::{guard, guard_value};
use crate::cabi::out;
use crate::error::HsaError;
use crate::signal::{self, condition_holds, deadline_after};
use crate::system::rt;
use hsa_abi::*;
use std::ffi::c_void;
use std::sync::atomic::Ordering;

fn consumers_of(num: u32, consumers: *const hsa_agent_t) -> crate::error::HsaResult<Vec<u64>> {
    if num == 0 {
        return Ok(Vec::new());
    }
    if consumers.is_null() {
        return Err(HsaError::INVALID_ARGUMENT);
    }
    let rt = rt()?;
    // SAFETY: the caller passes `num` agents at `consumers` (checked non-null).
    let list = unsafe { std::slice::from_raw_parts(consumers, num as usize) };
    list.iter()
        .map(|a| rt.agent(*a).map(|_| a.handle))
        .collect()
}

/// A user signal, with an interrupt event when ROCr would give it one (both creation calls
/// are one in ROCr: `hsa_signal_create` is `hsa_amd_signal_create` without attributes).
fn user_signal(
    rt: &crate::system::Runtime,
    initial: hsa_signal_value_t,
    consumers: Vec<u64>,
    attributes: u64,
) -> crate::error::HsaResult<std::sync::Arc<crate::signal::Signal>> {
    let mut distinct = consumers.clone();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() != consumers.len() {
        tracing::error!(target: "hsasim", "signal creation names an agent twice among the consumers");
        return Err(HsaError::INVALID_ARGUMENT);
    }
    crate::fail::check(crate::fail::FailPoint::SignalCreate, "hsa_signal_create")?;
    let s = rt
        .signals
        .create(AMD_SIGNAL_KIND_USER, initial, consumers, attributes)?;
    let is_cpu = |agent| {
        rt.agent(hsa_agent_t { handle: agent })
            .is_ok_and(|a| !a.is_gpu())
    };
    if crate::signal::wants_event(attributes, &s.consumers, is_cpu)
        && !crate::fail::should_fail(crate::fail::FailPoint::InterruptSignal, "hsa_signal_create")
    {
        s.attach_event();
    }
    Ok(s)
}

/// # Safety
/// `consumers` must hold `num_consumers` agents (or be null when zero); `signal` valid.
#[no_mangle]
pub unsafe extern "C" fn hsa_signal_create(
    initial_value: hsa_signal_value_t,
    num_consumers: u32,
    consumers: *const hsa_agent_t,
    signal: *mut hsa_signal_t,
) -> hsa_status_t {
    guard("hsa_signal_create", || {
        let rt = rt()?;
        if signal.is_null() {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        let s = user_signal(
            &rt,
            initial_value,
            consumers_of(num_consumers, consumers)?,
            0,
        )?;
        // SAFETY: checked non-null; valid per the caller.
        unsafe { out(signal, s.handle()) }
    })
}

/// # Safety
/// As for `hsa_signal_create`.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_signal_create(
    initial_value: hsa_signal_value_t,
    num_consumers: u32,
    consumers: *const hsa_agent_t,
    attributes: u64,
    signal: *mut hsa_signal_t,
) -> hsa_status_t {
    guard("hsa_amd_signal_create", || {
        let rt = rt()?;
        if signal.is_null() {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        // HSA_AMD_SIGNAL_AMD_GPU_ONLY = 1, HSA_AMD_SIGNAL_IPC = 2.
        if attributes & !3 != 0 {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        if attributes & 2 != 0 {
            let Some(ipc) = &rt.ipc_signals else {
                super::shell::report_once(
                    "hsa_amd_signal_create(IPC)",
                    "hsa_amd_signal_create: IPC signals need a device service (hipshim device start; HSASIM_DEVICE_SERVICE=NAME)",
                );
                return Err(HsaError::OUT_OF_RESOURCES);
            };
            let s = ipc.create(
                initial_value,
                consumers_of(num_consumers, consumers)?,
                attributes,
            )?;
            let s = rt.signals.insert(s);
            // SAFETY: checked non-null; valid per the caller.
            return unsafe { out(signal, s.handle()) };
        }
        let s = user_signal(
            &rt,
            initial_value,
            consumers_of(num_consumers, consumers)?,
            attributes,
        )?;
        // SAFETY: checked non-null; valid per the caller.
        unsafe { out(signal, s.handle()) }
    })
}

#[no_mangle]
pub extern "C" fn hsa_signal_destroy(signal: hsa_signal_t) -> hsa_status_t {
    guard("hsa_signal_destroy", || {
        let rt = rt()?;
        let s = rt.signals.get(signal)?;
        if s.kind() != AMD_SIGNAL_KIND_USER {
            // Doorbells belong to their queue.
            return Err(HsaError::INVALID_SIGNAL);
        }
        rt.signals.destroy(signal)
    })
}

/// # Safety
/// `value_ptr` must be null or valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_signal_value_pointer(
    signal: hsa_signal_t,
    value_ptr: *mut *mut hsa_signal_value_t,
) -> hsa_status_t {
    guard("hsa_amd_signal_value_pointer", || {
        let s = rt()?.signals.get(signal)?;
        // SAFETY: valid per the caller.
        unsafe { out(value_ptr, s.value_ptr()) }
    })
}

// The value operations below check the handle against the signal slab
// (`crate::signal::live`): no runtime lookup, lock or reference count on the path every
// packet takes.

fn load(name: &'static str, signal: hsa_signal_t, order: Ordering) -> hsa_signal_value_t {
    guard_value(name, 0, || {
        let s = signal::live(signal)?;
        if crate::virtual_time::on() {
            return virtual_load(signal, s, order);
        }
        let v = s.load(order);
        // Deterministic mode: a polling loop (not a single query) makes queued work progress.
        if crate::system::deterministic() && rt()?.poll(signal.handle, v) {
            return Ok(s.load(order));
        }
        Ok(v)
    })
}

/// A host load under virtual time: the value as of the thread's virtual time (see
/// `virtual_time`), after the work that will write the signal is committed.
#[cold]
fn virtual_load(
    signal: hsa_signal_t,
    s: &signal::SignalMemory,
    order: Ordering,
) -> crate::error::HsaResult<i64> {
    let rt = rt()?;
    let Some(v) = rt.vtime.as_ref() else {
        return Ok(s.load(order));
    };
    let deterministic = !rt.config.threaded;
    let load = || {
        v.host_load(signal.handle, &|| s.load(order), deterministic, &mut || {
            rt.pump_step(Some(signal.handle), true)
        })
    };
    let value = load();
    // As without virtual time: in deterministic mode a polling loop (not a single query)
    // runs the queued work it polls for.
    if deterministic && rt.poll(signal.handle, value) {
        return Ok(load());
    }
    Ok(value)
}

/// Under virtual time: a host write happens at the thread's virtual time; a doorbell submits
/// the packets up to its value. Done before the write, so that a packet processor woken by
/// a doorbell finds its packets submitted.
#[cold]
/// `relative`: the write adds to the value (add, subtract), so device writes in the host's
/// virtual future still apply on top of it; any other write replaces the value.
fn virtual_write(signal: hsa_signal_t, s: &signal::SignalMemory, value: i64, relative: bool) {
    let Ok(rt) = rt() else {
        return;
    };
    let Some(v) = rt.vtime.as_ref() else {
        return;
    };
    if s.kind() == AMD_SIGNAL_KIND_DOORBELL {
        if let Ok(q) = rt.queue(s.doorbell_queue()) {
            let submitted = v.doorbell(q.address(), value, &|index| q.submitted_packet(index));
            q.virtual_submitted.fetch_max(submitted, Ordering::AcqRel);
        }
    } else {
        s.set_virtual_time(crate::virtual_time::host_now());
        if !relative {
            v.host_wrote(signal.handle);
        }
    }
}

#[inline(always)]
fn store(name: &'static str, signal: hsa_signal_t, value: i64, order: Ordering) {
    guard_value(name, (), || {
        let s = signal::live(signal)?;
        if crate::virtual_time::on() {
            virtual_write(signal, s, value, false);
        }
        s.store(value, order);
        Ok(())
    })
}

fn rmw(
    name: &'static str,
    relative: bool,
    signal: hsa_signal_t,
    order: Ordering,
    f: impl Fn(&std::sync::atomic::AtomicI64, Ordering) -> i64,
) -> hsa_signal_value_t {
    guard_value(name, 0, || {
        let s = signal::live(signal)?;
        if crate::virtual_time::on() && s.kind() != AMD_SIGNAL_KIND_DOORBELL {
            virtual_write(signal, s, 0, relative);
        }
        Ok(s.rmw(order, f))
    })
}

macro_rules! loads {
    ($($name:ident => $ord:expr;)*) => {$(
        #[no_mangle]
        pub extern "C" fn $name(signal: hsa_signal_t) -> hsa_signal_value_t {
            load(stringify!($name), signal, $ord)
        }
        crate::api::shell::rocr_symver!($name);
    )*};
}
loads! {
    hsa_signal_load_relaxed => Ordering::Relaxed;
    hsa_signal_load_acquire => Ordering::Acquire;
    hsa_signal_load_scacquire => Ordering::Acquire;
}

macro_rules! stores {
    ($($name:ident => $ord:expr;)*) => {$(
        #[no_mangle]
        pub extern "C" fn $name(signal: hsa_signal_t, value: hsa_signal_value_t) {
            store(stringify!($name), signal, value, $ord)
        }
        crate::api::shell::rocr_symver!($name);
    )*};
}
stores! {
    hsa_signal_store_relaxed => Ordering::Relaxed;
    hsa_signal_store_release => Ordering::Release;
    hsa_signal_store_screlease => Ordering::Release;
    hsa_signal_silent_store_relaxed => Ordering::Relaxed;
    hsa_signal_silent_store_screlease => Ordering::Release;
}

macro_rules! exchanges {
    ($($name:ident => $ord:expr;)*) => {$(
        #[no_mangle]
        pub extern "C" fn $name(signal: hsa_signal_t, value: hsa_signal_value_t) -> hsa_signal_value_t {
            rmw(stringify!($name), false, signal, $ord, |a, o| a.swap(value, o))
        }
        crate::api::shell::rocr_symver!($name);
    )*};
}

/// The HSA add/subtract/and/or/xor functions return nothing; exchange returns the old value.
macro_rules! void_rmws {
    ($atomic:ident, $relative:literal: $($name:ident => $ord:expr;)*) => {$(
        #[no_mangle]
        pub extern "C" fn $name(signal: hsa_signal_t, value: hsa_signal_value_t) {
            rmw(stringify!($name), $relative, signal, $ord, |a, o| a.$atomic(value, o));
        }
        crate::api::shell::rocr_symver!($name);
    )*};
}
void_rmws! { fetch_add, true:
    hsa_signal_add_relaxed => Ordering::Relaxed;
    hsa_signal_add_acquire => Ordering::Acquire;
    hsa_signal_add_scacquire => Ordering::Acquire;
    hsa_signal_add_release => Ordering::Release;
    hsa_signal_add_screlease => Ordering::Release;
    hsa_signal_add_acq_rel => Ordering::AcqRel;
    hsa_signal_add_scacq_screl => Ordering::AcqRel;
}
void_rmws! { fetch_sub, true:
    hsa_signal_subtract_relaxed => Ordering::Relaxed;
    hsa_signal_subtract_acquire => Ordering::Acquire;
    hsa_signal_subtract_scacquire => Ordering::Acquire;
    hsa_signal_subtract_release => Ordering::Release;
    hsa_signal_subtract_screlease => Ordering::Release;
    hsa_signal_subtract_acq_rel => Ordering::AcqRel;
    hsa_signal_subtract_scacq_screl => Ordering::AcqRel;
}
void_rmws! { fetch_and, false:
    hsa_signal_and_relaxed => Ordering::Relaxed;
    hsa_signal_and_acquire => Ordering::Acquire;
    hsa_signal_and_scacquire => Ordering::Acquire;
    hsa_signal_and_release => Ordering::Release;
    hsa_signal_and_screlease => Ordering::Release;
    hsa_signal_and_acq_rel => Ordering::AcqRel;
    hsa_signal_and_scacq_screl => Ordering::AcqRel;
}
void_rmws! { fetch_or, false:
    hsa_signal_or_relaxed => Ordering::Relaxed;
    hsa_signal_or_acquire => Ordering::Acquire;
    hsa_signal_or_scacquire => Ordering::Acquire;
    hsa_signal_or_release => Ordering::Release;
    hsa_signal_or_screlease => Ordering::Release;
    hsa_signal_or_acq_rel => Ordering::AcqRel;
    hsa_signal_or_scacq_screl => Ordering::AcqRel;
}
void_rmws! { fetch_xor, false:
    hsa_signal_xor_relaxed => Ordering::Relaxed;
    hsa_signal_xor_acquire => Ordering::Acquire;
    hsa_signal_xor_scacquire => Ordering::Acquire;
    hsa_signal_xor_release => Ordering::Release;
    hsa_signal_xor_screlease => Ordering::Release;
    hsa_signal_xor_acq_rel => Ordering::AcqRel;
    hsa_signal_xor_scacq_screl => Ordering::AcqRel;
}
exchanges! {
    hsa_signal_exchange_relaxed => Ordering::Relaxed;
    hsa_signal_exchange_acquire => Ordering::Acquire;
    hsa_signal_exchange_scacquire => Ordering::Acquire;
    hsa_signal_exchange_release => Ordering::Release;
    hsa_signal_exchange_screlease => Ordering::Release;
    hsa_signal_exchange_acq_rel => Ordering::AcqRel;
    hsa_signal_exchange_scacq_screl => Ordering::AcqRel;
}

macro_rules! cas {
    ($($name:ident => $ord:expr;)*) => {$(
        #[no_mangle]
        pub extern "C" fn $name(signal: hsa_signal_t, expected: hsa_signal_value_t, value: hsa_signal_value_t) -> hsa_signal_value_t {
            guard_value(stringify!($name), 0, || {
                Ok(signal::live(signal)?.cas(expected, value, $ord))
            })
        }
        crate::api::shell::rocr_symver!($name);
    )*};
}
cas! {
    hsa_signal_cas_relaxed => Ordering::Relaxed;
    hsa_signal_cas_acquire => Ordering::Acquire;
    hsa_signal_cas_scacquire => Ordering::Acquire;
    hsa_signal_cas_release => Ordering::Release;
    hsa_signal_cas_screlease => Ordering::Release;
    hsa_signal_cas_acq_rel => Ordering::AcqRel;
    hsa_signal_cas_scacq_screl => Ordering::AcqRel;
}

/// A value that does *not* satisfy `cond`: what an invalid-handle wait returns, so a
/// client treats it like a timed-out wait instead of a completion.
fn unsatisfying(cond: u32, compare: i64) -> i64 {
    match cond {
        HSA_SIGNAL_CONDITION_EQ => compare.wrapping_add(1),
        HSA_SIGNAL_CONDITION_GTE => compare.wrapping_sub(1),
        _ => compare,
    }
}

/// Waits until the condition holds or `timeout_hint` (ns) passes; returns the value seen.
fn wait(
    name: &'static str,
    signal: hsa_signal_t,
    cond: u32,
    compare: i64,
    timeout: u64,
    order: Ordering,
) -> i64 {
    guard_value(name, unsatisfying(cond, compare), || {
        let rt = rt()?;
        let s = rt.signals.get(signal)?;
        condition_holds(cond, 0, 0)?;
        let deadline = deadline_after(timeout);
        let met = rt.wait_for(Some(signal.handle), deadline, &mut || {
            condition_holds(cond, s.load(Ordering::Relaxed), compare).unwrap_or(true)
        });
        if met && crate::virtual_time::on() {
            crate::virtual_time::host_waited(s.virtual_time());
        }
        Ok(s.load(order))
    })
}

macro_rules! waits {
    ($($name:ident => $ord:expr;)*) => {$(
        #[no_mangle]
        pub extern "C" fn $name(signal: hsa_signal_t, condition: u32, compare_value: hsa_signal_value_t,
            timeout_hint: u64, _wait_state_hint: u32) -> hsa_signal_value_t {
            wait(stringify!($name), signal, condition, compare_value, timeout_hint, $ord)
        }
        crate::api::shell::rocr_symver!($name);
    )*};
}
waits! {
    hsa_signal_wait_relaxed => Ordering::Relaxed;
    hsa_signal_wait_acquire => Ordering::Acquire;
    hsa_signal_wait_scacquire => Ordering::Acquire;
}

/// Returns the index of the first signal whose condition holds, or `u32::MAX` on timeout
/// or bad arguments.
///
/// # Safety
/// `signals`, `conds`, `values` must each hold `signal_count` elements;
/// `satisfying_value` null or valid.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_signal_wait_any(
    signal_count: u32,
    signals: *const hsa_signal_t,
    conds: *const u32,
    values: *const hsa_signal_value_t,
    timeout_hint: u64,
    _wait_hint: u32,
    satisfying_value: *mut hsa_signal_value_t,
) -> u32 {
    guard_value("hsa_amd_signal_wait_any", u32::MAX, || {
        let rt = rt()?;
        if signal_count == 0 || signals.is_null() || conds.is_null() || values.is_null() {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        let n = signal_count as usize;
        // SAFETY: the caller provides `signal_count` elements in each array (non-null).
        let (hs, cs, vs) = unsafe {
            (
                std::slice::from_raw_parts(signals, n),
                std::slice::from_raw_parts(conds, n),
                std::slice::from_raw_parts(values, n),
            )
        };
        let sigs = hs
            .iter()
            .map(|h| rt.signals.get(*h))
            .collect::<Result<Vec<_>, _>>()?;
        for c in cs {
            condition_holds(*c, 0, 0)?;
        }
        let mut hit = None;
        rt.wait_until(deadline_after(timeout_hint), &mut || {
            hit = sigs.iter().enumerate().find_map(|(i, s)| {
                let v = s.load(Ordering::Acquire);
                condition_holds(cs[i], v, vs[i])
                    .unwrap_or(false)
                    .then_some((i, v))
            });
            hit.is_some()
        });
        if let (Some((i, _)), true) = (hit, crate::virtual_time::on()) {
            crate::virtual_time::host_waited(sigs[i].virtual_time());
        }
        match hit {
            Some((i, v)) => {
                if !satisfying_value.is_null() {
                    // SAFETY: non-null and valid per the caller.
                    unsafe { out(satisfying_value, v) }?;
                }
                Ok(i as u32)
            }
            None => Ok(u32::MAX),
        }
    })
}

#[no_mangle]
pub extern "C" fn hsa_amd_signal_async_handler(
    signal: hsa_signal_t,
    cond: u32,
    value: hsa_signal_value_t,
    handler: Option<SignalHandler>,
    arg: *mut c_void,
) -> hsa_status_t {
    guard("hsa_amd_signal_async_handler", || {
        let rt = rt()?;
        let s = rt.signals.get(signal)?;
        let h = handler.ok_or(HsaError::INVALID_ARGUMENT)?;
        rt.add_async_handler(s, cond, value, h, arg)
    })
}

// ---- signal groups ---------------------------------------------------------------------

pub use hsa_abi::hsa_signal_group_t;

/// # Safety
/// `signals` must hold `num_signals` signals, `consumers` `num_consumers` agents (or be
/// null when zero); `signal_group` null or valid.
#[no_mangle]
pub unsafe extern "C" fn hsa_signal_group_create(
    num_signals: u32,
    signals: *const hsa_signal_t,
    num_consumers: u32,
    consumers: *const hsa_agent_t,
    signal_group: *mut hsa_signal_group_t,
) -> hsa_status_t {
    guard("hsa_signal_group_create", || {
        let rt = rt()?;
        if num_signals == 0 || signals.is_null() || signal_group.is_null() {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        consumers_of(num_consumers, consumers)?;
        // SAFETY: `num_signals` handles at non-null `signals` per the caller.
        let handles = unsafe { std::slice::from_raw_parts(signals, num_signals as usize) };
        let mut members: Vec<std::sync::Arc<crate::signal::Signal>> = Vec::new();
        for h in handles {
            let s = rt.signals.get(*h)?;
            if members.iter().any(|m| std::sync::Arc::ptr_eq(m, &s)) {
                // hsa.h: the list must not contain duplicates.
                return Err(HsaError::INVALID_ARGUMENT);
            }
            members.push(s);
        }
        let group = std::sync::Arc::new(members);
        let handle = std::sync::Arc::as_ptr(&group) as u64;
        rt.signal_groups.lock().insert(handle, group);
        // SAFETY: checked non-null.
        unsafe { out(signal_group, hsa_signal_group_t { handle }) }
    })
}

#[no_mangle]
pub extern "C" fn hsa_signal_group_destroy(signal_group: hsa_signal_group_t) -> hsa_status_t {
    guard("hsa_signal_group_destroy", || {
        rt()?
            .signal_groups
            .lock()
            .remove(&signal_group.handle)
            .map(|_| ())
            .ok_or(HsaError::new(status::ERROR_INVALID_SIGNAL_GROUP))
    })
}

/// Blocks until some member satisfies its condition; reports that member and the value.
///
/// # Safety
/// `conditions` and `compare_values` must hold one element per member; `signal` and
/// `value` null or valid.
unsafe fn group_wait_any(
    name: &'static str,
    signal_group: hsa_signal_group_t,
    conditions: *const u32,
    compare_values: *const hsa_signal_value_t,
    signal: *mut hsa_signal_t,
    value: *mut hsa_signal_value_t,
    order: Ordering,
) -> hsa_status_t {
    guard(name, || {
        let rt = rt()?;
        let group = rt
            .signal_groups
            .lock()
            .get(&signal_group.handle)
            .cloned()
            .ok_or(HsaError::new(status::ERROR_INVALID_SIGNAL_GROUP))?;
        if conditions.is_null() || compare_values.is_null() || signal.is_null() || value.is_null() {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        let n = group.len();
        // SAFETY: one condition and one compare value per member, per the caller.
        let (cs, vs) = unsafe {
            (
                std::slice::from_raw_parts(conditions, n),
                std::slice::from_raw_parts(compare_values, n),
            )
        };
        for c in cs {
            condition_holds(*c, 0, 0)?;
        }
        let mut hit = None;
        rt.wait_until(None, &mut || {
            hit = group.iter().enumerate().find_map(|(i, s)| {
                let v = s.load(order);
                condition_holds(cs[i], v, vs[i])
                    .unwrap_or(false)
                    .then_some((i, v))
            });
            hit.is_some()
        });
        let (i, v) = hit.ok_or(HsaError::GENERIC)?;
        if crate::virtual_time::on() {
            crate::virtual_time::host_waited(group[i].virtual_time());
        }
        // SAFETY: both checked non-null; valid per the caller.
        unsafe {
            out(signal, group[i].handle())?;
            out(value, v)
        }
    })
}

/// # Safety
/// As for the HSA function: see `group_wait_any`.
#[no_mangle]
pub unsafe extern "C" fn hsa_signal_group_wait_any_scacquire(
    signal_group: hsa_signal_group_t,
    conditions: *const u32,
    compare_values: *const hsa_signal_value_t,
    _wait_state_hint: u32,
    signal: *mut hsa_signal_t,
    value: *mut hsa_signal_value_t,
) -> hsa_status_t {
    // SAFETY: forwarded caller contract.
    unsafe {
        group_wait_any(
            "hsa_signal_group_wait_any_scacquire",
            signal_group,
            conditions,
            compare_values,
            signal,
            value,
            Ordering::Acquire,
        )
    }
}

/// # Safety
/// As for the HSA function: see `group_wait_any`.
#[no_mangle]
pub unsafe extern "C" fn hsa_signal_group_wait_any_relaxed(
    signal_group: hsa_signal_group_t,
    conditions: *const u32,
    compare_values: *const hsa_signal_value_t,
    _wait_state_hint: u32,
    signal: *mut hsa_signal_t,
    value: *mut hsa_signal_value_t,
) -> hsa_status_t {
    // SAFETY: forwarded caller contract.
    unsafe {
        group_wait_any(
            "hsa_signal_group_wait_any_relaxed",
            signal_group,
            conditions,
            compare_values,
            signal,
            value,
            Ordering::Relaxed,
        )
    }
}

include!(concat!(env!("OUT_DIR"), "/symver_api_signal.rs"));

//! The calls of AMD's tracing and profiling interface (`trace/names.rs`; the profiler switch
//! follows the process's ROCm ABI, `runtime/base/compat.rs`), and its callback registration
//! for tracing tools (`runtime/base/callbacks.rs`: ROCm 5.2's table under the ROCm 5 profile,
//! `hipRegisterTracerCallback` in every profile).

use super::declare::hip_api;
use super::types::hipError_t;
use crate::runtime::base::{callbacks, compat};
use crate::trace::names;
use std::ffi::{c_char, c_void};

hip_api! {
    /// The name of the HIP call with callback id `id`, "unknown" for an id no call has (as
    /// AMD answers). Never null; leaves the last error alone, as AMD's does.
    fn hipApiName(id: u32) -> *const c_char as plain(names::UNKNOWN_API.as_ptr()) {
        names::api_name(id).as_ptr()
    }

    /// The name of a runtime command kind, "Unknown command kind" for one AMD does not name.
    fn hipGetCmdName(op: u32) -> *const c_char as plain(names::UNKNOWN_COMMAND.as_ptr()) {
        names::command_name(op).as_ptr()
    }

    /// Success under the ROCm 7 profile, hipErrorNotSupported before, as AMD's runtime answers
    /// (`compat::profiler_calls`). hipshim's own recorder is `HIPSHIM_TRACE`, which these calls
    /// do not switch; the log says so once.
    fn hipProfilerStart() -> hipError_t {
        profiler_call("hipProfilerStart")
    }

    fn hipProfilerStop() -> hipError_t {
        profiler_call("hipProfilerStop")
    }

    /// ROCm 5.2's API callback for callback id `id` (`fun(domain, id, hip_api_data_t*, arg)`,
    /// at the call's entry and exit; only for ids with an activity callback, as in AMD's
    /// runtime). hipErrorInvalidValue for an id outside AMD's range; hipErrorNotSupported
    /// under the ROCm 6 and 7 profiles, whose runtimes lack it.
    fn hipRegisterApiCallback(id: u32, fun: *mut c_void, arg: *mut c_void) -> hipError_t {
        callbacks::set_api_callback(id, fun, arg)
    }

    fn hipRemoveApiCallback(id: u32) -> hipError_t {
        callbacks::set_api_callback(id, std::ptr::null_mut(), std::ptr::null_mut())
    }

    /// ROCm 5.2's activity callback for callback id `id`: it turns the id's reports on and
    /// hands out the record its API callback gets. As `hipRegisterApiCallback` otherwise.
    fn hipRegisterActivityCallback(id: u32, fun: *mut c_void, arg: *mut c_void) -> hipError_t {
        callbacks::set_activity_callback(id, fun, arg)
    }

    fn hipRemoveActivityCallback(id: u32) -> hipError_t {
        callbacks::set_activity_callback(id, std::ptr::null_mut(), std::ptr::null_mut())
    }

    /// ROCm 5.2's device-work callbacks: `id_callback(record id)` while a dispatch or copy is
    /// started, `op_callback(op, activity_record_t*, arg)` once it completed. Ignored under
    /// the ROCm 6 and 7 profiles.
    fn hipInitActivityCallback(id_callback: *mut c_void, op_callback: *mut c_void, arg: *mut c_void) -> () as void {
        callbacks::init_activity(id_callback, op_callback, arg)
    }

    /// Turns ROCm 5.2's device-work reports of `op` (0 dispatch, 1 copy, 2 barrier) on or off:
    /// false for another op, and under the ROCm 6 and 7 profiles.
    fn hipEnableActivityCallback(op: u32, enable: bool) -> bool as plain(false) {
        callbacks::enable_activity(op, enable)
    }

    /// ROCm 5.3's hook for roctracer (and every later runtime's): `report(domain, id, data)`
    /// for each call and each completed dispatch or copy; null stops the reports.
    fn hipRegisterTracerCallback(report: *mut c_void) -> () as void {
        callbacks::set_tracer(report)
    }
}

fn profiler_call(name: &str) -> crate::error::HipResult {
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        tracing::warn!(
            "{name}: hipshim has no profiler to switch; its recorder is HIPSHIM_TRACE / HIPSHIM_STATS, set before the program starts"
        );
    });
    compat::profiler_calls()
}

#[cfg(not(test))]
include!(concat!(env!("OUT_DIR"), "/symver_trace.rs"));

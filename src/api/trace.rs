//! The calls of AMD's tracing and profiling interface (`trace/names.rs`; the profiler switch
//! follows the process's ROCm ABI, `runtime/base/compat.rs`).

use super::declare::hip_api;
use super::types::hipError_t;
use crate::runtime::base::compat;
use crate::trace::names;
use std::ffi::c_char;

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

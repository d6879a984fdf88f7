//! What every exported shell shares: the call wrappers `hip_api!` expands to (catch panics,
//! record the last error, log and trace), the thread's last errors as each ROCm ABI reads
//! them, and the answer of exports no file declares. A child of `api` so that the shells and
//! the index above them (`api/mod.rs`, which gathers their signatures) are not a circle.

use super::types::{self, hipError_t};
use crate::error::{to_code, HipError, HipResult};
use crate::runtime::base::compat::Abi;
use std::cell::Cell;
use std::panic::AssertUnwindSafe;

/// This thread's last errors, in the two forms the ROCm ABIs read (`runtime::base::compat`).
struct LastErrors {
    /// The result of the latest call, success included: what `hipGetLastError` returns up to
    /// ROCm 6 and `hipExtGetLastError` in every version.
    latest: Cell<hipError_t>,
    /// The latest real error (neither success nor `hipErrorNotReady`), kept until read: what
    /// `hipGetLastError` returns from ROCm 7 on (CUDA's rule).
    sticky: Cell<hipError_t>,
}

thread_local! {
    static LAST_ERRORS: LastErrors = const {
        LastErrors { latest: Cell::new(0), sticky: Cell::new(0) }
    };
}

/// Records the result of a call for both readings, so that the call path never asks which ABI
/// the process expects: one thread-local store on success.
#[inline(always)]
fn record(code: hipError_t) {
    LAST_ERRORS.with(|last| {
        last.latest.set(code);
        if code != 0 && code != HipError::NOT_READY.code() {
            last.sticky.set(code);
        }
    });
}

/// Runs one API call: catches panics, records a failure as the last error, logs it at debug
/// (target `hipshim::api`: name, result, duration) and records it while tracing.
///
/// Inlined into every exported shell: while nothing watches the calls (one relaxed load, see
/// `observed`) the body runs in place, so a launch pays for no closure, clock or tracing call.
#[inline(always)]
pub(crate) fn call(name: &'static str, body: impl FnOnce() -> HipResult) -> hipError_t {
    if crate::observed::any() {
        return call_observed(name, body);
    }
    let result = run_caught(name, body);
    record(to_code(result));
    // The first call of the process may start the recorder (or the API log) inside `body`.
    if crate::observed::any() && crate::trace::recording() {
        report_call(name, result, 0, None, false);
    }
    to_code(result)
}

/// `body`, with a panic turned into `hipErrorUnknown` and a message.
#[inline(always)]
fn run_caught(name: &'static str, body: impl FnOnce() -> HipResult) -> HipResult {
    // `move`: the name goes in by value; a reference to it would keep it in memory, two
    // stores at every call.
    std::panic::catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(move |panic| {
        let why = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        eprintln!("hipshim: internal error in {name}: {why}");
        Err(HipError::UNKNOWN)
    })
}

/// [`call`] while something watches the calls: a forked child, the log, the recorder.
#[inline(never)]
#[cold]
fn call_observed(name: &'static str, body: impl FnOnce() -> HipResult) -> hipError_t {
    let recording = crate::trace::recording();
    let logging = tracing::enabled!(target: "hipshim::api", tracing::Level::DEBUG);
    if crate::fork_guard::in_forked_child() {
        // Before anything that could take a lock a vanished parent thread holds; the queries
        // answered from host state run without the log or the recorder, which may.
        if crate::fork_guard::answered_in_child(name) && crate::runtime::started() {
            let result = run_caught(name, body);
            record(to_code(result));
            return to_code(result);
        }
        crate::fork_guard::report_once(name);
        record(HipError::NOT_INITIALIZED.code());
        return HipError::NOT_INITIALIZED.code();
    }
    let (started, token) = if recording || logging {
        (
            crate::trace::record::now_ns(),
            recording.then(crate::trace::record::api_enter),
        )
    } else {
        (0, None)
    };
    // AMD's API callbacks (a tool's), around the call as AMD's runtime makes them.
    let scope = crate::runtime::base::callbacks::api_enter(name);
    let result = run_caught(name, body);
    record(to_code(result));
    crate::runtime::base::callbacks::api_exit(scope);
    report_call(name, result, started, token, logging);
    to_code(result)
}

/// Logs and records a finished call. A call that started the recorder (the first call of the
/// process does, inside its body) is recorded from the moment recording started (hipshim's
/// initialisation is most of it anyway).
#[inline(never)]
#[cold]
fn report_call(
    name: &'static str,
    result: HipResult,
    started: u64,
    token: Option<(u64, u64)>,
    logging: bool,
) {
    let (started, token) = if token.is_none() && crate::trace::recording() {
        (
            crate::trace::record::epoch(),
            Some(crate::trace::record::api_started_late()),
        )
    } else {
        (started, token)
    };
    if token.is_some() || logging {
        let dur_ns = crate::trace::record::now_ns().saturating_sub(started);
        match result {
            Ok(()) => tracing::debug!(target: "hipshim::api", api = name, dur_ns, "ok"),
            Err(error) => {
                tracing::debug!(target: "hipshim::api", api = name, ?error, dur_ns, "failed")
            }
        }
        if let Some(token) = token {
            crate::trace::record::api_exit(name, token, started, dur_ns, to_code(result) as u32);
        }
    }
}

/// Like [`call`] for functions that return a value rather than a status: `failed` when the
/// body fails (the failure is the last error, as with `call`).
pub(crate) fn call_value<T>(
    name: &'static str,
    failed: T,
    body: impl FnOnce() -> HipResult<T>,
) -> T {
    let mut value = None;
    call(name, || {
        value = Some(body()?);
        Ok(())
    });
    value.unwrap_or(failed)
}

/// For the few functions that must not touch the last error, the log or the trace: only
/// keeps a panic from crossing the C ABI (`failed` is returned then).
#[inline(always)]
pub(crate) fn call_plain<T>(name: &'static str, failed: T, body: impl FnOnce() -> T) -> T {
    // `move`, as in `run_caught`.
    std::panic::catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(move |_| {
        eprintln!("hipshim: internal error in {name}");
        failed
    })
}

/// Runs one hiprtc call: its own result codes, and no effect on the thread's last HIP error
/// (AMD's hiprtc keeps apart from the HIP runtime's error state). A panic becomes
/// `HIPRTC_ERROR_INTERNAL_ERROR` and a message; the result is logged at debug
/// (target `hipshim::api`).
pub(crate) fn call_rtc(
    name: &'static str,
    body: impl FnOnce() -> crate::runtime::rtc::RtcResult,
) -> types::hiprtcResult {
    use crate::runtime::rtc::RtcError;
    let result = std::panic::catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|panic| {
        let why = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        eprintln!("hipshim: internal error in {name}: {why}");
        Err(RtcError::InternalError)
    });
    match result {
        Ok(()) => {
            tracing::debug!(target: "hipshim::api", api = name, "ok");
            0
        }
        Err(error) => {
            tracing::debug!(target: "hipshim::api", api = name, ?error, "failed");
            error.code()
        }
    }
}

/// Like [`call`] for functions that return no status: a panic is logged and swallowed.
pub(crate) fn call_void(name: &'static str, body: impl FnOnce()) {
    if crate::fork_guard::in_forked_child() {
        crate::fork_guard::report_once(name);
        return;
    }
    if std::panic::catch_unwind(AssertUnwindSafe(body)).is_err() {
        eprintln!("hipshim: internal error in {name}");
    }
}

/// Records `error` as the thread's last error and returns its code (for the shells that do
/// not go through [`call`]).
#[cold]
pub(crate) fn failed(error: HipError) -> hipError_t {
    record(error.code());
    error.code()
}

/// `hipGetLastError`: the last error as the process's ABI defines it, then success.
pub(crate) fn take_last_error() -> hipError_t {
    take_last_error_as(crate::runtime::base::compat::abi())
}

fn take_last_error_as(abi: Abi) -> hipError_t {
    LAST_ERRORS.with(|last| {
        let sticky = last.sticky.replace(0);
        let latest = last.latest.replace(0);
        if abi.sticky_last_error() {
            sticky
        } else {
            latest
        }
    })
}

/// `hipPeekAtLastError`: as [`take_last_error`], leaving it in place.
pub(crate) fn peek_last_error() -> hipError_t {
    peek_last_error_as(crate::runtime::base::compat::abi())
}

fn peek_last_error_as(abi: Abi) -> hipError_t {
    LAST_ERRORS.with(|last| {
        if abi.sticky_last_error() {
            last.sticky.get()
        } else {
            last.latest.get()
        }
    })
}

/// `hipExtGetLastError`: the result of the latest call (ROCm 6's `hipGetLastError`, kept under
/// this name by ROCm 7), then success. Up to ROCm 6 it is `hipGetLastError` itself.
pub(crate) fn take_latest_result() -> hipError_t {
    if crate::runtime::base::compat::abi().sticky_last_error() {
        LAST_ERRORS.with(|last| last.latest.replace(0))
    } else {
        take_last_error_as(Abi::Rocm6)
    }
}

/// The body of a generated stub for an exported function hipshim does not implement.
pub(crate) fn not_supported(name: &'static str) -> hipError_t {
    call(name, || {
        log_not_supported(name);
        Err(HipError::NOT_SUPPORTED)
    })
}

/// Stub body for an unimplemented export whose C return type is not `hipError_t`.
pub(crate) fn not_supported_value(name: &'static str) -> usize {
    log_not_supported(name);
    0
}

fn log_not_supported(name: &'static str) {
    static REPORTED: std::sync::LazyLock<dashmap::DashSet<&'static str>> =
        std::sync::LazyLock::new(dashmap::DashSet::new);
    if REPORTED.insert(name) {
        eprintln!("hipshim: {name} is not supported yet; returning an error");
    }
}

/// Test helpers for the shells.
#[cfg(test)]
pub(crate) mod testing {
    use std::sync::{Arc, Mutex};
    use tracing_subscriber::layer::SubscriberExt;

    /// Collects, on this thread while it lives, the names the shells log under (the `api`
    /// field of `hipshim::api` debug events).
    ///
    /// Not a closure-taking helper: a test calls the exported shells themselves.
    pub(crate) struct ApiLog {
        names: Arc<Mutex<Vec<String>>>,
        _default: tracing::subscriber::DefaultGuard,
    }

    struct ApiNames(Arc<Mutex<Vec<String>>>);
    struct Visitor<'a>(&'a Mutex<Vec<String>>);

    impl tracing::field::Visit for Visitor<'_> {
        fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
            if field.name() == "api" {
                self.0.lock().unwrap().push(value.to_owned());
            }
        }
        fn record_debug(&mut self, _: &tracing::field::Field, _: &dyn std::fmt::Debug) {}
    }

    impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for ApiNames {
        fn on_event(
            &self,
            event: &tracing::Event<'_>,
            _: tracing_subscriber::layer::Context<'_, S>,
        ) {
            event.record(&mut Visitor(&self.0));
        }
    }

    impl ApiLog {
        pub(crate) fn start() -> ApiLog {
            let names = Arc::new(Mutex::new(Vec::new()));
            let subscriber = tracing_subscriber::registry().with(ApiNames(names.clone()));
            // A thread's own subscriber is invisible to the flag `logging::init` sets from the
            // global one, so it has a bit of its own. Left on: other tests then take the
            // watched path, which asks the log itself on each call and behaves the same.
            crate::observed::set(crate::observed::Watcher::TestLog, true);
            ApiLog {
                names,
                _default: tracing::subscriber::set_default(subscriber),
            }
        }

        pub(crate) fn names(&self) -> Vec<String> {
            self.names.lock().unwrap().clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_hip_error_unknown_and_the_last_error() {
        take_last_error();
        let code = call("test", || panic!("boom"));
        assert_eq!(code, HipError::UNKNOWN.code());
        assert_eq!(peek_last_error(), HipError::UNKNOWN.code());
        assert_eq!(take_last_error(), HipError::UNKNOWN.code());
        assert_eq!(take_last_error(), 0, "hipGetLastError resets to success");
    }

    #[test]
    fn a_panic_in_hiprtc_is_an_internal_error_and_leaves_the_last_error() {
        take_last_error();
        assert_eq!(call_rtc("test", || panic!("boom")), 11);
        assert_eq!(
            call_rtc("test", || Err(crate::runtime::rtc::RtcError::Compilation)),
            6
        );
        assert_eq!(peek_last_error(), 0);
    }

    #[test]
    fn up_to_rocm_6_every_call_sets_the_last_error() {
        for abi in [Abi::Rocm5, Abi::Rocm6] {
            take_last_error_as(abi);
            call("fails", || Err(HipError::INVALID_VALUE));
            assert_eq!(peek_last_error_as(abi), HipError::INVALID_VALUE.code());
            assert_eq!(call("succeeds", || Ok(())), 0);
            assert_eq!(peek_last_error_as(abi), 0, "{abi:?}: success overwrites");
            call("not ready", || Err(HipError::NOT_READY));
            assert_eq!(take_last_error_as(abi), HipError::NOT_READY.code());
            assert_eq!(take_last_error_as(abi), 0);
        }
    }

    #[test]
    fn from_rocm_7_the_last_error_stays_until_read() {
        let abi = Abi::Rocm7;
        take_last_error_as(abi);
        call("fails", || Err(HipError::INVALID_VALUE));
        assert_eq!(call("succeeds", || Ok(())), 0);
        call("not ready", || Err(HipError::NOT_READY));
        assert_eq!(peek_last_error_as(abi), HipError::INVALID_VALUE.code());
        assert_eq!(take_last_error_as(abi), HipError::INVALID_VALUE.code());
        assert_eq!(take_last_error_as(abi), 0);
    }
}

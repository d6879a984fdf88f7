//! What every exported shell shares: the guard that turns a typed result (or a panic) into
//! a status, the once-per-function error report of entry points that return values, the
//! iteration status, and the macro that binds a macro-generated export to ROCr's version node.

use crate::error::{HsaError, HsaResult};

/// Binds a macro-generated export to ROCr's version node (`NAME@@ROCR_1`). Functions
/// written out literally get theirs from the `symver_*.rs` file `build.rs` generates for
/// their source file; a macro's expansion sits in the same module (so the same object) as
/// the function it defines, which is what `.symver` needs.
macro_rules! rocr_symver {
    ($name:ident) => {
        std::arch::global_asm!(concat!(
            ".symver ",
            stringify!($name),
            ", ",
            stringify!($name),
            "@@ROCR_1"
        ));
    };
}
use hsa_abi::{hsa_status_t, status};
use parking_lot::Mutex;
pub(crate) use rocr_symver;
use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs an API body: `Ok` -> SUCCESS, `Err` -> its status, a panic -> `ERROR` with a log
/// line naming the function (a panic never crosses the C ABI).
pub(crate) fn guard(name: &'static str, f: impl FnOnce() -> HsaResult) -> hsa_status_t {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => status::SUCCESS,
        Ok(Err(e)) => {
            tracing::debug!(target: "hsasim", "{name} -> {:#x}", e.status());
            e.status()
        }
        Err(_) => {
            tracing::error!(target: "hsasim", "{name}: internal panic (reported as HSA_STATUS_ERROR)");
            eprintln!("hsasim: internal panic in {name}");
            HsaError::GENERIC.status()
        }
    }
}

/// For entry points that return a value instead of a status (signal and queue-index
/// operations): errors and panics are logged once per function and `fallback` returned.
/// Inlined into each of them: they run on every packet, and the body then runs in place.
#[inline(always)]
pub(crate) fn guard_value<T>(
    name: &'static str,
    fallback: T,
    f: impl FnOnce() -> HsaResult<T>,
) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            report_invalid(name, e);
            fallback
        }
        Err(_) => {
            report_once(name, &format!("{name}: internal panic"));
            fallback
        }
    }
}

#[cold]
#[inline(never)]
fn report_invalid(name: &'static str, e: HsaError) {
    report_once(
        name,
        &format!(
            "{name}: invalid handle or argument (status {:#x}); returning a neutral value",
            e.status()
        ),
    );
}

static REPORTED: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);

/// Logs `message` at error level always, and on stderr the first time for `key`.
pub(crate) fn report_once(key: &'static str, message: &str) {
    tracing::error!(target: "hsasim", "{message}");
    let first = REPORTED.lock().get_or_insert_with(HashSet::new).insert(key);
    if first {
        eprintln!("hsasim: {message}");
    }
}

/// Runs an iteration whose body returns the callback's last status: SUCCESS, INFO_BREAK
/// (passed through as ROCr does) or the callback's error.
pub(crate) fn iterate(
    name: &'static str,
    f: impl FnOnce() -> HsaResult<hsa_status_t>,
) -> hsa_status_t {
    let mut result = status::SUCCESS;
    let s = guard(name, || {
        result = f()?;
        Ok(())
    });
    if s != status::SUCCESS {
        s
    } else {
        result
    }
}

//! Functions the HSA runtime (or the C library) calls back into hipshim: queue error
//! callbacks, async signal handlers, iteration callbacks. A panic must never unwind out of
//! one of them: across a C frame it aborts the process, and a callback that stops half way
//! can leave a waiter waiting forever. Each callback runs its body through [`guarded`], and
//! keeps whatever must happen even after a panic (a status stored, a gate opened) outside the
//! guarded part or in a destructor.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `body`; if it panics, logs the panic as an error naming `what` and returns
/// `on_panic` instead.
pub fn guarded<R>(what: &str, on_panic: R, body: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(value) => value,
        Err(panic) => {
            tracing::error!(
                "internal error: {what} panicked ({}); the panic was stopped there",
                panic_message(panic.as_ref())
            );
            on_panic
        }
    }
}

/// The text a panic was raised with, if it carries one.
pub fn panic_message(panic: &(dyn Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_in_a_guarded_callback_becomes_its_fallback_value() {
        let result = guarded("a test callback", 7, || -> i32 { panic!("boom") });
        assert_eq!(result, 7);
        assert_eq!(guarded("a test callback", 7, || 3), 3);
    }

    #[test]
    fn panic_messages_are_recovered_from_str_and_string_payloads() {
        let payload = catch_unwind(|| panic!("static text")).unwrap_err();
        assert_eq!(panic_message(payload.as_ref()), "static text");
        let payload = catch_unwind(|| panic!("formatted {}", 42)).unwrap_err();
        assert_eq!(panic_message(payload.as_ref()), "formatted 42");
    }
}

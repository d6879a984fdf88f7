//! Contexts as AMD's runtime has them: one primary context per device, no others. A
//! `hipCtx_t` is the address of the device's [`Device`] (stable for the life of the process);
//! `hipCtxCreate` retains the primary context, and a per-thread stack records the pushes. The
//! deprecated `hipCtx*` calls thereby move the thread's current device.

use crate::error::{HipError, HipResult};
use crate::runtime::devices::current;
use crate::runtime::devices::device::{self, Device};
use std::cell::RefCell;
use std::ffi::c_void;
use std::sync::Mutex;

/// A primary context's retain count and flags, by device ordinal.
static PRIMARY: Mutex<Vec<(u32, u32)>> = Mutex::new(Vec::new());

thread_local! {
    /// The contexts this thread pushed (device ordinals), innermost last.
    static STACK: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// The `hipCtx_t` of device `device`.
pub fn handle_of(device: &Device) -> *mut c_void {
    device as *const Device as *mut c_void
}

/// The device of `devices` a `hipCtx_t` names (null or unknown: hipErrorInvalidContext).
pub fn device_of(devices: &[Device], ctx: *mut c_void) -> HipResult<&Device> {
    devices.iter().find(|d| handle_of(d) == ctx).ok_or_else(|| {
        tracing::warn!(ctx = format_args!("{ctx:p}"), "not a context");
        HipError::INVALID_CONTEXT
    })
}

fn with_primary<T>(device: usize, f: impl FnOnce(&mut (u32, u32)) -> T) -> T {
    let mut all = PRIMARY.lock().unwrap_or_else(|p| p.into_inner());
    if all.len() <= device {
        all.resize(device + 1, (0, 0));
    }
    f(&mut all[device])
}

/// `hipDevicePrimaryCtxRetain`.
pub fn retain_primary(device: &Device) -> *mut c_void {
    with_primary(device.index, |p| p.0 = p.0.saturating_add(1));
    handle_of(device)
}

/// `hipDevicePrimaryCtxRelease` (releasing more often than retaining is no error, as in AMD).
pub fn release_primary(device: &Device) {
    with_primary(device.index, |p| p.0 = p.0.saturating_sub(1));
}

/// `hipDevicePrimaryCtxGetState`: (flags, active).
pub fn primary_state(device: &Device) -> (u32, bool) {
    with_primary(device.index, |p| (p.1, p.0 > 0))
}

/// `hipDevicePrimaryCtxSetFlags`: only while the context is not active (AMD's runtime keeps
/// its primary contexts active and always answers hipErrorContextAlreadyInUse).
pub fn set_primary_flags(device: &Device, flags: u32) -> HipResult {
    if flags & !device::DEVICE_FLAGS_ALL != 0 {
        return Err(HipError::INVALID_VALUE);
    }
    with_primary(device.index, |p| {
        if p.0 > 0 {
            return Err(HipError::CONTEXT_ALREADY_IN_USE);
        }
        p.1 = flags;
        Ok(())
    })
}

/// `hipDevicePrimaryCtxReset`: forgets the retains and flags (the device's work and memory are
/// left alone, as AMD does).
pub fn reset_primary(device: &Device) {
    with_primary(device.index, |p| *p = (0, 0));
}

/// `hipCtxCreate`: retains the primary context, makes it current and pushes it.
pub fn create(flags: u32, device: &Device) -> *mut c_void {
    with_primary(device.index, |p| p.1 = flags);
    let ctx = retain_primary(device);
    push(device);
    ctx
}

/// `hipCtxDestroy`: pops it if it is this thread's innermost context, and releases it.
pub fn destroy(device: &Device) {
    STACK.with(|s| {
        let mut s = s.borrow_mut();
        if s.last() == Some(&device.index) {
            s.pop();
        }
    });
    release_primary(device);
}

/// `hipCtxPushCurrent`: `device` becomes current.
pub fn push(device: &Device) {
    STACK.with(|s| s.borrow_mut().push(device.index));
    current::select(device.index);
}

/// `hipCtxPopCurrent`: the popped context, one of `devices`'; the one below (if any) becomes
/// current again.
pub fn pop(devices: &[Device]) -> HipResult<*mut c_void> {
    let (popped, below) = STACK.with(|s| {
        let mut s = s.borrow_mut();
        let popped = s.pop();
        (popped, s.last().copied())
    });
    let Some(popped) = popped else {
        tracing::warn!("hipCtxPopCurrent with no context pushed on this thread");
        return Err(HipError::INVALID_CONTEXT);
    };
    if let Some(below) = below {
        device::nth(devices, below)?;
        current::select(below);
    }
    Ok(handle_of(device::nth(devices, popped)?))
}

/// `hipCtxSetCurrent`: replaces the innermost context (null pops it).
pub fn set_current(device: Option<&Device>) {
    STACK.with(|s| {
        let mut s = s.borrow_mut();
        s.pop();
        if let Some(device) = device {
            s.push(device.index);
        }
    });
    if let Some(device) = device {
        current::select(device.index);
    }
}

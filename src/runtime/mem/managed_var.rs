//! `__managed__` variables (`__hipRegisterManagedVar`): managed memory each variable gets
//! before `main`, and the device-side pointer variable that names it wherever the code object
//! is loaded. Apart from `ops/managed.rs` (advice and prefetch), which builds on streams and
//! graphs, so that loading a module needs neither.

use crate::error::{HipError, HipResult};
use crate::runtime::devices::current;
use crate::runtime::devices::device::Device;
use crate::runtime::mem::memory;
use std::ffi::c_void;

/// `__hipRegisterManagedVar`, run by the program's constructors: the variable's managed
/// memory (made through the current one of `devices`), initialised from `init` (`size`
/// bytes) and named by the host-side pointer `*host_var`, which host code reads directly (so
/// it is set now, not at first use). Returns the memory's address.
///
/// # Safety
/// `host_var` points to the host-side pointer clang emitted for the variable, `init` to
/// `size` readable bytes.
pub unsafe fn register_variable(
    devices: &[Device],
    host_var: *mut *mut c_void,
    init: *const c_void,
    size: usize,
    align: usize,
) -> HipResult<usize> {
    if host_var.is_null() || init.is_null() || size == 0 {
        tracing::error!("__hipRegisterManagedVar: a null variable or initialiser, or size 0");
        return Err(HipError::INVALID_VALUE);
    }
    let device = current::device(devices)?;
    let memory = memory::malloc_managed(device, size, memory::host_flags::ATTACH_GLOBAL)?;
    if align > 1 && !(memory as usize).is_multiple_of(align) {
        tracing::error!(
            align,
            "__hipRegisterManagedVar: managed memory is not aligned enough"
        );
        // SAFETY: `memory` is the allocation just made.
        let _ = unsafe { memory::free(devices, memory) };
        return Err(HipError::INVALID_VALUE);
    }
    // SAFETY: `memory` is a fresh host-visible allocation of `size` bytes; `init` holds
    // `size` bytes (the caller's contract); `host_var` is the variable's host pointer.
    unsafe {
        std::ptr::copy_nonoverlapping(init.cast::<u8>(), memory.cast::<u8>(), size);
        host_var.write(memory);
    }
    Ok(memory as usize)
}

/// Points the device-side variable of each of `managed` (name, memory) at its memory, on
/// `device`, where an image with those variables (`variables`: name -> (address, size)) was
/// just loaded. Two 4-byte fills: they need no stream and no staging buffer.
pub(crate) fn bind_variables(
    device: &Device,
    variables: &std::collections::HashMap<String, (usize, usize)>,
    managed: &[(String, usize)],
) -> HipResult {
    for (name, memory) in managed {
        let Some(&(address, size)) = variables.get(name) else {
            tracing::error!(%name, "the code object has no pointer variable for this managed variable");
            return Err(HipError::INVALID_SYMBOL);
        };
        if size < 8 || address % 4 != 0 {
            tracing::error!(%name, size, "a managed variable's device-side pointer is not 8 aligned bytes");
            return Err(HipError::INVALID_SYMBOL);
        }
        let value = *memory as u64;
        // SAFETY: `address` is a device global of a code object just loaded on `device`, 8
        // bytes, 4-byte aligned (checked).
        unsafe {
            device.engines.fill(address, value as u32, 1)?;
            device.engines.fill(address + 4, (value >> 32) as u32, 1)?;
        }
    }
    Ok(())
}

//! Memory allocation, synchronous copies and fills, pointer queries, device symbols.
#![allow(non_snake_case)]

use super::{call, write_out};
use crate::error::{hipError_t, HipError};
use crate::runtime::copy::{self, CopyKind, Rows};
use crate::runtime::memory::{self, PointerAttributes};
use crate::runtime::module;
use std::ffi::c_void;

#[no_mangle]
pub extern "C" fn hipMalloc(ptr: *mut *mut c_void, size: usize) -> hipError_t {
    call("hipMalloc", || {
        if ptr.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        write_out(ptr, memory::malloc(size)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipFree(ptr: *mut c_void) -> hipError_t {
    // SAFETY: `free` only dereferences pointers it finds in its allocation table.
    call("hipFree", || unsafe { memory::free(ptr) })
}

#[no_mangle]
pub extern "C" fn hipMallocPitch(
    ptr: *mut *mut c_void,
    pitch: *mut usize,
    width: usize,
    height: usize,
) -> hipError_t {
    call("hipMallocPitch", || {
        if ptr.is_null() || pitch.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        let (p, row_pitch) = memory::malloc_pitch(width, height)?;
        write_out(pitch, row_pitch)?;
        write_out(ptr, p)
    })
}

/// The driver-API form; the element size only matters to CUDA's texture path.
#[no_mangle]
pub extern "C" fn hipMemAllocPitch(
    ptr: *mut *mut c_void,
    pitch: *mut usize,
    width: usize,
    height: usize,
    _element_size: u32,
) -> hipError_t {
    call("hipMemAllocPitch", || {
        if ptr.is_null() || pitch.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        let (p, row_pitch) = memory::malloc_pitch(width, height)?;
        write_out(pitch, row_pitch)?;
        write_out(ptr, p)
    })
}

fn host_malloc(name: &'static str, ptr: *mut *mut c_void, size: usize, flags: u32) -> hipError_t {
    call(name, || {
        if ptr.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        write_out(ptr, memory::host_malloc(size, flags)?)
    })
}

#[no_mangle]
pub extern "C" fn hipHostMalloc(ptr: *mut *mut c_void, size: usize, flags: u32) -> hipError_t {
    host_malloc("hipHostMalloc", ptr, size, flags)
}

/// CUDA's spelling: only the portable, mapped and write-combined flags (AMD checks so too).
#[no_mangle]
pub extern "C" fn hipHostAlloc(ptr: *mut *mut c_void, size: usize, flags: u32) -> hipError_t {
    use memory::host_flags::*;
    if flags & !(PORTABLE | MAPPED | WRITE_COMBINED) != 0 {
        return call("hipHostAlloc", || Err(HipError::INVALID_VALUE));
    }
    host_malloc("hipHostAlloc", ptr, size, flags)
}

/// Deprecated alias of `hipHostMalloc(ptr, size, 0)`.
#[no_mangle]
pub extern "C" fn hipMallocHost(ptr: *mut *mut c_void, size: usize) -> hipError_t {
    host_malloc("hipMallocHost", ptr, size, 0)
}

/// Deprecated alias of `hipHostMalloc(ptr, size, 0)`.
#[no_mangle]
pub extern "C" fn hipMemAllocHost(ptr: *mut *mut c_void, size: usize) -> hipError_t {
    host_malloc("hipMemAllocHost", ptr, size, 0)
}

#[no_mangle]
pub extern "C" fn hipHostFree(ptr: *mut c_void) -> hipError_t {
    call("hipHostFree", || memory::host_free(ptr))
}

/// Deprecated alias of `hipHostFree`.
#[no_mangle]
pub extern "C" fn hipFreeHost(ptr: *mut c_void) -> hipError_t {
    call("hipFreeHost", || memory::host_free(ptr))
}

#[no_mangle]
pub extern "C" fn hipMallocManaged(ptr: *mut *mut c_void, size: usize, flags: u32) -> hipError_t {
    call("hipMallocManaged", || {
        if ptr.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        write_out(ptr, memory::malloc_managed(size, flags)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipHostRegister(ptr: *mut c_void, size: usize, flags: u32) -> hipError_t {
    // SAFETY: HIP's contract: the range is the caller's live host memory.
    call("hipHostRegister", || unsafe {
        memory::host_register(ptr, size, flags)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipHostUnregister(ptr: *mut c_void) -> hipError_t {
    // SAFETY: only a registered pointer is passed on (checked against the registry).
    call("hipHostUnregister", || unsafe {
        memory::host_unregister(ptr)
    })
}

#[no_mangle]
pub extern "C" fn hipHostGetDevicePointer(
    device_ptr: *mut *mut c_void,
    host_ptr: *mut c_void,
    flags: u32,
) -> hipError_t {
    call("hipHostGetDevicePointer", || {
        if device_ptr.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        write_out(
            device_ptr,
            memory::host_get_device_pointer(host_ptr, flags)?,
        )
    })
}

#[no_mangle]
pub extern "C" fn hipHostGetFlags(flags: *mut u32, host_ptr: *mut c_void) -> hipError_t {
    call("hipHostGetFlags", || {
        if flags.is_null() || host_ptr.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        write_out(flags, memory::host_get_flags(host_ptr)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpy(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    kind: u32,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    unsafe { memcpy_shell("hipMemcpy", dst, src, size, kind) }
}

// The synchronous `_spt` forms ("per-thread default stream") must be ordered after the
// calling thread's stream; the synchronous copies and fills already wait for every stream
// of the device, which includes it, so they share the shells below under their own names.

#[no_mangle]
pub unsafe extern "C" fn hipMemcpy_spt(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    kind: u32,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    unsafe { memcpy_shell("hipMemcpy_spt", dst, src, size, kind) }
}

/// # Safety
/// HIP's contract for hipMemcpy: host-side ranges are valid for `size` bytes.
unsafe fn memcpy_shell(
    name: &'static str,
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    kind: u32,
) -> hipError_t {
    call(name, || {
        let kind = CopyKind::from_raw(kind)?;
        // SAFETY: the caller's contract.
        unsafe { copy::memcpy(dst, src, size, kind) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyHtoD(
    dst: *mut c_void,
    src: *mut c_void,
    size: usize,
) -> hipError_t {
    // SAFETY: HIP's contract: `src` is valid host memory of `size` bytes.
    call("hipMemcpyHtoD", || unsafe {
        copy::memcpy(dst, src, size, CopyKind::HostToDevice)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyDtoH(
    dst: *mut c_void,
    src: *mut c_void,
    size: usize,
) -> hipError_t {
    // SAFETY: HIP's contract: `dst` is valid host memory of `size` bytes.
    call("hipMemcpyDtoH", || unsafe {
        copy::memcpy(dst, src, size, CopyKind::DeviceToHost)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyDtoD(
    dst: *mut c_void,
    src: *mut c_void,
    size: usize,
) -> hipError_t {
    // SAFETY: both sides are checked against the registry.
    call("hipMemcpyDtoD", || unsafe {
        copy::memcpy(dst, src, size, CopyKind::DeviceToDevice)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpy2D(
    dst: *mut c_void,
    dst_pitch: usize,
    src: *const c_void,
    src_pitch: usize,
    width: usize,
    height: usize,
    kind: u32,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    unsafe {
        memcpy_2d_shell(
            "hipMemcpy2D",
            dst,
            dst_pitch,
            src,
            src_pitch,
            width,
            height,
            kind,
        )
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpy2D_spt(
    dst: *mut c_void,
    dst_pitch: usize,
    src: *const c_void,
    src_pitch: usize,
    width: usize,
    height: usize,
    kind: u32,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    unsafe {
        memcpy_2d_shell(
            "hipMemcpy2D_spt",
            dst,
            dst_pitch,
            src,
            src_pitch,
            width,
            height,
            kind,
        )
    }
}

/// # Safety
/// HIP's contract for hipMemcpy2D: host-side rows are valid memory.
#[allow(clippy::too_many_arguments)]
unsafe fn memcpy_2d_shell(
    name: &'static str,
    dst: *mut c_void,
    dst_pitch: usize,
    src: *const c_void,
    src_pitch: usize,
    width: usize,
    height: usize,
    kind: u32,
) -> hipError_t {
    call(name, || {
        let kind = CopyKind::from_raw(kind)?;
        let rows = Rows {
            width,
            height,
            dst_pitch,
            src_pitch,
        };
        // SAFETY: HIP's contract: host-side rows are valid memory.
        unsafe { copy::memcpy_2d(dst, src, rows, kind) }
    })
}

#[no_mangle]
pub extern "C" fn hipMemset(dst: *mut c_void, value: i32, size: usize) -> hipError_t {
    call("hipMemset", || copy::memset(dst, value as u8, size))
}

#[no_mangle]
pub extern "C" fn hipMemset_spt(dst: *mut c_void, value: i32, size: usize) -> hipError_t {
    call("hipMemset_spt", || copy::memset(dst, value as u8, size))
}

#[no_mangle]
pub extern "C" fn hipMemsetD8(dst: *mut c_void, value: u8, count: usize) -> hipError_t {
    call("hipMemsetD8", || copy::memset_pattern(dst, &[value], count))
}

#[no_mangle]
pub extern "C" fn hipMemsetD16(dst: *mut c_void, value: u16, count: usize) -> hipError_t {
    call("hipMemsetD16", || {
        copy::memset_pattern(dst, &value.to_le_bytes(), count)
    })
}

#[no_mangle]
pub extern "C" fn hipMemsetD32(dst: *mut c_void, value: i32, count: usize) -> hipError_t {
    call("hipMemsetD32", || {
        copy::memset_pattern(dst, &value.to_le_bytes(), count)
    })
}

#[no_mangle]
pub extern "C" fn hipMemset2D(
    dst: *mut c_void,
    pitch: usize,
    value: i32,
    width: usize,
    height: usize,
) -> hipError_t {
    call("hipMemset2D", || {
        copy::memset_2d(dst, pitch, value as u8, width, height)
    })
}

#[no_mangle]
pub extern "C" fn hipMemset2D_spt(
    dst: *mut c_void,
    pitch: usize,
    value: i32,
    width: usize,
    height: usize,
) -> hipError_t {
    call("hipMemset2D_spt", || {
        copy::memset_2d(dst, pitch, value as u8, width, height)
    })
}

#[no_mangle]
pub extern "C" fn hipMemGetInfo(free: *mut usize, total: *mut usize) -> hipError_t {
    call("hipMemGetInfo", || {
        let (f, t) = memory::mem_get_info()?;
        // Either may be null (AMD fills the ones given).
        if !free.is_null() {
            write_out(free, f)?;
        }
        if !total.is_null() {
            write_out(total, t)?;
        }
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn hipMemPtrGetInfo(ptr: *mut c_void, size: *mut usize) -> hipError_t {
    call("hipMemPtrGetInfo", || {
        if size.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        write_out(size, memory::mem_ptr_get_info(ptr)?)
    })
}

#[no_mangle]
pub extern "C" fn hipMemGetAddressRange(
    base: *mut *mut c_void,
    size: *mut usize,
    ptr: *mut c_void,
) -> hipError_t {
    call("hipMemGetAddressRange", || {
        let alloc = memory::lookup(ptr as usize, 1).ok_or(HipError::NOT_FOUND)?;
        if !base.is_null() {
            write_out(base, alloc.start as *mut c_void)?;
        }
        if !size.is_null() {
            write_out(size, alloc.size)?;
        }
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn hipPointerGetAttributes(
    attributes: *mut PointerAttributes,
    ptr: *const c_void,
) -> hipError_t {
    call("hipPointerGetAttributes", || {
        if attributes.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        write_out(attributes, memory::pointer_attributes(ptr)?)
    })
}

// ---------------------------------------------------------------------------------------
// Device symbols (`__device__` / `__constant__` variables registered by __hipRegisterVar)

#[no_mangle]
pub extern "C" fn hipGetSymbolAddress(ptr: *mut *mut c_void, symbol: *const c_void) -> hipError_t {
    call("hipGetSymbolAddress", || {
        if ptr.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        let (address, _) = module::symbol_on_current_device(symbol)?;
        write_out(ptr, address as *mut c_void)
    })
}

#[no_mangle]
pub extern "C" fn hipGetSymbolSize(size: *mut usize, symbol: *const c_void) -> hipError_t {
    call("hipGetSymbolSize", || {
        if size.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        let (_, bytes) = module::symbol_on_current_device(symbol)?;
        write_out(size, bytes)
    })
}

/// The device range `[symbol + offset, + size)`, checked against the variable's size.
fn symbol_range(
    symbol: *const c_void,
    offset: usize,
    size: usize,
) -> crate::error::HipResult<usize> {
    let (address, bytes) = module::symbol_on_current_device(symbol)?;
    match offset.checked_add(size) {
        Some(end) if end <= bytes => Ok(address + offset),
        _ => {
            tracing::warn!(
                offset,
                size,
                bytes,
                "copy beyond the end of a device symbol"
            );
            Err(HipError::INVALID_VALUE)
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyToSymbol(
    symbol: *const c_void,
    src: *const c_void,
    size: usize,
    offset: usize,
    kind: u32,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    unsafe {
        symbol_copy(
            "hipMemcpyToSymbol",
            Towards::Symbol,
            symbol,
            src as *mut c_void,
            size,
            offset,
            kind,
            None,
        )
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyToSymbol_spt(
    symbol: *const c_void,
    src: *const c_void,
    size: usize,
    offset: usize,
    kind: u32,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    unsafe {
        symbol_copy(
            "hipMemcpyToSymbol_spt",
            Towards::Symbol,
            symbol,
            src as *mut c_void,
            size,
            offset,
            kind,
            None,
        )
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyFromSymbol(
    dst: *mut c_void,
    symbol: *const c_void,
    size: usize,
    offset: usize,
    kind: u32,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    unsafe {
        symbol_copy(
            "hipMemcpyFromSymbol",
            Towards::Host,
            symbol,
            dst,
            size,
            offset,
            kind,
            None,
        )
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyFromSymbol_spt(
    dst: *mut c_void,
    symbol: *const c_void,
    size: usize,
    offset: usize,
    kind: u32,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    unsafe {
        symbol_copy(
            "hipMemcpyFromSymbol_spt",
            Towards::Host,
            symbol,
            dst,
            size,
            offset,
            kind,
            None,
        )
    }
}

/// Stream-ordered copy into a device variable: the symbol is resolved now, the copy is
/// the stream owner's `memcpy_async`.
#[no_mangle]
pub unsafe extern "C" fn hipMemcpyToSymbolAsync(
    symbol: *const c_void,
    src: *const c_void,
    size: usize,
    offset: usize,
    kind: u32,
    stream: *mut c_void,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    unsafe {
        symbol_copy(
            "hipMemcpyToSymbolAsync",
            Towards::Symbol,
            symbol,
            src as *mut c_void,
            size,
            offset,
            kind,
            Some(stream),
        )
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyToSymbolAsync_spt(
    symbol: *const c_void,
    src: *const c_void,
    size: usize,
    offset: usize,
    kind: u32,
    stream: *mut c_void,
) -> hipError_t {
    let stream = crate::runtime::stream::spt_stream(stream);
    // SAFETY: forwarded caller contract.
    unsafe {
        symbol_copy(
            "hipMemcpyToSymbolAsync_spt",
            Towards::Symbol,
            symbol,
            src as *mut c_void,
            size,
            offset,
            kind,
            Some(stream),
        )
    }
}

/// Stream-ordered copy out of a device variable.
#[no_mangle]
pub unsafe extern "C" fn hipMemcpyFromSymbolAsync(
    dst: *mut c_void,
    symbol: *const c_void,
    size: usize,
    offset: usize,
    kind: u32,
    stream: *mut c_void,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    unsafe {
        symbol_copy(
            "hipMemcpyFromSymbolAsync",
            Towards::Host,
            symbol,
            dst,
            size,
            offset,
            kind,
            Some(stream),
        )
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyFromSymbolAsync_spt(
    dst: *mut c_void,
    symbol: *const c_void,
    size: usize,
    offset: usize,
    kind: u32,
    stream: *mut c_void,
) -> hipError_t {
    let stream = crate::runtime::stream::spt_stream(stream);
    // SAFETY: forwarded caller contract.
    unsafe {
        symbol_copy(
            "hipMemcpyFromSymbolAsync_spt",
            Towards::Host,
            symbol,
            dst,
            size,
            offset,
            kind,
            Some(stream),
        )
    }
}

/// Which way a symbol copy goes.
#[derive(Clone, Copy)]
enum Towards {
    /// From `other` (host or device memory) into the symbol.
    Symbol,
    /// From the symbol into `other`.
    Host,
}

/// The one body of every hipMemcpy{To,From}Symbol{,Async}{,_spt}: check the kind for the
/// direction, resolve the symbol's range, then copy synchronously or on `stream`.
///
/// # Safety
/// HIP's contract: the non-symbol side is valid for `size` bytes (until the copy completes,
/// for the stream-ordered forms).
#[allow(clippy::too_many_arguments)]
unsafe fn symbol_copy(
    name: &'static str,
    towards: Towards,
    symbol: *const c_void,
    other: *mut c_void,
    size: usize,
    offset: usize,
    kind: u32,
    stream: Option<*mut c_void>,
) -> hipError_t {
    call(name, || {
        let kind = CopyKind::from_raw(kind)?;
        let allowed = match towards {
            Towards::Symbol => CopyKind::HostToDevice,
            Towards::Host => CopyKind::DeviceToHost,
        };
        if !matches!(kind, CopyKind::DeviceToDevice | CopyKind::Default) && kind != allowed {
            return Err(HipError::INVALID_MEMCPY_DIRECTION);
        }
        let at = symbol_range(symbol, offset, size)? as *mut c_void;
        let (dst, src) = match towards {
            Towards::Symbol => (at, other as *const c_void),
            Towards::Host => (other, at as *const c_void),
        };
        // SAFETY: the caller's contract covers `other`; `at` was checked against the
        // symbol's registered size.
        unsafe {
            match stream {
                None => copy::memcpy(dst, src, size, kind),
                Some(stream) => copy::memcpy_async(dst, src, size, kind, stream),
            }
        }
    })
}

include!(concat!(env!("OUT_DIR"), "/symver_memory.rs"));

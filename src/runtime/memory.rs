//! Device memory: the table of live allocations, and copies/fills. Copies run on the HSA
//! runtime's copy engines (`hsa_amd_memory_async_copy`); pageable host memory goes through
//! the device's pinned staging buffer in chunks.

use super::device::{runtime_error, Device, STAGING_BYTES};
use super::runtime;
use crate::error::{HipError, HipResult};
use crate::hsa;
use hsa_abi::*;
use parking_lot::RwLock;
use std::collections::BTreeMap;
use std::ffi::c_void;

/// `hipMemcpyKind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyKind {
    HostToHost,
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
    Default,
}

impl CopyKind {
    pub fn from_raw(kind: u32) -> HipResult<CopyKind> {
        Ok(match kind {
            0 => CopyKind::HostToHost,
            1 => CopyKind::HostToDevice,
            2 => CopyKind::DeviceToHost,
            3 => CopyKind::DeviceToDevice,
            4 => CopyKind::Default,
            _ => return Err(HipError::INVALID_MEMCPY_DIRECTION),
        })
    }
}

#[derive(Clone, Copy, Debug)]
struct Allocation {
    size: usize,
    device: usize,
}

/// Live device allocations by start address.
static ALLOCATIONS: RwLock<BTreeMap<usize, Allocation>> = RwLock::new(BTreeMap::new());

/// Where a host-visible address range lives, which decides how it is copied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Residence {
    /// Inside one allocation of device `.0`.
    Device(usize),
    /// Host memory the devices can access directly (hipHostMalloc, hipHostRegister): copied
    /// by the copy engine without staging.
    PinnedHost,
    /// Ordinary pageable host memory: copied through the pinned staging buffer.
    Pageable,
}

/// Where `[ptr, ptr + len)` lives.
pub fn residence(ptr: usize, len: usize) -> Residence {
    match owner(ptr, len) {
        Some(device) => Residence::Device(device),
        None => Residence::Pageable,
    }
}

/// The device owning `[ptr, ptr + len)` if that range lies inside one allocation.
fn owner(ptr: usize, len: usize) -> Option<usize> {
    let table = ALLOCATIONS.read();
    let (&start, alloc) = table.range(..=ptr).next_back()?;
    (ptr.checked_add(len)? <= start + alloc.size.max(1)).then_some(alloc.device)
}

pub fn malloc(size: usize) -> HipResult<*mut c_void> {
    let rt = runtime()?;
    let device = rt.current_device()?;
    if size == 0 {
        return Ok(std::ptr::null_mut());
    }
    if size > device.device_pool.size {
        tracing::warn!(
            size,
            pool = device.device_pool.size,
            "allocation larger than device memory"
        );
        return Err(HipError::OUT_OF_MEMORY);
    }
    let mut ptr: *mut c_void = std::ptr::null_mut();
    // SAFETY: valid pool and out-pointer.
    let status = unsafe {
        (device.api.hsa_amd_memory_pool_allocate)(device.device_pool.pool, size, 0, &mut ptr)
    };
    if status != status::SUCCESS {
        tracing::warn!(size, status = %device.api.describe(status), "device allocation failed");
        return Err(HipError::OUT_OF_MEMORY);
    }
    ALLOCATIONS.write().insert(
        ptr as usize,
        Allocation {
            size,
            device: device.index,
        },
    );
    tracing::debug!(size, ptr = format_args!("{ptr:p}"), "hipMalloc");
    Ok(ptr)
}

/// # Safety
/// `ptr` is null or any pointer value; only pointers found in the allocation table are
/// passed on to the HSA runtime.
pub unsafe fn free(ptr: *mut c_void) -> HipResult {
    if ptr.is_null() {
        return Ok(());
    }
    let rt = runtime()?;
    let Some(alloc) = ALLOCATIONS.read().get(&(ptr as usize)).copied() else {
        tracing::warn!(
            ptr = format_args!("{ptr:p}"),
            "hipFree of a pointer hipMalloc did not return"
        );
        return Err(HipError::INVALID_VALUE);
    };
    // Freeing memory a queued kernel may still use would be a use-after-free on the device.
    let device = rt.device(alloc.device)?;
    device.synchronize()?;
    ALLOCATIONS.write().remove(&(ptr as usize));
    // SAFETY: `ptr` was returned by hsa_amd_memory_pool_allocate and is freed once (it was
    // just removed from the table).
    let status = unsafe { (device.api.hsa_amd_memory_pool_free)(ptr) };
    hsa::check("hsa_amd_memory_pool_free", status).map_err(runtime_error)
}

/// Synchronous copy in the null stream's order (waits for earlier work first).
///
/// # Safety
/// Host-side ranges (`src` for host-to-device, `dst` for device-to-host, both for
/// host-to-host) must be valid for `size` bytes; device-side ranges are checked against the
/// allocation table.
pub unsafe fn memcpy(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    kind: CopyKind,
) -> HipResult {
    if size == 0 {
        return Ok(());
    }
    if dst.is_null() || src.is_null() {
        return Err(HipError::INVALID_VALUE);
    }
    let rt = runtime()?;
    let (dst_dev, src_dev) = (owner(dst as usize, size), owner(src as usize, size));
    let kind = match kind {
        CopyKind::Default => match (src_dev.is_some(), dst_dev.is_some()) {
            (false, false) => CopyKind::HostToHost,
            (false, true) => CopyKind::HostToDevice,
            (true, false) => CopyKind::DeviceToHost,
            (true, true) => CopyKind::DeviceToDevice,
        },
        kind => kind,
    };
    let device_of = |found: Option<usize>, what: &str| {
        found.ok_or_else(|| {
            tracing::warn!("hipMemcpy: the {what} range is not inside a device allocation");
            HipError::INVALID_VALUE
        })
    };
    match kind {
        CopyKind::HostToHost => {
            // SAFETY: both are caller-provided host ranges of `size` bytes; hipMemcpy with
            // overlapping ranges is undefined in HIP as in C's memcpy, so memmove is a
            // conservative choice.
            unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, size) };
            Ok(())
        }
        CopyKind::HostToDevice => {
            let device = rt.device(device_of(dst_dev, "destination")?)?;
            device.synchronize()?;
            copy_through_staging(
                device,
                dst as usize,
                src as usize,
                size,
                Direction::ToDevice,
            )
        }
        CopyKind::DeviceToHost => {
            let device = rt.device(device_of(src_dev, "source")?)?;
            device.synchronize()?;
            copy_through_staging(device, dst as usize, src as usize, size, Direction::ToHost)
        }
        CopyKind::DeviceToDevice => {
            let device = rt.device(device_of(dst_dev, "destination")?)?;
            device_of(src_dev, "source")?;
            device.synchronize()?;
            let copy = device.copy.lock();
            engine_copy(
                device,
                &copy.signal,
                dst,
                device.agent,
                src,
                device.agent,
                size,
            )
        }
        CopyKind::Default => unreachable!("resolved above"),
    }
}

/// Fills `size` bytes at device address `dst` with `value` (checked against the allocation
/// table, so any pointer value is safe to pass).
pub fn memset(dst: *mut c_void, value: u8, size: usize) -> HipResult {
    if size == 0 {
        return Ok(());
    }
    if dst.is_null() {
        return Err(HipError::INVALID_VALUE);
    }
    let rt = runtime()?;
    let device = rt.device(owner(dst as usize, size).ok_or_else(|| {
        tracing::warn!("hipMemset: the range is not inside a device allocation");
        HipError::INVALID_VALUE
    })?)?;
    device.synchronize()?;
    let copy = device.copy.lock();
    let chunk = size.min(STAGING_BYTES);
    // SAFETY: the staging buffer holds STAGING_BYTES and is ours while `copy` is locked.
    unsafe { std::ptr::write_bytes(copy.staging, value, chunk) };
    let mut done = 0;
    while done < size {
        let n = (size - done).min(STAGING_BYTES);
        engine_copy(
            device,
            &copy.signal,
            (dst as usize + done) as *mut c_void,
            device.agent,
            copy.staging as *const c_void,
            device.cpu_agent,
            n,
        )?;
        done += n;
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Direction {
    ToDevice,
    ToHost,
}

/// Copies between pageable host memory and the device through the pinned staging buffer.
fn copy_through_staging(
    device: &Device,
    dst: usize,
    src: usize,
    size: usize,
    direction: Direction,
) -> HipResult {
    let copy = device.copy.lock();
    let staging = copy.staging;
    let mut done = 0;
    while done < size {
        let n = (size - done).min(STAGING_BYTES);
        match direction {
            Direction::ToDevice => {
                // SAFETY: the caller's source range covers `size` bytes; staging holds n.
                unsafe { std::ptr::copy_nonoverlapping((src + done) as *const u8, staging, n) };
                engine_copy(
                    device,
                    &copy.signal,
                    (dst + done) as *mut c_void,
                    device.agent,
                    staging as *const c_void,
                    device.cpu_agent,
                    n,
                )?;
            }
            Direction::ToHost => {
                engine_copy(
                    device,
                    &copy.signal,
                    staging as *mut c_void,
                    device.cpu_agent,
                    (src + done) as *const c_void,
                    device.agent,
                    n,
                )?;
                // SAFETY: the caller's destination range covers `size` bytes.
                unsafe { std::ptr::copy_nonoverlapping(staging, (dst + done) as *mut u8, n) };
            }
        }
        done += n;
    }
    Ok(())
}

/// One copy on the HSA runtime's copy engine, waited for on `signal`.
fn engine_copy(
    device: &Device,
    signal: &crate::hsa::signal::Signal,
    dst: *mut c_void,
    dst_agent: hsa_agent_t,
    src: *const c_void,
    src_agent: hsa_agent_t,
    size: usize,
) -> HipResult {
    signal.store(1);
    // SAFETY: both ranges are device-accessible (device allocations or pinned staging) and
    // cover `size` bytes; no dependency signals.
    let status = unsafe {
        (device.api.hsa_amd_memory_async_copy)(
            dst,
            dst_agent,
            src,
            src_agent,
            size,
            0,
            std::ptr::null(),
            signal.handle,
        )
    };
    hsa::check("hsa_amd_memory_async_copy", status).map_err(runtime_error)?;
    tracing::trace!(size, "copy submitted to the copy engine");
    signal
        .wait_zero(device.timestamp_hz, || None::<HipError>)
        .map_err(|_| HipError::UNKNOWN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_finds_ranges_inside_allocations_only() {
        ALLOCATIONS.write().insert(
            0x10_0000,
            Allocation {
                size: 0x100,
                device: 3,
            },
        );
        assert_eq!(owner(0x10_0000, 0x100), Some(3));
        assert_eq!(owner(0x10_0080, 0x80), Some(3));
        assert_eq!(owner(0x10_0080, 0x81), None);
        assert_eq!(owner(0x0f_ffff, 1), None);
        ALLOCATIONS.write().remove(&0x10_0000);
    }

    #[test]
    fn copy_kinds_beyond_default_are_rejected() {
        assert_eq!(CopyKind::from_raw(4), Ok(CopyKind::Default));
        assert_eq!(
            CopyKind::from_raw(5),
            Err(HipError::INVALID_MEMCPY_DIRECTION)
        );
    }
}

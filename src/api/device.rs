//! Initialisation, devices, versions.
#![allow(non_snake_case)]

use super::{call, write_out};
use crate::error::{hipError_t, HipError, HipResult};
use crate::runtime::device::Device;
use crate::runtime::device_props::{self, DevicePropR0000, DevicePropR0600};
use crate::runtime::{self, Runtime};
use std::ffi::{c_char, c_void, CStr};

/// The HIP API level hipshim implements, in HIP_VERSION form (major * 10^7 + minor * 10^5).
const HIP_VERSION: i32 = 60_200_000;

#[no_mangle]
pub extern "C" fn hipInit(flags: u32) -> hipError_t {
    call("hipInit", || runtime::init(flags))
}

#[no_mangle]
pub extern "C" fn hipGetDeviceCount(count: *mut i32) -> hipError_t {
    call("hipGetDeviceCount", || {
        if count.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        write_out(count, runtime::device_count()?)
    })
}

#[no_mangle]
pub extern "C" fn hipSetDevice(device: i32) -> hipError_t {
    call("hipSetDevice", || runtime::set_device(device))
}

#[no_mangle]
pub extern "C" fn hipGetDevice(device: *mut i32) -> hipError_t {
    call("hipGetDevice", || {
        if device.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        write_out(device, runtime::get_device()?)
    })
}

#[no_mangle]
pub extern "C" fn hipDeviceSynchronize() -> hipError_t {
    call("hipDeviceSynchronize", runtime::device_synchronize)
}

#[no_mangle]
pub extern "C" fn hipRuntimeGetVersion(version: *mut i32) -> hipError_t {
    call("hipRuntimeGetVersion", || write_out(version, HIP_VERSION))
}

#[no_mangle]
pub extern "C" fn hipDriverGetVersion(version: *mut i32) -> hipError_t {
    call("hipDriverGetVersion", || write_out(version, HIP_VERSION))
}

/// The device with ordinal `device` (negative or too large: hipErrorInvalidDevice).
fn device(device: i32) -> HipResult<&'static Device> {
    let rt: &'static Runtime = runtime::runtime()?;
    let index = usize::try_from(device).map_err(|_| HipError::INVALID_DEVICE)?;
    rt.device(index)
}

/// Copies `text` NUL-terminated into the caller's `len` bytes, truncating.
///
/// # Safety
/// `out` must have `len` writable bytes.
unsafe fn write_c_string(out: *mut c_char, len: i32, text: &str) -> HipResult {
    if out.is_null() || len <= 0 {
        return Err(HipError::INVALID_VALUE);
    }
    let n = text.len().min(len as usize - 1);
    // SAFETY: the caller provides `len` writable bytes at `out`; we write n + 1 <= len.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), out as *mut u8, n);
        *out.add(n) = 0;
    }
    Ok(())
}

/// Copies the device's product name (NUL-terminated, truncated to `len`).
#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetName(name: *mut c_char, len: i32, ordinal: i32) -> hipError_t {
    call("hipDeviceGetName", || {
        if name.is_null() || len <= 0 {
            return Err(HipError::INVALID_VALUE);
        }
        let product = &device(ordinal)?.product_name;
        // SAFETY: the caller provides `len` writable bytes at `name`.
        unsafe { write_c_string(name, len, product) }
    })
}

/// `hipGetDeviceProperties` as ROCm 5 and earlier binaries call it: the R0000 layout.
#[no_mangle]
pub extern "C" fn hipGetDeviceProperties(props: *mut DevicePropR0000, ordinal: i32) -> hipError_t {
    call("hipGetDeviceProperties", || {
        if props.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        write_out(props, DevicePropR0000::from_info(&device(ordinal)?.info))
    })
}

#[no_mangle]
pub extern "C" fn hipGetDevicePropertiesR0000(
    props: *mut DevicePropR0000,
    ordinal: i32,
) -> hipError_t {
    call("hipGetDevicePropertiesR0000", || {
        if props.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        write_out(props, DevicePropR0000::from_info(&device(ordinal)?.info))
    })
}

/// ROCm 6's `hipGetDeviceProperties` (its headers map the name here): the R0600 layout.
#[no_mangle]
pub extern "C" fn hipGetDevicePropertiesR0600(
    props: *mut DevicePropR0600,
    ordinal: i32,
) -> hipError_t {
    call("hipGetDevicePropertiesR0600", || {
        if props.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        write_out(props, DevicePropR0600::from_info(&device(ordinal)?.info))
    })
}

#[no_mangle]
pub extern "C" fn hipDeviceGetAttribute(
    value: *mut i32,
    attribute: i32,
    ordinal: i32,
) -> hipError_t {
    call("hipDeviceGetAttribute", || {
        if value.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        let info = &device(ordinal)?.info;
        match device_props::attribute(info, attribute) {
            Some(v) => write_out(value, v),
            None => {
                tracing::warn!(
                    attribute,
                    "hipDeviceGetAttribute: unknown or non-integer attribute"
                );
                Err(HipError::INVALID_VALUE)
            }
        }
    })
}

/// `domain:bus:device.function`, as CUDA and AMD format it (`0000:11:00.0`).
fn pci_bus_id(d: &Device) -> String {
    format!(
        "{:04x}:{:02x}:{:02x}.0",
        d.info.pci_domain, d.info.pci_bus, d.info.pci_device
    )
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetPCIBusId(
    out: *mut c_char,
    len: i32,
    ordinal: i32,
) -> hipError_t {
    call("hipDeviceGetPCIBusId", || {
        if out.is_null() || len <= 0 {
            return Err(HipError::INVALID_VALUE);
        }
        let id = pci_bus_id(device(ordinal)?);
        // SAFETY: the caller provides `len` writable bytes.
        unsafe { write_c_string(out, len, &id) }
    })
}

/// Parses `[domain:]bus:device[.function]` (hex).
fn parse_pci_bus_id(text: &str) -> Option<(i32, i32, i32)> {
    let text = text.split('.').next()?;
    let parts: Vec<&str> = text.split(':').collect();
    let hex = |s: &str| i32::from_str_radix(s, 16).ok();
    match parts.as_slice() {
        [domain, bus, dev] => Some((hex(domain)?, hex(bus)?, hex(dev)?)),
        [bus, dev] => Some((0, hex(bus)?, hex(dev)?)),
        _ => None,
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetByPCIBusId(
    ordinal: *mut i32,
    bus_id: *const c_char,
) -> hipError_t {
    call("hipDeviceGetByPCIBusId", || {
        if ordinal.is_null() || bus_id.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        // SAFETY: a NUL-terminated string per the API contract.
        let text = unsafe { CStr::from_ptr(bus_id) }.to_string_lossy();
        let (domain, bus, dev) = parse_pci_bus_id(&text).ok_or(HipError::INVALID_VALUE)?;
        let rt = runtime::runtime()?;
        let found = rt.devices.iter().find(|d| {
            d.info.pci_domain == domain && d.info.pci_bus == bus && d.info.pci_device == dev
        });
        match found {
            Some(d) => write_out(ordinal, d.index as i32),
            None => Err(HipError::INVALID_DEVICE),
        }
    })
}

#[no_mangle]
pub extern "C" fn hipDeviceTotalMem(bytes: *mut usize, ordinal: i32) -> hipError_t {
    call("hipDeviceTotalMem", || {
        if bytes.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        write_out(bytes, device(ordinal)?.info.total_global_mem)
    })
}

#[no_mangle]
pub extern "C" fn hipDeviceComputeCapability(
    major: *mut i32,
    minor: *mut i32,
    ordinal: i32,
) -> hipError_t {
    call("hipDeviceComputeCapability", || {
        if major.is_null() || minor.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        let d = device(ordinal)?;
        write_out(major, d.info.major)?;
        write_out(minor, d.info.minor)
    })
}

#[no_mangle]
pub extern "C" fn hipDeviceGet(out: *mut i32, ordinal: i32) -> hipError_t {
    call("hipDeviceGet", || {
        if out.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        device(ordinal)?;
        write_out(out, ordinal)
    })
}

#[no_mangle]
pub extern "C" fn hipDeviceGetUuid(uuid: *mut [u8; 16], ordinal: i32) -> hipError_t {
    call("hipDeviceGetUuid", || {
        if uuid.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        write_out(uuid, device(ordinal)?.info.uuid)
    })
}

/// Drains the current device, frees its allocations and forgets its flags and limits.
#[no_mangle]
pub extern "C" fn hipDeviceReset() -> hipError_t {
    call("hipDeviceReset", || {
        runtime::runtime()?.current_device()?.reset()
    })
}

#[no_mangle]
pub extern "C" fn hipSetDeviceFlags(flags: u32) -> hipError_t {
    call("hipSetDeviceFlags", || {
        use crate::runtime::device::DEVICE_FLAGS_ALL;
        let d = runtime::runtime()?.current_device()?;
        // More than one scheduling mode at once is contradictory.
        let schedule = flags & 0x7;
        if flags & !DEVICE_FLAGS_ALL != 0 || schedule.count_ones() > 1 {
            return Err(HipError::INVALID_VALUE);
        }
        d.settings.lock().flags = flags;
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn hipGetDeviceFlags(flags: *mut u32) -> hipError_t {
    call("hipGetDeviceFlags", || {
        if flags.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        let d = runtime::runtime()?.current_device()?;
        let value = d.settings.lock().flags;
        write_out(flags, value)
    })
}

#[no_mangle]
pub extern "C" fn hipDeviceGetLimit(value: *mut usize, limit: u32) -> hipError_t {
    call("hipDeviceGetLimit", || {
        if value.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        write_out(value, runtime::runtime()?.current_device()?.limit(limit)?)
    })
}

#[no_mangle]
pub extern "C" fn hipDeviceSetLimit(limit: u32, value: usize) -> hipError_t {
    call("hipDeviceSetLimit", || {
        runtime::runtime()?
            .current_device()?
            .set_limit(limit, value)
    })
}

/// How well `device` matches the fields `wanted` sets (non-zero), CUDA-style: more matching
/// requests win; the device with the most compute units breaks ties.
fn match_score(info: &device_props::DeviceInfo, wanted: &DevicePropR0600) -> (usize, i32) {
    let have = DevicePropR0600::from_info(info);
    let mut score = 0;
    let mut check = |want: i64, got: i64| {
        if want != 0 && got >= want {
            score += 1;
        }
    };
    check(wanted.major as i64, have.major as i64);
    check(wanted.minor as i64, have.minor as i64);
    check(wanted.total_global_mem as i64, have.total_global_mem as i64);
    check(
        wanted.shared_mem_per_block as i64,
        have.shared_mem_per_block as i64,
    );
    check(
        wanted.max_threads_per_block as i64,
        have.max_threads_per_block as i64,
    );
    check(
        wanted.multi_processor_count as i64,
        have.multi_processor_count as i64,
    );
    check(wanted.clock_rate as i64, have.clock_rate as i64);
    check(wanted.warp_size as i64, have.warp_size as i64);
    check(wanted.managed_memory as i64, have.managed_memory as i64);
    (score, have.multi_processor_count)
}

fn choose_device(wanted: &DevicePropR0600) -> HipResult<i32> {
    let rt = runtime::runtime()?;
    rt.devices
        .iter()
        .max_by_key(|d| match_score(&d.info, wanted))
        .map(|d| d.index as i32)
        .ok_or(HipError::NO_DEVICE)
}

/// Widens an R0000 request into the R0600 fields `choose_device` compares.
fn widen(p: &DevicePropR0000) -> DevicePropR0600 {
    // SAFETY: all-zero bytes are a valid DevicePropR0600 (plain integers and pointers).
    let mut w: DevicePropR0600 = unsafe { std::mem::zeroed() };
    w.major = p.major;
    w.minor = p.minor;
    w.total_global_mem = p.total_global_mem;
    w.shared_mem_per_block = p.shared_mem_per_block;
    w.max_threads_per_block = p.max_threads_per_block;
    w.multi_processor_count = p.multi_processor_count;
    w.clock_rate = p.clock_rate;
    w.warp_size = p.warp_size;
    w.managed_memory = p.managed_memory;
    w
}

/// `hipChooseDevice` with ROCm 5's (R0000) properties.
#[no_mangle]
pub unsafe extern "C" fn hipChooseDevice(
    ordinal: *mut i32,
    props: *const DevicePropR0000,
) -> hipError_t {
    call("hipChooseDevice", || {
        if ordinal.is_null() || props.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        // SAFETY: non-null and, per the API, a readable R0000 properties struct.
        let wanted = widen(unsafe { &*props });
        write_out(ordinal, choose_device(&wanted)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipChooseDeviceR0000(
    ordinal: *mut i32,
    props: *const DevicePropR0000,
) -> hipError_t {
    call("hipChooseDeviceR0000", || {
        if ordinal.is_null() || props.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        // SAFETY: non-null and, per the API, a readable R0000 properties struct.
        let wanted = widen(unsafe { &*props });
        write_out(ordinal, choose_device(&wanted)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipChooseDeviceR0600(
    ordinal: *mut i32,
    props: *const DevicePropR0600,
) -> hipError_t {
    call("hipChooseDeviceR0600", || {
        if ordinal.is_null() || props.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        // SAFETY: non-null and, per the API, a readable R0600 properties struct.
        let wanted = unsafe { &*props };
        write_out(ordinal, choose_device(wanted)?)
    })
}

/// `hipGetProcAddress`: the address of our own export `symbol`. As AMD's runtime does,
/// callers asking for HIP 6.0 or later (`hipVersion` >= 600) get the R0600 forms of
/// `hipGetDeviceProperties` and `hipChooseDevice`. Unknown names are hipErrorInvalidValue
/// with `*symbolStatus = HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND`, as AMD answers.
#[no_mangle]
pub unsafe extern "C" fn hipGetProcAddress(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    hip_version: i32,
    _flags: u64,
    status: *mut i32,
) -> hipError_t {
    call("hipGetProcAddress", || {
        if symbol.is_null() || pfn.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        // SAFETY: a NUL-terminated string per the API contract.
        let name = unsafe { CStr::from_ptr(symbol) }.to_string_lossy();
        let name = match name.as_ref() {
            "hipGetDeviceProperties" if hip_version >= 600 => "hipGetDevicePropertiesR0600",
            "hipChooseDevice" if hip_version >= 600 => "hipChooseDeviceR0600",
            other => other,
        };
        let found = proc_address(name);
        if !status.is_null() {
            // hipDriverProcAddressQueryResult: SUCCESS 0, SYMBOL_NOT_FOUND 1.
            write_out(status, i32::from(found.is_null()))?;
        }
        if found.is_null() {
            tracing::warn!(symbol = name, "hipGetProcAddress: not a HIP export");
            return Err(HipError::INVALID_VALUE);
        }
        write_out(pfn, found)
    })
}

/// AMD's export list, which is also ours (build.rs exports every name in it).
const EXPORTS: &str = include_str!("../../abi/hip_exports.txt");

/// The address of the HIP export `name` in this library, or null.
fn proc_address(name: &str) -> *mut c_void {
    let exported = EXPORTS
        .lines()
        .filter(|l| !l.starts_with('#'))
        .any(|l| l.split_whitespace().nth(1) == Some(name));
    let Ok(cname) = std::ffi::CString::new(name) else {
        return std::ptr::null_mut();
    };
    if !exported {
        return std::ptr::null_mut();
    }
    // SAFETY: dladdr only reads the address of a function of this library and fills `info`.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: as above; the address is a function in this library.
    let found = unsafe { libc::dladdr(hipGetProcAddress as *const c_void, &mut info) };
    if found == 0 || info.dli_fname.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: RTLD_NOLOAD only returns a handle to this already-loaded library (no
    // initialisers run); dlsym reads its symbol table; the handle is released again.
    unsafe {
        let handle = libc::dlopen(info.dli_fname, libc::RTLD_NOLOAD | libc::RTLD_LAZY);
        if handle.is_null() {
            return std::ptr::null_mut();
        }
        let address = libc::dlsym(handle, cname.as_ptr());
        libc::dlclose(handle);
        address
    }
}

include!(concat!(env!("OUT_DIR"), "/symver_device.rs"));

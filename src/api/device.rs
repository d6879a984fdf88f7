//! Initialisation, devices, versions (`runtime/mod.rs`, `runtime/devices/device.rs`,
//! `runtime/devices/device_props.rs`).
//!
//! `hipGetProcAddress` looks up this library's own exports by C name, an ABI matter, so it
//! stays here.

use super::convert::{self, write_if_wanted, Out};
use super::declare::hip_api;
use super::types::{hipError_t, hipUUID, DevicePropR0000, DevicePropR0600};
use crate::error::{HipError, HipResult};
use crate::runtime::devices::device::Device;
use crate::runtime::devices::device_props;
use crate::runtime::{self, Runtime};
use std::ffi::{c_char, c_void, CStr};

/// The HIP API level hipshim implements, in HIP_VERSION form (major * 10^7 + minor * 10^5).
pub(super) const HIP_VERSION: i32 = 60_200_000;

hip_api! {
    fn hipInit(flags: u32) -> hipError_t {
        runtime::init(flags)
    }

    fn hipGetDeviceCount(count: *mut i32 => Out<i32>) -> hipError_t {
        count.write(runtime::device_count()?)
    }

    fn hipSetDevice(device: i32) -> hipError_t {
        runtime::set_device(device)
    }

    fn hipGetDevice(device: *mut i32 => Out<i32>) -> hipError_t {
        device.write(runtime::get_device()?)
    }

    fn hipDeviceSynchronize() -> hipError_t {
        crate::runtime::graph::capture::refuse_unsafe_call("hipDeviceSynchronize")?;
        runtime::device_synchronize()
    }

    fn hipRuntimeGetVersion(version: *mut i32 => Out<i32>) -> hipError_t {
        version.write(HIP_VERSION)
    }

    fn hipDriverGetVersion(version: *mut i32 => Out<i32>) -> hipError_t {
        version.write(HIP_VERSION)
    }

    /// Copies the device's product name (NUL-terminated, truncated to `len`).
    fn hipDeviceGetName(name: *mut c_char, len: i32, ordinal: i32) -> hipError_t {
        // SAFETY: HIP's contract: `name` has `len` writable bytes.
        let name = unsafe { convert::slice_mut(name, len.max(0) as usize, "name") }?;
        convert::write_c_string(name, &device(ordinal)?.product_name);
        Ok(())
    }

    /// `hipGetDeviceProperties` as ROCm 5 and earlier binaries call it: the R0000 layout.
    fn hipGetDeviceProperties(props: *mut DevicePropR0000 => Out<DevicePropR0000>, ordinal: i32) -> hipError_t {
        props.write(DevicePropR0000::from_info(&device(ordinal)?.info))
    }

    fn hipGetDevicePropertiesR0000(
        props: *mut DevicePropR0000 => Out<DevicePropR0000>,
        ordinal: i32,
    ) -> hipError_t {
        props.write(DevicePropR0000::from_info(&device(ordinal)?.info))
    }

    /// ROCm 6's `hipGetDeviceProperties` (its headers map the name here): the R0600 layout.
    fn hipGetDevicePropertiesR0600(
        props: *mut DevicePropR0600 => Out<DevicePropR0600>,
        ordinal: i32,
    ) -> hipError_t {
        props.write(DevicePropR0600::from_info(&device(ordinal)?.info))
    }

    fn hipDeviceGetAttribute(value: *mut i32 => Out<i32>, attribute: u32, ordinal: i32) -> hipError_t {
        let info = &device(ordinal)?.info;
        match device_props::attribute(info, attribute) {
            Some(v) => value.write(v),
            None => {
                tracing::warn!(attribute, "unknown or non-integer device attribute");
                Err(HipError::INVALID_VALUE)
            }
        }
    }

    fn hipDeviceGetPCIBusId(out: *mut c_char, len: i32, ordinal: i32) -> hipError_t {
        // SAFETY: HIP's contract: `out` has `len` writable bytes.
        let out = unsafe { convert::slice_mut(out, len.max(0) as usize, "pciBusId") }?;
        convert::write_c_string(out, &device(ordinal)?.pci_bus_id());
        Ok(())
    }

    fn hipDeviceGetByPCIBusId(ordinal: *mut i32 => Out<i32>, bus_id: *const c_char => &CStr) -> hipError_t {
        ordinal.write(runtime::runtime()?.device_by_pci_bus_id(&bus_id.to_string_lossy())? as i32)
    }

    fn hipDeviceTotalMem(bytes: *mut usize => Out<usize>, ordinal: i32) -> hipError_t {
        bytes.write(device(ordinal)?.info.total_global_mem)
    }

    fn hipDeviceComputeCapability(
        major: *mut i32 => Out<i32>,
        minor: *mut i32 => Out<i32>,
        ordinal: i32,
    ) -> hipError_t {
        let d = device(ordinal)?;
        major.write(d.info.major)?;
        minor.write(d.info.minor)
    }

    fn hipDeviceGet(out: *mut i32 => Out<i32>, ordinal: i32) -> hipError_t {
        device(ordinal)?;
        out.write(ordinal)
    }

    fn hipDeviceGetUuid(uuid: *mut hipUUID => Out<hipUUID>, ordinal: i32) -> hipError_t {
        uuid.write(device(ordinal)?.info.uuid)
    }

    /// Drains the current device, frees its allocations and forgets its flags and limits.
    fn hipDeviceReset() -> hipError_t {
        runtime::runtime()?.current_device()?.reset()
    }

    fn hipSetDeviceFlags(flags: u32) -> hipError_t {
        use crate::runtime::devices::device::DEVICE_FLAGS_ALL;
        let d = runtime::runtime()?.current_device()?;
        // More than one scheduling mode at once is contradictory.
        let schedule = flags & 0x7;
        if flags & !DEVICE_FLAGS_ALL != 0 || schedule.count_ones() > 1 {
            return Err(HipError::INVALID_VALUE);
        }
        d.settings.lock().flags = flags;
        Ok(())
    }

    /// The scheduling part only (`hipDeviceScheduleMask`), as AMD's runtime answers: the other
    /// flags (map host, local-memory resize) are accepted by hipSetDeviceFlags and kept.
    fn hipGetDeviceFlags(flags: *mut u32 => Out<u32>) -> hipError_t {
        const SCHEDULE_MASK: u32 = 0x7;
        let d = runtime::runtime()?.current_device()?;
        let value = d.settings.lock().flags;
        flags.write(value & SCHEDULE_MASK)
    }

    fn hipDeviceGetLimit(value: *mut usize => Out<usize>, limit: u32) -> hipError_t {
        value.write(runtime::runtime()?.current_device()?.limit(limit)?)
    }

    fn hipDeviceSetLimit(limit: u32, value: usize) -> hipError_t {
        runtime::runtime()?.current_device()?.set_limit(limit, value)
    }

    /// `hipChooseDevice` with ROCm 5's (R0000) properties.
    fn hipChooseDevice(ordinal: *mut i32 => Out<i32>, props: *const DevicePropR0000 => &DevicePropR0000) -> hipError_t {
        ordinal.write(runtime::runtime()?.choose_device(&device_props::widen(props))? as i32)
    }

    fn hipChooseDeviceR0000(
        ordinal: *mut i32 => Out<i32>,
        props: *const DevicePropR0000 => &DevicePropR0000,
    ) -> hipError_t {
        ordinal.write(runtime::runtime()?.choose_device(&device_props::widen(props))? as i32)
    }

    fn hipChooseDeviceR0600(
        ordinal: *mut i32 => Out<i32>,
        props: *const DevicePropR0600 => &DevicePropR0600,
    ) -> hipError_t {
        ordinal.write(runtime::runtime()?.choose_device(props)? as i32)
    }

    /// `hipGetProcAddress`: the address of our own export `symbol`. As AMD's runtime does,
    /// callers asking for HIP 6.0 or later (`hipVersion` >= 600) get the R0600 forms of
    /// `hipGetDeviceProperties` and `hipChooseDevice`. Unknown names are hipErrorInvalidValue
    /// with `*symbolStatus = HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND`, as AMD answers.
    fn hipGetProcAddress(
        symbol: *const c_char => &CStr,
        pfn: *mut *mut c_void => Out<*mut c_void>,
        hip_version: i32,
        _flags: u64,
        status: *mut i32 => Option<Out<i32>>,
    ) -> hipError_t {
        let name = symbol.to_string_lossy();
        let name = match name.as_ref() {
            "hipGetDeviceProperties" if hip_version >= 600 => "hipGetDevicePropertiesR0600",
            "hipChooseDevice" if hip_version >= 600 => "hipChooseDeviceR0600",
            other => other,
        };
        let found = proc_address(name);
        // hipDriverProcAddressQueryResult: SUCCESS 0, SYMBOL_NOT_FOUND 1.
        write_if_wanted(status, i32::from(found.is_null()))?;
        if found.is_null() {
            tracing::warn!(symbol = name, "not a HIP export");
            return Err(HipError::INVALID_VALUE);
        }
        pfn.write(found)
    }

    /// `hipGetDriverEntryPoint` (ROCm 7.1, CUDA's `cudaGetDriverEntryPoint`): the address of
    /// our own export `symbol`, per `flags` (`driver_entry_point`).
    fn hipGetDriverEntryPoint(
        symbol: *const c_char => &CStr,
        func: *mut *mut c_void => Out<*mut c_void>,
        flags: u64,
        status: *mut i32 => Option<Out<i32>>,
    ) -> hipError_t {
        driver_entry_point(symbol, func, flags, status)
    }

    // Written out, not an alias: a per-thread caller's default search is the per-thread one.
    fn hipGetDriverEntryPoint_spt(
        symbol: *const c_char => &CStr,
        func: *mut *mut c_void => Out<*mut c_void>,
        flags: u64,
        status: *mut i32 => Option<Out<i32>>,
    ) -> hipError_t {
        let flags = if flags == entry_point::DEFAULT { entry_point::PER_THREAD } else { flags };
        driver_entry_point(symbol, func, flags, status)
    }
}

/// The device with ordinal `device` (negative or too large: hipErrorInvalidDevice).
fn device(device: i32) -> HipResult<&'static Device> {
    let rt: &'static Runtime = runtime::runtime()?;
    let index = usize::try_from(device).map_err(|_| HipError::INVALID_DEVICE)?;
    rt.device(index)
}

/// `hipGetDriverEntryPoint` flags and its `hipDriverEntryPointQueryResult` values
/// (hip_runtime_api.h, CUDA's numbers).
mod entry_point {
    pub const DEFAULT: u64 = 0;
    pub const LEGACY_STREAM: u64 = 1;
    pub const PER_THREAD: u64 = 2;
    pub const SUCCESS: i32 = 0;
    pub const SYMBOL_NOT_FOUND: i32 = 1;
}

/// The address of the export `symbol`: under `hipEnablePerThreadDefaultStream` its `_spt`
/// form where there is one, else the name itself. As AMD's runtime answers: an empty name or
/// other flags are hipErrorInvalidValue; an unknown name is hipErrorInvalidValue with
/// `*status = hipDriverEntryPointSymbolNotFound`.
fn driver_entry_point(
    symbol: &CStr,
    func: Out<*mut c_void>,
    flags: u64,
    status: Option<Out<i32>>,
) -> HipResult {
    let name = symbol.to_string_lossy();
    if name.is_empty() {
        tracing::warn!("hipGetDriverEntryPoint: the symbol name is empty");
        return Err(HipError::INVALID_VALUE);
    }
    let found = match flags {
        entry_point::DEFAULT | entry_point::LEGACY_STREAM => proc_address(&name),
        entry_point::PER_THREAD => {
            let per_thread = proc_address(&format!("{name}_spt"));
            if per_thread.is_null() {
                proc_address(&name)
            } else {
                per_thread
            }
        }
        _ => {
            tracing::warn!(
                flags,
                "hipGetDriverEntryPoint: not a hipEnable* search flag"
            );
            return Err(HipError::INVALID_VALUE);
        }
    };
    if found.is_null() {
        write_if_wanted(status, entry_point::SYMBOL_NOT_FOUND)?;
        tracing::warn!(symbol = %name, "hipGetDriverEntryPoint: not a HIP export");
        return Err(HipError::INVALID_VALUE);
    }
    write_if_wanted(status, entry_point::SUCCESS)?;
    func.write(found)
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

#[cfg(not(test))]
include!(concat!(env!("OUT_DIR"), "/symver_device.rs"));

//! Contexts (`runtime/devices/context.rs`): the primary context of each device and the deprecated
//! `hipCtx*` calls, as AMD's runtime implements them (one primary context per device, a
//! `hipCtx_t` naming its device), and the cache and shared-memory configuration calls of
//! devices and contexts. `hipCtx_t` is an opaque pointer: `*mut c_void` here.

use super::convert::{write_if_wanted, Out};
use super::declare::hip_api;
use super::types::hipError_t;
use crate::error::{HipError, HipResult};
use crate::runtime::devices::device::Device;
use crate::runtime::{self, devices::context};
use std::ffi::c_void;

/// `hipFuncCache_t` values (PreferNone .. PreferEqual).
const CACHE_CONFIGS: u32 = 4;
const CACHE_PREFER_NONE: u32 = 0;
/// `hipSharedMemConfig` values (Default, FourByte, EightByte).
const SHARED_MEM_CONFIGS: u32 = 3;
/// LDS banks of gfx9 are four bytes wide, whatever a program asks for.
const SHARED_MEM_BANK_FOUR_BYTE: u32 = 1;
/// What `cuCtxGetApiVersion` reports for every context since CUDA 3.2.
const CONTEXT_API_VERSION: u32 = 3020;

hip_api! {
    fn hipDevicePrimaryCtxRetain(ctx: *mut *mut c_void, device: i32) -> hipError_t {
        // The device is checked first, as AMD does.
        let d = device_at(device)?;
        // SAFETY: HIP's contract: `ctx` is null or points to writable storage.
        let ctx: Out<*mut c_void> = unsafe { super::FromAbi::from_abi(ctx, "pctx") }?;
        ctx.write(context::retain_primary(d))
    }

    fn hipDevicePrimaryCtxRelease(device: i32) -> hipError_t {
        context::release_primary(device_at(device)?);
        Ok(())
    }

    /// Either pointer may be null.
    fn hipDevicePrimaryCtxGetState(
        device: i32,
        flags: *mut u32 => Option<Out<u32>>,
        active: *mut i32 => Option<Out<i32>>,
    ) -> hipError_t {
        let (f, a) = context::primary_state(device_at(device)?);
        write_if_wanted(flags, f)?;
        write_if_wanted(active, i32::from(a))
    }

    fn hipDevicePrimaryCtxSetFlags(device: i32, flags: u32) -> hipError_t {
        context::set_primary_flags(device_at(device)?, flags)
    }

    fn hipDevicePrimaryCtxReset(device: i32) -> hipError_t {
        context::reset_primary(device_at(device)?);
        Ok(())
    }

    /// An out-of-range device is hipErrorInvalidValue here (AMD's answer).
    fn hipCtxCreate(ctx: *mut *mut c_void => Out<*mut c_void>, flags: u32, device: i32) -> hipError_t {
        let d = device_at(device).map_err(|_| HipError::INVALID_VALUE)?;
        ctx.write(context::create(flags, d))
    }

    fn hipCtxDestroy(ctx: *mut c_void) -> hipError_t {
        if ctx.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        context::destroy(context::device_of(runtime::devices()?, ctx)?);
        Ok(())
    }

    fn hipCtxPushCurrent(ctx: *mut c_void) -> hipError_t {
        context::push(context::device_of(runtime::devices()?, ctx)?);
        Ok(())
    }

    /// `ctx` may be null (the popped context is then not returned).
    fn hipCtxPopCurrent(ctx: *mut *mut c_void => Option<Out<*mut c_void>>) -> hipError_t {
        let popped = context::pop(runtime::devices()?)?;
        write_if_wanted(ctx, popped)
    }

    /// Null pops the thread's innermost context.
    fn hipCtxSetCurrent(ctx: *mut c_void) -> hipError_t {
        let device = if ctx.is_null() { None } else { Some(context::device_of(runtime::devices()?, ctx)?) };
        context::set_current(device);
        Ok(())
    }

    fn hipCtxGetCurrent(ctx: *mut *mut c_void => Out<*mut c_void>) -> hipError_t {
        ctx.write(context::handle_of(runtime::current_device()?))
    }

    fn hipCtxGetDevice(device: *mut i32 => Out<i32>) -> hipError_t {
        device.write(runtime::get_device()?)
    }

    /// The flags of the current device (`hipSetDeviceFlags`), which are its context's.
    fn hipCtxGetFlags(flags: *mut u32 => Out<u32>) -> hipError_t {
        let d = runtime::runtime()?.current_device()?;
        let value = d.settings.lock().flags;
        flags.write(value)
    }

    fn hipCtxSynchronize() -> hipError_t {
        crate::runtime::graph::capture::refuse_unsafe_call("hipCtxSynchronize")?;
        runtime::device_synchronize()
    }

    /// CUDA's context API version (3020); ROCm 7 declares `version` unsigned, ROCm 6 `int*`.
    fn hipCtxGetApiVersion(ctx: *mut c_void, version: *mut u32 => Out<u32>) -> hipError_t {
        context::device_of(runtime::devices()?, ctx)?;
        version.write(CONTEXT_API_VERSION)
    }

    fn hipCtxSetCacheConfig(config: u32) -> hipError_t {
        set_config(config, CACHE_CONFIGS, "hipCtxSetCacheConfig")
    }

    fn hipCtxSetSharedMemConfig(config: u32) -> hipError_t {
        set_config(config, SHARED_MEM_CONFIGS, "hipCtxSetSharedMemConfig")
    }

    fn hipCtxEnablePeerAccess(peer_ctx: *mut c_void, flags: u32) -> hipError_t {
        let rt = runtime::runtime()?;
        let peer = context::device_of(rt.devices, peer_ctx)?;
        crate::runtime::mem::peer::enable_peer_access(&rt.peers, rt.current_device()?, peer.index as i32, flags)
    }

    fn hipCtxDisablePeerAccess(peer_ctx: *mut c_void) -> hipError_t {
        let rt = runtime::runtime()?;
        let peer = context::device_of(rt.devices, peer_ctx)?;
        crate::runtime::mem::peer::disable_peer_access(&rt.peers, rt.current_device()?, peer.index as i32)
    }

    /// gfx9 has no L1/LDS split to choose: always hipFuncCachePreferNone (as AMD answers).
    fn hipDeviceGetCacheConfig(config: *mut u32 => Out<u32>) -> hipError_t {
        runtime::runtime()?.current_device()?;
        config.write(CACHE_PREFER_NONE)
    }
    alias hipCtxGetCacheConfig = hipDeviceGetCacheConfig;

    /// Checked and ignored (AMD: the same); refused during stream capture from ROCm 7 on.
    fn hipDeviceSetCacheConfig(config: u32) -> hipError_t {
        set_config(config, CACHE_CONFIGS, "hipDeviceSetCacheConfig")
    }

    /// LDS banks are four bytes wide: always hipSharedMemBankSizeFourByte.
    fn hipDeviceGetSharedMemConfig(config: *mut u32 => Out<u32>) -> hipError_t {
        runtime::runtime()?.current_device()?;
        config.write(SHARED_MEM_BANK_FOUR_BYTE)
    }
    alias hipCtxGetSharedMemConfig = hipDeviceGetSharedMemConfig;

    fn hipDeviceSetSharedMemConfig(config: u32) -> hipError_t {
        set_config(config, SHARED_MEM_CONFIGS, "hipDeviceSetSharedMemConfig")
    }

    /// Checks the list (each device exists, none twice, at least one); hipshim makes no
    /// context lazily, so there is nothing else to restrict.
    fn hipSetValidDevices(devices: *mut i32, count: i32) -> hipError_t {
        let count = usize::try_from(count).map_err(|_| HipError::INVALID_VALUE)?;
        // SAFETY: HIP's contract: `devices` holds `count` ordinals.
        let list = unsafe { super::convert::slice(devices.cast_const(), count, "device_arr") }?;
        if list.is_empty() {
            return Err(HipError::INVALID_VALUE);
        }
        for (i, &ordinal) in list.iter().enumerate() {
            device_at(ordinal)?;
            if list[..i].contains(&ordinal) {
                return Err(HipError::INVALID_VALUE);
            }
        }
        Ok(())
    }
}

/// The device with ordinal `device` (hipErrorInvalidDevice if there is none).
fn device_at(device: i32) -> HipResult<&'static Device> {
    let index = usize::try_from(device).map_err(|_| HipError::INVALID_DEVICE)?;
    runtime::runtime()?.device(index)
}

/// A cache or shared-memory setting: checked against its `values`, otherwise ignored (gfx9
/// has one configuration); from ROCm 7 on refused while a stream captures (AMD's 7.0 change).
fn set_config(value: u32, values: u32, what: &'static str) -> HipResult {
    runtime::runtime()?.current_device()?;
    crate::runtime::graph::capture::refuse_unsafe_call_from_rocm7(what)?;
    if value >= values {
        tracing::warn!(value, "{what}: not a valid setting");
        return Err(HipError::INVALID_VALUE);
    }
    Ok(())
}

#[cfg(not(test))]
include!(concat!(env!("OUT_DIR"), "/symver_context.rs"));

//! Kernel launches and the compiler's call-configuration stack (`runtime/launch.rs`). The
//! hot path: `hipLaunchKernel` converts nothing; its shell resolves the current device and
//! hands it down with a `LaunchRequest`, and the runtime resolves the kernel and the stream
//! once, under that device.

use super::convert::PerThread;
use super::declare::hip_api;
use super::types::{
    hipError_t, hipEvent_t, hipFunction_t, hipStream_t, Dim3, DrvLaunchConfig, LaunchConfig,
};
use crate::error::{HipError, HipResult};
use crate::runtime::devices::device::Device;
use crate::runtime::kernel::module::{self, Function};
use crate::runtime::launch::{self, Args, CallConfiguration, Dispatch, GridSize, LaunchRequest};
use crate::runtime::stream::event::Event;
use crate::runtime::{ops::multi_device, runtime};
use std::ffi::c_void;
use std::sync::Arc;

hip_api! {
    /// A null or unregistered `function` is hipErrorInvalidDeviceFunction (`launch_kernel`).
    fn hipLaunchKernel(
        function: *const c_void,
        grid: Dim3,
        block: Dim3,
        args: *mut *mut c_void,
        shared_mem: usize,
        stream: hipStream_t,
    ) -> hipError_t {
        let device = launch_device(function)?;
        let request = kernel_request(grid, block, shared_mem, args, stream);
        // SAFETY: HIP's contract: `args` holds one pointer per explicit kernel argument.
        unsafe { launch::launch_kernel(device, function, request) }
    }
    alias hipLaunchKernel_spt = hipLaunchKernel with stream: PerThread;

    fn hipModuleLaunchKernel(
        function: hipFunction_t => Arc<Function>,
        grid_x: u32,
        grid_y: u32,
        grid_z: u32,
        block_x: u32,
        block_y: u32,
        block_z: u32,
        shared_mem: u32,
        stream: hipStream_t,
        kernel_params: *mut *mut c_void,
        extra: *mut *mut c_void,
    ) -> hipError_t {
        let grid = Dim3 { x: grid_x, y: grid_y, z: grid_z };
        let block = Dim3 { x: block_x, y: block_y, z: block_z };
        let request = kernel_request(grid, block, shared_mem as usize, kernel_params, stream);
        // SAFETY: HIP's contract for `kernel_params` and `extra`.
        unsafe { launch::launch_module_kernel(current_device()?, &function, request, extra) }
    }

    /// A launch whose work-groups may synchronise grid-wide (`runtime/kernel/cooperative.rs`): a
    /// grid larger than the device holds at once is hipErrorCooperativeLaunchTooLarge.
    fn hipLaunchCooperativeKernel(
        function: *const c_void,
        grid: Dim3,
        block: Dim3,
        args: *mut *mut c_void,
        shared_mem: u32,
        stream: hipStream_t,
    ) -> hipError_t {
        let device = launch_device(function)?;
        let request = kernel_request(grid, block, shared_mem as usize, args, stream);
        // SAFETY: HIP's contract: `args` holds one pointer per explicit kernel argument.
        unsafe { launch::launch_cooperative_kernel(device, function, request) }
    }
    alias hipLaunchCooperativeKernel_spt = hipLaunchCooperativeKernel with stream: PerThread;

    fn hipModuleLaunchCooperativeKernel(
        function: hipFunction_t => Arc<Function>,
        grid_x: u32,
        grid_y: u32,
        grid_z: u32,
        block_x: u32,
        block_y: u32,
        block_z: u32,
        shared_mem: u32,
        stream: hipStream_t,
        kernel_params: *mut *mut c_void,
    ) -> hipError_t {
        let grid = Dim3 { x: grid_x, y: grid_y, z: grid_z };
        let block = Dim3 { x: block_x, y: block_y, z: block_z };
        let request = kernel_request(grid, block, shared_mem as usize, kernel_params, stream);
        // SAFETY: HIP's contract for `kernel_params`.
        unsafe { launch::launch_function(current_device()?, &function, request, Dispatch::SINGLE_GRID) }
    }

    /// One grid per device, all co-resident, synchronising with `this_multi_grid().sync()`
    /// (`runtime/ops/multi_device.rs`). Every part launches the same kernel.
    fn hipLaunchCooperativeKernelMultiDevice(
        launch_params: *mut c_void,
        num_devices: i32,
        flags: u32,
    ) -> hipError_t {
        const API: &str = "hipLaunchCooperativeKernelMultiDevice";
        let count = multi_device_count(API, launch_params, i64::from(num_devices), HipError::INVALID_DEVICE)?;
        // SAFETY: HIP's contract: `num_devices` parameter blocks (checked non-null above).
        let list = unsafe {
            std::slice::from_raw_parts(launch_params as *const multi_device::LaunchParams, count)
        };
        let mut parts = Vec::with_capacity(count);
        for p in list {
            if p.func != list[0].func {
                tracing::warn!("{API}: every part must launch the same kernel");
                return Err(HipError::INVALID_VALUE);
            }
            parts.push(multi_device::GridPart {
                function: module::function(p.func as usize)?,
                grid: p.grid,
                block: p.block,
                shared_mem: p.shared_mem,
                stream: p.stream,
                args: p.args as *const *const c_void,
            });
        }
        let rt = crate::runtime::runtime()?;
        // SAFETY: HIP's contract: each part's `args` holds one pointer per explicit argument.
        unsafe {
            multi_device::launch_multi_device(rt.devices, rt.hsa.devices_run_one_at_a_time, API, &parts, flags)
        }
    }

    /// `hipLaunchCooperativeKernelMultiDevice` with module functions (`hipFunction_t`).
    fn hipModuleLaunchCooperativeKernelMultiDevice(
        launch_params: *mut c_void,
        num_devices: u32,
        flags: u32,
    ) -> hipError_t {
        const API: &str = "hipModuleLaunchCooperativeKernelMultiDevice";
        let count = multi_device_count(API, launch_params, i64::from(num_devices), HipError::INVALID_VALUE)?;
        // SAFETY: HIP's contract: `num_devices` parameter blocks (checked non-null above).
        let list = unsafe {
            std::slice::from_raw_parts(launch_params as *const multi_device::FunctionLaunchParams, count)
        };
        let mut parts = Vec::with_capacity(count);
        for p in list {
            parts.push(multi_device::GridPart {
                function: module::function_handle(p.function as _)?,
                grid: Dim3 { x: p.grid[0], y: p.grid[1], z: p.grid[2] },
                block: Dim3 { x: p.block[0], y: p.block[1], z: p.block[2] },
                shared_mem: p.shared_mem as usize,
                stream: p.stream,
                args: p.kernel_params as *const *const c_void,
            });
        }
        let rt = crate::runtime::runtime()?;
        // SAFETY: HIP's contract: each part's `kernelParams` holds one pointer per explicit
        // argument.
        unsafe {
            multi_device::launch_multi_device(rt.devices, rt.hsa.devices_run_one_at_a_time, API, &parts, flags)
        }
    }

    /// `hipLaunchKernel` between two optional events recorded on its stream. `flags` may ask
    /// for `hipExtAnyOrderLaunch` (1), which an in-order stream satisfies anyway.
    fn hipExtLaunchKernel(
        function: *const c_void,
        grid: Dim3,
        block: Dim3,
        args: *mut *mut c_void,
        shared_mem: usize,
        stream: hipStream_t,
        start: hipEvent_t => Option<Arc<Event>>,
        stop: hipEvent_t => Option<Arc<Event>>,
        flags: i32,
    ) -> hipError_t {
        check_launch_flags(flags)?;
        let device = launch_device(function)?;
        let request = kernel_request(grid, block, shared_mem, args, stream);
        let events = (start.as_deref(), stop.as_deref());
        // SAFETY: HIP's contract: `args` holds one pointer per explicit kernel argument.
        unsafe { launch::launch_kernel_between(device, function, request, events) }
    }

    /// `hipModuleLaunchKernel` with the grid in work-items (a partial last work-group where
    /// it does not divide), between two optional events.
    fn hipExtModuleLaunchKernel(
        function: hipFunction_t => Arc<Function>,
        global_x: u32,
        global_y: u32,
        global_z: u32,
        local_x: u32,
        local_y: u32,
        local_z: u32,
        shared_mem: usize,
        stream: hipStream_t,
        kernel_params: *mut *mut c_void,
        extra: *mut *mut c_void,
        start: hipEvent_t => Option<Arc<Event>>,
        stop: hipEvent_t => Option<Arc<Event>>,
        flags: u32,
    ) -> hipError_t {
        let sizes = [global_x, global_y, global_z, local_x, local_y, local_z];
        // SAFETY: HIP's contract for `kernel_params` and `extra`.
        unsafe { ext_module_launch(&function, sizes, shared_mem, stream, kernel_params, extra, [start, stop], flags) }
    }
    // AMD's `hip_ext.h` declares it without `extern "C"`, so programs built with it (rocBLAS's
    // Tensile kernels) import its C++ name.
    alias _Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j = hipExtModuleLaunchKernel;

    /// `hipHccModuleLaunchKernel`: the older name of `hipExtModuleLaunchKernel` (no flags),
    /// exported by AMD under its C++ name only.
    fn _Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_(
        function: hipFunction_t => Arc<Function>,
        global_x: u32,
        global_y: u32,
        global_z: u32,
        local_x: u32,
        local_y: u32,
        local_z: u32,
        shared_mem: usize,
        stream: hipStream_t,
        kernel_params: *mut *mut c_void,
        extra: *mut *mut c_void,
        start: hipEvent_t => Option<Arc<Event>>,
        stop: hipEvent_t => Option<Arc<Event>>,
    ) -> hipError_t {
        let sizes = [global_x, global_y, global_z, local_x, local_y, local_z];
        // SAFETY: HIP's contract for `kernel_params` and `extra`.
        unsafe { ext_module_launch(&function, sizes, shared_mem, stream, kernel_params, extra, [start, stop], 0) }
    }

    /// `hipLaunchKernel` with the configuration and launch attributes in one struct (ROCm 7).
    /// As in AMD's runtime: a null kernel is hipErrorInvalidDeviceFunction, a null
    /// configuration hipErrorInvalidConfiguration.
    fn hipLaunchKernelExC(
        config: *const LaunchConfig,
        function: *const c_void,
        args: *mut *mut c_void,
    ) -> hipError_t {
        if function.is_null() {
            tracing::warn!("hipLaunchKernelExC: null kernel");
            return Err(HipError::INVALID_DEVICE_FUNCTION);
        }
        // SAFETY: HIP's contract: a non-null `config` points to a readable configuration.
        let Some(config) = (unsafe { config.as_ref() }) else {
            tracing::warn!("hipLaunchKernelExC: null configuration");
            return Err(HipError::INVALID_CONFIGURATION);
        };
        // SAFETY: HIP's contract: `attrs` holds `numAttrs` attributes.
        let attributes = unsafe { launch::launch_attributes(config.attrs, config.attr_count) }?;
        let device = launch_device(function)?;
        let request = kernel_request(config.grid, config.block, config.dynamic_shared_mem, args, config.stream);
        // SAFETY: HIP's contract: `args` holds one pointer per explicit kernel argument.
        unsafe {
            if attributes.cooperative {
                launch::launch_cooperative_kernel(device, function, request)
            } else {
                launch::launch_kernel(device, function, request)
            }
        }
    }

    /// `hipModuleLaunchKernel` with the configuration and launch attributes in one struct
    /// (ROCm 7). A null configuration is hipErrorInvalidValue (AMD's code); the arguments
    /// come as `kernel_params` or, unlike AMD's runtime, which ignores it, packed in `extra`.
    fn hipDrvLaunchKernelEx(
        config: *const DrvLaunchConfig,
        function: hipFunction_t => Arc<Function>,
        kernel_params: *mut *mut c_void,
        extra: *mut *mut c_void,
    ) -> hipError_t {
        // SAFETY: HIP's contract: a non-null `config` points to a readable configuration.
        let Some(config) = (unsafe { config.as_ref() }) else {
            tracing::warn!("hipDrvLaunchKernelEx: null configuration");
            return Err(HipError::INVALID_VALUE);
        };
        // SAFETY: HIP's contract: `attrs` holds `numAttrs` attributes.
        let attributes = unsafe { launch::launch_attributes(config.attrs, config.attr_count) }?;
        let [x, y, z] = config.grid;
        let [bx, by, bz] = config.block;
        let (grid, block) = (Dim3 { x, y, z }, Dim3 { x: bx, y: by, z: bz });
        let request = kernel_request(grid, block, config.shared_mem as usize, kernel_params, config.stream);
        if attributes.cooperative {
            if !extra.is_null() {
                tracing::warn!("hipDrvLaunchKernelEx: a cooperative launch takes kernelParams, not extra");
                return Err(HipError::INVALID_VALUE);
            }
            // SAFETY: HIP's contract for `kernel_params`.
            return unsafe { launch::launch_function(current_device()?, &function, request, Dispatch::SINGLE_GRID) };
        }
        // SAFETY: HIP's contract for `kernel_params` and `extra`.
        unsafe { launch::launch_module_kernel(current_device()?, &function, request, extra) }
    }

    /// The launch API before `<<<>>>`: a configuration, its arguments, then the launch.
    fn hipConfigureCall(grid: Dim3, block: Dim3, shared_mem: usize, stream: hipStream_t) -> hipError_t {
        launch::configure_call(CallConfiguration { grid, block, shared_mem, stream })
    }

    fn hipSetupArgument(arg: *const c_void, size: usize, offset: usize) -> hipError_t {
        if arg.is_null() && size != 0 {
            tracing::warn!("hipSetupArgument: null argument");
            return Err(HipError::INVALID_VALUE);
        }
        let bytes = if size == 0 {
            &[][..]
        } else {
            // SAFETY: HIP's contract: `arg` points to `size` readable bytes (checked non-null).
            unsafe { std::slice::from_raw_parts(arg.cast::<u8>(), size) }
        };
        launch::setup_argument(bytes, offset)
    }

    /// Consumes the latest configuration and its arguments, also when the launch fails.
    fn hipLaunchByPtr(function: *const c_void) -> hipError_t {
        let legacy = launch::take_legacy_launch()?;
        launch::launch_by_ptr(launch_device(function)?, function, legacy)
    }

    /// What `<<<grid, block, shared_mem, stream>>>` compiles to before the stub's launch;
    /// neither logged nor traced (its launch is), and it leaves the last error alone.
    fn __hipPushCallConfiguration(
        grid: Dim3,
        block: Dim3,
        shared_mem: usize,
        stream: hipStream_t,
    ) -> hipError_t as plain(HipError::UNKNOWN.code()) {
        match launch::push_call_configuration(CallConfiguration { grid, block, shared_mem, stream }) {
            Ok(()) => 0,
            Err(error) => configuration_refused(error),
        }
    }

    /// Like `__hipPushCallConfiguration`, a call of the compiler's launch stub rather than of
    /// the program: not logged or traced as an API call. A failure is still the thread's last
    /// error, as in AMD's runtime.
    fn __hipPopCallConfiguration(
        grid: *mut Dim3,
        block: *mut Dim3,
        shared_mem: *mut usize,
        stream: *mut hipStream_t,
    ) -> hipError_t as plain(HipError::UNKNOWN.code()) {
        // One test for the four pointers (the stub passes its own locals, never null).
        let least = (grid as usize).min(block as usize).min(shared_mem as usize).min(stream as usize);
        if least == 0 {
            return configuration_refused(HipError::INVALID_VALUE);
        }
        // SAFETY: checked non-null; the stub passes its own locals.
        match unsafe { launch::pop_call_configuration(grid, block, shared_mem, stream) } {
            Ok(()) => 0,
            Err(error) => configuration_refused(error),
        }
    }
}

/// A refused `__hipPushCallConfiguration` or `__hipPopCallConfiguration`: logged and made the
/// thread's last error here, out of line. An `extern "C"` function cannot unwind (its own
/// panics are caught inside), so the two shells' successful paths call nothing that can, need
/// no landing pad for `call_plain`, and run without a stack frame of their own.
#[cold]
#[inline(never)]
extern "C" fn configuration_refused(error: HipError) -> hipError_t {
    crate::api::call_plain("launch configuration", error.code(), || {
        match error {
            HipError::LAUNCH_OUT_OF_RESOURCES => tracing::warn!(
                depth = launch::MAX_PENDING_CONFIGURATIONS,
                "__hipPushCallConfiguration: too many kernel launch configurations pushed without a launch"
            ),
            HipError::INVALID_VALUE => {
                tracing::warn!("__hipPopCallConfiguration: a null out-pointer")
            }
            _ => tracing::warn!(
                "__hipPopCallConfiguration: no launch configuration was pushed (a launch stub called out of order)"
            ),
        }
        crate::api::failed(error)
    })
}

/// `hipExtModuleLaunchKernel` under any of its names: `sizes` are the grid in work-items and
/// the block, x, y, z each.
///
/// # Safety
/// HIP's contract for `kernel_params` and `extra`.
#[allow(clippy::too_many_arguments)]
unsafe fn ext_module_launch(
    function: &Arc<Function>,
    sizes: [u32; 6],
    shared_mem: usize,
    stream: hipStream_t,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
    [start, stop]: [Option<Arc<Event>>; 2],
    flags: u32,
) -> HipResult {
    check_launch_flags(flags as i32)?;
    let [x, y, z, bx, by, bz] = sizes;
    let request = LaunchRequest {
        grid: GridSize::WorkItems(Dim3 { x, y, z }),
        block: Dim3 {
            x: bx,
            y: by,
            z: bz,
        },
        shared_mem,
        args: Args::Pointers(kernel_params as *const *const c_void),
        stream,
    };
    let events = (start.as_deref(), stop.as_deref());
    // SAFETY: forwarded contract.
    unsafe {
        launch::launch_module_kernel_between(current_device()?, function, request, extra, events)
    }
}

/// A launch of `grid` work-groups of `block` with `shared_mem` bytes of dynamic LDS on
/// `stream`, the arguments one pointer each (`void** args`, `kernelParams`).
#[inline(always)]
fn kernel_request<'a>(
    grid: Dim3,
    block: Dim3,
    shared_mem: usize,
    args: *mut *mut c_void,
    stream: hipStream_t,
) -> LaunchRequest<'a> {
    LaunchRequest {
        grid: GridSize::Blocks(grid),
        block,
        shared_mem,
        args: Args::Pointers(args as *const *const c_void),
        stream,
    }
}

/// The calling thread's current device, which a launch runs on.
#[inline(always)]
fn current_device() -> HipResult<&'static Device> {
    runtime()?.current_device()
}

/// The device a launch of the kernel registered for `host_function` runs on: the calling
/// thread's current one. Without one (no HSA runtime), an unregistered kernel is still
/// hipErrorInvalidDeviceFunction: the kernel is the first thing such a launch checks.
#[inline(always)]
fn launch_device(host_function: *const c_void) -> HipResult<&'static Device> {
    match current_device() {
        Ok(device) => Ok(device),
        Err(error) => Err(no_launch_device(host_function, error)),
    }
}

#[cold]
#[inline(never)]
fn no_launch_device(host_function: *const c_void, error: HipError) -> HipError {
    match module::function(host_function as usize) {
        Err(unregistered) => unregistered,
        Ok(_) => error,
    }
}

/// `hipExtAnyOrderLaunch` (1) or nothing: an in-order stream satisfies any order.
fn check_launch_flags(flags: i32) -> HipResult {
    if flags & !1 != 0 {
        tracing::warn!(flags, "unknown launch flags");
        return Err(HipError::INVALID_VALUE);
    }
    Ok(())
}

/// The number of parts of a multi-device cooperative launch: a null list or none is
/// hipErrorInvalidValue, more than there are devices (or a negative count) `too_many` (AMD's runtime answers
/// hipErrorInvalidDevice for `hipLaunchCooperativeKernelMultiDevice` and hipErrorInvalidValue
/// for the module form).
fn multi_device_count(
    api: &str,
    list: *mut c_void,
    parts: i64,
    too_many: HipError,
) -> HipResult<usize> {
    let devices = runtime()?.devices.len();
    if list.is_null() || parts == 0 {
        tracing::warn!(
            parts,
            list_is_null = list.is_null(),
            "{api}: no launch list, or no parts"
        );
        return Err(HipError::INVALID_VALUE);
    }
    // A negative count is more than there are (AMD compares it as an unsigned size).
    if parts < 0 || parts > devices as i64 {
        tracing::warn!(parts, devices, "{api}: more parts than devices");
        return Err(too_many);
    }
    Ok(parts as usize)
}

#[cfg(test)]
#[test]
fn configurations_pop_in_push_order_and_a_failed_pop_is_the_last_error() {
    use crate::error::HipError;
    let d = |x| Dim3 { x, y: 1, z: 1 };
    let (mut grid, mut block, mut shared, mut stream) = (d(0), d(0), 0usize, std::ptr::null_mut());
    crate::api::take_last_error();
    // SAFETY: the out-pointers are this test's locals, or null where a null is the point.
    unsafe {
        assert_eq!(
            __hipPushCallConfiguration(d(2), d(64), 16, std::ptr::null_mut()),
            0
        );
        assert_eq!(
            __hipPushCallConfiguration(d(3), d(32), 8, 0x50 as hipStream_t),
            0
        );
        assert_eq!(
            __hipPopCallConfiguration(&mut grid, &mut block, &mut shared, &mut stream),
            0
        );
        assert_eq!(
            (grid, block, shared, stream as usize),
            (d(3), d(32), 8, 0x50)
        );
        let null = std::ptr::null_mut();
        assert_eq!(
            __hipPopCallConfiguration(null, &mut block, &mut shared, &mut stream),
            HipError::INVALID_VALUE.code()
        );
        assert_eq!(
            crate::api::take_last_error(),
            HipError::INVALID_VALUE.code()
        );
        // The null out-pointer popped nothing: the first configuration is still there.
        assert_eq!(
            __hipPopCallConfiguration(&mut grid, &mut block, &mut shared, &mut stream),
            0
        );
        assert_eq!((grid, block, shared), (d(2), d(64), 16));
        assert_eq!(
            __hipPopCallConfiguration(&mut grid, &mut block, &mut shared, &mut stream),
            HipError::MISSING_CONFIGURATION.code()
        );
    }
    assert_eq!(
        crate::api::take_last_error(),
        HipError::MISSING_CONFIGURATION.code()
    );
    // One push past the bound is refused and is the last error; the stack is left whole.
    // SAFETY: as above.
    unsafe {
        for _ in 0..launch::MAX_PENDING_CONFIGURATIONS {
            assert_eq!(
                __hipPushCallConfiguration(d(1), d(1), 0, std::ptr::null_mut()),
                0
            );
        }
        assert_eq!(
            __hipPushCallConfiguration(d(1), d(1), 0, std::ptr::null_mut()),
            HipError::LAUNCH_OUT_OF_RESOURCES.code()
        );
        assert_eq!(
            crate::api::take_last_error(),
            HipError::LAUNCH_OUT_OF_RESOURCES.code()
        );
        for _ in 0..launch::MAX_PENDING_CONFIGURATIONS {
            assert_eq!(
                __hipPopCallConfiguration(&mut grid, &mut block, &mut shared, &mut stream),
                0
            );
        }
    }
}

#[cfg(not(test))]
include!(concat!(env!("OUT_DIR"), "/symver_launch.rs"));

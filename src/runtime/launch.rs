//! Kernel launches: the compiler's call-configuration stack and `hipLaunchKernel`.
//!
//! This is the hot path. Per launch: a registry lookup, one stream lock, kernarg writes into
//! a recycled ring slot and one packet; no heap allocation and no system call.
//!
//! Read top to bottom, a launch goes: the C shell (`api/launch.rs`) resolves the device and
//! hands it down with a [`LaunchRequest`] → an entry point here ([`launch_kernel`],
//! [`launch_function`], ...) finds the kernel → `CheckedLaunch::check` checks everything that can
//! fail and returns a `CheckedLaunch` → `CheckedLaunch::submit` publishes its
//! `DispatchPacket` on the stream's queue (or `CheckedLaunch::capture` adds it to the
//! stream's capture). The thread's record of recent launch targets (`RecentLaunches`) and
//! the launch API before `<<<>>>` come last.

use super::base::kernarg::{ArgSource, LaunchGeometry};
use super::code_object::KernelInfo;
use super::devices::device::Device;
use super::kernel::module::{self, Function, Kernel, LaunchAdmission};
use super::ordering::Stream;
use super::stream::event::{self, Event};
use super::stream::{self, StreamRef};
use crate::error::{HipError, HipResult};
use crate::hsa::queue::{stream_packet_header, to_bytes, KernargSlot, Queue};
use hsa_abi::*;
use std::cell::{Cell, RefCell};
use std::ffi::c_void;
use std::mem::ManuallyDrop;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};

/// HIP's `dim3`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

/// `hipLaunchAttribute` (ROCm 7 layout, the only one `hipLaunchKernelExC` and
/// `hipDrvLaunchKernelEx` were ever exported with): the attribute's id, 4 bytes of padding,
/// then a 64-byte value union whose first word holds the integer attributes (`cooperative`,
/// `priority`). 72 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LaunchAttribute {
    pub id: u32,
    pub pad: u32,
    pub value: [u64; 8],
}

/// `hipLaunchConfig_t`, the configuration `hipLaunchKernelExC` takes. 56 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LaunchConfig {
    pub grid: Dim3,
    pub block: Dim3,
    pub dynamic_shared_mem: usize,
    pub stream: *mut c_void,
    pub attrs: *const LaunchAttribute,
    pub attr_count: u32,
}

/// `HIP_LAUNCH_CONFIG`, the driver-API form `hipDrvLaunchKernelEx` takes. 56 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DrvLaunchConfig {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_mem: u32,
    pub stream: *mut c_void,
    pub attrs: *const LaunchAttribute,
    pub attr_count: u32,
}

/// What a launch's attribute list asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaunchAttributes {
    pub cooperative: bool,
}

/// `hipLaunchAttributeID` values hipshim acts on.
const ATTRIBUTE_IGNORE: u32 = 0;
const ATTRIBUTE_COOPERATIVE: u32 = 2;

/// Reads the attribute list of `hipLaunchKernelExC`/`hipDrvLaunchKernelEx`. Only
/// `hipLaunchAttributeCooperative` changes a launch (and `hipLaunchAttributeIgnore` is
/// skipped); every other attribute is `hipErrorInvalidConfiguration`, as in AMD's runtime,
/// rather than a hint silently dropped. A null list with a non-zero count is
/// `hipErrorInvalidValue`.
///
/// # Safety
/// `attrs` is null or points to `count` readable attributes (the caller's contract).
pub unsafe fn launch_attributes(
    attrs: *const LaunchAttribute,
    count: u32,
) -> HipResult<LaunchAttributes> {
    let mut wanted = LaunchAttributes::default();
    if count == 0 {
        return Ok(wanted);
    }
    if attrs.is_null() {
        tracing::warn!(count, "launch: attribute count without an attribute list");
        return Err(HipError::INVALID_VALUE);
    }
    // SAFETY: the caller's contract: `count` readable attributes at `attrs` (checked non-null).
    let list = unsafe { std::slice::from_raw_parts(attrs, count as usize) };
    for attr in list {
        match attr.id {
            ATTRIBUTE_IGNORE => {}
            ATTRIBUTE_COOPERATIVE => wanted.cooperative = attr.value[0] as u32 != 0,
            id => {
                tracing::warn!(id, "launch: this launch attribute is not supported");
                return Err(HipError::INVALID_CONFIGURATION);
            }
        }
    }
    Ok(wanted)
}

/// What `<<<grid, block, shmem, stream>>>` pushed, for the stub to pop.
#[derive(Clone, Copy, Debug)]
pub struct CallConfiguration {
    pub grid: Dim3,
    pub block: Dim3,
    pub shared_mem: usize,
    pub stream: *mut c_void,
}

/// How deep `<<<>>>` configurations may nest on one thread: a push is followed by its stub's
/// pop, so real programs use one; the bound keeps the stack free of heap and of a thread-exit
/// destructor, which would make every access on the launch path dearer.
pub const MAX_PENDING_CONFIGURATIONS: usize = 16;

const NO_CONFIGURATION: CallConfiguration = CallConfiguration {
    grid: Dim3 { x: 0, y: 0, z: 0 },
    block: Dim3 { x: 0, y: 0, z: 0 },
    shared_mem: 0,
    stream: std::ptr::null_mut(),
};

struct PendingConfigurations {
    depth: Cell<usize>,
    stack: [Cell<CallConfiguration>; MAX_PENDING_CONFIGURATIONS],
}

thread_local! {
    static CALL_CONFIGURATIONS: PendingConfigurations = const {
        PendingConfigurations {
            depth: Cell::new(0),
            stack: [const { Cell::new(NO_CONFIGURATION) }; MAX_PENDING_CONFIGURATIONS],
        }
    };
}

/// `__hipPushCallConfiguration`; more than [`MAX_PENDING_CONFIGURATIONS`] unpopped ones are
/// `hipErrorLaunchOutOfResources`.
#[inline(always)]
pub fn push_call_configuration(config: CallConfiguration) -> HipResult {
    let pushed = CALL_CONFIGURATIONS.with(|pending| {
        let depth = pending.depth.get();
        let Some(slot) = pending.stack.get(depth) else {
            return false;
        };
        slot.set(config);
        pending.depth.set(depth + 1);
        true
    });
    if pushed {
        Ok(())
    } else {
        // Logged by the caller, out of line (`api/launch.rs`): nothing here may call out.
        Err(HipError::LAUNCH_OUT_OF_RESOURCES)
    }
}

/// `__hipPopCallConfiguration`: the latest configuration pushed, written straight into the
/// stub's out-parameters; none is `hipErrorMissingConfiguration`.
///
/// # Safety
/// Each pointer is valid for one write of its type.
#[inline(always)]
pub unsafe fn pop_call_configuration(
    grid: *mut Dim3,
    block: *mut Dim3,
    shared_mem: *mut usize,
    stream: *mut *mut c_void,
) -> HipResult {
    let popped = CALL_CONFIGURATIONS.with(|pending| {
        let depth = pending.depth.get();
        let Some(slot) = depth.checked_sub(1).and_then(|top| pending.stack.get(top)) else {
            return false;
        };
        pending.depth.set(depth - 1);
        // Field by field from the slot, not through a copy of the whole configuration.
        // SAFETY: the slot is this thread's and no reference to it is live (`Cell`); the
        // out-pointers are the caller's contract.
        unsafe {
            let config = slot.as_ptr();
            grid.write((*config).grid);
            block.write((*config).block);
            shared_mem.write((*config).shared_mem);
            stream.write((*config).stream);
        }
        true
    });
    if popped {
        Ok(())
    } else {
        Err(HipError::MISSING_CONFIGURATION)
    }
}

pub use super::base::kernarg::{LaunchLimits, Refusal, MAX_BLOCK_THREADS};

// ---------------------------------------------------------------------------------------
// What a launch is asked for

/// A launch as the program asks for it, whichever entry point it came through: the
/// configuration, the explicit arguments and the stream. The kernel and the device it runs on
/// are given beside it.
#[derive(Clone, Copy, Debug)]
pub struct LaunchRequest<'a> {
    pub grid: GridSize,
    pub block: Dim3,
    /// Bytes of dynamic LDS.
    pub shared_mem: usize,
    pub args: Args<'a>,
    /// The `hipStream_t` as given (null: the null stream).
    pub stream: *mut c_void,
}

/// How a launch gives its grid: in work-groups (`<<<>>>`, `hipLaunchKernel`,
/// `hipModuleLaunchKernel`) or in work-items (`hipExtModuleLaunchKernel`, as in the AQL packet;
/// a grid that is not a multiple of the block has a partial last work-group).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GridSize {
    Blocks(Dim3),
    WorkItems(Dim3),
}

/// The explicit arguments of a launch as the application passed them.
#[derive(Clone, Copy, Debug)]
pub enum Args<'a> {
    /// `void** kernelParams`: one pointer per explicit argument (may be null for a kernel
    /// without arguments).
    Pointers(*const *const c_void),
    /// The `HIP_LAUNCH_PARAM_BUFFER_POINTER` buffer of `hipModuleLaunchKernel`.
    Packed(&'a [u8]),
}

/// Where a launch's dispatch packet goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dispatch {
    /// The stream's own queue: every launch but a cooperative one.
    Stream,
    /// The device's cooperative queue, in the stream's order, with the value of the kernel's
    /// `hidden_multigrid_sync_arg` (see `cooperative.rs`).
    Cooperative { multigrid_sync: u64 },
}

impl Dispatch {
    /// A cooperative launch of one grid (`hipLaunchCooperativeKernel`).
    pub const SINGLE_GRID: Dispatch = Dispatch::Cooperative {
        multigrid_sync: super::kernel::cooperative::SINGLE_GRID,
    };

    fn is_cooperative(self) -> bool {
        matches!(self, Dispatch::Cooperative { .. })
    }
}

// ---------------------------------------------------------------------------------------
// Entry points: each finds the kernel, checks the launch, then submits it

/// `hipLaunchKernel` on `device`, the calling thread's current device: the kernel registered
/// for `host_function`. The kernel, its code on `device` and the stream are taken from the
/// thread's record of recent launches when it has them ([`RecentLaunches`]), else looked up
/// and recorded once the launch has been checked.
///
/// # Safety
/// For [`Args::Pointers`], `args` must point to one pointer per explicit kernel argument, each
/// pointing to a value of that argument's size (HIP's `void** args` contract).
#[inline(always)]
pub unsafe fn launch_kernel(
    device: &'static Device,
    host_function: *const c_void,
    request: LaunchRequest<'_>,
) -> HipResult {
    // Read before anything is looked up: a change after this invalidates what is found.
    let seen = TableChanges::now();
    let key = (host_function as usize, request.stream as usize);
    let held: ManuallyDrop<Arc<Function>>;
    let found: Arc<Function>;
    let (function, kernel, stream, found_here) = match RecentLaunches::find(key, device, seen) {
        Some(target) => {
            if target.null_stream {
                stream::check_null_stream_use(device)?;
            }
            // SAFETY: from `Arc::into_raw`; the entry's reference, which stays put while this
            // launch runs (only this thread's `remember` replaces it, and a hit makes none),
            // is borrowed without being counted.
            held = ManuallyDrop::new(unsafe { Arc::from_raw(target.function) });
            (&*held, target.kernel, Some(target.stream), false)
        }
        None => {
            found = module::function(host_function as usize)?;
            let kernel = Arc::as_ptr(found.kernel(device)?);
            (&found, kernel, None, true)
        }
    };
    // SAFETY: the kernel is the function's on `device`, which lives as long as the function
    // (a `OnceLock` once set), held here.
    let kernel = unsafe { &*kernel };
    // A registered kernel's, never unloaded: nothing to hold, and the launch carries nothing.
    let _admission = function.admit_registered_launch();
    // SAFETY: forwarded contract.
    let launch = unsafe { CheckedLaunch::check(device, function, kernel, request, stream, false) }?;
    if found_here {
        RecentLaunches::remember(key, device, seen, function, kernel, &launch.stream);
    }
    let result = launch.submit_or_capture(function);
    launch.end();
    result
}

/// Launches `function` on `device` (the device the request's stream belongs to), to the
/// queue `dispatch` names: validates the configuration and the arguments, then, under the
/// stream's lock, publishes the waits the launch needs, writes the kernargs and one dispatch
/// packet, and rings the doorbell (see `stream::Operation` and `hsa::queue::Reservation`).
///
/// # Safety
/// For [`Args::Pointers`], as for [`launch_kernel`].
#[inline(always)]
pub unsafe fn launch_function(
    device: &Device,
    function: &Arc<Function>,
    request: LaunchRequest<'_>,
    dispatch: Dispatch,
) -> HipResult {
    // Before the kernel is looked up: that may load the module on `device`.
    let admission = function.admit_launch()?;
    let kernel = function.kernel(device)?;
    let cooperative = dispatch.is_cooperative();
    // SAFETY: forwarded contract.
    let launch =
        unsafe { CheckedLaunch::check(device, function, kernel, request, None, cooperative) }?;
    let result = match dispatch {
        Dispatch::Stream => {
            let result = launch.submit_or_capture(function);
            launch.end();
            result
        }
        Dispatch::Cooperative { multigrid_sync } => {
            launch.submit_cooperative(multigrid_sync, &[]).map(drop)
        }
    };
    // Held until the packets are published (an unload of the module waits for it).
    drop(admission);
    result
}

/// `hipLaunchCooperativeKernel`: `hipLaunchKernel` of a kernel whose work-groups may
/// synchronise grid-wide.
///
/// # Safety
/// As for [`launch_kernel`].
pub unsafe fn launch_cooperative_kernel(
    device: &Device,
    host_function: *const c_void,
    request: LaunchRequest<'_>,
) -> HipResult {
    let function = module::function(host_function as usize)?;
    // SAFETY: forwarded contract.
    unsafe { launch_function(device, &function, request, Dispatch::SINGLE_GRID) }
}

/// `hipModuleLaunchKernel`: the arguments come either as `kernelParams` (`request.args`,
/// one pointer per explicit argument) or packed in the buffer `extra` names; not both.
///
/// # Safety
/// HIP's contract for `kernelParams` and `extra`.
pub unsafe fn launch_module_kernel(
    device: &Device,
    function: &Arc<Function>,
    mut request: LaunchRequest<'_>,
    extra: *mut *mut c_void,
) -> HipResult {
    if !extra.is_null() {
        if matches!(request.args, Args::Pointers(kernel_params) if !kernel_params.is_null()) {
            tracing::warn!("hipModuleLaunchKernel: both kernelParams and extra given");
            return Err(HipError::INVALID_VALUE);
        }
        // SAFETY: HIP's contract for `extra`.
        request.args = Args::Packed(unsafe { packed_args(extra, &function.kernel(device)?.info) }?);
    }
    // SAFETY: HIP's contract: kernelParams has one pointer per explicit argument.
    unsafe { launch_function(device, function, request, Dispatch::Stream) }
}

/// `hipExtModuleLaunchKernel`: [`launch_module_kernel`] (its grid in work-items) between two
/// optional events recorded on the launch's stream (the kernel's start and end in stream
/// order).
///
/// # Safety
/// HIP's contract for `kernelParams` and `extra`.
pub unsafe fn launch_module_kernel_between(
    device: &'static Device,
    function: &Arc<Function>,
    request: LaunchRequest<'_>,
    extra: *mut *mut c_void,
    events: (Option<&Event>, Option<&Event>),
) -> HipResult {
    let bracket = EventBracket::open(device, request.stream, events)?;
    // SAFETY: forwarded contract.
    unsafe { launch_module_kernel(device, function, request, extra) }?;
    bracket.close()
}

/// `hipExtLaunchKernel`: `hipLaunchKernel` between two optional events recorded on its stream.
///
/// # Safety
/// As for [`launch_kernel`].
pub unsafe fn launch_kernel_between(
    device: &'static Device,
    host_function: *const c_void,
    request: LaunchRequest<'_>,
    events: (Option<&Event>, Option<&Event>),
) -> HipResult {
    let bracket = EventBracket::open(device, request.stream, events)?;
    // SAFETY: forwarded contract.
    unsafe { launch_kernel(device, host_function, request) }?;
    bracket.close()
}

/// Two optional events around a launch on its stream: as AMD's runtime, which takes the
/// events' times from the dispatch itself, the two enclose the kernel and nothing else of the
/// stream. [`EventBracket::open`] records the start before the launch, [`EventBracket::close`]
/// the stop after it; a launch that fails records no stop.
struct EventBracket<'e> {
    /// The stream's device and the stream, when there is an event to record.
    on: Option<(&'static Device, StreamRef<'static>)>,
    stop: Option<&'e Event>,
}

impl<'e> EventBracket<'e> {
    fn open(
        device: &'static Device,
        stream: *mut c_void,
        (start, stop): (Option<&Event>, Option<&'e Event>),
    ) -> HipResult<EventBracket<'e>> {
        if start.is_none() && stop.is_none() {
            return Ok(EventBracket { on: None, stop });
        }
        let stream = stream::resolve(stream, device)?;
        if let Some(start) = start {
            event::record(start, device, &stream)?;
        }
        Ok(EventBracket {
            on: Some((device, stream)),
            stop,
        })
    }

    fn close(self) -> HipResult {
        match (self.on, self.stop) {
            (Some((device, stream)), Some(stop)) => event::record(stop, device, &stream),
            _ => Ok(()),
        }
    }
}

// hipModuleLaunchKernel's `extra` array

/// `HIP_LAUNCH_PARAM_BUFFER_POINTER`, `_SIZE`, `_END` (AMD's values).
const LAUNCH_PARAM_BUFFER_POINTER: usize = 1;
const LAUNCH_PARAM_BUFFER_SIZE: usize = 2;
const LAUNCH_PARAM_END: usize = 3;

/// The packed argument buffer named by an `extra` array:
/// `{BUFFER_POINTER, buf, BUFFER_SIZE, &size, END}` (the order AMD requires), for a launch
/// of `kernel`. A size larger than the kernel's whole kernarg segment cannot be an argument
/// buffer for it and is `hipErrorInvalidValue` (AMD's ROCm 5.2 runtime ignores the size);
/// `launch_function` checks that the buffer covers the explicit arguments.
///
/// # Safety
/// `extra` is a readable array of that form (checked entry by entry up to END), and the
/// buffer holds `size` bytes.
pub(in crate::runtime) unsafe fn packed_args<'a>(
    extra: *mut *mut c_void,
    kernel: &KernelInfo,
) -> HipResult<&'a [u8]> {
    // SAFETY: the first five entries of a well-formed array; the tags are checked before the
    // pointers they introduce are used.
    let e = |i: usize| unsafe { *extra.add(i) } as usize;
    if e(0) != LAUNCH_PARAM_BUFFER_POINTER
        || e(2) != LAUNCH_PARAM_BUFFER_SIZE
        || e(4) != LAUNCH_PARAM_END
    {
        tracing::warn!("hipModuleLaunchKernel: malformed `extra` array");
        return Err(HipError::INVALID_VALUE);
    }
    let (buffer, size_ptr) = (e(1) as *const u8, e(3) as *const usize);
    if buffer.is_null() || size_ptr.is_null() {
        tracing::warn!("hipModuleLaunchKernel: null buffer or size in `extra`");
        return Err(HipError::INVALID_VALUE);
    }
    // SAFETY: BUFFER_SIZE points to the buffer's size.
    let size = unsafe { *size_ptr };
    if size > kernel.kernarg_size as usize {
        tracing::warn!(
            kernel = %kernel.name,
            size,
            kernarg_size = kernel.kernarg_size,
            "hipModuleLaunchKernel: HIP_LAUNCH_PARAM_BUFFER_SIZE is larger than the kernel's \
             kernarg segment"
        );
        return Err(HipError::INVALID_VALUE);
    }
    // SAFETY: the buffer holds `size` bytes (HIP's contract), and `size` is at most the
    // kernarg segment size, a u32.
    Ok(unsafe { std::slice::from_raw_parts(buffer, size) })
}

// ---------------------------------------------------------------------------------------
// Checking a launch

/// Checks a launch of `function` on `device` (the device the request's stream belongs to):
/// the configuration, the arguments, the stream and, for a `cooperative` launch, what
/// `cooperative::prepare` checks. What an executable graph builds its packets with and what a
/// multi-device launch checks all its parts with before publishing any.
///
/// # Safety
/// For [`Args::Pointers`], as for [`launch_kernel`]; the argument pointers stay valid while
/// the result lives.
pub(in crate::runtime) unsafe fn check_launch<'a>(
    device: &'a Device,
    function: &'a Function,
    request: LaunchRequest<'a>,
    cooperative: bool,
) -> HipResult<AdmittedLaunch<'a>> {
    let admission = function.admit_launch()?;
    let kernel = function.kernel(device)?;
    // SAFETY: forwarded contract.
    let launch =
        unsafe { CheckedLaunch::check(device, function, kernel, request, None, cooperative) }?;
    Ok(AdmittedLaunch { launch, admission })
}

/// A launch checked by [`check_launch`], with its admission: held until the launch is
/// published or dropped, so that an unload of the kernel's module waits for it. (The launch
/// itself carries none: `hipLaunchKernel`'s kernels are never unloaded, and its path pays
/// nothing for modules.)
pub(in crate::runtime) struct AdmittedLaunch<'a> {
    launch: CheckedLaunch<'a>,
    admission: LaunchAdmission<'a>,
}

impl<'a> std::ops::Deref for AdmittedLaunch<'a> {
    type Target = CheckedLaunch<'a>;

    fn deref(&self) -> &CheckedLaunch<'a> {
        &self.launch
    }
}

impl AdmittedLaunch<'_> {
    /// [`CheckedLaunch::submit_cooperative`], then the admission is given back.
    pub(in crate::runtime) fn submit_cooperative(
        self,
        multigrid_sync: u64,
        also_after: &[stream::Dep],
    ) -> HipResult<crate::hsa::queue::Marker> {
        let AdmittedLaunch { launch, admission } = self;
        let published = launch.submit_cooperative(multigrid_sync, also_after);
        drop(admission);
        published
    }
}

/// A launch checked on its device: everything that can fail before its packets are published
/// has been checked, so that a launch of several parts (a multi-device cooperative launch)
/// publishes all of them or none.
pub(in crate::runtime) struct CheckedLaunch<'a> {
    device: &'a Device,
    stream: StreamRef<'a>,
    packet: DispatchPacket<'a>,
    /// The device's cooperative queue, for a cooperative launch.
    cooperative_queue: Option<Arc<Queue>>,
}

impl<'a> CheckedLaunch<'a> {
    /// [`check_launch`] of `kernel`, `function`'s code on `device`; the stream already
    /// resolved (`resolved_stream`, from the thread's record of recent launches) or resolved
    /// here from the request's handle. Inlined in each entry point, whose launch is then built
    /// where it stays rather than copied out of a call.
    ///
    /// # Safety
    /// As for [`check_launch`].
    #[inline(always)]
    unsafe fn check(
        device: &'a Device,
        function: &'a Function,
        kernel: &'a Kernel,
        request: LaunchRequest<'a>,
        resolved_stream: Option<StreamRef<'a>>,
        cooperative: bool,
    ) -> HipResult<CheckedLaunch<'a>> {
        let info = &kernel.info;
        let LaunchRequest {
            grid: grid_size,
            block,
            shared_mem,
            args,
            stream: handle,
        } = request;
        // The configuration is checked in work-groups either way.
        let grid = match grid_size {
            GridSize::Blocks(blocks) => blocks,
            GridSize::WorkItems(items) => {
                let groups =
                    |items: u32, size: u32| if size == 0 { 0 } else { items.div_ceil(size) };
                Dim3 {
                    x: groups(items.x, block.x),
                    y: groups(items.y, block.y),
                    z: groups(items.z, block.z),
                }
            }
        };

        if !kernel.limits.admit(
            [grid.x, grid.y, grid.z],
            [block.x, block.y, block.z],
            shared_mem,
        ) {
            return Err(refuse_configuration(
                device,
                function,
                info,
                grid,
                block,
                shared_mem,
                cooperative,
            ));
        }
        let lds = u32::try_from(shared_mem).unwrap_or(u32::MAX);
        let block_size = [block.x, block.y, block.z];
        let geometry = match grid_size {
            // `admit` checked what `from_blocks` would but the size of the grid in work-items.
            GridSize::Blocks(_) => {
                LaunchGeometry::from_admitted_blocks([grid.x, grid.y, grid.z], block_size, lds)
            }
            GridSize::WorkItems(items) => {
                // As AMD's runtime (clr's ihipModuleLaunchKernel): a kernel built for full
                // work-groups gets no partial one (AMD first shrinks a block larger than the grid
                // to the grid, so only a grid larger than its block is refused).
                let partial = |items: u32, size: u32| size != 0 && items > size && !items.is_multiple_of(size);
                if info.uniform_work_group_size
                    && super::base::compat::abi().refuses_partial_uniform_groups()
                    && (partial(items.x, block.x) || partial(items.y, block.y) || partial(items.z, block.z))
                {
                    tracing::warn!(kernel = %function.name, ?items, ?block, "the kernel's metadata says uniform_work_group_size: the grid in work-items must be a multiple of the block");
                    return Err(HipError::INVALID_VALUE);
                }
                LaunchGeometry::from_work_items([items.x, items.y, items.z], block_size, lds)
            }
        }
        .map_err(|e| {
            tracing::warn!(kernel = %function.name, ?grid, ?block, error = %e, "invalid launch geometry");
            HipError::INVALID_CONFIGURATION
        })?;
        let layout = &kernel.layout;
        let Some(kernarg_slot) = kernel.kernarg_slot else {
            tracing::warn!(kernel = %function.name, kernarg = info.kernarg_size, align = info.kernarg_align, "kernarg segment larger or more aligned than a kernarg slot");
            return Err(HipError::INVALID_CONFIGURATION);
        };
        let source = match args {
            // A kernel without arguments may be launched with no argument array.
            Args::Pointers(p) if p.is_null() && layout.explicit_count() == 0 => {
                ArgSource::Pointers(&[])
            }
            Args::Pointers(p) if p.is_null() => {
                tracing::warn!(kernel = %function.name, explicit = layout.explicit_count(), "kernel arguments missing");
                return Err(HipError::INVALID_VALUE);
            }
            // SAFETY: the caller guarantees one valid pointer per explicit argument.
            Args::Pointers(p) => ArgSource::Pointers(unsafe {
                std::slice::from_raw_parts(p, layout.explicit_count())
            }),
            Args::Packed(buffer) => ArgSource::Packed(buffer),
        };
        if let Err(e) = layout.check(source) {
            tracing::warn!(kernel = %function.name, error = %e, "invalid kernel arguments");
            return Err(HipError::INVALID_VALUE);
        }
        let stream = match resolved_stream {
            Some(stream) => stream,
            None => match stream::resolve(handle, device) {
                Ok(stream) => stream,
                Err(error) => return Err(refuse_stream(error, handle, cooperative)),
            },
        };
        let cooperative_queue = if cooperative {
            Some(super::kernel::cooperative::prepare(
                device,
                function,
                info,
                [grid.x, grid.y, grid.z],
                [block.x, block.y, block.z],
                shared_mem,
            )?)
        } else {
            None
        };
        Ok(CheckedLaunch {
            device,
            stream,
            packet: DispatchPacket {
                function,
                kernel,
                source,
                geometry,
                kernarg_slot,
            },
            cooperative_queue,
        })
    }
}

/// Why a launch configuration is refused, or `None` if it is valid: zero dimensions, too
/// many threads (over 1024, a block dimension over 1024, or over the kernel's
/// `max_flat_workgroup_size`), more blocks in a dimension than the device reports as
/// `maxGridSize` (`max_grid`), more LDS than the device has. (The AQL packet's own limit,
/// 2^32-1 work-items per dimension, is `LaunchGeometry`'s check.)
#[inline(always)]
pub fn check_configuration(
    info: &KernelInfo,
    grid: Dim3,
    block: Dim3,
    shared_mem: usize,
    device_lds: u32,
    max_grid: [i32; 3],
) -> Option<Refusal> {
    // Saturating: three dimensions near u32::MAX overflow even a u64 (refused below anyway).
    let threads = (block.x as u64 * block.y as u64).saturating_mul(block.z as u64);
    if threads == 0 || grid.x.min(grid.y).min(grid.z) == 0 {
        return Some(Refusal::ZeroDimension);
    }
    if u64::from(block.x.max(block.y).max(block.z)) > MAX_BLOCK_THREADS
        || threads > MAX_BLOCK_THREADS
    {
        return Some(Refusal::BlockOverDeviceLimit);
    }
    if info.max_flat_workgroup_size != 0 && threads > u64::from(info.max_flat_workgroup_size) {
        return Some(Refusal::BlockOverLaunchBounds);
    }
    // AMD's runtime reports 2^31-1 blocks per dimension but launches up to 2^32-1; a grid
    // the device says it cannot take is refused here instead.
    if i64::from(grid.x) > i64::from(max_grid[0])
        || i64::from(grid.y) > i64::from(max_grid[1])
        || i64::from(grid.z) > i64::from(max_grid[2])
    {
        return Some(Refusal::GridOverDeviceLimit);
    }
    if (info.group_segment_fixed_size as u64).saturating_add(shared_mem as u64) > device_lds as u64
    {
        return Some(Refusal::SharedMemoryOverDeviceLimit);
    }
    None
}

/// The error (and its log line) of a launch [`LaunchLimits::admit`] refused, from
/// [`check_configuration`], which names the reason; the error is the program's ABI's for that
/// reason (`compat::Abi::launch_error`).
#[cold]
#[inline(never)]
fn refuse_configuration(
    device: &Device,
    function: &Function,
    info: &KernelInfo,
    grid: Dim3,
    block: Dim3,
    shared_mem: usize,
    cooperative: bool,
) -> HipError {
    let max_grid = device.info.max_grid_size;
    let Some(refusal) =
        check_configuration(info, grid, block, shared_mem, device.lds_bytes, max_grid)
    else {
        tracing::error!(kernel = %function.name, ?grid, ?block, shared_mem, "internal error: the launch limits refused a valid configuration");
        return HipError::UNKNOWN;
    };
    tracing::warn!(kernel = %function.name, ?grid, ?block, ?max_grid, shared_mem, lds = device.lds_bytes, max_flat = info.max_flat_workgroup_size, cooperative, "invalid launch: {}", refusal.why());
    super::base::compat::abi().launch_error(refusal, cooperative)
}

/// The error of a launch whose stream `handle` did not resolve: a handle that names no live
/// stream gets the error of the program's ABI (`compat::Abi::dead_launch_stream`); a live
/// stream of another device stays hipErrorInvalidHandle (AMD's invalid resource handle).
#[cold]
#[inline(never)]
fn refuse_stream(error: HipError, handle: *mut c_void, cooperative: bool) -> HipError {
    if error != HipError::INVALID_HANDLE || stream::is_live_stream(handle) {
        return error;
    }
    tracing::warn!(stream = ?handle, "launch on a stream handle that names no live stream");
    super::base::compat::abi().dead_launch_stream(cooperative)
}

// ---------------------------------------------------------------------------------------
// Submitting a checked launch

impl CheckedLaunch<'_> {
    /// Publishes the dispatch on the stream's own queue, or adds it to the stream's capture.
    /// By reference, as `submit` and `capture`: a launch moved is a launch copied whole (a
    /// `memcpy` call); its owner drops it with [`CheckedLaunch::end`].
    #[inline(always)]
    fn submit_or_capture(&self, function: &Arc<Function>) -> HipResult {
        // The one check capture costs a launch: a flag of the stream just resolved.
        if self.stream.capturing.load(Ordering::Relaxed) {
            self.capture(function)
        } else {
            self.submit()
        }
    }

    /// Publishes the dispatch on the stream's own queue. Cannot fail but for the stream's
    /// own waits (see `Stream::submit_counted`).
    #[inline(always)]
    fn submit(&self) -> HipResult {
        let packet = &self.packet;
        packet.note_in_trace();
        self.stream.submit_counted(
            &self.device.streams,
            #[inline(always)]
            |queue, completion_signal| packet.publish(queue, completion_signal, None),
        )
    }

    /// Adds the launch to its stream's capture as a kernel node, its arguments copied. Kept
    /// out of line: the launch path carries only the flag test and the call (by reference: a
    /// launch moved out of line is copied whole first, also when it is not captured).
    #[cold]
    #[inline(never)]
    fn capture(&self, function: &Arc<Function>) -> HipResult {
        let packet = &self.packet;
        let bytes: Box<[u8]> = match packet.source {
            // SAFETY: the pointers passed the layout's check (the caller's contract).
            ArgSource::Pointers(p) => unsafe { packet.kernel.layout.pack(p) }
                .map_err(|_| HipError::INVALID_VALUE)?
                .into(),
            ArgSource::Packed(b) => b[..packet.kernel.layout.explicit_extent().min(b.len())].into(),
        };
        let Some(capture) = CAPTURE_KERNEL.get() else {
            tracing::error!("internal error: a capturing stream with no capture hook");
            return Err(HipError::UNKNOWN);
        };
        capture(
            &self.stream,
            CapturedKernel {
                function: function.clone(),
                grid: packet.grid(),
                block: packet.block(),
                shared_mem: packet.geometry.dynamic_lds(),
                args: bytes,
                layout: &packet.kernel.layout,
            },
        )
    }

    /// Publishes the dispatch of a cooperative launch on the device's cooperative queue, with
    /// `multigrid_sync` as its `hidden_multigrid_sync_arg`, in its stream's order and after
    /// `also_after` (see `Stream::submit_elsewhere`, whose marker of the dispatch it returns).
    pub(in crate::runtime) fn submit_cooperative(
        self,
        multigrid_sync: u64,
        also_after: &[stream::Dep],
    ) -> HipResult<crate::hsa::queue::Marker> {
        let CheckedLaunch {
            device,
            stream,
            packet,
            cooperative_queue,
        } = self;
        let Some(queue) = cooperative_queue else {
            tracing::error!(kernel = %packet.function.name, "internal error: a cooperative submit of a launch not checked as cooperative");
            return Err(HipError::UNKNOWN);
        };
        packet.note_in_trace();
        stream.submit_elsewhere(
            &device.streams,
            &queue,
            also_after,
            |queue, completion_signal| {
                packet.publish(queue, completion_signal, Some(multigrid_sync))
            },
        )
    }
    /// Drops the launch. Only these fields need dropping, which then happens here rather
    /// than in an out-of-line drop of the whole launch.
    #[inline(always)]
    fn end(self) {
        let CheckedLaunch {
            stream,
            cooperative_queue,
            ..
        } = self;
        drop(stream);
        drop(cooperative_queue);
    }

    /// Work-items of the grid.
    pub(in crate::runtime) fn work_items(&self) -> u64 {
        self.packet
            .geometry
            .grid_size()
            .iter()
            .map(|&n| u64::from(n))
            .product()
    }

    /// The device the launch runs on.
    pub(in crate::runtime) fn device(&self) -> &Device {
        self.device
    }
}

/// A launch on a capturing stream, for the capture to turn into a kernel node: the explicit
/// arguments packed at their kernarg offsets.
pub struct CapturedKernel<'a> {
    pub function: Arc<Function>,
    pub grid: Dim3,
    pub block: Dim3,
    pub shared_mem: u32,
    pub args: Box<[u8]>,
    pub layout: &'a super::base::kernarg::KernargLayout,
}

/// What a launch on a capturing stream calls instead of submitting (set by
/// `graph::capture` when a capture begins: graphs build on launches, not the reverse).
pub static CAPTURE_KERNEL: OnceLock<fn(&Stream, CapturedKernel) -> HipResult> = OnceLock::new();

/// One launch's dispatch, checked and ready to be written on whichever queue serves it. The
/// launch's grid, block and dynamic LDS are its geometry's (which has them in the form the
/// packet and the kernargs take), not copies of their own: the launch path builds this in
/// memory, every field a store and a load.
struct DispatchPacket<'a> {
    function: &'a Function,
    kernel: &'a Kernel,
    source: ArgSource<'a>,
    geometry: LaunchGeometry,
    /// Which kernarg slot of the queue the segment is written to.
    kernarg_slot: KernargSlot,
}

impl DispatchPacket<'_> {
    /// The grid in work-groups.
    fn grid(&self) -> Dim3 {
        let [x, y, z] = self.geometry.block_counts();
        Dim3 { x, y, z }
    }

    fn block(&self) -> Dim3 {
        let [x, y, z] = self.geometry.block();
        Dim3 { x, y, z }
    }

    /// Names the kernel of the dispatch packet about to be published in the trace (the packet
    /// itself only has the code address).
    /// The one check while nothing times packets: the recorder and the activity callbacks
    /// both want them timed (`probe::timing_packets`).
    #[inline(always)]
    fn note_in_trace(&self) {
        if crate::probe::timing_packets() {
            self.note_timed();
        }
    }

    #[cold]
    #[inline(never)]
    fn note_timed(&self) {
        if crate::trace::recording() {
            crate::trace::record::note_kernel(&self.function.name, self.kernel.info.kernarg_size);
        }
        super::base::callbacks::note_kernel(&self.function.name);
    }

    /// Writes the kernargs (with `hidden_multigrid_sync_arg` if given) and the packet on
    /// `queue` with `completion_signal`, and rings the doorbell; returns the packet's index.
    #[inline(always)]
    fn publish(
        &self,
        queue: &crate::hsa::queue::Queue,
        completion_signal: hsa_signal_t,
        multigrid_sync: Option<u64>,
    ) -> u64 {
        queue.publish_with_kernargs(
            self.kernarg_slot,
            #[inline(always)]
            |kernarg| {
                self.write_kernargs(kernarg, multigrid_sync);
                tracing::trace!(
                    target: "hipshim::launch",
                    kernel = %self.function.name, grid = ?self.grid(), block = ?self.block(),
                    shared_mem = self.geometry.dynamic_lds(), kernarg = self.kernel.info.kernarg_size,
                    cooperative = multigrid_sync.is_some(), "kernel dispatch"
                );
                self.dispatch_packet(kernarg.as_ptr() as u64, completion_signal)
            },
        )
    }

    /// Writes the launch's kernarg segment into `kernarg` (a whole kernarg slot, or at least
    /// the segment), with `hidden_multigrid_sync_arg` if given.
    #[inline(always)]
    fn write_kernargs(&self, kernarg: &mut [u8], multigrid_sync: Option<u64>) {
        let layout = &self.kernel.layout;
        // SAFETY: `source` passed the layout's check, and its pointers are readable for their
        // arguments (the caller's contract); the slot holds the segment (checked at launch).
        unsafe { layout.write(self.source, &self.geometry, kernarg) };
        if let Some(value) = multigrid_sync {
            layout.write_multigrid_sync(kernarg, value);
        }
    }

    /// The dispatch packet, its kernargs at `kernarg_address`.
    #[inline(always)]
    fn dispatch_packet(
        &self,
        kernarg_address: u64,
        completion_signal: hsa_signal_t,
    ) -> hsa_kernel_dispatch_packet_t {
        let (info, geometry, block) = (&self.kernel.info, &self.geometry, self.block());
        let [gx, gy, gz] = geometry.grid_size();
        hsa_kernel_dispatch_packet_t {
            header: stream_packet_header(HSA_PACKET_TYPE_KERNEL_DISPATCH),
            setup: geometry.dimensions() << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS,
            workgroup_size_x: block.x as u16,
            workgroup_size_y: block.y as u16,
            workgroup_size_z: block.z as u16,
            grid_size_x: gx,
            grid_size_y: gy,
            grid_size_z: gz,
            private_segment_size: info.private_segment_fixed_size,
            // Static plus dynamic LDS: at most the device's (checked at launch).
            group_segment_size: info.group_segment_fixed_size + geometry.dynamic_lds(),
            kernel_object: self.kernel.kernel_object,
            kernarg_address,
            completion_signal,
            ..Default::default()
        }
    }
}

impl CheckedLaunch<'_> {
    /// Writes the launch's kernarg segment into `kernarg` (memory of the caller's that
    /// outlives every use of the packet, at least [`CheckedLaunch::kernarg_bytes`] long) and
    /// returns its dispatch packet without a completion signal: what an executable graph
    /// builds once per kernel node and publishes at each launch (`graph/exec`).
    pub(in crate::runtime) fn prebuild(&self, kernarg: &mut [u8]) -> AqlPacket {
        self.packet.write_kernargs(kernarg, None);
        to_bytes(
            &self
                .packet
                .dispatch_packet(kernarg.as_ptr() as u64, hsa_signal_t::default()),
        )
    }

    /// Bytes of the kernel's kernarg segment.
    pub(in crate::runtime) fn kernarg_bytes(&self) -> usize {
        self.packet.kernel.layout.size()
    }

    /// The alignment the kernel's kernarg segment needs (`.kernarg_segment_align`).
    pub(in crate::runtime) fn kernarg_align(&self) -> usize {
        self.packet.kernel.info.kernarg_align as usize
    }
}

// ---------------------------------------------------------------------------------------
// The thread's record of recent launch targets

/// The table change counts a cached launch target was found under (see [`RecentLaunches`]).
#[derive(Clone, Copy, PartialEq, Eq)]
struct TableChanges {
    /// `module::function_changes`.
    functions: u64,
    /// `stream::removals`.
    streams: u64,
}

impl TableChanges {
    /// The counts now: read before anything is looked up, so that a change after this
    /// invalidates what is found.
    #[inline(always)]
    fn now() -> TableChanges {
        TableChanges {
            functions: module::function_changes(),
            streams: stream::removals(),
        }
    }
}

/// A thread's latest launch targets, direct-mapped by (host function, stream handle): each
/// entry has what `hipLaunchKernel` resolves from the two (the function, its kernel on the
/// device, the stream), so that a loop launching a few kernels on a few streams finds them
/// with one lookup. As with `handles::RecentLookups`, an entry is trusted only while neither
/// table has changed since it was made, and only on the device it was made on; the whole holds
/// references that its destructor gives back when the thread exits. The function and the
/// stream are both held, so that a hit borrows them without counting: a weakly held stream
/// cost a `Weak::upgrade` and the drop of what it made, two locked instructions per launch.
/// A destroyed stream is never answered for (its removal changes `seen`), and gives up its
/// queue when it retires (`Stream::retire`), so an entry that still holds it keeps only a
/// small object: the stream's queue, which the queue policies count, goes back at once. A
/// registered kernel lives until its fat binary is unregistered (at exit, or when a library
/// is unloaded); an entry then keeps that one small object until the thread replaces it.
struct RecentLaunches {
    entries: [RecentLaunch; RECENT_LAUNCH_ENTRIES],
}

const RECENT_LAUNCH_ENTRIES: usize = 8;

/// One entry of [`RecentLaunches`], a cell per field: a lookup reads only what it compares
/// (a copy of the whole entry costs a 64-byte `memcpy` call per launch).
struct RecentLaunch {
    host_function: Cell<usize>,
    stream: Cell<usize>,
    device: Cell<*const Device>,
    seen: Cell<TableChanges>,
    /// From `Arc::into_raw`, owned by the entry; null when the entry is empty.
    function: Cell<*const Function>,
    /// The function's kernel on `device`: it lives as long as the function.
    kernel: Cell<*const Kernel>,
    /// From `Arc::into_raw`, owned by the entry; null for the device's null stream.
    stream_object: Cell<*const Stream>,
}

/// What a [`RecentLaunch`] answers with.
struct LaunchTarget {
    /// The entry's (`Arc::into_raw`), not counted for the caller.
    function: *const Function,
    kernel: *const Kernel,
    /// The entry's stream, borrowed as the function is (or the device's null stream).
    stream: StreamRef<'static>,
    null_stream: bool,
}

impl RecentLaunches {
    #[allow(clippy::declare_interior_mutable_const)]
    const EMPTY: RecentLaunch = RecentLaunch {
        host_function: Cell::new(0),
        stream: Cell::new(0),
        device: Cell::new(std::ptr::null()),
        seen: Cell::new(TableChanges {
            functions: 0,
            streams: 0,
        }),
        function: Cell::new(std::ptr::null()),
        kernel: Cell::new(std::ptr::null()),
        stream_object: Cell::new(std::ptr::null()),
    };

    const fn new() -> Self {
        RecentLaunches {
            entries: [Self::EMPTY; RECENT_LAUNCH_ENTRIES],
        }
    }

    /// The target the calling thread recorded for `key` on `device`, if neither table has
    /// changed since (`seen`). None once the thread's destructors have dropped the record (a
    /// launch from another thread-local's destructor goes without it).
    #[inline(always)]
    fn find(
        key: (usize, usize),
        device: &'static Device,
        seen: TableChanges,
    ) -> Option<LaunchTarget> {
        Self::with_mine(
            #[inline(always)]
            |recent| recent.get(key, device, seen),
        )
        .flatten()
    }

    /// Records the target of `key` on `device`, found while the tables read `seen`, in the
    /// calling thread's record: `function`, its `kernel` on the device and the `stream` the
    /// launch resolved (only the device's null stream is borrowed rather than shared).
    #[inline(always)]
    fn remember(
        key: (usize, usize),
        device: &Device,
        seen: TableChanges,
        function: &Arc<Function>,
        kernel: &Kernel,
        stream: &StreamRef<'_>,
    ) {
        // The stream by address: the launch that holds it is not moved or kept in memory for
        // a reference into it.
        let stream_object = match stream {
            StreamRef::Shared(stream) => Arc::as_ptr(stream),
            StreamRef::Borrowed(_) => std::ptr::null(),
        };
        // SAFETY: `stream_object` is null or the address of a stream the caller's
        // `StreamRef::Shared` holds.
        Self::with_mine(|recent| unsafe {
            recent.put(key, device, seen, function, kernel, stream_object)
        });
    }

    /// `f` of the calling thread's record: `LocalKey::try_with` only finds its address, and
    /// `f` runs in the caller (a `with` around the whole lookup is called out of line). `None`
    /// once the thread's destructors have dropped the record.
    #[inline(always)]
    fn with_mine<R>(f: impl FnOnce(&RecentLaunches) -> R) -> Option<R> {
        let recent = RECENT_LAUNCHES
            .try_with(|recent| recent as *const RecentLaunches)
            .ok()?;
        // SAFETY: the thread-local is alive (`try_with` succeeded) and stays at this address
        // until its thread exits, which cannot happen while that thread runs `f`; the
        // reference does not outlive `f`.
        Some(f(unsafe { &*recent }))
    }

    #[inline(always)]
    fn entry(&self, (host_function, stream): (usize, usize)) -> &RecentLaunch {
        // Host stubs are 16-aligned; stream handles count up above their tag byte.
        &self.entries[((host_function >> 4) ^ (stream >> 8)) % RECENT_LAUNCH_ENTRIES]
    }

    /// The target cached for `key` on `device`, if neither table has changed since (`seen`)
    /// and its function and stream are still alive.
    #[inline(always)]
    fn get(
        &self,
        key: (usize, usize),
        device: &'static Device,
        seen: TableChanges,
    ) -> Option<LaunchTarget> {
        let recent = self.entry(key);
        let function = recent.function.get();
        if recent.host_function.get() != key.0
            || recent.stream.get() != key.1
            || recent.seen.get() != seen
            || !std::ptr::eq(recent.device.get(), device)
            || function.is_null()
        {
            return None;
        }
        let stream_object = recent.stream_object.get();
        let null_stream = stream_object.is_null();
        let stream = if null_stream {
            StreamRef::Borrowed(&device.streams.null)
        } else {
            // SAFETY: `stream_object` came from `Arc::into_raw` and the entry still owns that
            // reference; only this thread's `put` or exit gives it back, neither of which can
            // happen while the launch that borrows it runs.
            StreamRef::Borrowed(unsafe { &*stream_object })
        };
        Some(LaunchTarget {
            function,
            kernel: recent.kernel.get(),
            stream,
            null_stream,
        })
    }

    /// Caches the target of `key` on `device`, found while the tables read `seen`: the stream
    /// at `stream` (null for the device's null stream, the only one a launch borrows).
    ///
    /// # Safety
    /// `stream` is null or the address of a stream an `Arc` the caller holds owns.
    #[inline(never)]
    unsafe fn put(
        &self,
        key: (usize, usize),
        device: &Device,
        seen: TableChanges,
        function: &Arc<Function>,
        kernel: &Kernel,
        stream: *const Stream,
    ) {
        let recent = self.entry(key);
        let stream_object = if stream.is_null() {
            std::ptr::null()
        } else {
            // SAFETY: the caller's `Arc` keeps the stream alive while this counts one more
            // reference for the entry.
            unsafe { Arc::increment_strong_count(stream) };
            stream
        };
        let old_function = recent.function.replace(Arc::into_raw(function.clone()));
        let old_stream = recent.stream_object.replace(stream_object);
        recent.host_function.set(key.0);
        recent.stream.set(key.1);
        recent.device.set(device);
        recent.seen.set(seen);
        recent.kernel.set(kernel);
        // SAFETY: the entry owned these references, and nothing else names them now.
        unsafe {
            if !old_function.is_null() {
                drop(Arc::from_raw(old_function));
            }
            if !old_stream.is_null() {
                drop(Arc::from_raw(old_stream));
            }
        }
    }
}

impl Drop for RecentLaunches {
    fn drop(&mut self) {
        for recent in &self.entries {
            let function = recent.function.replace(std::ptr::null());
            let stream = recent.stream_object.replace(std::ptr::null());
            // SAFETY: the entry owned these references (from `Arc::into_raw`); the thread is
            // exiting and nothing borrows them any more.
            unsafe {
                if !function.is_null() {
                    drop(Arc::from_raw(function));
                }
                if !stream.is_null() {
                    drop(Arc::from_raw(stream));
                }
            }
        }
    }
}

thread_local! {
    static RECENT_LAUNCHES: RecentLaunches = const { RecentLaunches::new() };
}

// ---------------------------------------------------------------------------------------
// hipConfigureCall / hipSetupArgument / hipLaunchByPtr: the launch API before `<<<>>>`

/// A configuration `hipConfigureCall` pushed and the argument bytes `hipSetupArgument`
/// placed for it.
pub struct LegacyLaunch {
    config: CallConfiguration,
    args: Vec<u8>,
}

/// Most bytes of arguments one legacy launch may set up (HIP's kernel parameter limit).
const MAX_LEGACY_ARG_BYTES: usize = 4096;

thread_local! {
    static LEGACY_LAUNCHES: RefCell<Vec<LegacyLaunch>> = const { RefCell::new(Vec::new()) };
}

/// `hipConfigureCall`: starts a launch that `hipSetupArgument` fills and `hipLaunchByPtr`
/// launches. Configurations nest as `<<<>>>`'s do, at most [`MAX_PENDING_CONFIGURATIONS`].
pub fn configure_call(config: CallConfiguration) -> HipResult {
    LEGACY_LAUNCHES.with(|launches| {
        let mut launches = launches.borrow_mut();
        if launches.len() >= MAX_PENDING_CONFIGURATIONS {
            tracing::warn!("hipConfigureCall: too many configurations without a launch");
            return Err(HipError::LAUNCH_OUT_OF_RESOURCES);
        }
        launches.push(LegacyLaunch {
            config,
            args: Vec::new(),
        });
        Ok(())
    })
}

/// `hipSetupArgument`: copies `arg` to `offset` of the argument buffer of the latest
/// configuration (the layout is the kernel's: each argument at its own offset).
pub fn setup_argument(arg: &[u8], offset: usize) -> HipResult {
    let end = offset
        .checked_add(arg.len())
        .filter(|&end| end <= MAX_LEGACY_ARG_BYTES)
        .ok_or_else(|| {
            tracing::warn!(
                offset,
                size = arg.len(),
                "hipSetupArgument: the argument ends past the 4 KiB parameter limit"
            );
            HipError::INVALID_VALUE
        })?;
    LEGACY_LAUNCHES.with(|launches| {
        let mut launches = launches.borrow_mut();
        let Some(launch) = launches.last_mut() else {
            tracing::warn!("hipSetupArgument without hipConfigureCall");
            return Err(HipError::MISSING_CONFIGURATION);
        };
        if launch.args.len() < end {
            launch.args.resize(end, 0);
        }
        launch.args[offset..end].copy_from_slice(arg);
        Ok(())
    })
}

/// The configuration `hipConfigureCall` pushed last and the arguments set up for it, taken
/// off the thread's stack for `hipLaunchByPtr`, whose launch consumes them also when it fails.
pub fn take_legacy_launch() -> HipResult<LegacyLaunch> {
    LEGACY_LAUNCHES
        .with(|launches| launches.borrow_mut().pop())
        .ok_or_else(|| {
            tracing::warn!("hipLaunchByPtr without hipConfigureCall");
            HipError::MISSING_CONFIGURATION
        })
}

/// `hipLaunchByPtr` on `device`: launches the kernel registered for `host_function` with the
/// configuration and arguments of `legacy` (from [`take_legacy_launch`]).
pub fn launch_by_ptr(
    device: &Device,
    host_function: *const c_void,
    legacy: LegacyLaunch,
) -> HipResult {
    let LegacyLaunch { config, args } = legacy;
    let function = module::function(host_function as usize)?;
    let request = LaunchRequest {
        grid: GridSize::Blocks(config.grid),
        block: config.block,
        shared_mem: config.shared_mem,
        args: Args::Packed(&args),
        stream: config.stream,
    };
    // SAFETY: a packed buffer needs no caller contract; `check_launch` checks that it covers
    // the kernel's explicit arguments.
    unsafe { launch_function(device, &function, request, Dispatch::Stream) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(max_flat: u32, lds: u32) -> KernelInfo {
        KernelInfo::with_resources(max_flat, lds, 0, 0, 0)
    }

    fn d(x: u32, y: u32, z: u32) -> Dim3 {
        Dim3 { x, y, z }
    }

    #[test]
    fn launch_configurations_are_refused_for_their_reason() {
        let k = info(256, 1024);
        let lds = 64 << 10;
        assert_eq!(
            check_configuration(&k, d(1, 1, 1), d(256, 1, 1), 0, lds, MAX_GRID),
            None
        );
        let why = |g, b, s| check_configuration(&k, g, b, s, lds, MAX_GRID);
        assert_eq!(why(d(0, 1, 1), d(1, 1, 1), 0), Some(Refusal::ZeroDimension));
        assert_eq!(why(d(1, 1, 1), d(1, 0, 1), 0), Some(Refusal::ZeroDimension));
        assert_eq!(
            why(d(1, 1, 1), d(257, 1, 1), 0),
            Some(Refusal::BlockOverLaunchBounds)
        );
        assert_eq!(
            why(d(1, 1, 1), d(1, 1, 2048), 0),
            Some(Refusal::BlockOverDeviceLimit)
        );
        assert_eq!(why(d(1, 1, 1), d(64, 1, 1), lds as usize - 1024), None);
        assert_eq!(
            why(d(1, 1, 1), d(64, 1, 1), lds as usize - 1023),
            Some(Refusal::SharedMemoryOverDeviceLimit)
        );
        let big = info(1024, 0);
        assert_eq!(
            check_configuration(&big, d(1, 1, 1), d(32, 32, 2), 0, lds, MAX_GRID),
            Some(Refusal::BlockOverDeviceLimit)
        );
        // A kernel bounded above the device's limit is held to the device's.
        let over = info(2048, 0);
        assert_eq!(
            check_configuration(&over, d(1, 1, 1), d(1024, 1, 1), 0, lds, MAX_GRID),
            None
        );
    }

    /// `LaunchLimits::admit` is the launch path's form of `check_configuration`: the two
    /// agree on every edge of every limit (zero, the limit, one past it, wrap-arounds).
    #[test]
    fn admitted_launches_are_exactly_the_valid_configurations() {
        let dims = [
            0u32,
            1,
            2,
            3,
            63,
            64,
            255,
            256,
            257,
            1023,
            1024,
            1025,
            65535,
            65536,
            u32::MAX,
        ];
        let grids = [
            0u32,
            1,
            2,
            100,
            1 << 16,
            (1 << 31) - 2,
            (1 << 31) - 1,
            1 << 31,
            u32::MAX,
        ];
        let shared = [0usize, 1, 1023, 1024, 1025, 60 << 10, 64 << 10, usize::MAX];
        let lds = 64 << 10;
        let cases = [
            (info(0, 0), MAX_GRID),
            (info(256, 1024), MAX_GRID),
            (info(1024, 64 << 10), [100, 7, 1]),
            (info(2048, (64 << 10) + 1), MAX_GRID),
            (info(64, 0), [0, -5, i32::MIN]),
        ];
        let mut checked = 0u32;
        for (k, max_grid) in &cases {
            let limits = LaunchLimits::new(k, lds, *max_grid);
            for &bx in &dims {
                for &by in &[0u32, 1, 2, 1024, 1025, u32::MAX] {
                    for &bz in &[0u32, 1, 4, 1025] {
                        for &g in &grids {
                            for &s in &shared {
                                let (grid, block) = (d(g, 1.max(g % 7), 1), d(bx, by, bz));
                                let valid = check_configuration(k, grid, block, s, lds, *max_grid)
                                    .is_none();
                                assert_eq!(
                                    limits.admit(
                                        [grid.x, grid.y, grid.z],
                                        [block.x, block.y, block.z],
                                        s
                                    ),
                                    valid,
                                    "{k:?} {max_grid:?} grid {grid:?} block {block:?} shared {s}"
                                );
                                for grid in [d(1, g, 1), d(1, 1, g)] {
                                    let valid =
                                        check_configuration(k, grid, block, s, lds, *max_grid)
                                            .is_none();
                                    assert_eq!(
                                        limits.admit(
                                            [grid.x, grid.y, grid.z],
                                            [block.x, block.y, block.z],
                                            s
                                        ),
                                        valid
                                    );
                                }
                                checked += 1;
                            }
                        }
                    }
                }
            }
        }
        assert!(checked > 10_000);
    }

    /// What hipshim reports on hsasim and ROCr: i32::MAX blocks per dimension.
    const MAX_GRID: [i32; 3] = [i32::MAX; 3];

    #[test]
    fn grids_past_max_grid_size_are_invalid_configurations() {
        let k = info(256, 1024);
        let lds = 64 << 10;
        let err = |g, max| check_configuration(&k, g, d(1, 1, 1), 0, lds, max);
        let max = i32::MAX as u32;
        assert_eq!(err(d(max, max, max), MAX_GRID), None);
        for g in [d(max + 1, 1, 1), d(1, u32::MAX, 1), d(1, 1, max + 1)] {
            assert_eq!(
                err(g, MAX_GRID),
                Some(Refusal::GridOverDeviceLimit),
                "{g:?}"
            );
        }
        assert_eq!(
            err(d(65536, 65536, 1), [i32::MAX, 65535, 65535]),
            Some(Refusal::GridOverDeviceLimit)
        );
    }
}

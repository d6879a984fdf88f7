//! Code images and what they hold: fat binaries registered by the program at start-up
//! (`__hipRegisterFatBinary`, `__hipRegisterFunction`, `__hipRegisterVar`) and modules loaded
//! explicitly (`hipModuleLoad*`). Both are a [`CodeImage`]; both are loaded onto a device by
//! the one loader here ([`CodeImage::load`]): lazily on first use for fat binaries, eagerly on
//! the current device for modules (so a bad image fails `hipModuleLoad`, not a later launch).
//!
//! Handles given to the application (`hipModule_t`, `hipFunction_t`) are addresses of small
//! boxed tags, resolved only through live registries: a pointer that was never a handle, or
//! whose module was unloaded, is `hipErrorInvalidHandle` without ever being dereferenced.

use crate::error::{HipError, HipResult};
use crate::hsa::executable::{CodeObjectReader, Executable};
use crate::hsa::HsaError;
use crate::runtime::base::compat;
use crate::runtime::base::handles::{AddressMap, HandleTable, RecentLookups};
use crate::runtime::base::kernarg::KernargLayout;
use crate::runtime::code_object::{self, CodeObjectIndex, KernelInfo, TargetId};
use crate::runtime::copy::{self, CopyKind};
use crate::runtime::devices::device::{self, Device};
use crate::runtime::devices::hostcall;
use crate::runtime::mem::managed_var;
use crate::runtime::mem::memory;
use hsa_abi::hsa_agent_t;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::sync::{LazyLock, OnceLock};

/// Devices a process can address; per-device state lives in fixed arrays of this length.
pub const MAX_DEVICES: usize = 16;

/// A code image: a fat binary's offload bundle, or a module's bundle or raw code object.
pub struct CodeImage {
    bytes: ImageBytes,
    /// What the image loaded on each device. A mutex, not a once-cell, so a module can be
    /// unloaded; the launch path never takes it (functions cache their kernels).
    loaded: [Mutex<Option<Arc<LoadedCodeObject>>>; MAX_DEVICES],
    /// Serialises first loads so two threads do not load the same image twice.
    load_lock: Mutex<()>,
    /// The host addresses `__hipRegisterFunction` registered for this image, so that
    /// unregistering it visits its own kernels, not every kernel of the program.
    registered: Mutex<Vec<usize>>,
    /// The image's `__managed__` variables: (device-side name, the managed memory), each
    /// pointed at by its device-side variable when the image is loaded on a device.
    managed: Mutex<Vec<(String, usize)>>,
    /// A module's unload against its launches: [`UNLOADING`] once `hipModuleUnload` has begun,
    /// plus [`ADMITTED`] for each launch admitted and not yet submitted (see
    /// [`Function::admit_launch`]). Only modules count (a fat binary is never unloaded).
    launches: AtomicU64,
}

/// The bit of [`CodeImage::launches`] an unload sets.
const UNLOADING: u64 = 1;
/// What one launch being submitted adds to [`CodeImage::launches`].
const ADMITTED: u64 = 2;

/// A launch admitted by [`Function::admit_launch`], until its packets are published: while one
/// is held, an unload of its module does not start waiting for the module's work.
#[must_use]
pub struct LaunchAdmission<'a>(Option<&'a CodeImage>);

impl LaunchAdmission<'_> {
    /// Whether it holds a module's unload back (a fat binary's kernel holds nothing).
    pub fn is_of_module(&self) -> bool {
        self.0.is_some()
    }
}

impl Drop for LaunchAdmission<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        if let Some(image) = self.0 {
            // Release: the unload that sees the count drop sees what the launch published.
            image.launches.fetch_sub(ADMITTED, Ordering::Release);
        }
    }
}

/// Kept for the name the fat-binary hooks already use.
pub type FatBinary = CodeImage;

/// Where an image's bytes are.
enum ImageBytes {
    /// A module's copy (`hipModuleLoad*`).
    Owned(Vec<u8>),
    /// A registered fat binary, read in place (only the parts a load needs, each read
    /// checked: its length comes from its own header).
    Registered(code_object::ForeignBundle),
}

/// A code object loaded into an HSA executable on one device. Its kernels are looked up
/// when first asked for: their metadata decoded, their descriptors found.
pub struct LoadedCodeObject {
    /// Where each kernel's metadata lies in `elf`.
    index: CodeObjectIndex,
    /// The kernels looked up so far, by name.
    kernels: Mutex<HashMap<Box<[u8]>, Arc<Kernel>>>,
    agent: hsa_agent_t,
    /// The device it is loaded on.
    device: usize,
    /// Device variables by name: (address, size).
    pub variables: HashMap<String, (usize, usize)>,
    /// Kept alive for the executable (ROCr may reference the code object bytes after
    /// loading) and read for kernel metadata.
    elf: Vec<u8>,
    executable: Executable,
}

/// A kernel ready to dispatch on one device.
pub struct Kernel {
    pub kernel_object: u64,
    pub info: KernelInfo,
    /// The kernarg segment as a launch writes it, checked once here.
    pub layout: KernargLayout,
    /// The configurations a launch on this device may have, worked out once here.
    pub limits: crate::runtime::base::kernarg::LaunchLimits,
    /// The kind of kernarg slot a launch writes the segment to; `None` if no slot holds it
    /// (launches are refused).
    pub kernarg_slot: Option<crate::hsa::queue::KernargSlot>,
}

/// A kernel of a code image by name: what `__hipRegisterFunction` registers and what
/// `hipModuleGetFunction` returns, with its per-device kernel cached.
pub struct Function {
    pub name: KernelName,
    image: Arc<CodeImage>,
    kernels: [OnceLock<Result<Arc<Kernel>, HipError>>; MAX_DEVICES],
    /// The name as a C string, for `hipKernelNameRef`, made on first use.
    c_name: OnceLock<CString>,
}

/// A kernel's (mangled) name as registered: its bytes, stored unchecked (a library registers
/// thousands of kernels at start-up and launches a few); as text (`Deref<Target = str>`, lossy
/// UTF-8) for logs and traces, made on first use.
pub struct KernelName {
    bytes: Box<[u8]>,
    text: OnceLock<Box<str>>,
}

impl KernelName {
    pub fn new(bytes: Box<[u8]>) -> KernelName {
        KernelName {
            bytes,
            text: OnceLock::new(),
        }
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }
}

impl std::ops::Deref for KernelName {
    type Target = str;

    fn deref(&self) -> &str {
        self.text
            .get_or_init(|| String::from_utf8_lossy(&self.bytes).into())
    }
}

impl fmt::Display for KernelName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self)
    }
}

impl fmt::Debug for KernelName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// A `__device__`/`__constant__` variable registered by `__hipRegisterVar`.
struct Variable {
    image: Arc<CodeImage>,
    name: String,
    size: usize,
}

/// Registered kernels by the host address clang passes to `hipLaunchKernel` (the kernel's
/// host stub): the program's own address, not a handle hipshim issues, so not in a
/// `HandleTable`; an address nobody registered is `hipErrorInvalidDeviceFunction`.
/// Sized for a large library's kernels from the start: registration runs before `main`,
/// once per kernel, and growing the map there rehashes every kernel registered so far.
static FUNCTIONS: LazyLock<AddressMap<Arc<Function>>> =
    LazyLock::new(|| AddressMap::with_capacity_and_hasher(FUNCTIONS_CAPACITY, Default::default()));
const FUNCTIONS_CAPACITY: usize = 1 << 12;
/// Changes to `FUNCTIONS` so far, counted after each is made: a thread's cached lookup is good
/// while this has not moved (see `RecentLookups`).
static FUNCTION_CHANGES: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The kernels this thread launched lately: a loop over a few kernels finds each here
    /// without reading the shared map.
    static RECENT_FUNCTIONS: RecentLookups<Function, 8> = const { RecentLookups::new() };
}
/// Registered device variables by the address of their host shadow.
static VARIABLES: LazyLock<AddressMap<Arc<Variable>>> = LazyLock::new(AddressMap::default);

/// `__hipRegisterFatBinary`: remembers the bundle; nothing is parsed or loaded until a
/// kernel of it is used (start-up must stay cheap and must not touch the GPU).
///
/// # Safety
/// `wrapper` must be null or point to the fat-binary wrapper clang emits.
pub unsafe fn register_fat_binary(wrapper: *const c_void) -> HipResult<Arc<FatBinary>> {
    // SAFETY: forwarded from the caller's contract.
    let bundle = unsafe { code_object::ForeignBundle::from_wrapper(wrapper) }.map_err(|e| {
        tracing::error!(error = %e, "__hipRegisterFatBinary: unusable fat binary");
        HipError::INVALID_IMAGE
    })?;
    tracing::debug!(bytes = bundle.len(), "fat binary registered");
    Ok(CodeImage::new(ImageBytes::Registered(bundle)))
}

/// `__hipRegisterFunction`: the kernel's host stub at `host_function` launches the kernel
/// `name` of `fat_binary`. Nothing is looked up until it is launched.
pub fn register_function(fat_binary: Arc<FatBinary>, host_function: usize, name: Box<[u8]>) {
    let name = KernelName::new(name);
    tracing::debug!(%name, host_function = format_args!("{host_function:#x}"), "kernel registered");
    fat_binary.registered.lock().push(host_function);
    FUNCTIONS.insert(host_function, Function::new(fat_binary, name));
    FUNCTION_CHANGES.fetch_add(1, Ordering::AcqRel);
}

/// `__hipRegisterVar`: the host shadow's address names the device variable `name`.
pub fn register_variable(fat_binary: Arc<FatBinary>, host_var: usize, name: String, size: usize) {
    tracing::debug!(%name, size, host_var = format_args!("{host_var:#x}"), "device variable registered");
    VARIABLES.insert(
        host_var,
        Arc::new(Variable {
            image: fat_binary,
            name,
            size,
        }),
    );
}

/// `__hipRegisterManagedVar`: the `__managed__` variable `name` of `fat_binary` gets managed
/// memory (see `managed::register_variable`), which its device-side pointer names wherever
/// the image is loaded.
///
/// # Safety
/// As for `managed::register_variable`.
pub unsafe fn register_managed_variable(
    devices: &[Device],
    fat_binary: &FatBinary,
    host_var: *mut *mut c_void,
    init: *const c_void,
    name: String,
    size: usize,
    align: usize,
) -> HipResult {
    // SAFETY: forwarded contract.
    let memory = unsafe { managed_var::register_variable(devices, host_var, init, size, align) }?;
    tracing::debug!(%name, size, memory = format_args!("{memory:#x}"), "managed variable registered");
    fat_binary.managed.lock().push((name, memory));
    Ok(())
}

/// `__hipUnregisterFatBinary`: forget its kernels and variables. Executables stay loaded
/// until exit, as the program is shutting down and queued work may still reference them.
pub fn unregister_fat_binary(fat_binary: &Arc<FatBinary>) {
    for host_function in std::mem::take(&mut *fat_binary.registered.lock()) {
        // Unless another fat binary registered the address since.
        FUNCTIONS.remove_if(&host_function, |_, f| Arc::ptr_eq(&f.image, fat_binary));
    }
    FUNCTION_CHANGES.fetch_add(1, Ordering::AcqRel);
    VARIABLES.retain(|_, v| !Arc::ptr_eq(&v.image, fat_binary));
}

/// How many times the registered kernels have changed so far: a lookup made while this read
/// the same is still good (`RecentLookups`, and `launch`'s record of recent launches).
#[inline(always)]
pub fn function_changes() -> u64 {
    FUNCTION_CHANGES.load(Ordering::Acquire)
}

/// The kernel registered for the host stub at `host_function` (the launch path's lookup).
#[inline(always)]
pub fn function(host_function: usize) -> HipResult<Arc<Function>> {
    let changes = function_changes();
    match RECENT_FUNCTIONS.with(|recent| recent.get(host_function, changes)) {
        Some(function) => Ok(function),
        None => find_and_remember(host_function, changes),
    }
}

#[inline(never)]
fn find_and_remember(host_function: usize, changes: u64) -> HipResult<Arc<Function>> {
    let function = FUNCTIONS
        .get(&host_function)
        .map(|f| f.value().clone())
        .ok_or(HipError::INVALID_DEVICE_FUNCTION)?;
    RECENT_FUNCTIONS.with(|recent| recent.put(host_function, changes, &function));
    Ok(function)
}

/// Whether `host_var` is the host shadow of a registered device variable.
pub fn is_symbol(host_var: *const c_void) -> bool {
    VARIABLES.contains_key(&(host_var as usize))
}

/// The (device address, size) of a registered variable on `device` (the current device),
/// loading its code image there if needed. An address nobody registered is
/// `hipErrorInvalidSymbol`.
pub fn symbol_on_device(device: &Device, host_var: *const c_void) -> HipResult<(usize, usize)> {
    let variable = VARIABLES
        .get(&(host_var as usize))
        .map(|v| v.value().clone())
        .ok_or_else(|| {
            tracing::warn!(
                symbol = format_args!("{host_var:p}"),
                "not a registered device variable"
            );
            HipError::INVALID_SYMBOL
        })?;
    let loaded = variable.image.load(device)?;
    match loaded.variables.get(&variable.name) {
        Some(&(address, size)) => Ok((address, size.max(variable.size))),
        None => {
            tracing::error!(name = %variable.name, "the code object has no such variable");
            Err(HipError::INVALID_SYMBOL)
        }
    }
}

impl Function {
    fn new(image: Arc<CodeImage>, name: KernelName) -> Arc<Function> {
        Arc::new(Function {
            name,
            image,
            kernels: std::array::from_fn(|_| OnceLock::new()),
            c_name: OnceLock::new(),
        })
    }

    /// The kernel's (mangled) name as a C string that lives as long as the function
    /// (`hipKernelNameRef`); a name with a NUL byte in it ends there.
    pub fn c_name(&self) -> &std::ffi::CStr {
        self.c_name.get_or_init(|| {
            let bytes = self.name.as_bytes();
            let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
            CString::new(&bytes[..end]).unwrap_or_default()
        })
    }

    /// Lets a launch of this function go ahead unless its module is being unloaded (then
    /// `hipErrorInvalidHandle`): the unload waits for the launches admitted before it began to
    /// be published, then for the work queued, and no later launch is admitted, so a thread
    /// launching in a loop cannot keep it waiting. Held until the launch's packets are
    /// published. A fat binary's kernel costs a test of the image's kind; a module's, two
    /// atomic additions.
    #[inline(always)]
    pub fn admit_launch(&self) -> HipResult<LaunchAdmission<'_>> {
        let image = &*self.image;
        if !matches!(image.bytes, ImageBytes::Owned(_)) {
            return Ok(LaunchAdmission(None));
        }
        if image.launches.fetch_add(ADMITTED, Ordering::Acquire) & UNLOADING != 0 {
            image.launches.fetch_sub(ADMITTED, Ordering::Relaxed);
            return Err(self.refuse_unloading());
        }
        Ok(LaunchAdmission(Some(image)))
    }

    /// [`Function::admit_launch`] for a function found by its host address (`hipLaunchKernel`,
    /// `<<<>>>`): only `__hipRegisterFunction` registers those, always with a fat binary, which
    /// `hipModuleUnload` never unloads, so there is nothing to hold and nothing to test.
    #[inline(always)]
    pub fn admit_registered_launch(&self) -> LaunchAdmission<'_> {
        debug_assert!(
            !matches!(self.image.bytes, ImageBytes::Owned(_)),
            "a module's function found by a host address"
        );
        LaunchAdmission(None)
    }

    #[cold]
    #[inline(never)]
    fn refuse_unloading(&self) -> HipError {
        tracing::warn!(kernel = %self.name, "launch of a kernel whose module is being unloaded (hipModuleUnload)");
        HipError::INVALID_HANDLE
    }

    /// This kernel on `device`, loading its code object there on first use.
    #[inline(always)]
    pub fn kernel(&self, device: &Device) -> HipResult<&Arc<Kernel>> {
        let cell = self
            .kernels
            .get(device.index)
            .ok_or(HipError::INVALID_DEVICE)?;
        cell.get_or_init(|| {
            let loaded = self.image.load(device)?;
            loaded.kernel(device, self.name.as_bytes())?.ok_or_else(|| {
                tracing::error!(kernel = %self.name, "the code object has no such kernel");
                HipError::INVALID_DEVICE_FUNCTION
            })
        })
        .as_ref()
        .map_err(|e| *e)
    }
}

impl CodeImage {
    fn new(bytes: ImageBytes) -> Arc<CodeImage> {
        Arc::new(CodeImage {
            bytes,
            loaded: std::array::from_fn(|_| Mutex::new(None)),
            load_lock: Mutex::new(()),
            registered: Mutex::new(Vec::new()),
            managed: Mutex::new(Vec::new()),
            launches: AtomicU64::new(0),
        })
    }

    /// Starts an unload: no launch is admitted from now on, and those admitted before have
    /// been published when this returns (a submission waits for nothing but queue room).
    fn begin_unload(&self) {
        self.launches.fetch_or(UNLOADING, Ordering::AcqRel);
        // Acquire: pairs with each admission's release, so the work they queued is waited for.
        while self.launches.load(Ordering::Acquire) & !UNLOADING != 0 {
            std::thread::yield_now();
        }
    }

    /// An unload that did not happen (a fault reported while waiting): launches go on.
    fn cancel_unload(&self) {
        self.launches.fetch_and(!UNLOADING, Ordering::AcqRel);
    }

    /// This image loaded on `device`, loading it on first use.
    pub fn load(&self, device: &Device) -> HipResult<Arc<LoadedCodeObject>> {
        let slot = self
            .loaded
            .get(device.index)
            .ok_or(HipError::INVALID_DEVICE)?;
        if let Some(loaded) = slot.lock().as_ref() {
            return Ok(loaded.clone());
        }
        let _loading = self.load_lock.lock();
        if let Some(loaded) = slot.lock().as_ref() {
            return Ok(loaded.clone());
        }
        let loaded = Arc::new(load_for_device(&self.bytes, device)?);
        // Before any kernel of the image can run there.
        managed_var::bind_variables(device, &loaded.variables, &self.managed.lock())?;
        *slot.lock() = Some(loaded.clone());
        Ok(loaded)
    }

    /// Destroys what the image loaded on every device (after draining their work).
    /// Waits for the work of every one of `devices` the image is loaded on (work that may
    /// still run its code or use its variables).
    fn quiesce(&self, devices: &[Device]) -> HipResult {
        for (index, slot) in self.loaded.iter().enumerate() {
            if slot.lock().is_some() {
                if let Ok(device) = device::nth(devices, index) {
                    device.synchronize()?;
                }
            }
        }
        Ok(())
    }

    /// Destroys the loaded executables; the caller has quiesced the devices.
    fn unload(&self) -> HipResult {
        for slot in self.loaded.iter() {
            let Some(loaded) = slot.lock().take() else {
                continue;
            };
            for &(address, _) in loaded.variables.values() {
                memory::unregister_device_global(address);
            }
            // No queued work references the executable any more. A thread still holding the
            // loaded object (looking up a kernel) destroys it when it lets go.
            if let Ok(loaded) = Arc::try_unwrap(loaded) {
                if let Err(e) = loaded.executable.destroy() {
                    tracing::warn!(error = %e, "unloading a module failed");
                }
            }
        }
        Ok(())
    }
}

impl Drop for CodeImage {
    /// A registered fat binary goes away in `__hipUnregisterFatBinary`, as the program exits:
    /// what it loaded stays loaded (never destroyed), since work the program queued last may
    /// still run its code and the HSA runtime may already be shut down. A module's image
    /// was unloaded before it goes (`hipModuleUnload`).
    fn drop(&mut self) {
        if let ImageBytes::Registered(_) = self.bytes {
            for slot in &mut self.loaded {
                if let Some(loaded) = slot.get_mut().take() {
                    std::mem::forget(loaded);
                }
            }
        }
    }
}

const ELF_MAGIC: &[u8; 4] = b"\x7fELF";

/// Picks the code object of `image` for `device`: the image itself if it is an ELF code
/// object (indexed, to check its target), else the best bundle entry (not indexed yet).
fn code_object_for(
    image: &ImageBytes,
    device: &Device,
) -> HipResult<(Vec<u8>, Option<CodeObjectIndex>)> {
    let image = match image {
        ImageBytes::Owned(bytes) => bytes,
        ImageBytes::Registered(bundle) => {
            return Ok((
                select_entry(device, |isa| bundle.code_object_for(isa))?,
                None,
            ));
        }
    };
    if image.starts_with(ELF_MAGIC) {
        let info = CodeObjectIndex::new(image).map_err(|e| {
            tracing::error!(error = %e, "not a usable code object");
            HipError::INVALID_IMAGE
        })?;
        let target = TargetId::parse(&info.target).map_err(|_| HipError::INVALID_IMAGE)?;
        let fits = device
            .isas
            .iter()
            .filter_map(|isa| TargetId::parse(isa).ok())
            .any(|agent| target.runs_on(&agent));
        if !fits {
            tracing::error!(target = %info.target, device = device.index, isas = ?device.isas, "the code object is for another GPU");
            return Err(HipError::NO_BINARY_FOR_GPU);
        }
        return Ok((image.to_vec(), Some(info)));
    }
    let entries = code_object::parse_bundle(image).map_err(|e| {
        tracing::error!(error = %e, "cannot parse the offload bundle");
        HipError::INVALID_IMAGE
    })?;
    let elf = select_entry(device, |isa| {
        code_object::select_code_object(&entries, isa).map(|e| e.data.to_vec())
    })?;
    Ok((elf, None))
}

fn load_for_device(image: &ImageBytes, device: &Device) -> HipResult<LoadedCodeObject> {
    let (elf, index) = code_object_for(image, device)?;
    let index = match index {
        Some(index) => index,
        None => CodeObjectIndex::new(&elf).map_err(|e| {
            tracing::error!(error = %e, "cannot read the code object's metadata");
            HipError::INVALID_IMAGE
        })?,
    };
    let failed = |e: HsaError| {
        tracing::error!(error = %e, device = device.index, "loading the code object failed");
        HipError::from(e)
    };
    let reader = CodeObjectReader::new(device.api, &elf).map_err(failed)?;
    let executable = Executable::new(device.api).map_err(failed)?;
    executable.load(device.agent, &reader).map_err(failed)?;
    executable.freeze().map_err(failed)?;
    let variables = executable.variables().map_err(failed)?;
    // Not needed once loading is done (an early return above drops it with the executable).
    drop(reader);
    for &(address, size) in variables.values() {
        memory::register_device_global(address, size, device.index);
    }
    Ok(LoadedCodeObject {
        index,
        kernels: Mutex::new(HashMap::new()),
        agent: device.agent,
        device: device.index,
        variables,
        elf,
        executable,
    })
}

impl LoadedCodeObject {
    /// Whether the metadata lists the kernel `name`.
    pub fn has_kernel(&self, name: &[u8]) -> bool {
        self.index.has_kernel(name)
    }

    /// The kernel `name` (`None` when the metadata does not list it), looked up on first use:
    /// its metadata decoded, its descriptor found. Metadata that does not decode, or a listed
    /// kernel whose descriptor the executable lacks, is an inconsistent code object:
    /// `hipErrorInvalidImage`.
    pub fn kernel(&self, device: &Device, name: &[u8]) -> HipResult<Option<Arc<Kernel>>> {
        debug_assert_eq!(
            device.index, self.device,
            "the device this object is loaded on"
        );
        let mut kernels = self.kernels.lock();
        if let Some(kernel) = kernels.get(name) {
            return Ok(Some(kernel.clone()));
        }
        let info = match self.index.kernel(&self.elf, name) {
            Ok(Some(info)) => info,
            Ok(None) => return Ok(None),
            Err(e) => {
                tracing::error!(kernel = %String::from_utf8_lossy(name), error = %e, "cannot read the kernel's metadata");
                return Err(HipError::INVALID_IMAGE);
            }
        };
        let missing = |why: &dyn std::fmt::Display| {
            tracing::error!(kernel = %info.name, symbol = %info.symbol, "the code object's metadata lists a kernel whose descriptor it lacks: {why}");
            HipError::INVALID_IMAGE
        };
        let symbol_name = CString::new(info.symbol.clone())
            .map_err(|_| missing(&"the symbol name contains a NUL byte"))?;
        let kernel_object = self
            .executable
            .kernel_object(&symbol_name, self.agent)
            .map_err(|e| missing(&e))?;
        let mut layout = KernargLayout::new(&info).map_err(|e| {
            tracing::error!(kernel = %info.name, error = %e, "the kernel's metadata describes an impossible kernarg segment");
            HipError::INVALID_IMAGE
        })?;
        if layout.wants_hostcall_buffer() {
            layout.set_hostcall_buffer(hostcall::buffer_for(device)?);
        }
        tracing::debug!(kernel = %info.name, kernel_object = format_args!("{kernel_object:#x}"), "kernel loaded");
        let limits = crate::runtime::base::kernarg::LaunchLimits::new(
            &info,
            device.lds_bytes,
            device.info.max_grid_size,
        );
        let kernarg_slot =
            crate::hsa::queue::KernargSlot::for_segment(layout.size(), info.kernarg_align as usize);
        let kernel = Arc::new(Kernel {
            kernel_object,
            info,
            layout,
            limits,
            kernarg_slot,
        });
        kernels.insert(name.into(), kernel.clone());
        Ok(Some(kernel))
    }

    /// Looks up every kernel the metadata lists (what an explicit module load checks, so that
    /// a bad image fails there rather than at a launch).
    fn check_kernels(&self, device: &Device) -> HipResult {
        for name in self.index.kernel_names() {
            self.kernel(device, name)?;
        }
        Ok(())
    }
}

/// The code object `select` finds for one of this device's ISAs (tried in order), or
/// `hipErrorNoBinaryForGpu` naming what exists; an unusable bundle is
/// `hipErrorInvalidImage`.
fn select_entry(
    device: &Device,
    select: impl Fn(&str) -> Result<Vec<u8>, code_object::CodeObjectError>,
) -> HipResult<Vec<u8>> {
    let mut last_error = None;
    for isa in &device.isas {
        match select(isa) {
            Ok(code_object) => return Ok(code_object),
            // Not this ISA (or one whose name does not parse): try the next.
            Err(
                e @ (code_object::CodeObjectError::NoBinaryForGpu { .. }
                | code_object::CodeObjectError::InvalidTargetId(_)),
            ) => last_error = Some(e),
            Err(e) => {
                tracing::error!(error = %e, device = device.index, "unusable offload bundle");
                return Err(HipError::INVALID_IMAGE);
            }
        }
    }
    let message = match last_error {
        Some(e) => e.to_string(),
        None => format!("device {} reports no ISA", device.index),
    };
    tracing::error!(device = device.index, "{message}");
    eprintln!(
        "hipshim: no code object for device {} ({}): {message}",
        device.index, device.name
    );
    Err(HipError::NO_BINARY_FOR_GPU)
}

// ---------------------------------------------------------------------------------------
// Handles: fat binaries, hipModule_t, hipFunction_t (all in `runtime/base/handles.rs` tables)

/// Fat binaries registered by `__hipRegisterFatBinary`, by the handle it returned.
static FAT_BINARIES: HandleTable<FatBinary> = HandleTable::new("fat binary", 0xf0);

/// `__hipRegisterFatBinary` as a handle for the hooks that follow it.
///
/// # Safety
/// As [`register_fat_binary`].
pub unsafe fn register_fat_binary_handle(wrapper: *const c_void) -> HipResult<*mut *mut c_void> {
    // SAFETY: forwarded contract.
    let fat_binary = unsafe { register_fat_binary(wrapper) }?;
    Ok(FAT_BINARIES.insert(fat_binary) as *mut *mut c_void)
}

/// The fat binary a `__hipRegisterFatBinary` handle names.
pub fn fat_binary(handle: *mut *mut c_void) -> HipResult<Arc<FatBinary>> {
    FAT_BINARIES.get(handle as usize)
}

/// `__hipUnregisterFatBinary`.
pub fn unregister_fat_binary_handle(handle: *mut *mut c_void) -> HipResult {
    unregister_fat_binary(&FAT_BINARIES.remove(handle as usize)?);
    Ok(())
}

/// A module loaded by `hipModuleLoad*`, or the module behind a library (`hipLibraryLoad*`,
/// `runtime/kernel/library.rs`).
pub struct Module {
    image: Arc<CodeImage>,
    /// Function handles handed out for it, by kernel name (invalidated when it is unloaded).
    functions: Mutex<HashMap<Box<[u8]>, usize>>,
}

static MODULES: HandleTable<Module> = HandleTable::new("module", 0xa0);
static FUNCTION_HANDLES: HandleTable<Function> = HandleTable::new("function", 0xb0);

/// `hipModuleLoadData(Ex)`: `image` is an offload bundle or an ELF code object. Loaded on
/// `device` (the current device) now, on others at first use.
pub fn load_module(device: &Device, image: Vec<u8>) -> HipResult<*mut c_void> {
    let handle = MODULES.insert(Arc::new(Module::load(device, image)?));
    tracing::debug!(module = format_args!("{handle:#x}"), "module loaded");
    Ok(handle as *mut c_void)
}

impl Module {
    /// Loads `image` on `device` and looks up every kernel it lists, so that a bad image
    /// fails here rather than at a launch; other devices load it at first use.
    pub fn load(device: &Device, image: Vec<u8>) -> HipResult<Module> {
        let image = CodeImage::new(ImageBytes::Owned(image));
        image.load(device)?.check_kernels(device)?;
        Ok(Module {
            image,
            functions: Mutex::new(HashMap::new()),
        })
    }

    /// The names of the kernels its code object for `device` lists, in the metadata's order.
    pub fn kernel_names(&self, device: &Device) -> HipResult<Vec<Box<[u8]>>> {
        let loaded = self.image.load(device)?;
        Ok(loaded.index.kernel_names().map(Box::from).collect())
    }

    /// The function handle of its kernel `name`, loaded on `device`: one handle per name,
    /// the same on every call. A name the code object does not list is `None`.
    pub fn function_named(&self, device: &Device, name: &[u8]) -> HipResult<Option<usize>> {
        let loaded = self.image.load(device)?;
        if !loaded.has_kernel(name) {
            return Ok(None);
        }
        let mut functions = self.functions.lock();
        if let Some(&f) = functions.get(name) {
            return Ok(Some(f));
        }
        let kernel_name = KernelName::new(name.into());
        let f = FUNCTION_HANDLES.insert(Function::new(self.image.clone(), kernel_name));
        functions.insert(name.into(), f);
        Ok(Some(f))
    }

    /// Waits for the work of `devices` that may still run its code, then calls `end` (which
    /// ends the handle the program knows it by), ends its function handles and destroys what
    /// it loaded. A fault reported while waiting leaves it loaded, so calling again unloads it
    /// (a call that reports a fault has not done its own work).
    pub fn unload(&self, devices: &[Device], end: impl FnOnce() -> HipResult) -> HipResult {
        // From here launches of its kernels are refused, so the wait below is for the work
        // queued so far, not for whatever another thread keeps launching.
        self.image.begin_unload();
        if let Err(error) = self.image.quiesce(devices) {
            self.image.cancel_unload();
            return Err(error);
        }
        end()?;
        for (_, f) in self.functions.lock().drain() {
            // Already gone only if a concurrent unload of this module won; nothing to undo.
            let _ = FUNCTION_HANDLES.remove(f);
        }
        self.image.unload()
    }
}

/// `hipModuleLoad`: reads the file ([`read_image_file`]), then as [`load_module`].
pub fn load_module_file(device: &Device, path: &std::path::Path) -> HipResult<*mut c_void> {
    load_module(device, read_image_file(path)?)
}

/// The bytes of a code-object file (`hipModuleLoad`, `hipLibraryLoadFromFile`): a missing
/// file is `hipErrorFileNotFound`. Only regular files are read, and only as many bytes as
/// their size: opening a FIFO would block, and a device such as `/dev/zero` never ends.
pub fn read_image_file(path: &std::path::Path) -> HipResult<Vec<u8>> {
    use std::io::Read;
    let fail = |e: std::io::Error| {
        tracing::warn!(path = %path.display(), error = %e, "cannot read the code-object file");
        match e.kind() {
            std::io::ErrorKind::NotFound => HipError::FILE_NOT_FOUND,
            _ => HipError::INVALID_VALUE,
        }
    };
    let meta = std::fs::metadata(path).map_err(fail)?;
    if !meta.is_file() {
        tracing::warn!(path = %path.display(), file_type = ?meta.file_type(), "the code-object file is not a regular file");
        return Err(HipError::INVALID_VALUE);
    }
    if meta.len() == 0 {
        tracing::warn!(path = %path.display(), "the code-object file is empty");
        return Err(compat::empty_module_file());
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(meta.len()).read_to_end(&mut bytes))
        .map_err(fail)?;
    Ok(bytes)
}

/// `hipModuleLoadData(Ex)` of an image in memory: an ELF code object, an offload bundle or a
/// fat binary. The image has no length: its headers say how long it is, and bytes they claim
/// that are not readable memory make it `hipErrorInvalidImage` (`image_from_memory`).
///
/// # Safety
/// `image` is null or one of those forms (see `image_from_memory` for what is checked).
pub unsafe fn load_module_image(device: &Device, image: *const c_void) -> HipResult<*mut c_void> {
    // SAFETY: forwarded contract.
    load_module(device, unsafe { image_bytes(image) }?)
}

/// A copy of the code image at `image` (`hipModuleLoadData*`, `hipLibraryLoadData`), its
/// length read from its own headers; null is `hipErrorInvalidValue`.
///
/// # Safety
/// As [`load_module_image`].
pub unsafe fn image_bytes(image: *const c_void) -> HipResult<Vec<u8>> {
    if image.is_null() {
        return Err(HipError::INVALID_VALUE);
    }
    // SAFETY: forwarded contract.
    unsafe { code_object::image_from_memory(image) }.map_err(|e| {
        tracing::warn!(error = %e, "unusable code image");
        HipError::INVALID_IMAGE
    })
}

/// The live module a `hipModule_t` names.
pub fn module(handle: *mut c_void) -> HipResult<Arc<Module>> {
    MODULES.get(handle as usize)
}

/// `hipModuleUnload`: its function handles die with it, after the work of `devices`.
pub fn unload_module(devices: &[Device], handle: *mut c_void) -> HipResult {
    // As AMD's runtime: a null module is an invalid handle, any other that names no loaded
    // module (unloaded already, or made up) is not found.
    let live = if handle.is_null() {
        Err(HipError::INVALID_HANDLE)
    } else {
        module(handle).map_err(|_| HipError::NOT_FOUND)
    };
    live?.unload(devices, || MODULES.remove(handle as usize).map(drop))
}

/// `hipModuleGetFunctionCount`: how many kernels the module's code object for `device` (the
/// current device) lists.
pub fn module_function_count(device: &Device, module: &Module) -> HipResult<u32> {
    let count = module.image.load(device)?.index.kernel_names().count();
    Ok(u32::try_from(count).unwrap_or(u32::MAX))
}

/// `hipModuleGetFunction`: one handle per (module, name), reused on repeated calls; the
/// module is loaded on `device` (the current device).
pub fn module_get_function(device: &Device, module: &Module, name: &str) -> HipResult<*mut c_void> {
    match module.function_named(device, name.as_bytes())? {
        Some(f) => Ok(f as *mut c_void),
        None => {
            tracing::warn!(
                kernel = name,
                "hipModuleGetFunction: no such kernel in the module"
            );
            Err(HipError::NOT_FOUND)
        }
    }
}

/// `hipModuleGetGlobal`: (device address, size) of a module variable on `device` (the
/// current device).
pub fn module_get_global(
    device: &Device,
    module: &Module,
    name: &str,
) -> HipResult<(usize, usize)> {
    let loaded = module.image.load(device)?;
    loaded.variables.get(name).copied().ok_or_else(|| {
        tracing::warn!(name, "hipModuleGetGlobal: no such variable in the module");
        HipError::NOT_FOUND
    })
}

/// `hipGetFuncBySymbol`: the `hipFunction_t` of the kernel registered for a host stub; the
/// same handle on every call for the same stub.
pub fn function_handle_of_symbol(host_function: *const c_void) -> HipResult<*mut c_void> {
    static HANDLES: LazyLock<Mutex<HashMap<usize, usize>>> = LazyLock::new(Default::default);
    let function = host_function_checked(host_function)?;
    let mut handles = HANDLES.lock();
    if let Some(&handle) = handles.get(&(host_function as usize)) {
        // Still the function registered there (a fat binary registered again makes another).
        if FUNCTION_HANDLES
            .get(handle)
            .is_ok_and(|f| Arc::ptr_eq(&f, &function))
        {
            return Ok(handle as *mut c_void);
        }
    }
    let handle = FUNCTION_HANDLES.insert(function);
    handles.insert(host_function as usize, handle);
    Ok(handle as *mut c_void)
}

/// The function behind a `hipFunction_t`.
pub fn function_handle(handle: *mut c_void) -> HipResult<Arc<Function>> {
    FUNCTION_HANDLES.get(handle as usize)
}

// ---------------------------------------------------------------------------------------
// Device symbols (`__device__` / `__constant__` variables registered by __hipRegisterVar)

/// The device range `[symbol + offset, + size)` on `device` (the current device), checked
/// against the variable's size.
fn symbol_range(
    device: &Device,
    symbol: *const c_void,
    offset: usize,
    size: usize,
) -> HipResult<usize> {
    let (address, bytes) = symbol_on_device(device, symbol)?;
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

/// Which way a symbol copy goes.
#[derive(Clone, Copy)]
pub enum Towards {
    /// From `other` (host or device memory) into the symbol.
    Symbol,
    /// From the symbol into `other`.
    Host,
}

/// The device address on `device` (the current device) a symbol copy of `size` bytes at
/// `offset` reaches, after checking the kind for the direction and the range against the
/// variable (also for the graph nodes that copy to or from a symbol).
pub fn symbol_target(
    device: &Device,
    towards: Towards,
    symbol: *const c_void,
    size: usize,
    offset: usize,
    kind: CopyKind,
) -> HipResult<usize> {
    let allowed = match towards {
        Towards::Symbol => CopyKind::HostToDevice,
        Towards::Host => CopyKind::DeviceToHost,
    };
    if !matches!(kind, CopyKind::DeviceToDevice | CopyKind::Default) && kind != allowed {
        return Err(HipError::INVALID_MEMCPY_DIRECTION);
    }
    symbol_range(device, symbol, offset, size)
}

/// Every hipMemcpy{To,From}Symbol{,Async}{,_spt}: checks the kind for the direction,
/// resolves the symbol's range on `device` (the current device), then copies synchronously
/// (`stream` None) or on `stream`.
///
/// # Safety
/// HIP's contract: the non-symbol side is valid for `size` bytes (until the copy completes,
/// for the stream-ordered forms).
#[allow(clippy::too_many_arguments)]
pub unsafe fn symbol_copy(
    devices: copy::Devices<'static>,
    towards: Towards,
    symbol: *const c_void,
    other: *mut c_void,
    size: usize,
    offset: usize,
    kind: CopyKind,
    stream: Option<*mut c_void>,
) -> HipResult {
    let device = devices.current?;
    let at = symbol_target(device, towards, symbol, size, offset, kind)? as *mut c_void;
    let (dst, src) = match towards {
        Towards::Symbol => (at, other as *const c_void),
        Towards::Host => (other, at as *const c_void),
    };
    // SAFETY: the caller's contract covers `other`; `at` was checked against the symbol's
    // registered size.
    unsafe {
        match stream {
            None => copy::memcpy(devices, copy::CopyRequest::linear(dst, src, size, kind)),
            Some(stream) => copy::memcpy_async(
                devices,
                copy::CopyRequest::linear(dst, src, size, kind),
                stream,
            ),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Function attributes

/// `hipFuncAttributes` (same layout in ROCm 5 and 6), 56 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FuncAttributes {
    pub binary_version: i32,
    pub cache_mode_ca: i32,
    pub const_size_bytes: usize,
    pub local_size_bytes: usize,
    pub max_dynamic_shared_size_bytes: i32,
    pub max_threads_per_block: i32,
    pub num_regs: i32,
    pub preferred_shmem_carveout: i32,
    pub ptx_version: i32,
    pub shared_size_bytes: usize,
}

const _: () = {
    assert!(std::mem::size_of::<FuncAttributes>() == 56);
    assert!(std::mem::offset_of!(FuncAttributes, const_size_bytes) == 8);
    assert!(std::mem::offset_of!(FuncAttributes, local_size_bytes) == 16);
    assert!(std::mem::offset_of!(FuncAttributes, max_dynamic_shared_size_bytes) == 24);
    assert!(std::mem::offset_of!(FuncAttributes, ptx_version) == 40);
    assert!(std::mem::offset_of!(FuncAttributes, shared_size_bytes) == 48);
};

/// `hipFunction_attribute` values.
mod func_attr {
    pub const MAX_THREADS_PER_BLOCK: u32 = 0;
    pub const SHARED_SIZE_BYTES: u32 = 1;
    pub const CONST_SIZE_BYTES: u32 = 2;
    pub const LOCAL_SIZE_BYTES: u32 = 3;
    pub const NUM_REGS: u32 = 4;
    pub const PTX_VERSION: u32 = 5;
    pub const BINARY_VERSION: u32 = 6;
    pub const CACHE_MODE_CA: u32 = 7;
    pub const MAX_DYNAMIC_SHARED_SIZE_BYTES: u32 = 8;
    pub const PREFERRED_SHARED_MEMORY_CARVEOUT: u32 = 9;
}

impl Function {
    /// `hipFuncGetAttributes` of this kernel on `device`.
    pub fn attributes(&self, device: &Device) -> HipResult<FuncAttributes> {
        let info = &self.kernel(device)?.info;
        // AMD reports the ISA version (major * 10 + minor) as both versions.
        let version = device.info.major * 10 + device.info.minor;
        Ok(FuncAttributes {
            binary_version: version,
            cache_mode_ca: 0,
            const_size_bytes: 0,
            local_size_bytes: info.private_segment_fixed_size as usize,
            max_dynamic_shared_size_bytes: device
                .lds_bytes
                .saturating_sub(info.group_segment_fixed_size)
                as i32,
            max_threads_per_block: match info.max_flat_workgroup_size {
                0 => 1024,
                n => n.min(1024) as i32,
            },
            num_regs: info.vgpr_count as i32,
            preferred_shmem_carveout: 0,
            ptx_version: version,
            shared_size_bytes: info.group_segment_fixed_size as usize,
        })
    }

    /// `hipFuncGetAttribute`: one `hipFunction_attribute` of this kernel on `device`.
    pub fn attribute(&self, device: &Device, attribute: u32) -> HipResult<i32> {
        use func_attr::*;
        let a = self.attributes(device)?;
        Ok(match attribute {
            MAX_THREADS_PER_BLOCK => a.max_threads_per_block,
            SHARED_SIZE_BYTES => a.shared_size_bytes as i32,
            CONST_SIZE_BYTES => a.const_size_bytes as i32,
            LOCAL_SIZE_BYTES => a.local_size_bytes as i32,
            NUM_REGS => a.num_regs,
            PTX_VERSION => a.ptx_version,
            BINARY_VERSION => a.binary_version,
            CACHE_MODE_CA => a.cache_mode_ca,
            MAX_DYNAMIC_SHARED_SIZE_BYTES => a.max_dynamic_shared_size_bytes,
            PREFERRED_SHARED_MEMORY_CARVEOUT => a.preferred_shmem_carveout,
            _ => return Err(HipError::INVALID_VALUE),
        })
    }
}

/// The registered kernel behind a host function pointer (`hipFuncGetAttributes`, the
/// occupancy calls): null or unregistered is `hipErrorInvalidDeviceFunction`.
pub fn host_function(func: *const c_void) -> HipResult<Arc<Function>> {
    if func.is_null() {
        return Err(HipError::INVALID_DEVICE_FUNCTION);
    }
    function(func as usize)
}

/// [`host_function`], saying in the log what was wrong.
fn host_function_checked(func: *const c_void) -> HipResult<Arc<Function>> {
    host_function(func).inspect_err(|_| {
        tracing::warn!(
            function = format_args!("{func:p}"),
            "not the host stub of a registered kernel"
        )
    })
}

/// `hipFuncSetAttribute`: AMD's devices have no L1/LDS split to choose and take any dynamic
/// LDS the device has, so a valid setting changes nothing; an invalid one is
/// `hipErrorInvalidValue`, as in AMD's runtime. Valid: up to the LDS the kernel leaves free
/// for `hipFuncAttributeMaxDynamicSharedMemorySize`, -1 (default) to 100 percent for
/// `hipFuncAttributePreferredSharedMemoryCarveout`.
/// The kernel's limits are those on `device` (the current device).
pub fn set_function_attribute(
    device: &Device,
    func: *const c_void,
    attribute: u32,
    value: i32,
) -> HipResult {
    let function = host_function_checked(func)?;
    let valid = match attribute {
        func_attr::MAX_DYNAMIC_SHARED_SIZE_BYTES => {
            let free = function.attributes(device)?.max_dynamic_shared_size_bytes;
            (0..=free).contains(&value)
        }
        func_attr::PREFERRED_SHARED_MEMORY_CARVEOUT => (-1..=100).contains(&value),
        _ => false,
    };
    if !valid {
        tracing::warn!(
            kernel = %function.name,
            attribute,
            value,
            "hipFuncSetAttribute: unknown attribute or value out of range"
        );
        return Err(HipError::INVALID_VALUE);
    }
    Ok(())
}

/// `hipFuncSetCacheConfig` (a `hipFuncCache_t`, 0-3) and `hipFuncSetSharedMemConfig` (a
/// `hipSharedMemConfig`, 0-2): accepted and without effect on AMD's devices, as in AMD's
/// runtime; another value is `hipErrorInvalidValue`.
pub fn set_function_config(func: *const c_void, value: u32, values: u32, what: &str) -> HipResult {
    let function = host_function_checked(func)?;
    if value >= values {
        tracing::warn!(kernel = %function.name, value, "{what}: not a valid setting");
        return Err(HipError::INVALID_VALUE);
    }
    Ok(())
}

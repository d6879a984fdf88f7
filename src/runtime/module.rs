//! Code registered by the program at start-up (`__hipRegisterFatBinary`,
//! `__hipRegisterFunction`) and loaded onto a device lazily, on the first launch there.

use super::code_object::{self, BundleEntry, KernelInfo};
use super::device::{runtime_error, Device};
use crate::error::{HipError, HipResult};
use crate::hsa;
use dashmap::DashMap;
use hsa_abi::*;
use once_cell::sync::OnceCell;
use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::sync::Arc;

/// Devices a process can address; per-device state lives in fixed arrays of this length.
pub const MAX_DEVICES: usize = 16;

/// One `__hipRegisterFatBinary` call: the bundle, and what it loaded on each device.
pub struct FatBinary {
    bundle: &'static [u8],
    loaded: [OnceCell<Result<Arc<LoadedCodeObject>, HipError>>; MAX_DEVICES],
}

/// A code object loaded into an HSA executable on one device.
pub struct LoadedCodeObject {
    pub kernels: HashMap<String, Arc<Kernel>>,
    /// Kept alive for the executable: ROCr may reference the code object bytes after loading.
    _elf: Vec<u8>,
    _executable: hsa_executable_t,
}

/// A kernel ready to dispatch on one device.
pub struct Kernel {
    pub kernel_object: u64,
    pub info: KernelInfo,
}

/// One `__hipRegisterFunction` call: a host-side handle for a kernel of a fat binary.
pub struct Function {
    pub name: String,
    fat_binary: Arc<FatBinary>,
    kernels: [OnceCell<Result<Arc<Kernel>, HipError>>; MAX_DEVICES],
}

/// Registered kernels by the host address clang passes to `hipLaunchKernel`.
static FUNCTIONS: once_cell::sync::Lazy<DashMap<usize, Arc<Function>>> =
    once_cell::sync::Lazy::new(DashMap::new);

/// `__hipRegisterFatBinary`: remembers the bundle; nothing is parsed or loaded until a
/// kernel of it is launched (start-up must stay cheap and must not touch the GPU).
///
/// # Safety
/// `wrapper` must be null or point to the fat-binary wrapper clang emits.
pub unsafe fn register_fat_binary(wrapper: *const c_void) -> HipResult<Arc<FatBinary>> {
    // SAFETY: forwarded from the caller's contract.
    let bundle = unsafe { code_object::bundle_from_wrapper(wrapper) }.map_err(|e| {
        tracing::error!(error = %e, "__hipRegisterFatBinary: unusable fat binary");
        HipError::INVALID_IMAGE
    })?;
    tracing::debug!(bytes = bundle.len(), "fat binary registered");
    Ok(Arc::new(FatBinary {
        bundle,
        loaded: std::array::from_fn(|_| OnceCell::new()),
    }))
}

pub fn register_function(fat_binary: Arc<FatBinary>, host_function: usize, name: String) {
    tracing::debug!(%name, host_function = format_args!("{host_function:#x}"), "kernel registered");
    FUNCTIONS.insert(
        host_function,
        Arc::new(Function {
            name,
            fat_binary,
            kernels: std::array::from_fn(|_| OnceCell::new()),
        }),
    );
}

/// `__hipUnregisterFatBinary`: forget its kernels. Executables stay loaded until exit, as
/// the program is shutting down and queued work may still reference them.
pub fn unregister_fat_binary(fat_binary: &Arc<FatBinary>) {
    FUNCTIONS.retain(|_, f| !Arc::ptr_eq(&f.fat_binary, fat_binary));
}

pub fn function(host_function: usize) -> HipResult<Arc<Function>> {
    FUNCTIONS
        .get(&host_function)
        .map(|f| f.value().clone())
        .ok_or(HipError::INVALID_DEVICE_FUNCTION)
}

impl Function {
    /// This kernel on `device`, loading its code object there on first use.
    pub fn kernel(&self, device: &Device) -> HipResult<&Arc<Kernel>> {
        let cell = self
            .kernels
            .get(device.index)
            .ok_or(HipError::INVALID_DEVICE)?;
        cell.get_or_init(|| {
            let loaded = self.fat_binary.load(device)?;
            loaded.kernels.get(&self.name).cloned().ok_or_else(|| {
                tracing::error!(kernel = %self.name, "the code object has no such kernel");
                HipError::INVALID_DEVICE_FUNCTION
            })
        })
        .as_ref()
        .map_err(|e| *e)
    }
}

impl FatBinary {
    fn load(&self, device: &Device) -> HipResult<Arc<LoadedCodeObject>> {
        let cell = self
            .loaded
            .get(device.index)
            .ok_or(HipError::INVALID_DEVICE)?;
        cell.get_or_init(|| load_for_device(self.bundle, device).map(Arc::new))
            .clone()
    }
}

fn load_for_device(bundle: &[u8], device: &Device) -> HipResult<LoadedCodeObject> {
    let entries = code_object::parse_bundle(bundle).map_err(|e| {
        tracing::error!(error = %e, "cannot parse the offload bundle");
        HipError::INVALID_IMAGE
    })?;
    let entry = select_entry(&entries, device)?;
    let elf = entry.data.to_vec();
    let info = code_object::read_code_object(&elf).map_err(|e| {
        tracing::error!(error = %e, "cannot read the code object's metadata");
        HipError::INVALID_IMAGE
    })?;
    let api = device.api;
    let hsa_err = |e: hsa::HsaError| {
        tracing::error!(error = %e, device = device.index, "loading the code object failed");
        match e.status {
            status::ERROR_INVALID_ISA | status::ERROR_INVALID_CODE_OBJECT => {
                HipError::INVALID_IMAGE
            }
            _ => runtime_error(e),
        }
    };
    let mut reader = hsa_code_object_reader_t::default();
    // SAFETY: `elf` outlives the reader and the executable (kept in LoadedCodeObject).
    let status = unsafe {
        (api.hsa_code_object_reader_create_from_memory)(
            elf.as_ptr() as *const c_void,
            elf.len(),
            &mut reader,
        )
    };
    hsa::check("hsa_code_object_reader_create_from_memory", status).map_err(hsa_err)?;
    let mut executable = hsa_executable_t::default();
    // SAFETY: valid out-pointer; null options.
    let status = unsafe {
        (api.hsa_executable_create_alt)(
            HSA_PROFILE_FULL,
            HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
            std::ptr::null(),
            &mut executable,
        )
    };
    hsa::check("hsa_executable_create_alt", status).map_err(hsa_err)?;
    // SAFETY: executable and reader are live; null options and no loaded-object handle.
    let status = unsafe {
        (api.hsa_executable_load_agent_code_object)(
            executable,
            device.agent,
            reader,
            std::ptr::null(),
            std::ptr::null_mut(),
        )
    };
    hsa::check("hsa_executable_load_agent_code_object", status).map_err(hsa_err)?;
    // SAFETY: the executable is live; null options.
    let status = unsafe { (api.hsa_executable_freeze)(executable, std::ptr::null()) };
    hsa::check("hsa_executable_freeze", status).map_err(hsa_err)?;
    // SAFETY: the reader is no longer needed once the executable is frozen.
    unsafe { (api.hsa_code_object_reader_destroy)(reader) };

    let mut kernels = HashMap::new();
    for kernel in info.kernels {
        let symbol_name =
            CString::new(kernel.symbol.clone()).map_err(|_| HipError::INVALID_IMAGE)?;
        let mut symbol = hsa_executable_symbol_t::default();
        // SAFETY: NUL-terminated name, live executable, valid agent and out-pointer.
        let status = unsafe {
            (api.hsa_executable_get_symbol_by_name)(
                executable,
                symbol_name.as_ptr(),
                &device.agent,
                &mut symbol,
            )
        };
        hsa::check("hsa_executable_get_symbol_by_name", status).map_err(hsa_err)?;
        let mut kernel_object: u64 = 0;
        // SAFETY: KERNEL_OBJECT is a u64 attribute.
        let status = unsafe {
            (api.hsa_executable_symbol_get_info)(
                symbol,
                symbol_info::KERNEL_OBJECT,
                &mut kernel_object as *mut u64 as *mut c_void,
            )
        };
        hsa::check("hsa_executable_symbol_get_info(KERNEL_OBJECT)", status).map_err(hsa_err)?;
        tracing::debug!(kernel = %kernel.name, kernel_object = format_args!("{kernel_object:#x}"), "kernel loaded");
        kernels.insert(
            kernel.name.clone(),
            Arc::new(Kernel {
                kernel_object,
                info: kernel,
            }),
        );
    }
    Ok(LoadedCodeObject {
        kernels,
        _elf: elf,
        _executable: executable,
    })
}

/// The bundle entry for this device's ISA, or `hipErrorNoBinaryForGpu` naming what exists.
fn select_entry<'e, 'a>(
    entries: &'e [BundleEntry<'a>],
    device: &Device,
) -> HipResult<&'e BundleEntry<'a>> {
    let mut last_error = None;
    for isa in &device.isas {
        match code_object::select_code_object(entries, isa) {
            Ok(entry) => return Ok(entry),
            Err(e) => last_error = Some(e),
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

//! Libraries (`hipLibrary_t`, HIP's counterpart of CUDA's `cuLibrary*` calls) and their
//! kernels (`hipKernel_t`).
//!
//! A library is a [`Module`] the program names by a library handle instead of a module
//! handle: loaded on the current device when it is loaded (so a bad image fails there, as
//! `hipModuleLoadData` does), and on any other device at first use there. A `hipKernel_t` is
//! a `hipFunction_t` handle of that module: AMD's runtime makes a library's kernel by the
//! same path as `hipModuleGetFunction`, and programs written for it cast one to the other
//! (to launch it with `hipModuleLaunchKernel`, to read it with `hipFuncGetAttribute`), so
//! here too a kernel handle works wherever a function handle does, and dies with its library.

use super::module::{self, Module};
use crate::error::{HipError, HipResult};
use crate::runtime::base::handles::{AddressMap, HandleTable};
use crate::runtime::devices::device::Device;
use std::ffi::{c_void, CStr};
use std::sync::{Arc, LazyLock};

/// A library loaded by `hipLibraryLoadData` or `hipLibraryLoadFromFile`.
pub struct Library {
    module: Module,
}

static LIBRARIES: HandleTable<Library> = HandleTable::new("library", 0xa0);

/// The library each kernel handle handed out by a library belongs to (kernel handle →
/// library handle): what tells a library's kernel from a module's function.
static KERNEL_LIBRARIES: LazyLock<AddressMap<usize>> = LazyLock::new(AddressMap::default);

/// `hipLibraryLoadData` / `hipLibraryLoadFromFile` of `image` (an ELF code object or an
/// offload bundle), loaded on `device` (the current device) now.
pub fn load_library(device: &Device, image: Vec<u8>) -> HipResult<*mut c_void> {
    let module = Module::load(device, image)?;
    let handle = LIBRARIES.insert(Arc::new(Library { module }));
    tracing::debug!(library = format_args!("{handle:#x}"), "library loaded");
    Ok(handle as *mut c_void)
}

/// The live library a `hipLibrary_t` names: null is `hipErrorInvalidValue` (AMD's answer),
/// anything else that names no loaded library `hipErrorInvalidHandle`.
pub fn library(handle: *mut c_void) -> HipResult<Arc<Library>> {
    if handle.is_null() {
        tracing::warn!("null library handle");
        return Err(HipError::INVALID_VALUE);
    }
    LIBRARIES.get(handle as usize)
}

/// `hipLibraryUnload`: its kernel handles die with it, after the work of `devices`. A null
/// handle, or one that names no loaded library, is `hipErrorInvalidHandle`.
pub fn unload_library(devices: &[Device], handle: *mut c_void) -> HipResult {
    if handle.is_null() {
        tracing::warn!("hipLibraryUnload of a null library");
        return Err(HipError::INVALID_HANDLE);
    }
    let library = LIBRARIES.get(handle as usize)?;
    library.module.unload(devices, || {
        LIBRARIES.remove(handle as usize)?;
        KERNEL_LIBRARIES.retain(|_, of| *of != handle as usize);
        Ok(())
    })
}

impl Library {
    /// `hipLibraryGetKernelCount`: the kernels its code object for `device` lists.
    pub fn kernel_count(&self, device: &Device) -> HipResult<u32> {
        let count = self.module.kernel_names(device)?.len();
        Ok(u32::try_from(count).unwrap_or(u32::MAX))
    }

    /// `hipLibraryGetKernel`: the kernel handle of `name`, the same on every call; a name the
    /// library has no kernel of is `hipErrorNotFound`.
    pub fn kernel(
        &self,
        device: &Device,
        handle: *mut c_void,
        name: &CStr,
    ) -> HipResult<*mut c_void> {
        match self.module.function_named(device, name.to_bytes())? {
            Some(kernel) => Ok(self.kernel_handle(handle, kernel)),
            None => {
                tracing::warn!(kernel = %name.to_string_lossy(), "hipLibraryGetKernel: no such kernel in the library");
                Err(HipError::NOT_FOUND)
            }
        }
    }

    /// `hipLibraryEnumerateKernels`: the handles of its first `out.len()` kernels, in the
    /// code object's order (all of them when `out` has room; never more than it has room
    /// for). Returns how many were written.
    pub fn enumerate(
        &self,
        device: &Device,
        handle: *mut c_void,
        out: &mut [*mut c_void],
    ) -> HipResult<usize> {
        let names = self.module.kernel_names(device)?;
        let mut written = 0;
        for (slot, name) in out.iter_mut().zip(&names) {
            let Some(kernel) = self.module.function_named(device, name)? else {
                // The names came from this very code object.
                return Err(HipError::INVALID_IMAGE);
            };
            *slot = self.kernel_handle(handle, kernel);
            written += 1;
        }
        Ok(written)
    }

    fn kernel_handle(&self, library: *mut c_void, kernel: usize) -> *mut c_void {
        KERNEL_LIBRARIES.insert(kernel, library as usize);
        kernel as *mut c_void
    }
}

/// The library a `hipKernel_t` belongs to (`hipKernelGetLibrary`), and its function. Null is
/// `hipErrorInvalidValue`; a handle that is no live library kernel (unloaded, made up, or a
/// module's `hipFunction_t`) is `hipErrorInvalidHandle`.
pub fn kernel_library(kernel: *mut c_void) -> HipResult<(*mut c_void, Arc<module::Function>)> {
    if kernel.is_null() {
        tracing::warn!("null kernel handle");
        return Err(HipError::INVALID_VALUE);
    }
    let function = module::function_handle(kernel)?;
    let library = KERNEL_LIBRARIES
        .get(&(kernel as usize))
        .map(|l| *l.value())
        .filter(|&l| LIBRARIES.get(l).is_ok())
        .ok_or_else(|| {
            tracing::warn!(
                kernel = format_args!("{kernel:p}"),
                "not a kernel of a loaded library"
            );
            HipError::INVALID_HANDLE
        })?;
    Ok((library as *mut c_void, function))
}

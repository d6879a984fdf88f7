//! Libraries and their kernels: `hipLibrary*`, `hipKernelGet*` (`runtime/kernel/library.rs`).

use super::convert::Out;
use super::declare::hip_api;
use super::types::{hipError_t, hipKernel_t, hipLibrary_t};
use crate::error::{HipError, HipResult};
use crate::runtime;
use crate::runtime::kernel::library;
use crate::runtime::kernel::module;
use std::ffi::{c_char, c_void, CStr};

/// AMD's runtime has no JIT for libraries and refuses JIT options (`hipErrorInvalidValue`);
/// library options are hints about the program's copy of the image and its host tables,
/// which hipshim does not use (it copies the image), so they are accepted and ignored.
fn refuse_jit_options(count: u32) -> HipResult {
    if count > 0 {
        tracing::warn!(
            count,
            "JIT options for a library: hipshim loads finished code objects only"
        );
        return Err(HipError::INVALID_VALUE);
    }
    Ok(())
}

hip_api! {
    /// Loaded on the current device now (a bad image fails here), on others at first use.
    fn hipLibraryLoadData(
        library: *mut hipLibrary_t => Out<hipLibrary_t>,
        code: *const c_void,
        _jit_options: *mut u32,
        _jit_option_values: *mut *mut c_void,
        num_jit_options: u32,
        _library_options: *mut u32,
        _library_option_values: *mut *mut c_void,
        _num_library_options: u32,
    ) -> hipError_t {
        refuse_jit_options(num_jit_options)?;
        // SAFETY: HIP's contract for `code`: null or a code image (its headers give its length).
        let image = unsafe { module::image_bytes(code) }?;
        library.write(library::load_library(runtime::current_device()?, image)?)
    }

    /// A file that cannot be read is `hipErrorInvalidValue`, AMD's answer (not
    /// `hipModuleLoad`'s `hipErrorFileNotFound`).
    fn hipLibraryLoadFromFile(
        library: *mut hipLibrary_t => Out<hipLibrary_t>,
        file_name: *const c_char => &str,
        _jit_options: *mut u32,
        _jit_option_values: *mut *mut c_void,
        num_jit_options: u32,
        _library_options: *mut u32,
        _library_option_values: *mut *mut c_void,
        _num_library_options: u32,
    ) -> hipError_t {
        refuse_jit_options(num_jit_options)?;
        let image = module::read_image_file(std::path::Path::new(file_name)).map_err(|e| match e {
            HipError::FILE_NOT_FOUND => HipError::INVALID_VALUE,
            other => other,
        })?;
        library.write(library::load_library(runtime::current_device()?, image)?)
    }

    fn hipLibraryUnload(library: hipLibrary_t) -> hipError_t {
        library::unload_library(runtime::devices()?, library)
    }

    /// A name the library has no kernel of is `hipErrorNotFound`.
    fn hipLibraryGetKernel(
        kernel: *mut hipKernel_t => Out<hipKernel_t>,
        library: hipLibrary_t,
        name: *const c_char => &CStr,
    ) -> hipError_t {
        let lib = library::library(library)?;
        kernel.write(lib.kernel(runtime::current_device()?, library, name)?)
    }

    fn hipLibraryGetKernelCount(count: *mut u32 => Out<u32>, library: hipLibrary_t) -> hipError_t {
        count.write(library::library(library)?.kernel_count(runtime::current_device()?)?)
    }

    /// Writes at most `num_kernels` handles (fewer when the library has fewer kernels); a
    /// smaller array gets the first kernels, as AMD's runtime does.
    fn hipLibraryEnumerateKernels(
        kernels: *mut hipKernel_t,
        num_kernels: u32,
        library: hipLibrary_t,
    ) -> hipError_t {
        // Null even with room for none: AMD's runtime checks the array first.
        if kernels.is_null() {
            tracing::warn!("hipLibraryEnumerateKernels: null kernel array");
            return Err(HipError::INVALID_VALUE);
        }
        let lib = library::library(library)?;
        let device = runtime::current_device()?;
        let room = (num_kernels as usize).min(lib.kernel_count(device)? as usize);
        if room == 0 {
            return Ok(());
        }
        // SAFETY: HIP's contract: `kernels` has room for `num_kernels` handles, and `room` is
        // no more than that.
        let out = unsafe { std::slice::from_raw_parts_mut(kernels, room) };
        lib.enumerate(device, library, out).map(drop)
    }

    fn hipKernelGetLibrary(library: *mut hipLibrary_t => Out<hipLibrary_t>, kernel: hipKernel_t) -> hipError_t {
        library.write(library::kernel_library(kernel)?.0)
    }

    /// The name lives as long as the kernel's library is loaded.
    fn hipKernelGetName(name: *mut *const c_char => Out<*const c_char>, kernel: hipKernel_t) -> hipError_t {
        let (_, function) = library::kernel_library(kernel)?;
        // The function handle lives until the library is unloaded, and its name with it.
        name.write(function.c_name().as_ptr())
    }
}

#[cfg(not(test))]
include!(concat!(env!("OUT_DIR"), "/symver_library.rs"));

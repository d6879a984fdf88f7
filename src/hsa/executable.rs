//! Code objects loaded by the HSA runtime: a [`CodeObjectReader`] over the bytes of one code
//! object, and the [`Executable`] it is loaded into for an agent, frozen, then asked for its
//! kernels and variables. Both are destroyed when dropped.

use super::callback;
use super::{check, HsaApi, HsaError};
use hsa_abi::*;
use std::collections::HashMap;
use std::ffi::{c_void, CStr};
use std::marker::PhantomData;

/// A reader over a code object's bytes (borrowed: the runtime reads them until the reader is
/// destroyed).
pub struct CodeObjectReader<'a> {
    api: &'static HsaApi,
    raw: hsa_code_object_reader_t,
    _bytes: PhantomData<&'a [u8]>,
}

impl<'a> CodeObjectReader<'a> {
    pub fn new(api: &'static HsaApi, bytes: &'a [u8]) -> Result<CodeObjectReader<'a>, HsaError> {
        let mut raw = hsa_code_object_reader_t::default();
        // SAFETY: `bytes` outlives the reader (the lifetime says so); `raw` is a valid
        // out-pointer.
        let status = unsafe {
            (api.hsa_code_object_reader_create_from_memory)(
                bytes.as_ptr() as *const c_void,
                bytes.len(),
                &mut raw,
            )
        };
        check("hsa_code_object_reader_create_from_memory", status)?;
        Ok(CodeObjectReader {
            api,
            raw,
            _bytes: PhantomData,
        })
    }
}

impl Drop for CodeObjectReader<'_> {
    fn drop(&mut self) {
        // SAFETY: created by `new` and destroyed once, here. An executable that loaded from it
        // no longer needs it.
        unsafe { (self.api.hsa_code_object_reader_destroy)(self.raw) };
    }
}

/// An HSA executable: code objects loaded for agents, with their kernels and variables.
/// Destroying it frees its code and variables on the device, so it must outlive every
/// dispatch of its kernels.
pub struct Executable {
    api: &'static HsaApi,
    raw: hsa_executable_t,
}

// SAFETY: an executable is a process-wide runtime object; the HSA calls made on it here are
// thread-safe.
unsafe impl Send for Executable {}
// SAFETY: as above.
unsafe impl Sync for Executable {}

impl Executable {
    /// An empty executable (full profile, default rounding).
    pub fn new(api: &'static HsaApi) -> Result<Executable, HsaError> {
        let mut raw = hsa_executable_t::default();
        // SAFETY: valid out-pointer; null options.
        let status = unsafe {
            (api.hsa_executable_create_alt)(
                HSA_PROFILE_FULL,
                HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
                std::ptr::null(),
                &mut raw,
            )
        };
        check("hsa_executable_create_alt", status)?;
        Ok(Executable { api, raw })
    }

    /// Loads the code object `reader` reads, for `agent`.
    pub fn load(&self, agent: hsa_agent_t, reader: &CodeObjectReader) -> Result<(), HsaError> {
        // SAFETY: the executable and reader are live; null options and no loaded-object
        // handle.
        let status = unsafe {
            (self.api.hsa_executable_load_agent_code_object)(
                self.raw,
                agent,
                reader.raw,
                std::ptr::null(),
                std::ptr::null_mut(),
            )
        };
        check("hsa_executable_load_agent_code_object", status)
    }

    /// Freezes the executable: its code and variables are final, its symbols can be queried.
    pub fn freeze(&self) -> Result<(), HsaError> {
        // SAFETY: the executable is live; null options.
        let status = unsafe { (self.api.hsa_executable_freeze)(self.raw, std::ptr::null()) };
        check("hsa_executable_freeze", status)
    }

    /// The kernel object (the address of the kernel descriptor a dispatch names) of the kernel
    /// symbol `symbol` for `agent`.
    pub fn kernel_object(&self, symbol: &CStr, agent: hsa_agent_t) -> Result<u64, HsaError> {
        let mut found = hsa_executable_symbol_t::default();
        // SAFETY: NUL-terminated name, live executable, valid agent and out-pointer.
        let status = unsafe {
            (self.api.hsa_executable_get_symbol_by_name)(
                self.raw,
                symbol.as_ptr(),
                &agent,
                &mut found,
            )
        };
        check("hsa_executable_get_symbol_by_name", status)?;
        let mut kernel_object: u64 = 0;
        // SAFETY: KERNEL_OBJECT is a u64 attribute.
        let status = unsafe {
            (self.api.hsa_executable_symbol_get_info)(
                found,
                symbol_info::KERNEL_OBJECT,
                &mut kernel_object as *mut u64 as *mut c_void,
            )
        };
        check("hsa_executable_symbol_get_info(KERNEL_OBJECT)", status)?;
        Ok(kernel_object)
    }

    /// Every variable symbol of the frozen executable: name -> (address, size).
    pub fn variables(&self) -> Result<HashMap<String, (usize, usize)>, HsaError> {
        struct Ctx {
            api: &'static HsaApi,
            found: HashMap<String, (usize, usize)>,
        }
        unsafe extern "C" fn visit(
            exec: hsa_executable_t,
            symbol: hsa_executable_symbol_t,
            data: *mut c_void,
        ) -> hsa_status_t {
            // SAFETY: forwarded from the HSA runtime's call.
            callback::guarded("the symbol iteration callback", status::ERROR, || unsafe {
                visit_symbol(exec, symbol, data)
            })
        }
        unsafe fn visit_symbol(
            _exec: hsa_executable_t,
            symbol: hsa_executable_symbol_t,
            data: *mut c_void,
        ) -> hsa_status_t {
            // SAFETY: `data` is the Ctx passed below, alive for the iteration.
            let ctx = unsafe { &mut *(data as *mut Ctx) };
            let info = |attribute: u32, out: *mut c_void| {
                // SAFETY: each attribute is read into a value of its HSA type.
                unsafe { (ctx.api.hsa_executable_symbol_get_info)(symbol, attribute, out) }
            };
            let mut kind: u32 = u32::MAX;
            info(symbol_info::TYPE, &mut kind as *mut u32 as *mut c_void);
            if kind != HSA_SYMBOL_KIND_VARIABLE {
                return status::SUCCESS;
            }
            let mut len: u32 = 0;
            info(
                symbol_info::NAME_LENGTH,
                &mut len as *mut u32 as *mut c_void,
            );
            let mut name = vec![0u8; len as usize + 1];
            info(symbol_info::NAME, name.as_mut_ptr() as *mut c_void);
            name.truncate(len as usize);
            if let Some(end) = name.iter().position(|&b| b == 0) {
                name.truncate(end);
            }
            let mut address: u64 = 0;
            let mut size: u32 = 0;
            info(
                symbol_info::VARIABLE_ADDRESS,
                &mut address as *mut u64 as *mut c_void,
            );
            info(
                symbol_info::VARIABLE_SIZE,
                &mut size as *mut u32 as *mut c_void,
            );
            if address != 0 {
                ctx.found.insert(
                    String::from_utf8_lossy(&name).into_owned(),
                    (address as usize, size as usize),
                );
            }
            status::SUCCESS
        }
        let mut ctx = Ctx {
            api: self.api,
            found: HashMap::new(),
        };
        // SAFETY: the callback matches the HSA signature and `ctx` outlives the call.
        let status = unsafe {
            (self.api.hsa_executable_iterate_symbols)(
                self.raw,
                Some(visit),
                &mut ctx as *mut Ctx as *mut c_void,
            )
        };
        check("hsa_executable_iterate_symbols", status)?;
        Ok(ctx.found)
    }

    /// Destroys the executable now, saying whether the runtime could.
    pub fn destroy(self) -> Result<(), HsaError> {
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: created by `new` and destroyed once: `self` is consumed without Drop.
        let status = unsafe { (this.api.hsa_executable_destroy)(this.raw) };
        check("hsa_executable_destroy", status)
    }
}

impl Drop for Executable {
    fn drop(&mut self) {
        // SAFETY: created by `new` and destroyed once, here.
        let status = unsafe { (self.api.hsa_executable_destroy)(self.raw) };
        if let Err(error) = check("hsa_executable_destroy", status) {
            tracing::warn!(%error, "destroying an HSA executable failed");
        }
    }
}

//! Code-object readers and executables.

use super::shell::guard;
use super::shell::iterate;
use crate::cabi::{out, put, put_bytes};
use crate::error::{HsaError, HsaResult};
use crate::loader::Symbol;
use crate::system::rt;
use hsa_abi::*;
use std::ffi::{c_char, c_void, CStr};

fn c_str<'a>(p: *const c_char) -> Result<&'a str, HsaError> {
    if p.is_null() {
        return Err(HsaError::INVALID_ARGUMENT);
    }
    // SAFETY: non-null, NUL-terminated per every caller's contract.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|_| HsaError::INVALID_ARGUMENT)
}

/// Copies the bytes: the client may free its buffer after this returns.
///
/// # Safety
/// `code_object` must be valid for `size` bytes; `reader` null or valid.
#[no_mangle]
pub unsafe extern "C" fn hsa_code_object_reader_create_from_memory(
    code_object: *const c_void,
    size: usize,
    reader: *mut hsa_code_object_reader_t,
) -> hsa_status_t {
    guard("hsa_code_object_reader_create_from_memory", || {
        let rt = rt()?;
        if code_object.is_null() || size == 0 || reader.is_null() {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        // SAFETY: valid for `size` bytes per the caller.
        let bytes = unsafe { std::slice::from_raw_parts(code_object.cast::<u8>(), size) }.to_vec();
        // SAFETY: checked non-null.
        unsafe { out(reader, rt.loader.add_reader(bytes)) }
    })
}

/// Reads the whole file from the descriptor's current position.
///
/// # Safety
/// `reader` null or valid.
#[no_mangle]
pub unsafe extern "C" fn hsa_code_object_reader_create_from_file(
    file: i32,
    reader: *mut hsa_code_object_reader_t,
) -> hsa_status_t {
    guard("hsa_code_object_reader_create_from_file", || {
        let rt = rt()?;
        if reader.is_null() {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        // SAFETY: fstat only writes the stat buffer; an invalid fd just fails.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        if file < 0 || unsafe { libc::fstat(file, &mut st) } != 0 {
            return Err(HsaError::INVALID_FILE);
        }
        let mut bytes = Vec::new();
        let mut buf = [0u8; 65536];
        loop {
            // SAFETY: reading into our own buffer from the caller's descriptor.
            let n = unsafe { libc::read(file, buf.as_mut_ptr().cast(), buf.len()) };
            if n < 0 {
                return Err(HsaError::INVALID_FILE);
            }
            if n == 0 {
                break;
            }
            bytes.extend_from_slice(&buf[..n as usize]);
        }
        if bytes.is_empty() {
            return Err(HsaError::INVALID_FILE);
        }
        // SAFETY: checked non-null.
        unsafe { out(reader, rt.loader.add_reader(bytes)) }
    })
}

#[no_mangle]
pub extern "C" fn hsa_code_object_reader_destroy(reader: hsa_code_object_reader_t) -> hsa_status_t {
    guard("hsa_code_object_reader_destroy", || {
        rt()?.loader.remove_reader(reader)
    })
}

/// # Safety
/// `executable` null or valid.
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_create_alt(
    profile: u32,
    rounding: u32,
    _options: *const c_char,
    executable: *mut hsa_executable_t,
) -> hsa_status_t {
    guard("hsa_executable_create_alt", || {
        let rt = rt()?;
        if executable.is_null()
            || profile > HSA_PROFILE_FULL
            || rounding > HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR
        {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        // SAFETY: checked non-null.
        unsafe { out(executable, rt.loader.create_executable()) }
    })
}

#[no_mangle]
pub extern "C" fn hsa_executable_destroy(executable: hsa_executable_t) -> hsa_status_t {
    guard("hsa_executable_destroy", || {
        let rt = rt()?;
        rt.loader.destroy_executable(&rt.memory, executable)
    })
}

/// # Safety
/// `loaded_code_object` null or valid.
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_load_agent_code_object(
    executable: hsa_executable_t,
    agent: hsa_agent_t,
    reader: hsa_code_object_reader_t,
    _options: *const c_char,
    loaded_code_object: *mut hsa_loaded_code_object_t,
) -> hsa_status_t {
    guard("hsa_executable_load_agent_code_object", || {
        let rt = rt()?;
        let a = rt.agent(agent)?;
        let r = rt.loader.reader(reader)?;
        crate::fail::check(
            crate::fail::FailPoint::ExecutableLoad,
            "hsa_executable_load_agent_code_object",
        )?;
        let lco = rt.loader.load(&rt.memory, executable, a, &r)?;
        if !loaded_code_object.is_null() {
            // SAFETY: non-null and valid per the caller.
            unsafe { out(loaded_code_object, lco) }?;
        }
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn hsa_executable_freeze(
    executable: hsa_executable_t,
    _options: *const c_char,
) -> hsa_status_t {
    guard("hsa_executable_freeze", || rt()?.loader.freeze(executable))
}

/// # Safety
/// `attribute` value pointer valid for its type.
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_get_info(
    executable: hsa_executable_t,
    attribute: u32,
    value: *mut c_void,
) -> hsa_status_t {
    guard("hsa_executable_get_info", || {
        let rt = rt()?;
        let _ = rt.loader.executable(executable)?;
        // HSA_EXECUTABLE_INFO_PROFILE = 1, HSA_EXECUTABLE_INFO_STATE = 2,
        // HSA_EXECUTABLE_INFO_DEFAULT_FLOAT_ROUNDING_MODE = 3
        match attribute {
            // SAFETY: valid per the caller.
            1 => unsafe { crate::cabi::put(value, HSA_PROFILE_FULL) },
            // HSA_EXECUTABLE_STATE_UNFROZEN = 0, _FROZEN = 1
            // SAFETY: valid per the caller.
            2 => unsafe { crate::cabi::put(value, u32::from(rt.loader.is_frozen(executable)?)) },
            // SAFETY: valid per the caller.
            3 => unsafe { crate::cabi::put(value, HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR) },
            _ => Err(HsaError::INVALID_ARGUMENT),
        }
    })
}

/// Defines an external device variable the next loaded code object references
/// (resolved by its `R_AMDGPU_64` relocations).
///
/// # Safety
/// `variable_name` must be a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_agent_global_variable_define(
    executable: hsa_executable_t,
    agent: hsa_agent_t,
    variable_name: *const c_char,
    address: *mut c_void,
) -> hsa_status_t {
    guard("hsa_executable_agent_global_variable_define", || {
        let rt = rt()?;
        rt.agent(agent)?;
        let name = c_str(variable_name)?;
        rt.loader.define_global(executable, name, address as u64)
    })
}

/// # Safety
/// `symbol_name` a NUL-terminated string; `agent` null or valid; `symbol` null or valid.
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_get_symbol_by_name(
    executable: hsa_executable_t,
    symbol_name: *const c_char,
    agent: *const hsa_agent_t,
    symbol: *mut hsa_executable_symbol_t,
) -> hsa_status_t {
    guard("hsa_executable_get_symbol_by_name", || {
        let rt = rt()?;
        let name = c_str(symbol_name)?;
        if symbol.is_null() {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        // SAFETY: non-null agent pointers are valid per the caller.
        let agent = if agent.is_null() {
            None
        } else {
            Some(unsafe { *agent })
        };
        let s = rt.loader.find_symbol(executable, name, agent)?;
        let h = hsa_executable_symbol_t {
            handle: std::sync::Arc::as_ptr(&s) as u64,
        };
        // SAFETY: checked non-null.
        unsafe { out(symbol, h) }
    })
}

/// # Safety
/// `value` valid for the attribute's type.
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_symbol_get_info(
    symbol: hsa_executable_symbol_t,
    attribute: u32,
    value: *mut c_void,
) -> hsa_status_t {
    guard("hsa_executable_symbol_get_info", || {
        let s = rt()?.loader.symbol(symbol)?;
        // SAFETY: forwarded caller contract.
        unsafe { symbol_get_info(&s, attribute, value) }
    })
}

/// # Safety
/// `callback` is called with `data`, which must be what it expects.
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_iterate_symbols(
    executable: hsa_executable_t,
    callback: Option<SymbolCallback>,
    data: *mut c_void,
) -> hsa_status_t {
    iterate("hsa_executable_iterate_symbols", || {
        let rt = rt()?;
        let cb = callback.ok_or(HsaError::INVALID_ARGUMENT)?;
        for s in rt.loader.symbols_of(executable)? {
            let h = hsa_executable_symbol_t {
                handle: std::sync::Arc::as_ptr(&s) as u64,
            };
            // SAFETY: the client's callback with its own data.
            let st = unsafe { cb(executable, h, data) };
            if st != status::SUCCESS {
                return Ok(st);
            }
        }
        Ok(status::SUCCESS)
    })
}

/// # Safety
/// `callback` is called with `data`, which must be what it expects.
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_iterate_agent_symbols(
    executable: hsa_executable_t,
    agent: hsa_agent_t,
    callback: Option<AgentSymbolCallback>,
    data: *mut c_void,
) -> hsa_status_t {
    iterate("hsa_executable_iterate_agent_symbols", || {
        let rt = rt()?;
        rt.agent(agent)?;
        let cb = callback.ok_or(HsaError::INVALID_ARGUMENT)?;
        for s in rt
            .loader
            .symbols_of(executable)?
            .into_iter()
            .filter(|s| s.agent == agent)
        {
            let h = hsa_executable_symbol_t {
                handle: std::sync::Arc::as_ptr(&s) as u64,
            };
            // SAFETY: the client's callback with its own data.
            let st = unsafe { cb(executable, agent, h, data) };
            if st != status::SUCCESS {
                return Ok(st);
            }
        }
        Ok(status::SUCCESS)
    })
}

// ---- deprecated / program-level forms (HSA 1.0) ---------------------------------------

/// `hsa_executable_create` (deprecated): `state` must be UNFROZEN (0); FROZEN (1) creates
/// an executable that accepts no code objects.
///
/// # Safety
/// `executable` null or valid.
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_create(
    profile: u32,
    executable_state: u32,
    _options: *const c_char,
    executable: *mut hsa_executable_t,
) -> hsa_status_t {
    guard("hsa_executable_create", || {
        let rt = rt()?;
        if executable.is_null() || profile > HSA_PROFILE_FULL || executable_state > 1 {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        let e = rt.loader.create_executable();
        if executable_state == 1 {
            rt.loader.freeze(e)?;
        }
        // SAFETY: checked non-null.
        unsafe { out(executable, e) }
    })
}

/// `hsa_executable_get_symbol` (deprecated): the module name is ignored (code objects v3+
/// have none); kernels are found by `NAME.kd` or `NAME`.
///
/// # Safety
/// `symbol_name` a NUL-terminated string; `symbol` null or valid.
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_get_symbol(
    executable: hsa_executable_t,
    _module_name: *const c_char,
    symbol_name: *const c_char,
    agent: hsa_agent_t,
    _call_convention: i32,
    symbol: *mut hsa_executable_symbol_t,
) -> hsa_status_t {
    // SAFETY: forwarded caller contract; `agent` is a local.
    unsafe { hsa_executable_get_symbol_by_name(executable, symbol_name, &agent, symbol) }
}

/// Program-allocation variables: code objects v3+ have none, so the name is recorded like
/// an agent variable and resolves undefined references of later loads on every agent.
///
/// # Safety
/// `variable_name` must be a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_global_variable_define(
    executable: hsa_executable_t,
    variable_name: *const c_char,
    address: *mut c_void,
) -> hsa_status_t {
    guard("hsa_executable_global_variable_define", || {
        let rt = rt()?;
        let name = c_str(variable_name)?;
        rt.loader.define_global(executable, name, address as u64)
    })
}

/// # Safety
/// `variable_name` must be a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_readonly_variable_define(
    executable: hsa_executable_t,
    agent: hsa_agent_t,
    variable_name: *const c_char,
    address: *mut c_void,
) -> hsa_status_t {
    guard("hsa_executable_readonly_variable_define", || {
        let rt = rt()?;
        rt.agent(agent)?;
        let name = c_str(variable_name)?;
        rt.loader.define_global(executable, name, address as u64)
    })
}

/// Program-linkage symbols do not exist in code objects v3+: the iteration is empty.
///
/// # Safety
/// `callback` is never called.
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_iterate_program_symbols(
    executable: hsa_executable_t,
    callback: Option<SymbolCallback>,
    _data: *mut c_void,
) -> hsa_status_t {
    guard("hsa_executable_iterate_program_symbols", || {
        rt()?.loader.executable(executable)?;
        callback.ok_or(HsaError::INVALID_ARGUMENT)?;
        Ok(())
    })
}

/// Every load was checked (ISA, relocations, symbols) when it happened, so a live
/// executable is valid: `*result = 0`.
///
/// # Safety
/// `result` null or valid.
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_validate(
    executable: hsa_executable_t,
    result: *mut u32,
) -> hsa_status_t {
    guard("hsa_executable_validate", || {
        rt()?.loader.executable(executable)?;
        // SAFETY: valid per the caller.
        unsafe { out(result, 0u32) }
    })
}

/// # Safety
/// `result` null or valid.
#[no_mangle]
pub unsafe extern "C" fn hsa_executable_validate_alt(
    executable: hsa_executable_t,
    _options: *const c_char,
    result: *mut u32,
) -> hsa_status_t {
    // SAFETY: forwarded caller contract.
    unsafe { hsa_executable_validate(executable, result) }
}

/// `hsa_executable_symbol_get_info`.
///
/// # Safety
/// `value` must be null or valid for the attribute's documented type.
unsafe fn symbol_get_info(s: &Symbol, attr: u32, value: *mut c_void) -> HsaResult {
    use symbol_info::*;
    let k = s.kernel.as_ref();
    let kernel_only = |v: Option<u32>| v.ok_or(HsaError::INVALID_ARGUMENT);
    // SAFETY (all calls): `value` is valid for the attribute's type per the caller.
    unsafe {
        match attr {
            TYPE => put(
                value,
                if k.is_some() {
                    HSA_SYMBOL_KIND_KERNEL
                } else {
                    HSA_SYMBOL_KIND_VARIABLE
                },
            ),
            NAME_LENGTH => put(value, s.name.len() as u32),
            NAME => put_bytes(value, s.name.as_bytes()),
            MODULE_NAME_LENGTH => put(value, 0u32),
            MODULE_NAME => Ok(()),
            // HSA_SYMBOL_LINKAGE_PROGRAM
            LINKAGE => put(value, 1u32),
            AGENT => put(value, s.agent),
            IS_DEFINITION => put(value, true),
            VARIABLE_ADDRESS if k.is_none() => put(value, s.address),
            // HSA_VARIABLE_ALLOCATION_AGENT, HSA_VARIABLE_SEGMENT_GLOBAL
            VARIABLE_ALLOCATION if k.is_none() => put(value, 0u32),
            VARIABLE_SEGMENT if k.is_none() => put(value, 0u32),
            VARIABLE_ALIGNMENT if k.is_none() => {
                put(value, 8u32.min(s.size.next_power_of_two().max(1) as u32))
            }
            VARIABLE_SIZE if k.is_none() => put(value, s.size as u32),
            VARIABLE_IS_CONST if k.is_none() => put(value, false),
            KERNEL_OBJECT if k.is_some() => put(value, s.address),
            KERNEL_KERNARG_SEGMENT_SIZE => put(value, kernel_only(k.map(|k| k.kernarg_size))?),
            KERNEL_KERNARG_SEGMENT_ALIGNMENT => {
                put(value, kernel_only(k.map(|k| k.kernarg_align))?)
            }
            KERNEL_GROUP_SEGMENT_SIZE => put(value, kernel_only(k.map(|k| k.group_size))?),
            KERNEL_PRIVATE_SEGMENT_SIZE => put(value, kernel_only(k.map(|k| k.private_size))?),
            KERNEL_DYNAMIC_CALLSTACK => put(
                value,
                k.map(|k| k.dynamic_callstack)
                    .ok_or(HsaError::INVALID_ARGUMENT)?,
            ),
            KERNEL_CALL_CONVENTION if k.is_some() => put(value, 0u32),
            _ => Err(HsaError::INVALID_ARGUMENT),
        }
    }
}

include!(concat!(env!("OUT_DIR"), "/symver_api_executable.rs"));

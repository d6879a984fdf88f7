//! Extension tables. hsasim implements one extension: `HSA_EXTENSION_AMD_LOADER` v1.3 (the
//! `hsa_ven_amd_loader_1_03_pfn_t` table of `hsa_ven_amd_loader.h`), which AMD's HIP runtime
//! and debuggers use to map device addresses to executables and to find code objects.
//! Images, the finalizer, performance counters and the AMD profiler extensions are not
//! modelled: queries report them unsupported and table requests fail with
//! `HSA_STATUS_ERROR_INVALID_ARGUMENT` (logged once).
//!
//! The loader functions are not exported as symbols (ROCr does not export them either);
//! clients reach them only through the table.

use super::shell::guard;
use super::shell::iterate;
use crate::cabi::{out, put, put_bytes};
use crate::error::{HsaError, HsaResult};
use crate::loader::LoadedInfo;
use crate::system::rt;
use hsa_abi::*;
use std::ffi::c_void;

pub const EXTENSION_AMD_LOADER: u16 = 0x201;
/// The newest AMD loader table version this runtime provides.
const LOADER_MAJOR: u16 = 1;
const LOADER_MINOR: u16 = 3;

/// True if `extension` is supported at `major` (and, when given, at least `minor`).
pub fn supported(extension: u16, major: u16, minor: Option<u16>) -> bool {
    extension == EXTENSION_AMD_LOADER
        && major == LOADER_MAJOR
        && minor.is_none_or(|m| m <= LOADER_MINOR)
}

/// The newest minor version of `extension`'s `major` table, if supported.
pub fn newest_minor(extension: u16, major: u16) -> Option<u16> {
    supported(extension, major, None).then_some(LOADER_MINOR)
}

/// `hsa_ven_amd_loader_segment_descriptor_t`.
#[repr(C)]
#[derive(Clone, Copy)]
struct SegmentDescriptor {
    agent: hsa_agent_t,
    executable: hsa_executable_t,
    storage_type: u32,
    storage_base: *const c_void,
    storage_size: usize,
    storage_offset: usize,
    segment_base: *const c_void,
    segment_size: usize,
}

type ExecutableCallback = unsafe extern "C" fn(hsa_executable_t, *mut c_void) -> hsa_status_t;
type LoadedCodeObjectCallback =
    unsafe extern "C" fn(hsa_executable_t, hsa_loaded_code_object_t, *mut c_void) -> hsa_status_t;

/// `hsa_ven_amd_loader_1_03_pfn_t`: seven function pointers, in header order. Earlier
/// versions are prefixes of it.
#[repr(C)]
#[derive(Clone, Copy)]
struct LoaderTable {
    query_host_address: unsafe extern "C" fn(*const c_void, *mut *const c_void) -> hsa_status_t,
    query_segment_descriptors:
        unsafe extern "C" fn(*mut SegmentDescriptor, *mut usize) -> hsa_status_t,
    query_executable: unsafe extern "C" fn(*const c_void, *mut hsa_executable_t) -> hsa_status_t,
    executable_iterate_loaded_code_objects: unsafe extern "C" fn(
        hsa_executable_t,
        Option<LoadedCodeObjectCallback>,
        *mut c_void,
    ) -> hsa_status_t,
    loaded_code_object_get_info:
        unsafe extern "C" fn(hsa_loaded_code_object_t, u32, *mut c_void) -> hsa_status_t,
    code_object_reader_create_from_file_with_offset_size:
        unsafe extern "C" fn(i32, usize, usize, *mut hsa_code_object_reader_t) -> hsa_status_t,
    iterate_executables:
        unsafe extern "C" fn(Option<ExecutableCallback>, *mut c_void) -> hsa_status_t,
}

static LOADER_TABLE: LoaderTable = LoaderTable {
    query_host_address: loader_query_host_address,
    query_segment_descriptors: loader_query_segment_descriptors,
    query_executable: loader_query_executable,
    executable_iterate_loaded_code_objects: loader_executable_iterate_loaded_code_objects,
    loaded_code_object_get_info: loader_loaded_code_object_get_info,
    code_object_reader_create_from_file_with_offset_size:
        loader_code_object_reader_create_from_file_with_offset_size,
    iterate_executables: loader_iterate_executables,
};

/// Bytes of the table for version 1.`minor` (3, 5, 6 or 7 function pointers).
fn loader_table_len(minor: u16) -> usize {
    let fns = match minor {
        0 => 3,
        1 => 5,
        2 => 6,
        _ => 7,
    };
    fns * std::mem::size_of::<usize>()
}

/// Copies `min(len, table)` bytes of the extension's table into `table`.
fn copy_table(extension: u16, major: u16, minor: u16, len: usize, table: *mut c_void) -> HsaResult {
    if table.is_null() {
        return Err(HsaError::INVALID_ARGUMENT);
    }
    if !supported(extension, major, Some(minor)) {
        super::shell::report_once(
            "extension table",
            &format!("extension {extension:#x} v{major}.{minor} is not modelled by hsasim (only HSA_EXTENSION_AMD_LOADER v1.0-1.3); returning HSA_STATUS_ERROR_INVALID_ARGUMENT"),
        );
        return Err(HsaError::INVALID_ARGUMENT);
    }
    let n = len.min(loader_table_len(minor));
    // SAFETY: the caller's table holds `len` bytes (>= n); the source is our static table,
    // at least `loader_table_len` bytes long.
    unsafe {
        std::ptr::copy_nonoverlapping(
            (&LOADER_TABLE as *const LoaderTable).cast::<u8>(),
            table.cast::<u8>(),
            n,
        )
    };
    Ok(())
}

/// `hsa_system_get_major_extension_table`: the newest minor table of `major`, truncated to
/// `table_length` bytes.
#[no_mangle]
pub extern "C" fn hsa_system_get_major_extension_table(
    extension: u16,
    version_major: u16,
    table_length: usize,
    table: *mut c_void,
) -> hsa_status_t {
    guard("hsa_system_get_major_extension_table", || {
        rt()?;
        let minor = newest_minor(extension, version_major).unwrap_or(0);
        copy_table(extension, version_major, minor, table_length, table)
    })
}

/// `hsa_system_get_extension_table` (deprecated): the table of exactly version
/// `major.minor`.
#[no_mangle]
pub extern "C" fn hsa_system_get_extension_table(
    extension: u16,
    version_major: u16,
    version_minor: u16,
    table: *mut c_void,
) -> hsa_status_t {
    guard("hsa_system_get_extension_table", || {
        rt()?;
        copy_table(
            extension,
            version_major,
            version_minor,
            loader_table_len(version_minor),
            table,
        )
    })
}

// ---- hsa_ven_amd_loader_* -------------------------------------------------------------

fn loaded_containing(addr: u64) -> HsaResult<LoadedInfo> {
    rt()?
        .loader
        .all_loaded()
        .into_iter()
        .find(|l| addr >= l.base && addr < l.base + l.len)
        .ok_or(HsaError::INVALID_ARGUMENT)
}

/// Device and host addresses are the same memory in the simulator: a loaded code object's
/// device address maps to itself. Addresses outside every loaded code object are invalid.
unsafe extern "C" fn loader_query_host_address(
    device_address: *const c_void,
    host_address: *mut *const c_void,
) -> hsa_status_t {
    guard("hsa_ven_amd_loader_query_host_address", || {
        loaded_containing(device_address as u64)?;
        // SAFETY: valid per the caller.
        unsafe { out(host_address, device_address) }
    })
}

/// One segment descriptor per loaded code object (its whole image). With a null array,
/// only the count is returned; otherwise `*num` must equal the count.
unsafe extern "C" fn loader_query_segment_descriptors(
    descriptors: *mut SegmentDescriptor,
    num: *mut usize,
) -> hsa_status_t {
    guard("hsa_ven_amd_loader_query_segment_descriptors", || {
        if num.is_null() {
            return Err(HsaError::INVALID_ARGUMENT);
        }
        let all = rt()?.loader.all_loaded();
        if descriptors.is_null() {
            // SAFETY: checked non-null.
            return unsafe { out(num, all.len()) };
        }
        // SAFETY: checked non-null; valid per the caller.
        if unsafe { *num } != all.len() {
            return Err(HsaError::new(status::ERROR_INCOMPATIBLE_ARGUMENTS));
        }
        for (i, l) in all.iter().enumerate() {
            let d = SegmentDescriptor {
                agent: l.agent,
                executable: l.executable,
                storage_type: 2, // HSA_VEN_AMD_LOADER_CODE_OBJECT_STORAGE_TYPE_MEMORY
                storage_base: l.storage.bytes.as_ptr().cast(),
                storage_size: l.storage.bytes.len(),
                storage_offset: 0,
                segment_base: l.base as *const c_void,
                segment_size: l.len as usize,
            };
            // SAFETY: the caller's array holds `*num` == all.len() descriptors.
            unsafe { descriptors.add(i).write_unaligned(d) };
        }
        Ok(())
    })
}

unsafe extern "C" fn loader_query_executable(
    device_address: *const c_void,
    executable: *mut hsa_executable_t,
) -> hsa_status_t {
    guard("hsa_ven_amd_loader_query_executable", || {
        let l = loaded_containing(device_address as u64)?;
        // SAFETY: valid per the caller.
        unsafe { out(executable, l.executable) }
    })
}

unsafe extern "C" fn loader_executable_iterate_loaded_code_objects(
    executable: hsa_executable_t,
    callback: Option<LoadedCodeObjectCallback>,
    data: *mut c_void,
) -> hsa_status_t {
    iterate(
        "hsa_ven_amd_loader_executable_iterate_loaded_code_objects",
        || {
            let cb = callback.ok_or(HsaError::INVALID_ARGUMENT)?;
            for l in rt()?.loader.loaded_of(executable)? {
                let h = hsa_loaded_code_object_t { handle: l.base };
                // SAFETY: the client's callback with its own data.
                let s = unsafe { cb(executable, h, data) };
                if s != status::SUCCESS {
                    return Ok(s);
                }
            }
            Ok(status::SUCCESS)
        },
    )
}

/// The URI ROCr gives a code object loaded from memory.
fn memory_uri(l: &LoadedInfo) -> String {
    format!(
        "memory://{}#offset={:#x}&size={}",
        std::process::id(),
        l.storage.bytes.as_ptr() as u64,
        l.storage.bytes.len()
    )
}

unsafe extern "C" fn loader_loaded_code_object_get_info(
    loaded: hsa_loaded_code_object_t,
    attribute: u32,
    value: *mut c_void,
) -> hsa_status_t {
    guard("hsa_ven_amd_loader_loaded_code_object_get_info", || {
        let l = rt()?
            .loader
            .all_loaded()
            .into_iter()
            .find(|l| l.base == loaded.handle)
            .ok_or(HsaError::INVALID_ARGUMENT)?;
        // SAFETY (all calls): valid for the attribute's type per the caller.
        unsafe {
            match attribute {
                1 => put(value, l.executable),
                2 => put(value, 2u32), // KIND_AGENT
                3 => put(value, l.agent),
                4 => put(value, 2u32), // STORAGE_TYPE_MEMORY
                5 => put(value, l.storage.bytes.as_ptr() as u64),
                6 => put(value, l.storage.bytes.len() as u64),
                // STORAGE_FILE: only for file storage.
                7 => Err(HsaError::INVALID_ARGUMENT),
                // LOAD_DELTA: segments are placed at base + vaddr.
                8 => put(value, l.base as i64),
                9 => put(value, l.base),
                10 => put(value, l.len),
                11 => put(value, memory_uri(&l).len() as u32),
                12 => put_bytes(value, memory_uri(&l).as_bytes()),
                _ => Err(HsaError::INVALID_ARGUMENT),
            }
        }
    })
}

unsafe extern "C" fn loader_code_object_reader_create_from_file_with_offset_size(
    file: i32,
    offset: usize,
    size: usize,
    reader: *mut hsa_code_object_reader_t,
) -> hsa_status_t {
    guard(
        "hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size",
        || {
            let rt = rt()?;
            if reader.is_null() || size == 0 {
                return Err(HsaError::INVALID_ARGUMENT);
            }
            let mut bytes = vec![0u8; size];
            let mut done = 0usize;
            while done < size {
                // SAFETY: reading into our own buffer; an invalid fd just fails.
                let n = unsafe {
                    libc::pread(
                        file,
                        bytes[done..].as_mut_ptr().cast(),
                        size - done,
                        (offset + done) as libc::off_t,
                    )
                };
                if n <= 0 {
                    return Err(HsaError::INVALID_FILE);
                }
                done += n as usize;
            }
            // SAFETY: checked non-null.
            unsafe { out(reader, rt.loader.add_reader(bytes)) }
        },
    )
}

unsafe extern "C" fn loader_iterate_executables(
    callback: Option<ExecutableCallback>,
    data: *mut c_void,
) -> hsa_status_t {
    iterate("hsa_ven_amd_loader_iterate_executables", || {
        let cb = callback.ok_or(HsaError::INVALID_ARGUMENT)?;
        for e in rt()?.loader.executables() {
            // SAFETY: the client's callback with its own data.
            let s = unsafe { cb(e, data) };
            if s != status::SUCCESS {
                return Ok(s);
            }
        }
        Ok(status::SUCCESS)
    })
}

include!(concat!(env!("OUT_DIR"), "/symver_api_extension.rs"));

//! The HSA runtime's entry points, resolved once from whichever library serves this process
//! (ROCr or hsasim). The shim calls the HSA runtime only through this table, so the simulator
//! is never special-cased.

use hsa_abi::*;
use libloading::Library;
use std::ffi::c_void;
use std::path::{Path, PathBuf};

/// A wrapper with the signature of one HSA entry point that counts the call and its time for
/// the stats, then calls the real function (whose address is in `REAL`). Installed in the
/// table instead of the real function only while recording, so it costs nothing otherwise.
/// The recursive arms give the parameters names (`a0`, `a1`, ...), which the table omits.
macro_rules! counted_fn {
    ($name:ident, $id:expr, ($($ty:ty),*) -> $ret:ty) => {
        counted_fn!(@names $name, $id, $ret, [] [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11] $($ty,)*);
    };
    (@names $name:ident, $id:expr, $ret:ty, [$($n:ident : $t:ty,)*] [$next:ident $($names:ident)*] $ty0:ty, $($rest:ty,)*) => {
        counted_fn!(@names $name, $id, $ret, [$($n : $t,)* $next : $ty0,] [$($names)*] $($rest,)*);
    };
    (@names $name:ident, $id:expr, $ret:ty, [$($n:ident : $t:ty,)*] [$($names:ident)*]) => {
        pub mod $name {
            use super::*;
            pub static REAL: AtomicUsize = AtomicUsize::new(0);
            pub unsafe extern "C" fn wrapper($($n: $t),*) -> $ret {
                // SAFETY: REAL holds the address of the runtime's function of exactly this
                // signature, stored by `HsaApi::load` before this wrapper was put in the table.
                let real: unsafe extern "C" fn($($t),*) -> $ret =
                    unsafe { std::mem::transmute::<usize, _>(REAL.load(Ordering::Relaxed)) };
                let started = crate::probe::now_ns();
                // SAFETY: the caller's contract for the HSA function.
                let result = unsafe { real($($n),*) };
                crate::probe::count_hsa($id as usize, started);
                result
            }
        }
    };
}

macro_rules! hsa_table {
    (
        required { $( $name:ident : fn($($arg:ty),*) -> $ret:ty; )* }
        optional { $( $oname:ident : fn($($oarg:ty),*) -> $oret:ty; )* }
    ) => {
        /// Function pointers into the loaded HSA runtime. Optional entry points are absent
        /// from older ROCr releases (e.g. ROCm 5.2 has no `..._async_copy_on_engine`).
        pub struct HsaApi {
            $( pub $name: unsafe extern "C" fn($($arg),*) -> $ret, )*
            $( pub $oname: Option<unsafe extern "C" fn($($oarg),*) -> $oret>, )*
            /// Where the library was loaded from.
            pub path: PathBuf,
            _library: Library,
        }

        /// The table's entry points in order: the stats name HSA calls by these indices.
        pub const HSA_FN_NAMES: &[&str] = &[$(stringify!($name),)* $(stringify!($oname),)*];

        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        #[derive(Clone, Copy)]
        enum FnId { $($name,)* $($oname,)* }

        /// Counting wrappers, one per entry point (see `counted_fn!`).
        #[allow(clippy::too_many_arguments)]
        mod counted {
            use super::*;
            use std::sync::atomic::{AtomicUsize, Ordering};
            $( counted_fn!($name, FnId::$name, ($($arg),*) -> $ret); )*
            $( counted_fn!($oname, FnId::$oname, ($($oarg),*) -> $oret); )*
        }

        impl HsaApi {
            /// Opens `path` (a file path or a soname for the dynamic loader) and resolves
            /// every entry point; a missing required one is an error naming it. While
            /// recording (`HIPSHIM_TRACE`/`HIPSHIM_STATS`), every entry is a counting wrapper.
            pub fn load(path: &Path) -> Result<HsaApi, String> {
                use std::sync::atomic::Ordering;
                let count = crate::probe::recording();
                if count {
                    crate::probe::name_hsa_calls(HSA_FN_NAMES);
                }
                // SAFETY: loading a shared library runs its initialisers; the candidates are
                // HSA runtimes chosen by configuration or the well-known ROCr soname.
                let library = unsafe { Library::new(path) }
                    .map_err(|e| format!("cannot load {}: {e}", path.display()))?;
                // SAFETY: each symbol is looked up by its HSA name and given the signature
                // the HSA specification / ROCm headers declare for it.
                unsafe {
                    Ok(HsaApi {
                        $( $name: {
                            let real = *library
                                .get::<unsafe extern "C" fn($($arg),*) -> $ret>(concat!(stringify!($name), "\0").as_bytes())
                                .map_err(|_| format!("{} does not export {}", path.display(), stringify!($name)))?;
                            if count {
                                counted::$name::REAL.store(real as usize, Ordering::Relaxed);
                                counted::$name::wrapper as unsafe extern "C" fn($($arg),*) -> $ret
                            } else {
                                real
                            }
                        }, )*
                        $( $oname: library
                            .get::<unsafe extern "C" fn($($oarg),*) -> $oret>(concat!(stringify!($oname), "\0").as_bytes())
                            .ok()
                            .map(|s| {
                                let real = *s;
                                if count {
                                    counted::$oname::REAL.store(real as usize, Ordering::Relaxed);
                                    counted::$oname::wrapper as unsafe extern "C" fn($($oarg),*) -> $oret
                                } else {
                                    real
                                }
                            }), )*
                        path: path.to_path_buf(),
                        _library: library,
                    })
                }
            }

            /// The optional entry points this runtime lacks (each has a fallback).
            pub fn absent_optional(&self) -> Vec<&'static str> {
                let mut absent = Vec::new();
                $( if self.$oname.is_none() { absent.push(stringify!($oname)); } )*
                absent
            }
        }
    };
}

hsa_table! {
    required {
        hsa_init: fn() -> hsa_status_t;
        hsa_shut_down: fn() -> hsa_status_t;
        hsa_status_string: fn(hsa_status_t, *mut *const std::ffi::c_char) -> hsa_status_t;
        hsa_system_get_info: fn(u32, *mut c_void) -> hsa_status_t;
        hsa_iterate_agents: fn(AgentCallback, *mut c_void) -> hsa_status_t;
        hsa_agent_get_info: fn(hsa_agent_t, u32, *mut c_void) -> hsa_status_t;
        hsa_agent_iterate_isas: fn(hsa_agent_t, IsaCallback, *mut c_void) -> hsa_status_t;
        hsa_isa_get_info_alt: fn(hsa_isa_t, u32, *mut c_void) -> hsa_status_t;
        hsa_amd_agent_iterate_memory_pools: fn(hsa_agent_t, PoolCallback, *mut c_void) -> hsa_status_t;
        hsa_amd_memory_pool_get_info: fn(hsa_amd_memory_pool_t, u32, *mut c_void) -> hsa_status_t;
        hsa_amd_memory_pool_allocate: fn(hsa_amd_memory_pool_t, usize, u32, *mut *mut c_void) -> hsa_status_t;
        hsa_amd_memory_pool_free: fn(*mut c_void) -> hsa_status_t;
        hsa_amd_agents_allow_access: fn(u32, *const hsa_agent_t, *const u32, *const c_void) -> hsa_status_t;
        hsa_signal_create: fn(hsa_signal_value_t, u32, *const hsa_agent_t, *mut hsa_signal_t) -> hsa_status_t;
        hsa_signal_destroy: fn(hsa_signal_t) -> hsa_status_t;
        hsa_signal_load_relaxed: fn(hsa_signal_t) -> hsa_signal_value_t;
        hsa_signal_store_relaxed: fn(hsa_signal_t, hsa_signal_value_t) -> ();
        hsa_signal_store_screlease: fn(hsa_signal_t, hsa_signal_value_t) -> ();
        hsa_signal_add_relaxed: fn(hsa_signal_t, hsa_signal_value_t) -> ();
        hsa_signal_wait_scacquire: fn(hsa_signal_t, u32, hsa_signal_value_t, u64, u32) -> hsa_signal_value_t;
        hsa_queue_create: fn(hsa_agent_t, u32, u32, Option<QueueErrorCallback>, *mut c_void, u32, u32, *mut *mut hsa_queue_t) -> hsa_status_t;
        hsa_queue_destroy: fn(*mut hsa_queue_t) -> hsa_status_t;
        hsa_queue_load_read_index_scacquire: fn(*const hsa_queue_t) -> u64;
        hsa_queue_add_write_index_screlease: fn(*const hsa_queue_t, u64) -> u64;
        hsa_amd_memory_async_copy: fn(*mut c_void, hsa_agent_t, *const c_void, hsa_agent_t, usize, u32, *const hsa_signal_t, hsa_signal_t) -> hsa_status_t;
        hsa_code_object_reader_create_from_memory: fn(*const c_void, usize, *mut hsa_code_object_reader_t) -> hsa_status_t;
        hsa_code_object_reader_destroy: fn(hsa_code_object_reader_t) -> hsa_status_t;
        hsa_executable_create_alt: fn(u32, u32, *const std::ffi::c_char, *mut hsa_executable_t) -> hsa_status_t;
        hsa_executable_load_agent_code_object: fn(hsa_executable_t, hsa_agent_t, hsa_code_object_reader_t, *const std::ffi::c_char, *mut hsa_loaded_code_object_t) -> hsa_status_t;
        hsa_executable_freeze: fn(hsa_executable_t, *const std::ffi::c_char) -> hsa_status_t;
        hsa_executable_get_symbol_by_name: fn(hsa_executable_t, *const std::ffi::c_char, *const hsa_agent_t, *mut hsa_executable_symbol_t) -> hsa_status_t;
        hsa_executable_symbol_get_info: fn(hsa_executable_symbol_t, u32, *mut c_void) -> hsa_status_t;
        hsa_executable_destroy: fn(hsa_executable_t) -> hsa_status_t;
        hsa_executable_iterate_symbols: fn(hsa_executable_t, SymbolCallback, *mut c_void) -> hsa_status_t;
        hsa_executable_agent_global_variable_define: fn(hsa_executable_t, hsa_agent_t, *const std::ffi::c_char, *mut c_void) -> hsa_status_t;
        hsa_amd_agent_memory_pool_get_info: fn(hsa_agent_t, hsa_amd_memory_pool_t, u32, *mut c_void) -> hsa_status_t;
        hsa_signal_load_scacquire: fn(hsa_signal_t) -> hsa_signal_value_t;
        hsa_signal_subtract_relaxed: fn(hsa_signal_t, hsa_signal_value_t) -> ();
        hsa_signal_subtract_screlease: fn(hsa_signal_t, hsa_signal_value_t) -> ();
        hsa_signal_add_screlease: fn(hsa_signal_t, hsa_signal_value_t) -> ();
        hsa_signal_wait_relaxed: fn(hsa_signal_t, u32, hsa_signal_value_t, u64, u32) -> hsa_signal_value_t;
        hsa_amd_signal_create: fn(hsa_signal_value_t, u32, *const hsa_agent_t, u64, *mut hsa_signal_t) -> hsa_status_t;
        hsa_amd_signal_wait_any: fn(u32, *mut hsa_signal_t, *mut u32, *mut hsa_signal_value_t, u64, u32, *mut hsa_signal_value_t) -> u32;
        hsa_amd_signal_async_handler: fn(hsa_signal_t, u32, hsa_signal_value_t, SignalHandler, *mut c_void) -> hsa_status_t;
        hsa_queue_load_write_index_relaxed: fn(*const hsa_queue_t) -> u64;
        hsa_queue_load_read_index_relaxed: fn(*const hsa_queue_t) -> u64;
        hsa_amd_queue_cu_set_mask: fn(*const hsa_queue_t, u32, *const u32) -> hsa_status_t;
        hsa_amd_queue_set_priority: fn(*mut hsa_queue_t, u32) -> hsa_status_t;
        hsa_amd_profiling_set_profiler_enabled: fn(*mut hsa_queue_t, i32) -> hsa_status_t;
        hsa_amd_profiling_get_dispatch_time: fn(hsa_agent_t, hsa_signal_t, *mut hsa_amd_profiling_time_t) -> hsa_status_t;
        hsa_amd_profiling_async_copy_enable: fn(bool) -> hsa_status_t;
        hsa_amd_profiling_get_async_copy_time: fn(hsa_signal_t, *mut hsa_amd_profiling_time_t) -> hsa_status_t;
        hsa_amd_memory_lock: fn(*mut c_void, usize, *mut hsa_agent_t, i32, *mut *mut c_void) -> hsa_status_t;
        hsa_amd_memory_lock_to_pool: fn(*mut c_void, usize, *mut hsa_agent_t, i32, hsa_amd_memory_pool_t, u32, *mut *mut c_void) -> hsa_status_t;
        hsa_amd_memory_unlock: fn(*mut c_void) -> hsa_status_t;
        hsa_amd_pointer_info: fn(*const c_void, *mut hsa_amd_pointer_info_t, Option<unsafe extern "C" fn(usize) -> *mut c_void>, *mut u32, *mut *mut hsa_agent_t) -> hsa_status_t;
        hsa_memory_register: fn(*mut c_void, usize) -> hsa_status_t;
        hsa_memory_deregister: fn(*mut c_void, usize) -> hsa_status_t;
        hsa_amd_memory_fill: fn(*mut c_void, u32, usize) -> hsa_status_t;
    }
    optional {
        // Not in ROCm 5.2's ROCr; plain hsa_amd_memory_async_copy is the fallback.
        hsa_amd_memory_async_copy_on_engine: fn(*mut c_void, hsa_agent_t, *const c_void, hsa_agent_t, usize, u32, *const hsa_signal_t, hsa_signal_t, u32, bool) -> hsa_status_t;
        hsa_amd_memory_copy_engine_status: fn(hsa_agent_t, hsa_agent_t, *mut u32) -> hsa_status_t;
        // Virtual memory management (ROCm 6 on; not in ROCm 5.2's ROCr): without them the
        // hipMem* VMM calls are hipErrorNotSupported (`runtime/vmm.rs`).
        hsa_amd_vmem_address_reserve_align: fn(*mut *mut c_void, usize, u64, u64, u64) -> hsa_status_t;
        hsa_amd_vmem_address_free: fn(*mut c_void, usize) -> hsa_status_t;
        hsa_amd_vmem_handle_create: fn(hsa_amd_memory_pool_t, usize, u32, u64, *mut hsa_amd_vmem_alloc_handle_t) -> hsa_status_t;
        hsa_amd_vmem_handle_release: fn(hsa_amd_vmem_alloc_handle_t) -> hsa_status_t;
        hsa_amd_vmem_map: fn(*mut c_void, usize, usize, hsa_amd_vmem_alloc_handle_t, u64) -> hsa_status_t;
        hsa_amd_vmem_unmap: fn(*mut c_void, usize) -> hsa_status_t;
        hsa_amd_vmem_set_access: fn(*mut c_void, usize, *const hsa_amd_memory_access_desc_t, usize) -> hsa_status_t;
        hsa_amd_vmem_get_access: fn(*mut c_void, *mut u32, hsa_agent_t) -> hsa_status_t;
        hsa_amd_vmem_export_shareable_handle: fn(*mut i32, hsa_amd_vmem_alloc_handle_t, u64) -> hsa_status_t;
        hsa_amd_vmem_import_shareable_handle: fn(i32, *mut hsa_amd_vmem_alloc_handle_t) -> hsa_status_t;
        hsa_amd_vmem_retain_alloc_handle: fn(*mut hsa_amd_vmem_alloc_handle_t, *mut c_void) -> hsa_status_t;
        hsa_amd_vmem_get_alloc_properties_from_handle: fn(hsa_amd_vmem_alloc_handle_t, *mut hsa_amd_memory_pool_t, *mut u32) -> hsa_status_t;
        // Inter-process memory: without them hipIpc*MemHandle is hipErrorNotSupported.
        hsa_amd_ipc_memory_create: fn(*mut c_void, usize, *mut hsa_amd_ipc_memory_t) -> hsa_status_t;
        hsa_amd_ipc_memory_attach: fn(*const hsa_amd_ipc_memory_t, usize, u32, *const hsa_agent_t, *mut *mut c_void) -> hsa_status_t;
        hsa_amd_ipc_memory_detach: fn(*mut c_void) -> hsa_status_t;
        hsa_amd_signal_value_pointer: fn(hsa_signal_t, *mut *mut hsa_signal_value_t) -> hsa_status_t;
    }
}

impl HsaApi {
    /// The runtime's own text for a status, for log lines.
    pub fn describe(&self, status: hsa_status_t) -> String {
        let mut text: *const std::ffi::c_char = std::ptr::null();
        // SAFETY: `text` is a valid out-pointer; on success the runtime stores a pointer to a
        // static NUL-terminated string.
        let ok = unsafe { (self.hsa_status_string)(status, &mut text) } == status::SUCCESS;
        if ok && !text.is_null() {
            // SAFETY: checked non-null above; HSA returns static C strings.
            let s = unsafe { std::ffi::CStr::from_ptr(text) };
            format!("{status:#x} ({})", s.to_string_lossy())
        } else {
            format!("{status:#x}")
        }
    }
}

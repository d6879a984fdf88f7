//! Every HSA entry point hipshim calls or hsasim exports, declared once: name, parameter
//! types, return type, and what hipshim does when a runtime lacks it.
//!
//! The list is the body of [`hsa_entry_points!`], which hands it to a macro of the caller's
//! choosing. This crate turns it into one function-pointer type per entry point (`fns::NAME`,
//! e.g. `fns::hsa_init`), the optional groups (`fns::optional`) and [`ENTRY_POINTS`];
//! hipshim turns it into its client table (`src/hsa/api.rs`, whose fields have these types);
//! hsasim's tests hold every export to its type here (`sim/tests/abi_signatures.rs`: a
//! mismatch does not compile) and every `hsa_*` symbol of `libhsasim.so` to this list.
//!
//! Sections:
//! - `client_required`: hipshim's table needs them; loading a runtime without one fails.
//!   Their order is the order of hipshim's call statistics (`HSA_FN_NAMES`).
//! - `client_optional`: hipshim's table takes them when present; each group says what
//!   happens without it.
//! - `runtime_only`: hsasim exports them (ROCr's API, for other clients); hipshim does not
//!   call them. Move a declaration to a client section when hipshim starts to.
//! - `not_modelled`: hsasim exports them only as argument-less stubs that return
//!   `HSA_STATUS_ERROR` (images, samplers, the finalizer, legacy code objects), so only their
//!   names are declared: a signature here would describe a function nobody implements.
//!
//! Types follow ROCm's `hsa.h` / `hsa_ext_amd.h` with C enums as `u32`, nullable function
//! pointers as `Option<...>`, and `*const` where the runtime only reads through a pointer
//! that the header leaves non-const (`hsa_amd_memory_lock`'s agents,
//! `hsa_amd_signal_wait_any`'s arrays): the same ABI, and the truth about who writes.

use crate::*;
use std::ffi::{c_char, c_void};

/// Hands the declaration list to `$callback!` (see the module documentation for its
/// sections). Types are written unqualified: the caller has `hsa_abi::*`, `c_char` and
/// `c_void` in scope where the callback expands them.
#[macro_export]
macro_rules! hsa_entry_points {
    ($callback:ident) => {
        $callback! {
            client_required {
                fn hsa_init() -> hsa_status_t;
                fn hsa_shut_down() -> hsa_status_t;
                fn hsa_status_string(code: hsa_status_t, out_string: *mut *const c_char) -> hsa_status_t;
                fn hsa_system_get_info(attr: u32, value: *mut c_void) -> hsa_status_t;
                fn hsa_iterate_agents(callback: Option<AgentCallback>, data: *mut c_void) -> hsa_status_t;
                fn hsa_agent_get_info(agent: hsa_agent_t, attr: u32, value: *mut c_void) -> hsa_status_t;
                fn hsa_agent_iterate_isas(agent: hsa_agent_t, callback: Option<IsaCallback>, data: *mut c_void) -> hsa_status_t;
                fn hsa_isa_get_info_alt(isa: hsa_isa_t, attr: u32, value: *mut c_void) -> hsa_status_t;
                fn hsa_amd_agent_iterate_memory_pools(agent: hsa_agent_t, callback: Option<PoolCallback>, data: *mut c_void) -> hsa_status_t;
                fn hsa_amd_memory_pool_get_info(pool: hsa_amd_memory_pool_t, attr: u32, value: *mut c_void) -> hsa_status_t;
                fn hsa_amd_memory_pool_allocate(pool: hsa_amd_memory_pool_t, size: usize, flags: u32, ptr: *mut *mut c_void) -> hsa_status_t;
                fn hsa_amd_memory_pool_free(ptr: *mut c_void) -> hsa_status_t;
                fn hsa_amd_agents_allow_access(num_agents: u32, agents: *const hsa_agent_t, flags: *const u32, ptr: *const c_void) -> hsa_status_t;
                fn hsa_signal_create(initial_value: hsa_signal_value_t, num_consumers: u32, consumers: *const hsa_agent_t, signal: *mut hsa_signal_t) -> hsa_status_t;
                fn hsa_signal_destroy(signal: hsa_signal_t) -> hsa_status_t;
                fn hsa_signal_load_relaxed(signal: hsa_signal_t) -> hsa_signal_value_t;
                fn hsa_signal_store_relaxed(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_store_screlease(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_add_relaxed(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_wait_scacquire(signal: hsa_signal_t, condition: u32, compare_value: hsa_signal_value_t, timeout_hint: u64, wait_state_hint: u32) -> hsa_signal_value_t;
                fn hsa_queue_create(agent: hsa_agent_t, size: u32, queue_type: u32, callback: Option<QueueErrorCallback>, data: *mut c_void, private_segment_size: u32, group_segment_size: u32, queue: *mut *mut hsa_queue_t) -> hsa_status_t;
                fn hsa_queue_destroy(queue: *mut hsa_queue_t) -> hsa_status_t;
                fn hsa_queue_load_read_index_scacquire(queue: *const hsa_queue_t) -> u64;
                fn hsa_queue_add_write_index_screlease(queue: *const hsa_queue_t, value: u64) -> u64;
                fn hsa_amd_memory_async_copy(dst: *mut c_void, dst_agent: hsa_agent_t, src: *const c_void, src_agent: hsa_agent_t, size: usize, num_dep_signals: u32, dep_signals: *const hsa_signal_t, completion_signal: hsa_signal_t) -> hsa_status_t;
                fn hsa_code_object_reader_create_from_memory(code_object: *const c_void, size: usize, reader: *mut hsa_code_object_reader_t) -> hsa_status_t;
                fn hsa_code_object_reader_destroy(reader: hsa_code_object_reader_t) -> hsa_status_t;
                fn hsa_executable_create_alt(profile: u32, rounding: u32, options: *const c_char, executable: *mut hsa_executable_t) -> hsa_status_t;
                fn hsa_executable_load_agent_code_object(executable: hsa_executable_t, agent: hsa_agent_t, reader: hsa_code_object_reader_t, options: *const c_char, loaded_code_object: *mut hsa_loaded_code_object_t) -> hsa_status_t;
                fn hsa_executable_freeze(executable: hsa_executable_t, options: *const c_char) -> hsa_status_t;
                fn hsa_executable_get_symbol_by_name(executable: hsa_executable_t, symbol_name: *const c_char, agent: *const hsa_agent_t, symbol: *mut hsa_executable_symbol_t) -> hsa_status_t;
                fn hsa_executable_symbol_get_info(symbol: hsa_executable_symbol_t, attribute: u32, value: *mut c_void) -> hsa_status_t;
                fn hsa_executable_destroy(executable: hsa_executable_t) -> hsa_status_t;
                fn hsa_executable_iterate_symbols(executable: hsa_executable_t, callback: Option<SymbolCallback>, data: *mut c_void) -> hsa_status_t;
                fn hsa_executable_agent_global_variable_define(executable: hsa_executable_t, agent: hsa_agent_t, variable_name: *const c_char, address: *mut c_void) -> hsa_status_t;
                fn hsa_amd_agent_memory_pool_get_info(agent: hsa_agent_t, pool: hsa_amd_memory_pool_t, attr: u32, value: *mut c_void) -> hsa_status_t;
                fn hsa_signal_load_scacquire(signal: hsa_signal_t) -> hsa_signal_value_t;
                fn hsa_signal_subtract_relaxed(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_subtract_screlease(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_add_screlease(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_wait_relaxed(signal: hsa_signal_t, condition: u32, compare_value: hsa_signal_value_t, timeout_hint: u64, wait_state_hint: u32) -> hsa_signal_value_t;
                fn hsa_amd_signal_create(initial_value: hsa_signal_value_t, num_consumers: u32, consumers: *const hsa_agent_t, attributes: u64, signal: *mut hsa_signal_t) -> hsa_status_t;
                fn hsa_amd_signal_wait_any(signal_count: u32, signals: *const hsa_signal_t, conds: *const u32, values: *const hsa_signal_value_t, timeout_hint: u64, wait_hint: u32, satisfying_value: *mut hsa_signal_value_t) -> u32;
                fn hsa_amd_signal_async_handler(signal: hsa_signal_t, cond: u32, value: hsa_signal_value_t, handler: Option<SignalHandler>, arg: *mut c_void) -> hsa_status_t;
                fn hsa_queue_load_write_index_relaxed(queue: *const hsa_queue_t) -> u64;
                fn hsa_queue_load_read_index_relaxed(queue: *const hsa_queue_t) -> u64;
                fn hsa_amd_queue_cu_set_mask(queue: *const hsa_queue_t, num_cu_mask_count: u32, cu_mask: *const u32) -> hsa_status_t;
                fn hsa_amd_queue_set_priority(queue: *mut hsa_queue_t, priority: u32) -> hsa_status_t;
                fn hsa_amd_profiling_set_profiler_enabled(queue: *mut hsa_queue_t, enable: i32) -> hsa_status_t;
                fn hsa_amd_profiling_get_dispatch_time(agent: hsa_agent_t, signal: hsa_signal_t, time: *mut hsa_amd_profiling_time_t) -> hsa_status_t;
                fn hsa_amd_profiling_async_copy_enable(enable: bool) -> hsa_status_t;
                fn hsa_amd_profiling_get_async_copy_time(signal: hsa_signal_t, time: *mut hsa_amd_profiling_time_t) -> hsa_status_t;
                fn hsa_amd_memory_lock(host_ptr: *mut c_void, size: usize, agents: *const hsa_agent_t, num_agent: i32, agent_ptr: *mut *mut c_void) -> hsa_status_t;
                fn hsa_amd_memory_lock_to_pool(host_ptr: *mut c_void, size: usize, agents: *const hsa_agent_t, num_agent: i32, pool: hsa_amd_memory_pool_t, flags: u32, agent_ptr: *mut *mut c_void) -> hsa_status_t;
                fn hsa_amd_memory_unlock(host_ptr: *mut c_void) -> hsa_status_t;
                fn hsa_amd_pointer_info(ptr: *const c_void, info: *mut hsa_amd_pointer_info_t, alloc: Option<PointerInfoAlloc>, num_agents_accessible: *mut u32, accessible: *mut *mut hsa_agent_t) -> hsa_status_t;
                fn hsa_memory_register(ptr: *mut c_void, size: usize) -> hsa_status_t;
                fn hsa_memory_deregister(ptr: *mut c_void, size: usize) -> hsa_status_t;
                fn hsa_amd_memory_fill(ptr: *mut c_void, value: u32, count: usize) -> hsa_status_t;
            }
            client_optional {
                COPY_ENGINES: "ROCm 5.6 on (not in ROCm 5.2): without them copies go through hsa_amd_memory_async_copy and the runtime picks the engine." {
                    fn hsa_amd_memory_async_copy_on_engine(dst: *mut c_void, dst_agent: hsa_agent_t, src: *const c_void, src_agent: hsa_agent_t, size: usize, num_dep_signals: u32, dep_signals: *const hsa_signal_t, completion_signal: hsa_signal_t, engine_id: u32, force_copy_on_sdma: bool) -> hsa_status_t;
                    fn hsa_amd_memory_copy_engine_status(dst_agent: hsa_agent_t, src_agent: hsa_agent_t, engine_ids_mask: *mut u32) -> hsa_status_t;
                }
                VMEM: "ROCm 6 on (not in ROCm 5.2): without them hipMem* virtual memory management is hipErrorNotSupported." {
                    fn hsa_amd_vmem_address_reserve_align(ptr: *mut *mut c_void, size: usize, address: u64, alignment: u64, flags: u64) -> hsa_status_t;
                    fn hsa_amd_vmem_address_free(ptr: *mut c_void, size: usize) -> hsa_status_t;
                    fn hsa_amd_vmem_handle_create(pool: hsa_amd_memory_pool_t, size: usize, memory_type: u32, flags: u64, memory_handle: *mut hsa_amd_vmem_alloc_handle_t) -> hsa_status_t;
                    fn hsa_amd_vmem_handle_release(memory_handle: hsa_amd_vmem_alloc_handle_t) -> hsa_status_t;
                    fn hsa_amd_vmem_map(va: *mut c_void, size: usize, in_offset: usize, memory_handle: hsa_amd_vmem_alloc_handle_t, flags: u64) -> hsa_status_t;
                    fn hsa_amd_vmem_unmap(va: *mut c_void, size: usize) -> hsa_status_t;
                    fn hsa_amd_vmem_set_access(va: *mut c_void, size: usize, desc: *const hsa_amd_memory_access_desc_t, desc_cnt: usize) -> hsa_status_t;
                    fn hsa_amd_vmem_get_access(va: *mut c_void, perms: *mut u32, agent_handle: hsa_agent_t) -> hsa_status_t;
                    fn hsa_amd_vmem_export_shareable_handle(dmabuf_fd: *mut i32, handle: hsa_amd_vmem_alloc_handle_t, flags: u64) -> hsa_status_t;
                    fn hsa_amd_vmem_import_shareable_handle(dmabuf_fd: i32, handle: *mut hsa_amd_vmem_alloc_handle_t) -> hsa_status_t;
                    fn hsa_amd_vmem_retain_alloc_handle(handle: *mut hsa_amd_vmem_alloc_handle_t, addr: *mut c_void) -> hsa_status_t;
                    fn hsa_amd_vmem_get_alloc_properties_from_handle(alloc_handle: hsa_amd_vmem_alloc_handle_t, pool: *mut hsa_amd_memory_pool_t, type_: *mut u32) -> hsa_status_t;
                }
                IPC_MEMORY: "Without them hipIpc*MemHandle is hipErrorNotSupported." {
                    fn hsa_amd_ipc_memory_create(ptr: *mut c_void, len: usize, handle: *mut hsa_amd_ipc_memory_t) -> hsa_status_t;
                    fn hsa_amd_ipc_memory_attach(handle: *const hsa_amd_ipc_memory_t, len: usize, num_agents: u32, mapping_agents: *const hsa_agent_t, mapped_ptr: *mut *mut c_void) -> hsa_status_t;
                    fn hsa_amd_ipc_memory_detach(mapped_ptr: *mut c_void) -> hsa_status_t;
                }
                SIGNAL_VALUE_POINTER: "Not declared HSA_API in ROCr (internal); without it a stream counts work up through hsa_signal_add_relaxed." {
                    fn hsa_amd_signal_value_pointer(signal: hsa_signal_t, value_ptr: *mut *mut hsa_signal_value_t) -> hsa_status_t;
                }
            }
            runtime_only {
                // System, agents and ISAs
                fn hsa_system_extension_supported(extension: u16, major: u16, minor: u16, result: *mut bool) -> hsa_status_t;
                fn hsa_system_major_extension_supported(extension: u16, major: u16, version_minor: *mut u16, result: *mut bool) -> hsa_status_t;
                fn hsa_agent_extension_supported(extension: u16, agent: hsa_agent_t, major: u16, minor: u16, result: *mut bool) -> hsa_status_t;
                fn hsa_agent_major_extension_supported(extension: u16, agent: hsa_agent_t, major: u16, version_minor: *mut u16, result: *mut bool) -> hsa_status_t;
                fn hsa_extension_get_name(extension: u16, name: *mut *const c_char) -> hsa_status_t;
                fn hsa_isa_from_name(name: *const c_char, isa: *mut hsa_isa_t) -> hsa_status_t;
                fn hsa_isa_compatible(code_isa: hsa_isa_t, agent_isa: hsa_isa_t, result: *mut bool) -> hsa_status_t;
                // Extension tables
                fn hsa_system_get_major_extension_table(extension: u16, version_major: u16, table_length: usize, table: *mut c_void) -> hsa_status_t;
                fn hsa_system_get_extension_table(extension: u16, version_major: u16, version_minor: u16, table: *mut c_void) -> hsa_status_t;
                // Signals and signal groups
                fn hsa_signal_group_create(num_signals: u32, signals: *const hsa_signal_t, num_consumers: u32, consumers: *const hsa_agent_t, signal_group: *mut hsa_signal_group_t) -> hsa_status_t;
                fn hsa_signal_group_destroy(signal_group: hsa_signal_group_t) -> hsa_status_t;
                fn hsa_signal_group_wait_any_scacquire(signal_group: hsa_signal_group_t, conditions: *const u32, compare_values: *const hsa_signal_value_t, wait_state_hint: u32, signal: *mut hsa_signal_t, value: *mut hsa_signal_value_t) -> hsa_status_t;
                fn hsa_signal_group_wait_any_relaxed(signal_group: hsa_signal_group_t, conditions: *const u32, compare_values: *const hsa_signal_value_t, wait_state_hint: u32, signal: *mut hsa_signal_t, value: *mut hsa_signal_value_t) -> hsa_status_t;
                fn hsa_signal_load_acquire(signal: hsa_signal_t) -> hsa_signal_value_t;
                fn hsa_signal_store_release(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_silent_store_relaxed(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_silent_store_screlease(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_add_acquire(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_add_scacquire(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_add_release(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_add_acq_rel(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_add_scacq_screl(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_subtract_acquire(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_subtract_scacquire(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_subtract_release(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_subtract_acq_rel(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_subtract_scacq_screl(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_and_relaxed(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_and_acquire(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_and_scacquire(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_and_release(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_and_screlease(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_and_acq_rel(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_and_scacq_screl(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_or_relaxed(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_or_acquire(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_or_scacquire(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_or_release(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_or_screlease(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_or_acq_rel(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_or_scacq_screl(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_xor_relaxed(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_xor_acquire(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_xor_scacquire(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_xor_release(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_xor_screlease(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_xor_acq_rel(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_xor_scacq_screl(signal: hsa_signal_t, value: hsa_signal_value_t) -> ();
                fn hsa_signal_exchange_relaxed(signal: hsa_signal_t, value: hsa_signal_value_t) -> hsa_signal_value_t;
                fn hsa_signal_exchange_acquire(signal: hsa_signal_t, value: hsa_signal_value_t) -> hsa_signal_value_t;
                fn hsa_signal_exchange_scacquire(signal: hsa_signal_t, value: hsa_signal_value_t) -> hsa_signal_value_t;
                fn hsa_signal_exchange_release(signal: hsa_signal_t, value: hsa_signal_value_t) -> hsa_signal_value_t;
                fn hsa_signal_exchange_screlease(signal: hsa_signal_t, value: hsa_signal_value_t) -> hsa_signal_value_t;
                fn hsa_signal_exchange_acq_rel(signal: hsa_signal_t, value: hsa_signal_value_t) -> hsa_signal_value_t;
                fn hsa_signal_exchange_scacq_screl(signal: hsa_signal_t, value: hsa_signal_value_t) -> hsa_signal_value_t;
                fn hsa_signal_cas_relaxed(signal: hsa_signal_t, expected: hsa_signal_value_t, value: hsa_signal_value_t) -> hsa_signal_value_t;
                fn hsa_signal_cas_acquire(signal: hsa_signal_t, expected: hsa_signal_value_t, value: hsa_signal_value_t) -> hsa_signal_value_t;
                fn hsa_signal_cas_scacquire(signal: hsa_signal_t, expected: hsa_signal_value_t, value: hsa_signal_value_t) -> hsa_signal_value_t;
                fn hsa_signal_cas_release(signal: hsa_signal_t, expected: hsa_signal_value_t, value: hsa_signal_value_t) -> hsa_signal_value_t;
                fn hsa_signal_cas_screlease(signal: hsa_signal_t, expected: hsa_signal_value_t, value: hsa_signal_value_t) -> hsa_signal_value_t;
                fn hsa_signal_cas_acq_rel(signal: hsa_signal_t, expected: hsa_signal_value_t, value: hsa_signal_value_t) -> hsa_signal_value_t;
                fn hsa_signal_cas_scacq_screl(signal: hsa_signal_t, expected: hsa_signal_value_t, value: hsa_signal_value_t) -> hsa_signal_value_t;
                fn hsa_signal_wait_acquire(signal: hsa_signal_t, condition: u32, compare_value: hsa_signal_value_t, timeout_hint: u64, wait_state_hint: u32) -> hsa_signal_value_t;
                // Queues, their indices, priorities and profiling
                fn hsa_queue_inactivate(queue: *mut hsa_queue_t) -> hsa_status_t;
                fn hsa_amd_queue_cu_get_mask(queue: *const hsa_queue_t, num_cu_mask_count: u32, cu_mask: *mut u32) -> hsa_status_t;
                fn hsa_amd_profiling_convert_tick_to_system_domain(agent: hsa_agent_t, agent_tick: u64, system_tick: *mut u64) -> hsa_status_t;
                fn hsa_queue_load_read_index_acquire(queue: *const hsa_queue_t) -> u64;
                fn hsa_queue_load_write_index_acquire(queue: *const hsa_queue_t) -> u64;
                fn hsa_queue_load_write_index_scacquire(queue: *const hsa_queue_t) -> u64;
                fn hsa_queue_store_write_index_relaxed(queue: *const hsa_queue_t, value: u64) -> ();
                fn hsa_queue_store_write_index_release(queue: *const hsa_queue_t, value: u64) -> ();
                fn hsa_queue_store_write_index_screlease(queue: *const hsa_queue_t, value: u64) -> ();
                fn hsa_queue_store_read_index_relaxed(queue: *const hsa_queue_t, value: u64) -> ();
                fn hsa_queue_store_read_index_release(queue: *const hsa_queue_t, value: u64) -> ();
                fn hsa_queue_store_read_index_screlease(queue: *const hsa_queue_t, value: u64) -> ();
                fn hsa_queue_add_write_index_relaxed(queue: *const hsa_queue_t, value: u64) -> u64;
                fn hsa_queue_add_write_index_acquire(queue: *const hsa_queue_t, value: u64) -> u64;
                fn hsa_queue_add_write_index_scacquire(queue: *const hsa_queue_t, value: u64) -> u64;
                fn hsa_queue_add_write_index_release(queue: *const hsa_queue_t, value: u64) -> u64;
                fn hsa_queue_add_write_index_acq_rel(queue: *const hsa_queue_t, value: u64) -> u64;
                fn hsa_queue_add_write_index_scacq_screl(queue: *const hsa_queue_t, value: u64) -> u64;
                fn hsa_queue_cas_write_index_relaxed(queue: *const hsa_queue_t, expected: u64, value: u64) -> u64;
                fn hsa_queue_cas_write_index_acquire(queue: *const hsa_queue_t, expected: u64, value: u64) -> u64;
                fn hsa_queue_cas_write_index_scacquire(queue: *const hsa_queue_t, expected: u64, value: u64) -> u64;
                fn hsa_queue_cas_write_index_release(queue: *const hsa_queue_t, expected: u64, value: u64) -> u64;
                fn hsa_queue_cas_write_index_screlease(queue: *const hsa_queue_t, expected: u64, value: u64) -> u64;
                fn hsa_queue_cas_write_index_acq_rel(queue: *const hsa_queue_t, expected: u64, value: u64) -> u64;
                fn hsa_queue_cas_write_index_scacq_screl(queue: *const hsa_queue_t, expected: u64, value: u64) -> u64;
                // Memory pools, pinning and pointer queries
                fn hsa_memory_copy(dst: *mut c_void, src: *const c_void, size: usize) -> hsa_status_t;
                fn hsa_amd_pointer_info_set_userdata(ptr: *const c_void, userdata: *mut c_void) -> hsa_status_t;
                fn hsa_amd_coherency_get_type(agent: hsa_agent_t, type_: *mut u32) -> hsa_status_t;
                fn hsa_amd_coherency_set_type(agent: hsa_agent_t, type_: u32) -> hsa_status_t;
                // Regions, caches, wavefronts and ISA queries (HSA core)
                fn hsa_agent_iterate_regions(agent: hsa_agent_t, callback: Option<RegionCallback>, data: *mut c_void) -> hsa_status_t;
                fn hsa_region_get_info(region: hsa_region_t, attribute: u32, value: *mut c_void) -> hsa_status_t;
                fn hsa_memory_allocate(region: hsa_region_t, size: usize, ptr: *mut *mut c_void) -> hsa_status_t;
                fn hsa_memory_free(ptr: *mut c_void) -> hsa_status_t;
                fn hsa_memory_assign_agent(ptr: *mut c_void, agent: hsa_agent_t, access: u32) -> hsa_status_t;
                fn hsa_agent_iterate_caches(agent: hsa_agent_t, callback: Option<CacheCallback>, data: *mut c_void) -> hsa_status_t;
                fn hsa_cache_get_info(cache: hsa_cache_t, attribute: u32, value: *mut c_void) -> hsa_status_t;
                fn hsa_isa_get_info(isa: hsa_isa_t, attribute: u32, index: u32, value: *mut c_void) -> hsa_status_t;
                fn hsa_isa_iterate_wavefronts(isa: hsa_isa_t, callback: Option<WavefrontCallback>, data: *mut c_void) -> hsa_status_t;
                fn hsa_wavefront_get_info(wavefront: hsa_wavefront_t, attribute: u32, value: *mut c_void) -> hsa_status_t;
                fn hsa_agent_get_exception_policies(agent: hsa_agent_t, profile: u32, mask: *mut u16) -> hsa_status_t;
                fn hsa_isa_get_exception_policies(isa: hsa_isa_t, profile: u32, mask: *mut u16) -> hsa_status_t;
                fn hsa_isa_get_round_method(isa: hsa_isa_t, fp_type: u32, flush_mode: u32, round_method: *mut u32) -> hsa_status_t;
                // Copies
                fn hsa_amd_memory_async_copy_rect(dst: *const hsa_pitched_ptr_t, dst_offset: *const hsa_dim3_t, src: *const hsa_pitched_ptr_t, src_offset: *const hsa_dim3_t, range: *const hsa_dim3_t, copy_agent: hsa_agent_t, dir: u32, num_dep_signals: u32, dep_signals: *const hsa_signal_t, completion_signal: hsa_signal_t) -> hsa_status_t;
                fn hsa_amd_svm_prefetch_async(ptr: *mut c_void, size: usize, agent: hsa_agent_t, num_dep_signals: u32, dep_signals: *const hsa_signal_t, completion_signal: hsa_signal_t) -> hsa_status_t;
                // Shared virtual memory attributes
                fn hsa_amd_svm_attributes_set(ptr: *mut c_void, size: usize, attribute_list: *mut hsa_amd_svm_attribute_pair_t, attribute_count: usize) -> hsa_status_t;
                fn hsa_amd_svm_attributes_get(ptr: *mut c_void, size: usize, attribute_list: *mut hsa_amd_svm_attribute_pair_t, attribute_count: usize) -> hsa_status_t;
                // Code objects and executables
                fn hsa_code_object_reader_create_from_file(file: i32, reader: *mut hsa_code_object_reader_t) -> hsa_status_t;
                fn hsa_executable_get_info(executable: hsa_executable_t, attribute: u32, value: *mut c_void) -> hsa_status_t;
                fn hsa_executable_iterate_agent_symbols(executable: hsa_executable_t, agent: hsa_agent_t, callback: Option<AgentSymbolCallback>, data: *mut c_void) -> hsa_status_t;
                fn hsa_executable_create(profile: u32, executable_state: u32, options: *const c_char, executable: *mut hsa_executable_t) -> hsa_status_t;
                fn hsa_executable_get_symbol(executable: hsa_executable_t, module_name: *const c_char, symbol_name: *const c_char, agent: hsa_agent_t, call_convention: i32, symbol: *mut hsa_executable_symbol_t) -> hsa_status_t;
                fn hsa_executable_global_variable_define(executable: hsa_executable_t, variable_name: *const c_char, address: *mut c_void) -> hsa_status_t;
                fn hsa_executable_readonly_variable_define(executable: hsa_executable_t, agent: hsa_agent_t, variable_name: *const c_char, address: *mut c_void) -> hsa_status_t;
                fn hsa_executable_iterate_program_symbols(executable: hsa_executable_t, callback: Option<SymbolCallback>, data: *mut c_void) -> hsa_status_t;
                fn hsa_executable_validate(executable: hsa_executable_t, result: *mut u32) -> hsa_status_t;
                fn hsa_executable_validate_alt(executable: hsa_executable_t, options: *const c_char, result: *mut u32) -> hsa_status_t;
                // Inter-process memory and signals
                fn hsa_amd_ipc_signal_create(signal: hsa_signal_t, handle: *mut hsa_amd_ipc_signal_t) -> hsa_status_t;
                fn hsa_amd_ipc_signal_attach(handle: *const hsa_amd_ipc_signal_t, signal: *mut hsa_signal_t) -> hsa_status_t;
                // Virtual memory
                fn hsa_amd_vmem_address_reserve(ptr: *mut *mut c_void, size: usize, address: u64, flags: u64) -> hsa_status_t;
            }
            not_modelled {
                hsa_amd_image_create,
                hsa_amd_image_get_info_max_dim,
                hsa_amd_interop_map_buffer,
                hsa_amd_interop_unmap_buffer,
                hsa_amd_memory_migrate,
                hsa_amd_memory_pool_can_migrate,
                hsa_amd_register_system_event_handler,
                hsa_amd_register_deallocation_callback,
                hsa_amd_deregister_deallocation_callback,
                hsa_amd_async_function,
                hsa_ext_image_create,
                hsa_ext_image_create_with_layout,
                hsa_ext_image_data_get_info,
                hsa_ext_image_data_get_info_with_layout,
                hsa_ext_image_destroy,
                hsa_ext_image_export,
                hsa_ext_image_import,
                hsa_ext_image_clear,
                hsa_ext_image_copy,
                hsa_ext_image_get_capability,
                hsa_ext_image_get_capability_with_layout,
                hsa_ext_sampler_create,
                hsa_ext_sampler_destroy,
                hsa_ext_program_create,
                hsa_ext_program_destroy,
                hsa_ext_program_add_module,
                hsa_ext_program_finalize,
                hsa_ext_program_get_info,
                hsa_ext_program_iterate_modules,
                hsa_code_object_serialize,
                hsa_code_object_deserialize,
                hsa_code_object_destroy,
                hsa_code_object_get_info,
                hsa_code_object_get_symbol,
                hsa_code_object_get_symbol_from_name,
                hsa_code_object_iterate_symbols,
                hsa_code_symbol_get_info,
                hsa_executable_load_code_object,
                hsa_executable_load_program_code_object,
                hsa_soft_queue_create,
            }
        }
    };
}

/// What hipshim does with an entry point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// In hipshim's table; a runtime without it cannot be used.
    Required,
    /// In hipshim's table when the runtime has it; `reason` says what happens without it.
    Optional {
        group: &'static str,
        reason: &'static str,
    },
    /// Exported by hsasim for other clients; hipshim does not call it.
    RuntimeOnly,
    /// Exported by hsasim as a stub that returns `HSA_STATUS_ERROR`; no signature declared.
    NotModelled,
}

/// One declared entry point. `params` and `ret` are the Rust types as written in the list,
/// for tests that compare them with C headers.
#[derive(Clone, Copy, Debug)]
pub struct EntryPoint {
    pub name: &'static str,
    pub role: Role,
    pub params: &'static [&'static str],
    pub ret: &'static str,
}

macro_rules! declare {
    (
        client_required { $( fn $name:ident($($arg:ident : $ty:ty),*) -> $ret:ty; )* }
        client_optional { $( $group:ident : $reason:literal {
            $( fn $oname:ident($($oarg:ident : $oty:ty),*) -> $oret:ty; )*
        } )* }
        runtime_only { $( fn $rname:ident($($rarg:ident : $rty:ty),*) -> $rret:ty; )* }
        not_modelled { $( $uname:ident, )* }
    ) => {
        $(
            #[doc = concat!("`", stringify!($name), "` (required by hipshim).")]
            pub type $name = unsafe extern "C" fn($($arg: $ty),*) -> $ret;
        )*
        $($(
            #[doc = concat!("`", stringify!($oname), "` (optional for hipshim: ", $reason, ")")]
            pub type $oname = unsafe extern "C" fn($($oarg: $oty),*) -> $oret;
        )*)*
        $(
            #[doc = concat!("`", stringify!($rname), "` (exported by hsasim; hipshim does not call it).")]
            pub type $rname = unsafe extern "C" fn($($rarg: $rty),*) -> $rret;
        )*

        /// hipshim's optional entry points by group: each group is usable only when the
        /// runtime has all of it.
        pub mod optional {
            $(
                #[doc = $reason]
                pub const $group: &[&str] = &[$(stringify!($oname)),*];
            )*
        }

        /// Every declared entry point: the client table's first (in its order), then the
        /// runtime-only ones, then the stubs hsasim does not model.
        pub const ENTRY_POINTS: &[EntryPoint] = &[
            $(EntryPoint {
                name: stringify!($name),
                role: Role::Required,
                params: &[$(stringify!($ty)),*],
                ret: stringify!($ret),
            },)*
            $($(EntryPoint {
                name: stringify!($oname),
                role: Role::Optional { group: stringify!($group), reason: $reason },
                params: &[$(stringify!($oty)),*],
                ret: stringify!($oret),
            },)*)*
            $(EntryPoint {
                name: stringify!($rname),
                role: Role::RuntimeOnly,
                params: &[$(stringify!($rty)),*],
                ret: stringify!($rret),
            },)*
            $(EntryPoint {
                name: stringify!($uname),
                role: Role::NotModelled,
                params: &[],
                ret: "",
            },)*
        ];
    };
}

hsa_entry_points!(declare);

//! HSA entry points the simulator does not model. Each returns `HSA_STATUS_ERROR` (the
//! documented generic failure) and logs its name once; none pretends to succeed.

use super::shell::report_once;
use hsa_abi::{hsa_status_t, status};

macro_rules! unsupported {
    ($($name:ident),* $(,)?) => {
        $(
            #[no_mangle]
            pub extern "C" fn $name() -> hsa_status_t {
                report_once(stringify!($name), concat!(stringify!($name), " is not modelled by hsasim; returning HSA_STATUS_ERROR"));
                status::ERROR
            }
            crate::api::shell::rocr_symver!($name);
        )*
        /// Every exported function that only reports "not modelled".
        pub const UNSUPPORTED: &[&str] = &[$(stringify!($name)),*];
    };
}

// Callers pass arguments we ignore: with the C calling convention an argument-less callee
// is safe to call with any arguments, and we never touch them.
unsupported!(
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
);

include!(concat!(env!("OUT_DIR"), "/symver_api_unsupported.rs"));

//! HSA entry points the simulator does not model. Each returns `HSA_STATUS_ERROR` (the
//! documented generic failure) and logs its name once; none pretends to succeed.

use super::shell::report_once;
use hsa_abi::{hsa_status_t, status};

/// Makes the not-modelled exports from the `not_modelled` section of `hsa_abi`'s declaration
/// (`hsa_abi::hsa_entry_points!`), the one list of them; the other sections are served by the
/// other shells.
macro_rules! unsupported_from_declaration {
    (
        client_required $required:tt
        client_optional $optional:tt
        runtime_only $runtime_only:tt
        not_modelled { $($name:ident,)* }
    ) => {
        $(
            // Callers pass arguments we ignore: with the C calling convention an
            // argument-less callee is safe to call with any arguments, and we never touch them.
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

hsa_abi::hsa_entry_points!(unsupported_from_declaration);

include!(concat!(env!("OUT_DIR"), "/symver_api_unsupported.rs"));

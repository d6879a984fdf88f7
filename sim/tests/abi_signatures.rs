//! Every function hsasim exports has the signature `hsa_abi::fns` declares for it, checked
//! by the compiler: each `const` below coerces the export to the declared function-pointer
//! type, which compiles only when parameter and return types agree exactly. A declared
//! function hsasim does not export does not compile either (its name is not found).
//!
//! The other direction (an export hsa-abi does not declare) is `tests/exports.rs`'s
//! `every_exported_hsa_function_is_declared`, which reads the built library's symbols.

use hsasim::api::{
    copy::*, executable::*, extension::*, ipc::*, memory::*, queue::*, region::*, signal::*,
    svm::*, system::*, vmem::*,
};

macro_rules! check_exports {
    (
        client_required { $( fn $name:ident($($arg:ident : $ty:ty),*) -> $ret:ty; )* }
        client_optional { $( $group:ident : $reason:literal {
            $( fn $oname:ident($($oarg:ident : $oty:ty),*) -> $oret:ty; )*
        } )* }
        runtime_only { $( fn $rname:ident($($rarg:ident : $rty:ty),*) -> $rret:ty; )* }
        not_modelled { $( $uname:ident, )* }
    ) => {
        $( const _: hsa_abi::fns::$name = $name; )*
        $($( const _: hsa_abi::fns::$oname = $oname; )*)*
        $( const _: hsa_abi::fns::$rname = $rname; )*
        // The not-modelled stubs are made from this same section
        // (`hsasim::api::unsupported`), so there is nothing to compare.
    };
}

hsa_abi::hsa_entry_points!(check_exports);

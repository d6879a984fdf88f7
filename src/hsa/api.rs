//! The HSA runtime's entry points, resolved once from whichever library serves this process
//! (ROCr or hsasim). The shim calls the HSA runtime only through this table, so the simulator
//! is never special-cased.
//!
//! Which entry points the table holds, their signatures and which are optional are not
//! written here: `hsa_abi::fns` declares them once (its client sections), and the same
//! declaration is what hsasim's exports and ROCm's headers are checked against.

use hsa_abi::*;
use libloading::Library;
use std::path::{Path, PathBuf};

/// A wrapper with the signature of one HSA entry point that counts the call and its time for
/// the stats, then calls the real function (whose address is in `REAL`). Installed in the
/// table instead of the real function only while recording, so it costs nothing otherwise.
macro_rules! counted_fn {
    ($name:ident, $id:expr, ($($arg:ident : $ty:ty),*) -> $ret:ty) => {
        pub mod $name {
            use super::*;
            pub static REAL: AtomicUsize = AtomicUsize::new(0);
            pub unsafe extern "C" fn wrapper($($arg: $ty),*) -> $ret {
                // SAFETY: REAL holds the address of the runtime's function of exactly this
                // signature, stored by `HsaApi::load` before this wrapper was put in the table.
                let real: fns::$name =
                    unsafe { std::mem::transmute::<usize, _>(REAL.load(Ordering::Relaxed)) };
                let started = crate::probe::host_ns();
                // SAFETY: the caller's contract for the HSA function.
                let result = unsafe { real($($arg),*) };
                crate::probe::count_hsa($id as usize, started);
                result
            }
        }
    };
}

/// Builds the table from `hsa_abi`'s declaration (`hsa_abi::hsa_entry_points!`): its client
/// sections, in their order; the entry points only hsasim needs are not loaded.
macro_rules! hsa_table {
    (
        client_required { $( fn $name:ident($($arg:ident : $ty:ty),*) -> $ret:ty; )* }
        client_optional { $( $group:ident : $reason:literal {
            $( fn $oname:ident($($oarg:ident : $oty:ty),*) -> $oret:ty; )*
        } )* }
        $($not_called:tt)*
    ) => {
        /// Function pointers into the loaded HSA runtime, typed by `hsa_abi::fns`. Optional
        /// entry points are absent from older ROCr releases (e.g. ROCm 5.2 has no
        /// `..._async_copy_on_engine`); `hsa_abi::fns::optional` says what happens then.
        pub struct HsaApi {
            $( pub $name: fns::$name, )*
            $($( pub $oname: Option<fns::$oname>, )*)*
            /// Where the library was loaded from.
            pub path: PathBuf,
            _library: Library,
        }

        /// The table's entry points in order: the stats name HSA calls by these indices.
        pub const HSA_FN_NAMES: &[&str] = &[$(stringify!($name),)* $($(stringify!($oname),)*)*];

        /// Counting wrappers, one per entry point (see `counted_fn!`). The table above uses
        /// them; they name nothing of it, so the two are not a circle.
        #[allow(clippy::too_many_arguments)]
        mod counted {
            use hsa_abi::*;
            #[allow(unused_imports)]
            use std::ffi::{c_char, c_void};
            use std::sync::atomic::{AtomicUsize, Ordering};

            #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
            #[derive(Clone, Copy)]
            enum FnId { $($name,)* $($($oname,)*)* }

            $( counted_fn!($name, FnId::$name, ($($arg: $ty),*) -> $ret); )*
            $($( counted_fn!($oname, FnId::$oname, ($($oarg: $oty),*) -> $oret); )*)*
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
                // `hsa_abi::fns` declares for it (ROCm's headers', checked by hsa-abi's tests).
                unsafe {
                    Ok(HsaApi {
                        $( $name: {
                            let real = *library
                                .get::<fns::$name>(concat!(stringify!($name), "\0").as_bytes())
                                .map_err(|_| format!("{} does not export {}", path.display(), stringify!($name)))?;
                            if count {
                                counted::$name::REAL.store(real as usize, Ordering::Relaxed);
                                counted::$name::wrapper as fns::$name
                            } else {
                                real
                            }
                        }, )*
                        $($( $oname: library
                            .get::<fns::$oname>(concat!(stringify!($oname), "\0").as_bytes())
                            .ok()
                            .map(|s| {
                                let real = *s;
                                if count {
                                    counted::$oname::REAL.store(real as usize, Ordering::Relaxed);
                                    counted::$oname::wrapper as fns::$oname
                                } else {
                                    real
                                }
                            }), )*)*
                        path: path.to_path_buf(),
                        _library: library,
                    })
                }
            }

            /// The optional entry points this runtime lacks (each has a fallback).
            pub fn absent_optional(&self) -> Vec<&'static str> {
                let mut absent = Vec::new();
                $($( if self.$oname.is_none() { absent.push(stringify!($oname)); } )*)*
                absent
            }

            /// The first entry point of `group` (one of `hsa_abi::fns::optional`'s lists)
            /// this runtime lacks, if any. A name outside the optional sections counts as
            /// absent: the table has no `Option` to ask.
            pub fn first_absent(&self, group: &[&'static str]) -> Option<&'static str> {
                group.iter().copied().find(|name| match *name {
                    $($( stringify!($oname) => self.$oname.is_none(), )*)*
                    _ => true,
                })
            }
        }
    };
}

hsa_abi::hsa_entry_points!(hsa_table);

impl HsaApi {
    /// `hsa_system_get_info` itself, never its counting wrapper: the recorder reads the
    /// device's clock through it for every event on a virtual time line, and those reads are
    /// not the program's HSA calls.
    pub fn system_get_info_uncounted(&self) -> fns::hsa_system_get_info {
        let real = counted::hsa_system_get_info::REAL.load(std::sync::atomic::Ordering::Relaxed);
        if real == 0 {
            self.hsa_system_get_info
        } else {
            // SAFETY: REAL holds the runtime's `hsa_system_get_info`, stored by `load` with
            // exactly this signature.
            unsafe { std::mem::transmute::<usize, fns::hsa_system_get_info>(real) }
        }
    }

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

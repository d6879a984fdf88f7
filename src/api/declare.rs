//! `hip_api!`: every exported C function is declared once, in the `api/` file named after the
//! runtime file it calls. A declaration gives the C name, each parameter's ABI type (from the
//! fixed vocabulary of `types.rs`), optionally the checked type the body receives instead
//! (`=> Out<i32>`: converted by [`FromAbi`](super::convert::FromAbi) before the body runs), the
//! return type and, after `as`, how the call is wrapped:
//!
//! - (nothing) `-> hipError_t`: through [`call`](super::call); the body is a `HipResult`;
//! - `as value(FAILED)`: through [`call_value`](super::call_value); the body is a
//!   `HipResult<T>`, and a failure returns `FAILED` (after recording the last error);
//! - `as rtc`, `-> hiprtcResult`: through [`call_rtc`](super::call_rtc); the body is an
//!   `RtcResult` (hiprtc's own codes; a failed conversion is `HIPRTC_ERROR_INVALID_INPUT`,
//!   a bad handle `HIPRTC_ERROR_INVALID_PROGRAM`), and the last HIP error is left alone;
//! - `as void`, `-> ()`: through [`call_void`](super::call_void); no conversions;
//! - `as plain(FAILED)`: through [`call_plain`](super::call_plain), which only catches panics:
//!   for the calls that must not touch the last error or the trace (`hipGetLastError`, the
//!   `<<<...>>>` configuration push).
//!
//! The logged and traced name is the C name itself. Each declaration also adds its row to the
//! file's `SIGNATURES`, which `api::ABI_SIGNATURES` gathers for the header test.
//!
//! A C name that is another entry point under a second name (an `_spt` "per-thread default
//! stream" form, a C++-mangled name, a driver-API or deprecated spelling) is not written out
//! again: an `alias` line right after the declaration it repeats exports it, with the same
//! parameters, conversions and body, its own `SIGNATURES` row, and its own name in the log
//! and the trace:
//!
//! - `alias hipMemcpy_spt = hipMemcpy;` the same call under another name;
//! - `alias hipMemcpyAsync_spt = hipMemcpyAsync with stream: PerThread;` the same, with the
//!   parameter `stream` converted through [`PerThread`](super::convert::PerThread) first
//!   (a null handle is the calling thread's stream); the declaration must have a parameter
//!   named `stream`.
//!
//! An alias's rustdoc is generated; a note on one is a `//` comment (a `///` would belong to
//! the next declaration).
//!
//! `build.rs` finds the implemented names by reading these blocks: a declaration starts with
//! `fn NAME(` on its own line, an alias with `alias NAME =`, inside a block that opens with
//! `hip_api! {` and closes with a `}` in column 0.

/// One exported function as declared: the table `api::ABI_SIGNATURES` lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AbiSignature {
    pub name: &'static str,
    /// each parameter's ABI type exactly as written in the declaration (stringify!),
    /// e.g. "*mut *mut c_void", "u32", "Dim3", "hipStream_t", "Option<HostFn>"
    pub params: &'static [&'static str],
    /// "hipError_t", "()" for void, or the type as written
    pub ret: &'static str,
}

macro_rules! hip_api {
    ($(
        $(#[$attr:meta])*
        fn $name:ident $params:tt -> $ret:ty
            $(as $mode:ident $(($failed:expr))?)?
            $body:block
        $(alias $alias:ident = $target:ident $(with stream: $wrapper:ident)?;)*
    )*) => {
        $(
            hip_api!(@declaration [$(#[$attr])*] $name $params [$ret] [$($mode $(($failed))?)?] $body
                [$([$alias = $target $($wrapper)?])*]);
        )*

        /// This file's declarations and aliases, in order (gathered into
        /// `api::ABI_SIGNATURES`).
        pub(super) const SIGNATURES: &[$crate::api::AbiSignature] = &[$(
            hip_api!(@row $name $params [$ret]),
            $(hip_api!(@row $alias $params [$ret]),)*
        )*];
    };

    // One declaration and its aliases, each an exported shell of its own (the body is
    // expanded once per name).
    (@declaration $attrs:tt $name:ident $params:tt $ret:tt $mode:tt $body:block [$($alias:tt)*]) => {
        hip_api!(@shell $attrs $name $params $ret $mode [] $body);
        $(hip_api!(@alias $alias $name $params $ret $mode $body);)*
    };
    (@alias [$alias:ident = $target:ident $($wrapper:ident)?] $name:ident $params:tt $ret:tt $mode:tt $body:block) => {
        const _: () = assert!(
            $crate::api::declare::same_name(stringify!($target), stringify!($name)),
            concat!("alias ", stringify!($alias), " must follow the declaration of ", stringify!($target))
        );
        hip_api!(@shell
            [#[doc = concat!("`", stringify!($target), "` under the name `", stringify!($alias), "`",
                $(" (`stream` through `", stringify!($wrapper), "`)",)? ".")]]
            $alias $params $ret $mode [$($wrapper)?] $body);
    };

    (@shell
        [$($attrs:tt)*]
        $name:ident ($($param:ident : $raw:ty $(=> $checked:ty)?),* $(,)?)
        [$ret:ty] [$($mode:tt)*] $wrapper:tt $body:block
    ) => {
        $($attrs)*
        ///
        /// # Safety
        /// HIP's contract for this C function: its pointer arguments are null where HIP
        /// allows it, or point to what HIP documents for them.
        #[no_mangle]
        #[allow(non_snake_case, clippy::too_many_arguments)]
        #[deny(unsafe_op_in_unsafe_fn)]
        pub unsafe extern "C" fn $name($($param: $raw),*) -> $ret {
            hip_api!(@wrap [$($mode)*] $name $wrapper { $($param : $raw $(=> $checked)?),* } $body)
        }
    };

    (@row $name:ident ($($param:ident : $raw:ty $(=> $checked:ty)?),* $(,)?) [$ret:ty]) => {
        $crate::api::AbiSignature {
            name: stringify!($name),
            params: &[$(stringify!($raw)),*],
            ret: stringify!($ret),
        }
    };

    (@wrap [] $name:ident $wrapper:tt { $($conversions:tt)* } $body:block) => {
        // `move`: the parameters (plain C values) go to the body in registers rather than
        // through a block of pointers to their stack copies.
        $crate::api::call(stringify!($name), move || {
            hip_api!(@convert $wrapper $($conversions)*);
            $body
        })
    };
    (@wrap [value($failed:expr)] $name:ident $wrapper:tt { $($conversions:tt)* } $body:block) => {
        $crate::api::call_value(stringify!($name), $failed, || {
            hip_api!(@convert $wrapper $($conversions)*);
            $body
        })
    };
    (@wrap [rtc] $name:ident $wrapper:tt { $($conversions:tt)* } $body:block) => {
        $crate::api::call_rtc(stringify!($name), || {
            hip_api!(@convert $wrapper $($conversions)*);
            $body
        })
    };
    // No conversions in these two, so no `with stream:` either.
    (@wrap [void] $name:ident [] { $($param:ident : $raw:ty),* } $body:block) => {
        $crate::api::call_void(stringify!($name), || $body)
    };
    (@wrap [plain($failed:expr)] $name:ident [] { $($param:ident : $raw:ty),* } $body:block) => {
        $crate::api::call_plain(stringify!($name), $failed, || $body)
    };

    (@convert [] $($param:ident : $raw:ty $(=> $checked:ty)?),*) => {
        $( hip_api!(@convert_one $param : $raw $(=> $checked)?); )*
    };
    (@convert [$wrapper:ident] $($param:ident : $raw:ty $(=> $checked:ty)?),*) => {
        const _: () = assert!(
            $crate::api::declare::names_stream(&[$(stringify!($param)),*]),
            "`with stream:` names a parameter the declaration does not have"
        );
        $( hip_api!(@convert_one [$wrapper] $param : $raw $(=> $checked)?); )*
    };
    // An alias's `stream`: through the wrapper, then as the declaration converts it. (The
    // name comes twice: once to match, once to bind, since a name written in the macro would
    // not be the parameter's.)
    (@convert_one [$wrapper:ident] $param:ident : $raw:ty $(=> $checked:ty)?) => {
        hip_api!(@convert_one_of $param [$wrapper] $param : $raw $(=> $checked)?);
    };
    (@convert_one_of stream [$wrapper:ident] $param:ident : $raw:ty => $checked:ty) => {
        // SAFETY: as for any conversion below; the wrapper only chooses which stream a null
        // handle names.
        let $param: $checked = unsafe {
            <$wrapper<$checked> as $crate::api::FromAbi<$raw>>::from_abi($param, stringify!($param))
        }?.0;
    };
    (@convert_one_of stream [$wrapper:ident] $param:ident : $raw:ty) => {
        hip_api!(@convert_one_of stream [$wrapper] $param : $raw => $raw);
    };
    (@convert_one_of $other:ident [$wrapper:ident] $($rest:tt)*) => {
        hip_api!(@convert_one $($rest)*);
    };
    (@convert_one $param:ident : $raw:ty) => {};
    (@convert_one $param:ident : $raw:ty => $checked:ty) => {
        // SAFETY: the raw value is what HIP's contract promises for this parameter, which is
        // what `FromAbi` requires.
        let $param: $checked = unsafe {
            <$checked as $crate::api::FromAbi<$raw>>::from_abi($param, stringify!($param))
        }?;
    };
}

pub(crate) use hip_api;

/// The rows of several tables, one after the other (for `api::ABI_SIGNATURES`).
pub(super) const fn concat<const N: usize>(parts: &[&[AbiSignature]]) -> [AbiSignature; N] {
    const EMPTY: AbiSignature = AbiSignature {
        name: "",
        params: &[],
        ret: "",
    };
    let mut all = [EMPTY; N];
    let (mut part, mut filled) = (0, 0);
    while part < parts.len() {
        let mut row = 0;
        while row < parts[part].len() {
            all[filled] = parts[part][row];
            filled += 1;
            row += 1;
        }
        part += 1;
    }
    assert!(filled == N, "N is the number of rows of all parts");
    all
}

/// Whether two names are the same (`str`'s `==` is not `const`): an alias names the
/// declaration it follows.
pub(super) const fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Whether a declaration has a parameter named `stream` (what `with stream:` converts).
pub(super) const fn names_stream(params: &[&str]) -> bool {
    let mut i = 0;
    while i < params.len() {
        if same_name(params[i], "stream") {
            return true;
        }
        i += 1;
    }
    false
}

/// How many rows the tables have together.
pub(super) const fn total(parts: &[&[AbiSignature]]) -> usize {
    let (mut part, mut rows) = (0, 0);
    while part < parts.len() {
        rows += parts[part].len();
        part += 1;
    }
    rows
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_compare_whole() {
        assert!(super::same_name("hipMemcpy", "hipMemcpy"));
        assert!(!super::same_name("hipMemcpy", "hipMemcpyAsync"));
        assert!(!super::same_name("hipMemcpy", "hipMemset"));
        assert!(super::names_stream(&["dst", "stream"]));
        assert!(!super::names_stream(&["dst", "streams"]));
    }
}

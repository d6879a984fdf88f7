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
//! `build.rs` finds the implemented names by reading these blocks: a declaration starts with
//! `fn NAME(` on its own line inside a block that opens with `hip_api! {` and closes with a
//! `}` in column 0.

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
        fn $name:ident ( $($param:ident : $raw:ty $(=> $checked:ty)?),* $(,)? ) -> $ret:ty
            $(as $mode:ident $(($failed:expr))?)?
            $body:block
    )*) => {
        $(
            $(#[$attr])*
            ///
            /// # Safety
            /// HIP's contract for this C function: its pointer arguments are null where HIP
            /// allows it, or point to what HIP documents for them.
            #[no_mangle]
            #[allow(non_snake_case, clippy::too_many_arguments)]
            #[deny(unsafe_op_in_unsafe_fn)]
            pub unsafe extern "C" fn $name($($param: $raw),*) -> $ret {
                hip_api!(@wrap [$($mode $(($failed))?)?] $name { $($param : $raw $(=> $checked)?),* } $body)
            }
        )*

        /// This file's declarations, in order (gathered into `api::ABI_SIGNATURES`).
        pub(super) const SIGNATURES: &[$crate::api::AbiSignature] = &[$(
            $crate::api::AbiSignature {
                name: stringify!($name),
                params: &[$(stringify!($raw)),*],
                ret: stringify!($ret),
            }
        ),*];
    };

    (@wrap [] $name:ident { $($conversions:tt)* } $body:block) => {
        // `move`: the parameters (plain C values) go to the body in registers rather than
        // through a block of pointers to their stack copies.
        $crate::api::call(stringify!($name), move || {
            hip_api!(@convert $($conversions)*);
            $body
        })
    };
    (@wrap [value($failed:expr)] $name:ident { $($conversions:tt)* } $body:block) => {
        $crate::api::call_value(stringify!($name), $failed, || {
            hip_api!(@convert $($conversions)*);
            $body
        })
    };
    (@wrap [rtc] $name:ident { $($conversions:tt)* } $body:block) => {
        $crate::api::call_rtc(stringify!($name), || {
            hip_api!(@convert $($conversions)*);
            $body
        })
    };
    (@wrap [void] $name:ident { $($param:ident : $raw:ty),* } $body:block) => {
        $crate::api::call_void(stringify!($name), || $body)
    };
    (@wrap [plain($failed:expr)] $name:ident { $($param:ident : $raw:ty),* } $body:block) => {
        $crate::api::call_plain(stringify!($name), $failed, || $body)
    };

    (@convert $($param:ident : $raw:ty $(=> $checked:ty)?),*) => {
        $( hip_api!(@convert_one $param : $raw $(=> $checked)?); )*
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

/// How many rows the tables have together.
pub(super) const fn total(parts: &[&[AbiSignature]]) -> usize {
    let (mut part, mut rows) = (0, 0);
    while part < parts.len() {
        rows += parts[part].len();
        part += 1;
    }
    rows
}

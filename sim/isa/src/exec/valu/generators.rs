//! The macros that generate the element-wise handlers (`v1!`, `v2!`, `v3!` for 32-bit
//! operands, `w64!` / `n64!` for ops with 64-bit sources): each expands to one handler that
//! reads its sources, computes all 64 lanes (with an exact path for directed rounding
//! modes) and writes the result.

use super::*;

macro_rules! v1 {
    ($($name:ident($fl:expr) => |$a:ident| $body:expr $(, round $rk:ident |$rm:ident| $rbody:expr)?;)*) => {$(
        simd_handler! { pub fn $name(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
            simd_handler! {
                /// Everything the fast path leaves, out of line: its stack arrays would
                /// otherwise be set up (and registers saved) on every call.
                #[inline(never)]
                fn general(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
                    let ([mut $a], mask) = srcs32::<1>(w, i, $fl);
                    if $fl && flush_inputs(w, i) { flush_lanes32(&mut $a); }
                    let mut d = [0u32; LANES];
                    // A directed rounding mode takes the exact (slow) path; the mode is read once.
                    #[allow(unused_mut)]
                    let mut directed = false;
                    $(let $rm = round::$rk(w.mode);
                    if $rm != Rm::NearestEven {
                        directed = true;
                        for l in 0..LANES { let $a = $a[l]; d[l] = $rbody; }
                    })?
                    if !directed { for l in 0..LANES { let $a = $a[l]; d[l] = $body; } }
                    result_mods32(w, i, &mut d);
                    out32(w, i, mask, &mut d);
                    OK
                }
            }
            if fast32::<1>(w, i, $fl, |[$a]| $body) { return OK; }
            general(w, i, c)
        } }
    )*};
}

macro_rules! v2 {
    ($($name:ident($fl:expr) => |$a:ident, $bb:ident| $body:expr $(, round $rk:ident |$rm:ident| $rbody:expr)?;)*) => {$(
        simd_handler! { pub fn $name(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
            simd_handler! {
                /// Everything the fast path leaves, out of line: its stack arrays would
                /// otherwise be set up (and registers saved) on every call.
                #[inline(never)]
                fn general(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
                    let ([mut $a, mut $bb], mask) = srcs32::<2>(w, i, $fl);
                    if $fl && flush_inputs(w, i) {
                        flush_lanes32(&mut $a);
                        // ldexp's second operand is an integer exponent.
                        if stringify!($name) != "v_ldexp_f32" { flush_lanes32(&mut $bb); }
                    }
                    let mut d = [0u32; LANES];
                    #[allow(unused_mut)]
                    let mut directed = false;
                    $(let $rm = round::$rk(w.mode);
                    if $rm != Rm::NearestEven {
                        directed = true;
                        for l in 0..LANES { let ($a, $bb) = ($a[l], $bb[l]); d[l] = $rbody; }
                    })?
                    if !directed { for l in 0..LANES { let ($a, $bb) = ($a[l], $bb[l]); d[l] = $body; } }
                    if !result_mods32(w, i, &mut d) && i.clamp { int_clamp(stringify!($name), &$a, &$bb, &mut d); }
                    out32(w, i, mask, &mut d);
                    OK
                }
            }
            if fast32::<2>(w, i, $fl, |[$a, $bb]| $body) { return OK; }
            general(w, i, c)
        } }
    )*};
}

macro_rules! v3 {
    ($($name:ident($fl:expr) => |$a:ident, $bb:ident, $cc:ident| $body:expr $(, round $rk:ident |$rm:ident| $rbody:expr)?;)*) => {$(
        simd_handler! { pub fn $name(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
            simd_handler! {
                /// Everything the fast path leaves, out of line: its stack arrays would
                /// otherwise be set up (and registers saved) on every call.
                #[inline(never)]
                fn general(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
                    let ([mut $a, mut $bb, mut $cc], mask) = srcs32::<3>(w, i, $fl);
                    if $fl && flush_inputs(w, i) {
                        flush_lanes32(&mut $a);
                        flush_lanes32(&mut $bb);
                        flush_lanes32(&mut $cc);
                    }
                    let mut d = [0u32; LANES];
                    #[allow(unused_mut)]
                    let mut directed = false;
                    $(let $rm = round::$rk(w.mode);
                    if $rm != Rm::NearestEven {
                        directed = true;
                        for l in 0..LANES { let ($a, $bb, $cc) = ($a[l], $bb[l], $cc[l]); d[l] = $rbody; }
                    })?
                    if !directed { for l in 0..LANES { let ($a, $bb, $cc) = ($a[l], $bb[l], $cc[l]); d[l] = $body; } }
                    result_mods32(w, i, &mut d);
                    out32(w, i, mask, &mut d);
                    OK
                }
            }
            if fast32::<3>(w, i, $fl, |[$a, $bb, $cc]| $body) { return OK; }
            general(w, i, c)
        } }
    )*};
}

/// Ops whose `N` sources may be 64 bits wide (per the op's widths): `w64!` gives a 64-bit
/// result (float output modifiers applied), `n64!` a 32-bit one (conversions from f64, f64
/// class...). Both expand [`wide_sources!`], which differs only in the result element and
/// how it is written back.
macro_rules! wide_sources {
    ($elem:ty, $finish:path, $fast:ident; $($name:ident<$n:literal>($fl:expr) => |$($a:ident),*| $body:expr $(, round $rk:ident |$rm:ident; $($ra:ident),*| $rbody:expr)?;)*) => {$(
        simd_handler! { pub fn $name(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
            if $fast::<$n>(w, i, $fl, |[$($a),*]| $body) { return OK; }
            let ([$($a),*], mask) = srcs64::<$n>(w, i, $fl);
            let mut d: [$elem; LANES] = [0; LANES];
            #[allow(unused_mut)]
            let mut directed = false;
            $(let $rm = round::$rk(w.mode);
            if $rm != Rm::NearestEven {
                directed = true;
                for l in 0..LANES { $(let $ra = $ra[l];)* d[l] = $rbody; }
            })?
            if !directed { for l in 0..LANES { $(let $a = $a[l];)* d[l] = $body; } }
            $finish(w, i, mask, &mut d, $fl);
            OK
        } }
    )*};
}
macro_rules! w64 {
    ($($t:tt)*) => { wide_sources!(u64, finish_wide, fast64; $($t)*); };
}
macro_rules! n64 {
    ($($t:tt)*) => { wide_sources!(u32, finish_narrow, no_fast; $($t)*); };
}

/// Writes a 64-bit result, after the float output modifiers when it is an f64 (an f64
/// converted from an integer included).
#[inline(always)]
pub(super) fn finish_wide(w: &mut Wave, i: &Inst, mask: u64, d: &mut L64, _float: bool) {
    if float_result(i.info.name, "_f64") {
        fmods64(w, i, d);
    }
    out64(w, i, mask, d);
}

/// Writes a 32-bit result computed from wide sources, after the float output modifiers
/// when it is a float (`v_cvt_f32_f64`).
#[inline(always)]
pub(super) fn finish_narrow(w: &mut Wave, i: &Inst, mask: u64, d: &mut Lanes, _float: bool) {
    result_mods32(w, i, d);
    out32(w, i, mask, d);
}

/// No fast path (ops with 64-bit sources and 32-bit results always take the general one).
#[inline(always)]
pub(super) fn no_fast<const N: usize>(
    _: &mut Wave,
    _: &Inst,
    _: bool,
    _: impl Fn([u64; N]) -> u32,
) -> bool {
    false
}

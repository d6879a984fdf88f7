//! Vector ALU: VOP1, VOP2, VOPC, VOP3 (incl. VOP3b), VOP3P, with DPP/SDWA source forms.
//!
//! Handlers read whole source registers (64 lanes) into stack arrays, compute every lane
//! (arithmetic has no side effects, so inactive lanes cost nothing but time) and write the
//! result under EXEC. That keeps the inner loops branch-free for the compiler.

use super::round::{self, Rm, F16 as H16, F32 as S32, F64 as D64};
use super::{Ctx, Step};
use crate::api::DispatchError;
use crate::inst::{Enc, Ext, Inst};
use crate::wave::{Lanes, Wave, LANES};

type R = Result<Step, DispatchError>;
const OK: R = Ok(Step::Continue);
type L64 = [u64; LANES];

// ------------------------------------------------------------------ operand plumbing

/// Reads `N` 32-bit sources; returns them and the write mask (EXEC, narrowed by DPP).
#[inline(always)]
fn srcs32<const N: usize>(w: &Wave, i: &Inst, float: bool) -> ([Lanes; N], u64) {
    let mut s = [[0u32; LANES]; N];
    let mut mask = w.exec();
    for (n, out) in s.iter_mut().enumerate() {
        w.vread32(i.src[n], i.lit, i.info.fk, out);
    }
    if i.ext != Ext::None {
        mask &= ext_sources(w, i, &mut s);
    }
    if i.opsel & 7 != 0 && i.enc == Enc::Vop3 {
        // VOP3 op_sel[n] reads the high half of 16-bit source n.
        for (n, v) in s.iter_mut().enumerate() {
            if i.opsel >> n & 1 != 0 {
                for x in v.iter_mut() {
                    *x >>= 16;
                }
            }
        }
    }
    if float && (i.abs | i.neg) != 0 && i.ext != Ext::Sdwa {
        // f16 sources keep their sign in bit 15 (the op's name ends in its source type).
        let sign = if i.info.name.ends_with("_f16") {
            0x8000
        } else {
            0x8000_0000
        };
        for (n, v) in s.iter_mut().enumerate() {
            let (abs, neg) = (i.abs >> n & 1 != 0, i.neg >> n & 1 != 0);
            if abs || neg {
                for x in v.iter_mut() {
                    if abs {
                        *x &= !sign;
                    }
                    if neg {
                        *x ^= sign;
                    }
                }
            }
        }
    }
    (s, mask)
}

/// 64-bit sources (`wide` says which of the N operands are 64-bit; others zero-extend).
#[inline(always)]
fn srcs64<const N: usize>(w: &Wave, i: &Inst, float: bool) -> ([L64; N], u64) {
    let mut s = [[0u64; LANES]; N];
    for (n, out) in s.iter_mut().enumerate() {
        if i.info.w[n + 1] >= 2 {
            w.vread64(i.src[n], i.lit, i.info.fk, out);
        } else {
            let mut t = [0u32; LANES];
            w.vread32(i.src[n], i.lit, i.info.fk, &mut t);
            for l in 0..LANES {
                out[l] = t[l] as u64;
            }
        }
    }
    let mut mask = w.exec();
    if i.ext == Ext::Dpp {
        // 64-bit DPP (v_mov_b64 on gfx942 and friends): permute both halves alike.
        let mut lo = [0u32; LANES];
        let mut hi = [0u32; LANES];
        for l in 0..LANES {
            lo[l] = s[0][l] as u32;
            hi[l] = (s[0][l] >> 32) as u32;
        }
        let m = dpp(w, i, &mut lo);
        dpp(w, i, &mut hi);
        mask &= m;
        for l in 0..LANES {
            s[0][l] = lo[l] as u64 | (hi[l] as u64) << 32;
        }
    }
    if float && (i.abs | i.neg) != 0 {
        for (n, v) in s.iter_mut().enumerate() {
            let (abs, neg) = (i.abs >> n & 1 != 0, i.neg >> n & 1 != 0);
            for x in v.iter_mut() {
                if abs {
                    *x &= !(1 << 63);
                }
                if neg {
                    *x ^= 1 << 63;
                }
            }
        }
    }
    (s, mask)
}

/// Applies DPP or SDWA to the sources; returns the lanes allowed to write.
fn ext_sources<const N: usize>(w: &Wave, i: &Inst, s: &mut [Lanes; N]) -> u64 {
    match i.ext {
        Ext::Dpp if N > 0 => dpp(w, i, &mut s[0]),
        Ext::Sdwa => {
            let e = i.lit;
            if N > 0 {
                sdwa_sel(&mut s[0], (e >> 16) & 7, (e >> 19) & 1 != 0);
                sdwa_mods(
                    &mut s[0],
                    (e >> 21) & 1 != 0,
                    (e >> 20) & 1 != 0,
                    (e >> 16) & 7,
                );
            }
            if N > 1 && i.enc != Enc::Vop1 {
                sdwa_sel(&mut s[1], (e >> 24) & 7, (e >> 27) & 1 != 0);
                sdwa_mods(
                    &mut s[1],
                    (e >> 29) & 1 != 0,
                    (e >> 28) & 1 != 0,
                    (e >> 24) & 7,
                );
            }
            u64::MAX
        }
        _ => u64::MAX,
    }
}

fn sdwa_sel(v: &mut Lanes, sel: u32, sext: bool) {
    if sel >= 6 {
        return;
    }
    for x in v.iter_mut() {
        *x = match sel {
            0..=3 => {
                let b = (*x >> (8 * sel)) & 0xff;
                if sext {
                    b as u8 as i8 as i32 as u32
                } else {
                    b
                }
            }
            _ => {
                let h = (*x >> (16 * (sel - 4))) & 0xffff;
                if sext {
                    h as u16 as i16 as i32 as u32
                } else {
                    h
                }
            }
        };
    }
}

/// SDWA float modifiers apply to the selected field's float format.
fn sdwa_mods(v: &mut Lanes, abs: bool, neg: bool, sel: u32) {
    if !abs && !neg {
        return;
    }
    let sign = if sel >= 6 { 0x8000_0000 } else { 0x8000 };
    for x in v.iter_mut() {
        if abs {
            *x &= !sign;
        }
        if neg {
            *x ^= sign;
        }
    }
}

/// DPP lane permutation of src0 (GFX9 controls). Returns the lanes that may write.
fn dpp(w: &Wave, i: &Inst, v: &mut Lanes) -> u64 {
    let e = i.lit;
    let ctrl = (e >> 8) & 0x1ff;
    let bound_ctrl = (e >> 19) & 1 != 0;
    let bank_mask = (e >> 24) & 0xf;
    let row_mask = (e >> 28) & 0xf;
    let exec = w.exec();
    let orig = *v;
    let mut mask = 0u64;
    for l in 0..LANES {
        let row = l / 16;
        let in_row = l % 16;
        let src: Option<usize> = match ctrl {
            0x000..=0x0ff => Some((l & !3) | ((ctrl >> ((l & 3) * 2)) & 3) as usize),
            0x101..=0x10f => {
                let n = (ctrl & 0xf) as usize;
                (in_row + n < 16).then(|| l + n)
            }
            0x111..=0x11f => {
                let n = (ctrl & 0xf) as usize;
                (in_row >= n).then(|| l - n)
            }
            0x121..=0x12f => {
                let n = (ctrl & 0xf) as usize;
                Some(row * 16 + (in_row + 16 - n) % 16)
            }
            0x130 => (l < 63).then(|| l + 1),
            0x134 => Some((l + 1) % 64),
            0x138 => (l > 0).then(|| l - 1),
            0x13c => Some((l + 63) % 64),
            0x140 => Some(row * 16 + 15 - in_row),
            0x141 => Some(row * 16 + (in_row & 8) + 7 - (in_row & 7)),
            0x142 => (row > 0).then(|| row * 16 - 1),
            0x143 => (l >= 32).then_some(31),
            _ => None,
        };
        let enabled = (row_mask >> row) & 1 != 0 && (bank_mask >> ((l >> 2) & 3)) & 1 != 0;
        if !enabled {
            continue;
        }
        // A source lane that does not exist or is inactive reads 0 with bound_ctrl,
        // otherwise the destination lane keeps its value.
        match src {
            Some(s) if exec >> s & 1 != 0 => {
                v[l] = orig[s];
                mask |= 1 << l;
            }
            _ if bound_ctrl => {
                v[l] = 0;
                mask |= 1 << l;
            }
            _ => {}
        }
    }
    mask
}

/// MODE.FP_DENORM bits for f32 (5:4) and f64/f16 (7:6): 0 flushes denormal inputs and
/// outputs to a signed zero, 3 (HIP's default) keeps them. The partial modes (flush only
/// inputs or only outputs) are treated as "keep".
#[inline(always)]
fn flush32(w: &Wave) -> bool {
    w.mode & 0x30 == 0
}
#[inline(always)]
fn flush64(w: &Wave) -> bool {
    w.mode & 0xc0 == 0
}

/// True when opcode `name` produces a float of the type `suffix` names (conversions to
/// integers and exponent extraction produce integers, which are never flushed).
fn float_result(name: &str, suffix: &str) -> bool {
    let convert_to = name.strip_prefix("v_cvt_");
    match convert_to {
        Some(rest) => rest.starts_with(&suffix[1..]),
        None => name.ends_with(suffix) && !name.contains("frexp_exp"),
    }
}

/// True when an f32 operation's inputs are flushed (f16 operations have their own mode
/// bits and keep f16 denormals here).
#[inline(always)]
fn flush_inputs(w: &Wave, i: &Inst) -> bool {
    flush32(w) && i.info.fk == crate::inst::FloatKind::F32
}

#[inline(always)]
fn flush_lanes32(d: &mut Lanes) {
    for x in d.iter_mut() {
        if *x & 0x7f80_0000 == 0 {
            *x &= 0x8000_0000;
        }
    }
}

/// Output modifiers of float results (VOP3 omod/clamp), then the MODE denormal flush.
#[inline(always)]
fn fmods32(w: &Wave, i: &Inst, d: &mut Lanes) {
    if flush32(w) && float_result(i.info.name, "_f32") {
        flush_lanes32(d);
    }
    let (omod, clamp) = if i.ext == Ext::Sdwa {
        ((i.lit >> 14) & 3, (i.lit >> 13) & 1 != 0)
    } else {
        (i.omod as u32, i.clamp)
    };
    if omod == 0 && !clamp {
        return;
    }
    for x in d.iter_mut() {
        let mut f = f32::from_bits(*x);
        f = match omod {
            1 => f * 2.0,
            2 => f * 4.0,
            3 => f * 0.5,
            _ => f,
        };
        if clamp {
            f = if f.is_nan() { 0.0 } else { f.clamp(0.0, 1.0) };
        }
        *x = f.to_bits();
    }
}

#[inline(always)]
fn fmods64(w: &Wave, i: &Inst, d: &mut L64) {
    if flush64(w) && float_result(i.info.name, "_f64") {
        for x in d.iter_mut() {
            if *x & 0x7ff0_0000_0000_0000 == 0 {
                *x &= 1 << 63;
            }
        }
    }
    if i.omod == 0 && !i.clamp {
        return;
    }
    for x in d.iter_mut() {
        let mut f = f64::from_bits(*x);
        f = match i.omod {
            1 => f * 2.0,
            2 => f * 4.0,
            3 => f * 0.5,
            _ => f,
        };
        if i.clamp {
            f = if f.is_nan() { 0.0 } else { f.clamp(0.0, 1.0) };
        }
        *x = f.to_bits();
    }
}

/// Writes a 32-bit result (SDWA destination selection applied).
#[inline(always)]
fn out32(w: &mut Wave, i: &Inst, mask: u64, d: &mut Lanes) {
    if i.ext == Ext::Sdwa && i.enc != Enc::Vopc {
        let e = i.lit;
        let sel = (e >> 8) & 7;
        let unused = (e >> 11) & 3;
        if sel < 6 {
            let old = w.v[(i.dst as usize - 256) & 511];
            let (shift, width) = if sel < 4 {
                (8 * sel, 8)
            } else {
                (16 * (sel - 4), 16)
            };
            let fmask = ((1u32 << width) - 1) << shift;
            for l in 0..LANES {
                let v = (d[l] << shift) & fmask;
                d[l] = match unused {
                    2 => (old[l] & !fmask) | v,
                    1 => {
                        let top = shift + width;
                        let sx = if top < 32 && (v >> (top - 1)) & 1 != 0 {
                            !0u32 << top
                        } else {
                            0
                        };
                        v | sx
                    }
                    _ => v,
                };
            }
        }
    }
    if i.opsel & 8 != 0 && i.enc == Enc::Vop3 {
        // VOP3 op_sel[3]: a 16-bit result goes to the high half; the low half is kept.
        let old = w.v[(i.dst as usize).wrapping_sub(256) & 511];
        for l in 0..LANES {
            d[l] = (old[l] & 0xffff) | d[l] << 16;
        }
    }
    w.lane_ops += mask.count_ones() as u64;
    w.vwrite32(i.dst, mask, d);
}

#[inline(always)]
fn out64(w: &mut Wave, i: &Inst, mask: u64, d: &L64) {
    w.lane_ops += mask.count_ones() as u64;
    w.vwrite64(i.dst, mask, d);
}

#[inline(always)]
fn f(x: u32) -> f32 {
    f32::from_bits(x)
}
#[inline(always)]
fn b(x: f32) -> u32 {
    x.to_bits()
}
#[inline(always)]
fn g(x: u64) -> f64 {
    f64::from_bits(x)
}
#[inline(always)]
fn h(x: f64) -> u64 {
    x.to_bits()
}

// ------------------------------------------------------------------ generators

macro_rules! v1 {
    ($($name:ident($fl:expr) => |$a:ident| $body:expr $(, round $rk:ident |$rm:ident| $rbody:expr)?;)*) => {$(
        pub fn $name(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
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
            if $fl { fmods32(w, i, &mut d); }
            out32(w, i, mask, &mut d);
            OK
        }
    )*};
}

macro_rules! v2 {
    ($($name:ident($fl:expr) => |$a:ident, $bb:ident| $body:expr $(, round $rk:ident |$rm:ident| $rbody:expr)?;)*) => {$(
        pub fn $name(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
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
            if $fl { fmods32(w, i, &mut d); }
            out32(w, i, mask, &mut d);
            OK
        }
    )*};
}

macro_rules! v3 {
    ($($name:ident($fl:expr) => |$a:ident, $bb:ident, $cc:ident| $body:expr $(, round $rk:ident |$rm:ident| $rbody:expr)?;)*) => {$(
        pub fn $name(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
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
            if $fl { fmods32(w, i, &mut d); }
            out32(w, i, mask, &mut d);
            OK
        }
    )*};
}

/// Ops whose `N` sources may be 64 bits wide (per the op's widths): `w64!` gives a 64-bit
/// result (float output modifiers applied), `n64!` a 32-bit one (conversions from f64, f64
/// class...). Both expand [`wide_sources!`], which differs only in the result element and
/// how it is written back.
macro_rules! wide_sources {
    ($elem:ty, $finish:path; $($name:ident<$n:literal>($fl:expr) => |$($a:ident),*| $body:expr $(, round $rk:ident |$rm:ident; $($ra:ident),*| $rbody:expr)?;)*) => {$(
        pub fn $name(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
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
        }
    )*};
}
macro_rules! w64 {
    ($($t:tt)*) => { wide_sources!(u64, finish_wide; $($t)*); };
}
macro_rules! n64 {
    ($($t:tt)*) => { wide_sources!(u32, finish_narrow; $($t)*); };
}

/// Writes a 64-bit result, after the float output modifiers for float ops.
fn finish_wide(w: &mut Wave, i: &Inst, mask: u64, d: &mut L64, float: bool) {
    if float {
        fmods64(w, i, d);
    }
    out64(w, i, mask, d);
}

/// Writes a 32-bit result computed from wide sources (no output modifiers apply).
fn finish_narrow(w: &mut Wave, i: &Inst, mask: u64, d: &mut Lanes, _float: bool) {
    out32(w, i, mask, d);
}

// ------------------------------------------------------------------ VOP1

pub fn v_nop(_w: &mut Wave, _i: &Inst, _c: &mut Ctx) -> R {
    OK
}

v1! {
    v_mov_b32(false) => |a| a;
    v_cvt_f32_i32(false) => |a| b(a as i32 as f32), round rm32 |rm| round::from_int(S32, rm, a as i32 as i64) as u32;
    v_cvt_f32_u32(false) => |a| b(a as f32), round rm32 |rm| round::from_int(S32, rm, a as i64) as u32;
    v_cvt_u32_f32(true) => |a| f(a) as u32;
    v_cvt_i32_f32(true) => |a| f(a) as i32 as u32;
    // The result is f16, so the f64/f16 rounding field applies.
    v_cvt_f16_f32(true) => |a| f32_to_f16(f(a)) as u32, round rm64 |rm| round::convert(S32, H16, rm, a as u64) as u32;
    v_cvt_f32_f16(false) => |a| b(f16_to_f32(a as u16));
    v_cvt_rpi_i32_f32(true) => |a| (f(a) + 0.5).floor() as i32 as u32;
    v_cvt_flr_i32_f32(true) => |a| f(a).floor() as i32 as u32;
    v_cvt_f32_ubyte0(false) => |a| b((a & 0xff) as f32);
    v_cvt_f32_ubyte1(false) => |a| b(((a >> 8) & 0xff) as f32);
    v_cvt_f32_ubyte2(false) => |a| b(((a >> 16) & 0xff) as f32);
    v_cvt_f32_ubyte3(false) => |a| b((a >> 24) as f32);
    v_fract_f32(true) => |a| { let x = f(a); b(if x.is_infinite() { f32::NAN } else { (x - x.floor()).min(f32::from_bits(0x3f7f_ffff)) }) };
    v_trunc_f32(true) => |a| b(f(a).trunc());
    v_ceil_f32(true) => |a| b(f(a).ceil());
    v_rndne_f32(true) => |a| b(f(a).round_ties_even());
    v_floor_f32(true) => |a| b(f(a).floor());
    v_exp_f32(true) => |a| b(f(a).exp2());
    v_log_f32(true) => |a| b(f(a).log2());
    v_rcp_f32(true) => |a| b(1.0 / f(a));
    v_rsq_f32(true) => |a| b(1.0 / f(a).sqrt());
    v_sqrt_f32(true) => |a| b(f(a).sqrt());
    // The hardware takes the angle in revolutions (x * 2*pi radians).
    v_sin_f32(true) => |a| b((f(a) * std::f32::consts::TAU).sin());
    v_cos_f32(true) => |a| b((f(a) * std::f32::consts::TAU).cos());
    v_not_b32(false) => |a| !a;
    v_bfrev_b32(false) => |a| a.reverse_bits();
    v_ffbh_u32(false) => |a| if a == 0 { u32::MAX } else { a.leading_zeros() };
    v_ffbl_b32(false) => |a| if a == 0 { u32::MAX } else { a.trailing_zeros() };
    v_ffbh_i32(false) => |a| {
        if a == 0 || a == u32::MAX { u32::MAX } else if (a as i32) < 0 { (!a).leading_zeros() } else { a.leading_zeros() }
    };
    v_frexp_exp_i32_f32(true) => |a| { let x = f(a); if x.is_nan() || x.is_infinite() || x == 0.0 { 0 } else { frexp32(x).1 as u32 } };
    v_frexp_mant_f32(true) => |a| { let x = f(a); if x.is_nan() || x.is_infinite() { a } else { b(frexp32(x).0) } };
    v_cvt_f16_u16(false) => |a| f32_to_f16((a & 0xffff) as f32) as u32, round rm64 |rm| round::from_int(H16, rm, (a & 0xffff) as i64) as u32;
    v_cvt_f16_i16(false) => |a| f32_to_f16(a as u16 as i16 as f32) as u32, round rm64 |rm| round::from_int(H16, rm, a as u16 as i16 as i64) as u32;
    v_cvt_u16_f16(false) => |a| f16_to_f32(a as u16) as u16 as u32;
    v_cvt_i16_f16(false) => |a| f16_to_f32(a as u16) as i16 as u16 as u32;
    v_rcp_f16(false) => |a| f32_to_f16(1.0 / f16_to_f32(a as u16)) as u32;
    v_sqrt_f16(false) => |a| f32_to_f16(f16_to_f32(a as u16).sqrt()) as u32;
    v_rsq_f16(false) => |a| f32_to_f16(1.0 / f16_to_f32(a as u16).sqrt()) as u32;
    v_log_f16(false) => |a| f32_to_f16(f16_to_f32(a as u16).log2()) as u32;
    v_exp_f16(false) => |a| f32_to_f16(f16_to_f32(a as u16).exp2()) as u32;
    v_floor_f16(false) => |a| f32_to_f16(f16_to_f32(a as u16).floor()) as u32;
    v_ceil_f16(false) => |a| f32_to_f16(f16_to_f32(a as u16).ceil()) as u32;
    v_trunc_f16(false) => |a| f32_to_f16(f16_to_f32(a as u16).trunc()) as u32;
    v_rndne_f16(false) => |a| f32_to_f16(f16_to_f32(a as u16).round_ties_even()) as u32;
}

n64! {
    v_cvt_i32_f64<1>(true) => |a| g(a) as i32 as u32;
    v_cvt_u32_f64<1>(true) => |a| g(a) as u32;
    v_cvt_f32_f64<1>(true) => |a| b(g(a) as f32), round rm32 |rm; a| round::convert(D64, S32, rm, a) as u32;
    v_frexp_exp_i32_f64<1>(true) => |a| { let x = g(a); if x.is_nan() || x.is_infinite() || x == 0.0 { 0 } else { frexp64(x).1 as u32 } };
}

w64! {
    v_cvt_f64_i32<1>(false) => |a| h(a as u32 as i32 as f64);
    v_cvt_f64_u32<1>(false) => |a| h(a as u32 as f64);
    v_cvt_f64_f32<1>(false) => |a| h(f(a as u32) as f64);
    v_trunc_f64<1>(true) => |a| h(g(a).trunc());
    v_ceil_f64<1>(true) => |a| h(g(a).ceil());
    v_rndne_f64<1>(true) => |a| h(g(a).round_ties_even());
    v_floor_f64<1>(true) => |a| h(g(a).floor());
    v_rcp_f64<1>(true) => |a| h(1.0 / g(a));
    v_rsq_f64<1>(true) => |a| h(1.0 / g(a).sqrt());
    v_sqrt_f64<1>(true) => |a| h(g(a).sqrt());
    v_frexp_mant_f64<1>(true) => |a| { let x = g(a); if x.is_nan() || x.is_infinite() { a } else { h(frexp64(x).0) } };
    v_fract_f64<1>(true) => |a| { let x = g(a); h(if x.is_infinite() { f64::NAN } else { (x - x.floor()).min(f64::from_bits(0x3fef_ffff_ffff_ffff)) }) };
    v_mov_b64<1>(false) => |a| a;
    v_fma_f64<3>(true) => |a, bb, c| h(g(a).mul_add(g(bb), g(c))), round rm64 |rm; a, bb, c| round::fma(D64, rm, a, bb, c);
    v_fmac_f64<3>(true) => |a, bb, c| h(g(a).mul_add(g(bb), g(c))), round rm64 |rm; a, bb, c| round::fma(D64, rm, a, bb, c);
    v_add_f64<2>(true) => |a, bb| h(g(a) + g(bb)), round rm64 |rm; a, bb| round::add(D64, rm, a, bb);
    v_mul_f64<2>(true) => |a, bb| h(g(a) * g(bb)), round rm64 |rm; a, bb| round::mul(D64, rm, a, bb);
    v_min_f64<2>(true) => |a, bb| h(g(a).min(g(bb)));
    v_max_f64<2>(true) => |a, bb| h(g(a).max(g(bb)));
    v_ldexp_f64<2>(true) => |a, bb| h(ldexp64(g(a), bb as u32 as i32));
    v_lshlrev_b64<2>(false) => |a, bb| bb << (a & 63);
    v_lshrrev_b64<2>(false) => |a, bb| bb >> (a & 63);
    v_ashrrev_i64<2>(false) => |a, bb| ((bb as i64) >> (a & 63)) as u64;
    v_lshl_add_u64<3>(false) => |a, bb, c| (a << (bb & 7)).wrapping_add(c);
    v_div_fixup_f64<3>(true) => |a, bb, c| h(div_fixup64(g(a), g(bb), g(c)));
}

pub fn v_readfirstlane_b32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let exec = w.exec();
    let lane = if exec == 0 {
        0
    } else {
        exec.trailing_zeros() as usize
    };
    let mut v = [0u32; LANES];
    w.vread32(i.src[0], i.lit, i.info.fk, &mut v);
    w.write_s32(i.dst, v[lane]);
    OK
}

pub fn v_swap_b32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let mask = w.exec();
    let (a, d) = (
        (i.src[0] as usize - 256) & 511,
        (i.dst as usize - 256) & 511,
    );
    for l in 0..LANES {
        if mask >> l & 1 != 0 {
            let t = w.v[a][l];
            w.v[a][l] = w.v[d][l];
            w.v[d][l] = t;
        }
    }
    OK
}

// ------------------------------------------------------------------ VOP2 / VOP3 two-source

v2! {
    v_add_f32(true) => |a, bb| b(f(a) + f(bb)), round rm32 |rm| round::add(S32, rm, a as u64, bb as u64) as u32;
    v_sub_f32(true) => |a, bb| b(f(a) - f(bb)), round rm32 |rm| round::sub(S32, rm, a as u64, bb as u64) as u32;
    v_subrev_f32(true) => |a, bb| b(f(bb) - f(a)), round rm32 |rm| round::sub(S32, rm, bb as u64, a as u64) as u32;
    v_mul_f32(true) => |a, bb| b(f(a) * f(bb)), round rm32 |rm| round::mul(S32, rm, a as u64, bb as u64) as u32;
    v_mul_i32_i24(false) => |a, bb| (sext24(a) * sext24(bb)) as u32;
    v_mul_hi_i32_i24(false) => |a, bb| ((sext24(a) * sext24(bb)) >> 32) as u32;
    v_mul_u32_u24(false) => |a, bb| (a & 0xff_ffff).wrapping_mul(bb & 0xff_ffff);
    v_mul_hi_u32_u24(false) => |a, bb| (((a & 0xff_ffff) as u64 * (bb & 0xff_ffff) as u64) >> 32) as u32;
    v_min_f32(true) => |a, bb| b(f(a).min(f(bb)));
    v_max_f32(true) => |a, bb| b(f(a).max(f(bb)));
    v_min_i32(false) => |a, bb| (a as i32).min(bb as i32) as u32;
    v_max_i32(false) => |a, bb| (a as i32).max(bb as i32) as u32;
    v_min_u32(false) => |a, bb| a.min(bb);
    v_max_u32(false) => |a, bb| a.max(bb);
    v_lshrrev_b32(false) => |a, bb| bb >> (a & 31);
    v_ashrrev_i32(false) => |a, bb| ((bb as i32) >> (a & 31)) as u32;
    v_lshlrev_b32(false) => |a, bb| bb << (a & 31);
    v_and_b32(false) => |a, bb| a & bb;
    v_or_b32(false) => |a, bb| a | bb;
    v_xor_b32(false) => |a, bb| a ^ bb;
    v_xnor_b32(false) => |a, bb| !(a ^ bb);
    v_add_u32(false) => |a, bb| a.wrapping_add(bb);
    v_sub_u32(false) => |a, bb| a.wrapping_sub(bb);
    v_subrev_u32(false) => |a, bb| bb.wrapping_sub(a);
    v_add_i32(false) => |a, bb| a.wrapping_add(bb);
    v_sub_i32(false) => |a, bb| a.wrapping_sub(bb);
    v_add_f16(false) => |a, bb| hf2(a, bb, |x, y| x + y), round rm64 |rm| round::add(H16, rm, (a & 0xffff) as u64, (bb & 0xffff) as u64) as u32;
    v_sub_f16(false) => |a, bb| hf2(a, bb, |x, y| x - y), round rm64 |rm| round::sub(H16, rm, (a & 0xffff) as u64, (bb & 0xffff) as u64) as u32;
    v_subrev_f16(false) => |a, bb| hf2(a, bb, |x, y| y - x), round rm64 |rm| round::sub(H16, rm, (bb & 0xffff) as u64, (a & 0xffff) as u64) as u32;
    v_mul_f16(false) => |a, bb| hf2(a, bb, |x, y| x * y), round rm64 |rm| round::mul(H16, rm, (a & 0xffff) as u64, (bb & 0xffff) as u64) as u32;
    v_max_f16(false) => |a, bb| hf2(a, bb, f32::max);
    v_min_f16(false) => |a, bb| hf2(a, bb, f32::min);
    v_add_u16(false) => |a, bb| (a as u16).wrapping_add(bb as u16) as u32;
    v_sub_u16(false) => |a, bb| (a as u16).wrapping_sub(bb as u16) as u32;
    v_subrev_u16(false) => |a, bb| (bb as u16).wrapping_sub(a as u16) as u32;
    v_mul_lo_u16(false) => |a, bb| (a as u16).wrapping_mul(bb as u16) as u32;
    v_lshlrev_b16(false) => |a, bb| ((bb as u16) << (a & 15)) as u32;
    v_lshrrev_b16(false) => |a, bb| ((bb as u16) >> (a & 15)) as u32;
    v_ashrrev_i16(false) => |a, bb| ((bb as u16 as i16) >> (a & 15)) as u16 as u32;
    v_max_u16(false) => |a, bb| (a as u16).max(bb as u16) as u32;
    v_max_i16(false) => |a, bb| (a as u16 as i16).max(bb as u16 as i16) as u16 as u32;
    v_min_u16(false) => |a, bb| (a as u16).min(bb as u16) as u32;
    v_min_i16(false) => |a, bb| (a as u16 as i16).min(bb as u16 as i16) as u16 as u32;
    v_mul_lo_u32(false) => |a, bb| a.wrapping_mul(bb);
    v_mul_hi_u32(false) => |a, bb| ((a as u64 * bb as u64) >> 32) as u32;
    v_mul_hi_i32(false) => |a, bb| ((a as i32 as i64 * bb as i32 as i64) >> 32) as u32;
    v_ldexp_f32(true) => |a, bb| b(ldexp32(f(a), bb as i32));
    v_bcnt_u32_b32(false) => |a, bb| a.count_ones().wrapping_add(bb);
    v_bfm_b32(false) => |a, bb| (((1u64 << (a & 31)) - 1) as u32) << (bb & 31);
    v_cvt_pkrtz_f16_f32(true) => |a, bb| f32_to_f16_rtz(f(a)) as u32 | (f32_to_f16_rtz(f(bb)) as u32) << 16;
    v_pack_b32_f16(false) => |a, bb| (a & 0xffff) | (bb << 16);
}

/// `v_mbcnt_lo_u32_b32`: bits of src0 set below this lane (lanes 0..31), plus src1.
pub fn v_mbcnt_lo_u32_b32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let ([a, bb], mask) = srcs32::<2>(w, i, false);
    let mut d = [0u32; LANES];
    for l in 0..LANES {
        let below = if l >= 32 { u32::MAX } else { (1u32 << l) - 1 };
        d[l] = (a[l] & below).count_ones().wrapping_add(bb[l]);
    }
    out32(w, i, mask, &mut d);
    OK
}

pub fn v_mbcnt_hi_u32_b32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let ([a, bb], mask) = srcs32::<2>(w, i, false);
    let mut d = [0u32; LANES];
    for l in 0..LANES {
        let below = if l < 32 {
            0
        } else if l == 63 {
            u32::MAX >> 1
        } else {
            (1u32 << (l - 32)) - 1
        };
        d[l] = (a[l] & below).count_ones().wrapping_add(bb[l]);
    }
    out32(w, i, mask, &mut d);
    OK
}

pub fn v_readlane_b32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let lane = (w.sread32(i.src[1], i.lit, i.info.fk) & 63) as usize;
    let mut v = [0u32; LANES];
    w.vread32(i.src[0], i.lit, i.info.fk, &mut v);
    w.write_s32(i.dst, v[lane]);
    OK
}

pub fn v_writelane_b32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let v = w.sread32(i.src[0], i.lit, i.info.fk);
    let lane = (w.sread32(i.src[1], i.lit, i.info.fk) & 63) as usize;
    // Writes regardless of EXEC, by definition.
    w.set_vlane((i.dst as usize).wrapping_sub(256), lane, v);
    OK
}

pub fn v_cndmask_b32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let ([a, bb], mask) = srcs32::<2>(w, i, (i.abs | i.neg) != 0);
    let sel = w.sreg64(i.src[2]);
    let mut d = [0u32; LANES];
    for l in 0..LANES {
        d[l] = if sel >> l & 1 != 0 { bb[l] } else { a[l] };
    }
    out32(w, i, mask, &mut d);
    OK
}

/// Carry-out ops: `(a, b, carry_in) -> (result, carry_out)`; carry bits go to sdst for the
/// active lanes (inactive lanes read as 0 there, as the hardware writes them).
macro_rules! carry {
    ($($name:ident($cin:expr) => |$a:ident, $bb:ident, $ci:ident| $body:expr;)*) => {$(
        pub fn $name(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
            let ([$a, $bb], mask) = srcs32::<2>(w, i, false);
            let cin_mask = if $cin { w.sreg64(i.src[2]) } else { 0 };
            let mut d = [0u32; LANES];
            let mut co = 0u64;
            for l in 0..LANES {
                let ($a, $bb, $ci) = ($a[l] as u64, $bb[l] as u64, (cin_mask >> l) & 1);
                let (r, c): (u64, bool) = $body;
                d[l] = r as u32;
                co |= (c as u64) << l;
            }
            out32(w, i, mask, &mut d);
            w.write_s64(i.sdst, co & mask);
            OK
        }
    )*};
}

carry! {
    v_add_co_u32(false) => |a, bb, _ci| { let t = a + bb; (t, t >> 32 != 0) };
    v_sub_co_u32(false) => |a, bb, _ci| (a.wrapping_sub(bb), bb > a);
    v_subrev_co_u32(false) => |a, bb, _ci| (bb.wrapping_sub(a), a > bb);
    v_addc_co_u32(true) => |a, bb, ci| { let t = a + bb + ci; (t, t >> 32 != 0) };
    v_subb_co_u32(true) => |a, bb, ci| (a.wrapping_sub(bb).wrapping_sub(ci), bb + ci > a);
    v_subbrev_co_u32(true) => |a, bb, ci| (bb.wrapping_sub(a).wrapping_sub(ci), a + ci > bb);
}

// ------------------------------------------------------------------ three-source

v3! {
    v_fma_f32(true) => |a, bb, c| b(f(a).mul_add(f(bb), f(c))), round rm32 |rm| round::fma(S32, rm, a as u64, bb as u64, c as u64) as u32;
    v_fmac_f32(true) => |a, bb, c| b(f(a).mul_add(f(bb), f(c))), round rm32 |rm| round::fma(S32, rm, a as u64, bb as u64, c as u64) as u32;
    v_mac_f32(true) => |a, bb, c| b(f(a) * f(bb) + f(c)), round rm32 |rm| round::mad(S32, rm, a as u64, bb as u64, c as u64) as u32;
    v_mad_f32(true) => |a, bb, c| b(f(a) * f(bb) + f(c)), round rm32 |rm| round::mad(S32, rm, a as u64, bb as u64, c as u64) as u32;
    v_mad_legacy_f32(true) => |a, bb, c| { let (x, y) = (f(a), f(bb)); b(if x == 0.0 || y == 0.0 { f(c) } else { x * y + f(c) }) };
    v_mad_i32_i24(false) => |a, bb, c| ((sext24(a) * sext24(bb)) as u32).wrapping_add(c);
    v_mad_u32_u24(false) => |a, bb, c| (a & 0xff_ffff).wrapping_mul(bb & 0xff_ffff).wrapping_add(c);
    v_bfe_u32(false) => |a, bb, c| super::salu::bfe_u32(a, bb & 31, c & 31);
    v_bfe_i32(false) => |a, bb, c| super::salu::bfe_i32(a, bb & 31, c & 31);
    v_bfi_b32(false) => |a, bb, c| (a & bb) | (!a & c);
    v_alignbit_b32(false) => |a, bb, c| ((((a as u64) << 32) | bb as u64) >> (c & 31)) as u32;
    v_alignbyte_b32(false) => |a, bb, c| ((((a as u64) << 32) | bb as u64) >> (8 * (c & 3))) as u32;
    v_min3_f32(true) => |a, bb, c| b(f(a).min(f(bb)).min(f(c)));
    v_max3_f32(true) => |a, bb, c| b(f(a).max(f(bb)).max(f(c)));
    v_med3_f32(true) => |a, bb, c| b(med3f(f(a), f(bb), f(c)));
    v_min3_i32(false) => |a, bb, c| (a as i32).min(bb as i32).min(c as i32) as u32;
    v_max3_i32(false) => |a, bb, c| (a as i32).max(bb as i32).max(c as i32) as u32;
    v_med3_i32(false) => |a, bb, c| { let (x, y, z) = (a as i32, bb as i32, c as i32); x.max(y).min(x.min(y).max(z)) as u32 };
    v_min3_u32(false) => |a, bb, c| a.min(bb).min(c);
    v_max3_u32(false) => |a, bb, c| a.max(bb).max(c);
    v_med3_u32(false) => |a, bb, c| a.max(bb).min(a.min(bb).max(c));
    v_sad_u32(false) => |a, bb, c| a.abs_diff(bb).wrapping_add(c);
    v_div_fixup_f32(true) => |a, bb, c| b(div_fixup32(f(a), f(bb), f(c)));
    v_perm_b32(false) => |a, bb, c| perm(a, bb, c);
    v_mad_u32_u16(false) => |a, bb, c| (a & 0xffff).wrapping_mul(bb & 0xffff).wrapping_add(c);
    v_mad_i32_i16(false) => |a, bb, c| ((a as u16 as i16 as i32).wrapping_mul(bb as u16 as i16 as i32) as u32).wrapping_add(c);
    v_xad_u32(false) => |a, bb, c| (a ^ bb).wrapping_add(c);
    v_lshl_add_u32(false) => |a, bb, c| (a << (bb & 31)).wrapping_add(c);
    v_add_lshl_u32(false) => |a, bb, c| a.wrapping_add(bb) << (c & 31);
    v_add3_u32(false) => |a, bb, c| a.wrapping_add(bb).wrapping_add(c);
    v_lshl_or_b32(false) => |a, bb, c| (a << (bb & 31)) | c;
    v_and_or_b32(false) => |a, bb, c| (a & bb) | c;
    v_or3_b32(false) => |a, bb, c| a | bb | c;
    // The f16 product is exact in f64, so one rounding to f16 at the end (via f32,
    // which is exact for f16-range sums of this size) models the fused operation.
    // f16 division ends in this fixup of the quotient computed through f32.
    v_div_fixup_f16(false) => |a, bb, c| f64_to_f16(div_fixup64(f16_to_f32(a as u16) as f64, f16_to_f32(bb as u16) as f64, f16_to_f32(c as u16) as f64)) as u32;
    v_fma_f16(false) => |a, bb, c| f64_to_f16(f16_to_f32(a as u16) as f64 * f16_to_f32(bb as u16) as f64 + f16_to_f32(c as u16) as f64) as u32, round rm64 |rm| round::fma(H16, rm, (a & 0xffff) as u64, (bb & 0xffff) as u64, (c & 0xffff) as u64) as u32;
    // Unfused: the product is rounded to f16 first.
    v_mad_f16(false) => |a, bb, c| hf2(hf2(a, bb, |x, y| x * y), c, |x, y| x + y), round rm64 |rm| round::mad(H16, rm, (a & 0xffff) as u64, (bb & 0xffff) as u64, (c & 0xffff) as u64) as u32;
    v_min3_f16(false) => |a, bb, c| f32_to_f16(f16_to_f32(a as u16).min(f16_to_f32(bb as u16)).min(f16_to_f32(c as u16))) as u32;
    v_max3_f16(false) => |a, bb, c| f32_to_f16(f16_to_f32(a as u16).max(f16_to_f32(bb as u16)).max(f16_to_f32(c as u16))) as u32;
    v_med3_f16(false) => |a, bb, c| f32_to_f16(med3f(f16_to_f32(a as u16), f16_to_f32(bb as u16), f16_to_f32(c as u16))) as u32;
    v_min3_i16(false) => |a, bb, c| (a as u16 as i16).min(bb as u16 as i16).min(c as u16 as i16) as u16 as u32;
    v_max3_i16(false) => |a, bb, c| (a as u16 as i16).max(bb as u16 as i16).max(c as u16 as i16) as u16 as u32;
    v_med3_i16(false) => |a, bb, c| { let (x, y, z) = (a as u16 as i16, bb as u16 as i16, c as u16 as i16); x.max(y).min(x.min(y).max(z)) as u16 as u32 };
    v_min3_u16(false) => |a, bb, c| (a as u16).min(bb as u16).min(c as u16) as u32;
    v_max3_u16(false) => |a, bb, c| (a as u16).max(bb as u16).max(c as u16) as u32;
    v_med3_u16(false) => |a, bb, c| { let (x, y, z) = (a as u16, bb as u16, c as u16); x.max(y).min(x.min(y).max(z)) as u32 };
    v_mad_u16(false) => |a, bb, c| (a as u16).wrapping_mul(bb as u16).wrapping_add(c as u16) as u32;
    v_mad_i16(false) => |a, bb, c| (a as u16).wrapping_mul(bb as u16).wrapping_add(c as u16) as u32;
}

/// `v_madmk_f32 vdst, src0, K, vsrc1`: src0 * K + vsrc1 (K is the literal).
pub fn v_madmk_f32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    mk(w, i, false, false)
}
pub fn v_madak_f32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    mk(w, i, true, false)
}
pub fn v_fmamk_f32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    mk(w, i, false, true)
}
pub fn v_fmaak_f32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    mk(w, i, true, true)
}

fn mk(w: &mut Wave, i: &Inst, ak: bool, fused: bool) -> R {
    let ([a, bb], mask) = srcs32::<2>(w, i, false);
    let k = f(i.lit);
    let mut d = [0u32; LANES];
    let rm = round::rm32(w.mode);
    if rm != Rm::NearestEven {
        for l in 0..LANES {
            let (m, add) = if ak { (bb[l], i.lit) } else { (i.lit, bb[l]) };
            let (x, m, add) = (a[l] as u64, m as u64, add as u64);
            d[l] = if fused {
                round::fma(S32, rm, x, m, add)
            } else {
                round::mad(S32, rm, x, m, add)
            } as u32;
        }
        out32(w, i, mask, &mut d);
        return OK;
    }
    for l in 0..LANES {
        let (x, y) = (f(a[l]), f(bb[l]));
        // madak: src0 * vsrc1 + K; madmk: src0 * K + vsrc1.
        let (m, add) = if ak { (y, k) } else { (k, y) };
        d[l] = b(if fused {
            x.mul_add(m, add)
        } else {
            x * m + add
        });
    }
    out32(w, i, mask, &mut d);
    OK
}

/// `v_mad_u64_u32 vdst, sdst, a, b, c64`: a*b + c with the carry per lane in sdst.
pub fn v_mad_u64_u32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    mad64(w, i, false)
}
pub fn v_mad_i64_i32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    mad64(w, i, true)
}

fn mad64(w: &mut Wave, i: &Inst, signed: bool) -> R {
    let ([a, bb, c], mask) = srcs64::<3>(w, i, false);
    let mut d = [0u64; LANES];
    let mut co = 0u64;
    for l in 0..LANES {
        let (r, carry) = if signed {
            let p = (a[l] as u32 as i32 as i128) * (bb[l] as u32 as i32 as i128);
            let t = p + c[l] as i64 as i128;
            (t as u64, t > i64::MAX as i128 || t < i64::MIN as i128)
        } else {
            let p = a[l] as u32 as u128 * bb[l] as u32 as u128;
            let t = p + c[l] as u128;
            (t as u64, t >> 64 != 0)
        };
        d[l] = r;
        co |= (carry as u64) << l;
    }
    out64(w, i, mask, &d);
    w.write_s64(i.sdst, co & mask);
    OK
}

// IEEE division is a sequence: `v_div_scale` (numerator and denominator), a Newton-Raphson
// refinement of `v_rcp` with fmas, `v_div_fmas` (last step, undoing any post-scale VCC asks
// for) and `v_div_fixup` (signs, zeros, infinities, NaNs). The scaling keeps every
// intermediate of the refinement in the normal range, whatever the operands:
//
// - both operands are scaled by 2^-e, e the denominator's exponent, so the denominator
//   lies in [1, 2) and its reciprocal is normal;
// - when the quotient itself would leave the normal range (its exponent beyond +-BIG),
//   the numerator gets an extra 2^-+S and VCC says so; `v_div_fmas` multiplies its
//   result by 2^+S when the scaled quotient is >= 1 (it was scaled down: a huge
//   quotient) and by 2^-S otherwise (a tiny one), so denormal and overflowing quotients
//   are rounded once, at the end, in the result's own precision.
//
// This is hsasim's model of the hardware's scaling (the ISA manual gives the shape of it:
// scale operands by powers of two, VCC = "post-scaling is required"); it is exact in the
// same cases the hardware is: the sequence LLVM emits yields the correctly rounded
// quotient over the whole range, denormals included.

/// Scaling of `v_div_scale`: (exponent shift for the value, VCC) given the denominator and
/// numerator, in the operand's precision (`big`, `post` as above).
fn div_scale_plan(den: f64, num: f64, is_den: bool, big: i32, post: i32) -> Option<(i32, bool)> {
    if den == 0.0 || num == 0.0 || !den.is_finite() || !num.is_finite() {
        return None;
    }
    let (ed, en) = (frexp64(den).1, frexp64(num).1);
    let eq = en - ed;
    let extra = if eq > big {
        -post
    } else if eq < -big {
        post
    } else {
        0
    };
    let shift = -ed + if is_den { 0 } else { extra };
    Some((shift, extra != 0))
}

pub fn v_div_scale_f32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let ([a, bb, c], mask) = srcs32::<3>(w, i, true);
    let mut d = [0u32; LANES];
    let mut vcc = 0u64;
    for l in 0..LANES {
        let (x, den, num) = (f(a[l]), f(bb[l]), f(c[l]));
        d[l] = match div_scale_plan(den as f64, num as f64, a[l] == bb[l], 100, 64) {
            Some((shift, post)) => {
                vcc |= (post as u64) << l;
                b(ldexp64(x as f64, shift) as f32)
            }
            None => a[l],
        };
    }
    out32(w, i, mask, &mut d);
    w.write_s64(i.sdst, vcc & mask);
    OK
}

pub fn v_div_scale_f64(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let ([a, bb, c], mask) = srcs64::<3>(w, i, true);
    let mut d = [0u64; LANES];
    let mut vcc = 0u64;
    for l in 0..LANES {
        let (x, den, num) = (g(a[l]), g(bb[l]), g(c[l]));
        d[l] = match div_scale_plan(den, num, a[l] == bb[l], 900, 128) {
            Some((shift, post)) => {
                vcc |= (post as u64) << l;
                h(ldexp64(x, shift))
            }
            None => a[l],
        };
    }
    out64(w, i, mask, &d);
    w.write_s64(i.sdst, vcc & mask);
    OK
}

/// `v_div_fmas_f32`: fma, post-scaled by 2^+-64 in lanes whose VCC bit is set.
pub fn v_div_fmas_f32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let ([a, bb, c], mask) = srcs32::<3>(w, i, true);
    let vcc = w.vcc();
    let mut d = [0u32; LANES];
    for l in 0..LANES {
        let (x, y, z) = (f(a[l]) as f64, f(bb[l]) as f64, f(c[l]) as f64);
        // The f32 product is exact in f64: one rounding here, one to f32 below.
        let r = x.mul_add(y, z);
        d[l] = b(if vcc >> l & 1 != 0 {
            let e = if z.abs() >= 1.0 { 64 } else { -64 };
            ldexp64(r, e) as f32
        } else {
            f(a[l]).mul_add(f(bb[l]), f(c[l]))
        });
    }
    fmods32(w, i, &mut d);
    out32(w, i, mask, &mut d);
    OK
}

pub fn v_div_fmas_f64(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let ([a, bb, c], mask) = srcs64::<3>(w, i, true);
    let vcc = w.vcc();
    let mut d = [0u64; LANES];
    for l in 0..LANES {
        let r = g(a[l]).mul_add(g(bb[l]), g(c[l]));
        d[l] = h(if vcc >> l & 1 != 0 {
            let e = if g(c[l]).abs() >= 1.0 { 128 } else { -128 };
            ldexp64(r, e)
        } else {
            r
        });
    }
    fmods64(w, i, &mut d);
    out64(w, i, mask, &d);
    OK
}

// ------------------------------------------------------------------ VOPC

/// All VOPC compares (and their VOP3 forms): the opcode selects type and condition.
pub fn v_cmp(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let op = i.op as u32;
    let exec = w.exec();
    let wide = i.info.w[1] >= 2;
    let mut bits = 0u64;
    if wide {
        let ([a, bb], _) = srcs64::<2>(w, i, op < 0xa0);
        for l in 0..LANES {
            let r = match op {
                0x12 | 0x13 => class(
                    g(a[l]).classify(),
                    g(a[l]).is_sign_negative(),
                    a[l],
                    true,
                    bb[l] as u32,
                ),
                0x60..=0x7f => fcmp(op & 15, g(a[l]), g(bb[l])),
                0xe0..=0xe7 | 0xf0..=0xf7 => icmp(op & 7, a[l] as i64, bb[l] as i64),
                _ => icmp(op & 7, a[l], bb[l]),
            };
            bits |= (r as u64) << l;
        }
    } else {
        let ([a, bb], _) = srcs32::<2>(w, i, op < 0xa0);
        for l in 0..LANES {
            let (x, y) = (a[l], bb[l]);
            let r = match op {
                0x10 | 0x11 => class(f(x).classify(), f(x).is_sign_negative(), x as u64, false, y),
                0x14 | 0x15 => {
                    let v = f16_to_f32(x as u16);
                    class(
                        v.classify(),
                        v.is_sign_negative(),
                        x as u64 & 0xffff,
                        false,
                        y,
                    )
                }
                0x20..=0x3f => fcmp(op & 15, f16_to_f32(x as u16), f16_to_f32(y as u16)),
                0x40..=0x5f => fcmp(op & 15, f(x), f(y)),
                0xa0..=0xa7 | 0xb0..=0xb7 => icmp(op & 7, x as u16 as i16, y as u16 as i16),
                0xa8..=0xaf | 0xb8..=0xbf => icmp(op & 7, x as u16, y as u16),
                0xc0..=0xc7 | 0xd0..=0xd7 => icmp(op & 7, x as i32, y as i32),
                _ => icmp(op & 7, x, y),
            };
            bits |= (r as u64) << l;
        }
    }
    bits &= exec;
    w.lane_ops += exec.count_ones() as u64;
    w.write_s64(i.sdst, bits);
    // v_cmpx_* also writes EXEC (on GFX9 in addition to the VCC/SGPR result).
    let is_x = matches!(op, 0x11 | 0x13 | 0x15)
        || matches!(op, 0x30..=0x3f | 0x50..=0x5f | 0x70..=0x7f)
        || matches!(op, 0xb0..=0xbf | 0xd0..=0xdf | 0xf0..=0xff);
    if is_x {
        w.set_exec(bits);
    }
    OK
}

#[inline(always)]
fn icmp<T: PartialOrd + PartialEq>(cond: u32, a: T, b: T) -> bool {
    match cond {
        0 => false,
        1 => a < b,
        2 => a == b,
        3 => a <= b,
        4 => a > b,
        5 => a != b,
        6 => a >= b,
        _ => true,
    }
}

// The negated compares are the point: they are true for unordered (NaN) operands.
#[allow(clippy::neg_cmp_op_on_partial_ord)]
#[inline(always)]
fn fcmp<T: PartialOrd + Copy>(cond: u32, a: T, b: T) -> bool {
    let unordered = a.partial_cmp(&b).is_none();
    match cond {
        0 => false,
        1 => a < b,
        2 => a == b,
        3 => a <= b,
        4 => a > b,
        5 => !unordered && a != b,
        6 => a >= b,
        7 => !unordered,
        8 => unordered,
        9 => !(a >= b),
        10 => unordered || a == b,
        11 => !(a > b),
        12 => !(a <= b),
        13 => !(a == b),
        14 => !(a < b),
        _ => true,
    }
}

/// `v_cmp_class`: mask bits 0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -denorm, 5 -0, 6 +0,
/// 7 +denorm, 8 +normal, 9 +inf.
fn class(c: std::num::FpCategory, neg: bool, bits: u64, is64: bool, mask: u32) -> bool {
    use std::num::FpCategory::*;
    let quiet_bit = if is64 { 1u64 << 51 } else { 1 << 22 };
    let k = match (c, neg) {
        (Nan, _) => {
            if bits & quiet_bit != 0 {
                1
            } else {
                0
            }
        }
        (Infinite, true) => 2,
        (Normal, true) => 3,
        (Subnormal, true) => 4,
        (Zero, true) => 5,
        (Zero, false) => 6,
        (Subnormal, false) => 7,
        (Normal, false) => 8,
        (Infinite, false) => 9,
    };
    mask >> k & 1 != 0
}

// ------------------------------------------------------------------ VOP3P (packed)

/// Packed f32: each source's two dwords are selected by op_sel (low result) and
/// op_sel_hi (high result); neg/neg_hi negate.
fn pk32(w: &mut Wave, i: &Inst, n: usize, op: fn(f32, f32, f32) -> f32, rop: RoundOp) -> R {
    let mut s = [[0u64; LANES]; 3];
    for (k, out) in s.iter_mut().enumerate().take(n) {
        w.vread64(i.src[k], i.lit, i.info.fk, out);
    }
    let mask = w.exec();
    let rm = round::rm32(w.mode);
    let mut d = [0u64; LANES];
    for l in 0..LANES {
        let mut lo = [0f32; 3];
        let mut hi = [0f32; 3];
        for k in 0..n {
            let v = s[k][l];
            let pick = |hi_half: bool| if hi_half { (v >> 32) as u32 } else { v as u32 };
            let mut x = f(pick(i.opsel >> k & 1 != 0));
            let mut y = f(pick(i.opsel_hi >> k & 1 != 0));
            if i.neg >> k & 1 != 0 {
                x = -x;
            }
            if i.neg_hi >> k & 1 != 0 {
                y = -y;
            }
            lo[k] = x;
            hi[k] = y;
        }
        let (r0, r1) = if rm == Rm::NearestEven {
            (b(op(lo[0], lo[1], lo[2])), b(op(hi[0], hi[1], hi[2])))
        } else {
            let bits = |v: [f32; 3]| v.map(|x| b(x) as u64);
            (rop(S32, rm, bits(lo)) as u32, rop(S32, rm, bits(hi)) as u32)
        };
        d[l] = r0 as u64 | (r1 as u64) << 32;
    }
    out64(w, i, mask, &d);
    OK
}

/// The directed-rounding form of a packed op: (format, mode, operand bits) -> result bits.
type RoundOp = fn(round::Fmt, Rm, [u64; 3]) -> u64;

fn r_fma(t: round::Fmt, rm: Rm, v: [u64; 3]) -> u64 {
    round::fma(t, rm, v[0], v[1], v[2])
}
fn r_mul(t: round::Fmt, rm: Rm, v: [u64; 3]) -> u64 {
    round::mul(t, rm, v[0], v[1])
}
fn r_add(t: round::Fmt, rm: Rm, v: [u64; 3]) -> u64 {
    round::add(t, rm, v[0], v[1])
}

pub fn v_pk_fma_f32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    pk32(w, i, 3, |a, b, c| a.mul_add(b, c), r_fma)
}
pub fn v_pk_mul_f32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    pk32(w, i, 2, |a, b, _| a * b, r_mul)
}
pub fn v_pk_add_f32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    pk32(w, i, 2, |a, b, _| a + b, r_add)
}

/// `v_pk_mov_b32`: low dword from src0 (op_sel[0] picks its half), high from src1.
pub fn v_pk_mov_b32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let mut a = [0u64; LANES];
    let mut bb = [0u64; LANES];
    w.vread64(i.src[0], i.lit, i.info.fk, &mut a);
    w.vread64(i.src[1], i.lit, i.info.fk, &mut bb);
    let mask = w.exec();
    let mut d = [0u64; LANES];
    for l in 0..LANES {
        let lo = if i.opsel & 1 != 0 {
            a[l] >> 32
        } else {
            a[l] & 0xffff_ffff
        };
        let hi = if i.opsel & 2 != 0 {
            bb[l] >> 32
        } else {
            bb[l] & 0xffff_ffff
        };
        d[l] = lo | hi << 32;
    }
    out64(w, i, mask, &d);
    OK
}

fn pk16(w: &mut Wave, i: &Inst, n: usize, op: fn(f32, f32, f32) -> f32, rop: Option<RoundOp>) -> R {
    let mut s = [[0u32; LANES]; 3];
    for (k, out) in s.iter_mut().enumerate().take(n) {
        w.vread32(i.src[k], i.lit, crate::inst::FloatKind::F16, out);
    }
    let mask = w.exec();
    let rm = round::rm64(w.mode);
    if let (Some(rop), true) = (rop, rm != Rm::NearestEven) {
        return pk16_directed(w, i, n, &s, mask, rm, rop);
    }
    let mut d = [0u32; LANES];
    for l in 0..LANES {
        let mut lo = [0f32; 3];
        let mut hi = [0f32; 3];
        for k in 0..n {
            let v = s[k][l];
            let pick = |hh: bool| f16_to_f32(if hh { (v >> 16) as u16 } else { v as u16 });
            let mut x = pick(i.opsel >> k & 1 != 0);
            let mut y = pick(i.opsel_hi >> k & 1 != 0);
            if i.neg >> k & 1 != 0 {
                x = -x;
            }
            if i.neg_hi >> k & 1 != 0 {
                y = -y;
            }
            lo[k] = x;
            hi[k] = y;
        }
        d[l] = f32_to_f16(op(lo[0], lo[1], lo[2])) as u32
            | (f32_to_f16(op(hi[0], hi[1], hi[2])) as u32) << 16;
    }
    out32(w, i, mask, &mut d);
    OK
}

/// `pk16` under a directed rounding mode: operands stay f16 bit patterns.
fn pk16_directed(
    w: &mut Wave,
    i: &Inst,
    n: usize,
    s: &[Lanes; 3],
    mask: u64,
    rm: Rm,
    rop: RoundOp,
) -> R {
    let mut d = [0u32; LANES];
    for l in 0..LANES {
        let mut lo = [0u64; 3];
        let mut hi = [0u64; 3];
        for k in 0..n {
            let v = s[k][l];
            let pick = |hh: bool| (if hh { v >> 16 } else { v & 0xffff }) as u64;
            lo[k] = pick(i.opsel >> k & 1 != 0) ^ ((i.neg >> k & 1) as u64) << 15;
            hi[k] = pick(i.opsel_hi >> k & 1 != 0) ^ ((i.neg_hi >> k & 1) as u64) << 15;
        }
        d[l] = rop(H16, rm, lo) as u32 | (rop(H16, rm, hi) as u32) << 16;
    }
    out32(w, i, mask, &mut d);
    OK
}

pub fn v_pk_fma_f16(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    pk16(
        w,
        i,
        3,
        |a, b, c| (a as f64 * b as f64 + c as f64) as f32,
        Some(r_fma),
    )
}
pub fn v_pk_add_f16(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    pk16(w, i, 2, |a, b, _| a + b, Some(r_add))
}
pub fn v_pk_mul_f16(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    pk16(w, i, 2, |a, b, _| a * b, Some(r_mul))
}
pub fn v_pk_min_f16(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    pk16(w, i, 2, |a, b, _| a.min(b), None)
}
pub fn v_pk_max_f16(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    pk16(w, i, 2, |a, b, _| a.max(b), None)
}

// ------------------------------------------------------------------ VOP3P integer

/// Packed 16-bit integer ops: `op(a, b, c, clamp)` per half; op_sel picks the halves of
/// the low result's sources, op_sel_hi those of the high result's.
fn pk_int(w: &mut Wave, i: &Inst, n: usize, op: fn(u16, u16, u16, bool) -> u16) -> R {
    let mut s = [[0u32; LANES]; 3];
    for (k, out) in s.iter_mut().enumerate().take(n) {
        w.vread32(i.src[k], i.lit, i.info.fk, out);
    }
    let mask = w.exec();
    let mut d = [0u32; LANES];
    for l in 0..LANES {
        let mut lo = [0u16; 3];
        let mut hi = [0u16; 3];
        for k in 0..n {
            let v = s[k][l];
            let pick = |hh: bool| if hh { (v >> 16) as u16 } else { v as u16 };
            lo[k] = pick(i.opsel >> k & 1 != 0);
            hi[k] = pick(i.opsel_hi >> k & 1 != 0);
        }
        d[l] = op(lo[0], lo[1], lo[2], i.clamp) as u32
            | (op(hi[0], hi[1], hi[2], i.clamp) as u32) << 16;
    }
    out32(w, i, mask, &mut d);
    OK
}

/// Saturates a wide result to u16 when clamping, else wraps.
fn sat_u16(v: i64, clamp: bool) -> u16 {
    if clamp {
        v.clamp(0, u16::MAX as i64) as u16
    } else {
        v as u16
    }
}
fn sat_i16(v: i64, clamp: bool) -> u16 {
    if clamp {
        v.clamp(i16::MIN as i64, i16::MAX as i64) as i16 as u16
    } else {
        v as u16
    }
}

macro_rules! pk_int_ops {
    ($($name:ident<$n:literal> => |$a:ident, $bb:ident, $cc:ident, $cl:ident| $body:expr;)*) => {$(
        pub fn $name(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
            #[allow(unused_variables)]
            fn op($a: u16, $bb: u16, $cc: u16, $cl: bool) -> u16 { $body }
            pk_int(w, i, $n, op)
        }
    )*};
}

pk_int_ops! {
    v_pk_add_u16<2> => |a, bb, c, cl| sat_u16(a as i64 + bb as i64, cl);
    v_pk_add_i16<2> => |a, bb, c, cl| sat_i16(a as i16 as i64 + bb as i16 as i64, cl);
    v_pk_sub_u16<2> => |a, bb, c, cl| sat_u16(a as i64 - bb as i64, cl);
    v_pk_sub_i16<2> => |a, bb, c, cl| sat_i16(a as i16 as i64 - bb as i16 as i64, cl);
    v_pk_mul_lo_u16<2> => |a, bb, c, cl| a.wrapping_mul(bb);
    v_pk_mad_u16<3> => |a, bb, c, cl| sat_u16(a as i64 * bb as i64 + c as i64, cl);
    v_pk_mad_i16<3> => |a, bb, c, cl| sat_i16(a as i16 as i64 * bb as i16 as i64 + c as i16 as i64, cl);
    // Shifts: src0 is the shift amount (low 4 bits), src1 the value.
    v_pk_lshlrev_b16<2> => |a, bb, c, cl| bb << (a & 15);
    v_pk_lshrrev_b16<2> => |a, bb, c, cl| bb >> (a & 15);
    v_pk_ashrrev_i16<2> => |a, bb, c, cl| ((bb as i16) >> (a & 15)) as u16;
    v_pk_max_u16<2> => |a, bb, c, cl| a.max(bb);
    v_pk_min_u16<2> => |a, bb, c, cl| a.min(bb);
    v_pk_max_i16<2> => |a, bb, c, cl| (a as i16).max(bb as i16) as u16;
    v_pk_min_i16<2> => |a, bb, c, cl| (a as i16).min(bb as i16) as u16;
}

// ------------------------------------------------------------------ dot products

/// Integer dot products: `lanes` elements of `bits` each from src0 and src1 (signed or
/// not), summed with src2; clamp saturates to the 32-bit result type.
fn dot_int(w: &mut Wave, i: &Inst, bits: u32, signed: bool) -> R {
    let mut s = [[0u32; LANES]; 3];
    for (k, out) in s.iter_mut().enumerate() {
        w.vread32(i.src[k], i.lit, i.info.fk, out);
    }
    let mask = w.exec();
    let n = 32 / bits;
    let mut d = [0u32; LANES];
    for l in 0..LANES {
        let (x, y) = (s[0][l], s[1][l]);
        let mut acc: i64 = if signed {
            s[2][l] as i32 as i64
        } else {
            s[2][l] as i64
        };
        for e in 0..n {
            let field = |v: u32| -> i64 {
                let raw = (v >> (e * bits)) as u64 & ((1u64 << bits) - 1);
                if signed {
                    // Sign-extend the `bits`-wide field.
                    ((raw << (64 - bits)) as i64) >> (64 - bits)
                } else {
                    raw as i64
                }
            };
            acc += field(x) * field(y);
        }
        d[l] = match (i.clamp, signed) {
            (true, true) => acc.clamp(i32::MIN as i64, i32::MAX as i64) as i32 as u32,
            (true, false) => acc.clamp(0, u32::MAX as i64) as u32,
            _ => acc as u32,
        };
    }
    out32(w, i, mask, &mut d);
    OK
}

/// VOP2 `v_dot*c_*`: the dot product of src0 and src1 accumulated into vdst (signed
/// `bits`-wide elements; `bits == 0` is the f16 pair form, rounded to f32 per MODE).
fn dotc(w: &mut Wave, i: &Inst, bits: u32) -> R {
    let ([x, y], mask) = srcs32::<2>(w, i, false);
    let acc = w.v[(i.dst as usize).wrapping_sub(256) & 511];
    let rm = round::rm32(w.mode);
    let mut d = [0u32; LANES];
    for l in 0..LANES {
        d[l] = if let Some(n) = 32u32.checked_div(bits) {
            let mut sum = acc[l] as i32 as i64;
            for e in 0..n {
                let field = |v: u32| {
                    let raw = (v >> (e * bits)) as u64 & ((1u64 << bits) - 1);
                    ((raw << (64 - bits)) as i64) >> (64 - bits)
                };
                sum += field(x[l]) * field(y[l]);
            }
            sum as u32
        } else {
            let hv = |v: u32, k: u32| f16_to_f32((v >> (16 * k)) as u16) as f64;
            let p = hv(x[l], 0) * hv(y[l], 0) + hv(x[l], 1) * hv(y[l], 1);
            round::add_f64_to(S32, rm, p, f(acc[l]) as f64) as u32
        };
    }
    out32(w, i, mask, &mut d);
    OK
}
pub fn v_dot2c_f32_f16(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    dotc(w, i, 0)
}
pub fn v_dot2c_i32_i16(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    dotc(w, i, 16)
}
pub fn v_dot4c_i32_i8(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    dotc(w, i, 8)
}
pub fn v_dot8c_i32_i4(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    dotc(w, i, 4)
}

pub fn v_dot2_i32_i16(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    dot_int(w, i, 16, true)
}
pub fn v_dot2_u32_u16(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    dot_int(w, i, 16, false)
}
pub fn v_dot4_i32_i8(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    dot_int(w, i, 8, true)
}
pub fn v_dot4_u32_u8(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    dot_int(w, i, 8, false)
}
pub fn v_dot8_i32_i4(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    dot_int(w, i, 4, true)
}
pub fn v_dot8_u32_u4(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    dot_int(w, i, 4, false)
}

/// `v_dot2_f32_f16`: a.lo*b.lo + a.hi*b.hi + c (f32). op_sel/op_sel_hi pick the halves of
/// the first/second product, neg/neg_hi negate them. The f16 products and their sum are
/// exact in f64 and then added to c with one rounding to f32 per MODE (an exact model of
/// a fused dot product; hardware may round differently where the manual leaves it open).
pub fn v_dot2_f32_f16(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let mut s = [[0u32; LANES]; 3];
    for (k, out) in s.iter_mut().enumerate() {
        let fk = if k < 2 {
            crate::inst::FloatKind::F16
        } else {
            crate::inst::FloatKind::F32
        };
        w.vread32(i.src[k], i.lit, fk, out);
    }
    let mask = w.exec();
    let rm = round::rm32(w.mode);
    let mut d = [0u32; LANES];
    for l in 0..LANES {
        let mut lo = [0f64; 2];
        let mut hi = [0f64; 2];
        for k in 0..2 {
            let v = s[k][l];
            let pick = |hh: bool| f16_to_f32(if hh { (v >> 16) as u16 } else { v as u16 }) as f64;
            lo[k] = pick(i.opsel >> k & 1 != 0) * if i.neg >> k & 1 != 0 { -1.0 } else { 1.0 };
            hi[k] =
                pick(i.opsel_hi >> k & 1 != 0) * if i.neg_hi >> k & 1 != 0 { -1.0 } else { 1.0 };
        }
        // Each f16 product is exact in f64; their f64 sum is exact unless the two differ in
        // scale by more than 2^31 (then the smaller is rounded at 2^-53 of the larger, a
        // known approximation). The final addition of c rounds once, per MODE.
        let p = lo[0] * lo[1] + hi[0] * hi[1];
        let mut c = s[2][l];
        if i.neg >> 2 & 1 != 0 {
            c ^= 0x8000_0000;
        }
        let sum = round::add_f64_to(S32, rm, p, f(c) as f64);
        d[l] = if i.clamp {
            let x = f(sum as u32);
            b(if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) })
        } else {
            sum as u32
        };
    }
    out32(w, i, mask, &mut d);
    OK
}

/// The fraction bits of 2/pi (0.A2F9836E...), 1584 of them: the hardware's table holds
/// 1201 (`v_trig_preop_f64` reads b_1200..b_0 = the first 1201 bits after the point).
const TWO_OVER_PI: &str = "a2f9836e4e441529fc2757d1f534ddc0db6295993c439041fe5163abdebbc561\
b7246e3a424dd2e006492eea09d1921cfe1deb1cb129a73ee88235f52ebb4484e99c7026b45f7e413991d639\
835339f49c845f8bbdf9283b1ff897ffde05980fef2f118b5a0a6d1f6d367ecf27cb09b74f463f669e5fea2d\
7527bac7ebe5f17b3d0739f78a5292ea6bfb5fb11f8d5d0856033046fc7b6babf0cfbc209af4361da9e39161\
5ee61b086599855f14a068408dffd8804d73273106061556ca73a8c960e27bc08c6b";

/// Bit `p` (1-based after the binary point) of 2/pi; 0 past the hardware's 1201 bits.
fn two_over_pi_bit(p: usize) -> u64 {
    if p == 0 || p > 1201 {
        return 0;
    }
    let digit = TWO_OVER_PI.as_bytes()[(p - 1) / 4];
    let v = (digit as char).to_digit(16).unwrap_or(0) as u64;
    (v >> (3 - (p - 1) % 4)) & 1
}

/// `v_trig_preop_f64 d, x, seg`: 53 bits of 2/pi for Payne-Hanek range reduction: the bits
/// after `shift = 53 * seg[4:0]` (plus the exponent excess of x over 1077), as a double
/// scaled by 2^(-53 - shift) (2^128 more for exponents >= 1968), per the ISA manual.
pub fn v_trig_preop_f64(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let ([a, bb], mask) = srcs64::<2>(w, i, true);
    let mut d = [0u64; LANES];
    for l in 0..LANES {
        let exp = ((a[l] >> 52) & 0x7ff) as i64;
        let mut shift = (bb[l] & 31) as i64 * 53;
        if exp > 1077 {
            shift += exp - 1077;
        }
        let mut bits = 0u64;
        for k in 1..=53 {
            bits = bits << 1 | two_over_pi_bit(shift as usize + k);
        }
        let mut scale = -53 - shift;
        if exp >= 1968 {
            scale += 128;
        }
        d[l] = h(ldexp64(bits as f64, scale as i32));
    }
    fmods64(w, i, &mut d);
    out64(w, i, mask, &d);
    OK
}

/// `v_fma_mix_f32` / `v_fma_mixlo_f16` / `v_fma_mixhi_f16`: a fused a*b+c whose sources
/// are each f32 (op_sel_hi = 0) or the f16 half op_sel picks (op_sel_hi = 1); neg_lo
/// negates, neg_hi takes the absolute value. The f16 forms round the result to f16 into
/// the low or high half of vdst, keeping the other half.
fn fma_mix(w: &mut Wave, i: &Inst, out: u8) -> R {
    let mut s = [[0u32; LANES]; 3];
    for (k, v) in s.iter_mut().enumerate() {
        w.vread32(i.src[k], i.lit, crate::inst::FloatKind::F32, v);
    }
    let mask = w.exec();
    let old = w.v[(i.dst as usize).wrapping_sub(256) & 511];
    let mut d = [0u32; LANES];
    for l in 0..LANES {
        let mut x = [0f64; 3];
        for k in 0..3 {
            let raw = s[k][l];
            let mut v = if i.opsel_hi >> k & 1 != 0 {
                let half = if i.opsel >> k & 1 != 0 {
                    raw >> 16
                } else {
                    raw
                };
                f16_to_f32(half as u16) as f64
            } else {
                f(raw) as f64
            };
            if i.neg_hi >> k & 1 != 0 {
                v = v.abs();
            }
            if i.neg >> k & 1 != 0 {
                v = -v;
            }
            x[k] = v;
        }
        // The product of two f32 (or f16) values is exact in f64.
        let mut r = x[0].mul_add(x[1], x[2]);
        if i.clamp {
            r = if r.is_nan() { 0.0 } else { r.clamp(0.0, 1.0) };
        }
        d[l] = match out {
            0 => b(r as f32),
            1 => (old[l] & 0xffff_0000) | f64_to_f16(r) as u32,
            _ => (old[l] & 0xffff) | (f64_to_f16(r) as u32) << 16,
        };
    }
    w.lane_ops += mask.count_ones() as u64;
    w.vwrite32(i.dst, mask, &d);
    OK
}

pub fn v_fma_mix_f32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    fma_mix(w, i, 0)
}
pub fn v_fma_mixlo_f16(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    fma_mix(w, i, 1)
}
pub fn v_fma_mixhi_f16(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    fma_mix(w, i, 2)
}

// ------------------------------------------------------------------ numeric helpers

#[inline(always)]
fn sext24(x: u32) -> i64 {
    (((x << 8) as i32) >> 8) as i64
}

fn med3f(a: f32, b: f32, c: f32) -> f32 {
    a.max(b).min(a.min(b).max(c))
}

fn hf2(a: u32, b: u32, op: fn(f32, f32) -> f32) -> u32 {
    f32_to_f16(op(f16_to_f32(a as u16), f16_to_f32(b as u16))) as u32
}

fn perm(a: u32, b: u32, sel: u32) -> u32 {
    let bytes = ((a as u64) << 32) | b as u64;
    let mut d = 0u32;
    for k in 0..4 {
        let s = (sel >> (8 * k)) & 0xff;
        let v = match s {
            0..=7 => ((bytes >> (8 * s)) & 0xff) as u32,
            8..=11 => {
                // Sign of byte 1, 3, 5 or 7 replicated.
                let src = 2 * (s - 8) + 1;
                if (bytes >> (8 * src + 7)) & 1 != 0 {
                    0xff
                } else {
                    0
                }
            }
            12 => 0,
            _ => 0xff,
        };
        d |= v << (8 * k);
    }
    d
}

fn ldexp32(x: f32, e: i32) -> f32 {
    (x as f64 * 2f64.powi(e.clamp(-400, 400))) as f32
}

fn ldexp64(x: f64, e: i32) -> f64 {
    let e = e.clamp(-2200, 2200);
    // Split so intermediate powers stay finite.
    let half = e / 2;
    x * 2f64.powi(half) * 2f64.powi(e - half)
}

fn frexp32(x: f32) -> (f32, i32) {
    let (m, e) = frexp64(x as f64);
    (m as f32, e)
}

fn frexp64(x: f64) -> (f64, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    if exp == 0 {
        // Subnormal: normalise first.
        let (m, e) = frexp64(x * 2f64.powi(64));
        return (m, e - 64);
    }
    let e = exp - 1022;
    let m = f64::from_bits((bits & !(0x7ffu64 << 52)) | (1022u64 << 52));
    (m, e)
}

fn div_fixup32(q: f32, den: f32, num: f32) -> f32 {
    div_fixup64(q as f64, den as f64, num as f64) as f32
}

/// `v_div_fixup`: the quotient `q` of `num / den` with IEEE special cases applied.
fn div_fixup64(q: f64, den: f64, num: f64) -> f64 {
    let neg = den.is_sign_negative() != num.is_sign_negative();
    if num.is_nan() {
        return num;
    }
    if den.is_nan() {
        return den;
    }
    if (den == 0.0 && num == 0.0) || (den.is_infinite() && num.is_infinite()) {
        return f64::NAN;
    }
    if den == 0.0 || num.is_infinite() {
        return if neg {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    if den.is_infinite() || num == 0.0 {
        return if neg { -0.0 } else { 0.0 };
    }
    if q.is_nan() {
        return if neg {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    if neg {
        -q.abs()
    } else {
        q.abs()
    }
}

/// IEEE binary16 -> binary32 (exact).
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as u32;
    let man = (h & 0x3ff) as u32;
    let bits = match exp {
        0 if man == 0 => sign,
        0 => {
            // Subnormal: value = man * 2^-24.
            let v = man as f32 * f32::from_bits(0x3380_0000);
            return if sign != 0 { -v } else { v };
        }
        31 => sign | 0x7f80_0000 | (man << 13),
        _ => sign | ((exp + 112) << 23) | (man << 13),
    };
    f32::from_bits(bits)
}

/// binary64 -> binary16 with one rounding (to nearest even): round to f32 with
/// round-to-odd first (24 bits keep enough to make the second rounding exact).
pub fn f64_to_f16(x: f64) -> u16 {
    let mut y = x as f32;
    if y.is_finite() && (y as f64) != x {
        // Step toward zero if the nearest rounding went away from it, then make the last
        // bit sticky.
        if (y as f64).abs() > x.abs() {
            y = f32::from_bits(y.to_bits() - 1);
        }
        y = f32::from_bits(y.to_bits() | 1);
    }
    f32_to_f16(y)
}

/// binary32 -> binary16, round to nearest even.
pub fn f32_to_f16(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32;
    let man = bits & 0x7f_ffff;
    if exp == 255 {
        return sign
            | 0x7c00
            | if man != 0 {
                0x200 | (man >> 13) as u16
            } else {
                0
            };
    }
    let e = exp - 127 + 15;
    if e >= 31 {
        return sign | 0x7c00;
    }
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        let m = man | 0x80_0000;
        let shift = (14 - e) as u32;
        let half = 1u32 << (shift - 1);
        let rest = m & ((1u32 << shift) - 1);
        let mut r = m >> shift;
        if rest > half || (rest == half && r & 1 != 0) {
            r += 1;
        }
        return sign | r as u16;
    }
    let mut r = ((e as u32) << 10) | (man >> 13);
    let rest = man & 0x1fff;
    if rest > 0x1000 || (rest == 0x1000 && r & 1 != 0) {
        r += 1;
    }
    sign | r as u16
}

fn f32_to_f16_rtz(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32;
    let man = bits & 0x7f_ffff;
    if exp == 255 {
        return sign | 0x7c00 | if man != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 31 {
        return sign | 0x7bff;
    }
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        return sign | ((man | 0x80_0000) >> (14 - e) as u32) as u16;
    }
    sign | (((e as u32) << 10) | (man >> 13)) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_conversions_round_trip() {
        for h in [0u16, 0x3c00, 0xbc00, 0x7bff, 0x0001, 0x03ff, 0x7c00, 0x3555] {
            assert_eq!(f32_to_f16(f16_to_f32(h)), h, "{h:#x}");
        }
        assert_eq!(f32_to_f16(1.0 + 1.0 / 4096.0), 0x3c00);
    }

    #[test]
    fn perm_selects_bytes() {
        assert_eq!(perm(0x0403_0201, 0x0807_0605, 0x0706_0504), 0x0403_0201);
        assert_eq!(perm(0, 0x8000_0000, 0x0c0d_0909), 0x00ff_ffff);
    }
}

//! Scalar ALU: SOP2, SOP1, SOPC, SOPK.

use super::{Ctx, Step};
use crate::inst::Inst;
use crate::wave::Wave;

type R = crate::exec::Outcome;
const OK: R = Ok(Step::Continue);

#[inline(always)]
fn a32(w: &Wave, i: &Inst) -> u32 {
    w.sread32(i.src[0], i.lit, i.info.fk)
}
#[inline(always)]
fn b32(w: &Wave, i: &Inst) -> u32 {
    w.sread32(i.src[1], i.lit, i.info.fk)
}
#[inline(always)]
fn a64(w: &Wave, i: &Inst) -> u64 {
    w.sread64(i.src[0], i.lit, i.info.fk)
}
#[inline(always)]
fn b64(w: &Wave, i: &Inst) -> u64 {
    w.sread64(i.src[1], i.lit, i.info.fk)
}

/// Two-operand 32-bit op: `|a, b, scc| -> (result, Some(new scc) | None)`.
macro_rules! sop2_32 {
    ($($name:ident => |$a:ident, $b:ident, $scc:ident| $body:expr;)*) => {$(
        pub fn $name(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
            let $a = a32(w, i);
            let $b = b32(w, i);
            let $scc = w.scc;
            let (d, s): (u32, Option<bool>) = $body;
            w.write_s32(i.dst, d);
            if let Some(s) = s { w.scc = s; }
            OK
        }
    )*};
}

macro_rules! sop2_64 {
    ($($name:ident => |$a:ident, $b:ident, $scc:ident| $body:expr;)*) => {$(
        pub fn $name(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
            let $a = a64(w, i);
            let $b = b64(w, i);
            let $scc = w.scc;
            let (d, s): (u64, Option<bool>) = $body;
            w.write_s64(i.dst, d);
            if let Some(s) = s { w.scc = s; }
            OK
        }
    )*};
}

fn nz32(d: u32) -> (u32, Option<bool>) {
    (d, Some(d != 0))
}
fn nz64(d: u64) -> (u64, Option<bool>) {
    (d, Some(d != 0))
}

sop2_32! {
    s_add_u32 => |a, b, _s| { let (d, c) = a.overflowing_add(b); (d, Some(c)) };
    s_sub_u32 => |a, b, _s| (a.wrapping_sub(b), Some(b > a));
    s_add_i32 => |a, b, _s| { let (d, o) = (a as i32).overflowing_add(b as i32); (d as u32, Some(o)) };
    s_sub_i32 => |a, b, _s| { let (d, o) = (a as i32).overflowing_sub(b as i32); (d as u32, Some(o)) };
    s_addc_u32 => |a, b, s| {
        let t = a as u64 + b as u64 + s as u64;
        (t as u32, Some(t >> 32 != 0))
    };
    s_subb_u32 => |a, b, s| {
        let t = (a as u64).wrapping_sub(b as u64).wrapping_sub(s as u64);
        (t as u32, Some((b as u64 + s as u64) > a as u64))
    };
    s_min_i32 => |a, b, _s| { let c = (a as i32) < (b as i32); (if c { a } else { b }, Some(c)) };
    s_min_u32 => |a, b, _s| { let c = a < b; (if c { a } else { b }, Some(c)) };
    s_max_i32 => |a, b, _s| { let c = (a as i32) > (b as i32); (if c { a } else { b }, Some(c)) };
    s_max_u32 => |a, b, _s| { let c = a > b; (if c { a } else { b }, Some(c)) };
    s_cselect_b32 => |a, b, s| (if s { a } else { b }, None);
    s_and_b32 => |a, b, _s| nz32(a & b);
    s_or_b32 => |a, b, _s| nz32(a | b);
    s_xor_b32 => |a, b, _s| nz32(a ^ b);
    s_andn2_b32 => |a, b, _s| nz32(a & !b);
    s_orn2_b32 => |a, b, _s| nz32(a | !b);
    s_nand_b32 => |a, b, _s| nz32(!(a & b));
    s_nor_b32 => |a, b, _s| nz32(!(a | b));
    s_xnor_b32 => |a, b, _s| nz32(!(a ^ b));
    s_lshl_b32 => |a, b, _s| nz32(a << (b & 31));
    s_lshr_b32 => |a, b, _s| nz32(a >> (b & 31));
    s_ashr_i32 => |a, b, _s| nz32(((a as i32) >> (b & 31)) as u32);
    s_bfm_b32 => |a, b, _s| ((((1u64 << (a & 31)) - 1) as u32) << (b & 31), None);
    s_mul_i32 => |a, b, _s| (a.wrapping_mul(b), None);
    s_bfe_u32 => |a, b, _s| nz32(bfe_u32(a, b & 31, (b >> 16) & 0x7f));
    s_bfe_i32 => |a, b, _s| nz32(bfe_i32(a, b & 31, (b >> 16) & 0x7f));
    s_absdiff_i32 => |a, b, _s| nz32((a as i32).wrapping_sub(b as i32).unsigned_abs());
    s_mul_hi_u32 => |a, b, _s| (((a as u64 * b as u64) >> 32) as u32, None);
    s_mul_hi_i32 => |a, b, _s| (((a as i32 as i64 * b as i32 as i64) >> 32) as u32, None);
    s_lshl1_add_u32 => |a, b, _s| lshl_add(a, 1, b);
    s_lshl2_add_u32 => |a, b, _s| lshl_add(a, 2, b);
    s_lshl3_add_u32 => |a, b, _s| lshl_add(a, 3, b);
    s_lshl4_add_u32 => |a, b, _s| lshl_add(a, 4, b);
    s_pack_ll_b32_b16 => |a, b, _s| ((a & 0xffff) | (b << 16), None);
    s_pack_lh_b32_b16 => |a, b, _s| ((a & 0xffff) | (b & 0xffff_0000), None);
    s_pack_hh_b32_b16 => |a, b, _s| ((a >> 16) | (b & 0xffff_0000), None);
}

fn lshl_add(a: u32, n: u32, b: u32) -> (u32, Option<bool>) {
    let t = ((a as u64) << n) + b as u64;
    (t as u32, Some(t >> 32 != 0))
}

pub fn bfe_u32(v: u32, off: u32, width: u32) -> u32 {
    if width == 0 {
        return 0;
    }
    let x = v >> off;
    if width >= 32 {
        x
    } else {
        x & ((1u32 << width) - 1)
    }
}

pub fn bfe_i32(v: u32, off: u32, width: u32) -> u32 {
    if width == 0 {
        return 0;
    }
    let x = bfe_u32(v, off, width);
    if width >= 32 {
        return x;
    }
    let sh = 32 - width;
    (((x << sh) as i32) >> sh) as u32
}

sop2_64! {
    s_cselect_b64 => |a, b, s| (if s { a } else { b }, None);
    s_and_b64 => |a, b, _s| nz64(a & b);
    s_or_b64 => |a, b, _s| nz64(a | b);
    s_xor_b64 => |a, b, _s| nz64(a ^ b);
    s_andn2_b64 => |a, b, _s| nz64(a & !b);
    s_orn2_b64 => |a, b, _s| nz64(a | !b);
    s_nand_b64 => |a, b, _s| nz64(!(a & b));
    s_nor_b64 => |a, b, _s| nz64(!(a | b));
    s_xnor_b64 => |a, b, _s| nz64(!(a ^ b));
    s_lshl_b64 => |a, b, _s| nz64(a << (b & 63));
    s_lshr_b64 => |a, b, _s| nz64(a >> (b & 63));
    s_ashr_i64 => |a, b, _s| nz64(((a as i64) >> (b & 63)) as u64);
    s_bfm_b64 => |a, b, _s| {
        let n = a & 63;
        let m = if n == 0 { 0 } else { u64::MAX >> (64 - n) };
        (m << (b & 63), None)
    };
    s_bfe_u64 => |a, b, _s| {
        let (off, width) = ((b & 63) as u32, ((b >> 16) & 0x7f) as u32);
        let x = a >> off;
        nz64(if width == 0 { 0 } else if width >= 64 { x } else { x & ((1u64 << width) - 1) })
    };
    s_bfe_i64 => |a, b, _s| {
        let (off, width) = ((b & 63) as u32, ((b >> 16) & 0x7f) as u32);
        let x = a >> off;
        nz64(if width == 0 { 0 } else if width >= 64 { x } else {
            let sh = 64 - width;
            (((x << sh) as i64) >> sh) as u64
        })
    };
}

// ------------------------------------------------------------------ SOP1

macro_rules! sop1 {
    ($($name:ident($w:tt) => |$a:ident, $scc:ident| $body:expr;)*) => {$(
        pub fn $name(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
            sop1!(@go $w, w, i, $a, $scc, $body);
            OK
        }
    )*};
    (@go 32, $wv:ident, $i:ident, $a:ident, $scc:ident, $body:expr) => {
        let $a = a32($wv, $i);
        let $scc = $wv.scc;
        let (d, s): (u32, Option<bool>) = $body;
        $wv.write_s32($i.dst, d);
        if let Some(s) = s { $wv.scc = s; }
    };
    (@go 64, $wv:ident, $i:ident, $a:ident, $scc:ident, $body:expr) => {
        let $a = a64($wv, $i);
        let $scc = $wv.scc;
        let (d, s): (u64, Option<bool>) = $body;
        $wv.write_s64($i.dst, d);
        if let Some(s) = s { $wv.scc = s; }
    };
    (@go 6432, $wv:ident, $i:ident, $a:ident, $scc:ident, $body:expr) => {
        let $a = a64($wv, $i);
        let $scc = $wv.scc;
        let (d, s): (u32, Option<bool>) = $body;
        $wv.write_s32($i.dst, d);
        if let Some(s) = s { $wv.scc = s; }
    };
}

fn ff(v: Option<u32>) -> (u32, Option<bool>) {
    (v.map(|x| x as i32).unwrap_or(-1) as u32, None)
}

sop1! {
    s_mov_b32(32) => |a, _s| (a, None);
    s_not_b32(32) => |a, _s| nz32(!a);
    s_brev_b32(32) => |a, _s| (a.reverse_bits(), None);
    s_bcnt0_i32_b32(32) => |a, _s| nz32(a.count_zeros());
    s_bcnt1_i32_b32(32) => |a, _s| nz32(a.count_ones());
    s_ff0_i32_b32(32) => |a, _s| ff(if a == u32::MAX { None } else { Some(a.trailing_ones()) });
    s_ff1_i32_b32(32) => |a, _s| ff(if a == 0 { None } else { Some(a.trailing_zeros()) });
    s_flbit_i32_b32(32) => |a, _s| ff(if a == 0 { None } else { Some(a.leading_zeros()) });
    s_flbit_i32(32) => |a, _s| {
        let x = if (a as i32) < 0 { !a } else { a };
        ff(if a == 0 || a == u32::MAX { None } else { Some(x.leading_zeros()) })
    };
    s_sext_i32_i8(32) => |a, _s| (a as i8 as i32 as u32, None);
    s_sext_i32_i16(32) => |a, _s| (a as i16 as i32 as u32, None);
    s_abs_i32(32) => |a, _s| nz32((a as i32).unsigned_abs());
    s_mov_b64(64) => |a, _s| (a, None);
    s_not_b64(64) => |a, _s| nz64(!a);
    s_brev_b64(64) => |a, _s| (a.reverse_bits(), None);
    s_bcnt0_i32_b64(6432) => |a, _s| nz32(a.count_zeros());
    s_bcnt1_i32_b64(6432) => |a, _s| nz32(a.count_ones());
    s_ff0_i32_b64(6432) => |a, _s| ff(if a == u64::MAX { None } else { Some(a.trailing_ones()) });
    s_ff1_i32_b64(6432) => |a, _s| ff(if a == 0 { None } else { Some(a.trailing_zeros()) });
    s_flbit_i32_b64(6432) => |a, _s| ff(if a == 0 { None } else { Some(a.leading_zeros()) });
    s_flbit_i32_i64(6432) => |a, _s| {
        let x = if (a as i64) < 0 { !a } else { a };
        ff(if a == 0 || a == u64::MAX { None } else { Some(x.leading_zeros()) })
    };
}

pub fn s_cmov_b32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    if w.scc {
        let a = a32(w, i);
        w.write_s32(i.dst, a);
    }
    OK
}

pub fn s_cmov_b64(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    if w.scc {
        let a = a64(w, i);
        w.write_s64(i.dst, a);
    }
    OK
}

pub fn s_bitset0_b32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let b = a32(w, i) & 31;
    let d = w.sread32(i.dst, 0, i.info.fk) & !(1 << b);
    w.write_s32(i.dst, d);
    OK
}
pub fn s_bitset1_b32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let b = a32(w, i) & 31;
    let d = w.sread32(i.dst, 0, i.info.fk) | (1 << b);
    w.write_s32(i.dst, d);
    OK
}
pub fn s_bitset0_b64(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let b = a32(w, i) & 63;
    let d = w.sreg64(i.dst) & !(1u64 << b);
    w.write_s64(i.dst, d);
    OK
}
pub fn s_bitset1_b64(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let b = a32(w, i) & 63;
    let d = w.sreg64(i.dst) | (1u64 << b);
    w.write_s64(i.dst, d);
    OK
}

/// `s_getpc_b64`: the address of the next instruction.
pub fn s_getpc_b64(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    w.write_s64(i.dst, w.pc);
    OK
}

pub fn s_setpc_b64(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    w.pc = a64(w, i);
    OK
}

pub fn s_swappc_b64(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let target = a64(w, i);
    w.write_s64(i.dst, w.pc);
    w.pc = target;
    OK
}

macro_rules! saveexec {
    ($($name:ident => |$s:ident, $e:ident| $body:expr;)*) => {$(
        pub fn $name(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
            let $s = a64(w, i);
            let $e = w.exec();
            let new = $body;
            w.write_s64(i.dst, $e);
            w.set_exec(new);
            w.scc = new != 0;
            OK
        }
    )*};
}

saveexec! {
    s_and_saveexec_b64 => |s, e| s & e;
    s_or_saveexec_b64 => |s, e| s | e;
    s_xor_saveexec_b64 => |s, e| s ^ e;
    s_andn2_saveexec_b64 => |s, e| s & !e;
    s_orn2_saveexec_b64 => |s, e| s | !e;
    s_nand_saveexec_b64 => |s, e| !(s & e);
    s_nor_saveexec_b64 => |s, e| !(s | e);
    s_xnor_saveexec_b64 => |s, e| !(s ^ e);
    s_andn1_saveexec_b64 => |s, e| !s & e;
    s_orn1_saveexec_b64 => |s, e| !s | e;
}

pub fn s_andn1_wrexec_b64(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let new = !a64(w, i) & w.exec();
    w.set_exec(new);
    w.write_s64(i.dst, new);
    w.scc = new != 0;
    OK
}

pub fn s_andn2_wrexec_b64(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let new = a64(w, i) & !w.exec();
    w.set_exec(new);
    w.write_s64(i.dst, new);
    w.scc = new != 0;
    OK
}

// ------------------------------------------------------------------ SOPC

macro_rules! sopc {
    ($($name:ident($t:ty) => |$a:ident, $b:ident| $body:expr;)*) => {$(
        pub fn $name(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
            let $a = a32(w, i) as $t;
            let $b = b32(w, i) as $t;
            w.scc = $body;
            OK
        }
    )*};
}

sopc! {
    s_cmp_eq_i32(i32) => |a, b| a == b;
    s_cmp_lg_i32(i32) => |a, b| a != b;
    s_cmp_gt_i32(i32) => |a, b| a > b;
    s_cmp_ge_i32(i32) => |a, b| a >= b;
    s_cmp_lt_i32(i32) => |a, b| a < b;
    s_cmp_le_i32(i32) => |a, b| a <= b;
    s_cmp_eq_u32(u32) => |a, b| a == b;
    s_cmp_lg_u32(u32) => |a, b| a != b;
    s_cmp_gt_u32(u32) => |a, b| a > b;
    s_cmp_ge_u32(u32) => |a, b| a >= b;
    s_cmp_lt_u32(u32) => |a, b| a < b;
    s_cmp_le_u32(u32) => |a, b| a <= b;
    s_bitcmp0_b32(u32) => |a, b| a >> (b & 31) & 1 == 0;
    s_bitcmp1_b32(u32) => |a, b| a >> (b & 31) & 1 == 1;
}

pub fn s_bitcmp0_b64(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    w.scc = a64(w, i) >> (b32(w, i) & 63) & 1 == 0;
    OK
}
pub fn s_bitcmp1_b64(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    w.scc = a64(w, i) >> (b32(w, i) & 63) & 1 == 1;
    OK
}
pub fn s_cmp_eq_u64(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    w.scc = a64(w, i) == b64(w, i);
    OK
}
pub fn s_cmp_lg_u64(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    w.scc = a64(w, i) != b64(w, i);
    OK
}

// ------------------------------------------------------------------ SOPK

pub fn s_movk_i32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    w.write_s32(i.dst, i.imm as u32);
    OK
}

pub fn s_cmovk_i32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    if w.scc {
        w.write_s32(i.dst, i.imm as u32);
    }
    OK
}

macro_rules! cmpk {
    ($($name:ident($t:ty, $ext:expr) => |$a:ident, $b:ident| $body:expr;)*) => {$(
        pub fn $name(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
            let $a = w.sread32(i.dst, 0, i.info.fk) as $t;
            let $b = ($ext)(i.imm) as $t;
            w.scc = $body;
            OK
        }
    )*};
}

// Signed compares sign-extend the 16-bit immediate; unsigned ones zero-extend it.
cmpk! {
    s_cmpk_eq_i32(i32, |x: i32| x) => |a, b| a == b;
    s_cmpk_lg_i32(i32, |x: i32| x) => |a, b| a != b;
    s_cmpk_gt_i32(i32, |x: i32| x) => |a, b| a > b;
    s_cmpk_ge_i32(i32, |x: i32| x) => |a, b| a >= b;
    s_cmpk_lt_i32(i32, |x: i32| x) => |a, b| a < b;
    s_cmpk_le_i32(i32, |x: i32| x) => |a, b| a <= b;
    s_cmpk_eq_u32(u32, |x: i32| x as u32 & 0xffff) => |a, b| a == b;
    s_cmpk_lg_u32(u32, |x: i32| x as u32 & 0xffff) => |a, b| a != b;
    s_cmpk_gt_u32(u32, |x: i32| x as u32 & 0xffff) => |a, b| a > b;
    s_cmpk_ge_u32(u32, |x: i32| x as u32 & 0xffff) => |a, b| a >= b;
    s_cmpk_lt_u32(u32, |x: i32| x as u32 & 0xffff) => |a, b| a < b;
    s_cmpk_le_u32(u32, |x: i32| x as u32 & 0xffff) => |a, b| a <= b;
}

pub fn s_addk_i32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let a = w.sread32(i.dst, 0, i.info.fk) as i32;
    let (d, o) = a.overflowing_add(i.imm);
    w.write_s32(i.dst, d as u32);
    w.scc = o;
    OK
}

pub fn s_mulk_i32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let a = w.sread32(i.dst, 0, i.info.fk) as i32;
    w.write_s32(i.dst, a.wrapping_mul(i.imm) as u32);
    OK
}

/// `s_call_b64 sdst, label`: return address to sdst, jump.
pub fn s_call_b64(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    w.write_s64(i.dst, w.pc);
    w.pc = w.pc.wrapping_add((i.imm as i64 * 4) as u64);
    OK
}

/// Hardware register ids of `hwreg(...)` (GFX9).
const HW_REG_MODE: u32 = 1;
const HW_REG_STATUS: u32 = 2;
const HW_REG_TRAPSTS: u32 = 3;
const HW_REG_HW_ID: u32 = 4;
const HW_REG_SH_MEM_BASES: u32 = 15;

fn hwreg_fields(simm: u32) -> (u32, u32, u32) {
    (simm & 0x3f, (simm >> 6) & 0x1f, ((simm >> 11) & 0x1f) + 1)
}

pub fn s_getreg_b32(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
    let (id, off, size) = hwreg_fields(i.imm as u32);
    let full = match id {
        HW_REG_MODE => w.mode,
        HW_REG_STATUS => {
            (w.scc as u32) | ((w.exec() == 0) as u32) << 9 | ((w.vcc() == 0) as u32) << 10
        }
        HW_REG_TRAPSTS => w.trapsts,
        // wave id [3:0], SIMD [5:4], CU [11:8]; derived from the workgroup so different
        // workgroups report different units, as they would on hardware.
        HW_REG_HW_ID => {
            let cu = (c.wg_index % c.info.compute_units.max(1) as u64) as u32;
            (w.id & 0xf) | ((w.id >> 4) & 3) << 4 | (cu & 0xf) << 8
        }
        // Address bits 63:48 of the private (15:0) and shared (31:16) apertures; code built by
        // older compilers forms flat private/LDS pointers from this instead of src_*_base.
        HW_REG_SH_MEM_BASES => {
            (crate::aperture::PRIVATE_APERTURE >> 48) as u32
                | ((crate::aperture::SHARED_APERTURE >> 48) as u32) << 16
        }
        _ => 0,
    };
    let mask = if size >= 32 {
        u32::MAX
    } else {
        (1u32 << size) - 1
    };
    w.write_s32(i.dst, (full >> off) & mask);
    OK
}

fn setreg(w: &mut Wave, simm: u32, value: u32) {
    let (id, off, size) = hwreg_fields(simm);
    let mask = if size >= 32 {
        u32::MAX
    } else {
        (1u32 << size) - 1
    } << off;
    let v = (value << off) & mask;
    match id {
        HW_REG_MODE => w.mode = (w.mode & !mask) | v,
        HW_REG_TRAPSTS => w.trapsts = (w.trapsts & !mask) | v,
        _ => {}
    }
}

pub fn s_setreg_b32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let v = w.sread32(i.dst, 0, i.info.fk);
    setreg(w, i.imm as u32, v);
    OK
}

pub fn s_setreg_imm32_b32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    setreg(w, i.imm as u32, i.lit);
    OK
}

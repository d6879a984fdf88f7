//! VOP3P: packed f32, f16 and 16-bit integer math, and the mixed-precision
//! `v_fma_mix*`.

use super::*;

/// Packed f32: each source's two dwords are selected by op_sel (low result) and
/// op_sel_hi (high result); neg/neg_hi negate.
pub(super) fn pk32(
    w: &mut Wave,
    i: &Inst,
    n: usize,
    op: fn(f32, f32, f32) -> f32,
    rop: RoundOp,
) -> R {
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
pub(super) type RoundOp = fn(round::Fmt, Rm, [u64; 3]) -> u64;

pub(super) fn r_fma(t: round::Fmt, rm: Rm, v: [u64; 3]) -> u64 {
    round::fma(t, rm, v[0], v[1], v[2])
}
pub(super) fn r_mul(t: round::Fmt, rm: Rm, v: [u64; 3]) -> u64 {
    round::mul(t, rm, v[0], v[1])
}
pub(super) fn r_add(t: round::Fmt, rm: Rm, v: [u64; 3]) -> u64 {
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

pub(super) fn pk16(
    w: &mut Wave,
    i: &Inst,
    n: usize,
    op: fn(f32, f32, f32) -> f32,
    rop: Option<RoundOp>,
) -> R {
    let mut s = [[0u32; LANES]; 3];
    for (k, out) in s.iter_mut().enumerate().take(n) {
        w.vread32(i.src[k], i.lit, crate::inst::FloatKind::F16, out);
    }
    let mask = w.exec();
    let rm = round::rm64(w.mode);
    // Fused ops (n == 3) take the exact path too: f32 arithmetic then f16 rounds twice.
    if let (Some(rop), true) = (rop, rm != Rm::NearestEven || n == 3) {
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
pub(super) fn pk16_directed(
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
    pk16(w, i, 2, |a, b, _| fmin32(a, b), None)
}
pub fn v_pk_max_f16(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    pk16(w, i, 2, |a, b, _| fmax32(a, b), None)
}

// ------------------------------------------------------------------ VOP3P integer

/// Packed 16-bit integer ops: `op(a, b, c, clamp)` per half; op_sel picks the halves of
/// the low result's sources, op_sel_hi those of the high result's.
pub(super) fn pk_int(w: &mut Wave, i: &Inst, n: usize, op: fn(u16, u16, u16, bool) -> u16) -> R {
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
pub(super) fn sat_u16(v: i64, clamp: bool) -> u16 {
    if clamp {
        v.clamp(0, u16::MAX as i64) as u16
    } else {
        v as u16
    }
}
pub(super) fn sat_i16(v: i64, clamp: bool) -> u16 {
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

/// `v_fma_mix_f32` / `v_fma_mixlo_f16` / `v_fma_mixhi_f16`: a fused a*b+c whose sources
/// are each f32 (op_sel_hi = 0) or the f16 half op_sel picks (op_sel_hi = 1); neg_lo
/// negates, neg_hi takes the absolute value. The f16 forms round the result to f16 into
/// the low or high half of vdst, keeping the other half.
pub(super) fn fma_mix(w: &mut Wave, i: &Inst, out: u8) -> R {
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
        // Every source is an f32 value. The f32 result is one fused rounding (an f64 fma
        // rounded again to f32 misses ties broken by a small addend); the f16 results
        // round the exact sum once, through an f64 rounded to odd.
        let r32 = || {
            let r = (x[0] as f32).mul_add(x[1] as f32, x[2] as f32);
            if i.clamp {
                if r.is_nan() {
                    0.0
                } else {
                    r.clamp(0.0, 1.0)
                }
            } else {
                r
            }
        };
        let r16 = || {
            let r = crate::exec::half::fma_f32_round_to_odd(x[0], x[1], x[2]);
            let r = if i.clamp {
                if r.is_nan() {
                    0.0
                } else {
                    r.clamp(0.0, 1.0)
                }
            } else {
                r
            };
            f64_to_f16(r) as u32
        };
        d[l] = match out {
            0 => b(r32()),
            1 => (old[l] & 0xffff_0000) | r16(),
            _ => (old[l] & 0xffff) | r16() << 16,
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

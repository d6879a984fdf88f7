//! Dot products: the VOP3P `v_dot*` and the VOP2 accumulating `v_dot*c` forms.

use super::*;

/// Integer dot products: `lanes` elements of `bits` each from src0 and src1 (signed or
/// not), summed with src2; clamp saturates to the 32-bit result type.
pub(super) fn dot_int(w: &mut Wave, i: &Inst, bits: u32, signed: bool) -> R {
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
pub(super) fn dotc(w: &mut Wave, i: &Inst, bits: u32) -> R {
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
